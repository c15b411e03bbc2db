"""The proof kernel: each method and rule accepts a sound use and rejects a false one.

The red-team suite (``test_red_team``) builds false claims the way an author would, one
class of hole at a time; here each rule is tried on its own, through ``Step.check``.
"""

from __future__ import annotations

import doctest
from collections.abc import Sequence

import pytest
import sympy as sp

from softmax_dispersion.theory import _z3, calculus, definitions, kernel, rules
from softmax_dispersion.theory.kernel import (
    Claim,
    ConvexCombination,
    Differentiate,
    ExpMonotone,
    Family,
    Identity,
    Implied,
    Limit,
    LogMonotone,
    Monotone,
    RealRoot,
    RealRoots,
    Step,
    SumDerivative,
    SumLinearity,
    SumOfTerms,
    SumOver,
    WeightedSum,
)

a, b, x, j, n, t, S = sp.symbols("a b x j n t S", real=True)
q = sp.Symbol("q", real=True)


def verdict(step: Step, *facts: sp.Basic) -> bool:
    return step.check(list(facts)).verified


def test_identity_decides_exponential_identities() -> None:
    assert verdict(Identity(sp.exp(a + b), sp.exp(a) * sp.exp(b), "product rule"))
    softplus_ratio = sp.exp(2 * a) / (1 + sp.exp(a))
    assert verdict(Identity(softplus_ratio, sp.exp(a) - 1 + 1 / (1 + sp.exp(a)), "division"))
    assert not verdict(Identity(sp.exp(a + b), sp.exp(a) + sp.exp(b), "false sum rule"))


def test_identity_refuses_what_cancel_cannot_decide() -> None:
    result = Identity(sp.sqrt(a) ** 3, a * sp.sqrt(a) + 1, "false").check([sp.Gt(a, 0)])
    assert not result.verified
    assert "cancel leaves" in result.detail
    # and a fractional power needs its base's sign first
    result = Identity(sp.sqrt(a) ** 3, a * sp.sqrt(a), "true for a >= 0").check([])
    assert not result.verified and "the base a of a**(3/2) >= 0" in result.detail


def test_identity_splits_logarithms_only_of_positive_factors() -> None:
    step = Identity(sp.log(a * b), sp.log(a) + sp.log(b), "log of a product")
    assert not verdict(step)  # a, b could be negative
    result = step.check([sp.Gt(a, 0)])
    assert not result.verified and "the argument of log(a*b) > 0" in result.detail
    # a product positive as a whole is not split over factors of unknown sign
    split = Identity(sp.log(a * b), sp.log(-a) + sp.log(-b), "true, but not by splitting")
    result = split.check([sp.Lt(a, 0), sp.Lt(b, 0)])
    assert not result.verified and "positivity not implied for a" in result.detail
    assert verdict(step, sp.Gt(a, 0), sp.Gt(b, 0))
    wrong = Identity(sp.log(a * b), sp.log(a) - sp.log(b), "")
    assert not verdict(wrong, sp.Gt(a, 0), sp.Gt(b, 0))


def test_identity_needs_its_denominators_non_zero() -> None:
    step = Identity((x**2 - 1) / (x - 1), x + 1, "a removable pole")
    result = step.check([])
    assert not result.verified and "the denominator x - 1" in result.detail
    assert verdict(step, sp.Ne(x, 1))


def test_identity_substitutes_only_implied_equations() -> None:
    step = Identity(sp.exp(a * b), sp.exp(1), "a b = 1", substitute=(sp.Eq(a, 1 / b),))
    assert verdict(step, sp.Eq(a, 1 / b), sp.Gt(b, 0))
    assert not verdict(step, sp.Gt(b, 0))  # the equation is not a fact


def test_implied_rejects_a_false_implication_with_a_counterexample() -> None:
    result = Implied(sp.Le(a * b, 1), "false").check([sp.Le(a, 1), sp.Le(b, 1)])
    assert not result.verified
    assert "counterexample" in result.detail
    assert verdict(
        Implied(sp.Le(a * b, 1), "true"), sp.Le(0, a), sp.Le(a, 1), sp.Le(0, b), sp.Le(b, 1)
    )


def test_unknown_and_crashes_are_failures(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_z3, "prove_with_z3", lambda *args: ("unknown", "timeout"))
    assert not verdict(Implied(sp.Le(a, a + 1), "obvious, but undecided"))

    def crash(*args: object) -> None:
        raise RuntimeError("solver crashed")

    monkeypatch.setattr(_z3, "prove_with_z3", crash)
    result = Implied(sp.Le(a, a + 1), "crashing").check([])
    assert not result.verified and "solver crashed" in result.detail


def test_exp_monotone_needs_a_positive_scale() -> None:
    step = ExpMonotone(a, b, "", scale=t)
    assert verdict(step, sp.Le(a, b), sp.Gt(t, 0))
    assert not verdict(step, sp.Le(a, b), sp.Lt(t, 0))
    assert not verdict(step, sp.Gt(t, 0))  # premise missing


def test_log_monotone_needs_a_positive_smaller_side() -> None:
    step = LogMonotone(a, b, "")
    assert verdict(step, sp.Gt(a, 0), sp.Le(a, b))
    assert not verdict(step, sp.Le(a, b))


unit = Family("unit", (j,), n - 1, (sp.Le(0, j), sp.Le(j, 1)), "n − 1 numbers in [0, 1]")
terms = SumOver(S, 1 + j**2, unit, "Σ (1 + j²)")


def test_sum_of_terms_rule_and_its_false_uses() -> None:
    good = SumOfTerms(terms, sp.Integer(1), sp.Integer(2), "sum termwise bounds")
    assert verdict(good, sp.Ge(n, 1))
    assert good.conclusion == sp.And(
        sp.Le((n - 1) * 1, S, evaluate=False), sp.Le(S, (n - 1) * 2, evaluate=False)
    )
    # a bound that depends on the summation index
    assert not verdict(SumOfTerms(terms, j**2, None, ""), sp.Ge(n, 1))
    # a termwise bound that does not hold
    assert not verdict(SumOfTerms(terms, sp.Integer(3) / 2, None, ""), sp.Ge(n, 1))
    # a count that may be negative
    assert not verdict(good)
    # strict needs at least one term
    strict = SumOfTerms(terms, sp.Integer(0), None, "", strict=True)
    assert verdict(strict, sp.Ge(n, 2))
    assert not verdict(strict, sp.Ge(n, 1))


def test_termwise_sub_steps_see_the_domain_and_stay_local() -> None:
    family = Family("logits", (j,), n, (sp.Le(a, j),))
    total = SumOver(S, sp.exp(j), family)
    lower = SumOfTerms(
        total, sp.exp(a), None, "", termwise=(ExpMonotone(a, j, "exp(a) <= exp(j)"),)
    )
    assert verdict(lower, sp.Ge(n, 0))
    assert not verdict(SumOfTerms(total, sp.exp(a), None, ""), sp.Ge(n, 0))  # no sub-step
    # a sub-step that fails fails the rule
    wrong = SumOfTerms(total, sp.exp(a), None, "", termwise=(ExpMonotone(j, a, "backwards"),))
    result = wrong.check([sp.Ge(n, 0)])
    assert not result.verified and "termwise step 'backwards' failed" in result.detail


def test_weighted_sum_and_convex_combination() -> None:
    w, v = sp.symbols("w v", real=True)
    family = Family("weighted", (w, v), n, (sp.Ge(w, 0), sp.Le(a, v)))
    total = SumOver(S, w * v, family)
    weights = SumOver(sp.Symbol("W", real=True), w, family)
    weighted = WeightedSum(total, weights, v, a, None, "a·W <= Σ w v")
    assert verdict(weighted)
    assert weighted.conclusion == sp.Le(a * weights.symbol, S, evaluate=False)
    convex = ConvexCombination(total, weights, v, a, None, "a <= Σ w v")
    assert not verdict(convex)  # the weights are not known to add up to 1
    assert verdict(convex, sp.Eq(weights.symbol, 1))
    negative = Family("signed", (w, v), n, (sp.Le(a, v),))
    signed = ConvexCombination(
        SumOver(S, w * v, negative), SumOver(weights.symbol, w, negative), v, a, None, ""
    )
    assert not verdict(signed, sp.Eq(weights.symbol, 1))  # weights may be negative


def test_sum_linearity_checks_the_termwise_identity() -> None:
    family = Family("free", (j,), n)
    first = SumOver(sp.Symbol("A", real=True), j, family)
    second = SumOver(sp.Symbol("B", real=True), j**2, family)
    target = SumOver(sp.Symbol("C", real=True), (j + 1) ** 2, family)
    ones = SumOver(sp.Symbol("N", real=True), sp.Integer(1), family)
    assert verdict(SumLinearity(target, [(1, second), (2, first), (1, ones)], ""))
    assert not verdict(SumLinearity(target, [(1, second), (1, first), (1, ones)], ""))
    assert not verdict(SumLinearity(target, [(j, first), (1, ones), (1, second)], ""))
    other = SumOver(sp.Symbol("D", real=True), j, Family("other", (j,), n))
    assert not verdict(SumLinearity(target, [(1, second), (2, other), (1, ones)], ""))


def test_monotone_rule() -> None:
    assert verdict(Monotone(x**3, x, a, b, "cube grows"), sp.Le(a, b))
    assert not verdict(Monotone(x**2, x, a, b, "square does not"), sp.Le(a, b))
    assert not verdict(Monotone(x**3, x, a, b, "x in the facts"), sp.Le(a, b), sp.Le(x, 0))
    assert not verdict(Monotone(x**3, x, x, b, "endpoint with x"), sp.Le(x, b))
    assert not verdict(Monotone(1 / x, x, -1, 1, "a pole", decreasing=True))
    assert not verdict(Monotone(sp.Abs(x), x, 0, 1, "Abs is not in the smooth class"))


def test_real_roots_are_counted_exactly() -> None:
    r, s = sp.symbols("r s", real=True)
    low = RealRoot(r, x**2 - 2, x, -2, -1)
    high = RealRoot(s, x**2 - 2, x, 1, 2)
    assert verdict(RealRoots(x**2 - 2, x, (low, high), ""))
    assert not verdict(RealRoots(x**2 - 2, x, (high,), "one root missing"))
    assert not verdict(RealRoots(x**2 - 3, x, (low, high), "another polynomial"))
    with pytest.raises(definitions.DefinitionError, match="holds 0 roots"):
        kernel.check_definitions([RealRoot(s, x**2 - 2, x, 2, 3)])
    with pytest.raises(definitions.DefinitionError, match="itself a root"):
        kernel.check_definitions([RealRoot(s, x**2 - 1, x, 1, 2)])


def test_limits_need_signs_and_agree_on_both_routes() -> None:
    assert verdict(Limit(n / (2 * n - 1), n, sp.oo, sp.Rational(1, 2), ""))
    assert not verdict(Limit(n / (2 * n - 1), n, sp.oo, sp.Rational(1, 3), ""))
    depends = Limit(n ** (1 + q) / (n ** (1 + q) + n), n, sp.oo, 1, "")
    result = depends.check([])
    assert not result.verified and "the sign of q is not a stated fact" in result.detail
    assert verdict(depends, sp.Gt(q, 0))
    assert not verdict(Limit(n / (2 * n - 1), n, 0, 0, "a finite point"))


def test_claim_must_conclude_its_statement_and_cite_verified_claims() -> None:
    steps = [Implied(sp.Le(a, b), "something else")]
    claim = Claim(
        "X", "", sp.Le(a, b + 1), [sp.Le(a, b)], "test", lambda: steps, witness={a: 0, b: 0}
    )
    result = claim.check()
    assert not result.verified and "does not conclude" in result.problem

    wrong = sp.Le(b + 1, b, evaluate=False)
    false = Claim("F", "", wrong, [], "test", lambda: [Implied(wrong, "")], witness={})
    right = sp.Le(a, a + b**2, evaluate=False)
    citing = Claim(
        "C", "", right, [], "test", lambda: [Implied(right, "")], cites=(false,), witness={}
    )
    assert not false.check().verified
    assert not citing.check().verified


@pytest.mark.parametrize("proof", [lambda: None, lambda: 1 / 0, lambda: 3])
def test_a_proof_that_cannot_be_built_fails_in_check_and_content(proof: object) -> None:
    claim = Claim("P", "", sp.Le(a, a + 1), [], "test", proof, witness={})  # type: ignore[arg-type]
    result = claim.check()
    assert not result.verified and result.problem.startswith("the proof could not be built")
    with pytest.raises(kernel.ExpressionError, match="the proof could not be built"):
        claim.content()


def test_doctests() -> None:
    for module in (kernel, rules, calculus, definitions):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, module.__name__
    assert doctest.testmod(rules).attempted > 5


# --------------------------------------------------------------------------------------
# Rules of calculus: SumDerivative and Differentiate, as functions and at a point.

k, c, z = sp.symbols("k c z", real=True)
_A0 = sp.Function("A0", real=True)(t)
_A1 = sp.Function("A1", real=True)(t)
_xs = Family("xs", (x,), k)
_a0 = SumOver(_A0, sp.exp(x / t), _xs)
_a1 = SumOver(_A1, x * sp.exp(x / t), _xs)
_positive_t = [sp.Gt(t, 0), sp.Ge(k, 0)]
complex_w = sp.Symbol("w")  # no assumptions: possibly complex


def _sums_in(var: sp.Symbol) -> SumDerivative:
    """``d/dvar Σ exp(var x) = Σ x exp(var x)``: true for a real ``var``."""
    total = SumOver(sp.Function("B0", real=True)(var), sp.exp(var * x), _xs)
    part = SumOver(sp.Function("B1", real=True)(var), x * sp.exp(var * x), _xs)
    return SumDerivative(total, var, [(1, part)], "")


def test_sum_derivative_as_a_function() -> None:
    step = SumDerivative(_a0, t, [(-1 / t**2, _a1)], "d/dt Σ exp(x/t)")
    assert verdict(step, *_positive_t)
    assert step.conclusion == sp.Eq(sp.Derivative(_A0, t), -_A1 / t**2)


def test_sum_derivative_in_a_real_variable_is_accepted() -> None:
    assert verdict(_sums_in(sp.Symbol("w", real=True)))


def test_sum_derivative_pole_outside_the_domain_is_accepted() -> None:
    beyond = Family("beyond", (x,), k, (sp.Gt(x, 1),))
    step = SumDerivative(
        SumOver(_A0, 1 / (x - t), beyond),
        t,
        [(1, SumOver(_A1, 1 / (x - t) ** 2, beyond))],
        "x > 1 >= t keeps the pole away",
    )
    assert verdict(step, sp.Le(t, 1))
    assert not verdict(step)


@pytest.mark.parametrize(
    ("step", "facts"),
    [
        (SumDerivative(_a0, t, [(1 / t**2, _a1)], "wrong sign"), _positive_t),
        (SumDerivative(_a0, t, [(-1 / t, _a1)], "wrong power of t"), _positive_t),
        (SumDerivative(_a0, t, [(-1 / t**2, _a1)], "t may vanish"), []),
        (
            SumDerivative(SumOver(sp.Symbol("Z", real=True), sp.exp(x / t), _xs), t, [], ""),
            _positive_t,
        ),
        (
            SumDerivative(
                SumOver(_A0, sp.exp(x / t), Family("t terms", (x,), t)),
                t,
                [(-1 / t**2, SumOver(_A1, x * sp.exp(x / t), Family("t terms", (x,), t)))],
                "count",
            ),
            _positive_t,
        ),
        (
            SumDerivative(
                SumOver(_A0, sp.exp(x / t - a), _xs),
                t,
                [(-sp.exp(-a) / t**2, _a1)],
                "a hides a dependence on t",
            ),
            _positive_t,
        ),
        (
            SumDerivative(
                SumOver(_A0, sp.Abs(x - t), _xs),
                t,
                [(-1, SumOver(_A1, x, _xs))],
                "not differentiable at x = t",
            ),
            _positive_t,
        ),
        (
            SumDerivative(
                SumOver(_A0, 1 / (x - t), _xs),
                t,
                [(1, SumOver(_A1, 1 / (x - t) ** 2, _xs))],
                "a pole at x = t",
            ),
            _positive_t,
        ),
        (
            SumDerivative(
                _a0, t, [(-1 / t**2, SumOver(_A1, x * sp.exp(x / t), Family("o", (x,), k + 1)))], ""
            ),
            _positive_t,
        ),
        (
            SumDerivative(
                _a0,
                t,
                [(-1 / t**2, SumOver(sp.Symbol("B", real=True), x * sp.exp(x / t), _xs))],
                "a part that varies with t named by a plain symbol",
            ),
            _positive_t,
        ),
        (
            SumDerivative(_a0, t, [(-x / t**2, SumOver(_A1, sp.exp(x / t), _xs))], "index"),
            _positive_t,
        ),
        (_sums_in(complex_w), _positive_t),
    ],
    ids=[
        "wrong-sign",
        "wrong-power",
        "pole-at-zero",
        "plain-symbol",
        "count-depends-on-var",
        "hidden-dependence",
        "abs",
        "pole-inside",
        "different-family",
        "part-named-by-a-symbol",
        "coefficient-depends-on-index",
        "var-not-real",
    ],
)
def test_sum_derivative_false_use_as_a_function(step: Step, facts: list[sp.Basic]) -> None:
    assert not verdict(step, *facts)


# At a point: F(t) = Σ_z exp(t z)(1 + c t) with c a declared constant, F'(0) = Σ (z + c).
F = sp.Function("F", real=True)
_zs = Family("zs", (z,), k)
family = SumOver(F(t), sp.exp(t * z) * (1 + c * t), _zs)
slopes = SumOver(S, z + c, _zs)


def _at_zero(
    total: SumOver = family, part: SumOver = slopes, point: sp.Expr = sp.S.Zero
) -> SumDerivative:
    return SumDerivative(total, t, [(1, part)], "d/dt at a point", point=point, constants=[c])


def test_sum_derivative_at_a_point() -> None:
    step = _at_zero()
    assert verdict(step, sp.Ge(k, 0))
    lhs = step.conclusion.lhs
    assert isinstance(lhs, sp.Subs) and lhs.expr == sp.Derivative(F(t), t)
    assert step.conclusion.rhs == S


def test_sum_derivative_log_term_with_its_domain() -> None:
    positive = Family("positive zs", (z,), k, (sp.Gt(z, 0),))
    logs = SumOver(F(t), sp.log(t + z), positive)
    assert verdict(_at_zero(logs, SumOver(S, 1 / z, positive)))


@pytest.mark.parametrize(
    "step",
    [
        _at_zero(part=SumOver(S, z - c, _zs)),
        _at_zero(point=sp.Integer(1)),
        _at_zero(point=t),
        _at_zero(SumOver(F(t), sp.exp(z), Family("t zs", (z,), t))),
        _at_zero(SumOver(S, t * z, _zs)),
        _at_zero(SumOver(F(t), sp.Abs(t) * z, _zs), SumOver(S, sp.Integer(0), _zs)),
        _at_zero(SumOver(F(t), z / t, _zs), SumOver(S, sp.Integer(0), _zs)),
        _at_zero(SumOver(F(t), sp.log(t + z), _zs), SumOver(S, 1 / z, _zs)),
        SumDerivative(family, t, [(1, slopes)], "c not declared constant", point=0),
        SumDerivative(family, t, [(1, slopes)], "t held constant", point=0, constants=[c, t]),
        _at_zero(part=SumOver(sp.Function("G", real=True)(t), z + c, _zs)),
        _at_zero(part=SumOver(S, z + c + t, _zs)),
        SumDerivative(family, t, [(1 + t, slopes)], "", point=0, constants=[c]),
        _at_zero(SumOver(F(t), sp.sqrt(1 + t) * z, _zs), SumOver(S, z / 2, _zs)),
        _at_zero(SumOver(F(t), sp.exp(t * z) * F(t), _zs)),
    ],
    ids=[
        "wrong slope",
        "wrong point",
        "point is the variable",
        "count depends on var",
        "not a function",
        "abs",
        "pole",
        "log domain",
        "undeclared constant",
        "var declared constant",
        "derivative named by a function of t",
        "derivative varies with t",
        "coefficient varies with t",
        "non-integer power",
        "applied function in the term",
    ],
)
def test_sum_derivative_false_use_at_a_point(step: SumDerivative) -> None:
    assert not verdict(step, sp.Ge(k, 0), sp.Ge(t, 0))


# Differentiate as a function: the derivatives of A0 and A1 are facts.
_derivatives = [
    sp.Eq(sp.Derivative(_A0, t), -_A1 / t**2),
    sp.Eq(sp.Derivative(_A1, t), 2 * _A1),
]


def test_differentiate_as_a_function() -> None:
    f = sp.log(_A0) - _A1 / (t * _A0)
    step = Differentiate(f, t, "d/dt of the entropy form")
    assert verdict(step, *_derivatives, sp.Gt(_A0, 0), sp.Gt(t, 0))
    assert step.conclusion.rhs == sp.diff(f, t)


def test_differentiate_as_a_function_with_a_claimed_value() -> None:
    facts = [*_derivatives, sp.Gt(_A0, 0)]
    step = Differentiate(sp.log(_A0), t, "d log A0", value=-_A1 / (t**2 * _A0))
    assert verdict(step, *facts)
    assert step.conclusion.rhs == -_A1 / (t**2 * _A0)
    assert not verdict(Differentiate(sp.log(_A0), t, "", value=_A1 / (t**2 * _A0)), *facts)


@pytest.mark.parametrize(
    ("step", "facts"),
    [
        (Differentiate(sp.log(_A0), t, ""), _derivatives),  # A0 > 0 unknown
        (Differentiate(_A1 / (t * _A0), t, ""), [*_derivatives, sp.Gt(_A0, 0)]),  # t = 0?
        (Differentiate(a * _A0, t, ""), [*_derivatives, sp.Gt(t, 0)]),  # a may vary with t
        (Differentiate(sp.Function("A2", real=True)(t) * t, t, ""), [*_derivatives, sp.Gt(t, 0)]),
        (Differentiate(sp.Abs(t - 1), t, ""), [sp.Gt(t, 0)]),  # no derivative at 1
        (Differentiate(sp.Function("A3", real=True)(t, x), t, ""), [sp.Gt(t, 0)]),
        (
            Differentiate(sp.Function("A3", real=True)(t, x), t, "", constants=[x]),
            [sp.Gt(t, 0)],
        ),
        (Differentiate(sp.Derivative(_A0, t), t, ""), _derivatives),  # a derivative inside
        (Differentiate(sp.sqrt(t), t, ""), [sp.Ge(t, 0)]),  # no derivative at 0
        (Differentiate(sp.sqrt(t), t, ""), [sp.Gt(t, 0)]),  # non-integer powers refused
        (Differentiate(sp.I * t, t, ""), []),  # not a real expression
        (Differentiate(complex_w**2, complex_w, ""), []),  # not declared real
        (Differentiate(a * t, t, "", constants=[a, t]), []),  # t cannot be held constant
    ],
    ids=[
        "log",
        "pole",
        "free-symbol",
        "unknown-derivative",
        "abs",
        "two-args",
        "two-args-with-constant",
        "nested",
        "sqrt-at-0",
        "sqrt",
        "complex",
        "var-not-real",
        "var-constant",
    ],
)
def test_differentiate_false_use_as_a_function(step: Step, facts: list[sp.Basic]) -> None:
    assert not verdict(step, *facts)


def test_differentiate_in_a_real_variable_is_accepted() -> None:
    real_w = sp.Symbol("w", real=True)
    assert verdict(Differentiate(real_w**2, real_w, "", value=2 * real_w))


def test_differentiate_ignores_derivative_facts_about_another_variable() -> None:
    facts = [sp.Eq(sp.Derivative(_A0, t), 0), sp.Gt(t, 0)]
    assert verdict(Differentiate(_A0 * t, t, "known"), *facts)
    other = sp.Function("A0", real=True)(x)
    assert not verdict(Differentiate(other * x, x, "unknown"), *facts)


def test_differentiate_reads_facts_inside_conjunctions() -> None:
    fact = sp.And(sp.Eq(sp.Derivative(_A0, t), 1), sp.Gt(_A0, 0))
    assert verdict(Differentiate(sp.log(_A0), t, "", value=1 / _A0), fact)


# Differentiate at a point: F(0) = 2 and F'(0) = S are facts.
_facts_for_F = [
    sp.Eq(F(0), 2),
    sp.Eq(sp.Subs(sp.Derivative(F(t), t), t, 0), S),
]


def _derivative_at_zero(expr: sp.Expr, value: sp.Expr) -> Differentiate:
    return Differentiate(expr, t, "at 0", point=sp.Integer(0), value=value, constants=[c])


def test_differentiate_at_a_point_uses_the_facts_about_functions() -> None:
    step = _derivative_at_zero(sp.log(F(t)) + c * t, S / 2 + c)
    assert verdict(step, *_facts_for_F)
    assert step.conclusion == sp.Eq(
        sp.Subs(sp.Derivative(sp.log(F(t)) + c * t, t), t, 0), S / 2 + c
    )


def test_differentiate_at_a_point_without_a_value_concludes_diff() -> None:
    step = Differentiate(sp.log(F(t)), t, "", point=sp.Integer(0))
    assert verdict(step, *_facts_for_F)
    assert step.conclusion.rhs == sp.Subs(sp.Derivative(F(t), t), t, 0) / F(0)
    assert not verdict(step, *_facts_for_F[1:])  # F(0) unknown


@pytest.mark.parametrize(
    ("step", "facts"),
    [
        (_derivative_at_zero(sp.log(F(t)), S), _facts_for_F),  # the value is S/2
        (_derivative_at_zero(sp.log(F(t)), S / 2), _facts_for_F[:1]),  # no F'(0)
        (_derivative_at_zero(sp.log(F(t)), S / 2), _facts_for_F[1:]),  # no F(0)
        (_derivative_at_zero(sp.log(F(t) - 2), S / 2), _facts_for_F),  # log 0
        (_derivative_at_zero(1 / (F(t) - 2), -S / 4), _facts_for_F),  # a pole
        (_derivative_at_zero(sp.Abs(t), sp.Integer(0)), []),
        (_derivative_at_zero(sp.sqrt(1 + t), sp.Rational(1, 2)), []),  # not covered
        (_derivative_at_zero(F(2 * t), 2 * S), _facts_for_F),  # not a function of t
        (_derivative_at_zero(sp.log(F(t)) + a * t, S / 2 + a), _facts_for_F),  # a undeclared
        (_derivative_at_zero(c * t, c + t), []),  # the value varies with t
        (Differentiate(c * t, t, "", point=t, value=c, constants=[c]), []),
        (
            Differentiate(sp.log(F(t)), t, "", point=sp.Integer(0), value=S / 2),
            [sp.Eq(F(0), 2), sp.Eq(sp.Derivative(F(t), t), S)],  # F' as a function only
        ),
    ],
    ids=[
        "wrong",
        "no slope",
        "no value",
        "log 0",
        "pole",
        "abs",
        "sqrt",
        "F(2t)",
        "undeclared constant",
        "value varies with t",
        "point is the variable",
        "slope fact of another form",
    ],
)
def test_differentiate_false_use_at_a_point(step: Differentiate, facts: Sequence[sp.Basic]) -> None:
    assert not verdict(step, *facts)


def test_a_cited_claim_is_used_only_under_its_assumptions() -> None:
    positive = [sp.Gt(a, 0), sp.Gt(b, 0)]
    product = sp.Gt(a * b, 0)
    witness = {a: 1, b: 1}
    cited = Claim(
        "P", "", product, positive, "test", lambda: [Implied(product, "")], witness=witness
    )
    assert cited.check().verified
    cite = kernel.Cite(cited, "a b > 0")
    # without a > 0 and b > 0 the cited statement is not available
    outside = Claim("O", "", product, [], "test", lambda: [cite], cites=(cited,), witness={})
    result = outside.check()
    assert not result.verified and "the assumptions of P" in result.steps[0].detail
    inside = Claim(
        "I", "", product, positive, "test", lambda: [cite], cites=(cited,), witness=witness
    )
    assert inside.check().verified


def test_a_z3_budget_is_a_resource_count_not_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """A decision's verdict is set by z3's resource count: the same work within the same
    budget gets the same verdict on an idle or a busy machine, and a budget too small for
    the work is seen to fail (``unknown`` is not ``proved``)."""
    from softmax_dispersion.theory import _z3
    from softmax_dispersion.theory.terms import add, mul, num, power, rel, sym

    x, y, z = sym("x"), sym("y"), sym("z")
    squares = add(power(x, 2), power(y, 2), power(z, 2))
    facts = [rel("le", squares, num(1)), rel("ge", mul(x, y, z), num(1, 10))]
    goal = rel("lt", add(x, y, z), num(2))
    assert _z3.prove_with_z3(facts, goal)[0] == "proved"
    monkeypatch.setattr(_z3, "WALL_CLOCK_FACTOR", 10_000)  # the clock never stops it here
    starved = [_z3._decide(facts, goal, timeout_ms=20) for _ in range(2)]
    assert [verdict for verdict, _ in starved] == ["unknown", "unknown"]
    assert all("resource limit" in reason for _, reason in starved), starved


def test_facts_over_naturals_read_for_every_natural() -> None:
    """Red team round 6 (H1): ``assumptions=[x <= l], naturals=(l,)`` holds for every
    natural l (so x <= 0 follows); every text a person reads says so, generated from
    the checked claim: prove's text and JSON, the certificate's readable fields."""
    from softmax_dispersion.theory._result_text import format_result
    from softmax_dispersion.theory.proof_certificate import build_certificate

    x, l = sp.symbols("x l", real=True)  # noqa: E741 (the red team's name)
    claim = kernel.Claim(
        id="H1",
        title="x <= l for every natural l",
        statement=sp.And(sp.Le(x, 0), sp.Ge(l, 0)),
        assumptions=[sp.Le(x, l)],
        source="derived",
        proof=lambda: [kernel.Induction(l, sp.And(sp.Le(x, 0), sp.Ge(l, 0)), "at 0")],
        naturals=(l,),
        witness={x: 0},
    )
    result = claim.check()
    assert result.verified, result.problem
    text = format_result(result)
    assert "assumptions: for every natural l: x <= l" in text
    assert "statement:   for every natural l: " in text
    assert result.to_dict()["assumptions"] == ["for every natural l: x <= l"]
    record = build_certificate([result])["claims"][0]
    assert record["statement"].startswith("for every natural l: ")
    assert record["steps"][0]["statement"].startswith("for every natural l: ")
    plain = kernel.Claim(
        id="P1",
        title="no natural",
        statement=sp.Le(x, 1),
        assumptions=[sp.Le(x, 0)],
        source="derived",
        proof=lambda: [kernel.Implied(sp.Le(x, 1), "x <= 0")],
    ).check()
    assert "assumptions: x <= 0" in format_result(plain) and "for every" not in plain.statement


def test_z3_stopped_at_the_budgets_deadline_ends_the_decision(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """z3's timeout is cut to the time a budget leaves; an ``unknown`` it returns once the
    deadline has passed is the budget's end, not an answer, and is raised as such (before,
    it read as a failed step, and a recheck that ran out of time did not say so; the
    kernel's own z3 questions swallowed the budget as "not proved")."""
    from softmax_dispersion.theory import _deciders, _z3
    from softmax_dispersion.theory._core import BudgetExceeded
    from softmax_dispersion.theory.terms import add, mul, num, power, rel, sym

    x, y, z = sym("x"), sym("y"), sym("z")
    squares = add(power(x, 2), power(y, 2), power(z, 2))
    facts = [rel("le", squares, num(1)), rel("ge", mul(x, y, z), num(1, 10))]
    goal = rel("lt", add(x, y, z), num(2))
    monkeypatch.setattr(_z3, "WALL_CLOCK_FACTOR", 10_000)
    assert _z3._decide(facts, goal, timeout_ms=20)[0] == "unknown"
    monkeypatch.setattr(_z3, "budget_spent", lambda: True)  # planted: the deadline passed
    with pytest.raises(BudgetExceeded):
        _z3._decide(facts, goal, timeout_ms=20)

    def spent(*args: object) -> None:
        raise BudgetExceeded("the decision ran past its time budget")

    monkeypatch.setattr(_z3, "prove_with_z3", spent)
    with pytest.raises(BudgetExceeded):
        _deciders.proved(facts, goal)
