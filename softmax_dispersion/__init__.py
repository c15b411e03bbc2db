"""softmax-dispersion: why softmax cannot stay sharp as its inputs grow.

The package turns one theorem (bounded logits at a fixed temperature force every
softmax coefficient to Θ(1/n)) into executable evidence.  Its layers:

:mod:`softmax_dispersion.theory`
    The theorem and its consequences (claims T1, T2, ...) as machine-checked proofs, and
    every formula exported once for the other layers.
:mod:`softmax_dispersion.numerics`
    Certified softmax on logit sequences of any length, adversarial families, and the
    theory's bounds held against the numbers.
:mod:`softmax_dispersion.testing`
    The test oracle for other libraries' softmax implementations (and its pytest plugin).
:mod:`softmax_dispersion.empirical`
    Attention heads trained on max retrieval, held to T1 on every measured row (torch).

Importing this package is cheap: the layers load on first use, and none of them imports
torch, jax or python-flint unless asked to.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from softmax_dispersion._version import __version__

__all__ = ["__version__", "empirical", "numerics", "testing", "theory"]

_LAYERS = ("empirical", "numerics", "testing", "theory")

if TYPE_CHECKING:
    from softmax_dispersion import empirical, numerics, testing, theory


def __getattr__(name: str) -> Any:
    if name in _LAYERS:
        return import_module(f"softmax_dispersion.{name}")
    raise AttributeError(f"module 'softmax_dispersion' has no attribute {name!r}")
