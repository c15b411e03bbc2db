"""Benchmark of the oracle's battery: the full check of one implementation per library.

Run ``python tests/benchmarks/bench_oracle.py [--json FILE] [--quick] [--libraries ...]
[--zoo] [--help-time]``.
For each library (numpy's textbook softmax, ``torch.softmax``, ``jax.nn.softmax``) it
measures, in this process:

1. ``cold``: the first full check (every dtype of the library, every suite) after the
   library itself is imported, so it includes the oracle's own first-use imports and,
   for jax, XLA's compilation of every shape;
2. ``warm``: the same check again;
3. ``in_fn``: the part of each that was spent inside the implementation (its own time on
   the battery's inputs, compilations included), and ``oracle`` = total − in_fn, the
   battery's own work (references, allowances, properties);
4. ``cpu``: the process's CPU time for the cold check (``time.process_time``: all its
   threads), which a loaded machine inflates far less than wall time;
5. ``shapes``: the distinct input shapes the implementation was given.

The targets of the issue that set them: cold ≤ 5 s (numpy), ≤ 10 s (torch), ≤ 20 s (jax).

``--zoo`` also scores both zoos of the test suite (``tests/testing/zoo.py`` and
``second_zoo.py``): wrong entries caught (each naming the property it must fail) and
false alarms on the correct ones, under the default model, and the correct entries
under ``tolerance="strict"`` (which must fail only the log-sum-exp formulations).
``--help-time`` measures building ``check``'s help in a fresh interpreter, against a
bare interpreter's start.
``--kind attention`` times the attention kind instead: one full check (every suite) of
each built-in implementation (numpy's textbook, torch's SDPA once per CPU backend, jax's
``dot_product_attention``), dtype by dtype, wall and CPU time and the part inside the
implementation; the target is 15 s per implementation, every dtype (numpy and torch).
Nothing here asserts a time; the table and the JSON are the result.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

TARGETS = {"numpy": 5.0, "torch": 10.0, "jax": 20.0}
"""The issue's targets for a cold full check, in seconds."""


class Timed:
    """Wraps an implementation, adding up the time spent inside it and its shapes."""

    def __init__(self, fn: Callable[..., Any], block: Callable[[Any], Any]) -> None:
        self.fn, self.block = fn, block
        self.seconds = 0.0
        self.shapes: set[tuple[tuple[int, ...], str]] = set()
        self.__name__ = self.__qualname__ = getattr(fn, "__name__", "fn")
        self.__module__ = getattr(fn, "__module__", "")

    def __call__(self, *args: Any) -> Any:
        start = time.perf_counter()
        out = self.block(self.fn(*args))
        self.seconds += time.perf_counter() - start
        self.shapes.add((tuple(int(d) for d in args[0].shape), str(args[0].dtype)))
        return out

    def reset(self) -> None:
        self.seconds = 0.0


def implementation(library: str) -> tuple[Callable[..., Any], Callable[[Any], Any]]:
    """The library's softmax over the last axis, and how to wait for its result."""
    if library == "numpy":
        from softmax_dispersion.testing.targets import numpy_softmax

        return numpy_softmax, lambda out: out
    if library == "torch":
        import torch

        return (lambda x: torch.softmax(x, dim=-1)), lambda out: out
    import jax

    return (lambda x: jax.nn.softmax(x, axis=-1)), lambda out: out.block_until_ready()


def measure(library: str, quick: bool = False) -> dict[str, Any]:
    """Cold and warm full checks of one library's softmax, with the time inside it."""
    from softmax_dispersion.testing import check_softmax

    fn, block = implementation(library)
    timed = Timed(fn, block)
    options: dict[str, Any] = {"library": library}
    if quick:
        options.update(dtypes=["float32"], suites=["random"])
    results: dict[str, Any] = {"library": library, "target_s": TARGETS[library]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for label in ("cold", "warm"):
            timed.reset()
            start, cpu = time.perf_counter(), time.process_time()
            report = check_softmax(timed, **options)
            total = time.perf_counter() - start
            results[f"{label}_cpu_s"] = time.process_time() - cpu
            results[f"{label}_s"] = total
            results[f"{label}_in_fn_s"] = timed.seconds
            results[f"{label}_oracle_s"] = total - timed.seconds
            results["passed"] = report.passed
    results["shapes"] = len(timed.shapes)
    results["dtypes"] = sorted({dtype for _, dtype in timed.shapes})
    results["within_target"] = results["cold_s"] <= TARGETS[library]
    return results


def run(libraries: list[str], quick: bool = False) -> list[dict[str, Any]]:
    """Every installed library of ``libraries``, measured in turn."""
    return [
        measure(library, quick)
        for library in libraries
        if library == "numpy" or importlib.util.find_spec(library) is not None
    ]


def table(rows: list[dict[str, Any]]) -> str:
    """The results as a plain-text table."""
    header = (
        f"{'library':<7} {'cold s':>7} {'in fn':>7} {'oracle':>7} {'cpu s':>7} {'warm s':>7} "
        f"{'in fn':>7} {'shapes':>6} {'target':>6}  verdict"
    )
    import os

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [f"{os.cpu_count()} CPU cores, load average {load:.1f} at the start", header]
    lines.append("-" * len(header))
    for r in rows:
        verdict = ("pass" if r["passed"] else "FAIL") + (
            "" if r["within_target"] else ", over target"
        )
        lines.append(
            f"{r['library']:<7} {r['cold_s']:>7.2f} {r['cold_in_fn_s']:>7.2f} "
            f"{r['cold_oracle_s']:>7.2f} {r['cold_cpu_s']:>7.2f} {r['warm_s']:>7.2f} "
            f"{r['warm_in_fn_s']:>7.2f} "
            f"{r['shapes']:>6} {r['target_s']:>6.0f}  {verdict}"
        )
    return "\n".join(lines)


def zoo_scores(strict: bool = True) -> dict[str, Any]:
    """Caught / false alarms of both zoos (numpy, torch and jax entries alike)."""
    import numpy as np

    from softmax_dispersion.testing import check_softmax

    root = str(Path(__file__).resolve().parents[2])
    if root not in sys.path:  # run as a script: the repository's tests package
        sys.path.insert(0, root)
    from tests.testing import second_zoo, zoo

    def check(entry: Any, tolerance: str | None = None) -> Any:
        options: dict[str, Any] = {"kind": entry.kind, "library": entry.library}
        for name in ("s", "dtypes", "policies", "tolerance"):
            value = getattr(entry, name, None)
            if value:
                options[name] = dict(value) if name == "policies" else value
        if tolerance:
            options["tolerance"] = tolerance
        reset = getattr(entry.fn, "reset", None)
        if reset is not None:
            reset()
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return check_softmax(entry.fn, **options)

    scores: dict[str, Any] = {}
    for label, module in (("zoo", zoo), ("second_zoo", second_zoo)):
        entries = {**module.CORRECT, **module.WRONG}
        usable = {
            name: entry
            for name, entry in entries.items()
            if entry.library == "numpy" or importlib.util.find_spec(entry.library) is not None
        }
        false = [n for n in module.CORRECT if n in usable and not check(usable[n]).passed]
        missed = []
        for name in module.WRONG:
            if name in usable:
                failed = {r.name for r in check(usable[name]).failures}
                if not set(usable[name].fails) <= failed:
                    missed.append(name)
        wrong = sum(n in usable for n in module.WRONG)
        correct = sum(n in usable for n in module.CORRECT)
        score = {
            "caught": wrong - len(missed),
            "wrong": wrong,
            "missed": missed,
            "false_alarms": false,
            "correct": correct,
        }
        if strict:
            score["strict_fails"] = [
                n for n in module.CORRECT if n in usable and not check(usable[n], "strict").passed
            ]
        scores[label] = score
    return scores


def help_seconds(repeat: int = 3) -> dict[str, float]:
    """Building ``check``'s help in a fresh interpreter, and a bare interpreter's start."""
    import subprocess

    build = (
        "import argparse; from softmax_dispersion.cli import check; "
        "check.add_parser(argparse.ArgumentParser().add_subparsers()).format_help()"
    )

    def best(code: str) -> float:
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
            times.append(time.perf_counter() - start)
        return min(times)

    bare, helped = best("pass"), best(build)
    return {"bare_s": bare, "check_help_s": helped, "ratio": helped / bare}


# --- the attention kind ------------------------------------------------------------------

ATTENTION_TARGET = 15.0
"""The issue's target for a full attention check of one implementation, every dtype (s)."""


class TimedAttention:
    """Wraps an attention implementation, adding up the time spent inside it."""

    def __init__(self, fn: Callable[..., Any], block: Callable[[Any], Any]) -> None:
        self.fn, self.block = fn, block
        self.seconds = 0.0
        self.__name__ = self.__qualname__ = getattr(fn, "__name__", "fn")
        self.__module__ = getattr(fn, "__module__", "")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        out = self.block(self.fn(*args, **kwargs))
        self.seconds += time.perf_counter() - start
        return out


def attention_implementations(library: str) -> dict[str, tuple[Callable[..., Any], Any]]:
    """The built-in attention of ``library``: one implementation per torch CPU backend."""
    from softmax_dispersion.testing.targets import builtin

    fn = builtin(library, "attention").fn
    if library == "jax":
        return {"jax": (fn, lambda out: out.block_until_ready())}
    variants = getattr(fn, "__oracle_variants__", None) or {library: fn}
    named = {
        f"{library}[{name}]" if library == "torch" else name: v for name, v in variants.items()
    }
    return {name: (impl, lambda out: out) for name, impl in named.items()}


def measure_attention(library: str, quick: bool = False) -> list[dict[str, Any]]:
    """One full attention check per implementation of ``library``, timed per dtype.

    A fresh check per dtype (the references, allowances and properties of that dtype);
    ``total_s`` is their sum, the time of one full check of every dtype.
    """
    from softmax_dispersion.testing import check_softmax
    from softmax_dispersion.testing.adapters import LIBRARY_DTYPES

    dtypes = ["float32"] if quick else list(LIBRARY_DTYPES[library])
    rows = []
    for name, (fn, block) in attention_implementations(library).items():
        timed = TimedAttention(fn, block)
        row: dict[str, Any] = {"implementation": name, "library": library, "passed": {}}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for dtype in dtypes:
                timed.seconds = 0.0
                start, cpu = time.perf_counter(), time.process_time()
                report = check_softmax(
                    timed,
                    kind="attention",
                    library=library,
                    dtypes=[dtype],
                    suites=["random"] if quick else None,
                )
                row[f"{dtype}_s"] = time.perf_counter() - start
                row[f"{dtype}_cpu_s"] = time.process_time() - cpu
                row[f"{dtype}_in_fn_s"] = timed.seconds
                row["passed"][dtype] = report.passed
        row["total_s"] = sum(row[f"{d}_s"] for d in dtypes)
        row["total_cpu_s"] = sum(row[f"{d}_cpu_s"] for d in dtypes)
        row["within_target"] = row["total_s"] <= ATTENTION_TARGET
        rows.append(row)
    return rows


def attention_table(rows: list[dict[str, Any]]) -> str:
    """The attention results: seconds per dtype (wall; CPU in the total column)."""
    dtypes = ["float16", "bfloat16", "float32", "float64"]
    header = f"{'implementation':<26} " + " ".join(f"{d:>9}" for d in dtypes)
    header += f" {'total s':>8} {'cpu s':>7}  verdict"
    lines = [header, "-" * len(header)]
    for r in rows:
        cells = " ".join(f"{r[f'{d}_s']:>9.2f}" if f"{d}_s" in r else f"{'-':>9}" for d in dtypes)
        failed = [d for d, ok in r["passed"].items() if not ok]
        verdict = "pass" if not failed else "FAIL " + ",".join(failed)
        verdict += "" if r["within_target"] else ", over target"
        lines.append(
            f"{r['implementation']:<26} {cells} {r['total_s']:>8.2f} {r['total_cpu_s']:>7.2f}"
            f"  {verdict}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the table, optionally write JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--quick", action="store_true", help="float32 and one suite only")
    parser.add_argument(
        "--libraries", nargs="+", default=list(TARGETS), choices=list(TARGETS), metavar="LIB"
    )
    parser.add_argument("--zoo", action="store_true", help="also score both zoos")
    parser.add_argument("--help-time", action="store_true", help="also time check's help")
    parser.add_argument(
        "--kind",
        default="softmax",
        choices=["softmax", "attention"],
        help="softmax (default) or attention (every implementation, timed per dtype; "
        f"target {ATTENTION_TARGET:g} s each)",
    )
    args = parser.parse_args(argv)
    if args.kind == "attention":
        found = [
            row
            for library in args.libraries
            if library == "numpy" or importlib.util.find_spec(library) is not None
            for row in measure_attention(library, args.quick)
        ]
        print(attention_table(found))
        if args.json:
            with open(args.json, "w") as handle:
                json.dump(found, handle, indent=2)
        return 0
    rows = run(args.libraries, args.quick)
    print(table(rows))
    result: dict[str, Any] = {"checks": rows}
    if args.help_time:
        result["help"] = help_seconds()
        help_ = result["help"]
        print(
            f"check --help parser: {help_['check_help_s']:.3f} s in a fresh interpreter, "
            f"{help_['ratio']:.2f}x a bare start ({help_['bare_s']:.3f} s)"
        )
    if args.zoo:
        result["zoo"] = zoo_scores()
        for label, score in result["zoo"].items():
            print(
                f"{label}: caught {score['caught']}/{score['wrong']} (missed: "
                f"{', '.join(score['missed']) or 'none'}), false alarms "
                f"{len(score['false_alarms'])}/{score['correct']}"
                + (
                    f", strict fails {len(score['strict_fails'])}: "
                    f"{', '.join(score['strict_fails']) or 'none'}"
                    if "strict_fails" in score
                    else ""
                )
            )
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(result if (args.zoo or args.help_time) else rows, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
