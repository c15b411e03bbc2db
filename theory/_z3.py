"""Translation of sympy formulas into z3's real arithmetic, assuming nothing it does not know.

The field operations, integer powers, ``Abs``, ``Max``, ``Min`` and ``Piecewise`` are
translated exactly.  Exponentials are first rewritten by :func:`exp_to_rational` (one
positive variable per linear generator of their arguments, shared by all formulas of one
query), so that ``exp(-x) = 1/exp(x)`` and ``exp(a - b) = exp(a)/exp(b)`` are known to z3;
those variables, and nothing else, are known to be positive.

What needs a sign is given one only when a hypothesis states it, as a conjunct
``b > 0`` (or ``b >= 0``) of the hypotheses, word for word:

* a power ``b**y`` with a symbolic exponent is ``exp(y log b)`` (a positive variable)
  only for a positive base, and ``exp(k log b) = b**k`` only for a positive ``b``;
* a fractional power ``b**(p/q)`` is the variable ``s >= 0`` with ``s**q = b**p`` only
  for ``b >= 0`` (``b > 0`` when ``p < 0``).

Every other subterm (``log(...)``, such powers without a known base, a limit, a
derivative, an applied function) becomes an *opaque* real variable without a sign, the
same variable for the same subterm.  Forgetting what such a term means is sound for
proving: if the negated goal is unsatisfiable with the term left free, it is
unsatisfiable for its true value too, and for every value a partial operation outside
its domain may stand for.  A division by zero is z3's own unspecified value, which is
that same reading.  Non-real numbers, floats and infinities are refused
(:class:`TypeError`), never translated.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import sympy as sp
import z3
from sympy.core.function import AppliedUndef

from softmax_dispersion.theory._exponentials import exp_to_rational

__all__ = ["prove_with_z3", "relevant_facts"]


def _signed(hypotheses: Iterable[sp.Basic]) -> tuple[set[sp.Basic], set[sp.Basic]]:
    """The expressions stated positive, and those stated non-negative, by a conjunct."""
    positive: set[sp.Basic] = set()
    nonnegative: set[sp.Basic] = set()
    for fact in hypotheses:
        for part in sp.And.make_args(fact):
            if isinstance(part, (sp.StrictGreaterThan, sp.GreaterThan)) and part.rhs == 0:
                side = part.lhs
            elif isinstance(part, (sp.StrictLessThan, sp.LessThan)) and part.lhs == 0:
                side = part.rhs
            else:
                continue
            strict = isinstance(part, (sp.StrictGreaterThan, sp.StrictLessThan))
            (positive if strict else nonnegative).add(side)
    return positive, nonnegative | positive


def _positive_constant(expr: sp.Basic) -> bool:
    return (expr.is_Rational and expr > 0) or expr is sp.pi or expr is sp.E


@dataclass
class Z3Translator:
    """Map sympy expressions to z3 terms, remembering the opaque subterms."""

    positive_symbols: set[sp.Basic] = field(default_factory=set)
    positive: set[sp.Basic] = field(default_factory=set)
    nonnegative: set[sp.Basic] = field(default_factory=set)
    variables: dict[sp.Basic, z3.ArithRef] = field(default_factory=dict)
    side_conditions: list[z3.BoolRef] = field(default_factory=list)
    unknown_bases: list[str] = field(default_factory=list)

    def _is_positive(self, base: sp.Basic) -> bool:
        return base in self.positive or _positive_constant(base)

    def _is_nonnegative(self, base: sp.Basic) -> bool:
        return base in self.nonnegative or self._is_positive(base)

    def term(self, expr: sp.Basic) -> z3.ArithRef:
        """Translate an arithmetic sympy expression."""
        expr = sp.sympify(expr)
        if isinstance(expr, sp.Float) or expr.has(sp.I, sp.zoo, sp.nan, sp.oo, -sp.oo):
            raise TypeError(f"not an exact real expression: {expr}")
        if expr.is_Rational:
            return z3.RealVal(f"{expr.p}/{expr.q}")
        if expr.is_Symbol:
            return self._variable(expr)
        if expr is sp.pi:
            return self._bounded(expr, sp.Rational(314, 100), sp.Rational(315, 100))
        if expr.is_Add:
            return z3.Sum([self.term(a) for a in expr.args])
        if expr.is_Mul:
            return z3.Product([self.term(a) for a in expr.args])
        if isinstance(expr, (sp.Max, sp.Min)):
            terms = [self.term(a) for a in expr.args]
            result = terms[0]
            for other in terms[1:]:
                if isinstance(expr, sp.Max):
                    result = z3.If(result >= other, result, other)
                else:
                    result = z3.If(result <= other, result, other)
            return result
        if isinstance(expr, sp.Abs):
            inner = self.term(expr.args[0])
            return z3.If(inner >= 0, inner, -inner)
        if isinstance(expr, sp.Piecewise):
            otherwise: z3.ArithRef | None = None
            for value, condition in reversed(expr.args):
                if condition is sp.true:
                    otherwise = self.term(value)
                elif otherwise is None:
                    raise TypeError(f"piecewise without a default branch: {expr}")
                else:
                    otherwise = z3.If(self.formula(condition), self.term(value), otherwise)
            assert otherwise is not None
            return otherwise
        if expr.is_Pow and expr.exp.is_Integer:
            k = int(expr.exp)
            if abs(k) > 100_000:
                raise TypeError(f"a power too large to expand: {expr}")
            base = self.term(expr.base)
            power = z3.Product([base] * abs(k)) if k else z3.RealVal(1)
            return power if k >= 0 else 1 / power
        if expr.is_Pow and expr.exp.is_Rational:
            return self._root(expr)
        return self._opaque(expr)

    def _root(self, expr: sp.Pow) -> z3.ArithRef:
        """``b**(p/q)`` as ``s >= 0`` with ``s**q = b**p``, for a base of known sign."""
        p, q = int(expr.exp.p), int(expr.exp.q)
        if not (self._is_positive(expr.base) or (p > 0 and self._is_nonnegative(expr.base))):
            self._note_base(expr)
            return self._opaque(expr)
        if expr in self.variables:
            return self.variables[expr]
        root = z3.Real(f"root{len(self.variables)}[{expr}]")
        self.variables[expr] = root
        base = self.term(expr.base)
        power_of_root = z3.Product([root] * q)
        power_of_base = z3.Product([base] * abs(p))
        self.side_conditions.append(root >= 0)
        if p > 0:
            self.side_conditions.append(power_of_root == power_of_base)
        else:
            self.side_conditions.append(power_of_root * power_of_base == 1)
        return root

    def formula(self, expr: sp.Basic) -> z3.BoolRef:
        """Translate a sympy relational or boolean combination of relationals."""
        expr = sp.sympify(expr)
        if expr is sp.true:
            return z3.BoolVal(True)
        if expr is sp.false:
            return z3.BoolVal(False)
        relations = {
            sp.StrictLessThan: lambda a, b: a < b,
            sp.LessThan: lambda a, b: a <= b,
            sp.StrictGreaterThan: lambda a, b: a > b,
            sp.GreaterThan: lambda a, b: a >= b,
            sp.Equality: lambda a, b: a == b,
            sp.Unequality: lambda a, b: a != b,
        }
        for kind, build in relations.items():
            if type(expr) is kind:
                return build(self.term(expr.lhs), self.term(expr.rhs))
        if isinstance(expr, sp.And):
            return z3.And([self.formula(a) for a in expr.args])
        if isinstance(expr, sp.Or):
            return z3.Or([self.formula(a) for a in expr.args])
        if isinstance(expr, sp.Not):
            return z3.Not(self.formula(expr.args[0]))
        if isinstance(expr, sp.Implies):
            return z3.Implies(self.formula(expr.args[0]), self.formula(expr.args[1]))
        if isinstance(expr, sp.Equivalent):
            a, b = expr.args
            return self.formula(a) == self.formula(b)
        raise TypeError(f"cannot translate {expr!r} into a z3 formula")

    def _variable(self, symbol: sp.Basic) -> z3.ArithRef:
        if symbol not in self.variables:
            var = z3.Real(f"{symbol}#{len(self.variables)}")
            self.variables[symbol] = var
            if symbol in self.positive_symbols:  # t = exp(.), and only those
                self.side_conditions.append(var > 0)
        return self.variables[symbol]

    def _bounded(self, expr: sp.Basic, lo: sp.Rational, hi: sp.Rational) -> z3.ArithRef:
        var = self._opaque(expr)
        self.side_conditions += [
            var > z3.RealVal(f"{lo.p}/{lo.q}"),
            var < z3.RealVal(f"{hi.p}/{hi.q}"),
        ]
        return var

    def _note_base(self, expr: sp.Basic) -> None:
        note = f"{expr} (no stated sign for its base {expr.base})"
        if note not in self.unknown_bases:
            self.unknown_bases.append(note)

    def _opaque(self, expr: sp.Basic) -> z3.ArithRef:
        if expr.is_Pow and not expr.exp.is_Integer:
            self._note_base(expr)
        if expr not in self.variables:
            self.variables[expr] = z3.Real(f"opaque{len(self.variables)}[{expr}]")
        return self.variables[expr]


def relevant_facts(facts: list[sp.Basic], goal: sp.Basic, hops: int | None) -> list[sp.Basic]:
    """The conjuncts of ``facts`` linked to ``goal`` by shared symbols within ``hops``.

    Leaving facts out can only make a proof fail, never make a false goal provable, so
    this is a sound way to keep z3's queries small.  ``hops=None`` keeps every fact.
    """
    conjuncts = [c for fact in facts for c in sp.And.make_args(sp.sympify(fact))]
    if hops is None:
        return conjuncts
    reached = set(sp.sympify(goal).free_symbols)
    chosen: list[sp.Basic] = []
    for _ in range(hops):
        new = [c for c in conjuncts if c not in chosen and c.free_symbols & reached]
        if not new:
            break
        chosen += new
        for c in new:
            reached |= c.free_symbols
    return chosen


def prove_with_z3(
    hypotheses: list[sp.Basic], goal: sp.Basic, timeout_ms: int = 20_000
) -> tuple[str, str]:
    """Decide ``hypotheses ⇒ goal`` over the reals.

    A conjunction is proved part by part.  For each part, tries the facts nearest it
    first (one, then two hops of shared symbols, each with a short timeout), then all
    of them with the full timeout.  Returns
    ``("proved", detail)`` when the negated goal is unsatisfiable, otherwise
    ``("sat", counterexample)`` or ``("unknown", reason)``; only ``"proved"`` counts, and
    a counterexample is only reported from the attempt with every fact.
    """
    parts = sp.And.make_args(sp.sympify(goal))
    for part in parts:  # each conjunct on its own, with the facts relevant to it
        for hops, budget in ((1, 2_000), (2, 4_000), (None, timeout_ms)):
            verdict, detail = _decide(relevant_facts(hypotheses, part, hops), part, budget)
            if verdict == "proved":
                break
        if verdict != "proved":
            return verdict, f"{detail} (in the part {sp.sstr(part)})" if len(parts) > 1 else detail
    return "proved", "negated goal unsatisfiable (z3 nlsat)"


def _decide(hypotheses: list[sp.Basic], goal: sp.Basic, timeout_ms: int) -> tuple[str, str]:
    generators: dict[sp.Expr, sp.Symbol] = {}
    frozen: dict[sp.Basic, sp.Symbol] = {}

    def freeze(expr: sp.Basic) -> sp.Symbol:
        return frozen.setdefault(expr, sp.Dummy(f"frozen{len(frozen)}", real=True))

    def opaque_wholes(formula: sp.Basic) -> sp.Basic:
        # Limits, derivatives and unknown functions are opaque as wholes: nothing
        # inside them is rewritten, so equal ones stay equal.
        return sp.sympify(formula).replace(
            lambda e: isinstance(e, (sp.Limit, sp.Derivative, sp.Subs, AppliedUndef)), freeze
        )

    hypotheses = [opaque_wholes(h) for h in hypotheses]
    goal = opaque_wholes(goal)
    positive, nonnegative = _signed(hypotheses)

    def is_positive(base: sp.Expr) -> bool:
        return base in positive or _positive_constant(base) or isinstance(base, sp.exp)

    def rational(formula: sp.Basic) -> sp.Basic:
        return exp_to_rational(formula, generators, is_positive)[0]

    rational_hypotheses = [rational(h) for h in hypotheses]
    rational_goal = rational(goal)
    # The signs stated of bases, read again after the rewriting (a base may contain exp).
    translator = Z3Translator(
        positive_symbols=set(generators.values()),
        positive={rational(b) for b in positive},
        nonnegative={rational(b) for b in nonnegative},
    )
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    for fact in rational_hypotheses:
        solver.add(translator.formula(fact))
    solver.add(z3.Not(translator.formula(rational_goal)))
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
    return "unknown", f"z3 returned unknown: {solver.reason_unknown()}{opaque}"
