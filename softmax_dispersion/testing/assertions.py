"""``assert_softmax_close``: compare an implementation's output with the certified reference."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from softmax_dispersion.numerics.rounding import FORMATS
from softmax_dispersion.testing.adapters import to_float64
from softmax_dispersion.testing.battery_report import INLINE_LIMIT, short_row
from softmax_dispersion.testing.reference import masked_logits, reference_softmax
from softmax_dispersion.testing.tolerance import (
    Tolerance,
    allowed_error,
    flushing_is_named,
    ulp,
)

__all__ = ["SUBNORMALS", "Comparison", "assert_softmax_close", "compare"]

SUBNORMALS = ("flushed", "kept")
"""What ``subnormals=`` accepts: may subnormal outputs be flushed to zero (32/64-bit)?"""

F64 = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Comparison:
    """Element-wise errors of an output against a reference (rows along the last axis).

    Attributes
    ----------
    error : numpy.ndarray
        ``|actual − reference|`` (0 where both are the same infinity or the row is
        skipped; ``inf`` where ``actual`` is NaN or infinite and the reference is not).
    ulps : numpy.ndarray
        ``error`` in ULPs of the output format at the reference value.
    allowed_ulps : numpy.ndarray
        The allowance in the same ULPs.
    bad : numpy.ndarray
        Boolean: ``error > allowed``.
    """

    error: F64
    ulps: F64
    allowed_ulps: F64
    bad: npt.NDArray[np.bool_]

    @property
    def worst(self) -> tuple[int, int]:
        """The (row, column) of the largest error relative to its allowance."""
        with np.errstate(all="ignore"):
            ratio = np.where(self.bad, self.ulps / np.maximum(self.allowed_ulps, 1e-300), 0.0)
            if not self.bad.any():
                ratio = np.where(np.isfinite(self.ulps), self.ulps, 0.0)
        flat = int(np.nanargmax(np.where(np.isnan(ratio), np.inf, ratio)))
        row, col = np.unravel_index(flat, self.error.shape)
        return int(row), int(col)

    @property
    def max_ulp(self) -> float:
        """The largest error in ULPs (``0.0`` for an empty comparison)."""
        return float(np.max(self.ulps)) if self.ulps.size else 0.0


def compare(
    actual: F64,
    reference: F64,
    allowed: F64,
    dtype: str,
    skip_rows: npt.NDArray[np.bool_] | None = None,
    *,
    log: bool = False,
    flush: bool = False,
    unit_at: F64 | None = None,
) -> Comparison:
    """Compare 2-D ``actual`` with ``reference`` element by element within ``allowed``.

    Errors are counted in ULPs of the output format at the reference value (or at
    ``unit_at``, the certified value, when ``reference`` is another output that may be
    NaN); for log-softmax, whose tolerance is absolute, at ``max(|reference|, 1)``, so
    that a value such as ``−7e−16`` returned as ``0`` reads as 3 ULPs rather than
    ``5e15``.  With ``flush``, a zero where the reference is below the smallest normal is
    not bad.
    """
    with np.errstate(all="ignore"):
        same = (actual == reference) | (np.isnan(actual) & np.isnan(reference))
        error = np.where(same, 0.0, np.abs(actual - reference))
        error = np.where(np.isnan(error), np.inf, error)
        if skip_rows is not None:
            error = np.where(skip_rows[:, None], 0.0, error)
        at = reference if unit_at is None else unit_at
        finite = np.where(np.isfinite(at), at, 0.0)
        unit = ulp(np.maximum(np.abs(finite), 1.0) if log else finite, dtype)
        ulps = error / unit
        allowed_ulps = allowed / unit
        bad = (error > allowed) | (~np.isfinite(actual) & np.isfinite(reference))
        if flush:
            tiny = 2.0 ** FORMATS[dtype].emin
            bad &= ~((actual == 0) & (np.abs(reference) < tiny))
        if skip_rows is not None:
            bad &= ~skip_rows[:, None]
    return Comparison(error, ulps, allowed_ulps, bad)


def assert_softmax_close(
    actual: object,
    x: object,
    *,
    axis: int = -1,
    theta: float = 1.0,
    log: bool = False,
    tolerance: object = None,
    mask: object = None,
    subnormals: str = "flushed",
) -> None:
    """Assert that ``actual`` is softmax (or log-softmax) of ``x`` within the tolerance.

    Parameters
    ----------
    actual
        The implementation's output: numpy, torch or jax array shaped like ``x``.  Its
        dtype is the output format the reference is rounded to.
    x
        The logits the output was computed from.
    axis
        The axis normalised over.
    theta
        The temperature ``θ > 0``.
    log
        Compare with log-softmax.
    tolerance
        ``None`` (T12: any summation order and standard formulation), a number of
        ULPs, ``"recursive"``, ``"strict"`` or a
        :class:`~softmax_dispersion.testing.Tolerance`.
    mask
        A boolean array shaped like ``x`` for a masked softmax: the output must be the
        softmax over the entries where it is True, and exactly 0 (log: ``−inf``) where
        it is False.
    subnormals
        ``"flushed"`` (default): in float32 and float64 a zero where the reference is a
        subnormal is accepted (flush-to-zero hardware modes, XLA on CPU); ``"kept"``
        requires gradual underflow.  In float16 (smallest normal 6.1e-5) flushing always
        fails; bfloat16 has float32's range and is treated like it.

    Raises
    ------
    AssertionError
        With the number of mismatched elements, the largest absolute, ULP and relative
        errors, the worst element with its input row, and a one-line reproducer.

    Notes
    -----
    The allowance per element is :func:`~softmax_dispersion.testing.tolerance.allowed_error`
    (T12's bounds, the final rounding, a subnormal floor; finite everywhere).  Rows whose
    limit is a policy choice rather than a number (a NaN or ``+inf`` logit, only
    ``−inf``, a fully masked row) are not compared; masked entries (``−inf`` in a row with
    finite logits, or ``mask`` False) must come out 0 (or ``−inf`` for log-softmax).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1.0, 2.0, 3.0]], dtype=np.float32)
    >>> e = np.exp(x - x.max(axis=-1, keepdims=True))
    >>> assert_softmax_close(e / e.sum(axis=-1, keepdims=True), x)
    >>> assert_softmax_close(np.full((1, 3), 1 / 3, dtype=np.float32), x)
    Traceback (most recent call last):
    ...
    AssertionError: Not equal to the certified softmax reference within tolerance (T12, ...
    """
    __tracebackhide__ = True
    tol = Tolerance.coerce(tolerance)
    if subnormals not in SUBNORMALS:
        raise ValueError(f"subnormals must be one of {', '.join(SUBNORMALS)}, got {subnormals!r}")
    got, got_name = to_float64(actual)
    given, x_name = to_float64(x)
    if got.shape != given.shape:
        raise AssertionError(
            f"shape mismatch: actual has shape {got.shape}, the logits {given.shape}"
        )
    logits = masked_logits(given, mask)
    dtype = got_name if got_name in FORMATS else (x_name if x_name in FORMATS else "float64")
    ref = reference_softmax(logits, axis, theta=theta, log=log, dtype=dtype)
    rows = np.moveaxis(logits, axis, -1)
    shape = rows.shape
    rows = rows.reshape(-1, shape[-1])
    out = np.moveaxis(got, axis, -1).reshape(rows.shape)
    values = np.moveaxis(ref.values, axis, -1).reshape(rows.shape)
    if dtype == "float64" and not log:
        probs = values
    else:
        probs = np.moveaxis(
            reference_softmax(logits, axis, theta=theta, dtype="float64").values, axis, -1
        ).reshape(rows.shape)
    beta = 1.0 / float(theta)
    allowed = allowed_error(
        rows,
        dtype=dtype,
        log=log,
        beta=beta,
        beta_error=0.0 if beta == 1.0 else 2 * FORMATS[dtype].unit_roundoff,
        values=values,
        probs=probs,
        tolerance=tol,
    )
    skip = np.array([status != "ok" for status in ref.status]) | np.any(np.isposinf(rows), axis=-1)
    flush = subnormals == "flushed" and flushing_is_named(dtype) and not log
    result = compare(out, values, allowed, dtype, skip, log=log, flush=flush)
    if not result.bad.any():
        return
    bad = int(result.bad.sum())
    total = result.bad.size
    r, c = result.worst
    with np.errstate(all="ignore"):
        rel = np.where(
            values != 0, result.error / np.abs(values), np.where(result.error > 0, np.inf, 0)
        )
    index = np.unravel_index(r * shape[-1] + c, shape)
    index_text = "(" + ", ".join(str(int(i)) for i in index) + ")"
    function = "log_softmax" if log else "softmax"
    lines = [
        f"Not equal to the certified {function} reference within tolerance ({tol.label})",
        "",
        f"Mismatched elements: {bad} / {total} ({100 * bad / total:.3g}%)",
        f"Max absolute difference: {float(np.max(result.error)):.6g}",
        f"Max ULP error: {result.ulps[r, c]:.6g} (allowed {result.allowed_ulps[r, c]:.6g})"
        f" [{dtype}]",
        f"Max relative error: {float(np.max(rel)):.6g}",
        f" Worst: index {index_text}: actual {float(out[r, c])!r}, "
        f"reference {float(values[r, c])!r}, input row {short_row(rows[r])}",
        f"Reproduce: {_reproducer(rows[r], x_name, theta, log, c)}",
        f"Tolerance: {tol.label}",
    ]
    raise AssertionError("\n".join(lines))


def _reproducer(row: F64, dtype: str, theta: float, log: bool, column: int) -> str:
    """A shell command printing the reference value; long rows go to a ``.npy`` file."""
    source_dtype = dtype if dtype in ("float16", "float32", "float64") else "float64"
    if row.size > INLINE_LIMIT:
        folder = Path(tempfile.mkdtemp(prefix="softmax-oracle-"))
        path = folder / "row.npy"
        np.save(path, row.astype(source_dtype))
        load = f"x = np.load('{path}')"
    else:
        literal = "[" + ", ".join(repr(float(v)) for v in row) + "]"
        literal = literal.replace("inf", "float('inf')").replace("nan", "float('nan')")
        load = f"x = np.array({literal}, dtype='{source_dtype}')"
    code = (
        "import numpy as np; from softmax_dispersion.testing import reference_softmax; "
        f"{load}; print(reference_softmax(x, theta={theta!r}, log={log}).values[{column}])"
    )
    return f'python -c "{code}"'
