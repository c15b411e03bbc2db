"""Summary statistics, the Markdown report, the CSV and the figures of a run folder."""

from __future__ import annotations

import copy
import csv
import doctest
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from softmax_dispersion.empirical import statistics
from softmax_dispersion.empirical.run_report import ROW_COLUMNS, render_markdown, write_report
from softmax_dispersion.empirical.statistics import (
    PAPER_ACCURACY,
    holm,
    mean_and_standard_error,
    paired_test,
    summarise,
)

SIZES = [16, 256, 1024]
SEEDS = [0, 1, 2]
NORMALISERS = ["softmax", "adaptive_temperature", "ssmax"]

# What a run records about each normaliser (Normaliser.describe), as config.json has it.
INFO: dict[str, dict[str, Any]] = {
    "softmax": {"display_name": "softmax", "softmax_family": True, "train_with": "softmax",
                "length_scaled": False, "logit_bound": None},
    "adaptive_temperature": {"display_name": "adaptive θ", "softmax_family": True,
                             "train_with": "softmax", "length_scaled": False, "logit_bound": None},
    "ssmax": {"display_name": "SSMax (learned s)", "softmax_family": True, "train_with": "ssmax",
              "length_scaled": True, "logit_bound": None},
    "sparsemax": {"display_name": "sparsemax", "softmax_family": False,
                  "train_with": "sparsemax", "length_scaled": False, "logit_bound": None},
}  # fmt: skip

# Per-seed accuracies (fractions); adaptive θ is slightly ahead of softmax out of
# distribution, SSMax holds up.
ACCURACY = {
    "softmax": {16: [0.99, 0.98, 0.985], 256: [0.80, 0.82, 0.79], 1024: [0.52, 0.55, 0.50]},
    "adaptive_temperature": {
        16: [0.99, 0.98, 0.985],
        256: [0.81, 0.83, 0.80],
        1024: [0.56, 0.58, 0.55],
    },
    "ssmax": {16: [0.995, 0.99, 0.99], 256: [0.95, 0.96, 0.94], 1024: [0.90, 0.91, 0.88]},
}


def _row(name: str, seed: int, n: int) -> dict[str, Any]:
    family = name in ("softmax", "adaptive_temperature", "ssmax")
    p_max = 0.9 if name == "ssmax" else 8.0 / n
    return {
        "normaliser": name,
        "seed": seed,
        "n": n,
        "instances": 64,
        "accuracy": ACCURACY[name][n][seed],
        "p_max_mean": p_max,
        "p_max_median": p_max,
        "p_true_mean": p_max * 0.9,
        "entropy_mean": math.log(n) / 2,
        "delta_mean": 4.0 + seed,
        "delta_max": 6.0 + seed,
        "beta_mean": 1.2 if name == "adaptive_temperature" else 1.0,
        "gap_mean": 2.0,
        "one_hot_fraction": 0.0,
        "s": 0.6 if name == "ssmax" else math.nan,
        "s_gap_above_one": (0.9 if n < 1024 else 0.4) if name == "ssmax" else math.nan,
        "bound_violations": 0,
        "bound_ratio_max": 0.8 if family else math.nan,
        "bound_ratio_median": 0.3 if family else math.nan,
        "bound_median": (0.95 if n == 16 else 0.2) if family else math.nan,
        "fixed_theta_exceeded": 5 if name == "adaptive_temperature" else 0,
    }


def _heatmap(n: int) -> list[list[float | None]]:
    k = min(n, 16)
    rows: list[list[float | None]] = []
    for r in range(4):
        weights: list[float | None] = [0.5 / (i + 1 + r) for i in range(k)]
        rows.append(weights + [math.nan] * (16 - k))
    rows[0][-1] = None  # JSON null as well as NaN
    return rows


def synthetic_metrics() -> dict[str, Any]:
    return {
        "config": {
            "normalisers": NORMALISERS,
            "seeds": len(SEEDS),
            "sizes": SIZES,
            "train_sizes": [5, 16],
            "steps": 10,
            "batch": 8,
            "learning_rate": 0.003,
            "weight_decay": 0.001,
            "clip": 1.0,
            "width": 8,
            "classes": 10,
            "test_sets": 64,
            "chunk_items": 4096,
            "heatmap_sets": 4,
        },
        "preset": "quick",
        "device": "cpu",
        "versions": {"torch": "2.x", "softmax_dispersion": "0.1.0"},
        "normaliser_info": INFO,
        "training": [
            {
                "normaliser": name,
                "seed": seed,
                "ensemble": SEEDS,
                "ensemble_seconds": 4.5,
                "seconds_per_seed": 1.5,
                "steps_per_second": 6.7,
                "final_loss": 0.05,
                "curve": {"step": [0, 10], "p_top_16": [0.1, 0.9], "p_top_256": [0.01, 0.3]},
            }
            for name in ("softmax", "ssmax")
            for seed in SEEDS
        ],
        "rows": [_row(name, seed, n) for name in NORMALISERS for seed in SEEDS for n in SIZES],
        "heatmaps": {name: {str(n): _heatmap(n) for n in (1, *SIZES)} for name in NORMALISERS},
        "seconds": {"train": 9.0, "evaluate": 3.0, "total": 12.5},
    }


def _section(markdown: str, title: str) -> str:
    start = markdown.index(f"## {title}")
    end = markdown.find("\n## ", start + 1)
    return markdown[start : end if end >= 0 else None]


def _table_rows(section: str) -> list[list[str]]:
    return [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in section.splitlines()
        if line.startswith("|")
    ]


# statistics ---------------------------------------------------------------------------


def test_doctests() -> None:
    pytest.importorskip("scipy")
    for module in (statistics, pytest.importorskip("softmax_dispersion.empirical.plots")):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0
        assert result.attempted > 0


@pytest.mark.parametrize("values", [[0.5, 0.7], [1.0, 2.0, 4.0, 8.0], [0.98, 0.985, 0.99]])
def test_standard_error_matches_numpy(values: list[float]) -> None:
    mean, se = mean_and_standard_error(values)
    assert mean == pytest.approx(np.mean(values))
    assert se == pytest.approx(np.std(values, ddof=1) / np.sqrt(len(values)))


def test_standard_error_edge_cases() -> None:
    mean, se = mean_and_standard_error([0.3])
    assert mean == 0.3
    assert math.isnan(se)
    assert all(math.isnan(v) for v in mean_and_standard_error([]))
    assert mean_and_standard_error([1.0, math.nan, None, 3.0])[0] == 2.0


def test_paired_test_matches_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    a, b = [0.56, 0.58, 0.55, 0.61], [0.52, 0.55, 0.50, 0.60]
    assert paired_test(a, b) == pytest.approx(stats.ttest_rel(a, b).pvalue)


def test_paired_test_degenerate() -> None:
    assert paired_test([0.5], [0.4]) is None
    assert paired_test([0.5, math.nan], [0.4, 0.3]) is None
    assert paired_test([0.5, 0.6], [0.5, 0.6]) == 1.0
    assert paired_test([0.5, 0.75], [0.25, 0.5]) == 0.0


def test_summary_accuracy_and_paired() -> None:
    stats = pytest.importorskip("scipy.stats")
    summary = summarise(synthetic_metrics())
    cell = summary["accuracy"]["softmax"][1024]
    values = [100 * v for v in ACCURACY["softmax"][1024]]
    assert cell["mean"] == pytest.approx(np.mean(values))
    assert cell["se"] == pytest.approx(np.std(values, ddof=1) / np.sqrt(3))
    assert cell["seeds"] == 3
    assert set(summary["paired"]) == {"adaptive_temperature", "ssmax"}
    paired = summary["paired"]["adaptive_temperature"][1024]
    adaptive = [100 * v for v in ACCURACY["adaptive_temperature"][1024]]
    assert paired["difference"] == pytest.approx(np.mean(np.subtract(adaptive, values)))
    assert paired["p"] == pytest.approx(stats.ttest_rel(adaptive, values).pvalue)
    # Identical accuracies at n = 16: no evidence of a difference.
    assert summary["paired"]["adaptive_temperature"][16] == {
        "difference": 0.0,
        "p": 1.0,
        "p_holm": 1.0,
    }
    raw = {n: cell["p"] for n, cell in summary["paired"]["ssmax"].items()}
    assert {n: cell["p_holm"] for n, cell in summary["paired"]["ssmax"].items()} == holm(raw)
    assert "pairs are seeds" in summary["pairing"]


def test_summary_bound_escape_and_targets() -> None:
    pytest.importorskip("scipy")
    summary = summarise(synthetic_metrics())
    assert summary["passed"] is True
    bound = summary["bound"]
    assert set(bound) == {"softmax", "adaptive_temperature", "ssmax"}
    assert bound["softmax"]["rows_checked"] == 64 * 3 * 3
    assert bound["adaptive_temperature"]["fixed_theta_exceeded"] == 5 * 3 * 3
    assert bound["softmax"]["ratio_max"] == pytest.approx(0.8)
    assert bound["softmax"]["delta_mean"] == pytest.approx(5.0)
    assert summary["escape"]["ssmax"][1024]["s_gap_above_one"] == pytest.approx(0.4)
    assert "softmax" not in summary["escape"]
    assert summary["one_hot"] == {}
    targets = {t["name"]: t["passed"] for t in summary["targets"]}
    assert list(targets.values()) == [True, True, True]
    # Without certificates or T13 rows there is nothing that could have failed.
    assert summary["results"] == []
    assert all(c["kind"] == "consistency" and c["passed"] for c in summary["consistency"])
    json.dumps(summary, allow_nan=False)


def test_targets_report_failures_and_unmeasurable() -> None:
    pytest.importorskip("scipy")
    metrics = synthetic_metrics()
    for row in metrics["rows"]:
        if row["normaliser"] == "adaptive_temperature" and row["n"] == 1024:
            row["accuracy"] = 0.1
        if row["normaliser"] == "ssmax" and row["n"] == 16:
            row["accuracy"] = 0.9
    targets = summarise(metrics)["targets"]
    assert [t["passed"] for t in targets] == [False, True, False]
    assert "SSMax (learned s)" in targets[0]["detail"]
    assert "1024" in targets[2]["detail"]
    metrics["rows"] = [r for r in metrics["rows"] if r["n"] != 16]
    assert summarise(metrics)["targets"][0]["passed"] is None


# report -------------------------------------------------------------------------------


def test_markdown_accuracy_table_like_the_paper() -> None:
    pytest.importorskip("scipy")
    metrics = synthetic_metrics()
    markdown = render_markdown(metrics, summarise(metrics), [])
    rows = _table_rows(_section(markdown, "Accuracy"))
    assert rows[0] == ["n", *map(str, SIZES)]
    assert all(len(row) == len(SIZES) + 1 for row in rows)
    labels = [row[0] for row in rows]
    assert labels[2:5] == ["softmax", "adaptive θ", "SSMax (learned s)"]
    paper = rows[labels.index("paper: softmax")]
    assert paper[1:] == [f"{PAPER_ACCURACY[n]['softmax']:.1f}" for n in SIZES]
    assert rows[labels.index("paper: p")][1:] == ["0.4", "0.0002", "0.0001"]
    assert "p, Holm-adjusted (adaptive θ vs softmax)" in labels
    assert re.search(r"\| 98\.5 ± 0\.3 \|", markdown)
    assert "Veličković et al., ICML 2025, reported" in markdown
    assert "pairs are seeds" in markdown
    # Nothing here could have failed: the report must not call it a result.
    assert "**Result: no result checks were measured**" in markdown
    assert "a consistency check" in _section(markdown, "Per-row bound check")
    assert "## Length scaling" in markdown
    assert "## Training" in markdown
    assert "✓" in _section(markdown, "Expected shape")


def test_injected_violation_fails_the_run(tmp_path: Path) -> None:
    pytest.importorskip("scipy")
    metrics = synthetic_metrics()
    metrics["rows"][4]["bound_violations"] = 2
    summary = summarise(metrics)
    assert summary["passed"] is False
    assert summary["violations"] == 2
    markdown = render_markdown(metrics, summary, [])
    assert "**Result: FAILED** — 1 check(s) failed" in markdown
    assert "✗ | softmax: T1 and T10's floor with each row's own spread | 2 of" in markdown


def test_a_row_below_t10s_floor_fails_the_run() -> None:
    pytest.importorskip("scipy")
    metrics = synthetic_metrics()
    ssmax = next(row for row in metrics["rows"] if row["normaliser"] == "ssmax")
    ssmax["gap_floor_violations"] = 1
    summary = summarise(metrics)
    assert summary["passed"] is False
    assert summary["bound"]["ssmax"]["gap_floor_violations"] == 1
    assert "SSMax (learned s): T1 and T10's floor" in summary["failed"][0]


def test_sparse_section() -> None:
    pytest.importorskip("scipy")
    metrics = synthetic_metrics()
    for seed in SEEDS:
        for n in SIZES:
            row = _row("softmax", seed, n) | {
                "normaliser": "sparsemax",
                "one_hot_fraction": 0.25,
                "bound_ratio_max": math.nan,
                "bound_ratio_median": math.nan,
                "bound_median": math.nan,
            }
            metrics["rows"].append(row)
    summary = summarise(metrics)
    assert "sparsemax" not in summary["bound"]
    assert summary["one_hot"]["sparsemax"][256]["one_hot_fraction"] == pytest.approx(0.25)
    rows = _table_rows(_section(render_markdown(metrics, summary, []), "Sparse normalisers"))
    assert rows[-1] == ["sparsemax", "0.25", "0.25", "0.25"]


def _write_metrics(tmp_path: Path, metrics: dict[str, Any]) -> Path:
    # Python's json writes NaN as `NaN`, as the experiment does.
    (tmp_path / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    return tmp_path


def test_csv_round_trips(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("scipy")
    metrics = synthetic_metrics()
    metrics["rows"][0]["gap_mean"] = None
    run = _write_metrics(tmp_path, metrics)
    # The CSV needs no figures: leave matplotlib out to keep the test fast.
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    write_report(run)
    with (run / "metrics.csv").open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        assert tuple(reader.fieldnames or ()) == ROW_COLUMNS
        read = list(reader)
    assert len(read) == len(metrics["rows"])
    for original, line in zip(metrics["rows"], read, strict=True):
        assert line["normaliser"] == original["normaliser"]
        assert int(line["n"]) == original["n"]
        assert float(line["accuracy"]) == original["accuracy"]
        if isinstance(original["s"], float) and math.isnan(original["s"]):
            assert math.isnan(float(line["s"]))
    assert read[0]["gap_mean"] == ""


def test_write_report_files_and_figures(tmp_path: Path) -> None:
    pytest.importorskip("scipy")
    pytest.importorskip("matplotlib")
    run = _write_metrics(tmp_path, synthetic_metrics())
    written = write_report(run)
    names = {p.relative_to(run).as_posix() for p in written}
    assert {"metrics.csv", "summary.json", "report.md"} <= names
    figures = sorted(p for p in written if p.suffix == ".png")
    assert {p.name for p in figures} == {
        "accuracy.png",
        "p_max.png",
        "length_scaling.png",
        "learning_curves.png",
        "heatmap_softmax.png",
        "heatmap_adaptive_temperature.png",
        "heatmap_ssmax.png",
    }
    for path in figures:
        data = path.read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 1000
    report = (run / "report.md").read_text(encoding="utf-8")
    for path in figures:
        assert f"](figures/{path.name})" in report
    summary = json.loads(
        (run / "summary.json").read_text(encoding="utf-8"),
        parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"),
    )
    assert summary["passed"] is True


def test_heatmap_with_nan_and_null_only(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from softmax_dispersion.empirical.plots import heatmap_figure

    metrics = synthetic_metrics()
    metrics["heatmaps"] = {"softmax": {"16": [[None] * 16, [math.nan] * 16], "1": []}}
    path = heatmap_figure(json.loads(json.dumps(metrics)), "softmax", tmp_path / "h.png")
    assert path.read_bytes().startswith(b"\x89PNG")
    with pytest.raises(ValueError, match="no heat-map"):
        heatmap_figure(metrics, "ssmax", tmp_path / "none.png")


def test_report_without_matplotlib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("scipy")
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    written = write_report(tmp_path, copy.deepcopy(synthetic_metrics()))
    assert not any(p.suffix == ".png" for p in written)
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "matplotlib is not installed" in report


def test_size_one_is_reported_but_not_read_into() -> None:
    pytest.importorskip("scipy")
    metrics = synthetic_metrics()
    for name in NORMALISERS:
        for seed in SEEDS:
            row = _row(name, seed, 16) | {"n": 1, "accuracy": 1.0, "bound_median": 1.0}
            metrics["rows"].append(row | {"gap_mean": math.nan, "s_gap_above_one": math.nan})
    summary = summarise(metrics)
    assert summary["sizes"] == [1, *SIZES]
    assert summary["escape"]["ssmax"][1]["gap"] is None
    decline = summary["targets"][1]
    assert decline["passed"] is True
    assert decline["detail"].startswith("98.5% at n = 16")
    markdown = render_markdown(metrics, summary, [])
    # sΔ is undefined at n = 1: the sentence reads the sizes that have it.
    assert "sΔ > 1 holds for most sets at n = 16, 256" in _section(markdown, "Length scaling")


# results and consistency checks -------------------------------------------------------


def _certificate(
    name: str,
    seed: int,
    *,
    ratio: float = 0.999,
    bound: float = 0.4,
    exceeds: bool = False,
    short: bool = False,
    within: bool = True,
    inside: bool = True,
    crossing: int | None = 42,
) -> dict[str, Any]:
    worst = [
        {
            "n": n,
            "p_max": ratio * bound,
            "beta": 1.0,
            "bound": bound,
            "bound_low": 0.998 * bound,
            "ratio": ratio,
            "tolerance": 1e-6,
            "logit_error": 1e-7,
            "exceeds": exceeds,
            "short": short,
            "accuracy": 1.0 if n < 64 else 0.0,
            "decoy_p_max": bound,
        }
        for n in (16, 64, 256)
    ]
    return {
        "normaliser": name,
        "seed": seed,
        "delta": {"lower": "3.6972e+0", "upper": "3.6980e+0"},
        "logit_max": {"lower": "1.69e+0", "upper": "1.70e+0"},
        "logit_min": {"lower": "-2.00e+0", "upper": "-1.99e+0"},
        "argmax": {"priority": 1.0, "class": 6},
        "argmin": {"priority": 0.0, "class": 6},
        "relative_gap": 2e-4 if within else 0.05,
        "converged": within,
        "within_gap": within,
        "boxes": 160,
        "seconds": 0.2,
        "beta": "β = 1",
        "dispersion_size": {
            "half": {
                "lower": "4.133e+1",
                "upper": "4.137e+1",
                "least_size": 42,
                "least_size_exact": "42",
            },
            "hundredth": {
                "lower": "3.994e+3",
                "upper": "3.998e+3",
                "least_size": 3998,
                "least_size_exact": "3998",
            },
        },
        "sampled": {"largest": 1.69, "smallest": -1.99, "inside": inside},
        "worst_sets": worst,
        "crossing": crossing,
        "decoy": {"priority": 0.0, "class": 2},
        "run_length": {
            "half": {"size": "42", "p_max_upper": "4.9e-1", "at_most_level": True},
            "hundredth": {"size": "3998", "p_max_upper": "9.9e-3", "at_most_level": True},
        },
    }


def bounded_metrics(**overrides: Any) -> dict[str, Any]:
    metrics = synthetic_metrics()
    info = {"display_name": "soft-cap 2", "softmax_family": True, "train_with": "softcap2",
            "length_scaled": False, "logit_bound": 2.0}  # fmt: skip
    metrics["normaliser_info"] = INFO | {"softcap2": info}
    metrics["config"]["normalisers"] = [*NORMALISERS, "softcap2"]
    metrics["config"]["eta"] = 0.05
    for seed in SEEDS:
        for n in SIZES:
            metrics["rows"].append(
                _row("softmax", seed, n)
                | {
                    "normaliser": "softcap2",
                    "t13_sets": 64,
                    "t13_outside": 0.01,
                    "t13_mean_field_mean": 0.3,
                    "t13_lower_mean": 0.2,
                    "t13_upper_mean": 0.5,
                    "t13_bound_max": 1.0,
                }
            )
    metrics["certificates"] = {
        "softcap2": {str(seed): _certificate("softcap2", seed, **overrides) for seed in SEEDS}
    }
    metrics["gap_rows"] = [
        {"normaliser": "softcap2", "seed": seed, "lead": lead, "n": n, "instances": 8,
         "accuracy": 1.0, "p_true_mean": 0.9, "t13_outside": 0.0, "t13_mean_field_mean": 0.9,
         "t13_sets": 8}
        for seed in SEEDS for lead in (0.1, 0.5) for n in (16, 256)
    ]  # fmt: skip
    return metrics


def _checks(summary: dict[str, Any]) -> dict[str, bool | None]:
    return {c["name"]: c["passed"] for c in summary["results"]}


def test_a_bounded_run_reports_its_results() -> None:
    pytest.importorskip("scipy")
    metrics = bounded_metrics()
    summary = summarise(metrics)
    checks = _checks(summary)
    assert summary["passed"] is True
    assert set(checks.values()) == {True}
    # Results: only checks whose outcome the compared quantities do not settle.
    assert any("certified logit ranges" in name for name in checks)
    assert any("typical sets inside T13's bands" in name for name in checks)
    assert any("gap-controlled sets" in name for name in checks)
    assert len(checks) == 3
    # The worst sets and the crossing are fixed by the certificate for any correct
    # softmax: the forward pass agreeing with its certificate, a consistency check.
    consistency = {c["name"] for c in summary["consistency"]}
    assert any("agrees with its certificate on the worst sets" in n for n in consistency)
    assert any("≥ 0.95 × T1 bound" in n for n in consistency)
    assert any("falls below ½ is n*(½)" in n for n in consistency)
    markdown = render_markdown(metrics, summary, [])
    assert "**Result: passed** — 3 checks that could have failed passed" in markdown
    rows = _table_rows(_section(markdown, "Certified heads"))
    assert rows[2][:2] == ["soft-cap 2", "0"] and rows[2][4] == "42"
    assert "[3.6972, 3.698]" in rows[2][2]
    assert "## Worst sets through the trained models" in markdown
    assert "## Typical sets: T13's prediction" in markdown


@pytest.mark.parametrize(
    ("overrides", "failing"),
    [
        ({"exceeds": True}, "on the worst sets"),
        ({"short": True, "ratio": 0.5}, "on the worst sets"),
        ({"ratio": 0.9}, "≥ 0.95 × T1 bound"),
        ({"crossing": 20}, "falls below ½ is n*(½)"),
        ({"within": False}, "certified logit ranges"),
        ({"inside": False}, "certified logit ranges"),
    ],
)
def test_each_failed_result_fails_the_run(overrides: dict[str, Any], failing: str) -> None:
    pytest.importorskip("scipy")
    summary = summarise(bounded_metrics(**overrides))
    assert summary["passed"] is False
    assert any(failing in name for name in summary["failed"]), summary["failed"]
    assert "**Result: FAILED**" in render_markdown(bounded_metrics(**overrides), summary, [])


def test_t13_outside_beyond_eta_fails_the_run() -> None:
    pytest.importorskip("scipy")
    metrics = bounded_metrics()
    last = max(SIZES)
    for row in metrics["rows"]:
        if row["normaliser"] == "softcap2" and row["n"] == last:
            row["t13_outside"] = 0.2
    summary = summarise(metrics)
    assert summary["passed"] is False
    assert "typical sets inside T13's bands" in summary["failed"][0]
    detail = next(c["detail"] for c in summary["results"] if c["name"] == summary["failed"][0])
    assert f"rejected at n = {last}" in detail


def test_gap_controlled_sets_outside_beyond_eta_fail_the_run() -> None:
    pytest.importorskip("scipy")
    metrics = bounded_metrics()
    for row in metrics["gap_rows"]:
        row["t13_outside"] = 0.75  # 6 of 8 sets per seed: far beyond a rate of 0.05
    summary = summarise(metrics)
    assert summary["passed"] is False
    assert any("gap-controlled sets" in name for name in summary["failed"])


def test_t13_allows_a_count_above_eta_that_chance_explains() -> None:
    # 1 set of 16 outside is 0.0625 > η = 0.05, yet a rate of η gives one or more
    # outside with probability 0.56: not evidence against T13.
    from scipy.stats import binom

    from softmax_dispersion.empirical.verdicts import allowed_outside

    for sets in (1, 16, 64, 384, 1280):
        k = allowed_outside(sets, 0.05)
        assert binom.sf(k - 1, sets, 0.05) >= 0.01 > binom.sf(k, sets, 0.05) or k == sets
    assert allowed_outside(16, 0.05) == 3


def test_every_worst_set_check_is_a_consistency_check() -> None:
    pytest.importorskip("scipy")
    for overrides in ({}, {"bound": 1.0, "ratio": 1.0, "crossing": None}):
        summary = summarise(bounded_metrics(**overrides))
        assert not any("worst set" in c["name"] for c in summary["results"])
        assert any("worst sets" in c["name"] for c in summary["consistency"])


def test_the_length_scaling_sentence_reads_its_own_table() -> None:
    pytest.importorskip("scipy")
    metrics = synthetic_metrics()
    for row in metrics["rows"]:
        if row["normaliser"] == "ssmax":
            row["gap_floor_mean"] = 0.05
            row["p_max_mean"] = 0.6
    markdown = _section(render_markdown(metrics, summarise(metrics), []), "Length scaling")
    # p_max 0.6 far above a floor of 0.05 where sΔ > 1 holds for most sets: the report
    # must not say the head is sharp "exactly where" sΔ > 1.
    assert "exactly where" not in markdown
    assert "does not explain the weight" in markdown


def test_holm_adjusts_in_step_down_order() -> None:
    adjusted = holm({1: 0.01, 2: 0.02, 3: 0.03, 4: 0.5})
    assert adjusted == {1: 0.04, 2: 0.06, 3: 0.06, 4: 0.5}
    assert holm({}) == {}


def test_the_report_needs_no_torch(tmp_path: Path) -> None:
    pytest.importorskip("scipy")
    import subprocess

    run = _write_metrics(tmp_path, bounded_metrics())
    code = (
        "import sys\n"
        "class NoTorch:\n"  # any import of torch now fails, as without torch installed
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'torch' or name.startswith('torch.'):\n"
        "            raise ImportError('no torch here')\n"
        "sys.meta_path.insert(0, NoTorch())\n"
        "from softmax_dispersion.cli import main\n"
        f"status = main(['report', {str(run)!r}])\n"
        "assert 'torch' not in sys.modules\n"
        "print('status', status)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "status 0" in done.stdout
    assert (run / "report.md").is_file()
