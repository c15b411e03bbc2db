"""The main job's oracle section: every installed library against the oracle."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from softmax_dispersion.reproduce import SECTIONS
from softmax_dispersion.reproduce import oracle as oracle_section
from softmax_dispersion.testing import targets


def test_registered_after_numerics() -> None:
    assert SECTIONS.index("oracle") == SECTIONS.index("numerics") + 1


def test_installed_targets_always_include_numpy() -> None:
    installed = oracle_section.installed_targets()
    assert installed[0] == "numpy" and set(installed) <= set(targets.BUILTIN_TARGETS)


def test_numpy_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(oracle_section, "installed_targets", lambda: ["numpy"])
    section = oracle_section.section(tmp_path)
    assert section.name == "oracle" and section.passed, section.table
    assert [(c["library"], c["kind"]) for c in section.data["checks"]] == [
        ("numpy", "softmax"),
        ("numpy", "log_softmax"),
    ]
    assert "numpy    softmax" in section.table and "pass" in section.table
    assert section.data["checks"][0]["report"]["passed"] is True
    assert "## Oracle" in section.markdown


def test_a_failing_library_fails_the_section(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def sloppy(x: Any) -> Any:
        return np.asarray(targets.numpy_softmax(x) * (1 + 1e-3), dtype=np.asarray(x).dtype)

    real = targets.builtin

    def builtin(name: str, kind: str = "softmax") -> targets.Target:
        target = real(name, kind)
        return targets.Target(sloppy, target.name, target.library) if kind == "softmax" else target

    monkeypatch.setattr(oracle_section, "installed_targets", lambda: ["numpy"])
    monkeypatch.setattr(targets, "builtin", builtin)
    section = oracle_section.section(tmp_path)
    assert not section.passed
    assert "FAIL" in section.table and section.summary.startswith("1/2")
