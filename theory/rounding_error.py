"""T12: the first-order floating-point error of the max-shifted softmax and log-softmax.

Run ``python -m softmax_dispersion.theory.rounding_error`` to check the proof.

The model of the computation
----------------------------
A format with unit roundoff ``u`` (``2**-24`` for float32, ``2**-11`` for float16)
computes, for logits ``e`` and temperature ``θ``, with ``x_j = (e_j − e_max)/θ <= 0``:

- ``x̂_j = x_j (1 + η_j)`` with ``|η_j| <= a`` (``arg_error``);
- ``y_j = exp(x̂_j) (1 + ε_j)`` with ``|ε_j| <= κ = 2·exp_ulps·u``;
- ``Ŝ = (Σ_j y_j) (1 + σ)`` with ``|σ| <= γ`` (the summation's error factor);
- ``p̂_i = (y_i / Ŝ) (1 + ω)`` with ``|ω| <= u``;
- ``L̂ = log(Ŝ) (1 + λ)`` with ``|λ| <= κ_log = 2·log_ulps·u``;
- ``ℓ̂_i = (x̂_i − L̂) (1 + ν)`` with ``|ν| <= u`` (log-softmax).

The bounds are the standard model of floating-point arithmetic, ``fl(a op b) =
(a op b)(1 + δ)`` with ``|δ| <= u`` (Higham, *Accuracy and Stability of Numerical
Algorithms*, 2nd ed., 2002, §2.2), and the error of summing positive terms,
``|σ| <= γ`` with ``γ`` one of :data:`gamma_recursive` or :data:`gamma_pairwise`
(Higham 2002, §4.2).  They are cited, not derived: T12 lists them among its
assumptions.  ``a = u`` when ``θ = 1`` (one subtraction, ``e_max − e_max`` is exact),
and ``a = 2u`` to first order for a subtraction followed by a division by ``θ``.  A
routine with an error of ``k`` ulps has a relative error of at most ``2·k·u``, because an
ulp of a normal number ``y`` is at most ``2u|y|``; a correctly rounded ``exp`` has
``exp_ulps = 1/2``.  The model needs every ``exp(x̂_j)``, ``p̂_i`` and ``Ŝ`` in the normal
range (no underflow) and assumes the shift by ``e_max`` happens before the scaling by
``1/θ``: an implementation that scales first has an argument error relative to
``|e_j|/θ``, not to the gap.

The derivation (T12)
--------------------
Write ``T = Σ_j exp(x_j)`` (so ``p_j = exp(x_j)/T``), ``V = Σ_j p_j (1 + ε_j) exp(x_j η_j)``,
``D = Σ_j p_j (ε_j + x_j η_j)`` and ``G = Σ_j p_j |x_j|`` (the *mean gap*).  Every sum is a
sum of ``n`` generic terms, decided by the kernel's sum rules; ``Σ_j p_j = 1`` is proved
(by :class:`~softmax_dispersion.theory.kernel.SumLinearity`), not declared.

1. Exact identity: ``Σ_j y_j = T·V`` (generic-term identity), hence
   ``p̂_i/p_i = (1+ω)(1+ε_i) exp(x_i η_i) / ((1+σ) V)``.
2. First-order term: scale every error variable by ``τ``; the computed sum becomes
   ``Y(τ) = Σ_j exp(x_j(1 + τη_j))(1 + τε_j)`` with ``Y(0) = T`` and, term by term,
   ``Y'(0) = Σ_j exp(x_j)(ε_j + x_j η_j) = T·D``.  Then
   ``d/dτ (p̂_i(τ)/p_i) at τ = 0`` equals ``ω + ε_i + x_i η_i − σ − D``.
3. Bound: ``|x_j η_j| <= |x_j| a`` and ``|ε_j| <= κ`` termwise, weighted by ``p_j >= 0``
   and summed, give ``|D| <= a G + κ``; so the first-order relative error is at most
   ``(|x_i| + G) a + 2κ + γ + u`` (:data:`softmax_relative_error_bound`).
4. Log-softmax: ``log Ŝ = log T + log V + log(1 + σ)`` gives the exact error, and the
   same ``τ`` scaling the first-order absolute error
   ``x_i η_i − σ − D − λ log T + ν (x_i − log T)``, at most
   ``(|x_i| + G) a + κ + γ + κ_log |log T| + u (|x_i| + |log T|)``
   (:data:`log_softmax_absolute_error_bound`).

The exp error enters the softmax twice (numerator and sum); a sharper bound
``2(1 − p_i)κ`` holds because ``ε_i`` is also a term of the sum, but the proof treats
them as independent and exports the simpler bound.

Examples
--------
The oracle's default tolerance for float32 (``u = 2**-24``), ``θ = 1`` (``a = u``), a
2-ulp exp and recursive summation of ``n = 1000`` terms, for an entry 3 below the
maximum when the mean gap is 2:

>>> import sympy as sp
>>> from softmax_dispersion.theory.rounding_error import (
...     gamma_pairwise, gamma_recursive, log_softmax_absolute_error_bound,
...     softmax_relative_error_bound)
>>> u = sp.Rational(1, 2**24)
>>> gamma = gamma_recursive(n=1000, u=u)
>>> gamma
999/16776217
>>> bound = softmax_relative_error_bound(
...     gap_i=3, mean_gap=2, u=u, exp_ulps=2, gamma=gamma, arg_error=u)
>>> float(bound / u)
1013.0594...
>>> float(gamma_pairwise(n=1000, u=u) / u)
10.0000059...
>>> float(log_softmax_absolute_error_bound(gap_i=3, mean_gap=2, log_sum=5, u=u,
...     exp_ulps=2, log_ulps=4, gamma=gamma, arg_error=u) / u)
1056.0594...
"""

from __future__ import annotations

import sympy as sp
from sympy.codegen.cfunctions import log2

from softmax_dispersion.theory.formulas import formula
from softmax_dispersion.theory.kernel import (
    Claim,
    Differentiate,
    ExpMonotone,
    Family,
    Identity,
    Implied,
    LogMonotone,
    Step,
    SumDerivative,
    SumLinearity,
    SumOfTerms,
    SumOver,
)
from softmax_dispersion.theory.symbols import n

__all__ = [
    "T12",
    "gamma_pairwise",
    "gamma_recursive",
    "log_softmax_absolute_error_bound",
    "softmax_relative_error_bound",
]

# --- the formulas' arguments -------------------------------------------------------

u = sp.Symbol("u", real=True)
"""Unit roundoff of the format: ``2**-24`` (float32), ``2**-11`` (float16), ``2**-8`` (bfloat16)."""
gap_i = sp.Symbol("gap_i", real=True)
"""``|e_i − e_max|/θ``: how far the entry's scaled logit lies below the maximum."""
mean_gap = sp.Symbol("mean_gap", real=True)
"""``Σ_j p_j |e_j − e_max|/θ``, the softmax-weighted mean gap (``= H(p) − log S <= log n``)."""
log_sum = sp.Symbol("log_sum", real=True)
"""``log Σ_j exp((e_j − e_max)/θ)`` (``>= 0``); any upper bound on ``|log S|`` will do."""
exp_ulps = sp.Symbol("exp_ulps", real=True)
"""Error of the ``exp`` routine in ulps of its result (``1/2`` if correctly rounded)."""
log_ulps = sp.Symbol("log_ulps", real=True)
"""Error of the ``log`` routine in ulps of its result (``1/2`` if correctly rounded)."""
gamma = sp.Symbol("gamma", real=True)
"""Relative error factor of the summation of positive terms (:data:`gamma_recursive`, ...)."""
arg_error = sp.Symbol("arg_error", real=True)
"""Relative error of the computed ``(e_j − e_max)/θ``: ``u`` for ``θ = 1``, else ``2u``."""

softmax_relative_error_bound = formula(
    "softmax_relative_error_bound",
    (gap_i + mean_gap) * arg_error + 2 * (2 * exp_ulps * u) + gamma + u,
    (gap_i, mean_gap, u, exp_ulps, gamma, arg_error),
    "T12: first-order bound on |p̂_i/p_i − 1| for the max-shifted softmax: "
    "(gap_i + mean_gap)·arg_error + 4·exp_ulps·u + gamma + u",
)
"""T12: first-order bound on the relative error ``|p̂_i − p_i|/p_i`` of the softmax.

Parameters
----------
gap_i
    ``|e_i − e_max|/θ``, exact (from the input values, not the computed ones).
mean_gap
    ``Σ_j p_j |e_j − e_max|/θ`` with the exact softmax weights ``p_j``.
u
    The unit roundoff of the format the softmax is computed in.
exp_ulps
    The exp routine's error in ulps of its result; its relative error is
    ``2·exp_ulps·u`` (``1/2`` for a correctly rounded exp).
gamma
    The summation's relative error factor: :data:`gamma_recursive` for any order,
    :data:`gamma_pairwise` for a known pairwise sum.
arg_error
    The relative error of the computed ``(e_j − e_max)/θ``: ``u`` when ``θ = 1``,
    ``2u`` for a subtraction then a division by ``θ``.

Notes
-----
.. math:: \\frac{|\\hat p_i - p_i|}{p_i} \\lesssim (g_i + \\bar g)\\,a + 4 k u + \\gamma + u

with ``g_i = gap_i``, ``ḡ = mean_gap``, ``a = arg_error``, ``k = exp_ulps``: the argument
error ``x_i η_i`` and its weighted mean, the exp error ``2ku`` in the numerator and in the
sum, the summation factor, and the final division.  First order: the neglected terms
are products of two of these.

Examples
--------
Float32, ``θ = 1``, a 1-ulp exp, one logit 3 below the maximum, a mean gap of 1/2,
``n = 4`` terms summed in any order:

>>> import sympy as sp
>>> from softmax_dispersion.theory.rounding_error import (
...     gamma_recursive, softmax_relative_error_bound)
>>> u = sp.Rational(1, 2**24)
>>> bound = softmax_relative_error_bound(gap_i=3, mean_gap=sp.Rational(1, 2), u=u,
...     exp_ulps=1, gamma=gamma_recursive(n=4, u=u), arg_error=u)
>>> round(float(bound / u), 6)
11.500001
>>> float(softmax_relative_error_bound.numpy(3.0, 0.5, 2.0**-24, 1.0, 0.0, 2.0**-24) * 2**24)
8.5
"""

log_softmax_absolute_error_bound = formula(
    "log_softmax_absolute_error_bound",
    (gap_i + mean_gap) * arg_error
    + 2 * exp_ulps * u
    + gamma
    + 2 * log_ulps * u * log_sum
    + u * (gap_i + log_sum),
    (gap_i, mean_gap, log_sum, u, exp_ulps, log_ulps, gamma, arg_error),
    "T12: first-order bound on |log p̂_i − log p_i| for log-softmax computed as "
    "x̂_i − log Ŝ: (gap_i + mean_gap)·arg_error + 2·exp_ulps·u + gamma "
    "+ 2·log_ulps·u·log_sum + u·(gap_i + log_sum)",
)
"""T12: first-order bound on the absolute error of ``log p̂_i = x̂_i − log Ŝ``.

Parameters
----------
gap_i, mean_gap, u, exp_ulps, gamma, arg_error
    As for :data:`softmax_relative_error_bound`.
log_sum
    ``log Σ_j exp((e_j − e_max)/θ)``, exact; it is ``>= 0`` (the maximum contributes
    ``exp(0) = 1``), and any upper bound on ``|log S|`` may be passed.
log_ulps
    The log routine's error in ulps of its result (relative error ``2·log_ulps·u``).

Notes
-----
.. math:: |\\hat\\ell_i - \\ell_i| \\lesssim (g_i + \\bar g)\\,a + 2ku + \\gamma
   + 2 k_{\\log} u \\log S + u\\,(g_i + \\log S)

with ``log S = log_sum`` and ``k_log = log_ulps``; the last term is the rounding of the
final subtraction, whose exact result is ``log p_i = −(g_i + log S)``.

Examples
--------
>>> import sympy as sp
>>> from softmax_dispersion.theory.rounding_error import log_softmax_absolute_error_bound
>>> u = sp.Rational(1, 2**11)
>>> bound = log_softmax_absolute_error_bound(gap_i=2, mean_gap=1, log_sum=1, u=u,
...     exp_ulps=sp.Rational(1, 2), log_ulps=sp.Rational(1, 2), gamma=0, arg_error=u)
>>> bound / u
8
"""

gamma_recursive = formula(
    "gamma_recursive",
    (n - 1) * u / (1 - (n - 1) * u),
    (n, u),
    "γ_{n−1} = (n−1)u/(1−(n−1)u): summation error factor of n positive terms in any "
    "order (Higham 2002, §4.2); needs (n−1)u < 1",
)
"""Summation error factor ``γ_{n−1}``, valid for *any* order of summing ``n`` terms.

Parameters
----------
n
    The number of terms summed.
u
    The unit roundoff of the format of the partial sums.

Notes
-----
.. math:: \\gamma_{n-1} = \\frac{(n-1)u}{1-(n-1)u}

Every summation tree of ``n`` terms has depth at most ``n − 1``, so for positive terms
``|Ŝ − S| <= γ_{n−1} S`` (Higham 2002, §4.2, with ``γ_m`` from §3.1); valid while
``(n − 1)u < 1``.  Cited, not derived.

Examples
--------
>>> import sympy as sp
>>> from softmax_dispersion.theory.rounding_error import gamma_recursive
>>> gamma_recursive(n=3, u=sp.Rational(1, 2**11))
1/1023
>>> float(gamma_recursive.numpy(1001, 2.0**-24) * 2**24)
1000.0596...
"""

gamma_pairwise = formula(
    "gamma_pairwise",
    sp.ceiling(log2(n)) * u / (1 - sp.ceiling(log2(n)) * u),
    (n, u),
    "γ_{⌈log2 n⌉}: summation error factor of pairwise summation of n positive terms "
    "(Higham 2002, §4.2); needs ⌈log2 n⌉u < 1",
)
"""Summation error factor ``γ_{⌈log2 n⌉}`` of pairwise (cascade) summation.

Parameters
----------
n
    The number of terms summed.
u
    The unit roundoff of the format of the partial sums.

Notes
-----
.. math:: \\gamma_{\\lceil \\log_2 n \\rceil} =
   \\frac{\\lceil \\log_2 n \\rceil u}{1 - \\lceil \\log_2 n \\rceil u}

The summation tree of pairwise summation has depth ``⌈log2 n⌉`` (Higham 2002, §4.2).
Only for an implementation known to sum pairwise: blocked or vectorised sums (numpy's)
have deeper trees.  The numpy evaluation uses ``log2``, exact at powers of two; the
mpmath one computes ``log(n)/log(2)`` and may round up one step there (a larger,
still valid factor).

Examples
--------
>>> import sympy as sp
>>> from softmax_dispersion.theory.rounding_error import gamma_pairwise
>>> gamma_pairwise(n=1024, u=sp.Rational(1, 2**24))
5/8388603
>>> u = 2.0**-53  # at n = 2**29 the depth is exactly 29, not 30
>>> bool(gamma_pairwise.numpy(2.0**29, u) == 29 * u / (1 - 29 * u))
True
"""

# --- the model: symbols and computed quantities ----------------------------------------

x_i = sp.Symbol("x_i", real=True)
"""``(e_i − e_max)/θ <= 0``, the shifted scaled logit of the output entry."""
x_j = sp.Symbol("x_j", real=True)
"""A generic shifted scaled logit: the summation index."""
eta_i, eta_j = sp.symbols("eta_i eta_j", real=True)
eps_i, eps_j = sp.symbols("epsilon_i epsilon_j", real=True)
sigma, omega, lam, nu = sp.symbols("sigma omega lambda nu", real=True)
tau = sp.Symbol("tau", real=True)
"""Scales every error variable: ``τ = 1`` is the computation, ``τ = 0`` exact arithmetic."""
Delta = sp.Symbol("Delta", real=True)
"""Any bound on the gaps, ``x_j >= −Δ`` (finite logits); only used to show ``T > 0``."""
T, V, P, D, G, Ydot, Q_plus, Q_minus = sp.symbols("T V P D G Ydot Q_plus Q_minus", real=True)
Y = sp.Function("Y", real=True)
"""``Y(τ)``: the computed sum ``Σ_j y_j`` before its own rounding, errors scaled by ``τ``."""

kappa = 2 * exp_ulps * u
"""Relative error bound of the exp routine, ``2·exp_ulps·u``."""
kappa_log = 2 * log_ulps * u
"""Relative error bound of the log routine, ``2·log_ulps·u``."""

#: The n terms of the sum: each a shifted logit x_j in [−Δ, 0] with its errors η_j, ε_j.
terms = Family(
    "terms",
    (x_j, eta_j, eps_j),
    n,
    (
        sp.Le(-Delta, x_j),
        sp.Le(x_j, 0),
        sp.Le(-arg_error, eta_j),
        sp.Le(eta_j, arg_error),
        sp.Le(-kappa, eps_j),
        sp.Le(eps_j, kappa),
    ),
    "the n terms: x_j in [−Δ, 0], |η_j| <= arg_error, |ε_j| <= κ",
)
p_j = sp.exp(x_j) / T
p_i = sp.exp(x_i) / T
"""The exact coefficient ``p_i = exp(x_i)/T``."""


def _sum(symbol: sp.Expr, term: sp.Expr, description: str) -> SumOver:
    return SumOver(symbol, term, terms, description)


exact_sum = _sum(T, sp.exp(x_j), "T = Σ_j exp(x_j), the exact sum")
weights_total = _sum(P, p_j, "Σ_j p_j")
computed_sum = _sum(
    Y(tau),
    sp.exp(x_j * (1 + tau * eta_j)) * (1 + tau * eps_j),
    "Y(τ) = Σ_j exp(x_j(1 + τη_j))(1 + τε_j), the computed sum with errors scaled by τ",
)
perturbation_mean = _sum(
    V, p_j * (1 + eps_j) * sp.exp(x_j * eta_j), "V = Σ_j p_j(1+ε_j)exp(x_j η_j)"
)
sum_derivative = _sum(
    Ydot, sp.exp(x_j) * (eps_j + x_j * eta_j), "Y'(0) = Σ_j exp(x_j)(ε_j + x_j η_j)"
)
first_order_mean = _sum(D, p_j * (eps_j + x_j * eta_j), "D = Σ_j p_j(ε_j + x_j η_j)")
mean_gap_sum = _sum(G, p_j * (-x_j), "G = Σ_j p_j |x_j|, the mean gap")
slack_plus = _sum(
    Q_plus, p_j * (-x_j * arg_error + kappa - eps_j - x_j * eta_j), "Q₊, a sum of slacks >= 0"
)
slack_minus = _sum(
    Q_minus, p_j * (-x_j * arg_error + kappa + eps_j + x_j * eta_j), "Q₋, a sum of slacks >= 0"
)
t12_definitions = (
    exact_sum,
    weights_total,
    computed_sum,
    perturbation_mean,
    sum_derivative,
    first_order_mean,
    mean_gap_sum,
    slack_plus,
    slack_minus,
)


def computed_softmax(scale: sp.Expr) -> sp.Expr:
    """``p̂_i`` with every error variable multiplied by ``scale`` (1: the computation)."""
    s = scale
    y_i = sp.exp(x_i * (1 + s * eta_i)) * (1 + s * eps_i)
    return y_i * (1 + s * omega) / (Y(s) * (1 + s * sigma))


def computed_log_softmax(scale: sp.Expr) -> sp.Expr:
    """``ℓ̂_i = (x̂_i − log(Ŝ)(1+λ))(1+ν)`` with every error scaled by ``scale``."""
    s = scale
    log_sum_hat = sp.log(Y(s) * (1 + s * sigma)) * (1 + s * lam)
    return (x_i * (1 + s * eta_i) - log_sum_hat) * (1 + s * nu)


log_softmax_exact = x_i - sp.log(T)
"""The exact ``ℓ_i = log p_i = x_i − log T``."""

softmax_first_order = omega + eps_i + x_i * eta_i - sigma - D
"""The first-order relative error of ``p̂_i``: ``ω + ε_i + x_i η_i − σ − Σ_j p_j(ε_j + x_j η_j)``."""
log_softmax_first_order = x_i * eta_i - sigma - D - lam * sp.log(T) + nu * (x_i - sp.log(T))
"""The first-order absolute error of ``ℓ̂_i``."""

softmax_bound = softmax_relative_error_bound.expr.subs({gap_i: -x_i, mean_gap: G})
log_softmax_bound = log_softmax_absolute_error_bound.expr.subs({gap_i: -x_i, mean_gap: G})


def two_sided(value: sp.Expr, bound: sp.Expr) -> sp.Basic:
    """``|value| <= bound`` written as ``−bound <= value <= bound`` (what z3 can read)."""
    return sp.And(sp.Le(-bound, value), sp.Le(value, bound))


def derivative_at_zero(expr: sp.Expr) -> sp.Expr:
    """The unevaluated ``d/dτ expr`` at ``τ = 0``."""
    return sp.Subs(sp.Derivative(expr, tau), tau, 0)


fixed_in_tau = (x_i, T, eta_i, eps_i, omega, sigma, lam, nu)
"""What ``d/dτ`` holds fixed: the exact data of entry ``i`` and its error variables.

``τ`` multiplies the error variables explicitly (:func:`computed_softmax`), so they do
not vary with it themselves, and the first-order term is the partial derivative in
``τ``.  The computed sum varies with ``τ`` and enters as the function ``Y(τ)``.
"""


# --- T12 --------------------------------------------------------------------------------

_assumptions: list[sp.Basic] = [
    sp.Ge(n, 1),
    sp.Le(x_i, 0),
    sp.Le(-arg_error, eta_i),
    sp.Le(eta_i, arg_error),
    sp.Ge(u, 0),
    sp.Ge(exp_ulps, 0),
    sp.Lt(kappa, 1),
    sp.Le(-kappa, eps_i),
    sp.Le(eps_i, kappa),
    sp.Lt(gamma, 1),
    sp.Le(-gamma, sigma),
    sp.Le(sigma, gamma),
    sp.Le(-u, omega),
    sp.Le(omega, u),
    sp.Ge(log_ulps, 0),
    sp.Le(-kappa_log, lam),
    sp.Le(lam, kappa_log),
    sp.Le(-u, nu),
    sp.Le(nu, u),
    sp.Le(-log_sum, sp.log(T)),
    sp.Le(sp.log(T), log_sum),
]

_ratio = computed_softmax(sp.Integer(1)) / p_i
_ratio_identity = sp.Eq(
    _ratio, (1 + omega) * (1 + eps_i) * sp.exp(x_i * eta_i) / ((1 + sigma) * V), evaluate=False
)
_log_hat = sp.log(Y(1) * (1 + sigma))
_log_error = computed_log_softmax(sp.Integer(1)) - log_softmax_exact
_log_identity = sp.Eq(
    _log_error,
    x_i * eta_i
    - sp.log(V)
    - sp.log(1 + sigma)
    - lam * _log_hat
    + nu * (x_i * (1 + eta_i) - (1 + lam) * _log_hat),
    evaluate=False,
)
_softmax_derivative = sp.Eq(
    derivative_at_zero(computed_softmax(tau) / p_i), softmax_first_order, evaluate=False
)
_log_derivative = sp.Eq(
    derivative_at_zero(computed_log_softmax(tau) - log_softmax_exact),
    log_softmax_first_order,
    evaluate=False,
)
_softmax_bounded = two_sided(softmax_first_order, softmax_bound)
_log_bounded = two_sided(log_softmax_first_order, log_softmax_bound)


def _t12_proof() -> list[Step]:
    product = T * V * (1 + sigma)
    return [
        SumOfTerms(
            exact_sum,
            sp.exp(-Delta),
            None,
            "T = Σ exp(x_j) >= n·exp(−Δ)",
            termwise=(
                ExpMonotone(-Delta, x_j, "exp is increasing: each exact term exceeds exp(−Δ)"),
            ),
        ),
        Implied(sp.Gt(T, 0), "so T > 0 and p_j = exp(x_j)/T is defined"),
        SumLinearity(weights_total, [(1 / T, exact_sum)], "the weights add up to 1"),
        SumOfTerms(
            computed_sum.at(1),
            sp.exp(-Delta * (1 + arg_error)) * (1 - kappa),
            None,
            "each y_j >= exp(−Δ(1+a))(1−κ) > 0: sum the termwise bound",
            termwise=(
                ExpMonotone(
                    -Delta * (1 + arg_error),
                    x_j * (1 + eta_j),
                    "exp is increasing: exp(x̂_j) >= exp(−Δ(1+a))",
                ),
            ),
        ),
        Implied(sp.Gt(Y(1), 0), "so the computed sum is positive"),
        SumLinearity(
            computed_sum.at(1),
            [(T, perturbation_mean)],
            "generic term: y_j = T·p_j(1+ε_j)exp(x_j η_j), so Σ y_j = T·V",
        ),
        Implied(_ratio_identity, "exact identity for p̂_i/p_i (field arithmetic)"),
        SumLinearity(computed_sum.at(0), [(sp.Integer(1), exact_sum)], "without errors Y(0) = T"),
        SumDerivative(
            computed_sum,
            tau,
            [(sp.Integer(1), sum_derivative)],
            "Y'(0): termwise derivatives",
            point=sp.Integer(0),
        ),
        SumLinearity(
            sum_derivative, [(T, first_order_mean)], "Y'(0) = T·Σ p_j(ε_j + x_j η_j) = T·D"
        ),
        Differentiate(
            computed_softmax(tau) / p_i,
            tau,
            "first-order term of p̂_i/p_i",
            point=sp.Integer(0),
            value=softmax_first_order,
            constants=fixed_in_tau,
        ),
        SumOfTerms(slack_plus, sp.Integer(0), None, "p_j(|x_j|a + κ − ε_j − x_j η_j) >= 0, summed"),
        SumOfTerms(
            slack_minus, sp.Integer(0), None, "p_j(|x_j|a + κ + ε_j + x_j η_j) >= 0, summed"
        ),
        SumLinearity(
            slack_plus,
            [(arg_error, mean_gap_sum), (kappa, weights_total), (sp.Integer(-1), first_order_mean)],
            "Q₊ = a·G + κ·Σp_j − D",
        ),
        SumLinearity(
            slack_minus,
            [(arg_error, mean_gap_sum), (kappa, weights_total), (sp.Integer(1), first_order_mean)],
            "Q₋ = a·G + κ·Σp_j + D",
        ),
        Implied(two_sided(x_i * eta_i, -x_i * arg_error), "|x_i η_i| <= |x_i| a (a product bound)"),
        Implied(
            two_sided(D, arg_error * G + kappa),
            "|D| <= a·G + κ, from Q₊, Q₋ >= 0 and Σ p_j = 1",
        ),
        Implied(_softmax_bounded, "|first-order relative error| <= the exported bound"),
        LogMonotone(Y(1) * (1 + sigma), product, "log Ŝ <= log(T·V·(1+σ))"),
        LogMonotone(product, Y(1) * (1 + sigma), "log(T·V·(1+σ)) <= log Ŝ"),
        Identity(
            sp.log(product),
            sp.log(T) + sp.log(V) + sp.log(1 + sigma),
            "log of a product of positive factors",
        ),
        Implied(_log_identity, "exact identity for the log-softmax error"),
        Differentiate(
            computed_log_softmax(tau) - log_softmax_exact,
            tau,
            "first-order term of the log-softmax error",
            point=sp.Integer(0),
            value=log_softmax_first_order,
            constants=fixed_in_tau,
        ),
        Implied(
            two_sided(lam * sp.log(T), kappa_log * log_sum),
            "|λ log T| <= κ_log·log_sum (a product bound)",
        ),
        Implied(
            two_sided(nu * log_softmax_exact, u * (log_sum - x_i)),
            "|ν (x_i − log T)| <= u (|x_i| + log_sum)",
        ),
        Implied(_log_bounded, "|first-order absolute error| <= the exported bound"),
        Implied(T12.statement, "collect the identities and bounds"),
    ]


T12 = Claim(
    id="T12",
    title="first-order rounding error of the max-shifted softmax and log-softmax",
    statement=sp.And(
        _ratio_identity,
        _softmax_derivative,
        _softmax_bounded,
        _log_identity,
        _log_derivative,
        _log_bounded,
    ),
    assumptions=_assumptions,
    source=(
        "derived; the error bounds of the single operations are assumptions: the standard "
        "model |δ| <= u (Higham 2002, §2.2), an exp/log routine of exp_ulps/log_ulps ulps "
        "(relative error 2·ulps·u), and the summation bound |σ| <= γ (Higham 2002, §4.2)"
    ),
    proof=_t12_proof,
    formulas=(
        "softmax_relative_error_bound",
        "log_softmax_absolute_error_bound",
        "gamma_recursive",
        "gamma_pairwise",
    ),
    definitions=t12_definitions,
    # exact arithmetic (every error 0) on one term x_j = 0: T = 1, log T = 0
    witness={
        symbol: 0
        for symbol in sorted(
            {s for a in _assumptions for s in a.free_symbols} | {x_j, eta_j, eps_j, Delta},
            key=str,
        )
        if symbol not in (T, n)
    }
    | {n: 1},
)

CLAIMS = (T12,)

if __name__ == "__main__":
    from softmax_dispersion.theory._report import run_claims

    raise SystemExit(run_claims(CLAIMS))
