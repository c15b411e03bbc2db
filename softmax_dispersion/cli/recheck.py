"""``softmax-dispersion recheck FILE``: re-decide a proof certificate from the file alone."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from softmax_dispersion.cli._usage import EXIT_FAILED, EXIT_OK, UsageError

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``recheck``."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "recheck",
        help="re-decide every step of a proof certificate, from the file alone",
        description=(
            "Rebuild every claim of a certificate written by 'prove --certificate' from the "
            "file alone (JSON data only, never evaluated; never importing the modules that "
            "define the claims), check that its readable fields are what its content says, "
            "and decide it again with the kernel: exit 0 if all re-verify, 1 naming a claim "
            "or a step that does not, 2 for a file that is not a readable certificate."
        ),
        epilog=(
            "Example: 'softmax-dispersion prove --certificate proof.json' then "
            "'softmax-dispersion recheck proof.json'."
        ),
    )
    parser.add_argument("file", type=Path, metavar="FILE", help="a certificate (JSON)")
    parser.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    return parser


def run(args: argparse.Namespace) -> int:
    """Re-decide the certificate; exit 1 when a claim or a step does not re-verify."""
    from softmax_dispersion.theory.proof_certificate import tool_versions
    from softmax_dispersion.theory.recheck import CertificateFormatError, recheck_file

    path: Path = args.file
    if path.is_dir():
        raise UsageError(f"FILE: {path} is a folder, not a certificate")
    if not path.exists():
        raise UsageError(f"FILE: {path} does not exist")
    if not path.is_file():
        raise UsageError(f"FILE: {path} is not a regular file; a certificate is a JSON file")
    try:
        report = recheck_file(path)
    except CertificateFormatError as error:
        raise UsageError(f"FILE: {path} is not a readable certificate: {error}") from None
    except RecursionError:
        raise UsageError(f"FILE: {path} is not a readable certificate: nested too deep") from None
    if args.json:
        record = {
            "verified": report.verified,
            "refused": report.refused,
            "claims": [
                {"id": c.id, "hash": c.hash, "verified": c.verified, "problems": c.problems}
                for c in report.claims
            ],
            # the versions this recheck ran on, and apart from them what the file says
            # its certificate was made with (a claim, not checked)
            "not_re_decided": ["title", "source", "descriptions", "details", "formulas"],
            "tools": tool_versions(),
            "recorded_tools": report.tools,
        }
        print(json.dumps(record, indent=2))
    else:
        print(report.format())
    return EXIT_OK if report.verified else EXIT_FAILED
