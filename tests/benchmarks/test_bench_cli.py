"""The command-line start benchmark runs (no timing assertions).

The measurement itself is ``python tests/benchmarks/bench_cli.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.benchmarks import bench_cli


def test_every_help_is_measured() -> None:
    names = set(bench_cli.invocations())
    assert {"python -c pass", "--help", "certify --help", "experiment pretrained --help"} <= names


def test_the_script_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = bench_cli.measure(rounds=1, only=["python -c pass", "reproduce --help"])
    assert [row["invocation"] for row in rows] == ["python -c pass", "reproduce --help"]
    assert all(row["median_s"] > 0 for row in rows)
    out = tmp_path / "bench.json"
    monkeypatch.setattr(bench_cli, "measure", lambda rounds: rows)  # the script's own path
    assert bench_cli.main(["--rounds", "1", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["rows"] == rows
