"""The certified reference and the array conversions of the oracle.

:func:`reference_softmax` evaluates softmax or log-softmax of a numpy array, or of a
torch or jax array, with :func:`~softmax_dispersion.numerics.certified_softmax_dense`
and returns each value correctly rounded to the output format with a float64
enclosure.  torch and jax are never imported here: an array's library is read from
``type(x).__module__`` (:mod:`~softmax_dispersion.testing.adapters`), and the library is
already loaded when such an array exists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from softmax_dispersion.numerics.rounding import FORMATS
from softmax_dispersion.testing.adapters import to_float64

__all__ = ["Reference", "masked_logits", "reference_softmax"]

F64 = npt.NDArray[np.float64]
FLOAT_DTYPES = tuple(FORMATS)
"""The output formats: float16, bfloat16, float32, float64."""


def masked_logits(x: F64, mask: object) -> F64:
    """The logits with every entry where ``mask`` is False set to ``−inf``.

    The masked softmax ignores what lies under the mask (NaN and ``±inf`` included):
    it is the softmax of these logits.

    Examples
    --------
    >>> import numpy as np
    >>> masked_logits(np.array([1.0, np.nan]), [True, False]).tolist()
    [1.0, -inf]
    """
    if mask is None:
        return x
    visible, _ = to_float64(mask)
    if visible.shape != x.shape:
        raise ValueError(f"mask has shape {visible.shape}, the logits {x.shape}")
    return np.where(visible != 0, x, -np.inf)


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
    mask: object = None,
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
    mask
        Optional boolean array shaped like ``x``: the masked softmax, over the entries
        where it is True (those where it is False get 0, or ``−inf`` for log-softmax,
        whatever value ``x`` holds there).

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
    >>> reference_softmax(np.array([0.0, 9.0, 0.0]), mask=[True, False, True]).values.tolist()
    [0.5, 0.0, 0.5]
    """
    values, name = to_float64(x)
    values = masked_logits(values, mask)
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
