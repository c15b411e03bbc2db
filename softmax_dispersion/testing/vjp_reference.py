"""The certified references of the softmax and log-softmax VJPs (backward passes).

:func:`reference_softmax_vjp` evaluates, row by row along the last axis,

- softmax: ``w_i = p_i (g_i − ⟨g, p⟩)``;
- log-softmax: ``w_i = g_i − p_i Σ_j g_j``,

with ``p = softmax(x)``, and returns a float64 enclosure of every exact value, the value
rounded to the output format and the exact weights.  A logit of ``−inf`` has weight 0:
its entry is exactly 0 (softmax) or ``g_i`` (log-softmax).  A row of only ``−inf`` (or
with a NaN or ``+inf``) has no value: it is a policy choice (NaN here, ``undefined``).

Two engines, as for attention (:mod:`~softmax_dispersion.testing.attention_reference`):
float64 arithmetic with proved error bounds on top of the certified weights of
:func:`~softmax_dispersion.numerics.certified_softmax_dense` (for 16- and 32-bit
outputs), and python-flint balls for float64 outputs and for any row the first leaves
too wide (narrower than ``2**-10·u`` of the natural scale ``p_i(|g_i| + Σ_j p_j|g_j|)``,
log-softmax ``|g_i| + p_i Σ_j|g_j|``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from softmax_dispersion.numerics.rounding import FORMATS, float_format
from softmax_dispersion.testing.adapters import to_float64
from softmax_dispersion.testing.attention_reference import round_to_format

__all__ = ["VJPReference", "reference_softmax_vjp", "vjp_scale"]

F64 = npt.NDArray[np.float64]
Bool = npt.NDArray[np.bool_]
_U64 = 2.0**-53


@dataclass(frozen=True)
class VJPReference:
    """A certified VJP, rows along the last axis (shapes as ``x``).

    Attributes
    ----------
    values : numpy.ndarray
        The exact VJP rounded to :attr:`dtype` (NaN in undefined rows).
    lower, upper : numpy.ndarray
        Float64 bounds of the exact values.
    centre, centre_low, radius : numpy.ndarray
        The exact value lies within ``radius`` of ``centre + centre_low``.
    probs : numpy.ndarray
        The exact weights ``p = softmax(x)`` as float64.
    undefined : numpy.ndarray
        Per row (shape ``x.shape[:-1]``): only ``−inf``, or a NaN or ``+inf`` logit.
    dtype : str
        The output format.
    log : bool
        The log-softmax VJP.
    exact_rows : int
        Rows evaluated by the arb engine.
    """

    values: F64
    lower: F64
    upper: F64
    centre: F64
    centre_low: F64
    radius: F64
    probs: F64
    undefined: Bool
    dtype: str
    log: bool
    exact_rows: int


def vjp_scale(probs: F64, g: F64, log: bool) -> F64:
    """T15's natural scale per element: ``p_i(|g_i| + Σ_j p_j|g_j|)`` or ``|g_i| + p_i Σ_j|g_j|``.

    Examples
    --------
    >>> import numpy as np
    >>> vjp_scale(np.array([[0.5, 0.5]]), np.array([[1.0, -3.0]]), log=False).tolist()
    [[1.5, 2.5]]
    """
    size = np.abs(np.where(probs > 0, g, 0.0))
    scale: F64
    if log:
        scale = np.abs(g) + probs * np.sum(np.abs(g), axis=-1, keepdims=True)
    else:
        scale = probs * (size + np.sum(probs * size, axis=-1, keepdims=True))
    return scale


def _float64_engine(
    rows: F64, grads: F64, log: bool, requirement: float
) -> tuple[F64, F64, F64, Bool]:
    """``(centre, radius, probs, wide)`` for rows with a finite maximum."""
    from softmax_dispersion.numerics.dense import certified_softmax_dense

    n = rows.shape[-1]
    evaluation = certified_softmax_dense(rows, format="float64")
    p = evaluation.values
    p_radius = np.maximum(evaluation.upper - p, p - evaluation.lower)
    gamma = (n + 2) * _U64 / (1 - (n + 2) * _U64)
    with np.errstate(all="ignore"):
        g = np.where(p > 0, grads, 0.0) if not log else grads
        if log:
            total = np.array([math.fsum(row) for row in grads])[:, None]  # correctly rounded
            total_radius = np.abs(total) * _U64
            product = p * total
            w = grads - product
            radius = (
                _U64 * np.abs(w)
                + _U64 * np.abs(product)
                + p_radius * (np.abs(total) + total_radius)
                + p * total_radius
            ) * 1.01
        else:
            dot = np.sum(p * g, axis=-1, keepdims=True)
            dot_radius = (
                gamma * np.sum(p * np.abs(g), axis=-1, keepdims=True)
                + np.sum(p_radius * np.abs(g), axis=-1, keepdims=True)
            ) * 1.01
            d = g - dot
            d_radius = dot_radius + _U64 * np.abs(d)
            w = p * d
            radius = (_U64 * np.abs(w) + p_radius * (np.abs(d) + d_radius) + p * d_radius) * 1.01
            w = np.where(p > 0, w, 0.0)
            radius = np.where(p > 0, radius, np.where(rows == -np.inf, 0.0, radius))
        scale = vjp_scale(p, grads, log)
        wide = np.any(radius > requirement * scale + 2.0**-1060, axis=-1)
    return w, radius + 2.0**-1070, p, wide


def _dd_engine(rows: F64, grads: F64, log: bool) -> tuple[F64, F64, F64, F64, Bool]:
    """``(centre, low, radius, probs, fail)`` in double-double (float64 outputs).

    The weights by the attention reference's double-double softmax (relative error
    ``ρ_j``, about ``2**-98``), ``⟨g, p⟩`` and ``Σ g`` by Dot2 and a double-double tree,
    the last steps by AccurateDWPlusDW and DWTimesDW (``2**-100`` each).
    """
    from softmax_dispersion.numerics.dense._double_double import dd_add_fp, dd_mul
    from softmax_dispersion.testing.attention_reference import _dd_softmax, _dd_tree, _dot2

    zeros = np.zeros_like(rows)
    ph, pl, relative, fail = _dd_softmax(rows, zeros, zeros)
    u_dd = 2.0**-100
    with np.errstate(all="ignore"):
        p_error = np.abs(ph) * relative * (1 + 2.0**-40) + np.where(
            np.isfinite(rows) & (ph == 0), 2.0**-1080, 0.0
        )
        if log:
            th, tl, depth = _dd_tree(grads, np.zeros_like(grads))
            total_error = depth * u_dd * np.sum(np.abs(grads), axis=-1)
            th, tl, total_error = th[:, None], tl[:, None], total_error[:, None]
            mh, ml = dd_mul(ph, pl, th, tl)
            ch, cl = dd_add_fp(-mh, -ml, grads)
            radius = (
                p_error * (np.abs(th) + total_error)
                + np.abs(ph) * total_error * 1.01
                + 2 * u_dd * (np.abs(mh) + np.abs(ch))
            ) * 1.01
        else:
            dh, dl, dot_error = _dot2(ph, np.where(ph > 0, grads, 0.0))
            tail = np.sum(pl * grads, axis=-1)
            dh, dl = dd_add_fp(dh, dl, tail)
            dot_error = (
                dot_error
                + np.sum(np.abs(pl * grads), axis=-1) * (rows.shape[-1] + 2) * _U64
                + np.sum(p_error * np.abs(grads), axis=-1)
                + u_dd * np.abs(dh)
            )[:, None] * 1.01
            gh, gl = dd_add_fp(-dh[:, None], -dl[:, None], grads)
            ch, cl = dd_mul(ph, pl, gh, gl)
            radius = (
                p_error * (np.abs(gh) + dot_error)
                + np.abs(ph) * (dot_error + u_dd * np.abs(gh))
                + 2 * u_dd * np.abs(ch)
            ) * 1.01
            ch = np.where(ph > 0, ch, 0.0)
            cl = np.where(ph > 0, cl, 0.0)
    return ch, cl, radius + 2.0**-1070, ph + pl, fail


def _arb_row(x: F64, g: F64, log: bool, precision: int) -> tuple[F64, F64, F64, F64]:
    """``(centre, low, radius, probs)`` of one row in arb."""
    import flint

    arb = flint.arb
    n = x.size
    with flint.ctx.workprec(precision):
        visible = [j for j in range(n) if not math.isinf(x[j])]
        top = float(max(x[j] for j in visible))
        exps = [(arb(float(x[j])) - top).exp() for j in visible]
        total = sum(exps, arb(0))
        weights = [arb(0)] * n
        for j, e in zip(visible, exps, strict=True):
            weights[j] = e / total
        grads = [arb(float(v)) for v in g]
        if log:
            gsum = sum(grads, arb(0))
            out = [grads[i] - weights[i] * gsum for i in range(n)]
        else:
            dot = sum((weights[j] * grads[j] for j in visible), arb(0))
            out = [weights[i] * (grads[i] - dot) for i in range(n)]
        mids = [o.mid() for o in out]
        centre = np.array([float(m) for m in mids])
        low = np.array([float(m - arb(float(m))) for m in mids])
        radius = (
            np.array([float(o.rad()) for o in out]) * (1 + 2.0**-50) + np.abs(centre) * 2.0**-100
        )
        probs = np.array([float(w.mid()) for w in weights])
    return centre, low, radius, probs


def reference_softmax_vjp(
    x: object, g: object, *, log: bool = False, dtype: str | None = None
) -> VJPReference:
    """The certified VJP of softmax (or log-softmax) at ``x`` applied to ``g``, last axis.

    Parameters
    ----------
    x
        The logits (numpy, torch or jax array, at least one dimension); ``−inf`` allowed.
    g
        The upstream gradient, shaped like ``x``.
    log
        The log-softmax VJP ``g − p·Σg`` instead of the softmax VJP ``p ⊙ (g − ⟨g, p⟩)``.
    dtype
        The output format (``x``'s dtype by default).

    Returns
    -------
    VJPReference
        Enclosures, rounded values, the exact weights.

    Raises
    ------
    ValueError
        For a 0-d or empty ``x``, a ``g`` of another shape or with non-finite values, or
        an unknown dtype.

    Notes
    -----
    ``w_i = p_i (g_i − Σ_j p_j g_j)`` (softmax) and ``w_i = g_i − p_i Σ_j g_j``
    (log-softmax), ``p = softmax(x)``: the transposed Jacobians ``(diag p − p pᵀ) g`` and
    ``(I − 1 pᵀ)ᵀ g``.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([0.0, 0.0], dtype=np.float32)
    >>> reference_softmax_vjp(x, np.array([1.0, 0.0], dtype=np.float32)).values.tolist()
    [0.25, -0.25]
    >>> reference_softmax_vjp(x, np.array([1.0, 0.0]), log=True).values.tolist()
    [0.5, -0.5]
    """
    values, name = to_float64(x)
    grads, _ = to_float64(g)
    if values.ndim == 0 or values.size == 0:
        raise ValueError(f"x must have at least one dimension and one value, got {values.shape}")
    if grads.shape != values.shape:
        raise ValueError(f"g has shape {grads.shape}, x {values.shape}: they must match")
    if not np.all(np.isfinite(grads)):
        raise ValueError("g must hold finite values")
    if dtype is None:
        dtype = name if name in FORMATS else "float64"
    float_format(dtype)
    shape = values.shape
    rows = values.reshape(-1, shape[-1])
    grad_rows = grads.reshape(rows.shape)
    with np.errstate(all="ignore"):
        top = np.max(rows, axis=-1)
    undefined = ~np.isfinite(top)  # only −inf, or NaN, or +inf
    requirement = FORMATS[dtype].unit_roundoff * 2.0**-10
    centre = np.full(rows.shape, np.nan)
    low = np.zeros(rows.shape)
    radius = np.full(rows.shape, np.nan)
    probs = np.zeros(rows.shape)
    live = np.flatnonzero(~undefined)
    exact = np.array([], dtype=np.intp)
    if dtype != "float64" and live.size:
        w, r, p, wide = _float64_engine(rows[live], grad_rows[live], log, requirement)
        centre[live], radius[live], probs[live] = w, r, p
        exact = live[wide]
    elif live.size:
        w, lo, r, p, fail = _dd_engine(rows[live], grad_rows[live], log)
        centre[live], low[live], radius[live], probs[live] = w, lo, r, p
        exact = live[fail]
    for row in exact:
        c, lo, r, p = _arb_row(rows[row], grad_rows[row], log, 160)
        centre[row], low[row], radius[row], probs[row] = c, lo, r, p
    with np.errstate(all="ignore"):
        spread = (radius + np.abs(low)) * (1 + 2.0**-50) + 2.0**-1074
        lower = np.nextafter(centre - spread, -np.inf)
        upper = np.nextafter(centre + spread, np.inf)
        rounded = round_to_format(centre + low, dtype)
    bad = undefined[:, None]
    return VJPReference(
        values=np.where(bad, np.nan, rounded).reshape(shape),
        lower=np.where(bad, np.nan, lower).reshape(shape),
        upper=np.where(bad, np.nan, upper).reshape(shape),
        centre=centre.reshape(shape),
        centre_low=np.where(bad, np.nan, low).reshape(shape),
        radius=radius.reshape(shape),
        probs=probs.reshape(shape),
        undefined=undefined.reshape(shape[:-1]),
        dtype=dtype,
        log=log,
        exact_rows=len(exact),
    )
