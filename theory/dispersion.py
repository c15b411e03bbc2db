"""T1–T3: bounded logits at a fixed temperature force every coefficient to Θ(1/n).

Run ``python -m softmax_dispersion.theory.dispersion`` to check the proofs.

T1 (tight bounds)
    If ``m <= e_j <= M`` for all ``j`` and ``θ > 0``, then with ``c = exp((M−m)/θ)``
    every coefficient satisfies ``1/(1+(n−1)c) <= p_k <= c/(c+n−1)``; the upper bound
    is attained by the spike (one logit at ``M``, the rest at ``m``), the lower by the
    dip (one at ``m``, the rest at ``M``).
T2 (the paper's Lemma 2.1)
    ``c/(c+n−1) <= c/n`` and ``1/(1+(n−1)c) >= 1/(nc)``.
T3 (the Θ(1/n) constants)
    ``n · c/(c+n−1) → c`` and ``n/(1+(n−1)c) → 1/c`` as ``n → ∞``.
"""

from __future__ import annotations

import sympy as sp

from softmax_dispersion.theory.formulas import formula
from softmax_dispersion.theory.kernel import (
    Claim,
    ExpMonotone,
    Family,
    Identity,
    Implied,
    Limit,
    Step,
    SumOfTerms,
    SumOver,
)
from softmax_dispersion.theory.symbols import M, c, delta, e_j, e_k, m, n, theta

__all__ = [
    "T1",
    "T2",
    "T3",
    "S",
    "dispersion_lower",
    "dispersion_upper",
    "other_logits",
    "other_terms",
    "paper_lower",
    "paper_upper",
]

dispersion_upper = formula(
    "dispersion_upper",
    c / (c + n - 1),
    (n, delta, theta),
    "T1: the largest possible coefficient, c/(c+n−1) with c = exp(δ/θ)",
)
dispersion_lower = formula(
    "dispersion_lower",
    1 / (1 + (n - 1) * c),
    (n, delta, theta),
    "T1: the smallest possible coefficient, 1/(1+(n−1)c)",
)
paper_upper = formula(
    "paper_upper", c / n, (n, delta, theta), "T2: the paper's upper bound e^{δ/θ}/n"
)
paper_lower = formula(
    "paper_lower", 1 / (n * c), (n, delta, theta), "T2: the paper's lower bound e^{−δ/θ}/n"
)

_spread = {delta: M - m}
_t_k = sp.exp(e_k / theta)
S = sp.Symbol("S", real=True)
"""The sum of the other n − 1 exponentials, defined by :data:`other_terms`."""
#: The n − 1 logits other than e_k, each a generic e_j in [m, M].
other_logits = Family(
    "others",
    (e_j,),
    n - 1,
    (sp.Le(m, e_j), sp.Le(e_j, M)),
    "the n − 1 logits other than e_k, each in [m, M]",
)
#: S, the sum of exp(e_j/θ) over the other logits.
other_terms = SumOver(
    S, sp.exp(e_j / theta), other_logits, "the sum of exp(e_j/θ) over the n − 1 other logits"
)
#: p_k written with S, the sum of the other n − 1 exponentials.
coefficient = _t_k / (_t_k + S)
spike_coefficient = sp.exp(M / theta) / (sp.exp(M / theta) + (n - 1) * sp.exp(m / theta))
dip_coefficient = sp.exp(m / theta) / (sp.exp(m / theta) + (n - 1) * sp.exp(M / theta))

_upper = dispersion_upper.expr.subs(_spread)
_lower = dispersion_lower.expr.subs(_spread)
_bounded = [sp.Gt(theta, 0), sp.Ge(n, 1), sp.Le(m, e_k), sp.Le(e_k, M)]
#: A point where T1's assumptions hold: two logits, both 0, in [0, 1] at θ = 1.
witness = {theta: 1, n: 2, m: 0, M: 1, e_k: 0, e_j: 0}


def other_terms_summed(description: str) -> SumOfTerms:
    """The sum S of the other logits' terms lies between (n−1)·exp(m/θ) and
    (n−1)·exp(M/θ), each term bounded by exp being increasing (T1's step; T4 shows S
    positive with it)."""
    return SumOfTerms(
        other_terms,
        sp.exp(m / theta),
        sp.exp(M / theta),
        description,
        termwise=(
            ExpMonotone(m, e_j, "exp is increasing: lower end for each other term", theta),
            ExpMonotone(e_j, M, "exp is increasing: upper end for each other term", theta),
        ),
    )


def _t1_proof() -> list[Step]:
    return [
        ExpMonotone(m, e_k, "exp is increasing: lower end for t_k = exp(e_k/θ)", theta),
        ExpMonotone(e_k, M, "exp is increasing: upper end for t_k", theta),
        other_terms_summed("sum the termwise bounds over the n − 1 other logits"),
        Identity(spike_coefficient, _upper, "the spike attains the upper bound"),
        Identity(dip_coefficient, _lower, "the dip attains the lower bound"),
        Implied(T1.statement, "t/(t+S) grows with t and falls with S: both bounds follow"),
    ]


T1 = Claim(
    id="T1",
    title="tight bounds on every coefficient",
    statement=sp.And(
        sp.Le(_lower, coefficient),
        sp.Le(coefficient, _upper),
        sp.Eq(spike_coefficient, _upper),
        sp.Eq(dip_coefficient, _lower),
    ),
    assumptions=_bounded,
    source="derived (sharpens the paper's Lemma 2.1, §2)",
    proof=_t1_proof,
    formulas=("dispersion_upper", "dispersion_lower"),
    definitions=(other_terms,),
    witness=witness,
)


def _t2_proof() -> list[Step]:
    return [
        ExpMonotone(sp.Integer(0), delta, "c = exp(δ/θ) >= exp(0) = 1", theta),
        Implied(T2.statement, "compare the fractions with c >= 1 and n >= 1"),
    ]


T2 = Claim(
    id="T2",
    title="the paper's form e^{−δ/θ}/n <= p_k <= e^{δ/θ}/n",
    statement=sp.And(
        sp.Le(dispersion_upper.expr, paper_upper.expr),
        sp.Ge(dispersion_lower.expr, paper_lower.expr),
    ),
    assumptions=[sp.Gt(theta, 0), sp.Ge(delta, 0), sp.Ge(n, 1)],
    source="paper, Lemma 2.1 (§2)",
    proof=_t2_proof,
    formulas=("paper_upper", "paper_lower"),
    witness={theta: 1, delta: 0, n: 1},
)

_limit_upper = sp.Limit(n * dispersion_upper.expr, n, sp.oo)
_limit_lower = sp.Limit(n * dispersion_lower.expr, n, sp.oo)


def _t3_proof() -> list[Step]:
    return [
        Limit(n * dispersion_upper.expr, n, sp.oo, c, "n · p_max tends to c"),
        Limit(n * dispersion_lower.expr, n, sp.oo, 1 / c, "n · p_min tends to 1/c"),
        Implied(T3.statement, "both limits together"),
    ]


T3 = Claim(
    id="T3",
    title="the Θ(1/n) constants: n·p_max → c, n·p_min → 1/c",
    statement=sp.And(sp.Eq(_limit_upper, c), sp.Eq(_limit_lower, 1 / c)),
    assumptions=[sp.Gt(theta, 0), sp.Ge(delta, 0)],
    source="derived (the constants of the paper's Lemma 2.1)",
    proof=_t3_proof,
    witness={theta: 1, delta: 0},
)

CLAIMS = (T1, T2, T3)

if __name__ == "__main__":
    from softmax_dispersion.theory._result_text import run_claims

    raise SystemExit(run_claims(CLAIMS))
