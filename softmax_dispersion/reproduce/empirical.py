"""The main job's empirical section: the max-retrieval experiment's quick preset."""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from softmax_dispersion.reproduce.section import ReportFolderError, Section

if TYPE_CHECKING:
    from softmax_dispersion.empirical import ExperimentConfig

RUN_FOLDER = "max-retrieval"
"""The experiment's run folder inside the report folder."""
SKIP_NOTE = (
    "skipped: torch is not installed (from a checkout, pip install torch==2.13.0 and "
    "then pip install '.[empirical]' runs the max-retrieval experiment here)"
)


def section_config() -> ExperimentConfig:
    """The configuration the main job runs: the quick preset."""
    from softmax_dispersion.empirical import preset

    return preset("quick")


def _percent(value: float | None) -> str:
    return "more than the planted errors" if value is None else f"{100 * value:.0f}%"


def section(out: Path) -> Section:
    """Run ``experiment max-retrieval --preset quick`` into ``out/max-retrieval``.

    Without torch the section is skipped with a note (nothing was claimed, nothing failed).
    It fails when any of the run's checks fails (:func:`~softmax_dispersion.empirical.summarise`).
    """

    start = time.perf_counter()
    if importlib.util.find_spec("torch") is None:
        markdown = f"## Empirical: max retrieval\n\n{SKIP_NOTE}.\n"
        return Section("empirical", True, SKIP_NOTE, markdown, {"skipped": True}, skipped=True)

    from softmax_dispersion.empirical import ExperimentError, run_experiment, summarise
    from softmax_dispersion.empirical.run_report import accuracy_table

    run_dir = out / RUN_FOLDER
    config = section_config()
    # A run folder here was left by an interrupted job (a finished job's report is
    # replaced only with --force, which removes it first): finish it from its checkpoints.
    resume = (run_dir / "config.json").is_file()
    try:
        # Minutes of training: progress bars for a terminal, and progress lines always, so
        # that a run logged to a file is never silent for minutes.
        metrics = run_experiment(
            config,
            run_dir,
            preset="quick",
            resume=resume,
            progress="bar" if sys.stderr.isatty() else "lines",
            log=lambda line: print(line, file=sys.stderr, flush=True),
        )
    except ExperimentError as error:
        raise ReportFolderError(
            f"the interrupted experiment in {run_dir} cannot be resumed ({error}); "
            "add --force to start afresh"
        ) from None
    summary = summarise(metrics)
    table = accuracy_table(summary, list(config.sizes))
    accuracy = summary["accuracy"]
    first, last = config.sizes[0], config.sizes[-1]
    softmax = accuracy["softmax"]
    results = summary["results"]
    passed = sum(check["passed"] is True for check in results)
    # T13's power for softmax over every cell the run checks (typical and gap-controlled
    # sets together: a wrong law fails the run when any cell rejects it)
    power = (summary.get("t13_power", {}).get("softmax") or {}).get("power", {}).get("I")
    detects = (
        f"; T13 detects I off by ≥ {_percent(power['below'])} low, {_percent(power['above'])} high"
        if power
        else ""
    )
    headline = (
        f"softmax accuracy {softmax[first]['mean']:.1f}% at n = {first} → "
        f"{softmax[last]['mean']:.1f}% at n = {last}; {passed} of {len(results)} checks "
        f"that could fail passed{detects}, {len(summary['consistency'])} consistency checks "
        f"({config.seeds} seeds, {metrics['device']}, {metrics['seconds']['total']:.0f} s)"
    )
    report = (run_dir / "report.md").read_text()
    report = report.replace("](figures/", f"]({RUN_FOLDER}/figures/")
    report = report.replace("\n# ", "\n### ").replace("\n## ", "\n### ")
    if report.startswith("# "):
        report = "###" + report[1:]
    markdown = "\n".join(
        [
            "## Empirical: max retrieval (quick preset)",
            "",
            f"Run folder: `{RUN_FOLDER}/` (checkpoints, metrics.json/csv, figures); "
            f"re-render with `softmax-dispersion report {out / RUN_FOLDER}`.",
            "",
            report,
        ]
    )
    figures = sorted(str(path.relative_to(out)) for path in (run_dir / "figures").glob("*.png"))
    return Section(
        name="empirical",
        passed=bool(summary["passed"]),
        summary=headline,
        markdown=markdown,
        data={"summary": json.loads(json.dumps(summary)), "run_folder": RUN_FOLDER},
        figures=figures,
        seconds=time.perf_counter() - start,
        table=table,
    )
