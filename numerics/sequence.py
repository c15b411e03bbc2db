"""Logit sequences in run-length form: values with multiplicities.

A spike at ``n = 10**18`` is two runs, so everything evaluated on a sequence costs time
proportional to the number of distinct values, not to ``n``.  Dense arrays are the case
of multiplicity one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["LogitSequence"]


@dataclass(frozen=True)
class LogitSequence:
    """Logit values (binary64, ``±inf`` and NaN allowed) with positive multiplicities.

    Parameters
    ----------
    values
        The distinct values, in any order.  Every float16, bfloat16 and float32 value is
        a binary64 value, so dense arrays of any float dtype convert exactly.
    counts
        How many logits take each value (Python integers of any size, each >= 1).

    Notes
    -----
    ``n = Σ counts``.  A sequence is *admissible* for T1 with bounds ``[m, M]`` when
    all its values are finite; its spread is ``δ = max − min``, computed exactly by
    the evaluation routines.

    Examples
    --------
    >>> spike = LogitSequence.from_runs([(5.0, 1), (0.0, 10**18 - 1)])
    >>> spike.n, spike.spread
    (1000000000000000000, 5.0)
    >>> LogitSequence.from_array([1.0, 2.0, 1.0]).runs
    ((1.0, 2), (2.0, 1))
    """

    values: tuple[float, ...]
    counts: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.values) != len(self.counts):
            raise ValueError("values and counts must have the same length")
        if not self.values:
            raise ValueError("a logit sequence needs at least one value (n >= 1)")
        for count in self.counts:
            if isinstance(count, bool) or not isinstance(count, int) or count < 1:
                raise ValueError(f"multiplicities must be integers >= 1, got {count!r}")

    @classmethod
    def from_runs(cls, runs: Iterable[tuple[float, int]]) -> LogitSequence:
        """Build from ``(value, multiplicity)`` pairs; equal values are merged."""
        merged: dict[Any, int] = {}
        nan_count = 0
        for value, count in runs:
            if isinstance(count, bool) or not isinstance(count, (int, np.integer)):
                raise ValueError(f"multiplicities must be integers >= 1, got {count!r}")
            if count < 1:
                raise ValueError(f"multiplicities must be integers >= 1, got {count!r}")
            number = float(value)
            if math.isnan(number):
                nan_count += int(count)
            else:
                merged[number] = merged.get(number, 0) + int(count)
        items = sorted(merged.items())
        if nan_count:
            items.append((math.nan, nan_count))
        if not items:
            raise ValueError("a logit sequence needs at least one value (n >= 1)")
        return cls(tuple(v for v, _ in items), tuple(c for _, c in items))

    @classmethod
    def from_array(cls, array: Sequence[float] | np.ndarray[Any, Any]) -> LogitSequence:
        """Build from a one-dimensional array of any float (or integer) dtype."""
        data = np.asarray(array)
        if data.ndim != 1:
            raise ValueError(f"expected a one-dimensional array, got shape {data.shape}")
        if data.size == 0:
            raise ValueError("a logit sequence needs at least one value (n >= 1)")
        if not (np.issubdtype(data.dtype, np.floating) or np.issubdtype(data.dtype, np.integer)):
            raise TypeError(f"expected real numbers, got dtype {data.dtype}")
        wide = data.astype(np.float64)  # exact for every float dtype up to float64
        finite = wide[~np.isnan(wide)]
        unique, counts = np.unique(finite, return_counts=True)
        runs = [(float(v), int(c)) for v, c in zip(unique, counts, strict=True)]
        nan_count = int(np.isnan(wide).sum())
        if nan_count:
            runs.append((math.nan, nan_count))
        return cls(tuple(v for v, _ in runs), tuple(c for _, c in runs))

    @property
    def runs(self) -> tuple[tuple[float, int], ...]:
        """The ``(value, multiplicity)`` pairs."""
        return tuple(zip(self.values, self.counts, strict=True))

    @property
    def n(self) -> int:
        """The number of logits."""
        return sum(self.counts)

    @property
    def has_nan(self) -> bool:
        """Whether some logit is NaN."""
        return any(math.isnan(v) for v in self.values)

    @property
    def is_finite(self) -> bool:
        """Whether every logit is finite."""
        return all(math.isfinite(v) for v in self.values)

    @property
    def maximum(self) -> float:
        """The largest logit (NaN if any logit is NaN)."""
        return math.nan if self.has_nan else max(self.values)

    @property
    def minimum(self) -> float:
        """The smallest logit (NaN if any logit is NaN)."""
        return math.nan if self.has_nan else min(self.values)

    @property
    def spread(self) -> float:
        """``max − min`` rounded to binary64 (the evaluations use the exact spread)."""
        return self.maximum - self.minimum

    def to_array(self, max_size: int = 10**7) -> np.ndarray[Any, np.dtype[np.float64]]:
        """The dense float64 array, for sequences of at most ``max_size`` logits."""
        if self.n > max_size:
            raise ValueError(f"n = {self.n} exceeds max_size = {max_size}; keep it run-length")
        return np.repeat(np.array(self.values, dtype=np.float64), self.counts)
