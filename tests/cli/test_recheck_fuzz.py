"""Fuzzing ``recheck`` with mutated real certificates.

Each mutation deletes, swaps, duplicates or retypes a field of a real certificate (T2
and T4, with T1 cited), nudges a number, renames a term node, plants a payload of Python
code, nests deeply, or damages the JSON text itself.  Over every mutation: no traceback
(only a verdict or a one-line refusal), no run past 10 s, no code run (the payloads
would create a marker file), and no exit 0 for a certificate whose content or readable
fields were changed.  Most mutations are refused cheaply: the content's hash is checked
before anything is read from it.

A quick run (250 mutations) is part of the suite; the full one (10,000, and 300 more
that recompute the hash so that the reader and the kernel themselves face the mutated
content) is marked slow.
"""

from __future__ import annotations

import contextlib
import copy
import json
import random
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from softmax_dispersion.theory._serial import content_hash
from softmax_dispersion.theory.recheck import CertificateFormatError, load, recheck

Path_ = tuple[Any, ...]


@pytest.fixture(scope="module")
def original() -> dict[str, Any]:
    from softmax_dispersion.theory import check
    from softmax_dispersion.theory.proof_certificate import build_certificate

    return json.loads(json.dumps(build_certificate(check("T2", "T4"))))


def _paths(data: Any, prefix: Path_ = ()) -> Iterator[Path_]:
    """Every path into the JSON tree (the root excluded)."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield (*prefix, key)
            yield from _paths(value, (*prefix, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield (*prefix, index)
            yield from _paths(value, (*prefix, index))


def _parent(data: Any, path: Path_) -> Any:
    for key in path[:-1]:
        data = data[key]
    return data


def _nested(depth: int) -> Any:
    value: Any = ["sym", "x"]
    for _ in range(depth):
        value = [value]
    return value


def _values(marker: Path) -> list[Any]:
    code = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    tower: Any = ["num", 2, 1]
    for _ in range(6):
        tower = ["pow", tower, ["num", 64, 1]]
    return [
        None,
        True,
        False,
        0,
        -1,
        2**64,
        10**1200,
        1.5,
        "",
        "text",
        code,
        {"tuple": [code]},
        {"sympy": code},
        [],
        {},
        ["sym", code],
        ["sym", "x\u202ey"],
        ["sym", "\u0445"],  # a Cyrillic look-alike of x
        ["num", 1, 0],
        ["num", True, 1],
        ["num", 10**1200, 1],
        ["pow", ["sym", "x"], ["num", 10**6, 1]],
        tower,
        ["lim", "n", ["sym", "n"], ["inf", 1], "-"],
        ["add", ["lim", "n", ["sym", "n"], ["inf", 1], "-"], ["num", 1, 1]],
        ["app", "eval", ["sym", "x"]],
        ["bound", 0],
        ["inf", 1],
        _nested(600),
        "\u202e" + "verified",
    ]


_OPS = ["add", "mul", "pow", "exp", "log", "lt", "le", "eq", "and", "not", "sym", "num", "x"]


def _copy(value: Any) -> Any:
    return json.loads(json.dumps(value))


def _mutate(data: dict[str, Any], rng: random.Random, values: list[Any]) -> str:
    """Mutate ``data`` in place; return what was done."""
    paths = list(_paths(data))
    path = rng.choice(paths)
    parent = _parent(data, path)
    key = path[-1]
    kind = rng.randrange(8)
    if kind == 0:  # delete
        if isinstance(parent, dict):
            del parent[key]
        else:
            parent.pop(key)
        return f"delete {path}"
    if kind == 1:  # swap with a sibling
        keys = list(parent.keys()) if isinstance(parent, dict) else list(range(len(parent)))
        other = rng.choice(keys)
        parent[key], parent[other] = parent[other], parent[key]
        return f"swap {path} with {other}"
    if kind == 2 and isinstance(parent, list):  # duplicate
        parent.insert(key, _copy(parent[key]))
        return f"duplicate {path}"
    if kind == 3 and isinstance(parent[key], int) and not isinstance(parent[key], bool):
        parent[key] += rng.choice((-1, 1))
        return f"nudge {path}"
    if kind == 4 and isinstance(parent[key], str) and parent[key]:
        text = parent[key]
        i = rng.randrange(len(text))
        parent[key] = text[:i] + rng.choice("x1 -_()'\"\\\u00e9") + text[i + 1 :]
        return f"edit {path}"
    if (
        kind == 5
        and isinstance(parent[key], list)
        and parent[key]
        and isinstance(parent[key][0], str)
    ):
        parent[key][0] = rng.choice(_OPS)
        return f"rename node {path}"
    if kind == 6 and isinstance(parent, dict):  # an extra field
        parent[rng.choice(["extra", "eval", "__class__", "inputs"])] = rng.choice(values)
        return f"extra field at {path}"
    parent[key] = _copy(rng.choice(values))
    return f"retype {path}"


_READABLE = ("rule", "description", "statement", "method")


def _readable(records: Any) -> Any:
    if not isinstance(records, list):
        return repr(records)
    return repr(
        [
            {k: r.get(k) for k in _READABLE} | {"substeps": _readable(r.get("substeps", []))}
            if isinstance(r, dict)
            else r
            for r in records
        ]
    )


def _entries_of(data: Any) -> set[str] | None:
    """Each claim entry as what a mutation must not change (its hash, its content, its
    readable fields), or ``None`` if the file is not even a list of claims.  A claim left
    out, or listed twice, changes no claim: a certificate of fewer claims may pass."""
    if not isinstance(data, dict) or not isinstance(data.get("claims"), list):
        return None
    found = set()
    for c in data["claims"]:
        if not isinstance(c, dict):
            found.add(repr(c))
            continue
        fields = [c.get(k) for k in ("hash", "content", "id", "title", "statement")]
        found.add(json.dumps(fields, sort_keys=True, default=repr) + _readable(c.get("steps")))
    return found


def _changed(data: Any, original: dict[str, Any]) -> bool:
    """Whether ``data`` changes the format or any claim of ``original``."""
    if not isinstance(data, dict):
        return True
    if (data.get("format"), data.get("format_version")) != (
        original["format"],
        original["format_version"],
    ):
        return True
    mutated, before = _entries_of(data), _entries_of(original)
    return mutated is None or before is None or not mutated <= before


def _run(data: Any, registry: dict[str, Any]) -> tuple[str, float, str]:
    start = time.perf_counter()
    try:
        report = recheck(data, registry=registry)
        outcome = "verified" if report.verified else "failed"
        detail = report.format().splitlines()[-1]
    except CertificateFormatError as error:
        outcome, detail = "unreadable", str(error)
    except Exception:  # the finding: a traceback
        outcome, detail = "traceback", traceback.format_exc()
    return outcome, time.perf_counter() - start, detail


def _text_mutation(text: str, rng: random.Random) -> str:
    i = rng.randrange(len(text))
    choice = rng.randrange(4)
    if choice == 0:
        return text[:i]
    if choice == 1:
        return text[:i] + text[i + 1 :]
    if choice == 2:
        return text[:i] + rng.choice('[]{}",:0-eE.\\') + text[i:]
    return text[:i] + text[i : i + 200] + text[i:]


def fuzz(
    original: dict[str, Any], count: int, seed: int, marker: Path, rehash: bool = False
) -> dict[str, Any]:
    """Run ``count`` mutations; return the tallies and every finding."""
    rng = random.Random(seed)
    values = _values(marker)
    registry: dict[str, Any] = {}
    text = json.dumps(original)
    tally: dict[str, int] = {}
    findings: list[str] = []
    slowest = 0.0
    for number in range(count):
        if not rehash and number % 10 == 9:  # one in ten damages the text itself
            damaged = _text_mutation(text, rng)
            what = "text"
            try:
                data = load(damaged)
            except CertificateFormatError:
                tally["unreadable"] = tally.get("unreadable", 0) + 1
                continue
            except Exception:
                findings.append(f"text mutation {number}: {traceback.format_exc()}")
                continue
        else:
            data = json.loads(text)
            what = _mutate(data, rng, values)
            if rehash:
                for entry in data.get("claims", []) if isinstance(data.get("claims"), list) else []:
                    if isinstance(entry, dict) and isinstance(entry.get("content"), dict):
                        with contextlib.suppress(TypeError, ValueError, RecursionError):
                            entry["hash"] = content_hash(entry["content"])
        changed = _changed(data, original)
        outcome, seconds, detail = _run(data, registry)
        slowest = max(slowest, seconds)
        tally[outcome] = tally.get(outcome, 0) + 1
        if outcome == "traceback":
            findings.append(f"{what}: {detail}")
        if seconds > 10:
            findings.append(f"{what}: {seconds:.1f} s")
        if outcome == "verified" and changed and not rehash:
            findings.append(f"{what}: verified although changed")
    if marker.exists():
        findings.append("a payload ran: the marker file exists")
    return {"tally": tally, "findings": findings, "slowest": slowest}


def _assert_clean(result: dict[str, Any], count: int) -> None:
    assert result["findings"] == [], result["findings"][:5]
    assert sum(result["tally"].values()) == count
    assert result["slowest"] < 10


def test_quick_fuzz(original: dict[str, Any], tmp_path: Path) -> None:
    result = fuzz(original, 250, seed=19, marker=tmp_path / "ran")
    _assert_clean(result, 250)
    assert result["tally"].get("failed", 0) + result["tally"].get("unreadable", 0) > 180


@pytest.mark.slow
def test_ten_thousand_mutations(original: dict[str, Any], tmp_path: Path) -> None:
    result = fuzz(original, 10_000, seed=2024, marker=tmp_path / "ran")
    _assert_clean(result, 10_000)


@pytest.mark.slow
def test_mutations_with_recomputed_hashes(original: dict[str, Any], tmp_path: Path) -> None:
    """The reader and the kernel face the mutated content itself (no cheap refusal)."""
    t2_only = copy.deepcopy(original)
    t2_only["claims"] = [c for c in t2_only["claims"] if c["id"] == "T2"]
    result = fuzz(t2_only, 300, seed=7, marker=tmp_path / "ran", rehash=True)
    _assert_clean(result, 300)


def test_the_fuzzer_sees_a_planted_traceback(
    original: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fuzzer must be able to fail: a reader that crashes is reported."""
    from softmax_dispersion.theory import recheck as module

    def crash(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("planted")

    monkeypatch.setattr(module, "read_claim", crash)
    data = json.loads(json.dumps(original))
    assert _run(data, {})[0] == "traceback"


def test_the_fuzzer_sees_a_planted_exit_0(
    original: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """And a recheck that ignored the readable fields would be reported."""
    from softmax_dispersion.theory import recheck as module

    data = json.loads(json.dumps(original))
    data["claims"][0]["title"] = "a title the content does not have"
    assert _changed(data, original)
    assert _run(data, {})[0] == "failed"
    monkeypatch.setattr(module, "_readable_problem", lambda entry, frozen: None)
    assert _run(data, {})[0] == "verified"  # what the fuzzer counts as a finding
