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


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("log", [False, True])
def test_values_are_correctly_rounded(dtype: str, log: bool) -> None:
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(7) * 5).astype(dtype)
    ref = reference_softmax(x, log=log)
    assert isinstance(ref, Reference)
    assert ref.dtype == dtype and ref.values.dtype == np.float64 and ref.values.shape == (7,)
    assert ref.certified.all() and ref.precision >= 106
    row = [float(v) for v in x]
    for i in range(7):
        exact = float(_exact(row, i, log))
        tiny = float(np.finfo(dtype).smallest_subnormal)
        assert np.isclose(ref.values[i], exact, rtol=2.0 ** -np.finfo(dtype).nmant, atol=tiny)
        assert ref.lower[i] <= float(_exact(row, i, log)) <= ref.upper[i] or np.isclose(
            ref.lower[i], exact, rtol=1e-15
        )
    cast = ref.values.astype(dtype).astype(np.float64)
    np.testing.assert_array_equal(cast, ref.values)


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
