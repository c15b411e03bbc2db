"""Two kernel additions for T10's paper form: ``Assume`` and the ``Limit`` rule's parameter
relations, each accepting a sound use and refusing every false use tried here."""

from __future__ import annotations

import copy
import dataclasses

import pytest
import sympy as sp

from softmax_dispersion.theory._serial import CertificateFormatError, Reader
from softmax_dispersion.theory.kernel import (
    Assume,
    Claim,
    ExpMonotone,
    Family,
    Implied,
    Induction,
    Let,
    Limit,
    Step,
    SumOfTerms,
    SumOver,
)

a, b, n, q, s, M, m, x, y, j = sp.symbols("a b n q s M m x y j", real=True)
spread = s * (M - m)
p_max = n**spread / (n**spread + n - 1)
excess = Let(q, spread - 1, "q := sδ − 1")
HALF = sp.Rational(1, 2)
ABOVE, AT, BELOW = sp.Gt(spread, 1), sp.Eq(spread, 1), sp.Lt(spread, 1)
FACTS = [sp.Gt(n, 1), sp.Gt(s, 0), sp.Eq(q, spread - 1)]


def limit(value: sp.Expr, *relations: sp.Basic) -> Limit:
    return Limit(p_max, n, sp.oo, value, "the spike's limit", substitute=relations)


def claim(statement: sp.Basic, steps: list[Step], **extra: object) -> Claim:
    fields: dict[str, object] = {
        "id": "T99",
        "title": "a claim under test",
        "statement": statement,
        "assumptions": [sp.Gt(a, 0)],
        "source": "test",
        "proof": lambda: steps,
        "witness": {a: 1},
    }
    fields.update(extra)
    return Claim(**fields)  # type: ignore[arg-type]


def problem(result_claim: Claim) -> str:
    result = result_claim.check()
    assert not result.verified
    details = [result.problem]
    for step in result.steps:
        details += [step.detail, *(sub.detail for sub in step.substeps)]
    return " | ".join(details)


# --------------------------------------------------------------------------------------
# Assume


def test_assume_concludes_the_implication_from_steps_under_the_hypothesis() -> None:
    step = Assume(sp.Gt(a, 1), [Implied(sp.Gt(a, 0), "a > 1"), Implied(sp.Gt(a**2, a), "")], "")
    assert step.conclusion == sp.Implies(sp.Gt(a, 1), sp.Gt(a**2, a))
    result = step.check()
    assert result.verified, result.detail
    assert [sub.verified for sub in result.substeps] == [True, True]


def test_assume_fails_when_a_sub_step_needs_the_hypothesis_negation() -> None:
    result = Assume(sp.Gt(a, 1), [Implied(sp.Le(a, 1), "the negation")], "if a > 1").check()
    assert not result.verified
    assert "under the hypothesis, step 'the negation' failed" in result.detail


def test_a_weaker_hypothesis_does_not_carry_the_conclusion() -> None:
    # a² > a holds for a > 1, not for every a > 0
    result = Assume(sp.Gt(a, 0), [Implied(sp.Gt(a**2, a), "")], "if a > 0").check()
    assert not result.verified and "counterexample" in result.detail


def test_sub_conclusions_never_reach_the_outer_facts() -> None:
    inner = [Implied(sp.Gt(a, 1), "the hypothesis itself"), Implied(sp.Gt(a**2, a), "")]
    leaked = claim(
        sp.Gt(a, 1),
        [Assume(sp.Gt(a, 1), inner, "if a > 1"), Implied(sp.Gt(a, 1), "the hypothesis, leaked")],
    )
    assert "the hypothesis, leaked" in problem(leaked)
    leaked_conclusion = claim(
        sp.Gt(a**2, a),
        [Assume(sp.Gt(a, 1), inner, "if a > 1"), Implied(sp.Gt(a**2, a), "its conclusion")],
    )
    assert "its conclusion" in problem(leaked_conclusion)
    kept = claim(
        sp.Implies(sp.Gt(a, 1), sp.Gt(a**2, a)),
        [Assume(sp.Gt(a, 1), inner, "if a > 1")],
    )
    assert kept.check().verified


def test_a_contradictory_hypothesis_concludes_only_a_true_implication() -> None:
    impossible = sp.And(sp.Gt(a, 1), sp.Lt(a, 0))
    step = Assume(impossible, [Implied(sp.false, "anything follows")], "never")
    assert step.check().verified
    assert step.conclusion == sp.Implies(impossible, sp.false)
    # what it says is ¬(a > 1 ∧ a < 0): true, and nothing false follows outside
    outside = claim(sp.Lt(a, 0), [step, Implied(sp.Lt(a, 0), "from the implication")])
    assert "from the implication" in problem(outside)


def test_an_assume_without_steps_fails() -> None:
    assert not Assume(sp.Gt(a, 1), [], "nothing").check().verified


def test_a_hypothesis_with_a_limit_is_refused() -> None:
    hypothesis = sp.Eq(sp.Limit(1 / n, n, sp.oo), 0, evaluate=False)
    result = Assume(hypothesis, [Implied(sp.Gt(a**2, -1), "")], "").check()
    assert not result.verified and "limit or a derivative" in result.detail


def test_a_hypothesis_about_a_summation_index_is_refused() -> None:
    family = Family("xs", (x,), n, (sp.Ge(x, 0),), "n numbers at least 0")
    total = SumOver(y, sp.exp(x), family, "Σ exp(x)")
    inner = Assume(sp.Gt(x, 1), [ExpMonotone(1, x, "x > 1", strict=True)], "if x > 1")
    step = SumOfTerms(total, sp.Integer(1), None, "each term", termwise=(inner,))
    result = step.check([sp.Ge(n, 1)])
    assert not result.verified
    assert "summation index x" in result.detail


def test_a_hypothesis_about_a_natural_number_is_refused() -> None:
    """Induction reads the facts at 0, k and k + 1; a hypothesis ``j = 5`` read so makes
    both cases vacuous and proves ``j = 7`` under ``j = 5``, so ``j ≠ 5`` for every
    natural j.  (Without this side condition the kernel verified this claim.)"""
    steps: list[Step] = [
        Assume(
            sp.Eq(j, 5),
            [Induction(j, sp.Eq(j, 7), "vacuous base and step"), Implied(sp.false, "")],
            "if j = 5",
        ),
        Implied(sp.Ne(j, 5), "so j is never 5"),
    ]
    false = claim(sp.Ne(j, 5), steps, assumptions=[sp.Ge(j, 0)], naturals=(j,), witness={})
    assert "natural-number symbol j" in problem(false)


def test_nested_assumptions_conclude_nested_implications() -> None:
    inner = Assume(sp.Gt(b, 1), [Implied(sp.Gt(a * b, 1), "")], "if b > 1")
    outer = Assume(sp.Gt(a, 1), [inner], "if a > 1")
    assert outer.conclusion == sp.Implies(sp.Gt(a, 1), sp.Implies(sp.Gt(b, 1), sp.Gt(a * b, 1)))
    assert outer.check().verified


def _nested(levels: int) -> Step:
    step: Step = Implied(sp.Gt(a**2 + 1, 0), "")
    for _ in range(levels):
        step = Assume(sp.Gt(a, 1), [step], "")
    return step


def test_steps_nested_too_deep_are_refused_as_written_and_in_a_file() -> None:
    assert _nested(8).check().verified
    deep = _nested(9).check()
    assert not deep.verified and "nested more than 8 deep" in deep.detail
    content = claim(_nested(8).conclusion, [_nested(8)]).content()
    Reader().claim(content)  # eight levels read back
    step = content["steps"][0]
    for _ in range(8):
        step = step["inputs"]["steps"][0]
    innermost = copy.deepcopy(step)
    step.clear()
    step.update(
        {
            "rule": "Assume",
            "inputs": {"hypothesis": ["true"], "steps": [innermost], "description": ""},
        }
    )
    with pytest.raises(CertificateFormatError, match="nested more than 8 deep"):
        Reader().claim(content)


# --------------------------------------------------------------------------------------
# Limit: parameter relations


@pytest.mark.parametrize(
    ("hypothesis", "step"),
    [
        (ABOVE, limit(1, sp.Eq(spread, 1 + q))),
        (AT, limit(sp.Rational(1, 2), sp.Eq(spread, 1))),
        (BELOW, limit(0, sp.Eq(spread, 1 + q))),
    ],
    ids=["s·δ > 1", "s·δ = 1", "s·δ < 1"],
)
def test_each_regime_verifies_through_a_parameter_relation(
    hypothesis: sp.Basic, step: Limit
) -> None:
    result = Assume(hypothesis, [step], "the regime").check(FACTS)
    assert result.verified, result.detail


@pytest.mark.parametrize(
    ("name", "hypothesis", "step", "reason"),
    [
        ("s·δ > 1 concluding 0", ABOVE, limit(0, sp.Eq(spread, 1 + q)), "limit (1)"),
        ("s·δ < 1 concluding 1", BELOW, limit(1, sp.Eq(spread, 1 + q)), "limit (0)"),
        ("s·δ > 1 concluding 1/2", ABOVE, limit(HALF, sp.Eq(spread, 1 + q)), "limit (1)"),
        ("s·δ = 1 concluding 1", AT, limit(1, sp.Eq(spread, 1)), "limit (1/2)"),
        ("no relation: a sign is not enough", ABOVE, limit(1), "sign of M"),
        ("a relation not implied", ABOVE, limit(1, sp.Eq(spread, 2 + q)), "not implied"),
        (
            "the hypothesis negated",
            sp.Le(spread, 1),
            limit(1, sp.Eq(spread, 1 + q)),
            "proved larger",
        ),
        ("the relation as an inequality", ABOVE, limit(1, sp.Gt(spread, 1)), "term = expr"),
        ("a left side not written so", ABOVE, limit(1, sp.Eq(s * M - s * m, 1 + q)), "not occur"),
    ],
)
def test_false_uses_of_parameter_relations_fail(
    name: str, hypothesis: sp.Basic, step: Limit, reason: str
) -> None:
    result = Assume(hypothesis, [step], name).check(FACTS)
    assert not result.verified
    assert reason in result.detail


def test_a_missing_sign_fails_even_with_a_true_relation() -> None:
    # q = sδ − 1 and no hypothesis: q's sign is not a fact
    result = limit(1, sp.Eq(spread, 1 + q)).check(FACTS)
    assert not result.verified and "sign of q" in result.detail


def test_a_relation_that_mentions_the_limit_variable_is_refused() -> None:
    """``a = n`` holds at one value of the claim's n (here ``a = n = 1/2`` is allowed);
    put in under the limit it would make the exponent grow with the bound variable and
    give 1, where the limit at a = 1/2 is 0."""
    spike = n**a / (n**a + n - 1)
    step = Limit(spike, n, sp.oo, 1, "a = n", substitute=[sp.Eq(a, n)])
    result = step.check([sp.Eq(a, n)])  # the fact ties a to n: a is not held fixed
    assert not result.verified
    assert "tie a to n: a limit in n cannot hold it fixed" in result.detail
    half = sp.Rational(1, 2)
    apart = [sp.Ge(a, half), sp.Le(a, half), sp.Eq(n, half)]  # a = n, but not tied
    result = step.check(apart)
    assert not result.verified
    assert "mentions the limit variable n" in result.detail


def test_a_relation_with_a_symbol_defined_through_the_limit_variable_is_refused() -> None:
    spike = n**a / (n**a + n - 1)
    step = Limit(spike, n, sp.oo, 1, "a = 1 + y", substitute=[sp.Eq(a, 1 + y)])
    result = step.check([sp.Eq(a, 1 + y), sp.Gt(y, 0)])
    assert result.verified, result.detail  # y is only a parameter here ...
    defined = Claim(
        id="T99",
        title="a relation through a definition of n",
        statement=step.conclusion,
        assumptions=[sp.Gt(n, 1), sp.Eq(a, 1 + n)],
        source="test",
        proof=lambda: [step],
        definitions=(Let(y, n, "y := n"),),
        witness={n: 2, a: 3},
    )
    assert "y is defined in terms of n" in problem(defined)  # ... not when y := n


def test_a_relation_must_be_well_defined() -> None:
    step = limit(1, sp.Eq(spread, 1 + sp.log(b)))
    result = Assume(ABOVE, [step], "").check([*FACTS, sp.Eq(sp.log(b), q)])
    assert not result.verified and "argument of log(b) > 0" in result.detail


def test_t3_style_limits_are_unchanged_without_relations() -> None:
    c = sp.Symbol("c", real=True)
    step = Limit(n * c / (c + n - 1), n, sp.oo, c, "n · p_max -> c")
    assert step.check([sp.Gt(c, 0)]).verified
    assert not dataclasses.replace(step, expected=c**2).check([sp.Gt(c, 0)]).verified
