"""``softmax-dispersion experiment max-retrieval``: the paper's max-retrieval experiment."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from softmax_dispersion.cli._usage import EXIT_FAILED, EXIT_OK, UsageError, read_sizes

__all__ = ["INSTALL_HINT", "add_parser", "empirical_layer", "print_summary", "run"]

INSTALL_HINT = (
    "it needs torch; from a checkout: pip install torch==2.13.0 (a CPU build) and then "
    "pip install '.[empirical]'"
)


def empirical_layer() -> Any:
    """The empirical layer, or a :class:`UsageError` saying how to install torch."""
    try:
        import torch  # noqa: F401
    except ImportError:
        raise UsageError(INSTALL_HINT) from None
    from softmax_dispersion import empirical

    return empirical


def _names(values: list[str] | None) -> tuple[str, ...] | None:
    if not values:
        return None
    return tuple(name for value in values for name in value.split(",") if name)


def _config(args: argparse.Namespace) -> Any:
    # The options are read first: a malformed one is refused before torch loads.
    overrides: dict[str, Any] = {}
    names = _names(args.normalisers)
    if names is not None:
        overrides["normalisers"] = names
    if args.seeds is not None:
        overrides["seeds"] = args.seeds
    if args.steps is not None:
        overrides["steps"] = args.steps
    if args.test_sets is not None:
        overrides["test_sets"] = args.test_sets
    if args.gap_sets is not None:
        overrides["gap_sets"] = args.gap_sets
    if args.train_sizes is not None:
        try:
            low, high = (int(part) for part in args.train_sizes.split(","))
        except ValueError:
            raise UsageError(
                f"--train-sizes expects LOW,HIGH (two integers), got {args.train_sizes!r}"
            ) from None
        overrides["train_sizes"] = (low, high)
    if args.sizes is not None:
        overrides["sizes"] = tuple(read_sizes("--sizes", args.sizes))
    if args.adversarial_sizes is not None:
        overrides["adversarial_sizes"] = tuple(
            read_sizes("--adversarial-sizes", args.adversarial_sizes)
        )
    empirical = empirical_layer()
    try:
        return empirical.preset(args.preset, **overrides)
    except ValueError as error:
        option = next((f"--{key.replace('_', '-')}" for key in overrides if key in str(error)), "")
        if str(error).startswith("unknown preset"):
            option = "--preset"
        raise UsageError(f"{option}: {error}" if option else str(error)) from None


def _default_out() -> Path:
    return Path(f"max-retrieval-{time.strftime('%Y%m%d-%H%M%S')}")


def print_summary(metrics: dict[str, Any], summary: dict[str, Any], out: Path) -> None:
    """The accuracy table, the checks and the targets of a run, on standard output."""
    from softmax_dispersion.empirical.run_report import accuracy_table

    marks = {True: "✓", False: "✗", None: "–"}
    print(accuracy_table(summary, metrics["config"]["sizes"]))
    for heading, checks in (
        ("results (checks that could fail)", summary["results"]),
        ("consistency checks", summary["consistency"]),
        ("expected shape", summary["targets"]),
    ):
        print(f"{heading}:")
        for check in checks:
            print(f"  {marks[check['passed']]} {check['name']}: {check['detail']}")
    print(f"report: {out / 'report.md'}")
    if summary["passed"]:
        print("PASSED")
    else:
        print(f"FAILED: {'; '.join(summary['failed'])}")


def run(args: argparse.Namespace) -> int:
    """Train, certify, evaluate and report; exit 1 when a check fails."""
    if args.resume and args.out is None:
        raise UsageError("--resume needs --out: the folder of the run to finish")
    config = _config(args)
    empirical = empirical_layer()
    out = args.out or _default_out()
    try:
        metrics = empirical.run_experiment(
            config,
            out,
            device=args.device,
            preset=args.preset,
            from_checkpoint=args.from_checkpoint,
            resume=args.resume,
            # A bar for a terminal; otherwise a plain line per stage and at least every
            # 20 s, so that a run logged to a file is never silent for minutes.
            progress="bar" if args.progress or sys.stderr.isatty() else "lines",
            threads=args.threads,
        )
    except empirical.ExperimentError as error:
        raise UsageError(str(error)) from None
    except KeyboardInterrupt:
        print(
            f"interrupted: completed seeds are kept in {out}; finish with the same "
            "command and --resume",
            file=sys.stderr,
        )
        raise
    summary = empirical.summarise(metrics)
    if args.json:
        print(json.dumps({"out": str(out), "summary": summary}, indent=1))
    else:
        print_summary(metrics, summary, out)
    return EXIT_OK if summary["passed"] else EXIT_FAILED


def add_parser(tasks: Any) -> argparse.ArgumentParser:
    """Register ``max-retrieval`` on the ``experiment`` subcommand's tasks."""
    parser: argparse.ArgumentParser = tasks.add_parser(
        "max-retrieval",
        help="the paper's max-retrieval experiment",
        description=(
            "Train one attention head per seed and normaliser to output the class of the "
            "highest-priority item of small sets; certify each head's logit range over its "
            "whole item domain (arb branch and bound) and T4's dispersion sizes; run T1's "
            "worst sets through the models; hold typical and gap-controlled test sets to "
            "T13's band; measure accuracy and attention at growing sizes; and write "
            "config.json, certificates.json, metrics.json/csv, checkpoints, report.md and "
            "figures into --out. Exit 0 when every check passes, 1 when one fails, 2 for "
            "bad input."
        ),
        epilog=(
            "Examples: 'softmax-dispersion experiment max-retrieval --preset quick', "
            "'... --normalisers softmax,ssmax --seeds 5 --sizes 16,256,4096 --out run1', "
            "'... --out run1 --resume' after an interruption."
        ),
    )
    parser.add_argument(
        "--preset",
        default="quick",
        metavar="NAME",
        help="quick (default: softmax, adaptive temperature at inference, SSMax, 1.5-entmax "
        "and sparsemax, 5 seeds, up to n = 4096, minutes on a CPU); fixed16 (the same, "
        "trained on sets of exactly 16); bounded (soft-capped and QK-normed heads whose "
        "certified dispersion size lies inside the tested sizes); or paper (every "
        "normaliser, up to n = 16384, the paper's width; meant for a GPU)",
    )
    parser.add_argument(
        "--normalisers",
        nargs="+",
        metavar="NAME",
        help="softmax, adaptive_temperature, adaptive_refit, ssmax, logn, entmax15, "
        "sparsemax, softcap<C> (logits C·tanh(e/C)), qknorm<C> (QK-norm, scale ≤ C) (space "
        "or comma separated; default: the preset's)",
    )
    parser.add_argument("--seeds", type=int, metavar="N", help="models per normaliser")
    parser.add_argument(
        "--sizes", metavar="N[,N...]", help="test sizes, strictly increasing (e.g. 16,256,4096)"
    )
    parser.add_argument("--steps", type=int, metavar="N", help="training steps per model")
    parser.add_argument(
        "--train-sizes",
        metavar="LOW,HIGH",
        help="training set sizes, drawn uniformly from LOW..HIGH (default 5,16)",
    )
    parser.add_argument("--test-sets", type=int, metavar="N", help="test sets per size and seed")
    parser.add_argument(
        "--gap-sets",
        type=int,
        metavar="N",
        help="gap-controlled test sets per lead, size and seed (0: none; default: the preset's)",
    )
    parser.add_argument(
        "--adversarial-sizes",
        metavar="N[,N...]",
        help="sizes of T1's worst sets run through the models (default: the preset's, up to 10^6)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        metavar="N",
        help="torch threads (default: the cores not already busy, at least 1)",
    )
    parser.add_argument(
        "--device", default="auto", help="auto (default: CUDA when available), cpu or cuda"
    )
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="run folder, new or empty (default: ./max-retrieval-DATE-TIME)",
    )
    parser.add_argument("--resume", action="store_true", help="finish an interrupted run in --out")
    parser.add_argument(
        "--from-checkpoint",
        type=Path,
        metavar="DIR",
        help="evaluate the checkpoints of an earlier run folder instead of training",
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument(
        "--progress",
        action="store_true",
        help="progress bars even when standard error is not a terminal",
    )
    return parser
