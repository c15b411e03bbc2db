"""The default tolerance is T12's bound, computed from theory's formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest

from softmax_dispersion.testing import Tolerance
from softmax_dispersion.testing.tolerance import accumulation_format, allowed_error, ulp
from softmax_dispersion.theory.rounding_error import gamma_pairwise, gamma_recursive


def test_coerce() -> None:
    assert Tolerance.coerce(None) == Tolerance()
    assert Tolerance.coerce(2) == Tolerance(model="ulps", ulps=2.0)
    assert Tolerance.coerce("recursive").model == "recursive"
    custom = Tolerance(exp_ulps=1)
    assert Tolerance.coerce(custom) is custom
    with pytest.raises(ValueError, match="unknown tolerance model"):
        Tolerance.coerce("loose")
    with pytest.raises(TypeError):
        Tolerance.coerce(True)
    with pytest.raises(ValueError, match=">= 0"):
        Tolerance(ulps=-1)
    assert Tolerance().label == "T12, pairwise summation"


def test_ulp_and_accumulation() -> None:
    assert ulp([1.0, 0.5, 0.0, np.inf], "float32").tolist() == [
        2.0**-23,
        2.0**-24,
        2.0**-149,
        np.inf,
    ]
    assert ulp([1.0], "bfloat16").tolist() == [2.0**-7]
    assert [accumulation_format(d) for d in ("float16", "bfloat16", "float32", "float64")] == [
        "float32",
        "float32",
        "float32",
        "float64",
    ]


def test_uniform_row_is_the_formula() -> None:
    u = 2.0**-24
    allowed = allowed_error(np.zeros((1, 4)), dtype="float32")
    rel = 4 * 2 * u + float(gamma_pairwise.numpy(4.0, u)) + u + 4 * 2.0**-149
    expected = math.expm1(1.01 * rel) * 0.25 * (1 + 4 * 2.0**-53) + 0.5 * 2.0**-25 + 2 * 2.0**-149
    np.testing.assert_allclose(allowed, expected, rtol=1e-12)


def test_gap_terms_and_models() -> None:
    x = np.array([[0.0, -3.0, -10.0, -1.0]])
    pairwise = allowed_error(x, dtype="float64")
    recursive = allowed_error(x, dtype="float64", tolerance="recursive")
    assert np.all(recursive >= pairwise)
    assert float(gamma_recursive.numpy(4.0, 2.0**-53)) > float(gamma_pairwise.numpy(4.0, 2.0**-53))
    # the relative allowance grows with the gap
    probs = np.exp(x) / np.exp(x).sum()
    rel = (pairwise - 0.5 * ulp(probs, "float64")) / probs
    assert rel[0, 2] > rel[0, 1] > rel[0, 0]
    ulps = allowed_error(x, dtype="float64", tolerance=3)
    np.testing.assert_allclose(ulps, 3 * ulp(probs, "float64"))


def test_sixteen_bit_accumulates_in_float32() -> None:
    # A uniform row of 4096: pairwise float32 sum; the allowance stays a few float16 ulps.
    allowed = allowed_error(np.zeros((1, 4096)), dtype="float16")
    assert float(allowed.max() / ulp(1 / 4096, "float16")[()]) < 6


def test_log_softmax_uses_the_absolute_bound() -> None:
    x = np.array([[0.0] + [-40.0] * 15])
    allowed = allowed_error(x, dtype="float64", log=True)
    # the value at the max is −15·e^{−40}: returning 0 is within T12's absolute bound
    assert allowed[0, 0] > 15 * math.exp(-40)
    assert allowed[0, 1] < 1e-13


def test_scaled_arguments_add_terms() -> None:
    x = np.array([[100.0, 99.0, 95.0]])
    plain = allowed_error(x, dtype="float32")
    assert np.all(allowed_error(x, dtype="float32", beta_error=2.0**-24) > plain)
    exact_beta = allowed_error(x, dtype="float32", beta=2.0)
    assert np.all(allowed_error(x, dtype="float32", beta=2.0, beta_error=2.0**-20) > exact_beta)
