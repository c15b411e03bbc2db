"""The kinds of function the oracle checks: one registered :class:`Kind` each.

:data:`KINDS` is the registry, in the order lists and help texts show it.  Every list of
kinds, every help text and every count in the package (the CLI's ``--kind``, the
built-in targets, the policies ``--require-policy`` accepts, the docs) is derived from
it.  This module imports the standard library only: the command line builds its help
from it without loading numpy, sympy or z3.

Adding a kind
-------------
A kind is one :class:`Kind` record in :data:`KINDS` (below) and an *engine* module that
holds everything heavy (references, tolerances, suites, calls); the record names the
engine by ``"module:attribute"`` and it is imported on first use.  Nothing else in the
package changes: the battery (:mod:`~softmax_dispersion.testing.battery`), the CLI, the
targets, the report and the pytest plugin read the record.

The record (cheap data)
    ``name``; ``summary`` (one line: help texts and docs); ``call`` (how ``fn`` is
    called, for help, docs and reproducers: ``"fn(x)"``, ``"fn(x, mask)"``,
    ``"fn(q, k, v, attn_mask=None, is_causal=False, scale=None)"``, ``"fn(x, g)"``);
    ``arguments`` (the array arguments, in order: ``("x",)``, ``("q", "k", "v")``;
    several arrays are fine, and keyword arrays such as ``attn_mask`` are passed by the
    engine's :class:`~softmax_dispersion.testing.calls.Call`); ``claim`` (the claim
    the tolerance is derived in: ``"T12"``, ``"T14"``, ``"T15"``); ``suites`` (the suites
    it runs by default, names of its engine's suites) and ``skipped_suites`` (suites of
    its engine it refuses, with the reason); ``properties`` (names in
    :data:`~softmax_dispersion.testing.properties.PROPERTIES` that apply to it);
    ``policies`` (its named behaviours on special inputs, :class:`Policy`: the key, the
    question, the names an output may have, and ``finite`` when the input is finite,
    so that NaN or ``±inf`` there is an accuracy failure, never a name); ``options``
    (parameters only this kind takes, :class:`Option`: SSMax's ``s``; the API takes
    them as keyword arguments of ``check_softmax``, the CLI as ``--NAME``);
    ``targets`` (built-in targets, ``{"torch": "module:factory"}``: ``factory(kind)``
    returns the callable, with ``__oracle_source__`` set so that reproducers run; the
    target word fixes the array library, :data:`TARGET_LIBRARIES`); ``log_output``
    (outputs are log-probabilities: absolute tolerance, ULPs counted at
    ``max(|value|, 1)``); ``assert_source`` (the reproducer's check line for an accuracy
    failure, ``{call}`` replaced by the call; ``""`` prints the value instead);
    ``contract`` (what an implementation returning another shape is told);
    ``required`` (named behaviours required unless ``policies=`` says otherwise:
    ``{"input": "kept"}`` for the attention and VJP kinds).

The engine (heavy, imported on first use; see
:class:`~softmax_dispersion.testing.engine.Engine`)
    ``suites()`` (every suite it can build: name → ``builder(dtype, seed)``);
    ``cases(session, names)`` (the cases of those suites in the session's dtype, each
    with a ``name`` ``"suite/case"``); ``evaluate(cases, session)``; ``policies(session)``
    (yields one :class:`~softmax_dispersion.testing.engine.PolicyOutcome` per policy
    input: the key, the observed name or the values listed, the input and output as a
    :class:`~softmax_dispersion.testing.battery_report.Worst`, ``non_finite``, and a ``label``
    when a policy has several inputs); ``expected(arrays, dtype, options)`` (the
    certified output on given inputs, for ``expected_output``).

``evaluate`` calls the implementation through ``session.call`` (a
:class:`~softmax_dispersion.testing.calls.Caller`) with
:class:`~softmax_dispersion.testing.calls.Call` objects: named positional arrays in
order (float64 values, rounded to the dtype by the caller; booleans become the
library's masks), keywords (arrays among them converted the same way, anything else,
``is_causal=True``, ``scale=0.125``, passed as it is) and the output shape expected.
It gets back the exact inputs by name and the output as float64; the caller raises
:class:`~softmax_dispersion.testing.calls.SoftmaxCallError` for an exception or a wrong
shape, and records a modified input or a reused output buffer.  ``session`` also holds
the dtype, the library adapter (``compiles_per_shape``: pad to few shapes), the
tolerance, the seed, the kind's options, the properties' shared
:class:`~softmax_dispersion.testing.properties.Context` and ``notes``.

``evaluate`` yields one :class:`~softmax_dispersion.testing.properties.CaseRun` per case:
``main`` (an :class:`~softmax_dispersion.testing.properties.Evaluated`), and where the
kind has them ``shifted`` (copies the output must not change on), ``permuted`` (a
permutation and the evaluated permuted copy) and ``alone`` (rows evaluated on their
own).  Every kind's ``Evaluated`` has the output and the certified reference as 2-D
rows, the absolute allowance of every element (finite), the principal input as rows
(``inputs``, what the report shows), and optionally ``scale`` (where ULPs are counted,
for an allowance per element in a natural scale such as ``Σ_j p_j |v_j|``), ``strict``
(the strict model's allowance beside the default one), ``textbook`` (a plain two-pass
implementation's output, 16-bit only: the report's error ratio), and for reproducers
``arrays`` (every argument by name), ``call`` (``"fn(q, k, v, attn_mask=attn_mask)"``)
and ``rebuild`` (expressions rebuilding long arrays from the suites).  The row kinds fill
``logits``, ``probs`` and ``beta`` too, which only their own properties read.

The properties named in the record judge every ``CaseRun``; one a new kind needs is one
more :class:`~softmax_dispersion.testing.properties.Property` in ``PROPERTIES`` (its
check reads the fields it needs), named in the record.  What every kind shares is the
battery's: ``accuracy`` (with the NaN rule: a non-finite output where the reference is
finite always fails), ``fresh_output``, the ``subnormals`` and ``input`` behaviours,
required policies, a policy output that none of its names fits (the ``policy``
property), and the report.

Examples
--------
>>> list(KINDS)[:3]
['softmax', 'log_softmax', 'adaptive_temperature']
>>> KINDS["masked_softmax"].call
'fn(x, mask)'
>>> kind("ssmax").options[0].name
's'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

__all__ = [
    "BEHAVIOURS",
    "KINDS",
    "KIND_NAMES",
    "OUTPUT_NAMES",
    "TARGET_LIBRARIES",
    "TOLERANCE_MODELS",
    "Kind",
    "Option",
    "Policy",
    "builtin_targets",
    "kind",
]

OUTPUT_NAMES = (
    "NaN",
    "NaN in part",
    "zeros",
    "-inf",
    "uniform",
    "one-hot (the limit)",
    "the limit",
    "the mask wins",
    "ones",
    "raises",
    "exact",
    "rounded scores",
    "g",
)
"""The names an output on a policy input may have (``raises`` is followed by the
exception's type in reports; ``ones`` is what ``exp(x − logsumexp(x))`` returns on a row
of ``finfo.min``, its log-sum-exp rounded at that magnitude; log-softmax: all 0).
Attention on a row of ``finfo.min``: ``exact`` (the mask ignored, as the real numbers
do) or ``rounded scores`` (the scores rounded once to the format, all alike); the
log-softmax VJP on a row of only ``−inf``: ``g`` (the weights taken as 0)."""

BEHAVIOURS: dict[str, tuple[str, ...]] = {
    "subnormals": ("flushed", "kept"),
    "input": ("kept", "modified"),
}
"""The named behaviours of every kind besides its policies, with their values."""

TOLERANCE_MODELS: dict[str, str] = {
    "recursive": "T12 with γ_{n−1}: any summation order and every standard formulation",
    "strict": "T12 with γ_{n−1}: any summation order, the max-shifted formulations only "
    "(no log-sum-exp first, no log-add-exp fold, no scale before the shift)",
    "ulps": "a fixed number of ULPs at the reference value",
}
"""The accuracy models of :class:`~softmax_dispersion.testing.Tolerance` (the first is the
default), named here so that help texts need no numpy."""

TARGET_LIBRARIES: dict[str, str] = {
    "numpy": "numpy",
    "scipy": "numpy",
    "torch": "torch",
    "jax": "jax",
}
"""The array library each built-in target word takes."""


@dataclass(frozen=True)
class Policy:
    """A named behaviour of a kind on one special input.

    Attributes
    ----------
    key : str
        The report's and ``policies=``'s name for it (``"all -inf row"``).
    question : str
        What the input is, for docs and help.
    names : tuple of str
        The outputs it may have (of :data:`OUTPUT_NAMES`); any other output is a wrong
        answer (the ``policy`` property fails).
    finite : bool
        The input is finite (a row of ``finfo.min``): a NaN or infinite output there is
        an accuracy failure, never one of the names.
    """

    key: str
    question: str
    names: tuple[str, ...]
    finite: bool = False

    def accepts(self, value: str) -> bool:
        """Whether ``value`` (``"zeros"``, ``"raises ValueError"``) is one of the names."""
        head = value.split(":", 1)[0]
        if head.startswith("raises"):
            return "raises" in self.names
        return head in self.names


def _positive_number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    number = float(value)
    if not (number > 0 and math.isfinite(number)):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return number


@dataclass(frozen=True)
class Option:
    """A parameter that one kind's check takes (SSMax's ``s``).

    Attributes
    ----------
    name : str
        The keyword of ``check_softmax`` and the CLI's ``--NAME``.
    help : str
        One line for help texts.
    required : bool
        Whether the kind needs it.
    read : callable
        ``read(name, value)``: the validated value, or ``ValueError`` naming ``name``.
    """

    name: str
    help: str
    required: bool = True
    read: Callable[[str, object], object] = _positive_number


@dataclass(frozen=True)
class Kind:
    """A kind of function the oracle checks (see the module's docstring).

    Attributes
    ----------
    name, summary, call : str
        The kind's name, one line on what it is, and how ``fn`` is called.
    arguments : tuple of str
        The array arguments of ``fn``, in order.
    claim : str
        The claim the tolerance is derived in.
    engine : str
        ``"module:attribute"`` of the :class:`~softmax_dispersion.testing.engine.Engine`.
    suites : tuple of str
        The suites run by default.
    properties : tuple of str
        The properties that apply.
    policies : tuple of Policy
        The named behaviours on special inputs.
    options : tuple of Option
        Parameters only this kind takes.
    skipped_suites : mapping of str to str
        Suites of the engine this kind does not run, with the reason.
    targets : mapping of str to str
        Built-in target word → ``"module:factory"`` (``factory(kind_name)``).
    log_output : bool
        Outputs are log-probabilities (absolute tolerance).
    assert_source : str
        The reproducer's check of an accuracy failure (``{call}``: the call).
    contract : str
        What an implementation returning another shape is told.
    required : mapping of str to str
        Named behaviours required by default (``policies=`` overrides each): the
        attention and VJP kinds require ``{"input": "kept"}``, since a backward pass
        that writes into ``g`` (or attention into ``q``, ``k``, ``v``) corrupts the
        caller's autograd graph.
    """

    name: str
    summary: str
    call: str
    arguments: tuple[str, ...]
    claim: str
    engine: str
    suites: tuple[str, ...]
    properties: tuple[str, ...]
    policies: tuple[Policy, ...]
    options: tuple[Option, ...] = ()
    skipped_suites: Mapping[str, str] = field(default_factory=dict)
    targets: Mapping[str, str] = field(default_factory=dict)
    log_output: bool = False
    assert_source: str = ""
    contract: str = ""
    required: Mapping[str, str] = field(default_factory=dict)

    @property
    def policy_keys(self) -> tuple[str, ...]:
        """The keys ``policies=`` accepts: the kind's policies, then :data:`BEHAVIOURS`."""
        return (*(p.key for p in self.policies), *BEHAVIOURS)

    def policy(self, key: str) -> Policy:
        """The policy called ``key``.

        Raises
        ------
        KeyError
            For a key the kind does not have.
        """
        for found in self.policies:
            if found.key == key:
                return found
        raise KeyError(key)

    def option(self, name: str) -> Option | None:
        """The option called ``name``, or ``None``."""
        return next((o for o in self.options if o.name == name), None)


# --- the row kinds: softmax along the last axis ----------------------------------------------

_ROWS = "softmax_dispersion.testing.rows"
_TARGETS = "softmax_dispersion.testing.targets"
_ROW_SUITES = ("random", "families", "bad_inputs", "masks", "shapes")
_ROW_PROPERTIES = (
    "accuracy",
    "row_sum",
    "shift_invariance",
    "permutation",
    "t1_bound",
    "batch_independence",
    "masked_entries",
    "shape_dtype",
)


def _row_policies(zero: str) -> tuple[Policy, ...]:
    """The policies of an unmasked row kind; ``zero`` is ``"zeros"`` or ``"-inf"`` (log)."""
    return (
        Policy(
            "+inf entry",
            "one +inf among finite logits (the limit is one-hot)",
            ("NaN", "NaN in part", zero, "uniform", "one-hot (the limit)", "the limit", "raises"),
        ),
        Policy(
            "all -inf row",
            "a fully masked row written with −inf",
            ("NaN", "NaN in part", zero, "uniform", "raises"),
        ),
        Policy(
            "finfo.min row",
            "a row of only finfo.min (a fully masked row written with the sentinel), at the "
            "lengths where a scale β > 1 makes β·x overflow",
            ("uniform", "ones", "raises"),
            finite=True,
        ),
        Policy(
            "NaN in a row",
            "a NaN logit among finite ones",
            ("NaN", "NaN in part", zero, "uniform", "the limit", "raises"),
        ),
        Policy(
            "NaN in a masked position",
            "a NaN beside a −inf",
            ("NaN", "NaN in part", zero, "uniform", "the limit", "raises"),
        ),
    )


_ANY = ("NaN", "NaN in part", "zeros", "uniform", "one-hot (the limit)", "the limit", "raises")
_MASKED_POLICIES = (
    Policy(
        "fully masked row",
        "mask all False",
        ("NaN", "NaN in part", "zeros", "uniform", "raises"),
    ),
    Policy(
        "NaN under the mask",
        "a NaN where the mask is False",
        ("the mask wins", "NaN", "NaN in part", "raises"),
    ),
    Policy(
        "+inf under the mask",
        "a +inf where the mask is False",
        ("the mask wins", "NaN", "NaN in part", "one-hot (the limit)", "the limit", "raises"),
    ),
    Policy("+inf entry", "one +inf among finite visible logits", _ANY),
    Policy("NaN in a row", "a visible NaN logit", _ANY),
)
_BUILT_INS = {
    "numpy": f"{_TARGETS}:numpy_target",
    "scipy": f"{_TARGETS}:scipy_target",
    "torch": f"{_TARGETS}:torch_target",
    "jax": f"{_TARGETS}:jax_target",
}
_ASSERT = "from softmax_dispersion.testing import assert_softmax_close\n"
_ROW_CONTRACT = "it must normalise over the last axis and keep the shape"


def _register(*kinds: Kind) -> dict[str, Kind]:
    names = [k.name for k in kinds]
    if len(set(names)) != len(names):  # pragma: no cover - a programming error
        raise ValueError(f"kind names must be unique: {names}")
    return {k.name: k for k in kinds}


KINDS: dict[str, Kind] = _register(
    Kind(
        name="softmax",
        summary="softmax along the last axis",
        call="fn(x)",
        arguments=("x",),
        claim="T12",
        engine=f"{_ROWS}:SOFTMAX",
        suites=_ROW_SUITES,
        properties=_ROW_PROPERTIES,
        contract=_ROW_CONTRACT,
        policies=_row_policies("zeros"),
        targets=_BUILT_INS,
        assert_source=_ASSERT + "assert_softmax_close({call}, x)",
    ),
    Kind(
        name="log_softmax",
        summary="log-softmax along the last axis",
        call="fn(x)",
        arguments=("x",),
        claim="T12",
        engine=f"{_ROWS}:LOG_SOFTMAX",
        suites=_ROW_SUITES,
        properties=_ROW_PROPERTIES,
        contract=_ROW_CONTRACT,
        policies=_row_policies("-inf"),
        targets=_BUILT_INS,
        log_output=True,
        assert_source=_ASSERT + "assert_softmax_close({call}, x, log=True)",
    ),
    Kind(
        name="adaptive_temperature",
        summary="the paper's adaptive temperature: softmax(β(H)·x), β from the entropy H",
        call="fn(x)",
        arguments=("x",),
        claim="T12",
        engine=f"{_ROWS}:ADAPTIVE_TEMPERATURE",
        suites=_ROW_SUITES,
        properties=_ROW_PROPERTIES,
        contract=_ROW_CONTRACT,
        policies=_row_policies("zeros"),
    ),
    Kind(
        name="ssmax",
        summary="length-scaled softmax (SSMax): softmax(s·log(n)·x)",
        call="fn(x)",
        arguments=("x",),
        claim="T12",
        engine=f"{_ROWS}:SSMAX",
        suites=tuple(s for s in _ROW_SUITES if s != "masks"),
        properties=_ROW_PROPERTIES,
        contract=_ROW_CONTRACT,
        policies=_row_policies("zeros"),
        options=(Option("s", "scale s > 0 of SSMax (β = s·log n)"),),
        skipped_suites={"masks": "its n is ambiguous under masks"},
    ),
    Kind(
        name="masked_softmax",
        summary="softmax over the entries where a boolean mask is True (jax's where=)",
        call="fn(x, mask)",
        arguments=("x", "mask"),
        claim="T12",
        engine=f"{_ROWS}:MASKED_SOFTMAX",
        suites=_ROW_SUITES,
        properties=_ROW_PROPERTIES,
        contract=_ROW_CONTRACT,
        policies=_MASKED_POLICIES,
        targets={k: v for k, v in _BUILT_INS.items() if k != "scipy"},
        assert_source=_ASSERT + "assert_softmax_close({call}, x, mask=mask)",
    ),
)
"""The kinds, by name, in the order lists show them."""

# --- attention and the backward passes (T14, T15) ------------------------------------------

_ATTENTION_TARGETS = "softmax_dispersion.testing.attention_targets"
# A backward pass that writes into g, or attention that writes into q, k or v, corrupts
# the values autograd saved for later: an error by default, not a named choice.
_KEEP_INPUTS = {"input": "kept"}
KINDS.update(
    _register(
        Kind(
            name="attention",
            summary="scaled dot-product attention softmax(q kᵀ·scale + mask) v, torch's SDPA "
            "semantics",
            call="fn(q, k, v, attn_mask=None, is_causal=False, scale=None)",
            arguments=("q", "k", "v"),
            claim="T14",
            engine="softmax_dispersion.testing.attention:ATTENTION",
            suites=("random", "long", "masks", "large_scores", "scales", "tiles", "shapes"),
            properties=("accuracy", "permutation", "batch_independence", "shape_dtype"),
            policies=(
                Policy(
                    "fully masked row",
                    "a query whose every key is masked out (a boolean mask all False)",
                    ("NaN", "NaN in part", "zeros", "uniform", "raises"),
                ),
                Policy(
                    "finfo.min row",
                    "a float mask of finfo.min on every key of a row (an input, not a mask)",
                    ("exact", "rounded scores", "raises"),
                    finite=True,
                ),
            ),
            required=_KEEP_INPUTS,
            targets={
                "numpy": f"{_ATTENTION_TARGETS}:numpy_attention_target",
                "torch": f"{_ATTENTION_TARGETS}:torch_attention_target",
                "jax": f"{_ATTENTION_TARGETS}:jax_attention_target",
            },
        ),
        *(
            Kind(
                name=name,
                summary=summary,
                call="fn(x, g)",
                arguments=("x", "g"),
                claim="T15",
                engine=f"softmax_dispersion.testing.vjp:{engine}",
                suites=("random", "long", "neg_inf", "cancellation", "shapes"),
                properties=("accuracy", "permutation", "batch_independence", "shape_dtype"),
                policies=(
                    Policy(
                        "all -inf row",
                        "a row of only −inf (no weight is defined)",
                        names,
                    ),
                ),
                required=_KEEP_INPUTS,
                targets={
                    "numpy": f"{_ATTENTION_TARGETS}:numpy_vjp_target",
                    "torch": f"{_ATTENTION_TARGETS}:torch_vjp_target",
                    "jax": f"{_ATTENTION_TARGETS}:jax_vjp_target",
                },
            )
            for name, summary, engine, names in (
                (
                    "softmax_vjp",
                    "the softmax VJP (backward pass) p ⊙ (g − ⟨g, p⟩), p = softmax(x)",
                    "SOFTMAX_VJP",
                    ("NaN", "NaN in part", "zeros", "raises"),
                ),
                (
                    "log_softmax_vjp",
                    "the log-softmax VJP (backward pass) g − p·Σg, p = softmax(x)",
                    "LOG_SOFTMAX_VJP",
                    ("NaN", "NaN in part", "zeros", "g", "raises"),
                ),
            )
        ),
    )
)

KIND_NAMES: tuple[str, ...] = tuple(KINDS)
"""The names of the kinds."""


def kind(name: str) -> Kind:
    """The kind called ``name``.

    Raises
    ------
    ValueError
        For an unknown name (the message lists the known ones).

    Examples
    --------
    >>> kind("log_softmax").log_output
    True
    """
    if not isinstance(name, str) or name not in KINDS:
        raise ValueError(f"unknown kind {name!r}; known: {', '.join(KINDS)}")
    return KINDS[name]


def builtin_targets() -> tuple[str, ...]:
    """Every built-in target word of any kind, in :data:`TARGET_LIBRARIES` order.

    Examples
    --------
    >>> builtin_targets()
    ('numpy', 'scipy', 'torch', 'jax')
    """
    used = {word for k in KINDS.values() for word in k.targets}
    return tuple(word for word in TARGET_LIBRARIES if word in used)


def option_names() -> tuple[str, ...]:
    """The names of every kind's options (each once), for the CLI and the API."""
    return tuple(dict.fromkeys(o.name for k in KINDS.values() for o in k.options))


def describe_options(name: str) -> tuple[Option, list[str]]:
    """The first option called ``name`` and the kinds that take it (for help texts)."""
    users = [k.name for k in KINDS.values() if k.option(name) is not None]
    first = next(k.option(name) for k in KINDS.values() if k.option(name) is not None)
    assert first is not None
    return first, users
