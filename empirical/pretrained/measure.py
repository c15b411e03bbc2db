"""Per-row measurements of every head: spread, top weight, entropy, and T1/T6 per row.

For each row (one query position) of each head, from the captured softmax input ``e``
and the model's own weights ``p``:

* ``δ = max e − min e`` over the row's ``n`` keys;
* ``p_max = max p`` and the entropy ``H = −Σ p log p`` (nats);
* T1's bound ``e^δ/(e^δ + n − 1)`` and T6's floor ``log(e^δ + n − 1) − δ`` at the row's
  own ``δ`` (:data:`~softmax_dispersion.theory.dispersion.dispersion_upper`,
  :data:`~softmax_dispersion.theory.entropy.entropy_lower_bound`, θ = 1).

T1 and T6 recomputed from a row's own logits hold for any correct softmax: they are
**consistency checks** of the capture and of the model's softmax, not results.  The
result this module feeds is the comparison of the measured spreads with the certified
``δ*`` of each head (:mod:`~softmax_dispersion.empirical.pretrained.spread_bounds`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from softmax_dispersion.empirical._torch_formulas import torch_function
from softmax_dispersion.empirical.bound_check import check_t1, t1_tolerance
from softmax_dispersion.empirical.pretrained.capture import capture_logits
from softmax_dispersion.theory.entropy import entropy_lower_bound

__all__ = ["RowMeasurements", "measure_batch", "sequence_spreads"]


@dataclass
class RowMeasurements:
    """Rows of every head for one input kind and size ``n``, accumulated over batches.

    Arrays are ``[layers, heads, rows]`` (float64) once :meth:`finish` has run.
    """

    n: int
    delta: list[np.ndarray] = field(default_factory=list)
    p_max: list[np.ndarray] = field(default_factory=list)
    entropy: list[np.ndarray] = field(default_factory=list)
    sequence_max: list[np.ndarray] = field(default_factory=list)
    """Per sequence: each head's largest row spread, ``[sequences, layers, heads]``."""
    t1_violations: int = 0
    t6_violations: int = 0

    def finish(self) -> dict[str, np.ndarray]:
        """The accumulated arrays, rows of all batches concatenated."""
        return {
            "delta": np.concatenate(self.delta, axis=-1),
            "p_max": np.concatenate(self.p_max, axis=-1),
            "entropy": np.concatenate(self.entropy, axis=-1),
            "sequence_max": np.concatenate(self.sequence_max, axis=0),
        }


def _layer_rows(
    logits: torch.Tensor, weights: torch.Tensor
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, int]:
    """One layer's rows: spreads, top weights, entropies, per-sequence maxima, violations."""
    batch, heads, n, _ = logits.shape
    spread = (logits.amax(-1) - logits.amin(-1)).double()  # [batch, heads, n]
    p = weights.double()
    entropy = -torch.special.xlogy(p, p).sum(-1)
    t1 = check_t1(weights, logits)
    # T6: H >= log(e^δ + n − 1) − δ.  Each weight has relative error <= τ (T12), so the
    # entropy's error is at most τ Σ p_i(|log p_i| + 1) = τ (H + 1).
    tolerance = t1_tolerance(n, spread, weights.dtype)
    floor = torch_function(entropy_lower_bound)(n, spread.clamp(max=700.0), 1.0)
    t6 = entropy < floor - tolerance * (entropy + 1)

    def rows(values: torch.Tensor) -> np.ndarray:  # [batch, heads, n] -> [heads, batch·n]
        return values.permute(1, 0, 2).reshape(heads, batch * n).numpy()

    return (
        rows(spread),
        rows(p.amax(-1)),
        rows(entropy),
        spread.amax(-1).numpy(),  # [batch, heads]
        int(t1.violations.sum()),
        int(t6.sum()),
    )


def measure_batch(model: object, input_ids: torch.Tensor, into: RowMeasurements) -> None:
    """Run ``input_ids`` (``[batch, n]``, unpadded) and add every head's rows to ``into``."""
    per_layer: dict[int, tuple[np.ndarray, ...]] = {}
    violations = [0, 0]

    def record(layer: int, logits: torch.Tensor, weights: torch.Tensor) -> None:
        delta, p_max, entropy, seq_max, t1, t6 = _layer_rows(logits, weights)
        per_layer[layer] = (delta, p_max, entropy, seq_max)
        violations[0] += t1
        violations[1] += t6

    with torch.no_grad(), capture_logits(model, record):
        model(input_ids=input_ids, attention_mask=torch.ones_like(input_ids))  # type: ignore[operator]
    order = sorted(per_layer)
    into.delta.append(np.stack([per_layer[i][0] for i in order]))
    into.p_max.append(np.stack([per_layer[i][1] for i in order]))
    into.entropy.append(np.stack([per_layer[i][2] for i in order]))
    into.sequence_max.append(np.stack([per_layer[i][3] for i in order], axis=1))
    into.t1_violations += violations[0]
    into.t6_violations += violations[1]


def sequence_spreads(
    model: object, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None = None
) -> np.ndarray:
    """Each sequence's largest row spread in every head, ``[batch, layers, heads]``
    (token types 0 unless ``token_type_ids`` are given)."""
    per_layer: dict[int, np.ndarray] = {}

    def record(layer: int, logits: torch.Tensor, weights: torch.Tensor) -> None:
        per_layer[layer] = (logits.amax(-1) - logits.amin(-1)).amax(-1).double().numpy()

    with torch.no_grad(), capture_logits(model, record):
        model(  # type: ignore[operator]
            input_ids=input_ids,
            attention_mask=torch.ones_like(input_ids),
            token_type_ids=token_type_ids,
        )
    return np.stack([per_layer[i] for i in sorted(per_layer)], axis=1)
