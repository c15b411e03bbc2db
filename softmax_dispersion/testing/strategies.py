"""Hypothesis strategies for property tests of softmax implementations.

Every adversarial family has exactly one definition, in
:mod:`softmax_dispersion.numerics.families`; the strategies here draw the family's
parameters, build the row with the registered builder, round it to the requested
``dtype`` and shuffle it.  Import this module only in tests: it is the one module of the
package that imports ``hypothesis``.

``dtype`` is one of ``"float16"``, ``"bfloat16"``, ``"float32"``, ``"float64"``.  numpy
has no bfloat16, so ``"bfloat16"`` rows come as ``float32`` arrays whose every value is a
bfloat16 value (convert with ``torch.from_numpy(row).to(torch.bfloat16)``, exactly).

Examples
--------
>>> from hypothesis import given
>>> from softmax_dispersion.testing.strategies import adversarial_rows, logits
>>> @given(logits(n=8, dtype="float16", min_value=-30, max_value=30))
... def test_sums_to_one(row):
...     assert row.dtype.name == "float16" and row.shape == (8,)
>>> test_sums_to_one()
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from hypothesis.strategies import SearchStrategy

from softmax_dispersion.numerics.families import (
    FAMILIES,
    LONG_UNIFORM_MIN,
    NON_FINITE_KINDS,
    OFF_BLOCK_LENGTHS,
)
from softmax_dispersion.numerics.rounding import FloatFormat, float_format

__all__ = [
    "DTYPES",
    "FAMILY_STRATEGIES",
    "adversarial_rows",
    "attention_inputs",
    "dip_rows",
    "geometric_ladder_rows",
    "huge_magnitude_rows",
    "logits",
    "masked_rows",
    "masks",
    "near_tie_rows",
    "non_finite_rows",
    "off_block_rows",
    "sentinel_rows",
    "spike_rows",
    "tiny_gap_rows",
    "two_level_rows",
    "uniform_rows",
    "vjp_inputs",
]

DTYPES = ("float16", "bfloat16", "float32", "float64")
"""The formats the strategies draw in."""

Row = np.ndarray[Any, Any]
IntArg = int | SearchStrategy[int]


def _format(dtype: str) -> FloatFormat:
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    return float_format(dtype)


def _carrier(dtype: str) -> np.dtype[Any]:
    """The numpy dtype that holds values of ``dtype`` (float32 for bfloat16)."""
    return np.dtype("float32" if dtype == "bfloat16" else dtype)


def _ints(name: str, value: IntArg, minimum: int = 1) -> SearchStrategy[int]:
    if isinstance(value, SearchStrategy):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum} or a strategy, got {value!r}")
    return st.just(int(value))


def to_dtype(values: Row, dtype: str) -> Row:
    """Round binary64 ``values`` to ``dtype`` (to nearest, ties to even).

    Values beyond the format's range become ``±inf``.  ``"bfloat16"`` values are
    returned in a float32 array.
    """
    _format(dtype)
    array = np.asarray(values, dtype=np.float64)
    if dtype != "bfloat16":
        with np.errstate(over="ignore"):
            return array.astype(dtype)
    with np.errstate(over="ignore"):
        single = array.astype(np.float32)
    bits = single.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    result = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(single), single, result)


def _finish(values: Row, dtype: str, seed: int) -> Row:
    """Round to ``dtype`` and shuffle (the families build sorted rows)."""
    row = to_dtype(values, dtype)
    return np.random.default_rng(seed).permutation(row)


def _seeds() -> SearchStrategy[int]:
    return st.integers(0, 2**32 - 1)


def _build(name: str, **parameters: object) -> Row:
    row: Row = FAMILIES[name].build(**parameters).to_array()
    return row


def logits(
    n: IntArg = st.integers(1, 64),  # noqa: B008 - strategies are immutable
    dtype: str = "float32",
    min_value: float | None = None,
    max_value: float | None = None,
    allow_infinity: bool = False,
    allow_nan: bool = False,
    batch: IntArg | None = None,
) -> SearchStrategy[Row]:
    """Arrays of logits whose every value is a value of ``dtype``.

    Parameters
    ----------
    n
        The row length: an integer or a strategy of integers (default 1 to 64).
    dtype
        ``"float16"``, ``"bfloat16"`` (values in a float32 array), ``"float32"`` or
        ``"float64"``.
    min_value, max_value
        Bounds of the finite values (default: the format's finite range).  They are
        rounded inwards to ``dtype``.
    allow_infinity, allow_nan
        Whether ``±inf`` and NaN may appear.
    batch
        ``None`` for 1-D rows of shape ``(n,)``; an integer or a strategy of integers for
        arrays of shape ``(batch, n)``.

    Returns
    -------
    SearchStrategy of numpy.ndarray

    Raises
    ------
    ValueError
        For an unknown ``dtype``, ``min_value > max_value`` or a bound outside the range.

    Examples
    --------
    >>> from hypothesis import find
    >>> row = find(logits(n=5, dtype="bfloat16", min_value=-1, max_value=1), lambda r: r.max() > 0)
    >>> row.dtype.name, row.shape, bool(abs(row).max() <= 1)
    ('float32', (5,), True)
    """
    fmt = _format(dtype)
    low = -fmt.max_finite if min_value is None else float(min_value)
    high = fmt.max_finite if max_value is None else float(max_value)
    if math.isnan(low) or math.isnan(high) or low > high:
        raise ValueError(f"min_value must be <= max_value, got {min_value} and {max_value}")
    if max(abs(low), abs(high)) > fmt.max_finite:
        raise ValueError(f"min_value and max_value must lie within the range of {dtype}")
    lengths = _ints("n", n)
    shape: SearchStrategy[tuple[int, ...]]
    if batch is None:
        shape = lengths.map(lambda k: (k,))
    else:
        shape = st.tuples(_ints("batch", batch), lengths)
    if dtype == "bfloat16":
        return _bfloat16_arrays(shape, low, high, allow_infinity, allow_nan)
    elements = st.floats(
        min_value=low,
        max_value=high,
        allow_nan=False,
        allow_infinity=False,
        allow_subnormal=True,
        width=16 if dtype == "float16" else 32 if dtype == "float32" else 64,
    )
    elements = _with_specials(elements, allow_infinity, allow_nan)
    return shape.flatmap(lambda s: hnp.arrays(np.dtype(dtype), s, elements=elements))


def _with_specials(
    elements: SearchStrategy[float], allow_infinity: bool, allow_nan: bool
) -> SearchStrategy[float]:
    specials = [
        *([math.inf, -math.inf] if allow_infinity else []),
        *([math.nan] if allow_nan else []),
    ]
    if specials:
        return st.one_of(elements, st.sampled_from(specials))
    return elements


def _bfloat16_arrays(
    shape: SearchStrategy[tuple[int, ...]],
    low: float,
    high: float,
    allow_infinity: bool,
    allow_nan: bool,
) -> SearchStrategy[Row]:
    # Round the bounds inwards, then draw float32 values and round them to bfloat16,
    # clamping any that rounded past a bound back to it.
    lo, hi = (float(v) for v in to_dtype(np.array([low, high]), "bfloat16"))
    if lo < low:
        lo = _bf16_step(lo, up=True)
    if hi > high:
        hi = _bf16_step(hi, up=False)
    if lo > hi:
        raise ValueError(f"no bfloat16 value lies in [{low}, {high}]")
    elements = st.floats(min_value=lo, max_value=hi, width=32).map(
        lambda v: float(np.clip(to_dtype(np.array([v]), "bfloat16")[0], lo, hi))
    )
    elements = _with_specials(elements, allow_infinity, allow_nan)
    return shape.flatmap(lambda s: hnp.arrays(np.float32, s, elements=elements))


def _bf16_step(value: float, *, up: bool) -> float:
    """The next bfloat16 value above (``up``) or below ``value`` (a bfloat16 value)."""
    bits = int(np.array([value], dtype=np.float32).view(np.uint32)[0])
    positive = value > 0 or (value == 0 and up)
    if value == 0:
        return float(np.array([0x00010000], dtype=np.uint32).view(np.float32)[0]) * (
            1 if up else -1
        )
    step = 0x10000 if positive == up else -0x10000
    return float(np.array([bits + step], dtype=np.uint32).view(np.float32)[0])


def _spread(max_delta: float) -> SearchStrategy[float]:
    return st.one_of(st.just(0.0), st.floats(2.0**-6, max_delta))


def _floors(dtype: str, bound: float = 100.0) -> SearchStrategy[float]:
    return st.floats(-bound, bound).map(lambda v: float(to_dtype(np.array([v]), dtype)[0]))


@st.composite
def _spike(draw: Any, name: str, n: IntArg, dtype: str, max_delta: float) -> Row:
    length = draw(_ints("n", n))
    values = _build(name, n=length, delta=draw(_spread(max_delta)), low=draw(_floors(dtype)))
    return _finish(values, dtype, draw(_seeds()))


def spike_rows(
    n: IntArg = st.integers(2, 256),  # noqa: B008
    dtype: str = "float32",
    max_delta: float = 20.0,
) -> SearchStrategy[Row]:
    """One logit ``δ`` above the other ``n − 1`` (family ``spike``), shuffled.

    Parameters
    ----------
    n
        Row length, an integer or a strategy (default 2 to 256).
    dtype
        The format of the values.
    max_delta
        Largest spread drawn; the floor is drawn in ``[−100, 100]``.
    """
    _format(dtype)
    return _spike("spike", n, dtype, max_delta)


def dip_rows(
    n: IntArg = st.integers(2, 256),  # noqa: B008
    dtype: str = "float32",
    max_delta: float = 20.0,
) -> SearchStrategy[Row]:
    """One logit ``δ`` below the other ``n − 1`` (family ``dip``), shuffled."""
    _format(dtype)
    return _spike("dip", n, dtype, max_delta)


def two_level_rows(
    n: IntArg = st.integers(2, 256),  # noqa: B008
    dtype: str = "float32",
    max_delta: float = 20.0,
) -> SearchStrategy[Row]:
    """``k`` logits ``δ`` above the other ``n − k`` (family ``two_level``), shuffled."""
    _format(dtype)

    @st.composite
    def rows(draw: Any) -> Row:
        length = draw(_ints("n", n))
        values = _build(
            "two_level",
            n=length,
            k_high=draw(st.integers(1, length)),
            delta=draw(_spread(max_delta)),
            low=draw(_floors(dtype)),
        )
        return _finish(values, dtype, draw(_seeds()))

    return rows()


def near_tie_rows(
    n: IntArg = st.integers(2, 256),  # noqa: B008
    dtype: str = "float32",
) -> SearchStrategy[Row]:
    """Logits at 1 and 1 + g ulps of ``dtype`` (family ``near_ties``)."""
    _format(dtype)

    @st.composite
    def rows(draw: Any) -> Row:
        values = _build(
            "near_ties",
            n=draw(_ints("n", n)),
            gap_ulps=draw(st.integers(1, 4)),
            dtype=dtype,
            seed=draw(_seeds()),
        )
        return _finish(values, dtype, draw(_seeds()))

    return rows()


def geometric_ladder_rows(
    n: IntArg = st.integers(2, 256),  # noqa: B008
    dtype: str = "float32",
) -> SearchStrategy[Row]:
    """Logits ``−k·log r`` (family ``geometric_ladder``), shuffled."""
    _format(dtype)

    @st.composite
    def rows(draw: Any) -> Row:
        values = _build("geometric_ladder", n=draw(_ints("n", n)), ratio=draw(st.floats(1.0, 16.0)))
        return _finish(values, dtype, draw(_seeds()))

    return rows()


def huge_magnitude_rows(
    n: IntArg = st.integers(2, 256),  # noqa: B008
    dtype: str = "float32",
) -> SearchStrategy[Row]:
    """Random logits of magnitude 1e4 up to the format's range (family ``huge_magnitude``)."""
    fmt = _format(dtype)
    top = min(1e300, fmt.max_finite / 2)

    @st.composite
    def rows(draw: Any) -> Row:
        scale = draw(st.floats(1e4, top))
        values = _build("huge_magnitude", n=draw(_ints("n", n)), scale=scale, seed=draw(_seeds()))
        return _finish(values, dtype, draw(_seeds()))

    return rows()


def sentinel_rows(
    n: IntArg = st.integers(1, 256),  # noqa: B008
    dtype: str = "float32",
) -> SearchStrategy[Row]:
    """Every logit at or below −5e4: masks written as a finite sentinel (``sentinel_floor``)."""
    fmt = _format(dtype)
    deepest = -min(1e6, fmt.max_finite - 64)

    @st.composite
    def rows(draw: Any) -> Row:
        values = _build(
            "sentinel_floor",
            n=draw(_ints("n", n)),
            floor=draw(st.floats(deepest, -5e4)),
            seed=draw(_seeds()),
            width=draw(st.floats(0.0, 8.0)),
            dtype=dtype,
        )
        return _finish(values, dtype, draw(_seeds()))

    return rows()


def tiny_gap_rows(
    n: IntArg = st.integers(2, 256),  # noqa: B008
    dtype: str = "float32",
) -> SearchStrategy[Row]:
    """Consecutive values of ``dtype``, 1 ulp apart (family ``tiny_gaps``), shuffled."""
    _format(dtype)

    @st.composite
    def rows(draw: Any) -> Row:
        values = _build(
            "tiny_gaps", n=draw(_ints("n", n)), dtype=dtype, start=draw(_floors(dtype, 10.0))
        )
        return _finish(values, dtype, draw(_seeds()))

    return rows()


def uniform_rows(
    n: IntArg = st.integers(LONG_UNIFORM_MIN, 8192),  # noqa: B008
    dtype: str = "float16",
) -> SearchStrategy[Row]:
    """``n >= 2049`` equal logits, where 16-bit sums stall (family ``long_uniform``)."""
    _format(dtype)

    @st.composite
    def rows(draw: Any) -> Row:
        value = draw(_floors(dtype))
        return _finish(_build("long_uniform", n=draw(_ints("n", n)), value=value), dtype, 0)

    return rows()


def off_block_rows(
    n: IntArg = st.sampled_from(OFF_BLOCK_LENGTHS),  # noqa: B008
    dtype: str = "float32",
) -> SearchStrategy[Row]:
    """Random rows of lengths off the kernel block sizes (family ``off_block``)."""
    _format(dtype)

    @st.composite
    def rows(draw: Any) -> Row:
        values = _build(
            "off_block",
            n=draw(_ints("n", n)),
            seed=draw(_seeds()),
            scale=draw(st.floats(0.125, 16.0)),
            dtype=dtype,
        )
        return _finish(values, dtype, draw(_seeds()))

    return rows()


def non_finite_rows(
    n: IntArg = st.integers(2, 64),  # noqa: B008
    dtype: str = "float32",
    kinds: tuple[str, ...] = NON_FINITE_KINDS,
) -> SearchStrategy[Row]:
    """Rows with ``+inf``, NaN or ``−inf`` entries: ``plus_inf``, ``minus_inf_row``, ``nan``,
    ``masked`` (policy cases, see the oracle's non-finite policies)."""
    _format(dtype)
    unknown = sorted(set(kinds) - set(NON_FINITE_KINDS))
    if unknown or not kinds:
        raise ValueError(f"kinds must be among {', '.join(NON_FINITE_KINDS)}, got {kinds!r}")

    @st.composite
    def rows(draw: Any) -> Row:
        kind = draw(st.sampled_from(kinds))
        length = max(draw(_ints("n", n)), FAMILIES[kind].min_n)
        return _finish(_build(kind, n=length), dtype, draw(_seeds()))

    return rows()


FAMILY_STRATEGIES: dict[str, Callable[..., SearchStrategy[Row]]] = {
    "dip": dip_rows,
    "geometric_ladder": geometric_ladder_rows,
    "huge_magnitude": huge_magnitude_rows,
    "long_uniform": uniform_rows,
    "near_ties": near_tie_rows,
    "off_block": off_block_rows,
    "sentinel_floor": sentinel_rows,
    "spike": spike_rows,
    "tiny_gaps": tiny_gap_rows,
    "two_level": two_level_rows,
    **{kind: partial(non_finite_rows, kinds=(kind,)) for kind in NON_FINITE_KINDS},
}
"""The strategy of each family of :data:`~softmax_dispersion.numerics.families.FAMILIES`
(the non-finite kinds are :func:`non_finite_rows` bound to one kind)."""


def adversarial_rows(dtype: str = "float32", *, non_finite: bool = False) -> SearchStrategy[Row]:
    """A row of any adversarial family of the registry, in ``dtype``.

    The families are those of :data:`~softmax_dispersion.numerics.families.FAMILIES`
    (one source: a family registered there, with its strategy in
    :data:`FAMILY_STRATEGIES`, is drawn here).

    Parameters
    ----------
    dtype
        The format of the values.
    non_finite
        Also draw the rows with ``±inf`` and NaN (policy cases).

    Returns
    -------
    SearchStrategy of numpy.ndarray
        1-D rows; the long uniform rows only for 16-bit formats, where they matter.
    """
    fmt = _format(dtype)
    strategies = []
    for name, family in FAMILIES.items():
        if not family.finite:
            continue
        if name == "long_uniform":
            if fmt.precision < 24:
                strategies.append(uniform_rows(n=st.integers(LONG_UNIFORM_MIN, 4096), dtype=dtype))
            continue
        strategies.append(FAMILY_STRATEGIES[name](dtype=dtype))
    if non_finite:
        strategies.append(non_finite_rows(dtype=dtype))
    return st.one_of(strategies)


def masks(
    n: IntArg = st.integers(1, 64),  # noqa: B008
    batch: IntArg | None = None,
    min_visible: int = 1,
) -> SearchStrategy[np.ndarray[Any, Any]]:
    """Boolean masks, True where an entry takes part, at least ``min_visible`` per row.

    Parameters
    ----------
    n
        The row length: an integer or a strategy of integers.
    batch
        ``None`` for 1-D masks, else an integer or a strategy for shape ``(batch, n)``.
    min_visible
        The fewest True entries of a row (0 allows fully masked rows, a policy case).

    Examples
    --------
    >>> from hypothesis import find
    >>> mask = find(masks(n=8, batch=2), lambda m: not m.all())
    >>> mask.dtype.name, mask.shape, bool(mask.any(axis=-1).all())
    ('bool', (2, 8), True)
    """
    if isinstance(min_visible, bool) or not isinstance(min_visible, int) or min_visible < 0:
        raise ValueError(f"min_visible must be an integer >= 0, got {min_visible!r}")

    @st.composite
    def draw_mask(draw: Any) -> np.ndarray[Any, Any]:
        length = draw(_ints("n", n))
        rows = 1 if batch is None else draw(_ints("batch", batch))
        density = draw(st.sampled_from([0.1, 0.5, 0.9, 1.0]))
        seed = draw(_seeds())
        rng = np.random.default_rng(seed)
        mask = rng.uniform(size=(rows, length)) < density
        keep = min(min_visible, length)
        for r in range(rows):
            visible = np.flatnonzero(mask[r])
            if visible.size < keep:
                mask[r, rng.choice(length, size=keep, replace=False)] = True
        result: np.ndarray[Any, Any] = mask[0] if batch is None else mask
        return result

    return draw_mask()


def masked_rows(
    n: IntArg = st.integers(1, 64),  # noqa: B008
    dtype: str = "float32",
    min_visible: int = 1,
) -> SearchStrategy[tuple[Row, np.ndarray[Any, Any]]]:
    """``(x, mask)`` for a masked softmax ``fn(x, mask)``, values it must ignore under the mask.

    The visible entries are adversarial logits of ``dtype`` (:func:`logits` between
    ``−100`` and ``100``); the masked ones hold the largest finite value, 0, the smallest
    finite value or ``−inf``: code that adds the mask as a finite bias meets them.

    Examples
    --------
    >>> from hypothesis import find
    >>> x, mask = find(masked_rows(n=6, dtype="float16"), lambda xm: not xm[1].all())
    >>> x.dtype.name, mask.dtype.name, x.shape == mask.shape
    ('float16', 'bool', True)
    """
    fmt = _format(dtype)
    hidden = [fmt.max_finite, 0.0, -fmt.max_finite, -math.inf]

    @st.composite
    def draw_pair(draw: Any) -> tuple[Row, np.ndarray[Any, Any]]:
        length = draw(_ints("n", n))
        x = draw(logits(n=length, dtype=dtype, min_value=-100, max_value=100))
        mask = draw(masks(n=length, min_visible=min_visible))
        under = np.resize(np.array(draw(st.permutations(hidden))), length)
        values = np.where(mask, x.astype(np.float64), under)
        return to_dtype(values, dtype), mask

    return draw_pair()


def attention_inputs(
    dtype: str = "float32",
    length: IntArg = st.integers(1, 8),  # noqa: B008
    keys: IntArg = st.integers(1, 300),  # noqa: B008
    dims: IntArg = st.sampled_from([1, 4, 16, 64]),  # noqa: B008
    batch: IntArg = st.integers(1, 2),  # noqa: B008
    heads: IntArg = st.integers(1, 2),  # noqa: B008
    min_visible: int = 1,
) -> SearchStrategy[dict[str, Any]]:
    """Keyword arguments of ``fn(q, k, v, attn_mask=None, is_causal=False, scale=None)``.

    ``q`` ``(batch, heads, L, E)``, ``k`` ``(batch, heads, S, E)`` and ``v`` (the same,
    ``Ev = E``) hold values of ``dtype`` (bfloat16 ones in float32 arrays) of moderate size,
    so that 16-bit scores stay where T14 vouches for them; the mask is absent, boolean
    (each query keeping at least ``min_visible`` keys) or an additive float mask (``0``,
    ``−inf``, ALiBi-like finite biases); or ``is_causal`` instead; ``scale`` is ``None``
    or a given value.  Suited to
    :func:`~softmax_dispersion.testing.attention_reference.reference_attention`.

    Examples
    --------
    >>> from hypothesis import find
    >>> found = find(attention_inputs(dtype="float16"), lambda a: a["attn_mask"] is not None)
    >>> found["q"].dtype.name, found["q"].ndim, found["attn_mask"].shape[-1] == found["k"].shape[-2]
    ('float16', 4, True)
    """
    _format(dtype)

    @st.composite
    def draw_inputs(draw: Any) -> dict[str, Any]:
        b, h = draw(_ints("batch", batch)), draw(_ints("heads", heads))
        rows, columns, size = (
            draw(_ints("length", length)),
            draw(_ints("keys", keys)),
            draw(_ints("dims", dims)),
        )
        rng = np.random.default_rng(draw(_seeds()))
        spread = draw(st.sampled_from([0.1, 0.5, 1.0]))
        q = to_dtype(rng.standard_normal((b, h, rows, size)) * spread, dtype)
        k = to_dtype(rng.standard_normal((b, h, columns, size)) * spread, dtype)
        v = to_dtype(rng.standard_normal((b, h, columns, size)), dtype)
        choice = draw(st.sampled_from(["none", "bool", "float", "causal"]))
        scale = draw(st.sampled_from([None, 0.5, 1.0]))
        mask: Any = None
        if choice in ("bool", "float"):
            mask = draw(masks(n=columns, batch=rows, min_visible=min_visible))
        if choice == "float":
            slope = draw(st.sampled_from([0.0, 0.125, 0.5]))
            distance = np.abs(np.arange(columns)[None, :] - np.arange(rows)[:, None])
            mask = to_dtype(np.where(mask, -slope * distance, -math.inf), dtype)
        return {
            "q": q,
            "k": k,
            "v": v,
            "attn_mask": mask,
            "is_causal": choice == "causal",
            "scale": scale,
        }

    return draw_inputs()


def vjp_inputs(
    dtype: str = "float32",
    n: IntArg = st.integers(1, 300),  # noqa: B008
    batch: IntArg = st.integers(1, 4),  # noqa: B008
    allow_minus_infinity: bool = True,
) -> SearchStrategy[tuple[Row, Row]]:
    """``(x, g)`` for a softmax or log-softmax VJP ``fn(x, g)``, shape ``(batch, n)``.

    ``x`` holds adversarial logits of ``dtype`` between ``−100`` and ``100`` and, with
    ``allow_minus_infinity``, some ``−inf`` (weight 0; every row keeps a finite logit);
    ``g`` holds gradients of mixed magnitudes.  Suited to
    :func:`~softmax_dispersion.testing.vjp_reference.reference_softmax_vjp`.

    Examples
    --------
    >>> from hypothesis import find
    >>> x, g = find(vjp_inputs(dtype="float32"), lambda xg: bool(np.isinf(xg[0]).any()))
    >>> x.shape == g.shape, bool(np.isfinite(x).any(axis=-1).all())
    (True, True)
    """
    _format(dtype)

    @st.composite
    def draw_pair(draw: Any) -> tuple[Row, Row]:
        rows, length = draw(_ints("batch", batch)), draw(_ints("n", n))
        x = draw(logits(n=length, batch=rows, dtype=dtype, min_value=-100, max_value=100))
        values = x.astype(np.float64)
        if allow_minus_infinity:
            visible = draw(masks(n=length, batch=rows, min_visible=1))
            values = np.where(visible, values, -math.inf)
        rng = np.random.default_rng(draw(_seeds()))
        g = rng.standard_normal((rows, length)) * 10.0 ** rng.uniform(-2, 2, size=(rows, length))
        return to_dtype(values, dtype), to_dtype(g, dtype)

    return draw_pair()
