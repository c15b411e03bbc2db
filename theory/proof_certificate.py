"""Proof certificates: everything needed to re-decide every step, in one JSON file.

A certificate (format version 3) lists every checked claim, cited claims first, each with

* ``content``: the frozen claim as data (:mod:`~softmax_dispersion.theory._serial`): the
  statement, the assumptions, the definitions (families, sums, abbreviations, roots),
  the witness, the natural-number symbols, the cited claims' hashes and every step (its
  rule's name and every input, nested sub-steps included), every expression a
  JSON tree of the kernel's term nodes;
* ``hash``: the SHA-256 of ``content`` (canonical JSON), which is what a citing claim
  names;
* the readable fields, ``id``, ``title``, ``statement``, ``assumptions``, ``definitions``
  and, per step, ``rule``,
  ``description`` and ``statement`` (the conclusion): each is *generated* from the
  content, and ``recheck`` generates it again and refuses a file where they differ;
* the verdict as it was reached (verified or the problem, the witness check, per step
  the method, the verdict, the detail and the time): informative only, since ``recheck``
  decides everything again.

``softmax-dispersion recheck FILE`` (:mod:`softmax_dispersion.theory.recheck`) reads
every claim from ``content`` alone and re-decides it.
"""

from __future__ import annotations

import datetime
import platform
from collections.abc import Sequence
from importlib import metadata
from typing import Any

from softmax_dispersion.theory._core import LOGIC, FrozenStep, StepResult
from softmax_dispersion.theory._serial import read_claim
from softmax_dispersion.theory._snapshot import FrozenClaim, readable_fact
from softmax_dispersion.theory.definitions import Definitions, RootDef, SumDef
from softmax_dispersion.theory.kernel import ClaimResult, conclusion_of
from softmax_dispersion.theory.terms import check_size, show

__all__ = [
    "CERTIFICATE_FORMAT",
    "FORMAT_VERSION",
    "build_certificate",
    "readable_assumptions",
    "readable_definitions",
    "readable_steps",
    "tool_versions",
]

CERTIFICATE_FORMAT = "softmax-dispersion proof certificate"
"""The ``format`` field of every certificate."""
FORMAT_VERSION = 3
"""The ``format_version`` field: 3 writes expressions as JSON trees of the kernel's term
nodes and binds the readable fields to the content."""


def tool_versions() -> dict[str, str]:
    """The versions of the tools a verdict depends on."""
    versions = {"python": platform.python_version()}
    for package in ("softmax-dispersion", "sympy", "z3-solver", "mpmath"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "not installed"
    return versions


def _conclusion_text(step: FrozenStep, definitions: Definitions, naturals: Sequence[str]) -> str:
    if step.error:
        return "?"
    try:
        conclusion = check_size(conclusion_of(step, definitions), "the conclusion")
        return readable_fact(conclusion, naturals)
    except Exception:  # a step that cannot conclude anything (or too much) reads as "?"
        return "?"


def _method(step: FrozenStep) -> str:
    from softmax_dispersion.theory.kernel import RULES

    if step.error:
        return "not decided"
    for rule in RULES:
        if rule.__name__ == step.rule:
            return rule.method
    return "not decided"


def _sub_steps(step: FrozenStep) -> tuple[FrozenStep, ...]:
    """The step's nested steps: its input of the kind ``steps``, if its rule has one."""
    if step.error:
        return ()
    for rule, logic in LOGIC.items():
        if rule.__name__ == step.rule:
            for name, kind in logic.kinds.items():
                if kind == "steps":
                    return tuple(step.inputs.get(name, ()))
    return ()


def readable_assumptions(frozen: FrozenClaim) -> list[str]:
    """The readable form of each assumption, generated from the frozen claim: a statement
    is read under them, so a reader who sees it must see them too."""
    return [readable_fact(assumption, frozen.naturals) for assumption in frozen.assumptions]


def readable_definitions(frozen: FrozenClaim) -> list[str]:
    """One line for each family and each definition, generated from the frozen claim:
    what a defined symbol means is part of what the statement says (red team 14: a sum's
    term and a family's domain changed, with the hash made anew, rechecked unseen)."""
    lines: list[str] = []
    families: list[str] = []
    for definition in frozen.definitions:
        if isinstance(definition, SumDef):
            family = definition.family
            if family.name not in families:
                families.append(family.name)
                domain = "; ".join(show(fact) for fact in family.domain) or "anything"
                member = (
                    f", member ({', '.join(show(m) for m in family.member)})"
                    if family.member
                    else ""
                )
                lines.append(
                    f"family {family.name!r}: {', '.join(family.index)} for each of "
                    f"{show(family.count)} members, each with {domain}{member}"
                )
            lines.append(
                f"{show(definition.symbol)} = sum of {show(definition.term)} over {family.name!r}"
            )
        elif isinstance(definition, RootDef):
            lines.append(f"{definition.name}: " + "; ".join(show(f) for f in definition.facts()))
        else:
            lines.append(f"{definition.name} = {show(definition.expression)}")
    return lines


def readable_steps(frozen: FrozenClaim, definitions: Definitions) -> list[dict[str, Any]]:
    """The readable fields of every step, generated from the frozen claim.

    Per step: its rule's name, its description, its conclusion as text and its rule's
    method, and the same for its sub-steps (``substeps``: termwise, or under a
    hypothesis).
    """

    def record(step: FrozenStep) -> dict[str, Any]:
        found: dict[str, Any] = {
            "rule": step.rule,
            "description": step.description,
            "statement": _conclusion_text(step, definitions, frozen.naturals),
            "method": _method(step),
        }
        nested = _sub_steps(step)
        if nested:
            found["substeps"] = [record(sub) for sub in nested]
        return found

    return [record(step) for step in frozen.steps]


def _one_line(detail: str) -> str:
    """A decider's account as one line of printable text, at most 10,000 characters
    (what ``recheck`` accepts in a file: a counterexample may span lines)."""
    text = " ".join(detail.split())
    text = "".join(c if c.isprintable() else "\N{REPLACEMENT CHARACTER}" for c in text)
    return text if len(text) <= 10_000 else text[:9_999] + "…"


def _step_record(readable: dict[str, Any], result: StepResult | None) -> dict[str, Any]:
    record = {
        "rule": readable["rule"],
        "description": readable["description"],
        "statement": readable["statement"],
        "method": readable["method"],
        "verdict": "verified" if result and result.verified else "failed",
        "verified": bool(result and result.verified),
        "detail": _one_line(result.detail) if result else "",
        "seconds": round(result.seconds, 4) if result else 0.0,
    }
    subs = readable.get("substeps")
    if subs:
        outcomes: Sequence[StepResult | None] = result.substeps if result else ()
        record["substeps"] = [
            _step_record(sub, outcomes[i] if i < len(outcomes) else None)
            for i, sub in enumerate(subs)
        ]
    return record


def _claim_record(result: ClaimResult) -> dict[str, Any]:
    content = result.content()
    frozen = read_claim(content)
    try:
        definitions = Definitions(frozen.definitions, decide=False)
    except ValueError:
        definitions = Definitions(())
    readable = readable_steps(frozen, definitions)
    return {
        "id": frozen.id,
        "title": frozen.title,
        "statement": readable_fact(frozen.statement, frozen.naturals),
        "assumptions": readable_assumptions(frozen),
        "definitions": readable_definitions(frozen),
        "hash": result.content_hash,
        "verified": result.verified,
        "problem": result.problem,
        "witness": result.witness,
        "seconds": round(result.seconds, 4),
        "content": content,
        "steps": [
            _step_record(step, result.steps[i] if i < len(result.steps) else None)
            for i, step in enumerate(readable)
        ],
    }


def _with_cited(results: Sequence[ClaimResult]) -> list[ClaimResult]:
    """The results, each preceded by those of the claims it cites (transitively), once."""
    from softmax_dispersion.theory.kernel import checked

    ordered: list[ClaimResult] = []
    seen: set[str] = set()

    def visit(result: ClaimResult) -> None:
        for digest in result.content().get("cites", []):
            cited = checked(digest)
            if cited is not None:
                visit(cited)
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
        Accepted for compatibility; cited claims are found by their content hash among
        the claims this kernel checked.

    Returns
    -------
    dict
        ``format``, ``format_version``, ``created`` (UTC, ISO 8601), ``tools``
        (versions), ``verified`` (every claim verified) and ``claims``, cited claims
        first: per claim its ``hash``, its ``content``, its readable fields and its
        verdict with every step.

    Examples
    --------
    >>> from softmax_dispersion.theory import check
    >>> certificate = build_certificate(check("T2"))
    >>> certificate["format_version"], certificate["verified"]
    (3, True)
    >>> certificate["claims"][0]["steps"][0]["rule"]
    'ExpMonotone'
    """
    ordered = _with_cited([r for r in results if r.content_hash])
    return {
        "format": CERTIFICATE_FORMAT,
        "format_version": FORMAT_VERSION,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "tools": tool_versions(),
        "verified": all(result.verified for result in ordered) and len(ordered) > 0,
        "claims": [_claim_record(result) for result in ordered],
    }
