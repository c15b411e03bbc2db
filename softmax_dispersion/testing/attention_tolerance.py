"""The attention kind's tolerance: T14's first-order bound, element by element.

Every allowance is T14's
:data:`~softmax_dispersion.theory.attention_error.attention_output_error_bound`
evaluated on the certified reference's weights and scores, with T12's bounds for the
softmax inside it; nothing is a hand-tuned ``rtol``, and no allowance is infinite or NaN.

Notes
-----
For one output element (query ``i``, value column ``c``) with ``n`` visible keys, output
format ``u`` (the input's: 16-bit formats may hold the scores, the weights and the
output in 16 bits) and accumulation format ``u_acc`` (float32 for 16-bit formats; dot
products and sums accumulate there):

* per key ``j``, the score error ``b_j`` (:data:`attention_score_error_bound`) with
  ``scale_dot = scale·Σ_e|q_ie k_je|``, ``score_size = |s_ij|``, ``γ_qk = γ_E(u_acc)``
  (:data:`gamma_dot_product`) and ``c = 4`` roundings before the mask is added (the
  scale's own, counted twice when ``√scale`` is applied to ``q`` and to ``k``, and the
  two products that apply it), and T12's relative bound ``r_j`` of the softmax of the
  scores: the largest of the max-shifted forms (divide, reciprocal, exp of the
  log-softmax) and, where it is at most ``1/2``, ``exp(s − logsumexp(s))``, with
  ``γ = γ_{n−1}(u_acc)``, exp and log within 2 ulps;
* ``W = Σ_j p_j|v_jc|``, ``B = Σ_j p_j|v_jc|(b_j + r_j)``, ``b̄ = Σ_j p_j b_j`` and the
  first-order bound ``F = B + W(γ_pv + u + b̄)`` with ``γ_pv = γ_n(u_acc)``;
* the allowance ``1.01·F + Σ_j p_j|v_jc|·(expm1(1.01ρ_j) − 1.01ρ_j) + s_min·Σ_j|v_jc|
  + ½ulp(o) + f·s_min``, ``ρ_j = b_j + r_j + b̄ + γ_pv`` (the products of ``(1 + δ)``
  factors the first-order bound linearises; ``s_min/2`` for each weight held below the
  format's normal range, which T12's model leaves out), capped at
  ``max_j |v_jc| + |o|`` (every output is a convex
  combination of the values: a bound beyond that says nothing more).

*Rounded scores.*  Where the score error bound is too large for the first order to mean
anything (``max b_j + b̄ > 1/2`` over the keys that carry weight) because the scores are
huge — a finite mask such as ``finfo.min`` added to a whole row — the rounding of
``q·kᵀ·scale + mask`` decides the answer.  Two answers are then accepted, each with its
own bounded allowance, and the one the output matches is named: ``exact`` (the mask
added exactly, or in float32 for 16-bit formats: ``b_j`` with ``u|s_j|`` replaced by
``u|scale·q·k_j| + u_wide|s_j|``) and ``rounded scores`` (each score the exact score
rounded once to the format, when that rounding is certain: ``b_j = 0``).

Examples
--------
>>> import numpy as np
>>> from softmax_dispersion.testing.attention_reference import attention_problem, reference_of
>>> q = np.array([[0.5, -1.0]], dtype=np.float32)
>>> k = np.array([[1.0, 2.0], [0.0, 1.0], [3.0, 0.5]], dtype=np.float32)
>>> v = np.array([[1.0], [-2.0], [4.0]], dtype=np.float32)
>>> problem = attention_problem(q, k, v)
>>> allowed = attention_allowance(reference_of(problem), problem)
>>> bool(0 < allowed[0, 0] < 1e-5)
True
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from softmax_dispersion.numerics.rounding import FORMATS
from softmax_dispersion.testing.attention_reference import AttentionProblem, AttentionReference
from softmax_dispersion.testing.tolerance import VALID_UP_TO, Tolerance, accumulation_format, ulp

__all__ = [
    "SCORE_ROUNDINGS",
    "allowance_and_validity",
    "attention_allowance",
    "rounded_allowance",
    "score_error_bounds",
    "softmax_relative_bounds",
]

F64 = npt.NDArray[np.float64]
Bool = npt.NDArray[np.bool_]

SCORE_ROUNDINGS = 4
"""``c`` of T14: roundings of the scaled dot product before the mask is added."""


def softmax_relative_bounds(
    scores: F64, probs: F64, *, dtype: str, tolerance: Tolerance, beta: float = 1.0
) -> F64:
    """T12's relative bound ``r_j`` of every weight of the softmax of ``scores`` (rows, last axis).

    The largest over the max-shifted formulations (divide, reciprocal, exp of the
    log-softmax) and, where it is at most :data:`~softmax_dispersion.testing.tolerance.VALID_UP_TO`,
    the log-sum-exp-first ``exp(s − logsumexp(s))``; ``γ_{n−1}`` in the accumulation
    format; ``0`` at excluded keys (``−inf`` scores).

    Examples
    --------
    >>> import numpy as np
    >>> r = softmax_relative_bounds(np.array([[0.0, -1.0]]), np.array([[0.73, 0.27]]),
    ...     dtype="float32", tolerance=Tolerance())
    >>> bool(np.all((2.0**-24 < r) & (r < 30 * 2.0**-24)))
    True
    """
    from softmax_dispersion.theory import rounding_error as t12

    u = FORMATS[dtype].unit_roundoff
    u_acc = FORMATS[accumulation_format(dtype)].unit_roundoff
    visible = np.isfinite(scores)
    count = np.maximum(np.sum(visible, axis=-1, keepdims=True), 1).astype(np.float64)
    with np.errstate(all="ignore"):
        top = np.max(np.where(visible, scores, -np.inf), axis=-1, keepdims=True)
        top = np.where(np.isfinite(top), top, 0.0)
        gaps = np.where(visible, (top - scores) * beta, 0.0)
        weights = np.where(visible, probs, 0.0)
        mean_gap = np.sum(weights * gaps, axis=-1, keepdims=True)
        p_max = np.max(weights, axis=-1, keepdims=True)
        log_sum = np.where(p_max > 0, -np.log(np.where(p_max > 0, p_max, 1.0)), 0.0)
        gamma = t12.gamma_recursive.numpy(count, u_acc)
        k, k_log, a = tolerance.exp_ulps, tolerance.log_ulps, u
        plain = (gaps, mean_gap, u, k, gamma, a)
        bound = np.maximum(
            t12.softmax_relative_error_bound.numpy(*plain),
            t12.softmax_reciprocal_relative_error_bound.numpy(*plain),
        )
        common = (gaps, mean_gap, log_sum, u, k, k_log, gamma, a)
        bound = np.maximum(bound, t12.exp_log_softmax_relative_error_bound.numpy(*common))
        lse = t12.exp_lse_relative_error_bound.numpy(
            gaps, mean_gap, log_sum, np.abs(top) * beta, u, k, k_log, gamma, a, u_acc
        )
        bound = np.maximum(bound, np.where(lse <= VALID_UP_TO, lse, 0.0))
    return np.where(visible, np.broadcast_to(bound, scores.shape), 0.0)


def score_error_bounds(
    dot_size: F64, score_size: F64, *, dims: int, dtype: str, mask_rounding: float | None = None
) -> F64:
    """T14's score error bound ``b_j`` per key (``scale_dot``, ``score_size`` per key).

    ``mask_rounding`` replaces ``u·|s_j|`` by ``u·|scale·q·k_j| + mask_rounding·|s_j|``
    (the mask added exactly: ``0``, or in a wider format); ``score_size`` is then a pair
    ``|scale·q·k_j|``, ``|s_j|`` stacked on a new first axis.

    Examples
    --------
    >>> import numpy as np
    >>> b = score_error_bounds(np.array([4.0]), np.array([3.0]), dims=64, dtype="float32")
    >>> round(float(b[0] * 2**24), 3)  # 4·(γ_64 + 4u) + 3u, in units of u
    275.001
    """
    from softmax_dispersion.theory.attention_error import (
        attention_score_error_bound,
        gamma_dot_product,
    )

    u = FORMATS[dtype].unit_roundoff
    u_acc = FORMATS[accumulation_format(dtype)].unit_roundoff
    gamma_qk = float(gamma_dot_product.numpy(float(dims), u_acc))
    with np.errstate(all="ignore"):
        if mask_rounding is None:
            bound = attention_score_error_bound.numpy(
                dot_size, score_size, u, gamma_qk, SCORE_ROUNDINGS
            )
        else:
            dot_part, whole = score_size
            bound = (
                attention_score_error_bound.numpy(dot_size, dot_part, u, gamma_qk, SCORE_ROUNDINGS)
                + mask_rounding * whole
            )
    return np.asarray(bound, dtype=np.float64)


def _output_allowance(
    visible: Bool,
    probs: F64,
    b: F64,
    r: F64,
    values: F64,
    reference: F64,
    *,
    dtype: str,
    tolerance: Tolerance,
) -> tuple[F64, F64]:
    """``(allowance, validity)``: per output element from per-key ``b`` and ``r``.

    ``visible``, ``probs``, ``b``, ``r`` are ``(B, L, S)``, ``values`` ``(B, S, Ev)``, ``reference``
    ``(B, L, Ev)``; the validity ``max b_j + b̄`` is per row ``(B, L)``.
    """
    from softmax_dispersion.theory.attention_error import (
        attention_output_error_bound,
        gamma_dot_product,
    )

    fmt = FORMATS[dtype]
    u = fmt.unit_roundoff
    u_acc = FORMATS[accumulation_format(dtype)].unit_roundoff
    with np.errstate(all="ignore"):
        live = probs > 0
        count = np.maximum(np.sum(visible, axis=-1, keepdims=True), 1)
        gamma_pv = gamma_dot_product.numpy(count.astype(np.float64), u_acc)
        b = np.where(live, b, 0.0)
        r = np.where(live, r, 0.0)
        mean_b = np.sum(probs * b, axis=-1, keepdims=True)
        size = np.abs(values)
        scale_v = np.matmul(probs, size)
        weighted = np.matmul(probs * (b + r), size)
        first = attention_output_error_bound.numpy(weighted, scale_v, mean_b, u, gamma_pv)
        rho = b + r + mean_b + gamma_pv
        grown = np.where(live, np.expm1(np.minimum(1.01 * rho, 700.0)) - 1.01 * rho, 0.0)
        second = np.matmul(probs * grown, size)
        # weights below the format's normal range are held to half its smallest
        # subnormal (outside T12's model): s_min/2 on each visible key's weight
        underflow = fmt.smallest_subnormal * np.matmul(visible * 1.0, size)
        total = (1.01 * first + second + underflow) * (1 + 2.0**-40)
        # every output is a convex combination of the values: beyond this, nothing more
        cap = np.max(size, axis=-2, keepdims=True) + np.abs(reference)
        finite_ref = np.isfinite(reference)
        total = np.minimum(np.where(np.isfinite(total), total, np.inf), cap)
        half_ulp = 0.5 * ulp(np.where(finite_ref, reference, 0.0), dtype)
        if tolerance.model == "ulps":
            total = tolerance.ulps * 2 * half_ulp
        else:
            floor = tolerance.floor_ulps * fmt.smallest_subnormal
            total = total + half_ulp + floor + tolerance.ulps * 2 * half_ulp
        validity = np.max(b, axis=-1) + mean_b[..., 0]
    return np.where(finite_ref, total, 0.0), validity


def attention_allowance(
    reference: AttentionReference,
    problem: AttentionProblem,
    *,
    tolerance: object = None,
    mask_rounding: float | None = None,
) -> F64:
    """T14's allowance for every output element of an attention reference.

    Parameters
    ----------
    reference
        The certified reference.
    problem
        The inputs it was computed from
        (:func:`~softmax_dispersion.testing.attention_reference.attention_problem`).
    tolerance
        ``None`` (T14 with T12's default model), a number of ULPs or a
        :class:`~softmax_dispersion.testing.Tolerance`.
    mask_rounding
        For the ``exact`` answer of a row whose scores are huge: the unit roundoff the
        mask is added in (``0``: exactly); see the module's notes.

    Returns
    -------
    numpy.ndarray
        Finite, non-negative allowances shaped like the output; 0 in fully masked rows.

    Notes
    -----
    .. math:: a_{ic} = 1.01\\,F_{ic} + \\sum_j p_{ij}|v_{jc}|\\,
       (\\mathrm{expm1}(1.01\\rho_{ij}) - 1.01\\rho_{ij}) + \\tfrac12\\mathrm{ulp}(o_{ic})
       + f s_{min}

    with ``F`` T14's first-order bound (the module's notes).
    """
    allowed, _ = allowance_and_validity(
        reference, problem, tolerance=tolerance, mask_rounding=mask_rounding
    )
    return allowed


def allowance_and_validity(
    reference: AttentionReference,
    problem: AttentionProblem,
    *,
    tolerance: object = None,
    mask_rounding: float | None = None,
) -> tuple[F64, F64]:
    """:func:`attention_allowance` and, per row, ``max b_j + b̄`` (first order valid below 1/2)."""
    from softmax_dispersion.testing.attention_reference import one_blas_thread

    with one_blas_thread():
        return _allowance_and_validity(
            reference, problem, Tolerance.coerce(tolerance), mask_rounding
        )


def _allowance_and_validity(
    reference: AttentionReference,
    problem: AttentionProblem,
    tol: Tolerance,
    mask_rounding: float | None,
) -> tuple[F64, F64]:
    dtype = reference.dtype
    batch, length, keys = problem.bias.shape
    dims = problem.q.shape[-1]
    probs = reference.probs.reshape(batch, length, keys)
    scores = reference.scores.reshape(batch, length, keys)
    dot_size = reference.dot_size.reshape(batch, length, keys)
    with np.errstate(all="ignore"):
        magnitude = np.where(np.isfinite(scores), np.abs(scores), 0.0)
        if mask_rounding is None:
            b = score_error_bounds(dot_size, magnitude, dims=dims, dtype=dtype)
        else:
            # |scale·q·k_j| <= scale_dot: the dot product's own size bounds it
            b = score_error_bounds(
                dot_size,
                np.stack([dot_size, magnitude]),
                dims=dims,
                dtype=dtype,
                mask_rounding=mask_rounding,
            )
    r = softmax_relative_bounds(
        scores.reshape(-1, keys), probs.reshape(-1, keys), dtype=dtype, tolerance=tol
    ).reshape(scores.shape)
    reference_values = reference.values.reshape(batch, length, -1)
    allowed, validity = _output_allowance(
        np.isfinite(scores), probs, b, r, problem.v, reference_values, dtype=dtype, tolerance=tol
    )
    fully = problem.fully_masked
    allowed = np.where(fully[:, :, None], 0.0, allowed)
    if not np.all(np.isfinite(allowed)):  # pragma: no cover - the construction excludes it
        raise AssertionError("an allowance is not finite: a bug in the attention tolerance")
    shape = reference.values.shape
    return allowed.reshape(shape), np.where(fully, 0.0, validity).reshape(shape[:-1])


def rounded_allowance(
    reference: AttentionReference, problem: AttentionProblem, *, tolerance: object = None
) -> tuple[F64, Bool]:
    """T14's allowance for the *rounded-scores* answer, and per row whether it is certain.

    ``reference`` is the attention of the exact scores rounded once to the format
    (``reference_of(problem, scores="rounded")``).  An implementation that computes
    ``scale·q·k_j`` within ``β_j = scale_dot·(γ_qk + c·u) + u·scale_dot`` (T14's bound
    without the mask's part) and adds the mask in the format gets exactly those
    rounded scores when every number within ``β_j`` of the exact score rounds alike:
    such a row is *certain*, and its score error is 0 (``b_j = 0``); the softmax and the
    weighted sum keep their bounds.

    Returns
    -------
    tuple of numpy.ndarray
        The allowances (shaped like the output) and the certain rows (``(..., L)``).
    """
    from softmax_dispersion.testing.attention_reference import one_blas_thread, round_to_format

    tol = Tolerance.coerce(tolerance)
    dtype = reference.dtype
    batch, length, keys = problem.bias.shape
    dims = problem.q.shape[-1]
    exact = reference_of_scores(problem)
    dot_size = reference.dot_size.reshape(batch, length, keys)
    with np.errstate(all="ignore"):
        beta = 1.01 * score_error_bounds(dot_size, dot_size, dims=dims, dtype=dtype)
        finite = np.isfinite(exact)
        low = round_to_format(np.where(finite, exact - beta, 0.0), dtype)
        high = round_to_format(np.where(finite, exact + beta, 0.0), dtype)
        certain = np.all((low == high) | ~finite, axis=-1) & ~reference.ambiguous.reshape(
            batch, length
        )
    probs = reference.probs.reshape(batch, length, keys)
    scores = reference.scores.reshape(batch, length, keys)
    with one_blas_thread():
        r = softmax_relative_bounds(
            scores.reshape(-1, keys), probs.reshape(-1, keys), dtype=dtype, tolerance=tol
        ).reshape(scores.shape)
        allowed, _ = _output_allowance(
            np.isfinite(scores),
            probs,
            np.zeros_like(r),
            r,
            problem.v,
            np.nan_to_num(reference.values.reshape(batch, length, -1)),
            dtype=dtype,
            tolerance=tol,
        )
    fully = problem.fully_masked
    allowed = np.where((fully | ~certain)[:, :, None], 0.0, allowed)
    shape = reference.values.shape
    return allowed.reshape(shape), certain.reshape(shape[:-1])


def reference_of_scores(problem: AttentionProblem) -> F64:
    """The exact scores ``scale·q·k_j + mask_j`` as float64 ``(B, L, S)`` (``−inf`` excluded)."""
    from softmax_dispersion.testing.attention_reference import _dd_scores

    hi, lo, _ = _dd_scores(problem)
    with np.errstate(all="ignore"):
        return np.where(np.isfinite(hi), hi + lo, hi)
