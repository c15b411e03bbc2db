"""``softmax-dispersion check``: exit 0 pass, 1 fail, 2 bad usage (one line)."""

from __future__ import annotations

import importlib
import importlib.util
import json
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


def core_available() -> bool:
    try:
        module = importlib.import_module("softmax_dispersion.testing")
    except ImportError:
        return False
    return hasattr(module, "check_softmax")


needs_core = pytest.mark.skipif(
    not core_available(), reason="softmax_dispersion.testing's core is not built yet"
)

BROKEN = """
import numpy as np

def softmax(x):
    return np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True) * 1.001

def raises(x):
    raise RuntimeError("kernel exploded")

def wrong_shape(x):
    return np.ones(3)

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


def test_kind_names_mirror_the_oracle() -> None:
    if core_available():
        from softmax_dispersion.testing import KINDS

        assert tuple(KINDS) == KIND_NAMES
    assert KIND_NAMES[:2] == ("softmax", "log_softmax")


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
        (["numpy", "--library", "torch"], "does not fit target 'numpy'"),
        (["mysoftmax:softmax", "--library", "cupy"], "--library must be one of"),
    ],
)
def test_bad_usage_is_one_line(
    project: Path, capsys: pytest.CaptureFixture[str], argv: list[str], words: str
) -> None:
    assert words in usage_error(capsys, argv)


@pytest.mark.skipif(importlib.util.find_spec("jax") is not None, reason="jax is installed")
def test_jax_missing_is_bad_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert "jax, which is not installed" in usage_error(capsys, ["jax"])


@needs_core
@pytest.mark.parametrize("target", ["numpy", "scipy"])
def test_builtin_passes(target: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", target]) == 0
    out = capsys.readouterr().out
    assert "PASSED" in out and "float32" in out


@needs_core
def test_log_softmax_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "scipy", "--kind", "log_softmax", "--dtypes", "float64", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] is True


@needs_core
def test_inaccurate_softmax_fails(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "mysoftmax:softmax", "--dtypes", "float32"]) == 1
    assert "FAILED" in capsys.readouterr().out


@needs_core
@pytest.mark.parametrize("name", ["raises", "wrong_shape"])
def test_broken_callable_is_named(
    project: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    assert f"mysoftmax:{name}" in usage_error(capsys, [f"mysoftmax:{name}"])
