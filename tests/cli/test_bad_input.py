"""Bad input to every subcommand: exit status 2, one line on standard error, no traceback.

One table for the whole command line; a subcommand's own tests cover its happy paths.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from softmax_dispersion.cli import main

BAD_INPUT: list[tuple[list[str], str]] = [
    (["prove", "T99"], "unknown claim id 'T99'"),
    (["prove", "T2", "--at", "theta=0"], "--at: theta must be a number > 0"),
    (["prove", "T2", "--at", "n"], "--at expects NAME=VALUE"),
    (["prove", "T2", "--certificate", "{tmp}"], "is a folder"),
    (["prove", "T2", "--certificate", "/proc/x/certificate.json"], "does not exist"),
    (["prove", "T2", "--certificate", "/proc/x"], "cannot be written"),
    (["prove", "T2", "--certificate", "{tmp}/missing/c.json"], "does not exist"),
    (["recheck", "{tmp}"], "is a folder"),
    (["recheck", "{tmp}/missing.json"], "does not exist"),
    (["recheck", "{tmp}/file.txt"], "is not JSON"),
    (["certify", "--family", "spike", "--n", "0", "--delta", "1"], "--n: '0' is less than 1"),
    (["certify", "--family", "spike", "--n", "1.5", "--delta", "1"], "is not an integer"),
    (["certify", "--family", "spike", "--n", "1e100001", "--delta", "1"], "too large"),
    (["certify", "--family", "spike", "--n", "16", "--delta", "-1"], "--delta: delta must be"),
    (["certify", "--family", "spike", "--n", "16", "--delta", "1", "--theta", "0"], "--theta"),
    (["certify", "--family", "spike", "--n", "16", "--delta", "1", "--eps", "2"], "--eps"),
    (["certify", "--family", "nope", "--n", "16"], "unknown family 'nope'"),
    (["certify", "--family", "two_level", "--n", "16", "--delta", "1"], "needs k_high"),
    (
        ["certify", "--family", "two_level", "--n", "16", "--delta", "1", "--param", "k_high"],
        "--param expects NAME=VALUE",
    ),
    (
        ["certify", "--family", "spike", "--n", "16", "--delta", "1", "--param", "k_high=2"],
        "takes n, delta, low; not k_high",
    ),
    (["certify", "--family", "long_uniform", "--n", "16"], "n must be"),
    (["certify", "--family", "nan", "--n", "16"], "non-finite logits"),
    (["check", "numpy", "--kind", "sparse"], "--kind must be one of"),
    (["check", "numpy", "--kind", "ssmax"], "needs --s"),
    (["check", "no_such_module:f"], "cannot import 'no_such_module'"),
    (["check", "numpy", "--library", "cupy"], "--library must be one of"),
    (["check", "numpy", "--tolerance", "loose"], "--tolerance must be recursive or strict"),
    (["check", "numpy", "--require-policy", "zeros"], "--require-policy expects KEY=VALUE"),
    (["check", "numpy", "--require-policy", "input=lost"], "--require-policy"),
    (["check", "numpy", "--out", "{tmp}/file.txt"], "exists and is not a folder"),
    (["reproduce", "--out", "{tmp}/file.txt"], "is not a folder"),
    (["export-coq", "{tmp}/file.txt"], "file.txt exists and is not a folder"),
    (["reproduce", "--out", "{tmp}/r", "--sections", "proofs"], "--sections: unknown name"),
    (["reproduce", "--out", "{tmp}/r", "--sections", "oracle,oracle"], "more than once"),
    (["report", "{tmp}"], "holds no metrics.json"),
    (
        ["experiment", "max-retrieval", "--resume", "--out", "{tmp}/missing"],
        "there is nothing to resume",
    ),
    (
        ["experiment", "max-retrieval", "--from-checkpoint", "{tmp}/missing", "--out", "{tmp}/x"],
        "has no checkpoints/ folder",
    ),
    (["experiment", "max-retrieval", "--sizes", "16,0", "--out", "{tmp}/y"], "--sizes"),
    (["experiment", "max-retrieval", "--preset", "huge", "--out", "{tmp}/y"], "--preset"),
]


@pytest.mark.parametrize(("args", "message"), BAD_INPUT, ids=[" ".join(a) for a, _ in BAD_INPUT])
def test_bad_input_is_one_line_and_exit_2(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file.txt").write_text("not a folder")
    if args[0] == "experiment":
        pytest.importorskip("torch")
    argv = [arg.replace("{tmp}", str(tmp_path)) for arg in args]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"softmax-dispersion {args[0]}: error: ")
    assert message in err
    # Nothing is left behind by a refused command.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]


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
