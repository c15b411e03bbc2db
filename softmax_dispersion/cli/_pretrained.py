"""``softmax-dispersion experiment pretrained``: certified and measured heads of a real model."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from softmax_dispersion._extras import PRETRAINED_HINT, missing_for_pretrained
from softmax_dispersion.cli._usage import EXIT_FAILED, EXIT_OK, UsageError, read_sizes

__all__ = ["add_parser", "pretrained_layer", "print_summary", "run"]


def pretrained_layer() -> Any:
    """The probe's package, or a :class:`UsageError` saying how to install its extra."""
    missing = missing_for_pretrained()
    if missing:
        raise UsageError(f"{PRETRAINED_HINT} (missing: {', '.join(missing)})")
    from softmax_dispersion.empirical import pretrained

    return pretrained


def _check_arguments(args: argparse.Namespace) -> None:
    """What can be refused before torch and the model load (seconds)."""
    for path in args.text or []:
        if not path.is_file():
            raise UsageError(f"--text: {path} is not a file")
        if not path.read_bytes().strip():
            raise UsageError(f"--text: {path} is empty")
    if args.seed is not None and args.seed < 0:
        raise UsageError(f"--seed must be >= 0, got {args.seed}")
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        raise UsageError(f"--out: {args.out} exists and is not a folder")


def _config(args: argparse.Namespace, pretrained: Any) -> Any:
    overrides: dict[str, Any] = {"text_files": tuple(args.text or ())}
    if args.sizes is not None:
        overrides["sizes"] = tuple(read_sizes("--sizes", args.sizes))
    for name in ("search_seconds", "search_rounds", "seed"):
        value = getattr(args, name)
        if value is not None:
            overrides[name] = value
    if args.no_token_bounds:
        overrides["token_bounds"] = False
    try:
        return pretrained.ProbeConfig(**overrides)
    except pretrained.ProbeError as error:
        raise UsageError(str(error)) from None


def print_summary(result: dict[str, Any], out: Path) -> None:
    """The probe's summary, its report's path and the verdict, on standard output."""
    from softmax_dispersion.empirical.pretrained.probe_report import summary_lines

    for line in summary_lines(result):
        print(line)
    print(f"report: {out / 'report.md'} ({result['seconds']['total']:.0f} s)")
    print("PASSED" if result["checks"]["passed"] else "FAILED: a check failed")


def run(args: argparse.Namespace) -> int:
    """Certify, measure and attack every head; exit 1 when a check fails."""
    _check_arguments(args)
    pretrained = pretrained_layer()
    config = _config(args, pretrained)
    out = args.out or Path(f"pretrained-{time.strftime('%Y%m%d-%H%M%S')}")
    log = (lambda line: None) if args.json else (lambda line: print(line, file=sys.stderr))
    try:
        result = pretrained.run_probe(out, config, log=log)
    except pretrained.ProbeError as error:
        raise UsageError(str(error)) from None
    if args.json:
        print(json.dumps({"out": str(out), "checks": result["checks"]}, indent=1))
    else:
        print_summary(result, out)
    return EXIT_OK if result["checks"]["passed"] else EXIT_FAILED


def add_parser(tasks: Any) -> argparse.ArgumentParser:
    """Register ``pretrained`` on the ``experiment`` subcommand's tasks."""
    parser: argparse.ArgumentParser = tasks.add_parser(
        "pretrained",
        help="certify and measure the heads of a pretrained transformer (all-MiniLM-L6-v2)",
        description=(
            "Certify an upper bound on every head's logit spread of all-MiniLM-L6-v2 over "
            "every LayerNorm output (T8/T9 on its weights) and over what tokens can reach "
            "(layer 0: every token × position × token type, enumerated by branch and bound; "
            "later layers: boxes), in certified arithmetic, with the sizes n*(½) beyond "
            "which no input lets a head put half its weight on one position (T4); measure "
            "every head's rows on offline text and synthetic inputs; search token sequences "
            "for the largest spreads; hold every spread found to the certificates. Writes "
            "heads.json, measurements.json, report.md and figures into --out. Needs the "
            "pretrained extra; nothing is downloaded. "
            "Exit 0 when every check passes, 1 otherwise, 2 for bad input."
        ),
        epilog=(
            "Examples: 'softmax-dispersion experiment pretrained --out probe', "
            "'... --text README.md --sizes 16,128,512 --out probe2'."
        ),
    )
    parser.add_argument(
        "--text",
        type=Path,
        action="append",
        metavar="FILE",
        help="a text file to measure (repeatable; default: the license texts in "
        "/usr/share/common-licenses, else Python's own license text)",
    )
    parser.add_argument(
        "--sizes",
        metavar="N[,N...]",
        help="sequence lengths, strictly increasing, in 3..512 (default 8,16,...,512)",
    )
    parser.add_argument(
        "--search-seconds",
        type=float,
        metavar="S",
        help="the token search's time budget in seconds (default 240)",
    )
    parser.add_argument(
        "--search-rounds",
        type=int,
        metavar="N",
        help="rounds of gradient-guided token swaps at most (default 40)",
    )
    parser.add_argument(
        "--no-token-bounds",
        action="store_true",
        help="skip the certificates over what tokens can reach (they take minutes); the "
        "LayerNorm-set certificate then stands in for them",
    )
    parser.add_argument("--seed", type=int, metavar="N", help="random seed (default 0)")
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="run folder, new or empty or an earlier probe (default: ./pretrained-DATE-TIME)",
    )
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")
    return parser
