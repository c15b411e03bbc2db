"""``softmax-dispersion experiment TASK``: the empirical layer's experiments.

Each task is a module of this package with ``add_parser(tasks)`` and ``run(args)``;
adding an experiment means adding its module and its name to :data:`TASKS`.
"""

from __future__ import annotations

import argparse
from importlib import import_module
from typing import Any

__all__ = ["TASKS", "add_parser", "run"]

TASKS = {"max-retrieval": "_max_retrieval", "pretrained": "_pretrained"}
"""The experiments by name, and the module of this package that runs each."""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``experiment`` and its tasks."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "experiment",
        help="train attention heads on max retrieval, or probe a pretrained model's heads, "
        "and hold them to the theory",
        description=(
            "Empirical experiments: max-retrieval (needs the empirical extra: torch) and "
            "pretrained (needs the pretrained extra)."
        ),
    )
    tasks = parser.add_subparsers(dest="task", required=True, metavar="TASK")
    for module_name in TASKS.values():
        module = import_module(f"softmax_dispersion.cli.{module_name}")
        module.add_parser(tasks).set_defaults(task_run=module.run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Run the chosen task."""
    status: int = args.task_run(args)
    return status
