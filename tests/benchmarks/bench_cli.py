"""Benchmark of the command line's start: ``softmax-dispersion [COMMAND] --help``.

Run ``python tests/benchmarks/bench_cli.py [--rounds N] [--json FILE]``.  Each help is
printed by a fresh interpreter (``python -m softmax_dispersion ... --help``), ``--rounds``
times; the table gives the median wall time of each, and of two baselines measured in the
same rounds: a bare interpreter (``python -c pass``) and one that imports numpy.  The
target of issue 23: every help under 0.3 s on an idle machine.  On a loaded machine the
wall times grow together; the ratio to the bare interpreter says what the command line
adds.  Nothing here asserts a time; the table and the JSON are the result.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

TARGET_S = 0.3
"""The issue's target for any ``--help``, in seconds."""


def invocations() -> dict[str, list[str]]:
    """Every help the command line prints, and the two baselines, as argument lists."""
    from softmax_dispersion.cli import COMMANDS
    from softmax_dispersion.cli.experiment import TASKS

    runs = {"python -c pass": ["-c", "pass"], "python -c 'import numpy'": ["-c", "import numpy"]}
    runs["--help"] = ["-m", "softmax_dispersion", "--help"]
    for name in COMMANDS:
        command = name.replace("_", "-")
        runs[f"{command} --help"] = ["-m", "softmax_dispersion", command, "--help"]
        if command == "experiment":
            for task in TASKS:
                runs[f"experiment {task} --help"] = [
                    "-m",
                    "softmax_dispersion",
                    command,
                    task,
                    "--help",
                ]
    return runs


def measure(rounds: int = 5, only: list[str] | None = None) -> list[dict[str, Any]]:
    """The median wall time of each invocation over ``rounds`` interleaved rounds."""
    runs = invocations()
    if only is not None:
        runs = {name: args for name, args in runs.items() if name in only}
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, args in runs.items():  # interleaved: a load spike hits every row alike
            start = time.perf_counter()
            subprocess.run([sys.executable, *args], capture_output=True, check=True)
            times[name].append(time.perf_counter() - start)
    bare = statistics.median(times["python -c pass"]) if "python -c pass" in times else None
    rows = []
    for name, measured in times.items():
        median = statistics.median(measured)
        rows.append(
            {
                "invocation": name,
                "median_s": median,
                "max_s": max(measured),
                "ratio_to_bare_python": median / bare if bare else None,
                "under_target": median < TARGET_S,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = parser.parse_args(argv)
    rows = measure(args.rounds)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"median of {args.rounds} rounds; load average {load:.2f}; target < {TARGET_S} s")
    print(f"{'invocation':<38} {'median s':>9} {'max s':>7} {'× bare':>7}")
    for row in rows:
        ratio = row["ratio_to_bare_python"]
        print(
            f"{row['invocation']:<38} {row['median_s']:>9.3f} {row['max_s']:>7.3f} "
            f"{ratio:>7.1f}" + ("" if row["under_target"] else "  over the target")
        )
    if args.json:
        with open(args.json, "w") as stream:
            json.dump({"load_average": load, "rows": rows}, stream, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
