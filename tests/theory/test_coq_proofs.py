"""The Coq proofs: kernel-checked on the printed statements, and refused on false ones.

The tests that compile need ``coqc`` with Coquelicot and Interval (skipped, not failed,
without them; marked slow).  One folder is compiled per session; the false siblings and
planted bugs recompile only the files they change.  That the exported project builds on
its own with ``coq_makefile``/``make`` is shown by CI (``.ci/run``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest
import sympy as sp

from softmax_dispersion.theory import all_claims, claim_by_id
from softmax_dispersion.theory.coq_proofs import (
    COQ_INSTALL,
    CoqVerdict,
    disallowed,
    export_project,
    find_coqc,
    forbidden_commands,
    formalised_ids,
    kernel_check,
    proof_scope,
    proof_sources,
)
from softmax_dispersion.theory.kernel import Claim, Implied

from .conftest import built_once

# One worker compiles the project once: built_once shares it (the group keeps these tests
# on one worker where xdist can, under CI's --dist loadgroup).
pytestmark = pytest.mark.xdist_group("coq_proofs")

needs_coq = pytest.mark.skipif(find_coqc() is None, reason=f"coqc not found ({COQ_INSTALL})")
CORE = ("T1", "T2", "T3", "T4", "T5", "T6", "T7", "T8", "T9", "T10", "T11", "T13")
NEW = ("T7", "T8", "T9", "T13")
UNFORMALISED = [c.id for c in all_claims() if c.id not in formalised_ids()]


@pytest.fixture(scope="session")
def _compiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, CoqVerdict]]:
    return built_once(
        tmp_path_factory,
        "coq",
        lambda folder: {v.claim_id: v for v in kernel_check(directory=folder)},
    )


@pytest.fixture(scope="session")
def coq_folder(_compiled: tuple[Path, dict[str, CoqVerdict]]) -> Path:
    return _compiled[0]


@pytest.fixture(scope="session")
def verdicts(_compiled: tuple[Path, dict[str, CoqVerdict]]) -> dict[str, CoqVerdict]:
    return _compiled[1]


# -- without Coq ---------------------------------------------------------------------


def test_without_coqc_the_formalised_claims_say_coqc_not_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", "")
    assert find_coqc() is None
    results = {v.claim_id: v for v in kernel_check()}
    for claim_id in CORE:
        assert results[claim_id].status == "coqc not found"
        assert COQ_INSTALL in results[claim_id].detail
    for claim_id in UNFORMALISED:
        assert results[claim_id].status == "not formalised"


def test_export_writes_a_self_contained_project(tmp_path: Path) -> None:
    written = {p.name for p in export_project(tmp_path)}
    assert {"Statements.v", "_CoqProject", "Makefile", "Print_Assumptions.v"} <= written
    assert {f"{i}.v" for i in CORE} <= written
    project = (tmp_path / "_CoqProject").read_text()
    assert project.startswith("-Q . SoftmaxDispersion\n-arg -w\n-arg -ambiguous-paths\n")
    # Dependencies first: T4 needs T1, every proof needs the statements.
    listed = project.split()
    assert listed.index("Statements.v") < listed.index("T1.v") < listed.index("T4.v")
    for claim_id in CORE:
        assert f"Definition {claim_id}_statement : Prop" in (tmp_path / "Statements.v").read_text()
        assert (
            f"Theorem {claim_id} : {claim_id}_statement."
            in (tmp_path / f"{claim_id}.v").read_text()
        )


# -- a claim whose statement has its own printer (T12's Flocq theorem) ------------------

_HELPER = """From Coq Require Import Reals.
Open Scope R_scope.
Definition helper (x : R) : R := x + 0.
"""
_T99 = """(* T99: a test of the statement hook.
   Covers: helper x = x. Leaves out: nothing. *)
From Coq Require Import Reals.
From SoftmaxDispersion Require Import Statements Helper.
Open Scope R_scope.
Theorem T99 : T99_statement.
Proof. unfold T99_statement, helper. intros x. ring. Qed.
"""


def _hooked(monkeypatch: pytest.MonkeyPatch) -> tuple[Claim, dict[str, str]]:
    """A claim T99 whose statement a hook prints, using a definition of its own module."""
    import softmax_dispersion.theory.coq as coq

    claim = Claim("T99", "a hooked claim", sp.true, [], "test", proof=lambda: [])
    hook = coq.StatementHook(
        print_statement=lambda c: (
            f"Definition {c.id}_statement : Prop := forall x : R, helper x = x."
        ),
        check_statement=lambda c, text: [] if "helper x = x" in text else ["not the helper"],
        requires=("From SoftmaxDispersion Require Import Helper.",),
    )
    monkeypatch.setitem(coq._HOOKS, "T99", hook)
    return claim, {"Helper.v": _HELPER, "T99.v": _T99}


def test_a_statement_hook_prints_its_claim_and_orders_its_module_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from softmax_dispersion.theory.coq_reader import statement_mismatches

    claim, sources = _hooked(monkeypatch)
    export_project(tmp_path, [claim], sources=sources)
    statements = (tmp_path / "Statements.v").read_text()
    assert "From SoftmaxDispersion Require Import Helper.\n" in statements
    assert "Definition T99_statement : Prop := forall x : R, helper x = x." in statements
    listed = (tmp_path / "_CoqProject").read_text().split()
    assert listed.index("Helper.v") < listed.index("Statements.v") < listed.index("T99.v")
    assert statement_mismatches(claim, "Definition T99_statement : Prop := True.") == [
        "not the helper"
    ]


@pytest.mark.slow
@needs_coq
def test_a_hooked_claim_is_kernel_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    claim, sources = _hooked(monkeypatch)
    [verdict] = kernel_check(["T99"], claims=[claim], directory=tmp_path, sources=sources)
    assert verdict.status == "kernel-checked", verdict.detail
    assert verdict.files == ("Helper.v", "Statements.v", "T99.v")
    assert verdict.covers == "helper x = x."


def test_shipped_proofs_use_no_forbidden_command() -> None:
    assert forbidden_commands(proof_sources()) == {}
    assert set(formalised_ids()) >= set(CORE)


@pytest.mark.parametrize("claim_id", CORE)
def test_every_proof_says_what_it_covers_and_leaves_out(claim_id: str) -> None:
    covers, leaves_out = proof_scope(claim_id)
    assert len(covers) > 40 and len(leaves_out) > 10, (covers, leaves_out)


def test_t13_says_its_probability_is_not_kernel_checked() -> None:
    _, leaves_out = proof_scope("T13")
    assert "probability" in leaves_out and "not kernel-checked" in leaves_out


def test_the_forbidden_command_scan_sees_through_nothing_but_comments() -> None:
    planted = {"A.v": "(* Admitted in a comment is fine *)\nLemma x : True. Admitted."}
    assert forbidden_commands(planted) == {"A.v": ["Admitted"]}
    assert forbidden_commands({"B.v": "(* Axiom (* nested *) *) Lemma x : True. Qed."}) == {}


def test_print_assumptions_output_is_read_per_theorem() -> None:
    from softmax_dispersion.theory.coq_proofs import _parse_assumptions

    output = "\n".join(
        [
            "BEGIN T1",
            "T1 : T1_statement",
            "     : T1_statement",
            "Axioms:",
            "ClassicalDedekindReals.sig_not_dec : forall P : Prop, {~ ~ P} + {~ P}",
            "ClassicalDedekindReals.sig_forall_dec",
            "  : forall P : nat -> Prop,",
            "    (forall n : nat, {P n} + {~ P n}) -> {n : nat | ~ P n} + {forall n, P n}",
            "BEGIN T2",
            "T2 : T2_statement",
            "     : T2_statement",
            "Closed under the global context",
        ]
    )
    assert _parse_assumptions(output) == {
        "T1": ["ClassicalDedekindReals.sig_not_dec", "ClassicalDedekindReals.sig_forall_dec"],
        "T2": [],
    }


def test_only_standard_library_axioms_are_allowed() -> None:
    assert disallowed(
        [
            "Coq.Reals.ClassicalDedekindReals.sig_not_dec",
            "Coq.Floats.FloatAxioms.add_spec",
            "Coq.Numbers.Cyclic.Int63.PrimInt63.int",
            "Coq.Logic.ProofIrrelevance.proof_irrelevance",
            "SoftmaxDispersion.T2.cheat",
        ]
    ) == ["Coq.Logic.ProofIrrelevance.proof_irrelevance", "SoftmaxDispersion.T2.cheat"]


# -- with Coq ------------------------------------------------------------------------


@pytest.mark.slow
@needs_coq
@pytest.mark.parametrize("claim_id", CORE)
def test_core_claims_are_kernel_checked(verdicts: dict[str, CoqVerdict], claim_id: str) -> None:
    verdict = verdicts[claim_id]
    assert verdict.status == "kernel-checked", verdict.detail
    assert verdict.assumptions, "Print Assumptions lists the reals' axioms at least"
    assert disallowed(verdict.assumptions) == []


@pytest.mark.slow
@needs_coq
def test_unformalised_claims_are_reported_so(verdicts: dict[str, CoqVerdict]) -> None:
    for claim in all_claims():
        if claim.id not in formalised_ids():
            assert verdicts[claim.id].status == "not formalised"


@pytest.mark.slow
@needs_coq
def test_interval_proofs_rest_on_primitive_float_axioms_only(
    verdicts: dict[str, CoqVerdict],
) -> None:
    t11 = verdicts["T11"].assumptions
    assert any(name.startswith("Coq.Floats.") for name in t11)
    assert not any(name.startswith("Coq.Floats.") for name in verdicts["T1"].assumptions)


# -- false siblings: the same proofs must not prove a false statement ---------------


def _replaced(claim: Claim, old: sp.Basic, new: sp.Basic) -> Claim:
    assert claim.statement.has(old), f"{old} is not part of {claim.id}"
    return dataclasses.replace(claim, statement=claim.statement.xreplace({old: new}))


def _part(claim_id: str, test: Callable[[sp.Basic], bool]) -> sp.Basic:
    """The one conjunct of the claim's statement that passes ``test``."""
    parts = sp.And.make_args(claim_by_id(claim_id).statement)
    [found] = [p for p in parts if test(p)]
    return found


def _symbol(claim_id: str, name: str) -> sp.Symbol:
    claim = claim_by_id(claim_id)
    [found] = [
        s for s in sp.Tuple(claim.statement, *claim.assumptions).free_symbols if s.name == name
    ]
    return found


def _has_sum(e: sp.Basic) -> bool:
    return any(s.name == "S" for s in e.free_symbols)


def _sibling_t1_upper() -> Claim:
    upper = _part("T1", lambda p: isinstance(p, sp.LessThan) and _has_sum(p.lhs))
    [c] = upper.rhs.atoms(sp.exp)
    n = _symbol("T1", "n")
    return _replaced(claim_by_id("T1"), upper, sp.Le(upper.lhs, c / (c + n)))


def _sibling_t1_flipped() -> Claim:
    lower = _part("T1", lambda p: isinstance(p, sp.LessThan) and _has_sum(p.rhs))
    return _replaced(claim_by_id("T1"), lower, sp.Ge(lower.lhs, lower.rhs))


def _sibling_t2() -> Claim:
    part = _part("T2", lambda p: isinstance(p, sp.LessThan))
    n = _symbol("T2", "n")
    return _replaced(claim_by_id("T2"), part, sp.Le(part.lhs, part.rhs.xreplace({n: n + 1})))


def _sibling_t3() -> Claim:
    part = _part("T3", lambda p: not p.rhs.args[0].could_extract_minus_sign())
    return _replaced(claim_by_id("T3"), part, sp.Eq(part.lhs, part.rhs**2, evaluate=False))


def _sibling_t4_threshold() -> Claim:
    part = _part("T4", lambda p: isinstance(p.args[0], sp.GreaterThan))
    size, coefficient_bound = part.args
    [c] = size.rhs.atoms(sp.exp)
    wrong = sp.Ge(size.lhs, 1 + c * _symbol("T4", "epsilon"))
    return _replaced(claim_by_id("T4"), part, sp.Implies(wrong, coefficient_bound))


def _sibling_t4_flipped() -> Claim:
    part = _part("T4", lambda p: isinstance(p.args[0], sp.StrictLessThan))
    spike = part.args[1]
    return _replaced(claim_by_id("T4"), part, sp.Implies(part.args[0], sp.Lt(spike.lhs, spike.rhs)))


def _sibling_t5() -> Claim:
    claim = claim_by_id("T5")
    n = _symbol("T5", "n")
    bound = claim.statement.lhs
    return _replaced(claim, bound, bound.xreplace({n - 1: n}))


def _sibling_t6_flipped() -> Claim:
    floor = _part("T6", lambda p: isinstance(p, sp.GreaterThan) and p.lhs.is_Symbol)
    return _replaced(claim_by_id("T6"), floor, sp.Le(floor.lhs, floor.rhs))


def _sibling_t6_log() -> Claim:
    n = _symbol("T6", "n")
    part = _part("T6", lambda p: p.rhs.has(sp.log(n)))
    return _replaced(
        claim_by_id("T6"), part, sp.Ge(part.lhs, part.rhs.xreplace({sp.log(n): sp.log(n + 1)}))
    )


def _t10_regime(value: sp.Expr) -> sp.Implies:
    """The implication of T10's statement whose limit is ``value``."""
    return _part("T10", lambda p: isinstance(p, sp.Implies) and p.args[1].rhs == value)


def _with_limit(regime: sp.Implies, value: sp.Expr) -> sp.Implies:
    hypothesis, limit = regime.args
    return sp.Implies(hypothesis, sp.Eq(limit.lhs, value, evaluate=False))


def _sibling_t10_limit() -> Claim:
    part = _t10_regime(sp.Rational(1, 2))
    return _replaced(claim_by_id("T10"), part, _with_limit(part, sp.Rational(1, 3)))


def _sibling_t10_gap() -> Claim:
    part = _part("T10", lambda p: isinstance(p, sp.GreaterThan))
    n = _symbol("T10", "n")
    return _replaced(claim_by_id("T10"), part, sp.Ge(part.lhs, part.rhs.xreplace({n - 1: n - 2})))


def _sibling_t11_constant() -> Claim:
    part = _part(
        "T11",
        lambda p: isinstance(p, sp.LessThan) and p.lhs.has(sp.Piecewise) and not p.has(sp.exp),
    )
    return _replaced(claim_by_id("T11"), part, sp.Le(part.lhs, sp.Rational(12, 5)))


def _sibling_t11_boundary() -> Claim:
    r_high = _symbol("T11", "r_high")
    sharpening = _part("T11", lambda p: isinstance(p, sp.Implies))
    [upper] = [
        c for c in sharpening.atoms(sp.StrictGreaterThan, sp.StrictLessThan) if r_high in c.args
    ]
    strict_to_loose = {sp.StrictGreaterThan: sp.GreaterThan, sp.StrictLessThan: sp.LessThan}
    loose = strict_to_loose[type(upper)](*upper.args, evaluate=False)
    return _replaced(claim_by_id("T11"), upper, loose)


def _sibling_t10_swapped_regimes() -> Claim:
    """The regimes sδ > 1 and sδ < 1 with their limits swapped (0 and 1)."""
    claim = claim_by_id("T10")
    above, below = _t10_regime(sp.Integer(1)), _t10_regime(sp.Integer(0))
    swapped = claim.statement.xreplace(
        {above: _with_limit(above, sp.Integer(0)), below: _with_limit(below, sp.Integer(1))}
    )
    return dataclasses.replace(claim, statement=swapped)


def _sibling_t10_swapped_at() -> Claim:
    """The regimes sδ = 1 and sδ > 1 with their limits swapped (1 and 1/2)."""
    claim = claim_by_id("T10")
    at, above = _t10_regime(sp.Rational(1, 2)), _t10_regime(sp.Integer(1))
    swapped = claim.statement.xreplace(
        {at: _with_limit(at, sp.Integer(1)), above: _with_limit(above, sp.Rational(1, 2))}
    )
    return dataclasses.replace(claim, statement=swapped)


def _t7_derivative(variable: str) -> sp.Basic:
    var = _symbol("T7", variable)
    return _part(
        "T7",
        lambda p: (
            isinstance(p, sp.Equality)
            and isinstance(p.lhs, sp.Derivative)
            and p.lhs.variables == (var,)
        ),
    )


def _sibling_t7_theta_power() -> Claim:
    part = _t7_derivative("theta")
    theta = _symbol("T7", "theta")
    return _replaced(claim_by_id("T7"), part, sp.Eq(part.lhs, part.rhs * theta, evaluate=False))


def _sibling_t7_beta_sign() -> Claim:
    part = _t7_derivative("beta")
    return _replaced(claim_by_id("T7"), part, sp.Eq(part.lhs, -part.rhs, evaluate=False))


def _sibling_t8() -> Claim:
    claim = claim_by_id("T8")
    return _replaced(claim, claim.statement, sp.Le(claim.statement.lhs, claim.statement.rhs / 2))


def _sibling_t9_bias() -> Claim:
    bias = _symbol("T9", "bias_norm")
    part = _part("T9", lambda p: p.rhs.has(bias))
    return _replaced(claim_by_id("T9"), part, sp.Le(part.lhs, part.rhs - bias))


def _sibling_t9_stack() -> Claim:
    part = _part("T9", lambda p: p.lhs.func.__name__ == "D")
    return _replaced(claim_by_id("T9"), part, sp.Le(part.lhs, part.rhs / 2))


def _sibling_t13_tail() -> Claim:
    eta = _symbol("T13", "eta")
    part = _part("T13", lambda p: isinstance(p, sp.Equality) and p.rhs == eta)
    return _replaced(claim_by_id("T13"), part, sp.Eq(part.lhs, eta / 2, evaluate=False))


def _sibling_t13_band() -> Claim:
    r = _symbol("T13", "r")
    e_top = _symbol("T13", "e_top")
    part = _part("T13", lambda p: p.rhs.has(sp.exp(e_top)) and p.lhs.has(r))
    return _replaced(claim_by_id("T13"), part, sp.Le(part.lhs.xreplace({r: -r}), part.rhs))


FALSE_SIBLINGS: dict[str, Callable[[], Claim]] = {
    "T7: dH/dθ = Var/θ² instead of Var/θ³": _sibling_t7_theta_power,
    "T7: dH/dβ = +β Var instead of −β Var": _sibling_t7_beta_sign,
    "T8: δ <= σ σ ‖y‖ R / s (half the bound)": _sibling_t8,
    "T9: a linear layer's radius without its bias": _sibling_t9_bias,
    "T9: every head's spread at half the bound": _sibling_t9_stack,
    "T10: the regimes sδ > 1 and sδ < 1 with their limits swapped": _sibling_t10_swapped_regimes,
    "T10: the regimes sδ = 1 and sδ > 1 with their limits swapped": _sibling_t10_swapped_at,
    "T13: the tail bound at r is η/2": _sibling_t13_tail,
    "T13: the band's lower edge at I − r": _sibling_t13_band,
    "T1: n instead of n − 1 in the upper bound": _sibling_t1_upper,
    "T1: flipped lower bound": _sibling_t1_flipped,
    "T2: c/(n + 1) instead of c/n": _sibling_t2,
    "T3: c² instead of c": _sibling_t3,
    "T4: a wrong dispersion size": _sibling_t4_threshold,
    "T4: flipped inequality below n*": _sibling_t4_flipped,
    "T5: n instead of n − 1": _sibling_t5,
    "T6: flipped entropy floor": _sibling_t6_flipped,
    "T6: log(n + 1) instead of log n": _sibling_t6_log,
    "T10: 1/3 instead of 1/2": _sibling_t10_limit,
    "T10: n − 2 instead of n − 1 in the gap floor": _sibling_t10_gap,
    "T11: β ≤ 12/5 instead of β ≤ P(h*)": _sibling_t11_constant,
    "T11: r_high ≥ H instead of r_high > H": _sibling_t11_boundary,
}


def _with_sibling(sibling: Claim) -> list[Claim]:
    return [
        sibling if c.id == sibling.id else c for c in (claim_by_id(i) for i in formalised_ids())
    ]


def test_every_formalised_claim_has_a_false_sibling() -> None:
    # the floating-point claims' (T12's) siblings are in test_coq_float.py
    from softmax_dispersion.theory.coq_float import FLOAT_CLAIM_IDS

    printed = set(formalised_ids()) - set(FLOAT_CLAIM_IDS)
    assert {name.split(":")[0] for name in FALSE_SIBLINGS} >= printed


@pytest.mark.parametrize("name", sorted(FALSE_SIBLINGS))
def test_false_sibling_still_prints_faithfully(name: str) -> None:
    from softmax_dispersion.theory.coq import coq_statement
    from softmax_dispersion.theory.coq_reader import statement_mismatches

    sibling = FALSE_SIBLINGS[name]()
    original = claim_by_id(sibling.id)
    assert sibling.statement != original.statement
    text = coq_statement(sibling)
    assert text != coq_statement(original)
    assert statement_mismatches(sibling, text) == []


@pytest.mark.slow
@needs_coq
@pytest.mark.parametrize("name", sorted(FALSE_SIBLINGS))
def test_false_sibling_fails_in_coq(
    verdicts: dict[str, CoqVerdict], coq_folder: Path, name: str
) -> None:
    sibling = FALSE_SIBLINGS[name]()
    assert verdicts[sibling.id].kernel_checked  # the true statement was proved
    [verdict] = kernel_check([sibling.id], claims=_with_sibling(sibling), directory=coq_folder)
    assert verdict.status == "failed"
    # The claim's own proof is what fails, not the statements or a lemma it needs.
    assert verdict.detail.startswith(f"{sibling.id}.v: "), verdict.detail
    assert "Error" in verdict.detail


# -- weaker true siblings: sympy verifies them, the proofs must not silently follow -------


def _weakened(claim_id: str, test: Callable[[sp.Basic], bool], weaker: sp.Basic) -> Claim:
    """The claim with one conjunct replaced by a weaker one, proved by one more step."""
    claim = claim_by_id(claim_id)
    statement = claim.statement.xreplace({_part(claim_id, test): weaker})
    steps = claim.proof
    return dataclasses.replace(
        claim,
        statement=statement,
        proof=lambda: [*steps(), Implied(statement, "a weaker form of the statement")],
    )


def _weaker_t7() -> Claim:
    variance = _symbol("T7", "variance")
    return _weakened("T7", lambda p: p == sp.Ge(variance, 0), sp.Ge(variance, -1))


def _weaker_t8() -> Claim:
    claim = claim_by_id("T8")
    bound = claim.statement
    return _weakened("T8", lambda p: p == bound, sp.Le(bound.lhs, 3 * bound.rhs / 2))


def _weaker_t9() -> Claim:
    def stack(p: sp.Basic) -> bool:
        return p.lhs.func.__name__ == "N"

    part = _part("T9", stack)
    return _weakened("T9", stack, sp.Le(part.lhs, part.rhs + 1))


def _weaker_t13() -> Claim:
    n = _symbol("T13", "n")
    part = _part("T13", lambda p: p.rhs == n - 1)
    return _weakened("T13", lambda p: p == part, sp.Le(part.lhs, n))


WEAKER_SIBLINGS: dict[str, Callable[[], Claim]] = {
    "T7: Var >= −1": _weaker_t7,
    "T8: δ <= 3 σ σ ‖y‖ R / s": _weaker_t8,
    "T9: N(l) <= R(l) + 1": _weaker_t9,
    "T13: S <= n": _weaker_t13,
}


def test_every_new_theorem_has_a_weaker_sibling() -> None:
    assert {name.split(":")[0] for name in WEAKER_SIBLINGS} >= set(NEW)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(WEAKER_SIBLINGS))
def test_weaker_sibling_is_verified_by_sympy(name: str) -> None:
    sibling = WEAKER_SIBLINGS[name]()
    assert sibling.statement != claim_by_id(sibling.id).statement
    result = sibling.check()
    assert result.verified, result.problem


@pytest.mark.slow
@needs_coq
@pytest.mark.parametrize("name", sorted(WEAKER_SIBLINGS))
def test_weaker_sibling_changes_what_coq_checks(
    verdicts: dict[str, CoqVerdict], coq_folder: Path, name: str
) -> None:
    """The statement Coq checks is printed from the claim as it is now: a changed claim
    (here weaker, and true) is a changed Coq statement, which the shipped proof does not
    prove; the proof is tied to the claim, not to a stale copy."""
    from softmax_dispersion.theory.coq import coq_statement

    sibling = WEAKER_SIBLINGS[name]()
    assert verdicts[sibling.id].kernel_checked
    assert coq_statement(sibling) != coq_statement(claim_by_id(sibling.id))
    [verdict] = kernel_check([sibling.id], claims=_with_sibling(sibling), directory=coq_folder)
    assert verdict.status == "failed"
    assert verdict.detail.startswith(f"{sibling.id}.v: "), verdict.detail


# -- planted bugs in the proofs ------------------------------------------------------

_T2_BY_AXIOM = """From Coq Require Import Reals.
From SoftmaxDispersion Require Import Statements.
Axiom cheat : False.
Theorem T2 : T2_statement.
Proof. exfalso. exact cheat. Qed.
"""
_T2_ADMITTED = """From Coq Require Import Reals.
From SoftmaxDispersion Require Import Statements.
Theorem T2 : T2_statement.
Proof. Admitted.
"""
_T2_REDEFINED = """From Coq Require Import Reals.
From SoftmaxDispersion Require Import Statements.
Definition T2_statement : Prop := True.
Theorem T2 : T2_statement.
Proof. exact I. Qed.
"""


@pytest.mark.slow
@needs_coq
@pytest.mark.parametrize(
    ("label", "text", "reason"),
    [
        ("an axiom of its own", _T2_BY_AXIOM, "SoftmaxDispersion.T2.cheat"),
        ("an admitted proof", _T2_ADMITTED, "Admitted"),
        ("a local redefinition of the statement", _T2_REDEFINED, "Print Assumptions failed"),
    ],
)
def test_planted_proof_bug_is_refused(
    verdicts: dict[str, CoqVerdict], coq_folder: Path, label: str, text: str, reason: str
) -> None:
    assert verdicts["T2"].kernel_checked  # the shipped proof is accepted
    sources = {**proof_sources(), "T2.v": text}
    [verdict] = kernel_check(["T2"], directory=coq_folder, sources=sources)
    assert verdict.status == "failed", label
    assert reason in verdict.detail, verdict.detail
