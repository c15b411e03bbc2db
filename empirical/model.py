"""One attention head for max retrieval, as an ensemble of independent models.

``members`` models with the same architecture are stored as stacked parameters (the
leading axis of every tensor) and run together with batched matrix products: each
member sees its own data, has its own initialisation and optimiser state, and its
gradient depends on its own loss only.  Training several seeds this way costs little
more than training one on a CPU, where a single small model cannot fill the cores.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import nn

from softmax_dispersion.empirical.normalisers import Normalised, Normaliser

__all__ = ["EnsembleLinear", "MaxRetrievalModel", "ModelOutput"]


class EnsembleLinear(nn.Module):
    """``members`` independent affine maps applied to ``(members, ..., fan_in)`` inputs."""

    def __init__(self, members: int, fan_in: int, fan_out: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(members, fan_in, fan_out))
        self.bias = nn.Parameter(torch.empty(members, 1, fan_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        members, *middle, fan_in = x.shape
        flat = torch.baddbmm(self.bias, x.reshape(members, -1, fan_in), self.weight)
        return flat.reshape(members, *middle, -1)

    def reset_member(self, member: int, generator: torch.Generator) -> None:
        """``torch.nn.Linear``'s default initialisation, U(±1/√fan_in), for one member."""
        bound = 1 / math.sqrt(self.weight.shape[1])
        for tensor in (self.weight, self.bias):
            values = torch.rand(tensor.shape[1:], generator=generator) * 2 * bound - bound
            tensor.data[member].copy_(values)


def _mlp(members: int, fan_in: int, width: int, fan_out: int) -> nn.Sequential:
    return nn.Sequential(
        EnsembleLinear(members, fan_in, width), nn.GELU(), EnsembleLinear(members, width, fan_out)
    )


class ModelOutput(NamedTuple):
    """The model's prediction and its attention."""

    class_logits: torch.Tensor
    """``(members, batch, classes)``."""
    attention: Normalised
    """The attention weights and what was exponentiated."""
    logits: torch.Tensor
    """``(members, batch, n)``: the attention logits ``q·k_i/√d`` before normalising."""


class MaxRetrievalModel(nn.Module):
    """Item MLP → one attention head with a learned query → predictor MLP.

    Parameters
    ----------
    normaliser
        The attention normaliser trained with (its ``members`` sets the ensemble size).
    features
        The item width (``1 + classes`` for max retrieval).
    width
        The hidden width ``d`` of every MLP, the keys, the values and the query.
    classes
        The number of output classes.
    seeds
        One seed per member; each member's parameters are drawn from its own
        generator, so a member is the same whichever others it is trained with.

    Notes
    -----
    With item embeddings :math:`h_i = \\mathrm{MLP}(x_i)`, keys :math:`k_i = W_k h_i`,
    values :math:`v_i = W_v h_i` and a learned query :math:`q`, the attention logits
    are :math:`e_i = q^\\top k_i / \\sqrt{d}` (soft-capped, or a scaled cosine, for the
    bounded heads), the output is
    :math:`\\mathrm{MLP}(\\sum_i \\alpha_i v_i)` with :math:`\\alpha = \\mathrm{normaliser}(e)`.

    Examples
    --------
    >>> import torch
    >>> from softmax_dispersion.empirical.normalisers import Softmax
    >>> model = MaxRetrievalModel(Softmax(2), features=11, width=8, classes=10, seeds=[0, 1])
    >>> out = model(torch.rand(2, 3, 5, 11))
    >>> out.class_logits.shape, out.attention.weights.shape
    (torch.Size([2, 3, 10]), torch.Size([2, 3, 5]))
    """

    def __init__(
        self,
        normaliser: Normaliser,
        *,
        features: int,
        width: int,
        classes: int,
        seeds: list[int],
    ) -> None:
        super().__init__()
        members = normaliser.members
        if len(seeds) != members:
            raise ValueError(f"need one seed per member: {members} members, {len(seeds)} seeds")
        self.width = width
        self.encoder = _mlp(members, features, width, width)
        self.key = EnsembleLinear(members, width, width)
        self.value = EnsembleLinear(members, width, width)
        self.query = nn.Parameter(torch.empty(members, width))
        self.predictor = _mlp(members, width, width, classes)
        self.normaliser = normaliser
        for member, seed in enumerate(seeds):
            self.reset_member(member, torch.Generator().manual_seed(seed))

    def reset_member(self, member: int, generator: torch.Generator) -> None:
        """Draw one member's parameters from ``generator`` (the normaliser's stay as set)."""
        for module in self.modules():
            if isinstance(module, EnsembleLinear):
                module.reset_member(member, generator)
        self.query.data[member].copy_(
            torch.randn(self.width, generator=generator) / math.sqrt(self.width)
        )

    def attention_logits(
        self, items: torch.Tensor, lengths: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The logits ``(members, batch, n)`` and the values ``v_i``.

        The logits are ``q·k_i/√d``, or what a bounded head's normaliser makes of the keys
        (:meth:`~softmax_dispersion.empirical.normalisers.Normaliser.attention_logits`).
        With ``lengths`` ``(members, batch)``, items from position ``lengths`` on are
        padding: their logits are ``−inf``.
        """
        hidden = self.encoder(items)
        logits = self.normaliser.attention_logits(self.key(hidden), self.query)
        if lengths is not None:
            positions = torch.arange(items.shape[-2], device=items.device)
            logits = logits.masked_fill(positions >= lengths[..., None], -math.inf)
        return logits, self.value(hidden)

    def forward(
        self,
        items: torch.Tensor,
        normaliser: Normaliser | None = None,
        lengths: torch.Tensor | None = None,
    ) -> ModelOutput:
        """Predict from ``items`` ``(members, batch, n, features)``.

        ``normaliser`` replaces the trained one (e.g. adaptive temperature at inference);
        ``lengths`` marks padding as in :meth:`attention_logits`.
        """
        logits, values = self.attention_logits(items, lengths)
        attention = (normaliser or self.normaliser)(logits)
        pooled = torch.einsum("mbn,mbnd->mbd", attention.weights, values)
        return ModelOutput(self.predictor(pooled), attention, logits)
