"""The built-in targets of the attention and VJP kinds (``check torch --kind attention``).

Named by the kinds' records (:mod:`~softmax_dispersion.testing.kinds`), each a factory
``factory(kind)`` returning the callable, with ``__oracle_source__`` so that reproducers
run as printed:

``attention``
    numpy: the textbook two-pass attention (16-bit inputs computed in float32 and
    rounded back); torch: ``torch.nn.functional.scaled_dot_product_attention``, checked
    once per CPU backend it has (``__oracle_variants__``: ``math`` and any fused CPU path,
    each selected with ``torch.nn.attention.sdpa_kernel``); jax:
    ``jax.nn.dot_product_attention`` with torch's layout ``(..., L, E)`` adapted to its
    ``(B, T, N, H)`` (the batch dimensions flattened into ``B``, one head), a boolean
    mask as ``mask=``, a float one as ``bias=``.
``softmax_vjp``, ``log_softmax_vjp``
    numpy: ``p ⊙ (g − ⟨g, p⟩)`` and ``g − p·Σg`` (16-bit in float32); torch: autograd
    through ``torch.softmax``/``torch.log_softmax``; jax: ``jax.vjp`` of
    ``jax.nn.softmax``/``log_softmax``.  No code from the user.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from softmax_dispersion.testing.targets import TargetError

__all__ = [
    "jax_attention_target",
    "jax_vjp_target",
    "numpy_attention",
    "numpy_attention_target",
    "numpy_log_softmax_vjp",
    "numpy_softmax_vjp",
    "numpy_vjp_target",
    "torch_attention_target",
    "torch_sdpa_backends",
    "torch_vjp_target",
]


def _named(
    fn: Callable[..., Any], module: str, qualname: str, source: str = ""
) -> Callable[..., Any]:
    fn.__module__ = module
    fn.__qualname__ = fn.__name__ = qualname
    if source:
        fn.__oracle_source__ = source  # type: ignore[attr-defined]
    return fn


def _working(array: Any) -> Any:
    """``array`` as numpy in the format the textbook computes in (float32 for 16-bit)."""
    data = np.asarray(array)
    return data.astype(np.float32) if data.dtype.itemsize < 4 else data


def numpy_attention(
    q: Any, k: Any, v: Any, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
) -> np.ndarray[Any, Any]:
    """The textbook attention: scores, max-shifted softmax, weighted sum of the values.

    Notes
    -----
    ``softmax(q kᵀ·scale + mask) v`` with ``scale = 1/√E`` by default, a boolean mask
    True where a key takes part, a float mask added; 16-bit inputs are computed in
    float32 and the output rounded back.  A fully masked row is NaN.

    Examples
    --------
    >>> q = np.ones((1, 2), dtype=np.float32)
    >>> numpy_attention(q, q, np.array([[3.0]], dtype=np.float32)).tolist()
    [[3.0]]
    """
    dtype = np.asarray(q).dtype
    qw, kw, vw = _working(q), _working(k), _working(v)
    factor = 1 / math.sqrt(qw.shape[-1]) if scale is None else scale
    scores = (qw @ np.swapaxes(kw, -1, -2)) * qw.dtype.type(factor)
    if attn_mask is not None:
        mask = np.asarray(attn_mask)
        masked = np.where(mask, scores, -np.inf) if mask.dtype == bool else None
        scores = masked if masked is not None else scores + _working(mask)
    if is_causal:
        causal = np.tril(np.ones(scores.shape[-2:], dtype=bool))
        scores = np.where(causal, scores, -np.inf)
    with np.errstate(all="ignore"):
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        out = (e / e.sum(axis=-1, keepdims=True)) @ vw
    return np.asarray(out, dtype=dtype)


def numpy_attention_target(kind: str) -> Callable[..., Any]:
    """The textbook numpy attention (:func:`numpy_attention`)."""
    return numpy_attention


def torch_sdpa_backends() -> dict[str, Any]:
    """The CPU backends of ``scaled_dot_product_attention`` that run here, by name.

    Each is tried on a small 4-D input under ``torch.nn.attention.sdpa_kernel``; the
    math backend always runs, fused CPU paths where torch has them.
    """
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    found: dict[str, Any] = {}
    probe = torch.zeros((1, 1, 4, 8))
    for name in ("MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION"):
        backend = getattr(SDPBackend, name, None)
        if backend is None:
            continue
        try:
            with sdpa_kernel(backend):
                torch.nn.functional.scaled_dot_product_attention(probe, probe, probe)
        except RuntimeError:
            continue
        found[name.lower()] = backend
    return found


_SDPA_SOURCE = (
    "import torch\n"
    "from torch.nn.attention import SDPBackend, sdpa_kernel\n"
    "def fn(*args, **kwargs):  # the backend the report names: {names}\n"
    "    with sdpa_kernel(SDPBackend.{first}):\n"
    "        return torch.nn.functional.scaled_dot_product_attention(*args, **kwargs)"
)


def torch_attention_target(kind: str) -> Callable[..., Any]:
    """``torch.nn.functional.scaled_dot_product_attention``, one variant per CPU backend."""
    try:
        import torch
        from torch.nn.attention import sdpa_kernel
    except ImportError:
        raise TargetError("target 'torch' needs torch, which is not installed") from None
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def attention(q: Any, k: Any, v: Any, **kwargs: Any) -> Any:
        return sdpa(q, k, v, **kwargs)

    def with_backend(name: str, backend: Any) -> Callable[..., Any]:
        def variant(q: Any, k: Any, v: Any, **kwargs: Any) -> Any:
            with sdpa_kernel(backend):
                return sdpa(q, k, v, **kwargs)

        return _named(variant, "torch.nn.functional", f"scaled_dot_product_attention[{name}]")

    backends = torch_sdpa_backends()
    names = ", ".join(name.upper() for name in backends)
    source = _SDPA_SOURCE.format(names=names, first=next(iter(backends)).upper())
    fn = _named(attention, "torch.nn.functional", "scaled_dot_product_attention", source)
    fn.__oracle_variants__ = {  # type: ignore[attr-defined]
        name: with_backend(name, backend) for name, backend in backends.items()
    }
    return fn


def jax_attention_target(kind: str) -> Callable[..., Any]:
    """``jax.nn.dot_product_attention`` in torch's layout (see the module's docstring)."""
    try:
        import jax
        import jax.numpy as jnp  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise TargetError(
            "target 'jax' needs jax, which is not installed (pip install jax)"
        ) from None

    def layout(
        q: Any, k: Any, v: Any, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
    ) -> Any:
        batch = q.shape[:-2]
        length, dims = q.shape[-2:]
        keys, values = k.shape[-2], v.shape[-1]
        size = math.prod(batch)
        query = q.reshape(size, length, 1, dims)
        key = jnp.broadcast_to(k, (*batch, keys, dims)).reshape(size, keys, 1, dims)
        value = jnp.broadcast_to(v, (*batch, keys, values)).reshape(size, keys, 1, values)
        options: dict[str, Any] = {"scale": scale, "is_causal": is_causal}
        if attn_mask is not None:
            full = jnp.broadcast_to(attn_mask, (*batch, length, keys)).reshape(
                size, 1, length, keys
            )
            options["mask" if full.dtype == jnp.bool_ else "bias"] = full
        out = jax.nn.dot_product_attention(query, key, value, **options)
        return out.reshape(*batch, length, values)

    # one compilation per shape and dtype, not one per operation; 16-bit inputs run
    # eagerly: XLA on CPU refuses the jitted 16-bit dot with float32 accumulation
    # ("F16_F16_F32 is not supported by dot_general on CPU", jax 0.10)
    compiled = jax.jit(layout, static_argnames=("is_causal", "scale"))

    def attention(
        q: Any, k: Any, v: Any, attn_mask: Any = None, is_causal: bool = False, scale: Any = None
    ) -> Any:
        run = compiled if q.dtype.itemsize >= 4 else layout
        return run(q, k, v, attn_mask, is_causal=is_causal, scale=scale)

    source = (
        "import jax, jax.numpy as jnp\n"
        "from softmax_dispersion.testing.attention_targets import jax_attention_target\n"
        "fn = jax_attention_target('attention')  # jax.nn.dot_product_attention, torch's layout"
    )
    return _named(attention, "jax.nn", "dot_product_attention", source)


def numpy_softmax_vjp(x: Any, g: Any) -> np.ndarray[Any, Any]:
    """The textbook softmax VJP ``p ⊙ (g − ⟨g, p⟩)`` (16-bit computed in float32).

    Examples
    --------
    >>> numpy_softmax_vjp(np.zeros(2), np.array([1.0, 0.0])).tolist()
    [0.25, -0.25]
    """
    dtype = np.asarray(x).dtype
    xw, gw = _working(x), _working(g)
    with np.errstate(all="ignore"):
        e = np.exp(xw - xw.max(axis=-1, keepdims=True))
        p = e / e.sum(axis=-1, keepdims=True)
        out = p * (gw - np.sum(p * gw, axis=-1, keepdims=True))
    return np.asarray(out, dtype=dtype)


def numpy_log_softmax_vjp(x: Any, g: Any) -> np.ndarray[Any, Any]:
    """The textbook log-softmax VJP ``g − p·Σg`` (16-bit computed in float32).

    Examples
    --------
    >>> numpy_log_softmax_vjp(np.zeros(2), np.array([1.0, 0.0])).tolist()
    [0.5, -0.5]
    """
    dtype = np.asarray(x).dtype
    xw, gw = _working(x), _working(g)
    with np.errstate(all="ignore"):
        e = np.exp(xw - xw.max(axis=-1, keepdims=True))
        p = e / e.sum(axis=-1, keepdims=True)
        out = gw - p * np.sum(gw, axis=-1, keepdims=True)
    return np.asarray(out, dtype=dtype)


def numpy_vjp_target(kind: str) -> Callable[..., Any]:
    """The textbook numpy VJP of ``kind``."""
    return numpy_log_softmax_vjp if kind == "log_softmax_vjp" else numpy_softmax_vjp


def torch_vjp_target(kind: str) -> Callable[..., Any]:
    """Autograd through ``torch.softmax`` or ``torch.log_softmax`` (``dim=-1``)."""
    try:
        import torch
    except ImportError:
        raise TargetError("target 'torch' needs torch, which is not installed") from None
    name = "log_softmax" if kind == "log_softmax_vjp" else "softmax"
    forward = getattr(torch, name)

    def vjp(x: Any, g: Any) -> Any:
        leaf = x.detach().clone().requires_grad_(True)
        forward(leaf, dim=-1).backward(g)
        return leaf.grad

    source = (
        "import torch\n"
        "def fn(x, g):  # autograd's backward pass\n"
        "    x = x.detach().clone().requires_grad_(True)\n"
        f"    torch.{name}(x, dim=-1).backward(g)\n"
        "    return x.grad"
    )
    return _named(vjp, "torch", f"{name}(dim=-1).backward", source)


def jax_vjp_target(kind: str) -> Callable[..., Any]:
    """``jax.vjp`` of ``jax.nn.softmax`` or ``jax.nn.log_softmax`` (``axis=-1``)."""
    try:
        import jax
    except ImportError:
        raise TargetError(
            "target 'jax' needs jax, which is not installed (pip install jax)"
        ) from None
    name = "log_softmax" if kind == "log_softmax_vjp" else "softmax"
    forward = getattr(jax.nn, name)

    def vjp(x: Any, g: Any) -> Any:
        _, pullback = jax.vjp(lambda y: forward(y, axis=-1), x)
        return pullback(g)[0]

    source = (
        f"import jax\nfn = lambda x, g: jax.vjp(lambda y: jax.nn.{name}(y, axis=-1), x)[1](g)[0]"
    )
    return _named(vjp, "jax", f"vjp(nn.{name})", source)
