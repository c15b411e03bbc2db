"""The proof kernel: claims, proof steps, definitions, and the rules that decide them.

A :class:`Claim` is a sympy statement with assumptions, definitions, a witness and a
proof, a list of :class:`Step` objects.  Checking a claim

1. checks its definitions (:mod:`~softmax_dispersion.theory.definitions`: fresh symbols,
   each defined once, before use, never in terms of itself; index symbols bound);
2. checks that its assumptions can all hold, at an explicit witness
   (:mod:`~softmax_dispersion.theory._witness`): a claim with contradictory
   assumptions fails;
3. checks the claims it cites, once each (by content hash);
4. walks the steps in order.  Each step must be an instance of one of the kernel's
   :data:`RULES` (the set is closed), its inputs must be in the kernel's language
   (exact rationals, real symbols: :mod:`~softmax_dispersion.theory._expressions`), and
   its rule must decide its side conditions.  Only then is its conclusion added to the
   *facts* (the assumptions, the definitions' equations, earlier conclusions).

The claim is verified when all of this holds and the last conclusion is the statement.

The deciders: ``cancel`` after ``t = exp(.)`` for identities (with denominators,
logarithms' arguments and powers' bases proved non-zero or positive), z3 for real
arithmetic (``unknown`` and timeouts fail), exact real-root counting, and limits by
sympy's Gruntz algorithm *and* the leading terms, with every parameter's sign a fact.

Anything else (an exception, a timeout, a non-rational expression given to ``cancel``)
fails the step loudly: nothing is ever assumed to hold because a method gave up.
Every relation the kernel builds is unevaluated (``evaluate=False``): sympy never gets
to settle a comparison numerically behind a checker's back.

This module is the public import point of the kernel; the rules live in
:mod:`~softmax_dispersion.theory.rules` and :mod:`~softmax_dispersion.theory.calculus`.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from softmax_dispersion.theory import _core
from softmax_dispersion.theory._core import (
    Z3_TIMEOUT_MS,
    CitedClaim,
    CitedResult,
    Context,
    ProofError,
    Step,
    StepResult,
    timed,
)
from softmax_dispersion.theory._expressions import (
    ExpressionError,
    is_real_symbol,
    problems,
    validate,
)
from softmax_dispersion.theory._serial import claim_content, content_hash
from softmax_dispersion.theory._witness import VacuityError, check_witness
from softmax_dispersion.theory.calculus import Differentiate, Monotone, SumDerivative
from softmax_dispersion.theory.definitions import (
    Definition,
    DefinitionError,
    Definitions,
    Family,
    Let,
    RealRoot,
    SumAt,
    SumOver,
)
from softmax_dispersion.theory.rules import (
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
)

__all__ = [
    "RULES",
    "Z3_TIMEOUT_MS",
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
)
"""The closed set of rules: a claim's step must be an instance of one of these exactly."""

_RULES_BY_NAME = {rule.__name__: rule for rule in RULES}


# --------------------------------------------------------------------------------------
# Checking steps


def _input_problems(value: object, scope: Family | None, definitions: Definitions) -> list[str]:
    """Why a step input is outside the kernel's language (empty when it is inside)."""
    if value is None or isinstance(value, (bool, str)):
        return []
    if isinstance(value, tuple):
        return [p for item in value for p in _input_problems(item, scope, definitions)]
    if isinstance(value, Step) or type(value) in (SumOver, RealRoot, Family, Claim):
        return []  # checked where they are used (resolved against the definitions)
    if type(value) is SumAt:
        return _input_problems(value.value, scope, definitions)
    if isinstance(value, sp.Basic):
        found = list(problems(value))
        allowed = scope.index if scope is not None else ()
        stray = definitions.stray_index([value], allowed)
        if stray:
            found.append(
                f"{', '.join(stray)} is a summation index: it may appear only in the "
                "termwise sub-steps of a rule over its family"
            )
        return found
    return [f"an input of type {type(value).__name__} (the kernel takes sympy objects)"]


def _check_one(step: Step, context: Context) -> tuple[StepResult, sp.Basic | None]:
    """Decide one step in ``context``: its rule, its inputs, then the rule's decision."""
    rule = type(step)
    description = str(getattr(step, "description", ""))
    if rule not in RULES or _RULES_BY_NAME.get(rule.__name__) is not rule:
        detail = (
            f"{rule.__name__} is not one of the kernel's rules; a claim may use only "
            f"{', '.join(sorted(_RULES_BY_NAME))}"
        )
        return (
            StepResult(description, "not a kernel rule", "?", False, detail, 0.0, rule.__name__),
            None,
        )
    conclusion: sp.Basic | None = None
    statement = "?"
    local = Context(
        facts=list(context.facts),
        definitions=context.definitions,
        runner=context.runner,
        scope=context.scope,
        naturals=context.naturals,
        citations=context.citations,
    )

    def decide() -> str:
        nonlocal conclusion, statement
        found = []
        for name, value in step.inputs():
            infinity = rule is Limit and name in ("point", "expected")
            if infinity and isinstance(value, sp.Basic):
                found += [p for p in problems(value, infinity_allowed=True)]
                continue
            if name != "description" and isinstance(value, str):
                found.append(f"{name} is text, not an expression")
                continue
            scope = context.scope
            if name in rule.generic_fields:  # read for a generic member of the sum's family
                total = getattr(step, "total", None)
                if type(total) in (SumOver, SumAt) and scope is None:
                    scope = total.family  # type: ignore[union-attr]
            found += _input_problems(value, scope, context.definitions)
        if found:
            raise ProofError(f"a step input: {found[0]}")
        concluded = rule.conclusion.fget(step)  # type: ignore[attr-defined]
        statement = sp.sstr(concluded)
        validate(concluded, "the conclusion")
        allowed = context.scope.index if context.scope is not None else ()
        stray = context.definitions.stray_index([concluded], allowed)
        if stray:
            raise ProofError(f"the conclusion mentions the summation index {', '.join(stray)}")
        detail: str = rule.decide(step, local)
        conclusion = concluded
        return detail

    verified, detail, seconds = timed(decide)
    if not verified:
        conclusion = None
    result = StepResult(
        description=description,
        method=rule.method,
        statement=statement,
        verified=verified,
        detail=detail,
        seconds=seconds,
        rule=rule.__name__,
        substeps=tuple(local.sub_results),
    )
    return result, conclusion


def _run_steps(
    steps: Sequence[Step], context: Context
) -> tuple[list[StepResult], list[sp.Basic], bool]:
    """Check ``steps`` in order; each verified conclusion becomes a fact for the next."""
    results: list[StepResult] = []
    conclusions: list[sp.Basic] = []
    current = context
    for step in steps:
        result, conclusion = _check_one(step, current)
        results.append(result)
        if conclusion is not None:
            conclusions.append(conclusion)
            current = current.with_facts([conclusion])
    return results, conclusions, all(r.verified for r in results)


def _check_step_alone(step: Step, facts: Sequence[sp.Basic]) -> StepResult:
    """Decide ``step`` on its own, against ``facts``; the definitions it names count."""
    start = time.perf_counter()
    try:
        values = [v for _, v in step.inputs()]
        definitions = Definitions.collect(values)
        facts = [sp.sympify(f) for f in facts]
        for fact in facts:
            validate(fact, "a fact")
        stray = definitions.stray_index(facts)
        if stray:
            raise DefinitionError(
                f"the facts mention the summation index {', '.join(stray)}; a family's "
                "domain says what its members satisfy"
            )
    except (DefinitionError, ExpressionError) as error:
        rule = type(step)
        return StepResult(
            str(getattr(step, "description", "")),
            getattr(rule, "method", "?"),
            "?",
            False,
            str(error),
            time.perf_counter() - start,
            rule.__name__,
        )
    context = Context(facts=list(facts), definitions=definitions, runner=_run_steps)
    return _check_one(step, context)[0]


_core.STANDALONE = _check_step_alone  # Step.check runs the kernel's own step loop


# --------------------------------------------------------------------------------------
# Claims


@dataclass(frozen=True)
class ClaimResult:
    """The outcome of checking one claim."""

    claim: Claim
    steps: tuple[StepResult, ...]
    verified: bool
    seconds: float
    problem: str = ""
    content_hash: str = ""
    proof: tuple[Step, ...] = ()
    witness: str = ""

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready record of the claim and its verdict."""
        return {
            "id": self.claim.id,
            "title": self.claim.title,
            "source": self.claim.source,
            "hash": self.content_hash,
            "statement": sp.sstr(self.claim.statement),
            "assumptions": [sp.sstr(a) for a in self.claim.assumptions],
            "definitions": [
                {
                    "symbol": sp.sstr(d.symbol),
                    "equation": sp.sstr(d.equation),
                    "description": d.description,
                }
                for d in self.claim.definitions
            ],
            "verified": self.verified,
            "seconds": round(self.seconds, 4),
            "problem": self.problem,
            "witness": self.witness,
            "steps": [step.to_dict() for step in self.steps],
        }


_ACTIVE: set[int] = set()

_ISSUED: dict[int, tuple[str, bool]] = {}
"""The results this kernel made in this process, by identity: their hash and verdict.

A ``cache`` handed to :meth:`Claim.check` is the caller's, so it is not trusted: an
entry counts only if it is a result the kernel itself made (the very object, alive)
for the claim being checked, with the hash and verdict it was made with.  Anything
else (a hand-built :class:`ClaimResult`, a genuine result of another claim filed under
this claim's hash, a result changed afterwards) is ignored and the claim checked again.
"""


def _issued(result: ClaimResult) -> ClaimResult:
    """Record ``result`` as made by the kernel (until it is garbage-collected)."""
    key = id(result)
    _ISSUED[key] = (result.content_hash, result.verified)
    weakref.finalize(result, _ISSUED.pop, key, None)
    return result


def _trusted(entry: object, digest: str) -> bool:
    """``entry`` is a result the kernel made for the claim whose hash is ``digest``."""
    return (
        type(entry) is ClaimResult
        and _ISSUED.get(id(entry)) == (digest, entry.verified)
        and entry.content_hash == digest
    )


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
        Sympy relations: what it assumes (signs, ranges, hypotheses).
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
    symbols equal to their definitions, the assumptions imply the statement.
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
        # A checked claim must not change afterwards: its sequences become tuples and
        # its witness a copy (the dataclass itself is frozen).
        for name in ("assumptions", "cites", "formulas", "definitions", "naturals"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if self.witness is not None:
            object.__setattr__(self, "witness", dict(self.witness))

    def content(self, steps: Sequence[Step] | None = None) -> dict[str, Any]:
        """The claim as data: statement, assumptions, definitions, witness, steps, cites."""
        steps = tuple(self.proof()) if steps is None else steps
        return claim_content(self, steps, lambda cited: cited.content_hash())

    def content_hash(self) -> str:
        """The SHA-256 of :meth:`content`: what a citation or a certificate refers to."""
        return content_hash(self.content())

    def check(self, cache: dict[str, ClaimResult] | None = None) -> ClaimResult:
        """Check the claim: definitions, witness, cited claims, then every step in order.

        ``cache`` maps content hashes to results already computed, so that a claim cited
        by several others is checked once.  Only results this kernel made in this
        process, for a claim with that very hash, are taken from it; any other entry
        is ignored (and replaced).
        """
        cache = {} if cache is None else cache
        start = time.perf_counter()
        if id(self) in _ACTIVE:
            return self._failed(start, "the claim cites itself (a citation cycle)")
        _ACTIVE.add(id(self))
        try:
            return self._check(cache, start)
        finally:
            _ACTIVE.discard(id(self))

    def _failed(self, start: float, problem: str, **extra: Any) -> ClaimResult:
        return ClaimResult(
            claim=self,
            steps=(),
            verified=False,
            seconds=time.perf_counter() - start,
            problem=problem,
            **extra,
        )

    def _check(self, cache: dict[str, ClaimResult], start: float) -> ClaimResult:
        cited_results = [cited.check(cache) for cited in self.cites]
        try:
            steps = tuple(self.proof())
            digest = content_hash(claim_content(self, steps, _hash_of(self.cites, cited_results)))
        except Exception as error:  # a proof that cannot even be built proves nothing
            return self._failed(
                start, f"the proof could not be built: {type(error).__name__}: {error}"
            )
        if _trusted(cache.get(digest), digest):
            return cache[digest]
        try:
            definitions = self._structure()
        except (DefinitionError, ExpressionError, ProofError) as error:
            outcome = _issued(self._failed(start, str(error), content_hash=digest, proof=steps))
            cache[digest] = outcome
            return outcome
        problems_found: list[str] = []
        try:
            witness = check_witness(definitions, self.assumptions, self.witness, self.naturals)
        except VacuityError as error:
            witness = ""
            problems_found.append(f"the assumptions are not shown satisfiable: {error}")
        failed_cites = [f"{r.claim.id}: {r.problem}" for r in cited_results if not r.verified]
        if failed_cites:
            problems_found.append(f"a cited claim did not verify ({'; '.join(failed_cites)})")
        context = Context(
            facts=[*self.assumptions, *definitions.facts()],
            definitions=definitions,
            runner=_run_steps,
            naturals=frozenset(self.naturals),
            citations=_citations(self, cited_results),
        )
        results, _, ok = _run_steps(steps, context)
        if not steps:
            problems_found.append("the proof has no steps")
        elif not ok:
            failed = next(r for r in results if not r.verified)
            problems_found.append(f"a step failed ({failed.description})")
        elif results and steps[-1].conclusion != self.statement:
            problems_found.append("the last step does not conclude the statement")
        outcome = ClaimResult(
            claim=self,
            steps=tuple(results),
            verified=not problems_found,
            seconds=time.perf_counter() - start,
            problem="; ".join(problems_found),
            content_hash=digest,
            proof=steps,
            witness=witness,
        )
        cache[digest] = _issued(outcome)
        return outcome

    def _structure(self) -> Definitions:
        """The checked definitions; the statement, assumptions and naturals validated."""
        if not isinstance(self.id, str) or not self.id:
            raise ProofError("a claim needs an id")
        validate(sp.sympify(self.statement), "the statement")
        for assumption in self.assumptions:
            validate(sp.sympify(assumption), "an assumption")
        definitions = Definitions(self.definitions)
        for what, exprs in (
            ("the statement", [self.statement]),
            ("an assumption", self.assumptions),
        ):
            stray = definitions.stray_index(exprs)
            if stray:
                raise DefinitionError(
                    f"{what} mentions {', '.join(stray)}, a summation index: say what every "
                    "member satisfies in its family's domain"
                )
        for symbol in self.naturals:
            if not is_real_symbol(symbol):
                raise DefinitionError(f"the natural-number symbol {symbol} must be a real Symbol")
            if symbol in definitions.defined_symbols or symbol in definitions.index_symbols:
                raise DefinitionError(f"{symbol} is defined or an index, not a natural number")
            for definition in definitions.items:
                if symbol in sp.Tuple(*_parts(definition)).free_symbols:
                    raise DefinitionError(f"the definitions must not depend on {symbol}")
        return definitions


def _parts(definition: Definition) -> list[sp.Basic]:
    if isinstance(definition, SumOver):
        return [
            definition.symbol,
            definition.term,
            definition.family.count,
            *definition.family.domain,
        ]
    if isinstance(definition, Let):
        return [definition.symbol, definition.expression]
    return [definition.symbol]


def _hash_of(cites: Sequence[Claim], results: Sequence[ClaimResult]) -> Callable[[Claim], str]:
    known = {id(claim): result.content_hash for claim, result in zip(cites, results, strict=True)}

    def of(claim: Claim) -> str:
        return known[id(claim)] if id(claim) in known else claim.content_hash()

    return of


def _citations(
    claim: Claim, results: Sequence[ClaimResult]
) -> Callable[[CitedClaim], CitedResult | str]:
    """How a Cite step of ``claim`` finds a cited claim's result: the very object."""
    by_identity = {id(cited): result for cited, result in zip(claim.cites, results, strict=True)}

    def find(cited: CitedClaim) -> CitedResult | str:
        result = by_identity.get(id(cited))
        if result is None:
            return (
                f"{getattr(cited, 'id', cited)!r} is not among the claims {claim.id} "
                "declares in cites (a cited claim is the very object that was checked)"
            )
        return result

    return find


def rule_named(name: str) -> type[Step]:
    """The kernel rule called ``name`` (for reading certificates)."""
    return _RULES_BY_NAME[name]
