"""The pre-softmax logits of every head, captured from the model's real forward pass.

transformers looks up each attention layer's kernel by name in its
``AttentionInterface`` registry.  :func:`capture_logits` registers one more kernel,
:data:`CAPTURE`, that computes ``QKᵀ·scaling (+ mask)`` from the very query and key
tensors the layer produced, hands them to the active recorder, and then calls
transformers' own eager kernel for the layer's output and weights.  The model's
computation is therefore unchanged; the captured logits are the eager kernel's softmax
input (the test suite checks ``softmax(captured) == output_attentions`` against a
separate eager run).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import torch

__all__ = ["CAPTURE", "attention_logits", "capture_logits"]

CAPTURE = "softmax_dispersion_capture"
"""The name the capturing kernel is registered under."""

#: Called with (layer index, logits [batch, heads, n, n], weights [batch, heads, n, n]).
Recorder = Callable[[int, torch.Tensor, torch.Tensor], None]

_recorders: list[tuple[Recorder, dict[int, int], bool]] = []
"""The active recorders (innermost last), each with its layer map and whether it keeps
the logits' autograd graph (for gradients) or detaches them."""


def _capturing_kernel(
    module: Any,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float | None = None,
    dropout: float = 0.0,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    from transformers.models.bert.modeling_bert import eager_attention_forward

    output, weights = eager_attention_forward(
        module, query, key, value, attention_mask, scaling=scaling, dropout=dropout, **kwargs
    )
    if _recorders:
        recorder, layer_of, keep_graph = _recorders[-1]
        if scaling is None:
            scaling = query.size(-1) ** -0.5
        # The same operations, in the same order, as the eager kernel's softmax input.
        logits = torch.matmul(query, key.transpose(2, 3)) * scaling
        if attention_mask is not None:
            logits = logits + attention_mask
        if keep_graph:
            recorder(layer_of[id(module)], logits, weights)
        else:
            recorder(layer_of[id(module)], logits.detach(), weights.detach())
    return output, weights


def _register() -> None:
    from transformers import AttentionInterface

    AttentionInterface.register(CAPTURE, _capturing_kernel)


@contextlib.contextmanager
def capture_logits(model: Any, recorder: Recorder) -> Iterator[None]:
    """Within the block, every forward pass of ``model`` reports each layer's logits.

    Parameters
    ----------
    model
        A transformers BERT model (``model.encoder.layer[i].attention.self``).
    recorder
        Called once per layer and forward pass with the layer index, the softmax input
        ``[batch, heads, n, n]`` and the weights the eager kernel computed from it.

    Notes
    -----
    The model's attention implementation is switched to :data:`CAPTURE` for the block
    and restored afterwards.
    """
    _register()
    layer_of = {id(layer.attention.self): i for i, layer in enumerate(model.encoder.layer)}
    previous = model.config._attn_implementation
    model.set_attn_implementation(CAPTURE)
    _recorders.append((recorder, layer_of, False))
    try:
        yield
    finally:
        _recorders.pop()
        model.set_attn_implementation(previous)


def attention_logits(model: Any, input_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Every layer's pre-softmax logits and weights for a batch of unpadded sequences.

    Parameters
    ----------
    model
        A transformers BERT model.
    input_ids
        ``[batch, n]`` token ids, every position attended (no padding).

    Returns
    -------
    tuple of torch.Tensor
        Logits and weights, each ``[layers, batch, heads, n, n]`` (float32).
    """
    logits: dict[int, torch.Tensor] = {}
    weights: dict[int, torch.Tensor] = {}

    def record(layer: int, layer_logits: torch.Tensor, layer_weights: torch.Tensor) -> None:
        logits[layer], weights[layer] = layer_logits, layer_weights

    with torch.no_grad(), capture_logits(model, record):
        model(input_ids=input_ids, attention_mask=torch.ones_like(input_ids))
    order = sorted(logits)
    return torch.stack([logits[i] for i in order]), torch.stack([weights[i] for i in order])
