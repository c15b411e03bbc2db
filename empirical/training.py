"""Training an ensemble of max-retrieval models, one member per seed."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import partial

import numpy as np
import torch

from softmax_dispersion.empirical.config import ExperimentConfig
from softmax_dispersion.empirical.model import MaxRetrievalModel
from softmax_dispersion.empirical.normalisers import make_normaliser
from softmax_dispersion.empirical.task import max_retrieval_batch

__all__ = ["TrainingRun", "build_model", "data_seed", "train"]

_SIZE_SEED = 2**31 - 1


def data_seed(seed: int, stream: str, size: int = 0, index: int = 0) -> int:
    """The generator seed of one data stream: ``"train"``, or test set ``index`` at ``size``.

    Each test set has its own seed, so the sets depend on the model's seed, the size and
    the set's index only: every normaliser is measured on the same sets (the paired tests
    rely on it), and the evaluation's chunking changes nothing.

    Examples
    --------
    >>> data_seed(0, "test", 16, 3) == data_seed(0, "test", 16, 3) != data_seed(1, "test", 16, 3)
    True
    """
    streams = {"train": 0, "test": 1}
    entropy = [seed, streams[stream], size, index]
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
    steps_per_second: float
    final_loss: list[float]
    """Per member: the mean cross-entropy over the last 100 steps."""


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


def train(
    config: ExperimentConfig,
    normaliser: str,
    seeds: list[int],
    *,
    device: torch.device | str = "cpu",
    progress: bool = False,
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
        Show a progress bar (tqdm) on stderr.

    Returns
    -------
    TrainingRun
        The trained ensemble in evaluation mode, with timings and final losses.

    Notes
    -----
    The learning rate rises linearly to ``config.learning_rate`` over the first 5% of
    the steps, then decays to 0 along a cosine.  Each step draws one size ``n``
    uniformly from ``config.train_sizes`` and, per member, ``config.batch`` sets from
    that member's generator; the loss is the sum of
    the members' mean cross-entropies, so member ``k``'s gradient is that of its own
    loss.  AdamW is elementwise and clipping is per member, so the members train
    independently.

    Examples
    --------
    >>> from softmax_dispersion.empirical.config import preset
    >>> run = train(preset("quick", steps=5, width=8), "softmax", [0, 1])
    >>> len(run.final_loss)
    2
    """
    device = torch.device(device)
    if make_normaliser(normaliser, 1).train_with != normaliser:
        raise ValueError(f"{normaliser!r} is applied at inference only; it cannot be trained")
    members = len(seeds)
    model = build_model(config, normaliser, seeds, device)
    optimiser = torch.optim.AdamW(
        model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
    )
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, partial(_warmup_cosine, config.steps))
    generators = [torch.Generator(device).manual_seed(data_seed(seed, "train")) for seed in seeds]
    sizes = torch.Generator().manual_seed(_SIZE_SEED)
    low, high = config.train_sizes
    recent: list[torch.Tensor] = []
    steps = range(config.steps)
    if progress:
        from tqdm.auto import tqdm

        steps = tqdm(steps, desc=f"train {normaliser} ×{members}", unit="step", leave=False)
    model.train()
    start = time.perf_counter()
    for _ in steps:
        n = int(torch.randint(low, high + 1, (1,), generator=sizes))
        batches = [
            max_retrieval_batch(config.batch, n, classes=config.classes, generator=g)
            for g in generators
        ]
        items = torch.stack([b.items for b in batches])
        target = torch.stack([b.target for b in batches])
        out = model(items)
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
    return TrainingRun(
        model=model,
        seeds=list(seeds),
        seconds=seconds,
        steps_per_second=config.steps / seconds,
        final_loss=torch.stack(recent).mean(dim=0).tolist(),
    )
