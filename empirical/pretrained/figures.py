"""Figures of a pretrained-heads probe, drawn from its ``heads.json`` and ``measurements.json``.

matplotlib is imported inside each function, on the Agg backend unless one was chosen.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from softmax_dispersion.empirical.plots import _pyplot, _save

__all__ = [
    "delta_histogram_figure",
    "entropy_figure",
    "n_star_figure",
    "p_max_figure",
    "tightness_figure",
]


def _grid(result: Mapping[str, Any], key: str) -> np.ndarray:
    model = result["model"]
    grid = np.full((model["layers"], model["heads"]), np.nan)
    for record in result["heads"]:
        grid[record["layer"], record["head"]] = float(record[key])
    return grid


def _panels(plt: Any, layers: int) -> tuple[Any, Any]:
    columns = 3
    rows = -(-layers // columns)
    fig, axes = plt.subplots(
        rows, columns, figsize=(4.0 * columns, 3.0 * rows), squeeze=False, layout="constrained"
    )
    return fig, axes.ravel()


def delta_histogram_figure(
    result: Mapping[str, Any], measurements: Mapping[str, Any], path: Path | str
) -> Path:
    """Per layer: the distribution of row spreads ``δ`` on the text, every head and size pooled.

    The paper's Gemma figure, for this model; each panel notes the layer's smallest
    certified ``δ*``.
    """
    plt = _pyplot()
    hist = measurements["text_histograms"]
    edges = np.array(hist["edges"])
    stars = _grid(result, "delta_star_upper")
    fig, axes = _panels(plt, len(hist["counts"]))
    for layer, (ax, counts) in enumerate(zip(axes, hist["counts"], strict=False)):
        counts = np.array(counts, dtype=float)
        ax.stairs(counts / max(counts.sum(), 1), edges, fill=True, alpha=0.75)
        centres = (edges[:-1] + edges[1:]) / 2
        median = centres[np.searchsorted(np.cumsum(counts), counts.sum() / 2)]
        ax.axvline(median, color="black", lw=1, ls="--", label=f"median ≈ {median:.1f}")
        ax.set_title(f"layer {layer}   (δ* ≥ {np.nanmin(stars[layer]):.0f} in every head)")
        ax.set_xlabel("row spread δ = max e − min e")
        ax.legend(loc="upper right", fontsize=8)
    for ax in axes[len(hist["counts"]) :]:
        ax.set_visible(False)
    fig.suptitle(f"Row spreads of all-MiniLM-L6-v2's heads on {result['corpus']['name']}")
    return _save(fig, path)


def _per_n(measurements: Mapping[str, Any], kind: str, metric: str, stat: str) -> np.ndarray:
    """``[sizes, layers, heads]`` of one summary statistic."""
    sizes = measurements["sizes"]
    return np.array([measurements["kinds"][kind][str(n)][metric][stat] for n in sizes], dtype=float)


def p_max_figure(measurements: Mapping[str, Any], path: Path | str, kind: str = "text") -> Path:
    """Per layer: each head's median top weight against ``n``, with T1's bound.

    Thin lines: the median ``p_max`` over a head's rows; dashed: T1's bound
    ``e^δ/(e^δ + n − 1)`` at the head's median row spread (the median over the heads of
    the layer); dotted: ``1/n``.
    """
    plt = _pyplot()
    sizes = np.array(measurements["sizes"], dtype=float)
    p_max = _per_n(measurements, kind, "p_max", "median")
    bound = _per_n(measurements, kind, "t1_bound", "median")
    fig, axes = _panels(plt, p_max.shape[1])
    for layer, ax in enumerate(axes[: p_max.shape[1]]):
        for head in range(p_max.shape[2]):
            ax.plot(sizes, p_max[:, layer, head], color="C0", lw=0.8, alpha=0.5)
        ax.plot(sizes, np.median(p_max[:, layer], axis=1), color="C0", lw=2, label="median p_max")
        ax.plot(
            sizes, np.median(bound[:, layer], axis=1), "k--", lw=1.5, label="T1 bound at median δ"
        )
        ax.plot(sizes, 1 / sizes, "k:", lw=1, label="1/n")
        ax.axhline(0.5, color="C3", lw=0.8, alpha=0.6)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"layer {layer}")
        ax.set_xlabel("n")
    axes[0].legend(fontsize=8, loc="lower left")
    for ax in axes[p_max.shape[1] :]:
        ax.set_visible(False)
    fig.suptitle(f"Top attention weight against n ({kind} inputs), with claim T1")
    return _save(fig, path)


def entropy_figure(measurements: Mapping[str, Any], path: Path | str, kind: str = "text") -> Path:
    """Per layer: each head's median entropy against ``n``, with T6's floor and ``log n``."""
    plt = _pyplot()
    sizes = np.array(measurements["sizes"], dtype=float)
    entropy = _per_n(measurements, kind, "entropy", "median")
    floor = _per_n(measurements, kind, "t6_floor", "median")
    fig, axes = _panels(plt, entropy.shape[1])
    for layer, ax in enumerate(axes[: entropy.shape[1]]):
        for head in range(entropy.shape[2]):
            ax.plot(sizes, entropy[:, layer, head], color="C2", lw=0.8, alpha=0.5)
        ax.plot(sizes, np.median(entropy[:, layer], axis=1), color="C2", lw=2, label="median H")
        ax.plot(
            sizes, np.median(floor[:, layer], axis=1), "k--", lw=1.5, label="T6 floor at median δ"
        )
        ax.plot(sizes, np.log(sizes), "k:", lw=1, label="log n")
        ax.set_xscale("log", base=2)
        ax.set_title(f"layer {layer}")
        ax.set_xlabel("n")
        ax.set_ylabel("entropy (nats)")
    axes[0].legend(fontsize=8, loc="upper left")
    for ax in axes[entropy.shape[1] :]:
        ax.set_visible(False)
    fig.suptitle(f"Attention entropy against n ({kind} inputs), with claim T6")
    return _save(fig, path)


def _heatmap(
    result: Mapping[str, Any], grid: np.ndarray, path: Path | str, title: str, label: str, fmt: str
) -> Path:
    plt = _pyplot()
    layers, heads = grid.shape
    fig, ax = plt.subplots(figsize=(1.0 + 0.75 * heads, 1.2 + 0.6 * layers), layout="constrained")
    image = ax.imshow(grid, cmap="viridis", aspect="auto")
    for i in range(layers):
        for h in range(heads):
            value = grid[i, h]
            shade = (value - np.nanmin(grid)) / max(np.nanmax(grid) - np.nanmin(grid), 1e-12)
            ax.text(
                h,
                i,
                format(value, fmt),
                ha="center",
                va="center",
                fontsize=7,
                color="black" if shade > 0.6 else "white",
            )
    ax.set_xticks(range(heads))
    ax.set_yticks(range(layers))
    ax.set_xlabel("head")
    ax.set_ylabel("layer")
    fig.colorbar(image, ax=ax, label=label)
    ax.set_title(title)
    return _save(fig, path)


def n_star_figure(result: Mapping[str, Any], path: Path | str) -> Path:
    """Layers × heads: ``log10 n*(½)`` from the certificate over tokens, the size beyond
    which no input of tokens lets the head put half its weight on one position."""
    return _heatmap(
        result,
        _grid(result, "token_log10_n_star_half"),
        path,
        "certified log10 n*(½) over tokens: every input disperses beyond this size",
        "log10 n*(½)",
        ".0f",
    )


def tightness_figure(result: Mapping[str, Any], path: Path | str) -> Path:
    """Layers × heads: the certificate over tokens divided by the largest spread found on
    token sequences (the width of the bracket the two make)."""
    return _heatmap(
        result,
        _grid(result, "bracket_ratio"),
        path,
        "certified over tokens / largest spread found on tokens",
        "ratio",
        ".1f",
    )
