"""Claims as data: the content a certificate records, its hash, and a reader of it.

A frozen claim (:class:`~softmax_dispersion.theory._snapshot.FrozenClaim`) is written as
JSON: every expression a tree of the kernel's term nodes, ``[op, ...payload]`` (child
terms nested, names as strings, integers as JSON integers), e.g.
``["add", ["sym", "x"], ["num", 1, 2]]`` for ``x + 1/2``; every step its rule's name and
its inputs, each written as its rule says it is read.  The content hash of a claim is the
SHA-256 of this record as canonical JSON (sorted keys), so it changes with any edit.

:func:`read_claim` reads such a record back, without ``eval`` or any parser of
expressions: JSON is the only syntax, every node is rebuilt through the term
constructors (which check the grammar and the limits on numbers, exponents and depth),
every field is read as its kind says, a record with a key too many or too few is
refused, and the claim read must write back to the very same JSON.  Anything else is a
:class:`CertificateFormatError`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from softmax_dispersion.theory import terms
from softmax_dispersion.theory._core import (
    LOGIC,
    MAX_STEP_DEPTH,
    ClaimRef,
    FrozenStep,
    RootRef,
    SumRef,
)
from softmax_dispersion.theory._snapshot import (
    FrozenClaim,
    WitnessFunction,
    WitnessValue,
    check_text,
)
from softmax_dispersion.theory.definitions import (
    FamilyDef,
    FrozenDefinition,
    LetDef,
    RootDef,
    SumDef,
)
from softmax_dispersion.theory.terms import Term, TermError

__all__ = [
    "CertificateFormatError",
    "Reader",
    "content_hash",
    "encode_claim",
    "encode_term",
    "read_claim",
]

MAX_NODES = 2_000_000
"""The most term nodes one certificate may hold."""
MAX_INT_DIGITS = 1_300
"""The most digits of an integer in a certificate (about 4300 bits)."""


class CertificateFormatError(ValueError):
    """A record that cannot be read back (not a certificate of this format)."""


# --------------------------------------------------------------------------------------
# Writing


def encode_term(term: Term) -> list[Any]:
    """A term as a JSON tree ``[op, ...payload]``."""
    return [term[0], *(encode_term(i) if type(i) is Term else i for i in term[2:])]


def _refs(value: Any) -> Any:
    if isinstance(value, SumRef):
        record: dict[str, Any] = {"sum": value.name}
        if value.at is not None:
            record["at"] = encode_term(value.at)
        return record
    if isinstance(value, RootRef):
        return value.name
    if isinstance(value, ClaimRef):
        return {"claim": value.digest, "label": value.label}
    return value


def encode_value(kind: str, value: Any) -> Any:
    """One step input, as its kind is written."""
    if kind in ("text", "bool", "name"):
        return value
    if kind in ("real", "formula", "point"):
        return encode_term(value)
    if kind == "real?":
        return None if value is None else encode_term(value)
    if kind in ("formulas",):
        return [encode_term(v) for v in value]
    if kind == "names":
        return list(value)
    if kind in ("sum", "claim"):
        return _refs(value)
    if kind == "roots":
        return [_refs(v) for v in value]
    if kind == "combination":
        return [[encode_term(c), _refs(ref)] for c, ref in value]
    if kind == "steps":
        return [encode_step(s) for s in value]
    raise CertificateFormatError(f"an input of unknown kind {kind}")


def encode_step(step: FrozenStep) -> dict[str, Any]:
    """A frozen step as JSON: its rule and inputs (or the error that stopped reading it)."""
    if step.error:
        return {"rule": step.rule, "description": step.description, "error": step.error}
    kinds = _kinds(step.rule)
    return {
        "rule": step.rule,
        "inputs": {name: encode_value(kinds[name], value) for name, value in step.inputs.items()},
    }


def _family(family: FamilyDef) -> dict[str, Any]:
    return {
        "name": family.name,
        "index": list(family.index),
        "count": encode_term(family.count),
        "domain": [encode_term(r) for r in family.domain],
        "member": None if family.member is None else [encode_term(v) for v in family.member],
        "description": family.description,
    }


def _definition(definition: FrozenDefinition) -> dict[str, Any]:
    if isinstance(definition, SumDef):
        return {
            "kind": "sum",
            "name": definition.name,
            "var": definition.var,
            "term": encode_term(definition.term),
            "family": definition.family.name,
            "description": definition.description,
        }
    if isinstance(definition, LetDef):
        return {
            "kind": "let",
            "name": definition.name,
            "expression": encode_term(definition.expression),
            "description": definition.description,
        }
    return {
        "kind": "root",
        "name": definition.name,
        "polynomial": encode_term(definition.polynomial),
        "var": definition.var,
        "lower": encode_term(definition.lower),
        "upper": encode_term(definition.upper),
        "description": definition.description,
    }


def encode_claim(claim: FrozenClaim) -> dict[str, Any]:
    """Everything a frozen claim is made of, as JSON-ready data (what the hash covers)."""
    families: dict[str, FamilyDef] = {}
    for definition in claim.definitions:
        if isinstance(definition, SumDef):
            families.setdefault(definition.family.name, definition.family)
    witness = None
    if claim.witness is not None:
        witness = [
            {"symbol": e.name, "value": encode_term(e.value)}
            if isinstance(e, WitnessValue)
            else {"function": e.name, "parameters": list(e.parameters), "body": encode_term(e.body)}
            for e in claim.witness
        ]
    return {
        "id": claim.id,
        "title": claim.title,
        "source": claim.source,
        "statement": encode_term(claim.statement),
        "assumptions": [encode_term(a) for a in claim.assumptions],
        "naturals": list(claim.naturals),
        "families": [_family(f) for f in families.values()],
        "definitions": [_definition(d) for d in claim.definitions],
        "witness": witness,
        "cites": list(claim.cites),
        "steps": [encode_step(s) for s in claim.steps],
        "formulas": list(claim.formulas),
    }


def canonical_json(content: Any) -> str:
    """``content`` as canonical JSON (sorted keys, no spaces)."""
    return json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(content: Mapping[str, Any]) -> str:
    """The SHA-256 of a claim's content as canonical JSON."""
    return hashlib.sha256(canonical_json(content).encode("utf-8")).hexdigest()


def _kinds(rule: str) -> Mapping[str, str]:
    for cls, logic in LOGIC.items():
        if cls.__name__ == rule:
            return logic.kinds
    raise CertificateFormatError(f"{rule!r} is not one of the kernel's rules")


# --------------------------------------------------------------------------------------
# Reading


def _need(condition: bool, message: str) -> None:
    if not condition:
        raise CertificateFormatError(message)


def _record(
    data: object, keys: set[str], what: str, optional: frozenset[str] = frozenset()
) -> dict[str, Any]:
    _need(isinstance(data, dict), f"{what} must be a record")
    assert isinstance(data, dict)
    present = set(data)
    missing = keys - present
    extra = present - keys - optional
    _need(not missing, f"{what} lacks {sorted(missing)[0]!r}" if missing else "")
    _need(not extra, f"{what} has an unknown field {sorted(extra)[0]!r:.40}" if extra else "")
    return data


def _list(data: object, what: str) -> list[Any]:
    _need(isinstance(data, list), f"{what} must be a list")
    assert isinstance(data, list)
    return data


class Reader:
    """Reads terms and claims from JSON data, counting nodes against :data:`MAX_NODES`."""

    def __init__(self, budget: int = MAX_NODES) -> None:
        self.budget = budget

    def term(self, data: object, what: str, depth: int = 0) -> Term:
        """A term from its JSON tree (the grammar and the limits checked)."""
        _need(depth <= terms.MAX_DEPTH, f"{what}: a term nested deeper than {terms.MAX_DEPTH}")
        _need(isinstance(data, list) and bool(data), f"{what}: a term is a non-empty list")
        assert isinstance(data, list)
        self.budget -= 1
        _need(self.budget >= 0, f"the certificate holds more than {MAX_NODES} term nodes")
        op = data[0]
        _need(isinstance(op, str), f"{what}: a node's kind is text")
        payload: list[Any] = []
        for item in data[1:]:
            if isinstance(item, list):
                payload.append(self.term(item, what, depth + 1))
            elif type(item) in (str, int):
                payload.append(item)
            else:
                raise CertificateFormatError(f"{what}: a node holds {type(item).__name__}")
        try:
            return terms.make(op, payload)
        except TermError as error:
            raise CertificateFormatError(f"{what}: {error}") from None

    def top(self, data: object, what: str) -> Term:
        """A whole expression: a term within the size limit."""
        term = self.term(data, what)
        _need(terms.is_closed(term), f"{what}: a bound variable outside its binder")
        try:
            return terms.check_size(term, what)
        except TermError as error:
            raise CertificateFormatError(str(error)) from None

    def real(self, data: object, what: str) -> Term:
        term = self.top(data, what)
        _need(terms.is_real(term), f"{what}: not a real term")
        return term

    def formula(self, data: object, what: str) -> Term:
        term = self.top(data, what)
        _need(terms.sort_of(term) == "b", f"{what}: not a formula")
        return term

    def name(self, data: object, what: str) -> str:
        try:
            return terms.check_name(data, what)
        except TermError as error:
            raise CertificateFormatError(str(error)) from None

    def text(self, data: object, what: str, identifier: bool = False) -> str:
        try:
            return check_text(data, what, identifier=identifier)
        except ValueError as error:
            raise CertificateFormatError(str(error)) from None

    # ---- steps -----------------------------------------------------------------------

    def sum_ref(self, data: object, what: str) -> SumRef:
        record = _record(data, {"sum"}, what, frozenset({"at"}))
        at = self.real(record["at"], what) if "at" in record else None
        return SumRef(self.name(record["sum"], what), at)

    def value(self, kind: str, data: object, what: str, depth: int = 0) -> Any:
        if kind == "text":
            return self.text(data, what)
        if kind == "bool":
            _need(type(data) is bool, f"{what} must be true or false")
            return data
        if kind == "real":
            return self.real(data, what)
        if kind == "real?":
            return None if data is None else self.real(data, what)
        if kind == "formula":
            return self.formula(data, what)
        if kind == "point":
            term = self.top(data, what)
            _need(terms.sort_of(term) in ("r", "x"), f"{what}: not a point")
            return term
        if kind == "formulas":
            return tuple(self.formula(v, what) for v in _list(data, what))
        if kind == "name":
            return self.name(data, what)
        if kind == "names":
            return tuple(self.name(v, what) for v in _list(data, what))
        if kind == "sum":
            return self.sum_ref(data, what)
        if kind == "roots":
            return tuple(RootRef(self.name(v, what)) for v in _list(data, what))
        if kind == "combination":
            pairs = []
            for pair in _list(data, what):
                items = _list(pair, what)
                _need(len(items) == 2, f"{what}: a pair (coefficient, sum)")
                pairs.append((self.real(items[0], what), self.sum_ref(items[1], what)))
            return tuple(pairs)
        if kind == "steps":
            return tuple(self.step(v, depth + 1) for v in _list(data, what))
        if kind == "claim":
            record = _record(data, {"claim", "label"}, what)
            digest, label = record["claim"], record["label"]
            _need(isinstance(digest, str) and len(digest) <= 64, f"{what}: a hash")
            return ClaimRef(digest, self.text(label, what))
        raise CertificateFormatError(f"{what}: an input of unknown kind")

    def step(self, data: object, depth: int = 0) -> FrozenStep:
        _need(depth <= MAX_STEP_DEPTH, f"steps nested more than {MAX_STEP_DEPTH} deep")
        _need(isinstance(data, dict), "a step must be a record")
        assert isinstance(data, dict)
        rule = data.get("rule")
        _need(isinstance(rule, str), "a step needs its rule's name")
        assert isinstance(rule, str)
        if "error" in data:
            record = _record(data, {"rule", "description", "error"}, "a step")
            return FrozenStep(
                self.text(rule, "a rule's name"),
                {"description": self.text(record["description"], "a step's description")},
                error=self.text(record["error"], "a step's error"),
            )
        record = _record(data, {"rule", "inputs"}, f"a {rule!s:.40} step")
        kinds = _kinds(rule)
        inputs = _record(record["inputs"], set(kinds), f"the inputs of a {rule} step")
        values = {
            name: self.value(kind, inputs[name], f"{rule}.{name}", depth)
            for name, kind in kinds.items()
        }
        return FrozenStep(rule, values)

    # ---- claims ----------------------------------------------------------------------

    def family(self, data: object) -> FamilyDef:
        record = _record(
            data, {"name", "index", "count", "domain", "member", "description"}, "a family"
        )
        name = self.text(record["name"], "a family's name")
        member = record["member"]
        index = _list(record["index"], "an index")
        _need(len(set(map(str, index))) == len(index), f"the index of {name!r} repeats a name")
        return FamilyDef(
            name=name,
            index=tuple(self.name(v, f"the index of {name!r}") for v in index),
            count=self.real(record["count"], f"the count of {name!r}"),
            domain=tuple(
                self.formula(r, f"the domain of {name!r}")
                for r in _list(record["domain"], "a domain")
            ),
            member=None
            if member is None
            else tuple(self.real(v, f"the member of {name!r}") for v in _list(member, "a member")),
            description=self.text(record["description"], "a family's description"),
        )

    def definition(self, data: object, families: Mapping[str, FamilyDef]) -> FrozenDefinition:
        _need(isinstance(data, dict), "a definition must be a record")
        assert isinstance(data, dict)
        kind = data.get("kind")
        if kind == "sum":
            record = _record(
                data, {"kind", "name", "var", "term", "family", "description"}, "a sum"
            )
            family = record["family"]
            _need(
                isinstance(family, str) and family in families,
                f"the family {family!r:.40} is not recorded",
            )
            var = record["var"]
            return SumDef(
                self.name(record["name"], "a sum's name"),
                None if var is None else self.name(var, "a sum's variable"),
                self.real(record["term"], "a sum's term"),
                families[family],
                self.text(record["description"], "a description"),
            )
        if kind == "let":
            record = _record(data, {"kind", "name", "expression", "description"}, "a Let")
            return LetDef(
                self.name(record["name"], "a Let's name"),
                self.real(record["expression"], "a Let's expression"),
                self.text(record["description"], "a description"),
            )
        if kind == "root":
            record = _record(
                data,
                {"kind", "name", "polynomial", "var", "lower", "upper", "description"},
                "a root",
            )
            lower, upper = (
                self.real(record["lower"], "a bound"),
                self.real(record["upper"], "a bound"),
            )
            _need(lower[0] == "num" and upper[0] == "num", "a root's bounds are rationals")
            return RootDef(
                self.name(record["name"], "a root's name"),
                self.real(record["polynomial"], "a polynomial"),
                self.name(record["var"], "a polynomial's variable"),
                lower,
                upper,
                self.text(record["description"], "a description"),
            )
        raise CertificateFormatError(f"unknown kind of definition {kind!r:.40}")

    def witness(self, data: object) -> tuple[WitnessValue | WitnessFunction, ...] | None:
        if data is None:
            return None
        entries: list[WitnessValue | WitnessFunction] = []
        for item in _list(data, "the witness"):
            _need(isinstance(item, dict), "a witness entry is a record")
            if "symbol" in item:
                record = _record(item, {"symbol", "value"}, "a witness value")
                entries.append(
                    WitnessValue(
                        self.name(record["symbol"], "a witness key"),
                        self.real(record["value"], "a witness value"),
                    )
                )
            else:
                record = _record(item, {"function", "parameters", "body"}, "a witness function")
                entries.append(
                    WitnessFunction(
                        self.name(record["function"], "a witness function"),
                        tuple(
                            self.name(p, "a parameter")
                            for p in _list(record["parameters"], "parameters")
                        ),
                        self.real(record["body"], "a witness function's body"),
                    )
                )
        return tuple(entries)

    def claim(self, data: object) -> FrozenClaim:
        keys = {
            "id", "title", "source", "statement", "assumptions", "naturals", "families",
            "definitions", "witness", "cites", "steps", "formulas",
        }  # fmt: skip
        record = _record(data, keys, "a claim's content")
        families: dict[str, FamilyDef] = {}
        for item in _list(record["families"], "families"):
            family = self.family(item)
            _need(family.name not in families, f"the family {family.name!r} is recorded twice")
            families[family.name] = family
        cites = _list(record["cites"], "cites")
        _need(all(isinstance(c, str) and len(c) == 64 for c in cites), "a cited hash")
        claim = FrozenClaim(
            id=self.text(record["id"], "a claim's id", identifier=True),
            title=self.text(record["title"], "a claim's title"),
            source=self.text(record["source"], "a claim's source"),
            statement=self.formula(record["statement"], "the statement"),
            assumptions=tuple(
                self.formula(a, "an assumption")
                for a in _list(record["assumptions"], "assumptions")
            ),
            naturals=tuple(
                self.name(n, "a natural") for n in _list(record["naturals"], "naturals")
            ),
            definitions=tuple(
                self.definition(d, families) for d in _list(record["definitions"], "definitions")
            ),
            witness=self.witness(record["witness"]),
            cites=tuple(cites),
            steps=tuple(self.step(s) for s in _list(record["steps"], "steps")),
            formulas=tuple(
                self.text(f, "a formula's name") for f in _list(record["formulas"], "formulas")
            ),
        )
        _require_distinct(claim)
        return claim


def _require_distinct(claim: FrozenClaim) -> None:
    """No list of the content names the same thing twice.

    Where one entry would override another (a witness value read last wins) a person
    reading the file sees the first while the kernel uses the last; a repeated cite,
    natural, definition or formula means nothing more than once.
    """
    witness = claim.witness or ()
    lists: list[tuple[str, Sequence[str]]] = [
        ("the witness", [entry.name for entry in witness]),
        ("the definitions", [d.name for d in claim.definitions]),
        ("naturals", list(claim.naturals)),
        ("cites", list(claim.cites)),
        ("formulas", list(claim.formulas)),
    ]
    for what, names in lists:
        seen: set[str] = set()
        for name in names:
            _need(name not in seen, f"{what} lists {name!s:.64} twice")
            seen.add(name)


def read_claim(content: object, reader: Reader | None = None) -> FrozenClaim:
    """The frozen claim a content record describes; it must write back as read.

    Raises
    ------
    CertificateFormatError
        For a record outside the format (a missing or unknown field, a node outside the
        grammar, a number or an exponent too large, nesting too deep, ...).

    Examples
    --------
    >>> from softmax_dispersion.theory import check
    >>> content = check("T2")[0].content()
    >>> read_claim(content).id
    'T2'
    >>> read_claim({"statement": "__import__('os')"})  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ...
    CertificateFormatError: a claim's content lacks 'assumptions'
    """
    claim = (reader or Reader()).claim(content)
    try:
        written = canonical_json(encode_claim(claim))
    except (TypeError, ValueError) as error:
        raise CertificateFormatError(f"the content cannot be written back: {error}") from None
    if written != canonical_json(content):
        raise CertificateFormatError("the content does not read back as written")
    return claim
