"""Certified softmax and log-softmax on dense arrays, vectorised in double-double.

:func:`certified_softmax_dense` evaluates every element of a dense array (one row, or
each row of a 2-D array along the last axis) with numpy's correctly rounded binary64
``+ − ×`` only, arranged as error-free transformations (TwoSum, Dekker's TwoProd) into
double-double arithmetic (about 106 bits) with a proved error bound per element.  Each
value is rounded directly to float16, bfloat16, float32 or float64 and *certified* when
its whole enclosure rounds to the same float.  The rare element that cannot be certified
this way (a value within about ``2**-95`` relative of a rounding boundary, a log-softmax
of logits whose difference overflows binary64) sends its row to the exact ball/interval
path of :func:`~softmax_dispersion.numerics.certified_softmax`, which also gives rows
with ``NaN``, ``+inf`` or only ``−inf`` their limit semantics.  No fallback occurred in
``2.4·10**7`` random values (uniform, spreads up to 2000, every format, both functions).

Nothing relies on the accuracy of numpy's ``exp`` or ``log``: the exponential is a range
reduction with a three-piece ``ln 2/1024`` and a 1024-entry table of ``2**(i/1024)``
(computed once at 400 bits), then a degree-8 Taylor polynomial in double-double; the
logarithm of each row's sum (log-softmax) is a ``log1p`` series for a spike and otherwise
one Newton step with that exponential from numpy's ``log`` as an untrusted seed.  The
fast path assumes IEEE binary64 round-to-nearest with gradual underflow, which numpy
has unless a library switched the FPU to flush-to-zero; a check at each call sends
everything to the exact path if that is not so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from softmax_dispersion.numerics._backends import Backend, backend
from softmax_dispersion.numerics.evaluate import (
    DEFAULT_MAX_PRECISION,
    Enclosure,
    certified_softmax,
)
from softmax_dispersion.numerics.rounding import (
    FORMATS,
    FloatFormat,
    float_format,
    round_dyadic,
)
from softmax_dispersion.numerics.sequence import LogitSequence
from softmax_dispersion.theory.formulas import exact_value

__all__ = [
    "DenseEvaluation",
    "FastPathBounds",
    "certified_softmax_dense",
    "fast_path_bounds",
]

F64 = npt.NDArray[np.float64]
Pair = tuple[F64, F64]

U_DD = 2.0**-100
"""The relative error charged to one double-double operation (proved: at most ~7·2**-106)."""
FAST_PRECISION = 106
"""The nominal precision of the fast path, in bits (two binary64 significands)."""
X_EXP_MIN = -750.0
"""Below this shifted logit ``exp`` is not evaluated: the softmax value is under 2**-1082."""
X_SUM_MIN = -660.0
"""Below this shifted logit a term is left out of the sum: ``exp(x) < 2**-952``."""
R_MAX = 2.0**-11
"""The largest reduced argument the polynomial is charged for (nominal ``ln 2/2048``)."""
K_MAX = 2**21
"""A bound on ``|k|`` in the range reduction, for ``x >= X_EXP_MIN``."""
BLOCK = 1 << 13
"""Elements per vectorised block: temporaries (64 KiB) stay in cache and below the usual
128 KiB threshold above which every allocation would map fresh pages."""
PARTIALS = 64
"""Partial sums kept per block of a long row (the last levels of the sum run once)."""
CHUNK = 1 << 20
"""Elements per chunk of rows (bounds the memory held at once)."""
_SPLITTER = 134217729.0  # 2**27 + 1, Dekker's splitting constant


# --- error-free transformations and double-double operations ---------------------------
#
# With round-to-nearest binary64 and gradual underflow (numpy's +, −, ×, checked at each
# call by _ieee_arithmetic; no FMA is used; a subnormal product adds an absolute error
# below 2**-1074, charged where it can occur, and additions are then exact), these
# identities hold exactly:
#   two_sum(a, b)       = (s, e) with s = fl(a + b), s + e = a + b          (Knuth)
#   fast_two_sum(a, b)  = same, when a = 0 or exponent(a) >= exponent(b)     (Dekker)
#   two_prod(a, b)      = (p, e) with p = fl(a·b), p + e = a·b               (Dekker)
#                         when |a|, |b| < 2**995 and a·b does not underflow.
# The double-double operations below are Joldes, Muller & Popescu (2017, "Tight and
# rigorous error bounds for basic building blocks of double-word arithmetic", ACM TOMS
# 44(2)) algorithms 4 (DWPlusFP, bound 2u²), 6 (AccurateDWPlusDW, 3u²/(1−4u)), 9
# (DWTimesFP, 2u²) and 10-12 (DWTimesDW, at most 7u²) with u = 2**-53.  Without an FMA
# the product of the low part is rounded separately, one more rounding of a term of size
# at most u·|z|, i.e. at most u²|z| more.  Every operation is charged U_DD = 2**-100 = 64u²
# relative to its result, which covers all of these with room to spare.


def _two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _fast_two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    s = a + b
    return s, b - (s - a)


def _split(a: Any) -> tuple[Any, Any]:
    t = _SPLITTER * a
    hi = t - (t - a)
    return hi, a - hi


def _two_prod(a: Any, b: Any, b_hi: Any, b_lo: Any) -> tuple[Any, Any]:
    p = a * b
    a_hi, a_lo = _split(a)
    return p, ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


def _dd_add(xh: Any, xl: Any, yh: Any, yl: Any) -> tuple[Any, Any]:
    """AccurateDWPlusDW: relative error at most 3u²/(1 − 4u) (any signs)."""
    sh, sl = _two_sum(xh, yh)
    th, tl = _two_sum(xl, yl)
    vh, vl = _fast_two_sum(sh, sl + th)
    return _fast_two_sum(vh, tl + vl)


def _dd_add_fp(xh: Any, xl: Any, y: Any) -> tuple[Any, Any]:
    """DWPlusFP: relative error at most 2u²."""
    sh, sl = _two_sum(xh, y)
    return _fast_two_sum(sh, xl + sl)


def _dd_mul_fp(xh: Any, xl: Any, y: Any, y_hi: Any, y_lo: Any) -> tuple[Any, Any]:
    """DWTimesFP with ``y`` already split; relative error at most 3u² without an FMA."""
    ch, cl1 = _two_prod(xh, y, y_hi, y_lo)
    return _fast_two_sum(ch, xl * y + cl1)


def _dd_mul(xh: Any, xl: Any, yh: Any, yl: Any) -> tuple[Any, Any]:
    """DWTimesDW: relative error at most 8u² without an FMA."""
    y_hi, y_lo = _split(yh)
    ch, cl1 = _two_prod(xh, yh, y_hi, y_lo)
    cl2 = xh * yl + xl * yh
    return _fast_two_sum(ch, cl1 + cl2)


def _dd_add_dominant(xh: Any, xl: Any, yh: Any, yl: Any) -> tuple[Any, Any]:
    """SloppyDWPlusDW, for operands of one sign or ``|y| <= 2**-8|x|`` (no cancellation).

    The only roundings are ``v = fl(x_l + y_l)`` and ``w = fl(s_l + v)``; with ``|x_l| <=
    u|x_h|`` they cost at most ``u²(|s_h| + (2 + 2u)(|x_h| + |y_h|))``, and without
    cancellation ``|x_h| + |y_h| <= (1 + 2**-6.9)|x + y|``: at most ``3.05u²`` relative.
    """
    sh, sl = _two_sum(xh, yh)
    return _fast_two_sum(sh, sl + (xl + yl))


def _ieee_arithmetic() -> bool:
    """Whether numpy's binary64 arithmetic rounds to nearest (ties to even) and keeps
    subnormals (no flush-to-zero, no denormals-are-zero), in its vectorised loops."""
    ones = np.ones(64)
    tiny = np.full(64, 2.0**-1074)
    return bool(
        np.all(ones + 2.0**-53 == 1.0)  # a tie goes to even
        and np.all(ones + 3 * 2.0**-54 == 1.0 + 2.0**-52)  # above a tie goes up
        and np.all(-ones - 3 * 2.0**-54 == -1.0 - 2.0**-52)
        and np.all(ones - 3 * 2.0**-55 == 1.0 - 2.0**-53)  # below 1: finer binade
        and np.all(tiny * ones > 0)  # no denormals-are-zero
        and np.all(np.full(64, 2.0**-1022) * 0.5 == 2.0**-1023)  # no flush-to-zero
    )


def _pow2(k: Any) -> F64:
    """``2.0**k`` for integers ``−1022 <= k <= 1023``, built from the bits (exact)."""
    return ((np.asarray(k, dtype=np.int64) + 1023) << 52).view(np.float64)


def _scale(x: Any, k: Any) -> Any:
    """``x·2**k`` for ``|k| <= 2044`` in two exact steps.

    Equal to the correctly rounded ``ldexp(x, k)`` unless ``x·2**⌊k/2⌋`` underflows; then
    off by less than ``2**-1074`` (absolute).
    """
    half = np.asarray(k, dtype=np.int64) >> 1
    return x * _pow2(half) * _pow2(k - half)


def _exponent(a: F64, subnormal: bool) -> npt.NDArray[np.int64]:
    """``⌊log₂ a⌋`` for ``a > 0`` from the bits (``<= −1087`` for ``a = 0``)."""
    if not subnormal:
        return (a.view(np.int64) >> 52) - 1023
    small = a < 2.0**-1022
    lifted = np.where(small, a * 2.0**64, a)
    return (lifted.view(np.int64) >> 52) - np.where(small, 1023 + 64, 1023)


# --- exact constants and the proved bounds ----------------------------------------------


def _mpf_fraction(value: Any) -> Fraction:
    sign, mantissa, exponent, _ = value._mpf_
    magnitude = Fraction(int(mantissa)) * Fraction(2) ** int(exponent)
    return -magnitude if sign else magnitude


def _round_bits(value: Fraction, bits: int) -> Fraction:
    """``value`` rounded to ``bits`` significant bits (an exact dyadic)."""
    top = math.floor(math.log2(abs(value)))
    scale = Fraction(2) ** (bits - 1 - top)
    return Fraction(round(value * scale)) / scale


def _dd_of(value: Fraction) -> tuple[float, float, Fraction]:
    """``value`` as a double-double ``(hi, lo)`` and its exact representation error."""
    hi = float(value)
    lo = float(value - Fraction(hi))
    return hi, lo, abs(value - Fraction(hi) - Fraction(lo))


def _up(value: Fraction) -> float:
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
        hi[i], lo[i], error = _dd_of(_mpf_fraction(power))
        table_error = max(table_error, error + slack)  # relative, as T_i >= 1
        power = power * step_factor
    coefficient_error = Fraction(0)
    pieces = {}
    for k in (3, 4):
        h, low, error = _dd_of(Fraction(1, math.factorial(k)))
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
        exp_relative=_up(total),
        reduction=_up(reduction),
        table=_up(table_error),
        truncation=_up(truncation),
        ln2_pieces=(float(c1), float(c2), float(c3)),
        inv_step=float(1 / step),
        table_hi=hi,
        table_lo=lo,
        c3=pieces[3],
        c4=pieces[4],
        tail=tuple(float(Fraction(1, math.factorial(k))) for k in (5, 6, 7, 8)),  # type: ignore[arg-type]
    )


def _exp_dd(xh: F64, xl: F64) -> tuple[F64, F64, npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """``exp(x_h + x_l) ≈ 2**K·(m_h + m_l)`` for ``−750 <= x <= 0``; bound ``exp_relative``.

    Returns ``m_h, m_l, K`` and the mask of elements whose reduced argument passed the
    range check (the others must not be used).
    """
    b = fast_path_bounds()
    c1, c2, c3 = b.ln2_pieces
    kf = np.rint(xh * b.inv_step)
    ah, al = _two_sum(xh, -(kf * c1))  # k·C₁ exact
    rh, rl = _dd_add_fp(ah, al, xl)
    rh, rl = _dd_add_fp(rh, rl, -(kf * c2))  # k·C₂ exact
    rh, rl = _dd_add_fp(rh, rl, -(kf * c3))  # fl(k·C₃)
    ok = np.abs(rh) <= R_MAX * (1 - 2.0**-40)
    r_hi, r_lo = _split(rh)
    t5, t6, t7, t8 = b.tail
    q = ((t8 * rh + t7) * rh + t6) * rh + t5
    ph, pl = _two_prod(q, rh, r_hi, r_lo)
    ph, pl = _dd_add_dominant(ph, pl, *b.c4)  # |q·r| <= 2**-10 c₄
    ph, pl = _dd_mul_fp(ph, pl, rh, r_hi, r_lo)
    ph, pl = _dd_add_dominant(ph, pl, *b.c3)
    for c in (0.5, 1.0, 1.0):
        ph, pl = _dd_mul_fp(ph, pl, rh, r_hi, r_lo)
        ph, pl = _dd_add_fp(ph, pl, c)
    ph, pl = _fast_two_sum(ph, pl + ph * rl)  # × (1 + r_l)
    k = kf.astype(np.int64)
    index = k & 1023
    mh, ml = _dd_mul(b.table_hi[index], b.table_lo[index], ph, pl)
    return mh, ml, k >> 10, ok


# --- rounding to a format, certified ------------------------------------------------------


def _round_certify(
    sign: Any, ah: F64, al: F64, scale: Any, radius: F64, fmt: FloatFormat, subnormal: bool
) -> tuple[F64, npt.NDArray[np.bool_]]:
    """Round ``sign·2**scale·(a_h + a_l)`` (error ``<= 2**scale·radius``) to ``fmt``.

    Returns the rounded values and whether each is certified (every number within the
    radius rounds to it).

    Notes
    -----
    ``a_h >= 0`` and ``(a_h, a_l)`` is normalised; ``subnormal`` says whether ``a_h``
    may be subnormal (or zero).  With ``e = ⌊log₂ a_h⌋ + scale`` the
    quantum is ``2**q``, ``q = max(e, emin) − p + 1``, and ``t = a·2**(scale − q)`` lies in
    ``[2**(p−1), 2**p]`` (or below for subnormals); ``n = rint(t_h)`` and ``f = f_h + f_l =
    TwoSum(t_h − n, t_l)`` exactly (the subtraction is exact: ``|t_h − n| <= 1/2`` is a
    multiple of ``ulp(t_h)``), then ``n ± 1`` if ``|f_h| > 1/2`` (a half-integer ``t_h``).
    The format's numbers near ``t`` are the integers, except below ``2**(p−1)`` in a
    normal binade (half-integers: the midpoint under ``n = 2**(p−1)`` is ``n − 1/4``) and
    above ``2**p`` (spacing 2: the midpoint ``n + 1/2`` is conservative).  Every number of
    the enclosure rounds to ``n·2**q`` when ``f − μ > −low`` and ``f + μ < 1/2``, with
    ``μ`` the radius in quanta.  Tested as ``fl(f_h + low) > s`` and ``fl(1/2 − f_h) > s``
    with ``s >= (μ + |f_l|)(1 + 2**-50)``: each left side is exact (Sterbenz) when it is
    below ``low/2``, and otherwise off by at most ``2**-53`` relative, which the factor
    covers.  So the fast path certifies down to about ``ρ`` relative of a midpoint,
    whatever the format.  Beyond the
    largest finite value the same test certifies ``±inf`` (the midpoint above
    ``max_finite`` rounds to infinity).
    """
    p, emin = fmt.precision, fmt.emin
    e = _exponent(ah, subnormal) + scale
    q = np.maximum(e, emin) - (p - 1)
    # |shift| <= 1083 + 53: softmax has scale = K in [−1083, 0] and e <= K + 1, so q <= 0;
    # log-softmax has scale 0 and q <= 1024.  A shift far below 0 (a value far under the
    # format's range) may make t_h subnormal: t is then below 2**-500 and rounds to 0, and
    # the error (under 2**-1074) is in the slack.
    shift = scale - q
    half = shift >> 1
    up, down = _pow2(half), _pow2(shift - half)  # x·2**shift = x·up·down (see _scale)
    th = ah * up * down
    tl = al * up * down
    n = np.rint(th)
    fh, fl = _two_sum(th - n, tl)  # f = fh + fl exactly
    # A half-integer t_h (p < 53, or subnormal) may leave |f| just above 1/2: step n.
    step = np.where(fh > 0.5, 1.0, 0.0) - np.where(fh < -0.5, 1.0, 0.0)
    n += step
    fh -= step  # exact (Sterbenz: 1/2 < |f_h| < 1)
    # μ + |f_l| rounded up (t_l and the radius may have lost 2**-1074 to underflow).
    slack = (radius * up * down * (1 + 2.0**-50) + 2.0**-1000 + np.abs(fl)) * (1 + 2.0**-49)
    low = np.where((n == 2.0 ** (p - 1)) & (q > emin - p + 1), 0.25, 0.5)
    certified = (fh + low > slack) & (0.5 - fh > slack)
    over = e > fmt.emax
    if over.any():  # certain overflow: t − μ above max_finite + ulp/2 = 2**(emax+1) − 2**(emax−p)
        top = np.clip(fmt.emax + 1 - q, -900, 900)  # in quanta; clipping only raises it
        threshold = _pow2(top) - _pow2(top - p - 1)
        # t >= t_h(1 − 2**-53); both floating steps on the left round by at most 2**-53.
        certified |= over & (th * (1 - 2.0**-51) - slack > threshold * (1 + 2.0**-50))
    magnitude = _scale(n, q)  # exact: n·2**q is a value of the format (or overflows)
    magnitude = np.where(magnitude > fmt.max_finite, np.inf, magnitude)
    return sign * magnitude, certified


def _outward(center: F64, spread: F64) -> Pair:
    """Floats ``lo <= c − w`` and ``hi >= c + w`` for floats ``c`` and ``w >= 0``.

    With ``s >= (w + |c|·2**-50)(1 + 2**-50)`` (as computed below, subnormal losses
    included), ``fl(c ∓ s)`` is off ``c ∓ s`` by at most ``2**-53|c ∓ s|``, less than
    ``s − w``.
    """
    s = (spread + np.abs(center) * 2.0**-50) * (1 + 2.0**-49) + 2.0**-1070
    return center - s, center + s


# --- the result ----------------------------------------------------------------------------


@dataclass(frozen=True)
class DenseEvaluation:
    """A certified dense evaluation of softmax or log-softmax.

    Attributes
    ----------
    function : str
        ``"softmax"`` or ``"log_softmax"``.
    values : numpy.ndarray
        The values rounded to ``format`` (held exactly in float64), shaped like the input.
    lower, upper : numpy.ndarray
        Float64 bounds with ``lower <= exact <= upper`` for every element of an ``"ok"``
        row (``NaN`` in rows whose status is not ``"ok"``).
    certified : numpy.ndarray
        Boolean: the value is proved to be the correctly rounded exact value.
    status : tuple of str
        Per row: ``"ok"``, ``"nan"`` (a NaN logit) or ``"undefined"`` (only ``−inf``).
    format : str
        The float format rounded to.
    engine : str
        The ball/interval engine of the exact path (and of ``s·log n``).
    precision : int
        106 (the double-double fast path), or the highest working precision a fallback
        row reached.
    relative_bound : float
        The largest relative error bound of the fast path's softmax values (0 if unused).
    fallback_rows : int
        Rows sent to the exact run-length path (non-finite rows included).
    fallback_elements : int
        Elements of finite rows the fast path could not certify.
    """

    function: str
    values: F64
    lower: F64
    upper: F64
    certified: npt.NDArray[np.bool_]
    status: tuple[str, ...]
    format: str
    engine: str
    precision: int
    relative_bound: float
    fallback_rows: int
    fallback_elements: int

    @property
    def all_certified(self) -> bool:
        """Whether every value is certified correctly rounded."""
        return bool(self.certified.all())


# --- the evaluation ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Beta:
    """The inverse temperature as a double-double and its relative error (None: exactly 1)."""

    hi: float
    lo: float
    relative: float
    one: bool


def _beta(bk: Backend, theta: Fraction, s: Fraction | None, n: int) -> _Beta:
    if s is None:
        exact = 1 / theta
        if exact == 1:
            return _Beta(1.0, 0.0, 0.0, True)
        hi, lo, error = _dd_of(exact)
        return _Beta(hi, lo, _up(error / exact), False)
    with bk.working_precision(256):
        ball = bk.number(s) * bk.log(bk.number(n)) / bk.number(theta)
        (m0, e0), (m1, e1) = bk.endpoints(ball)
    low = Fraction(m0) * Fraction(2) ** e0
    high = Fraction(m1) * Fraction(2) ** e1
    center = (low + high) / 2
    hi, lo, error = _dd_of(center)
    return _Beta(hi, lo, _up((error + (high - low) / 2) / center), False)


@cache
def _log1p_coefficients() -> tuple[F64, F64]:
    """``(−1)**(k+1)/k`` for ``k = 1 … LOG1P_TERMS`` as double-doubles (error <= 2**-105)."""
    his, los = [], []
    for k in range(1, LOG1P_TERMS + 1):
        exact = Fraction((-1) ** (k + 1), k)
        hi, lo, error = _dd_of(exact)
        assert error <= abs(exact) / 2**105
        his.append(hi)
        los.append(lo)
    return np.array(his), np.array(los)


LOG1P_TERMS = 12
LOG1P_MAX = 2.0**-8
"""Rows with one maximum and ``Ŝ <= LOG1P_MAX`` take ``log Z = log1p(Ŝ)`` as a series."""


def _dd_inverse(zh: F64, zl: F64) -> Pair:
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
    p, e = _two_prod(zh, y, *_split(y))
    r = ((1.0 - p) - e) - zl * y
    return _fast_two_sum(y, y * r)


def _dd_log(tops: npt.NDArray[np.int64], sh: F64, sl: F64, z_error: F64) -> tuple[F64, F64, F64]:
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
    zh, zl = _dd_add_fp(sh, sl, c)  # Ẑ = c + Ŝ within 2u² relative
    # Newton from numpy's log.
    seed = np.clip(np.log(zh), 0.0, 700.0)
    mh, ml, k, ok = _exp_dd(-seed, np.zeros_like(seed))
    ph, pl = _dd_mul(zh, zl, mh, ml)
    factor = _pow2(k)
    eh, el = _dd_add_fp(ph * factor, pl * factor, -1.0)
    lh, ll = _dd_add_fp(eh, el, seed)
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
        qh, ql = _dd_mul(qh, ql, x_h, x_l)
        qh, ql = _dd_add_dominant(qh, ql, hi, lo)  # |x·q| <= 2**-7.9 |c_k|
    qh, ql = _dd_mul(qh, ql, x_h, x_l)
    truncation = LOG1P_MAX**LOG1P_TERMS / (LOG1P_TERMS + 1) / 0.998 * x_h
    relative = 2.0**-99 + U_DD + 2.0**-105
    small = ((relative * 1.01 * np.abs(qh) + truncation) + z_error) * 1.01 * (1 + 2.0**-40)
    return (
        np.where(series, qh, lh),
        np.where(series, ql, ll),
        np.where(series, small, newton),
    )


def _tree_sum(h: F64, low: F64, until: int = 1) -> Pair:
    """Sum each row of a double-double array pairwise until ``until`` columns are left.

    At most ``⌈log₂(width/until)⌉`` levels; each element of the result is the sum of a
    set of columns (the sets partition them).
    """
    while h.shape[1] > until:
        half = h.shape[1] // 2
        sh, sl = _dd_add_dominant(  # positive terms
            h[:, :half], low[:, :half], h[:, half : 2 * half], low[:, half : 2 * half]
        )
        if h.shape[1] % 2:
            sh = np.concatenate([sh, h[:, -1:]], axis=1)
            sl = np.concatenate([sl, low[:, -1:]], axis=1)
        h, low = sh, sl
    if until == 1:
        return h[:, 0], low[:, 0]
    return h, low


def _levels(width: int) -> int:
    return max(width - 1, 0).bit_length()


Block = tuple[int, int, int, int, int]


def _blocks(rows: int, width: int) -> list[Block]:
    """``(row0, row1, col0, col1, segment)``: whole rows, or segments of one long row."""
    if width <= BLOCK:
        step = max(1, BLOCK // width)
        return [(r, min(r + step, rows), 0, width, 0) for r in range(0, rows, step)]
    return [
        (r, r + 1, c, min(c + BLOCK, width), i)
        for r in range(rows)
        for i, c in enumerate(range(0, width, BLOCK))
    ]


def _fast_chunk(
    data: F64,
    beta: _Beta,
    log: bool,
    fmt: FloatFormat,
    out: tuple[F64, F64, F64, npt.NDArray[np.bool_]],
) -> tuple[npt.NDArray[np.bool_], float]:
    """Evaluate rows of ``data`` (finite maximum, no NaN) into ``out``.

    Returns the per-row flag "the fast path cannot be trusted here: use the exact path"
    and the largest relative error bound of the softmax values.  The work goes by blocks
    of at most BLOCK elements (whole rows, or segments of a long row) so that the
    temporaries stay in cache; per-row quantities broadcast along the last axis.
    """
    rows, width = data.shape
    bounds = fast_path_bounds()
    values, lower, upper, certified = out
    top = data.max(axis=1)
    blocks = _blocks(rows, width)
    segments = 1 + blocks[-1][4]
    keep_per_segment = 1 if segments == 1 else PARTIALS  # the last tree levels run once

    def shifted(e: F64, t: F64) -> tuple[F64, F64, Any]:
        """``x = (e − max)·β`` as a double-double and a bound on its absolute error."""
        # Exact unless it overflows (then dh = −inf: |x| >= 2**1024, exp(x) negligible).
        dh, dl = _two_sum(e, -t)
        if beta.one:
            return dh, dl, 0.0
        # Dekker's split needs |a| < 2**995; beyond, |x| > 2**90 as β > 2**-900: −inf
        # stands for "exp(x) is negligible" (softmax) or "not certified" (log).
        tame = np.abs(dh) <= 2.0**990
        xh, xl = _dd_mul(np.where(tame, dh, 0.0), np.where(tame, dl, 0.0), beta.hi, beta.lo)
        ex = np.abs(xh) * ((beta.relative + U_DD) * 1.02) + 2.0**-1000
        return np.where(tame, xh, -np.inf), xl, ex

    # Pass 1: the exponentials (kept as 2**K·m; m = 0 below X_EXP_MIN) and, per block,
    # the pairwise double-double sum of the terms other than the maxima.
    mh = np.empty((rows, width))
    ml = np.empty((rows, width))
    kk = np.empty((rows, width), dtype=np.int16)
    partial_h = np.zeros((rows, segments * keep_per_segment))
    partial_l = np.zeros((rows, segments * keep_per_segment))
    n_masked = np.zeros(rows, dtype=np.int64)
    n_exp = np.zeros(rows, dtype=np.int64)
    n_sum = np.zeros(rows, dtype=np.int64)
    n_top = np.zeros(rows, dtype=np.int64)
    ex_row = np.zeros(rows)
    fail = np.zeros(rows, dtype=bool)
    for r0, r1, c0, c1, segment in blocks:
        e = data[r0:r1, c0:c1]
        t = top[r0:r1, None]
        xh, xl, ex = shifted(e, t)
        in_exp = xh >= X_EXP_MIN  # False for masked (−inf) and overflowed logits
        if in_exp.all():
            eh, el, k, ok = _exp_dd(xh, xl)
        else:
            eh, el, k, ok = _exp_dd(np.where(in_exp, xh, 0.0), np.where(in_exp, xl, 0.0))
            eh = np.where(in_exp, eh, 0.0)
            el = np.where(in_exp, el, 0.0)
            k = np.where(in_exp, k, 0)
            n_masked[r0:r1] += (e == -np.inf).sum(axis=1)
        if not ok.all():
            fail[r0:r1] |= (in_exp & ~ok).any(axis=1)
        mh[r0:r1, c0:c1] = eh
        ml[r0:r1, c0:c1] = el
        kk[r0:r1, c0:c1] = k
        in_sum = xh >= X_SUM_MIN
        n_exp[r0:r1] += in_exp.sum(axis=1)
        n_sum[r0:r1] += in_sum.sum(axis=1)
        if log:  # the maxima (x = 0 exactly: exp(x) = 1) are counted apart
            is_top = e == t
            n_top[r0:r1] += is_top.sum(axis=1)
            in_sum &= ~is_top
        if in_sum.all():
            scale = _pow2(k)
            terms = eh * scale, el * scale
        else:
            scale = _pow2(np.where(in_sum, k, 0))  # K >= −953 in the sum
            terms = np.where(in_sum, eh * scale, 0.0), np.where(in_sum, el * scale, 0.0)
        th, tl = _tree_sum(*terms, keep_per_segment)
        columns = slice(segment * keep_per_segment, segment * keep_per_segment + th.shape[-1])
        partial_h[r0:r1, columns] = th.reshape(r1 - r0, -1)
        partial_l[r0:r1, columns] = tl.reshape(r1 - r0, -1)
        if not beta.one:
            ex_row[r0:r1] = np.maximum(ex_row[r0:r1], np.where(in_exp, ex, 0.0).max(axis=1))
    sh, sl = _tree_sum(partial_h, partial_l)
    depth = _levels(min(width, BLOCK)) + _levels(segments * keep_per_segment)

    # Per row Z = c + S.  Log-softmax: the c maxima contribute exp(0) = 1 each, exactly,
    # and S is the sum of the other terms (so that log Z = log1p(S) keeps its relative
    # precision for a spike); softmax: c = 0 and S is every term.  Ŝ, summed pairwise in
    # double-double, is within (1 + τ)(1 + U)**D − 1 <= 1.01(τ + D·U) relative of the
    # sum of its terms (all terms and partial sums are positive; computed additively, as
    # in binary64 1 + 2**-100 is 1), plus the terms left out (below 2**-952 for x in
    # [−750, −660), below 2**-1082 under −750) and the subnormal low parts of the terms
    # (each off by less than 2**-1075; the additions of the pairwise sum are exact when
    # their result is subnormal).
    tau = bounds.exp_relative + 1.02 * ex_row
    far = width - n_masked - n_exp
    between = n_exp - n_sum
    z_error = ((tau + depth * U_DD) * 1.01 * sh * (1 + 2.0**-50)) * 1.01 + (
        between * 2.0**-952 + far * 2.0**-1082 + n_sum * 2.0**-1075
    ) * 1.01
    total = n_top + sh  # Ẑ >= 1 and Z >= 1: the maximum's term is exp(0) = 1
    zeta = z_error / total * 1.01  # relative to Z
    fail |= ~(np.isfinite(sh) & (total >= 1))
    if log:
        scalars = np.stack(_dd_log(n_top, sh, sl, z_error))
        fail |= ~np.isfinite(scalars[2])
    else:
        # 1/Ẑ within 16u² (_dd_inverse): charged U.
        scalars = np.stack([*_dd_inverse(sh, sl), np.full(rows, U_DD)])
    # Softmax V = 2**K·(m ⊗ 1/Ẑ): relative radius from τ, ζ, 1/Ẑ's double-double and ⊗.
    rho = (tau + zeta * (1 + 2.0**-40) + scalars[2] + U_DD) * 1.01
    largest = 0.0 if log or fail.all() else float(rho[~fail].max())
    exceptional = bool((n_masked > 0).any() or (far > 0).any())

    # Pass 2: the values, rounded and certified, and outward float64 bounds.
    for r0, r1, c0, c1, _ in blocks:
        block = (slice(r0, r1), slice(c0, c1))
        s0, s1, s2 = (scalars[i, r0:r1, None] for i in range(3))
        if log:
            xh, xl, ex = shifted(data[block], top[r0:r1, None])
            vh, vl = _dd_add(xh, xl, -s0, -s1)
            # AccurateDWPlusDW only adds: its relative bound holds down to 0 (a subnormal
            # sum is exact), so an exact 0 keeps radius 0; 2**-1073 covers the product
            # U·|v_h| underflowing.
            radius = (ex + s2 + 1.01 * U_DD * np.abs(vh)) * (1 + 2.0**-40) + np.where(
                vh == 0, 0.0, 2.0**-1073
            )
            sign = np.where(vh < 0, -1.0, 1.0)
            value, good = _round_certify(sign, sign * vh, sign * vl, 0, radius, fmt, True)
            lo_b, hi_b = _outward(vh, (np.abs(vl) + radius) * (1 + 2.0**-50))
            zero = -np.inf
        else:
            m = mh[block]
            k = kk[block].astype(np.int64)
            vh, vl = _dd_mul(m, ml[block], s0, s1)
            radius = rho[r0:r1, None] * np.abs(vh)
            value, good = _round_certify(1.0, vh, vl, k, radius, fmt, False)
            # 2**K·v_h and the spread may each lose 2**-1074 to underflow.
            half = k >> 1
            up, down = _pow2(half), _pow2(k - half)
            spread = (np.abs(vl) + radius) * (1 + 2.0**-50) * up * down + 2.0**-1070
            lo_b, hi_b = _outward(vh * up * down, spread)
            lo_b = np.maximum(lo_b, 0.0)
            hi_b = np.minimum(hi_b, 1.0)
            zero = 0.0
        if exceptional:
            masked = data[block] == -np.inf
            if not log:
                # Below X_EXP_MIN the value is under 2**-1082: it rounds to 0 in every
                # format.
                tiny = (mh[block] == 0) & ~masked
                value = np.where(tiny, 0.0, value)
                good = good | tiny
                lo_b = np.where(tiny, 0.0, lo_b)
                hi_b = np.where(tiny, 5e-324, hi_b)
            value = np.where(masked, zero, value)
            lo_b = np.where(masked, zero, lo_b)
            hi_b = np.where(masked, zero, hi_b)
            good = good | masked
        values[block] = value
        lower[block] = lo_b
        upper[block] = hi_b
        certified[block] = good
    return fail, largest


_FLOAT64 = FORMATS["float64"]


def _enclosure_floats(enclosure: Enclosure) -> tuple[float, float, float, bool]:
    """An exact path enclosure as ``(value, lower, upper, certified)`` floats."""
    value = math.nan if enclosure.rounded is None else enclosure.rounded
    if enclosure.special is not None:
        return value, enclosure.special, enclosure.special, enclosure.certified
    if enclosure.lower == enclosure.upper == (0, 0):
        return value, 0.0, 0.0, enclosure.certified
    low = math.nextafter(round_dyadic(enclosure.lower, _FLOAT64), -math.inf)
    high = math.nextafter(round_dyadic(enclosure.upper, _FLOAT64), math.inf)
    return value, low, high, enclosure.certified


def _exact_row(
    row: F64,
    theta: Fraction,
    s: Fraction | None,
    log: bool,
    fmt: FloatFormat,
    engine: str,
    max_precision: int,
) -> tuple[F64, F64, F64, npt.NDArray[np.bool_], str, int]:
    """One row by the exact run-length path, expanded back to its elements."""
    evaluation = certified_softmax(
        LogitSequence.from_array(row),
        theta=theta,
        s=s,
        log=log,
        format=fmt.name,
        engine=engine,
        max_precision=max_precision,
    )
    width = row.size
    if evaluation.status != "ok":
        nan = np.full(width, np.nan)
        return nan, nan.copy(), nan.copy(), np.zeros(width, dtype=bool), evaluation.status, 0
    table = np.array([_enclosure_floats(run.enclosure) for run in evaluation.runs])
    logits = np.array([run.logit for run in evaluation.runs])
    index = np.searchsorted(logits, row)  # the runs are sorted, each logit is one of them
    assert np.array_equal(logits[index], row)
    picked = table[index]
    certified = picked[:, 3].astype(bool)
    lower, upper = picked[:, 1], picked[:, 2]
    if not log:
        lower, upper = np.maximum(lower, 0.0), np.minimum(upper, 1.0)
    return picked[:, 0], lower, upper, certified, "ok", evaluation.precision


def _row_blocks(rows: npt.NDArray[np.intp], width: int) -> list[tuple[int, int]]:
    """Contiguous ``[start, stop)`` row ranges of at most CHUNK elements (>= 1 row)."""
    per_chunk = max(1, CHUNK // width)
    blocks: list[tuple[int, int]] = []
    if rows.size == 0:
        return blocks
    breaks = np.flatnonzero(np.diff(rows) != 1) + 1
    for run in np.split(rows, breaks):
        for start in range(0, run.size, per_chunk):
            piece = run[start : start + per_chunk]
            blocks.append((int(piece[0]), int(piece[-1]) + 1))
    return blocks


def certified_softmax_dense(
    x: npt.ArrayLike,
    *,
    theta: object = 1,
    s: object = None,
    log: bool = False,
    format: str = "float64",
    engine: str | None = None,
    max_precision: int = DEFAULT_MAX_PRECISION,
) -> DenseEvaluation:
    """Certified softmax (or log-softmax) of a dense array, every element rounded.

    Parameters
    ----------
    x
        Logits: a 1-D array, or a 2-D array evaluated row by row (along the last axis).
        Any float or integer dtype; values are read as binary64 (exact for every float
        dtype).  ``±inf`` and NaN are allowed.
    theta
        Temperature ``θ > 0`` (int, float, Fraction or decimal string, read exactly).
    s
        Length scaling: when given, the inverse temperature is ``s·log(n)/θ`` with ``n``
        the row length.
    log
        Log-softmax instead of softmax.
    format
        ``"float16"``, ``"bfloat16"``, ``"float32"`` or ``"float64"``.
    engine
        ``"arb"`` or ``"mpmath"``: the ball engine of the exact path (rows the fast path
        leaves) and of ``s·log n``; arb when installed by default.
    max_precision
        The cap of the fallback's precision ladder, in bits.

    Returns
    -------
    DenseEvaluation
        Rounded values, outward float64 enclosures, the certified mask and how many rows
        and elements needed the exact path.

    Raises
    ------
    ValueError
        For an empty array, more than two dimensions, θ <= 0, s <= 0, an unknown format
        or engine.
    TypeError
        For non-real dtypes.
    PrecisionError
        When a row left to the exact path has no finite enclosure at ``max_precision``.

    Notes
    -----
    With ``x_j = (e_j − max e)·β`` (``β = 1/θ``), ``p_j = exp(x_j)/Z``, ``Z = Σ exp(x_j)``
    and ``log p_j = x_j − log Z``.  Error analysis (``u = 2**-53``, ``U = 2**-100``):

    * ``e_j − max e`` is exact as a double-double (TwoSum); for ``β ≠ 1`` one DWTimesDW
      by ``β`` (a double-double, relative error ``ε_β``) leaves ``|x̂ − x| <=
      1.02(ε_β + U)|x̂| + 2**-1000``, which costs a relative ``1.02|x̂ − x|`` in ``exp``.
    * ``exp(x_j) = 2**K_j·m_j·(1 + τ_j)`` with ``|τ_j| <= τ₀`` (about ``2**-98.4``, see
      :func:`fast_path_bounds`) plus the logit's error, for ``x_j >= −750``.
    * ``Ẑ``: the terms with ``x_j >= −660`` summed pairwise in double-double (blocks of
      8192, then their partial sums); every term and every partial sum is positive, so
      the relative errors do not compound beyond ``(1 + τ)(1 + U)**D`` with ``D`` the
      depth of the tree; the terms left out are each below ``2**-952``.  As ``Z >= 1``,
      ``Ẑ = Z(1 + ζ)`` with ``ζ`` about ``2**-95.6`` at ``n = 10**5``.  (For log-softmax
      the ``c`` maxima, exactly 1 each, are kept apart: ``Z = c + S``.)
    * Softmax: ``1/Ẑ`` by one Newton step from the IEEE quotient (``16u²``, see
      ``_dd_inverse``), one DWTimesDW with ``m_j``: the value ``2**K_j·v_j`` has relative
      error ``<= ρ = 1.01(τ + ζ + 2U)``.  Values with ``x_j < −750`` are below
      ``2**-1082`` and round to 0 in every format.
    * Log-softmax: ``log Z`` as a double-double with an absolute bound (``_dd_log``: a
      ``log1p`` series, relatively accurate, for one maximum and ``S <= 2**-8``; else a
      Newton step with the certified exponential); one AccurateDWPlusDW (no cancellation:
      ``x_j <= 0 <= log Z``) adds ``1.01U|ℓ̂_j|``.
    * Rounding: see the notes of ``_round_certify``; an element is certified only if its
      whole enclosure rounds to one float, so a value within about ``ρ`` of a rounding
      boundary sends its row to :func:`~softmax_dispersion.numerics.certified_softmax`
      (so do overflowing differences of logits, rows with NaN, ``+inf`` or only ``−inf``).

    At ``n = 10**5`` and float64 ``ρ ≈ 2**-95``: a random value is uncertified with
    probability about ``2**-41``.

    Examples
    --------
    >>> result = certified_softmax_dense([1.0, 2.0, 3.0])
    >>> result.values.tolist(), result.all_certified
    ([0.09003057317038046, 0.24472847105479764, 0.6652409557748219], True)
    >>> rows = certified_softmax_dense([[0.0, -np.inf], [5.0, 5.0]], log=True, format="float16")
    >>> rows.values.tolist()
    [[0.0, -inf], [-0.693359375, -0.693359375]]
    >>> certified_softmax_dense([1.0, np.nan]).status
    ('nan',)
    """
    data = np.asarray(x)
    if data.ndim not in (1, 2):
        raise ValueError(f"expected a 1-D or 2-D array, got shape {data.shape}")
    if data.size == 0:
        raise ValueError("a logit sequence needs at least one value (n >= 1)")
    if not (np.issubdtype(data.dtype, np.floating) or np.issubdtype(data.dtype, np.integer)):
        raise TypeError(f"expected real numbers, got dtype {data.dtype}")
    exact_theta = exact_value("theta", theta)
    exact_s = None if s is None else exact_value("s", s)
    fmt = float_format(format)
    bk = backend(engine)
    shape = data.shape
    grid = np.ascontiguousarray(data, dtype=np.float64).reshape(-1, shape[-1])
    rows, width = grid.shape
    beta = _beta(bk, exact_theta, exact_s, width)
    values = np.empty((rows, width))
    lower = np.empty((rows, width))
    upper = np.empty((rows, width))
    certified = np.zeros((rows, width), dtype=bool)
    status = ["ok"] * rows
    precision = FAST_PRECISION
    largest = 0.0
    fallback_elements = 0
    with np.errstate(all="ignore"):
        top = grid.max(axis=1)  # NaN when the row has one
        special = ~np.isfinite(top)
        if not (2.0**-900 < beta.hi < 2.0**900) or not _ieee_arithmetic():
            special[:] = True
        exact_rows: list[int] = [int(r) for r in np.flatnonzero(special)]
        for start, stop in _row_blocks(np.flatnonzero(~special), width):
            view = slice(start, stop)
            out = (values[view], lower[view], upper[view], certified[view])
            fail, bound = _fast_chunk(grid[view], beta, log, fmt, out)
            largest = max(largest, bound)
            unsure = fail | ~certified[view].all(axis=1)
            fallback_elements += int(fail.sum()) * width
            fallback_elements += int((~certified[view][~fail]).sum())
            exact_rows.extend(start + int(r) for r in np.flatnonzero(unsure))
    for r in sorted(exact_rows):
        row_values, row_lower, row_upper, row_certified, row_status, bits = _exact_row(
            grid[r], exact_theta, exact_s, log, fmt, bk.name, max_precision
        )
        values[r], lower[r], upper[r], certified[r] = (
            row_values,
            row_lower,
            row_upper,
            row_certified,
        )
        status[r] = row_status
        precision = max(precision, bits)
    return DenseEvaluation(
        function="log_softmax" if log else "softmax",
        values=values.reshape(shape),
        lower=lower.reshape(shape),
        upper=upper.reshape(shape),
        certified=certified.reshape(shape),
        status=tuple(status),
        format=fmt.name,
        engine=bk.name,
        precision=precision,
        relative_bound=largest,
        fallback_rows=len(exact_rows),
        fallback_elements=fallback_elements,
    )
