"""The Coq printer: every printed statement reads back as the claim it came from.

The reader (:mod:`softmax_dispersion.theory.coq_reader`) parses the printed text with
Coq's notation levels and rebuilds sympy objects, which are compared with the claim's
statement, assumptions and definitions.  Broken printers (a dropped term, swapped
operands, a wrong relation, missing parentheses, a lost hypothesis) must be caught.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
from softmax_dispersion.theory.coq_proofs import find_coqc, formalised_ids
from softmax_dispersion.theory.coq_reader import CoqReadError, statement_mismatches

FORMALISED = formalised_ids()
ALL_FORMALISED = {"T1", "T2", "T3", "T4", "T5", "T6", "T7", "T8", "T9", "T10", "T11", "T13"}


def mismatches(claim_id: str) -> list[str]:
    claim = claim_by_id(claim_id)
    try:
        text = coq_statement(claim)
        return statement_mismatches(claim, text)
    except (CoqPrintError, CoqReadError) as error:
        return [f"{type(error).__name__}: {error}"]


@pytest.mark.parametrize("claim_id", FORMALISED)
def test_printed_statement_reads_back_as_the_claim(claim_id: str) -> None:
    assert mismatches(claim_id) == []


@pytest.mark.parametrize("claim_id", [c.id for c in all_claims() if c.id not in FORMALISED])
def test_other_claims_print_faithfully_or_are_refused(claim_id: str) -> None:
    """A claim without a proof is printed faithfully or refused, never approximated."""
    claim = claim_by_id(claim_id)
    try:
        text = coq_statement(claim)
    except CoqPrintError:
        return
    assert statement_mismatches(claim, text) == []


def test_every_formalised_claim_is_printable() -> None:
    assert set(FORMALISED) >= ALL_FORMALISED


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


def test_t7_names_its_sums_by_functions_and_states_derivatives() -> None:
    text = coq_statement(claim_by_id("T7"))
    assert "(A0 A1 A2 B0 B1 B2 : R -> R) (e_js : list R)" in text
    assert (
        "(forall theta : R, A0 theta = fold_right Rplus 0 "
        "(map (fun e_j : R => exp (e_j / theta)) e_js)) ->" in text
    )
    # an equation of a derivative is is_derive (differentiable, with that derivative)
    assert (
        "is_derive (fun theta : R => ln (A0 theta) - A1 theta / (theta * A0 theta)) theta "
        "(variance / theta ^ 3)" in text
    )
    assert "Derive (fun beta : R => - beta * B1 beta / B0 beta + ln (B0 beta)) beta <= 0" in text


def test_t9_ranges_over_tuples_and_quantifies_the_layers_over_nat() -> None:
    text = coq_statement(claim_by_id("T9"))
    assert "(D K N Q R_ a b s_head : nat -> R) (p_ts : list (R * R * R))" in text
    assert "map (fun '(p_t, norm_x_t, norm_Vx_t) => norm_Vx_t * p_t) p_ts" in text
    assert (
        "(forall p_t norm_x_t norm_Vx_t : R, In (p_t, norm_x_t, norm_Vx_t) p_ts -> p_t >= 0)"
        in text
    )
    assert "N 0%nat <= R_ 0%nat ->" in text
    assert "(forall l : nat, N (l + 1)%nat <= N l * a l + b l) ->" in text
    assert "(forall l : nat, N l <= R_ l) /\\" in text
    assert "gain * sqrt dim" in text


def test_square_roots_print_as_sqrt_and_other_constant_powers_are_refused() -> None:
    assert "sqrt (" in coq_statement(claim_by_id("T13"))
    printer = CoqPrinter({x: "x"})
    assert printer.expr(sp.sqrt(x + 1)) == "sqrt (x + 1)"
    with pytest.raises(CoqPrintError, match="fractional power"):
        printer.expr(x ** sp.Rational(1, 3))


def test_t10_prints_in_the_papers_form_and_reads_back() -> None:
    """The regimes under a hypothesis on s·δ, an implication each, about the limit of
    p_max itself: printed from T10 and read back."""
    t10 = claim_by_id("T10")
    text = coq_statement(t10)
    p_max = "Rpower n (s * (M - m)) / (n + Rpower n (s * (M - m)) - 1)"
    for hypothesis, value in (("> 1", "1"), ("= 1", "(1 / 2)"), ("< 1", "0")):
        regime = (
            f"(s * (M - m) {hypothesis} -> is_lim (fun n : R => {p_max}) p_infty (Finite {value}))"
        )
        assert regime in text
    assert " q " not in text  # no free exponent left: the regimes are about s·δ
    assert statement_mismatches(t10, text) == []


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


def _sqrt_as_rpower(self: CoqPrinter, e: sp.Pow) -> tuple[str, int]:
    if e.exp == sp.Rational(1, 2):
        return f"Rpower {self._wrap(self._expr(e.base), 0)} (1 / 2)", 10
    return ORIGINAL_POW(self, e)


ORIGINAL_ADD = CoqPrinter._add
ORIGINAL_MUL = CoqPrinter._mul
ORIGINAL_POW = CoqPrinter._pow
ORIGINAL_MEMBER = coq._member
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
    "forgets the quantifier over the naturals": (
        CoqPrinter,
        "quantified",
        lambda self, statement: self._prop(statement),
    ),
    "lists a tuple's members in another order": (
        coq,
        "_member",
        lambda printer, indices: ORIGINAL_MEMBER(printer, list(indices)[::-1]),
    ),
    "writes a derivative's equation with Derive": (
        CoqPrinter,
        "_is_derive",
        lambda self, derivative, value: (
            f"Derive {' '.join(self._derivative_parts(derivative))} = "
            f"{self._wrap(self._expr(value), 0)}"
        ),
    ),
    "writes sqrt as Rpower": (CoqPrinter, "_pow", _sqrt_as_rpower),
}
ORIGINAL_HYPOTHESES = coq._hypotheses


@pytest.mark.parametrize("bug", sorted(BROKEN_PRINTERS))
def test_round_trip_fails_on_a_broken_printer(bug: str) -> None:
    target, name, value = BROKEN_PRINTERS[bug]
    with patched(target, name, value):
        caught = [i for i in FORMALISED if mismatches(i)]
    assert caught, f"no formalised claim noticed a printer that {bug}"


@pytest.mark.parametrize("bug", sorted(BROKEN_PRINTERS))
def test_broken_printer_is_caught_on_each_claim_it_affects(bug: str) -> None:
    """Every formalised claim whose printed text the bug changes reads back differently."""
    correct = {i: coq_statement(claim_by_id(i)) for i in FORMALISED}
    target, name, value = BROKEN_PRINTERS[bug]
    with patched(target, name, value):
        affected = []
        for claim_id in FORMALISED:
            try:
                changed = coq_statement(claim_by_id(claim_id)) != correct[claim_id]
            except CoqPrintError:
                continue  # refused outright: nothing wrong was printed
            if changed:
                affected.append(claim_id)
                assert mismatches(claim_id), f"{claim_id} missed a printer that {bug}"
    assert affected, f"no formalised claim is printed differently by a printer that {bug}"


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
        "Definition T2_statement : Prop := forall x : R, Rpower x (1 / 2) = 0.",
        "Definition T2_statement : Prop := forall x : R, Derive (fun x : R => x) x = 1.",
        "Definition T2_statement : Prop := forall x : R, Derive (fun y : R => y) x > 0.",
        "Definition T2_statement : Prop := forall (x : R) (f : R -> nat), x > 0.",
        "Definition T2_statement : Prop := forall x : R, forall y : R, x > y.",
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


def test_a_name_renamed_for_coq_never_takes_another_name_of_the_claim() -> None:
    """Red team 8: ln (Coq's ln) became ln_ while the claim's own ln_ became ln_2, so
    'ln > ln_ + 1' printed as 'ln_2 > ln_ + 1'."""
    from softmax_dispersion.theory.kernel import Claim, Implied

    ln, ln_ = sp.Symbol("ln", real=True), sp.Symbol("ln_", real=True)
    statement = sp.Gt(ln, ln_ + 1)
    claim = Claim(
        id="T99",
        title="a renamed name",
        statement=statement,
        assumptions=[statement],
        source="red team",
        proof=lambda: [Implied(statement, "")],
        witness={ln: 2, ln_: 0},
    )
    text = coq_statement(claim)
    assert "ln_ + 1" in text and "forall ln_2 ln_ : R" in text, text
    assert "ln_2 > ln_ + 1" in text  # ln is ln_2; ln_ keeps its own name


def test_a_derivative_equation_is_is_derive_only_where_it_is_asserted() -> None:
    """Red team 9: 'f'(x) = 1 -> y > 0' as an assumption printed (is_derive f x 1 -> y > 0),
    a weaker hypothesis than the kernel's reading, and the theorem false for f = Rabs at 0
    (Derive Rabs 0 = 1); so did '~ f'(x) = 1'.  Denied or assumed, it is Derive."""
    from softmax_dispersion.theory.kernel import Claim, Implied

    x, y = sp.symbols("x y", real=True)
    f = sp.Function("f", real=True)
    slope = sp.Derivative(f(x), x)
    hypotheses = [
        sp.Eq(slope, 2),
        sp.Implies(sp.Eq(slope, 1), y > 0),
        sp.Not(sp.Eq(slope, 3, evaluate=False)),
        sp.Equivalent(sp.Eq(slope, 4), y > 1),
    ]
    claim = Claim(
        id="T99",
        title="derivative equations in every position",
        statement=sp.Gt(y, 0),
        assumptions=hypotheses,
        source="red team",
        proof=lambda: [Implied(sp.Gt(y, 0), "")],
        witness={},
    )
    text = coq_statement(claim)
    derive = "Derive (fun x : R => f x) x"
    assert "is_derive (fun x : R => f x) x 2 ->" in text  # asserted: the stronger reading
    assert f"({derive} = 1 -> y > 0) ->" in text
    assert f"{derive} <> 3 ->" in text
    assert f"y > 1 <-> {derive} = 4 ->" in text
    assert text.count("is_derive") == 1


def test_a_sum_sympy_cannot_order_is_a_print_error() -> None:
    """Red team 10: sympy orders a sum's terms by evaluating them, and a tower of exp
    overflowed inside the printer (OverflowError, not the documented CoqPrintError)."""
    x = sp.Symbol("x", real=True)
    tower = sp.exp(sp.exp(sp.exp(sp.exp(10))))
    with pytest.raises(CoqPrintError, match="cannot be ordered"):
        CoqPrinter({x: "x"}).prop(sp.Lt(x, tower + 1))


def test_what_the_printer_writes_verbatim_is_checked_first() -> None:
    """Red team 11: an id holding ': Prop := True. Definition ...' was printed as given,
    and a statement that is text raised AttributeError, not CoqPrintError."""
    import dataclasses

    t2 = claim_by_id("T2")
    with pytest.raises(CoqPrintError, match="Coq identifier"):
        coq_statement(dataclasses.replace(t2, id="T2_statement : Prop := True. Definition X"))
    with pytest.raises(CoqPrintError, match="not a sympy proposition"):
        coq_statement(dataclasses.replace(t2, statement="x > 0"))


def test_a_statement_hook_prints_only_the_claim_it_was_registered_for() -> None:
    """Red team 15: any claim with the id T12 got T12's Flocq theorems as its Coq
    statement, whatever it said."""
    import dataclasses

    x, y = sp.symbols("x y", real=True)
    impostor = dataclasses.replace(claim_by_id("T12"), statement=x**2 + y**2 >= 2 * x * y)
    with pytest.raises(CoqPrintError, match="printed for the project's T12 only"):
        coq_statement(impostor)
    assert "T12_binary64_statement" in coq_statement(claim_by_id("T12"))


def test_a_number_the_kernel_refuses_is_a_coq_print_error() -> None:
    """Red team 16: 2**15000 in a statement raised Python's digit limit from inside
    sympy's printer; the printer prints only what the kernel can read."""
    from softmax_dispersion.theory.kernel import Claim

    x = sp.Symbol("x", real=True)
    claim = Claim("CB", "", sp.Gt(sp.Integer(2) ** 15000 * x, 0), [sp.Gt(x, 0)], "test", list)
    with pytest.raises(CoqPrintError, match="a number beyond 4096 bits"):
        coq_statement(claim)


def test_a_negative_power_of_a_large_number_prints_unevaluated() -> None:
    """Red team 17: (2**20 - 1)**(-1000) was printed as 1 / (its positive power, computed):
    6000 digits, past Python's limit on printing an integer, a bare ValueError."""
    from softmax_dispersion.theory.kernel import Claim

    y = sp.Symbol("y", real=True)
    tiny = sp.Pow(2**20 - 1, -1000, evaluate=False)
    claim = Claim("NP", "", sp.Gt(y + 1, tiny), [sp.Ge(y, 0)], "test", list)
    assert "1 / 1048575 ^ 1000" in coq_statement(claim)


@pytest.mark.parametrize("claim_id", sorted(ALL_FORMALISED))
def test_a_reciprocal_prints_as_one_over_its_base(claim_id: str) -> None:
    """The unevaluated positive power of a negative power must not print x⁻¹ as
    1 / x ^ 1: Coq reads that as another term, and T13's proof stopped compiling."""
    import re

    assert not re.search(r"\^ 1\b", coq_statement(claim_by_id(claim_id)))


def _compiles(folder: Path, binders: list[str]) -> bool:
    """Whether coqc takes a statement binding each name, after the statements' prelude."""
    coqc = find_coqc()
    assert coqc is not None
    source = folder / "Names.v"
    body = " -> ".join(f"{name} >= 0" for name in binders)
    source.write_text(
        f"{coq.STATEMENTS_HEADER}Definition t := forall {' '.join(binders)} : R, {body}.\n"
    )
    done = subprocess.run([coqc, source.name], cwd=folder, capture_output=True, timeout=120)
    return done.returncode == 0


@pytest.mark.slow
@pytest.mark.skipif(find_coqc() is None, reason="coqc not found (install Coq 8.16)")
def test_every_reserved_word_is_renamed_to_a_name_coq_takes(tmp_path: Path) -> None:
    """Red team 22: symbols named ``for``, ``where``, ``SProp``, ``exists2``, ``using``
    or ``by`` were printed as they are, and coqc stopped at a syntax error. Every name
    coq_name gives the printer's reserved words compiles as a binder, in one file; the
    check is seen to fail on three of the words themselves."""
    names = [coq.coq_name(sp.Symbol(word)) for word in sorted(coq._RESERVED)]
    assert _compiles(tmp_path, names)
    for word in ("for", "where", "SProp"):
        assert not _compiles(tmp_path, [word]), word
