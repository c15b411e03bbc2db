"""The oracle's default tolerance: T12's first-order error bound, element by element.

An implementation is *accurate* when every output element lies within
:func:`allowed_error` of the certified, correctly rounded reference.  The default
tolerance is derived from T12 (:mod:`softmax_dispersion.theory.rounding_error`), the
package's one error analysis of the max-shifted softmax; nothing here is a hand-tuned
``rtol``.

Notes
-----
For one row of logits ``e`` (length ``n``), effective inverse temperature ``β`` and output
format with unit roundoff ``u_out``, write ``g_j = β·(max e − e_j)`` (the gaps) and
``p_j`` for the exact coefficients.  The formats:

* ``u`` (elementwise): the unit roundoff of the input/output format.  A 16-bit
  implementation may subtract, exponentiate and divide in 16 bits (SciPy and NumPy do);
* ``u_acc`` (accumulation): float32's ``2**-24`` for 16-bit formats, else ``u``.  A sum
  of 16-bit terms held in 16 bits stalls at 2048 (PAPER.md's first bad input): it is a
  bug, not a rounding error, and the tolerance does not allow for it.

Softmax, the relative error of element ``i``:

.. math:: r_i = \\mathrm{T12}(g_i, \\bar g, u, k, \\gamma(n, u_{acc}), a)
          + (\\alpha_i - a g_i) + \\textstyle\\sum_j p_j (\\alpha_j - a g_j) + n\\,s_{min}

with ``ḡ = Σ p_j g_j`` (the mean gap), ``k = exp_ulps`` (default 2: glibc, SLEEF-u10,
SVML and numpy's own exp are within one ulp; 2 leaves room for vendor routines),
``γ`` the summation factor (:data:`~softmax_dispersion.theory.rounding_error.gamma_pairwise`
by default, ``gamma_recursive`` for ``"recursive"``), ``a = u`` the error of the shift
``e_j − max e``, and ``α_j`` the absolute error of the computed argument:

* ``α_j = a·g_j`` for plain softmax at ``β = 1`` (T12's own model);
* ``α_j = (2u + ε_β)·g_j + u·β·(|e_j| + |max e|)`` when the logits are scaled (a
  temperature, SSMax's ``s·log n``, the adaptive ``β``): this covers both orders, shift
  then scale (``2u`` relative to the gap) and scale then shift (the products carry
  ``u·β|e_j|``), with ``ε_β`` the relative error of the computed ``β``.

``n·s_min`` (``s_min`` the smallest subnormal of the elementwise format) is what
terms underflowing in ``exp`` can take from a sum ``>= 1``.  T12 is first order; the
allowed relative error is ``expm1(1.01·r_i)``, which bounds the products of the
``(1 + δ)`` factors the first-order term linearises (every factor is ``<= exp(δ + δ²)``).
The absolute allowance is then

.. math:: |\\hat p_i - p_i| \\le \\mathrm{expm1}(1.01 r_i)\\,p_i
          + \\tfrac12 \\mathrm{ulp}_{out}(\\mathrm{ref}_i) + f\\,s_{min}

with the half ulp for the final rounding to the output format (an implementation that
works in float32 and rounds to float16) and a floor of ``f = floor_ulps`` smallest
subnormals (the largest of the output and elementwise formats') for values that
underflow.  Log-softmax uses T12's absolute bound
(:data:`~softmax_dispersion.theory.rounding_error.log_softmax_absolute_error_bound`,
``log_ulps = 2``) with ``log S = −log max_j p_j``, the same extra argument terms, and
``n·s_min`` for underflowed terms of the sum, times 1.01, plus the half ulp and floor.

Examples
--------
>>> import numpy as np
>>> allowed = allowed_error(np.array([[0.0, -1.0, -2.0]]), dtype="float32")
>>> bool(np.all(allowed < 2e-6))
True
>>> Tolerance.coerce(4).model, Tolerance.coerce("recursive").model
('ulps', 'recursive')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from softmax_dispersion.numerics.rounding import FORMATS, float_format

__all__ = [
    "Tolerance",
    "accumulation_format",
    "allowed_error",
    "ulp",
]

F64 = npt.NDArray[np.float64]
MODELS = ("pairwise", "recursive", "ulps")
"""The named tolerance models."""


@dataclass(frozen=True)
class Tolerance:
    """How much error :func:`allowed_error` allows.

    Attributes
    ----------
    model : str
        ``"pairwise"`` (default: T12 with ``γ_{⌈log2 n⌉}``), ``"recursive"`` (T12 with
        ``γ_{n−1}``, any summation order) or ``"ulps"`` (a fixed number of ULPs of the
        reference, :attr:`ulps`).
    ulps : float
        For ``"ulps"``: the allowed error in ULPs of the output format at the reference
        value.  For the T12 models: extra ULPs added on top of the bound.
    exp_ulps, log_ulps : float
        The error of the ``exp``/``log`` routines in ulps of their results (default 2).
    floor_ulps : float
        The absolute floor, in smallest subnormals (default 2).

    Examples
    --------
    >>> Tolerance.coerce(None) == Tolerance()
    True
    >>> Tolerance.coerce(3.5)
    Tolerance(model='ulps', ulps=3.5, exp_ulps=2.0, log_ulps=2.0, floor_ulps=2.0)
    """

    model: str = "pairwise"
    ulps: float = 0.0
    exp_ulps: float = 2.0
    log_ulps: float = 2.0
    floor_ulps: float = 2.0

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise ValueError(f"unknown tolerance model {self.model!r}; known: {', '.join(MODELS)}")
        for name in ("ulps", "exp_ulps", "log_ulps", "floor_ulps"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and value >= 0 and np.isfinite(value)):
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")

    @classmethod
    def coerce(cls, spec: object) -> Tolerance:
        """A :class:`Tolerance` from ``None``, a number of ULPs, a model name or itself."""
        if spec is None:
            return cls()
        if isinstance(spec, Tolerance):
            return spec
        if isinstance(spec, bool):
            raise TypeError("tolerance must be a number of ULPs, a model name or a Tolerance")
        if isinstance(spec, (int, float, np.integer, np.floating)):
            return cls(model="ulps", ulps=float(spec))
        if isinstance(spec, str):
            return cls(model=spec)
        raise TypeError(
            f"tolerance must be None, a number of ULPs, 'pairwise', 'recursive' or a "
            f"Tolerance, got {type(spec).__name__}"
        )

    @property
    def label(self) -> str:
        """A short description for messages (``"T12, pairwise summation"``)."""
        if self.model == "ulps":
            return f"{self.ulps:g} ULP"
        extra = f" + {self.ulps:g} ULP" if self.ulps else ""
        return f"T12, {self.model} summation{extra}"


def accumulation_format(dtype: str) -> str:
    """The format sums are assumed to accumulate in: float32 for 16-bit formats.

    Examples
    --------
    >>> accumulation_format("bfloat16"), accumulation_format("float64")
    ('float32', 'float64')
    """
    return "float32" if float_format(dtype).precision < 24 else dtype


def ulp(values: npt.ArrayLike, dtype: str) -> F64:
    """The unit in the last place of ``dtype`` at each value (subnormal spacing near 0).

    ``ulp(v) = 2**(max(⌊log2 |v|⌋, emin) − p + 1)``; infinite or NaN values give ``inf``.

    Examples
    --------
    >>> ulp([1.0, 0.0, 3.0], "float16").tolist()
    [0.0009765625, 5.960464477539063e-08, 0.001953125]
    """
    fmt = float_format(dtype)
    v = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(v)
    _, exponent = np.frexp(np.where(finite, np.abs(v), 1.0))
    top = np.where(v == 0, fmt.emin, np.maximum(exponent.astype(np.int64) - 1, fmt.emin))
    result = np.ldexp(1.0, (top - fmt.precision + 1).astype(np.int32))
    return np.where(finite, result, np.inf)


def _rows(x: npt.ArrayLike) -> F64:
    data = np.asarray(x, dtype=np.float64)
    return data.reshape(1, -1) if data.ndim == 1 else data.reshape(-1, data.shape[-1])


def allowed_error(
    x: npt.ArrayLike,
    *,
    dtype: str,
    log: bool = False,
    beta: npt.ArrayLike = 1.0,
    beta_error: npt.ArrayLike = 0.0,
    values: npt.ArrayLike | None = None,
    probs: npt.ArrayLike | None = None,
    tolerance: object = None,
) -> F64:
    """The absolute error allowed at each output element (see the module's Notes).

    Parameters
    ----------
    x
        The logits, rows along the last axis (exact float64 values of the input).
    dtype
        The output format (``"float16"``, ``"bfloat16"``, ``"float32"``, ``"float64"``).
    log
        Log-softmax (T12's absolute bound) instead of softmax (its relative bound).
    beta
        The effective inverse temperature, a scalar or one per row.
    beta_error
        A bound on the relative error of the implementation's computed ``β`` (scalar or
        per row); any ``β ≠ 1`` or ``beta_error > 0`` switches to the scaled-argument
        model.
    values
        The reference values in ``dtype`` (for the half ulp); computed if omitted.
    probs
        The exact coefficients ``p_j`` as float64; computed if omitted.
    tolerance
        ``None`` (T12, pairwise), a number of ULPs, ``"pairwise"``, ``"recursive"`` or a
        :class:`Tolerance`.

    Returns
    -------
    numpy.ndarray
        Float64 allowances shaped like the rows of ``x`` (2-D).

    Examples
    --------
    >>> import numpy as np
    >>> a = allowed_error([[0.0, 0.0]], dtype="float16", tolerance=1)
    >>> a.tolist()  # one ulp of 0.5 in float16
    [[0.00048828125, 0.00048828125]]
    """
    tol = Tolerance.coerce(tolerance)
    rows = _rows(x)
    b = np.broadcast_to(np.asarray(beta, dtype=np.float64).reshape(-1, 1), (rows.shape[0], 1))
    if values is None or probs is None:
        from softmax_dispersion.numerics.dense import certified_softmax_dense

        if values is None:
            values = _dense_rows(certified_softmax_dense, rows, b, log, dtype)
        if probs is None:
            probs = _dense_rows(certified_softmax_dense, rows, b, False, "float64")
    ref = _rows(values)
    p = _rows(probs)
    out_fmt = float_format(dtype)
    half_ulp = 0.5 * ulp(ref, dtype)
    if tol.model == "ulps":
        return np.where(np.isfinite(ref), tol.ulps * 2 * half_ulp, 0.0)
    from softmax_dispersion.theory.rounding_error import (
        gamma_pairwise,
        gamma_recursive,
        log_softmax_absolute_error_bound,
        softmax_relative_error_bound,
    )

    n = rows.shape[-1]
    u = out_fmt.unit_roundoff
    u_acc = FORMATS[accumulation_format(dtype)].unit_roundoff
    gamma_formula = gamma_pairwise if tol.model == "pairwise" else gamma_recursive
    gamma = float(gamma_formula.numpy(float(n), u_acc))
    s_min = out_fmt.smallest_subnormal
    b_err = np.broadcast_to(
        np.asarray(beta_error, dtype=np.float64).reshape(-1, 1), (rows.shape[0], 1)
    )
    finite = np.isfinite(rows)
    with np.errstate(all="ignore"):
        top = np.max(np.where(finite, rows, -np.inf), axis=-1, keepdims=True)
        top = np.where(np.isfinite(top), top, 0.0)
        g = np.where(finite, (top - rows) * b, 0.0)
        weights = np.where(finite & np.isfinite(p), p, 0.0)
        mean_g = np.sum(weights * g, axis=-1, keepdims=True)
        a = u
        scaled = bool(np.any(b != 1.0) or np.any(b_err > 0))
        if scaled:
            alpha = (2 * u + b_err) * g + u * b * (
                np.abs(np.where(finite, rows, 0.0)) + np.abs(top)
            )
        else:
            alpha = a * g
        extra = (alpha - a * g) + np.sum(weights * (alpha - a * g), axis=-1, keepdims=True)
        if log:
            p_max = np.max(weights, axis=-1, keepdims=True)
            log_sum = np.where(p_max > 0, -np.log(np.where(p_max > 0, p_max, 1.0)), 0.0)
            bound = log_softmax_absolute_error_bound.numpy(
                g, mean_g, log_sum, u, tol.exp_ulps, tol.log_ulps, gamma, a
            )
            bound = 1.01 * (bound + extra + n * s_min)
            bound = bound * (1 + 4 * 2.0**-53) + 4 * 2.0**-53 * np.abs(np.where(finite, ref, 0))
        else:
            rel = softmax_relative_error_bound.numpy(g, mean_g, u, tol.exp_ulps, gamma, a)
            rel = np.expm1(1.01 * (rel + extra + n * s_min))
            bound = rel * weights * (1 + 4 * 2.0**-53)
        floor = tol.floor_ulps * max(s_min, out_fmt.smallest_subnormal)
        total = bound + half_ulp + floor + tol.ulps * 2 * half_ulp
    return np.where(np.isfinite(total), total, np.inf)


def _dense_rows(dense: Any, rows: F64, beta: F64, log: bool, dtype: str) -> F64:
    """Certified values row group by row group (one call per distinct ``β``)."""
    out = np.empty_like(rows)
    flat = beta.reshape(-1)
    for value in np.unique(flat):
        pick = flat == value
        theta = 1 if value == 1.0 else 1.0 / float(value)
        out[pick] = dense(rows[pick], theta=theta, log=log, format=dtype).values
    return out
