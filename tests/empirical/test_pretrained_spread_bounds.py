"""Certified spreads of post-LayerNorm heads: never exceeded, nearly attained, not fooled.

Small random heads (numpy weights), no model download: these run wherever torch and
python-flint are installed.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("torch")
pytest.importorskip("flint")

from softmax_dispersion.empirical.pretrained import spread_bounds
from softmax_dispersion.empirical.pretrained.probe import certificate_violations
from softmax_dispersion.empirical.pretrained.spread_bounds import (
    HeadWeights,
    certify_head,
    witness_spread,
)
from softmax_dispersion.theory import FORMULAS


def _head(seed: int, d: int = 24, k: int = 4, bias: float = 0.3) -> HeadWeights:
    rng = np.random.default_rng(seed)
    return HeadWeights(
        gamma=rng.normal(1.0, 0.3, d),
        beta=rng.normal(0.0, bias, d),
        wq=rng.normal(0.0, 0.4, (k, d)),
        bq=rng.normal(0.0, bias, k),
        wk=rng.normal(0.0, 0.4, (k, d)),
        bk=rng.normal(0.0, bias, k),
        scaling=k**-0.5,
    )


def _layer_norm(v: np.ndarray, weights: HeadWeights, eps: float = 1e-12) -> np.ndarray:
    centred = v - v.mean(axis=-1, keepdims=True)
    z = centred / np.sqrt((centred**2).mean(axis=-1, keepdims=True) + eps)
    return z * weights.gamma + weights.beta


def _spreads(weights: HeadWeights, x: np.ndarray) -> np.ndarray:
    """Every row's spread of the head on tokens ``x`` (``[n, d]``), computed directly."""
    q = x @ weights.wq.T + weights.bq
    k = x @ weights.wk.T + weights.bk
    logits = q @ k.T * weights.scaling
    return logits.max(axis=-1) - logits.min(axis=-1)


@settings(max_examples=30)
@given(
    seed=st.integers(0, 10**6),
    n=st.integers(2, 40),
    scale=st.floats(1e-3, 1e3),
)
def test_no_input_exceeds_the_certificate(seed: int, n: int, scale: float) -> None:
    weights = _head(seed % 50)
    certificate = certify_head(weights)
    rng = np.random.default_rng(seed)
    tokens = _layer_norm(rng.normal(scale=scale, size=(n, weights.gamma.size)), weights)
    assert _spreads(weights, tokens).max() <= float(certificate.delta_star)


@pytest.mark.parametrize("seed", range(5))
def test_the_witness_nearly_attains_the_product_bound(seed: int) -> None:
    weights = _head(seed)
    certificate = certify_head(weights)
    witness = witness_spread(weights)
    assert witness <= float(certificate.delta_star)
    assert witness >= 0.8 * float(certificate.delta_product)
    assert certificate.delta_product <= certificate.delta_factored
    assert certificate.route == "product"


def test_the_witness_inputs_are_layer_norm_outputs() -> None:
    # The witness's bound is only a lower bound on the head if its inputs are reachable:
    # γ ⊙ z + β with z mean-free and ‖z‖ < sqrt(d), which LayerNorm outputs for t·z.
    weights = _head(3)
    d = weights.gamma.size
    captured: list[np.ndarray] = []
    original = spread_bounds._head_logits

    def spy(w: HeadWeights, query: np.ndarray, keys: np.ndarray) -> np.ndarray:
        captured.extend([query, *keys])
        return original(w, query, keys)

    spread_bounds._head_logits = spy
    try:
        witness_spread(weights)
    finally:
        spread_bounds._head_logits = original
    for x in captured:
        z = (x - weights.beta) / weights.gamma
        assert abs(z.mean()) < 1e-12 and np.linalg.norm(z) < np.sqrt(d)
        t = np.sqrt(1e-12 / (1 - np.dot(z, z) / d))
        np.testing.assert_allclose(_layer_norm(t * z, weights), x, atol=1e-9)


def test_keys_scaled_after_certification_are_caught() -> None:
    # The planted error: a head's key weights doubled after certification.
    weights = _head(11)
    certificate = certify_head(weights)
    tampered = replace(weights, wk=2 * weights.wk)
    spreads = np.array([[witness_spread(weights), witness_spread(tampered)]])
    flagged = certificate_violations(spreads, [[certificate, certificate]], 1e-9)
    assert flagged.tolist() == [[False, True]]


def test_a_false_certificate_is_caught_by_measured_spreads() -> None:
    weights = _head(12)
    certificate = certify_head(weights)
    halved = replace(certificate, delta_product=certificate.delta_product / 4)
    measured = np.array([[witness_spread(weights)]])
    assert not certificate_violations(measured, [[certificate]], 1e-9).any()
    assert certificate_violations(measured, [[halved]], 1e-9).all()


def test_the_certificate_evaluates_the_theorys_formula_objects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    used: list[Any] = []
    original = spread_bounds.ball_value

    def spy(target: Any, *args: Any, **kwargs: Any) -> Any:
        used.append(target)
        return original(target, *args, **kwargs)

    monkeypatch.setattr(spread_bounds, "ball_value", spy)
    certify_head(_head(0))
    names = {"logit_spread_bound", "layer_norm_radius", "linear_radius", "dispersion_size"}
    assert {id(FORMULAS[name]) for name in names} == {id(t) for t in used}


def test_dispersion_size_is_t4_at_one_half() -> None:
    certificate = certify_head(_head(1))
    # n*(½) = 1 + e^{δ*}: log10 agrees with the decimal string, both rounded up.
    log10 = float(certificate.delta_star) / np.log(10)
    assert log10 <= certificate.log10_n_star_half <= log10 + 1e-9
    mantissa, exponent = certificate.n_star_half.split("e")
    assert abs(np.log10(float(mantissa)) + int(exponent) - log10) < 1e-5


def test_head_shapes_are_checked() -> None:
    weights = _head(0)
    with pytest.raises(ValueError, match="wk must have shape"):
        replace(weights, wk=weights.wk[:, :-1])
    with pytest.raises(ValueError, match="scaling must be positive"):
        replace(weights, scaling=0.0)


def test_decimal_strings_round_up() -> None:
    certificate = certify_head(_head(2))
    for value in (certificate.delta_star, Fraction(1, 3)):
        assert Fraction(certificate.decimal(value, 6)) >= value
