"""Translation of terms into z3's real arithmetic, assuming nothing it does not know.

The field operations, integer powers, ``Abs``, ``Max``, ``Min`` and ``Piecewise`` are
translated exactly, from the kernel's terms (sympy is never involved).  A negative power
``b**-k`` is ``(1/b)**k``, and ``1/0`` is z3's own unspecified value: the reading every
decider shares (:mod:`~softmax_dispersion.theory.terms`).  Exponentials become products
of positive variables: the argument of each ``exp`` is expanded into a sum of rational
multiples of monomials, and each monomial (divided by its coefficient's denominator)
gets one positive variable ``t = exp(monomial)``, shared by every formula of a query, so
that ``exp(-x) = 1/exp(x)`` and ``exp(a - b) = exp(a)/exp(b)`` are known to z3; those
variables, and nothing else, are known to be positive.

What needs a sign is given one only when a hypothesis states it, as a conjunct
``b > 0`` (or ``b >= 0``) of the hypotheses, compared in canonical form:

* a power ``b**y`` with a symbolic exponent is ``exp(y log b)`` only for a positive base,
  and ``exp(k log b) = b**k`` only for a positive ``b``;
* a fractional power ``b**(p/q)`` is the variable ``s >= 0`` with ``s**q = b**p`` only
  for ``b >= 0`` (``b > 0`` when ``p < 0``).

Every other subterm (``log(...)``, such powers without a known base, a derivative, an
applied function) becomes an *opaque* real variable without a sign, the same variable
for the same canonical subterm.  A limit is no real number at all: an equation
``Limit(...) = value`` is an opaque *proposition*, and a limit anywhere else is refused,
so that z3 never reads ``lim n < lim n + 1`` as arithmetic.  Forgetting what a term
means is sound for proving: if the negated goal is unsatisfiable with the term left
free, it is unsatisfiable for its true value too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import z3

from softmax_dispersion.theory import terms
from softmax_dispersion.theory._deadlines import BudgetExceeded, budget_spent, remaining_budget_ms
from softmax_dispersion.theory.terms import Term

__all__ = ["prove_with_z3", "relevant_facts"]

_MAX_MONOMIALS = 2_000
_MAX_EXPANDED_POWER = 8


class Untranslatable(TypeError):
    """A formula z3 cannot be given (a limit in arithmetic, an infinity, ...)."""


def _signed(hypotheses: Sequence[Term]) -> tuple[set[Term], set[Term]]:
    """The canonical terms stated positive, and those stated non-negative, by a conjunct."""
    positive: set[Term] = set()
    nonnegative: set[Term] = set()
    for fact in hypotheses:
        for raw in terms.conjuncts(fact):
            part = terms.canonical(raw)
            if part[0] in ("lt", "le") and part[2] == terms.ZERO:
                (positive if part[0] == "lt" else nonnegative).add(part[3])
    return positive, nonnegative | positive


RLIMIT_PER_MS = 4_000
"""z3's resource count allowed per millisecond of a decision's budget: nlsat spends
2.7–5.1 million a CPU-second on the claims' decisions (z3 5.4.1, measured on this
project's machines), so a budget of ``t`` ms is about ``t`` ms of CPU, whatever the load."""
WALL_CLOCK_FACTOR = 3
"""The wall-clock limit, as a multiple of a decision's budget: a safety net only (a red
team found a query whose resource count z3 did not stop)."""


def _z3_number(value: Fraction, ctx: z3.Context) -> z3.ArithRef:
    return z3.RealVal(f"{value.numerator}/{value.denominator}", ctx)


def _positive_constant(term: Term) -> bool:
    value = terms.value_of(term)
    return (value is not None and value > 0) or term[0] in ("pi", "E", "exp")


Monomial = tuple[Term, ...]


@dataclass
class Translator:
    """Maps canonical terms to z3, remembering variables, atoms and generators.

    Each translator has a z3 context of its own: z3 numbers the expressions of a context
    in the order they are made, and nlsat's variable order follows those numbers, so a
    shared context would make a decision's time (and, within its timeout, its verdict)
    depend on what was decided before it in the same process.
    """

    positive: set[Term] = field(default_factory=set)
    nonnegative: set[Term] = field(default_factory=set)
    variables: dict[str, z3.ArithRef] = field(default_factory=dict)
    opaque: dict[Term, z3.ArithRef] = field(default_factory=dict)
    generators: dict[Term, z3.ArithRef] = field(default_factory=dict)
    propositions: dict[Term, z3.BoolRef] = field(default_factory=dict)
    side_conditions: list[z3.BoolRef] = field(default_factory=list)
    unknown_bases: list[str] = field(default_factory=list)
    _cache: dict[Term, z3.ArithRef] = field(default_factory=dict)
    ctx: z3.Context = field(default_factory=z3.Context)

    def _is_positive(self, base: Term) -> bool:
        base = terms.canonical(base)
        return base in self.positive or _positive_constant(base)

    def _is_nonnegative(self, base: Term) -> bool:
        return terms.canonical(base) in self.nonnegative or self._is_positive(base)

    def term(self, term: Term) -> z3.ArithRef:
        """Translate a real term (as written: z3's search follows its shape)."""
        found = self._cache.get(term)
        if found is None:
            found = self._term(term)
            self._cache[term] = found
        return found

    def _term(self, term: Term) -> z3.ArithRef:
        op = term[0]
        if op == "num":
            return _z3_number(Fraction(term[2], term[3]), self.ctx)
        if op == "sym":
            return self._variable(term[2])
        if op == "pi":
            return self._bounded(term, Fraction(314, 100), Fraction(315, 100))
        if op == "E":
            return self._exp(terms.ONE)
        if op == "add":
            return z3.Sum([self.term(c) for c in term.children])
        if op == "mul":
            return z3.Product([self.term(c) for c in term.children])
        if op == "pow":
            return self._power(term)
        if op == "exp":
            return self._exp(term[2])
        if op in ("max", "min"):
            parts = [self.term(c) for c in term.children]
            result = parts[0]
            for other in parts[1:]:
                keep = result >= other if op == "max" else result <= other
                result = z3.If(keep, result, other)
            return result
        if op == "abs":
            inner = self.term(term[2])
            return z3.If(inner >= 0, inner, -inner)
        if op == "pw":
            kids = term.children
            pairs = list(zip(kids[0::2], kids[1::2], strict=True))
            if pairs[-1][1] != terms.TRUE:
                raise Untranslatable(f"a Piecewise without a default branch: {terms.show(term)}")
            result = self.term(pairs[-1][0])
            for value, condition in reversed(pairs[:-1]):
                result = z3.If(self.formula(condition), self.term(value), result)
            return result
        if op in ("log", "app", "der"):
            key = terms.canonical(term)
            if key[0] != op:  # log(1) is 0, log(exp(x)) is x: what the canonical form knows
                return self.term(key)
            return self._opaque(term)
        if op == "lim":
            raise Untranslatable(
                f"{terms.show(term)} is a limit, not a real number: only an equation "
                "Limit(...) = value is read (as a proposition)"
            )
        raise Untranslatable(f"not a real term z3 reads: {terms.show(term)}")

    def _power(self, term: Term) -> z3.ArithRef:
        base, exponent = term[2], term[3]
        k = terms.value_of(exponent)
        if k is not None and k.denominator == 1:
            count = abs(int(k))
            factor = self.term(base) if k > 0 else 1 / self.term(base)
            return _power_of(factor, count)
        if k is not None:
            return self._root(term, int(k.numerator), int(k.denominator))
        if self._is_positive(base):  # b**y = exp(y log b) for b > 0
            return self._exp(terms.mul(exponent, terms.log(base)))
        self._note_base(term)
        return self._opaque(term)

    def _root(self, term: Term, p: int, q: int) -> z3.ArithRef:
        """``b**(p/q)`` as ``s >= 0`` with ``s**q = b**p``, for a base of known sign."""
        base = term[2]
        if not (self._is_positive(base) or (p > 0 and self._is_nonnegative(base))):
            self._note_base(term)
            return self._opaque(term)
        key = terms.canonical(term)
        if key in self.opaque:
            return self.opaque[key]
        root = z3.Real(f"#root{len(self.opaque)}", self.ctx)
        self.opaque[key] = root
        power_of_root = z3.Product([root] * q)
        power_of_base = z3.Product([self.term(base)] * abs(p))
        self.side_conditions.append(root >= 0)
        if p > 0:
            self.side_conditions.append(power_of_root == power_of_base)
        else:
            self.side_conditions.append(power_of_root * power_of_base == 1)
        return root

    def _exp(self, argument: Term) -> z3.ArithRef:
        """``exp(argument)`` as a product of powers of positive generators."""
        factors: list[z3.ArithRef] = []
        for monomial, coefficient in _expand(argument).items():
            p, q = coefficient.numerator, coefficient.denominator
            body = terms.canonical(terms.mul(*monomial)) if monomial else terms.ONE
            if q != 1:
                body = terms.canonical(terms.mul(terms.num(1, q), body))
            if body[0] == "log" and self._is_positive(body[2]) and abs(p) <= terms.MAX_EXPONENT:
                inner = self.term(body[2])  # exp(p log x) = x**p for x > 0
                factors.append(_power_of(inner, abs(p)) if p > 0 else 1 / _power_of(inner, abs(p)))
                continue
            generator = self.generators.get(body)
            if generator is None:
                generator = z3.Real(f"#t{len(self.generators)}", self.ctx)
                self.generators[body] = generator
                self.side_conditions.append(generator > 0)
            if abs(p) > 100_000:
                raise Untranslatable(f"an exponential power too large: exp({terms.show(argument)})")
            power = _power_of(generator, abs(p))
            factors.append(power if p > 0 else 1 / power)
        return z3.Product(factors) if factors else z3.RealVal(1, self.ctx)

    def formula(self, formula: Term) -> z3.BoolRef:
        """Translate a formula (as written)."""
        op = formula[0]
        if op == "true":
            return z3.BoolVal(True, self.ctx)
        if op == "false":
            return z3.BoolVal(False, self.ctx)
        if op in terms.RELATIONS:
            lhs, rhs = formula[2], formula[3]
            if "lim" in (lhs[0], rhs[0]):
                return self._proposition(formula)
            a, b = self.term(lhs), self.term(rhs)
            return {
                "eq": lambda: a == b,
                "ne": lambda: a != b,
                "lt": lambda: a < b,
                "le": lambda: a <= b,
                "gt": lambda: a > b,
                "ge": lambda: a >= b,
            }[op]()
        kids = [self.formula(c) for c in formula.children]
        if op == "and":
            return z3.And(kids)
        if op == "or":
            return z3.Or(kids)
        if op == "not":
            return z3.Not(kids[0])
        if op == "implies":
            return z3.Implies(kids[0], kids[1])
        if op == "equiv":
            return z3.And([kids[0] == other for other in kids[1:]])
        raise Untranslatable(f"not a formula z3 reads: {terms.show(formula)}")

    def _proposition(self, formula: Term) -> z3.BoolRef:
        """``Limit(...) = value`` as an opaque proposition (the same for the same one)."""
        if formula[0] != "eq":
            raise Untranslatable(f"{terms.show(formula)}: a limit is only ever equated")
        key = terms.canonical(formula)
        found = self.propositions.get(key)
        if found is None:
            found = z3.Bool(f"#limit{len(self.propositions)}", self.ctx)
            self.propositions[key] = found
        return found

    def _variable(self, name: str) -> z3.ArithRef:
        if name not in self.variables:
            self.variables[name] = z3.Real(f"{name}#{len(self.variables)}", self.ctx)
        return self.variables[name]

    def _bounded(self, term: Term, lo: Fraction, hi: Fraction) -> z3.ArithRef:
        var = self._opaque(term)
        self.side_conditions += [var > _z3_number(lo, self.ctx), var < _z3_number(hi, self.ctx)]
        return var

    def _note_base(self, term: Term) -> None:
        note = f"{terms.show(term)} (no stated sign for its base {terms.show(term[2])})"
        if note not in self.unknown_bases:
            self.unknown_bases.append(note)

    def _opaque(self, term: Term) -> z3.ArithRef:
        key = terms.canonical(term)  # the same variable for the same canonical term
        if key not in self.opaque:
            self.opaque[key] = z3.Real(f"#opaque{len(self.opaque)}", self.ctx)
        return self.opaque[key]


def _power_of(base: z3.ArithRef, k: int) -> z3.ArithRef:
    """``base**k`` for ``k >= 0``: a product for small ``k``, z3's power beyond."""
    if k <= 16:
        return z3.Product([base] * k) if k else z3.RealVal(1, base.ctx)
    return base**k


def _expand(term: Term) -> dict[Monomial, Fraction]:
    """``term`` as a sum of rational multiples of monomials (products of atoms)."""
    op = term[0]
    value = terms.value_of(term)
    if value is not None:
        return {(): value} if value else {}
    if op == "add":
        total: dict[Monomial, Fraction] = {}
        for child in term.children:
            for monomial, c in _expand(child).items():
                total[monomial] = total.get(monomial, Fraction(0)) + c
        return {m: c for m, c in total.items() if c}
    if op == "mul":
        product: dict[Monomial, Fraction] = {(): Fraction(1)}
        for child in term.children:
            product = _times(product, _expand(child))
        return product
    k = terms.integer_exponent(term)
    if k is not None and 0 < k <= _MAX_EXPANDED_POWER and term[2][0] in ("add", "mul"):
        base = _expand(term[2])
        result: dict[Monomial, Fraction] = {(): Fraction(1)}
        for _ in range(k):
            result = _times(result, base)
        return result
    return {(term,): Fraction(1)}


def _times(
    left: dict[Monomial, Fraction], right: dict[Monomial, Fraction]
) -> dict[Monomial, Fraction]:
    product: dict[Monomial, Fraction] = {}
    for m1, c1 in left.items():
        for m2, c2 in right.items():
            monomial = tuple(sorted(m1 + m2, key=terms.order_key))
            product[monomial] = product.get(monomial, Fraction(0)) + c1 * c2
    if len(product) > _MAX_MONOMIALS:
        raise Untranslatable("an exponential's argument expands into too many terms")
    return {m: c for m, c in product.items() if c}


def _links(term: Term) -> frozenset[str]:
    return terms.free_names(term) | {f"{f}()" for f in terms.free_functions(term)}


def relevant_facts(facts: Sequence[Term], goal: Term, hops: int | None) -> list[Term]:
    """The conjuncts of ``facts`` linked to ``goal`` by shared names within ``hops``.

    Leaving facts out can only make a proof fail, never make a false goal provable, so
    this is a sound way to keep z3's queries small.  ``hops=None`` keeps every fact.
    """
    conjuncts = [part for fact in facts for part in terms.conjuncts(fact)]
    if hops is None:
        return conjuncts
    reached = set(_links(goal))
    chosen: list[Term] = []
    taken: set[int] = set()
    for _ in range(hops):
        new = [(i, c) for i, c in enumerate(conjuncts) if i not in taken and _links(c) & reached]
        if not new:
            break
        for i, c in new:
            taken.add(i)
            chosen.append(c)
            reached |= _links(c)
    return chosen


def prove_with_z3(
    hypotheses: Sequence[Term], goal: Term, timeout_ms: int = 20_000
) -> tuple[str, str]:
    """Decide ``hypotheses ⇒ goal`` over the reals.

    A conjunction is proved part by part.  For each part, tries the facts nearest it
    first (one, then two hops of shared names, each with a short timeout), then all of
    them with the full timeout.  Returns ``("proved", detail)`` when the negated goal is
    unsatisfiable, otherwise ``("sat", counterexample)`` or ``("unknown", reason)``; only
    ``"proved"`` counts, and a counterexample is only reported from the attempt with
    every fact.
    """
    parts = terms.conjuncts(goal)
    verdict, detail = "proved", ""
    for part in parts:  # each conjunct on its own, with the facts relevant to it
        for hops, budget in ((1, 2_000), (2, 4_000), (None, timeout_ms)):
            verdict, detail = _decide(relevant_facts(hypotheses, part, hops), part, budget)
            if verdict == "proved":
                break
        if verdict != "proved":
            where = f" (in the part {terms.show(part)})" if len(parts) > 1 else ""
            return verdict, f"{detail}{where}"
    return "proved", "negated goal unsatisfiable (z3 nlsat)"


def _decide(hypotheses: Sequence[Term], goal: Term, timeout_ms: int) -> tuple[str, str]:
    try:
        target = terms.check_size(goal, "the goal")
    except terms.TermError as error:
        raise Untranslatable(str(error)) from None
    # a fact too large to translate is left out (that can only make the proof fail)
    facts = [h for h in hypotheses if terms.weight(h) <= terms.MAX_WEIGHT]
    positive, nonnegative = _signed(facts)
    translator = Translator(positive=positive, nonnegative=nonnegative)
    solver = z3.Solver(ctx=translator.ctx)
    # The budget is z3's resource count, not the clock, so that a verdict does not depend
    # on how busy the machine is; the clock only stops a pathological search.
    solver.set("rlimit", timeout_ms * RLIMIT_PER_MS)
    # ... and never past a running budget's deadline (recheck's): z3's C code cannot be
    # interrupted by the budget's alarm, only stopped by its own timeout
    left = remaining_budget_ms()
    wall = timeout_ms * WALL_CLOCK_FACTOR
    solver.set("timeout", wall if left is None else min(wall, left))
    for fact in facts:  # the facts first: z3's variable order follows them
        try:
            solver.add(translator.formula(fact))
        except Untranslatable:
            continue  # a fact left out can only make the proof fail
    solver.add(z3.Not(translator.formula(target)))
    solver.add(*translator.side_conditions)
    verdict = solver.check()
    if verdict == z3.unsat:
        return "proved", "negated goal unsatisfiable (z3 nlsat)"
    opaque = ""
    if translator.unknown_bases:
        opaque = "; opaque to z3, a power whose base is not stated positive: " + ", ".join(
            translator.unknown_bases
        )
    if verdict == z3.sat:
        return "sat", f"counterexample: {solver.model()}{opaque}"
    if budget_spent():  # z3 stopped at the budget's deadline: the budget ran out, say so
        raise BudgetExceeded("the decision ran past its time budget")
    return "unknown", f"z3 returned unknown: {solver.reason_unknown()}{opaque}"
