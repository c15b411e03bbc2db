"""The evaluation: blocks of rows through the fast path, exact fallback for the rest."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from softmax_dispersion.numerics._backends import Backend, backend
from softmax_dispersion.numerics.dense._double_double import (
    F64,
    X_EXP_MIN,
    Pair,
    dd_add,
    dd_add_dominant,
    dd_mul,
    ieee_arithmetic,
    pow2,
    two_sum,
)
from softmax_dispersion.numerics.dense._elementary import (
    U_DD,
    dd_inverse,
    dd_log,
    dd_of,
    exp_dd,
    fast_path_bounds,
    float_above,
)
from softmax_dispersion.numerics.dense._rounding import outward, round_certify
from softmax_dispersion.numerics.evaluate import (
    DEFAULT_MAX_PRECISION,
    Enclosure,
    certified_softmax,
)
from softmax_dispersion.numerics.rounding import (
    FORMATS,
    FloatFormat,
    float_format,
    round_dyadic,
)
from softmax_dispersion.numerics.sequence import LogitSequence
from softmax_dispersion.theory.formulas import exact_value

FAST_PRECISION = 106
"""The nominal precision of the fast path, in bits (two binary64 significands)."""


X_SUM_MIN = -660.0
"""Below this shifted logit a term is left out of the sum: ``exp(x) < 2**-952``."""


BLOCK = 1 << 13
"""Elements per vectorised block: temporaries (64 KiB) stay in cache and below the usual
128 KiB threshold above which every allocation would map fresh pages."""


PARTIALS = 64
"""Partial sums kept per block of a long row (the last levels of the sum run once)."""


CHUNK = 1 << 20
"""Elements per chunk of rows (bounds the memory held at once)."""


@dataclass(frozen=True)
class DenseEvaluation:
    """A certified dense evaluation of softmax or log-softmax.

    Attributes
    ----------
    function : str
        ``"softmax"`` or ``"log_softmax"``.
    values : numpy.ndarray
        The values rounded to ``format`` (held exactly in float64), shaped like the input.
    lower, upper : numpy.ndarray
        Float64 bounds with ``lower <= exact <= upper`` for every element of an ``"ok"``
        row (``NaN`` in rows whose status is not ``"ok"``).
    certified : numpy.ndarray
        Boolean: the value is proved to be the correctly rounded exact value.
    status : tuple of str
        Per row: ``"ok"``, ``"nan"`` (a NaN logit) or ``"undefined"`` (only ``−inf``).
    format : str
        The float format rounded to.
    engine : str
        The ball/interval engine of the exact path (and of ``s·log n``).
    precision : int
        106 (the double-double fast path), or the highest working precision a fallback
        row reached.
    relative_bound : float
        The largest relative error bound of the fast path's softmax values (0 if unused).
    fallback_rows : int
        Rows sent to the exact run-length path (non-finite rows included).
    fallback_elements : int
        Elements of finite rows the fast path could not certify.
    """

    function: str
    values: F64
    lower: F64
    upper: F64
    certified: npt.NDArray[np.bool_]
    status: tuple[str, ...]
    format: str
    engine: str
    precision: int
    relative_bound: float
    fallback_rows: int
    fallback_elements: int

    @property
    def all_certified(self) -> bool:
        """Whether every value is certified correctly rounded."""
        return bool(self.certified.all())


@dataclass(frozen=True)
class _Beta:
    """The inverse temperature as a double-double and its relative error (None: exactly 1)."""

    hi: float
    lo: float
    relative: float
    one: bool


def _beta(bk: Backend, theta: Fraction, s: Fraction | None, n: int) -> _Beta:
    if s is None:
        exact = 1 / theta
        if exact == 1:
            return _Beta(1.0, 0.0, 0.0, True)
        hi, lo, error = dd_of(exact)
        return _Beta(hi, lo, float_above(error / exact), False)
    with bk.working_precision(256):
        ball = bk.number(s) * bk.log(bk.number(n)) / bk.number(theta)
        (m0, e0), (m1, e1) = bk.endpoints(ball)
    low = Fraction(m0) * Fraction(2) ** e0
    high = Fraction(m1) * Fraction(2) ** e1
    center = (low + high) / 2
    hi, lo, error = dd_of(center)
    return _Beta(hi, lo, float_above((error + (high - low) / 2) / center), False)


def _tree_sum(h: F64, low: F64, until: int = 1) -> Pair:
    """Sum each row of a double-double array pairwise until ``until`` columns are left.

    At most ``⌈log₂(width/until)⌉`` levels; each element of the result is the sum of a
    set of columns (the sets partition them).
    """
    while h.shape[1] > until:
        half = h.shape[1] // 2
        sh, sl = dd_add_dominant(  # positive terms
            h[:, :half], low[:, :half], h[:, half : 2 * half], low[:, half : 2 * half]
        )
        if h.shape[1] % 2:
            sh = np.concatenate([sh, h[:, -1:]], axis=1)
            sl = np.concatenate([sl, low[:, -1:]], axis=1)
        h, low = sh, sl
    if until == 1:
        return h[:, 0], low[:, 0]
    return h, low


def _levels(width: int) -> int:
    return max(width - 1, 0).bit_length()


Block = tuple[int, int, int, int, int]


def _blocks(rows: int, width: int) -> list[Block]:
    """``(row0, row1, col0, col1, segment)``: whole rows, or segments of one long row."""
    if width <= BLOCK:
        step = max(1, BLOCK // width)
        return [(r, min(r + step, rows), 0, width, 0) for r in range(0, rows, step)]
    return [
        (r, r + 1, c, min(c + BLOCK, width), i)
        for r in range(rows)
        for i, c in enumerate(range(0, width, BLOCK))
    ]


def _fast_chunk(
    data: F64,
    beta: _Beta,
    log: bool,
    fmt: FloatFormat,
    out: tuple[F64, F64, F64, npt.NDArray[np.bool_]],
) -> tuple[npt.NDArray[np.bool_], float]:
    """Evaluate rows of ``data`` (finite maximum, no NaN) into ``out``.

    Returns the per-row flag "the fast path cannot be trusted here: use the exact path"
    and the largest relative error bound of the softmax values.  The work goes by blocks
    of at most BLOCK elements (whole rows, or segments of a long row) so that the
    temporaries stay in cache; per-row quantities broadcast along the last axis.
    """
    rows, width = data.shape
    bounds = fast_path_bounds()
    values, lower, upper, certified = out
    top = data.max(axis=1)
    blocks = _blocks(rows, width)
    segments = 1 + blocks[-1][4]
    keep_per_segment = 1 if segments == 1 else PARTIALS  # the last tree levels run once

    def shifted(e: F64, t: F64) -> tuple[F64, F64, Any]:
        """``x = (e − max)·β`` as a double-double and a bound on its absolute error."""
        # Exact unless it overflows (then dh = −inf: |x| >= 2**1024, exp(x) negligible).
        dh, dl = two_sum(e, -t)
        if beta.one:
            return dh, dl, 0.0
        # Dekker's split needs |a| < 2**995; beyond, |x| > 2**90 as β > 2**-900: −inf
        # stands for "exp(x) is negligible" (softmax) or "not certified" (log).
        tame = np.abs(dh) <= 2.0**990
        xh, xl = dd_mul(np.where(tame, dh, 0.0), np.where(tame, dl, 0.0), beta.hi, beta.lo)
        ex = np.abs(xh) * ((beta.relative + U_DD) * 1.02) + 2.0**-1000
        return np.where(tame, xh, -np.inf), xl, ex

    # Pass 1: the exponentials (kept as 2**K·m; m = 0 below X_EXP_MIN) and, per block,
    # the pairwise double-double sum of the terms other than the maxima.
    mh = np.empty((rows, width))
    ml = np.empty((rows, width))
    kk = np.empty((rows, width), dtype=np.int16)
    partial_h = np.zeros((rows, segments * keep_per_segment))
    partial_l = np.zeros((rows, segments * keep_per_segment))
    n_masked = np.zeros(rows, dtype=np.int64)
    n_exp = np.zeros(rows, dtype=np.int64)
    n_sum = np.zeros(rows, dtype=np.int64)
    n_top = np.zeros(rows, dtype=np.int64)
    ex_row = np.zeros(rows)
    fail = np.zeros(rows, dtype=bool)
    for r0, r1, c0, c1, segment in blocks:
        e = data[r0:r1, c0:c1]
        t = top[r0:r1, None]
        xh, xl, ex = shifted(e, t)
        in_exp = xh >= X_EXP_MIN  # False for masked (−inf) and overflowed logits
        if in_exp.all():
            eh, el, k, ok = exp_dd(xh, xl)
        else:
            eh, el, k, ok = exp_dd(np.where(in_exp, xh, 0.0), np.where(in_exp, xl, 0.0))
            eh = np.where(in_exp, eh, 0.0)
            el = np.where(in_exp, el, 0.0)
            k = np.where(in_exp, k, 0)
            n_masked[r0:r1] += (e == -np.inf).sum(axis=1)
        if not ok.all():
            fail[r0:r1] |= (in_exp & ~ok).any(axis=1)
        mh[r0:r1, c0:c1] = eh
        ml[r0:r1, c0:c1] = el
        kk[r0:r1, c0:c1] = k
        in_sum = xh >= X_SUM_MIN
        n_exp[r0:r1] += in_exp.sum(axis=1)
        n_sum[r0:r1] += in_sum.sum(axis=1)
        if log:  # the maxima (x = 0 exactly: exp(x) = 1) are counted apart
            is_top = e == t
            n_top[r0:r1] += is_top.sum(axis=1)
            in_sum &= ~is_top
        if in_sum.all():
            scale = pow2(k)
            terms = eh * scale, el * scale
        else:
            scale = pow2(np.where(in_sum, k, 0))  # K >= −953 in the sum
            terms = np.where(in_sum, eh * scale, 0.0), np.where(in_sum, el * scale, 0.0)
        th, tl = _tree_sum(*terms, keep_per_segment)
        columns = slice(segment * keep_per_segment, segment * keep_per_segment + th.shape[-1])
        partial_h[r0:r1, columns] = th.reshape(r1 - r0, -1)
        partial_l[r0:r1, columns] = tl.reshape(r1 - r0, -1)
        if not beta.one:
            ex_row[r0:r1] = np.maximum(ex_row[r0:r1], np.where(in_exp, ex, 0.0).max(axis=1))
    sh, sl = _tree_sum(partial_h, partial_l)
    depth = _levels(min(width, BLOCK)) + _levels(segments * keep_per_segment)

    # Per row Z = c + S.  Log-softmax: the c maxima contribute exp(0) = 1 each, exactly,
    # and S is the sum of the other terms (so that log Z = log1p(S) keeps its relative
    # precision for a spike); softmax: c = 0 and S is every term.  Ŝ, summed pairwise in
    # double-double, is within (1 + τ)(1 + U)**D − 1 <= 1.01(τ + D·U) relative of the
    # sum of its terms (all terms and partial sums are positive; computed additively, as
    # in binary64 1 + 2**-100 is 1), plus the terms left out (below 2**-952 for x in
    # [−750, −660), below 2**-1082 under −750) and the subnormal low parts of the terms
    # (each off by less than 2**-1075; the additions of the pairwise sum are exact when
    # their result is subnormal).
    tau = bounds.exp_relative + 1.02 * ex_row
    far = width - n_masked - n_exp
    between = n_exp - n_sum
    z_error = ((tau + depth * U_DD) * 1.01 * sh * (1 + 2.0**-50)) * 1.01 + (
        between * 2.0**-952 + far * 2.0**-1082 + n_sum * 2.0**-1075
    ) * 1.01
    total = n_top + sh  # Ẑ >= 1 and Z >= 1: the maximum's term is exp(0) = 1
    zeta = z_error / total * 1.01  # relative to Z
    fail |= ~(np.isfinite(sh) & (total >= 1))
    if log:
        scalars = np.stack(dd_log(n_top, sh, sl, z_error))
        fail |= ~np.isfinite(scalars[2])
    else:
        # 1/Ẑ within 16u² (dd_inverse): charged U.
        scalars = np.stack([*dd_inverse(sh, sl), np.full(rows, U_DD)])
    # Softmax V = 2**K·(m ⊗ 1/Ẑ): relative radius from τ, ζ, 1/Ẑ's double-double and ⊗.
    rho = (tau + zeta * (1 + 2.0**-40) + scalars[2] + U_DD) * 1.01
    largest = 0.0 if log or fail.all() else float(rho[~fail].max())
    exceptional = bool((n_masked > 0).any() or (far > 0).any())

    # Pass 2: the values, rounded and certified, and outward float64 bounds.
    for r0, r1, c0, c1, _ in blocks:
        block = (slice(r0, r1), slice(c0, c1))
        s0, s1, s2 = (scalars[i, r0:r1, None] for i in range(3))
        if log:
            xh, xl, ex = shifted(data[block], top[r0:r1, None])
            vh, vl = dd_add(xh, xl, -s0, -s1)
            # AccurateDWPlusDW only adds: its relative bound holds down to 0 (a subnormal
            # sum is exact), so an exact 0 keeps radius 0; 2**-1073 covers the product
            # U·|v_h| underflowing.
            radius = (ex + s2 + 1.01 * U_DD * np.abs(vh)) * (1 + 2.0**-40) + np.where(
                vh == 0, 0.0, 2.0**-1073
            )
            sign = np.where(vh < 0, -1.0, 1.0)
            value, good = round_certify(sign, sign * vh, sign * vl, 0, radius, fmt, True)
            lo_b, hi_b = outward(vh, (np.abs(vl) + radius) * (1 + 2.0**-50))
            zero = -np.inf
        else:
            m = mh[block]
            k = kk[block].astype(np.int64)
            vh, vl = dd_mul(m, ml[block], s0, s1)
            radius = rho[r0:r1, None] * np.abs(vh)
            value, good = round_certify(1.0, vh, vl, k, radius, fmt, False)
            # 2**K·v_h and the spread may each lose 2**-1074 to underflow.
            half = k >> 1
            up, down = pow2(half), pow2(k - half)
            spread = (np.abs(vl) + radius) * (1 + 2.0**-50) * up * down + 2.0**-1070
            lo_b, hi_b = outward(vh * up * down, spread)
            lo_b = np.maximum(lo_b, 0.0)
            hi_b = np.minimum(hi_b, 1.0)
            zero = 0.0
        if exceptional:
            masked = data[block] == -np.inf
            if not log:
                # Below X_EXP_MIN the value is under 2**-1082: it rounds to 0 in every
                # format.
                tiny = (mh[block] == 0) & ~masked
                value = np.where(tiny, 0.0, value)
                good = good | tiny
                lo_b = np.where(tiny, 0.0, lo_b)
                hi_b = np.where(tiny, 5e-324, hi_b)
            value = np.where(masked, zero, value)
            lo_b = np.where(masked, zero, lo_b)
            hi_b = np.where(masked, zero, hi_b)
            good = good | masked
        values[block] = value
        lower[block] = lo_b
        upper[block] = hi_b
        certified[block] = good
    return fail, largest


_FLOAT64 = FORMATS["float64"]


def _enclosure_floats(enclosure: Enclosure) -> tuple[float, float, float, bool]:
    """An exact path enclosure as ``(value, lower, upper, certified)`` floats."""
    value = math.nan if enclosure.rounded is None else enclosure.rounded
    if enclosure.special is not None:
        return value, enclosure.special, enclosure.special, enclosure.certified
    if enclosure.lower == enclosure.upper == (0, 0):
        return value, 0.0, 0.0, enclosure.certified
    low = math.nextafter(round_dyadic(enclosure.lower, _FLOAT64), -math.inf)
    high = math.nextafter(round_dyadic(enclosure.upper, _FLOAT64), math.inf)
    return value, low, high, enclosure.certified


def _exact_row(
    row: F64,
    theta: Fraction,
    s: Fraction | None,
    log: bool,
    fmt: FloatFormat,
    engine: str,
    max_precision: int,
) -> tuple[F64, F64, F64, npt.NDArray[np.bool_], str, int]:
    """One row by the exact run-length path, expanded back to its elements."""
    evaluation = certified_softmax(
        LogitSequence.from_array(row),
        theta=theta,
        s=s,
        log=log,
        format=fmt.name,
        engine=engine,
        max_precision=max_precision,
    )
    width = row.size
    if evaluation.status != "ok":
        nan = np.full(width, np.nan)
        return nan, nan.copy(), nan.copy(), np.zeros(width, dtype=bool), evaluation.status, 0
    table = np.array([_enclosure_floats(run.enclosure) for run in evaluation.runs])
    logits = np.array([run.logit for run in evaluation.runs])
    index = np.searchsorted(logits, row)  # the runs are sorted, each logit is one of them
    assert np.array_equal(logits[index], row)
    picked = table[index]
    certified = picked[:, 3].astype(bool)
    lower, upper = picked[:, 1], picked[:, 2]
    if not log:
        lower, upper = np.maximum(lower, 0.0), np.minimum(upper, 1.0)
    return picked[:, 0], lower, upper, certified, "ok", evaluation.precision


def _row_blocks(rows: npt.NDArray[np.intp], width: int) -> list[tuple[int, int]]:
    """Contiguous ``[start, stop)`` row ranges of at most CHUNK elements (>= 1 row)."""
    per_chunk = max(1, CHUNK // width)
    blocks: list[tuple[int, int]] = []
    if rows.size == 0:
        return blocks
    breaks = np.flatnonzero(np.diff(rows) != 1) + 1
    for run in np.split(rows, breaks):
        for start in range(0, run.size, per_chunk):
            piece = run[start : start + per_chunk]
            blocks.append((int(piece[0]), int(piece[-1]) + 1))
    return blocks


def certified_softmax_dense(
    x: npt.ArrayLike,
    *,
    theta: object = 1,
    s: object = None,
    log: bool = False,
    format: str = "float64",
    engine: str | None = None,
    max_precision: int = DEFAULT_MAX_PRECISION,
) -> DenseEvaluation:
    """Certified softmax (or log-softmax) of a dense array, every element rounded.

    Parameters
    ----------
    x
        Logits: a 1-D array, or a 2-D array evaluated row by row (along the last axis).
        Any float or integer dtype; values are read as binary64 (exact for every float
        dtype).  ``±inf`` and NaN are allowed.
    theta
        Temperature ``θ > 0`` (int, float, Fraction or decimal string, read exactly).
    s
        Length scaling: when given, the inverse temperature is ``s·log(n)/θ`` with ``n``
        the row length.
    log
        Log-softmax instead of softmax.
    format
        ``"float16"``, ``"bfloat16"``, ``"float32"`` or ``"float64"``.
    engine
        ``"arb"`` or ``"mpmath"``: the ball engine of the exact path (rows the fast path
        leaves) and of ``s·log n``; arb when installed by default.
    max_precision
        The cap of the fallback's precision ladder, in bits.

    Returns
    -------
    DenseEvaluation
        Rounded values, outward float64 enclosures, the certified mask and how many rows
        and elements needed the exact path.

    Raises
    ------
    ValueError
        For an empty array, more than two dimensions, θ <= 0, s <= 0, an unknown format
        or engine.
    TypeError
        For non-real dtypes.
    PrecisionError
        When a row left to the exact path has no finite enclosure at ``max_precision``.

    Notes
    -----
    With ``x_j = (e_j − max e)·β`` (``β = 1/θ``), ``p_j = exp(x_j)/Z``, ``Z = Σ exp(x_j)``
    and ``log p_j = x_j − log Z``.  Error analysis (``u = 2**-53``, ``U = 2**-100``):

    * ``e_j − max e`` is exact as a double-double (TwoSum); for ``β ≠ 1`` one DWTimesDW
      by ``β`` (a double-double, relative error ``ε_β``) leaves ``|x̂ − x| <=
      1.02(ε_β + U)|x̂| + 2**-1000``, which costs a relative ``1.02|x̂ − x|`` in ``exp``.
    * ``exp(x_j) = 2**K_j·m_j·(1 + τ_j)`` with ``|τ_j| <= τ₀`` (about ``2**-98.4``, see
      :func:`fast_path_bounds`) plus the logit's error, for ``x_j >= −750``.
    * ``Ẑ``: the terms with ``x_j >= −660`` summed pairwise in double-double (blocks of
      8192, then their partial sums); every term and every partial sum is positive, so
      the relative errors do not compound beyond ``(1 + τ)(1 + U)**D`` with ``D`` the
      depth of the tree; the terms left out are each below ``2**-952``.  As ``Z >= 1``,
      ``Ẑ = Z(1 + ζ)`` with ``ζ`` about ``2**-95.6`` at ``n = 10**5``.  (For log-softmax
      the ``c`` maxima, exactly 1 each, are kept apart: ``Z = c + S``.)
    * Softmax: ``1/Ẑ`` by one Newton step from the IEEE quotient (``16u²``, see
      ``dd_inverse``), one DWTimesDW with ``m_j``: the value ``2**K_j·v_j`` has relative
      error ``<= ρ = 1.01(τ + ζ + 2U)``.  Values with ``x_j < −750`` are below
      ``2**-1082`` and round to 0 in every format.
    * Log-softmax: ``log Z`` as a double-double with an absolute bound (``dd_log``: a
      ``log1p`` series, relatively accurate, for one maximum and ``S <= 2**-8``; else a
      Newton step with the certified exponential); one AccurateDWPlusDW (no cancellation:
      ``x_j <= 0 <= log Z``) adds ``1.01U|ℓ̂_j|``.
    * Rounding: see the notes of ``round_certify``; an element is certified only if its
      whole enclosure rounds to one float, so a value within about ``ρ`` of a rounding
      boundary sends its row to :func:`~softmax_dispersion.numerics.certified_softmax`
      (so do overflowing differences of logits, rows with NaN, ``+inf`` or only ``−inf``).

    At ``n = 10**5`` and float64 ``ρ ≈ 2**-95``: a random value is uncertified with
    probability about ``2**-41``.

    Examples
    --------
    >>> result = certified_softmax_dense([1.0, 2.0, 3.0])
    >>> result.values.tolist(), result.all_certified
    ([0.09003057317038046, 0.24472847105479764, 0.6652409557748219], True)
    >>> rows = certified_softmax_dense([[0.0, -np.inf], [5.0, 5.0]], log=True, format="float16")
    >>> rows.values.tolist()
    [[0.0, -inf], [-0.693359375, -0.693359375]]
    >>> certified_softmax_dense([1.0, np.nan]).status
    ('nan',)
    """
    data = np.asarray(x)
    if data.ndim not in (1, 2):
        raise ValueError(f"expected a 1-D or 2-D array, got shape {data.shape}")
    if data.size == 0:
        raise ValueError("a logit sequence needs at least one value (n >= 1)")
    if not (np.issubdtype(data.dtype, np.floating) or np.issubdtype(data.dtype, np.integer)):
        raise TypeError(f"expected real numbers, got dtype {data.dtype}")
    exact_theta = exact_value("theta", theta)
    exact_s = None if s is None else exact_value("s", s)
    fmt = float_format(format)
    bk = backend(engine)
    shape = data.shape
    grid = np.ascontiguousarray(data, dtype=np.float64).reshape(-1, shape[-1])
    rows, width = grid.shape
    beta = _beta(bk, exact_theta, exact_s, width)
    values = np.empty((rows, width))
    lower = np.empty((rows, width))
    upper = np.empty((rows, width))
    certified = np.zeros((rows, width), dtype=bool)
    status = ["ok"] * rows
    precision = FAST_PRECISION
    largest = 0.0
    fallback_elements = 0
    with np.errstate(all="ignore"):
        top = grid.max(axis=1)  # NaN when the row has one
        special = ~np.isfinite(top)
        if not (2.0**-900 < beta.hi < 2.0**900) or not ieee_arithmetic():
            special[:] = True
        exact_rows: list[int] = [int(r) for r in np.flatnonzero(special)]
        for start, stop in _row_blocks(np.flatnonzero(~special), width):
            view = slice(start, stop)
            out = (values[view], lower[view], upper[view], certified[view])
            fail, bound = _fast_chunk(grid[view], beta, log, fmt, out)
            largest = max(largest, bound)
            unsure = fail | ~certified[view].all(axis=1)
            fallback_elements += int(fail.sum()) * width
            fallback_elements += int((~certified[view][~fail]).sum())
            exact_rows.extend(start + int(r) for r in np.flatnonzero(unsure))
    for r in sorted(exact_rows):
        row_values, row_lower, row_upper, row_certified, row_status, bits = _exact_row(
            grid[r], exact_theta, exact_s, log, fmt, bk.name, max_precision
        )
        values[r], lower[r], upper[r], certified[r] = (
            row_values,
            row_lower,
            row_upper,
            row_certified,
        )
        status[r] = row_status
        precision = max(precision, bits)
    return DenseEvaluation(
        function="log_softmax" if log else "softmax",
        values=values.reshape(shape),
        lower=lower.reshape(shape),
        upper=upper.reshape(shape),
        certified=certified.reshape(shape),
        status=tuple(status),
        format=fmt.name,
        engine=bk.name,
        precision=precision,
        relative_bound=largest,
        fallback_rows=len(exact_rows),
        fallback_elements=fallback_elements,
    )
