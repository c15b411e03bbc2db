"""Terms as sympy, for one decision: every name a kernel-owned ``Dummy``.

A decider (``cancel``, sympy's ``limit``, exact root counting) needs sympy objects.  It
builds them here from terms with sympy's own constructors, and every name becomes a
``Dummy`` the kernel made for this decision: no object a claim author made, no class a
claim author defined, and no name an author chose ever reaches sympy's caches or
methods.  Subterms the decider treats as unknowns (applied functions, derivatives,
``Abs``, ``Max``, ``Min``, ``Piecewise``) become ``Dummy`` atoms too, the same one for
the same canonical term.  sympy evaluates as it builds (``x·x⁻¹`` is ``1``): the decider
proves the side conditions that make this valid, and its answer is a verdict only.

:meth:`Bridge.term` reads a decider's sympy result back into a term (to ask z3 a
question about it), by exact node type, with the kernel's dummies mapped back.
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy as sp
from sympy.core.numbers import (
    Exp1,
    Half,
    Infinity,
    NegativeInfinity,
    NegativeOne,
    One,
    Pi,
    Zero,
)

from softmax_dispersion.theory import terms
from softmax_dispersion.theory.terms import Term, TermError

__all__ = ["Bridge"]

_OPAQUE = ("app", "der", "abs", "max", "min", "pw", "lim")
_BUILD = {
    "add": lambda args: sp.Add(*args),
    "mul": lambda args: sp.Mul(*args),
    "pow": lambda args: sp.Pow(*args),
    "exp": lambda args: sp.exp(*args),
    "log": lambda args: sp.log(*args),
    "abs": lambda args: sp.Abs(*args),
    "max": lambda args: sp.Max(*args),
    "min": lambda args: sp.Min(*args),
}


class Bridge:
    """Builds sympy expressions from terms, and reads decider results back."""

    def __init__(self, opaque: tuple[str, ...] = _OPAQUE) -> None:
        self.opaque = opaque
        self.symbols: dict[str, sp.Dummy] = {}
        self.atoms: dict[Term, sp.Dummy] = {}
        self.back: dict[sp.Dummy, Term] = {}
        self._built: dict[Term, sp.Expr] = {}

    def symbol(self, name: str, **assumptions: bool) -> sp.Dummy:
        """The dummy standing for the variable ``name`` (``real`` unless told more)."""
        dummy = self.symbols.get(name)
        if dummy is None:
            dummy = sp.Dummy(name, **(assumptions or {"real": True}))
            self.symbols[name] = dummy
            self.back[dummy] = terms.sym(name)
        return dummy

    def set_value(self, name: str, value: sp.Expr) -> None:
        """Build the variable ``name`` as ``value`` (a signed dummy, or 0)."""
        if isinstance(value, sp.Dummy):
            self.symbols[name] = value
            self.back[value] = terms.sym(name)
        else:
            self._built[terms.sym(name)] = value

    def expr(self, term: Term) -> sp.Expr:
        """``term`` built by sympy's constructors (it evaluates as it builds)."""
        found = self._built.get(term)
        if found is not None:
            return found
        op = term[0]
        if op in self.opaque:
            key = terms.canonical(term)
            atom = self.atoms.get(key)
            if atom is None:
                atom = sp.Dummy(f"atom{len(self.atoms)}", real=True)
                self.atoms[key] = atom
                self.back[atom] = term
            built: sp.Expr = atom
        elif op == "num":
            built = sp.Rational(term[2], term[3])
        elif op == "sym":
            built = self.symbol(term[2])
        elif op == "pi":
            built = sp.pi
        elif op == "E":
            built = sp.E
        elif op == "inf":
            built = sp.oo if term[2] > 0 else -sp.oo
        elif op in _BUILD:
            built = _BUILD[op]([self.expr(c) for c in term.children])
        else:
            raise TermError(f"{terms.show(term)} is not an expression a decider reads")
        self._built[term] = built
        return built

    def term(self, expr: object, extra: Mapping[object, Term] | None = None) -> Term:
        """A decider's sympy result as a term (exact node types; dummies mapped back)."""
        return self._term(expr, extra or {}, 0)

    def _term(self, expr: object, extra: Mapping[object, Term], depth: int) -> Term:
        if depth > terms.MAX_DEPTH:
            raise TermError("a decider's result nested too deep")
        kind = type(expr)
        if kind in (sp.Integer, Zero, One, NegativeOne):
            return terms.num(expr.p)  # type: ignore[attr-defined]
        if kind in (sp.Rational, Half):
            return terms.num(expr.p, expr.q)  # type: ignore[attr-defined]
        if kind is Pi:
            return terms.PI
        if kind is Exp1:
            return terms.E_CONSTANT
        if kind is Infinity:
            return terms.OO
        if kind is NegativeInfinity:
            return terms.MINUS_OO
        if kind is sp.Dummy:
            if expr in self.back:
                return self.back[expr]
            if expr in extra:
                return extra[expr]
            raise TermError(f"a decider's result holds an unknown symbol {expr}")
        ops = {
            sp.Add: "add",
            sp.Mul: "mul",
            sp.Pow: "pow",
            sp.exp: "exp",
            sp.log: "log",
            sp.Abs: "abs",
            sp.Max: "max",
            sp.Min: "min",
        }
        if kind in ops:
            args = [self._term(a, extra, depth + 1) for a in expr.args]  # type: ignore[attr-defined]
            return terms.make(ops[kind], args)
        raise TermError(f"a decider's result holds {kind.__name__}, outside the kernel's terms")


def display(term: Term) -> sp.Basic:
    """``term`` as a sympy object for people and tests to look at (never decided on).

    Arithmetic is built by sympy's constructors (so it reads as sympy writes it);
    relations are kept unevaluated, and names become plain real symbols and functions.
    """
    return _display(term, ())


def _display(term: Term, bound: tuple[sp.Symbol, ...]) -> sp.Basic:
    op = term[0]
    if op == "sym":
        return sp.Symbol(term[2], real=True)
    if op == "bound":
        return bound[len(bound) - 1 - term[2]]
    if op == "num":
        return sp.Rational(term[2], term[3])
    if op == "inf":
        return sp.oo if term[2] > 0 else -sp.oo
    constants = {"pi": sp.pi, "E": sp.E, "true": sp.true, "false": sp.false}
    if op in constants:
        return constants[op]
    if op in ("lim", "der"):
        var = sp.Symbol(terms._display_hint(term, tuple(s.name for s in bound)), real=True)
        body = _display(term[3], (*bound, var))
        point = _display(term[4], bound)
        if op == "lim":
            return sp.Limit(body, var, point, term[5])
        derivative = sp.Derivative(body, var)
        return derivative if point == var else sp.Subs(derivative, var, point)
    kids = [_display(c, bound) for c in term.children]
    if op == "app":
        return sp.Function(term[2], real=True)(*kids)
    if op in _BUILD:
        built = _BUILD[op](kids)
        if built.has(sp.zoo, sp.nan) or built in (sp.oo, -sp.oo):
            with sp.evaluate(False):  # shown as written: log(0), 1/0
                built = _BUILD[op](kids)
        return built
    if op == "pw":
        return sp.Piecewise(*zip(kids[0::2], kids[1::2], strict=True))
    relations = {
        "eq": sp.Eq,
        "ne": sp.Ne,
        "lt": sp.Lt,
        "le": sp.Le,
        "gt": sp.Gt,
        "ge": sp.Ge,
    }
    if op in relations:
        return relations[op](*kids, evaluate=False)
    connectives = {
        "and": sp.And,
        "or": sp.Or,
        "not": sp.Not,
        "implies": sp.Implies,
        "equiv": sp.Equivalent,
    }
    return connectives[op](*kids)
