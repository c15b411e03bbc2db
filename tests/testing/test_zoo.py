"""The zoo: no false alarms on correct implementations, and every wrong one caught."""

from __future__ import annotations

import json
import time
import warnings

import numpy as np
import pytest

from softmax_dispersion.testing import (
    KINDS,
    Report,
    SoftmaxCallError,
    check_softmax,
)
from tests.testing.zoo import CORRECT, WRONG, Entry, textbook


def _check(entry: Entry, **kwargs: object) -> Report:
    if entry.library == "torch":
        pytest.importorskip("torch")
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return check_softmax(entry.fn, kind=entry.kind, library=entry.library, s=entry.s, **kwargs)


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_implementations_pass(name: str) -> None:
    report = _check(CORRECT[name])
    assert report.passed, report.table() + "\n" + report.to_markdown()
    assert report.seconds < 60


@pytest.mark.parametrize("name", sorted(WRONG))
def test_wrong_implementations_fail_naming_the_property(name: str) -> None:
    entry = WRONG[name]
    report = _check(entry)
    assert not report.passed
    failed = {result.property for result in report.failures}
    assert set(entry.fails) <= failed, (name, failed)
    for result in report.failures:
        assert result.message.startswith(f"{result.property}: ")
        assert result.worst_input
        assert "build_case(" in result.reproducer
    with pytest.raises(AssertionError, match=entry.fails[0]):
        report.raise_if_failed()


def test_sequential_sum_needs_the_recursive_model_and_stalls_in_16_bits() -> None:
    # A sequential sum is beyond the default (pairwise) model at n = 16384 in every
    # format; under the recursive model (any order) only the 16-bit stall is a bug.
    report = _check(WRONG["sequential_16bit_sum"], tolerance="recursive")
    failing = {result.dtype for result in report.failures}
    assert failing == {"float16"}
    accuracy = next(r for r in report.failures if r.property == "accuracy")
    assert "uniform" in accuracy.message or "random" in accuracy.message


def test_policies_are_reported_not_failed() -> None:
    report = _check(CORRECT["scipy_log_softmax"])
    assert report.passed
    assert set(report.policies) == {
        "+inf entry",
        "all -inf row",
        "NaN in a row",
        "NaN in a masked position",
    }
    assert report.policies["all -inf row"] == "NaN row"

    def zero_masked(x: np.ndarray) -> np.ndarray:
        out = textbook(np.where(np.isnan(x), -np.inf, x))
        return np.nan_to_num(out, nan=0.0).astype(x.dtype)

    policies = _check(Entry(zero_masked), dtypes=["float32"]).policies
    assert policies["all -inf row"] == "zeros"
    assert policies["NaN in a row"] != "NaN row"


def test_plus_inf_limit_policy_is_named() -> None:
    def limit(x: np.ndarray) -> np.ndarray:
        top = x.max(axis=-1, keepdims=True)
        hot = np.isinf(top) & (top > 0)
        plain = textbook(np.where(hot, 0.0, x).astype(x.dtype))
        share = (x == top).astype(x.dtype)
        return np.where(hot, share / share.sum(axis=-1, keepdims=True), plain).astype(x.dtype)

    report = _check(Entry(limit), dtypes=["float64"])
    assert report.policies["+inf entry"].startswith("one-hot")


def test_report_renderings() -> None:
    report = _check(WRONG["divide_by_max"], dtypes=["float32", "float64"])
    data = json.loads(report.to_json())
    assert data["passed"] is False
    assert {r["dtype"] for r in data["results"]} == {"float32", "float64"}
    table = report.table()
    assert "accuracy" in table and "FAIL" in table and "float64" in table
    markdown = report.to_markdown()
    assert markdown.startswith("### ") and "| accuracy |" in markdown
    assert "Non-finite policies" in markdown


def test_callable_errors_are_clear() -> None:
    def raises(x: np.ndarray) -> np.ndarray:
        raise RuntimeError("boom")

    with pytest.raises(SoftmaxCallError, match="raised RuntimeError: boom"):
        check_softmax(raises, dtypes=["float32"], suites=["random"])

    def flattens(x: np.ndarray) -> np.ndarray:
        return textbook(x).reshape(-1)

    with pytest.raises(SoftmaxCallError, match="returned shape"):
        check_softmax(flattens, dtypes=["float32"], suites=["random"])

    def not_an_array(x: np.ndarray) -> object:
        return object()

    with pytest.raises(SoftmaxCallError):
        check_softmax(not_an_array, dtypes=["float32"], suites=["random"])


def test_argument_errors() -> None:
    assert KINDS == ("softmax", "log_softmax", "adaptive_temperature", "ssmax")
    with pytest.raises(ValueError, match="needs the scale s"):
        check_softmax(textbook, kind="ssmax")
    with pytest.raises(ValueError, match="unknown kind"):
        check_softmax(textbook, kind="sparsemax")
    with pytest.raises(ValueError, match="unknown dtype"):
        check_softmax(textbook, dtypes=["bfloat16"])
    with pytest.raises(ValueError, match="unknown suite"):
        check_softmax(textbook, suites=["nope"])
    with pytest.raises(ValueError, match="unknown library"):
        check_softmax(textbook, library="cupy")


def test_full_numpy_check_is_fast() -> None:
    start = time.perf_counter()
    report = _check(CORRECT["textbook"])
    assert report.passed
    assert time.perf_counter() - start < 60
    assert {r.dtype for r in report.results} == {"float16", "float32", "float64"}


def test_a_required_policy_turns_a_different_one_into_a_failure() -> None:
    import numpy as np

    from softmax_dispersion.testing import check_softmax

    def textbook(x):  # type: ignore[no-untyped-def]
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    kwargs = {"dtypes": ["float64"], "suites": ["bad_inputs"]}
    assert check_softmax(textbook, policies={"all -inf row": "NaN row"}, **kwargs).passed
    report = check_softmax(textbook, policies={"all -inf row": "zeros"}, **kwargs)
    assert not report.passed
    assert any("required zeros" in r.message for r in report.results)
