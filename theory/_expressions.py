"""What the kernel accepts as an expression, and the side conditions of partial operations.

Every sympy object that enters the kernel (an assumption, a statement, a definition, a
step's input, a witness value) passes :func:`validate` first.  The accepted language is
small on purpose:

* numbers: exact rationals, ``pi`` and ``E``; never a ``Float`` (exact rationals only),
  never ``I``, ``zoo`` or ``nan``; ``oo`` only as the point of a limit;
* symbols: plain ``Symbol`` objects declared ``real=True`` and nothing more, so that sympy
  never uses a sign behind the checkers' backs (signs are stated as assumptions); no
  ``Dummy`` (those are the kernel's own) and no subclass of ``Symbol``;
* functions: ``+``, ``*``, powers, ``exp``, ``log``, ``Abs``, ``Max``, ``Min``,
  ``Piecewise``, undefined functions declared ``real=True`` (and nothing more), and the
  unevaluated ``Limit``, ``Derivative`` and ``Subs``;
* booleans: relations, ``And``, ``Or``, ``Not``, ``Implies``, ``Equivalent``.

The kernel reads these over the reals.  A partial operation outside its domain (a
division by zero, the logarithm of a number that is not positive, a non-integer power of
a negative base) stands for an unspecified real number, and a fact holds when it holds
for every choice of those numbers.  z3's translation reads formulas exactly so; every
other decider proves the side conditions (:func:`denominators`, :func:`power_bases`,
logarithms' arguments) that let it use the laws it relies on.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import sympy as sp
from sympy.core.function import AppliedUndef, UndefinedFunction
from sympy.functions.elementary.piecewise import ExprCondPair
from sympy.logic.boolalg import BooleanAtom

__all__ = [
    "REAL",
    "ExpressionError",
    "denominators",
    "power_bases",
    "real_function_kwargs",
    "validate",
]

REAL: dict[str, bool] = dict(sp.Symbol("x", real=True).assumptions0)
"""The assumptions of a symbol declared ``real=True`` (and nothing more)."""


def real_function_kwargs() -> dict[str, bool]:
    """The assumptions of an undefined function declared ``real=True`` (and nothing more)."""
    kwargs: dict[str, bool] = sp.Function("f", real=True)._kwargs
    return dict(kwargs)


_REAL_FUNCTION = real_function_kwargs()
_RATIONALS: tuple[type, ...] = tuple(
    {type(sp.Integer(n)) for n in (-1, 0, 1, 2)}
    | {type(sp.Rational(1, 2)), type(sp.Rational(1, 3))}
)

_COMPOUND: tuple[type, ...] = (
    sp.Add,
    sp.Mul,
    sp.Pow,
    sp.exp,
    sp.log,
    sp.Abs,
    sp.Max,
    sp.Min,
    sp.Piecewise,
    ExprCondPair,
    sp.Limit,
    sp.Derivative,
    sp.Subs,
    sp.Tuple,
    sp.Equality,
    sp.Unequality,
    sp.StrictLessThan,
    sp.LessThan,
    sp.StrictGreaterThan,
    sp.GreaterThan,
    sp.And,
    sp.Or,
    sp.Not,
    sp.Implies,
    sp.Equivalent,
)


class ExpressionError(ValueError):
    """An expression outside the language the kernel reads."""


def _is_real_symbol(node: sp.Basic) -> bool:
    return type(node) is sp.Symbol and dict(node.assumptions0) == REAL


def symbol_problem(node: sp.Basic) -> str | None:
    """Why ``node`` (a symbol) is not a plain real symbol, or ``None`` if it is one."""
    if isinstance(node, sp.Dummy):
        return f"the dummy {node} is the kernel's own kind of symbol; use a Symbol"
    if type(node) is not sp.Symbol:
        return f"{node} is a {type(node).__name__}, not a plain Symbol"
    assumptions = dict(node.assumptions0)
    if not assumptions.get("real"):
        return f"{node} is not declared real (real=True): the kernel reasons over the reals"
    if assumptions != REAL:
        extra = sorted(k for k, v in assumptions.items() if REAL.get(k) != v)
        return (
            f"{node} carries assumptions beyond real=True ({', '.join(extra)}): "
            "state signs as assumptions, where the checkers see them"
        )
    return None


def _function_problem(node: sp.Basic) -> str | None:
    kind = type(node)
    if not isinstance(kind, UndefinedFunction) or kind.__bases__ != (AppliedUndef,):
        return f"{kind.__name__} is not an undefined function made by sympy's Function"
    if dict(kind._kwargs) != _REAL_FUNCTION:
        return (
            f"the function {kind.__name__} must be declared real=True and nothing more, "
            f"not {dict(kind._kwargs) or 'without assumptions'}"
        )
    return None


def _number_problem(node: sp.Basic, infinity_allowed: bool) -> str | None:
    if isinstance(node, sp.Float):
        return f"the Float {node} is not exact: the kernel takes exact rationals only"
    if type(node) in _RATIONALS:
        return None
    if node is sp.pi or node is sp.E:
        return None
    if infinity_allowed and (node is sp.oo or node is sp.S.NegativeInfinity):
        return None
    return f"{node} is not a finite real number the kernel reads"


def problems(expr: sp.Basic, *, infinity_allowed: bool = False) -> Iterator[str]:
    """Every reason ``expr`` is outside the kernel's language (nothing if it is inside)."""
    if not isinstance(expr, sp.Basic):
        yield f"{expr!r} is a {type(expr).__name__}, not a sympy object"
        return
    if isinstance(expr, sp.Limit):
        body, var, point, direction = expr.args
        yield from problems(body)
        yield from problems(var)
        yield from problems(point, infinity_allowed=True)
        if str(direction) not in ("+", "-"):
            yield f"the direction {direction} of a limit"
        return
    if isinstance(expr, sp.Equality) and any(isinstance(side, sp.Limit) for side in expr.args):
        for side in expr.args:  # a limit may equal +oo or -oo
            yield from problems(side, infinity_allowed=not isinstance(side, sp.Limit))
        return
    if isinstance(expr, sp.Symbol):
        problem = symbol_problem(expr)
        if problem:
            yield problem
        return
    if isinstance(expr, BooleanAtom):
        return
    if expr.is_Atom:
        problem = _number_problem(expr, infinity_allowed)
        if problem:
            yield problem
        return
    if isinstance(expr, AppliedUndef):
        problem = _function_problem(expr)
        if problem:
            yield problem
    elif type(expr) not in _COMPOUND:
        yield f"{type(expr).__name__} is not among the functions the kernel reads"
        return
    for arg in expr.args:
        yield from problems(arg)


def validate(expr: sp.Basic, where: str) -> sp.Basic:
    """Return ``expr`` if the kernel reads it, else raise :class:`ExpressionError`."""
    for problem in problems(expr):
        raise ExpressionError(f"{where}: {problem}")
    return expr


def validate_all(exprs: Iterable[sp.Basic], where: str) -> None:
    """:func:`validate` each of ``exprs``."""
    for expr in exprs:
        validate(expr, where)


def _walk(expr: sp.Basic) -> Iterator[sp.Basic]:
    yield from sp.preorder_traversal(expr)


def denominators(*exprs: sp.Basic) -> list[sp.Expr]:
    """The bases of every negative power in ``exprs`` (each must be non-zero)."""
    found: list[sp.Expr] = []
    for expr in exprs:
        for node in _walk(expr):
            negative = isinstance(node, sp.Pow) and node.exp.is_number and node.exp.is_negative
            if negative and node.base not in found:
                found.append(node.base)
    return found


def power_bases(*exprs: sp.Basic) -> list[sp.Expr]:
    """The bases of every power whose exponent is not an integer (each must be positive)."""
    found: list[sp.Expr] = []
    for expr in exprs:
        for node in _walk(expr):
            fractional = isinstance(node, sp.Pow) and not node.exp.is_Integer
            if fractional and node.base not in found:
                found.append(node.base)
    return found


def domain_conditions(*exprs: sp.Basic) -> list[tuple[sp.Basic, str]]:
    """What keeps every partial operation in ``exprs`` inside its domain, with a name.

    A negative power needs a non-zero base, a logarithm a positive argument, a power
    with a positive rational exponent a non-negative base and any other non-integer
    power a positive base.  Where these hold, the reals and sympy's (complex) reading
    agree, so sympy's automatic rewritings (``exp(log x) = x``, ``x**a x**b =
    x**(a+b)``, ...) are valid there.
    """
    found: list[tuple[sp.Basic, str]] = []

    def add(condition: sp.Basic, name: str) -> None:
        if condition not in (c for c, _ in found):
            found.append((condition, name))

    for expr in exprs:
        for node in sp.preorder_traversal(expr):
            if isinstance(node, sp.Pow):
                exponent = node.exp
                if exponent.is_Integer:
                    if exponent.is_negative:
                        add(
                            sp.Ne(node.base, 0, evaluate=False), f"the denominator {node.base} != 0"
                        )
                elif exponent.is_Rational and exponent.is_positive:
                    add(sp.Ge(node.base, 0, evaluate=False), f"the base {node.base} of {node} >= 0")
                else:
                    add(sp.Gt(node.base, 0, evaluate=False), f"the base {node.base} of {node} > 0")
            elif isinstance(node, sp.log):
                add(sp.Gt(node.args[0], 0, evaluate=False), f"the argument of {node} > 0")
    return found


def is_real_symbol(node: sp.Basic) -> bool:
    """``node`` is a plain ``Symbol`` declared ``real=True`` and nothing more."""
    return _is_real_symbol(node)
