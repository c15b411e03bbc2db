"""Certified evaluation: enclosures contain independent 300-digit values; faults are caught."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from softmax_dispersion.numerics import (
    FORMATS,
    LogitSequence,
    PrecisionError,
    certified_entropy,
    certified_logsumexp,
    certified_softmax,
    flint_available,
    round_dyadic,
)
from softmax_dispersion.numerics.evaluate import Enclosure, Evaluation, RunValue

ENGINES = ["mpmath", "arb"] if flint_available() else ["mpmath"]


def as_fraction(value: mpmath.mpf) -> Fraction:
    sign, mantissa, exponent, _ = value._mpf_
    return (-1) ** sign * Fraction(int(mantissa)) * Fraction(2) ** int(exponent)


def reference(sequence: LogitSequence, theta: Fraction, log: bool) -> dict[float, Fraction]:
    """Each run's coefficient at 300 digits, by the definition (independent of the engine)."""
    with mpmath.workdps(300):
        t = mpmath.mpf(theta.numerator) / theta.denominator
        weights = {v: mpmath.exp(mpmath.mpf(v) / t) for v in sequence.values}
        total = mpmath.fsum(c * weights[v] for v, c in sequence.runs)
        return {
            v: as_fraction(mpmath.log(weights[v] / total) if log else weights[v] / total)
            for v in sequence.values
        }


def encloses(evaluation: Evaluation, expected: dict[float, Fraction]) -> bool:
    return all(run.enclosure.contains(expected[run.logit]) for run in evaluation.runs)


runs = st.lists(
    st.tuples(st.floats(-40, 40, allow_nan=False), st.integers(1, 10**18)),
    min_size=1,
    max_size=6,
)
thetas = st.sampled_from([Fraction(1), Fraction(1, 2), Fraction(3), Fraction(7, 10)])


@settings(max_examples=40)
@given(pairs=runs, theta=thetas, log=st.booleans(), engine=st.sampled_from(ENGINES))
def test_enclosures_contain_the_300_digit_value(
    pairs: list[tuple[float, int]], theta: Fraction, log: bool, engine: str
) -> None:
    sequence = LogitSequence.from_runs(pairs)
    evaluation = certified_softmax(sequence, theta=theta, log=log, format=None, engine=engine)
    assert encloses(evaluation, reference(sequence, theta, log))


@settings(max_examples=40)
@given(pairs=runs, name=st.sampled_from(sorted(FORMATS)), log=st.booleans())
def test_certified_roundings_are_the_correct_roundings(
    pairs: list[tuple[float, int]], name: str, log: bool
) -> None:
    sequence = LogitSequence.from_runs(pairs)
    evaluation = certified_softmax(sequence, log=log, format=name)
    assert evaluation.certified
    expected = reference(sequence, Fraction(1), log)
    for run in evaluation.runs:
        exact = expected[run.logit]
        scale = 2**4000
        rounded = round_dyadic((round(exact * scale), -4000), FORMATS[name])
        assert run.enclosure.rounded == rounded


def test_spike_at_every_scale_costs_two_terms() -> None:
    for n in (16, 1024, 2**20, 10**18):
        evaluation = certified_softmax(LogitSequence.from_runs([(5.0, 1), (0.0, n - 1)]))
        assert evaluation.certified and len(evaluation.runs) == 2


def test_non_finite_semantics() -> None:
    inf, nan = math.inf, math.nan
    shared = certified_softmax(LogitSequence.from_runs([(inf, 4), (3.0, 7), (-inf, 2)]))
    assert [r.enclosure.rounded for r in shared.runs] == [0.0, 0.0, 0.25]
    logs = certified_softmax(LogitSequence.from_runs([(inf, 4), (3.0, 7)]), log=True)
    assert logs.value_of(3.0).enclosure.rounded == -inf
    assert logs.value_of(inf).enclosure.rounded == pytest.approx(-math.log(4), rel=1e-15)
    masked = certified_softmax(LogitSequence.from_runs([(-inf, 5), (1.0, 2)]))
    assert [r.enclosure.rounded for r in masked.runs] == [0.0, 0.5]
    assert certified_softmax(LogitSequence.from_runs([(nan, 1), (1.0, 2)])).status == "nan"
    undefined = certified_softmax(LogitSequence.from_runs([(-inf, 3)]))
    assert undefined.status == "undefined" and "undefined" in undefined.note


def test_huge_magnitudes_and_underflow() -> None:
    evaluation = certified_softmax(
        LogitSequence.from_runs([(1e300, 1), (-1e300, 3), (1e300 - 2**960, 1)]), format="float32"
    )
    assert evaluation.certified
    assert [r.enclosure.rounded for r in evaluation.runs] == [0.0, 0.0, 1.0]


def test_logsumexp_and_entropy() -> None:
    uniform = LogitSequence.from_runs([(0.0, 2**20)])
    assert certified_logsumexp(uniform).rounded == float(20 * mpmath.log(2))
    assert certified_entropy(uniform).rounded == float(20 * mpmath.log(2))
    spike = LogitSequence.from_runs([(5.0, 1), (0.0, 15)])
    with mpmath.workdps(60):
        p = mpmath.exp(5) / (mpmath.exp(5) + 15)
        q = 1 / (mpmath.exp(5) + 15)
        h = -(p * mpmath.log(p) + 15 * q * mpmath.log(q))
    assert certified_entropy(spike).rounded == float(h)


def test_bad_input_is_named() -> None:
    spike = LogitSequence.from_runs([(1.0, 1), (0.0, 1)])
    with pytest.raises(ValueError, match="theta must be a number > 0"):
        certified_softmax(spike, theta=0)
    with pytest.raises(ValueError, match="unknown float format"):
        certified_softmax(spike, format="float8")
    with pytest.raises(ValueError, match="unknown engine"):
        certified_softmax(spike, engine="gpu")
    with pytest.raises(PrecisionError, match="below the 85 bits"):
        certified_softmax(spike, max_precision=40)
    with pytest.raises(ValueError, match="multiplicities"):
        LogitSequence.from_runs([(1.0, 0)])
    with pytest.raises(ValueError, match="n >= 1"):
        LogitSequence.from_array([])


# --- injected faults: each must be caught by the checks above -------------------------


def test_a_dropped_term_is_caught() -> None:
    sequence = LogitSequence.from_runs([(2.0, 3), (0.0, 5), (-1.0, 2)])
    expected = reference(sequence, Fraction(1), False)
    dropped = LogitSequence.from_runs([(2.0, 3), (0.0, 5)])  # an engine that skips a run
    faulty = certified_softmax(dropped, format=None)
    assert not all(run.enclosure.contains(expected[run.logit]) for run in faulty.runs)


def test_an_enclosure_shrunk_by_one_ulp_is_caught() -> None:
    """Uniform rows of 2**k have exact coefficients 2**-k; shrinking excludes them."""
    sequence = LogitSequence.from_runs([(0.0, 2**10)])
    run = certified_softmax(sequence, format=None).runs[0]
    exact = Fraction(1, 2**10)
    assert run.enclosure.contains(exact)
    lower, upper = run.enclosure.lower, run.enclosure.upper
    bits = 120
    shrunk = Enclosure(
        (lower[0] * 2**bits + 1, lower[1] - bits), (upper[0] * 2**bits - 1, upper[1] - bits)
    )
    assert not shrunk.contains(exact)
    faulty = Evaluation("softmax", (RunValue(0.0, 2**10, shrunk),), "ok", None, False, 85, "x")
    assert not encloses(faulty, reference(sequence, Fraction(1), False))
