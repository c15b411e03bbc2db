"""``softmax-dispersion report RUN_DIR``: re-render an experiment's report and figures."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from softmax_dispersion.cli._max_retrieval import print_summary
from softmax_dispersion.cli._usage import EXIT_FAILED, EXIT_OK, UsageError

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``report``."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "report",
        help="re-render an experiment's report and figures",
        description=(
            "Rewrite report.md, metrics.csv and figures/ of a max-retrieval run from its "
            "metrics.json, or report.md and figures/ of a pretrained probe from its "
            "heads.json and measurements.json."
        ),
    )
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="an experiment's --out")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    return parser


def _metrics(run_dir: Path) -> dict[str, Any]:
    """The run's metrics.json, or a usage error that says where a run folder is."""
    metrics_path = run_dir / "metrics.json"
    if not metrics_path.is_file():
        runs = sorted(p.parent.name for p in run_dir.glob("*/metrics.json"))
        hint = f"; its run folder is {run_dir / runs[0]}" if len(runs) == 1 else ""
        if len(runs) > 1:
            hint = f"; run folders inside it: {', '.join(runs)}"
        raise UsageError(f"RUN_DIR {run_dir} holds no metrics.json{hint}")
    try:
        metrics: Any = json.loads(metrics_path.read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise UsageError(f"{metrics_path} is not readable JSON: {error}") from None
    missing = (
        [key for key in ("config", "rows") if key not in metrics]
        if isinstance(metrics, dict)
        else ["a JSON object"]
    )
    if missing:
        raise UsageError(
            f"{metrics_path} is not a max-retrieval run's metrics (no {', '.join(missing)})"
        )
    checked: dict[str, Any] = metrics
    return checked


def _rerender_probe(args: argparse.Namespace) -> int:
    """A pretrained probe's folder: rewrite its report from heads.json and measurements.json."""
    from softmax_dispersion.cli._pretrained import pretrained_layer
    from softmax_dispersion.cli._pretrained import print_summary as print_probe

    pretrained = pretrained_layer()
    try:
        written = pretrained.rerender(args.run_dir)
        result = json.loads((args.run_dir / "heads.json").read_text())
    except (OSError, json.JSONDecodeError, KeyError) as error:
        raise UsageError(f"RUN_DIR {args.run_dir}: not a readable probe ({error})") from None
    if args.json:
        print(json.dumps({"out": str(args.run_dir), "checks": result["checks"]}, indent=1))
    else:
        print_probe(result, args.run_dir)
        print(f"wrote {len(written)} files")
    return EXIT_OK if result["checks"]["passed"] else EXIT_FAILED


def run(args: argparse.Namespace) -> int:
    """Rewrite the run's report (a max-retrieval run needs its folder only, not torch);
    exit 1 when one of its checks failed."""
    if (args.run_dir / "heads.json").is_file():
        return _rerender_probe(args)
    from softmax_dispersion.empirical.run_report import write_report
    from softmax_dispersion.empirical.statistics import summarise

    metrics = _metrics(args.run_dir)
    written = write_report(args.run_dir, metrics)
    summary = summarise(metrics)
    if args.json:
        print(json.dumps({"out": str(args.run_dir), "summary": summary}, indent=1))
    else:
        print_summary(metrics, summary, args.run_dir)
        print(f"wrote {len(written)} files")
    return EXIT_OK if summary["passed"] else EXIT_FAILED
