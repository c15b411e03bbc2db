"""Figures of a max-retrieval run, drawn from its ``metrics.json`` data with matplotlib.

matplotlib is imported inside each function (it is an optional dependency), on the
non-interactive Agg backend unless a backend was already chosen.  Titles and labels are
plain text (no TeX), and normalisers are named by the run's recorded display names.
"""

from __future__ import annotations

import math
import os
import sys
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from softmax_dispersion.empirical.statistics import (
    PAPER_ACCURACY,
    mean_and_standard_error,
    metric_number,
    normaliser_info,
)
from softmax_dispersion.theory.adaptive_temperature import COEFFICIENTS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "HEATMAP_PANELS",
    "PAPER_POLYNOMIAL",
    "accuracy_figure",
    "adaptive_rule_figure",
    "draw_all",
    "gap_sets_figure",
    "heatmap_figure",
    "heatmap_sizes",
    "histogram_quantile",
    "learning_curves_figure",
    "length_scaling_figure",
    "p_max_figure",
    "typical_sets_figure",
    "worst_sets_figure",
]

HEATMAP_PANELS = 6
"""At most this many sizes are drawn in a heat-map figure."""

PAPER_POLYNOMIAL = tuple(float(c) for c in COEFFICIENTS)
"""The paper's adaptive polynomial, highest degree first (the theory's exact rationals)."""

_DPI = 96
_HEATMAP_FLOOR = 1e-4


def _pyplot() -> Any:
    import matplotlib

    # Respect a backend someone chose; otherwise never open a window.
    if "matplotlib.pyplot" not in sys.modules and "MPLBACKEND" not in os.environ:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Figure, path: Path | str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=_DPI)
    _pyplot().close(fig)
    # A 256-colour palette keeps the figures a run folder (and the docs) carry small.
    from PIL import Image

    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=256)
    small.save(path, optimize=True)
    return path


def _legend_below(fig: Figure, *axes: Any, columns: int = 2) -> None:
    """One legend for ``axes`` (a panel and its twin), below the plots, where it can
    cover no data (constrained layout makes room for it)."""
    handles, labels = [], []
    for ax in axes:
        more_handles, more_labels = ax.get_legend_handles_labels()
        handles += more_handles
        labels += [textwrap.fill(label, 48) for label in more_labels]
    fig.legend(handles, labels, loc="outside lower center", ncols=columns, fontsize="small")


MARKERS = ("o", "s", "^", "D", "v", "P")
"""One marker shape per head, drawn hollow, so that heads at the same point all show."""
LINE_STYLES = ("-", "--", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 1)), (0, (8, 2)))
"""One line style per head, for the same reason."""


def _display(metrics: Mapping[str, Any], name: str) -> str:
    return str(normaliser_info(metrics).get(name, {}).get("display_name", name))


def _series(
    metrics: Mapping[str, Any], normaliser: str, column: str, scale: float = 1.0
) -> tuple[list[int], list[float], list[float]]:
    """Sizes, means and standard errors over seeds of one column, NaN sizes dropped."""
    by_size: dict[int, list[float]] = {}
    for row in metrics.get("rows", []):
        if row["normaliser"] == normaliser:
            by_size.setdefault(int(row["n"]), []).append(scale * metric_number(row.get(column)))
    sizes, means, errors = [], [], []
    for n in sorted(by_size):
        mean, se = mean_and_standard_error(by_size[n])
        if not math.isnan(mean):
            sizes.append(n)
            means.append(mean)
            errors.append(0.0 if math.isnan(se) else se)
    return sizes, means, errors


def _normalisers(metrics: Mapping[str, Any]) -> list[str]:
    present = [str(row["normaliser"]) for row in metrics.get("rows", [])]
    configured = [str(n) for n in metrics.get("config", {}).get("normalisers", [])]
    ordered = [n for n in configured if n in present]
    return ordered + sorted(set(present) - set(ordered))


def heatmap_sizes(sizes: Sequence[int], panels: int = HEATMAP_PANELS) -> list[int]:
    """Up to ``panels`` sizes spread evenly (by rank) from the smallest to the largest.

    Examples
    --------
    >>> heatmap_sizes([2**k for k in range(4, 15)])
    [16, 64, 256, 1024, 4096, 16384]
    >>> heatmap_sizes([16, 256])
    [16, 256]
    """
    ordered = sorted(set(sizes))
    if len(ordered) <= panels:
        return ordered
    picks = np.linspace(0, len(ordered) - 1, panels).round().astype(int)
    return [ordered[i] for i in sorted(set(picks.tolist()))]


def histogram_quantile(counts: Sequence[int], edges: Sequence[float], q: float) -> float:
    """The ``q`` quantile of a histogram, interpolated linearly within its bin.

    Examples
    --------
    >>> histogram_quantile([0, 4, 0], [0.0, 1.0, 2.0, 3.0], 0.5)
    1.5
    >>> import math; math.isnan(histogram_quantile([], [], 0.5))
    True
    """
    total = sum(counts)
    if not total or len(edges) != len(counts) + 1:
        return math.nan
    target, running = q * total, 0.0
    for k, count in enumerate(counts):
        if count and running + count >= target:
            return float(edges[k] + (edges[k + 1] - edges[k]) * (target - running) / count)
        running += count
    return float(edges[-1])


def heatmap_figure(metrics: Mapping[str, Any], normaliser: str, path: Path | str) -> Path:
    """The paper's Figure 2: the weights on each set's top items, one panel per size.

    The colour scale is logarithmic (from 10⁻⁴ to 1), so that weights of order 1/n stay
    readable at n ≥ 1024; smaller weights share the darkest colour.
    """
    plt = _pyplot()
    from matplotlib.colors import LogNorm

    maps = {int(n): rows for n, rows in metrics.get("heatmaps", {}).get(normaliser, {}).items()}
    if not maps:
        raise ValueError(f"no heat-map data for {normaliser!r}")
    sizes = heatmap_sizes(list(maps))
    fig, axes = plt.subplots(
        1, len(sizes), figsize=(2.5 * len(sizes) + 1.2, 3.3), squeeze=False, layout="constrained"
    )
    image = None
    for ax, n in zip(axes[0], sizes, strict=True):
        grid = np.array([[metric_number(v) for v in row] for row in maps[n]], dtype=float)
        if grid.size == 0:
            grid = np.full((1, 1), np.nan)
        clipped = np.where(np.isnan(grid), np.nan, np.clip(grid, _HEATMAP_FLOOR, 1.0))
        image = ax.imshow(
            np.ma.masked_invalid(clipped),
            cmap="viridis",
            norm=LogNorm(vmin=_HEATMAP_FLOOR, vmax=1.0),
            aspect="auto",
            interpolation="nearest",
        )
        ax.set_title(f"n = {n}")
        ax.set_xlabel("item rank by priority")
        ax.set_yticks([])
    axes[0][0].set_ylabel("test set")
    if image is not None:
        fig.colorbar(image, ax=axes[0].tolist(), label="attention weight (log scale)")
    fig.suptitle(f"{_display(metrics, normaliser)}: weights on the 16 highest-priority items")
    return _save(fig, path)


def _positive(xs: list[int], ys: list[float], errors: list[float]) -> tuple[Any, Any, Any]:
    """Points a log axis can show, with error bars clipped above zero."""
    keep = [i for i, y in enumerate(ys) if y > 0]
    x = np.array([xs[i] for i in keep], dtype=float)
    y = np.array([ys[i] for i in keep], dtype=float)
    e = np.array([errors[i] for i in keep], dtype=float)
    lower = np.minimum(e, 0.5 * y)
    return x, y, np.vstack([lower, e]) if len(keep) else np.zeros((2, 0))


def p_max_figure(metrics: Mapping[str, Any], path: Path | str) -> Path:
    """The largest weight against ``n`` for each softmax-family normaliser, with T1's bound.

    Mean ``p_max`` over seeds with standard-error bars; dashed, T1's upper bound at the
    median row's own spread, drawn once per distinct curve (normalisers whose bound
    curves coincide share one line, labelled with all their names); dotted, ``1/n``.
    """
    plt = _pyplot()
    info = normaliser_info(metrics)
    fig, ax = plt.subplots(figsize=(6.4, 5.2), layout="constrained")
    all_sizes: set[int] = set()
    bounds: list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], list[str], str]] = []
    for name in _normalisers(metrics):
        if not info[name]["softmax_family"]:
            continue
        x, y, e = _positive(*_series(metrics, name, "p_max_mean"))
        if not len(x):
            continue
        all_sizes.update(int(v) for v in x)
        line = ax.errorbar(x, y, yerr=e, marker="o", ms=4, capsize=2, label=_display(metrics, name))
        bx, by, _ = _positive(*_series(metrics, name, "bound_median"))
        if not len(bx):
            continue
        for known_x, known_y, names, _ in bounds:
            if np.array_equal(known_x, bx) and np.allclose(known_y, by, rtol=1e-3):
                names.append(_display(metrics, name))
                break
        else:
            bounds.append((bx, by, [_display(metrics, name)], line.lines[0].get_color()))
    for bx, by, names, colour in bounds:
        ax.plot(bx, by, ls="--", color=colour if len(names) == 1 else "black",
                label=f"T1 bound, own spread: {', '.join(names)}")  # fmt: skip
    if all_sizes:
        ns = np.array(sorted(all_sizes), dtype=float)
        ax.plot(ns, 1 / ns, ls=":", color="grey", label="1/n")
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel("set size n")
    ax.set_ylabel("largest attention weight")
    ax.set_title("Dispersion on typical sets: largest weight against n")
    _legend_below(fig, ax)
    return _save(fig, path)


def accuracy_figure(metrics: Mapping[str, Any], path: Path | str) -> Path:
    """Accuracy (%) against ``n`` per normaliser, with the paper's numbers and chance."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.4), layout="constrained")
    colours: dict[str, str] = {}
    for name in _normalisers(metrics):
        sizes, means, errors = _series(metrics, name, "accuracy", scale=100.0)
        if sizes:
            line = ax.errorbar(
                sizes,
                means,
                yerr=errors,
                marker="o",
                ms=4,
                capsize=2,
                label=_display(metrics, name),
            )
            colours[name] = line.lines[0].get_color()
    for name in ("softmax", "adaptive_temperature"):
        points = [(n, row[name]) for n, row in sorted(PAPER_ACCURACY.items())]
        ax.plot(
            [n for n, _ in points],
            [v for _, v in points],
            ls="none",
            marker="s",
            mfc="none",
            color=colours.get(name, "black"),
            label=f"paper: {_display(metrics, name)}",
        )
    classes = int(metrics.get("config", {}).get("classes", 10))
    ax.axhline(100 / classes, ls=":", color="grey", label=f"chance ({100 / classes:.0f}%)")
    ax.set_xscale("log")
    ax.set_ylim(0, 102)
    ax.set_xlabel("set size n")
    ax.set_ylabel("accuracy (%)")
    ax.set_title("Max retrieval accuracy")
    ax.legend(fontsize="small")
    return _save(fig, path)


def length_scaling_figure(metrics: Mapping[str, Any], path: Path | str) -> Path:
    """Length-scaled heads: mean top weight, mean T10 floor and the fraction of sets with
    ``sΔ > 1``, all on one axis from 0 to 1."""
    plt = _pyplot()
    info = normaliser_info(metrics)
    fig, ax = plt.subplots(figsize=(6.4, 4.4), layout="constrained")
    for name in _normalisers(metrics):
        if not info[name].get("length_scaled"):
            continue
        sizes, means, errors = _series(metrics, name, "p_max_mean")
        if not sizes:
            continue
        label = _display(metrics, name)
        line = ax.errorbar(
            sizes,
            means,
            yerr=errors,
            marker="o",
            ms=4,
            capsize=2,
            label=f"{label}: mean top weight",
        )
        colour = line.lines[0].get_color()
        lx, ly, _ = _series(metrics, name, "gap_floor_mean")
        if lx:
            ax.plot(lx, ly, ls=":", color=colour, label=f"{label}: mean T10 floor")
        fx, fy, _ = _series(metrics, name, "s_gap_above_one")
        ax.plot(fx, fy, ls="--", marker="x", color=colour, label=f"{label}: fraction with sΔ > 1")
    ax.set_xscale("log")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("set size n")
    ax.set_ylabel("weight, floor or fraction (0 to 1)")
    ax.set_title("Length scaling: top weight against T10's floor")
    ax.legend(fontsize="small")
    return _save(fig, path)


def worst_sets_figure(metrics: Mapping[str, Any], path: Path | str) -> Path:
    """Worst sets: the model's top weight and T1's bound at the certified δ* against n,
    one colour per head (per cap for the bounded heads), mean over seeds; a dotted
    vertical line at the head's certified n*(½) where it lies in the tested range."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.6, 4.6), layout="constrained")
    certificates = metrics.get("certificates", {})
    drawn = 0
    for name, by_seed in certificates.items():
        by_size: dict[int, list[tuple[float, float]]] = {}
        for cert in by_seed.values():
            for row in cert.get("worst_sets") or []:
                by_size.setdefault(int(row["n"]), []).append((row["p_max"], row["bound"]))
        if not by_size or name.startswith("adaptive"):
            continue
        sizes = sorted(by_size)
        measured = [np.mean([p for p, _ in by_size[n]]) for n in sizes]
        bound = [np.mean([b for _, b in by_size[n]]) for n in sizes]
        label = _display(metrics, name)
        # Heads often sit on the same points (every worst set at weight 1): a hollow
        # marker and a line style of its own for each, so that none hides another.
        (line,) = ax.plot(
            sizes, measured, marker=MARKERS[drawn % len(MARKERS)], ms=7 - drawn % 3,
            mfc="none", mew=1.4, ls="none", label=f"{label}: model",
        )  # fmt: skip
        ax.plot(
            sizes, bound, ls=LINE_STYLES[drawn % len(LINE_STYLES)], color=line.get_color(),
            alpha=0.6, label=f"{label}: T1 at δ*",
        )  # fmt: skip
        halves = [
            float(cert["dispersion_size"]["half"]["upper"])
            for cert in by_seed.values()
            if cert.get("dispersion_size")
        ]
        if halves and min(sizes) <= np.mean(halves) <= max(sizes):
            ax.axvline(float(np.mean(halves)), color=line.get_color(), ls=":", alpha=0.8)
        drawn += 1
    if drawn:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.axhline(0.5, ls=":", color="grey", label="½")
        ax.set_ylim(top=1.25)  # a weight: the axis ends just above 1
    ax.set_xlabel("set size n")
    ax.set_ylabel("top weight of the worst set")
    ax.set_title("Worst sets: the model's top weight and T1's bound at the certified δ*")
    ax.legend(fontsize="small", loc="lower left")
    return _save(fig, path)


def typical_sets_figure(metrics: Mapping[str, Any], path: Path | str) -> Path:
    """T13 on typical sets: the measured mean top weight against the mean-field value and
    the mean band, per head."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.6, 4.6), layout="constrained")
    for name in _normalisers(metrics):
        sizes, measured, _ = _series(metrics, name, "t13_mean_field_mean")
        if not sizes:
            continue
        label = _display(metrics, name)
        mx, my, me = _series(metrics, name, "p_true_mean")
        keep = [i for i, n in enumerate(mx) if n in sizes]
        line = ax.errorbar(
            [mx[i] for i in keep], [my[i] for i in keep], yerr=[me[i] for i in keep],
            marker="o", ms=4, ls="none", capsize=2, label=f"{label}: measured",
        )  # fmt: skip
        colour = line.lines[0].get_color()
        ax.plot(sizes, measured, color=colour, label=f"{label}: 1/(1 + (n−1)I)")
        _, low, _ = _series(metrics, name, "t13_lower_mean")
        _, high, _ = _series(metrics, name, "t13_upper_mean")
        if len(low) == len(sizes) == len(high):
            ax.fill_between(sizes, low, high, color=colour, alpha=0.12)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("set size n")
    ax.set_ylabel("weight on the top item")
    ax.set_title("Typical sets: measured top weight and T13's prediction (band shaded)")
    ax.legend(fontsize="small", loc="lower left")
    return _save(fig, path)


def gap_sets_figure(metrics: Mapping[str, Any], path: Path | str) -> Path:
    """Gap-controlled sets: measured top weight (markers) and T13's mean-field value
    (lines) against n, one colour per lead, one panel per head."""
    plt = _pyplot()
    rows = metrics.get("gap_rows", [])
    names = [n for n in _normalisers(metrics) if any(r["normaliser"] == n for r in rows)]
    fig, axes = plt.subplots(
        1, max(1, len(names)), figsize=(4.4 * max(1, len(names)) + 0.6, 4.0), squeeze=False,
        layout="constrained", sharey=True,
    )  # fmt: skip
    for ax, name in zip(axes[0], names, strict=False):
        leads = sorted({float(r["lead"]) for r in rows if r["normaliser"] == name})
        for lead in leads:
            cells: dict[int, list[dict[str, Any]]] = {}
            for r in rows:
                if r["normaliser"] == name and float(r["lead"]) == lead:
                    cells.setdefault(int(r["n"]), []).append(r)
            sizes = sorted(cells)
            measured = [np.mean([r["p_true_mean"] for r in cells[n]]) for n in sizes]
            predicted = [
                np.nanmean([metric_number(r["t13_mean_field_mean"]) for r in cells[n]])
                for n in sizes
            ]
            (line,) = ax.plot(sizes, measured, marker="o", ls="none", label=f"lead {lead:g}")
            ax.plot(sizes, predicted, color=line.get_color(), alpha=0.7)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(_display(metrics, name))
        ax.set_xlabel("set size n")
    axes[0][0].set_ylabel("weight on the top item")
    axes[0][0].legend(fontsize="small", title="markers: measured, lines: T13", loc="lower left")
    fig.suptitle("Gap-controlled sets: the top item leads by a fixed priority gap")
    return _save(fig, path)


def learning_curves_figure(metrics: Mapping[str, Any], path: Path | str) -> Path:
    """Mean weight on the top item at n = 16 and 256 against the training step, per
    trained normaliser (mean over seeds)."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
    curves: dict[str, list[Mapping[str, Any]]] = {}
    for record in metrics.get("training", []):
        if record.get("curve"):
            curves.setdefault(str(record["normaliser"]), []).append(record["curve"])
    for ax, size in zip(axes, ("16", "256"), strict=True):
        for name, per_seed in curves.items():
            key = f"p_top_{size}"
            if not all(key in c for c in per_seed):
                continue
            steps = per_seed[0]["step"]
            mean = np.mean([c[key] for c in per_seed], axis=0)
            ax.plot(steps, mean, label=_display(metrics, name))
        ax.set_title(f"n = {size}")
        ax.set_xlabel("training step")
    axes[0].set_ylabel("mean weight on the top item")
    axes[0].legend(fontsize="small")
    fig.suptitle("Learning curves (fixed sets per seed)")
    return _save(fig, path)


def adaptive_rule_figure(metrics: Mapping[str, Any], path: Path | str) -> Path:
    """Left: the softmax heads' entropy histograms at a few sizes, with the paper's and
    the refitted β(H).  Right: the β that adaptive θ applied, per size."""
    plt = _pyplot()
    histograms = metrics.get("histograms", {}).get("adaptive_temperature", {})
    edges = metrics.get("histogram_edges", {})
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.4), layout="constrained")
    sizes = sorted({int(n) for by_size in histograms.values() for n in by_size})
    picks = heatmap_sizes(sizes, 5)
    entropy_edges = np.array(edges.get("entropy", []), dtype=float)
    beta_edges = np.array(edges.get("beta", []), dtype=float)
    highest = 0.0
    for n in picks:
        counts = np.zeros(max(len(entropy_edges) - 1, 0))
        beta_counts = np.zeros(max(len(beta_edges) - 1, 0))
        for by_size in histograms.values():
            cell = by_size.get(str(n)) or {}
            if cell.get("entropy"):
                counts += np.array(cell["entropy"])
            if cell.get("beta"):
                beta_counts += np.array(cell["beta"])
        if counts.sum():
            left.stairs(counts / counts.sum(), entropy_edges, label=f"n = {n}")
            highest = max(highest, float(entropy_edges[np.nonzero(counts)[0][-1] + 1]))
        if beta_counts.sum():
            right.stairs(beta_counts / beta_counts.sum(), beta_edges, label=f"n = {n}")
    twin = left.twinx()
    h = np.linspace(0, float(entropy_edges[-1]) if len(entropy_edges) else 10, 400)
    twin.plot(h, _rule(PAPER_POLYNOMIAL, h), color="black", label="β(H), paper")
    for seed, fit in sorted((metrics.get("refits") or {}).items()):
        twin.plot(h, _rule(fit["coefficients"], h), color="black", ls="--", alpha=0.5,
                  label="β(H), refit here" if seed == min(metrics["refits"]) else None)  # fmt: skip
    twin.set_ylabel("β (lines)")
    twin.set_ylim(0.9, 4.1)
    left.set_xlim(0, max(6.5, highest + 0.5))
    left.set_xlabel("entropy H of softmax(e) (nats)")
    left.set_ylabel("fraction of test sets")
    right.set_xlabel("β applied by adaptive θ")
    right.set_ylabel("fraction of test sets")
    # The sizes have the same colours in both panels: one legend below them, which
    # covers no histogram (inside, every corner holds one at some size).
    _legend_below(fig, left, twin, columns=len(picks) + 2)
    fig.suptitle("Adaptive temperature on the softmax heads: entropies and the β they get")
    return _save(fig, path)


def _rule(coefficients: Sequence[float], h: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    beta = np.maximum(np.polyval(list(coefficients), h), 1.0)
    return np.where(h > 0.5, beta, 1.0)


def draw_all(metrics: Mapping[str, Any], directory: Path) -> list[Path]:
    """Every figure the run's data allows, into ``directory``."""
    info = normaliser_info(metrics)
    names = {str(row["normaliser"]) for row in metrics.get("rows", [])}
    paths = [accuracy_figure(metrics, directory / "accuracy.png")]
    if any(info[n]["softmax_family"] for n in names):
        paths.append(p_max_figure(metrics, directory / "p_max.png"))
    if any(
        cert.get("worst_sets")
        for by_seed in metrics.get("certificates", {}).values()
        for cert in by_seed.values()
    ):
        paths.append(worst_sets_figure(metrics, directory / "worst_sets.png"))
    if any(row.get("t13_sets") for row in metrics.get("rows", [])):
        paths.append(typical_sets_figure(metrics, directory / "typical_sets.png"))
    if metrics.get("gap_rows"):
        paths.append(gap_sets_figure(metrics, directory / "gap_sets.png"))
    if any(info[n].get("length_scaled") for n in names):
        paths.append(length_scaling_figure(metrics, directory / "length_scaling.png"))
    if any(record.get("curve") for record in metrics.get("training", [])):
        paths.append(learning_curves_figure(metrics, directory / "learning_curves.png"))
    if metrics.get("histograms", {}).get("adaptive_temperature"):
        paths.append(adaptive_rule_figure(metrics, directory / "adaptive_rule.png"))
    for name, maps in metrics.get("heatmaps", {}).items():
        if maps:
            paths.append(heatmap_figure(metrics, name, directory / f"heatmap_{name}.png"))
    return paths
