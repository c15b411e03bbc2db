"""The main job writes one report and exits 0 only when everything verified."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from softmax_dispersion.cli import main

pytestmark = pytest.mark.slow


@pytest.fixture
def small_experiment(monkeypatch: pytest.MonkeyPatch) -> bool:
    """With torch, the empirical section runs a tiny version of the quick preset."""
    if importlib.util.find_spec("torch") is None:
        return False
    from softmax_dispersion.empirical import preset
    from softmax_dispersion.reproduce import empirical as empirical_section

    tiny = preset(
        "quick",
        steps=30,
        width=16,
        sizes=(16, 64),
        seeds=2,
        test_sets=32,
        gap_sizes=(16, 64),
        gap_sets=2,
        adversarial_sizes=(16, 256),
    )
    monkeypatch.setattr(empirical_section, "section_config", lambda: tiny)
    return True


@pytest.fixture
def small_probe(monkeypatch: pytest.MonkeyPatch) -> bool:
    """With the pretrained extra, the pretrained section probes one size, no search."""
    from softmax_dispersion._extras import missing_for_pretrained

    if missing_for_pretrained():
        return False
    from functools import cache

    from softmax_dispersion.empirical.pretrained import ProbeConfig, load_minilm, probe
    from softmax_dispersion.reproduce import pretrained as pretrained_section

    tiny = ProbeConfig(
        sizes=(8,),
        search_rounds=0,
        search_seconds=1.0,
        token_bounds=False,  # the layer-0 enumeration takes minutes
        tokens_per_size={"text": 64, "repeated": 8, "random": 64},
    )
    monkeypatch.setattr(pretrained_section, "section_config", lambda: tiny)
    monkeypatch.setattr(probe, "load_minilm", cache(load_minilm))
    return True


def test_reproduce_writes_the_report(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    small_experiment: bool,
    small_probe: bool,
) -> None:
    from softmax_dispersion.theory import all_claims, coq_proofs

    # Coq's part of the theory section is tested where the proofs are (test_coq_proofs,
    # test_coq_commands) and compiled by CI's own step: here the section runs without it.
    monkeypatch.setattr(coq_proofs, "find_coqc", lambda: None)

    claims = len(all_claims())
    out = tmp_path / "report"
    assert main(["reproduce", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "everything verified" in printed and f"{claims}/{claims} claims verified" in printed
    from softmax_dispersion.reproduce.numerics import SWEEP_FAMILIES, SWEEP_SIZES

    checks = len(SWEEP_FAMILIES) * len(SWEEP_SIZES)
    assert f"{checks}/{checks} sweep checks hold" in printed
    report = json.loads((out / "report.json").read_text())
    assert report["passed"] is True
    names = ["theory", "numerics", "oracle", "empirical", "pretrained"]
    assert [s["name"] for s in report["sections"]] == names
    probe = report["sections"][4]
    assert probe["passed"] is True
    if small_probe:
        assert probe["data"]["checks"]["certificate_violations"] == 0
        assert (out / "pretrained" / "heads.json").is_file()
        assert "pretrained/figures/n_star.png" in (out / "report.md").read_text()
    else:
        assert probe["result"] == "skipped"
    empirical = report["sections"][3]
    assert empirical["passed"] is True
    if small_experiment:
        assert empirical["data"]["summary"]["bound"]["softmax"]["violations"] == 0
        assert (out / "max-retrieval" / "metrics.json").is_file()
        assert "max-retrieval/figures/" in (out / "report.md").read_text()
    else:
        assert empirical["summary"].startswith("skipped: torch is not installed")
    oracle = report["sections"][2]
    assert oracle["passed"] is True
    assert {(c["library"], c["kind"]) for c in oracle["data"]["checks"]} >= {
        ("numpy", "softmax"),
        ("numpy", "log_softmax"),
    }
    numerics = report["sections"][1]
    assert max(row["n"] for row in numerics["data"]["sweep"]) == 10**18
    assert (out / "figures" / "certified_sweep.png").stat().st_size > 1000
    theory = report["sections"][0]
    assert theory["name"] == "theory" and len(theory["data"]["claims"]) == claims
    assert json.loads((out / "certificate.json").read_text())["verified"] is True
    markdown = (out / "report.md").read_text()
    assert "T11" in markdown and "figures/dispersion_bound.png" in markdown
    for figure in theory["figures"]:
        assert (out / "figures" / figure).stat().st_size > 1000

    # a finished report is replaced only with --force
    assert main(["reproduce", "--out", str(out), "--json"]) == 2
    assert "add --force" in capsys.readouterr().err
    assert main(["reproduce", "--out", str(out), "--json", "--force"]) == 0
    assert json.loads(capsys.readouterr().out)["passed"] is True


def test_reproduce_refuses_a_folder_of_other_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("keep me")
    assert main(["reproduce", "--out", str(tmp_path)]) == 2
    assert "not empty" in capsys.readouterr().err
    assert (tmp_path / "notes.txt").read_text() == "keep me"


def test_reproduce_refuses_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "file"
    target.write_text("")
    assert main(["reproduce", "--out", str(target)]) == 2
    assert "not a folder" in capsys.readouterr().err


def test_reproduce_runs_only_the_sections_asked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    # given out of order: they run in the main job's order all the same
    assert main(["reproduce", "--out", str(out), "--sections", "oracle,numerics"]) == 0
    printed = capsys.readouterr().out
    assert "running theory" not in printed and "running empirical" not in printed
    from softmax_dispersion.reproduce import SECTIONS

    not_run = ", ".join(name for name in SECTIONS if name not in ("numerics", "oracle"))
    assert f"everything verified (not run: {not_run})" in printed
    report = json.loads((out / "report.json").read_text())
    assert [s["name"] for s in report["sections"]] == ["numerics", "oracle"]
    assert not (out / "certificate.json").exists()  # the theory section writes it


# The main job in a child process, with the experiment shrunk to seconds (two normalisers,
# two seeds) and torch on one thread, so that two runs train bit-identical heads.
SMALL_JOB = """
import sys
from softmax_dispersion.empirical import experiment, preset
from softmax_dispersion.reproduce import empirical
empirical.section_config = lambda: preset(
    "quick", normalisers=("softmax", "ssmax"), steps=30, width=16, sizes=(16, 64), seeds=2,
    test_sets=32, gap_sizes=(16, 64), gap_sets=2, adversarial_sizes=(16, 256),
)
experiment.choose_threads = lambda requested=None: 1
import os, signal
trigger = os.environ.get("INTERRUPT_AFTER")
if trigger:
    # Ctrl-C the moment the line is logged: a parent reading the pipe could see it only
    # after a quick job had finished (a loaded machine), and the signal came too late.
    class Tripwire:
        def __init__(self, stream):
            self.stream = stream
        def write(self, text):
            written = self.stream.write(text)
            if trigger in text:
                self.stream.flush()
                os.kill(os.getpid(), signal.SIGINT)
            return written
        def __getattr__(self, name):
            return getattr(self.stream, name)
    sys.stderr = Tripwire(sys.stderr)
    # As from a shell: a child inherits an ignored SIGINT from its parent (a test worker
    # of the full suite had one, and this Ctrl-C went unheard), and Python then keeps it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
from softmax_dispersion.cli import main
sys.exit(main(sys.argv[1:]))
"""

TIMING_KEYS = {"seconds", "load_average", "threads", "ensemble_seconds", "seconds_per_seed"}
"""What differs between two runs of the same job: wall and CPU times, the machine's load
and the threads chosen from it (``steps_per_second`` too, and the times in the text)."""


def _reproduce_in_a_child(out: Path, interrupt_after: str | None = None) -> tuple[int, str, str]:
    """Run the small job; with ``interrupt_after``, it gets SIGINT (sent by itself) the
    moment it logs that line.

    Returns the exit status, standard output and standard error."""
    import os
    import subprocess
    import sys

    command = [sys.executable, "-c", SMALL_JOB, "reproduce", "--out", str(out)]
    command += ["--sections", "numerics,empirical"]
    printed = out.with_name(out.name + ".stdout")
    env = {k: v for k, v in os.environ.items() if k != "INTERRUPT_AFTER"}
    if interrupt_after is not None:
        env["INTERRUPT_AFTER"] = interrupt_after
    with (
        printed.open("w") as stdout,
        subprocess.Popen(
            command, stdout=stdout, stderr=subprocess.PIPE, text=True, env=env
        ) as child,
    ):
        assert child.stderr is not None
        lines = list(child.stderr)
    return child.returncode, printed.read_text(), "".join(lines)


def _deterministic(value: object) -> object:
    """``value`` without what differs between two runs of the same job (its times)."""
    if isinstance(value, dict):
        return {
            key: _deterministic(item)
            for key, item in value.items()
            if key not in TIMING_KEYS and "per_second" not in key
        }
    if isinstance(value, list):
        return [_deterministic(item) for item in value]
    return value


def test_an_interrupted_reproduce_resumes_to_the_same_report(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    whole, resumed = tmp_path / "whole", tmp_path / "resumed"
    status, _, err = _reproduce_in_a_child(whole)
    assert status == 0, err

    # Ctrl-C once the first heads are trained (their checkpoints are saved by then).
    status, _, err = _reproduce_in_a_child(resumed, interrupt_after="softmax: 2 seeds trained")
    assert status == 130, err
    assert "interrupted: the finished sections (numerics) and the experiment's 2 trained" in err
    assert "run the same command again to resume" in err
    status, printed, err = _reproduce_in_a_child(resumed)
    assert status == 0, err
    assert "numerics: finished before the interruption, kept" in printed
    assert "running numerics" not in printed
    assert "softmax: loaded 2 checkpoint(s)" in err or "softmax: seeds [0, 1] already" in err
    assert "ssmax: 2 seeds trained together" in err

    reports = [json.loads((folder / "report.json").read_text()) for folder in (whole, resumed)]
    for section_whole, section_resumed in zip(*(r["sections"] for r in reports), strict=True):
        # the experiment's summary ends with its time; everything else must agree
        assert (
            section_whole["summary"].rsplit(",", 1)[0]
            == (section_resumed["summary"].rsplit(",", 1)[0])
        )
        assert _deterministic(section_whole["data"]) == _deterministic(section_resumed["data"])
        assert section_whole["figures"] == section_resumed["figures"]
    metrics = [
        json.loads((folder / "max-retrieval" / "metrics.json").read_text())
        for folder in (whole, resumed)
    ]
    assert _deterministic(metrics[0]["rows"]) == _deterministic(metrics[1]["rows"])
    certificates = [
        json.loads((folder / "max-retrieval" / "certificates.json").read_text())
        for folder in (whole, resumed)
    ]
    assert _deterministic(certificates[0]) == _deterministic(certificates[1])
