"""Proof certificates: a JSON record of what was checked, how, and with which tools."""

from __future__ import annotations

import datetime
import platform
from collections.abc import Sequence
from importlib import metadata
from typing import Any

from softmax_dispersion.theory.kernel import ClaimResult

__all__ = ["build_certificate", "tool_versions"]


def tool_versions() -> dict[str, str]:
    """The versions of the tools a verdict depends on."""
    versions = {"python": platform.python_version()}
    for package in ("softmax-dispersion", "sympy", "z3-solver", "mpmath"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "not installed"
    return versions


def build_certificate(results: Sequence[ClaimResult]) -> dict[str, Any]:
    """A JSON-ready certificate of checked claims.

    Parameters
    ----------
    results
        Claim results from :func:`softmax_dispersion.theory.check`.

    Returns
    -------
    dict
        ``created`` (UTC, ISO 8601), ``tools`` (versions), ``verified`` (all claims
        verified) and ``claims``: per claim its id, statement, assumptions, source,
        verdict, time and every step with its method and verdict.

    Examples
    --------
    >>> from softmax_dispersion.theory import check
    >>> certificate = build_certificate(check("T2"))
    >>> certificate["verified"], certificate["claims"][0]["steps"][0]["verdict"]
    (True, 'verified')
    """
    return {
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "tools": tool_versions(),
        "verified": all(result.verified for result in results),
        "claims": [result.to_dict() for result in results],
    }
