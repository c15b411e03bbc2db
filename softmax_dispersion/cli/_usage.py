"""The command line's one usage-error type and the readers every subcommand validates with.

A reader takes the option's name first and the user's text second, and either returns
an exact value or raises :class:`UsageError` with one line naming the option and what
was expected.  Library errors about a parameter (``ValueError("theta must be ...")``)
are turned into the same form by :func:`usage_error`.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import NoReturn

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "MAX_SIZE_DIGITS",
    "CommandParser",
    "UsageError",
    "read_names",
    "read_parameter",
    "read_size",
    "read_sizes",
    "usage_error",
    "writable_file",
    "writable_folder",
]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
"""Exit status: all verified or passed, a check failed, bad usage or input."""
EXIT_INTERRUPTED = 130
"""Exit status after Ctrl-C (128 + SIGINT), as shells report it."""

MAX_SIZE_DIGITS = 4300
"""Sizes have at most 4300 digits (below 10**4300): every size is printed exactly, in the
tables and in JSON, and Python converts integers of at most 4300 digits to text (its
default ``sys.get_int_max_str_digits()``); beyond, refuse politely, before any work."""

_POWER = re.compile(r"^(\d+)(?:\*\*|\^)(\d+)$")
_DECIMAL = re.compile(r"^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:e([+-]?\d+))?$")


class UsageError(Exception):
    """Bad input from the user: reported in one line, exit status 2."""


class CommandParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, like every other usage error.

    argparse prints the whole usage block before its message; here the message names
    the argument and points to ``--help`` instead.  Subcommands' parsers inherit it.
    """

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message} (see {self.prog} --help)", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def read_size(option: str, text: str) -> int:
    """An integer n >= 1 written as ``1024``, ``1e18``, ``10**18`` or ``2^20``.

    Raises
    ------
    UsageError
        When the text is not an integer >= 1 (``1.5``, ``1e-3``, ``0``, ``abc``) or has
        more than :data:`MAX_SIZE_DIGITS` digits (``1e5000``, ``2^20000``).

    Examples
    --------
    >>> read_size("--n", "1e18") == 10**18, read_size("--n", "2^20"), read_size("--n", "10**3")
    (True, 1048576, 1000)
    >>> read_size("--n", "1.5")
    Traceback (most recent call last):
    ...
    softmax_dispersion.cli._usage.UsageError: --n: '1.5' is not an integer
    >>> read_size("--n", "10**4300")
    Traceback (most recent call last):
    ...
    softmax_dispersion.cli._usage.UsageError: --n: '10**4300' is too large (at most 4300 digits)
    """
    cleaned = re.sub(r"[\s_]", "", text).lower()
    shown = repr(text) if len(text) <= 40 else f"{text[:20]!r}… ({len(text)} characters)"
    power, decimal = _POWER.match(cleaned), _DECIMAL.match(cleaned)
    if power:
        value = _power(power.group(1), power.group(2))
    elif decimal:
        value = _decimal(*decimal.groups())
    else:
        value = "is not a number"
    if isinstance(value, str):
        raise UsageError(f"{option}: {shown} {value}")
    if value < 1:
        raise UsageError(f"{option}: {shown} is less than 1")
    return value


_TOO_LARGE = f"is too large (at most {MAX_SIZE_DIGITS} digits)"
_NOT_INTEGER = "is not an integer"


def _power(base_text: str, exponent_text: str) -> int | str:
    """``base**exponent``, or what is wrong with it: more than :data:`MAX_SIZE_DIGITS`
    digits is decided from the digits' count first, so that no huge power is computed."""
    base_text, exponent_text = base_text.lstrip("0") or "0", exponent_text.lstrip("0") or "0"
    if len(base_text) > MAX_SIZE_DIGITS:
        return _TOO_LARGE
    base = int(base_text)
    if base < 2:
        return base if exponent_text != "0" else 1
    if len(exponent_text) > 6 or int(exponent_text) * math.log10(base) > MAX_SIZE_DIGITS + 1:
        return _TOO_LARGE
    value: int = base ** int(exponent_text)
    return value if value < 10**MAX_SIZE_DIGITS else _TOO_LARGE


def _decimal(sign: str, mantissa: str, exponent_text: str | None) -> int | str:
    """A decimal ``[-]digits[.digits][e[-]digits]`` as an integer, or what is wrong with
    it, decided from the digits before any large number is built."""
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    if not digits or sign == "-":
        return 0  # zero or negative: less than 1
    exponent_text = exponent_text or "0"
    if len(exponent_text) > 12:  # astronomically large or small
        return _NOT_INTEGER if exponent_text.startswith("-") else _TOO_LARGE
    shift = int(exponent_text) - len(fraction)  # the value is int(digits) * 10**shift
    if len(digits) + shift > MAX_SIZE_DIGITS:
        return _TOO_LARGE
    if shift < 0:
        if len(digits) + shift <= 0 or digits[shift:].strip("0"):
            return _NOT_INTEGER
        digits, shift = digits[:shift], 0
    value: int = int(digits) * 10**shift
    return value


def read_sizes(option: str, text: str) -> list[int]:
    """A comma-separated sweep of sizes, e.g. ``16,1024,1e6,1e18``, in the order given.

    Examples
    --------
    >>> read_sizes("--n", "16, 2^10")
    [16, 1024]
    """
    items = text.split(",")
    if not text.strip():
        raise UsageError(f"{option}: no size given")
    if not all(item.strip() for item in items):
        raise UsageError(f"{option}: an empty size between commas in {text!r}")
    return [read_size(option, item) for item in items]


def read_parameter(option: str, name: str, text: object) -> Fraction:
    """``text`` as an exact number in the domain of the theory's parameter ``name``.

    The domains are those of :data:`softmax_dispersion.theory.formulas.DOMAINS`
    (``theta > 0``, ``0 < epsilon < 1``, ...); decimal text is read exactly as written.

    Examples
    --------
    >>> read_parameter("--eps", "epsilon", "0.01")
    Fraction(1, 100)
    >>> read_parameter("--theta", "theta", "0")
    Traceback (most recent call last):
    ...
    softmax_dispersion.cli._usage.UsageError: --theta: theta must be a number > 0, got 0
    """
    from softmax_dispersion.theory.formulas import exact_value

    try:
        return exact_value(name, text)
    except ValueError as error:
        raise UsageError(f"{option}: {error}") from None


def read_names(option: str, values: list[str] | None, known: tuple[str, ...]) -> tuple[str, ...]:
    """Names given space- or comma-separated, each one of ``known``, none twice.

    Examples
    --------
    >>> read_names("--kinds", ["a,b", "c"], ("a", "b", "c"))
    ('a', 'b', 'c')
    """
    names = tuple(name for value in values or [] for name in value.split(",") if name.strip())
    names = tuple(name.strip() for name in names)
    for name in names:
        if name not in known:
            raise UsageError(f"{option}: unknown name {name!r}; known: {', '.join(known)}")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise UsageError(f"{option}: {', '.join(repeated)} given more than once")
    return names


def writable_file(option: str, path: Path) -> Path:
    """A path a file can be written to, tried before any work runs.

    The file is opened for appending (and removed again if it did not exist), so that a
    long job never ends in a traceback because its output cannot be written: a folder,
    a missing folder, ``/proc/x`` and a read-only place are all refused here.
    """
    if path.is_dir():
        raise UsageError(f"{option}: {path} is a folder; give a file name")
    parent = path.parent
    if not parent.is_dir():
        raise UsageError(f"{option}: folder {parent} does not exist")
    existed = path.exists()
    try:
        with open(path, "a"):
            pass
    except OSError as error:
        raise UsageError(f"{option}: {path} cannot be written ({error.strerror})") from None
    if not existed:
        path.unlink()
    return path


def writable_folder(option: str, path: Path) -> Path:
    """A folder that exists or can be created, and is writable (it is not created here)."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"{option}: {path} exists and is not a folder")
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir() or not os.access(existing, os.W_OK):
        raise UsageError(f"{option}: {path} cannot be created or written")
    return path


def usage_error(error: Exception, options: Mapping[str, str]) -> UsageError:
    """A library's ``ValueError`` about a parameter, prefixed with the option behind it.

    ``options`` maps a parameter name, as the library's messages start with it, to the
    command-line option that sets it.

    Examples
    --------
    >>> str(usage_error(ValueError("theta must be a number > 0, got 0"), {"theta": "--theta"}))
    '--theta: theta must be a number > 0, got 0'
    """
    message = str(error)
    for name, option in options.items():
        if re.match(rf"{re.escape(name)}\b", message):
            return UsageError(f"{option}: {message}")
    return UsageError(message)
