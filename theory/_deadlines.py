"""The deadlines of the time budgets in force: kept apart from the kernel's core so that
the z3 bridge, which the core imports, can read the time left without importing it."""

from __future__ import annotations

import time

__all__ = ["BudgetExceeded", "budget_spent", "remaining_budget_ms"]


class BudgetExceeded(Exception):
    """A decision ran past its time budget."""


_DEADLINES: list[float] = []
"""The deadlines of the budgets in force (innermost last); ``_core.time_budget`` keeps it."""


def remaining_budget_ms() -> int | None:
    """Milliseconds left before the nearest budget's deadline (``None``: no budget is
    running), at least 1.

    Examples
    --------
    >>> remaining_budget_ms() is None
    True
    """
    if not _DEADLINES:
        return None
    return max(1, int((min(_DEADLINES) - time.monotonic()) * 1000))


def budget_spent() -> bool:
    """Whether the nearest budget's deadline has passed (``False``: no budget running).

    Examples
    --------
    >>> budget_spent()
    False
    """
    return bool(_DEADLINES) and time.monotonic() >= min(_DEADLINES)
