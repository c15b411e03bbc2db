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
        "Not equal to the certified softmax reference within tolerance "
        "(T12, any summation order and formulation)"
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
    assert lines[8].startswith("Tolerance: T12")


def test_a_long_row_is_saved_for_the_reproducer() -> None:
    x = np.linspace(-3, 3, 300).reshape(1, -1)
    wrong = _softmax(x)
    wrong[0, 7] *= 1.01
    with pytest.raises(AssertionError) as info:
        assert_softmax_close(wrong, x)
    line = next(li for li in str(info.value).splitlines() if li.startswith("Reproduce: "))
    assert "np.load(" in line
    code = line[len('Reproduce: python -c "') : -1]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert float(out.stdout) == reference_softmax(x).values[0, 7]


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


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_half_on_finfo_min_masked_entries_fails(dtype: str) -> None:
    # The planted bug of the first oracle: 0.5 on every finfo.min entry (rows summing
    # to 5) passed, because the allowance there was inf·0 = NaN -> infinite.
    torch = pytest.importorskip("torch") if dtype == "bfloat16" else None
    rows = np.concatenate([np.random.default_rng(0).standard_normal((2, 8)), np.zeros((2, 8))], 1)
    big = float(np.finfo(np.float32).max) if dtype == "bfloat16" else float(np.finfo(dtype).max)
    rows[:, 8:] = -big
    good = _softmax(rows.astype(np.float64))
    planted = np.where(rows <= -big / 2, 0.5, good)
    if torch is not None:
        x = torch.from_numpy(rows).to(torch.bfloat16)
        ok, bad = (torch.from_numpy(v).to(torch.bfloat16) for v in (good, planted))
    else:
        x, ok, bad = (v.astype(dtype) for v in (rows, good, planted))
    assert_softmax_close(ok, x)
    with pytest.raises(AssertionError, match="Mismatched elements: 16 / 32"):
        assert_softmax_close(bad, x)


def test_masked_softmax_and_subnormals() -> None:
    x = np.array([[1.0, 50.0, 2.0, np.nan]])
    mask = np.array([[True, False, True, False]])
    e = np.exp(np.array([1.0, 2.0]) - 2.0)
    out = np.array([[e[0] / e.sum(), 0.0, e[1] / e.sum(), 0.0]])
    assert_softmax_close(out, x, mask=mask)
    with pytest.raises(AssertionError):
        assert_softmax_close(np.array([[0.25, 0.25, 0.25, 0.25]]), x, mask=mask)
    tiny = np.array([[0.0, -100.0]], dtype=np.float32)  # p = e^-100: a float32 subnormal
    flushed = np.array([[1.0, 0.0]], dtype=np.float32)
    assert_softmax_close(flushed, tiny)  # a named behaviour in float32 by default
    with pytest.raises(AssertionError):
        assert_softmax_close(flushed, tiny, subnormals="kept")
    half = np.array([[0.0, -12.0]], dtype=np.float16)  # e^-12 is a float16 subnormal
    with pytest.raises(AssertionError):
        assert_softmax_close(np.array([[1.0, 0.0]], dtype=np.float16), half)
    with pytest.raises(ValueError, match="subnormals must be"):
        assert_softmax_close(flushed, tiny, subnormals="maybe")


def test_torch_output() -> None:
    torch = pytest.importorskip("torch")
    x = torch.randn(3, 50, dtype=torch.bfloat16)
    assert_softmax_close(torch.softmax(x, dim=-1), x)
    with pytest.raises(AssertionError, match="bfloat16"):
        assert_softmax_close(torch.softmax(x, dim=-1) * 1.2, x)


def test_traceback_is_hidden() -> None:
    assert "__tracebackhide__" in assert_softmax_close.__code__.co_varnames
