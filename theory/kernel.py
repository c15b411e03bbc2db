"""The proof kernel: claims, proof steps, definitions, and the rules that decide them.

A :class:`Claim` is a sympy statement with assumptions, definitions, a witness and a
proof, a list of :class:`Step` objects.  Checking a claim

1. checks the claims it cites, once each (by content hash);
2. *freezes* the claim (:mod:`~softmax_dispersion.theory._snapshot`): every expression
   of the statement, the assumptions, the definitions, the witness and every step is
   read into the kernel's own terms (:mod:`~softmax_dispersion.theory.terms`), by exact
   node type, once; the content hash of this snapshot is the claim's identity, and the
   Python objects are never consulted again;
3. checks the definitions (fresh symbols, each defined once, before use, never in terms
   of itself; index symbols bound; every family's domain shown non-empty where the
   assumptions hold; every root isolated);
4. checks that the assumptions can all hold, at an explicit witness
   (:mod:`~softmax_dispersion.theory._witness`): a claim with contradictory assumptions
   fails;
5. walks the steps in order.  Each step must be an instance of one of the kernel's
   :data:`RULES` exactly (the set is closed), and its rule must decide its side
   conditions.  Only then is its conclusion, built by the kernel from the step's
   inputs, added to the *facts* (the assumptions, the definitions' equations, earlier
   conclusions).

The claim is verified when all of this holds and the last conclusion is the statement.
Its verdict is recorded by content hash in a registry only the kernel writes; a
:class:`Cite` concludes the statement frozen there.

The deciders: ``cancel`` after ``t = exp(.)`` for identities (with denominators,
logarithms' arguments and powers' bases proved non-zero or positive), z3 for real
arithmetic (``unknown`` and timeouts fail), exact real-root counting, and limits by
sympy's Gruntz algorithm *and* the leading terms, with every parameter's sign a fact.
Anything else (an exception, a timeout, a term outside the grammar) fails the step
loudly: nothing is ever assumed to hold because a method gave up.

This module is the public import point of the kernel; the rules live in
:mod:`~softmax_dispersion.theory.rules` and :mod:`~softmax_dispersion.theory.calculus`.
"""

from __future__ import annotations

import functools
import json
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import sympy as sp

from softmax_dispersion.theory import _core, terms
from softmax_dispersion.theory._bridge import display
from softmax_dispersion.theory._core import (
    LOGIC,
    Z3_TIMEOUT_MS,
    CitedSnapshot,
    ClaimRef,
    Context,
    FrozenStep,
    ProofError,
    Step,
    StepResult,
    SumRef,
    tied_to,
    timed,
)
from softmax_dispersion.theory._deciders import proved, require_defined
from softmax_dispersion.theory._expressions import ExpressionError
from softmax_dispersion.theory._serial import canonical_json, content_hash, encode_claim
from softmax_dispersion.theory._snapshot import (
    Freezer,
    FrozenClaim,
    all_terms,
    check_text,
    collect_definitions,
    freeze_definitions,
    readable_fact,
)
from softmax_dispersion.theory._witness import VacuityError, check_witness
from softmax_dispersion.theory.calculus import Differentiate, Monotone, SumDerivative
from softmax_dispersion.theory.definitions import (
    Definition,
    DefinitionError,
    Definitions,
    Family,
    FamilyDef,
    Let,
    LetDef,
    RealRoot,
    SumAt,
    SumDef,
    SumOver,
)
from softmax_dispersion.theory.rules import (
    Assume,
    Cite,
    ConvexCombination,
    ExpMonotone,
    Identity,
    Implied,
    Induction,
    Limit,
    LogMonotone,
    RealRoots,
    SumLinearity,
    SumOfTerms,
    WeightedSum,
    _record_cited_statement,
    require_sum_values_defined,
)
from softmax_dispersion.theory.terms import Term, TermError, show

__all__ = [
    "RULES",
    "Z3_TIMEOUT_MS",
    "Assume",
    "Cite",
    "Claim",
    "ClaimResult",
    "ConvexCombination",
    "Definition",
    "DefinitionError",
    "Differentiate",
    "ExpMonotone",
    "Family",
    "Identity",
    "Implied",
    "Induction",
    "Let",
    "Limit",
    "LogMonotone",
    "Monotone",
    "ProofError",
    "RealRoot",
    "RealRoots",
    "Step",
    "StepResult",
    "SumAt",
    "SumDerivative",
    "SumLinearity",
    "SumOfTerms",
    "SumOver",
    "WeightedSum",
    "check_definitions",
    "check_frozen",
    "checked",
]

RULES: tuple[type[Step], ...] = (
    Identity,
    Implied,
    Limit,
    ExpMonotone,
    LogMonotone,
    SumOfTerms,
    WeightedSum,
    ConvexCombination,
    SumLinearity,
    Monotone,
    SumDerivative,
    Differentiate,
    RealRoots,
    Cite,
    Induction,
    Assume,
)
"""The closed set of rules: a claim's step must be an instance of one of these exactly."""

_RULES_BY_NAME = {rule.__name__: rule for rule in RULES}
assert set(LOGIC) == set(RULES), "every rule has its logic, and nothing else does"


# --------------------------------------------------------------------------------------
# Checking steps


def _terms_of(value: object) -> list[Term]:
    """The terms a frozen input holds (not those of nested steps: their own context)."""
    if type(value) is Term:
        return [value]
    if isinstance(value, SumRef):
        return [] if value.at is None else [value.at]
    if isinstance(value, tuple):
        return [t for item in value for t in _terms_of(item)]
    return []


def _index_problems(step: FrozenStep, context: Context) -> list[str]:
    """Index symbols where the step's context does not bind them."""
    logic = LOGIC[_RULES_BY_NAME[step.rule]]
    found: list[str] = []
    for name, value in step.inputs.items():
        if logic.kinds.get(name) == "steps":
            continue
        allowed: tuple[str, ...] = context.scope.index if context.scope is not None else ()
        if name in logic.generic_fields and context.scope is None:
            total = step.inputs.get("total")
            if isinstance(total, SumRef):
                definition = context.definitions.by_name.get(total.name)
                if isinstance(definition, SumDef):
                    allowed = definition.family.index
        stray = context.definitions.stray_index(_terms_of(value), allowed)
        if stray:
            found.append(
                f"{', '.join(stray)} is a summation index: it may appear only in the "
                "termwise sub-steps of a rule over its family"
            )
    return found


def conclusion_of(step: FrozenStep, definitions: Definitions) -> Term:
    """What ``step`` concludes, built by the kernel from its inputs."""
    rule = _RULES_BY_NAME[step.rule]
    return LOGIC[rule].conclusion(step, definitions)


def _check_one(step: FrozenStep, context: Context) -> tuple[StepResult, Term | None]:
    """Decide one step in ``context``: its rule, its inputs, then the rule's decision."""
    rule = _RULES_BY_NAME.get(step.rule)
    if step.error or rule is None:
        detail = step.error or f"{step.rule} is not one of the kernel's rules"
        return (
            StepResult(step.description, "not decided", "?", False, detail, 0.0, step.rule),
            None,
        )
    logic = LOGIC[rule]
    conclusion: Term | None = None
    statement = "?"
    local = replace(context, facts=list(context.facts), sub_results=[])

    def decide() -> str:
        nonlocal conclusion, statement
        found = _index_problems(step, context)
        if found:
            raise ProofError(f"a step input: {found[0]}")
        for name, value in step.inputs.items():
            if logic.kinds.get(name) != "steps":
                require_sum_values_defined(value, local)
        try:
            concluded = logic.conclusion(step, context.definitions)
        except (TermError, DefinitionError, ProofError) as error:
            logic.decide(step, local)  # its own failure names the cause best
            raise ProofError(f"the conclusion cannot be built: {error}") from None
        try:
            terms.check_size(concluded, "the conclusion")
        except TermError as error:
            raise ProofError(str(error)) from None
        statement = readable_fact(concluded, context.naturals)
        allowed = context.scope.index if context.scope is not None else ()
        stray = context.definitions.stray_index([concluded], allowed)
        if stray:
            raise ProofError(f"the conclusion mentions the summation index {', '.join(stray)}")
        detail: str = logic.decide(step, local)
        conclusion = concluded
        return detail

    verified, detail, seconds = timed(decide)
    if not verified:
        conclusion = None
    result = StepResult(
        description=step.description,
        method=logic.method,
        statement=statement,
        verified=verified,
        detail=detail,
        seconds=seconds,
        rule=step.rule,
        substeps=tuple(local.sub_results),
    )
    return result, conclusion


def _run_steps(
    steps: Sequence[FrozenStep], context: Context
) -> tuple[list[StepResult], list[Term], bool]:
    """Check ``steps`` in order; each verified conclusion becomes a fact for the next."""
    results, conclusions, ok, _ = _run_steps_to_end(steps, context)
    return results, conclusions, ok


def _run_steps_to_end(
    steps: Sequence[FrozenStep], context: Context, *, until_failure: bool = False
) -> tuple[list[StepResult], list[Term], bool, Context]:
    """:func:`_run_steps`, and the context after the last step (what it has shown); with
    ``until_failure``, only up to the first step that fails."""
    results: list[StepResult] = []
    conclusions: list[Term] = []
    current = context
    for step in steps:
        result, conclusion = _check_one(step, current)
        results.append(result)
        if until_failure and not result.verified:
            break
        if conclusion is not None:
            conclusions.append(conclusion)
            rule = _RULES_BY_NAME.get(step.rule)
            shown = LOGIC[rule].proves_derivative if rule is not None else False
            current = current.with_facts([conclusion], [conclusion[2]] if shown else [])
    return results, conclusions, all(r.verified for r in results), current


def _failed_step(step: Step, problem: str, start: float) -> StepResult:
    description = step.__dict__.get("description", "") if hasattr(step, "__dict__") else ""
    return StepResult(
        description if isinstance(description, str) else "",
        "not decided",
        "?",
        False,
        problem,
        time.perf_counter() - start,
        type(step).__name__,
    )


def _standalone(step: Step) -> tuple[FrozenStep, Definitions]:
    """A step on its own, frozen with the definitions it names."""
    freezer = Freezer()
    found = collect_definitions([step])
    frozen_definitions = freeze_definitions(found, freezer)
    definitions = Definitions(frozen_definitions)
    freezer.definitions = dict(definitions.by_name)
    return freezer.step(step), definitions


def check_definitions(definitions: Sequence[object]) -> Definitions:
    """Definitions as a claim author writes them, frozen and checked.

    Raises
    ------
    DefinitionError
        For a definition the kernel refuses (named in the message).
    """
    try:
        return Definitions(freeze_definitions(definitions, Freezer()))
    except (ExpressionError, TermError) as error:
        raise DefinitionError(str(error)) from None


def _check_step_alone(step: Step, facts: Sequence[sp.Basic]) -> StepResult:
    """Decide ``step`` on its own, against ``facts``; the definitions it names count."""
    start = time.perf_counter()
    try:
        frozen, definitions = _standalone(step)
        freezer = Freezer()
        frozen_facts = [freezer.convert.formula(f, "a fact") for f in facts]
        stray = definitions.stray_index(frozen_facts)
        if stray:
            raise DefinitionError(
                f"the facts mention the summation index {', '.join(stray)}; a family's "
                "domain says what its members satisfy"
            )
        _check_members(definitions, frozen_facts)
    except (DefinitionError, ExpressionError, TermError, ProofError) as error:
        return _failed_step(step, str(error), start)
    # Tried on its own, a step reads the given facts as earlier conclusions: a derivative
    # equation among them stands for a derivative rule's, which shows the derivative
    # exists.  In a claim only the rules' own conclusions do (see Context.differentiable).
    context = Context(
        facts=list(frozen_facts),
        definitions=definitions,
        runner=_run_steps,
        differentiable=frozenset(_derivatives_stated(frozen_facts)),
        couplings=tuple(definitions.names_behind([fact]) for fact in frozen_facts),
    )
    return _check_one(frozen, context)[0]


def _derivatives_stated(facts: Sequence[Term]) -> Iterator[Term]:
    """The derivatives that ``facts`` equate with a term free of derivatives."""
    for fact in facts:
        for part in terms.conjuncts(fact):
            if part[0] == "eq" and part[2][0] == "der" and not terms.has_op(part[3], "der"):
                yield terms.canonical(part[2])


def _show_conclusion(step: Step) -> sp.Basic:
    """The conclusion of a step on its own, as sympy (for authors and tests)."""
    if type(step) is Cite:
        cited = step.__dict__.get("claim")
        return cited.statement if type(cited) is Claim else sp.false
    try:
        frozen, definitions = _standalone(step)
        if frozen.error:
            return sp.false  # the step cannot be read: the kernel fails it, naming why
        return display(conclusion_of(frozen, definitions))
    except (DefinitionError, ExpressionError, TermError, ProofError):
        return sp.false


_core.STANDALONE = _check_step_alone
_core.CONCLUSION = _show_conclusion


# --------------------------------------------------------------------------------------
# Definitions that must be shown non-empty


def _candidates(family: FamilyDef, name: str, chosen: Mapping[str, Term]) -> list[Term]:
    """Values for the index symbol ``name`` suggested by the domain's bounds."""
    lower: list[tuple[Term, bool]] = []
    upper: list[tuple[Term, bool]] = []
    equal: list[Term] = []
    x = terms.sym(name)
    for relation in family.domain:
        relation = terms.substitute(relation, chosen)
        for part in terms.conjuncts(relation):
            if part[0] not in terms.RELATIONS:
                continue
            op, lhs, rhs = part[0], part[2], part[3]
            if op in ("gt", "ge"):
                op, lhs, rhs = {"gt": "lt", "ge": "le"}[op], rhs, lhs
            if lhs == x and name not in terms.free_names(rhs):
                if op == "eq":
                    equal.append(rhs)
                elif op in ("lt", "le"):
                    upper.append((rhs, op == "lt"))
            elif rhs == x and name not in terms.free_names(lhs):
                if op == "eq":
                    equal.append(lhs)
                elif op in ("lt", "le"):
                    lower.append((lhs, op == "lt"))
    found = list(equal)
    found += [b for b, strict in lower if not strict]
    found += [b for b, strict in upper if not strict]
    for (lo, _), (hi, _) in ((a, b) for a in lower for b in upper):
        found.append(terms.mul(terms.num(1, 2), terms.add(lo, hi)))
    found += [terms.add(b, terms.ONE) for b, strict in lower if strict]
    found += [terms.add(b, terms.MINUS_ONE) for b, strict in upper if strict]
    found.append(terms.ZERO)
    unique: list[Term] = []
    for item in found:
        if item not in unique and not terms.free_names(item) & set(family.index):
            unique.append(item)
    return unique[:8]


def _members(family: FamilyDef) -> list[dict[str, Term]]:
    """Members to try: the one the family gives, else combinations of bound values."""
    if family.member is not None:
        return [dict(zip(family.index, family.member, strict=True))]
    members: list[dict[str, Term]] = [{}]
    for name in family.index:
        grown = []
        for partial in members:
            for value in _candidates(family, name, partial):
                grown.append({**partial, name: value})
        members = grown[:16]
    return members


def _check_members(definitions: Definitions, facts: Sequence[Term]) -> None:
    """Every family's domain holds for some member wherever ``facts`` hold (z3)."""
    for family in definitions.families.values():
        if not family.domain:
            continue
        for member in _members(family):
            goal = terms.conj(*(terms.substitute(r, member) for r in family.domain))
            if proved(facts, goal):
                break
        else:
            raise DefinitionError(
                f"the domain of the family {family.name!r} is not shown non-empty where the "
                "assumptions hold (a family of no possible member would let its sums' rules "
                "prove anything): give Family(..., member=(...)), values of its index "
                "symbols that the assumptions put inside the domain"
            )


# --------------------------------------------------------------------------------------
# Claims


@dataclass(frozen=True)
class ClaimResult:
    """The outcome of checking one claim.

    ``statement`` and ``title`` are read from the frozen claim that was checked (what a
    person reads is what was checked); ``content()`` is that claim as data.
    """

    claim: Claim
    """The claim checked (the first object checked with this content; a result made
    from a certificate's content alone holds ``None``)."""
    steps: tuple[StepResult, ...]
    verified: bool
    seconds: float
    problem: str = ""
    content_hash: str = ""
    proof: tuple[Step, ...] = ()
    witness: str = ""
    id: str = ""
    title: str = ""
    statement: str = ""
    content_json: str = field(default="", repr=False)

    def content(self) -> dict[str, Any]:
        """The frozen claim as data (what the hash covers), or ``{}`` if it was unreadable."""
        return json.loads(self.content_json) if self.content_json else {}

    def readable_assumptions(self) -> list[str]:
        """The checked claim's assumptions as text, each one that mentions a natural-number
        symbol under ``for every natural l:`` (how the kernel reads it)."""
        frozen = _frozen_from(self.content())
        if frozen is None:
            return []
        return [readable_fact(a, frozen.naturals) for a in frozen.assumptions]

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready record of the claim and its verdict (read from the checked content)."""
        content = self.content()
        frozen = _frozen_from(content)
        return {
            "id": self.id,
            "title": self.title,
            "source": content.get("source", ""),
            "hash": self.content_hash,
            "statement": self.statement,
            "assumptions": self.readable_assumptions(),
            "definitions": _definition_records(frozen) if frozen else [],
            "verified": self.verified,
            "seconds": round(self.seconds, 4),
            "problem": self.problem,
            "witness": self.witness,
            "steps": [step.to_dict() for step in self.steps],
        }


def _frozen_from(content: Mapping[str, Any]) -> FrozenClaim | None:
    from softmax_dispersion.theory._serial import CertificateFormatError, read_claim

    if not content:
        return None
    try:
        return read_claim(content)
    except CertificateFormatError:
        return None


def _definition_records(frozen: FrozenClaim) -> list[dict[str, str]]:
    records = []
    for definition in frozen.definitions:
        if isinstance(definition, SumDef):
            family = definition.family.name
            equation = f"{show(definition.symbol)} = sum of {show(definition.term)} over {family!r}"
        elif hasattr(definition, "expression"):
            equation = f"{definition.name} = {show(definition.expression)}"
        else:
            equation = show(definition.facts()[0])
        records.append(
            {"symbol": definition.name, "equation": equation, "description": definition.description}
        )
    return records


@dataclass(frozen=True)
class _Entry:
    """What the kernel remembers of a checked claim (never handed out)."""

    frozen: FrozenClaim
    definitions: Definitions | None
    verified: bool
    problem: str
    result: ClaimResult


_REGISTRY: dict[str, _Entry] = {}
"""Every claim this kernel checked in this process, by content hash: its frozen content
and its verdict.  Only the kernel writes it; citations read it."""

_ACTIVE: set[int] = set()


@dataclass(frozen=True, eq=False)
class Claim:
    """A statement, its assumptions and definitions, a witness, its source and a proof.

    Parameters
    ----------
    id, title
        ``"T1"``, ``"tight bounds on every coefficient"``.
    statement
        A sympy boolean: what the claim proves.
    assumptions
        Sympy relations: what it assumes (signs, ranges, hypotheses), read left to
        right: each must be defined (its logarithms' arguments positive, its
        denominators non-zero, ...) where the ones before it hold.
    source
        The result of the paper it restates, or *derived*.
    proof
        A function returning the steps, so that building a claim is cheap and checking
        it does the work.
    cites
        Claims whose statements the proof uses, through :class:`Cite` steps.
    formulas
        Names of the formulas it exports.
    definitions
        Its :class:`SumOver`, :class:`Let` and :class:`RealRoot` definitions, in order
        (each may use the earlier ones).  They are part of what the claim says.
    witness
        Exact values of the free symbols (and of each family's index symbols), and
        ``Lambda`` functions for free functions, at which every assumption holds.
    naturals
        Symbols that range over the natural numbers: the statement holds for every
        natural value, and assumptions that mention them hold for every natural value
        (as for :class:`Induction`).

    The claim says: for every value of the free symbols (every natural value of the
    ``naturals``) and every family of the declared sizes and domains, with the defined
    symbols equal to their definitions, the assumptions imply the statement.  What is
    checked is the claim as it is when :meth:`check` reads it (its snapshot); the object
    is never consulted again, and only this exact class is a claim (no subclass).
    """

    id: str
    title: str
    statement: sp.Basic
    assumptions: Sequence[sp.Basic]
    source: str
    proof: Callable[[], Sequence[Step]]
    cites: Sequence[Claim] = ()
    formulas: Sequence[str] = field(default_factory=tuple)
    definitions: Sequence[Definition] = ()
    witness: Mapping[Any, Any] | None = None
    naturals: Sequence[sp.Symbol] = ()

    def __post_init__(self) -> None:
        # A claim must not change afterwards: its sequences become tuples and its witness
        # a copy (the dataclass itself is frozen; the kernel checks a snapshot anyway).
        for name in ("assumptions", "cites", "formulas", "definitions", "naturals"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if self.witness is not None:
            object.__setattr__(self, "witness", dict(self.witness))

    def content(self, steps: Sequence[Step] | None = None) -> dict[str, Any]:
        """The claim as data: what the kernel checks and a certificate records.

        Raises the kernel's error (an :class:`ExpressionError`, a
        :class:`DefinitionError`) for a claim outside the kernel's language or a proof
        that cannot be built.
        """
        return _content_of(self, _built_proof(self.proof) if steps is None else steps)

    def content_hash(self) -> str:
        """The SHA-256 of :meth:`content`: what a citation or a certificate refers to."""
        return content_hash(self.content())

    def check(self, cache: dict[str, ClaimResult] | None = None) -> ClaimResult:
        """Check the claim: cited claims, snapshot, definitions, witness, every step.

        ``cache`` is filled with the results, by content hash (for callers that collect
        them); the kernel's own registry decides what was checked: an entry put into
        ``cache`` by anyone else is never read.
        """
        return _check_claim(self, cache)


def _failed(claim: Any, start: float, problem: str, **extra: Any) -> ClaimResult:
    identifier = claim.__dict__.get("id", "") if hasattr(claim, "__dict__") else ""
    return ClaimResult(
        claim=claim if type(claim) is Claim else None,  # type: ignore[arg-type]
        steps=(),
        verified=False,
        seconds=time.perf_counter() - start,
        problem=problem,
        id=identifier if isinstance(identifier, str) else "",
        **extra,
    )


_SEQUENCES = ("assumptions", "cites", "formulas", "definitions", "naturals")


def _read_fields(claim: Claim) -> dict[str, Any]:
    """The claim's fields, read once from its instance dictionary (sequences as tuples,
    so that nothing is read twice and comes out different)."""
    data = {name: claim.__dict__.get(name) for name in Claim.__dataclass_fields__}
    for name in _SEQUENCES:
        value = data[name]
        if value is None or isinstance(value, (str, bytes)):
            raise ExpressionError(f"the claim's {name} must be a sequence")
        data[name] = tuple(value)
    return data


def _freeze(
    data: Mapping[str, Any], steps: Sequence[object], cites: Mapping[int, str]
) -> FrozenClaim:
    """The claim (its fields, read once) as the kernel holds it."""
    freezer = Freezer(cites=cites)
    convert = freezer.convert
    identifier = check_text(data["id"], "a claim's id", identifier=True)
    definitions = freeze_definitions(data["definitions"], freezer)
    by_name: dict[str, Any] = {}
    for definition in definitions:
        by_name.setdefault(definition.name, definition)
    freezer.definitions = by_name
    naturals = tuple(convert.symbol(s, "a natural-number symbol") for s in data["naturals"])
    frozen = FrozenClaim(
        id=identifier,
        title=check_text(data["title"], "a claim's title"),
        source=check_text(data["source"], "a claim's source"),
        statement=convert.formula(data["statement"], "the statement"),
        assumptions=tuple(convert.formula(a, "an assumption") for a in data["assumptions"]),
        naturals=naturals,
        definitions=definitions,
        witness=freezer.witness(data["witness"]),
        cites=tuple(cites[id(c)] for c in data["cites"]),
        steps=tuple(freezer.step(s) for s in steps),
        formulas=tuple(check_text(f, "a formula's name") for f in data["formulas"]),
    )
    too_large = _too_large(frozen)
    if too_large:  # before it is encoded and hashed: that expands every shared part
        raise ExpressionError(too_large)
    return frozen


def _built_proof(proof: Any) -> tuple[Step, ...]:
    """The steps a proof callable returns; a proof that cannot even be built (it raises,
    returns None or no sequence) proves nothing and says so in the kernel's error."""
    try:
        return tuple(proof())
    except Exception as error:
        raise ExpressionError(
            f"the proof could not be built: {type(error).__name__}: {error}"
        ) from error


def _content_of(claim: Claim, steps: Sequence[Step]) -> dict[str, Any]:
    data = _read_fields(claim)
    cites = {id(c): c.content_hash() for c in data["cites"]}
    return encode_claim(_freeze(data, steps, cites))


def _check_claim(claim: Claim, cache: dict[str, ClaimResult] | None) -> ClaimResult:
    start = time.perf_counter()
    if type(claim) is not Claim:
        return _failed(claim, start, f"a {type(claim).__name__} is not a kernel Claim")
    if id(claim) in _ACTIVE:
        return _failed(claim, start, "the claim cites itself (a citation cycle)")
    _ACTIVE.add(id(claim))
    try:
        try:
            data = _read_fields(claim)
        except Exception as error:  # a claim that cannot be read proves nothing
            return _failed(claim, start, f"the claim cannot be read: {error}")
        cited_results = []
        cites: dict[int, str] = {}
        for cited in data["cites"]:
            if type(cited) is not Claim:
                return _failed(
                    claim, start, f"a cited {type(cited).__name__} is not a kernel Claim"
                )
            outcome = _check_claim(cited, cache)
            cited_results.append(outcome)
            cites[id(cited)] = outcome.content_hash
        try:
            steps = _built_proof(data["proof"])
        except ExpressionError as error:
            return _failed(claim, start, str(error))
        try:
            if not all(cites.values()):
                failed = [r for r in cited_results if not r.content_hash]
                raise DefinitionError(
                    f"a cited claim could not be read ({failed[0].id}: {failed[0].problem})"
                )
            frozen = _freeze(data, steps, cites)
        except (ExpressionError, DefinitionError, TermError, RecursionError) as error:
            message = str(error) if not isinstance(error, RecursionError) else "nested too deep"
            return _failed(claim, start, message, proof=steps)
        except Exception as error:  # anything else the objects do: the claim fails
            return _failed(
                claim, start, f"the claim cannot be read: {type(error).__name__}: {error}"
            )
        result = check_frozen(frozen, claim=claim, proof=steps, start=start, cache=cache)
        if cache is not None:
            cache[result.content_hash] = result
        return result
    finally:
        _ACTIVE.discard(id(claim))


def check_frozen(
    frozen: FrozenClaim,
    *,
    claim: Claim | None = None,
    proof: tuple[Step, ...] = (),
    start: float | None = None,
    registry: dict[str, _Entry] | None = None,
    cache: Mapping[str, ClaimResult] | None = None,
    reuse: bool = False,
) -> ClaimResult:
    """Check a frozen claim (its cited claims must have been checked before).

    The verdict is recorded by content hash in the kernel's registry (or in
    ``registry``, one that :mod:`~softmax_dispersion.theory.recheck` keeps per
    certificate), where a citation finds it.  The claim is decided again unless
    ``reuse`` is set or ``cache`` holds, under its hash, the very result the registry
    records (a caller's cache is never read otherwise).
    """
    start = time.perf_counter() if start is None else start
    return _check_frozen(
        frozen,
        claim,
        proof,
        start,
        _REGISTRY if registry is None else registry,
        cache,
        reuse,
    )


def checked(digest: str) -> ClaimResult | None:
    """The result of the claim with this content hash, if this kernel checked it."""
    entry = _REGISTRY.get(digest)
    return None if entry is None else entry.result


def _too_large(frozen: FrozenClaim) -> str | None:
    """What is wrong with a claim whose terms weigh more, in all, than one term may.

    Each term is within the limit, but a claim of many large terms (red team 16: 16
    steps on one chain of 2^17 nodes) took a minute and 1.4 GB, and its certificate
    passed recheck's 64 MiB limit on a file."""
    total = sum(terms.weight(term) for term in all_terms(frozen))
    if total > terms.MAX_WEIGHT:
        return f"the claim is too large: its terms weigh {total}, beyond {terms.MAX_WEIGHT}"
    return None


def _check_frozen(
    frozen: FrozenClaim,
    claim: Claim | None,
    proof: tuple[Step, ...],
    start: float,
    registry: dict[str, _Entry],
    cache: Mapping[str, ClaimResult] | None,
    reuse: bool,
) -> ClaimResult:
    content = encode_claim(frozen)
    text = canonical_json(content)
    digest = content_hash(content)
    _record_cited_statement(digest, frozen.statement)
    entry = registry.get(digest)
    known = entry is not None and (
        reuse or (cache is not None and cache.get(digest) is entry.result)
    )
    if entry is not None and known:
        result = entry.result
        if (result.verified, result.problem, result.content_hash) != (
            entry.verified,
            entry.problem,
            digest,
        ):  # the handed-out result was changed: hand out a fresh copy of the verdict
            result = _result(entry, digest, claim, proof, start)
        return result
    try:
        verified, problem, steps, witness, definitions = _verdict(frozen, registry)
    except (_core.BudgetExceeded, KeyboardInterrupt):
        raise
    except Exception as error:  # a claim the kernel cannot even examine proves nothing
        verified, problem, steps, witness, definitions = (
            False,
            f"the claim cannot be examined: {type(error).__name__}: {error}",
            [],
            "",
            None,
        )
    result = ClaimResult(
        claim=claim,  # type: ignore[arg-type]
        steps=tuple(steps),
        verified=verified,
        seconds=time.perf_counter() - start,
        problem=problem,
        content_hash=digest,
        proof=proof,
        witness=witness,
        id=frozen.id,
        title=frozen.title,
        statement=readable_fact(frozen.statement, frozen.naturals),
        content_json=text,
    )
    registry[digest] = _Entry(frozen, definitions, verified, problem, result)
    return result


def _result(
    entry: _Entry, digest: str, claim: Claim | None, proof: tuple[Step, ...], start: float
) -> ClaimResult:
    old = entry.result
    return ClaimResult(
        claim=claim,  # type: ignore[arg-type]
        steps=old.steps,
        verified=entry.verified,
        seconds=time.perf_counter() - start,
        problem=entry.problem,
        content_hash=digest,
        proof=proof,
        witness=old.witness,
        id=entry.frozen.id,
        title=entry.frozen.title,
        statement=readable_fact(entry.frozen.statement, entry.frozen.naturals),
        content_json=canonical_json(encode_claim(entry.frozen)),
    )


def _citations(
    frozen: FrozenClaim, registry: Mapping[str, _Entry]
) -> Callable[[ClaimRef], CitedSnapshot | str]:
    """How a Cite step of ``frozen`` finds a cited claim: by the hash it declares."""

    def find(ref: ClaimRef) -> CitedSnapshot | str:
        entry = registry.get(ref.digest) if ref.digest in frozen.cites else None
        if entry is None:
            return (
                f"{ref.label or 'the cited claim'!r} is not among the claims {frozen.id} "
                "declares in cites (a cited claim is the very object that was checked)"
            )
        cited = entry.frozen
        if ref.label != cited.id:
            # the label is what a reader sees of the citation: it must name what is cited
            return f"the citation is labelled {ref.label!r} but cites {cited.id}"
        return CitedSnapshot(
            id=cited.id,
            digest=ref.digest,
            statement=cited.statement,
            assumptions=cited.assumptions,
            definitions=entry.definitions or Definitions(()),
            naturals=frozenset(cited.naturals),
            verified=entry.verified,
            problem=entry.problem,
        )

    return find


def _names_problem(frozen: FrozenClaim) -> str | None:
    symbols: set[str] = set()
    functions: set[str] = set()
    for term in all_terms(frozen):
        symbols |= terms.free_names(term)
        functions |= terms.free_functions(term)
    for definition in frozen.definitions:
        if isinstance(definition, SumDef) and definition.var is not None:
            functions.add(definition.name)
        else:
            symbols.add(definition.name)
    both = sorted(symbols & functions)
    if both:
        return f"the name {both[0]} is both a symbol and a function in {frozen.id}"
    return _display_clash(symbols | functions, frozen.id)


def _display_clash(names: set[str], claim_id: str) -> str | None:
    """Two names of one claim that sympy's LaTeX or unicode printer shows alike (``a1``
    and ``a_1`` are both a₁, ``lamda`` and ``lambda`` both λ, ``Alpha`` and ``A`` both
    A): the docs and a terminal would show one name where the kernel read two; or one
    name shown as a number (``Epsilon`` is a capital epsilon, which looks like E)."""
    for name in sorted(names):
        operation = _operation_suffix(name)
        if operation:
            return (
                f"the name {name} of {claim_id} ends in '{operation}', which sympy's "
                f"printers show as an operation on a name ({_pretty_name(name)!r}): rename it"
            )
    for printer in (_latex_name, _pretty_name):
        seen: dict[str, str] = {}
        for name in sorted(names):
            shown = printer(name)
            if shown in terms.NUMBER_NAMES and name != shown:
                return f"the name {name} of {claim_id} prints as {shown!r}, a number"
            if shown in seen:
                return (
                    f"the names {seen[shown]} and {name} of {claim_id} print alike "
                    f"({shown!r}): rename one"
                )
            seen[shown] = name
    return None


OPERATION_SUFFIXES = ("abs", "mag", "norm", "avg", "prime", "prm")
"""Name endings sympy's LaTeX and unicode printers turn into an operation on the rest of
the name: ``xabs`` and ``xmag`` show as |x|, the absolute value of the term language;
``xnorm`` as ‖x‖, ``xavg`` as ⟨x⟩, ``xprime`` and ``xprm`` as x′, a derivative's mark.
Decorations that mark another variable (``Bbar``, ``Zdot``, ``Dhat``, ``xvec``) stay names."""


def _operation_suffix(name: str) -> str | None:
    """The operation ending of ``name`` or of one of its sub- or superscripts, as sympy
    splits them (``x_yabs`` shows x with the subscript |y|), if any."""
    from sympy.printing.conventions import split_super_sub

    base, supers, subs = split_super_sub(name)
    for part in (base, *supers, *subs):
        for suffix in OPERATION_SUFFIXES:
            if part.lower().endswith(suffix) and len(part) > len(suffix):
                return suffix
    return None


# Greek letters sympy prints with a Latin letter's shape (upright capitals in LaTeX).
_LOOK_ALIKES = str.maketrans("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧο", "ABEZHIKMNOPTYXo")


@functools.lru_cache(maxsize=4096)
def _latex_name(name: str) -> str:
    shown = "".join(sp.latex(sp.Symbol(name)).split())
    return re.sub(r"\\mathrm\{([A-Za-z]+)\}", r"\1", shown)


@functools.lru_cache(maxsize=4096)
def _pretty_name(name: str) -> str:
    return "".join(sp.pretty(sp.Symbol(name), use_unicode=True).split()).translate(_LOOK_ALIKES)


def _verdict(
    frozen: FrozenClaim, registry: Mapping[str, _Entry]
) -> tuple[bool, str, list[StepResult], str, Definitions | None]:
    """Decide a frozen claim: structure, witness, citations, then every step."""
    if frozen.error:
        return False, frozen.error, [], "", None
    too_large = _too_large(frozen)  # a claim read from a certificate meets it here
    if too_large:
        return False, too_large, [], "", None
    try:
        definitions = Definitions(frozen.definitions)
        _structure(frozen, definitions)
    except (DefinitionError, ProofError, TermError) as error:
        return False, str(error), [], "", None
    problems: list[str] = []
    try:
        witness = check_witness(definitions, frozen.assumptions, frozen.witness, frozen.naturals)
    except VacuityError as error:
        witness = ""
        problems.append(f"the assumptions are not shown satisfiable: {error}")
    facts = [*frozen.assumptions, *definitions.facts()]
    try:
        _check_members(definitions, facts)
    except DefinitionError as error:
        problems.append(str(error))
    failed_cites = []
    for cited in frozen.cites:
        entry = registry.get(cited)
        if entry is None:
            failed_cites.append(f"{cited[:12]}: not checked before it is cited")
        elif not entry.verified:
            failed_cites.append(f"{entry.frozen.id}: {entry.problem}")
    if failed_cites:
        problems.append(f"a cited claim did not verify ({'; '.join(failed_cites)})")
    context = Context(
        facts=facts,
        definitions=definitions,
        runner=_run_steps,
        naturals=frozenset(frozen.naturals),
        citations=_citations(frozen, registry),
        couplings=tuple(definitions.names_behind([a]) for a in frozen.assumptions),
    )

    def shown_from(prefix: list[Term]) -> tuple[list[Term], frozenset[Term]]:
        """What the leading steps show from ``prefix`` alone, up to the first that fails."""
        end = _run_steps_to_end(frozen.steps, context.with_only(prefix), until_failure=True)[3]
        return end.facts[len(prefix) :], end.differentiable

    problems += _undefined_assumptions(frozen.assumptions, definitions, shown_from)
    results, conclusions, ok, end = _run_steps_to_end(frozen.steps, context)
    if not frozen.steps:
        problems.append("the proof has no steps")
    elif not ok:
        failed = next(r for r in results if not r.verified)
        problems.append(f"a step failed ({failed.description})")
    elif terms.canonical(conclusions[-1]) != terms.canonical(frozen.statement):
        problems.append("the last step does not conclude the statement")
    else:
        parts = [("the statement", [frozen.statement], []), *_definition_parts(definitions.items)]
        problems += _derivatives_not_shown(parts, end.differentiable)
        problems += _binders_holding_tied(frozen.statement, definitions, context.couplings)
        problems += _first_undefined(
            parts, [*facts, *conclusions[:-1]], "where the assumptions hold"
        )
    return not problems, "; ".join(problems), results, witness, definitions


def _undefined_assumptions(
    assumptions: Sequence[Term],
    definitions: Definitions,
    shown_from: Callable[[list[Term]], tuple[list[Term], frozenset[Term]]],
) -> list[str]:
    """Every partial operation of each assumption, and of the definitions it mentions, is
    inside its domain where the assumptions *before* it hold.

    The statement, and what each defined symbol stands for, are held to the same rule
    where all the assumptions hold, with what the steps before the last showed: the
    kernel reads sqrt(-1), log(0) or 1/0 as an unspecified real, and a claim true only of
    such a number reads otherwise to a person (red team 16: ``exp(pi*sqrt(-1)) + 1 !=
    0`` verified, Euler's identity denied, as read; red team 17: the same with ``y =
    sqrt(z)`` a definition).

    An assumption is a fact every step may use, so it must not be true only of an
    unspecified value: z3 reads ``sqrt(x)**2 = x`` as ``r**2 = x`` for some real ``r``,
    which gives ``x >= 0``, while a reader takes sqrt(-1) = i and sees no such bound.
    The steps cannot show an assumption defined, since they use it; so the assumptions
    are read left to right, as a conjunction that stops at the first false one, with the
    definitions' defining equations (a ``Let``'s equation and a root's interval, which
    constrain nothing else) and the signs of the sums the kernel shows itself
    (:func:`_sum_signs`).  Where those do not decide it, the proof's leading steps are
    run from those facts alone, up to the first that fails (``shown_from``): what they
    conclude follows from the assumptions before, so it may show the assumption defined
    (``log(2/eta) > 0`` from ``0 < eta < 1``, by a monotonicity rule z3 does not know);
    only a derivative rule among those steps shows a derivative in them to exist.
    """
    checked: set[str] = set()
    for index, assumption in enumerate(assumptions):
        mentioned = definitions.mentioned([assumption])
        unchecked = [d for d in mentioned if d.name not in checked]
        checked |= {d.name for d in unchecked}
        parts = [("an assumption", [assumption], []), *_definition_parts(unchecked)]
        partial = any(terms.domain_conditions(*exprs) for _, exprs, _ in parts)
        derivative = any(node[0] == "der" for _, exprs, _ in parts for node in _walk(exprs))
        if not (partial or derivative):
            continue
        facts = [*assumptions[:index], *definitions.facts()]
        facts += _sum_signs([d for d in mentioned if isinstance(d, SumDef)], facts)
        where = f"where the assumptions before {show(assumption)} hold"
        problem = _first_undefined(parts, facts, where) if partial else []
        if problem or derivative:
            conclusions, differentiable = shown_from(facts)
            if problem:
                problem = _first_undefined(parts, [*facts, *conclusions], where)
            problem = problem or _derivatives_not_shown(parts, differentiable)
        if problem:
            return problem
    return []


def _walk(exprs: Sequence[Term]) -> Iterator[Term]:
    for expr in exprs:
        yield from terms.walk(expr)


def _definition_parts(items: Sequence[Any]) -> list[tuple[str, list[Term], list[Term]]]:
    """What each definition stands for, each part with the facts that hold inside it: a
    ``Let``'s expression; a family's count, domain and member; a sum's term, inside the
    domain."""
    parts: list[tuple[str, list[Term], list[Term]]] = []
    for item in items:
        if isinstance(item, LetDef):
            parts.append((f"the definition of {item.name}", [item.expression], []))
        elif isinstance(item, SumDef):
            family = item.family
            parts.append(
                (
                    f"the family of {item.name}",
                    [family.count, *family.domain, *(family.member or ())],
                    [],
                )
            )
            parts.append((f"the term of {item.name}", [item.term], list(family.domain)))
    return parts


def _first_undefined(
    parts: Sequence[tuple[str, list[Term], list[Term]]], facts: Sequence[Term], where: str
) -> list[str]:
    """The first part whose partial operations ``facts`` do not show defined."""
    for what, exprs, inside in parts:
        try:
            require_defined([*facts, *inside], exprs, f"{what} is not defined {where}")
        except ProofError as error:
            return [str(error)]
    return []


def _sum_signs(sums: Sequence[SumDef], facts: Sequence[Term]) -> list[Term]:
    """``S > 0`` for a sum of at least one term, each positive in its family's domain
    (``S >= 0`` for terms that are never negative), decided by z3 from ``facts``, the
    count and the term first shown defined: what SumOfTerms with the bound 0 concludes."""
    signs: list[Term] = []
    for total in sums:
        family = total.family
        parts = [("the count", [family.count], []), ("the term", [total.term], list(family.domain))]
        if total.var is not None or _first_undefined(parts, facts, ""):
            continue
        for relation, least in (("gt", 1), ("ge", 0)):
            if proved(facts, terms.rel("ge", family.count, terms.num(least))) and proved(
                [*facts, *family.domain], terms.rel(relation, total.term, terms.ZERO)
            ):
                signs.append(terms.rel(relation, total.symbol, terms.ZERO))
                break
    return signs


def _binders_holding_tied(
    statement: Term, definitions: Definitions, couplings: Sequence[frozenset[str]]
) -> list[str]:
    """No limit or derivative in the statement holds fixed what the statement's own
    hypotheses tie to its variable.

    The rules saw the assumptions' ties (:func:`~softmax_dispersion.theory._core.held_fixed`),
    but a step may conclude a derivative and a later one put it under a hypothesis:
    ``beta*theta = 1 -> d(beta*theta)/dtheta = 1/theta`` verified through ``Implied``
    (red team 20), where ``Assume`` refused it.  What the statement supposes (an
    implication's hypothesis; a disjunction, a negation or an equivalence, each part the
    others' hypothesis) ties its names here as an assumption does; what it asserts (a
    relation, a conjunction of them) ties nothing.
    """
    ties = [*couplings]
    for supposed in _supposed(statement):
        for relation in _relations_outside_binders(supposed):
            ties.append(definitions.names_behind(list(_parts_outside_binders(relation))))
    for node in terms.walk(statement):
        if node[0] in ("lim", "der"):
            var, body = node[2], node[3]
            tied = tied_to(ties, definitions, [body], var)
            if tied:
                binder = "a limit" if node[0] == "lim" else "a derivative"
                return [
                    f"the assumptions or what the statement supposes tie {', '.join(tied)} "
                    f"to {var}, which {binder} in {var} holds fixed in {terms.show(node)} "
                    f"(write what varies with {var} as a function of it)"
                ]
    return []


def _supposed(formula: Term) -> Iterator[Term]:
    """The parts of ``formula`` it supposes rather than asserts."""
    if formula[0] == "and":
        for child in formula.children:
            yield from _supposed(child)
    elif formula[0] == "implies":
        hypothesis, conclusion = formula.children
        yield hypothesis
        yield from _supposed(conclusion)
    elif formula[0] in terms.CONNECTIVES:  # or, not, equiv: every part may be supposed
        yield formula


def _relations_outside_binders(formula: Term) -> Iterator[Term]:
    """The relations of a formula, through its connectives (not into a binder's body)."""
    if formula[0] in terms.RELATIONS:
        yield formula
    elif formula[0] in terms.CONNECTIVES:
        for child in formula.children:
            yield from _relations_outside_binders(child)


def _parts_outside_binders(term: Term) -> Iterator[Term]:
    """The largest parts of ``term`` holding no limit or derivative, and each binder's
    point (which lies outside what it binds)."""
    if not terms.has_op(term, "lim", "der"):
        yield term
    elif term[0] in ("lim", "der"):
        yield from _parts_outside_binders(term[4])
    else:
        for child in term.children:
            yield from _parts_outside_binders(child)


def _derivatives_not_shown(
    parts: Sequence[tuple[str, list[Term], list[Term]]], shown: frozenset[Term]
) -> list[str]:
    """Every derivative in ``parts`` (the statement, an assumption, what a defined symbol
    stands for) exists, shown by a derivative rule (Differentiate, SumDerivative).  An
    equation ``f'(x) = g`` says it exists (as a reader reads it, and as Coq prints it:
    ``is_derive``), and a derivative where none exists is an unspecified real, which a
    reader computes otherwise (red team 17: the square of d/dx sqrt(x) at -1 is not -1/4,
    verified; a reader gets (-i/2)^2; red team 18: the same derivative as a ``Let``).
    Facts about a derivative's value alone never show it exists."""
    for what, exprs, _ in parts:
        for node in _walk(exprs):
            if node[0] == "der" and terms.canonical(node) not in shown:
                return [
                    f"{what} holds the derivative {terms.show(node)}, which no "
                    "derivative rule (Differentiate, SumDerivative) shows to exist"
                ]
    return []


def _structure(frozen: FrozenClaim, definitions: Definitions) -> None:
    """The statement, assumptions and naturals against the definitions."""
    problem = _names_problem(frozen)
    if problem:
        raise DefinitionError(problem)
    for what, exprs in (
        ("the statement", [frozen.statement]),
        ("an assumption", frozen.assumptions),
    ):
        stray = definitions.stray_index(exprs)
        if stray:
            raise DefinitionError(
                f"{what} mentions {', '.join(stray)}, a summation index: say what every "
                "member satisfies in its family's domain"
            )
    symbols: set[str] = set()
    for term in all_terms(frozen):
        symbols |= terms.free_names(term)
    for name in frozen.naturals:
        if name in definitions.defined_names or name in definitions.index_symbols:
            raise DefinitionError(f"{name} is defined or an index, not a natural number")
        if name not in symbols:
            # a name no term holds (or a function's) would change the content, and so the
            # hash a citing claim names, while no display shows it
            raise DefinitionError(f"{name} is declared a natural number but is no symbol here")
        for definition in definitions.items:
            parts = [*definition.body(), definition.symbol]
            if any(name in terms.free_names(p) for p in parts):
                raise DefinitionError(f"the definitions must not depend on {name}")


def rule_named(name: str) -> type[Step]:
    """The kernel rule called ``name``."""
    return _RULES_BY_NAME[name]
