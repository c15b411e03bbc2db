"""The second zoo: every formulation and summation order passes; the mask bugs fail."""

from __future__ import annotations

import importlib.util
import math
import warnings

import numpy as np
import pytest

from softmax_dispersion.testing import Report, SoftmaxCallError, check_softmax
from tests.testing.second_zoo import CORRECT, WRONG, Entry


def _check(entry: Entry) -> Report:
    if entry.library != "numpy" and importlib.util.find_spec(entry.library) is None:
        pytest.skip(f"{entry.library} is not installed")
    reset = getattr(entry.fn, "reset", None)
    if reset is not None:
        reset()  # a stateful entry starts afresh, whatever ran before it
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return check_softmax(
            entry.fn,
            kind=entry.kind,
            library=entry.library,
            dtypes=entry.dtypes,
            policies=dict(entry.policies),
            tolerance=entry.tolerance,
        )


def _marks(name: str, entry: Entry) -> object:
    # jax compiles every shape: its entries are the slow ones (CI runs them).
    return pytest.param(name, marks=pytest.mark.slow) if entry.library == "jax" else name


@pytest.mark.parametrize("name", [_marks(n, e) for n, e in sorted(CORRECT.items())])
def test_every_formulation_and_order_passes(name: str) -> None:
    report = _check(CORRECT[name])
    assert report.passed, report.text()


@pytest.mark.parametrize("name", [_marks(n, e) for n, e in sorted(WRONG.items())])
def test_every_mask_and_precision_bug_fails(name: str) -> None:
    entry = WRONG[name]
    report = _check(entry)
    failed = {result.name for result in report.failures}
    assert set(entry.fails) <= failed, (name, failed, report.text())


def test_in_place_implementations_are_judged_on_their_values_and_named() -> None:
    report = check_softmax(CORRECT["reciprocal"].fn)  # a baseline with the same values
    assert report.policies["input"] == "kept"
    in_place = check_softmax(WRONG["in_place"].fn)
    assert in_place.passed, in_place.text()  # every value right: the copy was judged
    assert in_place.policies["input"] == "modified"
    assert any("modified its input" in note for note in in_place.notes)


def test_flushed_subnormals_are_named_in_32_bits_and_fail_in_float16() -> None:
    fn = WRONG["flushes_16bit_subnormals"].fn
    wide = check_softmax(fn, dtypes=["float32", "float64"])
    assert wide.passed and wide.policies["subnormals"] == "flushed"
    narrow = check_softmax(fn, dtypes=["float16"])
    accuracy = next(r for r in narrow.failures if r.name == "accuracy")
    assert "flushed" in accuracy.hint


def test_masked_kind_names_the_fully_masked_row_policy() -> None:
    report = check_softmax(CORRECT["numpy_masked"].fn, kind="masked_softmax", dtypes=["float64"])
    assert report.passed
    assert report.policies["fully masked row"] == "NaN"
    assert report.policies["NaN under the mask"] == "the mask wins"

    def zeros_when_fully_masked(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
        out = CORRECT["numpy_masked"].fn(x, mask)
        return np.where(mask.any(axis=-1, keepdims=True), out, 0).astype(x.dtype)

    zeros = check_softmax(zeros_when_fully_masked, kind="masked_softmax", dtypes=["float64"])
    assert zeros.policies["fully masked row"] == "zeros"
    required = check_softmax(
        zeros_when_fully_masked,
        kind="masked_softmax",
        dtypes=["float64"],
        policies={"fully masked row": "uniform"},
    )
    assert not required.passed


def test_jax_gets_64_bit_types_for_the_check_and_its_setting_back() -> None:
    jax = pytest.importorskip("jax")
    before = bool(jax.config.jax_enable_x64)
    shapes: set[tuple[int, ...]] = set()

    def softmax(x: object) -> object:
        shapes.add(tuple(x.shape))  # type: ignore[attr-defined]
        return jax.nn.softmax(x, axis=-1)

    report = check_softmax(softmax, library="jax", dtypes=["float64"])
    assert report.passed, report.text()
    assert {r.dtype for r in report.results} == {"float64"}
    assert bool(jax.config.jax_enable_x64) == before
    assert any("64-bit types enabled" in note for note in report.notes)
    # rows padded to a few lengths: one compilation per length, not per case
    # (the square and 3-D calls of the shapes suite are never padded)
    assert {shape[-1] for shape in shapes} <= {7, 16, 137, 256, 1238, 16384}
    assert len(shapes) <= 10


def test_a_nan_in_the_batch_still_reports_the_allowance_in_finite_ulps() -> None:
    # The batch's value is NaN here: ULPs are counted at the certified value instead.
    with np.errstate(all="ignore"):
        report = check_softmax(WRONG["batch_maximum"].fn, dtypes=["float64"])
    batch = next(r for r in report.failures if r.name == "batch_independence")
    assert batch.worst is not None and math.isfinite(batch.worst.allowed_ulps)
    assert "allowed inf" not in batch.message


def test_new_findings_are_their_own_lines() -> None:
    reused = check_softmax(WRONG["reuses_its_output_buffer"].fn, dtypes=["float32"])
    fresh = next(r for r in reused.failures if r.name == "fresh_output")
    assert "changed during" in fresh.message and "buffer" in fresh.hint
    assert "likely cause: the function returns a buffer" in reused.text()
    view = check_softmax(WRONG["returns_a_view_of_its_input"].fn, dtypes=["float32"])
    assert view.passed and view.policies["input"] == "modified"


def test_a_named_flush_is_kept_out_of_the_max_ulp_column() -> None:
    report = check_softmax(WRONG["flushes_16bit_subnormals"].fn, dtypes=["float32", "float64"])
    assert report.passed and report.policies["subnormals"] == "flushed"
    accuracy = [r for r in report.results if r.name == "accuracy"]
    assert accuracy and all(r.max_ulp < 1e4 for r in accuracy), [r.max_ulp for r in accuracy]


def test_a_dtype_given_as_a_string_is_one_name() -> None:
    report = check_softmax(CORRECT["reciprocal"].fn, dtypes="float32", suites=["shapes"])
    assert {r.dtype for r in report.results} == {"float32"}


def test_a_misspelt_required_policy_is_a_value_error_naming_the_values() -> None:
    with pytest.raises(ValueError, match=r"is one of NaN, NaN in part, zeros.*not 'zero'"):
        check_softmax(CORRECT["reciprocal"].fn, policies={"all -inf row": "zero"})
    report = check_softmax(
        CORRECT["reciprocal"].fn, dtypes=["float64"], policies={"+inf entry": "NaN"}
    )
    assert report.passed, report.text()


def test_a_list_output_is_not_an_array() -> None:
    def as_list(x: np.ndarray) -> list[float]:
        return CORRECT["reciprocal"].fn(x).tolist()  # type: ignore[no-any-return]

    with pytest.raises(SoftmaxCallError, match="returned list, expected an array"):
        check_softmax(as_list, dtypes=["float32"])


def test_the_battery_calls_a_square_and_a_3d_array_and_odd_lengths() -> None:
    shapes: set[tuple[int, ...]] = set()

    def softmax(x: np.ndarray) -> np.ndarray:
        shapes.add(x.shape)
        return CORRECT["reciprocal"].fn(x)  # type: ignore[no-any-return]

    assert check_softmax(softmax, dtypes=["float32"]).passed
    assert {(16, 16), (2, 3, 7)} <= shapes
    assert {5, 7} <= {shape[-1] for shape in shapes}


def test_policy_outputs_that_no_policy_names_fail_saying_so() -> None:
    report = check_softmax(
        WRONG["garbage_on_fully_masked_rows"].fn, kind="masked_softmax", dtypes=["float32"]
    )
    policy = next(r for r in report.failures if r.name == "policy")
    assert "fully masked row: output is none of NaN/NaN in part/zeros/uniform" in policy.message
    assert "[0.3, 0.3, 0.3, 0.3]" in policy.message
    assert policy.worst is not None and policy.worst.mask is not None


def test_a_function_of_2d_arrays_only_is_named_in_the_notes_not_failed() -> None:
    report = check_softmax(CORRECT["sequential_loop"].fn, dtypes=["float32"], suites=["shapes"])
    assert report.passed, report.text()
    assert any("not checked on the (2, 3, 7) input" in note for note in report.notes)


def test_the_strict_model_names_what_only_a_log_sum_exp_needs() -> None:
    # x − logsumexp(x) is correct under the default (its log-sum-exp is rounded at the
    # logits' magnitude, and T12 charges it that); the report says the pass relied on it.
    fn = CORRECT["x_minus_logsumexp"].fn
    report = check_softmax(fn, kind="log_softmax", dtypes=["float32"], suites=["bad_inputs"])
    assert report.passed
    assert any("tolerance='strict' fails it" in note for note in report.notes), report.notes
    strict = check_softmax(
        fn, kind="log_softmax", dtypes=["float32"], suites=["bad_inputs"], tolerance="strict"
    )
    accuracy = next(r for r in strict.failures if r.name == "accuracy")
    assert accuracy.worst is not None and accuracy.worst.case == "bad_inputs/near_minus_1e6"
    assert accuracy.worst.actual == 0.0 and -0.0151 < accuracy.worst.expected < -0.0150
    assert "rounded at their magnitude" in accuracy.hint
    # a max-shifted implementation: no such note
    plain = check_softmax(
        CORRECT["sequential_log_softmax"].fn,
        kind="log_softmax",
        dtypes=["float32"],
        suites=["bad_inputs"],
    )
    assert plain.passed and not any("strict" in note for note in plain.notes)


@pytest.mark.parametrize(
    "name", ["sequential_loop", "blocked_sum", "online_softmax", "reciprocal", "wider_internally"]
)
def test_the_strict_model_passes_max_shifted_implementations(name: str) -> None:
    entry = CORRECT[name]
    report = check_softmax(entry.fn, dtypes=["float16", "float32"], tolerance="strict")
    assert report.passed, report.text()


def test_the_error_ratio_reads_against_a_textbook_two_pass_softmax() -> None:
    # An upcast to float32 has the textbook's error (1×); numpy's own softmax computes
    # float16 in float16 (exp and division rounded to 11 bits): several times it (9×).
    upcast = check_softmax(CORRECT["reciprocal"].fn, dtypes=["float16", "float32"])
    ratio = {r.dtype: r.error_ratio for r in upcast.results if r.name == "accuracy"}
    assert ratio["float32"] is None and ratio["float16"] == 1.0
    from softmax_dispersion.testing.targets import numpy_softmax

    native = check_softmax(numpy_softmax, dtypes=["float16"])
    assert next(r.error_ratio for r in native.results if r.name == "accuracy") >= 4
    numpy = upcast
    half = check_softmax(WRONG["flushes_16bit_subnormals"].fn, dtypes=["float16"])
    worse = next(r for r in half.results if r.name == "accuracy")
    assert worse.error_ratio is not None and worse.error_ratio > 10
    data = numpy.to_dict()
    row = next(
        r for r in data["results"] if r["property"] == "accuracy" and r["dtype"] == "float16"
    )
    assert row["error_ratio"] == pytest.approx(ratio["float16"])
    assert "×" in numpy.table() and "two-pass softmax" in numpy.text()
