"""Certified checks of the theory's bounds on concrete logit sequences.

Each check evaluates softmax with :func:`~softmax_dispersion.numerics.evaluate.
certified_softmax` (the engine under test) and the bound with :func:`~softmax_dispersion.
numerics.formulas.ball_value` on the theory layer's own exported formula, both as exact
enclosures, and decides from the enclosures alone:

* **violated** only when the enclosures prove it (the coefficient lies entirely on the
  wrong side of the bound);
* **holds** when they prove the bound strictly;
* **attained** when the two enclosures overlap and both are tight (relative width at
  most ``2**−64``), as for the spike on T1's upper bound: equal to within the
  enclosures;
* **undecided** when they overlap but one is wide.

An undecided comparison sends the engine up a precision ladder (doubling, to a cap),
and the first rung already carries the bits that the size of ``δ/θ`` demands (see
:func:`resolution_bits`), so that "attained" is not an artefact of coefficients
crowding near 1 or near ``1/n``.  Results are small frozen dataclasses whose
``to_dict()`` renders every enclosure as decimal strings of 40 significant digits,
rounded outward.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal

from softmax_dispersion.numerics import _dyadic
from softmax_dispersion.numerics._backends import Backend, backend
from softmax_dispersion.numerics.evaluate import (
    DEFAULT_MAX_PRECISION,
    Enclosure,
    PrecisionError,
    RunValue,
    certified_softmax,
)
from softmax_dispersion.numerics.families import spike
from softmax_dispersion.numerics.formulas import (
    ball_enclosure,
    ball_value,
    certainly_greater,
    interval_ball,
)
from softmax_dispersion.numerics.rounding import Dyadic
from softmax_dispersion.numerics.sequence import LogitSequence
from softmax_dispersion.theory.adaptive_temperature import (
    ENTROPY_OFFSET,
    adaptive_constants,
    adaptive_inverse_temperature,
    p_j,
)
from softmax_dispersion.theory.dispersion import (
    dispersion_lower,
    dispersion_upper,
    paper_lower,
    paper_upper,
)
from softmax_dispersion.theory.dispersion_size import dispersion_size
from softmax_dispersion.theory.formulas import Formula, exact_value
from softmax_dispersion.theory.length_scaling import length_scaled_spike_max

if TYPE_CHECKING:
    import sympy as sp

__all__ = [
    "DEFAULT_SIZES",
    "DISPERSION_BOUNDS",
    "AdaptiveSpikeReport",
    "AdaptiveSpikeRow",
    "Bound",
    "BoundCheck",
    "DispersionCheck",
    "DispersionSizeCheck",
    "LengthScalingReport",
    "LengthScalingRow",
    "Verdict",
    "adaptive_on_spike",
    "check_dispersion",
    "check_dispersion_size",
    "compare_to_bound",
    "enclosure_dict",
    "exact_spike",
    "length_scaling_regimes",
    "resolution_bits",
]

Verdict = Literal["holds", "attained", "violated", "undecided"]
Side = Literal["upper", "lower"]

DIGITS = 40
"""Significant digits of the decimal strings in ``to_dict()``."""
TIGHT_BITS = 64
"""Enclosures this tight (relative width ``<= 2**−64``) can certify attainment."""
DEFAULT_SIZES: tuple[int, ...] = (16, 1024, 2**20, 10**9, 10**12, 10**15, 10**18)
"""Row lengths for the size sweeps."""
_ONE: Dyadic = (1, 0)


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


def _fraction_dict(value: Fraction) -> dict[str, str]:
    numerator, denominator = value.numerator, value.denominator
    exact = f"{numerator}/{denominator}" if denominator != 1 else str(numerator)
    if denominator & (denominator - 1) == 0:  # dyadic: print it through the dyadic path
        decimal = _dyadic.decimal_string((numerator, 1 - denominator.bit_length()), DIGITS)
    else:
        decimal = _dyadic.decimal_string(
            (numerator * 2**200 // denominator, -200), DIGITS
        )  # display only
    return {"exact": exact, "decimal": decimal}


def _ball(bk: Backend, enclosure: Enclosure) -> Any:
    return interval_ball(bk, enclosure.lower, enclosure.upper)


def _extra_bits(*magnitudes: Fraction) -> int:
    """Bits an exponential of arguments this large needs beyond the target precision."""
    return max((math.ceil(abs(m)).bit_length() for m in magnitudes), default=0)


def _is_exactly(bk: Backend, ball: Any, value: Dyadic) -> bool:
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


def _overall(verdicts: Iterable[Verdict]) -> Verdict:
    found = set(verdicts)
    for verdict in ("violated", "undecided", "attained"):
        if verdict in found:
            return verdict
    return "holds"


def _extremes(runs: Sequence[RunValue]) -> tuple[Enclosure, Enclosure]:
    """The enclosures of the largest and the smallest logit's coefficients."""
    top = max(runs, key=lambda run: run.logit)
    bottom = min(runs, key=lambda run: run.logit)
    return top.enclosure, bottom.enclosure


def _engine_runs(
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


def _rungs(
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


# ---------------------------------------------------------------------------------------
# (a) T1 and T2 on a sequence.


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
        return _overall(check.verdict for check in self.bounds)

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
            "theta": _fraction_dict(self.theta),
            "maximum": repr(self.maximum),
            "minimum": repr(self.minimum),
            "spread": _fraction_dict(self.spread),
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
    extra = _extra_bits(spread / exact_theta)
    bk = backend(engine)
    for rung in _rungs(precision + extra, max_precision, spread / exact_theta):
        runs, engine_name, used = _engine_runs(sequence, exact_theta, engine, rung)
        p_max, p_min = _extremes(runs)
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
            p = _ball(bk, coefficient)
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


# ---------------------------------------------------------------------------------------
# (b) T4: the dispersion size.


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
            "epsilon": _fraction_dict(self.epsilon),
            "delta": _fraction_dict(self.delta),
            "theta": _fraction_dict(self.theta),
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
        low, high = (_dyadic_floor(end) for end in (enclosure.lower, enclosure.upper))
        if low == high:  # no integer inside, and n* is irrational: ⌈n*⌉ = ⌊n*⌋ + 1
            return low + 1, enclosure, False
        if bits * 2 > max_precision:
            raise PrecisionError(f"cannot separate n* from the integers at {bits} bits")
        bits *= 2


def _dyadic_floor(value: Dyadic) -> int:
    mantissa, exponent = value
    return mantissa << exponent if exponent >= 0 else mantissa >> -exponent


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
    for rung in _rungs(start, max_precision):
        (at_size, _), (below_size, _) = (
            _extremes(_engine_runs(row, row_theta, engine, rung)[0]) for row, row_theta in rows
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


# ---------------------------------------------------------------------------------------
# (c) T10: length scaling.


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
            "s": _fraction_dict(self.s),
            "delta": _fraction_dict(self.delta),
            "product": _fraction_dict(self.product),
            "regime": self.regime,
            "limit": _fraction_dict(self.limit),
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


def _sizes(sizes: Iterable[int]) -> tuple[int, ...]:
    chosen = tuple(sizes)
    if not chosen:
        raise ValueError("sizes must name at least one size")
    for n in chosen:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"sizes must be integers >= 1, got {n!r}")
    return chosen


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
    chosen = _sizes(sizes)
    product = exact_s * exact_delta
    regime = "sδ > 1" if product > 1 else ("sδ = 1" if product == 1 else "sδ < 1")
    limit = _limit(exact_s, exact_delta)
    bk = backend(engine)
    rows = []
    for n in chosen:
        row, row_theta = exact_spike(n, exact_delta, Fraction(1))
        extra = _extra_bits(product * n.bit_length())
        for rung in _rungs(precision + extra, max_precision):
            top = _extremes(_engine_runs(row, row_theta, engine, rung, s=exact_s)[0])[0]
            with bk.working_precision(max(precision + extra, rung or 0) + 32):
                ball = ball_value(length_scaled_spike_max, bk, n=n, s=exact_s, delta=exact_delta)
                verdict = _agreement(compare_to_bound(bk, top, ball, "upper"))
                distance = abs(_ball(bk, top) - bk.number(limit))
                result = LengthScalingRow(
                    n, top, ball_enclosure(bk, ball), verdict, ball_enclosure(bk, distance)
                )
            if verdict != "undecided":
                break
        rows.append(result)
    return LengthScalingReport(exact_s, exact_delta, product, regime, limit, tuple(rows), bk.name)


# ---------------------------------------------------------------------------------------
# (d) T11: adaptive temperature on the spike.


@dataclass(frozen=True)
class AdaptiveSpikeRow:
    """The adaptive rule on the spike at one size.

    Attributes
    ----------
    log_n_minus_delta : Enclosure
        ``log n − δ``, the quantity T11's threshold is stated in.
    entropy : Enclosure
        The rule's entropy ``H = Σ −p_i log(p_i + 10⁻⁹)``.
    inverse_temperature : Enclosure
        ``β(H)`` from the theory's ``adaptive_inverse_temperature``.
    beta_is_one : bool
        Certified ``β = 1`` exactly.
    beta_above_one : bool
        Certified ``β > 1``.
    past_root : bool
        Certified ``H > r_high`` (the upper root of ``P − 1``), which makes ``β = 1``.
    past_threshold : bool
        Certified ``log n − δ > τ`` (T11's sufficient condition for ``β = 1``).
    sharpened_max : Enclosure
        The top coefficient of ``softmax(β e)``.
    sharpened_bound : Enclosure
        T1's bound with ``c = exp(β_max δ)`` (T11: adaptive temperature still disperses).
    bound_verdict : str
        ``sharpened_max`` against ``sharpened_bound``.
    """

    n: int
    log_n_minus_delta: Enclosure
    entropy: Enclosure
    inverse_temperature: Enclosure
    beta_is_one: bool
    beta_above_one: bool
    past_root: bool
    past_threshold: bool
    sharpened_max: Enclosure
    sharpened_bound: Enclosure
    bound_verdict: Verdict

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "n": self.n,
            "log_n_minus_delta": enclosure_dict(self.log_n_minus_delta),
            "entropy": enclosure_dict(self.entropy),
            "inverse_temperature": enclosure_dict(self.inverse_temperature),
            "beta_is_one": self.beta_is_one,
            "beta_above_one": self.beta_above_one,
            "past_root": self.past_root,
            "past_threshold": self.past_threshold,
            "sharpened_max": enclosure_dict(self.sharpened_max),
            "sharpened_bound": enclosure_dict(self.sharpened_bound),
            "bound_verdict": self.bound_verdict,
        }


@dataclass(frozen=True)
class AdaptiveSpikeReport:
    """T11 on the spike of spread ``δ`` (see :func:`adaptive_on_spike`).

    Attributes
    ----------
    root : Enclosure
        ``r_high ≈ 5.944520828``, the upper root of ``P − 1``.
    threshold : Enclosure
        ``τ = −log(e^{−r_high} − 10⁻⁹)``: ``log n − δ > τ`` forces ``β = 1``.
    max_inverse_temperature : Enclosure
        ``β_max = P(h*) ≈ 2.421387707``.
    rows : tuple of AdaptiveSpikeRow
        One per size.
    returns_to_one : int or None
        The first size from which every later size has ``β = 1`` exactly, after some
        size with ``β > 1`` (None when the sizes do not show the return).
    crossover : int or None
        The least ``n`` with ``β = 1`` exactly after the last sharpened size, by
        bisection over the integers (None when not located).
    crossover_log_n_minus_delta : Enclosure or None
        ``log n − δ`` at the crossover (below τ: the spike's entropy exceeds
        ``log n − δ``).
    guaranteed_from : int or None
        A size from which T11 guarantees ``β = 1`` (``log n − δ > τ`` is certified for
        every ``n >= guaranteed_from``): ``⌊exp(τ + δ)⌋ + 1`` from the ball's upper end.
    """

    delta: Fraction
    root: Enclosure
    threshold: Enclosure
    max_inverse_temperature: Enclosure
    rows: tuple[AdaptiveSpikeRow, ...]
    returns_to_one: int | None
    crossover: int | None
    crossover_log_n_minus_delta: Enclosure | None
    guaranteed_from: int | None
    engine: str

    @property
    def consistent(self) -> bool:
        """T11 on every row: past the threshold β = 1, and the sharpened bound holds."""
        return all(
            (row.beta_is_one or not row.past_threshold)
            and (row.beta_is_one or not row.past_root)
            and row.bound_verdict in ("holds", "attained")
            for row in self.rows
        )

    def row(self, n: int) -> AdaptiveSpikeRow:
        """The row of size ``n``."""
        for row in self.rows:
            if row.n == n:
                return row
        raise KeyError(f"no row of size {n}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "delta": _fraction_dict(self.delta),
            "root": enclosure_dict(self.root),
            "threshold": enclosure_dict(self.threshold),
            "max_inverse_temperature": enclosure_dict(self.max_inverse_temperature),
            "rows": [row.to_dict() for row in self.rows],
            "returns_to_one": self.returns_to_one,
            "crossover": self.crossover,
            "crossover_log_n_minus_delta": (
                None
                if self.crossover_log_n_minus_delta is None
                else enclosure_dict(self.crossover_log_n_minus_delta)
            ),
            "guaranteed_from": self.guaranteed_from,
            "consistent": self.consistent,
            "engine": self.engine,
        }


class _AdaptiveRule:
    """The adaptive rule on spikes of one spread, with the theory's constants as balls."""

    def __init__(self, delta: Fraction, engine: str | None, precision: int) -> None:
        import sympy as sp

        self.delta = delta
        self.engine = engine
        self.precision = precision
        self.bk = backend(engine)
        constants = adaptive_constants()
        self.term = -p_j * sp.log(p_j + ENTROPY_OFFSET)  # the rule's entropy, per logit
        with self.bk.working_precision(precision):
            self.root = ball_value(constants.sharpening_ends, self.bk)
            self.threshold = ball_value(constants.saturation_threshold, self.bk)
            self.beta_max = ball_value(constants.max_inverse_temperature, self.bk)

    def guaranteed_from(self) -> int | None:
        """``⌊exp(τ + δ)⌋ + 1``, certified from above: past it ``log n − δ > τ``."""
        bits = self.precision + _extra_bits(self.delta)
        with self.bk.working_precision(bits):
            size = self.bk.exp(self.threshold + self.bk.number(self.delta))
            if not self.bk.is_finite(size):
                return None
            return _dyadic_floor(self.bk.endpoints(size)[1]) + 1

    def enclosures(self) -> tuple[Enclosure, Enclosure, Enclosure]:
        with self.bk.working_precision(self.precision):
            return (
                ball_enclosure(self.bk, self.root),
                ball_enclosure(self.bk, self.threshold),
                ball_enclosure(self.bk, self.beta_max),
            )

    def row(self, n: int) -> AdaptiveSpikeRow:
        bk, delta = self.bk, self.delta
        sequence, theta = exact_spike(n, delta, Fraction(1))
        runs = _engine_runs(sequence, theta, self.engine)[0]
        with bk.working_precision(self.precision):
            entropy = bk.number(0)
            for run in runs:
                p = _ball(bk, run.enclosure)
                entropy = entropy + bk.number(run.count) * ball_value(self.term, bk, p_j=p)
            beta = ball_value(adaptive_inverse_temperature, bk, H=entropy)
            gap = bk.log(bk.number(n)) - bk.number(delta)
            beta_is_one = _is_exactly(bk, beta, _ONE)
            beta_low, beta_high = bk.endpoints(beta)
            bound = ball_value(
                dispersion_upper, bk, n=n, delta=delta, theta=bk.number(1) / self.beta_max
            )
            row = (
                ball_enclosure(bk, gap),
                ball_enclosure(bk, entropy),
                ball_enclosure(bk, beta),
                beta_is_one,
                _dyadic.compare(beta_low, _ONE) > 0,
                certainly_greater(bk, entropy, self.root),
                certainly_greater(bk, gap, self.threshold),
            )
        sharpened = self._sharpened(sequence, theta, runs, beta_is_one, beta_low, beta_high)
        with bk.working_precision(self.precision):
            verdict = compare_to_bound(bk, sharpened, bound, "upper")
            bound_enclosure = ball_enclosure(bk, bound)
        return AdaptiveSpikeRow(n, *row, sharpened, bound_enclosure, verdict)

    def _sharpened(
        self,
        sequence: LogitSequence,
        theta: Fraction,
        runs: tuple[RunValue, ...],
        exact_one: bool,
        beta_low: Dyadic,
        beta_high: Dyadic,
    ) -> Enclosure:
        """The top coefficient of softmax(β e): it grows with β, so the ends bound it."""
        if exact_one:
            return _extremes(runs)[0]
        tops = []
        for end in (beta_high, beta_low):  # θ/β_high gives the low end, θ/β_low the high
            beta = Fraction(end[0]) * Fraction(2) ** end[1]
            if beta <= 0:
                beta = Fraction(1)  # β >= 1 always
            tops.append(_extremes(_engine_runs(sequence, theta / beta, self.engine)[0])[0])
        return Enclosure(tops[0].lower, tops[1].upper)


def adaptive_on_spike(
    delta: object,
    sizes: Iterable[int] = (16, 64, 256, 1024, 4096, 2**16, 2**20, 10**9, 10**18),
    *,
    engine: str | None = None,
    precision: int = 128,
    locate: bool = True,
) -> AdaptiveSpikeReport:
    """T11: the paper's adaptive temperature on the spike, evaluated exactly as specified.

    Parameters
    ----------
    delta
        The spike's spread ``δ >= 0``.
    sizes
        Row lengths, in increasing order.
    engine
        ``"arb"`` or ``"mpmath"``.
    precision
        Working precision in bits of the rule's arithmetic.
    locate
        Bisect for the least ``n`` at which ``β`` returns to exactly 1.

    Returns
    -------
    AdaptiveSpikeReport
        Per size the rule's entropy, ``β``, whether ``β = 1`` is certified, the sharpened
        coefficient against T11's bound; where ``β`` returns to 1.

    Notes
    -----
    ``p = softmax(e)`` (certified), ``H = Σ_i −p_i log(p_i + 10⁻⁹)`` in ball arithmetic,
    ``β = max(P(H), 1)`` if ``H > 1/2`` else 1 with
    ``P(H) = −0.037H⁴ + 0.481H³ − 2.3H² + 4.917H − 1.791`` (the theory's exact
    rationals), and the output ``softmax(β e)``.  ``β = 1`` is certified exactly when
    ``P(H) <= 1`` is (then ``max(P(H), 1)`` is 1), which past the peak means
    ``H > r_high ≈ 5.9445``; T11 guarantees it once ``log n − δ > τ``.

    Examples
    --------
    >>> report = adaptive_on_spike(0, sizes=(64, 1024), engine="mpmath")
    >>> [(row.n, row.beta_above_one, row.beta_is_one) for row in report.rows]
    [(64, True, False), (1024, False, True)]
    >>> report.crossover, report.guaranteed_from
    (382, 382)
    """
    exact_delta = exact_value("delta", delta)
    chosen = _sizes(sizes)
    if list(chosen) != sorted(chosen):
        raise ValueError("sizes must be in increasing order")
    rule = _AdaptiveRule(exact_delta, engine, precision)
    rows = tuple(rule.row(n) for n in chosen)
    returns_to_one = None
    last_sharpened = max((i for i, row in enumerate(rows) if row.beta_above_one), default=None)
    if (
        last_sharpened is not None
        and last_sharpened + 1 < len(rows)
        and all(r.beta_is_one for r in rows[last_sharpened + 1 :])
    ):
        returns_to_one = rows[last_sharpened + 1].n
    crossover, crossover_gap = None, None
    if locate and returns_to_one is not None and last_sharpened is not None:
        low, high = rows[last_sharpened].n, returns_to_one  # β(low) > 1, β(high) = 1
        while high - low > 1:
            middle = (low + high) // 2
            probe = rule.row(middle)
            if probe.beta_is_one:
                high = middle
            elif probe.beta_above_one:
                low = middle
            else:
                break  # undecided at this precision: stop with the bracket
        else:
            crossover = high
            crossover_gap = rule.row(high).log_n_minus_delta
    root, threshold, beta_max = rule.enclosures()
    return AdaptiveSpikeReport(
        exact_delta,
        root,
        threshold,
        beta_max,
        rows,
        returns_to_one,
        crossover,
        crossover_gap,
        rule.guaranteed_from(),
        rule.bk.name,
    )
