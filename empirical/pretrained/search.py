"""A gradient-free adversarial search over token sequences for each head's largest spread.

Each head keeps its best sequence so far.  A round mutates every head's best sequence
once (one to three positions set to tokens drawn uniformly from the whole vocabulary,
special tokens included: the certificate covers every input), runs all mutants through
the real model in one batch, and lets **every** head adopt any mutant that beats its
best — a mutant made for one head often serves another.  The spread of a sequence for a
head is its largest row spread ``max_rows(max e − min e)``.

The measured maximum can only be a lower bound on what the head can do; the certified
``δ*`` must be above it, or the certificate is wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from softmax_dispersion.empirical.pretrained.measure import sequence_spreads

__all__ = ["SearchResult", "adversarial_search"]


@dataclass(frozen=True)
class SearchResult:
    """The best sequence and spread found for every head."""

    spreads: np.ndarray
    """``[layers, heads]``: the largest spread found (float64)."""
    sequences: np.ndarray
    """``[layers, heads, n]``: a sequence attaining it."""
    start: np.ndarray
    """``[layers, heads]``: the best spread among the starting sequences."""
    history: np.ndarray
    """``[rounds + 1, layers, heads]``: the best spread after each round."""
    evaluated: int
    """How many sequences were run through the model."""


def _mutate(sequence: np.ndarray, vocabulary_size: int, rng: np.random.Generator) -> np.ndarray:
    mutant = sequence.copy()
    count = int(rng.choice([1, 2, 3], p=[0.5, 0.3, 0.2]))
    positions = rng.choice(sequence.size, size=min(count, sequence.size), replace=False)
    mutant[positions] = rng.integers(0, vocabulary_size, size=positions.size)
    return mutant


def adversarial_search(
    model: object,
    starts: np.ndarray,
    *,
    rounds: int,
    vocabulary_size: int,
    rng: np.random.Generator,
    spreads_of: Callable[[object, torch.Tensor], np.ndarray] = sequence_spreads,
) -> SearchResult:
    """Search, for every head, a token sequence that maximises its logit spread.

    Parameters
    ----------
    model
        The transformers model.
    starts : array, shape (count, n)
        Starting sequences (all of one length); each head starts from its best one.
    rounds : int
        Mutation rounds; each runs one mutant per head (``layers × heads`` sequences).
    vocabulary_size : int
        Mutations draw token ids from ``0 … vocabulary_size − 1``.
    rng
        The random generator (the search is deterministic given it).
    spreads_of
        Maps a batch ``[batch, n]`` to spreads ``[batch, layers, heads]``.

    Returns
    -------
    SearchResult
    """
    if rounds < 0:
        raise ValueError(f"rounds must be >= 0, got {rounds}")
    start_spreads = spreads_of(model, torch.as_tensor(starts))  # [count, layers, heads]
    layers, heads = start_spreads.shape[1:]
    best_index = start_spreads.reshape(len(starts), -1).argmax(axis=0)
    best = start_spreads.reshape(len(starts), -1).max(axis=0)
    sequences = starts[best_index].copy()  # [layers·heads, n]
    history = [best.copy()]
    evaluated = len(starts)
    for _ in range(rounds):
        mutants = np.stack([_mutate(s, vocabulary_size, rng) for s in sequences])
        values = spreads_of(model, torch.as_tensor(mutants)).reshape(len(mutants), -1)
        evaluated += len(mutants)
        winner = values.argmax(axis=0)
        improved = values[winner, np.arange(values.shape[1])] > best
        best = np.where(improved, values.max(axis=0), best)
        sequences[improved] = mutants[winner[improved]]
        history.append(best.copy())
    n = starts.shape[1]
    return SearchResult(
        spreads=best.reshape(layers, heads),
        sequences=sequences.reshape(layers, heads, n),
        start=history[0].reshape(layers, heads),
        history=np.stack(history).reshape(len(history), layers, heads),
        evaluated=evaluated,
    )
