"""The attention and VJP zoo: every wrong entry caught, no false alarm, the built-ins pass.

torch's SDPA (each CPU backend, every dtype) and jax's attention (float32 and 16-bit)
must pass out of the box; jax's float64 attention computes its softmax in float32, and
the oracle must report that as a failure.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from softmax_dispersion.testing import Report, check_softmax
from softmax_dispersion.testing.kinds import KINDS
from softmax_dispersion.testing.targets import builtin
from tests.testing.attention_zoo import CORRECT, WRONG, Entry

NEW_KINDS = ("attention", "softmax_vjp", "log_softmax_vjp")


def _check(entry: Entry, **kwargs: object) -> Report:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return check_softmax(entry.fn, kind=entry.kind, library=entry.library, **kwargs)


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_implementations_pass_in_every_dtype(name: str) -> None:
    report = _check(CORRECT[name])
    assert report.passed, report.text()


@pytest.mark.parametrize("name", sorted(WRONG))
def test_wrong_implementations_fail_naming_the_property(name: str) -> None:
    entry = WRONG[name]
    report = _check(entry, dtypes=list(entry.dtypes or ()) or None)
    assert not report.passed
    failed = {result.name for result in report.failures}
    assert set(entry.fails) <= failed, (name, failed)
    for result in report.failures:
        assert str(result.failures) in result.message


def test_every_property_of_the_new_kinds_is_seen_to_fail() -> None:
    # each kind's accuracy, and every property of the attention kind and of the VJP
    # kinds (their engine is one), in a wrong entry that the test above runs
    seen: dict[str, set[str]] = {kind: set() for kind in NEW_KINDS}
    for entry in WRONG.values():
        seen[entry.kind] |= set(entry.fails)
    assert all("accuracy" in seen[kind] for kind in NEW_KINDS)
    assert set(KINDS["attention"].properties) <= seen["attention"]
    vjp = seen["softmax_vjp"] | seen["log_softmax_vjp"]
    assert set(KINDS["softmax_vjp"].properties) <= vjp


def test_a_wrong_entry_names_its_likely_cause() -> None:
    report = _check(WRONG["vjp_without_inner_product"], dtypes=["float32"])
    accuracy = next(r for r in report.failures if r.name == "accuracy")
    assert "⟨g, p⟩" in accuracy.hint
    report = _check(WRONG["nan_leak"], dtypes=["float32"], suites=["masks"])
    accuracy = next(r for r in report.failures if r.name == "accuracy")
    assert "fully masked row" in accuracy.hint


def test_the_reproducer_runs_and_shows_the_failure(tmp_path: object) -> None:
    import subprocess
    import sys

    report = _check(WRONG["scale_twice"], dtypes=["float32"], suites=["random"])
    result = next(r for r in report.failures if r.name == "accuracy")
    code = report.reproducer(result).replace(
        "fn = ...  # the function under test",
        "from tests.testing.attention_zoo import scale_twice as fn",
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "largest difference at" in done.stdout and "reference" in done.stdout


@pytest.mark.slow
def test_torch_sdpa_passes_on_every_cpu_backend_in_every_dtype() -> None:
    pytest.importorskip("torch")
    target = builtin("torch", "attention")
    assert set(target.fn.__oracle_variants__) >= {"math"}
    report = check_softmax(target.fn, kind="attention", library="torch")
    assert report.passed, report.text()
    assert {r.dtype for r in report.results} == {"float16", "bfloat16", "float32", "float64"}
    assert report.policies["fully masked row"] == "zeros"


@pytest.mark.slow
def test_jax_attention_passes_in_float32_and_16_bit_and_fails_in_float64() -> None:
    pytest.importorskip("jax")
    target = builtin("jax", "attention")
    short = check_softmax(
        target.fn,
        kind="attention",
        library="jax",
        dtypes=["float16", "bfloat16", "float32"],
        suites=["random", "masks", "large_scores"],
    )
    assert short.passed, short.text()
    assert short.policies["fully masked row"] == "uniform"
    wide = check_softmax(
        target.fn, kind="attention", library="jax", dtypes=["float64"], suites=["random"]
    )
    accuracy = next(r for r in wide.failures if r.name == "accuracy")
    assert accuracy.failures > 0 and "float32" in accuracy.hint


def test_the_vjp_built_ins_work_with_no_code_from_the_user() -> None:
    pytest.importorskip("torch")
    for kind in ("softmax_vjp", "log_softmax_vjp"):
        target = builtin("torch", kind)
        report = check_softmax(
            target.fn, kind=kind, library="torch", dtypes=["float64"], suites=["long"]
        )
        assert report.passed, report.text()  # torch's own backward in float64 at S = 4096
        assert any(r.cases >= 4 for r in report.results if r.name == "accuracy")


@pytest.mark.parametrize("document", ["docs/oracle.md", "README.md"])
def test_the_docs_count_the_zoo(document: str) -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / document).read_text()
    text = " ".join(text.split())  # a count may sit across a line break
    assert f"holds {len(WRONG)} wrong implementations" in text
    assert f"and {len(CORRECT)} honest ones" in text
