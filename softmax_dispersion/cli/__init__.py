"""The ``softmax-dispersion`` command line: one module per subcommand.

Every public module of this package is a subcommand: it has ``add_parser(subparsers)``
and ``run(args) -> int``, so adding a subcommand means adding its module, nothing else.
Private modules (``_usage`` and the experiments' tasks) are helpers.
Exit status: 0 when everything verified or passed, 1 when a check failed, 2 for bad
usage or input (one line on standard error naming the argument, never a traceback).
"""

from __future__ import annotations

import argparse
import os
import pkgutil
import sys
from collections.abc import Sequence
from importlib import import_module

from softmax_dispersion._version import __version__
from softmax_dispersion.cli._usage import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    CommandParser,
    UsageError,
)

__all__ = ["COMMANDS", "build_parser", "main"]

COMMANDS = tuple(
    sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_"))
)
"""The subcommands: the public modules of this package, as ``--help`` lists them."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, one subcommand per module of :data:`COMMANDS`."""
    parser = CommandParser(
        prog="softmax-dispersion",
        description=(
            "Executable evidence that softmax disperses: with logits in [m, M] at a "
            "fixed temperature every coefficient lies between e^(−δ/θ)/n and e^(δ/θ)/n."
        ),
        epilog="Exit status: 0 all verified, 1 a check failed, 2 bad usage or input.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        module = import_module(f"softmax_dispersion.cli.{name}")
        command = module.add_parser(subparsers)
        command.set_defaults(run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.run(args)
    except UsageError as error:
        print(f"softmax-dispersion {args.command}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader went away (``| head``): not an error of ours
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        return EXIT_OK
    return status
