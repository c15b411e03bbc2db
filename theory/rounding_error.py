"""T12: the first-order floating-point error of softmax and log-softmax, as computed in practice.

Run ``python -m softmax_dispersion.theory.rounding_error`` to check the proof.

The model of the computation
----------------------------
A format with unit roundoff ``u`` (``2**-24`` for float32, ``2**-11`` for float16)
computes, for logits ``e`` and temperature ``θ``, with ``x_j = (e_j − e_max)/θ <= 0``:

- ``x̂_j = x_j (1 + η_j)`` with ``|η_j| <= a`` (``arg_error``);
- ``y_j = exp(x̂_j) (1 + ε_j)`` with ``|ε_j| <= κ = 2·exp_ulps·u``;
- ``Ŝ = (Σ_j y_j) (1 + σ)`` with ``|σ| <= γ`` (the summation's error factor);
- ``L̂ = log(Ŝ) (1 + λ)`` with ``|λ| <= κ_log = 2·log_ulps·u``;

and then one of the standard formulations, each with its own bound:

- max-shift, then divide: ``p̂_i = (y_i/Ŝ)(1 + ω)``
  (:data:`softmax_relative_error_bound`);
- max-shift, then multiply by the reciprocal: ``p̂_i = y_i·((1 + ρ)/Ŝ)(1 + ω)``
  (:data:`softmax_reciprocal_relative_error_bound`);
- the shifted log-softmax: ``ℓ̂_i = (x̂_i − L̂)(1 + ν)``
  (:data:`log_softmax_absolute_error_bound`);
- exp of the log-softmax: ``p̂_i = exp(ℓ̂_i)(1 + ε_out)``
  (:data:`exp_log_softmax_relative_error_bound`);
- the log-sum-exp first: ``ℓ̂_i = (e_i − lse)(1 + ν)``, ``lse = (e_max + L̂)(1 + μ)``
  (:data:`lse_log_softmax_absolute_error_bound`);
- exp after the log-sum-exp: ``p̂_i = exp(e_i − lse)(1 + ε_out)``
  (:data:`exp_lse_relative_error_bound`);
- the log-sum-exp reduced by log-add-exp steps, ``lse = logaddexp(logaddexp(e_1, e_2),
  …)`` in any tree (``np.logaddexp.reduce``), then ``e_i − lse`` or its exp
  (:data:`lae_log_softmax_absolute_error_bound`, :data:`exp_lae_relative_error_bound`);

with ``|ω|, |ν|, |ρ| <= u``, ``|ε_out| <= κ`` and ``|μ| <= lse_u``, the unit roundoff
of the format the log-sum-exp is rounded to (the log-sum-exp-first forms are stated at
``θ = 1``: the logit ``e_i`` enters exactly).

The bounds of single operations are the standard model of floating-point arithmetic,
``fl(a op b) = (a op b)(1 + δ)`` with ``|δ| <= u`` (Higham, *Accuracy and Stability of
Numerical Algorithms*, 2nd ed., 2002, §2.2): T12 lists them among its assumptions.
``a = u`` when ``θ = 1`` (one subtraction, ``e_max − e_max`` is exact), and ``a = 2u``
to first order for a subtraction followed by a division by ``θ``.  A routine with an
error of ``k`` ulps has a relative error of at most ``2·k·u``, because an ulp of a
normal number ``y`` is at most ``2u|y|``; a correctly rounded ``exp`` has ``exp_ulps =
1/2``.  The model needs every ``exp(x̂_j)``, ``p̂_i`` and ``Ŝ`` in the normal range (no
underflow) and assumes the shift by ``e_max`` happens before the scaling by ``1/θ``: an
implementation that scales first has an argument error relative to ``|e_j|/θ``, not to
the gap.

The summation factor
--------------------
A sum of ``n`` positive terms, in *any* order, is a binary tree of additions with ``n``
leaves.  T12 proves the inductive step: a node that adds two subtrees, each within
``γ_k = k·u/(1 − k·u)`` of its exact sum, is within ``γ_{k+1}`` (``(1 + γ_k)(1 + u) <=
1 + γ_{k+1}``, and the same below).  By induction on the tree (a leaf is exact,
``γ_0 = 0``) a tree of depth ``d`` is within ``γ_d``; a tree of ``n`` leaves has ``n − 1``
additions, so ``d <= n − 1``, and T12 proves ``γ_d <= γ_{n−1}`` there.  Hence
:data:`gamma_recursive` (``γ_{n−1}``) holds for every summation order: sequential loops,
blocked sums, trees of any shape, vectorised lanes.  :data:`gamma_pairwise`
(``γ_{⌈log2 n⌉}``) is the depth of a balanced tree, for an implementation known to sum
pairwise (Higham 2002, §4.2).

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
5. The other formulations, by the same ``τ`` scaling: the reciprocal adds ``ρ``; the exp
   of a log-softmax has relative error ``(ℓ̂_i − ℓ_i) + ε_out`` to first order; the
   log-sum-exp first has the absolute error
   ``−D − σ − λ log T − μ (e_max + log T) + ν (x_i − log T)``, bounded with
   ``|μ (e_max + log T)| <= lse_u (top + log S)``.
6. The summation tree's inductive step and the depth bound above.
7. A log-add-exp node's first-order error (the children's errors weighted by their
   shares, plus its own) and the bound on a node's share times its size; the sum over
   the tree is in :data:`lae_log_softmax_absolute_error_bound`'s notes.

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
    "exp_lae_relative_error_bound",
    "exp_log_softmax_relative_error_bound",
    "exp_log_softmax_rigorous_conditions",
    "exp_log_softmax_rigorous_error_bound",
    "exp_lse_relative_error_bound",
    "exp_lse_rigorous_conditions",
    "exp_lse_rigorous_error_bound",
    "gamma_pairwise",
    "gamma_recursive",
    "lae_log_softmax_absolute_error_bound",
    "log_softmax_absolute_error_bound",
    "lse_log_softmax_absolute_error_bound",
    "softmax_reciprocal_relative_error_bound",
    "softmax_reciprocal_rigorous_conditions",
    "softmax_reciprocal_rigorous_error_bound",
    "softmax_relative_error_bound",
    "softmax_rigorous_conditions",
    "softmax_rigorous_error_bound",
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
top = sp.Symbol("top", real=True)
"""A bound on ``|e_max|/θ``, the magnitude of the largest scaled logit."""
lse_u = sp.Symbol("lse_u", real=True)
"""Unit roundoff of the format the log-sum-exp ``e_max/θ + log Ŝ`` is rounded to."""

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
``(n − 1)u < 1``.  T12 proves the inductive step over the tree and ``γ_d <= γ_{n−1}``
for every depth ``d <= n − 1`` (see the module's notes).

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

softmax_reciprocal_relative_error_bound = formula(
    "softmax_reciprocal_relative_error_bound",
    (gap_i + mean_gap) * arg_error + 2 * (2 * exp_ulps * u) + gamma + 2 * u,
    (gap_i, mean_gap, u, exp_ulps, gamma, arg_error),
    "T12: first-order bound on |p̂_i/p_i − 1| for the max-shifted softmax normalised by "
    "a product with the rounded reciprocal 1/Ŝ: "
    "(gap_i + mean_gap)·arg_error + 4·exp_ulps·u + gamma + 2u",
)
"""T12: the relative error bound when the kernel multiplies by ``fl(1/Ŝ)`` instead of dividing.

Parameters
----------
gap_i, mean_gap, u, exp_ulps, gamma, arg_error
    As for :data:`softmax_relative_error_bound`.

Notes
-----
.. math:: \\frac{|\\hat p_i - p_i|}{p_i} \\lesssim (g_i + \\bar g)\\,a + 4 k u + \\gamma + 2u

Vectorised kernels compute the reciprocal of the sum once and multiply every term by
it: two roundings (``ρ`` of the reciprocal, ``ω`` of the product) where a division has
one, so the last term is ``2u``.

Examples
--------
>>> import sympy as sp
>>> from softmax_dispersion.theory.rounding_error import (
...     softmax_reciprocal_relative_error_bound, softmax_relative_error_bound)
>>> u = sp.Rational(1, 2**24)
>>> args = dict(gap_i=1, mean_gap=1, u=u, exp_ulps=1, gamma=0, arg_error=u)
>>> (softmax_reciprocal_relative_error_bound(**args) - softmax_relative_error_bound(**args)) / u
1
"""

exp_log_softmax_relative_error_bound = formula(
    "exp_log_softmax_relative_error_bound",
    log_softmax_absolute_error_bound.expr + 2 * exp_ulps * u,
    log_softmax_absolute_error_bound.args,
    "T12: first-order bound on |p̂_i/p_i − 1| for softmax computed as exp of the "
    "max-shifted log-softmax, exp(x̂_i − log Ŝ): the log-softmax's absolute bound "
    "plus 2·exp_ulps·u",
)
"""T12: the relative error of ``p̂_i = exp(x̂_i − log Ŝ)`` (softmax as exp of the log-softmax).

Parameters
----------
gap_i, mean_gap, log_sum, u, exp_ulps, log_ulps, gamma, arg_error
    As for :data:`log_softmax_absolute_error_bound`.

Notes
-----
.. math:: \\frac{|\\hat p_i - p_i|}{p_i} \\lesssim (g_i + \\bar g)\\,a + 2ku + \\gamma
   + 2 k_{\\log} u \\log S + u\\,(g_i + \\log S) + 2ku

An absolute error ``Δ`` of the exponent is a relative error ``e^Δ − 1 ≈ Δ`` of its exp,
and the final exp adds its own ``2ku``.  Against the max-shift-then-divide bound the
rounding of the subtraction costs ``u(g_i + log S)``: on tail entries (large ``g_i``)
this form is less accurate, which is why it needs its own bound.

Examples
--------
>>> import sympy as sp
>>> from softmax_dispersion.theory.rounding_error import exp_log_softmax_relative_error_bound
>>> u = sp.Rational(1, 2**24)
>>> exp_log_softmax_relative_error_bound(gap_i=10, mean_gap=1, log_sum=1, u=u, exp_ulps=1,
...     log_ulps=1, gamma=0, arg_error=u) / u
28
"""

lse_log_softmax_absolute_error_bound = formula(
    "lse_log_softmax_absolute_error_bound",
    mean_gap * arg_error
    + 2 * exp_ulps * u
    + gamma
    + 2 * log_ulps * u * log_sum
    + lse_u * (top + log_sum)
    + u * (gap_i + log_sum),
    (gap_i, mean_gap, log_sum, top, u, exp_ulps, log_ulps, gamma, arg_error, lse_u),
    "T12: first-order bound on |ℓ̂_i − ℓ_i| for log-softmax computed log-sum-exp first, "
    "e_i − fl(e_max + log Ŝ): mean_gap·arg_error + 2·exp_ulps·u + gamma "
    "+ 2·log_ulps·u·log_sum + lse_u·(top + log_sum) + u·(gap_i + log_sum)",
)
"""T12: the absolute error of ``ℓ̂_i = e_i − lse`` with ``lse = fl(e_max + log Ŝ)`` rounded first.

Parameters
----------
gap_i, mean_gap, log_sum, u, exp_ulps, log_ulps, gamma, arg_error
    As for :data:`log_softmax_absolute_error_bound` (``θ = 1``: the logits are read
    exactly, and only the terms of the sum carry an argument error).
top
    A bound on ``|e_max|``.
lse_u
    The unit roundoff of the format the log-sum-exp is rounded to.

Notes
-----
.. math:: |\\hat\\ell_i - \\ell_i| \\lesssim \\bar g\\,a + 2ku + \\gamma
   + 2 k_{\\log} u \\log S + u_{lse}\\,(|e_{max}| + \\log S) + u\\,(g_i + \\log S)

``logsumexp(x)`` adds the maximum back before the subtraction, and rounding
``e_max + log Ŝ`` costs ``u_lse·|e_max + log S|``: an error that grows with the size of
the logits, not with their gaps.  The logit ``e_i`` itself enters exactly, so the
entry's own argument error ``g_i·a`` of the max-shifted form is absent.

Examples
--------
>>> import sympy as sp
>>> from softmax_dispersion.theory.rounding_error import lse_log_softmax_absolute_error_bound
>>> u = sp.Rational(1, 2**24)
>>> lse_log_softmax_absolute_error_bound(gap_i=2, mean_gap=1, log_sum=1, top=100, u=u,
...     exp_ulps=1, log_ulps=1, gamma=0, arg_error=u, lse_u=u) / u
109
"""

exp_lse_relative_error_bound = formula(
    "exp_lse_relative_error_bound",
    lse_log_softmax_absolute_error_bound.expr + 2 * exp_ulps * u,
    lse_log_softmax_absolute_error_bound.args,
    "T12: first-order bound on |p̂_i/p_i − 1| for softmax computed as exp(e_i − lse), "
    "the log-sum-exp rounded first: the lse-first log-softmax bound plus 2·exp_ulps·u",
)
"""T12: the relative error of ``p̂_i = exp(e_i − fl(e_max + log Ŝ))``.

Parameters
----------
gap_i, mean_gap, log_sum, top, u, exp_ulps, log_ulps, gamma, arg_error, lse_u
    As for :data:`lse_log_softmax_absolute_error_bound`.

Notes
-----
.. math:: \\frac{|\\hat p_i - p_i|}{p_i} \\lesssim
   \\mathrm{lse\\_log\\_softmax\\_absolute\\_error\\_bound} + 2ku

Examples
--------
>>> import sympy as sp
>>> from softmax_dispersion.theory.rounding_error import exp_lse_relative_error_bound
>>> u = sp.Rational(1, 2**24)
>>> exp_lse_relative_error_bound(gap_i=2, mean_gap=1, log_sum=1, top=100, u=u,
...     exp_ulps=1, log_ulps=1, gamma=0, arg_error=u, lse_u=u) / u
111
"""

lae_depth = sp.Symbol("lae_depth", real=True)
"""The depth of the log-add-exp reduction tree (``n − 1`` for any order)."""

lae_log_softmax_absolute_error_bound = formula(
    "lae_log_softmax_absolute_error_bound",
    lae_depth * (lse_u * (top + log_sum + 1) + (2 * exp_ulps + 1 + 2 * log_ulps) * lse_u)
    + u * (gap_i + log_sum),
    (gap_i, log_sum, top, u, exp_ulps, log_ulps, lae_depth, lse_u),
    "T12: first-order bound on |ℓ̂_i − ℓ_i| for log-softmax computed as e_i − lse with the "
    "log-sum-exp reduced by log-add-exp (np.logaddexp.reduce): "
    "depth·(lse_u·(top + log_sum + 1) + (2·exp_ulps + 1 + 2·log_ulps)·lse_u) "
    "+ u·(gap_i + log_sum)",
)
"""T12: the absolute error of ``ℓ̂_i = e_i − lse`` with ``lse`` a tree of log-add-exp steps.

Parameters
----------
gap_i, log_sum, top, u, exp_ulps, log_ulps, lse_u
    As for :data:`lse_log_softmax_absolute_error_bound`.
lae_depth
    The depth of the reduction tree: ``n − 1`` bounds every order (a left fold, as
    ``np.logaddexp.reduce`` does, has exactly that depth).

Notes
-----
.. math:: |\\hat\\ell_i - \\ell_i| \\lesssim d\\,\\bigl(u_{lse}(|e_{max}| + \\log S + 1)
   + (2k + 1 + 2k_{\\log})\\,u_{lse}\\bigr) + u\\,(g_i + \\log S)

A node computes ``z = max(a, b) + log1p(exp(−|a − b|))`` from its children's computed
values.  T12 proves its first-order error: ``w_a α + w_b β + ζ + δ z``, the children's
errors ``α``, ``β`` weighted by their shares ``w_a + w_b = 1``, the error ``ζ`` of the
``log1p(exp(·))`` part (``|ζ| <= (2k + 1 + 2k_log)u``: the exp, the difference and the
log1p), and the rounding ``δ`` of the addition.  Unrolled over the tree, the root's error
is ``Σ_v s_v (ζ_v + δ_v z_v)`` with ``s_v = exp(z_v − lse)`` the node's share, and T12
proves ``s_v |z_v| <= |lse| + 1``; the nodes of one level of the tree have disjoint
leaves, so their shares add up to at most 1, and there are ``d`` levels.

Examples
--------
>>> import sympy as sp
>>> from softmax_dispersion.theory.rounding_error import lae_log_softmax_absolute_error_bound
>>> u = sp.Rational(1, 2**24)
>>> lae_log_softmax_absolute_error_bound(gap_i=0, log_sum=1, top=2, u=u, exp_ulps=1,
...     log_ulps=1, lae_depth=7, lse_u=u) / u
64
"""

exp_lae_relative_error_bound = formula(
    "exp_lae_relative_error_bound",
    lae_log_softmax_absolute_error_bound.expr + 2 * exp_ulps * u,
    lae_log_softmax_absolute_error_bound.args,
    "T12: first-order bound on |p̂_i/p_i − 1| for softmax computed as exp(e_i − lse) with "
    "the log-sum-exp reduced by log-add-exp: the log bound plus 2·exp_ulps·u",
)
"""T12: the relative error of ``p̂_i = exp(e_i − lse)``, ``lse`` by a log-add-exp reduction.

Parameters
----------
gap_i, log_sum, top, u, exp_ulps, log_ulps, lae_depth, lse_u
    As for :data:`lae_log_softmax_absolute_error_bound`.

Notes
-----
.. math:: \\frac{|\\hat p_i - p_i|}{p_i} \\lesssim
   \\mathrm{lae\\_log\\_softmax\\_absolute\\_error\\_bound} + 2ku

Examples
--------
>>> import sympy as sp
>>> from softmax_dispersion.theory.rounding_error import exp_lae_relative_error_bound
>>> u = sp.Rational(1, 2**24)
>>> exp_lae_relative_error_bound(gap_i=0, log_sum=1, top=2, u=u, exp_ulps=1,
...     log_ulps=1, lae_depth=7, lse_u=u) / u
66
"""

# --- the rigorous bound: proved in Coq (Flocq), not first order ----------------------

p_exact = sp.Symbol("p_i", real=True)
"""The exact coefficient ``p_i = exp(e_i − e_max)/Σ_j exp(e_j − e_max)``."""
exp_rel = sp.Symbol("exp_rel", real=True)
"""The relative part of the computed exp's error: ``|exp̂(x) − e^x| <= exp_rel·e^x + exp_abs``."""
exp_abs = sp.Symbol("exp_abs", real=True)
"""The absolute part of the computed exp's error (its error at subnormal results)."""
tiny = sp.Symbol("tiny", real=True)
"""The smallest positive subnormal of the format, ``2**emin`` (``2**-149`` in float32)."""

softmax_rigorous_error_bound = formula(
    "softmax_rigorous_error_bound",
    p_exact
    * (
        (1 + u)
        * (1 + gamma)
        * sp.exp(u * gap_i + u * mean_gap + 4 * n * u**2 / (1 - u) ** 2)
        * (1 + exp_rel + n * exp_abs)
        / (1 - exp_rel - n * exp_abs * sp.exp(u * mean_gap))
        - 1
    )
    + exp_abs
    + tiny / 2,
    (p_exact, gap_i, mean_gap, n, u, exp_rel, exp_abs, tiny, gamma),
    "T12, rigorous (proved in Coq with Flocq): |p̂_i − p_i| for the max-shifted softmax "
    "fl(fl(exp(fl(e_i − e_max)))/fl(Σ)) in round to nearest, any summation tree of "
    "depth d with gamma = γ_d: p_i·((1+u)(1+gamma)·exp(u·gap_i + u·mean_gap + "
    "4nu²/(1−u)²)·(1+exp_rel+n·exp_abs)/(1−exp_rel−n·exp_abs·exp(u·mean_gap)) − 1) "
    "+ exp_abs + tiny/2",
)
"""T12's rigorous bound on ``|p̂_i − p_i|`` for the max-shifted softmax, proved in Coq.

Not a first-order estimate: a bound that holds exactly, for every input, in any binary
floating-point format with round to nearest, with underflow accounted for (the
absolute terms) and every summation order (the sum as any binary tree of rounded
additions).  :mod:`softmax_dispersion.theory.coq_float` prints it into the statement
of the Coq theorem ``T12_max_shift`` (``theory/coq/T12.v``), whose proof Coq's kernel
checks against Flocq's model of rounding.

Parameters
----------
p_i
    The exact coefficient ``p_i``.
gap_i
    ``e_max − e_i >= 0``.
mean_gap
    ``Σ_j p_j (e_max − e_j)``, the softmax-weighted mean gap.
n
    The number of logits.
u
    The unit roundoff ``2**-prec`` of the format.
exp_rel, exp_abs
    The computed exp's error: ``|exp̂(x) − e^x| <= exp_rel·e^x + exp_abs`` at every
    float ``x <= 0`` (an exp of ``k`` ulps has ``exp_rel = 2ku``, ``exp_abs = k·tiny``).
tiny
    The smallest positive subnormal ``2**emin``.
gamma
    ``γ_d = d·u/(1 − d·u)`` for a summation tree of depth ``d``: :data:`gamma_recursive`
    (``d = n − 1``) for any order, ``γ_{⌈log2 n⌉}`` for a balanced tree.

Notes
-----
.. math:: |\\hat p_i - p_i| \\le p_i \\left( (1+u)(1+\\gamma)\\,
   e^{u g_i + u \\bar g + 4 n u^2/(1-u)^2}
   \\frac{1 + \\epsilon + n\\eta}{1 - \\epsilon - n\\eta\\,e^{u\\bar g}} - 1 \\right)
   + \\eta + \\frac{s}{2}

with ``ε = exp_rel``, ``η = exp_abs``, ``s = tiny``, valid while ``d·u < 1``,
``n·η·e^{u ḡ} < 1 − ε`` and ``2uη <= s``.  The factors: the final division
(``1 + u``), the summation tree (``(1 + u)^d <= 1 + γ_d``), the rounded arguments
``fl(e_j − e_max) = (e_j − e_max)(1 + δ_j)`` (``e^{u g_i}`` for the entry, and for the
sum ``e^{±u ḡ}`` by Jensen's inequality under the exact and the tilted weights, the
``4nu²/(1−u)²`` bounding how far the tilted mean gap exceeds ``ḡ``), and the exp's
errors.  The absolute terms are the exp's error at the entry (divided by a computed sum
``>= 1``) and half a subnormal from the division.  To first order the relative part is
``(g_i + ḡ)u + 2·exp_rel + γ + u`` (:data:`softmax_relative_error_bound`).

Examples
--------
Float32 (``u = 2**-24``, ``tiny = 2**-149``), a 2-ulp exp, ``n = 1000`` terms in any
order, an entry 3 below the maximum whose exact coefficient is 1/1000, a mean gap of 2:

>>> import sympy as sp
>>> from softmax_dispersion.theory.rounding_error import (
...     gamma_recursive, softmax_rigorous_error_bound)
>>> u, tiny = sp.Rational(1, 2**24), sp.Rational(1, 2**149)
>>> bound = softmax_rigorous_error_bound(p_i=sp.Rational(1, 1000), gap_i=3, mean_gap=2,
...     n=1000, u=u, exp_rel=4 * u, exp_abs=2 * tiny, tiny=tiny,
...     gamma=gamma_recursive(n=1000, u=u))
>>> round(float(bound * 1000 / u), 3)  # in units of u·p_i
1013.061
"""

softmax_rigorous_conditions = (
    sp.Lt(n * exp_abs * sp.exp(u * mean_gap), 1 - exp_rel),
    sp.Le(2 * u * exp_abs, tiny),
)
"""The side conditions of :data:`softmax_rigorous_error_bound` (besides ``d·u < 1``).

Notes
-----
The computed sum stays positive (``n·exp_abs·e^{u ḡ} < 1 − exp_rel``) and the exp's
absolute error is below half the smallest normal (``2u·exp_abs <= tiny``, i.e.
``exp_abs <= 2**(emin + prec − 1)``).  The Coq theorem states them as hypotheses, and
T12's Coq proof shows that they can hold together (``T12_max_shift_satisfiable``).

Examples
--------
Float32, a 2-ulp exp, 1000 logits with a mean gap of 3:

>>> import sympy as sp
>>> from softmax_dispersion.theory.rounding_error import (
...     exp_abs, exp_rel, mean_gap, softmax_rigorous_conditions, tiny, u)
>>> from softmax_dispersion.theory.symbols import n
>>> float32 = {n: 1000, u: sp.Rational(1, 2**24), exp_rel: sp.Rational(4, 2**24),
...     exp_abs: sp.Rational(2, 2**149), tiny: sp.Rational(1, 2**149), mean_gap: 3}
>>> [bool(c.xreplace(float32)) for c in softmax_rigorous_conditions]
[True, True]
"""

softmax_reciprocal_rigorous_error_bound = formula(
    "softmax_reciprocal_rigorous_error_bound",
    p_exact
    * (
        (1 + u) ** 2
        * (1 + gamma)
        * sp.exp(u * gap_i + u * mean_gap + 4 * n * u**2 / (1 - u) ** 2)
        * (1 + exp_rel + n * exp_abs)
        / (1 - exp_rel - n * exp_abs * sp.exp(u * mean_gap))
        - 1
    )
    + (1 + u) * exp_abs
    + tiny / 2,
    (p_exact, gap_i, mean_gap, n, u, exp_rel, exp_abs, tiny, gamma),
    "T12, rigorous (proved in Coq with Flocq): |p̂_i − p_i| for the max-shifted softmax "
    "normalised by the rounded reciprocal, fl(fl(exp(fl(e_i − e_max)))·fl(1/fl(Σ))): "
    "p_i·((1+u)²(1+gamma)·exp(u·gap_i + u·mean_gap + 4nu²/(1−u)²)·(1+exp_rel+n·exp_abs)"
    "/(1−exp_rel−n·exp_abs·exp(u·mean_gap)) − 1) + (1+u)·exp_abs + tiny/2",
)
"""T12's rigorous bound for the reciprocal form ``p̂_i = fl(y_i·fl(1/Ŝ))``, proved in Coq.

Parameters
----------
p_i, gap_i, mean_gap, n, u, exp_rel, exp_abs, tiny, gamma
    As for :data:`softmax_rigorous_error_bound`.

Notes
-----
.. math:: |\\hat p_i - p_i| \\le p_i \\left( (1+u)^2 (1+\\gamma)\\,
   e^{u g_i + u \\bar g + 4 n u^2/(1-u)^2}
   \\frac{1 + \\epsilon + n\\eta}{1 - \\epsilon - n\\eta\\,e^{u\\bar g}} - 1 \\right)
   + (1+u)\\eta + \\frac{s}{2}

The reciprocal ``1/Ŝ`` is rounded once more (a second factor ``1 + u``; it is a normal
float while ``n(1 + ε + η)(1 + γ) <= 2u/s``, a side condition), and the product's
rounding carries the exp's absolute error ``η`` up by ``1 + u``.  Unlike the division,
this form can return a little more than 1.  To first order the relative part is
:data:`softmax_reciprocal_relative_error_bound`'s.

Examples
--------
>>> import sympy as sp
>>> from softmax_dispersion.theory.rounding_error import (
...     softmax_reciprocal_rigorous_error_bound, softmax_rigorous_error_bound)
>>> u = sp.Rational(1, 2**24)
>>> args = dict(p_i=sp.Rational(1, 2), gap_i=1, mean_gap=1, n=2, u=u, exp_rel=4 * u,
...     exp_abs=0, tiny=0, gamma=0)
>>> extra = softmax_reciprocal_rigorous_error_bound(**args) - softmax_rigorous_error_bound(**args)
>>> round(float(extra / (u / 2)), 4)  # one more rounding of p_i = 1/2
1.0
"""

softmax_reciprocal_rigorous_conditions = (
    sp.Lt(n * exp_abs * sp.exp(u * mean_gap), 1 - exp_rel),
    sp.Le(2 * u * (1 + u) * exp_abs, tiny),
    sp.Le(n * (1 + exp_rel + exp_abs) * (1 + gamma), 2 * u / tiny),
)
"""The side conditions of :data:`softmax_reciprocal_rigorous_error_bound` (besides ``d·u < 1``).

Notes
-----
As for the division (:data:`softmax_rigorous_conditions`, with ``2u(1 + u)·exp_abs``),
and the reciprocal ``1/Ŝ`` is a normal float: the computed sum is at most
``n(1 + exp_rel + exp_abs)(1 + γ)``, which must stay below ``2u/tiny`` (``2**126`` in
float32), the reciprocal of the smallest normal.

Examples
--------
>>> import sympy as sp
>>> from softmax_dispersion.theory.rounding_error import (
...     exp_abs, exp_rel, gamma, gamma_recursive, mean_gap,
...     softmax_reciprocal_rigorous_conditions, tiny, u)
>>> from softmax_dispersion.theory.symbols import n
>>> at = {n: 1000, u: sp.Rational(1, 2**24), exp_rel: sp.Rational(4, 2**24),
...     exp_abs: sp.Rational(2, 2**149), tiny: sp.Rational(1, 2**149), mean_gap: 3}
>>> at[gamma] = gamma_recursive(n=1000, u=at[u])
>>> [bool(c.xreplace(at)) for c in softmax_reciprocal_rigorous_conditions]
[True, True, True]
"""

log_rel = sp.Symbol("log_rel", real=True)
"""The relative part of the computed log's error: ``|loĝ(y) − ln y| <= log_rel·ln y + log_abs``."""
log_abs = sp.Symbol("log_abs", real=True)
"""The absolute part of the computed log's error (at results near 0, ``y`` near 1)."""

_sum_factor = 1 + gamma
_tilt = sp.exp(u * mean_gap)
_sum_high = (1 + exp_rel) * _tilt * sp.exp(4 * n * u**2 / (1 - u) ** 2) + n * exp_abs
_sum_low = 1 - exp_rel - n * exp_abs * _tilt
_log_sum_error = sp.Max(sp.log(_sum_factor * _sum_high), sp.log(_sum_factor * _tilt / _sum_low))
"""A bound on ``|ln Ŝ − ln T|``: the computed sum lies in ``[T·low/(e^{uḡ}(1+γ)), T(1+γ)·high]``."""

exp_log_softmax_rigorous_error_bound = formula(
    "exp_log_softmax_rigorous_error_bound",
    p_exact
    * (
        (1 + exp_rel)
        * sp.exp(
            u * (2 + u) * gap_i
            + _log_sum_error
            + (log_rel + u * (1 + log_rel)) * (log_sum + _log_sum_error)
            + (1 + u) * log_abs
        )
        - 1
    )
    + exp_abs,
    (p_exact, gap_i, mean_gap, log_sum, n, u, exp_rel, exp_abs, log_rel, log_abs, gamma),
    "T12, rigorous (proved in Coq with Flocq): |p̂_i − p_i| for softmax as the exp of the "
    "max-shifted log-softmax, exp̂(fl(fl(e_i − e_max) − loĝ(fl(Σ)))): "
    "p_i·((1+exp_rel)·exp(D) − 1) + exp_abs, D = u(2+u)·gap_i + M + (log_rel + u(1+log_rel))"
    "·(log_sum + M) + (1+u)·log_abs, M the bound on |ln Ŝ − ln T|",
)
"""T12's rigorous bound for ``p̂_i = exp̂(ℓ̂_i)``, ``ℓ̂_i = fl(fl(e_i − e_max) − loĝ(Ŝ))``.

Softmax as the exp of the max-shifted log-softmax, proved in Coq (``T12_exp_log`` in
``theory/coq/T12.v``) in any binary format with round to nearest and any summation tree;
the computed exp and log are hypotheses (relative plus absolute errors).

Parameters
----------
p_i, gap_i, mean_gap, n, u, exp_rel, exp_abs, gamma
    As for :data:`softmax_rigorous_error_bound`.
log_sum
    ``ln T = ln Σ_j exp(e_j − e_max) >= 0`` (``= −ln max_j p_j``).
log_rel, log_abs
    The computed log's error at every float ``y >= 1``:
    ``|loĝ(y) − ln y| <= log_rel·ln y + log_abs`` (a ``k``-ulp log: ``2ku`` and
    ``k·2**emin``), and ``loĝ(y) >= 0``.

Notes
-----
The computed exponent misses ``ln p_i = (e_i − e_max) − ln T`` by at most

.. math:: D = u(2+u)\\,g_i + M + \\bigl(\\lambda + u(1+\\lambda)\\bigr)(L + M) + (1+u)\\,\\mu

with ``L = log_sum``, ``λ = log_rel``, ``μ = log_abs`` and
``M = max(ln((1+γ)·high), ln((1+γ)·e^{uḡ}/low))`` the bound on ``|ln Ŝ − ln T|`` from the
same analysis of the sum as :data:`softmax_rigorous_error_bound` (``high =
(1+ε)e^{uḡ + 4nu²/(1−u)²} + nη``, ``low = 1 − ε − nη·e^{uḡ}``): the rounded shift of the
entry, the rounded sum and its computed log, and the final subtraction's rounding
``u·|ℓ̂|``.  An exponent off by ``D`` gives a relative error ``e^D − 1``, and the final exp
adds its own.  To first order the relative part is
:data:`exp_log_softmax_relative_error_bound`'s but for ``M``, whose first-order part is
``γ + uḡ + ε`` (the larger of the sum's two sides).

Examples
--------
Float64, 2-ulp exp and log (``exp_rel = log_rel = 4u``), four logits in any order, an
entry 1 below the maximum with ``p_i = 1/4``, a mean gap and a log-sum of 1: the bound is
19 units of ``u·p_i`` (first order: ``2u·g_i`` for the shift and the subtraction,
``γ_3 + uḡ + 4u`` for the sum, ``(4u + u)·L`` for the log and the subtraction, ``4u``
for the final exp):

>>> import sympy as sp
>>> from softmax_dispersion.theory.rounding_error import (
...     exp_log_softmax_rigorous_error_bound, gamma_recursive)
>>> u = sp.Rational(1, 2**53)
>>> bound = exp_log_softmax_rigorous_error_bound(p_i=sp.Rational(1, 4), gap_i=1, mean_gap=1,
...     log_sum=1, n=4, u=u, exp_rel=4 * u, exp_abs=0, log_rel=4 * u, log_abs=0,
...     gamma=gamma_recursive(n=4, u=u))
>>> round(float(bound * 4 / u), 6)
19.0
"""

exp_log_softmax_rigorous_conditions = (sp.Lt(n * exp_abs * sp.exp(u * mean_gap), 1 - exp_rel),)
"""The side condition of :data:`exp_log_softmax_rigorous_error_bound` (besides ``d·u < 1``).

Notes
-----
The computed sum stays positive, as for :data:`softmax_rigorous_conditions`; the log's
argument is the computed sum, at least ``exp̂(0) = 1``.

Examples
--------
>>> import sympy as sp
>>> from softmax_dispersion.theory.rounding_error import (
...     exp_abs, exp_log_softmax_rigorous_conditions, exp_rel, mean_gap, u)
>>> from softmax_dispersion.theory.symbols import n
>>> at = {n: 10, u: sp.Rational(1, 2**53), exp_rel: sp.Rational(4, 2**53),
...     exp_abs: sp.Rational(2, 2**1074), mean_gap: 5}
>>> [bool(c.xreplace(at)) for c in exp_log_softmax_rigorous_conditions]
[True]
"""

_log_hat_size = (1 + log_rel) * (log_sum + _log_sum_error) + log_abs
"""A bound on the computed log of the sum, ``loĝ(Ŝ) <= (1 + λ)(L + M) + μ``."""

exp_lse_rigorous_error_bound = formula(
    "exp_lse_rigorous_error_bound",
    p_exact
    * (
        (1 + exp_rel)
        * sp.exp(
            _log_sum_error
            + log_rel * (log_sum + _log_sum_error)
            + log_abs
            + u * (1 + u) * (top + _log_hat_size)
            + u * (gap_i + _log_hat_size)
        )
        - 1
    )
    + exp_abs,
    (p_exact, gap_i, mean_gap, log_sum, top, n, u, exp_rel, exp_abs, log_rel, log_abs, gamma),
    "T12, rigorous (proved in Coq with Flocq): |p̂_i − p_i| for softmax with the log-sum-exp "
    "first, exp̂(fl(e_i − fl(e_max + loĝ(fl(Σ))))): p_i·((1+exp_rel)·exp(D) − 1) + exp_abs, "
    "D = M + log_rel·(log_sum + M) + log_abs + u(1+u)·(top + Λ) + u·(gap_i + Λ), "
    "Λ = (1+log_rel)(log_sum + M) + log_abs",
)
"""T12's rigorous bound for ``p̂_i = exp̂(fl(e_i − lse))``, ``lse = fl(e_max + loĝ(Ŝ))``.

Softmax as ``exp(x − logsumexp(x))`` with the log-sum-exp computed from the max-shifted sum
and rounded first, proved in Coq (``T12_exp_lse`` in ``theory/coq/T12.v``).

Parameters
----------
p_i, gap_i, mean_gap, log_sum, n, u, exp_rel, exp_abs, log_rel, log_abs, gamma
    As for :data:`exp_log_softmax_rigorous_error_bound`.
top
    A bound on ``|e_max|``: rounding ``e_max + loĝ(Ŝ)`` costs ``u·|e_max + loĝ(Ŝ)|``, an
    error that grows with the size of the logits, not with their gaps.

Notes
-----
The logit ``e_i`` enters exactly (no ``u·g_i`` for its shift); the exponent's error is

.. math:: D = M + \\lambda (L + M) + \\mu + u(1+u)(t + \\Lambda) + u (g_i + \\Lambda),
   \\qquad \\Lambda = (1 + \\lambda)(L + M) + \\mu

with ``t = top`` and ``M`` as for :data:`exp_log_softmax_rigorous_error_bound`: the log of
the computed sum, the rounding of ``e_max + loĝ(Ŝ)`` (at most ``t + Λ`` in size), and the
final subtraction's rounding.  To first order the relative part is
:data:`exp_lse_relative_error_bound`'s with ``lse_u = u``.

Examples
--------
>>> import sympy as sp
>>> from softmax_dispersion.theory.rounding_error import (
...     exp_lse_rigorous_error_bound, gamma_recursive)
>>> u = sp.Rational(1, 2**53)
>>> bound = exp_lse_rigorous_error_bound(p_i=sp.Rational(1, 4), gap_i=1, mean_gap=1,
...     log_sum=1, top=100, n=4, u=u, exp_rel=4 * u, exp_abs=0, log_rel=4 * u, log_abs=0,
...     gamma=gamma_recursive(n=4, u=u))
>>> round(float(bound * 4 / u), 6)  # 101 of it from rounding e_max + log S
119.0
"""

exp_lse_rigorous_conditions = (sp.Lt(n * exp_abs * sp.exp(u * mean_gap), 1 - exp_rel),)
"""The side condition of :data:`exp_lse_rigorous_error_bound` (besides ``d·u < 1``).

Notes
-----
As for :data:`exp_log_softmax_rigorous_conditions`; ``|e_max| <= top`` is a hypothesis
of the Coq statement.

Examples
--------
>>> import sympy as sp
>>> from softmax_dispersion.theory.rounding_error import (
...     exp_abs, exp_lse_rigorous_conditions, exp_rel, mean_gap, u)
>>> from softmax_dispersion.theory.symbols import n
>>> at = {n: 10, u: sp.Rational(1, 2**24), exp_rel: sp.Rational(4, 2**24),
...     exp_abs: sp.Rational(2, 2**149), mean_gap: 5}
>>> [bool(c.xreplace(at)) for c in exp_lse_rigorous_conditions]
[True]
"""

# --- the model: symbols and computed quantities ----------------------------------------

x_i = sp.Symbol("x_i", real=True)
"""``(e_i − e_max)/θ <= 0``, the shifted scaled logit of the output entry."""
x_j = sp.Symbol("x_j", real=True)
"""A generic shifted scaled logit: the summation index."""
eta_i, eta_j = sp.symbols("eta_i eta_j", real=True)
eps_i, eps_j = sp.symbols("epsilon_i epsilon_j", real=True)
sigma, omega, lam, nu = sp.symbols("sigma omega lambda nu", real=True)
rho = sp.Symbol("rho", real=True)
"""Relative error of the rounded reciprocal ``fl(1/Ŝ) = (1 + ρ)/Ŝ``."""
eps_out = sp.Symbol("epsilon_out", real=True)
"""Relative error of the final ``exp`` of the exp-of-log-softmax forms."""
mu = sp.Symbol("mu", real=True)
"""Relative error of the rounded log-sum-exp ``fl(e_max + log Ŝ)``."""
e_max = sp.Symbol("e_max", real=True)
"""The largest (scaled) logit, added back by ``logsumexp``; ``|e_max| <= top``."""
tau = sp.Symbol("tau", real=True)
"""Scales every error variable: ``τ = 1`` is the computation, ``τ = 0`` exact arithmetic."""
Delta = sp.Symbol("Delta", real=True)
"""Any bound on the gaps, ``x_j >= −Δ`` (finite logits); only used to show ``T > 0``."""
T, V, P, D, G, Ydot, Q_plus, Q_minus = sp.symbols("T V P D G Ydot Q_plus Q_minus", real=True)
S_a, S_b = sp.symbols("S_a S_b", real=True)
"""The exact sums of a summation tree's two subtrees (positive terms)."""
sigma_a, sigma_b, delta_add = sp.symbols("sigma_a sigma_b delta_add", real=True)
"""The subtrees' relative errors and the rounding of the addition that joins them."""
node_a, node_b = sp.symbols("a_node b_node", real=True)
"""The exact log-sum-exps of a log-add-exp node's two subtrees."""
alpha_a, alpha_b, zeta, delta_lae = sp.symbols("alpha_a alpha_b zeta delta_lae", real=True)
"""The subtrees' absolute errors, the ``log1p(exp)`` part's error, the addition's rounding."""
share_gap, lse_size = sp.symbols("share_gap lse_size", real=True)
"""``lse − z_v >= 0`` for a node ``v`` of the reduction, and a bound on ``|lse|``."""
depth = sp.Symbol("depth", real=True)
"""The depth ``k`` of the deeper subtree."""
tree_depth = sp.Symbol("tree_depth", real=True)
"""The depth of a summation tree of ``n`` leaves (``<= n − 1``)."""
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


def computed_softmax_reciprocal(scale: sp.Expr) -> sp.Expr:
    """``p̂_i = y_i·fl(1/Ŝ)(1+ω)`` with ``fl(1/Ŝ) = (1+ρ)/Ŝ``, errors scaled by ``scale``."""
    return computed_softmax(scale) * (1 + scale * rho)


def computed_exp_log_softmax(scale: sp.Expr) -> sp.Expr:
    """``p̂_i = exp(ℓ̂_i)(1+ε_out)``: softmax as exp of the max-shifted log-softmax."""
    return sp.exp(computed_log_softmax(scale)) * (1 + scale * eps_out)


def computed_lse_log_softmax(scale: sp.Expr) -> sp.Expr:
    """``ℓ̂_i = (e_i − lse)(1+ν)``, ``lse = (e_max + log(Ŝ)(1+λ))(1+μ)`` (``θ = 1``).

    The logit ``e_i = e_max + x_i`` enters exactly; the sum is the max-shifted one.
    """
    s = scale
    log_sum_hat = sp.log(Y(s) * (1 + s * sigma)) * (1 + s * lam)
    lse = (e_max + log_sum_hat) * (1 + s * mu)
    return (e_max + x_i - lse) * (1 + s * nu)


def computed_exp_lse(scale: sp.Expr) -> sp.Expr:
    """``p̂_i = exp(e_i − lse)(1+ε_out)``: softmax with the log-sum-exp first."""
    return sp.exp(computed_lse_log_softmax(scale)) * (1 + scale * eps_out)


log_softmax_exact = x_i - sp.log(T)
"""The exact ``ℓ_i = log p_i = x_i − log T``."""

softmax_first_order = omega + eps_i + x_i * eta_i - sigma - D
"""The first-order relative error of ``p̂_i``: ``ω + ε_i + x_i η_i − σ − Σ_j p_j(ε_j + x_j η_j)``."""
log_softmax_first_order = x_i * eta_i - sigma - D - lam * sp.log(T) + nu * (x_i - sp.log(T))
"""The first-order absolute error of ``ℓ̂_i``."""

lse_first_order = -D - sigma - lam * sp.log(T) - mu * (e_max + sp.log(T)) + nu * (x_i - sp.log(T))
"""The first-order absolute error of the log-sum-exp-first ``ℓ̂_i``."""

_at_entry = {gap_i: -x_i, mean_gap: G}
softmax_bound = softmax_relative_error_bound.expr.subs(_at_entry)
log_softmax_bound = log_softmax_absolute_error_bound.expr.subs(_at_entry)
reciprocal_bound = softmax_reciprocal_relative_error_bound.expr.subs(_at_entry)
exp_log_bound = exp_log_softmax_relative_error_bound.expr.subs(_at_entry)
lse_bound = lse_log_softmax_absolute_error_bound.expr.subs(_at_entry)
exp_lse_bound = exp_lse_relative_error_bound.expr.subs(_at_entry)


def two_sided(value: sp.Expr, bound: sp.Expr) -> sp.Basic:
    """``|value| <= bound`` written as ``−bound <= value <= bound`` (what z3 can read)."""
    return sp.And(sp.Le(-bound, value), sp.Le(value, bound))


def derivative_at_zero(expr: sp.Expr) -> sp.Expr:
    """The unevaluated ``d/dτ expr`` at ``τ = 0``."""
    return sp.Subs(sp.Derivative(expr, tau), tau, 0)


def gamma_of(k: sp.Expr) -> sp.Expr:
    """``γ_k = k·u/(1 − k·u)``, Higham's factor for ``k`` roundings."""
    return k * u / (1 - k * u)


tree_node_sum = (S_a * (1 + sigma_a) + S_b * (1 + sigma_b)) * (1 + delta_add)
"""The computed sum at a node of a summation tree: its subtrees' computed sums, added."""
_tree_node_bounded = two_sided(tree_node_sum - (S_a + S_b), gamma_of(depth + 1) * (S_a + S_b))
_depth_bounded = sp.Le(gamma_of(tree_depth), gamma_of(n - 1))


def computed_lae_node(scale: sp.Expr) -> sp.Expr:
    """A log-add-exp node on computed children, ``(log(e^â + e^b̂) + ζ)(1 + δ)``, errors scaled."""
    s = scale
    exact_part = sp.log(sp.exp(node_a + s * alpha_a) + sp.exp(node_b + s * alpha_b))
    return (exact_part + s * zeta) * (1 + s * delta_lae)


lae_node_value = sp.log(sp.exp(node_a) + sp.exp(node_b))
"""The exact node value ``z = log(e^a + e^b)``."""
_share_a = sp.exp(node_a) / (sp.exp(node_a) + sp.exp(node_b))
_share_b = sp.exp(node_b) / (sp.exp(node_a) + sp.exp(node_b))
lae_node_first_order = _share_a * alpha_a + _share_b * alpha_b + zeta + delta_lae * lae_node_value
"""The node's first-order error: the children's errors by their shares, plus its own."""
_lae_node_derivative = sp.Eq(
    derivative_at_zero(computed_lae_node(tau)), lae_node_first_order, evaluate=False
)
_lae_share_bounded = sp.Le(sp.exp(-share_gap) * (lse_size + share_gap), lse_size + 1)
"""A node's share ``e^{−t}`` times its size ``|z_v| <= |lse| + t`` is at most ``|lse| + 1``."""


fixed_in_tau = (x_i, T, eta_i, eps_i, omega, sigma, lam, nu, rho, eps_out, mu, e_max)
_fixed_in_lae_node = (node_a, node_b, alpha_a, alpha_b, zeta, delta_lae)
"""What ``d/dτ`` holds fixed: the exact data of entry ``i`` and its error variables.

``τ`` multiplies the error variables explicitly (:func:`computed_softmax`), so they do
not vary with it themselves, and the first-order term is the partial derivative in
``τ``.  The computed sum varies with ``τ`` and enters as the function ``Y(τ)``.
"""


# --- T12 --------------------------------------------------------------------------------

_assumptions: list[sp.Basic] = [
    sp.Ge(n, 1),
    sp.Ge(Delta, 0),  # the terms' range [−Δ, 0] is not empty
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
    # the other formulations: a rounded reciprocal, a final exp, a rounded log-sum-exp
    sp.Le(-u, rho),
    sp.Le(rho, u),
    sp.Le(-kappa, eps_out),
    sp.Le(eps_out, kappa),
    sp.Ge(lse_u, 0),
    sp.Le(-lse_u, mu),
    sp.Le(mu, lse_u),
    sp.Le(-top, e_max),
    sp.Le(e_max, top),
    # one node of a summation tree: subtrees of depth <= k, each within γ_k
    sp.Gt(S_a, 0),
    sp.Gt(S_b, 0),
    sp.Ge(depth, 0),
    sp.Lt((depth + 1) * u, 1),
    sp.Le(-gamma_of(depth), sigma_a),
    sp.Le(sigma_a, gamma_of(depth)),
    sp.Le(-gamma_of(depth), sigma_b),
    sp.Le(sigma_b, gamma_of(depth)),
    sp.Le(-u, delta_add),
    sp.Le(delta_add, u),
    # a log-add-exp node's own errors, and a node's place below the root
    sp.Le(-lse_u, delta_lae),
    sp.Le(delta_lae, lse_u),
    sp.Ge(share_gap, 0),
    sp.Ge(lse_size, 0),
    sp.Ge(sp.exp(share_gap), 1 + share_gap),  # exp is convex: above its tangent at 0
    # a tree of n leaves has n − 1 additions, so its depth is at most n − 1
    sp.Ge(tree_depth, 0),
    sp.Le(tree_depth, n - 1),
    sp.Lt((n - 1) * u, 1),
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


def _first_order(expr: sp.Expr, value: sp.Expr) -> sp.Basic:
    return sp.Eq(derivative_at_zero(expr), value, evaluate=False)


_reciprocal_ratio = computed_softmax_reciprocal(tau) / p_i
_exp_log_ratio = computed_exp_log_softmax(tau) / p_i
_lse_error = computed_lse_log_softmax(tau) - log_softmax_exact
_exp_lse_ratio = computed_exp_lse(tau) / p_i
_reciprocal_derivative = _first_order(_reciprocal_ratio, softmax_first_order + rho)
_exp_log_derivative = _first_order(_exp_log_ratio, log_softmax_first_order + eps_out)
_lse_derivative = _first_order(_lse_error, lse_first_order)
_exp_lse_derivative = _first_order(_exp_lse_ratio, lse_first_order + eps_out)
_reciprocal_bounded = two_sided(softmax_first_order + rho, reciprocal_bound)
_exp_log_bounded = two_sided(log_softmax_first_order + eps_out, exp_log_bound)
_lse_bounded = two_sided(lse_first_order, lse_bound)
_exp_lse_bounded = two_sided(lse_first_order + eps_out, exp_lse_bound)


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
        # Normalised by a product with the rounded reciprocal: one more rounding.
        Differentiate(
            _reciprocal_ratio,
            tau,
            "first-order term of y_i·fl(1/Ŝ)/p_i",
            point=sp.Integer(0),
            value=softmax_first_order + rho,
            constants=fixed_in_tau,
        ),
        Implied(_reciprocal_bounded, "|first-order error, reciprocal form| <= its bound"),
        # Softmax as exp of the max-shifted log-softmax.
        Differentiate(
            _exp_log_ratio,
            tau,
            "first-order term of exp(ℓ̂_i)(1+ε_out)/p_i",
            point=sp.Integer(0),
            value=log_softmax_first_order + eps_out,
            constants=fixed_in_tau,
        ),
        Implied(_exp_log_bounded, "|first-order error, exp of log-softmax| <= its bound"),
        # The log-sum-exp first: lse = fl(e_max + log Ŝ), then e_i − lse.
        Differentiate(
            _lse_error,
            tau,
            "first-order term of the log-sum-exp-first log-softmax error",
            point=sp.Integer(0),
            value=lse_first_order,
            constants=fixed_in_tau,
        ),
        Implied(
            two_sided(mu * (e_max + sp.log(T)), lse_u * (top + log_sum)),
            "|μ (e_max + log T)| <= lse_u·(top + log_sum) (a product bound)",
        ),
        Implied(_lse_bounded, "|first-order error, log-sum-exp first| <= its bound"),
        Differentiate(
            _exp_lse_ratio,
            tau,
            "first-order term of exp(e_i − lse)(1+ε_out)/p_i",
            point=sp.Integer(0),
            value=lse_first_order + eps_out,
            constants=fixed_in_tau,
        ),
        Implied(_exp_lse_bounded, "|first-order error, exp(e_i − lse)| <= its bound"),
        # Any summation order: the inductive step over the summation tree, and the depth.
        Implied(
            _tree_node_bounded,
            "a node adding two subtrees within γ_k is within γ_{k+1} (inductive step)",
        ),
        Implied(_depth_bounded, "γ_d <= γ_{n−1} for a tree of depth d <= n − 1"),
        # A log-sum-exp reduced by log-add-exp steps (np.logaddexp.reduce).
        Differentiate(
            computed_lae_node(tau),
            tau,
            "first-order error of a log-add-exp node: children's errors by their shares",
            point=sp.Integer(0),
            value=lae_node_first_order,
            constants=_fixed_in_lae_node,
        ),
        Implied(
            _lae_share_bounded, "a node's share times its size: e^{−t}(|lse| + t) <= |lse| + 1"
        ),
        Implied(T12.statement, "collect the identities and bounds"),
    ]


T12 = Claim(
    id="T12",
    title="first-order rounding error of softmax and log-softmax in every standard formulation",
    statement=sp.And(
        _ratio_identity,
        _softmax_derivative,
        _softmax_bounded,
        _log_identity,
        _log_derivative,
        _log_bounded,
        _reciprocal_derivative,
        _reciprocal_bounded,
        _exp_log_derivative,
        _exp_log_bounded,
        _lse_derivative,
        _lse_bounded,
        _exp_lse_derivative,
        _exp_lse_bounded,
        _tree_node_bounded,
        _depth_bounded,
        _lae_node_derivative,
        _lae_share_bounded,
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
        "softmax_reciprocal_relative_error_bound",
        "log_softmax_absolute_error_bound",
        "exp_log_softmax_relative_error_bound",
        "lse_log_softmax_absolute_error_bound",
        "exp_lse_relative_error_bound",
        "lae_log_softmax_absolute_error_bound",
        "exp_lae_relative_error_bound",
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
    | {n: 1, S_a: 1, S_b: 1},  # a summation node's two subtrees have positive sums
)

CLAIMS = (T12,)

if __name__ == "__main__":
    from softmax_dispersion.theory._result_text import run_claims

    raise SystemExit(run_claims(CLAIMS))
