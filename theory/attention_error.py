"""T14: the first-order rounding error of attention, ``softmax(q kᵀ·scale + mask) v``.

Run ``python -m softmax_dispersion.theory.attention_error`` to check the proof.

The model of the computation
----------------------------
One query row ``q`` (length ``E``), keys ``k_j`` and values ``v_j`` (``j = 1 … n``), a
scale ``> 0`` and an additive mask ``m_j`` (``0`` where an entry takes part; a masked
entry has ``p_j = 0`` and drops out).  A format with unit roundoff ``u`` holds the
scores, the weights and the output (16-bit included); dot products accumulate in a
format whose error factor is ``γ`` (``u_acc``: float32 for 16-bit formats):

- the scores: ``ŝ_j = (scale·(1 + ψ)·D̂_j + m_j)(1 + δ_m)`` with ``D̂_j = Σ_e y_e (1 + θ_e)``
  the computed dot product ``q·k_j`` (``y_e = q_e k_{je}``, ``|θ_e| <= γ_qk``, any
  order), ``|ψ| <= c·u`` the ``c`` roundings of the scaled dot product before the mask
  is added (the scale's own rounding, the product or products that apply it, the dot
  product rounded to the score format) and ``|δ_m| <= u`` the addition of the mask;
- the weights: ``p̂_j = softmax(ŝ)_j (1 + π_j)`` with ``|π_j| <= r_j``, T12's relative
  bound for the softmax of the computed scores (every formulation T12 covers);
- the output: ``ô = (1 + ω)·Σ_j p̂_j v_j (1 + μ_j)`` with ``|μ_j| <= γ_pv``, the weighted
  sum in any order (the factor of a dot product of ``n`` terms), and ``|ω| <= u`` its
  rounding to the output format.  Normalising after the sum (``Σ_j y_j v_j / Σ_j y_j``,
  the flash form) moves T12's final division from every weight to the output: the
  same bound.

The derivation (T14)
--------------------
Write ``s_j`` for the exact scores, ``x_j = s_j − max s <= 0``, ``d_j = ŝ_j − s_j`` and
``T = Σ_j exp(x_j)``, ``p_j = exp(x_j)/T``.  Every error variable is scaled by ``τ``
(``τ = 1`` is the computation, ``τ = 0`` exact arithmetic), and the first-order error is
the derivative at ``τ = 0``, decided by the kernel's differentiation rules.

1. Scores: ``d/dτ ŝ_j = scale·ψ·D + scale·Σ_e y_e θ_e + δ_m (scale·D + m)`` with
   ``D = Σ_e y_e``; with ``A = Σ_e |y_e|`` (any ``a_e >= |y_e|``) and
   ``|scale·D + m| <= |s_j|``, ``|d_j| <= b_j = scale·A·(γ_qk + c·u) + u|s_j|``
   (:data:`attention_score_error_bound`).
2. Output: the computed numerator ``N(τ) = Σ_j exp(x_j + τd_j)(1 + τπ_j)(1 + τμ_j) v_j``
   and denominator ``Z(τ) = Σ_j exp(x_j + τd_j)`` (the softmax of the computed scores is
   ``exp(x_j + d_j)/Z``: shift invariance), ``ô(τ) = (1 + τω) N(τ)/Z(τ)``, differentiated
   termwise: ``ô'(0) = ω·o + Σ_j p_j v_j (d_j + π_j + μ_j) − o·Σ_j p_j d_j``.
3. Bound, with ``|v_j| <= a_j``, ``W = Σ_j p_j a_j`` (the natural scale ``Σ_j p_j|v_j|``),
   ``B = Σ_j p_j a_j (b_j + r_j)`` and ``b̄ = Σ_j p_j b_j``: each weighted sum is bounded
   through a sum of non-negative slacks, ``|o| <= W``, and
   ``|ô'(0)| <= B + W·(γ_pv + u + b̄)`` (:data:`attention_output_error_bound`).
4. Dot products in any order: a term's factor ``∏(1 + δ)`` through one more addition
   stays within ``γ_{k+1}`` if it was within ``γ_k`` (the inductive step over the
   summation tree), and a term of a dot product of ``n`` products passes through at most
   ``n`` roundings (its product and ``n − 1`` additions), so ``γ_d <= γ_n``
   (:data:`gamma_dot_product`).

The allowance grows with ``n`` (``γ_pv``, and ``γ_qk`` with ``E``) and with the size of
the scores (``u|s_j|``: a score of ``10⁴`` held in float16 is off by up to 4).

What the model leaves out: an online (flash) softmax rescales its running sum and its
accumulator by a computed ``exp(m_old − m_new)`` each time the maximum grows.  That
factor's own error is common to the numerator and the denominator and cancels in their
quotient; the rounding of the two products per rescale is not counted here (the
summation factors, for any order, leave room for it in practice, and the oracle's zoo of
online implementations passes, but no step of T14 proves it).

Examples
--------
A float32 score (``u = 2**-24``) of size 3 from a dot product of ``E = 64`` products,
accumulated in float32, scale·A = 4, two roundings before the mask:

>>> import sympy as sp
>>> from softmax_dispersion.theory.attention_error import (
...     attention_score_error_bound, gamma_dot_product)
>>> u = sp.Rational(1, 2**24)
>>> bound = attention_score_error_bound(scale_dot=4, score_size=3, u=u,
...     gamma_qk=gamma_dot_product(n=64, u=u), score_roundings=2)
>>> round(float(bound / u), 3)
267.001
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
from softmax_dispersion.theory.rounding_error import derivative_at_zero, gamma_of, two_sided
from softmax_dispersion.theory.symbols import n

__all__ = [
    "T14",
    "attention_output_error_bound",
    "attention_score_error_bound",
    "gamma_dot_product",
]

# --- the formulas' arguments -------------------------------------------------------

u = sp.Symbol("u", real=True)
"""Unit roundoff of the format of the scores, the weights and the output."""
scale_dot = sp.Symbol("scale_dot", real=True)
"""``scale·Σ_e |q_e k_{je}|``: the size of the dot product's terms, scaled."""
score_size = sp.Symbol("score_size", real=True)
"""``|s_j|``, the exact score ``scale·q·k_j + m_j`` in magnitude (or a bound on it)."""
gamma_qk = sp.Symbol("gamma_qk", real=True)
"""The error factor of the dot product ``q·k_j`` (:data:`gamma_dot_product` of ``E``)."""
score_roundings = sp.Symbol("score_roundings", real=True)
"""``c``: roundings of the scaled dot product before the mask is added."""
weighted_bound = sp.Symbol("weighted_bound", real=True)
"""``Σ_j p_j |v_j| (b_j + r_j)``: each value weighted by its score and softmax errors."""
value_scale = sp.Symbol("value_scale", real=True)
"""``Σ_j p_j |v_j|``, the natural scale of the output element."""
mean_score_error = sp.Symbol("mean_score_error", real=True)
"""``Σ_j p_j b_j``, the weighted mean of the score error bounds."""
gamma_pv = sp.Symbol("gamma_pv", real=True)
"""The error factor of the weighted sum ``Σ_j p̂_j v_j`` (:data:`gamma_dot_product` of ``n``)."""

attention_score_error_bound = formula(
    "attention_score_error_bound",
    scale_dot * (gamma_qk + score_roundings * u) + u * score_size,
    (scale_dot, score_size, u, gamma_qk, score_roundings),
    "T14: first-order bound on |ŝ_j − s_j| for a score computed as "
    "fl(scale·fl(q·k_j) + m_j): scale_dot·(gamma_qk + score_roundings·u) + u·score_size",
)
"""T14: first-order bound on the absolute error of a computed score ``ŝ_j``.

Parameters
----------
scale_dot
    ``scale·Σ_e |q_e k_{je}|``.
score_size
    ``|scale·q·k_j + m_j|``, the exact score's magnitude.
u
    The unit roundoff of the format the scores are held in (the input's).
gamma_qk
    The dot product's error factor (:data:`gamma_dot_product` of ``E`` in the
    accumulation format).
score_roundings
    How many roundings the scaled dot product passes before the mask is added: the
    scale's own, the product(s) applying it (two for ``√scale`` on ``q`` and on ``k``),
    the dot product rounded to the score format.

Notes
-----
.. math:: |\\hat s_j - s_j| \\lesssim \\mathrm{scale}\\,A_j\\,(\\gamma_{qk} + c\\,u)
   + u\\,|s_j|, \\qquad A_j = \\sum_e |q_e k_{je}|

Examples
--------
>>> import sympy as sp
>>> from softmax_dispersion.theory.attention_error import attention_score_error_bound
>>> u = sp.Rational(1, 2**11)
>>> attention_score_error_bound(scale_dot=2, score_size=1, u=u, gamma_qk=0,
...     score_roundings=3) / u
7
"""

attention_output_error_bound = formula(
    "attention_output_error_bound",
    weighted_bound + value_scale * (gamma_pv + u + mean_score_error),
    (weighted_bound, value_scale, mean_score_error, u, gamma_pv),
    "T14: first-order bound on |ô − o| for one attention output element: "
    "weighted_bound + value_scale·(gamma_pv + u + mean_score_error)",
)
"""T14: first-order bound on the absolute error of one attention output element.

Parameters
----------
weighted_bound
    ``Σ_j p_j |v_j| (b_j + r_j)`` with ``b_j`` :data:`attention_score_error_bound` and
    ``r_j`` T12's relative bound of the softmax at entry ``j``.
value_scale
    ``Σ_j p_j |v_j|``.
mean_score_error
    ``Σ_j p_j b_j``.
u
    The unit roundoff of the output format.
gamma_pv
    The weighted sum's error factor (:data:`gamma_dot_product` of ``n`` in the
    accumulation format).

Notes
-----
.. math:: |\\hat o - o| \\lesssim \\sum_j p_j |v_j| (b_j + r_j)
   + \\Bigl(\\sum_j p_j |v_j|\\Bigr)\\Bigl(\\gamma_{pv} + u + \\sum_j p_j b_j\\Bigr)

The score errors enter twice: in the entry's own weight (``b_j``) and, through the
normalisation, in every weight (``b̄``).

Examples
--------
>>> import sympy as sp
>>> from softmax_dispersion.theory.attention_error import attention_output_error_bound
>>> u = sp.Rational(1, 2**24)
>>> attention_output_error_bound(weighted_bound=3 * u, value_scale=2, mean_score_error=u,
...     u=u, gamma_pv=4 * u) / u
15
"""

gamma_dot_product = formula(
    "gamma_dot_product",
    n * u / (1 - n * u),
    (n, u),
    "γ_n = n·u/(1 − n·u): error factor of each term of a dot product of n products in "
    "any order (Higham 2002, §3.1); needs n·u < 1",
)
"""The error factor ``γ_n`` of a dot product of ``n`` products, in any summation order.

Parameters
----------
n
    The number of products.
u
    The unit roundoff of the format the products and partial sums are held in.

Notes
-----
.. math:: \\gamma_n = \\frac{n u}{1 - n u}

Each term passes through its product and at most ``n − 1`` additions; T14 proves the
inductive step over the summation tree and ``γ_d <= γ_n`` for ``d <= n`` (Higham 2002,
§3.1, gives the classical statement).

Examples
--------
>>> import sympy as sp
>>> from softmax_dispersion.theory.attention_error import gamma_dot_product
>>> gamma_dot_product(n=2, u=sp.Rational(1, 2**11))
1/1023
"""

# --- the model: symbols -----------------------------------------------------------------

tau = sp.Symbol("tau", real=True)
"""Scales every error variable: ``τ = 1`` is the computation, ``τ = 0`` exact arithmetic."""
Delta = sp.Symbol("Delta", real=True)
"""A bound on the gaps, ``x_j >= −Δ`` (the visible entries have finite scores)."""
n_dims = sp.Symbol("n_dims", real=True)
"""``E``: the length of the query and key rows."""
scale = sp.Symbol("scale", real=True)
"""The scale applied to ``q·k`` (``1/√E`` by default), ``> 0``."""
mask_value = sp.Symbol("m_mask", real=True)
"""The additive mask of the score's entry (``0`` where it takes part)."""
score_bound = sp.Symbol("score_bound", real=True)
"""``>= |scale·q·k_j + m_j|``: the exact score's magnitude, as the bound uses it."""
psi, delta_mask, omega = sp.symbols("psi delta_mask omega", real=True)
"""The scaled dot product's relative error, the mask addition's, the output rounding's."""
theta_acc, delta_add, tree_depth = sp.symbols("theta_acc delta_add tree_depth", real=True)
"""A term's factor through a subtree, one more addition's rounding, and the depth."""
depth = sp.Symbol("depth", real=True)
"""The depth ``k`` of the subtree a term has passed through."""

# the dot product q·k_j: E products y_e = q_e k_je, each with its accumulated error θ_e
y_e, theta_e, z_e = sp.symbols("y_e theta_e z_e", real=True)
dims = Family(
    "dims",
    (y_e, theta_e, z_e),
    n_dims,
    (sp.Le(-z_e, y_e), sp.Le(y_e, z_e), sp.Le(-gamma_qk, theta_e), sp.Le(theta_e, gamma_qk)),
    "the E products y_e = q_e k_je: |y_e| <= z_e, |θ_e| <= gamma_qk",
)

# the keys: shifted exact scores x_j, score errors d_j (|d_j| <= b_j), softmax errors π_j
# (|π_j| <= r_j, T12), weighted-sum errors μ_j, values v_j (|v_j| <= a_j)
x_j, d_j, b_j, pi_j, r_j, mu_j, v_j, a_j = sp.symbols(
    "x_j d_j b_j pi_j r_j mu_j v_j a_j", real=True
)
keys = Family(
    "keys",
    (x_j, d_j, b_j, pi_j, r_j, mu_j, v_j, a_j),
    n,
    (
        sp.Le(-Delta, x_j),
        sp.Le(x_j, 0),
        sp.Le(-b_j, d_j),
        sp.Le(d_j, b_j),
        sp.Le(-r_j, pi_j),
        sp.Le(pi_j, r_j),
        sp.Le(-gamma_pv, mu_j),
        sp.Le(mu_j, gamma_pv),
        sp.Le(-a_j, v_j),
        sp.Le(v_j, a_j),
    ),
    "the n visible keys: x_j in [−Δ, 0], |d_j| <= b_j, |π_j| <= r_j, |μ_j| <= gamma_pv, "
    "|v_j| <= a_j",
)

T, Out, W, B, Bbar, Dbar, E1, Ndot, Zdot = sp.symbols("T o W B Bbar Dbar E1 Ndot Zdot", real=True)
Q1p, Q1m, Q2p, Q2m, Q3p, Q3m = sp.symbols("Q1p Q1m Q2p Q2m Q3p Q3m", real=True)
Dot, A, Theta, Q4p, Q4m, Q5p, Q5m = sp.symbols("Dot A Theta Q4p Q4m Q5p Q5m", real=True)
N = sp.Function("N", real=True)
"""``N(τ)``: the computed numerator ``Σ_j p̂_j v_j (1 + μ_j)`` times the computed sum."""
Z = sp.Function("Z", real=True)
"""``Z(τ)``: the sum of the exponentials of the computed (shifted) scores."""
Dhat = sp.Function("Dhat", real=True)
"""``D̂(τ)``: the computed dot product ``Σ_e y_e (1 + τθ_e)``."""

p_j = sp.exp(x_j) / T
"""The exact weight of key ``j``."""
term_error = d_j + pi_j + mu_j
"""Key ``j``'s first-order relative error in the weighted sum."""


def _key_sum(symbol: sp.Expr, term: sp.Expr, description: str) -> SumOver:
    return SumOver(symbol, term, keys, description)


def _dim_sum(symbol: sp.Expr, term: sp.Expr, description: str) -> SumOver:
    return SumOver(symbol, term, dims, description)


exact_sum = _key_sum(T, sp.exp(x_j), "T = Σ_j exp(x_j)")
numerator = _key_sum(
    N(tau),
    sp.exp(x_j + tau * d_j) * (1 + tau * pi_j) * (1 + tau * mu_j) * v_j,
    "N(τ) = Σ_j exp(x_j + τd_j)(1 + τπ_j)(1 + τμ_j) v_j",
)
denominator = _key_sum(Z(tau), sp.exp(x_j + tau * d_j), "Z(τ) = Σ_j exp(x_j + τd_j)")
numerator_slope = _key_sum(Ndot, sp.exp(x_j) * term_error * v_j, "N'(0), termwise")
denominator_slope = _key_sum(Zdot, sp.exp(x_j) * d_j, "Z'(0), termwise")
output = _key_sum(Out, p_j * v_j, "o = Σ_j p_j v_j, the exact output")
weighted_error = _key_sum(E1, p_j * term_error * v_j, "Σ_j p_j (d_j + π_j + μ_j) v_j")
mean_error = _key_sum(Dbar, p_j * d_j, "Σ_j p_j d_j")
natural_scale = _key_sum(W, p_j * a_j, "W = Σ_j p_j a_j >= Σ_j p_j |v_j|")
weighted_terms = _key_sum(B, p_j * a_j * (b_j + r_j), "B = Σ_j p_j a_j (b_j + r_j)")
mean_bound = _key_sum(Bbar, p_j * b_j, "b̄ = Σ_j p_j b_j")
_room = a_j * (b_j + r_j + gamma_pv)
slack_error_plus = _key_sum(Q1p, p_j * (_room - term_error * v_j), "Q1₊, slacks >= 0")
slack_error_minus = _key_sum(Q1m, p_j * (_room + term_error * v_j), "Q1₋, slacks >= 0")
slack_mean_plus = _key_sum(Q2p, p_j * (b_j - d_j), "Q2₊ = Σ_j p_j (b_j − d_j)")
slack_mean_minus = _key_sum(Q2m, p_j * (b_j + d_j), "Q2₋ = Σ_j p_j (b_j + d_j)")
slack_output_plus = _key_sum(Q3p, p_j * (a_j - v_j), "Q3₊ = Σ_j p_j (a_j − v_j)")
slack_output_minus = _key_sum(Q3m, p_j * (a_j + v_j), "Q3₋ = Σ_j p_j (a_j + v_j)")

computed_dot = _dim_sum(Dhat(tau), y_e * (1 + tau * theta_e), "D̂(τ) = Σ_e y_e (1 + τθ_e)")
exact_dot = _dim_sum(Dot, y_e, "D = Σ_e y_e = q·k_j")
dot_size = _dim_sum(A, z_e, "A = Σ_e z_e >= Σ_e |q_e k_je|")
dot_error = _dim_sum(Theta, y_e * theta_e, "Θ = Σ_e y_e θ_e = D̂'(0)")
slack_dot_plus = _dim_sum(Q4p, z_e * gamma_qk - y_e * theta_e, "Q4₊, slacks >= 0")
slack_dot_minus = _dim_sum(Q4m, z_e * gamma_qk + y_e * theta_e, "Q4₋, slacks >= 0")
slack_size_plus = _dim_sum(Q5p, z_e - y_e, "Q5₊ = Σ_e (z_e − y_e)")
slack_size_minus = _dim_sum(Q5m, z_e + y_e, "Q5₋ = Σ_e (z_e + y_e)")

t14_definitions = (
    exact_sum,
    numerator,
    denominator,
    numerator_slope,
    denominator_slope,
    output,
    weighted_error,
    mean_error,
    natural_scale,
    weighted_terms,
    mean_bound,
    slack_error_plus,
    slack_error_minus,
    slack_mean_plus,
    slack_mean_minus,
    slack_output_plus,
    slack_output_minus,
    computed_dot,
    exact_dot,
    dot_size,
    dot_error,
    slack_dot_plus,
    slack_dot_minus,
    slack_size_plus,
    slack_size_minus,
)


def computed_score(scale_by: sp.Expr) -> sp.Expr:
    """``ŝ_j = (scale·(1 + ψ)·D̂ + m)(1 + δ_m)`` with every error scaled by ``scale_by``."""
    s = scale_by
    return (scale * (1 + s * psi) * Dhat(s) + mask_value) * (1 + s * delta_mask)


def computed_output(scale_by: sp.Expr) -> sp.Expr:
    """``ô = (1 + ω)·N/Z`` with every error scaled by ``scale_by``."""
    s = scale_by
    return (1 + s * omega) * N(s) / Z(s)


score_first_order = scale * psi * Dot + scale * Theta + delta_mask * (scale * Dot + mask_value)
"""``d/dτ ŝ_j`` at ``τ = 0``."""
score_bound_expr = attention_score_error_bound.expr.xreplace(
    {scale_dot: scale * A, score_size: score_bound}
)
output_first_order = omega * Out + E1 - Out * Dbar
"""``d/dτ ô`` at ``τ = 0``: ``ω·o + Σ_j p_j v_j (d_j + π_j + μ_j) − o·Σ_j p_j d_j``."""
output_bound_expr = attention_output_error_bound.expr.xreplace(
    {weighted_bound: B, value_scale: W, mean_score_error: Bbar}
)

_score_derivative = sp.Eq(
    derivative_at_zero(computed_score(tau)), score_first_order, evaluate=False
)
_score_bounded = two_sided(score_first_order, score_bound_expr)
_output_derivative = sp.Eq(
    derivative_at_zero(computed_output(tau)), output_first_order, evaluate=False
)
_output_bounded = two_sided(output_first_order, output_bound_expr)
_node_bounded = two_sided((1 + theta_acc) * (1 + delta_add) - 1, gamma_of(depth + 1))
"""A term's factor through one more addition: within ``γ_{k+1}`` if it was within ``γ_k``."""
_depth_bounded = sp.Le(gamma_of(tree_depth), gamma_of(n))
"""A term of a dot product of ``n`` products passes at most ``n`` roundings: ``γ_d <= γ_n``."""

fixed_in_tau = (scale, psi, mask_value, delta_mask, omega)
"""What ``d/dτ`` holds fixed: ``τ`` multiplies the error variables explicitly."""

_assumptions: list[sp.Basic] = [
    sp.Ge(n, 1),
    sp.Ge(n_dims, 1),
    sp.Ge(Delta, 0),  # the gaps' range [−Δ, 0] holds a member (the top logit's 0)
    sp.Ge(u, 0),
    sp.Ge(gamma_qk, 0),
    sp.Ge(gamma_pv, 0),
    sp.Ge(score_roundings, 0),
    sp.Gt(scale, 0),
    sp.Le(-score_roundings * u, psi),
    sp.Le(psi, score_roundings * u),
    sp.Le(-u, delta_mask),
    sp.Le(delta_mask, u),
    sp.Le(-u, omega),
    sp.Le(omega, u),
    # the exact score's magnitude, as the bound uses it
    sp.Le(-score_bound, scale * Dot + mask_value),
    sp.Le(scale * Dot + mask_value, score_bound),
    # one addition in a summation tree, after a subtree of depth k
    sp.Ge(depth, 0),
    sp.Lt((depth + 1) * u, 1),
    sp.Le(-gamma_of(depth), theta_acc),
    sp.Le(theta_acc, gamma_of(depth)),
    sp.Le(-u, delta_add),
    sp.Le(delta_add, u),
    # a term of a dot product of n products: at most n roundings
    sp.Ge(tree_depth, 0),
    sp.Le(tree_depth, n),
    sp.Lt(n * u, 1),
]


def _t14_proof() -> list[Step]:
    zero = sp.Integer(0)
    one = sp.Integer(1)
    return [
        # the scores
        SumLinearity(computed_dot.at(0), [(one, exact_dot)], "without errors D̂(0) = D"),
        SumDerivative(computed_dot, tau, [(one, dot_error)], "D̂'(0) = Σ_e y_e θ_e", point=zero),
        Differentiate(
            computed_score(tau),
            tau,
            "first-order term of the computed score",
            point=zero,
            value=score_first_order,
            constants=fixed_in_tau,
        ),
        SumOfTerms(slack_dot_plus, zero, None, "z_e·gamma_qk − y_e θ_e >= 0, summed"),
        SumOfTerms(slack_dot_minus, zero, None, "z_e·gamma_qk + y_e θ_e >= 0, summed"),
        SumOfTerms(slack_size_plus, zero, None, "z_e − y_e >= 0, summed"),
        SumOfTerms(slack_size_minus, zero, None, "z_e + y_e >= 0, summed"),
        SumLinearity(slack_dot_plus, [(gamma_qk, dot_size), (-one, dot_error)], "Q4₊ = γ·A − Θ"),
        SumLinearity(slack_dot_minus, [(gamma_qk, dot_size), (one, dot_error)], "Q4₋ = γ·A + Θ"),
        SumLinearity(slack_size_plus, [(one, dot_size), (-one, exact_dot)], "Q5₊ = A − D"),
        SumLinearity(slack_size_minus, [(one, dot_size), (one, exact_dot)], "Q5₋ = A + D"),
        Implied(two_sided(Theta, gamma_qk * A), "|Θ| <= gamma_qk·A"),
        Implied(two_sided(Dot, A), "|D| <= A"),
        Implied(_score_bounded, "|first-order score error| <= the exported bound"),
        # the output
        SumOfTerms(
            exact_sum,
            sp.exp(-Delta),
            None,
            "T = Σ exp(x_j) >= n·exp(−Δ)",
            termwise=(ExpMonotone(-Delta, x_j, "exp is increasing"),),
        ),
        Implied(sp.Gt(T, 0), "so T > 0 and p_j = exp(x_j)/T is defined"),
        SumLinearity(numerator.at(0), [(T, output)], "N(0) = Σ_j exp(x_j) v_j = T·o"),
        SumLinearity(denominator.at(0), [(one, exact_sum)], "Z(0) = T"),
        SumDerivative(numerator, tau, [(one, numerator_slope)], "N'(0), termwise", point=zero),
        SumLinearity(numerator_slope, [(T, weighted_error)], "N'(0) = T·Σ_j p_j (d+π+μ)_j v_j"),
        SumDerivative(denominator, tau, [(one, denominator_slope)], "Z'(0), termwise", point=zero),
        SumLinearity(denominator_slope, [(T, mean_error)], "Z'(0) = T·Σ_j p_j d_j"),
        Differentiate(
            computed_output(tau),
            tau,
            "first-order term of the computed output",
            point=zero,
            value=output_first_order,
            constants=fixed_in_tau,
        ),
        SumOfTerms(slack_error_plus, zero, None, "p_j(a_j(b_j+r_j+γ) − (d+π+μ)_j v_j) >= 0"),
        SumOfTerms(slack_error_minus, zero, None, "p_j(a_j(b_j+r_j+γ) + (d+π+μ)_j v_j) >= 0"),
        SumOfTerms(slack_mean_plus, zero, None, "p_j(b_j − d_j) >= 0, summed"),
        SumOfTerms(slack_mean_minus, zero, None, "p_j(b_j + d_j) >= 0, summed"),
        SumOfTerms(slack_output_plus, zero, None, "p_j(a_j − v_j) >= 0, summed"),
        SumOfTerms(slack_output_minus, zero, None, "p_j(a_j + v_j) >= 0, summed"),
        SumLinearity(
            slack_error_plus,
            [(one, weighted_terms), (gamma_pv, natural_scale), (-one, weighted_error)],
            "Q1₊ = B + γ·W − E1",
        ),
        SumLinearity(
            slack_error_minus,
            [(one, weighted_terms), (gamma_pv, natural_scale), (one, weighted_error)],
            "Q1₋ = B + γ·W + E1",
        ),
        SumLinearity(slack_mean_plus, [(one, mean_bound), (-one, mean_error)], "Q2₊ = b̄ − D̄"),
        SumLinearity(slack_mean_minus, [(one, mean_bound), (one, mean_error)], "Q2₋ = b̄ + D̄"),
        SumLinearity(slack_output_plus, [(one, natural_scale), (-one, output)], "Q3₊ = W − o"),
        SumLinearity(slack_output_minus, [(one, natural_scale), (one, output)], "Q3₋ = W + o"),
        Implied(two_sided(E1, B + gamma_pv * W), "|E1| <= B + gamma_pv·W"),
        Implied(two_sided(Dbar, Bbar), "|D̄| <= b̄"),
        Implied(two_sided(Out, W), "|o| <= W"),
        Implied(two_sided(Out * Dbar, W * Bbar), "|o·D̄| <= W·b̄ (a product bound)"),
        Implied(two_sided(omega * Out, u * W), "|ω·o| <= u·W (a product bound)"),
        Implied(_output_bounded, "|first-order output error| <= the exported bound"),
        # dot products in any order
        Implied(_node_bounded, "a term within γ_k through one more addition is within γ_{k+1}"),
        Implied(_depth_bounded, "γ_d <= γ_n for a depth d <= n"),
        Implied(T14.statement, "collect the first-order terms and their bounds"),
    ]


T14 = Claim(
    id="T14",
    title="first-order rounding error of attention softmax(q kᵀ·scale + mask) v",
    statement=sp.And(
        _score_derivative,
        _score_bounded,
        _output_derivative,
        _output_bounded,
        _node_bounded,
        _depth_bounded,
    ),
    assumptions=_assumptions,
    source=(
        "derived; the error bounds of the single operations are assumptions: the standard "
        "model |δ| <= u (Higham 2002, §2.2), the softmax's relative error |π_j| <= r_j "
        "(T12's bound for the softmax of the computed scores), and the error factors of "
        "dot products in any order, |θ_e| <= gamma_qk and |μ_j| <= gamma_pv (Higham 2002, "
        "§3.1; the inductive step is proved here)"
    ),
    proof=_t14_proof,
    formulas=("attention_score_error_bound", "attention_output_error_bound", "gamma_dot_product"),
    definitions=t14_definitions,
    # exact arithmetic (every error 0) on one key and one product, both 0
    witness={
        symbol: 0
        for symbol in sorted(
            {s for a in _assumptions for s in a.free_symbols}
            | set(keys.index)
            | set(dims.index)
            | {Delta},
            key=str,
        )
        if symbol not in (n, n_dims, scale, Dot)
    }
    | {n: 1, n_dims: 1, scale: 1},
)

CLAIMS = (T14,)

if __name__ == "__main__":
    from softmax_dispersion.theory._result_text import run_claims

    raise SystemExit(run_claims(CLAIMS))
