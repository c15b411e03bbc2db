"""T13's prediction: the band formulas, their quadrature, and their coverage.

The coverage test draws sets from the task's distribution and computes the exact top
weight of a known logit map: at most a fraction η may fall outside the band.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from softmax_dispersion.empirical.logit_function import LogitFunction  # noqa: E402
from softmax_dispersion.empirical.typical import TypicalSetLaw  # noqa: E402
from softmax_dispersion.theory.typical_sets import (  # noqa: E402
    bernstein_radius,
    typical_band_lower,
    typical_band_upper,
    typical_mean_field,
)


@given(
    n=st.integers(2, 10**6),
    variance=st.floats(0, 1),
    bound=st.floats(0.01, 10),
    eta=st.floats(1e-6, 0.99),
)
def test_bernsteins_radius_is_the_root_of_its_quadratic(
    n: int, variance: float, bound: float, eta: float
) -> None:
    r = float(bernstein_radius.numpy(n, variance, bound, eta))
    m, level = n - 1, math.log(2 / eta)
    with mpmath.workdps(40):
        # m r² = L (2σ² + 2 b r / 3), the equality case of Bernstein's tail bound
        lhs = mpmath.mpf(m) * mpmath.mpf(r) ** 2
        rhs = level * (2 * mpmath.mpf(variance) + 2 * mpmath.mpf(bound) * mpmath.mpf(r) / 3)
        assert abs(lhs - rhs) <= 1e-9 * max(float(rhs), 1e-300)
        tail = 2 * mpmath.exp(
            -m * mpmath.mpf(r) ** 2 / (2 * variance + 2 * bound * mpmath.mpf(r) / 3)
        )
        assert abs(tail - eta) <= 1e-8 * eta


@given(n=st.integers(2, 10**5), mean=st.floats(0, 1), radius=st.floats(0, 1))
def test_the_band_contains_the_mean_field_value(n: int, mean: float, radius: float) -> None:
    low = float(typical_band_lower.numpy(n, mean, radius))
    mid = float(typical_mean_field.numpy(n, mean))
    high = float(typical_band_upper.numpy(n, mean, radius))
    assert 0 < low <= mid <= high <= 1
    assert high == pytest.approx(1 / (1 + (n - 1) * max(mean - radius, 0.0)))


def _head(seed: int = 0, width: int = 6) -> LogitFunction:
    fn = LogitFunction.random(width=width, seed=seed)
    return fn


def _integral(
    fn: LogitFunction, t: float, c: int, beta: float, upper: float
) -> tuple[float, float]:
    """I and J by an independent quadrature (scipy's adaptive Gauss–Kronrod)."""
    from scipy import integrate

    top = beta * float(fn(t, c))

    def term(q: float, power: int) -> float:
        return float(np.mean(np.exp(power * (beta * fn(q, np.arange(10)) - top))))

    first = integrate.quad(term, 0, upper, args=(1,), limit=200, epsabs=0, epsrel=1e-9)[0]
    second = integrate.quad(term, 0, upper, args=(2,), limit=200, epsabs=0, epsrel=1e-9)[0]
    return first / upper, second / upper


@pytest.mark.parametrize(
    ("t", "lead", "beta"), [(0.97, 0.0, 1.0), (0.6, 0.0, 3.0), (0.9, 0.3, 1.0)]
)
def test_the_quadrature_matches_an_independent_integral(t: float, lead: float, beta: float) -> None:
    pytest.importorskip("scipy")
    fn = _head(seed=1)
    law = TypicalSetLaw(fn)
    band = law.band(np.array([t]), np.array([2]), n=64, beta=beta, eta=0.05, lead=lead)
    mean, second = _integral(fn, t, 2, beta, t - lead)
    assert float(band.mean[0]) == pytest.approx(mean, rel=1e-6)
    assert float(band.mean_field[0]) == pytest.approx(1 / (1 + 63 * mean), rel=1e-6)
    radius = float(bernstein_radius.numpy(64, max(second - mean**2, 0), float(band.bound[0]), 0.05))
    assert float(band.lower[0]) == pytest.approx(1 / (1 + 63 * (mean + radius)), rel=1e-5)


def test_the_cumulative_integral_is_finite_past_the_first_grid_point() -> None:
    # At a sharp β the density of low priorities is far below the grid's largest; shifted
    # by that largest it underflowed to log 0 = -inf (a RuntimeWarning in the quick run).
    law = TypicalSetLaw(_head(seed=1))
    row_top = law.logits.max(axis=1)
    sharp = 1000.0 / (row_top.max() - row_top.min())  # exp(-1000) is 0 in float64
    with np.errstate(divide="raise", invalid="raise"):
        table = law._log_cumulative(sharp * law.logits)
    assert table[0] == -np.inf
    assert np.isfinite(table[1:]).all()
    assert (np.diff(table[1:]) >= 0).all()


@pytest.mark.parametrize(("n", "beta"), [(16, 1.0), (256, 2.0), (2048, 1.0)])
def test_typical_sets_fall_inside_the_band(n: int, beta: float) -> None:
    # Sets drawn as the task draws them; exact top weights of a known logit map.
    fn = _head(seed=2, width=8)
    law = TypicalSetLaw(fn)
    rng = np.random.default_rng(n)
    sets = 400
    priority = rng.random((sets, n))
    label = rng.integers(0, 10, (sets, n))
    logits = beta * fn(priority, label)
    top = priority.argmax(axis=1)
    weights = np.exp(logits - logits.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    measured = weights[np.arange(sets), top]
    band = law.band(
        priority[np.arange(sets), top], label[np.arange(sets), top], n=n, beta=beta, eta=0.05
    )
    assert band.outside(measured).mean() <= 0.05
    # The mean-field value is close to the typical top weight, not merely inside the band.
    assert np.median(np.abs(band.mean_field - measured)) < 0.1 * np.median(measured) + 0.02


def test_planted_bug_sharper_or_flatter_weights_leave_the_band() -> None:
    fn = _head(seed=2, width=8)
    law = TypicalSetLaw(fn)
    rng = np.random.default_rng(0)
    n, sets = 4096, 200
    priority, label = rng.random((sets, n)), rng.integers(0, 10, (sets, n))
    logits = 3.0 * fn(priority, label)  # a head at β = 3 …
    top = priority.argmax(axis=1)
    band = law.band(
        priority[np.arange(sets), top], label[np.arange(sets), top], n=n, beta=3.0, eta=0.05
    )

    def top_weight(scale: float) -> np.ndarray:
        z = scale * logits
        w = np.exp(z - z.max(axis=1, keepdims=True))
        return (w / w.sum(axis=1, keepdims=True))[np.arange(sets), top]

    assert band.outside(top_weight(1.0)).mean() <= 0.05
    # … whose weights are computed at β = 6 or β = 1.5 (scaled, flattened) or 1 (no β)
    for scale in (2.0, 0.5, 1 / 3):
        assert band.outside(top_weight(scale)).mean() > 0.5, scale


def test_t13_needs_a_top_item_and_others() -> None:
    with pytest.raises(ValueError, match="n >= 2"):
        TypicalSetLaw(_head(), grid=64).band(np.array([0.5]), np.array([0]), n=1, beta=1, eta=0.1)
