"""Certified largest-singular-value bounds: above the truth, tight, and never fooled."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("flint")

from softmax_dispersion.numerics.operator_norm import (
    _certified_positive_definite,
    _midpoints,
    arb_gram,
    arb_matrix,
    certified_largest_eigenvalue,
    certified_spectral_norm,
)


def _random(seed: int, rows: int, cols: int, scale: float = 1.0) -> np.ndarray:
    return np.random.default_rng(seed).normal(scale=scale, size=(rows, cols))


@settings(max_examples=25)
@given(
    seed=st.integers(0, 10**6),
    rows=st.integers(1, 12),
    cols=st.integers(1, 40),
    log_scale=st.floats(-20, 20),
)
def test_the_bound_is_above_the_singular_value_and_tight(
    seed: int, rows: int, cols: int, log_scale: float
) -> None:
    w = _random(seed, rows, cols, 2.0**log_scale)
    sigma = np.linalg.norm(w, 2)
    bound = float(certified_spectral_norm(w))
    assert sigma <= bound <= sigma * (1 + 2**-20)


def test_a_product_is_bounded_through_its_small_gram_matrices() -> None:
    # A = P Γ W_kᵀ W_q Γ P as in a head: d × d of rank k, bounded via two k × k Grams.
    d, k = 96, 8
    wk, wq, gamma = _random(1, k, d), _random(2, k, d), _random(3, 1, d)[0]
    centre = np.eye(d) - 1 / d
    product = centre @ (wk * gamma).T @ (wq * gamma) @ centre
    a = arb_gram(wk * gamma, centre_columns=True)
    b = arb_gram(wq * gamma, centre_columns=True)
    bound = float(certified_largest_eigenvalue(a, b).sqrt_upper)
    sigma = np.linalg.norm(product, 2)
    assert sigma <= bound <= sigma * (1 + 2**-20)


def test_centred_gram_matches_its_definition() -> None:
    x = _random(4, 3, 7)
    centre = np.eye(7) - 1 / 7
    np.testing.assert_allclose(_midpoints(arb_gram(x, centre_columns=True)), x @ centre @ x.T)


def test_positive_definiteness_is_refused_for_a_false_bound() -> None:
    # The planted lie: a candidate μ 0.1% below λ_max must not certify.
    x = _random(5, 6, 20)
    gram = arb_gram(x)
    lam = float(np.linalg.eigvalsh(x @ x.T)[-1])
    for mu, expected in ((lam * 1.001, True), (lam * 0.999, False)):
        t = arb_matrix(mu * np.eye(6)) - gram
        assert _certified_positive_definite(t, _midpoints(t)) is expected


def test_product_form_refuses_a_false_bound() -> None:
    wk, wq = _random(6, 4, 30), _random(7, 4, 30)
    a, b = arb_gram(wk), arb_gram(wq)
    lam = np.linalg.norm(wk.T @ wq, 2) ** 2
    for mu, expected in ((lam * 1.001, True), (lam * 0.999, False)):
        t = arb_matrix(mu * np.eye(4)) * a - a * b * a
        assert _certified_positive_definite(t, _midpoints(t)) is expected


def test_a_singular_left_factor_cannot_be_certified_in_product_form() -> None:
    wk = np.zeros((3, 10))
    wk[0] = 1.0  # rank one: A = W_k W_kᵀ is singular, μA − ABA is never definite
    with pytest.raises(ArithmeticError, match="could not certify"):
        certified_largest_eigenvalue(arb_gram(wk), arb_gram(_random(8, 3, 10)))


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match="factor must be finite"):
        arb_gram([[1.0, float("nan")]])
    with pytest.raises(ValueError, match="matrix must be a matrix"):
        certified_spectral_norm([1.0, 2.0])
