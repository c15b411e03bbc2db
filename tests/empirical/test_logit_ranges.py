"""Certified logit ranges: the logit map, its ball enclosures, branch and bound, n*.

The certificate must hold for every item of the domain, so the tests compare it with
dense float64 samples of the same function, with the model's own float32 logits, and
with T4's formula evaluated independently in mpmath; planted bugs (a stale certificate,
an enclosure that forgets GELU's dip, a loose enclosure) must be caught.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import mpmath
import numpy as np
import pytest

torch = pytest.importorskip("torch")
flint = pytest.importorskip("flint")

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from softmax_dispersion.empirical import logit_function as logit_module  # noqa: E402
from softmax_dispersion.empirical.config import preset  # noqa: E402
from softmax_dispersion.empirical.logit_function import (  # noqa: E402
    LogitFunction,
    load_logit_function,
    logit_function,
)
from softmax_dispersion.empirical.logit_ranges import (  # noqa: E402
    CERTIFICATE_GAP,
    certify_logit_range,
    decimal,
    head_certificate,
    sampled_range,
)
from softmax_dispersion.empirical.training import build_model  # noqa: E402

CPU = torch.device("cpu")


def dense(fn: LogitFunction, points: int = 4001) -> np.ndarray[Any, Any]:
    grid = np.linspace(0.0, 1.0, points)
    return fn(grid[:, None], np.arange(fn.classes)[None, :])


@pytest.mark.parametrize("name", ["softmax", "softcap2", "qknorm3"])
def test_the_logit_map_is_the_models_logit(name: str) -> None:
    config = preset("quick", width=16, normalisers=(name,))
    model = build_model(config, name, [3, 4], CPU).eval()
    items = torch.rand(2, 5, 7, 11, generator=torch.Generator().manual_seed(0))
    items[..., 1:] = torch.nn.functional.one_hot(torch.arange(7) % 10, 10).float()
    with torch.no_grad():
        logits = model.attention_logits(items)[0]
    for member, seed in enumerate([3, 4]):
        fn = logit_function(model, member, seed)
        assert fn.kind == {"softmax": "dot", "softcap2": "softcap", "qknorm3": "qknorm"}[name]
        expected = fn(items[member, ..., 0].double().numpy(), np.arange(7) % 10)
        np.testing.assert_allclose(logits[member].double().numpy(), expected, atol=2e-5)


@given(
    low=st.floats(0, 1),
    width=st.floats(0, 0.3),
    label=st.integers(0, 9),
    seed=st.integers(0, 3),
    kind=st.sampled_from(["dot", "softcap", "qknorm"]),
)
def test_enclosures_contain_every_sampled_logit(
    low: float, width: float, label: int, seed: int, kind: str
) -> None:
    fn = _kind(LogitFunction.random(width=6, seed=seed), kind)
    high = min(1.0, low + width)
    lo, hi = fn.enclosure(low, high, label)
    values = fn(np.linspace(low, high, 64), label)
    slack = 1e-12 * max(1.0, float(np.abs(values).max()))
    assert float(lo) <= values.min() + slack and values.max() - slack <= float(hi)


def _kind(fn: LogitFunction, kind: str) -> LogitFunction:
    if kind == "softcap":
        return replace(fn, kind="softcap", cap=1.5)
    if kind == "qknorm":
        return replace(fn, kind="qknorm", cap=3.0, scale_logit=0.25)
    return fn


def test_point_balls_contain_the_float64_value() -> None:
    fn = LogitFunction.random(width=8, seed=5)
    for p in (0.0, 0.3, 1.0):
        ball = fn.point(p, 4)
        assert (
            ball.contains(flint.arb(float(fn(p, 4)))) or abs(float(ball.mid()) - fn(p, 4)) < 1e-12
        )


@pytest.mark.parametrize("kind", ["dot", "softcap", "qknorm"])
@pytest.mark.parametrize("seed", [0, 1])
def test_branch_and_bound_brackets_the_dense_range(kind: str, seed: int) -> None:
    fn = _kind(LogitFunction.random(width=8, seed=seed), kind)
    found = certify_logit_range(fn, gap=1e-4)
    assert found.converged and found.relative_gap <= 1e-4
    values = dense(fn)
    slack = 1e-9
    assert float(found.max_low) <= values.max() + slack <= float(found.max_high) + 2 * slack
    assert float(found.min_low) - slack <= values.min() <= float(found.min_high) + slack
    # The extremes found are items the model can be fed: float32 priorities.
    for priority, _ in (found.argmax, found.argmin):
        assert float(np.float32(priority)) == priority


def test_a_restricted_search_finds_the_lowest_item_of_other_classes() -> None:
    fn = LogitFunction.random(width=8, seed=2)
    found = certify_logit_range(fn, gap=1e-4)
    others = [c for c in range(10) if c != found.argmax[1]]
    decoy = certify_logit_range(fn, gap=1e-4, labels=others)
    assert decoy.argmin[1] in others
    values = dense(fn)[:, others]
    assert float(decoy.min_low) - 1e-9 <= values.min() <= float(decoy.min_high) + 1e-9


def test_a_head_with_nan_logits_is_refused() -> None:
    fn = LogitFunction.random(width=4, seed=0)
    broken = replace(fn, query=fn.query * math.nan)
    with pytest.raises(ValueError, match="not finite"):
        certify_logit_range(broken)


def _dip_head() -> LogitFunction:
    """One hidden unit whose logit is −GELU(z), z running over [−2, 1]: the maximum lies
    at GELU's minimiser inside the interval, not at its ends."""
    fn = LogitFunction.random(width=1, seed=0)
    first = np.zeros((11, 1))
    first[0, 0] = 3.0  # z = 3p − 2
    return replace(
        fn,
        first_weight=first,
        first_bias=np.array([-2.0]),
        second_weight=np.array([[1.0]]),
        second_bias=np.array([0.0]),
        key_weight=np.array([[1.0]]),
        key_bias=np.array([0.0]),
        query=np.array([-1.0]),
    )


def test_the_interior_maximum_of_gelus_dip_is_certified() -> None:
    fn = _dip_head()
    found = certify_logit_range(fn, gap=1e-6)
    with mpmath.workdps(30):
        slope = lambda x: mpmath.ncdf(x) + x * mpmath.npdf(x)  # noqa: E731
        x0 = mpmath.findroot(slope, -0.75)  # GELU's minimiser
        peak = -x0 * mpmath.ncdf(x0)
        assert mpmath.mpf(_exact(found.max_low)) <= peak <= mpmath.mpf(_exact(found.max_high))
    assert abs(found.argmax[0] - (float(x0) + 2) / 3) < 1e-3


def _exact(point: Any) -> str:
    mantissa, exponent = point.man_exp()
    return str(mpmath.ldexp(mpmath.mpf(int(mantissa)), int(exponent)))


def test_planted_bug_an_enclosure_that_forgets_gelus_dip_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The bug: GELU treated as monotone on every interval (bounded by its end values).
    def monotone(self: Any, low: float, high: float, label: int) -> tuple[Any, Any]:
        with flint.ctx.workprec(logit_module.GELU_BITS):
            ends = (self._hidden_at(low, label), self._hidden_at(high, label))
            lows = [logit_module._lower(a, b) for a, b in zip(*ends, strict=True)]
            highs = [logit_module._upper(a, b) for a, b in zip(*ends, strict=True)]
            return self._logit(lows, highs, None)

    monkeypatch.setattr(logit_module._BallWeights, "enclosure", monotone)
    fn = _dip_head()
    found = certify_logit_range(fn, gap=1e-3, pieces=2)
    record = head_certificate(found, normaliser="softmax", seed=0, sampled=sampled_range(fn))
    assert record["sampled"]["inside"] is False


def test_planted_bug_a_stale_certificate_is_caught() -> None:
    fn = LogitFunction.random(width=8, seed=1)
    found = certify_logit_range(fn)
    retrained = replace(fn, query=fn.query * 1.05)  # the weights moved after certifying
    record = head_certificate(found, normaliser="softmax", seed=0, sampled=sampled_range(retrained))
    assert record["sampled"]["inside"] is False
    fresh = head_certificate(found, normaliser="softmax", seed=0, sampled=sampled_range(fn))
    assert fresh["sampled"]["inside"] is True


def test_planted_bug_a_loose_enclosure_fails_the_gap(monkeypatch: pytest.MonkeyPatch) -> None:
    original = logit_module._BallWeights.enclosure

    def loose(self: Any, low: float, high: float, label: int) -> tuple[Any, Any]:
        lo, hi = original(self, low, high, label)
        return lo - 1, hi + 1  # a constant excess that splitting never removes

    monkeypatch.setattr(logit_module._BallWeights, "enclosure", loose)
    fn = LogitFunction.random(width=6, seed=0)
    found = certify_logit_range(fn, max_boxes=400)
    record = head_certificate(found, normaliser="softmax", seed=0)
    assert not found.converged and record["within_gap"] is False
    assert found.relative_gap > CERTIFICATE_GAP


def _mp_dispersion_size(delta: float, beta: float, epsilon: mpmath.mpf) -> mpmath.mpf:
    with mpmath.workdps(40):
        return 1 + mpmath.exp(mpmath.mpf(beta) * mpmath.mpf(delta)) * (1 - epsilon) / epsilon


@pytest.mark.parametrize("beta", [1, 2])
def test_dispersion_sizes_are_t4_at_the_certified_spread(beta: int) -> None:
    fn = LogitFunction.random(width=6, seed=4)
    found = certify_logit_range(fn, gap=1e-6)
    record = head_certificate(found, normaliser="softmax", seed=0, beta=beta)
    low, high = float(found.spread_low), float(found.spread_high)
    for name, epsilon in (("half", mpmath.mpf(1) / 2), ("hundredth", mpmath.mpf(1) / 100)):
        level = record["dispersion_size"][name]
        assert float(level["lower"]) <= _mp_dispersion_size(low, beta, epsilon) * (1 + 1e-12)
        assert float(level["upper"]) >= _mp_dispersion_size(high, beta, epsilon) * (1 - 1e-12)
        least = int(level["least_size_exact"])
        assert least - 1 < float(level["upper"]) <= least
    assert record["delta"]["lower"] <= record["delta"]["upper"] or float(
        record["delta"]["lower"]
    ) <= float(record["delta"]["upper"])


def test_no_dispersion_size_without_a_fixed_beta() -> None:
    fn = LogitFunction.random(width=4, seed=0)
    record = head_certificate(certify_logit_range(fn), normaliser="ssmax", seed=0, beta=None)
    assert record["dispersion_size"] is None


def test_decimal_strings_round_outwards() -> None:
    third = flint.arb(1) / 3
    assert decimal(third, "down", 6) == "3.33333e-1"
    assert decimal(third, "up", 6) == "3.33334e-1"


@pytest.mark.slow
def test_load_logit_function_returns_the_trained_heads_map(tmp_path: Any) -> None:
    from softmax_dispersion.empirical.experiment import run_experiment

    config = preset(
        "quick",
        normalisers=("softcap2",),
        seeds=2,
        steps=30,
        width=8,
        sizes=(16,),
        test_sets=8,
        gap_sets=0,
        adversarial_sizes=(16, 64),
    )
    metrics = run_experiment(config, tmp_path / "run", progress="off", log=lambda _: None)
    certificate = metrics["certificates"]["softcap2"]["1"]
    fn = load_logit_function(tmp_path / "run", "softcap2", 1)
    top = fn(certificate["argmax"]["priority"], certificate["argmax"]["class"])
    bottom = fn(certificate["argmin"]["priority"], certificate["argmin"]["class"])
    assert (
        float(certificate["logit_max"]["lower"]) <= top <= float(certificate["logit_max"]["upper"])
    )
    assert (
        float(certificate["logit_min"]["lower"])
        <= bottom
        <= float(certificate["logit_min"]["upper"])
    )
    assert np.abs(dense(fn, 501)).max() < 2.0  # the cap
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        load_logit_function(tmp_path / "run", "softcap2", 7)
