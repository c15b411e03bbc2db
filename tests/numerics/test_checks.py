"""Certified bound checks: T1/T2 on every family, T4, T10, T11, and injected faults."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from softmax_dispersion.numerics import _backends, flint_available
from softmax_dispersion.numerics import evaluate as evaluate_module
from softmax_dispersion.numerics.checks import (
    DISPERSION_BOUNDS,
    Bound,
    adaptive_on_spike,
    check_dispersion,
    check_dispersion_size,
    length_scaling_regimes,
)
from softmax_dispersion.numerics.families import FAMILIES, dip, spike, two_level
from softmax_dispersion.numerics.sequence import LogitSequence
from softmax_dispersion.theory.symbols import c, n

ENGINES = ["arb", "mpmath"] if flint_available() else ["mpmath"]  # arb is optional
SIZES = [16, 1024, 2**20, 10**18]


def significant_digits(text: str) -> int:
    mantissa = text.split("e")[0].lstrip("-").replace(".", "").lstrip("0")
    return len(mantissa)


def all_decimal_strings(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("lower", "upper"):
                yield item
            else:
                yield from all_decimal_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from all_decimal_strings(item)


# ---------------------------------------------------------------------------------------
# T1 and T2.


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("size", SIZES)
def test_spike_attains_the_upper_bound_and_dip_the_lower(size: int, engine: str) -> None:
    top = check_dispersion(spike(size, 5), theta="0.7", engine=engine)
    assert top.bound("T1 upper").verdict == "attained"
    assert top.bound("T1 upper").slack.contains(Fraction(0))
    assert top.bound("T2 upper").verdict == "holds"  # c/n is loose by (n−1)/(c+n−1)
    assert top.verdict == "attained"
    bottom = check_dispersion(dip(size, 5), theta="0.7", engine=engine)
    assert bottom.bound("T1 lower").verdict == "attained"
    assert bottom.bound("T1 upper").verdict == "holds"
    assert bottom.bound("T2 lower").verdict == "holds"


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(n for n, f in FAMILIES.items() if f.finite))
def test_no_family_violates_t1_or_t2(name: str, engine: str) -> None:
    family = FAMILIES[name]
    params: dict[str, object] = {"n": max(family.min_n, 64)}
    if family.takes("delta"):
        params["delta"] = 3
    if family.takes("k_high"):
        params["k_high"] = 5
    result = check_dispersion(family.build(**params), engine=engine)
    assert result.verdict in ("holds", "attained")
    for check in result.bounds:
        assert check.verdict != "violated"


@pytest.mark.parametrize("engine", ENGINES)
def test_huge_magnitudes_are_decided_by_the_ladder(engine: str) -> None:
    row = FAMILIES["huge_magnitude"].build(n=8, scale=1e300)
    result = check_dispersion(row, engine=engine)
    assert result.verdict != "undecided" and not result.violated
    if engine == "arb":
        assert result.precision > 1000  # arb's exp(−2e300) needs about 1100 bits


@settings(max_examples=40)
@given(
    logits=st.lists(st.floats(-30, 30, allow_nan=False), min_size=1, max_size=12),
    theta=st.sampled_from(["0.25", "1", "3.5"]),
)
def test_random_rows_never_violate(logits: list[float], theta: str) -> None:
    result = check_dispersion(LogitSequence.from_array(np.array(logits)), theta=theta)
    assert not result.violated


def test_spread_is_exact_not_a_float_subtraction() -> None:
    row = LogitSequence.from_array(np.array([-1e-20, 0.5, 1.0]))
    result = check_dispersion(row)
    assert 1.0 - (-1e-20) == 1.0  # the float subtraction loses the small logit
    assert result.spread == Fraction(1.0) + Fraction(1e-20)
    assert result.to_dict()["spread"]["exact"] == str(Fraction(1.0) + Fraction(1e-20))


def test_to_dict_has_thirty_significant_digits() -> None:
    payload = check_dispersion(spike(10**18, 5), engine="mpmath").to_dict()
    strings = list(all_decimal_strings(payload))
    assert len(strings) >= 4 * 3 + 2
    for text in strings:
        assert text == "0" or significant_digits(text) >= 30, text


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match="sequence must be finite"):
        check_dispersion(FAMILIES["masked"].build(n=4))
    with pytest.raises(ValueError, match="theta must be a number > 0"):
        check_dispersion(spike(4, 1), theta=0)
    with pytest.raises(ValueError, match="a bound may use only"):
        check_dispersion(spike(4, 1), bounds=[Bound("bad", c / foreign_symbol(), "upper")])


def foreign_symbol() -> Any:
    import sympy as sp  # after the theory layer: no python-flint ground types

    return sp.Symbol("k")


# ---------------------------------------------------------------------------------------
# Injected faults.


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("size", [16, 10**18])
def test_a_wrong_bound_is_reported_violated(size: int, engine: str) -> None:
    wrong = Bound("c/(c+n)", c / (c + n), "upper")  # one term short of T1's c/(c+n−1)
    result = check_dispersion(spike(size, 5), bounds=[*DISPERSION_BOUNDS, wrong], engine=engine)
    assert result.bound("c/(c+n)").verdict == "violated"
    assert result.violated
    assert result.bound("T1 upper").verdict == "attained"
    wrong_lower = Bound("1/n", 1 / n, "lower")  # the uniform value is no lower bound
    assert check_dispersion(dip(size, 5), bounds=[wrong_lower]).violated


@dataclass
class CountDroppingBackend:
    """An engine that loses one logit of every run: it reads a multiplicity k as k − 1."""

    inner: Any

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def number(self, value: Any) -> Any:
        if isinstance(value, int) and value > 1:
            value -= 1
        return self.inner.number(value)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("size", [16, 10**18])
def test_an_engine_that_drops_a_term_is_caught(
    size: int, engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not check_dispersion(spike(size, 5), engine=engine).violated
    monkeypatch.setattr(
        evaluate_module, "backend", lambda name=None: CountDroppingBackend(_backends.backend(name))
    )
    faulty = check_dispersion(spike(size, 5), engine=engine)
    assert faulty.bound("T1 upper").verdict == "violated"


class MissingRun(LogitSequence):
    """A spike whose evaluation forgets its long run (the engine sees one run less)."""

    @property
    def runs(self) -> tuple[tuple[float, int], ...]:
        return super().runs[1:]


def test_tiny_and_large_spreads_do_not_fake_attainment() -> None:
    assert check_dispersion(two_level(10, 3, 2.0**-1000)).verdict == "holds"
    assert check_dispersion(two_level(10, 3, 300), theta="0.5").verdict == "holds"
    assert check_dispersion(spike(10, 2.0**-1000)).verdict == "attained"


def test_a_sequence_missing_a_run_is_caught() -> None:
    whole = spike(1024, 5)
    broken = MissingRun(whole.values, whole.counts)
    assert broken.n == whole.n
    result = check_dispersion(broken)
    assert result.bound("T1 upper").verdict == "violated"
    assert result.p_max.contains(Fraction(1))


# ---------------------------------------------------------------------------------------
# T4: the dispersion size.


def reference_size(epsilon: str, delta: str, theta: str) -> int:
    with mpmath.workdps(80):
        eps = mpmath.mpf(Fraction(epsilon).numerator) / Fraction(epsilon).denominator
        d, t = mpmath.mpf(delta), mpmath.mpf(theta)
        return int(mpmath.ceil(1 + mpmath.exp(d / t) * (1 - eps) / eps))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("epsilon", "delta", "theta"),
    [("0.01", "3", "1"), ("0.5", "0.1", "0.3"), ("0.001", "40", "1"), ("1e-6", "5", "0.25")],
)
def test_dispersion_size_is_where_the_spike_drops_below_epsilon(
    epsilon: str, delta: str, theta: str, engine: str
) -> None:
    result = check_dispersion_size(epsilon, delta, theta, engine=engine)
    assert result.verified
    assert result.at_size_verdict == "holds"
    assert result.size == reference_size(epsilon, delta, theta)
    assert result.n_star.contains(Fraction(result.size) - 1) is False
    payload = result.to_dict()
    assert payload["verified"] and significant_digits(payload["at_size"]["lower"]) >= 30


def test_dispersion_size_at_zero_spread_is_attained() -> None:
    result = check_dispersion_size("0.1", 0)
    assert (result.size, result.at_size_verdict, result.verified) == (10, "attained", True)


def test_dispersion_size_needing_many_bits() -> None:
    result = check_dispersion_size("1e-6", 1000)  # n* ≈ e^1000 · 10^6: about 1463 bits
    assert result.verified and result.size.bit_length() == 1463
    with pytest.raises(ValueError, match="delta/theta"):
        check_dispersion_size("0.1", 10**6)
    with pytest.raises(ValueError, match="epsilon must be a number strictly between 0 and 1"):
        check_dispersion_size(1, 2)


# ---------------------------------------------------------------------------------------
# T10: length scaling.


@pytest.mark.parametrize(
    ("s", "delta", "regime", "limit"),
    [(2, 1, "sδ > 1", 1), (1, 1, "sδ = 1", Fraction(1, 2)), ("0.5", 1, "sδ < 1", 0)],
)
def test_length_scaling_regimes_tend_to_one_half_zero(
    s: object, delta: object, regime: str, limit: Fraction
) -> None:
    report = length_scaling_regimes(s, delta, sizes=(16, 10**6, 10**12, 10**18))
    assert report.regime == regime and report.limit == limit
    assert report.agrees and report.approaches_limit
    last = report.rows[-1]
    assert last.n == 10**18
    assert Fraction(last.distance_to_limit.midpoint()) < Fraction(1, 10**8)
    assert all(significant_digits(t) >= 30 for t in all_decimal_strings(report.to_dict()))


def test_length_scaling_with_the_ssmax_figure_values() -> None:
    report = length_scaling_regimes("0.43", 5, sizes=(10, 10**18), engine="mpmath")
    assert report.regime == "sδ > 1" and report.agrees


# ---------------------------------------------------------------------------------------
# T11: adaptive temperature on the spike.


@pytest.mark.parametrize("engine", ENGINES)
def test_adaptive_beta_is_exactly_one_past_the_threshold(engine: str) -> None:
    delta = 2
    before = math.floor(math.exp(delta + 3.5))  # log n − δ ≈ 3.5: the rule sharpens
    after = math.ceil(math.exp(delta + 6.0))  # log n − δ ≈ 6.0 > τ ≈ 5.94452
    report = adaptive_on_spike(delta, sizes=(before, after, 10**18), engine=engine)
    sharpened, saturated, far = report.rows
    assert sharpened.beta_above_one and not sharpened.beta_is_one
    assert not sharpened.past_threshold
    assert saturated.past_threshold and saturated.past_root
    assert saturated.beta_is_one and far.beta_is_one
    assert saturated.inverse_temperature.lower == saturated.inverse_temperature.upper == (1, 0)
    assert report.consistent
    assert report.returns_to_one == after
    assert report.crossover is not None and before < report.crossover <= after
    assert report.guaranteed_from is not None and report.guaranteed_from <= after
    for enclosure, digits in (
        (report.threshold, "5.94452120956165405"),
        (report.root, "5.94452082790514286"),
    ):
        assert abs(Fraction(enclosure.midpoint()) - Fraction(digits)) < Fraction(1, 10**15)


def test_adaptive_sharpening_stays_under_the_t11_bound() -> None:
    report = adaptive_on_spike(3, sizes=(16, 64, 256, 1024))
    for row in report.rows:
        assert row.bound_verdict in ("holds", "attained")
        assert Fraction(row.inverse_temperature.midpoint()) <= Fraction("2.4213877067")
    assert report.consistent


def test_adaptive_crossover_at_zero_spread_is_at_the_root() -> None:
    report = adaptive_on_spike(0, sizes=(64, 1024))
    assert report.crossover == 382  # log 381 < r_high ≈ 5.944521 < log 382
    assert math.log(381) < 5.9445208279 < math.log(382)
    payload = report.to_dict()
    assert re.match(r"^5\.945420", payload["crossover_log_n_minus_delta"]["lower"])
