"""The kernel's inference rules (besides calculus): each decides its side conditions.

A rule is written as a frozen dataclass (its fields are its inputs, sympy objects) and
decided on its frozen form: the kernel reads the fields into terms
(:mod:`~softmax_dispersion.theory._snapshot`), builds the conclusion from them with its
own non-evaluating constructors, and decides the side conditions, each by a method that
can fail (``cancel``, z3, exact root counting).  Two side conditions are common to
several rules: every input a rule combines into a new expression is shown well-defined
first (``require_inputs_defined``), and a limit or a derivative in a variable never
holds fixed a defined symbol whose definition mentions that variable (``held_fixed``).
Claim modules build steps from these classes; they cannot add a rule (a claim accepts
only the kernel's own classes, see :data:`softmax_dispersion.theory.kernel.RULES`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType
from typing import Any, ClassVar

import sympy as sp

from softmax_dispersion.theory import terms
from softmax_dispersion.theory._bridge import Prover
from softmax_dispersion.theory._bridge import polynomial as read_polynomial
from softmax_dispersion.theory._core import (
    LOGIC,
    ClaimRef,
    Context,
    FrozenStep,
    ProofError,
    RuleLogic,
    Step,
    SumRef,
    frozen_inputs,
    held_fixed,
    require,
)
from softmax_dispersion.theory._deciders import (
    LIMIT_OPS,
    decide_identity,
    leading_term_limit,
    proved,
    require_conditions,
    require_defined,
    require_inputs_defined,
    sign_assumptions,
    sympy_limit,
)
from softmax_dispersion.theory.definitions import (
    Definitions,
    FamilyDef,
    LetDef,
    RootDef,
    SumAt,
    SumDef,
    SumOver,
)
from softmax_dispersion.theory.terms import Term, TermError, show

__all__ = [
    "Assume",
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


def _relation(strict: bool) -> str:
    """The relation ``<`` (strict) or ``<=``."""
    return "lt" if strict else "le"


def _times(a: Term, b: Term) -> Term:
    """``a · b`` as a conclusion shows it: the rule proved ``a`` and ``b`` well-defined."""
    return terms.defined_form(terms.mul(a, b))


def register(
    rule: type[Step],
    kinds: dict[str, str],
    conclusion: Any,
    decide: Any,
    generic_fields: tuple[str, ...] = (),
    proves_derivative: bool = False,
) -> None:
    """Record ``rule``'s logic in the kernel's table (only rule modules call this).

    ``proves_derivative``: the rule's conclusion ``Derivative(...) = value`` comes with
    a proof that the derivative exists, which later steps may rely on.
    """
    LOGIC[rule] = RuleLogic(
        kinds, conclusion, decide, rule.method, generic_fields, proves_derivative
    )


@dataclass(frozen=True)
class ResolvedSum:
    """A sum a step names, resolved: its symbol, term and family (at a value, if any)."""

    definition: SumDef
    symbol: Term
    term: Term

    @property
    def family(self) -> FamilyDef:
        """The family summed over."""
        return self.definition.family


def resolve(definitions: Definitions, ref: SumRef, what: str) -> ResolvedSum:
    """A sum reference resolved against the claim's definitions."""
    definition = definitions.sum(ref.name, what)
    if ref.at is None:
        return ResolvedSum(definition, definition.symbol, definition.term)
    if definition.var is None:
        raise ProofError(f"{what}: .at() names a value of a function-valued sum")
    return ResolvedSum(definition, definition.at(ref.at), definition.term_at(ref.at))


def _resolved_in(context: Context, ref: SumRef, what: str) -> ResolvedSum:
    """As :func:`resolve`, in a step's context (a value ``A(v)`` it reads was shown
    well-defined by :func:`require_sum_values_defined` before the rule decides)."""
    return resolve(context.definitions, ref, what)


def require_sum_values_defined(value: object, context: Context) -> None:
    """Every sum a step reads at a value (``A.at(v)``, wherever it sits in the step's
    inputs) is well-defined there, checked once for every rule before it decides (red
    team 12: a rule that resolved its parts itself had skipped the check).

    The term at ``v`` is the kernel's substitution, nothing evaluated: ``exp(τ log x)``
    at ``τ = 1`` stays ``exp(1 · log x)`` and needs ``x > 0``.  And the term's own
    conditions are asked with ``v`` put in: ``x**t`` needs ``x > 0`` for every ``t``,
    though ``x**2``, the term at ``t = 2``, needs nothing (red team 11: ``A(t) = Σ x^t``
    read at 2 with ``x = 0`` is 0 by substitution, but 1 as Coq's ``Rpower`` reads it).
    """
    if isinstance(value, (list, tuple)):
        for item in value:
            require_sum_values_defined(item, context)
        return
    if not isinstance(value, SumRef) or value.at is None:
        return
    resolved = resolve(context.definitions, value, f"{value.name} read")
    inside = context.inside(resolved.family) if context.scope is None else context
    var = resolved.definition.var
    assert var is not None
    where = f"{value.name} read at {var} = {show(value.at)}"
    require_defined(inside.facts, [resolved.term], where)
    conditions = [
        (terms.substitute(condition, {var: value.at}), name)
        for condition, name in terms.domain_conditions(resolved.definition.term)
    ]
    require_conditions(inside.facts, conditions, where)


def _free_of_index(expr: Term | None, family: FamilyDef, what: str) -> None:
    if expr is None:
        return
    clash = terms.free_names(expr) & set(family.index)
    if clash:
        raise ProofError(f"{what} depends on the summation index {sorted(clash)}")


def _termwise(
    context: Context,
    family: FamilyDef,
    steps: Sequence[FrozenStep],
    goals: Sequence[tuple[Term, str]],
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


def _same_family(parts: Sequence[ResolvedSum], family: FamilyDef) -> None:
    for part in parts:
        if part.family != family:
            raise ProofError(
                f"{show(part.symbol)} ranges over the family {part.family.name!r}, "
                f"not {family.name!r}"
            )


# --------------------------------------------------------------------------------------
# Identity


@dataclass(frozen=True)
class Identity(Step):
    """``lhs = rhs``, decided by ``cancel`` after substituting ``t = exp(.)``.

    Side conditions (z3, from the facts): every denominator of ``lhs`` and ``rhs`` is
    non-zero, and, where the decision splits a logarithm or rewrites a symbolic power,
    every factor and base involved is positive.  ``substitute`` lists equations
    ``symbol = expression`` that the facts must imply; they are substituted (by the
    kernel, nothing evaluated) before deciding.

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


def _identity_conclusion(step: FrozenStep, _: Definitions) -> Term:
    return terms.rel("eq", step["lhs"], step["rhs"])


def _identity_decide(step: FrozenStep, context: Context) -> str:
    lhs, rhs = step["lhs"], step["rhs"]
    if not step["substitute"]:
        return decide_identity(lhs, rhs, context.facts)
    (lhs, rhs), carried = substituted(context, step["substitute"], lhs, rhs)
    return decide_identity(lhs, rhs, context.facts, known=carried)


register(
    Identity,
    {"lhs": "real", "rhs": "real", "description": "text", "substitute": "formulas"},
    _identity_conclusion,
    _identity_decide,
)


def substituted(
    context: Context, equations: Sequence[Term], *exprs: Term
) -> tuple[tuple[Term, ...], list[Term]]:
    """Substitute equations ``term = expression`` that the facts imply.

    The expressions, and each substituted expression, must be well-defined (every
    partial operation inside its domain, by z3).  The substituted expressions then have
    the values of the originals, and every partial operation in them is inside its
    domain too: returned with them are the equations and the domain conditions carried
    through the replacements (each proved condition with the equal value put in, and
    the conditions of each value), true facts from which a decider proves the new
    expressions' conditions.  The replacement is the kernel's own (nothing evaluated,
    nothing under a limit or a derivative touched).
    """
    require_defined(context.facts, list(exprs), "before substituting")
    carried = [condition for condition, _ in terms.domain_conditions(*exprs)]
    result = tuple(exprs)
    for equation in equations:  # in order: each replaces a term by its value
        lhs = equation[2] if equation[0] == "eq" else None
        if lhs is None or lhs[0] not in ("sym", "app"):
            raise ProofError(
                f"a substitution must read symbol = expression (or f(x) = expression), "
                f"not {show(equation)}"
            )
        rhs = equation[3]
        if any(node == lhs for node in terms.walk(rhs)):
            raise ProofError(f"the substitution {show(equation)} is circular")
        if any(terms.occurs_under_binder(e, lhs) for e in result):
            raise ProofError(
                f"{show(lhs)} occurs inside a derivative, a limit or a substitution: an "
                "equation at one point says nothing of its neighbourhood"
            )
        context.require(equation, "the substituted equation")
        require_defined(context.facts, [rhs], "the substituted value")
        result = tuple(terms.replace(e, lhs, rhs) for e in result)
        carried = [terms.replace(c, lhs, rhs) for c in carried]
        carried += [equation, *(condition for condition, _ in terms.domain_conditions(rhs))]
    return result, carried


# --------------------------------------------------------------------------------------
# Implied


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


register(
    Implied,
    {"statement": "formula", "description": "text"},
    lambda step, _: step["statement"],
    lambda step, context: context.require(step["statement"], "the conclusion"),
)


# --------------------------------------------------------------------------------------
# Assume


@dataclass(frozen=True)
class Assume(Step):
    """Rule: steps proved under ``hypothesis`` conclude ``hypothesis ⇒ C``.

    The sub-steps ``steps`` are checked in order in the context with ``hypothesis``
    added to the facts, each verified conclusion a fact for the later sub-steps only;
    ``C`` is the last one's conclusion.  Nothing a sub-step concludes reaches the outer
    facts: the rule concludes the implication alone.

    Side conditions: at least one sub-step, every one verified; the hypothesis is a
    formula of the kernel's terms that mentions no summation index (it speaks of the
    claim's symbols, never of a family's generic member), no limit or derivative (no
    bound variable), and no natural-number symbol (:class:`Induction` reads the facts
    at other values of a natural, which is sound for facts that hold for every natural
    value, not for a hypothesis about one).

    No witness is asked of the hypothesis: it need not be satisfiable.  An implication
    whose hypothesis can never hold is true, so sub-steps that derive anything from a
    contradictory hypothesis still conclude only a true implication; the claim's own
    assumptions, whose consequences are not guarded so, are the ones shown satisfiable.

    Examples
    --------
    >>> import sympy as sp
    >>> from softmax_dispersion.theory.kernel import Assume, Implied
    >>> a = sp.Symbol("a", real=True)
    >>> step = Assume(sp.Gt(a, 1), [Implied(sp.Gt(a**2, a), "a > 1")], "if a > 1")
    >>> step.conclusion
    Implies(a > 1, a**2 > a)
    >>> step.check().verified
    True
    >>> Assume(sp.Gt(a, 0), [Implied(sp.Gt(a**2, a), "a > 0")], "if a > 0").check().verified
    False
    """

    hypothesis: sp.Basic
    steps: Sequence[Step]
    description: str
    method: ClassVar[str] = "rule: implication introduction (sub-steps under the hypothesis)"

    def __post_init__(self) -> None:
        frozen_inputs(self)


def _assume_conclusion(step: FrozenStep, definitions: Definitions) -> Term:
    steps: tuple[FrozenStep, ...] = step["steps"]
    if not steps:
        raise ProofError("an assumption with no sub-steps concludes nothing")
    last = steps[-1]
    logic = _logic_named(last.rule)
    if last.error or logic is None:
        raise ProofError(f"the last sub-step cannot be read: {last.error or last.rule}")
    return terms.make("implies", (step["hypothesis"], logic.conclusion(last, definitions)))


def _assume_decide(step: FrozenStep, context: Context) -> str:
    hypothesis = step["hypothesis"]
    index = context.definitions.stray_index([hypothesis])
    if index:
        raise ProofError(
            f"the hypothesis mentions the summation index {', '.join(index)}: it must speak "
            "of the claim's symbols (say what every member satisfies in its family's domain)"
        )
    if terms.has_op(hypothesis, "lim", "der"):
        raise ProofError("the hypothesis must not contain a limit or a derivative")
    naturals = sorted(terms.free_names(hypothesis) & set(context.naturals))
    if naturals:
        raise ProofError(
            f"the hypothesis mentions the natural-number symbol {', '.join(naturals)}: "
            "induction reads facts at other values, which a hypothesis does not give"
        )
    steps = step["steps"]
    if not steps:
        raise ProofError("an assumption with no sub-steps concludes nothing")
    results, conclusions, ok = context.runner(steps, context.assuming(hypothesis))
    context.sub_results = results
    if not ok:
        failed = next(r for r in results if not r.verified)
        raise ProofError(
            f"under the hypothesis, step {failed.description!r} failed: {failed.detail}"
        )
    built = _assume_conclusion(step, context.definitions)
    proved_here = terms.make("implies", (hypothesis, conclusions[-1]))
    if terms.canonical(built) != terms.canonical(proved_here):
        raise ProofError("the conclusion is not the last sub-step's")  # defensive
    return f"{len(steps)} sub-step(s) verified with {show(hypothesis)} among the facts"


def _logic_named(name: str) -> RuleLogic | None:
    """The logic of the kernel rule called ``name`` (``None`` for no rule)."""
    return next((logic for rule, logic in LOGIC.items() if rule.__name__ == name), None)


register(
    Assume,
    {"hypothesis": "formula", "steps": "steps", "description": "text"},
    _assume_conclusion,
    _assume_decide,
)


# --------------------------------------------------------------------------------------
# Limit


@dataclass(frozen=True)
class Limit(Step):
    """``lim_{var -> oo} expr = expected``, confirmed by two independent routes.

    Side conditions: the sign of every parameter is a stated fact (z3 finds the
    strongest of positive, negative, zero, non-negative, non-positive); only then does
    sympy's ``limit`` (Gruntz) see the parameters, as symbols with exactly those signs.
    The value must also follow from the leading terms of the numerator and the
    denominator, as generalised polynomials in ``var`` with exponents ordered by z3;
    both values are compared with ``expected`` exactly (:class:`Identity`).  The
    conclusion speaks of the limit as a whole: it is never a real number to z3.

    A sign is all sympy's ``limit`` is told of a parameter, and a relation between
    parameters (``s·δ > 1``) is not a sign: for a positive ``a`` it gives 0 for
    ``n^a/(n^a + n − 1)``, wrong for ``a > 1``.  ``substitute`` lists *parameter
    relations* ``term = expression`` that carry such a relation into a sign: the facts
    must imply each (z3), neither side may mention ``var`` (nor a symbol defined in terms
    of it), both must be well-defined, built from powers, ``exp`` and ``log``, and the
    left side must occur in ``expr``; each is put in by the kernel's replacement, in
    order, and *both* routes decide the expression so rewritten, whose parameters need
    their signs.  The rewritten expression equals ``expr`` for every value of ``var``
    (the two sides are equal numbers that do not vary with it), so it has the same
    limit; the conclusion is about ``expr`` as written.  With ``q := s·δ − 1`` a
    definition, ``s·δ = 1 + q`` turns ``s·δ > 1`` into the sign ``q > 0``.

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
    >>> a = sp.Symbol("a", real=True)
    >>> spike = n**a / (n**a + n - 1)
    >>> Limit(spike, n, sp.oo, 1, "a > 1").check([sp.Gt(a, 1)]).verified  # a sign is not enough
    False
    >>> above = Limit(spike, n, sp.oo, 1, "a = 1 + q, q > 0", substitute=[sp.Eq(a, 1 + q)])
    >>> above.check([sp.Gt(a, 1), sp.Eq(q, a - 1)]).verified
    True
    """

    expr: sp.Expr
    var: sp.Symbol
    point: sp.Expr
    expected: sp.Expr
    description: str
    substitute: Sequence[sp.Basic] = ()
    method: ClassVar[str] = "limit: sympy (Gruntz) and leading terms, both"

    def __post_init__(self) -> None:
        frozen_inputs(self)


def _limit_conclusion(step: FrozenStep, _: Definitions) -> Term:
    point = step["point"]
    direction = "-" if point == terms.OO else "+"
    return terms.rel(
        "eq", terms.limit(step["expr"], step["var"], point, direction), step["expected"]
    )


def _limit_expression(expr: Term, what: str) -> None:
    if any(node[0] not in LIMIT_OPS for node in terms.walk(expr)):
        raise ProofError(f"{what} must be built from powers, exp and log only")
    try:
        terms.check_size(expr, what)
    except TermError as error:
        raise ProofError(str(error)) from None


def _reparametrised(context: Context, equations: Sequence[Term], expr: Term, var: str) -> Term:
    """``expr`` with each parameter relation ``lhs = rhs`` put in, in order.

    Each must be an equation the facts imply, of two well-defined sides free of ``var``
    whose left side occurs in the expression: replacing equal numbers that do not vary
    with ``var`` leaves the function of ``var``, hence its limit, unchanged.
    """
    result = expr
    for equation in equations:
        shown = show(equation)
        if equation[0] != "eq":
            raise ProofError(f"a parameter relation reads term = expression, not {shown}")
        lhs, rhs = equation[2], equation[3]
        if var in terms.free_names(lhs) | terms.free_names(rhs):
            raise ProofError(
                f"the parameter relation {shown} mentions the limit variable {var}: an "
                f"equation at one value of {var} says nothing of the others"
            )
        if not terms.free_names(lhs):
            raise ProofError(f"the parameter relation {shown}: its left side has no parameter")
        for side in (lhs, rhs):
            _limit_expression(side, f"the parameter relation {shown}")
        if not any(node == lhs for node in terms.walk(result)):
            raise ProofError(f"{show(lhs)} does not occur in the limit's expression")
        if any(node == lhs for node in terms.walk(rhs)):
            raise ProofError(f"the parameter relation {shown} is circular")
        require_defined(context.facts, [lhs, rhs], f"the parameter relation {shown}")
        context.require(equation, "the parameter relation")
        result = terms.replace(result, lhs, rhs)
    _limit_expression(result, "the limit's expression, the relations put in")
    return result


TAIL_BOUNDS = (1, 1 << 20)
"""The bounds ``N`` tried for a limit's tail: a condition on the limit variable ``n``
must hold for every ``n > N`` (z3), for one of them."""


def _on_the_tail(context: Context, var: str) -> Prover:
    """The prover of a limit in ``var`` at ``+oo``: what sympy reads must hold eventually.

    A condition free of ``var`` is proved from the facts.  One that mentions ``var``
    (the denominator ``n - 1``, the base ``n`` of ``n**s``) is about the limit's
    variable, not the claim's symbol of that name: it is proved for a fresh variable
    ``v`` from the facts (which say nothing of ``v``) and ``v > N``, for ``N`` one of
    :data:`TAIL_BOUNDS`.  A limit depends only on a tail, and on the tail every partial
    operation is inside its domain, where sympy's laws are the kernel's reading.
    """
    done: set[Term] = set()

    def prove(condition: Term, name: str) -> None:
        what = f"the limit's expression: {name}"
        key = terms.canonical(condition)
        if key in done:
            return
        if var not in terms.free_names(condition):
            context.require(condition, what)
            done.add(key)
            return
        taken = set(terms.free_names(condition))
        for fact in context.facts:
            taken |= terms.free_names(fact)
        tail = terms.sym(terms.fresh_name(f"{var}_tail", taken))
        moved = terms.substitute(condition, {var: tail})
        for bound in TAIL_BOUNDS:
            beyond = [terms.rel("lt", terms.num(bound), tail), terms.rel("lt", terms.ZERO, tail)]
            if proved([*context.facts, *beyond], moved):
                done.add(key)
                return
        raise ProofError(
            f"{what} is not shown to hold for every {var} > N (N = "
            f"{' or '.join(str(b) for b in TAIL_BOUNDS)}): the limit's expression must be "
            f"well-defined on a tail of {var}"
        )

    return prove


def _limit_decide(step: FrozenStep, context: Context) -> str:
    expr, var, expected = step["expr"], step["var"], step["expected"]
    if step["point"] != terms.OO:
        raise ProofError("only limits at +oo have a second route (leading terms)")
    if var in terms.free_names(expected):
        raise ProofError(f"the claimed limit depends on {var}")
    held_fixed(context, [expr, expected, *step["substitute"]], var, "a limit")
    _limit_expression(expr, "the limit's expression")
    decided = _reparametrised(context, step["substitute"], expr, var)
    tail = _on_the_tail(context, var)
    for condition, name in terms.domain_conditions(expr, decided):
        tail(condition, name)
    signs: dict[str, str] = {}
    for name in sorted(terms.free_names(decided) - {var}):
        signs[name] = sign_assumptions(name, context.facts)
    leading = leading_term_limit(decided, var, context.facts, tail)
    gruntz = sympy_limit(decided, var, signs, tail)
    for route, value in (("sympy's limit", gruntz), ("the leading terms", leading)):
        _same_value(value, expected, context, route)
    shown = ", ".join(f"{name} {sign}" for name, sign in signs.items())
    relations = "; ".join(show(e) for e in step["substitute"])
    return (
        (f"with {relations} put in; " if relations else "")
        + f"signs: {shown or 'no parameters'}; sympy's limit and the leading terms both give "
        f"{show(leading)}"
    )


def _same_value(value: Term, expected: Term, context: Context, route: str) -> None:
    if value[0] == "inf" or expected[0] == "inf":
        if value != expected:
            raise ProofError(f"{route} gives {show(value)}, not {show(expected)}")
        return
    try:
        decide_identity(value, expected, context.facts, f"{route} ({show(value)})")
    except ProofError as error:
        raise ProofError(f"{error}; the claimed value is {show(expected)}") from None


register(
    Limit,
    {
        "expr": "real",
        "var": "name",
        "point": "point",
        "expected": "point",
        "description": "text",
        "substitute": "formulas",
    },
    _limit_conclusion,
    _limit_decide,
)


# --------------------------------------------------------------------------------------
# Monotonicity of exp and log


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


def _exp_conclusion(step: FrozenStep, _: Definitions) -> Term:
    inverse = terms.power(step["scale"], -1)
    return terms.rel(
        _relation(step["strict"]),
        terms.defined_form(terms.exp(terms.mul(step["lower"], inverse))),
        terms.defined_form(terms.exp(terms.mul(step["upper"], inverse))),
    )


def _exp_decide(step: FrozenStep, context: Context) -> str:
    lower, upper, scale = step["lower"], step["upper"], step["scale"]
    require_inputs_defined(
        context.facts,
        [(lower, "the smaller side"), (upper, "the larger side"), (scale, "the scale")],
    )
    context.require(terms.rel(_relation(step["strict"]), lower, upper), "the premise")
    context.require(terms.rel("gt", scale, terms.ZERO), "positivity of the scale")
    return "premise and scale > 0 implied by the facts"


register(
    ExpMonotone,
    {"lower": "real", "upper": "real", "description": "text", "scale": "real", "strict": "bool"},
    _exp_conclusion,
    _exp_decide,
)


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


def _log_decide(step: FrozenStep, context: Context) -> str:
    lower, upper = step["lower"], step["upper"]
    context.require(terms.rel("gt", lower, terms.ZERO), "positivity of the smaller side")
    context.require(terms.rel(_relation(step["strict"]), lower, upper), "the premise")
    return "premise and positivity implied by the facts"


register(
    LogMonotone,
    {"lower": "real", "upper": "real", "description": "text", "strict": "bool"},
    lambda step, _: terms.rel(
        _relation(step["strict"]), terms.log(step["lower"]), terms.log(step["upper"])
    ),
    _log_decide,
)


# --------------------------------------------------------------------------------------
# Sums


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


def _sum_of_terms_conclusion(step: FrozenStep, definitions: Definitions) -> Term:
    total = resolve(definitions, step["total"], "the sum")
    relation = _relation(step["strict"])
    count = total.family.count
    parts = []
    if step["lower"] is not None:
        parts.append(terms.rel(relation, _times(count, step["lower"]), total.symbol))
    if step["upper"] is not None:
        parts.append(terms.rel(relation, total.symbol, _times(count, step["upper"])))
    return terms.conj(*parts)


def _sum_of_terms_decide(step: FrozenStep, context: Context) -> str:
    total = _resolved_in(context, step["total"], "the sum")
    family = total.family
    lower, upper, strict = step["lower"], step["upper"], step["strict"]
    if lower is None and upper is None:
        raise ProofError("no bound to sum")
    _free_of_index(lower, family, "the lower bound")
    _free_of_index(upper, family, "the upper bound")
    require_inputs_defined(
        context.facts,
        [(family.count, "the count"), (lower, "the lower bound"), (upper, "the upper bound")],
    )
    least = 1 if strict else 0
    context.require(terms.rel("ge", family.count, terms.num(least)), f"a count of at least {least}")
    relation = _relation(strict)
    goals = []
    if lower is not None:
        goals.append((terms.rel(relation, lower, total.term), "the termwise lower bound"))
    if upper is not None:
        goals.append((terms.rel(relation, total.term, upper), "the termwise upper bound"))
    _termwise(context, family, step["termwise"], goals)
    return "termwise bounds for a generic member, and the count, implied by the facts"


register(
    SumOfTerms,
    {
        "total": "sum",
        "lower": "real?",
        "upper": "real?",
        "description": "text",
        "termwise": "steps",
        "strict": "bool",
    },
    _sum_of_terms_conclusion,
    _sum_of_terms_decide,
)


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


def _bounds(lower: Term | None, middle: Term, upper: Term | None, scale: Term) -> Term:
    parts = []
    if lower is not None:
        parts.append(terms.rel("le", _times(lower, scale), middle))
    if upper is not None:
        parts.append(terms.rel("le", middle, _times(upper, scale)))
    return terms.conj(*parts)


def _weighted(step: FrozenStep, context: Context) -> None:
    """The side conditions of a weighted sum ``Σ w f`` bounded through ``Σ w``."""
    total = _resolved_in(context, step["total"], "the weighted sum")
    weights = _resolved_in(context, step["weights"], "the weights")
    value, lower, upper = step["value"], step["lower"], step["upper"]
    family = total.family
    _same_family([weights], family)
    if lower is None and upper is None:
        raise ProofError("no bound to sum")
    _free_of_index(lower, family, "the lower bound")
    _free_of_index(upper, family, "the upper bound")
    require_inputs_defined(context.facts, [(lower, "the lower bound"), (upper, "the upper bound")])
    inside = context.inside(family)
    require_inputs_defined(
        inside.facts, [(weights.term, "the weights' term"), (value, "the value")]
    )
    decide_identity(
        total.term, terms.mul(weights.term, value), inside.facts, "term = weight · value"
    )
    goals = [(terms.rel("ge", weights.term, terms.ZERO), "non-negativity of the weights")]
    if lower is not None:
        goals.append((terms.rel("le", lower, value), "the termwise lower bound"))
    if upper is not None:
        goals.append((terms.rel("le", value, upper), "the termwise upper bound"))
    _termwise(context, family, step["termwise"], goals)


def _weighted_decide(step: FrozenStep, context: Context) -> str:
    _weighted(step, context)
    return "term = weight · value; weights >= 0 and termwise bounds implied by the facts"


_WEIGHTED_KINDS = {
    "total": "sum",
    "weights": "sum",
    "value": "real",
    "lower": "real?",
    "upper": "real?",
    "description": "text",
    "termwise": "steps",
}

register(
    WeightedSum,
    _WEIGHTED_KINDS,
    lambda step, definitions: _bounds(
        step["lower"],
        resolve(definitions, step["total"], "the weighted sum").symbol,
        step["upper"],
        resolve(definitions, step["weights"], "the weights").symbol,
    ),
    _weighted_decide,
    ("value",),
)


@dataclass(frozen=True)
class ConvexCombination(WeightedSum):
    """Rule: weights ``w_j >= 0`` that add up to 1 and ``lo <= f_j`` give ``lo <= Σ w_j f_j``.

    As :class:`WeightedSum` (the same inputs), and the facts must imply that the
    weights' sum is 1 (which some step proved, or an assumption states: a count is never
    a proof of it).
    """

    method: ClassVar[str] = "rule: convex combination"


def _convex_decide(step: FrozenStep, context: Context) -> str:
    weights = resolve(context.definitions, step["weights"], "the weights")
    context.require(terms.rel("eq", weights.symbol, terms.ONE), "that the weights add up to 1")
    _weighted(step, context)
    return "weights >= 0 adding up to 1; termwise bounds implied by the facts"


register(
    ConvexCombination,
    _WEIGHTED_KINDS,
    lambda step, definitions: _bounds(
        step["lower"],
        resolve(definitions, step["total"], "the weighted sum").symbol,
        step["upper"],
        terms.ONE,
    ),
    _convex_decide,
    ("value",),
)


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


def _combination(
    pairs: Sequence[tuple[Term, SumRef]], definitions: Definitions, of_terms: bool
) -> Term:
    parts = []
    for coefficient, ref in pairs:
        resolved = resolve(definitions, ref, "a part")
        parts.append(_times(coefficient, resolved.term if of_terms else resolved.symbol))
    return terms.defined_form(terms.add(*parts)) if parts else terms.ZERO


def _linearity_conclusion(step: FrozenStep, definitions: Definitions) -> Term:
    target = resolve(definitions, step["target"], "the target")
    return terms.rel("eq", target.symbol, _combination(step["combination"], definitions, False))


def _linearity_decide(step: FrozenStep, context: Context) -> str:
    target = _resolved_in(context, step["target"], "the target")
    family = target.family
    pairs = step["combination"]
    parts = [_resolved_in(context, ref, "a part") for _, ref in pairs]
    _same_family(parts, family)
    for coefficient, _ in pairs:
        _free_of_index(coefficient, family, "a coefficient")
    inside = context.inside(family)
    require_inputs_defined(
        context.facts,
        [(coefficient, f"the coefficient {show(coefficient)}") for coefficient, _ in pairs],
    )
    require_inputs_defined(
        inside.facts, [(part.term, f"the term of {show(part.symbol)}") for part in parts]
    )
    termwise = terms.add(
        *(terms.mul(c, part.term) for (c, _), part in zip(pairs, parts, strict=True))
    )
    if step["substitute"]:
        (lhs, rhs), carried = substituted(inside, step["substitute"], target.term, termwise)
        detail = decide_identity(lhs, rhs, inside.facts, "the termwise identity", known=carried)
    else:
        detail = decide_identity(target.term, termwise, inside.facts, "the termwise identity")
    return f"termwise identity decided: {detail}"


register(
    SumLinearity,
    {
        "target": "sum",
        "combination": "combination",
        "description": "text",
        "substitute": "formulas",
    },
    _linearity_conclusion,
    _linearity_decide,
)


# --------------------------------------------------------------------------------------
# Real roots


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
    roots: Sequence[Any]
    description: str
    method: ClassVar[str] = "exact real-root counting"

    def __post_init__(self) -> None:
        frozen_inputs(self)


def _roots_conclusion(step: FrozenStep, _: Definitions) -> Term:
    var = terms.sym(step["var"])
    options = [terms.rel("eq", var, terms.sym(ref.name)) for ref in step["roots"]]
    found = (
        terms.FALSE
        if not options
        else options[0]
        if len(options) == 1
        else terms.make("or", options)
    )
    return terms.make("implies", (terms.rel("eq", step["polynomial"], terms.ZERO), found))


def _poly(polynomial: Term, var: str, what: str) -> sp.Poly:
    if terms.free_names(polynomial) - {var}:
        raise ProofError(f"{show(polynomial)} has parameters besides {var}")
    try:
        return read_polynomial(polynomial, var, what)
    except TermError as error:
        raise ProofError(str(error)) from None


def _roots_decide(step: FrozenStep, context: Context) -> str:
    poly = _poly(step["polynomial"], step["var"], "the polynomial")
    intervals: list[tuple[Fraction, Fraction]] = []
    for ref in step["roots"]:
        root = context.definitions.by_name.get(ref.name)
        if not isinstance(root, RootDef):
            raise ProofError(f"{ref.name} is not a RealRoot among the claim's definitions")
        theirs = _poly(root.polynomial, root.var, f"the polynomial of {ref.name}")
        if theirs.all_coeffs() != poly.all_coeffs():
            raise ProofError(f"{ref.name} is a root of another polynomial")
        lo, hi = terms.value_of(root.lower), terms.value_of(root.upper)
        assert lo is not None and hi is not None
        intervals.append((lo, hi))
    intervals.sort()
    for (_, hi), (lo, _) in itertools.pairwise(intervals):
        if lo < hi:
            raise ProofError("two roots' intervals overlap")
    total = poly.count_roots()
    if total != len(step["roots"]):
        raise ProofError(f"the polynomial has {total} real roots, not {len(step['roots'])}")
    return f"{total} real roots, each isolated in its own interval"


register(
    RealRoots,
    {"polynomial": "real", "var": "name", "roots": "roots", "description": "text"},
    _roots_conclusion,
    _roots_decide,
)


# --------------------------------------------------------------------------------------
# Citations


@dataclass(frozen=True)
class Cite(Step):
    """Rule: a verified claim's statement, where its assumptions hold.

    The cited claim must be one the citing claim declares in ``cites``, checked and
    verified: what is concluded is the statement the kernel froze when it checked that
    claim (by content hash), whatever the object says now.  Every definition the cited
    statement and assumptions depend on must be a definition of the citing claim too:
    the same abbreviations and roots, and sums with the same name and term over a
    family of the same index and count whose domain implies the cited one's.  Then its
    assumptions must follow from the facts (z3), and its statement is concluded.
    """

    claim: Any
    description: str
    method: ClassVar[str] = "rule: a verified claim, its assumptions discharged"


def _cited(step: FrozenStep, context: Context) -> Any:
    ref: ClaimRef = step["claim"]
    if context.citations is None:
        raise ProofError("no cited claims here")
    outcome = context.citations(ref)
    if isinstance(outcome, str):
        raise ProofError(outcome)
    return outcome


def _cite_decide(step: FrozenStep, context: Context) -> str:
    cited = _cited(step, context)
    if not cited.verified:
        raise ProofError(f"{cited.id} did not verify: {cited.problem}")
    missing = set(cited.naturals) - set(context.naturals)
    if missing:
        raise ProofError(
            f"{cited.id} holds for natural {sorted(missing)} only; declare them natural here too"
        )
    _compatible(context, cited)
    context.require(terms.conj(*cited.assumptions), f"the assumptions of {cited.id}")
    return f"{cited.id} verified (hash {cited.digest[:12]}); its assumptions hold"


def _compatible(context: Context, cited: Any) -> None:
    """The cited claim's definitions mean the same here (its families at most wider)."""
    families: dict[str, FamilyDef] = {}
    for definition in cited.definitions.mentioned([cited.statement, *cited.assumptions]):
        mine = context.definitions.by_name.get(definition.name)
        name = definition.name
        if mine is None or type(mine) is not type(definition):
            raise ProofError(
                f"{cited.id} defines {name}: define it here the same way to cite {cited.id}"
            )
        if isinstance(definition, (LetDef, RootDef)):
            if mine != definition:
                raise ProofError(f"{name} is defined here otherwise than in {cited.id}")
            continue
        assert isinstance(mine, SumDef) and isinstance(definition, SumDef)
        theirs, ours = definition.family, mine.family
        if (mine.var, mine.term) != (definition.var, definition.term) or (
            ours.index,
            ours.count,
        ) != (theirs.index, theirs.count):
            raise ProofError(f"{name} is defined here otherwise than in {cited.id}")
        if families.setdefault(theirs.name, ours) != ours:
            raise ProofError(f"{cited.id}'s family {theirs.name!r} stands for two families here")
        inside = context.inside(ours)
        for relation in theirs.domain:
            inside.require(relation, f"{ours.name!r} lies within {cited.id}'s domain")


def _cite_conclusion(step: FrozenStep, _: Definitions) -> Term:
    ref: ClaimRef = step["claim"]
    statement = CITED_STATEMENTS.get(ref.digest)
    if statement is None:
        raise ProofError(f"{ref.label or 'the cited claim'} is not a claim the kernel has checked")
    return statement


_CITED: dict[str, Term] = {}
CITED_STATEMENTS: Mapping[str, Term] = MappingProxyType(_CITED)
"""The frozen statement of every claim the kernel checked, by content hash: a read-only
view (red team 15: a proof wrote into the dict, and a citation concluded what it wrote);
only the kernel writes it, through the private `_record_cited_statement`."""


def _record_cited_statement(digest: str, statement: Term) -> None:
    """The kernel's record of a checked claim's statement, written as it checks the claim
    (over anything written before under that hash: the kernel's frozen content is the
    one a hash names)."""
    _CITED[digest] = statement


register(Cite, {"claim": "claim", "description": "text"}, _cite_conclusion, _cite_decide)


# --------------------------------------------------------------------------------------
# Induction


@dataclass(frozen=True)
class Induction(Step):
    """Rule: induction over a natural-number symbol of the claim.

    ``var`` must be one of the claim's ``naturals``: the claim's facts that mention it
    hold for every natural value.  Base: the facts at ``var = 0`` imply
    ``predicate(0)``.  Step: for a fresh ``k >= 0``, the facts at ``k`` and at ``k + 1``
    and ``predicate(k)`` imply ``predicate(k + 1)``.  Both by z3, after the kernel's own
    substitution (nothing evaluated: ``1/n`` at ``n = 0`` stays ``1/0``, an unspecified
    real).  Concludes ``predicate`` (for every natural value of ``var``).
    """

    var: sp.Symbol
    predicate: sp.Basic
    description: str
    method: ClassVar[str] = "rule: induction (base and step by z3)"

    def __post_init__(self) -> None:
        frozen_inputs(self)


def _induction_decide(step: FrozenStep, context: Context) -> str:
    var, predicate = step["var"], step["predicate"]
    if var not in context.naturals:
        raise ProofError(f"{var} is not a natural-number symbol of the claim")
    if terms.has_op(predicate, "lim", "der"):
        raise ProofError("the predicate must not contain derivatives or limits")
    if var not in terms.free_names(predicate):
        raise ProofError(f"the predicate does not depend on {var}")
    taken = set(terms.free_names(predicate))
    for fact in context.facts:
        taken |= terms.free_names(fact)
    k = terms.sym(terms.fresh_name("k", taken))

    def at(value: Term) -> list[Term]:
        return [terms.substitute(f, {var: value}) for f in context.facts]

    require(at(terms.ZERO), terms.substitute(predicate, {var: terms.ZERO}), "the base case")
    successor = terms.add(k, terms.ONE)
    hypotheses = [
        *at(k),
        *at(successor),
        terms.rel("ge", k, terms.ZERO),
        terms.substitute(predicate, {var: k}),
    ]
    require(hypotheses, terms.substitute(predicate, {var: successor}), "the induction step")
    return "base case and induction step implied by the facts"


register(
    Induction,
    {"var": "name", "predicate": "formula", "description": "text"},
    lambda step, _: step["predicate"],
    _induction_decide,
)
