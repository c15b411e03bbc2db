"""Re-decide a proof certificate from the file alone: safe to run on a stranger's file.

:func:`recheck` reads every claim of a certificate
(:mod:`~softmax_dispersion.theory.proof_certificate`) from its recorded ``content`` and checks
it again with the kernel, in four stages, each refusing what it cannot accept:

1. **the file**: JSON only (no other syntax is parsed, nothing is evaluated), within
   limits on size, nesting, integer length (:func:`load`); the format and its version;
2. **the hashes**: every claim's recorded hash is the SHA-256 of its recorded content
   (checked before anything is read from the content: an edit fails here, cheaply);
3. **the content**: read into the kernel's terms by the grammar and its limits alone
   (:func:`~softmax_dispersion.theory._serial.read_claim`), and written back to the very
   same JSON; then the readable fields (each claim's ``id``, ``title`` and
   ``statement``, each step's ``rule``, ``description`` and ``statement``) are generated
   again from the content and must be what the file shows (the formulas a claim names
   are a label: the report says so, nothing re-decides them);
4. **the decision**: the kernel checks every claim again, cited claims first (they must
   come earlier in the file), in a registry of its own: nothing is taken from an
   earlier check, every step under a time budget.

Stages 3 and 4 share one time budget, which grows with the size of the certificate's
data, not of its file (:func:`budget_for`): a small certificate cannot keep ``recheck``
busy for long, and padding earns it no time.

A file that cannot be read raises :class:`CertificateFormatError` (the CLI's exit 2); a
claim that fails stages 2 to 4 makes the report fail (exit 1).  It never imports the
modules that define the claims: what is re-verified is what the file says.

For example:

>>> from softmax_dispersion.theory import check
>>> from softmax_dispersion.theory.proof_certificate import build_certificate
>>> report = recheck(build_certificate(check("T2")))
>>> report.verified, [claim.id for claim in report.claims]
(True, ['T2'])
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from softmax_dispersion.theory import _core, rules
from softmax_dispersion.theory._core import BudgetExceeded, time_budget
from softmax_dispersion.theory._serial import (
    MAX_INT_DIGITS,
    CertificateFormatError,
    Reader,
    content_hash,
    read_claim,
)
from softmax_dispersion.theory._snapshot import FrozenClaim, check_text, readable_fact
from softmax_dispersion.theory.definitions import DefinitionError, Definitions
from softmax_dispersion.theory.kernel import check_frozen
from softmax_dispersion.theory.proof_certificate import (
    CERTIFICATE_FORMAT,
    FORMAT_VERSION,
    readable_assumptions,
    readable_definitions,
    readable_steps,
)

__all__ = [
    "CertificateFormatError",
    "ClaimRecheck",
    "RecheckReport",
    "load",
    "recheck",
    "recheck_file",
]

MAX_FILE_BYTES = 64 * 1024 * 1024
"""The largest certificate file read."""
STEP_BUDGET_S = 60.0
"""The time budget of one step's decision while rechecking."""
CLAIM_BUDGET_S = 600.0
"""The time budget of one claim (its witness, definitions and every step)."""
TOTAL_BUDGET_S = 1800.0
"""The largest time budget of a whole certificate (every stage after the hashes)."""
BASE_BUDGET_S = 10.0
"""The time budget of a certificate, before its size is counted."""
BUDGET_PER_KIB_S = 1.0
"""The time budget a certificate earns per KiB of its JSON text: its budget is
``BASE_BUDGET_S + BUDGET_PER_KIB_S · KiB``, at most ``TOTAL_BUDGET_S``, so that no
small file can keep ``recheck`` busy for long (the thirteen claims take about 0.07 s
per KiB)."""


def budget_for(size: int) -> float:
    """The time budget, in seconds, of a certificate of ``size`` bytes of JSON.

    Examples
    --------
    >>> budget_for(1434), budget_for(254_000), budget_for(64 * 1024 * 1024)
    (11.400390625, 258.046875, 1800.0)
    """
    return min(TOTAL_BUDGET_S, BASE_BUDGET_S + BUDGET_PER_KIB_S * size / 1024)


LABELS_NOTE = (
    "re-decided: each statement under its assumptions and definitions; a claim's title, "
    "source and descriptions, and the details recorded for its steps, are its author's "
    "words, not re-decided"
)
"""What recheck decides, said under every report (red team 13: an edited title, "… for
every n >= 1 (no size condition needed)", rechecked as the claim it misdescribed)."""


@dataclass
class ClaimRecheck:
    """The verdict of re-deciding one claim of a certificate."""

    id: str
    hash: str
    verified: bool
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    formulas: tuple[str, ...] = ()
    """The project formulas the content names: a label, which nothing re-decides."""


@dataclass
class RecheckReport:
    """The verdicts on every claim of a certificate."""

    claims: list[ClaimRecheck]
    tools: dict[str, str]
    refused: str = ""
    """Why the certificate was refused before any claim was decided (one line)."""

    @property
    def verified(self) -> bool:
        """Every claim re-verified."""
        return not self.refused and bool(self.claims) and all(c.verified for c in self.claims)

    def format(self) -> str:
        """One line per claim, its problems below it, and a summary (or the one line
        saying why the certificate was refused)."""
        if self.refused:
            return f"recheck FAILED: {self.refused}"
        lines = []
        for claim in self.claims:
            verdict = "re-verified" if claim.verified else "FAILED"
            lines.append(f"{claim.id:<6} {verdict:<12} {claim.seconds:>7.2f} s  {claim.hash[:16]}")
            lines += [f"       {problem}" for problem in claim.problems]
            if claim.formulas:
                lines.append(
                    f"       names the formulas {', '.join(claim.formulas)}: a label, "
                    "not re-decided (only the statement is)"
                )
        passed = sum(claim.verified for claim in self.claims)
        lines.append(f"{passed} of {len(self.claims)} claims re-verified from the certificate")
        lines.append(LABELS_NOTE)
        return "\n".join(lines)


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise CertificateFormatError(message)


# --------------------------------------------------------------------------------------
# Stage 1: the file


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise CertificateFormatError(f"an integer of more than {MAX_INT_DIGITS} digits")
    return int(text)


def _no_constant(text: str) -> Any:
    raise CertificateFormatError(f"{text} is not JSON data a certificate holds")


def _finite(text: str) -> float:
    """A JSON number with a fraction or an exponent; ``1e400`` (an infinity once read) is
    refused like the literal ``Infinity``."""
    value = float(text)
    if not math.isfinite(value):
        raise CertificateFormatError(f"{text[:40]} is not a finite number")
    return value


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object; a key given twice is refused (a reader of the text would see the
    first, a parser keeps the last: what a person reads must be what is checked)."""
    record: dict[str, Any] = {}
    for key, value in pairs:
        if key in record:
            raise CertificateFormatError(f"the key {key[:40]!r} appears twice in one object")
        record[key] = value
    return record


def load(text: str) -> Any:
    """Parse a certificate's JSON text under the format's limits.

    Integers have at most :data:`~softmax_dispersion.theory._serial.MAX_INT_DIGITS`
    digits; ``NaN`` and infinities are refused.  A floating-point number is read as one
    (the informative times are such), and refused wherever the content holds a term.
    """
    try:
        return json.loads(
            text,
            parse_int=_integer,
            parse_float=_finite,
            parse_constant=_no_constant,
            object_pairs_hook=_pairs,
        )
    except CertificateFormatError:
        raise
    except RecursionError:
        raise CertificateFormatError("the JSON is nested too deep") from None
    except (json.JSONDecodeError, ValueError) as error:
        raise CertificateFormatError(f"the file is not JSON: {error}") from None


def _depth_ok(data: object, limit: int) -> bool:
    """The JSON value nests at most ``limit`` deep (checked without recursion)."""
    stack: list[tuple[object, int]] = [(data, 0)]
    while stack:
        value, level = stack.pop()
        if level > limit:
            return False
        if isinstance(value, dict):
            stack.extend((v, level + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, level + 1) for v in value)
    return True


# --------------------------------------------------------------------------------------
# Stages 2 and 3: hashes and content


def _entries(certificate: object) -> list[dict[str, Any]]:
    _require(isinstance(certificate, dict), "a certificate is a JSON object")
    assert isinstance(certificate, dict)
    _require(
        certificate.get("format") == CERTIFICATE_FORMAT, "not a softmax-dispersion certificate"
    )
    version = certificate.get("format_version")
    _require(
        type(version) is int and version == FORMAT_VERSION,
        f"format version {str(version)[:20]}, not {FORMAT_VERSION}",
    )
    _require(_depth_ok(certificate, 260), "the JSON is nested too deep")
    _only_known_fields(certificate, TOP_FIELDS, "the certificate")
    tools = certificate.get("tools", {})
    _require(
        isinstance(tools, dict)
        and set(tools) <= TOOL_NAMES
        and all(isinstance(v, str) and _VERSION.fullmatch(v) for v in tools.values()),
        f"its tools are a record of versions of {', '.join(sorted(TOOL_NAMES))}",
    )
    created = certificate.get("created", "")
    _require(
        isinstance(created, str) and _CREATED.fullmatch(created) is not None,
        "its creation time is a UTC time in ISO 8601 (2026-12-02T05:57:55+00:00)",
    )
    entries = certificate.get("claims")
    _require(isinstance(entries, list) and bool(entries), "a certificate lists its claims")
    assert isinstance(entries, list)
    _require(len(entries) <= 1_000, "a certificate of more than 1000 claims")
    ids: set[object] = set()
    for number, entry in enumerate(entries, 1):
        _require(isinstance(entry, dict), f"claim {number} must be a record")
        _only_known_fields(entry, CLAIM_FIELDS, f"claim {number}")
        _require(
            _is_seconds(entry.get("seconds", 0)),
            f"claim {number}: its time must be seconds, 0 or more",
        )
        for key in (*READABLE_CLAIM_FIELDS, "hash", "content", "steps"):
            _require(key in entry, f"claim {number} lacks {key!r}")
        # two claims of one id would report alike ("T99 re-verified" twice) and a reader
        # could not tell which statement a line is about (the content's id is the
        # readable one, stage 3)
        _require(isinstance(entry["id"], str), f"claim {number}: its id is text")
        _require(
            entry["id"] not in ids, f"claim {number}: the id {str(entry['id'])[:40]!r} is taken"
        )
        ids.add(entry["id"])
        _require(isinstance(entry["hash"], str), f"claim {number}: its hash is text")
        _require(isinstance(entry["content"], dict), f"claim {number}: its content is a record")
        _require(isinstance(entry["steps"], list), f"claim {number}: its steps are a list")
    return entries


TOOL_NAMES = frozenset({"python", "softmax-dispersion", "sympy", "z3-solver", "mpmath"})
"""The tools a certificate records the versions of (nothing else: a person reads them)."""
_VERSION = re.compile(r"[0-9][0-9A-Za-z.+!-]{0,39}|not installed")
_CREATED = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00")

TOP_FIELDS = frozenset({"format", "format_version", "created", "tools", "verified", "claims"})
"""Every field a certificate has; any other is refused (a field a person reads, such as a
key that looks like ``statement`` but holds a zero-width space, would be checked by
nothing)."""
READABLE_CLAIM_FIELDS = ("id", "title", "statement", "assumptions", "definitions")
"""A claim's readable fields, each generated from its content and compared."""
CLAIM_FIELDS = frozenset(
    {"id", "title", "statement", "assumptions", "definitions", "hash", "verified", "problem"}
    | {"witness"}
    | {"seconds", "content", "steps"}
)
"""Every field of a claim's record."""
STEP_FIELDS = frozenset(
    {"rule", "description", "statement", "method", "verdict", "verified", "detail"}
    | {"seconds", "substeps"}
)
"""Every field of a step's record."""


def _is_seconds(value: object) -> bool:
    """A recorded time: a number of seconds, 0 or more (a person reads it too)."""
    return type(value) in (int, float) and 0 <= value < 1e9  # type: ignore[operator]


def _unknown_field(record: Mapping[str, Any], known: frozenset[str]) -> str | None:
    """The first field of ``record`` outside ``known``, escaped (a zero-width space
    shows as ``\\u200b``), or ``None``."""
    unknown = sorted(set(record) - known)
    return unknown[0].encode("unicode_escape").decode("ascii")[:40] if unknown else None


def _only_known_fields(record: Mapping[str, Any], known: frozenset[str], where: str) -> None:
    shown = _unknown_field(record, known)
    if shown is not None:
        raise CertificateFormatError(f"{where} has a field the format does not: '{shown}'")


def _label(entry: Mapping[str, Any], number: int) -> str:
    try:
        return check_text(entry.get("id"), "an id", identifier=True)
    except ValueError:
        return f"claim {number}"


def _hash_problem(entry: Mapping[str, Any], number: int) -> str | None:
    try:
        digest = content_hash(entry["content"])
    except (TypeError, ValueError):
        raise CertificateFormatError(f"claim {number}: its content is not JSON data") from None
    if digest != entry["hash"]:
        return f"{_label(entry, number)}: the recorded content does not have the recorded hash"
    return None


def _readable_steps_problem(
    shown: object, generated: list[dict[str, Any]], where: str
) -> str | None:
    if not isinstance(shown, list) or len(shown) != len(generated):
        count = len(shown) if isinstance(shown, list) else "no"
        return f"{where}: the file shows {count} steps, the content has {len(generated)}"
    for number, (record, expected) in enumerate(zip(shown, generated, strict=True), 1):
        if not isinstance(record, dict):
            return f"{where}, step {number}: not a record"
        if not _is_seconds(record.get("seconds", 0)):
            return f"{where}, step {number}: its time is not seconds, 0 or more"
        shown = _unknown_field(record, STEP_FIELDS)
        if shown is not None:
            return f"{where}, step {number}: a field the format does not have: '{shown}'"
        if "detail" in record:
            # the decider's account is the author's words (recheck prints its own): but
            # it is read, so it is text that prints as itself (red team 16: a newline
            # that forged a report line, a right-to-left override, a number, 20 MB)
            try:
                check_text(record["detail"], "its detail")
            except ValueError as error:
                return f"{where}, step {number}: {error}"
        for key in ("rule", "description", "statement", "method"):
            if record.get(key) != expected[key]:
                return (
                    f"{where}, step {number}: the readable {key} is not the content's "
                    f"(the file shows {str(record.get(key))[:60]!r})"
                )
        if "substeps" in expected or "substeps" in record:
            problem = _readable_steps_problem(
                record.get("substeps"), expected.get("substeps", []), f"{where}, step {number}"
            )
            if problem:
                return problem
    return None


def _readable_problem(entry: Mapping[str, Any], frozen: FrozenClaim) -> str | None:
    """The readable fields, generated again from the content, against the file's."""
    for key, expected in (
        ("id", frozen.id),
        ("title", frozen.title),
        ("statement", readable_fact(frozen.statement, frozen.naturals)),
        ("assumptions", readable_assumptions(frozen)),
        ("definitions", readable_definitions(frozen)),
    ):
        if entry.get(key) != expected:
            return (
                f"{frozen.id}: the readable {key} is not the content's "
                f"(the file shows {str(entry.get(key))[:60]!r}, "
                f"the content says {str(expected)[:60]!r})"
            )
    try:
        definitions = Definitions(frozen.definitions, decide=False)
    except (DefinitionError, ValueError):
        definitions = Definitions(())
    return _readable_steps_problem(entry["steps"], readable_steps(frozen, definitions), frozen.id)


def _readable_stage(
    entries: list[dict[str, Any]], claims: list[FrozenClaim], deadline: float
) -> str | None:
    """Citations in file order, and the readable fields, for every claim (under the
    certificate's one time budget, which the decision shares: generating them is work
    too, and it decides nothing: no root is isolated, nothing is proved)."""
    seen: set[str] = set()
    try:
        with time_budget(max(deadline - time.monotonic(), 1e-3)):
            for entry, frozen in zip(entries, claims, strict=True):
                missing = [cited for cited in frozen.cites if cited not in seen]
                if missing:
                    return f"{frozen.id} cites {missing[0][:12]}, which is not earlier in the file"
                seen.add(entry["hash"])
                problem = _readable_problem(entry, frozen)
                if problem:
                    return problem
    except BudgetExceeded:
        return "the readable fields ran past the certificate's time budget"
    return None


# --------------------------------------------------------------------------------------
# Stage 4: the decision


def recheck(
    certificate: object,
    *,
    step_budget_s: float | None = STEP_BUDGET_S,
    registry: dict[str, Any] | None = None,
) -> RecheckReport:
    """Re-decide every claim of a certificate (a parsed JSON object).

    ``registry`` holds earlier re-decisions by content hash (a claim whose content has
    that very hash is not decided twice); by default it is a fresh one, so that
    everything is decided again.  Everything after the hashes (reading the content,
    the readable fields, every decision) runs under one time budget,
    :func:`budget_for` the size in bytes of the certificate's data written as JSON on
    one line (so that a file's indentation or padding earns no time): no stage has a
    budget of its own that a file could add to another's.

    Raises
    ------
    CertificateFormatError
        If the object is not a certificate of this format (a missing field, an
        expression outside the kernel's grammar or its limits, ...).
    """
    entries = _entries(certificate)
    assert isinstance(certificate, dict)
    tools = certificate.get("tools", {})
    tools = {str(k)[:40]: str(v)[:80] for k, v in tools.items()} if isinstance(tools, dict) else {}
    for number, entry in enumerate(entries, 1):
        problem = _hash_problem(entry, number)
        if problem:
            return RecheckReport([], tools, refused=problem)
    try:
        size = len(json.dumps(certificate, ensure_ascii=False).encode("utf-8"))
    except (TypeError, ValueError):
        raise CertificateFormatError("the certificate is not JSON data") from None
    budget = budget_for(size)
    deadline = time.monotonic() + budget
    reader = Reader()
    frozen_claims: list[FrozenClaim] = []
    try:
        with time_budget(budget):
            for number, entry in enumerate(entries, 1):
                try:
                    frozen = read_claim(entry["content"], reader)
                except CertificateFormatError as error:
                    raise CertificateFormatError(f"claim {number}: {error}") from None
                rules._record_cited_statement(entry["hash"], frozen.statement)
                frozen_claims.append(frozen)
    except BudgetExceeded:
        return RecheckReport([], tools, refused=f"reading ran past the budget ({budget:.0f} s)")
    problem = _readable_stage(entries, frozen_claims, deadline)
    if problem:
        return RecheckReport([], tools, refused=problem)
    if certificate.get("verified") is not all(entry.get("verified") is True for entry in entries):
        return RecheckReport(
            [], tools, refused="the file's 'verified' is not what its claims record"
        )
    fresh: dict[str, Any] = {} if registry is None else registry
    verdicts = _decide(entries, frozen_claims, step_budget_s, fresh, registry is not None, deadline)
    return RecheckReport(verdicts, tools)


def _decide(
    entries: list[dict[str, Any]],
    claims: list[FrozenClaim],
    step_budget_s: float | None,
    registry: dict[str, Any],
    reuse: bool,
    deadline: float,
) -> list[ClaimRecheck]:
    verdicts: list[ClaimRecheck] = []
    previous = _core.STEP_BUDGET_S[0]
    _core.STEP_BUDGET_S[0] = step_budget_s
    try:
        for entry, frozen in zip(entries, claims, strict=True):
            if time.monotonic() > deadline:
                problem = f"{frozen.id}: not decided, the certificate ran past its time budget"
                verdicts.append(ClaimRecheck(frozen.id, entry["hash"], False, [problem]))
                continue
            start = time.perf_counter()
            try:
                with time_budget(min(CLAIM_BUDGET_S, max(deadline - time.monotonic(), 1e-3))):
                    result = check_frozen(frozen, registry=registry, reuse=reuse)
            except BudgetExceeded:
                verdicts.append(
                    ClaimRecheck(
                        frozen.id, entry["hash"], False, [f"{frozen.id}: ran past its time budget"]
                    )
                )
                continue
            except RecursionError:
                verdicts.append(
                    ClaimRecheck(frozen.id, entry["hash"], False, [f"{frozen.id}: nested too deep"])
                )
                continue
            except Exception as error:  # never a traceback: the claim simply fails
                problem = f"{frozen.id}: cannot be decided ({type(error).__name__}: {error})"
                verdicts.append(ClaimRecheck(frozen.id, entry["hash"], False, [problem[:500]]))
                continue
            problems = []
            if result.content_hash != entry["hash"]:
                problems.append(f"{frozen.id}: the claim read from the file has another hash")
            for number, outcome in enumerate(result.steps, 1):
                if not outcome.verified:
                    problems.append(
                        f"{frozen.id} step {number} ({outcome.rule}: {outcome.description!r}) "
                        f"fails: {outcome.detail}"
                    )
            if not result.verified and (not problems or not result.steps):
                problems.append(f"{frozen.id}: {result.problem}")
            problems += _recorded_verdict_problems(entry, result, frozen.id)
            verdicts.append(
                ClaimRecheck(
                    frozen.id,
                    entry["hash"],
                    result.verified and not problems,
                    problems,
                    time.perf_counter() - start,
                    frozen.formulas,
                )
            )
    finally:
        _core.STEP_BUDGET_S[0] = previous
    return verdicts


def _recorded_verdict_problems(entry: Mapping[str, Any], result: Any, name: str) -> list[str]:
    """What the file records of the verdict, against the verdict reached again: a person
    reads "verified", the witness line and each step's verdict in the file too, so none
    may say other than what recheck decided (the times may differ)."""
    problems = []
    if entry.get("verified") is not result.verified:
        shown = entry.get("verified")
        recorded = "verified" if shown is True else "failed" if shown is False else "neither"
        problems.append(f"{name}: the file records it as {recorded}, not as decided again")
    if result.verified and entry.get("problem") != "":
        problems.append(f"{name}: the file records a problem for a claim that verifies")
    if result.verified and entry.get("witness") != result.witness:
        problems.append(
            f"{name}: the recorded witness line is not the witness check's "
            f"(the file shows {str(entry.get('witness'))[:60]!r})"
        )
    return problems + _recorded_step_problems(entry.get("steps"), result.steps, name)


def _recorded_step_problems(records: object, outcomes: Sequence[Any], where: str) -> list[str]:
    """Each step's recorded ``verified`` and ``verdict`` (sub-steps too) against the
    decision (the readable stage has matched the records to the steps)."""
    problems: list[str] = []
    shown = records if isinstance(records, list) else []
    for number, (record, outcome) in enumerate(zip(shown, outcomes, strict=False), 1):
        if not isinstance(record, dict):
            continue
        verdict = "verified" if outcome.verified else "failed"
        if record.get("verified") is not outcome.verified or record.get("verdict") != verdict:
            problems.append(f"{where}, step {number}: the file records another verdict")
        problems += _recorded_step_problems(
            record.get("substeps"), outcome.substeps, f"{where}, step {number}"
        )
    return problems


def recheck_file(path: Path | str, *, step_budget_s: float | None = STEP_BUDGET_S) -> RecheckReport:
    """Read a certificate file and re-decide it (see :func:`recheck`).

    Raises
    ------
    CertificateFormatError
        If the file cannot be read, is not JSON, or is not a certificate.
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        raise CertificateFormatError(f"cannot read {path}: {error.strerror}") from None
    _require(len(data) <= MAX_FILE_BYTES, f"larger than {MAX_FILE_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise CertificateFormatError("not UTF-8 text") from None
    return recheck(load(text), step_budget_s=step_budget_s)
