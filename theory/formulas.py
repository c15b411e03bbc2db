"""Formulas exported from their one sympy definition: LaTeX, numpy and mpmath.

Later layers never retype a formula: they take :attr:`Formula.numpy` or
:attr:`Formula.mpmath` from here, and the docs take :attr:`Formula.latex`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import sympy as sp

__all__ = ["FORMULAS", "Formula", "formula"]


@dataclass(frozen=True)
class Formula:
    """A named sympy expression and its evaluators.

    Examples
    --------
    >>> import sympy as sp
    >>> x = sp.Symbol("x")
    >>> square = Formula("square", x**2, (x,), "a square")
    >>> square.latex
    'x^{2}'
    >>> float(square.numpy(3.0)), square.mpmath(3)
    (9.0, mpf('9.0'))
    """

    name: str
    expr: sp.Expr
    args: tuple[sp.Symbol, ...]
    description: str

    @property
    def latex(self) -> str:
        """The formula in LaTeX, as sympy prints it."""
        return sp.latex(self.expr)

    @cached_property
    def numpy(self) -> Callable[..., Any]:
        """A numpy function of :attr:`args` (vectorised, float64)."""
        return sp.lambdify(self.args, self.expr, modules="numpy")

    @cached_property
    def mpmath(self) -> Callable[..., Any]:
        """An mpmath function of :attr:`args`; honours the caller's working precision."""
        return sp.lambdify(self.args, self.expr, modules="mpmath")

    def __call__(self, **values: Any) -> sp.Expr:
        """Substitute symbols by name, exactly (``formula(n=16, delta=5, theta=1)``)."""
        by_name = {str(arg): arg for arg in self.args}
        unknown = set(values) - set(by_name)
        if unknown:
            raise TypeError(f"{self.name} takes {sorted(by_name)}, not {sorted(unknown)}")
        return self.expr.subs({by_name[k]: sp.sympify(v) for k, v in values.items()})


FORMULAS: dict[str, Formula] = {}
"""Every exported formula by name; filled by the claim modules as they are imported."""


def formula(name: str, expr: sp.Expr, args: tuple[sp.Symbol, ...], description: str) -> Formula:
    """Define and register a formula; one name, one expression.

    Defining the same formula again (a module run as a script after being imported)
    returns the registered one; a different expression under a taken name is an error.
    """
    new = Formula(name, sp.sympify(expr), args, description)
    old = FORMULAS.setdefault(name, new)
    if (old.expr, old.args) != (new.expr, new.args):
        raise ValueError(f"formula {name!r} is defined twice, differently")
    return old
