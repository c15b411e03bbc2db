"""The theory benchmark runs (its quick form: T2 and T4); it asserts nothing about time."""

from __future__ import annotations

from tests.benchmarks import bench_theory


def test_quick_benchmark_runs_and_everything_verifies() -> None:
    results = bench_theory.run(quick=True)
    assert results["prove_exit_status"] == 0 and results["recheck_exit_status"] == 0
    assert results["verified"] and results["reverified"]
    assert set(results["per_claim_cpu_s"]) == {"T2", "T4"}
    assert "target < 30 s" in bench_theory.table(results)
