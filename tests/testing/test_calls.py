"""The caller: transposed (non-contiguous) inputs, and outputs that are an argument itself."""

from __future__ import annotations

import numpy as np
import pytest

from softmax_dispersion.testing import check_softmax
from softmax_dispersion.testing.adapters import adapter
from softmax_dispersion.testing.calls import Call, Caller
from tests.testing.attention_zoo import vjp_textbook


def _first(x: object, g: object) -> object:
    return x


@pytest.mark.parametrize("library", ["numpy", "torch"])
def test_a_transposed_input_is_a_non_contiguous_view_of_the_same_values(library: str) -> None:
    if library == "torch":
        pytest.importorskip("torch")
    rows = np.arange(24.0 * 16).reshape(24, 16)
    seen = {}

    def record(x: object) -> object:
        seen["contiguous"] = (
            x.is_contiguous() if hasattr(x, "is_contiguous") else x.flags.c_contiguous  # type: ignore[attr-defined]
        )
        return x * 1

    caller = Caller(record, adapter(library), "float32")
    called = caller(Call("t", (("x", rows),), transposed=("x",)))
    assert seen["contiguous"] is False
    np.testing.assert_array_equal(called.inputs["x"], rows)
    np.testing.assert_array_equal(called.out, rows)


def test_an_output_that_is_an_argument_counts_as_modifying_it() -> None:
    caller = Caller(_first, adapter("numpy"), "float32")
    caller(Call("c", (("x", np.ones((2, 3))), ("g", np.ones((2, 3))))))
    assert "the output is the argument x itself" in caller.modified


def test_a_vjp_that_writes_into_g_fails_by_default_and_passes_when_allowed() -> None:
    def into_g(x: np.ndarray, g: np.ndarray) -> np.ndarray:
        g[...] = vjp_textbook(x, g)
        return g

    report = check_softmax(into_g, kind="softmax_vjp", dtypes=["float32"], suites=["random"])
    policy = next(r for r in report.failures if r.name == "policy")
    assert "input → modified, required kept" in policy.message and "autograd" in policy.hint
    assert any("the output is the argument g itself" in note for note in report.notes)
    assert "FAIL" in report.table().split("policy", 1)[1].splitlines()[0]
    allowed = check_softmax(
        into_g,
        kind="softmax_vjp",
        dtypes=["float32"],
        suites=["random"],
        policies={"input": "modified"},
    )
    assert allowed.passed, allowed.text()

    # the softmax kinds still only name it
    def in_place(x: np.ndarray) -> np.ndarray:
        x -= x.max(axis=-1, keepdims=True)
        np.exp(x, out=x)
        x /= x.sum(axis=-1, keepdims=True)
        return x

    rows = check_softmax(in_place, dtypes=["float64"], suites=["random"])
    assert rows.passed and rows.policies["input"] == "modified"
