"""The hypothesis strategies draw rows of the right dtype, shape and family."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from softmax_dispersion.numerics.families import FAMILIES, SENTINEL_CEILING
from softmax_dispersion.testing.strategies import (
    DTYPES,
    FAMILY_STRATEGIES,
    adversarial_rows,
    dip_rows,
    logits,
    masked_rows,
    masks,
    near_tie_rows,
    non_finite_rows,
    sentinel_rows,
    spike_rows,
    tiny_gap_rows,
    to_dtype,
    uniform_rows,
)

Row = np.ndarray[Any, Any]


def representable(row: Row, dtype: str) -> bool:
    finite = row[np.isfinite(row)].astype(np.float64)
    return bool(np.array_equal(to_dtype(finite, dtype).astype(np.float64), finite))


def carrier(dtype: str) -> str:
    return "float32" if dtype == "bfloat16" else dtype


def test_every_family_has_one_strategy() -> None:
    assert set(FAMILY_STRATEGIES) == set(FAMILIES)


@pytest.mark.parametrize("dtype", DTYPES)
@settings(max_examples=30)
@given(data=st.data())
def test_logits_are_values_of_the_dtype(dtype: str, data: st.DataObject) -> None:
    row = data.draw(logits(n=st.integers(1, 16), dtype=dtype, min_value=-50, max_value=50))
    assert row.dtype == np.dtype(carrier(dtype)) and row.ndim == 1
    assert np.all(np.isfinite(row)) and np.all(np.abs(row) <= 50)
    assert representable(row, dtype)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@settings(max_examples=30)
@given(data=st.data())
def test_logits_cover_the_16_bit_range_without_overflow(dtype: str, data: st.DataObject) -> None:
    row = data.draw(logits(n=8, dtype=dtype, batch=st.integers(1, 3)))
    assert row.ndim == 2 and row.shape[1] == 8
    assert np.all(np.isfinite(row)) and representable(row, dtype)


@settings(max_examples=30)
@given(logits(n=6, dtype="float32", allow_infinity=True, allow_nan=True, min_value=-1, max_value=1))
def test_logits_may_hold_specials(row: Row) -> None:
    finite = row[np.isfinite(row)]
    assert np.all(np.abs(finite) <= 1)


def test_logits_reject_bad_arguments() -> None:
    with pytest.raises(ValueError, match="dtype"):
        logits(dtype="int8")
    with pytest.raises(ValueError, match="min_value"):
        logits(min_value=2, max_value=1)
    with pytest.raises(ValueError, match="range of float16"):
        logits(dtype="float16", max_value=1e6)
    with pytest.raises(ValueError, match="n must be"):
        logits(n=0)


@pytest.mark.parametrize("dtype", DTYPES)
@settings(max_examples=20)
@given(data=st.data())
def test_spike_and_dip_rows_have_two_levels(dtype: str, data: st.DataObject) -> None:
    spike = data.draw(spike_rows(dtype=dtype))
    dip = data.draw(dip_rows(dtype=dtype))
    for row in (spike, dip):
        assert row.dtype == np.dtype(carrier(dtype)) and representable(row, dtype)
        assert len(np.unique(row)) <= 2
    if len(np.unique(spike)) == 2:
        assert np.sum(spike == spike.max()) == 1
    if len(np.unique(dip)) == 2:
        assert np.sum(dip == dip.min()) == 1


@pytest.mark.parametrize("dtype", DTYPES)
@settings(max_examples=15)
@given(data=st.data())
def test_adversarial_rows_are_finite_values_of_the_dtype(dtype: str, data: st.DataObject) -> None:
    row = data.draw(adversarial_rows(dtype))
    assert row.ndim == 1 and row.size >= 1
    assert np.all(np.isfinite(row)) and representable(row, dtype)


@settings(max_examples=20)
@given(sentinel_rows(dtype="float16"))
def test_sentinel_rows_lie_below_the_ceiling(row: Row) -> None:
    assert np.all(row <= SENTINEL_CEILING) and np.all(np.isfinite(row))


@settings(max_examples=10)
@given(uniform_rows(dtype="bfloat16"))
def test_uniform_rows_are_long_and_constant(row: Row) -> None:
    assert row.size >= 2049 and np.all(row == row[0])


@settings(max_examples=20)
@given(near_tie_rows(dtype="float32"), tiny_gap_rows(n=16, dtype="float16"))
def test_ties_and_gaps_are_ulps_apart(ties: Row, gaps: Row) -> None:
    levels = np.unique(ties)
    assert len(levels) <= 2 and levels[0] == 1.0
    steps = np.diff(np.sort(gaps))
    assert np.all(np.nextafter(np.sort(gaps)[:-1], np.float16(np.inf)) == np.sort(gaps)[1:])
    assert np.all(steps > 0)


@pytest.mark.parametrize("kind", ["plus_inf", "minus_inf_row", "nan", "masked"])
def test_non_finite_rows_by_kind(kind: str) -> None:
    @settings(max_examples=5)
    @given(FAMILY_STRATEGIES[kind]())
    def check(row: Row) -> None:
        if kind == "plus_inf":
            assert np.sum(row == np.inf) == 1
        elif kind == "minus_inf_row":
            assert np.all(row == -np.inf)
        elif kind == "nan":
            assert np.sum(np.isnan(row)) == 1
        else:
            assert np.any(row == -np.inf) and np.any(np.isfinite(row))

    check()


@settings(max_examples=30)
@given(masks(n=st.integers(1, 40), batch=st.integers(1, 4), min_visible=2))
def test_masks_keep_the_visible_entries_asked_for(mask: Row) -> None:
    assert mask.dtype == bool and mask.ndim == 2
    assert np.all(mask.sum(axis=-1) >= np.minimum(2, mask.shape[-1]))


@pytest.mark.parametrize("dtype", DTYPES)
@settings(max_examples=20)
@given(data=st.data())
def test_masked_rows_hide_values_the_function_must_ignore(dtype: str, data: st.DataObject) -> None:
    x, mask = data.draw(masked_rows(n=st.integers(4, 32), dtype=dtype))
    assert x.shape == mask.shape and x.dtype.name == carrier(dtype) and mask.any()
    visible = x[mask]
    assert np.all(np.isfinite(visible)) and np.all(np.abs(visible) <= 100)
    assert representable(x, dtype)


def test_adversarial_rows_draw_a_family_added_to_the_registry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # One source: a family registered in numerics.families (with its strategy) is drawn.
    from dataclasses import replace

    from hypothesis import find

    from softmax_dispersion.testing import strategies

    sevens = replace(FAMILIES["spike"], name="sevens")
    monkeypatch.setitem(FAMILIES, "sevens", sevens)
    monkeypatch.setitem(
        strategies.FAMILY_STRATEGIES, "sevens", lambda dtype: st.just(np.full(3, 7.0, dtype))
    )
    row = find(adversarial_rows("float32"), lambda r: r.shape == (3,) and np.all(r == 7))
    assert row.tolist() == [7.0, 7.0, 7.0]


def test_non_finite_rows_reject_unknown_kinds() -> None:
    with pytest.raises(ValueError, match="kinds"):
        non_finite_rows(kinds=("zero",))


def test_hypothesis_is_imported_only_by_the_strategies() -> None:
    code = (
        "import sys, softmax_dispersion, softmax_dispersion.testing.plugin; "
        "import importlib.util as u; "
        "u.find_spec('softmax_dispersion.testing') and __import__('softmax_dispersion.testing'); "
        "print(','.join(m for m in ('hypothesis', 'torch', 'jax', 'flint') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


def test_doctests() -> None:
    import doctest

    from softmax_dispersion.testing import strategies

    result = doctest.testmod(strategies, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted >= 4
