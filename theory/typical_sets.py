"""T13: the top weight of a typical set, predicted from the logit map alone.

Run ``python -m softmax_dispersion.theory.typical_sets`` to check the proof.

T1 bounds the top weight over *every* set; for trained heads with large spreads it is
vacuous at any testable size.  A typical set is drawn i.i.d. from the task's item
distribution, and its top weight ``p = 1/(1 + S)``, ``S = Σ_{j ≠ top} exp(e_j − e*)``, is
governed by the mean ``I_mean`` of one term: ``S ≈ (n − 1)·I_mean``.

T13 (typical sets)
    Condition on the top item (logit ``e*``): the other ``m = n − 1`` items are then
    i.i.d., drawn from the item distribution below the top item (for i.i.d. continuous
    priorities, the others given the maximum are i.i.d. from the distribution truncated
    at it).  With a logit map *monotone* in the priority (no lower item's logit exceeds
    the top item's), every term ``Y_j = exp(e_j − e*)`` lies in ``[0, 1]``; let ``I_mean`` be
    their mean, ``σ²`` a bound on their variance and ``b >= 1`` a bound on them.

    *Cited premise* (not proved here; Bernstein's inequality, e.g. Boucheron, Lugosi and
    Massart, *Concentration Inequalities*, 2013, Theorem 2.10, applied to ``Y`` and
    ``−Y``): for i.i.d. terms in ``[0, b]`` with variance at most ``σ²``,
    ``P(|S/m − I_mean| >= r) <= 2 exp(−m r²/(2σ² + 2br/3))``.

    *Proved here*, by the kernel: the top weight of softmax is ``1/(1 + S)``; monotone
    logits make every term lie in ``(0, 1]`` and ``0 < S <= m``; the radius
    ``r = (bL/3 + √((bL/3)² + 2mσ²L))/m`` with ``L = log(2/η)`` solves
    ``m r² = L(2σ² + 2br/3)``, so the premise's tail at ``r`` is exactly ``η``; and on the
    premise's event ``m(I_mean − r) <= S <= m(I_mean + r)`` the top weight lies in the band
    ``1/(1 + m(I_mean + r)) <= p <= 1/(1 + m·max(I_mean − r, 0))``, which contains the mean-field
    value ``1/(1 + mI)``.  Hence, with probability at least ``1 − η``, ``p`` is in the band.

The formulas are exported for the empirical layer, which computes ``I_mean``, ``σ²`` (the
variance itself) and ``b`` (the largest term, 1 for a monotone map) from each trained
head's logit map and checks that at most a fraction ``η`` of measured sets fall outside.
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
    Let,
    LogMonotone,
    Step,
    SumLinearity,
    SumOfTerms,
    SumOver,
)

__all__ = [
    "T13",
    "bernstein_radius",
    "typical_band_lower",
    "typical_band_upper",
    "typical_mean_field",
]

# T13's own symbols: nothing here carries a meaning from another claim.
n = sp.Symbol("n", real=True)
"""The set size (a top item and ``n − 1`` others)."""
mean = sp.Symbol("I_mean", real=True)
"""The mean term ``I_mean = E[exp(e(x) − e*)]`` below the top item."""
variance = sp.Symbol("sigma2", real=True)
"""A bound ``σ²`` on the terms' variance."""
bound = sp.Symbol("b", real=True)
"""A bound ``b`` on the terms (``b = 1`` for a monotone logit map)."""
eta = sp.Symbol("eta", real=True)
"""The level: the band fails with probability at most ``η``."""
radius = sp.Symbol("r", real=True)
"""Bernstein's radius at level ``η`` (defined by :data:`_radius_definition`)."""
level = sp.Symbol("L", real=True)
"""``L = log(2/η)``."""
top = sp.Symbol("e_top", real=True)
"""The top item's logit ``e*``."""
other = sp.Symbol("e_other", real=True)
"""A generic other logit ``e_j``."""
S = sp.Symbol("S_typical", real=True)
"""``Σ_{j ≠ top} exp(e_j − e*)``."""
T = sp.Symbol("T_typical", real=True)
"""``Σ_{j ≠ top} exp(e_j)``."""
exponent = sp.Symbol("q_tail", real=True)
"""The exponent ``m r²/(2σ² + 2br/3)`` of Bernstein's tail bound at ``r``."""

_m = n - 1
_radius_expr = (
    bound * level / 3 + sp.sqrt((bound * level / 3) ** 2 + 2 * _m * variance * level)
) / _m

typical_mean_field = formula(
    "typical_mean_field",
    1 / (1 + _m * mean),
    (n, mean),
    "T13: the mean-field top weight 1/(1 + (n−1)I_mean) of a typical set",
)
bernstein_radius = formula(
    "bernstein_radius",
    _radius_expr.subs(level, sp.log(2 / eta)),
    (n, variance, bound, eta),
    "T13: Bernstein's deviation r of the mean of n − 1 terms in [0, b] at level η",
)
typical_band_lower = formula(
    "typical_band_lower",
    1 / (1 + _m * (mean + radius)),
    (n, mean, radius),
    "T13: the band's lower edge 1/(1 + (n−1)(I_mean + r))",
)
typical_band_upper = formula(
    "typical_band_upper",
    1 / (1 + _m * sp.Max(mean - radius, 0)),
    (n, mean, radius),
    "T13: the band's upper edge 1/(1 + (n−1)·max(I_mean − r, 0))",
)

#: The n − 1 items below the top one; a monotone logit map keeps their logits at or
#: below the top item's.
_below_top = Family(
    "below the top item",
    (other,),
    _m,
    (sp.Le(other, top),),
    "the n − 1 other items, whose logits a monotone map keeps <= e*",
)
_terms = SumOver(S, sp.exp(other - top), _below_top, "S = Σ exp(e_j − e*) over the others")
_exponentials = SumOver(T, sp.exp(other), _below_top, "T = Σ exp(e_j) over the others")
_level_definition = Let(level, sp.log(2 / eta), "L = log(2/η)")
_radius_definition = Let(radius, _radius_expr, "Bernstein's radius at level η")
_exponent_expr = _m * radius**2 / (2 * variance + 2 * bound * radius / 3)
_exponent_definition = Let(exponent, _exponent_expr, "the tail bound's exponent at r")
_discriminant = (bound * level / 3) ** 2 + 2 * _m * variance * level

_weight = sp.exp(top) / (sp.exp(top) + T)
_tail = 2 * sp.exp(-exponent)
_lower = typical_band_lower.expr
_upper = typical_band_upper.expr
_event = [sp.Le(_m * (mean - radius), S), sp.Le(S, _m * (mean + radius))]


def _t13_proof() -> list[Step]:
    return [
        SumOfTerms(
            _terms,
            0,
            1,
            "each term exp(e_j − e*) lies in (0, 1]: the map is monotone",
            termwise=(ExpMonotone(other - top, 0, "e_j − e* <= 0"),),
        ),
        SumLinearity(
            _exponentials,
            [(sp.exp(top), _terms)],
            "exp(e_j) = exp(e*)·exp(e_j − e*), term by term",
        ),
        Identity(
            _weight,
            1 / (1 + S),
            "the top weight exp(e*)/(exp(e*) + T) with T = exp(e*)·S",
            substitute=(sp.Eq(T, sp.exp(top) * S),),
        ),
        LogMonotone(sp.Integer(1), 2 / eta, "2/η > 1 for 0 < η < 1", strict=True),
        Implied(sp.Gt(level, 0), "so L = log(2/η) > log 1 = 0"),
        Implied(sp.Gt(_discriminant, 0), "(bL/3)² + 2mσ²L > 0 with b >= 1, L > 0, σ² >= 0"),
        Implied(sp.Gt(radius, 0), "r > 0: bL/3 > 0 and the root is >= 0"),
        # The radius is a root of a quadratic: z3 decides it with √D as a variable y >= 0,
        # y² = D (cancel alone would treat √D as an unrelated atom).
        Implied(
            sp.Eq(_m * radius**2, level * (2 * variance + 2 * bound * radius / 3)),
            "r solves m r² = L(2σ² + 2br/3): Bernstein's tail bound set to η",
        ),
        Implied(sp.Eq(exponent, level), "so the exponent m r²/(2σ² + 2br/3) is L"),
        Identity(
            _tail,
            eta,
            "and the tail bound 2 exp(−L) = 2 exp(−log(2/η)) = η",
            substitute=(sp.Eq(exponent, level), sp.Eq(level, sp.log(2 / eta))),
        ),
        Implied(sp.Le(_lower, 1 / (1 + S)), "S <= m(I_mean + r) on the event"),
        Implied(sp.Le(1 / (1 + S), _upper), "S >= m(I_mean − r) on the event, and S >= 0"),
        Implied(
            sp.And(sp.Le(_lower, typical_mean_field.expr), sp.Le(typical_mean_field.expr, _upper)),
            "r >= 0: the mean-field value lies in the band",
        ),
        Implied(T13.statement, "the top weight, the radius, the band"),
    ]


T13 = Claim(
    id="T13",
    title="typical sets: the top weight lies in Bernstein's band around 1/(1 + (n−1)I_mean)",
    statement=sp.And(
        sp.Eq(_weight, 1 / (1 + S)),
        sp.Le(S, _m),
        sp.Eq(_tail, eta),
        sp.Le(_lower, _weight),
        sp.Le(_weight, _upper),
        sp.Le(_lower, typical_mean_field.expr),
        sp.Le(typical_mean_field.expr, _upper),
    ),
    assumptions=[
        sp.Ge(n, 2),
        sp.Gt(eta, 0),
        sp.Lt(eta, 1),
        sp.Ge(variance, 0),
        sp.Ge(bound, 1),
        sp.Ge(mean, 0),
        *_event,
    ],
    source=(
        "derived; the probability comes from Bernstein's inequality (cited premise, "
        "Boucheron–Lugosi–Massart 2013, Thm 2.10): the event m(I_mean − r) <= S <= m(I_mean + r) "
        "has probability >= 1 − η for i.i.d. terms in [0, b] with variance <= σ², here "
        "the n − 1 items below the top one, which are i.i.d. given the top item"
    ),
    proof=_t13_proof,
    formulas=("typical_mean_field", "bernstein_radius", "typical_band_lower", "typical_band_upper"),
    definitions=(
        _terms,
        _exponentials,
        _level_definition,
        _radius_definition,
        _exponent_definition,
    ),
    witness={n: 2, eta: sp.Rational(1, 2), variance: 0, bound: 1, mean: 1, top: 0, other: 0},
)

CLAIMS = (T13,)

if __name__ == "__main__":
    from softmax_dispersion.theory._result_text import run_claims

    raise SystemExit(run_claims(CLAIMS))
