"""pytest-benchmark timings of the numerics layer (small sizes; no timing assertions).

The full comparison (ratios to scipy and to an mpmath loop at n = 10**5, memory at
n = 10**6) is ``python tests/benchmarks/bench_numerics.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from softmax_dispersion.numerics import certified_softmax
from softmax_dispersion.numerics.dense import certified_softmax_dense
from tests.benchmarks import bench_numerics

N = 10**4


@pytest.fixture(scope="module")
def logits() -> np.ndarray[Any, Any]:
    return np.random.default_rng(0).uniform(-10, 10, N)


@pytest.mark.parametrize("n", [10**3, 10**18])
def test_spike_run_length(benchmark: Any, n: int) -> None:
    result = benchmark.pedantic(
        certified_softmax, args=(bench_numerics.spike(n),), rounds=5, iterations=1
    )
    assert result.certified


@pytest.mark.parametrize("log", [False, True])
def test_dense_certified(benchmark: Any, logits: np.ndarray[Any, Any], log: bool) -> None:
    result = benchmark.pedantic(
        certified_softmax_dense, args=(logits,), kwargs={"log": log}, rounds=3, iterations=1
    )
    assert result.all_certified


def test_scipy_reference(benchmark: Any, logits: np.ndarray[Any, Any]) -> None:
    special = pytest.importorskip("scipy.special")
    values = benchmark.pedantic(special.softmax, args=(logits,), rounds=10, iterations=1)
    assert values.shape == logits.shape


def test_mpmath_loop(benchmark: Any, logits: np.ndarray[Any, Any]) -> None:
    part = logits[:500]
    values = benchmark.pedantic(
        bench_numerics.mpmath_loop, args=(part, 106), rounds=1, iterations=1
    )
    assert len(values) == part.size


def test_the_script_runs_quickly(tmp_path: Any) -> None:
    pytest.importorskip("scipy")
    out = tmp_path / "bench.json"
    assert bench_numerics.main(["--quick", "--json", str(out)]) == 0
    assert out.read_text().startswith("{")
    results = bench_numerics.run(quick=True)
    assert results["fallback_rows"] == 0 and results["memory_all_certified"]
    assert results["peak_bytes"] > 0
