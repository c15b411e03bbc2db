"""T4: the dispersion size n*(ε), certified on the spike."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from softmax_dispersion.numerics._backends import Backend, backend
from softmax_dispersion.numerics.ball_formulas import (
    ball_enclosure,
    ball_value,
)
from softmax_dispersion.numerics.checks._common import (
    Verdict,
    compare_to_bound,
    dyadic_floor,
    enclosure_dict,
    engine_runs,
    exact_spike,
    extremes,
    fraction_dict,
    precision_rungs,
)
from softmax_dispersion.numerics.evaluate import (
    DEFAULT_MAX_PRECISION,
    Enclosure,
    PrecisionError,
)
from softmax_dispersion.theory.dispersion_size import dispersion_size
from softmax_dispersion.theory.formulas import exact_value


@dataclass(frozen=True)
class DispersionSizeCheck:
    """T4 at one ``(ε, δ, θ)`` (see :func:`check_dispersion_size`).

    Attributes
    ----------
    n_star : Enclosure
        ``n*(ε) = 1 + c(1−ε)/ε``.
    size : int
        ``⌈n*⌉``, the least size at which no coefficient can exceed ε.
    at_size : Enclosure
        The spike's top coefficient at ``n = size``.
    below_size : Enclosure
        The spike's top coefficient at ``n = size − 1``.
    at_size_verdict : str
        ``at_size`` against ε as an upper bound (``holds`` or ``attained``, when ``n*``
        is an integer, are what T4 says).
    exceeds_below : bool
        Whether ``below_size > ε`` is certified.
    """

    epsilon: Fraction
    delta: Fraction
    theta: Fraction
    n_star: Enclosure
    size: int
    at_size: Enclosure
    below_size: Enclosure
    at_size_verdict: Verdict
    exceeds_below: bool
    engine: str

    @property
    def verified(self) -> bool:
        """Whether both halves of T4 are certified at this ``(ε, δ, θ)``."""
        return self.at_size_verdict in ("holds", "attained") and self.exceeds_below

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary."""
        return {
            "epsilon": fraction_dict(self.epsilon),
            "delta": fraction_dict(self.delta),
            "theta": fraction_dict(self.theta),
            "n_star": enclosure_dict(self.n_star),
            "size": self.size,
            "at_size": enclosure_dict(self.at_size),
            "below_size": enclosure_dict(self.below_size),
            "at_size_verdict": self.at_size_verdict,
            "exceeds_below": self.exceeds_below,
            "verified": self.verified,
            "engine": self.engine,
        }


def _ceiling(
    bk: Backend,
    epsilon: Fraction,
    delta: Fraction,
    theta: Fraction,
    bits: int,
    max_precision: int,
) -> tuple[int, Enclosure, bool]:
    """``⌈n*⌉`` certified, ``n*``'s enclosure, and whether ``n*`` is an integer.

    ``n*`` is rational only for ``δ = 0`` (``exp`` of a nonzero rational is
    transcendental); then sympy's exact value decides, else a precision ladder
    separates ``n*`` from the integers.
    """
    import sympy as sp

    exact = dispersion_size(epsilon=epsilon, delta=delta, theta=theta)
    while True:
        with bk.working_precision(bits):
            ball = ball_value(dispersion_size, bk, epsilon=epsilon, delta=delta, theta=theta)
            enclosure = ball_enclosure(bk, ball)
        if exact.is_Rational:
            return int(sp.ceiling(exact)), enclosure, bool(exact.is_Integer)
        low, high = (dyadic_floor(end) for end in (enclosure.lower, enclosure.upper))
        if low == high:  # no integer inside, and n* is irrational: ⌈n*⌉ = ⌊n*⌋ + 1
            return low + 1, enclosure, False
        if bits * 2 > max_precision:
            raise PrecisionError(f"cannot separate n* from the integers at {bits} bits")
        bits *= 2


def check_dispersion_size(
    epsilon: object,
    delta: object,
    theta: object = 1,
    *,
    engine: str | None = None,
    precision: int = 128,
    max_precision: int = DEFAULT_MAX_PRECISION,
) -> DispersionSizeCheck:
    """Check T4: at ``n = ⌈n*(ε)⌉`` the spike's top coefficient is <= ε, one below it > ε.

    Parameters
    ----------
    epsilon
        The tolerance, ``0 < ε < 1``.
    delta
        The spread ``δ >= 0``.
    theta
        The temperature ``θ > 0``.
    engine
        ``"arb"`` or ``"mpmath"``.
    precision
        Working precision in bits, on top of the ``log2 n*`` bits it takes to tell the
        spike's coefficient at ``⌈n*⌉`` from ε.
    max_precision
        Cap of the precision ladder.

    Returns
    -------
    DispersionSizeCheck
        ``n*``, its ceiling and the two certified spike coefficients.

    Raises
    ------
    ValueError
        For parameters outside their domains, or ``n*`` too large to resolve within
        ``max_precision`` bits.

    Notes
    -----
    ``n*(ε) = 1 + c(1−ε)/ε`` with ``c = exp(δ/θ)`` (the theory's ``dispersion_size``).
    Since the spike attains T1's bound ``c/(c+n−1)``, which falls with ``n`` and equals
    ε at ``n*``, the spike is <= ε from ``⌈n*⌉`` on and > ε below.  For ``δ > 0``,
    ``n*`` is irrational and the spike at ``⌈n*⌉`` is strictly below ε; for ``δ = 0``
    ``n*`` is the rational ``1/ε`` and the uniform row attains ε when it is an integer.

    Examples
    --------
    >>> check = check_dispersion_size("0.01", 3, engine="mpmath")
    >>> check.size, check.at_size_verdict, check.verified
    (1990, 'holds', True)
    >>> check_dispersion_size("0.1", 0).at_size_verdict
    'attained'
    """
    exact_epsilon = exact_value("epsilon", epsilon)
    exact_delta = exact_value("delta", delta)
    exact_theta = exact_value("theta", theta)
    magnitude = float(exact_delta / exact_theta) / math.log(2) + math.log2(1 / exact_epsilon)
    start = precision + math.ceil(magnitude) + 8
    if start > max_precision:
        raise ValueError(
            f"delta/theta = {float(exact_delta / exact_theta):g} makes n* a number of about "
            f"{math.ceil(magnitude)} bits, beyond max_precision = {max_precision}"
        )
    bk = backend(engine)
    size, n_star, integral = _ceiling(
        bk, exact_epsilon, exact_delta, exact_theta, start, max_precision
    )
    rows = [exact_spike(n, exact_delta, exact_theta) for n in (size, size - 1)]
    for rung in precision_rungs(start, max_precision):
        (at_size, _), (below_size, _) = (
            extremes(engine_runs(row, row_theta, engine, rung)[0]) for row, row_theta in rows
        )
        with bk.working_precision(max(start, rung or 0)):
            eps_ball = bk.number(exact_epsilon)
            at_verdict = compare_to_bound(bk, at_size, eps_ball, "upper")
            below_verdict = compare_to_bound(bk, below_size, eps_ball, "lower")
        if at_verdict == "attained" and not integral:
            at_verdict = "undecided"  # irrational n*: the spike at ⌈n*⌉ is strictly below ε
        if at_verdict != "undecided" and below_verdict in ("holds", "violated"):
            break
    return DispersionSizeCheck(
        exact_epsilon,
        exact_delta,
        exact_theta,
        n_star,
        size,
        at_size,
        below_size,
        at_verdict,
        below_verdict == "holds",
        bk.name,
    )
