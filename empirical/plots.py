"""Figures of a max-retrieval run, drawn from its ``metrics.json`` data with matplotlib.

matplotlib is imported inside each function (it is an optional dependency), on the
non-interactive Agg backend unless a backend was already chosen.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from softmax_dispersion.empirical.statistics import (
    PAPER_ACCURACY,
    SOFTMAX_FAMILY,
    mean_and_standard_error,
    metric_number,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "HEATMAP_PANELS",
    "accuracy_figure",
    "escape_figure",
    "heatmap_figure",
    "heatmap_sizes",
    "p_max_figure",
]

HEATMAP_PANELS = 6
"""At most this many sizes are drawn in a heat-map figure."""

_DPI = 120


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
    return path


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


def heatmap_figure(metrics: Mapping[str, Any], normaliser: str, path: Path | str) -> Path:
    """The paper's Figure 2: the weights on each set's top items, one panel per size.

    Parameters
    ----------
    metrics
        A run's data; ``metrics["heatmaps"][normaliser]`` maps sizes (``str`` or ``int``)
        to rows of weights on the 16 highest-priority items, highest first (``None`` or
        NaN where a set has fewer items).
    normaliser
        Which normaliser's heat-map to draw.
    path
        Where to save the PNG.

    Returns
    -------
    Path
        ``path``.
    """
    plt = _pyplot()
    maps = {int(n): rows for n, rows in metrics.get("heatmaps", {}).get(normaliser, {}).items()}
    if not maps:
        raise ValueError(f"no heat-map data for {normaliser!r}")
    sizes = heatmap_sizes(list(maps))
    fig, axes = plt.subplots(
        1, len(sizes), figsize=(2.6 * len(sizes) + 1.2, 3.4), squeeze=False, layout="constrained"
    )
    image = None
    for ax, n in zip(axes[0], sizes, strict=True):
        grid = np.array([[metric_number(v) for v in row] for row in maps[n]], dtype=float)
        if grid.size == 0:
            grid = np.full((1, 1), np.nan)
        image = ax.imshow(
            np.ma.masked_invalid(grid),
            cmap="viridis",
            vmin=0.0,
            vmax=1.0,
            aspect="auto",
            interpolation="nearest",
        )
        ax.set_title(f"n = {n}")
        ax.set_xlabel("item rank by priority")
        ax.set_yticks([])
    axes[0][0].set_ylabel("test set")
    if image is not None:
        fig.colorbar(image, ax=axes[0].tolist(), label="attention weight")
    fig.suptitle(f"{normaliser}: weights on the 16 highest-priority items")
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

    Mean ``p_max`` over seeds with standard-error bars; dashed, in the same colour, the
    T1 upper bound ``e^δ/(e^δ + n − 1)`` at the median row (effective ``β``), averaged over
    seeds; dotted, the uniform weight ``1/n``.
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.4), layout="constrained")
    all_sizes: set[int] = set()
    for name in _normalisers(metrics):
        if name not in SOFTMAX_FAMILY:
            continue
        x, y, e = _positive(*_series(metrics, name, "p_max_mean"))
        if not len(x):
            continue
        all_sizes.update(int(v) for v in x)
        line = ax.errorbar(x, y, yerr=e, marker="o", ms=4, capsize=2, label=f"{name} p_max")
        bx, by, _ = _positive(*_series(metrics, name, "bound_median"))
        if len(bx):
            colour = line.lines[0].get_color()
            ax.plot(bx, by, ls="--", color=colour, label=f"{name} T1 bound (median row)")
    if all_sizes:
        ns = np.array(sorted(all_sizes), dtype=float)
        ax.plot(ns, 1 / ns, ls=":", color="grey", label="1/n")
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel("set size n")
    ax.set_ylabel("largest attention weight")
    ax.set_title("Dispersion: largest weight against n")
    # The curves fall from the top left, so the lower left stays clear.
    ax.legend(fontsize="small", loc="lower left")
    return _save(fig, path)


def accuracy_figure(metrics: Mapping[str, Any], path: Path | str) -> Path:
    """Accuracy (%) against ``n`` per normaliser, with the paper's numbers and chance."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.4), layout="constrained")
    colours: dict[str, str] = {}
    for name in _normalisers(metrics):
        sizes, means, errors = _series(metrics, name, "accuracy", scale=100.0)
        if sizes:
            line = ax.errorbar(sizes, means, yerr=errors, marker="o", ms=4, capsize=2, label=name)
            colours[name] = line.lines[0].get_color()
    for name, label in (("softmax", "softmax"), ("adaptive_temperature", "adaptive θ")):
        points = [(n, row[name]) for n, row in sorted(PAPER_ACCURACY.items())]
        ax.plot(
            [n for n, _ in points],
            [v for _, v in points],
            ls="none",
            marker="s",
            mfc="none",
            color=colours.get(name, "black"),
            label=f"paper: {label}",
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


def escape_figure(metrics: Mapping[str, Any], path: Path | str) -> Path:
    """SSMax and log-n scaling: ``p_max`` and T10's floor against ``n``, and the fraction
    of sets with ``sΔ > 1``."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.4), layout="constrained")
    twin: Axes = ax.twinx()
    for name in _normalisers(metrics):
        if name not in ("ssmax", "logn"):
            continue
        sizes, means, errors = _series(metrics, name, "p_max_mean")
        if not sizes:
            continue
        line = ax.errorbar(
            sizes, means, yerr=errors, marker="o", ms=4, capsize=2, label=f"{name}: mean p_max"
        )
        colour = line.lines[0].get_color()
        lx, ly, _ = _series(metrics, name, "gap_floor_mean")
        if lx:
            ax.plot(lx, ly, ls=":", color=colour, label=f"{name}: mean T10 floor")
        fx, fy, _ = _series(metrics, name, "s_gap_above_one")
        twin.plot(fx, fy, ls="--", marker="x", color=colour, label=f"{name}: fraction sΔ > 1")
    ax.set_xscale("log")
    ax.set_ylim(0, 1.02)
    twin.set_ylim(0, 1.02)
    ax.set_xlabel("set size n")
    ax.set_ylabel("mean largest weight")
    twin.set_ylabel("fraction of sets with sΔ > 1 (dashed)")
    ax.set_title("Length-scaled softmax: escape from dispersion")
    handles, labels = ax.get_legend_handles_labels()
    twin_handles, twin_labels = twin.get_legend_handles_labels()
    if handles or twin_handles:
        ax.legend(handles + twin_handles, labels + twin_labels, fontsize="small")
    return _save(fig, path)
