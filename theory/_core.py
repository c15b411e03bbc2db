"""The kernel's core types: a proof step as written and as frozen, its verdict, its context.

A claim author builds :class:`Step` objects (the rule classes of
:mod:`~softmax_dispersion.theory.rules` and :mod:`~softmax_dispersion.theory.calculus`,
frozen dataclasses of sympy inputs).  The kernel never asks a step object anything: it
reads the fields its own rule class declares, converts each into terms once
(:class:`FrozenStep`), and decides the frozen step by the logic registered for that
exact class in :data:`LOGIC`.  A method or attribute set on a step object, or a subclass
of a rule, has nothing to offer.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, ClassVar

import sympy as sp

from softmax_dispersion.theory import _z3, terms
from softmax_dispersion.theory._deadlines import _DEADLINES, BudgetExceeded
from softmax_dispersion.theory.terms import Term

if TYPE_CHECKING:
    from softmax_dispersion.theory.definitions import Definitions, FamilyDef

__all__ = [
    "LOGIC",
    "MAX_STEP_DEPTH",
    "Z3_TIMEOUT_MS",
    "BudgetExceeded",
    "Context",
    "FrozenStep",
    "ProofError",
    "RuleLogic",
    "Step",
    "StepResult",
    "held_fixed",
    "require",
    "tied_to",
    "time_budget",
]

Z3_TIMEOUT_MS = 20_000
"""z3's timeout for one query, in milliseconds; a timeout fails the step."""

MAX_STEP_DEPTH = 8
"""The most levels of sub-steps within a step (termwise sub-steps, an
:class:`~softmax_dispersion.theory.rules.Assume`'s steps), as written and in a file."""


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


def require(facts: Sequence[Term], goal: Term, what: str) -> str:
    """Prove ``facts ⇒ goal`` with z3 or raise :class:`ProofError` naming ``what``."""
    try:
        verdict, detail = _z3.prove_with_z3(list(facts), goal, Z3_TIMEOUT_MS)
    except (TypeError, terms.TermError) as error:
        raise ProofError(f"{what} ({terms.show(goal)}) cannot be given to z3: {error}") from None
    if verdict != "proved":
        raise ProofError(f"{what} ({terms.show(goal)}) is not implied: {detail}")
    return detail


# --------------------------------------------------------------------------------------
# Frozen steps and the logic of the rules


@dataclass(frozen=True, eq=False)
class FrozenStep:
    """A step as the kernel holds it: its rule's name and its inputs as terms.

    ``inputs`` maps each field of the rule to a frozen value: ``None``, a ``bool``, text
    (the description), a :class:`~softmax_dispersion.theory.terms.Term`, a name, a
    tuple, a nested :class:`FrozenStep`, a reference to a definition
    (:class:`SumRef`, :class:`RootRef`) or to a cited claim (:class:`ClaimRef`).
    ``error`` is set when the step could not be read (the step then fails with it).
    """

    rule: str
    inputs: Mapping[str, Any]
    error: str = ""

    @property
    def description(self) -> str:
        """The step's description (its author's words)."""
        value = self.inputs.get("description", "")
        return value if isinstance(value, str) else ""

    def __getitem__(self, name: str) -> Any:
        return self.inputs[name]


@dataclass(frozen=True)
class SumRef:
    """A claim's sum by name, or its value at a point (``at``)."""

    name: str
    at: Term | None = None


@dataclass(frozen=True)
class RootRef:
    """A claim's named real root, by name."""

    name: str


@dataclass(frozen=True)
class ClaimRef:
    """A cited claim, by the content hash it was checked with (``""``: none known)."""

    digest: str
    label: str = ""


@dataclass(frozen=True)
class RuleLogic:
    """What the kernel knows of one rule: its inputs' kinds, conclusion and decision.

    ``kinds`` maps each field to how it is read: ``text``, ``bool``, ``real``,
    ``real?`` (or ``None``), ``formula``, ``formulas``, ``point`` (a real term or
    ``±oo``), ``name`` (a real symbol), ``names``, ``sum``, ``sums``, ``combination``
    (pairs of a coefficient and a sum), ``roots``, ``steps`` and ``claim``.
    """

    kinds: Mapping[str, str]
    conclusion: Callable[[FrozenStep, Definitions], Term]
    decide: Callable[[FrozenStep, Context], str]
    method: str
    generic_fields: tuple[str, ...] = ()
    proves_derivative: bool = False
    """The rule's conclusion ``Derivative(...) = value`` also establishes that the
    derivative exists (see :attr:`Context.differentiable`)."""


LOGIC: dict[type, RuleLogic] = {}
"""The logic of every kernel rule, by the exact class (filled by ``rules`` and
``calculus``, the only modules that define rules)."""


# --------------------------------------------------------------------------------------
# The context a step is decided in


Runner = Callable[[Sequence[FrozenStep], "Context"], tuple[list[StepResult], list[Term], bool]]


@dataclass(frozen=True)
class CitedSnapshot:
    """What a citation may use of a verified claim: its frozen content and verdict."""

    id: str
    digest: str
    statement: Term
    assumptions: tuple[Term, ...]
    definitions: Definitions
    naturals: frozenset[str]
    verified: bool
    problem: str


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
        How a :class:`Cite` step finds a cited claim's snapshot (or why it cannot).
    runner
        Checks a list of sub-steps in a context (the kernel's own step loop).
    differentiable
        The derivatives (canonical terms) that a derivative rule has shown to exist.
        An equation about a derivative does not: a derivative that does not exist is
        an unspecified real, which may happen to satisfy it.
    couplings
        The names each assumption (and each ``Assume`` hypothesis in force) ties
        together, with what its defined symbols are defined from
        (:meth:`~softmax_dispersion.theory.definitions.Definitions.names_behind`): what
        the claim ties to what (:func:`held_fixed`).
    """

    facts: list[Term]
    definitions: Definitions
    runner: Runner
    scope: FamilyDef | None = None
    naturals: frozenset[str] = frozenset()
    citations: Callable[[ClaimRef], CitedSnapshot | str] | None = None
    sub_results: list[StepResult] = field(default_factory=list)
    differentiable: frozenset[Term] = frozenset()
    couplings: tuple[frozenset[str], ...] = ()

    def require(self, goal: Term, what: str, extra: Sequence[Term] = ()) -> str:
        """Prove ``facts (+ extra) ⇒ goal`` with z3, or raise naming ``what``."""
        return require([*self.facts, *extra], goal, what)

    def inside(self, family: FamilyDef) -> Context:
        """The context of a generic member of ``family``: its domain is a fact."""
        if self.scope is not None:
            raise ProofError("termwise sub-proofs do not nest")
        return replace(self, facts=[*self.facts, *family.domain], scope=family, sub_results=[])

    def with_facts(self, extra: Sequence[Term], derivatives: Sequence[Term] = ()) -> Context:
        """The same context with more facts (and more derivatives known to exist)."""
        shown = self.differentiable | {terms.canonical(d) for d in derivatives}
        return replace(self, facts=[*self.facts, *extra], differentiable=shown, sub_results=[])

    def assuming(self, hypothesis: Term) -> Context:
        """The same context with a hypothesis among its facts and its ties."""
        ties = (*self.couplings, self.definitions.names_behind([hypothesis]))
        return replace(self.with_facts([hypothesis]), couplings=ties)

    def with_only(self, facts: Sequence[Term]) -> Context:
        """The same context with ``facts`` its only facts (and no derivative known)."""
        return replace(self, facts=list(facts), differentiable=frozenset(), sub_results=[])


def held_fixed(context: Context, exprs: Sequence[Term], var: str, binder: str) -> None:
    """Nothing in ``exprs`` that the claim ties to ``var`` is held fixed by ``binder``,
    which binds ``var``.

    Under a limit or a derivative in ``var`` every other symbol is held fixed.  That is
    what a reader reads only where the claim leaves the others free to stay put while
    ``var`` moves: a defined symbol whose definition mentions ``var`` (``y := n`` in a
    limit in ``n``) varies with it; so does a symbol that an assumption ties to ``var``
    (``beta = 1/theta``: d(beta theta)/dtheta is 0 to a reader, not beta), directly or
    through other symbols and definitions (red team 19); and a defined ``var`` varies
    with what defines it (d theta/dy is not 0 where y := theta**2).  The claim ties two
    names when a chain of assumptions joins them (``couplings``); where none does, the
    assumptions constrain the two apart, and holding one fixed while the other moves
    stays where they hold.
    """
    if var in context.definitions.defined_names:
        raise ProofError(
            f"{var} is defined: {binder} in {var} would hold fixed what it is defined from"
        )
    dependent = context.definitions.depending_on(exprs, var)
    if dependent:
        raise ProofError(
            f"{', '.join(dependent)} is defined in terms of {var}: {binder} in {var} "
            "cannot hold it fixed (write its definition out)"
        )
    tied = tied_to(context.couplings, context.definitions, exprs, var)
    if tied:
        raise ProofError(
            f"the assumptions (or a hypothesis) tie {', '.join(tied)} to {var}: "
            f"{binder} in {var} cannot hold {'them' if len(tied) > 1 else 'it'} fixed "
            f"(write what varies with {var} as a function of it)"
        )


def tied_to(
    couplings: Sequence[frozenset[str]], definitions: Definitions, exprs: Sequence[Term], var: str
) -> list[str]:
    """The names ``exprs`` hold, with what the defined symbols among them are defined from
    (a ``Let``'s expression, a family's count and domain, a sum's term), that a chain of
    ``couplings`` ties to ``var``: red team 20 held ``y := c`` fixed under a derivative
    in theta with ``c = theta`` assumed."""
    held = definitions.names_behind(exprs, functions=False)
    return sorted((held - {var}) & _coupled(couplings, var))


def _coupled(couplings: Sequence[frozenset[str]], name: str) -> set[str]:
    """The names joined to ``name`` by a chain of the sets in ``couplings``."""
    joined = {name}
    grown = True
    while grown:
        grown = False
        for names in couplings:
            if names & joined and not names <= joined:
                joined |= names
                grown = True
    return joined - {name}


# --------------------------------------------------------------------------------------
# Steps as their authors write them


class Step:
    """One step of a proof, as written: a frozen dataclass of sympy inputs.

    Only the kernel's own rule classes are accepted in a claim (the set is closed: a
    subclass, or a class defined elsewhere, fails the step).  The kernel reads the
    fields its rule class declares, never a method of the object.
    """

    method: ClassVar[str] = ""
    description: str
    generic_fields: ClassVar[tuple[str, ...]] = ()
    """Inputs read for a generic member of the family of the step's ``total``."""

    @property
    def conclusion(self) -> sp.Basic:
        """What the step concludes, as the kernel builds it (shown as sympy)."""
        if CONCLUSION is None:
            raise RuntimeError("import softmax_dispersion.theory.kernel to build conclusions")
        return CONCLUSION(self)

    def sub_steps(self) -> tuple[Step, ...]:
        """Nested sub-steps: termwise ones, or those under a hypothesis (none by default)."""
        for name in ("termwise", "steps"):
            nested = getattr(self, name, ())
            if isinstance(nested, tuple) and nested:
                return nested
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

CONCLUSION: Callable[[Step], sp.Basic] | None = None
"""How a step's conclusion is shown: the kernel's, set when the kernel loads."""


def normalise(value: object) -> object:
    """A step input as the kernel stores it: lists become tuples, ints sympy integers."""
    if isinstance(value, (list, tuple)):
        return tuple(normalise(v) for v in value)
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if type(value) is int:
        return sp.Integer(value)
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


# --------------------------------------------------------------------------------------
# Time


@contextmanager
def time_budget(seconds: float | None) -> Iterator[None]:
    """Run the block under a wall-clock budget (an alarm; main thread, POSIX only).

    Past the budget, :class:`BudgetExceeded` is raised inside the block.  Budgets nest:
    the alarm is set for the nearest deadline, and an outer one is restored after.
    """
    usable = (
        seconds is not None
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return
    assert seconds is not None
    deadline = time.monotonic() + seconds
    nearest = min([deadline, *_DEADLINES])

    def expire(signum: int, frame: Any) -> None:
        if _inside_z3(frame):  # never raise inside z3's Python code (its destructors
            # swallow the exception and the budget is lost): z3's own timeout is set to the
            # time left (:func:`remaining_budget_ms`), so it returns soon; try again then
            signal.setitimer(signal.ITIMER_REAL, 0.005)
            return
        raise BudgetExceeded("the decision ran past its time budget")

    previous = signal.signal(signal.SIGALRM, expire) if not _DEADLINES else None
    _DEADLINES.append(deadline)
    signal.setitimer(signal.ITIMER_REAL, max(nearest - time.monotonic(), 1e-3))
    try:
        yield
    finally:
        _DEADLINES.pop()
        if _DEADLINES:
            remaining = min(_DEADLINES) - time.monotonic()
            signal.setitimer(signal.ITIMER_REAL, max(remaining, 1e-3))
        else:
            signal.setitimer(signal.ITIMER_REAL, 0)
            if previous is not None:
                signal.signal(signal.SIGALRM, previous)


def _inside_z3(frame: Any) -> bool:
    """Whether the interrupted code is z3's Python binding (a solver's destructor, say)."""
    marker = f"{os.sep}z3{os.sep}"
    for _ in range(8):
        if frame is None:
            return False
        if marker in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False


STEP_BUDGET_S: list[float | None] = [None]
"""The time budget of one step's decision (``None``: none); ``recheck`` sets one."""


def timed(function: Callable[[], str]) -> tuple[bool, str, float]:
    """Run a decision, turning every failure (and every exception) into a verdict."""
    start = time.perf_counter()
    try:
        with time_budget(STEP_BUDGET_S[0]):
            detail = function()
        verified = True
    except ProofError as error:
        detail, verified = str(error), False
    except BudgetExceeded as error:
        detail, verified = str(error), False
    except RecursionError:
        detail, verified = "the decision nested too deep", False
    except Exception as error:  # a crashing method proves nothing
        detail, verified = f"{type(error).__name__}: {error}", False
    return verified, detail, time.perf_counter() - start
