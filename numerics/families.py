"""Adversarial logit families: the inputs that make softmax bounds tight or break softmaxes.

Each family is a function returning a :class:`~softmax_dispersion.numerics.sequence.
LogitSequence`.  Families with few distinct values are built in run-length form, so
their length ``n`` can be ``10**18``; families of many distinct values (random rows,
ladders) are dense and capped at :data:`DENSE_LIMIT` logits.  Every family is also in
the :data:`FAMILIES` registry, which says which parameters it takes, which claims it
stresses, and which public bug report its input comes from.

Examples
--------
>>> spike(10**18, 5).runs
((0.0, 999999999999999999), (5.0, 1))
>>> FAMILIES["spike"].build(n=16, delta=2.5).maximum
2.5
>>> sorted(FAMILIES)[:4]
['dip', 'geometric_ladder', 'huge_magnitude', 'long_uniform']
"""

from __future__ import annotations

import inspect
import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal

from softmax_dispersion.numerics.rounding import (
    FloatFormat,
    dyadic_from_float,
    float_format,
    round_dyadic,
)

# numpy, the sequences and the theory's exact reader load when a family is built, so that
# the registry (the command line's --family help) is read without them.
if TYPE_CHECKING:
    import numpy as np

    from softmax_dispersion.numerics.sequence import LogitSequence

__all__ = [
    "DENSE_LIMIT",
    "FAMILIES",
    "NON_FINITE_KINDS",
    "OFF_BLOCK_LENGTHS",
    "Family",
    "dip",
    "geometric_ladder",
    "huge_magnitude",
    "long_uniform",
    "near_ties",
    "non_finite",
    "off_block",
    "sentinel_floor",
    "spike",
    "tiny_gaps",
    "two_level",
]

DENSE_LIMIT = 10**6
"""The largest ``n`` of the dense families (one run per logit)."""
OFF_BLOCK_LENGTHS = (137, 1238)
"""Row lengths off the usual kernel block sizes that split fused and reference paths."""
LONG_UNIFORM_MIN = 2049
"""The shortest row on which a 16-bit running sum of ``1/n``-sized terms stalls."""
SENTINEL_CEILING = -5e4
"""Sentinel-floor rows lie at or below this value."""
NonFiniteKind = Literal["plus_inf", "minus_inf_row", "nan", "masked"]
NON_FINITE_KINDS: tuple[NonFiniteKind, ...] = ("plus_inf", "minus_inf_row", "nan", "masked")
"""The kinds of :func:`non_finite` rows."""


# ---------------------------------------------------------------------------------------
# Input validation: every message names the argument and what was expected.


def _length(n: object, minimum: int = 1, maximum: int | None = None) -> int:
    import numpy as np

    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise ValueError(f"n must be an integer >= {minimum}, got {n!r}")
    if n < minimum:
        raise ValueError(f"n must be an integer >= {minimum}, got {n}")
    if maximum is not None and n > maximum:
        raise ValueError(
            f"n must be at most {maximum} for this dense family (one run per logit), got {n}"
        )
    return int(n)


def _spread(delta: object) -> Fraction:
    from softmax_dispersion.theory.formulas import exact_value

    exact = exact_value("delta", delta)
    if exact < 0:
        raise ValueError(f"delta must be a number >= 0, got {delta}")
    return exact


def _float(name: str, value: object) -> float:
    from softmax_dispersion.theory.formulas import exact_value

    number = float(exact_value(name, value))
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite binary64 number, got {value!r}")
    return number


def _top(low: float, delta: Fraction) -> float:
    """The binary64 value nearest ``low + delta`` (correctly rounded from the exact sum)."""
    try:
        high = float(Fraction(low) + delta)
    except OverflowError:
        high = math.inf
    if not math.isfinite(high):
        raise ValueError("delta takes low + delta beyond the binary64 range (about 1.8e308)")
    if delta > 0 and high == low:
        raise ValueError(
            f"delta must exceed the binary64 spacing at low = {low}, got {float(delta)}"
        )
    return high


def _format(dtype: str) -> FloatFormat:
    try:
        return float_format(dtype)
    except ValueError:
        raise ValueError(
            f"dtype must be one of float16, bfloat16, float32, float64, got {dtype!r}"
        ) from None


def _rng(seed: object) -> np.random.Generator:
    import numpy as np

    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
        raise ValueError(f"seed must be an integer or None, got {seed!r}")
    return np.random.default_rng(seed)


def _round_to(values: np.ndarray[Any, Any], fmt: FloatFormat) -> np.ndarray[Any, Any]:
    """Round binary64 values to ``fmt`` once, directly (stored back as binary64)."""
    import numpy as np

    if fmt.name == "float64":
        return values.astype(np.float64)
    if fmt.name in ("float32", "float16"):  # IEEE conversions: round to nearest even
        return values.astype(fmt.name).astype(np.float64)
    return np.array([round_dyadic(dyadic_from_float(float(v)), fmt) for v in values])


def _round_down(value: float, fmt: FloatFormat) -> float:
    """The largest value of ``fmt`` at or below ``value``."""
    nearest = round_dyadic(dyadic_from_float(value), fmt)
    if nearest <= value:
        return nearest
    _, exponent = math.frexp(abs(nearest))  # |nearest| in [2**(exponent−1), 2**exponent)
    return nearest - math.ldexp(1.0, max(exponent - 1, fmt.emin) - fmt.precision + 1)


def _representable(name: str, value: float, fmt: FloatFormat) -> float:
    if round_dyadic(dyadic_from_float(value), fmt) != value:
        raise ValueError(f"{name} must be representable in {fmt.name}, got {value}")
    return value


# ---------------------------------------------------------------------------------------
# The families.


def spike(n: int, delta: object, low: object = 0.0) -> LogitSequence:
    """One logit at ``low + delta`` and ``n − 1`` at ``low``: T1's upper extremal.

    Stresses **T1** (the spike attains the upper bound ``c/(c+n−1)`` exactly),
    **T2** (the paper's ``c/n`` is loose by ``(n−1)/(c+n−1)``), **T4** (the spike is
    the sequence that exceeds ε below the dispersion size), **T10** (under
    ``β = s·log n`` its top coefficient is ``n^{sδ}/(n^{sδ}+n−1)``) and **T11** (the
    adaptive rule's entropy on it crosses the root of ``P − 1``).

    Parameters
    ----------
    n
        Number of logits, an integer >= 1 (any size: two runs).
    delta
        Spread ``δ >= 0`` (int, float, Fraction or decimal string).
    low
        The floor ``m``; the top logit is the binary64 value nearest ``m + δ``.

    Returns
    -------
    LogitSequence
        ``[(low, n − 1), (low + delta, 1)]`` in run-length form.

    Raises
    ------
    ValueError
        For ``n < 1``, ``delta < 0``, a non-finite ``low``, or a ``delta`` lost in
        rounding ``low + delta``.

    Notes
    -----
    With ``c = exp(δ/θ)`` the top coefficient is ``c/(c+n−1)`` and the others
    ``1/(c+n−1)``.  The checks use the sequence's exact spread, i.e. the difference of
    the two binary64 values.

    Examples
    --------
    >>> spike(4, 2).runs
    ((0.0, 3), (2.0, 1))
    >>> spike(1, 3, low=-1).runs
    ((2.0, 1),)
    """
    from softmax_dispersion.numerics.sequence import LogitSequence

    n = _length(n)
    base = _float("low", low)
    high = _top(base, _spread(delta))
    if n == 1:
        return LogitSequence.from_runs([(high, 1)])
    return LogitSequence.from_runs([(high, 1), (base, n - 1)])


def dip(n: int, delta: object, low: object = 0.0) -> LogitSequence:
    """One logit at ``low`` and ``n − 1`` at ``low + delta``: T1's lower extremal.

    Stresses **T1** (the low logit's coefficient attains ``1/(1+(n−1)c)``) and **T2**
    (the paper's ``1/(nc)`` is loose).

    Parameters
    ----------
    n
        Number of logits, an integer >= 1 (any size: two runs).
    delta
        Spread ``δ >= 0``.
    low
        The low logit ``m``; the others sit at the binary64 value nearest ``m + δ``.

    Returns
    -------
    LogitSequence
        ``[(low, 1), (low + delta, n − 1)]``.

    Notes
    -----
    The low coefficient is ``1/(1+(n−1)c)`` with ``c = exp(δ/θ)``; the others are
    ``c/(1+(n−1)c)``.

    Examples
    --------
    >>> dip(5, 1).runs
    ((0.0, 1), (1.0, 4))
    """
    from softmax_dispersion.numerics.sequence import LogitSequence

    n = _length(n)
    base = _float("low", low)
    high = _top(base, _spread(delta))
    if n == 1:
        return LogitSequence.from_runs([(base, 1)])
    return LogitSequence.from_runs([(base, 1), (high, n - 1)])


def two_level(n: int, k_high: int, delta: object, low: object = 0.0) -> LogitSequence:
    """``k_high`` logits at ``low + delta`` and ``n − k_high`` at ``low``.

    Interpolates between the spike (``k_high = 1``) and the dip (``k_high = n − 1``).
    Stresses **T1** in the interior (the top coefficient ``c/(k c + n − k)`` is strictly
    below ``c/(c+n−1)`` for ``k > 1``, ``δ > 0``) and **T4** (no two-level row with
    ``k >= 2`` needs the full dispersion size).

    Parameters
    ----------
    n
        Number of logits, an integer >= 1 (any size: two runs).
    k_high
        How many logits sit at the top, ``1 <= k_high <= n``.
    delta
        Spread ``δ >= 0``.
    low
        The floor ``m``.

    Notes
    -----
    With ``c = exp(δ/θ)`` and ``k = k_high``: top coefficients ``c/(kc + n − k)``, the
    others ``1/(kc + n − k)``.

    Examples
    --------
    >>> two_level(10, 3, 1.5).runs
    ((0.0, 7), (1.5, 3))
    >>> two_level(10, 11, 1.5)
    Traceback (most recent call last):
    ...
    ValueError: k_high must be an integer with 1 <= k_high <= n = 10, got 11
    """
    import numpy as np

    from softmax_dispersion.numerics.sequence import LogitSequence

    n = _length(n)
    if isinstance(k_high, bool) or not isinstance(k_high, (int, np.integer)):
        raise ValueError(f"k_high must be an integer with 1 <= k_high <= n = {n}, got {k_high!r}")
    if not 1 <= k_high <= n:
        raise ValueError(f"k_high must be an integer with 1 <= k_high <= n = {n}, got {k_high}")
    base = _float("low", low)
    high = _top(base, _spread(delta))
    runs = [(high, int(k_high))]
    if k_high < n:
        runs.append((base, n - int(k_high)))
    return LogitSequence.from_runs(runs)


def near_ties(
    n: int, gap_ulps: int = 1, dtype: str = "float32", seed: int | None = 0
) -> LogitSequence:
    """Logits at 1.0 or ``gap_ulps`` units in the last place above it, at random.

    Every coefficient is ``1/n`` to within a relative ``gap_ulps·2^{1−p}``, so correctly
    rounding them is hard: the two values differ only in the last few bits.  Stresses
    **T12** (rounding error; a certified oracle must raise its precision to separate
    near-ties) and **T1** with a tiny spread (both bounds within ``O(δ/n)`` of ``1/n``).

    Parameters
    ----------
    n
        Number of logits, an integer >= 1 (any size: at most two runs).
    gap_ulps
        The gap between the two levels in units in the last place of ``dtype`` at 1.0,
        an integer >= 1.
    dtype
        ``"float16"``, ``"bfloat16"``, ``"float32"`` or ``"float64"``: both levels are
        representable in it.
    seed
        Seed of the random split (``None`` for fresh entropy).

    Notes
    -----
    The levels are ``1`` and ``1 + g·2^{1−p}`` (``p`` the format's precision, ``g`` the
    gap in ulps, kept below one binade); for ``n >= 2`` at least one logit sits on each
    level, the number on the upper one uniform in ``[1, n − 1]``.

    Examples
    --------
    >>> row = near_ties(1000, gap_ulps=2, dtype="float16", seed=1)
    >>> [value for value, _ in row.runs], row.n
    ([1.0, 1.001953125], 1000)
    """
    import numpy as np

    from softmax_dispersion.numerics.sequence import LogitSequence

    n = _length(n)
    if isinstance(gap_ulps, bool) or not isinstance(gap_ulps, (int, np.integer)) or gap_ulps < 1:
        raise ValueError(f"gap_ulps must be an integer >= 1, got {gap_ulps!r}")
    fmt = _format(dtype)
    if gap_ulps >= 2 ** (fmt.precision - 1):
        raise ValueError(
            f"gap_ulps must be below {2 ** (fmt.precision - 1)} for {fmt.name}, got {gap_ulps}"
        )
    upper = 1.0 + math.ldexp(int(gap_ulps), 1 - fmt.precision)
    _rng(seed)  # validates the seed
    if n == 1:
        return LogitSequence.from_runs([(1.0, 1)])
    k_high = random.Random(seed).randint(1, n - 1)
    return LogitSequence.from_runs([(1.0, n - k_high), (upper, k_high)])


def geometric_ladder(n: int, ratio: object = 2.0) -> LogitSequence:
    """Logits ``e_k = −k·log(ratio)``, ``k = 0, …, n−1``: geometric coefficients.

    Each coefficient is about ``1/ratio`` times the one before, so the top one stays near
    ``1 − 1/ratio`` however long the row: sharpness bought with a spread ``(n−1)·log
    ratio`` that grows linearly in ``n``.  Stresses **T5** (sharpness needs spread
    growing like ``log n``; here it grows faster), **T1** far from tight, **T6** (the
    entropy stays bounded) and **T12** (the tail underflows: coefficients below the
    smallest subnormal must round to 0 correctly).

    Parameters
    ----------
    n
        Number of logits, ``1 <= n <=`` :data:`DENSE_LIMIT` (dense).
    ratio
        The ratio ``r > 0`` of consecutive coefficients; ``r = 1`` gives a uniform row,
        ``r < 1`` a rising ladder.

    Notes
    -----
    ``e_k = fl(−k · fl(log r))`` in binary64, so ``p_{k+1}/p_k = exp(e_{k+1} − e_k)`` is
    ``1/r`` up to the rounding of the logits.

    Examples
    --------
    >>> [round(v, 6) for v, _ in geometric_ladder(3, 2).runs]
    [-1.386294, -0.693147, 0.0]
    """
    import numpy as np

    from softmax_dispersion.numerics.sequence import LogitSequence

    n = _length(n, maximum=DENSE_LIMIT)
    r = _float("ratio", ratio)
    if r <= 0:
        raise ValueError(f"ratio must be a number > 0, got {ratio}")
    step = math.log(r)
    return LogitSequence.from_array(-np.arange(n, dtype=np.float64) * step + 0.0)  # no −0


def huge_magnitude(n: int, scale: object = 1e300, seed: int | None = 0) -> LogitSequence:
    """Random logits of magnitude up to ``scale`` (from ±1e4 to ±1e300), both ends present.

    Without the max shift, ``exp`` overflows from 89 (float32) or 710 (float64); with it,
    the row is a hard one-hot.  Stresses **T12** (the max-shifted evaluation stays
    accurate; unshifted ones return inf/NaN), **T1** with an astronomical spread
    (``c = exp(2·scale)``: the bounds tend to 1 and 0) and the engines' handling of
    exponents far beyond any float.

    Parameters
    ----------
    n
        Number of logits, ``1 <= n <=`` :data:`DENSE_LIMIT` (dense).
    scale
        The magnitude, a finite number >= 1; the PAPER's cases are 1e4 to 1e300.
    seed
        Seed of the random values (``None`` for fresh entropy).

    Notes
    -----
    ``e_0 = +scale``, ``e_1 = −scale`` (for ``n >= 2``), the rest ``scale·u`` with
    ``u`` uniform in ``[−1, 1]``; the spread is ``2·scale``.

    Examples
    --------
    >>> row = huge_magnitude(5, scale=1e300, seed=0)
    >>> row.maximum, row.minimum, row.n
    (1e+300, -1e+300, 5)
    """
    from softmax_dispersion.numerics.sequence import LogitSequence

    n = _length(n, maximum=DENSE_LIMIT)
    size = _float("scale", scale)
    if size < 1:
        raise ValueError(f"scale must be a finite number >= 1, got {scale}")
    values = _rng(seed).uniform(-1.0, 1.0, n) * size
    values[0] = size
    if n >= 2:
        values[1] = -size
    return LogitSequence.from_array(values)


def sentinel_floor(
    n: int,
    floor: object = SENTINEL_CEILING,
    seed: int | None = 0,
    *,
    width: object = 8.0,
    dtype: str = "float32",
) -> LogitSequence:
    """A row whose logits all lie at or below ``floor`` (at most −5e4): a masked-looking row.

    An online softmax that starts its running maximum at a finite sentinel (−5e4, or
    ``finfo.min``) returns all zeros on such a row.  Stresses **T1** (the row is an
    ordinary bounded row: shifting all logits changes nothing, so the bounds hold with
    the row's own spread) and **T12** (the max shift must use the row's maximum).
    ``floor = -3.4028234663852886e38`` gives rows at ``finfo(float32).min``.

    Parameters
    ----------
    n
        Number of logits, ``1 <= n <=`` :data:`DENSE_LIMIT` (dense).
    floor
        The ceiling of the row, a number <= −5e4 (rounded down into ``dtype``: −5e4
        becomes −50016 in float16 and −50176 in bfloat16).
    seed
        Seed of the random offsets.
    width
        The logits lie in ``[floor − width, floor]`` (before rounding), ``width >= 0``.
    dtype
        The format the logits are rounded to (rounding keeps them <= ``floor``).

    Notes
    -----
    ``e_0 = floor``, the rest ``fl(floor − width·u)`` with ``u`` uniform in ``[0, 1)``,
    ``fl`` rounding to ``dtype`` (which keeps them <= ``floor``, a value of ``dtype``).

    Examples
    --------
    >>> row = sentinel_floor(6, seed=3)
    >>> row.maximum, row.minimum >= -5e4 - 8
    (-50000.0, True)
    """
    import numpy as np

    from softmax_dispersion.numerics.sequence import LogitSequence

    n = _length(n, maximum=DENSE_LIMIT)
    fmt = _format(dtype)
    requested = _float("floor", floor)
    if requested > SENTINEL_CEILING:
        raise ValueError(f"floor must be a number <= {SENTINEL_CEILING:g}, got {floor}")
    top = _round_down(requested, fmt)
    if not math.isfinite(top):
        raise ValueError(f"floor must lie within the range of {fmt.name}, got {floor}")
    spread = _float("width", width)
    if spread < 0:
        raise ValueError(f"width must be a number >= 0, got {width}")
    values = top - spread * _rng(seed).uniform(0.0, 1.0, n)
    values[0] = top
    rounded = _round_to(values, fmt)
    if not np.all(np.isfinite(rounded)):
        raise ValueError(f"floor − width overflows {fmt.name}; use a smaller width")
    return LogitSequence.from_array(rounded)


def tiny_gaps(n: int, dtype: str = "float32", start: object = 1.0) -> LogitSequence:
    """``n`` consecutive floats of ``dtype`` from ``start`` upward: gaps of exactly 1 ulp.

    All coefficients are distinct but differ by a factor ``exp(ulp)``, so their correct
    rounding (and order) is the whole difficulty.  Stresses **T12** (rounding error) and
    **T1** with a spread of ``n − 1`` ulps.

    Parameters
    ----------
    n
        Number of logits, ``1 <= n <=`` :data:`DENSE_LIMIT` (dense).
    dtype
        ``"float16"``, ``"bfloat16"``, ``"float32"`` or ``"float64"``.
    start
        The first logit, representable in ``dtype``.

    Notes
    -----
    ``e_{k+1}`` is the next float of ``dtype`` above ``e_k`` (through the bit patterns,
    so binade boundaries are crossed correctly).

    Examples
    --------
    >>> [v for v, _ in tiny_gaps(3, dtype="float16").runs]
    [1.0, 1.0009765625, 1.001953125]
    """
    import numpy as np

    from softmax_dispersion.numerics.sequence import LogitSequence

    n = _length(n, maximum=DENSE_LIMIT)
    fmt = _format(dtype)
    first = _representable("start", _float("start", start), fmt)
    values = _consecutive(first, n, fmt)
    if not np.all(np.isfinite(values)):
        raise ValueError(f"n = {n} floats from start = {first} overflow {fmt.name}")
    return LogitSequence.from_array(values)


def _consecutive(first: float, n: int, fmt: FloatFormat) -> np.ndarray[Any, Any]:
    """``n`` consecutive values of ``fmt`` upward from ``first`` (bit-pattern stepping)."""
    import numpy as np

    if fmt.name == "bfloat16":  # the upper half of a float32 pattern
        bits, pattern = 16, int(np.float32(first).view(np.uint32)) >> 16
    else:
        bits = 8 * np.dtype(fmt.name).itemsize
        pattern = int(np.array(first, dtype=fmt.name).view(f"uint{bits}"))
    sign = 1 << (bits - 1)
    # IEEE patterns in numeric order: negatives count down to −0, then positives count up.
    ordinal = pattern if pattern < sign else -(pattern - sign)
    patterns = [k if k >= 0 else sign - k for k in range(ordinal, ordinal + n)]
    if fmt.name == "bfloat16":
        wide = np.array(patterns, dtype=np.uint32) << np.uint32(16)
        return wide.view(np.float32).astype(np.float64)
    return np.array(patterns, dtype=f"uint{bits}").view(fmt.name).astype(np.float64)


def long_uniform(n: int = 4096, value: object = 0.0) -> LogitSequence:
    """``n >= 2049`` equal logits: the row on which 16-bit accumulation stalls.

    A float16/bfloat16 running sum of ``n`` terms ``1`` stalls at 2048 (``2048 + 1``
    rounds back to 2048), so row sums come out as 1.29 at ``n = 4096`` (f16) or 0.865 at
    8192 (bf16).  Stresses **T1** at ``δ = 0`` (every bound equals ``1/n`` and is
    attained) and **T12** (the summation error term ``γ_n``).

    Parameters
    ----------
    n
        Number of logits, an integer >= 2049 (any size: one run).
    value
        The common logit.

    Notes
    -----
    Every coefficient is exactly ``1/n``.

    Examples
    --------
    >>> long_uniform(4096).runs
    ((0.0, 4096),)
    """
    from softmax_dispersion.numerics.sequence import LogitSequence

    n = _length(n, minimum=LONG_UNIFORM_MIN)
    return LogitSequence.from_runs([(_float("value", value), n)])


def non_finite(kind: NonFiniteKind, n: int = 8) -> LogitSequence:
    """Rows with ``+inf``, NaN or ``−inf`` entries: policy cases, not accuracy cases.

    Outside T1's hypotheses (the logits are not bounded), these rows test the limit
    semantics and the policies of the oracle (§5): ``"plus_inf"`` (one ``+inf`` among
    zeros; the limit is one-hot, naive code gives NaN), ``"minus_inf_row"`` (every entry
    ``−inf``: a fully masked row, 0/0), ``"nan"`` (one NaN among zeros: NaN must not be
    silently zeroed) and ``"masked"`` (the first ``⌊n/2⌋`` entries ``−inf``; the rest
    share the mass uniformly, and T1 applies to the visible part).

    Parameters
    ----------
    kind
        One of :data:`NON_FINITE_KINDS`.
    n
        Number of logits (any size: at most two runs); ``"masked"`` needs ``n >= 2``.

    Notes
    -----
    Expected values: ``plus_inf`` gives 1 at the ``+inf`` and 0 elsewhere;
    ``masked`` gives ``1/⌈n/2⌉`` to each visible logit and 0 to the masked ones;
    ``minus_inf_row`` is undefined and ``nan`` is NaN everywhere.

    Examples
    --------
    >>> non_finite("masked", 5).runs
    ((-inf, 2), (0.0, 3))
    >>> non_finite("nan", 3).has_nan
    True
    """
    from softmax_dispersion.numerics.sequence import LogitSequence

    if kind not in NON_FINITE_KINDS:
        raise ValueError(f"kind must be one of {', '.join(NON_FINITE_KINDS)}, got {kind!r}")
    n = _length(n, minimum=2 if kind == "masked" else 1)
    if kind == "minus_inf_row":
        return LogitSequence.from_runs([(-math.inf, n)])
    if kind == "masked":
        return LogitSequence.from_runs([(-math.inf, n // 2), (0.0, n - n // 2)])
    special = math.inf if kind == "plus_inf" else math.nan
    runs = [(special, 1)] + ([(0.0, n - 1)] if n > 1 else [])
    return LogitSequence.from_runs(runs)


def off_block(
    n: int = OFF_BLOCK_LENGTHS[0],
    seed: int | None = 0,
    *,
    scale: object = 4.0,
    dtype: str = "float32",
) -> LogitSequence:
    """A random row of a length off the usual block sizes (137, 1238 reported).

    Fused kernels tile rows into blocks of 16–128; the tail block's masking is where
    fused and reference paths have disagreed.  Stresses **T12** (agreement to the
    rounding-error bound at every length) and **T1** on generic rows (never tight).

    Parameters
    ----------
    n
        Number of logits, ``1 <= n <=`` :data:`DENSE_LIMIT`; the reported lengths are
        :data:`OFF_BLOCK_LENGTHS`.
    seed
        Seed of the random values.
    scale
        Standard deviation of the logits (a number > 0).
    dtype
        The format the logits are rounded to.

    Notes
    -----
    ``e_k = fl(scale · z_k)`` with ``z_k`` standard normal.

    Examples
    --------
    >>> off_block(1238, seed=2).n
    1238
    """
    from softmax_dispersion.numerics.sequence import LogitSequence

    n = _length(n, maximum=DENSE_LIMIT)
    fmt = _format(dtype)
    size = _float("scale", scale)
    if size <= 0:
        raise ValueError(f"scale must be a number > 0, got {scale}")
    return LogitSequence.from_array(_round_to(_rng(seed).standard_normal(n) * size, fmt))


# ---------------------------------------------------------------------------------------
# The registry.


@dataclass(frozen=True)
class Family:
    """A registered adversarial family: how to build it and what it stresses.

    Attributes
    ----------
    name : str
        The registry key (the CLI's ``--family NAME``).
    function : callable
        The builder; returns a :class:`LogitSequence`.
    parameters : mapping of str to str
        Every parameter the builder takes, with a description (``n`` first).
    claims : tuple of str
        The claims the family stresses (``"T1"``, ...).
    summary : str
        One line on what the family is.
    source : str
        The public bug report the input comes from, if any.
    finite : bool
        Whether its rows are finite (so T1–T2 apply).
    max_n : int or None
        The largest ``n`` (``None``: run-length, any ``n``).
    min_n : int
        The smallest ``n``.
    fixed : mapping of str to object
        Arguments bound by the registry (the ``kind`` of a non-finite row).
    """

    name: str
    function: Callable[..., LogitSequence]
    parameters: Mapping[str, str]
    claims: tuple[str, ...]
    summary: str
    source: str = ""
    finite: bool = True
    max_n: int | None = None
    min_n: int = 1
    fixed: Mapping[str, object] = field(default_factory=dict)

    def takes(self, parameter: str) -> bool:
        """Whether the family takes ``parameter`` (e.g. ``"delta"``)."""
        return parameter in self.parameters

    @property
    def defaults(self) -> dict[str, object]:
        """The defaults of the optional parameters, from the builder's signature."""
        signature = inspect.signature(self.function)
        return {
            name: p.default
            for name, p in signature.parameters.items()
            if name in self.parameters and p.default is not inspect.Parameter.empty
        }

    @property
    def required(self) -> tuple[str, ...]:
        """The parameters without defaults."""
        return tuple(name for name in self.parameters if name not in self.defaults)

    def build(self, **parameters: object) -> LogitSequence:
        """Build a row; parameters it does not take are an error, ``None`` means default.

        Raises
        ------
        ValueError
            For a parameter the family does not take, a missing one, or a bad value.
        """
        given = {k: v for k, v in parameters.items() if v is not None}
        unknown = sorted(set(given) - set(self.parameters))
        if unknown:
            raise ValueError(
                f"family {self.name!r} takes {', '.join(self.parameters)}; not {', '.join(unknown)}"
            )
        missing = [name for name in self.required if name not in given]
        if missing:
            raise ValueError(f"family {self.name!r} needs {', '.join(missing)}")
        return self.function(**self.fixed, **given)


def _register(*families: Family) -> dict[str, Family]:
    return {family.name: family for family in sorted(families, key=lambda f: f.name)}


_N = "number of logits"
_DELTA = "spread δ = max − min (>= 0)"
_SEED = "random seed (integer)"
_DTYPE = "float format: float16, bfloat16, float32 or float64"

FAMILIES: dict[str, Family] = _register(
    Family(
        "spike",
        spike,
        {"n": _N, "delta": _DELTA, "low": "the floor m"},
        ("T1", "T2", "T4", "T10", "T11"),
        "one logit at m + δ, n − 1 at m: attains T1's upper bound",
    ),
    Family(
        "dip",
        dip,
        {"n": _N, "delta": _DELTA, "low": "the low logit m"},
        ("T1", "T2"),
        "one logit at m, n − 1 at m + δ: attains T1's lower bound",
    ),
    Family(
        "two_level",
        two_level,
        {"n": _N, "k_high": "how many logits at the top", "delta": _DELTA, "low": "floor"},
        ("T1", "T4"),
        "k logits at m + δ, n − k at m",
    ),
    Family(
        "near_ties",
        near_ties,
        {"n": _N, "gap_ulps": "gap between the levels in ulps", "dtype": _DTYPE, "seed": _SEED},
        ("T12", "T1"),
        "logits at 1 and 1 + g ulps: coefficients tie to the last bits",
    ),
    Family(
        "geometric_ladder",
        geometric_ladder,
        {"n": _N, "ratio": "ratio of consecutive coefficients (> 0)"},
        ("T5", "T1", "T6", "T12"),
        "e_k = −k log r: geometric coefficients, spread growing linearly",
        max_n=DENSE_LIMIT,
    ),
    Family(
        "huge_magnitude",
        huge_magnitude,
        {"n": _N, "scale": "magnitude, 1e4 to 1e300", "seed": _SEED},
        ("T12", "T1"),
        "random logits in [−scale, scale]: overflow without the max shift",
        source="dwave-optimization issue 555; candle issue 2356",
        max_n=DENSE_LIMIT,
    ),
    Family(
        "sentinel_floor",
        sentinel_floor,
        {
            "n": _N,
            "floor": "ceiling of the row (<= −5e4)",
            "seed": _SEED,
            "width": "depth of the row below the floor",
            "dtype": _DTYPE,
        },
        ("T1", "T12"),
        "every logit at or below −5e4: online softmax with a finite start returns zeros",
        source="flashinfer issue 4267; pytorch issues 110213, 109517",
        max_n=DENSE_LIMIT,
    ),
    Family(
        "tiny_gaps",
        tiny_gaps,
        {"n": _N, "dtype": _DTYPE, "start": "first logit"},
        ("T12", "T1"),
        "consecutive floats: logits 1 ulp apart",
        max_n=DENSE_LIMIT,
    ),
    Family(
        "long_uniform",
        long_uniform,
        {"n": "number of logits (>= 2049)", "value": "the common logit"},
        ("T1", "T12"),
        "n >= 2049 equal logits: 16-bit sums stall at 2048",
        source="sonos/tract PR 2586; tenstorrent/tt-metal issue 52045",
        min_n=LONG_UNIFORM_MIN,
    ),
    Family(
        "off_block",
        off_block,
        {"n": _N, "seed": _SEED, "scale": "standard deviation", "dtype": _DTYPE},
        ("T12", "T1"),
        "random row of length 137 or 1238, off the kernel block sizes",
        source="pytorch issue 123911; attention-gym issue 50",
        max_n=DENSE_LIMIT,
    ),
    *(
        Family(
            kind,
            non_finite,
            {"n": _N},
            (),
            summary,
            source=source,
            finite=False,
            min_n=2 if kind == "masked" else 1,
            fixed={"kind": kind},
        )
        for kind, summary, source in (
            ("plus_inf", "one +inf among zeros: the limit is one-hot", "pytorch issue 6864"),
            ("minus_inf_row", "every logit −inf: a fully masked row", "pytorch issue 25110"),
            ("nan", "one NaN among zeros", "pytorch issue 101967"),
            ("masked", "half the logits −inf", "pytorch issue 103749"),
        )
    ),
)
"""Every family by name, with its parameters and the claims it stresses."""
