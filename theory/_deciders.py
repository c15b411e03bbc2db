"""The kernel's decision procedures: identities, limits and signs.

Each one either establishes what it is asked, with its side conditions proved, or
raises :class:`ProofError` saying which side condition or which comparison failed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sympy as sp
from sympy.core.function import AppliedUndef

from softmax_dispersion.theory import _z3
from softmax_dispersion.theory._core import ProofError, require
from softmax_dispersion.theory._exponentials import exp_to_rational
from softmax_dispersion.theory._expressions import domain_conditions, power_bases

__all__ = [
    "decide_identity",
    "leading_term_limit",
    "proved",
    "require_inputs_defined",
    "sign_assumptions",
]

_SHORT_MS = 5_000


def proved(facts: Sequence[sp.Basic], goal: sp.Basic, timeout_ms: int = _SHORT_MS) -> bool:
    """Whether z3 proves ``facts ⇒ goal`` (a question, not a step: no error)."""
    try:
        return _z3.prove_with_z3(list(facts), goal, timeout_ms)[0] == "proved"
    except Exception:  # an untranslatable goal is simply not proved
        return False


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
        if isinstance(node, sp.Pow):
            return not node.exp.is_Integer
        return isinstance(
            node,
            (
                sp.log,
                sp.Abs,
                sp.Max,
                sp.Min,
                sp.Piecewise,
                AppliedUndef,
                sp.Derivative,
                sp.Subs,
                sp.Limit,
            ),
        ) or (node is sp.pi)

    return expr.replace(opaque, freeze)


def _cancels(difference: sp.Expr, positive: Callable[[sp.Expr], bool]) -> sp.Expr:
    """``cancel`` of the difference after ``t = exp(.)``; zero when the identity holds."""
    rational, _ = exp_to_rational(difference, positive=positive)
    skeleton = _opaque_atoms(rational)
    variables = sorted(skeleton.free_symbols, key=str)
    if not skeleton.is_rational_function(*variables):
        raise ProofError(f"not a rational function after t = exp(.): {sp.sstr(skeleton)}")
    return sp.cancel(sp.together(skeleton))


def _expand_logs(expr: sp.Expr, positive: Callable[[sp.Expr], bool]) -> sp.Expr:
    """``log`` of products, quotients and powers split, where every factor is positive."""

    def split(node: sp.log) -> sp.Expr:
        arg = node.args[0]
        if isinstance(arg, sp.Mul):
            factors = arg.args
            if all(positive(f) for f in factors):
                return sp.Add(*(sp.log(f) for f in factors))
        if isinstance(arg, sp.Pow) and positive(arg.base):
            return arg.exp * sp.log(arg.base)
        if isinstance(arg, sp.exp):
            return arg.args[0]
        return node

    for _ in range(8):  # nested products and powers: a few rounds reach the fixed point
        expanded = expr.replace(lambda e: isinstance(e, sp.log), split)
        if expanded == expr:
            break
        expr = expanded
    return expr


def _positive_rational(base: sp.Expr) -> bool:
    return bool(base.is_Rational and base > 0)


def require_defined(facts: Sequence[sp.Basic], exprs: Sequence[sp.Basic], what: str) -> None:
    """Every partial operation in ``exprs`` is inside its domain (z3, from ``facts``)."""
    for condition, name in domain_conditions(*exprs):
        require(facts, condition, f"{what}: {name}")


def require_inputs_defined(
    facts: Sequence[sp.Basic], inputs: Sequence[tuple[sp.Basic | None, str]]
) -> None:
    """Every input a rule combines is well-defined as written (z3, from ``facts``).

    A rule that builds an expression out of its inputs (a coefficient times a part's
    term, a count times a bound, a weight times a value, an endpoint or a point put in
    for a variable) hands the pieces to sympy, which evaluates as it builds:
    ``a * (1/a)`` is ``1`` at once, ``(x * b).subs(x, 1/b)`` is ``1``.  Those rewritings
    hold only where every partial operation of the pieces is inside its domain, and a
    side condition read from the result can no longer see the pieces' denominators.  So
    every rule calls this first, on every input it combines, with a name for each
    (``None`` inputs are skipped); the failure names the input and the condition.
    """
    conditions: list[tuple[sp.Basic, str]] = []
    for expr, what in inputs:
        if expr is None:
            continue
        for condition, name in domain_conditions(sp.sympify(expr)):
            if all(condition != known for known, _ in conditions):
                conditions.append((condition, f"{what}: {name}"))
    if not conditions:
        return
    # one query for all of them; only if that fails, one each, to name the one that fails
    if proved(facts, sp.And(*(condition for condition, _ in conditions))):
        return
    for condition, name in conditions:
        require(facts, condition, name)


def decide_identity(
    lhs: sp.Expr,
    rhs: sp.Expr,
    facts: Sequence[sp.Basic],
    what: str = "the identity",
    defined: bool = False,
) -> str:
    """Decide ``lhs = rhs`` under ``facts`` by ``cancel`` after ``t = exp(.)``.

    Side conditions, each proved by z3 from the facts: every partial operation of
    ``lhs`` and ``rhs`` as written is inside its domain (denominators non-zero, as
    ``cancel`` would remove a removable singularity; logarithms' arguments positive;
    fractional and symbolic powers' bases non-negative or positive); and where the
    rewriting needs them, every factor of a logarithm's argument is positive.
    ``defined=True`` says the caller has established the first kind already (for
    expressions that a substitution made out of well-defined ones).
    """
    if not defined:
        require_defined(facts, [lhs, rhs], what)
    difference = lhs - rhs
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
        if isinstance(base, sp.exp):
            return True
        if base not in checked:
            checked[base] = proved(facts, sp.Gt(base, 0, evaluate=False))
            if not checked[base]:
                unproved.append(sp.sstr(base))
        return checked[base]

    for base in power_bases(lhs, rhs):
        positive(base)
    expanded = _expand_logs(difference, positive)
    remainder = _cancels(expanded, positive)
    if remainder != 0:
        why = f"cancel leaves {sp.sstr(remainder)} != 0"
        if unproved:
            why += f" (positivity not implied for {', '.join(unproved)})"
        raise ProofError(f"{what}: {why}")
    used = sorted(sp.sstr(b) for b, ok in checked.items() if ok)
    return "cancel(lhs - rhs) == 0" + (f" with {', '.join(used)} > 0" if used else "")


# --------------------------------------------------------------------------------------
# Limits at +oo: the leading terms of a quotient of generalised polynomials in n.


def _exponent_of(factor: sp.Expr, var: sp.Symbol) -> sp.Expr:
    if factor == var:
        return sp.Integer(1)
    if isinstance(factor, sp.Pow) and factor.base == var and var not in factor.exp.free_symbols:
        return factor.exp
    raise ProofError(f"{sp.sstr(factor)} is not a power of {var}")


def _power_terms(expr: sp.Expr, var: sp.Symbol) -> dict[sp.Expr, sp.Expr]:
    """``expr`` as ``Σ coefficient · var**exponent`` (coefficients free of ``var``)."""
    terms: dict[sp.Expr, sp.Expr] = {}
    for term in sp.Add.make_args(sp.expand(expr)):
        coeff, dependent = term.as_independent(var, as_Add=False)
        exponent = sp.Integer(0)
        for factor in sp.Mul.make_args(dependent):
            if factor != 1:
                exponent += _exponent_of(factor, var)
        exponent = sp.expand(exponent)
        terms[exponent] = terms.get(exponent, sp.Integer(0)) + coeff
    return {e: c for e, c in terms.items() if sp.cancel(c) != 0}


def _leading(
    terms: dict[sp.Expr, sp.Expr], facts: Sequence[sp.Basic], what: str
) -> tuple[sp.Expr, sp.Expr]:
    """The exponent that z3 proves larger than every other, with its coefficient."""
    for candidate in terms:
        others = [e for e in terms if e != candidate]
        if all(proved(facts, sp.Gt(candidate, e, evaluate=False)) for e in others):
            return candidate, terms[candidate]
    shown = ", ".join(sp.sstr(e) for e in terms)
    raise ProofError(f"{what}: no exponent among {shown} is proved larger than the others")


def _normal_powers(expr: sp.Expr, var: sp.Symbol) -> sp.Expr:
    """``exp(k log var)`` as ``var**k``; any other ``exp`` or ``log`` of ``var`` is refused."""

    def rewrite(node: sp.exp) -> sp.Expr:
        arg = node.args[0]
        if var not in arg.free_symbols:
            return node
        coeff = sp.cancel(arg / sp.log(var))
        if var in coeff.free_symbols or coeff.has(sp.log):
            raise ProofError(f"{sp.sstr(node)} is not a power of {var}")
        return var**coeff

    expr = expr.replace(lambda e: isinstance(e, sp.exp), rewrite)
    for node in sp.preorder_traversal(expr):
        if isinstance(node, sp.log) and var in node.free_symbols:
            raise ProofError(f"{sp.sstr(node)}: a logarithm of {var} is not a power")
        if isinstance(node, sp.Pow) and var in node.exp.free_symbols:
            raise ProofError(f"{sp.sstr(node)}: {var} in an exponent")
    return expr


def leading_term_limit(expr: sp.Expr, var: sp.Symbol, facts: Sequence[sp.Basic]) -> sp.Expr:
    """``lim_{var -> oo} expr`` from the leading terms of its numerator and denominator.

    ``expr`` must be a quotient of sums ``Σ c_i var**a_i`` (coefficients and exponents
    free of ``var``; ``exp`` of other symbols are coefficients).  For each sum, z3 must
    prove one exponent larger than every other; the denominator's leading coefficient
    must be non-zero.  Then the limit is the ratio of the leading coefficients if the
    leading exponents are equal, 0 if the numerator's is smaller, and ``±oo`` (the sign
    of the ratio, proved) if it is larger.
    """
    expr = _normal_powers(sp.together(expr), var)
    numerator, denominator = sp.fraction(sp.together(expr))
    num_terms = _power_terms(numerator, var)
    den_terms = _power_terms(denominator, var)
    if not den_terms:
        raise ProofError("the denominator is zero")
    den_exp, den_coeff = _leading(den_terms, facts, "the denominator")
    require(
        facts, sp.Ne(den_coeff, 0, evaluate=False), "the leading coefficient of the denominator"
    )
    if not num_terms:
        return sp.Integer(0)
    num_exp, num_coeff = _leading(num_terms, facts, "the numerator")
    ratio = num_coeff / den_coeff
    if num_exp == den_exp or proved(facts, sp.Eq(num_exp, den_exp)):
        return ratio
    if proved(facts, sp.Lt(num_exp, den_exp, evaluate=False)):
        return sp.Integer(0)
    if proved(facts, sp.Gt(num_exp, den_exp, evaluate=False)):
        if proved(facts, sp.Gt(ratio, 0, evaluate=False)):
            return sp.oo
        if proved(facts, sp.Lt(ratio, 0, evaluate=False)):
            return -sp.oo
        raise ProofError("the sign of the leading coefficients' ratio is not implied")
    raise ProofError(
        f"the leading exponents {sp.sstr(num_exp)} and {sp.sstr(den_exp)} are not ordered"
    )


_SIGNS: tuple[tuple[str, Callable[[sp.Symbol], sp.Basic]], ...] = (
    ("positive", lambda s: sp.Gt(s, 0, evaluate=False)),
    ("negative", lambda s: sp.Lt(s, 0, evaluate=False)),
    ("zero", lambda s: sp.Eq(s, 0, evaluate=False)),
    ("nonnegative", lambda s: sp.Ge(s, 0, evaluate=False)),
    ("nonpositive", lambda s: sp.Le(s, 0, evaluate=False)),
)


def sign_assumptions(symbol: sp.Symbol, facts: Sequence[sp.Basic]) -> str:
    """The strongest sign of ``symbol`` that the facts imply, or a :class:`ProofError`."""
    for name, relation in _SIGNS:
        if proved(facts, relation(symbol)):
            return name
    raise ProofError(f"the sign of {symbol} is not a stated fact (a limit needs every sign)")
