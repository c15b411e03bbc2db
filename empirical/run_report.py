"""A run folder's human-readable results: ``report.md``, ``metrics.csv`` and figures.

Everything is rendered from the run's ``metrics.json`` data, so a report can be rebuilt
at any time without rerunning the experiment, and without torch.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from softmax_dispersion.empirical.statistics import (
    ADVERSARIAL_RATIO,
    PAPER_ACCURACY,
    PAPER_SOURCE,
    metric_number,
    normaliser_info,
    summarise,
)
from softmax_dispersion.empirical.typical import LEVELS
from softmax_dispersion.empirical.verdicts import T13_TEST_LEVEL, t13_test

__all__ = ["ROW_COLUMNS", "accuracy_table", "render_markdown", "write_report", "write_rows_csv"]

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
    "t13_sets",
    "t13_outside",
    "t13_mean_field_mean",
    "t13_lower_mean",
    "t13_upper_mean",
    "t13_bound_max",
)
"""The columns of ``metrics.csv``, in order (any others found follow, sorted)."""

# A bound this close to 1 says nothing about the head: e^δ is far above n.
_LOOSE_BOUND = 0.9
_MARKS = {True: "✓", False: "✗", None: "–"}


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
        return {str(key): _strict_json(v) for key, v in value.items()}
    if isinstance(value, list | tuple):
        return [_strict_json(v) for v in value]
    return value


def _csv_cell(value: Any) -> Any:
    return "" if value is None else value


def write_rows_csv(rows: Sequence[Mapping[str, Any]], path: Path) -> Path:
    """Write one CSV line per metrics row, columns as :data:`ROW_COLUMNS`.

    NaN is written as ``nan`` and JSON null as an empty cell; nested data (T13's counts
    per level and planted law) stays in ``metrics.json``.
    """
    nested = {key for row in rows for key, value in row.items() if isinstance(value, Mapping)}
    extra = sorted({key for row in rows for key in row} - set(ROW_COLUMNS) - nested)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=[*ROW_COLUMNS, *extra], restval="")
        writer.writeheader()
        for row in rows:
            writer.writerow(
                {key: _csv_cell(value) for key, value in row.items() if key not in nested}
            )
    return path


def _range(pair: Any) -> str:
    if isinstance(pair, list | tuple) and len(pair) == 2:
        return f"{pair[0]}–{pair[1]}"
    return "?" if pair is None else str(pair)


def accuracy_table(summary: Mapping[str, Any], sizes: list[int]) -> str:
    """The summary's accuracies, mean ± standard error per size, as a plain-text table."""
    names = summary.get("display_names", {})
    lines = [f"{'accuracy (%)':<24}" + "".join(f"{n:>12}" for n in sizes)]
    for name, by_size in summary["accuracy"].items():
        cells = []
        for n in sizes:
            cell = by_size.get(str(n), by_size.get(n))
            if not cell or cell["mean"] is None:
                cells.append("")
            elif cell["se"] is None:
                cells.append(f"{cell['mean']:6.1f}")
            else:
                cells.append(f"{cell['mean']:6.1f} ±{cell['se']:4.1f}")
        lines.append(f"{names.get(name, name):<24}" + "".join(f"{c:>12}" for c in cells))
    return "\n".join(lines)


class _Names:
    """Display names from the run's own record (one source: the normaliser classes)."""

    def __init__(self, metrics: Mapping[str, Any]) -> None:
        self.info = normaliser_info(metrics)

    def __call__(self, name: str) -> str:
        return str(self.info.get(name, {}).get("display_name", name))


def _load(value: Any) -> str:
    if isinstance(value, list | tuple) and value:
        return f"{float(value[0]):.1f}"
    return "?"


def _header(metrics: Mapping[str, Any], summary: Mapping[str, Any], name: _Names) -> list[str]:
    config = metrics.get("config", {})
    versions = metrics.get("versions", {})
    seconds = metrics.get("seconds", {})
    sizes = summary["sizes"] or config.get("sizes", [])
    results = summary["results"]
    failed = summary["failed"]
    if failed:
        verdict = f"**Result: FAILED** — {len(failed)} check(s) failed: " + "; ".join(failed) + "."
    elif results:
        verdict = (
            f"**Result: passed** — {len(results)} checks that could have failed passed "
            f"(and {len(summary['consistency'])} consistency checks)."
        )
    else:
        verdict = "**Result: no result checks were measured** (only consistency checks)."
    load = metrics.get("load_average", {})
    return [
        "# Max retrieval: dispersion of trained attention heads",
        "",
        verdict,
        "",
        f"- preset: {metrics.get('preset') or 'custom'} — "
        f"{metrics.get('source', 'custom settings')}",
        f"- device: {metrics.get('device', 'unknown')}, {metrics.get('threads', '?')} torch "
        f"thread(s); load average {_load(load.get('start'))} at the start, "
        f"{_load(load.get('end'))} at the end",
        f"- normalisers: {', '.join(name(n) for n in summary['normalisers'])}",
        f"- seeds: {config.get('seeds', '?')}",
        f"- sizes: {', '.join(str(n) for n in sizes)}",
        f"- training: {config.get('steps', '?')} steps of batch {config.get('batch', '?')}, "
        f"set sizes {_range(config.get('train_sizes'))}, width {config.get('width', '?')}",
        f"- test sets per size and seed: {config.get('test_sets', '?')}",
        f"- total time: {_fmt(seconds.get('total'), '.0f')} s "
        f"(training {_fmt(seconds.get('train'), '.0f')} s, certifying "
        f"{_fmt(seconds.get('certify'), '.0f')} s, evaluation "
        f"{_fmt(seconds.get('evaluate'), '.0f')} s); this process's CPU time "
        f"{_fmt(seconds.get('cpu'), '.0f')} s",
        f"- torch {versions.get('torch', '?')}, "
        f"softmax_dispersion {versions.get('softmax_dispersion', '?')}",
    ]


def _checks_section(summary: Mapping[str, Any]) -> list[str]:
    results = summary["results"]
    consistency = summary["consistency"]
    lines = ["## Results: checks that could have failed", ""]
    if results:
        lines += [
            "Each of these compares a prediction made before the measurement (a head's "
            "certified logit range against the items found and sampled, or T13 from its "
            "logit map alone) with what the trained model does, and its outcome is not "
            "determined by the quantities compared; each has a test that plants a bug in a "
            "trained head (scaled weights, a missing β, a flattened head, a stale "
            "certificate, a wrong law) and sees it fail. T13's power: the smallest error in "
            "the law — its I, its β, its band's edges — that these sets and sizes would have "
            "detected, found by holding the same sets to planted laws off by 5–25%.",
            "",
            _table(
                ["", "check", "detail", "fails on"],
                [[_MARKS[c["passed"]], c["name"], c["detail"], c["fails_on"]] for c in results],
                align="l",
            ),
            "",
        ]
    else:
        lines += ["No check that could fail was measured in this run.", ""]
    lines += [
        "## Consistency checks",
        "",
        "These hold for any correct forward pass whatever the model learned: T1 and T10's "
        "floor recomputed from each row's own logits; the worst sets, whose top weight any "
        "correct softmax puts at T1's bound at the certified δ* (every ratio is at least "
        "e^−(width of δ*'s enclosure)) and whose crossing below ½ the certificate fixes "
        "(⌊1 + e^(lower δ*)⌋ + 1); the run-length engine on the certificate's own sizes. "
        "They check that the forward pass computes what was certified; a failure would be "
        "a bug in the bound, the check or the normaliser, and a pass says nothing about "
        "dispersion.",
        "",
        _table(
            ["", "check", "detail"],
            [[_MARKS[c["passed"]], c["name"], c["detail"]] for c in consistency],
            align="l",
        ),
    ]
    return lines


def _certificates_section(summary: Mapping[str, Any], name: _Names) -> list[str]:
    certificates = summary["certificates"]
    if not certificates:
        return []
    rows = []
    seen: set[tuple[str, ...]] = set()
    for normaliser, lines in certificates.items():
        for line in lines:
            half, hundredth = line["n_half"], line["n_hundredth"]
            key = (normaliser, str(line["seed"]))
            if key in seen:
                continue
            seen.add(key)
            rows.append(
                [
                    name(normaliser),
                    str(line["seed"]),
                    f"[{_sig(line['delta']['lower'])}, {_sig(line['delta']['upper'])}]",
                    f"{line['relative_gap']:.1e}",
                    _size(half),
                    _size(hundredth),
                    line["beta"],
                    _item(line["argmax"]),
                    _item(line["argmin"]),
                    _MARKS[line["sampled_inside"]],
                    f"{line['boxes']} / {line['seconds']:.1f} s",
                ]
            )
    return [
        "## Certified heads (Theorem 2.2 on the trained weights)",
        "",
        "Each head's logit is a function of one item (priority in [0, 1], class), so its "
        "spread over every possible set is δ* = max − min of that function over the item "
        "domain. Branch and bound on priority intervals, in arb ball arithmetic (outward "
        "rounding), encloses δ* to within the stated relative gap of the two best items "
        "found; T4 then gives the dispersion sizes n*(ε) = 1 + e^(βδ*)(1 − ε)/ε from which "
        "no weight of any set exceeds ε (the least integer size is shown). 20,000 random "
        "items per class are checked to lie inside the certified range. The same data, "
        "with decimal enclosures, are in `certificates.json`.",
        "",
        _table(
            [
                "head",
                "seed",
                "δ*",
                "gap",
                "n*(½)",
                "n*(1/100)",
                "β",
                "argmax item",
                "argmin item",
                "samples inside",
                "boxes / time",
            ],
            rows,
        ),
    ]


def _sig(decimal: str, digits: int = 6) -> str:
    return format(float(decimal), f".{digits}g")


def _size(level: Mapping[str, Any] | None) -> str:
    if not level:
        return "–"
    least = level.get("least_size")
    if least is not None:
        return str(least)
    return f"{float(level['upper']):.3e}"


def _item(item: Mapping[str, Any]) -> str:
    return f"({float(item['priority']):.4g}, {item['class']})"


def _worst_section(summary: Mapping[str, Any], name: _Names) -> list[str]:
    worst = summary["worst_sets"]
    if not worst:
        return []
    sizes = sorted({n for w in worst.values() for n in w["by_size"]})
    rows = []
    for normaliser, w in worst.items():
        by_size = w["by_size"]
        for key, label, spec in (
            ("p_max_mean", "top weight", ".4g"),
            ("bound_mean", "T1 bound at δ*", ".4g"),
            ("ratio_min", "smallest ratio", ".4f"),
            ("accuracy", "accuracy (decoy set)", ".2f"),
        ):
            rows.append(
                [
                    f"{name(normaliser)}: {label}",
                    *(_fmt((by_size.get(n) or {}).get(key), spec, "") for n in sizes),
                ]
            )
    lines = [
        "## Worst sets through the trained models",
        "",
        "T1's bound is attained by one logit at the maximum and n − 1 at the minimum, so "
        "the worst set any input can produce is the certified argmax item plus n − 1 "
        "copies of the argmin item. Each is run through the real model (every item "
        "through the item MLP, in float32); its top weight must equal T1's bound at β·δ* "
        "within the certificate's gap and T12's float tolerance, and never exceed it. "
        "The accuracy is measured on the argmax item plus n − 1 copies of the lowest item "
        "of another class (the decoy set), so a dispersed head predicts the decoys' class.",
        "",
        _table(["n", *(str(n) for n in sizes)], rows),
        "",
    ]
    for normaliser, w in worst.items():
        if not w["power"]:
            lines.append(
                f"{name(normaliser)}: T1's bound at δ* is within {1e-3:g} of 1 at every tested "
                "size; the run-length engine evaluates the worst set at n*(½) and n*(1/100)."
            )
    dispersion = summary["dispersion"]
    if dispersion:
        lines += [
            "",
            "Measured dispersion size (the least n at which the model's top weight on the "
            "worst set falls below ½, found by doubling and bisection on n, without the "
            "certificate) against the certified n*(½), an enclosure of the real number "
            "1 + e^(βδ*): it agrees when it lies in [⌈lower⌉ − 1, ⌈upper⌉ + 1] (one size "
            "either side for float32 weights within rounding of ½). The certificate table's "
            "n*(½) is ⌈upper⌉, the least size at which every set is certain to disperse.",
            "",
            _table(
                ["head", "seed", "measured", "certified n*(½)", "agrees"],
                [
                    [
                        name(normaliser),
                        str(line["seed"]),
                        str(line["measured"]),
                        f"[{line['certified_lower']:.5g}, {line['certified_upper']:.5g}]",
                        _MARKS[line["agrees"]],
                    ]
                    for normaliser, per_seed in dispersion.items()
                    for line in per_seed
                ],
            ),
        ]
    bounded = [n for n in worst if name.info.get(n, {}).get("logit_bound") is not None]
    if bounded:
        lines += [
            "",
            f"Bounded heads: the target is a ratio ≥ {ADVERSARIAL_RATIO:g} at every n (the "
            "prediction coming true), and accuracy on the decoy sets collapsing once the "
            "top weight falls below ½.",
        ]
    return lines


def _typical_section(summary: Mapping[str, Any], name: _Names) -> list[str]:
    typical = summary["typical"]
    if not typical:
        return []
    sizes = sorted({n for by_size in typical.values() for n in by_size})
    rows = []
    for normaliser, by_size in typical.items():
        for key, label, spec in (
            ("measured", "measured top weight", ".3f"),
            ("mean_field", "1/(1 + (n−1)I)", ".3f"),
            ("lower", "band lower (mean)", ".3f"),
            ("upper", "band upper (mean)", ".3f"),
            ("outside", "fraction outside", ".3f"),
        ):
            rows.append(
                [
                    f"{name(normaliser)}: {label}",
                    *(_fmt((by_size.get(n) or {}).get(key), spec, "") for n in sizes),
                ]
            )
        rows.append(
            [
                f"{name(normaliser)}: sets outside / allowed",
                *(
                    f"{by_size[n]['outside_sets']} / {by_size[n]['allowed']}"
                    if "allowed" in by_size.get(n, {})
                    else ""
                    for n in sizes
                ),
            ]
        )
        rows.append(
            [
                f"{name(normaliser)}: outside at η = " + ", ".join(_levels(by_size)),
                *(_level_counts(by_size.get(n)) for n in sizes),
            ]
        )
        for kind, label in (("I", "I"), ("beta", "β")):
            for factor in ("0.9", "1.1"):
                rows.append(
                    [
                        f"{name(normaliser)}: law with {label} × {factor}",
                        *(_planted_mark(by_size.get(n), kind, factor) for n in sizes),
                    ]
                )
    eta = summary["eta"]
    return [
        "## Typical sets: T13's prediction",
        "",
        "For each test set, condition on its top item (t, c): the other n − 1 items are "
        "i.i.d., priority uniform on [0, t), so the terms exp(β(e(x) − e(t, c))) have a mean "
        "I, a variance and a bound b that are integrals of the head's logit map alone "
        "(quadrature on 2^14 priorities per class; no test set is used). T13 puts the top "
        "weight, with probability ≥ 1 − η, in [1/(1 + (n−1)(I + r)), 1/(1 + (n−1)(I − r)₊)] "
        f"with Bernstein's radius r at level η. T13 holds at every η in (0, 1); the run "
        f"checks η = {eta:g} and the larger levels "
        + ", ".join(f"{level:g}" for level in LEVELS if level > eta)
        + " (narrower bands, which see smaller errors in a law). The target is a rate "
        "outside each band ≤ its η at every size: the count outside (over all seeds' sets) "
        "must not exceed what a one-sided binomial test allows for a rate of η, at family "
        f"level {T13_TEST_LEVEL:g} split over the levels ('allowed' is the η = {eta:g} "
        "count). The rows 'law with I × f' hold the same sets to a planted law whose I (or "
        "β) is off by the factor f: 'caught' where T13's test rejects it at that size, the "
        "measure of the test's power. b > 1 where a lower-priority item of another class "
        "out-scores the top item (the logit map is not monotone across classes); the band "
        "uses the measured b.",
        "",
        _table(["n", *(str(n) for n in sizes)], rows),
        "",
        *_power_lines(summary, name),
    ]


def _power_lines(summary: Mapping[str, Any], name: _Names) -> list[str]:
    """T13's power over every cell the run checks (typical and gap-controlled sets)."""
    power = summary.get("t13_power") or {}
    if not power:
        return []
    lines = [
        "T13's power over every cell this run checks (the sizes above and the "
        "gap-controlled lead × size cells below together: a wrong law fails the run when "
        "any cell rejects it):",
        "",
    ]
    lines += [f"- {name(normaliser)}: {entry['text']}." for normaliser, entry in power.items()]
    return lines


def _levels(by_size: Mapping[int, Mapping[str, Any]]) -> list[str]:
    found = {
        level
        for cell in by_size.values()
        for level in ((cell.get("counts") or {}).get("law") or {})
    }
    return sorted(found, key=float)


def _level_counts(cell: Mapping[str, Any] | None) -> str:
    law = ((cell or {}).get("counts") or {}).get("law") or {}
    return " / ".join(str(law[level]) for level in sorted(law, key=float))


def _planted_mark(cell: Mapping[str, Any] | None, kind: str, factor: str) -> str:
    counts = (cell or {}).get("counts") or {}
    if factor not in (counts.get(kind) or {}):
        return ""
    return "caught" if t13_test({0: counts})["detected"][kind][factor] else "missed"


def _gap_section(summary: Mapping[str, Any], name: _Names) -> list[str]:
    gap_sets = summary["gap_sets"]
    if not gap_sets:
        return []
    lines = [
        "## Gap-controlled sets",
        "",
        "The top priority t ~ U(lead, 1) leads every other item, whose priorities are "
        "U(0, t − lead): the same task with the lead held fixed instead of shrinking like "
        "1/n. T13's prediction integrates the logit map below t − lead.",
        "",
    ]
    for normaliser, by_lead in gap_sets.items():
        sizes = sorted({n for by_size in by_lead.values() for n in by_size})
        rows = []
        for lead, by_size in by_lead.items():
            rows.append(
                [
                    f"lead {lead:g}: accuracy",
                    *(
                        _fmt(100 * (by_size.get(n) or {}).get("accuracy", math.nan), ".1f", "")
                        for n in sizes
                    ),
                ]
            )
            rows.append(
                [
                    f"lead {lead:g}: top weight / 1/(1+(n−1)I)",
                    *(
                        f"{_fmt(c.get('measured'), '.3f')} / {_fmt(c.get('mean_field'), '.3f')}"
                        if (c := by_size.get(n))
                        else ""
                        for n in sizes
                    ),
                ]
            )
        lines += [f"**{name(normaliser)}**", "", _table(["n", *(str(n) for n in sizes)], rows), ""]
    return lines


def _accuracy_section(summary: Mapping[str, Any], name: _Names) -> list[str]:
    sizes: list[int] = summary["sizes"]
    accuracy = summary["accuracy"]
    rows: list[list[str]] = []
    for normaliser in summary["normalisers"]:
        cells = []
        for n in sizes:
            cell = accuracy[normaliser].get(n)
            if cell is None or cell["mean"] is None:
                cells.append("")
            elif cell["se"] is None:
                cells.append(f"{cell['mean']:.1f}")
            else:
                cells.append(f"{cell['mean']:.1f} ± {cell['se']:.1f}")
        rows.append([name(normaliser), *cells])
    for normaliser, by_size in summary["paired"].items():
        rows.append(
            [
                f"{name(normaliser)} − softmax (points)",
                *(_fmt((by_size.get(n) or {}).get("difference"), "+.1f", "") for n in sizes),
            ]
        )
        rows.append(
            [
                f"p, Holm-adjusted ({name(normaliser)} vs softmax)",
                *(_p((by_size.get(n) or {}).get("p_holm")) for n in sizes),
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
    return [
        "## Accuracy (%)",
        "",
        "Mean ± standard error over seeds. p: two-sided paired t-test over seeds, "
        f"Holm-adjusted over the {len(sizes)} sizes of each comparison ({summary['pairing']}). "
        "Raw p-values are in `summary.json`.",
        "",
        _table(["n", *(str(n) for n in sizes)], rows),
        "",
        f"Paper rows: {PAPER_SOURCE} (512 and 2048 from the first arXiv version)."
        + (f" Paper sizes not measured here: {', '.join(map(str, missing))}." if missing else ""),
    ]


def _adaptive_section(
    metrics: Mapping[str, Any], summary: Mapping[str, Any], name: _Names
) -> list[str]:
    histograms = metrics.get("histograms", {}).get("adaptive_temperature")
    if not histograms:
        return []
    from softmax_dispersion.empirical.plots import histogram_quantile

    config = metrics.get("config", {})
    edges = metrics.get("histogram_edges", {})
    sizes = sorted({int(n) for by_size in histograms.values() for n in by_size})
    rows = []
    for label, key, spec in (
        ("median entropy H (nats)", "entropy", ".2f"),
        ("median β", "beta", ".2f"),
    ):
        cells = []
        for n in sizes:
            counts = _pooled(histograms, n, key)
            cells.append(_fmt(histogram_quantile(counts, edges.get(key, []), 0.5), spec, ""))
        rows.append([label, *cells])
    paired = summary["paired"].get("adaptive_temperature", {})
    rows.append(
        [
            "gain over softmax (points)",
            *(_fmt((paired.get(n) or {}).get("difference"), "+.1f", "") for n in sizes),
        ]
    )
    lines = [
        "## Why adaptive θ gains here",
        "",
        "The rule sharpens by β = P(H) only where the head's entropy H lies between 0.85 "
        "and 5.94 nats, most (β ≈ 2.4) near H ≈ 4.4. Medians over all test sets and seeds "
        "(histograms in the figure):",
        "",
        _table(["n", *(str(n) for n in sizes)], rows),
        "",
        _adaptive_explanation(histograms, edges, sizes, paired, summary["accuracy"]["softmax"]),
    ]
    refits = metrics.get("refits") or {}
    if refits:
        from softmax_dispersion.empirical.plots import PAPER_POLYNOMIAL

        coefficient_rows = [["paper", *(f"{c:+.3f}" for c in PAPER_POLYNOMIAL)]]
        for seed, fit in sorted(refits.items(), key=lambda item: int(item[0])):
            coefficient_rows.append(
                [
                    f"refit, seed {seed} ({fit['sets']} sets, rms {fit['rms']:.2f})",
                    *(f"{c:+.3f}" for c in fit["coefficients"]),
                ]
            )
        lines += [
            "",
            "The paper fitted its polynomial to the inverse temperatures that sharpen its own "
            "trained head best; refitted here the same way on each softmax head (best β per "
            "set on a grid 1…4 by the model's own cross-entropy, on sets drawn apart from the "
            "test sets, sizes up to 1024), the coefficients are (H⁴ … H⁰):",
            "",
            _table(["", "H⁴", "H³", "H²", "H", "1"], coefficient_rows),
        ]
        if "adaptive_refit" in summary["accuracy"]:
            lines += [
                "",
                "Both rules are in the accuracy table: "
                f"{name('adaptive_temperature')} (the paper's P) and {name('adaptive_refit')}.",
            ]
    del config
    return lines


def _pooled(histograms: Mapping[str, Any], n: int, key: str) -> list[int]:
    total: list[int] = []
    for by_size in histograms.values():
        counts = (by_size.get(str(n)) or by_size.get(n) or {}).get(key)
        if counts:
            total = [a + b for a, b in zip(total, counts, strict=True)] if total else list(counts)
    return total


def _adaptive_explanation(
    histograms: Mapping[str, Any],
    edges: Mapping[str, Any],
    sizes: list[int],
    paired: Mapping[int, Any],
    softmax: Mapping[int, Any],
) -> str:
    """Where the gain peaks, the entropy and β there, and how far softmax had fallen."""
    from softmax_dispersion.empirical.plots import PAPER_POLYNOMIAL, histogram_quantile

    gains = {n: metric_number((paired.get(n) or {}).get("difference")) for n in sizes}
    finite = {n: g for n, g in gains.items() if not math.isnan(g)}
    if not finite:
        return ""
    best = max(finite, key=lambda n: finite[n])
    entropy = histogram_quantile(
        _pooled(histograms, best, "entropy"), edges.get("entropy", []), 0.5
    )
    beta = histogram_quantile(_pooled(histograms, best, "beta"), edges.get("beta", []), 0.5)
    grid = [0.01 * k for k in range(1001)]
    high = [h for h in grid if h > 0.5 and _polynomial(PAPER_POLYNOMIAL, h) >= 2]
    here = metric_number((softmax.get(best) or {}).get("mean"))
    paper = PAPER_ACCURACY.get(best, {}).get("softmax")
    medians = {
        n: histogram_quantile(_pooled(histograms, n, "entropy"), edges.get("entropy", []), 0.5)
        for n in sizes
    }
    plateau = [n for n, h in medians.items() if min(high) <= h <= max(high)]
    sentence = (
        f"The gain peaks at n = {best} (+{finite[best]:.1f} points), where the median entropy "
        f"is {entropy:.2f} nats and the median β {beta:.2f}; P(H) ≥ 2 for H between "
        f"{min(high):.2f} and {max(high):.2f} nats."
    )
    if plateau:
        sentence += (
            " These heads keep a large logit spread while their top item's lead Δ shrinks, "
            f"so at n = {', '.join(map(str, plateau))} the median set's entropy lies on that "
            "plateau and β multiplies the lead by more than 2, raising the top weight from "
            "about 1/(1 + (n−1)e^(−Δ)) towards 1/(1 + (n−1)e^(−βΔ))."
        )
    if paper is not None and not math.isnan(here):
        sentence += (
            f" Softmax has fallen further here than in the paper at that size ({here:.1f}% "
            f"against its {paper:.1f}%), so there is more to recover; the paper's heads' "
            "entropies are not known, so how much of the difference in gain comes from where "
            "they fall on P cannot be said."
        )
    return sentence


def _polynomial(coefficients: Sequence[float], h: float) -> float:
    value = 0.0
    for c in coefficients:
        value = value * h + c
    return value


def _bound_section(summary: Mapping[str, Any], sizes: list[int], name: _Names) -> list[str]:
    bound = summary["bound"]
    if not bound:
        return []
    rows = [
        [
            name(normaliser),
            str(b["rows_checked"]),
            str(b["violations"]),
            _fmt(b["ratio_max"], ".4f"),
            _fmt(b["ratio_median"], ".4f"),
            str(b["fixed_theta_exceeded"]),
            _fmt(b["delta_mean"], ".2f"),
            str(b.get("gap_floor_violations", 0)),
        ]
        for normaliser, b in bound.items()
    ]
    lines = [
        "## Per-row bound check (a consistency check)",
        "",
        "T1 with each row's own spread δ (after the effective β): every weight is at most "
        "e^δ/(e^δ + n − 1) and at least 1/(1 + (n − 1)e^δ), within T12's float tolerance; "
        "T10's floor 1/(1 + (n − 1)e^(−βΔ)), Δ the top logit's lead, on the same rows. "
        "These hold for any correct softmax of any logits.",
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
        "Median T1 bound (own spread), mean p_max, mean δ and mean β by size:",
        "",
    ]
    detail: list[list[str]] = []
    for normaliser, b in bound.items():
        by_size = b["by_size"]
        for key, label, spec in (
            ("bound_median", "bound", ".3g"),
            ("p_max_mean", "p_max", ".3g"),
            ("delta_mean", "δ", ".2f"),
            ("beta_mean", "β", ".2f"),
        ):
            detail.append(
                [
                    f"{name(normaliser)}: {label}",
                    *(_fmt((by_size.get(n) or {}).get(key), spec, "") for n in sizes),
                ]
            )
    lines += [_table(["n", *(str(n) for n in sizes)], detail), ""]
    loose = [
        name(normaliser)
        for normaliser, b in bound.items()
        if all(
            metric_number(v.get("bound_median")) >= _LOOSE_BOUND
            for n, v in b["by_size"].items()
            if n > 1
        )
    ]
    if loose:
        lines.append(
            f"{', '.join(loose)}: the median row's bound is ≥ {_LOOSE_BOUND} at every size: "
            "the row's own spread allows near one-hot weights, so this check constrains "
            "nothing there."
        )
    return lines


def _escape_section(summary: Mapping[str, Any], name: _Names) -> list[str]:
    escape = summary["escape"]
    if not escape:
        return []
    lines = [
        "## Length scaling (SSMax, log-n)",
        "",
        "With β = s·log n, the spike's top weight tends to 1 when sΔ > 1 and to 0 when "
        "sΔ < 1 (T10; Δ: top logit minus runner-up, before scaling). On any row, T10 also "
        "gives the floor p_max ≥ 1/(1 + (n − 1)n^(−sΔ)). The floor is only a lower bound: "
        "the other n − 2 logits usually trail the top by much more than Δ.",
        "",
    ]
    for normaliser, by_size in escape.items():
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
            f"**{name(normaliser)}**",
            "",
            _table(["n", "s", "mean Δ", "fraction sΔ > 1", "mean T10 floor", "mean p_max"], rows),
            "",
            _escape_sentence(by_size),
            "",
        ]
    return lines


def _escape_sentence(by_size: Mapping[int, Mapping[str, Any]]) -> str:
    """What the table shows, read from the table itself."""
    measured = {
        n: (
            metric_number(v["s_gap_above_one"]),
            metric_number(v["p_max"]),
            metric_number(v.get("gap_floor")),
        )
        for n, v in by_size.items()
        if not math.isnan(metric_number(v["s_gap_above_one"]))
    }
    if not measured:
        return "sΔ was not measured (no size above 1)."
    mostly = [n for n, (f, _, _) in measured.items() if f > 0.5]
    above_floor = [n for n, (_, p, floor) in measured.items() if p - floor > 0.1]
    parts = []
    if mostly:
        parts.append(f"sΔ > 1 holds for most sets at n = {', '.join(map(str, mostly))}")
    else:
        parts.append("sΔ > 1 holds for at most half the sets at every size")
    if above_floor:
        widest = max(above_floor, key=lambda n: measured[n][1] - measured[n][2])
        f, p, floor = measured[widest]
        parts.append(
            f"the mean top weight stays more than 0.1 above T10's floor at n = "
            f"{', '.join(map(str, above_floor))} (most at n = {widest}: {p:.3f} against a "
            f"floor of {floor:.3f}, with sΔ > 1 for a fraction {f:.2f} of the sets): the "
            "floor does not explain the weight there, T13's typical-set prediction does"
        )
    last = max(measured)
    f, p, floor = measured[last]
    parts.append(f"at n = {last} the mean top weight is {p:.3f} (floor {floor:.3f})")
    return "; ".join(parts) + "."


def _sparse_section(summary: Mapping[str, Any], sizes: list[int], name: _Names) -> list[str]:
    one_hot = summary["one_hot"]
    if not one_hot:
        return []
    rows = [
        [
            name(normaliser),
            *(_fmt((by_size.get(n) or {}).get("one_hot_fraction"), ".2f", "") for n in sizes),
        ]
        for normaliser, by_size in one_hot.items()
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
    rows = [[_MARKS[t["passed"]], t["name"], t["detail"]] for t in summary["targets"]]
    return [
        "## Expected shape",
        "",
        "How the results compare with the paper's (not part of the verdict).",
        "",
        _table(["", "target", "detail"], rows, align="l"),
    ]


def _training_section(metrics: Mapping[str, Any], name: _Names) -> list[str]:
    training = metrics.get("training", [])
    if not training:
        return []
    ensembles: dict[tuple[str, tuple[int, ...]], list[Mapping[str, Any]]] = {}
    for t in training:
        key = (str(t.get("normaliser")), tuple(t.get("ensemble") or [t.get("seed")]))
        ensembles.setdefault(key, []).append(t)
    rows = []
    for (normaliser, members), records in ensembles.items():
        first = records[0]
        losses = ", ".join(_fmt(r.get("final_loss"), ".4f") for r in records)
        rows.append(
            [
                name(normaliser),
                ", ".join(map(str, members)),
                _fmt(first.get("ensemble_seconds"), ".1f"),
                _fmt(first.get("seconds_per_seed"), ".1f"),
                _fmt(first.get("steps_per_second"), ".1f"),
                losses,
            ]
        )
    return [
        "## Training",
        "",
        "The seeds of a normaliser train together as one ensemble (batched matrix products): "
        "the wall time is the ensemble's, the per-seed time its share. Each seed draws its "
        "own training sizes.",
        "",
        _table(
            ["normaliser", "seeds", "ensemble s", "s per seed", "steps/s", "final loss per seed"],
            rows,
        ),
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
        Sections: header and verdict; the result checks and the consistency checks;
        certified heads; worst sets; T13 on typical and gap-controlled sets; accuracy in
        the paper's layout with Holm-adjusted paired tests; why adaptive θ gains (and its
        refit); the per-row bound check; length scaling; sparse normalisers; the
        expected shape; training; figures.
    """
    name = _Names(metrics)
    sizes: list[int] = summary["sizes"]
    sections = [
        _header(metrics, summary, name),
        _checks_section(summary),
        _certificates_section(summary, name),
        _worst_section(summary, name),
        _typical_section(summary, name),
        _gap_section(summary, name),
        _accuracy_section(summary, name),
        _adaptive_section(metrics, summary, name),
        _bound_section(summary, sizes, name),
        _escape_section(summary, name),
        _sparse_section(summary, sizes, name),
        _targets_section(summary),
        _training_section(metrics, name),
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

    return plots.draw_all(metrics, directory)


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
