"""pytest-benchmark timing of a small oracle check (no timing assertions).

The full measurement (every dtype and suite, numpy, torch and jax, cold and warm, with
the time inside the implementation) is ``python tests/benchmarks/bench_oracle.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from softmax_dispersion.testing import check_softmax
from softmax_dispersion.testing.targets import numpy_softmax
from tests.benchmarks import bench_oracle


def test_a_small_check(benchmark: Any) -> None:
    report = benchmark.pedantic(
        check_softmax,
        args=(numpy_softmax,),
        kwargs={"dtypes": ["float32"], "suites": ["bad_inputs"]},
        rounds=2,
        iterations=1,
    )
    assert report.passed


def test_the_script_runs_quickly(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    assert bench_oracle.main(["--quick", "--libraries", "numpy", "--json", str(out)]) == 0
    rows = bench_oracle.run(["numpy"], quick=True)
    assert rows[0]["passed"] and rows[0]["shapes"] > 0
    assert 0 < rows[0]["cold_in_fn_s"] < rows[0]["cold_s"]
    assert out.read_text().startswith("[")


def test_the_help_timing_compares_with_a_bare_interpreter() -> None:
    timing = bench_oracle.help_seconds(repeat=1)
    assert timing["check_help_s"] > 0 and timing["bare_s"] > 0
    assert timing["ratio"] == timing["check_help_s"] / timing["bare_s"]


def test_the_attention_timing_runs(tmp_path: Path) -> None:
    out = tmp_path / "attention.json"
    code = bench_oracle.main(
        ["--kind", "attention", "--quick", "--libraries", "numpy", "--json", str(out)]
    )
    assert code == 0
    rows = bench_oracle.measure_attention("numpy", quick=True)
    assert rows[0]["passed"] == {"float32": True}
    assert 0 < rows[0]["float32_in_fn_s"] < rows[0]["float32_s"]
    assert '"implementation": "numpy"' in out.read_text()
