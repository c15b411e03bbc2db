"""Certificates over what tokens reach: sound on brute force, tight, and not fooled.

Tiny synthetic embedding tables and heads (numpy), so every input, key and triple can be
enumerated directly; the real model's tests are in ``test_pretrained_model.py``.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("torch")

from softmax_dispersion.empirical.pretrained.enclosures import (
    Enclosure,
    down,
    matmul,
    up,
)
from softmax_dispersion.empirical.pretrained.spread_bounds import HeadWeights
from softmax_dispersion.empirical.pretrained.token_certificate import (
    certify_tokens,
    realisable_triple,
)
from softmax_dispersion.empirical.pretrained.token_domain import (
    EmbeddingDomain,
    EmbeddingTables,
    KeySupport,
    head_parts,
)

TOKENS, POSITIONS, TYPES, WIDTH, HEAD = 40, 12, 2, 16, 4


def _f32(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float32).astype(np.float64)


def _tables(seed: int, tokens: int = TOKENS) -> EmbeddingTables:
    rng = np.random.default_rng(seed)
    positions = 0.5 * rng.normal(size=(POSITIONS, WIDTH))
    positions[0] *= 4  # one position far from the rest, as BERT's first
    return EmbeddingTables(
        words=_f32(rng.normal(size=(tokens, WIDTH))),
        positions=_f32(positions),
        types=_f32(0.4 * rng.normal(size=(TYPES, WIDTH))),
        gamma=_f32(rng.normal(1.0, 0.3, WIDTH)),
        beta=_f32(rng.normal(0.0, 0.3, WIDTH)),
        eps=1e-12,
    )


def _head(tables: EmbeddingTables, seed: int) -> HeadWeights:
    rng = np.random.default_rng(seed + 1000)
    return HeadWeights(
        gamma=tables.gamma,
        beta=tables.beta,
        wq=_f32(rng.normal(0.0, 0.5, (HEAD, WIDTH))),
        bq=_f32(rng.normal(0.0, 0.3, HEAD)),
        wk=_f32(rng.normal(0.0, 0.5, (HEAD, WIDTH))),
        bk=_f32(rng.normal(0.0, 0.3, HEAD)),
        scaling=HEAD**-0.5,
    )


def _inputs(tables: EmbeddingTables) -> np.ndarray:
    """Every layer-0 input, ``[types, tokens, positions, d]`` (float64)."""
    v = (
        tables.words[None, :, None, :]
        + tables.positions[None, None, :, :]
        + tables.types[:, None, None, :]
    )
    centred = v - v.mean(-1, keepdims=True)
    z = centred / np.sqrt((centred**2).mean(-1, keepdims=True) + tables.eps)
    return z * tables.gamma + tables.beta


def _largest_spread(tables: EmbeddingTables, head: HeadWeights) -> float:
    """The largest logit spread of any row over every (query, key, key) triple."""
    x = _inputs(tables).reshape(-1, WIDTH)
    logits = (x @ head.wq.T + head.bq) @ (x @ head.wk.T + head.bk).T * head.scaling
    return float((logits.max(axis=1) - logits.min(axis=1)).max())


# -- the enclosures -----------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), scale=st.sampled_from([1e-3, 1.0, 1e3]))
def test_matmul_encloses_the_exact_product(seed: int, scale: float) -> None:
    rng = np.random.default_rng(seed)
    a, b = scale * rng.normal(size=(3, 7)), rng.normal(size=(7, 2)) / scale
    product = matmul(Enclosure.exact(a), Enclosure.exact(b))
    exact = [
        [sum(Fraction(a[i, k]) * Fraction(b[k, j]) for k in range(7)) for j in range(2)]
        for i in range(3)
    ]
    for i in range(3):
        for j in range(2):
            assert Fraction(product.lo[i, j]) <= exact[i][j] <= Fraction(product.hi[i, j])


def test_up_and_down_step_past_one_rounding() -> None:
    x = np.array([0.1, -0.1, 1e-300, 0.0])
    assert np.all(down(x) < x) and np.all(up(x) > x)
    assert Fraction(float(up(0.1 + 0.2))) >= Fraction(1, 10) + Fraction(2, 10)


def test_the_scale_of_every_input_is_enclosed() -> None:
    tables = _tables(0)
    domain = EmbeddingDomain(tables, special_positions=2, block=4)
    v = (
        tables.words[None, :, None, :]
        + tables.positions[None, None, :, :]
        + tables.types[:, None, None, :]
    )
    centred = v - v.mean(-1, keepdims=True)
    inv = 1 / np.sqrt((centred**2).mean(-1) + tables.eps)
    assert np.all(domain.inv_lo <= inv) and np.all(inv <= domain.inv_hi)
    assert np.max((domain.inv_hi - domain.inv_lo) / inv) < 1e-6
    assert domain.size == TOKENS * POSITIONS * TYPES


# -- bounds over every key ----------------------------------------------------------------


def test_support_bounds_hold_over_every_key_and_exact_attains_them() -> None:
    tables = _tables(1)
    head = _head(tables, 1)
    domain = EmbeddingDomain(tables, special_positions=2, block=4)
    support = KeySupport(domain, head_parts(domain, head))
    x = _inputs(tables).reshape(-1, WIDTH)
    keys = (x - tables.beta) @ head.wk.T  # κ = W_k Γ z: the constant W_k β drops out
    queries = (x @ head.wq.T + head.bq)[::37]
    scores = queries @ keys.T
    for level in ("split", "coarse", "fine"):
        upper, lower = support.bounds(Enclosure.exact(queries), level)
        assert np.all(upper >= scores.max(axis=1) - 1e-9 * np.abs(scores).max())
        assert np.all(lower <= scores.min(axis=1) + 1e-9 * np.abs(scores).max())
    for row, q in enumerate(queries[:8]):
        exact = support.exact(Enclosure.exact(q))
        largest, smallest = scores[row].max(), scores[row].min()
        tolerance = 1e-9 * np.abs(scores[row]).max()
        assert exact.upper_found - tolerance <= largest <= exact.upper + tolerance
        assert exact.lower - tolerance <= smallest <= exact.lower_found + tolerance
        token, position, kind = exact.argmax
        assert abs(keys.reshape(TYPES, TOKENS, POSITIONS, HEAD)[kind, token, position] @ q
                   - largest) <= tolerance  # fmt: skip


# -- the certificate ----------------------------------------------------------------------


@pytest.mark.parametrize("seed", [2, 3, 4])
def test_the_certificate_brackets_the_largest_spread(seed: int) -> None:
    tables = _tables(seed)
    head = _head(tables, seed)
    domain = EmbeddingDomain(tables, special_positions=2, block=4)
    parts = head_parts(domain, head)
    certificate = certify_tokens(domain, parts, tolerance=0.02)
    largest = _largest_spread(tables, head)
    assert certificate.found <= largest * (1 + 1e-9) <= certificate.spread_upper
    assert certificate.converged and certificate.spread_upper <= 1.02 * certificate.found
    high, low, estimate = realisable_triple(domain, parts, certificate.query)
    assert high[1] != low[1] and estimate <= largest * (1 + 1e-9)


def test_a_key_weight_scaled_after_certification_exceeds_the_certificate() -> None:
    tables = _tables(5)
    head = _head(tables, 5)
    domain = EmbeddingDomain(tables, special_positions=2, block=4)
    certificate = certify_tokens(domain, head_parts(domain, head), tolerance=0.02)
    assert _largest_spread(tables, head) <= certificate.spread_upper
    planted = HeadWeights(**{**head.__dict__, "wk": head.wk * 1.5})
    assert _largest_spread(tables, planted) > certificate.spread_upper


def test_a_token_left_out_of_the_enumeration_is_caught() -> None:
    tables = _tables(6)
    head = _head(tables, 6)
    domain = EmbeddingDomain(tables, special_positions=2, block=4)
    full = certify_tokens(domain, head_parts(domain, head), tolerance=0.02)
    tokens = {full.query[0], full.high[0], full.low[0]}
    keep = np.array([t for t in range(TOKENS) if t not in tokens])
    short = EmbeddingTables(**{**tables.__dict__, "words": tables.words[keep]})
    reduced = EmbeddingDomain(short, special_positions=2, block=4)
    partial = certify_tokens(reduced, head_parts(reduced, head), tolerance=0.02)
    # The best triple of the whole vocabulary is a spread the head really takes; the
    # certificate of the vocabulary without its tokens is below it: a search that finds
    # it (the realised triple) flags the planted certificate.
    assert full.found > partial.spread_upper


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10**5))
def test_the_certificate_is_never_below_the_brute_force_maximum(seed: int) -> None:
    tables = _tables(seed, tokens=12)
    head = _head(tables, seed)
    domain = EmbeddingDomain(tables, special_positions=1, block=3)
    certificate = certify_tokens(domain, head_parts(domain, head), tolerance=0.1)
    assert _largest_spread(tables, head) <= certificate.spread_upper
