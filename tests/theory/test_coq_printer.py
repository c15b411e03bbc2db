"""The Coq printer: every printed statement reads back as the claim it came from.

The reader (:mod:`softmax_dispersion.theory.coq_reader`) parses the printed text with
Coq's notation levels and rebuilds sympy objects, which are compared with the claim's
statement, assumptions and definitions.  Broken printers (a dropped term, swapped
operands, a wrong relation, missing parentheses, a lost hypothesis) must be caught.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import sympy as sp

import softmax_dispersion.theory.coq as coq
from softmax_dispersion.theory import all_claims, claim_by_id
from softmax_dispersion.theory.coq import (
    CoqPrinter,
    CoqPrintError,
    claim_definitions,
    coq_statement,
)
from softmax_dispersion.theory.coq_proofs import formalised_ids
from softmax_dispersion.theory.coq_reader import CoqReadError, statement_mismatches

FORMALISED = formalised_ids()
UNPRINTABLE = {"T7", "T9", "T12", "T14", "T15"}  # sums named by a function or over several
# indices, derivatives


def mismatches(claim_id: str) -> list[str]:
    claim = claim_by_id(claim_id)
    try:
        text = coq_statement(claim)
        return statement_mismatches(claim, text)
    except (CoqPrintError, CoqReadError) as error:
        return [f"{type(error).__name__}: {error}"]


@pytest.mark.parametrize("claim_id", [c.id for c in all_claims() if c.id not in UNPRINTABLE])
def test_printed_statement_reads_back_as_the_claim(claim_id: str) -> None:
    assert mismatches(claim_id) == []


def test_every_formalised_claim_is_printable() -> None:
    assert set(FORMALISED) >= {"T1", "T2", "T3", "T4", "T5", "T10", "T11"}
    assert not set(FORMALISED) & UNPRINTABLE


@pytest.mark.parametrize("claim_id", sorted(UNPRINTABLE))
def test_unprintable_claims_are_refused_not_approximated(claim_id: str) -> None:
    with pytest.raises(CoqPrintError):
        coq_statement(claim_by_id(claim_id))


def test_t1_is_quantified_over_the_list_of_other_logits() -> None:
    text = coq_statement(claim_by_id("T1"))
    assert "INR (length e_js) = n - 1" in text
    assert "(forall e_j : R, In e_j e_js -> m <= e_j)" in text
    assert "fold_right Rplus 0 (map (fun e_j : R => exp (e_j / theta)) e_js)" in text


def test_t4_reads_its_sum_from_the_cited_claim() -> None:
    [total] = claim_definitions(claim_by_id("T4"))
    assert str(total.symbol) == "S"


def test_t11_roots_are_printed_as_their_isolating_facts() -> None:
    text = coq_statement(claim_by_id("T11"))
    assert "5 < r_high ->\n  r_high < 6 ->" in text
    assert "Rgt_dec H (1 / 2)" in text


# -- the round trip must catch a broken printer -------------------------------------


@contextmanager
def patched(target: object, name: str, value: object) -> Iterator[None]:
    # A class attribute is taken from the class dict, so that a staticmethod stays one.
    old = vars(target)[name] if isinstance(target, type) else getattr(target, name)
    setattr(target, name, value)
    try:
        yield
    finally:
        setattr(target, name, old)


def _drop_last_term(self: CoqPrinter, e: sp.Add) -> str:
    return ORIGINAL_ADD(self, sp.Add(*e.as_ordered_terms()[:-1]) if len(e.args) > 2 else e)


def _swap_fraction(self: CoqPrinter, e: sp.Mul) -> tuple[str, int]:
    numerator, denominator = sp.fraction(e)
    if denominator == 1:
        return ORIGINAL_MUL(self, e)
    return ORIGINAL_MUL(self, sp.Mul(denominator, 1 / numerator, evaluate=False))


ORIGINAL_ADD = CoqPrinter._add
ORIGINAL_MUL = CoqPrinter._mul
BROKEN_PRINTERS = {
    "no parentheses": (CoqPrinter, "_wrap", staticmethod(lambda printed, allowed: printed[0])),
    "drops the last term of a sum": (CoqPrinter, "_add", _drop_last_term),
    "swaps numerator and denominator": (CoqPrinter, "_mul", _swap_fraction),
    "<= printed as <": (coq, "_RELATIONS", {**coq._RELATIONS, sp.LessThan: "<"}),
    "> printed as >=": (coq, "_RELATIONS", {**coq._RELATIONS, sp.StrictGreaterThan: ">="}),
    "ln printed as exp": (coq, "_FUNCTIONS", {**coq._FUNCTIONS, sp.log: "exp"}),
    "loses the last hypothesis": (
        coq,
        "_hypotheses",
        lambda claim, definitions, layout: ORIGINAL_HYPOTHESES(claim, definitions, layout)[:-1],
    ),
    "Rlt_dec for every condition": (
        coq,
        "_DECIDERS",
        dict.fromkeys(coq._DECIDERS, "Rlt_dec"),
    ),
}
ORIGINAL_HYPOTHESES = coq._hypotheses


@pytest.mark.parametrize("bug", sorted(BROKEN_PRINTERS))
def test_round_trip_fails_on_a_broken_printer(bug: str) -> None:
    target, name, value = BROKEN_PRINTERS[bug]
    with patched(target, name, value):
        caught = [i for i in FORMALISED if mismatches(i)]
    assert caught, f"no formalised claim noticed a printer that {bug}"


def test_broken_printer_is_caught_on_each_claim_it_affects() -> None:
    with patched(CoqPrinter, "_wrap", staticmethod(lambda printed, allowed: printed[0])):
        assert all(mismatches(i) for i in FORMALISED)
    with patched(coq, "_RELATIONS", {**coq._RELATIONS, sp.LessThan: "<"}):
        assert all(mismatches(i) for i in ("T1", "T2", "T4", "T5", "T11"))


# -- forms the printer refuses -------------------------------------------------------

x, y = sp.symbols("x y", real=True)


@pytest.mark.parametrize(
    "expr",
    [
        sp.Float(0.5) * x,
        sp.sin(x),
        sp.Function("f")(x),
        sp.Piecewise((x, x > 0)),
    ],
)
def test_printer_refuses_what_it_cannot_render(expr: sp.Expr) -> None:
    with pytest.raises(CoqPrintError):
        CoqPrinter({x: "x"}).expr(expr)


def test_printer_refuses_a_finite_limit_and_an_unbound_symbol() -> None:
    with pytest.raises(CoqPrintError, match="one-sided"):
        CoqPrinter({x: "x"}).prop(sp.Eq(sp.Limit(1 / x, x, 0), sp.oo))
    with pytest.raises(CoqPrintError, match="not bound"):
        CoqPrinter({x: "x"}).expr(x + y)


@pytest.mark.parametrize(
    ("expr", "text"),
    [
        ((x - 1) * y, "y * (x - 1)"),
        (x - (y - 1), "x - y + 1"),
        (-(x**2), "- x ^ 2"),
        ((-x) ** 3, "- x ^ 3"),
        (x ** (y + 1), "Rpower x (y + 1)"),
        (x ** (-y), "Rpower x (- y)"),
        (y / x**y, "y / Rpower x y"),
        (x**-2, "1 / x ^ 2"),
        (sp.Rational(-3, 7) * x, "- 3 * x / 7"),
        (sp.exp(-x / y), "exp (- x / y)"),
        (sp.Max(x, y, 1), "Rmax 1 (Rmax x y)"),
        (sp.E, "exp 1"),
    ],
)
def test_printed_forms(expr: sp.Expr, text: str) -> None:
    assert CoqPrinter({x: "x", y: "y"}).expr(expr) == text


def test_coq_names_avoid_coq_vocabulary_and_each_other() -> None:
    assert coq.coq_name(sp.Symbol("S")) == "S_"
    assert coq.coq_name(sp.Symbol("exp")) == "exp_"
    assert coq.coq_name(sp.Symbol("a b")) == "a_b"
    assert coq.coq_name(sp.Symbol("x"), taken=["x"]) == "x2"


def _two_families() -> object:
    """Z over all n logits, S over the n − 1 others: one index, two families."""
    from softmax_dispersion.theory.kernel import Family, SumOver

    e, n, z, s = sp.symbols("e_j n Z S", real=True)
    everyone = Family("everyone", (e,), n, (sp.Le(e, 0),))
    others = Family("others", (e,), n - 1, (sp.Le(e, 0),))
    total = SumOver(z, sp.exp(e), everyone)
    rest = SumOver(s, sp.exp(e), others)
    return _claim_with([total, rest], sp.Le(s, z))


def test_two_families_over_one_index_get_two_lists() -> None:
    claim = _two_families()
    text = coq_statement(claim)  # type: ignore[arg-type]
    assert "(e_js e_js2 : list R)" in text
    assert "INR (length e_js) = n ->" in text and "INR (length e_js2) = n - 1 ->" in text
    assert "(forall e_j : R, In e_j e_js2 -> e_j <= 0)" in text
    assert mismatches_of(claim) == []


def test_round_trip_catches_families_merged_by_index() -> None:
    claim = _two_families()
    with patched(coq, "family", lambda d: ("", d.index, None, ())):
        problems = mismatches_of(claim)
    assert any("count hypotheses" in p or "two families" in p for p in problems), problems


def test_t6_defines_its_entropy_by_its_equation() -> None:
    text = coq_statement(claim_by_id("T6"))
    assert "H = H_others - exp (e_k / theta) * ln" in text
    assert "(forall e_j : R, In e_j e_js -> e_j <= e_k)" in text
    assert mismatches("T6") == []


@pytest.mark.parametrize(
    "text",
    [
        "Lemma T2_statement : Prop := True.",
        "Definition T2_statement : Prop := forall x : R, x > 0",
        "Definition T2_statement : Prop := forall x : R, sin x > 0.",
        "Definition T2_statement : Prop := forall x : R, x ^ x > 0.",
        "Definition T2_statement : Prop := forall x : R, (x > 0.",
        "Definition T2_statement : Prop := forall x : R, x $ 0.",
    ],
)
def test_reader_refuses_what_the_printer_never_writes(text: str) -> None:
    from softmax_dispersion.theory.coq_reader import read_statement

    with pytest.raises(CoqReadError):
        read_statement(text, lambda name: sp.Symbol(name, real=True))


def test_reader_follows_coq_precedence() -> None:
    from softmax_dispersion.theory.coq_reader import read_statement

    a, b, c = sp.symbols("a b c", real=True)
    names = {"a": a, "b": b, "c": c}.__getitem__
    cases = {
        "a - b - c": a - b - c,
        "a / b * c": a * c / b,
        "a / (b * c)": a / (b * c),
        "- a ^ 2": -(a**2),
        "- a * b": -a * b,
        "a - - b": a + b,
        "exp a * b": sp.exp(a) * b,
        "Rpower a (b + c)": a ** (b + c),
    }
    for text, expected in cases.items():
        read = read_statement(f"Definition X : Prop := {text} = 0.", names)
        assert read.conclusion == sp.Eq(expected, 0, evaluate=False), text
    read = read_statement("Definition X : Prop := a > 0 -> b > 0 -> a = b /\\ b = c.", names)
    assert [h.expr for h in read.hypotheses] == [a > 0, b > 0]
    assert read.conclusion == sp.And(sp.Eq(a, b), sp.Eq(b, c))


def _claim_with(definitions: list[object], statement: sp.Basic) -> object:
    from softmax_dispersion.theory.kernel import Claim

    return Claim(
        "T99", "a test claim", statement, [], "test", proof=lambda: [], definitions=definitions
    )  # type: ignore[arg-type]


def test_definitions_used_by_definitions_are_kept() -> None:
    from softmax_dispersion.theory.kernel import Family, Let, SumOver

    u, v, a_sum, b_sum, c_let, count = sp.symbols("u v A B C k", real=True)
    inner = SumOver(a_sum, sp.exp(u), Family("us", (u,), count))
    outer = SumOver(b_sum, a_sum * sp.exp(v), Family("vs", (v,), count))
    twice = Let(c_let, 2 * b_sum)
    claim = _claim_with([inner, outer, twice], sp.Gt(c_let, 0))
    assert {d.symbol for d in claim_definitions(claim)} == {a_sum, b_sum, c_let}  # type: ignore[arg-type]
    assert mismatches_of(claim) == []


def test_a_symbol_defined_twice_is_refused() -> None:
    from softmax_dispersion.theory.kernel import Family, SumOver

    u, a_sum, count = sp.symbols("u A k", real=True)
    us = Family("us", (u,), count)
    one, two = SumOver(a_sum, sp.exp(u), us), SumOver(a_sum, u, us)
    with pytest.raises(CoqPrintError, match="defined twice"):
        claim_definitions(_claim_with([one, two], sp.Gt(a_sum, 0)))  # type: ignore[arg-type]


def mismatches_of(claim: object) -> list[str]:
    return statement_mismatches(claim, coq_statement(claim))  # type: ignore[arg-type]
