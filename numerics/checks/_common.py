"""What every certified check shares: verdicts, bounds, enclosure helpers, precision rungs."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal

from softmax_dispersion.numerics import _dyadic
from softmax_dispersion.numerics._backends import Backend
from softmax_dispersion.numerics.ball_formulas import (
    interval_ball,
)
from softmax_dispersion.numerics.evaluate import (
    DEFAULT_MAX_PRECISION,
    Enclosure,
    RunValue,
    certified_softmax,
)
from softmax_dispersion.numerics.families import spike
from softmax_dispersion.numerics.rounding import Dyadic
from softmax_dispersion.numerics.sequence import LogitSequence
from softmax_dispersion.theory.dispersion import (
    dispersion_lower,
    dispersion_upper,
    paper_lower,
    paper_upper,
)
from softmax_dispersion.theory.formulas import Formula

if TYPE_CHECKING:
    import sympy as sp


Verdict = Literal["holds", "attained", "violated", "undecided"]
Side = Literal["upper", "lower"]

DIGITS = 40
"""Significant digits of the decimal strings in ``to_dict()``."""
TIGHT_BITS = 64
"""Enclosures this tight (relative width ``<= 2**−64``) can certify attainment."""
DEFAULT_SIZES: tuple[int, ...] = (16, 1024, 2**20, 10**9, 10**12, 10**15, 10**18)
"""Row lengths for the size sweeps."""
ONE: Dyadic = (1, 0)


@dataclass(frozen=True)
class Bound:
    """A bound to check: a formula in ``n``, ``delta`` and ``theta``, and its side.

    ``side="upper"`` bounds the largest coefficient from above, ``"lower"`` the smallest
    from below.  The formula may use any subset of the three symbols.
    """

    label: str
    formula: Formula | sp.Expr
    side: Side

    @property
    def formula_name(self) -> str:
        """The theory formula's name, or the expression as text."""
        return self.formula.name if isinstance(self.formula, Formula) else str(self.formula)


DISPERSION_BOUNDS: tuple[Bound, ...] = (
    Bound("T1 upper", dispersion_upper, "upper"),
    Bound("T1 lower", dispersion_lower, "lower"),
    Bound("T2 upper", paper_upper, "upper"),
    Bound("T2 lower", paper_lower, "lower"),
)
"""T1's tight bounds and T2's (the paper's) bounds, from the theory layer."""


# ---------------------------------------------------------------------------------------
# Small helpers.


def enclosure_dict(enclosure: Enclosure, digits: int = DIGITS) -> dict[str, str]:
    """An enclosure as outward-rounded decimal strings of ``digits`` significant digits.

    Examples
    --------
    >>> enclosure_dict(Enclosure((1, -2), (3, -2)), digits=3)
    {'lower': '2.50e-1', 'upper': '7.50e-1'}
    """
    if enclosure.special is not None:
        return {"lower": str(enclosure.special), "upper": str(enclosure.special)}
    return {
        "lower": _dyadic.decimal_string(enclosure.lower, digits, "down"),
        "upper": _dyadic.decimal_string(enclosure.upper, digits, "up"),
    }


def fraction_dict(value: Fraction) -> dict[str, str]:
    numerator, denominator = value.numerator, value.denominator
    exact = f"{numerator}/{denominator}" if denominator != 1 else str(numerator)
    if denominator & (denominator - 1) == 0:  # dyadic: print it through the dyadic path
        decimal = _dyadic.decimal_string((numerator, 1 - denominator.bit_length()), DIGITS)
    else:
        decimal = _dyadic.decimal_string(
            (numerator * 2**200 // denominator, -200), DIGITS
        )  # display only
    return {"exact": exact, "decimal": decimal}


def ball_of(bk: Backend, enclosure: Enclosure) -> Any:
    return interval_ball(bk, enclosure.lower, enclosure.upper)


def extra_bits(*magnitudes: Fraction) -> int:
    """Bits an exponential of arguments this large needs beyond the target precision."""
    return max((math.ceil(abs(m)).bit_length() for m in magnitudes), default=0)


def is_exactly(bk: Backend, ball: Any, value: Dyadic) -> bool:
    lower, upper = bk.endpoints(ball)
    return _dyadic.compare(lower, value) == 0 and _dyadic.compare(upper, value) == 0


def compare_to_bound(bk: Backend, coefficient: Enclosure, bound: Any, side: Side) -> Verdict:
    """Compare a coefficient's enclosure with a bound's ball, from the enclosures only.

    ``side="upper"``: the bound should lie above the coefficient; ``"lower"``: below.
    Returns ``"violated"`` or ``"holds"`` when the enclosures are apart, ``"attained"``
    when they overlap and both are tight (relative width ``<= 2**−64``), else
    ``"undecided"``.  Call it inside the working precision the ball was made at.
    """
    low, high = bk.endpoints(bound)
    if side == "upper":
        if _dyadic.compare(coefficient.lower, high) > 0:
            return "violated"
        if _dyadic.compare(coefficient.upper, low) < 0:
            return "holds"
    else:
        if _dyadic.compare(coefficient.upper, low) < 0:
            return "violated"
        if _dyadic.compare(coefficient.lower, high) > 0:
            return "holds"
    tight = _dyadic.is_tight(coefficient.lower, coefficient.upper, TIGHT_BITS) and (
        _dyadic.is_tight(low, high, TIGHT_BITS) or _dyadic.compare(low, high) == 0
    )
    if tight or _exact_point(coefficient):
        return "attained"
    return "undecided"


def _exact_point(enclosure: Enclosure) -> bool:
    return _dyadic.compare(enclosure.lower, enclosure.upper) == 0


def overall_verdict(verdicts: Iterable[Verdict]) -> Verdict:
    found = set(verdicts)
    for verdict in ("violated", "undecided", "attained"):
        if verdict in found:
            return verdict
    return "holds"


def extremes(runs: Sequence[RunValue]) -> tuple[Enclosure, Enclosure]:
    """The enclosures of the largest and the smallest logit's coefficients."""
    top = max(runs, key=lambda run: run.logit)
    bottom = min(runs, key=lambda run: run.logit)
    return top.enclosure, bottom.enclosure


def engine_runs(
    sequence: LogitSequence,
    theta: Fraction,
    engine: str | None,
    bits: int | None = None,
    s: Fraction | None = None,
) -> tuple[tuple[RunValue, ...], str, int]:
    """The engine's per-run enclosures of softmax, its name and the precision used.

    ``bits=None`` asks :func:`certified_softmax` itself (its starting precision);
    a precision ladder asks the same engine for one evaluation at ``bits``.
    """
    evaluation = certified_softmax(
        sequence,
        theta=theta,
        s=s,
        format=None,
        engine=engine,
        precision=bits,
        max_precision=max(bits or 0, DEFAULT_MAX_PRECISION),
    )
    return evaluation.runs, evaluation.engine, evaluation.precision


def resolution_bits(ratio: Fraction) -> int:
    """Bits beyond the target precision that coefficients at ``δ/θ = ratio`` need.

    Large ``δ/θ`` puts the top coefficient within ``exp(−δ/θ)`` of 1, tiny ``δ/θ``
    puts every coefficient within ``δ/θ`` of ``1/n``: telling a bound's value from a
    coefficient's takes about ``log2 exp(δ/θ)`` or ``log2(θ/δ)`` more bits.

    Examples
    --------
    >>> [resolution_bits(Fraction(r)) for r in (5, 200, Fraction(1, 2**100))]
    [8, 289, 100]
    """
    if ratio <= 0:
        return 0
    if ratio >= 10**6:
        return 1 << 40  # beyond any cap: the ladder starts from the engine's own precision
    large = math.ceil(float(ratio) * math.log2(math.e))
    tiny = ratio.denominator.bit_length() - ratio.numerator.bit_length()
    return max(large, tiny, 0)


def precision_rungs(
    precision: int, max_precision: int, scale: Fraction = Fraction(0)
) -> Iterator[int | None]:
    """The engine precisions of a ladder, doubling up to ``max_precision``.

    The first rung is the engine's own starting precision (None) when ``δ/θ = scale``
    is moderate, else ``precision`` plus :func:`resolution_bits` (unless that exceeds
    the cap, when the ladder starts from the engine's own precision).
    """
    needed = resolution_bits(scale)
    if needed <= 64 or precision + needed > max_precision:
        yield None
        bits = precision
    else:
        bits = precision + needed
    while bits <= max_precision:
        yield bits
        bits *= 2


def exact_spike(n: int, delta: Fraction, theta: Fraction) -> tuple[LogitSequence, Fraction]:
    """A spike whose ``δ/θ`` equals ``delta/theta`` exactly, and the temperature to use.

    When ``delta`` is a binary64 number the spike is ``(0, delta)`` at ``theta``;
    otherwise its top logit is 1 and the temperature ``theta/delta``, so that
    ``softmax_θ'`` of the returned row is exactly the spike of spread ``δ`` at ``θ``.

    Examples
    --------
    >>> exact_spike(4, Fraction(5, 2), Fraction(1))
    (LogitSequence(values=(0.0, 2.5), counts=(3, 1)), Fraction(1, 1))
    >>> exact_spike(4, Fraction(1, 10), Fraction(1))[1]
    Fraction(10, 1)
    """
    if delta == 0 or Fraction(float(delta)) == delta:
        return spike(n, float(delta)), theta
    return spike(n, 1.0), theta / delta


def dyadic_floor(value: Dyadic) -> int:
    """The integer part (floor) of a non-negative dyadic number."""
    mantissa, exponent = value
    return mantissa << exponent if exponent >= 0 else mantissa >> -exponent


def check_sizes(sizes: Iterable[int]) -> tuple[int, ...]:
    """The sizes of a sweep as a tuple, each an integer >= 1 (a ValueError names a bad one)."""
    chosen = tuple(sizes)
    if not chosen:
        raise ValueError("sizes must name at least one size")
    for n in chosen:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"sizes must be integers >= 1, got {n!r}")
    return chosen
