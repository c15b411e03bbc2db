"""Rounding an enclosure to a float format, certified when both ends agree."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from softmax_dispersion.numerics.dense._double_double import (
    F64,
    Pair,
    binary_exponent,
    pow2,
    times_pow2,
    two_sum,
)
from softmax_dispersion.numerics.rounding import (
    FloatFormat,
)


def round_certify(
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
    e = binary_exponent(ah, subnormal) + scale
    q = np.maximum(e, emin) - (p - 1)
    # |shift| <= 1083 + 53: softmax has scale = K in [−1083, 0] and e <= K + 1, so q <= 0;
    # log-softmax has scale 0 and q <= 1024.  A shift far below 0 (a value far under the
    # format's range) may make t_h subnormal: t is then below 2**-500 and rounds to 0, and
    # the error (under 2**-1074) is in the slack.
    shift = scale - q
    half = shift >> 1
    up, down = pow2(half), pow2(shift - half)  # x·2**shift = x·up·down (see times_pow2)
    th = ah * up * down
    tl = al * up * down
    n = np.rint(th)
    fh, fl = two_sum(th - n, tl)  # f = fh + fl exactly
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
        threshold = pow2(top) - pow2(top - p - 1)
        # t >= t_h(1 − 2**-53); both floating steps on the left round by at most 2**-53.
        certified |= over & (th * (1 - 2.0**-51) - slack > threshold * (1 + 2.0**-50))
    magnitude = times_pow2(n, q)  # exact: n·2**q is a value of the format (or overflows)
    magnitude = np.where(magnitude > fmt.max_finite, np.inf, magnitude)
    return sign * magnitude, certified


def outward(center: F64, spread: F64) -> Pair:
    """Floats ``lo <= c − w`` and ``hi >= c + w`` for floats ``c`` and ``w >= 0``.

    With ``s >= (w + |c|·2**-50)(1 + 2**-50)`` (as computed below, subnormal losses
    included), ``fl(c ∓ s)`` is off ``c ∓ s`` by at most ``2**-53|c ∓ s|``, less than
    ``s − w``.
    """
    s = (spread + np.abs(center) * 2.0**-50) * (1 + 2.0**-49) + 2.0**-1070
    return center - s, center + s
