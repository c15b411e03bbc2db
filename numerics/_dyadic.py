"""Exact comparisons and directed decimal strings for dyadic numbers of any exponent.

Ball endpoints can have exponents far beyond what a :class:`~fractions.Fraction` can
hold (``exp(−2·10³⁰⁰)`` has a binary exponent near ``−2.9·10³⁰⁰``), so decisions are
made on the ``(mantissa, exponent)`` pairs themselves, never on fractions or floats.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Literal

from softmax_dispersion.numerics.rounding import Dyadic

__all__ = ["compare", "decimal_string", "is_tight", "maximum", "minimum"]

#: Beyond this binary exponent, decimal strings are computed in interval arithmetic.
_EXACT_EXPONENT = 4_000


def _top(value: Dyadic) -> int:
    """``t`` with ``2**(t−1) <= |value| < 2**t`` (value nonzero)."""
    mantissa, exponent = value
    return abs(mantissa).bit_length() + exponent


def compare(a: Dyadic, b: Dyadic) -> int:
    """The sign of ``a − b`` (−1, 0 or 1), exactly.

    Examples
    --------
    >>> compare((1, -10**100), (0, 0)), compare((3, 0), (6, -1)), compare((-1, 5), (1, -5))
    (1, 0, -1)
    """
    (ma, ea), (mb, eb) = a, b
    sa, sb = (ma > 0) - (ma < 0), (mb > 0) - (mb < 0)
    if sa != sb or sa == 0:
        return (sa > sb) - (sa < sb)
    ta, tb = _top(a), _top(b)
    if ta != tb:  # different binades: the larger magnitude has the larger top
        return sa if ta > tb else -sa
    shift = min(ea, eb)  # same binade: the exponents differ by at most the mantissa sizes
    da, db = ma << (ea - shift), mb << (eb - shift)
    return (da > db) - (da < db)


def maximum(a: Dyadic, b: Dyadic) -> Dyadic:
    """The larger of two dyadics."""
    return a if compare(a, b) >= 0 else b


def minimum(a: Dyadic, b: Dyadic) -> Dyadic:
    """The smaller of two dyadics."""
    return a if compare(a, b) <= 0 else b


def is_tight(lower: Dyadic, upper: Dyadic, bits: int) -> bool:
    """Whether ``[lower, upper]`` has relative width at most ``2**−bits``.

    An interval that contains 0 or changes sign is never tight.

    Examples
    --------
    >>> is_tight((1, 0), (2**70 + 1, -70), 64), is_tight((0, 0), (1, -10), 8)
    (True, False)
    """
    lm, um = lower[0], upper[0]
    if lm == 0 or um == 0 or (lm > 0) != (um > 0):
        return False
    if abs(_top(lower) - _top(upper)) > 1:
        return False
    shift = min(lower[1], upper[1])
    low, high = lm << (lower[1] - shift), um << (upper[1] - shift)
    return abs(high - low) << bits <= min(abs(low), abs(high))


def _integer_digits(value: Fraction, digits: int, direction: Literal["down", "up"]) -> str:
    """``value`` to ``digits`` significant digits, rounded toward −∞ or +∞, exactly."""
    magnitude = abs(value)
    bits = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    power = math.floor(bits * math.log10(2)) - digits + 1
    while True:  # the estimate of the decimal exponent is off by at most one or two
        scaled = magnitude / Fraction(10) ** power
        if scaled >= 10**digits:
            power += 1
        elif scaled < 10 ** (digits - 1):
            power -= 1
        else:
            break
    away = (direction == "up") == (value > 0)  # round the magnitude up?
    integer = math.ceil(scaled) if away else math.floor(scaled)
    return _format(integer, power, value < 0)


def _format(integer: int, power: int, negative: bool) -> str:
    text = str(integer)
    exponent = power + len(text) - 1
    body = text[0] + ("." + text[1:] if len(text) > 1 else "")
    return ("-" if negative else "") + f"{body}e{exponent:+d}"


def _interval_digits(value: Dyadic, digits: int, direction: Literal["down", "up"]) -> str:
    """As :func:`_integer_digits` for huge exponents, through mpmath interval arithmetic."""
    from mpmath.ctx_iv import MPIntervalContext
    from mpmath.libmp import to_int

    mantissa, exponent = value
    ctx = MPIntervalContext()
    ctx.prec = abs(exponent).bit_length() + 4 * digits + 128
    magnitude = ctx.mpf(abs(mantissa)) * ctx.mpf(2) ** exponent  # exact: a power of two
    log10 = ctx.log(magnitude) / ctx.log(10)
    power = to_int(log10._mpi_[0], "f") - digits + 1
    low, high = (magnitude / ctx.mpf(10) ** power)._mpi_
    away = (direction == "up") == (mantissa > 0)
    integer = to_int(high, "c") if away else to_int(low, "f")
    return _format(integer, power, mantissa < 0)


def decimal_string(
    value: Dyadic, digits: int = 40, direction: Literal["down", "up"] = "down"
) -> str:
    """A decimal string of ``value`` rounded toward −∞ (``"down"``) or +∞ (``"up"``).

    The string has ``digits`` significant digits (or one more near a power of ten), so
    a lower end printed down and an upper end printed up still enclose the value.

    Examples
    --------
    >>> decimal_string((1, -1), 5), decimal_string((1, 0), 3, "up")
    ('5.0000e-1', '1.00e+0')
    >>> decimal_string((2, 0), 30) == "2." + "0" * 29 + "e+0"
    True
    >>> decimal_string((1, -3), 2, "down"), decimal_string((1, -3), 2, "up")
    ('1.2e-1', '1.3e-1')
    """
    mantissa, exponent = value
    if mantissa == 0:
        return "0"
    if abs(exponent) <= _EXACT_EXPONENT:
        return _integer_digits(Fraction(mantissa) * Fraction(2) ** exponent, digits, direction)
    return _interval_digits(value, digits, direction)
