"""Attention normalisers: softmax and the variants that try to stay sharp.

Every normaliser maps logits of shape ``(members, batch, n)`` (``members`` independent
models trained side by side) to attention weights of the same shape, and says which
logits it finally exponentiated and with what inverse temperature, so that claim T1
can be checked on exactly what was computed.

``softmax``
    ``softmax(e)``, the fixed-temperature baseline.
``adaptive_temperature``
    ``softmax(β(H) e)``, the paper's rule (T11); applied at inference to a softmax model.
``ssmax``
    ``softmax(s log(n) e)`` with ``s`` learned.
``logn``
    ``softmax(log(n) e)``.
``entmax15``, ``sparsemax``
    1.5-entmax and sparsemax from the ``entmax`` package (sparse: exact zeros).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import nn

from softmax_dispersion.empirical._formulas import torch_function
from softmax_dispersion.theory.adaptive_temperature import (
    ENTROPY_OFFSET,
    adaptive_inverse_temperature,
)

__all__ = [
    "NORMALISERS",
    "AdaptiveTemperature",
    "Entmax15",
    "LogN",
    "Normalised",
    "Normaliser",
    "ScalableSoftmax",
    "Softmax",
    "Sparsemax",
    "make_normaliser",
    "rule_entropy",
]


class Normalised(NamedTuple):
    """Attention weights and how they were made."""

    weights: torch.Tensor
    """``(members, batch, n)``: the attention weights, each row summing to 1."""
    exponentiated: torch.Tensor | None
    """The logits the final softmax exponentiated, ``β e`` up to a shift (``β(e − max e)``,
    the same spread); ``None`` for entmax."""
    beta: torch.Tensor
    """``(members, batch)``: the effective inverse temperature (1 for entmax)."""


class Normaliser(nn.Module):
    """Base class: subclasses implement :meth:`forward`."""

    name: str = ""
    softmax_family: bool = True
    """Whether the weights are ``softmax(β e)`` for some per-row ``β`` (so T1 applies)."""
    train_with: str = ""
    """The normaliser the model is trained with (``name`` unless inference-only)."""

    def __init__(self, members: int) -> None:
        super().__init__()
        self.members = members

    def forward(self, logits: torch.Tensor) -> Normalised:  # pragma: no cover - abstract
        raise NotImplementedError

    @staticmethod
    def _softmax(logits: torch.Tensor, beta: torch.Tensor) -> Normalised:
        # Shift before scaling: β e can overflow where β (e − max e) cannot, and the shift
        # changes neither the weights nor the spread T1 is checked with.
        scaled = beta[..., None] * (logits - logits.detach().amax(-1, keepdim=True))
        return Normalised(torch.softmax(scaled, dim=-1), scaled, beta)


class Softmax(Normaliser):
    """``softmax(e)``: the fixed-temperature baseline (θ = 1)."""

    name = "softmax"

    def forward(self, logits: torch.Tensor) -> Normalised:
        beta = torch.ones(logits.shape[:-1], dtype=logits.dtype, device=logits.device)
        return Normalised(torch.softmax(logits, dim=-1), logits, beta)


def rule_entropy(weights: torch.Tensor) -> torch.Tensor:
    """The adaptive rule's entropy ``Σ −p_i log(p_i + 10⁻⁹)`` over the last axis (nats).

    Examples
    --------
    >>> import torch
    >>> round(float(rule_entropy(torch.full((4,), 0.25, dtype=torch.float64))), 6)
    1.386294
    """
    return -torch.xlogy(weights, weights + float(ENTROPY_OFFSET)).sum(dim=-1)


class AdaptiveTemperature(Normaliser):
    """The paper's adaptive temperature, applied to a softmax-trained head.

    Notes
    -----
    With ``p = softmax(e)`` and ``H = Σ −p_i log(p_i + 10⁻⁹)``, the weights are
    ``softmax(β e)`` with ``β = max(P(H), 1)`` for ``H > 1/2`` (else 1),
    ``P(H) = −0.037H⁴ + 0.481H³ − 2.3H² + 4.917H − 1.791``: the theory's
    :data:`~softmax_dispersion.theory.adaptive_temperature.adaptive_inverse_temperature`,
    lambdified to torch.  ``β`` is computed without gradient, as a post-hoc rule.

    Examples
    --------
    >>> import torch
    >>> out = AdaptiveTemperature(1)(torch.tensor([[[2.0, 0.0, 0.0, 0.0]]]))
    >>> round(float(out.beta), 4), round(float(out.weights[0, 0, 0]), 4)
    (1.1309, 0.7619)
    """

    name = "adaptive_temperature"
    train_with = "softmax"

    def forward(self, logits: torch.Tensor) -> Normalised:
        with torch.no_grad():
            entropy = rule_entropy(torch.softmax(logits, dim=-1))
            beta = torch_function(adaptive_inverse_temperature)(entropy).to(logits.dtype)
        return self._softmax(logits, beta)


class ScalableSoftmax(Normaliser):
    """SSMax: ``softmax(s log(n) e)`` with one learned ``s`` per member.

    Notes
    -----
    ``β = s log n`` grows with the set size, so T1's bound ``e^{βδ}/n`` no longer
    forces dispersion: on a top logit ahead of the rest by ``Δ``, the top weight tends
    to 1 when ``sΔ > 1`` (claim T10).

    Examples
    --------
    >>> import torch
    >>> out = ScalableSoftmax(1, s=1.0)(torch.tensor([[[1.0, 0.0]]]))
    >>> round(float(out.beta.detach()), 6) == round(math.log(2), 6)
    True
    """

    name = "ssmax"

    def __init__(self, members: int, s: float = 1.0) -> None:
        super().__init__(members)
        self.s = nn.Parameter(torch.full((members,), float(s)))

    def forward(self, logits: torch.Tensor) -> Normalised:
        n = logits.shape[-1]
        beta = (self.s * math.log(n))[:, None].expand(logits.shape[:-1]).to(logits.dtype)
        return self._softmax(logits, beta)


class LogN(Normaliser):
    """``softmax(log(n) e)``: length scaling with the scale fixed (``s = 1``)."""

    name = "logn"

    def forward(self, logits: torch.Tensor) -> Normalised:
        beta = torch.full(
            logits.shape[:-1], math.log(logits.shape[-1]), dtype=logits.dtype, device=logits.device
        )
        return self._softmax(logits, beta)


class _Entmax(Normaliser):
    softmax_family = False

    def _weights(self, logits: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def forward(self, logits: torch.Tensor) -> Normalised:
        beta = torch.ones(logits.shape[:-1], dtype=logits.dtype, device=logits.device)
        return Normalised(self._weights(logits), None, beta)


class Entmax15(_Entmax):
    """1.5-entmax (sparse: exact zeros, possibly one-hot), from the ``entmax`` package."""

    name = "entmax15"

    def _weights(self, logits: torch.Tensor) -> torch.Tensor:
        from entmax import entmax15

        return entmax15(logits, dim=-1)  # type: ignore[no-any-return]


class Sparsemax(_Entmax):
    """Sparsemax: the Euclidean projection onto the simplex, from the ``entmax`` package."""

    name = "sparsemax"

    def _weights(self, logits: torch.Tensor) -> torch.Tensor:
        from entmax import sparsemax

        return sparsemax(logits, dim=-1)  # type: ignore[no-any-return]


NORMALISERS: dict[str, type[Normaliser]] = {
    cls.name: cls
    for cls in (Softmax, AdaptiveTemperature, ScalableSoftmax, LogN, Entmax15, Sparsemax)
}
"""Every normaliser by name."""

for _cls in NORMALISERS.values():
    _cls.train_with = _cls.train_with or _cls.name


def make_normaliser(name: str, members: int) -> Normaliser:
    """A fresh normaliser called ``name`` for ``members`` models.

    Raises
    ------
    ValueError
        If ``name`` is not one of :data:`NORMALISERS`.
    """
    if name not in NORMALISERS:
        raise ValueError(f"unknown normaliser {name!r}; expected one of {', '.join(NORMALISERS)}")
    return NORMALISERS[name](members)
