"""Error-free transformations and double-double arithmetic from IEEE-exact numpy operations."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

#
# With round-to-nearest binary64 and gradual underflow (numpy's +, −, ×, checked at each
# call by ieee_arithmetic; no FMA is used; a subnormal product adds an absolute error
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


F64 = npt.NDArray[np.float64]


Pair = tuple[F64, F64]


X_EXP_MIN = -750.0
"""Below this shifted logit ``exp`` is not evaluated: the softmax value is under 2**-1082."""


_SPLITTER = 134217729.0  # 2**27 + 1, Dekker's splitting constant


def two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def fast_two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    s = a + b
    return s, b - (s - a)


def dekker_split(a: Any) -> tuple[Any, Any]:
    t = _SPLITTER * a
    hi = t - (t - a)
    return hi, a - hi


def two_prod(a: Any, b: Any, b_hi: Any, b_lo: Any) -> tuple[Any, Any]:
    p = a * b
    a_hi, a_lo = dekker_split(a)
    return p, ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


def dd_add(xh: Any, xl: Any, yh: Any, yl: Any) -> tuple[Any, Any]:
    """AccurateDWPlusDW: relative error at most 3u²/(1 − 4u) (any signs)."""
    sh, sl = two_sum(xh, yh)
    th, tl = two_sum(xl, yl)
    vh, vl = fast_two_sum(sh, sl + th)
    return fast_two_sum(vh, tl + vl)


def dd_add_fp(xh: Any, xl: Any, y: Any) -> tuple[Any, Any]:
    """DWPlusFP: relative error at most 2u²."""
    sh, sl = two_sum(xh, y)
    return fast_two_sum(sh, xl + sl)


def dd_mul_fp(xh: Any, xl: Any, y: Any, y_hi: Any, y_lo: Any) -> tuple[Any, Any]:
    """DWTimesFP with ``y`` already split; relative error at most 3u² without an FMA."""
    ch, cl1 = two_prod(xh, y, y_hi, y_lo)
    return fast_two_sum(ch, xl * y + cl1)


def dd_mul(xh: Any, xl: Any, yh: Any, yl: Any) -> tuple[Any, Any]:
    """DWTimesDW: relative error at most 8u² without an FMA."""
    y_hi, y_lo = dekker_split(yh)
    ch, cl1 = two_prod(xh, yh, y_hi, y_lo)
    cl2 = xh * yl + xl * yh
    return fast_two_sum(ch, cl1 + cl2)


def dd_add_dominant(xh: Any, xl: Any, yh: Any, yl: Any) -> tuple[Any, Any]:
    """SloppyDWPlusDW, for operands of one sign or ``|y| <= 2**-8|x|`` (no cancellation).

    The only roundings are ``v = fl(x_l + y_l)`` and ``w = fl(s_l + v)``; with ``|x_l| <=
    u|x_h|`` they cost at most ``u²(|s_h| + (2 + 2u)(|x_h| + |y_h|))``, and without
    cancellation ``|x_h| + |y_h| <= (1 + 2**-6.9)|x + y|``: at most ``3.05u²`` relative.
    """
    sh, sl = two_sum(xh, yh)
    return fast_two_sum(sh, sl + (xl + yl))


def ieee_arithmetic() -> bool:
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


def pow2(k: Any) -> F64:
    """``2.0**k`` for integers ``−1022 <= k <= 1023``, built from the bits (exact)."""
    return ((np.asarray(k, dtype=np.int64) + 1023) << 52).view(np.float64)


def times_pow2(x: Any, k: Any) -> Any:
    """``x·2**k`` for ``|k| <= 2044`` in two exact steps.

    Equal to the correctly rounded ``ldexp(x, k)`` unless ``x·2**⌊k/2⌋`` underflows; then
    off by less than ``2**-1074`` (absolute).
    """
    half = np.asarray(k, dtype=np.int64) >> 1
    return x * pow2(half) * pow2(k - half)


def binary_exponent(a: F64, subnormal: bool) -> npt.NDArray[np.int64]:
    """``⌊log₂ a⌋`` for ``a > 0`` from the bits (``<= −1087`` for ``a = 0``)."""
    if not subnormal:
        return (a.view(np.int64) >> 52) - 1023
    small = a < 2.0**-1022
    lifted = np.where(small, a * 2.0**64, a)
    return (lifted.view(np.int64) >> 52) - np.where(small, 1023 + 64, 1023)
