"""Definitions: the named objects a claim introduces, checked and recorded with it.

A claim's statement may speak of things that are not free parameters: the sum ``S`` of
the other ``n − 1`` exponentials, the entropy ``H``, a root of a polynomial.  Each is a
*definition*, declared in the claim's ``definitions`` and checked by the kernel before
any step runs:

:class:`Family`
    A finite family of terms: ``count`` values of the ``index`` symbols, each satisfying
    the ``domain``.  The index symbols are bound: they stand for a generic member and may
    appear only inside the family's sums and their termwise sub-proofs.  A claim holds
    for every family of the declared size and domain.  The domain must be shown
    non-empty wherever the assumptions hold: by ``member``, values of the index symbols
    in the free symbols that the kernel proves inside the domain, or by a member the
    kernel finds from the domain's bounds.
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

These classes are how a claim author writes definitions (sympy objects).  The kernel
reads each one into its frozen form (:class:`FamilyDef`, :class:`SumDef`,
:class:`LetDef`, :class:`RootDef`, of terms) and checks those (:class:`Definitions`):
every defined symbol is a plain real symbol (or a real function of one real variable)
defined once, before it is used, never inside its own definition; index symbols are
distinct from every defined symbol and appear nowhere else in the claim; definitions
refer only to free symbols, their own family's index and earlier definitions.  So each
definition is conservative: every value of the free symbols and every family extends to
exactly one value of each defined symbol, and a non-empty domain keeps the sums'
rules from speaking of members that cannot exist.

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

from softmax_dispersion.theory import terms
from softmax_dispersion.theory.terms import Term

__all__ = [
    "Definition",
    "DefinitionError",
    "Definitions",
    "Family",
    "FamilyDef",
    "Let",
    "LetDef",
    "RealRoot",
    "RootDef",
    "SumAt",
    "SumDef",
    "SumOver",
    "own_names",
]


class DefinitionError(ValueError):
    """A definition that is malformed, circular, repeated or not fresh."""


def _sympy(value: object) -> object:
    """An authored value as sympy: ints become integers; text is refused, never parsed."""
    if isinstance(value, str):
        raise TypeError("give a sympy expression, not text (text is never parsed)")
    if type(value) is int:
        return sp.Integer(value)
    return value


def _tuple(values: Iterable[object]) -> tuple[object, ...]:
    if isinstance(values, str):
        raise TypeError("give sympy expressions, not text")
    return tuple(_sympy(v) for v in values)


def _set(instance: object, name: str, value: object) -> None:
    object.__setattr__(instance, name, value)


# --------------------------------------------------------------------------------------
# Definitions as their authors write them (sympy)


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
    member
        Optional: values of the index symbols (expressions in the free symbols) that
        satisfy the domain wherever the claim's assumptions hold, which shows the domain
        non-empty.  Without it the kernel tries the domain's own bounds.
    """

    name: str
    index: tuple[sp.Symbol, ...]
    count: sp.Expr
    domain: tuple[sp.Basic, ...] = ()
    description: str = field(default="", compare=False)
    member: tuple[sp.Expr, ...] | None = None

    def __post_init__(self) -> None:
        _set(self, "index", _tuple(self.index))
        _set(self, "count", _sympy(self.count))
        _set(self, "domain", _tuple(self.domain))
        if self.member is not None:
            _set(self, "member", _tuple(self.member))


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
        _set(self, "symbol", _sympy(self.symbol))
        _set(self, "term", _sympy(self.term))

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
        return SumAt(self, _sympy(value))

    @property
    def expression(self) -> sp.Expr:
        """The defining sum for display, ``Sum(term, (j, 1, count))``.

        ``j`` is an integer counter named after the first index symbol's subscript
        (``e_j`` gives ``j``); the index symbols stand for the ``j``-th member.
        """
        name = self.family.index[0].name
        counter = name.rsplit("_", 1)[1] if "_" in name else "i"
        # never a name the sum already holds (red team 11: a count j shown as the
        # counter j, Σ_{j=1}^{j} j·e_j, read as a sum of 1..j)
        held = self.term.free_symbols | getattr(self.family.count, "free_symbols", set())
        taken = {str(s) for s in held}
        for candidate in (counter or "i", "i", "k", "m", "r"):
            if candidate not in taken:
                break
        else:
            candidate = next(f"i{k}" for k in range(1, 10**6) if f"i{k}" not in taken)
        j = sp.Symbol(candidate, integer=True, positive=True)
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
        """``A(value)`` (for display)."""
        var = self.total.var
        assert var is not None
        return self.total.symbol.xreplace({var: self.value})

    @property
    def term(self) -> sp.Expr:
        """The term at ``value`` (for display)."""
        var = self.total.var
        assert var is not None
        return self.total.term.xreplace({var: self.value})

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
        _set(self, "symbol", _sympy(self.symbol))
        _set(self, "expression", _sympy(self.expression))

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
        _set(self, "symbol", _sympy(self.symbol))
        _set(self, "polynomial", _sympy(self.polynomial))
        _set(self, "var", _sympy(self.var))
        _set(self, "lower", _sympy(self.lower))
        _set(self, "upper", _sympy(self.upper))

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


Definition: TypeAlias = SumOver | Let | RealRoot
"""A definition a claim may declare."""

DEFINITION_KINDS: tuple[type, ...] = (SumOver, Let, RealRoot)


# --------------------------------------------------------------------------------------
# Definitions as the kernel holds them (terms)


@dataclass(frozen=True)
class FamilyDef:
    """A family as the kernel holds it: index names, count, domain (and a member)."""

    name: str
    index: tuple[str, ...]
    count: Term
    domain: tuple[Term, ...]
    member: tuple[Term, ...] | None = None
    description: str = field(default="", compare=False)

    def bound(self) -> tuple[Term, ...]:
        """The count and the domain: what the family's shape is made of."""
        return (self.count, *self.domain)


@dataclass(frozen=True)
class SumDef:
    """``name := Σ term`` over the family named ``family`` (``name(var)`` if ``var``)."""

    name: str
    var: str | None
    term: Term
    family: FamilyDef
    description: str = field(default="", compare=False)

    @property
    def symbol(self) -> Term:
        """The sum as a term: ``S``, or ``A(var)``."""
        return (
            terms.sym(self.name) if self.var is None else terms.app(self.name, terms.sym(self.var))
        )

    def at(self, value: Term) -> Term:
        """``A(value)``."""
        return terms.app(self.name, value)

    def term_at(self, value: Term) -> Term:
        """The term at ``var = value`` (the kernel's substitution, nothing evaluated)."""
        assert self.var is not None
        return terms.substitute(self.term, {self.var: value})

    def body(self) -> list[Term]:
        """What the definition is made of."""
        return [self.term, *self.family.bound()]


@dataclass(frozen=True)
class LetDef:
    """``name := expression``."""

    name: str
    expression: Term
    description: str = field(default="", compare=False)

    @property
    def symbol(self) -> Term:
        """The defined symbol as a term."""
        return terms.sym(self.name)

    def body(self) -> list[Term]:
        """What the definition is made of."""
        return [self.expression]


@dataclass(frozen=True)
class RootDef:
    """``name :=`` the one real root of ``polynomial`` (in ``var``) in ``(lower, upper)``."""

    name: str
    polynomial: Term
    var: str
    lower: Term
    upper: Term
    description: str = field(default="", compare=False)

    @property
    def symbol(self) -> Term:
        """The defined symbol as a term."""
        return terms.sym(self.name)

    def body(self) -> list[Term]:
        """What the definition is made of: the polynomial at the root."""
        return [terms.substitute(self.polynomial, {self.var: self.symbol})]

    def facts(self) -> list[Term]:
        """``P(symbol) = 0``, ``lower < symbol`` and ``symbol < upper``."""
        return [
            terms.rel("eq", self.body()[0], terms.ZERO),
            terms.rel("lt", self.lower, self.symbol),
            terms.rel("lt", self.symbol, self.upper),
        ]


FrozenDefinition: TypeAlias = SumDef | LetDef | RootDef


def own_names(definition: FrozenDefinition) -> set[str]:
    """The free names a definition's body mentions, but for those it binds itself."""
    names: set[str] = set()
    for expr in definition.body():
        names |= terms.free_names(expr)
    if isinstance(definition, SumDef):
        names -= set(definition.family.index)
        if definition.var is not None:
            names.discard(definition.var)
    if isinstance(definition, RootDef):
        names.discard(definition.name)
    return names


def _mentions(exprs: Iterable[Term], definition: FrozenDefinition) -> bool:
    """``exprs`` speak of ``definition`` (its symbol, or its function)."""
    if isinstance(definition, SumDef) and definition.var is not None:
        return any(definition.name in terms.free_functions(e) for e in exprs)
    return any(definition.name in terms.free_names(e) for e in exprs)


class Definitions:
    """A claim's definitions, checked: families, sums, abbreviations and roots.

    ``decide=False`` reads them for printing only (a certificate's readable fields): the
    structure is checked, no root is isolated, and :meth:`facts` states nothing, so
    that generating readable text never repeats a decision's work.

    Raises
    ------
    DefinitionError
        For a symbol defined twice or used before its definition, a circular definition,
        an index symbol that is not fresh, a root not isolated, a family of two shapes.
    """

    def __init__(self, definitions: Sequence[FrozenDefinition], *, decide: bool = True) -> None:
        self.items: tuple[FrozenDefinition, ...] = tuple(definitions)
        self.decided = decide
        self.families: dict[str, FamilyDef] = {}
        self.by_name: dict[str, FrozenDefinition] = {}
        for definition in self.items:
            if definition.name in self.by_name:
                raise DefinitionError(f"{definition.name} is defined twice")
            self.by_name[definition.name] = definition
        symbols = {d.name for d in self.items if not (isinstance(d, SumDef) and d.var)}
        functions = {d.name for d in self.items if isinstance(d, SumDef) and d.var}
        for position, definition in enumerate(self.items):
            body = definition.body()
            own = [definition.polynomial] if isinstance(definition, RootDef) else body
            if _mentions(own, definition):
                raise DefinitionError(f"{definition.name} is defined in terms of itself")
            later = [d.name for d in self.items[position + 1 :] if _mentions(body, d)]
            if later:
                raise DefinitionError(
                    f"the definition of {definition.name} uses {', '.join(later)}, defined after it"
                )
            if isinstance(definition, SumDef):
                self._check_sum(definition, symbols | functions)
            if isinstance(definition, RootDef) and decide:
                isolate(definition)
        self._check_index_freshness()

    def _check_sum(self, definition: SumDef, defined: set[str]) -> None:
        family = definition.family
        var = definition.var
        if var is not None:
            if var in family.index:
                raise DefinitionError(
                    f"{var}, the variable of {definition.name}({var}), is a summation index"
                )
            if any(var in terms.free_names(e) for e in family.bound()):
                raise DefinitionError(
                    f"the family of {definition.name}({var}) depends on {var}: the same "
                    f"members must be summed at every {var}"
                )
        known = self.families.get(family.name)
        if known is not None:
            if known != family:
                raise DefinitionError(f"two different families are named {family.name!r}")
            return
        if not family.index:
            raise DefinitionError(f"the family {family.name!r} has no index symbols")
        if len(set(family.index)) != len(family.index):
            raise DefinitionError(f"the family {family.name!r} repeats an index symbol")
        for name in family.index:
            if name in defined:
                raise DefinitionError(f"{name} is both a summation index and defined")
        if terms.free_names(family.count) & set(family.index):
            raise DefinitionError(f"the count of {family.name!r} depends on its index")
        if family.member is not None:
            if len(family.member) != len(family.index):
                raise DefinitionError(
                    f"the member of {family.name!r} gives {len(family.member)} values for "
                    f"{len(family.index)} index symbols"
                )
            for value in family.member:
                if terms.free_names(value) & set(family.index):
                    raise DefinitionError(
                        f"the member of {family.name!r} must not mention its own index"
                    )
        self.families[family.name] = family

    @property
    def index_symbols(self) -> dict[str, list[FamilyDef]]:
        """Each index name and the families it indexes."""
        found: dict[str, list[FamilyDef]] = {}
        for family in self.families.values():
            for name in family.index:
                found.setdefault(name, []).append(family)
        return found

    def _check_index_freshness(self) -> None:
        """Index symbols appear only in their own families' sums."""
        index = self.index_symbols
        for definition in self.items:
            var = definition.var if isinstance(definition, SumDef) else None
            if var is not None and var in index:
                raise DefinitionError(
                    f"{var}, the variable of {definition.name}({var}), is an index"
                )
            own = set(definition.family.index) if isinstance(definition, SumDef) else set()
            for expr in definition.body():
                stray = (terms.free_names(expr) & set(index)) - own
                if stray:
                    raise DefinitionError(
                        f"the definition of {definition.name} uses "
                        f"{', '.join(sorted(stray))}, the index of another family"
                    )
            if isinstance(definition, SumDef) and definition.family.member is not None:
                for value in definition.family.member:
                    stray = terms.free_names(value) & set(index)
                    if stray:
                        raise DefinitionError(
                            f"the member of {definition.family.name!r} uses the index "
                            f"{', '.join(sorted(stray))}"
                        )

    def stray_index(self, exprs: Iterable[Term], allowed: Iterable[str] = ()) -> list[str]:
        """The index names (other than ``allowed``) that occur in ``exprs``."""
        index = set(self.index_symbols) - set(allowed)
        found: set[str] = set()
        for expr in exprs:
            found |= terms.free_names(expr) & index
        return sorted(found)

    def facts(self) -> list[Term]:
        """What the abbreviations and roots state: their defining equations.

        Only definitions whose roots were isolated (``decide=True``) state facts: those
        read only to print a claim (``decide=False``) decide nothing and state nothing.
        """
        if not self.decided:
            raise DefinitionError("definitions read only to be printed state no facts")
        found: list[Term] = []
        for definition in self.items:
            if isinstance(definition, LetDef):
                found.append(terms.rel("eq", definition.symbol, definition.expression))
            elif isinstance(definition, RootDef):
                found += definition.facts()
        return found

    def sum(self, name: str, what: str) -> SumDef:
        """The sum called ``name`` (or a :class:`DefinitionError` naming ``what``)."""
        definition = self.by_name.get(name)
        if not isinstance(definition, SumDef):
            raise DefinitionError(
                f"{what}: the sum {name} is not among the claim's definitions "
                "(declare it in the claim's definitions, once)"
            )
        return definition

    def root(self, name: str) -> RootDef:
        """The root called ``name``."""
        definition = self.by_name.get(name)
        if not isinstance(definition, RootDef):
            raise DefinitionError(f"{name} is not a RealRoot among the claim's definitions")
        return definition

    @property
    def defined_names(self) -> set[str]:
        """The names (symbols and functions) defined here."""
        return set(self.by_name)

    def mentioned(self, exprs: Sequence[Term]) -> list[FrozenDefinition]:
        """The definitions whose symbols occur in ``exprs``, with what they depend on."""
        wanted: list[FrozenDefinition] = []
        pending = [d for d in self.items if _mentions(exprs, d)]
        while pending:
            definition = pending.pop()
            if definition in wanted:
                continue
            wanted.append(definition)
            pending += [d for d in self.items if _mentions(definition.body(), d)]
        return [d for d in self.items if d in wanted]

    def names_behind(self, exprs: Sequence[Term], functions: bool = True) -> frozenset[str]:
        """The names ``exprs`` speak of: their own, and those the defined symbols among
        them are defined from (a ``Let``'s expression, a family's count and domain, a
        sum's term; not a sum's own index or variable).

        What a fact ties together (``y = 1`` with ``y := beta*theta`` ties beta to
        theta; a definition alone ties nothing, since it names a function of its inputs
        and says nothing of how they relate), and (without the names of ``functions``)
        what a binder holds fixed: a function applied to the binder's variable is not
        held at one value, and its derivative follows it by the chain rule.
        """
        names: set[str] = set()
        for expr in exprs:
            names |= terms.free_names(expr)
            if functions:
                names |= terms.free_functions(expr)
        for definition in self.mentioned(exprs):
            names |= own_names(definition)
        return frozenset(names)

    def depending_on(self, exprs: Sequence[Term], var: str) -> list[str]:
        """The defined symbols in ``exprs`` whose definitions mention ``var``.

        Directly or through the definitions they use; a sum's own index and a
        function-valued sum's own variable (``A(var)`` shows that one) do not count.
        A binder in ``var`` (a limit, a derivative) would otherwise hold such a symbol
        fixed while its definition varies with ``var``.
        """
        found = []
        for definition in self.items:
            if not _mentions(exprs, definition):
                continue
            if any(var in own_names(d) for d in self.mentioned([definition.symbol])):
                found.append(definition.name)
        return found


def root_polynomial(root: RootDef) -> sp.Poly:
    """The root's polynomial, read by the kernel as a polynomial term (or an error)."""
    from softmax_dispersion.theory._bridge import polynomial

    if terms.free_names(root.polynomial) - {root.var}:
        raise DefinitionError(f"{root.name}: the polynomial has parameters besides {root.var}")
    try:
        return polynomial(root.polynomial, root.var, f"the polynomial of {root.name}")
    except terms.TermError as error:
        raise DefinitionError(str(error)) from None


def isolate(root: RootDef) -> None:
    """Decide that exactly one root lies in ``(lower, upper)``, neither end a root."""
    lo, hi = terms.value_of(root.lower), terms.value_of(root.upper)
    if lo is None or hi is None or not lo < hi:
        raise DefinitionError(f"{root.name}: the bounds must be rationals lower < upper")
    poly = root_polynomial(root)  # never the zero polynomial: refused as it is read
    lo_q, hi_q = (
        sp.Rational(lo.numerator, lo.denominator),
        sp.Rational(hi.numerator, hi.denominator),
    )
    if poly.eval(lo_q) == 0 or poly.eval(hi_q) == 0:
        raise DefinitionError(f"{root.name}: an end of ({lo_q}, {hi_q}) is itself a root")
    found = poly.count_roots(lo_q, hi_q)
    if found != 1:
        raise DefinitionError(f"{root.name}: ({lo_q}, {hi_q}) holds {found} roots, not 1")


def name_of(definition: FrozenDefinition) -> str:
    """The defined symbol's name, as the kernel's messages print it."""
    return definition.name
