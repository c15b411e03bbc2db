"""Rules of calculus: monotonicity from a derivative's sign, and derivatives.

:class:`Monotone` (the mean value theorem, with continuity on the closed interval
decided), :class:`SumDerivative` (a finite sum's derivative, term by term: linearity)
and :class:`Differentiate` (the sum, product, quotient and chain rules, with the
derivatives of applied functions taken from the facts).  Derivatives are the kernel's
own (:func:`~softmax_dispersion.theory.terms.derivative`, on terms); all rules share one
smoothness check: the expression is built from ``+``, ``*``, integer powers, ``exp`` and
``log``, and z3 must show every denominator non-zero and every logarithm's argument
positive where the rule needs it.  Any other symbol (besides a sum's index) must be
declared constant: the conclusion is then a partial derivative, and an undeclared one
could hide a dependence on the variable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

import sympy as sp

from softmax_dispersion.theory import terms
from softmax_dispersion.theory._core import (
    Context,
    FrozenStep,
    ProofError,
    Step,
    frozen_inputs,
    held_fixed,
)
from softmax_dispersion.theory._deciders import decide_identity, require_inputs_defined
from softmax_dispersion.theory.definitions import Definitions, SumAt, SumOver
from softmax_dispersion.theory.rules import ResolvedSum, register, resolve
from softmax_dispersion.theory.terms import NotDifferentiable, Term, show

__all__ = ["Differentiate", "Monotone", "SumDerivative"]

SumLike = SumOver | SumAt


def _derivative(expr: Term, var: str) -> Term:
    try:
        return terms.derivative(expr, var)
    except NotDifferentiable as error:
        raise ProofError(str(error)) from None


def _smoothness_conditions(
    expr: Term, var: str, point: Term | None, values: Mapping[Term, Term]
) -> list[Term]:
    """What makes ``expr`` differentiable in ``var`` at ``point``, or a :class:`ProofError`.

    ``expr`` may use numbers, symbols, ``+``, ``*``, integer powers, ``exp``, ``log`` and
    functions applied to ``var`` alone (whose differentiability the caller takes from
    the facts).  A negative power needs a non-zero base, ``log`` a positive argument; the
    conditions are read at ``point`` (``var`` itself when ``None``) with ``values`` (known
    values of the applied functions there) put in.  They are open conditions on
    continuous functions, so where they hold they hold on a neighbourhood, on which
    ``expr`` is then smooth.
    """

    def at(arg: Term) -> Term:
        if point is None:
            return arg
        moved = terms.substitute(arg, {var: point})
        for known, value in values.items():
            moved = terms.replace(moved, known, value)
        return moved

    conditions: list[Term] = []
    for node in terms.walk(expr):
        op = node[0]
        if op in ("num", "pi", "E", "sym", "add", "mul", "exp"):
            continue
        if op == "app" and node.children == (terms.sym(var),):
            continue
        k = terms.integer_exponent(node)
        if k is not None:
            if k < 0:
                conditions.append(terms.rel("ne", at(node[2]), terms.ZERO))
            continue
        if op == "log":
            conditions.append(terms.rel("gt", at(node[2]), terms.ZERO))
            continue
        # Non-integer powers are smooth only for a positive base; none of the claims
        # needs them, so they are refused outright rather than given a condition.
        raise ProofError(f"{show(node)} is not known to be differentiable")
    return conditions


def _require_smooth(
    context: Context, expr: Term, var: str, point: Term | None, values: Mapping[Term, Term]
) -> None:
    """The facts imply (z3) that ``expr`` is differentiable in ``var`` at ``point``."""
    conditions = _smoothness_conditions(expr, var, point, values)
    if conditions:
        context.require(terms.conj(*conditions), "differentiability (denominators, logarithms)")


def _check_constants(var: str, constants: Sequence[str]) -> None:
    """The variable is not held constant, and no constant is declared twice."""
    if var in constants:
        raise ProofError(f"{var} cannot be held constant while differentiating in it")
    if len(set(constants)) != len(constants):
        raise ProofError("a constant is declared twice")


def _check_held_constant(expr: Term, var: str, allowed: set[str], constants: Sequence[str]) -> None:
    """Every symbol of ``expr`` other than ``var`` is allowed or declared constant.

    A symbol that is neither would be held constant silently, and it may stand for a
    quantity that varies with ``var`` (a named sum, say): the derivative would then be a
    partial one where a total one is meant.  Declaring it in ``constants`` says that the
    partial derivative is the one meant.
    """
    others = terms.free_names(expr) - {var} - allowed - set(constants)
    if others:
        raise ProofError(
            f"{show(expr)} depends on {sorted(others)}, which would be held constant: write "
            f"what varies with {var} as a function of it, or declare the symbols constant"
        )


def _check_point(point: Term | None, value: Term | None, var: str, index: set[str]) -> None:
    """The point, and the value at it, are fixed: free of ``var`` and of the index."""
    for what, expr in (("the point", point), ("the value at the point", value)):
        if expr is None:
            continue
        if var in terms.free_names(expr):
            raise ProofError(f"{what} depends on {var}")
        if terms.free_names(expr) & index:
            raise ProofError(f"{what} depends on the summation index")


def _at(expr: Term, var: str, point: Term | None) -> Term:
    return expr if point is None else terms.substitute(expr, {var: point})


# --------------------------------------------------------------------------------------
# Monotone


@dataclass(frozen=True)
class Monotone(Step):
    """Rule: ``f' >= 0`` on ``[lo, hi]`` gives ``f(lo) <= f(hi)`` (mean value theorem).

    Side conditions, each decided: ``var`` is a real symbol that neither the facts nor
    the endpoints mention; ``lo <= hi``; ``f`` is built from ``+``, ``*``, integer
    powers, ``exp`` and ``log`` (no ``Piecewise``, ``Abs`` or other function whose
    derivative may jump), with every denominator non-zero and every logarithm's
    argument positive on the whole closed interval (z3), so that ``f`` is continuous on
    ``[lo, hi]`` and differentiable inside; and the sign of the kernel's derivative on
    ``[lo, hi]`` (z3).  ``decreasing=True`` flips both.  The endpoints are put in for
    ``var`` by the kernel's substitution (``log x`` at ``0`` is ``log(0)``, a term).

    Examples
    --------
    >>> import sympy as sp
    >>> from softmax_dispersion.theory.kernel import Monotone
    >>> x, a, b = sp.symbols("x a b", real=True)
    >>> Monotone(x**3, x, a, b, "cube grows").check([sp.Le(a, b)]).verified
    True
    >>> Monotone(1 / x, x, -1, 1, "a pole at 0", decreasing=True).check([]).verified
    False
    """

    function: sp.Expr
    var: sp.Symbol
    lo: sp.Expr
    hi: sp.Expr
    description: str
    decreasing: bool = False
    method: ClassVar[str] = "rule: sign of the derivative (mean value theorem)"

    def __post_init__(self) -> None:
        frozen_inputs(self)


def _monotone_conclusion(step: FrozenStep, _: Definitions) -> Term:
    f, var = step["function"], step["var"]
    relation = "ge" if step["decreasing"] else "le"
    # where the rule holds, f is defined on [lo, hi]: its values there are shown as such
    low = terms.defined_form(terms.substitute(f, {var: step["lo"]}))
    high = terms.defined_form(terms.substitute(f, {var: step["hi"]}))
    return terms.rel(relation, low, high)


def _monotone_decide(step: FrozenStep, context: Context) -> str:
    f, var, lo, hi = step["function"], step["var"], step["lo"], step["hi"]
    if any(var in terms.free_names(fact) for fact in context.facts):
        raise ProofError(f"{var} must be a fresh variable, but the facts mention it")
    if var in terms.free_names(lo) | terms.free_names(hi):
        raise ProofError(f"the endpoints must not depend on {var}")
    held_fixed(context, [f, lo, hi, *context.facts], var, "Monotone")
    if terms.has_op(f, "app", "der", "lim"):
        raise ProofError("the function must be an explicit expression in the variable")
    require_inputs_defined(context.facts, [(lo, "the lower endpoint"), (hi, "the upper endpoint")])
    context.require(terms.rel("le", lo, hi), "the order of the endpoints")
    x = terms.sym(var)
    interval = context.with_facts([terms.rel("le", lo, x), terms.rel("le", x, hi)])
    conditions = _smoothness_conditions(f, var, None, {})
    if conditions:
        interval.require(terms.conj(*conditions), "continuity on the closed interval")
    slope = _derivative(f, var)
    relation = "le" if step["decreasing"] else "ge"
    interval.require(terms.rel(relation, slope, terms.ZERO), "the sign of the derivative")
    return f"d/d{var} = {show(slope)} has the required sign on the interval"


register(
    Monotone,
    {
        "function": "real",
        "var": "name",
        "lo": "real",
        "hi": "real",
        "description": "text",
        "decreasing": "bool",
    },
    _monotone_conclusion,
    _monotone_decide,
)


# --------------------------------------------------------------------------------------
# SumDerivative


@dataclass(frozen=True)
class SumDerivative(Step):
    """Rule: a finite sum's derivative is the sum of its terms' derivatives.

    ``total`` names a sum by a function of ``var`` alone, ``A(var) = Σ_j term_j``.  If
    the derivative of a generic term equals ``Σ_r coefficient_r · part_r.term`` (the
    kernel's derivative, then :class:`Identity`), then
    ``A'(var) = Σ_r coefficient_r · part_r.symbol``: as a function of ``var`` when
    ``point`` is ``None``, else at ``var = point``.

    Parameters
    ----------
    total
        The sum ``A(var)``; its symbol must be an undefined function applied to ``var``.
    var
        The real symbol to differentiate in.
    combination
        Pairs ``(coefficient, part)``: the derivative's terms as a combination of other
        sums over the same terms.
    description
        What the step shows, for the report.
    point
        ``None`` for the derivative as a function of ``var`` (at every ``var`` the facts
        allow), or the point at which it is taken.
    constants
        Symbols besides ``var`` and the summation index that the term may contain; the
        conclusion is then the partial derivative with these held fixed.

    Notes
    -----
    For ``k`` terms, ``k`` independent of ``x``, the derivative is linear:

    .. math:: \\frac{d}{dx} \\sum_{j=1}^{k} f(z_j, x) = \\sum_{j=1}^{k} \\partial_x f(z_j, x)
       = \\sum_r c_r(x) \\sum_{j=1}^{k} g_r(z_j, x)
       \\quad\\text{when}\\quad \\partial_x f = \\sum_r c_r(x)\\, g_r .

    Side conditions, each checked:

    - the sum is named ``A(var)``, ``var`` is real and not a summation index, the sum is
      unweighted (a weight belongs in the term) and its count depends neither on
      ``var`` nor on the index: the same finitely many terms at every ``var``;
    - the term is an explicit expression (no applied functions or derivatives) in
      ``var``, the index and the declared ``constants`` only;
    - the coefficients and the parts' names are index-free and the parts range over
      the same terms; as a function, a part whose term varies with ``var`` is named by a
      function of ``var`` (like ``A``); at a point, the coefficients, the parts and the
      point are free of ``var`` and the point of the index;
    - the term is differentiable at the point (``var`` itself when ``point`` is
      ``None``): numbers, ``+``, ``*``, integer powers, ``exp`` and ``log``, with the
      facts implying non-zero denominators and positive logarithm arguments there (z3),
      for a generic term.

    Examples
    --------
    >>> import sympy as sp
    >>> from softmax_dispersion.theory.kernel import Family, SumDerivative, SumOver
    >>> x, t, k, S = sp.symbols("x t k S", real=True)
    >>> A0, A1 = sp.Function("A0", real=True)(t), sp.Function("A1", real=True)(t)
    >>> xs = Family("xs", (x,), k, (), "k real numbers")
    >>> a0 = SumOver(A0, sp.exp(t * x), xs)
    >>> a1 = SumOver(A1, x * sp.exp(t * x), xs)
    >>> step = SumDerivative(a0, t, [(1, a1)], "d/dt Σ exp(t x) = Σ x exp(t x)")
    >>> step.conclusion
    Eq(Derivative(A0(t), t), A1(t))
    >>> step.check([]).verified
    True
    >>> SumDerivative(a0, t, [(-1, a1)], "a wrong sign").check([]).verified
    False

    At a point, the derivative's terms are those of the slope there:

    >>> slopes = SumOver(S, x, xs)
    >>> at_zero = SumDerivative(a0, t, [(1, slopes)], "d/dt at 0", point=sp.Integer(0))
    >>> at_zero.conclusion
    Eq(Subs(Derivative(A0(t), t), t, 0), S)
    >>> at_zero.check([]).verified
    True
    """

    total: SumOver
    var: sp.Symbol
    combination: Sequence[tuple[sp.Expr | int, SumLike]]
    description: str
    point: sp.Expr | None = None
    constants: Sequence[sp.Symbol] = ()
    method: ClassVar[str] = "rule: termwise derivative of a finite sum"

    def __post_init__(self) -> None:
        frozen_inputs(self)


def _sum_derivative_conclusion(step: FrozenStep, definitions: Definitions) -> Term:
    total = resolve(definitions, step["total"], "the sum")
    var, point = step["var"], step["point"]
    lhs = terms.derivative_at(total.symbol, var, point)
    parts = [
        terms.mul(c, resolve(definitions, ref, "a part").symbol) for c, ref in step["combination"]
    ]
    return terms.rel("eq", lhs, terms.defined_form(terms.add(*parts)))


def _sum_derivative_decide(step: FrozenStep, context: Context) -> str:
    ref = step["total"]
    if ref.at is not None:
        raise ProofError("differentiate the function-valued sum itself, not a value of it")
    total = resolve(context.definitions, ref, "the sum")
    var, point, constants = step["var"], step["point"], step["constants"]
    family = total.family
    index = set(family.index)
    _check_constants(var, constants)
    if total.definition.var != var:
        raise ProofError(f"the sum must be named by a function of {var} alone, like A({var})")
    if var in index:
        raise ProofError(f"{var} is a summation index")
    if terms.free_names(family.count) & (index | {var}):
        raise ProofError(f"the count must depend neither on {var} nor on the index")
    term = total.term
    if terms.has_op(term, "app", "der", "lim"):
        raise ProofError("the term must be an explicit expression")
    _check_held_constant(term, var, index, constants)
    _check_point(point, None, var, index)
    held_fixed(
        context,
        [term, *(terms.sym(c) for c in constants), *((point,) if point is not None else ())],
        var,
        "a derivative",
    )
    parts: list[ResolvedSum] = []
    for coefficient, part_ref in step["combination"]:
        part = resolve(context.definitions, part_ref, "a part")
        parts.append(part)
        if terms.free_names(coefficient) & index:
            raise ProofError("a coefficient depends on the summation index")
        if part.family != family:
            raise ProofError(f"{show(part.symbol)} ranges over different terms")
        if point is not None:
            varying = (
                terms.free_names(coefficient)
                | terms.free_names(part.term)
                | terms.free_names(part.symbol)
            )
            if var in varying:
                raise ProofError(
                    f"{show(coefficient)}·{show(part.symbol)} varies with {var}, "
                    "but a derivative at a point does not"
                )
        elif var in terms.free_names(part.term) and not (
            part.definition.var == var and part_ref.at is None
        ):
            raise ProofError(
                f"{show(part.symbol)} names terms that vary with {var}: "
                f"name it by a function of {var}, like A({var})"
            )
    inside = context.inside(family)
    require_inputs_defined(
        context.facts,
        [
            (point, "the point"),
            *((c, f"the coefficient {show(c)}") for c, _ in step["combination"]),
        ],
    )
    require_inputs_defined(
        inside.facts, [(part.term, f"the term of {show(part.symbol)}") for part in parts]
    )
    _require_smooth(inside, term, var, point, {})
    slope = _at(_derivative(term, var), var, point)
    pairs = zip(step["combination"], parts, strict=True)
    termwise = terms.add(*(terms.mul(c, part.term) for (c, _), part in pairs))
    decide_identity(slope, termwise, inside.facts, "the termwise derivative")
    return "term differentiable by z3; termwise derivative decided by cancel"


register(
    SumDerivative,
    {
        "total": "sum",
        "var": "name",
        "combination": "combination",
        "description": "text",
        "point": "real?",
        "constants": "names",
    },
    _sum_derivative_conclusion,
    _sum_derivative_decide,
    proves_derivative=True,
)


# --------------------------------------------------------------------------------------
# Differentiate


@dataclass(frozen=True)
class Differentiate(Step):
    """Rule: ``d expr/d var`` by the rules of differentiation, where ``expr`` is smooth.

    The conclusion is ``Derivative(expr, var) = expr'`` as a function of ``var`` or,
    with ``point``, ``Subs(Derivative(expr, var), var, point)`` equal to ``expr'`` at
    the point, ``expr'`` being the kernel's own derivative
    (:func:`~softmax_dispersion.theory.terms.derivative`).  With ``value``, the
    right-hand side is ``value`` instead, and z3 must show it equal to the derivative
    once the facts about the applied functions are put in.

    Parameters
    ----------
    expr
        The expression to differentiate.
    var
        The real symbol to differentiate in.
    description
        What the step shows, for the report.
    point
        ``None`` for the derivative as a function of ``var``, or the point at which it
        is taken.
    value
        The claimed derivative, checked by z3; ``None`` concludes the kernel's result.
    constants
        Symbols besides ``var`` that ``expr`` may contain; the conclusion is then the
        partial derivative with these held fixed.

    Notes
    -----
    ``expr`` may contain numbers, ``var``, the declared ``constants``, ``+``, ``*``,
    integer powers, ``exp``, ``log`` and functions ``A(var)`` of ``var`` alone, and no
    derivatives.  Each such function needs a fact giving its derivative
    (``Derivative(A(var), var) = g`` with ``g`` free of it, or at a point
    ``Subs(...) = g`` together with its value ``A(point) = ...``), and its derivative
    must be shown to exist: in a claim, by an earlier conclusion of a derivative rule
    (:class:`SumDerivative` or :class:`Differentiate`).  An assumption or an implied
    equation does not show it, since a derivative that does not exist is an
    unspecified real, which may satisfy the equation.  A step tried on its own
    (``step.check(facts)``) reads a derivative equation among ``facts`` as such a
    conclusion.  The facts must then imply non-zero
    denominators and positive logarithm arguments at the point (z3; at a point, with the
    known values put in).  These conditions are open, so ``expr`` is smooth on a
    neighbourhood of the point and the sum, product, quotient and chain rules give

    .. math:: \\frac{d}{dx} f\\bigl(x, A_1(x), \\dots\\bigr)
       = \\partial_x f + \\sum_i \\partial_{A_i} f \\cdot A_i'(x).

    A symbol other than ``var`` is refused unless declared constant: it may stand for a
    quantity that varies with ``var`` (a named sum, say), and differentiating it as a
    constant would give a partial derivative where a total one is meant.

    Examples
    --------
    >>> import sympy as sp
    >>> from softmax_dispersion.theory.kernel import Differentiate
    >>> t, c = sp.symbols("t c", real=True)
    >>> A = sp.Function("A", real=True)(t)
    >>> known = [sp.Eq(sp.Derivative(A, t), 2 * t), sp.Gt(A, 0)]
    >>> step = Differentiate(sp.log(A), t, "d log A / dt")
    >>> step.conclusion
    Eq(Derivative(log(A(t)), t), Derivative(A(t), t)/A(t))
    >>> step.check(known).verified
    True
    >>> step.check(known[:1]).verified  # log A needs A > 0
    False

    At a point, with a claimed value and a parameter held fixed:

    >>> quotient = sp.exp(c * t) / (1 + t)
    >>> at_zero = Differentiate(quotient, t, "quotient", point=0, value=c - 1, constants=[c])
    >>> at_zero.check([]).verified
    True
    >>> Differentiate(quotient, t, "c undeclared", point=0, value=c - 1).check([]).verified
    False
    """

    expr: sp.Expr
    var: sp.Symbol
    description: str
    point: sp.Expr | None = None
    value: sp.Expr | None = None
    constants: Sequence[sp.Symbol] = ()
    method: ClassVar[str] = "rule: differentiation of a smooth expression"

    def __post_init__(self) -> None:
        frozen_inputs(self)


def _differentiate_conclusion(step: FrozenStep, _: Definitions) -> Term:
    expr, var, point, value = step["expr"], step["var"], step["point"], step["value"]
    lhs = terms.derivative_at(expr, var, point)
    if value is None:
        value = terms.defined_form(_at(_derivative(expr, var), var, point))
    return terms.rel("eq", lhs, value)


def _differentiate_decide(step: FrozenStep, context: Context) -> str:
    facts = context.facts
    expr, var, point, value = step["expr"], step["var"], step["point"], step["value"]
    constants = step["constants"]
    _check_constants(var, constants)
    if terms.has_op(expr, "der", "lim"):
        raise ProofError("the expression must not contain derivatives")
    _check_held_constant(expr, var, set(), constants)
    if point is not None:
        _check_point(point, value, var, set())
    held_fixed(
        context,
        [expr, *(terms.sym(c) for c in constants), *(e for e in (point, value) if e is not None)],
        var,
        "a derivative",
    )
    require_inputs_defined(facts, [(point, "the point")])
    applied = sorted({node for node in terms.walk(expr) if node[0] == "app"}, key=terms.order_key)
    for function in applied:
        if function.children != (terms.sym(var),):
            raise ProofError(f"{show(function)} must be a function of {var} alone")
    known: dict[Term, Term] = {}
    for fact in facts:
        for part in terms.conjuncts(fact):
            if part[0] == "eq" and terms.is_real(part[2]) and terms.is_real(part[3]):
                key = terms.canonical(part[2])
                # a value is what the key equals, never a term that contains the key
                if not any(terms.canonical(node) == key for node in terms.walk(part[3])):
                    known.setdefault(key, part[3])
    equals: dict[Term, Term] = {}
    for function in applied:
        slope = terms.derivative_at(function, var, point)
        # The rules below hold only where each function is differentiable.  An equation
        # about its derivative does not say so (a derivative that does not exist is an
        # unspecified real, which may satisfy it); a derivative rule's conclusion does.
        if terms.canonical(slope) not in context.differentiable:
            raise ProofError(
                f"{show(slope)} is not shown to exist: only a derivative rule's conclusion "
                "(SumDerivative, Differentiate) shows that a function is differentiable"
            )
        needed = [slope]
        if point is not None:
            needed.append(terms.substitute(function, {var: point}))
        for key in needed:
            found = known.get(terms.canonical(key))
            if found is None:
                raise ProofError(f"no fact gives {show(key)}")
            equals[key] = found
    _require_smooth(context, expr, var, point, equals)
    if value is None:
        return "the kernel's differentiation rules; smoothness implied by the facts"
    derivative = _at(_derivative(expr, var), var, point)
    for key, known_value in equals.items():
        derivative = terms.replace(terms.canonical(derivative), terms.canonical(key), known_value)
    leftover = ("der",) if point is None else ("der", "app")
    if terms.has_op(derivative, *leftover):
        raise ProofError(f"the derivative is not explicit: {show(derivative)}")
    context.require(terms.rel("eq", derivative, value), "equality with the claimed value")
    return f"the derivative is {show(derivative)}; equal to the claimed value by z3"


register(
    Differentiate,
    {
        "expr": "real",
        "var": "name",
        "description": "text",
        "point": "real?",
        "value": "real?",
        "constants": "names",
    },
    _differentiate_conclusion,
    _differentiate_decide,
    proves_derivative=True,
)
