"""``softmax-dispersion check``: exit 0 pass, 1 fail, 2 bad usage (one line)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest

from softmax_dispersion.cli import main
from softmax_dispersion.testing.targets import (
    KIND_NAMES,
    TargetError,
    numpy_log_softmax,
    numpy_softmax,
    resolve_target,
)

BROKEN = """
import numpy as np

def softmax(x):
    return np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True) * 1.001

def raises(x):
    raise RuntimeError("kernel exploded")

def torchy(x):
    import torch
    return torch.softmax(x, dim=-1)

def masked(x, mask):
    shown = np.where(mask, x, -np.inf)
    e = np.exp(shown - shown.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)

def as_list(x):
    return softmax(x).tolist()

not_callable = 3
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with a module ``mysoftmax`` as the current directory."""
    (tmp_path / "mysoftmax.py").write_text(BROKEN)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "mysoftmax", raising=False)
    return tmp_path


def usage_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(["check", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("softmax-dispersion check: error: ")
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


def test_textbook_numpy_softmax() -> None:
    x = np.array([[1.0, 2.0, 3.0], [1000.0, 1000.0, -np.inf]])
    p = numpy_softmax(x)
    assert np.allclose(p.sum(axis=-1), 1.0) and np.allclose(p[1], [0.5, 0.5, 0.0])
    assert np.allclose(np.exp(numpy_log_softmax(x)), p)


def test_kind_names_are_the_oracle_s() -> None:
    from softmax_dispersion.testing import KINDS

    assert tuple(KINDS) == KIND_NAMES


def test_builtins_resolve_with_their_library() -> None:
    assert resolve_target("numpy").library == "numpy"
    assert resolve_target("scipy", "log_softmax").library == "numpy"
    if find_spec("torch") is not None:
        assert resolve_target("torch").library == "torch"
    else:
        with pytest.raises(TargetError, match="needs torch"):
            resolve_target("torch")
    x = np.array([0.0, np.log(3.0)])
    assert np.allclose(resolve_target("scipy").fn(x), [0.25, 0.75])
    assert np.allclose(resolve_target("numpy", "log_softmax").fn(x), np.log([0.25, 0.75]))


def test_module_function_is_found_in_the_current_folder(project: Path) -> None:
    target = resolve_target("mysoftmax:softmax")
    assert target.library == "numpy" and target.name == "mysoftmax:softmax"
    assert str(project) not in sys.path


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["nosuchmodule_xyz:softmax"], "cannot import 'nosuchmodule_xyz'"),
        (["mysoftmax:missing"], "has no attribute 'missing'"),
        (["mysoftmax:not_callable"], "not callable"),
        (["mysoftmax"], "module:function"),
        (["numpy", "--kind", "sparsemax"], "--kind must be one of"),
        (["numpy", "--kind", "ssmax"], "--kind ssmax needs --s"),
        (["numpy", "--s", "0.5"], "--s applies to --kind ssmax only"),
        (["numpy", "--kind", "adaptive_temperature"], "pass your own module:function"),
        (["scipy", "--kind", "masked_softmax"], "provides --kind softmax, log_softmax"),
        (["numpy", "--tolerance", "loose"], "--tolerance must be recursive or strict"),
        (["numpy", "--tolerance", "-1"], "--tolerance: a number of ULPs"),
        (["numpy", "--tolerance", "pairwise"], "--tolerance pairwise was replaced by strict"),
        (["numpy", "--dtypes", ""], "--dtypes is empty"),
        (["numpy", "--dtypes", ","], "--dtypes is empty"),
        (["numpy", "--suites", ""], "--suites is empty"),
        (["numpy", "--suites", "nope"], "--suites: unknown suite(s) nope"),
        (["mysoftmax:softmax", "--kind", "ssmax", "--s", "0.5", "--suites", "masks"], "skips the"),
        (["numpy", "--require-policy", "zeros"], "--require-policy expects KEY=VALUE"),
        (["numpy", "--require-policy", "fully masked row=zeros"], "--require-policy: unknown"),
        (["numpy", "--require-policy", "subnormals=gone"], "--require-policy"),
        (["numpy", "--require-policy", "all -inf row=zero"], "one of NaN, NaN in part, zeros"),
        (["mysoftmax:as_list", "--dtypes", "float32"], "returned list, expected an array"),
        (["numpy", "--out", "mysoftmax.py"], "--out: mysoftmax.py exists and is not a folder"),
        (["mysoftmax:torchy", "--dtypes", "float32"], "add --library torch"),
        (["numpy", "--library", "torch"], "does not fit target 'numpy'"),
        (["mysoftmax:softmax", "--library", "cupy"], "--library must be one of"),
    ],
)
def test_bad_usage_is_one_line(
    project: Path, capsys: pytest.CaptureFixture[str], argv: list[str], words: str
) -> None:
    assert words in usage_error(capsys, argv)


def test_jax_missing_is_bad_usage(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without jax: the built-in target and --library jax are each one line, exit 2.
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "jax" else real(name, *a)
    )
    monkeypatch.setitem(sys.modules, "jax", None)  # import jax raises ImportError
    monkeypatch.setitem(sys.modules, "jax.nn", None)
    assert "jax, which is not installed" in usage_error(capsys, ["jax"])
    assert "--library jax: jax is not installed" in usage_error(
        capsys, ["mysoftmax:softmax", "--library", "jax"]
    )


@pytest.mark.parametrize("target", ["numpy", "scipy"])
def test_builtin_passes(target: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", target]) == 0
    out = capsys.readouterr().out
    assert "PASSED" in out and "float32" in out


def test_log_softmax_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "scipy", "--kind", "log_softmax", "--dtypes", "float64", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] is True


def test_inaccurate_softmax_fails_with_an_actionable_report(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = project / "report"
    assert main(["check", "mysoftmax:softmax", "--dtypes", "float32", "--out", str(out_dir)]) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "worst input:" in out and "reproduce:" in out
    assert "likely cause: exp overflows: subtract the row's maximum" in out
    assert "from mysoftmax import softmax as fn" in out
    assert "ULP, allowed " in out
    written = {p.name for p in out_dir.iterdir()}
    assert {"report.md", "report.json"} <= written and any(n.endswith(".npy") for n in written)
    assert json.loads((out_dir / "report.json").read_text())["passed"] is False


def test_tolerance_and_required_policies(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["check", "numpy", "--dtypes", "float64", "--tolerance", "strict"]
    assert main(argv) == 0
    assert "tolerance: T12 strict: any summation order" in capsys.readouterr().out
    assert main([*argv, "--require-policy", "all -inf row=zeros"]) == 1
    out = capsys.readouterr().out
    assert "policy [float64]: 1/1 failed" in out or "all -inf row → NaN, required zeros" in out
    assert main(["check", "numpy", "--dtypes", "float64", "--tolerance", "3"]) == 1


def test_masked_kind_from_the_command_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["check", "mysoftmax:masked", "--kind", "masked_softmax", "--dtypes", "float64"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "fully masked row: NaN" in out and "PASSED" in out
    assert main(["check", "numpy", "--kind", "masked_softmax", "--dtypes", "float32"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize("name", ["raises", "wrong_shape"])
def test_broken_callable_is_named(
    project: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    assert f"mysoftmax:{name}" in usage_error(capsys, [f"mysoftmax:{name}"])


@pytest.mark.slow
def test_the_jax_target_passes_out_of_the_box(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("jax")
    assert main(["check", "jax"]) == 0
    out = capsys.readouterr().out
    assert "float64" in out and "PASSED" in out and "64-bit types enabled" in out


HEAVY = ("numpy", "sympy", "z3", "torch", "jax", "flint", "mpmath", "scipy")
_HELP = """
import argparse, json, sys, time
start = time.perf_counter()
from softmax_dispersion.cli import check
parser = argparse.ArgumentParser(prog="softmax-dispersion")
text = check.add_parser(parser.add_subparsers()).format_help()
took = time.perf_counter() - start
heavy = sorted(m for m in sys.modules if m.split(".")[0] in {heavy!r})
print(json.dumps([took, heavy, text]))
"""


def test_check_help_is_built_from_the_registry_without_numpy() -> None:
    # The help text comes from the kinds' registry, which imports the standard library
    # only: no numpy, sympy or z3 (before: the battery, sympy and z3, about 1 s).  The
    # time is a generous bound in a fresh process; bench_oracle.py measures it.
    code = _HELP.format(heavy=HEAVY)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    took, heavy, text = json.loads(done.stdout)
    assert heavy == []
    flat = " ".join(text.split())
    assert "ssmax: fn(x)" in flat and "masked_softmax: fn(x, mask)" in flat and "--s S" in flat
    assert took < 1.0, took
