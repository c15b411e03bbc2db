"""The kernel's own terms: a closed, immutable grammar that never evaluates itself.

Every expression that enters the kernel (a statement, an assumption, a definition, a
step's input, a witness value, a certificate's expression) is converted into a
:class:`Term` at the boundary (:mod:`~softmax_dispersion.theory._expressions` for sympy,
:mod:`~softmax_dispersion.theory._serial` for certificates).  From then on the kernel
holds only terms: a term is a tuple (immutable all the way down), it has no methods a
claim author can reach, and building one computes nothing.  Substitution
(:func:`substitute`), instantiation of a bound variable and differentiation
(:func:`derivative`) are the kernel's own functions on terms; sympy only ever sees a
term inside a decider (:mod:`~softmax_dispersion.theory._bridge`), which returns a
verdict, never a new fact.

The grammar (``op`` and payload; ``e`` a real term, ``f`` a formula)::

    sym(name)        num(p, q)        pi      E        bound(i)     inf(+1 | -1)
    add(e, e, ...)   mul(e, e, ...)   pow(e, e)        exp(e)       log(e)
    abs(e)           max(e, e, ...)   min(e, e, ...)   pw(e, f, e, f, ...)
    app(name, e, ...)                      an undefined real function applied
    lim(hint, body, point, dir)            lim_{x -> point} body, x bound (de Bruijn)
    der(hint, body, point)                 d/dx body at x = point, x bound
    eq ne lt le gt ge (e, e)    and or equiv (f, f, ...)    not(f)    implies(f, f)
    true   false

Bound variables are de Bruijn indices (``bound(0)`` is the innermost binder's
variable), so substituting a free name can never capture anything; ``hint`` is only the
name shown when the term is printed.  A limit is not a real number: it may appear only
as a side of ``eq`` whose other side is a real term or ``inf`` (a proposition about the
limit), never inside arithmetic; ``inf`` appears only there and as a limit's point.

The terms are read over the reals.  The partial operations are ``pow`` with a negative
integer exponent (``b**-k`` is ``(1/b)**k``, with ``1/0`` an unspecified real), ``log``
of a number that is not positive, a non-integer power of a base that is not positive (or
not non-negative, for a positive rational exponent) and a derivative that does not exist:
each stands for an unspecified real number, and a fact holds when it holds for every
choice of those numbers.  Every decider reads terms so; :func:`canonical` rewrites only
by laws that hold under that reading.

Examples
--------
>>> from softmax_dispersion.theory import terms
>>> x, n = terms.sym("x"), terms.sym("n")
>>> fraction = terms.mul(x, terms.power(x, -1))
>>> terms.show(fraction)  # never cancelled: 0 * (1/0) is 0, not 1
'x/x'
>>> terms.show(terms.substitute(fraction, {"x": terms.num(0)}))
'0/0'
>>> limit = terms.limit(terms.mul(n, terms.power(terms.add(n, terms.num(1)), -1)), "n")
>>> terms.show(terms.substitute(limit, {"n": terms.num(0)}))  # n is bound: untouched
'Limit(n/(n + 1), n, oo)'
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Any

__all__ = [
    "FORMULAS",
    "RELATIONS",
    "Term",
    "TermError",
    "abstract",
    "add",
    "app",
    "canonical",
    "conjuncts",
    "defined_form",
    "derivative",
    "derivative_at",
    "div",
    "domain_conditions",
    "exp",
    "expansion_degree",
    "free_functions",
    "free_names",
    "instantiate",
    "is_real",
    "limit",
    "log",
    "loose_levels",
    "mul",
    "neg",
    "num",
    "power",
    "rel",
    "replace",
    "show",
    "substitute",
    "sym",
]

MAX_INT_BITS = 4096
"""The largest numerator or denominator, in bits, a term may hold."""
MAX_EXPONENT = 1024
"""The largest integer exponent (in absolute value) of a power."""
MAX_WEIGHT = 1 << 20
"""The largest *weight* of a term: bits of its numbers and sizes of its nodes, each
power's base counted as often as its exponent says (what a decider would expand)."""
MAX_DEPTH = 200
"""The deepest nesting of a term."""

RELATIONS = ("eq", "ne", "lt", "le", "gt", "ge")
CONNECTIVES = ("and", "or", "not", "implies", "equiv")
FORMULAS = (*RELATIONS, *CONNECTIVES, "true", "false")
NUMBER_NAMES = frozenset(
    {
        *("pi", "E", "I", "oo", "zoo", "nan", "True", "False"),
        *("EulerGamma", "Catalan", "GoldenRatio", "TribonacciConstant"),
        # How the LaTeX printer writes E and I: a symbol named so would read as e or i.
        *("e", "i"),
    }
)
"""Names sympy's printers give a number (every constant sympy names, as ``str`` prints it,
and E's and I's LaTeX): a real symbol so named would read as that number, so that
``exp(pi*I) + 1 != 0``, true for a real ``I``, would read as denying Euler's identity."""
RESERVED_NAMES = frozenset(
    {
        *NUMBER_NAMES,
        *("exp", "log", "sqrt", "Abs", "Max", "Min", "Piecewise", "Limit", "Derivative"),
        *("Subs", "Eq", "Ne", "Implies", "Equivalent"),
    }
)
"""Names a symbol or function may not have: they would print as something else."""


class TermError(ValueError):
    """A term outside the grammar (refused where it would be built)."""


class Term(tuple):  # type: ignore[type-arg]
    """One node: ``(op, hash, *payload)``, immutable, compared structurally.

    The payload holds child terms, names (``str``) and integers.  Terms are built only by
    the functions of this module, which check the grammar; nothing is ever computed.
    """

    __slots__ = ()

    def __new__(cls, op: str, *payload: Any) -> Term:
        return tuple.__new__(cls, (op, hash((op, *payload)), *payload))

    def __hash__(self) -> int:
        return self[1]  # type: ignore[no-any-return]

    def __eq__(self, other: object) -> bool:
        return type(other) is Term and tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    @property
    def op(self) -> str:
        """The node's kind."""
        return self[0]  # type: ignore[no-any-return]

    @property
    def payload(self) -> tuple[Any, ...]:
        """Everything the node holds: children, names, integers."""
        return tuple(self[2:])

    @property
    def children(self) -> tuple[Term, ...]:
        """The child terms, in order."""
        return tuple(item for item in self[2:] if type(item) is Term)

    def __repr__(self) -> str:
        return f"Term({show(self)})"

    def __reduce__(self) -> Any:  # pickling rebuilds through the checked constructors
        return (_rebuild, (self.op, self.payload))


def _rebuild(op: str, payload: tuple[Any, ...]) -> Term:
    return make(op, payload)


# --------------------------------------------------------------------------------------
# Sorts and construction


def sort_of(term: Term) -> str:
    """``"r"`` a real term, ``"b"`` a formula, ``"l"`` a limit, ``"x"`` an infinity."""
    op = term[0]
    if op in FORMULAS:
        return "b"
    if op == "lim":
        return "l"
    if op == "inf":
        return "x"
    return "r"


def is_real(term: Term) -> bool:
    """``term`` denotes a real number (not a formula, a limit or an infinity)."""
    return sort_of(term) == "r"


def _need(condition: bool, message: str) -> None:
    if not condition:
        raise TermError(message)


def _reals(op: str, items: Sequence[object], least: int) -> None:
    _need(len(items) >= least, f"{op} takes at least {least} terms")
    for item in items:
        _need(type(item) is Term, f"{op} takes terms")
        kind = sort_of(item)  # type: ignore[arg-type]
        if kind == "l":
            raise TermError(
                f"{show(item)} is a limit, not a real number: a limit may only be equated to "  # type: ignore[arg-type]
                "its value, Eq(Limit(...), value), never used in arithmetic"
            )
        if kind == "x":
            raise TermError("oo is not a real number: it appears only as a limit's point or value")
        _need(kind == "r", f"{op} takes real terms, not a formula")


def _formulas(op: str, items: Sequence[object], least: int) -> None:
    _need(len(items) >= least, f"{op} takes at least {least} formulas")
    for item in items:
        _need(type(item) is Term and sort_of(item) == "b", f"{op} takes formulas")


def check_name(name: object, what: str) -> str:
    """``name`` as a symbol's or a function's name, or :class:`TermError` (see below)."""
    if type(name) is str and name in _GOOD_NAMES:
        return name
    checked = _check_name(name, what)
    if len(_GOOD_NAMES) < 100_000:
        _GOOD_NAMES.add(checked)
    return checked


_GOOD_NAMES: set[str] = set()


def _check_name(name: object, what: str) -> str:
    """``name`` as a symbol's or a function's name, or :class:`TermError`.

    A name is an ASCII identifier (a letter, then letters, digits and underscores), at
    most 64 characters, and not a reserved word (``pi``, ``E``, ``oo``, ``exp``, ...):
    two different names never print alike (no look-alike letters from other alphabets,
    no invisible or right-to-left characters), and no name reads as a constant, a
    function of the grammar, or a name the kernel makes for itself (those hold ``#``).
    """
    _need(type(name) is str, f"{what}: a name must be text")
    assert isinstance(name, str)
    _need(0 < len(name) <= 64, f"{what}: a name has 1 to 64 characters")
    _need(
        _IDENTIFIER.fullmatch(name) is not None,
        f"{what}: {name.encode('unicode_escape').decode('ascii')[:80]!r} is not an ASCII "
        "identifier (a letter, then letters, digits, underscores)",
    )
    _need(name not in RESERVED_NAMES, f"{what}: {name!r} is a reserved name")
    # sympy's LaTeX and unicode printers read a double underscore as a superscript:
    # x__2 would show as x², a power
    _need("__" not in name, f"{what}: {name!r} holds '__', which prints as a superscript")
    return name


_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


_SIMPLE = {"pi", "E", "true", "false"}


def make(op: str, payload: Sequence[Any]) -> Term:
    """The term ``op(payload)``, its grammar checked (the one place terms are made)."""
    items = tuple(payload)
    if op in _SIMPLE:
        _need(not items, f"{op} takes nothing")
    elif op == "sym":
        _need(len(items) == 1, "sym takes a name")
        check_name(items[0], "a symbol")
    elif op == "num":
        _need(len(items) == 2, "num takes p and q")
        p, q = items
        _need(type(p) is int and type(q) is int and q > 0, "num takes integers p, q > 0")
        _need(math.gcd(p, q) == 1, "num takes p/q in lowest terms")
        _need(
            p.bit_length() <= MAX_INT_BITS and q.bit_length() <= MAX_INT_BITS,
            f"a number beyond {MAX_INT_BITS} bits",
        )
    elif op == "bound":
        _need(len(items) == 1 and type(items[0]) is int and items[0] >= 0, "bound takes i >= 0")
    elif op == "inf":
        _need(len(items) == 1 and items[0] in (1, -1) and type(items[0]) is int, "inf takes ±1")
    elif op in ("add", "mul", "max", "min"):
        _reals(op, items, 2)
    elif op == "pow":
        _reals(op, items, 2)
        _need(len(items) == 2, "pow takes a base and an exponent")
        exponent = items[1]
        if exponent[0] == "num" and exponent[3] == 1:
            _need(abs(exponent[2]) <= MAX_EXPONENT, f"an integer exponent beyond {MAX_EXPONENT}")
    elif op in ("exp", "log", "abs"):
        _reals(op, items, 1)
        _need(len(items) == 1, f"{op} takes one term")
    elif op == "pw":
        _need(len(items) >= 2 and len(items) % 2 == 0, "pw takes (value, condition) pairs")
        _reals(op, items[0::2], 1)
        _formulas(op, items[1::2], 1)
    elif op == "app":
        _need(len(items) >= 2, "app takes a name and arguments")
        check_name(items[0], "a function")
        _reals(op, items[1:], 1)
    elif op == "lim":
        _need(len(items) == 4, "lim takes a hint, a body, a point and a direction")
        hint, body, point, direction = items
        check_name(hint, "a limit's variable")
        _reals(op, [body], 1)
        _need(type(point) is Term and sort_of(point) in ("r", "x"), "a limit's point")
        _need(direction in ("+", "-"), "a limit's direction is + or -")
    elif op == "der":
        _need(len(items) == 3, "der takes a hint, a body and a point")
        check_name(items[0], "a derivative's variable")
        _reals(op, items[1:], 2)
    elif op in RELATIONS:
        _need(len(items) == 2 and all(type(i) is Term for i in items), f"{op} takes two terms")
        sorts = tuple(sort_of(i) for i in items)
        if op == "eq" and "l" in sorts:
            _need(
                sorted(sorts) in (["l", "r"], ["l", "x"]),
                "a limit may only equal a real term or an infinity",
            )
        else:
            for item in items:
                _reals(op, [item], 1)
    elif op in ("and", "or", "equiv"):
        _formulas(op, items, 2)
    elif op == "not":
        _formulas(op, items, 1)
        _need(len(items) == 1, "not takes one formula")
    elif op == "implies":
        _formulas(op, items, 2)
        _need(len(items) == 2, "implies takes two formulas")
    else:
        raise TermError(f"{op!r} is not a node of the kernel's terms")
    term = Term(op, *items)
    _need(depth(term) <= MAX_DEPTH, f"a term nested deeper than {MAX_DEPTH}")
    return term


_DEPTHS: dict[Term, int] = {}


def depth(term: Term) -> int:
    """How deep ``term`` nests (a leaf is 1)."""
    found = _DEPTHS.get(term)
    if found is None:
        children = term.children
        found = 1 + max((_DEPTHS.get(c) or depth(c) for c in children), default=0)
        if len(_DEPTHS) > 500_000:
            _DEPTHS.clear()
        _DEPTHS[term] = found
    return found


def sym(name: str) -> Term:
    """The real variable called ``name``."""
    return make("sym", (name,))


def num(p: int | Fraction, q: int = 1) -> Term:
    """The rational ``p/q`` (in lowest terms)."""
    value = Fraction(p, q)
    return make("num", (value.numerator, value.denominator))


ZERO, ONE, MINUS_ONE = num(0), num(1), num(-1)
TRUE, FALSE = make("true", ()), make("false", ())
OO, MINUS_OO = make("inf", (1,)), make("inf", (-1,))
PI, E_CONSTANT = make("pi", ()), make("E", ())


def add(*terms: Term) -> Term:
    """``t1 + t2 + ...`` (one term is itself; none is 0)."""
    if not terms:
        return ZERO
    return terms[0] if len(terms) == 1 else make("add", terms)


def mul(*terms: Term) -> Term:
    """``t1 * t2 * ...`` (one term is itself; none is 1)."""
    if not terms:
        return ONE
    return terms[0] if len(terms) == 1 else make("mul", terms)


def power(base: Term, exponent: Term | int) -> Term:
    """``base ** exponent``."""
    return make("pow", (base, num(exponent) if isinstance(exponent, int) else exponent))


def exp(term: Term) -> Term:
    """``exp(term)``."""
    return make("exp", (term,))


def log(term: Term) -> Term:
    """``log(term)``."""
    return make("log", (term,))


def neg(term: Term) -> Term:
    """``-term``, as ``(-1) · term``."""
    return mul(MINUS_ONE, term)


def div(numerator: Term, denominator: Term) -> Term:
    """``numerator / denominator``, as ``numerator · denominator**-1``."""
    return mul(numerator, power(denominator, -1))


def app(name: str, *args: Term) -> Term:
    """The undefined real function ``name`` applied to ``args``."""
    return make("app", (name, *args))


def rel(op: str, lhs: Term, rhs: Term) -> Term:
    """The relation ``lhs op rhs`` (``op`` one of :data:`RELATIONS`)."""
    _need(op in RELATIONS, f"{op!r} is not a relation")
    return make(op, (lhs, rhs))


def conj(*formulas: Term) -> Term:
    """``f1 ∧ f2 ∧ ...`` (one is itself; none is true)."""
    if not formulas:
        return TRUE
    return formulas[0] if len(formulas) == 1 else make("and", formulas)


def conjuncts(formula: Term) -> list[Term]:
    """The parts of a conjunction (nested ones flattened), else ``[formula]``."""
    if formula[0] == "and":
        return [part for child in formula.children for part in conjuncts(child)]
    return [formula]


def limit(body: Term, var: str, point: Term = OO, direction: str = "-") -> Term:
    """``lim_{var -> point} body`` (``var`` bound in ``body``)."""
    return make("lim", (var, abstract(body, var), point, direction))


def derivative_at(body: Term, var: str, point: Term | None = None) -> Term:
    """``d/dvar body`` at ``var = point`` (``var`` itself when ``point`` is ``None``)."""
    return make("der", (var, abstract(body, var), sym(var) if point is None else point))


# --------------------------------------------------------------------------------------
# Traversal


def rebuild(term: Term, children: Sequence[Term]) -> Term:
    """``term`` with its child terms replaced, in order."""
    replaced = iter(children)
    payload = [next(replaced) if type(item) is Term else item for item in term[2:]]
    new = make(term[0], payload)
    return term if new == term else new


def walk(term: Term) -> Iterator[Term]:
    """Every distinct node of ``term``, parents before children (a node shared by several
    parents is visited once, so that a term of shared parts is walked in linear time)."""
    stack = [term]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        stack.extend(reversed(node.children))


_FREE: dict[Term, frozenset[str]] = {}
_FUNCTIONS: dict[Term, frozenset[str]] = {}


def free_names(term: Term) -> frozenset[str]:
    """The names of the free variables of ``term``."""
    found = _FREE.get(term)
    if found is None:
        if term[0] == "sym":
            found = frozenset((term[2],))
        else:
            found = frozenset().union(*(free_names(c) for c in term.children))
        if len(_FREE) > 500_000:
            _FREE.clear()
        _FREE[term] = found
    return found


def free_functions(term: Term) -> frozenset[str]:
    """The names of the functions applied in ``term``."""
    found = _FUNCTIONS.get(term)
    if found is None:
        own = {term[2]} if term[0] == "app" else set()
        found = frozenset(own).union(*(free_functions(c) for c in term.children))
        if len(_FUNCTIONS) > 500_000:
            _FUNCTIONS.clear()
        _FUNCTIONS[term] = found
    return found


def has_op(term: Term, *ops: str) -> bool:
    """Some node of ``term`` is one of ``ops``."""
    return any(node[0] in ops for node in walk(term))


def abstract(body: Term, name: str, level: int = 0) -> Term:
    """``body`` with the free variable ``name`` made the bound variable at ``level``."""
    if name not in free_names(body):
        return body
    if body[0] == "sym":
        return make("bound", (level,))
    inner = level + 1 if body[0] in ("lim", "der") else level
    children = []
    for position, child in enumerate(body[2:]):
        if type(child) is not Term:
            continue
        # a binder's point lies outside it; only its body is one level deeper
        binder_body = body[0] in ("lim", "der") and position == 1
        children.append(abstract(child, name, inner if binder_body else level))
    return rebuild(body, children)


_BOUND: dict[Term, bool] = {}


def has_bound(term: Term) -> bool:
    """``term`` mentions a bound variable anywhere, a closed binder's own included.

    Whether ``term`` needs a binder *around* it is :func:`is_closed`'s question: a
    derivative at a point mentions its own bound variable, yet it is a closed term.
    """
    found = _BOUND.get(term)
    if found is None:
        found = term[0] == "bound" or any(has_bound(c) for c in term.children)
        if len(_BOUND) > 500_000:
            _BOUND.clear()
        _BOUND[term] = found
    return found


_LOOSE: dict[Term, int] = {}


def loose_levels(term: Term) -> int:
    """How many binders ``term`` needs around it: one more than the largest index of a
    bound variable that no binder inside ``term`` binds (0 for a closed term)."""
    found = _LOOSE.get(term)
    if found is None:
        if term[0] == "bound":
            found = term[2] + 1
        elif not has_bound(term):
            found = 0
        else:
            found = 0
            for position, child in enumerate(term[2:]):
                if type(child) is not Term:
                    continue
                inner = loose_levels(child)
                # a binder's body sees one more binder: its own
                if term[0] in ("lim", "der") and position == 1:
                    inner = max(inner - 1, 0)
                found = max(found, inner)
        if len(_LOOSE) > 500_000:
            _LOOSE.clear()
        _LOOSE[term] = found
    return found


def instantiate(body: Term, value: Term, level: int = 0) -> Term:
    """``body`` with the bound variable at ``level`` replaced by the closed ``value``."""
    if body[0] == "bound":
        return value if body[2] == level else body
    if not has_bound(body):
        return body
    children = []
    for position, child in enumerate(body[2:]):
        if type(child) is not Term:
            continue
        binder_body = body[0] in ("lim", "der") and position == 1
        children.append(instantiate(child, value, level + 1 if binder_body else level))
    return rebuild(body, children)


def opened(binder: Term, name: str | None = None) -> tuple[str, Term]:
    """A binder's body with its variable a free name (fresh in the body): ``(name, body)``."""
    hint, body = binder[2], binder[3]
    chosen = fresh_name(name or hint, free_names(body))
    return chosen, instantiate(body, sym(chosen))


def fresh_name(base: str, taken: Iterable[str]) -> str:
    """``base``, or ``base`` with a number appended, not among ``taken``."""
    taken = set(taken)
    if base not in taken:
        return base
    for number in range(1, 10_000):
        candidate = f"{base}{number}"
        if candidate not in taken:
            return candidate
    raise TermError("no fresh name")


def substitute(term: Term, values: Mapping[str, Term]) -> Term:
    """``term`` with each free variable named in ``values`` replaced, nothing evaluated.

    Bound variables are indices, so nothing is ever captured; the values must be closed
    under binders (they are: a term built at the boundary has no loose bound variable).
    """
    wanted = {k: v for k, v in values.items() if k in free_names(term)}
    if not wanted:
        return term
    if term[0] == "sym":
        return wanted[term[2]]
    return rebuild(term, [substitute(child, wanted) for child in term.children])


def replace(term: Term, old: Term, new: Term) -> Term:
    """``term`` with every occurrence of the subterm ``old`` replaced by ``new``."""
    if term == old:
        return new
    if not term.children:
        return term
    return rebuild(term, [replace(child, old, new) for child in term.children])


def occurs_under_binder(term: Term, sub: Term) -> bool:
    """``sub`` occurs inside a limit or a derivative of ``term``."""
    return any(
        node[0] in ("lim", "der") and any(inner == sub for inner in walk(node))
        for node in walk(term)
    )


# --------------------------------------------------------------------------------------
# Size


_WEIGHTS: dict[Term, int] = {}


def weight(term: Term) -> int:
    """Bits of the numbers and count of the nodes, a power's base counted as often as
    its integer exponent says: a bound on what expanding ``term`` can cost."""
    found = _WEIGHTS.get(term)
    if found is None:
        op = term[0]
        if op == "num":
            found = 1 + term[2].bit_length() + term[3].bit_length()
        elif op == "pow" and term[3][0] == "num" and term[3][3] == 1:
            found = 1 + weight(term[2]) * max(1, abs(term[3][2]))
        else:
            found = 1 + sum(weight(c) for c in term.children)
        found = min(found, MAX_WEIGHT + 1)
        if len(_WEIGHTS) > 500_000:
            _WEIGHTS.clear()
        _WEIGHTS[term] = found
    return found


def is_closed(term: Term, level: int = 0) -> bool:
    """Every bound variable of ``term`` lies under a binder that binds it (``level``
    binders around ``term`` counted)."""
    return loose_levels(term) <= level


_CAP = 1 << 40


def _capped(value: int) -> int:
    return min(value, _CAP)


_MASSES: dict[Term, int] = {}


def _mass(term: Term) -> int:
    """A bound on the sum of the integer coefficients' sizes of ``term`` expanded: what
    ``exp(term)`` becomes as a product of powers ``t**k`` after ``t = exp(.)``."""
    found = _MASSES.get(term)
    if found is None:
        op = term[0]
        if op == "num":
            found = abs(term[2])
        elif op == "add":
            found = _capped(sum(_mass(c) for c in term.children))
        elif op == "mul":
            found = 1
            for child in term.children:
                found = _capped(found * _mass(child))
        elif op == "pow" and integer_exponent(term) is not None and term[3][2] >= 0:
            base = _mass(term[2])
            k = int(term[3][2])
            found = _CAP if base > 1 and k * base.bit_length() > 40 else _capped(base**k)
        else:
            found = 1
        if len(_MASSES) > 500_000:
            _MASSES.clear()
        _MASSES[term] = found
    return found


_DEGREES: dict[Term, tuple[int, int, int]] = {}
_ATOMS = ("app", "der", "lim", "abs", "max", "min", "pw", "log")


def _degree(term: Term) -> tuple[int, int, int]:
    """``(numerator, denominator, worst)``: bounds on the degrees of ``term`` brought to
    one fraction of polynomials in its atoms after ``t = exp(.)`` (what ``together``
    makes), and the largest such bound over its subterms."""
    found = _DEGREES.get(term)
    if found is None:
        op = term[0]
        kids = [_degree(c) for c in term.children]
        worst = max((k[2] for k in kids), default=0)
        top, bottom = 0, 0
        if op in ("sym", "bound", *_ATOMS):
            top = 1
        elif op == "add":  # a common denominator: the product of the denominators
            bottom = _capped(sum(k[1] for k in kids))
            top = max(_capped(k[0] + bottom - k[1]) for k in kids)
        elif op == "mul":
            top = _capped(sum(k[0] for k in kids))
            bottom = _capped(sum(k[1] for k in kids))
        elif op == "pow":
            value = value_of(term[3])
            if value is None:  # b**y is exp(y log b): t**k for k as large as y's coefficients
                top = bottom = max(1, _mass(term[3]))
            elif value.denominator != 1:  # an atom (its base is not expanded)
                top = 1
            else:
                k = abs(value.numerator)
                num_, den_ = (kids[0][0], kids[0][1]) if value > 0 else (kids[0][1], kids[0][0])
                top, bottom = _capped(k * num_), _capped(k * den_)
        elif op == "exp":  # t**k / s**l with k, l as large as the argument's coefficients
            top = bottom = max(1, _mass(term[2]))
        elif op not in ("num", "pi", "E", "true", "false", "inf"):
            top = max((k[0] for k in kids), default=0)  # relations: each side on its own
            bottom = max((k[1] for k in kids), default=0)
        found = (top, bottom, max(worst, top, bottom))
        if len(_DEGREES) > 500_000:
            _DEGREES.clear()
        _DEGREES[term] = found
    return found


def expansion_degree(term: Term) -> int:
    """A bound on the degree of every part of ``term`` brought to one fraction of
    polynomials in its atoms, as a decider does (``together`` and ``cancel``, a limit's
    leading terms): integer powers multiply the degree, products add it, a sum of
    fractions multiplies their denominators, and ``exp(a)`` becomes ``t**k`` with ``k``
    as large as ``a``'s integer coefficients.  The weight bounds what a term *holds*;
    this bounds what expanding it *makes*: ``(x + y + z)**1024`` weighs 7,169 and
    expands into 525,825 monomials of degree 1024.

    Examples
    --------
    >>> x, y = sym("x"), sym("y")
    >>> expansion_degree(power(add(x, y), 3))
    3
    >>> expansion_degree(exp(mul(num(1024), x)))  # t**1024 after t = exp(x)
    1024
    """
    return _degree(term)[2]


def check_size(term: Term, what: str) -> Term:
    """``term`` if its :func:`weight` is within :data:`MAX_WEIGHT`, else an error."""
    _need(
        weight(term) <= MAX_WEIGHT,
        f"{what}: too large to decide (weight beyond {MAX_WEIGHT}: powers of powers?)",
    )
    return term


# --------------------------------------------------------------------------------------
# Numbers


def value_of(term: Term) -> Fraction | None:
    """The rational a ``num`` term stands for (``None`` for any other term)."""
    if term[0] == "num":
        return Fraction(term[2], term[3])
    return None


def integer_exponent(term: Term) -> int | None:
    """``k`` if ``term`` is a power with the integer exponent ``k``, else ``None``."""
    if term[0] == "pow" and term[3][0] == "num" and term[3][3] == 1:
        return int(term[3][2])
    return None


def _fits(value: Fraction) -> bool:
    return (
        value.numerator.bit_length() <= MAX_INT_BITS
        and value.denominator.bit_length() <= MAX_INT_BITS
    )


# --------------------------------------------------------------------------------------
# The canonical form: a normal form for comparing terms, by sound laws only.

_CANONICAL: dict[Term, Term] = {}


def canonical(term: Term) -> Term:
    """A normal form of ``term`` (equal forms denote equal values).

    Rewrites only by laws that hold for every real value of every partial operation:
    associativity and commutativity (flattened, sorted), numbers folded (never a
    division by zero), ``0`` and ``1`` dropped, ``0 · t = 0``, like terms collected
    (``t + t = 2t``, ``t · t = t²``, never ``t · t⁻¹``), ``(t^a)^k = t^(ak)`` and
    ``(st)^k = s^k t^k`` for a positive integer ``k``, ``exp(0) = 1``, ``log(1) = 0``,
    ``log(exp(t)) = t``, relations oriented (``a > b`` as ``b < a``), conjunctions and
    disjunctions flattened and sorted, bound variables' print names erased.
    """
    found = _CANONICAL.get(term)
    if found is None:
        found = _canonical(term)
        if len(_CANONICAL) > 500_000:
            _CANONICAL.clear()
        _CANONICAL[term] = found
        _CANONICAL.setdefault(found, found)
    return found


_ORDER: dict[Term, tuple[Any, ...]] = {}


def order_key(term: Term) -> tuple[Any, ...]:
    """A total order on terms that does not depend on the process (hashes do)."""
    found = _ORDER.get(term)
    if found is None:
        found = (
            term[0],
            tuple((0, order_key(i)) if type(i) is Term else (1, i) for i in term[2:]),
        )
        if len(_ORDER) > 500_000:
            _ORDER.clear()
        _ORDER[term] = found
    return found


def _canonical(term: Term) -> Term:
    op = term[0]
    if not term.children:
        return term
    kids = [canonical(c) for c in term.children]
    if op == "add":
        return _canonical_sum(kids)
    if op == "mul":
        return _canonical_product(kids)
    if op == "pow":
        return _canonical_power(kids[0], kids[1])
    if op == "exp":
        return ONE if kids[0] == ZERO else make("exp", kids)
    if op == "log":
        if kids[0] == ONE:
            return ZERO
        if kids[0][0] == "exp":
            return kids[0][2]  # type: ignore[no-any-return]
        return make("log", kids)
    if op == "abs":
        value = value_of(kids[0])
        return num(abs(value)) if value is not None else make("abs", kids)
    if op in ("max", "min"):
        unique = sorted(set(kids), key=order_key)
        values = [value_of(k) for k in unique]
        if all(v is not None for v in values):
            numbers = [v for v in values if v is not None]
            return num(max(numbers) if op == "max" else min(numbers))
        return unique[0] if len(unique) == 1 else make(op, unique)
    if op in ("lim", "der"):
        # the bound variable's print name does not count; a derivative at a variable
        # keeps that variable's name, so that it still reads Derivative(A(t), t)
        payload = list(term[2:])
        point = kids[1]  # the canonical point: 1·t is the point t
        payload[0] = point[2] if op == "der" and point[0] == "sym" else "x"
        rebuilt = iter(kids)
        return make(op, [next(rebuilt) if type(i) is Term else i for i in payload])
    if op in RELATIONS:
        return _canonical_relation(op, kids[0], kids[1])
    if op in ("and", "or"):
        return _canonical_junction(op, kids)
    if op == "not":
        inner = kids[0]
        if inner == TRUE:
            return FALSE
        if inner == FALSE:
            return TRUE
        return inner[2] if inner[0] == "not" else make("not", kids)
    if op == "equiv":
        unique = sorted(set(kids), key=order_key)
        return TRUE if len(unique) == 1 else make("equiv", unique)
    return rebuild(term, kids)


def _split_coefficient(term: Term) -> tuple[Fraction, Term]:
    """``c · rest`` with ``c`` rational (``rest`` is 1 for a number)."""
    value = value_of(term)
    if value is not None:
        return value, ONE
    if term[0] == "mul":
        first = value_of(term[2])
        if first is not None:
            rest = term.children[1:]
            return first, rest[0] if len(rest) == 1 else make("mul", rest)
    return Fraction(1), term


def _with_coefficient(coefficient: Fraction, rest: Term) -> Term:
    if rest == ONE:
        return num(coefficient)
    if coefficient == 1:
        return rest
    factors = list(rest.children) if rest[0] == "mul" else [rest]
    return make("mul", [num(coefficient), *factors])


def _canonical_sum(kids: list[Term]) -> Term:
    flat: list[Term] = []
    for kid in kids:
        flat.extend(kid.children if kid[0] == "add" else (kid,))
    collected: dict[Term, Fraction] = {}
    for kid in flat:
        coefficient, rest = _split_coefficient(kid)
        collected[rest] = collected.get(rest, Fraction(0)) + coefficient
    if not all(_fits(c) for c in collected.values()):
        return make("add", sorted(flat, key=order_key))  # numbers too large to fold
    terms = [_with_coefficient(c, rest) for rest, c in collected.items() if c != 0]
    terms.sort(key=order_key)
    if not terms:
        return ZERO
    return terms[0] if len(terms) == 1 else make("add", terms)


def _canonical_product(kids: list[Term]) -> Term:
    flat: list[Term] = []
    for kid in kids:
        flat.extend(kid.children if kid[0] == "mul" else (kid,))
    coefficient = Fraction(1)
    powers: dict[tuple[Term, int], int] = {}  # (base, sign of exponent) -> exponent
    others: list[Term] = []
    for kid in flat:
        value = value_of(kid)
        if value is not None:
            coefficient *= value
            continue
        k = integer_exponent(kid)
        base, exponent = (kid[2], k) if k is not None else (kid, 1)
        key = (base, 1 if exponent > 0 else -1)
        total = powers.get(key, 0) + exponent
        if abs(total) > MAX_EXPONENT:
            others.append(kid)
            continue
        powers[key] = total
    if coefficient == 0:
        return ZERO
    if not _fits(coefficient):
        return make("mul", sorted(flat, key=order_key))  # numbers too large to fold
    factors = [b if e == 1 else make("pow", (b, num(e))) for (b, _), e in powers.items()]
    factors += others
    factors.sort(key=order_key)
    if len(factors) == 1 and coefficient != 1 and factors[0][0] == "add":
        # a number times a sum is distributed, as sympy writes it: 2(x + y) = 2x + 2y
        return _canonical_sum(
            [_canonical_product([num(coefficient), t]) for t in factors[0].children]
        )
    return _product(coefficient, factors)


def _product(coefficient: Fraction, factors: list[Term]) -> Term:
    items = ([num(coefficient)] if coefficient != 1 else []) + factors
    if not items:
        return ONE
    return items[0] if len(items) == 1 else make("mul", items)


def _canonical_power(base: Term, exponent: Term) -> Term:
    k = value_of(exponent)
    if k is None or k.denominator != 1:
        return make("pow", (base, exponent))
    k_int = int(k)
    if k_int == 0:
        return ONE
    if k_int == 1:
        return base
    value = value_of(base)
    if value is not None and (value != 0 or k_int > 0):
        bits = max(value.numerator.bit_length(), value.denominator.bit_length()) * abs(k_int)
        if bits <= MAX_INT_BITS:
            return num(value**k_int)
    if k_int > 0:
        inner = integer_exponent(base)
        if inner is not None and abs(inner * k_int) <= MAX_EXPONENT:
            return _canonical_power(base[2], num(inner * k_int))
        if base[0] == "mul":
            return _canonical_product([_canonical_power(f, exponent) for f in base.children])
    return make("pow", (base, exponent))


def defined_form(term: Term) -> Term:
    """The canonical form, rewritten further by laws that hold where every partial
    operation of ``term`` lies inside its domain.

    A rule calls this only on what it built from inputs whose side conditions it proved
    (the denominators non-zero, the logarithms' arguments positive, the fractional
    powers' bases non-negative): there ``x^a · x^b = x^(a+b)`` and ``(st)^k = s^k t^k``
    for every integer, ``(b^a)^k = b^(ak)``, and ``exp(c log x + r) = x^c exp(r)`` for
    an integer ``c``, as sympy would write them.  Each rewrite keeps every partial
    operation inside its domain, so the laws go on holding as it proceeds.
    """
    current = canonical(check_size(term, "what a rule builds"))
    for _ in range(6):
        rewritten = canonical(_rewrite_defined(current))
        if rewritten == current:
            break
        current = rewritten
    return current


def _rewrite_defined(term: Term) -> Term:
    if not term.children or term[0] in ("lim", "der"):
        return term
    term = rebuild(term, [_rewrite_defined(c) for c in term.children])
    op = term[0]
    if op == "mul":
        totals: dict[Term, int] = {}
        others: list[Term] = []
        for factor in term.children:
            k = integer_exponent(factor)
            if value_of(factor) is not None:
                others.append(factor)
                continue
            base, exponent = (factor[2], k) if k is not None else (factor, 1)
            totals[base] = totals.get(base, 0) + exponent
        factors = others + [
            b if e == 1 else make("pow", (b, num(e)))
            for b, e in totals.items()
            if e != 0 and abs(e) <= MAX_EXPONENT
        ]
        return mul(*factors)
    if op == "pow":
        k = integer_exponent(term)
        base = term[2]
        if k is None:
            return term
        if base[0] == "pow":
            inner = value_of(base[3])
            if inner is not None and abs(inner * k) <= MAX_EXPONENT:
                return make("pow", (base[2], num(inner * k)))
        if base[0] == "mul" and k < 0:
            return mul(*(make("pow", (f, num(k))) for f in base.children))
        return term
    if op == "exp":
        summands = list(term[2].children) if term[2][0] == "add" else [term[2]]
        pulled: list[Term] = []
        rest: list[Term] = []
        for summand in summands:
            coefficient, body = _split_coefficient(summand)
            if (
                body[0] == "log"
                and coefficient.denominator == 1
                and abs(coefficient) <= MAX_EXPONENT
            ):
                pulled.append(make("pow", (body[2], num(coefficient))))
            else:
                rest.append(summand)
        if not pulled:
            return term
        return mul(*pulled, exp(add(*rest))) if rest else mul(*pulled)
    return term


_FLIP = {"gt": "lt", "ge": "le"}


def _canonical_relation(op: str, lhs: Term, rhs: Term) -> Term:
    if op in _FLIP:
        op, lhs, rhs = _FLIP[op], rhs, lhs
    left, right = value_of(lhs), value_of(rhs)
    if left is not None and right is not None:
        verdicts = {
            "eq": left == right,
            "ne": left != right,
            "lt": left < right,
            "le": left <= right,
        }
        return TRUE if verdicts[op] else FALSE
    if op in ("eq", "ne") and order_key(rhs) < order_key(lhs):
        lhs, rhs = rhs, lhs
    return make(op, (lhs, rhs))


def _canonical_junction(op: str, kids: list[Term]) -> Term:
    unit, zero = (TRUE, FALSE) if op == "and" else (FALSE, TRUE)
    flat: list[Term] = []
    for kid in kids:
        flat.extend(kid.children if kid[0] == op else (kid,))
    if zero in flat:
        return zero
    unique = sorted({k for k in flat if k != unit}, key=order_key)
    if not unique:
        return unit
    return unique[0] if len(unique) == 1 else make(op, unique)


# --------------------------------------------------------------------------------------
# Differentiation: the kernel's own, on terms.


class NotDifferentiable(TermError):
    """A term outside the class the kernel differentiates."""


def derivative(term: Term, var: str) -> Term:
    """``d term / d var`` by the sum, product, power (integer exponents), exp, log and
    chain rules; an applied function of ``var`` alone gives its derivative as a term.

    Raises :class:`NotDifferentiable` for anything else (``Abs``, ``Max``, ``Min``,
    ``Piecewise``, a non-integer power, a derivative, a limit, a function applied to
    ``var`` among other arguments).  Where every denominator is non-zero and every
    logarithm's argument positive (the caller's side conditions), the result is the
    derivative.
    """
    return canonical(check_size(_derivative(term, var), "a derivative"))


def _derivative(term: Term, var: str) -> Term:
    op = term[0]
    if var not in free_names(term):
        return ZERO
    if op == "sym":
        return ONE
    if op == "add":
        return add(*(_derivative(c, var) for c in term.children))
    if op == "mul":
        factors = term.children
        parts = []
        for i, factor in enumerate(factors):
            slope = _derivative(factor, var)
            if slope != ZERO:
                parts.append(mul(*factors[:i], slope, *factors[i + 1 :]))
        return add(*parts)
    if op == "pow":
        k = integer_exponent(term)
        base = term[2]
        if k is None:
            raise NotDifferentiable(f"{show(term)} is not an integer power")
        lowered = ONE if k == 1 else make("pow", (base, num(k - 1)))
        return mul(num(k), lowered, _derivative(base, var))
    if op == "exp":
        return mul(term, _derivative(term[2], var))
    if op == "log":
        return mul(_derivative(term[2], var), make("pow", (term[2], MINUS_ONE)))
    if op == "app":
        if term.children == (sym(var),):
            return derivative_at(term, var)
        raise NotDifferentiable(f"{show(term)} is not a function of {var} alone")
    raise NotDifferentiable(f"{show(term)} is not known to be differentiable")


# --------------------------------------------------------------------------------------
# Side conditions of the partial operations.


def domain_conditions(*exprs: Term) -> list[tuple[Term, str]]:
    """What keeps every partial operation of ``exprs`` inside its domain, with a name.

    A negative integer power needs a non-zero base, a logarithm a positive argument, a
    positive rational power a non-negative base, any other non-integer power a positive
    base.  An operation that mentions a *loose* bound variable (one whose binder lies
    outside the operation: ``1/x`` in ``d/dx log(x)``) is the binder's concern, since
    the rule that introduced the binder decided it; every other operation is read, and a
    closed binder inside one (a derivative at a point, a limit) is an opaque argument
    like any other: ``1/D`` with ``D`` a derivative at a point needs ``D != 0``.
    """
    found: list[tuple[Term, str]] = []
    seen: set[Term] = set()

    def note(condition: Term, name: str) -> None:
        if condition not in seen:
            seen.add(condition)
            found.append((condition, name))

    for expr in exprs:
        for node in walk(expr):
            op = node[0]
            if loose_levels(node):
                continue
            if op == "pow":
                base, exponent = node[2], node[3]
                k = value_of(exponent)
                if k is not None and k.denominator == 1:
                    if k < 0:
                        note(rel("ne", base, ZERO), f"the denominator {show(base)} != 0")
                elif k is not None and k > 0:
                    note(rel("ge", base, ZERO), f"the base {show(base)} of {show(node)} >= 0")
                else:
                    note(rel("gt", base, ZERO), f"the base {show(base)} of {show(node)} > 0")
            elif op == "log":
                note(rel("gt", node[2], ZERO), f"the argument of {show(node)} > 0")
    return found


# --------------------------------------------------------------------------------------
# Printing: the kernel's own, so that what is read comes from the term itself.

_INFIX = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_PREC_ADD, _PREC_MUL, _PREC_POW, _PREC_ATOM = 10, 20, 30, 40


def show(term: Term) -> str:
    """The term as text, in sympy's ``sstr`` style (``Eq(x, 1)``, ``x**2/(x + 1)``)."""
    return _show(term, ())


def _bound_name(names: tuple[str, ...], index: int) -> str:
    return names[len(names) - 1 - index] if index < len(names) else f"bound{index}"


def _paren(text: str, inner: int, outer: int) -> str:
    return f"({text})" if inner < outer else text


def _precedence(term: Term) -> int:
    op = term[0]
    if op == "add":
        return _PREC_ADD
    if op == "mul":
        return _PREC_MUL
    if op == "pow":
        k = value_of(term[3])
        if k is not None and (k == Fraction(1, 2) or k == Fraction(-1, 2)):
            return _PREC_ATOM if k > 0 else _PREC_MUL
        if k is not None and k.denominator == 1 and k < 0:
            return _PREC_MUL
        return _PREC_POW
    if op == "num":
        if term[3] != 1:
            return _PREC_MUL
        return _PREC_ADD if term[2] < 0 else _PREC_ATOM
    return _PREC_ATOM


def _show(term: Term, names: tuple[str, ...]) -> str:
    op = term[0]
    if op == "sym":
        return term[2]  # type: ignore[no-any-return]
    if op == "num":
        return str(term[2]) if term[3] == 1 else f"{term[2]}/{term[3]}"
    if op == "bound":
        return _bound_name(names, term[2])
    if op in ("pi", "E"):
        return str(op)
    if op == "inf":
        return "oo" if term[2] > 0 else "-oo"
    if op in ("true", "false"):
        return str(op).capitalize()
    if op == "add":
        return _show_sum(term, names)
    if op == "mul":
        return _show_product(term.children, names)
    if op == "pow":
        return _show_power(term, names)
    if op in ("exp", "log"):
        return f"{op}({_show(term[2], names)})"
    if op == "abs":
        return f"Abs({_show(term[2], names)})"
    if op in ("max", "min"):
        return f"{op.capitalize()}({', '.join(_show(c, names) for c in term.children)})"
    if op == "pw":
        kids = term.children
        pairs = ", ".join(
            f"({_show(v, names)}, {_show(c, names)})"
            for v, c in zip(kids[0::2], kids[1::2], strict=True)
        )
        return f"Piecewise({pairs})"
    if op == "app":
        return f"{term[2]}({', '.join(_show(c, names) for c in term.children)})"
    if op in ("lim", "der"):
        hint = _display_hint(term, names)
        body = _show(term[3], (*names, hint))
        point = _show(term[4], names)
        if op == "lim":
            default = "-" if term[4] == OO else "+"  # sympy's own default direction
            extra = "" if term[5] == default else f", {term[5]!r}"
            return f"Limit({body}, {hint}, {point}{extra})"
        if term[4][0] == "sym" and term[4][2] == hint:
            return f"Derivative({body}, {hint})"
        return f"Subs(Derivative({body}, {hint}), {hint}, {point})"
    if op in _INFIX:
        return f"{_show(term[2], names)} {_INFIX[op]} {_show(term[3], names)}"
    if op in ("eq", "ne"):
        return f"{op.capitalize()}({_show(term[2], names)}, {_show(term[3], names)})"
    if op in ("and", "or"):
        joiner = " & " if op == "and" else " | "
        return joiner.join(
            f"({_show(c, names)})"
            if c[0] in ("and", "or", "implies") or c[0] in _INFIX
            else _show(c, names)
            for c in term.children
        )
    if op == "not":
        return f"~({_show(term[2], names)})"
    if op == "implies":
        return f"Implies({_show(term[2], names)}, {_show(term[3], names)})"
    if op == "equiv":
        return f"Equivalent({', '.join(_show(c, names) for c in term.children)})"
    raise TermError(f"cannot print {op!r}")


def _display_hint(binder: Term, names: tuple[str, ...]) -> str:
    """The bound variable's printed name: its hint, unless a free name of the body or an
    outer binder's name has it (then a fresh one).

    The hint comes from whoever wrote the term (a certificate's author included), so it
    is never trusted to be fresh: a name free in the body is never reused, even where
    the point of a derivative is a symbol of that name (``d/dx (x·t)`` at ``x = t``
    with the hint ``t`` prints ``Subs(Derivative(t*t1, t1), t1, t)``, never
    ``Derivative(t*t, t)``).  ``Derivative(f, v)`` is printed only when the point is
    the free symbol ``v`` itself and ``v`` is fresh in the body, where it reads right.
    """
    return fresh_name(binder[2], set(free_names(binder[3])) | set(names))


def _show_sum(term: Term, names: tuple[str, ...]) -> str:
    # numbers last, as sympy prints them: n - 1, not -1 + n
    kids = sorted(term.children, key=lambda c: c[0] == "num")
    text = ""
    for position, kid in enumerate(kids):
        negative, shown = _negated(kid, names)
        if position == 0:
            text = ("-" if negative else "") + shown
        else:
            text += (" - " if negative else " + ") + shown
    return text


def _negated(term: Term, names: tuple[str, ...]) -> tuple[bool, str]:
    """Whether ``term`` prints with a leading minus, and its text without it."""
    value = value_of(term)
    if value is not None and value < 0:
        return True, _show(num(-value), names)
    if term[0] == "mul":
        first = value_of(term[2])
        if first is not None and first < 0:
            rest = list(term.children[1:])
            factors = rest if first == -1 else [num(-first), *rest]
            return True, _show_product(tuple(factors), names, inner=True)
    shown = _show(term, names)
    return False, _paren(shown, _precedence(term), _PREC_ADD + 1) if term[0] == "add" else shown


def _folded(factors: tuple[Term, ...]) -> Fraction | None:
    """The product of the numeric factors, or None when it is beyond a number of a term
    (the factors are then printed as they stand: the printer never makes a number longer
    than those it was given)."""
    coefficient = Fraction(1)
    for factor in factors:
        value = value_of(factor)
        if value is not None:
            coefficient *= value
            if not _fits(coefficient):
                return None
    return coefficient


def _show_product(factors: tuple[Term, ...], names: tuple[str, ...], inner: bool = False) -> str:
    folded = _folded(factors)
    coefficient = Fraction(1) if folded is None else folded
    top: list[str] = []
    bottom: list[str] = []
    for factor in factors:
        value = value_of(factor)
        if value is not None and folded is not None:
            continue
        k = integer_exponent(factor)
        if k is not None and k < 0 and factor[2][0] == "mul":
            # (y*z)**(-1) is one reciprocal, apart from 1/(y*z), which is two: at y = 0
            # they are different unspecified numbers, so they never print alike
            top.append(f"({_show(factor[2], names)})**({k})")
            continue
        if k is not None and k < 0:
            base = factor[2]
            shown = _show(base if k == -1 else make("pow", (base, num(-k))), names)
            prec = _precedence(base) if k == -1 else _PREC_POW
            if k == -1 and base[0] == "pow":
                # 1/(x**2) is (x²)⁻¹, apart from 1/x**2, which is (x⁻¹)²: at x = 0 they are
                # different unspecified numbers, so they never print alike
                prec = _PREC_ADD
            bottom.append(_paren(shown, prec, _PREC_POW if len(factors) > 1 else _PREC_MUL + 1))
            continue
        top.append(_paren(_show(factor, names), _precedence(factor), _PREC_MUL))
    sign = "-" if coefficient < 0 else ""
    coefficient = abs(coefficient)
    if coefficient.numerator != 1 or not top:
        top.insert(0, str(coefficient.numerator))
    if coefficient.denominator != 1:
        bottom.insert(0, str(coefficient.denominator))
    text = "*".join(top)
    if bottom:
        below = "*".join(bottom)
        text += "/" + (f"({below})" if len(bottom) > 1 else below)
    return sign + text


def _show_power(term: Term, names: tuple[str, ...]) -> str:
    base, exponent = term[2], term[3]
    k = value_of(exponent)
    if k == Fraction(1, 2):
        return f"sqrt({_show(base, names)})"
    if k == Fraction(-1, 2):
        return f"1/sqrt({_show(base, names)})"
    if k is not None and k.denominator == 1 and k < 0:
        return _show_product((term,), names)
    shown_base = _paren(_show(base, names), _precedence(base), _PREC_POW + 1)
    shown_exp = _show(exponent, names)
    if _precedence(exponent) < _PREC_ATOM or (exponent[0] == "num" and k is not None and k < 0):
        shown_exp = f"({shown_exp})"
    return f"{shown_base}**{shown_exp}"
