"""Measuring trained heads at growing set sizes, in chunks of bounded memory."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from softmax_dispersion.empirical.bound_check import check_gap_floor, check_t1
from softmax_dispersion.empirical.config import ExperimentConfig
from softmax_dispersion.empirical.model import MaxRetrievalModel
from softmax_dispersion.empirical.normalisers import (
    LogN,
    Normalised,
    Normaliser,
    ScalableSoftmax,
    make_normaliser,
    rule_entropy,
)
from softmax_dispersion.empirical.progress import Progress, ProgressMode
from softmax_dispersion.empirical.task import (
    MaxRetrievalBatch,
    gap_controlled_batch,
    max_retrieval_batch,
)
from softmax_dispersion.empirical.training import data_seed
from softmax_dispersion.empirical.typical import PLANTED, TypicalSetLaw, levels

__all__ = [
    "BETA_BINS",
    "ENTROPY_BINS",
    "HEATMAP_ITEMS",
    "Evaluation",
    "evaluate",
    "evaluate_gap_sets",
    "evaluation_chunks",
    "fixed_beta",
]

HEATMAP_ITEMS = 16
"""The heat-map shows the weights on the sets' 16 highest-priority items."""

ENTROPY_BINS = tuple(0.25 * k for k in range(41))
"""Edges (nats) of the entropy histograms: 0 to 10 in steps of 0.25."""

BETA_BINS = tuple(1 + 0.05 * k for k in range(31))
"""Edges of the inverse-temperature histograms: 1 to 2.5 in steps of 0.05."""


@dataclass
class Evaluation:
    """Per (normaliser, seed, size) summaries, heat-map rows of the first seed, and per
    (normaliser, seed, size) histograms of the entropy and of ``β``."""

    rows: list[dict[str, Any]]
    heatmaps: dict[str, dict[int, list[list[float]]]]
    histograms: dict[str, dict[int, dict[int, dict[str, list[int]]]]]


def evaluation_chunks(
    config: ExperimentConfig,
    seeds: list[int],
    n: int,
    device: torch.device,
    *,
    lead: float | None = None,
    sets: int | None = None,
    stream: str = "test",
) -> Iterator[tuple[torch.Tensor, MaxRetrievalBatch]]:
    """The test sets of size ``n`` for each seed, stacked, in chunks of bounded size.

    Yields ``(items, batch)`` with ``items`` of shape ``(seeds, sets, n, features)``;
    a chunk holds at most ``config.chunk_items`` items per seed (at least one set).
    Each set is drawn from its own generator (:func:`data_seed`), so the sets depend on
    the seed, ``n`` and their index only, not on the chunking.  With ``lead`` the sets are
    gap-controlled (:func:`~softmax_dispersion.empirical.task.gap_controlled_batch`);
    ``sets`` overrides ``config.test_sets``; ``stream`` names another stream of uniform
    sets (``"fit"``: the adaptive rule's refit).
    """
    total = config.test_sets if sets is None else sets
    per_chunk = max(1, config.chunk_items // n)
    for start in range(0, total, per_chunk):
        indices = range(start, min(start + per_chunk, total))
        per_seed = [_test_sets(config, seed, n, indices, device, lead, stream) for seed in seeds]
        stacked = MaxRetrievalBatch(*(torch.stack(parts) for parts in zip(*per_seed, strict=True)))
        yield stacked.items, stacked


def _test_sets(
    config: ExperimentConfig,
    seed: int,
    n: int,
    indices: range,
    device: torch.device,
    lead: float | None,
    stream: str = "test",
) -> MaxRetrievalBatch:
    def draw(index: int) -> MaxRetrievalBatch:
        if lead is None:
            generator = torch.Generator(device).manual_seed(data_seed(seed, stream, n, index))
            return max_retrieval_batch(1, n, classes=config.classes, generator=generator)
        gap_seed = data_seed(seed, "gap", n, index + 10**6 * round(lead * 10**4))
        generator = torch.Generator(device).manual_seed(gap_seed)
        return gap_controlled_batch(1, n, lead=lead, classes=config.classes, generator=generator)

    sets = [draw(index) for index in indices]
    return MaxRetrievalBatch(*(torch.cat(parts) for parts in zip(*sets, strict=True)))


def fixed_beta(normaliser: Normaliser, member: int, n: int) -> float | None:
    """The inverse temperature a head applies at size ``n``, from its definition alone.

    ``1`` for softmax and the bounded heads, ``s·log n`` for SSMax (``s`` the member's
    learned scale), ``log n`` for log-n scaling; ``None`` when ``β`` depends on the set
    (adaptive temperature) or the weights are not a softmax (entmax, sparsemax).  T13's
    prediction uses this value, never the ``β`` a normaliser reports, so that weights
    computed at the wrong ``β`` are caught.
    """
    if not normaliser.softmax_family or normaliser.train_with != normaliser.name:
        return None
    if isinstance(normaliser, ScalableSoftmax):
        return float(normaliser.s[member].detach()) * math.log(n)
    if isinstance(normaliser, LogN):
        return math.log(n)
    return 1.0


def _typical_band(
    laws: list[TypicalSetLaw],
    normaliser: Normaliser,
    batch: MaxRetrievalBatch,
    weights: torch.Tensor,
    eta: float,
    lead: float = 0.0,
) -> dict[str, torch.Tensor] | None:
    """T13 per set: the mean-field value, the band and whether the top weight is outside."""
    n = weights.shape[-1]
    if n < 2:
        return None
    betas = [fixed_beta(normaliser, member, n) for member in range(len(laws))]
    if any(beta is None for beta in betas):
        return None
    top_weight = weights.gather(-1, batch.top[..., None])[..., 0].double().cpu().numpy()
    top_priority = (
        batch.items[..., 0].gather(-1, batch.top[..., None])[..., 0].double().cpu().numpy()
    )
    labels = batch.target.cpu().numpy()
    parts: dict[str, list[np.ndarray[Any, Any]]] = defaultdict(list)
    for member, (law, beta) in enumerate(zip(laws, betas, strict=True)):
        assert beta is not None
        t, c, w = top_priority[member], labels[member], top_weight[member]
        band = law.band(t, c, n=n, beta=beta, eta=eta, lead=lead)
        parts["t13_outside"].append(band.outside(w))
        parts["t13_mean_field"].append(band.mean_field)
        parts["t13_lower"].append(band.lower)
        parts["t13_upper"].append(band.upper)
        parts["t13_bound"].append(band.bound)
        # The same sets held to T13 at larger levels (narrower bands), and to planted laws
        # off by known factors: what the run could have detected.
        for level in levels(eta):
            lower, upper = band.edges(level)
            parts[f"t13|law|1|{level}"].append((w < lower) | (w > upper))
            for factor in PLANTED:
                lower_f, upper_f = band.edges(level, mean_scale=factor)
                parts[f"t13|I|{factor}|{level}"].append((w < lower_f) | (w > upper_f))
                parts[f"t13|band|{factor}|{level}"].append(
                    (w < lower * factor) | (w > upper * factor)
                )
        for factor in PLANTED:
            planted = law.band(t, c, n=n, beta=beta * factor, eta=eta, lead=lead)
            for level in levels(eta):
                lower_f, upper_f = planted.edges(level)
                parts[f"t13|beta|{factor}|{level}"].append((w < lower_f) | (w > upper_f))
    return {key: torch.from_numpy(np.stack(v)).double() for key, v in parts.items()}


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
    laws: list[TypicalSetLaw] | None = None,
    eta: float = 0.05,
    lead: float = 0.0,
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
        # The adaptive rule's entropy of softmax(e): what decides its β.
        "rule_entropy": rule_entropy(torch.softmax(logits.double(), dim=-1)),
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
    if laws is not None:
        band = _typical_band(laws, normaliser, batch, weights, eta, lead)
        if band is not None:
            out |= band
    return out


def _heatmap_rows(weights: torch.Tensor, priority: torch.Tensor, sets: int) -> list[list[float]]:
    # First member, up to `sets` sets: weights on the top items by priority, highest first.
    k = min(HEATMAP_ITEMS, weights.shape[-1])
    order = priority[0, :sets].argsort(dim=-1, descending=True)[:, :k]
    rows = weights[0, :sets].gather(-1, order).double().cpu()
    padded = torch.full((rows.shape[0], HEATMAP_ITEMS), math.nan, dtype=torch.float64)
    padded[:, :k] = rows
    # Four significant digits are all a colour scale shows; the files stay small.
    return [[float(f"{v:.4g}") for v in row] for row in padded.tolist()]


def typical_counts(parts: Mapping[str, torch.Tensor]) -> dict[str, Any]:
    """The sets outside T13's band per level, for the law and for each planted law:
    ``{"sets": k, "law": {level: count}, "I": {factor: {level: count}}, "beta": …,
    "band": …}`` (levels and factors as strings)."""
    out: dict[str, Any] = {}
    for key, value in parts.items():
        if not key.startswith("t13|"):
            continue
        _, kind, factor, level = key.split("|")
        count = int(value.sum())
        if kind == "law":
            out.setdefault("law", {})[level] = count
        else:
            out.setdefault(kind, {}).setdefault(factor, {})[level] = count
    if out:
        out["sets"] = int(parts["t13_outside"].numel())
    return out


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
        "t13_sets": 0,
        "t13_outside": math.nan,
        "t13_mean_field_mean": math.nan,
        "t13_lower_mean": math.nan,
        "t13_upper_mean": math.nan,
        "t13_bound_max": math.nan,
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
    if "t13_outside" in parts:
        row |= {
            "t13_sets": int(parts["t13_outside"].numel()),
            "t13_outside": mean("t13_outside"),
            "t13_mean_field_mean": mean("t13_mean_field"),
            "t13_lower_mean": mean("t13_lower"),
            "t13_upper_mean": mean("t13_upper"),
            "t13_bound_max": float(parts["t13_bound"].max()),
            "t13_counts": typical_counts(parts),
        }
    return row


def _length_scale(normaliser: Normaliser, member: int) -> float | None:
    if isinstance(normaliser, ScalableSoftmax):
        return float(normaliser.s[member])
    return 1.0 if normaliser.name == "logn" else None


def _normaliser_modules(
    model: MaxRetrievalModel,
    normalisers: list[str],
    members: int,
    given: dict[str, Normaliser] | None,
) -> dict[str, Normaliser]:
    """The module per normaliser name: the caller's, the model's own, or a fresh one."""
    given = given or {}
    return {
        name: given.get(name)
        or (model.normaliser if name == model.normaliser.name else make_normaliser(name, members))
        for name in normalisers
    }


@torch.no_grad()
def evaluate(
    model: MaxRetrievalModel,
    config: ExperimentConfig,
    seeds: list[int],
    normalisers: list[str],
    *,
    device: torch.device | str = "cpu",
    progress: bool | ProgressMode | Progress = False,
    laws: list[TypicalSetLaw] | None = None,
    modules: dict[str, Normaliser] | None = None,
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
        Progress over sizes: ``True``/``"bar"``, ``"lines"`` or ``False``/``"off"``.
    laws
        Per member, T13's integrals of its logit map; with them each fixed-``β``
        softmax-family row also gets T13's prediction (``t13_*`` fields).
    modules
        Normaliser instances to use by name (e.g. a refitted adaptive rule); the others
        are made from their names.

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
    modules = _normaliser_modules(model, normalisers, members, modules)
    rows: list[dict[str, Any]] = []
    heatmaps: dict[str, dict[int, list[list[float]]]] = defaultdict(dict)
    histograms: dict[str, dict[int, dict[int, dict[str, list[int]]]]] = defaultdict(dict)
    sizes = Progress.of(progress).track(
        config.sizes, f"evaluate {'+'.join(normalisers)}", unit="sizes"
    )
    for n in sizes:
        parts: dict[str, dict[str, list[torch.Tensor]]] = {
            name: defaultdict(list) for name in normalisers
        }
        for items, batch in evaluation_chunks(config, seeds, n, device):
            logits, values = model.attention_logits(items)
            for name, normaliser in modules.items():
                attention = normaliser(logits)
                measured = _measure(
                    model, normaliser, attention, logits, values, batch, laws, config.eta
                )
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
                if normaliser.softmax_family:
                    histograms[name].setdefault(seed, {})[n] = _histograms(per_seed)
    return Evaluation(rows=rows, heatmaps=dict(heatmaps), histograms=dict(histograms))


def _histograms(parts: dict[str, torch.Tensor]) -> dict[str, list[int]]:
    """Counts of the rule's entropy (of ``softmax(e)``) and of ``β`` over the sets."""
    entropy = np.histogram(parts["rule_entropy"].numpy(), bins=ENTROPY_BINS)[0]
    beta = np.histogram(parts["beta"].numpy().clip(BETA_BINS[0], BETA_BINS[-1]), bins=BETA_BINS)
    return {"entropy": entropy.tolist(), "beta": beta[0].tolist()}


@torch.no_grad()
def evaluate_gap_sets(
    model: MaxRetrievalModel,
    config: ExperimentConfig,
    seeds: list[int],
    normalisers: list[str],
    *,
    laws: list[TypicalSetLaw] | None = None,
    device: torch.device | str = "cpu",
    progress: bool | ProgressMode | Progress = False,
    modules: dict[str, Normaliser] | None = None,
) -> list[dict[str, Any]]:
    """Measure an ensemble on gap-controlled sets: every lead × size of the config.

    ``modules`` gives normaliser instances to use by name, as for :func:`evaluate`.

    Returns
    -------
    list of dict
        One row per (normaliser, seed, lead, size): the accuracy, the mean weight on the
        top item and, with ``laws``, T13's mean-field value and the fraction of sets
        outside its band (the band integrates the logit map below ``t − lead``).

    Examples
    --------
    >>> from softmax_dispersion.empirical.config import preset
    >>> from softmax_dispersion.empirical.training import build_model
    >>> config = preset("quick", gap_leads=(0.5,), gap_sizes=(64,), gap_sets=4, width=8)
    >>> model = build_model(config, "softmax", [0], torch.device("cpu")).eval()
    >>> rows = evaluate_gap_sets(model, config, [0], ["softmax"])
    >>> [(r["lead"], r["n"], r["instances"]) for r in rows]
    [(0.5, 64, 4)]
    """
    device = torch.device(device)
    members = len(seeds)
    modules = _normaliser_modules(model, normalisers, members, modules)
    cells = [(lead, n) for lead in config.gap_leads for n in config.gap_sizes]
    rows: list[dict[str, Any]] = []
    if config.gap_sets == 0:
        return rows
    for lead, n in Progress.of(progress).track(cells, "gap-controlled sets", unit="cells"):
        parts: dict[str, dict[str, list[torch.Tensor]]] = {
            name: defaultdict(list) for name in normalisers
        }
        for items, batch in evaluation_chunks(
            config, seeds, n, device, lead=lead, sets=config.gap_sets
        ):
            logits, values = model.attention_logits(items)
            for name, normaliser in modules.items():
                attention = normaliser(logits)
                measured = _measure(
                    model, normaliser, attention, logits, values, batch, laws, config.eta, lead
                )
                for key, value in measured.items():
                    parts[name][key].append(value.cpu())
        for name in normalisers:
            joined = {key: torch.cat(values, dim=1) for key, values in parts[name].items()}
            for member, seed in enumerate(seeds):
                per = {key: value[member] for key, value in joined.items()}
                row: dict[str, Any] = {
                    "normaliser": name,
                    "seed": seed,
                    "lead": lead,
                    "n": n,
                    "instances": int(per["correct"].numel()),
                    "accuracy": float(per["correct"].mean()),
                    "p_true_mean": float(per["p_true"].mean()),
                    "t13_outside": math.nan,
                    "t13_mean_field_mean": math.nan,
                    "t13_sets": 0,
                }
                if "t13_outside" in per:
                    row |= {
                        "t13_outside": float(per["t13_outside"].mean()),
                        "t13_mean_field_mean": float(per["t13_mean_field"].mean()),
                        "t13_sets": int(per["t13_outside"].numel()),
                        "t13_counts": typical_counts(per),
                    }
                rows.append(row)
    return rows
