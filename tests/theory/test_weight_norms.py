"""T8: the weight-norm bound on the logit spread, proven and checked on random heads."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from softmax_dispersion.theory.formulas import FORMULAS
from softmax_dispersion.theory.kernel import Claim, Implied, Step
from softmax_dispersion.theory.symbols import delta
from softmax_dispersion.theory.weight_norms import (
    CLAIMS,
    T8,
    dot_i,
    key_norm_i,
    logit_spread_bound,
    query_norm,
    scale,
    sigma_k,
    sigma_q,
    x_radius,
    y_norm,
)


def test_t8_proof_concludes_its_statement() -> None:
    # that it verifies is test_claims' (one test per claim)
    assert T8.proof()[-1].conclusion == T8.statement
    assert CLAIMS == (T8,)


def test_t8_states_the_exported_formula() -> None:
    assert T8.statement == sp.Le(delta, logit_spread_bound.expr)
    assert FORMULAS["logit_spread_bound"] is logit_spread_bound
    assert [str(a) for a in logit_spread_bound.args] == [
        "sigma_q",
        "sigma_k",
        "y_norm",
        "x_radius",
        "scale",
    ]
    assert logit_spread_bound(sigma_q=1, sigma_k=2, y_norm=3, x_radius=4, scale=2) == 24
    assert logit_spread_bound.numpy(1.0, 2.0, 3.0, 4.0, 2.0) == pytest.approx(24.0)


def _sibling(statement: sp.Basic, assumptions: list[sp.Basic] | None = None) -> Claim:
    """T8's proof with its last step aimed at another statement."""

    def proof() -> list[Step]:
        return [*T8.proof()[:-1], Implied(statement, "the false sibling's conclusion")]

    return Claim(
        id="T8-false",
        title="a false sibling of T8",
        statement=statement,
        assumptions=T8.assumptions if assumptions is None else assumptions,
        source="test",
        proof=proof,
    )


@pytest.mark.parametrize(
    "wrong_bound",
    [
        sigma_q * sigma_k * y_norm * x_radius / scale,  # without the factor 2
        2 * (sigma_q + sigma_k) * y_norm * x_radius / scale,  # a sum, not the product
        2 * sigma_q * sigma_k * y_norm * x_radius,  # forgetting the scale
        2 * sigma_q * sigma_k * x_radius / scale,  # forgetting the query's norm
    ],
    ids=["no-factor-2", "sum-of-norms", "no-scale", "no-query-norm"],
)
def test_false_bounds_are_rejected(wrong_bound: sp.Expr) -> None:
    result = _sibling(sp.Le(delta, wrong_bound)).check()
    assert result.verified is False
    assert not result.steps[-1].verified
    assert "counterexample" in result.steps[-1].detail


@pytest.mark.parametrize(
    "dropped",
    [sp.Le(-query_norm * key_norm_i, dot_i), sp.Ge(sigma_k, 0)],
    ids=["cauchy-schwarz-lower-side", "sigma-k-non-negative"],
)
def test_every_assumption_is_needed(dropped: sp.Basic) -> None:
    assert dropped in T8.assumptions
    fewer = [a for a in T8.assumptions if a != dropped]
    assert _sibling(T8.statement, fewer).check().verified is False


def _spread_and_bound(
    rng: np.random.Generator, n: int, d: int, d_k: int, size: float, s: float
) -> tuple[np.ndarray, float, float]:
    q = rng.normal(size=(d_k, d)) * size
    k = rng.normal(size=(d_k, d)) * size
    y = rng.normal(size=d) * rng.uniform(0.1, 3)
    x = rng.normal(size=(n, d)) * rng.uniform(0.1, 3, size=(n, 1))
    logits = (k @ x.T).T @ (q @ y) / s
    bound = logit_spread_bound.numpy(
        np.linalg.norm(q, 2),
        np.linalg.norm(k, 2),
        np.linalg.norm(y),
        np.linalg.norm(x, axis=1).max(),
        s,
    )
    return logits, float(np.ptp(logits)), float(bound)


@settings(max_examples=60)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 40),
    d=st.integers(1, 12),
    d_k=st.integers(1, 12),
    size=st.floats(1e-3, 1e3),
    s=st.floats(1e-2, 1e2),
)
def test_random_heads_obey_the_bound(
    seed: int, n: int, d: int, d_k: int, size: float, s: float
) -> None:
    logits, spread, bound = _spread_and_bound(np.random.default_rng(seed), n, d, d_k, size, s)
    slack = 1e-12 * bound + 1e-300
    assert spread <= bound + slack
    assert np.all(np.abs(logits) <= bound / 2 + slack)  # every logit within [-B, B]


def test_the_factor_two_is_attained() -> None:
    # Q = K = I, keys y and -y: logits ±‖y‖²/s, spread 2‖y‖²/s = the bound.
    y = np.array([3.0, 4.0])
    x = np.stack([y, -y])
    s = 2.0
    logits = x @ y / s
    bound = logit_spread_bound.numpy(1.0, 1.0, np.linalg.norm(y), 5.0, s)
    assert np.ptp(logits) == pytest.approx(bound, rel=1e-15)
