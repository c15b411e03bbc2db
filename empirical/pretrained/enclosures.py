"""Rigorous enclosures of float64 and float32 array computations (midpoint–radius balls).

The token-level certificates enumerate tens of millions of inputs; python-flint's ``arb``
balls are exact but too slow there.  This module does ball arithmetic on numpy arrays
instead, in the midpoint–radius form of Rump ("Verification methods", Acta Numerica
2010): a quantity is enclosed by ``mid ± rad``, and every operation returns a new
midpoint computed in floating point together with a radius that bounds, **rigorously**,
both the incoming radii and the rounding error of the operation.

The error model is IEEE 754 binary64 (and binary32) with rounding to nearest: one
operation on floats ``x, y`` returns ``(x ∘ y)(1 + θ)`` with ``|θ| <= u`` (``u = 2**−53``,
``2**−24`` in float32) away from underflow, and a sum of ``n`` products computed in any
order, with or without fused multiply–adds (as BLAS does), is within
``γ_n Σ|x_i y_i|``, ``γ_n = n u / (1 − n u)``, of the exact sum (Higham, *Accuracy and
Stability of Numerical Algorithms*, §3.1).  Underflow adds at most ``2**−1074`` per
operation, covered by :data:`TINY`.  Radii are themselves computed in floating point
from non-negative terms, each rounded; they are widened by a relative ``4 n u`` so that
the computed radius is never below the exact one.

:func:`up` and :func:`down` move a float computed by **one** rounded operation from
exact (or already bounded) inputs outwards, past the exact result: applied after every
operation of a chain, they turn the chain into a certified upper or lower bound.

Examples
--------
>>> import numpy as np
>>> a = Enclosure.exact(np.array([[0.1, 0.2], [0.3, 0.4]]))
>>> b = Enclosure.exact(np.array([[1.0], [3.0]]))
>>> c = matmul(a, b)
>>> bool(np.all(c.lo <= np.array([[0.7], [1.5]])) and np.all(c.hi >= np.array([[0.7], [1.5]])))
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "TINY",
    "U32",
    "U64",
    "Enclosure",
    "down",
    "gamma",
    "matmul",
    "up",
]

U64 = 2.0**-53
"""Unit roundoff of binary64."""
U32 = 2.0**-24
"""Unit roundoff of binary32."""
TINY = 2.0**-1000
"""An absolute allowance, far above any underflow error of the computations here."""

_STEP = 2.0**-51
"""``up``/``down`` move by this relative amount: four times ``u``, more than the ``u/(1 − u)``
one rounding can cost relative to the computed value."""


def up(x: np.ndarray | float) -> np.ndarray:
    """``x`` moved up past the exact result of the one rounded operation that produced it.

    Examples
    --------
    >>> bool(up(0.1 + 0.2) >= 0.3)
    True
    """
    x = np.asarray(x, dtype=np.float64)
    return np.asarray(x + np.abs(x) * _STEP + TINY)


def down(x: np.ndarray | float) -> np.ndarray:
    """``x`` moved down past the exact result of the one rounded operation that produced it.

    Examples
    --------
    >>> bool(down(1 / 3) <= 1 / 3)
    True
    """
    x = np.asarray(x, dtype=np.float64)
    return np.asarray(x - np.abs(x) * _STEP - TINY)


def gamma(n: int, unit: float = U64) -> float:
    """``γ_n = n u / (1 − n u)``: the relative error bound of an ``n``-term dot product.

    Examples
    --------
    >>> gamma(1) > 2.0**-53
    True
    """
    if n * unit >= 0.5:
        raise ValueError(f"γ_n needs n u < 1/2, got n = {n}")
    return n * unit / (1 - n * unit)


@dataclass(frozen=True)
class Enclosure:
    """Real arrays enclosed by ``mid ± rad`` (``rad >= 0``, broadcast against ``mid``).

    ``lo`` and ``hi`` are certified floats below and above every enclosed value.
    """

    mid: np.ndarray
    rad: np.ndarray

    @classmethod
    def exact(cls, values: np.ndarray) -> Enclosure:
        """Values that are exactly the given floats (for example float32 weights in float64)."""
        mid = np.asarray(values, dtype=np.float64)
        return cls(mid, np.zeros_like(mid))

    @property
    def lo(self) -> np.ndarray:
        """A float array below every enclosed value."""
        return down(self.mid - self.rad)

    @property
    def hi(self) -> np.ndarray:
        """A float array above every enclosed value."""
        return up(self.mid + self.rad)

    @property
    def magnitude(self) -> np.ndarray:
        """An upper bound on the absolute value of every enclosed value."""
        return up(np.abs(self.mid) + self.rad)

    def __getitem__(self, index: Any) -> Enclosure:
        rad = np.broadcast_to(self.rad, self.mid.shape)
        return Enclosure(self.mid[index], rad[index])

    def __add__(self, other: Enclosure) -> Enclosure:
        mid = self.mid + other.mid
        return Enclosure(mid, _widen(self.rad + other.rad + np.abs(mid) * 2 * U64, 2))

    def __sub__(self, other: Enclosure) -> Enclosure:
        mid = self.mid - other.mid
        return Enclosure(mid, _widen(self.rad + other.rad + np.abs(mid) * 2 * U64, 2))

    def scaled(self, factor: np.ndarray | float) -> Enclosure:
        """The values times exact floats ``factor`` (elementwise, broadcast)."""
        factor = np.asarray(factor, dtype=np.float64)
        mid = self.mid * factor
        return Enclosure(mid, _widen(self.rad * np.abs(factor) + np.abs(mid) * 2 * U64, 2))

    def times(self, other: Enclosure) -> Enclosure:
        """Elementwise product of two enclosures."""
        mid = self.mid * other.mid
        rad = (
            np.abs(self.mid) * other.rad
            + self.rad * np.abs(other.mid)
            + self.rad * other.rad
            + np.abs(mid) * 2 * U64
        )
        return Enclosure(mid, _widen(rad, 4))

    def row_norms_squared(self) -> Enclosure:
        """``Σ_j x_ij²`` for each row ``i`` of a 2-D enclosure."""
        mid = np.einsum("ij,ij->i", self.mid, self.mid)
        rad_full = np.broadcast_to(self.rad, self.mid.shape)
        n = self.mid.shape[1]
        first = np.einsum("ij,ij->i", np.abs(self.mid), rad_full)
        second = np.einsum("ij,ij->i", rad_full, rad_full)
        rad = 2 * first + second + gamma(n) * mid
        return Enclosure(mid, _widen(rad, n))


def _widen(rad: np.ndarray, terms: int) -> np.ndarray:
    """A computed non-negative radius, widened past its own rounding errors (``terms``
    roundings or a ``terms``-long sum of non-negative values)."""
    return np.asarray(rad, dtype=np.float64) * (1 + 4 * (terms + 2) * U64) + TINY


def matmul(a: Enclosure, b: Enclosure) -> Enclosure:
    """Enclose ``a @ b`` (2-D): the float product and a radius bounding every error.

    Notes
    -----
    ``rad = γ_n |a.mid||b.mid| + |a.mid| b.rad + a.rad |b.mid| + a.rad b.rad`` with ``n``
    the inner dimension, each product of non-negative matrices computed in floating
    point and the sum widened by ``4(n + 2)u`` relative plus ``n`` :data:`TINY`.
    """
    n = a.mid.shape[-1]
    mid = a.mid @ b.mid
    abs_a, abs_b = np.abs(a.mid), np.abs(b.mid)
    rad = gamma(n) * (abs_a @ abs_b)
    a_rad = np.broadcast_to(a.rad, a.mid.shape)
    b_rad = np.broadcast_to(b.rad, b.mid.shape)
    if np.any(b_rad):
        rad = rad + abs_a @ b_rad
    if np.any(a_rad):
        rad = rad + a_rad @ abs_b
        if np.any(b_rad):
            rad = rad + a_rad @ b_rad
    return Enclosure(mid, _widen(rad, n) + n * TINY)
