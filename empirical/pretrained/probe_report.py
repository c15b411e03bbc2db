"""The probe's report: ``report.md`` and its figures, from ``heads.json`` and ``measurements.json``.

Every number in the report is read from the run's data; nothing is typed in.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from softmax_dispersion.empirical.pretrained import figures
from softmax_dispersion.empirical.pretrained.token_bounds import SETS as SETS_TEXT

__all__ = ["FIGURES", "render_markdown", "rerender", "summary_lines", "write_report"]

FIGURES: dict[str, str] = {
    "delta_histograms.png": "Row spreads δ per layer on the text (every head and size pooled)",
    "p_max.png": "Top weight against n with T1's bound",
    "entropy.png": "Entropy against n with T6's floor",
    "n_star.png": "Certified log10 n*(½) over tokens per head",
    "tightness.png": "Certificate over tokens over the largest spread found on tokens",
}
"""The figures a report draws, by file name, with their captions."""


def write_report(
    out: Path | str,
    result: Mapping[str, Any],
    measurements: Mapping[str, Any],
    *,
    draw_figures: bool = True,
) -> list[Path]:
    """Write ``report.md`` (and, unless ``draw_figures`` is False, ``figures/*.png``).

    Returns
    -------
    list of Path
        The files written.
    """
    out = Path(out)
    written = []
    if draw_figures:
        written.extend(_draw(out / "figures", result, measurements))
    report = out / "report.md"
    report.write_text(render_markdown(result, measurements))
    written.append(report)
    return written


def rerender(run_dir: Path | str) -> list[Path]:
    """Rewrite a run folder's report and figures from its JSON files."""
    run_dir = Path(run_dir)
    result = json.loads((run_dir / "heads.json").read_text())
    measurements = json.loads((run_dir / "measurements.json").read_text())
    return write_report(run_dir, result, measurements)


def _draw(folder: Path, result: Mapping[str, Any], measurements: Mapping[str, Any]) -> list[Path]:
    return [
        figures.delta_histogram_figure(result, measurements, folder / "delta_histograms.png"),
        figures.p_max_figure(measurements, folder / "p_max.png"),
        figures.entropy_figure(measurements, folder / "entropy.png"),
        figures.n_star_figure(result, folder / "n_star.png"),
        figures.tightness_figure(result, folder / "tightness.png"),
    ]


def _range(values: list[float], fmt: str = ".1f") -> str:
    return f"{format(min(values), fmt)}–{format(max(values), fmt)}"


def _spread(values: list[float], fmt: str = ".2f") -> str:
    """``min / median / max`` of the values."""
    return " / ".join(format(v, fmt) for v in (min(values), float(np.median(values)), max(values)))


def _by_layer(result: Mapping[str, Any]) -> dict[int, list[Mapping[str, Any]]]:
    layers: dict[int, list[Mapping[str, Any]]] = {}
    for record in result["heads"]:
        layers.setdefault(int(record["layer"]), []).append(record)
    return layers


SET_NAMES = {"tokens": "every token input", "box": "box", "layernorm": "LayerNorm set"}
"""How the tables name the set a certificate over tokens covers (see ``token_bounds``)."""


def _layer_table(result: Mapping[str, Any]) -> list[str]:
    lines = [
        "| layer | δ* over LayerNorm outputs | certified over tokens (set) | best found on "
        "tokens | bracket ratio min / median / max | log10 n*(½) over tokens | witness / δ* |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for layer, records in _by_layer(result).items():

        def column(key: str, records: list[Mapping[str, Any]] = records) -> list[float]:
            return [float(r[key]) for r in records]

        sets = ", ".join(sorted({SET_NAMES[r["token_set"]] for r in records}))
        lines.append(
            f"| {layer} | {_range(column('delta_star_upper'), '.0f')} "
            f"| {_range(column('token_upper'), '.1f')} ({sets}) "
            f"| {_range(column('found_delta'))} "
            f"| {_spread(column('bracket_ratio'))} "
            f"| {_range(column('token_log10_n_star_half'), '.1f')} "
            f"| {_range(column('witness_ratio'), '.3f')} |"
        )
    return lines


def _head_table(result: Mapping[str, Any]) -> list[str]:
    lines = [
        "| head | δ* (LayerNorm set) | over tokens (set) | n*(½) over tokens | best found "
        "(where) | ratio | random | search | median δ (text) | T1 < ½ at |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in result["heads"]:
        below = r["t1_below_half_at"]
        lines.append(
            f"| {r['layer']}.{r['head']} | {float(r['delta_star_upper']):.2f} "
            f"| {float(r['token_upper']):.2f} ({SET_NAMES[r['token_set']]}) "
            f"| {r['token_n_star_half']} "
            f"| {r['found_delta']:.2f} ({r['found_source']}) "
            f"| {r['bracket_ratio']:.3f} "
            f"| {r['measured_max_by_input']['random']:.2f} | {r['search_delta']:.2f} "
            f"| {r['measured_median_delta']:.2f} "
            f"| {below if below is not None else '–'} |"
        )
    return lines


def _checks(result: Mapping[str, Any]) -> list[str]:
    checks = result["checks"]
    heads = result["heads"]
    allowance = result["allowance"]

    def count(kind: str) -> int:
        return sum(bool(r["violations"][kind]) for r in heads)

    mark = {True: "✓", False: "✗"}
    token_bounds = result["config"].get("token_bounds", False)
    found_line = (
        "every spread found on tokens (text, repeated, random, the search, layer 0's "
        "certificate triples) ≤ the head's certificate over tokens"
        if token_bounds
        else "every spread found on tokens ≤ δ* (no certificate over tokens in this run)"
    )
    lines = [
        "| check | kind | result |",
        "| --- | --- | --- |",
        f"| {found_line} (float32 allowance {allowance['float32_relative']:.2g} × δ*) "
        f"| **result** | {mark[count('found') == 0]} {count('found')} of {len(heads)} heads "
        "exceed |",
        f"| witness LayerNorm outputs, head evaluated from its live weights, ≤ δ* (allowance "
        f"{allowance['witness_relative']:.0e}) | **result** | "
        f"{mark[count('witness') == 0]} {count('witness')} of {len(heads)} heads exceed |",
        f"| softmax of the captured logits equals a separate eager pass's `output_attentions` "
        f"| consistency | {mark[checks['capture_passed']]} largest difference "
        f"{checks['capture_max_abs_error']:.2g} |",
    ]
    if checks.get("triples_checked"):
        lines.append(
            "| the model's logit difference between each layer-0 head's two certified keys "
            "equals the certificate's own evaluation (the forward pass is the certified "
            "function) | consistency | "
            f"{mark[checks['triple_disagreements'] == 0]} {checks['triple_disagreements']} of "
            f"{checks['triples_checked']} disagree |"
        )
    if token_bounds:
        lines.append(
            "| every spread found ≤ δ* over LayerNorm outputs (implied by the first check: "
            "each certificate over tokens is at most δ*) | consistency | "
            f"{mark[checks['layernorm_violations'] == 0]} {checks['layernorm_violations']} of "
            f"{len(heads)} heads exceed |"
        )
    lines += [
        f"| T1 on every row with the row's own δ | consistency | "
        f"{mark[checks['t1_row_violations'] == 0]} {checks['t1_row_violations']} violations in "
        f"{checks['rows_checked']} rows |",
        f"| T6's entropy floor on every row | consistency | "
        f"{mark[checks['t6_row_violations'] == 0]} {checks['t6_row_violations']} violations |",
    ]
    return lines


def _sets(result: Mapping[str, Any]) -> list[str]:
    sets = result["token_bounds"]["sets"]
    lines = ["What each certificate covers (the set of inputs its bound holds on):", ""]
    lines.append(f"- **δ\\* (LayerNorm set)**: {SETS_TEXT['layernorm']}.")
    for kind, text in sets.items():
        if kind != "layernorm":
            lines.append(f"- **over tokens, {SET_NAMES[kind]}**: {text}.")
    return lines


def _reading(result: Mapping[str, Any], measurements: Mapping[str, Any]) -> list[str]:
    heads = result["heads"]
    sizes = measurements["sizes"]
    stars = [float(r["delta_star_upper"]) for r in heads]
    log10s = [float(r["log10_n_star_half"]) for r in heads]
    witness = [float(r["witness_ratio"]) for r in heads]
    text = measurements["kinds"]["text"]
    last = str(sizes[-1])
    bound = np.array(text[last]["t1_bound"]["median"])
    rows_below = np.array(text[last]["rows_t1_below_half"])
    below = [r for r in heads if r["t1_below_half_at"] is not None]
    medians = np.array(text[last]["delta"]["median"])
    first = [r for r in heads if r["layer"] == 0]
    later = [r for r in heads if r["layer"] > 0]
    lines = [
        f"- **Certified over every LayerNorm output.** Every head's logit spread is at most "
        f"δ* = {min(stars):.0f}–{max(stars):.0f} for any hidden state, so by T4 from "
        f"n*(½) = 10^{min(log10s):.0f}–10^{max(log10s):.0f} positions on no input whatsoever "
        "can a head put half its weight on one position. Three LayerNorm outputs built from "
        f"the head's top singular direction reach {min(witness):.3f}–{max(witness):.3f} of "
        "δ*: the bound is what a head can do on arbitrary LayerNorm outputs, not on text.",
    ]
    if result["config"].get("token_bounds"):
        ratios0 = [float(r["bracket_ratio"]) for r in first]
        upper0 = [float(r["token_upper"]) for r in first]
        n0 = [float(r["token_log10_n_star_half"]) for r in first]
        shrink = [float(r["delta_star_upper"]) / float(r["token_upper"]) for r in first]
        lines.append(
            f"- **Layer 0, over every token input.** Enumerating every token × position × "
            f"token type by branch and bound in certified arithmetic bounds the layer-0 heads "
            f"by {min(upper0):.1f}–{max(upper0):.1f} ({min(shrink):.1f}–{max(shrink):.1f} times "
            f"below δ*); the spreads found on token sequences reach within a factor "
            f"{min(ratios0):.3f}–{max(ratios0):.3f} of these certificates, so the largest "
            f"spread text can produce in layer 0 is known to that factor, and by T4 no "
            f"input lets a layer-0 head put half its weight on one position from "
            f"n*(½) = 10^{min(n0):.1f}–10^{max(n0):.1f} on."
        )
        boxes = result["token_bounds"]
        box_bounds = [float(r["token_box_bound"]) for r in later if r["token_box_bound"]]
        if later:
            ratios = [float(r["bracket_ratio"]) for r in later]
            lines.append(
                "- **Later layers: boxes say nothing.** Layer 0's input box already holds a "
                f"constant vector (its largest lower end exceeds its smallest upper end by "
                f"{boxes['first_box_gap']:.2f} ≤ 0), so a residual sum in the box can have "
                "variance 0 and each LayerNorm's output box is its whole range; the box bounds "
                f"on later heads ({min(box_bounds):.0f}–{max(box_bounds):.0f}) are far above "
                "δ*, which stands as their certificate over tokens. Their brackets "
                f"[found, δ*] are {min(ratios):.1f}–{max(ratios):.1f} wide: the spreads text "
                "reaches there are known only to that factor."
            )
    search = result["search"]
    beats = sum(r["search_delta"] > r["measured_max_by_input"]["random"] for r in heads)
    margin = min(r["search_delta"] / r["measured_max_by_input"]["random"] for r in heads)
    refine = search.get("refine_rounds")
    lines += [
        f"- **The search.** In {search['seconds']:.0f} s ({search['evaluated']} sequences, "
        f"{search['rounds']} rounds of gradient-guided swaps at n = 32"
        + (
            f", then {refine} rounds on the heads weakest against the random inputs, each "
            "from the best sequence it knows (its own or one of the inputs above, at its "
            "length)"
            if refine is not None
            else ""
        )
        + f") it found a larger spread than every random sequence in {beats} of "
        f"{len(heads)} heads (the smallest ratio search / random: {margin:.4f}); its "
        "stages: " + ", ".join(search["stages"]) + ".",
        f"- **On real text, T1 binds.** At n = {last} the median row's T1 bound is "
        f"{np.median(bound):.2f} over all heads (per layer "
        + ", ".join(f"{np.median(bound[i]):.2f}" for i in range(bound.shape[0]))
        + f"); row spreads have medians {np.min(medians):.1f}–{np.max(medians):.1f}. "
        f"In {len(below)} of {len(heads)} heads the median row's bound falls below ½ within "
        f"{last} positions; over all heads {100 * float(rows_below.mean()):.0f}% of the rows at "
        f"n = {last} have a bound below ½: no weight in them can reach ½.",
    ]
    return lines


def summary_lines(result: Mapping[str, Any]) -> list[str]:
    """The probe's checks and headline numbers, as lines of text."""
    heads = result["heads"]
    checks = result["checks"]
    stars = [float(r["delta_star_upper"]) for r in heads]
    log10s = [float(r["log10_n_star_half"]) for r in heads]
    lines = [
        f"{len(heads)} heads certified over LayerNorm outputs: δ* {min(stars):.0f}–"
        f"{max(stars):.0f}, n*(½) 10^{min(log10s):.0f}–10^{max(log10s):.0f}",
    ]
    for layer, records in _by_layer(result).items():
        ratios = [float(r["bracket_ratio"]) for r in records]
        lines.append(
            f"layer {layer}: certified over tokens "
            f"{_range([float(r['token_upper']) for r in records])}, found "
            f"{_range([float(r['found_delta']) for r in records])}, bracket ratio "
            f"{_spread(ratios)}"
        )
    lines += [
        f"{checks['certificate_violations']} certificate violations; capture: largest "
        f"|softmax(captured) − output_attentions| {checks['capture_max_abs_error']:.2g}; "
        f"T1/T6 per row (consistency): {checks['t1_row_violations']}/"
        f"{checks['t6_row_violations']} violations in {checks['rows_checked']} rows",
    ]
    return lines


def render_markdown(result: Mapping[str, Any], measurements: Mapping[str, Any]) -> str:
    """The report as markdown, every number read from ``result`` and ``measurements``."""
    model, corpus, config = result["model"], result["corpus"], result["config"]
    seconds, machine = result["seconds"], result["machine"]
    search = result["search"]
    sequences = result["sequences"]
    kinds = ", ".join(
        f"{kind} ({sum(counts.values())} sequences)" for kind, counts in sequences.items()
    )
    lines = [
        "# Pretrained heads: all-MiniLM-L6-v2",
        "",
        f"Model: `{model['name']}` ({model['layers']} layers × {model['heads']} heads, width "
        f"{model['hidden']}, head dimension {model['head_dim']}, {model['max_positions']} "
        f"positions), read offline from `{Path(model['archive']).name}` of the installed "
        "weights package.",
        f"Text: {corpus['name']}: {corpus['words']} words, {corpus['tokens']} tokens. "
        f"Inputs at n = {', '.join(map(str, config['sizes']))}: {kinds}. "
        f"Search: {search['seconds']:.0f} s of a {search['seconds_budget']:.0f} s budget, "
        f"{search['evaluated']} sequences.",
        "Run time: "
        + ", ".join(f"{name} {value:.0f} s" for name, value in seconds.items() if name != "total")
        + f"; {seconds['total']:.0f} s in all, on {machine['cpu_count']} CPU cores, "
        f"{machine['torch_threads']} torch threads, load average "
        f"{' / '.join(str(v) for v in machine['load_average'])} at the end.",
        "",
        "## Checks",
        "",
        *_checks(result),
        "",
        f"**{'PASSED' if result['checks']['passed'] else 'FAILED'}**",
        "",
        "## What it shows",
        "",
        *_reading(result, measurements),
        "",
        *_sets(result),
        "",
        "## Per layer (ranges over the layer's heads)",
        "",
        *_layer_table(result),
        "",
    ]
    for name, caption in FIGURES.items():
        lines += [f"![{caption}](figures/{name})", ""]
    lines += [
        "## Every head",
        "",
        "δ* bounds any row's logit spread over every LayerNorm output; 'over tokens' bounds "
        "it over the set named (above); n*(½) = 1 + exp(bound) (T4 at ε = ½). 'best found': "
        "the largest spread the model produced on a sequence of tokens, and where; 'ratio': "
        "the certificate over tokens divided by it (the bracket's width). 'random' and "
        "'search': the largest spread of random sequences and of the sequences the search "
        "made (it may start from the measured inputs, which do not count as found by it). "
        "'T1 < ½ at': the smallest n measured at which the head's median text row has T1 "
        "bound below ½.",
        "",
        *_head_table(result),
        "",
    ]
    return "\n".join(lines)
