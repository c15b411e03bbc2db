"""Formulas exported from their one sympy definition: LaTeX, numpy and mpmath.

Later layers never retype a formula: they take :attr:`Formula.numpy` or
:attr:`Formula.mpmath` from here, and the docs take :attr:`Formula.latex`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any

import sympy as sp

__all__ = [
    "DOMAINS",
    "FORMULAS",
    "MAX_DIGITS",
    "Formula",
    "exact_value",
    "formula",
    "parameter_value",
]

DOMAINS: dict[str, tuple[str, Callable[[sp.Rational], bool]]] = {
    "n": ("an integer >= 1", lambda v: bool(v.is_integer and v >= 1)),
    "theta": ("a number > 0", lambda v: bool(v > 0)),
    "beta": ("a number > 0", lambda v: bool(v > 0)),
    "delta": ("a number >= 0", lambda v: bool(v >= 0)),
    "epsilon": ("a number strictly between 0 and 1", lambda v: bool(0 < v < 1)),
    "s": ("a number > 0", lambda v: bool(v > 0)),
}
"""The admissible values of the named parameters, for checking user input."""

MAX_DIGITS = 4300
"""The most digits a number read from text may have in its numerator or denominator:
Python's default limit for converting integers to text, so that every value read can be
printed; an exponent is checked before the number is built (``1e99999999`` would take
minutes to build)."""


def exact_value(name: str, value: object) -> Fraction:
    """Read ``value`` as an exact fraction and check it against ``name``'s domain.

    This is the one reader of user-given numbers for every layer and the command line.
    Floats (and numpy's floating scalars) are read as the exact binary numbers they are
    (``0.1`` is ``3602879701896397/36028797018963968``); decimal strings as written
    (``"0.1"`` is ``1/10``).  Names in :data:`DOMAINS` are checked against their domain
    (``n`` an integer >= 1, ``theta`` > 0, ...); other names only need a finite number.

    Raises
    ------
    ValueError
        For a non-finite value or one outside the domain, naming the parameter.

    Examples
    --------
    >>> exact_value("delta", "2.5"), exact_value("n", 10**18)
    (Fraction(5, 2), Fraction(1000000000000000000, 1))
    >>> exact_value("theta", 0)
    Traceback (most recent call last):
    ...
    ValueError: theta must be a number > 0, got 0
    """
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if isinstance(value, Fraction):
        exact = value
    elif isinstance(value, numbers.Integral):
        exact = Fraction(int(value))
    elif isinstance(value, sp.Rational):
        exact = Fraction(int(value.p), int(value.q))
    elif isinstance(value, numbers.Real):  # float, numpy floating scalars
        as_float = float(value)
        if not math.isfinite(as_float):
            raise ValueError(f"{name} must be a finite number, got {value}")
        exact = Fraction(as_float)
    else:
        exact = _from_text(name, str(value).strip().replace("_", ""))
    if name in DOMAINS:
        expected, admissible = DOMAINS[name]
        if not admissible(sp.Rational(exact.numerator, exact.denominator)):
            raise ValueError(f"{name} must be {expected}, got {value}")
    return exact


def _from_text(name: str, text: str) -> Fraction:
    """``text`` read exactly, refusing more than :data:`MAX_DIGITS` digits before building it."""
    shown = repr(text) if len(text) <= 40 else f"{text[:20]!r}… ({len(text)} characters)"
    too_long = ValueError(f"{name} must have at most {MAX_DIGITS} digits, got {shown}")
    exponent = text.lower().partition("e")[2].lstrip("+-")
    if len(text) > 2 * MAX_DIGITS or (exponent.isdigit() and len(exponent) > 5):
        raise too_long
    try:
        exact = Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{name} must be a finite number, got {shown}") from None
    if max(abs(exact.numerator), exact.denominator) >= 10**MAX_DIGITS:
        raise too_long
    return exact


def parameter_value(name: str, value: object) -> sp.Rational:
    """:func:`exact_value` as a sympy rational, for substituting into the claims.

    Examples
    --------
    >>> parameter_value("epsilon", "0.01")
    1/100
    """
    exact = exact_value(name, value)
    return sp.Rational(exact.numerator, exact.denominator)


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
        return str(sp.latex(self.expr))

    @cached_property
    def numpy(self) -> Callable[..., Any]:
        """A numpy function of :attr:`args` (vectorised, float64)."""
        function: Callable[..., Any] = sp.lambdify(self.args, self.expr, modules="numpy")
        return function

    @cached_property
    def mpmath(self) -> Callable[..., Any]:
        """An mpmath function of :attr:`args`; honours the caller's working precision.

        Arguments are converted with ``mpmath.mpmathify`` first, so that Python ints
        and floats never drag the evaluation into float arithmetic.
        """
        import mpmath

        evaluate = sp.lambdify(self.args, self.expr, modules="mpmath")

        def at_working_precision(*values: Any) -> Any:
            return evaluate(*(mpmath.mpmathify(v) for v in values))

        return at_working_precision

    def __call__(self, **values: Any) -> sp.Expr:
        """Substitute parameters by name, exactly, after checking their domains.

        ``dispersion_upper(n=16, delta=5, theta=1)`` gives ``exp(5)/(exp(5) + 15)``;
        ``theta=0`` raises :class:`ValueError` naming ``theta``.
        """
        by_name = {str(arg): arg for arg in self.args}
        unknown = set(values) - set(by_name)
        if unknown:
            raise TypeError(f"{self.name} takes {sorted(by_name)}, not {sorted(unknown)}")
        exact = {by_name[k]: parameter_value(k, v) for k, v in values.items()}
        return self.expr.xreplace(exact)


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
