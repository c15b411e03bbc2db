"""Correct rounding to the four formats against exact rational rounding."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from softmax_dispersion.numerics.rounding import (
    FORMATS,
    Dyadic,
    FloatFormat,
    dyadic_from_float,
    float_format,
    round_dyadic,
    round_enclosure,
)


def rational_rounding(value: Fraction, fmt: FloatFormat) -> float:
    """An independent reference: round a fraction to ``fmt`` by comparing neighbours."""
    if value == 0:
        return 0.0
    sign = -1 if value < 0 else 1
    value = abs(value)
    exponent = value.numerator.bit_length() - value.denominator.bit_length()
    if Fraction(2) ** exponent > value:
        exponent -= 1
    quantum = Fraction(2) ** (max(exponent, fmt.emin) - fmt.precision + 1)
    below = math.floor(value / quantum)
    candidates = [below * quantum, (below + 1) * quantum]
    distances = [value - candidates[0], candidates[1] - value]
    if distances[0] < distances[1] or (distances[0] == distances[1] and below % 2 == 0):
        chosen = candidates[0]
    else:
        chosen = candidates[1]
    if chosen > Fraction(fmt.max_finite):
        return sign * math.inf
    return sign * float(chosen)


def as_dyadic(value: Fraction) -> Dyadic:
    """An exact dyadic for a fraction whose denominator is a power of two."""
    denominator = value.denominator
    assert denominator & (denominator - 1) == 0
    return value.numerator, -(denominator.bit_length() - 1)


formats = st.sampled_from(sorted(FORMATS))
mantissas = st.integers(min_value=-(2**70), max_value=2**70)
exponents = st.integers(min_value=-1200, max_value=1100)


@settings(max_examples=400)
@given(mantissa=mantissas, exponent=exponents, name=formats)
def test_random_dyadics_round_like_fractions(mantissa: int, exponent: int, name: str) -> None:
    fmt = FORMATS[name]
    exact = Fraction(mantissa) * Fraction(2) ** exponent
    assert round_dyadic((mantissa, exponent), fmt) == rational_rounding(exact, fmt)


@settings(max_examples=300)
@given(
    name=formats,
    index=st.integers(min_value=0, max_value=2**20),
    binade=st.integers(min_value=-30, max_value=30),
    offset=st.sampled_from([-1, 0, 1]),
)
def test_halfway_and_adjacent_cases(name: str, index: int, binade: int, offset: int) -> None:
    """Midpoints between neighbouring floats, and one tiny step either side of them."""
    fmt = FORMATS[name]
    quantum_exponent = max(binade, fmt.emin) - fmt.precision + 1
    significand = 2 ** (fmt.precision - 1) + index % 2 ** (fmt.precision - 1)
    if binade < fmt.emin:
        significand = index % 2 ** (fmt.precision - 1)
    midpoint = (Fraction(2 * significand + 1) / 2) * Fraction(2) ** quantum_exponent
    value = midpoint + offset * Fraction(2) ** (quantum_exponent - 80)
    assert round_dyadic(as_dyadic(value), fmt) == rational_rounding(value, fmt)


@pytest.mark.parametrize("name", ["float16", "float32"])
def test_agrees_with_numpy_casts_of_float64(name: str) -> None:
    rng = np.random.default_rng(1)
    values = np.concatenate(
        [rng.standard_normal(2000) * 10.0 ** rng.integers(-12, 12, 2000), [65519.0, 65520.0]]
    )
    dtype = np.float16 if name == "float16" else np.float32
    for value in values:
        with np.errstate(over="ignore"):
            expected = float(dtype(value))
        assert round_dyadic(dyadic_from_float(float(value)), FORMATS[name]) == expected


def test_subnormals_overflow_and_huge_exponents() -> None:
    f16, f64 = FORMATS["float16"], FORMATS["float64"]
    assert round_dyadic((1, -24), f16) == 2.0**-24
    assert round_dyadic((1, -25), f16) == 0.0  # exactly half the smallest subnormal: even
    assert round_dyadic((3, -26), f16) == 2.0**-24
    assert round_dyadic((65504, 0), f16) == 65504.0
    assert round_dyadic((65519, 0), f16) == 65504.0
    assert round_dyadic((65520, 0), f16) == math.inf
    assert round_dyadic((1, -(10**300)), f64) == 0.0
    assert round_dyadic((-1, 10**300), f64) == -math.inf
    assert round_dyadic((1, -1074), f64) == 5e-324


def round_through_float64(value: Fraction, fmt: FloatFormat) -> float:
    """The fault the design forbids: round to float64 first, then to the format."""
    return float(np.float16(float(value))) if fmt.name == "float16" else float(value)


def test_double_rounding_fault_is_caught() -> None:
    """Just above a float16 midpoint, rounding via float64 lands on the tie and goes wrong."""
    fmt = FORMATS["float16"]
    midpoint = Fraction(2049)  # between 2048 (even) and 2050
    value = midpoint + Fraction(1, 2**60)
    correct = round_dyadic(as_dyadic(value), fmt)
    assert correct == rational_rounding(value, fmt) == 2050.0
    assert round_through_float64(value, fmt) == 2048.0 != correct


def test_enclosure_is_certified_only_when_both_ends_agree() -> None:
    fmt = FORMATS["float32"]
    assert round_enclosure((1, 0), (1, 0), fmt) == (1.0, True)
    straddling = round_enclosure(
        as_dyadic(Fraction(1) + Fraction(1, 2**24) - Fraction(1, 2**40)),
        as_dyadic(Fraction(1) + Fraction(1, 2**24) + Fraction(1, 2**40)),
        fmt,
    )
    assert straddling[1] is False


def test_unknown_format_is_named() -> None:
    with pytest.raises(ValueError, match="unknown float format 'float8'"):
        float_format("float8")
