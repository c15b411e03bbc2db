"""T6–T7: the entropy of a dispersed softmax, and how it moves with the temperature.

Run ``python -m softmax_dispersion.theory.entropy`` to check the proofs.

T6 (entropy grows without bound)
    With logits in ``[m, M]``, ``θ > 0`` and ``c = exp((M−m)/θ)``, the Shannon entropy
    (nats) of ``p = softmax_θ(e)`` satisfies
    ``H(p) >= −log p_max >= log(c+n−1) − (M−m)/θ >= log n − (M−m)/θ``.
    The first bound holds for any distribution (``H`` is a convex combination of the
    ``−log p_j``, each at least ``−log p_max``); the second is T1's bound on ``p_max``.
T7 (lowering the temperature never raises the entropy)
    ``dH/dθ = Var_p(e)/θ³ >= 0`` and, for ``p = softmax(βe)`` with ``β = 1/θ``,
    ``dH/dβ = −β Var_p(e) <= 0``.  The sums over the ``n`` logits are named functions
    ``A_r(θ) = Σ_j e_j^r exp(e_j/θ)`` and ``B_r(β) = Σ_j e_j^r exp(β e_j)``; the proof
    shows ``H = log A_0 − A_1/(θ A_0)`` and ``Var = A_2/A_0 − (A_1/A_0)²`` from the
    generic term (linearity of finite sums), differentiates the sums termwise
    (:class:`~softmax_dispersion.theory.kernel.SumDerivative`) and the closed form by
    sympy's differentiation rules (:class:`~softmax_dispersion.theory.kernel.Differentiate`),
    and lets z3 combine the pieces.  ``H`` equals the closed form at every ``θ > 0``, so
    its derivative is the closed form's.

Examples
--------
>>> from softmax_dispersion.theory.entropy import T6, entropy_lower_bound
>>> entropy_lower_bound(n=1, delta=0, theta=1)
0
>>> T6.check().verified
True
"""

from __future__ import annotations

import sympy as sp

from softmax_dispersion.theory.dispersion import (
    T1,
    coefficient,
    dispersion_upper,
    other_terms,
)
from softmax_dispersion.theory.formulas import formula
from softmax_dispersion.theory.kernel import (
    Claim,
    ConvexCombination,
    Differentiate,
    ExpMonotone,
    Identity,
    Implied,
    LogMonotone,
    Step,
    SumDerivative,
    SumLinearity,
    SumOfTerms,
    SumOver,
)
from softmax_dispersion.theory.symbols import H, M, S, beta, delta, e_j, e_k, m, n, theta

__all__ = [
    "T6",
    "T7",
    "entropy_beta_derivative",
    "entropy_from_log_partition",
    "entropy_lower_bound",
    "entropy_lower_bound_paper",
    "entropy_theta_derivative",
]

# ---------------------------------------------------------------------------------------
# Symbols of this module (merely real, like those of ``symbols``).

log_partition = sp.Symbol("log_partition", real=True)
"""``ℓ = log Σ_j exp(e_j/θ)``, the log-partition function: ``p_j = exp(e_j/θ − ℓ)``."""
mean_logit = sp.Symbol("mean_logit", real=True)
"""``μ = Σ_j p_j e_j``, the mean logit under ``p``."""
second_moment = sp.Symbol("second_moment", real=True)
"""``Σ_j p_j e_j²``, the second moment of the logits under ``p``."""
variance = sp.Symbol("variance", real=True)
"""``Var_p(e) = Σ_j p_j (e_j − μ)²``, the variance of the logits under ``p``."""

# ---------------------------------------------------------------------------------------
# Exported formulas.

entropy_lower_bound = formula(
    "entropy_lower_bound",
    sp.log(sp.exp(delta / theta) + n - 1) - delta / theta,
    (n, delta, theta),
    "T6: the least entropy of softmax_θ over n logits of spread δ, log(c+n−1) − δ/θ",
)
"""T6: the entropy floor ``log(c+n−1) − δ/θ`` with ``c = exp(δ/θ)``.

Notes
-----
.. math:: H(p) \\ge -\\log p_{\\max} \\ge \\log(c + n - 1) - \\delta/\\theta,
   \\qquad c = e^{\\delta/\\theta}.

It equals ``−log`` of T1's ``dispersion_upper``, so the spike attains it as ``−log p_max``.

Examples
--------
>>> from softmax_dispersion.theory.entropy import entropy_lower_bound
>>> entropy_lower_bound(n=4, delta=0, theta=1)
log(4)
>>> round(float(entropy_lower_bound.numpy(1024.0, 3.0, 1.0)), 6)
3.949938
"""

entropy_lower_bound_paper = formula(
    "entropy_lower_bound_paper",
    sp.log(n) - delta / theta,
    (n, delta, theta),
    "T6: the simpler, weaker entropy floor log n − δ/θ, unbounded in n",
)
"""T6: the weaker entropy floor ``log n − δ/θ``, which grows without bound in ``n``.

Notes
-----
.. math:: H(p) \\ge \\log n - \\delta/\\theta.

Examples
--------
>>> from softmax_dispersion.theory.entropy import entropy_lower_bound_paper
>>> entropy_lower_bound_paper(n=8, delta=2, theta=1)
-2 + log(8)
>>> import mpmath
>>> entropy_lower_bound_paper.mpmath(mpmath.e, 1, 1)
mpf('0.0')
"""

entropy_from_log_partition = formula(
    "entropy_from_log_partition",
    log_partition - mean_logit / theta,
    (log_partition, mean_logit, theta),
    "T7: the entropy of softmax_θ as log Σ exp(e_j/θ) − E_p[e]/θ",
)
"""T7: the entropy ``H = ℓ − μ/θ`` from the log-partition ``ℓ`` and the mean logit ``μ``.

Notes
-----
.. math:: H(p) = -\\sum_j p_j \\log p_j
   = \\log \\sum_j e^{e_j/\\theta} - \\frac{1}{\\theta}\\sum_j p_j e_j .

Examples
--------
>>> from softmax_dispersion.theory.entropy import entropy_from_log_partition
>>> entropy_from_log_partition(log_partition=2, mean_logit=1, theta=2)
3/2
"""

entropy_theta_derivative = formula(
    "entropy_theta_derivative",
    variance / theta**3,
    (variance, theta),
    "T7: dH/dθ = Var_p(e)/θ³ (never negative)",
)
"""T7: the temperature derivative of the entropy, ``dH/dθ = Var_p(e)/θ³``.

Notes
-----
.. math:: \\frac{dH}{d\\theta} = \\frac{\\operatorname{Var}_p(e)}{\\theta^{3}} \\ge 0.

Examples
--------
>>> from softmax_dispersion.theory.entropy import entropy_theta_derivative
>>> entropy_theta_derivative(variance=2, theta=2)
1/4
"""

entropy_beta_derivative = formula(
    "entropy_beta_derivative",
    -beta * variance,
    (variance, beta),
    "T7: dH/dβ = −β Var_p(e) for p = softmax(βe) (never positive for β > 0)",
)
"""T7: the inverse-temperature derivative of the entropy, ``dH/dβ = −β Var_p(e)``.

Notes
-----
.. math:: \\frac{dH}{d\\beta} = -\\beta \\operatorname{Var}_p(e),
   \\qquad p = \\operatorname{softmax}(\\beta e).

Examples
--------
>>> from softmax_dispersion.theory.entropy import entropy_beta_derivative
>>> entropy_beta_derivative(variance=3, beta=2)
-6
"""

# ---------------------------------------------------------------------------------------
# T6.

_spread = {delta: M - m}
_c = sp.exp((M - m) / theta)
#: The largest coefficient: T1's coefficient of the largest logit e_k.
p_max = coefficient
#: A generic coefficient p_j = exp(e_j/θ)/(exp(e_k/θ) + S) of any of the n logits.
p_j = sp.exp(e_j / theta) / (sp.exp(e_k / theta) + S)
#: H as the convex combination Σ_j p_j (−log p_j) of the n terms −log p_j.
entropy_terms = SumOver(H, -sp.log(p_j), (e_j,), sp.Integer(1), weight=p_j)

_p_max_bound = dispersion_upper.expr.subs(_spread)
_bound = entropy_lower_bound.expr.subs(_spread)
_paper_bound = entropy_lower_bound_paper.expr.subs(_spread)


def entropy_bound_statement(bound: sp.Expr, paper_bound: sp.Expr) -> sp.Basic:
    """``H >= −log p_max >= bound >= paper_bound``: T6's statement for given bounds."""
    return sp.And(
        sp.Ge(H, -sp.log(p_max)),
        sp.Ge(-sp.log(p_max), bound),
        sp.Ge(bound, paper_bound),
    )


def entropy_bound_proof(p_max_bound: sp.Expr, bound: sp.Expr, paper_bound: sp.Expr) -> list[Step]:
    """The steps of T6 for given bounds (T6 uses T1's; tests pass false ones)."""
    return [
        SumOfTerms(other_terms, sp.Integer(0), None, "S, a sum of exponentials, is >= 0"),
        Implied(sp.And(*T1.assumptions), "T1's hypotheses hold here, so its bounds apply"),
        ExpMonotone(e_j, e_k, "e_k is the largest logit: exp(e_j/θ) <= exp(e_k/θ)", theta),
        LogMonotone(p_j, p_max, "p_j <= p_max, so log p_j <= log p_max"),
        ConvexCombination(
            entropy_terms,
            -sp.log(p_max),
            None,
            "H = Σ p_j (−log p_j) with weights p_j >= 0 adding up to 1: H >= −log p_max",
        ),
        LogMonotone(p_max, p_max_bound, "p_max <= c/(c+n−1) (T1): take logarithms"),
        Identity(-sp.log(p_max_bound), bound, "−log(c/(c+n−1)) = log(c+n−1) − δ/θ", True),
        ExpMonotone(sp.Integer(0), M - m, "c = exp((M−m)/θ) >= 1 since m <= M", theta),
        LogMonotone(n, _c + n - 1, "n <= c+n−1: take logarithms"),
        Implied(entropy_bound_statement(bound, paper_bound), "chain the three bounds"),
    ]


def _t6_proof() -> list[Step]:
    return entropy_bound_proof(_p_max_bound, _bound, _paper_bound)


T6 = Claim(
    id="T6",
    title="entropy floor: H >= −log p_max >= log(c+n−1) − δ/θ >= log n − δ/θ",
    statement=entropy_bound_statement(_bound, _paper_bound),
    assumptions=[
        sp.Gt(theta, 0),
        sp.Ge(n, 1),
        sp.Le(m, e_k),
        sp.Le(e_k, M),
        sp.Le(m, e_j),
        sp.Le(e_j, M),
        sp.Le(e_j, e_k),
    ],
    source="derived (the entropy form of the paper's Lemma 2.1, §2)",
    proof=_t6_proof,
    cites=(T1,),
    formulas=("entropy_lower_bound", "entropy_lower_bound_paper"),
)
"""T6: the entropy of a dispersed softmax is at least ``log(c+n−1) − δ/θ``.

Notes
-----
``e_k`` is the largest logit (``e_j <= e_k`` for the generic ``e_j``), ``p_max`` its
coefficient, ``S`` the sum of the other ``n − 1`` exponentials and
``H = Σ_j p_j (−log p_j)``:

.. math:: H \\ge -\\log p_{\\max} \\ge \\log(c+n-1) - \\delta/\\theta
   \\ge \\log n - \\delta/\\theta.

Examples
--------
>>> from softmax_dispersion.theory.entropy import T6
>>> [cited.id for cited in T6.cites], len(T6.proof())
(['T1'], 10)
"""

# ---------------------------------------------------------------------------------------
# T7.

_A = [sp.Function(f"A{r}", real=True)(theta) for r in range(3)]
_B = [sp.Function(f"B{r}", real=True)(beta) for r in range(3)]
#: p_j = exp(e_j/θ − ℓ) = exp(β e_j − ℓ): the generic coefficient in both forms.
_p_theta = sp.exp(e_j / theta - log_partition)
_p_beta = sp.exp(beta * e_j - log_partition)


def _sum(symbol: sp.Expr, term: sp.Expr) -> SumOver:
    return SumOver(symbol, term, (e_j,), n)


#: A_r(θ) = Σ_j e_j^r exp(e_j/θ) and B_r(β) = Σ_j e_j^r exp(β e_j), r = 0, 1, 2.
theta_sums = [_sum(_A[r], e_j**r * sp.exp(e_j / theta)) for r in range(3)]
beta_sums = [_sum(_B[r], e_j**r * sp.exp(beta * e_j)) for r in range(3)]
#: Σ p_j = 1, Σ p_j e_j = μ and Σ p_j e_j² in the θ form and in the β form.
theta_moments = [_sum(sp.Integer(1), _p_theta), _sum(mean_logit, _p_theta * e_j)]
theta_moments.append(_sum(second_moment, _p_theta * e_j**2))
beta_moments = [_sum(sp.Integer(1), _p_beta), _sum(mean_logit, _p_beta * e_j)]
beta_moments.append(_sum(second_moment, _p_beta * e_j**2))
#: H = −Σ p_j log p_j (sympy writes log p_j = β e_j − ℓ) and Var = Σ p_j (e_j − μ)².
entropy_sum = _sum(H, -_p_beta * sp.log(_p_beta))
variance_sum = _sum(variance, _p_beta * (e_j - mean_logit) ** 2)

#: The entropy and the variance as closed forms in the named sums.
entropy_of_theta = sp.log(_A[0]) - _A[1] / (theta * _A[0])
variance_of_theta = _A[2] / _A[0] - (_A[1] / _A[0]) ** 2
entropy_of_beta = sp.log(_B[0]) - beta * _B[1] / _B[0]
variance_of_beta = _B[2] / _B[0] - (_B[1] / _B[0]) ** 2

_theta_slope = entropy_theta_derivative.expr
_beta_slope = entropy_beta_derivative.expr


def _moments_steps(
    form: str, moments: list[SumOver], sums: list[SumOver], partition: sp.Expr
) -> list[Step]:
    """Σ p_j e_j^r = exp(−ℓ) · (the r-th named sum), and ℓ = log(the 0-th)."""
    names = ("1 = Σ p_j", "μ = Σ p_j e_j", "m₂ = Σ p_j e_j²")
    z = sp.sstr(partition)
    steps: list[Step] = [
        SumLinearity(moment, [(sp.exp(-log_partition), plain)], f"{name} = exp(−ℓ)·{plain.symbol}")
        for name, moment, plain in zip(names, moments, sums, strict=True)
    ]
    steps += [
        LogMonotone(sp.exp(log_partition), partition, f"{form}: exp ℓ = {z}, so ℓ <= log {z}"),
        LogMonotone(partition, sp.exp(log_partition), f"{form}: and log {z} <= ℓ"),
    ]
    return steps


def temperature_derivative_proof(theta_slope: sp.Expr, beta_slope: sp.Expr) -> list[Step]:
    """The steps of T7 for given derivatives (T7 uses the true ones; tests pass false ones)."""
    d_entropy_theta = sp.Derivative(entropy_of_theta, theta)
    d_entropy_beta = sp.Derivative(entropy_of_beta, beta)
    return [
        *_moments_steps("β form", beta_moments, beta_sums, _B[0]),
        *_moments_steps("θ form", theta_moments, theta_sums, _A[0]),
        SumLinearity(
            entropy_sum,
            [(log_partition, beta_moments[0]), (-beta, beta_moments[1])],
            "−p_j log p_j = ℓ p_j − β p_j e_j, summed: H = ℓ − β μ",
        ),
        SumLinearity(
            variance_sum,
            [
                (sp.Integer(1), beta_moments[2]),
                (-2 * mean_logit, beta_moments[1]),
                (mean_logit**2, beta_moments[0]),
            ],
            "p_j (e_j − μ)² = p_j e_j² − 2μ p_j e_j + μ² p_j, summed: Var = m₂ − μ²",
        ),
        SumOfTerms(variance_sum, sp.Integer(0), None, "Var: terms p_j (e_j − μ)² >= 0"),
        Implied(sp.Eq(H, entropy_from_log_partition.expr), "β = 1/θ: H = ℓ − μ/θ (θ form)"),
        Implied(sp.Eq(H, entropy_of_theta), "H = log A₀ − A₁/(θ A₀)"),
        Implied(sp.Eq(variance, variance_of_theta), "Var = A₂/A₀ − (A₁/A₀)²"),
        SumDerivative(theta_sums[0], theta, [(-1 / theta**2, theta_sums[1])], "A₀' = −A₁/θ²"),
        SumDerivative(theta_sums[1], theta, [(-1 / theta**2, theta_sums[2])], "A₁' = −A₂/θ²"),
        Differentiate(entropy_of_theta, theta, "differentiate log A₀ − A₁/(θ A₀)"),
        Implied(sp.Eq(d_entropy_theta, theta_slope), "substitute A₀', A₁'"),
        Implied(sp.Eq(H, entropy_of_beta), "H = log B₀ − β B₁/B₀"),
        Implied(sp.Eq(variance, variance_of_beta), "Var = B₂/B₀ − (B₁/B₀)²"),
        SumDerivative(beta_sums[0], beta, [(1, beta_sums[1])], "B₀' = B₁"),
        SumDerivative(beta_sums[1], beta, [(1, beta_sums[2])], "B₁' = B₂"),
        Differentiate(entropy_of_beta, beta, "differentiate log B₀ − β B₁/B₀"),
        Implied(sp.Eq(d_entropy_beta, beta_slope), "substitute B₀', B₁'"),
        Implied(sp.Ge(d_entropy_theta, 0), "Var >= 0 and θ > 0: dH/dθ >= 0"),
        Implied(sp.Le(d_entropy_beta, 0), "Var >= 0 and β > 0: dH/dβ <= 0"),
        Implied(
            temperature_derivative_statement(theta_slope, beta_slope), "collect the conclusions"
        ),
    ]


def temperature_derivative_statement(theta_slope: sp.Expr, beta_slope: sp.Expr) -> sp.Basic:
    """T7's statement with the given right-hand sides for ``dH/dθ`` and ``dH/dβ``."""
    d_entropy_theta = sp.Derivative(entropy_of_theta, theta)
    d_entropy_beta = sp.Derivative(entropy_of_beta, beta)
    return sp.And(
        sp.Eq(H, entropy_of_theta),
        sp.Eq(H, entropy_of_beta),
        sp.Eq(variance, variance_of_theta),
        sp.Eq(variance, variance_of_beta),
        sp.Eq(d_entropy_theta, theta_slope),
        sp.Eq(d_entropy_beta, beta_slope),
        sp.Ge(variance, 0),
        sp.Ge(d_entropy_theta, 0),
        sp.Le(d_entropy_beta, 0),
    )


def _t7_proof() -> list[Step]:
    return temperature_derivative_proof(_theta_slope, _beta_slope)


T7 = Claim(
    id="T7",
    title="dH/dθ = Var_p(e)/θ³ >= 0 and dH/dβ = −β Var_p(e) <= 0",
    statement=temperature_derivative_statement(_theta_slope, _beta_slope),
    assumptions=[sp.Gt(theta, 0), sp.Eq(beta, 1 / theta), sp.Ge(n, 1)],
    source="derived (why the paper's §3 adaptive temperature, raising β, lowers the entropy)",
    proof=_t7_proof,
    formulas=("entropy_from_log_partition", "entropy_theta_derivative", "entropy_beta_derivative"),
)
"""T7: the entropy of ``softmax_θ(e)`` rises with ``θ`` at rate ``Var_p(e)/θ³``.

Notes
-----
With ``A_r(θ) = Σ_j e_j^r e^{e_j/θ}`` and ``B_r(β) = Σ_j e_j^r e^{β e_j}`` (``β = 1/θ``):

.. math:: H = \\log A_0 - \\frac{A_1}{\\theta A_0} = \\log B_0 - \\beta\\frac{B_1}{B_0},
   \\qquad \\frac{dH}{d\\theta} = \\frac{\\operatorname{Var}_p(e)}{\\theta^3},
   \\qquad \\frac{dH}{d\\beta} = -\\beta \\operatorname{Var}_p(e).

Examples
--------
>>> from softmax_dispersion.theory.entropy import T7
>>> T7.check().verified
True
"""

CLAIMS = (T6, T7)

if __name__ == "__main__":
    from softmax_dispersion.theory._report import run_claims

    raise SystemExit(run_claims(CLAIMS))
