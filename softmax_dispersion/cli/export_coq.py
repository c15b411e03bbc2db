"""``softmax-dispersion export-coq DIR``: write the Coq proofs as a project of their own."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from softmax_dispersion.cli._usage import EXIT_OK, UsageError, writable_folder

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``export-coq``."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "export-coq",
        help="write the Coq proofs and their generated statements as a Coq project",
        description=(
            "Write a self-contained Coq project: Statements.v (printed from the sympy claims), "
            "the hand-written proofs, _CoqProject, a Makefile and Print_Assumptions.v. "
            "It compiles with Coq 8.16, Coquelicot and Interval alone (no Python)."
        ),
        epilog=(
            "Example: 'softmax-dispersion export-coq proofs && make -C proofs && "
            "(cd proofs && coqc -Q . SoftmaxDispersion Print_Assumptions.v)'."
        ),
    )
    parser.add_argument(
        "directory", type=Path, metavar="DIR", help="folder to write (new or empty)"
    )
    return parser


def run(args: argparse.Namespace) -> int:
    """Export the project; print the files written and how to build them."""
    from softmax_dispersion.theory.coq import CoqPrintError
    from softmax_dispersion.theory.coq_proofs import COQ_INSTALL, export_project, find_coqc

    folder = writable_folder("DIR", args.directory)
    if folder.is_dir() and any(folder.iterdir()):
        raise UsageError(f"DIR: {folder} is not empty; choose a new or empty folder")
    try:
        written = export_project(folder)
    except OSError as error:
        raise UsageError(f"DIR: cannot write {folder}: {error}") from None
    except CoqPrintError as error:  # a claim changed into a form the printer refuses
        raise UsageError(f"a statement cannot be printed in Coq: {error}") from None
    for path in written:
        print(path)
    print(f"\nwrote {len(written)} files to {folder}; build with: make -C {folder}")
    print(f"then list the axioms: cd {folder} && coqc -Q . SoftmaxDispersion Print_Assumptions.v")
    if find_coqc() is None:
        print(f"coqc not found: install Coq with {COQ_INSTALL}")
    return EXIT_OK
