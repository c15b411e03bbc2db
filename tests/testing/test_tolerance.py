"""The default tolerance is T12's bounds, computed from theory's formulas; never infinite."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from softmax_dispersion.numerics.rounding import FORMATS
from softmax_dispersion.testing import Tolerance
from softmax_dispersion.testing.strategies import DTYPES, logits, masks
from softmax_dispersion.testing.tolerance import (
    VALID_UP_TO,
    accumulation_format,
    allowances,
    allowed_error,
    flushing_is_named,
    ulp,
)
from softmax_dispersion.theory import rounding_error as t12


def test_coerce() -> None:
    assert Tolerance.coerce(None) == Tolerance() == Tolerance(model="recursive")
    assert Tolerance.coerce(2) == Tolerance(model="ulps", ulps=2.0)
    assert Tolerance.coerce("strict").model == "strict"
    with pytest.raises(ValueError, match="'pairwise' was replaced by 'strict'"):
        Tolerance.coerce("pairwise")
    custom = Tolerance(exp_ulps=1)
    assert Tolerance.coerce(custom) is custom
    with pytest.raises(ValueError, match="unknown tolerance model"):
        Tolerance.coerce("loose")
    with pytest.raises(TypeError):
        Tolerance.coerce(True)
    with pytest.raises(ValueError, match=">= 0"):
        Tolerance(ulps=-1)
    assert Tolerance().label == "T12, any summation order and formulation"


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
    assert [flushing_is_named(d) for d in DTYPES] == [False, True, True, True]


def test_uniform_row_is_the_largest_formula() -> None:
    # A uniform row: every gap 0, L = log 4; the largest bound is exp(x − lse) or the
    # exp of the log-softmax, both charged 2·k_log·u·L for the log of the sum.
    u, n, k = 2.0**-24, 4, 2.0
    gamma = float(t12.gamma_recursive.numpy(float(n), u))
    log_sum = math.log(n)
    bounds = [
        t12.softmax_relative_error_bound.numpy(0, 0, u, k, gamma, u),
        t12.softmax_reciprocal_relative_error_bound.numpy(0, 0, u, k, gamma, u),
        t12.exp_log_softmax_relative_error_bound.numpy(0, 0, log_sum, u, k, k, gamma, u),
        t12.exp_lse_relative_error_bound.numpy(0, 0, log_sum, 0, u, k, k, gamma, u, u),
        t12.exp_lae_relative_error_bound.numpy(0, log_sum, 0, u, k, k, n - 1, u),
    ]
    rel = max(float(b) for b in bounds) + n * 2.0**-149
    expected = math.expm1(1.01 * rel) * 0.25 * (1 + 4 * 2.0**-53) + 0.5 * 2.0**-25 + 2 * 2.0**-149
    allowed = allowed_error(np.zeros((1, 4)), dtype="float32")
    np.testing.assert_allclose(allowed, expected, rtol=1e-9)


def test_strict_is_the_tighter_opt_in() -> None:
    x = np.array([[0.0, -3.0, -10.0, -1.0] * 256]) + 100.0
    strict = allowed_error(x, dtype="float32", tolerance="strict")
    default = allowed_error(x, dtype="float32")
    assert np.all(default >= strict) and np.any(default > 2 * strict)
    both = allowances(x, dtype="float32")
    assert both.strict is not None
    np.testing.assert_array_equal(both.total, default)
    np.testing.assert_array_equal(both.strict, strict)
    assert allowances(x, dtype="float32", tolerance="strict").strict is None
    # the relative allowance grows with the gap
    probs = np.exp(x - 100) / np.exp(x - 100).sum()
    rel = (strict - 0.5 * ulp(probs, "float32")) / probs
    assert rel[0, 2] > rel[0, 1] > rel[0, 0]
    ulps = allowed_error(x, dtype="float64", tolerance=3)
    np.testing.assert_allclose(ulps, 3 * ulp(np.exp(x) / np.exp(x).sum(), "float64"))


def test_sixteen_bit_accumulates_in_float32() -> None:
    # A uniform row of 4096: sums in float32; the allowance stays a few float16 ulps
    # plus the log of the sum (log 4096 ≈ 8.3) the exp-of-log-softmax form rounds.
    allowed = allowed_error(np.zeros((1, 4096)), dtype="float16")
    assert float(allowed.max() / ulp(1 / 4096, "float16")[()]) < 30


def test_log_softmax_uses_the_absolute_bound() -> None:
    x = np.array([[0.0] + [-40.0] * 15])
    allowed = allowed_error(x, dtype="float64", log=True)
    # the value at the max is −15·e^{−40}: returning 0 is within T12's absolute bound
    assert allowed[0, 0] > 15 * math.exp(-40)
    assert allowed[0, 1] < 1e-12


def test_scaled_arguments_add_terms() -> None:
    x = np.array([[100.0, 99.0, 95.0]])
    plain = allowed_error(x, dtype="float32")
    assert np.all(allowed_error(x, dtype="float32", beta_error=2.0**-24) > plain)
    exact_beta = allowed_error(x, dtype="float32", beta=2.0)
    assert np.all(allowed_error(x, dtype="float32", beta=2.0, beta_error=2.0**-20) > exact_beta)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("log", [False, True])
def test_masked_entries_get_no_allowance(dtype: str, log: bool) -> None:
    # finfo.min masks used to give inf·0 = NaN -> an infinite allowance: 0.5 passed.
    big = FORMATS[dtype].max_finite
    x = np.array([[0.5, -1.0, 2.0, -big, -big, -np.inf]])
    allowed = allowed_error(x, dtype=dtype, log=log)
    assert np.all(np.isfinite(allowed))
    tiny = 4 * FORMATS[dtype].smallest_subnormal
    if log:
        assert allowed[0, 5] == 0  # -inf is compared exactly
        assert np.all(allowed[0, 3:5] <= 8 * FORMATS[dtype].unit_roundoff * big)  # a few ulps
    else:
        assert np.all(allowed[0, 3:] <= tiny)


@settings(max_examples=60)
@given(
    dtype=st.sampled_from(["float16", "float32", "float64"]),
    log=st.booleans(),
    data=st.data(),
)
def test_no_input_ever_gets_an_infinite_or_nan_allowance(
    dtype: str, log: bool, data: st.DataObject
) -> None:
    x = data.draw(logits(n=st.integers(1, 24), dtype=dtype, batch=st.integers(1, 3)))
    mask = data.draw(masks(n=x.shape[-1], batch=x.shape[0]))
    rows = np.where(mask, x.astype(np.float64), -np.inf)
    beta = data.draw(st.sampled_from([1.0, 0.5, 3.0]))
    allowed = allowed_error(rows, dtype=dtype, log=log, beta=beta, beta_error=beta != 1.0)
    assert np.all(np.isfinite(allowed)) and np.all(allowed >= 0)


def test_a_formulation_vouches_only_where_its_first_order_bound_means_something() -> None:
    # Rows near −finfo.max in float32: the log-sum-exp forms would allow anything there
    # (their rounded log-sum-exp is the maximum itself); only the max-shifted form stays.
    x = np.full((1, 8), -3.0e38)
    default = allowed_error(x, dtype="float32")
    strict = allowed_error(x, dtype="float32", tolerance="strict")
    assert VALID_UP_TO == 0.5
    assert float(default.max()) < 2 * float(strict.max())


def test_the_strict_model_leaves_out_the_row_scale_allowances() -> None:
    # x − logsumexp(x) at logits near −1e6 in float32: the log-sum-exp rounded at that
    # magnitude (ulp 0.0625) turns −0.0147 into 0.0.  The default allows it (a correct
    # log-sum-exp-first formulation loses that much); the strict model does not.
    x = np.array([[-1e6, -1e6 - 4.2]])
    exact = -math.log1p(math.exp(-4.2))
    default = allowed_error(x, dtype="float32", log=True)
    strict = allowed_error(x, dtype="float32", log=True, tolerance="strict")
    assert abs(exact) > strict[0, 0] and abs(exact) < default[0, 0]
    # scaling before the shift: u·β·|e| in the default only
    y = np.array([[1e4, 1e4 - 1.0, 1e4 - 2.0]])
    scaled = allowed_error(y, dtype="float32", beta=2.0, beta_error=1e-7)
    shifted = allowed_error(y, dtype="float32", beta=2.0, beta_error=1e-7, tolerance="strict")
    assert float(scaled.max()) > 100 * float(shifted.max())


@pytest.mark.parametrize("log", [False, True])
def test_logits_near_finfo_max_scaled_by_beta_get_finite_allowances(log: bool) -> None:
    # β·|max e| overflowed (3 × 6e307): a warning, and an infinite term in the bound.
    rows = np.array([[0.0, -np.inf], [5.99231045e307, 0.0]])
    allowed = allowed_error(rows, dtype="float64", log=log, beta=3.0, beta_error=1.0)
    assert np.all(np.isfinite(allowed)) and np.all(allowed >= 0)
    if not log:  # a probability's allowance never exceeds the width of [0, 1]
        assert float(allowed.max()) <= 1 + 1e-12
