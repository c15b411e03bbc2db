"""The registry of kinds: cheap to import, consistent, and the one place a kind is added."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from softmax_dispersion.testing import check_softmax
from softmax_dispersion.testing.engine import load_engine
from softmax_dispersion.testing.kinds import (
    BEHAVIOURS,
    KINDS,
    OUTPUT_NAMES,
    TARGET_LIBRARIES,
    Kind,
    Option,
    Policy,
    kind,
)
from softmax_dispersion.testing.properties import PROPERTIES
from softmax_dispersion.testing.targets import LIBRARIES, builtin
from tests.testing.zoo import textbook

HEAVY = ("numpy", "sympy", "z3", "torch", "jax", "flint", "mpmath", "hypothesis")


def test_the_registry_imports_no_heavy_library() -> None:
    code = (
        "import sys, json; import softmax_dispersion.testing.kinds as k; "
        "print(json.dumps([list(k.KINDS), sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{HEAVY!r})]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    names, heavy = json.loads(out.stdout)
    assert names == list(KINDS) and heavy == []


@pytest.mark.parametrize("name", list(KINDS))
def test_every_record_is_consistent(name: str) -> None:
    record = KINDS[name]
    engine = load_engine(record)
    assert set(record.suites) <= set(engine.suites())
    assert set(record.skipped_suites) <= set(engine.suites())
    assert not set(record.suites) & set(record.skipped_suites)
    assert set(record.properties) <= {p.name for p in PROPERTIES}
    for policy in record.policies:
        assert set(policy.names) <= set(OUTPUT_NAMES), policy.key
    assert not set(p.key for p in record.policies) & set(BEHAVIOURS)
    assert set(record.targets) <= set(TARGET_LIBRARIES)
    assert record.call.startswith("fn(") and record.arguments[0] in record.call
    for word in record.targets:
        if word == "numpy" or word == "scipy":
            assert callable(builtin(word, name).fn)


def test_the_target_words_cover_every_library() -> None:
    assert set(TARGET_LIBRARIES.values()) == set(LIBRARIES)


def test_an_unknown_kind_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown kind 'sparsemax'; known: softmax, log_softmax"):
        kind("sparsemax")


def test_a_policy_accepts_its_names_and_any_exception_when_raising_is_one() -> None:
    policy = Policy("row", "a row", ("NaN", "raises"))
    assert policy.accepts("NaN") and policy.accepts("raises KeyError")
    assert not policy.accepts("zeros") and not Policy("r", "r", ("NaN",)).accepts("raises X")


def test_adding_a_kind_is_one_record(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A new kind reusing the softmax engine: the battery, its options, its policies and
    # the CLI's help all read the record, and nothing else changes.
    doubled = replace(
        KINDS["softmax"],
        name="softmax_twice",
        summary="a test kind",
        options=(Option("width", "a test option"),),
        targets={},
    )
    monkeypatch.setitem(KINDS, "softmax_twice", doubled)
    report = check_softmax(
        textbook, kind="softmax_twice", width=2.0, dtypes=["float64"], suites=["bad_inputs"]
    )
    assert report.passed and report.kind == "softmax_twice"
    with pytest.raises(ValueError, match="needs the a test option"):
        check_softmax(textbook, kind="softmax_twice", dtypes=["float64"])
    with pytest.raises(ValueError, match="width is only used with kind='softmax_twice'"):
        check_softmax(textbook, width=2.0)
    from softmax_dispersion.cli import main

    with pytest.raises(SystemExit):
        main(["check", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "softmax_twice: fn(x)" in help_text and "--width" in help_text


def test_a_kind_record_is_frozen_data() -> None:
    record: Kind = KINDS["ssmax"]
    assert record.option("s") is not None and record.option("t") is None
    assert record.policy_keys[-2:] == tuple(BEHAVIOURS)
    with pytest.raises(KeyError):
        record.policy("fully masked row")
    assert record.options[0].read("s", 0.5) == 0.5


def _builtins() -> list[object]:
    found = []
    for name, record in KINDS.items():
        for word in record.targets:
            slow = word in ("torch", "jax")
            found.append(pytest.param(word, name, marks=[pytest.mark.slow] if slow else []))
    return found


@pytest.mark.parametrize(("word", "kind_name"), _builtins())
def test_every_builtin_target_passes_the_strict_model(word: str, kind_name: str) -> None:
    # Every real library computes a max-shifted formulation: the strict model (any
    # summation order, no log-sum-exp allowance) passes each, in every dtype.
    import importlib.util
    import warnings

    library = TARGET_LIBRARIES[word]
    if importlib.util.find_spec(word) is None:
        pytest.skip(f"{word} is not installed")
    target = builtin(word, kind_name)
    dtypes = KNOWN_FAILING_DTYPES.get((word, kind_name))
    checked = None if dtypes is None else [d for d in DTYPES if d not in dtypes]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        report = check_softmax(
            target.fn, kind=kind_name, library=library, tolerance="strict", dtypes=checked
        )
    assert report.passed, report.text()


DTYPES = ["float16", "bfloat16", "float32", "float64"]
KNOWN_FAILING_DTYPES = {
    # jax computes attention's softmax in float32 for float64 inputs (docs/oracle.md shows
    # the failure, a doctest of tests/testing/test_oracle_docs.py holds it).
    ("jax", "attention"): {"float64"},
    # jax's float16 softmax VJP: on the uniform row of 4096 with g of one sign an entry is
    # 3.6e-4 for a reference of -9.5e-6 (a <g, p> accumulated in float16, the bug the row
    # was added for); random/n1238 is 75 ULP against an allowance of 61, not yet traced.
    # (Its other dtypes, and the log-softmax VJP's, pass every suite in the strict model.)
    ("jax", "softmax_vjp"): {"float16"},
}
"""Built-ins whose failure in these dtypes is known (and documented), not a false alarm."""
