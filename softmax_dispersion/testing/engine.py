"""What a kind's engine provides, and what the battery hands it: :class:`Engine`, :class:`Session`.

A :class:`~softmax_dispersion.testing.kinds.Kind` record names its engine; the battery
(:mod:`~softmax_dispersion.testing.battery`) runs one :class:`Session` per dtype and asks
the engine for its cases, its evaluated cases and its policy outcomes.  The battery owns
what every kind shares: calling the implementation
(:class:`~softmax_dispersion.testing.calls.Caller`), the properties and their tallies,
the named behaviours (``subnormals``, ``input``, required policies), the report.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from softmax_dispersion.testing.adapters import Adapter
    from softmax_dispersion.testing.battery_report import Worst
    from softmax_dispersion.testing.calls import Caller
    from softmax_dispersion.testing.kinds import Kind
    from softmax_dispersion.testing.properties import CaseRun, Context
    from softmax_dispersion.testing.tolerance import Tolerance

__all__ = ["Engine", "PolicyOutcome", "Session", "load_engine"]


@dataclass
class Session:
    """One dtype of one check, as an engine sees it.

    Attributes
    ----------
    kind : Kind
        The kind checked.
    dtype : str
        The dtype of this session.
    library : Adapter
        The array library (``library.compiles_per_shape``: pad to few shapes).
    tolerance : Tolerance
        The accuracy model.
    seed : int
        Seed of the random suites and variants.
    options : mapping
        The kind's options (``{"s": 0.5}``).
    call : Caller
        Runs one :class:`~softmax_dispersion.testing.calls.Call` of the implementation.
    context : Context
        Shared with the properties (behaviours observed).
    notes : set of str
        Findings for the report's notes.
    unsupported : list of str
        Calls of an optional shape the implementation refused (named in the notes).
    """

    kind: Kind
    dtype: str
    library: Adapter
    tolerance: Tolerance
    seed: int
    options: Mapping[str, Any]
    call: Caller
    context: Context
    notes: set[str] = field(default_factory=set)
    unsupported: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class PolicyOutcome:
    """What the implementation returned on one policy input.

    Attributes
    ----------
    key : str
        The policy's key (one of the kind's :class:`~softmax_dispersion.testing.kinds.Policy`).
    observed : str
        Its name (``"NaN"``, ``"zeros"``, ``"raises ValueError"``), or the values listed
        when it has none.
    worst : Worst or None
        The input and output, for the report when the outcome fails.
    non_finite : bool
        The output holds NaN or ``±inf`` (on a finite policy input: an accuracy failure).
    label : str
        Which input of the policy (``"n=82"``) when a policy has several.
    hint : str
        The likely cause of a non-finite output on a finite input, as the kind's engine
        knows it (``""``: the row kinds' own).
    """

    key: str
    observed: str
    worst: Worst | None = None
    non_finite: bool = False
    label: str = ""
    hint: str = ""


class Engine(Protocol):
    """The heavy part of a kind: its suites, calls, references, tolerance and policies."""

    def suites(self) -> Mapping[str, Callable[[str, int], Sequence[Any]]]:
        """Every suite the engine can build: name → ``builder(dtype, seed)``."""
        ...

    def cases(self, session: Session, suites: Sequence[str]) -> list[Any]:
        """The cases of ``suites`` for the session (each has ``.name``, ``"suite/case"``)."""
        ...

    def evaluate(self, cases: Sequence[Any], session: Session) -> Iterator[CaseRun]:
        """Call the implementation on ``cases`` and yield each case evaluated."""
        ...

    def policies(self, session: Session) -> Iterator[PolicyOutcome]:
        """Call the implementation on every policy input of the kind and name each output."""
        ...

    def expected(
        self, arrays: Mapping[str, Any], dtype: str, options: Mapping[str, Any]
    ) -> npt.NDArray[np.float64]:
        """The certified output on ``arrays`` (float64 values), correctly rounded to ``dtype``."""
        ...


def load_engine(kind: Kind) -> Engine:
    """``kind``'s engine: the ``"module:attribute"`` its record names, imported on first use.

    (Here rather than on the record, so that the registry of kinds imports nothing of
    the engines it names.)
    """
    module, _, attribute = kind.engine.partition(":")
    found: Engine = getattr(importlib.import_module(module), attribute)
    return found
