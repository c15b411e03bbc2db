"""Certified upper bounds on largest singular values, from Gram matrices in ball arithmetic.

A float SVD gives ``σ_max`` to about 16 digits but proves nothing.  This module proves an
upper bound: it computes the relevant Gram matrices as python-flint ``arb`` balls that
contain the exact matrices of the given float entries, picks a candidate ``μ`` just above
a float estimate of ``σ_max²``, and certifies ``μI − G ≻ 0`` (or the product form below)
by congruence to a matrix that is strictly diagonally dominant with positive diagonal,
decided on the balls' endpoints.

For a product ``L R`` of two factors with ``A = LᵀL`` and ``B = RRᵀ`` (both ``k × k``,
``k`` the inner dimension), ``σ_max(LR)² = λ_max(A^{1/2} B A^{1/2})`` and

    ``μA − ABA ≻ 0  ⟹  σ_max(LR)² < μ``,

so a head's ``d × d`` query–key product is bounded through two ``k × k`` Gram matrices
(``k`` the head dimension).  Needs python-flint (``pip install 'softmax-dispersion[flint]'``).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = [
    "GramBound",
    "arb_gram",
    "arb_matrix",
    "certified_largest_eigenvalue",
    "certified_spectral_norm",
    "single_threaded_blas",
]

#: Relative margins tried above the float estimate, smallest first.
MARGINS: tuple[int, ...] = (30, 20, 12, 6, 2)
"""``μ = λ̂ (1 + 2**−m)`` for each ``m`` in turn, until the certificate holds."""

_PRECISION = 128


@dataclass(frozen=True)
class GramBound:
    """A certified upper bound ``λ < mu`` and how it was found.

    Attributes
    ----------
    mu : Fraction
        The certified bound: the largest eigenvalue is strictly below it.
    estimate : float
        The float estimate of the largest eigenvalue it was built from.
    margin_bits : int
        ``mu`` is the estimate times ``1 + 2**−margin_bits`` (rounded up to a dyadic).
    """

    mu: Fraction
    estimate: float
    margin_bits: int

    @property
    def sqrt_upper(self) -> Fraction:
        """A dyadic upper bound on ``sqrt(mu)`` (so on the singular value), exactly."""
        return _sqrt_upper(self.mu)


@contextlib.contextmanager
def single_threaded_blas() -> Iterator[None]:
    """One BLAS thread inside the block, when threadpoolctl is installed.

    The float estimates here work on small matrices (head dimension 32 or 64), where a
    multithreaded BLAS on a busy machine spends most of its time waiting: ~50x slower
    on 32 × 32 eigendecompositions on two shared cores.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(1):
        yield


def _flint() -> Any:
    try:
        import flint
    except ImportError:
        raise ImportError(
            "certified operator norms need python-flint: pip install 'softmax-dispersion[flint]'"
        ) from None
    return flint


def _finite_matrix(values: Any, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 2:
        raise ValueError(f"{name} must be a matrix, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must be finite")
    return array


def arb_matrix(values: Any) -> Any:
    """The float matrix ``values`` as an exact ``arb_mat`` (every float is a dyadic).

    Examples
    --------
    >>> arb_matrix([[0.5, 1.0]]).tolist()
    [[0.500000000000000, 1.00000000000000]]
    """
    flint = _flint()
    array = _finite_matrix(values, "values")
    return flint.arb_mat([[flint.arb(float(x)) for x in row] for row in array])


def arb_gram(factor: Any, *, centre_columns: bool = False) -> Any:
    """Balls containing the exact Gram matrix ``X Xᵀ`` (or ``X P Xᵀ``) of a float matrix.

    Parameters
    ----------
    factor : array_like, shape (k, d)
        The float matrix ``X``, read exactly.
    centre_columns : bool, optional
        Use ``X P Xᵀ`` with ``P = I − 11ᵀ/d``, the projection onto zero-mean vectors:
        the Gram matrix of ``X`` restricted to them.  ``X P Xᵀ = X Xᵀ − u uᵀ/d`` with
        ``u = X 1``.

    Returns
    -------
    flint.arb_mat
        ``k × k`` balls, at 128 bits, containing the exact matrix.

    Examples
    --------
    >>> arb_gram([[1.0, 2.0]]).tolist()
    [[5.00000000000000]]
    >>> arb_gram([[1.0, 3.0]], centre_columns=True).tolist()  # (1 − 2)² + (3 − 2)²
    [[2.00000000000000]]
    """
    flint = _flint()
    array = _finite_matrix(factor, "factor")
    with flint.ctx.workprec(_PRECISION):
        x = arb_matrix(array)
        gram = x * x.transpose()
        if centre_columns:
            d = array.shape[1]
            ones = flint.arb_mat([[1] for _ in range(d)])
            u = x * ones
            gram = gram - (u * u.transpose()) / d
    return gram


def _midpoints(matrix: Any) -> np.ndarray:
    return np.array([[float(v.mid()) for v in row] for row in matrix.tolist()])


def _dyadic_up(value: float) -> Fraction:
    """A dyadic rational >= value (a float is one already)."""
    return Fraction(value)


def _sqrt_upper(value: Fraction) -> Fraction:
    """An exact dyadic upper bound on sqrt(value), within a relative 2**−60."""
    if value <= 0:
        return Fraction(0)
    shift = 120 - (value.numerator.bit_length() - value.denominator.bit_length())
    shift += shift % 2  # an even power of two, so its square root is exact
    scaled = value * Fraction(2) ** shift
    root = math.isqrt(math.ceil(scaled))
    if root * root < scaled:
        root += 1
    return Fraction(root) / Fraction(2) ** (shift // 2)


def _certified_positive_definite(t: Any, t_mid: np.ndarray) -> bool:
    """Whether the exact symmetric matrix enclosed by the balls ``t`` is positive definite.

    Congruence ``C = Xᵀ T X`` with ``X ≈ T^{−1/2}`` (from a float eigendecomposition)
    keeps the inertia when ``X`` is invertible (Sylvester); a strictly diagonally dominant
    ``C`` with positive diagonal is positive definite (Gershgorin) and invertible, which
    makes ``X`` invertible.  The test is decided on the balls, so it holds for the exact
    ``C`` of the exact ``T``.
    """
    flint = _flint()
    symmetric = (t_mid + t_mid.T) / 2
    values, vectors = np.linalg.eigh(symmetric)
    if not (values > 0).all():
        return False
    x = arb_matrix(vectors / np.sqrt(values))
    c = x.transpose() * t * x
    k = c.nrows()
    for i in range(k):
        off = flint.arb(0)
        for j in range(k):
            if j != i:
                off += abs(c[i, j])
        if not bool(c[i, i] > off):
            return False
    return True


def _estimate(a_mid: np.ndarray, b_mid: np.ndarray | None) -> float:
    if b_mid is None:
        return float(np.linalg.eigvalsh((a_mid + a_mid.T) / 2)[-1])
    values, vectors = np.linalg.eigh((a_mid + a_mid.T) / 2)
    root = (vectors * np.sqrt(np.clip(values, 0, None))) @ vectors.T
    return float(np.linalg.eigvalsh(root @ ((b_mid + b_mid.T) / 2) @ root)[-1])


def certified_largest_eigenvalue(
    a: Any, b: Any | None = None, *, margins: Sequence[int] = MARGINS
) -> GramBound:
    """A certified ``μ`` above ``λ_max(A)``, or above ``λ_max(A^{1/2} B A^{1/2})``.

    Parameters
    ----------
    a : flint.arb_mat
        Balls containing a symmetric matrix ``A`` (a Gram matrix ``LᵀL``).
    b : flint.arb_mat, optional
        Balls containing a symmetric matrix ``B`` (a Gram matrix ``RRᵀ``) of the same
        size; then the bound is on ``σ_max(LR)² = λ_max(A^{1/2} B A^{1/2})``.
    margins : sequence of int, optional
        The relative margins ``2**−m`` above the float estimate to try, in order.

    Returns
    -------
    GramBound
        ``mu`` with ``λ < mu`` proved.

    Raises
    ------
    ArithmeticError
        When no margin can be certified (for example when ``A`` is singular in the
        product form, or the balls are too wide).

    Notes
    -----
    Without ``b``: ``μI − A ≻ 0`` gives ``λ_max(A) < μ``.  With ``b``: if
    ``T = μA − ABA ≻ 0`` then ``A ≻ 0`` (``Au = 0`` would give ``uᵀTu = 0``), and the
    congruence ``A^{−1/2} T A^{−1/2} = μI − A^{1/2}BA^{1/2} ≻ 0`` gives
    ``λ_max(A^{1/2}BA^{1/2}) < μ``; for ``A = LᵀL``, ``B = RRᵀ`` this eigenvalue is
    ``σ_max(LR)²`` (the nonzero eigenvalues of ``(A^{1/2}R)ᵀ(A^{1/2}R) = (LR)ᵀ(LR)`` and
    of ``(A^{1/2}R)(A^{1/2}R)ᵀ`` agree).  Positive definiteness of ``T`` is certified by
    congruence to a strictly diagonally dominant matrix, decided on the balls.

    Examples
    --------
    >>> import numpy as np
    >>> bound = certified_largest_eigenvalue(arb_gram(np.diag([3.0, 1.0])))
    >>> 9 < bound.mu < 9 * (1 + 2**-29)
    True
    """
    flint = _flint()
    with flint.ctx.workprec(_PRECISION):
        a_mid = _midpoints(a)
        b_mid = None if b is None else _midpoints(b)
        if b is not None and (b.nrows(), b.ncols()) != (a.nrows(), a.ncols()):
            raise ValueError(f"a and b differ in shape: {a.nrows()}x{a.ncols()} and {b.nrows()}")
        estimate = _estimate(a_mid, b_mid)
        scale = max(abs(estimate), float(np.abs(a_mid).max(initial=0.0)), 2.0**-1000)
        identity = flint.arb_mat(a.nrows(), a.ncols())
        for i in range(a.nrows()):
            identity[i, i] = 1
        aba = None if b is None else a * b * a
        for bits in margins:
            mu = _dyadic_up(max(estimate, 0.0) * (1 + 2.0**-bits) + scale * 2.0**-bits * 2**-20)
            mu_ball = flint.arb(mu.numerator) / mu.denominator
            t = mu_ball * identity - a if aba is None else mu_ball * a - aba
            if _certified_positive_definite(t, _midpoints(t)):
                return GramBound(mu, estimate, bits)
    raise ArithmeticError(
        f"could not certify a bound above the estimate {estimate!r} (margins 2**-{margins[-1]})"
    )


def certified_spectral_norm(matrix: Any) -> Fraction:
    """A dyadic upper bound on ``σ_max(W)`` of a float matrix, proved, not a float SVD.

    Parameters
    ----------
    matrix : array_like, shape (k, d)
        Read exactly (float64 entries are dyadic rationals).

    Returns
    -------
    Fraction
        ``u`` with ``σ_max(W) <= u``, within a relative ``2**−29`` of the float SVD's.

    Notes
    -----
    ``σ_max(W)² = λ_max(W Wᵀ)`` for the Gram matrix of the shorter side, bounded by
    :func:`certified_largest_eigenvalue`; the square root is rounded up exactly.

    Examples
    --------
    >>> import numpy as np
    >>> w = np.array([[3.0, 0.0], [4.0, 0.0]])  # σ_max = 5
    >>> bound = certified_spectral_norm(w)
    >>> 5 <= bound <= 5 * (1 + 2**-28)
    True
    """
    array = _finite_matrix(matrix, "matrix")
    if array.shape[0] > array.shape[1]:
        array = array.T
    return certified_largest_eigenvalue(arb_gram(array)).sqrt_upper
