"""Bad input to every subcommand: exit status 2, one line on standard error, no traceback.

One table for the whole command line, run twice: in this process through ``main()``
(fast, in the default run), and from a shell, one ``python -m softmax_dispersion`` child
per input (slow: a child imports sympy, numpy or torch afresh; CI runs it), which also
sees what only a real process shows (the exit status the shell gets, anything printed
at interpreter exit).  A subcommand's own tests cover its happy paths.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from softmax_dispersion.cli import main

TORCH = "torch"
"""Third item of an entry: what the input needs installed to reach its check."""

BAD_INPUT: list[tuple[list[str], str] | tuple[list[str], str, str]] = [
    # the command line itself
    ([], "the following arguments are required: COMMAND"),
    (["bogus"], "invalid choice: 'bogus'"),
    (["--bogus"], "the following arguments are required: COMMAND"),
    # prove
    (["prove", "T0"], "unknown claim id 'T0'"),
    (["prove", "T99"], "unknown claim id 'T99'"),
    (["prove", ""], "unknown claim id ''"),
    (["prove", "T2", "--at", "theta=0"], "--at: theta must be a number > 0"),
    (["prove", "T1", "--at", "theta=-1"], "--at: theta must be a number > 0"),
    (["prove", "T1", "--at", "theta=abc"], "--at: theta must be a finite number"),
    (["prove", "T1", "--at", "theta=inf"], "--at: theta must be a finite number"),
    (["prove", "T1", "--at", "theta="], "--at: theta must be a finite number"),
    (["prove", "T1", "--at", "epsilon=1"], "--at: epsilon must be a number strictly between"),
    (["prove", "T1", "--at", "n=1.5"], "--at: n must be an integer >= 1"),
    (["prove", "T1", "--at", "n=1e5000", "delta=1", "theta=1"], "n must have at most 4300 digits"),
    (["prove", "T4", "--at", "epsilon=0.5", "delta=1e400", "theta=1"], "at most 400 digits"),
    (["prove", "T4", "--at", "epsilon=0.5", "delta=1", "theta=1e-400"], "at most 400 digits"),
    (["prove", "T2", "--at", "n"], "--at expects NAME=VALUE"),
    (["prove", "T1", "--at", "foo=1"], "--at: unknown parameter 'foo'"),
    (["prove", "T1", "--at", "=5"], "--at: unknown parameter ''"),
    (["prove", "T4", "--at", "n=16", "delta=5", "epsilon=0.01"], "--at: theta missing"),
    (["prove", "T7", "--at", "n=16"], "no formula of T7 takes only the parameters --at sets"),
    (["prove", "--kernel", "lean"], "argument --kernel: invalid choice: 'lean'"),
    (["prove", "T2", "--certificate", "{tmp}"], "is a folder"),
    (["prove", "T2", "--certificate", "/"], "--certificate: / is a folder"),
    (["prove", "T2", "--certificate", "/proc/x/certificate.json"], "does not exist"),
    (["prove", "T2", "--certificate", "/proc/x"], "cannot be written"),
    (["prove", "T2", "--certificate", "{tmp}/missing/c.json"], "does not exist"),
    # certify: sizes
    (["certify", "--family", "spike", "--n", "0", "--delta", "1"], "--n: '0' is less than 1"),
    (["certify", "--family", "spike", "--n", "-5", "--delta", "1"], "--n: '-5' is less than 1"),
    (["certify", "--family", "spike", "--n", "1.5", "--delta", "1"], "is not an integer"),
    (["certify", "--family", "spike", "--n", "", "--delta", "1"], "--n: no size given"),
    (["certify", "--family", "spike", "--n", ",", "--delta", "1"], "--n: an empty size"),
    (["certify", "--family", "spike", "--n", "16,,32", "--delta", "1"], "--n: an empty size"),
    (["certify", "--family", "spike", "--n", "1e5000", "--delta", "1"], "too large"),
    (["certify", "--family", "spike", "--n", "1e5000", "--delta", "1", "--json"], "too large"),
    (["certify", "--family", "spike", "--n", "10**4301", "--delta", "1"], "too large"),
    (["certify", "--family", "spike", "--n", "10**4301", "--delta", "1", "--json"], "too large"),
    (["certify", "--family", "spike", "--n", "2^20000", "--delta", "1"], "too large"),
    (["certify", "--family", "spike", "--n", "2^20000", "--delta", "1", "--json"], "too large"),
    (["certify", "--family", "spike", "--n", "10**99999", "--delta", "1"], "too large"),
    (["certify", "--family", "spike", "--n", "1e100001", "--delta", "1"], "too large"),
    (["certify", "--family", "geometric_ladder", "--n", "1e7"], "n must be at most 1000000"),
    (["certify", "--family", "long_uniform", "--n", "16"], "n must be"),
    # certify: parameters
    (["certify", "--family", "spike", "--n", "16", "--delta", "-1"], "--delta: delta must be"),
    (["certify", "--family", "spike", "--n", "16", "--delta", "nan"], "--delta: delta must be"),
    (["certify", "--family", "spike", "--n", "16", "--delta", "inf"], "--delta: delta must be"),
    (["certify", "--family", "spike", "--n", "16", "--delta", "abc"], "--delta: delta must be"),
    (["certify", "--family", "spike", "--n", "16", "--delta", "1e400"], "the binary64 range"),
    (["certify", "--family", "spike", "--n", "16", "--delta", "1e99999999"], "4300 digits"),
    (["certify", "--family", "spike", "--n", "16", "--delta", "1", "--theta", "0"], "--theta"),
    (["certify", "--family", "spike", "--n", "16", "--delta", "1", "--theta", "-1"], "--theta"),
    (
        ["certify", "--family", "spike", "--n", "16", "--delta", "1", "--theta", "1e-5000"],
        "--theta",
    ),
    (["certify", "--family", "spike", "--n", "16", "--delta", "1", "--eps", "2"], "--eps"),
    (["certify", "--family", "spike", "--n", "16", "--delta", "1", "--eps", "0"], "--eps"),
    (["certify", "--family", "spike", "--n", "16", "--delta", "1", "--eps", "nan"], "--eps"),
    (["certify", "--family", "spike", "--n", "16", "--delta", "1e4", "--eps", "0.01"], "n*(ε)"),
    (["certify", "--family", "spike", "--n", "16", "--delta", "1", "--s", "0"], "--s"),
    (["certify", "--family", "spike", "--n", "16", "--format", "float8"], "invalid choice"),
    (["certify", "--family", "spike", "--n", "16", "--engine", "gmp"], "invalid choice"),
    (["certify", "--family", "spike", "--n", "16", "--max-precision", "0"], "at least 64 bits"),
    (["certify", "--family", "spike", "--n", "16", "--max-precision", "abc"], "invalid int"),
    # certify: families and their own parameters
    (["certify", "--family", "nope", "--n", "16"], "unknown family 'nope'"),
    (["certify", "--family", "", "--n", "16"], "unknown family ''"),
    (["certify", "--family", "bogus", "--n", "16"], "certifiable families: dip,"),
    (["certify", "--family", "nan", "--n", "16"], "non-finite logits"),
    (["certify", "--n", "16"], "the following arguments are required: --family"),
    (["certify", "--family", "spike"], "the following arguments are required: --n"),
    (["certify", "--family", "spike", "--n", "16"], "needs delta"),
    (["certify", "--family", "two_level", "--n", "16", "--delta", "1"], "needs k_high"),
    (
        ["certify", "--family", "two_level", "--n", "16", "--delta", "1", "--param", "k_high"],
        "--param expects NAME=VALUE",
    ),
    (
        ["certify", "--family", "two_level", "--n", "16", "--delta", "1", "--param", "k_high=x"],
        "--param k_high: k_high must be an integer",
    ),
    (
        ["certify", "--family", "two_level", "--n", "16", "--delta", "1", "--param", "k_high=99"],
        "k_high <= n = 16, got 99",
    ),
    (
        ["certify", "--family", "spike", "--n", "16", "--delta", "1", "--param", "k_high=2"],
        "takes n, delta, low; not k_high",
    ),
    # check (the oracle's own table is tests/cli/test_check.py)
    (["check", "numpy", "--kind", "sparse"], "--kind must be one of"),
    (["check", "numpy", "--kind", "ssmax"], "needs --s"),
    (["check", "no_such_module:f"], "cannot import 'no_such_module'"),
    (["check", "numpy", "--library", "cupy"], "--library must be one of"),
    (["check", "numpy", "--tolerance", "loose"], "--tolerance must be recursive or strict"),
    (["check", "numpy", "--require-policy", "zeros"], "--require-policy expects KEY=VALUE"),
    (["check", "numpy", "--require-policy", "input=lost"], "--require-policy"),
    (["check", "numpy", "--out", "{tmp}/file.txt"], "exists and is not a folder"),
    (["check", "numpy", "--dtypes", ""], "--dtypes"),
    # recheck
    (["recheck", "/dev/null"], "is not a regular file"),
    (["recheck", "{tmp}"], "is a folder"),
    (["recheck", ""], "is a folder"),
    (["recheck", "{tmp}/missing.json"], "does not exist"),
    (["recheck", "{tmp}/file.txt"], "is not JSON"),
    (["recheck", "{tmp}/empty"], "is not JSON"),
    (["recheck", "{tmp}/list.json"], "a certificate is a JSON object"),
    # export-coq
    (["export-coq", "{tmp}/folder"], "is not empty; choose a new or empty folder"),
    (["export-coq", "{tmp}/file.txt"], "file.txt exists and is not a folder"),
    (["export-coq", "/proc/x"], "cannot write /proc/x"),
    # reproduce
    (["reproduce", "--sections", ""], "--sections: no section named"),
    (["reproduce", "--sections", ","], "--sections: no section named"),
    (["reproduce", "--out", "{tmp}/r", "--sections", "proofs"], "--sections: unknown name"),
    (["reproduce", "--out", "{tmp}/r", "--sections", "oracle,oracle"], "more than once"),
    (["reproduce", "--out", "{tmp}/file.txt"], "is not a folder"),
    (["reproduce", "--out", "{tmp}/folder"], "holds no earlier report"),
    (["reproduce", "--out", "{tmp}/folder", "--force"], "holds no earlier report"),
    (["reproduce", "--out", "/proc/x"], "cannot be created"),
    # report
    (["report", "{tmp}"], "holds no metrics.json"),
    (["report", "{tmp}/missing"], "holds no metrics.json"),
    (["report", "{tmp}/run-object"], "is not a max-retrieval run's metrics (no config, rows)"),
    (["report", "{tmp}/run-junk"], "is not readable JSON"),
    (["report", "{tmp}/run-list"], "is not a max-retrieval run's metrics"),
    # experiment
    (["experiment"], "the following arguments are required: TASK"),
    (["experiment", "bogus"], "invalid choice: 'bogus'"),
    (["experiment", "max-retrieval", "--resume"], "--resume needs --out"),
    (["experiment", "max-retrieval", "--seeds", "abc"], "invalid int value: 'abc'"),
    (["experiment", "max-retrieval", "--sizes", "16,,32"], "--sizes: an empty size"),
    (["experiment", "max-retrieval", "--train-sizes", "16"], "--train-sizes expects LOW,HIGH"),
    (
        ["experiment", "max-retrieval", "--resume", "--out", "{tmp}/missing"],
        "there is nothing to resume",
        TORCH,
    ),
    (
        ["experiment", "max-retrieval", "--from-checkpoint", "{tmp}/missing", "--out", "{tmp}/x"],
        "has no checkpoints/ folder",
        TORCH,
    ),
    (["experiment", "max-retrieval", "--sizes", "16,0", "--out", "{tmp}/y"], "--sizes", TORCH),
    (["experiment", "max-retrieval", "--preset", "huge", "--out", "{tmp}/y"], "--preset", TORCH),
    (
        ["experiment", "max-retrieval", "--seeds", "0", "--out", "{tmp}/y"],
        "seeds must be >= 1",
        TORCH,
    ),
    (
        ["experiment", "max-retrieval", "--train-sizes", "1,100000000000", "--out", "{tmp}/y"],
        "train_sizes must satisfy 1 <= low <= high <= 1048576",
        TORCH,
    ),
    (["experiment", "max-retrieval", "--out", "{tmp}/folder"], "is not empty", TORCH),
    (["experiment", "pretrained", "--seed", "-1"], "--seed must be >= 0"),
    (["experiment", "pretrained", "--text", "{tmp}/missing.txt"], "is not a file"),
    (["experiment", "pretrained", "--text", "{tmp}/empty"], "is empty"),
    (["experiment", "pretrained", "--out", "{tmp}/file.txt"], "exists and is not a folder"),
]
"""Every input here is a mistake a user could make; each entry gives part of the one line
it must get.  Inputs are run in a folder holding the files they name (:func:`_folder`)."""


def _cases() -> list[object]:
    cases: list[object] = []
    for entry in BAD_INPUT:
        args, message = entry[0], entry[1]
        needs = entry[2] if len(entry) > 2 else None  # type: ignore[misc]
        marks = []
        if needs is not None and importlib.util.find_spec(needs) is None:
            marks.append(pytest.mark.skip(reason=f"needs {needs}"))
        cases.append(pytest.param(args, message, marks=marks, id=" ".join(args) or "(none)"))
    return cases


def _folder(tmp_path: Path) -> Path:
    """The files and folders the table's inputs name."""
    (tmp_path / "file.txt").write_text("not a certificate, not a folder")
    (tmp_path / "empty").write_text("")
    (tmp_path / "list.json").write_text("[]")
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "notes.txt").write_text("keep me")
    for name, text in (("run-object", "{}"), ("run-junk", "junk"), ("run-list", "[]")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "metrics.json").write_text(text)
    return tmp_path


def _listing(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))


def _assert_one_line(err: str, message: str) -> None:
    assert err.count("\n") == 1, err
    assert err.startswith("softmax-dispersion") and ": error: " in err, err
    assert "Traceback" not in err and message in err, err


def test_the_table_holds_every_subcommand_and_enough_inputs() -> None:
    from softmax_dispersion.cli import COMMANDS

    named = {entry[0][0] for entry in BAD_INPUT if entry[0]}
    assert {name.replace("_", "-") for name in COMMANDS} <= named
    assert len(BAD_INPUT) >= 60


@pytest.mark.parametrize(("args", "message"), _cases())
def test_bad_input_is_one_line_and_exit_2(
    args: list[str],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = _folder(tmp_path)
    before = _listing(folder)
    monkeypatch.chdir(folder)  # an input that wrote a default folder would write here
    argv = [arg.replace("{tmp}", str(folder)) for arg in args]
    try:
        status = main(argv)
    except SystemExit as done:  # argparse's refusals exit from inside main()
        status = done.code
    assert status == 2
    _assert_one_line(capsys.readouterr().err, message)
    assert _listing(folder) == before  # nothing is left behind by a refused command


@pytest.mark.slow
@pytest.mark.parametrize(("args", "message"), _cases())
def test_bad_input_from_a_shell(args: list[str], message: str, tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    before = _listing(folder)
    argv = [arg.replace("{tmp}", str(folder)) for arg in args]
    done = subprocess.run(
        [sys.executable, "-m", "softmax_dispersion", *argv],
        capture_output=True,
        text=True,
        cwd=folder,
        timeout=600,
    )
    assert done.returncode == 2, done.stderr
    _assert_one_line(done.stderr, message)
    assert _listing(folder) == before


@pytest.mark.parametrize("size", ["1e400", "2^1100", "10**400"])
def test_certify_works_at_any_size_the_engine_does(
    size: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["certify", "--family", "spike", "--n", size, "--delta", "3", "--eps", "0.01"]) == 0
    assert "verdict: VERIFIED" in capsys.readouterr().out


def test_every_finite_family_is_certifiable_from_the_command_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from softmax_dispersion.numerics.families import FAMILIES

    for name, family in FAMILIES.items():
        if not family.finite:
            continue
        args = ["certify", "--family", name, "--n", str(max(family.min_n, 16))]
        if "delta" in family.required:
            args += ["--delta", "2"]
        if "k_high" in family.required:
            args += ["--param", "k_high=3"]
        assert main(args) == 0, name
        assert "verdict: VERIFIED" in capsys.readouterr().out


def test_every_public_cli_module_is_a_subcommand() -> None:
    import importlib

    from softmax_dispersion.cli import COMMANDS, build_parser

    assert {"prove", "certify", "check", "reproduce", "experiment", "report"} <= set(COMMANDS)
    help_text = build_parser().format_help()
    for name in COMMANDS:
        module = importlib.import_module(f"softmax_dispersion.cli.{name}")
        assert callable(module.add_parser) and callable(module.run)
        assert name.replace("_", "-") in help_text
