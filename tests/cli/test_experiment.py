"""The ``experiment`` and ``report`` subcommands: run folders, resume, clear errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")

from softmax_dispersion.cli import main

pytestmark = pytest.mark.slow  # every test here trains models (seconds each)

TINY = ["--steps", "20", "--seeds", "2", "--sizes", "16,64", "--test-sets", "16", "--gap-sets", "0",
        "--adversarial-sizes", "16,256"]  # fmt: skip


def _run(out: Path, *extra: str) -> int:
    return main(["experiment", "max-retrieval", *TINY, "--out", str(out), *extra])


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "run"
    assert _run(out, "--normalisers", "softmax,adaptive_temperature,ssmax") == 0
    return out


def test_a_run_folder_holds_everything_the_report_needs(finished_run: Path) -> None:
    names = {path.name for path in finished_run.iterdir()}
    assert {"config.json", "metrics.json", "metrics.csv", "report.md", "checkpoints"} <= names
    checkpoints = sorted(p.name for p in (finished_run / "checkpoints").iterdir())
    assert checkpoints == [f"{n}-seed{s}.pt" for n in ("softmax", "ssmax") for s in (0, 1)]
    metrics = json.loads((finished_run / "metrics.json").read_text())
    assert len(metrics["rows"]) == 3 * 2 * 2  # normalisers × seeds × sizes
    assert all(row["bound_violations"] == 0 for row in metrics["rows"])
    report = (finished_run / "report.md").read_text()
    assert "paper: softmax" in report and "## Certified heads" in report
    assert "## Results: checks that could have failed" in report
    assert (finished_run / "figures" / "heatmap_softmax.png").stat().st_size > 1000
    assert (finished_run / "figures" / "worst_sets.png").stat().st_size > 1000
    certificates = json.loads((finished_run / "certificates.json").read_text())
    assert set(certificates["heads"]) == {"softmax", "adaptive_temperature", "ssmax"}
    head = certificates["heads"]["softmax"]["1"]
    assert float(head["delta"]["lower"]) <= float(head["delta"]["upper"])
    assert head["dispersion_size"]["half"]["least_size_exact"].isdigit()
    assert metrics["normaliser_info"]["ssmax"]["display_name"] == "SSMax (learned s)"
    assert metrics["threads"] >= 1 and len(metrics["load_average"]["start"]) == 3
    training = metrics["training"][0]
    assert training["seconds_per_seed"] == pytest.approx(training["ensemble_seconds"] / 2)
    assert training["curve"]["step"][-1] == 20


def test_json_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path / "run", "--normalisers", "softmax", "--json") == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["summary"]["passed"] is True
    assert printed["summary"]["bound"]["softmax"]["violations"] == 0


def test_report_rerenders_a_run(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (finished_run / "report.md").unlink()
    assert main(["report", str(finished_run)]) == 0
    assert "Accuracy" in (finished_run / "report.md").read_text()
    assert "PASSED" in capsys.readouterr().out
    assert main(["report", str(tmp_path)]) == 2
    assert "holds no metrics.json" in capsys.readouterr().err


def test_evaluating_checkpoints_needs_the_same_training(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--normalisers", "softmax", "--from-checkpoint", str(finished_run)]
    assert _run(tmp_path / "again", *args) == 0
    before = json.loads((finished_run / "metrics.json").read_text())["rows"]
    after = json.loads((tmp_path / "again" / "metrics.json").read_text())["rows"]
    softmax = [row for row in before if row["normaliser"] == "softmax"]
    assert [row["accuracy"] for row in after] == [row["accuracy"] for row in softmax]

    capsys.readouterr()
    status = main(
        ["experiment", "max-retrieval", "--steps", "30", "--seeds", "2", "--sizes", "16",
         "--out", str(tmp_path / "other"), *args]
    )  # fmt: skip
    assert status == 2
    assert "trained with another config" in capsys.readouterr().err


def test_an_interrupted_run_resumes_with_its_completed_seeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from softmax_dispersion.empirical import experiment

    real_train = experiment.train

    def interrupted(config: Any, normaliser: str, *args: Any, **kwargs: Any) -> Any:
        if normaliser == "ssmax":
            raise KeyboardInterrupt
        return real_train(config, normaliser, *args, **kwargs)

    out = tmp_path / "run"
    monkeypatch.setattr(experiment, "train", interrupted)
    assert _run(out, "--normalisers", "softmax,ssmax") == 130
    assert "--resume" in capsys.readouterr().err
    kept = out / "evaluations" / "softmax-seed0.json"
    stamp = kept.stat().st_mtime_ns

    assert _run(out, "--normalisers", "softmax,ssmax") == 2  # not without --resume
    assert "add --resume" in capsys.readouterr().err

    monkeypatch.setattr(experiment, "train", real_train)
    assert _run(out, "--normalisers", "softmax,ssmax", "--resume") == 0
    assert "softmax: seeds [0, 1] already evaluated" in capsys.readouterr().err
    assert kept.stat().st_mtime_ns == stamp
    rows = json.loads((out / "metrics.json").read_text())["rows"]
    assert {row["normaliser"] for row in rows} == {"softmax", "ssmax"}


def test_a_run_interrupted_after_training_evaluates_its_checkpoints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from softmax_dispersion.empirical import experiment

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    out = tmp_path / "run"
    monkeypatch.setattr(experiment, "evaluate", interrupted)
    assert _run(out, "--normalisers", "softmax") == 130
    assert (out / "checkpoints" / "softmax-seed1.pt").is_file()
    monkeypatch.undo()
    capsys.readouterr()
    assert _run(out, "--normalisers", "softmax", "--resume") == 0
    err = capsys.readouterr().err
    assert "softmax: loaded 2 checkpoint(s)" in err and "training" not in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--normalisers", "softmax,bogus"], "unknown normaliser 'bogus'"),
        (["--normalisers", "softmax,softmax"], "duplicated"),
        (["--preset", "huge"], "--preset: unknown preset 'huge'"),
        (["--sizes", "0,16"], "--sizes"),
        (["--sizes", "64,16"], "strictly increasing"),
        (["--sizes", "16,16"], "strictly increasing"),
        (["--seeds", "0"], "seeds must be >= 1"),
        (["--sizes", "16,1e18"], "--sizes: sizes must be <= 1048576"),
        (["--train-sizes", "16"], "--train-sizes expects LOW,HIGH"),
        (["--train-sizes", "16,5"], "--train-sizes: train_sizes must satisfy 1 <= low <= high"),
        (["--device", "tpu"], "device must be auto, cpu or cuda"),
        (["--normalisers", "softcap0"], "unknown normaliser 'softcap0'"),
        (["--normalisers", "softcap2.50"], "write the cap of 'softcap2.50' as softcap2.5"),
        (["--adversarial-sizes", "1,16"], "adversarial_sizes must be increasing sizes >= 2"),
        (["--gap-sets", "-1"], "gap_sets must be >= 0"),
        (["--threads", "0"], "threads must be >= 1"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    status = main(["experiment", "max-retrieval", "--out", str(tmp_path / "run"), *args])
    assert status == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_cuda_without_a_gpu(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    assert _run(tmp_path / "run", "--device", "cuda") == 2
    assert "no CUDA GPU" in capsys.readouterr().err


def test_out_must_be_new_empty_and_writable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("keep me")
    assert _run(tmp_path) == 2
    assert "is not empty" in capsys.readouterr().err
    assert (tmp_path / "notes.txt").read_text() == "keep me"
    assert _run(tmp_path / "notes.txt" / "run") == 2
    assert "not writable" in capsys.readouterr().err
    assert _run(tmp_path / "notes.txt") == 2
    assert "is a file" in capsys.readouterr().err


def test_without_torch_the_commands_say_how_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now fails
    assert _run(tmp_path / "run") == 2
    assert "pip install '.[empirical]'" in capsys.readouterr().err


def test_report_on_the_main_jobs_folder_points_to_its_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "max-retrieval").mkdir()
    (tmp_path / "max-retrieval" / "metrics.json").write_text("{}")
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "holds no metrics.json; its run folder is" in err and "max-retrieval" in err
    assert main(["report", str(tmp_path / "nothing")]) == 2
    assert "holds no metrics.json" in capsys.readouterr().err


def test_a_run_logged_to_a_file_prints_progress_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Standard error is not a terminal under pytest: plain lines, never a silent run.
    assert _run(tmp_path / "run", "--normalisers", "softmax") == 0
    err = capsys.readouterr().err
    assert "train softmax ×2: 0/20 steps" in err
    assert "certify softmax: 2/2 heads" in err
    assert "evaluate softmax: 2/2 sizes" in err


def test_report_lists_the_checks(finished_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(finished_run)]) == 0
    out = capsys.readouterr().out
    assert "results (checks that could fail):" in out and "consistency checks:" in out


def test_every_preset_is_named_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    from softmax_dispersion.empirical.config import PRESET_SOURCES, PRESETS

    with pytest.raises(SystemExit):
        main(["experiment", "max-retrieval", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert set(PRESETS) == set(PRESET_SOURCES)
    for name in PRESETS:
        assert f"{name} (" in help_text or f"or {name} (" in help_text, name


@pytest.mark.parametrize(
    ("preset", "shows"),
    [
        ("quick", ["typical sets inside T13's band", "## Certified heads"]),
        (
            "bounded",
            [
                "worst-set top weight ≥ 0.95 × T1 bound at every n",
                "the size where the worst set's top weight falls below ½ is n*(½)",
                "![worst_sets](figures/worst_sets.png)",
            ],
        ),
    ],
)
def test_each_preset_runs_end_to_end_at_a_tiny_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], preset: str, shows: list[str]
) -> None:
    # The CI smoke of both presets: every stage on a tiny config, every result passing
    # (the results fail only on a wrong head or a wrong check, not on a weak one).
    assert _run(tmp_path / "run", "--preset", preset, "--seeds", "1") == 0, capsys.readouterr().out
    report = (tmp_path / "run" / "report.md").read_text()
    for text in shows:
        assert text in report, text
