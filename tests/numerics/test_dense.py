"""Dense certified softmax: exact roundings, enclosures, boundaries, semantics, faults."""

from __future__ import annotations

import dataclasses
import doctest
import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from softmax_dispersion.numerics import (
    FORMATS,
    LogitSequence,
    certified_softmax,
    round_dyadic,
)
from softmax_dispersion.numerics.dense import (
    DenseEvaluation,
    certified_softmax_dense,
    fast_path_bounds,
)
from softmax_dispersion.numerics.dense import _double_double as double_double
from softmax_dispersion.numerics.dense import _driver as driver
from softmax_dispersion.numerics.dense import _elementary as elementary
from softmax_dispersion.numerics.dense import _rounding as rounding
from softmax_dispersion.numerics.dense._elementary import U_DD

NAMES = sorted(FORMATS)


def as_fraction(value: mpmath.mpf) -> Fraction:
    sign, mantissa, exponent, _ = value._mpf_
    magnitude = Fraction(int(mantissa)) * Fraction(2) ** int(exponent)
    return -magnitude if sign else magnitude


TINY = Fraction(1, 2**6000)
"""Stands for any positive number below it: every float comparison and every rounding
(boundaries are multiples of 2**-1075) comes out the same, and no 2**-10**300 is built."""


def reference_row(
    row: np.ndarray[Any, Any], theta: Fraction = Fraction(1), log: bool = False
) -> list[Fraction | None]:
    """Each coefficient of a finite-maximum row (None: exactly 0 / −inf), independently.

    ``x_j = (e_j − max)/θ`` is exact; ``S = Σ_{x_j < 0} exp(x_j)`` and ``log Z =
    log1p(S)`` (one maximum) or ``log(c + S)`` are 1200-bit values, relatively accurate
    however small.  Log-softmax is then ``x_j − log Z`` exactly: a ``log Z`` below
    ``2**-1200`` can decide the rounding of an ``x_j`` that is a tie.  Weights of
    ``x_j < −5000`` (below ``2**-7213``) count as ``2**-7000``; values below ``TINY`` as
    ``TINY``.
    """
    top = Fraction(max(float(v) for v in row))
    shifted = [None if v == -math.inf else (Fraction(float(v)) - top) / theta for v in row]

    def exact(value: mpmath.mpf) -> Fraction:
        return TINY if value and mpmath.mag(value) < -6000 else as_fraction(value)

    with mpmath.workprec(1200):
        weights = [
            None
            if x is None
            else mpmath.ldexp(1, -7000)
            if x < -5000
            else mpmath.exp(mpmath.mpf(x.numerator) / x.denominator)
            for x in shifted
        ]
        tops = sum(1 for x in shifted if x == 0)
        rest = mpmath.fsum(
            w for x, w in zip(shifted, weights, strict=True) if x is not None and x != 0
        )
        if log:
            if tops == 1:
                log_total = exact(rest) if mpmath.mag(rest) < -3000 else exact(mpmath.log1p(rest))
            else:
                log_total = as_fraction(mpmath.log(tops + rest))
            return [None if x is None else x - log_total for x in shifted]
        total = tops + rest
        return [None if w is None else exact(w / total) for w in weights]


def rounded(value: Fraction | None, name: str, log: bool) -> float:
    """The exact rounding (exact for dyadic values; to 2**-12000 otherwise)."""
    if value is None:
        return -math.inf if log else 0.0
    denominator = value.denominator
    if denominator & (denominator - 1) == 0:
        return float(round_dyadic((value.numerator, 1 - denominator.bit_length()), FORMATS[name]))
    scale = 12000
    return float(round_dyadic((round(value * 2**scale), -scale), FORMATS[name]))


def mismatches(
    result: DenseEvaluation, x: np.ndarray[Any, Any], theta: Fraction = Fraction(1)
) -> int:
    """Elements whose value is not the exact rounding, or whose enclosure misses it."""
    log = result.function == "log_softmax"
    grid = np.atleast_2d(x)
    values, lower, upper = (np.atleast_2d(a) for a in (result.values, result.lower, result.upper))
    bad = 0
    for i, row in enumerate(grid):
        for j, exact in enumerate(reference_row(row, theta, log)):
            if values[i, j] != rounded(exact, result.format, log) or (
                exact is not None and not (Fraction(lower[i, j]) <= exact <= Fraction(upper[i, j]))
            ):
                bad += 1
    return bad


def exact_path(row: np.ndarray[Any, Any], **options: Any) -> list[float]:
    """The run-length exact path's rounded values, in the row's order."""
    evaluation = certified_softmax(LogitSequence.from_array(row), **options)
    assert evaluation.certified
    by_logit = {
        run.logit: math.nan if run.enclosure.rounded is None else float(run.enclosure.rounded)
        for run in evaluation.runs
    }
    return [by_logit[float(v)] for v in row]


# --- agreement with exact values ------------------------------------------------------------

finite = st.floats(-60, 60, allow_nan=False, allow_infinity=False)
grids = hnp.arrays(
    np.float64, hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=25), elements=finite
)


@settings(max_examples=60)
@given(
    x=grids,
    name=st.sampled_from(NAMES),
    log=st.booleans(),
    theta=st.sampled_from([Fraction(1), Fraction(1, 2), Fraction(7, 10), Fraction(3)]),
    scale=st.sampled_from([1.0, 1 / 64, 20.0]),
)
def test_random_arrays_round_exactly_and_are_enclosed(
    x: np.ndarray[Any, Any], name: str, log: bool, theta: Fraction, scale: float
) -> None:
    x = x * scale
    result = certified_softmax_dense(x, theta=theta, log=log, format=name)
    assert result.values.shape == x.shape
    assert result.all_certified
    assert mismatches(result, x, theta) == 0


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("log", [False, True])
def test_long_rows_match_the_exact_path(name: str, log: bool) -> None:
    """n = 3000 uniform in [−10, 10]: float16 values are subnormal (~1e-5 < 2**-14)."""
    x = np.random.default_rng(7).uniform(-10, 10, 3000)
    result = certified_softmax_dense(x, log=log, format=name)
    assert result.all_certified and result.fallback_rows == 0
    assert result.values.tolist() == exact_path(x, log=log, format=name)


masked_or_tied = st.one_of(finite, st.sampled_from([-math.inf, 0.0, 2.5, -1e-300]))


@settings(max_examples=40)
@given(
    x=hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=12),
        elements=masked_or_tied,
    ),
    name=st.sampled_from(NAMES),
    log=st.booleans(),
)
def test_masked_and_tied_logits(x: np.ndarray[Any, Any], name: str, log: bool) -> None:
    assume(np.isfinite(x).any(axis=-1).all())
    result = certified_softmax_dense(x, log=log, format=name)
    assert result.all_certified
    assert mismatches(result, x) == 0


@pytest.mark.parametrize("log", [False, True])
def test_a_row_longer_than_a_block_matches_the_exact_path(log: bool) -> None:
    """n = 20000: blocks of 8192 and their partial sums."""
    x = np.random.default_rng(8).uniform(-10, 10, 20000)
    result = certified_softmax_dense(x, log=log)
    assert result.all_certified and result.fallback_rows == 0
    assert result.values.tolist() == exact_path(x, log=log, format="float64")


@pytest.mark.parametrize("name", NAMES)
def test_spikes_stay_on_the_fast_path(name: str) -> None:
    """A spike's largest log-softmax value is −log1p(S), tiny: kept relatively precise."""
    x = np.array([[0.0, -40.0, -45.0], [0.0, -300.0, -700.0], [3.0, 3.0, -50.0], [0.0, -6, -7]])
    for log in (False, True):
        result = certified_softmax_dense(x, log=log, format=name)
        assert result.all_certified and result.fallback_rows == 0
        assert mismatches(result, x) == 0


@pytest.mark.parametrize("name", NAMES)
def test_underflow_and_subnormal_outputs(name: str) -> None:
    """Shifted logits down to −760 cover every format's subnormals and the cut at −750."""
    x = np.concatenate([np.linspace(-760, 0, 400), [-744.4, -745.2, -749.9, -750.1, -1e4]])
    result = certified_softmax_dense(x, format=name)
    assert result.all_certified and result.fallback_rows == 0
    assert mismatches(result, x) == 0


def test_a_half_integer_scaled_value_is_still_certified() -> None:
    """``2**-1020·a`` is subnormal in float64: ``a·2**54`` is a half-integer whose low
    part decides the neighbour (a case that once fell back to the exact path)."""
    a_hi, a_lo, k = 0.03378211636804537, -2.9236839722499004e-18, -1020
    with np.errstate(all="ignore"):  # as in the evaluation (overflow to inf is meant)
        value, certified = rounding.round_certify(
            1.0,
            np.array([a_hi]),
            np.array([a_lo]),
            np.array([k]),
            np.array([1e-30]),
            FORMATS["float64"],
            False,
        )
    exact = (Fraction(a_hi) + Fraction(a_lo)) * Fraction(2) ** k
    assert certified[0] and value[0] == rounded(exact, "float64", False)


@pytest.mark.parametrize("log", [False, True])
def test_temperature_and_length_scaling_match_the_exact_path(log: bool) -> None:
    x = np.random.default_rng(3).uniform(-5, 5, 300)
    for options in ({"theta": "0.3"}, {"theta": 2, "s": "0.75"}):
        result = certified_softmax_dense(x, log=log, **options)
        assert result.all_certified
        assert result.values.tolist() == exact_path(x, log=log, **options)


def test_two_dimensional_rows_are_independent() -> None:
    rng = np.random.default_rng(11)
    x = rng.uniform(-30, 30, (17, 41))
    x[3] = 4.0  # a uniform row
    x[5, :7] = -np.inf
    both = certified_softmax_dense(x, format="float32")
    assert both.values.shape == (17, 41) and both.status == ("ok",) * 17
    for i, row in enumerate(x):
        single = certified_softmax_dense(row, format="float32")
        assert np.array_equal(both.values[i], single.values)
        assert np.array_equal(both.lower[i], single.lower)


def test_small_blocks_and_chunks_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    x = rng.uniform(-40, 40, (9, 33))
    x[2, 4] = np.nan
    x[6, 1] = np.inf
    expected = certified_softmax_dense(x, log=True)
    monkeypatch.setattr(driver, "BLOCK", 7)
    monkeypatch.setattr(driver, "CHUNK", 50)
    result = certified_softmax_dense(x, log=True)
    assert np.array_equal(result.values, expected.values, equal_nan=True)
    assert np.array_equal(result.upper, expected.upper, equal_nan=True)
    assert result.status == expected.status


# --- rounding boundaries ------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("side", [1, -1])
def test_values_next_to_a_midpoint(name: str, side: int) -> None:
    """``σ(a) = 1/2 + a/4 − a³/48 + …`` for the row ``[a, 0]``.

    ``a = 2**(1−p)``: a hair under the midpoint ``1/2 + 2**-(p+1)``; ``a = −2**-p``: a hair
    over the midpoint ``1/2 − 2**-(p+2)`` of the finer binade below 1/2.  Both round to
    1/2.  float64 needs the exact path (``2**-161`` and ``2**-164`` away); the narrower
    formats are certified by the fast path (at least ``2**-53`` quanta away).
    """
    p = FORMATS[name].precision
    x = np.array([2.0 ** (1 - p) if side > 0 else -(2.0**-p), 0.0])
    result = certified_softmax_dense(x, format=name)
    assert result.all_certified
    assert mismatches(result, x) == 0
    assert result.values[0] == 0.5  # rounds back to 1/2 on both sides
    assert result.fallback_rows == (1 if name == "float64" else 0)
    if name == "float64":
        assert result.precision > driver.FAST_PRECISION


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32"])
def test_log_values_next_to_a_midpoint(name: str) -> None:
    """``[0, a]`` with ``a = log(expm1(m))`` for a midpoint ``m``: ``log p₀ = −m`` up to
    the rounding of ``a`` (about ``2**-49`` relative)."""
    fmt = FORMATS[name]
    midpoints = [
        Fraction(2**fmt.precision + 1, 2 ** (fmt.precision + 20)),  # mid of 1 ulp above 2**-20
        Fraction(2 ** (fmt.precision + 1) - 1, 2 ** (fmt.precision + 6)),  # just under 2**-5
    ]
    with mpmath.workprec(300):
        logits = [
            float(mpmath.log(mpmath.expm1(mpmath.mpf(m.numerator) / m.denominator)))
            for m in midpoints
        ]
    x = np.array([[0.0, a] for a in logits])
    result = certified_softmax_dense(x, log=True, format=name)
    assert result.all_certified
    assert mismatches(result, x) == 0


def test_exactly_representable_values_are_certified() -> None:
    """Uniform rows of 2**k: the exact values 2**-k are floats (not boundaries)."""
    for k in (0, 1, 5, 11):
        result = certified_softmax_dense(np.zeros(2**k), format="float16")
        assert result.all_certified and np.all(result.values == 2.0**-k)
        logs = certified_softmax_dense(np.zeros(2**k), log=True)
        assert logs.all_certified and np.all(logs.values == -k * math.log(2))


# --- limit semantics and huge magnitudes ----------------------------------------------------


def test_non_finite_rows_follow_the_limit_semantics() -> None:
    inf, nan = math.inf, math.nan
    x = np.array(
        [
            [inf, 3.0, -inf, inf],  # +inf entries share the mass
            [-inf, 1.0, 1.0, -inf],  # −inf entries get 0
            [nan, 1.0, 2.0, 3.0],  # a NaN row is NaN
            [-inf, -inf, -inf, -inf],  # undefined
        ]
    )
    result = certified_softmax_dense(x)
    assert result.status == ("ok", "ok", "nan", "undefined")
    assert result.values[0].tolist() == [0.5, 0.0, 0.0, 0.5]
    assert result.values[1].tolist() == [0.0, 0.5, 0.5, 0.0]
    assert np.isnan(result.values[2:]).all() and not result.certified[2:].any()
    assert result.certified[:2].all()
    logs = certified_softmax_dense(x, log=True)
    assert logs.values[0].tolist() == [-math.log(2), -inf, -inf, -math.log(2)]
    assert logs.values[1].tolist() == [-inf, -math.log(2), -math.log(2), -inf]
    assert result.fallback_rows == 3  # the +inf, NaN and all −inf rows


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("log", [False, True])
def test_huge_magnitudes(name: str, log: bool) -> None:
    x = np.array([1e300, -1e300, 0.0, 1e300 - 2.0**960, -1.7e308, 1.7e308])
    result = certified_softmax_dense(x, log=log, format=name)
    assert result.all_certified
    assert result.values.tolist() == exact_path(x, log=log, format=name)


@pytest.mark.parametrize("name", NAMES)
def test_huge_log_softmax_values_on_the_fast_path(name: str) -> None:
    x = np.array([[0.0, -1e300, -3e299, -(2.0**300), -1e76], [5.0, -1e200, 4.0, -7e250, 5.0]])
    result = certified_softmax_dense(x, log=True, format=name)
    assert result.all_certified and result.fallback_rows == 0
    assert mismatches(result, x) == 0


def test_log_overflow_in_float16() -> None:
    result = certified_softmax_dense(
        [0.0, -70000.0, -65519.5, -65520.5], log=True, format="float16"
    )
    assert result.values.tolist() == [0.0, -math.inf, -65504.0, -math.inf]
    assert result.all_certified and result.fallback_rows == 0


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match="theta must be a number > 0"):
        certified_softmax_dense([1.0], theta=0)
    with pytest.raises(ValueError, match="1-D or 2-D"):
        certified_softmax_dense(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="n >= 1"):
        certified_softmax_dense([])
    with pytest.raises(ValueError, match="unknown float format"):
        certified_softmax_dense([1.0], format="float8")
    with pytest.raises(TypeError, match="real numbers"):
        certified_softmax_dense(np.array([1 + 2j]))


# --- the building blocks against exact arithmetic ---------------------------------------------


def test_double_double_operations_stay_within_u_dd() -> None:
    rng = np.random.default_rng(2)
    n = 300
    xh = rng.uniform(-4, 4, n) * 2.0 ** rng.integers(-30, 30, n)
    yh = rng.uniform(-4, 4, n) * 2.0 ** rng.integers(-30, 30, n)
    xl = xh * rng.uniform(-1, 1, n) * 2.0**-53
    yl = yh * rng.uniform(-1, 1, n) * 2.0**-53
    xh, xl = double_double.fast_two_sum(xh, xl)
    yh, yl = double_double.fast_two_sum(yh, yl)
    y_hi, y_lo = double_double.dekker_split(yh)
    positive_h, positive_l = np.abs(yh), np.where(yh < 0, -yl, yl)
    same_sign_h, same_sign_l = np.abs(xh), np.where(xh < 0, -xl, xl)
    Exact = Callable[[Fraction, Fraction, Fraction], Fraction]
    operations: dict[str, tuple[tuple[Any, Any], Exact]] = {
        "add": (double_double.dd_add(xh, xl, yh, yl), lambda x, y, b: x + y),
        "add_fp": (double_double.dd_add_fp(xh, xl, yh), lambda x, y, b: x + b),
        "mul": (double_double.dd_mul(xh, xl, yh, yl), lambda x, y, b: x * y),
        "mul_fp": (double_double.dd_mul_fp(xh, xl, yh, y_hi, y_lo), lambda x, y, b: x * b),
        "add_dominant": (
            double_double.dd_add_dominant(same_sign_h, same_sign_l, positive_h, positive_l),
            lambda x, y, b: abs(x) + abs(y),
        ),
    }
    for name, ((zh, zl), exact) in operations.items():
        for i in range(n):
            x = Fraction(xh[i]) + Fraction(xl[i])
            y = Fraction(yh[i]) + Fraction(yl[i])
            want = exact(x, y, Fraction(yh[i]))
            got = Fraction(zh[i]) + Fraction(zl[i])
            assert abs(got - want) <= Fraction(U_DD) * abs(want), name


def test_fast_exponential_within_its_bound() -> None:
    bounds = fast_path_bounds()
    assert 2.0**-99 < bounds.exp_relative < 2.0**-97
    rng = np.random.default_rng(4)
    step = math.log(2) / 1024
    x = np.concatenate(
        [
            -rng.uniform(0, 750, 400),
            -(rng.integers(0, 1024 * 1082, 100) + 0.5) * step,  # reduction boundaries
            [0.0, -1e-300, -5e-324, -749.999],
        ]
    )
    xl = np.zeros_like(x)
    mh, ml, k, ok = elementary.exp_dd(x, xl)
    assert ok.all()
    with mpmath.workprec(300):
        for i in range(x.size):
            exact = as_fraction(mpmath.exp(mpmath.mpf(float(x[i])))) / Fraction(2) ** int(k[i])
            got = Fraction(mh[i]) + Fraction(ml[i])
            assert abs(got - exact) <= Fraction(bounds.exp_relative) * exact


@settings(max_examples=300)
@given(
    name=st.sampled_from(NAMES),
    n=st.integers(0, 2**53),
    below_binade=st.booleans(),
    exponent=st.integers(-1100, 1000),
    offset=st.integers(1, 120),
    side=st.sampled_from([-1, 1]),
    radius_bits=st.one_of(st.none(), st.integers(60, 200)),
    softmax_like=st.booleans(),
)
def test_rounding_certificates_are_sound_next_to_midpoints(
    name: str,
    n: int,
    below_binade: bool,
    exponent: int,
    offset: int,
    side: int,
    radius_bits: int | None,
    softmax_like: bool,
) -> None:
    """A value ``2**-offset`` quanta from a midpoint: certified only if both ends of its
    enclosure round to the returned value, and certified when no midpoint is near."""
    fmt = FORMATS[name]
    n %= 2**fmt.precision
    quantum = Fraction(2) ** max(exponent, fmt.emin - fmt.precision + 1)
    if below_binade:  # the midpoint under 2**(p−1) quanta, into the finer binade
        midpoint = (Fraction(2 ** (fmt.precision - 1)) - Fraction(1, 4)) * quantum
    else:
        midpoint = (n + Fraction(1, 2)) * quantum
    target = midpoint + side * quantum / 2**offset
    scale = 0
    if softmax_like:  # a = 2**-K·value in [1/2, 2): the scale is carried apart
        scale = target.numerator.bit_length() - target.denominator.bit_length()
    a = target / Fraction(2) ** scale
    if a >= 2**1023:
        return
    a_hi = float(a)
    a_lo = float(a - Fraction(a_hi))
    if not (math.isfinite(a_hi) and a_hi > 0) or abs(scale) > 2000:
        return
    exact = (Fraction(a_hi) + Fraction(a_lo)) * Fraction(2) ** scale
    radius = 0.0 if radius_bits is None else a_hi * 2.0**-radius_bits
    with np.errstate(all="ignore"):  # as in the evaluation (overflow to inf is meant)
        value, certified = rounding.round_certify(
            1.0,
            np.array([a_hi]),
            np.array([a_lo]),
            np.array([scale]),
            np.array([radius]),
            fmt,
            not softmax_like,
        )
    slack = Fraction(radius) * Fraction(2) ** scale
    if certified[0]:
        for end in (exact - slack, exact, exact + slack):
            assert value[0] == rounded(end, name, False)
    near = quantum / 2**42  # no midpoint within 2**-40 of the finest spacing around
    if slack < near and rounded(exact - near, name, False) == rounded(exact + near, name, False):
        assert certified[0]


def test_relative_bound_is_reported() -> None:
    x = np.random.default_rng(0).uniform(-10, 10, 1000)
    result = certified_softmax_dense(x)
    # τ₀ + 10 tree levels of U at least, and far below what float64 needs
    assert fast_path_bounds().exp_relative + 10 * U_DD < result.relative_bound < 2.0**-90


# --- injected faults: each must be caught by the exact comparison ------------------------------


def test_an_exponential_off_by_2_to_the_minus_60_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``exp`` too large by a relative ``2**-60`` where ``K`` is odd (a uniform error would
    cancel in the quotient): about 1 value in 128 is then misrounded."""
    x = np.random.default_rng(9).uniform(-10, 10, 3000)
    assert mismatches(certified_softmax_dense(x), x) == 0

    def faulty(xh: Any, xl: Any, original: Any = elementary.exp_dd) -> Any:
        mh, ml, k, ok = original(xh, xl)
        return (*double_double.fast_two_sum(mh, ml + mh * 2.0**-60 * (k % 2)), k, ok)

    monkeypatch.setattr(driver, "exp_dd", faulty)
    assert mismatches(certified_softmax_dense(x), x) > 0


def test_a_dropped_term_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.random.default_rng(10).uniform(-10, 10, 64)

    def dropping(h: Any, low: Any, until: int = 1, original: Any = driver._tree_sum) -> Any:
        if h.shape[1] > until:
            h, low = h[:, :-1], low[:, :-1]
        return original(h, low, until)

    monkeypatch.setattr(driver, "_tree_sum", dropping)
    assert mismatches(certified_softmax_dense(x), x) > 0


def test_a_shrunk_enclosure_is_caught() -> None:
    x = np.random.default_rng(12).uniform(-10, 10, 50)
    result = certified_softmax_dense(x)
    shrunk = dataclasses.replace(result, lower=result.values, upper=result.values)
    assert mismatches(shrunk, x) > 0


def test_the_exact_path_agrees_when_forced(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sending every row to the exact path (as a failed fast path does) changes nothing."""
    rng = np.random.default_rng(13)
    x = rng.uniform(-20, 20, (4, 30))
    x[1, 3] = -np.inf
    for log in (False, True):
        fast = certified_softmax_dense(x, log=log, format="bfloat16")

        def failing(data: Any, *args: Any, original: Any = driver._fast_chunk) -> Any:
            fail, bound = original(data, *args)
            return np.ones_like(fail), bound

        with monkeypatch.context() as patch:
            patch.setattr(driver, "_fast_chunk", failing)
            exact = certified_softmax_dense(x, log=log, format="bfloat16")
        assert exact.fallback_rows == 4 and exact.fallback_elements == x.size
        assert np.array_equal(exact.values, fast.values)
        assert exact.all_certified
        assert mismatches(exact, x) == 0


def test_without_ieee_arithmetic_everything_takes_the_exact_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    x = np.random.default_rng(14).uniform(-5, 5, (3, 9))
    expected = certified_softmax_dense(x, format="float32")
    monkeypatch.setattr(driver, "ieee_arithmetic", lambda: False)
    result = certified_softmax_dense(x, format="float32")
    assert result.fallback_rows == 3 and result.all_certified
    assert np.array_equal(result.values, expected.values)


def test_doctests() -> None:
    results = [
        doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        for module in (double_double, elementary, rounding, driver)
    ]
    assert sum(r.attempted for r in results) > 0 and sum(r.failed for r in results) == 0
