"""T15: the VJP rounding-error claim, its false siblings, and the exported bounds checked
against the softmax and log-softmax VJPs computed by numpy in float32 and float16."""

from __future__ import annotations

import dataclasses
import doctest
import re

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from softmax_dispersion.theory import vjp_error as t15
from softmax_dispersion.theory.formulas import FORMULAS
from softmax_dispersion.theory.kernel import Cite, Claim, ClaimResult, Differentiate, Implied
from softmax_dispersion.theory.rounding_error import (
    gamma_recursive,
    softmax_relative_error_bound,
)
from softmax_dispersion.theory.vjp_error import (
    T15,
    log_softmax_bound,
    log_softmax_vjp_error_bound,
    log_softmax_vjp_first_order,
    softmax_bound,
    softmax_vjp_error_bound,
    softmax_vjp_first_order,
    two_sided,
)

_CACHE: dict[str, ClaimResult] = {}
# claim ids are identifiers; the siblings' readable names are not
_ID_UNSAFE = re.compile(r"[^\w.-]")


def checked(claim: Claim) -> ClaimResult:
    if claim.id not in _CACHE:
        _CACHE[claim.id] = claim.check(_CACHE)
    return _CACHE[claim.id]


def test_t15_verifies() -> None:
    result = checked(T15)
    assert result.verified, [(s.description, s.detail) for s in result.steps if not s.verified]
    assert len(result.steps) >= 35


def test_t15_states_the_exported_bounds_for_every_formulation() -> None:
    parts = set(sp.And.make_args(T15.statement))
    assert set(sp.And.make_args(two_sided(softmax_vjp_first_order, softmax_bound))) <= parts
    assert set(sp.And.make_args(two_sided(t15.distributed_first_order, softmax_bound))) <= parts
    assert set(sp.And.make_args(two_sided(log_softmax_vjp_first_order, log_softmax_bound))) <= (
        parts
    )


def test_formulas_are_registered() -> None:
    for name in T15.formulas:
        assert FORMULAS[name] is getattr(t15, name)


def test_doctests() -> None:
    result = doctest.testmod(t15, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted >= 3


def _sibling(name: str, statement: sp.Basic) -> Claim:
    return dataclasses.replace(
        T15,
        id="T15-false-" + _ID_UNSAFE.sub("-", name),
        title="a false sibling of T15",
        statement=statement,
        source="test",
        proof=lambda: [Cite(T15, "T15"), Implied(statement, "follows from T15")],
        cites=(T15,),
    )


def _rejected(result: ClaimResult) -> None:
    assert result.verified is False
    assert result.steps[0].verified, result.steps[0].detail
    assert "counterexample" in result.steps[-1].detail


p_i = t15.p_i
FALSE_BOUNDS = {
    # softmax: the dot product's error, the forward errors of the other entries, the
    # wrong scale (p_i·|g_i| without the ⟨g, p⟩ part)
    "softmax without gamma": (softmax_vjp_first_order, softmax_bound.subs(t15.gamma, 0)),
    "softmax without the others' errors": (softmax_vjp_first_order, softmax_bound.subs(t15.R, 0)),
    "softmax in the scale p_i|g_i|": (softmax_vjp_first_order, softmax_bound.subs(t15.G, 0)),
    "softmax, one final rounding": (
        softmax_vjp_first_order,
        softmax_bound - p_i * (t15.a_i + t15.G) * t15.u,
    ),
    "distributed without gamma": (t15.distributed_first_order, softmax_bound.subs(t15.gamma, 0)),
    # log-softmax: the sum's error, the final subtraction, the scale |g_i| alone
    "log without gamma": (log_softmax_vjp_first_order, log_softmax_bound.subs(t15.gamma, 0)),
    "log without the subtraction": (
        log_softmax_vjp_first_order,
        log_softmax_bound - t15.u * t15.a_i,
    ),
    "log in the scale |g_i|": (log_softmax_vjp_first_order, log_softmax_bound.subs(t15.A, 0)),
}


@pytest.mark.parametrize("name", sorted(FALSE_BOUNDS))
def test_false_bound_is_rejected(name: str) -> None:
    checked(T15)
    value, bound = FALSE_BOUNDS[name]
    _rejected(checked(_sibling(name, two_sided(value, bound))))


def test_a_vjp_without_the_inner_product_term_is_not_the_derivative() -> None:
    steps = list(T15.proof())
    index = next(
        i
        for i, step in enumerate(steps)
        if isinstance(step, Differentiate) and step.value == softmax_vjp_first_order
    )
    wrong = p_i * (t15.pi_i * (t15.g_i - t15.c) + (t15.g_i - t15.c) * (t15.delta_1 + t15.delta_2))
    step = dataclasses.replace(steps[index], value=wrong)
    claim = dataclasses.replace(
        T15,
        id="T15-false-derivative",
        statement=step.conclusion,
        proof=lambda: [*steps[:index], step],
    )
    result = claim.check()
    assert result.verified is False
    assert "counterexample" in result.steps[-1].detail


# --------------------------------------------------------------------------------------
# What the bounds mean: numpy's VJPs (float32, and float16 with float32 sums) stay within.

FORMATS = {np.float32: (2.0**-24, 2.0**-24), np.float16: (2.0**-11, 2.0**-24)}


@st.composite
def vjp_inputs(draw: st.DrawFn) -> tuple[type, np.ndarray, np.ndarray]:
    dtype = draw(st.sampled_from(list(FORMATS)))
    size = draw(st.integers(1, 60))
    # the model needs the weights in the normal range (T12): float16's exp underflows
    # below −9.7, so its gaps stay below that
    spread = draw(st.sampled_from([0.5, 4.5] if dtype is np.float16 else [0.5, 8.0, 40.0]))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    x = rng.uniform(-spread, spread, size=size).astype(dtype)
    g = rng.normal(size=size).astype(dtype)
    return dtype, x, g


@settings(max_examples=60, deadline=None)
@given(vjp_inputs())
def test_numpy_vjps_are_within_the_bounds(case: tuple[type, np.ndarray, np.ndarray]) -> None:
    dtype, x, g = case
    u, u_acc = FORMATS[dtype]
    n = x.size
    with np.errstate(all="ignore"):
        shifted = x - x.max()
        e = np.exp(shifted)
        p = (e / e.astype(np.float32).sum().astype(dtype)).astype(dtype)
        dot = (p.astype(np.float32) @ g.astype(np.float32)).astype(dtype)
        soft = p * (g - dot)
        total = g.astype(np.float32).sum().astype(dtype)
        log = g - p * total
    with mpmath.workprec(200):
        top = max(mpmath.mpf(float(v)) for v in x)
        weights = [mpmath.exp(mpmath.mpf(float(v)) - top) for v in x]
        z = mpmath.fsum(weights)
        pe = [w / z for w in weights]
        gm = [mpmath.mpf(float(v)) for v in g]
        c = mpmath.fsum(a * b for a, b in zip(pe, gm, strict=True))
        sg = mpmath.fsum(gm)
        exact_soft = [pe[i] * (gm[i] - c) for i in range(n)]
        exact_log = [gm[i] - pe[i] * sg for i in range(n)]
        pf = np.array([float(v) for v in pe])
    gaps = float(x.max()) - x.astype(np.float64)
    mean_gap = float(pf @ gaps)
    assert gaps.max() < (9.5 if dtype is np.float16 else 85.0)
    r = softmax_relative_error_bound.numpy(
        gaps, mean_gap, u, 4.0, float(gamma_recursive.numpy(n, u_acc)), u
    )
    a = np.abs(g.astype(np.float64))
    gamma_dot = n * u_acc / (1 - n * u_acc)
    gamma_sum = float(gamma_recursive.numpy(n, u_acc))
    for i in range(n):
        bound = float(
            softmax_vjp_error_bound.numpy(
                pf[i], a[i], float(pf @ a), float(np.sum(pf * a * r)), float(r[i]), u, gamma_dot
            )
        )
        error = abs(float(soft[i]) - float(exact_soft[i]))
        assert error <= bound * 1.01 + 4 * bound**2 + 1e-300, ("softmax", i, error, bound)
        log_bound = float(
            log_softmax_vjp_error_bound.numpy(
                pf[i], a[i], float(a.sum()), float(r[i]), u, gamma_sum
            )
        )
        error = abs(float(log[i]) - float(exact_log[i]))
        assert error <= log_bound * 1.01 + 4 * log_bound**2 + 1e-300, ("log", i, error, log_bound)
