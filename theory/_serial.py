"""Claims as data: the content a certificate records, its hash, and a safe reader.

Every expression is written as sympy's ``srepr`` (which spells out each node and each
symbol's assumptions); undefined functions, whose ``srepr`` drops their assumptions, are
listed with them in a table.  A step is its rule's name and its inputs, field by field.
The content hash of a claim is the SHA-256 of this record (sorted keys), so it changes
with any edit to the statement, an assumption, a definition, the witness, a step, or a
cited claim's own hash.

:func:`read_expression` turns an ``srepr`` back into the sympy object without ``eval``:
it parses the text with :mod:`ast` and builds only nodes from a fixed list of sympy
classes, unevaluated, so that the object read is the object written.
"""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import sympy as sp
from sympy.core.assumptions import _assume_defined
from sympy.core.function import AppliedUndef, UndefinedFunction
from sympy.functions.elementary.piecewise import ExprCondPair

from softmax_dispersion.theory._core import Step
from softmax_dispersion.theory.definitions import (
    Family,
    Let,
    RealRoot,
    SumAt,
    SumOver,
)

__all__ = [
    "CertificateFormatError",
    "claim_content",
    "content_hash",
    "read_expression",
]


class CertificateFormatError(ValueError):
    """A record that cannot be read back (not a certificate of this format)."""


# --------------------------------------------------------------------------------------
# Writing


def srepr(expr: sp.Basic) -> str:
    """sympy's ``srepr`` of an expression."""
    return str(sp.srepr(expr))


def _symbols_and_functions(exprs: Iterable[sp.Basic]) -> tuple[dict[str, Any], dict[str, Any]]:
    symbols: dict[str, Any] = {}
    functions: dict[str, Any] = {}
    for expr in exprs:
        for node in sp.preorder_traversal(expr):
            if isinstance(node, sp.Symbol) and not isinstance(node, sp.Dummy):
                symbols[node.name] = dict(node.assumptions0)
            elif isinstance(node, AppliedUndef):
                functions[type(node).__name__] = dict(type(node)._kwargs)
            elif isinstance(node, UndefinedFunction):
                functions[node.__name__] = dict(node._kwargs)
    return dict(sorted(symbols.items())), dict(sorted(functions.items()))


class _Writer:
    """Encodes step inputs; collects every sympy object it writes."""

    def __init__(self, cited: Callable[[Any], str]) -> None:
        self.cited = cited
        self.exprs: list[sp.Basic] = []

    def expr(self, value: sp.Basic) -> str:
        self.exprs.append(value)
        return srepr(value)

    def value(self, value: object) -> object:
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, Step):
            return {"step": self.step(value)}
        if type(value) is SumOver:
            return {"sum": self.expr(value.symbol)}
        if type(value) is SumAt:
            return {"sum_at": [self.expr(value.total.symbol), self.expr(value.value)]}
        if type(value) in (Let, RealRoot):
            return {"definition": self.expr(value.symbol)}  # type: ignore[attr-defined]
        if type(value) is Family:
            return {"family": value.name}
        if isinstance(value, tuple):
            return {"tuple": [self.value(v) for v in value]}
        if isinstance(value, UndefinedFunction):
            return {"function": value.__name__}
        if isinstance(value, sp.Basic):
            return {"sympy": self.expr(value)}
        if callable(getattr(value, "content_hash", None)):  # a cited claim, by its hash
            return {"claim": self.cited(value)}
        raise TypeError(f"cannot record a step input of type {type(value).__name__}")

    def step(self, step: Step) -> dict[str, object]:
        return {
            "rule": type(step).__name__,
            "inputs": {name: self.value(value) for name, value in step.inputs()},
        }


def _family_record(family: Family, writer: _Writer) -> dict[str, object]:
    return {
        "name": family.name,
        "index": [writer.expr(s) for s in family.index],
        "count": writer.expr(family.count),
        "domain": [writer.expr(r) for r in family.domain],
        "description": family.description,
    }


def _definition_record(definition: object, writer: _Writer) -> dict[str, object]:
    if isinstance(definition, SumOver):
        return {
            "kind": "SumOver",
            "symbol": writer.expr(definition.symbol),
            "term": writer.expr(definition.term),
            "family": definition.family.name,
            "description": definition.description,
        }
    if isinstance(definition, Let):
        return {
            "kind": "Let",
            "symbol": writer.expr(definition.symbol),
            "expression": writer.expr(definition.expression),
            "description": definition.description,
        }
    if isinstance(definition, RealRoot):
        return {
            "kind": "RealRoot",
            "symbol": writer.expr(definition.symbol),
            "polynomial": writer.expr(definition.polynomial),
            "var": writer.expr(definition.var),
            "lower": writer.expr(definition.lower),
            "upper": writer.expr(definition.upper),
            "description": definition.description,
        }
    raise TypeError(f"not a kernel definition: {definition!r}")


def claim_content(claim: Any, steps: Iterable[Step], cited: Callable[[Any], str]) -> dict[str, Any]:
    """Everything that makes up ``claim``, as JSON-ready data (what the hash covers).

    ``cited`` gives the content hash of each cited claim.
    """
    writer = _Writer(cited)
    families: dict[str, Family] = {}
    for definition in claim.definitions:
        if isinstance(definition, SumOver):
            families.setdefault(definition.family.name, definition.family)
    witness = None
    if claim.witness is not None:
        witness = sorted(
            (
                [writer.value(key), writer.value(sp.sympify(value))]
                for key, value in claim.witness.items()
            ),
            key=lambda pair: json.dumps(pair, sort_keys=True),
        )
    content: dict[str, Any] = {
        "id": claim.id,
        "title": claim.title,
        "source": claim.source,
        "statement": writer.expr(claim.statement),
        "assumptions": [writer.expr(a) for a in claim.assumptions],
        "naturals": [writer.expr(s) for s in claim.naturals],
        "families": [_family_record(f, writer) for f in families.values()],
        "definitions": [_definition_record(d, writer) for d in claim.definitions],
        "witness": witness,
        "cites": [cited(c) for c in claim.cites],
        "steps": [writer.step(step) for step in steps],
        "formulas": list(claim.formulas),
    }
    symbols, functions = _symbols_and_functions(writer.exprs)
    content["symbols"] = symbols
    content["functions"] = functions
    return content


def content_hash(content: Mapping[str, Any]) -> str:
    """The SHA-256 of a claim's content (canonical JSON: sorted keys, no spaces)."""
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------------------
# Reading


def _sympy_classes() -> dict[str, Any]:
    names = (
        "Symbol",
        "Integer",
        "Rational",
        "Float",
        "Add",
        "Mul",
        "Pow",
        "exp",
        "log",
        "Abs",
        "Max",
        "Min",
        "Piecewise",
        "Limit",
        "Derivative",
        "Subs",
        "Tuple",
        "Equality",
        "Unequality",
        "StrictLessThan",
        "LessThan",
        "StrictGreaterThan",
        "GreaterThan",
        "And",
        "Or",
        "Not",
        "Implies",
        "Equivalent",
        "Lambda",
    )
    classes = {name: getattr(sp, name) for name in names}
    classes["ExprCondPair"] = ExprCondPair
    return classes


_CLASSES = _sympy_classes()
_RELATIONS = (
    "Equality",
    "Unequality",
    "StrictLessThan",
    "LessThan",
    "StrictGreaterThan",
    "GreaterThan",
)
_NAMES: dict[str, sp.Basic] = {
    "oo": sp.oo,
    "zoo": sp.zoo,
    "nan": sp.nan,
    "pi": sp.pi,
    "E": sp.E,
    "I": sp.I,
    "true": sp.true,
    "false": sp.false,
}


def _constant(node: ast.AST) -> object:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, str, bool)):
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    raise CertificateFormatError(f"unexpected constant {ast.dump(node)[:80]}")


def _build(node: ast.AST, functions: Mapping[str, Mapping[str, bool]]) -> Any:
    if isinstance(node, ast.Name):
        if node.id in _NAMES:
            return _NAMES[node.id]
        raise CertificateFormatError(f"unknown name {node.id!r}")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        if isinstance(node.operand, ast.Name) and node.operand.id == "oo":
            return -sp.oo
        return _constant(node)
    if isinstance(node, ast.Constant):
        return _constant(node)
    if not isinstance(node, ast.Call):
        raise CertificateFormatError(f"unexpected syntax {type(node).__name__}")
    if isinstance(node.func, ast.Call):  # Function('A')(args): an applied function
        inner = node.func
        if not (
            isinstance(inner.func, ast.Name)
            and inner.func.id == "Function"
            and len(inner.args) == 1
            and not inner.keywords
        ):
            raise CertificateFormatError("an applied function must read Function('name')(...)")
        name = _constant(inner.args[0])
        if not isinstance(name, str) or name not in functions:
            raise CertificateFormatError(f"the function {name!r} is not in the functions table")
        _check_assumptions(functions[name], f"the function {name!r}")
        function = sp.Function(name, **dict(functions[name]))
        return function(*(_build(a, functions) for a in node.args))
    if not isinstance(node.func, ast.Name):
        raise CertificateFormatError("unexpected call")
    name = node.func.id
    if name == "Function":
        (arg,) = node.args
        fname = _constant(arg)
        if not isinstance(fname, str) or fname not in functions:
            raise CertificateFormatError(f"the function {fname!r} is not in the functions table")
        _check_assumptions(functions[fname], f"the function {fname!r}")
        return sp.Function(fname, **dict(functions[fname]))
    if name not in _CLASSES:
        raise CertificateFormatError(f"{name} is not a class a certificate may use")
    args = [_build(a, functions) for a in node.args]
    kwargs = {k.arg: _constant(k.value) for k in node.keywords if k.arg is not None}
    if name == "Symbol":
        if len(args) != 1 or not isinstance(args[0], str):
            raise CertificateFormatError("Symbol takes one name")
        _check_assumptions(kwargs, f"the symbol {args[0]!r}")
        return sp.Symbol(args[0], **kwargs)
    integers = len(args) == 2 and all(isinstance(a, sp.Integer) for a in args)
    if name == "Pow" and integers and abs(int(args[1])) > 64:
        # sympy would compute it on reading: refuse rather than hang
        raise CertificateFormatError("an integer power with a huge exponent")
    if name in ("Integer", "Rational", "Float"):
        if name == "Float":
            return sp.Float(*args, **kwargs)
        if not all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            raise CertificateFormatError(f"{name} takes integers")
        return _CLASSES[name](*args)
    if kwargs:
        raise CertificateFormatError(f"{name} takes no keywords here")
    if name in _RELATIONS:  # kept as written: never settled by sympy on reading
        return _CLASSES[name](*args, evaluate=False)
    return _CLASSES[name](*args)


def _check_assumptions(kwargs: Mapping[str, object], what: str) -> None:
    """Assumptions are known assumption names with boolean values, nothing else."""
    for key, value in kwargs.items():
        if key not in _assume_defined or not isinstance(value, bool):
            raise CertificateFormatError(f"{what}: {key}={value!r} is not an assumption")


def read_expression(text: object, functions: Mapping[str, Mapping[str, bool]]) -> sp.Basic:
    """The sympy object an ``srepr`` describes, built from known classes only.

    Raises
    ------
    CertificateFormatError
        For text that is not an ``srepr`` of the kernel's language.

    Examples
    --------
    >>> import sympy as sp
    >>> x = sp.Symbol("x", real=True)
    >>> expr = sp.Le(sp.exp(-x), 2 * x, evaluate=False)
    >>> read_expression(sp.srepr(expr), {}) == expr
    True
    >>> read_expression("__import__('os')", {})  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ...
    CertificateFormatError: __import__ is not a class a certificate may use
    """
    if not isinstance(text, str) or len(text) > 1_000_000:
        raise CertificateFormatError("an expression must be an srepr string")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError) as error:
        raise CertificateFormatError(f"not an srepr: {error}") from None
    try:
        built = _build(tree.body, functions)
    except CertificateFormatError:
        raise
    except (TypeError, ValueError, AttributeError, RecursionError) as error:
        raise CertificateFormatError(f"cannot rebuild {text[:80]!r}: {error}") from None
    if not isinstance(built, sp.Basic):
        raise CertificateFormatError(f"{text[:80]!r} is not a sympy object")
    # Each node is rebuilt from its arguments as sympy builds it; a node that sympy
    # would have written otherwise (an unevaluated sum, a relation settled on reading)
    # does not read back as written, and is refused rather than silently changed.
    if sp.srepr(built) != text:
        raise CertificateFormatError(f"{text[:80]!r} does not read back as written")
    return built
