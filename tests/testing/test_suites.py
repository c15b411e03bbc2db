"""The fixed suites: every registered family, the bad inputs, the masks."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from softmax_dispersion.numerics.families import FAMILIES
from softmax_dispersion.numerics.sequence import LogitSequence
from softmax_dispersion.testing.suites import (
    SUITES,
    Case,
    build_case,
    build_suites,
    masked_input,
    policy_rows,
)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_every_case_is_finite_where_visible(dtype: str) -> None:
    for case in build_suites(dtype):
        visible = case.visible
        assert case.rows.ndim == 2 and visible.shape == case.rows.shape
        assert np.all(np.isfinite(case.rows[visible])), case.name
        assert visible.any(axis=-1).all(), case.name  # fully masked rows are policies


def test_the_families_suite_is_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    names = {case.name.split("/")[1] for case in build_suites("float32", ["families"])}
    finite = {name for name, family in FAMILIES.items() if family.finite}
    assert finite | {"masked"} == names  # the half-masked row is an accuracy case
    plateau = replace(
        FAMILIES["long_uniform"],
        name="plateau",
        function=lambda n=4096, value=0.0: LogitSequence.from_runs([(1.5, 9)]),
    )
    monkeypatch.setitem(FAMILIES, "plateau", plateau)
    added = build_case("families/plateau")
    assert added.tolist() == [[1.5] * 9]


def test_the_masks_suite_has_partial_sentinel_and_off_block_masks() -> None:
    cases = {case.name: case for case in build_suites("float16", ["masks"])}
    assert set(SUITES) == {"random", "families", "bad_inputs", "masks", "shapes"}
    partial = cases["masks/random_137"]
    assert partial.mask is not None and not partial.mask.all()
    assert np.all(np.isneginf(partial.rows[~partial.mask]))
    sentinel = cases["masks/sentinel_finfo_min"]
    assert sentinel.mask is not None and np.all(sentinel.rows[~sentinel.mask] == -65504.0)
    edge = cases["masks/edge_137_of_256"]
    assert edge.mask is not None and edge.mask[0].sum() == 137 and edge.mask[0, :137].all()
    deep = cases["masks/visible_below_minus_5e4"]
    assert deep.mask is not None and np.all(deep.rows[deep.mask] <= -5e4)


def test_masked_input_hides_values_a_bias_mask_would_meet() -> None:
    case = Case(
        "x/y", np.array([[1.0, -np.inf, -np.inf, -np.inf]]), np.array([[True, False, False, False]])
    )
    hidden = masked_input(case, "float32")
    assert hidden[0, 0] == 1.0
    assert set(hidden[0, 1:].tolist()) == {0.0, -np.inf, float(np.finfo(np.float32).max)}


def test_the_finfo_min_row_is_a_policy_row_in_its_dtype() -> None:
    assert policy_rows("bfloat16")["finfo.min row"][0] == -3.3895313892515355e38  # bf16 max
    assert policy_rows("float16")["finfo.min row"] == [-65504.0] * 4
    assert not any(np.all(case.rows <= -60000) for case in build_suites("float16", ["bad_inputs"]))


def test_half_ulp_rows_stall_a_16_bit_sum() -> None:
    rows = build_case("bad_inputs/half_ulp_terms_64", "float16")
    terms = np.exp(rows.astype(np.float16).astype(np.float32)).astype(np.float16)
    stalled = np.float16(0)
    for value in terms[0]:
        stalled = np.float16(stalled + value)
    assert float(stalled) == 1.0  # every term after the maximum is lost in float16
    assert float(terms[0].astype(np.float32).sum()) > 1.02
