"""``softmax-dispersion prove``: check the theory's claims step by step."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from softmax_dispersion.cli._usage import (
    EXIT_FAILED,
    EXIT_OK,
    UsageError,
    read_parameter,
    writable_file,
)

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``prove``."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "prove",
        help="check the machine-checked proofs of the theory's claims",
        description=(
            "Check the theory's claims step by step and print each step with the method "
            "that decided it, its verdict and its time."
        ),
        epilog=(
            "Examples: 'softmax-dispersion prove', 'softmax-dispersion prove T1 T4 --json', "
            "'softmax-dispersion prove T4 --at epsilon=0.01 delta=5 theta=1', "
            "'softmax-dispersion prove --kernel coq'."
        ),
    )
    parser.add_argument("ids", nargs="*", metavar="ID", help="claim ids (default: all)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per claim")
    parser.add_argument(
        "--certificate",
        type=Path,
        metavar="FILE",
        help=(
            "also write a JSON certificate: every claim (and every claim it cites) with its "
            "definitions, witness, every step's rule and inputs, hashes and tool versions; "
            "re-decide it with 'softmax-dispersion recheck FILE'"
        ),
    )
    parser.add_argument(
        "--at",
        nargs="+",
        default=[],
        metavar="NAME=VALUE",
        help="evaluate the claims' formulas exactly at these parameters (n, theta, delta, "
        "epsilon, s, beta), checking each is admissible and the point inside the claim's "
        f"assumptions; each value's numerator and denominator have at most {AT_DIGITS} "
        "digits",
    )
    parser.add_argument(
        "--kernel",
        choices=("sympy", "coq"),
        default="sympy",
        help="'coq' also compiles the Coq proofs of the formalised claims and runs Print "
        "Assumptions on each theorem (needs coqc with Coquelicot and Interval)",
    )
    return parser


AT_DIGITS = 400
"""The digits of a ``--at`` value's numerator and denominator: a formula's exact value is
printed in full and evaluated to 15 digits, and both grow with the values without bound
(red team 16: delta = 1e4000 took a minute, delta = 1e2200 with theta = 1e-2200 passed
Python's 4300-digit limit on printing an integer); at 400 digits every formula of the
claims prints and evaluates in seconds."""


def _assignments(items: list[str]) -> dict[str, object]:
    """``--at NAME=VALUE ...`` read exactly, each value checked against its domain."""
    import sympy as sp

    from softmax_dispersion.theory.formulas import DOMAINS

    values: dict[str, object] = {}
    for item in items:
        for part in filter(None, item.split(",")):
            name, sep, raw = part.partition("=")
            name = name.strip()
            if not sep:
                raise UsageError(f"--at expects NAME=VALUE, got {part!r}")
            if name not in DOMAINS:
                raise UsageError(f"--at: unknown parameter {name!r}; known: {', '.join(DOMAINS)}")
            if name in values:  # never a silent choice between two values
                raise UsageError(f"--at: {name} is given twice")
            exact = read_parameter("--at", name, raw)
            if max(abs(exact.numerator), exact.denominator) >= 10**AT_DIGITS:
                raise UsageError(
                    f"--at: {name}'s numerator and denominator must have at most {AT_DIGITS} digits"
                )
            values[name] = sp.Rational(exact.numerator, exact.denominator)
    return values


def _check_at_covers(claims: list[Any], at: dict[str, object]) -> None:
    """Refuse ``--at`` values that give no formula of these claims all its parameters,
    naming the parameters the nearest formula still needs."""
    from softmax_dispersion.theory import FORMULAS
    from softmax_dispersion.theory.formulas import DOMAINS

    ids = ", ".join(claim.id for claim in claims)
    formulas = [
        (name, [str(a) for a in FORMULAS[name].args]) for claim in claims for name in claim.formulas
    ]
    formulas = [(name, args) for name, args in formulas if all(a in DOMAINS for a in args)]
    if not formulas:
        raise UsageError(
            f"--at: no formula of {ids} takes only the parameters --at sets ({', '.join(DOMAINS)})"
        )
    missing = {name: [a for a in args if a not in at] for name, args in formulas}
    if any(not needed for needed in missing.values()):
        return
    nearest, args = min(formulas, key=lambda formula: len(missing[formula[0]]))
    raise UsageError(
        f"--at: {', '.join(missing[nearest])} missing: no formula of {ids} has all its "
        f"parameters (nearest: {nearest}({', '.join(args)}))"
    )


def _check_at_admissible(claims: list[Any], at: dict[str, object]) -> None:
    """Refuse ``--at`` values outside an assumption of a claim whose formula they would
    evaluate: each assumption in the given parameters alone is decided exactly there
    (red team 18: T5, which assumes n >= 2, printed its formula at n = 1 as ``zoo``)."""
    import sympy as sp

    for claim in claims:
        if not _instances_wanted(claim.formulas, at):
            continue
        for assumption in claim.assumptions:
            names = {symbol.name for symbol in assumption.free_symbols}
            if not names or not names <= set(at):
                continue
            values = {symbol: at[symbol.name] for symbol in assumption.free_symbols}
            if assumption.xreplace(values) is sp.false:
                raise UsageError(
                    f"--at: {claim.id} assumes {sp.sstr(assumption)}, which "
                    f"{', '.join(f'{name}={at[name]}' for name in sorted(names))} does not "
                    "satisfy: its formulas say nothing there"
                )


def _instances_wanted(formula_names: Any, at: dict[str, object]) -> bool:
    """Whether ``at`` gives some formula named here all its arguments."""
    from softmax_dispersion.theory import FORMULAS

    return any(all(str(a) in at for a in FORMULAS[name].args) for name in formula_names)


def _exact(expr: Any, values: dict[Any, Any]) -> Any:
    """``expr`` at ``values``, simplified by sympy only when no power of a parameter's
    value goes past 4096 bits (red team 16: at n = 2, s = delta = 1000, n**(delta*s) was
    computed exactly and its million bits could not be printed); past it, the values are
    put in as they stand, unevaluated, and only the 15-digit value is computed."""
    import mpmath
    import sympy as sp

    with mpmath.workdps(30):
        for power in expr.atoms(sp.Pow):
            if not power.exp.free_symbols:
                continue
            point = [mpmath.mpf(v.p) / v.q for v in values.values()]
            base, exponent = (
                sp.lambdify(tuple(values), part, modules="mpmath")(*point)
                for part in (power.base, power.exp)
            )
            if base != 0 and abs(exponent * mpmath.log(abs(base), 2)) > 4096:
                with sp.evaluate(False):
                    return expr.xreplace(values)
    return expr.xreplace(values)


APPROXIMATION_DIGITS = (100, 1000)
"""The working precisions (digits) tried for a value's 15 digits: a formula whose digits
cancel (T6 at delta = 300: -300 + log(1 + exp(300)), about 5.1e-131) needs more than
15, and one whose digits cancel past 1000 gets no approximation rather than a wrong one
(red team 22: ``0.e-122`` was printed as the value)."""


def _fifteen_digits(value: Any, what: str) -> str | None:
    """``value`` to 15 correct significant digits, or ``None`` when its digits cancel
    beyond every precision tried; a value that is no finite real is refused."""
    import sympy as sp
    from sympy.core.evalf import PrecisionExhausted

    for digits in APPROXIMATION_DIGITS:
        try:
            number = value.evalf(15, maxn=digits, strict=True)
        except PrecisionExhausted:
            continue
        if not (number.is_real and number.is_finite):  # never print zoo as a value
            raise UsageError(f"{what} is no real number ({number})")
        return str(number)
    if not sp.N(value, 15).is_finite:
        raise UsageError(f"{what} is no real number")
    return None


def _instances(formula_names: Any, at: dict[str, object]) -> list[dict[str, Any]]:
    """Each named formula evaluated exactly at ``at``, when ``at`` gives all its arguments."""
    import sympy as sp

    from softmax_dispersion.theory import FORMULAS

    rows = []
    for name in formula_names:
        formula = FORMULAS[name]
        args = [str(a) for a in formula.args]
        if all(a in at for a in args):
            value = _exact(formula.expr, {a: at[str(a)] for a in formula.args})
            where = ", ".join(f"{a}={at[a]}" for a in args)
            rows.append(
                {
                    "formula": name,
                    "at": where,
                    "exact": sp.sstr(value),
                    "value": _fifteen_digits(value, f"--at: {name} at {where}"),
                }
            )
    return rows


def run(args: argparse.Namespace) -> int:
    """Check the claims named (all by default); exit 1 when one does not verify."""
    from softmax_dispersion.theory import all_claims, claim_by_id
    from softmax_dispersion.theory._result_text import coq_table, format_result, summary_table
    from softmax_dispersion.theory.kernel import ClaimResult
    from softmax_dispersion.theory.proof_certificate import build_certificate

    try:
        claims = [claim_by_id(i) for i in args.ids] if args.ids else list(all_claims())
    except KeyError as error:
        raise UsageError(error.args[0]) from None
    at = _assignments(args.at)
    if at:
        _check_at_covers(claims, at)
        _check_at_admissible(claims, at)
    if args.certificate is not None:
        writable_file("--certificate", args.certificate)

    coq = args.kernel == "coq"
    cache: dict[str, ClaimResult] = {}
    results = []
    records = []
    for claim in claims:
        result = claim.check(cache)
        results.append(result)
        instances = _instances(claim.formulas, at) if at else []
        records.append({**result.to_dict(), "instances": instances})
        if not args.json and not coq:
            print(format_result(result))
            for row in instances:
                approximately = (
                    f"≈ {row['value']}"
                    if row["value"] is not None
                    else f"(its digits cancel past {APPROXIMATION_DIGITS[-1]}: no 15-digit value)"
                )
                print(f"  at {row['at']}: {row['formula']} = {row['exact']} {approximately}")
            print()
    coq_failed = False
    if coq:
        from softmax_dispersion.theory.coq import CoqPrintError
        from softmax_dispersion.theory.coq_proofs import kernel_run

        try:
            run = kernel_run([c.id for c in claims])
        except CoqPrintError as error:  # a claim changed into a form the printer refuses
            print(f"coq: a statement cannot be printed: {error}", file=sys.stderr)
            return EXIT_FAILED
        coq_failed = any(v.status == "failed" for v in run.verdicts)
        for record, verdict in zip(records, run.verdicts, strict=True):
            record["coq"] = verdict.to_dict()
    if args.json:
        print(json.dumps(records, indent=2))
    elif coq:
        print(coq_table(results, run))
    else:
        print(summary_table(results))
    if args.certificate is not None:
        try:
            certificate = build_certificate(results, cache)
            args.certificate.write_text(json.dumps(certificate, indent=1) + "\n")
        except OSError as error:
            raise UsageError(f"--certificate: cannot write {args.certificate}: {error}") from None
        if not args.json:
            print(f"certificate written to {args.certificate}")
    verified = all(r.verified for r in results) and not coq_failed
    return EXIT_OK if verified else EXIT_FAILED
