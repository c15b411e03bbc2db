"""Adversarial search for a logit vector that beats T1's upper bound (it must fail).

:func:`adversarial_search` runs coordinate ascent, in high-precision arithmetic, over
dense logit vectors with entries in ``[0, δ]``, maximising the largest softmax
coefficient.  T1 says no admissible vector exceeds ``c/(c+n−1)`` and only the spike
attains it; the search is an independent, black-box attempt to find a counterexample,
and its best vector is certified with :func:`~softmax_dispersion.numerics.evaluate.
certified_softmax` against the theory's ``dispersion_upper``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from softmax_dispersion.numerics._backends import backend
from softmax_dispersion.numerics.ball_formulas import ball_enclosure, ball_value
from softmax_dispersion.numerics.checks._common import (
    Verdict,
    compare_to_bound,
    enclosure_dict,
    engine_runs,
    resolution_bits,
)
from softmax_dispersion.numerics.evaluate import DEFAULT_MAX_PRECISION, Enclosure
from softmax_dispersion.numerics.sequence import LogitSequence
from softmax_dispersion.theory.dispersion import dispersion_upper
from softmax_dispersion.theory.formulas import exact_value

__all__ = ["MAX_SEARCH_N", "SearchResult", "adversarial_search"]

MAX_SEARCH_N = 1024
"""The largest ``n`` searched (each sweep costs ``O(n²)`` high-precision operations)."""


@dataclass(frozen=True)
class SearchResult:
    """The outcome of :func:`adversarial_search`.

    Attributes
    ----------
    n, delta, theta
        The search space: ``n`` logits in ``[0, δ]`` at temperature ``θ``.
    logits : tuple of float
        The best vector found.
    coefficient : Enclosure
        Its largest coefficient, certified.
    bound : Enclosure
        T1's upper bound ``c/(c+n−1)``, certified.
    verdict : str
        ``coefficient`` against ``bound``: ``"attained"``, ``"holds"`` (strictly below)
        or ``"violated"`` (a counterexample to T1; never expected).
    is_spike : bool
        Whether the best vector is, up to permutation, one logit at ``δ`` and the rest
        at 0 (always, for ``n = 1``: every single logit has coefficient 1).
    starts, sweeps : int
        Random starts run and coordinate sweeps made in all.
    """

    n: int
    delta: Fraction
    theta: Fraction
    logits: tuple[float, ...]
    coefficient: Enclosure
    bound: Enclosure
    verdict: Verdict
    is_spike: bool
    starts: int
    sweeps: int

    @property
    def exceeded(self) -> bool:
        """Whether the search found a vector certainly above the bound."""
        return self.verdict == "violated"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (the vector as exact float reprs)."""
        return {
            "n": self.n,
            "delta": str(self.delta),
            "theta": str(self.theta),
            "logits": [repr(v) for v in self.logits],
            "coefficient": enclosure_dict(self.coefficient),
            "bound": enclosure_dict(self.bound),
            "verdict": self.verdict,
            "exceeded": self.exceeded,
            "is_spike": self.is_spike,
            "starts": self.starts,
            "sweeps": self.sweeps,
        }


def _box_top(delta: Fraction) -> float:
    """The largest binary64 value <= δ (the box ``[0, top]`` lies inside ``[0, δ]``)."""
    top = float(delta)
    if Fraction(top) > delta:
        top = math.nextafter(top, 0.0)
    return top


def _ascend(
    ctx: Any, start: list[float], grid: list[float], theta: Fraction, max_sweeps: int
) -> tuple[list[float], int]:
    """Coordinate ascent from ``start``; returns the local optimum and the sweeps made."""
    beta = ctx.mpf(theta.denominator) / theta.numerator
    weight = {v: ctx.exp(ctx.mpf(v) * beta) for v in {*grid, *start}}
    logits = list(start)
    terms = [weight[v] for v in logits]
    total = ctx.fsum(terms)
    sweeps = 0
    for sweeps in range(1, max_sweeps + 1):  # noqa: B007 (the count is returned)
        improved = False
        for i in range(len(logits)):
            others = total - terms[i]
            rest = max((t for j, t in enumerate(terms) if j != i), default=ctx.zero)
            current = max(rest, terms[i]) / total
            best_value, best = logits[i], current
            for value in grid:
                t = weight[value]
                objective = max(rest, t) / (others + t)
                if objective > best:
                    best_value, best = value, objective
            if best_value != logits[i]:
                logits[i] = best_value
                terms[i] = weight[best_value]
                total = ctx.fsum(terms)
                improved = True
        if not improved:
            break
    return logits, sweeps


def _objective(ctx: Any, logits: list[float], theta: Fraction) -> Any:
    beta = ctx.mpf(theta.denominator) / theta.numerator
    terms = [ctx.exp(ctx.mpf(v) * beta) for v in logits]
    return max(terms) / ctx.fsum(terms)


def adversarial_search(
    n: int,
    delta: object,
    theta: object = 1,
    *,
    starts: int = 4,
    seed: int | None = 0,
    precision: int = 128,
    grid: int = 8,
    max_sweeps: int = 50,
    engine: str | None = None,
) -> SearchResult:
    """Try to exceed T1's upper bound by coordinate ascent over logits in ``[0, δ]``.

    Parameters
    ----------
    n
        Number of logits, ``1 <= n <=`` :data:`MAX_SEARCH_N`.
    delta
        The box ``[0, δ]`` the logits range over (``δ >= 0``).
    theta
        Temperature ``θ > 0``.
    starts
        Random starting vectors (uniform in the box), at least 1.
    seed
        Seed of the starts.
    precision
        Bits of the mpmath context the ascent computes in, on top of the bits it takes
        to compare coefficients near 1 (``log2 exp(δ/θ)``) and to tell ``exp(δ/θ)`` from
        1 (``log2(θ/δ)`` for tiny ``δ/θ``) (a private
        context: the global precision is untouched).  The best vector is certified at
        the same precision.
    grid
        Each coordinate step tries ``grid + 1`` equally spaced values of ``[0, δ]``
        (both ends included) and keeps the best.
    max_sweeps
        Cap on the sweeps over all coordinates per start.
    engine
        The engine that certifies the best vector.

    Returns
    -------
    SearchResult
        The best vector, its certified largest coefficient, the certified bound, the
        verdict and whether the vector is the spike.

    Raises
    ------
    ValueError
        For arguments out of range, each naming the argument.

    Notes
    -----
    The objective is ``max_k p_k = max_k exp(e_k/θ) / Σ_j exp(e_j/θ)``.  With the other
    coordinates fixed it is quasi-convex in ``e_i`` (falling while ``e_i`` is not the
    largest, then rising), so each coordinate step ends at ``0`` or ``δ``: the ascent
    reaches the spike ``(δ, 0, …, 0)``, whose value ``c/(c+n−1)`` (``c = exp(δ/θ)``) is
    T1's bound.  The ascent assumes nothing of the sort: it compares grid values.

    Examples
    --------
    >>> result = adversarial_search(8, 3, engine="mpmath")
    >>> result.is_spike, result.verdict, result.exceeded
    (True, 'attained', False)
    >>> sorted(result.logits)[-2:]
    [0.0, 3.0]
    """
    for name, value, low in (
        ("starts", starts, 1),
        ("grid", grid, 1),
        ("max_sweeps", max_sweeps, 1),
        ("precision", precision, 53),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_SEARCH_N:
        raise ValueError(f"n must be an integer with 1 <= n <= {MAX_SEARCH_N}, got {n!r}")
    exact_delta = exact_value("delta", delta)
    exact_theta = exact_value("theta", theta)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ValueError(f"seed must be an integer or None, got {seed!r}")
    import mpmath

    # Resolve 1 − p next to p ≈ 1 (large δ/θ), and exp(δ/θ) − 1 next to 1 (tiny δ/θ).
    bits = precision + resolution_bits(exact_delta / exact_theta) + n.bit_length()
    if bits > DEFAULT_MAX_PRECISION:
        raise ValueError(
            f"delta/theta = {float(exact_delta / exact_theta):g} needs {bits} bits to compare "
            f"the coefficients, beyond {DEFAULT_MAX_PRECISION}"
        )
    ctx = mpmath.MPContext()
    ctx.prec = bits
    top = _box_top(exact_delta)
    values = sorted({0.0, top, *(top * k / grid for k in range(1, grid))})
    rng = np.random.default_rng(seed)
    best: list[float] | None = None
    best_value = None
    total_sweeps = 0
    for _ in range(starts):
        start = [float(v) for v in rng.uniform(0.0, top, n)] if top > 0 else [0.0] * n
        logits, sweeps = _ascend(ctx, start, values, exact_theta, max_sweeps)
        total_sweeps += sweeps
        value = _objective(ctx, logits, exact_theta)
        if best_value is None or value > best_value:
            best, best_value = logits, value
    assert best is not None
    sequence = LogitSequence.from_array(np.array(best))
    runs = engine_runs(sequence, exact_theta, engine, None if bits <= precision + 64 else bits)[0]
    coefficient = max(runs, key=lambda run: run.logit).enclosure
    bk = backend(engine)
    with bk.working_precision(bits + 32):
        ball = ball_value(dispersion_upper, bk, n=n, delta=exact_delta, theta=exact_theta)
        bound = ball_enclosure(bk, ball)
        verdict = compare_to_bound(bk, coefficient, ball, "upper")
    spike_shape = n == 1 or sorted(best) == [0.0] * (n - 1) + [top]
    return SearchResult(
        n,
        exact_delta,
        exact_theta,
        tuple(best),
        coefficient,
        bound,
        verdict,
        spike_shape,
        starts,
        total_sweeps,
    )
