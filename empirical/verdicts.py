"""What a run shows: the checks that could have failed, and the consistency checks.

Everything here reads the ``metrics.json`` data of a run folder (plain dicts, no torch).

*Results* are checks whose outcome is not determined by the quantities they compare: a
certificate whose branch and bound could stay loose or be contradicted by samples;
typical sets that could fall outside T13's band, a prediction made from the head's logit
map alone.  Each has a test in ``tests/empirical/`` that plants a bug in a trained head
and sees it caught, and T13's report states its *power*: the smallest error in the law
(its ``I``, its ``β`` or its band's edges) that the run's sets and sizes would have
detected, measured by holding the same sets to planted laws.

*Consistency checks* hold for any correct forward pass whatever the model learned: T1
and T10's floor recomputed from each row's own logits; and the worst sets, whose top
weight equals T1's bound at the certified spread for any correct softmax (every ratio is
at least ``e^−(width of δ*'s enclosure)``) and whose crossing below ½ is fixed by the
certificate (``⌊1 + e^(lower δ*)⌋ + 1``): they check that the forward pass computes what
was certified, worth keeping, but they could not have come out otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from softmax_dispersion.empirical.typical import PLANTED as _PLANTED

__all__ = [
    "POWER_MARGIN",
    "T13_TEST_LEVEL",
    "allowed_outside",
    "certificate_summary",
    "consistency_checks",
    "dispersion_summary",
    "gap_set_summary",
    "pooled_counts",
    "result_checks",
    "t13_test",
    "typical_summary",
    "worst_set_summary",
]

POWER_MARGIN = 1e-3
"""A worst-set check has power at a size where T1's bound is below ``1 − POWER_MARGIN``:
there a head with weights too sharp or too flat moves its top weight measurably."""

T13_TEST_LEVEL = 0.01
"""The level of the one-sided binomial test that holds a count of sets outside T13's band
to a rate of at most η (a finite sample can exceed η·sets by chance)."""


def allowed_outside(sets: int, eta: float, level: float = T13_TEST_LEVEL) -> int:
    """The most sets outside T13's band that are still consistent with a rate of at most η.

    T13 says each set falls outside with probability at most ``η``, so the count ``K`` of
    ``sets`` independent sets outside is at most Binomial(sets, η) in distribution; a count
    ``k`` contradicts T13 at ``level`` when ``P(Binomial(sets, η) >= k) < level``.

    Examples
    --------
    >>> allowed_outside(16, 0.05), allowed_outside(1280, 0.05)
    (3, 83)
    """
    if sets <= 0:
        return 0
    # P(X >= k) = 1 − P(X <= k − 1); walk the pmf up from 0 in log space.
    log_eta, log_rest = math.log(eta), math.log1p(-eta)
    below = 0.0  # P(X <= k − 1)
    for k in range(sets + 1):
        if 1.0 - below < level:
            return k - 1
        below += math.exp(
            math.lgamma(sets + 1)
            - math.lgamma(k + 1)
            - math.lgamma(sets - k + 1)
            + k * log_eta
            + (sets - k) * log_rest
        )
    return sets


def _number(value: Any) -> float:
    return math.nan if value is None else float(value)


def _check(
    name: str,
    passed: bool | None,
    detail: str,
    *,
    kind: str = "result",
    fails_on: str = "",
    power: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    check: dict[str, Any] = {
        "name": name,
        "passed": passed,
        "detail": detail,
        "kind": kind,
        "fails_on": fails_on,
    }
    if power is not None:
        check["power"] = dict(power)
    return check


def _seeds(by_seed: Mapping[str, Any]) -> list[tuple[int, Any]]:
    return sorted(((int(seed), cert) for seed, cert in by_seed.items()), key=lambda p: p[0])


def certificate_summary(metrics: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Per normaliser, one line per seed: ``δ*``, the gap, ``n*``, and the sample check."""
    out: dict[str, list[dict[str, Any]]] = {}
    for name, by_seed in metrics.get("certificates", {}).items():
        lines = []
        for seed, cert in _seeds(by_seed):
            sizes = cert.get("dispersion_size") or {}
            lines.append(
                {
                    "seed": seed,
                    "delta": cert["delta"],
                    "relative_gap": cert["relative_gap"],
                    "within_gap": cert["within_gap"],
                    "sampled_inside": (cert.get("sampled") or {}).get("inside"),
                    "n_half": sizes.get("half"),
                    "n_hundredth": sizes.get("hundredth"),
                    "beta": cert["beta"],
                    "argmax": cert["argmax"],
                    "argmin": cert["argmin"],
                    "boxes": cert["boxes"],
                    "seconds": cert["seconds"],
                }
            )
        out[name] = lines
    return out


def worst_set_summary(metrics: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per normaliser: the worst sets by size over seeds, and whether the check has power.

    ``power`` lists the sizes at which T1's bound at ``δ*`` is below ``1 − POWER_MARGIN``
    for every seed.
    """
    out: dict[str, dict[str, Any]] = {}
    for name, by_seed in metrics.get("certificates", {}).items():
        by_size: dict[int, list[dict[str, Any]]] = {}
        for _, cert in _seeds(by_seed):
            for row in cert.get("worst_sets") or []:
                by_size.setdefault(int(row["n"]), []).append(row)
        if not by_size:
            continue
        sizes: dict[int, dict[str, Any]] = {}
        for n, rows in sorted(by_size.items()):
            accuracies = [r["accuracy"] for r in rows if r.get("accuracy") is not None]
            sizes[n] = {
                "p_max_mean": sum(r["p_max"] for r in rows) / len(rows),
                "bound_mean": sum(r["bound"] for r in rows) / len(rows),
                "ratio_min": min(r["ratio"] for r in rows),
                "ratio_max": max(r["ratio"] for r in rows),
                "exceeds": sum(bool(r["exceeds"]) for r in rows),
                "short": sum(bool(r["short"]) for r in rows),
                "beta_exceeds": sum(bool(r.get("beta_exceeds")) for r in rows),
                "accuracy": sum(accuracies) / len(accuracies) if accuracies else None,
                "decoy_p_max": _mean_of(r.get("decoy_p_max") for r in rows),
                "seeds": len(rows),
            }
        power = [
            n
            for n, rows in sorted(by_size.items())
            if all(r["bound"] < 1 - POWER_MARGIN for r in rows)
        ]
        out[name] = {"by_size": sizes, "power": power}
    return out


def _mean_of(values: Any) -> float | None:
    kept = [float(v) for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def dispersion_summary(metrics: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Per normaliser with a measured crossing: seed, measured size, certified ``n*(½)``.

    The measured size is the least ``n`` at which the model's top weight on the worst set
    falls below ½; it agrees when it lies in ``[⌈n*_lo⌉ − 1, ⌈n*_hi⌉ + 1]`` (one either
    side for float32 weights within rounding of ½ at the boundary).
    """
    out: dict[str, list[dict[str, Any]]] = {}
    for name, by_seed in metrics.get("certificates", {}).items():
        lines = []
        for seed, cert in _seeds(by_seed):
            if cert.get("crossing") is None or not cert.get("dispersion_size"):
                continue
            half = cert["dispersion_size"]["half"]
            low = math.ceil(float(half["lower"]))
            high = int(half["least_size_exact"])
            measured = int(cert["crossing"])
            lines.append(
                {
                    "seed": seed,
                    "measured": measured,
                    "certified_lower": float(half["lower"]),
                    "certified_upper": float(half["upper"]),
                    "agrees": low - 1 <= measured <= high + 1,
                }
            )
        if lines:
            out[name] = lines
    return out


def pooled_counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """T13's counts (``t13_counts`` of metrics rows) summed over rows: sets, and sets
    outside per level for the law and each planted law."""
    total: dict[str, Any] = {"sets": 0}
    for row in rows:
        counts = row.get("t13_counts") or {}
        total["sets"] += int(counts.get("sets", 0))
        for level, count in (counts.get("law") or {}).items():
            total.setdefault("law", {})[level] = total.get("law", {}).get(level, 0) + count
        for kind in ("I", "beta", "band"):
            for factor, by_level in (counts.get(kind) or {}).items():
                cell = total.setdefault(kind, {}).setdefault(factor, {})
                for level, count in by_level.items():
                    cell[level] = cell.get(level, 0) + count
    return total


def _rejects(sets: int, outside: Mapping[str, int], level: float) -> bool:
    """Whether T13 is contradicted: at some level η the count outside exceeds what a
    rate of η allows (one-sided binomial tests, Bonferroni over the levels)."""
    per_level = level / max(len(outside), 1)
    return any(
        count > allowed_outside(sets, float(eta), per_level) for eta, count in outside.items()
    )


def t13_test(
    by_size: Mapping[int, Mapping[str, Any]], level: float = T13_TEST_LEVEL
) -> dict[str, Any]:
    """T13's verdict over sizes from pooled counts, and its power against planted laws.

    Parameters
    ----------
    by_size
        Per size, :func:`pooled_counts` of its rows.
    level
        The family-wise test level (split over T13's levels η).

    Returns
    -------
    dict
        ``within``: no size contradicts T13; ``rejected_at``: the sizes that do;
        ``detected``: per kind (``I``, ``beta``, ``band``) and factor, whether a law off by
        that factor would have been rejected at some size; ``power``: per kind, the
        smallest relative error detected below and above 1 (``None``: none of the
        planted factors), e.g. ``{"I": {"below": 0.1, "above": 0.05}}``.

    Examples
    --------
    >>> counts = {"sets": 100, "law": {"0.05": 1, "0.5": 2},
    ...           "I": {"0.9": {"0.05": 3, "0.5": 80}, "1.1": {"0.05": 2, "0.5": 9}}}
    >>> test = t13_test({4096: counts})
    >>> test["within"], test["power"]["I"]
    (True, {'below': 0.1, 'above': None})
    """
    rejected = [
        n
        for n, counts in sorted(by_size.items())
        if counts.get("sets")
        and counts.get("law")
        and _rejects(counts["sets"], counts["law"], level)
    ]
    detected: dict[str, dict[str, bool]] = {}
    for kind in ("I", "beta", "band"):
        factors = sorted(
            {f for counts in by_size.values() for f in (counts.get(kind) or {})}, key=float
        )
        for factor in factors:
            detected.setdefault(kind, {})[factor] = any(
                counts.get("sets")
                and factor in (counts.get(kind) or {})
                and _rejects(counts["sets"], counts[kind][factor], level)
                for counts in by_size.values()
            )
    power: dict[str, dict[str, float | None]] = {}
    for kind, by_factor in detected.items():
        below = [1 - float(f) for f, hit in by_factor.items() if hit and float(f) < 1]
        above = [float(f) - 1 for f, hit in by_factor.items() if hit and float(f) > 1]
        power[kind] = {
            "below": round(min(below), 6) if below else None,
            "above": round(min(above), 6) if above else None,
        }
    return {"within": not rejected, "rejected_at": rejected, "detected": detected, "power": power}


def t13_power(
    typical: Mapping[str, Mapping[int, Mapping[str, Any]]], gap_sets: Mapping[str, Any]
) -> dict[str, dict[str, Any]]:
    """Per normaliser, T13's power over every cell the run checks (typical sizes and
    gap-controlled lead × size cells together): a planted law fails the run when any
    cell rejects it."""
    out: dict[str, dict[str, Any]] = {}
    for name in sorted(set(typical) | set(gap_sets)):
        cells: dict[Any, Mapping[str, Any]] = {}
        for n, cell in (typical.get(name) or {}).items():
            if cell.get("counts"):
                cells[("typical", n)] = cell["counts"]
        for lead, by_size in (gap_sets.get(name) or {}).items():
            for n, cell in by_size.items():
                if (cell.get("counts") or {}).get("law"):
                    cells[("gap", lead, n)] = cell["counts"]
        if cells:
            test = t13_test(cells)
            out[name] = {"power": test["power"], "text": _power_text(test["power"])}
    return out


def typical_summary(metrics: Mapping[str, Any], eta: float) -> dict[str, dict[int, dict[str, Any]]]:
    """Per normaliser and size: T13's fraction outside the band, and means over seeds.

    The fraction is pooled over seeds (all sets checked at that size), so that it rests
    on every set rather than on a few; ``outside_max`` is the worst seed's, for reference.
    ``counts`` pools T13's counts per level and planted law (:func:`pooled_counts`).
    """
    out: dict[str, dict[int, dict[str, Any]]] = {}
    for row in metrics.get("rows", []):
        if not row.get("t13_sets"):
            continue
        cell = out.setdefault(str(row["normaliser"]), {}).setdefault(
            int(row["n"]),
            {
                "outside": [],
                "measured": [],
                "mean_field": [],
                "lower": [],
                "upper": [],
                "bound": [],
                "sets": 0,
                "rows": [],
            },
        )
        cell["outside"].append(_number(row["t13_outside"]))
        cell.setdefault("outside_sets", 0.0)
        cell["outside_sets"] += _number(row["t13_outside"]) * int(row["t13_sets"])
        cell["measured"].append(_number(row["p_true_mean"]))
        cell["mean_field"].append(_number(row["t13_mean_field_mean"]))
        cell["lower"].append(_number(row["t13_lower_mean"]))
        cell["upper"].append(_number(row["t13_upper_mean"]))
        cell["bound"].append(_number(row["t13_bound_max"]))
        cell["sets"] += int(row["t13_sets"])
        cell["rows"].append(row)
    summary: dict[str, dict[int, dict[str, Any]]] = {}
    for name, by_size in out.items():
        summary[name] = {}
        for n, c in sorted(by_size.items()):
            counts = pooled_counts(c["rows"])
            law = counts.get("law") or {}
            within = (
                not _rejects(counts["sets"], law, T13_TEST_LEVEL)
                if law
                else round(c["outside_sets"]) <= allowed_outside(c["sets"], eta)
            )
            summary[name][n] = {
                "outside": c["outside_sets"] / c["sets"],
                "outside_max": max(c["outside"]),
                "measured": sum(c["measured"]) / len(c["measured"]),
                "mean_field": sum(c["mean_field"]) / len(c["mean_field"]),
                "lower": sum(c["lower"]) / len(c["lower"]),
                "upper": sum(c["upper"]) / len(c["upper"]),
                "bound_max": max(c["bound"]),
                "sets": c["sets"],
                "outside_sets": round(c["outside_sets"]),
                "allowed": allowed_outside(c["sets"], eta, T13_TEST_LEVEL / max(len(law), 1)),
                "within": within,
                "counts": counts,
            }
    return summary


def gap_set_summary(
    metrics: Mapping[str, Any],
) -> dict[str, dict[float, dict[int, dict[str, Any]]]]:
    """Per normaliser, lead and size: accuracy, measured top weight, T13 (means over seeds)."""
    cells: dict[str, dict[float, dict[int, list[dict[str, Any]]]]] = {}
    for row in metrics.get("gap_rows", []):
        cells.setdefault(str(row["normaliser"]), {}).setdefault(float(row["lead"]), {}).setdefault(
            int(row["n"]), []
        ).append(row)
    out: dict[str, dict[float, dict[int, dict[str, Any]]]] = {}
    for name, by_lead in cells.items():
        out[name] = {}
        for lead, by_size in sorted(by_lead.items()):
            out[name][lead] = {}
            for n, rows in sorted(by_size.items()):
                checked = [r for r in rows if r.get("t13_sets")]
                counts = pooled_counts(checked)
                out[name][lead][n] = {
                    "counts": counts,
                    "accuracy": sum(r["accuracy"] for r in rows) / len(rows),
                    "measured": sum(r["p_true_mean"] for r in rows) / len(rows),
                    "mean_field": _mean_of(r["t13_mean_field_mean"] for r in checked),
                    "outside": (
                        sum(r["t13_outside"] * r["t13_sets"] for r in checked)
                        / sum(r["t13_sets"] for r in checked)
                        if checked
                        else None
                    ),
                    "sets": sum(int(r.get("t13_sets") or 0) for r in rows),
                }
    return out


def _power_text(power: Mapping[str, Mapping[str, float | None]]) -> str:
    """``I 10% low, 5% high; β …``: the smallest planted errors caught, per kind and side
    (``none up to 25%`` where no planted error was)."""
    names = {"I": "I", "beta": "β", "band": "band edges"}
    largest = max(abs(f - 1) for f in _PLANTED)
    parts = []
    for kind in ("I", "beta", "band"):
        if kind not in power:
            continue
        sides = []
        for side, word in (("below", "low"), ("above", "high")):
            value = power[kind][side]
            amount = (
                f"{100 * value:.0f}%" if value is not None else f"none up to {100 * largest:.0f}%"
            )
            sides.append(f"{amount} {word}")
        parts.append(f"{names[kind]} {sides[0]}, {sides[1]}")
    return "smallest error caught: " + "; ".join(parts)


def result_checks(
    metrics: Mapping[str, Any],
    *,
    certificates: Mapping[str, list[dict[str, Any]]],
    worst: Mapping[str, dict[str, Any]],
    dispersion: Mapping[str, list[dict[str, Any]]],
    typical: Mapping[str, dict[int, dict[str, Any]]],
    gap_sets: Mapping[str, Any],
    eta: float,
    ratio_target: float,
) -> list[dict[str, Any]]:
    """Every check, each passed (``True``), failed or not measured, with its kind.

    ``kind`` is ``"result"`` for the checks that could have failed (certificates, T13 on
    typical and gap-controlled sets, T13's with its power) and ``"consistency"`` for the
    worst-set and crossing checks, which any correct softmax passes given the certificate.
    """
    checks = []
    info = metrics.get("normaliser_info", {})

    def display(name: str) -> str:
        return str(info.get(name, {}).get("display_name", name))

    lines = [line for per in certificates.values() for line in per]
    if lines:
        loose = [line for line in lines if not line["within_gap"]]
        outside = [line for line in lines if line["sampled_inside"] is False]
        gaps = [line["relative_gap"] for line in lines]
        checks.append(
            _check(
                "certified logit ranges within 1% of the best items found, samples inside",
                not loose and not outside,
                f"{len(lines)} certificates; largest relative gap {max(gaps):.2g}"
                + (f"; {len(loose)} looser than 1%" if loose else "")
                + (f"; {len(outside)} contradicted by sampled items" if outside else ""),
                fails_on="a loose or wrong interval evaluation; weights changed after certifying",
            )
        )
    for name, summary in worst.items():
        by_size = summary["by_size"]
        exceeds = sum(c["exceeds"] for c in by_size.values())
        short = sum(c["short"] for c in by_size.values())
        beta_exceeds = sum(c["beta_exceeds"] for c in by_size.values())
        ratio = min(c["ratio_min"] for c in by_size.values())
        detail = (
            f"sizes {', '.join(map(str, by_size))}: top weight / T1 bound at δ* ≥ {ratio:.4f}; "
            f"{exceeds} above the bound, {short} below its lower end"
        )
        if beta_exceeds:
            detail += f", {beta_exceeds} with β above its proved bound"
        checks.append(
            _check(
                f"{display(name)}: the forward pass agrees with its certificate on the worst "
                "sets (top weight at T1's bound with the certified δ*)",
                exceeds == 0 and short == 0 and beta_exceeds == 0,
                detail,
                kind="consistency",
            )
        )
    bounded = [n for n, summary in worst.items() if info.get(n, {}).get("logit_bound") is not None]
    for name in bounded:
        by_size = worst[name]["by_size"]
        ratio = min(c["ratio_min"] for c in by_size.values())
        checks.append(
            _check(
                f"{display(name)}: the forward pass agrees with its certificate: worst-set top "
                f"weight ≥ {ratio_target:g} × T1 bound at every n",
                ratio >= ratio_target,
                f"smallest ratio {ratio:.4f} over sizes {', '.join(map(str, by_size))}",
                kind="consistency",
            )
        )
    for name, lines in dispersion.items():
        agree = [line for line in lines if line["agrees"]]
        detail = "; ".join(
            f"seed {line['seed']}: measured {line['measured']}, certified "
            f"[{line['certified_lower']:.4g}, {line['certified_upper']:.4g}]"
            for line in lines
        )
        checks.append(
            _check(
                f"{display(name)}: the forward pass agrees with its certificate: the size where "
                "the worst set's top weight falls below ½ is n*(½)",
                len(agree) == len(lines),
                detail,
                kind="consistency",
            )
        )
    for name, by_size in typical.items():
        worst_cell = max(by_size.items(), key=lambda item: item[1]["outside"])
        test = t13_test({n: cell["counts"] for n, cell in by_size.items() if cell.get("counts")})
        above = [n for n, cell in by_size.items() if not cell["within"]]
        level_names = sorted(
            {lv for cell in by_size.values() for lv in (cell.get("counts", {}).get("law") or {})},
            key=float,
        )
        checks.append(
            _check(
                f"{display(name)}: typical sets inside T13's bands (rate outside ≤ η at "
                f"η = {', '.join(level_names) or f'{eta:g}'})",
                not above,
                f"largest fraction outside the η = {eta:g} band {worst_cell[1]['outside']:.3f} "
                f"at n = {worst_cell[0]} ({worst_cell[1]['outside_sets']} of "
                f"{worst_cell[1]['sets']} sets); binomial tests at family level "
                f"{T13_TEST_LEVEL:g}"
                + (f"; rejected at n = {', '.join(map(str, above))}" if above else "")
                + (f". Power, {_power_text(test['power'])}" if test["power"] else ""),
                fails_on="scaled or flattened weights; a missing β; a law off as the power says",
                power=test["power"],
            )
        )
    for name, by_lead in gap_sets.items():
        cells = [
            (lead, n, cell) for lead, by_size in by_lead.items() for n, cell in by_size.items()
        ]
        checked = [(lead, n, cell) for lead, n, cell in cells if cell["outside"] is not None]
        if not checked:
            continue
        by_cell = {
            (lead, n): cell["counts"]
            for lead, n, cell in checked
            if cell.get("counts", {}).get("law")
        }
        if by_cell:
            beyond = [
                key
                for key, counts in by_cell.items()
                if _rejects(counts["sets"], counts["law"], T13_TEST_LEVEL)
            ]
            test = t13_test({i: counts for i, counts in enumerate(by_cell.values())})
        else:
            beyond = [
                (lead, n)
                for lead, n, cell in checked
                if round(cell["outside"] * cell["sets"]) > allowed_outside(cell["sets"], eta)
            ]
            test = {"power": {}}
        largest = max(cell["outside"] for _, _, cell in checked)
        checks.append(
            _check(
                f"{display(name)}: gap-controlled sets inside T13's bands (rate outside ≤ η)",
                not beyond,
                f"{len(checked)} lead × size cells; largest fraction outside {largest:.3f}"
                + (f"; rejected at {beyond}" if beyond else "")
                + (f". Power, {_power_text(test['power'])}" if test["power"] else ""),
                fails_on="scaled or flattened weights; a missing β; a law off as the power says",
                power=test["power"],
            )
        )
    return checks


def consistency_checks(
    metrics: Mapping[str, Any], bound: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """Checks that hold for any correct softmax: T1 and T10's floor per row, run lengths."""
    info = metrics.get("normaliser_info", {})
    checks = []
    for name, b in bound.items():
        display = info.get(name, {}).get("display_name", name)
        violations = int(b["violations"]) + int(b["gap_floor_violations"])
        checks.append(
            _check(
                f"{display}: T1 and T10's floor with each row's own spread",
                violations == 0,
                f"{violations} of {b['rows_checked']} rows outside beyond float tolerance",
                kind="consistency",
            )
        )
    for name, by_seed in metrics.get("certificates", {}).items():
        results = [cert["run_length"] for _, cert in _seeds(by_seed) if cert.get("run_length")]
        if not results:
            continue
        display = info.get(name, {}).get("display_name", name)
        good = all(level["at_most_level"] for r in results for level in r.values())
        sizes = sorted({level["size"] for r in results for level in r.values()}, key=int)
        checks.append(
            _check(
                f"{display}: the worst set at n*(½) and n*(1/100) (run-length engine)",
                good,
                f"top weight ≤ ε at n = {', '.join(_short(s) for s in sizes)}",
                kind="consistency",
            )
        )
    return checks


def _short(size: str) -> str:
    return size if len(size) <= 9 else f"{size[0]}.{size[1:4]}e{len(size) - 1}"
