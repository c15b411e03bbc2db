"""The numbers the empirical pages quote come from the committed run folders.

``docs/_ext/run_numbers.py`` turns each run's files into MyST substitutions at build
time; every substitution the pages use must be one it defines, and a run folder that
lacks what the prose needs must stop the build.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("sphinx")

DOCS = Path(__file__).resolve().parents[2] / "docs"
sys.path.insert(0, str(DOCS / "_ext"))

import run_numbers  # noqa: E402
from sphinx.errors import ExtensionError  # noqa: E402

PAGES = ("empirical.md", "pretrained.md")


def test_every_number_the_pages_quote_is_read_from_a_run() -> None:
    numbers = run_numbers.numbers(DOCS)
    used = {
        name
        for page in PAGES
        for name in re.findall(r"\{\{\s*(\w+)\s*\}\}", (DOCS / page).read_text())
    }
    assert used, "the pages quote no run numbers"
    assert used <= set(numbers), sorted(used - set(numbers))
    assert all(numbers[name] for name in used)


def test_the_run_times_are_the_runs_own(tmp_path: Path) -> None:
    metrics = json.loads((DOCS / run_numbers.QUICK / "metrics.json").read_text())
    numbers = run_numbers.quick_numbers(DOCS / run_numbers.QUICK)
    assert numbers["quick_total_s"] == f"{metrics['seconds']['total']:.0f}"
    assert numbers["quick_load_start"] == f"{metrics['load_average']['start'][0]:.1f}"


def test_a_run_without_what_the_prose_needs_stops_the_build(tmp_path: Path) -> None:
    for folder in run_numbers.SOURCES:
        shutil.copytree(DOCS / folder, tmp_path / folder, ignore=shutil.ignore_patterns("*.png"))
    run_numbers.numbers(tmp_path)  # complete: fine
    metrics = json.loads((tmp_path / run_numbers.QUICK / "metrics.json").read_text())
    complete = json.dumps(metrics)
    del metrics["seconds"]
    (tmp_path / run_numbers.QUICK / "metrics.json").write_text(json.dumps(metrics))
    with pytest.raises(ExtensionError, match="empirical-run"):
        run_numbers.numbers(tmp_path)
    (tmp_path / run_numbers.QUICK / "metrics.json").write_text(complete)
    (tmp_path / run_numbers.PRETRAINED / "heads.json").unlink()
    with pytest.raises(ExtensionError, match="missing"):
        run_numbers.numbers(tmp_path)
