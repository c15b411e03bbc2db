"""Calling the implementation under test: one :class:`Call`, watched by a :class:`Caller`.

An engine describes each call as data (its array arguments, keywords and the output
shape it expects); the :class:`Caller` turns the arrays into the library's (float
arrays rounded to the checked dtype, boolean ones as masks), gives every call fresh
copies, and watches what the implementation does with them: an exception or an output
that is not an array of the expected shape is a :class:`SoftmaxCallError` naming the
input; a changed argument, or an output that is an argument itself (or a view of its
memory), is the ``input: modified`` behaviour; an earlier output that
changes during a later call is a reused buffer (``fresh_output``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from softmax_dispersion.testing.adapters import Adapter, to_float64, wrong_library_hint

__all__ = ["Call", "Called", "Caller", "SoftmaxCallError", "display_name", "import_source"]

F64 = npt.NDArray[np.float64]
Bool = npt.NDArray[np.bool_]


class SoftmaxCallError(ValueError):
    """The callable under test raised, or returned something that is not an output."""


def display_name(fn: Callable[..., Any]) -> str:
    """``module.qualname`` of ``fn``, as reports name it."""
    module = getattr(fn, "__module__", None) or ""
    qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    return f"{module}.{qualname}" if module else str(qualname)


def import_source(fn: Callable[..., Any]) -> str:
    """Code that defines ``fn`` for reproducers, when its name can be imported (or ``""``)."""
    given = getattr(fn, "__oracle_source__", None)
    if isinstance(given, str):
        return given
    module = getattr(fn, "__module__", None) or ""
    qualname = getattr(fn, "__qualname__", "") or ""
    parts = qualname.split(".")
    if module and module != "__main__" and all(p.isidentifier() for p in parts) and len(parts) == 1:
        return f"from {module} import {qualname} as fn"
    return ""


@dataclass(frozen=True)
class Call:
    """One call of the implementation.

    Attributes
    ----------
    where : str
        What is being called on, for messages (``"3 case(s) of length 137"``).
    arrays : tuple of (str, array)
        The positional array arguments by name, in order: float64 values (rounded to
        the checked dtype by the caller) or booleans (masks).
    keywords : mapping
        Keyword arguments: arrays among them are converted like ``arrays``, anything
        else (``is_causal=True``, ``scale=0.125``) is passed as it is.
    shape : tuple of int or None
        The output shape the call must return; ``None``: the first array's.
    transposed : tuple of str
        Arrays handed over as transposed views (their last two axes swapped in memory:
        a non-contiguous input, as ``x.mT`` gives), where the library has strides.
    """

    where: str
    arrays: tuple[tuple[str, Any], ...]
    keywords: Mapping[str, Any] = field(default_factory=dict)
    shape: tuple[int, ...] | None = None
    transposed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Called:
    """What one call gave: the exact inputs, as the implementation got them, and the output.

    Attributes
    ----------
    inputs : dict of str to numpy.ndarray
        Every array argument (positional and keyword) as exact float64 values of the
        dtype (booleans as they were).
    out : numpy.ndarray
        The output, as float64 values.
    out_dtype : str
        The output's dtype name.
    """

    inputs: dict[str, Any]
    out: F64
    out_dtype: str


def _shares(out: Any, array: Any) -> bool:
    """Whether ``out`` is ``array`` or a view of its memory (numpy and torch)."""
    if out is array:
        return True
    if isinstance(out, np.ndarray) and isinstance(array, np.ndarray):
        return bool(np.shares_memory(out, array))
    storage = getattr(out, "untyped_storage", None)
    other = getattr(array, "untyped_storage", None)
    if callable(storage) and callable(other):
        try:
            return bool(storage().data_ptr() == other().data_ptr() and out.numel() > 0)
        except Exception:  # another library's tensor-like: identity only
            return False
    return False


class Caller:
    """Calls the implementation, copying its inputs and watching them."""

    def __init__(
        self, fn: Callable[..., Any], library: Adapter, dtype: str, contract: str = ""
    ) -> None:
        self.fn, self.library, self.dtype = fn, library, dtype
        self.contract = contract  # what a wrong output shape is told, e.g. "keep the shape"
        self.modified = ""
        self.overwritten = ""
        self.calls = 0
        self.hint = ""
        # The last output of each shape, as returned and as first read: a later call
        # that changes it returned a buffer it reuses (an internal workspace).
        self._last: dict[tuple[int, ...], tuple[Any, F64, str]] = {}

    def _convert(self, values: Any, transposed: bool = False) -> Any:
        array = np.asarray(values)
        if array.dtype == bool:
            return self.library.mask(array)
        rows = np.asarray(array, dtype=np.float64)
        if transposed:
            return self.library.transposed(rows, self.dtype)
        return self.library.array(rows, self.dtype)

    def _read(self, converted: Any, original: Any) -> Any:
        if np.asarray(original).dtype == bool:
            return np.asarray(original, dtype=bool)
        return self.library.values(converted)

    def __call__(self, call: Call) -> Called:
        """Run ``call``; the exact inputs and the output as float64."""
        names = [name for name, _ in call.arrays]
        given = {
            name: self._convert(values, name in call.transposed) for name, values in call.arrays
        }
        keywords: dict[str, Any] = {}
        arrays_in_keywords: dict[str, Any] = {}
        for name, value in call.keywords.items():
            if isinstance(value, np.ndarray):
                keywords[name] = arrays_in_keywords[name] = self._convert(value)
            else:
                keywords[name] = value
        originals = dict(call.arrays) | {n: call.keywords[n] for n in arrays_in_keywords}
        converted = given | arrays_in_keywords
        exact = {name: self._read(array, originals[name]) for name, array in converted.items()}
        first = np.asarray(call.arrays[0][1])
        shape = call.shape if call.shape is not None else tuple(int(d) for d in first.shape)
        try:
            # Warnings (overflow in exp, ...) are not the battery's verdict: outputs are.
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = self.fn(*(given[name] for name in names), **keywords)
        except Exception as exc:
            hint = wrong_library_hint(self.library.name, exc)
            raise SoftmaxCallError(
                f"{display_name(self.fn)} raised {type(exc).__name__}: {exc} (input "
                f"{call.where}, shape {tuple(first.shape)}, dtype {self.dtype})"
                + (f"; {hint}" if hint else "")
            ) from exc
        alias = next((name for name, array in converted.items() if _shares(out, array)), "")
        if alias and not self.modified:
            # the caller's array is the output: writing into either changes the other
            self.modified = f"{call.where} (the output is the argument {alias} itself)"
        if not self.modified:
            for name, array in converted.items():
                if not np.array_equal(
                    self._read(array, originals[name]), exact[name], equal_nan=True
                ):
                    self.modified = call.where
                    break
        if not (hasattr(out, "shape") and hasattr(out, "dtype")):
            raise SoftmaxCallError(
                f"{display_name(self.fn)} returned {type(out).__name__}, expected an array "
                f"(input {call.where}, dtype {self.dtype})"
            )
        try:
            values, name = to_float64(out)
        except Exception as exc:
            raise SoftmaxCallError(
                f"{display_name(self.fn)} returned {type(out).__name__}, not an array (input "
                f"{call.where}, dtype {self.dtype})"
            ) from exc
        if values.shape != shape:
            hint = wrong_library_hint(self.library.name, None, out)
            raise SoftmaxCallError(
                f"{display_name(self.fn)} returned shape {values.shape} for an input of shape "
                f"{tuple(first.shape)} (input {call.where}, dtype {self.dtype}): expected "
                f"shape {shape}"
                + (f": {self.contract}" if self.contract else "")
                + (f"; {hint}" if hint else "")
            )
        self.hint = self.hint or wrong_library_hint(self.library.name, None, out)
        self.calls += 1
        previous = self._last.get(shape)
        if previous is not None and not self.overwritten:
            earlier, first_read, first_where = previous
            if not np.array_equal(to_float64(earlier)[0], first_read, equal_nan=True):
                self.overwritten = f"the output for {first_where} changed during {call.where}"
        self._last[shape] = (out, values.copy(), call.where)
        return Called(exact, values, name)
