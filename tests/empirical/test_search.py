"""The token search: it beats random tokens, and every head keeps what it found.

A tiny random BERT (transformers, no download) stands in for the pretrained model.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from softmax_dispersion.empirical.pretrained.search import (  # noqa: E402
    SearchConfig,
    TokenSearch,
    head_spreads,
)

VOCABULARY = 64


@pytest.fixture(scope="module")
def model() -> Any:
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=VOCABULARY,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=64,
        initializer_range=0.3,  # logits spread enough to search (0.02 makes all rows flat)
    )
    bert = transformers.BertModel(config, add_pooling_layer=False)
    bert.set_attn_implementation("eager")
    return bert.eval()


def test_every_sequence_offered_is_measured_and_kept(model: Any) -> None:
    search = TokenSearch(model, VOCABULARY, [1, 2], SearchConfig(seconds=0, repeat_tokens=4))
    ids = np.array([[3, 4, 5, 6], [7, 7, 7, 7]])
    result = search.run(seeds=[("given", ids, np.zeros_like(ids))])
    spreads = head_spreads(model, torch.as_tensor(ids), torch.zeros(2, 4, dtype=torch.long))
    np.testing.assert_allclose(result.spreads, spreads.max(axis=0))
    best = spreads.argmax(axis=0)
    assert all(
        list(result.sequences[i][h]) == list(ids[best[i, h]]) for i in range(2) for h in range(4)
    )
    assert {s for row in result.stage for s in row} == {"given"}


def test_starts_are_not_offered_as_found(model: Any) -> None:
    # The starts are the baseline: a search that ran nothing has found nothing.
    search = TokenSearch(model, VOCABULARY, [1, 2], SearchConfig(seconds=0, repeat_tokens=4))
    ids = np.array([[3, 4, 5, 6], [7, 7, 7, 7]])
    spreads = head_spreads(model, torch.as_tensor(ids))
    result = search.run(starts=[(ids, np.zeros_like(ids), spreads)])
    assert np.all(result.spreads == -np.inf) and result.by_stage == {}


TOKENS = 512
"""Random tokens the probe measures at each size."""


def _random_inputs(rng: np.random.Generator, model: Any) -> list[tuple[np.ndarray, ...]]:
    """Random sequences as the probe draws them (512 tokens at each size, up to the
    tiny model's 64 positions), with their spreads: the baseline the search is held to."""
    inputs = []
    for n in (8, 16, 32, 64):
        ids = rng.integers(0, VOCABULARY, size=(TOKENS // n, n))
        inputs.append((ids, np.zeros_like(ids), head_spreads(model, torch.as_tensor(ids))))
    return inputs


def _probe_search(model: Any, config: SearchConfig, starts: bool = True) -> tuple[Any, Any]:
    """The search as the probe runs it — layer 0's heads seeded with their certificates'
    best triples, gradient-guided swaps for the later layer, the random inputs as starts
    and reference — and the random inputs' largest spreads."""
    from pathlib import Path

    from softmax_dispersion.empirical.pretrained.model import LoadedModel
    from softmax_dispersion.empirical.pretrained.probe import _run_triples
    from softmax_dispersion.empirical.pretrained.token_bounds import token_certificates

    loaded = LoadedModel(model, None, model.config.to_dict(), Path("tiny"))
    ln_bounds = [[1e9] * 4, [1e9] * 4]
    bounds = token_certificates(loaded, ln_bounds, tolerance=0.01)
    triples = _run_triples(loaded, bounds, ln_bounds)
    seeds = [
        ("certificate triple", np.array([t["sequence"]]), np.array([t["token_types"]]))
        for t in triples.values()
    ]
    inputs = _random_inputs(np.random.default_rng(1), model)
    reference = np.max([spreads.max(axis=0) for *_, spreads in inputs], axis=0)
    search = TokenSearch(model, VOCABULARY, [0, 1], config)
    result = search.run(
        seeds=seeds, starts=inputs if starts else (), reference=reference if starts else None
    )
    return result, reference, bounds


_CONFIG = SearchConfig(
    seconds=60, repeat_lengths=(8, 32), repeat_tokens=VOCABULARY, gradient_length=32,
    rounds=10, swaps=16, top_k=8, seed=0, layers=(1,),
)  # fmt: skip


@pytest.mark.slow
def test_the_search_beats_random_tokens_on_every_head(model: Any) -> None:
    result, reference, bounds = _probe_search(model, _CONFIG)
    # Strictly above the random inputs it was given, on every head.
    assert np.all(result.spreads > reference), (result.spreads, reference)
    assert result.rounds >= 1 and result.refine_rounds >= 1
    assert {"gradient", "gradient from best"} <= set(result.by_stage)
    # And above as many fresh random sequences as the search ran, at its two lengths.
    rng = np.random.default_rng(0)
    random = []
    for n in (8, 32):
        ids = rng.integers(0, VOCABULARY, size=(result.evaluated // 2, n))
        random.append(head_spreads(model, torch.as_tensor(ids)).max(axis=0))
    baseline = np.maximum(*random)
    assert np.all(result.spreads > baseline), (result.spreads, baseline)
    # Layer 0's triples are within 1% of their certificates: nothing random gets past them.
    for bound in bounds.heads[:4]:
        assert result.spreads[0, bound.head] <= bound.upper * (1 + 1e-5)
        assert result.spreads[0, bound.head] >= bound.upper / 1.011


@pytest.mark.slow
def test_a_search_without_swaps_loses_to_random_tokens(model: Any) -> None:
    # The planted weak search: repeated tokens and pairs only (no gradient-guided swaps,
    # one random start) — the random inputs beat it on some head, so the comparison the
    # test above makes can fail.
    weak = dataclasses.replace(_CONFIG, rounds=0, random_starts=1)
    result, reference, _ = _probe_search(model, weak, starts=False)
    assert result.rounds == result.refine_rounds == 0
    assert not np.all(result.spreads > reference), (result.spreads, reference)
