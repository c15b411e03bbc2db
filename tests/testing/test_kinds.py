"""The registry of kinds: cheap to import, consistent, and the one place a kind is added."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import pytest

from softmax_dispersion.testing import check_softmax
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
    engine = record.load()
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
