"""The oracle's allowances cover T12's Flocq-proved bounds for the max-shifted softmax.

T12's Coq theorems ``T12_max_shift`` and ``T12_reciprocal`` (``theory/coq/T12.v``) prove,
for binary32 and binary64 with round to nearest, any summation order and an exp of ``k``
ulps (``exp_rel = 2ku``, ``exp_abs = k·2**emin``), that the computed ``p̂_i`` (divided by
the sum, or multiplied by its rounded reciprocal) is a float within ``B_i`` of the exact
``p_i`` (and, for the division, in ``[0, 1]``), ``B_i`` the package's
:data:`~softmax_dispersion.theory.rounding_error.softmax_rigorous_error_bound` or
:data:`~softmax_dispersion.theory.rounding_error.softmax_reciprocal_rigorous_error_bound`.
The oracle compares an output with the correctly rounded reference ``ref_i``, so every
output the theorems admit must pass: ``|p̂ − ref_i| <= allowance_i`` for the extreme floats
``RD(p_i + B_i)`` and ``RU(p_i − B_i)``.

Everything is exact: ``p_i``, the mean gap and ``B_i`` are arb balls (the formulas
evaluated by :func:`~softmax_dispersion.numerics.ball_formulas.ball_value`, never retyped),
the float grid is walked in fractions, and the allowance (a float64) is compared as the
exact number it is.  The grid: both formats, row lengths 2 to 4099, and logit
configurations from ties to masked-like gaps, including outputs in the subnormal range,
where the absolute terms decide.  (Rows of one visible entry are left out: the oracle
allows them nothing, rightly, as every formulation computes ``exp(0)/exp(0) = 1``
exactly, which the theorems do not state.)
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt
import pytest
import sympy as sp

from softmax_dispersion.numerics._backends import backend
from softmax_dispersion.numerics.ball_formulas import ball_value
from softmax_dispersion.numerics.dense import certified_softmax_dense
from softmax_dispersion.numerics.rounding import FORMATS
from softmax_dispersion.testing.tolerance import Tolerance, allowed_error
from softmax_dispersion.theory.formulas import Formula
from softmax_dispersion.theory.rounding_error import (
    exp_log_softmax_rigorous_conditions,
    exp_log_softmax_rigorous_error_bound,
    exp_lse_rigorous_conditions,
    exp_lse_rigorous_error_bound,
    gamma_recursive,
    softmax_reciprocal_rigorous_conditions,
    softmax_reciprocal_rigorous_error_bound,
    softmax_rigorous_conditions,
    softmax_rigorous_error_bound,
)

pytest.importorskip("flint")

PRECISION = 256  # bits of the balls: far more than the float64 allowances need
FORMATS_PROVED = ("float32", "float64")
THEOREMS: dict[str, tuple[Formula, tuple[object, ...], bool]] = {
    # the proved bound, its side conditions, and whether the theorem keeps p̂ <= 1
    "T12_max_shift (divide)": (softmax_rigorous_error_bound, softmax_rigorous_conditions, True),
    "T12_reciprocal": (
        softmax_reciprocal_rigorous_error_bound,
        softmax_reciprocal_rigorous_conditions,
        False,
    ),
    "T12_exp_log": (
        exp_log_softmax_rigorous_error_bound,
        exp_log_softmax_rigorous_conditions,
        False,
    ),
    "T12_exp_lse": (exp_lse_rigorous_error_bound, exp_lse_rigorous_conditions, False),
}
"""The Coq theorems whose admitted outputs an allowance must pass: the default model
covers all four formulations (the log-sum-exp form where its bound is at most
``VALID_UP_TO``, as the oracle documents: every row here is), the strict model the
max-shifted two."""
STRICT = ("T12_max_shift (divide)", "T12_reciprocal")


@dataclass(frozen=True)
class Coverage:
    """The tightest element of one row: the allowance and the worst admitted error.

    ``normal_ratio`` is the smallest allowance/error ratio among the elements whose
    reference is a normal float (where the relative terms decide, not the floor).
    """

    allowance: Fraction
    worst: Fraction
    index: int
    normal_ratio: float = math.inf

    @property
    def ratio(self) -> float:
        return math.inf if self.worst == 0 else float(self.allowance / self.worst)


def _quantum(value: Fraction, dtype: str) -> Fraction:
    """The spacing of ``dtype``'s floats in the binade of ``value >= 0`` (from it upwards)."""
    fmt = FORMATS[dtype]
    top = fmt.emin
    if value > 0:
        top = value.numerator.bit_length() - value.denominator.bit_length()
        while Fraction(2) ** top > value:
            top -= 1
        while Fraction(2) ** (top + 1) <= value:
            top += 1
    return Fraction(2) ** (max(top, fmt.emin) - fmt.precision + 1)


def _round_down(value: Fraction, dtype: str) -> Fraction:
    """The largest float of ``dtype`` at most ``value`` (``value >= 0``)."""
    quantum = _quantum(value, dtype)
    return math.floor(value / quantum) * quantum


def _round_up(value: Fraction, dtype: str) -> Fraction:
    """The smallest float of ``dtype`` at least ``value`` (``value >= 0``)."""
    down = _round_down(value, dtype)
    return down if down == value else down + _quantum(down, dtype)


def _dyadic(value: tuple[int, int]) -> Fraction:
    mantissa, exponent = value
    return Fraction(mantissa) * Fraction(2) ** exponent


def row_coverage(
    row: npt.NDArray[np.float64],
    dtype: str,
    *,
    tolerance: Tolerance | None = None,
    exp_ulps: float | None = None,
    depth: int | None = None,
    lowered_by: float = 0.0,
    theorems: tuple[str, ...] = tuple(THEOREMS),
) -> Coverage:
    """Compare the oracle's allowance with the worst output T12's theorems admit.

    The ``theorems`` (of :data:`THEOREMS`) are applied with an exp of ``exp_ulps`` ulps
    and a log of the tolerance's ``log_ulps`` ulps (the tolerance's own by default) and
    any summation order (``γ_{n−1}``), or a summation
    tree of ``depth`` (``γ_depth``, the ``_depth`` theorems); ``tolerance`` and
    ``lowered_by`` (smallest subnormals taken off every allowance) plant weaker
    allowances for the tests that must see the check fail.
    """
    fmt = FORMATS[dtype]
    tol = Tolerance() if tolerance is None else tolerance
    k = Fraction(tol.exp_ulps if exp_ulps is None else exp_ulps)
    u, tiny = Fraction(fmt.unit_roundoff), Fraction(fmt.smallest_subnormal)
    n = row.size
    allowance = allowed_error(row[None, :], dtype=dtype, tolerance=tol)[0]
    allowance = allowance - lowered_by * fmt.smallest_subnormal
    reference = certified_softmax_dense(row[None, :], format=dtype)
    assert bool(np.all(reference.certified)), "the reference must be correctly rounded"
    refs = reference.values[0]
    bk = backend("arb")
    with bk.working_precision(PRECISION):
        top = Fraction(float(np.max(row)))
        gaps = [top - Fraction(float(e)) for e in row]
        terms = [bk.exp(bk.number(-g)) for g in gaps]
        total = sum(terms[1:], terms[0])
        weights = [t / total for t in terms]
        mean_gap = sum((w * bk.number(g) for w, g in zip(weights, gaps, strict=True)), bk.number(0))
        k_log = Fraction(tol.log_ulps)
        values = {
            "mean_gap": mean_gap,
            "log_sum": bk.log(total),
            "top": abs(top),
            "n": n,
            "u": u,
            "exp_rel": 2 * k * u,
            "exp_abs": k * tiny,
            "log_rel": 2 * k_log * u,
            "log_abs": k_log * tiny,
            "tiny": tiny,
        }
        summed = n - 1 if depth is None else depth
        assert summed * u < 1
        values["gamma"] = Fraction(str(gamma_recursive(n=summed + 1, u=u)))  # γ_{(d+1)−1}
        # each theorem's side conditions hold (else it says nothing about this row)
        chosen = [THEOREMS[name] for name in theorems]
        for _, conditions, _ in chosen:
            for condition in conditions:
                assert isinstance(condition, sp.Rel)
                left = ball_value(condition.lhs, bk, **_names(condition.lhs, values))
                right = ball_value(condition.rhs, bk, **_names(condition.rhs, values))
                assert _dyadic(bk.endpoints(left)[1]) <= _dyadic(bk.endpoints(right)[0])
        worst: Coverage | None = None
        normal_ratio = math.inf
        smallest_normal = Fraction(2) ** fmt.emin
        # the extreme admitted floats by gap (equal gaps, equal p), over both theorems
        ends: dict[Fraction, tuple[Fraction, Fraction]] = {}
        for index, (p, g) in enumerate(zip(weights, gaps, strict=True)):
            if g not in ends:
                highs, lows = [], []
                for bound_formula, _, at_most_one in chosen:
                    at = {**values, "p_i": p, "gap_i": g}
                    bound = ball_value(
                        bound_formula, bk, **{a.name: at[a.name] for a in bound_formula.args}
                    )
                    high = _dyadic(bk.endpoints(p + bound)[1])
                    highs.append(min(high, Fraction(1)) if at_most_one else high)
                    lows.append(max(_dyadic(bk.endpoints(p - bound)[0]), Fraction(0)))
                ends[g] = (max(highs), min(lows))
            high, low = ends[g]
            ref = Fraction(float(refs[index]))
            admitted = max(abs(_round_down(high, dtype) - ref), abs(_round_up(low, dtype) - ref))
            here = Coverage(Fraction(float(allowance[index])), admitted, index)
            if ref >= smallest_normal:
                normal_ratio = min(normal_ratio, here.ratio)
            if worst is None or here.allowance - here.worst < worst.allowance - worst.worst:
                worst = here
    assert worst is not None
    return Coverage(worst.allowance, worst.worst, worst.index, normal_ratio)


def _names(expr: object, values: dict[str, object]) -> dict[str, object]:
    assert isinstance(expr, sp.Expr)
    return {s.name: values[s.name] for s in expr.free_symbols}


def _configurations(dtype: str) -> Iterator[tuple[str, npt.NDArray[np.float64]]]:
    """Rows of logits (rounded to ``dtype`` by the caller)."""
    rng = np.random.default_rng(20)
    for n in (2, 3, 8, 137, 1000):
        yield f"equal n={n}", np.zeros(n)
        for delta in (1.0, 20.0, 100.0):
            spike = np.full(n, -delta)
            spike[0] = 0.0
            yield f"spike Δ={delta} n={n}", spike
            yield f"dip Δ={delta} n={n}", -spike - delta
        masked = np.zeros(n)
        masked[1::2] = -1e30
        yield f"masked-like n={n}", masked
    for n in (2, 3, 8, 137):  # rows of distinct logits (every element its own bound)
        for sigma in (1.0, 10.0):
            yield f"normal σ={sigma} n={n}", rng.normal(0.0, sigma, n)
        yield f"uniform [-200, 0] n={n}", rng.uniform(-200.0, 0.0, n)
        yield f"large logits n={n}", 1e4 + rng.normal(0.0, 3.0, n)
    yield "normal σ=3 n=600", rng.normal(0.0, 3.0, 600)
    long_spike = np.full(4099, -30.0)
    long_spike[0] = 0.0
    yield "spike Δ=30 n=4099", long_spike
    yield "ladder n=300", -np.arange(300.0) / 3.0
    # outputs in the subnormal range: p ≈ c·s_min, c around (half-)integers
    log_smallest = math.log(2.0) * (FORMATS[dtype].emin - FORMATS[dtype].precision + 1)
    for c in [*np.arange(0.25, 8.0, 0.25), 0.5 - 1e-6, 1.5 - 1e-6, 2.5 + 1e-6]:
        yield f"subnormal output c={c:.7g}", np.array([0.0, math.log(c) + log_smallest])
    # near the smallest normal, where p·R is a few s_min and the float64 allowance rounds
    for fraction in (0.25, 0.5, 0.9, 0.999, 1.001, 2.0):
        p = math.log(fraction) + math.log(2.0) * FORMATS[dtype].emin
        yield f"near the smallest normal ×{fraction}", np.array([0.0, p])


def _cases() -> list[tuple[str, str, npt.NDArray[np.float64]]]:
    cases = []
    for dtype in FORMATS_PROVED:
        for name, row in _configurations(dtype):
            cases.append((dtype, name, row.astype(dtype).astype(np.float64)))
    return cases


@pytest.mark.slow
def test_default_allowance_covers_the_flocq_bound_for_the_max_shifted_softmax() -> None:
    failures = []
    tightest: tuple[float, str] = (math.inf, "")
    tightest_normal: tuple[float, str] = (math.inf, "")
    for dtype, name, row in _cases():
        found = row_coverage(row, dtype)
        if found.allowance < found.worst:
            failures.append(
                f"{dtype} {name} [{found.index}]: allowance {float(found.allowance):.6g} < "
                f"admitted error {float(found.worst):.6g}"
            )
        tightest = min(tightest, (found.ratio, f"{dtype} {name}"))
        tightest_normal = min(tightest_normal, (found.normal_ratio, f"{dtype} {name}"))
    assert not failures, "\n".join(failures)
    # the margins, for the record (pytest -s shows them)
    print(f"smallest allowance/admitted error: {tightest[0]:.6g} at {tightest[1]}")
    print(f"at normal outputs: {tightest_normal[0]:.6g} at {tightest_normal[1]}")


def _row(dtype: str, name: str) -> npt.NDArray[np.float64]:
    [row] = [r for d, n, r in _cases() if d == dtype and n == name]
    return row


@pytest.mark.parametrize("dtype", FORMATS_PROVED)
def test_the_pre_fix_floor_of_two_subnormals_is_refused(dtype: str) -> None:
    # Before this check the floor was 2·s_min: an output the theorem admits (3·s_min
    # from a reference of 0 or s_min) was refused at p ≈ 2.5·s_min.
    row = _row(dtype, "subnormal output c=2.5")
    assert row_coverage(row, dtype).allowance >= row_coverage(row, dtype).worst
    old = row_coverage(row, dtype, lowered_by=Tolerance().exp_ulps + 1 - 2)
    assert old.allowance < old.worst


@pytest.mark.slow
def test_strict_allowance_covers_the_flocq_bound_for_any_summation_tree() -> None:
    # The opt-in "strict" model: max-shifted formulations only, any summation order; the
    # theorems for any tree (T12_max_shift, T12_reciprocal) must pass it too.
    failures, tightest = [], (math.inf, "")
    for dtype, name, row in _cases():
        found = row_coverage(row, dtype, tolerance=Tolerance(model="strict"), theorems=STRICT)
        if found.allowance < found.worst:
            failures.append(f"{dtype} {name} [{found.index}]")
        tightest = min(tightest, (found.normal_ratio, f"{dtype} {name}"))
    assert not failures, failures
    print(f"strict, at normal outputs: {tightest[0]:.6g} at {tightest[1]}")


def test_an_allowance_for_a_better_exp_than_the_theorem_assumes_is_refused() -> None:
    # The oracle told the exp is correctly rounded, the theorem applied to a 2-ulp exp:
    # the relative terms no longer cover the admitted error on an ordinary row.
    # A short row, where the exp's error dominates the summation's γ_{n−1}.
    row = np.array([0.0, -1.0, -2.0])
    strict = Tolerance(model="strict")
    good = row_coverage(row, "float32", tolerance=strict, theorems=STRICT)
    assert good.allowance >= good.worst
    planted = row_coverage(
        row,
        "float32",
        tolerance=Tolerance(model="strict", exp_ulps=0.5),
        exp_ulps=2,
        theorems=STRICT,
    )
    assert planted.allowance < planted.worst
