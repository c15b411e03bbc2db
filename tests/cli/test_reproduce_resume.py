"""An interrupted main job resumes: finished sections kept, a finished report refused.

The sections here are stand-ins (the real ones take minutes); the resumed experiment,
interrupted by a real SIGINT, is ``test_reproduce.py``'s slow test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from softmax_dispersion.cli import main
from softmax_dispersion.reproduce import Section, numerics, oracle


class Calls:
    """A stand-in section that counts its runs and can be made to be interrupted."""

    def __init__(self, name: str) -> None:
        self.name, self.runs, self.interrupt = name, 0, False

    def __call__(self, out: Path) -> Section:
        self.runs += 1
        if self.interrupt:
            raise KeyboardInterrupt
        return Section(self.name, True, f"{self.name} ran", f"## {self.name}\n", {"run": 1})


@pytest.fixture
def sections(monkeypatch: pytest.MonkeyPatch) -> dict[str, Calls]:
    stand_ins = {"numerics": Calls("numerics"), "oracle": Calls("oracle")}
    monkeypatch.setattr(numerics, "section", stand_ins["numerics"])
    monkeypatch.setattr(oracle, "section", stand_ins["oracle"])
    return stand_ins


def _reproduce(out: Path, *extra: str) -> int:
    return main(["reproduce", "--out", str(out), "--sections", "numerics,oracle", *extra])


def test_an_interrupted_job_resumes_with_its_finished_sections(
    tmp_path: Path, sections: dict[str, Calls], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    sections["oracle"].interrupt = True
    assert _reproduce(out) == 130
    err = capsys.readouterr().err
    assert "the finished sections (numerics) are kept in" in err
    assert "run the same command again to resume" in err
    assert not (out / "report.json").exists()

    sections["oracle"].interrupt = False
    assert _reproduce(out) == 0
    printed = capsys.readouterr().out
    assert "numerics: finished before the interruption, kept" in printed
    assert "running oracle" in printed and "running numerics" not in printed
    assert sections["numerics"].runs == 1 and sections["oracle"].runs == 2
    report = json.loads((out / "report.json").read_text())
    assert [s["name"] for s in report["sections"]] == ["numerics", "oracle"]
    assert report["passed"] is True
    assert sorted(p.name for p in out.iterdir()) == ["report.json", "report.md"]


def test_a_finished_report_is_refused_unless_forced(
    tmp_path: Path, sections: dict[str, Calls], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    assert _reproduce(out) == 0
    capsys.readouterr()
    assert _reproduce(out) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds a finished report" in err
    assert "choose another --out, or add --force" in err
    assert sections["numerics"].runs == 1

    assert _reproduce(out, "--force") == 0
    assert sections["numerics"].runs == 2


def test_force_replaces_only_what_the_job_wrote(
    tmp_path: Path, sections: dict[str, Calls], capsys: pytest.CaptureFixture[str]
) -> None:
    foreign = tmp_path / "notes"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("keep me")
    assert _reproduce(foreign, "--force") == 2
    assert "holds no earlier report" in capsys.readouterr().err
    assert (foreign / "keep.txt").read_text() == "keep me"

    out = tmp_path / "report"
    assert _reproduce(out) == 0
    (out / "notes.txt").write_text("mine")
    assert _reproduce(out, "--force") == 0
    assert (out / "notes.txt").read_text() == "mine"


def test_a_section_record_cut_short_is_run_again(
    tmp_path: Path, sections: dict[str, Calls], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    sections["oracle"].interrupt = True
    assert _reproduce(out) == 130
    (out / "progress" / "numerics.json").write_text('{"name": "numer')  # a torn write
    sections["oracle"].interrupt = False
    assert _reproduce(out) == 0
    assert sections["numerics"].runs == 2
