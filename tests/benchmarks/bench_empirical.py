"""Benchmarks of the empirical layer: ensemble training and chunked evaluation.

Run ``python tests/benchmarks/bench_empirical.py [--json FILE] [--quick]``.  It measures

1. training throughput of the quick preset's model (width 64, batch 128): its seeds
   trained as one ensemble, against the same seeds trained one at a time, and one
   seed alone, in steps per second over a fixed number of steps after a warm-up run
   (:attr:`~softmax_dispersion.empirical.training.TrainingRun.steps_per_second`: the
   training loop only, without building the model);
2. the peak memory of evaluating an (untrained) ensemble of those seeds at ``n = 16384``,
   chunked (``chunk_items = 2**17``, the quick preset's) against unchunked (one chunk of
   ``test_sets × n`` items per seed), each in its own subprocess, as the growth of its
   peak resident set size over its resident size just before the evaluation (torch's CPU
   allocations are invisible to ``tracemalloc``).  On Linux the peak is reset first
   (``/proc/self/clear_refs``), elsewhere it is ``ru_maxrss`` (an upper bound).

Only ratios are reported; nothing is asserted about time.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import torch

from softmax_dispersion.empirical.config import ExperimentConfig, preset
from softmax_dispersion.empirical.evaluation import evaluate
from softmax_dispersion.empirical.training import build_model, train

MIB = 2**20
SEEDS = list(range(preset("quick").seeds))
NORMALISERS = ["softmax", "adaptive_temperature"]


def training_config(steps: int) -> ExperimentConfig:
    """The quick preset's model and batch, for ``steps`` steps."""
    return preset("quick", steps=steps, width=64, batch=128)


def training_throughput(steps: int = 200, warmup: int = 30) -> dict[str, Any]:
    """Steps per second: the seeds as one ensemble, one at a time, and one alone."""
    train(training_config(warmup), "softmax", SEEDS)  # kernels, allocator, threads
    config = training_config(steps)
    ensemble = train(config, "softmax", SEEDS).seconds
    sequential = [train(config, "softmax", [seed]).seconds for seed in SEEDS]
    single = train(config, "softmax", [SEEDS[0]]).seconds
    return {
        "train_steps": steps,
        "train_width": config.width,
        "train_batch": config.batch,
        "threads": torch.get_num_threads(),
        "ensemble_steps_per_s": steps / ensemble,
        "sequential_steps_per_s": steps / sum(sequential),
        "single_steps_per_s": steps / single,
        "ensemble_speedup": sum(sequential) / ensemble,
        "ensemble_over_single_time": ensemble / single,
    }


# --- memory, one subprocess per variant ---------------------------------------------


def _status_kib(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def memory_child(n: int, test_sets: int, chunk_items: int) -> dict[str, Any]:
    """Evaluate once at ``n`` in this process and report its own memory growth."""
    config = preset(
        "quick", sizes=(n,), test_sets=test_sets, chunk_items=chunk_items, seeds=len(SEEDS)
    )
    model = build_model(config, "softmax", SEEDS, torch.device("cpu")).eval()
    # Warm up (kernels, allocator, the theory's formulas) on a small size first.
    evaluate(model, preset("quick", sizes=(16,), test_sets=8), SEEDS, NORMALISERS)
    reset = _reset_peak()
    before = _status_kib("VmRSS")
    if before is None:  # not Linux: ru_maxrss (KiB on Linux, bytes on macOS)
        before = 0
    start = time.perf_counter()
    rows = evaluate(model, config, SEEDS, NORMALISERS).rows
    seconds = time.perf_counter() - start
    peak = _status_kib("VmHWM") if reset else None
    if peak is None:
        scale = 1024 if sys.platform == "darwin" else 1
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // scale
    return {
        "peak_growth_bytes": max(peak - before, 0) * 1024,
        "peak_bytes": peak * 1024,
        "exact_peak": reset,
        "seconds": seconds,
        "rows": len(rows),
        "accuracy_mean": sum(row["accuracy"] for row in rows) / len(rows),
    }


def _run_child(n: int, test_sets: int, chunk_items: int) -> dict[str, Any]:
    command = [
        sys.executable,
        __file__,
        "--memory-child",
        f"{n},{test_sets},{chunk_items}",
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def evaluation_memory(
    n: int = 16384, test_sets: int = 64, chunk_items: int | None = None
) -> dict[str, Any]:
    """Peak memory growth of a chunked and an unchunked evaluation at ``n``.

    ``chunk_items`` is the quick preset's (``2**17``) unless given.
    """
    chunk_items = chunk_items or preset("quick").chunk_items
    chunked = _run_child(n, test_sets, chunk_items)
    unchunked = _run_child(n, test_sets, test_sets * n)
    return {
        "memory_n": n,
        "memory_test_sets": test_sets,
        "memory_seeds": len(SEEDS),
        "chunk_items": chunk_items,
        "chunked_peak_bytes": chunked["peak_growth_bytes"],
        "unchunked_peak_bytes": unchunked["peak_growth_bytes"],
        "unchunked_over_chunked": unchunked["peak_growth_bytes"]
        / max(chunked["peak_growth_bytes"], 1),
        "chunked_eval_s": chunked["seconds"],
        "unchunked_eval_s": unchunked["seconds"],
        "exact_peak": chunked["exact_peak"] and unchunked["exact_peak"],
    }


def run(quick: bool = False) -> dict[str, Any]:
    """Every measurement; ``quick`` uses fewer steps and a smaller ``n`` (smoke tests)."""
    results: dict[str, Any] = {}
    if quick:
        results.update(training_throughput(steps=10, warmup=3))
        results.update(evaluation_memory(n=2048, test_sets=16, chunk_items=2**13))
    else:
        results.update(training_throughput())
        results.update(evaluation_memory())
    return results


def table(results: dict[str, Any]) -> str:
    """The measurements as a small text table."""
    steps, width, batch = results["train_steps"], results["train_width"], results["train_batch"]
    n, sets = results["memory_n"], results["memory_test_sets"]
    rows = [
        (
            f"training, {len(SEEDS)} seeds as one ensemble (width {width}, batch {batch})",
            f"{results['ensemble_steps_per_s']:.1f} steps/s",
        ),
        (
            f"training, the same {len(SEEDS)} seeds one at a time",
            f"{results['sequential_steps_per_s']:.1f} steps/s",
        ),
        ("training, 1 seed alone", f"{results['single_steps_per_s']:.1f} steps/s"),
        ("ensemble speed-up over one at a time", f"{results['ensemble_speedup']:.2f}x"),
        ("ensemble time / one seed's time", f"{results['ensemble_over_single_time']:.2f}"),
        (
            f"evaluation n={n}, {sets} sets x {len(SEEDS)} seeds, chunked "
            f"({results['chunk_items']} items)",
            f"{results['chunked_peak_bytes'] / MIB:.0f} MiB",
        ),
        ("evaluation, unchunked (one chunk)", f"{results['unchunked_peak_bytes'] / MIB:.0f} MiB"),
        ("unchunked / chunked peak memory", f"{results['unchunked_over_chunked']:.1f}x"),
    ]
    width_ = max(len(r[0]) for r in rows)
    lines = [f"{'measurement':<{width_}}  value", "-" * (width_ + 18)]
    lines += [f"{name:<{width_}}  {value}" for name, value in rows]
    peak = "peak reset via /proc" if results["exact_peak"] else "ru_maxrss (upper bound)"
    lines.append(
        f"{steps} steps after warm-up, {results['threads']} threads; memory as peak RSS growth "
        f"({peak}); evaluation {results['chunked_eval_s']:.1f} s chunked, "
        f"{results['unchunked_eval_s']:.1f} s unchunked"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="FILE", help="also write the measurements as JSON")
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--memory-child", metavar="N,SETS,CHUNK", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child:
        n, sets, chunk = (int(part) for part in args.memory_child.split(","))
        print(json.dumps(memory_child(n, sets, chunk)))
        return 0
    results = run(args.quick)
    print(table(results))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(results, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
