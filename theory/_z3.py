"""Translation of sympy formulas into z3's real arithmetic.

Only the field operations and integer powers are translated exactly.  Every other
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


def prove_with_z3(
    hypotheses: list[sp.Basic], goal: sp.Basic, timeout_ms: int = 20_000
) -> tuple[str, str]:
    """Decide ``hypotheses ⇒ goal`` over the reals.

    Returns ``("proved", detail)`` when the negated goal is unsatisfiable, otherwise
    ``("sat", counterexample)`` or ``("unknown", reason)``; only ``"proved"`` counts.
    """
    generators: dict[sp.Expr, sp.Symbol] = {}

    def rational(formula: sp.Basic) -> sp.Basic:
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
