"""The main job's pretrained section: all-MiniLM-L6-v2's heads certified and measured."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from softmax_dispersion._extras import PRETRAINED_HINT, missing_for_pretrained
from softmax_dispersion.reproduce.section import Section

if TYPE_CHECKING:
    from softmax_dispersion.empirical.pretrained import ProbeConfig

RUN_FOLDER = "pretrained"
"""The probe's run folder inside the report folder."""
SKIP_NOTE = f"skipped: {PRETRAINED_HINT.replace('it needs', 'the probe needs', 1)}"


def section_config() -> ProbeConfig:
    """The configuration the main job runs: the probe's defaults."""
    from softmax_dispersion.empirical.pretrained import ProbeConfig

    return ProbeConfig()


def _demote_headings(markdown: str) -> str:
    lines = []
    for line in markdown.splitlines():
        lines.append("###" + line.lstrip("#") if line.startswith("#") else line)
    return "\n".join(lines)


def section(out: Path) -> Section:
    """Run ``experiment pretrained`` into ``out/pretrained``.

    Without the pretrained extra the section is skipped with a note (nothing claimed,
    nothing failed).  It fails when a spread found on tokens exceeds its head's
    certificate over tokens, the witness exceeds the LayerNorm-set certificate, or a
    consistency check fails.
    """
    start = time.perf_counter()
    if missing_for_pretrained():
        markdown = f"## Pretrained heads\n\n{SKIP_NOTE}.\n"
        return Section("pretrained", True, SKIP_NOTE, markdown, {"skipped": True}, skipped=True)

    from softmax_dispersion.empirical.pretrained import run_probe
    from softmax_dispersion.empirical.pretrained.probe_report import summary_lines

    run_dir = out / RUN_FOLDER
    if run_dir.is_dir():  # an interrupted job's probe (it has no checkpoints): start afresh
        shutil.rmtree(run_dir)
    result = run_probe(
        run_dir, section_config(), log=lambda line: print(line, file=sys.stderr, flush=True)
    )
    heads = result["heads"]
    stars = [float(r["delta_star_upper"]) for r in heads]
    first = [float(r["bracket_ratio"]) for r in heads if r["layer"] == 0]
    later = [float(r["bracket_ratio"]) for r in heads if r["layer"] > 0]
    checks = result["checks"]
    headline = (
        f"{len(heads)} heads of all-MiniLM-L6-v2: δ* over LayerNorm outputs "
        f"{min(stars):.0f}–{max(stars):.0f}; certificate over tokens / largest spread found: "
        f"layer 0 {min(first):.2f}–{max(first):.2f}"
        + (f", later layers {min(later):.1f}–{max(later):.1f}" if later else "")
        + f"; {checks['certificate_violations']} certificate violations"
    )
    report = (run_dir / "report.md").read_text().replace("](figures/", f"]({RUN_FOLDER}/figures/")
    markdown = "\n".join(
        [
            "## Pretrained heads (all-MiniLM-L6-v2)",
            "",
            f"Run folder: `{RUN_FOLDER}/` (heads.json, measurements.json, figures); "
            f"re-render with `softmax-dispersion report {out / RUN_FOLDER}`.",
            "",
            _demote_headings(report),
        ]
    )
    figures = sorted(str(path.relative_to(out)) for path in (run_dir / "figures").glob("*.png"))
    return Section(
        name="pretrained",
        passed=bool(checks["passed"]),
        summary=headline,
        markdown=markdown,
        data={"checks": checks, "run_folder": RUN_FOLDER},
        figures=figures,
        seconds=time.perf_counter() - start,
        table="\n".join(summary_lines(result)),
    )
