"""Definitions: the named objects a claim introduces, checked and recorded with it.

A claim's statement may speak of things that are not free parameters: the sum ``S`` of
the other ``n − 1`` exponentials, the entropy ``H``, a root of a polynomial.  Each is a
*definition*, declared in the claim's ``definitions`` and checked by the kernel before
any step runs:

:class:`Family`
    A finite family of terms: ``count`` values of the ``index`` symbols, each satisfying
    the ``domain``.  The index symbols are bound: they stand for a generic member and may
    appear only inside the family's sums and their termwise sub-proofs.  A claim holds
    for every family of the declared size and domain.
:class:`SumOver`
    ``symbol := Σ term`` over a family.  The symbol may be a function of one variable,
    ``A(θ) := Σ term(θ)``, for a sum that is differentiated; :meth:`SumOver.at` names its
    value at a point.
:class:`Let`
    ``symbol := expression``, an abbreviation; the kernel adds ``symbol = expression``
    to the facts.
:class:`RealRoot`
    ``symbol :=`` the one real root of a rational polynomial in an open rational
    interval, decided by exact root counting; the kernel adds ``P(symbol) = 0`` and
    ``lower < symbol < upper`` to the facts.

The checks (:class:`Definitions`): every defined symbol is a plain real symbol (or a
real function of one real variable) defined once, before it is used, never inside its
own definition; index symbols are distinct from every defined symbol and appear nowhere
else in the claim; definitions refer only to free symbols, their own family's index and
earlier definitions.  So each definition is conservative: every value of the free
symbols and every family extends to exactly one value of each defined symbol, and the
definitions can never make a claim's hypotheses contradictory (the vacuity check sees
to the assumptions).

For example:

>>> import sympy as sp
>>> from softmax_dispersion.theory.definitions import Family, Let, SumOver
>>> n, x, theta = sp.symbols("n x theta", real=True)
>>> S, Z = sp.symbols("S Z", real=True)
>>> logits = Family("logits", (x,), n, (sp.Le(0, x), sp.Le(x, 1)), "the n logits in [0, 1]")
>>> total = SumOver(S, sp.exp(x / theta), logits, "the partition function")
>>> total.equation
Eq(S, Sum(exp(x/theta), (i, 1, n)))
>>> Let(Z, 2 * S, "twice the partition function").equation
Eq(Z, 2*S)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

import sympy as sp
from sympy.core.function import AppliedUndef

from softmax_dispersion.theory._expressions import (
    ExpressionError,
    is_real_symbol,
    symbol_problem,
    validate,
)

__all__ = [
    "Definition",
    "DefinitionError",
    "Definitions",
    "Family",
    "Let",
    "RealRoot",
    "SumAt",
    "SumOver",
]


class DefinitionError(ValueError):
    """A definition that is malformed, circular, repeated or not fresh."""


def _tuple(values: Iterable[object]) -> tuple[sp.Basic, ...]:
    return tuple(sp.sympify(v) for v in values)


def _set(instance: object, name: str, value: object) -> None:
    object.__setattr__(instance, name, value)


@dataclass(frozen=True)
class Family:
    """``count`` members, each a value of the ``index`` symbols satisfying ``domain``.

    Parameters
    ----------
    name
        A name, unique within a claim (it identifies the family in certificates).
    index
        The bound symbols of a generic member (say ``(e_j,)``).
    count
        How many members (a natural number wherever the claim speaks of the family);
        it must not depend on the index.
    domain
        Relations every member satisfies (say ``m <= e_j``, ``e_j <= M``).
    description
        What the family is, for readers.
    """

    name: str
    index: tuple[sp.Symbol, ...]
    count: sp.Expr
    domain: tuple[sp.Basic, ...] = ()
    description: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        _set(self, "index", _tuple(self.index))
        _set(self, "count", sp.sympify(self.count))
        _set(self, "domain", _tuple(self.domain))


@dataclass(frozen=True)
class SumOver:
    """``symbol := Σ term`` over the members of ``family``.

    ``symbol`` is a real symbol or a real function applied to one real symbol
    (``A(θ)``): the sum is then defined at every value of that variable, the family
    staying the same.
    """

    symbol: sp.Expr
    term: sp.Expr
    family: Family
    description: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        _set(self, "symbol", sp.sympify(self.symbol))
        _set(self, "term", sp.sympify(self.term))

    @property
    def var(self) -> sp.Symbol | None:
        """The variable of a function-valued sum ``A(var)``, else ``None``."""
        if isinstance(self.symbol, AppliedUndef) and len(self.symbol.args) == 1:
            arg = self.symbol.args[0]
            return arg if isinstance(arg, sp.Symbol) else None
        return None

    @property
    def key(self) -> sp.Basic:
        """What is defined: the symbol, or the function of a function-valued sum."""
        return type(self.symbol) if isinstance(self.symbol, AppliedUndef) else self.symbol

    @property
    def definition(self) -> SumOver:
        """The definition itself (a :class:`SumAt` names its definition the same way)."""
        return self

    def at(self, value: sp.Expr | int) -> SumAt:
        """The value ``A(value)`` of a function-valued sum: the same terms at ``value``."""
        return SumAt(self, sp.sympify(value))

    @property
    def expression(self) -> sp.Expr:
        """The defining sum for display, ``Sum(term, (j, 1, count))``.

        ``j`` is an integer counter named after the first index symbol's subscript
        (``e_j`` gives ``j``); the index symbols stand for the ``j``-th member.
        """
        name = self.family.index[0].name
        counter = name.rsplit("_", 1)[1] if "_" in name else "i"
        j = sp.Symbol(counter or "i", integer=True, positive=True)
        return sp.Sum(self.term, (j, 1, self.family.count))

    @property
    def equation(self) -> sp.Basic:
        """``symbol = Σ term`` (for display)."""
        return sp.Eq(self.symbol, self.expression, evaluate=False)


@dataclass(frozen=True)
class SumAt:
    """A function-valued sum ``A(var)`` at ``var = value``: ``A(value) = Σ term(value)``."""

    total: SumOver
    value: sp.Expr

    @property
    def definition(self) -> SumOver:
        """The function-valued sum this is a value of."""
        return self.total

    @property
    def symbol(self) -> sp.Expr:
        """``A(value)``."""
        var = self.total.var
        assert var is not None
        return self.total.symbol.xreplace({var: self.value})

    @property
    def term(self) -> sp.Expr:
        """The term at ``value``."""
        var = self.total.var
        assert var is not None
        return self.total.term.subs(var, self.value)

    @property
    def family(self) -> Family:
        """The family summed over (the same at every value)."""
        return self.total.family


@dataclass(frozen=True)
class Let:
    """``symbol := expression``: an abbreviation, added to the facts as an equation."""

    symbol: sp.Symbol
    expression: sp.Expr
    description: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        _set(self, "symbol", sp.sympify(self.symbol))
        _set(self, "expression", sp.sympify(self.expression))

    @property
    def key(self) -> sp.Basic:
        """What is defined."""
        return self.symbol

    @property
    def equation(self) -> sp.Basic:
        """``symbol = expression``."""
        return sp.Eq(self.symbol, self.expression, evaluate=False)


@dataclass(frozen=True)
class RealRoot:
    """``symbol :=`` the one real root of ``polynomial`` (in ``var``) in ``(lower, upper)``.

    The polynomial has rational coefficients and the bounds are rationals; the kernel
    decides by exact root counting (Sturm sequences) that exactly one root lies strictly
    between them and that neither bound is a root.
    """

    symbol: sp.Symbol
    polynomial: sp.Expr
    var: sp.Symbol
    lower: sp.Rational
    upper: sp.Rational
    description: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        _set(self, "symbol", sp.sympify(self.symbol))
        _set(self, "polynomial", sp.sympify(self.polynomial))
        _set(self, "var", sp.sympify(self.var))
        _set(self, "lower", sp.sympify(self.lower))
        _set(self, "upper", sp.sympify(self.upper))

    @property
    def key(self) -> sp.Basic:
        """What is defined."""
        return self.symbol

    @property
    def expression(self) -> sp.Expr:
        """The root as sympy's exact ``CRootOf`` (for display and evaluation)."""
        poly = sp.Poly(self.polynomial, self.var, domain="QQ")
        for root in poly.real_roots():
            if self.lower < root < self.upper:
                return root
        raise DefinitionError(f"{self.symbol}: no root of the polynomial in its interval")

    @property
    def equation(self) -> sp.Basic:
        """``P(symbol) = 0`` (for display; the interval pins the root)."""
        return sp.Eq(self.polynomial.xreplace({self.var: self.symbol}), 0, evaluate=False)

    def facts(self) -> list[sp.Basic]:
        """``P(symbol) = 0``, ``lower < symbol`` and ``symbol < upper``."""
        return [
            self.equation,
            sp.Lt(self.lower, self.symbol, evaluate=False),
            sp.Lt(self.symbol, self.upper, evaluate=False),
        ]

    def isolate(self) -> None:
        """Decide that exactly one root lies in ``(lower, upper)``, neither end a root."""
        if self.polynomial.free_symbols - {self.var}:
            raise DefinitionError(
                f"{self.symbol}: the polynomial has parameters besides {self.var}"
            )
        try:
            poly = sp.Poly(self.polynomial, self.var, domain="QQ")
        except (sp.PolynomialError, sp.CoercionFailed) as error:
            raise DefinitionError(
                f"{self.symbol}: not a polynomial with rational coefficients ({error})"
            ) from None
        lo, hi = self.lower, self.upper
        if not (lo.is_Rational and hi.is_Rational and lo < hi):
            raise DefinitionError(f"{self.symbol}: the bounds must be rationals lower < upper")
        if poly.is_zero:
            raise DefinitionError(f"{self.symbol}: the zero polynomial has no isolated root")
        if poly.eval(lo) == 0 or poly.eval(hi) == 0:
            raise DefinitionError(f"{self.symbol}: an end of ({lo}, {hi}) is itself a root")
        found = poly.count_roots(lo, hi)
        if found != 1:
            raise DefinitionError(f"{self.symbol}: ({lo}, {hi}) holds {found} roots, not 1")


Definition: TypeAlias = SumOver | Let | RealRoot
"""A definition a claim may declare."""

DEFINITION_KINDS: tuple[type, ...] = (SumOver, Let, RealRoot)


def _body(definition: Definition) -> list[sp.Basic]:
    """The expressions a definition is made of (what it may refer to)."""
    if isinstance(definition, SumOver):
        family = definition.family
        return [definition.term, family.count, *family.domain]
    if isinstance(definition, Let):
        return [definition.expression]
    return [definition.polynomial.xreplace({definition.var: definition.symbol})]


def _own_symbols(definition: Definition) -> set[sp.Basic]:
    """The free symbols a definition's body mentions, but for those it binds itself."""
    symbols: set[sp.Basic] = set(sp.Tuple(*_body(definition)).free_symbols)
    if isinstance(definition, SumOver):
        symbols -= set(definition.family.index)
        symbols.discard(definition.var)
    if isinstance(definition, RealRoot):
        symbols.discard(definition.symbol)
    return symbols


def _mentions(exprs: Sequence[sp.Basic], key: sp.Basic) -> bool:
    for expr in exprs:
        if isinstance(key, sp.Symbol):
            if key in expr.free_symbols:
                return True
        elif any(type(f) is key for f in expr.atoms(AppliedUndef)):
            return True
    return False


def _keys_in(expr: sp.Basic, keys: Iterable[sp.Basic]) -> list[sp.Basic]:
    return [key for key in keys if _mentions([expr], key)]


class Definitions:
    """A claim's definitions, checked: families, sums, abbreviations and roots.

    Raises
    ------
    DefinitionError
        For a definition that is not a kernel definition, a symbol defined twice or used
        before its definition, a circular definition, an index symbol that is not fresh,
        or an expression outside the kernel's language.
    """

    def __init__(self, definitions: Sequence[object]) -> None:
        self.items: tuple[Definition, ...] = ()
        self.families: dict[str, Family] = {}
        self.by_key: dict[sp.Basic, Definition] = {}
        items: list[Definition] = []
        for position, definition in enumerate(definitions):
            if type(definition) not in DEFINITION_KINDS:
                raise DefinitionError(
                    f"definition {position + 1} is a {type(definition).__name__}, not a "
                    "kernel definition (SumOver, Let, RealRoot)"
                )
            items.append(definition)  # type: ignore[arg-type]
        keys = [d.key for d in items]
        for definition in items:
            self._check_symbol(definition)
            if definition.key in self.by_key:
                raise DefinitionError(f"{_name(definition.key)} is defined twice")
            self.by_key[definition.key] = definition
        for position, definition in enumerate(items):
            body = _body(definition)
            for expr in body:
                try:
                    validate(expr, f"the definition of {_name(definition.key)}")
                except ExpressionError as error:
                    raise DefinitionError(str(error)) from None
            # a root's own symbol is its value in the polynomial: only the polynomial counts
            own = [definition.polynomial] if isinstance(definition, RealRoot) else body
            if _mentions(own, definition.key):
                raise DefinitionError(f"{_name(definition.key)} is defined in terms of itself")
            later = [k for k in keys[position + 1 :] if _mentions(body, k)]
            if later:
                raise DefinitionError(
                    f"the definition of {_name(definition.key)} uses "
                    f"{', '.join(_name(k) for k in later)}, defined after it"
                )
            if isinstance(definition, SumOver):
                self._add_family(definition.family, keys)
            if isinstance(definition, RealRoot):
                definition.isolate()
        self.items = tuple(items)
        self._check_index_freshness()

    @staticmethod
    def _check_symbol(definition: Definition) -> None:
        symbol = definition.symbol
        if isinstance(definition, SumOver) and type(definition.family) is not Family:
            raise DefinitionError(
                f"the sum {sp.sstr(symbol)} ranges over {definition.family!r}, not a Family"
            )
        if isinstance(definition, SumOver) and isinstance(symbol, AppliedUndef):
            var = definition.var
            if var is None or not is_real_symbol(var):
                raise DefinitionError(
                    f"the sum {symbol} must be named by a real function of one real symbol"
                )
            try:
                validate(symbol, "a sum's name")
            except ExpressionError as error:
                raise DefinitionError(str(error)) from None
            family = definition.family
            if var in family.index:
                raise DefinitionError(f"{var}, the variable of {symbol}, is a summation index")
            if var in sp.Tuple(family.count, *family.domain).free_symbols:
                raise DefinitionError(
                    f"the family of {symbol} depends on {var}: the same members must be "
                    f"summed at every {var}"
                )
            return
        if not isinstance(symbol, sp.Symbol):
            raise DefinitionError(
                f"a definition must name a fresh Symbol, not {sp.sstr(symbol)} "
                f"({type(symbol).__name__})"
            )
        problem = symbol_problem(symbol)
        if problem:
            raise DefinitionError(f"a defined symbol: {problem}")

    def _add_family(self, family: Family, keys: list[sp.Basic]) -> None:
        if type(family) is not Family:
            raise DefinitionError(f"{family!r} is not a kernel Family")
        known = self.families.get(family.name)
        if known is not None:
            if known != family:
                raise DefinitionError(f"two different families are named {family.name!r}")
            return
        if not family.index:
            raise DefinitionError(f"the family {family.name!r} has no index symbols")
        if len(set(family.index)) != len(family.index):
            raise DefinitionError(f"the family {family.name!r} repeats an index symbol")
        for symbol in family.index:
            problem = symbol_problem(symbol) if isinstance(symbol, sp.Basic) else "not sympy"
            if problem:
                raise DefinitionError(f"an index symbol of {family.name!r}: {problem}")
            if symbol in keys:
                raise DefinitionError(f"{symbol} is both a summation index and defined")
        if family.count.free_symbols & set(family.index):
            raise DefinitionError(f"the count of {family.name!r} depends on its index")
        for relation in family.domain:
            relational = isinstance(relation, sp.Basic) and relation.is_Relational is True
            if not relational and not isinstance(relation, (sp.And, sp.Or, sp.Not)):
                raise DefinitionError(f"the domain of {family.name!r} must be relations")
        self.families[family.name] = family

    @property
    def index_symbols(self) -> dict[sp.Symbol, list[Family]]:
        """Each index symbol and the families it indexes."""
        found: dict[sp.Symbol, list[Family]] = {}
        for family in self.families.values():
            for symbol in family.index:
                found.setdefault(symbol, []).append(family)
        return found

    def _check_index_freshness(self) -> None:
        """Index symbols appear only in their own families' sums."""
        index = self.index_symbols
        for definition in self.items:
            var = definition.var if isinstance(definition, SumOver) else None
            if var is not None and var in index:
                raise DefinitionError(f"{var}, the variable of {definition.symbol}, is an index")
            own = set(definition.family.index) if isinstance(definition, SumOver) else set()
            for expr in _body(definition):
                stray = (expr.free_symbols & set(index)) - own
                if stray:
                    raise DefinitionError(
                        f"the definition of {_name(definition.key)} uses "
                        f"{', '.join(sorted(map(str, stray)))}, the index of another family"
                    )

    def stray_index(
        self, exprs: Iterable[sp.Basic], allowed: Iterable[sp.Symbol] = ()
    ) -> list[str]:
        """The index symbols (other than ``allowed``) that occur in ``exprs``."""
        index = set(self.index_symbols) - set(allowed)
        found: set[sp.Symbol] = set()
        for expr in exprs:
            found |= expr.free_symbols & index
        return sorted(map(str, found))

    def facts(self) -> list[sp.Basic]:
        """What the abbreviations and roots state: their defining equations."""
        found: list[sp.Basic] = []
        for definition in self.items:
            if isinstance(definition, Let):
                found.append(definition.equation)
            elif isinstance(definition, RealRoot):
                found += definition.facts()
        return found

    def resolve(self, total: object, what: str) -> SumOver | SumAt:
        """``total`` if it is one of these sums (or a value of one), else an error."""
        if type(total) is SumAt:
            if type(total.total) is not SumOver or total.total.var is None:
                raise DefinitionError(f"{what}: .at() names a value of a function-valued sum")
            definition: object = total.total
        elif type(total) is SumOver:
            definition = total
        else:
            raise DefinitionError(f"{what}: {total!r} is not a SumOver")
        key = definition.key  # type: ignore[attr-defined]
        if self.by_key.get(key) != definition:
            raise DefinitionError(
                f"{what}: the sum {_name(key)} is not among the claim's definitions "
                "(declare it in the claim's definitions, once)"
            )
        return total

    @property
    def defined_symbols(self) -> set[sp.Basic]:
        """The symbols (and function classes) defined here."""
        return set(self.by_key)

    def mentioned(self, exprs: Sequence[sp.Basic]) -> list[Definition]:
        """The definitions whose symbols occur in ``exprs``, with what they depend on."""
        wanted: list[Definition] = []
        pending = [d for d in self.items if _mentions(exprs, d.key)]
        while pending:
            definition = pending.pop()
            if definition in wanted:
                continue
            wanted.append(definition)
            pending += [d for d in self.items if _mentions(_body(definition), d.key)]
        return [d for d in self.items if d in wanted]

    def depending_on(self, exprs: Sequence[sp.Basic], var: sp.Symbol) -> list[str]:
        """The defined symbols in ``exprs`` whose definitions mention ``var``.

        Directly or through the definitions they use; a sum's own index and a
        function-valued sum's own variable (``A(var)`` shows that one) do not count.
        A binder in ``var`` (a limit, a derivative) would otherwise hold such a symbol
        fixed while its definition varies with ``var``.
        """
        found = []
        for definition in self.items:
            if not _mentions(exprs, definition.key):
                continue
            if any(var in _own_symbols(d) for d in self.mentioned([definition.symbol])):
                found.append(_name(definition.key))
        return found

    @classmethod
    def collect(cls, values: Iterable[object]) -> Definitions:
        """The definitions named by step inputs, for checking a step on its own."""
        found: list[object] = []

        def visit(value: object) -> None:
            if type(value) is SumAt:
                value = value.total
            if type(value) in DEFINITION_KINDS:
                if value not in found:
                    found.append(value)
            elif isinstance(value, (tuple, list)):
                for item in value:
                    visit(item)

        for value in values:
            visit(value)
        return cls(found)


def _name(key: sp.Basic) -> str:
    return key.__name__ if isinstance(key, type) else sp.sstr(key)


def name_of(definition: Definition) -> str:
    """The defined symbol's name, as the kernel's messages print it."""
    return _name(definition.key)
