"""Terms as sympy, for one decision: every name a kernel-owned ``Dummy``.

A decider (``cancel``, sympy's ``limit``, exact root counting) needs sympy objects.  It
builds them here from terms with sympy's own constructors, and every name becomes a
``Dummy`` the kernel made for this decision: no object a claim author made, no class a
claim author defined, and no name an author chose ever reaches sympy's caches or
methods.  Subterms the decider treats as unknowns (applied functions, derivatives,
``Abs``, ``Max``, ``Min``, ``Piecewise``) become ``Dummy`` atoms too, the same one for
the same canonical term.

sympy evaluates as it builds, by the laws of the complex numbers: ``x·x⁻¹`` is ``1``,
``(√x)²`` is ``x`` and ``exp(log x)`` is ``x``, which the kernel's reading of a partial
operation outside its domain (an unspecified real number) does not give.  So sympy may
see a term only where those laws hold, and this module enforces it in one place: a
:class:`Bridge` is made with the decision's *prover*, and :meth:`Bridge.expr` builds a
term only after every domain condition of it (a non-zero denominator, a positive
logarithm argument, a non-negative or positive base of a fractional or symbolic power,
:func:`~softmax_dispersion.theory.terms.domain_conditions`) has been proved by that
prover: z3 from the facts (``cancel``), on the tail ``n > N`` of a limit's variable (a
limit), or at the witness (the vacuity check).  No decider can hand sympy a term without
saying how its conditions are proved, and none can forget to.  A polynomial is not
built at all: :func:`polynomial` reads the term's coefficients itself, refusing anything
but ``+``, ``·``, natural powers of the variable and rational numbers, so nothing can
simplify on construction.  Both bound what a decision costs by the term's size
(:data:`MAX_DECIDER_DEGREE`, :data:`MAX_EXPANSION`, :data:`MAX_POLYNOMIAL_DEGREE`,
:data:`MAX_POLYNOMIAL_BITS`).

:meth:`Bridge.term` reads a decider's sympy result back into a term (to ask z3 a
question about it), by exact node type, with the kernel's dummies mapped back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction
from math import gcd, lcm

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

__all__ = [
    "MAX_DECIDER_DEGREE",
    "MAX_EXPANSION",
    "MAX_POLYNOMIAL_BITS",
    "MAX_POLYNOMIAL_DEGREE",
    "Bridge",
    "Prover",
    "polynomial",
    "refuse",
]

MAX_DECIDER_DEGREE = 16
"""The largest :func:`~softmax_dispersion.theory.terms.expansion_degree` of a term
handed to a decider: the degree of what expanding it makes."""
MAX_EXPANSION = 20_000
"""The most monomials a term handed to a decider may expand into, counted as
``C(v + d, d)`` for ``v`` atoms and degree ``d``
(:func:`~softmax_dispersion.theory.terms.expansion_degree`): what ``together`` and
``cancel`` (or a limit's leading terms) may have to make of it."""
MAX_POLYNOMIAL_DEGREE = 8
"""The largest degree of a polynomial whose real roots are counted."""
MAX_POLYNOMIAL_BITS = 256
"""The largest coefficient, in bits, of a polynomial whose real roots are counted (its
coefficients made coprime integers)."""

Prover = Callable[[Term, str], None]
"""Proves a domain condition (a formula, with a name for messages) or raises."""


def refuse(condition: Term, name: str) -> None:
    """The prover of a decision that proves nothing: every condition is refused."""
    raise TermError(f"{name}: a decider may not assume it")


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
    """Builds sympy expressions from terms whose domain conditions ``prove`` proved, and
    reads decider results back.

    ``prove(condition, name)`` must prove the formula ``condition`` (``name`` says what
    it is, for its error) or raise; :meth:`expr` calls it for every domain condition of
    a term it has not proved already, before sympy sees the term.
    """

    def __init__(self, prove: Prover, opaque: tuple[str, ...] = _OPAQUE) -> None:
        self.prove = prove
        self.opaque = opaque
        self.symbols: dict[str, sp.Dummy] = {}
        self.atoms: dict[Term, sp.Dummy] = {}
        self.back: dict[sp.Dummy, Term] = {}
        self.proved: set[Term] = set()
        self._built: dict[Term, sp.Expr] = {}

    def admit(self, *exprs: Term) -> None:
        """Prove every domain condition of ``exprs`` (those not proved already)."""
        for condition, name in terms.domain_conditions(*exprs):
            key = terms.canonical(condition)
            if key not in self.proved:
                self.prove(condition, name)
                self.proved.add(key)

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
        """``term`` built by sympy's constructors (it evaluates as it builds), once every
        domain condition of it is proved (:meth:`admit`), and if expanding it stays
        within degree :data:`MAX_DECIDER_DEGREE` and :data:`MAX_EXPANSION` monomials
        (:func:`expansion`)."""
        degree = terms.expansion_degree(term)
        if degree > MAX_DECIDER_DEGREE:
            shown = "more than 10**9" if degree > 10**9 else str(degree)
            raise TermError(
                f"{terms.show(term)[:80]} expands to degree {shown}, beyond "
                f"{MAX_DECIDER_DEGREE}: too costly to decide"
            )
        size = expansion(term)
        if size > MAX_EXPANSION:
            shown = "more than 10**9" if size > 10**9 else f"{size:,}"
            raise TermError(
                f"{terms.show(term)[:80]} may expand into {shown} monomials, beyond "
                f"{MAX_EXPANSION:,}: too costly to decide"
            )
        self.admit(term)
        return self._expr(term)

    def _expr(self, term: Term) -> sp.Expr:
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
            built = _BUILD[op]([self._expr(c) for c in term.children])
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


_ATOM_OPS = frozenset({"sym", "app", "der", "lim", "abs", "max", "min", "pw", "log", "exp"})


def expansion(term: Term) -> int:
    """A bound on the monomials ``term`` expands into, the smaller of two bounds that
    each hold on their own: ``C(v + d, d)``, the monomials of degree at most ``d`` in
    ``v`` variables, for ``d`` its
    :func:`~softmax_dispersion.theory.terms.expansion_degree` and ``v`` its distinct
    atoms (symbols, applied functions, logarithms, exponentials, non-integer powers);
    and the count read from its shape (:func:`_shape_count`), which a sum of few terms
    over many atoms keeps small.

    Examples
    --------
    >>> from softmax_dispersion.theory import terms
    >>> x, y = terms.sym("x"), terms.sym("y")
    >>> expansion(terms.power(terms.add(x, y), 3))  # x³, x²y, xy², y³ (and the 1 below)
    5
    >>> many = [terms.sym(f"x{i}") for i in range(12)]
    >>> expansion(terms.mul(terms.add(*many[:6]), terms.add(*many[6:])))  # 36 products
    37
    """
    degree = terms.expansion_degree(term)
    atoms = {
        terms.canonical(node)
        for node in terms.walk(term)
        if node[0] in _ATOM_OPS
        or (node[0] == "pow" and (terms.value_of(node[3]) or Fraction(1, 2)).denominator != 1)
    }
    if degree > 10**6:
        return 10**9 + 1
    size = 1
    for i in range(1, min(degree, len(atoms)) + 1):  # C(v + d, d) = C(v + d, min(v, d))
        size = size * (len(atoms) + degree - min(degree, len(atoms)) + i) // i
        if size > 10**9:
            return 10**9 + 1
    return min(size, _shape_count(term, {})[2])


_COUNT_CAP = 10**9 + 1


def _shape_count(term: Term, cache: dict[Term, tuple[int, int, int]]) -> tuple[int, int, int]:
    """``(numerator, denominator, worst)``: bounds on the monomials of the numerator and
    the denominator of ``term`` brought to one fraction of expanded polynomials in its
    atoms (what ``together`` and ``cancel`` make; cancelling only removes monomials),
    and the largest numerator-plus-denominator count over its subterms.

    A sum of fractions ``N_i/D_i`` becomes ``(Σ_i N_i Π_{j≠i} D_j) / Π_j D_j``; a
    product multiplies the counts; ``b**k`` for a natural ``k`` has at most
    ``C(m + k − 1, k)`` monomials where ``b`` has ``m`` (a negative ``k`` swaps the
    numerator and the denominator); every other node is one atom (after ``t = exp(a)``,
    an exponential is a product of atoms' powers: one monomial). Relations and
    connectives keep each side on its own, as the deciders do.
    """
    found = cache.get(term)
    if found is not None:
        return found
    op = term[0]
    kids = [_shape_count(c, cache) for c in term.children]
    worst = max((k[2] for k in kids), default=0)
    if op == "add" or op in terms.RELATIONS:  # a relation is decided as lhs − rhs
        bottom = _capped_product(k[1] for k in kids)
        top = 0
        for i, kid in enumerate(kids):
            others = _capped_product(k[1] for j, k in enumerate(kids) if j != i)
            top = min(top + _capped_product((kid[0], others)), _COUNT_CAP)
    elif op == "mul":
        top = _capped_product(k[0] for k in kids)
        bottom = _capped_product(k[1] for k in kids)
    elif op == "pow" and terms.integer_exponent(term) is not None:
        k = terms.integer_exponent(term) or 0
        num_, den_ = kids[0][:2] if k >= 0 else (kids[0][1], kids[0][0])
        top, bottom = _multisets(num_, abs(k)), _multisets(den_, abs(k))
    elif op in terms.CONNECTIVES:
        top = max((k[0] for k in kids), default=1)
        bottom = max((k[1] for k in kids), default=1)
    else:
        top, bottom = 1, 1
    found = (top, bottom, max(worst, min(top + bottom, _COUNT_CAP)))
    cache[term] = found
    return found


def _capped_product(values: Iterable[int]) -> int:
    product = 1
    for value in values:
        product = min(product * value, _COUNT_CAP)
    return product


def _multisets(m: int, k: int) -> int:
    """``C(m + k − 1, k)``, the monomials of a sum of ``m`` monomials to the power
    ``k`` (capped)."""
    if m <= 1 or k == 0:
        return 1
    size = 1
    for i in range(1, min(k, m - 1) + 1):
        size = size * (m - 1 + k - min(k, m - 1) + i) // i
        if size >= _COUNT_CAP:
            return _COUNT_CAP
    return size


def _polynomial_degree(term: Term, var: str, what: str, cache: dict[Term, int]) -> int:
    """The degree of ``term`` as a polynomial in ``var``, read from its shape, or an
    error naming the first node that is not ``+``, ``·``, a natural power, ``var`` or a
    rational number."""
    found = cache.get(term)
    if found is not None:
        return found
    op = term[0]
    if op == "num":
        found = 0
    elif op == "sym" and term[2] == var:
        found = 1
    elif op in ("add", "mul"):
        degrees = [_polynomial_degree(c, var, what, cache) for c in term.children]
        found = max(degrees) if op == "add" else sum(degrees)
    elif op == "pow" and terms.integer_exponent(term) is not None and term[3][2] >= 0:
        found = int(term[3][2]) * _polynomial_degree(term[2], var, what, cache)
    else:
        raise TermError(
            f"{what}: {terms.show(term)[:80]} is not a polynomial in {var} with rational "
            f"coefficients (only +, *, natural powers, {var} and rational numbers)"
        )
    if found > MAX_POLYNOMIAL_DEGREE:
        raise TermError(
            f"{what}: degree {found} is beyond {MAX_POLYNOMIAL_DEGREE}, the largest whose "
            "roots the kernel counts"
        )
    cache[term] = found
    return found


def _coefficients(term: Term, var: str, cache: dict[Term, list[Fraction]]) -> list[Fraction]:
    """The coefficients of ``term`` in ``var``, lowest first (its degree already checked)."""
    found = cache.get(term)
    if found is not None:
        return found
    op = term[0]
    if op == "num":
        found = [Fraction(term[2], term[3])]
    elif op == "sym":
        found = [Fraction(0), Fraction(1)]
    elif op == "add":
        found = []
        for child in term.children:
            part = _coefficients(child, var, cache)
            found += [Fraction(0)] * (len(part) - len(found))
            for i, c in enumerate(part):
                found[i] += c
    elif op == "mul":
        found = [Fraction(1)]
        for child in term.children:
            found = _times(found, _coefficients(child, var, cache))
    else:  # a natural power
        base = _coefficients(term[2], var, cache)
        found = [Fraction(1)]
        for _ in range(int(term[3][2])):
            found = _times(found, base)
    cache[term] = found
    return found


def _times(a: list[Fraction], b: list[Fraction]) -> list[Fraction]:
    product = [Fraction(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                product[i + j] += x * y
    return product


def polynomial(term: Term, var: str, what: str) -> sp.Poly:
    """``term`` as a polynomial in ``var`` over the rationals, read by the kernel itself.

    The term must be a polynomial *as written*: rational numbers, ``var``, ``+``, ``·``
    and natural powers, nothing else (no ``√x²``, no ``exp(log x)``, no ``x/x``: no node
    that sympy would simplify as it builds it, and no partial operation), of degree at
    most :data:`MAX_POLYNOMIAL_DEGREE` read from its shape, and its coefficients, made
    coprime integers, of at most :data:`MAX_POLYNOMIAL_BITS` bits: exact root counting
    then costs milliseconds.  The coefficients are computed here, by exact rational
    arithmetic on the term's own nodes; sympy receives only the list.  The zero
    polynomial is refused: every number is a root of it, and sympy counts none.

    Examples
    --------
    >>> from softmax_dispersion.theory import terms
    >>> x = terms.sym("x")
    >>> polynomial(terms.add(terms.power(x, 2), terms.num(-2)), "x", "P").all_coeffs()
    [1, 0, -2]
    """
    terms.check_size(term, what)
    _polynomial_degree(term, var, what, {})
    coefficients = _coefficients(term, var, {})
    while len(coefficients) > 1 and coefficients[-1] == 0:
        coefficients.pop()
    if coefficients == [0]:
        # count_roots says 0 for it: "P(x) = 0 implies no root" would conclude False
        raise TermError(
            f"{what}: {terms.show(term)[:80]} is the zero polynomial (every number is a root)"
        )
    denominators = lcm(*(c.denominator for c in coefficients))
    integers = [int(c * denominators) for c in coefficients]
    common = gcd(*integers) or 1
    bits = max(abs(i // common).bit_length() for i in integers)
    if bits > MAX_POLYNOMIAL_BITS:
        raise TermError(
            f"{what}: a coefficient of {bits} bits (as coprime integers), beyond "
            f"{MAX_POLYNOMIAL_BITS}, the largest whose roots the kernel counts"
        )
    rationals = [sp.Rational(c.numerator, c.denominator) for c in reversed(coefficients)]
    return sp.Poly(rationals, sp.Dummy(var, real=True), domain="QQ")


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
