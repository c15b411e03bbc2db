"""assert_softmax_close: passes correct outputs, fails wrong ones with a useful message."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import scipy.special

from softmax_dispersion.testing import Tolerance, assert_softmax_close, reference_softmax


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_correct_outputs_pass(dtype: str) -> None:
    x = (np.random.default_rng(1).standard_normal((4, 300)) * 6).astype(dtype)
    assert_softmax_close(scipy.special.softmax(x, axis=-1), x)
    assert_softmax_close(scipy.special.log_softmax(x, axis=-1), x, log=True)
    assert_softmax_close(_softmax(x, axis=0), x, axis=0)
    assert_softmax_close(scipy.special.softmax(x / 0.5, axis=-1), x, theta=0.5)


def test_message_format() -> None:
    x = np.array([[1.0, 2.0, 3.0]], dtype=np.float32)
    wrong = _softmax(x)
    wrong[0, 1] *= np.float32(1.001)
    with pytest.raises(AssertionError) as info:
        assert_softmax_close(wrong, x)
    text = str(info.value)
    lines = text.splitlines()
    assert lines[0] == (
        "Not equal to the certified softmax reference within tolerance (T12, pairwise summation)"
    )
    assert lines[1] == ""
    assert lines[2] == "Mismatched elements: 1 / 3 (33.3%)"
    assert lines[3].startswith("Max absolute difference: ")
    assert lines[4].startswith("Max ULP error: ") and "(allowed " in lines[4]
    assert lines[5].startswith("Max relative error: ")
    assert lines[6].startswith(" Worst: index (0, 1)") and "input row [1.0, 2.0, 3.0]" in lines[6]
    assert lines[7].startswith('Reproduce: python -c "')
    code = lines[7][len('Reproduce: python -c "') : -1]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert float(out.stdout) == reference_softmax(x).values[0, 1]


def test_tolerance_options() -> None:
    x = np.array([0.0, 1.0, 2.0, 3.0])
    ref = reference_softmax(x).values
    off = ref + 3 * np.spacing(ref)
    with pytest.raises(AssertionError, match="2 ULP"):
        assert_softmax_close(off, x, tolerance=2)
    assert_softmax_close(off, x, tolerance=4)
    assert_softmax_close(off, x, tolerance="recursive")
    assert_softmax_close(off, x, tolerance=Tolerance(ulps=1))


def test_wrong_functions_fail() -> None:
    x = np.array([[0.0, 0.0, 0.0, 0.0]], dtype=np.float32)
    with pytest.raises(AssertionError, match="Mismatched elements: 4 / 4"):
        assert_softmax_close(np.full((1, 4), 0.2, dtype=np.float32), x)
    gap = np.array([0.0] + [-40.0] * 15)
    with pytest.raises(AssertionError, match="log_softmax"):
        assert_softmax_close(np.log(_softmax(gap)) + 1e-3, gap, log=True)
    with pytest.raises(AssertionError, match="shape mismatch"):
        assert_softmax_close(np.zeros(3), np.zeros(4))
    nan_out = _softmax(x)
    nan_out[0, 0] = np.nan
    with pytest.raises(AssertionError):
        assert_softmax_close(nan_out, x)


def test_masks_and_policy_rows() -> None:
    x = np.array([[1.0, 2.0, -np.inf], [-np.inf, -np.inf, -np.inf], [np.nan, 1.0, 2.0]])
    with np.errstate(all="ignore"):
        out = _softmax(x)
    assert_softmax_close(out, x)  # policy rows (all −inf, NaN) are not compared
    zeroed = np.nan_to_num(out)
    assert_softmax_close(zeroed, x)
    leaked = out.copy()
    leaked[0, 2] = 1e-3
    with pytest.raises(AssertionError):
        assert_softmax_close(leaked, x)


def test_torch_output() -> None:
    torch = pytest.importorskip("torch")
    x = torch.randn(3, 50, dtype=torch.bfloat16)
    assert_softmax_close(torch.softmax(x, dim=-1), x)
    with pytest.raises(AssertionError, match="bfloat16"):
        assert_softmax_close(torch.softmax(x, dim=-1) * 1.2, x)


def test_traceback_is_hidden() -> None:
    assert "__tracebackhide__" in assert_softmax_close.__code__.co_varnames
