"""The ``softmax-dispersion`` command line.

Exit status: 0 when everything verified or passed, 1 when a check failed, 2 for bad
usage or input (one line on standard error naming the argument, never a traceback).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

from softmax_dispersion import __version__

__all__ = ["main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad input from the user: reported in one line, exit status 2."""


def _parse_assignments(items: Sequence[str]) -> dict[str, object]:
    from softmax_dispersion.theory.formulas import DOMAINS, parameter_value

    values: dict[str, object] = {}
    for item in items:
        for part in filter(None, item.split(",")):
            name, sep, raw = part.partition("=")
            name = name.strip()
            if not sep:
                raise UsageError(f"--at expects NAME=VALUE, got {part!r}")
            if name not in DOMAINS:
                raise UsageError(f"--at: unknown parameter {name!r}; known: {', '.join(DOMAINS)}")
            try:
                values[name] = parameter_value(name, raw)
            except ValueError as error:
                raise UsageError(f"--at: {error}") from None
    return values


def _instances(formula_names: Sequence[str], at: dict[str, object]) -> list[dict[str, str]]:
    """Each named formula evaluated exactly at ``at``, when ``at`` gives all its arguments."""
    import sympy as sp

    from softmax_dispersion.theory import FORMULAS

    rows = []
    for name in formula_names:
        formula = FORMULAS[name]
        args = [str(a) for a in formula.args]
        if all(a in at for a in args):
            value = formula(**{a: at[a] for a in args})
            rows.append(
                {
                    "formula": name,
                    "at": ", ".join(f"{a}={at[a]}" for a in args),
                    "exact": sp.sstr(value),
                    "value": str(sp.N(value, 15)),
                }
            )
    return rows


def _run_prove(args: argparse.Namespace) -> int:
    from softmax_dispersion.theory import all_claims, claim_by_id
    from softmax_dispersion.theory._report import format_result, summary_table
    from softmax_dispersion.theory.certificate import build_certificate
    from softmax_dispersion.theory.kernel import ClaimResult

    try:
        claims = [claim_by_id(i) for i in args.ids] if args.ids else list(all_claims())
    except KeyError as error:
        raise UsageError(error.args[0]) from None
    at = _parse_assignments(args.at)
    if args.certificate is not None and not args.certificate.parent.is_dir():
        raise UsageError(f"--certificate: folder {args.certificate.parent} does not exist")

    cache: dict[str, ClaimResult] = {}
    results = []
    records = []
    for claim in claims:
        result = claim.check(cache)
        results.append(result)
        instances = _instances(claim.formulas, at) if at else []
        records.append({**result.to_dict(), "instances": instances})
        if not args.json:
            print(format_result(result))
            for row in instances:
                print(f"  at {row['at']}: {row['formula']} = {row['exact']} ≈ {row['value']}")
            print()
    if args.json:
        print(json.dumps(records, indent=2))
    else:
        print(summary_table(results))
        if at and not any(r["instances"] for r in records):
            print("note: --at gave no formula of these claims all of its parameters")
    if args.certificate is not None:
        args.certificate.write_text(json.dumps(build_certificate(results), indent=2) + "\n")
        if not args.json:
            print(f"certificate written to {args.certificate}")
    return EXIT_OK if all(r.verified for r in results) else EXIT_FAILED


def _run_certify(args: argparse.Namespace) -> int:
    from softmax_dispersion._certify import certify, format_report
    from softmax_dispersion._parsing import parse_sizes
    from softmax_dispersion.numerics.evaluate import PrecisionError

    try:
        sizes = parse_sizes(args.n)
    except ValueError as error:
        raise UsageError(f"--n: {error}") from None
    if args.max_precision < 64:
        raise UsageError(f"--max-precision must be at least 64 bits, got {args.max_precision}")
    try:
        report = certify(
            args.family,
            sizes,
            delta=args.delta,
            theta=args.theta,
            epsilon=args.eps,
            s=args.s,
            format=args.format,
            engine=args.engine,
            max_precision=args.max_precision,
        )
    except PrecisionError as error:
        raise UsageError(f"{error} (raise --max-precision)") from None
    except ValueError as error:
        raise UsageError(_argument_message(str(error))) from None
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(format_report(report))
    if report.violated:
        return EXIT_FAILED
    if report.undecided:
        print(
            "softmax-dispersion certify: error: the enclosures could not decide a bound at "
            f"--max-precision {args.max_precision}; raise it",
            file=sys.stderr,
        )
        return EXIT_USAGE
    return EXIT_OK if report.verified else EXIT_FAILED


def _argument_message(message: str) -> str:
    """Name the command-line option behind a library error about a parameter."""
    for name, option in (
        ("epsilon", "--eps"),
        ("delta", "--delta"),
        ("theta", "--theta"),
        ("s ", "--s "),
        ("n ", "--n "),
        ("n=", "--n "),
    ):
        if message.startswith(name):
            return f"{option.strip()}: {message}"
    return message


def _run_reproduce(args: argparse.Namespace) -> int:
    from softmax_dispersion.reproduce import ReportFolderError, reproduce

    try:
        report = reproduce(args.out, stream=sys.stdout, quiet=args.json)
    except ReportFolderError as error:
        raise UsageError(str(error)) from None
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    return EXIT_OK if report.passed else EXIT_FAILED


def _run_check(args: argparse.Namespace) -> int:
    from softmax_dispersion._check import KIND_NAMES, CheckUsageError, resolve_target

    if args.kind not in KIND_NAMES:
        raise UsageError(f"--kind must be one of {', '.join(KIND_NAMES)}, got {args.kind!r}")
    if args.kind == "ssmax" and args.s is None:
        raise UsageError("--kind ssmax needs --s S (the scale of β = S·log n)")
    if args.s is not None and args.kind != "ssmax":
        raise UsageError(f"--s applies to --kind ssmax only, not {args.kind}")
    dtypes = [d for item in args.dtypes or [] for d in item.split(",") if d] or None
    try:
        target = resolve_target(args.target, args.kind, args.library)
    except CheckUsageError as error:
        raise UsageError(str(error)) from None
    try:
        from softmax_dispersion.testing import SoftmaxCallError, check_softmax
    except ImportError as error:
        raise UsageError(f"the oracle softmax_dispersion.testing is unavailable: {error}") from None
    try:
        with warnings.catch_warnings():
            # The battery feeds ±inf and NaN on purpose: the target's warnings are noise.
            warnings.simplefilter("ignore", RuntimeWarning)
            report = check_softmax(
                target.fn, kind=args.kind, library=target.library, dtypes=dtypes, s=args.s
            )
    except SoftmaxCallError as error:
        raise UsageError(f"TARGET {target.name!r}: {error}") from None
    except ValueError as error:
        raise UsageError(_argument_message(str(error))) from None
    if args.json:
        print(report.to_json())
    else:
        print(report.table())
        if report.policies:
            print("non-finite policies:")
            for case, policy in report.policies.items():
                print(f"  {case}: {policy}")
        print("PASSED" if report.passed else "FAILED")
    return EXIT_OK if report.passed else EXIT_FAILED


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, one subcommand per job."""
    parser = argparse.ArgumentParser(
        prog="softmax-dispersion",
        description=(
            "Executable evidence that softmax disperses: with logits in [m, M] at a "
            "fixed temperature every coefficient lies between e^{-δ/θ}/n and e^{δ/θ}/n."
        ),
        epilog="Exit status: 0 all verified, 1 a check failed, 2 bad usage or input.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    prove = commands.add_parser(
        "prove",
        help="check the machine-checked proofs of claims T1–T12",
        description=(
            "Check claims T1–T12 step by step and print each step with the method that "
            "decided it, its verdict and its time."
        ),
        epilog=(
            "Examples: 'softmax-dispersion prove', 'softmax-dispersion prove T1 T4 --json', "
            "'softmax-dispersion prove T4 --at epsilon=0.01 delta=5 theta=1'."
        ),
    )
    prove.add_argument("ids", nargs="*", metavar="ID", help="claim ids (default: all)")
    prove.add_argument("--json", action="store_true", help="print one JSON object per claim")
    prove.add_argument(
        "--certificate",
        type=Path,
        metavar="FILE",
        help="also write a JSON certificate (claims, steps, methods, tool versions)",
    )
    prove.add_argument(
        "--at",
        nargs="+",
        default=[],
        metavar="NAME=VALUE",
        help="evaluate the claims' formulas exactly at these parameters (n, theta, delta, "
        "epsilon, s, beta), checking each is admissible",
    )
    prove.set_defaults(run=_run_prove)

    certify = commands.add_parser(
        "certify",
        help="certified coefficients of an adversarial family against T1 and T2",
        description=(
            "Evaluate softmax on an adversarial logit family with certified enclosures "
            "(python-flint arb balls, or mpmath intervals), at sizes up to 10**18 and "
            "beyond, and check the largest and smallest coefficient against T1 (tight) and "
            "T2 (the paper's form). Exit 0 when every bound holds, 1 when one is violated, "
            "2 for bad input."
        ),
        epilog=(
            "Example: softmax-dispersion certify --family spike --n 16,1024,1e18 "
            "--delta 5 --theta 1 --eps 0.01 --s 0.5"
        ),
    )
    certify.add_argument(
        "--family",
        required=True,
        metavar="NAME",
        help="an adversarial "
        "family: spike, dip, two_level, near_ties, geometric_ladder, "
        "huge_magnitude, sentinel_floor, tiny_gaps, long_uniform, off_block",
    )
    certify.add_argument(
        "--n",
        required=True,
        metavar="N[,N...]",
        help="sizes: integers, 1e18, 10**18 or 2^20, comma-separated",
    )
    certify.add_argument("--delta", metavar="D", help="logit spread δ >= 0 (families that take it)")
    certify.add_argument("--theta", default="1", metavar="T", help="temperature θ > 0 (default 1)")
    certify.add_argument(
        "--eps", metavar="E", help="also certify the dispersion size n*(ε) (T4), 0 < ε < 1"
    )
    certify.add_argument(
        "--s", metavar="S", help="also show length scaling β = s·log n on the spike (T10)"
    )
    certify.add_argument(
        "--format",
        default="float64",
        choices=["float16", "bfloat16", "float32", "float64"],
        help="float format for the certified rounding (default float64)",
    )
    certify.add_argument(
        "--engine",
        choices=["arb", "mpmath"],
        help="arb (python-flint, default when installed) or mpmath",
    )
    certify.add_argument(
        "--max-precision",
        type=int,
        default=1 << 14,
        metavar="BITS",
        help="cap of the precision ladder in bits (default 16384)",
    )
    certify.add_argument("--json", action="store_true", help="print the report as JSON")
    certify.set_defaults(run=_run_certify)

    reproduce = commands.add_parser(
        "reproduce",
        help="run every built layer end to end and write one report",
        description=(
            "The main job: check every claim, then write report.md, report.json, a proof "
            "certificate and figures into --out, and print a summary table."
        ),
    )
    reproduce.add_argument(
        "--out",
        type=Path,
        default=Path("softmax-dispersion-report"),
        metavar="DIR",
        help="report folder (default: ./softmax-dispersion-report); must be empty, new, "
        "or an earlier report",
    )
    reproduce.add_argument("--json", action="store_true", help="print the report as JSON")
    reproduce.set_defaults(run=_run_reproduce)

    check = commands.add_parser(
        "check",
        help="run the oracle's property battery against a softmax",
        description=(
            "Check a softmax against certified references: accuracy in ULPs (tolerance "
            "from T12) per property and dtype, and the policies it follows on +inf, "
            "all −inf and NaN rows. TARGET is module:function or a built-in: numpy "
            "(textbook max-shifted), scipy, torch, jax."
        ),
        epilog=(
            "Examples: 'softmax-dispersion check scipy', 'softmax-dispersion check torch "
            "--kind log_softmax', 'softmax-dispersion check mymodule:softmax --dtypes "
            "float32,float64 --json'."
        ),
    )
    check.add_argument(
        "target", metavar="TARGET", help="module:function, or numpy, scipy, torch, jax"
    )
    check.add_argument(
        "--kind",
        default="softmax",
        metavar="K",
        help="softmax (default), log_softmax, adaptive_temperature or ssmax",
    )
    check.add_argument(
        "--library",
        metavar="LIB",
        help="the arrays TARGET takes: numpy (default), torch or jax; implied by torch, jax",
    )
    check.add_argument(
        "--dtypes",
        nargs="+",
        metavar="DTYPE",
        help="float16, bfloat16, float32, float64 (space or comma separated; default: the "
        "library's)",
    )
    check.add_argument("--s", type=float, metavar="S", help="SSMax scale (needed by --kind ssmax)")
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.set_defaults(run=_run_check)

    from softmax_dispersion._experiment import add_parsers

    add_parsers(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    from softmax_dispersion._experiment import ExperimentUsageError

    try:
        status: int = args.run(args)
    except (UsageError, ExperimentUsageError) as error:
        print(f"softmax-dispersion {args.command}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (``| head``): not an error of ours
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        return EXIT_OK
    return status
