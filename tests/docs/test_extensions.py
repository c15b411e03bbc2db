"""The docs' build-time extensions: plain-Unicode claim text, formulas from the theory."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("sphinx")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs" / "_ext"))

import claim_pages
import formula_math
from sphinx.errors import ExtensionError

from softmax_dispersion import theory


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("e^{−δ/θ}/n <= p_k <= e^{δ/θ}/n", "exp(−δ/θ)/n ≤ p_k ≤ exp(δ/θ)/n"),
        ("exp(s log n · M) = n^{sM}", "exp(s log n · M) = nˢᴹ"),
        ("γ_{n−1} and γ_{⌈log2 n⌉}", "γₙ₋₁ and γ_(⌈log2 n⌉)"),
        ("a^{x y}", "a^(x y)"),
        ("n >= 1 + c(1−ε)/ε", "n ≥ 1 + c(1−ε)/ε"),
        ("p_max, e^δ, 10¹⁸", "p_max, e^δ, 10¹⁸"),
    ],
)
def test_plain_text(text: str, plain: str) -> None:
    assert claim_pages.plain_text(text) == plain


def test_every_claim_title_is_plain_on_its_page() -> None:
    for claim in theory.all_claims():
        title = claim_pages.plain_text(claim.title)
        assert "{" not in title and "<=" not in title and ">=" not in title, title


def test_conjuncts_align_on_their_relations() -> None:
    import sympy as sp

    x, y = sp.symbols("x y", real=True)
    # sympy orders an And's arguments canonically
    assert sorted(claim_pages.conjuncts_latex(sp.And(sp.Le(x, y), sp.Eq(x, 1)))) == [
        "x &= 1",
        "x &\\leq y",
    ]
    # one formula is not in an alignment, so it carries no &
    assert claim_pages.conjuncts_latex(sp.Le(x, y)) == ["x \\leq y"]


def test_formula_math_fills_in_the_exported_latex() -> None:
    filled = formula_math.fill("{{dispersion_lower}} \\le p_k", theory.FORMULAS)
    assert filled == "{" + theory.FORMULAS["dispersion_lower"].latex + "} \\le p_k"
    assert formula_math.fill("\\frac{1}{n}", theory.FORMULAS) == "\\frac{1}{n}"


def test_formula_math_refuses_an_unknown_formula() -> None:
    with pytest.raises(ExtensionError, match="'dispersion_upperr' is not in"):
        formula_math.fill("{{dispersion_upperr}}", theory.FORMULAS)


def test_parameters_are_the_symbols_no_definition_defines() -> None:
    import sympy as sp

    n, theta, total, x = sp.symbols("n theta S x", real=True)
    f = sp.Function("A", real=True)
    claim = SimpleNamespace(
        statement=sp.Le(total, n * f(theta)), assumptions=[sp.Gt(theta, 0)], definitions=()
    )
    assert claim_pages.parameters(claim, [sp.Ge(x, 0)]) == [
        "S",
        "n",
        "\\theta",
        "x",
        "A{\\left(\\theta \\right)}",
    ]


def test_definitions_are_shown_from_the_claims_record() -> None:
    import sympy as sp

    from softmax_dispersion.theory import definitions

    n, theta, e_j, lo, hi, total, c, root, x = sp.symbols("n theta e_j m M S c r x", real=True)
    others = definitions.Family(
        "others", (e_j,), n - 1, (sp.Le(lo, e_j), sp.Le(e_j, hi)), "the other logits"
    )
    record = (
        definitions.SumOver(total, sp.exp(e_j / theta), others, "their exponentials, summed"),
        definitions.Let(c, sp.exp((hi - lo) / theta), "the dispersion constant."),
        definitions.RealRoot(root, x**2 - 2, x, 1, 2, "the square root of 2"),
    )
    lines = claim_pages.definition_lines(record)
    assert lines[0].startswith("- {math}`e_{j} \\in \\text{others}`: the other logits")
    assert "{math}`n - 1` terms, each with {math}`m \\leq e_{j},\\ e_{j} \\leq M`" in lines[0]
    assert lines[1].startswith("- {math}`S = \\sum_{e_{j} \\in \\text{others}} e^{")
    assert lines[2] == ("- {math}`c = e^{\\frac{M - m}{\\theta}}`: the dispersion constant.")
    assert lines[3].startswith("- {math}`r`, the one real root in {math}`(1, 2)` of")
    # with the definitions, S, c and r are no longer parameters of a claim that uses them
    claim = SimpleNamespace(
        statement=sp.Le(total + c + root, n), assumptions=[], definitions=record
    )
    assert claim_pages.parameters(claim, []) == ["n"]


def test_every_symbol_of_t1_is_a_parameter_or_recorded_definition() -> None:
    t1 = next(claim for claim in theory.all_claims() if claim.id == "T1")
    conclusions = [step.conclusion for step in t1.proof()]
    # S, the sum of the other exponentials, is T1's definition, not a free parameter
    assert claim_pages.parameters(t1, conclusions) == ["M", "e_{k}", "m", "n", "\\theta"]
    shown = claim_pages.definition_lines(t1.definitions)
    assert shown[0].startswith("- {math}`e_{j} \\in \\text{others}`")
    assert shown[1].startswith("- {math}`S = \\sum_{e_{j} \\in \\text{others}}")


def test_a_claim_page_has_one_definitions_section_and_its_witness() -> None:
    t1 = next(claim for claim in theory.all_claims() if claim.id == "T1")
    result = t1.check({})
    page = claim_pages.claim_page(result, theory.FORMULAS, "versions")
    assert page.count("## Definitions") == 1
    for line in claim_pages.definition_lines(t1.definitions):
        assert line in page
    assert result.witness and "**Not vacuous:**" in page


@pytest.mark.parametrize(
    ("name", "latex"),
    [
        ("norm_Kx i", "\\mathit{norm}_{\\mathrm{Kx}\\ i}"),
        ("weighted_value_norms", "\\mathit{weighted}_{\\mathrm{value}\\ \\mathrm{norms}}"),
        ("e_max", "e_{\\mathrm{max}}"),
        ("beta_norm", "\\beta_{\\mathrm{norm}}"),
        ("e_k", "e_{k}"),
        ("theta", "\\theta"),
        ("dim", "\\mathit{dim}"),
        ("S_typical", "S_{\\mathrm{typical}}"),
        ("lamda", "\\lambda"),
        ("Ydot", "\\dot{Y}"),
        ("thetahat_max", "\\hat{\\theta}_{\\mathrm{max}}"),
    ],
)
def test_symbol_names_are_set_as_words(name: str, latex: str) -> None:
    assert claim_pages.symbol_latex(name) == latex


def test_tex_sets_every_symbol_of_an_expression_by_its_name() -> None:
    import sympy as sp

    norm, sigma = sp.symbols("norm_x sigma_q", real=True)
    assert claim_pages.tex(sp.Le(norm, 2 * sigma)) == "\\mathit{norm}_{x} \\leq 2 \\sigma_{q}"


def test_the_parameters_are_one_formula_each_so_that_the_line_wraps() -> None:
    t9 = next(claim for claim in theory.all_claims() if claim.id == "T9")
    page = claim_pages.claim_page(t9.check({}), theory.FORMULAS, "versions")
    (line,) = [line for line in page.splitlines() if "holds for all real values" in line]
    assert line.count("{math}`") == len(
        claim_pages.parameters(t9, [s.conclusion for s in t9.proof()])
    )
