"""The main job's sections, one at a time: what their tables and reports say."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from softmax_dispersion.reproduce import (
    Report,
    _summary,
    empirical,
    numerics,
    oracle,
    pretrained,
)


def test_the_sweep_table_names_each_familys_coefficient(tmp_path: Path) -> None:
    section = numerics.section(tmp_path)
    rows = [
        line.split() for line in section.table.splitlines()[1:] if line.startswith(("spike", "dip"))
    ]
    assert rows and {(row[0], row[2]) for row in rows} == {("spike", "p_max"), ("dip", "p_min")}
    # the figure shows the table's families, no other
    assert {row["family"] for row in section.data["sweep"]} == set(numerics.SWEEP_FAMILIES)


def test_the_oracle_report_prints_each_heading_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(oracle, "installed_targets", lambda: ["numpy"])
    headings = [
        line for line in oracle.section(tmp_path).markdown.splitlines() if line.startswith("#")
    ]
    assert headings and len(headings) == len(set(headings))


def test_a_skipped_experiment_is_shown_as_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    section = empirical.section(tmp_path)
    assert section.skipped and section.result == "skipped"
    summary = _summary(Report(out=tmp_path, sections=[section]))
    assert "empirical  skipped" in summary and "pass" not in summary.split("\n")[1]
    assert list(tmp_path.iterdir()) == []  # no empty figures/ folder


def test_a_skipped_pretrained_probe_is_shown_as_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pretrained, "missing_for_pretrained", lambda: ["transformers"])
    section = pretrained.section(tmp_path)
    assert section.skipped and section.result == "skipped"
    assert 'pip install ".[pretrained]"' in section.summary
    summary = _summary(Report(out=tmp_path, sections=[section]))
    assert "pretrained skipped" in summary
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_the_theory_section_reports_one_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from softmax_dispersion.reproduce import theory
    from softmax_dispersion.theory import all_claims, coq_proofs

    monkeypatch.setattr(coq_proofs, "find_coqc", lambda: None)  # Coq is tested on its own

    section = theory.section(tmp_path)
    assert section.table.splitlines()[-1].endswith(f"in {section.seconds:.1f} s")
    # each claim's verdict was shown as it was decided, not after minutes of silence
    progress = capsys.readouterr().err
    claims = all_claims()
    for number, claim in enumerate(claims, 1):
        assert f"  {claim.id} verified (" in progress
        assert f"; {number}/{len(claims)})" in progress


def test_a_long_stage_says_it_is_still_at_work(capsys: pytest.CaptureFixture[str]) -> None:
    import time

    from softmax_dispersion.reproduce import theory

    with theory._heartbeat("Coq still compiling", every=0.05):
        time.sleep(0.3)
    beats = capsys.readouterr().err.splitlines()
    assert len(beats) >= 2 and all(b.startswith("  … Coq still compiling (") for b in beats)
    time.sleep(0.2)  # and it stops when the stage ends
    assert capsys.readouterr().err == ""
