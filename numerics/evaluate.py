"""Certified softmax, log-softmax, log-sum-exp and entropy on run-length sequences.

Every result is an enclosure ``[lower, upper]`` of exact binary numbers that provably
contains the exact value, computed in ball (python-flint) or interval (mpmath)
arithmetic.  For a requested float format each value is also rounded directly to that
format, and *certified* when both ends of its enclosure round to the same float.  The
working precision climbs a ladder (doubling) until every requested value is certified
or the cap is reached; the result says which.

Non-finite logits have limit semantics: ``+inf`` entries share the mass equally and the
rest get 0; ``−inf`` entries get 0 (log-softmax ``−inf``); a row with a NaN is all NaN;
a row of only ``−inf`` is undefined and says so.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from softmax_dispersion.numerics._backends import DEFAULT_MAX_PRECISION, Backend, backend
from softmax_dispersion.numerics.rounding import (
    Dyadic,
    FloatFormat,
    dyadic_to_fraction,
    float_format,
    round_dyadic,
)
from softmax_dispersion.numerics.sequence import LogitSequence
from softmax_dispersion.theory.formulas import exact_value

__all__ = [
    "DEFAULT_MAX_PRECISION",
    "Enclosure",
    "Evaluation",
    "PrecisionError",
    "RunValue",
    "certified_entropy",
    "certified_logsumexp",
    "certified_softmax",
]

ZERO: Dyadic = (0, 0)
Status = Literal["ok", "nan", "undefined"]


class PrecisionError(ValueError):
    """The precision cap is below what the request needs."""


@dataclass(frozen=True)
class Enclosure:
    """An exact interval ``[lower, upper]`` and, for a float format, its rounding.

    ``rounded`` is the lower end rounded to the format; ``certified`` says whether the
    upper end rounds to the same float, so that ``rounded`` is the correctly rounded
    exact value.  Infinite or NaN values are represented by ``special``.
    """

    lower: Dyadic
    upper: Dyadic
    rounded: float | None = None
    certified: bool = False
    special: float | None = None

    @classmethod
    def exactly(cls, value: float, fmt: FloatFormat | None) -> Enclosure:
        """The enclosure of an exact special value (0, ±inf, NaN)."""
        if value == 0:
            return cls(ZERO, ZERO, 0.0 if fmt else None, fmt is not None)
        return cls(ZERO, ZERO, value if fmt else None, fmt is not None, special=value)

    def contains(self, value: Fraction) -> bool:
        """Whether an exact fraction lies in the enclosure (finite enclosures only)."""
        if self.special is not None:
            return False
        return _compare(self.lower, value) <= 0 <= _compare(self.upper, value)

    def midpoint(self) -> float:
        """A float near the middle, for display (never for decisions)."""
        if self.special is not None:
            return self.special
        return (_to_float(self.lower) + _to_float(self.upper)) / 2


def _compare(value: Dyadic, other: Fraction) -> int:
    """The sign of ``value − other``, exactly, for exponents of any size."""
    mantissa, exponent = value
    if mantissa == 0 or other == 0 or (mantissa > 0) != (other > 0):
        return (mantissa > 0) - (mantissa < 0) if mantissa else -((other > 0) - (other < 0))
    # far apart in magnitude: decided by the binary exponents alone
    top = abs(mantissa).bit_length() + exponent
    other_top = abs(other.numerator).bit_length() - other.denominator.bit_length()
    if abs(top - other_top) > 2:
        larger = top > other_top
        return (1 if larger else -1) * (1 if mantissa > 0 else -1)
    difference = dyadic_to_fraction(value) - other
    return (difference > 0) - (difference < 0)


def _to_float(value: Dyadic) -> float:
    """The nearest-ish float, for display only (0 or ±inf beyond the float range)."""
    mantissa, exponent = value
    shift = max(abs(mantissa).bit_length() - 60, 0)
    try:
        return math.ldexp(float(mantissa >> shift), exponent + shift)
    except OverflowError:
        return math.copysign(math.inf, mantissa)


@dataclass(frozen=True)
class RunValue:
    """The value shared by every logit of one run."""

    logit: float
    count: int
    enclosure: Enclosure


@dataclass(frozen=True)
class Evaluation:
    """A certified evaluation of softmax or log-softmax on a sequence.

    Attributes
    ----------
    function : str
        ``"softmax"`` or ``"log_softmax"``.
    runs : tuple of RunValue
        One value per run of the sequence (same order).
    status : str
        ``"ok"``, ``"nan"`` (a NaN logit: every value is NaN) or ``"undefined"``
        (every logit is ``−inf``).
    format : str or None
        The float format rounded to.
    certified : bool
        Whether every value is certified correctly rounded (always False without a
        format).
    precision : int
        The working precision of the last rung of the ladder, in bits.
    engine : str
        ``"arb"`` or ``"mpmath"``.
    note : str
        Why the ladder stopped, or the limit semantics applied.
    """

    function: str
    runs: tuple[RunValue, ...]
    status: Status
    format: str | None
    certified: bool
    precision: int
    engine: str
    note: str = ""

    def value_of(self, logit: float) -> RunValue:
        """The run whose logit is ``logit``."""
        for run in self.runs:
            if run.logit == logit or (math.isnan(run.logit) and math.isnan(logit)):
                return run
        raise KeyError(f"no run with logit {logit}")

    def dense(self) -> list[float]:
        """The rounded values of every logit, in the sequence's run order, expanded."""
        if self.format is None:
            raise ValueError("evaluate with a format to get rounded values")
        out: list[float] = []
        for run in self.runs:
            value = run.enclosure.rounded
            out.extend([math.nan if value is None else value] * run.count)
        return out


Scale = Callable[[Backend, LogitSequence], Any]


def _inverse_temperature(
    bk: Backend, sequence: LogitSequence, theta: Fraction, s: Fraction | None
) -> Any:
    beta = bk.number(1) / bk.number(theta)
    if s is not None:
        beta = beta * bk.number(s) * bk.log(bk.number(sequence.n))
    return beta


def _start_precision(fmt: FloatFormat | None) -> int:
    return (fmt.precision if fmt else 53) + 32


def _check_cap(max_precision: int, fmt: FloatFormat | None) -> None:
    need = _start_precision(fmt)
    if max_precision < need:
        name = fmt.name if fmt else "an enclosure"
        raise PrecisionError(
            f"max_precision = {max_precision} bits is below the {need} bits that {name} needs"
        )


def _prepare(
    theta: object, s: object, fmt_name: str | None, max_precision: int
) -> tuple[Fraction, Fraction | None, FloatFormat | None]:
    exact_theta = exact_value("theta", theta)
    exact_s = None if s is None else exact_value("s", s)
    fmt = None if fmt_name is None else float_format(fmt_name)
    _check_cap(max_precision, fmt)
    return exact_theta, exact_s, fmt


def _special_evaluation(
    sequence: LogitSequence, log: bool, fmt: FloatFormat | None, engine: str
) -> Evaluation | None:
    """The limit semantics for rows with NaN, +inf or only −inf entries."""
    function = "log_softmax" if log else "softmax"
    if sequence.has_nan:
        runs = tuple(RunValue(v, c, Enclosure.exactly(math.nan, fmt)) for v, c in sequence.runs)
        return Evaluation(
            function,
            runs,
            "nan",
            (fmt.name if fmt else None),
            False,
            0,
            engine,
            "a NaN logit makes every coefficient NaN",
        )
    if all(v == -math.inf for v in sequence.values):
        runs = tuple(RunValue(v, c, Enclosure.exactly(math.nan, fmt)) for v, c in sequence.runs)
        return Evaluation(
            function,
            runs,
            "undefined",
            (fmt.name if fmt else None),
            False,
            0,
            engine,
            "every logit is −inf: softmax is undefined (0/0)",
        )
    return None


def _round(lower: Dyadic, upper: Dyadic, fmt: FloatFormat | None) -> Enclosure:
    if fmt is None:
        return Enclosure(lower, upper)
    low = round_dyadic(lower, fmt)
    return Enclosure(lower, upper, low, low == round_dyadic(upper, fmt))


def _clamp_nonnegative(bounds: tuple[Dyadic, Dyadic]) -> tuple[Dyadic, Dyadic]:
    lower, upper = bounds
    return (ZERO if lower[0] < 0 else lower), (ZERO if upper[0] < 0 else upper)


def _one_rung(
    bk: Backend,
    sequence: LogitSequence,
    theta: Fraction,
    s: Fraction | None,
    log: bool,
    fmt: FloatFormat | None,
) -> tuple[RunValue, ...] | None:
    """One evaluation at the current precision; None when a ball is not finite."""
    values = sequence.values
    top = max(values)
    if top == math.inf:  # +inf entries share the mass
        k = sum(c for v, c in sequence.runs if v == math.inf)
        share = bk.log(bk.number(k)) if log else bk.number(1) / bk.number(k)
        runs = []
        for v, c in sequence.runs:
            if v == math.inf:
                ball = -share if log else share
                lo, hi = bk.endpoints(ball)
                runs.append(RunValue(v, c, _round(lo, hi, fmt)))
            else:
                runs.append(RunValue(v, c, Enclosure.exactly(-math.inf if log else 0.0, fmt)))
        return tuple(runs)
    beta = _inverse_temperature(bk, sequence, theta, s)
    shifted = {}
    total = bk.number(0)
    for v, c in sequence.runs:
        if v == -math.inf:
            continue
        x = (bk.number(v) - bk.number(top)) * beta
        shifted[v] = x
        total = total + bk.number(c) * bk.exp(x)
    log_total = bk.log(total)
    runs = []
    for v, c in sequence.runs:
        if v == -math.inf:
            runs.append(RunValue(v, c, Enclosure.exactly(-math.inf if log else 0.0, fmt)))
            continue
        ball = shifted[v] - log_total if log else bk.exp(shifted[v]) / total
        if not bk.is_finite(ball):
            return None
        bounds = bk.endpoints(ball)
        if not log:
            bounds = _clamp_nonnegative(bounds)
        runs.append(RunValue(v, c, _round(*bounds, fmt)))
    return tuple(runs)


def certified_softmax(
    sequence: LogitSequence,
    *,
    theta: object = 1,
    s: object = None,
    log: bool = False,
    format: str | None = "float64",
    engine: str | None = None,
    precision: int | None = None,
    max_precision: int = DEFAULT_MAX_PRECISION,
) -> Evaluation:
    """Certified softmax (or log-softmax) of a logit sequence, per run.

    Parameters
    ----------
    sequence
        The logits in run-length form.
    theta
        Temperature ``θ > 0`` (int, float, Fraction or decimal string, read exactly).
    s
        Length scaling: when given, the inverse temperature is ``s·log(n)/θ``.
    log
        Log-softmax instead of softmax.
    format
        Round to ``"float16"``, ``"bfloat16"``, ``"float32"`` or ``"float64"``; ``None``
        for enclosures only.
    engine
        ``"arb"`` (python-flint) or ``"mpmath"``; arb when installed by default.
    precision
        The first rung of the precision ladder, in bits (default: the format's
        precision plus 32).  Without a format there is one rung.
    max_precision
        The cap of the precision ladder, in bits.

    Returns
    -------
    Evaluation
        One enclosure per run, its rounding, whether all are certified, the precision
        reached and the engine.

    Raises
    ------
    ValueError
        For θ <= 0, s <= 0, an unknown format or engine.
    PrecisionError
        When ``max_precision`` is below the starting precision for the format.

    Notes
    -----
    With ``x_j = (e_j − max e)·β`` and ``Z = Σ_runs k_j exp(x_j)``, the coefficient of a
    run is ``exp(x_j)/Z`` and its logarithm ``x_j − log Z``; ``β = 1/θ`` (times
    ``s log n`` with length scaling).  The cost is proportional to the number of runs.

    Examples
    --------
    >>> spike = LogitSequence.from_runs([(5.0, 1), (0.0, 15)])
    >>> result = certified_softmax(spike, format="float64")
    >>> result.certified, result.value_of(5.0).enclosure.rounded
    (True, 0.9082081266748885)
    """
    exact_theta, exact_s, fmt = _prepare(theta, s, format, max_precision)
    bk = backend(engine)
    special = _special_evaluation(sequence, log, fmt, bk.name)
    if special is not None:
        return special
    function = "log_softmax" if log else "softmax"
    bits = _start_precision(fmt) if precision is None else precision
    if bits > max_precision:
        raise PrecisionError(f"precision = {bits} bits exceeds max_precision = {max_precision}")
    while True:
        with bk.working_precision(bits):
            runs = _one_rung(bk, sequence, exact_theta, exact_s, log, fmt)
        done = runs is not None and (fmt is None or all(r.enclosure.certified for r in runs))
        if done or bits * 2 > max_precision:
            break
        bits *= 2
    if runs is None:
        raise PrecisionError(f"the enclosures are not finite at {bits} bits; raise max_precision")
    certified = fmt is not None and all(r.enclosure.certified for r in runs)
    note = "" if certified or fmt is None else f"precision cap {max_precision} bits reached"
    return Evaluation(
        function, runs, "ok", (fmt.name if fmt else None), certified, bits, bk.name, note
    )


def _scalar(
    sequence: LogitSequence,
    theta: object,
    s: object,
    format: str | None,
    engine: str | None,
    max_precision: int,
    compute: Callable[[Backend, Any, Any, dict[float, Any]], Any],
) -> tuple[Enclosure, int, str]:
    exact_theta, exact_s, fmt = _prepare(theta, s, format, max_precision)
    if not sequence.is_finite:
        raise ValueError("log-sum-exp and entropy need finite logits")
    bk = backend(engine)
    bits = _start_precision(fmt)
    while True:
        with bk.working_precision(bits):
            beta = _inverse_temperature(bk, sequence, exact_theta, exact_s)
            top = max(sequence.values)
            shifted = {v: (bk.number(v) - bk.number(top)) * beta for v in sequence.values}
            total = bk.number(0)
            for v, c in sequence.runs:
                total = total + bk.number(c) * bk.exp(shifted[v])
            ball = compute(bk, beta, total, shifted)
            enclosure = _round(*bk.endpoints(ball), fmt) if bk.is_finite(ball) else None
        if enclosure is not None and (fmt is None or enclosure.certified):
            break
        if bits * 2 > max_precision:
            if enclosure is None:
                raise PrecisionError(f"no finite enclosure at {bits} bits")
            break
        bits *= 2
    return enclosure, bits, bk.name


def certified_logsumexp(
    sequence: LogitSequence,
    *,
    theta: object = 1,
    s: object = None,
    format: str | None = "float64",
    engine: str | None = None,
    max_precision: int = DEFAULT_MAX_PRECISION,
) -> Enclosure:
    """Certified ``log Σ exp(β e_j)`` of a finite sequence (β = 1/θ, or ``s log n/θ``).

    Notes
    -----
    Computed as ``β·max e + log Σ_runs k_j exp(β(e_j − max e))``.

    Examples
    --------
    >>> certified_logsumexp(LogitSequence.from_runs([(0.0, 2**20)])).rounded
    13.862943611198906
    """

    def compute(bk: Backend, beta: Any, total: Any, shifted: dict[float, Any]) -> Any:
        return bk.number(max(sequence.values)) * beta + bk.log(total)

    return _scalar(sequence, theta, s, format, engine, max_precision, compute)[0]


def certified_entropy(
    sequence: LogitSequence,
    *,
    theta: object = 1,
    s: object = None,
    format: str | None = "float64",
    engine: str | None = None,
    max_precision: int = DEFAULT_MAX_PRECISION,
) -> Enclosure:
    """Certified Shannon entropy (nats) of ``softmax(β e)`` for a finite sequence.

    Notes
    -----
    ``H = log Z − Σ_runs k_j x_j exp(x_j)/Z`` with ``x_j = β(e_j − max e)`` and
    ``Z = Σ_runs k_j exp(x_j)``.

    Examples
    --------
    >>> certified_entropy(LogitSequence.from_runs([(0.0, 2**20)])).rounded
    13.862943611198906
    """

    def compute(bk: Backend, beta: Any, total: Any, shifted: dict[float, Any]) -> Any:
        weighted = bk.number(0)
        for v, c in sequence.runs:
            weighted = weighted + bk.number(c) * shifted[v] * bk.exp(shifted[v])
        return bk.log(total) - weighted / total

    return _scalar(sequence, theta, s, format, engine, max_precision, compute)[0]
