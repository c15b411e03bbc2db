"""Exported formulas against independent high-precision evaluations of softmax itself."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from softmax_dispersion.theory import FORMULAS
from softmax_dispersion.theory.adaptive_temperature import adaptive_constants
from softmax_dispersion.theory.dispersion import (
    dispersion_lower,
    dispersion_upper,
    paper_lower,
    paper_upper,
)
from softmax_dispersion.theory.dispersion_size import dispersion_size, sharpness_spread
from softmax_dispersion.theory.length_scaling import (
    length_scaled_gap_bound,
    length_scaled_spike_max,
)

DIGITS = 50


def softmax(logits: list[mpmath.mpf], theta: object = 1) -> list[mpmath.mpf]:
    """Softmax by its definition, term by term, at the working precision."""
    weights = [mpmath.exp(x / theta) for x in logits]
    total = mpmath.fsum(weights)
    return [w / total for w in weights]


sizes = st.integers(min_value=1, max_value=60)
spreads = st.floats(min_value=0, max_value=20, allow_nan=False)
temperatures = st.floats(min_value=0.05, max_value=10, allow_nan=False)


@settings(max_examples=40)
@given(n=sizes, delta=spreads, theta=temperatures)
def test_spike_and_dip_attain_t1(n: int, delta: float, theta: float) -> None:
    with mpmath.workdps(DIGITS):
        d, t = mpmath.mpf(delta), mpmath.mpf(theta)
        spike = softmax([d] + [mpmath.mpf(0)] * (n - 1), t)[0]
        dip = softmax([mpmath.mpf(0)] + [d] * (n - 1), t)[0]
        assert abs(spike - dispersion_upper.mpmath(n, d, t)) <= mpmath.mpf(10) ** (5 - DIGITS)
        assert abs(dip - dispersion_lower.mpmath(n, d, t)) <= mpmath.mpf(10) ** (5 - DIGITS)


@settings(max_examples=40)
@given(
    logits=st.lists(st.floats(-30, 30, allow_nan=False), min_size=1, max_size=40),
    theta=temperatures,
)
def test_every_coefficient_within_t1_and_t2(logits: list[float], theta: float) -> None:
    with mpmath.workdps(DIGITS):
        values = [mpmath.mpf(x) for x in logits]
        d, t, n = max(values) - min(values), mpmath.mpf(theta), len(values)
        slack = mpmath.mpf(10) ** (5 - DIGITS)
        for p in softmax(values, t):
            assert (
                dispersion_lower.mpmath(n, d, t) - slack
                <= p
                <= dispersion_upper.mpmath(n, d, t) + slack
            )
            assert paper_lower.mpmath(n, d, t) - slack <= p <= paper_upper.mpmath(n, d, t) + slack


@settings(max_examples=40)
@given(n=sizes, delta=spreads, theta=temperatures)
def test_numpy_exports_agree_with_mpmath(n: int, delta: float, theta: float) -> None:
    for formula in (dispersion_upper, dispersion_lower, paper_upper, paper_lower):
        expected = float(formula.mpmath(n, delta, theta))
        assert math.isclose(float(formula.numpy(n, delta, theta)), expected, rel_tol=1e-12)


@settings(max_examples=30)
@given(
    epsilon=st.floats(min_value=0.01, max_value=0.9),
    delta=st.floats(min_value=0, max_value=6),
)
def test_dispersion_size_is_the_exact_threshold(epsilon: float, delta: float) -> None:
    with mpmath.workdps(DIGITS):
        n_star = dispersion_size.mpmath(mpmath.mpf(epsilon), mpmath.mpf(delta), 1)
        first = int(mpmath.ceil(n_star))
        assert dispersion_upper.mpmath(first, delta, 1) <= mpmath.mpf(epsilon) * (1 + 1e-40)
        if first - 1 >= 1 and first - 1 < n_star:
            assert dispersion_upper.mpmath(first - 1, delta, 1) > epsilon


@settings(max_examples=30)
@given(n=st.integers(2, 10**6), epsilon=st.floats(min_value=1e-6, max_value=0.5))
def test_sharpness_spread_makes_the_spike_reach_one_minus_epsilon(n: int, epsilon: float) -> None:
    with mpmath.workdps(DIGITS):
        e = mpmath.mpf(epsilon)
        spread = sharpness_spread.mpmath(n, e)
        assert abs(dispersion_upper.mpmath(n, spread, 1) - (1 - e)) < mpmath.mpf(10) ** (5 - DIGITS)


@settings(max_examples=30)
@given(n=st.integers(2, 200), s=st.floats(0.05, 3), delta=st.floats(0, 5))
def test_length_scaled_spike_matches_softmax(n: int, s: float, delta: float) -> None:
    with mpmath.workdps(DIGITS):
        beta = mpmath.mpf(s) * mpmath.log(n)
        top = softmax([beta * delta] + [mpmath.mpf(0)] * (n - 1))[0]
        assert abs(top - length_scaled_spike_max.mpmath(n, s, delta)) < mpmath.mpf(10) ** (
            5 - DIGITS
        )


@settings(max_examples=30)
@given(
    n=st.integers(2, 50),
    s=st.floats(0.05, 3),
    gap_value=st.floats(0, 5),
    others=st.lists(st.floats(0, 1), min_size=49, max_size=49),
)
def test_gap_floor_holds(n: int, s: float, gap_value: float, others: list[float]) -> None:
    with mpmath.workdps(DIGITS):
        beta = mpmath.mpf(s) * mpmath.log(n)
        logits = [mpmath.mpf(0)] + [-gap_value - x for x in others[: n - 1]]
        top = softmax([beta * x for x in logits])[0]
        assert top >= length_scaled_gap_bound.mpmath(n, s, gap_value) * (1 - mpmath.mpf(10) ** -40)


def test_length_scaling_regimes_at_large_n() -> None:
    with mpmath.workdps(DIGITS):
        big = mpmath.mpf(10) ** 18
        assert length_scaled_spike_max.mpmath(big, 1.5, 1) > 0.999
        assert abs(length_scaled_spike_max.mpmath(big, 1, 1) - 0.5) < 1e-15
        assert length_scaled_spike_max.mpmath(big, 0.5, 1) < 1e-8


def reference_rule_beta(entropy: float) -> float:
    """The paper's rule written out independently, in Horner form."""
    value = (((-0.037 * entropy + 0.481) * entropy - 2.3) * entropy + 4.917) * entropy - 1.791
    return max(value, 1.0) if entropy > 0.5 else 1.0


@pytest.mark.parametrize("entropy", [0.0, 0.5, 0.7, 0.9, 2.0, 4.4124, 5.9, 6.0, 9.0])
def test_adaptive_inverse_temperature_matches_the_rule(entropy: float) -> None:
    beta = FORMULAS["adaptive_inverse_temperature"].numpy(entropy)
    assert math.isclose(float(beta), reference_rule_beta(entropy), rel_tol=1e-12)


def test_adaptive_constants_to_ten_digits() -> None:
    digits = adaptive_constants().digits(10)
    assert digits["sharpening_starts"] == "0.8485819960"
    assert digits["sharpening_ends"] == "5.944520828"
    assert digits["max_inverse_temperature"] == "2.421387707"
    assert digits["peak_entropy"] == "4.412401866"
    grid = np.linspace(0, 10, 100001)
    assert max(reference_rule_beta(h) for h in grid) <= 2.421387707 + 1e-9


def test_every_formula_exports_latex_numpy_and_mpmath() -> None:
    for formula in FORMULAS.values():
        assert formula.latex
        assert callable(formula.numpy) and callable(formula.mpmath)
