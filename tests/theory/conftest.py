"""Shared helpers for the claim tests."""

from __future__ import annotations

import dataclasses

import sympy as sp

from softmax_dispersion.theory.kernel import Claim, Implied


def with_statement(claim: Claim, statement: sp.Basic) -> Claim:
    """``claim``'s proof, re-aimed at ``statement`` in its last step (a false sibling)."""
    steps = list(claim.proof())[:-1]
    return dataclasses.replace(
        claim,
        id=f"{claim.id}-false",
        statement=statement,
        proof=lambda: [*steps, Implied(statement, "the altered statement")],
    )
