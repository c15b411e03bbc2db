"""Measuring trained heads at growing set sizes, in chunks of bounded memory."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

from softmax_dispersion.empirical.bound_check import check_gap_floor, check_t1
from softmax_dispersion.empirical.config import ExperimentConfig
from softmax_dispersion.empirical.model import MaxRetrievalModel
from softmax_dispersion.empirical.normalisers import (
    Normalised,
    Normaliser,
    ScalableSoftmax,
    make_normaliser,
)
from softmax_dispersion.empirical.task import MaxRetrievalBatch, max_retrieval_batch
from softmax_dispersion.empirical.training import data_seed

__all__ = ["HEATMAP_ITEMS", "Evaluation", "evaluate", "test_chunks"]

HEATMAP_ITEMS = 16
"""The heat-map shows the weights on the sets' 16 highest-priority items."""


@dataclass
class Evaluation:
    """Per (normaliser, seed, size) summaries, and the heat-map rows of the first seed."""

    rows: list[dict[str, Any]]
    heatmaps: dict[str, dict[int, list[list[float]]]]


def test_chunks(
    config: ExperimentConfig, seeds: list[int], n: int, device: torch.device
) -> Iterator[tuple[torch.Tensor, MaxRetrievalBatch]]:
    """The test sets of size ``n`` for each seed, stacked, in chunks of bounded size.

    Yields ``(items, batch)`` with ``items`` of shape ``(seeds, sets, n, features)``;
    a chunk holds at most ``config.chunk_items`` items per seed (at least one set).
    Each set is drawn from its own generator (:func:`data_seed`), so the sets depend on
    the seed, ``n`` and their index only, not on the chunking.
    """
    per_chunk = max(1, config.chunk_items // n)
    for start in range(0, config.test_sets, per_chunk):
        sets = range(start, min(start + per_chunk, config.test_sets))
        per_seed = [_test_sets(config, seed, n, sets, device) for seed in seeds]
        stacked = MaxRetrievalBatch(*(torch.stack(parts) for parts in zip(*per_seed, strict=True)))
        yield stacked.items, stacked


def _test_sets(
    config: ExperimentConfig, seed: int, n: int, indices: range, device: torch.device
) -> MaxRetrievalBatch:
    sets = [
        max_retrieval_batch(
            1,
            n,
            classes=config.classes,
            generator=torch.Generator(device).manual_seed(data_seed(seed, "test", n, index)),
        )
        for index in indices
    ]
    return MaxRetrievalBatch(*(torch.cat(parts) for parts in zip(*sets, strict=True)))


def _runner_up_gap(logits: torch.Tensor) -> torch.Tensor:
    if logits.shape[-1] < 2:
        return torch.full(logits.shape[:-1], math.inf, device=logits.device)
    top2 = logits.topk(2, dim=-1).values
    return top2[..., 0] - top2[..., 1]


def _measure(
    model: MaxRetrievalModel,
    normaliser: Normaliser,
    attention: Normalised,
    logits: torch.Tensor,
    values: torch.Tensor,
    batch: MaxRetrievalBatch,
) -> dict[str, torch.Tensor]:
    pooled = torch.einsum("mbn,mbnd->mbd", attention.weights, values)
    predicted = model.predictor(pooled).argmax(-1)
    weights = attention.weights
    out = {
        "correct": (predicted == batch.target).double(),
        "p_max": weights.amax(-1).double(),
        "p_true": weights.gather(-1, batch.top[..., None])[..., 0].double(),
        "entropy": torch.special.entr(weights.double()).sum(-1),
        "delta": (logits.amax(-1) - logits.amin(-1)).double(),
        "gap": _runner_up_gap(logits).double(),
        "beta": attention.beta.double(),
        "one_hot": ((weights > 0).sum(-1) == 1).double(),
    }
    if normaliser.softmax_family and attention.exponentiated is not None:
        check = check_t1(weights, attention.exponentiated)
        out["violation"] = check.violations.double()
        out["ratio"] = check.ratio
        out["bound"] = check.upper
        # The same head held to the fixed-temperature bound (β = 1, the logits' own δ).
        fixed = check_t1(weights, logits)
        out["fixed_theta_exceeded"] = (out["p_max"] > fixed.upper * (1 + fixed.tolerance)).double()
        floor = check_gap_floor(weights, attention.exponentiated)
        out["gap_floor"] = floor.floor
        out["gap_floor_violation"] = floor.violations.double()
    return out


def _heatmap_rows(weights: torch.Tensor, priority: torch.Tensor, sets: int) -> list[list[float]]:
    # First member, up to `sets` sets: weights on the top items by priority, highest first.
    k = min(HEATMAP_ITEMS, weights.shape[-1])
    order = priority[0, :sets].argsort(dim=-1, descending=True)[:, :k]
    rows = weights[0, :sets].gather(-1, order).double().cpu()
    padded = torch.full((rows.shape[0], HEATMAP_ITEMS), math.nan, dtype=torch.float64)
    padded[:, :k] = rows
    return padded.tolist()


def _summarise(
    name: str, seed: int, n: int, parts: dict[str, torch.Tensor], s: float | None
) -> dict[str, Any]:
    def mean(key: str) -> float:
        return float(parts[key].mean())

    row: dict[str, Any] = {
        "normaliser": name,
        "seed": seed,
        "n": n,
        "instances": int(parts["correct"].numel()),
        "accuracy": mean("correct"),
        "p_max_mean": mean("p_max"),
        "p_max_median": float(parts["p_max"].median()),
        "p_true_mean": mean("p_true"),
        "entropy_mean": mean("entropy"),
        "delta_mean": mean("delta"),
        "delta_max": float(parts["delta"].max()),
        "beta_mean": mean("beta"),
        "gap_mean": float(parts["gap"][parts["gap"].isfinite()].mean()) if n > 1 else math.nan,
        "one_hot_fraction": mean("one_hot"),
        "s": math.nan if s is None else s,
        "s_gap_above_one": math.nan,
        "bound_violations": 0,
        "bound_ratio_max": math.nan,
        "bound_ratio_median": math.nan,
        "bound_median": math.nan,
        "fixed_theta_exceeded": 0,
        "gap_floor_mean": math.nan,
        "gap_floor_violations": 0,
    }
    if s is not None and n > 1:
        row["s_gap_above_one"] = float((s * parts["gap"] > 1).double().mean())
    if "violation" in parts:
        row |= {
            "bound_violations": int(parts["violation"].sum()),
            "bound_ratio_max": float(parts["ratio"].max()),
            "bound_ratio_median": float(parts["ratio"].median()),
            "bound_median": float(parts["bound"].median()),
            "fixed_theta_exceeded": int(parts["fixed_theta_exceeded"].sum()),
            "gap_floor_mean": mean("gap_floor"),
            "gap_floor_violations": int(parts["gap_floor_violation"].sum()),
        }
    return row


def _length_scale(normaliser: Normaliser, member: int) -> float | None:
    if isinstance(normaliser, ScalableSoftmax):
        return float(normaliser.s[member])
    return 1.0 if normaliser.name == "logn" else None


@torch.no_grad()
def evaluate(
    model: MaxRetrievalModel,
    config: ExperimentConfig,
    seeds: list[int],
    normalisers: list[str],
    *,
    device: torch.device | str = "cpu",
    progress: bool = False,
) -> Evaluation:
    """Measure an ensemble with each normaliser in ``normalisers`` at every size.

    Parameters
    ----------
    model
        A trained ensemble, one member per seed in ``seeds``.
    config
        Sizes, test sets per size, chunk size and heat-map rows.
    seeds
        The members' seeds (they pick the test sets).
    normalisers
        The trained normaliser, and any inference-only one that modifies it.
    device
        Where to evaluate.
    progress
        Show a progress bar over sizes.

    Returns
    -------
    Evaluation
        One row per (normaliser, seed, size): accuracy; means of the largest weight,
        the weight on the true maximum, the entropy, the logit spread ``δ`` and the
        runner-up gap ``Δ`` (both before any inverse temperature), the effective ``β``;
        the fraction of one-hot rows; and for softmax-family normalisers T1's check:
        violations (rows beyond tolerance), the largest and median ``p_max/bound``, and
        how many rows exceed the fixed-temperature (β = 1) bound; and T10's floor on the
        top weight from its lead over the runner-up (mean floor, violations).

    Notes
    -----
    Each chunk's logits are computed once and shared by all ``normalisers``, so an
    inference-only rule is measured on exactly the sets and logits of its base model.

    Examples
    --------
    >>> from softmax_dispersion.empirical.config import preset
    >>> from softmax_dispersion.empirical.training import build_model
    >>> config = preset("quick", sizes=(4, 64), test_sets=8, width=8)
    >>> model = build_model(config, "softmax", [0], torch.device("cpu")).eval()
    >>> result = evaluate(model, config, [0], ["softmax", "adaptive_temperature"])
    >>> [(r["normaliser"], r["n"], r["bound_violations"]) for r in result.rows][:2]
    [('softmax', 4, 0), ('adaptive_temperature', 4, 0)]
    """
    device = torch.device(device)
    members = len(seeds)
    modules = {
        name: model.normaliser if name == model.normaliser.name else make_normaliser(name, members)
        for name in normalisers
    }
    rows: list[dict[str, Any]] = []
    heatmaps: dict[str, dict[int, list[list[float]]]] = defaultdict(dict)
    sizes = config.sizes
    if progress:
        from tqdm.auto import tqdm

        sizes = tqdm(sizes, desc=f"evaluate {'+'.join(normalisers)}", unit="size", leave=False)
    for n in sizes:
        parts: dict[str, dict[str, list[torch.Tensor]]] = {
            name: defaultdict(list) for name in normalisers
        }
        for items, batch in test_chunks(config, seeds, n, device):
            logits, values = model.attention_logits(items)
            for name, normaliser in modules.items():
                attention = normaliser(logits)
                measured = _measure(model, normaliser, attention, logits, values, batch)
                for key, value in measured.items():
                    parts[name][key].append(value.cpu())
                drawn = heatmaps[name].setdefault(n, [])
                if len(drawn) < config.heatmap_sets:
                    missing = config.heatmap_sets - len(drawn)
                    drawn += _heatmap_rows(attention.weights, batch.items[..., 0], missing)
        for name, normaliser in modules.items():
            joined = {key: torch.cat(values, dim=1) for key, values in parts[name].items()}
            for member, seed in enumerate(seeds):
                per_seed = {key: value[member] for key, value in joined.items()}
                rows.append(_summarise(name, seed, n, per_seed, _length_scale(normaliser, member)))
    return Evaluation(rows=rows, heatmaps=dict(heatmaps))
