"""The kernel's decision procedures: identities, limits and signs, on terms.

Each one either establishes what it is asked, with its side conditions proved, or raises
:class:`ProofError` saying which side condition or which comparison failed.  sympy is
used inside (``cancel``, ``limit``), on objects built from terms by the kernel itself
(:mod:`~softmax_dispersion.theory._bridge`); what comes back is a verdict, and where a
decider asks z3 about an expression sympy computed, that expression is a question, never
a new fact.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sympy as sp

from softmax_dispersion.theory import _z3, terms
from softmax_dispersion.theory._bridge import Bridge, Prover
from softmax_dispersion.theory._core import BudgetExceeded, ProofError, require
from softmax_dispersion.theory._exponentials import exp_to_rational
from softmax_dispersion.theory.terms import Term, TermError

__all__ = [
    "decide_identity",
    "leading_term_limit",
    "proved",
    "proved_from",
    "require_conditions",
    "require_defined",
    "require_inputs_defined",
    "sign_assumptions",
    "sympy_limit",
]

_SHORT_MS = 5_000


def proved(facts: Sequence[Term], goal: Term, timeout_ms: int = _SHORT_MS) -> bool:
    """Whether z3 proves ``facts ⇒ goal`` (a question, not a step: no error)."""
    try:
        return _z3.prove_with_z3(list(facts), goal, timeout_ms)[0] == "proved"
    except BudgetExceeded:  # the budget's end is no answer: it ends the decision
        raise
    except Exception:  # an untranslatable goal is simply not proved
        return False


def proved_from(facts: Sequence[Term], what: str) -> Prover:
    """The prover of a decision under ``facts``: z3 proves each domain condition from
    them, or the decision fails naming ``what`` and the condition."""

    def prove(condition: Term, name: str) -> None:
        require(facts, condition, f"{what}: {name}")

    return prove


def require_defined(facts: Sequence[Term], exprs: Sequence[Term], what: str) -> None:
    """Every partial operation in ``exprs`` is inside its domain (z3, from ``facts``)."""
    for condition, name in terms.domain_conditions(*exprs):
        require(facts, condition, f"{what}: {name}")


def require_conditions(
    facts: Sequence[Term], conditions: Sequence[tuple[Term, str]], what: str
) -> None:
    """Each domain condition (already built, with its name) is implied by ``facts``."""
    for condition, name in conditions:
        require(facts, condition, f"{what}, before the value is put in: {name}")


def require_inputs_defined(
    facts: Sequence[Term], inputs: Sequence[tuple[Term | None, str]]
) -> None:
    """Every input a rule combines is well-defined as written (z3, from ``facts``).

    A rule that combines its inputs into a new expression (a coefficient times a part's
    term, a count times a bound, an endpoint put in for a variable) asks that every
    partial operation of each piece lies inside its domain, with a name for each
    (``None`` inputs are skipped): the combination then means what it says of defined
    numbers.  One query for all; only if that fails, one each, to name the one that
    fails.
    """
    conditions: list[tuple[Term, str]] = []
    for expr, what in inputs:
        if expr is None:
            continue
        for condition, name in terms.domain_conditions(expr):
            if all(condition != known for known, _ in conditions):
                conditions.append((condition, f"{what}: {name}"))
    if not conditions:
        return
    if proved(facts, terms.conj(*(condition for condition, _ in conditions))):
        return
    for condition, name in conditions:
        require(facts, condition, name)


# --------------------------------------------------------------------------------------
# Identities: cancel after t = exp(.), with the side conditions proved.


def _opaque_atoms(expr: sp.Basic) -> sp.Basic:
    """Every non-rational subterm replaced by a real symbol (the same for the same term).

    Treating them as independent variables can only lose identities: if the difference
    cancels with ``log(x)`` free, it cancels for the true ``log(x)``.
    """
    frozen: dict[sp.Basic, sp.Symbol] = {}

    def freeze(node: sp.Basic) -> sp.Symbol:
        return frozen.setdefault(node, sp.Dummy(f"atom{len(frozen)}", real=True))

    def opaque(node: sp.Basic) -> bool:
        if type(node) is sp.Pow:
            return not node.exp.is_Integer
        return type(node) is sp.log or node is sp.pi

    return expr.replace(opaque, freeze)


def _cancels(difference: sp.Expr, positive: Callable[[sp.Expr], bool]) -> sp.Expr:
    """``cancel`` of the difference after ``t = exp(.)``; zero when the identity holds."""
    rational, _ = exp_to_rational(difference, positive=positive)
    skeleton = _opaque_atoms(rational)
    variables = sorted(skeleton.free_symbols, key=str)
    if not skeleton.is_rational_function(*variables):
        raise ProofError("not a rational function after t = exp(.)")
    return sp.cancel(sp.together(skeleton))


def _expand_logs(expr: sp.Expr, positive: Callable[[sp.Expr], bool]) -> sp.Expr:
    """``log`` of products, quotients and powers split, where every factor is positive."""

    def split(node: sp.log) -> sp.Expr:
        arg = node.args[0]
        if type(arg) is sp.Mul:
            factors = arg.args
            if all(positive(f) for f in factors):
                return sp.Add(*(sp.log(f) for f in factors))
        if type(arg) is sp.Pow and positive(arg.base):
            return arg.exp * sp.log(arg.base)
        if type(arg) is sp.exp:
            return arg.args[0]
        return node

    for _ in range(8):  # nested products and powers: a few rounds reach the fixed point
        expanded = expr.replace(lambda e: type(e) is sp.log, split)
        if expanded == expr:
            break
        expr = expanded
    return expr


def _positive_rational(base: sp.Expr) -> bool:
    return bool(base.is_Rational and base > 0)


def _power_bases(expr: sp.Expr) -> list[sp.Expr]:
    found: list[sp.Expr] = []
    for node in sp.preorder_traversal(expr):
        if type(node) is sp.Pow and not node.exp.is_Integer and node.base not in found:
            found.append(node.base)
    return found


def decide_identity(
    lhs: Term,
    rhs: Term,
    facts: Sequence[Term],
    what: str = "the identity",
    known: Sequence[Term] = (),
) -> str:
    """Decide ``lhs = rhs`` under ``facts`` by ``cancel`` after ``t = exp(.)``.

    Side conditions, each proved by z3 from the facts: every partial operation of
    ``lhs`` and ``rhs`` as written is inside its domain (denominators non-zero, as
    ``cancel`` would remove a removable singularity; logarithms' arguments positive;
    fractional and symbolic powers' bases non-negative or positive), which the
    :class:`~softmax_dispersion.theory._bridge.Bridge` asks before sympy sees them; and
    where the rewriting needs them, every factor of a logarithm's argument is positive.
    ``known`` are formulas the caller proved from ``facts`` (the equations a
    substitution put in, and the conditions it carried): they help prove the conditions
    of what it made.
    """
    for side in (lhs, rhs):
        try:
            terms.check_size(side, what)
        except TermError as error:
            raise ProofError(str(error)) from None
    bridge = Bridge(proved_from([*facts, *known], what))
    bridge.admit(lhs, rhs)
    if terms.canonical(lhs) == terms.canonical(rhs):
        return "equal canonical forms"
    try:
        difference = bridge.expr(lhs) - bridge.expr(rhs)
    except TermError as error:
        raise ProofError(f"{what}: {error}") from None
    try:
        remainder = _cancels(difference, _positive_rational)
    except ProofError:
        remainder = None
    if remainder == 0:
        return "cancel(lhs - rhs) == 0"
    checked: dict[sp.Basic, bool] = {}
    unproved: list[str] = []

    def positive(base: sp.Expr) -> bool:
        if base.is_Rational:
            return bool(base > 0)
        if type(base) is sp.exp:
            return True
        if base not in checked:
            try:
                question = terms.rel("gt", bridge.term(base), terms.ZERO)
                checked[base] = proved(facts, question)
                shown = terms.show(bridge.term(base))
            except TermError:
                checked[base] = False
                shown = "a subterm"
            if not checked[base]:
                unproved.append(shown)
        return checked[base]

    for base in _power_bases(difference):
        positive(base)
    expanded = _expand_logs(difference, positive)
    remainder = _cancels(expanded, positive)
    if remainder != 0:
        try:
            left = terms.show(bridge.term(remainder))
        except TermError:
            left = "a non-zero remainder"
        why = f"cancel leaves {left} != 0"
        if unproved:
            why += f" (positivity not implied for {', '.join(unproved)})"
        raise ProofError(f"{what}: {why}")
    used = sorted(terms.show(bridge.term(b)) for b, ok in checked.items() if ok)
    return "cancel(lhs - rhs) == 0" + (f" with {', '.join(used)} > 0" if used else "")


# --------------------------------------------------------------------------------------
# Limits at +oo: sympy's Gruntz algorithm, and the leading terms of a quotient.

LIMIT_OPS = frozenset({"num", "sym", "pi", "E", "add", "mul", "pow", "exp", "log"})


def _built(bridge: Bridge, expr: Term) -> sp.Expr:
    try:
        return bridge.expr(expr)
    except TermError as error:
        raise ProofError(str(error)) from None


def sympy_limit(expr: Term, var: str, signs: dict[str, str], prove: Prover) -> Term:
    """sympy's ``limit`` at ``+oo``, shown each parameter with its proved sign only;
    ``prove`` proves the expression's domain conditions (on the tail of ``var``)."""
    bridge = Bridge(prove, opaque=())
    for name, sign in signs.items():
        if sign == "zero":
            bridge.set_value(name, sp.Integer(0))
        else:
            bridge.set_value(name, sp.Dummy(name, real=True, **{sign: True}))
    variable = bridge.symbol(var)
    value = sp.limit(_built(bridge, expr), variable, sp.oo)
    if value.has(sp.Limit, sp.AccumBounds, sp.nan, sp.zoo):
        raise ProofError(f"sympy could not evaluate the limit: {type(value).__name__}")
    try:
        return bridge.term(value)
    except TermError as error:
        raise ProofError(f"sympy's limit is outside the kernel's terms: {error}") from None


def _exponent_of(factor: sp.Expr, var: sp.Symbol) -> sp.Expr:
    if factor == var:
        return sp.Integer(1)
    if type(factor) is sp.Pow and factor.base == var and var not in factor.exp.free_symbols:
        return factor.exp
    raise ProofError("a factor of a term is not a power of the variable")


def _power_terms(expr: sp.Expr, var: sp.Symbol) -> dict[sp.Expr, sp.Expr]:
    """``expr`` as ``Σ coefficient · var**exponent`` (coefficients free of ``var``)."""
    found: dict[sp.Expr, sp.Expr] = {}
    for term in sp.Add.make_args(sp.expand(expr)):
        coeff, dependent = term.as_independent(var, as_Add=False)
        exponent = sp.Integer(0)
        for factor in sp.Mul.make_args(dependent):
            if factor != 1:
                exponent += _exponent_of(factor, var)
        exponent = sp.expand(exponent)
        found[exponent] = found.get(exponent, sp.Integer(0)) + coeff
    return {e: c for e, c in found.items() if sp.cancel(c) != 0}


class _Limits:
    """The leading-term route, asking z3 about sympy's exponents as terms."""

    def __init__(self, bridge: Bridge, facts: Sequence[Term]) -> None:
        self.bridge = bridge
        self.facts = facts

    def term(self, expr: sp.Expr) -> Term:
        try:
            return self.bridge.term(expr)
        except TermError as error:
            raise ProofError(f"the leading terms: {error}") from None

    def proved(self, op: str, a: sp.Expr, b: sp.Expr) -> bool:
        return proved(self.facts, terms.rel(op, self.term(a), self.term(b)))

    def leading(self, found: dict[sp.Expr, sp.Expr], what: str) -> tuple[sp.Expr, sp.Expr]:
        """The exponent that z3 proves larger than every other, with its coefficient."""
        for candidate in found:
            others = [e for e in found if e != candidate]
            if all(self.proved("gt", candidate, e) for e in others):
                return candidate, found[candidate]
        shown = ", ".join(terms.show(self.term(e)) for e in found)
        raise ProofError(f"{what}: no exponent among {shown} is proved larger than the others")


def _normal_powers(expr: sp.Expr, var: sp.Symbol, bridge: Bridge) -> sp.Expr:
    """``exp(k log var)`` as ``var**k``; any other ``exp`` or ``log`` of ``var`` is refused."""

    def rewrite(node: sp.exp) -> sp.Expr:
        arg = node.args[0]
        if var not in arg.free_symbols:
            return node
        coeff = sp.cancel(arg / sp.log(var))
        if var in coeff.free_symbols or coeff.has(sp.log):
            raise ProofError(f"{_shown(node, bridge)} is not a power of {bridge.back[var][2]}")
        return var**coeff

    expr = expr.replace(lambda e: type(e) is sp.exp, rewrite)
    for node in sp.preorder_traversal(expr):
        if type(node) is sp.log and var in node.free_symbols:
            raise ProofError(f"{_shown(node, bridge)}: a logarithm of the variable is not a power")
        if type(node) is sp.Pow and var in node.exp.free_symbols:
            raise ProofError(f"{_shown(node, bridge)}: the variable in an exponent")
    return expr


def _shown(expr: sp.Expr, bridge: Bridge) -> str:
    try:
        return terms.show(bridge.term(expr))
    except TermError:
        return "a subterm"


def leading_term_limit(expr: Term, var: str, facts: Sequence[Term], prove: Prover) -> Term:
    """``lim_{var -> oo} expr`` from the leading terms of its numerator and denominator.

    ``expr`` must be a quotient of sums ``Σ c_i var**a_i`` (coefficients and exponents
    free of ``var``; ``exp`` of other symbols are coefficients).  For each sum, z3 must
    prove one exponent larger than every other; the denominator's leading coefficient
    must be non-zero.  Then the limit is the ratio of the leading coefficients if the
    leading exponents are equal, 0 if the numerator's is smaller, and ``±oo`` (the sign
    of the ratio, proved) if it is larger.  ``prove`` proves the expression's domain
    conditions (on the tail of ``var``) before sympy builds it.
    """
    bridge = Bridge(prove, opaque=())
    variable = bridge.symbol(var)
    route = _Limits(bridge, facts)
    built = _normal_powers(sp.together(_built(bridge, expr)), variable, bridge)
    numerator, denominator = sp.fraction(sp.together(built))
    num_terms = _power_terms(numerator, variable)
    den_terms = _power_terms(denominator, variable)
    if not den_terms:
        raise ProofError("the denominator is zero")
    den_exp, den_coeff = route.leading(den_terms, "the denominator")
    require(
        facts,
        terms.rel("ne", route.term(den_coeff), terms.ZERO),
        "the leading coefficient of the denominator",
    )
    if not num_terms:
        return terms.ZERO
    num_exp, num_coeff = route.leading(num_terms, "the numerator")
    ratio = num_coeff / den_coeff
    if num_exp == den_exp or route.proved("eq", num_exp, den_exp):
        return route.term(ratio)
    if route.proved("lt", num_exp, den_exp):
        return terms.ZERO
    if route.proved("gt", num_exp, den_exp):
        if route.proved("gt", ratio, sp.Integer(0)):
            return terms.OO
        if route.proved("lt", ratio, sp.Integer(0)):
            return terms.MINUS_OO
        raise ProofError("the sign of the leading coefficients' ratio is not implied")
    raise ProofError(
        f"the leading exponents {terms.show(route.term(num_exp))} and "
        f"{terms.show(route.term(den_exp))} are not ordered"
    )


_SIGNS: tuple[tuple[str, str], ...] = (
    ("positive", "gt"),
    ("negative", "lt"),
    ("zero", "eq"),
    ("nonnegative", "ge"),
    ("nonpositive", "le"),
)


def sign_assumptions(name: str, facts: Sequence[Term]) -> str:
    """The strongest sign of the variable ``name`` that the facts imply, or an error."""
    for sign, op in _SIGNS:
        if proved(facts, terms.rel(op, terms.sym(name), terms.ZERO)):
            return sign
    raise ProofError(f"the sign of {name} is not a stated fact (a limit needs every sign)")
