"""The vacuity check: a claim's assumptions hold together at an explicit witness.

A claim whose assumptions contradict each other proves anything, so the kernel asks
every claim for a *witness*: exact values of its free symbols (and of each family's
index symbols: every member is given that value), and ``Lambda`` functions for its free
functions.  The defined symbols take the values their definitions give there (a sum of
``count`` equal terms, an abbreviation, the isolated root), every family's count must
be a natural number, every family's domain must hold, and so must every assumption.

Truth at the witness is decided exactly: a difference that ``cancel`` reduces to zero
is zero; otherwise its sign comes from interval arithmetic (mpmath's interval context,
outward rounding, at rising precision) and only an interval that excludes zero decides.
An assumption that still mentions a natural-number symbol must hold for every natural
value: z3 must prove it for every real value ``>= 0``.

Everything is read over the reals.  sympy evaluates over the complex numbers as it
substitutes (``sqrt(-1)`` is ``I``, ``I*I`` is ``-1``), which would let a witness satisfy
assumptions that no real values can.  So before any expression is evaluated at the
witness, every partial operation in it must be inside its real domain there (a
non-zero denominator, a positive logarithm argument, a non-negative base of a
fractional power), read from the expression as written, from each witness function's
body at the arguments it is applied to (before sympy simplifies the composition), and
from the expression with the functions applied; and every value the witness gives or
defines (a free symbol's, a definition's, a function's at each point used) must be a
finite real number.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sympy as sp
from mpmath.ctx_iv import MPIntervalContext
from sympy.core.function import AppliedUndef, UndefinedFunction

from softmax_dispersion.theory._core import ProofError, require
from softmax_dispersion.theory._exponentials import exp_to_rational
from softmax_dispersion.theory._expressions import ExpressionError, domain_conditions, validate
from softmax_dispersion.theory.definitions import Definitions, Let, RealRoot, SumOver

__all__ = ["VacuityError", "check_witness"]

_PRECISIONS = (64, 256, 1024)


class VacuityError(ValueError):
    """The witness does not show the assumptions satisfiable."""


class _Undecided(Exception):
    pass


def _interval(expr: sp.Basic, iv: Any, roots: Mapping[sp.Symbol, RealRoot]) -> Any:
    """An interval that contains the value of the closed expression ``expr``."""
    if isinstance(expr, sp.Rational):
        return iv.mpf(int(expr.p)) / iv.mpf(int(expr.q))
    if expr is sp.pi:
        return iv.pi
    if expr is sp.E:
        return iv.e
    if isinstance(expr, sp.Symbol) and expr in roots:
        return _root_interval(roots[expr], iv)
    args = [_interval(a, iv, roots) for a in expr.args] if not expr.is_Atom else []
    if isinstance(expr, sp.Add):
        total = args[0]
        for a in args[1:]:
            total = total + a
        return total
    if isinstance(expr, sp.Mul):
        product = args[0]
        for a in args[1:]:
            product = product * a
        return product
    if isinstance(expr, sp.Pow):
        base, exponent = args
        if expr.exp.is_Integer:
            k = int(expr.exp)
            if k < 0 and base.a <= 0 <= base.b:
                raise _Undecided("a denominator's interval contains 0")
            return base**k
        if base.a <= 0:
            raise _Undecided("a fractional power of a base not known to be positive")
        return iv.exp(exponent * iv.log(base))
    if isinstance(expr, sp.exp):
        return iv.exp(args[0])
    if isinstance(expr, sp.log):
        if args[0].a <= 0:
            raise _Undecided("a logarithm of a number not known to be positive")
        return iv.log(args[0])
    if isinstance(expr, sp.Abs):
        a = args[0]
        if a.a >= 0:
            return a
        if a.b <= 0:
            return -a
        return iv.mpf([0, max(-a.a, a.b)])
    if isinstance(expr, (sp.Max, sp.Min)):
        pick = max if isinstance(expr, sp.Max) else min
        return iv.mpf([pick(a.a for a in args), pick(a.b for a in args)])
    if isinstance(expr, sp.Piecewise):
        for value, condition in expr.args:
            if _truth(condition, roots):
                return _interval(value, iv, roots)
        raise _Undecided("no branch of a piecewise expression applies")
    raise _Undecided(f"cannot evaluate {sp.sstr(expr)}")


def _root_interval(root: RealRoot, iv: Any) -> Any:
    """The root's isolating interval, narrowed by exact root counting to ~2^-prec."""
    poly = sp.Poly(root.polynomial, root.var, domain="QQ")
    lo, hi = sp.Rational(root.lower), sp.Rational(root.upper)
    width = sp.Rational(1, 2 ** (iv.prec + 4))
    while hi - lo > width:
        mid = (lo + hi) / 2
        if poly.eval(mid) == 0:
            lo = hi = mid
            break
        if poly.count_roots(lo, mid) == 1:
            hi = mid
        else:
            lo = mid
    lo_iv = iv.mpf(int(lo.p)) / iv.mpf(int(lo.q))
    hi_iv = iv.mpf(int(hi.p)) / iv.mpf(int(hi.q))
    return iv.mpf([lo_iv.a, hi_iv.b])


def _is_zero(difference: sp.Expr, roots: Mapping[sp.Symbol, RealRoot]) -> bool:
    """``cancel`` reduces the closed difference to zero (the roots held as symbols)."""
    rational, _ = exp_to_rational(difference, positive=lambda b: bool(b.is_Rational and b > 0))
    try:
        return bool(sp.cancel(sp.together(rational)) == 0)
    except (sp.PolynomialError, TypeError):
        return False


def _sign(difference: sp.Expr, roots: Mapping[sp.Symbol, RealRoot]) -> int:
    """The sign of a closed real number, or :class:`_Undecided`."""
    if _is_zero(difference, roots):
        return 0
    for prec in _PRECISIONS:
        iv = MPIntervalContext()
        iv.prec = prec
        try:
            value = _interval(difference, iv, roots)
        except _Undecided:
            continue
        if value.a > 0:
            return 1
        if value.b < 0:
            return -1
    raise _Undecided(f"cannot decide the sign of {sp.sstr(difference)}")


_NOT_REAL = (sp.I, sp.zoo, sp.nan, sp.oo, sp.S.NegativeInfinity)


def _require_real(value: sp.Basic, roots: Mapping[sp.Symbol, RealRoot], what: str) -> None:
    """``value`` (closed) is a finite real number: sympy says so, or an interval holds it.

    The interval evaluation refuses every partial operation outside its real domain,
    so an enclosure is a proof that the value is real.
    """
    if value.has(*_NOT_REAL) or value.is_extended_real is False:
        raise VacuityError(f"{what} is {sp.sstr(value)}, not a finite real number")
    if value.is_extended_real and value.is_finite:
        return
    for prec in _PRECISIONS:
        iv = MPIntervalContext()
        iv.prec = prec
        try:
            _interval(value, iv, roots)
        except _Undecided:
            continue
        return
    raise VacuityError(f"{what} is {sp.sstr(value)}, not shown to be a finite real number")


def _truth(formula: sp.Basic, roots: Mapping[sp.Symbol, RealRoot]) -> bool:
    """Whether a closed formula holds (exact zero test, then certified intervals)."""
    if formula is sp.true:
        return True
    if formula is sp.false:
        return False
    if isinstance(formula, sp.And):
        return all(_truth(a, roots) for a in formula.args)
    if isinstance(formula, sp.Or):
        return any(_truth(a, roots) for a in formula.args)
    if isinstance(formula, sp.Not):
        return not _truth(formula.args[0], roots)
    if isinstance(formula, sp.Implies):
        return (not _truth(formula.args[0], roots)) or _truth(formula.args[1], roots)
    if isinstance(formula, sp.Equivalent):
        values = {_truth(a, roots) for a in formula.args}
        return len(values) == 1
    compare: dict[type, Callable[[int], bool]] = {
        sp.Equality: lambda s: s == 0,
        sp.Unequality: lambda s: s != 0,
        sp.StrictLessThan: lambda s: s < 0,
        sp.LessThan: lambda s: s <= 0,
        sp.StrictGreaterThan: lambda s: s > 0,
        sp.GreaterThan: lambda s: s >= 0,
    }
    for kind, verdict in compare.items():
        if type(formula) is kind:
            relation: Any = formula
            return verdict(_sign(relation.lhs - relation.rhs, roots))
    raise _Undecided(f"cannot evaluate {sp.sstr(formula)}")


def _apply_functions(expr: sp.Basic, functions: Mapping[type, sp.Lambda]) -> sp.Basic:
    for function, body in functions.items():
        expr = expr.replace(function, lambda *args, body=body: body(*args))
    return expr


def check_witness(
    definitions: Definitions,
    assumptions: Sequence[sp.Basic],
    witness: Mapping[Any, Any] | None,
    naturals: Sequence[sp.Symbol] = (),
) -> str:
    """Decide that ``assumptions`` (and every family's domain) hold at ``witness``.

    Returns a short detail; raises :class:`VacuityError` naming what fails.
    """
    try:
        return _check_witness(definitions, assumptions, witness, naturals)
    except VacuityError:
        raise
    except Exception as error:  # an expression that cannot be evaluated there
        raise VacuityError(
            f"cannot evaluate at the witness: {type(error).__name__}: {error}"
        ) from None


def _check_witness(
    definitions: Definitions,
    assumptions: Sequence[sp.Basic],
    witness: Mapping[Any, Any] | None,
    naturals: Sequence[sp.Symbol],
) -> str:
    if witness is None:
        raise VacuityError(
            "the claim gives no witness: values of its free symbols at which every assumption holds"
        )
    values: dict[sp.Basic, sp.Expr] = {}
    functions: dict[type, sp.Lambda] = {}
    defined = definitions.defined_symbols
    for key, value in witness.items():
        where = f"the witness value of {key}"
        if key in defined:
            raise VacuityError(
                f"{key} is defined: the witness gives values to free symbols only (a "
                "defined symbol takes the value of its definition)"
            )
        if isinstance(value, str) or not isinstance(value, (sp.Basic, int)):
            raise VacuityError(f"{where} must be a sympy number or an int, not {value!r:.40}")
        try:
            if isinstance(key, UndefinedFunction):
                if not isinstance(value, sp.Lambda):
                    raise VacuityError(f"{where} must be a sympy Lambda")
                # the Lambda's own variables are sympy's dummies: read its body at symbols
                names = [
                    sp.Symbol(f"lambda_arg{i}", real=True) for i in range(len(value.variables))
                ]
                validate(value(*names), where)
                functions[key] = value
            elif isinstance(key, sp.Symbol):
                value = validate(sp.sympify(value), where)
                if value.free_symbols:
                    raise VacuityError(f"{where} must be a number, not {value}")
                values[key] = value
            else:
                raise VacuityError(f"{key!r} is neither a symbol nor a function")
        except ExpressionError as error:
            raise VacuityError(str(error)) from None
    natural_set = set(naturals)
    clash = natural_set & set(values)
    if clash:
        raise VacuityError(
            f"{sorted(map(str, clash))} range over every natural number: give them no value"
        )
    roots: dict[sp.Symbol, RealRoot] = {}

    def value_at(expr: sp.Basic) -> sp.Basic:
        # functions first, derivatives taken, then the numbers: a derivative's variable
        # must still be a symbol when it is differentiated
        return applied(expr).xreplace(values)

    def applied(expr: sp.Basic) -> sp.Basic:
        result = _apply_functions(sp.sympify(expr), functions)
        if result.has(sp.Derivative, sp.Subs):
            result = result.doit()
        return result

    def at(formula: sp.Basic) -> sp.Basic:
        # Relations are rebuilt unevaluated: sympy never settles one numerically here.
        if isinstance(formula, sp.core.relational.Relational):
            return type(formula)(value_at(formula.lhs), value_at(formula.rhs), evaluate=False)
        if isinstance(formula, (sp.And, sp.Or, sp.Not, sp.Implies, sp.Equivalent)):
            return type(formula)(*(at(a) for a in formula.args), evaluate=False)
        return value_at(formula)

    def holds(formula: sp.Basic, what: str) -> None:
        """``formula`` holds at the witness (for every natural value of the naturals)."""
        closed = at(formula)
        free = closed.free_symbols - set(roots)
        if free & natural_set and not (free - natural_set):
            facts = [sp.Ge(s, 0, evaluate=False) for s in free & natural_set]
            try:
                require(facts, closed, f"{what} for every natural value")
            except ProofError as error:
                raise VacuityError(str(error)) from None
            return
        if free:
            raise VacuityError(
                f"the witness gives no value to {sorted(map(str, free))[0]} (in {what})"
            )
        if closed.atoms(AppliedUndef):
            raise VacuityError(f"the witness gives no function for {sp.sstr(closed)}")
        _require_true(closed, roots, what)

    def in_domain(expr: sp.Basic, what: str) -> None:
        """Every partial operation of ``expr`` is inside its real domain at the witness.

        Read from ``expr`` as written, from each witness function's body at the
        arguments it is applied to (``sqrt(t)`` at ``f(x)`` needs ``x >= 0`` even where
        sympy turns ``f(x)**2`` into ``x``), and from ``expr`` with the functions applied;
        innermost first, so that the message names the first operation that fails.
        Every function value at a closed point must be a finite real number.
        """
        conditions = list(domain_conditions(expr))
        applications = sorted(sp.sympify(expr).atoms(AppliedUndef), key=sp.default_sort_key)
        for application in applications:
            body = functions.get(type(application))
            if body is None:
                continue
            arguments = dict(zip(body.variables, application.args, strict=True))
            with sp.evaluate(False):  # the body at the arguments, not yet simplified
                composed = body.expr.xreplace(arguments)
            conditions += [
                (condition, f"{name}, in {sp.sstr(application)}")
                for condition, name in domain_conditions(composed)
            ]
        conditions += domain_conditions(applied(expr))
        for condition, name in reversed(conditions):
            holds(condition, f"{what}: {name}")
        for application in applications:
            if type(application) in functions:
                value = value_at(application)
                if not value.free_symbols - set(roots):
                    _require_real(value, roots, f"{what}: the value of {sp.sstr(application)}")

    def value_of(expr: sp.Basic, what: str) -> sp.Basic:
        """The finite real value of the closed expression ``expr`` at the witness."""
        in_domain(expr, what)
        value = value_at(expr)
        _require_real(value, roots, what)
        return value

    for key, value in list(values.items()):
        _require_real(value, roots, f"the witness value of {key}")
        in_domain(value, f"the witness value of {key}")
    for family in definitions.families.values():
        missing = [s for s in family.index if s not in values]
        if missing:
            raise VacuityError(
                f"the witness gives no value to {missing[0]} (family {family.name!r})"
            )
    for definition in definitions.items:
        if isinstance(definition, SumOver):
            family = definition.family
            count = value_of(family.count, f"the count of {family.name!r}")
            if not (count.is_Integer and count >= 0):
                raise VacuityError(
                    f"the count {sp.sstr(family.count)} of {family.name!r} is {sp.sstr(count)} at "
                    "the witness, not a natural number"
                )
            for relation in family.domain:
                where = f"the domain of {family.name!r}: {relation}"
                in_domain(relation, where)
                _require_true(at(relation), roots, where)
            if definition.var is None:
                term = value_of(definition.term, f"the term of {sp.sstr(definition.symbol)}")
                values[definition.symbol] = count * term
            else:
                var = definition.var
                body = count * _apply_functions(
                    definition.term.xreplace({k: v for k, v in values.items() if k != var}),
                    functions,
                )
                functions[type(definition.symbol)] = sp.Lambda(var, body)
        elif isinstance(definition, Let):
            values[definition.symbol] = value_of(
                definition.expression, f"the value of {sp.sstr(definition.symbol)}"
            )
        elif isinstance(definition, RealRoot):
            placeholder = sp.Dummy(str(definition.symbol), real=True)
            roots[placeholder] = definition
            values[definition.symbol] = placeholder
    for assumption in assumptions:
        where = f"the assumption {sp.sstr(assumption)}"
        in_domain(assumption, where)
        holds(assumption, where)
    given = ", ".join(f"{k} = {sp.sstr(v)}" for k, v in witness.items() if isinstance(k, sp.Symbol))
    return f"every assumption holds at the witness {given or '(no free symbols)'}"


def _require_true(formula: sp.Basic, roots: Mapping[sp.Symbol, RealRoot], what: str) -> None:
    try:
        holds = _truth(formula, roots)
    except _Undecided as error:
        raise VacuityError(f"{what}: undecided at the witness ({error})") from None
    if not holds:
        raise VacuityError(f"{what} fails at the witness")
