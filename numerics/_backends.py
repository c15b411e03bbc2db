"""Ball and interval arithmetic behind one small interface.

Two engines evaluate the same formulas: python-flint's ``arb`` balls (fast; optional)
and mpmath's interval arithmetic (pure Python, any precision).  Each engine works at a
precision set locally for one evaluation; neither touches a global precision setting.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from fractions import Fraction
from importlib.util import find_spec
from typing import Any, Protocol

from softmax_dispersion.numerics.rounding import Dyadic

__all__ = [
    "DEFAULT_MAX_PRECISION",
    "ArbBackend",
    "Backend",
    "MpmathBackend",
    "backend",
    "flint_available",
]

Number = int | float | Fraction

DEFAULT_MAX_PRECISION = 1 << 16
"""The default cap on the working precision of either engine, in bits."""


class Backend(Protocol):
    """What the evaluation needs from an engine; ``Ball`` values support + − × ÷."""

    name: str

    def working_precision(self, bits: int) -> contextlib.AbstractContextManager[None]:
        """Evaluate with ``bits`` of working precision inside the block."""
        ...

    def number(self, value: Number) -> Any:
        """An exact ball (or a tight one for a fraction that is not dyadic)."""
        ...

    def exp(self, x: Any) -> Any: ...

    def log(self, x: Any) -> Any: ...

    def endpoints(self, x: Any) -> tuple[Dyadic, Dyadic]:
        """The exact lower and upper ends of a finite ball."""
        ...

    def is_finite(self, x: Any) -> bool: ...


def flint_available() -> bool:
    """Whether python-flint can be imported (without importing it)."""
    return find_spec("flint") is not None


class ArbBackend:
    """python-flint ``arb`` balls."""

    name = "arb"

    def __init__(self) -> None:
        import flint

        self._flint = flint

    @contextlib.contextmanager
    def working_precision(self, bits: int) -> Iterator[None]:
        with self._flint.ctx.workprec(bits):
            yield

    def number(self, value: Number) -> Any:
        arb = self._flint.arb
        if isinstance(value, Fraction):
            return arb(value.numerator) / arb(value.denominator)
        if isinstance(value, float):
            mantissa, denominator = value.as_integer_ratio()
            return arb(mantissa) / arb(denominator)  # a power of two: exact
        return arb(value)

    def exp(self, x: Any) -> Any:
        return x.exp()

    def log(self, x: Any) -> Any:
        return x.log()

    def endpoints(self, x: Any) -> tuple[Dyadic, Dyadic]:
        def exact(point: Any) -> Dyadic:
            mantissa, exponent = point.man_exp()
            return int(mantissa), int(exponent)

        return exact(x.lower()), exact(x.upper())

    def is_finite(self, x: Any) -> bool:
        return bool(x.is_finite())


class MpmathBackend:
    """mpmath intervals, in a private interval context (the global one is untouched)."""

    name = "mpmath"

    def __init__(self) -> None:
        from mpmath.ctx_iv import MPIntervalContext

        self._ctx = MPIntervalContext()

    @contextlib.contextmanager
    def working_precision(self, bits: int) -> Iterator[None]:
        previous = self._ctx.prec
        self._ctx.prec = bits
        try:
            yield
        finally:
            self._ctx.prec = previous

    def number(self, value: Number) -> Any:
        ctx = self._ctx
        if isinstance(value, Fraction):
            return ctx.mpf(value.numerator) / ctx.mpf(value.denominator)
        if isinstance(value, float):
            mantissa, denominator = value.as_integer_ratio()
            return ctx.mpf(mantissa) / ctx.mpf(denominator)
        return ctx.mpf(value)

    def exp(self, x: Any) -> Any:
        return self._ctx.exp(x)

    def log(self, x: Any) -> Any:
        return self._ctx.log(x)

    def endpoints(self, x: Any) -> tuple[Dyadic, Dyadic]:
        def exact(end: tuple[int, int, int, int]) -> Dyadic:
            sign, mantissa, exponent, _ = end
            return (-mantissa if sign else mantissa), exponent

        low, high = x._mpi_
        return exact(low), exact(high)

    def is_finite(self, x: Any) -> bool:
        from mpmath.libmp import finf, fnan, fninf

        return all(end not in (finf, fninf, fnan) for end in x._mpi_)


def backend(engine: str | None = None) -> Backend:
    """The engine called ``engine`` (``"arb"`` or ``"mpmath"``); arb when installed if None.

    Raises
    ------
    ValueError
        For an unknown engine, or ``"arb"`` without python-flint.
    """
    if engine is None:
        engine = "arb" if flint_available() else "mpmath"
    if engine == "arb":
        if not flint_available():
            raise ValueError(
                "engine 'arb' needs python-flint: pip install 'softmax-dispersion[flint]'"
            )
        return ArbBackend()
    if engine == "mpmath":
        return MpmathBackend()
    raise ValueError(f"unknown engine {engine!r}; known engines: arb, mpmath")
