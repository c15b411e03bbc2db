"""Benchmarks of the numerics layer, all ratios measured in one process.

Run ``python tests/benchmarks/bench_numerics.py [--json FILE] [--quick]``.  It measures

1. run-length certification of a spike (``certified_softmax``, float64): the time at
   ``n = 10**18`` over the time at ``n = 10**3`` (target <= 1.5: the cost is per run);
2. dense certified softmax (``certified_softmax_dense``, float64, every value certified)
   of ``n = 10**5`` logits uniform in ``[−10, 10]``, as a ratio to
   ``scipy.special.softmax`` on the same array (target <= 50), and the same ratio for a
   plain per-element mpmath loop at the fast path's working precision (106 bits), for a
   plain per-element python-flint arb loop at that precision, and for the exact
   run-length path (``certified_softmax``, a run per element); the mpmath loop and the
   exact path are timed on a slice and scaled linearly, which the table says;
3. the peak memory (tracemalloc) of a certified dense evaluation at ``n = 10**6``
   (target < 1 GiB).

Times are the best of several repeats (``time.perf_counter``); functions compared with
each other are called in turn, so that they share the machine's state.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np

from softmax_dispersion.numerics import LogitSequence, certified_softmax, flint_available
from softmax_dispersion.numerics.dense import certified_softmax_dense
from softmax_dispersion.numerics.dense._driver import FAST_PRECISION

GIB = 2**30


def best_time(function: Callable[[], object], repeats: int) -> float:
    """The smallest wall time of ``repeats`` calls, in seconds (after one warm-up call)."""
    function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def best_times(functions: list[Callable[[], object]], repeats: int) -> list[float]:
    """Best wall times of several functions, called in turn (so they share conditions)."""
    for function in functions:
        function()
    best = [math.inf] * len(functions)
    for _ in range(repeats):
        for i, function in enumerate(functions):
            start = time.perf_counter()
            function()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def spike(n: int) -> LogitSequence:
    """One logit at 5, ``n − 1`` at 0."""
    return LogitSequence.from_runs([(5.0, 1), (0.0, n - 1)])


def spike_scaling(repeats: int = 20) -> dict[str, float]:
    """Run-length certification of the spike: time at 10**18 over time at 10**3."""
    small, large = best_times(
        [lambda: certified_softmax(spike(10**3)), lambda: certified_softmax(spike(10**18))],
        repeats,
    )
    assert certified_softmax(spike(10**18)).certified
    return {"spike_1e3_s": small, "spike_1e18_s": large, "spike_ratio": large / small}


def mpmath_loop(x: np.ndarray[Any, Any], precision: int) -> list[float]:
    """A plain per-element mpmath softmax (no certification) at ``precision`` bits."""
    with mpmath.workprec(precision):
        top = mpmath.mpf(float(x.max()))
        weights = [mpmath.exp(mpmath.mpf(float(v)) - top) for v in x]
        total = mpmath.fsum(weights)
        return [float(w / total) for w in weights]


def arb_loop(x: np.ndarray[Any, Any], precision: int) -> list[float]:
    """A plain per-element python-flint arb softmax (balls, no rounding) at ``precision``."""
    import flint

    with flint.ctx.workprec(precision):
        top = flint.arb(float(x.max()))
        weights = [(flint.arb(float(v)) - top).exp() for v in x]
        total = sum(weights, flint.arb(0))
        return [float((w / total).mid()) for w in weights]


def dense_ratios(
    n: int = 10**5, repeats: int = 15, mpmath_slice: int = 5000, arb_slice: int = 10**4
) -> dict[str, Any]:
    """Dense certified softmax against scipy, an mpmath loop and the exact path."""
    from scipy.special import softmax

    x = np.random.default_rng(0).uniform(-10, 10, n)
    result = certified_softmax_dense(x)
    assert result.all_certified
    scipy_s, dense_s = best_times([lambda: softmax(x), lambda: certified_softmax_dense(x)], repeats)
    mpmath_slice = min(mpmath_slice, n)
    arb_slice = min(arb_slice, n)
    part = x[:mpmath_slice]
    mpmath_s = best_time(lambda: mpmath_loop(part, FAST_PRECISION), 2) * n / mpmath_slice
    arb_loop_s = math.nan
    if flint_available():
        arb_loop_s = best_time(lambda: arb_loop(x, FAST_PRECISION), 2)
    rows = x[:arb_slice]
    arb_s = best_time(lambda: certified_softmax(LogitSequence.from_array(rows)), 1) * n / arb_slice
    return {
        "n": n,
        "scipy_s": scipy_s,
        "dense_s": dense_s,
        "dense_over_scipy": dense_s / scipy_s,
        "mpmath_loop_s": mpmath_s,
        "mpmath_loop_over_scipy": mpmath_s / scipy_s,
        "mpmath_loop_slice": mpmath_slice,
        "mpmath_precision_bits": FAST_PRECISION,
        "arb_loop_s": arb_loop_s,
        "arb_loop_over_scipy": arb_loop_s / scipy_s,
        "exact_path_s": arb_s,
        "exact_path_over_scipy": arb_s / scipy_s,
        "exact_path_slice": arb_slice,
        "fallback_rows": result.fallback_rows,
        "fallback_elements": result.fallback_elements,
        "relative_bound_log2": math.log2(result.relative_bound),
    }


def dense_peak_memory(n: int = 10**6) -> dict[str, Any]:
    """Peak traced memory of a certified dense evaluation (the input array excluded)."""
    x = np.random.default_rng(1).uniform(-10, 10, n)
    tracemalloc.start()
    try:
        result = certified_softmax_dense(x)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return {
        "memory_n": n,
        "peak_bytes": peak,
        "peak_gib": peak / GIB,
        "memory_all_certified": result.all_certified,
        "bytes_per_element": peak / n,
    }


def run(quick: bool = False) -> dict[str, Any]:
    """Every measurement; ``quick`` uses smaller sizes (for smoke tests)."""
    results: dict[str, Any] = {}
    results.update(spike_scaling(5 if quick else 20))
    if quick:
        results.update(dense_ratios(10**4, 3, 500, 1000))
        results.update(dense_peak_memory(10**5))
    else:
        results.update(dense_ratios())
        results.update(dense_peak_memory())
    return results


def table(results: dict[str, Any]) -> str:
    """The measurements as a small text table."""
    n = results["n"]
    rows = [
        ("spike, run-length, float64: t(1e18)/t(1e3)", f"{results['spike_ratio']:.2f}", "<= 1.5"),
        (
            f"dense certified, n={n:.0e}: time / scipy",
            f"{results['dense_over_scipy']:.1f}",
            "<= 50",
        ),
        (
            f"mpmath loop {results['mpmath_precision_bits']} bits / scipy "
            f"(slice {results['mpmath_loop_slice']}, scaled)",
            f"{results['mpmath_loop_over_scipy']:.0f}",
            "",
        ),
        (
            f"arb loop {results['mpmath_precision_bits']} bits / scipy (no rounding)",
            f"{results['arb_loop_over_scipy']:.0f}",
            "",
        ),
        (
            f"exact path (certified_softmax, a run per element) / scipy "
            f"(slice {results['exact_path_slice']}, scaled)",
            f"{results['exact_path_over_scipy']:.0f}",
            "",
        ),
        (
            f"peak memory, dense n={results['memory_n']:.0e}",
            f"{results['peak_gib'] * 1024:.0f} MiB",
            "< 1 GiB",
        ),
    ]
    width = max(len(r[0]) for r in rows)
    lines = [f"{'measurement':<{width}}  {'value':>9}  target", "-" * (width + 20)]
    lines += [f"{name:<{width}}  {value:>9}  {target}" for name, value, target in rows]
    lines.append(
        f"scipy {results['scipy_s'] * 1e3:.2f} ms, dense {results['dense_s'] * 1e3:.1f} ms, "
        f"fallback rows {results['fallback_rows']}, elements {results['fallback_elements']}, "
        f"relative bound 2**{results['relative_bound_log2']:.1f}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="FILE", help="also write the measurements as JSON")
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    args = parser.parse_args(argv)
    results = run(args.quick)
    print(table(results))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(results, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
