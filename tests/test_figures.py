"""Every figure the package draws, as saved: no legend covers data, no raw TeX in any text,
weight axes end near 1, and heads at the same points stay distinguishable.

The figures are drawn by the code that draws them for a report: the theory and numerics
sections of the main job, and the empirical report of the committed run folders (from
their ``metrics.json`` alone, no torch).  Each is checked the moment it is saved.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.collections import LineCollection, PathCollection  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RUN_FOLDERS = ("empirical-run", "empirical-run-bounded")
RAW_TEX = re.compile(r"\^\{|_\{|\\[a-z]+")
"""TeX that is not typeset: what a title shows when ``$...$`` is missing."""


def _points(artist: Any) -> np.ndarray[Any, Any]:
    """The display coordinates of a data artist, lines sampled along each segment."""
    if isinstance(artist, PathCollection):
        offsets = np.asarray(artist.get_offsets(), dtype=float)
        return artist.get_offset_transform().transform(offsets) if len(offsets) else offsets
    if isinstance(artist, LineCollection):
        segments = [np.asarray(s, dtype=float) for s in artist.get_segments()]
        paths = [artist.get_transform().transform(s) for s in segments if len(s)]
    else:  # a Line2D or a patch (histogram stairs)
        if hasattr(artist, "get_xydata"):
            data = np.asarray(artist.get_xydata(), dtype=float)
            drawn_as_line = artist.get_linestyle() not in ("None", "none", "", " ")
        else:
            data = np.asarray(artist.get_path().vertices, dtype=float)
            drawn_as_line = True
        data = data[np.isfinite(data).all(axis=1)] if len(data) else data
        if not len(data):
            return np.zeros((0, 2))
        shown = artist.get_transform().transform(data)
        paths = [shown] if drawn_as_line else [shown[:, None, :].reshape(-1, 2)]
        if not drawn_as_line:
            return shown
    steps = np.linspace(0, 1, 24)[None, :, None]
    sampled = [
        (path[:-1, None, :] + steps * (path[1:] - path[:-1])[:, None, :]).reshape(-1, 2)
        for path in paths
        if len(path) > 1
    ]
    sampled += [path[-1:] for path in paths]
    return np.concatenate(sampled) if sampled else np.zeros((0, 2))


def _data_artists(ax: Any) -> Iterator[tuple[str, Any]]:
    """What a panel shows as data: its lines, markers, error bars and histogram steps;
    not reference lines drawn across the whole panel (axhline, axvline) or shaded bands."""
    for line in ax.get_lines():
        if line.get_transform().contains_branch(ax.transData):
            yield str(line.get_label()), line
    for collection in ax.collections:
        if isinstance(collection, (LineCollection, PathCollection)):
            yield str(collection.get_label()), collection
    for patch in ax.patches:
        yield str(patch.get_label()), patch


def covered_data(fig: Figure) -> list[str]:
    """The data artists any legend of ``fig`` lies over (as drawn)."""
    canvas = FigureCanvasAgg(fig)  # a closed pyplot figure keeps no drawing canvas
    canvas.draw()
    renderer = canvas.get_renderer()
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    boxes = [legend.get_window_extent(renderer) for legend in [*legends, *fig.legends]]
    covered = []
    for ax in fig.axes:
        for label, artist in _data_artists(ax):
            points = _points(artist)
            for box in boxes:
                inside = (
                    (points[:, 0] > box.x0)
                    & (points[:, 0] < box.x1)
                    & (points[:, 1] > box.y0)
                    & (points[:, 1] < box.y1)
                )
                if inside.any():
                    covered.append(f"{ax.get_title() or fig.get_suptitle()}: {label}")
    return covered


def raw_tex(fig: Figure) -> list[str]:
    """Texts of ``fig`` that show TeX outside ``$...$`` (typeset by mathtext)."""
    texts = [fig.get_suptitle()]
    for ax in fig.axes:
        texts += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        legend = ax.get_legend()
        texts += [t.get_text() for t in legend.get_texts()] if legend is not None else []
    texts += [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    return [text for text in texts if RAW_TEX.search(re.sub(r"\$[^$]*\$", "", text))]


def draw_every_figure(out: Path) -> dict[str, Figure]:
    """Every figure the reports draw into ``out``, by file name, kept as saved."""
    figures: dict[str, Figure] = {}
    real_savefig = Figure.savefig

    def keep(self: Figure, path: Any, *args: Any, **kwargs: Any) -> None:
        real_savefig(self, path, *args, **kwargs)
        figures[f"{Path(path).parent.parent.name}/{Path(path).name}"] = self

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Figure, "savefig", keep)
        from softmax_dispersion.empirical import plots
        from softmax_dispersion.reproduce import numerics, theory

        (out / "theory" / "figures").mkdir(parents=True)
        theory._theory_figures(out / "theory" / "figures")
        (out / "numerics").mkdir()
        numerics.section(out / "numerics")
        for run in RUN_FOLDERS:
            metrics = json.loads((ROOT / "docs" / run / "metrics.json").read_text())
            # every figure of the report but the heat maps (colour bars, no legend, no
            # curve, and the slowest to draw)
            patch.setattr(plots, "heatmap_figure", lambda _m, _n, path: path)
            plots.draw_all(metrics, out / run / "figures")
    return figures


def _legends_over_data(name: str, fig: Figure) -> list[str]:
    return covered_data(fig)


def _raw_tex(name: str, fig: Figure) -> list[str]:
    return raw_tex(fig)


def _weight_axes_beyond_one(name: str, fig: Figure) -> list[str]:
    # a weight is at most 1: its log axis may leave a margin above, never a decade
    return [
        f"{ax.get_ylabel()} up to {ax.get_ylim()[1]:.3g}"
        for ax in fig.axes
        if "weight" in ax.get_ylabel() and ax.get_ylim()[1] > 1.6
    ]


def _hidden_heads(name: str, fig: Figure) -> list[str]:
    if not name.endswith("/worst_sets.png"):
        return []
    (ax,) = fig.axes
    models = [line for line in ax.get_lines() if str(line.get_label()).endswith(": model")]
    shapes = {line.get_marker() for line in models}
    hollow = all(line.get_markerfacecolor() == "none" for line in models)
    return [] if len(shapes) == len(models) and hollow else ["heads share a filled marker"]


def test_every_figure_reads_as_it_should(tmp_path: Path) -> None:
    # One test for all the checks: drawing the figures is the cost (seconds), so they are
    # drawn once, on one xdist worker.
    drawn = draw_every_figure(tmp_path)
    names = set(drawn)
    assert {"theory/dispersion_bound.png", "theory/adaptive_temperature.png"} <= names
    assert {"numerics/certified_sweep.png", "empirical-run/adaptive_rule.png"} <= names
    for run in RUN_FOLDERS:
        assert {f"{run}/p_max.png", f"{run}/worst_sets.png"} <= names
    problems = {
        check.__name__: {name: found for name, fig in drawn.items() if (found := check(name, fig))}
        for check in (_legends_over_data, _raw_tex, _weight_axes_beyond_one, _hidden_heads)
    }
    assert {check: found for check, found in problems.items() if found} == {}


# The checks above must be able to fail.


def test_a_legend_over_a_curve_is_caught() -> None:
    fig = Figure(figsize=(4, 3))
    ax = fig.add_subplot()
    x = np.linspace(0, 1, 50)
    ax.plot(x, np.full_like(x, 0.9), label="flat")
    ax.set_ylim(0, 1)
    ax.legend(loc="upper right")
    assert covered_data(fig) == [": flat"]
    ax.legend(loc="lower right")  # the same legend where the curve is not
    assert covered_data(fig) == []


def test_raw_tex_in_a_title_is_caught() -> None:
    fig = Figure()
    ax = fig.add_subplot()
    ax.set_title("T2: e^{δ/θ}/n")
    assert raw_tex(fig) == ["T2: e^{δ/θ}/n"]
    ax.set_title(r"T2: $e^{\delta/\theta}/n$")
    assert raw_tex(fig) == []
