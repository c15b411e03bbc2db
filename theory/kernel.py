"""A small proof kernel: claims, proof steps, and the procedures that decide them.

A :class:`Claim` is a sympy statement with assumptions and a proof, a list of
:class:`Step` objects.  Checking a claim walks the steps in order.  Each step is
decided by one named method that can fail, and only then is its conclusion added to
the *facts*, which later steps may use as hypotheses.  The claim is verified when every
step is verified and the last conclusion is the statement itself.

The methods:

``cancel after t = exp(.)`` (:class:`Identity`)
    Every ``exp`` atom is replaced by powers of fresh positive symbols, one per linear
    generator of its argument, and ``cancel`` must reduce ``lhs - rhs`` to zero.  For
    rational functions this is a decision procedure.  Treating the generators as
    independent can only lose identities, never invent one.
``z3 nlsat`` (:class:`Implied`)
    The facts imply the conclusion over the reals; opaque subterms are left free (see
    :mod:`softmax_dispersion.theory._z3`).  ``unknown`` and timeouts fail.
``exact real-root isolation`` (:class:`RealRoots`)
    A univariate polynomial with rational coefficients has exactly the listed real
    roots, one in each rational interval (Sturm-sequence root counting in sympy).
``sympy limit (Gruntz)`` (:class:`Limit`)
    The limit is computed and compared with the claimed value by :class:`Identity`.
Inference rules
    :class:`ExpMonotone`, :class:`LogMonotone`, :class:`SumOfTerms`,
    :class:`ConvexCombination`, :class:`SumLinearity`, :class:`Monotone`.
    Each rule states its side conditions and decides them with z3 before concluding.

Every relation the kernel builds is unevaluated (``evaluate=False``): sympy never gets
to settle a comparison such as ``E/4 <= 1`` numerically behind a checker's back.

Anything else (an exception, a timeout, a non-rational expression given to ``cancel``)
fails the step loudly: nothing is ever assumed to hold because a method gave up.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import sympy as sp

from softmax_dispersion.theory._exponentials import exp_to_rational
from softmax_dispersion.theory._z3 import prove_with_z3

__all__ = [
    "Claim",
    "ClaimResult",
    "ConvexCombination",
    "ExpMonotone",
    "Identity",
    "Implied",
    "Limit",
    "LogMonotone",
    "Monotone",
    "ProofError",
    "RealRoots",
    "Step",
    "StepResult",
    "SumLinearity",
    "SumOfTerms",
    "SumOver",
]

Z3_TIMEOUT_MS = 20_000


class ProofError(Exception):
    """A step whose method did not establish its conclusion."""


@dataclass(frozen=True)
class StepResult:
    """The verdict on one step."""

    description: str
    method: str
    statement: str
    verified: bool
    detail: str
    seconds: float

    def to_dict(self) -> dict[str, object]:
        return {
            "description": self.description,
            "method": self.method,
            "statement": self.statement,
            "verdict": "verified" if self.verified else "failed",
            "verified": self.verified,
            "detail": self.detail,
            "seconds": round(self.seconds, 4),
        }


class Step(ABC):
    """One step of a proof: a conclusion and the method that decides it."""

    method: ClassVar[str]
    description: str

    @property
    @abstractmethod
    def conclusion(self) -> sp.Basic:
        """What the step establishes, as a sympy boolean."""

    @abstractmethod
    def decide(self, facts: Sequence[sp.Basic]) -> str:
        """Return a short detail when the step holds; raise :class:`ProofError` if not."""

    def check(self, facts: Sequence[sp.Basic]) -> StepResult:
        """Decide the step, turning every failure (including exceptions) into a verdict."""
        start = time.perf_counter()
        try:
            detail = self.decide(facts)
            verified = True
        except ProofError as error:
            detail, verified = str(error), False
        except Exception as error:  # a crashing method proves nothing
            detail, verified = f"{type(error).__name__}: {error}", False
        return StepResult(
            description=self.description,
            method=self.method,
            statement=sp.sstr(self.conclusion),
            verified=verified,
            detail=detail,
            seconds=time.perf_counter() - start,
        )


@dataclass
class Identity(Step):
    """``lhs = rhs``, decided by ``cancel`` after substituting ``t = exp(.)``.

    With ``exponentiate=True`` the method compares ``exp(lhs)`` with ``exp(rhs)``
    instead (``exp`` is injective on the reals), which turns sums of logarithms of
    positive quantities into products.  The facts must then show every logarithm's
    argument positive, and all symbols must be real, so that both sides are real.
    """

    lhs: sp.Expr
    rhs: sp.Expr
    description: str
    exponentiate: bool = False
    method: ClassVar[str] = "cancel after t = exp(.)"

    @property
    def conclusion(self) -> sp.Basic:
        return sp.Eq(self.lhs, self.rhs, evaluate=False)

    def decide(self, facts: Sequence[sp.Basic]) -> str:
        if self.exponentiate:
            self._require_real(facts)
            difference = sp.exp(self.lhs) / sp.exp(self.rhs) - 1
        else:
            difference = self.lhs - self.rhs
        difference = sp.powsimp(sp.expand_power_exp(difference))
        rational, _ = exp_to_rational(difference)
        variables = sorted(rational.free_symbols, key=str)
        if not rational.is_rational_function(*variables):
            raise ProofError(f"not a rational function after t = exp(.): {sp.sstr(rational)}")
        remainder = sp.cancel(sp.together(rational))
        if remainder != 0:
            raise ProofError(f"cancel leaves {sp.sstr(remainder)} != 0")
        return "cancel(lhs - rhs) == 0"

    def _require_real(self, facts: Sequence[sp.Basic]) -> None:
        """Both sides real: real symbols, and every logarithm of a positive quantity."""
        both = sp.Tuple(self.lhs, self.rhs)
        for symbol in both.free_symbols:
            if not symbol.is_real:
                raise ProofError(f"{symbol} is not declared real; exp is not injective on C")
        for atom in both.atoms(sp.log):
            require(
                facts,
                sp.Gt(atom.args[0], 0, evaluate=False),
                "positivity of a logarithm's argument",
            )


@dataclass
class Implied(Step):
    """The facts imply ``statement`` over the reals, decided by z3."""

    statement: sp.Basic
    description: str
    extra: Sequence[sp.Basic] = ()
    method: ClassVar[str] = "z3 nlsat"

    @property
    def conclusion(self) -> sp.Basic:
        return self.statement

    def decide(self, facts: Sequence[sp.Basic]) -> str:
        return require(list(facts) + list(self.extra), self.statement, "the conclusion")


def require(facts: Sequence[sp.Basic], goal: sp.Basic, what: str) -> str:
    """Prove ``facts ⇒ goal`` with z3 or raise :class:`ProofError` naming ``what``."""
    verdict, detail = prove_with_z3(list(facts), goal, Z3_TIMEOUT_MS)
    if verdict != "proved":
        raise ProofError(f"{what} ({sp.sstr(goal)}) is not implied: {detail}")
    return detail


@dataclass
class Limit(Step):
    """``lim_{var -> point} expr = expected``, by sympy's ``limit``; compared exactly."""

    expr: sp.Expr
    var: sp.Symbol
    point: sp.Expr
    expected: sp.Expr
    description: str
    method: ClassVar[str] = "sympy limit (Gruntz)"

    @property
    def conclusion(self) -> sp.Basic:
        return sp.Eq(sp.Limit(self.expr, self.var, self.point), self.expected, evaluate=False)

    def decide(self, facts: Sequence[sp.Basic]) -> str:
        # sympy's limit uses the symbols' declared assumptions: each must be a fact too.
        for symbol in sorted(self.expr.free_symbols - {self.var}, key=str):
            if symbol.is_positive:
                require(
                    facts, sp.Gt(symbol, 0, evaluate=False), f"the declared positivity of {symbol}"
                )
        value = sp.limit(self.expr, self.var, self.point)
        if value.has(sp.Limit, sp.AccumBounds, sp.nan):
            raise ProofError(f"sympy could not evaluate the limit: {sp.sstr(value)}")
        Identity(value, self.expected, "limit value").decide(facts)
        return f"limit = {sp.sstr(value)}"


@dataclass
class ExpMonotone(Step):
    """Rule: ``a <= b`` and ``scale > 0`` give ``exp(a/scale) <= exp(b/scale)``."""

    lower: sp.Expr
    upper: sp.Expr
    description: str
    scale: sp.Expr = sp.S.One
    strict: bool = False
    method: ClassVar[str] = "rule: exp is increasing"

    @property
    def conclusion(self) -> sp.Basic:
        relation = sp.Lt if self.strict else sp.Le
        return relation(
            sp.exp(self.lower / self.scale), sp.exp(self.upper / self.scale), evaluate=False
        )

    def decide(self, facts: Sequence[sp.Basic]) -> str:
        relation = sp.Lt if self.strict else sp.Le
        require(facts, relation(self.lower, self.upper, evaluate=False), "the premise")
        require(facts, sp.Gt(self.scale, 0, evaluate=False), "positivity of the scale")
        return "premise and scale > 0 implied by the facts"


@dataclass
class LogMonotone(Step):
    """Rule: ``0 < a <= b`` gives ``log a <= log b``."""

    lower: sp.Expr
    upper: sp.Expr
    description: str
    strict: bool = False
    method: ClassVar[str] = "rule: log is increasing on (0, oo)"

    @property
    def conclusion(self) -> sp.Basic:
        relation = sp.Lt if self.strict else sp.Le
        return relation(sp.log(self.lower), sp.log(self.upper), evaluate=False)

    def decide(self, facts: Sequence[sp.Basic]) -> str:
        relation = sp.Lt if self.strict else sp.Le
        require(facts, sp.Gt(self.lower, 0, evaluate=False), "positivity of the smaller side")
        require(facts, relation(self.lower, self.upper, evaluate=False), "the premise")
        return "premise and positivity implied by the facts"


@dataclass(frozen=True)
class SumOver:
    """A named sum ``symbol = sum of term`` over ``count`` terms.

    ``index`` holds the symbols that vary from term to term (say ``e_j``); the count
    must not depend on them.  ``weight`` marks a weighted sum ``sum w_j f_j`` with
    ``term = f_j`` whose weights are non-negative and add up to ``count``.
    """

    symbol: sp.Expr
    term: sp.Expr
    index: tuple[sp.Symbol, ...]
    count: sp.Expr
    weight: sp.Expr | None = None


def _free_of_index(expr: sp.Expr, total: SumOver, what: str) -> None:
    clash = expr.free_symbols & set(total.index)
    if clash:
        raise ProofError(f"{what} depends on the summation index {sorted(map(str, clash))}")


@dataclass
class SumOfTerms(Step):
    """Rule: termwise ``lo <= term <= hi`` sums to ``count*lo <= S <= count*hi``.

    The termwise bounds must follow from the facts for a generic term (the index
    symbols are free, constrained only by the facts about them), the bounds must not
    depend on the index, and the count must be non-negative.  A weighted sum
    (``SumOver.weight``) needs non-negative weights; ``count`` is then their total.
    """

    total: SumOver
    lower: sp.Expr | None
    upper: sp.Expr | None
    description: str
    method: ClassVar[str] = "rule: termwise bounds summed"

    @property
    def conclusion(self) -> sp.Basic:
        parts = []
        if self.lower is not None:
            parts.append(sp.Le(self.total.count * self.lower, self.total.symbol, evaluate=False))
        if self.upper is not None:
            parts.append(sp.Le(self.total.symbol, self.total.count * self.upper, evaluate=False))
        return sp.And(*parts)

    def decide(self, facts: Sequence[sp.Basic]) -> str:
        if self.lower is None and self.upper is None:
            raise ProofError("no bound to sum")
        _free_of_index(self.total.count, self.total, "the count")
        require(facts, sp.Ge(self.total.count, 0, evaluate=False), "non-negativity of the count")
        if self.total.weight is not None:
            require(
                facts, sp.Ge(self.total.weight, 0, evaluate=False), "non-negativity of the weights"
            )
        for bound, relation, name in (
            (self.lower, sp.Le, "lower"),
            (self.upper, sp.Ge, "upper"),
        ):
            if bound is None:
                continue
            _free_of_index(bound, self.total, f"the {name} bound")
            require(
                facts,
                relation(bound, self.total.term, evaluate=False),
                f"the termwise {name} bound",
            )
        return "termwise bounds, count >= 0 and index-free bounds implied by the facts"


@dataclass
class ConvexCombination(Step):
    """Rule: weights ``w_j >= 0`` adding up to 1 and ``lo <= f_j`` give ``lo <= sum w_j f_j``.

    A thin name for :class:`SumOfTerms` on a weighted sum whose weights total one.
    """

    total: SumOver
    lower: sp.Expr | None
    upper: sp.Expr | None
    description: str
    method: ClassVar[str] = "rule: convex combination"

    def _as_sum(self) -> SumOfTerms:
        return SumOfTerms(self.total, self.lower, self.upper, self.description)

    @property
    def conclusion(self) -> sp.Basic:
        return self._as_sum().conclusion

    def decide(self, facts: Sequence[sp.Basic]) -> str:
        if self.total.weight is None or self.total.count != 1:
            raise ProofError("a convex combination needs weights that add up to 1")
        return self._as_sum().decide(facts)


@dataclass
class SumLinearity(Step):
    """Rule: a termwise linear identity sums to the same identity of the sums.

    If ``target.term = sum_r coefficient_r * basis_r.term`` holds for a generic term
    (decided by :class:`Identity`), with index-free coefficients and equal counts and
    weights, then ``target.symbol = sum_r coefficient_r * basis_r.symbol``.
    """

    target: SumOver
    combination: Sequence[tuple[sp.Expr, SumOver]]
    description: str
    method: ClassVar[str] = "rule: linearity of finite sums"

    @property
    def conclusion(self) -> sp.Basic:
        return sp.Eq(
            self.target.symbol,
            sp.Add(*(coeff * part.symbol for coeff, part in self.combination)),
            evaluate=False,
        )

    def decide(self, facts: Sequence[sp.Basic]) -> str:
        for coeff, part in self.combination:
            _free_of_index(sp.sympify(coeff), self.target, "a coefficient")
            if (part.count, part.weight, part.index) != (
                self.target.count,
                self.target.weight,
                self.target.index,
            ):
                raise ProofError(f"{part.symbol} ranges over different terms")
        termwise = sp.Add(*(coeff * part.term for coeff, part in self.combination))
        Identity(self.target.term, termwise, "termwise identity").decide(facts)
        return "termwise identity decided by cancel"


@dataclass
class Monotone(Step):
    """Rule: ``f' >= 0`` between ``lo`` and ``hi`` gives ``f(lo) <= f(hi)``.

    The derivative is computed by sympy and its sign on ``[lo, hi]`` decided by z3 from
    the facts (mean value theorem; a derivative that is undefined somewhere yields a
    counterexample and fails the step).  ``decreasing=True`` flips both.
    """

    function: sp.Expr
    var: sp.Symbol
    lo: sp.Expr
    hi: sp.Expr
    description: str
    decreasing: bool = False
    method: ClassVar[str] = "rule: sign of the derivative"

    @property
    def conclusion(self) -> sp.Basic:
        at_lo = self.function.subs(self.var, self.lo)
        at_hi = self.function.subs(self.var, self.hi)
        return (
            sp.Ge(at_lo, at_hi, evaluate=False)
            if self.decreasing
            else sp.Le(at_lo, at_hi, evaluate=False)
        )

    def decide(self, facts: Sequence[sp.Basic]) -> str:
        require(facts, sp.Le(self.lo, self.hi, evaluate=False), "the order of the endpoints")
        derivative = sp.together(sp.diff(self.function, self.var))
        sign = (
            sp.Le(derivative, 0, evaluate=False)
            if self.decreasing
            else sp.Ge(derivative, 0, evaluate=False)
        )
        inside = [
            sp.Le(self.lo, self.var, evaluate=False),
            sp.Le(self.var, self.hi, evaluate=False),
        ]
        clash = [f for f in facts if self.var in f.free_symbols]
        if clash:
            raise ProofError(f"{self.var} must be a fresh variable, but the facts mention it")
        require(list(facts) + inside, sign, "the sign of the derivative")
        return f"d/d{self.var} = {sp.sstr(derivative)} has the required sign"


@dataclass
class RealRoots(Step):
    """A rational polynomial's real roots: exactly one in each interval, none elsewhere.

    ``names`` are symbols standing for the roots; the conclusion pins each by
    ``poly(name) = 0`` and ``lo < name < hi``, facts that z3 can use exactly.
    Decided by exact root counting (``Poly.count_roots``) over the rationals, with the
    interval ends checked not to be roots.
    """

    poly: sp.Expr
    var: sp.Symbol
    intervals: Sequence[tuple[sp.Rational, sp.Rational]]
    names: Sequence[sp.Symbol]
    description: str
    method: ClassVar[str] = "exact real-root isolation"

    @property
    def conclusion(self) -> sp.Basic:
        parts = []
        for (lo, hi), name in zip(self.intervals, self.names, strict=True):
            parts += [
                sp.Eq(self.poly.subs(self.var, name), 0),
                sp.Lt(lo, name, evaluate=False),
                sp.Lt(name, hi, evaluate=False),
            ]
        return sp.And(*parts)

    def decide(self, facts: Sequence[sp.Basic]) -> str:
        poly = sp.Poly(self.poly, self.var, domain="QQ")
        total = poly.count_roots()
        if total != len(self.intervals):
            raise ProofError(f"the polynomial has {total} real roots, not {len(self.intervals)}")
        for lo, hi in self.intervals:
            lo, hi = sp.Rational(lo), sp.Rational(hi)
            if poly.eval(lo) == 0 or poly.eval(hi) == 0:
                raise ProofError(f"an end of [{lo}, {hi}] is itself a root")
            if poly.count_roots(lo, hi) != 1:
                raise ProofError(f"[{lo}, {hi}] holds {poly.count_roots(lo, hi)} roots, not 1")
        return f"{total} real roots, each isolated in its interval"


@dataclass(frozen=True)
class ClaimResult:
    """The outcome of checking one claim."""

    claim: Claim
    steps: tuple[StepResult, ...]
    verified: bool
    seconds: float
    problem: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.claim.id,
            "title": self.claim.title,
            "source": self.claim.source,
            "statement": sp.sstr(self.claim.statement),
            "assumptions": [sp.sstr(a) for a in self.claim.assumptions],
            "verified": self.verified,
            "seconds": round(self.seconds, 4),
            "problem": self.problem,
            "steps": [step.to_dict() for step in self.steps],
        }


@dataclass
class Claim:
    """A statement, its assumptions, its source and a checkable proof.

    ``proof`` is a function returning the steps, so that building a claim is cheap and
    checking it does the work.  ``cites`` names claims whose statements this proof
    uses as facts; they are checked first by :func:`check`.
    """

    id: str
    title: str
    statement: sp.Basic
    assumptions: Sequence[sp.Basic]
    source: str
    proof: Callable[[], Sequence[Step]]
    cites: Sequence[Claim] = ()
    formulas: Sequence[str] = field(default_factory=tuple)

    def check(self, cache: dict[str, ClaimResult] | None = None) -> ClaimResult:
        """Check every step in order; the claim holds when all do and the last concludes it.

        ``cache`` maps claim ids to results already computed, so that a claim cited by
        several others is checked once.
        """
        cache = {} if cache is None else cache
        start = time.perf_counter()
        problem = ""
        cited_ok = True
        facts: list[sp.Basic] = list(self.assumptions)
        for cited in self.cites:
            if cited.id not in cache:
                cache[cited.id] = cited.check(cache)
            cited_ok = cited_ok and cache[cited.id].verified
            facts.append(cited.statement)
        if not cited_ok:
            problem = "a cited claim did not verify"
        steps = list(self.proof())
        results = []
        for step in steps:
            result = step.check(facts)
            results.append(result)
            if result.verified:
                facts.append(step.conclusion)
        verified = cited_ok and bool(results) and all(r.verified for r in results)
        if verified and steps[-1].conclusion != self.statement:
            verified = False
            problem = "the last step does not conclude the statement"
        if not verified and not problem:
            problem = "a step failed"
        outcome = ClaimResult(
            claim=self,
            steps=tuple(results),
            verified=verified,
            seconds=time.perf_counter() - start,
            problem=problem,
        )
        cache[self.id] = outcome
        return outcome
