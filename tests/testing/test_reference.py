"""reference_softmax: certified values, axes, dtypes, torch input, import hygiene."""

from __future__ import annotations

import subprocess
import sys

import mpmath
import numpy as np
import pytest

from softmax_dispersion.testing import Reference, reference_softmax


def _exact(row: list[float], i: int, log: bool = False) -> mpmath.mpf:
    with mpmath.workdps(60):
        top = max(row)
        total = mpmath.fsum(mpmath.exp(mpmath.mpf(v) - top) for v in row)
        value = mpmath.mpf(row[i]) - top - mpmath.log(total)
        return value if log else mpmath.exp(value)


def _correctly_rounded(value: mpmath.mpf, dtype: str) -> float:
    """``value`` rounded once, to nearest with ties to even, to ``dtype`` (subnormals
    included): an independent rounding, never through float64 first."""
    if value == 0:
        return 0.0
    info = np.finfo(dtype)
    bits = info.nmant + 1
    with mpmath.workdps(60):
        _, exponent = mpmath.frexp(value)  # |value| in [2**(exponent-1), 2**exponent)
        quantum = mpmath.ldexp(1, max(int(exponent) - 1, info.minexp) - bits + 1)
        scaled = value / quantum
        below = mpmath.floor(scaled)
        rest = scaled - below
        up = rest > 0.5 or (rest == 0.5 and int(below) % 2 == 1)
        return float((below + up) * quantum)


def _misrounded(values: np.ndarray, row: list[float], dtype: str, log: bool) -> list[int]:
    """The indices whose value is not the correctly rounded softmax (or log-softmax)."""
    return [
        i
        for i in range(len(row))
        if float(values[i]) != _correctly_rounded(_exact(row, i, log), dtype)
    ]


def _row(dtype: str) -> tuple[np.ndarray, list[float]]:
    x = (np.random.default_rng(3).standard_normal(7) * 5).astype(dtype)
    return x, [float(v) for v in x]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("log", [False, True])
def test_values_are_correctly_rounded(dtype: str, log: bool) -> None:
    x, row = _row(dtype)
    ref = reference_softmax(x, log=log)
    assert isinstance(ref, Reference)
    assert ref.dtype == dtype and ref.values.dtype == np.float64 and ref.values.shape == (7,)
    assert ref.certified.all() and ref.precision >= 106
    assert _misrounded(ref.values, row, dtype, log) == []
    for i in range(7):
        exact = float(_exact(row, i, log))
        assert ref.lower[i] <= float(_exact(row, i, log)) <= ref.upper[i] or np.isclose(
            ref.lower[i], exact, rtol=1e-15
        )


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("log", [False, True])
def test_a_value_one_ulp_off_is_caught(dtype: str, log: bool) -> None:
    """The comparison above can fail: every value one ULP too high, or too low, is seen."""
    x, row = _row(dtype)
    values = reference_softmax(x, log=log).values.astype(dtype)
    for direction in (np.inf, -np.inf):
        wrong = np.nextafter(values, np.asarray(direction, dtype=dtype)).astype(np.float64)
        assert _misrounded(wrong, row, dtype, log) == list(range(7))


def test_axis_and_shape() -> None:
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    ref0 = reference_softmax(x, axis=0)
    assert ref0.values.shape == x.shape
    np.testing.assert_allclose(ref0.values.sum(axis=0), 1, rtol=1e-15)
    ref1 = reference_softmax(x, axis=1)
    np.testing.assert_allclose(ref1.values.sum(axis=1), 1, rtol=1e-15)
    moved = reference_softmax(np.moveaxis(x, 1, -1)).values
    np.testing.assert_array_equal(np.moveaxis(moved, -1, 1), ref1.values)


def test_output_dtype_and_theta() -> None:
    x = np.array([0.0, 1.0, 2.0])
    ref = reference_softmax(x, dtype="bfloat16")
    assert ref.dtype == "bfloat16"
    assert ref.values.tolist() == [0.08984375, 0.2451171875, 0.6640625]
    hot = reference_softmax(x, theta=0.5).values
    assert hot[2] > reference_softmax(x).values[2]
    assert reference_softmax(np.arange(3)).dtype == "float64"


def test_non_finite_rows() -> None:
    ref = reference_softmax(np.array([[np.inf, 0.0], [-np.inf, -np.inf], [0.0, -np.inf]]))
    assert ref.values[0].tolist() == [1.0, 0.0]
    assert np.isnan(ref.values[1]).all()
    assert ref.values[2].tolist() == [1.0, 0.0]
    assert ref.status == ("ok", "undefined", "ok")


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="at least one dimension"):
        reference_softmax(np.float64(1.0))
    with pytest.raises(ValueError, match="empty"):
        reference_softmax(np.zeros((2, 0)))
    with pytest.raises(ValueError, match="unknown output dtype"):
        reference_softmax(np.zeros(2), dtype="float8")


def test_torch_tensors() -> None:
    torch = pytest.importorskip("torch")
    x = torch.tensor([[0.0, 1.0, 2.0]], dtype=torch.bfloat16, requires_grad=True)
    ref = reference_softmax(x)
    assert ref.dtype == "bfloat16"
    assert ref.values.tolist() == [[0.08984375, 0.2451171875, 0.6640625]]
    half = reference_softmax(torch.zeros(4, dtype=torch.float16))
    assert half.dtype == "float16" and half.values.tolist() == [0.25] * 4


def test_import_loads_no_optional_library() -> None:
    code = (
        "import sys, numpy as np, softmax_dispersion.testing as t;"
        "t.reference_softmax(np.zeros(3));"
        "t.assert_softmax_close(np.full(3, 1/3), np.zeros(3));"
        "print([m for m in ('torch', 'jax', 'hypothesis') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    code = "import sys, softmax_dispersion.testing; print('flint' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
