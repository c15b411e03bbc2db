"""Evaluation: one row per (normaliser, seed, size), aggregated correctly over chunks."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from softmax_dispersion.empirical.config import ExperimentConfig, preset  # noqa: E402
from softmax_dispersion.empirical.evaluation import HEATMAP_ITEMS, evaluate  # noqa: E402
from softmax_dispersion.empirical.evaluation import evaluation_chunks as draw_chunks  # noqa: E402
from softmax_dispersion.empirical.model import MaxRetrievalModel  # noqa: E402
from softmax_dispersion.empirical.training import build_model  # noqa: E402

CPU = torch.device("cpu")
SEEDS = [0, 1]


def config(**overrides: Any) -> ExperimentConfig:
    # chunk_items=100 splits every size into several chunks (1 set per chunk at n = 64).
    base = {"sizes": (1, 4, 16, 64), "test_sets": 24, "width": 8, "chunk_items": 100}
    return preset("quick", **(base | overrides))


def untrained(name: str, cfg: ExperimentConfig, seeds: list[int] = SEEDS) -> MaxRetrievalModel:
    model = build_model(cfg, name, seeds, CPU).eval()
    if name == "ssmax":
        model.normaliser.s.data = torch.tensor([0.5, 2.0])
    return model


def same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Rows equal field by field, NaN equal to NaN."""
    return a.keys() == b.keys() and all(
        a[k] == b[k] or (isinstance(a[k], float) and math.isnan(a[k]) and math.isnan(b[k]))
        for k in a
    )


def test_one_row_per_normaliser_seed_and_size() -> None:
    cfg = config()
    names = ["softmax", "adaptive_temperature"]
    result = evaluate(untrained("softmax", cfg), cfg, SEEDS, names)
    keys = [(row["normaliser"], row["seed"], row["n"]) for row in result.rows]
    assert sorted(keys) == sorted((a, s, n) for a in names for s in SEEDS for n in cfg.sizes)
    for row in result.rows:
        assert row["instances"] == cfg.test_sets
        assert 0 <= row["accuracy"] <= 1
        assert 1 / row["n"] - 1e-6 <= row["p_max_mean"] <= 1 and row["p_true_mean"] <= 1
        assert 0 <= row["entropy_mean"] <= math.log(row["n"]) + 1e-6
        assert row["bound_violations"] == 0 and row["bound_ratio_max"] <= 1 + 1e-5
    assert set(result.heatmaps) == set(names)
    for by_size in result.heatmaps.values():
        assert set(by_size) == set(cfg.sizes)
        for n, heatmap in by_size.items():
            assert 1 <= len(heatmap) <= min(cfg.heatmap_sets, cfg.test_sets)
            assert all(len(r) == HEATMAP_ITEMS for r in heatmap)
            assert all(math.isnan(v) == (i >= n) for r in heatmap for i, v in enumerate(r))


def test_the_heatmap_has_heatmap_sets_rows_whatever_the_chunking() -> None:
    cfg = config(sizes=(64,), heatmap_sets=4)  # 1 set per chunk
    result = evaluate(untrained("softmax", cfg), cfg, SEEDS, ["softmax"])
    assert len(result.heatmaps["softmax"][64]) == cfg.heatmap_sets


def test_chunking_changes_no_result() -> None:
    # Each test set has its own seed: memory settings cannot move the measurements.
    small = config(sizes=(4, 64))
    large = config(sizes=(4, 64), chunk_items=10**6)
    model = untrained("softmax", small)
    chunked = evaluate(model, small, SEEDS, ["softmax", "adaptive_temperature"])
    whole = evaluate(model, large, SEEDS, ["softmax", "adaptive_temperature"])
    for a, b in zip(chunked.rows, whole.rows, strict=True):
        # Same sets; only the matrix products' blocking differs with the batch size.
        for key in ("accuracy", "bound_violations"):
            assert a[key] == b[key], key
        for key in ("delta_mean", "delta_max", "gap_mean", "p_max_mean", "entropy_mean"):
            assert math.isclose(a[key], b[key], rel_tol=1e-4), key
    for name, maps in chunked.heatmaps.items():
        for n, rows in maps.items():
            # Four significant digits are stored: a last digit may round either way.
            np.testing.assert_allclose(rows, whole.heatmaps[name][n], rtol=2e-3)


def test_evaluation_is_deterministic() -> None:
    cfg = config(sizes=(4, 64))
    model = untrained("ssmax", cfg)
    first = evaluate(model, cfg, SEEDS, ["ssmax"])
    second = evaluate(model, cfg, SEEDS, ["ssmax"])
    assert len(first.rows) == len(second.rows) == 4
    assert all(same(a, b) for a, b in zip(first.rows, second.rows, strict=True))
    assert first.heatmaps.keys() == second.heatmaps.keys() == {"ssmax"}
    for n, heatmap in first.heatmaps["ssmax"].items():
        np.testing.assert_array_equal(heatmap, second.heatmaps["ssmax"][n])  # NaN == NaN
    assert [row["s"] for row in first.rows] == [0.5, 2.0, 0.5, 2.0]


def test_rows_aggregate_every_chunk() -> None:
    # The summaries over chunks equal the same statistics of all test sets at once.
    cfg = config(sizes=(16,), test_sets=30, chunk_items=16 * 7)  # chunks of 7, 7, 7, 7, 2 sets
    model = untrained("softmax", cfg)
    chunks = list(draw_chunks(cfg, SEEDS, 16, CPU))
    assert [items.shape[1] for items, _ in chunks] == [7, 7, 7, 7, 2]
    items = torch.cat([items for items, _ in chunks], dim=1)
    target = torch.cat([batch.target for _, batch in chunks], dim=1)
    top = torch.cat([batch.top for _, batch in chunks], dim=1)
    with torch.no_grad():
        out = model(items)
    weights = out.attention.weights.double()
    spread = (out.logits.amax(-1) - out.logits.amin(-1)).double()
    rows = evaluate(model, cfg, SEEDS, ["softmax"]).rows
    for member, row in enumerate(rows):
        accuracy = (out.class_logits[member].argmax(-1) == target[member]).double().mean()
        assert row["accuracy"] == pytest.approx(float(accuracy), abs=1e-12)
        assert row["p_max_mean"] == pytest.approx(float(weights[member].amax(-1).mean()))
        p_true = weights[member].gather(-1, top[member][:, None]).mean()
        assert row["p_true_mean"] == pytest.approx(float(p_true))
        assert row["delta_mean"] == pytest.approx(float(spread[member].mean()))
        assert row["delta_max"] == pytest.approx(float(spread[member].max()))


@pytest.mark.parametrize("chunk_items", [1, 50, 64, 1000, 10**6])
@pytest.mark.parametrize("n", [1, 7, 64, 200])
def test_chunks_are_bounded_and_cover_every_set(chunk_items: int, n: int) -> None:
    cfg = config(test_sets=13, chunk_items=chunk_items)
    sets = 0
    for items, batch in draw_chunks(cfg, SEEDS, n, CPU):
        assert items.shape[0] == len(SEEDS) and items.shape[2:] == (n, 1 + cfg.classes)
        assert items.shape[1] * n <= chunk_items or items.shape[1] == 1
        assert batch.target.shape == batch.top.shape == items.shape[:2]
        assert torch.equal(items, batch.items)
        sets += items.shape[1]
    assert sets == cfg.test_sets


def test_a_seeds_test_sets_do_not_depend_on_the_other_seeds() -> None:
    cfg = config(test_sets=10, chunk_items=64)
    pair = torch.cat([items for items, _ in draw_chunks(cfg, [3, 5], 16, CPU)], dim=1)
    alone = torch.cat([items for items, _ in draw_chunks(cfg, [5], 16, CPU)], dim=1)
    other_size = torch.cat([items for items, _ in draw_chunks(cfg, [5], 17, CPU)], dim=1)
    assert torch.equal(pair[1], alone[0])
    assert not torch.equal(pair[0], pair[1])
    assert not torch.equal(alone[0, :, :16], other_size[0, :, :16])


def test_adaptive_rows_share_the_logits_of_softmax_rows() -> None:
    cfg = config(sizes=(4, 16, 64))
    rows = evaluate(untrained("softmax", cfg), cfg, SEEDS, ["softmax", "adaptive_temperature"]).rows
    by_key = {(row["normaliser"], row["seed"], row["n"]): row for row in rows}
    for seed in SEEDS:
        for n in cfg.sizes:
            softmax = by_key["softmax", seed, n]
            adaptive = by_key["adaptive_temperature", seed, n]
            for field in ("delta_mean", "delta_max", "gap_mean", "instances"):
                assert adaptive[field] == softmax[field], field
            assert softmax["beta_mean"] == 1 and 1 <= adaptive["beta_mean"] <= 2.4214
            # β >= 1 only sharpens: the largest weight cannot fall.
            assert adaptive["p_max_mean"] >= softmax["p_max_mean"] - 1e-7
            assert adaptive["bound_violations"] == 0


def test_length_scaled_rows_record_s() -> None:
    cfg = config(sizes=(16,))
    ssmax = evaluate(untrained("ssmax", cfg), cfg, SEEDS, ["ssmax"]).rows
    logn = evaluate(untrained("logn", cfg), cfg, SEEDS, ["logn"]).rows
    softmax = evaluate(untrained("softmax", cfg), cfg, SEEDS, ["softmax"]).rows
    assert [row["s"] for row in ssmax] == [0.5, 2.0] and [row["s"] for row in logn] == [1.0, 1.0]
    for row, s in zip(ssmax, (0.5, 2.0), strict=True):
        assert row["beta_mean"] == pytest.approx(s * math.log(16), rel=1e-6)
        assert 0 <= row["s_gap_above_one"] <= 1
    assert all(math.isnan(row["s"]) and math.isnan(row["s_gap_above_one"]) for row in softmax)


@pytest.mark.parametrize("name", ["entmax15", "sparsemax"])
def test_sparse_rows_have_no_bound_fields(name: str) -> None:
    pytest.importorskip("entmax")
    cfg = config(sizes=(1, 4, 64))
    model = untrained(name, cfg)
    # Spread the logits so that some rows are one-hot and some are not.
    model.query.data *= 300
    rows = evaluate(model, cfg, SEEDS, [name]).rows
    assert len(rows) == 6
    for row in rows:
        for field in ("bound_ratio_max", "bound_ratio_median", "bound_median"):
            assert math.isnan(row[field]), field
        assert row["bound_violations"] == 0 and row["fixed_theta_exceeded"] == 0
        assert 0 <= row["one_hot_fraction"] <= 1 and row["beta_mean"] == 1
    assert all(row["one_hot_fraction"] == 1 for row in rows if row["n"] == 1)
    fractions = [row["one_hot_fraction"] for row in rows if row["n"] > 1]
    assert any(0 < f < 1 for f in fractions), fractions
