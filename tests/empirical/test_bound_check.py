"""T1 held against attention weights: no false alarms on softmax, violations caught."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from softmax_dispersion.empirical.bound_check import (  # noqa: E402
    check_gap_floor,
    check_t1,
    t1_tolerance,
)
from softmax_dispersion.empirical.config import preset  # noqa: E402
from softmax_dispersion.empirical.evaluation import evaluate  # noqa: E402
from softmax_dispersion.empirical.model import MaxRetrievalModel  # noqa: E402
from softmax_dispersion.empirical.normalisers import Normalised, Normaliser, Softmax  # noqa: E402

DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def rows(shape: str, count: int, n: int, scale: float, seed: int) -> torch.Tensor:
    """Float64 rows: normal, uniform, a spike above zeros, or a spike below them."""
    generator = torch.Generator().manual_seed(seed)
    if shape == "normal":
        return torch.randn(count, n, generator=generator, dtype=torch.float64) * scale
    if shape == "uniform":
        return torch.rand(count, n, generator=generator, dtype=torch.float64) * scale
    z = torch.zeros(count, n, dtype=torch.float64)
    z[:, 0] = scale if shape == "spike" else -scale
    return z


@settings(max_examples=60)
@given(
    n=st.integers(1, 4096),
    scale=st.floats(1e-3, 2e3),
    shape=st.sampled_from(["normal", "uniform", "spike", "dip"]),
    dtype=st.sampled_from(DTYPES),
    seed=st.integers(0, 2**16),
)
def test_torch_softmax_never_violates_t1(
    n: int, scale: float, shape: str, dtype: torch.dtype, seed: int
) -> None:
    z = rows(shape, 3, n, scale, seed).to(dtype)
    weights = torch.softmax(z, dim=-1)
    check = check_t1(weights, z)
    assert not check.violations.any(), (check.ratio, check.tolerance)
    assert not check_gap_floor(weights, z).violations.any()
    assert torch.all(check.ratio <= 1 + check.tolerance)
    assert torch.all(check.lower <= check.upper)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("n", [2, 16, 1000, 4096])
@pytest.mark.parametrize("spread", [0.0, 0.5, 3.0, 12.0])
def test_the_spike_attains_the_bound(dtype: torch.dtype, n: int, spread: float) -> None:
    z = rows("spike", 1, n, spread, 0).to(dtype)
    check = check_t1(torch.softmax(z, dim=-1), z)
    assert not check.violations.any()
    assert abs(float(check.ratio[0]) - 1) <= float(check.tolerance[0])
    # The bound itself, independently: e^δ / (e^δ + n − 1).
    assert float(check.upper[0]) == pytest.approx(
        math.exp(spread) / (math.exp(spread) + n - 1), rel=1e-14
    )
    assert float(check.lower[0]) == pytest.approx(1 / (1 + (n - 1) * math.exp(spread)), rel=1e-14)


def test_a_single_item_is_bounded_by_one() -> None:
    z = torch.tensor([[3.0], [-7.0]])
    check = check_t1(torch.softmax(z, -1), z)
    assert check.upper.tolist() == [1.0, 1.0] and check.lower.tolist() == [1.0, 1.0]
    assert not check.violations.any()


def test_underflowed_weights_are_not_violations() -> None:
    # exp(−120) underflows in float32 (and is flushed in 16 bits): 0 is within float error.
    for dtype in DTYPES:
        z = torch.tensor([[0.0, -120.0], [0.0, -20.0], [0.0, -800.0]], dtype=dtype)
        assert not check_t1(torch.softmax(z, -1), z).violations.any(), dtype


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("factor", [1.5, 2.0])
def test_weights_sharpened_after_the_spread_was_measured_are_flagged(
    dtype: torch.dtype, factor: float
) -> None:
    # softmax(factor·z) reported with z: flagged exactly where it truly leaves T1's interval.
    generator = torch.Generator().manual_seed(3)
    gap = torch.rand(300, 1, generator=generator, dtype=torch.float64) * 3
    two_levels = (torch.arange(12) < 6).double() * gap  # half the items `gap` above the rest
    z = torch.cat([rows("normal", 300, 12, 1.5, 1), two_levels, rows("spike", 5, 12, 2.0, 0)])
    sharpened = torch.softmax(factor * z, dim=-1)
    check = check_t1(sharpened.to(dtype), z.to(dtype))
    spread = (z.amax(-1) - z.amin(-1)).numpy()
    upper = np.exp(spread) / (np.exp(spread) + 11)
    lower = 1 / (1 + 11 * np.exp(spread))
    top, bottom = sharpened.amax(-1).numpy(), sharpened.amin(-1).numpy()
    outside = (top > upper * (1 + 1e-4)) | (bottom < lower * (1 - 1e-4))
    inside = (top < upper * (1 - 1e-4)) & (bottom > lower * (1 + 1e-4))
    flagged = check.violations.numpy()
    assert flagged[outside].all() and not flagged[inside].any()
    assert flagged[-5:].all()  # every spike
    assert flagged[:300].all() if factor == 2 else 50 < inside.sum() < 300 < outside.sum()
    assert not check_t1(torch.softmax(z, -1).to(dtype), z.to(dtype)).violations.any()


def test_t1_tolerance_grows_with_n_and_spread() -> None:
    spread = torch.tensor([0.0, 1.0, 10.0, 100.0], dtype=torch.float64)
    by_n = [t1_tolerance(n, spread, torch.float32) for n in (1, 2, 16, 1024, 2**20)]
    for smaller, larger in itertools.pairwise(by_n):
        assert torch.all(smaller <= larger)
    assert torch.all(by_n[2] < by_n[4])
    for tolerance in by_n:
        assert torch.all(tolerance[:-1] < tolerance[1:])  # and with the spread
    u32 = 2.0**-24
    assert torch.all(by_n[2] > u32) and torch.all(by_n[2][:2] < 100 * u32)


def test_t1_tolerance_by_dtype() -> None:
    spread = torch.tensor([0.5, 5.0], dtype=torch.float64)
    tolerance = {dtype: t1_tolerance(64, spread, dtype) for dtype in DTYPES}
    assert torch.all(tolerance[torch.float64] < tolerance[torch.float32])
    assert torch.all(tolerance[torch.float32] < tolerance[torch.float16])
    assert torch.all(tolerance[torch.float16] < tolerance[torch.bfloat16])
    # 16-bit: accumulated in float32, then one rounding to the 16-bit output.
    assert torch.all(tolerance[torch.float16] >= 2.0**-11)
    assert torch.all(tolerance[torch.bfloat16] >= 2.0**-8)
    assert torch.all(tolerance[torch.float64] < 1e-12)


class Lying(Normaliser):
    """Returns ``softmax(3e)`` but claims to have exponentiated ``e``."""

    name = "lying"

    def forward(self, logits: torch.Tensor) -> Normalised:
        beta = torch.ones(logits.shape[:-1], dtype=logits.dtype)
        return Normalised(torch.softmax(3 * logits, dim=-1), logits, beta)


@pytest.mark.parametrize(("normaliser", "caught"), [(Lying, True), (Softmax, False)])
def test_evaluate_reports_violations_of_a_lying_head(
    normaliser: type[Normaliser], caught: bool
) -> None:
    config = preset("quick", sizes=(2, 8, 64), test_sets=64, width=8)
    head = normaliser(2)
    model = MaxRetrievalModel(head, features=11, width=8, classes=10, seeds=[0, 1]).eval()
    rows = evaluate(model, config, [0, 1], [head.name]).rows
    assert len(rows) == 6
    violations = [row["bound_violations"] for row in rows]
    if caught:
        assert all(v > 0 for v in violations), violations
        assert max(row["bound_ratio_max"] for row in rows) > 1
    else:
        assert violations == [0] * 6
        assert all(row["bound_ratio_max"] <= 1 + 1e-5 for row in rows)


def test_the_gap_floor_is_t10s_formula_and_is_attained_by_the_spike() -> None:
    # One logit ahead of n − 1 equal ones by Δ: the top weight is exactly the floor.
    for n, lead in [(2, 0.0), (16, 3.0), (4096, 9.0)]:
        z = rows("spike", 1, n, lead, 0)
        check = check_gap_floor(torch.softmax(z, dim=-1), z)
        exact = 1 / (1 + (n - 1) * math.exp(-lead))
        assert math.isclose(float(check.floor[0]), exact, rel_tol=1e-12)
        assert math.isclose(float(torch.softmax(z, -1)[0, 0]), exact, rel_tol=1e-12)
        assert not check.violations.any()


def test_weights_flattened_after_the_gap_was_measured_are_flagged() -> None:
    z = torch.tensor([[4.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]], dtype=torch.float64)
    check = check_gap_floor(torch.softmax(z / 2, dim=-1), z)
    assert check.violations.tolist() == [True, False]  # an all-equal row has floor 1/n
    assert check_gap_floor(torch.ones(3, 1), torch.zeros(3, 1)).floor.tolist() == [1.0] * 3


class Flattening(Normaliser):
    """Returns ``softmax(e)`` but claims to have exponentiated ``100 e``.

    (An untrained head's logits are within about 0.01 of each other, so the claimed
    lead has to be large for its floor to stand out from the float tolerance.)
    """

    name = "flattening"

    def forward(self, logits: torch.Tensor) -> Normalised:
        beta = torch.full(logits.shape[:-1], 100.0, dtype=logits.dtype)
        return Normalised(torch.softmax(logits, dim=-1), 100 * logits, beta)


def test_evaluate_reports_heads_below_t10s_floor() -> None:
    config = preset("quick", sizes=(8, 64), test_sets=64, width=8)
    head = Flattening(2)
    model = MaxRetrievalModel(head, features=11, width=8, classes=10, seeds=[0, 1]).eval()
    rows = evaluate(model, config, [0, 1], [head.name]).rows
    assert all(row["gap_floor_violations"] > 0 for row in rows)
    honest = MaxRetrievalModel(Softmax(2), features=11, width=8, classes=10, seeds=[0, 1])
    rows = evaluate(honest.eval(), config, [0, 1], ["softmax"]).rows
    assert [row["gap_floor_violations"] for row in rows] == [0] * 4
    assert all(0 < row["gap_floor_mean"] <= row["p_max_mean"] for row in rows)
