"""The attention and VJP zoo: honest implementations, and the bugs real kernels shipped.

Attention entries take ``(q, k, v, attn_mask=None, is_causal=False, scale=None)`` with
torch's semantics (numpy arrays unless the entry names another library); VJP entries
take ``(x, g)``.  Correct entries must pass the default battery in every dtype (no false
alarm); each wrong entry names the property the oracle must report and the dtypes where
it shows (the default check runs those and more: a failure there is a failure of the
full check).

Wrong attention entries, each modelled on a real bug: an online softmax that does not
rescale its accumulator when the running maximum grows; the scale applied twice; a
causal mask off by one; a boolean mask turned into a ``−1e4`` bias (BERT's convention)
meeting scores near ``10⁴``; the weighted sum of ``v`` accumulated in float16; one fully
masked row's NaN spread through the batch by a maximum taken across rows; the running
maximum started at 0 instead of ``−inf`` (flash-attention #2082); the maximum taken
over the whole batch instead of along each row; a float64 output for float32 input; a
boolean mask read
the other way (``nn.MultiheadAttention``'s ``key_padding_mask`` convention); causal
masks aligned bottom-right (flash-attention ≥ 2.1) where torch aligns top-left; the
``scale`` argument ignored; ``1/√Ev`` instead of ``1/√E``; an online softmax that drops
the last partial tile; the softmax denominator summed in float16.  Wrong VJP entries:
without the ``⟨g, p⟩`` term, computed in float32 for float64 input, the log-softmax VJP
without the sum (``g − p ⊙ g``), the sign of the correction flipped, the weights
recomputed without the max shift or shifted by the whole batch's maximum, and the softmax
VJP given for the log-softmax kind.

A red team's planted bugs, each of which passed while the suites held no input to show
it: the scale divided by, squared, ``scale or 1/√E`` (0 becomes the default), ignored
with a float mask or on the causal path; query rows past 64 left at zero, a causal
kernel that visits only the diagonal key tile, the head size cut at 64, the key/value
head index modulo 4, causal masking of batch element 0 only, bottom-right alignment when
``L > S``; ``v`` written into (``input: modified``, required ``kept`` for attention);
a VJP written into ``g`` and returned, rows after the 8th taking an earlier row's
``⟨g, p⟩``, ``⟨g, p⟩`` accumulated in float16.  A second red team's, wrong only past the sizes the
suites then stopped at: a head index modulo 8, batch×head programs past the 16th reusing
its keys and values, split-K at 8192 keys without rescaling, ``⟨g, p⟩`` and ``Σg``
reduced over chunks of 8192 entries alone, rows past the 64th taking row 63's
``⟨g, p⟩``.  Its false alarm is a correct entry:
torch's SDPA after each float-mask row is shifted exactly by its maximum (bfloat16's
``finfo.min row`` once failed it).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

Array = Any


@dataclass(frozen=True)
class Entry:
    """An implementation, its kind, its library and what the oracle must report."""

    fn: Callable[..., Any]
    kind: str = "attention"
    library: str = "numpy"
    fails: tuple[str, ...] = ()
    dtypes: tuple[str, ...] | None = None  # wrong entries: where the bug shows


def _work(a: Array) -> Array:
    """16-bit inputs computed in float32 (the accumulation format)."""
    a = np.asarray(a)
    return a.astype(np.float32) if a.dtype.itemsize < 4 else a


def _scores(q: Array, k: Array, attn_mask: Array, is_causal: bool, scale: Any) -> Array:
    """Scaled scores with the mask applied (−inf where a key is excluded)."""
    qw, kw = _work(q), _work(k)
    factor = 1 / math.sqrt(qw.shape[-1]) if scale is None else scale
    s = qw @ np.swapaxes(kw, -1, -2) * qw.dtype.type(factor)
    if attn_mask is not None:
        mask = np.asarray(attn_mask)
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + _work(mask)
    if is_causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], dtype=bool)), s, -np.inf)
    return s


def _finish(out: Array, q: Array) -> Array:
    return np.asarray(out, dtype=np.asarray(q).dtype)


# --- correct attention ----------------------------------------------------------------------


def naive_float32(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """Scores, max-shifted softmax, weighted sum; 16-bit in float32 with float32 sums."""
    with np.errstate(all="ignore"):
        s = _scores(q, k, attn_mask, is_causal, scale)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return _finish((e / e.sum(axis=-1, keepdims=True)) @ _work(v), q)


def _online(
    q: Array,
    k: Array,
    v: Array,
    attn_mask: Any,
    is_causal: bool,
    scale: Any,
    *,
    tile: int = 64,
    rescale: bool = True,
    start: float = -np.inf,
    drop_tail: bool = False,
) -> Array:
    """Flash-style attention over key tiles: running maximum, running sum, accumulator."""
    with np.errstate(all="ignore"):
        s = _scores(q, k, attn_mask, is_causal, scale)
        vw = np.broadcast_to(_work(v), (*s.shape[:-2], *np.shape(v)[-2:]))
        keys = s.shape[-1]
        m = np.full((*s.shape[:-1], 1), start, dtype=s.dtype)
        total = np.zeros_like(m)
        acc = np.zeros((*s.shape[:-1], vw.shape[-1]), dtype=s.dtype)
        stop = keys - keys % tile if drop_tail and keys > tile else keys
        for j in range(0, stop, tile):
            block = s[..., j : j + tile]
            new = np.maximum(m, block.max(axis=-1, keepdims=True))
            # a tile with every key masked keeps the maximum at −inf: no NaN from −inf − −inf
            safe = np.where(np.isneginf(new), 0.0, new)
            e = np.exp(block - safe)
            factor = np.exp(np.where(np.isneginf(m), -np.inf, m - safe)) if rescale else 1.0
            total = total * factor + e.sum(axis=-1, keepdims=True)
            acc = acc * factor + e @ vw[..., j : j + tile, :]
            m = new
        return _finish(acc / total, q)


def online_flash(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """An online softmax over tiles of 64 keys with the accumulator rescaled, float32 state."""
    return _online(q, k, v, attn_mask, is_causal, scale)


def online_flash_tile_128(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """The same with tiles of 128 keys (other tile edges)."""
    return _online(q, k, v, attn_mask, is_causal, scale, tile=128)


def deferred_normalisation(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """Unnormalised weights times ``v``, divided by their sum at the end (float32 state)."""
    with np.errstate(all="ignore"):
        s = _scores(q, k, attn_mask, is_causal, scale)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return _finish((e @ _work(v)) / e.sum(axis=-1, keepdims=True), q)


# --- wrong attention ------------------------------------------------------------------------


def missing_rescale(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """Online softmax that never rescales the running sum and accumulator."""
    return _online(q, k, v, attn_mask, is_causal, scale, rescale=False)


def scale_twice(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """``q`` scaled, then the scores scaled again."""
    factor = 1 / math.sqrt(np.shape(q)[-1]) if scale is None else scale
    return naive_float32(_work(q) * factor, k, v, attn_mask, is_causal, scale)


def causal_off_by_one(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """A causal mask that lets each query see one key of its future (``tril(k=1)``)."""
    if not is_causal:
        return naive_float32(q, k, v, attn_mask, False, scale)
    length, keys = np.shape(q)[-2], np.shape(k)[-2]
    return naive_float32(q, k, v, np.tril(np.ones((length, keys), dtype=bool), 1), False, scale)


def minus_1e4_mask(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """A boolean mask turned into ``(1 − mask)·−10000`` (BERT's convention)."""
    if attn_mask is not None and np.asarray(attn_mask).dtype == bool:
        attn_mask = np.where(attn_mask, 0.0, -1e4).astype(np.asarray(q).dtype)
    return naive_float32(q, k, v, attn_mask, is_causal, scale)


def v_sum_float16(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """16-bit inputs: the weighted sum of ``v`` accumulated key by key in the 16-bit format."""
    dtype = np.asarray(q).dtype
    if dtype.itemsize >= 4:
        return naive_float32(q, k, v, attn_mask, is_causal, scale)
    with np.errstate(all="ignore"):
        s = _scores(q, k, attn_mask, is_causal, scale)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        p = (e / e.sum(axis=-1, keepdims=True)).astype(dtype)
        vv = np.broadcast_to(np.asarray(v), (*p.shape[:-2], *np.shape(v)[-2:]))
        acc = np.zeros((*p.shape[:-1], vv.shape[-1]), dtype=dtype)
        for j in range(p.shape[-1]):
            acc = (acc + p[..., j, None] * vv[..., j, None, :]).astype(dtype)
    return acc


def nan_leak(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """A fully masked row's NaN spread by a maximum taken across all rows "for stability"."""
    with np.errstate(all="ignore"):
        s = _scores(q, k, attn_mask, is_causal, scale)
        s = s - s.max(axis=-1, keepdims=True)
        s = s - np.max(s)  # a maximum across rows: NaN from one row reaches all
        e = np.exp(s)
        return _finish((e / e.sum(axis=-1, keepdims=True)) @ _work(v), q)


def running_max_zero(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """Online softmax whose running maximum starts at 0.0 (flash-attention #2082)."""
    return _online(q, k, v, attn_mask, is_causal, scale, start=0.0)


def mask_inverted(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """A boolean mask read as True = masked (``key_padding_mask``'s convention)."""
    if attn_mask is not None and np.asarray(attn_mask).dtype == bool:
        attn_mask = ~np.asarray(attn_mask)
    return naive_float32(q, k, v, attn_mask, is_causal, scale)


def causal_bottom_right(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """Causal masks aligned to the bottom-right corner (flash-attention ≥ 2.1)."""
    if not is_causal:
        return naive_float32(q, k, v, attn_mask, False, scale)
    length, keys = np.shape(q)[-2], np.shape(k)[-2]
    mask = np.tril(np.ones((length, keys), dtype=bool), keys - length)
    return naive_float32(q, k, v, mask, False, scale)


def ignores_scale(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """The ``scale`` argument ignored: always ``1/√E``."""
    return naive_float32(q, k, v, attn_mask, is_causal, None)


def scale_by_value_size(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """``1/√Ev`` (the value size) where ``1/√E`` belongs."""
    factor = 1 / math.sqrt(np.shape(v)[-1]) if scale is None else scale
    return naive_float32(q, k, v, attn_mask, is_causal, factor)


def drops_last_tile(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """Online softmax that leaves out the last partial tile of keys."""
    return _online(q, k, v, attn_mask, is_causal, scale, drop_tail=True)


def denominator_float16(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """16-bit inputs: the softmax's sum held in the 16-bit format, key by key."""
    dtype = np.asarray(q).dtype
    if dtype.itemsize >= 4:
        return naive_float32(q, k, v, attn_mask, is_causal, scale)
    with np.errstate(all="ignore"):
        s = _scores(q, k, attn_mask, is_causal, scale)
        e = np.exp(s - s.max(axis=-1, keepdims=True)).astype(dtype)
        total = np.zeros((*e.shape[:-1], 1), dtype=dtype)
        for j in range(e.shape[-1]):
            total = (total + e[..., j : j + 1]).astype(dtype)
        return _finish((e.astype(np.float32) / total.astype(np.float32)) @ _work(v), q)


def global_max_shift(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """The maximum subtracted over every row and key at once, not along each row."""
    with np.errstate(all="ignore"):
        s = _scores(q, k, attn_mask, is_causal, scale)
        e = np.exp(s - np.max(s))
        return _finish((e / e.sum(axis=-1, keepdims=True)) @ _work(v), q)


def returns_float64(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """The right values, in float64 whatever the input."""
    return np.asarray(naive_float32(q, k, v, attn_mask, is_causal, scale), dtype=np.float64)


# the red team's planted bugs (scales, shapes, tiles and grids the suites once lacked)


def scale_as_divisor(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """``scale`` read as a temperature: the scores divided by it (right only at 1)."""
    factor = None if scale is None else np.divide(1.0, scale)  # inf at 0, as numpy does
    return naive_float32(q, k, v, attn_mask, is_causal, factor)


def scale_squared(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """``scale`` applied in full to both ``q`` and ``k`` (``√scale`` each is right)."""
    return naive_float32(q, k, v, attn_mask, is_causal, None if scale is None else scale * scale)


def scale_or_default(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """``scale or 1/√E``: an explicit scale of 0 becomes the default."""
    return naive_float32(q, k, v, attn_mask, is_causal, scale or 1 / math.sqrt(np.shape(q)[-1]))


def scale_ignored_with_float_mask(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """A float-mask path hard-wired to ``1/√E``."""
    if attn_mask is not None and np.asarray(attn_mask).dtype != bool:
        scale = None
    return naive_float32(q, k, v, attn_mask, is_causal, scale)


def causal_path_ignores_scale(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """A causal kernel of its own hard-wired to ``1/√E``."""
    return naive_float32(q, k, v, attn_mask, is_causal, None if is_causal else scale)


def queries_past_64_left_zero(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """Query tiles of 64: only the first tile computed, the other rows left at zero."""
    out = np.array(naive_float32(q, k, v, attn_mask, is_causal, scale))
    out[..., 64:, :] = 0
    return out


def causal_diagonal_tile_only(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """A causal kernel over key tiles of 64 that visits only the diagonal tile."""
    if not is_causal:
        return naive_float32(q, k, v, attn_mask, False, scale)
    i = np.arange(np.shape(q)[-2])[:, None]
    j = np.arange(np.shape(k)[-2])[None, :]
    return naive_float32(q, k, v, (j <= i) & (j // 64 == i // 64), False, scale)


def head_dim_cut_at_64(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """Scores from the first 64 head dimensions only (a kernel built for E ≤ 64)."""
    factor = 1 / math.sqrt(np.shape(q)[-1]) if scale is None else scale
    return naive_float32(q[..., :64], k[..., :64], v, attn_mask, is_causal, factor)


def head_index_mod_4(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """A grid whose key/value head index is taken modulo 4."""
    if np.ndim(q) == 4 and np.shape(q)[1] > 4 and np.shape(k)[1] == np.shape(q)[1]:
        heads = np.arange(np.shape(q)[1]) % 4
        k, v = k[:, heads], v[:, heads]
    return naive_float32(q, k, v, attn_mask, is_causal, scale)


def causal_first_batch_element_only(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """The causal mask applied to batch element 0 only; the others see every key."""
    out = np.array(naive_float32(q, k, v, attn_mask, is_causal, scale))
    if is_causal and np.ndim(q) == 4 and np.shape(q)[0] > 1:
        out[1:] = naive_float32(q[1:], k[1:], v[1:], attn_mask, False, scale)
    return out


def causal_bottom_right_when_more_queries(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """Bottom-right causal alignment used only when ``L > S`` (top-left otherwise)."""
    length, keys = np.shape(q)[-2], np.shape(k)[-2]
    if not (is_causal and length > keys):
        return naive_float32(q, k, v, attn_mask, is_causal, scale)
    mask = np.tril(np.ones((length, keys), dtype=bool), keys - length)
    return naive_float32(q, k, v, mask, False, scale)


CHUNK = 8192
"""A second red team's split: keys (attention) or a row (the VJPs) taken 8192 at a time."""


def head_index_mod_8(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """A head index kept in 3 bits: heads 8 and on read heads 0 and on's keys and values."""
    if np.ndim(q) == 4 and np.shape(q)[1] > 8 and np.shape(k)[1] == np.shape(q)[1]:
        heads = np.arange(np.shape(q)[1]) % 8
        k, v = k[:, heads], v[:, heads]
    return naive_float32(q, k, v, attn_mask, is_causal, scale)


def programs_past_16_reuse(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """A grid of 16 batch×head programs: the later ones read the 16th's keys and values."""
    if np.ndim(q) == 4 and np.shape(q)[0] * np.shape(q)[1] > 16:
        b, h = np.shape(q)[:2]
        k = np.broadcast_to(k, (b, h, *np.shape(k)[2:])).reshape(b * h, *np.shape(k)[2:]).copy()
        v = np.broadcast_to(v, (b, h, *np.shape(v)[2:])).reshape(b * h, *np.shape(v)[2:]).copy()
        k[16:], v[16:] = k[15], v[15]
        k, v = k.reshape(b, h, *k.shape[1:]), v.reshape(b, h, *v.shape[1:])
    return naive_float32(q, k, v, attn_mask, is_causal, scale)


def split_keys_without_rescale(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """Flash decoding over splits of 8192 keys, combined without rescaling by their maxima."""
    keys = np.shape(k)[-2]
    if keys <= CHUNK or attn_mask is not None or is_causal:
        return naive_float32(q, k, v, attn_mask, is_causal, scale)
    s = _scores(q, k, None, False, scale)
    vw = _work(v)
    total, weight = 0.0, 0.0
    for start in range(0, keys, CHUNK):
        part = s[..., start : start + CHUNK]
        e = np.exp(part - part.max(axis=-1, keepdims=True))  # each split its own maximum
        total = total + e @ vw[..., start : start + CHUNK, :]
        weight = weight + e.sum(axis=-1, keepdims=True)
    return _finish(total / weight, q)


def writes_into_v(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """The right output, and the caller's ``v`` zeroed (a buffer reused as workspace)."""
    out = naive_float32(q, k, v, attn_mask, is_causal, scale)
    v[...] = 0
    return out


def torch_sdpa_after_exact_mask_shift(
    q: Array, k: Array, v: Array, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> Array:
    """torch's SDPA after each float-mask row is shifted by its maximum (exact on a row
    of one value: ``softmax(s + m) = softmax(s + m − max m)``)."""
    import torch

    if attn_mask is not None and attn_mask.dtype != torch.bool:
        top = attn_mask.amax(-1, keepdim=True)
        attn_mask = attn_mask - torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    return torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=attn_mask, is_causal=is_causal, scale=scale
    )


# --- VJPs -----------------------------------------------------------------------------------


def _weights(x: Array) -> Array:
    w = _work(x)
    with np.errstate(all="ignore"):
        e = np.exp(w - w.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)


def vjp_textbook(x: Array, g: Array) -> Array:
    """``p ⊙ (g − ⟨g, p⟩)``; 16-bit in float32."""
    p, gw = _weights(x), _work(g)
    return _finish(p * (gw - np.sum(p * gw, axis=-1, keepdims=True)), x)


def vjp_distributed(x: Array, g: Array) -> Array:
    """``p ⊙ g − p·⟨g, p⟩``: the products first."""
    p, gw = _weights(x), _work(g)
    return _finish(p * gw - p * np.sum(p * gw, axis=-1, keepdims=True), x)


def vjp_sequential_float32(x: Array, g: Array) -> Array:
    """The inner product summed left to right in float32 (float64 for float64 input)."""
    p, gw = _weights(x), _work(g)
    dot = np.zeros((*p.shape[:-1], 1), dtype=p.dtype)
    for j in range(p.shape[-1]):
        dot = dot + p[..., j : j + 1] * gw[..., j : j + 1]
    return _finish(p * (gw - dot), x)


def log_vjp_textbook(x: Array, g: Array) -> Array:
    """``g − p·Σg``; 16-bit in float32."""
    p, gw = _weights(x), _work(g)
    return _finish(gw - p * np.sum(gw, axis=-1, keepdims=True), x)


def log_vjp_from_output(x: Array, g: Array) -> Array:
    """``g − exp(ℓ)·Σg`` with ``ℓ`` the log-softmax output (torch's formula)."""
    w, gw = _work(x), _work(g)
    with np.errstate(all="ignore"):
        shifted = w - w.max(axis=-1, keepdims=True)
        out = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
        return _finish(gw - np.exp(out) * np.sum(gw, axis=-1, keepdims=True), x)


def vjp_without_inner_product(x: Array, g: Array) -> Array:
    """``p ⊙ g``: the Jacobian's rank-one part forgotten."""
    return _finish(_weights(x) * _work(g), x)


def vjp_in_float32(x: Array, g: Array) -> Array:
    """Computed in float32 whatever the input (float64 inputs lose 29 bits)."""
    return _finish(vjp_textbook(np.asarray(x, np.float32), np.asarray(g, np.float32)), x)


def log_vjp_without_sum(x: Array, g: Array) -> Array:
    """``g − p ⊙ g``: the sum over the gradient forgotten."""
    p, gw = _weights(x), _work(g)
    return _finish(gw - p * gw, x)


def vjp_sign_flipped(x: Array, g: Array) -> Array:
    """``p ⊙ (⟨g, p⟩ − g)``."""
    p, gw = _weights(x), _work(g)
    return _finish(p * (np.sum(p * gw, axis=-1, keepdims=True) - gw), x)


def vjp_global_max_shift(x: Array, g: Array) -> Array:
    """The weights shifted by the maximum of the whole array, not of each row."""
    w, gw = _work(x), _work(g)
    with np.errstate(all="ignore"):
        e = np.exp(w - np.max(w))
        p = e / e.sum(axis=-1, keepdims=True)
        return _finish(p * (gw - np.sum(p * gw, axis=-1, keepdims=True)), x)


def vjp_no_max_shift(x: Array, g: Array) -> Array:
    """The weights recomputed as ``exp(x)/Σexp(x)`` (overflow beyond 88 in float32)."""
    w, gw = _work(x), _work(g)
    with np.errstate(all="ignore"):
        e = np.exp(w)
        p = e / e.sum(axis=-1, keepdims=True)
        return _finish(p * (gw - np.sum(p * gw, axis=-1, keepdims=True)), x)


def vjp_into_g(x: Array, g: Array) -> Array:
    """The right values written into the incoming gradient ``g``, which is returned."""
    g[...] = vjp_textbook(x, g)
    return g


def log_vjp_into_g(x: Array, g: Array) -> Array:
    """``g −= p·Σg`` in place (the log-softmax VJP), ``g`` returned."""
    g[...] = log_vjp_textbook(x, g)
    return g


def vjp_rows_after_8_reuse(x: Array, g: Array) -> Array:
    """Rows in groups of 8: the rows of later groups take group 0's ``⟨g, p⟩``."""
    p, gw = _weights(x), _work(g)
    dot = np.sum(p * gw, axis=-1, keepdims=True).reshape(-1, 1)
    dot[8:] = dot[np.arange(8, dot.shape[0]) % 8]
    return _finish(p * (gw - dot.reshape((*p.shape[:-1], 1))), x)


def vjp_dot_in_float16(x: Array, g: Array) -> Array:
    """``⟨g, p⟩`` accumulated entry by entry in the 16-bit input format."""
    dtype = np.asarray(x).dtype
    p, gw = _weights(x), _work(g)
    if dtype.itemsize >= 4:
        return vjp_textbook(x, g)
    p16, g16 = p.astype(dtype), np.asarray(g)
    dot = np.zeros((*p.shape[:-1], 1), dtype=dtype)
    for j in range(p.shape[-1]):
        dot = (dot + g16[..., j : j + 1] * p16[..., j : j + 1]).astype(dtype)
    return _finish(p * (gw - dot.astype(np.float32)), x)


def vjp_chunked_inner_product(x: Array, g: Array) -> Array:
    """``⟨g, p⟩`` taken over each chunk of 8192 entries alone (the sum across chunks dropped)."""
    p, gw = _weights(x), _work(g)
    out = np.empty_like(p)
    for start in range(0, p.shape[-1], CHUNK):
        part = slice(start, start + CHUNK)
        dot = np.sum(p[..., part] * gw[..., part], axis=-1, keepdims=True)
        out[..., part] = p[..., part] * (gw[..., part] - dot)
    return _finish(out, x)


def log_vjp_chunked_sum(x: Array, g: Array) -> Array:
    """``Σg`` taken over each chunk of 8192 entries alone (the sum across chunks dropped)."""
    p, gw = _weights(x), _work(g)
    out = np.empty_like(p)
    for start in range(0, p.shape[-1], CHUNK):
        part = slice(start, start + CHUNK)
        out[..., part] = gw[..., part] - p[..., part] * np.sum(
            gw[..., part], axis=-1, keepdims=True
        )
    return _finish(out, x)


def vjp_rows_after_64_reuse(x: Array, g: Array) -> Array:
    """A grid of 64 row programs: the rows past the 64th take row 63's ``⟨g, p⟩``."""
    p, gw = _weights(x), _work(g)
    dot = np.sum(p * gw, axis=-1, keepdims=True).reshape(-1, 1)
    if dot.shape[0] > 64:
        dot[64:] = dot[63]
    return _finish(p * (gw - dot.reshape((*p.shape[:-1], 1))), x)


CORRECT: dict[str, Entry] = {
    "naive_float32": Entry(naive_float32),
    "online_flash": Entry(online_flash),
    "online_flash_tile_128": Entry(online_flash_tile_128),
    "deferred_normalisation": Entry(deferred_normalisation),
    "vjp_textbook": Entry(vjp_textbook, "softmax_vjp"),
    "vjp_distributed": Entry(vjp_distributed, "softmax_vjp"),
    "vjp_sequential_float32": Entry(vjp_sequential_float32, "softmax_vjp"),
    "log_vjp_textbook": Entry(log_vjp_textbook, "log_softmax_vjp"),
    "log_vjp_from_output": Entry(log_vjp_from_output, "log_softmax_vjp"),
    # the red team's false alarm: 1 bf16 ULP from the exact answer on a row of finfo.min
    "torch_sdpa_after_exact_mask_shift": Entry(torch_sdpa_after_exact_mask_shift, library="torch"),
}
"""Honest implementations (numpy); the built-in targets (torch, jax) are tested beside."""

_32 = ("float32",)
_16 = ("float16",)
WRONG: dict[str, Entry] = {
    "missing_rescale": Entry(missing_rescale, fails=("accuracy", "permutation"), dtypes=_32),
    "scale_twice": Entry(scale_twice, fails=("accuracy",), dtypes=_32),
    "causal_off_by_one": Entry(causal_off_by_one, fails=("accuracy",), dtypes=_32),
    "minus_1e4_mask": Entry(minus_1e4_mask, fails=("accuracy",), dtypes=_32),
    "v_sum_float16": Entry(v_sum_float16, fails=("accuracy",), dtypes=_16),
    "nan_leak": Entry(nan_leak, fails=("accuracy",), dtypes=_32),
    "running_max_zero": Entry(running_max_zero, fails=("accuracy",), dtypes=_32),
    "mask_inverted": Entry(mask_inverted, fails=("accuracy",), dtypes=_32),
    "causal_bottom_right": Entry(causal_bottom_right, fails=("accuracy",), dtypes=_32),
    "ignores_scale": Entry(ignores_scale, fails=("accuracy",), dtypes=_32),
    "scale_by_value_size": Entry(scale_by_value_size, fails=("accuracy",), dtypes=_32),
    "drops_last_tile": Entry(drops_last_tile, fails=("accuracy", "permutation"), dtypes=_32),
    "denominator_float16": Entry(denominator_float16, fails=("accuracy",), dtypes=_16),
    "global_max_shift": Entry(
        global_max_shift, fails=("accuracy", "batch_independence"), dtypes=_32
    ),
    "returns_float64": Entry(returns_float64, fails=("shape_dtype",), dtypes=_32),
    "vjp_without_inner_product": Entry(
        vjp_without_inner_product, "softmax_vjp", fails=("accuracy",), dtypes=_32
    ),
    "vjp_in_float32": Entry(
        vjp_in_float32, "softmax_vjp", fails=("accuracy", "permutation"), dtypes=("float64",)
    ),
    "vjp_returns_float64": Entry(
        lambda x, g: np.asarray(vjp_textbook(x, g), dtype=np.float64),
        "softmax_vjp",
        fails=("shape_dtype",),
        dtypes=_32,
    ),
    "vjp_sign_flipped": Entry(vjp_sign_flipped, "softmax_vjp", fails=("accuracy",), dtypes=_32),
    "vjp_no_max_shift": Entry(vjp_no_max_shift, "softmax_vjp", fails=("accuracy",), dtypes=_32),
    "vjp_global_max_shift": Entry(
        vjp_global_max_shift,
        "softmax_vjp",
        fails=("accuracy", "batch_independence"),
        dtypes=_32,
    ),
    "log_vjp_without_sum": Entry(
        log_vjp_without_sum, "log_softmax_vjp", fails=("accuracy",), dtypes=_32
    ),
    "log_vjp_given_the_softmax_vjp": Entry(
        vjp_textbook, "log_softmax_vjp", fails=("accuracy",), dtypes=_32
    ),
    # the red team's planted bugs (each passed the suites before they held its input)
    "scale_as_divisor": Entry(scale_as_divisor, fails=("accuracy",), dtypes=_32),
    "scale_squared": Entry(scale_squared, fails=("accuracy",), dtypes=_32),
    "scale_or_default": Entry(scale_or_default, fails=("accuracy",), dtypes=_32),
    "scale_ignored_with_float_mask": Entry(
        scale_ignored_with_float_mask, fails=("accuracy",), dtypes=_32
    ),
    "causal_path_ignores_scale": Entry(causal_path_ignores_scale, fails=("accuracy",), dtypes=_32),
    "queries_past_64_left_zero": Entry(queries_past_64_left_zero, fails=("accuracy",), dtypes=_32),
    "causal_diagonal_tile_only": Entry(causal_diagonal_tile_only, fails=("accuracy",), dtypes=_32),
    "head_dim_cut_at_64": Entry(head_dim_cut_at_64, fails=("accuracy",), dtypes=_32),
    "head_index_mod_4": Entry(head_index_mod_4, fails=("accuracy",), dtypes=_32),
    "causal_first_batch_element_only": Entry(
        causal_first_batch_element_only, fails=("accuracy",), dtypes=_32
    ),
    "causal_bottom_right_when_more_queries": Entry(
        causal_bottom_right_when_more_queries, fails=("accuracy",), dtypes=_32
    ),
    "writes_into_v": Entry(writes_into_v, fails=("policy",), dtypes=_32),
    "vjp_into_g": Entry(vjp_into_g, "softmax_vjp", fails=("policy",), dtypes=_32),
    "log_vjp_into_g": Entry(log_vjp_into_g, "log_softmax_vjp", fails=("policy",), dtypes=_32),
    "vjp_rows_after_8_reuse": Entry(
        vjp_rows_after_8_reuse, "softmax_vjp", fails=("accuracy",), dtypes=_32
    ),
    "vjp_dot_in_float16": Entry(vjp_dot_in_float16, "softmax_vjp", fails=("accuracy",), dtypes=_16),
    # a second red team's: wrong only past the sizes the suites stopped at
    "head_index_mod_8": Entry(head_index_mod_8, fails=("accuracy",), dtypes=_32),
    "programs_past_16_reuse": Entry(programs_past_16_reuse, fails=("accuracy",), dtypes=_32),
    "split_keys_without_rescale": Entry(
        split_keys_without_rescale, fails=("accuracy",), dtypes=_32
    ),
    "vjp_chunked_inner_product": Entry(
        vjp_chunked_inner_product, "softmax_vjp", fails=("accuracy",), dtypes=_32
    ),
    "log_vjp_chunked_sum": Entry(
        log_vjp_chunked_sum, "log_softmax_vjp", fails=("accuracy",), dtypes=_32
    ),
    "vjp_rows_after_64_reuse": Entry(
        vjp_rows_after_64_reuse, "softmax_vjp", fails=("accuracy",), dtypes=_32
    ),
}
"""Wrong implementations: the property each must fail, and where the bug shows."""
