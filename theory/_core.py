"""The kernel's core types: a proof step, its verdict, and the context it is decided in."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Protocol

import sympy as sp

from softmax_dispersion.theory import _z3
from softmax_dispersion.theory.definitions import Definitions, Family


class CitedClaim(Protocol):
    """What a citation sees of a claim (the kernel's ``Claim``)."""

    @property
    def id(self) -> str: ...
    @property
    def statement(self) -> sp.Basic: ...
    @property
    def assumptions(self) -> Sequence[sp.Basic]: ...
    @property
    def definitions(self) -> Sequence[Any]: ...
    @property
    def naturals(self) -> Sequence[sp.Symbol]: ...
    def content_hash(self) -> str: ...


class CitedResult(Protocol):
    """What a citation sees of a checked claim's result (the kernel's ``ClaimResult``)."""

    @property
    def verified(self) -> bool: ...
    @property
    def problem(self) -> str: ...
    @property
    def content_hash(self) -> str: ...


__all__ = [
    "Z3_TIMEOUT_MS",
    "CitedClaim",
    "CitedResult",
    "Context",
    "ProofError",
    "Step",
    "StepResult",
    "held_fixed",
    "require",
]

Z3_TIMEOUT_MS = 20_000
"""z3's timeout for one query, in milliseconds; a timeout fails the step."""


class ProofError(Exception):
    """A step whose method did not establish its conclusion."""


@dataclass(frozen=True)
class StepResult:
    """The verdict on one step (and on its termwise sub-steps, if it has any)."""

    description: str
    method: str
    statement: str
    verified: bool
    detail: str
    seconds: float
    rule: str = ""
    substeps: tuple[StepResult, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready record of the verdict."""
        record: dict[str, object] = {
            "description": self.description,
            "rule": self.rule,
            "method": self.method,
            "statement": self.statement,
            "verdict": "verified" if self.verified else "failed",
            "verified": self.verified,
            "detail": self.detail,
            "seconds": round(self.seconds, 4),
        }
        if self.substeps:
            record["substeps"] = [s.to_dict() for s in self.substeps]
        return record


def require(facts: Sequence[sp.Basic], goal: sp.Basic, what: str) -> str:
    """Prove ``facts ⇒ goal`` with z3 or raise :class:`ProofError` naming ``what``."""
    verdict, detail = _z3.prove_with_z3(list(facts), goal, Z3_TIMEOUT_MS)
    if verdict != "proved":
        raise ProofError(f"{what} ({sp.sstr(goal)}) is not implied: {detail}")
    return detail


Runner = Callable[[Sequence["Step"], "Context"], tuple[list[StepResult], list[sp.Basic], bool]]


@dataclass
class Context:
    """What a step is decided against.

    Attributes
    ----------
    facts
        The assumptions, the definitions' equations and every earlier conclusion.
    definitions
        The claim's checked definitions; a step may only name these sums.
    scope
        Inside a termwise sub-proof, the family whose index symbols may appear.
    naturals
        The claim's natural-number symbols (for :class:`Induction`).
    citations
        How a :class:`Cite` step finds the verified result of a cited claim.
    runner
        Checks a list of sub-steps in a context (the kernel's own step loop).
    """

    facts: list[sp.Basic]
    definitions: Definitions
    runner: Runner
    scope: Family | None = None
    naturals: frozenset[sp.Symbol] = frozenset()
    citations: Callable[[CitedClaim], CitedResult | str] | None = None
    sub_results: list[StepResult] = field(default_factory=list)

    def require(self, goal: sp.Basic, what: str, extra: Sequence[sp.Basic] = ()) -> str:
        """Prove ``facts (+ extra) ⇒ goal`` with z3, or raise naming ``what``."""
        return require([*self.facts, *extra], goal, what)

    def inside(self, family: Family) -> Context:
        """The context of a generic member of ``family``: its domain is a fact."""
        if self.scope is not None:
            raise ProofError("termwise sub-proofs do not nest")
        return Context(
            facts=[*self.facts, *family.domain],
            definitions=self.definitions,
            runner=self.runner,
            scope=family,
            naturals=self.naturals,
            citations=self.citations,
        )

    def with_facts(self, extra: Sequence[sp.Basic]) -> Context:
        """The same context with more facts."""
        return Context(
            facts=[*self.facts, *extra],
            definitions=self.definitions,
            runner=self.runner,
            scope=self.scope,
            naturals=self.naturals,
            citations=self.citations,
        )


def held_fixed(context: Context, exprs: Sequence[sp.Basic], var: sp.Symbol, binder: str) -> None:
    """No defined symbol in ``exprs`` varies with ``var``, which ``binder`` binds.

    Under a limit or a derivative in ``var`` every other symbol is held fixed; a defined
    symbol whose definition mentions ``var`` (``y := n`` in a limit in ``n``) would be
    held fixed while what it abbreviates varies.
    """
    dependent = context.definitions.depending_on(exprs, var)
    if dependent:
        raise ProofError(
            f"{', '.join(dependent)} is defined in terms of {var}: {binder} in {var} "
            "cannot hold it fixed (write its definition out)"
        )


class Step(ABC):
    """One step of a proof: a conclusion and the rule that decides it.

    Only the kernel's own rules are accepted in a claim (the set is closed: a subclass,
    or a class defined elsewhere, fails the step).  Every rule is a frozen dataclass whose
    fields are its inputs: what a certificate records and ``recheck`` re-decides.
    """

    method: ClassVar[str]
    description: str
    generic_fields: ClassVar[tuple[str, ...]] = ()
    """Inputs read for a generic member of the family of the step's ``total``."""

    @property
    @abstractmethod
    def conclusion(self) -> sp.Basic:
        """What the step establishes, as a sympy boolean."""

    @abstractmethod
    def decide(self, context: Context) -> str:
        """Return a short detail when the step holds; raise :class:`ProofError` if not."""

    def sub_steps(self) -> tuple[Step, ...]:
        """Termwise sub-steps, checked inside a family (none by default)."""
        return ()

    def inputs(self) -> Iterator[tuple[str, Any]]:
        """The step's inputs, field by field."""
        for item in fields(self):  # type: ignore[arg-type]
            yield item.name, getattr(self, item.name)

    def check(self, facts: Sequence[sp.Basic] = ()) -> StepResult:
        """Decide the step on its own, against ``facts`` (the definitions it names count).

        This is how a rule is tried out; a claim's verdict comes from
        :meth:`Claim.check <softmax_dispersion.theory.kernel.Claim.check>`, which checks
        every step in the claim's context.
        """
        if STANDALONE is None:
            raise RuntimeError("import softmax_dispersion.theory.kernel to check steps")
        return STANDALONE(self, facts)


STANDALONE: Callable[[Step, Sequence[sp.Basic]], StepResult] | None = None
"""How a step is checked on its own: the kernel's step loop, set when the kernel loads
(the kernel imports this module, never the other way round)."""


def normalise(value: object) -> object:
    """A step input as the kernel stores it: lists become tuples, numbers sympy numbers."""
    if isinstance(value, (list, tuple)):
        return tuple(normalise(v) for v in value)
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return sp.sympify(value)
    return value


def frozen_inputs(instance: object) -> None:
    """Normalise every field of a frozen dataclass step (called from ``__post_init__``).

    Text is a description, never an expression: sympy would parse (``eval``) a string
    given where an expression belongs, so a string anywhere else is refused here.
    """
    for item in fields(instance):  # type: ignore[arg-type]
        value = getattr(instance, item.name)
        if item.name != "description" and _holds_text(value):
            raise TypeError(
                f"{type(instance).__name__}.{item.name}: give a sympy expression, not text"
            )
        object.__setattr__(instance, item.name, normalise(value))


def _holds_text(value: object) -> bool:
    if isinstance(value, str):
        return True
    return isinstance(value, (list, tuple)) and any(_holds_text(v) for v in value)


def timed(function: Callable[[], str]) -> tuple[bool, str, float]:
    """Run a decision, turning every failure (and every exception) into a verdict."""
    start = time.perf_counter()
    try:
        detail = function()
        verified = True
    except ProofError as error:
        detail, verified = str(error), False
    except Exception as error:  # a crashing method proves nothing
        detail, verified = f"{type(error).__name__}: {error}", False
    return verified, detail, time.perf_counter() - start
