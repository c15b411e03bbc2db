"""The boundary: sympy objects read into the kernel's terms, by exact node type.

Every sympy object that enters the kernel (an assumption, a statement, a definition, a
step's input, a witness value) is converted here into a
:class:`~softmax_dispersion.theory.terms.Term`, once; the kernel never looks at the
caller's object again.  Each node is recognised by its exact type (``type(node) is
sp.Add``), never by ``isinstance``, a class's flags or its methods, so a subclass, a
look-alike or an object with methods of its own has nothing to offer:

* numbers: sympy's integers and rationals (each singleton class listed), ``pi`` and
  ``E``; ``oo`` and ``-oo`` only as the point of a limit or the value it equals; never a
  ``Float`` (exact rationals only), ``I``, ``zoo``, ``nan`` or ``AccumBounds``;
* symbols: exactly ``Symbol`` declared ``real=True`` and nothing more (signs are stated
  as assumptions, where the deciders see them); no ``Dummy``, no subclass;
* ``Add``, ``Mul``, ``Pow``, ``exp``, ``log``, ``Abs``, ``Max``, ``Min``, ``Piecewise``;
* undefined functions made by ``sympy.Function(name, real=True)`` and nothing else in
  their class: read as a name and arguments, rebuilt by the kernel by name;
* ``Limit(expr, x, point)`` only as a side of an equation (what the limit equals), and
  ``Derivative(expr, x)`` of first order, also at a point as
  ``Subs(Derivative(expr, x), x, point)``: their variable becomes a bound variable;
* relations, ``And``, ``Or``, ``Not``, ``Implies``, ``Equivalent``, ``true``, ``false``;
* a witness function is a ``Lambda`` of real symbols whose body mentions nothing else.

Anything else (``Subs`` of anything but a derivative, ``Lambda`` where an expression
belongs, a ``Function`` subclass with attributes, a limit inside arithmetic, ...) is
refused with a message naming the node.
"""

from __future__ import annotations

from typing import Any

import sympy as sp
from sympy.core.function import AppliedUndef, UndefinedFunction
from sympy.core.numbers import Exp1, Half, NegativeInfinity, NegativeOne, One, Pi, Zero
from sympy.functions.elementary.miscellaneous import IdentityFunction
from sympy.functions.elementary.piecewise import ExprCondPair
from sympy.logic.boolalg import BooleanFalse, BooleanTrue

from softmax_dispersion.theory import terms
from softmax_dispersion.theory.terms import Term, TermError

__all__ = ["Converter", "ExpressionError", "function_problem", "symbol_problem"]


class ExpressionError(ValueError):
    """An expression outside the language the kernel reads."""


_INTEGERS = (sp.Integer, Zero, One, NegativeOne)
_RATIONALS = (sp.Rational, Half)
_INFINITIES = {sp.core.numbers.Infinity: terms.OO, NegativeInfinity: terms.MINUS_OO}
_RELATIONS: dict[type, str] = {
    sp.Equality: "eq",
    sp.Unequality: "ne",
    sp.StrictLessThan: "lt",
    sp.LessThan: "le",
    sp.StrictGreaterThan: "gt",
    sp.GreaterThan: "ge",
}
_CONNECTIVES: dict[type, str] = {
    sp.And: "and",
    sp.Or: "or",
    sp.Not: "not",
    sp.Implies: "implies",
    sp.Equivalent: "equiv",
}
_ARITHMETIC: dict[type, str] = {
    sp.Add: "add",
    sp.Mul: "mul",
    sp.Pow: "pow",
    sp.exp: "exp",
    sp.log: "log",
    sp.Abs: "abs",
    sp.Max: "max",
    sp.Min: "min",
}

_REFERENCE_FUNCTION = sp.Function("reference", real=True)
_FUNCTION_CLASS_DICT = {
    key: value for key, value in vars(_REFERENCE_FUNCTION).items() if key != "name"
}
_REAL_ORIGINAL = {"real": True}


def symbol_problem(node: object) -> str | None:
    """Why ``node`` is not a plain real symbol, or ``None`` if it is one."""
    if type(node) is sp.Dummy:
        return f"the dummy {node} is the kernel's own kind of symbol; use a Symbol"
    if type(node) is not sp.Symbol:
        return f"{_describe(node)} is a {type(node).__name__}, not a plain Symbol"
    assert isinstance(node, sp.Symbol)
    original = node._assumptions_orig  # type: ignore[attr-defined]
    if type(original) is not dict or not original:
        return (
            f"{_describe(node)} is not declared real (real=True): the kernel reasons over the reals"
        )
    if original != _REAL_ORIGINAL:
        extra = sorted(k for k in original if k != "real")
        return (
            f"{_describe(node)} carries assumptions beyond real=True ({', '.join(extra)}): "
            "state signs as assumptions, where the checkers see them"
        )
    return None


def _describe(node: object) -> str:
    """A short, safe description of a node (its own printing is never called)."""
    if type(node) in (sp.Symbol, sp.Dummy):
        name = node.name  # type: ignore[attr-defined]
        return repr(name)[1:-1] if type(name) is str else "a symbol"
    return type(node).__name__


def function_problem(kind: object) -> str | None:
    """Why ``kind`` is not an undefined real function, or ``None``."""
    if type(kind) is not UndefinedFunction:
        return f"{getattr(kind, '__name__', type(kind).__name__)} is not an undefined function"
    assert isinstance(kind, type)
    if kind.__bases__ != (AppliedUndef,):
        return f"{kind.__name__} is not an undefined function made by sympy's Function"
    own = vars(kind)
    if not _same(own.get("_kwargs"), _FUNCTION_CLASS_DICT["_kwargs"]):
        return (
            f"the function {kind.__name__} must be declared real=True and nothing more "
            "(its sign and other properties are stated as assumptions)"
        )
    extra = sorted(set(own) - set(_FUNCTION_CLASS_DICT) - {"name"})
    if extra:
        return f"the function {kind.__name__} carries attributes of its own ({', '.join(extra)})"
    for key, value in _FUNCTION_CLASS_DICT.items():
        if key not in own or not _same(own[key], value):
            return (
                f"the function {kind.__name__} must be declared real=True and nothing more "
                f"(its {key} differs)"
            )
    return None


def _same(a: object, b: object) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a == b
    return a is b or a == b


class Converter:
    """Reads sympy objects into terms, remembering each object it has read.

    One converter serves one check: the same object (by identity, kept alive here) is
    converted once, which keeps the boundary cheap for the claims' shared expressions.
    """

    def __init__(self) -> None:
        self._seen: dict[int, tuple[object, Term]] = {}

    # ---- public entry points -------------------------------------------------------

    def real(self, node: object, where: str) -> Term:
        """``node`` as a real term."""
        term = self._convert(node, where)
        if not terms.is_real(term):
            raise ExpressionError(f"{where}: {terms.show(term)} is not a real expression")
        return term

    def formula(self, node: object, where: str) -> Term:
        """``node`` as a formula (a relation or a boolean combination)."""
        term = self._convert(node, where)
        if terms.sort_of(term) != "b":
            raise ExpressionError(f"{where}: {terms.show(term)} is not a relation or formula")
        return term

    def point(self, node: object, where: str) -> Term:
        """``node`` as a real term or ``±oo`` (a limit's point or value)."""
        if type(node) in _INFINITIES:
            return _INFINITIES[type(node)]
        return self.real(node, where)

    def symbol(self, node: object, where: str) -> str:
        """The name of ``node``, a plain real symbol."""
        problem = symbol_problem(node)
        if problem:
            raise ExpressionError(f"{where}: {problem}")
        assert isinstance(node, sp.Symbol)
        return self._name(node.name, where, "a symbol")

    def function(self, kind: object, where: str) -> str:
        """The name of ``kind``, an undefined real function (the class itself)."""
        problem = function_problem(kind)
        if problem:
            raise ExpressionError(f"{where}: {problem}")
        return self._name(kind.__name__, where, "a function")  # type: ignore[attr-defined]

    def number(self, node: object, where: str) -> Term:
        """``node`` as a rational number (an ``int`` or a sympy rational)."""
        if type(node) is int:
            return self._guard(lambda: terms.num(node), where)
        term = self.real(node, where)
        if term[0] != "num":
            raise ExpressionError(f"{where}: {terms.show(term)} is not a rational number")
        return term

    def lambda_(self, node: object, where: str) -> tuple[tuple[str, ...], Term]:
        """A witness function ``Lambda(args, body)``: its parameters and its body."""
        if type(node) is IdentityFunction:  # what sympy makes of Lambda(x, x)
            return ("x",), terms.sym("x")
        if type(node) is not sp.Lambda:
            raise ExpressionError(f"{where} must be a sympy Lambda")
        assert isinstance(node, sp.Lambda)
        signature, body = node.args  # type: ignore[attr-defined]
        if type(signature) is not sp.Tuple:
            raise ExpressionError(f"{where}: a Lambda's signature")
        names = tuple(self.symbol(v, where) for v in signature.args)
        if len(set(names)) != len(names):
            raise ExpressionError(f"{where}: a Lambda repeats a parameter")
        term = self.real(body, where)
        stray = sorted(terms.free_names(term) - set(names))
        if stray:
            raise ExpressionError(
                f"{where}: the Lambda's body mentions {stray[0]}, which is not a parameter"
            )
        if terms.has_op(term, "app", "der", "lim"):
            raise ExpressionError(
                f"{where}: a witness function is an explicit expression in its parameters"
            )
        return names, term

    # ---- conversion ------------------------------------------------------------------

    @staticmethod
    def _guard(build: Any, where: str) -> Term:
        try:
            result: Term = build()
        except TermError as error:
            raise ExpressionError(f"{where}: {error}") from None
        return result

    def _name(self, name: object, where: str, what: str) -> str:
        try:
            return terms.check_name(name, what)
        except TermError as error:
            raise ExpressionError(f"{where}: {error}") from None

    def _convert(self, node: object, where: str) -> Term:
        if type(node) is int:  # a plain Python integer where sympy's would do
            return self._guard(lambda: terms.num(node), where)
        key = id(node)
        seen = self._seen.get(key)
        if seen is not None:
            return seen[1]
        term = self._node(node, where, 0)
        try:
            terms.check_size(term, where)
        except TermError as error:
            raise ExpressionError(str(error)) from None
        self._seen[key] = (node, term)
        return term

    def _child(self, node: object, where: str, depth: int) -> Term:
        seen = self._seen.get(id(node))
        if seen is not None:
            return seen[1]
        term = self._node(node, where, depth)
        self._seen[id(node)] = (node, term)
        return term

    def _node(self, node: object, where: str, depth: int) -> Term:
        if depth > terms.MAX_DEPTH:
            raise ExpressionError(f"{where}: an expression nested deeper than {terms.MAX_DEPTH}")
        kind = type(node)
        try:
            return self._read(node, kind, where, depth)
        except TermError as error:
            raise ExpressionError(f"{where}: {error}") from None
        except RecursionError:
            raise ExpressionError(f"{where}: an expression nested too deep") from None

    def _args(self, node: object) -> tuple[object, ...]:
        args = node.args  # type: ignore[attr-defined]
        if type(args) is not tuple:
            raise ExpressionError(f"{_describe(node)} has malformed arguments")
        return args

    def _read(self, node: object, kind: type, where: str, depth: int) -> Term:
        below = depth + 1
        if kind in _INTEGERS:
            p = node.p  # type: ignore[attr-defined]
            if type(p) is not int:
                raise ExpressionError(f"{where}: {kind.__name__} holds no integer")
            return terms.num(p)
        if kind in _RATIONALS:
            p, q = node.p, node.q  # type: ignore[attr-defined]
            if type(p) is not int or type(q) is not int or q <= 0:
                raise ExpressionError(f"{where}: {kind.__name__} holds no rational")
            return terms.num(p, q)
        if kind is Pi:
            return terms.PI
        if kind is Exp1:
            return terms.E_CONSTANT
        if kind is BooleanTrue:
            return terms.TRUE
        if kind is BooleanFalse:
            return terms.FALSE
        if kind is sp.Symbol or kind is sp.Dummy:
            return terms.sym(self.symbol(node, where))
        if kind in _ARITHMETIC:
            args = [self._child(a, where, below) for a in self._args(node)]
            return terms.make(_ARITHMETIC[kind], args)
        if kind in _RELATIONS:
            return self._relation(node, _RELATIONS[kind], where, below)
        if kind in _CONNECTIVES:
            args = [self._child(a, where, below) for a in self._args(node)]
            return terms.make(_CONNECTIVES[kind], args)
        if kind is sp.Piecewise:
            payload: list[Term] = []
            for pair in self._args(node):
                if type(pair) is not ExprCondPair:
                    raise ExpressionError(f"{where}: a Piecewise branch is not a pair")
                value, condition = self._args(pair)
                payload += [self._child(value, where, below), self._child(condition, where, below)]
            return terms.make("pw", payload)
        if kind is sp.Derivative:
            return self._derivative(node, None, where, below)
        if kind is sp.Subs:
            return self._subs(node, where, below)
        if kind is sp.Limit:
            return self._limit(node, where, below)
        if type(kind) is UndefinedFunction:
            name = self.function(kind, where)
            args = [self._child(a, where, below) for a in self._args(node)]
            return terms.app(name, *args)
        if kind in _INFINITIES:
            raise ExpressionError(
                f"{where}: {(_INFINITIES[kind][2] > 0 and 'oo') or '-oo'} appears only as "
                "the point of a limit or the value it equals"
            )
        raise ExpressionError(f"{where}: {_unknown(node, kind)}")

    def _relation(self, node: object, op: str, where: str, depth: int) -> Term:
        lhs, rhs = self._args(node)
        if op == "eq" and sp.Limit in (type(lhs), type(rhs)):
            # what a limit equals: the other side may be an infinity
            sides = [
                self._child(s, where, depth) if type(s) not in _INFINITIES else _INFINITIES[type(s)]
                for s in (lhs, rhs)
            ]
            return terms.make("eq", sides)
        return terms.make(op, [self._child(lhs, where, depth), self._child(rhs, where, depth)])

    def _variable(self, pair: object, where: str) -> str:
        if type(pair) is not sp.Tuple or len(self._args(pair)) != 2:
            raise ExpressionError(f"{where}: a derivative's variable")
        var, count = self._args(pair)
        if type(count) not in _INTEGERS or count.p != 1:  # type: ignore[attr-defined]
            raise ExpressionError(f"{where}: only first derivatives are read")
        return self.symbol(var, where)

    def _derivative(self, node: object, point: object, where: str, depth: int) -> Term:
        args = self._args(node)
        if len(args) != 2:
            raise ExpressionError(f"{where}: a derivative in exactly one variable")
        body = self._child(args[0], where, depth)
        var = self._variable(args[1], where)
        at = None if point is None else self._child(point, where, depth)
        return terms.derivative_at(body, var, at)

    def _subs(self, node: object, where: str, depth: int) -> Term:
        expr, variables, points = self._args(node)
        if (
            type(expr) is not sp.Derivative
            or type(variables) is not sp.Tuple
            or type(points) is not sp.Tuple
            or len(self._args(variables)) != 1
            or len(self._args(points)) != 1
        ):
            raise ExpressionError(
                f"{where}: Subs is read only as a derivative at a point, "
                "Subs(Derivative(expr, x), x, point)"
            )
        (var,) = self._args(variables)
        (point,) = self._args(points)
        derivative_args = self._args(expr)
        if len(derivative_args) != 2 or self._variable(derivative_args[1], where) != self.symbol(
            var, where
        ):
            raise ExpressionError(f"{where}: Subs of a derivative in another variable")
        return self._derivative(expr, point, where, depth)

    def _limit(self, node: object, where: str, depth: int) -> Term:
        body, var, point, direction = self._args(node)
        name = self.symbol(var, where)
        if type(direction) is not sp.Symbol or direction.name not in ("+", "-"):  # type: ignore[attr-defined]
            raise ExpressionError(f"{where}: a limit's direction is + or -")
        at = (
            _INFINITIES[type(point)]
            if type(point) in _INFINITIES
            else self._child(point, where, depth)
        )
        return terms.limit(self._child(body, where, depth), name, at, direction.name)  # type: ignore[attr-defined]


def _unknown(node: object, kind: type) -> str:
    if kind is sp.Float:
        return f"the Float {node} is not exact: the kernel takes exact rationals only"
    if kind in (
        sp.core.numbers.ImaginaryUnit,
        sp.core.numbers.ComplexInfinity,
        sp.core.numbers.NaN,
    ):
        return f"{node} is not a finite real number the kernel reads"
    if isinstance(node, sp.Number):
        return f"{kind.__name__} is not a finite real number the kernel reads"
    if kind is sp.Lambda:
        return "a Lambda is only a witness function, never an expression"
    if isinstance(node, str):
        return "text is not an expression"
    if not isinstance(node, sp.Basic):
        return f"{kind.__name__} is not a sympy object the kernel reads"
    return f"{kind.__name__} is not among the nodes the kernel reads"
