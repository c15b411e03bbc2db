"""T10: length scaling β = s·log n on the spike, its three regimes certified."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from softmax_dispersion.numerics import _dyadic
from softmax_dispersion.numerics._backends import backend
from softmax_dispersion.numerics.ball_formulas import (
    ball_enclosure,
    ball_value,
)
from softmax_dispersion.numerics.checks._common import (
    DEFAULT_SIZES,
    Verdict,
    ball_of,
    check_sizes,
    compare_to_bound,
    enclosure_dict,
    engine_runs,
    exact_spike,
    extra_bits,
    extremes,
    fraction_dict,
    precision_rungs,
)
from softmax_dispersion.numerics.evaluate import (
    DEFAULT_MAX_PRECISION,
    Enclosure,
)
from softmax_dispersion.theory.formulas import exact_value
from softmax_dispersion.theory.length_scaling import length_scaled_spike_max

Agreement = Literal["agrees", "disagrees", "undecided"]


@dataclass(frozen=True)
class LengthScalingRow:
    """The spike at one size under ``β = s·log n``.

    ``verdict`` is ``"agrees"`` when the engine's enclosure and the formula's overlap
    and both are tight, ``"disagrees"`` when they are certainly apart.
    """

    n: int
    p_max: Enclosure
    formula: Enclosure
    verdict: Agreement
    distance_to_limit: Enclosure

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "n": self.n,
            "p_max": enclosure_dict(self.p_max),
            "formula": enclosure_dict(self.formula),
            "verdict": self.verdict,
            "distance_to_limit": enclosure_dict(self.distance_to_limit),
        }


@dataclass(frozen=True)
class LengthScalingReport:
    """T10 on the spike for one ``(s, δ)`` (see :func:`length_scaling_regimes`).

    Attributes
    ----------
    product : Fraction
        ``sδ``, which decides the regime.
    regime : str
        ``"sδ > 1"``, ``"sδ = 1"`` or ``"sδ < 1"``.
    limit : Fraction
        ``lim p_max`` as ``n → ∞`` (sympy's limit of the theory's formula): 1, 1/2, 0.
    rows : tuple of LengthScalingRow
        The certified top coefficient against the formula at each size.
    """

    s: Fraction
    delta: Fraction
    product: Fraction
    regime: str
    limit: Fraction
    rows: tuple[LengthScalingRow, ...]
    engine: str

    @property
    def agrees(self) -> bool:
        """Whether the engine's value and the formula agree (overlap, tight) at every size."""
        return all(row.verdict == "agrees" for row in self.rows)

    @property
    def approaches_limit(self) -> bool:
        """Whether the largest size is certainly closer to the limit than the smallest."""
        first, last = self.rows[0].distance_to_limit, self.rows[-1].distance_to_limit
        return _dyadic.compare(last.upper, first.lower) < 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "s": fraction_dict(self.s),
            "delta": fraction_dict(self.delta),
            "product": fraction_dict(self.product),
            "regime": self.regime,
            "limit": fraction_dict(self.limit),
            "rows": [row.to_dict() for row in self.rows],
            "agrees": self.agrees,
            "approaches_limit": self.approaches_limit,
            "engine": self.engine,
        }


def _agreement(verdict: Verdict) -> Agreement:
    """A bound's verdict read as agreement with a value (the formula is the value)."""
    if verdict == "attained":
        return "agrees"
    return "undecided" if verdict == "undecided" else "disagrees"


def _limit(s: Fraction, delta: Fraction) -> Fraction:
    import sympy as sp

    from softmax_dispersion.theory.symbols import delta as delta_symbol
    from softmax_dispersion.theory.symbols import n as n_symbol
    from softmax_dispersion.theory.symbols import s as s_symbol

    expr = length_scaled_spike_max.expr.xreplace(
        {
            s_symbol: sp.Rational(s.numerator, s.denominator),
            delta_symbol: sp.Rational(delta.numerator, delta.denominator),
        }
    )
    value = sp.limit(expr, n_symbol, sp.oo)
    return Fraction(int(value.p), int(value.q))


def length_scaling_regimes(
    s: object,
    delta: object,
    sizes: Iterable[int] = DEFAULT_SIZES,
    *,
    engine: str | None = None,
    precision: int = 128,
    max_precision: int = DEFAULT_MAX_PRECISION,
) -> LengthScalingReport:
    """T10: the spike's top coefficient under ``β = s·log n``, certified, at each size.

    Parameters
    ----------
    s
        The length-scaling coefficient ``s > 0``.
    delta
        The spike's spread ``δ >= 0``.
    sizes
        Row lengths (integers >= 1; up to ``10**18`` and beyond: the spike is two runs).
    engine
        ``"arb"`` or ``"mpmath"``.
    precision
        Working precision of the formula, in bits.
    max_precision
        Cap of the precision ladder (climbed while a size is undecided).

    Returns
    -------
    LengthScalingReport
        Per size the engine's enclosure (``certified_softmax(..., s=s)``), the theory's
        ``length_scaled_spike_max`` and their agreement; the regime and its limit.

    Notes
    -----
    ``p_max = n^{sδ}/(n^{sδ} + n − 1)``, which tends to 1, 1/2 or 0 as ``sδ > 1``,
    ``= 1`` or ``< 1``: length scaling escapes dispersion only when ``sδ >= 1``.

    Examples
    --------
    >>> report = length_scaling_regimes(1, 1, sizes=(10, 10**18), engine="mpmath")
    >>> report.regime, report.limit, report.agrees, report.approaches_limit
    ('sδ = 1', Fraction(1, 2), True, True)
    """
    exact_s = exact_value("s", s)
    exact_delta = exact_value("delta", delta)
    chosen = check_sizes(sizes)
    product = exact_s * exact_delta
    regime = "sδ > 1" if product > 1 else ("sδ = 1" if product == 1 else "sδ < 1")
    limit = _limit(exact_s, exact_delta)
    bk = backend(engine)
    rows = []
    for n in chosen:
        row, row_theta = exact_spike(n, exact_delta, Fraction(1))
        extra = extra_bits(product * n.bit_length())
        for rung in precision_rungs(precision + extra, max_precision):
            top = extremes(engine_runs(row, row_theta, engine, rung, s=exact_s)[0])[0]
            with bk.working_precision(max(precision + extra, rung or 0) + 32):
                ball = ball_value(length_scaled_spike_max, bk, n=n, s=exact_s, delta=exact_delta)
                verdict = _agreement(compare_to_bound(bk, top, ball, "upper"))
                distance = abs(ball_of(bk, top) - bk.number(limit))
                result = LengthScalingRow(
                    n, top, ball_enclosure(bk, ball), verdict, ball_enclosure(bk, distance)
                )
            if verdict != "undecided":
                break
        rows.append(result)
    return LengthScalingReport(exact_s, exact_delta, product, regime, limit, tuple(rows), bk.name)
