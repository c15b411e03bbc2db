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

from softmax_dispersion.theory.dispersion import T1, S, coefficient, dispersion_upper
from softmax_dispersion.theory.formulas import formula
from softmax_dispersion.theory.kernel import (
    Cite,
    Claim,
    Definition,
    Differentiate,
    ExpMonotone,
    Family,
    Identity,
    Implied,
    Let,
    LogMonotone,
    Step,
    SumDerivative,
    SumLinearity,
    SumOfTerms,
    SumOver,
    WeightedSum,
)
from softmax_dispersion.theory.symbols import H, M, beta, delta, e_j, e_k, m, n, theta

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
_t_k = sp.exp(e_k / theta)
#: The largest coefficient: T1's coefficient of the largest logit e_k.
p_max = coefficient
#: The n − 1 other logits, each in [m, M] and at most e_k (e_k is the largest logit).
logits_below_top = Family(
    "others below e_k",
    (e_j,),
    n - 1,
    (sp.Le(m, e_j), sp.Le(e_j, M), sp.Le(e_j, e_k)),
    "the n − 1 logits other than e_k, each in [m, M] and at most e_k",
)
#: S over these logits (T1's S, over a family inside T1's).
below_top_terms = SumOver(
    S, sp.exp(e_j / theta), logits_below_top, "the sum of exp(e_j/θ) over the other logits"
)
#: The coefficient p_j = exp(e_j/θ)/(exp(e_k/θ) + S) of a generic other logit.
p_j = sp.exp(e_j / theta) / (_t_k + S)
other_weights = sp.Symbol("W_others", real=True)
"""``Σ_{j ≠ k} p_j``, the other logits' total weight (``1 − p_max``)."""
other_entropy = sp.Symbol("H_others", real=True)
"""``Σ_{j ≠ k} −p_j log p_j``, the other logits' share of the entropy."""
#: W = Σ p_j and H_others = Σ −p_j log p_j over the other logits.
other_weight_sum = SumOver(
    other_weights, p_j, logits_below_top, "the total weight of the other logits"
)
other_entropy_sum = SumOver(
    other_entropy, -p_j * sp.log(p_j), logits_below_top, "the other logits' entropy terms"
)
#: H = −p_max log p_max + H_others: the Shannon entropy of p.
entropy_definition = Let(
    H, -p_max * sp.log(p_max) + other_entropy, "the Shannon entropy H(p) = −Σ_j p_j log p_j"
)
t6_definitions = (below_top_terms, other_weight_sum, other_entropy_sum, entropy_definition)

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
        SumOfTerms(below_top_terms, sp.Integer(0), None, "S, a sum of exponentials, is >= 0"),
        Cite(T1, "T1's hypotheses hold here (its family contains these logits): its bounds"),
        SumLinearity(
            other_weight_sum,
            [(1 / (_t_k + S), below_top_terms)],
            "the other weights: Σ p_j = S/(exp(e_k/θ) + S)",
        ),
        WeightedSum(
            other_entropy_sum,
            other_weight_sum,
            -sp.log(p_j),
            -sp.log(p_max),
            None,
            "each −log p_j >= −log p_max, weighted by p_j >= 0 and summed",
            termwise=(
                ExpMonotone(e_j, e_k, "e_k is the largest logit: exp(e_j/θ) <= exp(e_k/θ)", theta),
                LogMonotone(p_j, p_max, "p_j <= p_max, so log p_j <= log p_max"),
            ),
        ),
        Implied(
            sp.Ge(H, -sp.log(p_max)),
            "H = −p_max log p_max + H_others >= −(p_max + W_others) log p_max = −log p_max",
        ),
        LogMonotone(p_max, p_max_bound, "p_max <= c/(c+n−1) (T1): take logarithms"),
        Identity(-sp.log(p_max_bound), bound, "−log(c/(c+n−1)) = log(c+n−1) − δ/θ"),
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
    assumptions=[sp.Gt(theta, 0), sp.Ge(n, 1), sp.Le(m, e_k), sp.Le(e_k, M)],
    source="derived (the entropy form of the paper's Lemma 2.1, §2)",
    proof=_t6_proof,
    cites=(T1,),
    formulas=("entropy_lower_bound", "entropy_lower_bound_paper"),
    definitions=t6_definitions,
    witness={theta: 1, n: 2, m: 0, M: 1, e_k: 1, e_j: 0},
)
"""T6: the entropy of a dispersed softmax is at least ``log(c+n−1) − δ/θ``.

Notes
-----
``e_k`` is the largest logit (every other logit ``e_j`` of the family satisfies
``e_j <= e_k``), ``p_max`` its coefficient, ``S`` the sum of the other ``n − 1``
exponentials and ``H = −p_max log p_max + Σ_{j≠k} (−p_j log p_j)``:

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

#: The n logits, e_j generic (no constraint: any real logits).
all_logits = Family("logits", (e_j,), n, (), "the n logits")
_A = [sp.Function(f"A{r}", real=True)(theta) for r in range(3)]
_B = [sp.Function(f"B{r}", real=True)(beta) for r in range(3)]


def _sum(symbol: sp.Expr, term: sp.Expr, description: str) -> SumOver:
    return SumOver(symbol, term, all_logits, description)


#: A_r(θ) = Σ_j e_j^r exp(e_j/θ) and B_r(β) = Σ_j e_j^r exp(β e_j), r = 0, 1, 2.
theta_sums = [
    _sum(_A[r], e_j**r * sp.exp(e_j / theta), f"Σ_j e_j^{r} exp(e_j/θ), a function of θ")
    for r in range(3)
]
beta_sums = [
    _sum(_B[r], e_j**r * sp.exp(beta * e_j), f"Σ_j e_j^{r} exp(β e_j), a function of β")
    for r in range(3)
]
#: p_j = exp(β e_j)/B_0(β), the generic coefficient of softmax(β e).
_p = sp.exp(beta * e_j) / _B[0]
weights_total = sp.Symbol("W", real=True)
"""``Σ_j p_j`` (proved to be 1)."""
#: Σ p_j, μ = Σ p_j e_j and Σ p_j e_j² (the β form, defined once).
moments = [
    _sum(weights_total, _p, "the total weight Σ_j p_j"),
    _sum(mean_logit, _p * e_j, "the mean logit μ = Σ_j p_j e_j"),
    _sum(second_moment, _p * e_j**2, "the second moment Σ_j p_j e_j²"),
]
#: H = −Σ p_j log p_j and Var = Σ p_j (e_j − μ)².
entropy_sum = _sum(H, -_p * sp.log(_p), "the Shannon entropy H = −Σ_j p_j log p_j")
variance_sum = _sum(variance, _p * (e_j - mean_logit) ** 2, "the variance Σ_j p_j (e_j − μ)²")
#: ℓ = log B_0(β), the log-partition function.
log_partition_definition = Let(
    log_partition, sp.log(_B[0]), "the log-partition ℓ = log Σ_j exp(β e_j)"
)
t7_definitions: tuple[Definition, ...] = (
    *theta_sums,
    *beta_sums,
    log_partition_definition,
    *moments,
    entropy_sum,
    variance_sum,
)

#: The entropy and the variance as closed forms in the named sums.
entropy_of_theta = sp.log(_A[0]) - _A[1] / (theta * _A[0])
variance_of_theta = _A[2] / _A[0] - (_A[1] / _A[0]) ** 2
entropy_of_beta = sp.log(_B[0]) - beta * _B[1] / _B[0]
variance_of_beta = _B[2] / _B[0] - (_B[1] / _B[0]) ** 2

_theta_slope = entropy_theta_derivative.expr
_beta_slope = entropy_beta_derivative.expr
_inverse = sp.Eq(beta, 1 / theta)


def temperature_derivative_proof(theta_slope: sp.Expr, beta_slope: sp.Expr) -> list[Step]:
    """The steps of T7 for given derivatives (T7 uses the true ones; tests pass false ones)."""
    d_entropy_theta = sp.Derivative(entropy_of_theta, theta)
    d_entropy_beta = sp.Derivative(entropy_of_beta, beta)
    same_sums = [sp.Eq(a, b) for a, b in zip(_A, _B, strict=True)]
    return [
        SumOfTerms(
            beta_sums[0], sp.Integer(0), None, "B₀ > 0: a sum of n >= 1 exponentials", strict=True
        ),
        SumOfTerms(theta_sums[0], sp.Integer(0), None, "A₀ > 0 likewise", strict=True),
        *(
            SumLinearity(
                theta_sums[r],
                [(sp.Integer(1), beta_sums[r])],
                f"β = 1/θ: A{r}(θ) = B{r}(β)",
                substitute=(_inverse,),
            )
            for r in range(3)
        ),
        *(
            SumLinearity(moment, [(1 / _B[0], plain)], f"{moment.description} = {plain.symbol}/B₀")
            for moment, plain in zip(moments, beta_sums, strict=True)
        ),
        Implied(sp.Eq(weights_total, 1), "so the weights add up to 1"),
        SumLinearity(
            entropy_sum,
            [(sp.log(_B[0]), moments[0]), (-beta, moments[1])],
            "−p_j log p_j = log B₀ · p_j − β p_j e_j, summed: H = log B₀ − β μ",
        ),
        SumLinearity(
            variance_sum,
            [
                (sp.Integer(1), moments[2]),
                (-2 * mean_logit, moments[1]),
                (mean_logit**2, moments[0]),
            ],
            "p_j (e_j − μ)² = p_j e_j² − 2μ p_j e_j + μ² p_j, summed: Var = m₂ − μ²",
        ),
        SumOfTerms(variance_sum, sp.Integer(0), None, "Var: terms p_j (e_j − μ)² >= 0"),
        Implied(sp.Eq(H, entropy_from_log_partition.expr), "β = 1/θ: H = ℓ − μ/θ (θ form)"),
        Implied(sp.Eq(H, entropy_of_beta), "H = log B₀ − β B₁/B₀"),
        Identity(
            entropy_of_theta,
            entropy_of_beta,
            "A_r(θ) = B_r(β) and β = 1/θ: the two closed forms agree",
            substitute=(*same_sums[:2], _inverse),
        ),
        Implied(sp.Eq(H, entropy_of_theta), "H = log A₀ − A₁/(θ A₀)"),
        Implied(sp.Eq(variance, variance_of_beta), "Var = B₂/B₀ − (B₁/B₀)²"),
        Implied(sp.Eq(variance, variance_of_theta), "Var = A₂/A₀ − (A₁/A₀)²"),
        SumDerivative(theta_sums[0], theta, [(-1 / theta**2, theta_sums[1])], "A₀' = −A₁/θ²"),
        SumDerivative(theta_sums[1], theta, [(-1 / theta**2, theta_sums[2])], "A₁' = −A₂/θ²"),
        Differentiate(entropy_of_theta, theta, "differentiate log A₀ − A₁/(θ A₀)"),
        Implied(sp.Eq(d_entropy_theta, theta_slope), "substitute A₀', A₁'"),
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
    assumptions=[sp.Gt(theta, 0), _inverse, sp.Ge(n, 1)],
    source="derived (why the paper's §3 adaptive temperature, raising β, lowers the entropy)",
    proof=_t7_proof,
    formulas=("entropy_from_log_partition", "entropy_theta_derivative", "entropy_beta_derivative"),
    definitions=t7_definitions,
    witness={theta: 1, beta: 1, n: 1, e_j: 0},
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
    from softmax_dispersion.theory._result_text import run_claims

    raise SystemExit(run_claims(CLAIMS))
