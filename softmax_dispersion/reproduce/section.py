"""The one type every section of the main job returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ReportFolderError", "Section"]


class ReportFolderError(ValueError):
    """The report folder cannot take this job: not a folder, other files, a finished
    report, or an interrupted experiment that cannot be resumed."""


@dataclass
class Section:
    """One layer's part of the report."""

    name: str
    passed: bool
    summary: str
    markdown: str
    data: dict[str, Any]
    figures: list[str] = field(default_factory=list)
    seconds: float = 0.0
    table: str = ""
    """A detailed table printed on the terminal when the section finishes."""
    skipped: bool = False
    """Nothing was run (a missing optional dependency): neither a pass nor a failure."""

    @property
    def result(self) -> str:
        """``pass``, ``FAIL`` or ``skipped``, as the summary table shows it."""
        if self.skipped:
            return "skipped"
        return "pass" if self.passed else "FAIL"
