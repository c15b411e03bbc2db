"""T10: scaling the logits by ``s·log n`` escapes dispersion (the counterexample regime).

Run ``python -m softmax_dispersion.theory.length_scaling`` to check the proofs.

Length-scaled softmax (SSMax, log-n scaling) uses the inverse temperature
``β_n = s·log n``, which grows with the set, so T1's fixed-temperature assumption fails.

T10
    On the spike (one logit at ``M``, ``n − 1`` at ``m``, ``δ = M − m``) the top
    coefficient is ``p_max(n) = n^{sδ}/(n^{sδ} + n − 1)``, and
    ``lim_{n→∞} p_max(n)`` is 1 if ``sδ > 1``, 1/2 if ``sδ = 1`` and 0 if ``sδ < 1``
    (an implication per regime, each the limit of ``p_max`` itself).  With a gap ``Δ``
    between the top logit and every other, ``p_max >= 1/(1 + (n−1)·n^{−sΔ})``.
    The title is generated from the statement (:func:`t10_title`).
"""

from __future__ import annotations

import sympy as sp

from softmax_dispersion.theory.formulas import formula
from softmax_dispersion.theory.kernel import (
    Assume,
    Claim,
    ExpMonotone,
    Family,
    Identity,
    Implied,
    Let,
    Limit,
    LogMonotone,
    Step,
    SumOfTerms,
    SumOver,
)
from softmax_dispersion.theory.symbols import M, delta, e_j, m, n, s

__all__ = ["T10", "length_scaled_gap_bound", "length_scaled_spike_max", "t10_title"]

gap = sp.Symbol("Delta", real=True)
"""The gap Δ between the top logit and every other one."""
excess = sp.Symbol("q", real=True)
"""How far ``sδ`` lies above 1: ``q := sδ − 1`` (a definition of T10).  Under the
hypothesis of a regime its sign is a fact (``q > 0`` where ``sδ > 1``, ``q < 0`` where
``sδ < 1``), and the :class:`~softmax_dispersion.theory.kernel.Limit` steps put in the
parameter relation ``sδ = 1 + q``, so that sympy's ``limit``, shown only signs, sees the
relation to 1 too."""
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


_spread = s * (M - m)
_p_max = length_scaled_spike_max.expr.subs(delta, M - m)
_excess = Let(excess, _spread - 1, "q := sδ − 1, how far sδ lies above 1")

_RELATIONS = {sp.StrictGreaterThan: ">", sp.Equality: "=", sp.StrictLessThan: "<"}
_REGIMES = (
    (sp.Gt, sp.Integer(1), "sδ = 1 + q with q > 0", (sp.Eq(_spread, 1 + excess),)),
    (sp.Eq, sp.Rational(1, 2), "sδ = 1: the spike is n/(2n − 1)", (sp.Eq(_spread, 1),)),
    (sp.Lt, sp.Integer(0), "sδ = 1 + q with q < 0", (sp.Eq(_spread, 1 + excess),)),
)
"""Each regime: the relation of ``sδ`` to 1, the limit of ``p_max`` there, and the
parameter relation that carries the hypothesis to the limit's routes as a sign."""


def _regime(relation: type[sp.Basic], value: sp.Expr) -> sp.Basic:
    """``relation(sδ, 1) ⇒ lim p_max(n) = value``."""
    limit = sp.Eq(sp.Limit(_p_max, n, sp.oo), value, evaluate=False)
    return sp.Implies(relation(_spread, 1), limit)


def t10_title(statement: sp.Basic) -> str:
    """T10's title, read from its statement: the regimes and their limits.

    Each implication ``sδ ⋈ 1 ⇒ lim p_max(n) = v`` of the statement contributes ``⋈``
    and ``v`` (in the order ``>``, ``=``, ``<``); an implication of any other shape is
    refused, so that the title says what the statement says.

    Examples
    --------
    >>> t10_title(T10.statement)
    'length scaling β = s·log n: p_max → 1, 1/2, 0 as sδ >, =, < 1'
    """
    regimes: list[tuple[str, str]] = []
    for part in sp.And.make_args(statement):
        if not isinstance(part, sp.Implies):
            continue
        hypothesis, conclusion = part.args
        shown = _RELATIONS.get(type(hypothesis))
        limit = conclusion.lhs if isinstance(conclusion, sp.Equality) else None
        if (
            shown is None
            or (hypothesis.lhs, hypothesis.rhs) != (_spread, 1)
            or not isinstance(limit, sp.Limit)
            or limit.args[0] != _p_max
        ):
            raise ValueError(f"not a regime of T10: {part}")
        regimes.append((shown, str(conclusion.rhs)))
    order = list(_RELATIONS.values())
    regimes.sort(key=lambda regime: order.index(regime[0]))  # >, =, <: not sympy's order
    relations = ", ".join(relation for relation, _ in regimes)
    values = ", ".join(value for _, value in regimes)
    return f"length scaling β = s·log n: p_max → {values} as sδ {relations} 1"


def _t10_proof() -> list[Step]:
    steps: list[Step] = [
        Implied(sp.Gt(n, 0), "n > 1 > 0: n is a positive base of the powers n^x"),
        Identity(_spike, _p_max, "the spike under β = s log n: exp(s log n · M) = n^{sM}"),
    ]
    for relation, value, how, relations in _REGIMES:
        hypothesis = relation(_spread, 1)
        limit = Limit(_p_max, n, sp.oo, value, how, substitute=relations)
        steps.append(Assume(hypothesis, [limit], f"the regime {_regime_text(hypothesis)}"))
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
        Implied(T10.statement, "the spike's value, its three regimes, and the gap floor"),
    ]
    return steps


def _regime_text(hypothesis: sp.Basic) -> str:
    return f"sδ {_RELATIONS[type(hypothesis)]} 1"


_statement = sp.And(
    sp.Eq(_spike, _p_max),
    *(_regime(relation, value) for relation, value, _, _ in _REGIMES),
    sp.Ge(_top, length_scaled_gap_bound.expr),
)

T10 = Claim(
    id="T10",
    title=t10_title(_statement),
    statement=_statement,
    assumptions=[sp.Gt(n, 1), sp.Gt(s, 0)],
    source="derived (Scalable-Softmax and log-n scaling; the paper's §4 discussion)",
    proof=_t10_proof,
    formulas=("length_scaled_spike_max", "length_scaled_gap_bound"),
    definitions=(_others, _excess),
    witness={n: 2, s: 1, M: 0, m: 0, gap: 0, e_j: 0},
)

CLAIMS = (T10,)

if __name__ == "__main__":
    from softmax_dispersion.theory._result_text import run_claims

    raise SystemExit(run_claims(CLAIMS))
