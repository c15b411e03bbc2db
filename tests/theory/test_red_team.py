"""Red team: false statements built the way a claim author would, each one rejected.

Every class of hole once found in the kernel has its own section, with at least two
false claims (the issue's examples and new ones).  Each test checks that the claim does
not verify *and* that the reason names the side condition that broke, so that a claim
rejected for an unrelated reason (a typo, a missing witness) does not count.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any, ClassVar

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from softmax_dispersion.theory import composition, terms
from softmax_dispersion.theory._core import Context, Step
from softmax_dispersion.theory.dispersion import T1, S, other_logits, other_terms
from softmax_dispersion.theory.kernel import (
    Assume,
    Cite,
    Claim,
    ClaimResult,
    ConvexCombination,
    Differentiate,
    ExpMonotone,
    Family,
    Identity,
    Implied,
    Induction,
    Let,
    Limit,
    LogMonotone,
    Monotone,
    RealRoot,
    RealRoots,
    SumDerivative,
    SumLinearity,
    SumOfTerms,
    SumOver,
    WeightedSum,
)
from softmax_dispersion.theory.symbols import M, e_j, e_k, m, n, theta
from softmax_dispersion.theory.terms import Term

x, y, a, b, c, j, k = sp.symbols("x y a b c j k", real=True)
FALSE = sp.Eq(1, 2, evaluate=False)


def _details(results: Sequence[Any]) -> list[str]:
    found = []
    for result in results:
        found.append(result.detail)
        found += _details(result.substeps)
    return found


def reasons(result: ClaimResult) -> str:
    """The claim's problem and every step's (and sub-step's) detail, in one text."""
    return " | ".join([result.problem, *_details(result.steps)])


def rejected(claim: Claim, *fragments: str) -> str:
    """Check ``claim``: it must fail, and the reasons must name every fragment."""
    result = claim.check()
    assert not result.verified, f"{claim.id} verified a false statement"
    text = reasons(result)
    for fragment in fragments:
        assert fragment in text, f"{fragment!r} not in: {text[:2000]}"
    return text


def claim(
    statement: sp.Basic,
    steps: Sequence[Step],
    assumptions: Sequence[sp.Basic] = (),
    *,
    witness: dict[Any, Any] | None = None,
    **extra: Any,
) -> Claim:
    """A claim built as an author would: the last step concludes the statement."""
    return Claim(
        id="X",
        title="a false claim",
        statement=statement,
        assumptions=list(assumptions),
        source="red team",
        proof=lambda: list(steps),
        witness={} if witness is None else witness,
        **extra,
    )


# --------------------------------------------------------------------------------------
# 1. Definitions are checked objects: fresh symbols, defined once, before use.

_one_term = Family("one term", (j,), 1, (), "a single term")


def test_sums_named_by_numbers_are_refused() -> None:
    """Two one-term sums named 1 and 2: once SumLinearity gave 1 = 2."""
    one = SumOver(sp.Integer(1), j, _one_term)
    two = SumOver(sp.Integer(2), j, _one_term)
    proof = [SumLinearity(one, [(1, two)], "Σ j = Σ j"), Implied(FALSE, "so 1 = 2")]
    rejected(
        claim(FALSE, proof, definitions=(one, two)), "a definition must name a fresh Symbol, not 1"
    )


def test_one_symbol_defined_as_two_sums_is_refused() -> None:
    """S as Σ j and as Σ (j + 1) over the same terms: once that gave False."""
    first = SumOver(S, j, _one_term)
    second = SumOver(S, j + 1, _one_term)
    proof = [SumLinearity(first, [(1, second)], "S = S"), Implied(FALSE, "so 0 = 1")]
    rejected(claim(FALSE, proof, definitions=(first, second)), "S is defined twice")


def test_two_roots_given_one_name_are_refused() -> None:
    r = sp.Symbol("r", real=True)
    low = RealRoot(r, x**2 - 2, x, -2, -1, "the negative root")
    high = RealRoot(r, x**2 - 2, x, 1, 2, "the positive root")
    statement = sp.Lt(r, 0, evaluate=False)
    rejected(
        claim(statement, [Implied(statement, "r < 0")], definitions=(low, high)),
        "r is defined twice",
    )


def test_a_root_named_like_a_constrained_parameter_contradicts_its_assumptions() -> None:
    """θ as the root of x² − 2 in (1, 2) while the assumptions say θ > 100."""
    root = RealRoot(theta, x**2 - 2, x, 1, 2, "√2, named θ")
    proof = [Implied(FALSE, "θ > 100 and θ < 2")]
    rejected(
        claim(FALSE, proof, [sp.Gt(theta, 100)], definitions=(root,)),
        "the assumptions are not shown satisfiable",
        "theta > 100 fails at the witness",
    )
    # nor may the witness give the defined θ a value of its own
    rejected(
        claim(FALSE, proof, [sp.Gt(theta, 100)], definitions=(root,), witness={theta: 101}),
        "theta is defined: the witness gives values to free symbols only",
    )


def test_a_sum_defined_in_terms_of_itself_is_refused() -> None:
    circular = SumOver(S, j + S, _one_term, "S = j + S")
    proof = [SumLinearity(circular, [(1, circular)], ""), Implied(FALSE, "")]
    rejected(claim(FALSE, proof, definitions=(circular,)), "S is defined in terms of itself")


def test_a_definition_that_uses_a_later_one_is_refused() -> None:
    total = sp.Symbol("T", real=True)
    early = Let(c, 2 * total, "twice T, before T is defined")
    late = SumOver(total, j, _one_term)
    rejected(
        claim(FALSE, [Implied(FALSE, "")], definitions=(early, late)),
        "the definition of c uses T, defined after it",
    )


def test_weights_that_add_up_to_one_by_declaration_are_refused() -> None:
    """T6, T9 and T11 once made the weights add up to 1 by setting a count."""
    w, v = sp.symbols("w v", real=True)
    pairs = Family("pairs", (w, v), n, (sp.Ge(w, 0), sp.Le(v, 1)))
    total = SumOver(S, w * v, pairs)
    weights = SumOver(sp.Symbol("W", real=True), w, pairs)
    statement = sp.Le(S, 1, evaluate=False)  # false: Σ w v can exceed 1
    proof = [ConvexCombination(total, weights, v, None, 1, "a 'convex' combination")]
    rejected(
        claim(statement, proof, definitions=(total, weights), witness={n: 1, w: 0, v: 0}),
        "that the weights add up to 1 (Eq(W, 1)) is not implied",
    )


def test_an_index_symbol_constrained_by_an_assumption_is_refused() -> None:
    """e_j ≤ 0 as an assumption while e_j is the index of S: only the domain speaks of it."""
    statement = sp.Le(S, (n - 1) * sp.exp(0), evaluate=False)
    proof = [SumOfTerms(other_terms, None, 1, "each term exp(e_j/θ) <= 1")]
    rejected(
        claim(statement, proof, [sp.Le(e_j, 0), sp.Gt(theta, 0)], definitions=(other_terms,)),
        "an assumption mentions e_j, a summation index",
    )


# --------------------------------------------------------------------------------------
# 2. Monotone: continuity on the closed interval, endpoints free of the variable.


def test_a_pole_inside_the_interval_is_refused() -> None:
    """−1/x has a positive derivative, but −1/(−1) = 1 > −1 = −1/1."""
    step = Monotone(-1 / x, x, -1, 1, "−1/x grows")
    rejected(claim(step.conclusion, [step]), "continuity on the closed interval (Ne(x, 0))")


def test_an_essential_singularity_inside_the_interval_is_refused() -> None:
    """exp(1/x) falls on both sides of 0, yet exp(−1) < exp(1)."""
    step = Monotone(sp.exp(1 / x), x, -1, 1, "exp(1/x) falls", decreasing=True)
    rejected(claim(step.conclusion, [step]), "continuity on the closed interval (Ne(x, 0))")


def test_a_piecewise_jump_is_refused() -> None:
    """The slope is 1 on both pieces, but the jump of −10 at 0 gives −1 <= −9."""
    jump = sp.Piecewise((x, x < 0), (x - 10, True))
    step = Monotone(jump, x, -1, 1, "a jump")
    rejected(claim(step.conclusion, [step]), "is not known to be differentiable")


def test_endpoints_that_contain_the_variable_are_refused() -> None:
    """(2x)² >= (2x + 1)² for all x, from a 'decreasing' square on [2x, 2x + 1]."""
    step = Monotone(x**2, x, 2 * x, 2 * x + 1, "x² on [2x, 2x+1]", decreasing=True)
    rejected(claim(step.conclusion, [step]), "the endpoints must not depend on x")


def test_a_variable_the_facts_constrain_is_refused() -> None:
    step = Monotone(x**2, x, -1, 1, "x² on [−1, 1] with x >= 0 among the facts")
    rejected(
        claim(step.conclusion, [step], [sp.Ge(x, 0)], witness={x: 0}),
        "x must be a fresh variable, but the facts mention it",
    )


# --------------------------------------------------------------------------------------
# 3. Limits: every parameter's sign a fact, and a second route.

q = sp.Symbol("q", real=True)


def test_a_limit_that_sympy_gets_wrong_for_a_real_parameter_is_refused() -> None:
    """With q merely real, sympy says lim n^(1+q)/(n^(1+q)+n−1) = 0; it is 1 for q > 0."""
    step = Limit(n ** (1 + q) / (n ** (1 + q) + n - 1), n, sp.oo, 0, "the limit is 0")
    rejected(
        claim(step.conclusion, [step], [sp.Gt(q, 0)], witness={q: 1}),
        "the claimed value is 0",
    )
    rejected(claim(step.conclusion, [step]), "the sign of q is not a stated fact")


def test_a_sign_declared_on_the_symbol_instead_of_stated_is_refused() -> None:
    """a declared negative=True but assumed a > 0: once sympy took lim exp(an) = 0."""
    negative = sp.Symbol("a", negative=True)
    step = Limit(sp.exp(negative * n), n, sp.oo, 0, "exp(a n) -> 0")
    rejected(
        claim(step.conclusion, [step], [sp.Gt(negative, 0)]),
        "a carries assumptions beyond real=True",
    )


def test_a_limit_without_a_second_route_is_refused_even_if_true() -> None:
    """lim exp(n)/n = oo is true, but no leading-term route exists for exp(n)."""
    step = Limit(sp.exp(n) / n, n, sp.oo, sp.oo, "exp(n)/n -> oo")
    rejected(claim(step.conclusion, [step]), "is not a power of n")


def test_a_limit_at_a_finite_point_is_refused() -> None:
    step = Limit(1 / n, n, 0, sp.oo, "1/n -> oo at 0")
    rejected(claim(step.conclusion, [step]), "only limits at +oo have a second route")


def test_an_induction_needs_a_true_step() -> None:
    """R(0) = 0 and R(l + 1) = R(l) + 1 do not give R(l) <= 5 for every natural l."""
    layer = sp.Symbol("l", real=True)
    R = sp.Function("R", real=True)
    step = Induction(layer, sp.Le(R(layer), 5), "R stays below 5")
    rejected(
        claim(
            step.conclusion,
            [step],
            [sp.Eq(R(0), 0), sp.Eq(R(layer + 1), R(layer) + 1)],
            naturals=(layer,),
            witness={R: sp.Lambda(layer, layer)},
        ),
        "the induction step",
    )
    # and a symbol that is not declared natural is no induction variable
    rejected(
        claim(
            step.conclusion, [step], [sp.Eq(R(0), 0)], witness={R: sp.Lambda(layer, 0), layer: 0}
        ),
        "l is not a natural-number symbol of the claim",
    )


def test_a_limit_whose_exponents_cannot_be_ordered_is_refused() -> None:
    """lim n^q/(n + 1) is 0, 1 or oo as q <, =, > 1: with q >= 0 only, no route decides."""
    step = Limit(n**q / (n + 1), n, sp.oo, 0, "n^q/(n+1) -> 0")
    rejected(
        claim(step.conclusion, [step], [sp.Ge(q, 0)], witness={q: 0}),
        "are not ordered",
    )


# --------------------------------------------------------------------------------------
# 4. z3 assumes nothing it does not know.


def test_a_symbolic_power_of_a_negative_base_is_not_positive() -> None:
    """x**y > 0 at x = −1, y = 1 (once 'proved': the power became a positive variable)."""
    statement = sp.Gt(x**y, 0, evaluate=False)
    rejected(
        claim(
            statement,
            [Implied(statement, "a power is positive")],
            [sp.Eq(x, -1), sp.Eq(y, 1)],
            witness={x: -1, y: 1},
        ),
        "opaque to z3, a power whose base is not stated positive: x**y",
    )


def test_exp_of_a_non_real_argument_is_refused() -> None:
    """exp(iπy) > 0 (once proved): the kernel refuses I outright."""
    statement = sp.Gt(sp.exp(sp.I * sp.pi * y), 0, evaluate=False)
    rejected(
        claim(statement, [Implied(statement, "exp is positive")]), "I is not a finite real number"
    )


def test_a_complex_symbol_is_refused() -> None:
    """z² >= 0 for a Symbol('z') without assumptions (possibly complex)."""
    z = sp.Symbol("z")
    statement = sp.Ge(z**2, 0, evaluate=False)
    rejected(claim(statement, [Implied(statement, "a square")]), "z is not declared real")


def test_the_kernels_own_positive_symbols_are_refused() -> None:
    """A positive Dummy (what t = exp(.) is made of) smuggled into a claim."""
    t = sp.Dummy("t", positive=True)
    statement = sp.Gt(t, 0, evaluate=False)
    rejected(claim(statement, [Implied(statement, "t > 0")]), "is the kernel's own kind of symbol")


def test_a_fractional_power_of_a_base_of_unknown_sign_is_opaque() -> None:
    """sqrt(x)² = x needs x >= 0: at x = −1 sqrt(−1) is no real number."""
    statement = sp.Ge(sp.sqrt(x), 0, evaluate=False)
    rejected(
        claim(statement, [Implied(statement, "a root is >= 0")], [sp.Eq(x, -1)], witness={x: -1}),
        "no stated sign for its base x",
    )


def test_pi_is_known_only_to_lie_between_its_bounds() -> None:
    statement = sp.Gt(sp.pi, sp.Rational(315, 100), evaluate=False)
    rejected(claim(statement, [Implied(statement, "pi > 3.15")]), "counterexample")


# --------------------------------------------------------------------------------------
# 5. Identities: the denominators of what is written, and exact rationals.


def test_a_removable_singularity_does_not_prove_false() -> None:
    """x = 1 ⇒ False: x/(x−1) − 1/(x−1) = 1 by cancel, and z3 read 1/0 − 1/0 = 0."""
    identity = Identity(x / (x - 1) - 1 / (x - 1), 1, "cancel")
    rejected(
        claim(FALSE, [identity, Implied(FALSE, "at x = 1")], [sp.Eq(x, 1)], witness={x: 1}),
        "the denominator x - 1 != 0",
    )


def test_sum_linearity_needs_the_denominators_of_its_terms() -> None:
    """(j² − 1)/(j − 1) = j + 1 termwise, where a member may be j = 1."""
    family = Family("naturals", (j,), n, (sp.Ge(j, 0),))
    quotients = SumOver(S, (j**2 - 1) / (j - 1), family)
    shifted = SumOver(sp.Symbol("R", real=True), j + 1, family)
    step = SumLinearity(quotients, [(1, shifted)], "termwise cancel")
    rejected(
        claim(step.conclusion, [step], definitions=(quotients, shifted), witness={n: 1, j: 0}),
        "the denominator j - 1 != 0",
    )


def test_a_float_in_a_step_is_refused() -> None:
    """(x² − 11)/(x − s) = x + s with s = Float(√11), cancelled in 53-bit arithmetic."""
    s = sp.Float("3.3166247903554")
    identity = Identity((x**2 - 11) / (x - s), x + s, "a float root")
    rejected(claim(identity.conclusion, [identity], [sp.Gt(x, 4)], witness={x: 5}), "is not exact")


def test_a_logarithm_is_split_only_over_positive_factors() -> None:
    """log(ab) = log a + log b at a = b = −1."""
    identity = Identity(sp.log(a * b), sp.log(a) + sp.log(b), "log of a product")
    rejected(
        claim(
            identity.conclusion, [identity], [sp.Eq(a, -1), sp.Eq(b, -1)], witness={a: -1, b: -1}
        ),
        "the argument of log(a) > 0 (a > 0) is not implied",
    )


def test_a_substitution_inside_a_derivative_is_refused() -> None:
    """A(t) = 5 at one t says nothing of A'(t): substituting it there gave A' = 0.

    The derivative's variable is bound (a de Bruijn index): the kernel's substitution of
    A(t) cannot reach the A inside it, so the identity is left to decide A' = 0."""
    A = sp.Function("A", real=True)
    t = sp.Symbol("t", real=True)
    slope = sp.Derivative(A(t), t)
    identity = Identity(slope, 0, "A(t) = 5, so A' = 0", substitute=(sp.Eq(A(t), 5),))
    proof = [identity, Implied(FALSE, "A' = 0 and A' = 1")]
    assumptions = [sp.Eq(A(t), 5), sp.Eq(slope, 1)]
    witness = {t: 0, A: sp.Lambda(t, t + 5)}
    rejected(
        claim(FALSE, proof, assumptions, witness=witness),
        "cancel leaves Derivative(A(t), t) != 0",
    )


def test_a_number_type_from_outside_sympy_is_refused() -> None:
    """A Rational subclass posing as sympy's (its module renamed) is not a number here."""

    class Lying(sp.Rational):
        __module__ = "sympy.core.numbers"

        def __new__(cls) -> Lying:
            return sp.Expr.__new__(cls)  # type: ignore[return-value]

        p, q = 1, 1

    fake = Lying()
    statement = sp.Eq(fake, 2, evaluate=False)
    rejected(claim(statement, [Implied(statement, "1 = 2")]), "is not a finite real number")


def test_a_substitution_is_made_only_of_well_defined_values() -> None:
    """L := log(x) at x = −1: substituting it rebuilt exp(log(x)), which sympy reads as x."""
    L = sp.Symbol("L", real=True)
    identity = Identity(sp.exp(L), x, "exp(L) = x", substitute=(sp.Eq(L, sp.log(x)),))
    proof = [identity, Implied(FALSE, "exp(L) = −1 < 0")]
    rejected(
        claim(FALSE, proof, [sp.Eq(x, -1)], definitions=(Let(L, sp.log(x)),), witness={x: -1}),
        "the substituted value: the argument of log(x) > 0",
    )


def test_a_value_of_a_function_valued_sum_reads_its_term_before_sympy_rewrites_it() -> None:
    """Y(τ) := Σ exp(τ log x_j) over negative x_j: at τ = 1 sympy's term is x_j < 0."""
    tau, x_j = sp.symbols("tau x_j", real=True)
    negative = Family("negative", (x_j,), n, (sp.Lt(x_j, 0),))
    Y = SumOver(sp.Function("Y", real=True)(tau), sp.exp(tau * sp.log(x_j)), negative)
    step = SumOfTerms(Y.at(1), None, 0, "every term is negative")
    rejected(
        claim(step.conclusion, [step], [sp.Ge(n, 1)], definitions=(Y,), witness={n: 1, x_j: -1}),
        "Y read at tau = 1: the argument of log(x_j) > 0",
    )


def test_a_substitution_must_be_a_fact() -> None:
    identity = Identity(a, 2, "a = 2 if a = 2", substitute=(sp.Eq(a, 2),))
    rejected(
        claim(identity.conclusion, [identity], witness={}), "the substituted equation (Eq(a, 2))"
    )


# --------------------------------------------------------------------------------------
# 6. Citations: the very object, its definitions matched, its assumptions discharged.

_fake_t1 = Claim(
    id="T1",
    title="an impostor",
    statement=sp.false,
    assumptions=[],
    source="red team",
    proof=lambda: [Implied(sp.false, "False")],
    witness={},
)


def test_an_impostor_with_a_checked_claims_id_is_not_that_claim() -> None:
    """Cited by id "T1" next to the real T1: the citing claim gets the impostor's verdict."""
    impostor = claim(sp.false, [Cite(_fake_t1, "T1 says False")], cites=(_fake_t1,))
    rejected(impostor, "T1 did not verify")
    # and a Cite of an object that is not among the cites is refused, id or not
    swapped = claim(
        sp.false, [Cite(_fake_t1, "T1 says False")], cites=(T1,), definitions=(other_terms,)
    )
    rejected(swapped, "a cited claim is the very object that was checked")


def test_a_cited_claim_needs_its_assumptions_here() -> None:
    """T1's bounds without θ > 0 (the bounds fail for θ < 0)."""
    cite = Cite(T1, "T1's bounds")
    assumptions = [sp.Ge(n, 1), sp.Le(m, e_k), sp.Le(e_k, M)]
    witness = {theta: 1, n: 2, m: 0, M: 1, e_k: 0, e_j: 0}
    rejected(
        claim(
            T1.statement,
            [cite],
            assumptions,
            cites=(T1,),
            definitions=(other_terms,),
            witness=witness,
        ),
        "the assumptions of T1",
    )


def test_a_cited_claims_sum_must_mean_the_same_here() -> None:
    twice = SumOver(S, 2 * sp.exp(e_j / theta), other_logits, "twice T1's S")
    wider = Family("others", (e_j,), n - 1, (sp.Le(m, e_j), sp.Le(e_j, 2 * M)))
    wide = SumOver(S, sp.exp(e_j / theta), wider, "S over logits up to 2M")
    witness = {theta: 1, n: 2, m: 0, M: 1, e_k: 0, e_j: 0}
    for definition, reason in (
        (twice, "S is defined here otherwise than in T1"),
        (wide, "'others' lies within T1's domain"),
    ):
        rejected(
            claim(
                T1.statement,
                [Cite(T1, "T1")],
                T1.assumptions,
                cites=(T1,),
                definitions=(definition,),
                witness=witness,
            ),
            reason,
        )
    rejected(
        claim(T1.statement, [Cite(T1, "T1")], T1.assumptions, cites=(T1,), witness=witness),
        "T1 defines S: define it here the same way",
    )


def test_a_checked_claim_cannot_be_changed_afterwards() -> None:
    """Citations use the very object that was checked: a claim is frozen."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        T1.statement = sp.false  # type: ignore[misc]
    assert isinstance(T1.assumptions, tuple) and isinstance(T1.definitions, tuple)


def test_a_claim_that_cites_itself_is_refused() -> None:
    selfish = claim(FALSE, [Implied(FALSE, "")])
    object.__setattr__(selfish, "cites", (selfish,))
    rejected(selfish, "the claim cites itself")


# --------------------------------------------------------------------------------------
# 7. No symbol carries a meaning from one claim into another.


def test_t1s_summation_index_with_another_claims_meaning_is_refused() -> None:
    """T8 once named its smallest logit e_j, T1's summation index: e_j = −5 'for every term'."""
    statement = sp.Le(S, (n - 1) * sp.exp(-5 / theta), evaluate=False)  # false
    proof = [SumOfTerms(other_terms, None, sp.exp(-5 / theta), "every other logit is −5")]
    assumptions = [*T1.assumptions, sp.Eq(e_j, -5)]
    rejected(
        claim(statement, proof, assumptions, definitions=(other_terms,)),
        "an assumption mentions e_j, a summation index",
    )


def test_a_top_level_step_about_the_index_is_refused() -> None:
    """A fact about 'e_j' outside a termwise sub-proof would hold for one member only."""
    statement = sp.Le(S, 0, evaluate=False)
    proof = [
        ExpMonotone(e_j, M, "one member's bound, at the top", theta),
        Implied(statement, "S <= 0"),
    ]
    witness = {theta: 1, n: 2, m: 0, M: 1, e_k: 0, e_j: 0}
    rejected(
        claim(statement, proof, T1.assumptions, definitions=(other_terms,), witness=witness),
        "e_j is a summation index: it may appear only in the termwise sub-steps",
    )


def test_a_function_of_an_index_symbol_is_refused() -> None:
    """A(e_j) := Σ over x, where e_j is another family's index."""
    xs = Family("xs", (x,), n)
    A = sp.Function("A", real=True)
    function = SumOver(A(e_j), x * e_j, xs, "a sum that varies with an index")
    rejected(
        claim(FALSE, [Implied(FALSE, "")], definitions=(function, other_terms)),
        "e_j, the variable of A(e_j), is an index",
    )


def test_sums_over_two_families_do_not_combine() -> None:
    """Same index symbol, different families: Σ over n terms is not Σ over n − 1 terms."""
    everyone = Family("everyone", (e_j,), n, (sp.Le(m, e_j), sp.Le(e_j, M)))
    all_terms = SumOver(sp.Symbol("Z", real=True), sp.exp(e_j / theta), everyone)
    step = SumLinearity(all_terms, [(1, other_terms)], "Z = S")
    witness = {theta: 1, n: 2, m: 0, M: 1, e_k: 0, e_j: 0}
    rejected(
        claim(
            step.conclusion,
            [step],
            T1.assumptions,
            definitions=(other_terms, all_terms),
            witness=witness,
        ),
        "ranges over the family 'others', not 'everyone'",
    )


# --------------------------------------------------------------------------------------
# 8. A closed set of rules.


@dataclasses.dataclass(frozen=True)
class Anything(Step):
    """A three-line rule defined outside the kernel that concludes what it is told."""

    statement: sp.Basic
    description: str
    method: ClassVar[str] = "trust me"

    @property
    def conclusion(self) -> sp.Basic:
        return self.statement

    def decide(self, context: Context) -> str:
        return "it holds"


def test_a_rule_defined_outside_the_kernel_is_refused() -> None:
    rejected(claim(FALSE, [Anything(FALSE, "1 = 2")]), "Anything is not one of the kernel's rules")


def test_a_subclass_of_a_kernel_rule_is_refused() -> None:
    class Agreeable(Implied):
        def decide(self, context: Context) -> str:
            return "agreed"

    rejected(
        claim(FALSE, [Agreeable(FALSE, "1 = 2")]), "Agreeable is not one of the kernel's rules"
    )


def test_a_rule_with_a_kernel_rules_name_is_refused() -> None:
    """A class called Implied, defined elsewhere, is not the kernel's Implied."""
    imitation = type("Implied", (Anything,), {})
    rejected(claim(FALSE, [imitation(FALSE, "1 = 2")]), "Implied is not one of the kernel's rules")


def test_a_decide_patched_onto_an_instance_is_ignored() -> None:
    """The kernel calls its rule's own decide, not an attribute set on the step."""
    step = Implied(FALSE, "1 = 2")
    object.__setattr__(step, "decide", lambda context: "patched")
    rejected(claim(FALSE, [step]), "the conclusion (Eq(1, 2)) is not implied")


def test_t9_no_longer_brings_a_rule_of_its_own() -> None:
    assert not hasattr(composition, "SqrtMonotone")
    assert all(
        type(step).__module__.startswith("softmax_dispersion.theory.")
        for step in composition.T9.proof()
    )


def test_text_where_an_expression_belongs_is_refused() -> None:
    """sympy would parse (eval) a string; a step never takes text but its description."""
    with pytest.raises(TypeError, match="give a sympy expression, not text"):
        Implied("__import__('os').getcwd() == 0", "text")  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------
# 9. Claims are self-contained and not vacuous.


def test_contradictory_assumptions_fail_the_claim() -> None:
    proof = [Implied(FALSE, "x > 1 and x < 0")]
    rejected(
        claim(FALSE, proof, [sp.Gt(x, 1), sp.Lt(x, 0)], witness={x: 2}),
        "the assumptions are not shown satisfiable",
        "the assumption x < 0 fails at the witness",
    )


def test_a_claim_without_a_witness_fails() -> None:
    statement = sp.Ge(x**2, 0, evaluate=False)
    proof = [Implied(statement, "a square")]
    without = dataclasses.replace(claim(statement, proof), witness=None)
    rejected(without, "the claim gives no witness")


def test_a_contradiction_hidden_in_a_definition_and_an_assumption_fails() -> None:
    """S := Σ 1 over n terms, and S = n + 1 assumed: no family satisfies both."""
    ones = Family("ones", (j,), n)
    count = SumOver(S, sp.Integer(1), ones)
    step = SumOfTerms(count, 1, 1, "S = n")
    proof = [step, Implied(FALSE, "n = S = n + 1")]
    rejected(
        claim(
            FALSE, proof, [sp.Eq(S, n + 1), sp.Ge(n, 0)], definitions=(count,), witness={n: 1, j: 0}
        ),
        "the assumption Eq(S, n + 1) fails at the witness",
    )


def test_t1_without_its_recorded_definition_of_s_fails() -> None:
    """T1's statement is about S: without the definition it is a claim about any S."""
    rejected(
        dataclasses.replace(T1, definitions=()),
        "the sum S is not among the claim's definitions",
    )


def test_a_witness_whose_count_is_not_a_natural_number_fails() -> None:
    witness = {theta: 1, n: sp.Rational(3, 2), m: 0, M: 1, e_k: 0, e_j: 0}
    rejected(
        dataclasses.replace(T1, witness=witness), "is 1/2 at the witness, not a natural number"
    )


def test_a_witness_outside_a_familys_domain_fails() -> None:
    witness = {theta: 1, n: 2, m: 0, M: 1, e_k: 0, e_j: 5}
    rejected(dataclasses.replace(T1, witness=witness), "the domain of 'others'")


# --------------------------------------------------------------------------------------
# 10. Expressions a rule builds from its inputs: sympy evaluates as it builds
#     (a·(1/a) is 1 at once), so each input's denominators are side conditions first.

_ones = Family("ones", (j,), n, (), "n members")
_T, _P, _W = sp.symbols("T P W", real=True)
_A = sp.Function("A", real=True)
t = sp.Symbol("t", real=True)


def test_sum_linearity_sees_the_denominator_of_a_parts_term() -> None:
    """Σ 1 = a · Σ (1/a) termwise gave n = a·P, hence a ≠ 0 for every a (false at 0)."""
    ones = SumOver(_T, sp.Integer(1), _ones)
    reciprocals = SumOver(_P, 1 / a, _ones)
    proof = [
        SumLinearity(ones, [(a, reciprocals)], "1 = a · (1/a) termwise"),
        SumOfTerms(ones, 1, 1, "T = n"),
        Implied(sp.Ne(a, 0), "n = a P with n >= 1"),
    ]
    rejected(
        claim(
            sp.Ne(a, 0),
            proof,
            [sp.Ge(n, 1)],
            definitions=(ones, reciprocals),
            witness={n: 1, j: 0, a: 1},
        ),
        "the term of P: the denominator a != 0",
    )


def test_sum_linearity_sees_the_denominator_of_a_coefficient() -> None:
    """Σ 1 = (1/a) · Σ a termwise: at a = 0 the right side reads (1/0)·0 = 0, not n."""
    ones = SumOver(_T, sp.Integer(1), _ones)
    copies = SumOver(_P, a, _ones)
    step = SumLinearity(ones, [(1 / a, copies)], "1 = (1/a) · a termwise")
    rejected(
        claim(step.conclusion, [step], definitions=(ones, copies), witness={n: 1, j: 0, a: 1}),
        "the coefficient 1/a: the denominator a != 0",
    )


def test_sum_derivative_sees_the_denominator_of_a_parts_term() -> None:
    """d/dt Σ t at 0 = a · Σ (1/a): the same a ≠ 0 through SumDerivative."""
    slopes = SumOver(_A(t), t, _ones)
    ones = SumOver(_T, sp.Integer(1), _ones)
    reciprocals = SumOver(_P, 1 / a, _ones)
    proof = [
        SumDerivative(slopes, t, [(1, ones)], "A'(0) = Σ 1", point=sp.Integer(0)),
        SumDerivative(slopes, t, [(a, reciprocals)], "A'(0) = a Σ 1/a", point=sp.Integer(0)),
        SumOfTerms(ones, 1, 1, "T = n"),
        Implied(sp.Ne(a, 0), "n = a P with n >= 1"),
    ]
    rejected(
        claim(
            sp.Ne(a, 0),
            proof,
            [sp.Ge(n, 1)],
            definitions=(slopes, ones, reciprocals),
            witness={n: 1, j: 0, a: 1},
        ),
        "the term of P: the denominator a != 0",
    )


def test_sum_of_terms_sees_the_denominator_of_a_bound() -> None:
    """n terms of 1/n sum to at least n·(1/n) = 1: false for the empty family (n = 0)."""
    fractions = SumOver(S, 1 / n, _ones)
    statement = sp.Le(1, S, evaluate=False)
    rejected(
        claim(
            statement,
            [SumOfTerms(fractions, 1 / n, None, "each term is 1/n")],
            [sp.Ge(n, 0)],
            definitions=(fractions,),
            witness={n: 1, j: 0},
        ),
        "the lower bound: the denominator n != 0",
    )


def test_a_weighted_sum_sees_the_denominator_of_its_value() -> None:
    """Weights x_j = a with 1/x_j <= 2: term 1 = x·(1/x) gave n <= 2na, hence a ≠ 0."""
    members = Family("members", (x,), n, (sp.Eq(x, a), sp.Ge(x, 0), sp.Le(1 / x, 2)))
    ones = SumOver(S, sp.Integer(1), members)
    weights = SumOver(_W, x, members)
    proof = [
        SumOfTerms(ones, 1, 1, "S = n"),
        SumOfTerms(weights, a, a, "W = n a"),
        WeightedSum(ones, weights, 1 / x, None, 2, "1 = x · (1/x), and 1/x <= 2"),
        Implied(sp.Ne(a, 0), "n <= 2 n a with n >= 1"),
    ]
    rejected(
        claim(
            sp.Ne(a, 0),
            proof,
            [sp.Ge(n, 1)],
            definitions=(ones, weights),
            witness={n: 1, x: 1, a: 1},
        ),
        "the value: the denominator x != 0",
    )


def test_a_convex_combination_sees_the_denominator_of_its_value() -> None:
    """Weights adding up to 1 with 1/w <= 2: Σ 1 <= 2 claimed, false for w = (1, 0, 0)."""
    weight = sp.Symbol("w", real=True)
    members = Family("members", (weight,), n, (sp.Ge(weight, 0), sp.Le(1 / weight, 2)))
    ones = SumOver(S, sp.Integer(1), members)
    weights = SumOver(_W, weight, members)
    statement = sp.Le(S, 2, evaluate=False)
    step = ConvexCombination(ones, weights, 1 / weight, None, 2, "1 = w · (1/w) <= 2")
    rejected(
        claim(
            statement,
            [step, Implied(statement, "S <= 2")],
            [sp.Eq(_W, 1)],
            definitions=(ones, weights),
            witness={n: 1, weight: 1},
        ),
        "the value: the denominator w != 0",
    )


def test_an_endpoint_put_in_for_the_variable_is_well_defined() -> None:
    """x·b on [1/b, h] with b >= 0 concluded 1 <= h·b: at b = 0 that is 1 <= 0."""
    step = Monotone(x * b, x, 1 / b, c, "x·b grows when b >= 0")
    rejected(
        claim(step.conclusion, [step], [sp.Ge(b, 0), sp.Le(1 / b, c)], witness={b: 1, c: 1}),
        "the lower endpoint: the denominator b != 0",
    )


def test_a_point_put_in_for_the_variable_is_well_defined() -> None:
    """d/dt (b t²/2) at t = 1/b is b·(1/b) = 1: at b = 0 the derivative is 0."""
    step = Differentiate(b * t**2 / 2, t, "at 1/b", point=1 / b, constants=[b])
    rejected(claim(step.conclusion, [step], witness={b: 1}), "the point: the denominator b != 0")


# --------------------------------------------------------------------------------------
# 11. The witness is read over the reals: sympy's complex values prove nothing.

_f = sp.Function("f", real=True)
_s = sp.Symbol("s", real=True)


def _from_contradiction(assumptions: Sequence[sp.Basic], **extra: Any) -> Claim:
    """A claim that x = 7 follows from contradictory assumptions."""
    goal = sp.Eq(x, 7, evaluate=False)
    return claim(goal, [Implied(goal, "contradictory facts")], assumptions, **extra)


def test_an_abbreviation_for_the_root_of_a_negative_number_is_no_witness() -> None:
    """s := sqrt(x), s·s = x and x < 0: at x = −1, s = I and I·I = −1 'held'."""
    rejected(
        _from_contradiction(
            [sp.Eq(_s * _s, x), sp.Lt(x, 0)], definitions=(Let(_s, sp.sqrt(x)),), witness={x: -1}
        ),
        "the value of s: the base x of sqrt(x) >= 0 fails at the witness",
    )


def test_an_abbreviation_for_the_logarithm_of_a_negative_number_is_no_witness() -> None:
    """l := log x, exp(l) = x and x < 0: at x = −1, l = iπ and exp(iπ) = −1 'held'."""
    rejected(
        _from_contradiction(
            [sp.Eq(sp.exp(_s), x), sp.Lt(x, 0)], definitions=(Let(_s, sp.log(x)),), witness={x: -1}
        ),
        "the value of s: the argument of log(x) > 0 fails at the witness",
    )


def test_a_witness_function_outside_its_domain_is_no_witness() -> None:
    """f(x)² = x, x < 0 with f = sqrt: sympy turns sqrt(x)² into x before evaluating."""
    rejected(
        _from_contradiction(
            [sp.Eq(_f(x) ** 2, x), sp.Lt(x, 0)], witness={x: -1, _f: sp.Lambda(t, sp.sqrt(t))}
        ),
        "the assumption Eq(f(x)**2, x): the base x of sqrt(x) >= 0 fails at the witness",
    )


def test_a_complex_cube_root_is_no_witness() -> None:
    """x² − x + 1 = 0 has no real root; (−1)^(1/3) = exp(iπ/3) is a complex one.

    (Refused before too, as undecided; now by name.)"""
    rejected(
        _from_contradiction([sp.Eq(x**2 - x + 1, 0)], witness={x: sp.Pow(-1, sp.Rational(1, 3))}),
        "the witness value of x: the base -1 of (-1)**(1/3) >= 0 fails at the witness",
    )


def test_a_witness_function_simplified_into_a_tautology_over_the_naturals() -> None:
    """f(n)² = n − 1 for every natural n (impossible at n = 0): with f = sqrt(t − 1),
    sympy read it as n − 1 = n − 1, and Induction then proved n < 0 for every natural n."""
    goal = sp.Lt(n, 0, evaluate=False)
    rejected(
        claim(
            goal,
            [Induction(n, goal, "from the contradiction at n = 0")],
            [sp.Eq(_f(n) ** 2, n - 1)],
            witness={_f: sp.Lambda(t, sp.sqrt(t - 1))},
            naturals=(n,),
        ),
        "the base n - 1 of sqrt(n - 1) >= 0 for every natural value",
    )


# --------------------------------------------------------------------------------------
# 12. The cache handed to Claim.check is the caller's: only the kernel's own results count.


def _false_and_its_citer() -> tuple[Claim, Claim]:
    wrong = sp.Gt(x, x + 1, evaluate=False)
    false = claim(wrong, [Implied(wrong, "nonsense")], witness={x: 0})
    citer = dataclasses.replace(
        claim(wrong, [Cite(false, "the cache says so")], witness={x: 0}), cites=(false,)
    )
    return false, citer


def test_a_forged_result_in_the_cache_is_ignored() -> None:
    false, citer = _false_and_its_citer()
    digest = false.content_hash()
    forged = ClaimResult(claim=false, steps=(), verified=True, seconds=0.0, content_hash=digest)
    cache = {digest: forged}
    result = citer.check(cache)
    assert not result.verified
    assert "a cited claim did not verify (X: a step failed (nonsense))" in result.problem
    assert cache[digest] is not forged  # replaced by the kernel's own verdict


def test_another_claims_genuine_result_filed_under_a_false_claims_hash_is_ignored() -> None:
    false, citer = _false_and_its_citer()
    square = sp.Ge(x * x, 0, evaluate=False)
    cache: dict[str, ClaimResult] = {}
    genuine = claim(square, [Implied(square, "a square")], witness={x: 0}).check(cache)
    assert genuine.verified
    cache[false.content_hash()] = genuine
    result = citer.check(cache)
    assert not result.verified
    assert "a step failed (nonsense)" in result.problem


def test_a_kernel_result_changed_afterwards_is_ignored() -> None:
    false, citer = _false_and_its_citer()
    cache: dict[str, ClaimResult] = {}
    outcome = false.check(cache)
    assert not outcome.verified
    object.__setattr__(outcome, "verified", True)  # the frozen dataclass, forced
    result = citer.check(cache)
    assert not result.verified
    assert "a step failed (nonsense)" in result.problem


def test_the_kernels_own_results_are_taken_from_the_cache() -> None:
    """The consistency side: a genuine entry is used, not checked again."""
    square = sp.Ge(x * x, 0, evaluate=False)
    true = claim(square, [Implied(square, "a square")], witness={x: 0})
    cache: dict[str, ClaimResult] = {}
    first = true.check(cache)
    assert first.verified and true.check(cache) is first


# --------------------------------------------------------------------------------------
# 13. A binder holds every other symbol fixed: not a defined symbol that varies with it.


def test_a_limit_does_not_hold_an_abbreviation_of_its_variable_fixed() -> None:
    """y := n gave lim y/n = 0 (y 'fixed'); unfolded, lim n/n = 1."""
    step = Limit(y / n, n, sp.oo, 0, "y fixed")
    rejected(
        claim(step.conclusion, [step], [sp.Ge(n, 1)], definitions=(Let(y, n),), witness={n: 1}),
        "y is defined in terms of n: a limit in n cannot hold it fixed",
    )


def test_a_limit_does_not_hold_a_sum_over_n_members_fixed() -> None:
    """S := Σ 1 over n members is n: lim S/n is 1, not 0."""
    ones = SumOver(S, sp.Integer(1), _ones)
    step = Limit(S / n, n, sp.oo, 0, "S fixed")
    proof = [SumOfTerms(ones, 1, 1, "S = n"), step]
    rejected(
        claim(step.conclusion, proof, [sp.Ge(n, 1)], definitions=(ones,), witness={n: 1, j: 0}),
        "S is defined in terms of n: a limit in n cannot hold it fixed",
    )


def test_a_derivative_does_not_hold_a_defined_symbol_of_its_variable_constant() -> None:
    """y := t² declared constant gave d(y t)/dt = y; unfolded, d(t³)/dt = 3t²."""
    step = Differentiate(y * t, t, "y held fixed", constants=[y])
    rejected(
        claim(step.conclusion, [step], definitions=(Let(y, t**2),), witness={t: 1}),
        "y is defined in terms of t: a derivative in t cannot hold it fixed",
    )
    # and through another definition: z := y, y := t²
    through = Differentiate(
        sp.Symbol("z", real=True) * t, t, "z", constants=[sp.Symbol("z", real=True)]
    )
    rejected(
        claim(
            through.conclusion,
            [through],
            definitions=(Let(y, t**2), Let(sp.Symbol("z", real=True), y)),
            witness={t: 1},
        ),
        "z is defined in terms of t",
    )


def test_a_sum_derivative_does_not_hold_a_defined_symbol_of_its_variable_constant() -> None:
    """c := t as a 'constant' in Σ c x t: d/dt is Σ 2 t x, not Σ c x."""
    total = SumOver(_A(t), c * x * t, Family("xs", (x,), k, ()))
    slopes = SumOver(sp.Function("B", real=True)(t), c * x, total.family)
    step = SumDerivative(total, t, [(1, slopes)], "c fixed", constants=[c])
    rejected(
        claim(
            step.conclusion,
            [step],
            definitions=(Let(c, t), total, slopes),
            witness={t: 1, k: 1, x: 1},
        ),
        "c is defined in terms of t: a derivative in t cannot hold it fixed",
    )


def test_monotone_does_not_hold_a_sum_of_its_variable_fixed() -> None:
    """S := Σ x over n members is n x: x − S falls for n >= 2, yet 'grows' with S fixed."""
    total = SumOver(S, x, Family("copies", (j,), n, ()))
    step = Monotone(x - S, x, 0, 1, "x − S grows")
    rejected(
        claim(step.conclusion, [step], [sp.Ge(n, 2)], definitions=(total,), witness={n: 2, j: 0}),
        "S is defined in terms of x: Monotone in x cannot hold it fixed",
    )


# --------------------------------------------------------------------------------------
# 14. Messages that name what failed.


def test_monotone_names_the_endpoint_outside_the_domain() -> None:
    """log x on [0, 1]: the conclusion once read zoo <= 0; now log(0), a term, and the
    continuity check speaks."""
    step = Monotone(sp.log(x), x, 0, 1, "log grows")
    assert str(step.conclusion) == "log(0) <= 0"
    rejected(claim(step.conclusion, [step]), "continuity on the closed interval (x > 0)")


def test_real_roots_of_an_unevaluated_polynomial_are_its_roots() -> None:
    """x² − 1 + x − x held unevaluated is a term that denotes x² − 1: its roots are ±1.

    Consistency check (true statement): the kernel reads the term as written and decides
    on the polynomial it denotes, so nothing sympy leaves unevaluated is carried away."""
    root = RealRoot(sp.Symbol("r", real=True), x**2 - 1, x, 0, 2, "1")
    minus = RealRoot(sp.Symbol("r2", real=True), x**2 - 1, x, -2, 0, "-1")
    held = sp.Add(x**2, -1, x, -x, evaluate=False)
    step = RealRoots(held, x, [minus, root], "both roots")
    assert (
        claim(step.conclusion, [step], definitions=(root, minus), witness={x: 0}).check().verified
    )
    wrong = RealRoots(sp.Add(x**2, -1, x, evaluate=False), x, [minus, root], "not its roots")
    rejected(
        claim(wrong.conclusion, [wrong], definitions=(root, minus), witness={x: 0}),
        "is a root of another polynomial",
    )


# --------------------------------------------------------------------------------------
# 15. A certificate of an attack is refused by recheck too (it re-decides, it never trusts).


def _attacks() -> dict[str, tuple[Claim, str]]:
    ones = SumOver(_T, sp.Integer(1), _ones)
    reciprocals = SumOver(_P, 1 / a, _ones)
    coefficient = claim(
        sp.Ne(a, 0),
        [
            SumLinearity(ones, [(a, reciprocals)], "1 = a · (1/a) termwise"),
            SumOfTerms(ones, 1, 1, "T = n"),
            Implied(sp.Ne(a, 0), "n = a P with n >= 1"),
        ],
        [sp.Ge(n, 1)],
        definitions=(ones, reciprocals),
        witness={n: 1, j: 0, a: 1},
    )
    complex_root = _from_contradiction(
        [sp.Eq(_s * _s, x), sp.Lt(x, 0)], definitions=(Let(_s, sp.sqrt(x)),), witness={x: -1}
    )
    limit = Limit(y / n, n, sp.oo, 0, "y fixed")
    abbreviation = claim(
        limit.conclusion, [limit], [sp.Ge(n, 1)], definitions=(Let(y, n),), witness={n: 1}
    )
    one = Family("one", (j,), 1, (sp.Le(x, j), sp.Le(j, y)))
    pinned = SumOver(S, j, one)
    family = claim(
        sp.Le(x, y, evaluate=False),
        [SumOfTerms(pinned, x, y, "x <= S <= y"), Implied(sp.Le(x, y, evaluate=False), "")],
        definitions=(pinned,),
        witness={x: 0, y: 1, j: 0},
    )
    negative = sp.Lt(n, 0, evaluate=False)
    induction = claim(
        negative,
        [
            Implied(sp.Ne(1 / n, 1 / n + 1, evaluate=False), "u != u + 1"),
            Induction(n, negative, "n < 0"),
        ],
        naturals=(n,),
    )
    return {
        "H2": (coefficient, "the term of P: the denominator a != 0"),
        "H1": (complex_root, "the value of s: the base x of sqrt(x) >= 0 fails at the witness"),
        "H4": (abbreviation, "y is defined in terms of n"),
        "R3-family": (family, "the domain of the family 'one' is not shown non-empty"),
        "R3-induction": (induction, "the base case (0 < 0) is not implied"),
    }


@pytest.mark.parametrize("hole", ["H1", "H2", "H4", "R3-family", "R3-induction"])
def test_recheck_refuses_a_certificate_of_an_attack(hole: str) -> None:
    """The certificate as the kernel wrote it before the fix: every verdict 'verified'."""
    import json

    from softmax_dispersion.theory.proof_certificate import build_certificate
    from softmax_dispersion.theory.recheck import recheck

    attack, fragment = _attacks()[hole]
    certificate = build_certificate([attack.check()])
    certificate["verified"] = True
    for entry in certificate["claims"]:
        entry.update(verified=True, problem="")
        for step in entry["steps"]:
            step.update(verified=True, verdict="verified")
    report = recheck(json.loads(json.dumps(certificate)))
    assert not report.verified
    problems = " | ".join(p for c in report.claims for p in c.problems)
    assert fragment in problems, problems


# ======================================================================================
# Round 3 (issue 19): the kernel works on its own terms; the six classes found, new forms.
# ======================================================================================

# --------------------------------------------------------------------------------------
# 16. A family's domain is shown non-empty where the assumptions hold (it is no hidden
#     assumption: a family of no possible member lets its sums' rules prove anything).


def test_a_family_whose_domain_is_an_unstated_assumption_is_refused() -> None:
    """The issue's example: one member j with x <= j <= y gave x <= y for every x, y."""
    one = Family("one", (j,), 1, (sp.Le(x, j), sp.Le(j, y)))
    total = SumOver(S, j, one)
    goal = sp.Le(x, y, evaluate=False)
    proof = [SumOfTerms(total, x, y, "x <= S <= y"), Implied(goal, "so x <= y")]
    rejected(
        claim(goal, proof, definitions=(total,), witness={x: 0, y: 1, j: 0}),
        "the domain of the family 'one' is not shown non-empty where the assumptions hold",
    )


def test_a_family_of_no_possible_member_proves_nothing() -> None:
    """Members with j < a and j > a do not exist: each term 'is' both 1 and −1."""
    nobody = Family("nobody", (j,), n, (sp.Lt(j, a), sp.Gt(j, a)))
    total = SumOver(S, j, nobody)
    goal = sp.Le(n, 0, evaluate=False)  # false for n = 1
    proof = [SumOfTerms(total, 1, -1, "1 <= each term <= −1"), Implied(goal, "n <= S <= −n")]
    rejected(
        claim(goal, proof, [sp.Ge(n, 0)], definitions=(total,), witness={n: 1, a: 0, j: 0}),
        "the domain of the family 'nobody' is not shown non-empty",
    )


def test_a_member_outside_the_domain_shows_nothing() -> None:
    """A member given by the author is proved inside the domain, not taken on trust."""
    above = Family("above", (j,), 1, (sp.Ge(j, x), sp.Le(j, y)), member=(y + 1,))
    total = SumOver(S, j, above)
    goal = sp.Le(x, y, evaluate=False)
    proof = [SumOfTerms(total, x, y, "x <= S <= y"), Implied(goal, "so x <= y")]
    rejected(
        claim(goal, proof, definitions=(total,), witness={x: 0, y: 1, j: 0}),
        "the domain of the family 'above' is not shown non-empty",
    )


def test_a_domain_non_empty_under_the_assumptions_is_accepted() -> None:
    """Consistency check: with x <= y assumed, the bound x is a member, and x <= y follows."""
    one = Family("one", (j,), 1, (sp.Le(x, j), sp.Le(j, y)))
    total = SumOver(S, j, one)
    goal = sp.Le(x, S, evaluate=False)
    proof = [SumOfTerms(total, x, y, "x <= S <= y"), Implied(goal, "S >= x")]
    result = claim(
        goal, proof, [sp.Le(x, y)], definitions=(total,), witness={x: 0, y: 1, j: 0}
    ).check()
    assert result.verified, result.problem


# --------------------------------------------------------------------------------------
# 17. The kernel's own substitution: nothing evaluates, nothing is captured.


def test_induction_at_zero_does_not_evaluate_one_over_n() -> None:
    """The issue's example: at n = 0, 1/n != 1/n + 1 became Ne(zoo, zoo) = False, so the
    facts at n = 0 were contradictory and n < 0 'held' for every natural n."""
    goal = sp.Lt(n, 0, evaluate=False)
    proof = [
        Implied(sp.Ne(1 / n, 1 / n + 1, evaluate=False), "u != u + 1 for every real u"),
        Induction(n, goal, "n < 0 for every natural n"),
    ]
    rejected(claim(goal, proof, naturals=(n,)), "the base case (0 < 0) is not implied")


def test_a_predicate_at_zero_is_not_made_true_by_evaluation() -> None:
    """1/n = 1/n + 1 at n = 0 became zoo = zoo, True: the base case held by evaluation."""
    odd = sp.Or(sp.Lt(n, 0), sp.Eq(1 / n, 1 / n + 1, evaluate=False))
    proof = [Induction(n, odd, "n < 0 or 1/n = 1/n + 1"), Implied(sp.Lt(n, 0), "so n < 0")]
    rejected(claim(sp.Lt(n, 0), proof, naturals=(n,)), "the base case")


def test_a_sum_read_at_a_value_does_not_capture_a_bound_variable() -> None:
    """A(t) := Σ d/dz (z t) at z = j is Σ t; read at t = z it is Σ z, not Σ d/dz z² = Σ 2z
    (the derivative's z is bound: the kernel's substitution cannot capture it)."""
    z = sp.Symbol("z", real=True)
    A = sp.Function("A", real=True)
    members = Family("members", (j,), 1, ())
    slopes = SumOver(A(t), sp.Subs(sp.Derivative(z * t, z), z, j), members)
    doubled = SumOver(S, 2 * j, members)
    step = SumLinearity(slopes.at(z), [(1, doubled)], "at t = z, each term is 2j")
    rejected(
        claim(step.conclusion, [step], definitions=(slopes, doubled), witness={z: 0, j: 0}),
        "the termwise identity: cancel leaves",
    )


def test_an_identity_never_substitutes_under_a_binder() -> None:
    """x = t² at one point says nothing of d/dt (x t): substituting it there would give 3t²."""
    slope = sp.Derivative(x * t, t)
    identity = Identity(slope, 3 * t**2, "x = t²", substitute=(sp.Eq(x, t**2),))
    rejected(
        claim(identity.conclusion, [identity], [sp.Eq(x, t**2)], witness={x: 1, t: 1}),
        "x occurs inside a derivative, a limit or a substitution",
    )


# --------------------------------------------------------------------------------------
# 18. The witness: a fixed grammar, read by the kernel's own substitution.


def test_a_subs_in_an_assumption_is_refused() -> None:
    """The issue's example: Subs(log(x), x, −1)**2 < 0 was read with the bound x free."""
    rejected(
        _from_contradiction([sp.Lt(sp.Subs(sp.log(x), x, -1) ** 2, 0)], witness={x: 1}),
        "Subs is read only as a derivative at a point",
    )


def test_a_witness_function_with_a_subs_is_refused() -> None:
    """The issue's example: Lambda(t, Subs(s·t, s, 2)) captured s."""
    rejected(
        _from_contradiction(
            [sp.Eq(_f(x), 2 * x), sp.Eq(_f(1), 3)],
            witness={x: 1, _f: sp.Lambda(t, sp.Subs(_s * t, _s, 2))},
        ),
        "Subs is read only as a derivative at a point",
    )


def test_a_witness_function_may_not_mention_a_free_symbol() -> None:
    """Lambda(t, s·t): s is the claim's own symbol; read at s = 2 and s = 3 at once."""
    rejected(
        _from_contradiction(
            [sp.Eq(_f(x), 2 * x), sp.Eq(_s, 3)], witness={x: 1, _s: 3, _f: sp.Lambda(t, _s * t)}
        ),
        "the Lambda's body mentions s, which is not a parameter",
    )


def test_a_witness_value_must_be_a_number() -> None:
    rejected(
        _from_contradiction([sp.Lt(x, y), sp.Lt(y, x)], witness={x: y, y: 1}),
        "the witness value of x must be a number",
    )


# --------------------------------------------------------------------------------------
# 19. Functions: a name and arguments, nothing else; the kernel rebuilds them by name.


def _eval_exp(cls: Any, arg: sp.Basic) -> sp.Basic | None:
    return arg if isinstance(arg, sp.exp) else None


def test_a_function_with_its_own_eval_is_refused() -> None:
    """The issue's example: f(e^x) = e^x for every real f, once f had an eval of its own."""
    g = sp.Function("g", real=True, __dict__={"eval": classmethod(_eval_exp)})
    statement = sp.Le(g(x), x**2, evaluate=False)
    rejected(
        claim(statement, [Implied(statement, "")], witness={x: 0}),
        "the function g carries attributes of its own (eval)",
    )


def test_a_function_with_a_sign_of_its_own_is_refused() -> None:
    """_eval_is_positive in the class: sympy would read g(x) > 0 behind the kernel's back."""
    g = sp.Function("g", real=True, __dict__={"_eval_is_positive": lambda self: True})
    statement = sp.Gt(g(x) * x**2, -1, evaluate=False)
    rejected(
        claim(statement, [Implied(statement, "")], witness={x: 0}),
        "carries attributes of its own (_eval_is_positive)",
    )


def test_a_function_subclass_is_refused() -> None:
    class Wrong(sp.Function):
        is_real = True

        def fdiff(self, argindex: int = 1) -> sp.Basic:
            return sp.Integer(0)

    statement = sp.Le(Wrong(x), x, evaluate=False)
    rejected(claim(statement, [Implied(statement, "")], witness={x: 0}), "Wrong is not among")


def test_a_function_declared_positive_is_refused() -> None:
    positive = sp.Function("p", real=True, positive=True)
    statement = sp.Le(positive(x), x, evaluate=False)
    rejected(
        claim(statement, [Implied(statement, "")], witness={x: 0}),
        "must be declared real=True and nothing more",
    )


# --------------------------------------------------------------------------------------
# 20. Claims are frozen when checked: a citation concludes the frozen statement.


def test_a_check_patched_onto_a_cited_claim_is_ignored() -> None:
    """The issue's example: a forged check on the instance was trusted."""
    lemma = claim(FALSE, [Implied(FALSE, "1 = 2")])
    forged = ClaimResult(claim=lemma, steps=(), verified=True, seconds=0.0)
    object.__setattr__(lemma, "check", lambda cache=None: forged)
    citer = dataclasses.replace(claim(FALSE, [Cite(lemma, "the lemma")]), cites=(lemma,))
    rejected(citer, "a cited claim did not verify")


def test_a_cited_claim_changed_by_the_citing_proof_is_cited_as_checked() -> None:
    """The issue's example: the proof callable changed the lemma after it was checked."""
    square = sp.Ge(x**2, 0, evaluate=False)
    lemma = claim(square, [Implied(square, "a square")], witness={x: 0})

    def proof() -> list[Step]:
        object.__setattr__(lemma, "statement", FALSE)  # after the lemma was checked
        return [Cite(lemma, "the lemma, now '1 = 2'"), Implied(FALSE, "1 = 2")]

    citer = Claim("C", "", FALSE, [], "red team", proof, cites=(lemma,), witness={})
    rejected(citer, "the conclusion (Eq(1, 2)) is not implied")


def test_a_subclass_of_claim_is_not_a_claim() -> None:
    class Agreeable(Claim):
        def check(self, cache: Any = None) -> ClaimResult:
            return ClaimResult(claim=self, steps=(), verified=True, seconds=0.0)

    lemma = Agreeable("L", "", FALSE, [], "red team", lambda: [Implied(FALSE, "")], witness={})
    citer = dataclasses.replace(claim(FALSE, [Cite(lemma, "")]), cites=(lemma,))
    rejected(citer, "a cited Agreeable is not a kernel Claim")


def test_a_cited_claims_proof_swapped_after_the_check_is_checked_again() -> None:
    """The swapped lemma has other content: it is checked again (and fails) when cited."""
    square = sp.Ge(x**2, 0, evaluate=False)
    lemma = claim(square, [Implied(square, "a square")], witness={x: 0})
    assert lemma.check().verified
    object.__setattr__(lemma, "statement", FALSE)
    object.__setattr__(lemma, "proof", lambda: [Implied(FALSE, "")])
    citer = dataclasses.replace(claim(FALSE, [Cite(lemma, "")]), cites=(lemma,))
    rejected(citer, "a cited claim did not verify")


# --------------------------------------------------------------------------------------
# 21. A limit is never a real number to z3: only Eq(Limit(...), value), a proposition.


def test_a_limit_in_arithmetic_is_refused() -> None:
    """The issue's example: after lim n = oo, z3 proved lim n < lim n + 1."""
    lim = sp.Limit(n, n, sp.oo)
    statement = sp.Lt(lim, lim + 1, evaluate=False)
    proof = [Limit(n, n, sp.oo, sp.oo, "n -> oo"), Implied(statement, "a real is below itself + 1")]
    rejected(claim(statement, proof), "is a limit, not a real number")


def test_a_limit_inside_max_is_refused() -> None:
    lim = sp.Limit(1 / n, n, sp.oo)
    statement = sp.Eq(sp.Max(lim, 1), 1, evaluate=False)
    rejected(claim(statement, [Implied(statement, "")]), "is a limit, not a real number")


def test_a_limits_value_comes_only_from_the_limit_rule() -> None:
    """Eq(Limit(...), 0) is an opaque proposition: z3 cannot make it true."""
    statement = sp.Eq(sp.Limit(1 / n, n, sp.oo), 0)
    rejected(claim(statement, [Implied(statement, "z3 knows limits?")]), "is not implied")


def test_two_values_of_one_limit_give_nothing() -> None:
    """Eq(lim, 1) and Eq(lim, 2) as assumptions: z3 may not conclude 1 = 2 from them."""
    lim = sp.Limit(n / (n + 1), n, sp.oo)
    rejected(
        claim(FALSE, [Implied(FALSE, "1 = lim = 2")], [sp.Eq(lim, 1), sp.Eq(lim, 2)]),
        "the conclusion (Eq(1, 2)) is not implied",
    )


# --------------------------------------------------------------------------------------
# 22. Found while attacking the new kernel: names, cached assumptions, internal names.


def test_a_look_alike_name_is_refused() -> None:
    """A Cyrillic х prints like x: 'x <= х' would read as a tautology."""
    cyrillic = sp.Symbol("\u0445", real=True)
    statement = sp.Le(x, cyrillic, evaluate=False)
    rejected(claim(statement, [Implied(statement, "")]), "is not an ASCII identifier")


def test_a_name_the_printer_reads_as_a_constant_is_refused() -> None:
    E = sp.Symbol("E", real=True)
    statement = sp.Gt(E, 2, evaluate=False)
    rejected(
        claim(statement, [Implied(statement, "")], [sp.Gt(E, 2)], witness={E: 3}),
        "'E' is a reserved name",
    )


def test_a_real_symbol_named_I_cannot_deny_eulers_identity() -> None:
    """Red team 6: a real symbol named I prints as the imaginary unit, so a statement
    true for real I (e^{iπ} + 1 != 0) would read as the negation of Euler's identity."""
    imaginary = sp.Symbol("I", real=True)
    statement = sp.Ne(sp.exp(sp.pi * imaginary) + 1, 0, evaluate=False)
    rejected(claim(statement, [Implied(statement, "")]), "'I' is a reserved name")


@pytest.mark.parametrize("name", ["i", "e", "EulerGamma", "GoldenRatio", "Catalan"])
def test_every_name_printed_as_a_number_is_refused(name: str) -> None:
    """``name <= name`` is true, but a reader sees a number (the LaTeX of E and I is e, i)."""
    number = sp.Symbol(name, real=True)
    statement = sp.Le(number, number, evaluate=False)
    rejected(claim(statement, [Implied(statement, "")]), f"{name!r} is a reserved name")


def test_the_reserved_numbers_cover_every_constant_sympy_prints() -> None:
    """Held against sympy itself: each constant it exports, as ``str`` prints it, is a
    reserved name, and so are the LaTeX letters of E and I (e, i).  Catalan's LaTeX G
    (like EulerGamma's gamma and GoldenRatio's phi) stays a name: those constants are
    outside the term language and the letters are ordinary variables (T12's G)."""
    constants = [
        value
        for name in dir(sp)
        if isinstance(value := getattr(sp, name), sp.Basic)
        and value.is_Atom
        and not isinstance(value, sp.Symbol)
    ]
    assert len(constants) >= 10
    printed = {str(c) for c in constants}
    latex_letters = {sp.latex(c) for c in (sp.E, sp.I)}
    missing = (printed | latex_letters) - terms.NUMBER_NAMES
    assert not missing, missing


# Red team 8: an equation of a derivative reads (and prints in Coq, is_derive) as saying
# the derivative exists; facts about a derivative's value never show that.
_f = sp.Function("f", real=True)
_slope = sp.Derivative(_f(x), x)


def test_a_derivative_squeezed_to_zero_does_not_exist_for_that() -> None:
    """f'(x) <= 0 and f'(x) >= 0 give f'(x) = 0 only as numbers: a step function has
    Coquelicot's Derive 0 at its jump and no derivative there."""
    statement = sp.Eq(_slope, 0)
    rejected(
        claim(statement, [Implied(statement, "")], [sp.Le(_slope, 0), sp.Ge(_slope, 0)]),
        "which no derivative rule (Differentiate, SumDerivative) shows to exist",
    )


def test_trichotomy_of_a_derivative_is_not_differentiability() -> None:
    statement = sp.Or(sp.Eq(_slope, 1), sp.Gt(_slope, 1), sp.Lt(_slope, 1))
    rejected(claim(statement, [Implied(statement, "")]), "shows to exist")


@pytest.mark.parametrize(
    ("first", "second"), [("a1", "a_1"), ("lamda", "lambda"), ("Alpha", "A"), ("omicron", "o")]
)
def test_two_names_printed_alike_are_refused(first: str, second: str) -> None:
    """Red team 8: a1 and a_1 both print a_{1} in LaTeX, a₁ in unicode; 'a1 > a_1' under
    'a1 = a_1 + 1' read 'a₁ > a₁' under 'a₁ = a₁ + 1'."""
    one, two = sp.Symbol(first, real=True), sp.Symbol(second, real=True)
    statement = sp.Gt(one, two, evaluate=False)
    rejected(
        claim(statement, [Implied(statement, "")], [sp.Eq(one, two + 1)], witness={one: 1, two: 0}),
        "print alike",
        first,
        second,
    )


@pytest.mark.parametrize(("name", "shown"), [("Epsilon", "E"), ("Iota", "I")])
def test_a_greek_capital_printed_as_a_number_is_refused(name: str, shown: str) -> None:
    """A capital epsilon prints like E (Euler's number), a capital iota like I."""
    letter = sp.Symbol(name, real=True)
    statement = sp.Le(letter, letter, evaluate=False)
    rejected(claim(statement, [Implied(statement, "")]), f"prints as {shown!r}, a number")


def test_a_double_underscore_name_is_refused() -> None:
    """x__2 prints as x² in LaTeX and unicode: 'x__2 < x**2' under 'x__2 = x**2 - 1'."""
    squared = sp.Symbol("x__2", real=True)
    statement = sp.Lt(squared, x**2)
    rejected(
        claim(statement, [Implied(statement, "")], [sp.Eq(squared, x**2 - 1)]),
        "'x__2' holds '__', which prints as a superscript",
    )


@pytest.mark.parametrize("name", ["xabs", "xmag", "xnorm", "xavg", "xprime", "x_yabs"])
def test_a_name_printed_as_an_operation_is_refused(name: str) -> None:
    """Red team 9: a real symbol xabs prints as |x| (LaTeX and unicode), so 'Abs(x) > xabs'
    under 'xabs = -1' read '|x| > |x|' under '|x| = -1'."""
    shown = sp.Symbol(name, real=True)
    statement = sp.Gt(sp.Abs(x), shown)
    rejected(
        claim(statement, [Implied(statement, "")], [sp.Eq(shown, -1)], witness={x: 0, shown: -1}),
        "which sympy's printers show as an operation",
    )


def test_the_operation_suffixes_are_sympys_own() -> None:
    """Held against sympy's printers: each refused ending is one they turn into notation,
    and a decoration the claims use (Bbar, Zdot) is not among them."""
    from sympy.printing.latex import modifier_dict as latex_modifiers
    from sympy.printing.pretty.pretty_symbology import modifier_dict as pretty_modifiers

    from softmax_dispersion.theory.kernel import OPERATION_SUFFIXES

    assert set(OPERATION_SUFFIXES) <= set(latex_modifiers) & set(pretty_modifiers)
    for suffix in OPERATION_SUFFIXES:
        assert sp.pretty(sp.Symbol("x" + suffix)) != "x" + suffix
    assert not {"bar", "dot", "hat"} & set(OPERATION_SUFFIXES)


@pytest.mark.parametrize("natural", ["zz", "f"])
def test_a_natural_that_is_no_symbol_of_the_claim_is_refused(natural: str) -> None:
    """Red team 9: naturals=['zz'] (no term holds it) or ['f'] (a function) changed the
    content, and so the hash a citing claim names, while no display showed it."""
    f = sp.Function("f", real=True)
    statement = sp.Ge(f(x) ** 2, 0)
    rejected(
        claim(statement, [Implied(statement, "")], naturals=(sp.Symbol(natural, real=True),)),
        f"{natural} is declared a natural number but is no symbol here",
    )


def test_a_sum_read_at_a_value_keeps_its_terms_conditions() -> None:
    """Red team 11: A(t) = Σ x^t over members x = 0, read at t = 2 by substitution, is
    Σ 0² = 0; but x^t for every t needs x > 0 (Coq's Rpower 0 2 = 1), which the term at
    2, an integer power, no longer asks."""
    t_, count = sp.symbols("t_ count", real=True)
    member = sp.Symbol("x_m", real=True)
    A = sp.Function("A", real=True)
    zeros = Family("zeros", (member,), count, (sp.Ge(member, 0), sp.Le(member, 0)), "zeros")
    powers = SumOver(A(t_), member**t_, zeros, "A(t) = Σ x^t")
    statement = sp.Le(A(2), 0)
    rejected(
        claim(
            statement,
            [SumOfTerms(powers.at(2), None, 0, "each 0^2 <= 0")],
            [sp.Ge(count, 1), sp.Ge(t_, 0)],
            definitions=(powers,),
            witness={count: 1, member: 0, t_: 2},
        ),
        "before the value is put in: the base x_m of x_m**t_ > 0",
    )


def test_every_rule_reads_a_sum_at_a_value_with_its_terms_conditions() -> None:
    """Red team 12: SumDerivative's parts, resolved by the rule itself, skipped round 11's
    check: A(t) = Σ t·x², B(t) = Σ x^t over zeros, A'(t) = B(2) verified (Coq: Rpower
    0 2 = 1, so B 2 = k).  The check now runs once, for every rule, before it decides."""
    t_, count = sp.symbols("t_ count", real=True)
    member = sp.Symbol("x_m", real=True)
    A, B = sp.Function("A", real=True), sp.Function("B", real=True)
    zeros = Family("zeros", (member,), count, (sp.Le(member, 0), sp.Ge(member, 0)), "zeros")
    linear = SumOver(A(t_), t_ * member**2, zeros, "A(t) = Σ t x²")
    powers = SumOver(B(t_), member**t_, zeros, "B(t) = Σ x^t")
    statement = sp.Eq(sp.Derivative(A(t_), t_), B(2))
    rejected(
        claim(
            statement,
            [SumDerivative(linear, t_, [(1, powers.at(2))], "A' = Σ x² = B(2)")],
            [sp.Ge(count, 1)],
            definitions=(linear, powers),
            witness={count: 1, member: 0, t_: 0},
        ),
        "before the value is put in: the base x_m of x_m**t_ > 0",
    )


def test_a_sums_display_never_names_its_counter_after_a_symbol_it_holds() -> None:
    """Red team 11: with the count j, Σ j·e_j displayed Sum(e_j*j, (j, 1, j)): a reader
    took j for the counter."""
    j_ = sp.Symbol("j", real=True)
    member = sp.Symbol("e_j", real=True)
    ones = Family("ones", (member,), j_, (sp.Eq(member, 1),), "ones")
    total = SumOver(sp.Symbol("S_j", real=True), j_ * member, ones, "S = Σ j e_j")
    counter = total.expression.variables[0]
    assert counter.name != "j" and j_ in total.expression.free_symbols


def test_the_cited_statements_are_a_read_only_view() -> None:
    """Red team 15: a proof wrote `y < 0` into the table Cite reads, and a citation
    concluded it; the table is now a read-only view the kernel alone writes."""
    from softmax_dispersion.theory import rules

    with pytest.raises(TypeError):
        rules.CITED_STATEMENTS["0" * 64] = terms.rel("lt", terms.sym("y"), terms.ZERO)  # type: ignore[index]


def test_a_product_of_large_numbers_is_checked_and_shown_factor_by_factor() -> None:
    """Red team 16: four numbers of 4001 bits (each within the limit) in one product made
    the printer multiply them into 4,800 digits, past Python's limit on turning an integer
    into text, and check() raised. The printer never makes a number longer than those it
    is given; a product within the limit is still folded."""
    big = sp.Integer(2**4000 + 1)
    product = sp.Mul(big, big, big, big, x, evaluate=False)
    statement = sp.Gt(product, 0, evaluate=False)
    result = claim(statement, [Implied(statement, "")], [sp.Gt(x, 0)], witness={x: 1}).check()
    assert result.verified, result.problem
    shown = terms.show(terms.mul(*[terms.num(2**4000 + 1)] * 4, terms.sym("x")))
    assert shown.count(str(2**4000 + 1)) == 4
    assert terms.show(terms.mul(terms.num(2), terms.num(3), terms.sym("x"))) == "6*x"


_SQRT_MINUS_ONE = sp.Pow(-1, sp.Rational(1, 2), evaluate=False)


@pytest.mark.parametrize(
    ("statement", "assumptions", "condition"),
    [
        # Euler's identity denied, as read: exp(i*pi) + 1 != 0
        (
            sp.Ne(
                sp.Add(
                    sp.exp(sp.Mul(sp.pi, _SQRT_MINUS_ONE, evaluate=False), evaluate=False),
                    1,
                    evaluate=False,
                ),
                0,
                evaluate=False,
            ),
            [],
            "the base -1 of sqrt(-1) >= 0",
        ),
        (sp.Ne(sp.exp(sp.log(-1, evaluate=False), evaluate=False), -1), [], "log(-1) > 0"),
        # sqrt(x)**2 != x for x < 0: false as a reader of complex numbers reads it
        (
            sp.Ne(sp.Pow(sp.sqrt(x), 2, evaluate=False), x, evaluate=False),
            [sp.Lt(x, 0)],
            "sqrt(x) >= 0",
        ),
        # 1/x != 1/x + 1 at x = 0 holds of an unspecified number only
        (sp.Ne(1 / x, 1 / x + 1, evaluate=False), [sp.Eq(x, 0)], "the denominator x != 0"),
    ],
)
def test_a_statement_true_only_of_an_unspecified_value_is_refused(
    statement: sp.Basic, assumptions: list[sp.Basic], condition: str
) -> None:
    """Red team 16: statements true only because the kernel reads sqrt(-1), log(-1) or 1/0
    as an unspecified real verified, and read as false (Euler's identity denied). Every
    partial operation of a statement must now be inside its domain where the assumptions
    hold."""
    witness = {x: -1 if assumptions and assumptions[0] == sp.Lt(x, 0) else 0}
    rejected(
        claim(statement, [Implied(statement, "")], assumptions, witness=witness),
        "the statement is not defined where the assumptions hold",
        condition,
    )


def test_a_statement_defined_through_a_step_verifies() -> None:
    """The definedness of a statement may rest on what the steps showed: 1/x > 0 once x > 0
    is concluded from x = 2 (a fact, not an assumption, in this check)."""
    statement = sp.Gt(1 / x, 0, evaluate=False)
    steps = [Implied(sp.Gt(x, 0), "x = 2"), Implied(statement, "")]
    result = claim(statement, steps, [sp.Eq(x, 2)], witness={x: 2}).check()
    assert result.verified, result.problem


@pytest.mark.parametrize("steps", [1, 16])
def test_a_claim_of_many_large_terms_is_refused_before_it_is_hashed(steps: int) -> None:
    """Red team 16: sixteen steps on one shared chain of 2^17 nodes, each term within the
    limit, took a minute and 1.4 GB (the certificate, 80 MB, passed recheck's limit on a
    file). The whole claim now weighs no more than one term may, checked as it is read."""
    chain = x
    for _ in range(17):
        chain = sp.Add(sp.Mul(chain, chain, evaluate=False), 1, evaluate=False)
    goal = sp.Gt(chain, 0, evaluate=False)
    rejected(
        claim(
            goal, [Implied(goal, f"z3 {k}") for k in range(steps)], [sp.Gt(x, 1)], witness={x: 2}
        ),
        "the claim is too large: its terms weigh",
        f"beyond {terms.MAX_WEIGHT}",
    )


_z, _y = sp.symbols("z y", real=True)
_ONE_ZERO = Family("one", (x,), sp.Integer(1), (sp.Eq(x, 0),), "one member, 0", member=(0,))


@pytest.mark.parametrize(
    ("definition", "hypothesis", "conclusion", "where"),
    [
        # with y = sqrt(z): z = -1 implies exp(pi*y) != z (Euler's identity denied)
        (Let(_y, sp.sqrt(_z)), sp.Eq(_z, -1), sp.Ne(sp.exp(sp.pi * _y), _z), "definition of y"),
        (Let(_y, sp.log(_z)), sp.Lt(_z, 0), sp.Ne(sp.exp(_y), _z), "definition of y"),
        (Let(_y, 1 / _z), sp.Eq(_z, 0), sp.Ne(_y * _z, 1), "definition of y"),
        (SumOver(S, sp.sqrt(_z) + x, _ONE_ZERO), sp.Lt(_z, 0), sp.Ne(S**2, _z), "term of S"),
        (
            SumOver(
                S,
                x,
                Family("root", (x,), 1, (sp.Eq(x, sp.sqrt(_z)),), "", member=(sp.sqrt(_z),)),
            ),
            sp.Lt(_z, 0),
            sp.Ne(S**2, _z),
            "family of S",
        ),
    ],
)
def test_a_definition_true_only_of_an_unspecified_value_is_refused(
    definition: Any, hypothesis: sp.Basic, conclusion: sp.Basic, where: str
) -> None:
    """Red team 17: round 16's statements came back with the square root (the logarithm,
    the division) moved into a Let, a sum's term or a family's domain. What a defined
    symbol stands for must be defined where the assumptions hold, as the statement must."""
    statement = sp.Implies(hypothesis, conclusion)
    steps = [Assume(hypothesis, [Implied(conclusion, "")], "case")]
    witness = {_z: 1, x: 0} if isinstance(definition, SumOver) else {_z: 1}
    rejected(
        claim(statement, steps, definitions=(definition,), witness=witness),
        f"the {where} is not defined where the assumptions hold",
    )


_SLOPE = sp.Subs(sp.Derivative(sp.sqrt(x), x), x, -1)
_SLOPE_2 = sp.Subs(sp.Derivative(2 * sp.sqrt(x), x), x, -1)


@pytest.mark.parametrize(
    "statement",
    [
        sp.Ne(_SLOPE**2, sp.Rational(-1, 4), evaluate=False),
        sp.Ne(sp.exp(sp.pi * _SLOPE_2), -1, evaluate=False),
    ],
)
def test_a_derivative_in_a_statement_must_be_shown_to_exist(statement: sp.Basic) -> None:
    """Red team 17: (d/dx sqrt(x) at -1)**2 != -1/4 verified: the derivative, which does not
    exist, is an unspecified real (a square, so >= 0), and a reader computes -i/2; with
    2*sqrt(x), exp(pi*(-i)) != -1 denied Euler's identity once more."""
    rejected(claim(statement, [Implied(statement, "")]), "shows to exist")


def test_a_poisoned_assumption_cache_never_reaches_a_decider() -> None:
    """x's cached facts say positive: sympy would cancel Abs(x) - x; the kernel's deciders
    see only a dummy of their own for x."""
    poisoned = sp.Symbol("x_poisoned", real=True)
    identity = Identity(sp.Abs(poisoned), poisoned, "|x| = x", substitute=())
    poisoned._assumptions["positive"] = True  # after Abs was built (it stayed Abs(x))
    poisoned._assumptions["nonnegative"] = True
    try:
        rejected(
            claim(identity.conclusion, [identity], witness={poisoned: 1}),
            "the identity: cancel leaves",
        )
    finally:
        for key in ("positive", "nonnegative"):
            poisoned._assumptions.pop(key, None)


def test_a_claim_symbol_named_like_the_induction_variable_stays_apart() -> None:
    """Induction's fresh variable is fresh: a claim symbol k = 5 is not it."""
    goal = sp.Le(n, k, evaluate=False)  # false: n = 6 > 5
    rejected(
        claim(goal, [Induction(n, goal, "n <= k")], [sp.Eq(k, 5)], witness={k: 5}, naturals=(n,)),
        "the induction step",
    )


def test_a_huge_rational_is_refused() -> None:
    huge = sp.Rational(2**5000 + 1, 3)
    statement = sp.Gt(huge, 0, evaluate=False)
    rejected(claim(statement, [Implied(statement, "")]), "a number beyond 4096 bits")


def test_a_description_with_a_right_to_left_override_is_refused() -> None:
    statement = sp.Ge(x**2, 0, evaluate=False)
    step = Implied(statement, "a square \u202e0 => 2")
    rejected(claim(statement, [step], witness={x: 0}), "RIGHT-TO-LEFT OVERRIDE")


def test_a_witness_function_applied_within_itself_is_refused_quickly() -> None:
    """f = t·t applied 60 times within itself: a closed term of 2^60 leaves, shared."""
    nested: sp.Basic = x
    for _ in range(60):
        nested = _f(nested)
    statement = sp.Ge(nested, 0, evaluate=False)
    start = time.perf_counter()
    rejected(
        claim(
            statement,
            [Implied(statement, "")],
            [statement],
            witness={x: 1, _f: sp.Lambda(t, t * t)},
        ),
        "too large to decide",
    )
    assert time.perf_counter() - start < 10


def test_a_conclusion_too_large_to_build_is_refused_quickly() -> None:
    """An endpoint of 1200 terms put in for each of 1200 occurrences of the variable."""
    many = sp.Add(*(sp.Mul(k, x, evaluate=False) for k in range(1, 1201)), evaluate=False)
    far = sp.Add(*(sp.Mul(k, y, evaluate=False) for k in range(1, 1201)), evaluate=False)
    step = Monotone(many, x, 0, far, "grows on [0, far]")
    start = time.perf_counter()
    rejected(claim(sp.true, [step], [sp.Ge(y, 0)], witness={y: 0}), "too large to decide")
    assert time.perf_counter() - start < 10


# ======================================================================================
# Round 4: what sympy is shown, closed binders, the printer, and what a decision costs.
# ======================================================================================

_r = sp.Symbol("r", real=True)
_D = sp.Subs(sp.Derivative(x**2, x), x, 0)  # d/dx x² at 0, which is 0


# --------------------------------------------------------------------------------------
# 23. sympy sees only terms whose domain conditions are proved: it simplifies as it
#     builds ((√x)² is x, exp(log x) is x, x·x⁻¹ is 1), which the kernel's reading of a
#     partial operation outside its domain does not give.  A polynomial is read by the
#     kernel itself, as a polynomial term.


def test_a_root_of_a_square_of_a_square_root_is_refused() -> None:
    """The red team's reproducer: (√x)² + 1 on (−2, 0), read by sympy as x + 1; the
    kernel's fact (√r)² + 1 = 0 is unsatisfiable, so every goal followed."""
    polynomial = sp.Pow(sp.sqrt(x), 2, evaluate=False) + 1
    goal = sp.Lt(y, 0, evaluate=False)
    rejected(
        claim(
            goal,
            [Implied(goal, "from the root's equation")],
            definitions=(RealRoot(_r, polynomial, x, -2, 0, "the root of x + 1"),),
            witness={y: 0},
        ),
        "sqrt(x) is not a polynomial in x with rational coefficients",
    )


def test_a_root_of_exp_of_log_is_refused() -> None:
    """The red team's variant: exp(log x) + 1, read by sympy as x + 1."""
    polynomial = sp.exp(sp.log(x), evaluate=False) + 1
    goal = sp.Lt(y, 0, evaluate=False)
    rejected(
        claim(
            goal,
            [Implied(goal, "")],
            definitions=(RealRoot(_r, polynomial, x, -2, 0),),
            witness={y: 0},
        ),
        "exp(log(x)) is not a polynomial in x",
    )


def test_real_roots_of_a_polynomial_with_a_cancelled_pole_are_refused() -> None:
    """New form: P = x·x⁻¹·(x − 1).  sympy builds x − 1 (one root, 1), but P(0) is
    0·(1/0)·(−1) = 0 in the kernel's reading: "P(x) = 0 ⇒ x = r" is false at x = 0."""
    polynomial = sp.Mul(x, sp.Pow(x, -1, evaluate=False), x - 1, evaluate=False)
    root = RealRoot(_r, x - 1, x, sp.Rational(1, 2), sp.Rational(3, 2), "the root 1")
    step = RealRoots(polynomial, x, [root], "no root but r")
    statement = sp.Implies(sp.Eq(polynomial, 0, evaluate=False), sp.Eq(x, _r, evaluate=False))
    rejected(
        claim(statement, [step], definitions=(root,), witness={x: 1}),
        "1/x is not a polynomial in x with rational coefficients",
    )


@pytest.mark.parametrize(
    "polynomial",
    [sp.Integer(0), sp.Add(x, -x, evaluate=False), sp.Mul(0, x, evaluate=False)],
    ids=["0", "x - x", "0*x"],
)
def test_the_zero_polynomial_has_no_counted_roots(polynomial: sp.Expr) -> None:
    """Found in round 4's review (the kernel before it accepted it too): sympy counts no
    real root of the zero polynomial, so RealRoots with no roots concluded
    "P(x) = 0 ⇒ False", which is False itself, for P = 0; every goal followed."""
    goal = sp.Lt(y, 0, evaluate=False)
    step = RealRoots(polynomial, x, [], "no real roots")
    rejected(
        claim(goal, [step, Implied(goal, "from False")], witness={y: 0}),
        "is the zero polynomial (every number is a root)",
    )


def test_a_limit_defined_only_over_the_complex_numbers_is_refused() -> None:
    """The red team's reproducer: lim (√(−n))²/n = −1, true only as sympy reads it."""
    with sp.evaluate(False):
        expr = sp.Pow(sp.Pow(-n, sp.Rational(1, 2)), 2) / n
    step = Limit(expr, n, sp.oo, -1, "sympy reads it as −n/n")
    rejected(
        claim(_limit_is(expr, -1), [step]),
        "the base -n of sqrt(-n) >= 0 is not shown to hold for every n > N",
    )


def _limit_is(expr: sp.Expr, value: sp.Expr) -> sp.Basic:
    return sp.Eq(sp.Limit(expr, n, sp.oo), value, evaluate=False)


def test_a_limit_of_a_logarithm_of_a_negative_number_is_refused() -> None:
    """New form: exp(log(−n))/n, which sympy builds as −n/n: log(−n) is never defined
    for large n."""
    with sp.evaluate(False):
        expr = sp.exp(sp.log(-n)) / n
    step = Limit(expr, n, sp.oo, -1, "sympy reads it as −n/n")
    rejected(
        claim(_limit_is(expr, -1), [step]),
        "the argument of log(-n) > 0 is not shown to hold for every n > N",
    )


def test_a_limit_may_not_use_the_claims_symbol_of_its_name() -> None:
    """New form: the tail is the limit variable's, not the claim's symbol n: with n = −1
    a fact, √(−n) is defined at the claim's n, yet never on the limit's tail."""
    with sp.evaluate(False):
        expr = sp.Pow(sp.Pow(-n, sp.Rational(1, 2)), 2) / n
    step = Limit(expr, n, sp.oo, -1, "n = −1, so −n >= 0?")
    rejected(
        claim(_limit_is(expr, -1), [step], [sp.Eq(n, -1)], witness={n: -1}),
        "is not shown to hold for every n > N",
    )


def test_a_limit_defined_on_a_tail_is_still_decided() -> None:
    """The tail is enough: 1/(n − 1) is undefined at n = 1, and n/(n − 1) → 1."""
    step = Limit(n / (n - 1), n, sp.oo, 1, "a pole at 1, then defined")
    assert claim(_limit_is(n / (n - 1), 1), [step]).check().verified


def test_the_bridge_refuses_a_term_whose_conditions_it_was_not_shown() -> None:
    """The one mechanism: a Bridge builds nothing whose domain conditions its prover has
    not proved; a prover that proves nothing refuses √x, and so would a future rule that
    forgot to prove them."""
    from softmax_dispersion.theory import terms
    from softmax_dispersion.theory._bridge import Bridge, refuse
    from softmax_dispersion.theory.terms import TermError

    root_of_x = terms.power(terms.sym("x"), terms.num(1, 2))
    with pytest.raises(TermError, match="the base x of sqrt"):
        Bridge(refuse).expr(terms.power(root_of_x, 2))
    assert Bridge(refuse).expr(terms.add(terms.sym("x"), terms.ONE)) is not None  # no condition


# --------------------------------------------------------------------------------------
# 24. A closed binder (a derivative at a point) is an opaque argument: the denominator,
#     logarithm or root around it has its side condition like any other.


def test_a_derivative_divided_by_itself_needs_it_non_zero() -> None:
    """The red team's reproducer: D = d/dx x² at 0 = 0, then D·D⁻¹ = 1."""
    goal = sp.Lt(y, 0, evaluate=False)
    proof = [
        Differentiate(x**2, x, "the slope of x² at 0", point=0),
        Identity(sp.Mul(_D, sp.Pow(_D, -1), evaluate=False), 1, "D/D = 1"),
        Implied(goal, "D = 0 and D/D = 1 contradict"),
    ]
    rejected(
        claim(goal, proof, witness={y: 0}),
        "the denominator Subs(Derivative(x**2, x), x, 0) != 0",
    )


def test_every_function_does_not_have_a_non_zero_derivative() -> None:
    """The red team's second form: f'/f' = 1 alone gave f' != 0 for every f."""
    t = sp.Symbol("t", real=True)
    derivative = sp.Derivative(sp.Function("f", real=True)(t), t)
    goal = sp.Ne(derivative, 0)
    proof = [
        Identity(sp.Mul(derivative, sp.Pow(derivative, -1), evaluate=False), 1, "f'/f' = 1"),
        Implied(goal, "0 · (1/0) is 0, not 1"),
    ]
    rejected(claim(goal, proof), "the denominator Derivative(f(t), t) != 0")


def test_the_logarithm_of_a_derivative_needs_it_positive() -> None:
    """The red team's variant: exp(log D) = D made D > 0 while D = 0."""
    goal = sp.Lt(y, 0, evaluate=False)
    proof = [
        Differentiate(x**2, x, "D = 0", point=0),
        Identity(sp.exp(sp.log(_D), evaluate=False), _D, "log(D) unchecked"),
        Implied(goal, ""),
    ]
    rejected(
        claim(goal, proof, witness={y: 0}),
        "the argument of log(Subs(Derivative(x**2, x), x, 0)) > 0",
    )


def test_the_square_root_of_a_negative_derivative_is_refused() -> None:
    """New form: D = d/dx (−x) at 0 = −1, and (√D)² = D, which sympy builds as D = D;
    then (√D)² >= 0 would give −1 >= 0."""
    slope = sp.Subs(sp.Derivative(-x, x), x, 0)
    square = sp.Pow(sp.sqrt(slope), 2, evaluate=False)
    proof = [
        Differentiate(-x, x, "D = −1", point=0),
        Identity(square, slope, "(√D)² = D"),
        Implied(FALSE, "(√D)² >= 0 > −1 = D"),
    ]
    rejected(claim(FALSE, proof), "the base Subs(Derivative(-x, x), x, 0) of sqrt")


def test_a_condition_on_a_loose_bound_variable_stays_the_binders() -> None:
    """Only an operation on a *loose* bound variable is skipped: d/dx log x at a point
    leaves 1/x to the rule that made the derivative; 1/a inside it is read."""
    from softmax_dispersion.theory import terms

    body = terms.add(terms.log(terms.sym("x")), terms.power(terms.sym("a"), -1))
    slope = terms.derivative_at(body, "x", terms.num(2))
    names = [name for _, name in terms.domain_conditions(slope)]
    assert names == ["the denominator a != 0"]
    assert [name for _, name in terms.domain_conditions(terms.log(slope))] == [
        f"the argument of log({terms.show(slope)}) > 0",
        "the denominator a != 0",
    ]


# --------------------------------------------------------------------------------------
# 25. What a decision costs is bounded by the size of what it is shown.


def test_a_root_of_degree_1024_is_refused_at_once() -> None:
    """The red team's reproducer: one RealRoot of (x + 7/3)^1024 + x cost 42 s."""
    root = RealRoot(_r, (x + sp.Rational(7, 3)) ** 1024 + x, x, -2, 0, "degree 1024")
    goal = sp.Lt(_r, 0, evaluate=False)
    start = time.perf_counter()
    rejected(
        claim(goal, [Implied(goal, "")], definitions=(root,)),
        "degree 1024 is beyond 8, the largest whose roots the kernel counts",
    )
    assert time.perf_counter() - start < 5


def test_a_root_of_huge_coefficients_is_refused_at_once() -> None:
    """New form: degree 8, but coefficients of thousands of bits, over which exact root
    counting took about a second before round 4, and grows with the bits (the kernel's
    own reading of the coefficients takes milliseconds, and refuses them)."""
    big = [sp.Rational(3**1500 + i, 2**2000 + 3 * i) for i in range(8)]
    factor = sum(c * x**i for i, c in enumerate(big)) + x**7
    root = RealRoot(_r, (x + 1) * factor, x, -2, 0, "degree 8, huge coefficients")
    goal = sp.Lt(_r, 0, evaluate=False)
    start = time.perf_counter()
    rejected(
        claim(goal, [Implied(goal, "")], definitions=(root,)),
        "beyond 256, the largest whose roots the kernel counts",
    )
    assert time.perf_counter() - start < 5


_SUM4 = x + y + a + b
_SUM8 = x + y + a + b + c + j + k + n


@pytest.mark.parametrize(
    ("lhs", "rhs", "fragment"),
    [
        (_SUM4**40, _SUM4**38 * ((x + y) ** 2 + 2 * (x + y) * (a + b) + (a + b) ** 2), "degree 40"),
        (
            (sp.exp(x) + 1) ** 1000,
            (sp.exp(x) + 1) ** 998 * (sp.exp(2 * x) + 2 * sp.exp(x) + 1),
            "degree 1000",
        ),
        (
            _SUM8**12,
            _SUM8**10 * (_SUM4**2 + 2 * _SUM4 * (c + j + k + n) + (c + j + k + n) ** 2),
            "monomials",
        ),
    ],
    ids=["a power of a sum", "a power of an exponential", "many atoms"],
)
def test_an_identity_that_would_expand_into_too_much_is_refused_at_once(
    lhs: sp.Expr, rhs: sp.Expr, fragment: str
) -> None:
    """New forms: true identities of a few nodes each, whose expansion ``cancel`` would
    have to build (tens of thousands of monomials, or a degree of 1000): refused by their
    size, at once, naming the limit."""
    step = Identity(lhs, rhs, "expand and compare")
    start = time.perf_counter()
    text = rejected(claim(sp.Eq(lhs, rhs, evaluate=False), [step]), fragment)
    assert "too costly to decide" in text
    assert time.perf_counter() - start < 5


# --------------------------------------------------------------------------------------
# 26. The printer is a faithful function of the term: a bound variable's printed name is
#     never a name free in its body, so two terms that mean different things never print
#     alike (a certificate's author chooses the hints: see tests/cli/test_recheck.py).

_NAMES = ("x", "t")


def _reals(depth: int) -> st.SearchStrategy[Term]:
    leaf = st.one_of(
        st.sampled_from(_NAMES).map(terms.sym),
        st.sampled_from([terms.num(0), terms.num(1), terms.num(-1), terms.num(1, 2)]),
    )
    if depth == 0:
        return leaf
    sub = _reals(depth - 1)
    exponents = st.one_of(
        st.sampled_from([terms.num(k) for k in (-2, -1, 2)] + [terms.num(1, 2), terms.num(-1, 2)]),
        sub,
    )
    return st.one_of(
        leaf,
        st.lists(sub, min_size=2, max_size=3).map(lambda kids: terms.make("add", kids)),
        st.lists(sub, min_size=2, max_size=3).map(lambda kids: terms.make("mul", kids)),
        st.tuples(sub, exponents).map(lambda pair: terms.make("pow", pair)),
        sub.map(terms.log),
        sub.map(terms.exp),
        # a derivative at a point, its hint one of the names (free in the body or not)
        st.tuples(sub, st.sampled_from(_NAMES), st.sampled_from(_NAMES), sub).map(
            lambda a: terms.make("der", (a[2], terms.abstract(a[0], a[1]), a[3]))
        ),
        # a derivative at the point named like its variable: the form that once collided
        st.tuples(sub, st.sampled_from(_NAMES), st.sampled_from(_NAMES)).map(
            lambda a: terms.make("der", (a[2], terms.abstract(a[0], a[1]), terms.sym(a[1])))
        ),
    )


def _formulas() -> st.SearchStrategy[Term]:
    """Relations of real terms, and limits (as the side of an equation)."""
    return st.one_of(
        st.tuples(st.sampled_from(["eq", "lt", "le"]), _reals(2), _reals(2)).map(
            lambda a: terms.rel(*a)
        ),
        st.tuples(_reals(2), st.sampled_from(_NAMES), st.sampled_from(_NAMES), _reals(1)).map(
            lambda a: terms.rel(
                "eq", terms.make("lim", (a[2], terms.abstract(a[0], a[1]), terms.OO, "-")), a[3]
            )
        ),
    )


def _prints_faithfully(batch: Sequence[Term]) -> None:
    """Terms that print alike are one term, up to the laws of the canonical form (which
    erases the bound variables' hints)."""
    by_text: dict[str, Term] = {}
    for term in batch:
        text = terms.show(term)
        other = by_text.setdefault(text, terms.canonical(term))
        assert other == terms.canonical(term), f"two terms print as {text}"


def _relatives(term: Term) -> list[Term]:
    """``term`` with one binder changed the ways a file's author could change it: each
    other hint, and its variable opened as each name and bound again as each name (which
    captures a free name, or frees the bound one): the terms that a careless printer
    would print alike."""
    found = [term]
    for node in terms.walk(term):
        if node[0] not in ("lim", "der"):
            continue
        payload = list(node[2:])
        for hint in _NAMES:
            found.append(terms.replace(term, node, terms.make(node[0], [hint, *payload[1:]])))
        for opened in _NAMES:
            body = terms.instantiate(node[3], terms.sym(opened))
            for bound in _NAMES:
                rebound = terms.make(
                    node[0], [payload[0], terms.abstract(body, bound), *payload[2:]]
                )
                found.append(terms.replace(term, node, rebound))
    return found


@settings(max_examples=300)
@given(st.lists(st.one_of(_reals(3), _formulas()), min_size=1, max_size=8))
def test_distinct_terms_print_distinctly(batch: list[Term]) -> None:
    """Over terms with binders whose hints collide with free names, and their relatives
    (:func:`_relatives`): terms that print alike are one term."""
    _prints_faithfully([relative for term in batch for relative in _relatives(term)])


def test_the_red_teams_derivative_prints_what_it_is() -> None:
    """d/dx (x·t) at x = t, with the hint t: once printed Derivative(t*t, t), d/dt t²."""
    t = terms.sym("t")
    edited = terms.make("der", ("t", terms.mul(terms.make("bound", (0,)), t), t))
    squared = terms.make(
        "der", ("t", terms.mul(terms.make("bound", (0,)), terms.make("bound", (0,))), t)
    )
    assert terms.show(edited) == "Subs(Derivative(t1*t, t1), t1, t)"
    assert terms.show(squared) == "Derivative(t*t, t)"
    _prints_faithfully([edited, squared])


def test_the_faithfulness_check_sees_the_old_printer_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted bug: the old hint rule (a derivative at the point named like its hint
    keeps the hint, even when the body has that name free) makes the check fail."""

    def old_hint(binder: Term, names: tuple[str, ...]) -> str:
        taken = set(terms.free_names(binder[3])) | set(names)
        point = binder[4]
        if binder[0] == "der" and point[0] == "sym" and point[2] == binder[2]:
            taken.discard(binder[2])
        return terms.fresh_name(binder[2], taken)

    monkeypatch.setattr(terms, "_display_hint", old_hint)
    t = terms.sym("t")
    edited = terms.make("der", ("t", terms.mul(terms.make("bound", (0,)), t), t))
    squared = terms.make(
        "der", ("t", terms.mul(terms.make("bound", (0,)), terms.make("bound", (0,))), t)
    )
    with pytest.raises(AssertionError, match="two terms print as"):
        _prints_faithfully([edited, squared])


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("pow(pow(x, 2), -1)", "pow(x, -2)"),
        ("mul(x, pow(mul(y, t), -1))", "mul(x, pow(y, -1), pow(t, -1))"),
        ("pow(pow(x, 1/2), -1)", "pow(x, -1/2)"),
    ],
)
def test_reciprocals_of_different_terms_print_apart(one: str, other: str) -> None:
    """New forms of the same class: (x²)⁻¹ and (x⁻¹)² are different numbers at x = 0
    (an unspecified 1/0, or its square, which is >= 0), and so are (yt)⁻¹ and y⁻¹t⁻¹;
    once both printed 1/x**2 and x/(t*y)."""
    x_, y_, t_ = terms.sym("x"), terms.sym("y"), terms.sym("t")
    built = {
        "pow(pow(x, 2), -1)": terms.power(terms.power(x_, 2), -1),
        "pow(x, -2)": terms.power(x_, -2),
        "mul(x, pow(mul(y, t), -1))": terms.mul(x_, terms.power(terms.mul(y_, t_), -1)),
        "mul(x, pow(y, -1), pow(t, -1))": terms.mul(x_, terms.power(y_, -1), terms.power(t_, -1)),
        "pow(pow(x, 1/2), -1)": terms.power(terms.power(x_, terms.num(1, 2)), -1),
        "pow(x, -1/2)": terms.power(x_, terms.num(-1, 2)),
    }
    assert terms.canonical(built[one]) != terms.canonical(built[other])
    assert terms.show(built[one]) != terms.show(built[other])


# --------------------------------------------------------------------------------------
# 27. The chain and product rules need each applied function differentiable; only a
#     derivative rule's conclusion shows that.  An equation about f'(x) (an assumption,
#     an implied fact, the tautology f' = f') does not: a derivative that does not exist
#     is an unspecified real, which may satisfy it.

_f = sp.Function("f", real=True)
_x, _s = sp.symbols("x s", real=True)
_fx = _f(_x)
_df = sp.Derivative(_fx, _x)


def _chain_rule_claim(first: Step | None, assumptions: Sequence[sp.Basic] = ()) -> Claim:
    """f(x) = 1 and (f²)'(x) = 0 imply f'(x) = 0: false (f a step from -1 to 1 at 0)."""
    goal = sp.Implies(sp.And(sp.Eq(_fx, 1), sp.Eq(sp.Derivative(_fx**2, _x), 0)), sp.Eq(_df, 0))
    steps: list[Step] = [] if first is None else [first]
    steps += [Differentiate(_fx**2, _x, "(f²)' = 2 f f'"), Implied(goal, "divide by 2 f(x)")]
    return Claim(
        id="R5F1",
        title="f(x) = 1 and (f²)'(x) = 0 imply f'(x) = 0",
        statement=goal,
        assumptions=list(assumptions),
        source="red team",
        proof=lambda: steps,
        witness={_x: 0, _f: sp.Lambda(_s, _s)},
    )


@pytest.mark.parametrize(
    ("first", "assumptions"),
    [
        (Implied(sp.Eq(_df, _df, evaluate=False), "f' = f'"), []),
        (None, [sp.Eq(_df, 0)]),  # assumed, but f' may be an unspecified real equal to 0
        (Implied(sp.Eq(_df, 0), "f' = 0 from (f')² = 0"), [sp.Eq(_df**2, 0)]),
        (Implied(sp.Eq(_df, _df + 0 * _fx, evaluate=False), "f' in a larger term"), []),
    ],
    ids=["tautology", "assumed", "implied", "inside-a-term"],
)
def test_the_chain_rule_needs_a_derivative_shown_to_exist(
    first: Step | None, assumptions: list[sp.Basic]
) -> None:
    result = _chain_rule_claim(first, assumptions).check()
    assert not result.verified
    step = next(s for s in result.steps if s.rule == "Differentiate")
    assert not step.verified and "not shown to exist" in step.detail, step.detail


def test_a_derivative_rules_conclusion_licenses_the_chain_rule() -> None:
    """The chain rule goes through once SumDerivative has shown A0 differentiable, and
    the same step is refused when A0's derivative is only assumed."""
    t, y = sp.symbols("t y", real=True)
    a0, a1 = (sp.Function(name, real=True)(t) for name in ("A0", "A1"))
    ys = Family("ys", (y,), 2)  # a count apart from t: the assumption below ties nothing
    total, slopes = SumOver(a0, sp.exp(t * y), ys), SumOver(a1, y * sp.exp(t * y), ys)
    chain = Differentiate(a0**2, t, "chain rule", value=2 * a0 * a1)
    shown = [SumDerivative(total, t, [(1, slopes)], "A0' = A1"), chain]
    assumed = [chain]

    def claim(steps: list[Step], assumptions: list[sp.Basic]) -> Claim:
        return Claim(
            id="R5F1-ok",
            title="(A0²)' = 2 A0 A1",
            statement=chain.conclusion,
            assumptions=list(assumptions),
            source="derived",
            proof=lambda: steps,
            definitions=(total, slopes),
            witness={t: 0, y: 0},
        )

    assert claim(shown, []).check().verified
    refused = claim(assumed, [sp.Eq(sp.Derivative(a0, t), a1)]).check()
    assert not refused.verified and "not shown to exist" in refused.steps[0].detail


_ROOT_SQUARED = sp.Pow(sp.sqrt(_z), 2, evaluate=False)


@pytest.mark.parametrize(
    ("assumptions", "definitions", "statement"),
    [
        # sqrt(z)**2 = z is true of every z, read with sqrt(-1) = i; z3 read it as r**2 = z
        # for some real r, which gives z >= 0
        ([sp.Eq(_ROOT_SQUARED, _z, evaluate=False)], (), sp.Ge(_z, 0)),
        ([sp.Eq(_y**2, _z)], (Let(_y, sp.sqrt(_z)),), sp.Ge(_z, 0)),
        # exp(log(z)) = z, after z >= -1: true of every z != 0 (log(-1) = i*pi)
        ([sp.Ge(_z, -1), sp.Eq(sp.exp(sp.log(_z), evaluate=False), _z)], (), sp.Gt(_z, 0)),
        ([sp.Eq(S**2, _z)], (SumOver(S, sp.sqrt(_z) + x, _ONE_ZERO),), sp.Ge(_z, 0)),
    ],
)
def test_an_assumption_true_only_of_an_unspecified_value_is_refused(
    assumptions: list[sp.Basic], definitions: tuple[Any, ...], statement: sp.Basic
) -> None:
    """Round 17's open gap: assumptions were not held to the rule on partial operations,
    so one true only of an unspecified value (sqrt(z)**2 = z at z = -1, read by z3 as
    r**2 = z) gave the kernel z >= 0, which a reader, taking sqrt(-1) = i, never assumed.
    Each assumption, with the definitions it mentions, must be defined where the
    assumptions before it hold; the steps, which use it, cannot show that."""
    witness = {_z: 4, x: 0}
    rejected(
        claim(
            statement,
            [Implied(statement, "")],
            assumptions,
            definitions=definitions,
            witness=witness,
        ),
        "is not defined where the assumptions before",
    )


def test_a_step_that_uses_the_assumption_cannot_show_it_defined() -> None:
    """The leading steps may show an assumption defined only from the assumptions before
    it: a first step that needs the assumption itself (z >= 0 from sqrt(z)**2 = z) fails
    there, and shows nothing."""
    hypothesis = sp.Eq(_ROOT_SQUARED, _z, evaluate=False)
    steps = [Implied(sp.Ge(_z, 0), "from the assumption"), Implied(sp.Ge(_z, 0), "")]
    rejected(
        claim(sp.Ge(_z, 0), steps, [hypothesis], witness={_z: 4}),
        "is not defined where the assumptions before",
    )


@pytest.mark.parametrize(
    ("assumptions", "verified"),
    [
        (
            [sp.Ge(_z, 0), sp.Eq(_ROOT_SQUARED, _z, evaluate=False)],
            True,
        ),  # defined: z >= 0 comes first
        ([sp.Eq(_ROOT_SQUARED, _z, evaluate=False), sp.Ge(_z, 0)], False),  # read left to right
        ([sp.Ge(n, 2), sp.Gt(sp.log(S), 0)], True),  # S, a sum of n - 1 exponentials, > 0
        ([sp.Ge(n, 1), sp.Gt(sp.log(S), 0)], False),  # n = 1: S is the empty sum, 0
    ],
)
def test_an_assumption_is_defined_by_those_before_it(
    assumptions: list[sp.Basic], verified: bool
) -> None:
    """Consistency of the rule with what it must accept: an assumption defined by the
    assumptions before it (and by the sign of a sum of positive terms, which the kernel
    shows itself) passes; the same assumptions in the other order, or a count that may
    be 0, do not."""
    family = Family("others", (e_j,), n - 1, (), "the others", member=None)
    total = SumOver(S, sp.exp(e_j), family)
    statement = sp.Ge(_z, 0) if _z in assumptions[0].free_symbols else sp.Gt(n, 0)
    result = claim(
        statement,
        [Implied(statement, "")],
        assumptions,
        definitions=(total,),
        witness={_z: 4, n: 3, e_j: 0},
    ).check()
    assert result.verified is verified, result.problem
    assert verified or "is not defined where the assumptions before" in result.problem


def test_a_leading_step_may_show_an_assumption_defined() -> None:
    """log(log(2/eta)) needs log(2/eta) > 0, which z3 cannot see from 0 < eta < 1 (log
    is opaque to it) but a monotonicity step shows from those two assumptions alone, as
    T13's radius is shown defined. Without that step the claim is refused."""
    level = sp.log(2 / _z)
    hypotheses = [sp.Gt(_z, 0), sp.Lt(_z, 1), sp.Ge(sp.log(level), -100)]
    shown = [
        LogMonotone(sp.Integer(1), 2 / _z, "2/z > 1", strict=True),
        Implied(sp.Gt(level, 0), "log(2/z) > 0"),
    ]
    goal = sp.Gt(level, 0)
    result = claim(goal, shown, hypotheses, witness={_z: sp.Rational(1, 2)}).check()
    assert result.verified, result.problem
    rejected(
        claim(goal, [Implied(goal, "")], hypotheses, witness={_z: sp.Rational(1, 2)}),
        "is not defined where the assumptions before",
    )


_t = sp.Symbol("t", real=True)
_ROOT_OF_T = sp.exp(sp.log(_t) / 2, evaluate=False)  # sqrt(t), as sympy does not rewrite it
_SLOPE_AT_A = sp.Subs(sp.Derivative(_ROOT_OF_T, _t), _t, _z)
_ONE_HALF = Family("F", (x,), 1, (sp.Eq(x, _SLOPE_AT_A),), "the slope", member=(_SLOPE_AT_A,))
_ONE_NOUGHT = Family("G", (x,), 1, (sp.Eq(x, 0),), "0", member=(0,))


@pytest.mark.parametrize(
    ("definition", "symbol", "where"),
    [
        (Let(_y, _SLOPE_AT_A), _y, "the definition of y"),
        (Let(_y, sp.Derivative(_ROOT_OF_T.subs(_t, _z), _z)), _y, "the definition of y"),
        (SumOver(S, x, _ONE_HALF), S, "the family of S"),
        (SumOver(S, x + _SLOPE_AT_A, _ONE_NOUGHT), S, "the term of S"),
    ],
)
def test_a_derivative_in_a_definition_must_be_shown_to_exist(
    definition: Any, symbol: sp.Symbol, where: str
) -> None:
    """Red team 18: round 17's derivative rule held the statement only; with the
    derivative of sqrt(t) (written exp(log(t)/2)) at z moved into a Let, a family's domain
    or a sum's term, ``z = -1 -> y**2 != -1/4`` verified and rechecked (a reader computes
    (-i/2)**2 = -1/4). Every derivative in what a defined symbol stands for must be shown
    to exist, as in the statement."""
    statement = sp.Implies(sp.Eq(_z, -1), sp.Ne(symbol**2, sp.Rational(-1, 4), evaluate=False))
    witness = {_z: 1, x: sp.Rational(1, 2)} if where == "the family of S" else {_z: 1, x: 0}
    rejected(
        claim(statement, [Implied(statement, "")], definitions=(definition,), witness=witness),
        f"{where} holds the derivative",
        "shows to exist",
    )


def test_a_derivative_in_an_assumption_must_be_shown_to_exist_before_it() -> None:
    """An assumption is held to the derivative rule too, by the leading steps from the
    assumptions before it: ``z = 1 or (d/dt sqrt(t) at z)**2 = -1/4`` gave z3 z = 1 (a
    real's square is never negative), while a reader sees z = -1 satisfy it."""
    hypothesis = sp.Or(sp.Eq(_z, 1), sp.Eq(_SLOPE_AT_A**2, sp.Rational(-1, 4), evaluate=False))
    goal = sp.Eq(_z, 1)
    rejected(
        claim(goal, [Implied(goal, "")], [hypothesis], witness={_z: 1}),
        "an assumption holds the derivative",
    )


def test_an_assumption_reading_a_function_valued_sum_holds_its_term_to_the_rule() -> None:
    """A function-valued sum is named by its function, A(-1), which is no free symbol:
    the definitions an assumption mentions include the sums it applies. With A(t) = Σ (2
    sqrt(t) + x) over one member x = 0, ``z = 1 or A(-1)**2 = -4`` gave z3 z = 1, while a
    reader reads A(-1) = 2i and sees z free."""
    total = SumOver(sp.Function("A", real=True)(_t), 2 * sp.sqrt(_t) + x, _ONE_NOUGHT)
    at_minus_one = sp.Function("A", real=True)(-1)
    hypothesis = sp.Or(sp.Eq(_z, 1), sp.Eq(at_minus_one**2, -4, evaluate=False))
    goal = sp.Eq(_z, 1)
    rejected(
        claim(goal, [Implied(goal, "")], [hypothesis], definitions=(total,), witness={_z: 1, x: 0}),
        "the term of A is not defined where the assumptions before",
    )


_BETA, _THETA, _GAMMA = sp.symbols("beta theta gamma", real=True)


@pytest.mark.parametrize(
    ("assumptions", "definitions", "step"),
    [
        # beta = 1/theta: d(beta theta)/dtheta is 0 to a reader, not beta
        (
            [sp.Gt(_THETA, 0), sp.Eq(_BETA, 1 / _THETA)],
            (),
            Differentiate(_BETA * _THETA, _THETA, "", constants=[_BETA]),
        ),
        # the same through a chain: beta = gamma, gamma * theta = 1
        (
            [sp.Gt(_THETA, 0), sp.Eq(_BETA, _GAMMA), sp.Eq(_GAMMA * _THETA, 1)],
            (),
            Differentiate(_BETA * _THETA, _THETA, "", constants=[_BETA]),
        ),
        # through a definition the assumption mentions: y := beta*theta, y = 1
        (
            [sp.Gt(_THETA, 0), sp.Eq(_y, 1)],
            (Let(_y, _BETA * _THETA),),
            Differentiate(_BETA, _THETA, "", constants=[_BETA]),
        ),
        # a limit in n holding y fixed, with y = n assumed
        ([sp.Gt(n, 0), sp.Eq(_y, n), sp.Gt(_y, 0)], (), Limit(_y / n, n, sp.oo, 0, "")),
    ],
)
def test_a_binder_holds_nothing_fixed_that_an_assumption_ties_to_its_variable(
    assumptions: list[sp.Basic], definitions: tuple[Any, ...], step: Step
) -> None:
    """Red team 19: with beta = 1/theta assumed and beta declared constant, d(beta
    theta)/dtheta = beta verified and rechecked (a reader computes 0); the limit of y/n
    with y = n assumed was read as 0 (a reader gets 1). Only defined symbols were held to
    the binder rule; a symbol the assumptions tie to the variable, directly or through a
    chain or a definition, is now too."""
    statement = step.conclusion
    witness = {_THETA: 1, _BETA: 1, _GAMMA: 1, n: 1}
    if definitions:
        witness.pop(_y, None)
    else:
        witness[_y] = 1
    rejected(
        claim(statement, [step], assumptions, definitions=definitions, witness=witness),
        "tie",
        "cannot hold",
    )


def test_a_binder_holds_fixed_what_the_assumptions_constrain_apart() -> None:
    """Consistency of the rule with what it must accept: theta > 0 and beta > 0 constrain
    the two apart, and a definition alone ties nothing (S := beta*theta), so d(beta
    theta)/dtheta = beta holds as a reader reads it and verifies."""
    step = Differentiate(_BETA * _THETA, _THETA, "", constants=[_BETA])
    result = claim(
        step.conclusion,
        [step],
        [sp.Gt(_THETA, 0), sp.Gt(_BETA, 0)],
        definitions=(Let(_y, _BETA * _THETA),),
        witness={_THETA: 1, _BETA: 1},
    ).check()
    assert result.verified, result.problem


def test_a_binder_in_a_defined_symbol_is_refused() -> None:
    """Red team 19: with y := theta**2, d theta / d y = 0 verified (theta held fixed); a
    reader computes 1/(2 theta). A derivative or limit may not bind a defined symbol."""
    step = Differentiate(_THETA, _y, "", constants=[_THETA])
    rejected(
        claim(
            sp.Eq(sp.Derivative(_THETA, _y), 0),
            [step],
            [sp.Gt(_THETA, 0)],
            definitions=(Let(_y, _THETA**2),),
            witness={_THETA: 1},
        ),
        "y is defined: a derivative in y would hold fixed what it is defined from",
    )


def test_a_hypothesis_ties_symbols_as_an_assumption_does() -> None:
    """Under ``Assume(beta = 1/theta, ...)`` the hypothesis ties beta to theta as an
    assumption would: ``beta = 1/theta -> d(beta theta)/dtheta = beta`` is false as read."""
    hypothesis = sp.Eq(_BETA, 1 / _THETA)
    inner = Differentiate(_BETA * _THETA, _THETA, "", constants=[_BETA])
    step = Assume(hypothesis, [inner], "suppose beta = 1/theta")
    rejected(
        claim(step.conclusion, [step], [sp.Gt(_THETA, 0)], witness={_THETA: 1, _BETA: 1}),
        "tie beta to theta",
    )


_C, s_ = sp.symbols("c s", real=True)
_EQUAL_TO_C = Family("xs", (x,), 1, (sp.Eq(x, _C),), "one member, equal to c", member=(_C,))


def _tied_through_a_definition() -> list[tuple[Any, ...]]:
    """Red team 20's claims: a defined symbol built from c, with c = theta (or n)."""
    d_let = sp.Eq(sp.Derivative(_y * _THETA, _THETA), _THETA)
    sum_c = SumOver(S, x, _EQUAL_TO_C)
    return [
        (  # y := c held fixed under d/dtheta: a reader gets 2 theta
            d_let,
            [Differentiate(_y * _THETA, _THETA, "", constants=[_y]), Implied(d_let, "")],
            [sp.Gt(_THETA, 0), sp.Eq(_C, _THETA)],
            (Let(_y, _C),),
        ),
        (  # the same under a limit in n: a reader gets 1
            sp.Eq(sp.Limit(_y / n, n, sp.oo), 0),
            [Limit(_y / n, n, sp.oo, 0, "")],
            [sp.Gt(_C, 0), sp.Eq(_C, n)],
            (Let(_y, _C),),
        ),
        (  # S, a sum over one member equal to c, held fixed under a limit in n
            sp.Eq(sp.Limit(S / n, n, sp.oo), 0),
            [SumOfTerms(sum_c, _C, _C, ""), Limit(S / n, n, sp.oo, 0, "")],
            [sp.Gt(_C, 0), sp.Eq(_C, n)],
            (sum_c,),
        ),
    ]


@pytest.mark.parametrize(
    ("statement", "steps", "assumptions", "definitions"), _tied_through_a_definition()
)
def test_a_defined_symbol_carries_the_ties_of_what_it_is_defined_from(
    statement: sp.Basic,
    steps: list[Step],
    assumptions: list[sp.Basic],
    definitions: tuple[Any, ...],
) -> None:
    """Red team 20: a defined symbol built from c (a Let, a family's domain) was held
    fixed under a binder in theta with c = theta assumed. What a binder holds includes
    what its defined symbols are defined from."""
    witness = {_THETA: 1, _C: 1, n: 1, x: 1}
    rejected(
        claim(statement, steps, assumptions, definitions=definitions, witness=witness),
        "tie c to",
        "fixed",
    )


@pytest.mark.parametrize(
    "supposed",
    [
        lambda d: sp.Implies(sp.Eq(_BETA * _THETA, 1), sp.Eq(d, 1 / _THETA)),
        lambda d: sp.Or(sp.Ne(_BETA * _THETA, 1), sp.Eq(d, 1 / _THETA)),
        lambda d: sp.Implies(sp.Eq(_BETA, 1 / _THETA), sp.Eq(d, _BETA)),
    ],
)
def test_what_the_statement_supposes_ties_as_an_assumption_does(supposed: Any) -> None:
    """Red team 20: ``beta*theta = 1 -> d(beta*theta)/dtheta = 1/theta`` verified when a
    top-level derivative step was put under the hypothesis by ``Implied``, while the same
    built with ``Assume`` was refused. What the statement supposes (an implication's
    hypothesis, a disjunction's other parts) ties its names as an assumption does."""
    derivative = sp.Derivative(_BETA * _THETA, _THETA)
    statement = supposed(derivative)
    steps = [Differentiate(_BETA * _THETA, _THETA, "", constants=[_BETA]), Implied(statement, "")]
    rejected(
        claim(statement, steps, [sp.Gt(_THETA, 0)], witness={_THETA: 1, _BETA: 1}),
        "what the statement supposes tie beta to theta",
    )


def test_what_the_statement_asserts_ties_nothing() -> None:
    """Consistency with T10: a statement that asserts a relation of n and s beside a limit
    in n holding s fixed ties nothing; only what it supposes does."""
    limit = Limit(s_ / n, n, sp.oo, 0, "")
    statement = sp.And(sp.Gt(s_ * n, 0), limit.conclusion)
    steps = [Implied(sp.Gt(s_ * n, 0), ""), limit, Implied(statement, "")]
    result = claim(statement, steps, [sp.Gt(n, 0), sp.Gt(s_, 0)], witness={n: 1, s_: 1}).check()
    assert result.verified, result.problem


def test_a_constant_declared_twice_is_refused() -> None:
    """Red team 20 (low): a constant named twice changed the hash and nothing read."""
    step = Differentiate(_BETA * _THETA, _THETA, "", constants=[_BETA, _BETA])
    result = step.check([sp.Gt(_THETA, 0)])
    assert not result.verified and "a constant is declared twice" in result.detail
