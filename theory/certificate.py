"""Proof certificates: everything needed to re-decide every step, in one JSON file.

A certificate lists every checked claim, cited claims first, each with

* ``hash``: the SHA-256 of its ``content`` (canonical JSON), which is what a citing claim
  names;
* ``content``: the statement, the assumptions, the definitions (families, sums,
  abbreviations, roots), the witness, the natural-number symbols, the cited claims'
  hashes and every step (its rule's name and every input, nested termwise sub-steps
  included), each expression as sympy's ``srepr``, with a table of every symbol's and
  every function's assumptions;
* the verdict: whether it verified, the problem if not, the witness check, and per step
  the method, the verdict, the detail, the time and the conclusion (as ``srepr``).

``softmax-dispersion recheck FILE`` (:mod:`softmax_dispersion.theory.recheck`) rebuilds
every claim from ``content`` alone and re-decides it.
"""

from __future__ import annotations

import datetime
import platform
from collections.abc import Sequence
from importlib import metadata
from typing import Any

import sympy as sp

from softmax_dispersion.theory._core import Step, StepResult
from softmax_dispersion.theory.kernel import ClaimResult

__all__ = ["CERTIFICATE_FORMAT", "FORMAT_VERSION", "build_certificate", "tool_versions"]

CERTIFICATE_FORMAT = "softmax-dispersion proof certificate"
"""The ``format`` field of every certificate."""
FORMAT_VERSION = 2
"""The ``format_version`` field: 2 records contents, hashes and conclusions."""


def tool_versions() -> dict[str, str]:
    """The versions of the tools a verdict depends on."""
    versions = {"python": platform.python_version()}
    for package in ("softmax-dispersion", "sympy", "z3-solver", "mpmath"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "not installed"
    return versions


def _step_record(step: Step, result: StepResult) -> dict[str, Any]:
    record = result.to_dict()
    record["conclusion"] = sp.srepr(type(step).conclusion.fget(step))  # type: ignore[attr-defined]
    subs = step.sub_steps()
    if subs and result.substeps:
        record["substeps"] = [
            _step_record(sub, sub_result)
            for sub, sub_result in zip(subs, result.substeps, strict=False)
        ]
    return record


def _claim_record(result: ClaimResult) -> dict[str, Any]:
    claim = result.claim
    content = claim.content(result.proof)
    return {
        "id": claim.id,
        "title": claim.title,
        "statement": sp.sstr(claim.statement),
        "hash": result.content_hash,
        "verified": result.verified,
        "problem": result.problem,
        "witness": result.witness,
        "seconds": round(result.seconds, 4),
        "content": content,
        "steps": [
            _step_record(step, outcome)
            for step, outcome in zip(result.proof, result.steps, strict=False)
        ],
    }


def _with_cited(results: Sequence[ClaimResult], cache: dict[str, ClaimResult]) -> list[ClaimResult]:
    """The results, each preceded by those of the claims it cites (transitively), once."""
    ordered: list[ClaimResult] = []
    seen: set[str] = set()

    def visit(result: ClaimResult) -> None:
        for cited in result.claim.cites:
            visit(cited.check(cache))
        if result.content_hash not in seen:
            seen.add(result.content_hash)
            ordered.append(result)

    for result in results:
        visit(result)
    return ordered


def build_certificate(
    results: Sequence[ClaimResult], cache: dict[str, ClaimResult] | None = None
) -> dict[str, Any]:
    """A JSON-ready certificate of checked claims (and of every claim they cite).

    Parameters
    ----------
    results
        Claim results from :func:`softmax_dispersion.theory.check`.
    cache
        The cache those results were checked with, so that cited claims are not
        checked again (optional).

    Returns
    -------
    dict
        ``format``, ``format_version``, ``created`` (UTC, ISO 8601), ``tools``
        (versions), ``verified`` (every claim verified) and ``claims``, cited claims
        first: per claim its ``hash``, its ``content`` and its verdict with every step.

    Examples
    --------
    >>> from softmax_dispersion.theory import check
    >>> certificate = build_certificate(check("T2"))
    >>> certificate["verified"], certificate["claims"][0]["steps"][0]["verdict"]
    (True, 'verified')
    >>> certificate["claims"][0]["steps"][0]["rule"]
    'ExpMonotone'
    """
    cache = {} if cache is None else cache
    for result in results:
        cache.setdefault(result.content_hash, result)
    ordered = _with_cited(results, cache)
    return {
        "format": CERTIFICATE_FORMAT,
        "format_version": FORMAT_VERSION,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "tools": tool_versions(),
        "verified": all(result.verified for result in ordered),
        "claims": [_claim_record(result) for result in ordered],
    }
