"""``softmax-dispersion check``: run the oracle's property battery against a softmax."""

from __future__ import annotations

import argparse
import warnings
from typing import Any

from softmax_dispersion.cli._usage import EXIT_FAILED, EXIT_OK, UsageError, usage_error

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``check``."""
    from softmax_dispersion.testing.targets import BUILTIN_TARGETS, KIND_NAMES, LIBRARIES

    parser: argparse.ArgumentParser = subparsers.add_parser(
        "check",
        help="run the oracle's property battery against a softmax",
        description=(
            "Check a softmax against certified references: accuracy in ULPs (tolerance "
            "from T12) per property and dtype, and the policies it follows on +inf, "
            "all −inf and NaN rows. TARGET is module:function or a built-in: "
            f"{', '.join(BUILTIN_TARGETS)}."
        ),
        epilog=(
            "Examples: 'softmax-dispersion check scipy', 'softmax-dispersion check torch "
            "--kind log_softmax', 'softmax-dispersion check mymodule:softmax --dtypes "
            "float32,float64 --json'."
        ),
    )
    parser.add_argument(
        "target", metavar="TARGET", help=f"module:function, or {', '.join(BUILTIN_TARGETS)}"
    )
    parser.add_argument(
        "--kind",
        default="softmax",
        metavar="K",
        help=f"{', '.join(KIND_NAMES)} (default softmax)",
    )
    parser.add_argument(
        "--library",
        metavar="LIB",
        help=f"the arrays TARGET takes: {', '.join(LIBRARIES)} (default numpy; implied by "
        "the built-ins)",
    )
    parser.add_argument(
        "--dtypes",
        nargs="+",
        metavar="DTYPE",
        help="float16, bfloat16, float32, float64 (space or comma separated; default: the "
        "library's)",
    )
    parser.add_argument("--s", type=float, metavar="S", help="SSMax scale (needed by --kind ssmax)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    return parser


def run(args: argparse.Namespace) -> int:
    """Run the battery; exit 1 when a property fails."""
    from softmax_dispersion.testing.targets import KIND_NAMES, TargetError, resolve_target

    if args.kind not in KIND_NAMES:
        raise UsageError(f"--kind must be one of {', '.join(KIND_NAMES)}, got {args.kind!r}")
    if args.kind == "ssmax" and args.s is None:
        raise UsageError("--kind ssmax needs --s S (the scale of β = S·log n)")
    if args.s is not None and args.kind != "ssmax":
        raise UsageError(f"--s applies to --kind ssmax only, not {args.kind}")
    dtypes = [d for item in args.dtypes or [] for d in item.split(",") if d] or None
    try:
        target = resolve_target(args.target, args.kind, args.library)
    except TargetError as error:
        raise UsageError(str(error)) from None
    from softmax_dispersion.testing import SoftmaxCallError, check_softmax

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
        raise usage_error(error, {"dtype": "--dtypes", "s": "--s", "kind": "--kind"}) from None
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
