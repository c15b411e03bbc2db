"""``softmax-dispersion check``: run the oracle's property battery against an implementation.

The kinds, their options (``--s``), the built-in targets and the tolerance models come
from the registry :mod:`softmax_dispersion.testing.kinds`, which imports the standard
library only: building this command's help loads neither numpy nor the oracle.

The text report lists, for each failing property, the worst input, the actual and
reference values there, the allowance (in the same ULPs as the error), a runnable
reproducer and the likely cause where one is recognised; with ``--out DIR`` the report
and long worst inputs (``.npy``) are written there.
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

__all__ = ["add_parser", "read_policies", "read_selection", "read_tolerance", "run"]


def _kind_lines() -> str:
    from softmax_dispersion.testing.kinds import KINDS

    return "; ".join(f"{k.name}: {k.call}" for k in KINDS.values())


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``check`` (its help text from the kinds' registry, without numpy)."""
    from softmax_dispersion.testing.kinds import (
        KINDS,
        TARGET_LIBRARIES,
        TOLERANCE_MODELS,
        builtin_targets,
        describe_options,
        option_names,
    )

    targets = ", ".join(builtin_targets())
    models = list(TOLERANCE_MODELS)
    default = next(iter(KINDS))
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "check",
        help="run the oracle's property battery against a softmax",
        description=(
            "Check an implementation against certified references: accuracy in ULPs "
            "(tolerance derived in the kind's claim) per property and dtype, and the "
            "named behaviours (non-finite rows, fully masked rows, flushed subnormals, a "
            f"modified input). TARGET is module:function or a built-in: {targets}."
        ),
        epilog=(
            "Examples: 'softmax-dispersion check scipy', 'softmax-dispersion check torch "
            "--kind log_softmax', 'softmax-dispersion check jax --kind masked_softmax', "
            "'softmax-dispersion check mymodule:softmax --dtypes float32,float64 "
            '--require-policy "all -inf row=zeros" --out report/\'.'
        ),
    )
    parser.add_argument("target", metavar="TARGET", help=f"module:function, or {targets}")
    parser.add_argument(
        "--kind",
        default=default,
        metavar="K",
        help=f"what TARGET computes, and how it is called (default {default}): {_kind_lines()}",
    )
    libraries = ", ".join(dict.fromkeys(TARGET_LIBRARIES.values()))
    parser.add_argument(
        "--library",
        metavar="LIB",
        help=f"the arrays TARGET takes: {libraries} (default numpy; implied by the built-ins)",
    )
    parser.add_argument(
        "--dtypes",
        nargs="+",
        metavar="DTYPE",
        help="float16, bfloat16, float32, float64 (space or comma separated; default: the "
        "library's)",
    )
    parser.add_argument(
        "--suites",
        nargs="+",
        metavar="SUITE",
        help="the suites to run (space or comma separated; default: the kind's, "
        f"{', '.join(KINDS[default].suites)} for {default})",
    )
    for name in option_names():
        option, users = describe_options(name)
        parser.add_argument(
            f"--{name}",
            type=float,
            metavar=name.upper(),
            help=f"{option.help} (--kind {', '.join(users)})",
        )
    parser.add_argument(
        "--tolerance",
        metavar="MODEL",
        help=f"{', '.join(models[:2])} or a number of ULPs (default {models[0]}: "
        f"{TOLERANCE_MODELS[models[0]]}; {models[1]}: {TOLERANCE_MODELS[models[1]]})",
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
    >>> read_tolerance("strict"), read_tolerance("4"), read_tolerance(None)
    ('strict', 4.0, None)
    """
    from softmax_dispersion.testing.kinds import TOLERANCE_MODELS

    models = list(TOLERANCE_MODELS)[:2]
    if text is None:
        return None
    if text in models:
        return text
    if text == "pairwise":
        raise UsageError(
            "--tolerance pairwise was replaced by strict (any summation order, the "
            "max-shifted formulations only)"
        )
    try:
        ulps = float(text)
    except ValueError:
        raise UsageError(
            f"--tolerance must be {' or '.join(models)} or a number of ULPs, got {text!r}"
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


def read_selection(option: str, values: list[str] | None) -> list[str] | None:
    """Names given space- or comma-separated (``None``: not given); none at all is an error.

    Examples
    --------
    >>> read_selection("--dtypes", ["float32,float64"]), read_selection("--dtypes", None)
    (['float32', 'float64'], None)
    """
    if values is None:
        return None
    names = [name.strip() for value in values for name in value.split(",") if name.strip()]
    if not names:
        raise UsageError(f"{option} is empty: name at least one (or leave {option} out)")
    return names


def _library_installed(library: str | None) -> None:
    if library in ("torch", "jax") and importlib.util.find_spec(library) is None:
        raise UsageError(f"--library {library}: {library} is not installed (pip install {library})")


def _options(args: argparse.Namespace) -> dict[str, Any]:
    """The kind's options from the command line, each checked against ``--kind``."""
    from softmax_dispersion.testing.kinds import KINDS, describe_options, option_names

    kind = KINDS[args.kind]
    options = {name: getattr(args, name) for name in option_names()}
    for name, value in options.items():
        if value is not None and kind.option(name) is None:
            _, users = describe_options(name)
            raise UsageError(
                f"--{name} applies to --kind {' or '.join(users)} only, not {kind.name}"
            )
    for option in kind.options:
        if option.required and options.get(option.name) is None:
            raise UsageError(
                f"--kind {kind.name} needs --{option.name} {option.name.upper()} "
                f"(the {option.help})"
            )
    return {name: value for name, value in options.items() if value is not None}


def run(args: argparse.Namespace) -> int:
    """Run the battery; exit 1 when a property fails."""
    from softmax_dispersion.testing.kinds import KINDS, option_names

    if args.kind not in KINDS:
        raise UsageError(f"--kind must be one of {', '.join(KINDS)}, got {args.kind!r}")
    options = _options(args)
    dtypes = read_selection("--dtypes", args.dtypes)
    suites = read_selection("--suites", args.suites)
    tolerance = read_tolerance(args.tolerance)
    policies = read_policies(args.require_policy)
    if args.out is not None:
        writable_folder("--out", args.out)
    _library_installed(args.library)
    from softmax_dispersion.testing.targets import TargetError, resolve_target

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
                suites=suites,
                tolerance=tolerance,
                policies=policies,
                **options,
            )
    except SoftmaxCallError as error:
        raise UsageError(f"TARGET {target.name!r}: {error}") from None
    except ValueError as error:
        flags = {
            "dtype": "--dtypes",
            "unknown dtype": "--dtypes",
            "dtypes": "--dtypes",
            "unknown suite": "--suites",
            "suites": "--suites",
            "kind": "--kind",
            "unknown policy": "--require-policy",
            "policy": "--require-policy",
            "library": "--library",
        } | {name: f"--{name}" for name in option_names()}
        raise usage_error(error, flags) from None
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
