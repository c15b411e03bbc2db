"""T12: the rounding-error claim, its false siblings, and the exported bounds checked
against softmax computed in float32 and float16 by numpy.

The derivative rules T12 uses (the kernel's ``SumDerivative`` and ``Differentiate``)
and their false uses are tested in ``test_kernel``."""

from __future__ import annotations

import dataclasses
import doctest
import math
from typing import Any

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from softmax_dispersion.theory import rounding_error
from softmax_dispersion.theory.formulas import FORMULAS
from softmax_dispersion.theory.kernel import (
    Cite,
    Claim,
    ClaimResult,
    Differentiate,
    Implied,
    Step,
)
from softmax_dispersion.theory.rounding_error import (
    T12,
    G,
    arg_error,
    computed_softmax,
    derivative_at_zero,
    exp_ulps,
    fixed_in_tau,
    gamma,
    gamma_pairwise,
    gamma_recursive,
    log_softmax_absolute_error_bound,
    log_softmax_bound,
    log_softmax_first_order,
    mean_gap,
    p_i,
    sigma,
    softmax_bound,
    softmax_first_order,
    softmax_relative_error_bound,
    tau,
    two_sided,
    u,
    x_i,
)
from softmax_dispersion.theory.symbols import n as n_terms

_CACHE: dict[str, ClaimResult] = {}
_RESULTS: dict[str, ClaimResult] = {}


def checked(claim: Claim) -> ClaimResult:
    """Check ``claim`` with the kernel's citation cache, shared by this module's false
    siblings: each cites T12, which the kernel then checks once (5–15 s), not once per
    sibling.  The kernel fills the cache itself and takes from it only results it issued
    in this process for that very claim; no test puts anything into it."""
    if claim.id not in _RESULTS:
        _RESULTS[claim.id] = claim.check(_CACHE)
    return _RESULTS[claim.id]


def failures(result: ClaimResult) -> list[str]:
    return [f"{s.description}: {s.detail}" for s in result.steps if not s.verified]


# --------------------------------------------------------------------------------------
# T12 proves exactly the exported bounds.


def test_t12_proves_in_many_steps() -> None:
    # that it verifies is test_claims' (one test per claim)
    assert len(T12.proof()) >= 20


def test_t12_states_the_exported_bounds() -> None:
    parts = set(sp.And.make_args(T12.statement))
    soft = softmax_relative_error_bound.expr.subs({rounding_error.gap_i: -x_i, mean_gap: G})
    log = log_softmax_absolute_error_bound.expr.subs({rounding_error.gap_i: -x_i, mean_gap: G})
    assert set(sp.And.make_args(two_sided(softmax_first_order, soft))) <= parts
    assert set(sp.And.make_args(two_sided(log_softmax_first_order, log))) <= parts


def test_t12_cites_its_standard_facts_in_the_assumptions() -> None:
    assert "Higham" in T12.source
    assumed = {sp.sstr(a) for a in T12.assumptions}
    assert "-gamma <= sigma" in assumed and "sigma <= gamma" in assumed
    assert set(T12.formulas) == {
        "softmax_relative_error_bound",
        "softmax_reciprocal_relative_error_bound",
        "log_softmax_absolute_error_bound",
        "exp_log_softmax_relative_error_bound",
        "lse_log_softmax_absolute_error_bound",
        "exp_lse_relative_error_bound",
        "lae_log_softmax_absolute_error_bound",
        "exp_lae_relative_error_bound",
        "gamma_recursive",
        "gamma_pairwise",
    }


def test_t12_states_every_formulation_and_the_summation_tree() -> None:
    parts = set(sp.And.make_args(T12.statement))
    for first_order, bound in (
        (softmax_first_order + rounding_error.rho, rounding_error.reciprocal_bound),
        (log_softmax_first_order + rounding_error.eps_out, rounding_error.exp_log_bound),
        (rounding_error.lse_first_order, rounding_error.lse_bound),
        (rounding_error.lse_first_order + rounding_error.eps_out, rounding_error.exp_lse_bound),
    ):
        assert set(sp.And.make_args(two_sided(first_order, bound))) <= parts
    assert set(sp.And.make_args(rounding_error._tree_node_bounded)) <= parts
    assert rounding_error._depth_bounded in parts


# --------------------------------------------------------------------------------------
# False siblings are rejected: each with a counterexample, not a timeout.


def _sibling(claim_id: str, statement: sp.Basic) -> Claim:
    """A claim that ``statement`` follows from T12 (its statement, cited, is a fact)."""
    return dataclasses.replace(
        T12,
        id=claim_id.replace(" ", "-"),  # an id is letters, digits, _ . - (no spaces)
        title="a false sibling of T12",
        statement=statement,
        source="test",
        proof=lambda: [Cite(T12, "T12"), Implied(statement, "follows from T12")],
        cites=(T12,),
    )


def _rejected_with_counterexample(result: ClaimResult) -> None:
    assert result.verified is False
    assert result.problem.startswith("a step failed")
    assert result.steps[0].verified, result.steps[0].detail
    assert "counterexample" in result.steps[-1].detail


FALSE_SOFTMAX_BOUNDS = {
    "no mean gap": softmax_bound.subs(G, 0),
    "no summation error": softmax_bound.subs(gamma, 0),
    "exp error counted once": softmax_bound.subs(exp_ulps, exp_ulps / 2),
    "no final division": softmax_bound - u,
}


@pytest.mark.parametrize("name", sorted(FALSE_SOFTMAX_BOUNDS))
def test_false_softmax_bound_is_rejected(name: str) -> None:
    checked(T12)
    bound = FALSE_SOFTMAX_BOUNDS[name]
    result = checked(_sibling(f"T12-false-{name}", two_sided(softmax_first_order, bound)))
    _rejected_with_counterexample(result)


R = rounding_error
FALSE_FORMULATION_BOUNDS = {
    # the reciprocal's rounding forgotten: the divide bound for the reciprocal form
    "reciprocal without rho": (softmax_first_order + R.rho, softmax_bound),
    # the exp of the log-softmax judged by the softmax bound (the false alarm)
    "exp-log by the softmax bound": (log_softmax_first_order + R.eps_out, softmax_bound),
    "exp-log without the final exp": (
        log_softmax_first_order + R.eps_out,
        log_softmax_bound,
    ),
    # the log-sum-exp's rounding, which grows with |e_max|, left out
    "lse without its rounding": (
        R.lse_first_order,
        R.lse_bound - R.lse_u * (R.top + R.log_sum),
    ),
    "lse by the shifted log bound": (R.lse_first_order, log_softmax_bound),
    "exp-lse without the final exp": (R.lse_first_order + R.eps_out, R.lse_bound),
}


@pytest.mark.parametrize("name", sorted(FALSE_FORMULATION_BOUNDS))
def test_false_formulation_bound_is_rejected(name: str) -> None:
    checked(T12)
    value, bound = FALSE_FORMULATION_BOUNDS[name]
    result = checked(_sibling(f"T12-false-{name}", two_sided(value, bound)))
    _rejected_with_counterexample(result)


def test_false_summation_tree_steps_are_rejected() -> None:
    checked(T12)
    node = two_sided(
        R.tree_node_sum - (R.S_a + R.S_b), R.gamma_of(R.depth) * (R.S_a + R.S_b)
    )  # a node within γ_k, as if the addition were exact
    _rejected_with_counterexample(checked(_sibling("T12-false-node", node)))
    pairwise = sp.Le(R.gamma_of(R.tree_depth), R.gamma_of(sp.log(n_terms, 2)))
    _rejected_with_counterexample(checked(_sibling("T12-false-depth", pairwise)))


def test_false_log_add_exp_steps_are_rejected() -> None:
    checked(T12)
    # a node's share times its size bounded by |lse| alone (the +1 forgotten)
    share = sp.Le(sp.exp(-R.share_gap) * (R.lse_size + R.share_gap), R.lse_size)
    _rejected_with_counterexample(checked(_sibling("T12-false-share", share)))
    # the children's errors added instead of weighted by their shares
    unweighted = R.alpha_a + R.alpha_b + R.zeta + R.delta_lae * R.lae_node_value
    step = Differentiate(
        R.computed_lae_node(tau),
        tau,
        "unweighted",
        point=sp.Integer(0),
        value=unweighted,
        constants=R._fixed_in_lae_node,
    )
    facts = [*T12.assumptions]
    assert step.check(facts).verified is False
    right = Differentiate(
        R.computed_lae_node(tau),
        tau,
        "weighted",
        point=sp.Integer(0),
        value=R.lae_node_first_order,
        constants=R._fixed_in_lae_node,
    )
    assert right.check(facts).verified is True


def test_false_log_softmax_bound_is_rejected() -> None:
    checked(T12)
    without_subtraction = log_softmax_bound - u * (rounding_error.log_sum - x_i)
    statement = two_sided(log_softmax_first_order, without_subtraction)
    _rejected_with_counterexample(checked(_sibling("T12-false-log", statement)))


def _prefix_until(kind: type[Step]) -> list[Step]:
    """T12's steps before its first step of type ``kind``."""
    steps = list(T12.proof())
    first = next(i for i, step in enumerate(steps) if isinstance(step, kind))
    return steps[:first]


@pytest.mark.parametrize(
    "wrong",
    [
        softmax_first_order + 2 * sigma,  # the sum's error with the wrong sign
        softmax_first_order + 2 * rounding_error.D,  # the weighted mean with the wrong sign
        softmax_first_order - rounding_error.omega,  # the division forgotten
    ],
    ids=["sign of sigma", "sign of the mean", "no omega"],
)
def test_wrong_first_order_term_is_rejected(wrong: sp.Expr) -> None:
    step = Differentiate(
        computed_softmax(tau) / p_i,
        tau,
        "wrong",
        point=sp.Integer(0),
        value=wrong,
        constants=fixed_in_tau,
    )
    claim = dataclasses.replace(
        T12,
        id="T12-false-derivative",
        title="a wrong first-order term",
        statement=step.conclusion,
        proof=lambda: [*_prefix_until(Differentiate), step],
    )
    result = claim.check()
    assert result.verified is False
    assert [s.verified for s in result.steps[:-1]] == [True] * (len(result.steps) - 1)
    assert "counterexample" in result.steps[-1].detail


def test_the_right_first_order_term_passes_the_same_check() -> None:
    value = softmax_first_order
    step = Differentiate(
        computed_softmax(tau) / p_i,
        tau,
        "right",
        point=sp.Integer(0),
        value=value,
        constants=fixed_in_tau,
    )
    claim = dataclasses.replace(
        T12,
        id="T12-derivative",
        title="the first-order term",
        statement=sp.Eq(derivative_at_zero(computed_softmax(tau) / p_i), value, evaluate=False),
        proof=lambda: [*_prefix_until(Differentiate), step],
    )
    assert claim.check().verified is True


def test_the_first_order_term_must_declare_what_tau_holds_fixed() -> None:
    held = set(fixed_in_tau)
    undeclared = Differentiate(
        computed_softmax(tau) / p_i,
        tau,
        "no constants declared",
        point=sp.Integer(0),
        value=softmax_first_order,
    )
    facts = [*T12.assumptions, *(step.conclusion for step in _prefix_until(Differentiate))]
    result = undeclared.check(facts)
    assert result.verified is False
    assert "held constant" in result.detail
    assert (computed_softmax(tau) / p_i).free_symbols - {tau} <= held


# --------------------------------------------------------------------------------------
# The formulas: registered, exact, and their evaluators agree.


def test_formulas_are_registered() -> None:
    for name in T12.formulas:
        assert FORMULAS[name] is getattr(rounding_error, name)
    assert softmax_relative_error_bound.args == (
        rounding_error.gap_i,
        mean_gap,
        u,
        exp_ulps,
        gamma,
        arg_error,
    )
    assert [str(a) for a in log_softmax_absolute_error_bound.args] == [
        "gap_i",
        "mean_gap",
        "log_sum",
        "u",
        "exp_ulps",
        "log_ulps",
        "gamma",
        "arg_error",
    ]


def test_formula_values() -> None:
    half = sp.Rational(1, 2**11)
    assert gamma_recursive(n=1, u=half) == 0
    assert gamma_recursive(n=3, u=half) == sp.Rational(2, 2**11 - 2)
    assert gamma_pairwise(n=1024, u=half) == sp.Rational(10, 2**11 - 10)
    assert gamma_pairwise(n=1025, u=half) == sp.Rational(11, 2**11 - 11)
    bound = softmax_relative_error_bound(
        gap_i=1, mean_gap=2, u=half, exp_ulps=sp.Rational(1, 2), gamma=0, arg_error=half
    )
    assert bound == 3 * half + 2 * half + half  # (1+2)a + 4·(1/2)·u + 0 + u


@pytest.mark.parametrize("power", range(0, 62))
def test_gamma_pairwise_numpy_is_exact_at_powers_of_two(power: int) -> None:
    value = gamma_pairwise.numpy(float(2**power), 2.0**-53)
    assert value == pytest.approx(power * 2.0**-53 / (1 - power * 2.0**-53), rel=1e-15)


def test_numpy_and_mpmath_evaluators_agree() -> None:
    args = (3.0, 1.5, 2.0**-24, 2.0, 1e-5, 2.0**-23)
    numpy_value = softmax_relative_error_bound.numpy(*args)
    with mpmath.workprec(80):
        mp_value = softmax_relative_error_bound.mpmath(*map(mpmath.mpf, args))
    assert float(mp_value) == pytest.approx(float(numpy_value), rel=1e-14)


def test_doctests() -> None:
    result = doctest.testmod(rounding_error, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 5


# --------------------------------------------------------------------------------------
# What the bound means: numpy's softmax in float32 and float16 stays within it.
#
# The model needs every exp(x̂_j), the sum and the checked outputs in the normal range,
# so the gaps are kept below |log(tiny)| and only outputs p_i >= 2·tiny are compared.
# The routines' errors, in ulps: numpy's float32 exp and log have at most 2.52 and 3.83
# ulps (AVX2/AVX512F, numpy PR #13134) and at most 4 with SVML (numpy PR #19478);
# float16 is computed in float32 and rounded (about 1/2 ulp) or, with AVX512-FP16, by
# SVML with at most 1.273 (exp) and 1.8 (log) ulps (numpy PR #23351).  numpy's
# summation order varies with the array, so γ is gamma_recursive, valid for any order.
# Float16 +, −, / computed through float32 are correctly rounded (24 >= 2·11 + 2).


Format = type[np.floating[Any]]

FORMATS: dict[Format, tuple[float, float, float, float]] = {
    # dtype: (u, exp_ulps, log_ulps, largest gap with normal exp)
    np.float32: (2.0**-24, 4.0, 4.0, 85.0),
    np.float16: (2.0**-11, 1.3, 2.0, 9.5),
}
THETAS = (1.0, 0.5, 0.75, 2.0, 3.0)


def softmax_remainder(bound: float, u: float, kappa: float, gamma: float, a_gmax: float) -> float:
    """Second-order terms the first-order bound leaves out.

    With ``A = log(1+ω) + log(1+ε_i) + x_i η_i − log(1+σ) − log V`` (the exact identity),
    ``|log(1+z)| <= |z|/(1−|z|)``, Jensen's ``V >= (1−κ) exp(−aG)`` and
    ``Σ p_j exp(a g_j) <= 1 + aG + (a g_max)² exp(a g_max)/2``, ``|A| <= B + R`` with
    ``R = u²/(1−u) + 2κ²/(1−κ) + γ²/(1−γ) + (a g_max)² exp(a g_max)/2``; then
    ``|p̂_i/p_i − 1| = |e^A − 1| <= |A| + |A|² e^|A| / 2``.  Returns that minus ``B``.
    """
    rest = u * u / (1 - u) + 2 * kappa**2 / (1 - kappa) + gamma**2 / (1 - gamma)
    rest += a_gmax**2 * math.exp(a_gmax) / 2
    total = bound + rest
    return rest + total**2 * math.exp(total) / 2


def log_softmax_remainder(
    u: float,
    kappa: float,
    kappa_log: float,
    gamma: float,
    a: float,
    gap: float,
    a_gmax: float,
    log_sum: float,
    a_mean: float,
) -> float:
    """Second-order terms left out of the log-softmax bound.

    The exact error is ``x_i η_i − log V − log(1+σ) − λ log Ŝ + ν (x̂_i − L̂)`` with
    ``|log V| + |log(1+σ)| <= W = κ/(1−κ) + aG + (a g_max)² e^{a g_max}/2 + γ/(1−γ)`` and
    ``|log Ŝ| <= log S + W``; bounding each term and subtracting the first-order bound
    leaves the value returned.
    """
    wide = kappa / (1 - kappa) + a_mean + a_gmax**2 * math.exp(a_gmax) / 2 + gamma / (1 - gamma)
    exact = (
        a * gap
        + wide
        + kappa_log * (log_sum + wide)
        + u * (gap * (1 + a))
        + u * (1 + kappa_log) * (log_sum + wide)
    )
    first = a * gap + a_mean + kappa + gamma + kappa_log * log_sum + u * (gap + log_sum)
    return exact - first


@st.composite
def softmax_inputs(draw: st.DrawFn) -> tuple[Format, np.ndarray, float]:
    dtype = draw(st.sampled_from(list(FORMATS)))
    theta = draw(st.sampled_from(THETAS))
    largest_gap = FORMATS[dtype][3]
    count = draw(st.integers(1, 200))
    center = draw(st.floats(-100, 100))
    spread = draw(st.floats(0, largest_gap * theta - 1))
    offsets = draw(st.lists(st.floats(0, 1), min_size=count, max_size=count))
    logits = np.asarray([center + spread * o for o in offsets], dtype=dtype)
    return dtype, logits, theta


def _reference(logits: np.ndarray, theta: float) -> tuple[list[mpmath.mpf], list[mpmath.mpf]]:
    """Exact-enough shifted scaled logits and softmax of the stored values."""
    values = [mpmath.mpf(float(v)) for v in logits]
    top = max(values)
    x = [(v - top) / mpmath.mpf(theta) for v in values]
    weights = [mpmath.exp(v) for v in x]
    total = mpmath.fsum(weights)
    return x, [w / total for w in weights]


def _numpy_softmax(logits: np.ndarray, theta: float) -> tuple[np.ndarray, np.ndarray]:
    dtype = logits.dtype.type
    shifted = logits - logits.max()
    if theta != 1.0:
        shifted = shifted / dtype(theta)
    y = np.exp(shifted)
    total = np.sum(y)
    return y / total, shifted - np.log(total)


@settings(max_examples=150)
@given(softmax_inputs())
def test_numpy_softmax_is_within_the_bound(
    case: tuple[Format, np.ndarray, float],
) -> None:
    dtype, logits, theta = case
    unit, k_exp, k_log, largest_gap = FORMATS[dtype]
    tiny = float(np.finfo(dtype).tiny)
    probabilities, log_probabilities = _numpy_softmax(logits, theta)
    n = len(logits)
    a = unit if theta == 1.0 else 2 * unit + unit * unit  # one or two roundings, exactly
    with mpmath.workprec(120):
        x, p = _reference(logits, theta)
        gaps = [float(-v) for v in x]
        assert max(gaps) <= largest_gap
        mean = float(mpmath.fsum(pj * -xj for pj, xj in zip(p, x, strict=True)))
        exact_log_sum = mpmath.log(mpmath.fsum(mpmath.exp(v) for v in x))
        log_sum = float(exact_log_sum)
        gam = float(gamma_recursive.numpy(n, unit))
        kappa, kappa_log = 2 * k_exp * unit, 2 * k_log * unit
        a_gmax = a * max(gaps)
        for i in range(n):
            bound = float(softmax_relative_error_bound.numpy(gaps[i], mean, unit, k_exp, gam, a))
            allowed = bound + softmax_remainder(bound, unit, kappa, gam, a_gmax)
            if p[i] >= 2 * tiny:
                error = abs(mpmath.mpf(float(probabilities[i])) - p[i]) / p[i]
                assert error <= allowed, (i, float(error), bound)
            log_bound = float(
                log_softmax_absolute_error_bound.numpy(
                    gaps[i], mean, log_sum, unit, k_exp, k_log, gam, a
                )
            )
            log_allowed = log_bound + log_softmax_remainder(
                unit, kappa, kappa_log, gam, a, gaps[i], a_gmax, log_sum, a * mean
            )
            log_error = abs(mpmath.mpf(float(log_probabilities[i])) - (x[i] - exact_log_sum))
            assert log_error <= log_allowed, (i, float(log_error), log_bound)


def test_remainders_are_second_order() -> None:
    """Dividing u by 1024 divides the slack by 1024²: no first-order slack is allowed."""

    def slack(unit: float) -> tuple[float, float]:
        kappa, gam = 2 * 4 * unit, 199 * unit / (1 - 199 * unit)
        bound = 100 * unit + 2 * kappa + gam + unit
        soft = softmax_remainder(bound, unit, kappa, gam, 85 * unit)
        log = log_softmax_remainder(unit, kappa, kappa, gam, unit, 50.0, 85 * unit, 6.0, 30 * unit)
        return soft, log

    for unit in (2.0**-24, 2.0**-40):
        for coarse, fine in zip(slack(unit), slack(unit / 1024), strict=True):
            assert 0 < fine <= coarse / 1024**2 * 1.01


# --------------------------------------------------------------------------------------
# The other formulations, computed by numpy in float32 and float16, stay within their
# bounds (θ = 1 for the log-sum-exp-first forms, as T12 states them).


def _formulations(logits: np.ndarray) -> dict[str, np.ndarray]:
    dtype = logits.dtype.type
    top = logits.max()
    shifted = logits - top
    y = np.exp(shifted)
    total = np.sum(y)
    log_total = np.log(total)
    lse = top + log_total
    return {
        "reciprocal": y * (dtype(1) / total),
        "exp_log": np.exp(shifted - log_total),
        "lse_log": logits - lse,
        "exp_lse": np.exp(logits - lse),
    }


def _lse_log_allowed(
    first: float, u: float, kappa_log: float, lse_u: float, top: float, log_sum: float, wide: float
) -> float:
    """The first-order lse bound plus the terms of second order it leaves out.

    The exact error is ``−(log Ŝ − log T) − λ log Ŝ − μ(e_max + L̂) + ν(e_i − lse̅)`` with
    ``|log Ŝ − log T| <= W`` (as for the shifted log-softmax), ``|L̂| <= (L + W)(1 + κ_log)``
    and ``|e_i − lse̅| <= g_i + |lse̅ − lse|``; the first-order bound uses ``W ≈ aG + κ + γ``
    and ``L̂ ≈ L``.  Returned: a bound on the exact error.
    """
    big_l = (log_sum + wide) * (1 + kappa_log)
    lse_error = wide + kappa_log * (log_sum + wide) + lse_u * (top + big_l)
    return first + wide + kappa_log * wide + lse_u * (big_l - log_sum) + u * (big_l + lse_error)


@settings(max_examples=80)
@given(softmax_inputs())
def test_every_formulation_is_within_its_bound(case: tuple[Format, np.ndarray, float]) -> None:
    dtype, logits, _ = case
    unit, k_exp, k_log, _ = FORMATS[dtype]
    tiny = float(np.finfo(dtype).tiny)
    with np.errstate(all="ignore"):
        computed = _formulations(logits)
    n = len(logits)
    a = unit
    with mpmath.workprec(120):
        x, p = _reference(logits, 1.0)
        gaps = [float(-v) for v in x]
        mean = float(mpmath.fsum(pj * -xj for pj, xj in zip(p, x, strict=True)))
        exact_log_sum = mpmath.log(mpmath.fsum(mpmath.exp(v) for v in x))
        log_sum = float(exact_log_sum)
        top = abs(float(logits.max()))
        gam = float(gamma_recursive.numpy(n, unit))
        kappa, kappa_log = 2 * k_exp * unit, 2 * k_log * unit
        a_gmax = a * max(gaps)
        wide = kappa / (1 - kappa) + a * mean + a_gmax**2 * math.exp(a_gmax) / 2
        wide += gam / (1 - gam)
        for i in range(n):
            log_first = float(
                log_softmax_absolute_error_bound.numpy(
                    gaps[i], mean, log_sum, unit, k_exp, k_log, gam, a
                )
            )
            log_allowed = log_first + log_softmax_remainder(
                unit, kappa, kappa_log, gam, a, gaps[i], a_gmax, log_sum, a * mean
            )
            lse_first = float(
                R.lse_log_softmax_absolute_error_bound.numpy(
                    gaps[i], mean, log_sum, top, unit, k_exp, k_log, gam, a, unit
                )
            )
            lse_allowed = _lse_log_allowed(lse_first, unit, kappa_log, unit, top, log_sum, wide)
            exact_log = x[i] - exact_log_sum
            error = abs(mpmath.mpf(float(computed["lse_log"][i])) - exact_log)
            assert error <= lse_allowed, ("lse_log", i, float(error), lse_first)
            if p[i] < 2 * tiny:
                continue
            soft = float(
                R.softmax_reciprocal_relative_error_bound.numpy(gaps[i], mean, unit, k_exp, gam, a)
            )
            # one more rounding than the division: the remainder of the divide form, at
            # a bound larger by u, covers it
            allowed = {
                "reciprocal": soft + softmax_remainder(soft, unit, kappa, gam, a_gmax) + unit**2,
                "exp_log": math.exp(log_allowed) * (1 + kappa) - 1,
                "exp_lse": math.exp(lse_allowed) * (1 + kappa) - 1,
            }
            for name, limit in allowed.items():
                error = abs(mpmath.mpf(float(computed[name][i])) - p[i]) / p[i]
                assert error <= limit, (name, i, float(error), limit)
