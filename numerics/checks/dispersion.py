"""T1 and T2: the tight bounds and the paper's form, checked on a logit sequence."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from softmax_dispersion.numerics._backends import Backend, backend
from softmax_dispersion.numerics.ball_formulas import (
    ball_enclosure,
    ball_value,
)
from softmax_dispersion.numerics.checks._common import (
    DISPERSION_BOUNDS,
    Bound,
    Side,
    Verdict,
    ball_of,
    compare_to_bound,
    enclosure_dict,
    engine_runs,
    extra_bits,
    extremes,
    fraction_dict,
    overall_verdict,
    precision_rungs,
)
from softmax_dispersion.numerics.evaluate import (
    DEFAULT_MAX_PRECISION,
    Enclosure,
)
from softmax_dispersion.numerics.sequence import LogitSequence
from softmax_dispersion.theory.formulas import Formula, exact_value

if TYPE_CHECKING:
    import sympy as sp


@dataclass(frozen=True)
class BoundCheck:
    """One bound against the coefficient it bounds.

    Attributes
    ----------
    label : str
        E.g. ``"T1 upper"``.
    formula : str
        The theory formula's name (or the expression).
    side : str
        ``"upper"`` (bounds ``p_max``) or ``"lower"`` (bounds ``p_min``).
    coefficient : Enclosure
        The certified enclosure of ``p_max`` or ``p_min``.
    bound : Enclosure
        The certified enclosure of the bound.
    slack : Enclosure
        ``bound − p_max`` (upper) or ``p_min − bound`` (lower): nonnegative iff it holds.
    verdict : str
        ``"holds"``, ``"attained"``, ``"violated"`` or ``"undecided"``.
    """

    label: str
    formula: str
    side: Side
    coefficient: Enclosure
    bound: Enclosure
    slack: Enclosure
    verdict: Verdict

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: enclosures as 40-digit outward-rounded decimal strings."""
        return {
            "label": self.label,
            "formula": self.formula,
            "side": self.side,
            "coefficient": enclosure_dict(self.coefficient),
            "bound": enclosure_dict(self.bound),
            "slack": enclosure_dict(self.slack),
            "verdict": self.verdict,
        }


@dataclass(frozen=True)
class DispersionCheck:
    """T1 and T2 on one finite sequence (see :func:`check_dispersion`)."""

    n: int
    theta: Fraction
    maximum: float
    minimum: float
    spread: Fraction
    p_max: Enclosure
    p_min: Enclosure
    bounds: tuple[BoundCheck, ...]
    engine: str
    precision: int
    """The engine's working precision on the last rung of the ladder, in bits."""

    @property
    def verdict(self) -> Verdict:
        """``violated`` if any bound is, else ``undecided``, ``attained`` or ``holds``."""
        return overall_verdict(check.verdict for check in self.bounds)

    @property
    def violated(self) -> bool:
        """Whether some bound is certainly violated."""
        return self.verdict == "violated"

    def bound(self, label: str) -> BoundCheck:
        """The check of the bound labelled ``label`` (e.g. ``"T1 upper"``)."""
        for check in self.bounds:
            if check.label == label:
                return check
        raise KeyError(f"no bound {label!r}; checked: {[c.label for c in self.bounds]}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary."""
        return {
            "n": self.n,
            "theta": fraction_dict(self.theta),
            "maximum": repr(self.maximum),
            "minimum": repr(self.minimum),
            "spread": fraction_dict(self.spread),
            "p_max": enclosure_dict(self.p_max),
            "p_min": enclosure_dict(self.p_min),
            "bounds": [check.to_dict() for check in self.bounds],
            "verdict": self.verdict,
            "engine": self.engine,
            "precision": self.precision,
        }


def _formula_values(target: Formula | sp.Expr, values: dict[str, Any]) -> dict[str, Any]:
    names = (
        {str(a) for a in target.args}
        if isinstance(target, Formula)
        else {str(s) for s in target.free_symbols}
    )
    unknown = names - set(values)
    if unknown:
        raise ValueError(f"a bound may use only {sorted(values)}, not {sorted(unknown)}")
    return {name: values[name] for name in names}


def check_dispersion(
    sequence: LogitSequence,
    theta: object = 1,
    *,
    bounds: Sequence[Bound] = DISPERSION_BOUNDS,
    engine: str | None = None,
    precision: int = 128,
    max_precision: int = DEFAULT_MAX_PRECISION,
) -> DispersionCheck:
    """Check T1 (tight) and T2 (the paper's form) on a finite logit sequence, certified.

    Parameters
    ----------
    sequence
        The logits (finite: T1 needs bounded logits; for a masked row, check its visible
        part).
    theta
        Temperature ``θ > 0``, read exactly.
    bounds
        The bounds to check, each a formula in ``n``, ``delta``, ``theta`` with a side;
        T1 and T2 from the theory layer by default.  A wrong bound (e.g. ``c/(c+n)``)
        is reported violated on the spike.
    engine
        ``"arb"`` or ``"mpmath"`` (arb when installed).
    precision
        Working precision of the bounds in bits (plus what the size of ``δ/θ`` needs).
    max_precision
        Cap of the ladder: while a verdict is undecided (an enclosure too wide to
        decide), the engine is asked again at twice the precision, up to this cap.

    Returns
    -------
    DispersionCheck
        ``p_max``, ``p_min``, each bound's enclosure, slack and verdict, and the overall
        verdict.

    Raises
    ------
    ValueError
        For a non-finite sequence, ``θ <= 0`` or a bound using other symbols.

    Notes
    -----
    With the exact spread ``δ = max e − min e`` (a difference of binary64 values, in
    exact rationals) and ``c = exp(δ/θ)``, T1 is
    ``1/(1+(n−1)c) <= p_min <= p_max <= c/(c+n−1)`` and T2 is
    ``1/(nc) <= p_min <= p_max <= c/n``.  ``p_max`` is the coefficient of the largest
    logit, ``p_min`` of the smallest.

    Examples
    --------
    >>> from softmax_dispersion.numerics.families import spike
    >>> result = check_dispersion(spike(10**18, 5), engine="mpmath")
    >>> result.bound("T1 upper").verdict, result.bound("T2 upper").verdict
    ('attained', 'holds')
    >>> result.to_dict()["p_max"]["lower"]
    '1.484131591025765815430629327562553563913e-16'
    """
    if not isinstance(sequence, LogitSequence):
        raise TypeError(f"sequence must be a LogitSequence, got {type(sequence).__name__}")
    if not sequence.is_finite:
        raise ValueError(
            "sequence must be finite: T1 needs bounded logits (check a masked row's "
            "visible part instead)"
        )
    exact_theta = exact_value("theta", theta)
    spread = Fraction(sequence.maximum) - Fraction(sequence.minimum)
    values = {"n": sequence.n, "delta": spread, "theta": exact_theta}
    extra = extra_bits(spread / exact_theta)
    bk = backend(engine)
    for rung in precision_rungs(precision + extra, max_precision, spread / exact_theta):
        runs, engine_name, used = engine_runs(sequence, exact_theta, engine, rung)
        p_max, p_min = extremes(runs)
        bits = max(precision + extra, rung or 0) + 32
        checks = _bound_checks(bk, bounds, values, p_max, p_min, bits)
        if all(check.verdict != "undecided" for check in checks):
            break
    return DispersionCheck(
        sequence.n,
        exact_theta,
        sequence.maximum,
        sequence.minimum,
        spread,
        p_max,
        p_min,
        checks,
        engine_name,
        used,
    )


def _bound_checks(
    bk: Backend,
    bounds: Sequence[Bound],
    values: dict[str, Any],
    p_max: Enclosure,
    p_min: Enclosure,
    bits: int,
) -> tuple[BoundCheck, ...]:
    checks = []
    with bk.working_precision(bits):
        for spec in bounds:
            ball = ball_value(spec.formula, bk, **_formula_values(spec.formula, values))
            coefficient = p_max if spec.side == "upper" else p_min
            p = ball_of(bk, coefficient)
            slack = ball - p if spec.side == "upper" else p - ball
            checks.append(
                BoundCheck(
                    spec.label,
                    spec.formula_name,
                    spec.side,
                    coefficient,
                    ball_enclosure(bk, ball),
                    ball_enclosure(bk, slack),
                    compare_to_bound(bk, coefficient, ball, spec.side),
                )
            )
    return tuple(checks)
