"""softmax-dispersion: why softmax cannot stay sharp as its inputs grow.

The package turns one theorem (bounded logits at a fixed temperature force every
softmax coefficient to Θ(1/n)) into executable evidence.  Its layers:

:mod:`softmax_dispersion.theory`
    The theorem and its consequences (claims T1–T12) as machine-checked proofs, and
    every formula exported once for the other layers.

Importing this package is cheap: the layers load on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__all__ = ["__version__", "theory"]
__version__ = "0.1.0"

if TYPE_CHECKING:
    from softmax_dispersion import theory


def __getattr__(name: str) -> Any:
    if name == "theory":
        return import_module("softmax_dispersion.theory")
    raise AttributeError(f"module 'softmax_dispersion' has no attribute {name!r}")
