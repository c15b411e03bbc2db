"""The kernel's inference rules (besides calculus): each decides its side conditions.

A rule is a frozen dataclass: its fields are its inputs, :attr:`~Step.conclusion` what it
concludes from them, and :meth:`~Step.decide` the decision of its side conditions, each
by a method that can fail (``cancel``, z3, exact root counting).  Two side conditions
are common to all: every input a rule combines into a new expression is shown
well-defined first (``require_inputs_defined``:
sympy cancels ``a * (1/a)`` as it builds the product), and a limit or a derivative in a
variable never holds fixed a defined symbol whose definition mentions that variable
(``held_fixed``).  Claim modules build
steps from these classes; they cannot add a rule (a claim accepts only the kernel's own
classes, see :data:`softmax_dispersion.theory.kernel.RULES`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import sympy as sp
from sympy.core.function import AppliedUndef

from softmax_dispersion.theory._core import (
    CitedClaim,
    Context,
    ProofError,
    Step,
    frozen_inputs,
    held_fixed,
)
from softmax_dispersion.theory._deciders import (
    decide_identity,
    leading_term_limit,
    require_defined,
    require_inputs_defined,
    sign_assumptions,
)
from softmax_dispersion.theory._expressions import domain_conditions
from softmax_dispersion.theory.definitions import (
    Definitions,
    Family,
    Let,
    RealRoot,
    SumAt,
    SumOver,
    name_of,
)

__all__ = [
    "Cite",
    "ConvexCombination",
    "ExpMonotone",
    "Identity",
    "Implied",
    "Induction",
    "Limit",
    "LogMonotone",
    "RealRoots",
    "SumLinearity",
    "SumOfTerms",
    "WeightedSum",
]

SumLike = SumOver | SumAt


def _relation(strict: bool) -> Any:
    """The relation ``<`` (strict) or ``<=``."""
    return sp.StrictLessThan if strict else sp.LessThan


def _free_of_index(expr: sp.Basic | None, family: Family, what: str) -> None:
    if expr is None:
        return
    clash = sp.sympify(expr).free_symbols & set(family.index)
    if clash:
        raise ProofError(f"{what} depends on the summation index {sorted(map(str, clash))}")


def _termwise(
    context: Context,
    family: Family,
    steps: Sequence[Step],
    goals: Sequence[tuple[sp.Basic, str]],
) -> None:
    """Prove ``goals`` for a generic member of ``family``, after its termwise ``steps``."""
    inside = context.inside(family)
    results, conclusions, ok = context.runner(steps, inside)
    context.sub_results = results
    if not ok:
        failed = next(r for r in results if not r.verified)
        raise ProofError(f"termwise step {failed.description!r} failed: {failed.detail}")
    for goal, what in goals:
        inside.require(goal, what, conclusions)


def _sum(context: Context, total: object, what: str) -> SumLike:
    """``total`` resolved against the claim's definitions.

    A value ``A(v)`` of a function-valued sum needs its term well-defined at ``v`` for a
    generic member, read before sympy rewrites it (``exp(τ log x)`` at ``τ = 1`` would
    read ``x``, a law that holds only for ``x > 0``).
    """
    resolved = context.definitions.resolve(total, what)
    if isinstance(resolved, SumAt):
        var = resolved.total.var
        with sp.evaluate(False):
            unevaluated = resolved.total.term.xreplace({var: resolved.value})
        inside = context.inside(resolved.family) if context.scope is None else context
        require_defined(inside.facts, [unevaluated], f"{what} at {var} = {resolved.value}")
    return resolved


def _same_family(parts: Sequence[SumLike], family: Family) -> None:
    for part in parts:
        if part.family != family:
            raise ProofError(
                f"{sp.sstr(part.symbol)} ranges over the family {part.family.name!r}, "
                f"not {family.name!r}"
            )


@dataclass(frozen=True)
class Identity(Step):
    """``lhs = rhs``, decided by ``cancel`` after substituting ``t = exp(.)``.

    Side conditions (z3, from the facts): every denominator of ``lhs`` and ``rhs`` is
    non-zero, and, where the decision splits a logarithm or rewrites a symbolic power,
    every factor and base involved is positive.  ``substitute`` lists equations
    ``symbol = expression`` that the facts must imply; they are substituted before
    deciding.

    Examples
    --------
    >>> import sympy as sp
    >>> from softmax_dispersion.theory.kernel import Identity
    >>> x = sp.Symbol("x", real=True)
    >>> Identity((x**2 - 1) / (x - 1), x + 1, "a removable pole").check([sp.Gt(x, 1)]).verified
    True
    >>> Identity((x**2 - 1) / (x - 1), x + 1, "x may be 1").check([]).verified
    False
    """

    lhs: sp.Expr
    rhs: sp.Expr
    description: str
    substitute: Sequence[sp.Basic] = ()
    method: ClassVar[str] = "cancel after t = exp(.), side conditions by z3"

    def __post_init__(self) -> None:
        frozen_inputs(self)

    @property
    def conclusion(self) -> sp.Basic:
        return sp.Eq(self.lhs, self.rhs, evaluate=False)

    def decide(self, context: Context) -> str:
        lhs, rhs = sp.sympify(self.lhs), sp.sympify(self.rhs)
        if not self.substitute:
            return decide_identity(lhs, rhs, context.facts)
        lhs, rhs = _substituted(context, self.substitute, lhs, rhs)
        return decide_identity(lhs, rhs, context.facts, defined=True)


def _substituted(
    context: Context, equations: Sequence[sp.Basic], *exprs: sp.Expr
) -> tuple[sp.Expr, ...]:
    """Substitute equations ``term = expression`` that the facts imply.

    The expressions, and each substituted expression, must be well-defined (every
    partial operation inside its domain, by z3): a substitution rebuilds expressions,
    and sympy's automatic rewritings on the way (``exp(log x) = x``) hold only there.
    The substituted expressions then have the values of the originals, and every
    partial operation in them is inside its domain too.
    """
    require_defined(context.facts, list(exprs), "before substituting")
    result = tuple(exprs)
    for equation in equations:  # in order: each replaces a term by its value
        lhs = equation.lhs if isinstance(equation, sp.Equality) else None
        if not isinstance(lhs, (sp.Symbol, AppliedUndef)):
            raise ProofError(
                f"a substitution must read symbol = expression (or f(x) = expression), "
                f"not {equation}"
            )
        if equation.rhs.has(lhs):
            raise ProofError(f"the substitution {equation} is circular")
        if any(_bound_inside(e, lhs) for e in result):
            raise ProofError(
                f"{sp.sstr(lhs)} occurs inside a derivative, a limit or a substitution: an "
                "equation at one point says nothing of its neighbourhood"
            )
        context.require(equation, "the substituted equation")
        require_defined(context.facts, [equation.rhs], "the substituted value")
        result = tuple(e.xreplace({lhs: equation.rhs}) for e in result)
    return result


def _bound_inside(expr: sp.Basic, term: sp.Basic) -> bool:
    """``term`` occurs inside a ``Derivative``, ``Subs`` or ``Limit`` of ``expr``."""
    return any(node.has(term) for node in sp.preorder_traversal(expr) if isinstance(node, _BINDERS))


_BINDERS = (sp.Derivative, sp.Subs, sp.Limit)


@dataclass(frozen=True)
class Implied(Step):
    """The facts imply ``statement`` over the reals, decided by z3.

    Examples
    --------
    >>> import sympy as sp
    >>> from softmax_dispersion.theory.kernel import Implied
    >>> a, b = sp.symbols("a b", real=True)
    >>> Implied(sp.Le(a * b, 1), "a product bound").check(
    ...     [sp.Le(0, a), sp.Le(a, 1), sp.Le(0, b), sp.Le(b, 1)]).verified
    True
    """

    statement: sp.Basic
    description: str
    method: ClassVar[str] = "z3 nlsat"

    def __post_init__(self) -> None:
        frozen_inputs(self)

    @property
    def conclusion(self) -> sp.Basic:
        return self.statement

    def decide(self, context: Context) -> str:
        return context.require(self.statement, "the conclusion")


@dataclass(frozen=True)
class Limit(Step):
    """``lim_{var -> oo} expr = expected``, confirmed by two independent routes.

    Side conditions: the sign of every parameter of ``expr`` is a stated fact (z3 finds
    the strongest of positive, negative, zero, non-negative, non-positive); only then
    does sympy's ``limit`` (Gruntz) see the parameters, as symbols with exactly those
    signs.  The value must also follow from the leading terms of the numerator and the
    denominator, as generalised polynomials in ``var`` with exponents ordered by z3;
    both values are compared with ``expected`` exactly (:class:`Identity`).

    Examples
    --------
    >>> import sympy as sp
    >>> from softmax_dispersion.theory.kernel import Limit
    >>> n, q = sp.symbols("n q", real=True)
    >>> step = Limit(n ** (1 + q) / (n ** (1 + q) + n - 1), n, sp.oo, 1, "q > 0")
    >>> step.check([sp.Gt(q, 0)]).verified
    True
    >>> step.check([]).verified  # the sign of q is not a fact
    False
    """

    expr: sp.Expr
    var: sp.Symbol
    point: sp.Expr
    expected: sp.Expr
    description: str
    method: ClassVar[str] = "limit: sympy (Gruntz) and leading terms, both"

    def __post_init__(self) -> None:
        frozen_inputs(self)

    @property
    def conclusion(self) -> sp.Basic:
        return sp.Eq(sp.Limit(self.expr, self.var, self.point), self.expected, evaluate=False)

    def decide(self, context: Context) -> str:
        expr, var = sp.sympify(self.expr), self.var
        if not isinstance(var, sp.Symbol):
            raise ProofError(f"{var} is not a symbol")
        if self.point != sp.oo:
            raise ProofError("only limits at +oo have a second route (leading terms)")
        if var in sp.sympify(self.expected).free_symbols:
            raise ProofError(f"the claimed limit depends on {var}")
        held_fixed(context, [expr, sp.sympify(self.expected)], var, "a limit")
        if expr.has(sp.Derivative, sp.Subs, sp.Limit) or expr.atoms(sp.Function) - expr.atoms(
            sp.exp, sp.log
        ):
            raise ProofError("the expression must be built from powers, exp and log only")
        signed: dict[sp.Symbol, sp.Expr] = {}
        signs = []
        for symbol in sorted(expr.free_symbols - {var}, key=str):
            sign = sign_assumptions(symbol, context.facts)
            signs.append(f"{symbol} {sign}")
            signed[symbol] = (
                sp.Integer(0)
                if sign == "zero"
                else sp.Dummy(str(symbol), real=True, **{sign: True})
            )
        parameters_only = [
            (condition, name)
            for condition, name in domain_conditions(expr)
            if var not in condition.free_symbols
        ]
        for condition, name in parameters_only:
            context.require(condition, f"the limit's expression: {name}")
        leading = leading_term_limit(expr, var, context.facts)
        back = {v: k for k, v in signed.items() if isinstance(v, sp.Dummy)}
        gruntz = sp.limit(expr.xreplace(signed), var, sp.oo).xreplace(back)
        if gruntz.has(sp.Limit, sp.AccumBounds, sp.nan, sp.zoo):
            raise ProofError(f"sympy could not evaluate the limit: {sp.sstr(gruntz)}")
        for route, value in (("sympy's limit", gruntz), ("the leading terms", leading)):
            _same_value(value, sp.sympify(self.expected), context, route)
        return (
            f"signs: {', '.join(signs) or 'no parameters'}; sympy's limit and the "
            f"leading terms both give {sp.sstr(leading)}"
        )


def _same_value(value: sp.Expr, expected: sp.Expr, context: Context, route: str) -> None:
    infinite = (sp.oo, -sp.oo)
    if value in infinite or expected in infinite:
        if value != expected:
            raise ProofError(f"{route} gives {sp.sstr(value)}, not {sp.sstr(expected)}")
        return
    try:
        decide_identity(value, expected, context.facts, f"{route} ({sp.sstr(value)})")
    except ProofError as error:
        raise ProofError(f"{error}; the claimed value is {sp.sstr(expected)}") from None


@dataclass(frozen=True)
class ExpMonotone(Step):
    """Rule: ``a <= b`` and ``scale > 0`` give ``exp(a/scale) <= exp(b/scale)``."""

    lower: sp.Expr
    upper: sp.Expr
    description: str
    scale: sp.Expr = sp.S.One
    strict: bool = False
    method: ClassVar[str] = "rule: exp is increasing"

    def __post_init__(self) -> None:
        frozen_inputs(self)

    @property
    def conclusion(self) -> sp.Basic:
        return _relation(self.strict)(
            sp.exp(self.lower / self.scale), sp.exp(self.upper / self.scale), evaluate=False
        )

    def decide(self, context: Context) -> str:
        require_inputs_defined(
            context.facts,
            [
                (self.lower, "the smaller side"),
                (self.upper, "the larger side"),
                (self.scale, "the scale"),
            ],
        )
        context.require(
            _relation(self.strict)(self.lower, self.upper, evaluate=False), "the premise"
        )
        context.require(sp.Gt(self.scale, 0, evaluate=False), "positivity of the scale")
        return "premise and scale > 0 implied by the facts"


@dataclass(frozen=True)
class LogMonotone(Step):
    """Rule: ``0 < a <= b`` gives ``log a <= log b``."""

    lower: sp.Expr
    upper: sp.Expr
    description: str
    strict: bool = False
    method: ClassVar[str] = "rule: log is increasing on (0, oo)"

    def __post_init__(self) -> None:
        frozen_inputs(self)

    @property
    def conclusion(self) -> sp.Basic:
        return _relation(self.strict)(sp.log(self.lower), sp.log(self.upper), evaluate=False)

    def decide(self, context: Context) -> str:
        context.require(sp.Gt(self.lower, 0, evaluate=False), "positivity of the smaller side")
        context.require(
            _relation(self.strict)(self.lower, self.upper, evaluate=False), "the premise"
        )
        return "premise and positivity implied by the facts"


@dataclass(frozen=True)
class SumOfTerms(Step):
    """Rule: termwise ``lo <= term <= hi`` sums to ``count·lo <= S <= count·hi``.

    The termwise bounds are proved for a generic member of the sum's family: from the
    facts (which never mention the index), the family's domain and the conclusions of
    the ``termwise`` sub-steps.  The bounds must not depend on the index, and the count
    must be non-negative; with ``strict``, the termwise bounds are strict, the count at
    least 1 and the conclusion strict.

    Examples
    --------
    >>> import sympy as sp
    >>> from softmax_dispersion.theory.kernel import Family, SumOfTerms, SumOver
    >>> j, n, S = sp.symbols("j n S", real=True)
    >>> unit = Family("unit", (j,), n, (sp.Le(0, j), sp.Le(j, 1)))
    >>> squares = SumOver(S, j**2, unit)
    >>> SumOfTerms(squares, 0, 1, "0 <= j^2 <= 1").check([sp.Ge(n, 0)]).verified
    True
    >>> SumOfTerms(squares, 0, sp.Rational(1, 2), "too small").check([sp.Ge(n, 0)]).verified
    False
    """

    total: SumLike
    lower: sp.Expr | None
    upper: sp.Expr | None
    description: str
    termwise: Sequence[Step] = ()
    strict: bool = False
    method: ClassVar[str] = "rule: termwise bounds summed"

    def __post_init__(self) -> None:
        frozen_inputs(self)

    def sub_steps(self) -> tuple[Step, ...]:
        return tuple(self.termwise)

    @property
    def conclusion(self) -> sp.Basic:
        relation = _relation(self.strict)
        count = self.total.family.count
        parts = []
        if self.lower is not None:
            parts.append(relation(count * self.lower, self.total.symbol, evaluate=False))
        if self.upper is not None:
            parts.append(relation(self.total.symbol, count * self.upper, evaluate=False))
        return sp.And(*parts)

    def decide(self, context: Context) -> str:
        total = _sum(context, self.total, "the sum")
        family = total.family
        if self.lower is None and self.upper is None:
            raise ProofError("no bound to sum")
        _free_of_index(self.lower, family, "the lower bound")
        _free_of_index(self.upper, family, "the upper bound")
        # the conclusion is count · bound, which sympy evaluates as it is built
        require_inputs_defined(
            context.facts,
            [
                (family.count, "the count"),
                (self.lower, "the lower bound"),
                (self.upper, "the upper bound"),
            ],
        )
        least = 1 if self.strict else 0
        context.require(sp.Ge(family.count, least, evaluate=False), f"a count of at least {least}")
        relation = _relation(self.strict)
        goals = []
        if self.lower is not None:
            goals.append(
                (relation(self.lower, total.term, evaluate=False), "the termwise lower bound")
            )
        if self.upper is not None:
            goals.append(
                (relation(total.term, self.upper, evaluate=False), "the termwise upper bound")
            )
        _termwise(context, family, self.termwise, goals)
        return "termwise bounds for a generic member, and the count, implied by the facts"


def _weighted(
    context: Context,
    total: SumLike,
    weights: SumLike,
    value: sp.Expr,
    lower: sp.Expr | None,
    upper: sp.Expr | None,
    termwise: Sequence[Step],
) -> None:
    """The side conditions of a weighted sum ``Σ w f`` bounded through ``Σ w``."""
    total = _sum(context, total, "the weighted sum")
    weights = _sum(context, weights, "the weights")
    family = total.family
    _same_family([weights], family)
    if lower is None and upper is None:
        raise ProofError("no bound to sum")
    _free_of_index(lower, family, "the lower bound")
    _free_of_index(upper, family, "the upper bound")
    # the conclusion is bound · W, the identity's right side weight · value: both are
    # evaluated by sympy as they are built, so the pieces must be well-defined first
    require_inputs_defined(context.facts, [(lower, "the lower bound"), (upper, "the upper bound")])
    inside = context.inside(family)
    require_inputs_defined(
        inside.facts, [(weights.term, "the weights' term"), (value, "the value")]
    )
    decide_identity(total.term, weights.term * value, inside.facts, "term = weight · value")
    goals = [(sp.Ge(weights.term, 0, evaluate=False), "non-negativity of the weights")]
    if lower is not None:
        goals.append((sp.Le(lower, value, evaluate=False), "the termwise lower bound"))
    if upper is not None:
        goals.append((sp.Le(value, upper, evaluate=False), "the termwise upper bound"))
    _termwise(context, family, termwise, goals)


def _bounds(
    lower: sp.Expr | None, middle: sp.Expr, upper: sp.Expr | None, scale: sp.Expr
) -> sp.Basic:
    parts = []
    if lower is not None:
        parts.append(sp.Le(lower * scale, middle, evaluate=False))
    if upper is not None:
        parts.append(sp.Le(middle, upper * scale, evaluate=False))
    return sp.And(*parts)


@dataclass(frozen=True)
class WeightedSum(Step):
    """Rule: ``w_j >= 0`` and ``lo <= f_j <= hi`` give ``lo·W <= Σ w_j f_j <= hi·W``.

    ``total`` is the sum of ``w_j f_j`` and ``weights`` the sum ``W`` of the ``w_j``,
    over the same family; ``value`` is ``f_j``.  Side conditions: ``total``'s term equals
    ``weights``' term times ``value`` (``cancel``), and for a generic member the weight
    is non-negative and the value within the bounds (z3, after the ``termwise``
    sub-steps).  The bounds must not depend on the index.
    """

    total: SumLike
    weights: SumLike
    value: sp.Expr
    lower: sp.Expr | None
    upper: sp.Expr | None
    description: str
    termwise: Sequence[Step] = ()
    method: ClassVar[str] = "rule: weighted termwise bounds summed"
    generic_fields: ClassVar[tuple[str, ...]] = ("value",)

    def __post_init__(self) -> None:
        frozen_inputs(self)

    def sub_steps(self) -> tuple[Step, ...]:
        return tuple(self.termwise)

    @property
    def conclusion(self) -> sp.Basic:
        return _bounds(self.lower, self.total.symbol, self.upper, self.weights.symbol)

    def decide(self, context: Context) -> str:
        _weighted(
            context, self.total, self.weights, self.value, self.lower, self.upper, self.termwise
        )
        return "term = weight · value; weights >= 0 and termwise bounds implied by the facts"


@dataclass(frozen=True)
class ConvexCombination(WeightedSum):
    """Rule: weights ``w_j >= 0`` that add up to 1 and ``lo <= f_j`` give ``lo <= Σ w_j f_j``.

    As :class:`WeightedSum` (the same inputs), and the facts must imply that the
    weights' sum is 1 (which some step proved, or an assumption states: a count is never
    a proof of it).
    """

    method: ClassVar[str] = "rule: convex combination"

    @property
    def conclusion(self) -> sp.Basic:
        return _bounds(self.lower, self.total.symbol, self.upper, sp.Integer(1))

    def decide(self, context: Context) -> str:
        context.require(
            sp.Eq(self.weights.symbol, 1, evaluate=False), "that the weights add up to 1"
        )
        super().decide(context)
        return "weights >= 0 adding up to 1; termwise bounds implied by the facts"


@dataclass(frozen=True)
class SumLinearity(Step):
    """Rule: a termwise linear identity sums to the same identity of the sums.

    If ``target.term = Σ_r coefficient_r · part_r.term`` for a generic member (decided by
    ``cancel`` with its side conditions, from the facts and the family's domain), with
    index-free coefficients and every sum over the same family, then
    ``target.symbol = Σ_r coefficient_r · part_r.symbol``.  ``substitute`` lists
    equations ``symbol = expression`` (implied by the facts) used in the termwise
    identity.
    """

    target: SumLike
    combination: Sequence[tuple[sp.Expr | int, SumLike]]
    description: str
    substitute: Sequence[sp.Basic] = ()
    method: ClassVar[str] = "rule: linearity of finite sums"

    def __post_init__(self) -> None:
        frozen_inputs(self)

    @property
    def conclusion(self) -> sp.Basic:
        return sp.Eq(
            self.target.symbol,
            sp.Add(*(coeff * part.symbol for coeff, part in self.combination)),
            evaluate=False,
        )

    def decide(self, context: Context) -> str:
        target = _sum(context, self.target, "the target")
        family = target.family
        parts = [_sum(context, part, "a part") for _, part in self.combination]
        _same_family(parts, family)
        for coeff, _ in self.combination:
            _free_of_index(coeff, family, "a coefficient")
        inside = context.inside(family)
        # coefficient · term and coefficient · symbol are evaluated as they are built
        require_inputs_defined(
            context.facts,
            [(coeff, f"the coefficient {sp.sstr(coeff)}") for coeff, _ in self.combination],
        )
        require_inputs_defined(
            inside.facts, [(part.term, f"the term of {sp.sstr(part.symbol)}") for part in parts]
        )
        pairs = zip(self.combination, parts, strict=True)
        termwise = sp.Add(*(coeff * part.term for (coeff, _), part in pairs))
        if self.substitute:
            lhs, rhs = _substituted(inside, self.substitute, target.term, termwise)
            detail = decide_identity(lhs, rhs, inside.facts, "the termwise identity", True)
        else:
            detail = decide_identity(target.term, termwise, inside.facts, "the termwise identity")
        return f"termwise identity decided: {detail}"


@dataclass(frozen=True)
class RealRoots(Step):
    """Rule: ``roots`` are all the real roots of ``polynomial`` (in ``var``).

    Each root must be a :class:`~softmax_dispersion.theory.definitions.RealRoot` of the
    claim for this polynomial, their intervals disjoint, and exact root counting must
    find no other real root.  Concludes ``P(var) = 0 ⇒ var = r_1 ∨ … ∨ var = r_k`` (for
    every value of ``var``).
    """

    polynomial: sp.Expr
    var: sp.Symbol
    roots: Sequence[RealRoot]
    description: str
    method: ClassVar[str] = "exact real-root counting"

    def __post_init__(self) -> None:
        frozen_inputs(self)

    @property
    def conclusion(self) -> sp.Basic:
        return sp.Implies(
            sp.Eq(self.polynomial, 0, evaluate=False),
            sp.Or(*(sp.Eq(self.var, root.symbol, evaluate=False) for root in self.roots)),
        )

    def decide(self, context: Context) -> str:
        if sp.sympify(self.polynomial).doit() != self.polynomial:
            raise ProofError(
                f"the polynomial {sp.sstr(self.polynomial)} is held unevaluated: give it "
                "as sympy builds it"
            )
        try:
            poly = sp.Poly(self.polynomial, self.var, domain="QQ")
        except (sp.PolynomialError, sp.CoercionFailed) as error:
            raise ProofError(f"not a polynomial with rational coefficients: {error}") from None
        intervals = []
        for root in self.roots:
            if type(root) is not RealRoot or context.definitions.by_key.get(root.symbol) != root:
                raise ProofError(f"{root!r} is not a RealRoot among the claim's definitions")
            if (
                sp.Poly(root.polynomial, root.var, domain="QQ")
                .as_expr()
                .xreplace({root.var: self.var})
                != poly.as_expr()
            ):
                raise ProofError(f"{root.symbol} is a root of another polynomial")
            intervals.append((root.lower, root.upper))
        intervals.sort()
        for (_, hi), (lo, _) in itertools.pairwise(intervals):
            if lo < hi:
                raise ProofError("two roots' intervals overlap")
        total = poly.count_roots()
        if total != len(self.roots):
            raise ProofError(f"the polynomial has {total} real roots, not {len(self.roots)}")
        return f"{total} real roots, each isolated in its own interval"


@dataclass(frozen=True)
class Cite(Step):
    """Rule: a verified claim's statement, where its assumptions hold.

    The cited claim must be one the citing claim declares in ``cites``, checked and
    verified (the very object, by content hash).  Every definition the cited claim's
    statement and assumptions depend on must be a definition of the citing claim too:
    the same abbreviations and roots, and sums with the same name and term over a family
    of the same index and count whose domain implies the cited one's.  Then its
    assumptions must follow from the facts (z3), and its statement is concluded.
    """

    claim: CitedClaim
    description: str
    method: ClassVar[str] = "rule: a verified claim, its assumptions discharged"

    @property
    def conclusion(self) -> sp.Basic:
        return self.claim.statement

    def decide(self, context: Context) -> str:
        claim = self.claim
        if context.citations is None:
            raise ProofError("no cited claims here")
        outcome = context.citations(claim)
        if isinstance(outcome, str):
            raise ProofError(outcome)
        if not outcome.verified:
            raise ProofError(f"{claim.id} did not verify: {outcome.problem}")
        missing = set(claim.naturals) - set(context.naturals)
        if missing:
            raise ProofError(
                f"{claim.id} holds for natural {sorted(map(str, missing))} only; declare them "
                "natural here too"
            )
        cited = Definitions(claim.definitions)
        _compatible(context, cited, claim)
        context.require(sp.And(*claim.assumptions), f"the assumptions of {claim.id}")
        return f"{claim.id} verified (hash {outcome.content_hash[:12]}); its assumptions hold"


def _compatible(context: Context, cited: Definitions, claim: CitedClaim) -> None:
    """The cited claim's definitions mean the same here (its families at most wider)."""
    families: dict[str, Family] = {}
    for definition in cited.mentioned([claim.statement, *claim.assumptions]):
        mine = context.definitions.by_key.get(definition.key)
        name = name_of(definition)
        if mine is None or type(mine) is not type(definition):
            raise ProofError(
                f"{claim.id} defines {name}: define it here the same way to cite {claim.id}"
            )
        if isinstance(definition, (Let, RealRoot)):
            if mine != definition:
                raise ProofError(f"{name} is defined here otherwise than in {claim.id}")
            continue
        assert isinstance(mine, SumOver) and isinstance(definition, SumOver)
        theirs, ours = definition.family, mine.family
        if (mine.symbol, mine.term) != (definition.symbol, definition.term) or (
            ours.index,
            ours.count,
        ) != (theirs.index, theirs.count):
            raise ProofError(f"{name} is defined here otherwise than in {claim.id}")
        if families.setdefault(theirs.name, ours) != ours:
            raise ProofError(f"{claim.id}'s family {theirs.name!r} stands for two families here")
        inside = context.inside(ours)
        for relation in theirs.domain:
            inside.require(relation, f"{ours.name!r} lies within {claim.id}'s domain")


@dataclass(frozen=True)
class Induction(Step):
    """Rule: induction over a natural-number symbol of the claim.

    ``var`` must be one of the claim's ``naturals``: the claim's facts that mention it
    hold for every natural value.  Base: the facts at ``var = 0`` imply
    ``predicate(0)``.  Step: for a fresh ``k >= 0``, the facts at ``k`` and at ``k + 1``
    and ``predicate(k)`` imply ``predicate(k + 1)``.  Both by z3.  Concludes
    ``predicate`` (for every natural value of ``var``).
    """

    var: sp.Symbol
    predicate: sp.Basic
    description: str
    method: ClassVar[str] = "rule: induction (base and step by z3)"

    def __post_init__(self) -> None:
        frozen_inputs(self)

    @property
    def conclusion(self) -> sp.Basic:
        return self.predicate

    def decide(self, context: Context) -> str:
        var = self.var
        if var not in context.naturals:
            raise ProofError(f"{var} is not a natural-number symbol of the claim")
        if self.predicate.has(*_BINDERS):
            raise ProofError("the predicate must not contain derivatives, limits or Subs")
        if var not in self.predicate.free_symbols:
            raise ProofError(f"the predicate does not depend on {var}")

        def at(value: sp.Expr) -> list[sp.Basic]:
            return [f.subs(var, value) if var in f.free_symbols else f for f in context.facts]

        from softmax_dispersion.theory._core import require

        require(at(sp.Integer(0)), self.predicate.subs(var, 0), "the base case")
        k = sp.Dummy("k", real=True)
        hypotheses = [*at(k), *at(k + 1), sp.Ge(k, 0, evaluate=False), self.predicate.subs(var, k)]
        require(hypotheses, self.predicate.subs(var, k + 1), "the induction step")
        return "base case and induction step implied by the facts"
