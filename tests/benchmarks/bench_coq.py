"""What checking the formalised claims in Coq costs, against checking them with sympy/z3.

Run ``python tests/benchmarks/bench_coq.py [--json FILE]``.  In one process it

1. checks the formalised claims with the sympy/z3 kernel (the baseline), and
2. exports the Coq project to a fresh folder and compiles every file once, in
   dependency order, timing each ``coqc`` (wall time and the CPU time of the child
   processes: on a shared machine the wall time grows with the load, the CPU time does
   not), then runs ``Print Assumptions`` on every theorem.

It reports each file's time, the totals, and the ratio of Coq's compile time to the
sympy/z3 check; nothing is asserted about time.  Without ``coqc`` it says so and exits 0.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

from softmax_dispersion.theory import check
from softmax_dispersion.theory.coq_proofs import (
    COQ_INSTALL,
    find_coqc,
    formalised_ids,
    kernel_run,
)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure() -> dict[str, object]:
    ids = list(formalised_ids())
    start = time.perf_counter()
    results = check(*ids)
    sympy_seconds = time.perf_counter() - start
    cpu_before = _children_cpu()
    with tempfile.TemporaryDirectory() as folder:
        run = kernel_run(ids, directory=Path(folder))
    cpu = _children_cpu() - cpu_before
    return {
        "claims": ids,
        "sympy_z3_seconds": round(sympy_seconds, 2),
        "sympy_z3_verified": all(r.verified for r in results),
        "coq_version": run.coq_version,
        "coq_compile_seconds_per_file": {k: round(v, 2) for k, v in run.compile_seconds.items()},
        "coq_compile_seconds": round(run.compiled_in, 2),
        "coq_total_seconds_with_print_assumptions": round(run.seconds, 2),
        "coq_compile_cpu_seconds": round(run.compile_cpu_seconds, 2),
        "coq_child_cpu_seconds_with_print_assumptions": round(cpu, 2),
        "coq_compile_over_sympy_z3": round(run.compiled_in / sympy_seconds, 2),
        "kernel_checked": [v.claim_id for v in run.verdicts if v.kernel_checked],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", metavar="FILE", help="also write the measurements as JSON")
    args = parser.parse_args(argv)
    if find_coqc() is None:
        print(f"coqc not found: install Coq with {COQ_INSTALL}")
        return 0
    results = measure()
    for key, value in results.items():
        print(f"{key:<42} {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
