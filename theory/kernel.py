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
Rules of calculus
    :class:`SumDerivative` (a finite sum's derivative, term by term: linearity) and
    :class:`Differentiate` (sympy's sum, product, quotient and chain rules, with the
    derivatives of applied functions taken from the facts), each either as a function
    of the variable or at a point.  Both share one smoothness check: the expression is
    built from ``+``, ``*``, integer powers, ``exp`` and ``log``, and z3 must show every
    denominator non-zero and every logarithm's argument positive there.  Any other
    symbol (besides a sum's index) must be declared constant: the conclusion is then a
    partial derivative, and an undeclared one could hide a dependence on the variable.

Every relation the kernel builds is unevaluated (``evaluate=False``): sympy never gets
to settle a comparison such as ``E/4 <= 1`` numerically behind a checker's back.

Anything else (an exception, a timeout, a non-rational expression given to ``cancel``)
fails the step loudly: nothing is ever assumed to hold because a method gave up.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import sympy as sp
from sympy.core.function import AppliedUndef

from softmax_dispersion.theory._exponentials import exp_to_rational
from softmax_dispersion.theory._z3 import prove_with_z3

__all__ = [
    "Claim",
    "ClaimResult",
    "ConvexCombination",
    "Differentiate",
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
    "SumDerivative",
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


# ---------------------------------------------------------------------------------------
# Rules of calculus: the derivative of a finite sum, and of a smooth closed form, each as
# a function of the variable or at a point.  One smoothness check serves both.


def _derivative_of(expr: sp.Expr, var: sp.Symbol, point: sp.Expr | None) -> sp.Expr:
    """``d expr/d var`` unevaluated: as a function of ``var``, or at ``var = point``."""
    derivative = sp.Derivative(expr, var)
    return derivative if point is None else sp.Subs(derivative, var, point)


def _is_function_of(expr: sp.Basic, var: sp.Symbol) -> bool:
    """``expr`` is an undefined function applied to ``var`` alone, like ``A(var)``."""
    return isinstance(expr, AppliedUndef) and expr.args == (var,)


def _check_variable(var: sp.Symbol, constants: Sequence[sp.Symbol]) -> None:
    """``var`` is a real symbol and the declared constants are other symbols."""
    if not isinstance(var, sp.Symbol):
        raise ProofError(f"{var} is not a symbol")
    if not var.is_real:
        raise ProofError(f"{var} is not declared real; the side conditions are over the reals")
    for constant in constants:
        if not isinstance(constant, sp.Symbol):
            raise ProofError(f"only symbols can be held constant, not {sp.sstr(constant)}")
    if var in constants:
        raise ProofError(f"{var} cannot be held constant while differentiating in it")


def _check_held_constant(
    expr: sp.Expr, var: sp.Symbol, allowed: set[sp.Basic], constants: Sequence[sp.Symbol]
) -> None:
    """Every symbol of ``expr`` other than ``var`` is allowed or declared constant.

    A symbol that is neither would be held constant silently, and it may stand for a
    quantity that varies with ``var`` (a named sum, say): the derivative would then be a
    partial one where a total one is meant.  Declaring it in ``constants`` says that the
    partial derivative is the one meant.
    """
    others = expr.free_symbols - {var} - allowed - set(constants)
    if others:
        raise ProofError(
            f"{sp.sstr(expr)} depends on {sorted(map(str, others))}, which would be held "
            f"constant: write what varies with {var} as a function of it, or declare the "
            "symbols constant"
        )


def _check_point(
    point: sp.Expr, value: sp.Expr | None, var: sp.Symbol, index: set[sp.Symbol]
) -> None:
    """The point, and the value at it, are fixed: free of ``var`` and of the index."""
    for what, expr in (("the point", point), ("the value at the point", value)):
        if expr is None:
            continue
        if var in expr.free_symbols:
            raise ProofError(f"{what} depends on {var}")
        if expr.free_symbols & index:
            raise ProofError(f"{what} depends on the summation index")


def _smoothness_conditions(
    expr: sp.Expr,
    var: sp.Symbol,
    point: sp.Expr | None,
    values: Mapping[sp.Basic, sp.Expr],
) -> list[sp.Basic]:
    """What makes ``expr`` differentiable in ``var`` at ``point``, or a :class:`ProofError`.

    ``expr`` may use finite real numbers, symbols, ``+``, ``*``, integer powers, ``exp``,
    ``log`` and functions applied to ``var`` alone (whose differentiability the caller
    takes from the facts).  A negative power needs a non-zero base, ``log`` a positive
    argument; the conditions are read at ``point`` (``var`` itself when ``None``) with
    ``values`` (known values of the applied functions there) substituted.  They are
    open conditions on continuous functions, so where they hold they hold on a
    neighbourhood, on which ``expr`` is then smooth.
    """

    def at(arg: sp.Expr) -> sp.Expr:
        return arg if point is None else arg.subs(var, point).xreplace(values)

    conditions: list[sp.Basic] = []
    for node in sp.preorder_traversal(expr):
        if node.is_Atom:
            if node.is_number and not (node.is_extended_real and node.is_finite):
                raise ProofError(f"{sp.sstr(node)} is not a finite real number")
            continue
        if isinstance(node, (sp.Add, sp.Mul, sp.exp)):
            continue
        if _is_function_of(node, var):
            continue
        if isinstance(node, sp.Pow) and node.exp.is_Integer:
            if node.exp < 0:
                conditions.append(sp.Ne(at(node.base), 0, evaluate=False))
            continue
        if isinstance(node, sp.log):
            conditions.append(sp.Gt(at(node.args[0]), 0, evaluate=False))
            continue
        # Non-integer powers are smooth only for a positive base; none of the claims
        # needs them, so they are refused outright rather than given a condition.
        raise ProofError(f"{sp.sstr(node)} is not known to be differentiable")
    return conditions


def _require_smooth(
    facts: Sequence[sp.Basic],
    expr: sp.Expr,
    var: sp.Symbol,
    point: sp.Expr | None,
    values: Mapping[sp.Basic, sp.Expr],
) -> None:
    """The facts imply (z3) that ``expr`` is differentiable in ``var`` at ``point``."""
    conditions = _smoothness_conditions(expr, var, point, values)
    if conditions:
        require(facts, sp.And(*conditions), "differentiability (denominators, logarithms)")


@dataclass
class SumDerivative(Step):
    """Rule: a finite sum's derivative is the sum of its terms' derivatives.

    ``total`` names a sum by a function of ``var`` alone, ``A(var) = Σ_j term_j``.  If
    the derivative of a generic term equals ``Σ_r coefficient_r · part_r.term`` (sympy's
    ``diff``, then :class:`Identity`), then
    ``A'(var) = Σ_r coefficient_r · part_r.symbol``: as a function of ``var`` when
    ``point`` is ``None``, else at ``var = point``.

    Parameters
    ----------
    total
        The sum ``A(var)``; its symbol must be an undefined function applied to ``var``.
    var
        The real symbol to differentiate in.
    combination
        Pairs ``(coefficient, part)``: the derivative's terms as a combination of other
        sums over the same terms.
    description
        What the step shows, for the report.
    point
        ``None`` for the derivative as a function of ``var`` (at every ``var`` the facts
        allow), or the point at which it is taken.
    constants
        Symbols besides ``var`` and the summation index that the term may contain; the
        conclusion is then the partial derivative with these held fixed.

    Notes
    -----
    For ``k`` terms, ``k`` independent of ``x``, the derivative is linear:

    .. math:: \\frac{d}{dx} \\sum_{j=1}^{k} f(z_j, x) = \\sum_{j=1}^{k} \\partial_x f(z_j, x)
       = \\sum_r c_r(x) \\sum_{j=1}^{k} g_r(z_j, x)
       \\quad\\text{when}\\quad \\partial_x f = \\sum_r c_r(x)\\, g_r .

    Side conditions, each checked:

    - the sum is named ``A(var)``, ``var`` is real and not a summation index, the sum is
      unweighted (a weight belongs in the term) and its count depends neither on
      ``var`` nor on the index: the same finitely many terms at every ``var``;
    - the term is an explicit expression (no applied functions or derivatives) in
      ``var``, the index and the declared ``constants`` only;
    - the coefficients and the parts' names are index-free and the parts range over
      the same terms; as a function, a part whose term varies with ``var`` is named by a
      function of ``var`` (like ``A``); at a point, the coefficients, the parts and the
      point are free of ``var`` and the point of the index;
    - the term is differentiable at the point (``var`` itself when ``point`` is
      ``None``): finite real numbers, ``+``, ``*``, integer powers, ``exp`` and ``log``,
      with the facts implying non-zero denominators and positive logarithm arguments
      there (z3), for a generic term.

    Examples
    --------
    >>> import sympy as sp
    >>> from softmax_dispersion.theory.kernel import SumDerivative, SumOver
    >>> x, t, k, S = sp.symbols("x t k S", real=True)
    >>> A0, A1 = sp.Function("A0", real=True)(t), sp.Function("A1", real=True)(t)
    >>> a0 = SumOver(A0, sp.exp(t * x), (x,), k)
    >>> a1 = SumOver(A1, x * sp.exp(t * x), (x,), k)
    >>> step = SumDerivative(a0, t, [(1, a1)], "d/dt Σ exp(t x) = Σ x exp(t x)")
    >>> step.conclusion
    Eq(Derivative(A0(t), t), A1(t))
    >>> step.check([]).verified
    True
    >>> SumDerivative(a0, t, [(-1, a1)], "a wrong sign").check([]).verified
    False

    At a point, the derivative's terms are those of the slope there:

    >>> slopes = SumOver(S, x, (x,), k)
    >>> at_zero = SumDerivative(a0, t, [(1, slopes)], "d/dt at 0", point=sp.Integer(0))
    >>> at_zero.conclusion
    Eq(Subs(Derivative(A0(t), t), t, 0), S)
    >>> at_zero.check([]).verified
    True
    """

    total: SumOver
    var: sp.Symbol
    combination: Sequence[tuple[sp.Expr, SumOver]]
    description: str
    point: sp.Expr | None = None
    constants: Sequence[sp.Symbol] = ()
    method: ClassVar[str] = "rule: termwise derivative of a finite sum"

    @property
    def _point(self) -> sp.Expr | None:
        return None if self.point is None else sp.sympify(self.point)

    @property
    def conclusion(self) -> sp.Basic:
        return sp.Eq(
            _derivative_of(self.total.symbol, self.var, self._point),
            sp.Add(*(sp.sympify(coeff) * part.symbol for coeff, part in self.combination)),
            evaluate=False,
        )

    def decide(self, facts: Sequence[sp.Basic]) -> str:
        total, var, point = self.total, self.var, self._point
        index = set(total.index)
        _check_variable(var, self.constants)
        if not _is_function_of(total.symbol, var):
            raise ProofError(f"the sum must be named by a function of {var} alone, like A({var})")
        if var in index:
            raise ProofError(f"{var} is a summation index")
        if total.weight is not None:
            raise ProofError("a weighted sum: write the weight into the term")
        if sp.sympify(total.count).free_symbols & (index | {var}):
            raise ProofError(f"the count must depend neither on {var} nor on the index")
        term = sp.sympify(total.term)
        if term.has(AppliedUndef, sp.Derivative, sp.Subs):
            raise ProofError("the term must be an explicit expression")
        _check_held_constant(term, var, index, self.constants)
        if point is not None:
            _check_point(point, None, var, index)
        for coeff, part in self.combination:
            coeff, part_term = sp.sympify(coeff), sp.sympify(part.term)
            _free_of_index(coeff, total, "a coefficient")
            _free_of_index(part.symbol, total, f"the name {part.symbol}")
            if (part.count, part.weight, part.index) != (total.count, total.weight, total.index):
                raise ProofError(f"{part.symbol} ranges over different terms")
            if point is not None:
                # At a point the derivative is a number: nothing on the right varies.
                if var in coeff.free_symbols | part_term.free_symbols | part.symbol.free_symbols:
                    raise ProofError(
                        f"{sp.sstr(coeff)}·{part.symbol} varies with {var}, "
                        "but a derivative at a point does not"
                    )
            elif var in part_term.free_symbols and not _is_function_of(part.symbol, var):
                raise ProofError(
                    f"{part.symbol} names terms that vary with {var}: "
                    f"name it by a function of {var}, like A({var})"
                )
        _require_smooth(facts, term, var, point, {})
        slope = sp.diff(term, var)
        if point is not None:
            slope = slope.subs(var, point)
        termwise = sp.Add(*(sp.sympify(coeff) * part.term for coeff, part in self.combination))
        Identity(slope, termwise, "termwise derivative").decide(facts)
        return "term differentiable by z3; termwise derivative decided by cancel"


@dataclass
class Differentiate(Step):
    """Rule: ``d expr/d var`` by sympy's differentiation rules, where ``expr`` is smooth.

    The conclusion is ``Derivative(expr, var) = diff(expr, var)`` as a function of
    ``var`` or, with ``point``, ``Subs(Derivative(expr, var), var, point)`` equal to
    ``diff`` at the point.  With ``value``, the right-hand side is ``value`` instead, and
    z3 must show it equal to ``diff``'s result once the facts about the applied
    functions are substituted.

    Parameters
    ----------
    expr
        The expression to differentiate.
    var
        The real symbol to differentiate in.
    description
        What the step shows, for the report.
    point
        ``None`` for the derivative as a function of ``var``, or the point at which it
        is taken.
    value
        The claimed derivative, checked by z3; ``None`` concludes ``diff``'s result.
    constants
        Symbols besides ``var`` that ``expr`` may contain; the conclusion is then the
        partial derivative with these held fixed.

    Notes
    -----
    ``expr`` may contain finite real numbers, ``var``, the declared ``constants``,
    ``+``, ``*``, integer powers, ``exp``, ``log`` and functions ``A(var)`` of ``var``
    alone, and no derivatives.  Each such function needs a fact giving its derivative
    (``Derivative(A(var), var) = ...``, or at a point ``Subs(...) = ...`` together with
    its value ``A(point) = ...``), as :class:`SumDerivative` concludes; that fact is what
    certifies that the derivative exists.  The facts must then imply non-zero
    denominators and positive logarithm arguments at the point (z3; at a point, with the
    known values substituted).  These conditions are open, so ``expr`` is smooth on a
    neighbourhood of the point and the sum, product, quotient and chain rules give

    .. math:: \\frac{d}{dx} f\\bigl(x, A_1(x), \\dots\\bigr)
       = \\partial_x f + \\sum_i \\partial_{A_i} f \\cdot A_i'(x).

    A symbol other than ``var`` is refused unless declared constant: it may stand for a
    quantity that varies with ``var`` (a named sum, say), and differentiating it as a
    constant would give a partial derivative where a total one is meant.  Declaring it
    is sound, because the conclusion is then read as what sympy's ``Derivative`` of an
    expression in several symbols means, the partial derivative in ``var`` with the
    others fixed.  (T12 holds its error variables fixed this way: its ``τ`` scales them
    explicitly, so they do not vary with ``τ`` themselves.)

    Examples
    --------
    >>> import sympy as sp
    >>> from softmax_dispersion.theory.kernel import Differentiate
    >>> t, c = sp.symbols("t c", real=True)
    >>> A = sp.Function("A", real=True)(t)
    >>> known = [sp.Eq(sp.Derivative(A, t), 2 * t), sp.Gt(A, 0)]
    >>> step = Differentiate(sp.log(A), t, "d log A / dt")
    >>> step.conclusion
    Eq(Derivative(log(A(t)), t), Derivative(A(t), t)/A(t))
    >>> step.check(known).verified
    True
    >>> step.check(known[:1]).verified  # log A needs A > 0
    False

    At a point, with a claimed value and a parameter held fixed:

    >>> quotient = sp.exp(c * t) / (1 + t)
    >>> at_zero = Differentiate(quotient, t, "quotient", point=0, value=c - 1, constants=[c])
    >>> at_zero.check([]).verified
    True
    >>> Differentiate(quotient, t, "c undeclared", point=0, value=c - 1).check([]).verified
    False
    """

    expr: sp.Expr
    var: sp.Symbol
    description: str
    point: sp.Expr | None = None
    value: sp.Expr | None = None
    constants: Sequence[sp.Symbol] = ()
    method: ClassVar[str] = "rule: differentiation of a smooth expression"

    @property
    def _point(self) -> sp.Expr | None:
        return None if self.point is None else sp.sympify(self.point)

    def _diff(self) -> sp.Expr:
        derivative = sp.diff(sp.sympify(self.expr), self.var)
        return derivative if self._point is None else derivative.subs(self.var, self._point)

    @property
    def conclusion(self) -> sp.Basic:
        rhs = self._diff() if self.value is None else sp.sympify(self.value)
        return sp.Eq(_derivative_of(self.expr, self.var, self._point), rhs, evaluate=False)

    def decide(self, facts: Sequence[sp.Basic]) -> str:
        expr, var, point = sp.sympify(self.expr), self.var, self._point
        value = None if self.value is None else sp.sympify(self.value)
        _check_variable(var, self.constants)
        if expr.has(sp.Derivative, sp.Subs):
            raise ProofError("the expression must not contain derivatives")
        _check_held_constant(expr, var, set(), self.constants)
        if point is not None:
            _check_point(point, value, var, set())
        applied = sorted(expr.atoms(AppliedUndef), key=sp.default_sort_key)
        for function in applied:
            if not _is_function_of(function, var):
                raise ProofError(f"{function} must be a function of {var} alone")
        known = {
            part.lhs: part.rhs
            for fact in facts
            for part in sp.And.make_args(fact)
            if isinstance(part, sp.Equality)
        }
        equals: dict[sp.Basic, sp.Expr] = {}
        for function in applied:
            needed = [_derivative_of(function, var, point)]
            if point is not None:
                needed.append(function.subs(var, point))
            for key in needed:
                if key not in known:
                    raise ProofError(f"no fact gives {sp.sstr(key)}")
                equals[key] = known[key]
        _require_smooth(facts, expr, var, point, equals)
        if value is None:
            return "sympy's differentiation rules; smoothness implied by the facts"
        derivative = self._diff().xreplace(equals)
        leftover = (
            (sp.Derivative, sp.Subs) if point is None else (sp.Derivative, sp.Subs, AppliedUndef)
        )
        if derivative.has(*leftover):
            raise ProofError(f"the derivative is not explicit: {sp.sstr(derivative)}")
        require(facts, sp.Eq(derivative, value, evaluate=False), "equality with the claimed value")
        return f"diff gives {sp.sstr(derivative)}; equal to the claimed value by z3"


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
    checking it does the work.  ``cites`` names claims this proof uses: each is checked
    first, and what it proved, ``its assumptions ⇒ its statement``, becomes a fact.
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
            # A claim proves "assumptions imply statement"; only that may be used here.
            facts.append(sp.Implies(sp.And(*cited.assumptions), cited.statement))
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
