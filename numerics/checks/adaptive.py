"""T11: the adaptive-temperature rule on the spike, certified."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from softmax_dispersion.numerics import _dyadic
from softmax_dispersion.numerics._backends import backend
from softmax_dispersion.numerics.ball_formulas import (
    ball_enclosure,
    ball_value,
    certainly_greater,
)
from softmax_dispersion.numerics.checks._common import (
    ONE,
    Verdict,
    ball_of,
    check_sizes,
    compare_to_bound,
    dyadic_floor,
    enclosure_dict,
    engine_runs,
    exact_spike,
    extra_bits,
    extremes,
    fraction_dict,
    is_exactly,
)
from softmax_dispersion.numerics.evaluate import (
    Enclosure,
    RunValue,
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
    dispersion_upper,
)
from softmax_dispersion.theory.formulas import exact_value


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
            "delta": fraction_dict(self.delta),
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
        bits = self.precision + extra_bits(self.delta)
        with self.bk.working_precision(bits):
            size = self.bk.exp(self.threshold + self.bk.number(self.delta))
            if not self.bk.is_finite(size):
                return None
            return dyadic_floor(self.bk.endpoints(size)[1]) + 1

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
        runs = engine_runs(sequence, theta, self.engine)[0]
        with bk.working_precision(self.precision):
            entropy = bk.number(0)
            for run in runs:
                p = ball_of(bk, run.enclosure)
                entropy = entropy + bk.number(run.count) * ball_value(self.term, bk, p_j=p)
            beta = ball_value(adaptive_inverse_temperature, bk, H=entropy)
            gap = bk.log(bk.number(n)) - bk.number(delta)
            beta_is_one = is_exactly(bk, beta, ONE)
            beta_low, beta_high = bk.endpoints(beta)
            bound = ball_value(
                dispersion_upper, bk, n=n, delta=delta, theta=bk.number(1) / self.beta_max
            )
            row = (
                ball_enclosure(bk, gap),
                ball_enclosure(bk, entropy),
                ball_enclosure(bk, beta),
                beta_is_one,
                _dyadic.compare(beta_low, ONE) > 0,
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
            return extremes(runs)[0]
        tops = []
        for end in (beta_high, beta_low):  # θ/β_high gives the low end, θ/β_low the high
            beta = Fraction(end[0]) * Fraction(2) ** end[1]
            if beta <= 0:
                beta = Fraction(1)  # β >= 1 always
            tops.append(extremes(engine_runs(sequence, theta / beta, self.engine)[0])[0])
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
    chosen = check_sizes(sizes)
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
