"""Every claim verifies, and its false siblings are rejected."""

from __future__ import annotations

import dataclasses

import pytest
import sympy as sp

from softmax_dispersion.theory import all_claims, check, claim_by_id
from softmax_dispersion.theory.adaptive_temperature import COEFFICIENTS, adaptive_claim
from softmax_dispersion.theory.dispersion import T1, T2, T3, coefficient
from softmax_dispersion.theory.dispersion_size import T4, T5
from softmax_dispersion.theory.kernel import Limit
from softmax_dispersion.theory.length_scaling import T10, S, gap
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
    assert result.steps[-1].statement == sp.sstr(result.claim.statement)


def test_unknown_claim_id_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="known claims: T1, T2") as refused:
        claim_by_id("not-a-claim")  # no claim id can have this form
    assert ", ".join(claim.id for claim in all_claims()) in str(refused.value)


_spike_upper = c.subs(delta, M - m)
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


def test_t1_statement_is_about_the_coefficient_of_e_k() -> None:
    assert e_k in T1.statement.free_symbols
