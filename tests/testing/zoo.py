"""A zoo of softmax implementations: correct ones, and wrong ones real ports got wrong.

Each wrong entry names the property the oracle must report for it (:data:`WRONG`).
Every function takes a numpy array ``(batch, n)`` and returns the same shape and dtype
(torch entries take torch tensors).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.special

Array = Any
COEFFICIENTS = (-0.037, 0.481, -2.3, 4.917, -1.791)
"""The adaptive rule's polynomial, highest degree first."""
SSMAX_S = 0.5


def _work(x: Array) -> Array:
    """Compute 16-bit inputs in float32 (the usual upcast)."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


# --- correct ------------------------------------------------------------------------------


def textbook(x: Array) -> Array:
    """Max-shifted softmax in the input's dtype (16-bit upcast to float32)."""
    w = _work(x)
    e = np.exp(w - w.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(x.dtype)


def textbook_log(x: Array) -> Array:
    """Max-shifted log-softmax: ``x − max − log Σ exp(x − max)``."""
    w = _work(x)
    shifted = w - w.max(axis=-1, keepdims=True)
    return (shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))).astype(x.dtype)


def scipy_softmax(x: Array) -> Array:
    """``scipy.special.softmax`` over the last axis (float16 computed in float16)."""
    return scipy.special.softmax(x, axis=-1)


def scipy_log_softmax(x: Array) -> Array:
    """``scipy.special.log_softmax`` over the last axis."""
    return scipy.special.log_softmax(x, axis=-1)


def torch_softmax(x: Array) -> Array:
    """``torch.softmax`` on CPU (takes a tensor)."""
    import torch

    return torch.softmax(x, dim=-1)


def torch_log_softmax(x: Array) -> Array:
    """``torch.log_softmax`` on CPU (takes a tensor)."""
    import torch

    return torch.log_softmax(x, dim=-1)


def _entropy_beta(p: Array, coefficients: tuple[float, ...]) -> Array:
    entropy = -np.sum(p * np.log(p + 1e-9), axis=-1, keepdims=True)
    poly = np.polyval(np.array(coefficients, dtype=p.dtype), entropy)
    return np.where(entropy > 0.5, np.maximum(poly, 1.0), 1.0).astype(p.dtype)


def _softmax_work(w: Array) -> Array:
    e = np.exp(w - w.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def adaptive(x: Array) -> Array:
    """The paper's adaptive temperature: ``softmax(β(H)·x)``, ``β = max(P(H), 1)`` above 1/2."""
    w = _work(x)
    beta = _entropy_beta(_softmax_work(w), COEFFICIENTS)
    return _softmax_work((w - w.max(axis=-1, keepdims=True)) * beta).astype(x.dtype)


def ssmax(x: Array) -> Array:
    """SSMax: ``softmax(s·log(n)·x)`` with ``s = 0.5``."""
    w = _work(x)
    scale = w.dtype.type(SSMAX_S * np.log(x.shape[-1]))
    return _softmax_work((w - w.max(axis=-1, keepdims=True)) * scale).astype(x.dtype)


# --- wrong --------------------------------------------------------------------------------


def no_max_shift(x: Array) -> Array:
    """``exp(x)/Σ exp(x)``: overflows past 89 (float32), 710 (float64), 11 (float16)."""
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


def float64_in_float32(x: Array) -> Array:
    """Float64 input computed in float32, cast back."""
    return textbook(x.astype(np.float32) if x.dtype == np.float64 else x).astype(x.dtype)


def sequential_16bit_sum(x: Array) -> Array:
    """Float16 exp and a sequential float16 running sum: stalls at 2048."""
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    total = np.cumsum(e, axis=-1, dtype=x.dtype)[..., -1:]
    return (e / total).astype(x.dtype)


def skips_an_element(x: Array) -> Array:
    """The normaliser leaves out the last element (an off-by-one loop bound)."""
    w = _work(x)
    e = np.exp(w - w.max(axis=-1, keepdims=True))
    return (e / e[..., :-1].sum(axis=-1, keepdims=True)).astype(x.dtype)


def wrong_axis(x: Array) -> Array:
    """Normalises over the batch axis instead of the last one."""
    w = _work(x)
    e = np.exp(w - w.max(axis=0, keepdims=True))
    return (e / e.sum(axis=0, keepdims=True)).astype(x.dtype)


def online_finite_start(x: Array) -> Array:
    """Online softmax whose running max starts at −5e4 instead of −inf (flashinfer 4267)."""
    w = _work(x).astype(np.float32)
    top = np.maximum(w.max(axis=-1, keepdims=True), np.float32(-5e4))
    e = np.exp(w - top)
    total = e.sum(axis=-1, keepdims=True)
    with np.errstate(all="ignore"):
        return (e / total).astype(x.dtype)


def epsilon_denominator(x: Array) -> Array:
    """``e / (Σ e + 1e-6)``: a 'safe' denominator that biases every row."""
    w = _work(x)
    e = np.exp(w - w.max(axis=-1, keepdims=True))
    return (e / (e.sum(axis=-1, keepdims=True) + 1e-6)).astype(x.dtype)


def log_of_softmax(x: Array) -> Array:
    """``log(softmax(x))``: −inf where the softmax underflows."""
    with np.errstate(divide="ignore"):
        return np.log(textbook(x))


def adaptive_ascending(x: Array) -> Array:
    """The adaptive rule with the coefficients read in ascending order."""
    w = _work(x)
    beta = _entropy_beta(_softmax_work(w), tuple(reversed(COEFFICIENTS)))
    return _softmax_work((w - w.max(axis=-1, keepdims=True)) * beta).astype(x.dtype)


def ssmax_as_shift(x: Array) -> Array:
    """SSMax written as ``exp(x − s log n)``: a pure shift, i.e. plain softmax."""
    w = _work(x)
    shifted = w - w.dtype.type(SSMAX_S * np.log(x.shape[-1]))
    return _softmax_work(shifted).astype(x.dtype)


def mean_shift(x: Array) -> Array:
    """Subtracts the mean instead of the max: overflows for spread-out rows."""
    w = _work(x)
    e = np.exp(w - w.mean(axis=-1, keepdims=True))
    with np.errstate(all="ignore"):
        return (e / e.sum(axis=-1, keepdims=True)).astype(x.dtype)


def divide_by_max(x: Array) -> Array:
    """Divides by the largest term instead of the sum."""
    w = _work(x)
    e = np.exp(w - w.max(axis=-1, keepdims=True))
    return (e / e.max(axis=-1, keepdims=True)).astype(x.dtype)


def clamped_logits(x: Array) -> Array:
    """Clamps the logits to [−20, 20] before the softmax (a 'stability' fix)."""
    return textbook(np.clip(x, -20, 20).astype(x.dtype))


def temperature_after_exp(x: Array) -> Array:
    """SSMax with the scale applied after exp: ``exp(x)**β`` computed as ``exp(x)·β``."""
    w = _work(x)
    e = np.exp(w - w.max(axis=-1, keepdims=True)) * w.dtype.type(SSMAX_S * np.log(x.shape[-1]))
    return (e / e.sum(axis=-1, keepdims=True)).astype(x.dtype)


def flush_small(x: Array) -> Array:
    """Flushes probabilities below 1e-6 to zero (a 'sparsifying' shortcut)."""
    p = textbook(x)
    return np.where(p < 1e-6, 0, p).astype(x.dtype)


def global_sum(x: Array) -> Array:
    """Row-wise max but one sum over the whole batch."""
    w = _work(x)
    e = np.exp(w - w.max(axis=-1, keepdims=True))
    return (e / e.sum() * x.shape[0]).astype(x.dtype)


def log_softmax_log1p(x: Array) -> Array:
    """``shifted − log1p(Σ e)``: log1p where log belongs (off by log(1 + S) − log S)."""
    w = _work(x)
    shifted = w - w.max(axis=-1, keepdims=True)
    return (shifted - np.log1p(np.exp(shifted).sum(axis=-1, keepdims=True))).astype(x.dtype)


def float16_output_as_float32(x: Array) -> Array:
    """Correct values, but 16-bit inputs come back as float32 (dtype not preserved)."""
    w = _work(x)
    e = np.exp(w - w.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def adaptive_scale_first(x: Array) -> Array:
    """The adaptive rule written literally, ``softmax(β·x)``: β·x overflows for large |x|."""
    w = _work(x)
    beta = _entropy_beta(_softmax_work(w), COEFFICIENTS)
    with np.errstate(all="ignore"):
        return _softmax_work(w * beta).astype(x.dtype)


def ssmax_scale_first(x: Array) -> Array:
    """SSMax written literally, ``softmax(s·log(n)·x)``: the scale before the max shift."""
    w = _work(x)
    scale = w.dtype.type(SSMAX_S * np.log(x.shape[-1]))
    with np.errstate(all="ignore"):
        return _softmax_work(w * scale).astype(x.dtype)


def reads_memory_as_contiguous(x: Array) -> Array:
    """The textbook on the input's memory read as if it were C-contiguous (a kernel
    handed a data pointer): a transposed view is read column by column."""
    raw = np.lib.stride_tricks.as_strided(x, x.shape, np.empty(x.shape, x.dtype).strides)
    return textbook(np.array(raw))


def torch_reads_memory_as_contiguous(x: Array) -> Array:
    """``torch.softmax`` on the tensor's storage read with contiguous strides."""
    import torch

    raw = torch.as_strided(x, x.shape, torch.empty(x.shape).stride(), x.storage_offset())
    return torch.softmax(raw, dim=-1)


@dataclass(frozen=True)
class Entry:
    """A zoo entry: the function, how to check it, and (wrong ones) what must fail."""

    fn: Callable[[Array], Array]
    kind: str = "softmax"
    library: str = "numpy"
    s: float | None = None
    fails: tuple[str, ...] = ()


CORRECT: dict[str, Entry] = {
    "textbook": Entry(textbook),
    "textbook_log": Entry(textbook_log, kind="log_softmax"),
    "scipy_softmax": Entry(scipy_softmax),
    "scipy_log_softmax": Entry(scipy_log_softmax, kind="log_softmax"),
    "torch_softmax": Entry(torch_softmax, library="torch"),
    "torch_log_softmax": Entry(torch_log_softmax, kind="log_softmax", library="torch"),
    "adaptive": Entry(adaptive, kind="adaptive_temperature"),
    "ssmax": Entry(ssmax, kind="ssmax", s=SSMAX_S),
}
"""Correct implementations: the battery must pass them (no false alarms)."""

WRONG: dict[str, Entry] = {
    "no_max_shift": Entry(no_max_shift, fails=("accuracy", "shift_invariance")),
    "float64_in_float32": Entry(float64_in_float32, fails=("accuracy",)),
    "sequential_16bit_sum": Entry(sequential_16bit_sum, fails=("accuracy", "row_sum")),
    "skips_an_element": Entry(skips_an_element, fails=("accuracy", "row_sum")),
    "wrong_axis": Entry(wrong_axis, fails=("accuracy", "batch_independence")),
    "online_finite_start": Entry(online_finite_start, fails=("accuracy",)),
    "epsilon_denominator": Entry(epsilon_denominator, fails=("accuracy",)),
    "log_of_softmax": Entry(log_of_softmax, kind="log_softmax", fails=("accuracy",)),
    "adaptive_ascending": Entry(
        adaptive_ascending, kind="adaptive_temperature", fails=("accuracy",)
    ),
    "ssmax_as_shift": Entry(ssmax_as_shift, kind="ssmax", s=SSMAX_S, fails=("accuracy",)),
    "mean_shift": Entry(mean_shift, fails=("accuracy",)),
    "divide_by_max": Entry(divide_by_max, fails=("accuracy", "row_sum", "t1_bound")),
    "clamped_logits": Entry(clamped_logits, fails=("accuracy",)),
    "temperature_after_exp": Entry(
        temperature_after_exp, kind="ssmax", s=SSMAX_S, fails=("accuracy",)
    ),
    "flush_small": Entry(flush_small, fails=("accuracy",)),
    "global_sum": Entry(global_sum, fails=("accuracy", "batch_independence")),
    "log_softmax_log1p": Entry(log_softmax_log1p, kind="log_softmax", fails=("accuracy",)),
    "float16_output_as_float32": Entry(float16_output_as_float32, fails=("shape_dtype",)),
    # Scaling before the max shift: NaN for a row of finfo.min once the scale exceeds 1.
    "adaptive_scale_first": Entry(
        adaptive_scale_first, kind="adaptive_temperature", fails=("accuracy",)
    ),
    "ssmax_scale_first": Entry(ssmax_scale_first, kind="ssmax", s=SSMAX_S, fails=("accuracy",)),
    # Strided reads: caught only by an input that is not contiguous (a transposed view).
    "reads_memory_as_contiguous": Entry(reads_memory_as_contiguous, fails=("accuracy",)),
    "torch_reads_memory_as_contiguous": Entry(
        torch_reads_memory_as_contiguous, library="torch", fails=("accuracy",)
    ),
}
"""Wrong implementations and the properties whose failure must be reported."""
