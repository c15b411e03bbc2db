"""Benchmark of the pretrained-heads probe (needs the pretrained extra).

Run ``python tests/benchmarks/bench_pretrained.py [--json FILE]``.  It measures

1. the default probe (``experiment pretrained`` with its defaults) in this process:
   wall-clock seconds per phase, the process's CPU time, the load average before and
   after (the machine may be shared), and the peak resident set size;
2. the certification of all 72 heads with one BLAS thread against the default thread
   count, as a ratio of wall-clock times (the certificates' float estimates work on
   32 × 32 matrices, where a multithreaded BLAS on a busy machine mostly waits).

Only measurements are reported; nothing is asserted about time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MIB = 2**20


def probe_run() -> dict[str, Any]:
    """The default probe: phases, CPU time, load, peak memory."""
    from softmax_dispersion.empirical.pretrained import run_probe

    load_before = os.getloadavg()
    cpu, wall = time.process_time(), time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        result = run_probe(Path(folder) / "probe")
    return {
        "wall_s": time.perf_counter() - wall,
        "cpu_s": time.process_time() - cpu,
        "phases_s": result["seconds"],
        "load_average_before": [round(v, 2) for v in load_before],
        "load_average_after": [round(v, 2) for v in os.getloadavg()],
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / MIB,
        "passed": result["checks"]["passed"],
    }


def certification_threads() -> dict[str, Any]:
    """Certifying every head with one BLAS thread against the default thread count."""
    from threadpoolctl import threadpool_limits

    from softmax_dispersion.empirical.pretrained import certify_head, load_minilm
    from softmax_dispersion.numerics import operator_norm

    loaded = load_minilm()
    heads = [loaded.head_weights(i, h) for i in range(loaded.layers) for h in range(loaded.heads)]

    def timed() -> float:
        start = time.perf_counter()
        for weights in heads:
            certify_head(weights)
        return time.perf_counter() - start

    single = timed()
    original = operator_norm.single_threaded_blas
    with threadpool_limits(None):
        operator_norm.single_threaded_blas = _no_limit  # type: ignore[assignment]
        try:
            import softmax_dispersion.empirical.pretrained.spread_bounds as spread_bounds

            spread_bounds.single_threaded_blas = _no_limit  # type: ignore[assignment]
            default = timed()
        finally:
            operator_norm.single_threaded_blas = original
            spread_bounds.single_threaded_blas = original
    return {
        "heads": len(heads),
        "one_blas_thread_s": single,
        "default_blas_threads_s": default,
        "default_over_one": default / single,
    }


def _no_limit() -> Any:
    import contextlib

    return contextlib.nullcontext()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    args = parser.parse_args(argv)
    results = {"probe": probe_run(), "certification": certification_threads()}
    text = json.dumps(results, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
