"""The theory's formulas as torch functions: one definition, generated, never re-typed."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import sympy as sp
import torch

from softmax_dispersion.theory.formulas import Formula

__all__ = ["torch_function"]


def _maximum(*values: torch.Tensor | float) -> torch.Tensor:
    # sympy prints Max(a, b, ...) as max(a, b, ...); torch.max takes no scalars.
    tensors = [v for v in values if isinstance(v, torch.Tensor)]
    out = tensors[0]
    for value in values:
        out = torch.maximum(out, torch.as_tensor(value, dtype=out.dtype, device=out.device))
    return out


@cache
def torch_function(formula: Formula) -> Callable[..., torch.Tensor]:
    """``formula`` lambdified to torch operations (elementwise, differentiable).

    Examples
    --------
    >>> import torch
    >>> from softmax_dispersion.theory.adaptive_temperature import (
    ...     adaptive_inverse_temperature)
    >>> beta = torch_function(adaptive_inverse_temperature)
    >>> beta(torch.tensor([0.25, 4.0, 8.0]))
    tensor([1.0000, 2.3890, 1.0000])
    """
    function: Callable[..., torch.Tensor] = sp.lambdify(
        formula.args, formula.expr, modules=[{"max": _maximum}, "torch"]
    )
    return function
