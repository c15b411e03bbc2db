"""T13's prediction for trained heads: the top weight of typical sets, from the logit map.

For a set of ``n`` items drawn i.i.d. (priority uniform on ``[0, 1]``, class uniform),
condition on its top item ``(t, c)``: the other ``n − 1`` items are i.i.d. with priority
uniform on ``[0, t)`` (on ``[0, t − lead)`` for a gap-controlled set) and any class.  The
terms ``Y = exp(β(e(x) − e(t, c)))`` then have mean ``I``, second moment ``J`` and values
in ``[0, b]``, all integrals of the head's logit map alone — no test set is used.  T13
(:mod:`softmax_dispersion.theory.typical_sets`) puts the top weight, with probability at
least ``1 − η``, in the band ``[1/(1 + (n−1)(I + r)), 1/(1 + (n−1)max(I − r, 0))]`` with
Bernstein's radius ``r`` for variance ``J − I²`` and bound ``b``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

from softmax_dispersion.empirical.logit_function import LogitFunction
from softmax_dispersion.theory.typical_sets import (
    bernstein_radius,
    typical_band_lower,
    typical_band_upper,
    typical_mean_field,
)

__all__ = ["GRID", "LEVELS", "PLANTED", "Band", "TypicalSetLaw", "levels"]

GRID = 2**14
"""Priority intervals of the quadrature grid (the logit map is smooth in the priority)."""

Array = npt.NDArray[np.float64]

LEVELS: tuple[float, ...] = (0.25, 0.5, 0.75)
"""Levels at which T13's band is checked besides the run's η: T13 holds at every level in
(0, 1), and the narrower bands of the larger levels see smaller errors in a law."""

PLANTED: tuple[float, ...] = (0.75, 0.8, 0.9, 0.95, 1.05, 1.1, 1.2, 1.25)
"""Factors by which a planted law is off (its ``I``, its ``β`` or its band's edges), to
measure which errors the run's sets and sizes would detect."""


def levels(eta: float) -> tuple[float, ...]:
    """The run's η and the larger :data:`LEVELS`, in increasing order.

    Examples
    --------
    >>> levels(0.05)
    (0.05, 0.25, 0.5, 0.75)
    """
    return tuple(sorted({eta, *(level for level in LEVELS if level > eta)}))


@dataclass(frozen=True)
class Band:
    """T13's prediction for each of a batch of sets."""

    mean: Array
    """``I``: the mean term ``E[exp(β(e(x) − e*))]`` below the top item."""
    mean_field: Array
    """``1/(1 + (n − 1) I)``."""
    lower: Array
    upper: Array
    bound: Array
    """``b``: the largest term (1 where no lower item's logit exceeds the top item's)."""
    variance: Array
    """The terms' variance ``max(J − I², 0)``."""
    n: int

    def outside(self, top_weight: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        """Which measured top weights fall outside their band."""
        weight = np.asarray(top_weight, dtype=np.float64)
        return (weight < self.lower) | (weight > self.upper)

    def edges(self, eta: float, mean_scale: float = 1.0) -> tuple[Array, Array]:
        """The band at level ``eta`` for a law whose ``I`` is ``mean_scale`` times this one's.

        Examples
        --------
        >>> fn = LogitFunction.random(width=6, seed=0)
        >>> band = TypicalSetLaw(fn, grid=2**10).band(np.array([0.9]), np.array([1]),
        ...                                           n=256, beta=1.0, eta=0.05)
        >>> wide, narrow = band.edges(0.05), band.edges(0.5)
        >>> bool(wide[0][0] <= narrow[0][0] <= narrow[1][0] <= wide[1][0])
        True
        """
        mean = self.mean * mean_scale
        radius = bernstein_radius.numpy(self.n, self.variance, self.bound, eta)
        return (
            typical_band_lower.numpy(self.n, mean, radius),
            typical_band_upper.numpy(self.n, mean, radius),
        )


class TypicalSetLaw:
    """The integrals T13 needs, for one head, by quadrature over its logit map.

    Parameters
    ----------
    fn
        The head's item → logit map.
    grid
        The number of priority intervals of the trapezoid rule.

    Examples
    --------
    >>> fn = LogitFunction.random(width=6, seed=0)
    >>> law = TypicalSetLaw(fn, grid=2**10)
    >>> band = law.band(np.array([0.99]), np.array([3]), n=64, beta=1.0, eta=0.05)
    >>> bool(band.lower[0] <= band.mean_field[0] <= band.upper[0])
    True
    """

    def __init__(self, fn: LogitFunction, grid: int = GRID) -> None:
        self.fn = fn
        self.priority = np.linspace(0.0, 1.0, grid + 1)
        # e(p, c) on the grid: (grid + 1, classes), β-free.
        self.logits = fn(self.priority[:, None], np.arange(fn.classes)[None, :])
        self._cumulative: dict[float, Array] = {}

    @cached_property
    def _top_so_far(self) -> Array:
        # The largest logit of any item at or below each grid priority.
        return np.maximum.accumulate(self.logits.max(axis=1))

    def _log_cumulative(self, scaled: Array) -> Array:
        """``log ∫_0^p mean_c exp(scaled(q, c)) dq`` at each grid priority (trapezoid)."""
        # Shifted by each row's own maximum, so that no row's mean underflows to 0 (a shift
        # by the grid's maximum sent rows far below it to log 0 = -inf).
        top = scaled.max(axis=1, keepdims=True)
        density = np.log(np.exp(scaled - top).mean(axis=1)) + top[:, 0]
        step = self.priority[1] - self.priority[0]
        pieces = np.log(step / 2) + np.logaddexp(density[:-1], density[1:])
        return np.concatenate([[-np.inf], np.logaddexp.accumulate(pieces)])

    def _cumulative_at(self, scale: float) -> Array:
        """``_log_cumulative(scale · e)``, kept for the few scales a run uses."""
        if scale not in self._cumulative:
            if len(self._cumulative) > 16:
                self._cumulative.clear()
            self._cumulative[scale] = self._log_cumulative(scale * self.logits)
        return self._cumulative[scale]

    def _log_integral(self, table: Array, below: Array) -> Array:
        """``log`` of the cumulative integral at ``below``, interpolated on the grid."""
        index = np.clip(np.searchsorted(self.priority, below, side="right") - 1, 0, None)
        index = np.minimum(index, len(self.priority) - 2)
        left, right = table[index], table[index + 1]
        fraction = (below - self.priority[index]) / (self.priority[1] - self.priority[0])
        fraction = np.clip(fraction, 0.0, 1.0)
        with np.errstate(divide="ignore"):
            # linear in the integral itself between grid points (it is increasing)
            value = np.logaddexp(left + np.log1p(-fraction), right + np.log(fraction))
        return np.where(below <= 0, -np.inf, value)

    def band(
        self,
        top_priority: npt.ArrayLike,
        top_class: npt.ArrayLike,
        *,
        n: int,
        beta: float,
        eta: float,
        lead: float = 0.0,
    ) -> Band:
        """T13's band for sets of ``n`` items with the given top items.

        Parameters
        ----------
        top_priority, top_class
            The top item of each set.
        n
            The set size (``>= 2``).
        beta
            The inverse temperature the head applies to its logits at this size.
        eta
            T13's level.
        lead
            The other items' priorities lie below ``t − lead`` (0 for uniform sets).

        Returns
        -------
        Band
            ``I``, the mean-field value and the band per set.

        Notes
        -----
        With ``u = t − lead`` and ``ē(q) = β e(q, ·)``, ``I = exp(−β e*) (1/u) ∫_0^u
        mean_c exp(β e(q, c)) dq`` and ``J`` likewise with ``2β``; the variance is
        ``max(J − I², 0)``; ``b = max(1, exp(β(max_{q <= u} e − e*)))``.  The band is
        :data:`~softmax_dispersion.theory.typical_sets.typical_band_lower` and
        :data:`~softmax_dispersion.theory.typical_sets.typical_band_upper` at Bernstein's
        radius :data:`~softmax_dispersion.theory.typical_sets.bernstein_radius`.
        """
        if n < 2:
            raise ValueError(f"T13 needs n >= 2 (a top item and others), got {n}")
        t = np.asarray(top_priority, dtype=np.float64).reshape(-1)
        c = np.asarray(top_class, dtype=np.int64).reshape(-1)
        upper_end = np.clip(t - lead, 0.0, 1.0)
        top_logit = beta * self.fn(t, c)
        log_first = self._log_integral(self._cumulative_at(beta), upper_end)
        log_second = self._log_integral(self._cumulative_at(2 * beta), upper_end)
        with np.errstate(divide="ignore"):
            log_u = np.log(upper_end)
        mean = np.exp(log_first - log_u - top_logit)
        second = np.exp(log_second - log_u - 2 * top_logit)
        variance = np.maximum(second - mean**2, 0.0)
        index = np.clip(np.searchsorted(self.priority, upper_end, side="right") - 1, 0, None)
        at_end = self.fn(upper_end[:, None], np.arange(self.fn.classes)[None, :]).max(axis=1)
        highest = np.maximum(self._top_so_far[index], at_end)
        bound = np.maximum(1.0, np.exp(beta * highest - top_logit))
        radius = bernstein_radius.numpy(n, variance, bound, eta)
        return Band(
            mean=mean,
            mean_field=typical_mean_field.numpy(n, mean),
            lower=typical_band_lower.numpy(n, mean, radius),
            upper=typical_band_upper.numpy(n, mean, radius),
            bound=bound,
            variance=variance,
            n=n,
        )
