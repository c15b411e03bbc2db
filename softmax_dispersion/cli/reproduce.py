"""``softmax-dispersion reproduce``: the main job, every built layer end to end."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from softmax_dispersion.cli._usage import EXIT_FAILED, EXIT_OK, UsageError, read_names

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``reproduce``."""
    from softmax_dispersion.reproduce import SECTIONS

    parser: argparse.ArgumentParser = subparsers.add_parser(
        "reproduce",
        help="run every built layer end to end and write one report",
        description=(
            f"The main job: run its sections ({', '.join(SECTIONS)}), then write "
            "report.md, report.json, a proof certificate and figures into --out, and "
            "print a summary table."
        ),
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("softmax-dispersion-report"),
        metavar="DIR",
        help="report folder (default: ./softmax-dispersion-report); must be empty, new, "
        "or an earlier report",
    )
    parser.add_argument(
        "--sections",
        nargs="+",
        metavar="NAME",
        help=f"run only these sections, in the main job's order ({', '.join(SECTIONS)}; "
        "space or comma separated; default: all)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    return parser


def run(args: argparse.Namespace) -> int:
    """Run every section; exit 1 when one fails."""
    from softmax_dispersion.reproduce import SECTIONS, ReportFolderError, reproduce

    chosen = read_names("--sections", args.sections, SECTIONS)
    if args.sections is not None and not chosen:
        raise UsageError(f"--sections: no section named; known: {', '.join(SECTIONS)}")
    chosen = chosen or SECTIONS
    try:
        report = reproduce(args.out, stream=sys.stdout, quiet=args.json, sections=chosen)
    except ReportFolderError as error:
        raise UsageError(str(error)) from None
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    return EXIT_OK if report.passed else EXIT_FAILED
