"""Reading command-line numbers exactly: sizes like ``1e18`` or ``10**18`` and sweeps."""

from __future__ import annotations

import re
from fractions import Fraction

__all__ = ["parse_size", "parse_sizes"]

_POWER = re.compile(r"^\s*(\d+)\s*(?:\*\*|\^)\s*(\d+)\s*$")


def parse_size(text: str) -> int:
    """An integer n >= 1 written as ``1024``, ``1e18``, ``10**18`` or ``2^20``.

    Raises
    ------
    ValueError
        When the text is not an integer >= 1 (``1.5``, ``1e-3``, ``0``, ``abc``).

    Examples
    --------
    >>> parse_size("1e18") == 10**18, parse_size("2^20"), parse_size("10**3")
    (True, 1048576, 1000)
    """
    power = _POWER.match(text)
    if power:
        base, exponent = int(power.group(1)), int(power.group(2))
        if exponent > 4096:
            raise ValueError(f"{text!r} is too large")
        value = Fraction(base**exponent)
    else:
        try:
            value = Fraction(text.strip().replace("_", ""))
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"{text!r} is not a number") from None
    if value.denominator != 1:
        raise ValueError(f"{text!r} is not an integer")
    if value < 1:
        raise ValueError(f"{text!r} is less than 1")
    return int(value)


def parse_sizes(text: str) -> list[int]:
    """A comma-separated sweep of sizes, e.g. ``16,1024,1e6,1e18``, in the order given."""
    items = [item for item in text.split(",") if item.strip()]
    if not items:
        raise ValueError("no size given")
    return [parse_size(item) for item in items]
