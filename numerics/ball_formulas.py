"""Certified evaluation of the theory layer's sympy formulas in ball arithmetic.

Every bound the numerics layer checks is the theory layer's own exported expression
(:class:`~softmax_dispersion.theory.formulas.Formula`), never a retyped copy.
:func:`ball_value` walks the expression tree and evaluates each node in the engine's
ball (arb) or interval (mpmath) arithmetic, so the result provably contains the exact
value of the formula at the given exact arguments.

The helpers :func:`interval_ball` and :func:`ball_enclosure` convert between balls and
the exact :class:`~softmax_dispersion.numerics.evaluate.Enclosure` intervals that
:func:`~softmax_dispersion.numerics.evaluate.certified_softmax` reports.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from softmax_dispersion.numerics import _dyadic
from softmax_dispersion.numerics._backends import Backend
from softmax_dispersion.numerics.evaluate import Enclosure
from softmax_dispersion.numerics.rounding import Dyadic
from softmax_dispersion.theory.formulas import Formula, exact_value

if TYPE_CHECKING:
    import sympy as sp

__all__ = [
    "ball_enclosure",
    "ball_value",
    "certainly_greater",
    "certainly_less",
    "interval_ball",
]

#: Python types read as exact numbers by :func:`ball_value`; anything else is a ball.
_EXACT_TYPES = (int, float, Fraction, str)


def interval_ball(bk: Backend, lower: Dyadic, upper: Dyadic) -> Any:
    """A ball that contains the exact interval ``[lower, upper]``.

    Examples
    --------
    >>> from softmax_dispersion.numerics._backends import backend
    >>> bk = backend("mpmath")
    >>> bk.endpoints(interval_ball(bk, (1, -3), (3, -1)))
    ((1, -3), (3, -1))
    """
    if bk.name == "arb":
        from flint import arb, arf

        return arb(arf(lower)).union(arb(arf(upper)))
    from mpmath.libmp import from_man_exp

    # Raw exact endpoints (``from_man_exp`` without a precision does not round).
    return bk.number(0).ctx.make_mpf((from_man_exp(*lower), from_man_exp(*upper)))


def ball_enclosure(bk: Backend, ball: Any) -> Enclosure:
    """The exact interval of a finite ball, as an :class:`Enclosure` (no rounding).

    Raises
    ------
    ValueError
        For a ball that is not finite.
    """
    if not bk.is_finite(ball):
        raise ValueError(f"the enclosure is not finite: {ball}")
    lower, upper = bk.endpoints(ball)
    return Enclosure(lower, upper)


def certainly_less(bk: Backend, a: Any, b: Any) -> bool:
    """Whether every point of ball ``a`` lies below every point of ball ``b``."""
    return bool(_dyadic.compare(bk.endpoints(a)[1], bk.endpoints(b)[0]) < 0)


def certainly_greater(bk: Backend, a: Any, b: Any) -> bool:
    """Whether every point of ball ``a`` lies above every point of ball ``b``."""
    return certainly_less(bk, b, a)


def _hull(bk: Backend, a: Any, b: Any) -> Any:
    (la, ua), (lb, ub) = bk.endpoints(a), bk.endpoints(b)
    return interval_ball(bk, _dyadic.minimum(la, lb), _dyadic.maximum(ua, ub))


def _sign(bk: Backend, ball: Any) -> int | None:
    """1, −1 or 0 when the sign is certain (0 only for the exact zero), else None."""
    lower, upper = bk.endpoints(ball)
    if lower[0] > 0:
        return 1
    if upper[0] < 0:
        return -1
    if lower[0] == 0 and upper[0] == 0:
        return 0
    return None


class _Evaluator:
    """One walk of one expression at the backend's current working precision."""

    def __init__(
        self, bk: Backend, values: Mapping[str, Any], exact: Mapping[str, Fraction]
    ) -> None:
        self.bk = bk
        self.values = values
        self.exact = exact

    def ball(self, expr: Any) -> Any:
        import sympy as sp

        bk = self.bk
        if isinstance(expr, sp.Symbol):
            return self.values[expr.name]
        if isinstance(expr, sp.Rational):  # Integer, Rational, and the singletons 0, 1, 1/2
            return bk.number(Fraction(int(expr.p), int(expr.q)))
        if expr is sp.E:
            return bk.exp(bk.number(1))
        if isinstance(expr, sp.Add):
            total = self.ball(expr.args[0])
            for term in expr.args[1:]:
                total = total + self.ball(term)
            return total
        if isinstance(expr, sp.Mul):
            product = self.ball(expr.args[0])
            for factor in expr.args[1:]:
                product = product * self.ball(factor)
            return product
        if isinstance(expr, sp.Pow):
            return self.power(expr.base, expr.exp)
        if isinstance(expr, sp.exp):
            return bk.exp(self.ball(expr.args[0]))
        if isinstance(expr, sp.log):
            if len(expr.args) != 1:
                raise TypeError(f"log with a base is not supported: {expr}")
            argument = self.ball(expr.args[0])
            if _sign(bk, argument) != 1:
                raise ValueError(f"log of a ball that is not certainly positive: {expr}")
            return bk.log(argument)
        if isinstance(expr, sp.Piecewise):
            return self.piecewise(expr)
        if isinstance(expr, (sp.Max, sp.Min)):
            return self.extremum(expr)
        if isinstance(expr, sp.polys.rootoftools.ComplexRootOf):
            return self.root(expr)
        if isinstance(expr, (sp.floor, sp.ceiling)):
            return self.integer_part(expr)
        if type(expr).__name__ == "log2" and len(expr.args) == 1:  # sympy.codegen's log2
            return self.ball(sp.log(expr.args[0])) / bk.log(bk.number(2))
        raise TypeError(f"cannot evaluate {type(expr).__name__} nodes in ball arithmetic: {expr}")

    def power(self, base: Any, exponent: Any) -> Any:
        import sympy as sp

        bk = self.bk
        value = self.ball(base)
        if isinstance(exponent, sp.Integer):
            k = int(exponent)
            result = bk.number(1)
            square = value
            for bit in bin(abs(k))[:1:-1]:  # binary powering, exact for exact balls
                if bit == "1":
                    result = result * square
                square = square * square
            return result if k >= 0 else bk.number(1) / result
        if _sign(bk, value) != 1:
            raise ValueError(f"a non-integer power needs a certainly positive base: {base}")
        return bk.exp(self.ball(exponent) * bk.log(value))

    def condition(self, relation: Any) -> bool | None:
        """True, False, or None when the relation is undecided on the balls."""
        import sympy as sp

        if relation is sp.true:
            return True
        if relation is sp.false:
            return False
        if isinstance(relation, sp.And):
            parts = [self.condition(a) for a in relation.args]
            return False if False in parts else (None if None in parts else True)
        if isinstance(relation, sp.Or):
            parts = [self.condition(a) for a in relation.args]
            return True if True in parts else (None if None in parts else False)
        if not isinstance(relation, sp.core.relational.Relational):
            raise TypeError(f"cannot decide {relation} in ball arithmetic")
        sign = _sign(self.bk, self.ball(relation.lhs) - self.ball(relation.rhs))
        if sign is None:
            return None
        decide = {
            sp.StrictGreaterThan: sign > 0,
            sp.GreaterThan: sign >= 0,
            sp.StrictLessThan: sign < 0,
            sp.LessThan: sign <= 0,
            sp.Equality: sign == 0,
            sp.Unequality: sign != 0,
        }
        return decide[type(relation)]

    def piecewise(self, expr: Any) -> Any:
        """The first branch whose condition holds; the hull of the candidates if undecided."""
        candidates = []
        for value, relation in expr.args:
            holds = self.condition(relation)
            if holds is False:
                continue
            candidates.append(self.ball(value))
            if holds:
                break
        else:
            if not candidates:
                raise ValueError(f"no branch of {expr} applies")
        result = candidates[0]
        for other in candidates[1:]:
            result = _hull(self.bk, result, other)
        return result

    def extremum(self, expr: Any) -> Any:
        """Max or Min: the certainly extreme argument, else the exact interval of the extremum."""
        import sympy as sp

        bk = self.bk
        balls = [self.ball(a) for a in expr.args]
        largest = isinstance(expr, sp.Max)
        for candidate in balls:  # one argument dominating all others: return it exactly
            low, high = bk.endpoints(candidate)
            if all(
                other is candidate
                or (
                    _dyadic.compare(bk.endpoints(other)[1], low) <= 0
                    if largest
                    else _dyadic.compare(bk.endpoints(other)[0], high) >= 0
                )
                for other in balls
            ):
                return candidate
        ends = [bk.endpoints(b) for b in balls]
        pick = _dyadic.maximum if largest else _dyadic.minimum
        lower, upper = ends[0]
        for low, high in ends[1:]:
            lower, upper = pick(lower, low), pick(upper, high)
        return interval_ball(bk, lower, upper)

    def integer_part(self, expr: Any) -> Any:
        """floor or ceiling: exact when the ball or, failing that, sympy decides it."""
        import sympy as sp

        bk = self.bk
        rounding = math.floor if isinstance(expr, sp.floor) else math.ceil
        low, high = (rounding(_fraction(end)) for end in bk.endpoints(self.ball(expr.args[0])))
        if low == high:
            return bk.number(low)
        symbols = {str(symbol) for symbol in expr.free_symbols}
        if symbols <= set(self.exact):
            substitution = {
                symbol: sp.Rational(
                    self.exact[str(symbol)].numerator, self.exact[str(symbol)].denominator
                )
                for symbol in expr.free_symbols
            }
            value = expr.xreplace(substitution)
            if value.is_Integer:
                return bk.number(int(value))
        return _hull(bk, bk.number(low), bk.number(high))

    def root(self, expr: Any) -> Any:
        """A real algebraic number (sympy ``CRootOf``): its certified rational isolation."""
        import sympy as sp

        if not expr.is_real:
            raise ValueError(f"only real roots are supported: {expr}")
        bits = _current_precision(self.bk) + 16
        radius = sp.Rational(1, 2**bits)
        centre = expr.eval_rational(dx=radius)  # |root − centre| <= radius (bisection)
        low, high = (Fraction(int(q.p), int(q.q)) for q in (centre - radius, centre + radius))
        return _hull(self.bk, self.bk.number(low), self.bk.number(high))


def _fraction(value: Dyadic) -> Fraction:
    """A dyadic of moderate exponent as a fraction (integer parts only need those)."""
    mantissa, exponent = value
    if abs(exponent) > 100_000:
        raise ValueError("the argument of floor/ceiling is too large or too small to round")
    return Fraction(mantissa) * Fraction(2) ** exponent


def _current_precision(bk: Backend) -> int:
    """The engine's working precision in bits (set by ``bk.working_precision``)."""
    if bk.name == "arb":
        import flint

        return int(flint.ctx.prec)
    return int(bk.number(0).ctx.prec)


def _symbol_names(target: Formula | sp.Expr) -> tuple[sp.Expr, set[str]]:
    if isinstance(target, Formula):
        return target.expr, {str(arg) for arg in target.args}
    return target, {str(symbol) for symbol in target.free_symbols}


def ball_value(
    target: Formula | sp.Expr,
    bk: Backend,
    *,
    precision: int | None = None,
    **values: Any,
) -> Any:
    """Evaluate a theory formula (or any sympy expression) as a certified ball.

    Parameters
    ----------
    target
        A :class:`~softmax_dispersion.theory.formulas.Formula` or a sympy expression
        built from ``+``, ``×``, powers, ``exp``, ``log``, ``log2``, ``floor``,
        ``ceiling``, rationals, ``Piecewise``, ``Max``/``Min`` and real algebraic
        numbers (``CRootOf``).
    bk
        The engine (:func:`~softmax_dispersion.numerics._backends.backend`).
    precision
        Working precision in bits; the engine's current precision when None.
    **values
        The value of every symbol, by name: exact numbers (int, float, Fraction,
        decimal string, sympy Rational), read exactly and checked against the
        parameter's domain, or balls of the same engine (taken as they are).

    Returns
    -------
    Any
        A ball (``flint.arb`` or an mpmath interval) that contains the exact value.

    Raises
    ------
    TypeError
        For a node type that has no ball rule, or values not matching the symbols.
    ValueError
        For an argument outside its domain, a logarithm or real power of a ball not
        certainly positive, or no applicable ``Piecewise`` branch.

    Notes
    -----
    Each node is evaluated by its ball rule: sums and products of balls, integer powers
    by repeated squaring, other powers as ``exp(b·log a)`` for ``a > 0``, ``exp`` and
    ``log`` by the engine.  A ``Piecewise`` condition is decided from the ball of
    ``lhs − rhs``; when undecided, the result is the hull of the branches that may
    apply.  ``Max(a, b)`` is ``a`` exactly when ``a`` certainly dominates (so the
    adaptive rule's ``max(P(H), 1)`` is exactly 1 once ``P(H) <= 1`` is certain), else
    the interval ``[max(lo), max(hi)]``.  A ``CRootOf`` is enclosed by refining its
    isolating interval with sympy's exact bisection.  ``floor``/``ceiling`` are exact
    when the ball lies between two integers, else decided by sympy on the exact
    arguments (``⌈log2 1024⌉ = 10``), else the hull of the candidates.

    Examples
    --------
    >>> from softmax_dispersion.numerics._backends import backend
    >>> from softmax_dispersion.theory.dispersion import dispersion_upper
    >>> bk = backend("mpmath")
    >>> ball = ball_value(dispersion_upper, bk, precision=113, n=16, delta=5, theta=1)
    >>> enclosure = ball_enclosure(bk, ball)
    >>> enclosure.midpoint()
    0.9082081266748885
    >>> enclosure.contains(Fraction(9082081266748885, 10**16))
    False
    """
    expr, names = _symbol_names(target)
    missing, unknown = names - set(values), set(values) - names
    if missing or unknown:
        raise TypeError(
            f"{getattr(target, 'name', 'the expression')} takes {sorted(names)}; "
            f"missing {sorted(missing)}, unexpected {sorted(unknown)}"
        )

    def evaluate() -> Any:
        exact = {name: exact_value(name, v) for name, v in values.items() if _is_exact(v)}
        balls = {name: bk.number(exact[name]) if name in exact else v for name, v in values.items()}
        return _Evaluator(bk, balls, exact).ball(expr)

    if precision is None:
        return evaluate()
    with bk.working_precision(precision):
        return evaluate()


def _is_exact(value: object) -> bool:
    import sympy as sp

    return isinstance(value, (*_EXACT_TYPES, sp.Rational))
