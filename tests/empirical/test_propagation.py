"""Boxes around reachable hidden states: each step contains what it claims to.

Random boxes and sampled points (numpy): every sampled vector's image must lie in the
image box, and the variance bound must be below every sampled variance.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("torch")
pytest.importorskip("flint")

from softmax_dispersion.empirical.pretrained.propagation import (
    Box,
    _affine,
    _gelu,
    _layer_norm,
    box_spread_bound,
    smallest_variance,
)
from softmax_dispersion.empirical.pretrained.spread_bounds import HeadWeights


def _box(seed: int, d: int = 8, offset: float = 0.0) -> Box:
    rng = np.random.default_rng(seed)
    centre = rng.normal(size=d) + offset * np.arange(d)
    width = rng.uniform(0.0, 1.0, size=d)
    return Box(centre - width, centre + width)


def _samples(box: Box, seed: int, count: int = 500) -> np.ndarray:
    rng = np.random.default_rng(seed)
    corners = rng.integers(0, 2, size=(count // 2, box.lo.size))
    inside = rng.uniform(size=(count - count // 2, box.lo.size))
    t = np.concatenate([corners, inside])
    return box.lo + t * (box.hi - box.lo)


def _inside(points: np.ndarray, box: Box) -> bool:
    return bool(np.all(points >= box.lo) and np.all(points <= box.hi))


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), offset=st.sampled_from([0.0, 0.5, 3.0]))
def test_the_variance_bound_is_below_every_vector_in_the_box(seed: int, offset: float) -> None:
    box = _box(seed, offset=offset)
    points = _samples(box, seed)
    assert smallest_variance(box) <= points.var(axis=1).min()


def test_a_box_holding_a_constant_vector_allows_variance_zero() -> None:
    assert smallest_variance(Box(np.array([-1.0, 0.0, -0.5]), np.array([1.0, 2.0, 0.5]))) == 0


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), offset=st.sampled_from([0.0, 3.0]))
def test_layer_norm_and_affine_boxes_hold_their_images(seed: int, offset: float) -> None:
    rng = np.random.default_rng(seed)
    box = _box(seed, offset=offset)
    points = _samples(box, seed)
    gamma, beta = rng.normal(1, 0.5, 8), rng.normal(0, 0.5, 8)
    out, _ = _layer_norm(box, gamma, beta, 1e-12)
    centred = points - points.mean(axis=1, keepdims=True)
    images = centred / np.sqrt((centred**2).mean(axis=1, keepdims=True) + 1e-12) * gamma + beta
    assert _inside(images, out)
    weight, bias = rng.normal(size=(5, 8)), rng.normal(size=5)
    assert _inside(points @ weight.T + bias, _affine(box, weight, bias))


def test_gelu_boxes_hold_their_images_across_the_minimum() -> None:
    from scipy.special import erf

    box = Box(np.array([-3.0, -1.0, -0.5, 0.2]), np.array([-2.0, 0.5, -0.6 + 1.0, 1.0]))
    points = _samples(box, 0)
    images = points * (1 + erf(points / np.sqrt(2))) / 2
    assert _inside(images, _gelu(box))


def test_the_box_spread_bound_holds_for_any_rows_in_the_box() -> None:
    rng = np.random.default_rng(3)
    box = _box(3)
    head = HeadWeights(np.ones(8), np.zeros(8), rng.normal(size=(4, 8)), rng.normal(size=4),
                       rng.normal(size=(4, 8)), rng.normal(size=4), scaling=0.5)  # fmt: skip
    points = _samples(box, 3)
    logits = (points @ head.wq.T + head.bq) @ (points @ head.wk.T + head.bk).T * head.scaling
    assert (logits.max(axis=1) - logits.min(axis=1)).max() <= box_spread_bound(box, head)
