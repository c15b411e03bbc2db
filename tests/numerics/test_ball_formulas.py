"""ball_value: every theory formula, evaluated in ball arithmetic, encloses its exact value."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from softmax_dispersion.numerics import flint_available
from softmax_dispersion.numerics._backends import backend
from softmax_dispersion.numerics._dyadic import compare, decimal_string, is_tight
from softmax_dispersion.numerics.ball_formulas import ball_enclosure, ball_value, interval_ball
from softmax_dispersion.theory import FORMULAS
from softmax_dispersion.theory.adaptive_temperature import (
    adaptive_constants,
    adaptive_inverse_temperature,
)
from softmax_dispersion.theory.dispersion import dispersion_upper
from softmax_dispersion.theory.formulas import exact_value

ENGINES = ["arb", "mpmath"] if flint_available() else ["mpmath"]  # arb is optional
# sympy is imported inside the tests, after the theory layer, which imports it without
# python-flint ground types (a bare ``import sympy`` first would adopt them).

#: An admissible value for every parameter name the theory's formulas use.
SAMPLES: dict[str, str] = {
    "n": "1000",
    "delta": "2.5",
    "theta": "0.75",
    "beta": "1.25",
    "epsilon": "0.01",
    "s": "0.43",
    "Delta": "1.5",
    "H": "3.2",
    "u": "5.9604644775390625e-08",
    "gamma": "1e-6",
    "arg_error": "1e-7",
    "exp_ulps": "2",
    "log_ulps": "1",
    "gap_i": "3",
    "mean_gap": "0.5",
    "log_sum": "7",
    "variance": "1.5",
    "log_partition": "3.25",
    "mean_logit": "1.5",
    "dim": "64",
    # T12's rigorous bounds: their logs need a positive computed sum
    "exp_rel": "2.4e-7",
    "exp_abs": "2.8e-45",
    "log_rel": "2.4e-7",
    "log_abs": "2.8e-45",
    "tiny": "1.4e-45",
    "p_i": "0.001",
    "top": "100",
}


def as_fraction(value: mpmath.mpf) -> Fraction:
    sign, mantissa, exponent, _ = value._mpf_
    return (-1) ** sign * Fraction(int(mantissa)) * Fraction(2) ** int(exponent)


def sample(name: str) -> str:
    return SAMPLES.get(name, "1.75")  # radii, norms, gains, scales: any positive number


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(FORMULAS))
def test_every_formula_encloses_its_300_digit_value(name: str, engine: str) -> None:
    formula = FORMULAS[name]
    values = {str(arg): sample(str(arg)) for arg in formula.args}
    bk = backend(engine)
    with bk.working_precision(160):
        enclosure = ball_enclosure(bk, ball_value(formula, bk, **values))
        assert is_tight(enclosure.lower, enclosure.upper, 100) or enclosure.lower == enclosure.upper
    import sympy as sp

    exact = formula(**values)  # the exact sympy value
    with mpmath.workdps(300):
        reference = as_fraction(mpmath.mpf(sp.N(exact, 300)))
    assert enclosure.contains(reference)


@pytest.mark.parametrize("engine", ENGINES)
def test_adaptive_rule_is_exactly_one_outside_the_sharpening_window(engine: str) -> None:
    bk = backend(engine)
    with bk.working_precision(128):
        for entropy, exact_one in (("0.3", True), ("0.5", True), ("2", False), ("6", True)):
            beta = ball_value(adaptive_inverse_temperature, bk, H=entropy)
            low, high = bk.endpoints(beta)
            assert (low == high == (1, 0)) is exact_one
        # At the upper root P(H) = 1 the Max is undecided: [1, max P] (a midpoint-radius
        # ball may reach a rounding below 1), never the hull with P's lower end.
        root = ball_value(adaptive_constants().sharpening_ends, bk)
        beta = ball_value(adaptive_inverse_temperature, bk, H=root)
        assert compare(bk.endpoints(beta)[0], (2**100 - 1, -100)) >= 0


@pytest.mark.parametrize("engine", ENGINES)
def test_algebraic_constants_are_enclosed(engine: str) -> None:
    import sympy as sp

    constants = adaptive_constants()
    bk = backend(engine)
    with bk.working_precision(200):
        for value in vars(constants).values():
            enclosure = ball_enclosure(bk, ball_value(value, bk))
            reference = Fraction(str(sp.N(value, 80)))
            assert enclosure.contains(reference) or abs(
                Fraction(enclosure.midpoint()) - reference
            ) < Fraction(1, 10**15)
            assert is_tight(enclosure.lower, enclosure.upper, 150)


def test_values_are_checked_by_name() -> None:
    import sympy as sp

    bk = backend("mpmath")
    with pytest.raises(ValueError, match="theta must be a number > 0"):
        ball_value(dispersion_upper, bk, n=4, delta=1, theta=0)
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        ball_value(dispersion_upper, bk, n="2.5", delta=1, theta=1)
    with pytest.raises(TypeError, match="missing"):
        ball_value(dispersion_upper, bk, n=4, delta=1)
    with pytest.raises(ValueError, match="delta must be a finite number"):
        exact_value("delta", float("nan"))
    with pytest.raises(TypeError, match="cannot evaluate"):
        ball_value(sp.sin(sp.Symbol("x")), bk, x=1)


def test_balls_pass_through_and_precision_is_local() -> None:
    bk = backend("mpmath")
    before = mpmath.mp.prec
    with bk.working_precision(100):
        theta = interval_ball(bk, (1, 0), (1, 0))
        ball = ball_value(dispersion_upper, bk, n=16, delta=5, theta=theta)
    assert mpmath.mp.prec == before
    with bk.working_precision(100):
        exact = ball_value(dispersion_upper, bk, n=16, delta=5, theta=1)
        assert bk.endpoints(ball) == bk.endpoints(exact)


@settings(max_examples=60)
@given(
    mantissa=st.integers(-(2**80), 2**80).filter(bool),
    exponent=st.integers(-5000, 5000),
    digits=st.integers(30, 45),
)
def test_decimal_strings_round_outward(mantissa: int, exponent: int, digits: int) -> None:
    exact = Fraction(mantissa) * Fraction(2) ** exponent
    down = decimal_string((mantissa, exponent), digits, "down")
    up = decimal_string((mantissa, exponent), digits, "up")
    assert Fraction(down) <= exact <= Fraction(up)
    assert len(down.split("e")[0].replace("-", "").replace(".", "")) >= digits


def test_decimal_strings_of_huge_exponents() -> None:
    tiny = (3, -(10**12))
    down, up = decimal_string(tiny, 30, "down"), decimal_string(tiny, 30, "up")
    assert down.split("e")[1] == up.split("e")[1]
    assert Fraction(down.split("e")[0]) < Fraction(up.split("e")[0])


@given(
    a=st.tuples(st.integers(-(2**70), 2**70), st.integers(-300, 300)),
    b=st.tuples(st.integers(-(2**70), 2**70), st.integers(-300, 300)),
)
def test_dyadic_comparison_is_exact(a: tuple[int, int], b: tuple[int, int]) -> None:
    fa = Fraction(a[0]) * Fraction(2) ** a[1]
    fb = Fraction(b[0]) * Fraction(2) ** b[1]
    assert compare(a, b) == (fa > fb) - (fa < fb)
