"""Progress of long work: a bar on a terminal, plain lines when output goes to a file.

A run of several minutes must never be silent: with standard error redirected (CI, a log
file, ``reproduce > report.txt``) a bar would be useless, so :class:`Progress` prints one
plain line at the start of each stage and then at most one every
:data:`LINE_SECONDS` seconds.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Literal, TypeVar

__all__ = ["LINE_SECONDS", "Progress", "ProgressMode"]

T = TypeVar("T")

ProgressMode = Literal["bar", "lines", "off"]

LINE_SECONDS = 20.0
"""The longest silence, in seconds, of a stage in ``"lines"`` mode."""


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class Progress:
    """How to report progress: ``"bar"`` (tqdm), ``"lines"`` (timed lines) or ``"off"``.

    Examples
    --------
    >>> lines = []
    >>> progress = Progress("lines", log=lines.append, every=0.0)
    >>> list(progress.track(range(3), "count", unit="step"))
    [0, 1, 2]
    >>> lines[0], lines[-1].startswith("count: 3/3 step")
    ('count: 0/3 step', True)
    """

    def __init__(
        self,
        mode: ProgressMode = "lines",
        *,
        log: Callable[[str], None] = _stderr,
        every: float = LINE_SECONDS,
    ) -> None:
        if mode not in ("bar", "lines", "off"):
            raise ValueError(f"progress must be bar, lines or off, got {mode!r}")
        self.mode = mode
        self.log = log
        self.every = every

    @classmethod
    def of(cls, value: bool | ProgressMode | Progress | None) -> Progress:
        """A :class:`Progress` from ``True`` (bar), ``False``/``None`` (off) or a mode."""
        if isinstance(value, Progress):
            return value
        if value is None or value is False:
            return cls("off")
        return cls("bar" if value is True else value)

    def message(self, line: str) -> None:
        """One line, unless progress is off."""
        if self.mode != "off":
            self.log(line)

    def track(self, items: Iterable[T], description: str, *, unit: str = "it") -> Iterator[T]:
        """Iterate over ``items`` while reporting how far along it is."""
        if self.mode == "bar":
            from tqdm.auto import tqdm

            yield from tqdm(items, desc=description, unit=unit, leave=False)
            return
        if self.mode == "off":
            yield from items
            return
        values = list(items)
        total = len(values)
        start = last = time.perf_counter()
        self.log(f"{description}: 0/{total} {unit}")
        for done, value in enumerate(values, start=1):
            yield value
            now = time.perf_counter()
            if now - last >= self.every or done == total:
                self.log(f"{description}: {done}/{total} {unit} ({now - start:.0f} s)")
                last = now
