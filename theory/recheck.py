"""Re-decide a proof certificate from the file alone, without the claim modules.

:func:`recheck` rebuilds every claim of a certificate
(:mod:`~softmax_dispersion.theory.certificate`) from its recorded ``content`` — the
statement, the assumptions, the definitions, the witness and every step with its rule
and inputs — reading each ``srepr`` with the safe reader (no ``eval``), and checks it
again with the kernel.  It never imports the modules that define the claims
(``dispersion``, ``entropy``, ...): what is re-verified is what the file says.

A claim is re-verified when

* its recorded hash is the hash of its recorded content, and the claim rebuilt from that
  content has the same hash (the file was read faithfully and not edited);
* the kernel verifies it again: definitions, witness, cited claims (which must come
  earlier in the file, by hash) and every step;
* every step concludes what the file says it concluded.

For example:

>>> from softmax_dispersion.theory import check
>>> from softmax_dispersion.theory.certificate import build_certificate
>>> report = recheck(build_certificate(check("T2")))
>>> report.verified, [claim.id for claim in report.claims]
(True, ['T2'])
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sympy as sp
from sympy.core.function import UndefinedFunction

from softmax_dispersion.theory._core import Step
from softmax_dispersion.theory._serial import (
    CertificateFormatError,
    claim_content,
    content_hash,
    read_expression,
)
from softmax_dispersion.theory.certificate import CERTIFICATE_FORMAT, FORMAT_VERSION
from softmax_dispersion.theory.definitions import Family, Let, RealRoot, SumOver
from softmax_dispersion.theory.kernel import RULES, Claim, ClaimResult

__all__ = ["CertificateFormatError", "ClaimRecheck", "RecheckReport", "recheck", "recheck_file"]


@dataclass
class ClaimRecheck:
    """The verdict of re-deciding one claim of a certificate."""

    id: str
    hash: str
    verified: bool
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class RecheckReport:
    """The verdicts on every claim of a certificate."""

    claims: list[ClaimRecheck]
    tools: dict[str, str]

    @property
    def verified(self) -> bool:
        """Every claim re-verified."""
        return bool(self.claims) and all(claim.verified for claim in self.claims)

    def format(self) -> str:
        """One line per claim, its problems below it, and a summary."""
        lines = []
        for claim in self.claims:
            verdict = "re-verified" if claim.verified else "FAILED"
            lines.append(f"{claim.id:<6} {verdict:<12} {claim.seconds:>7.2f} s  {claim.hash[:16]}")
            lines += [f"       {problem}" for problem in claim.problems]
        passed = sum(claim.verified for claim in self.claims)
        lines.append(f"{passed} of {len(self.claims)} claims re-verified from the certificate")
        return "\n".join(lines)


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise CertificateFormatError(message)


class _Reader:
    """Rebuilds one claim's objects from its recorded content."""

    def __init__(self, content: Mapping[str, Any], claims: Mapping[str, Claim]) -> None:
        self.content = content
        self.claims = claims
        functions = content.get("functions", {})
        _require(isinstance(functions, dict), "functions must be a table")
        for name, kwargs in functions.items():
            _require(
                isinstance(kwargs, dict) and all(isinstance(v, bool) for v in kwargs.values()),
                f"the assumptions of the function {name!r} must be booleans",
            )
        self.functions: dict[str, dict[str, bool]] = functions
        self.families: dict[str, Family] = {}
        self.definitions: dict[sp.Basic, SumOver | Let | RealRoot] = {}
        self.problems: list[str] = []

    def expr(self, text: object) -> sp.Basic:
        return read_expression(text, self.functions)

    def exprs(self, texts: Any) -> list[sp.Basic]:
        _require(isinstance(texts, list), "expected a list of expressions")
        return [self.expr(t) for t in texts]

    def family(self, record: object) -> Family:
        _require(isinstance(record, dict), "a family must be a record")
        assert isinstance(record, dict)
        return Family(
            name=str(record["name"]),
            index=tuple(self.exprs(record["index"])),
            count=self.expr(record["count"]),
            domain=tuple(self.exprs(record["domain"])),
            description=str(record.get("description", "")),
        )

    def definition(self, record: Mapping[str, Any]) -> SumOver | Let | RealRoot:
        kind = record.get("kind")
        description = str(record.get("description", ""))
        if kind == "SumOver":
            name = record["family"]
            _require(name in self.families, f"the family {name!r} is not recorded")
            return SumOver(
                self.expr(record["symbol"]),
                self.expr(record["term"]),
                self.families[name],
                description,
            )
        if kind == "Let":
            return Let(
                self.expr(record["symbol"]),
                self.expr(record["expression"]),
                description,
            )
        if kind == "RealRoot":
            return RealRoot(
                self.expr(record["symbol"]),
                self.expr(record["polynomial"]),
                self.expr(record["var"]),
                self.expr(record["lower"]),
                self.expr(record["upper"]),
                description,
            )
        raise CertificateFormatError(f"unknown kind of definition {kind!r}")

    def value(self, data: object) -> object:
        if data is None or isinstance(data, (bool, str)):
            return data
        _require(isinstance(data, dict) and len(data) == 1, f"unexpected input {data!r:.80}")
        assert isinstance(data, dict)
        ((tag, payload),) = data.items()
        if tag == "sympy":
            return self.expr(payload)
        if tag == "tuple":
            _require(isinstance(payload, list), "a tuple must be a list")
            return tuple(self.value(v) for v in payload)
        if tag in ("sum", "definition"):
            key = self.expr(payload)
            if isinstance(key, sp.core.function.AppliedUndef):
                key = type(key)
            _require(key in self.definitions, f"{payload!r:.80} is not a recorded definition")
            return self.definitions[key]
        if tag == "sum_at":
            _require(isinstance(payload, list) and len(payload) == 2, "sum_at takes two items")
            total = self.value({"sum": payload[0]})
            _require(isinstance(total, SumOver), "sum_at names a sum")
            assert isinstance(total, SumOver)
            return total.at(self.expr(payload[1]))
        if tag == "family":
            _require(payload in self.families, f"the family {payload!r} is not recorded")
            return self.families[payload]
        if tag == "function":
            _require(payload in self.functions, f"the function {payload!r} is not recorded")
            return sp.Function(payload, **self.functions[payload])
        if tag == "claim":
            _require(payload in self.claims, f"cites {payload!r:.20}, not earlier in the file")
            return self.claims[payload]
        if tag == "step":
            return self.step(payload)
        raise CertificateFormatError(f"unknown input tag {tag!r}")

    def step(self, record: object) -> Step:
        _require(isinstance(record, dict), "a step must be a record")
        assert isinstance(record, dict)
        name, inputs = record.get("rule"), record.get("inputs")
        _require(isinstance(name, str) and isinstance(inputs, dict), "a step needs rule and inputs")
        assert isinstance(inputs, dict)
        rules = {rule.__name__: rule for rule in RULES}
        if name not in rules:  # the kernel fails it: "not one of the kernel's rules"
            unknown: Step = type(str(name), (_Unknown,), {})(str(name))
            return unknown
        for key, value in inputs.items():
            _require(
                key == "description" or not isinstance(value, str),
                f"the input {key!r} of a {name} step is text, not an expression",
            )
        values = {key: self.value(value) for key, value in inputs.items()}
        try:
            step: Step = rules[name](**values)
        except TypeError as error:
            raise CertificateFormatError(f"the inputs of a {name} step: {error}") from None
        return step


class _Unknown(Step):
    """A step whose rule the kernel does not have: it never verifies."""

    method = "unknown rule"

    def __init__(self, name: str) -> None:
        self.description = f"a {name} step"

    @property
    def conclusion(self) -> sp.Basic:
        return sp.false

    def decide(self, context: Any) -> str:
        raise AssertionError("never decided: not a kernel rule")

    def inputs(self) -> Any:
        return iter(())


def _rebuild(entry: Mapping[str, Any], claims: Mapping[str, Claim]) -> tuple[Claim, list[str]]:
    content = entry["content"]
    _require(isinstance(content, dict), "a claim's content must be a record")
    reader = _Reader(content, claims)
    for record in content["families"]:
        family = reader.family(record)
        reader.families[family.name] = family
    definitions = []
    for record in content["definitions"]:
        _require(isinstance(record, dict), "a definition must be a record")
        definition = reader.definition(record)
        key = definition.key
        reader.definitions[key] = definition
        definitions.append(definition)
    witness = None
    if content["witness"] is not None:
        witness = {}
        for pair in content["witness"]:
            _require(isinstance(pair, list) and len(pair) == 2, "a witness entry is a pair")
            _require(all(isinstance(item, dict) for item in pair), "a witness entry is two records")
            key, value = reader.value(pair[0]), reader.value(pair[1])
            _require(isinstance(key, (sp.Symbol, UndefinedFunction)), "a witness key is a symbol")
            witness[key] = value
    steps = [reader.step(record) for record in content["steps"]]
    cites: list[Any] = [reader.value({"claim": h}) for h in content["cites"]]
    claim = Claim(
        id=str(content["id"]),
        title=str(content["title"]),
        statement=reader.expr(content["statement"]),
        assumptions=reader.exprs(content["assumptions"]),
        source=str(content["source"]),
        proof=lambda: steps,
        cites=tuple(cites),
        formulas=tuple(str(f) for f in content.get("formulas", [])),
        definitions=tuple(definitions),
        witness=witness,
        naturals=tuple(reader.exprs(content["naturals"])),
    )
    problems = list(reader.problems)
    problems += _symbol_table_problems(content, claim, steps)
    return claim, problems


def _symbol_table_problems(
    content: Mapping[str, Any], claim: Claim, steps: Sequence[Step]
) -> list[str]:
    """The recorded assumptions of every symbol match the symbols read."""
    if any(isinstance(s, _Unknown) for s in steps):
        return []
    rebuilt = claim_content(claim, steps, lambda cited: "")
    if rebuilt["symbols"] != content.get("symbols"):
        return ["the symbol table does not match the symbols of the expressions"]
    return []


def _step_problems(claim: Claim, result: ClaimResult, entry: Mapping[str, Any]) -> list[str]:
    """Failed steps, and steps that conclude other than the file says, named."""
    problems: list[str] = []
    recorded = entry.get("steps", [])
    for number, (step, outcome) in enumerate(zip(result.proof, result.steps, strict=False), 1):
        rule = outcome.rule or type(step).__name__
        name = f"{claim.id} step {number} ({rule}: {outcome.description!r})"
        if not outcome.verified:
            problems.append(f"{name} fails: {outcome.detail}")
            continue
        kind: Any = type(step)
        concluded = sp.srepr(kind.conclusion.fget(step))
        written = recorded[number - 1].get("conclusion") if number - 1 < len(recorded) else None
        if written != concluded:
            problems.append(f"{name} concludes otherwise than the certificate records")
    if len(recorded) != len(result.proof):
        problems.append(f"{claim.id}: the certificate records {len(recorded)} step verdicts")
    return problems


def recheck(certificate: object) -> RecheckReport:
    """Re-decide every claim of a certificate (a parsed JSON object).

    Raises
    ------
    CertificateFormatError
        If the object is not a certificate of this format (a missing field, an
        expression that is not an ``srepr`` of the kernel's language, ...).
    """
    _require(isinstance(certificate, dict), "a certificate is a JSON object")
    assert isinstance(certificate, dict)
    _require(
        certificate.get("format") == CERTIFICATE_FORMAT, "not a softmax-dispersion certificate"
    )
    _require(
        certificate.get("format_version") == FORMAT_VERSION,
        f"format version {certificate.get('format_version')!r}, not {FORMAT_VERSION}",
    )
    entries = certificate.get("claims")
    _require(isinstance(entries, list) and bool(entries), "a certificate lists its claims")
    assert isinstance(entries, list)
    claims: dict[str, Claim] = {}
    cache: dict[str, ClaimResult] = {}
    verdicts: list[ClaimRecheck] = []
    for entry in entries:
        _require(isinstance(entry, dict), "a claim entry must be a record")
        recorded_hash = entry.get("hash")
        _require(isinstance(recorded_hash, str), "a claim entry needs its hash")
        try:
            claim, problems = _rebuild(entry, claims)
        except KeyError as error:
            raise CertificateFormatError(f"a claim's content lacks {error}") from None
        except (TypeError, ValueError, AttributeError) as error:
            if isinstance(error, CertificateFormatError):
                raise
            raise CertificateFormatError(f"a claim's content cannot be read: {error}") from None
        if content_hash(entry["content"]) != recorded_hash:
            problems.append(f"{claim.id}: the recorded content does not have the recorded hash")
        result = claim.check(cache)
        if result.content_hash != recorded_hash:
            problems.append(f"{claim.id}: the claim rebuilt from the file has another hash")
        problems += _step_problems(claim, result, entry)
        if not result.verified and not any(p.startswith(f"{claim.id} step") for p in problems):
            problems.append(f"{claim.id}: {result.problem}")
        claims[recorded_hash] = claim
        verdicts.append(
            ClaimRecheck(
                id=claim.id,
                hash=recorded_hash,
                verified=result.verified and not problems,
                problems=problems,
                seconds=result.seconds,
            )
        )
    tools = certificate.get("tools", {})
    return RecheckReport(verdicts, dict(tools) if isinstance(tools, dict) else {})


def recheck_file(path: Path | str) -> RecheckReport:
    """Read a certificate file and re-decide it (see :func:`recheck`).

    Raises
    ------
    CertificateFormatError
        If the file cannot be read, is not JSON, or is not a certificate.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise CertificateFormatError(f"cannot read {path}: {error}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise CertificateFormatError(f"{path} is not JSON: {error}") from None
    return recheck(data)
