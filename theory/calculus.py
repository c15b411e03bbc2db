"""Rules of calculus: monotonicity from a derivative's sign, and derivatives.

:class:`Monotone` (the mean value theorem, with continuity on the closed interval
decided), :class:`SumDerivative` (a finite sum's derivative, term by term: linearity)
and :class:`Differentiate` (sympy's sum, product, quotient and chain rules, with the
derivatives of applied functions taken from the facts).  All share one smoothness check:
the expression is built from ``+``, ``*``, integer powers, ``exp`` and ``log``, and z3
must show every denominator non-zero and every logarithm's argument positive where the
rule needs it.  Any other symbol (besides a sum's index) must be declared constant: the
conclusion is then a partial derivative, and an undeclared one could hide a dependence
on the variable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

import sympy as sp
from sympy.core.function import AppliedUndef

from softmax_dispersion.theory._core import Context, ProofError, Step, frozen_inputs, held_fixed
from softmax_dispersion.theory._deciders import decide_identity, require_inputs_defined
from softmax_dispersion.theory.definitions import SumAt, SumOver

__all__ = ["Differentiate", "Monotone", "SumDerivative"]

SumLike = SumOver | SumAt


@dataclass(frozen=True)
class Monotone(Step):
    """Rule: ``f' >= 0`` on ``[lo, hi]`` gives ``f(lo) <= f(hi)`` (mean value theorem).

    Side conditions, each decided: ``var`` is a real symbol that neither the facts nor
    the endpoints mention; ``lo <= hi``; ``f`` is built from ``+``, ``*``, integer
    powers, ``exp`` and ``log`` (no ``Piecewise``, ``Abs`` or other function whose
    derivative may jump), with every denominator non-zero and every logarithm's
    argument positive on the whole closed interval (z3), so that ``f`` is continuous on
    ``[lo, hi]`` and differentiable inside; and the sign of sympy's derivative, as
    computed (nothing cancelled), on ``[lo, hi]`` (z3).  ``decreasing=True`` flips both.

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

    def _at(self, point: sp.Expr) -> sp.Expr:
        """``f(point)``; kept as ``Subs`` where sympy's value is no finite number.

        ``log(x)`` at 0 is ``zoo``, which no fact may contain; as ``Subs`` the step goes
        on to the continuity check, which names the endpoint that fails.
        """
        value = sp.sympify(self.function).subs(self.var, point)
        if value.has(sp.zoo, sp.nan, sp.oo, sp.S.NegativeInfinity):
            return sp.Subs(self.function, self.var, point)
        return value

    @property
    def conclusion(self) -> sp.Basic:
        relation = sp.Ge if self.decreasing else sp.Le
        return relation(self._at(self.lo), self._at(self.hi), evaluate=False)

    def decide(self, context: Context) -> str:
        var = self.var
        _check_variable(var, ())
        clash = [f for f in context.facts if var in f.free_symbols]
        if clash:
            raise ProofError(f"{var} must be a fresh variable, but the facts mention it")
        if var in sp.Tuple(self.lo, self.hi).free_symbols:
            raise ProofError(f"the endpoints must not depend on {var}")
        held_fixed(context, [self.function, self.lo, self.hi, *context.facts], var, "Monotone")
        if sp.sympify(self.function).has(AppliedUndef, sp.Derivative, sp.Subs):
            raise ProofError("the function must be an explicit expression in the variable")
        # the conclusion puts the endpoints in for var, and sympy evaluates as it does
        require_inputs_defined(
            context.facts, [(self.lo, "the lower endpoint"), (self.hi, "the upper endpoint")]
        )
        context.require(sp.Le(self.lo, self.hi, evaluate=False), "the order of the endpoints")
        inside = [sp.Le(self.lo, var, evaluate=False), sp.Le(var, self.hi, evaluate=False)]
        interval = context.with_facts(inside)
        conditions = _smoothness_conditions(sp.sympify(self.function), var, None, {})
        if conditions:
            interval.require(sp.And(*conditions), "continuity on the closed interval")
        derivative = sp.diff(self.function, var)
        relation = sp.Le if self.decreasing else sp.Ge
        interval.require(relation(derivative, 0, evaluate=False), "the sign of the derivative")
        return f"d/d{var} = {sp.sstr(derivative)} has the required sign on the interval"


def _derivative_of(expr: sp.Expr, var: sp.Symbol, point: sp.Expr | None) -> sp.Expr:
    """``d expr/d var`` unevaluated: as a function of ``var``, or at ``var = point``."""
    derivative = sp.Derivative(expr, var)
    return derivative if point is None else sp.Subs(derivative, var, point)


def _is_function_of(expr: sp.Basic, var: sp.Symbol) -> bool:
    """``expr`` is an undefined function applied to ``var`` alone, like ``A(var)``."""
    return isinstance(expr, AppliedUndef) and expr.args == (var,)


def _check_variable(var: sp.Symbol, constants: Sequence[sp.Symbol]) -> None:
    """``var`` is a real symbol and the declared constants are other symbols."""
    if not isinstance(var, sp.Symbol):
        raise ProofError(f"{var} is not a symbol")
    if not var.is_real:
        raise ProofError(f"{var} is not declared real; the side conditions are over the reals")
    for constant in constants:
        if not isinstance(constant, sp.Symbol):
            raise ProofError(f"only symbols can be held constant, not {sp.sstr(constant)}")
    if var in constants:
        raise ProofError(f"{var} cannot be held constant while differentiating in it")


def _check_held_constant(
    expr: sp.Expr, var: sp.Symbol, allowed: set[sp.Basic], constants: Sequence[sp.Symbol]
) -> None:
    """Every symbol of ``expr`` other than ``var`` is allowed or declared constant.

    A symbol that is neither would be held constant silently, and it may stand for a
    quantity that varies with ``var`` (a named sum, say): the derivative would then be a
    partial one where a total one is meant.  Declaring it in ``constants`` says that the
    partial derivative is the one meant.
    """
    others = expr.free_symbols - {var} - allowed - set(constants)
    if others:
        raise ProofError(
            f"{sp.sstr(expr)} depends on {sorted(map(str, others))}, which would be held "
            f"constant: write what varies with {var} as a function of it, or declare the "
            "symbols constant"
        )


def _check_point(
    point: sp.Expr, value: sp.Expr | None, var: sp.Symbol, index: set[sp.Symbol]
) -> None:
    """The point, and the value at it, are fixed: free of ``var`` and of the index."""
    for what, expr in (("the point", point), ("the value at the point", value)):
        if expr is None:
            continue
        if var in expr.free_symbols:
            raise ProofError(f"{what} depends on {var}")
        if expr.free_symbols & index:
            raise ProofError(f"{what} depends on the summation index")


def _smoothness_conditions(
    expr: sp.Expr,
    var: sp.Symbol,
    point: sp.Expr | None,
    values: Mapping[sp.Basic, sp.Expr],
) -> list[sp.Basic]:
    """What makes ``expr`` differentiable in ``var`` at ``point``, or a :class:`ProofError`.

    ``expr`` may use finite real numbers, symbols, ``+``, ``*``, integer powers, ``exp``,
    ``log`` and functions applied to ``var`` alone (whose differentiability the caller
    takes from the facts).  A negative power needs a non-zero base, ``log`` a positive
    argument; the conditions are read at ``point`` (``var`` itself when ``None``) with
    ``values`` (known values of the applied functions there) substituted.  They are
    open conditions on continuous functions, so where they hold they hold on a
    neighbourhood, on which ``expr`` is then smooth.
    """

    def at(arg: sp.Expr) -> sp.Expr:
        return arg if point is None else arg.subs(var, point).xreplace(values)

    conditions: list[sp.Basic] = []
    for node in sp.preorder_traversal(expr):
        if node.is_Atom:
            if node.is_number and not (node.is_extended_real and node.is_finite):
                raise ProofError(f"{sp.sstr(node)} is not a finite real number")
            continue
        if isinstance(node, (sp.Add, sp.Mul, sp.exp)):
            continue
        if _is_function_of(node, var):
            continue
        if isinstance(node, sp.Pow) and node.exp.is_Integer:
            if node.exp < 0:
                conditions.append(sp.Ne(at(node.base), 0, evaluate=False))
            continue
        if isinstance(node, sp.log):
            conditions.append(sp.Gt(at(node.args[0]), 0, evaluate=False))
            continue
        # Non-integer powers are smooth only for a positive base; none of the claims
        # needs them, so they are refused outright rather than given a condition.
        raise ProofError(f"{sp.sstr(node)} is not known to be differentiable")
    return conditions


def _require_smooth(
    context: Context,
    expr: sp.Expr,
    var: sp.Symbol,
    point: sp.Expr | None,
    values: Mapping[sp.Basic, sp.Expr],
) -> None:
    """The facts imply (z3) that ``expr`` is differentiable in ``var`` at ``point``."""
    conditions = _smoothness_conditions(expr, var, point, values)
    if conditions:
        context.require(sp.And(*conditions), "differentiability (denominators, logarithms)")


@dataclass(frozen=True)
class SumDerivative(Step):
    """Rule: a finite sum's derivative is the sum of its terms' derivatives.

    ``total`` names a sum by a function of ``var`` alone, ``A(var) = Σ_j term_j``.  If
    the derivative of a generic term equals ``Σ_r coefficient_r · part_r.term`` (sympy's
    ``diff``, then :class:`Identity`), then
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
      ``None``): finite real numbers, ``+``, ``*``, integer powers, ``exp`` and ``log``,
      with the facts implying non-zero denominators and positive logarithm arguments
      there (z3), for a generic term.

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

    @property
    def _point(self) -> sp.Expr | None:
        return None if self.point is None else sp.sympify(self.point)

    @property
    def conclusion(self) -> sp.Basic:
        return sp.Eq(
            _derivative_of(self.total.symbol, self.var, self._point),
            sp.Add(*(sp.sympify(coeff) * part.symbol for coeff, part in self.combination)),
            evaluate=False,
        )

    def decide(self, context: Context) -> str:
        total = context.definitions.resolve(self.total, "the sum")
        var, point = self.var, self._point
        if not isinstance(total, SumOver):
            raise ProofError("differentiate the function-valued sum itself, not a value of it")
        family = total.family
        index = set(family.index)
        _check_variable(var, self.constants)
        if not _is_function_of(total.symbol, var):
            raise ProofError(f"the sum must be named by a function of {var} alone, like A({var})")
        if var in index:
            raise ProofError(f"{var} is a summation index")
        if sp.sympify(family.count).free_symbols & (index | {var}):
            raise ProofError(f"the count must depend neither on {var} nor on the index")
        term = sp.sympify(total.term)
        if term.has(AppliedUndef, sp.Derivative, sp.Subs):
            raise ProofError("the term must be an explicit expression")
        _check_held_constant(term, var, index, self.constants)
        if point is not None:
            _check_point(point, None, var, index)
        held_fixed(
            context,
            [term, *self.constants, *(e for e in (point,) if e is not None)],
            var,
            "a derivative",
        )
        parts = []
        for coeff, part in self.combination:
            part = context.definitions.resolve(part, "a part")
            parts.append(part)
            coeff, part_term = sp.sympify(coeff), sp.sympify(part.term)
            if sp.sympify(coeff).free_symbols & index:
                raise ProofError("a coefficient depends on the summation index")
            if part.family != family:
                raise ProofError(f"{part.symbol} ranges over different terms")
            if point is not None:
                # At a point the derivative is a number: nothing on the right varies.
                if var in coeff.free_symbols | part_term.free_symbols | part.symbol.free_symbols:
                    raise ProofError(
                        f"{sp.sstr(coeff)}·{part.symbol} varies with {var}, "
                        "but a derivative at a point does not"
                    )
            elif var in part_term.free_symbols and not _is_function_of(part.symbol, var):
                raise ProofError(
                    f"{part.symbol} names terms that vary with {var}: "
                    f"name it by a function of {var}, like A({var})"
                )
        inside = context.inside(family)
        # the point is put in for var, coefficient · term and coefficient · symbol are
        # evaluated by sympy as they are built
        require_inputs_defined(
            context.facts,
            [
                (point, "the point"),
                *(
                    (sp.sympify(coeff), f"the coefficient {sp.sstr(coeff)}")
                    for coeff, _ in self.combination
                ),
            ],
        )
        require_inputs_defined(
            inside.facts, [(part.term, f"the term of {sp.sstr(part.symbol)}") for part in parts]
        )
        _require_smooth(inside, term, var, point, {})
        slope = sp.diff(term, var)
        if point is not None:
            slope = slope.subs(var, point)
        pairs = zip(self.combination, parts, strict=True)
        termwise = sp.Add(*(sp.sympify(coeff) * part.term for (coeff, _), part in pairs))
        decide_identity(slope, termwise, inside.facts, "the termwise derivative")
        return "term differentiable by z3; termwise derivative decided by cancel"


@dataclass(frozen=True)
class Differentiate(Step):
    """Rule: ``d expr/d var`` by sympy's differentiation rules, where ``expr`` is smooth.

    The conclusion is ``Derivative(expr, var) = diff(expr, var)`` as a function of
    ``var`` or, with ``point``, ``Subs(Derivative(expr, var), var, point)`` equal to
    ``diff`` at the point.  With ``value``, the right-hand side is ``value`` instead, and
    z3 must show it equal to ``diff``'s result once the facts about the applied
    functions are substituted.

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
        The claimed derivative, checked by z3; ``None`` concludes ``diff``'s result.
    constants
        Symbols besides ``var`` that ``expr`` may contain; the conclusion is then the
        partial derivative with these held fixed.

    Notes
    -----
    ``expr`` may contain finite real numbers, ``var``, the declared ``constants``,
    ``+``, ``*``, integer powers, ``exp``, ``log`` and functions ``A(var)`` of ``var``
    alone, and no derivatives.  Each such function needs a fact giving its derivative
    (``Derivative(A(var), var) = ...``, or at a point ``Subs(...) = ...`` together with
    its value ``A(point) = ...``), as :class:`SumDerivative` concludes; that fact is what
    certifies that the derivative exists.  The facts must then imply non-zero
    denominators and positive logarithm arguments at the point (z3; at a point, with the
    known values substituted).  These conditions are open, so ``expr`` is smooth on a
    neighbourhood of the point and the sum, product, quotient and chain rules give

    .. math:: \\frac{d}{dx} f\\bigl(x, A_1(x), \\dots\\bigr)
       = \\partial_x f + \\sum_i \\partial_{A_i} f \\cdot A_i'(x).

    A symbol other than ``var`` is refused unless declared constant: it may stand for a
    quantity that varies with ``var`` (a named sum, say), and differentiating it as a
    constant would give a partial derivative where a total one is meant.  Declaring it
    is sound, because the conclusion is then read as what sympy's ``Derivative`` of an
    expression in several symbols means, the partial derivative in ``var`` with the
    others fixed.  (T12 holds its error variables fixed this way: its ``τ`` scales them
    explicitly, so they do not vary with ``τ`` themselves.)

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

    @property
    def _point(self) -> sp.Expr | None:
        return None if self.point is None else sp.sympify(self.point)

    def _diff(self) -> sp.Expr:
        derivative = sp.diff(sp.sympify(self.expr), self.var)
        return derivative if self._point is None else derivative.subs(self.var, self._point)

    @property
    def conclusion(self) -> sp.Basic:
        rhs = self._diff() if self.value is None else sp.sympify(self.value)
        return sp.Eq(_derivative_of(self.expr, self.var, self._point), rhs, evaluate=False)

    def decide(self, context: Context) -> str:
        facts = context.facts
        expr, var, point = sp.sympify(self.expr), self.var, self._point
        value = None if self.value is None else sp.sympify(self.value)
        _check_variable(var, self.constants)
        if expr.has(sp.Derivative, sp.Subs):
            raise ProofError("the expression must not contain derivatives")
        _check_held_constant(expr, var, set(), self.constants)
        if point is not None:
            _check_point(point, value, var, set())
        held_fixed(
            context,
            [expr, *self.constants, *(e for e in (point, value) if e is not None)],
            var,
            "a derivative",
        )
        # the point is put in for var (the claimed value is compared as written, by z3)
        require_inputs_defined(facts, [(point, "the point")])
        applied = sorted(expr.atoms(AppliedUndef), key=sp.default_sort_key)
        for function in applied:
            if not _is_function_of(function, var):
                raise ProofError(f"{function} must be a function of {var} alone")
        known = {
            part.lhs: part.rhs
            for fact in facts
            for part in sp.And.make_args(fact)
            if isinstance(part, sp.Equality)
        }
        equals: dict[sp.Basic, sp.Expr] = {}
        for function in applied:
            needed = [_derivative_of(function, var, point)]
            if point is not None:
                needed.append(function.subs(var, point))
            for key in needed:
                if key not in known:
                    raise ProofError(f"no fact gives {sp.sstr(key)}")
                equals[key] = known[key]
        _require_smooth(context, expr, var, point, equals)
        if value is None:
            return "sympy's differentiation rules; smoothness implied by the facts"
        derivative = self._diff().xreplace(equals)
        leftover = (
            (sp.Derivative, sp.Subs) if point is None else (sp.Derivative, sp.Subs, AppliedUndef)
        )
        if derivative.has(*leftover):
            raise ProofError(f"the derivative is not explicit: {sp.sstr(derivative)}")
        context.require(sp.Eq(derivative, value, evaluate=False), "equality with the claimed value")
        return f"diff gives {sp.sstr(derivative)}; equal to the claimed value by z3"
