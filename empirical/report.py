"""A run folder's human-readable results: ``report.md``, ``metrics.csv`` and figures.

Everything is rendered from the run's ``metrics.json`` data, so a report can be rebuilt
at any time without rerunning the experiment.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from softmax_dispersion.empirical.statistics import (
    PAPER_ACCURACY,
    PAPER_SOURCE,
    SOFTMAX_FAMILY,
    metric_number,
    summarise,
)

__all__ = [
    "DISPLAY_NAMES",
    "ROW_COLUMNS",
    "accuracy_table",
    "render_markdown",
    "write_report",
    "write_rows_csv",
]

ROW_COLUMNS = (
    "normaliser",
    "seed",
    "n",
    "instances",
    "accuracy",
    "p_max_mean",
    "p_max_median",
    "p_true_mean",
    "entropy_mean",
    "delta_mean",
    "delta_max",
    "beta_mean",
    "gap_mean",
    "one_hot_fraction",
    "s",
    "s_gap_above_one",
    "bound_violations",
    "bound_ratio_max",
    "bound_ratio_median",
    "bound_median",
    "fixed_theta_exceeded",
    "gap_floor_mean",
    "gap_floor_violations",
)
"""The columns of ``metrics.csv``, in order (any others found follow, sorted)."""

DISPLAY_NAMES = {
    "softmax": "softmax",
    "adaptive_temperature": "adaptive θ",
    "ssmax": "SSMax (learned s)",
    "logn": "log-n scaling",
    "entmax15": "1.5-entmax",
    "sparsemax": "sparsemax",
}
"""How the report names each normaliser."""

# A bound this close to 1 says nothing about the head: e^δ is far above n.
_LOOSE_BOUND = 0.9


def _display(name: str) -> str:
    return DISPLAY_NAMES.get(name, name)


def _fmt(value: Any, spec: str = ".3g", empty: str = "–") -> str:
    number = metric_number(value)
    return empty if math.isnan(number) else format(number, spec)


def _p(value: float | None) -> str:
    if value == 0.0:
        # paired_test's answer when every seed shows the same nonzero difference.
        return "0 (same diff. every seed)"
    return "" if value is None else format(value, ".2g")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str = "r") -> str:
    lines = [
        "| " + " | ".join(header) + " |",
        "|"
        + "|".join([":---"] + [f"{'---:' if align == 'r' else ':---'}"] * (len(header) - 1))
        + "|",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _strict_json(value: Any) -> Any:
    """``value`` with non-finite floats as ``None`` (strict JSON has no NaN or ∞)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {key: _strict_json(v) for key, v in value.items()}
    if isinstance(value, list | tuple):
        return [_strict_json(v) for v in value]
    return value


def _csv_cell(value: Any) -> Any:
    return "" if value is None else value


def write_rows_csv(rows: Sequence[Mapping[str, Any]], path: Path) -> Path:
    """Write one CSV line per metrics row, columns as :data:`ROW_COLUMNS`.

    NaN is written as ``nan`` and JSON null as an empty cell.
    """
    extra = sorted({key for row in rows for key in row} - set(ROW_COLUMNS))
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=[*ROW_COLUMNS, *extra], restval="")
        writer.writeheader()
        for row in rows:
            writer.writerow({key: _csv_cell(value) for key, value in row.items()})
    return path


def _range(pair: Any) -> str:
    if isinstance(pair, list | tuple) and len(pair) == 2:
        return f"{pair[0]}–{pair[1]}"
    return "?" if pair is None else str(pair)


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


def _header(metrics: Mapping[str, Any], summary: Mapping[str, Any]) -> list[str]:
    config = metrics.get("config", {})
    versions = metrics.get("versions", {})
    seconds = metrics.get("seconds", {})
    sizes = summary["sizes"] or config.get("sizes", [])
    verdict = (
        "**Result: passed** — no measured head breaks T1 (or T10's floor)."
        if summary["passed"]
        else f"**Result: FAILED** — {summary['violations']} rows break T1 or T10's floor "
        "beyond float tolerance; this is a bug in the bound, the check or the normaliser."
    )
    lines = [
        "# Max retrieval: dispersion of trained attention heads",
        "",
        verdict,
        "",
        f"- preset: {metrics.get('preset') or 'custom'}",
        f"- device: {metrics.get('device', 'unknown')}",
        f"- normalisers: {', '.join(summary['normalisers'])}",
        f"- seeds: {config.get('seeds', '?')}",
        f"- sizes: {', '.join(str(n) for n in sizes)}",
        f"- training: {config.get('steps', '?')} steps of batch {config.get('batch', '?')}, "
        f"set sizes {_range(config.get('train_sizes'))}, width {config.get('width', '?')}",
        f"- test sets per size and seed: {config.get('test_sets', '?')}",
        f"- total time: {_fmt(seconds.get('total'), '.0f')} s "
        f"(training {_fmt(seconds.get('train'), '.0f')} s, "
        f"evaluation {_fmt(seconds.get('evaluate'), '.0f')} s)",
        f"- torch {versions.get('torch', '?')}, "
        f"softmax_dispersion {versions.get('softmax_dispersion', '?')}",
    ]
    return lines


def _accuracy_section(summary: Mapping[str, Any]) -> list[str]:
    sizes: list[int] = summary["sizes"]
    accuracy = summary["accuracy"]
    rows: list[list[str]] = []
    for name in summary["normalisers"]:
        cells = []
        for n in sizes:
            cell = accuracy[name].get(n)
            if cell is None or cell["mean"] is None:
                cells.append("")
            elif cell["se"] is None:
                cells.append(f"{cell['mean']:.1f}")
            else:
                cells.append(f"{cell['mean']:.1f} ± {cell['se']:.1f}")
        rows.append([_display(name), *cells])
    for name, by_size in summary["paired"].items():
        rows.append(
            [
                f"{_display(name)} − softmax (points)",
                *(_fmt((by_size.get(n) or {}).get("difference"), "+.1f", "") for n in sizes),
            ]
        )
        rows.append(
            [
                f"p ({_display(name)} vs softmax)",
                *(_p((by_size.get(n) or {}).get("p")) for n in sizes),
            ]
        )
    for key, label in (
        ("softmax", "paper: softmax"),
        ("adaptive_temperature", "paper: adaptive θ"),
        ("p", "paper: p"),
    ):
        cells = []
        for n in sizes:
            value = PAPER_ACCURACY.get(n, {}).get(key)
            cells.append("" if value is None else (_p(value) if key == "p" else f"{value:.1f}"))
        rows.append([label, *cells])
    missing = [n for n in PAPER_ACCURACY if n not in sizes]
    lines = [
        "## Accuracy (%)",
        "",
        "Mean ± standard error over seeds; p is the two-sided paired t-test over seeds "
        "(same test sets). Adaptive θ is applied at inference to the softmax models.",
        "",
        _table(["n", *(str(n) for n in sizes)], rows),
        "",
        f"Paper rows: {PAPER_SOURCE} (512 and 2048 from the first arXiv version)."
        + (f" Paper sizes not measured here: {', '.join(map(str, missing))}." if missing else ""),
    ]
    return lines


def _bound_section(summary: Mapping[str, Any], sizes: list[int]) -> list[str]:
    bound = summary["bound"]
    if not bound:
        return []
    rows = [
        [
            _display(name),
            str(b["rows_checked"]),
            str(b["violations"]),
            _fmt(b["ratio_max"], ".4f"),
            _fmt(b["ratio_median"], ".4f"),
            str(b["fixed_theta_exceeded"]),
            _fmt(b["delta_mean"], ".2f"),
            str(b.get("gap_floor_violations", 0)),
        ]
        for name, b in bound.items()
    ]
    lines = [
        "## Bound check (T1)",
        "",
        "T1: for a row of n logits with spread δ (after the effective inverse temperature β), "
        "every weight is at most e^δ/(e^δ + n − 1) and at least 1/(1 + (n − 1)e^δ). Each "
        "test row is checked with its own δ, within T12's float tolerance. T10's floor is "
        "checked on the same rows: the top weight is at least 1/(1 + (n − 1)e^(−βΔ)), Δ the "
        "top logit's lead over the runner-up.",
        "",
        _table(
            [
                "normaliser",
                "rows checked",
                "violations",
                "max p_max/bound",
                "median p_max/bound",
                "fixed-θ exceeded",
                "mean δ (before β)",
                "T10 floor violations",
            ],
            rows,
        ),
        "",
    ]
    if summary["violations"] == 0:
        lines += [
            "No violations: every measured head obeys T1 with its own spread, and T10's floor.",
            "",
        ]
    else:
        lines.append(
            f"**{summary['violations']} rows violate T1 or T10's floor beyond float "
            "tolerance.** The bounds are theorems, so this points to a bug."
        )
        lines.append("")
    exceeded = [name for name, b in bound.items() if b["fixed_theta_exceeded"]]
    if exceeded:
        lines.append(
            "Fixed-θ exceeded counts rows whose p_max is above T1's bound computed at β = 1 "
            "with the logits' own δ. It is expected wherever the effective β exceeds 1 "
            "(adaptive θ; length-scaled softmax once s·log n > 1), and is no violation: "
            f"T1 holds with the effective β. Seen here for {', '.join(map(_display, exceeded))}."
        )
    sharpened = [n for n, b in bound.items() if n != "softmax" and not b["fixed_theta_exceeded"]]
    if sharpened:
        lines.append(
            f"No row of {', '.join(map(_display, sharpened))} exceeds the fixed-θ (β = 1) "
            "bound, although β > 1 sharpens them: with the measured spreads that bound is "
            "itself close to 1 (e^δ far above n; see the table below), so sharper weights "
            "still fit under it."
        )
    lines += [
        "",
        "Median T1 bound, mean p_max, mean δ (before β) and mean β by size:",
        "",
    ]
    detail: list[list[str]] = []
    for name, b in bound.items():
        by_size = b["by_size"]
        for key, label, spec in (
            ("bound_median", "bound", ".3g"),
            ("p_max_mean", "p_max", ".3g"),
            ("delta_mean", "δ", ".2f"),
            ("beta_mean", "β", ".2f"),
        ):
            detail.append(
                [
                    f"{_display(name)}: {label}",
                    *(_fmt((by_size.get(n) or {}).get(key), spec, "") for n in sizes),
                ]
            )
    lines += [_table(["n", *(str(n) for n in sizes)], detail), ""]
    # Normalisers whose bound is loose at the same sizes share one sentence.
    groups: dict[tuple[tuple[int, ...], tuple[int, ...]], list[str]] = {}
    for name, b in bound.items():
        medians = {n: metric_number(v.get("bound_median")) for n, v in b["by_size"].items()}
        # At n = 1 the bound is 1 whatever the spread: nothing to say.
        half = tuple(n for n, v in medians.items() if v >= 0.5 and n > 1)
        loose = tuple(n for n, v in medians.items() if v >= _LOOSE_BOUND and n > 1)
        if half:
            groups.setdefault((half, loose), []).append(_display(name))
    for (half, loose), names in groups.items():
        sentence = (
            f"{', '.join(names)}: the median row's bound is ≥ 0.5, i.e. e^(βδ) ≥ n − 1, "
            f"at n = {', '.join(map(str, half))}."
        )
        if loose:
            sentence += (
                f" At n = {', '.join(map(str, loose))} it is ≥ {_LOOSE_BOUND}, close to 1: "
                "the spread is large enough to allow near one-hot weights, so T1 barely "
                "constrains these heads there and passing the check says little about "
                "dispersion at those sizes."
            )
        lines += [sentence, ""]
    return lines


def _escape_section(summary: Mapping[str, Any]) -> list[str]:
    escape = summary["escape"]
    if not escape:
        return []
    lines = [
        "## Escape regime (length-scaled softmax)",
        "",
        "With β = s·log n, the spike's largest weight tends to 1 when sΔ > 1 and to 0 when "
        "sΔ < 1 (Δ: top logit minus runner-up, before scaling). Per row, T10 gives the floor "
        "p_max ≥ 1/(1 + (n − 1)n^(−sΔ)), checked on every row (see the bound check): the "
        "head stays sharp exactly where its gap keeps sΔ above 1.",
        "",
    ]
    for name, by_size in escape.items():
        rows = [
            [
                str(n),
                _fmt(v["s"], ".3f"),
                _fmt(v["gap"], ".2f"),
                _fmt(v["s_gap_above_one"], ".2f"),
                _fmt(v.get("gap_floor"), ".3f"),
                _fmt(v["p_max"], ".3f"),
            ]
            for n, v in by_size.items()
        ]
        lines += [
            f"**{_display(name)}**",
            "",
            _table(["n", "s", "mean Δ", "fraction sΔ > 1", "mean T10 floor", "mean p_max"], rows),
            "",
        ]
        # sΔ is undefined at n = 1 (no runner-up); those sizes say nothing about escape.
        fractions = {
            n: metric_number(v["s_gap_above_one"])
            for n, v in by_size.items()
            if not math.isnan(metric_number(v["s_gap_above_one"]))
        }
        mostly = [n for n, f in fractions.items() if f > 0.5]
        rest = [n for n, f in fractions.items() if f <= 0.5]

        def span(ns: list[int], values: Mapping[int, Mapping[str, Any]] = by_size) -> str:
            p = [f"{metric_number(values[n]['p_max']):.3f}" for n in ns]
            low, high = min(p, key=float), max(p, key=float)
            return low if low == high else f"{low}–{high}"

        if mostly:
            line = (
                f"Where sΔ > 1 holds for most sets (n = {', '.join(map(str, mostly))}), "
                f"mean p_max is {span(mostly)}"
            )
            line += (
                f"; elsewhere (n = {', '.join(map(str, rest))}) it is {span(rest)}."
                if rest
                else "."
            )
        elif rest:
            line = (
                f"sΔ > 1 holds for at most half the sets at every size; mean p_max is {span(rest)}."
            )
        else:
            line = "sΔ was not measured (no size above 1)."
        lines += [line, ""]
    return lines


def _sparse_section(summary: Mapping[str, Any], sizes: list[int]) -> list[str]:
    one_hot = summary["one_hot"]
    if not one_hot:
        return []
    rows = [
        [
            _display(name),
            *(_fmt((by_size.get(n) or {}).get("one_hot_fraction"), ".2f", "") for n in sizes),
        ]
        for name, by_size in one_hot.items()
    ]
    return [
        "## Sparse normalisers",
        "",
        "Fraction of test sets on which all weight falls on a single item (T1 does not apply: "
        "these normalisers can assign exactly zero).",
        "",
        _table(["n", *(str(n) for n in sizes)], rows),
    ]


def _targets_section(summary: Mapping[str, Any]) -> list[str]:
    marks = {True: "✓", False: "✗", None: "–"}
    rows = [[marks[t["passed"]], t["name"], t["detail"]] for t in summary["targets"]]
    return [
        "## Targets",
        "",
        "The expected shape of the results (only a T1 violation fails the run).",
        "",
        _table(["", "target", "detail"], rows, align="l"),
    ]


def _training_section(metrics: Mapping[str, Any]) -> list[str]:
    training = metrics.get("training", [])
    if not training:
        return []
    rows = [
        [
            _display(str(t.get("normaliser"))),
            str(t.get("seed", "")),
            _fmt(t.get("seconds"), ".1f"),
            _fmt(t.get("steps_per_second"), ".1f"),
            _fmt(t.get("final_loss"), ".4f"),
        ]
        for t in training
    ]
    return [
        "## Training",
        "",
        _table(["normaliser", "seed", "seconds", "steps/s", "final loss"], rows),
    ]


def render_markdown(
    metrics: Mapping[str, Any],
    summary: Mapping[str, Any],
    figures: Sequence[str],
    *,
    figure_note: str | None = None,
) -> str:
    """The Markdown report of a run.

    Parameters
    ----------
    metrics
        The run's ``metrics.json`` data.
    summary
        :func:`~softmax_dispersion.empirical.statistics.summarise` of ``metrics``.
    figures
        Figure paths relative to the report, embedded in order.
    figure_note
        Said in place of the figures when they could not be drawn.

    Returns
    -------
    str
        Sections: header and verdict, accuracy in the paper's layout with paired tests
        and the paper's numbers, T1's check, the escape regime of length-scaled softmax,
        the sparse normalisers, the targets, training, and figures.
    """
    sizes: list[int] = summary["sizes"]
    sections = [
        _header(metrics, summary),
        _accuracy_section(summary),
        _bound_section(summary, sizes),
        _escape_section(summary),
        _sparse_section(summary, sizes),
        _targets_section(summary),
        _training_section(metrics),
    ]
    figure_lines = ["## Figures", ""]
    figure_lines += [f"![{Path(f).stem}]({Path(f).as_posix()})\n" for f in figures]
    if figure_note:
        figure_lines.append(figure_note)
    if figures or figure_note:
        sections.append(figure_lines)
    return "\n\n".join("\n".join(s).rstrip() for s in sections if s) + "\n"


def _draw_figures(metrics: Mapping[str, Any], directory: Path) -> list[Path]:
    from softmax_dispersion.empirical import plots

    names = {str(row["normaliser"]) for row in metrics.get("rows", [])}
    paths = [plots.accuracy_figure(metrics, directory / "accuracy.png")]
    if names & set(SOFTMAX_FAMILY):
        paths.append(plots.p_max_figure(metrics, directory / "p_max.png"))
    if names & {"ssmax", "logn"}:
        paths.append(plots.escape_figure(metrics, directory / "escape.png"))
    for name, maps in metrics.get("heatmaps", {}).items():
        if maps:
            paths.append(plots.heatmap_figure(metrics, name, directory / f"heatmap_{name}.png"))
    return paths


def write_report(run_dir: Path | str, metrics: Mapping[str, Any] | None = None) -> list[Path]:
    """Write ``metrics.csv``, ``summary.json``, figures and ``report.md`` into a run folder.

    Parameters
    ----------
    run_dir
        The run folder; figures go to ``run_dir/figures/``.
    metrics
        The run's data; read from ``run_dir/metrics.json`` when omitted.

    Returns
    -------
    list of Path
        The files written, ``report.md`` last. Without matplotlib no figure is drawn
        and the report says so.
    """
    run_dir = Path(run_dir)
    if metrics is None:
        metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    summary = summarise(metrics)
    written = [write_rows_csv(metrics.get("rows", []), run_dir / "metrics.csv")]
    summary_path = run_dir / "summary.json"
    summary_path.write_text(
        json.dumps(_strict_json(summary), indent=2, ensure_ascii=False, allow_nan=False) + "\n",
        encoding="utf-8",
    )
    written.append(summary_path)
    note = None
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        figures: list[Path] = []
        note = "Figures were not drawn: matplotlib is not installed (`pip install matplotlib`)."
    else:
        figures = _draw_figures(metrics, run_dir / "figures")
    written += figures
    report = run_dir / "report.md"
    relative = [p.relative_to(run_dir).as_posix() for p in figures]
    report.write_text(render_markdown(metrics, summary, relative, figure_note=note), "utf-8")
    written.append(report)
    return written
