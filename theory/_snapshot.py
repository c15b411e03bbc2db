"""Claims frozen: what a claim says and how it is proved, read once into terms.

When a claim is checked, the kernel reads it here into a :class:`FrozenClaim`: the
statement, assumptions, natural-number symbols, definitions, witness, the cited claims'
content hashes and every step, each expression converted to terms
(:mod:`~softmax_dispersion.theory._expressions`).  Everything the kernel decides, hashes,
cites and certifies is this snapshot; the Python objects it was read from are never
consulted again, so a method or an attribute set on them afterwards changes nothing.

A step is read through the fields its rule class declares (the kernel's own class,
matched exactly), each by the kind its rule says it is
(:data:`~softmax_dispersion.theory._core.LOGIC`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import sympy as sp
from sympy.core.function import AppliedUndef, UndefinedFunction

from softmax_dispersion.theory._core import (
    LOGIC,
    MAX_STEP_DEPTH,
    ClaimRef,
    FrozenStep,
    RootRef,
    Step,
    SumRef,
)
from softmax_dispersion.theory._expressions import Converter, ExpressionError
from softmax_dispersion.theory.definitions import (
    DEFINITION_KINDS,
    DefinitionError,
    FamilyDef,
    FrozenDefinition,
    Let,
    LetDef,
    RealRoot,
    RootDef,
    SumAt,
    SumDef,
    SumOver,
)
from softmax_dispersion.theory.terms import Term, TermError, free_names, show

__all__ = [
    "Freezer",
    "FrozenClaim",
    "WitnessFunction",
    "WitnessValue",
    "check_text",
    "readable_fact",
]

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}")


def check_text(value: object, what: str, *, identifier: bool = False) -> str:
    """``value`` as text a person reads: no control or format characters (no
    right-to-left overrides, no line breaks that forge report lines); an identifier is
    letters, digits, ``_ . -``."""
    if type(value) is not str:
        raise ExpressionError(f"{what} must be text, not {type(value).__name__}")
    assert isinstance(value, str)
    if identifier and not _ID.fullmatch(value):
        raise ExpressionError(f"{what} {value!r:.40} is not an identifier (letters, digits, _ . -)")
    if len(value) > 10_000:
        raise ExpressionError(f"{what} is longer than 10000 characters")
    for char in value:
        if unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"):
            raise ExpressionError(
                f"{what} holds the character {unicodedata.name(char, hex(ord(char)))!r}, "
                "which does not print as itself"
            )
    return value


@dataclass(frozen=True)
class WitnessValue:
    """The witness value of a free symbol: a closed real term."""

    name: str
    value: Term


@dataclass(frozen=True)
class WitnessFunction:
    """The witness value of a free function: ``Lambda(parameters, body)``."""

    name: str
    parameters: tuple[str, ...]
    body: Term


WitnessEntry = WitnessValue | WitnessFunction


@dataclass(frozen=True, eq=False)
class FrozenClaim:
    """A claim as the kernel holds it (terms only); ``error`` if it could not be read."""

    id: str
    title: str
    source: str
    statement: Term
    assumptions: tuple[Term, ...]
    naturals: tuple[str, ...]
    definitions: tuple[FrozenDefinition, ...]
    witness: tuple[WitnessEntry, ...] | None
    cites: tuple[str, ...]
    steps: tuple[FrozenStep, ...]
    formulas: tuple[str, ...]
    error: str = ""


def readable_fact(term: Term, naturals: Iterable[str]) -> str:
    """A statement or an assumption of a claim as a person reads it.

    The kernel reads every fact of a claim that mentions one of its natural-number
    symbols as holding *for every* natural value of them (as :class:`Induction` uses it,
    and as the Coq printer writes it, ``forall l : nat, ...``), so the text says so:
    ``for every natural l: x <= l``, never a bare ``x <= l`` that reads as a hypothesis
    about one ``l``.

    Examples
    --------
    >>> from softmax_dispersion.theory import terms
    >>> fact = terms.rel("le", terms.sym("x"), terms.sym("l"))
    >>> readable_fact(fact, ("l",)), readable_fact(fact, ())
    ('for every natural l: x <= l', 'x <= l')
    """
    mentioned = sorted(free_names(term) & set(naturals))
    text = show(term)
    return f"for every natural {', '.join(mentioned)}: {text}" if mentioned else text


def rule_classes() -> dict[str, type]:
    """The kernel's rule classes by name."""
    return {cls.__name__: cls for cls in LOGIC}


class Freezer:
    """Reads a claim's (or a step's) objects into their frozen forms.

    ``definitions`` are the claim's frozen definitions by name, against which every sum
    and root a step names is resolved; ``cites`` gives, by identity, the content hash of
    each claim the claim declares in ``cites``.
    """

    def __init__(
        self,
        definitions: Mapping[str, FrozenDefinition] | None = None,
        cites: Mapping[int, str] | None = None,
        converter: Converter | None = None,
    ) -> None:
        self.convert = converter or Converter()
        self.definitions = dict(definitions or {})
        self.cites = dict(cites or {})
        self._families: dict[int, FamilyDef] = {}

    # ---- definitions ---------------------------------------------------------------

    def family(self, family: object) -> FamilyDef:
        """A :class:`~softmax_dispersion.theory.definitions.Family` as a :class:`FamilyDef`."""
        from softmax_dispersion.theory.definitions import Family

        if type(family) is not Family:
            raise DefinitionError(f"{family!r:.60} is not a kernel Family")
        assert isinstance(family, Family)
        known = self._families.get(id(family))
        if known is not None:
            return known
        name = check_text(family.name, "a family's name")
        where = f"the family {name!r}"
        index = _tuple(family.index, f"{where}: its index")
        member = family.member
        frozen = FamilyDef(
            name=name,
            index=tuple(self.convert.symbol(s, f"an index symbol of {name!r}") for s in index),
            count=self.convert.real(family.count, f"{where}: its count"),
            domain=tuple(
                self.convert.formula(r, f"the domain of {name!r}")
                for r in _tuple(family.domain, f"{where}: its domain")
            ),
            member=None
            if member is None
            else tuple(
                self.convert.real(v, f"the member of {name!r}")
                for v in _tuple(member, f"{where}: its member")
            ),
            description=check_text(family.description, f"{where}: its description"),
        )
        self._families[id(family)] = frozen
        return frozen

    def definition(self, definition: object, position: int) -> FrozenDefinition:
        """A definition (``SumOver``, ``Let``, ``RealRoot``) in its frozen form."""
        kind = type(definition)
        if kind not in DEFINITION_KINDS:
            raise DefinitionError(
                f"definition {position + 1} is a {kind.__name__}, not a kernel definition "
                "(SumOver, Let, RealRoot)"
            )
        try:
            return self._definition(definition)
        except (ExpressionError, TermError) as error:
            raise DefinitionError(str(error)) from None

    def _definition(self, definition: Any) -> FrozenDefinition:
        symbol = definition.symbol
        if type(definition) is SumOver:
            if type(symbol) is not sp.Symbol and not isinstance(type(symbol), UndefinedFunction):
                raise DefinitionError(
                    f"a definition must name a fresh Symbol, not {_safe(symbol)} "
                    f"({type(symbol).__name__})"
                )
            description = check_text(definition.description, "a sum's description")
            family = self.family(definition.family)
            if isinstance(type(symbol), UndefinedFunction):
                name = self.convert.function(type(symbol), "a sum's name")
                args = symbol.args if type(symbol.args) is tuple else ()
                if len(args) != 1:
                    raise DefinitionError(
                        f"the sum {name} must be named by a real function of one real symbol"
                    )
                var: str | None = self.convert.symbol(args[0], f"the variable of {name}")
            else:
                name, var = self._defined_symbol(symbol), None
            term = self.convert.real(definition.term, f"the definition of {name}")
            return SumDef(name, var, term, family, description)
        name = self._defined_symbol(symbol)
        if type(definition) is Let:
            return LetDef(
                name,
                self.convert.real(definition.expression, f"the definition of {name}"),
                check_text(definition.description, "a definition's description"),
            )
        assert type(definition) is RealRoot
        return RootDef(
            name,
            self.convert.real(definition.polynomial, f"the polynomial of {name}"),
            self.convert.symbol(definition.var, f"the variable of {name}'s polynomial"),
            self.convert.number(definition.lower, f"the lower end of {name}"),
            self.convert.number(definition.upper, f"the upper end of {name}"),
            check_text(definition.description, "a definition's description"),
        )

    def _defined_symbol(self, symbol: object) -> str:
        if type(symbol) is not sp.Symbol:
            raise DefinitionError(
                f"a definition must name a fresh Symbol, not {_safe(symbol)} "
                f"({type(symbol).__name__})"
            )
        try:
            return self.convert.symbol(symbol, "a defined symbol")
        except ExpressionError as error:
            raise DefinitionError(str(error)) from None

    # ---- steps -----------------------------------------------------------------------

    def step(self, step: object, depth: int = 0) -> FrozenStep:
        """A step in its frozen form; a step that cannot be read carries its ``error``."""
        kind = type(step)
        logic = LOGIC.get(kind)
        rules = rule_classes()
        name = kind.__name__ if isinstance(kind.__name__, str) else "?"
        if logic is None or rules.get(name) is not kind:
            description = _description_of(step)
            detail = (
                f"{name} is not one of the kernel's rules; a claim may use only "
                f"{', '.join(sorted(rules))}"
            )
            return FrozenStep(name, {"description": description}, error=detail)
        inputs: dict[str, Any] = {}
        try:
            declared = [f.name for f in fields(kind)]  # type: ignore[arg-type]
            if sorted(declared) != sorted(logic.kinds):
                raise ExpressionError(f"{name}'s fields are not the rule's inputs")
            for field_name in declared:
                value = step.__dict__.get(field_name) if hasattr(step, "__dict__") else None
                inputs[field_name] = self.value(logic.kinds[field_name], value, field_name, depth)
        except (ExpressionError, DefinitionError, TermError) as error:
            description = _description_of(step)
            message = str(error)
            if not message.startswith("a step input"):
                message = f"a step input: {message}"
            return FrozenStep(name, {"description": description}, error=message)
        return FrozenStep(name, inputs)

    def value(self, kind: str, value: object, where: str, depth: int = 0) -> Any:
        """One input of a step, read as its rule says (``kind``); ``depth``: the step's
        own level of nesting."""
        if kind == "text":
            return check_text(value, f"{where}")
        if kind == "bool":
            if type(value) is not bool:
                raise ExpressionError(f"{where} must be True or False")
            return value
        if kind == "real?" and value is None:
            return None
        if kind in ("real", "real?"):
            return self.convert.real(value, where)
        if kind == "formula":
            return self.convert.formula(value, where)
        if kind == "point":
            return self.convert.point(value, where)
        if kind == "name":
            return self.convert.symbol(value, where)
        if kind == "names":
            return tuple(self.convert.symbol(v, where) for v in _tuple(value, where))
        if kind == "formulas":
            return tuple(self.convert.formula(v, where) for v in _tuple(value, where))
        if kind == "sum":
            return self.sum_ref(value, where)
        if kind == "combination":
            pairs = []
            for pair in _tuple(value, where):
                items = _tuple(pair, where)
                if len(items) != 2:
                    raise ExpressionError(f"{where}: a pair (coefficient, sum)")
                pairs.append((self.convert.real(items[0], where), self.sum_ref(items[1], where)))
            return tuple(pairs)
        if kind == "roots":
            return tuple(self.root_ref(v, where) for v in _tuple(value, where))
        if kind == "steps":
            if depth >= MAX_STEP_DEPTH:
                raise ExpressionError(f"{where}: steps nested more than {MAX_STEP_DEPTH} deep")
            return tuple(self.step(v, depth + 1) for v in _tuple(value, where))
        if kind == "claim":
            digest = self.cites.get(id(value))
            label = getattr(value, "id", "?") if type(value).__name__ == "Claim" else "?"
            return ClaimRef(digest or "", label if isinstance(label, str) else "?")
        raise ExpressionError(f"{where}: an input of unknown kind {kind}")

    def sum_ref(self, value: object, where: str) -> SumRef:
        """A ``SumOver`` (or ``SumAt``) named by a step: the claim's sum of that name."""
        at: Term | None = None
        if type(value) is SumAt:
            total = value.total
            if type(total) is not SumOver:
                raise DefinitionError(f"{where}: .at() names a value of a function-valued sum")
            at = self.convert.real(value.value, where)
            value = total
        if type(value) is not SumOver:
            raise DefinitionError(f"{where}: {_safe(value)} is not a SumOver")
        frozen = self._definition(value)
        assert isinstance(frozen, SumDef)
        known = self.definitions.get(frozen.name)
        if known != frozen:
            raise DefinitionError(
                f"{where}: the sum {frozen.name} is not among the claim's definitions "
                "(declare it in the claim's definitions, once)"
            )
        if at is not None and frozen.var is None:
            raise DefinitionError(f"{where}: .at() names a value of a function-valued sum")
        return SumRef(frozen.name, at)

    def root_ref(self, value: object, where: str) -> RootRef:
        """A ``RealRoot`` named by a step: the claim's root of that name."""
        if type(value) is not RealRoot:
            raise DefinitionError(f"{_safe(value)} is not a RealRoot among the claim's definitions")
        frozen = self._definition(value)
        if self.definitions.get(frozen.name) != frozen:
            raise DefinitionError(f"{frozen.name} is not a RealRoot among the claim's definitions")
        return RootRef(frozen.name)

    # ---- witness ---------------------------------------------------------------------

    def witness(self, witness: object) -> tuple[WitnessValue | WitnessFunction, ...] | None:
        """The witness, entry by entry (raises :class:`ExpressionError`)."""
        if witness is None:
            return None
        if not isinstance(witness, dict):
            raise ExpressionError("the witness must be a dict")
        entries: list[WitnessValue | WitnessFunction] = []
        for key, value in witness.items():
            where = f"the witness value of {_safe(key)}"
            if isinstance(value, str) or not (isinstance(value, sp.Basic) or type(value) is int):
                raise ExpressionError(
                    f"{where} must be a sympy number or an int, not {_safe(value)}"
                )
            if type(key) is UndefinedFunction:
                name = self.convert.function(key, where)
                parameters, body = self.convert.lambda_(value, where)
                entries.append(WitnessFunction(name, parameters, body))
            elif type(key) is sp.Symbol:
                name = self.convert.symbol(key, where)
                entries.append(WitnessValue(name, self.convert.real(value, where)))
            else:
                raise ExpressionError(f"{_safe(key)} is neither a symbol nor a function")
        names = [e.name for e in entries]
        if len(set(names)) != len(names):
            raise ExpressionError("the witness gives two values to one name")
        return tuple(sorted(entries, key=lambda e: (type(e).__name__, e.name)))


def _tuple(value: object, where: str) -> tuple[Any, ...]:
    if not isinstance(value, tuple):
        if isinstance(value, list):
            return tuple(value)
        raise ExpressionError(f"{where}: expected a sequence, not {type(value).__name__}")
    return value


def _description_of(step: object) -> str:
    value = step.__dict__.get("description", "") if hasattr(step, "__dict__") else ""
    if type(value) is not str:
        return ""
    try:
        return check_text(value, "a description")
    except ExpressionError:
        return value.encode("unicode_escape").decode("ascii")[:200]


def _safe(value: object) -> str:
    """A short description of an object, never by its own printing methods."""
    name = getattr(value, "name", None) if type(value) is sp.Symbol else None
    if type(name) is str:
        return name
    name = getattr(value, "__name__", None) if type(value) is UndefinedFunction else None
    if type(name) is str:
        return name
    if type(value) in (int, bool) or value is None:
        return repr(value)
    if isinstance(value, str):
        return repr(value[:40])
    if type(value) in (sp.Integer, sp.core.numbers.One, sp.core.numbers.Zero):
        return str(value.p)  # type: ignore[attr-defined]
    return type(value).__name__


def collect_definitions(values: Iterable[object]) -> list[object]:
    """The definitions named by step inputs (for checking a step on its own)."""
    found: list[object] = []

    def visit(value: object) -> None:
        if type(value) is SumAt:
            value = value.total
        if type(value) in DEFINITION_KINDS:
            if value not in found:
                found.append(value)
        elif isinstance(value, (tuple, list)):
            for item in value:
                visit(item)
        elif isinstance(value, Step) and type(value) in LOGIC:
            for item in fields(value):  # type: ignore[arg-type]
                visit(value.__dict__.get(item.name))

    for value in values:
        visit(value)
    return found


def freeze_definitions(
    definitions: Sequence[object], freezer: Freezer
) -> tuple[FrozenDefinition, ...]:
    """Each definition frozen, in order (a :class:`DefinitionError` for the first bad one)."""
    return tuple(freezer.definition(d, i) for i, d in enumerate(definitions))


def all_terms(claim: FrozenClaim) -> list[Term]:
    """Every term of a frozen claim (for name checks)."""
    found: list[Term] = [claim.statement, *claim.assumptions]
    for definition in claim.definitions:
        found += definition.body()
        if isinstance(definition, SumDef):
            found.append(definition.symbol)
            found += list(definition.family.member or ())
        else:
            found.append(definition.symbol)
    for entry in claim.witness or ():
        found.append(entry.value if isinstance(entry, WitnessValue) else entry.body)

    def visit(value: object) -> None:
        if type(value) is Term:
            found.append(value)
        elif isinstance(value, tuple):
            for item in value:
                visit(item)
        elif isinstance(value, FrozenStep):
            for item in value.inputs.values():
                visit(item)
        elif isinstance(value, SumRef) and value.at is not None:
            found.append(value.at)

    for step in claim.steps:
        visit(step)
    return found


Check = Callable[[FrozenClaim], None]
AppliedUndefType = AppliedUndef
