"""The second zoo: every formulation and summation order T12 covers, and the bugs of masks.

Correct entries compute softmax (or log-softmax, or a masked softmax) in one of the ways
correct code does: sequential loops, blocked and tree sums, compensated sums, wider
internal formats, ``np.logaddexp.reduce``,
``exp(x − logsumexp(x))``, ``x − logsumexp(x)``, the exp of a log-softmax, a product with
the reciprocal of the sum, an online (running-maximum) softmax, onnxruntime's MLAS
kernels (16 lanes, a product with the reciprocal; ``x + (−max) − log(sum)``), torch over
a non-last dimension, jax (float64 through 64-bit types), jax's ``where=`` and torch's
masks.  The battery must pass each (no false alarm) under the default tolerance, and
every one but the log-sum-exp and log-add-exp formulations under the strict one.

Wrong entries are the bugs the first oracle let through or misreported: a "safe"
softmax that zeroes partially masked rows, 0.5 on masked entries, 16-bit block sums,
in-place implementations, additive mask biases that meet the value under the mask,
sentinel masks above the visible logits, flushed 16-bit subnormals; and those found by
attacking the oracle from outside: wrong only beyond 1000 entries, float32 results for
float64, an error growing faster than the allowance, a single finite entry among −inf
taken for a masked row, a narrower format's ``finfo.min`` as the sentinel, a view of
the input, a reused output buffer, a stale result from the second call on; and the misses
of a blind zoo: the inputs tiled kernels meet (a masked leading tile, vocabulary-length rows,
16-bit running totals, odd widths) and, under the strict model, the log-sum-exp
formulations and a row's common scale error.  Each names what must fail (a property, or
a required behaviour), and the model it is checked under.

Functions take numpy arrays ``(batch, n)`` unless their entry names another library.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.special

Array = Any


def _acc(x: Array) -> Array:
    """Work in float32 for 16-bit inputs (the accumulation format), else in the dtype."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


def _out(values: Array, x: Array) -> Array:
    return values.astype(x.dtype)


# --- correct: summation orders ---------------------------------------------------------------


def _running_sum(e: Array, axis: int = -1) -> Array:
    """A left-to-right sum in ``e``'s dtype: ``np.cumsum`` adds sequentially, as a loop does."""
    return np.take(np.cumsum(e, axis=axis, dtype=e.dtype), -1, axis=axis)


def _tiles(e: Array, width: int) -> Array:
    """``e`` padded with zeros to a multiple of ``width`` and cut into ``(rows, tiles, width)``."""
    pad = (-e.shape[1]) % width
    padded = np.concatenate([e, np.zeros((e.shape[0], pad), dtype=e.dtype)], axis=1)
    return padded.reshape(e.shape[0], -1, width)


def sequential_loop(x: Array) -> Array:
    """C-style kernel: a running max, then a left-to-right loop summing exp(x − max)."""
    w = _acc(x)
    top = np.maximum.accumulate(w, axis=-1)[:, -1]
    e = np.exp(w - top[:, None])
    return _out(e / _running_sum(e)[:, None], x)


def reverse_loop(x: Array) -> Array:
    """The same loop from the last element to the first."""
    w = _acc(x)
    e = np.exp(w - w.max(axis=-1, keepdims=True))
    return _out(e / _running_sum(e[:, ::-1])[:, None], x)


def blocked_sum(x: Array, block: int = 32) -> Array:
    """Sums of blocks of 32 (sequential inside), then a sequential sum of the blocks."""
    w = _acc(x)
    e = np.exp(w - w.max(axis=-1, keepdims=True))
    partial = _running_sum(_tiles(e, block))
    return _out(e / _running_sum(partial)[:, None], x)


def pairwise_tree(x: Array) -> Array:
    """An explicit balanced tree of additions (the textbook pairwise sum)."""
    w = _acc(x)
    e = np.exp(w - w.max(axis=-1, keepdims=True))
    level = e
    while level.shape[1] > 1:
        if level.shape[1] % 2:
            level = np.concatenate([level, np.zeros((level.shape[0], 1), dtype=level.dtype)], 1)
        level = level[:, 0::2] + level[:, 1::2]
    return _out(e / level, x)


def lanes_sum(x: Array) -> Array:
    """Eight vector lanes accumulated sequentially, then the lanes added (SIMD kernels)."""
    w = _acc(x)
    e = np.exp(w - w.max(axis=-1, keepdims=True))
    lanes = _running_sum(_tiles(e, 8), axis=1)
    total = ((lanes[:, 0] + lanes[:, 4]) + (lanes[:, 2] + lanes[:, 6])) + (
        (lanes[:, 1] + lanes[:, 5]) + (lanes[:, 3] + lanes[:, 7])
    )
    return _out(e / total[:, None], x)


def online_softmax(x: Array, lanes: int = 16) -> Array:
    """Online (flash-attention style) softmax: each of 16 lanes keeps a running max and a
    rescaled running sum over its entries, and the lanes' states are then merged."""
    w = _acc(x)
    tiles = _tiles(w, lanes)
    if w.shape[1] % lanes:  # the padding is masked, not 0
        tiles[:, -1, w.shape[1] % lanes :] = -np.inf
    top = np.full((w.shape[0], lanes), -np.inf, dtype=w.dtype)
    total = np.zeros((w.shape[0], lanes), dtype=w.dtype)
    with np.errstate(invalid="ignore"):
        for k in range(tiles.shape[1]):
            new = np.maximum(top, tiles[:, k])
            scale = np.where(np.isneginf(new), 1, np.exp(top - new))
            total = total * scale + np.where(np.isneginf(new), 0, np.exp(tiles[:, k] - new))
            top = new
        merged = top.max(axis=-1, keepdims=True)
        weights = np.where(np.isneginf(top), 0, np.exp(top - merged))
        whole = _running_sum((total * weights).astype(w.dtype))
        return _out(np.exp(w - merged) / whole[:, None], x)


def kahan_sum(x: Array, lanes: int = 32) -> Array:
    """Compensated (Kahan) summation in 32 lanes, the lanes then added with compensation too:
    more accurate than any plain order."""
    w = _acc(x)
    e = np.exp(w - w.max(axis=-1, keepdims=True))
    tiles = _tiles(e, lanes)
    total = np.zeros(tiles.shape[::2], dtype=e.dtype)
    carry = np.zeros_like(total)
    for k in range(tiles.shape[1]):
        y = tiles[:, k] - carry
        t = total + y
        carry = (t - total) - y
        total = t
    whole = np.zeros(e.shape[0], dtype=e.dtype)
    spill = np.zeros_like(whole)
    for lane in range(lanes):
        y = total[:, lane] - (spill + carry[:, lane])
        t = whole + y
        spill = (t - whole) - y
        whole = t
    return _out(e / whole[:, None], x)


def blocked_online_softmax(x: Array, block: int = 64) -> Array:
    """Online softmax over blocks of 64 (a block maximum, then one rescale per block)."""
    w = _acc(x)
    top = np.full(w.shape[0], -np.inf, dtype=w.dtype)
    total = np.zeros(w.shape[0], dtype=w.dtype)
    with np.errstate(invalid="ignore"):
        for k in range(0, w.shape[1], block):
            tile = w[:, k : k + block]
            new = np.maximum(top, tile.max(axis=-1))
            scale = np.where(np.isneginf(new), 1, np.exp(top - new))
            fresh = np.where(np.isneginf(new)[:, None], 0, np.exp(tile - new[:, None]))
            total = total * scale + fresh.sum(axis=-1)
            top = new
        return _out(np.exp(w - top[:, None]) / total[:, None], x)


def wider_internally(x: Array) -> Array:
    """Computed in a wider format (float64, or long double for float64) and rounded."""
    w = x.astype(np.longdouble) if x.dtype == np.float64 else x.astype(np.float64)
    e = np.exp(w - w.max(axis=-1, keepdims=True))
    return _out(e / e.sum(axis=-1, keepdims=True), x)


def normalised_twice(x: Array) -> Array:
    """Divides by the sum, then by the sum of the result (a belt-and-braces kernel)."""
    w = _acc(x)
    e = np.exp(w - w.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    return _out(p / p.sum(axis=-1, keepdims=True), x)


# --- correct: formulations -------------------------------------------------------------------


def reciprocal(x: Array) -> Array:
    """Multiply by the reciprocal of the sum, as vectorised kernels do."""
    w = _acc(x)
    e = np.exp(w - w.max(axis=-1, keepdims=True))
    return _out(e * (1 / e.sum(axis=-1, keepdims=True)), x)


def exp_of_log_softmax(x: Array) -> Array:
    """``exp(log_softmax(x))`` with scipy's log-softmax (in the input's dtype)."""
    return np.exp(scipy.special.log_softmax(x, axis=-1)).astype(x.dtype)


def exp_minus_logsumexp(x: Array) -> Array:
    """``exp(x − logsumexp(x))`` (scipy's logsumexp adds the maximum back)."""
    w = _acc(x)
    return _out(np.exp(w - scipy.special.logsumexp(w, axis=-1, keepdims=True)), x)


def logaddexp_reduce_softmax(x: Array) -> Array:
    """``exp(x − np.logaddexp.reduce(x))``: the normaliser by pairwise log-add-exp."""
    w = _acc(x)
    return _out(np.exp(w - np.logaddexp.reduce(w, axis=-1, keepdims=True)), x)


def x_minus_logsumexp(x: Array) -> Array:
    """Log-softmax as ``x − logsumexp(x)``."""
    w = _acc(x)
    return _out(w - scipy.special.logsumexp(w, axis=-1, keepdims=True), x)


def logaddexp_reduce_log_softmax(x: Array) -> Array:
    """Log-softmax as ``x − np.logaddexp.reduce(x)``."""
    w = _acc(x)
    return _out(w - np.logaddexp.reduce(w, axis=-1, keepdims=True), x)


def sequential_log_softmax(x: Array) -> Array:
    """Log-softmax with a left-to-right loop for the sum."""
    w = _acc(x)
    shifted = w - w.max(axis=-1, keepdims=True)
    return _out(shifted - np.log(_running_sum(np.exp(shifted)))[:, None], x)


def onnxruntime_like_softmax(x: Array) -> Array:
    """Softmax-13 as onnxruntime's MLAS kernel computes it: the maximum, ``exp(x − max)``
    accumulated in 16 vector lanes, the lanes added, then every term times ``1/sum``."""
    w = _acc(x)
    e = np.exp(w - w.max(axis=-1, keepdims=True))
    lanes = _running_sum(_tiles(e, 16), axis=1)
    total = _running_sum(lanes)
    return _out(e * (1 / total)[:, None], x)


def onnxruntime_like_log_softmax(x: Array) -> Array:
    """LogSoftmax-13 as MLAS computes it: ``x + (−max) − log(sum)``."""
    w = _acc(x)
    negative_max = -w.max(axis=-1, keepdims=True)
    total = _running_sum(_running_sum(_tiles(np.exp(w + negative_max), 16), axis=1))
    return _out((w + negative_max) - np.log(total)[:, None], x)


# --- correct: other libraries ----------------------------------------------------------------


def torch_softmax_dim0(x: Array) -> Array:
    """``torch.softmax`` over dimension 0 of the transposed tensor (a strided reduction)."""
    import torch

    return torch.softmax(x.t().contiguous(), dim=0).t()


def torch_log_softmax_dim0(x: Array) -> Array:
    """``torch.log_softmax`` over dimension 0 of the transposed tensor."""
    import torch

    return torch.log_softmax(x.t().contiguous(), dim=0).t()


def torch_exp_minus_logsumexp(x: Array) -> Array:
    """``exp(x − torch.logsumexp(x))`` in float32 for 16-bit tensors."""
    import torch

    w = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    return torch.exp(w - torch.logsumexp(w, dim=-1, keepdim=True)).to(x.dtype)


def torch_masked_fill(x: Array, mask: Array) -> Array:
    """Attention masking: ``scores.masked_fill(~mask, -inf).softmax(-1)``."""
    return x.masked_fill(~mask, float("-inf")).softmax(dim=-1)


def torch_additive_mask(x: Array, mask: Array) -> Array:
    """A float ``attn_mask``: ``softmax(scores + where(mask, 0, -inf))``."""
    import torch

    bias = torch.zeros_like(x).masked_fill(~mask, float("-inf"))
    scores = torch.where(mask, x, torch.zeros_like(x))  # what lies under the mask is ignored
    return torch.softmax(scores + bias, dim=-1)


def torch_finfo_min_fill(x: Array, mask: Array) -> Array:
    """``masked_fill(~mask, finfo.min)``: fully masked rows come out uniform."""
    import torch

    return x.masked_fill(~mask, torch.finfo(x.dtype).min).softmax(dim=-1)


def jax_softmax(x: Array) -> Array:
    """``jax.nn.softmax`` (64-bit types on during the check)."""
    import jax

    return jax.nn.softmax(x, axis=-1)


def jax_log_softmax(x: Array) -> Array:
    """``jax.nn.log_softmax``: XLA's float64 log-softmax among them."""
    import jax

    return jax.nn.log_softmax(x, axis=-1)


def jax_where(x: Array, mask: Array) -> Array:
    """``jax.nn.softmax(x, where=mask)``."""
    import jax

    return jax.nn.softmax(x, axis=-1, where=mask)


def numpy_masked(x: Array, mask: Array) -> Array:
    """``np.where(mask, x, -inf)`` and the textbook softmax."""
    w = _acc(np.where(mask, x, -np.inf).astype(x.dtype))
    with np.errstate(invalid="ignore"):
        e = np.exp(w - w.max(axis=-1, keepdims=True))
        return _out(e / e.sum(axis=-1, keepdims=True), x)


# --- wrong -----------------------------------------------------------------------------------


def _textbook(x: Array) -> Array:
    w = _acc(x)
    with np.errstate(invalid="ignore"):
        e = np.exp(w - w.max(axis=-1, keepdims=True))
        return _out(e / e.sum(axis=-1, keepdims=True), x)


def zeroes_partially_masked_rows(x: Array) -> Array:
    """A "safe" softmax returning zeros for any row containing −inf (not just fully masked)."""
    p = _textbook(x)
    return np.where(np.isneginf(x).any(axis=-1, keepdims=True), 0, p).astype(x.dtype)


def half_on_masked_entries(x: Array) -> Array:
    """Puts 0.5 on every entry at or below ``finfo.min/2`` (the masked ones)."""
    p = _textbook(x)
    masked = x <= np.finfo(x.dtype).min / 2
    return np.where(masked, 0.5, p).astype(x.dtype)


def blocked_16bit(x: Array, block: int = 32) -> Array:
    """16-bit partial sums of blocks of 32 (the totals of the blocks in float32)."""
    w = _acc(x)
    e = np.exp(w - w.max(axis=-1, keepdims=True)).astype(x.dtype)
    n = e.shape[1]
    pad = (-n) % block
    tiles = np.concatenate([e, np.zeros((e.shape[0], pad), dtype=e.dtype)], 1)
    tiles = tiles.reshape(e.shape[0], -1, block)
    partial = np.zeros(tiles.shape[:2], dtype=e.dtype)
    for k in range(block):
        partial = (partial + tiles[:, :, k]).astype(e.dtype)
    total = partial.astype(np.float32).sum(axis=-1, keepdims=True)
    return (e.astype(np.float32) / total).astype(x.dtype)


def blocked_16bit_16(x: Array) -> Array:
    """The same with blocks of 16."""
    return blocked_16bit(x, 16)


def in_place(x: Array) -> Array:
    """``softmax(x, copy=False)``: overwrites its input and returns it."""
    with np.errstate(invalid="ignore"):
        x -= x.max(axis=-1, keepdims=True)
        np.exp(x, out=x)
        x /= x.sum(axis=-1, keepdims=True)
    return x


def torch_in_place(x: Array) -> Array:
    """``x.sub_(max).exp_()`` then ``div_``: torch in place."""
    x.sub_(x.max(dim=-1, keepdim=True).values).exp_()
    return x.div_(x.sum(dim=-1, keepdim=True))


def flushes_16bit_subnormals(x: Array) -> Array:
    """Flushes outputs below the smallest normal to zero (FTZ), in every format."""
    p = _textbook(x)
    return np.where(np.abs(p) < np.finfo(x.dtype).tiny, 0, p).astype(x.dtype)


def additive_mask_bias(x: Array, mask: Array) -> Array:
    """``softmax(x + (1 − mask)·finfo.min)``: the value under the mask meets the bias."""
    bias = np.where(mask, 0, np.finfo(x.dtype).min).astype(x.dtype)
    with np.errstate(over="ignore"):
        return _textbook((x + bias).astype(x.dtype))


def sentinel_mask_1e4(x: Array, mask: Array) -> Array:
    """``masked_fill(~mask, −1e4)``: wrong once the visible logits lie below −1e4."""
    return _textbook(np.where(mask, x, -1e4).astype(x.dtype))


def sentinel_mask_1e7(x: Array, mask: Array) -> Array:
    """``masked_fill(~mask, −1e7)``: wrong once the visible logits lie below −1e7."""
    return _textbook(np.where(mask, x, x.dtype.type(-1e7)))


def sentinel_mask_1e9(x: Array, mask: Array) -> Array:
    """``masked_fill(~mask, −1e9)`` (a common attention idiom)."""
    return _textbook(np.where(mask, x, x.dtype.type(-1e9)))


def ignores_the_mask(x: Array, mask: Array) -> Array:
    """Takes a mask and ignores it."""
    return _textbook(x)


def torch_additive_float_mask(x: Array, mask: Array) -> Array:
    """``scores + (~mask) * finfo.min`` in torch: finfo.max under the mask becomes 0."""
    import torch

    return torch.softmax(x + (~mask).to(x.dtype) * torch.finfo(x.dtype).min, dim=-1)


def uniform_for_small_spreads(x: Array) -> Array:
    """An "optimisation": a uniform row whenever the spread is below 1e-3."""
    p = _textbook(x)
    w = _acc(x)
    spread = w.max(axis=-1, keepdims=True) - w.min(axis=-1, keepdims=True)
    return np.where(spread < 1e-3, 1.0 / x.shape[-1], p).astype(x.dtype)


def batch_maximum(x: Array) -> Array:
    """Shifts every row by the maximum of the whole batch."""
    w = _acc(x)
    with np.errstate(invalid="ignore"):
        e = np.exp(w - w.max())
        return _out(e / e.sum(axis=-1, keepdims=True), x)


def mask_by_multiplying(x: Array, mask: Array) -> Array:
    """``x * mask``: masked logits become 0, not −inf."""
    return _textbook((x * mask.astype(x.dtype)).astype(x.dtype))


def mask_shifted_by_one(x: Array, mask: Array) -> Array:
    """A causal mask off by one position."""
    return _textbook(np.where(np.roll(mask, 1, axis=-1), x, -np.inf).astype(x.dtype))


def log_of_clamped_softmax(x: Array) -> Array:
    """``log(max(softmax(x), 1e-30))``: a clamp where the log-softmax should be."""
    return np.log(np.maximum(_textbook(x), 1e-30)).astype(x.dtype)


def wrong_beyond_1000(x: Array) -> Array:
    """Right on rows of at most 1000 entries; longer rows leave the last term out of the sum."""
    if x.shape[-1] <= 1000:
        return _textbook(x)
    w = _acc(x)
    e = np.exp(w - w.max(axis=-1, keepdims=True))
    return _out(e / e[..., :-1].sum(axis=-1, keepdims=True), x)


def rows_past_128_reuse_normaliser(x: Array) -> Array:
    """A grid of 128 row programs: the rows past the 128th take row 127's normaliser."""
    w = _acc(x)
    e = np.exp(w - w.max(axis=-1, keepdims=True))
    total = e.sum(axis=-1, keepdims=True)
    if total.ndim == 2 and total.shape[0] > 128:
        total[128:] = total[127]
    return _out(e / total, x)


def float32_result_for_float64(x: Array) -> Array:
    """Right values, but float64 input comes back as float32."""
    p = _textbook(x)
    return p.astype(np.float32) if x.dtype == np.float64 else p


def grows_as_n_to_the_1_5(x: Array) -> Array:
    """Off by a factor 1 + n^1.5·u/4: within the default allowance at small n, not at 16384."""
    n = x.shape[-1]
    u = np.finfo(_acc(x).dtype).eps / 2
    return _out(_acc(_textbook(x)).astype(np.float64) * (1 + n**1.5 * u / 4), x)


def one_finite_entry_as_masked(x: Array) -> Array:
    """A row with a single finite entry among −inf is treated as fully masked (zeros)."""
    single = np.sum(np.isfinite(x), axis=-1, keepdims=True) == 1
    return np.where(single, 0, _textbook(x)).astype(x.dtype)


def float16_min_sentinel(x: Array) -> Array:
    """−inf replaced by float16's finfo.min (−65504) whatever the dtype, then softmax."""
    sentinel = np.float64(np.finfo(np.float16).min)
    return _textbook(np.where(np.isneginf(x), sentinel, x).astype(x.dtype))


def float32_min_sentinel(x: Array) -> Array:
    """−inf replaced by float32's finfo.min (``torch.finfo(torch.float32).min``) in float64."""
    sentinel = np.float64(np.finfo(np.float32).min)
    return _textbook(np.where(np.isneginf(x), sentinel, x).astype(x.dtype))


def returns_a_view_of_its_input(x: Array) -> Array:
    """Computes in place and returns a view aliasing its argument."""
    view = x.view()
    view[...] = _textbook(x)
    return view


def garbage_on_inf_rows(x: Array) -> Array:
    """Rows with a +inf logit get 0.5/n everywhere: they sum to 0.5, which no policy names."""
    out = _textbook(x)
    out[np.isposinf(x).any(axis=-1)] = 0.5 / x.shape[-1]
    return out


def garbage_on_fully_masked_rows(x: Array, mask: Array) -> Array:
    """Fully masked rows get 0.3 everywhere (a row sum of 1.2 at n = 4)."""
    out = _textbook(np.where(mask, x, -np.inf))
    out[~mask.any(axis=-1)] = 0.3
    return out


def square_read_column_major(x: Array) -> Array:
    """A square input taken as column-major (its transpose normalised): right on the rest."""
    if x.ndim == 2 and x.shape[0] == x.shape[1]:
        return np.ascontiguousarray(_textbook(np.ascontiguousarray(x.T)).T)
    return _textbook(x)


def normalises_axis_1(x: Array) -> Array:
    """``softmax(x, axis=1)``: the last axis of a 2-D input, the wrong one of ``(B, H, n)``."""
    w = _acc(x)
    e = np.exp(w - w.max(axis=1, keepdims=True))
    return _out(e / e.sum(axis=1, keepdims=True), x)


def wrong_at_lengths_5_to_7(x: Array) -> Array:
    """A vector-tail bug: rows of 5 to 7 entries come out 1 % too large."""
    out = _textbook(x)
    return _out(out * 1.01, x) if 5 <= x.shape[-1] <= 7 else out


def wrong_at_odd_widths(x: Array) -> Array:
    """A CUDA-style tail bug: odd widths 513–1023 with ``n mod 32 != 31`` come out 1 % off."""
    out = _textbook(x)
    n = x.shape[-1]
    return _out(out * 1.01, x) if 513 <= n <= 1023 and n % 2 and n % 32 != 31 else out


def biased_by_4_ulps(x: Array) -> Array:
    """Every output ``(1 + 4u)`` too large: inside the allowance of every row of n ≥ 2."""
    u = np.finfo(x.dtype).eps / 2
    return _out(_textbook(x) * (1 + 4 * u), x)


def torch_biased_bfloat16(x: Array) -> Array:
    """``(softmax(x.float()) * 1.02).to(bfloat16)``: a 2 % bias, about 3 ULP of bfloat16."""
    import torch

    return (torch.softmax(x.float(), dim=-1) * 1.02).to(x.dtype)


def running_max_zero_after_masked_tile(x: Array, tile: int = 64) -> Array:
    """Online softmax over tiles of 64 that stores 0.0 as the maximum of a tile with no
    visible entry (flash-attention#2082): later ``exp(x − 0)`` underflows below −88."""
    w = _acc(x)
    top = np.full(w.shape[0], -np.inf, dtype=w.dtype)
    total = np.zeros(w.shape[0], dtype=w.dtype)
    with np.errstate(all="ignore"):
        for k in range(0, w.shape[1], tile):
            block = w[:, k : k + tile]
            block_max = block.max(axis=-1)
            block_max = np.where(np.isneginf(block_max), 0.0, block_max).astype(w.dtype)
            new = np.maximum(top, block_max)
            scale = np.where(np.isneginf(top), 0.0, np.exp(top - new))
            total = total * scale + np.exp(block - new[:, None]).sum(axis=-1)
            top = new
        return _out(np.exp(w - top[:, None]) / total[:, None], x)


def log_of_ratio_on_long_rows(x: Array) -> Array:
    """Log-softmax right up to 100,000 entries; longer rows take ``log(exp(t)/S)``."""
    w = _acc(x)
    shifted = w - w.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    total = e.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore"):
        if x.shape[-1] > 100_000:
            return _out(np.log(e / total), x)
        return _out(shifted - np.log(total), x)


def float16_running_total_between_tiles(x: Array, tile: int = 32) -> Array:
    """Tiles of 32 summed in float32, the running total held in float16 between tiles."""
    w = _acc(x)
    e = np.exp(w - w.max(axis=-1, keepdims=True))
    total = np.zeros(w.shape[0], dtype=x.dtype)
    for k in range(0, w.shape[1], tile):
        total = (total.astype(np.float32) + e[:, k : k + tile].sum(axis=-1)).astype(x.dtype)
    return _out(e / total.astype(w.dtype)[:, None], x)


def float16_block_sums(x: Array, block: int = 32) -> Array:
    """Sequential float16 sums of blocks of 32, and the blocks' sums added in float16."""
    w = _acc(x)
    e = np.exp(w - w.max(axis=-1, keepdims=True)).astype(x.dtype)
    total = _running_sum(_running_sum(_tiles(e, block)))
    return _out(e.astype(w.dtype) / total.astype(w.dtype)[:, None], x)


def scaled_on_long_rows(x: Array) -> Array:
    """Every output of a row of 1024 or more ×1.001: a common scale error of a row."""
    out = _textbook(x)
    return _out(out * 1.001, x) if x.shape[-1] >= 1024 else out


def _reusing_buffers() -> Callable[[Array], Array]:
    buffers: dict[tuple[Any, ...], Array] = {}

    def reuses_its_output_buffer(x: Array) -> Array:
        """Returns one buffer per shape, overwritten by its next call of that shape."""
        out = buffers.setdefault((x.shape, x.dtype.str), np.empty_like(x))
        out[...] = _textbook(x)
        return out

    return reuses_its_output_buffer


def _stale_after_first_call() -> Callable[[Array], Array]:
    seen: set[tuple[Any, ...]] = set()

    def stale_cache(x: Array) -> Array:
        """Right on the first call of each shape; a stale (uniform) result after it."""
        key = (x.shape, x.dtype.str)
        if key in seen:
            return np.full_like(x, 1.0 / x.shape[-1])
        seen.add(key)
        return _textbook(x)

    stale_cache.reset = seen.clear  # type: ignore[attr-defined]
    return stale_cache


@dataclass(frozen=True)
class Entry:
    """A zoo entry: the function, how to check it, and (wrong ones) what must fail."""

    fn: Callable[..., Array]
    kind: str = "softmax"
    library: str = "numpy"
    fails: tuple[str, ...] = ()
    policies: Mapping[str, str] = field(default_factory=dict)
    dtypes: tuple[str, ...] | None = None
    tolerance: str | None = None


CORRECT: dict[str, Entry] = {
    "sequential_loop": Entry(sequential_loop),
    "reverse_loop": Entry(reverse_loop),
    "blocked_sum": Entry(blocked_sum),
    "pairwise_tree": Entry(pairwise_tree),
    "lanes_sum": Entry(lanes_sum),
    "online_softmax": Entry(online_softmax),
    "kahan_sum": Entry(kahan_sum),
    "blocked_online_softmax": Entry(blocked_online_softmax),
    "wider_internally": Entry(wider_internally),
    "normalised_twice": Entry(normalised_twice),
    "reciprocal": Entry(reciprocal),
    "exp_of_log_softmax": Entry(exp_of_log_softmax),
    "exp_minus_logsumexp": Entry(exp_minus_logsumexp),
    "logaddexp_reduce_softmax": Entry(logaddexp_reduce_softmax),
    "x_minus_logsumexp": Entry(x_minus_logsumexp, kind="log_softmax"),
    "logaddexp_reduce_log_softmax": Entry(logaddexp_reduce_log_softmax, kind="log_softmax"),
    "sequential_log_softmax": Entry(sequential_log_softmax, kind="log_softmax"),
    "onnxruntime_like_softmax": Entry(onnxruntime_like_softmax),
    "onnxruntime_like_log_softmax": Entry(onnxruntime_like_log_softmax, kind="log_softmax"),
    "torch_softmax_dim0": Entry(torch_softmax_dim0, library="torch"),
    "torch_log_softmax_dim0": Entry(torch_log_softmax_dim0, kind="log_softmax", library="torch"),
    "torch_exp_minus_logsumexp": Entry(torch_exp_minus_logsumexp, library="torch"),
    "torch_masked_fill": Entry(torch_masked_fill, kind="masked_softmax", library="torch"),
    "torch_additive_mask": Entry(torch_additive_mask, kind="masked_softmax", library="torch"),
    "torch_finfo_min_fill": Entry(torch_finfo_min_fill, kind="masked_softmax", library="torch"),
    "jax_softmax": Entry(jax_softmax, library="jax"),
    "jax_log_softmax": Entry(jax_log_softmax, kind="log_softmax", library="jax"),
    "jax_where": Entry(jax_where, kind="masked_softmax", library="jax"),
    "numpy_masked": Entry(numpy_masked, kind="masked_softmax"),
}
"""Correct implementations: every formulation and summation order; all must pass."""

WRONG: dict[str, Entry] = {
    "zeroes_partially_masked_rows": Entry(
        zeroes_partially_masked_rows, fails=("accuracy", "row_sum")
    ),
    "half_on_masked_entries": Entry(
        half_on_masked_entries, fails=("accuracy", "row_sum", "masked_entries")
    ),
    "blocked_16bit": Entry(blocked_16bit, fails=("accuracy",), dtypes=("float16",)),
    "blocked_16bit_16": Entry(blocked_16bit_16, fails=("accuracy",), dtypes=("float16",)),
    "in_place": Entry(in_place, fails=("policy",), policies={"input": "kept"}),
    "torch_in_place": Entry(
        torch_in_place, library="torch", fails=("policy",), policies={"input": "kept"}
    ),
    "flushes_16bit_subnormals": Entry(
        flushes_16bit_subnormals, fails=("accuracy",), dtypes=("float16",)
    ),
    "flushes_subnormals_when_kept_required": Entry(
        flushes_16bit_subnormals,
        fails=("policy",),
        policies={"subnormals": "kept"},
        dtypes=("float32", "float64"),
    ),
    "additive_mask_bias": Entry(additive_mask_bias, kind="masked_softmax", fails=("accuracy",)),
    "sentinel_mask_1e4": Entry(sentinel_mask_1e4, kind="masked_softmax", fails=("accuracy",)),
    "sentinel_mask_1e7": Entry(
        sentinel_mask_1e7, kind="masked_softmax", fails=("accuracy",), dtypes=("float32",)
    ),
    "sentinel_mask_1e9": Entry(
        sentinel_mask_1e9, kind="masked_softmax", fails=("accuracy",), dtypes=("float32",)
    ),
    "ignores_the_mask": Entry(
        ignores_the_mask, kind="masked_softmax", fails=("accuracy", "masked_entries")
    ),
    "torch_additive_float_mask": Entry(
        torch_additive_float_mask, kind="masked_softmax", library="torch", fails=("accuracy",)
    ),
    "uniform_for_small_spreads": Entry(uniform_for_small_spreads, fails=("accuracy",)),
    "batch_maximum": Entry(batch_maximum, fails=("accuracy", "batch_independence")),
    "mask_by_multiplying": Entry(
        mask_by_multiplying, kind="masked_softmax", fails=("accuracy", "masked_entries")
    ),
    "mask_shifted_by_one": Entry(
        mask_shifted_by_one, kind="masked_softmax", fails=("accuracy", "masked_entries")
    ),
    "log_of_clamped_softmax": Entry(
        log_of_clamped_softmax, kind="log_softmax", fails=("accuracy", "masked_entries")
    ),
    # Wrong in ways neither zoo had, found by attacking the oracle from outside.
    "wrong_beyond_1000": Entry(wrong_beyond_1000, fails=("accuracy", "row_sum")),
    "float32_result_for_float64": Entry(
        float32_result_for_float64, fails=("shape_dtype",), dtypes=("float64",)
    ),
    "grows_as_n_to_the_1_5": Entry(grows_as_n_to_the_1_5, fails=("accuracy",)),
    "one_finite_entry_as_masked": Entry(one_finite_entry_as_masked, fails=("accuracy",)),
    "float16_min_sentinel": Entry(
        float16_min_sentinel, fails=("accuracy", "masked_entries"), dtypes=("float32",)
    ),
    "float32_min_sentinel": Entry(
        float32_min_sentinel, fails=("accuracy", "masked_entries"), dtypes=("float64",)
    ),
    "returns_a_view_of_its_input": Entry(
        returns_a_view_of_its_input, fails=("policy",), policies={"input": "kept"}
    ),
    "reuses_its_output_buffer": Entry(_reusing_buffers(), fails=("fresh_output",)),
    # Found by the red team: shapes the battery never called, and outputs on policy rows
    # that no policy names.
    "square_read_column_major": Entry(square_read_column_major, fails=("accuracy", "row_sum")),
    "normalises_axis_1": Entry(normalises_axis_1, fails=("accuracy", "row_sum")),
    "wrong_at_lengths_5_to_7": Entry(wrong_at_lengths_5_to_7, fails=("accuracy",)),
    "biased_by_4_ulps": Entry(biased_by_4_ulps, fails=("accuracy",), dtypes=("float32",)),
    "torch_biased_bfloat16": Entry(
        torch_biased_bfloat16, library="torch", fails=("accuracy",), dtypes=("bfloat16",)
    ),
    "garbage_on_inf_rows": Entry(garbage_on_inf_rows, fails=("policy",)),
    "garbage_on_fully_masked_rows": Entry(
        garbage_on_fully_masked_rows, kind="masked_softmax", fails=("policy",)
    ),
    "stale_after_first_call": Entry(_stale_after_first_call(), fails=("batch_independence",)),
    # The inputs tiled kernels meet (issue 21): a masked leading tile, vocabulary-length
    # rows, long 16-bit rows.
    "wrong_at_odd_widths": Entry(wrong_at_odd_widths, fails=("accuracy",), dtypes=("float32",)),
    "running_max_zero_after_masked_tile": Entry(
        running_max_zero_after_masked_tile, fails=("accuracy",), dtypes=("float32",)
    ),
    "log_of_ratio_on_long_rows": Entry(
        log_of_ratio_on_long_rows, kind="log_softmax", fails=("accuracy",), dtypes=("float32",)
    ),
    "float16_running_total_between_tiles": Entry(
        float16_running_total_between_tiles, fails=("accuracy",), dtypes=("float16",)
    ),
    "float16_block_sums": Entry(float16_block_sums, fails=("accuracy",), dtypes=("float16",)),
    # A second red team's: a call of more rows than the suites held (81) until then.
    "rows_past_128_reuse_normaliser": Entry(
        rows_past_128_reuse_normaliser, fails=("accuracy", "row_sum"), dtypes=("float32",)
    ),
    # Caught by the strict model: errors that grow with the logits' size (a log-sum-exp
    # rounded at their magnitude) or a row's common scale, which the default must allow
    # because a correct log-sum-exp or log-add-exp formulation loses as much.
    "x_minus_logsumexp_strict": Entry(
        x_minus_logsumexp, kind="log_softmax", fails=("accuracy",), tolerance="strict"
    ),
    "exp_minus_logsumexp_strict": Entry(
        exp_minus_logsumexp, fails=("accuracy",), tolerance="strict"
    ),
    "logaddexp_reduce_strict": Entry(
        logaddexp_reduce_log_softmax, kind="log_softmax", fails=("accuracy",), tolerance="strict"
    ),
    "scaled_on_long_rows_strict": Entry(
        scaled_on_long_rows, fails=("accuracy",), dtypes=("float32",), tolerance="strict"
    ),
}
"""Wrong implementations and what must fail for each (a property or a required behaviour)."""
