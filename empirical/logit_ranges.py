"""Certified logit ranges of trained heads, and the dispersion sizes they imply (T1, T4).

A head's logit is a function of one item (:mod:`~softmax_dispersion.empirical.logit_function`),
so its spread over *every* possible set is the spread of that function over the item
domain ``[0, 1] × classes``.  :func:`certify_logit_range` bounds the function's maximum and
minimum by branch and bound on priority intervals, in certified ball arithmetic, until the
certified spread ``δ*`` is within a relative ``gap`` of the spread of the best items found:
``δ_found <= δ* <= (1 + gap) δ_found``, where ``δ_found`` is itself a certified lower bound.

From ``δ*`` T4 gives the dispersion sizes: from ``n*(ε) = 1 + e^{βδ*}(1 − ε)/ε`` on, no
weight of any set can exceed ``ε`` (:func:`head_certificate`, the theory's
``dispersion_size`` evaluated in balls).
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from softmax_dispersion.empirical.logit_function import GELU_BITS, LogitFunction

__all__ = [
    "CERTIFICATE_GAP",
    "DISPERSION_LEVELS",
    "LogitRange",
    "certify_logit_range",
    "decimal",
    "head_certificate",
    "sampled_range",
]

CERTIFICATE_GAP = 0.01
"""The largest relative gap a certificate may leave between ``δ*`` and the best found."""

DISPERSION_LEVELS = {"half": (1, 2), "hundredth": (1, 100)}
"""The levels ``ε`` of the reported dispersion sizes ``n*(ε)``: ½ and 1/100."""

_FINEST = 2.0**-24
"""The narrowest priority interval split: its ends stay float32 numbers, so the best
items found are exactly what a float32 model is fed."""


@dataclass(frozen=True)
class LogitRange:
    """Certified bounds on a head's logits over the whole item domain.

    Every bound is an exact ``arb`` point: ``max_low <= sup e <= max_high`` and
    ``min_low <= inf e <= min_high``; ``max_low`` and ``min_high`` are the certified
    logits of the items ``argmax`` and ``argmin`` (``(priority, class)``).
    """

    max_low: Any
    max_high: Any
    min_low: Any
    min_high: Any
    argmax: tuple[float, int]
    argmin: tuple[float, int]
    boxes: int
    converged: bool
    seconds: float

    @property
    def spread_low(self) -> Any:
        """A certified lower bound of ``δ*``: the spread of the two items found."""
        return (self.max_low - self.min_high).lower()

    @property
    def spread_high(self) -> Any:
        """A certified upper bound of ``δ*`` over the whole domain."""
        return (self.max_high - self.min_low).upper()

    @property
    def relative_gap(self) -> float:
        """``δ_high/δ_low − 1``, rounded up (∞ when the lower bound is not positive)."""
        low, high = self.spread_low, self.spread_high
        if not low > 0:
            return math.inf
        return float((high / low - 1).upper())


def certify_logit_range(
    fn: LogitFunction,
    *,
    gap: float = 1e-3,
    max_boxes: int = 50_000,
    pieces: int = 16,
    labels: list[int] | None = None,
) -> LogitRange:
    """Bound the logit of every item of the domain, to a relative ``gap`` on the spread.

    Parameters
    ----------
    fn
        The head.
    gap
        Stop once ``δ_high <= (1 + gap) δ_low``.
    max_boxes
        The most interval evaluations; a range that is not within ``gap`` by then is
        returned with ``converged=False``.
    pieces
        Each class's priority interval ``[0, 1]`` starts cut into this many pieces.
    labels
        The classes searched (all by default).

    Returns
    -------
    LogitRange
        The certified bounds and the items that attain the found extremes.

    Notes
    -----
    Best-first branch and bound, on maximum and minimum together: the interval with the
    largest upper bound (resp. smallest lower bound) is split at its midpoint, the
    midpoint's logit is certified (raising the best lower bound of the maximum), and
    intervals that cannot beat the best found are dropped.  The bounds are
    :meth:`LogitFunction.enclosure` (outward-rounded ``arb`` balls), so they hold for
    every real priority in each interval, not only for sampled ones.

    Examples
    --------
    >>> fn = LogitFunction.random(width=6, seed=3)
    >>> found = certify_logit_range(fn, gap=1e-3)
    >>> found.converged, found.relative_gap <= 1e-3
    (True, True)
    >>> values = fn(np.linspace(0, 1, 2001)[:, None], np.arange(10)[None, :])
    >>> bool(found.max_low <= values.max() <= found.max_high)
    True
    """
    import flint

    probe = fn(np.linspace(0.0, 1.0, 17)[:, None], np.arange(fn.classes)[None, :])
    if not np.isfinite(probe).all():
        raise ValueError(f"the logits of {fn.normaliser} seed {fn.seed} are not finite")
    start = time.perf_counter()
    with flint.ctx.workprec(GELU_BITS):
        search = _Search(fn)
        for label in range(fn.classes) if labels is None else labels:
            for k in range(pieces):
                search.add(k / pieces, (k + 1) / pieces, label)
        while search.boxes < max_boxes:
            if search.spread_high() <= search.spread_low() * (1 + gap):
                break
            if not search.refine():
                break
        converged = bool(search.spread_high() <= search.spread_low() * (1 + gap))
        return LogitRange(
            max_low=search.best_max[0],
            max_high=search.max_bound(),
            min_low=search.min_bound(),
            min_high=search.best_min[0],
            argmax=search.best_max[1],
            argmin=search.best_min[1],
            boxes=search.boxes,
            converged=converged,
            seconds=time.perf_counter() - start,
        )


class _Search:
    """The two heaps of intervals (by upper bound for the max, lower for the min)."""

    def __init__(self, fn: LogitFunction) -> None:
        self.fn = fn
        self.counter = itertools.count()
        self.max_heap: list[tuple[float, int, tuple[float, float, int], Any]] = []
        self.min_heap: list[tuple[float, int, tuple[float, float, int], Any]] = []
        self.split: set[tuple[float, float, int]] = set()
        # (certified bound, item) of the best items found; set by the first sample.
        self.best_max: tuple[Any, tuple[float, int]] = (None, (0.0, 0))
        self.best_min: tuple[Any, tuple[float, int]] = (None, (0.0, 0))
        self.boxes = 0
        self.final_max: Any = None  # bounds of intervals too narrow to split
        self.final_min: Any = None

    def sample(self, priority: float, label: int) -> None:
        ball = self.fn.point(priority, label)
        low, high = ball.lower(), ball.upper()
        if self.best_max[0] is None or low > self.best_max[0]:
            self.best_max = (low, (priority, label))
        if self.best_min[0] is None or high < self.best_min[0]:
            self.best_min = (high, (priority, label))

    def add(self, low: float, high: float, label: int) -> None:
        for priority in (low, high):
            self.sample(priority, label)
        lo, hi = self.fn.enclosure(low, high, label)
        self.boxes += 1
        box = (low, high, label)
        heapq.heappush(self.max_heap, (-float(hi.mid()), next(self.counter), box, hi))
        heapq.heappush(self.min_heap, (float(lo.mid()), next(self.counter), box, lo))

    def _top(self, heap: list[Any]) -> Any:
        while heap and heap[0][2] in self.split:
            heapq.heappop(heap)
        return heap[0] if heap else None

    def max_bound(self) -> Any:
        top = self._top(self.max_heap)
        bound = self.best_max[0] if top is None else top[3]
        if self.final_max is not None and self.final_max > bound:
            bound = self.final_max
        return bound if bound > self.best_max[0] else self.best_max[0]

    def min_bound(self) -> Any:
        top = self._top(self.min_heap)
        bound = self.best_min[0] if top is None else top[3]
        if self.final_min is not None and self.final_min < bound:
            bound = self.final_min
        return bound if bound < self.best_min[0] else self.best_min[0]

    def spread_low(self) -> Any:
        return self.best_max[0] - self.best_min[0]

    def spread_high(self) -> Any:
        return self.max_bound() - self.min_bound()

    def refine(self) -> bool:
        """Split the interval that holds the larger excess; False when none can be split."""
        max_top, min_top = self._top(self.max_heap), self._top(self.min_heap)
        excess_max = None if max_top is None else max_top[3] - self.best_max[0]
        excess_min = None if min_top is None else self.best_min[0] - min_top[3]
        if excess_max is None and excess_min is None:
            return False
        use_max = excess_min is None or (excess_max is not None and excess_max >= excess_min)
        heap = self.max_heap if use_max else self.min_heap
        _, _, box, bound = heapq.heappop(heap)
        low, high, label = box
        if high - low <= _FINEST:
            # Cannot split further: its bound stays part of the answer.
            if use_max:
                self.final_max = bound if self.final_max is None else max(self.final_max, bound)
            else:
                self.final_min = bound if self.final_min is None else min(self.final_min, bound)
            return True
        self.split.add(box)
        middle = (low + high) / 2
        self.add(low, middle, label)
        self.add(middle, high, label)
        # Intervals that cannot beat the best found never matter again.
        self._prune()
        return True

    def _prune(self) -> None:
        best_max, best_min = self.best_max[0], self.best_min[0]
        if len(self.max_heap) > 4096:
            self.max_heap = [e for e in self.max_heap if e[3] > best_max]
            heapq.heapify(self.max_heap)
        if len(self.min_heap) > 4096:
            self.min_heap = [e for e in self.min_heap if e[3] < best_min]
            heapq.heapify(self.min_heap)


def sampled_range(
    fn: LogitFunction, samples: int = 20_000, seed: int = 0
) -> tuple[float, float, tuple[float, int], tuple[float, int]]:
    """The largest and smallest logit of ``samples`` random items per class, in float64.

    An independent look at the certificate: every sampled logit must lie inside the
    certified range (up to float64 rounding).

    Returns
    -------
    tuple
        ``(largest, smallest, its item, its item)``.
    """
    rng = np.random.default_rng(seed)
    priority = np.concatenate([[0.0, 1.0], rng.random(samples)])
    values = fn(priority[:, None], np.arange(fn.classes)[None, :])
    top = np.unravel_index(values.argmax(), values.shape)
    bottom = np.unravel_index(values.argmin(), values.shape)
    return (
        float(values[top]),
        float(values[bottom]),
        (float(priority[top[0]]), int(top[1])),
        (float(priority[bottom[0]]), int(bottom[1])),
    )


def decimal(ball: Any, direction: str = "down", digits: int = 12) -> str:
    """A decimal string below (``"down"``) or above (``"up"``) every value of an ``arb`` ball.

    Examples
    --------
    >>> import flint
    >>> decimal(flint.arb(1) / 3, "down", 5), decimal(flint.arb(1) / 3, "up", 5)
    ('3.3333e-1', '3.3334e-1')
    """
    from softmax_dispersion.numerics._dyadic import decimal_string

    point = ball.lower() if direction == "down" else ball.upper()
    mantissa, exponent = point.man_exp()
    return decimal_string((int(mantissa), int(exponent)), digits, direction)  # type: ignore[arg-type]


def _dispersion_size(spread: Any, beta: Any, level: tuple[int, int]) -> dict[str, Any]:
    """``n*(ε)`` at ``ε = level`` as an enclosure, and the least integer size it implies."""
    from fractions import Fraction

    from softmax_dispersion.numerics._backends import backend
    from softmax_dispersion.numerics.ball_formulas import ball_value
    from softmax_dispersion.theory.dispersion_size import dispersion_size

    bk = backend("arb")
    # θ = 1/β: T4's formula at the head's inverse temperature, in balls.
    ball = ball_value(
        dispersion_size,
        bk,
        precision=GELU_BITS,
        epsilon=Fraction(*level),
        delta=spread,
        theta=1 / beta,
    )
    low, high = ball.lower(), ball.upper()
    # The least integer n with n >= n*(ε) for every δ in the enclosure (exact ceiling
    # of the upper end), given when it is a size one could test.
    mantissa, exponent = (int(v) for v in high.man_exp())
    ceiling = mantissa << exponent if exponent >= 0 else -((-mantissa) >> -exponent)
    return {
        "lower": decimal(low, "down"),
        "upper": decimal(high, "up"),
        "least_size": ceiling if ceiling < 10**15 else None,
        "least_size_exact": str(ceiling),
    }


def head_certificate(
    found: LogitRange,
    *,
    normaliser: str,
    seed: int,
    beta: Any | None = 1,
    beta_note: str = "β = 1",
    sampled: tuple[float, float, tuple[float, int], tuple[float, int]] | None = None,
) -> dict[str, Any]:
    """One head's certificate as JSON-ready data.

    Parameters
    ----------
    found
        The certified logit range.
    normaliser, seed
        Which head.
    beta
        The inverse temperature the weights use (an exact number or ``arb`` ball), or
        ``None`` when it grows with ``n`` (length scaling) or T1 does not apply; then no
        dispersion size is given.
    beta_note
        Says where ``β`` comes from.
    sampled
        :func:`sampled_range` of the head, recorded with the verdict that it lies inside.

    Returns
    -------
    dict
        ``delta`` (enclosure of ``δ*`` as decimal strings), ``logit_max``/``logit_min``
        enclosures, ``argmax``/``argmin`` items, ``relative_gap``, ``converged``,
        ``boxes``, ``seconds``; ``dispersion_size`` per level of
        :data:`DISPERSION_LEVELS` (T4 at ``β δ*``: enclosure and the least size); and the
        sampled range.

    Notes
    -----
    ``n*(ε) = 1 + e^{βδ*}(1 − ε)/ε`` (T4's ``dispersion_size`` at ``θ = 1/β``) is evaluated
    over the whole enclosure of ``δ*``; ``least_size`` is the least integer at or above
    its upper end, from which T4 guarantees every weight ``<= ε`` for *every* set.
    """
    import flint

    with flint.ctx.workprec(GELU_BITS):
        spread = found.spread_low.union(found.spread_high)
        record: dict[str, Any] = {
            "normaliser": normaliser,
            "seed": seed,
            "delta": {
                "lower": decimal(found.spread_low, "down"),
                "upper": decimal(found.spread_high, "up"),
            },
            "logit_max": {"lower": decimal(found.max_low), "upper": decimal(found.max_high, "up")},
            "logit_min": {"lower": decimal(found.min_low), "upper": decimal(found.min_high, "up")},
            "argmax": {"priority": found.argmax[0], "class": found.argmax[1]},
            "argmin": {"priority": found.argmin[0], "class": found.argmin[1]},
            "relative_gap": found.relative_gap,
            "converged": found.converged,
            "within_gap": found.converged and found.relative_gap <= CERTIFICATE_GAP,
            "boxes": found.boxes,
            "seconds": found.seconds,
            "beta": beta_note,
            "dispersion_size": None,
        }
        if beta is not None:
            beta_ball = beta if isinstance(beta, flint.arb) else flint.arb(beta)
            record["dispersion_size"] = {
                name: _dispersion_size(spread, beta_ball, level)
                for name, level in DISPERSION_LEVELS.items()
            }
        if sampled is not None:
            largest, smallest, top, bottom = sampled
            # float64 evaluation of an exact function: allow its rounding (1e-9 relative).
            slack = 1e-9 * max(1.0, abs(largest), abs(smallest))
            inside = bool(found.max_high + slack >= largest and found.min_low - slack <= smallest)
            record["sampled"] = {
                "largest": largest,
                "smallest": smallest,
                "argmax": {"priority": top[0], "class": top[1]},
                "argmin": {"priority": bottom[0], "class": bottom[1]},
                "inside": inside,
            }
    return record
