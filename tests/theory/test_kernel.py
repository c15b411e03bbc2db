"""The proof kernel: each method and rule accepts a sound use and rejects a false one."""

from __future__ import annotations

import sympy as sp

from softmax_dispersion.theory import kernel
from softmax_dispersion.theory.kernel import (
    Claim,
    ConvexCombination,
    ExpMonotone,
    Identity,
    Implied,
    Limit,
    LogMonotone,
    Monotone,
    RealRoots,
    SumLinearity,
    SumOfTerms,
    SumOver,
)

a, b, x, j, n, t, S = sp.symbols("a b x j n t S", real=True)
positive_q = sp.Symbol("q", positive=True)


def verdict(step: kernel.Step, *facts: sp.Basic) -> bool:
    return step.check(list(facts)).verified


def test_identity_decides_exponential_identities() -> None:
    assert verdict(Identity(sp.exp(a + b), sp.exp(a) * sp.exp(b), "product rule"))
    softplus_ratio = sp.exp(2 * a) / (1 + sp.exp(a))
    assert verdict(Identity(softplus_ratio, sp.exp(a) - 1 + 1 / (1 + sp.exp(a)), "division"))
    assert not verdict(Identity(sp.exp(a + b), sp.exp(a) + sp.exp(b), "false sum rule"))


def test_identity_refuses_what_cancel_cannot_decide() -> None:
    result = Identity(sp.log(a * b), sp.log(a) + sp.log(b), "needs positivity").check([])
    assert not result.verified
    assert "not a rational function" in result.detail


def test_exponentiated_identity_needs_positive_log_arguments() -> None:
    step = Identity(sp.log(a * b), sp.log(a) + sp.log(b), "log of a product", exponentiate=True)
    assert not verdict(step)  # a, b could be negative
    assert verdict(step, sp.Gt(a, 0), sp.Gt(b, 0))
    wrong = Identity(sp.log(a * b), sp.log(a) - sp.log(b), "", exponentiate=True)
    assert not verdict(wrong, sp.Gt(a, 0), sp.Gt(b, 0))


def test_implied_rejects_a_false_implication_with_a_counterexample() -> None:
    result = Implied(sp.Le(a * b, 1), "false").check([sp.Le(a, 1), sp.Le(b, 1)])
    assert not result.verified
    assert "counterexample" in result.detail
    assert verdict(
        Implied(sp.Le(a * b, 1), "true"), sp.Le(0, a), sp.Le(a, 1), sp.Le(0, b), sp.Le(b, 1)
    )


def test_unknown_and_crashes_are_failures(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(kernel, "prove_with_z3", lambda *args: ("unknown", "timeout"))
    assert not verdict(Implied(sp.Le(a, a + 1), "obvious, but undecided"))

    def crash(*args: object) -> None:
        raise RuntimeError("solver crashed")

    monkeypatch.setattr(kernel, "prove_with_z3", crash)
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


def test_sum_of_terms_rule_and_its_false_uses() -> None:
    terms = SumOver(S, 1 + j**2, (j,), n - 1)
    facts = [sp.Le(0, j), sp.Le(j, 1), sp.Ge(n, 1)]
    good = SumOfTerms(terms, sp.Integer(1), sp.Integer(2), "sum termwise bounds")
    assert verdict(good, *facts)
    # a bound that depends on the summation index
    assert not verdict(SumOfTerms(terms, j**2, None, ""), *facts)
    # a termwise bound that does not hold
    assert not verdict(SumOfTerms(terms, sp.Integer(3) / 2, None, ""), *facts)
    # a count that may be negative
    assert not verdict(good, sp.Le(0, j), sp.Le(j, 1))
    # claiming n terms where there are n - 1: the rule's conclusion does not give it
    claim = Claim(
        "X",
        "n lower bounds",
        sp.Le(n, S),
        facts,
        "test",
        lambda: [good, Implied(sp.Le(n, S), "too many terms")],
    )
    assert not claim.check().verified


def test_convex_combination_needs_weights_that_total_one() -> None:
    weight = sp.Symbol("w", real=True)
    mean = SumOver(S, x, (x, weight), sp.Integer(1), weight=weight)
    facts = [sp.Le(0, weight), sp.Le(a, x)]
    assert verdict(ConvexCombination(mean, a, None, ""), *facts)
    doubled = SumOver(S, x, (x, weight), sp.Integer(2), weight=weight)
    assert not verdict(ConvexCombination(doubled, a, None, ""), *facts)
    assert not verdict(ConvexCombination(mean, a, None, ""), sp.Le(a, x))  # weights may be < 0


def test_sum_linearity_checks_the_termwise_identity() -> None:
    first = SumOver(sp.Symbol("A"), j, (j,), n)
    second = SumOver(sp.Symbol("B"), j**2, (j,), n)
    target = SumOver(sp.Symbol("C"), (j + 1) ** 2, (j,), n)
    ones = SumOver(sp.Symbol("N"), sp.Integer(1), (j,), n)
    assert verdict(SumLinearity(target, [(1, second), (2, first), (1, ones)], ""))
    assert not verdict(SumLinearity(target, [(1, second), (1, first), (1, ones)], ""))
    assert not verdict(SumLinearity(target, [(j, first), (1, ones), (1, second)], ""))


def test_monotone_rule() -> None:
    assert verdict(Monotone(x**3, x, a, b, "cube grows"), sp.Le(a, b))
    assert not verdict(Monotone(x**2, x, a, b, "square does not"), sp.Le(a, b))
    assert not verdict(Monotone(x**3, x, a, b, "x in the facts"), sp.Le(a, b), sp.Le(x, 0))


def test_real_roots_are_counted_exactly() -> None:
    poly = x**2 - 2
    assert verdict(RealRoots(poly, x, [(-2, -1), (1, 2)], sp.symbols("r s"), ""))
    assert not verdict(RealRoots(poly, x, [(1, 2)], sp.symbols("r,"), "one root missing"))
    assert not verdict(RealRoots(poly, x, [(-2, -1), (2, 3)], sp.symbols("r s"), "wrong box"))
    assert not verdict(RealRoots(x**2 - 1, x, [(-2, -1), (1, 2)], sp.symbols("r s"), "end root"))


def test_limits_are_compared_exactly_and_check_declared_signs() -> None:
    assert verdict(Limit(n / (2 * n - 1), n, sp.oo, sp.Rational(1, 2), ""))
    assert not verdict(Limit(n / (2 * n - 1), n, sp.oo, sp.Rational(1, 3), ""))
    depends = Limit(n ** (1 + positive_q) / (n ** (1 + positive_q) + n), n, sp.oo, 1, "")
    assert not verdict(depends)  # q's positivity is declared but not stated as a fact
    assert verdict(depends, sp.Gt(positive_q, 0, evaluate=False))


def test_claim_must_conclude_its_statement_and_cite_verified_claims() -> None:
    steps = [Implied(sp.Le(a, b), "something else")]
    claim = Claim("X", "", sp.Le(a, b + 1), [sp.Le(a, b)], "test", lambda: steps)
    result = claim.check()
    assert not result.verified and "does not conclude" in result.problem

    wrong = sp.Le(b + 1, b, evaluate=False)
    false = Claim("F", "", wrong, [], "test", lambda: [Implied(wrong, "")])
    right = sp.Le(a, a + b**2, evaluate=False)
    citing = Claim("C", "", right, [], "test", lambda: [Implied(right, "")], cites=(false,))
    assert not false.check().verified
    assert not citing.check().verified
