"""The oracle's tolerance: T12's first-order error bounds, element by element.

An implementation is *accurate* when every output element lies within
:func:`allowed_error` of the certified, correctly rounded reference.  Every allowance is
one of T12's bounds (:mod:`softmax_dispersion.theory.rounding_error`, the package's one
error analysis of softmax as it is computed); nothing here is a hand-tuned ``rtol``, and
no input ever gets an infinite or NaN allowance.

Notes
-----
For one row of logits ``e`` (length ``n``), effective inverse temperature ``β`` and output
format with unit roundoff ``u``, write ``g_j = β·(max e − e_j)`` (the gaps, ``+∞`` at
masked entries), ``p_j`` for the exact coefficients, ``ḡ = Σ p_j g_j`` (the mean gap),
``L = log Σ_j exp(−g_j) = −log max_j p_j`` and ``t = β·|max e|``.  The formats:

* ``u`` (elementwise): the unit roundoff of the input/output format.  A 16-bit
  implementation may subtract, exponentiate and divide in 16 bits (SciPy and NumPy do);
* ``u_acc`` (accumulation): float32's ``2**-24`` for 16-bit formats, else ``u``.  Sums
  and the log-sum-exp are assumed held in it: a sum of 16-bit terms held in 16 bits
  stalls at 2048 (PAPER.md's first bad input), a bug, not a rounding error.

**Which algorithms the default covers.**  The default model (``"recursive"``) takes, for
every element, the largest of T12's bounds over the standard formulations, with the
summation factor ``γ = γ_{n−1}`` (:data:`~softmax_dispersion.theory.rounding_error.gamma_recursive`,
valid for *any* summation order: sequential loops, blocked and vectorised sums, trees):

* softmax: max-shift then divide (``softmax_relative_error_bound``), max-shift then
  multiply by the reciprocal of the sum (``softmax_reciprocal_relative_error_bound``),
  exp of the max-shifted log-softmax (``exp_log_softmax_relative_error_bound``),
  ``exp(x − logsumexp(x))`` (``exp_lse_relative_error_bound``) and
  ``exp(x − np.logaddexp.reduce(x))`` (``exp_lae_relative_error_bound``, any tree of
  log-add-exp steps);
* log-softmax: ``x − max − log Σ exp(x − max)`` (``log_softmax_absolute_error_bound``),
  ``x − logsumexp(x)`` (``lse_log_softmax_absolute_error_bound``) and
  ``x − np.logaddexp.reduce(x)`` (``lae_log_softmax_absolute_error_bound``).

A formulation vouches for an element only where its own bound is at most
:data:`VALID_UP_TO` (``1/2``): T12 is first order, and beyond that it bounds nothing (the
log-sum-exp forms at logits near ``finfo.max``, whose rounded log-sum-exp is the
maximum itself, lose the value); such an output is reported rather than allowed.  The
max-shifted formulations always vouch.

``"strict"`` is the tighter opt-in model: the same ``γ = γ_{n−1}`` (any summation
order) and only the max-shifted formulations, each computed shift first, then scale:
softmax divided by its sum, multiplied by the reciprocal, or the exp of the shifted
log-softmax; log-softmax as ``x − max − log Σ exp(x − max)``.  It leaves out what only
the log-sum-exp formulations need (``u·|max e|`` of a rounded log-sum-exp, the
``n − 1`` roundings of a log-add-exp fold) and what only scaling before the shift needs
(``u·β·|e_j|``): errors that grow with the size of the logits rather than with their
gaps, and that a common scale error of a row hides in.  Every real library computes a
max-shifted form (numpy, scipy, torch, jax, onnxruntime), so it passes them all, and
it fails ``x − logsumexp(x)`` where that formulation loses its digits.  ``"ulps"`` is
a fixed number of ULPs at the reference value.  (An earlier ``"pairwise"`` model took
``γ_{⌈log2 n⌉}`` and failed correct libraries whose sums are blocked: numpy's, torch's.)

**The arguments.**  ``k = exp_ulps`` and ``k_log = log_ulps`` (default 2: glibc,
SLEEF-u10, SVML and numpy's own routines are within one ulp; 2 leaves room for vendor
routines), ``a = u`` the error of the shift, and ``α_j`` the absolute error of the
computed argument of entry ``j``:

* ``α_j = a·g_j`` for plain softmax at ``β = 1`` (T12's own model);
* ``α_j = (2u + ε_β)·g_j + u·β·(|e_j| + |max e|)`` when the logits are scaled (a
  temperature, SSMax's ``s·log n``, the adaptive ``β``): this covers both orders, shift
  then scale (``2u`` relative to the gap) and scale then shift (the products carry
  ``u·β|e_j|``), with ``ε_β`` the relative error of the computed ``β``.

T12's bounds are stated with ``a·g_j``; a larger argument error adds
``(α_i − a g_i) + Σ_j p_j (α_j − a g_j)`` (its own entry, and its weight in the sum).
In the log-sum-exp forms the log-sum-exp is rounded in the accumulation format:
``lse_u = u_acc``, ``top = t``; the log-add-exp reduction's depth is ``n − 1``.
``n·s_min`` (``s_min`` the smallest subnormal of the elementwise format) is what terms
underflowing in ``exp`` can take from a sum ``>= 1``.

**Softmax allowance.**  With ``r_i`` the largest relative bound of the model,

.. math:: |\\hat p_i - p_i| \\le p_i\\,\\mathrm{expm1}(1.01\\,r_i)
          + \\tfrac12 \\mathrm{ulp}_{out}(\\mathrm{ref}_i) + f\\,s_{min}

computed as ``exp(log p_i + log expm1(1.01 r_i))`` with ``log p_i = −g_i − L``, so that an
entry far below the maximum (a ``finfo.min`` mask: ``g_i ≈ 3e38``) gets an allowance of
0, not ``0·∞``.  T12 is first order; ``expm1(1.01 r)`` bounds the products of the
``(1 + δ)`` factors it linearises (each is ``<= exp(δ + δ²)``, and the argument
errors enter as ``exp(x_i η_i)`` exactly).  The half ulp is the final rounding to the
output format (an implementation that works in float32 and rounds to float16), the
floor ``f = floor_ulps`` smallest subnormals for values that underflow.

**Log-softmax allowance.**  The largest absolute bound of the model plus ``n·s_min``,
times 1.01, plus the half ulp and the floor; ``0`` at masked entries (``−inf`` is
compared exactly).

Examples
--------
>>> import numpy as np
>>> allowed = allowed_error(np.array([[0.0, -1.0, -2.0]]), dtype="float32")
>>> bool(np.all(allowed < 2e-6))
True
>>> Tolerance.coerce(4).model, Tolerance.coerce("strict").model
('ulps', 'strict')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from softmax_dispersion.numerics.rounding import FORMATS, float_format
from softmax_dispersion.testing.kinds import TOLERANCE_MODELS

__all__ = [
    "MODELS",
    "VALID_UP_TO",
    "Allowances",
    "Tolerance",
    "accumulation_format",
    "allowances",
    "allowed_error",
    "flushing_is_named",
    "ulp",
]

F64 = npt.NDArray[np.float64]
MODELS = tuple(TOLERANCE_MODELS)
"""The named tolerance models; the first is the default."""
_ROUND_UP = 1 + 4 * 2.0**-53  # float64 evaluation of the bound, rounded outwards


@dataclass(frozen=True)
class Tolerance:
    """How much error :func:`allowed_error` allows.

    Attributes
    ----------
    model : str
        ``"recursive"`` (default: T12 with ``γ_{n−1}``, any summation order, every
        standard formulation), ``"strict"`` (T12 with ``γ_{n−1}``, the max-shifted
        formulations only) or ``"ulps"`` (a fixed number of ULPs of the reference,
        :attr:`ulps`).
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

    model: str = "recursive"
    ulps: float = 0.0
    exp_ulps: float = 2.0
    log_ulps: float = 2.0
    floor_ulps: float = 2.0

    def __post_init__(self) -> None:
        if self.model == "pairwise":
            raise ValueError(
                "tolerance model 'pairwise' was replaced by 'strict' (T12 with any "
                "summation order, the max-shifted formulations only): 'pairwise' failed "
                "correct libraries whose sums are blocked (numpy, torch)"
            )
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
            f"tolerance must be None, a number of ULPs, {', '.join(map(repr, MODELS[:2]))} or "
            f"a Tolerance, got {type(spec).__name__}"
        )

    @property
    def label(self) -> str:
        """A short description for messages (``"T12, any summation order"``)."""
        if self.model == "ulps":
            return f"{self.ulps:g} ULP"
        extra = f" + {self.ulps:g} ULP" if self.ulps else ""
        if self.model == "strict":
            return f"T12 strict: any summation order, max-shifted formulations only{extra}"
        return f"T12, any summation order and formulation{extra}"


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


def flushing_is_named(dtype: str) -> bool:
    """Whether a flushed subnormal output is a named behaviour in ``dtype`` (not a failure).

    Formats with float32's range (float32, float64, bfloat16) lose nothing above 1.2e-38
    when the hardware flushes subnormals; float16's smallest normal is 6.1e-5, and
    flushing there loses real probability mass.

    Examples
    --------
    >>> [flushing_is_named(d) for d in ("float16", "bfloat16", "float32", "float64")]
    [False, True, True, True]
    """
    return float_format(dtype).emin <= FORMATS["float32"].emin


def _rows(x: npt.ArrayLike) -> F64:
    data = np.asarray(x, dtype=np.float64)
    return data.reshape(1, -1) if data.ndim == 1 else data.reshape(-1, data.shape[-1])


def _per_row(value: npt.ArrayLike, rows: int) -> F64:
    return np.broadcast_to(np.asarray(value, dtype=np.float64).reshape(-1, 1), (rows, 1))


def _log_expm1(y: F64) -> F64:
    """``log(expm1(y))`` for ``y >= 0``, without overflow for large ``y``."""
    with np.errstate(all="ignore"):
        large = y > 1
        return np.where(
            large,
            y + np.log1p(-np.exp(-np.where(large, y, 1.0))),
            np.log(np.expm1(np.where(large, 1.0, y))),
        )


@dataclass(frozen=True)
class _Row:
    """What T12's bounds need of each row, as float64 arrays (finite everywhere)."""

    gaps: F64  # g_j, inf at masked entries
    visible: npt.NDArray[np.bool_]  # finite logits
    weights: F64  # p_j, 0 at masked entries
    mean_gap: F64
    log_sum: F64
    top: F64  # β·|max e|
    extra: F64  # (α_i − a g_i) + Σ_j p_j (α_j − a g_j), scale before or after the shift
    extra_shifted: F64  # the same when the shift comes first (the strict model)


def _row_terms(rows: F64, probs: F64, beta: F64, beta_error: F64, u: float) -> _Row:
    visible = np.isfinite(rows)
    with np.errstate(all="ignore"):
        top = np.max(np.where(visible, rows, -np.inf), axis=-1, keepdims=True)
        top = np.where(np.isfinite(top), top, 0.0)
        gaps = np.where(visible, (top - rows) * beta, np.inf)
        weights = np.where(visible & np.isfinite(probs), probs, 0.0)
        used = weights > 0
        mean_gap = np.sum(
            np.where(used, weights * np.where(used, gaps, 0.0), 0.0), -1, keepdims=True
        )
        p_max = np.max(weights, axis=-1, keepdims=True)
        log_sum = np.where(p_max > 0, -np.log(np.where(p_max > 0, p_max, 1.0)), 0.0)
        scaled = bool(np.any(beta != 1.0) or np.any(beta_error > 0))
        if scaled:
            shifted = (u + beta_error) * np.where(visible, gaps, 0.0)
            magnitude = u * beta * np.abs(np.where(visible, rows, 0.0)) + u * beta * np.abs(top)
        else:
            shifted = magnitude = np.zeros_like(rows)
        shifted = np.where(visible, shifted, 0.0)
        either = np.where(visible, shifted + magnitude, 0.0)

        def with_mean(alpha: F64) -> F64:
            # β·|max e| and the argument errors overflow for logits near finfo.max scaled
            # by β > 1: capped, they still bound nothing (far beyond VALID_UP_TO), but
            # stay finite.
            mean = np.sum(np.where(used, weights * alpha, 0.0), -1, keepdims=True)
            capped: F64 = np.minimum(alpha + mean, _HUGE)
            return capped

        scaled_top = np.minimum(beta * np.abs(top), _HUGE)
        extra, extra_shifted = with_mean(either), with_mean(shifted)
    return _Row(
        gaps=gaps,
        visible=visible,
        weights=weights,
        mean_gap=mean_gap,
        log_sum=log_sum,
        top=scaled_top,
        extra=extra,
        extra_shifted=extra_shifted,
    )


_HUGE = 1e300
"""The cap of the terms that overflow float64 (an allowance must stay finite)."""


VALID_UP_TO = 0.5
"""A formulation vouches for an element only where its own bound is at most this.

T12 is first order: where a bound reaches 1/2, the products of errors it neglects are as
large as the bound itself, and it bounds nothing.  There the formulation has lost the
value (``exp(x − logsumexp(x))`` returns ones for a row of ``3e38``s: the rounded
log-sum-exp is the maximum itself), and such an output is reported, not allowed."""


def _bounds(
    row: _Row, log: bool, tol: Tolerance, n: int, u: float, u_acc: float
) -> tuple[F64, F64]:
    """T12's largest bounds at every visible element: the strict model's, and every
    formulation's (the default model's); relative for softmax, absolute for log-softmax."""
    from softmax_dispersion.theory import rounding_error as t12

    gamma = float(t12.gamma_recursive.numpy(float(n), u_acc))
    g = np.where(row.visible, row.gaps, 0.0)
    k, k_log, a = tol.exp_ulps, tol.log_ulps, u
    depth = float(max(n - 1, 0))
    common = (g, row.mean_gap, row.log_sum, u, k, k_log, gamma, a)
    lse_args = (g, row.mean_gap, row.log_sum, row.top, u, k, k_log, gamma, a, u_acc)
    lae_args = (g, row.log_sum, row.top, u, k, k_log, depth, u_acc)
    shifted: list[Any]
    if log:
        always = t12.log_softmax_absolute_error_bound.numpy(*common)
        shifted = []
        others = [
            t12.lse_log_softmax_absolute_error_bound.numpy(*lse_args),
            t12.lae_log_softmax_absolute_error_bound.numpy(*lae_args),
        ]
    else:
        plain = (g, row.mean_gap, u, k, gamma, a)
        always = np.maximum(
            t12.softmax_relative_error_bound.numpy(*plain),
            t12.softmax_reciprocal_relative_error_bound.numpy(*plain),
        )
        shifted = [t12.exp_log_softmax_relative_error_bound.numpy(*common)]
        others = [
            t12.exp_lse_relative_error_bound.numpy(*lse_args),
            t12.exp_lae_relative_error_bound.numpy(*lae_args),
        ]

    def largest(start: F64, bounds: list[Any]) -> F64:
        worst = start.copy()
        for bound in bounds:
            b = np.broadcast_to(np.asarray(bound, dtype=np.float64), g.shape)
            worst = np.maximum(worst, np.where(b <= VALID_UP_TO, b, 0.0))
        return worst

    strict = largest(np.broadcast_to(np.asarray(always, dtype=np.float64), g.shape), shifted)
    return strict, largest(strict, others)


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

    A row with one visible entry is allowed 0: its answer is exactly 1 (log: 0), and
    every formulation computes ``exp(0)/exp(0)`` (``x − x``) exactly.

    Parameters
    ----------
    x
        The logits, rows along the last axis (exact float64 values of the input);
        masked entries are ``−inf``.
    dtype
        The output format (``"float16"``, ``"bfloat16"``, ``"float32"``, ``"float64"``).
    log
        Log-softmax (T12's absolute bounds) instead of softmax (its relative bounds).
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
        ``None`` (T12, any summation order and formulation), a number of ULPs,
        ``"recursive"``, ``"strict"`` or a :class:`Tolerance`.

    Returns
    -------
    numpy.ndarray
        Finite, non-negative float64 allowances shaped like the rows of ``x`` (2-D);
        ``0`` where the reference is not finite (compared exactly).

    Notes
    -----
    .. math:: a_i = p_i\\,\\mathrm{expm1}(1.01\\,r_i) + \\tfrac12\\mathrm{ulp}(\\mathrm{ref}_i)
       + f\\,s_{min}

    for softmax, with ``r_i`` the largest of T12's relative bounds over the model's
    formulations; log-softmax uses its absolute bounds (the module's Notes).

    Examples
    --------
    >>> import numpy as np
    >>> a = allowed_error([[0.0, 0.0]], dtype="float16", tolerance=1)
    >>> a.tolist()  # one ulp of 0.5 in float16
    [[0.00048828125, 0.00048828125]]
    >>> masked = allowed_error([[0.0, -3.4e38]], dtype="float32")
    >>> bool(np.isfinite(masked).all() and masked[0, 1] < 1e-44)
    True
    """
    return allowances(
        x,
        dtype=dtype,
        log=log,
        beta=beta,
        beta_error=beta_error,
        values=values,
        probs=probs,
        tolerance=tolerance,
    ).total


@dataclass(frozen=True)
class Allowances:
    """The allowance of a model and, for the default model, the strict one beside it.

    Attributes
    ----------
    total : numpy.ndarray
        The model's absolute allowance at every element (:func:`allowed_error`).
    strict : numpy.ndarray or None
        The strict model's, when the model is ``"recursive"``: an element whose error
        lies between the two passed only through an allowance that the log-sum-exp (or
        scale-before-shift) formulations need.
    """

    total: F64
    strict: F64 | None = None


def allowances(
    x: npt.ArrayLike,
    *,
    dtype: str,
    log: bool = False,
    beta: npt.ArrayLike = 1.0,
    beta_error: npt.ArrayLike = 0.0,
    values: npt.ArrayLike | None = None,
    probs: npt.ArrayLike | None = None,
    tolerance: object = None,
) -> Allowances:
    """:func:`allowed_error`, and beside the default model the strict one (one pass).

    Examples
    --------
    >>> import numpy as np
    >>> both = allowances(np.array([[1e6, 1e6 - 4.2]]), dtype="float32", log=True)
    >>> bool(both.total[0, 0] > 0.01 > both.strict[0, 0])  # u·|max e| only for lse forms
    True
    """
    tol = Tolerance.coerce(tolerance)
    rows = _rows(x)
    b = _per_row(beta, rows.shape[0])
    if values is None or probs is None:
        from softmax_dispersion.numerics.dense import certified_softmax_dense

        if values is None:
            values = _dense_rows(certified_softmax_dense, rows, b, log, dtype)
        if probs is None:
            probs = _dense_rows(certified_softmax_dense, rows, b, False, "float64")
    ref = _rows(values)
    reference_finite = np.isfinite(ref)
    out_fmt = float_format(dtype)
    half_ulp = np.where(reference_finite, 0.5 * ulp(np.where(reference_finite, ref, 0.0), dtype), 0)
    if tol.model == "ulps":
        return Allowances(np.where(reference_finite, tol.ulps * 2 * half_ulp, 0.0))
    n = rows.shape[-1]
    u = out_fmt.unit_roundoff
    u_acc = FORMATS[accumulation_format(dtype)].unit_roundoff
    s_min = out_fmt.smallest_subnormal
    row = _row_terms(rows, _rows(probs), b, _per_row(beta_error, rows.shape[0]), u)
    strict_bound, full_bound = _bounds(row, log, tol, n, u, u_acc)
    # One visible entry: every formulation computes exp(0)/exp(0) (or x − x) exactly, so
    # the answer is exactly 1 (log: 0); a systematic bias of any size shows there.
    single = np.sum(row.visible, axis=-1, keepdims=True) == 1

    def total(relative: F64, extra: F64) -> F64:
        floor = tol.floor_ulps * s_min
        with np.errstate(all="ignore"):
            bound = relative + extra + n * s_min
            if log:
                spread = 1.01 * bound * _ROUND_UP + 4 * 2.0**-53 * np.abs(
                    np.where(reference_finite, ref, 0)
                )
            else:
                # p_i·expm1(1.01 r_i) in log space: log p_i = −g_i − L (−∞ at masked entries).
                log_p = -row.gaps - row.log_sum
                exponent = log_p + _log_expm1(1.01 * bound)
                # At most 1, the width of [0, 1]: a bound beyond it says nothing more.
                spread = np.exp(np.minimum(exponent, 0.0)) * _ROUND_UP
            spread = np.where(row.visible & np.isfinite(spread), spread, 0.0)
            result = spread + half_ulp + floor + tol.ulps * 2 * half_ulp
        result = np.where(reference_finite & ~single, result, 0.0)
        if not np.all(np.isfinite(result)):  # pragma: no cover - the construction excludes it
            raise AssertionError("an allowance is not finite: a bug in the oracle's tolerance")
        return result

    strict = total(strict_bound, row.extra_shifted)
    if tol.model == "strict":
        return Allowances(strict)
    return Allowances(total(full_bound, row.extra), strict)


def _dense_rows(dense: Any, rows: F64, beta: F64, log: bool, dtype: str) -> F64:
    """Certified values row group by row group (one call per distinct ``β``)."""
    out = np.empty_like(rows)
    flat = beta.reshape(-1)
    for value in np.unique(flat):
        pick = flat == value
        theta = 1 if value == 1.0 else 1.0 / float(value)
        out[pick] = dense(rows[pick], theta=theta, log=log, format=dtype).values
    return out
