"""Everything the oracle knows about each array library, in one place.

An :class:`Adapter` builds the library's arrays from float64 rows, reads any array back
as exact float64 values, copies inputs, opens the library's *session* for a check
(jax: 64-bit types on, the caller's setting restored afterwards) and recognises the
errors of a callable fed the wrong kind of array.  :data:`ADAPTERS` is the registry; a
new library is one new class here.

torch and jax are never imported by this module until an adapter for them is asked
for, or an array of theirs is read (and then the library is already loaded: such an
array exists).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "ADAPTERS",
    "LIBRARIES",
    "LIBRARY_DTYPES",
    "Adapter",
    "adapter",
    "library_of",
    "to_float64",
    "wrong_library_hint",
]

F64 = npt.NDArray[np.float64]
Bool = npt.NDArray[np.bool_]

LIBRARY_DTYPES: dict[str, tuple[str, ...]] = {
    "jax": ("float16", "bfloat16", "float32", "float64"),
    "numpy": ("float16", "float32", "float64"),
    "torch": ("float16", "bfloat16", "float32", "float64"),
}
"""The float dtypes each library is checked in by default (numpy has no bfloat16)."""


def library_of(x: object) -> str:
    """``"torch"``, ``"jax"`` or ``"numpy"``: the library an array belongs to.

    Examples
    --------
    >>> import numpy as np
    >>> library_of(np.zeros(2)), library_of([1.0])
    ('numpy', 'numpy')
    """
    root = type(x).__module__.split(".")[0]
    if root == "torch" and "torch" in sys.modules:
        return "torch"
    if root in ("jax", "jaxlib") and "jax" in sys.modules:
        return "jax"
    return "numpy"


def to_float64(x: object) -> tuple[F64, str]:
    """The exact float64 values of an array of any library, and its dtype's name.

    torch tensors go through ``.detach().cpu()``; bfloat16 (torch, or jax's ml_dtypes)
    is widened to float32 exactly first.  Integer and boolean arrays report their own
    dtype name.

    Examples
    --------
    >>> import numpy as np
    >>> values, name = to_float64(np.array([1.5, 2.0], dtype=np.float16))
    >>> values.dtype.name, name
    ('float64', 'float16')
    """
    if library_of(x) == "torch":
        tensor: Any = x
        tensor = tensor.detach().cpu()
        name = str(tensor.dtype).removeprefix("torch.")
        if name == "bfloat16":
            tensor = tensor.float()
        array = tensor.numpy()
    else:
        array = np.asarray(x)
        name = array.dtype.name
        if name == "bfloat16":
            array = array.astype(np.float32)
    if name == "half":
        name = "float16"
    with np.errstate(all="ignore"):
        # A copy, never a view: the battery compares an input before and after the call.
        return np.array(array, dtype=np.float64, copy=True), name


@dataclass(frozen=True)
class Adapter:
    """One library's arrays, as the battery needs them.

    Attributes
    ----------
    name : str
        ``"numpy"``, ``"torch"`` or ``"jax"``.
    dtypes : tuple of str
        The float dtypes checked by default.
    compiles_per_shape : bool
        Whether every new input shape costs a compilation (jax): the battery then pads
        rows to a few lengths with masked entries.
    """

    name: str
    dtypes: tuple[str, ...]
    compiles_per_shape: bool = False

    def session(self) -> contextlib.AbstractContextManager[None]:
        """What the whole check runs inside (nothing, but for jax)."""
        return contextlib.nullcontext()

    def array(self, rows: F64, dtype: str) -> Any:
        """The library's array of ``rows`` rounded to ``dtype`` (a fresh copy)."""
        with np.errstate(all="ignore"):
            return np.array(rows, dtype=dtype, copy=True)

    def mask(self, mask: Bool) -> Any:
        """The library's boolean array of ``mask``."""
        return np.array(mask, dtype=bool, copy=True)

    def transposed(self, rows: F64, dtype: str) -> Any:
        """:meth:`array` of ``rows`` as a view whose last two axes are swapped in memory.

        Its values are ``rows``; its strides are not those of a contiguous array (a
        kernel that reads the memory as if it were contiguous reads other values).
        """
        with np.errstate(all="ignore"):
            stored = np.array(np.swapaxes(rows, -1, -2), dtype=dtype, order="C", copy=True)
        return np.swapaxes(stored, -1, -2)

    def values(self, array: Any) -> F64:
        """The exact float64 values of one of this library's arrays."""
        return to_float64(array)[0]

    def source(self, dtype: str, name: str = "x") -> str:
        """Python code turning a numpy array ``name`` (float64 values) into the input."""
        return f"{name} = {name}.astype({dtype!r})"

    def mask_source(self, name: str = "mask") -> str:
        """Python code turning a numpy boolean array ``name`` into the library's."""
        return ""


class _Torch(Adapter):
    def __init__(self) -> None:
        super().__init__("torch", LIBRARY_DTYPES["torch"])

    def array(self, rows: F64, dtype: str) -> Any:
        import torch

        # A fresh copy: ``from_numpy`` shares memory, and ``.to`` of the same dtype too.
        return torch.from_numpy(np.array(rows, dtype=np.float64, copy=True)).to(
            getattr(torch, dtype)
        )

    def mask(self, mask: Bool) -> Any:
        import torch

        return torch.from_numpy(np.array(mask, dtype=bool, copy=True))

    def transposed(self, rows: F64, dtype: str) -> Any:
        stored = np.ascontiguousarray(np.swapaxes(rows, -1, -2))
        return self.array(stored, dtype).transpose(-1, -2)

    def source(self, dtype: str, name: str = "x") -> str:
        return f"import torch; {name} = torch.from_numpy({name}).to(torch.{dtype})"

    def mask_source(self, name: str = "mask") -> str:
        return f"{name} = torch.from_numpy({name})"


class _Jax(Adapter):
    def __init__(self) -> None:
        # XLA compiles every new shape (a large part of a second each on a small CPU).
        super().__init__("jax", LIBRARY_DTYPES["jax"], True)

    @contextlib.contextmanager
    def _x64(self) -> Iterator[None]:
        import jax

        # Without 64-bit types jax turns float64 arrays silently into float32 ones:
        # the check turns them on and restores the caller's setting.
        config: Any = jax.config
        before = bool(config.jax_enable_x64)
        config.update("jax_enable_x64", True)
        try:
            yield
        finally:
            config.update("jax_enable_x64", before)

    def session(self) -> contextlib.AbstractContextManager[None]:
        return self._x64()

    def array(self, rows: F64, dtype: str) -> Any:
        import jax.numpy as jnp  # type: ignore[import-not-found, unused-ignore]

        return jnp.asarray(np.ascontiguousarray(rows), dtype=getattr(jnp, dtype))

    def mask(self, mask: Bool) -> Any:
        import jax.numpy as jnp  # type: ignore[import-not-found, unused-ignore]

        return jnp.asarray(np.ascontiguousarray(mask, dtype=bool))

    def transposed(self, rows: F64, dtype: str) -> Any:
        return self.array(rows, dtype)  # jax arrays have no strides: nothing to vary

    def source(self, dtype: str, name: str = "x") -> str:
        return (
            "import jax; jax.config.update('jax_enable_x64', True); import jax.numpy as jnp; "
            f"{name} = jnp.asarray({name}, dtype=jnp.{dtype})"
        )

    def mask_source(self, name: str = "mask") -> str:
        return f"import jax.numpy as jnp; {name} = jnp.asarray({name})"


def _numpy() -> Adapter:
    return Adapter("numpy", LIBRARY_DTYPES["numpy"])


def _need(module: str, library: str) -> None:
    try:
        __import__(module)
    except ImportError:
        raise ValueError(
            f"library {library!r} needs {library}, which is not installed (pip install {library})"
        ) from None


ADAPTERS: dict[str, Callable[[], Adapter]] = {"jax": _Jax, "numpy": _numpy, "torch": _Torch}
"""The adapters by library name (each built on request, importing its library)."""
LIBRARIES = tuple(ADAPTERS)
"""The array libraries the battery can feed."""


def adapter(library: str) -> Adapter:
    """The adapter of ``library``, with the library imported.

    Raises
    ------
    ValueError
        For an unknown library, or one that is not installed.

    Examples
    --------
    >>> adapter("numpy").dtypes
    ('float16', 'float32', 'float64')
    """
    if library not in ADAPTERS:
        raise ValueError(f"unknown library {library!r}; known: {', '.join(LIBRARIES)}")
    if library != "numpy":
        _need("jax.numpy" if library == "jax" else library, library)
    return ADAPTERS[library]()


_TORCH_WORDS = (
    "must be Tensor",
    "Expected a Tensor",
    "not numpy.ndarray",
    "'numpy.ndarray' object has no attribute 'dim'",
)


def wrong_library_hint(library: str, error: BaseException | None, output: object = None) -> str:
    """What to change when a callable and the arrays it was fed do not fit, or ``""``.

    A torch function fed numpy arrays raises a ``TypeError`` about tensors; a jax
    function fed numpy arrays returns jax arrays (and float32 for float64 input, unless
    64-bit types are on).

    Examples
    --------
    >>> error = TypeError("softmax(): argument 'input' must be Tensor, not numpy.ndarray")
    >>> wrong_library_hint("numpy", error)
    "the function takes torch tensors: add --library torch (library='torch')"
    >>> wrong_library_hint("numpy", ValueError("other"))
    ''
    """
    if library == "numpy" and error is not None:
        text = f"{error}"
        if any(word in text for word in _TORCH_WORDS) or (
            "Tensor" in text and isinstance(error, (TypeError, AttributeError))
        ):
            return "the function takes torch tensors: add --library torch (library='torch')"
    if library == "numpy" and output is not None and library_of(output) != "numpy":
        found = library_of(output)
        return f"the function returns {found} arrays: add --library {found} (library={found!r})"
    return ""
