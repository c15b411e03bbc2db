"""Correct rounding of exact binary numbers to float16, bfloat16, float32 and float64.

An exact binary number is a *dyadic* ``(mantissa, exponent)`` pair meaning
``mantissa · 2**exponent`` with integers of any size, which is what the endpoints of a
ball or interval are.  :func:`round_dyadic` rounds one directly to the target format
(round to nearest, ties to even, subnormals and overflow included) using integer
arithmetic only, never through a wider float: rounding twice can change the result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

__all__ = [
    "FORMATS",
    "Dyadic",
    "FloatFormat",
    "dyadic_from_float",
    "dyadic_to_fraction",
    "float_format",
    "round_dyadic",
    "round_enclosure",
]

Dyadic = tuple[int, int]
"""An exact binary number ``mantissa · 2**exponent``."""


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format: precision ``p`` (with the hidden bit) and range.

    Examples
    --------
    >>> FORMATS["float16"].max_finite
    65504.0
    >>> FORMATS["float32"].unit_roundoff == 2.0**-24
    True
    """

    name: str
    precision: int
    emin: int
    emax: int

    @property
    def max_finite(self) -> float:
        """The largest finite value."""
        return math.ldexp(2**self.precision - 1, self.emax - self.precision + 1)

    @property
    def smallest_subnormal(self) -> float:
        """The smallest positive value."""
        return math.ldexp(1, self.emin - self.precision + 1)

    @property
    def unit_roundoff(self) -> float:
        """``u = 2**-p``, the relative error bound of round to nearest."""
        return math.ldexp(1, -self.precision)


FORMATS: dict[str, FloatFormat] = {
    fmt.name: fmt
    for fmt in (
        FloatFormat("float16", 11, -14, 15),
        FloatFormat("bfloat16", 8, -126, 127),
        FloatFormat("float32", 24, -126, 127),
        FloatFormat("float64", 53, -1022, 1023),
    )
}
"""The supported formats by name."""


def float_format(name: str) -> FloatFormat:
    """The format called ``name``; a :class:`ValueError` names the known ones."""
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(
            f"unknown float format {name!r}; known formats: {', '.join(FORMATS)}"
        ) from None


def dyadic_from_float(value: float) -> Dyadic:
    """The exact dyadic value of a finite float (any float is one).

    Examples
    --------
    >>> dyadic_from_float(0.75)
    (3, -2)
    """
    if not math.isfinite(value):
        raise ValueError(f"{value} has no dyadic value")
    numerator, denominator = value.as_integer_ratio()
    return numerator, -(denominator.bit_length() - 1)


def dyadic_to_fraction(value: Dyadic) -> Fraction:
    """The dyadic as an exact fraction (for moderate exponents only)."""
    mantissa, exponent = value
    return Fraction(mantissa) * Fraction(2) ** exponent


def round_dyadic(value: Dyadic, fmt: FloatFormat) -> float:
    """Round ``mantissa · 2**exponent`` to the nearest value of ``fmt`` (ties to even).

    The result is returned as a Python float, which holds every value of the four
    formats exactly; values beyond the largest finite one round to ``±inf`` as IEEE 754
    prescribes (at or above ``max_finite`` plus half an ulp).  Exponents of any size
    are fine: ``(1, -10**300)`` rounds to 0.0.

    Parameters
    ----------
    value
        The exact number as ``(mantissa, exponent)``.
    fmt
        The target format.

    Returns
    -------
    float
        The correctly rounded value.

    Notes
    -----
    With ``L`` the bit length of ``|mantissa|`` the value lies in ``[2**e, 2**(e+1))``
    for ``e = L − 1 + exponent``; its quantum is ``2**(max(e, emin) − p + 1)``, and the
    rounding is decided by the discarded bits against half a quantum.

    Examples
    --------
    >>> f16 = FORMATS["float16"]
    >>> round_dyadic((2049, 0), f16), round_dyadic((2051, 0), f16)  # ties to even
    (2048.0, 2052.0)
    >>> round_dyadic((1, -25), f16), round_dyadic((3, -26), f16)  # subnormal halfway
    (0.0, 5.960464477539063e-08)
    >>> round_dyadic((65520, 0), f16)
    inf
    """
    mantissa, exponent = value
    if mantissa == 0:
        return 0.0
    sign = -1.0 if mantissa < 0 else 1.0
    magnitude = abs(mantissa)
    length = magnitude.bit_length()
    top = length - 1 + exponent
    if top > fmt.emax:
        return sign * math.inf
    quantum = max(top, fmt.emin) - fmt.precision + 1
    shift = quantum - exponent
    if shift <= 0:
        rounded = magnitude << -shift
    elif shift > length:  # below half a quantum: rounds to zero
        rounded = 0
    else:
        rounded = magnitude >> shift
        remainder = magnitude - (rounded << shift)
        half = 1 << (shift - 1)
        if remainder > half or (remainder == half and rounded & 1):
            rounded += 1
    if rounded >= 1 << fmt.precision and quantum == fmt.emax - fmt.precision + 1:
        return sign * math.inf
    return sign * math.ldexp(rounded, quantum)


def round_enclosure(lower: Dyadic, upper: Dyadic, fmt: FloatFormat) -> tuple[float, bool]:
    """Round an enclosure: the rounded lower end, and whether both ends agree.

    When both ends round to the same float, that float is the correctly rounded value
    of every number in between, the exact one included: the result is *certified*.

    Examples
    --------
    >>> round_enclosure((1, -2), (1 + 2**40, -42), FORMATS["float32"])
    (0.25, True)
    """
    low = round_dyadic(lower, fmt)
    return low, low == round_dyadic(upper, fmt)
