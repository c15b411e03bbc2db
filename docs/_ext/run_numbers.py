"""Numbers the empirical pages quote, read from the committed run folders at build time.

``empirical.md`` and ``pretrained.md`` discuss the runs in ``empirical-run/``,
``empirical-run-bounded/`` and ``pretrained-run/``.  Every number their prose quotes is a
MyST substitution (``{{ quick_total_s }}``) computed here from the run's own files
(``metrics.json``, ``summary.json``, ``heads.json``) — run times and load averages
included, as each run records them — so that the text cannot drift from the run it
describes.  A missing file or key stops the build.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ExtensionError

QUICK, BOUNDED, PRETRAINED = "empirical-run", "empirical-run-bounded", "pretrained-run"


def _read(folder: Path, name: str) -> Any:
    path = folder / name
    if not path.is_file():
        raise ExtensionError(f"run_numbers: {path} is missing")
    return json.loads(path.read_text(encoding="utf-8"))


def _range(values: Sequence[float], fmt: str = ".1f", sep: str = "–") -> str:
    low, high = format(min(values), fmt), format(max(values), fmt)
    return low if low == high else f"{low}{sep}{high}"


def _powers(log10s: Sequence[float], fmt: str) -> str:
    """``10^a–10^b`` for the range of the exponents."""
    return f"10^{format(min(log10s), fmt)}–10^{format(max(log10s), fmt)}"


def _interval_mid(pair: Mapping[str, str]) -> float:
    return (float(pair["lower"]) + float(pair["upper"])) / 2


def _run_facts(prefix: str, metrics: Mapping[str, Any]) -> dict[str, str]:
    seconds, load = metrics["seconds"], metrics["load_average"]
    return {
        f"{prefix}_total_s": f"{seconds['total']:.0f}",
        f"{prefix}_train_s": f"{seconds['train']:.0f}",
        f"{prefix}_certify_s": f"{seconds['certify']:.0f}",
        f"{prefix}_evaluate_s": f"{seconds['evaluate']:.0f}",
        f"{prefix}_cpu_s": f"{seconds['cpu']:.0f}",
        f"{prefix}_threads": str(metrics["threads"]),
        f"{prefix}_load_start": f"{load['start'][0]:.1f}",
        f"{prefix}_load_end": f"{load['end'][0]:.1f}",
    }


def _certified(summary: Mapping[str, Any], name: str) -> tuple[list[float], list[Any]]:
    lines = summary["certificates"][name]
    return [_interval_mid(line["delta"]) for line in lines], lines


def _t13_cells(summary: Mapping[str, Any], name: str) -> dict[int, Mapping[str, Any]]:
    return {int(n): cell for n, cell in summary["typical"][name].items()}


def _worst_outside(cells: Mapping[int, Mapping[str, Any]]) -> str:
    n, cell = max(cells.items(), key=lambda item: item[1]["outside_sets"])
    return (
        f"{cell['outside_sets']} of {cell['sets']} sets ({100 * cell['outside']:.1f}%) at "
        f"n = {n}, where {cell['allowed']} would still be consistent with η"
    )


def quick_numbers(folder: Path) -> dict[str, str]:
    """The quick preset's run: times, certified spreads, T13 and its power."""
    metrics, summary = _read(folder, "metrics.json"), _read(folder, "summary.json")
    out = _run_facts("quick", metrics)
    deltas, lines = _certified(summary, "softmax")
    out["quick_softmax_delta"] = _range(deltas)
    out["quick_softmax_n_half"] = _powers(
        [math.log10(float(line["n_half"]["upper"])) for line in lines], ".1f"
    )
    cells = _t13_cells(summary, "softmax")
    sizes = sorted(cells)
    picks = [sizes[0], sizes[len(sizes) // 2], sizes[-1]]
    out["quick_t13_against"] = ", ".join(
        f"{cells[n]['mean_field']:.3f} against {cells[n]['measured']:.3f} at n = {n}" for n in picks
    )
    out["quick_t13_outside"] = _worst_outside(cells)
    typical = next(c for c in summary["results"] if c["name"].startswith("softmax: typical sets"))
    out["quick_power_typical"] = _power(typical["power"])
    out["quick_power"] = _power(summary["t13_power"]["softmax"]["power"])
    gap = {float(lead): cells for lead, cells in summary["gap_sets"]["softmax"].items()}
    high, low = max(gap), min(gap)
    last = max(int(n) for n in gap[low])
    out["quick_gap_high"] = (
        f"{gap[high][str(last)]['measured']:.3f} up to n = {last}" if str(last) in gap[high] else ""
    )
    out["quick_gap_lead_high"] = f"{high:g}"
    out["quick_gap_lead_low"] = f"{low:g}"
    cell = gap[low][str(last)]
    out["quick_gap_low"] = (
        f"{cell['measured']:.3f} at n = {last}, against a prediction of {cell['mean_field']:.3f}"
    )
    out["quick_results"] = str(len(summary["results"]))
    out["quick_consistency"] = str(len(summary["consistency"]))
    return out


def _power(power: Mapping[str, Mapping[str, float | None]]) -> str:
    """``I 10% low and 10% high`` (``I`` only: the headline error)."""
    sides = []
    for side, word in (("below", "low"), ("above", "high")):
        value = power["I"][side]
        sides.append(
            f"{100 * value:.0f}% {word}" if value is not None else f"none up to 25% {word}"
        )
    return " and ".join(sides)


def bounded_numbers(folder: Path) -> dict[str, str]:
    """The bounded preset's run: certified spreads and sizes, worst sets, crossings, T13."""
    metrics, summary = _read(folder, "metrics.json"), _read(folder, "summary.json")
    out = _run_facts("bounded", metrics)
    names = summary["normalisers"]
    for name in names:
        deltas, lines = _certified(summary, name)
        out[f"{name}_delta"] = _range(deltas, ".2f")
        out[f"{name}_n_half"] = _range(
            [int(line["n_half"]["least_size_exact"]) for line in lines], "d"
        )
        out[f"{name}_n_half_enclosure"] = _range(
            [float(line["n_half"]["lower"]) for line in lines]
            + [float(line["n_half"]["upper"]) for line in lines]
        )
        by_size = summary["worst_sets"][name]["by_size"]
        out[f"{name}_worst_ratio"] = f"{min(c['ratio_min'] for c in by_size.values()):.4f}"
        crossings = summary["dispersion"][name]
        first = crossings[0]
        out[f"{name}_crossing"] = (
            f"{first['measured']} against [{first['certified_lower']:.2f}, "
            f"{first['certified_upper']:.2f}]"
        )
        out[f"{name}_crossings_agree"] = (
            f"{sum(line['agrees'] for line in crossings)} of {len(crossings)}"
        )
        cells = _t13_cells(summary, name)
        out[f"{name}_t13_outside"] = _worst_outside(cells)
        out[f"{name}_power"] = _power(summary["t13_power"][name]["power"])
        accuracy = summary["accuracy"][name]
        sizes = sorted(int(n) for n in accuracy)
        out[f"{name}_accuracy_first"] = f"{accuracy[str(sizes[0])]['mean']:.0f}"
        out[f"{name}_accuracy_last"] = f"{accuracy[str(sizes[-1])]['mean']:.0f}"
        out[f"{name}_display"] = summary["display_names"][name]
    out["bounded_sizes_first"] = str(min(int(n) for n in summary["sizes"]))
    out["bounded_sizes_last"] = str(max(int(n) for n in summary["sizes"]))
    return out


def pretrained_numbers(folder: Path) -> dict[str, str]:
    """The pretrained probe's run: both certificates, the brackets, the search, the times."""
    result = _read(folder, "heads.json")
    heads = result["heads"]
    first = [r for r in heads if r["layer"] == 0]
    later = [r for r in heads if r["layer"] > 0]

    def column(records: Sequence[Mapping[str, Any]], key: str) -> list[float]:
        return [float(r[key]) for r in records]

    out = {
        "pre_ln_delta": _range(column(heads, "delta_star_upper"), ".0f"),
        "pre_ln_n_half": _powers(column(heads, "log10_n_star_half"), ".0f"),
        "pre_witness": _range(column(heads, "witness_ratio"), ".3f"),
        "pre_l0_token": _range(column(first, "token_upper")),
        "pre_l0_ratio": _range(column(first, "bracket_ratio"), ".3f"),
        "pre_l0_n_half": _powers(column(first, "token_log10_n_star_half"), ".1f"),
        "pre_l0_shrink": _range(
            [float(r["delta_star_upper"]) / float(r["token_upper"]) for r in first]
        ),
        "pre_all_ratio_max": f"{max(column(heads, 'bracket_ratio')):.1f}",
    }
    if later:
        out["pre_later_ratio"] = _range(column(later, "bracket_ratio"))
        out["pre_later_found"] = _range(column(later, "found_delta"))
        out["pre_box"] = _range(
            [float(r["token_box_bound"]) for r in later if r["token_box_bound"]], ".0f"
        )
        later_sets = {r["token_set"] for r in later}
        out["pre_later_sets"] = ", ".join(sorted(later_sets))
    out["pre_first_box_gap"] = f"{result['token_bounds']['first_box_gap']:.2f}"
    search = result["search"]
    out["pre_search_s"] = f"{search['seconds']:.0f}"
    out["pre_search_budget_s"] = f"{search['seconds_budget']:.0f}"
    out["pre_search_evaluated"] = str(search["evaluated"])
    out["pre_search_rounds"] = str(search["rounds"])
    out["pre_search_refine_rounds"] = str(search["refine_rounds"])
    out["pre_beats_random"] = str(
        sum(r["search_delta"] > r["measured_max_by_input"]["random"] for r in heads)
    )
    out["pre_search_margin"] = (
        f"{min(r['search_delta'] / r['measured_max_by_input']['random'] for r in heads):.3f}"
    )
    out["pre_heads"] = str(len(heads))
    for layer, head in ((0, 2), (5, 11)):
        record = next(r for r in heads if (r["layer"], r["head"]) == (layer, head))
        key = f"pre_head_{layer}_{head}"
        out[key] = f"{record['found_delta']:.1f}"
        out[f"{key}_source"] = record["found_source"]
        out[f"{key}_random"] = f"{record['measured_max_by_input']['random']:.1f}"
        out[f"{key}_token"] = f"{float(record['token_upper']):.1f}"
    seconds, machine = result["seconds"], result["machine"]
    out["pre_total_s"] = f"{seconds['total']:.0f}"
    out["pre_phases"] = ", ".join(
        f"{name.replace('_', ' ')} {value:.0f} s"
        for name, value in seconds.items()
        if name != "total"
    )
    out["pre_load"] = " / ".join(f"{v:.1f}" for v in machine["load_average"])
    out["pre_threads"] = str(machine["torch_threads"])
    return out


SOURCES: dict[str, Callable[[Path], dict[str, str]]] = {
    QUICK: quick_numbers,
    BOUNDED: bounded_numbers,
    PRETRAINED: pretrained_numbers,
}
"""Each run folder and the function that reads its numbers."""


def numbers(docs: Path) -> dict[str, str]:
    """Every substitution, from the run folders under ``docs``."""
    out: dict[str, str] = {}
    for folder, read in SOURCES.items():
        try:
            out |= read(docs / folder)
        except (KeyError, ValueError, StopIteration, TypeError) as error:
            raise ExtensionError(f"run_numbers: {folder}: {error!r}") from error
    return out


def _add(app: Sphinx, config: Config) -> None:
    config.myst_substitutions = {**config.myst_substitutions, **numbers(Path(app.srcdir))}


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("config-inited", _add)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
