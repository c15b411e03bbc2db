"""Summary statistics of a max-retrieval run: means over seeds, paired tests, targets.

Everything here reads the ``metrics.json`` data of a run folder (a plain dict) and
returns plain, JSON-ready dicts: NaN becomes ``None`` and sizes are ``int`` keys
(``json.dump`` writes them as strings).
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from softmax_dispersion.empirical import verdicts

__all__ = [
    "ACCURACY_TARGET",
    "OUT_OF_DISTRIBUTION",
    "PAIRING",
    "PAPER_ACCURACY",
    "PAPER_SOURCE",
    "holm",
    "mean_and_standard_error",
    "metric_number",
    "normaliser_info",
    "paired_test",
    "summarise",
]

PAIRING = (
    "pairs are seeds: within a seed both normalisers are measured on the same test sets "
    "(and adaptive θ on the very softmax model it modifies); each seed has its own "
    "initialisation, training data and training-size schedule"
)
"""What the paired tests pair."""


def normaliser_info(metrics: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """What the run recorded about each normaliser (display name, family, …).

    Runs record :meth:`~softmax_dispersion.empirical.normalisers.Normaliser.describe` in
    ``config.json``; for data without it (hand-made metrics) the names stand for
    themselves: softmax family, trained with themselves.
    """
    recorded = dict(metrics.get("normaliser_info") or {})
    names = {str(row["normaliser"]) for row in metrics.get("rows", [])}
    for name in names - set(recorded):
        recorded[name] = {
            "display_name": name,
            "softmax_family": True,
            "train_with": name,
            "length_scaled": False,
            "logit_bound": None,
        }
    return recorded


PAPER_SOURCE = "Veličković et al., ICML 2025, reported"
"""Where :data:`PAPER_ACCURACY` comes from (512 and 2048: the first arXiv version)."""

PAPER_ACCURACY: dict[int, dict[str, float | None]] = {
    16: {"softmax": 98.6, "adaptive_temperature": 98.6, "p": 0.4},
    64: {"softmax": 94.3, "adaptive_temperature": 94.5, "p": 0.002},
    256: {"softmax": 81.3, "adaptive_temperature": 82.1, "p": 2e-4},
    512: {"softmax": 70.1, "adaptive_temperature": 72.5, "p": None},
    1024: {"softmax": 53.8, "adaptive_temperature": 57.7, "p": 1e-4},
    2048: {"softmax": 35.7, "adaptive_temperature": 39.4, "p": None},
    4096: {"softmax": 22.6, "adaptive_temperature": 24.9, "p": 0.02},
    16384: {"softmax": 12.4, "adaptive_temperature": 14.0, "p": 4e-3},
}
"""Max-retrieval accuracy (%) by set size as the paper reports it, with paired-test ``p``.

Veličković et al., ICML 2025, reported: softmax, adaptive temperature (inference only)
and the paired t-test p-value between them; ``None`` where the paper gives no p-value.
"""

ACCURACY_TARGET = 97.0
"""In-distribution accuracy (%, at n = 16) a trained head is expected to reach."""

OUT_OF_DISTRIBUTION = 256
"""From this size on adaptive temperature is expected to match or beat softmax."""

ADVERSARIAL_RATIO = 0.95
"""Bounded heads: the worst set's top weight over T1's bound at ``δ*``, at every size."""


def metric_number(value: Any) -> float:
    """A metrics value as a float; ``None`` (JSON null) becomes NaN."""
    return math.nan if value is None else float(value)


def _clean(value: float) -> float | None:
    """NaN as ``None``, so the summary is strict JSON."""
    return None if math.isnan(value) else value


def _finite_mean(values: Iterable[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return math.fsum(kept) / len(kept) if kept else math.nan


def mean_and_standard_error(values: Iterable[float | None]) -> tuple[float, float]:
    """Mean and standard error of the mean, ignoring NaN and ``None`` entries.

    Parameters
    ----------
    values
        One value per seed.

    Returns
    -------
    tuple of float
        The mean and ``s/√k`` with ``s`` the sample standard deviation (``ddof=1``)
        of the ``k`` values kept; the error is NaN for one value, both are NaN for none.

    Examples
    --------
    >>> mean_and_standard_error([1.0, 2.0, 3.0])
    (2.0, 0.5773502691896258)
    >>> mean_and_standard_error([0.5, None])
    (0.5, nan)
    """
    kept = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    if not kept:
        return math.nan, math.nan
    mean = math.fsum(kept) / len(kept)
    if len(kept) == 1:
        return mean, math.nan
    return mean, float(np.std(kept, ddof=1)) / math.sqrt(len(kept))


def paired_test(a: Iterable[float], b: Iterable[float]) -> float | None:
    """Two-sided paired t-test p-value of ``a`` against ``b`` (e.g. per-seed accuracies).

    Parameters
    ----------
    a, b
        Paired values, one pair per seed, in the same order; pairs with a NaN are dropped.

    Returns
    -------
    float or None
        ``scipy.stats.ttest_rel``'s p-value. ``None`` with fewer than two pairs. When the
        differences are all equal the t statistic is undefined: exactly zero differences
        give ``1.0`` (no evidence of a difference), a constant nonzero difference ``0.0``
        (the limit of ``t → ±∞``).

    Examples
    --------
    >>> round(paired_test([0.9, 0.8, 0.85], [0.88, 0.79, 0.80]), 3)
    0.157
    >>> paired_test([0.5, 0.6], [0.5, 0.6])
    1.0
    >>> paired_test([0.5], [0.4]) is None
    True
    """
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if not (math.isnan(x) or math.isnan(y))]
    if len(pairs) < 2:
        return None
    differences = [x - y for x, y in pairs]
    if all(d == differences[0] for d in differences):
        return 1.0 if differences[0] == 0 else 0.0
    from scipy import stats

    with warnings.catch_warnings():
        # Nearly equal differences make scipy warn of precision loss; the p-value stands.
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.ttest_rel([x for x, _ in pairs], [y for _, y in pairs])
    p = float(result.pvalue)
    return None if math.isnan(p) else p


def _index(rows: list[dict[str, Any]]) -> dict[str, dict[int, dict[int, dict[str, Any]]]]:
    """Rows by normaliser, then size, then seed."""
    index: dict[str, dict[int, dict[int, dict[str, Any]]]] = {}
    for row in rows:
        index.setdefault(str(row["normaliser"]), {}).setdefault(int(row["n"]), {})[
            int(row["seed"])
        ] = row
    return index


def _sizes(rows: list[dict[str, Any]]) -> list[int]:
    return sorted({int(row["n"]) for row in rows})


def _ordered_normalisers(metrics: Mapping[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    """The configured order, then any normaliser found only in the rows."""
    configured = [str(n) for n in metrics.get("config", {}).get("normalisers", [])]
    present = {str(row["normaliser"]) for row in rows}
    ordered = [n for n in configured if n in present]
    return ordered + sorted(present - set(ordered))


def _trained(metrics: Mapping[str, Any], normalisers: list[str]) -> list[str]:
    recorded = {str(t["normaliser"]) for t in metrics.get("training", [])}
    if recorded:
        return [n for n in normalisers if n in recorded]
    info = normaliser_info(metrics)
    return [n for n in normalisers if info[n]["train_with"] == n]


def holm(p_values: Mapping[int, float | None]) -> dict[int, float | None]:
    """Holm's step-down adjustment of a family of p-values (here: one per size).

    Examples
    --------
    >>> holm({16: 0.01, 64: 0.04, 256: 0.03})
    {16: 0.03, 64: 0.06, 256: 0.06}
    >>> holm({16: None, 64: 0.2})
    {16: None, 64: 0.2}
    """
    kept = sorted((p, n) for n, p in p_values.items() if p is not None)
    m = len(kept)
    adjusted: dict[int, float | None] = {n: None for n in p_values}
    running = 0.0
    for rank, (p, n) in enumerate(kept):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[n] = round(running, 15)
    return adjusted


def _accuracy_table(
    index: dict[str, dict[int, dict[int, dict[str, Any]]]], normalisers: list[str]
) -> dict[str, dict[int, dict[str, Any]]]:
    table: dict[str, dict[int, dict[str, Any]]] = {}
    for name in normalisers:
        table[name] = {}
        for n, by_seed in sorted(index[name].items()):
            values = [100 * metric_number(row.get("accuracy")) for row in by_seed.values()]
            mean, se = mean_and_standard_error(values)
            kept = sum(not math.isnan(v) for v in values)
            table[name][n] = {"mean": _clean(mean), "se": _clean(se), "seeds": kept}
    return table


def _paired(
    index: dict[str, dict[int, dict[int, dict[str, Any]]]], normalisers: list[str]
) -> dict[str, dict[int, dict[str, float | None]]]:
    if "softmax" not in index:
        return {}
    paired: dict[str, dict[int, dict[str, float | None]]] = {}
    for name in normalisers:
        if name == "softmax":
            continue
        paired[name] = {}
        for n, by_seed in sorted(index[name].items()):
            base = index["softmax"].get(n, {})
            seeds = sorted(set(by_seed) & set(base))
            a = [100 * metric_number(by_seed[s].get("accuracy")) for s in seeds]
            b = [100 * metric_number(base[s].get("accuracy")) for s in seeds]
            difference = _finite_mean(x - y for x, y in zip(a, b, strict=True))
            paired[name][n] = {"difference": _clean(difference), "p": paired_test(a, b)}
        adjusted = holm({n: cell["p"] for n, cell in paired[name].items()})
        for n, cell in paired[name].items():
            cell["p_holm"] = adjusted[n]
    return paired


def _bound(
    index: dict[str, dict[int, dict[int, dict[str, Any]]]],
    normalisers: list[str],
    info: Mapping[str, Mapping[str, Any]],
) -> dict[str, dict[str, Any]]:
    bound: dict[str, dict[str, Any]] = {}
    for name in normalisers:
        if not info[name]["softmax_family"]:
            continue
        rows = [row for by_seed in index[name].values() for row in by_seed.values()]
        ratio_max = [metric_number(r.get("bound_ratio_max")) for r in rows]
        ratio_median = [
            v
            for v in (metric_number(r.get("bound_ratio_median")) for r in rows)
            if not math.isnan(v)
        ]
        finite_max = [v for v in ratio_max if not math.isnan(v)]
        by_size: dict[int, dict[str, float | None]] = {}
        for n, by_seed in sorted(index[name].items()):
            seed_rows = list(by_seed.values())
            by_size[n] = {
                key: _clean(_finite_mean(metric_number(r.get(column)) for r in seed_rows))
                for key, column in (
                    ("delta_mean", "delta_mean"),
                    ("beta_mean", "beta_mean"),
                    ("bound_median", "bound_median"),
                    ("p_max_mean", "p_max_mean"),
                )
            }
        bound[name] = {
            "rows_checked": sum(int(r.get("instances") or 0) for r in rows),
            "violations": sum(int(r.get("bound_violations") or 0) for r in rows),
            "ratio_max": max(finite_max) if finite_max else None,
            "ratio_median": float(np.median(ratio_median)) if ratio_median else None,
            "fixed_theta_exceeded": sum(int(r.get("fixed_theta_exceeded") or 0) for r in rows),
            "gap_floor_violations": sum(int(r.get("gap_floor_violations") or 0) for r in rows),
            "delta_mean": _clean(_finite_mean(metric_number(r.get("delta_mean")) for r in rows)),
            "by_size": by_size,
        }
    return bound


def _per_size_means(
    index: dict[str, dict[int, dict[int, dict[str, Any]]]],
    names: Iterable[str],
    columns: dict[str, str],
) -> dict[str, dict[int, dict[str, float | None]]]:
    out: dict[str, dict[int, dict[str, float | None]]] = {}
    for name in names:
        if name not in index:
            continue
        out[name] = {
            n: {
                key: _clean(_finite_mean(metric_number(r.get(column)) for r in by_seed.values()))
                for key, column in columns.items()
            }
            for n, by_seed in sorted(index[name].items())
        }
    return out


def _target(name: str, passed: bool | None, detail: str) -> dict[str, Any]:
    return {"name": name, "passed": passed, "detail": detail}


def _targets(
    accuracy: dict[str, dict[int, dict[str, Any]]],
    trained: list[str],
    names: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    shown = dict(names or {})

    def mean(name: str, n: int) -> float | None:
        cell = accuracy.get(name, {}).get(n)
        return None if cell is None else cell["mean"]

    targets = []
    name = f"in-distribution accuracy ≥ {ACCURACY_TARGET:g}% at n = 16"
    at_16 = {t: mean(t, 16) for t in trained}
    measured = {t: v for t, v in at_16.items() if v is not None}
    if not measured:
        targets.append(_target(name, None, "n = 16 was not measured"))
    else:
        low = [t for t, v in measured.items() if v < ACCURACY_TARGET]
        values = ", ".join(f"{shown.get(t, t)} {v:.1f}%" for t, v in measured.items())
        below = ", ".join(shown.get(t, t) for t in low)
        detail = values + (f"; below target: {below}" if low else "")
        targets.append(_target(name, not low, detail))

    name = "softmax accuracy declines with n"
    sizes = sorted(n for n, cell in accuracy.get("softmax", {}).items() if cell["mean"] is not None)
    # Decline is measured from n = 16 (the top of the training range) when it was measured.
    sizes = [n for n in sizes if n >= 16] if 16 in sizes else sizes
    if len(sizes) < 2:
        targets.append(_target(name, None, "needs softmax at two sizes or more"))
    else:
        means = [float(accuracy["softmax"][n]["mean"]) for n in sizes]
        increases = sum(b > a for a, b in itertools.pairwise(means))
        detail = (
            f"{means[0]:.1f}% at n = {sizes[0]} → {means[-1]:.1f}% at n = {sizes[-1]}; "
            f"{increases} of {len(means) - 1} steps increase"
        )
        targets.append(_target(name, means[-1] < means[0], detail))

    name = f"adaptive θ ≥ softmax at every n ≥ {OUT_OF_DISTRIBUTION}"
    common = sorted(
        n
        for n in accuracy.get("adaptive_temperature", {})
        if n >= OUT_OF_DISTRIBUTION
        and mean("adaptive_temperature", n) is not None
        and mean("softmax", n) is not None
    )
    if not common:
        targets.append(_target(name, None, f"needs both at some n ≥ {OUT_OF_DISTRIBUTION}"))
    else:
        behind = [
            n
            for n in common
            if float(mean("adaptive_temperature", n) or 0) < float(mean("softmax", n) or 0)
        ]
        detail = (
            f"behind at n = {', '.join(map(str, behind))}"
            if behind
            else f"at or ahead at n = {', '.join(map(str, common))}"
        )
        targets.append(_target(name, not behind, detail))

    return targets


def summarise(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """Summarise a run's ``metrics.json`` data over seeds.

    Parameters
    ----------
    metrics
        The run's data: ``config``, ``rows`` (one per normaliser, seed and size),
        ``training``, ``certificates`` and the rest, as
        :mod:`softmax_dispersion.empirical` writes them.

    Returns
    -------
    dict
        ``accuracy``: per normaliser and size, mean and standard error over seeds (%).
        ``paired``: per normaliser other than softmax and size, the mean per-seed
        difference from softmax (points), the paired t-test p-value and its Holm
        adjustment over sizes; ``pairing`` says what is paired.  ``certificates``,
        ``worst_sets``, ``dispersion``, ``typical``, ``gap_sets``: the certified heads,
        their worst sets, measured against certified dispersion sizes, T13 on typical
        and gap-controlled sets (:mod:`~softmax_dispersion.empirical.verdicts`).
        ``bound``: per softmax-family normaliser, T1's per-row check (a consistency
        check). ``escape``: SSMax and log-n scaling by size. ``one_hot``: the sparse
        normalisers' one-hot fraction by size. ``results``, ``consistency``: the checks,
        each passed, failed or ``None``; ``targets``: the expected shape of the results.
        ``passed``: every result and consistency check passed.

    Examples
    --------
    >>> row = {"normaliser": "softmax", "seed": 0, "n": 16, "instances": 8,
    ...        "accuracy": 1.0, "bound_violations": 0}
    >>> summary = summarise({"rows": [row]})
    >>> summary["accuracy"]["softmax"][16], summary["passed"]
    ({'mean': 100.0, 'se': None, 'seeds': 1}, True)
    """
    rows = list(metrics.get("rows", []))
    index = _index(rows)
    info = normaliser_info(metrics)
    normalisers = _ordered_normalisers(metrics, rows)
    accuracy = _accuracy_table(index, normalisers)
    bound = _bound(index, normalisers, info)
    violations = sum(int(b["violations"]) + int(b["gap_floor_violations"]) for b in bound.values())
    config = metrics.get("config", {})
    eta = float(config.get("eta", 0.05))
    certificates = verdicts.certificate_summary(metrics)
    worst = verdicts.worst_set_summary(metrics)
    dispersion = verdicts.dispersion_summary(metrics)
    typical = verdicts.typical_summary(metrics, eta)
    gap_sets = verdicts.gap_set_summary(metrics)
    power = verdicts.t13_power(typical, gap_sets)
    results = verdicts.result_checks(
        metrics,
        certificates=certificates,
        worst=worst,
        dispersion=dispersion,
        typical=typical,
        gap_sets=gap_sets,
        eta=eta,
        ratio_target=ADVERSARIAL_RATIO,
    )
    consistency = [c for c in results if c["kind"] == "consistency"]
    consistency += verdicts.consistency_checks(metrics, bound)
    results = [c for c in results if c["kind"] == "result"]
    failed = [c for c in (*results, *consistency) if c["passed"] is False]
    length_scaled = [n for n in normalisers if info[n].get("length_scaled")]
    sparse = [n for n in normalisers if not info[n]["softmax_family"]]
    return {
        "normalisers": normalisers,
        "display_names": {n: info[n]["display_name"] for n in normalisers},
        "sizes": _sizes(rows),
        "eta": eta,
        "accuracy": accuracy,
        "paired": _paired(index, normalisers),
        "pairing": PAIRING,
        "bound": bound,
        "certificates": certificates,
        "worst_sets": worst,
        "dispersion": dispersion,
        "typical": typical,
        "gap_sets": gap_sets,
        "t13_power": power,
        "escape": _per_size_means(
            index,
            length_scaled,
            {
                "s": "s",
                "gap": "gap_mean",
                "s_gap_above_one": "s_gap_above_one",
                "gap_floor": "gap_floor_mean",
                "p_max": "p_max_mean",
            },
        ),
        "one_hot": _per_size_means(
            index, sparse, {"one_hot_fraction": "one_hot_fraction", "p_max": "p_max_mean"}
        ),
        "results": results,
        "consistency": consistency,
        "targets": _targets(
            accuracy,
            _trained(metrics, normalisers),
            {n: str(info[n]["display_name"]) for n in normalisers},
        ),
        "violations": violations,
        "failed": [c["name"] for c in failed],
        "passed": not failed,
    }
