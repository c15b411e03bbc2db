"""Claim results as readable text: derivations (the proof-check scripts), summary and Coq tables."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from softmax_dispersion.theory.kernel import Claim, ClaimResult

if TYPE_CHECKING:
    from softmax_dispersion.theory.coq_proofs import CoqRun


def format_result(result: ClaimResult) -> str:
    """A claim's derivation, one line per step with its method, verdict and time."""
    claim = result.claim
    verdict = "VERIFIED" if result.verified else "FAILED"
    lines = [
        f"{claim.id}  {claim.title}  [{verdict}, {result.seconds:.2f} s]",
        f"  source:      {claim.source}",
        f"  statement:   {result.statement}",
        f"  assumptions: {'; '.join(result.readable_assumptions()) or 'none'}",
    ]
    for number, step in enumerate(result.steps, 1):
        mark = "ok  " if step.verified else "FAIL"
        lines.append(f"  {number:>2}. [{mark}] {step.description}")
        lines.append(f"        method: {step.method}; {step.seconds:.3f} s")
        lines.append(f"        shows:  {step.statement}")
        if not step.verified:
            lines.append(f"        why:    {step.detail}")
    if result.problem and not result.verified:
        lines.append(f"  problem: {result.problem}")
    return "\n".join(lines)


def run_claims(claims: Sequence[Claim], stream: TextIO = sys.stdout) -> int:
    """Check and print claims; return 0 when all verify, 1 otherwise."""
    cache: dict[str, ClaimResult] = {}
    ok = True
    for claim in claims:
        result = claim.check(cache)
        ok = ok and result.verified
        print(format_result(result), file=stream)
        print(file=stream)
    return 0 if ok else 1


def summary_table(results: Sequence[ClaimResult], seconds: float | None = None) -> str:
    """One line per claim (id, verdict, steps, seconds, title) and a total.

    ``seconds`` is the wall time to report in the total line (default: the claims' own
    times added up), so that a caller who also timed other work prints one time.
    """
    lines = [f"{'claim':<6} {'verdict':<9} {'steps':>5} {'seconds':>8}  title"]
    for result in results:
        verdict = "verified" if result.verified else "FAILED"
        passed = sum(step.verified for step in result.steps)
        lines.append(
            f"{result.claim.id:<6} {verdict:<9} {passed:>2}/{len(result.steps):<2} "
            f"{result.seconds:>8.2f}  {result.claim.title}"
        )
    verified = sum(r.verified for r in results)
    total = sum(r.seconds for r in results) if seconds is None else seconds
    lines.append(f"{verified} of {len(results)} claims verified in {total:.1f} s")
    return "\n".join(lines)


def _axiom_summary(names: Sequence[str]) -> str:
    from softmax_dispersion.theory.coq_proofs import REAL_AXIOMS, disallowed

    if not names:
        return ""
    reals = sum(name in REAL_AXIOMS for name in names)
    other = len(disallowed(names))
    primitive = len(names) - reals - other
    parts = [f"{reals} real-number"]
    if primitive:
        parts.append(f"{primitive} primitive-float/int63")
    if other:
        parts.append(f"{other} OTHER")
    return " + ".join(parts) + " axioms"


def coq_table(results: Sequence[ClaimResult], run: CoqRun) -> str:
    """One line per claim: the sympy/z3 verdict, Coq's verdict, and what it rests on."""
    from softmax_dispersion.theory.coq_proofs import COQ_INSTALL

    lines = [f"{'claim':<6} {'sympy/z3':<9} {'coq':<15} {'Print Assumptions'}"]
    for result, verdict in zip(results, run.verdicts, strict=True):
        sympy_verdict = "verified" if result.verified else "FAILED"
        lines.append(
            f"{result.claim.id:<6} {sympy_verdict:<9} {verdict.status:<15} "
            f"{_axiom_summary(verdict.assumptions)}".rstrip()
        )
    for verdict in run.verdicts:
        if verdict.status == "failed":
            lines += [f"{verdict.claim_id} failed in Coq:", f"  {verdict.detail}"]
        elif verdict.kernel_checked and verdict.detail:  # what a hooked theorem covers (T12)
            lines.append(f"{verdict.claim_id} in Coq: {verdict.detail}")
    checked = sum(v.kernel_checked for v in run.verdicts)
    formalised = sum(v.status in ("kernel-checked", "failed") for v in run.verdicts)
    if any(v.status == "coqc not found" for v in run.verdicts):
        lines.append(f"coqc not found: install Coq with {COQ_INSTALL}")
    else:
        lines.append(
            f"{checked} of {formalised} formalised claims kernel-checked by Coq "
            f"{run.coq_version}; {len(run.compile_seconds)} files compiled in "
            f"{run.compiled_in:.1f} s ({run.compile_cpu_seconds:.1f} s CPU; "
            f"{run.seconds:.1f} s with Print Assumptions)"
        )
    return "\n".join(lines)
