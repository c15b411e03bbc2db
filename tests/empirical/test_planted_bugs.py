"""Every check the report calls a result, seen to fail on a bug planted in a trained head.

Three heads are trained here (a dot-product softmax head, a soft-capped head and an
SSMax head) and then given the bugs that a wrong normaliser would have: weights computed
from twice the logits (scaled), from half of them (flattened), or without the inverse
temperature the head reports (a missing β).  The checks must stay silent on the honest
heads and catch each bug at the sizes the presets report.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("flint")

from softmax_dispersion.empirical.adversarial import (  # noqa: E402
    adversarial_rows,
    crossing_size,
)
from softmax_dispersion.empirical.config import ExperimentConfig, preset  # noqa: E402
from softmax_dispersion.empirical.evaluation import evaluate, evaluate_gap_sets  # noqa: E402
from softmax_dispersion.empirical.logit_function import LogitFunction, logit_function  # noqa: E402
from softmax_dispersion.empirical.logit_ranges import (  # noqa: E402
    certify_logit_range,
    head_certificate,
)
from softmax_dispersion.empirical.model import MaxRetrievalModel  # noqa: E402
from softmax_dispersion.empirical.normalisers import (  # noqa: E402
    Normalised,
    ScalableSoftmax,
    Softmax,
)
from softmax_dispersion.empirical.training import train  # noqa: E402
from softmax_dispersion.empirical.typical import Band, TypicalSetLaw  # noqa: E402
from softmax_dispersion.empirical.verdicts import (  # noqa: E402
    allowed_outside,
    dispersion_summary,
    pooled_counts,
    t13_test,
)

pytestmark = pytest.mark.slow

ETA = 0.05
TYPICAL_SIZES = (1024, 4096)
"""Where the quick preset's T13 band is narrow enough to catch a bug (it reports 16–4096)."""
WORST_SIZES = (16, 64, 256, 1024, 65536)
"""Sizes of the bounded preset's worst sets (it reports 16 up to 10⁶)."""


class Scaled(Softmax):
    """The bug: weights from twice the logits, reported as a softmax of the logits."""

    def forward(self, logits: torch.Tensor) -> Normalised:
        out = super().forward(logits)
        return Normalised(torch.softmax(2 * logits, dim=-1), out.exponentiated, out.beta)


class Flattened(Softmax):
    """The bug: weights from half the logits."""

    def forward(self, logits: torch.Tensor) -> Normalised:
        out = super().forward(logits)
        return Normalised(torch.softmax(logits / 2, dim=-1), out.exponentiated, out.beta)


class MissingBeta(ScalableSoftmax):
    """The bug: SSMax reporting β = s log n but returning softmax(e)."""

    def forward(self, logits: torch.Tensor) -> Normalised:
        out = super().forward(logits)
        return Normalised(torch.softmax(logits, dim=-1), out.exponentiated, out.beta)


def _config(name: str) -> ExperimentConfig:
    return preset("quick", normalisers=(name,), width=32, steps=600, test_sets=128, eta=ETA)


@pytest.fixture(scope="module")
def heads() -> dict[str, tuple[MaxRetrievalModel, LogitFunction, Any, TypicalSetLaw]]:
    trained = {}
    for name in ("softmax", "softcap2", "ssmax"):
        model = train(_config(name), name, [0]).model
        fn = logit_function(model, 0, 0)
        trained[name] = (model, fn, certify_logit_range(fn, gap=1e-3), TypicalSetLaw(fn))
    return trained


def _buggy(cls: type[Softmax], model: MaxRetrievalModel) -> Softmax:
    bug = cls(1)
    if isinstance(bug, ScalableSoftmax) and isinstance(model.normaliser, ScalableSoftmax):
        bug.s.data.copy_(model.normaliser.s.data)
    return bug


def _worst(heads: dict[str, Any], normaliser: Softmax | None = None) -> list[dict[str, Any]]:
    model, fn, found, _ = heads["softcap2"]
    used = model.normaliser if normaliser is None else normaliser
    return adversarial_rows(model, {"softcap2": used}, [fn], [found], WORST_SIZES)["softcap2"][0]


def test_the_honest_bounded_head_sits_on_t1s_bound(heads: dict[str, Any]) -> None:
    rows = _worst(heads)
    assert not any(row["exceeds"] or row["short"] for row in rows)
    assert min(row["ratio"] for row in rows) >= 0.95
    assert all(row["bound"] < 1 - 1e-3 for row in rows)  # the check has power here


def test_planted_bug_scaled_weights_exceed_t1s_bound(heads: dict[str, Any]) -> None:
    model = heads["softcap2"][0]
    rows = _worst(heads, _buggy(Scaled, model))
    assert all(row["exceeds"] for row in rows), [(r["n"], r["ratio"]) for r in rows]


def test_planted_bug_flattened_weights_fall_short_of_t1s_bound(heads: dict[str, Any]) -> None:
    model = heads["softcap2"][0]
    rows = _worst(heads, _buggy(Flattened, model))
    assert all(row["short"] for row in rows), [(r["n"], r["ratio"]) for r in rows]
    assert min(row["ratio"] for row in rows) < 0.95


def test_planted_bug_a_loose_certificate_leaves_the_worst_sets_below_095_of_t1(
    heads: dict[str, Any],
) -> None:
    # A certificate whose upper end of the logit range is 1 too high (δ* over-stated):
    # the real model's worst sets then fall well short of "its" T1 bound.
    model, fn, found, _ = heads["softcap2"]
    loose = replace(found, max_high=found.max_high + 1)
    rows = adversarial_rows(model, {"softcap2": model.normaliser}, [fn], [loose], WORST_SIZES)
    ratios = [row["ratio"] for row in rows["softcap2"][0]]
    assert min(ratios) < 0.95, ratios
    assert not any(row["exceeds"] for row in rows["softcap2"][0])


def test_planted_bug_a_flattened_head_disperses_before_its_certified_size(
    heads: dict[str, Any],
) -> None:
    model, fn, found, _ = heads["softcap2"]
    record = head_certificate(found, normaliser="softcap2", seed=0)

    def verdict(normaliser: Softmax) -> bool:
        measured = crossing_size(model, normaliser, [fn], [found], 10**6)[0]
        metrics = {"certificates": {"softcap2": {"0": record | {"crossing": measured}}}}
        return bool(dispersion_summary(metrics)["softcap2"][0]["agrees"])

    assert verdict(model.normaliser)
    assert not verdict(_buggy(Flattened, model))
    assert not verdict(_buggy(Scaled, model))


def _t13_outside(
    heads: dict[str, Any], name: str, normaliser: Softmax | None = None
) -> list[float]:
    model, _, _, law = heads[name]
    config = replace(_config(name), sizes=TYPICAL_SIZES)
    modules = None if normaliser is None else {name: normaliser}
    rows = evaluate(model, config, [0], [name], laws=[law], modules=modules).rows
    assert all(row["t13_sets"] == config.test_sets for row in rows)
    return [row["t13_outside"] for row in rows]


@pytest.mark.parametrize("name", ["softmax", "softcap2", "ssmax"])
def test_honest_trained_heads_stay_inside_t13s_band(heads: dict[str, Any], name: str) -> None:
    assert all(outside <= ETA for outside in _t13_outside(heads, name))


@pytest.mark.parametrize("bug", [Scaled, Flattened])
def test_planted_bug_scaled_or_flattened_weights_leave_t13s_band(
    heads: dict[str, Any], bug: type[Softmax]
) -> None:
    model = heads["softmax"][0]
    outside = _t13_outside(heads, "softmax", _buggy(bug, model))
    assert max(outside) > 0.5, outside


def test_planted_bug_a_missing_beta_leaves_t13s_band(heads: dict[str, Any]) -> None:
    model = heads["ssmax"][0]
    outside = _t13_outside(heads, "ssmax", _buggy(MissingBeta, model))
    assert min(outside) > 0.5, outside


GAP_LEAD = 0.05
"""The quick preset's smallest lead: there the top weight of a trained head falls with n."""


def _gap_outside(
    heads: dict[str, Any], name: str, normaliser: Softmax | None = None
) -> list[tuple[int, int]]:
    """(sets outside, allowed) per size on gap-controlled sets with the smallest lead."""
    model, _, _, law = heads[name]
    config = replace(_config(name), gap_leads=(GAP_LEAD,), gap_sizes=TYPICAL_SIZES, gap_sets=64)
    modules = None if normaliser is None else {name: normaliser}
    rows = evaluate_gap_sets(model, config, [0], [name], laws=[law], modules=modules)
    assert [row["t13_sets"] for row in rows] == [config.gap_sets] * len(TYPICAL_SIZES)
    return [
        (round(row["t13_outside"] * row["t13_sets"]), allowed_outside(row["t13_sets"], ETA))
        for row in rows
    ]


def test_honest_trained_head_keeps_gap_controlled_sets_inside_t13s_band(
    heads: dict[str, Any],
) -> None:
    assert all(k <= allowed for k, allowed in _gap_outside(heads, "softmax"))


def test_planted_bug_flattened_weights_leave_t13s_band_on_gap_controlled_sets(
    heads: dict[str, Any],
) -> None:
    model = heads["softmax"][0]
    cells = _gap_outside(heads, "softmax", _buggy(Flattened, model))
    assert any(k > allowed for k, allowed in cells), cells


def test_planted_bug_a_missing_beta_leaves_t13s_band_on_gap_controlled_sets(
    heads: dict[str, Any],
) -> None:
    model = heads["ssmax"][0]
    cells = _gap_outside(heads, "ssmax", _buggy(MissingBeta, model))
    assert any(k > allowed for k, allowed in cells), cells


class PlantedLaw(TypicalSetLaw):
    """The bug: a law whose I is ``factor`` times the head's (its band shifts with it)."""

    def __init__(self, law: TypicalSetLaw, factor: float) -> None:
        self.__dict__.update(law.__dict__)
        self.factor = factor

    def band(self, *args: Any, **kwargs: Any) -> Any:
        band = super().band(*args, **kwargs)
        lower, upper = Band.edges(band, kwargs["eta"], self.factor)
        return replace(band, mean=band.mean * self.factor, lower=lower, upper=upper)


def _t13_counts(heads: dict[str, Any], law: TypicalSetLaw) -> dict[int, Any]:
    model = heads["softmax"][0]
    config = replace(_config("softmax"), sizes=TYPICAL_SIZES)
    rows = evaluate(model, config, [0], ["softmax"], laws=[law]).rows
    return {row["n"]: pooled_counts([row]) for row in rows}


@pytest.mark.parametrize("factor", [0.75, 0.9, 1.1, 1.25])
def test_t13s_power_estimate_agrees_with_a_planted_law(
    heads: dict[str, Any], factor: float
) -> None:
    # The power the run reports comes from holding its sets to planted laws inside the
    # evaluation; a law really off by the factor, checked as the run checks its own law,
    # must be rejected exactly when the estimate says it would be.
    honest = _t13_counts(heads, heads["softmax"][3])
    estimate = t13_test(honest)["detected"]["I"][str(factor)]
    planted = _t13_counts(heads, PlantedLaw(heads["softmax"][3], factor))
    assert t13_test(planted)["within"] is (not estimate)
    assert t13_test(honest)["within"]
    if abs(factor - 1) >= 0.25:
        assert estimate, f"a law off by {factor} goes undetected at n = {TYPICAL_SIZES}"
