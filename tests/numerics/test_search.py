"""The adversarial search converges to the spike and never beats T1's upper bound."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from softmax_dispersion.numerics import flint_available
from softmax_dispersion.numerics.search import MAX_SEARCH_N, adversarial_search

ENGINES = ["arb", "mpmath"] if flint_available() else ["mpmath"]  # arb is optional


@pytest.mark.parametrize(
    ("n", "delta", "theta"),
    [(2, 1, 1), (8, 3, 1), (16, 0.5, "0.25"), (33, 10, 2), (64, 2, "1.5"), (12, 20, "0.3")],
)
def test_search_converges_to_the_spike(n: int, delta: object, theta: object) -> None:
    result = adversarial_search(n, delta, theta, starts=3, seed=1)
    assert result.is_spike
    assert result.verdict == "attained" and not result.exceeded
    assert sorted(result.logits) == [0.0] * (n - 1) + [float(delta)]
    assert result.to_dict()["is_spike"] is True


@pytest.mark.parametrize("engine", ENGINES)
def test_search_certifies_with_either_engine(engine: str) -> None:
    result = adversarial_search(5, 4, engine=engine, starts=2)
    assert result.is_spike and result.verdict == "attained"
    assert result.bound.contains(Fraction(0)) is False


@settings(max_examples=25)
@given(
    n=st.integers(1, 10),
    delta=st.sampled_from([0.0, 0.01, 0.5, 1.0, 2.5, 7.0, 25.0]),
    theta=st.sampled_from(["0.2", "1", "4"]),
    seed=st.integers(0, 2**16),
)
def test_search_never_exceeds_the_bound(n: int, delta: float, theta: str, seed: int) -> None:
    result = adversarial_search(n, delta, theta, starts=2, seed=seed, grid=4)
    assert not result.exceeded
    assert result.verdict == "attained"  # the spike is found, and it attains the bound
    assert result.is_spike


def test_a_box_below_delta_stays_strictly_below_the_bound() -> None:
    result = adversarial_search(7, "0.1", 3)  # the box top is the float just below 1/10
    assert result.is_spike and max(result.logits) < Fraction(1, 10)
    assert result.verdict == "holds"


def test_search_leaves_global_precision_alone() -> None:
    before = mpmath.mp.prec
    adversarial_search(4, 2, precision=300)
    assert mpmath.mp.prec == before


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"n": 0, "delta": 1}, "n"),
        ({"n": MAX_SEARCH_N + 1, "delta": 1}, "n"),
        ({"n": 4, "delta": -1}, "delta"),
        ({"n": 4, "delta": 1, "theta": 0}, "theta"),
        ({"n": 4, "delta": 1, "starts": 0}, "starts"),
        ({"n": 4, "delta": 1, "precision": 10}, "precision"),
        ({"n": 4, "delta": 1, "seed": "x"}, "seed"),
    ],
)
def test_bad_input_names_the_argument(kwargs: dict[str, object], argument: str) -> None:
    with pytest.raises(ValueError, match=rf"^{argument}\b"):
        adversarial_search(**kwargs)  # type: ignore[arg-type]
