"""T6–T7: the entropy claims, false siblings, and the formulas checked against an
independent high-precision evaluation of the softmax entropy.

The calculus rules T7 uses (the kernel's ``SumDerivative`` and ``Differentiate``) and
their false uses are tested in ``test_kernel``."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

import mpmath
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from softmax_dispersion.theory import entropy
from softmax_dispersion.theory.entropy import (
    T6,
    T7,
    entropy_beta_derivative,
    entropy_from_log_partition,
    entropy_lower_bound,
    entropy_lower_bound_paper,
    entropy_theta_derivative,
    variance,
)
from softmax_dispersion.theory.formulas import FORMULAS
from softmax_dispersion.theory.kernel import Claim, ClaimResult, SumOver
from softmax_dispersion.theory.symbols import M, beta, m, n, theta

DIGITS = 60
TOLERANCE = mpmath.mpf(10) ** -40


# --------------------------------------------------------------------------------------
# The claims export their formulas (that they verify is test_claims's, one test per claim).


@pytest.mark.parametrize("claim", [T6, T7], ids=lambda c: c.id)
def test_claim_formulas_are_registered(claim: Claim) -> None:
    for name in claim.formulas:
        assert name in FORMULAS


def test_module_runs_as_a_proof_check_script() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "softmax_dispersion.theory.entropy"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "T6" in done.stdout and "T7" in done.stdout
    assert "FAIL" not in done.stdout


# --------------------------------------------------------------------------------------
# False siblings: the same kind of proof for a false statement is rejected.

_c = sp.exp((M - m) / theta)


def _t6_sibling(p_max_bound: sp.Expr, bound: sp.Expr, paper_bound: sp.Expr) -> Claim:
    return dataclasses.replace(
        T6,
        id="T6-false",
        title="a false entropy floor",
        statement=entropy.entropy_bound_statement(bound, paper_bound),
        proof=lambda: entropy.entropy_bound_proof(p_max_bound, bound, paper_bound),
    )


def _t7_sibling(theta_slope: sp.Expr, beta_slope: sp.Expr) -> Claim:
    return dataclasses.replace(
        T7,
        id="T7-false",
        title="a false entropy derivative",
        statement=entropy.temperature_derivative_statement(theta_slope, beta_slope),
        proof=lambda: entropy.temperature_derivative_proof(theta_slope, beta_slope),
    )


def _failed_steps(result: ClaimResult) -> list[str]:
    return [step.description for step in result.steps if not step.verified]


def test_t6_sibling_with_n_instead_of_n_minus_1_is_rejected() -> None:
    # p_max <= c/(c+n) is stronger than T1 gives (and false for the spike).
    sibling = _t6_sibling(_c / (_c + n), sp.log(_c + n) - (M - m) / theta, entropy._paper_bound)
    result = sibling.check()
    assert result.verified is False
    assert result.problem.startswith("a step failed")
    assert "p_max <= c/(c+n−1) (T1): take logarithms" in _failed_steps(result)


def test_t6_sibling_with_wrong_sign_is_rejected() -> None:
    wrong = sp.log(_c + n - 1) + (M - m) / theta
    result = _t6_sibling(entropy._p_max_bound, wrong, entropy._paper_bound).check()
    assert result.verified is False
    assert "−log(c/(c+n−1)) = log(c+n−1) − δ/θ" in _failed_steps(result)


def test_t6_sibling_with_a_too_strong_paper_bound_is_rejected() -> None:
    wrong = sp.log(n + 1) - (M - m) / theta
    result = _t6_sibling(entropy._p_max_bound, entropy._bound, wrong).check()
    assert result.verified is False
    assert _failed_steps(result) == ["chain the three bounds"]


@pytest.mark.parametrize(
    ("theta_slope", "beta_slope", "failing"),
    [
        (variance / theta**2, -beta * variance, "substitute A₀', A₁'"),
        (-variance / theta**3, -beta * variance, "substitute A₀', A₁'"),
        (variance / theta**3, beta * variance, "substitute B₀', B₁'"),
        (variance / theta**3, -(beta**2) * variance, "substitute B₀', B₁'"),
    ],
    ids=["theta-squared", "theta-sign", "beta-sign", "beta-squared"],
)
def test_t7_sibling_is_rejected(theta_slope: sp.Expr, beta_slope: sp.Expr, failing: str) -> None:
    result = _t7_sibling(theta_slope, beta_slope).check()
    assert result.verified is False
    assert result.problem.startswith("a step failed")
    assert failing in _failed_steps(result)


def test_a_true_proof_of_another_statement_is_rejected() -> None:
    claim = dataclasses.replace(
        T7,
        id="T7-mismatch",
        title="the right proof under a wrong statement",
        statement=entropy.temperature_derivative_statement(variance / theta**2, -beta * variance),
    )
    result = claim.check()
    assert result.verified is False
    assert result.problem == "the last step does not conclude the statement"


# --------------------------------------------------------------------------------------
# The formulas against a direct high-precision evaluation of the softmax entropy.


def _softmax(logits: Sequence[mpmath.mpf], scale: mpmath.mpf) -> list[mpmath.mpf]:
    top = max(logits)
    weights = [mpmath.exp((e - top) * scale) for e in logits]
    total = mpmath.fsum(weights)
    return [w / total for w in weights]


def _entropy(logits: Sequence[mpmath.mpf], scale: mpmath.mpf) -> mpmath.mpf:
    return -mpmath.fsum(p * mpmath.log(p) for p in _softmax(logits, scale) if p > 0)


def _variance(logits: Sequence[mpmath.mpf], scale: mpmath.mpf) -> mpmath.mpf:
    p = _softmax(logits, scale)
    mean = mpmath.fsum(pi * e for pi, e in zip(p, logits, strict=True))
    return mpmath.fsum(pi * (e - mean) ** 2 for pi, e in zip(p, logits, strict=True))


_logits = st.lists(
    st.floats(min_value=-30, max_value=30, allow_nan=False, allow_infinity=False),
    min_size=1,
    max_size=40,
)
_temperatures = st.floats(min_value=0.05, max_value=20)
_slack = st.floats(min_value=0, max_value=5)


@settings(max_examples=80)
@given(_logits, _temperatures, _slack, _slack)
def test_entropy_floor_holds_for_random_logits(
    raw: list[float], temperature: float, below: float, above: float
) -> None:
    with mpmath.workdps(DIGITS):
        logits = [mpmath.mpf(e) for e in raw]
        th = mpmath.mpf(temperature)
        spread = max(logits) + mpmath.mpf(above) - (min(logits) - mpmath.mpf(below))
        h = _entropy(logits, 1 / th)
        top = max(_softmax(logits, 1 / th))
        size = len(logits)
        floor = entropy_lower_bound.mpmath(size, spread, th)
        paper = entropy_lower_bound_paper.mpmath(size, spread, th)
        assert h >= -mpmath.log(top) - TOLERANCE
        assert -mpmath.log(top) >= floor - TOLERANCE
        assert floor >= paper - TOLERANCE


@settings(max_examples=40)
@given(
    st.integers(min_value=1, max_value=10**6),
    st.floats(min_value=0, max_value=40),
    _temperatures,
)
def test_entropy_floor_is_attained_as_minus_log_p_max_by_the_spike(
    size: int, spread: float, temperature: float
) -> None:
    with mpmath.workdps(DIGITS):
        th, d = mpmath.mpf(temperature), mpmath.mpf(spread)
        # spike: one logit at d, size - 1 at 0; p_max from the definition, exactly once
        p_max = 1 / (1 + (size - 1) * mpmath.exp(-d / th))
        floor = entropy_lower_bound.mpmath(size, d, th)
        assert abs(-mpmath.log(p_max) - floor) <= TOLERANCE * max(1, abs(floor))


@settings(max_examples=60)
@given(_logits, _temperatures)
def test_entropy_from_log_partition_matches_the_definition(
    raw: list[float], temperature: float
) -> None:
    with mpmath.workdps(DIGITS):
        logits = [mpmath.mpf(e) for e in raw]
        th = mpmath.mpf(temperature)
        log_z = mpmath.log(mpmath.fsum(mpmath.exp(e / th) for e in logits))
        p = _softmax(logits, 1 / th)
        mean = mpmath.fsum(pi * e for pi, e in zip(p, logits, strict=True))
        value = entropy_from_log_partition.mpmath(log_z, mean, th)
        assert abs(value - _entropy(logits, 1 / th)) <= TOLERANCE * max(1, abs(log_z))


def _close(a: mpmath.mpf, b: mpmath.mpf, digits: int = 25) -> bool:
    return bool(abs(a - b) <= mpmath.mpf(10) ** -digits * max(1, abs(a), abs(b)))


_moderate_logits = st.lists(
    st.floats(min_value=-5, max_value=5, allow_nan=False, allow_infinity=False),
    min_size=1,
    max_size=12,
)


@settings(max_examples=40)
@given(_moderate_logits, st.floats(min_value=0.2, max_value=10))
def test_theta_derivative_matches_finite_differences(raw: list[float], temperature: float) -> None:
    with mpmath.workdps(DIGITS):
        logits = [mpmath.mpf(e) for e in raw]
        th = mpmath.mpf(temperature)
        slope = mpmath.diff(lambda s: _entropy(logits, 1 / s), th)
        expected = entropy_theta_derivative.mpmath(_variance(logits, 1 / th), th)
        assert _close(slope, expected)
        assert expected >= 0


@settings(max_examples=40)
@given(_moderate_logits, st.floats(min_value=0.1, max_value=5))
def test_beta_derivative_matches_finite_differences(raw: list[float], inverse: float) -> None:
    with mpmath.workdps(DIGITS):
        logits = [mpmath.mpf(e) for e in raw]
        b = mpmath.mpf(inverse)
        slope = mpmath.diff(lambda s: _entropy(logits, s), b)
        expected = entropy_beta_derivative.mpmath(_variance(logits, b), b)
        assert _close(slope, expected)
        assert expected <= 0


def _closed_form(expr: sp.Expr, sums: Sequence[SumOver], var: sp.Symbol) -> Callable[..., Any]:
    names = sp.symbols("a0 a1 a2", real=True)
    plain = expr.subs({s.symbol: name for s, name in zip(sums, names, strict=True)})
    evaluate: Callable[..., Any] = sp.lambdify((var, *names), plain, modules="mpmath")
    return evaluate


@settings(max_examples=40)
@given(_logits, _temperatures)
def test_t7_closed_forms_match_the_definition(raw: list[float], temperature: float) -> None:
    h_theta = _closed_form(entropy.entropy_of_theta, entropy.theta_sums, theta)
    v_theta = _closed_form(entropy.variance_of_theta, entropy.theta_sums, theta)
    h_beta = _closed_form(entropy.entropy_of_beta, entropy.beta_sums, beta)
    v_beta = _closed_form(entropy.variance_of_beta, entropy.beta_sums, beta)
    with mpmath.workdps(DIGITS):
        logits = [mpmath.mpf(e) for e in raw]
        th = mpmath.mpf(temperature)
        sums = [mpmath.fsum(e**r * mpmath.exp(e / th) for e in logits) for r in range(3)]
        h, v = _entropy(logits, 1 / th), _variance(logits, 1 / th)
        scale = max(1, max(abs(e) for e in logits) / th) ** 2
        for value, target in (
            (h_theta(th, *sums), h),
            (h_beta(1 / th, *sums), h),
            (v_theta(th, *sums), v),
            (v_beta(1 / th, *sums), v),
        ):
            assert abs(value - target) <= mpmath.mpf(10) ** -30 * scale


@pytest.mark.parametrize(
    "name",
    [
        "entropy_lower_bound",
        "entropy_lower_bound_paper",
        "entropy_from_log_partition",
        "entropy_theta_derivative",
        "entropy_beta_derivative",
    ],
)
def test_numpy_and_mpmath_evaluators_agree(name: str) -> None:
    f = FORMULAS[name]
    values = (3.0, 2.0, 0.5)[: len(f.args)]
    with mpmath.workdps(30):
        exact = f.mpmath(*values)
    assert float(f.numpy(*values)) == pytest.approx(float(exact), rel=1e-12)


# --------------------------------------------------------------------------------------
# Documentation: every export has Notes and Examples, and the attribute docstrings'
# examples run.
