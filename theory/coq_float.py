"""T12 in Flocq: the Coq statements of the floating-point theorems about softmax.

T12's sympy claim (:mod:`softmax_dispersion.theory.rounding_error`) is a first-order
analysis; its Coq counterpart is a rigorous theorem about softmax as it is computed in
a binary floating-point format with round to nearest (Flocq's ``FLT`` formats: binary64
is ``prec = 53, emin = −1074``, binary32 ``prec = 24, emin = −149``; one generic proof,
parametrised by ``prec`` and ``emin``).  This module prints those statements into the
generated ``Statements.v``; the proofs are the hand-written ``theory/coq/T12*.v``.

What is printed and what is hand-written
----------------------------------------
*Printed from the sympy theory* (one source of truth):

* ``T12_gamma k u`` from :data:`~softmax_dispersion.theory.rounding_error.gamma_recursive`
  (``γ_k = k·u/(1 − k·u)``, its ``n − 1`` replaced by ``k``);
* ``T12_<key>_bound`` from the rigorous bounds of
  :mod:`~softmax_dispersion.theory.rounding_error` (``softmax_rigorous_error_bound``,
  ``softmax_reciprocal_rigorous_error_bound``, ``exp_log_softmax_rigorous_error_bound``,
  ``exp_lse_rigorous_error_bound``), the bounds the theorems prove and the oracle's
  tolerance must cover;
* each theorem's side conditions on the numbers (``(n − 1)·u < 1``, the exp's absolute
  error small enough, ...), from the formulations' ``*_rigorous_conditions`` and the
  summation factor's domain.

Every printed expression is read back (:mod:`~softmax_dispersion.theory.coq_reader`'s
parser) and compared with its sympy source before it is written.

*Hand-written Coq* (:data:`FLOAT_MODEL` and the statement templates in
:data:`FORMULATIONS`): the floating-point model — ``fl`` (Flocq's ``round`` in
``FLT_exp emin prec`` with ``Znearest choice``: round to nearest with any tie-breaking
rule, ties-to-even being ``ZnearestE``), ``is_float`` (Flocq's ``generic_format``), the
summation tree ``sum_tree`` (any binary tree of additions over the computed terms, each
node rounded; ``tree_sum``, ``leaves``, ``tree_depth``), the exp hypothesis
``exp_accurate`` (the computed exp returns floats, ``exp_fl 0 = 1``, and
``|exp_fl x − e^x| <= exp_rel·e^x + exp_abs`` at every float ``x <= 0``: an explicit
hypothesis, not an axiom), the same for the computed log (``log_accurate``, at floats
``y >= 1``), and the shape of each statement (the computation, its binders and the
definitions of ``n``, ``u``, ``T``, the mean gap, ``p_i``, ``ln T``, and ``|e_max| <= top``).

There is no overflow in Flocq's ``FLT`` model (its exponents are unbounded above), so the
theorems speak of IEEE arithmetic where nothing overflows: the computed sum stays below
``n(1 + exp_rel + exp_abs)(1 + γ)``, but ``e_i − e_max`` (and ``e_max + log Ŝ``) overflow
for logits of both signs near the largest float, which the theorems do not cover.
Underflow is accounted for: sums below the normal range are exact, the exp's and the
log's errors have absolute parts, and a division's rounding an absolute half subnormal.

Examples
--------
>>> text = float_statements(["T12"])
>>> "Definition T12_statement : Prop" in text and "Inductive sum_tree" in text
True
>>> [f.key for f in FORMULATIONS.values()]
['max_shift', 'reciprocal', 'exp_log', 'exp_lse']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import sympy as sp

from softmax_dispersion.theory.coq import (
    CoqPrinter,
    CoqPrintError,
    StatementHook,
    coq_name,
    register_statement_hook,
)
from softmax_dispersion.theory.formulas import Formula
from softmax_dispersion.theory.kernel import Claim
from softmax_dispersion.theory.symbols import n

__all__ = [
    "ANY_ORDER_DEPTH",
    "BINARY_FORMATS",
    "FLOAT_CLAIM_IDS",
    "FLOAT_MODEL",
    "FORMULATIONS",
    "REQUIRES",
    "TIES_TO_EVEN",
    "Formulation",
    "coverage",
    "float_statements",
    "printed_definition",
    "printed_relation",
]

FLOAT_CLAIM_IDS: tuple[str, ...] = ("T12",)
"""The claims whose Coq statements this module prints (not the sympy printer)."""

FLOAT_MODEL = """\
(* ---- T12: softmax in floating point (printed by softmax_dispersion.theory.coq_float).
   The model below is hand-written; T12_gamma, the bounds and the side conditions of
   the statements are printed from the sympy formulas. ---- *)
(* Round to nearest (tie-breaking rule [choice]) in the binary format of precision
   [prec] and smallest exponent [emin]: binary64 is prec = 53, emin = -1074. *)
Definition fl (prec emin : Z) (choice : Z -> bool) (x : R) : R :=
  round radix2 (FLT_exp emin prec) (Znearest choice) x.

Definition is_float (prec emin : Z) (x : R) : Prop :=
  generic_format radix2 (FLT_exp emin prec) x.

(* A summation order: any binary tree of additions; each node is rounded. *)
Inductive sum_tree : Type :=
  | Leaf : R -> sum_tree
  | Node : sum_tree -> sum_tree -> sum_tree.

Fixpoint leaves (t : sum_tree) : list R :=
  match t with
  | Leaf x => x :: nil
  | Node l r => leaves l ++ leaves r
  end.

Fixpoint tree_depth (t : sum_tree) : nat :=
  match t with
  | Leaf _ => O
  | Node l r => S (Nat.max (tree_depth l) (tree_depth r))
  end.

Fixpoint tree_sum (prec emin : Z) (choice : Z -> bool) (t : sum_tree) : R :=
  match t with
  | Leaf x => x
  | Node l r =>
      fl prec emin choice (tree_sum prec emin choice l + tree_sum prec emin choice r)
  end.

(* The accuracy of the computed exp, a hypothesis of each theorem (not an axiom): it
   returns floats, exp 0 = 1 exactly, and a relative plus an absolute error at every
   float x <= 0 (an exp of k ulps: exp_rel = 2 k u, exp_abs = k 2^emin). *)
Definition exp_accurate (prec emin : Z) (exp_fl : R -> R) (exp_rel exp_abs : R) : Prop :=
  exp_fl 0 = 1 /\\
  forall x : R, is_float prec emin x -> x <= 0 ->
  is_float prec emin (exp_fl x) /\\ 0 <= exp_fl x /\\
  Rabs (exp_fl x - exp x) <= exp_rel * exp x + exp_abs.

(* The accuracy of the computed log at every float y >= 1 (the log of a computed sum). *)
Definition log_accurate (prec emin : Z) (log_fl : R -> R) (log_rel log_abs : R) : Prop :=
  forall y : R, is_float prec emin y -> 1 <= y ->
  is_float prec emin (log_fl y) /\\ 0 <= log_fl y /\\
  Rabs (log_fl y - ln y) <= log_rel * ln y + log_abs.
"""
"""The hand-written floating-point model, written into ``Statements.v`` before the
printed definitions (its ``Require`` lines are the hook's :data:`REQUIRES`)."""

REQUIRES: tuple[str, ...] = (
    "From Coq Require Import Permutation.",
    "From Flocq Require Import Core.",
)
"""The libraries T12's statements need in ``Statements.v``."""

# The statement templates: hand-written Coq.  The side conditions and the bound are
# printed into them.  Each hypothesis is one entry, so that a statement (forall …,
# h1 -> … -> conclusion) and its satisfiability (exists …, h1 /\ …) share them.
_BINDERS = (
    ("exp_fl", "R -> R"),
    ("es", "list R"),
    ("e_max e_i", "R"),
    ("t", "sum_tree"),
)
_DEPTH_BINDER = ("d", "nat")
_REALS = "exp_rel exp_abs n u tiny T mean_gap p_i gap_i"
_HYPOTHESES = (
    "(forall e : R, In e es -> is_float prec emin e)",
    "In e_max es",
    "(forall e : R, In e es -> e <= e_max)",
    "In e_i es",
    "exp_accurate prec emin exp_fl exp_rel exp_abs",
    "0 <= exp_rel",
    "0 <= exp_abs",
    "Permutation (leaves t)\n    (map (fun e : R => exp_fl (fl prec emin choice (e - e_max))) es)",
)
_DEPTH_HYPOTHESES = ("(tree_depth t <= d)%nat", "depth = INR d")
_DEFINITIONS = (
    "n = INR (length es)",
    "u = bpow radix2 (- prec)",
    "tiny = bpow radix2 emin",
    "T = fold_right Rplus 0 (map (fun e : R => exp (e - e_max)) es)",
    "mean_gap = fold_right Rplus 0 (map (fun e : R => exp (e - e_max) / T * (e_max - e)) es)",
    "p_i = exp (e_i - e_max) / T",
    "gap_i = e_max - e_i",
)

_MAX_SHIFT_CONCLUSION = """\
  let p_hat := fl prec emin choice
    (exp_fl (fl prec emin choice (e_i - e_max)) / tree_sum prec emin choice t) in
  is_float prec emin p_hat /\\ 0 <= p_hat <= 1 /\\
  Rabs (p_hat - p_i) <= {bound}."""

_RECIPROCAL_CONCLUSION = """\
  let p_hat := fl prec emin choice
    (exp_fl (fl prec emin choice (e_i - e_max)) *
     fl prec emin choice (1 / tree_sum prec emin choice t)) in
  is_float prec emin p_hat /\\ 0 <= p_hat /\\
  Rabs (p_hat - p_i) <= {bound}."""

_EXP_LOG_CONCLUSION = """\
  let p_hat := exp_fl (fl prec emin choice
    (fl prec emin choice (e_i - e_max) - log_fl (tree_sum prec emin choice t))) in
  is_float prec emin p_hat /\\ 0 <= p_hat /\\
  Rabs (p_hat - p_i) <= {bound}."""

_EXP_LSE_CONCLUSION = """\
  let p_hat := exp_fl (fl prec emin choice
    (e_i - fl prec emin choice (e_max + log_fl (tree_sum prec emin choice t)))) in
  is_float prec emin p_hat /\\ 0 <= p_hat /\\
  Rabs (p_hat - p_i) <= {bound}."""

BINARY_FORMATS: dict[str, tuple[int, int]] = {"binary64": (53, -1074), "binary32": (24, -149)}
"""The instances stated in Coq: ``(prec, emin)`` of each IEEE 754 format, in Flocq's
convention (``emin`` the exponent of the smallest subnormal, ``2**emin``)."""

TIES_TO_EVEN = "(fun z : Z => negb (Z.even z))"
"""The tie-breaking rule of IEEE 754's default rounding (Flocq's ``ZnearestE``)."""


@dataclass(frozen=True)
class Formulation:
    """One formulation of softmax that T12's Coq theorems cover.

    Attributes
    ----------
    key
        The Coq names' infix: ``T12_<key>_statement`` (any summation order) and
        ``T12_<key>_depth_statement`` (a tree of depth ``d``, with ``γ_d``).
    title
        What the formulation computes, for the reports.
    bound
        The sympy formula the theorems prove; its ``gamma`` argument is ``γ_{n−1}``
        (any order) or ``γ_d`` (depth ``d``).
    conditions
        The side conditions on the numbers (besides the summation factor's), sympy
        relations over :attr:`bound`'s arguments.
    computation
        The hand-written conclusion: the computed value ``p_hat`` and what is proved of
        it, with ``{bound}`` where the printed bound goes.
    functions, reals, hypotheses, definitions
        Hand-written binders and hypotheses of this formulation beyond the common ones
        (the computed log and its accuracy, for the log-softmax forms).
    """

    key: str
    title: str
    bound: Formula
    conditions: tuple[sp.Basic, ...]
    computation: str
    functions: tuple[tuple[str, str], ...] = ()
    reals: str = ""
    hypotheses: tuple[str, ...] = ()
    definitions: tuple[str, ...] = ()


def _max_shift() -> Formulation:
    from softmax_dispersion.theory.rounding_error import (
        softmax_rigorous_conditions,
        softmax_rigorous_error_bound,
    )

    return Formulation(
        key="max_shift",
        title="max-shift then divide",
        bound=softmax_rigorous_error_bound,
        conditions=softmax_rigorous_conditions,
        computation=_MAX_SHIFT_CONCLUSION,
    )


def _reciprocal() -> Formulation:
    from softmax_dispersion.theory.rounding_error import (
        softmax_reciprocal_rigorous_conditions,
        softmax_reciprocal_rigorous_error_bound,
    )

    return Formulation(
        key="reciprocal",
        title="max-shift then multiply by the rounded reciprocal of the sum",
        bound=softmax_reciprocal_rigorous_error_bound,
        conditions=softmax_reciprocal_rigorous_conditions,
        computation=_RECIPROCAL_CONCLUSION,
    )


def _exp_log() -> Formulation:
    from softmax_dispersion.theory.rounding_error import (
        exp_log_softmax_rigorous_conditions,
        exp_log_softmax_rigorous_error_bound,
    )

    return Formulation(
        key="exp_log",
        title="exp of the max-shifted log-softmax",
        bound=exp_log_softmax_rigorous_error_bound,
        conditions=exp_log_softmax_rigorous_conditions,
        computation=_EXP_LOG_CONCLUSION,
        functions=(("log_fl", "R -> R"),),
        reals="log_rel log_abs log_sum",
        hypotheses=(
            "log_accurate prec emin log_fl log_rel log_abs",
            "0 <= log_rel",
            "0 <= log_abs",
        ),
        definitions=("log_sum = ln T",),
    )


def _exp_lse() -> Formulation:
    from softmax_dispersion.theory.rounding_error import (
        exp_lse_rigorous_conditions,
        exp_lse_rigorous_error_bound,
    )

    return Formulation(
        key="exp_lse",
        title="exp of the logits minus their log-sum-exp, rounded first",
        bound=exp_lse_rigorous_error_bound,
        conditions=exp_lse_rigorous_conditions,
        computation=_EXP_LSE_CONCLUSION,
        functions=(("log_fl", "R -> R"),),
        reals="log_rel log_abs log_sum top",
        hypotheses=(
            "log_accurate prec emin log_fl log_rel log_abs",
            "0 <= log_rel",
            "0 <= log_abs",
            "Rabs e_max <= top",
        ),
        definitions=("log_sum = ln T",),
    )


FORMULATIONS: dict[str, Formulation] = {
    "max_shift": _max_shift(),
    "reciprocal": _reciprocal(),
    "exp_log": _exp_log(),
    "exp_lse": _exp_lse(),
}
"""The formulations with a Coq theorem, by key (a test swaps one for a false sibling)."""

_k = sp.Symbol("k", real=True)
_depth = sp.Symbol("depth", real=True)

ANY_ORDER_DEPTH: sp.Expr = n - 1
"""The depth every summation tree of ``n`` leaves stays within: ``γ_{n−1}`` covers any
order (a test swaps it for ``n − 2``, a false sibling)."""


def _gamma() -> tuple[sp.Expr, sp.Symbol]:
    """``γ_k``: the package's ``γ_{n−1}`` with ``n − 1`` replaced by ``k``; and its ``u``."""
    from softmax_dispersion.theory.rounding_error import gamma_recursive, u

    return gamma_recursive.expr.xreplace({n: _k + 1}), u


def printed_definition(name: str, args: Sequence[sp.Symbol], expr: sp.Expr) -> str:
    """``Definition name (a b … : R) : R := expr.``, checked by reading it back.

    Raises
    ------
    CoqPrintError
        When the printed expression does not read back as ``expr``.

    Examples
    --------
    >>> import sympy as sp
    >>> x, y = sp.symbols("x y", real=True)
    >>> printed_definition("F", (x, y), x / (1 - y))
    'Definition F (x y : R) : R := x / (1 - y).'
    """
    names = _names(args)
    text = CoqPrinter(names).expr(expr)
    _check_reads_back(names, text, expr)
    binders = " ".join(names[a] for a in args)
    return f"Definition {name} ({binders} : R) : R := {text}."


def _names(symbols: Iterable[sp.Symbol]) -> dict[sp.Symbol, str]:
    names: dict[sp.Symbol, str] = {}
    for symbol in symbols:
        names[symbol] = coq_name(symbol, names.values())
        if names[symbol] != symbol.name:
            raise CoqPrintError(f"{symbol.name} is no plain Coq identifier")
    return names


def _read_back(names: dict[sp.Symbol, str], proposition: str) -> sp.Basic:
    from softmax_dispersion.theory.coq_reader import names_resolver, read_statement

    binders = " ".join(sorted(names.values()))
    text = f"Definition Check_statement : Prop := forall {binders} : R, {proposition}."
    return read_statement(text, names_resolver(names)).conclusion


def _check_reads_back(names: dict[sp.Symbol, str], text: str, expr: sp.Expr) -> None:
    read = _read_back(names, f"{text} = 0")
    if not isinstance(read, sp.Equality) or sp.srepr(read.lhs) != sp.srepr(expr):
        raise CoqPrintError(f"{text} does not read back as {sp.sstr(expr)}")


def printed_relation(names: dict[sp.Symbol, str], relation: sp.Basic) -> str:
    """A side condition printed in Coq, checked by reading it back.

    Examples
    --------
    >>> import sympy as sp
    >>> u = sp.Symbol("u", real=True)
    >>> printed_relation({u: "u"}, sp.Lt(2 * u, 1))
    '2 * u < 1'
    """
    text = CoqPrinter(names).prop(relation)
    if sp.srepr(_read_back(names, text)) != sp.srepr(relation):
        raise CoqPrintError(f"{text} does not read back as {sp.sstr(relation)}")
    return text


def _parts(formulation: Formulation, *, depth: bool) -> tuple[str, list[str], str]:
    """The binders, the hypotheses (hand-written, then printed) and the conclusion."""
    gamma_expr, u = _gamma()
    k_value = _depth if depth else ANY_ORDER_DEPTH
    bound = formulation.bound
    names = _names(sorted({*bound.args, _depth, n, u}, key=lambda s: s.name))
    printer = CoqPrinter(names)
    # γ_k's domain first; a condition on γ itself reads γ_k written out
    gamma_k = {a: gamma_expr.xreplace({_k: k_value}) for a in bound.args if a.name == "gamma"}
    conditions = [sp.Lt(k_value * u, 1), *(c.xreplace(gamma_k) for c in formulation.conditions)]
    gamma_text = f"(T12_gamma {printer._wrap(printer._expr(k_value), 0)} u)"
    arguments = [gamma_text if a.name == "gamma" else names[a] for a in bound.args]
    application = f"T12_{formulation.key}_bound {' '.join(arguments)}"
    binders = [*_BINDERS, *formulation.functions, *([_DEPTH_BINDER] if depth else [])]
    reals = " ".join(r for r in (_REALS, formulation.reals, "depth" if depth else "") if r)
    binder_text = " ".join(f"({names_} : {kind})" for names_, kind in binders)
    hypotheses = [
        *_HYPOTHESES,
        *formulation.hypotheses,
        *(_DEPTH_HYPOTHESES if depth else ()),
        *_DEFINITIONS,
        *formulation.definitions,
        *(printed_relation(names, c) for c in conditions),
    ]
    return f"{binder_text}\n    ({reals} : R)", hypotheses, application


def _statement(formulation: Formulation, *, depth: bool) -> str:
    """``T12_<key>[_depth]_in prec emin choice`` (a template with its printed parts) and
    ``T12_<key>[_depth]_statement``, the same for every format with ``prec > 1``."""
    binders, hypotheses, application = _parts(formulation, depth=depth)
    name = f"T12_{formulation.key}{'_depth' if depth else ''}"
    premises = "".join(f"  {h} ->\n" for h in hypotheses)
    conclusion = formulation.computation.format(bound=application)
    return (
        f"Definition {name}_in (prec emin : Z) (choice : Z -> bool) : Prop :=\n"
        f"  forall {binders},\n{premises}{conclusion}\n\n"
        f"Definition {name}_statement : Prop :=\n"
        f"  forall (prec emin : Z) (choice : Z -> bool),\n"
        f"  (1 < prec)%Z -> {name}_in prec emin choice."
    )


def _satisfiable(formulation: Formulation) -> str:
    """``T12_<key>_satisfiable_statement``: the hypotheses hold together, in every format
    with ``prec > 1`` and ``emin + prec < 0`` (so that no theorem is vacuously true)."""
    binders, hypotheses, _ = _parts(formulation, depth=False)
    name = f"T12_{formulation.key}_satisfiable"
    conjunction = " /\\\n  ".join(hypotheses)
    return (
        f"Definition {name}_statement : Prop :=\n"
        f"  forall (prec emin : Z) (choice : Z -> bool), (1 < prec)%Z -> (emin + prec < 0)%Z ->\n"
        f"  exists {binders},\n  {conjunction}."
    )


def float_statements(claim_ids: Sequence[str]) -> str:
    """The ``Statements.v`` section of the floating-point claims among ``claim_ids``.

    Empty when none of them is one (:data:`FLOAT_CLAIM_IDS`); otherwise the
    hand-written model, the printed ``T12_gamma`` and bounds, one statement per
    formulation and summation form, and ``T12_statement``, their conjunction.

    Raises
    ------
    CoqPrintError
        When a printed part does not read back as its sympy source.

    Examples
    --------
    >>> float_statements(["T1"])
    ''
    >>> "T12_max_shift_depth_statement" in float_statements(["T12"])
    True
    """
    if "T12" not in claim_ids:
        return ""
    gamma_expr, u = _gamma()
    parts = [FLOAT_MODEL, printed_definition("T12_gamma", (_k, u), gamma_expr)]
    names: list[str] = []
    theorems: list[str] = []
    for formulation in FORMULATIONS.values():
        bound = formulation.bound
        parts.append(printed_definition(f"T12_{formulation.key}_bound", bound.args, bound.expr))
        for depth in (False, True):
            parts.append(_statement(formulation, depth=depth))
            theorems.append(f"T12_{formulation.key}{'_depth' if depth else ''}")
            names.append(f"{theorems[-1]}_statement")
        parts.append(_satisfiable(formulation))
        names.append(f"T12_{formulation.key}_satisfiable_statement")
    for format_name, (prec, emin) in BINARY_FORMATS.items():
        instances = " /\\\n  ".join(
            f"{theorem}_in {prec} ({emin}) {TIES_TO_EVEN}" for theorem in theorems
        )
        parts.append(f"Definition T12_{format_name}_statement : Prop :=\n  {instances}.")
        names.append(f"T12_{format_name}_statement")
    conjunction = " /\\\n  ".join(names)
    parts.append(f"Definition T12_statement : Prop :=\n  {conjunction}.")
    return "\n" + "\n\n".join(parts) + "\n"


def coverage(claim_id: str) -> str:
    """What a floating-point claim's Coq theorem covers, for the reports.

    Examples
    --------
    >>> coverage("T12").split(": ")[1].split("; ")[0]
    'max-shift then divide'
    >>> coverage("T1")
    ''
    """
    if claim_id not in FLOAT_CLAIM_IDS:
        return ""
    titles = "; ".join(f.title for f in FORMULATIONS.values())
    formats = ", ".join(BINARY_FORMATS)
    return (
        f"Flocq, round to nearest, any binary format ({formats} as instances), "
        f"any summation tree: {titles}"
    )


def _print_statement(claim: Claim) -> str:
    return float_statements([claim.id]).strip()


def _check_statement(claim: Claim, text: str) -> list[str]:
    """Where ``text`` differs from the statement printed from ``claim``'s formulas."""
    try:
        printed = _print_statement(claim)
    except CoqPrintError as error:
        return [str(error)]
    if text.strip() != printed:
        return [f"{claim.id}'s Coq statement is not the one printed from its formulas"]
    return []


for _claim_id in FLOAT_CLAIM_IDS:
    register_statement_hook(
        _claim_id,
        StatementHook(_print_statement, _check_statement, REQUIRES, coverage(_claim_id)),
    )
