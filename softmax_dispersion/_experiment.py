"""The ``experiment`` and ``report`` subcommands: glue between the CLI and ``empirical``."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from softmax_dispersion._parsing import parse_sizes

__all__ = [
    "ExperimentUsageError",
    "accuracy_table",
    "add_parsers",
    "run_experiment_command",
    "run_report_command",
]

INSTALL_HINT = "it needs torch: pip install 'softmax-dispersion[empirical]'"


class ExperimentUsageError(ValueError):
    """Bad input to ``experiment`` or ``report``: one line, exit status 2."""


def _empirical() -> Any:
    try:
        import torch  # noqa: F401
    except ImportError:
        raise ExperimentUsageError(INSTALL_HINT) from None
    from softmax_dispersion import empirical

    return empirical


def _names(values: list[str] | None) -> tuple[str, ...] | None:
    if not values:
        return None
    return tuple(name for value in values for name in value.split(",") if name)


def _config(args: argparse.Namespace) -> Any:
    empirical = _empirical()
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
    if args.train_sizes is not None:
        try:
            low, high = (int(part) for part in args.train_sizes.split(","))
        except ValueError:
            raise ExperimentUsageError(
                f"--train-sizes expects LOW,HIGH (two integers), got {args.train_sizes!r}"
            ) from None
        overrides["train_sizes"] = (low, high)
    if args.sizes is not None:
        try:
            overrides["sizes"] = tuple(parse_sizes(args.sizes))
        except ValueError as error:
            raise ExperimentUsageError(f"--sizes: {error}") from None
    try:
        return empirical.preset(args.preset, **overrides)
    except ValueError as error:
        option = next((f"--{key.replace('_', '-')}" for key in overrides if key in str(error)), "")
        if str(error).startswith("unknown preset"):
            option = "--preset"
        raise ExperimentUsageError(f"{option}: {error}" if option else str(error)) from None


def _default_out() -> Path:
    return Path(f"max-retrieval-{time.strftime('%Y%m%d-%H%M%S')}")


def accuracy_table(summary: dict[str, Any], sizes: list[int]) -> str:
    """The summary's accuracies, mean ± standard error per size, as a plain-text table."""
    lines = [f"{'accuracy (%)':<21}" + "".join(f"{n:>12}" for n in sizes)]
    for name, by_size in summary["accuracy"].items():
        cells = []
        for n in sizes:
            cell = by_size.get(str(n), by_size.get(n))
            cells.append(f"{cell['mean']:6.1f} ±{cell['se']:4.1f}" if cell else "")
        lines.append(f"{name:<21}" + "".join(f"{c:>12}" for c in cells))
    return "\n".join(lines)


def _print_summary(metrics: dict[str, Any], summary: dict[str, Any], out: Path) -> None:
    print(accuracy_table(summary, metrics["config"]["sizes"]))
    for name, bound in summary["bound"].items():
        print(
            f"bound check, {name}: {bound['violations']} T1 and "
            f"{bound['gap_floor_violations']} T10-floor violations in {bound['rows_checked']} "
            f"rows (largest p_max/T1 bound {bound['ratio_max']:.3g})"
        )
    for target in summary["targets"]:
        mark = {True: "✓", False: "✗", None: "–"}[target["passed"]]
        print(f"{mark} {target['name']}: {target['detail']}")
    print(f"report: {out / 'report.md'}")
    print("PASSED" if summary["passed"] else "FAILED: a bound was violated")


def run_experiment_command(args: argparse.Namespace) -> int:
    """``softmax-dispersion experiment max-retrieval``."""
    empirical = _empirical()
    config = _config(args)
    out = args.out or _default_out()
    try:
        metrics = empirical.run_experiment(
            config,
            out,
            device=args.device,
            preset=args.preset,
            from_checkpoint=args.from_checkpoint,
            resume=args.resume,
            progress=args.progress or sys.stderr.isatty(),
        )
    except empirical.ExperimentError as error:
        raise ExperimentUsageError(str(error)) from None
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
        _print_summary(metrics, summary, out)
    return 0 if summary["passed"] else 1


def run_report_command(args: argparse.Namespace) -> int:
    """``softmax-dispersion report RUN_DIR``: re-render a run's report and figures."""
    empirical = _empirical()
    metrics_path = args.run_dir / "metrics.json"
    if not metrics_path.is_file():
        raise ExperimentUsageError(f"RUN_DIR {args.run_dir} holds no metrics.json")
    try:
        metrics = json.loads(metrics_path.read_text())
    except json.JSONDecodeError as error:
        raise ExperimentUsageError(f"{metrics_path} is not valid JSON: {error}") from None
    written = empirical.write_report(args.run_dir, metrics)
    summary = empirical.summarise(metrics)
    if args.json:
        print(json.dumps({"out": str(args.run_dir), "summary": summary}, indent=1))
    else:
        _print_summary(metrics, summary, args.run_dir)
        print(f"wrote {len(written)} files")
    return 0 if summary["passed"] else 1


def add_parsers(commands: Any) -> None:
    """Register ``experiment`` and ``report`` on the CLI's subparsers."""
    experiment = commands.add_parser(
        "experiment",
        help="train attention heads on max retrieval and hold them to T1",
        description="Empirical experiments (needs the empirical extra: torch).",
    )
    tasks = experiment.add_subparsers(dest="task", required=True, metavar="TASK")
    retrieval = tasks.add_parser(
        "max-retrieval",
        help="the paper's max-retrieval experiment",
        description=(
            "Train one attention head per seed and normaliser to output the class of the "
            "highest-priority item of sets of at most 16 items, then measure accuracy and "
            "attention at growing sizes, check claim T1 on every test row with its own "
            "logit spread and effective inverse temperature, and write config.json, "
            "metrics.json/csv, checkpoints, report.md and figures into --out. "
            "Exit 0 when no row violates T1, 1 otherwise, 2 for bad input."
        ),
        epilog=(
            "Examples: 'softmax-dispersion experiment max-retrieval --preset quick', "
            "'... --normalisers softmax,ssmax --seeds 5 --sizes 16,256,4096 --out run1', "
            "'... --out run1 --resume' after an interruption."
        ),
    )
    retrieval.add_argument(
        "--preset",
        default="quick",
        metavar="NAME",
        help="quick (default: softmax, adaptive temperature at inference and SSMax, 5 seeds, "
        "up to n = 4096, minutes on a CPU) or paper (every normaliser, 5 seeds, up to "
        "n = 16384, the paper's width and steps; meant for a GPU)",
    )
    retrieval.add_argument(
        "--normalisers",
        nargs="+",
        metavar="NAME",
        help="softmax, adaptive_temperature, ssmax, logn, entmax15, sparsemax (space or "
        "comma separated; default: the preset's)",
    )
    retrieval.add_argument("--seeds", type=int, metavar="N", help="models per normaliser")
    retrieval.add_argument(
        "--sizes", metavar="N[,N...]", help="test sizes, strictly increasing (e.g. 16,256,4096)"
    )
    retrieval.add_argument("--steps", type=int, metavar="N", help="training steps per model")
    retrieval.add_argument(
        "--train-sizes",
        metavar="LOW,HIGH",
        help="training set sizes, drawn uniformly from LOW..HIGH (default 5,16)",
    )
    retrieval.add_argument("--test-sets", type=int, metavar="N", help="test sets per size and seed")
    retrieval.add_argument(
        "--device", default="auto", help="auto (default: CUDA when available), cpu or cuda"
    )
    retrieval.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="run folder, new or empty (default: ./max-retrieval-DATE-TIME)",
    )
    retrieval.add_argument(
        "--resume", action="store_true", help="finish an interrupted run in --out"
    )
    retrieval.add_argument(
        "--from-checkpoint",
        type=Path,
        metavar="DIR",
        help="evaluate the checkpoints of an earlier run folder instead of training",
    )
    retrieval.add_argument("--json", action="store_true", help="print the summary as JSON")
    retrieval.add_argument(
        "--progress",
        action="store_true",
        help="progress bars even when standard error is not a terminal",
    )
    retrieval.set_defaults(run=run_experiment_command)

    report = commands.add_parser(
        "report",
        help="re-render an experiment's report and figures",
        description="Rewrite report.md, metrics.csv and figures/ of a run from its metrics.json.",
    )
    report.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="an experiment's --out")
    report.add_argument("--json", action="store_true", help="print the summary as JSON")
    report.set_defaults(run=run_report_command)
