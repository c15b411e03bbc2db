"""Every claim verifies, and its false siblings are rejected."""

from __future__ import annotations

import dataclasses

import pytest
import sympy as sp

from softmax_dispersion.theory import all_claims, check, claim_by_id
from softmax_dispersion.theory.adaptive_temperature import COEFFICIENTS, adaptive_claim
from softmax_dispersion.theory.dispersion import T1, T2, T3, coefficient
from softmax_dispersion.theory.dispersion_size import T4, T5
from softmax_dispersion.theory.kernel import Assume, Limit
from softmax_dispersion.theory.length_scaling import T10, S, gap, t10_title
from softmax_dispersion.theory.symbols import H, M, c, delta, e_k, eps, m, n, s, theta

from .conftest import with_statement


def test_the_claims_are_numbered_in_order() -> None:
    ids = [claim.id for claim in all_claims()]
    assert ids == [f"T{i}" for i in range(1, len(ids) + 1)]
    assert len(ids) >= 13


@pytest.mark.parametrize("claim_id", [claim.id for claim in all_claims()])
def test_claim_verifies(claim_id: str) -> None:
    # Each claim in a test of its own, so that xdist spreads them over its workers; the
    # few cited claims (T1 by T4–T6, T8 by T9) are checked again, under a second.
    (result,) = check(claim_id)
    failed = [(s.description, s.detail) for s in result.steps if not s.verified]
    assert result.verified, (result.problem, failed)
    assert result.problem == ""
    assert all(step.method for step in result.steps)
    assert result.steps[-1].statement == result.statement  # both shown from the checked terms


def test_unknown_claim_id_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="known claims: T1, T2") as refused:
        claim_by_id("not-a-claim")  # no claim id can have this form
    assert ", ".join(claim.id for claim in all_claims()) in str(refused.value)


_spike_upper = c.subs(delta, M - m)


def _t10_with_limits(values: dict[sp.Expr, sp.Expr]) -> sp.Basic:
    """T10's statement with the limits of its regimes replaced (old value -> new)."""

    def changed(part: sp.Basic) -> sp.Basic:
        if not isinstance(part, sp.Implies):
            return part
        hypothesis, limit = part.args
        value = values.get(limit.rhs, limit.rhs)
        return sp.Implies(hypothesis, sp.Eq(limit.lhs, value, evaluate=False))

    return sp.And(*(changed(part) for part in sp.And.make_args(T10.statement)))


_T10_SWAPPED = _t10_with_limits({sp.Integer(1): sp.Integer(0), sp.Integer(0): sp.Integer(1)})
FALSE_SIBLINGS = {
    "T1: n instead of n - 1 in the upper bound": with_statement(
        T1, sp.Le(coefficient, _spike_upper / (_spike_upper + n))
    ),
    "T1: flipped inequality": with_statement(
        T1, sp.Ge(coefficient, _spike_upper / (_spike_upper + n - 1))
    ),
    "T2: c/(n + 1) instead of c/n": with_statement(T2, sp.Le(c / (c + n - 1), c / (n + 1))),
    "T4: epsilon instead of (1 - epsilon)/epsilon": with_statement(
        T4,
        sp.Implies(sp.Ge(n, 1 + sp.exp((M - m) / theta) * eps), sp.Le(coefficient, eps)),
    ),
    "T5: n instead of n - 1": with_statement(
        T5, sp.Le(sp.log(n * (1 - eps) / eps), (M - m) / theta)
    ),
    "T10: n - 2 instead of n - 1 in the gap floor": with_statement(
        T10,
        sp.Ge(
            sp.exp(s * sp.log(n) * M) / (sp.exp(s * sp.log(n) * M) + S),
            1 / (1 + (n - 2) * n ** (-s * gap)),
        ),
    ),
    "T10: the regimes sδ > 1 and sδ < 1 with their limits swapped": with_statement(
        T10, _T10_SWAPPED
    ),
    "T11: coefficients read in ascending order": adaptive_claim(
        sp.Poly(COEFFICIENTS[::-1], H).as_expr(), "T11-ascending"
    ),
}


@pytest.mark.parametrize("name", sorted(FALSE_SIBLINGS))
def test_false_sibling_is_rejected(name: str) -> None:
    result = FALSE_SIBLINGS[name].check()
    assert not result.verified
    # a step fails, or (a wrong polynomial) a definition's root is not where it says
    assert any(not step.verified for step in result.steps) or "root" in result.problem


def test_t3_with_the_wrong_constant_is_rejected() -> None:
    steps = [
        Limit(n * c / (c + n - 1), n, sp.oo, c**2, "n · p_max tends to c² (false)"),
        *list(T3.proof())[1:],
    ]
    assert not dataclasses.replace(T3, proof=lambda: steps).check().verified


@pytest.mark.parametrize(
    "swap",
    [
        {sp.Integer(1): sp.Integer(0), sp.Integer(0): sp.Integer(1)},
        {sp.Integer(1): sp.Rational(1, 2), sp.Rational(1, 2): sp.Integer(1)},
    ],
    ids=["sδ > 1 with sδ < 1", "sδ > 1 with sδ = 1"],
)
def test_t10_with_two_regimes_swapped_in_its_proof_too_is_rejected(
    swap: dict[sp.Expr, sp.Expr],
) -> None:
    """Not only the last step: each regime's Limit step, aimed at the swapped value,
    fails under its hypothesis."""

    def swapped(step: object) -> object:
        if type(step) is not Assume:
            return step
        [limit] = step.steps
        return dataclasses.replace(
            step,
            steps=(dataclasses.replace(limit, expected=swap.get(limit.expected, limit.expected)),),
        )

    statement = _t10_with_limits(swap)
    steps = [swapped(step) for step in T10.proof()][:-1]
    false = dataclasses.replace(
        T10,
        id="T10-swapped",
        statement=statement,
        proof=lambda: [*steps, *T10.proof()[-1:]],
    )
    result = false.check()
    assert not result.verified
    failed = [step.description for step in result.steps if not step.verified]
    assert len(failed) == 3  # the two swapped regimes and the last step
    assert all(f.startswith("the regime") for f in failed[:2])


def test_t10_states_the_papers_form() -> None:
    """Each regime is an implication from a relation of s·δ to 1 to the limit of p_max
    itself, and the title is generated from the statement."""
    regimes = [p for p in sp.And.make_args(T10.statement) if isinstance(p, sp.Implies)]
    relations = {type(p.args[0]) for p in regimes}
    assert relations == {sp.StrictGreaterThan, sp.Equality, sp.StrictLessThan}
    assert len(regimes) == 3
    for regime in regimes:
        hypothesis, limit = regime.args
        assert hypothesis.lhs == s * (M - m) and hypothesis.rhs == 1
        assert limit.lhs.args[0] == n ** (s * (M - m)) / (n ** (s * (M - m)) + n - 1)
    assert T10.title == t10_title(T10.statement)
    assert T10.title == "length scaling β = s·log n: p_max → 1, 1/2, 0 as sδ >, =, < 1"
    assert t10_title(_T10_SWAPPED) != T10.title
    with pytest.raises(ValueError, match="not a regime of T10"):
        t10_title(sp.Implies(sp.Gt(s, 1), sp.Eq(sp.Limit(1 / n, n, sp.oo), 0, evaluate=False)))


def test_t1_statement_is_about_the_coefficient_of_e_k() -> None:
    assert e_k in T1.statement.free_symbols
