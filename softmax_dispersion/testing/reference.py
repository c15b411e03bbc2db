"""The certified reference and the array conversions of the oracle.

:func:`reference_softmax` evaluates softmax or log-softmax of a numpy array, or of a
torch or jax array, with :func:`~softmax_dispersion.numerics.certified_softmax_dense`
and returns each value correctly rounded to the output format with a float64
enclosure.  torch and jax are never imported here: an array's library is read from
``type(x).__module__``, and the library is already loaded when such an array exists.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from softmax_dispersion.numerics.rounding import FORMATS

__all__ = ["Reference", "as_float64", "library_of", "reference_softmax"]

F64 = npt.NDArray[np.float64]
FLOAT_DTYPES = tuple(FORMATS)
"""The output formats: float16, bfloat16, float32, float64."""


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


def as_float64(x: object) -> tuple[F64, str]:
    """The exact float64 values of an array and its dtype's name.

    torch tensors go through ``.detach().cpu()``; bfloat16 (torch, or jax's ml_dtypes)
    is widened to float32 exactly first.  Integer and boolean arrays report their own
    dtype name.

    Examples
    --------
    >>> import numpy as np
    >>> values, name = as_float64(np.array([1.5, 2.0], dtype=np.float16))
    >>> values.dtype.name, name
    ('float64', 'float16')
    """
    library = library_of(x)
    if library == "torch":
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
        return np.asarray(array, dtype=np.float64), name


@dataclass(frozen=True)
class Reference:
    """A certified softmax reference.

    Attributes
    ----------
    values : numpy.ndarray
        Float64 holding the correctly rounded values in :attr:`dtype`, shaped like ``x``.
    lower, upper : numpy.ndarray
        Float64 outward enclosures of the exact values (NaN where a row is undefined).
    certified : numpy.ndarray
        Boolean: the value is proved correctly rounded.
    precision : int
        The working precision in bits (106 for the double-double path, more where a row
        needed the exact path).
    dtype : str
        The output format.
    status : tuple of str
        Per row (along ``axis``, in C order of the other axes): ``"ok"``, ``"nan"`` or
        ``"undefined"`` (only ``−inf``).
    """

    values: F64
    lower: F64
    upper: F64
    certified: npt.NDArray[np.bool_]
    precision: int
    dtype: str
    status: tuple[str, ...] = ()


def reference_softmax(
    x: object,
    axis: int = -1,
    *,
    theta: float = 1.0,
    log: bool = False,
    dtype: str | None = None,
) -> Reference:
    """The certified, correctly rounded softmax (or log-softmax) of ``x`` along ``axis``.

    Parameters
    ----------
    x
        A numpy array (or array-like), a torch tensor or a jax array, any shape with at
        least one dimension.
    axis
        The axis normalised over.
    theta
        The temperature ``θ > 0`` (read exactly).
    log
        Log-softmax instead of softmax.
    dtype
        The output format: ``"float16"``, ``"bfloat16"``, ``"float32"`` or
        ``"float64"``; the input's own float dtype by default (float64 for others).

    Returns
    -------
    Reference
        Values, enclosures, the certified mask, the precision used and the format.

    Raises
    ------
    ValueError
        For a 0-d or empty array, an unknown ``dtype`` or ``θ <= 0``.

    Notes
    -----
    ``p_i = exp((x_i − max x)/θ) / Σ_j exp((x_j − max x)/θ)`` and
    ``log p_i = (x_i − max x)/θ − log Σ_j exp((x_j − max x)/θ)``, evaluated in
    double-double with a proved bound and rounded once to ``dtype`` (certified when the
    whole enclosure rounds alike, else the row is redone exactly).  Rows with ``+inf``
    get the limit (one-hot shares), rows with NaN are NaN, rows of only ``−inf`` NaN.

    Examples
    --------
    >>> import numpy as np
    >>> ref = reference_softmax(np.array([1.0, 2.0, 3.0], dtype=np.float32))
    >>> ref.values.tolist(), ref.dtype, bool(ref.certified.all())
    ([0.09003057330846786, 0.2447284758090973, 0.6652409434318542], 'float32', True)
    >>> reference_softmax(np.zeros((2, 3)), axis=0).values[:, 0].tolist()
    [0.5, 0.5]
    """
    values, name = as_float64(x)
    if dtype is None:
        dtype = name if name in FORMATS else "float64"
    if dtype not in FORMATS:
        raise ValueError(f"unknown output dtype {dtype!r}; known: {', '.join(FORMATS)}")
    if values.ndim == 0:
        raise ValueError("softmax needs an array with at least one dimension")
    if values.size == 0:
        raise ValueError(f"softmax of an empty array (shape {values.shape}) is undefined")
    from softmax_dispersion.numerics.dense import certified_softmax_dense

    moved = np.moveaxis(values, axis, -1)
    grid = moved.reshape(-1, moved.shape[-1])
    result = certified_softmax_dense(grid, theta=theta, log=log, format=dtype)

    def back(array: Any) -> Any:
        return np.moveaxis(np.asarray(array).reshape(moved.shape), -1, axis)

    return Reference(
        values=back(result.values),
        lower=back(result.lower),
        upper=back(result.upper),
        certified=back(result.certified),
        precision=int(result.precision),
        dtype=dtype,
        status=tuple(result.status),
    )
