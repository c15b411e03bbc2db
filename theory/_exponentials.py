"""Exponentials as powers of positive symbols: the substitution ``t = exp(.)``."""

from __future__ import annotations

from collections.abc import Callable

import sympy as sp

__all__ = ["exp_to_rational"]


def _never(_: sp.Expr) -> bool:
    return False


def exp_to_rational(
    expr: sp.Basic,
    generators: dict[sp.Expr, sp.Symbol] | None = None,
    positive: Callable[[sp.Expr], bool] = _never,
) -> tuple[sp.Basic, dict[sp.Symbol, sp.Expr]]:
    """Replace every ``exp(a)`` by a product of powers of positive symbols ``t_g``.

    The argument of each ``exp`` is expanded into a sum of ``k * g`` with integer ``k``;
    each distinct generator ``g`` gets a fresh positive symbol ``t_g = exp(g)``.  Returns
    the new expression and the map from the symbols back to ``exp(g)``.

    Two rewritings need a positive base, which ``positive`` must confirm (it is the
    caller's proof obligation; by default nothing is known to be positive):

    * a power ``b**y`` with a symbolic exponent becomes ``exp(y log b)``;
    * a generator ``log(x)`` is replaced by ``x`` itself (``exp(k log x) = x**k``).

    Otherwise the power stays as it is and ``log(x)`` stays a generator like any other.
    Pass the same ``generators`` dictionary to several calls to share the symbols.
    Treating the generators as independent is sound for proofs (it forgets relations
    between them, never invents one).

    Examples
    --------
    >>> import sympy as sp
    >>> a, b = sp.symbols("a b", real=True)
    >>> rational, back = exp_to_rational(sp.exp(2 * a - b))
    >>> sorted(back.values(), key=str)
    [exp(a), exp(b)]
    >>> rational.subs(back) == sp.exp(a) ** 2 / sp.exp(b)
    True

    ``exp(a + log b)`` is ``b·exp(a)`` only for ``b > 0``:

    >>> product = sp.exp(a + sp.log(b), evaluate=False)
    >>> exp_to_rational(product, positive=lambda x: x == b)[0].has(b)
    True
    >>> exp_to_rational(product)[0].has(b)
    False
    """
    generators = {} if generators is None else generators

    def replace(atom: sp.Expr) -> sp.Expr:
        result: sp.Expr = sp.Integer(1)
        for term in sp.Add.make_args(sp.expand(atom.args[0])):
            coeff, generator = term.as_coeff_Mul()
            if not coeff.is_Rational:
                coeff, generator = sp.Integer(1), term
            if coeff.q != 1:  # exp(x/2) -> t_{x/2}, keeping integer powers
                generator, coeff = generator * sp.Rational(1, coeff.q), sp.Integer(coeff.p)
            if isinstance(generator, sp.log) and positive(generator.args[0]):
                result *= generator.args[0] ** coeff  # exp(k log x) = x**k for x > 0
                continue
            if generator not in generators:
                generators[generator] = sp.Dummy(f"t{len(generators)}", positive=True)
            result *= generators[generator] ** coeff
        return result

    expr = expr.replace(
        lambda e: (
            e.is_Pow and not e.exp.is_Integer and bool(e.exp.free_symbols) and positive(e.base)
        ),
        lambda e: sp.exp(e.exp * sp.log(e.base)),
    )
    expr = expr.replace(lambda e: isinstance(e, sp.exp), replace)
    if expr.has(sp.E):  # sympy writes exp(1) as the constant E
        expr = expr.xreplace({sp.E: replace(sp.exp(1, evaluate=False))})
    return expr, {t: sp.exp(g) for g, t in generators.items()}
