"""T11: adaptive temperature sharpens by at most a constant factor, so it still disperses.

Run ``python -m softmax_dispersion.theory.adaptive_temperature`` to check the proof and
print the exact constants.

The rule (the paper's §3): with ``p = softmax(e)`` and its entropy
``H = Σ −p_i log(p_i + 10⁻⁹)`` in nats, use the inverse temperature
``β = max(P(H), 1)`` when ``H > 1/2`` (else 1), where
``P(H) = −0.037H⁴ + 0.481H³ − 2.3H² + 4.917H − 1.791``, and return ``softmax(β e)``.

T11
    With the exact rational coefficients: ``P(H) > 1`` exactly for ``H`` strictly
    between the two real roots of ``P − 1`` (≈ 0.8485819960 and ≈ 5.944520828), and
    ``1 <= β <= β_max = P(h*)`` (≈ 2.421387707 at ``h*`` ≈ 4.412401866, the real root of
    ``P'``).  So softmax with adaptive temperature obeys T1 with ``c = exp(β_max δ)``,
    and once ``log n − δ > τ = −log(e^{−r} − 10⁻⁹)`` (``r`` the upper root; ``τ``
    exceeds ``r`` by about 4e−7) the entropy is past ``r`` and ``β = 1`` exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from softmax_dispersion.theory.formulas import formula
from softmax_dispersion.theory.kernel import (
    Claim,
    ConvexCombination,
    ExpMonotone,
    Family,
    Implied,
    LogMonotone,
    Monotone,
    RealRoot,
    RealRoots,
    Step,
    SumOver,
)
from softmax_dispersion.theory.symbols import H, delta, n

__all__ = [
    "ENTROPY_FLOOR",
    "ENTROPY_OFFSET",
    "T11",
    "AdaptiveConstants",
    "adaptive_claim",
    "adaptive_constants",
    "adaptive_inverse_temperature",
    "adaptive_polynomial",
]

COEFFICIENTS: tuple[sp.Rational, ...] = tuple(
    sp.Rational(c) for c in ("-0.037", "0.481", "-2.3", "4.917", "-1.791")
)
"""The polynomial's coefficients, highest degree first, as exact rationals."""
ENTROPY_FLOOR = sp.Rational(1, 2)
"""Below this entropy the rule leaves β = 1."""
ENTROPY_OFFSET = sp.Rational(1, 10**9)
"""The 10⁻⁹ inside the entropy's logarithm."""

adaptive_polynomial = formula(
    "adaptive_polynomial",
    sp.Poly(COEFFICIENTS, H).as_expr(),
    (H,),
    "T11: the fitted polynomial P(H) giving the inverse temperature",
)
adaptive_inverse_temperature = formula(
    "adaptive_inverse_temperature",
    sp.Piecewise((sp.Max(adaptive_polynomial.expr, 1), H > ENTROPY_FLOOR), (1, True)),
    (H,),
    "T11: the adaptive inverse temperature β(H) = max(P(H), 1) for H > 1/2, else 1",
)

root_low, root_high, peak = sp.symbols("r_low r_high h_star", real=True)
p_j, p_max, entropy, weights_total = sp.symbols("p_j p_max H_adaptive W", real=True)
_x = sp.Symbol("x", real=True)

#: The n coefficients of p = softmax(e), each in [0, p_max].
coefficients = Family(
    "coefficients",
    (p_j,),
    n,
    (sp.Le(0, p_j), sp.Le(p_j, p_max)),
    "the n coefficients p_j of p = softmax(e), each in [0, p_max]",
)
#: Their total (1, an assumption) and the rule's entropy Σ p_j (−log(p_j + 10⁻⁹)).
_weights = SumOver(weights_total, p_j, coefficients, "Σ_j p_j, the coefficients' total")
_rule_entropy = SumOver(
    entropy,
    -p_j * sp.log(p_j + ENTROPY_OFFSET),
    coefficients,
    "the rule's entropy Σ_j −p_j log(p_j + 10⁻⁹)",
)
threshold = -sp.log(sp.exp(-root_high) - ENTROPY_OFFSET)
"""τ: once log n − δ exceeds it, β = 1 exactly."""


@dataclass(frozen=True)
class AdaptiveConstants:
    """The rule's constants as exact algebraic numbers (``CRootOf`` and expressions)."""

    sharpening_starts: sp.Expr
    sharpening_ends: sp.Expr
    peak_entropy: sp.Expr
    max_inverse_temperature: sp.Expr
    saturation_threshold: sp.Expr

    def digits(self, digits: int = 10) -> dict[str, str]:
        """Each constant to ``digits`` significant digits (sympy's certified evalf)."""
        return {name: str(sp.N(value, digits)) for name, value in vars(self).items()}


def adaptive_constants(polynomial: sp.Expr | None = None) -> AdaptiveConstants:
    """The exact constants of the adaptive rule.

    Parameters
    ----------
    polynomial
        The polynomial in ``H`` to analyse; the rule's own by default.

    Returns
    -------
    AdaptiveConstants
        The real roots of ``P − 1`` (where sharpening starts and ends), the root
        ``h*`` of ``P'`` and ``P(h*)``, the largest inverse temperature, and the
        threshold ``τ = −log(e^{−r} − 10⁻⁹)`` on ``log n − δ``.

    Notes
    -----
    ``P(H) = −0.037H⁴ + 0.481H³ − 2.3H² + 4.917H − 1.791`` with exact rationals; the roots
    are ``CRootOf`` objects, so every digit printed is certified by interval refinement.

    Examples
    --------
    >>> adaptive_constants().digits(10)["max_inverse_temperature"]
    '2.421387707'
    """
    poly = sp.Poly(adaptive_polynomial.expr if polynomial is None else polynomial, H, domain="QQ")
    low, high = sp.Poly(poly - 1, H).real_roots()[0], sp.Poly(poly - 1, H).real_roots()[-1]
    (h_star,) = sp.Poly(poly.diff(H), H).real_roots()
    return AdaptiveConstants(
        sharpening_starts=low,
        sharpening_ends=high,
        peak_entropy=h_star,
        max_inverse_temperature=poly.as_expr().subs(H, h_star),
        saturation_threshold=-sp.log(sp.exp(-high) - ENTROPY_OFFSET),
    )


def adaptive_claim(polynomial: sp.Expr, claim_id: str = "T11") -> Claim:
    """Claim T11 for a given polynomial in ``H`` (the rule's own gives T11 itself).

    The proof isolates the roots of ``P − 1`` in (0, 1) and (5, 6) and the root of
    ``P'`` in (4, 5); a different polynomial (such as the known wrong port that reads
    the coefficients in ascending order) fails at the first step whose root count or
    intervals do not fit.

    Parameters
    ----------
    polynomial
        A polynomial in :data:`~softmax_dispersion.theory.symbols.H` with rational
        coefficients.
    claim_id
        The id of the claim built.

    Returns
    -------
    Claim
        The claim; check it with :meth:`Claim.check`.

    Notes
    -----
    The rule is ``β(H) = max(P(H), 1)`` for ``H > 1/2`` and ``β = 1`` otherwise.

    Examples
    --------
    >>> adaptive_claim(adaptive_polynomial.expr).check().verified
    True
    """
    P = sp.expand(polynomial)
    beta = sp.Piecewise((sp.Max(P, 1), H > ENTROPY_FLOOR), (1, True))
    beta_max = P.subs(H, peak)
    sharpening = sp.Implies(
        H > ENTROPY_FLOOR, sp.Equivalent(P > 1, (root_low < H) & (root_high > H))
    )
    well_defined = sp.Gt(sp.exp(-root_high) - ENTROPY_OFFSET, 0)
    statement = sp.And(
        sharpening,
        well_defined,
        sp.Le(1, beta),
        sp.Le(beta, beta_max),
        sp.Le(sp.exp(beta * delta), sp.exp(beta_max * delta)),
        sp.Eq(beta.subs(H, entropy), 1),
    )

    roots = (
        RealRoot(root_low, P - 1, H, 0, 1, "where sharpening starts: the root of P − 1 in (0, 1)"),
        RealRoot(root_high, P - 1, H, 5, 6, "where sharpening ends: the root of P − 1 in (5, 6)"),
        RealRoot(peak, sp.diff(P, H), H, 4, 5, "h*, where P peaks: the root of P' in (4, 5)"),
    )

    def proof() -> list[Step]:
        return [
            RealRoots(P - 1, H, roots[:2], "P − 1 has no real roots but r_low and r_high"),
            Implied(sharpening, "above H = 1/2, P > 1 exactly between the roots"),
            RealRoots(sp.diff(P, H), H, roots[2:], "P' has no real root but h*"),
            Implied(sp.Le(P, beta_max), "P (degree 4, leading coefficient < 0) peaks at h*"),
            Monotone(
                sp.exp(_x) * (1 - _x / 2) ** 2,
                _x,
                sp.Integer(0),
                sp.Integer(1),
                "exp(x)(1 − x/2)^2 falls on [0, 1], so e/4 <= 1",
                decreasing=True,
            ),
            ExpMonotone(sp.Integer(-6), -root_high, "exp(−r_high) >= exp(−6)"),
            Implied(well_defined, "so τ is real: exp(−r_high) > 4^-6 > 10^-9"),
            ConvexCombination(
                _rule_entropy,
                _weights,
                -sp.log(p_j + ENTROPY_OFFSET),
                -sp.log(p_max + ENTROPY_OFFSET),
                None,
                "the rule's entropy is a convex combination of −log(p_j + 10^-9)",
                termwise=(
                    LogMonotone(p_j + ENTROPY_OFFSET, p_max + ENTROPY_OFFSET, "each p_j <= p_max"),
                ),
            ),
            LogMonotone(
                p_max + ENTROPY_OFFSET,
                sp.exp(delta) / n + ENTROPY_OFFSET,
                "p_max <= e^δ/n (T1–T2 at θ = 1)",
            ),
            ExpMonotone(
                delta - sp.log(n), -threshold, "log n − δ > τ gives e^δ/n < e^{−τ}", strict=True
            ),
            LogMonotone(
                sp.exp(delta) / n + ENTROPY_OFFSET,
                sp.exp(-root_high),
                "so log(e^δ/n + 10^-9) < −r_high",
                strict=True,
            ),
            Implied(sp.Gt(entropy, root_high), "the rule's entropy exceeds r_high"),
            Implied(sp.And(sp.Le(1, beta), sp.Le(beta, beta_max)), "hence 1 <= β(H) <= P(h*)"),
            ExpMonotone(beta * delta, beta_max * delta, "so T1 holds with c <= exp(β_max δ)"),
            Implied(statement, "β = 1 exactly past r_high; all parts together"),
        ]

    return Claim(
        id=claim_id,
        title="adaptive temperature: 1 <= β <= β_max ≈ 2.4214, and β = 1 once log n − δ > τ",
        statement=statement,
        assumptions=[
            sp.Ge(n, 1),
            sp.Ge(delta, 0),
            sp.Ge(p_max, 0),
            sp.Le(p_max, sp.exp(delta) / n),
            sp.Eq(weights_total, 1),
            sp.Gt(sp.log(n) - delta, threshold),
        ],
        source="paper, §3 (adaptive temperature); constants derived exactly",
        proof=proof,
        formulas=("adaptive_polynomial", "adaptive_inverse_temperature"),
        definitions=(*roots, _weights, _rule_entropy),
        # 382 equal coefficients: log 382 ≈ 5.9454 exceeds τ ≈ 5.9445.
        witness={n: 382, delta: 0, p_max: sp.Rational(1, 382), p_j: sp.Rational(1, 382)},
    )


T11 = adaptive_claim(adaptive_polynomial.expr)

CLAIMS = (T11,)


def _print_constants() -> None:
    for name, value in adaptive_constants().digits(10).items():
        print(f"  {name:<24} {value}")


if __name__ == "__main__":
    from softmax_dispersion.theory._result_text import run_claims

    status = run_claims(CLAIMS)
    _print_constants()
    raise SystemExit(status)
