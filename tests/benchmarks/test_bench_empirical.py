"""pytest-benchmark timings of the empirical layer (small sizes; no timing assertions).

The full comparison (an ensemble of the quick preset's seeds against one at a time, peak memory of
chunked against unchunked evaluation at n = 16384) is
``python tests/benchmarks/bench_empirical.py``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from softmax_dispersion.empirical.config import preset  # noqa: E402
from softmax_dispersion.empirical.evaluation import evaluate  # noqa: E402
from softmax_dispersion.empirical.training import build_model, train  # noqa: E402
from tests.benchmarks import bench_empirical  # noqa: E402

SEEDS = [0, 1, 2]


@pytest.mark.parametrize("seeds", [[0], SEEDS], ids=["one_seed", "quick_seeds"])
def test_training_steps(benchmark: Any, seeds: list[int]) -> None:
    config = preset("quick", steps=5, width=64, batch=128)
    run = benchmark.pedantic(train, args=(config, "softmax", seeds), rounds=3, iterations=1)
    assert len(run.final_loss) == len(seeds)
    assert all(0 < loss < 10 for loss in run.final_loss)


def test_chunked_evaluation(benchmark: Any) -> None:
    config = preset("quick", sizes=(256,), test_sets=32, chunk_items=2048, width=64)
    model = build_model(config, "softmax", SEEDS, torch.device("cpu")).eval()
    result = benchmark.pedantic(
        evaluate,
        args=(model, config, SEEDS, ["softmax", "adaptive_temperature"]),
        rounds=3,
        iterations=1,
    )
    assert len(result.rows) == 6
    assert all(row["instances"] == 32 and row["bound_violations"] == 0 for row in result.rows)


def test_the_script_pieces_run(capsys: pytest.CaptureFixture[str]) -> None:
    # In process (the script's subprocesses would each import torch again).
    results = bench_empirical.training_throughput(steps=2, warmup=1)
    assert results["ensemble_steps_per_s"] > 0 and results["ensemble_speedup"] > 0
    assert bench_empirical.main(["--memory-child", "64,4,128"]) == 0
    child = json.loads(capsys.readouterr().out)
    assert (
        child["rows"] == len(bench_empirical.SEEDS) * len(bench_empirical.NORMALISERS)
        and child["peak_bytes"] > 0
        and child["peak_growth_bytes"] >= 0
    )
    memory = {
        "memory_n": 64,
        "memory_test_sets": 4,
        "chunk_items": 128,
        "chunked_peak_bytes": child["peak_growth_bytes"],
        "unchunked_peak_bytes": child["peak_growth_bytes"],
        "unchunked_over_chunked": 1.0,
        "chunked_eval_s": child["seconds"],
        "unchunked_eval_s": child["seconds"],
        "exact_peak": child["exact_peak"],
    }
    text = bench_empirical.table(results | memory)
    assert "steps/s" in text and "MiB" in text
