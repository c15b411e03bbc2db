"""Claim T1 held against measured attention weights, with T12's float tolerance.

For weights ``softmax(z)`` of one row of ``n`` logits with spread ``δ = max z − min z``,
T1 says every weight lies in ``[1/(1 + (n−1)e^δ), e^δ/(e^δ + n − 1)]``.  Here ``z`` is
whatever the normaliser exponentiated (``β e``: the effective inverse temperature is
already in it), so the check needs no knowledge of how ``β`` was chosen.

T10's floor is checked the same way: a top logit ahead of every other by ``Δ`` gets a
weight of at least ``1/(1 + (n−1)e^{−Δ})``, which is how length scaling stays sharp.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from softmax_dispersion.empirical._torch_formulas import torch_function
from softmax_dispersion.theory.dispersion import dispersion_lower, dispersion_upper
from softmax_dispersion.theory.length_scaling import length_scaled_gap_bound
from softmax_dispersion.theory.rounding_error import (
    gamma_recursive,
    softmax_relative_error_bound,
)

__all__ = [
    "EXP_ULPS",
    "BoundCheck",
    "GapFloorCheck",
    "check_gap_floor",
    "check_t1",
    "t1_tolerance",
]

EXP_ULPS = 2.0
"""The exp error assumed of torch's kernels, in ulps (their documented bound is 1)."""

# exp(700) is finite in float64 and T1's bounds are 1 and 0 to double precision beyond.
_LARGEST_SPREAD = 700.0


@dataclass(frozen=True)
class BoundCheck:
    """T1 at each row: the bounds, the tolerance and where the weights break them."""

    upper: torch.Tensor
    """T1's largest coefficient ``e^δ/(e^δ + n − 1)`` per row (float64)."""
    lower: torch.Tensor
    """T1's smallest coefficient ``1/(1 + (n − 1)e^δ)`` per row (float64)."""
    tolerance: torch.Tensor
    """The relative float tolerance per row (T12)."""
    violations: torch.Tensor
    """Per row: the largest weight is above ``upper·(1 + tol)`` or the smallest below
    ``lower·(1 − tol)``."""
    ratio: torch.Tensor
    """Per row: the largest weight over ``upper`` (how close the head comes to T1)."""


def t1_tolerance(n: int, spread: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """T12's relative error bound for a float softmax of ``n`` logits of spread ``spread``.

    Notes
    -----
    :data:`~softmax_dispersion.theory.rounding_error.softmax_relative_error_bound` with
    every gap (and so the mean gap) at most ``δ``, the unit roundoff ``u`` of ``dtype``
    (float32 accumulation for 16-bit types), :data:`EXP_ULPS`, the summation factor
    ``γ_n`` of any summation order, and one more unit roundoff of ``dtype``: the final
    rounding to a 16-bit output, or the reciprocal of kernels that multiply by ``1/S``
    instead of dividing.

    Examples
    --------
    >>> import torch
    >>> tol = t1_tolerance(16, torch.tensor([2.0], dtype=torch.float64), torch.float32)
    >>> float(tol * 2**24) < 30
    True
    """
    accumulate = torch.float32 if torch.finfo(dtype).bits < 32 else dtype
    u = torch.finfo(accumulate).eps / 2
    gamma = float(gamma_recursive.numpy(n, u))
    bound = torch_function(softmax_relative_error_bound)(spread, spread, u, EXP_ULPS, gamma, u)
    return bound + torch.finfo(dtype).eps / 2


def _spread_and_tolerance(
    weights: torch.Tensor, exponentiated: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    # Each row's spread (float64) and T12's relative tolerance for it.
    spread = (exponentiated.amax(-1) - exponentiated.amin(-1)).double()
    return spread, t1_tolerance(exponentiated.shape[-1], spread, weights.dtype)


def check_t1(weights: torch.Tensor, exponentiated: torch.Tensor) -> BoundCheck:
    """Check T1 on every row of ``weights = softmax(exponentiated)`` (last axis).

    Parameters
    ----------
    weights
        The measured attention weights.
    exponentiated
        The logits the softmax was applied to, with any inverse temperature applied.

    Returns
    -------
    BoundCheck
        Bounds, tolerance, violations and ratios per row.

    Notes
    -----
    With :math:`\\delta = \\max_i z_i - \\min_i z_i` over the row, T1 gives
    :math:`\\frac{1}{1 + (n-1)e^{\\delta}} \\le p_i \\le \\frac{e^{\\delta}}{e^{\\delta} + n - 1}`
    (:data:`~softmax_dispersion.theory.dispersion.dispersion_upper` and
    :data:`~softmax_dispersion.theory.dispersion.dispersion_lower` at θ = 1, evaluated
    in float64).  A row violates T1 when its weights leave these bounds by more than
    :func:`t1_tolerance`.

    Examples
    --------
    >>> import torch
    >>> z = torch.tensor([[3.0, 0.0, 0.0, 1.0]])
    >>> check_t1(torch.softmax(z, -1), z).violations.tolist()
    [False]
    >>> check_t1(torch.softmax(2 * z, -1), z).violations.tolist()
    [True]
    """
    n = exponentiated.shape[-1]
    spread, tolerance = _spread_and_tolerance(weights, exponentiated)
    capped = spread.clamp(max=_LARGEST_SPREAD)
    upper = torch_function(dispersion_upper)(n, capped, 1.0)
    lower = torch_function(dispersion_lower)(n, spread, 1.0)
    largest = weights.amax(-1).double()
    smallest = weights.amin(-1).double()
    # A weight below the dtype's smallest normal may underflow to 0 (or be flushed).
    floor = lower * (1 - tolerance) - torch.finfo(weights.dtype).tiny
    violations = (largest > upper * (1 + tolerance)) | (smallest < floor)
    return BoundCheck(upper, lower, tolerance, violations, largest / upper)


@dataclass(frozen=True)
class GapFloorCheck:
    """T10's floor on the top weight at each row, and where the weights fall below it."""

    floor: torch.Tensor
    """``1/(1 + (n − 1)e^{−Δ})`` per row, ``Δ`` the top logit's lead (float64)."""
    violations: torch.Tensor
    """Per row: the largest weight is below ``floor·(1 − tol)``."""


def check_gap_floor(weights: torch.Tensor, exponentiated: torch.Tensor) -> GapFloorCheck:
    """Check T10's floor on the top weight of every row of ``softmax(exponentiated)``.

    Parameters
    ----------
    weights
        The measured attention weights.
    exponentiated
        The logits the softmax was applied to, with any inverse temperature applied.

    Returns
    -------
    GapFloorCheck
        The floor and the violations per row.

    Notes
    -----
    When every other logit trails the top one by at least :math:`\\Delta` (here: the
    lead over the runner-up of the exponentiated logits, :math:`\\Delta = \\beta\\Delta_e`),
    the top weight is at least :math:`1/(1 + (n-1)e^{-\\Delta})`: T10's
    :data:`~softmax_dispersion.theory.length_scaling.length_scaled_gap_bound`
    :math:`1/(1 + (n-1)n^{-s\\Delta_e})` with :math:`\\beta = s\\log n`.  So a
    length-scaled head stays sharp wherever :math:`s\\Delta_e > 1`.  The tolerance is
    :func:`t1_tolerance`'s.  Rows of one logit are skipped (their weight is 1).

    Examples
    --------
    >>> import torch
    >>> z = torch.tensor([[3.0, 0.0, 0.0, 1.0]])
    >>> check = check_gap_floor(torch.softmax(z, -1), z)
    >>> round(float(check.floor[0]), 4), check.violations.tolist()
    (0.7112, [False])
    >>> check_gap_floor(torch.softmax(z / 2, -1), z).violations.tolist()
    [True]
    """
    n = exponentiated.shape[-1]
    if n < 2:
        ones = torch.ones(exponentiated.shape[:-1], dtype=torch.float64)
        return GapFloorCheck(ones, torch.zeros_like(ones, dtype=torch.bool))
    top_two = exponentiated.topk(2, dim=-1).values.double()
    lead = top_two[..., 0] - top_two[..., 1]
    # The theory's formula with s log n = 1: the lead already includes β.
    floor = torch_function(length_scaled_gap_bound)(n, 1 / math.log(n), lead)
    _, tolerance = _spread_and_tolerance(weights, exponentiated)
    violations = weights.amax(-1).double() < floor * (1 - tolerance)
    return GapFloorCheck(floor, violations)
