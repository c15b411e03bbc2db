"""Figures of certified evaluations (matplotlib is imported only when plotting)."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

__all__ = ["plot_certified_sweep", "plot_length_scaling"]


def plot_certified_sweep(
    ax: Any,
    sizes: Sequence[int],
    delta: Fraction | int = 5,
    families: Sequence[str] = ("spike", "two_level", "dip"),
) -> dict[str, list[float]]:
    """Plot certified ``p_max`` (and the dip's ``p_min``) against ``n`` with T1's bounds.

    Parameters
    ----------
    ax
        A matplotlib axes.
    sizes
        The sizes (any, up to 10**18 and beyond: the families are run-length).
    delta
        The logit spread δ (θ = 1).
    families
        Names among ``spike``, ``dip`` and ``two_level`` (the top tenth of the logits
        at δ).

    Returns
    -------
    dict
        The plotted midpoints per curve, for tests and tables.

    Notes
    -----
    The curves are T1's ``c/(c+n−1)`` and ``1/(1+(n−1)c)`` with ``c = e^δ``, evaluated
    from the theory's exported numpy functions; the markers are midpoints of certified
    enclosures (far narrower than a marker).
    """
    import numpy as np

    from softmax_dispersion.numerics.checks import check_dispersion
    from softmax_dispersion.numerics.families import dip, spike, two_level
    from softmax_dispersion.theory.dispersion import dispersion_lower, dispersion_upper

    builders = {
        "spike": lambda n: spike(n, delta),
        "dip": lambda n: dip(n, delta),
        "two_level": lambda n: two_level(n, max(1, n // 10), delta),
    }
    grid = np.logspace(np.log10(min(sizes)), np.log10(max(sizes)), 300)
    spread = float(delta)
    ax.loglog(grid, dispersion_upper.numpy(grid, spread, 1.0), "k-", lw=1, label="T1 upper bound")
    ax.loglog(grid, dispersion_lower.numpy(grid, spread, 1.0), "k--", lw=1, label="T1 lower bound")
    curves: dict[str, list[float]] = {}
    markers = iter("osd^v")
    for name in families:
        checks = [check_dispersion(builders[name](n)) for n in sizes]
        marker = next(markers)
        curves[f"{name} p_max"] = [c.p_max.midpoint() for c in checks]
        ax.loglog(sizes, curves[f"{name} p_max"], marker, ls="", label=f"{name}: p_max")
        if name == "dip":
            curves["dip p_min"] = [c.p_min.midpoint() for c in checks]
            ax.loglog(sizes, curves["dip p_min"], marker, ls="", mfc="none", label="dip: p_min")
    ax.set(xlabel="n", ylabel="coefficient", title=f"certified coefficients, δ = {spread:g}, θ = 1")
    ax.legend(fontsize=8)
    return curves


def plot_length_scaling(ax: Any, reports: Sequence[Any]) -> None:
    """Plot the spike's ``p_max`` under ``β = s·log n`` for T10 regime reports.

    Parameters
    ----------
    ax
        A matplotlib axes.
    reports
        :class:`~softmax_dispersion.numerics.checks.LengthScalingReport` objects.

    Notes
    -----
    On the spike ``p_max = n^{sδ}/(n^{sδ} + n − 1)``, which tends to 1, 1/2 or 0 as
    ``sδ`` is above, at or below 1 (T10).
    """
    for report in reports:
        ax.semilogx(
            [row.n for row in report.rows],
            [row.p_max.midpoint() for row in report.rows],
            "o-",
            label=f"sδ = {report.product} → {report.limit}",
        )
    ax.set(
        xlabel="n",
        ylabel="p_max of the spike",
        ylim=(-0.02, 1.02),
        title="T10: length scaling β = s·log n",
    )
    # The curves settle at 1, 1/2 and 0: the band between 1/2 and 1 on the right is free.
    ax.legend(fontsize=8, loc="center right", bbox_to_anchor=(1.0, 0.75))
