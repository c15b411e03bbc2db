"""The VJP kinds' tolerance: T15's first-order bounds, element by element.

Every allowance is T15's :data:`~softmax_dispersion.theory.vjp_error.softmax_vjp_error_bound`
or :data:`~softmax_dispersion.theory.vjp_error.log_softmax_vjp_error_bound` evaluated on
the certified weights, with T12's relative bounds ``r_j`` of the forward weights inside
(:func:`~softmax_dispersion.testing.attention_tolerance.softmax_relative_bounds`: every
standard formulation; for log-softmax the weights are ``exp`` of the saved output, T12's
exp-of-log-softmax form among them).

Notes
-----
For a row of ``n`` logits, format ``u`` and accumulation format ``u_acc`` (float32 for
16-bit formats):

* softmax: ``F_i = p_i((|g_i| + G)(r_i + 2u) + R + γ G)`` with ``G = Σ_j p_j|g_j|``,
  ``R = Σ_j p_j|g_j| r_j`` and ``γ = γ_n(u_acc)`` (the dot product ``⟨g, p̂⟩``);
* log-softmax: ``F_i = p_i A (r_i + γ + 2u) + u|g_i|`` with ``A = Σ_j|g_j|`` and
  ``γ = γ_{n−1}(u_acc)`` (the sum ``Σ g``).

The allowance is ``1.01·F_i`` plus the second-order terms the first order leaves out
(computed from the same quantities with ``expm1``: the products of ``(1 + δ)`` factors),
plus ``s_min([p_i low](|g_i| + Σ_j|g_j|) + (1 + p_i)Σ_{j low}|g_j|)`` for the weights
``p_j < 2·2^emin`` that may be held below the format's normal range (T12's model needs
them normal; a subnormal weight is off by up to ``s_min/2``),
plus half an ulp of the reference and ``f`` smallest subnormals.  At a ``−inf`` logit the
softmax entry is exactly 0 and the log-softmax one ``g_i``.

Examples
--------
>>> import numpy as np
>>> from softmax_dispersion.testing.vjp_reference import reference_softmax_vjp
>>> x = np.array([[0.0, 1.0, -2.0]], dtype=np.float32)
>>> g = np.array([[1.0, -1.0, 0.5]], dtype=np.float32)
>>> ref = reference_softmax_vjp(x, g)
>>> allowed = vjp_allowance(ref, x, g)
>>> bool(np.all((0 < allowed) & (allowed < 1e-5)))
True
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from softmax_dispersion.numerics.rounding import FORMATS
from softmax_dispersion.testing.adapters import to_float64
from softmax_dispersion.testing.attention_tolerance import softmax_relative_bounds
from softmax_dispersion.testing.tolerance import Tolerance, accumulation_format, ulp
from softmax_dispersion.testing.vjp_reference import VJPReference

__all__ = ["vjp_allowance"]

F64 = npt.NDArray[np.float64]


def vjp_allowance(
    reference: VJPReference, x: object, g: object, *, tolerance: object = None
) -> F64:
    """T15's allowance for every element of a VJP reference (rows along the last axis).

    Parameters
    ----------
    reference
        The certified VJP (:func:`~softmax_dispersion.testing.vjp_reference.reference_softmax_vjp`).
    x, g
        The logits and the upstream gradient it was computed from.
    tolerance
        ``None`` (T15 with T12's default model), a number of ULPs or a
        :class:`~softmax_dispersion.testing.Tolerance`.

    Returns
    -------
    numpy.ndarray
        Finite, non-negative allowances shaped like ``x``; 0 in undefined rows.

    Notes
    -----
    .. math:: a_i = 1.01\\,F_i + (\\text{second order}) + \\tfrac12\\mathrm{ulp}(w_i)
       + f s_{min}

    with ``F_i`` T15's bound (the module's notes).
    """
    from softmax_dispersion.theory.attention_error import gamma_dot_product
    from softmax_dispersion.theory.rounding_error import gamma_recursive
    from softmax_dispersion.theory.vjp_error import (
        log_softmax_vjp_error_bound,
        softmax_vjp_error_bound,
    )

    tol = Tolerance.coerce(tolerance)
    dtype = reference.dtype
    fmt = FORMATS[dtype]
    u = fmt.unit_roundoff
    u_acc = FORMATS[accumulation_format(dtype)].unit_roundoff
    logits, _ = to_float64(x)
    grads, _ = to_float64(g)
    shape = logits.shape
    rows = logits.reshape(-1, shape[-1])
    grad_rows = grads.reshape(rows.shape)
    probs = reference.probs.reshape(rows.shape)
    values = reference.values.reshape(rows.shape)
    n = rows.shape[-1]
    visible = np.isfinite(rows)
    count = np.maximum(np.sum(visible, axis=-1, keepdims=True), 1).astype(np.float64)
    r = softmax_relative_bounds(rows, probs, dtype=dtype, tolerance=tol)
    size = np.abs(grad_rows)
    with np.errstate(all="ignore"):
        if reference.log:
            gamma = gamma_recursive.numpy(float(n), u_acc)
            total = np.sum(size, axis=-1, keepdims=True)
            first = log_softmax_vjp_error_bound.numpy(probs, size, total, r, u, gamma)
            # second order: the products of the factors (1 + π)(1 + δ)... and of the sum
            grow = np.expm1(np.minimum(1.01 * (r + gamma + 2 * u), 700.0)) - 1.01 * (
                r + gamma + 2 * u
            )
            second = probs * total * grow + u * u * (size + probs * total)
        else:
            gamma = gamma_dot_product.numpy(count, u_acc)
            live = probs > 0
            weighted = np.where(live, probs * size, 0.0)
            mean = np.sum(weighted, axis=-1, keepdims=True)
            spread = np.sum(weighted * r, axis=-1, keepdims=True)
            first = softmax_vjp_error_bound.numpy(probs, size, mean, spread, r, u, gamma)
            own = r + 2 * u
            grow_own = np.expm1(np.minimum(1.01 * own, 700.0)) - 1.01 * own
            others = r + gamma
            grow_others = np.expm1(np.minimum(1.01 * others, 700.0)) - 1.01 * others
            second = probs * (
                (size + mean) * grow_own
                + np.sum(weighted * grow_others, axis=-1, keepdims=True)
                + np.expm1(np.minimum(1.01 * own, 700.0))
                * np.sum(
                    weighted * np.expm1(np.minimum(1.01 * others, 700.0)), axis=-1, keepdims=True
                )
            )
            first = np.where(live, first, 0.0)
            second = np.where(live, second, 0.0)
        # weights below the format's normal range are held to half its smallest
        # subnormal, outside T12's model: ``s_min/2`` on each such p̂_j, through every
        # term it enters (a weight within a factor 2 of the range counts: its computed
        # value may fall below).  Only those: ``s_min·Σ_j|g_j|`` over a whole row of 4096
        # normal weights in float16 would be as large as each weight itself.
        below = probs < 2.0 * np.ldexp(1.0, fmt.emin)
        low_mass = np.sum(np.where(below, size, 0.0), axis=-1, keepdims=True)
        underflow = fmt.smallest_subnormal * (
            np.where(below, size + np.sum(size, axis=-1, keepdims=True), 0.0)
            + (1 + probs) * low_mass
        )
        bound = (1.01 * first + second + underflow) * (1 + 2.0**-40)
        finite = np.isfinite(values)
        half_ulp = 0.5 * ulp(np.where(finite, values, 0.0), dtype)
        if tol.model == "ulps":
            total_allowance = tol.ulps * 2 * half_ulp
        else:
            floor = tol.floor_ulps * fmt.smallest_subnormal
            total_allowance = bound + half_ulp + floor + tol.ulps * 2 * half_ulp
        total_allowance = np.where(np.isfinite(total_allowance), total_allowance, 0.0)
    total_allowance = np.where(finite, total_allowance, 0.0)
    undefined = reference.undefined.reshape(-1)
    total_allowance = np.where(undefined[:, None], 0.0, total_allowance)
    if not np.all(np.isfinite(total_allowance)):  # pragma: no cover - excluded by construction
        raise AssertionError("an allowance is not finite: a bug in the VJP tolerance")
    return total_allowance.reshape(shape)
