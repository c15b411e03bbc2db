"""What a max-retrieval experiment runs: sizes, normalisers, seeds, training budget."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from softmax_dispersion.empirical.normalisers import make_normaliser, normaliser_class

__all__ = ["LARGEST_SIZE", "PRESETS", "PRESET_SOURCES", "ExperimentConfig", "preset"]


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
    certificate_gap
        The relative gap the branch and bound aims for between a head's certified logit
        spread and the spread of the best items it finds (a certificate passes at 1%).
    adversarial_sizes
        Sizes of the T1-worst sets (the certified argmax item and ``n − 1`` copies of the
        argmin item) run through the trained models.
    eta
        T13's level: the top weight of a typical set leaves its predicted band with
        probability at most ``eta``.
    gap_leads, gap_sizes, gap_sets
        The gap-controlled test sets: the top priority leads every other by ``lead``;
        ``gap_sets`` sets per lead, size and seed.
    curve_every, curve_sets
        Every ``curve_every`` training steps the weight on the top item is measured on
        ``curve_sets`` fixed sets of 16 and of 256 items (the learning curves).
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
    certificate_gap: float = 1e-3
    adversarial_sizes: tuple[int, ...] = (16, 256, 4096, 65536, 10**6)
    eta: float = 0.05
    gap_leads: tuple[float, ...] = (0.05, 0.1, 0.25, 0.5)
    gap_sizes: tuple[int, ...] = (16, 256, 4096, 65536)
    gap_sets: int = 32
    curve_every: int = 100
    curve_sets: int = 32

    def __post_init__(self) -> None:
        for name in self.normalisers:
            normaliser_class(name)  # raises for an unknown name
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
        if not 1 <= low <= high <= LARGEST_SIZE:
            raise ValueError(
                f"train_sizes must satisfy 1 <= low <= high <= {LARGEST_SIZE}, "
                f"got {self.train_sizes}"
            )
        for name in (
            "seeds",
            "steps",
            "batch",
            "width",
            "test_sets",
            "chunk_items",
            "curve_every",
            "curve_sets",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.gap_sets < 0:
            raise ValueError(f"gap_sets must be >= 0, got {self.gap_sets}")
        for name in ("adversarial_sizes", "gap_sizes"):
            sizes = getattr(self, name)
            if any(size < 2 for size in sizes) or list(sizes) != sorted(set(sizes)):
                raise ValueError(f"{name} must be increasing sizes >= 2, got {sizes}")
            if sizes and max(sizes) > LARGEST_SIZE:
                raise ValueError(f"{name} must be <= {LARGEST_SIZE}, got {max(sizes)}")
        if any(not 0 < lead < 1 for lead in self.gap_leads):
            raise ValueError(f"gap_leads must lie strictly between 0 and 1, got {self.gap_leads}")
        if not 0 < self.eta < 1:
            raise ValueError(f"eta must lie strictly between 0 and 1, got {self.eta}")
        if not 0 < self.certificate_gap < 1:
            raise ValueError(f"certificate_gap must lie in (0, 1), got {self.certificate_gap}")
        if self.classes < 2:
            raise ValueError(f"classes must be >= 2, got {self.classes}")
        if not self.learning_rate > 0 or not self.clip > 0 or self.weight_decay < 0:
            raise ValueError("learning_rate and clip must be > 0, weight_decay >= 0")

    @property
    def trained(self) -> tuple[str, ...]:
        """The normalisers models are trained with, in order (``softmax`` for adaptive)."""
        names = (make_normaliser(name, 1).train_with for name in self.normalisers)
        return tuple(dict.fromkeys(names))

    def applied_to(self, trained: str) -> list[str]:
        """The normalisers measured on the models trained with ``trained``."""
        return [n for n in self.normalisers if make_normaliser(n, 1).train_with == trained]

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
        keys = (
            "train_sizes",
            "steps",
            "batch",
            "learning_rate",
            "weight_decay",
            "clip",
            "curve_every",
            "curve_sets",
        )
        data = self.to_json()
        return {key: data[key] for key in (*keys, "width", "classes")}


_QUICK = ExperimentConfig(
    normalisers=(
        "softmax",
        "adaptive_temperature",
        "adaptive_refit",
        "ssmax",
        "entmax15",
        "sparsemax",
    ),
    steps=2000,
    test_sets=256,
    gap_leads=(0.05, 0.2, 0.5),
    gap_sets=8,
)

PRESETS: dict[str, ExperimentConfig] = {
    "quick": _QUICK,
    "fixed16": replace(_QUICK, train_sizes=(16, 16)),
    "bounded": ExperimentConfig(
        normalisers=("softcap2", "softcap3", "qknorm4"),
        seeds=3,
        sizes=(16, 64, 256, 1024, 4096, 16384),
        steps=2000,
        test_sets=128,
        adversarial_sizes=(16, 64, 256, 1024, 4096, 16384, 65536, 10**6),
        gap_sizes=(16, 256, 4096),
        gap_sets=16,
    ),
    "paper": ExperimentConfig(
        normalisers=("softmax", "adaptive_temperature", "ssmax", "logn", "entmax15", "sparsemax"),
        seeds=5,
        sizes=tuple(16 * 2**k for k in range(11)),
        steps=20000,
        learning_rate=1e-3,
        width=128,
        test_sets=1024,
        chunk_items=2**18,
        gap_sizes=(16, 256, 4096, 65536, 2**20),
    ),
}
"""``quick``: softmax (+ adaptive θ at inference), SSMax, 1.5-entmax and sparsemax, 5
seeds, up to n = 4096, minutes on 2 CPU cores.  ``fixed16``: the same, trained on sets
of exactly 16 items.  ``bounded``: soft-capped and QK-normed heads whose certified
dispersion sizes lie inside the tested sizes.  ``paper``: every normaliser, up to
n = 16384, the paper's width and step count; meant for a GPU."""

PRESET_SOURCES: dict[str, str] = {
    "quick": (
        "width, step count, learning rate and training sizes 5–16 follow an unofficial "
        "reimplementation's defaults, not the paper (whose text trains on sets of 16; its "
        "appendix hyperparameters are not available here)"
    ),
    "fixed16": (
        "the quick preset with the paper's text for the training sets: exactly 16 items; "
        "the other hyperparameters are an unofficial reimplementation's"
    ),
    "bounded": (
        "this package's design, not the paper: soft-capped (as Gemma 2) and QK-normed "
        "(as Henry et al. 2020) heads with caps small enough that T1 binds at testable sizes"
    ),
    "paper": (
        "the paper's width (128) and an unofficial reimplementation's step count, learning "
        "rate and training sizes 5–16"
    ),
}
"""Where each preset's settings come from."""


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
