"""The main job: run every built layer end to end and write one report.

``softmax-dispersion reproduce --out DIR`` checks every claim of the theory layer and
writes into ``DIR``:

``report.md``
    The summary table, each claim's derivation and the figures.
``report.json``
    The same as data: one entry per section, with each claim's steps.
``certificate.json``
    The proof certificate (claims, steps, methods, tool versions).
``figures/*.png``
    The T1 bound against n, the adaptive temperature curve, and the certified sweep of
    the spike and the dip up to n = 10**18 with T10's three regimes (needs matplotlib).

The sections: ``theory`` (every claim checked), ``numerics`` (a certification sweep
from n = 16 to 10**18, T4's dispersion size and T10's length-scaling regimes) and
``oracle`` (the oracle's battery against every installed softmax library: numpy's
textbook softmax, scipy, torch, jax) and, when torch is installed, ``empirical`` (the
max-retrieval experiment's quick preset in ``DIR/max-retrieval``: trained attention heads
held to T1 on every test row; skipped with a note without torch) and, when the
pretrained extra is installed, ``pretrained`` (every head of all-MiniLM-L6-v2 certified
for every input and measured on text, synthetic and adversarial inputs, in
``DIR/pretrained``; skipped with a note without the extra).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from importlib import import_module
from pathlib import Path
from typing import Any, TextIO

from softmax_dispersion.reproduce.section import ReportFolderError, Section

__all__ = [
    "SECTIONS",
    "Report",
    "ReportFolderError",
    "Section",
    "finished_sections",
    "reproduce",
]

PROGRESS_FOLDER = "progress"
"""Inside the report folder while the job runs: one JSON record per finished section, so
that an interrupted job resumes where it stopped.  Removed once the report is written."""
WRITTEN = (
    "report.md",
    "report.json",
    "certificate.json",
    PROGRESS_FOLDER,
    "figures",
    "coq",
    "max-retrieval",
    "pretrained",
)
"""Everything the main job writes into its folder: what ``force`` removes, nothing else."""


@dataclass
class Report:
    """Everything ``reproduce`` ran."""

    out: Path
    sections: list[Section]

    @property
    def passed(self) -> bool:
        """True when every section passed."""
        return all(section.passed for section in self.sections)

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": str(self.out),
            "passed": self.passed,
            "sections": [
                {
                    "name": s.name,
                    "passed": s.passed,
                    "result": s.result,
                    "summary": s.summary,
                    "seconds": round(s.seconds, 3),
                    "figures": s.figures,
                    "data": s.data,
                }
                for s in self.sections
            ],
        }


def _prepare(out: Path, force: bool) -> None:
    """Make ``out`` ready: new, empty, or an interrupted job's folder (resumed); a finished
    report is replaced only with ``force``, and a folder of other files never is."""
    if out.exists() and not out.is_dir():
        raise ReportFolderError(f"--out {out} exists and is not a folder")
    entries = {entry.name for entry in out.iterdir()} if out.is_dir() else set()
    ours = (out / PROGRESS_FOLDER).is_dir() or "report.json" in entries
    if entries and not ours:
        raise ReportFolderError(
            f"--out {out} is not empty and holds no earlier report; choose a new or empty folder"
        )
    if "report.json" in entries and not force:
        raise ReportFolderError(
            f"--out {out} holds a finished report; choose another --out, "
            "or add --force to replace it"
        )
    if force:
        for name in WRITTEN:
            path = out / name
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()
    try:
        (out / PROGRESS_FOLDER).mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ReportFolderError(f"--out {out} cannot be created: {error.strerror}") from None


def finished_sections(out: Path) -> list[str]:
    """The sections an interrupted job in ``out`` finished, in the main job's order.

    Examples
    --------
    >>> finished_sections(Path("a-folder-no-job-has-used"))
    []
    """
    return [name for name in SECTIONS if (out / PROGRESS_FOLDER / f"{name}.json").is_file()]


def _kept(out: Path, name: str) -> Section | None:
    """The record of section ``name`` finished by an interrupted job, if any."""
    path = out / PROGRESS_FOLDER / f"{name}.json"
    if not path.is_file():
        return None
    try:
        return Section(**json.loads(path.read_text()))
    except (json.JSONDecodeError, TypeError):  # cut short while written: run it again
        return None


def _write(path: Path, text: str) -> None:
    """Write ``text`` whole or not at all (an interrupt never leaves half a file)."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text)
    os.replace(partial, path)


SECTIONS = ("theory", "numerics", "oracle", "empirical", "pretrained")
"""The layers the main job runs, in order: modules of this package, each with a
``section(out) -> Section`` function.  Adding a section means adding its module here."""


def reproduce(
    out: Path | str,
    *,
    stream: TextIO = sys.stdout,
    quiet: bool = False,
    sections: Sequence[str] = SECTIONS,
    force: bool = False,
) -> Report:
    """Run every built layer, write the report into ``out`` and print a summary.

    A job interrupted (Ctrl-C) resumes when run again on the same folder: the sections it
    finished are kept, and the experiment continues from its checkpoints.

    Parameters
    ----------
    out
        The report folder: new, empty, or left by an interrupted job (resumed).
    stream
        Where the progress lines and the summary table go.
    quiet
        Print nothing (the caller prints JSON instead).
    sections
        The sections to run, among :data:`SECTIONS` (always in that order).
    force
        Replace a finished report (or start an interrupted one afresh).

    Returns
    -------
    Report
        The sections run; ``report.passed`` is True only when every one passed.

    Raises
    ------
    ReportFolderError
        When ``out`` is a file, holds files other than a report, or holds a finished
        report and ``force`` is not given.
    ValueError
        When a name in ``sections`` is not one of :data:`SECTIONS`.
    """
    unknown = [name for name in sections if name not in SECTIONS]
    if unknown:
        raise ValueError(f"unknown sections {unknown}; known: {', '.join(SECTIONS)}")
    out = Path(out)
    _prepare(out, force)
    ran = []
    for name in (name for name in SECTIONS if name in sections):
        section = _kept(out, name)
        if section is not None:
            if not quiet:
                print(f"{name}: finished before the interruption, kept", file=stream, flush=True)
        else:
            if not quiet:
                print(f"running {name} …", file=stream, flush=True)
            section = import_module(f"softmax_dispersion.reproduce.{name}").section(out)
            _write(out / PROGRESS_FOLDER / f"{name}.json", json.dumps(asdict(section)) + "\n")
        ran.append(section)
        if not quiet and section.table:
            print(section.table, file=stream, flush=True)
    report = Report(out=out, sections=ran)
    _write(out / "report.md", _markdown(report))
    _write(out / "report.json", json.dumps(report.to_dict(), indent=2) + "\n")
    shutil.rmtree(out / PROGRESS_FOLDER)
    if not quiet:
        print(_summary(report), file=stream)
    return report


def _summary(report: Report) -> str:
    lines = [f"{'section':<10} {'result':<7} {'seconds':>8}  summary"]
    for s in report.sections:
        lines.append(f"{s.name:<10} {s.result:<7} {s.seconds:>8.1f}  {s.summary}")
    verdict = "everything verified" if report.passed else "SOMETHING FAILED"
    not_run = [name for name in SECTIONS if name not in {s.name for s in report.sections}]
    if not_run:
        verdict += f" (not run: {', '.join(not_run)})"
    lines.append(f"{verdict}; report in {report.out / 'report.md'}")
    return "\n".join(lines)


def _markdown(report: Report) -> str:
    head = [
        "# softmax-dispersion report",
        "",
        "```text",
        _summary(report),
        "```",
        "",
    ]
    return "\n".join(head + [s.markdown + "\n" for s in report.sections])
