"""Read a printed Coq statement back into sympy, to check the printer against the claim.

:func:`read_statement` parses the Coq text that
:func:`~softmax_dispersion.theory.coq.coq_statement` emits, with Coq's own notation
levels, and rebuilds every hypothesis and the conclusion as sympy objects.
:func:`statement_mismatches` compares them, part by part, with the claim the text was
printed from.  A printer that drops, swaps or mis-brackets a subterm, flips a relation,
loses a hypothesis or a quantifier over the naturals produces text that reads back
differently, and the comparison names the part.

This module shares no table with the printer: its grammar is written from Coq's
reference manual (levels of ``+``, ``*``, ``^``, unary ``-``, the relations and the
connectives), so that a wrong entry in the printer is not repeated here.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import sympy as sp
from sympy.core.function import UndefinedFunction

from softmax_dispersion.theory.coq import (
    Family,
    LetDefinition,
    RootDefinition,
    SumDefinition,
    claim_definitions,
    family,
    printed_names,
    statement_hook,
)
from softmax_dispersion.theory.kernel import Claim

__all__ = [
    "CoqReadError",
    "Hypothesis",
    "PrintedStatement",
    "names_resolver",
    "read_statement",
    "statement_mismatches",
]


class CoqReadError(ValueError):
    """Text that is not a statement of the printed form."""


# Coq's levels: (level, associativity) of each binary notation in R_scope and Prop.
_BINARY: dict[str, tuple[int, str]] = {
    "^": (30, "right"),
    "*": (40, "left"),
    "/": (40, "left"),
    "+": (50, "left"),
    "-": (50, "left"),
    "=": (70, "none"),
    "<>": (70, "none"),
    "<=": (70, "none"),
    "<": (70, "none"),
    ">=": (70, "none"),
    ">": (70, "none"),
    "/\\": (80, "right"),
    "\\/": (85, "right"),
    "<->": (95, "none"),
    "->": (99, "right"),
}
_PREFIX: dict[str, int] = {"-": 35, "~": 75}
_TOKEN = re.compile(
    r"\s*(<->|->|<=|>=|<>|/\\|\\/|=>|%nat|[-+*/^=<>~(),:.']|[A-Za-z_][A-Za-z0-9_']*|\d+)"
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_']*")
_TYPES = ("R", "nat", "R -> R", "nat -> R", "list R")
_TUPLE_LIST = re.compile(r"list \(R( \* R)+\)")


def _tokens(text: str) -> list[str]:
    out, position = [], 0
    text = text.rstrip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if not match:
            raise CoqReadError(f"unexpected text at {text[position : position + 20]!r}")
        out.append(match.group(1))
        position = match.end()
    return out


Node = tuple[Any, ...]
"""A parse tree: ("num", n), ("id", name), ("app", head, args), ("bin", op, a, b), …"""


class _Parser:
    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.k = 0

    def peek(self) -> str | None:
        return self.tokens[self.k] if self.k < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise CoqReadError(f"expected {expected!r}, found {token!r}")
        self.k += 1
        return token

    def term(self, allowed: int = 200) -> tuple[Node, int]:
        token = self.peek()
        if token in ("forall", "fun", "if"):
            if allowed < 200:
                raise CoqReadError(f"{token} needs parentheses here")
            node, level = self.binder(), 200
        elif token in _PREFIX:
            self.take()
            operand, _ = self.term(_PREFIX[token])
            node, level = (("neg" if token == "-" else "not"), operand), _PREFIX[token]
        else:
            node, level = self.application()
        while (op := self.peek()) in _BINARY:
            op_level, assoc = _BINARY[op]
            left_max = op_level if assoc == "left" else op_level - 1
            if op_level > allowed or level > left_max:
                break
            self.take()
            right, _ = self.term(op_level if assoc == "right" else op_level - 1)
            node, level = ("bin", op, node, right), op_level
        return node, level

    def binder(self) -> Node:
        keyword = self.take()
        if keyword == "if":
            condition, _ = self.term(199)
            self.take("then")
            yes, _ = self.term()
            self.take("else")
            no, _ = self.term()
            return ("if", condition, yes, no)
        groups: list[tuple[list[str], str]] = []
        if keyword == "fun" and self.peek() == "'":
            self.take("'")
            self.take("(")
            names = [self.identifier()]
            while self.peek() == ",":
                self.take(",")
                names.append(self.identifier())
            self.take(")")
            groups.append((names, "tuple"))
        while self.peek() not in (",", "=>"):
            if self.peek() == "(":
                self.take("(")
                groups.append(self.names_and_type())
                self.take(")")
            else:
                groups.append(self.names_and_type())
        self.take("," if keyword == "forall" else "=>")
        body, _ = self.term()
        return (keyword, groups, body)

    def identifier(self) -> str:
        token = self.take()
        if not _IDENTIFIER.fullmatch(token):
            raise CoqReadError(f"expected a name, found {token!r}")
        return token

    def names_and_type(self) -> tuple[list[str], str]:
        names = []
        while self.peek() not in (":", None):
            names.append(self.identifier())
        self.take(":")
        # A type runs to the closing parenthesis of its group, or to the binder's end.
        kind: list[str] = []
        depth = 0
        while (token := self.peek()) is not None:
            if depth == 0 and token in (")", ",", "=>"):
                break
            depth += {"(": 1, ")": -1}.get(token, 0)
            kind.append(self.take())
        text = " ".join(kind).replace("( ", "(").replace(" )", ")")
        if text not in _TYPES and not _TUPLE_LIST.fullmatch(text):
            raise CoqReadError(f"a binder of type {text!r}")
        return names, text

    def application(self) -> tuple[Node, int]:
        head = self.atom()
        arguments = []
        while self.peek() is not None and (
            self.peek() == "(" or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_']*|\d+", self.peek() or "")
        ):
            if self.peek() in ("then", "else", "forall", "fun", "if"):
                break
            arguments.append(self.atom())
        if not arguments:
            return head, 0
        return ("app", head, tuple(arguments)), 10

    def atom(self) -> Node:
        token = self.take()
        if token == "(":
            node, _ = self.term()
            if self.peek() == ",":
                members = [node]
                while self.peek() == ",":
                    self.take(",")
                    members.append(self.term()[0])
                self.take(")")
                return ("tuple", tuple(members))
            self.take(")")
            return self.scoped(node)
        if token.isdigit():
            return self.scoped(("num", int(token)))
        if _IDENTIFIER.fullmatch(token):
            return ("id", token)
        raise CoqReadError(f"unexpected {token!r}")

    def scoped(self, node: Node) -> Node:
        """``(…)%nat`` or ``0%nat``: a natural-number term."""
        if self.peek() == "%nat":
            self.take()
            return ("nat", node)
        return node


@dataclass(frozen=True)
class Hypothesis:
    """One hypothesis of a printed statement, rebuilt.

    ``kind`` is ``"length"`` (``INR (length ℓ) = count``), ``"weights"`` (the weights
    of ``ℓ`` add up to ``count``), ``"sum"`` (``symbol = Σ term`` over ``ℓ``; for a sum
    named by a function, ``symbol`` is ``A(θ)`` and the hypothesis holds at every θ), or
    ``"fact"`` (a proposition, holding for every member of the lists in ``over`` and
    every natural number in ``naturals``).
    """

    kind: str
    lists: tuple[str, ...] = ()
    over: tuple[sp.Symbol, ...] = ()
    symbol: sp.Expr | None = None
    expr: sp.Basic = sp.true
    count: sp.Expr | None = None
    naturals: tuple[sp.Symbol, ...] = ()


@dataclass
class PrintedStatement:
    """A printed statement, read back: its binders, hypotheses and conclusion.

    ``conclusion`` is the conjunction of the conclusion's parts;
    ``conclusion_parts`` lists each part with the natural numbers it is quantified over.
    """

    name: str
    reals: list[str] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)
    lists: list[str] = field(default_factory=list)
    hypotheses: list[Hypothesis] = field(default_factory=list)
    conclusion: sp.Basic = sp.true
    conclusion_parts: list[tuple[sp.Basic, tuple[sp.Symbol, ...]]] = field(default_factory=list)
    free_names: set[str] = field(default_factory=set)
    used_functions: set[str] = field(default_factory=set)


class _ToSympy:
    """Turns parse trees into sympy, resolving identifiers through ``resolve``."""

    def __init__(self, resolve: Callable[[str], Any], functions: set[str]) -> None:
        self.resolve = resolve
        self.functions = functions
        self.bound: dict[str, sp.Symbol] = {}
        self.free: set[str] = set()
        self.used_functions: set[str] = set()

    def symbol(self, name: str) -> sp.Symbol:
        if name in self.bound:
            return self.bound[name]
        if name in self.functions:
            raise CoqReadError(f"the function {name} used as a number")
        self.free.add(name)
        found = self.resolve(name)
        if not isinstance(found, sp.Symbol):
            raise CoqReadError(f"{name} is not a real")
        return found

    def function(self, name: str) -> UndefinedFunction:
        self.used_functions.add(name)
        found = self.resolve(name)
        return found if isinstance(found, UndefinedFunction) else sp.Function(name, real=True)

    def binding(self, names: list[str]) -> dict[str, sp.Symbol]:
        """Bind ``names`` (they shadow what they name outside); returns what to restore."""
        saved = dict(self.bound)
        for name in names:
            found = self.resolve(name)
            self.bound[name] = found if isinstance(found, sp.Symbol) else sp.Symbol(name, real=True)
        return saved

    def expr(self, node: Node) -> sp.Expr:
        tag = node[0]
        if tag == "num":
            return sp.Integer(node[1])
        if tag == "id":
            return self.symbol(node[1])
        if tag == "nat":
            return self.expr(node[1])
        if tag == "neg":
            return -self.expr(node[1])
        if tag == "bin":
            op, a, b = node[1], self.expr(node[2]), node[3]
            if op == "^":
                if b[0] != "num":
                    raise CoqReadError("pow takes a natural-number literal")
                return a ** sp.Integer(b[1])
            right = self.expr(b)
            operations: dict[str, Callable[[sp.Expr, sp.Expr], sp.Expr]] = {
                "+": lambda x, y: x + y,
                "-": lambda x, y: x - y,
                "*": lambda x, y: x * y,
                "/": lambda x, y: x / y,
            }
            if op not in operations:
                raise CoqReadError(f"{op} in a real-valued position")
            return operations[op](a, right)
        if tag == "app":
            return self.application(node)
        if tag == "if":
            return self.piecewise(node)
        raise CoqReadError(f"no real-valued reading of {tag}")

    def application(self, node: Node) -> sp.Expr:
        head, arguments = node[1], node[2]
        if head[0] != "id":
            raise CoqReadError("an application of a non-identifier")
        name = head[1]
        unary = {"exp": sp.exp, "ln": sp.log, "Rabs": sp.Abs, "sqrt": sp.sqrt}
        binary = {"Rpower": sp.Pow, "Rmax": sp.Max, "Rmin": sp.Min}
        if name == "Rpower" and len(arguments) == 2 and self.expr(arguments[1]).is_number:
            # The printer writes sqrt and ^ for constant powers: Rpower 0 p is 1, not 0.
            raise CoqReadError("Rpower with a constant exponent")
        if name in self.functions and name not in self.bound and len(arguments) == 1:
            return self.function(name)(self.expr(arguments[0]))
        if name in unary and len(arguments) == 1:
            return unary[name](self.expr(arguments[0]))
        if name in binary and len(arguments) == 2:
            return binary[name](self.expr(arguments[0]), self.expr(arguments[1]))
        if name == "Derive" and len(arguments) == 2:
            return self.derivative(arguments[0], arguments[1])
        raise CoqReadError(f"unknown function {name} with {len(arguments)} arguments")

    def derivative(self, function: Node, point: Node) -> sp.Expr:
        """``Derive (fun x : R => f) x`` → ``Derivative(f, x)`` (the point is ``x``)."""
        var, body = self.lambda_body(function)
        name = function[1][0][0][0]
        if point != ("id", name):
            raise CoqReadError("a derivative taken at another point than its variable")
        saved = self.binding([name])
        self.bound[name] = var
        expr = self.expr(body)
        self.bound = saved
        self.symbol(name)  # the point is the free variable of that name
        return sp.Derivative(expr, var)

    def piecewise(self, node: Node) -> sp.Expr:
        branches = []
        while node[0] == "if":
            condition, yes, no = node[1], node[2], node[3]
            deciders = {
                "Rlt_dec": sp.StrictLessThan,
                "Rle_dec": sp.LessThan,
                "Rgt_dec": sp.StrictGreaterThan,
                "Rge_dec": sp.GreaterThan,
                "Req_EM_T": sp.Equality,
            }
            if (
                condition[0] != "app"
                or condition[1] not in [("id", d) for d in deciders]
                or len(condition[2]) != 2
            ):
                raise CoqReadError("a condition that is no decided comparison")
            relation = deciders[condition[1][1]]
            left, right = (self.expr(a) for a in condition[2])
            branches.append((self.expr(yes), relation(left, right, evaluate=False)))
            node = no
        branches.append((self.expr(node), sp.true))
        return sp.Piecewise(*branches)

    def prop(self, node: Node) -> sp.Basic:
        tag = node[0]
        if tag == "id" and node[1] in ("True", "False"):
            return sp.true if node[1] == "True" else sp.false
        if tag == "not":
            return sp.Not(self.prop(node[1]))
        if tag == "app" and node[1] == ("id", "is_lim"):
            return self.limit(node)
        if tag == "app" and node[1] == ("id", "is_derive"):
            if len(node[2]) != 3:
                raise CoqReadError("is_derive takes a function, a point and a value")
            function, point, value = node[2]
            derivative = self.derivative(function, point)
            return sp.Eq(derivative, self.expr(value), evaluate=False)
        if tag != "bin":
            raise CoqReadError(f"no propositional reading of {tag}")
        op = node[1]
        connectives: dict[str, Callable[[sp.Basic, sp.Basic], sp.Basic]] = {
            "/\\": sp.And,
            "\\/": sp.Or,
            "->": sp.Implies,
            "<->": sp.Equivalent,
        }
        if op in connectives:
            return connectives[op](self.prop(node[2]), self.prop(node[3]))
        relations = {
            "=": sp.Equality,
            "<>": sp.Unequality,
            "<=": sp.LessThan,
            "<": sp.StrictLessThan,
            ">=": sp.GreaterThan,
            ">": sp.StrictGreaterThan,
        }
        if op in relations:
            sides = [self._is_derive_value(node[2]), self._is_derive_value(node[3])]
            if op == "=" and sides.count(True) == 1:
                # weaker than is_derive (Derive is some number where f is not differentiable)
                raise CoqReadError("an equation of a Derive: the printer writes is_derive")
            return relations[op](self.expr(node[2]), self.expr(node[3]), evaluate=False)
        raise CoqReadError(f"{op} is not a proposition")

    @staticmethod
    def _is_derive_value(node: Node) -> bool:
        return bool(node[0] == "app" and node[1] == ("id", "Derive"))

    def quantified(self, node: Node) -> tuple[sp.Basic, tuple[sp.Symbol, ...]]:
        """``forall l : nat, P`` → ``(P, (l,))``; any other proposition → ``(P, ())``."""
        if node[0] != "forall":
            return self.prop(node), ()
        if len(node[1]) != 1 or node[1][0][1] != "nat":
            raise CoqReadError("a quantifier inside a proposition ranges over the naturals")
        names = node[1][0][0]
        saved = self.binding(names)
        fact = self.prop(node[2])
        naturals = tuple(sorted((self.bound[n] for n in names), key=lambda s: s.name))
        self.bound = saved
        return fact, naturals

    def lambda_body(self, node: Node) -> tuple[sp.Symbol, Node]:
        if node[0] != "fun" or len(node[1]) != 1 or len(node[1][0][0]) != 1:
            raise CoqReadError("expected fun x : R => ...")
        (names, kind), body = node[1][0], node[2]
        if kind != "R":
            raise CoqReadError(f"a lambda over {kind}")
        found = self.resolve(names[0])
        return (found if isinstance(found, sp.Symbol) else sp.Symbol(names[0], real=True)), body

    def limit(self, node: Node) -> sp.Basic:
        if len(node[2]) != 3:
            raise CoqReadError("is_lim takes a function, a point and a value")
        function, point, value = node[2]
        var, body = self.lambda_body(function)
        points = {("id", "p_infty"): sp.oo, ("id", "m_infty"): -sp.oo}
        if point not in points:
            raise CoqReadError("a limit at a point other than ±oo")
        saved = dict(self.bound)
        self.bound[function[1][0][0][0]] = var
        expr = self.expr(body)
        self.bound = saved
        if value in points:
            target = points[value]
        elif value[0] == "app" and value[1] == ("id", "Finite") and len(value[2]) == 1:
            target = self.expr(value[2][0])
        else:
            raise CoqReadError("a limit value that is neither Finite nor infinite")
        return sp.Eq(sp.Limit(expr, var, points[point]), target, evaluate=False)

    def list_sum(self, node: Node) -> tuple[str, tuple[sp.Symbol, ...], sp.Expr]:
        """``fold_right Rplus 0 (map (fun x : R => t) l)`` → (l, (x,), t); a tuple
        pattern ``fun '(a, b) => t`` gives (l, (a, b), t)."""
        if not (
            node[0] == "app"
            and node[1] == ("id", "fold_right")
            and node[2][:2] == (("id", "Rplus"), ("num", 0))
            and len(node[2]) == 3
        ):
            raise CoqReadError("expected fold_right Rplus 0 (map ...)")
        mapped = node[2][2]
        if not (mapped[0] == "app" and mapped[1] == ("id", "map") and len(mapped[2]) == 2):
            raise CoqReadError("expected map (fun ...) list")
        function, target = mapped[2]
        if target[0] != "id":
            raise CoqReadError("a sum over something that is not a list variable")
        if function[0] == "fun" and len(function[1]) == 1 and function[1][0][1] == "tuple":
            names = function[1][0][0]
            if len(names) < 2 or len(set(names)) != len(names):
                raise CoqReadError("a tuple pattern of distinct names")
            saved = self.binding(names)
            indices = tuple(self.bound[n] for n in names)
            term = self.expr(function[2])
            self.bound = saved
            return target[1], indices, term
        index, body = self.lambda_body(function)
        saved = dict(self.bound)
        self.bound[function[1][0][0][0]] = index
        term = self.expr(body)
        self.bound = saved
        return target[1], (index,), term


def _hypothesis(reader: _ToSympy, node: Node) -> Hypothesis:
    if node[0] == "forall":
        ((names, kind), *rest) = node[1]
        if kind == "nat" and not rest:
            fact, naturals = reader.quantified(node)
            return Hypothesis("fact", expr=fact, naturals=naturals)
        body = node[2]
        equation = kind == "R" and not rest and body[0] == "bin" and body[1] == "="
        if (
            equation
            and body[2][0] == "app"
            and body[3][0] == "app"
            and body[3][1] == ("id", "fold_right")
        ):
            return _function_sum(reader, names, body)
        return _membership_fact(reader, node)
    if node[0] == "bin" and node[1] == "=":
        left, right = node[2], node[3]
        if (
            left[0] == "app"
            and left[1] == ("id", "INR")
            and len(left[2]) == 1
            and left[2][0][0] == "app"
            and left[2][0][1] == ("id", "length")
            and len(left[2][0][2]) == 1
            and left[2][0][2][0][0] == "id"
        ):
            target = left[2][0][2][0][1]
            return Hypothesis("length", lists=(target,), count=reader.expr(right))
        if left[0] == "app" and left[1] == ("id", "fold_right"):
            name, indices, weight = reader.list_sum(left)
            return Hypothesis(
                "weights", lists=(name,), over=indices, expr=weight, count=reader.expr(right)
            )
        if left[0] == "id" and right[0] == "app" and right[1] == ("id", "fold_right"):
            name, indices, term = reader.list_sum(right)
            return Hypothesis(
                "sum", lists=(name,), over=indices, symbol=reader.symbol(left[1]), expr=term
            )
    return Hypothesis("fact", expr=reader.prop(node))


def _function_sum(reader: _ToSympy, names: list[str], body: Node) -> Hypothesis:
    """``forall θ : R, A θ = fold_right …``: the sum named by the function ``A``."""
    if len(names) != 1:
        raise CoqReadError("a sum named by a function of one variable")
    application = body[2]
    if not (
        application[1][0] == "id"
        and application[1][1] in reader.functions
        and application[2] == (("id", names[0]),)
    ):
        raise CoqReadError("expected forall x : R, A x = fold_right ...")
    saved = reader.binding(names)
    var = reader.bound[names[0]]
    name, indices, term = reader.list_sum(body[3])
    reader.bound = saved
    symbol = reader.function(application[1][1])(var)
    return Hypothesis("sum", lists=(name,), over=indices, symbol=symbol, expr=term)


def _membership_fact(reader: _ToSympy, node: Node) -> Hypothesis:
    """``forall x : R, In x l -> P``, or ``forall a b : R, In (a, b) l -> P``."""
    ((names, kind), *rest) = node[1]
    body = node[2]
    if kind != "R" or rest:
        raise CoqReadError("a membership quantifier over reals")
    if not (body[0] == "bin" and body[1] == "->" and body[2][0] == "app"):
        raise CoqReadError("expected forall x : R, In x l -> ...")
    member = body[2]
    if member[1] != ("id", "In") or len(member[2]) != 2 or member[2][1][0] != "id":
        raise CoqReadError("expected In x l")
    element, target = member[2][0], member[2][1][1]
    expected = ("id", names[0]) if len(names) == 1 else ("tuple", tuple(("id", n) for n in names))
    if element != expected or len(set(names)) != len(names):
        raise CoqReadError("the member must be the quantified names, in order")
    saved = reader.binding(names)
    over = tuple(reader.bound[n] for n in names)
    fact = reader.prop(body[3])
    reader.bound = saved
    return Hypothesis("fact", lists=(target,) * len(over), over=over, expr=fact)


def _conjuncts(node: Node) -> list[Node]:
    """The parts of a right-nested chain ``A /\\ B /\\ C``."""
    parts = []
    while node[0] == "bin" and node[1] == "/\\":
        parts.append(node[2])
        node = node[3]
    return [*parts, node]


def read_statement(text: str, resolve: Callable[[str], Any]) -> PrintedStatement:
    """Parse ``Definition <Id>_statement : Prop := forall …, H1 -> … -> P.``.

    Parameters
    ----------
    text
        The printed definition.
    resolve
        Maps each Coq identifier to the sympy symbol (or undefined function) it stands
        for.

    Raises
    ------
    CoqReadError
        When the text is not of the printed form.

    Examples
    --------
    >>> import sympy as sp
    >>> x = sp.Symbol("x", real=True)
    >>> read = read_statement("Definition A_statement : Prop := forall x : R, x > 0 -> - x < 0.",
    ...                       {"x": x}.__getitem__)
    >>> read.hypotheses[0].expr, read.conclusion
    (x > 0, -x < 0)
    """
    tokens = _tokens(text)
    if tokens[:2] != ["Definition", tokens[1]] or tokens[2:6] != [":", "Prop", ":", "="]:
        raise CoqReadError("expected Definition <name> : Prop := ...")
    if tokens[-1] != ".":
        raise CoqReadError("the definition must end with a full stop")
    parser = _Parser(tokens[6:-1])
    tree, _ = parser.term()
    if parser.peek() is not None:
        raise CoqReadError(f"left over: {' '.join(tokens[6 + parser.k :][:8])}")
    read = PrintedStatement(name=tokens[1])
    if tree[0] == "forall":
        for names, kind in tree[1]:
            if kind == "R":
                read.reals.extend(names)
            elif kind in ("R -> R", "nat -> R"):
                read.functions.extend(names)
            elif kind.startswith("list"):
                read.lists.extend(names)
            else:
                raise CoqReadError(f"a binder of type {kind}")
        tree = tree[2]
    reader = _ToSympy(resolve, set(read.functions))
    while tree[0] == "bin" and tree[1] == "->":
        read.hypotheses.append(_hypothesis(reader, tree[2]))
        tree = tree[3]
    read.conclusion_parts = [reader.quantified(part) for part in _conjuncts(tree)]
    read.conclusion = sp.And(*(part for part, _ in read.conclusion_parts))
    read.free_names = reader.free - set(read.lists)
    read.used_functions = reader.used_functions
    return read


def _alpha(expr: sp.Basic) -> sp.Basic:
    """Rename every limit's bound variable to one canonical symbol (alpha-equivalence)."""
    bound = sp.Symbol("bound_variable", real=True)
    return expr.replace(
        lambda e: isinstance(e, sp.Limit),
        lambda e: sp.Limit(e.args[0].xreplace({e.args[1]: bound}), bound, e.args[2], e.args[3]),
    )


def _key(expr: sp.Basic) -> str:
    return str(sp.srepr(_alpha(expr)))


def _naturals_in(expr: sp.Basic, naturals: frozenset[sp.Symbol]) -> tuple[sp.Symbol, ...]:
    return tuple(sorted(expr.free_symbols & naturals, key=lambda s: s.name))


def statement_mismatches(claim: Claim, text: str, names: dict[Any, str] | None = None) -> list[str]:
    """Where the printed ``text`` differs from ``claim``: empty when it is faithful.

    The comparison is by meaning, not by the printer's layout:

    * every named sum of the claim is defined by exactly one hypothesis
      ``symbol = Σ term`` (``forall θ, A θ = Σ term`` for a sum named by a function)
      over some list, with the sympy term and index symbols of the sum, and that list
      carries exactly one count hypothesis, the family's own
      (``INR (length ℓ) = count``); sums over different families range over different
      lists; no other sum is defined;
    * every named root's isolating facts, every abbreviation's equation and every
      assumption are hypotheses, an assumption quantified over exactly the natural
      numbers it mentions; every relation of a family's domain is a hypothesis
      quantified over the family's list (and over no other); no hypothesis is left over;
    * the conclusion's parts are the claim's statement's conjuncts, each quantified over
      exactly the natural numbers it mentions; the real binders are exactly the free
      identifiers used, the function binders exactly the functions used, the list
      binders exactly the lists used.

    Expressions are compared as sympy trees (after sympy's own canonical ordering of
    sums and products), limits up to the name of their bound variable.  ``names`` maps
    the claim's symbols and functions to the identifiers the text uses (by default the
    printer's, :func:`~softmax_dispersion.theory.coq.printed_names`).  A claim with a
    :class:`~softmax_dispersion.theory.coq.StatementHook` is checked by its hook.

    Examples
    --------
    >>> from softmax_dispersion.theory import claim_by_id
    >>> from softmax_dispersion.theory.coq import coq_statement
    >>> t2 = claim_by_id("T2")
    >>> statement_mismatches(t2, coq_statement(t2))
    []
    >>> statement_mismatches(t2, coq_statement(t2).replace("<=", "<"))[0][:12]
    'conclusion: '
    """
    hook = statement_hook(claim.id)
    if hook is not None:
        return list(hook.check_statement(claim, text))
    read = read_statement(text, names_resolver(printed_names(claim) if names is None else names))
    problems: list[str] = []
    if read.name != f"{claim.id}_statement":
        problems.append(f"the definition is named {read.name}")
    naturals = frozenset(getattr(claim, "naturals", ()))
    definitions = claim_definitions(claim)
    sums = {d.symbol: d for d in definitions if isinstance(d, SumDefinition)}

    counts: dict[str, list[Hypothesis]] = {}
    defined: dict[sp.Expr, Hypothesis] = {}
    facts: list[Hypothesis] = []
    for hypothesis in read.hypotheses:
        if hypothesis.kind in ("length", "weights"):
            counts.setdefault(hypothesis.lists[0], []).append(hypothesis)
        elif hypothesis.kind == "sum":
            assert hypothesis.symbol is not None
            if hypothesis.symbol in defined:
                problems.append(f"{hypothesis.symbol} is defined twice")
            defined[hypothesis.symbol] = hypothesis
        else:
            facts.append(hypothesis)

    index_of: dict[str, tuple[sp.Symbol, ...]] = {}
    family_of: dict[str, Family] = {}
    for symbol, d in sums.items():
        got = defined.pop(symbol, None)
        if got is None:
            problems.append(f"the sum {symbol} is not defined")
            continue
        name = got.lists[0]
        index_of.setdefault(name, d.index)
        if family_of.setdefault(name, family(d)) != family(d):
            problems.append(f"the list {name} ranges over two families")
        if got.over != d.index or index_of[name] != d.index:
            problems.append(f"{symbol} sums over {got.over}, expected {d.index}")
        if _key(got.expr) != _key(d.term):
            problems.append(f"{symbol}'s term {sp.sstr(got.expr)} != {sp.sstr(d.term)}")
        listed = counts.get(name, [])
        if len(listed) != 1:
            problems.append(f"the list {name} of {symbol} has {len(listed)} count hypotheses")
            continue
        [count] = listed
        if count.kind != "length" or count.count != d.count:
            problems.append(
                f"the list {name} of {symbol}: a {count.kind} of {count.count}, "
                f"expected a length of {d.count}"
            )
    if len(set(family_of.values())) != len(family_of):
        problems.append("one family ranges over two lists")
    for symbol in defined:
        problems.append(f"{symbol} is defined by a sum the claim does not have")
    for name in set(counts) - set(index_of):
        problems.append(f"the list {name} is counted but no sum ranges over it")

    Key = tuple[str, tuple[tuple[sp.Symbol, str], ...], tuple[sp.Symbol, ...]]
    expected: list[Key] = []
    for definition in definitions:
        if isinstance(definition, RootDefinition):
            expected += [(_key(f), (), ()) for f in definition.facts]
        elif isinstance(definition, LetDefinition):
            expected.append((_key(definition.fact), (), ()))
    expected += [
        (_key(assumption), (), _naturals_in(assumption, naturals))
        for assumption in claim.assumptions
    ]
    for name, (_, indices, _, domain) in family_of.items():
        over = tuple(sorted(((i, name) for i in indices), key=str))
        expected += [(_key(relation), over, ()) for relation in domain]
    got_facts: list[Key] = [
        (
            _key(f.expr),
            tuple(sorted(zip(f.over, f.lists, strict=True), key=str)),
            tuple(f.naturals),
        )
        for f in facts
    ]
    missing = Counter(expected) - Counter(got_facts)
    extra = Counter(got_facts) - Counter(expected)
    problems += [f"missing hypothesis {key} over {over} {nat}" for key, over, nat in missing]
    problems += [f"unexpected hypothesis {key} over {over} {nat}" for key, over, nat in extra]

    if set(read.lists) != set(index_of) | set(counts):
        problems.append(f"list binders {read.lists} but lists used {sorted(index_of)}")
    if set(read.reals) != read.free_names:
        problems.append(f"real binders {read.reals} but free names {sorted(read.free_names)}")
    if set(read.functions) != read.used_functions:
        problems.append(
            f"function binders {read.functions} but functions used {sorted(read.used_functions)}"
        )
    parts = sp.And.make_args(claim.statement)
    wanted = Counter((_key(p), _naturals_in(p, naturals)) for p in parts)
    printed = Counter((_key(p), q) for p, q in read.conclusion_parts)
    if wanted != printed:
        problems.append(f"conclusion: {sp.sstr(read.conclusion)} != {sp.sstr(claim.statement)}")
    return problems


def names_resolver(names: dict[Any, str]) -> Callable[[str], Any]:
    """Resolve Coq identifiers through the printer's map of symbols and functions to names.

    An identifier the map does not hold (a limit's bound variable, say) reads as a
    fresh real symbol of that name; limits are compared up to their bound variable.
    """
    by_name = {name: symbol for symbol, name in names.items()}

    def resolve(name: str) -> Any:
        return by_name.get(name) or sp.Symbol(name, real=True)

    return resolve
