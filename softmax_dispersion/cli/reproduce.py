"""``softmax-dispersion reproduce``: the main job, every built layer end to end."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from softmax_dispersion.cli._usage import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    UsageError,
    read_names,
)

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
        help="report folder (default: ./softmax-dispersion-report): new, empty, or left by "
        "an interrupted run, which resumes (finished sections kept, the experiment "
        "continued from its checkpoints)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace a finished report in --out (or start an interrupted one afresh)",
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


def _interrupted(out: Path) -> str:
    """What an interrupted job kept in ``out``, and how to resume it."""
    from softmax_dispersion.reproduce import finished_sections
    from softmax_dispersion.reproduce.empirical import RUN_FOLDER

    kept = finished_sections(out)
    parts = [f"the finished sections ({', '.join(kept)})"] if kept else []
    checkpoints = sorted((out / RUN_FOLDER / "checkpoints").glob("*.pt"))
    if checkpoints:
        parts.append(f"the experiment's {len(checkpoints)} trained checkpoints")
    saved = f"{' and '.join(parts)} are kept in {out}; " if parts else ""
    return f"interrupted: {saved}run the same command again to resume (add --force to start afresh)"


def run(args: argparse.Namespace) -> int:
    """Run every section; exit 1 when one fails."""
    from softmax_dispersion.reproduce import SECTIONS, ReportFolderError, reproduce

    chosen = read_names("--sections", args.sections, SECTIONS)
    if args.sections is not None and not chosen:
        raise UsageError(f"--sections: no section named; known: {', '.join(SECTIONS)}")
    chosen = chosen or SECTIONS
    try:
        report = reproduce(
            args.out, stream=sys.stdout, quiet=args.json, sections=chosen, force=args.force
        )
    except ReportFolderError as error:
        raise UsageError(str(error)) from None
    except KeyboardInterrupt:
        print(_interrupted(args.out), file=sys.stderr)
        return EXIT_INTERRUPTED
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    return EXIT_OK if report.passed else EXIT_FAILED
