"""The vacuity check: a claim's assumptions hold together at an explicit witness.

A claim whose assumptions contradict each other proves anything, so the kernel asks
every claim for a *witness*: exact values of its free symbols (and of each family's
index symbols: every member is given that value), and ``Lambda`` functions for its free
functions.  The defined symbols take the values their definitions give there (a sum of
``count`` equal terms, an abbreviation, the isolated root), every family's count must
be a natural number, every family's domain must hold, and so must every assumption.

Everything happens on terms, with the kernel's own substitution: the values are put in
and the witness functions applied without evaluating anything, so the closed term still
shows every partial operation as written (``sqrt(t - 1)`` at ``f(n)`` is
``sqrt(n - 1)``, whatever sympy would make of ``f(n)**2``).  Every partial operation of
the closed term must lie inside its real domain (a non-zero denominator, a positive
logarithm argument, a non-negative base of a fractional power).  Truth is then decided
exactly: a difference that ``cancel`` reduces to zero is zero; otherwise its sign comes
from interval arithmetic on the term (mpmath's interval context, outward rounding, at
rising precision), and only an interval that excludes zero decides.  An assumption that
still mentions a natural-number symbol must hold for every natural value: z3 must prove
it for every real value ``>= 0``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import sympy as sp
from mpmath.ctx_iv import MPIntervalContext

from softmax_dispersion.theory import terms
from softmax_dispersion.theory._bridge import Bridge
from softmax_dispersion.theory._core import ProofError, require
from softmax_dispersion.theory._exponentials import exp_to_rational
from softmax_dispersion.theory._snapshot import WitnessFunction, WitnessValue
from softmax_dispersion.theory.definitions import (
    Definitions,
    LetDef,
    RootDef,
    SumDef,
    root_polynomial,
)
from softmax_dispersion.theory.terms import Term, TermError, show

__all__ = ["VacuityError", "check_witness"]

_PRECISIONS = (64, 256, 1024)


class VacuityError(ValueError):
    """The witness does not show the assumptions satisfiable."""


class _Undecided(Exception):
    pass


def _root_interval(poly: sp.Poly, root: RootDef, iv: Any) -> Any:
    """The root's isolating interval, narrowed to ~2^-prec by the sign of the polynomial's
    square-free part (the root is a simple root of it, and the only one in the interval,
    so its sign differs at the two ends of every interval that holds the root)."""
    simple = poly.sqf_part()
    lo_f, hi_f = terms.value_of(root.lower), terms.value_of(root.upper)
    assert lo_f is not None and hi_f is not None
    lo = sp.Rational(lo_f.numerator, lo_f.denominator)
    hi = sp.Rational(hi_f.numerator, hi_f.denominator)
    below = simple.eval(lo) < 0
    width = sp.Rational(1, 2 ** (iv.prec + 4))
    while hi - lo > width:
        mid = (lo + hi) / 2
        value = simple.eval(mid)
        if value == 0:
            lo = hi = mid
            break
        if (value < 0) == below:
            lo = mid
        else:
            hi = mid
    lo_iv = iv.mpf(int(lo.p)) / iv.mpf(int(lo.q))
    hi_iv = iv.mpf(int(hi.p)) / iv.mpf(int(hi.q))
    return iv.mpf([lo_iv.a, hi_iv.b])


class _Evaluator:
    """Certified enclosures and exact zero tests of closed terms."""

    def __init__(self, roots: Mapping[str, RootDef]) -> None:
        self.roots = roots
        self.defined: set[Term] = set()
        self._polynomials: dict[str, sp.Poly] = {}
        self._intervals: dict[tuple[str, int], Any] = {}

    def at_witness(self, condition: Term, name: str) -> None:
        """The prover of the witness's bridges: ``condition`` holds at the witness."""
        key = terms.canonical(condition)
        if key in self.defined:
            return
        if not self.truth(condition):
            raise _Undecided(f"{name} fails at the witness")
        self.defined.add(key)

    def bridge(self, opaque: tuple[str, ...] | None = None) -> Bridge:
        """A bridge whose terms' domain conditions are decided at the witness."""
        return Bridge(self.at_witness) if opaque is None else Bridge(self.at_witness, opaque)

    def root_interval(self, name: str, iv: Any) -> Any:
        """The root ``name``'s enclosure at ``iv``'s precision (computed once)."""
        key = (name, iv.prec)
        if key not in self._intervals:
            root = self.roots[name]
            if name not in self._polynomials:
                self._polynomials[name] = root_polynomial(root)
            self._intervals[key] = _root_interval(self._polynomials[name], root, iv)
        return self._intervals[key]

    def interval(self, term: Term, iv: Any) -> Any:
        op = term[0]
        if op == "num":
            return iv.mpf(term[2]) / iv.mpf(term[3])
        if op == "pi":
            return iv.pi
        if op == "E":
            return iv.e
        if op == "sym" and term[2] in self.roots:
            return self.root_interval(term[2], iv)
        args = [self.interval(c, iv) for c in term.children] if op not in ("pw",) else []
        if op == "add":
            total = args[0]
            for a in args[1:]:
                total = total + a
            return total
        if op == "mul":
            product = args[0]
            for a in args[1:]:
                product = product * a
            return product
        if op == "pow":
            base, exponent = args
            k = terms.integer_exponent(term)
            if k is not None:
                if k < 0 and base.a <= 0 <= base.b:
                    raise _Undecided("a denominator's interval contains 0")
                return base**k
            if base.a <= 0:
                raise _Undecided("a fractional power of a base not known to be positive")
            return iv.exp(exponent * iv.log(base))
        if op == "exp":
            return iv.exp(args[0])
        if op == "log":
            if args[0].a <= 0:
                raise _Undecided("a logarithm of a number not known to be positive")
            return iv.log(args[0])
        if op == "abs":
            a = args[0]
            if a.a >= 0:
                return a
            if a.b <= 0:
                return -a
            return iv.mpf([0, max(-a.a, a.b)])
        if op in ("max", "min"):
            pick = max if op == "max" else min
            return iv.mpf([pick(a.a for a in args), pick(a.b for a in args)])
        if op == "pw":
            kids = term.children
            for value, condition in zip(kids[0::2], kids[1::2], strict=True):
                if self.truth(condition):
                    return self.interval(value, iv)
            raise _Undecided("no branch of a piecewise expression applies")
        raise _Undecided(f"cannot evaluate {show(term)}")

    def is_zero(self, difference: Term) -> bool:
        """``cancel`` reduces the closed difference to zero (the roots held as symbols)."""
        try:
            terms.check_size(difference, "a difference at the witness")
            expr = self.bridge().expr(difference)
            rational, _ = exp_to_rational(expr, positive=lambda b: bool(b.is_Rational and b > 0))
            return bool(sp.cancel(sp.together(rational)) == 0)
        except (sp.PolynomialError, TypeError, TermError, ValueError, _Undecided):
            return False

    def sign(self, difference: Term) -> int:
        """The sign of a closed real number, or :class:`_Undecided`."""
        if self.is_zero(difference):
            return 0
        for prec in _PRECISIONS:
            iv = MPIntervalContext()
            iv.prec = prec
            try:
                value = self.interval(difference, iv)
            except _Undecided:
                continue
            if value.a > 0:
                return 1
            if value.b < 0:
                return -1
        raise _Undecided(f"cannot decide the sign of {show(difference)}")

    def truth(self, formula: Term) -> bool:
        """Whether a closed formula holds (exact zero test, then certified intervals)."""
        op = formula[0]
        if op == "true":
            return True
        if op == "false":
            return False
        kids = formula.children
        if op == "and":
            return all(self.truth(k) for k in kids)
        if op == "or":
            return any(self.truth(k) for k in kids)
        if op == "not":
            return not self.truth(kids[0])
        if op == "implies":
            return (not self.truth(kids[0])) or self.truth(kids[1])
        if op == "equiv":
            return len({self.truth(k) for k in kids}) == 1
        compare: dict[str, Callable[[int], bool]] = {
            "eq": lambda s: s == 0,
            "ne": lambda s: s != 0,
            "lt": lambda s: s < 0,
            "le": lambda s: s <= 0,
            "gt": lambda s: s > 0,
            "ge": lambda s: s >= 0,
        }
        if op in compare and terms.is_real(kids[0]) and terms.is_real(kids[1]):
            difference = terms.add(kids[0], terms.mul(terms.MINUS_ONE, kids[1]))
            return compare[op](self.sign(difference))
        raise _Undecided(f"cannot evaluate {show(formula)}")


def check_witness(
    definitions: Definitions,
    assumptions: Sequence[Term],
    witness: Sequence[WitnessValue | WitnessFunction] | None,
    naturals: Sequence[str] = (),
) -> str:
    """Decide that ``assumptions`` (and every family's domain) hold at ``witness``.

    Returns a short detail; raises :class:`VacuityError` naming what fails.
    """
    try:
        return _Witness(definitions, witness, naturals).check(assumptions)
    except VacuityError:
        raise
    except RecursionError:
        raise VacuityError("the witness nests too deep") from None
    except Exception as error:  # an expression that cannot be evaluated there
        raise VacuityError(
            f"cannot evaluate at the witness: {type(error).__name__}: {error}"
        ) from None


class _Witness:
    def __init__(
        self,
        definitions: Definitions,
        witness: Sequence[WitnessValue | WitnessFunction] | None,
        naturals: Sequence[str],
    ) -> None:
        if witness is None:
            raise VacuityError(
                "the claim gives no witness: values of its free symbols at which every "
                "assumption holds"
            )
        self.definitions = definitions
        self.naturals = set(naturals)
        self.values: dict[str, Term] = {}
        self.functions: dict[str, tuple[tuple[str, ...], Term]] = {}
        self.roots: dict[str, RootDef] = {}
        self.given = witness
        defined = definitions.defined_names
        for entry in witness:
            if entry.name in defined:
                raise VacuityError(
                    f"{entry.name} is defined: the witness gives values to free symbols only "
                    "(a defined symbol takes the value of its definition)"
                )
            if isinstance(entry, WitnessFunction):
                self.functions[entry.name] = (entry.parameters, entry.body)
                continue
            if terms.free_names(entry.value) or terms.has_op(entry.value, "app", "der", "lim"):
                raise VacuityError(
                    f"the witness value of {entry.name} must be a number, not {show(entry.value)}"
                )
            self.values[entry.name] = entry.value
        clash = self.naturals & set(self.values)
        if clash:
            raise VacuityError(
                f"{sorted(clash)} range over every natural number: give them no value"
            )
        self.evaluator = _Evaluator(self.roots)

    # ---- closing terms -----------------------------------------------------------------

    def close(self, term: Term, values: bool = True) -> Term:
        """``term`` with the values put in and the functions applied (nothing evaluated);
        with ``values=False``, the functions applied only (the names kept)."""
        op = term[0]
        if op == "sym":
            return self.values.get(term[2], term) if values else term
        if not term.children:
            return term
        if op == "der":
            return self._derivative(term) if values else term
        if op == "lim":
            raise _Undecided(f"a limit at the witness: {show(term)}")
        kids = [self.close(c, values) for c in term.children]
        if op == "app":
            body = self.functions.get(term[2])
            if body is None:
                return terms.rebuild(term, kids)
            parameters, expression = body
            if len(parameters) != len(kids):
                raise VacuityError(
                    f"the witness function {term[2]} takes {len(parameters)} arguments"
                )
            return terms.substitute(expression, dict(zip(parameters, kids, strict=True)))
        return terms.rebuild(term, kids)

    def _derivative(self, term: Term) -> Term:
        name, body = terms.opened(term, "witness_variable")
        saved = self.values.pop(name, None)
        try:
            inner = self.close(body)
        finally:
            if saved is not None:
                self.values[name] = saved
        try:
            slope = terms.derivative(inner, name)
        except terms.NotDifferentiable as error:
            raise VacuityError(f"a derivative at the witness: {error}") from None
        return terms.substitute(slope, {name: self.close(term[4])})

    # ---- deciding ----------------------------------------------------------------------

    def closed(self, term: Term, what: str, values: bool = True) -> Term:
        """:meth:`close`, within the size limit (a witness function applied within itself
        can double a term at every level)."""
        try:
            return terms.check_size(self.close(term, values), what)
        except TermError as error:
            raise VacuityError(str(error)) from None

    def holds(self, formula: Term, what: str) -> None:
        """``formula`` holds at the witness (for every natural value of the naturals)."""
        closed = self.closed(formula, what)
        free = terms.free_names(closed) - set(self.roots)
        if free and free <= self.naturals:
            facts = [terms.rel("ge", terms.sym(s), terms.ZERO) for s in sorted(free)]
            try:
                require(facts, closed, f"{what} for every natural value")
            except ProofError as error:
                raise VacuityError(str(error)) from None
            return
        if free:
            raise VacuityError(f"the witness gives no value to {sorted(free)[0]} (in {what})")
        if terms.free_functions(closed):
            raise VacuityError(f"the witness gives no function for {show(closed)}")
        self.require_true(closed, what)

    def require_true(self, closed: Term, what: str) -> None:
        try:
            verdict = self.evaluator.truth(closed)
        except _Undecided as error:
            raise VacuityError(f"{what}: undecided at the witness ({error})") from None
        if not verdict:
            raise VacuityError(f"{what} fails at the witness")
        self.evaluator.defined.add(terms.canonical(closed))  # known to hold there

    def in_domain(self, expr: Term, what: str) -> None:
        """Every partial operation of ``expr``, values put in and functions applied,
        lies inside its real domain at the witness (innermost first)."""
        # named as written (the functions applied, the names kept), decided at the values
        composed = self.closed(expr, what, values=False)
        for condition, name in reversed(terms.domain_conditions(composed)):
            self.holds(condition, f"{what}: {name}")
        closed = self.closed(expr, what)
        for condition, name in reversed(terms.domain_conditions(closed)):
            self.holds(condition, f"{what}: {name}")

    def value_of(self, expr: Term, what: str) -> Term:
        """The closed value of ``expr`` at the witness, every partial operation defined."""
        self.in_domain(expr, what)
        return self.closed(expr, what)

    def natural(self, count: Term, what: str) -> Fraction:
        closed = self.value_of(count, what)
        try:
            terms.check_size(closed, what)
            value = self.evaluator.bridge(opaque=()).expr(closed)
        except (TermError, _Undecided) as error:
            raise VacuityError(f"{what}: {error}") from None
        if not (
            type(value) in (sp.Integer, sp.core.numbers.Zero, sp.core.numbers.One) and value >= 0
        ):
            raise VacuityError(f"{what} is {value} at the witness, not a natural number")
        return Fraction(int(value))

    def check(self, assumptions: Sequence[Term]) -> str:
        for name, value in list(self.values.items()):
            self.in_domain(value, f"the witness value of {name}")
        for family in self.definitions.families.values():
            missing = [s for s in family.index if s not in self.values]
            if missing:
                raise VacuityError(
                    f"the witness gives no value to {missing[0]} (family {family.name!r})"
                )
        for definition in self.definitions.items:
            if isinstance(definition, SumDef):
                family = definition.family
                count = self.natural(
                    family.count, f"the count {show(family.count)} of {family.name!r}"
                )
                for relation in family.domain:
                    where = f"the domain of {family.name!r}: {show(relation)}"
                    self.in_domain(relation, where)
                    self.require_true(self.closed(relation, where), where)
                if definition.var is None:
                    term = self.value_of(definition.term, f"the term of {definition.name}")
                    self.values[definition.name] = terms.mul(terms.num(count), term)
                else:
                    var = definition.var
                    others = {k: v for k, v in self.values.items() if k != var}
                    body = terms.substitute(definition.term, others)
                    self.functions[definition.name] = ((var,), terms.mul(terms.num(count), body))
            elif isinstance(definition, LetDef):
                self.values[definition.name] = self.value_of(
                    definition.expression, f"the value of {definition.name}"
                )
            elif isinstance(definition, RootDef):
                self.roots[definition.name] = definition
        for assumption in assumptions:
            where = f"the assumption {show(assumption)}"
            self.in_domain(assumption, where)
            self.holds(assumption, where)
        given = ", ".join(
            f"{e.name} = {show(e.value)}" for e in self.given if isinstance(e, WitnessValue)
        )
        return f"every assumption holds at the witness {given or '(no free symbols)'}"
