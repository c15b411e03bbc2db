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
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Any, TextIO

from softmax_dispersion.reproduce.section import Section

__all__ = ["SECTIONS", "Report", "ReportFolderError", "Section", "reproduce"]

REPORT_FILES = ("report.md", "report.json", "certificate.json")


class ReportFolderError(ValueError):
    """The output folder cannot take a report (not a folder, or holds other files)."""


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


def _prepare(out: Path) -> None:
    """Refuse a folder that holds anything but an earlier report."""
    if out.exists() and not out.is_dir():
        raise ReportFolderError(f"--out {out} exists and is not a folder")
    if out.is_dir():
        entries = {entry.name for entry in out.iterdir()}
        if entries and "report.json" not in entries:
            raise ReportFolderError(
                f"--out {out} is not empty and holds no earlier report; "
                "choose a new or empty folder"
            )
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ReportFolderError(f"--out {out} cannot be created: {error.strerror}") from None


SECTIONS = ("theory", "numerics", "oracle", "empirical", "pretrained")
"""The layers the main job runs, in order: modules of this package, each with a
``section(out) -> Section`` function.  Adding a section means adding its module here."""


def reproduce(
    out: Path | str,
    *,
    stream: TextIO = sys.stdout,
    quiet: bool = False,
    sections: Sequence[str] = SECTIONS,
) -> Report:
    """Run every built layer, write the report into ``out`` and print a summary.

    Parameters
    ----------
    out
        The report folder: new, empty, or holding an earlier report (whose files are
        replaced).
    stream
        Where the progress lines and the summary table go.
    quiet
        Print nothing (the caller prints JSON instead).
    sections
        The sections to run, among :data:`SECTIONS` (always in that order).

    Returns
    -------
    Report
        The sections run; ``report.passed`` is True only when every one passed.

    Raises
    ------
    ReportFolderError
        When ``out`` is a file or holds files other than an earlier report.
    ValueError
        When a name in ``sections`` is not one of :data:`SECTIONS`.
    """
    unknown = [name for name in sections if name not in SECTIONS]
    if unknown:
        raise ValueError(f"unknown sections {unknown}; known: {', '.join(SECTIONS)}")
    out = Path(out)
    _prepare(out)
    ran = []
    for name in (name for name in SECTIONS if name in sections):
        if not quiet:
            print(f"running {name} …", file=stream, flush=True)
        section = import_module(f"softmax_dispersion.reproduce.{name}").section(out)
        ran.append(section)
        if not quiet and section.table:
            print(section.table, file=stream, flush=True)
    report = Report(out=out, sections=ran)
    (out / "report.json").write_text(json.dumps(report.to_dict(), indent=2) + "\n")
    (out / "report.md").write_text(_markdown(report))
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
