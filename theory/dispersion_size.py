"""T4–T5: how large a set must be to blur a head, and how much spread sharpness costs.

Run ``python -m softmax_dispersion.theory.dispersion_size`` to check the proofs.

T4 (dispersion size)
    With logits in ``[m, M]`` at temperature ``θ`` and ``c = exp((M−m)/θ)``, every
    coefficient of every admissible logit vector is at most ``ε`` (``0 < ε < 1``) iff
    ``n >= n*(ε) = 1 + c(1−ε)/ε``: sufficiency holds for every vector by T1, and below
    ``n*`` the spike exceeds ``ε``.
T5 (sharpness needs spread)
    If some coefficient reaches ``1 − ε`` at size ``n >= 2``, then
    ``(M−m)/θ >= log((n−1)(1−ε)/ε)``: the spread must grow like ``log n``.
"""

from __future__ import annotations

import sympy as sp

from softmax_dispersion.theory.dispersion import (
    T1,
    coefficient,
    dispersion_upper,
    other_terms,
    other_terms_summed,
    spike_coefficient,
)
from softmax_dispersion.theory.formulas import formula
from softmax_dispersion.theory.kernel import (
    Cite,
    Claim,
    ExpMonotone,
    Identity,
    Implied,
    LogMonotone,
    Step,
)
from softmax_dispersion.theory.symbols import M, delta, e_j, e_k, eps, m, n, theta

__all__ = ["T4", "T5", "dispersion_size", "sharpness_spread"]

dispersion_size = formula(
    "dispersion_size",
    1 + sp.exp(delta / theta) * (1 - eps) / eps,
    (eps, delta, theta),
    "T4: the size n*(ε) = 1 + c(1−ε)/ε from which no coefficient can exceed ε",
)
sharpness_spread = formula(
    "sharpness_spread",
    sp.log((n - 1) * (1 - eps) / eps),
    (n, eps),
    "T5: the least δ/θ that lets one coefficient reach 1 − ε among n",
)

_spread = {delta: M - m}
_n_star = dispersion_size.expr.subs(_spread)
_upper = dispersion_upper.expr.subs(_spread)
_t1_assumptions = [sp.Gt(theta, 0), sp.Le(m, e_k), sp.Le(e_k, M)]


def _t4_proof() -> list[Step]:
    return [
        ExpMonotone(m, M, "c = exp((M−m)/θ) >= 1 since m <= M", theta),
        Implied(
            sp.Equivalent(sp.Le(_upper, eps), sp.Ge(n, _n_star)),
            "c/(c+n−1) <= ε  iff  c(1−ε) <= ε(n−1)  iff  n >= n*(ε)",
        ),
        Cite(T1, "T1: every coefficient lies between T1's bounds; the spike attains the upper"),
        other_terms_summed("the other logits' sum is positive: the coefficient is defined"),
        Implied(T4.statement, "T1 bounds every coefficient by c/(c+n−1); the spike attains it"),
    ]


T4 = Claim(
    id="T4",
    title="dispersion size: every coefficient <= ε iff n >= 1 + c(1−ε)/ε",
    statement=sp.And(
        sp.Implies(sp.Ge(n, _n_star), sp.Le(coefficient, eps)),
        sp.Implies(sp.Lt(n, _n_star), sp.Gt(spike_coefficient, eps)),
    ),
    assumptions=[*_t1_assumptions, sp.Ge(n, 1), sp.Gt(eps, 0), sp.Lt(eps, 1)],
    source="derived (quantifies the paper's Lemma 2.1, §2)",
    proof=_t4_proof,
    cites=(T1,),
    formulas=("dispersion_size",),
    definitions=(other_terms,),
    witness={theta: 1, m: 0, M: 1, e_k: 0, e_j: 0, n: 2, eps: sp.Rational(1, 2)},
)

_needed = (n - 1) * (1 - eps) / eps


def _t5_proof() -> list[Step]:
    return [
        Cite(T1, "T1: the coefficient is at most c/(c+n−1)"),
        Implied(
            sp.Ge(sp.exp((M - m) / theta), _needed),
            "1 − ε <= p_k <= c/(c+n−1) (T1) rearranges to c >= (n−1)(1−ε)/ε",
        ),
        LogMonotone(_needed, sp.exp((M - m) / theta), "take logarithms"),
        Identity(sp.log(sp.exp((M - m) / theta)), (M - m) / theta, "log c = (M−m)/θ"),
        Implied(T5.statement, "the spread needed for one coefficient to reach 1 − ε"),
    ]


T5 = Claim(
    id="T5",
    title="a coefficient >= 1 − ε needs (M−m)/θ >= log((n−1)(1−ε)/ε)",
    statement=sp.Le(sharpness_spread.expr, (M - m) / theta),
    assumptions=[
        *_t1_assumptions,
        sp.Ge(n, 2),
        sp.Gt(eps, 0),
        sp.Lt(eps, 1),
        sp.Ge(coefficient, 1 - eps),
    ],
    source="derived (the paper's §2: sharpness needs growing logits)",
    proof=_t5_proof,
    cites=(T1,),
    formulas=("sharpness_spread",),
    definitions=(other_terms,),
    witness={theta: 1, m: 0, M: 1, e_k: 1, e_j: 0, n: 2, eps: sp.Rational(1, 2)},
)

CLAIMS = (T4, T5)

if __name__ == "__main__":
    from softmax_dispersion.theory._result_text import run_claims

    raise SystemExit(run_claims(CLAIMS))
