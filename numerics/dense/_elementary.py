"""Exact constants, the proved error bounds, and the double-double exponential and logarithm."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from softmax_dispersion.numerics.dense._double_double import (
    F64,
    Pair,
    dd_add_dominant,
    dd_add_fp,
    dd_mul,
    dd_mul_fp,
    dekker_split,
    fast_two_sum,
    pow2,
    two_prod,
    two_sum,
)

U_DD = 2.0**-100
"""The relative error charged to one double-double operation (proved: at most ~7·2**-106)."""


R_MAX = 2.0**-11
"""The largest reduced argument the polynomial is charged for (nominal ``ln 2/2048``)."""


K_MAX = 2**21
"""A bound on ``|k|`` in the range reduction, for ``x >= X_EXP_MIN``."""


def _mpf_fraction(value: Any) -> Fraction:
    sign, mantissa, exponent, _ = value._mpf_
    magnitude = Fraction(int(mantissa)) * Fraction(2) ** int(exponent)
    return -magnitude if sign else magnitude


def _round_bits(value: Fraction, bits: int) -> Fraction:
    """``value`` rounded to ``bits`` significant bits (an exact dyadic)."""
    top = math.floor(math.log2(abs(value)))
    scale = Fraction(2) ** (bits - 1 - top)
    return Fraction(round(value * scale)) / scale


def dd_of(value: Fraction) -> tuple[float, float, Fraction]:
    """``value`` as a double-double ``(hi, lo)`` and its exact representation error."""
    hi = float(value)
    lo = float(value - Fraction(hi))
    return hi, lo, abs(value - Fraction(hi) - Fraction(lo))


def float_above(value: Fraction) -> float:
    """A float at least ``value`` (for bounds)."""
    assert isinstance(value, Fraction)
    result = float(value)
    return result if Fraction(result) >= value else math.nextafter(result, math.inf)


@dataclass(frozen=True)
class FastPathBounds:
    """The constants of the fast exponential and its proved relative error bounds.

    Attributes
    ----------
    exp_relative : float
        ``τ₀``: ``|m − exp(x)·2**-K| <= τ₀·exp(x)·2**-K`` for every exactly given
        ``x`` in ``[−750, 0]`` whose reduced argument passes the range check.
    reduction : float
        The absolute error of the reduced argument ``r`` (before the logit's own error).
    table : float
        The relative representation error of the table of ``2**(i/1024)``.
    truncation : float
        The relative truncation error of the degree-8 Taylor polynomial on ``|r| <= 2**-11``.
    """

    exp_relative: float
    reduction: float
    table: float
    truncation: float
    ln2_pieces: tuple[float, float, float]
    inv_step: float
    table_hi: F64
    table_lo: F64
    c3: tuple[float, float]
    c4: tuple[float, float]
    tail: tuple[float, float, float, float]


@cache
def fast_path_bounds() -> FastPathBounds:
    """The constants of the fast path and their error bounds (computed once, exactly).

    Notes
    -----
    The exponential of ``x`` (a double-double, ``−750 <= x <= 0``) is computed as
    ``2**K · T_i · P(r)``:

    1. *Reduction.*  ``k = rint(x_h · fl(1024/ln 2))``, ``K = ⌊k/1024⌋``,
       ``i = k mod 1024`` and ``r = x − k·C`` with ``C = ln 2/1024 = C₁ + C₂ + C₃ + ρ``:
       ``C₁`` and ``C₂`` have 32 significant bits so ``k·C₁`` and ``k·C₂`` are exact for
       ``|k| < 2**21``, ``C₃`` is the nearest double to the rest and ``|ρ| < 2**-127``.
       ``r`` is assembled by one TwoSum and three DWPlusFP (``2u²`` each, on values below
       ``2**-10``) and ``fl(k·C₃)`` (``u·|k C₃|``): the error is ``reduction``.  The
       choice of ``k`` need not be exact: ``|r_h| <= 2**-11·(1 − 2**-40)`` is checked per
       element (elements failing it go to the exact path).
    2. *Polynomial.*  ``P(r) = Σ_{i<=8} r**i/i!``; truncation ``<= R**9/9!·e**R`` with
       ``R = 2**-11`` (``truncation``).  ``exp(r_h + r_l) = exp(r_h)(1 + r_l)(1 + O(r_l²))``
       with ``|r_l| <= 2**-64``, so the polynomial is evaluated at the double ``r_h`` and
       multiplied by ``1 + r_l`` at the end (error ``<= 2**-104``).  Horner: the tail
       ``q = c₅ + r(c₆ + r(c₇ + r c₈))`` in binary64 (``|q − Q| <= 2**-55``, entering
       multiplied by ``|r|**5 <= 2**-55``), then five double-double steps
       ``p_i = p_{i+1}·r ⊕ c_i`` with ``c₃, c₄`` double-doubles (``<= 2**-105`` relative)
       and ``c₂, c₁, c₀`` exact.  Since ``|r·p_{i+1}| <= 2**-10.99·p_i`` and every
       ``p_i > 0``, the relative errors ``θ_i`` satisfy ``|θ_i| <= 1.001·2**-105 +
       2**-10.9(|θ_{i+1}| + 1.01 U) + 1.002 U <= 2**-99`` by induction (``U = U_DD``):
       earlier errors are damped by ``|r|`` and do not accumulate.
    3. *Table.*  ``T_i = 2**(i/1024)`` as a double-double, representation error
       ``table`` (checked here against 400-bit values), multiplied by one DWTimesDW.

    ``exp_relative`` multiplies these: ``(1 + table)(1 + 2**-99 + 2**-110)(1 +
    truncation)(1 + 2**-104)(1 + U)·exp(1.01·reduction) − 1``, plus ``2**-900`` for any
    absolute error of a subnormal intermediate (each below ``2**-1074``, relative to
    values near 1).
    """
    from mpmath.ctx_mp import MPContext

    ctx = MPContext()
    ctx.prec = 400
    slack = Fraction(1, 2**380)  # far above the error of a 400-bit mpmath value
    step = _mpf_fraction(ctx.ln2) / 1024
    c1 = _round_bits(step, 32)
    c2 = _round_bits(step - c1, 32)
    c3 = Fraction(float(step - c1 - c2))
    rho = abs(step - c1 - c2 - c3) + slack
    assert c1.denominator & (c1.denominator - 1) == 0  # dyadic
    u = Fraction(1, 2**53)
    intermediate = Fraction(1, 2**10)
    reduction = (
        K_MAX * rho  # the dropped piece of ln 2/1024
        + K_MAX * abs(c3) * u  # fl(k·C₃)
        + 3 * 2 * u * u * intermediate  # three DWPlusFP
        + Fraction(1, 2**1000)  # subnormal intermediates (x tiny)
    )
    hi = np.empty(1024)
    lo = np.empty(1024)
    table_error = Fraction(0)
    # 2**(i/1024) by repeated 400-bit products with 2**(1/1024): each product and the
    # base are within 2**-398 relative, so entry i is within 2**-387 (<< slack).
    step_factor = ctx.power(2, ctx.mpf(1) / 1024)
    power = ctx.mpf(1)
    for i in range(1024):
        hi[i], lo[i], error = dd_of(_mpf_fraction(power))
        table_error = max(table_error, error + slack)  # relative, as T_i >= 1
        power = power * step_factor
    coefficient_error = Fraction(0)
    pieces = {}
    for k in (3, 4):
        h, low, error = dd_of(Fraction(1, math.factorial(k)))
        pieces[k] = (h, low)
        coefficient_error = max(coefficient_error, error * math.factorial(k))
    assert coefficient_error <= Fraction(1, 2**105)
    big_r = Fraction(1, 2**11)
    e_r = Fraction(10005, 10000)  # > e**(2**-11)
    truncation = big_r**9 / math.factorial(9) * e_r * e_r  # relative to exp(r) >= e**-R
    horner = Fraction(1, 2**99) + Fraction(1, 2**110)
    total = (
        (1 + table_error)
        * (1 + horner)
        * (1 + truncation)
        * (1 + Fraction(1, 2**104))
        * (1 + Fraction(U_DD))
        * (1 + Fraction(101, 100) * reduction * Fraction(101, 100))
        - 1
        + Fraction(1, 2**900)
    )
    assert all(isinstance(v, Fraction) for v in (total, reduction, table_error, truncation))
    return FastPathBounds(
        exp_relative=float_above(total),
        reduction=float_above(reduction),
        table=float_above(table_error),
        truncation=float_above(truncation),
        ln2_pieces=(float(c1), float(c2), float(c3)),
        inv_step=float(1 / step),
        table_hi=hi,
        table_lo=lo,
        c3=pieces[3],
        c4=pieces[4],
        tail=tuple(float(Fraction(1, math.factorial(k))) for k in (5, 6, 7, 8)),  # type: ignore[arg-type]
    )


def exp_dd(xh: F64, xl: F64) -> tuple[F64, F64, npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """``exp(x_h + x_l) ≈ 2**K·(m_h + m_l)`` for ``−750 <= x <= 0``; bound ``exp_relative``.

    Returns ``m_h, m_l, K`` and the mask of elements whose reduced argument passed the
    range check (the others must not be used).
    """
    b = fast_path_bounds()
    c1, c2, c3 = b.ln2_pieces
    kf = np.rint(xh * b.inv_step)
    ah, al = two_sum(xh, -(kf * c1))  # k·C₁ exact
    rh, rl = dd_add_fp(ah, al, xl)
    rh, rl = dd_add_fp(rh, rl, -(kf * c2))  # k·C₂ exact
    rh, rl = dd_add_fp(rh, rl, -(kf * c3))  # fl(k·C₃)
    ok = np.abs(rh) <= R_MAX * (1 - 2.0**-40)
    r_hi, r_lo = dekker_split(rh)
    t5, t6, t7, t8 = b.tail
    q = ((t8 * rh + t7) * rh + t6) * rh + t5
    ph, pl = two_prod(q, rh, r_hi, r_lo)
    ph, pl = dd_add_dominant(ph, pl, *b.c4)  # |q·r| <= 2**-10 c₄
    ph, pl = dd_mul_fp(ph, pl, rh, r_hi, r_lo)
    ph, pl = dd_add_dominant(ph, pl, *b.c3)
    for c in (0.5, 1.0, 1.0):
        ph, pl = dd_mul_fp(ph, pl, rh, r_hi, r_lo)
        ph, pl = dd_add_fp(ph, pl, c)
    ph, pl = fast_two_sum(ph, pl + ph * rl)  # × (1 + r_l)
    k = kf.astype(np.int64)
    index = k & 1023
    mh, ml = dd_mul(b.table_hi[index], b.table_lo[index], ph, pl)
    return mh, ml, k >> 10, ok


@cache
def _log1p_coefficients() -> tuple[F64, F64]:
    """``(−1)**(k+1)/k`` for ``k = 1 … LOG1P_TERMS`` as double-doubles (error <= 2**-105)."""
    his, los = [], []
    for k in range(1, LOG1P_TERMS + 1):
        exact = Fraction((-1) ** (k + 1), k)
        hi, lo, error = dd_of(exact)
        assert error <= abs(exact) / 2**105
        his.append(hi)
        los.append(lo)
    return np.array(his), np.array(los)


LOG1P_TERMS = 12


LOG1P_MAX = 2.0**-8
"""Rows with one maximum and ``Ŝ <= LOG1P_MAX`` take ``log Z = log1p(Ŝ)`` as a series."""


def dd_inverse(zh: F64, zl: F64) -> Pair:
    """``1/z`` for double-doubles ``1 <= z < 2**1000``: relative error at most ``16u²``.

    Notes
    -----
    ``y = fl(1/z_h)`` (IEEE division: ``y = (1 + δ)/z_h``, ``|δ| <= u``), ``z_h·y = p + e``
    exactly (TwoProd), ``a = 1 − p`` exactly (Sterbenz), ``r = fl(fl(a − e) − fl(z_l·y))``
    is the residual ``ρ = 1 − z·y`` (``|ρ| <= 2.01u``) within ``8.2u²``, and
    ``1/z = y/(1 − ρ) = y(1 + ρ + ρ²/(1 − ρ))``; the result ``Fast2Sum(y, fl(y·r))`` is
    off by at most ``(8.2 + 2.1 + 4.1)u²`` relative.
    """
    y = 1.0 / zh
    p, e = two_prod(zh, y, *dekker_split(y))
    r = ((1.0 - p) - e) - zl * y
    return fast_two_sum(y, y * r)


def dd_log(tops: npt.NDArray[np.int64], sh: F64, sl: F64, z_error: F64) -> tuple[F64, F64, F64]:
    """``log Z`` per row for ``Z = c + S`` (``c`` maxima, ``|S − Ŝ| <= z_error``).

    Returns ``(hi, lo, radius)`` with ``|hi + lo − log Z| <= radius``; a radius of
    ``inf`` marks a row to leave to the exact path.

    Notes
    -----
    *Series* (``c = 1``, ``Ŝ <= 2**-8``): ``log1p(Ŝ) = Ŝ·Σ_{k<=12} (−1)**(k+1) Ŝ**(k−1)/k``
    by double-double Horner (each step damped by ``|Ŝ| <= 2**-8``, so the relative error
    stays below ``2**-99`` as for the exponential), truncation ``<= Ŝ**12/13/0.998 <=
    2**-99.7`` relative, one DWTimesDW: relative precision however small ``S`` is (a
    spike's largest log-softmax value is ``−log1p(S)``).  ``|log1p(S) − log1p(Ŝ)| <=
    z_error``.

    *Newton* (the other rows, ``log Z >= log(1 + 2**-8)``): from any seed ``L₀`` (numpy's
    ``log``, trusted for nothing), ``Z·exp(−L₀) = 1 + ε`` with the certified exponential
    and one DWTimesDW (relative ``g = 1.01(τ₀ + U + 2u²)``), ``ε̂`` by DWPlusFP and
    ``log Z = L₀ + log(1 + ε)`` with ``|log(1 + ε) − ε| <= 0.51ε²``: the error is at most
    ``1.01g + 2u²|ε̂| + 0.52(|ε̂| + 1.02g)² + 2.02u²|L̂| + 1.01·z_error/Ẑ``.  Rows where
    ``|ε̂| > 2**-12`` are left to the exact path (never with a sane seed).
    """
    u2 = 2.0**-106
    c = tops.astype(np.float64)
    zh, zl = dd_add_fp(sh, sl, c)  # Ẑ = c + Ŝ within 2u² relative
    # Newton from numpy's log.
    seed = np.clip(np.log(zh), 0.0, 700.0)
    mh, ml, k, ok = exp_dd(-seed, np.zeros_like(seed))
    ph, pl = dd_mul(zh, zl, mh, ml)
    factor = pow2(k)
    eh, el = dd_add_fp(ph * factor, pl * factor, -1.0)
    lh, ll = dd_add_fp(eh, el, seed)
    g = 1.01 * (fast_path_bounds().exp_relative + U_DD + 2 * u2)
    newton = (
        1.01 * g
        + 2 * u2 * np.abs(eh)
        + 0.52 * (np.abs(eh) * 1.01 + 1.02 * g) ** 2
        + 2.03 * u2 * np.abs(lh)
        + 1.01 * z_error / zh
    ) * (1 + 2.0**-40)
    newton = np.where(ok & (np.abs(eh) <= 2.0**-12), newton, np.inf)
    # The series for one maximum and a small rest.
    series = (tops == 1) & (sh <= LOG1P_MAX)
    x_h = np.where(series, sh, 0.0)
    x_l = np.where(series, sl, 0.0)
    his, los = _log1p_coefficients()
    qh, ql = np.full_like(x_h, his[-1]), np.full_like(x_h, los[-1])
    for hi, lo in zip(his[-2::-1], los[-2::-1], strict=True):
        qh, ql = dd_mul(qh, ql, x_h, x_l)
        qh, ql = dd_add_dominant(qh, ql, hi, lo)  # |x·q| <= 2**-7.9 |c_k|
    qh, ql = dd_mul(qh, ql, x_h, x_l)
    truncation = LOG1P_MAX**LOG1P_TERMS / (LOG1P_TERMS + 1) / 0.998 * x_h
    relative = 2.0**-99 + U_DD + 2.0**-105
    small = ((relative * 1.01 * np.abs(qh) + truncation) + z_error) * 1.01 * (1 + 2.0**-40)
    return (
        np.where(series, qh, lh),
        np.where(series, ql, ll),
        np.where(series, small, newton),
    )
