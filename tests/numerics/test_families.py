"""Adversarial families: each returns what its docstring says, and rejects bad input."""

from __future__ import annotations

import itertools
import math
import re
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from softmax_dispersion.numerics import FORMATS, certified_softmax, round_dyadic
from softmax_dispersion.numerics.families import (
    DENSE_LIMIT,
    FAMILIES,
    NON_FINITE_KINDS,
    OFF_BLOCK_LENGTHS,
    dip,
    geometric_ladder,
    huge_magnitude,
    long_uniform,
    near_ties,
    non_finite,
    off_block,
    sentinel_floor,
    spike,
    tiny_gaps,
    two_level,
)
from softmax_dispersion.numerics.rounding import dyadic_from_float
from softmax_dispersion.numerics.sequence import LogitSequence

DTYPES = ["float16", "bfloat16", "float32", "float64"]


def representable(value: float, dtype: str) -> bool:
    return round_dyadic(dyadic_from_float(value), FORMATS[dtype]) == value


def spread(sequence: LogitSequence) -> Fraction:
    return Fraction(sequence.maximum) - Fraction(sequence.minimum)


# ---------------------------------------------------------------------------------------
# Two-level families: run-length at any n.


@settings(max_examples=50)
@given(
    n=st.integers(1, 10**18),
    delta=st.integers(0, 50 * 64).map(lambda k: Fraction(k, 64)),
    low=st.sampled_from([0.0, -3.5, 1e4, -5e4]),
)
def test_spike_and_dip_have_the_documented_runs(n: int, delta: Fraction, low: float) -> None:
    top, bottom = spike(n, delta, low), dip(n, delta, low)
    assert top.n == bottom.n == n
    if n > 1 and delta > 0:
        assert dict(top.runs) == {low + float(delta): 1, low: n - 1}
        assert dict(bottom.runs) == {low: 1, low + float(delta): n - 1}
        assert spread(top) == spread(bottom) == delta  # dyadic δ and low: exact
    else:
        assert len(top.runs) == len(bottom.runs) == 1


def test_spike_at_ten_to_the_eighteen_costs_two_runs() -> None:
    row = spike(10**18, 5)
    assert row.runs == ((0.0, 10**18 - 1), (5.0, 1))


@settings(max_examples=40)
@given(n=st.integers(1, 10**12), data=st.data())
def test_two_level_splits_as_asked(n: int, data: st.DataObject) -> None:
    k = data.draw(st.integers(1, n))
    row = two_level(n, k, 2.0)
    assert row.n == n
    assert dict(row.runs)[2.0] == k
    assert dict(row.runs).get(0.0, 0) == n - k


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("gap", [1, 3])
def test_near_ties_sit_one_gap_apart_in_the_format(dtype: str, gap: int) -> None:
    row = near_ties(10**15, gap_ulps=gap, dtype=dtype, seed=7)
    (low, k_low), (high, k_high) = row.runs
    assert low == 1.0 and high == 1.0 + gap * 2.0 ** (1 - FORMATS[dtype].precision)
    assert representable(high, dtype)
    assert k_low >= 1 and k_high >= 1 and row.n == 10**15
    assert near_ties(10**15, gap, dtype, seed=7) == row  # seeded: reproducible


def test_geometric_ladder_has_geometric_coefficients() -> None:
    row = geometric_ladder(40, 3)
    values = np.array(row.values)
    assert row.n == 40 and len(values) == 40
    assert np.allclose(np.diff(values), math.log(3))
    evaluation = certified_softmax(row, format="float64")
    p = [run.enclosure.rounded for run in evaluation.runs]
    assert np.allclose(np.array(p[1:]) / np.array(p[:-1]), 3.0)
    assert geometric_ladder(5, 1).runs == ((0.0, 5),)


@pytest.mark.parametrize("scale", [1e4, 1e38, 1e300])
def test_huge_magnitude_spans_plus_minus_scale(scale: float) -> None:
    row = huge_magnitude(50, scale=scale, seed=1)
    assert row.maximum == scale and row.minimum == -scale and row.n == 50
    assert all(abs(v) <= scale for v in row.values)


def test_sentinel_floor_rows_lie_below_the_floor() -> None:
    for dtype in DTYPES:
        row = sentinel_floor(200, seed=4, dtype=dtype)
        expected = {"float16": -50016.0, "bfloat16": -50176.0}.get(dtype, -5e4)
        assert row.maximum == expected  # −5e4 rounded down into the format
        assert all(v <= -5e4 and representable(v, dtype) for v in row.values)
    f32_min = float(np.finfo(np.float32).min)
    assert sentinel_floor(8, floor=f32_min, width=1e30).maximum == f32_min
    with pytest.raises(ValueError, match="floor must be a number <= -50000"):
        sentinel_floor(8, floor=-10.0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tiny_gaps_are_consecutive_floats(dtype: str) -> None:
    fmt = FORMATS[dtype]
    # Start one ulp below 2 so that the row crosses a binade.
    start = 2.0 - 2.0 ** (1 - fmt.precision)
    values = tiny_gaps(6, dtype=dtype, start=start).values
    assert values[0] == start and values[1] == 2.0
    for a, b in itertools.pairwise(values):
        assert a < b and representable(b, dtype)
        midpoint = (Fraction(a) + Fraction(b)) / 2  # no format value strictly between
        nearest = round_dyadic((midpoint.numerator, -(midpoint.denominator.bit_length() - 1)), fmt)
        assert nearest in (a, b)
    negative = tiny_gaps(3, dtype=dtype, start=-1.0).values
    assert negative[0] == -1.0 < negative[1] < negative[2] < -1.0 + 1e-2


def test_long_uniform_is_one_long_run() -> None:
    assert long_uniform().runs == ((0.0, 4096),)
    assert long_uniform(10**18, value=-2.5).runs == ((-2.5, 10**18),)
    with pytest.raises(ValueError, match="n must be an integer >= 2049"):
        long_uniform(2048)


@pytest.mark.parametrize("kind", NON_FINITE_KINDS)
def test_non_finite_rows_follow_the_limit_semantics(kind: str) -> None:
    row = non_finite(kind, 7)  # type: ignore[arg-type]
    assert row.n == 7 and not row.is_finite
    result = certified_softmax(row)
    if kind == "plus_inf":
        assert result.value_of(math.inf).enclosure.rounded == 1.0
        assert result.value_of(0.0).enclosure.rounded == 0.0
    elif kind == "minus_inf_row":
        assert result.status == "undefined"
    elif kind == "nan":
        assert result.status == "nan"
    else:
        assert result.value_of(-math.inf).enclosure.rounded == 0.0
        assert result.value_of(0.0).enclosure.rounded == 0.25  # 1/⌈7/2⌉


@pytest.mark.parametrize("n", OFF_BLOCK_LENGTHS)
def test_off_block_rows_have_the_reported_lengths(n: int) -> None:
    row = off_block(n, seed=3)
    assert row.n == n and row.is_finite
    assert all(representable(v, "float32") for v in row.values)


# ---------------------------------------------------------------------------------------
# Validation: each message names the argument.


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda: spike(0, 1), "n"),
        (lambda: spike(2.5, 1), "n"),
        (lambda: spike(True, 1), "n"),
        (lambda: spike(4, -1), "delta"),
        (lambda: spike(4, "nan"), "delta"),
        (lambda: spike(4, 1, low=math.inf), "low"),
        (lambda: spike(4, 1e-300, low=1.0), "delta"),
        (lambda: dip(4, 1e309), "delta"),
        (lambda: two_level(4, 0, 1), "k_high"),
        (lambda: near_ties(4, gap_ulps=0), "gap_ulps"),
        (lambda: near_ties(4, dtype="float8"), "dtype"),
        (lambda: near_ties(4, seed="x"), "seed"),  # type: ignore[arg-type]
        (lambda: geometric_ladder(DENSE_LIMIT + 1), "n"),
        (lambda: geometric_ladder(4, 0), "ratio"),
        (lambda: huge_magnitude(4, scale=0.5), "scale"),
        (lambda: tiny_gaps(4, start=0.1, dtype="float16"), "start"),
        (lambda: tiny_gaps(10, dtype="float16", start=65504.0), "n"),
        (lambda: non_finite("masked", 1), "n"),
        (lambda: non_finite("zero", 3), "kind"),  # type: ignore[arg-type]
        (lambda: off_block(4, scale=0), "scale"),
    ],
)
def test_bad_input_names_the_argument(call: object, argument: str) -> None:
    with pytest.raises(ValueError, match=rf"^{argument}\b"):
        call()  # type: ignore[operator]


# ---------------------------------------------------------------------------------------
# The registry.


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_registry_builds_every_family_with_its_defaults(name: str) -> None:
    family = FAMILIES[name]
    assert next(iter(family.parameters)) == "n"
    params: dict[str, object] = {"n": max(family.min_n, 16)}
    if family.takes("delta"):
        params["delta"] = 2
    if family.takes("k_high"):
        params["k_high"] = 3
    row = family.build(**params)
    assert isinstance(row, LogitSequence) and row.n == params["n"]
    assert row.is_finite == family.finite
    doc = family.function.__doc__ or ""
    for claim in family.claims:  # the docstring names the claims it stresses
        assert re.search(rf"\b{claim}\b", doc), (name, claim)


def test_registry_rejects_parameters_a_family_does_not_take() -> None:
    with pytest.raises(ValueError, match="family 'long_uniform' takes n, value; not delta"):
        FAMILIES["long_uniform"].build(n=4096, delta=3)
    assert FAMILIES["long_uniform"].build(n=4096, delta=None).n == 4096  # None: not given
    with pytest.raises(ValueError, match="family 'spike' needs delta"):
        FAMILIES["spike"].build(n=16)
    assert FAMILIES["spike"].required == ("n", "delta")
    assert FAMILIES["masked"].build(n=4).runs == ((-math.inf, 2), (0.0, 2))
    assert FAMILIES["off_block"].defaults["n"] == 137
