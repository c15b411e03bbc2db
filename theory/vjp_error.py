"""T15: the first-order rounding error of the softmax and log-softmax VJPs.

Run ``python -m softmax_dispersion.theory.vjp_error`` to check the proof.

The model of the computation
----------------------------
The backward passes of softmax and log-softmax map an upstream gradient ``g`` to

- softmax: ``w_i = p_i (g_i − ⟨g, p⟩)``;
- log-softmax: ``w_i = g_i − p_i Σ_j g_j``,

with ``p = softmax(x)``.  A format with unit roundoff ``u`` computes them from the
forward pass's weights, ``p̂_j = p_j (1 + π_j)`` with ``|π_j| <= r_j`` (T12's relative
bound: the saved softmax output, or the exp of the saved log-softmax output):

- ``ĉ = Σ_j p̂_j g_j (1 + μ_j)`` and ``σ̂ = Σ_j g_j (1 + μ_j)``, sums in any order with
  ``|μ_j| <= γ`` (the error factor of each term of a sum or dot product);
- softmax, either ``p̂_i ⊗ (g_i ⊖ ĉ)`` (two roundings) or ``(p̂_i ⊗ g_i) ⊖ (p̂_i ⊗ ĉ)``
  (three); log-softmax, ``g_i ⊖ (p̂_i ⊗ σ̂)`` (two).

The derivation (T15)
--------------------
As in T12 and T14, every error variable is scaled by ``τ`` and the first-order error is
the derivative at ``τ = 0``.  With ``|g_j| <= a_j``, ``G = Σ_j p_j a_j`` (the softmax-
weighted size of ``g``), ``R = Σ_j p_j a_j r_j`` and ``A = Σ_j a_j``:

1. ``ĉ'(0) = Σ_j p_j (π_j + μ_j) g_j``, within ``R + γG`` (a sum of non-negative
   slacks), and ``|⟨g, p⟩| <= G``;
2. softmax, both formulations: the first-order error is within
   ``p_i ((a_i + G)(r_i + 2u) + R + γG)`` (:data:`softmax_vjp_error_bound`), in the scale
   ``p_i (|g_i| + Σ_j p_j |g_j|)``;
3. log-softmax: ``σ̂'(0) = Σ_j g_j μ_j`` within ``γA``, and the first-order error is
   within ``p_i A (r_i + γ + 2u) + u a_i`` (:data:`log_softmax_vjp_error_bound`), in the
   scale ``|g_i| + p_i Σ_j |g_j|``.

A logit of ``−inf`` has ``p_j = 0``: its term drops out of every sum, and its VJP entry is
exactly 0 (softmax) or ``g_j`` (log-softmax).

Examples
--------
Softmax VJP in float32 at an entry of weight 1/4 with ``|g_i| = 1``, ``Σ p|g| = 2``,
a relative forward error of ``10u`` everywhere and ``γ = 100u``:

>>> import sympy as sp
>>> from softmax_dispersion.theory.vjp_error import softmax_vjp_error_bound
>>> u = sp.Rational(1, 2**24)
>>> bound = softmax_vjp_error_bound(weight=sp.Rational(1, 4), grad_size=1,
...     mean_grad_size=2, weighted_grad_error=20 * u, softmax_error=10 * u, u=u,
...     gamma=100 * u)
>>> bound / u
64
"""

from __future__ import annotations

import sympy as sp

from softmax_dispersion.theory.formulas import formula
from softmax_dispersion.theory.kernel import (
    Claim,
    Differentiate,
    ExpMonotone,
    Family,
    Implied,
    Step,
    SumDerivative,
    SumLinearity,
    SumOfTerms,
    SumOver,
)

# the first-order toolkit T12 introduced, shared (τ, u: the same symbols here)
from softmax_dispersion.theory.rounding_error import derivative_at_zero, two_sided
from softmax_dispersion.theory.symbols import n

__all__ = ["T15", "log_softmax_vjp_error_bound", "softmax_vjp_error_bound"]

# --- the formulas' arguments -------------------------------------------------------

u = sp.Symbol("u", real=True)
"""Unit roundoff of the format the VJP is computed and returned in."""
weight = sp.Symbol("weight", real=True)
"""``p_i``, the exact softmax weight of the entry."""
grad_size = sp.Symbol("grad_size", real=True)
"""``|g_i|``, the entry's upstream gradient in magnitude."""
mean_grad_size = sp.Symbol("mean_grad_size", real=True)
"""``Σ_j p_j |g_j|``, the softmax-weighted size of the upstream gradient."""
weighted_grad_error = sp.Symbol("weighted_grad_error", real=True)
"""``Σ_j p_j |g_j| r_j``: the gradient weighted by the forward pass's relative errors."""
total_grad_size = sp.Symbol("total_grad_size", real=True)
"""``Σ_j |g_j|``."""
softmax_error = sp.Symbol("softmax_error", real=True)
"""``r_i``: T12's relative bound of the forward weight ``p̂_i``."""
gamma = sp.Symbol("gamma", real=True)
"""The error factor of each term of the sum (``σ̂``) or dot product (``ĉ``)."""

softmax_vjp_error_bound = formula(
    "softmax_vjp_error_bound",
    weight
    * (
        (grad_size + mean_grad_size) * (softmax_error + 2 * u)
        + weighted_grad_error
        + gamma * mean_grad_size
    ),
    (weight, grad_size, mean_grad_size, weighted_grad_error, softmax_error, u, gamma),
    "T15: first-order bound on |ŵ_i − w_i| for the softmax VJP p ⊙ (g − ⟨g, p⟩): "
    "weight·((grad_size + mean_grad_size)·(softmax_error + 2u) + weighted_grad_error "
    "+ gamma·mean_grad_size)",
)
"""T15: first-order bound on the absolute error of the softmax VJP ``p_i (g_i − ⟨g, p⟩)``.

Parameters
----------
weight
    ``p_i``.
grad_size
    ``|g_i|``.
mean_grad_size
    ``Σ_j p_j |g_j|``.
weighted_grad_error
    ``Σ_j p_j |g_j| r_j``.
softmax_error
    ``r_i``, T12's relative bound of the forward weight at ``i``.
u
    The unit roundoff of the format.
gamma
    The error factor of each term of the dot product ``⟨g, p̂⟩`` (any order).

Notes
-----
.. math:: |\\hat w_i - w_i| \\lesssim p_i\\Bigl((|g_i| + \\textstyle\\sum_j p_j|g_j|)
   (r_i + 2u) + \\sum_j p_j |g_j| r_j + \\gamma \\sum_j p_j |g_j|\\Bigr)

Examples
--------
>>> import sympy as sp
>>> from softmax_dispersion.theory.vjp_error import softmax_vjp_error_bound
>>> u = sp.Rational(1, 2**11)
>>> softmax_vjp_error_bound(weight=1, grad_size=1, mean_grad_size=1,
...     weighted_grad_error=0, softmax_error=0, u=u, gamma=0) / u
4
"""

log_softmax_vjp_error_bound = formula(
    "log_softmax_vjp_error_bound",
    weight * total_grad_size * (softmax_error + gamma + 2 * u) + u * grad_size,
    (weight, grad_size, total_grad_size, softmax_error, u, gamma),
    "T15: first-order bound on |ŵ_i − w_i| for the log-softmax VJP g − p·Σg: "
    "weight·total_grad_size·(softmax_error + gamma + 2u) + u·grad_size",
)
"""T15: first-order bound on the absolute error of the log-softmax VJP ``g_i − p_i Σ_j g_j``.

Parameters
----------
weight
    ``p_i``.
grad_size
    ``|g_i|``.
total_grad_size
    ``Σ_j |g_j|``.
softmax_error
    ``r_i``: the relative error bound of ``p̂_i`` (for ``exp`` of the saved
    log-softmax: T12's bound of that formulation).
u
    The unit roundoff of the format.
gamma
    The error factor of each term of the sum ``Σ_j g_j`` (any order).

Notes
-----
.. math:: |\\hat w_i - w_i| \\lesssim p_i \\textstyle\\sum_j |g_j| (r_i + \\gamma + 2u)
   + u\\,|g_i|

Examples
--------
>>> import sympy as sp
>>> from softmax_dispersion.theory.vjp_error import log_softmax_vjp_error_bound
>>> u = sp.Rational(1, 2**11)
>>> log_softmax_vjp_error_bound(weight=sp.Rational(1, 2), grad_size=3, total_grad_size=4,
...     softmax_error=0, u=u, gamma=0) / u
7
"""

# --- the model: symbols -----------------------------------------------------------------

tau = sp.Symbol("tau", real=True)
"""Scales every error variable: ``τ = 1`` is the computation, ``τ = 0`` exact arithmetic."""
Delta = sp.Symbol("Delta", real=True)
"""A bound on the gaps, ``x_j >= −Δ`` (the visible logits are finite)."""
x_i, pi_i, r_i, g_i, a_i = sp.symbols("x_i pi_i r_i g_i a_i", real=True)
"""The entry: shifted logit, forward error and its bound, gradient and its size."""
delta_1, delta_2, delta_3 = sp.symbols("delta_1 delta_2 delta_3", real=True)
"""The roundings of the final operations."""

x_j, pi_j, r_j, mu_j, g_j, a_j = sp.symbols("x_j pi_j r_j mu_j g_j a_j", real=True)
terms = Family(
    "terms",
    (x_j, pi_j, r_j, mu_j, g_j, a_j),
    n,
    (
        sp.Le(-Delta, x_j),
        sp.Le(x_j, 0),
        sp.Le(-r_j, pi_j),
        sp.Le(pi_j, r_j),
        sp.Le(-gamma, mu_j),
        sp.Le(mu_j, gamma),
        sp.Le(-a_j, g_j),
        sp.Le(g_j, a_j),
    ),
    "the n entries: x_j in [−Δ, 0], |π_j| <= r_j, |μ_j| <= gamma, |g_j| <= a_j",
)

T, c, G, R, Cdot = sp.symbols("T c G R Cdot", real=True)
Sg, A, M = sp.symbols("Sg A M", real=True)
Q1p, Q1m, Q2p, Q2m, Q3p, Q3m, Q4p, Q4m = sp.symbols("Q1p Q1m Q2p Q2m Q3p Q3m Q4p Q4m", real=True)
C = sp.Function("C", real=True)
"""``C(τ)``: the computed ``⟨g, p̂⟩``, errors scaled by ``τ``."""
Sigma = sp.Function("Sigma", real=True)
"""``Σ(τ)``: the computed ``Σ_j g_j``, errors scaled by ``τ``."""

p_j = sp.exp(x_j) / T
p_i = sp.exp(x_i) / T
"""The exact weights."""


def _sum(symbol: sp.Expr, term: sp.Expr, description: str) -> SumOver:
    return SumOver(symbol, term, terms, description)


exact_sum = _sum(T, sp.exp(x_j), "T = Σ_j exp(x_j)")
computed_dot = _sum(
    C(tau), p_j * (1 + tau * pi_j) * g_j * (1 + tau * mu_j), "C(τ) = Σ_j p_j(1+τπ_j) g_j (1+τμ_j)"
)
dot_exact = _sum(c, p_j * g_j, "c = ⟨g, p⟩")
dot_slope = _sum(Cdot, p_j * (pi_j + mu_j) * g_j, "C'(0) = Σ_j p_j (π_j + μ_j) g_j")
mean_size = _sum(G, p_j * a_j, "G = Σ_j p_j a_j >= Σ_j p_j |g_j|")
weighted_error = _sum(R, p_j * a_j * r_j, "R = Σ_j p_j a_j r_j")
slack_dot_plus = _sum(Q1p, p_j * (a_j * (r_j + gamma) - (pi_j + mu_j) * g_j), "Q1₊ >= 0")
slack_dot_minus = _sum(Q1m, p_j * (a_j * (r_j + gamma) + (pi_j + mu_j) * g_j), "Q1₋ >= 0")
slack_mean_plus = _sum(Q2p, p_j * (a_j - g_j), "Q2₊ = Σ_j p_j (a_j − g_j)")
slack_mean_minus = _sum(Q2m, p_j * (a_j + g_j), "Q2₋ = Σ_j p_j (a_j + g_j)")
computed_total = _sum(Sigma(tau), g_j * (1 + tau * mu_j), "Σ(τ) = Σ_j g_j (1 + τμ_j)")
total_exact = _sum(Sg, g_j, "Σ_j g_j")
total_slope = _sum(M, g_j * mu_j, "Σ'(0) = Σ_j g_j μ_j")
total_size = _sum(A, a_j, "A = Σ_j a_j >= Σ_j |g_j|")
slack_total_plus = _sum(Q3p, a_j * gamma - g_j * mu_j, "Q3₊ >= 0")
slack_total_minus = _sum(Q3m, a_j * gamma + g_j * mu_j, "Q3₋ >= 0")
slack_size_plus = _sum(Q4p, a_j - g_j, "Q4₊ = Σ_j (a_j − g_j)")
slack_size_minus = _sum(Q4m, a_j + g_j, "Q4₋ = Σ_j (a_j + g_j)")

t15_definitions = (
    exact_sum,
    computed_dot,
    dot_exact,
    dot_slope,
    mean_size,
    weighted_error,
    slack_dot_plus,
    slack_dot_minus,
    slack_mean_plus,
    slack_mean_minus,
    computed_total,
    total_exact,
    total_slope,
    total_size,
    slack_total_plus,
    slack_total_minus,
    slack_size_plus,
    slack_size_minus,
)


def computed_softmax_vjp(scale_by: sp.Expr) -> sp.Expr:
    """``p̂_i ⊗ (g_i ⊖ ĉ)`` with every error scaled by ``scale_by``."""
    s = scale_by
    return p_i * (1 + s * pi_i) * (g_i - C(s)) * (1 + s * delta_1) * (1 + s * delta_2)


def computed_softmax_vjp_distributed(scale_by: sp.Expr) -> sp.Expr:
    """``(p̂_i ⊗ g_i) ⊖ (p̂_i ⊗ ĉ)`` with every error scaled by ``scale_by``."""
    s = scale_by
    weight_hat = p_i * (1 + s * pi_i)
    return (weight_hat * g_i * (1 + s * delta_1) - weight_hat * C(s) * (1 + s * delta_2)) * (
        1 + s * delta_3
    )


def computed_log_softmax_vjp(scale_by: sp.Expr) -> sp.Expr:
    """``g_i ⊖ (p̂_i ⊗ σ̂)`` with every error scaled by ``scale_by``."""
    s = scale_by
    return (g_i - p_i * (1 + s * pi_i) * Sigma(s) * (1 + s * delta_1)) * (1 + s * delta_2)


softmax_vjp_first_order = p_i * (pi_i * (g_i - c) - Cdot + (g_i - c) * (delta_1 + delta_2))
"""``d/dτ`` of ``p̂_i ⊗ (g_i ⊖ ĉ)`` at ``τ = 0``."""
distributed_first_order = p_i * (
    pi_i * (g_i - c) - Cdot + g_i * delta_1 - c * delta_2 + (g_i - c) * delta_3
)
"""``d/dτ`` of ``(p̂_i ⊗ g_i) ⊖ (p̂_i ⊗ ĉ)`` at ``τ = 0``."""
log_softmax_vjp_first_order = (
    -p_i * pi_i * Sg - p_i * M - p_i * Sg * delta_1 + (g_i - p_i * Sg) * delta_2
)
"""``d/dτ`` of ``g_i ⊖ (p̂_i ⊗ σ̂)`` at ``τ = 0``."""

softmax_bound = softmax_vjp_error_bound.expr.xreplace(
    {
        weight: p_i,
        grad_size: a_i,
        mean_grad_size: G,
        weighted_grad_error: R,
        softmax_error: r_i,
    }
)
log_softmax_bound = log_softmax_vjp_error_bound.expr.xreplace(
    {weight: p_i, grad_size: a_i, total_grad_size: A, softmax_error: r_i}
)

_inner_bound = (a_i + G) * (r_i + 2 * u) + R + gamma * G
"""The softmax VJP's bound without its factor ``p_i``."""
_rounding_part = g_i * delta_1 - c * delta_2 + (g_i - c) * delta_3
"""The distributed form's roundings (first order, without ``p_i``)."""
_softmax_derivative = sp.Eq(
    derivative_at_zero(computed_softmax_vjp(tau)), softmax_vjp_first_order, evaluate=False
)
_distributed_derivative = sp.Eq(
    derivative_at_zero(computed_softmax_vjp_distributed(tau)),
    distributed_first_order,
    evaluate=False,
)
_log_derivative = sp.Eq(
    derivative_at_zero(computed_log_softmax_vjp(tau)), log_softmax_vjp_first_order, evaluate=False
)
_softmax_bounded = two_sided(softmax_vjp_first_order, softmax_bound)
_distributed_bounded = two_sided(distributed_first_order, softmax_bound)
_log_bounded = two_sided(log_softmax_vjp_first_order, log_softmax_bound)

fixed_in_tau = (x_i, T, pi_i, g_i, delta_1, delta_2, delta_3)
"""What ``d/dτ`` holds fixed: ``τ`` multiplies the error variables explicitly."""

_assumptions: list[sp.Basic] = [
    sp.Ge(n, 1),
    sp.Ge(u, 0),
    sp.Ge(gamma, 0),
    sp.Ge(Delta, 0),  # the gaps' range [−Δ, 0] holds a member (the top logit's 0)
    sp.Le(x_i, 0),
    sp.Le(-r_i, pi_i),
    sp.Le(pi_i, r_i),
    sp.Le(-a_i, g_i),
    sp.Le(g_i, a_i),
    sp.Le(-u, delta_1),
    sp.Le(delta_1, u),
    sp.Le(-u, delta_2),
    sp.Le(delta_2, u),
    sp.Le(-u, delta_3),
    sp.Le(delta_3, u),
]


def _t15_proof() -> list[Step]:
    zero = sp.Integer(0)
    one = sp.Integer(1)
    return [
        SumOfTerms(
            exact_sum,
            sp.exp(-Delta),
            None,
            "T = Σ exp(x_j) >= n·exp(−Δ)",
            termwise=(ExpMonotone(-Delta, x_j, "exp is increasing"),),
        ),
        Implied(sp.Gt(T, 0), "so T > 0 and p_j = exp(x_j)/T is defined"),
        # the dot product ⟨g, p̂⟩
        SumLinearity(computed_dot.at(0), [(one, dot_exact)], "without errors C(0) = ⟨g, p⟩"),
        SumDerivative(
            computed_dot,
            tau,
            [(one, dot_slope)],
            "C'(0), termwise",
            point=zero,
            constants=(T,),
        ),
        SumOfTerms(slack_dot_plus, zero, None, "p_j(a_j(r_j+γ) − (π_j+μ_j) g_j) >= 0, summed"),
        SumOfTerms(slack_dot_minus, zero, None, "p_j(a_j(r_j+γ) + (π_j+μ_j) g_j) >= 0, summed"),
        SumOfTerms(slack_mean_plus, zero, None, "p_j(a_j − g_j) >= 0, summed"),
        SumOfTerms(slack_mean_minus, zero, None, "p_j(a_j + g_j) >= 0, summed"),
        SumLinearity(
            slack_dot_plus,
            [(one, weighted_error), (gamma, mean_size), (-one, dot_slope)],
            "Q1₊ = R + γG − C'(0)",
        ),
        SumLinearity(
            slack_dot_minus,
            [(one, weighted_error), (gamma, mean_size), (one, dot_slope)],
            "Q1₋ = R + γG + C'(0)",
        ),
        SumLinearity(slack_mean_plus, [(one, mean_size), (-one, dot_exact)], "Q2₊ = G − c"),
        SumLinearity(slack_mean_minus, [(one, mean_size), (one, dot_exact)], "Q2₋ = G + c"),
        Implied(two_sided(Cdot, R + gamma * G), "|C'(0)| <= R + γG"),
        Implied(two_sided(c, G), "|⟨g, p⟩| <= G"),
        # log-softmax VJP
        SumLinearity(computed_total.at(0), [(one, total_exact)], "without errors Σ(0) = Σ_j g_j"),
        SumDerivative(computed_total, tau, [(one, total_slope)], "Σ'(0), termwise", point=zero),
        SumOfTerms(slack_total_plus, zero, None, "a_j γ − g_j μ_j >= 0, summed"),
        SumOfTerms(slack_total_minus, zero, None, "a_j γ + g_j μ_j >= 0, summed"),
        SumOfTerms(slack_size_plus, zero, None, "a_j − g_j >= 0, summed"),
        SumOfTerms(slack_size_minus, zero, None, "a_j + g_j >= 0, summed"),
        SumLinearity(slack_total_plus, [(gamma, total_size), (-one, total_slope)], "Q3₊ = γA − M"),
        SumLinearity(slack_total_minus, [(gamma, total_size), (one, total_slope)], "Q3₋ = γA + M"),
        SumLinearity(slack_size_plus, [(one, total_size), (-one, total_exact)], "Q4₊ = A − Σg"),
        SumLinearity(slack_size_minus, [(one, total_size), (one, total_exact)], "Q4₋ = A + Σg"),
        Implied(two_sided(M, gamma * A), "|Σ'(0)| <= γA"),
        Implied(two_sided(Sg, A), "|Σ_j g_j| <= A"),
        Differentiate(
            computed_log_softmax_vjp(tau),
            tau,
            "first-order term of g_i ⊖ (p̂_i ⊗ σ̂)",
            point=zero,
            value=log_softmax_vjp_first_order,
            constants=fixed_in_tau,
        ),
        Implied(two_sided(pi_i * Sg, r_i * A), "|π_i Σg| <= r_i A (a product bound)"),
        Implied(two_sided(Sg * delta_1, u * A), "|δ₁ Σg| <= u A (a product bound)"),
        Implied(
            two_sided((g_i - p_i * Sg) * delta_2, u * (a_i + p_i * A)),
            "|δ₂ (g_i − p_i Σg)| <= u (a_i + p_i A)",
        ),
        Implied(_log_bounded, "|first-order error| <= the exported bound"),
        # softmax VJP, both formulations
        Differentiate(
            computed_softmax_vjp(tau),
            tau,
            "first-order term of p̂_i ⊗ (g_i ⊖ ĉ)",
            point=zero,
            value=softmax_vjp_first_order,
            constants=fixed_in_tau,
        ),
        Implied(two_sided(pi_i * (g_i - c), r_i * (a_i + G)), "|π_i (g_i − c)| <= r_i (a_i + G)"),
        Implied(
            two_sided((g_i - c) * (delta_1 + delta_2), 2 * u * (a_i + G)),
            "|(g_i − c)(δ₁ + δ₂)| <= 2u (a_i + G)",
        ),
        Implied(
            two_sided(pi_i * (g_i - c) - Cdot + (g_i - c) * (delta_1 + delta_2), _inner_bound),
            "the bracket: |first-order error|/p_i <= (a_i + G)(r_i + 2u) + R + γG",
        ),
        Implied(_softmax_bounded, "times p_i >= 0: the exported bound"),
        Differentiate(
            computed_softmax_vjp_distributed(tau),
            tau,
            "first-order term of (p̂_i ⊗ g_i) ⊖ (p̂_i ⊗ ĉ)",
            point=zero,
            value=distributed_first_order,
            constants=fixed_in_tau,
        ),
        Implied(
            two_sided(_rounding_part, 2 * u * (a_i + G)),
            "|g_i δ₁ − c δ₂ + (g_i − c) δ₃| <= 2u (a_i + G)",
        ),
        Implied(
            two_sided(pi_i * (g_i - c) - Cdot + _rounding_part, _inner_bound),
            "the bracket, distributed: the same bound",
        ),
        Implied(_distributed_bounded, "times p_i >= 0: the same exported bound"),
        Implied(T15.statement, "collect the first-order terms and their bounds"),
    ]


T15 = Claim(
    id="T15",
    title="first-order rounding error of the softmax and log-softmax VJPs",
    statement=sp.And(
        _softmax_derivative,
        _softmax_bounded,
        _distributed_derivative,
        _distributed_bounded,
        _log_derivative,
        _log_bounded,
    ),
    assumptions=_assumptions,
    source=(
        "derived; the error bounds of the single operations are assumptions: the standard "
        "model |δ| <= u (Higham 2002, §2.2), the forward weights' relative error "
        "|π_j| <= r_j (T12's bounds) and the error factor of each term of a sum or dot "
        "product in any order, |μ_j| <= gamma (Higham 2002, §3.1; T14 proves its "
        "inductive step)"
    ),
    proof=_t15_proof,
    formulas=("softmax_vjp_error_bound", "log_softmax_vjp_error_bound"),
    definitions=t15_definitions,
    # exact arithmetic (every error 0) on one entry whose logit is the maximum
    witness={
        symbol: 0
        for symbol in sorted(
            {s for a in _assumptions for s in a.free_symbols} | set(terms.index) | {Delta},
            key=str,
        )
        if symbol not in (n,)
    }
    | {n: 1},
)

CLAIMS = (T15,)

if __name__ == "__main__":
    from softmax_dispersion.theory._result_text import run_claims

    raise SystemExit(run_claims(CLAIMS))
