"""The targets ``softmax-dispersion check`` and the main job can name by a word or a path.

A target is ``module:function`` (importable from the current folder or
``PYTHONPATH``) or a built-in name: ``numpy`` (the textbook max-shifted softmax),
``scipy`` (:func:`scipy.special.softmax`), ``torch`` (:func:`torch.softmax`) or ``jax``
(:func:`jax.nn.softmax`); ``--kind log_softmax`` picks each built-in's log variant and
``--kind masked_softmax`` its masked one (numpy: ``−inf`` where the mask is False; torch:
``masked_fill(~mask, -inf)``; jax: ``where=mask``).  Which target provides which kind is
the kind's record (:attr:`~softmax_dispersion.testing.kinds.Kind.targets`).  Every
built-in carries the code that rebuilds it (``__oracle_source__``), so the reports'
reproducers run as printed.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from softmax_dispersion.testing.adapters import LIBRARIES as _LIBRARIES
from softmax_dispersion.testing.kinds import (
    KIND_NAMES as _KIND_NAMES,
)
from softmax_dispersion.testing.kinds import (
    KINDS,
    TARGET_LIBRARIES,
    builtin_targets,
)

__all__ = [
    "BUILTIN_KINDS",
    "BUILTIN_TARGETS",
    "KIND_NAMES",
    "LIBRARIES",
    "Target",
    "TargetError",
    "jax_target",
    "numpy_log_softmax",
    "numpy_masked_softmax",
    "numpy_softmax",
    "numpy_target",
    "resolve_target",
    "scipy_target",
    "torch_target",
]

BUILTIN_TARGETS = builtin_targets()
"""The targets named by a word instead of ``module:function`` (from the kinds' records)."""
LIBRARIES = _LIBRARIES
"""The array libraries the battery can feed (one adapter each, in ``adapters``)."""
KIND_NAMES = _KIND_NAMES
"""The kinds :func:`~softmax_dispersion.testing.check_softmax` knows."""
BUILTIN_KINDS = tuple(name for name, kind in KINDS.items() if kind.targets)
"""The kinds some built-in target provides (each kind's record says which)."""


class TargetError(ValueError):
    """A target or library that cannot be used; the message names it and what would work."""


@dataclass(frozen=True)
class Target:
    """A resolved target: the callable, its display name and the library it takes."""

    fn: Callable[..., Any]
    name: str
    library: str


def numpy_softmax(x: Any, axis: int = -1) -> np.ndarray[Any, Any]:
    """The textbook softmax: shift by the maximum, exponentiate, normalise.

    Notes
    -----
    ``softmax(x)_i = exp(x_i − max x) / Σ_j exp(x_j − max x)``, computed in the input's
    dtype.
    """
    array = np.asarray(x)
    shifted = array - np.max(array, axis=axis, keepdims=True)
    exps = np.exp(shifted)
    result: np.ndarray[Any, Any] = exps / np.sum(exps, axis=axis, keepdims=True)
    return result


def numpy_log_softmax(x: Any, axis: int = -1) -> np.ndarray[Any, Any]:
    """The textbook log-softmax: ``x − max x − log Σ exp(x − max x)``."""
    array = np.asarray(x)
    shifted = array - np.max(array, axis=axis, keepdims=True)
    result: np.ndarray[Any, Any] = shifted - np.log(
        np.sum(np.exp(shifted), axis=axis, keepdims=True)
    )
    return result


def numpy_masked_softmax(x: Any, mask: Any, axis: int = -1) -> np.ndarray[Any, Any]:
    """The textbook softmax over the entries where ``mask`` is True (``−inf`` elsewhere).

    Notes
    -----
    ``p_i = [m_i] exp(x_i − max_{m_j} x_j) / Σ_{m_j} exp(x_j − max_{m_j} x_j)``; a row
    with no True entry is NaN.

    Examples
    --------
    >>> numpy_masked_softmax(np.array([0.0, 5.0, 0.0]), np.array([True, False, True])).tolist()
    [0.5, 0.0, 0.5]
    """
    array = np.where(np.asarray(mask, dtype=bool), np.asarray(x), -np.inf).astype(
        np.asarray(x).dtype
    )
    return numpy_softmax(array, axis=axis)


def _named(
    fn: Callable[..., Any], module: str, qualname: str, source: str = ""
) -> Callable[..., Any]:
    """Give a wrapper the name the reports show and the code that rebuilds it."""
    fn.__module__ = module
    fn.__qualname__ = fn.__name__ = qualname
    if source:
        fn.__oracle_source__ = source  # type: ignore[attr-defined]
    return fn


def numpy_target(kind: str) -> Callable[..., Any]:
    """The textbook numpy implementation of ``kind``."""
    functions: dict[str, Callable[..., Any]] = {
        "softmax": numpy_softmax,
        "log_softmax": numpy_log_softmax,
        "masked_softmax": numpy_masked_softmax,
    }
    return functions[kind]


def scipy_target(kind: str) -> Callable[..., Any]:
    """:func:`scipy.special.softmax` or ``log_softmax`` over the last axis."""
    try:
        import scipy.special
    except ImportError:
        raise TargetError("target 'scipy' needs scipy, which is not installed") from None
    functions = {"softmax": scipy.special.softmax, "log_softmax": scipy.special.log_softmax}
    function = functions[kind]

    def scipy_softmax(x: Any) -> Any:
        return function(x, axis=-1)

    source = f"import scipy.special; fn = lambda x: scipy.special.{function.__name__}(x, axis=-1)"
    return _named(scipy_softmax, "scipy.special", f"{function.__name__}(axis=-1)", source)


def _torch_masked(torch: Any) -> Callable[..., Any]:
    def torch_masked(x: Any, mask: Any) -> Any:
        return torch.softmax(x.masked_fill(~mask, float("-inf")), dim=-1)

    source = "fn = lambda x, mask: torch.softmax(x.masked_fill(~mask, float('-inf')), dim=-1)"
    return _named(torch_masked, "torch", "softmax(masked_fill(~mask, -inf))", source)


def torch_target(kind: str) -> Callable[..., Any]:
    """:func:`torch.softmax`, ``torch.log_softmax`` or the masked softmax over ``dim=-1``."""
    try:
        import torch
    except ImportError:
        raise TargetError("target 'torch' needs torch, which is not installed") from None
    functions = {"softmax": torch.softmax, "log_softmax": torch.log_softmax}
    if kind not in functions:
        return _torch_masked(torch)
    function = functions[kind]

    def torch_softmax(x: Any) -> Any:
        return function(x, dim=-1)

    source = f"fn = lambda x: torch.{function.__name__}(x, dim=-1)"
    return _named(torch_softmax, "torch", f"{function.__name__}(dim=-1)", source)


def _jax_masked(jax: Any) -> Callable[..., Any]:
    def jax_masked(x: Any, mask: Any) -> Any:
        return jax.nn.softmax(x, axis=-1, where=mask)

    source = "fn = lambda x, mask: jax.nn.softmax(x, axis=-1, where=mask)"
    return _named(jax_masked, "jax.nn", "softmax(axis=-1, where=mask)", source)


def jax_target(kind: str) -> Callable[..., Any]:
    """:func:`jax.nn.softmax`, ``log_softmax`` or the masked softmax (``where=``)."""
    try:
        import jax.nn
    except ImportError:
        raise TargetError(
            "target 'jax' needs jax, which is not installed (pip install jax)"
        ) from None
    functions = {"softmax": jax.nn.softmax, "log_softmax": jax.nn.log_softmax}
    if kind not in functions:
        return _jax_masked(jax)
    function = functions[kind]

    def jax_softmax(x: Any) -> Any:
        return function(x, axis=-1)

    source = f"fn = lambda x: jax.nn.{function.__name__}(x, axis=-1)"
    return _named(jax_softmax, "jax.nn", f"{function.__name__}(axis=-1)", source)


def builtin(name: str, kind: str = "softmax") -> Target:
    """A built-in target (``numpy``, ``scipy``, ``torch``, ``jax``) for ``kind``.

    The kind's record (:attr:`~softmax_dispersion.testing.kinds.Kind.targets`) names the
    factory of each target word it provides.

    Raises
    ------
    TargetError
        For an unknown name or kind, a kind the target does not provide, or a library
        that is not installed.
    """
    if name not in BUILTIN_TARGETS:
        raise TargetError(f"unknown built-in target {name!r}; known: {', '.join(BUILTIN_TARGETS)}")
    if kind not in KINDS:
        raise TargetError(f"unknown kind {kind!r}; known: {', '.join(KINDS)}")
    spec = KINDS[kind].targets.get(name)
    if spec is None:
        provided = [k for k, record in KINDS.items() if name in record.targets]
        raise TargetError(
            f"built-in target {name!r} provides --kind {', '.join(provided)}, not {kind!r}; "
            "pass your own module:function"
        )
    module, _, attribute = spec.partition(":")
    factory = getattr(importlib.import_module(module), attribute)
    return Target(factory(kind), f"{name} {kind}", TARGET_LIBRARIES[name])


def _import_callable(spec: str) -> Callable[..., Any]:
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise TargetError(
            f"TARGET must be module:function or one of {', '.join(BUILTIN_TARGETS)}, got {spec!r}"
        )
    cwd = os.getcwd()
    added = cwd not in sys.path
    if added:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise TargetError(f"TARGET {spec!r}: cannot import {module_name!r} ({error})") from None
    except Exception as error:  # the module itself raised while importing
        raise TargetError(
            f"TARGET {spec!r}: importing {module_name!r} raised {type(error).__name__}: {error}"
        ) from None
    finally:
        if added:
            sys.path.remove(cwd)
    found: Any = module
    for part in attribute.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise TargetError(
                f"TARGET {spec!r}: module {module_name!r} has no attribute {attribute!r}"
            ) from None
    if not callable(found):
        raise TargetError(f"TARGET {spec!r} is not callable ({type(found).__name__})")
    return found  # type: ignore[no-any-return]


def resolve_target(spec: str, kind: str = "softmax", library: str | None = None) -> Target:
    """The callable named by ``spec`` and the library whose arrays it takes.

    Parameters
    ----------
    spec
        ``module:function`` or a built-in name.
    kind
        The kind checked; picks a built-in's log variant for ``"log_softmax"``.
    library
        The array library (``None``: the built-in's own, else numpy).

    Raises
    ------
    TargetError
        For a target that cannot be imported or is not callable, or a library that does
        not match a built-in.
    """
    if library is not None and library not in LIBRARIES:
        raise TargetError(f"--library must be one of {', '.join(LIBRARIES)}, got {library!r}")
    if spec in BUILTIN_TARGETS:
        target = builtin(spec, kind)
        if library is not None and library != target.library:
            raise TargetError(
                f"--library {library} does not fit target {spec!r}, which takes "
                f"{target.library} arrays"
            )
        return target
    return Target(_import_callable(spec), spec, library or "numpy")
