"""T14: the attention rounding-error claim, its false siblings, and the exported bounds
checked against attention computed by numpy in float32 and float16."""

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

from softmax_dispersion.theory import attention_error as t14
from softmax_dispersion.theory.attention_error import (
    T14,
    attention_output_error_bound,
    attention_score_error_bound,
    gamma_dot_product,
    output_bound_expr,
    output_first_order,
    score_bound_expr,
    score_first_order,
    two_sided,
)
from softmax_dispersion.theory.formulas import FORMULAS
from softmax_dispersion.theory.kernel import Cite, Claim, ClaimResult, Differentiate, Implied
from softmax_dispersion.theory.rounding_error import (
    gamma_recursive,
    softmax_relative_error_bound,
)
from softmax_dispersion.theory.symbols import n as n_keys

_CACHE: dict[str, ClaimResult] = {}
# claim ids are identifiers; the siblings' readable names are not
_ID_UNSAFE = re.compile(r"[^\w.-]")


def checked(claim: Claim) -> ClaimResult:
    if claim.id not in _CACHE:
        _CACHE[claim.id] = claim.check(_CACHE)
    return _CACHE[claim.id]


def test_t14_verifies() -> None:
    result = checked(T14)
    assert result.verified, [(s.description, s.detail) for s in result.steps if not s.verified]
    assert len(result.steps) >= 40


def test_t14_states_the_exported_bounds() -> None:
    parts = set(sp.And.make_args(T14.statement))
    assert set(sp.And.make_args(two_sided(score_first_order, score_bound_expr))) <= parts
    assert set(sp.And.make_args(two_sided(output_first_order, output_bound_expr))) <= parts
    assert score_bound_expr.has(t14.gamma_qk, t14.score_roundings, t14.score_bound)
    assert output_bound_expr.has(t14.B, t14.W, t14.Bbar, t14.gamma_pv)


def test_formulas_are_registered() -> None:
    for name in T14.formulas:
        assert FORMULAS[name] is getattr(t14, name)
    assert [str(a) for a in attention_output_error_bound.args] == [
        "weighted_bound",
        "value_scale",
        "mean_score_error",
        "u",
        "gamma_pv",
    ]


def test_doctests() -> None:
    result = doctest.testmod(t14, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted >= 4


# --------------------------------------------------------------------------------------
# False siblings: each rejected with a counterexample.


def _sibling(name: str, statement: sp.Basic) -> Claim:
    return dataclasses.replace(
        T14,
        id="T14-false-" + _ID_UNSAFE.sub("-", name),
        title="a false sibling of T14",
        statement=statement,
        source="test",
        proof=lambda: [Cite(T14, "T14"), Implied(statement, "follows from T14")],
        cites=(T14,),
    )


def _rejected(result: ClaimResult) -> None:
    assert result.verified is False
    assert result.steps, result.problem
    assert result.steps[0].verified, result.steps[0].detail
    assert "counterexample" in result.steps[-1].detail


FALSE_OUTPUT_BOUNDS = {
    # the normalisation's share of the score errors dropped
    "no mean score error": output_bound_expr.subs(t14.Bbar, 0),
    "no weighted-sum error": output_bound_expr.subs(t14.gamma_pv, 0),
    "no output rounding": output_bound_expr - t14.u * t14.W,
    # the wrong scale: the output itself instead of Σ p_j |v_j|
    "scale |o| instead of W": output_bound_expr.subs(t14.W, t14.Out),
    # each value weighted by its weight but not by its errors
    "no per-key errors": output_bound_expr.subs(t14.B, 0),
}


@pytest.mark.parametrize("name", sorted(FALSE_OUTPUT_BOUNDS))
def test_false_output_bound_is_rejected(name: str) -> None:
    checked(T14)
    bound = FALSE_OUTPUT_BOUNDS[name]
    _rejected(checked(_sibling(name, two_sided(output_first_order, bound))))


FALSE_SCORE_BOUNDS = {
    "no score size": score_bound_expr.subs(t14.score_bound, 0),
    "no dot product error": score_bound_expr.subs(t14.gamma_qk, 0),
    "no scaling roundings": score_bound_expr.subs(t14.score_roundings, 0),
    # relative to the score instead of the dot product's terms: cancellation forgotten
    "relative to the score": (t14.gamma_qk + t14.score_roundings * t14.u + t14.u) * t14.score_bound,
}


@pytest.mark.parametrize("name", sorted(FALSE_SCORE_BOUNDS))
def test_false_score_bound_is_rejected(name: str) -> None:
    checked(T14)
    bound = FALSE_SCORE_BOUNDS[name]
    _rejected(checked(_sibling(name, two_sided(score_first_order, bound))))


def test_false_summation_steps_are_rejected() -> None:
    checked(T14)
    exact_addition = two_sided(
        (1 + t14.theta_acc) * (1 + t14.delta_add) - 1, t14.gamma_of(t14.depth)
    )
    _rejected(checked(_sibling("node", exact_addition)))
    short = sp.Le(t14.gamma_of(t14.tree_depth), t14.gamma_of(n_keys - 1))
    _rejected(checked(_sibling("depth", short)))


@pytest.mark.parametrize(
    "wrong",
    [
        t14.omega * t14.Out + t14.E1,  # the normalisation's −o·D̄ forgotten
        t14.omega * t14.Out + t14.E1 + t14.Out * t14.Dbar,  # its sign wrong
        t14.E1 - t14.Out * t14.Dbar,  # the output rounding forgotten
    ],
    ids=["no normalisation term", "sign of the normalisation", "no omega"],
)
def test_wrong_first_order_output_is_rejected(wrong: sp.Expr) -> None:
    steps = list(T14.proof())
    index = next(
        i
        for i, step in enumerate(steps)
        if isinstance(step, Differentiate) and step.value == output_first_order
    )
    step = dataclasses.replace(steps[index], value=wrong)
    claim = dataclasses.replace(
        T14,
        id="T14-false-derivative",
        statement=step.conclusion,
        proof=lambda: [*steps[:index], step],
    )
    result = claim.check()
    assert result.verified is False
    assert all(s.verified for s in result.steps[:-1])
    assert "counterexample" in result.steps[-1].detail


# --------------------------------------------------------------------------------------
# What the bound means: numpy attention in float32 and float16 stays within it.
#
# float16: scores held in float16, dot products and the weighted sum accumulated in
# float32 (np.matmul of float32 copies, then rounded), the softmax in float16 with a
# float32 sum.  float32: everything in float32.  exp: numpy's, within 4 ulps (see the
# T12 tests); γ's for any order.

FORMATS = {np.float32: (2.0**-24, 2.0**-24), np.float16: (2.0**-11, 2.0**-24)}


@st.composite
def attention_inputs(draw: st.DrawFn) -> tuple[type, np.ndarray, np.ndarray, np.ndarray]:
    dtype = draw(st.sampled_from(list(FORMATS)))
    keys = draw(st.integers(1, 40))
    dims = draw(st.sampled_from([1, 4, 16]))
    # |score| <= √E·size²: the weights stay in the normal range the model needs (T12),
    # float16's exp underflowing below −9.7
    size = draw(st.sampled_from([0.5, 1.0] if dtype is np.float16 else [0.5, 2.0]))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    q = rng.uniform(-size, size, size=dims).astype(dtype)
    k = rng.uniform(-size, size, size=(keys, dims)).astype(dtype)
    v = rng.normal(size=(keys, 3)).astype(dtype)
    return dtype, q, k, v


def _numpy_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float) -> np.ndarray:
    dtype = q.dtype.type
    scores = (k.astype(np.float32) @ q.astype(np.float32)).astype(dtype) * dtype(scale)
    shifted = scores - scores.max()
    e = np.exp(shifted)
    p = (e / e.astype(np.float32).sum().astype(dtype)).astype(dtype)
    return (p.astype(np.float32) @ v.astype(np.float32)).astype(dtype)


@settings(max_examples=60, deadline=None)
@given(attention_inputs())
def test_numpy_attention_is_within_the_bound(
    case: tuple[type, np.ndarray, np.ndarray, np.ndarray],
) -> None:
    dtype, q, k, v = case
    u, u_acc = FORMATS[dtype]
    keys, dims = k.shape
    scale = 1.0 / float(np.sqrt(dims))  # exact: 1, 1/2, 1/4
    with np.errstate(all="ignore"):
        out = _numpy_attention(q, k, v, scale)
    with mpmath.workprec(200):
        qs = [mpmath.mpf(float(x)) for x in q]
        scores = [
            scale * mpmath.fsum(a * mpmath.mpf(float(b)) for a, b in zip(qs, row, strict=True))
            for row in k
        ]
        top = max(scores)
        weights = [mpmath.exp(s - top) for s in scores]
        total = mpmath.fsum(weights)
        p = [w / total for w in weights]
        exact = [
            mpmath.fsum(p[j] * mpmath.mpf(float(v[j, c])) for j in range(keys)) for c in range(3)
        ]
        gaps = [float(top - s) for s in scores]
        pf = np.array([float(x) for x in p])
    assert max(gaps) < (9.5 if dtype is np.float16 else 85.0)
    mean_gap = float(np.dot(pf, gaps))
    gamma_qk = float(gamma_dot_product.numpy(dims, u_acc))
    gamma_pv = float(gamma_dot_product.numpy(keys, u_acc))
    gamma_sum = float(gamma_recursive.numpy(keys, u_acc))
    size = np.abs(k.astype(np.float64)) @ np.abs(q.astype(np.float64)) * scale
    b = np.array(
        [
            float(attention_score_error_bound.numpy(size[j], abs(float(scores[j])), u, gamma_qk, 2))
            for j in range(keys)
        ]
    )
    r = np.array(
        [float(softmax_relative_error_bound.numpy(g, mean_gap, u, 4.0, gamma_sum, u)) for g in gaps]
    )
    # the score error also moves the gaps the softmax's own bound reads: second order
    for c in range(3):
        a = np.abs(v[:, c].astype(np.float64))
        weighted = float(np.sum(pf * a * (b + r)))
        scale_v = float(np.sum(pf * a))
        bound = float(
            attention_output_error_bound.numpy(weighted, scale_v, float(pf @ b), u, gamma_pv)
        )
        # second-order slack: the bound's square (the products of (1 + δ) it linearises)
        allowed = bound + 4 * bound * bound
        error = abs(float(out[c]) - float(exact[c]))
        assert error <= allowed * (1 + 1e-9) + 1e-300, (c, error, bound)
