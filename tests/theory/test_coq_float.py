"""T12 in Flocq: statements printed from the theory, kernel-checked, false siblings refused.

The Coq tests need ``coqc`` with Flocq (skipped without it; marked slow).  A false
sibling swaps a printed part of the statement (the bound's formula, the summation depth)
through :data:`~softmax_dispersion.theory.coq_float.FORMULATIONS` or
:data:`~softmax_dispersion.theory.coq_float.ANY_ORDER_DEPTH` and must make ``T12.v``
itself fail, not the statements or a lemma file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest
import sympy as sp

from softmax_dispersion.theory import coq_float
from softmax_dispersion.theory.coq import CoqPrintError
from softmax_dispersion.theory.coq_float import (
    BINARY_FORMATS,
    FLOAT_MODEL,
    FORMULATIONS,
    Formulation,
    coverage,
    float_statements,
    printed_definition,
)
from softmax_dispersion.theory.coq_proofs import (
    COQ_INSTALL,
    REAL_AXIOMS,
    CoqVerdict,
    export_project,
    find_coqc,
    formalised_ids,
    kernel_check,
    proof_sources,
)
from softmax_dispersion.theory.formulas import Formula
from softmax_dispersion.theory.rounding_error import (
    exp_abs,
    exp_log_softmax_relative_error_bound,
    exp_log_softmax_rigorous_error_bound,
    exp_rel,
    gamma,
    gamma_recursive,
    gap_i,
    log_rel,
    mean_gap,
    p_exact,
    softmax_reciprocal_relative_error_bound,
    softmax_reciprocal_rigorous_error_bound,
    softmax_relative_error_bound,
    softmax_rigorous_error_bound,
    tiny,
    top,
    u,
)
from softmax_dispersion.theory.symbols import n

from .conftest import built_once

# One worker compiles the project once: built_once shares it (the group keeps these tests
# on one worker where xdist can, under CI's --dist loadgroup).
pytestmark = pytest.mark.xdist_group("coq_float")

needs_coq = pytest.mark.skipif(find_coqc() is None, reason=f"coqc not found ({COQ_INSTALL})")

# -- the printed statements ----------------------------------------------------------------


def test_t12_is_formalised_and_printed_with_its_model() -> None:
    assert "T12" in formalised_ids()
    text = float_statements(["T12"])
    assert FLOAT_MODEL in text
    for formulation in FORMULATIONS.values():
        key = formulation.key
        for name in (f"T12_{key}", f"T12_{key}_depth"):
            assert f"Definition {name}_in (prec emin : Z)" in text
            assert f"Definition {name}_statement : Prop" in text
        assert f"Definition T12_{key}_satisfiable_statement : Prop" in text
        assert f"Definition T12_{key}_bound (" in text
    conjunction = text[text.index("Definition T12_statement : Prop") :]
    for format_name in BINARY_FORMATS:
        assert f"T12_{format_name}_statement" in conjunction
    assert float_statements(["T1", "T2"]) == ""


def test_the_printed_bounds_are_the_theory_formulas() -> None:
    text = float_statements(["T12"])
    for formulation in FORMULATIONS.values():
        bound = formulation.bound
        printed = printed_definition(f"T12_{formulation.key}_bound", bound.args, bound.expr)
        assert printed in text
    # T12_gamma is the package's γ_{n−1} with n − 1 = k
    k = sp.Symbol("k", real=True)
    gamma_k = gamma_recursive.expr.xreplace({n: k + 1})
    assert printed_definition("T12_gamma", (k, u), gamma_k) in text
    assert sp.simplify(gamma_k - k * u / (1 - k * u)) == 0


def test_the_side_conditions_are_printed_from_the_theory() -> None:
    text = float_statements(["T12"])
    assert "u * (n - 1) < 1 ->" in text  # γ_{n−1}'s domain, any order
    assert "depth * u < 1 ->" in text  # γ_d's domain, a tree of depth d
    assert "exp_abs * n * exp (mean_gap * u) < 1 - exp_rel ->" in text
    assert "2 * exp_abs * u <= tiny ->" in text
    assert "2 * u / tiny ->" in text  # the reciprocal's normal range


def test_a_misprinted_bound_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # A printer that drops a term: the text no longer reads back as the formula.
    original = coq_float.CoqPrinter.expr

    def dropping(self: coq_float.CoqPrinter, e: sp.Basic) -> str:
        return original(self, e).replace(" + tiny / 2", "")

    monkeypatch.setattr(coq_float.CoqPrinter, "expr", dropping)
    with pytest.raises(CoqPrintError, match="does not read back"):
        float_statements(["T12"])


def test_the_instances_are_the_package_formats() -> None:
    from softmax_dispersion.numerics.rounding import FORMATS

    for format_name, dtype in (("binary64", "float64"), ("binary32", "float32")):
        prec, emin = BINARY_FORMATS[format_name]
        fmt = FORMATS[dtype]
        assert prec == fmt.precision
        assert 2.0**emin == fmt.smallest_subnormal
        assert 2.0**-prec == fmt.unit_roundoff


def test_coverage_names_every_formulation() -> None:
    assert all(f.title in coverage("T12") for f in FORMULATIONS.values())
    assert "binary64" in coverage("T12") and "summation tree" in coverage("T12")
    assert coverage("T2") == ""


def _first_order(formula: Formula) -> sp.Expr:
    """The bound's relative part to first order in (u, exp_rel, gamma), at p_i = 1."""
    eps = sp.Symbol("eps", positive=True)
    relative = formula.expr.xreplace({p_exact: 1, exp_abs: 0, tiny: 0})
    scaled = relative.xreplace({u: eps * u, exp_rel: eps * exp_rel, gamma: eps * gamma})
    return sp.expand(sp.diff(scaled, eps).subs(eps, 0))


@pytest.mark.parametrize(
    ("rigorous", "first_order"),
    [
        (softmax_rigorous_error_bound, softmax_relative_error_bound),
        (softmax_reciprocal_rigorous_error_bound, softmax_reciprocal_relative_error_bound),
    ],
)
def test_the_proved_bounds_are_t12s_first_order_bounds_to_first_order(
    rigorous: Formula, first_order: Formula
) -> None:
    # T12's sympy claim: (gap_i + mean_gap)·a + 4·exp_ulps·u + gamma + u (or + 2u), with
    # a = u (θ = 1) and 2·exp_ulps·u = exp_rel.
    at = {"arg_error": u, "exp_ulps": exp_rel / (2 * u)}
    symbols = {s.name: s for s in first_order.args}
    expected = first_order.expr.xreplace({symbols[k]: v for k, v in at.items()})
    assert sp.expand(_first_order(rigorous) - expected) == 0
    # a bound missing a term is told apart
    assert sp.expand(_first_order(rigorous) - expected.xreplace({gap_i: 0})) != 0


def test_exp_of_the_log_softmax_is_t12s_first_order_bound_to_first_order() -> None:
    # Its bound takes the larger of the sum's two sides (a Max, tied to first order), so
    # compare numbers: the rigorous relative part over the first-order one is 1 + O(u).
    u_value = sp.Rational(1, 2**53)
    for gap, mean, log_s, size in ((0, 0, 0, 1), (3, 1, 2, 10), (40, 5, 3, 1000)):
        gamma_value = gamma_recursive(n=size, u=u_value)
        rigorous = exp_log_softmax_rigorous_error_bound(
            p_i=1,
            gap_i=gap,
            mean_gap=mean,
            log_sum=log_s,
            n=size,
            u=u_value,
            exp_rel=4 * u_value,
            exp_abs=0,
            log_rel=4 * u_value,
            log_abs=0,
            gamma=gamma_value,
        )
        first = exp_log_softmax_relative_error_bound(
            gap_i=gap,
            mean_gap=mean,
            log_sum=log_s,
            u=u_value,
            exp_ulps=2,
            log_ulps=2,
            gamma=gamma_value,
            arg_error=u_value,
        )
        assert abs(float(rigorous / first) - 1) < 1e-12


def test_the_statement_defines_the_mean_gap_with_the_exact_weights() -> None:
    # The printed statement defines the mean gap with the exact weights p_j, as the
    # oracle's tolerance computes it (Σ p_j g_j).
    text = float_statements(["T12"])
    definition = (
        "mean_gap = fold_right Rplus 0 (map (fun e : R => exp (e - e_max) / T * (e_max - e)) es)"
    )
    assert definition in text
    assert mean_gap in softmax_rigorous_error_bound.args


def test_export_ships_t12_and_its_lemmas_in_order(tmp_path: Path) -> None:
    written = {p.name for p in export_project(tmp_path)}
    assert {"T12.v", "T12_Reals.v", "T12_Rounding.v"} <= written
    listed = (tmp_path / "_CoqProject").read_text().split()
    assert listed.index("Statements.v") < listed.index("T12_Rounding.v") < listed.index(
        "T12.v"
    ) and listed.index("T12_Reals.v") < listed.index("T12_Rounding.v")
    assert "Definition T12_statement : Prop" in (tmp_path / "Statements.v").read_text()
    assert "Theorem T12 : T12_statement." in (tmp_path / "T12.v").read_text()


# -- with Coq ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def _compiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, CoqVerdict]:
    return built_once(
        tmp_path_factory, "coq_float", lambda folder: kernel_check(["T12"], directory=folder)[0]
    )


@pytest.fixture(scope="module")
def coq_folder(_compiled: tuple[Path, CoqVerdict]) -> Path:
    return _compiled[0]


@pytest.fixture(scope="module")
def t12_verdict(_compiled: tuple[Path, CoqVerdict]) -> CoqVerdict:
    return _compiled[1]


@pytest.mark.slow
@needs_coq
def test_t12_is_kernel_checked_on_the_real_number_axioms_alone(t12_verdict: CoqVerdict) -> None:
    assert t12_verdict.status == "kernel-checked", t12_verdict.detail
    assert set(t12_verdict.assumptions) == set(REAL_AXIOMS)  # Flocq adds none
    assert t12_verdict.detail == coverage("T12")
    assert {"T12_Reals.v", "T12_Rounding.v", "T12.v"} <= set(t12_verdict.files)


def _bound_changed(key: str, change: Callable[[sp.Expr], sp.Expr]) -> Formulation:
    formulation = FORMULATIONS[key]
    old = formulation.bound
    new = Formula(old.name, change(old.expr), old.args, old.description)
    assert new.expr != old.expr
    return dataclasses.replace(formulation, bound=new)


def _without_division_rounding(expr: sp.Expr) -> sp.Expr:
    return expr.xreplace({1 + u: sp.Integer(1)})


def _one_reciprocal_rounding(expr: sp.Expr) -> sp.Expr:
    return expr.xreplace({(1 + u) ** 2: 1 + u})


SIBLINGS: dict[str, Callable[[pytest.MonkeyPatch], None]] = {
    "T12: max-shift without the exp's relative error": lambda mp: mp.setitem(
        FORMULATIONS, "max_shift", _bound_changed("max_shift", lambda e: e.xreplace({exp_rel: 0}))
    ),
    "T12: max-shift without the division's rounding": lambda mp: mp.setitem(
        FORMULATIONS, "max_shift", _bound_changed("max_shift", _without_division_rounding)
    ),
    "T12: max-shift without the division's half subnormal": lambda mp: mp.setitem(
        FORMULATIONS, "max_shift", _bound_changed("max_shift", lambda e: e.xreplace({tiny: 0}))
    ),
    "T12: reciprocal with one rounding of the two": lambda mp: mp.setitem(
        FORMULATIONS, "reciprocal", _bound_changed("reciprocal", _one_reciprocal_rounding)
    ),
    "T12: exp of the log-softmax without the log's relative error": lambda mp: mp.setitem(
        FORMULATIONS, "exp_log", _bound_changed("exp_log", lambda e: e.xreplace({log_rel: 0}))
    ),
    "T12: log-sum-exp first without the rounding of e_max + log S": lambda mp: mp.setitem(
        FORMULATIONS, "exp_lse", _bound_changed("exp_lse", lambda e: e.xreplace({top: 0}))
    ),
    "T12: any order with γ_{n−2} instead of γ_{n−1}": lambda mp: mp.setattr(
        coq_float, "ANY_ORDER_DEPTH", n - 2
    ),
    "T12: twice the bound (weaker, true): the proof is tied to the printed bound": lambda mp: (
        mp.setitem(FORMULATIONS, "max_shift", _bound_changed("max_shift", lambda e: 2 * e))
    ),
}


@pytest.mark.slow
@needs_coq
@pytest.mark.parametrize("name", sorted(SIBLINGS))
def test_false_sibling_fails_in_coq(
    t12_verdict: CoqVerdict, coq_folder: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    assert t12_verdict.kernel_checked  # the true statement was proved
    before = float_statements(["T12"])
    SIBLINGS[name](monkeypatch)
    assert float_statements(["T12"]) != before  # the printed statement changed
    [verdict] = kernel_check(["T12"], directory=coq_folder)
    assert verdict.status == "failed"
    # T12's own proof fails, not the statements or a lemma file
    assert verdict.detail.startswith("T12.v: "), verdict.detail
    assert "Error" in verdict.detail


_T12_BY_AXIOM = """From Coq Require Import Reals.
From SoftmaxDispersion Require Import Statements T12_Reals T12_Rounding.
Axiom cheat : T12_statement.
Theorem T12 : T12_statement.
Proof. exact cheat. Qed.
"""


@pytest.mark.slow
@needs_coq
def test_an_axiom_in_place_of_the_proof_is_refused(
    t12_verdict: CoqVerdict, coq_folder: Path
) -> None:
    assert t12_verdict.kernel_checked
    sources = {**proof_sources(), "T12.v": _T12_BY_AXIOM}
    [verdict] = kernel_check(["T12"], directory=coq_folder, sources=sources)
    assert verdict.status == "failed"
    assert "SoftmaxDispersion.T12.cheat" in verdict.detail or "Axiom" in verdict.detail
