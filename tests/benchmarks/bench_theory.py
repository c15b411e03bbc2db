"""Benchmarks of the theory layer: checking every claim, and rechecking its certificate.

Run ``python tests/benchmarks/bench_theory.py [--json FILE] [--quick]``.  It measures

1. ``softmax-dispersion prove --certificate`` in a subprocess pinned to one core (where
   the platform allows it): its wall time, for the target "every claim in under 30 s on
   one core"; then ``softmax-dispersion recheck`` of that certificate, pinned likewise
   (target: under 30 s);
2. in this process, the CPU time of checking every claim (a fresh cache), per claim and
   in total, then of rechecking the certificate written from those results, and the
   ratio of the two (a recheck re-decides everything, so it should cost about as much).

``--quick`` checks T2 and T4 (with T1) only.  Nothing is asserted about time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

try:
    import resource
except ImportError:  # not on every platform
    resource = None  # type: ignore[assignment]

from softmax_dispersion.theory import all_claims, claim_by_id
from softmax_dispersion.theory.kernel import ClaimResult
from softmax_dispersion.theory.proof_certificate import build_certificate
from softmax_dispersion.theory.recheck import recheck

QUICK = ("T2", "T4")


# The child pins itself, then runs the CLI: no preexec_fn, which is unsafe in a threaded
# parent (jax, once imported, warns of a deadlock on every fork).
_PINNED_CLI = (
    "import os, runpy\n"
    "if hasattr(os, 'sched_setaffinity'):\n"
    "    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
    "runpy.run_module('softmax_dispersion', run_name='__main__', alter_sys=True)\n"
)


def _children_cpu() -> float:
    if resource is None:
        return float("nan")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _pinned(arguments: list[str]) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """The child's result, its wall time and its CPU time (on a shared machine the wall
    time counts the waits for the core; the CPU time does not)."""
    start, cpu = time.perf_counter(), _children_cpu()
    done = subprocess.run(
        [sys.executable, "-c", _PINNED_CLI, *arguments],
        capture_output=True,
        text=True,
        check=False,
    )
    return done, time.perf_counter() - start, _children_cpu() - cpu


def prove_on_one_core(ids: tuple[str, ...]) -> dict[str, Any]:
    """Wall time of ``prove --certificate`` and of ``recheck``, each in a child pinned to
    one core."""
    with tempfile.TemporaryDirectory() as folder:
        certificate = str(Path(folder) / "proof.json")
        done, wall, cpu = _pinned(["prove", *ids, "--json", "--certificate", certificate])
        records = json.loads(done.stdout) if done.returncode in (0, 1) else []
        rechecked, recheck_wall, recheck_cpu = _pinned(["recheck", certificate])
    return {
        "prove_one_core_wall_s": wall,
        "prove_one_core_cpu_s": cpu,
        "recheck_one_core_cpu_s": recheck_cpu,
        "prove_exit_status": done.returncode,
        "prove_claims_verified": sum(bool(r["verified"]) for r in records),
        "prove_claims": len(records),
        "recheck_one_core_wall_s": recheck_wall,
        "recheck_exit_status": rechecked.returncode,
        "pinned": hasattr(os, "sched_setaffinity"),
    }


def in_process(ids: tuple[str, ...]) -> dict[str, Any]:
    """CPU seconds of checking the claims, and of rechecking their certificate."""
    claims = [claim_by_id(i) for i in ids] if ids else list(all_claims())
    cache: dict[str, ClaimResult] = {}
    per_claim: dict[str, float] = {}
    start = time.process_time()
    results = []
    for claim in claims:
        before = time.process_time()
        results.append(claim.check(cache))
        per_claim[claim.id] = time.process_time() - before
    check_s = time.process_time() - start
    certificate = build_certificate(results, cache)
    start = time.process_time()
    report = recheck(json.loads(json.dumps(certificate)))
    recheck_s = time.process_time() - start
    return {
        "check_cpu_s": check_s,
        "per_claim_cpu_s": per_claim,
        "recheck_cpu_s": recheck_s,
        "recheck_over_check": recheck_s / check_s,
        "verified": all(r.verified for r in results),
        "reverified": report.verified,
        "certificate_bytes": len(json.dumps(certificate)),
    }


def run(quick: bool) -> dict[str, Any]:
    """Every measurement (``quick``: T2 and T4 only)."""
    ids = QUICK if quick else ()
    return {**prove_on_one_core(ids), **in_process(ids)}


def table(results: dict[str, Any]) -> str:
    """A readable summary of :func:`run`'s measurements."""
    lines = [
        f"prove on one core: {results['prove_one_core_wall_s']:.1f} s wall, "
        f"{results['prove_one_core_cpu_s']:.1f} s CPU "
        f"({results['prove_claims_verified']} of {results['prove_claims']} verified, "
        f"pinned: {results['pinned']}; target < 30 s)",
        f"recheck on one core: {results['recheck_one_core_wall_s']:.1f} s wall, "
        f"{results['recheck_one_core_cpu_s']:.1f} s CPU "
        f"(exit status {results['recheck_exit_status']}; target < 30 s)",
        f"check, in process: {results['check_cpu_s']:.1f} s CPU; "
        f"recheck: {results['recheck_cpu_s']:.1f} s CPU "
        f"(ratio {results['recheck_over_check']:.2f}); "
        f"certificate {results['certificate_bytes'] / 1024:.0f} KiB",
    ]
    lines += [
        f"  {claim:<4} {seconds:6.2f} s" for claim, seconds in results["per_claim_cpu_s"].items()
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="FILE", help="also write the measurements as JSON")
    parser.add_argument("--quick", action="store_true", help="T2 and T4 only (a smoke test)")
    args = parser.parse_args(argv)
    results = run(args.quick)
    print(table(results))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(results, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
