"""Training an ensemble of max-retrieval models, one member per seed."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import torch

from softmax_dispersion.empirical.config import ExperimentConfig
from softmax_dispersion.empirical.model import MaxRetrievalModel
from softmax_dispersion.empirical.normalisers import make_normaliser
from softmax_dispersion.empirical.progress import Progress, ProgressMode
from softmax_dispersion.empirical.task import MaxRetrievalBatch, max_retrieval_batch

__all__ = ["CURVE_SIZES", "TrainingRun", "build_model", "data_seed", "train"]

CURVE_SIZES = (16, 256)
"""The set sizes of the learning curves: the top of the training range, and 16 times it."""

_STREAMS = {"train": 0, "test": 1, "sizes": 2, "curve": 3, "gap": 4, "fit": 5}


def data_seed(seed: int, stream: str, size: int = 0, index: int = 0) -> int:
    """The generator seed of one data stream of one model seed.

    Streams: ``"train"`` (training sets), ``"sizes"`` (the training set sizes), ``"test"``
    (test set ``index`` at ``size``), ``"curve"`` (the learning curves' sets at
    ``size``), ``"gap"`` (gap-controlled set ``index`` at ``size``; the lead goes into
    ``index``) and ``"fit"`` (the sets the adaptive polynomial is refitted on).

    Each test set has its own seed, so the sets depend on the model's seed, the size and
    the set's index only: every normaliser is measured on the same sets (the paired tests
    rely on it), and the evaluation's chunking changes nothing.

    Examples
    --------
    >>> data_seed(0, "test", 16, 3) == data_seed(0, "test", 16, 3) != data_seed(1, "test", 16, 3)
    True
    """
    entropy = [seed, _STREAMS[stream], size, index]
    return int(np.random.SeedSequence(entropy).generate_state(1, np.uint64)[0] >> 1)


def build_model(
    config: ExperimentConfig, normaliser: str, seeds: list[int], device: torch.device
) -> MaxRetrievalModel:
    """A freshly initialised ensemble, one member per seed, trained with ``normaliser``."""
    model = MaxRetrievalModel(
        make_normaliser(normaliser, len(seeds)),
        features=1 + config.classes,
        width=config.width,
        classes=config.classes,
        seeds=seeds,
    )
    return model.to(device)


@dataclass
class TrainingRun:
    """A trained ensemble and how training went."""

    model: MaxRetrievalModel
    seeds: list[int]
    seconds: float
    """Wall time of the whole ensemble (its members train together, not one by one)."""
    steps_per_second: float
    final_loss: list[float]
    """Per member: the mean cross-entropy over the last 100 steps."""
    curves: list[dict[str, list[float]]]
    """Per member: ``step`` and, per size of :data:`CURVE_SIZES`, the mean weight on the
    top item (``p_top_16``…) and the accuracy (``accuracy_16``…) at that step."""

    @property
    def seconds_per_seed(self) -> float:
        """The ensemble's wall time shared out over its members."""
        return self.seconds / len(self.seeds)


def _warmup_cosine(steps: int, step: int) -> float:
    # Linear warm-up over the first 5% of steps, then a cosine decay towards 0: short
    # runs reach a sharp head sooner than at a constant rate.
    warmup = max(1, steps // 20)
    if step < warmup:
        return (step + 1) / warmup
    return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup)))


def _clip_per_member(model: MaxRetrievalModel, members: int, clip: float) -> None:
    # Each member's gradient is clipped by its own global norm, as if trained alone.
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    norms = torch.zeros(members, device=grads[0].device)
    for grad in grads:
        norms += grad.reshape(members, -1).pow(2).sum(dim=1)
    scale = (clip / (norms.sqrt() + 1e-6)).clamp(max=1.0)
    for grad in grads:
        grad.mul_(scale.view(members, *[1] * (grad.dim() - 1)))


def _curve_sets(config: ExperimentConfig, seeds: list[int], device: torch.device) -> dict[int, Any]:
    """The fixed sets the learning curves are measured on, per size: stacked per member."""
    sets = {}
    for n in CURVE_SIZES:
        per_seed = [
            max_retrieval_batch(
                config.curve_sets,
                n,
                classes=config.classes,
                generator=torch.Generator(device).manual_seed(data_seed(seed, "curve", n)),
            )
            for seed in seeds
        ]
        sets[n] = MaxRetrievalBatch(*(torch.stack(p) for p in zip(*per_seed, strict=True)))
    return sets


@torch.no_grad()
def _curve_point(model: MaxRetrievalModel, sets: dict[int, Any]) -> dict[str, list[float]]:
    point: dict[str, list[float]] = {}
    for n, batch in sets.items():
        out = model(batch.items)
        top = out.attention.weights.gather(-1, batch.top[..., None])[..., 0]
        point[f"p_top_{n}"] = top.double().mean(dim=1).tolist()
        correct = (out.class_logits.argmax(-1) == batch.target).double()
        point[f"accuracy_{n}"] = correct.mean(dim=1).tolist()
    return point


def _padded(batches: list[MaxRetrievalBatch], length: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Members' sets padded with zero items to ``length``, and each member's lengths."""
    items = torch.zeros(
        len(batches), *batches[0].items.shape[:1], length, batches[0].items.shape[-1]
    )
    lengths = torch.empty(len(batches), batches[0].items.shape[0], dtype=torch.long)
    for member, batch in enumerate(batches):
        n = batch.items.shape[1]
        items[member, :, :n] = batch.items
        lengths[member] = n
    return items.to(batches[0].items.device), lengths.to(batches[0].items.device)


def train(
    config: ExperimentConfig,
    normaliser: str,
    seeds: list[int],
    *,
    device: torch.device | str = "cpu",
    progress: bool | ProgressMode | Progress = False,
) -> TrainingRun:
    """Train one model per seed with ``normaliser``, all at once.

    Parameters
    ----------
    config
        The sizes, steps, optimiser settings and widths.
    normaliser
        A trainable normaliser's name (not ``adaptive_temperature``).
    seeds
        One model per seed; member ``k`` is initialised and fed from ``seeds[k]`` alone.
    device
        Where to train.
    progress
        ``True`` or ``"bar"`` for a progress bar, ``"lines"`` for timed lines on
        standard error, ``False`` or ``"off"`` for silence.

    Returns
    -------
    TrainingRun
        The trained ensemble in evaluation mode, with timings, final losses and the
        learning curves.

    Notes
    -----
    The learning rate rises linearly to ``config.learning_rate`` over the first 5% of
    the steps, then decays to 0 along a cosine.  At each step every member draws its own
    set size ``n_k`` uniformly from ``config.train_sizes`` (its own size schedule, from
    its own seed) and ``config.batch`` sets of that size from its own generator; the
    members' sets are padded to the step's largest ``n_k`` with items whose logits are
    ``−inf`` (weight exactly 0).  The loss is the sum of the members' mean
    cross-entropies, so member ``k``'s gradient is that of its own loss.  AdamW is
    elementwise and clipping is per member, so the members train independently.

    Examples
    --------
    >>> from softmax_dispersion.empirical.config import preset
    >>> run = train(preset("quick", steps=5, width=8, curve_every=2), "softmax", [0, 1])
    >>> len(run.final_loss), run.curves[0]["step"]
    (2, [0, 2, 4, 5])
    """
    device = torch.device(device)
    reporter = Progress.of(progress)
    if make_normaliser(normaliser, 1).train_with != normaliser:
        raise ValueError(f"{normaliser!r} is applied at inference only; it cannot be trained")
    members = len(seeds)
    model = build_model(config, normaliser, seeds, device)
    optimiser = torch.optim.AdamW(
        model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
    )
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, partial(_warmup_cosine, config.steps))
    generators = [torch.Generator(device).manual_seed(data_seed(seed, "train")) for seed in seeds]
    size_generators = [torch.Generator().manual_seed(data_seed(seed, "sizes")) for seed in seeds]
    curve_sets = _curve_sets(config, seeds, device)
    curves: list[dict[str, list[float]]] = [{"step": []} for _ in seeds]

    def record(step: int) -> None:
        point = _curve_point(model, curve_sets)
        for member, curve in enumerate(curves):
            curve["step"].append(step)
            for key, values in point.items():
                curve.setdefault(key, []).append(values[member])

    low, high = config.train_sizes
    recent: list[torch.Tensor] = []
    steps = reporter.track(range(config.steps), f"train {normaliser} ×{members}", unit="steps")
    model.train()
    start = time.perf_counter()
    for step in steps:
        if step % config.curve_every == 0:
            record(step)
        sizes = [int(torch.randint(low, high + 1, (1,), generator=g)) for g in size_generators]
        batches = [
            max_retrieval_batch(config.batch, n, classes=config.classes, generator=g)
            for n, g in zip(sizes, generators, strict=True)
        ]
        items, lengths = _padded(batches, max(sizes))
        target = torch.stack([b.target for b in batches])
        out = model(items, lengths=None if min(sizes) == max(sizes) else lengths)
        losses = (
            torch.nn.functional.cross_entropy(
                out.class_logits.flatten(0, 1), target.flatten(), reduction="none"
            )
            .view(members, -1)
            .mean(dim=1)
        )
        optimiser.zero_grad(set_to_none=True)
        losses.sum().backward()  # type: ignore[no-untyped-call]
        _clip_per_member(model, members, config.clip)
        optimiser.step()
        schedule.step()
        recent = [*recent[-99:], losses.detach()]
    seconds = time.perf_counter() - start
    model.eval()
    record(config.steps)
    return TrainingRun(
        model=model,
        seeds=list(seeds),
        seconds=seconds,
        steps_per_second=config.steps / seconds,
        final_loss=torch.stack(recent).mean(dim=0).tolist(),
        curves=curves,
    )
