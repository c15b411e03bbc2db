"""The certified attention reference: ``softmax(q kᵀ·scale + mask) v`` with enclosures.

:func:`reference_attention` evaluates scaled dot-product attention with the semantics of
``torch.nn.functional.scaled_dot_product_attention`` and returns, for every output
element, a float64 enclosure of the exact value, the value rounded to the output
format, and what the tolerance (T14) needs: the exact weights, the scores and the sizes
of the dot products.

Two engines, both rigorous:

``float64 bounds`` (inputs whose significands have at most 26 bits: float32, bfloat16,
float16)
    The products ``q_e k_je`` are exact in binary64, so ``q kᵀ`` by BLAS is within
    ``γ_{E−1}·|q||k|ᵀ`` (any order, fused multiply-adds included); scaling and adding
    the mask add a rounding each.  The weights of those score centres come from
    :func:`~softmax_dispersion.numerics.certified_softmax_dense` (certified enclosures),
    widened by ``exp(±(ρ_j + max_k ρ_k))`` for score radii ``ρ`` (``log p_j = s_j −
    logsumexp(s)`` moves by at most that); keys whose weight is below ``2**-1074`` even
    at the far ends are left out of the maximum.  The output ``P v`` by BLAS is within
    ``γ_S·P|v| + r_P|v|``.  The enclosure is a few ``10⁻¹³`` of ``Σ_j p_j|v_j|`` wide.
``arb`` (float64 inputs, and every row the first engine leaves too wide)
    python-flint balls (``arb_mat`` products) at a working precision that covers the
    magnitude of the scores (a ``finfo.min`` mask needs about ``log2|mask|`` bits more),
    raised until the enclosure is narrow enough.

Semantics (torch's): ``q`` is ``(..., L, E)``, ``k`` ``(..., S, E)``, ``v`` ``(..., S,
Ev)``; the batch dimensions of ``k``, ``v`` and ``attn_mask`` broadcast to those of ``q``
and add none; ``scale`` defaults to ``1/√E`` (exactly: the reference uses the real
number, not its rounding); a boolean ``attn_mask`` is True where a key takes part, a
float one is added to the scores (``−inf`` excludes a key; a finite value, however
large, is an input); ``is_causal`` masks ``j > i`` (top-left aligned) and is not given
together with ``attn_mask``.  A row with no key left is *fully masked*: its output is a
policy choice (NaN here).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from softmax_dispersion.numerics.rounding import FORMATS, float_format, round_enclosure
from softmax_dispersion.testing.adapters import to_float64

__all__ = [
    "AttentionProblem",
    "AttentionReference",
    "attention_problem",
    "one_blas_thread",
    "reference_attention",
    "round_to_format",
]

F64 = npt.NDArray[np.float64]
Bool = npt.NDArray[np.bool_]
_U64 = 2.0**-53
_TINY = 2.0**-1060  # absolute slack for subnormal products and left-out keys
_FAR = 745.0  # a key this far below the maximum has a weight under 2**-1074


_LIMITED = [False]


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """One BLAS thread inside the block (re-entrant: nested blocks cost nothing).

    The products here are small; a multithreaded BLAS on a busy machine spends most of
    its time waiting (40× slower measured on two shared cores).
    """
    if _LIMITED[0]:
        yield
        return
    from softmax_dispersion.numerics.operator_norm import single_threaded_blas

    _LIMITED[0] = True
    try:
        with single_threaded_blas():
            yield
    finally:
        _LIMITED[0] = False


@dataclass(frozen=True)
class AttentionProblem:
    """Attention inputs read exactly and broadcast: the batch flattened to one axis.

    Attributes
    ----------
    q, k, v : numpy.ndarray
        Float64 values, shapes ``(B, L, E)``, ``(B, S, E)``, ``(B, S, Ev)``.
    bias : numpy.ndarray
        ``(B, L, S)``: the additive mask (``0`` where a boolean mask is True, the float
        mask's values, ``−inf`` where a key is excluded).
    scale : fractions.Fraction or None
        The scale, exactly; ``None`` for ``1/√E``.
    batch_shape : tuple of int
        ``q``'s batch dimensions (``B`` is their product).
    dtype : str
        The output format.
    """

    q: F64
    k: F64
    v: F64
    bias: F64
    scale: Fraction | None
    batch_shape: tuple[int, ...]
    dtype: str

    @property
    def excluded(self) -> Bool:
        """Keys that take no part: ``(B, L, S)``."""
        return np.isneginf(self.bias)

    @property
    def fully_masked(self) -> Bool:
        """Rows with every key excluded: ``(B, L)``."""
        found: Bool = np.all(self.excluded, axis=-1)
        return found

    @property
    def scale_float(self) -> float:
        """The scale rounded to float64."""
        if self.scale is None:
            return float(1 / _sqrt_fraction(self.q.shape[-1]))
        return float(self.scale)

    @property
    def output_shape(self) -> tuple[int, ...]:
        """``(*batch, L, Ev)``."""
        return (*self.batch_shape, self.q.shape[1], self.v.shape[2])


def _sqrt_fraction(e: int) -> Fraction:
    """``√e`` to 200 bits as a fraction (exact for a perfect square)."""
    root = math.isqrt(e)
    if root * root == e:
        return Fraction(root)
    scaled = math.isqrt(e << 400)  # ⌊√e·2**200⌋
    return Fraction(scaled, 1 << 200)


def _batch_shape(q: F64, k: F64, v: F64) -> tuple[int, ...]:
    if min(q.ndim, k.ndim, v.ndim) < 2:
        raise ValueError(
            f"q, k and v need at least two dimensions ((..., L, E), (..., S, E), (..., S, Ev)); "
            f"got shapes {q.shape}, {k.shape}, {v.shape}"
        )
    if k.shape[-1] != q.shape[-1]:
        raise ValueError(f"k's last dimension {k.shape[-1]} is not q's {q.shape[-1]} (E)")
    if v.shape[-2] != k.shape[-2]:
        raise ValueError(f"v has {v.shape[-2]} keys (shape {v.shape}), k {k.shape[-2]}")
    if 0 in q.shape or 0 in k.shape or 0 in v.shape:
        raise ValueError(f"empty q, k or v: shapes {q.shape}, {k.shape}, {v.shape}")
    batch = q.shape[:-2]
    for name, array in (("k", k), ("v", v)):
        try:
            joined = np.broadcast_shapes(batch, array.shape[:-2])
        except ValueError:
            joined = None
        if joined != batch:
            raise ValueError(
                f"{name}'s batch dimensions {array.shape[:-2]} do not broadcast to q's "
                f"{batch} without adding dimensions"
            )
    return batch


def attention_problem(
    q: object,
    k: object,
    v: object,
    attn_mask: object = None,
    is_causal: bool = False,
    scale: object = None,
    *,
    dtype: str | None = None,
) -> AttentionProblem:
    """Read and check attention inputs (numpy, torch or jax arrays) exactly.

    Raises
    ------
    ValueError
        For shapes that do not fit, a mask that does not broadcast to ``(..., L, S)``,
        ``attn_mask`` together with ``is_causal``, a scale that is not a finite number
        ``>= 0``, or an unknown dtype.

    Examples
    --------
    >>> import numpy as np
    >>> p = attention_problem(np.ones((2, 3, 4)), np.ones((2, 5, 4)), np.ones((2, 5, 1)),
    ...     is_causal=True)
    >>> p.bias.shape, p.bias[0, 0].tolist()
    ((2, 3, 5), [0.0, -inf, -inf, -inf, -inf])
    """
    qv, q_name = to_float64(q)
    kv, _ = to_float64(k)
    vv, _ = to_float64(v)
    batch = _batch_shape(qv, kv, vv)
    if dtype is None:
        dtype = q_name if q_name in FORMATS else "float64"
    float_format(dtype)
    length, keys = qv.shape[-2], kv.shape[-2]
    if attn_mask is not None and is_causal:
        raise ValueError("attn_mask and is_causal are not given together (torch's contract)")
    full = (*batch, length, keys)
    if attn_mask is not None:
        mask, mask_name = to_float64(attn_mask)
        try:
            joined = np.broadcast_shapes(full, mask.shape)
        except ValueError:
            joined = None
        if joined != full:
            raise ValueError(
                f"attn_mask of shape {mask.shape} does not broadcast to (..., L, S) = {full}"
            )
        mask = np.broadcast_to(mask, full)
        bias = np.where(mask != 0, 0.0, -np.inf) if mask_name == "bool" else mask.copy()
        if np.isnan(bias).any() or np.isposinf(bias).any():
            raise ValueError("a float attn_mask must hold finite values or -inf")
    else:
        bias = np.zeros(full)
        if is_causal:
            bias = np.broadcast_to(np.triu(np.full((length, keys), -np.inf), 1), full).copy()
    exact_scale: Fraction | None = None
    if scale is not None:
        if isinstance(scale, bool) or not isinstance(scale, (int, float, np.floating)):
            raise ValueError(f"scale must be a number, got {type(scale).__name__}")
        # 0 is honoured as 0 (torch's SDPA: every row the mean of the visible values)
        if not (math.isfinite(float(scale)) and float(scale) >= 0):
            raise ValueError(f"scale must be a finite number >= 0, got {scale!r}")
        exact_scale = Fraction(float(scale))
    size = int(np.prod(batch, dtype=np.int64)) if batch else 1
    return AttentionProblem(
        q=np.ascontiguousarray(
            np.broadcast_to(qv, (*batch, *qv.shape[-2:])).reshape(size, length, -1)
        ),
        k=np.ascontiguousarray(
            np.broadcast_to(kv, (*batch, *kv.shape[-2:])).reshape(size, keys, -1)
        ),
        v=np.ascontiguousarray(
            np.broadcast_to(vv, (*batch, *vv.shape[-2:])).reshape(size, keys, -1)
        ),
        bias=np.ascontiguousarray(bias.reshape(size, length, keys)),
        scale=exact_scale,
        batch_shape=tuple(int(d) for d in batch),
        dtype=dtype,
    )


@dataclass(frozen=True)
class AttentionReference:
    """A certified attention output.

    Attributes
    ----------
    values : numpy.ndarray
        ``(*batch, L, Ev)``: the enclosure's centre rounded to :attr:`dtype` (NaN in fully
        masked rows and rows left undecided).
    lower, upper : numpy.ndarray
        Float64 bounds of the exact output (NaN where :attr:`values` is).
    centre, centre_low, radius : numpy.ndarray
        The enclosure as a double-double centre and a radius: the exact output lies
        within ``radius`` of ``centre + centre_low`` (tighter than ``lower``/``upper``,
        which are float64 numbers).
    probs : numpy.ndarray
        ``(*batch, L, S)``: the exact weights as float64 (0 where a key is excluded).
    scores : numpy.ndarray
        ``(*batch, L, S)``: the exact scores ``scale·q·k_j + mask_j`` as float64 (``−inf``
        where a key is excluded).
    dot_size : numpy.ndarray
        ``(*batch, L, S)``: ``scale·Σ_e |q_e k_je|``, rounded up.
    fully_masked : numpy.ndarray
        ``(*batch, L)``: rows with no key left.
    ambiguous : numpy.ndarray
        ``(*batch, L)``: for rounded scores, rows where a score lies so near a rounding
        boundary of the format that its rounding is not determined (values NaN).
    dtype : str
        The output format.
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
    scores: F64
    dot_size: F64
    fully_masked: Bool
    ambiguous: Bool
    dtype: str
    exact_rows: int


def round_to_format(values: npt.ArrayLike, dtype: str) -> F64:
    """Float64 values rounded to ``dtype`` (to nearest, ties to even), as float64.

    bfloat16 rounds from float64 directly (its 8 significant bits kept from the 53, with
    the exponent range of float32): no double rounding through float32.

    Examples
    --------
    >>> round_to_format([1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8], "bfloat16").tolist()  # ties to even
    [1.0, 1.015625]
    """
    data = np.asarray(values, dtype=np.float64)
    if dtype == "float64":
        return data.copy()
    if dtype in ("float32", "float16"):
        with np.errstate(all="ignore"):
            return data.astype(dtype).astype(np.float64)
    fmt = float_format(dtype)
    with np.errstate(all="ignore"):
        finite = np.isfinite(data) & (data != 0)
        safe = np.where(finite, data, 1.0)
        _, exponent = np.frexp(np.abs(safe))
        quantum = np.maximum(exponent - 1, fmt.emin) - fmt.precision + 1
        scaled = np.ldexp(safe, -quantum)  # exact: a power of two
        rounded = np.ldexp(np.rint(scaled), quantum)  # rint: ties to even
        rounded = np.where(np.abs(rounded) > fmt.max_finite, np.sign(safe) * np.inf, rounded)
    return np.where(finite, rounded, data)


# --- the float64 engine ---------------------------------------------------------------------


def _significant_bits_at_most_26(values: F64) -> bool:
    from softmax_dispersion.numerics.dense._double_double import dekker_split

    finite = values[np.isfinite(values)]
    _, low = dekker_split(finite)
    return bool(np.all(low == 0))


def _gamma(count: int) -> float:
    """``γ_count`` in binary64, rounded up (a bound for ``count`` roundings)."""
    return count * _U64 / (1 - count * _U64) * (1 + 2.0**-40)


@dataclass
class _Pieces:
    centre: F64  # (B, L, Ev)
    low: F64  # centre + low is the enclosure's centre
    radius: F64
    probs: F64  # (B, L, S)
    scores: F64
    dot_size: F64
    wide: Bool  # (B, L): rows the float64 engine leaves to arb


def _relative(approx: Fraction, exact: Fraction) -> float:
    """``|approx − exact|/exact``, 0 for a scale of exactly 0 (held exactly)."""
    return float(abs(approx - exact) / exact) if exact else 0.0


def _float64_engine(problem: AttentionProblem, requirement: float) -> _Pieces:
    from softmax_dispersion.numerics.dense import certified_softmax_dense

    q, k, v, bias = problem.q, problem.k, problem.v, problem.bias
    keys, dims = k.shape[1], q.shape[2]
    excluded = np.isneginf(bias)
    sc = problem.scale_float
    # The scale's own representation error, relative (1/√E rounded to float64).
    exact_scale = problem.scale if problem.scale is not None else 1 / _sqrt_fraction(dims)
    scale_error = _relative(Fraction(sc), exact_scale) * 1.01 + 2.0**-190
    with np.errstate(all="ignore"):
        dot = np.matmul(q, np.swapaxes(k, 1, 2))
        size = np.matmul(np.abs(q), np.swapaxes(np.abs(k), 1, 2))
        dot_radius = _gamma(max(dims - 1, 0)) / (1 - _gamma(dims)) * size
        scaled = sc * dot
        centre = np.where(excluded, -np.inf, scaled + np.where(excluded, 0.0, bias))
        radius = (
            sc * dot_radius * (1 + 2.0**-50)
            + (scale_error + _U64) * np.abs(scaled) * (1 + 2.0**-50)
            + _U64 * np.abs(np.where(excluded, 0.0, centre))
        ) * 1.01 + _TINY
        radius = np.where(excluded, 0.0, radius)
        dot_size = sc * size * (1 + 2 * _U64) * (1 + scale_error)
    rows = centre.reshape(-1, keys)
    rho = radius.reshape(-1, keys)
    fully = np.all(np.isneginf(rows), axis=-1)
    probs = np.zeros_like(rows)
    lower = np.zeros_like(rows)
    upper = np.zeros_like(rows)
    live = np.flatnonzero(~fully)
    if live.size:
        evaluation = certified_softmax_dense(rows[live], format="float64")
        probs[live] = evaluation.values
        lower[live] = evaluation.lower
        upper[live] = evaluation.upper
    with np.errstate(all="ignore"):
        top = np.max(np.where(np.isneginf(rows), -np.inf, rows - rho), axis=-1, keepdims=True)
        far = (rows + rho < top - _FAR) | np.isneginf(rows)
        big = np.max(np.where(far, 0.0, rho), axis=-1, keepdims=True)
        spread = np.where(far, np.inf, rho + big)
        grow = np.where(spread < 1e-3, spread + spread * spread, np.inf)
        low_p = np.where(far, 0.0, lower * (1 - grow))
        high_p = np.where(far, _TINY, upper * (1 + grow) * (1 + 2.0**-50))
        high_p = np.where(np.isneginf(rows), 0.0, high_p)
        p_radius = np.maximum(high_p - probs, probs - low_p)
        p_radius = np.where(np.isfinite(p_radius), p_radius, np.inf)
    shape = centre.shape
    weights = probs.reshape(shape)
    with np.errstate(all="ignore"):
        out = np.matmul(weights, v)
        magnitude = np.matmul(weights, np.abs(v))
        spread_out = np.matmul(
            np.where(np.isfinite(p_radius), p_radius, 0.0).reshape(shape), np.abs(v)
        )
        out_radius = (
            _gamma(keys) / (1 - _gamma(keys)) * magnitude + spread_out * (1 + 2.0**-50)
        ) * 1.01 + keys * _TINY
    infinite = ~np.all(np.isfinite(p_radius), axis=-1).reshape(shape[:2])
    wide = infinite | np.any(out_radius > requirement * (magnitude + _TINY), axis=-1)
    wide &= ~fully.reshape(shape[:2])
    return _Pieces(
        centre=out,
        low=np.zeros_like(out),
        radius=out_radius,
        probs=weights,
        scores=centre,
        dot_size=dot_size,
        wide=wide,
    )


# --- the double-double engine ---------------------------------------------------------------


_CHUNK = 1 << 19
"""Elements of the largest temporary of the double-double engine (a few MiB)."""


def _dd_tree(h: F64, low: F64) -> tuple[F64, F64, int]:
    """Sum the last axis of a double-double array pairwise: ``(hi, lo, depth)``.

    Every node is AccurateDWPlusDW, within ``U`` (``2**-100``) of the exact sum of its
    two inputs: the error of the whole tree is at most ``depth·U·Σ|terms|``.
    """
    from softmax_dispersion.numerics.dense._double_double import dd_add

    depth = 0
    while h.shape[-1] > 1:
        half = h.shape[-1] // 2
        sh, sl = dd_add(
            h[..., :half], low[..., :half], h[..., half : 2 * half], low[..., half : 2 * half]
        )
        if h.shape[-1] % 2:
            sh = np.concatenate([sh, h[..., -1:]], axis=-1)
            sl = np.concatenate([sl, low[..., -1:]], axis=-1)
        h, low = sh, sl
        depth += 1
    return h[..., 0], low[..., 0], depth


def _dot2(a: F64, b: F64) -> tuple[F64, F64, F64]:
    """``Σ_k a[..., k]·b[..., k]`` in double-double: ``(hi, lo, error bound)``.

    Products by Dekker's TwoProd (exact for ``|a|, |b| < 2**995`` unless the product
    underflows: ``2**-1060`` each is charged), summed by :func:`_dd_tree`.
    """
    from softmax_dispersion.numerics.dense._double_double import dekker_split, two_prod

    with np.errstate(all="ignore"):
        b_hi, b_lo = dekker_split(b)
        ph, pl = two_prod(a, b, b_hi, b_lo)
        hi, lo, depth = _dd_tree(ph, pl)
        size = np.sum(np.abs(ph), axis=-1) * (1 + 2.0**-40)
    count = a.shape[-1]
    return hi, lo, (depth * 2.0**-100 * size) * 1.01 + count * _TINY


def _dd_scores(problem: AttentionProblem) -> tuple[F64, F64, F64]:
    """The scores ``scale·q·k_j + mask_j`` as double-doubles with a radius: ``(B, L, S)``."""
    from softmax_dispersion.numerics.dense._double_double import dd_add_fp, dd_mul

    q, k, bias = problem.q, problem.k, problem.bias
    batch, length, keys = bias.shape
    dims = q.shape[2]
    hi = np.empty(bias.shape)
    lo = np.empty(bias.shape)
    error = np.empty(bias.shape)
    step = max(1, _CHUNK // (keys * dims))
    for b in range(batch):
        for i in range(0, length, step):
            rows = slice(i, min(i + step, length))
            dh, dl, de = _dot2(q[b, rows, None, :], k[b, None, :, :])
            hi[b, rows], lo[b, rows], error[b, rows] = dh, dl, de
    exact_scale = problem.scale if problem.scale is not None else 1 / _sqrt_fraction(dims)
    scale_hi = float(exact_scale)
    scale_lo = float(exact_scale - Fraction(scale_hi))
    scale_error = _relative(Fraction(scale_hi) + Fraction(scale_lo), exact_scale)
    excluded = np.isneginf(bias)
    with np.errstate(all="ignore"):
        sh, sl = dd_mul(hi, lo, scale_hi, scale_lo)
        scaled = np.abs(sh)
        sh, sl = dd_add_fp(sh, sl, np.where(excluded, 0.0, bias))
        radius = (
            error * scale_hi * (1 + 2.0**-40)
            + (scale_error + 2.0**-99) * scaled
            + 2.0**-99 * np.abs(sh)
        ) * 1.01 + _TINY
    sh = np.where(excluded, -np.inf, sh)
    return sh, np.where(excluded, 0.0, sl), np.where(excluded, 0.0, radius)


def _dd_softmax(sh: F64, sl: F64, radius: F64) -> tuple[F64, F64, F64, Bool]:
    """Weights of double-double scores (rows, last axis): ``(hi, lo, relative error, fail)``.

    The shift ``x_j = s_j − s_top`` by the largest score centre (AccurateDWPlusDW); the
    argument error ``1.01·U|x_j| + ρ_j + ρ_top`` (``ρ`` the scores' radii) costs
    ``1.02×`` itself in ``exp`` (certified: ``exp_relative``); the sum of the terms with
    ``x >= −660`` pairwise in double-double (the rest each below ``2**-952``, and the
    sum is at least 1); its inverse (``16u²``) and one DWTimesDW.  Keys below ``−750``
    get 0 with an absolute error under ``2**-1080``.  ``fail`` marks rows whose
    exponential left its certified range.
    """
    from softmax_dispersion.numerics.dense._double_double import (
        dd_add,
        dd_add_dominant,
        dd_mul,
        times_pow2,
    )
    from softmax_dispersion.numerics.dense._elementary import (
        U_DD,
        dd_inverse,
        exp_dd,
        fast_path_bounds,
    )

    visible = np.isfinite(sh)
    with np.errstate(all="ignore"):
        top_hi = np.max(np.where(visible, sh, -np.inf), axis=-1, keepdims=True)
        at_top = visible & (sh == top_hi)
        top_lo = np.max(np.where(at_top, sl, -np.inf), axis=-1, keepdims=True)
        top_radius = np.max(np.where(at_top & (sl == top_lo), radius, 0.0), axis=-1, keepdims=True)
        xh, xl = dd_add(np.where(visible, sh, 0.0), np.where(visible, sl, 0.0), -top_hi, -top_lo)
        arg_error = 1.01 * U_DD * np.abs(xh) + (radius + top_radius) * (1 + 2.0**-40)
        in_exp = visible & (xh >= -750.0)
        eh, el, kk, ok = exp_dd(np.where(in_exp, xh, 0.0), np.where(in_exp, xl, 0.0))
        fail = np.any(in_exp & ~ok, axis=-1) | np.any(in_exp & (arg_error > 2.0**-10), axis=-1)
        tau = fast_path_bounds().exp_relative + 1.02 * arg_error
        in_sum = in_exp & (xh >= -660.0)
        scale = times_pow2(np.ones_like(xh), np.where(in_sum, kk, 0))
        th = np.where(in_sum, eh * scale, 0.0)
        tl = np.where(in_sum, el * scale, 0.0)
    # the positive terms pairwise (SloppyDWPlusDW: no cancellation)
    depth = 0
    while th.shape[-1] > 1:
        half = th.shape[-1] // 2
        nh, nl = dd_add_dominant(
            th[:, :half], tl[:, :half], th[:, half : 2 * half], tl[:, half : 2 * half]
        )
        if th.shape[-1] % 2:
            nh = np.concatenate([nh, th[:, -1:]], axis=1)
            nl = np.concatenate([nl, tl[:, -1:]], axis=1)
        th, tl = nh, nl
        depth += 1
    zh, zl = th[:, :1], tl[:, :1]
    with np.errstate(all="ignore"):
        left_out = np.sum(visible & ~in_sum, axis=-1, keepdims=True) * 2.0**-952
        zeta = (np.max(np.where(in_sum, tau, 0.0), axis=-1, keepdims=True) + depth * U_DD) * 1.01
        zeta = zeta + left_out * 1.01
        fail |= ~(np.isfinite(zh[:, 0]) & (zh[:, 0] >= 1 - 2.0**-40))
        ih, il = dd_inverse(np.where(zh >= 1, zh, 1.0), np.where(zh >= 1, zl, 0.0))
        ph, pl = dd_mul(eh, el, ih, il)
        ph = np.where(in_exp, times_pow2(ph, kk), 0.0)
        pl = np.where(in_exp, times_pow2(pl, kk), 0.0)
        relative = np.where(in_exp, (tau + zeta + 2 * U_DD) * 1.02, 0.0)
    return ph, pl, relative, fail


def _dd_engine(problem: AttentionProblem) -> _Pieces:
    """Every row in double-double (float64 inputs); rows it cannot certify are marked wide."""
    from softmax_dispersion.numerics.dense._double_double import dd_add_fp

    batch, length, keys = problem.bias.shape
    sh, sl, radius = _dd_scores(problem)
    ph, pl, relative, fail = _dd_softmax(
        sh.reshape(-1, keys), sl.reshape(-1, keys), radius.reshape(-1, keys)
    )
    ph = ph.reshape(batch, length, keys)
    pl = pl.reshape(batch, length, keys)
    relative = relative.reshape(batch, length, keys)
    v = problem.v
    values = v.shape[2]
    centre = np.empty((batch, length, values))
    low = np.empty((batch, length, values))
    error = np.empty((batch, length, values))
    step = max(1, _CHUNK // (keys * values))
    vt = np.ascontiguousarray(np.swapaxes(v, 1, 2))  # (B, Ev, S)
    for b in range(batch):
        for i in range(0, length, step):
            rows = slice(i, min(i + step, length))
            # Σ_j (p_h + p_l)_j v_j: the p_h·v_j products exactly, the p_l·v_j ones rounded
            oh, ol, oe = _dot2(ph[b, rows, None, :], vt[b, None, :, :])
            with np.errstate(all="ignore"):
                tail = np.matmul(pl[b, rows], v[b])
                tail_error = np.matmul(np.abs(pl[b, rows]), np.abs(v[b])) * (keys + 2) * _U64
            ch, cl = dd_add_fp(oh, ol, tail)
            centre[b, rows], low[b, rows] = ch, cl
            error[b, rows] = oe + tail_error * 1.01 + 2.0**-100 * np.abs(ch)
    with np.errstate(all="ignore"):
        magnitude = np.abs(ph) * (1 + 2.0**-50)
        spread = np.matmul(magnitude * relative, np.abs(v)) + np.matmul(
            np.where(np.isfinite(sh) & (ph == 0), 2.0**-1080, 0.0), np.abs(v)
        )
        total = (error + spread) * 1.01 + _TINY
    fully = problem.fully_masked
    return _Pieces(
        centre=centre,
        low=low,
        radius=total,
        probs=ph + pl,
        scores=sh,
        dot_size=_dot_size(problem),
        wide=fail.reshape(batch, length) & ~fully,
    )


# --- the arb engine -----------------------------------------------------------------------


def _exact_rows(
    problem: AttentionProblem,
    rows: list[tuple[int, int]],
    requirement: float,
    rounded_scores: bool,
) -> dict[tuple[int, int], tuple[F64, F64, F64, F64, F64, bool]]:
    """Rows ``(b, i)`` in arb: ``(centre, low, radius, probs, scores, ambiguous)`` each."""
    import flint

    fmt = float_format(problem.dtype)
    found: dict[tuple[int, int], tuple[F64, F64, F64, F64, F64, bool]] = {}
    by_batch: dict[int, list[int]] = {}
    for b, i in rows:
        by_batch.setdefault(b, []).append(i)
    dims = problem.q.shape[2]
    for b, picked in by_batch.items():
        q = problem.q[b, picked]
        k, v = problem.k[b], problem.v[b]
        bias = problem.bias[b, picked]
        finite_bias = bias[np.isfinite(bias)]
        magnitude = max(
            [
                1.0,
                *np.abs(finite_bias).tolist(),
                float(np.max(np.abs(q))) * float(np.max(np.abs(k))) * dims,
            ]
        )
        precision = 160 + max(0, math.frexp(magnitude)[1])
        while True:
            results = _arb_rows(flint, q, k, v, bias, problem, precision, fmt, rounded_scores)
            narrow = all(
                ambiguous or bool(np.all(radius <= requirement * (probs @ np.abs(v) + _TINY)))
                for _, _, radius, probs, _, ambiguous in results
            )
            if narrow or precision > 8192:
                break
            precision *= 2
        for i, result in zip(picked, results, strict=True):
            found[b, i] = result
    return found


def _arb_rows(
    flint: Any,
    q: F64,
    k: F64,
    v: F64,
    bias: F64,
    problem: AttentionProblem,
    precision: int,
    fmt: Any,
    rounded_scores: bool,
) -> list[tuple[F64, F64, F64, F64, F64, bool]]:
    arb, arb_mat = flint.arb, flint.arb_mat
    results = []
    with flint.ctx.workprec(precision):
        dims = q.shape[1]
        if problem.scale is None:
            scale = 1 / arb(dims).sqrt()
        else:
            scale = arb(problem.scale.numerator) / arb(problem.scale.denominator)
        dot = arb_mat(q.tolist()) * arb_mat(k.T.tolist())
        values = arb_mat(v.tolist())
        keys = k.shape[0]
        for row in range(q.shape[0]):
            visible = [j for j in range(keys) if not math.isinf(bias[row, j])]
            scores = [dot[row, j] * scale + arb(float(bias[row, j])) for j in visible]
            ambiguous = False
            if rounded_scores:
                rounded = []
                for s in scores:
                    low, high = s.lower().man_exp(), s.upper().man_exp()
                    value, certain = round_enclosure(
                        (int(low[0]), int(low[1])), (int(high[0]), int(high[1])), fmt
                    )
                    ambiguous = ambiguous or not certain or math.isinf(value)
                    rounded.append(arb(value) if math.isfinite(value) else arb(0))
                scores = rounded
            top = max(float(s.mid()) for s in scores)
            exps = [(s - top).exp() for s in scores]
            total = sum(exps, arb(0))
            weights = [e / total for e in exps]
            full = [arb(0)] * keys
            for j, w in zip(visible, weights, strict=True):
                full[j] = w
            out = arb_mat([full]) * values
            mids = [out[0, c].mid() for c in range(v.shape[1])]
            centre = np.array([float(m) for m in mids])
            # the centre's rounding to float64, kept: centre + low is within 2**-100
            low = np.array([float(m - arb(float(m))) for m in mids])
            radius = (
                np.array([float(out[0, c].rad()) * (1 + 2.0**-50) for c in range(v.shape[1])])
                + np.abs(centre) * 2.0**-100
            )
            probs = np.zeros(keys)
            scored = np.full(keys, -np.inf)
            for j, w, s in zip(visible, weights, scores, strict=True):
                probs[j] = float(w.mid())
                scored[j] = float(s.mid())
            results.append((centre, low, radius, probs, scored, ambiguous))
    return results


# --- the reference ----------------------------------------------------------------------------


def _requirement(dtype: str) -> float:
    """How narrow an enclosure must be, relative to ``Σ_j p_j|v_j|``: ``2**-10·u``."""
    return FORMATS[dtype].unit_roundoff * 2.0**-10


def reference_attention(
    q: object,
    k: object,
    v: object,
    attn_mask: object = None,
    is_causal: bool = False,
    scale: object = None,
    *,
    dtype: str | None = None,
    scores: str = "exact",
) -> AttentionReference:
    """The certified output of ``softmax(q kᵀ·scale + mask) v`` (torch SDPA semantics).

    Parameters
    ----------
    q, k, v
        ``(..., L, E)``, ``(..., S, E)``, ``(..., S, Ev)``: numpy, torch or jax arrays.
    attn_mask
        Boolean (True: the key takes part) or float (added to the scores), broadcasting
        to ``(..., L, S)``.
    is_causal
        Mask ``j > i`` (top-left aligned); not together with ``attn_mask``.
    scale
        The scale (``1/√E`` when ``None``, taken exactly).
    dtype
        The output format (``q``'s dtype by default).
    scores
        ``"exact"``, or ``"rounded"``: the attention of the exact scores rounded once to
        ``dtype`` (what an implementation that adds a finite mask in ``dtype`` computes,
        where that rounding decides the answer); rows where a score lies too near a
        rounding boundary for its rounding to be certain are marked ``ambiguous``.

    Returns
    -------
    AttentionReference
        Enclosures, rounded values, the exact weights, scores and dot-product sizes.

    Notes
    -----
    ``o_i = Σ_j p_ij v_j``, ``p_ij = exp(s_ij − max_k s_ik)/Σ_k exp(s_ik − max_k s_ik)``,
    ``s_ij = scale·Σ_e q_ie k_je + mask_ij``; every element enclosed to within
    ``2**-10·u`` of ``Σ_j p_ij|v_j|`` (``u`` the output format's unit roundoff) or better.

    Examples
    --------
    >>> import numpy as np
    >>> q = np.array([[1.0, 0.0]], dtype=np.float32)
    >>> k = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    >>> v = np.array([[1.0], [0.0]], dtype=np.float32)
    >>> ref = reference_attention(q, k, v, scale=1.0)
    >>> ref.values.tolist()  # e/(e + 1)
    [[0.7310585975646973]]
    >>> bool(ref.lower[0, 0] <= 0.7310585786300049 <= ref.upper[0, 0])
    True
    """
    if scores not in ("exact", "rounded"):
        raise ValueError(f"scores must be 'exact' or 'rounded', got {scores!r}")
    problem = attention_problem(q, k, v, attn_mask, is_causal, scale, dtype=dtype)
    return reference_of(problem, scores=scores)


def reference_of(problem: AttentionProblem, *, scores: str = "exact") -> AttentionReference:
    """:func:`reference_attention` of an :class:`AttentionProblem`."""
    with one_blas_thread():
        return _reference_of(problem, scores)


def _reference_of(problem: AttentionProblem, scores: str) -> AttentionReference:
    requirement = _requirement(problem.dtype)
    fully = problem.fully_masked
    batch, length = fully.shape
    if scores == "rounded":
        empty = np.zeros((batch, length, problem.v.shape[2]))
        pieces = _Pieces(
            centre=empty,
            low=empty.copy(),
            radius=empty.copy(),
            probs=np.zeros(problem.bias.shape),
            scores=np.where(problem.excluded, -np.inf, 0.0),
            dot_size=_dot_size(problem),
            wide=~fully,
        )
    elif (
        problem.dtype != "float64"
        and _significant_bits_at_most_26(problem.q)
        and _significant_bits_at_most_26(problem.k)
    ):
        pieces = _float64_engine(problem, requirement)
    else:
        pieces = _dd_engine(problem)
        # inputs beyond Dekker's range (|x| >= 2**995) go to arb
        huge = (np.max(np.abs(problem.q), axis=(1, 2)) >= 2.0**990) | (
            np.max(np.abs(problem.k), axis=(1, 2)) >= 2.0**990
        )
        pieces.wide |= huge[:, None] & ~fully
    ambiguous = np.zeros((batch, length), dtype=bool)
    rows = [(int(b), int(i)) for b, i in zip(*np.nonzero(pieces.wide), strict=True)]
    if rows:
        exact = _exact_rows(problem, rows, requirement, scores == "rounded")
        for (b, i), (centre, low, radius, probs, scored, unsure) in exact.items():
            pieces.centre[b, i] = centre
            pieces.low[b, i] = low
            pieces.radius[b, i] = radius
            pieces.probs[b, i] = probs
            pieces.scores[b, i] = scored
            ambiguous[b, i] = unsure
    undefined = (fully | ambiguous)[:, :, None]
    with np.errstate(all="ignore"):
        spread = (pieces.radius + np.abs(pieces.low)) * (1 + 2.0**-50) + 2.0**-1074
        centre = np.where(undefined, np.nan, pieces.centre)
        lower = np.nextafter(centre - spread, -np.inf)
        upper = np.nextafter(centre + spread, np.inf)
        values = round_to_format(centre + pieces.low, problem.dtype)
    out_shape = problem.output_shape
    key_shape = (*problem.batch_shape, length, problem.k.shape[1])
    return AttentionReference(
        values=values.reshape(out_shape),
        lower=lower.reshape(out_shape),
        upper=upper.reshape(out_shape),
        centre=centre.reshape(out_shape),
        centre_low=np.where(undefined, np.nan, pieces.low).reshape(out_shape),
        radius=np.where(undefined, np.nan, pieces.radius).reshape(out_shape),
        probs=np.where(undefined, 0.0, pieces.probs).reshape(key_shape),
        scores=pieces.scores.reshape(key_shape),
        dot_size=pieces.dot_size.reshape(key_shape),
        fully_masked=fully.reshape(key_shape[:-1]),
        ambiguous=ambiguous.reshape(key_shape[:-1]),
        dtype=problem.dtype,
        exact_rows=len(rows),
    )


def _dot_size(problem: AttentionProblem) -> F64:
    """``scale·|q||k|ᵀ`` rounded up (BLAS on absolute values, then ``γ`` and the scale)."""
    dims = problem.q.shape[2]
    with np.errstate(all="ignore"):
        size = np.matmul(np.abs(problem.q), np.swapaxes(np.abs(problem.k), 1, 2))
        found: F64 = problem.scale_float * size * (1 + _gamma(dims + 2)) * (1 + 2.0**-50)
    return found
