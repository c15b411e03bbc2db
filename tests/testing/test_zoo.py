"""The zoo: no false alarms on correct implementations, and every wrong one caught."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from softmax_dispersion.testing import (
    KINDS,
    Report,
    SoftmaxCallError,
    check_softmax,
)
from softmax_dispersion.testing.properties import PROPERTIES
from tests.testing import second_zoo
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
    assert report.passed, report.text()


@pytest.mark.parametrize("name", sorted(WRONG))
def test_wrong_implementations_fail_naming_the_property(name: str) -> None:
    entry = WRONG[name]
    report = _check(entry)
    assert not report.passed
    failed = {result.name for result in report.failures}
    assert set(entry.fails) <= failed, (name, failed)
    for result in report.failures:
        assert result.worst is not None and result.worst_input
        assert str(result.failures) in result.message
    with pytest.raises(AssertionError, match=entry.fails[0]):
        report.raise_if_failed()


def _failing_properties(wanted: set[str]) -> set[str]:
    """The properties the numpy entries of both zoos fail, until ``wanted`` are all seen."""
    found: set[str] = set()
    for entry in WRONG.values():
        if entry.library == "numpy" and not wanted <= found:
            found |= {r.name for r in _check(entry, dtypes=["float16", "float32"]).failures}
    for entry in second_zoo.WRONG.values():
        if entry.library == "numpy" and not wanted <= found:
            report = check_softmax(
                entry.fn, kind=entry.kind, dtypes=entry.dtypes, policies=dict(entry.policies)
            )
            found |= {r.name for r in report.failures}
    return found


@pytest.mark.slow  # the whole zoo through the whole battery: 34 s on a quiet core
def test_every_property_of_the_registry_is_seen_to_fail() -> None:
    wanted = {p.name for p in PROPERTIES}
    assert wanted <= _failing_properties(wanted)


def test_a_sequential_16_bit_sum_fails_every_model_but_only_in_16_bits() -> None:
    # A left-to-right sum is within the default (any order) model in float32 and
    # float64; held in float16 it stalls at 2048, which no model allows.
    report = _check(WRONG["sequential_16bit_sum"])
    assert {result.dtype for result in report.failures} == {"float16"}
    accuracy = next(r for r in report.failures if r.name == "accuracy")
    assert accuracy.hint.startswith("a sum held in the 16-bit format") or "uniform" in (
        accuracy.message
    )
    # The strict model takes any summation order too: a float32 sequential sum passes it.
    strict = _check(WRONG["sequential_16bit_sum"], tolerance="strict", dtypes=["float32"])
    assert strict.passed, strict.text()


def test_policies_are_reported_not_failed() -> None:
    report = _check(CORRECT["scipy_log_softmax"])
    assert report.passed
    assert set(report.policies) == {
        "+inf entry",
        "all -inf row",
        "finfo.min row",
        "NaN in a row",
        "NaN in a masked position",
        "subnormals",
        "input",
    }
    assert report.policies["all -inf row"] == "NaN"
    assert report.policies["input"] == "kept"

    def zero_masked(x: np.ndarray) -> np.ndarray:
        out = textbook(np.where(np.isnan(x), -np.inf, x))
        return np.nan_to_num(out, nan=0.0).astype(x.dtype)

    policies = _check(Entry(zero_masked), dtypes=["float32"]).policies
    assert policies["all -inf row"] == "zeros"
    assert policies["NaN in a row"] != "NaN"


def test_plus_inf_limit_policy_is_named() -> None:
    def limit(x: np.ndarray) -> np.ndarray:
        top = x.max(axis=-1, keepdims=True)
        hot = np.isinf(top) & (top > 0)
        plain = textbook(np.where(hot, 0.0, x).astype(x.dtype))
        share = (x == top).astype(x.dtype)
        return np.where(hot, share / share.sum(axis=-1, keepdims=True), plain).astype(x.dtype)

    report = _check(Entry(limit), dtypes=["float64"])
    assert report.policies["+inf entry"].startswith("one-hot")


def test_report_renderings(tmp_path: Path) -> None:
    report = _check(WRONG["divide_by_max"], dtypes=["float32", "float64"])
    data = json.loads(report.to_json())
    assert data["passed"] is False and data["tolerance"].startswith("T12")
    assert {r["dtype"] for r in data["results"]} == {"float32", "float64"}
    failed = [r for r in data["results"] if not r["passed"]]
    assert all("worst" in r and "allowed_ulps" in r["worst"] for r in failed)
    table = report.table()
    assert "accuracy" in table and "FAIL" in table and "float64" in table
    markdown = report.to_markdown(tmp_path)
    assert markdown.startswith("### ") and "| accuracy |" in markdown
    assert "Named behaviours" in markdown and "likely cause" in markdown
    text = report.text(tmp_path)
    assert "reproduce:" in text and "named behaviours" in text


def test_allowances_are_printed_in_the_unit_of_the_error() -> None:
    report = _check(WRONG["global_sum"], dtypes=["float64"])
    batch = next(r for r in report.failures if r.name == "batch_independence")
    assert "ULP (allowed " in batch.message and " ULP) at" in batch.message
    assert batch.worst is not None and batch.worst.allowed_ulps < 1e3


def test_the_text_reproducer_runs_and_shows_the_failure(tmp_path: Path) -> None:
    module = tmp_path / "planted.py"
    module.write_text(
        "import numpy as np\n"
        "def softmax(x):\n"
        "    e = np.exp(x - x.max(axis=-1, keepdims=True))\n"
        "    return (e / (e.sum(axis=-1, keepdims=True) + 1e-3)).astype(x.dtype)\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        import planted  # type: ignore[import-not-found]

        report = check_softmax(planted.softmax, dtypes=["float32"], suites=["random"])
    finally:
        sys.path.remove(str(tmp_path))
    accuracy = next(r for r in report.failures if r.name == "accuracy")
    code = report.reproducer(accuracy, tmp_path)
    assert "np.load(" in code or "np.array(" in code
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert done.returncode != 0 and "Not equal to the certified softmax" in done.stderr


def test_long_worst_inputs_are_saved_beside_the_report(tmp_path: Path) -> None:
    report = _check(WRONG["sequential_16bit_sum"], dtypes=["float16"], suites=["bad_inputs"])
    accuracy = next(r for r in report.failures if r.name == "accuracy")
    assert accuracy.worst is not None and accuracy.worst.inputs.size > 16
    code = report.reproducer(accuracy, tmp_path)
    saved = sorted(p.name for p in tmp_path.iterdir())
    assert saved == ["accuracy-float16.npy"] and str(tmp_path) in code
    np.testing.assert_array_equal(np.load(tmp_path / saved[0]), accuracy.worst.inputs)


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


def test_a_torch_function_given_numpy_arrays_is_told_to_use_torch() -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(SoftmaxCallError, match="library='torch'"):
        check_softmax(lambda x: torch.softmax(x, dim=-1), dtypes=["float32"], suites=["random"])


def test_argument_errors() -> None:
    assert tuple(KINDS) == (
        "softmax",
        "log_softmax",
        "adaptive_temperature",
        "ssmax",
        "masked_softmax",
        "attention",
        "softmax_vjp",
        "log_softmax_vjp",
    )
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
    with pytest.raises(ValueError, match="skips the masks suite"):
        check_softmax(textbook, kind="ssmax", s=0.5, suites=["masks"])
    with pytest.raises(ValueError, match="unknown policy"):
        check_softmax(textbook, policies={"fully masked row": "zeros"})
    with pytest.raises(ValueError, match="is one of flushed, kept"):
        check_softmax(textbook, policies={"subnormals": "gone"})


def test_a_required_policy_turns_a_different_one_into_a_failure() -> None:
    kwargs = {"dtypes": ["float64"], "suites": ["bad_inputs"]}
    assert check_softmax(textbook, policies={"all -inf row": "NaN"}, **kwargs).passed
    report = check_softmax(textbook, policies={"all -inf row": "zeros"}, **kwargs)
    assert not report.passed
    assert any("required zeros" in r.message for r in report.results)


@pytest.mark.parametrize("argument", ["dtypes", "suites"])
@pytest.mark.parametrize("library", ["numpy", "jax"])
def test_an_empty_selection_is_a_usage_error(argument: str, library: str) -> None:
    # Before: a pass for a function returning zeros (and with jax an UnboundLocalError).
    if library == "jax":
        pytest.importorskip("jax")

    def zeros(x: np.ndarray) -> np.ndarray:
        return np.zeros_like(x)

    with pytest.raises(ValueError, match=f"{argument} is empty: name at least one of"):
        check_softmax(zeros, library=library, **{argument: []})  # type: ignore[arg-type]


def test_nan_for_a_finite_row_is_an_accuracy_failure_not_a_policy() -> None:
    # softmax(β·x) with β = 2.42 (the adaptive rule at n = 82): a row of finfo.min
    # becomes −inf and NaN; a row of 4 (β = 1.75) already, in float32 and float64.
    report = _check(WRONG["adaptive_scale_first"], dtypes=["float32"], suites=["random"])
    accuracy = next(r for r in report.failures if r.name == "accuracy")
    assert "finfo.min row" in accuracy.message and "finite input" in accuracy.message
    assert "β·x overflows" in accuracy.hint
    assert not any(r.name == "policy" for r in report.failures)
    with pytest.raises(ValueError, match=r"'finfo\.min row' is one of uniform, ones, raises"):
        check_softmax(textbook, policies={"finfo.min row": "NaN"})
    # SSMax scaled first: NaN on rows near ±finfo.max once s·log n > 1
    ssmax = _check(WRONG["ssmax_scale_first"], dtypes=["float64"], suites=["bad_inputs"])
    cases = {r.worst.case for r in ssmax.failures if r.worst is not None}
    assert any(case.startswith("bad_inputs/near_finfo_") for case in cases), cases


def test_reports_never_print_nan_as_the_expected_value() -> None:
    # A NaN for a finite row prints the certified value it should have been; a policy
    # failure and a row-level failure print no "expected nan" placeholder.
    finite = _check(WRONG["adaptive_scale_first"], dtypes=["float64"], suites=["families"])
    policy = check_softmax(second_zoo.WRONG["garbage_on_inf_rows"].fn, dtypes=["float64"])
    t1 = _check(WRONG["divide_by_max"], dtypes=["float64"])
    for report in (finite, policy, t1):
        assert not report.passed
        assert "expected nan" not in report.text(), report.text()
    assert "actual nan, expected 0.25" in finite.text()


def test_no_folder_is_created_unless_one_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    def refuse(*args: object, **kwargs: object) -> str:
        raise AssertionError("the report created a temporary folder")

    monkeypatch.setattr(tempfile, "mkdtemp", refuse)
    report = _check(WRONG["sequential_16bit_sum"], dtypes=["float16"], suites=["bad_inputs"])
    text = report.text()
    assert "suite_case('bad_inputs/" in text and "np.load(" not in text
