"""``check_softmax``: run the oracle's property battery against a callable of any kind.

Three steps, one function each:

1. :func:`plan_check` reads and validates every argument (one clear ``ValueError``
   naming the argument: an unknown kind, dtype, suite or policy, an empty selection, a
   missing option of the kind) into a :class:`Plan`;
2. :func:`run_dtype` runs one dtype: the kind's engine builds and evaluates its cases
   (:mod:`~softmax_dispersion.testing.engine`), every property of the kind
   (:data:`~softmax_dispersion.testing.properties.PROPERTIES`) judges them, and the
   named behaviours are observed (:func:`named_behaviours`);
3. :func:`check_softmax` runs the plan over its dtypes and assembles the
   :class:`~softmax_dispersion.testing.battery_report.Report`.

The *named behaviours* are choices, not errors, and fail only when the caller requires
one (``policies=``):

* each kind's policies (:attr:`~softmax_dispersion.testing.kinds.Kind.policies`): the
  outputs on non-finite rows (``+inf``, a row of only ``−inf``, NaN, NaN among masked
  entries; for the masked kind a fully masked row and non-finite values under the mask),
  named ``NaN``, ``zeros``, ``uniform``, ``one-hot (the limit)``, ...; an output that is
  none of the names is a wrong answer (the ``policy`` property fails);
* ``subnormals``: ``flushed`` (an output that should be a subnormal of float32, float64
  or bfloat16 came out 0: flush-to-zero modes, XLA on CPU) or ``kept``.  In float16 a
  flushed subnormal is a real loss (its smallest normal is 6.1e-5) and an accuracy
  failure;
* ``input``: ``kept`` or ``modified`` (the function wrote into its argument).  Every
  call gets a fresh copy, and the reference is built from the battery's own, so an
  in-place implementation is judged on its values, and the modification is reported
  as its own finding.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from softmax_dispersion.testing.adapters import LIBRARY_DTYPES, Adapter, adapter
from softmax_dispersion.testing.battery_report import PropertyResult, Report, ulps_text
from softmax_dispersion.testing.calls import (
    Caller,
    SoftmaxCallError,
    display_name,
    import_source,
)
from softmax_dispersion.testing.engine import PolicyOutcome, Session, load_engine
from softmax_dispersion.testing.kinds import (
    BEHAVIOURS,
    KINDS,
    OUTPUT_NAMES,
    Kind,
)
from softmax_dispersion.testing.kinds import (
    kind as find_kind,
)
from softmax_dispersion.testing.properties import PROPERTIES, Context, Property, Tally
from softmax_dispersion.testing.rows import (
    ALONE_LENGTHS,
    PADDED_LENGTHS,
    UNPADDED_LENGTHS,
)
from softmax_dispersion.testing.tolerance import Tolerance

__all__ = [
    "ALONE_LENGTHS",
    "BEHAVIOURS",
    "KINDS",
    "LIBRARY_DTYPES",
    "PADDED_LENGTHS",
    "POLICY_NAMES",
    "Plan",
    "SoftmaxCallError",
    "check_softmax",
    "expected_output",
    "named_behaviours",
    "plan_check",
    "policy_name",
    "run_dtype",
]

F64 = npt.NDArray[np.float64]

POLICY_NAMES = OUTPUT_NAMES
"""The names an output on a policy input may have (see :mod:`~softmax_dispersion.testing.kinds`)."""

_BY_NAME: dict[str, Property] = {prop.name: prop for prop in PROPERTIES}


def policy_name(observed: str) -> str:
    """The name of an observed policy output (``"NaN in part: [..]"`` → ``"NaN in part"``).

    Examples
    --------
    >>> policy_name("raises ValueError"), policy_name("[0.3, 0.3, 0.3, 0.3]")
    ('raises', '')
    """
    head = observed.split(":", 1)[0]
    if head.startswith("raises "):
        return "raises"
    return head if head in POLICY_NAMES else ""


# --- 1. the plan -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """A validated check: what to call, on what, and what to require.

    Attributes
    ----------
    fn : callable
        The implementation.
    kind : Kind
        Its kind.
    library : Adapter
        The array library it takes.
    dtypes : tuple of str
        The dtypes checked, in order.
    suites : tuple of str
        The suites run.
    seed : int
        Seed of the random suites and variants.
    tolerance : Tolerance
        The accuracy model.
    required : dict of str to str
        Named behaviours to require.
    options : dict
        The kind's options (``{"s": 0.5}``).
    notes : tuple of str
        Findings of the planning (a suite the kind skips).
    """

    fn: Callable[..., Any]
    kind: Kind
    library: Adapter
    dtypes: tuple[str, ...]
    suites: tuple[str, ...]
    seed: int
    tolerance: Tolerance
    required: dict[str, str] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def _names(argument: str, given: Iterable[str] | str | None, default: Iterable[str]) -> list[str]:
    """A selection of names: one name is a list of one; an empty one is an error."""
    if given is None:
        return list(default)
    chosen = [given] if isinstance(given, str) else list(given)
    if not chosen:
        raise ValueError(
            f"{argument} is empty: name at least one of {', '.join(default)} "
            f"(or leave it out for all of them)"
        )
    return chosen


def _options(kind: Kind, given: Mapping[str, object]) -> dict[str, Any]:
    """The kind's options, validated; an option of another kind is an error."""
    chosen = {name: value for name, value in given.items() if value is not None}
    options: dict[str, Any] = {}
    for name, value in chosen.items():
        option = kind.option(name)
        if option is None:
            users = [k.name for k in KINDS.values() if k.option(name) is not None]
            if users:
                raise ValueError(
                    f"{name} is only used with kind={' or '.join(map(repr, users))}, "
                    f"not {kind.name!r}"
                )
            raise TypeError(f"check_softmax() got an unexpected keyword argument {name!r}")
        options[name] = option.read(name, value)
    for option in kind.options:
        if option.required and option.name not in options:
            raise ValueError(f"kind={kind.name!r} needs the {option.help}")
    return options


def _required(kind: Kind, policies: Mapping[str, str] | None) -> dict[str, str]:
    given = dict(policies or {})
    for key, value in given.items():
        if key not in kind.policy_keys:
            raise ValueError(f"unknown policy {key!r}; known: {', '.join(kind.policy_keys)}")
        if key in BEHAVIOURS:
            if value not in BEHAVIOURS[key]:
                raise ValueError(
                    f"policy {key!r} is one of {', '.join(BEHAVIOURS[key])}, not {value!r}"
                )
            continue
        policy = kind.policy(key)
        if not isinstance(value, str) or not policy.accepts(value):
            raise ValueError(
                f"policy {key!r} is one of {', '.join(policy.names)} ('raises TypeName' for "
                f"an exception), not {value!r}"
            )
    # the kind's defaults (an input kept by a backward pass), each overridden by the caller
    return dict(kind.required) | given


def plan_check(
    fn: Callable[..., Any],
    *,
    kind: str = "softmax",
    library: str = "numpy",
    dtypes: Iterable[str] | str | None = None,
    suites: Iterable[str] | str | None = None,
    seed: int = 0,
    tolerance: object = None,
    policies: Mapping[str, str] | None = None,
    **options: object,
) -> Plan:
    """Validate the arguments of :func:`check_softmax` into a :class:`Plan`.

    Raises
    ------
    ValueError
        For an unknown kind, library, dtype, suite or policy, an empty selection of
        dtypes or suites, or an option the kind needs and lacks (or does not take).

    Examples
    --------
    >>> plan = plan_check(print, kind="ssmax", s=0.5, dtypes="float32")
    >>> plan.dtypes, plan.options, "masks" in plan.suites
    (('float32',), {'s': 0.5}, False)
    """
    found = find_kind(kind)
    kind_options = _options(found, options)
    library_adapter = adapter(library)
    tol = Tolerance.coerce(tolerance)
    chosen = _names("dtypes", dtypes, library_adapter.dtypes)
    for dtype in chosen:
        if dtype not in library_adapter.dtypes:
            known = ", ".join(library_adapter.dtypes)
            raise ValueError(f"unknown dtype {dtype!r} for {library}; known: {known}")
    engine = load_engine(found)
    known_suites = list(engine.suites())
    suite_names = _names("suites", suites, found.suites)
    unknown = [name for name in suite_names if name not in known_suites]
    if unknown:
        raise ValueError(f"unknown suite(s) {', '.join(unknown)}; known: {', '.join(found.suites)}")
    notes = []
    skipped = [name for name in suite_names if name in found.skipped_suites]
    for name in skipped:
        notes.append(f"kind {found.name!r} skips the {name} suite ({found.skipped_suites[name]})")
    suite_names = [name for name in suite_names if name not in found.skipped_suites]
    if not suite_names:
        reasons = "; ".join(f"{n}: {found.skipped_suites[n]}" for n in skipped)
        raise ValueError(
            f"kind={found.name!r} skips the {', '.join(skipped)} suite ({reasons}): "
            "choose another suite"
        )
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    return Plan(
        fn=fn,
        kind=found,
        library=library_adapter,
        dtypes=tuple(dict.fromkeys(chosen)),
        suites=tuple(dict.fromkeys(suite_names)),
        seed=seed,
        tolerance=tol,
        required=_required(found, policies),
        options=kind_options,
        notes=tuple(notes),
    )


# --- 2. one dtype ----------------------------------------------------------------------------


@dataclass
class DtypeOutcome:
    """What one dtype of a check found.

    Attributes
    ----------
    results : list of PropertyResult
        One per property that checked anything, then ``fresh_output`` and any
        ``policy`` failures (outputs that no policy names).
    observed : dict of str to str
        The named behaviours observed (policy keys, ``subnormals``, ``input``).
    notes : set of str
        Findings for the report.
    unnamed : set of str
        The policies whose output no name fits (failed whatever was required).
    """

    results: list[PropertyResult]
    observed: dict[str, str]
    notes: set[str]
    unnamed: set[str] = field(default_factory=set)


def _fresh_output(call: Caller, dtype: str) -> PropertyResult:
    """``fresh_output``: no output changed when the function was called again."""
    failed = bool(call.overwritten)
    return PropertyResult(
        name="fresh_output",
        dtype=dtype,
        cases=call.calls,
        failures=int(failed),
        max_ulp=0.0,
        message=call.overwritten if failed else "ok",
        hint=(
            "the function returns a buffer that its next call of the same shape overwrites "
            "(an internal workspace handed to the caller): return a new array"
            if failed
            else ""
        ),
    )


def _unnamed_failure(kind: Kind, outcome: PolicyOutcome, dtype: str) -> PropertyResult:
    """A ``policy`` failure: the output on a policy input is none of its names."""
    policy = kind.policy(outcome.key)
    worst = outcome.worst
    return PropertyResult(
        name="policy",
        dtype=dtype,
        cases=1,
        failures=1,
        max_ulp=0.0,
        message=(
            f"1/1 failed; {outcome.key}: output is none of {'/'.join(policy.names)}: "
            f"{outcome.observed}"
        ),
        worst=worst,
        hint=(
            f"a finite input ({policy.question}): its output must be one of the accepted "
            f"answers ({'/'.join(n for n in policy.names if n != 'raises')}) within the "
            "tolerance, and this finite output is none of them: a wrong answer"
            if policy.finite
            else "an output on a non-finite or fully masked row must be a named policy "
            "(NaN, zeros, uniform, the limit, ...): this one is a wrong answer"
        ),
    )


def named_behaviours(
    session: Session, outcomes: Iterable[PolicyOutcome]
) -> tuple[dict[str, str], dict[str, PropertyResult]]:
    """The behaviours observed in a session, and the outputs that no policy names.

    Returns
    -------
    observed : dict of str to str
        Each policy's observed name (a policy with several inputs: the common name, or
        each input's), then ``subnormals`` and ``input``.
    failures : dict of str to PropertyResult
        A ``policy`` failure for each policy whose output is none of its names.
    """
    kind = session.kind
    by_key: dict[str, list[PolicyOutcome]] = {}
    for outcome in outcomes:
        by_key.setdefault(outcome.key, []).append(outcome)
    observed: dict[str, str] = {}
    failures: dict[str, PropertyResult] = {}
    for key, found in by_key.items():
        names = list(dict.fromkeys(o.observed for o in found))
        if len(names) == 1:
            observed[key] = names[0]
        else:
            observed[key] = "; ".join(f"{o.label}: {o.observed}" for o in found)
        policy = kind.policy(key)
        # A non-finite output on a finite input fails accuracy (run_dtype), not policy.
        wrong = [
            o
            for o in found
            if not policy.accepts(o.observed) and not (policy.finite and o.non_finite)
        ]
        if wrong:
            failures[key] = _unnamed_failure(kind, wrong[0], session.dtype)
    seen = session.context.subnormals
    observed["subnormals"] = (
        "flushed" if "flushed" in seen else "kept" if "kept" in seen else "not exercised"
    )
    observed["input"] = "modified" if session.call.modified else "kept"
    return observed, failures


def _lenient_note(session: Session) -> str:
    """The note of a pass that relied on an allowance only the log-sum-exp forms need."""
    found = session.context.lenient
    worst = max(found, key=lambda item: item.error_ulps / max(item.strict_ulps, 1e-300))
    return (
        f"{session.dtype}: accuracy passed {len(found)} case(s) only through the allowance "
        "that the log-sum-exp, log-add-exp or scale-before-shift formulations need "
        f"(worst {worst.label}: {ulps_text(worst.error_ulps)}, allowed "
        f"{ulps_text(worst.allowed_ulps)}; "
        f"a max-shifted formulation {worst.strict_ulps:.3g}): tolerance='strict' fails it"
    )


def _finite_input(kind: Kind, outcome: PolicyOutcome, tally: Tally) -> None:
    """Count a policy input that is finite (a row of ``finfo.min``) as an accuracy case.

    Its exact answer is finite, so a NaN or infinite output is a wrong answer, never a
    named behaviour: ``softmax(β·x)`` written literally overflows there once ``β > 1``.
    """
    if not kind.policy(outcome.key).finite or outcome.worst is None:
        return
    worst = outcome.worst
    where = f"{outcome.key} ({outcome.label})" if outcome.label else outcome.key
    message = (
        f"{where}: a finite input gave {outcome.observed} (actual {worst.actual!r}); "
        "a NaN or infinity for a finite input is an accuracy failure"
    )
    hint = (
        outcome.hint
        or "a row of finfo.min is a finite input (its answer is uniform): NaN there comes "
        "from scaling before the max shift (β·x overflows: subtract the maximum first, "
        "then scale) or from treating the sentinel as a mask"
        if outcome.non_finite
        else ""
    )
    failed = int(outcome.non_finite)
    score = math.inf if failed else 0.0
    tally.add(1, failed, 0.0, score, lambda: (worst, message, hint))


def run_dtype(plan: Plan, dtype: str) -> DtypeOutcome:
    """Run the battery of ``plan`` in one dtype."""
    kind = plan.kind
    engine = load_engine(kind)
    session = Session(
        kind=kind,
        dtype=dtype,
        library=plan.library,
        tolerance=plan.tolerance,
        seed=plan.seed,
        options=plan.options,
        call=Caller(plan.fn, plan.library, dtype, kind.contract),
        context=Context(
            kind=kind.name,
            dtype=dtype,
            flush_allowed=plan.required.get("subnormals") != "kept",
            log=kind.log_output,
        ),
    )
    properties = [_BY_NAME[name] for name in kind.properties]
    tallies = {prop.name: Tally() for prop in properties}
    for run in engine.evaluate(engine.cases(session, plan.suites), session):
        for prop in properties:
            prop.check(run, session.context, tallies[prop.name])
    outcomes = list(engine.policies(session))
    if "accuracy" in tallies:
        for outcome in outcomes:
            _finite_input(kind, outcome, tallies["accuracy"])
    results = [tally.result(name, dtype) for name, tally in tallies.items() if tally.cases]
    observed, failures = named_behaviours(session, outcomes)
    results.append(_fresh_output(session.call, dtype))
    results.extend(failures.values())
    notes = set(session.notes)
    if session.context.lenient:
        notes.add(_lenient_note(session))
    if session.call.modified:
        notes.add(f"the function modified its input ({dtype}, {session.call.modified})")
    if session.call.hint:
        notes.add(session.call.hint)
    for failure in session.unsupported:
        notes.add(
            f"not checked on the {failure.split(':')[0]} input: it raised or returned "
            "another shape (only (batch, n) is required)"
        )
    return DtypeOutcome(results, observed, notes, set(failures))


# --- 3. the whole check ----------------------------------------------------------------------


def _merge(observed: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    """One value per behaviour: the common one, or each dtype's."""
    merged = {}
    for key, by_dtype in observed.items():
        values = set(by_dtype.values())
        if len(values) == 1:
            merged[key] = values.pop()
        else:
            merged[key] = "; ".join(f"{d}: {v}" for d, v in by_dtype.items())
    return merged


def _requirements(
    required: Mapping[str, str],
    observed: Mapping[str, Mapping[str, str]],
    unnamed: set[tuple[str, str]],
) -> list[PropertyResult]:
    """One ``policy`` result per required behaviour and dtype."""
    results = []
    for key, wanted in required.items():
        for dtype, seen in observed.get(key, {}).items():
            if (key, dtype) in unnamed:
                continue  # failed already, whatever was required
            exempt = key == "subnormals" and seen == "not exercised"
            failed = seen != wanted and policy_name(seen) != wanted and not exempt
            results.append(
                PropertyResult(
                    name="policy",
                    dtype=dtype,
                    cases=1,
                    failures=int(failed),
                    max_ulp=0.0,
                    message=f"1/1 failed; {key} → {seen}, required {wanted}" if failed else "ok",
                    hint=_INPUT_HINT if failed and key == "input" and seen == "modified" else "",
                )
            )
    return results


_INPUT_HINT = (
    "the function wrote into one of its arguments or returned one as its output (the "
    "notes say which call): a backward pass that writes into g, or attention into q, k "
    "or v, corrupts what autograd saved; return a new array (policies={'input': "
    "'modified'} accepts an in-place function)"
)


def _library_notes(plan: Plan) -> set[str]:
    if plan.library.name != "jax":
        return set()
    notes = {
        "jax: every dtype judged as computed, float64 with 64-bit types enabled for the "
        "check (the caller's jax_enable_x64 restored after)"
    }
    engine: Any = load_engine(plan.kind)
    if getattr(getattr(engine, "spec", None), "pads", False):
        notes.add(
            "jax: rows padded with masked entries to lengths "
            f"{', '.join(map(str, PADDED_LENGTHS))} ({', '.join(map(str, UNPADDED_LENGTHS))} "
            "kept), one compilation per length and dtype"
        )
    return notes


def check_softmax(
    fn: Callable[..., Any],
    *,
    kind: str = "softmax",
    library: str = "numpy",
    dtypes: Iterable[str] | str | None = None,
    suites: Iterable[str] | str | None = None,
    seed: int = 0,
    tolerance: object = None,
    policies: Mapping[str, str] | None = None,
    **options: object,
) -> Report:
    """Run the property battery against ``fn`` and report every property per dtype.

    Parameters
    ----------
    fn
        The implementation, called as the kind says
        (:attr:`~softmax_dispersion.testing.kinds.Kind.call`).  Row kinds: one array of
        ``library``'s type, shape ``(batch, n)``, normalised over the last axis, same
        shape and dtype out (a square ``(16, 16)`` input among them; one 3-D input
        ``(2, 3, 7)`` too, checked when ``fn`` takes it and named in the notes when it
        does not); ``fn(x, mask)`` for ``kind="masked_softmax"`` (``mask`` boolean, True
        where an entry takes part).
    kind
        A name in :data:`~softmax_dispersion.testing.kinds.KINDS`: ``"softmax"``,
        ``"log_softmax"``, ``"adaptive_temperature"`` (the paper's rule,
        :mod:`~softmax_dispersion.theory.adaptive_temperature`), ``"ssmax"``
        (``softmax(s·log(n)·x)``; needs ``s``) or ``"masked_softmax"``.
    library
        ``"numpy"``, ``"torch"`` or ``"jax"`` (imported only when named here; jax runs
        with 64-bit types enabled for the check, the caller's setting restored after).
    dtypes
        Dtype names (or one name); all float dtypes of the library by default.  An
        empty selection is an error.
    suites
        Suite names of the kind (row kinds:
        :data:`~softmax_dispersion.testing.suites.SUITES`); the kind's by default.  An
        empty selection is an error.
    seed
        Seed of the random suite, the permutations and the shifted cases.
    tolerance
        The accuracy model: ``None`` or ``"recursive"`` (T12 with ``γ_{n−1}``: any
        summation order, every standard formulation), ``"strict"`` (the tighter
        opt-in: any summation order, max-shifted forms only), a number of ULPs or a
        :class:`~softmax_dispersion.testing.Tolerance`.
    policies
        Named behaviours to *require*, e.g. ``{"all -inf row": "zeros", "subnormals":
        "kept", "input": "kept"}``: keys and values as in :attr:`Report.policies`.  A
        different observed behaviour is then a failure of the ``policy`` property;
        without this, behaviours are only reported.
    **options
        The kind's own options (:attr:`~softmax_dispersion.testing.kinds.Kind.options`):
        ``s`` (SSMax's scale, ``> 0``) for ``kind="ssmax"``.  ``None`` is the same as
        leaving one out.

    Returns
    -------
    Report
        Per property and dtype: cases, failures, max ULP error, the worst input; the
        named behaviours observed.

    Raises
    ------
    ValueError
        For an unknown kind, library, dtype, suite or policy, an empty selection, or an
        option the kind needs and lacks.
    SoftmaxCallError
        When ``fn`` raises on a finite input or returns something of the wrong shape.

    Notes
    -----
    The properties are :data:`~softmax_dispersion.testing.properties.PROPERTIES`; the
    tolerance of each is :func:`~softmax_dispersion.testing.tolerance.allowed_error`.

    Examples
    --------
    >>> import numpy as np
    >>> def softmax(x):
    ...     e = np.exp(x - x.max(axis=-1, keepdims=True))
    ...     return e / e.sum(axis=-1, keepdims=True)
    >>> report = check_softmax(softmax, dtypes=["float64"], suites=["bad_inputs"])
    >>> report.passed, report.policies["all -inf row"], report.policies["input"]
    (True, 'NaN', 'kept')
    """
    start = time.perf_counter()
    plan = plan_check(
        fn,
        kind=kind,
        library=library,
        dtypes=dtypes,
        suites=suites,
        seed=seed,
        tolerance=tolerance,
        policies=policies,
        **options,
    )
    report = Report(
        kind=plan.kind.name,
        library=plan.library.name,
        implementation=display_name(fn),
        source=import_source(fn),
        tolerance=plan.tolerance.label
        if plan.kind.claim == "T12"
        else f"{plan.kind.claim}, its softmax by {plan.tolerance.label}",
    )
    observed: dict[str, dict[str, str]] = {}
    unnamed: set[tuple[str, str]] = set()
    notes = set(plan.notes) | _library_notes(plan)
    with plan.library.session():
        for dtype in plan.dtypes:
            outcome = run_dtype(plan, dtype)
            report.results.extend(outcome.results)
            notes |= outcome.notes
            for key, value in outcome.observed.items():
                observed.setdefault(key, {})[dtype] = value
            unnamed |= {(key, dtype) for key in outcome.unnamed}
    report.policies = _merge(observed)
    report.notes = sorted(notes)
    report.results.extend(_requirements(plan.required, observed, unnamed))
    report.seconds = time.perf_counter() - start
    return report


def expected_output(
    x: npt.ArrayLike,
    kind: str = "softmax",
    *,
    dtype: str = "float64",
    mask: npt.ArrayLike | None = None,
    **options: object,
) -> F64:
    """The certified output of ``kind`` on the rows of ``x``, as the battery expects it.

    Examples
    --------
    >>> expected_output([[0.0, 0.0, 9.0]], "masked_softmax", mask=[[True, True, False]]).tolist()
    [[0.5, 0.5, 0.0]]
    """
    found = find_kind(kind)
    arrays: dict[str, Any] = {"x": x} | ({} if mask is None else {"mask": mask})
    return load_engine(found).expected(arrays, dtype, _options(found, options))
