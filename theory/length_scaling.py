"""T10: scaling the logits by ``s·log n`` escapes dispersion (the counterexample regime).

Run ``python -m softmax_dispersion.theory.length_scaling`` to check the proofs.

Length-scaled softmax (SSMax, log-n scaling) uses the inverse temperature
``β_n = s·log n``, which grows with the set, so T1's fixed-temperature assumption fails.

T10
    On the spike (one logit at ``M``, ``n − 1`` at ``m``, ``δ = M − m``) the top
    coefficient is ``n^{sδ}/(n^{sδ} + n − 1)``, which tends to 1, 1/2 or 0 as
    ``sδ > 1``, ``= 1`` or ``< 1``.  With a gap ``Δ`` between the top logit and every
    other, ``p_max >= 1/(1 + (n−1)·n^{−sΔ})``.
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
    LogMonotone,
    Step,
    SumOfTerms,
    SumOver,
)
from softmax_dispersion.theory.symbols import M, delta, e_j, m, n, s

__all__ = ["T10", "length_scaled_gap_bound", "length_scaled_spike_max"]

gap = sp.Symbol("Delta", real=True)
"""The gap Δ between the top logit and every other one."""
excess = sp.Symbol("q", real=True)
"""How far ``sδ`` lies from 1 in the limits (``sδ = 1 ± q``), with ``q > 0`` an assumption.
The :class:`~softmax_dispersion.theory.kernel.Limit` step reads that sign from the facts
(sympy's ``limit`` is only shown a symbol of that sign) and confirms each value by the
leading terms of ``n^{1±q}/(n^{1±q} + n − 1)``."""
S = sp.Symbol("S", real=True)
"""The sum of ``exp(β e_j)`` over the n − 1 other logits."""

length_scaled_spike_max = formula(
    "length_scaled_spike_max",
    n ** (s * delta) / (n ** (s * delta) + n - 1),
    (n, s, delta),
    "T10: the spike's top coefficient under β = s·log n",
)
length_scaled_gap_bound = formula(
    "length_scaled_gap_bound",
    1 / (1 + (n - 1) * n ** (-s * gap)),
    (n, s, gap),
    "T10: the top coefficient's floor when every other logit trails by at least Δ",
)

_beta = s * sp.log(n)
_spike = sp.exp(_beta * M) / (sp.exp(_beta * M) + (n - 1) * sp.exp(_beta * m))
_top = sp.exp(_beta * M) / (sp.exp(_beta * M) + S)
_trailing = Family(
    "others",
    (e_j,),
    n - 1,
    (sp.Le(e_j, M - gap),),
    "the n − 1 logits other than the top one, each at least Δ below it",
)
_others = SumOver(S, sp.exp(_beta * e_j), _trailing, "Σ exp(β e_j) over the other logits")


def _regime(power: sp.Expr) -> sp.Expr:
    return n**power / (n**power + n - 1)


_limits = {
    "sδ > 1": (1 + excess, sp.Integer(1)),
    "sδ = 1": (sp.Integer(1), sp.Rational(1, 2)),
    "sδ < 1": (1 - excess, sp.Integer(0)),
}


def _t10_proof() -> list[Step]:
    steps: list[Step] = [
        Implied(sp.Gt(n, 0), "n > 1 > 0: n is a positive base of the powers n^x"),
        Identity(
            _spike,
            length_scaled_spike_max.expr.subs(delta, M - m),
            "the spike under β = s log n: exp(s log n · M) = n^{sM}",
        ),
    ]
    for regime, (power, value) in _limits.items():
        steps.append(Limit(_regime(power), n, sp.oo, value, f"regime {regime}"))
    steps += [
        LogMonotone(sp.Integer(1), n, "log n > 0 for n > 1", strict=True),
        SumOfTerms(
            _others,
            sp.Integer(0),
            sp.exp(_beta * (M - gap)),
            "sum over the n − 1 others",
            termwise=(ExpMonotone(e_j, M - gap, "each other term <= exp(β(M − Δ))", 1 / _beta),),
        ),
        Implied(sp.Ge(_top, length_scaled_gap_bound.expr), "divide through by exp(βM)"),
        Implied(T10.statement, "the spike's value, its three limits, and the gap floor"),
    ]
    return steps


T10 = Claim(
    id="T10",
    title="length scaling β = s·log n: p_max → 1, 1/2, 0 as sδ >, =, < 1",
    statement=sp.And(
        sp.Eq(_spike, length_scaled_spike_max.expr.subs(delta, M - m)),
        *(sp.Eq(sp.Limit(_regime(power), n, sp.oo), value) for power, value in _limits.values()),
        sp.Ge(_top, length_scaled_gap_bound.expr),
    ),
    assumptions=[sp.Gt(n, 1), sp.Gt(s, 0), sp.Gt(excess, 0)],
    source="derived (Scalable-Softmax and log-n scaling; the paper's §4 discussion)",
    proof=_t10_proof,
    formulas=("length_scaled_spike_max", "length_scaled_gap_bound"),
    definitions=(_others,),
    witness={n: 2, s: 1, excess: 1, M: 0, gap: 0, e_j: 0},
)

CLAIMS = (T10,)

if __name__ == "__main__":
    from softmax_dispersion.theory._report import run_claims

    raise SystemExit(run_claims(CLAIMS))
