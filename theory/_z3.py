"""Translation of sympy formulas into z3's real arithmetic.

Only the field operations, integer powers, ``Max``, ``Min`` and ``Piecewise`` are
translated exactly.  Every other
subterm (``exp(...)``, ``log(...)``, a power with a symbolic exponent, an applied
function) becomes a fresh *opaque* real variable, the same variable for the same
subterm.  Forgetting what such a term means is sound for proving: if the negated goal
is unsatisfiable with the term left free, it is unsatisfiable for its true value too.
Exponentials are first rewritten by :func:`exp_to_rational` (one positive variable per
linear generator of their arguments, shared by all formulas of one query), so that
``exp(-x) = 1/exp(x)`` and ``exp(a - b) = exp(a)/exp(b)`` are known to z3.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp
import z3
from sympy.core.function import AppliedUndef

from softmax_dispersion.theory._exponentials import exp_to_rational


@dataclass
class Z3Translator:
    """Map sympy expressions to z3 terms, remembering the opaque subterms."""

    variables: dict[sp.Basic, z3.ArithRef] = field(default_factory=dict)
    side_conditions: list[z3.BoolRef] = field(default_factory=list)

    def term(self, expr: sp.Basic) -> z3.ArithRef:
        """Translate an arithmetic sympy expression."""
        expr = sp.sympify(expr)
        if expr.is_Rational:
            return z3.RealVal(f"{expr.p}/{expr.q}")
        if expr.is_Symbol:
            return self._variable(expr)
        if expr.is_Add:
            return z3.Sum([self.term(a) for a in expr.args])
        if expr.is_Mul:
            return z3.Product([self.term(a) for a in expr.args])
        if isinstance(expr, (sp.Max, sp.Min)):
            pick = (
                (lambda a, b: z3.If(a >= b, a, b))
                if isinstance(expr, sp.Max)
                else (lambda a, b: z3.If(a <= b, a, b))
            )
            terms = [self.term(a) for a in expr.args]
            result = terms[0]
            for other in terms[1:]:
                result = pick(result, other)
            return result
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
            base = self.term(expr.base)
            k = int(expr.exp)
            power = z3.Product([base] * abs(k)) if k else z3.RealVal(1)
            return power if k >= 0 else 1 / power
        return self._opaque(expr)

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
            if isinstance(expr, kind):
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
            if isinstance(symbol, sp.Dummy) and symbol.is_positive:  # t = exp(.)
                self.side_conditions.append(var > 0)
        return self.variables[symbol]

    def _opaque(self, expr: sp.Basic) -> z3.ArithRef:
        if expr not in self.variables:
            var = z3.Real(f"opaque{len(self.variables)}[{expr}]")
            self.variables[expr] = var
            if isinstance(expr, sp.exp) or expr.is_positive:
                self.side_conditions.append(var > 0)
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

    def rational(formula: sp.Basic) -> sp.Basic:
        # Limits, derivatives and unknown functions are opaque as wholes: nothing
        # inside them is rewritten, so equal ones stay equal.
        formula = sp.sympify(formula).replace(
            lambda e: isinstance(e, (sp.Limit, sp.Derivative, AppliedUndef)), freeze
        )
        return exp_to_rational(formula, generators)[0]

    translator = Z3Translator()
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    for fact in hypotheses:
        solver.add(translator.formula(rational(fact)))
    solver.add(z3.Not(translator.formula(rational(goal))))
    solver.add(*translator.side_conditions)
    verdict = solver.check()
    if verdict == z3.unsat:
        return "proved", "negated goal unsatisfiable (z3 nlsat)"
    if verdict == z3.sat:
        return "sat", f"counterexample: {solver.model()}"
    return "unknown", f"z3 returned unknown: {solver.reason_unknown()}"
