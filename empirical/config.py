"""What a max-retrieval experiment runs: sizes, normalisers, seeds, training budget."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from softmax_dispersion.empirical.normalisers import NORMALISERS

__all__ = ["LARGEST_SIZE", "PRESETS", "ExperimentConfig", "preset"]


LARGEST_SIZE = 2**20
"""The largest test set size accepted (one set of it fits in memory with room to spare)."""


@dataclass(frozen=True)
class ExperimentConfig:
    """Everything that determines an experiment's results (given the device).

    Attributes
    ----------
    normalisers
        Which normalisers to evaluate; inference-only ones (``adaptive_temperature``)
        reuse the models trained with the normaliser they modify.
    seeds
        How many independent models per trained normaliser (seeds ``0 … seeds−1``).
    sizes
        The test set sizes, strictly increasing.
    train_sizes
        Training set sizes are drawn uniformly from this inclusive range.
    steps, batch, learning_rate, weight_decay, clip
        AdamW with a warm-up then cosine learning rate (peak ``learning_rate``),
        gradient clipping at global norm ``clip`` per model.
    width, classes
        The hidden width ``d`` and the number of classes.
    test_sets
        Test instances per size and seed.
    chunk_items
        Evaluation processes at most this many items (sets × size) at once per model,
        so memory stays bounded at any size.
    heatmap_sets
        Sets drawn in the Figure-2 heat-map, per size.
    """

    normalisers: tuple[str, ...] = ("softmax", "adaptive_temperature", "ssmax")
    seeds: int = 5
    sizes: tuple[int, ...] = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
    train_sizes: tuple[int, int] = (5, 16)
    steps: int = 3000
    batch: int = 128
    learning_rate: float = 3e-3
    weight_decay: float = 1e-3
    clip: float = 1.0
    width: int = 64
    classes: int = 10
    test_sets: int = 512
    chunk_items: int = 2**17
    heatmap_sets: int = 16

    def __post_init__(self) -> None:
        unknown = [name for name in self.normalisers if name not in NORMALISERS]
        if unknown:
            raise ValueError(
                f"unknown normaliser {unknown[0]!r}; expected one of {', '.join(NORMALISERS)}"
            )
        if not self.normalisers:
            raise ValueError("normalisers must name at least one normaliser")
        if len(set(self.normalisers)) != len(self.normalisers):
            raise ValueError(f"normalisers are duplicated: {', '.join(self.normalisers)}")
        if not self.sizes:
            raise ValueError("sizes must hold at least one size")
        if any(size < 1 for size in self.sizes):
            raise ValueError(f"every size must be >= 1, got {min(self.sizes)}")
        if max(self.sizes) > LARGEST_SIZE:
            raise ValueError(f"sizes must be <= {LARGEST_SIZE}, got {max(self.sizes)}")
        if list(self.sizes) != sorted(set(self.sizes)):
            raise ValueError(f"sizes must be strictly increasing without duplicates: {self.sizes}")
        low, high = self.train_sizes
        if not 1 <= low <= high:
            raise ValueError(f"train_sizes must satisfy 1 <= low <= high, got {self.train_sizes}")
        for name in ("seeds", "steps", "batch", "width", "test_sets", "chunk_items"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.classes < 2:
            raise ValueError(f"classes must be >= 2, got {self.classes}")
        if not self.learning_rate > 0 or not self.clip > 0 or self.weight_decay < 0:
            raise ValueError("learning_rate and clip must be > 0, weight_decay >= 0")

    @property
    def trained(self) -> tuple[str, ...]:
        """The normalisers models are trained with, in order (``softmax`` for adaptive)."""
        names = (NORMALISERS[name].train_with for name in self.normalisers)
        return tuple(dict.fromkeys(names))

    def to_json(self) -> dict[str, Any]:
        """The config as JSON-ready data (tuples become lists)."""
        return {key: list(v) if isinstance(v, tuple) else v for key, v in asdict(self).items()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ExperimentConfig:
        """The inverse of :meth:`to_json`; unknown keys are an error."""
        known = {f.name for f in fields(cls)}
        extra = set(data) - known
        if extra:
            raise ValueError(f"unknown config keys: {', '.join(sorted(extra))}")
        values: dict[str, Any] = {
            key: tuple(value) if isinstance(value, list) else value for key, value in data.items()
        }
        return cls(**values)

    def training_view(self) -> dict[str, Any]:
        """The fields a trained model depends on (a checkpoint must match them)."""
        keys = ("train_sizes", "steps", "batch", "learning_rate", "weight_decay", "clip")
        data = self.to_json()
        return {key: data[key] for key in (*keys, "width", "classes")}


PRESETS: dict[str, ExperimentConfig] = {
    "quick": ExperimentConfig(),
    "paper": ExperimentConfig(
        normalisers=("softmax", "adaptive_temperature", "ssmax", "logn", "entmax15", "sparsemax"),
        seeds=5,
        sizes=tuple(16 * 2**k for k in range(11)),
        steps=20000,
        learning_rate=1e-3,
        width=128,
        test_sets=1024,
        chunk_items=2**18,
    ),
}
"""``quick``: 5 seeds of softmax (+ adaptive at inference) and SSMax up to n = 4096, a few
minutes on 2 CPU cores.  ``paper``: every normaliser, 5 seeds, up to n = 16384, the
paper's width and step count; meant for a GPU."""


def preset(name: str, **overrides: Any) -> ExperimentConfig:
    """The preset ``name`` with some fields replaced.

    Examples
    --------
    >>> preset("quick", seeds=5).seeds
    5
    """
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; expected one of {', '.join(PRESETS)}")
    return replace(PRESETS[name], **overrides)
