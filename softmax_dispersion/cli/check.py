"""``softmax-dispersion check``: run the oracle's property battery against a softmax.

The text report lists, for each failing property, the worst input, the actual and
reference values there, the allowance (in the same ULPs as the error), a runnable
reproducer and the likely cause where one is recognised; long inputs are written to
``.npy`` files beside the report (``--out DIR``, or a new temporary folder).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import warnings
from pathlib import Path
from typing import Any

from softmax_dispersion.cli._usage import (
    EXIT_FAILED,
    EXIT_OK,
    UsageError,
    usage_error,
    writable_folder,
)

__all__ = ["add_parser", "read_policies", "read_tolerance", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``check``."""
    from softmax_dispersion.testing.targets import BUILTIN_TARGETS, KIND_NAMES, LIBRARIES
    from softmax_dispersion.testing.tolerance import MODELS

    parser: argparse.ArgumentParser = subparsers.add_parser(
        "check",
        help="run the oracle's property battery against a softmax",
        description=(
            "Check a softmax against certified references: accuracy in ULPs (tolerance "
            "from T12: any summation order and standard formulation) per property and "
            "dtype, and the named behaviours (non-finite rows, fully masked rows, flushed "
            "subnormals, a modified input). TARGET is module:function or a built-in: "
            f"{', '.join(BUILTIN_TARGETS)}."
        ),
        epilog=(
            "Examples: 'softmax-dispersion check scipy', 'softmax-dispersion check torch "
            "--kind log_softmax', 'softmax-dispersion check jax --kind masked_softmax', "
            "'softmax-dispersion check mymodule:softmax --dtypes float32,float64 "
            '--require-policy "all -inf row=zeros" --out report/\'.'
        ),
    )
    parser.add_argument(
        "target", metavar="TARGET", help=f"module:function, or {', '.join(BUILTIN_TARGETS)}"
    )
    parser.add_argument(
        "--kind",
        default="softmax",
        metavar="K",
        help=f"{', '.join(KIND_NAMES)} (default softmax; masked_softmax calls fn(x, mask))",
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
    parser.add_argument(
        "--tolerance",
        metavar="MODEL",
        help=f"{', '.join(MODELS[:2])} (default {MODELS[0]}: any summation order and "
        "formulation; pairwise: the tighter opt-in) or a number of ULPs",
    )
    parser.add_argument(
        "--require-policy",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="fail unless a named behaviour is VALUE, e.g. 'all -inf row=zeros', "
        "'subnormals=kept', 'input=kept' (repeatable)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="also write report.md, report.json and the worst inputs (.npy) into DIR",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    return parser


def read_tolerance(text: str | None) -> object:
    """``--tolerance``: a model name or a number of ULPs (``None``: the default).

    Examples
    --------
    >>> read_tolerance("pairwise"), read_tolerance("4"), read_tolerance(None)
    ('pairwise', 4.0, None)
    """
    from softmax_dispersion.testing.tolerance import MODELS

    if text is None:
        return None
    if text in MODELS[:2]:
        return text
    try:
        ulps = float(text)
    except ValueError:
        raise UsageError(
            f"--tolerance must be {' or '.join(MODELS[:2])} or a number of ULPs, got {text!r}"
        ) from None
    if not (math.isfinite(ulps) and ulps >= 0):
        raise UsageError(f"--tolerance: a number of ULPs must be finite and >= 0, got {text!r}")
    return ulps


def read_policies(items: list[str]) -> dict[str, str]:
    """``--require-policy KEY=VALUE`` options as a mapping.

    Examples
    --------
    >>> read_policies(["all -inf row=zeros", "input=kept"])
    {'all -inf row': 'zeros', 'input': 'kept'}
    """
    required: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UsageError(f"--require-policy expects KEY=VALUE, got {item!r}")
        required[key.strip()] = value.strip()
    return required


def _library_installed(library: str | None) -> None:
    if library in ("torch", "jax") and importlib.util.find_spec(library) is None:
        raise UsageError(f"--library {library}: {library} is not installed (pip install {library})")


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
    tolerance = read_tolerance(args.tolerance)
    policies = read_policies(args.require_policy)
    if args.out is not None:
        writable_folder("--out", args.out)
    _library_installed(args.library)
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
                target.fn,
                kind=args.kind,
                library=target.library,
                dtypes=dtypes,
                s=args.s,
                tolerance=tolerance,
                policies=policies,
            )
    except SoftmaxCallError as error:
        raise UsageError(f"TARGET {target.name!r}: {error}") from None
    except ValueError as error:
        options = {
            "dtype": "--dtypes",
            "s": "--s",
            "kind": "--kind",
            "unknown policy": "--require-policy",
            "policy": "--require-policy",
            "library": "--library",
        }
        raise usage_error(error, options) from None
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "report.md").write_text(report.to_markdown(args.out) + "\n")
        (args.out / "report.json").write_text(report.to_json() + "\n")
    if args.json:
        print(report.to_json())
    else:
        print(report.text(args.out))
        if args.out is not None:
            print(f"report written to {args.out}")
        print("PASSED" if report.passed else "FAILED")
    return EXIT_OK if report.passed else EXIT_FAILED
