"""The battery's properties: one object per property, each with its check.

:data:`PROPERTIES` is the registry (in report order); a new property is one new
:class:`Property` here, with its test.  Every check reads a :class:`CaseRun` (one case
of the suites, evaluated: the outputs of the implementation on the case, on its shifted
and permuted copies and on rows alone, with the certified references and allowances of
each) and adds what it finds to its :class:`Tally`.

``accuracy``
    Every element within :func:`~softmax_dispersion.testing.tolerance.allowed_error` of
    the certified, correctly rounded reference (T12's bounds).
``row_sum``
    ``|Σ_i p̂_i − 1| <= Σ_i allowed_i + n·2**-52`` (log-softmax: ``Σ_i exp(ℓ̂_i)``
    against ``Σ_i p_i·expm1(allowed_i)``): the derived bound summed over the row.
``shift_invariance``
    The output on ``x + c`` (``c`` in ±64, and 1000 above float16, the shifted logits
    rounded to the dtype) within the tolerance of the reference of those shifted logits:
    code without the max shift overflows here.
``permutation``
    ``f(x[:, π]) == f(x)[:, π]`` within twice the allowance (both sides are each within
    one allowance of the reference; summation order may differ).
``t1_bound``
    T1: every visible coefficient within ``[1/(1+(n−1)c), c/(c+n−1)]``, ``c = exp(δ·β)``
    with the visible entries' count ``n`` and spread ``δ`` and the effective inverse
    temperature ``β``, within the allowance (in log space for log-softmax).
``batch_independence``
    Each of the first two rows of a batch, evaluated alone as shape ``(1, n)``, within
    twice the allowance of the same row in the batch (libraries pick different kernels
    for different batch shapes, and that is not a bug).
``masked_entries``
    Every masked entry (a ``−inf`` logit, or ``mask`` False for the masked kind) comes
    out exactly 0 (log-softmax: ``−inf``), in rows that keep a visible entry.
``shape_dtype``
    The output has the input's dtype (a wrong *shape* raises
    :class:`~softmax_dispersion.testing.SoftmaxCallError`).

Errors are counted in ULPs of the output dtype at the expected value (log-softmax, whose
tolerance is absolute: at ``max(|expected|, 1)``); allowances in the same unit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from softmax_dispersion.numerics.rounding import FORMATS, float_format
from softmax_dispersion.testing.assertions import compare
from softmax_dispersion.testing.battery_report import PropertyResult, Worst, ulps_text
from softmax_dispersion.testing.tolerance import accumulation_format, flushing_is_named

__all__ = ["PROPERTIES", "CaseRun", "Context", "Evaluated", "Lenient", "Property", "Tally"]

F64 = npt.NDArray[np.float64]
Bool = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Evaluated:
    """One batch of outputs of the implementation, with its expectation.

    The first fields are every kind's; the row kinds (softmax along the last axis) fill
    ``logits``, ``probs`` and ``beta`` too, which their own properties read.

    Attributes
    ----------
    label : str
        The case's name and what was done to it (``"random/n8 + 64"``).
    inputs : numpy.ndarray
        The principal input as rows (``x``), exact float64 values of the dtype: what
        a report shows as the worst input.
    out : numpy.ndarray
        The implementation's output as rows (float64 values), 2-D.
    values : numpy.ndarray
        The certified reference, correctly rounded to the dtype, shaped like ``out``.
    allowed : numpy.ndarray
        The absolute allowance of every element (finite, ``>= 0``).
    logits : numpy.ndarray or None
        Row kinds: ``inputs`` with masked entries ``−inf``.
    mask : numpy.ndarray or None
        The boolean mask of a masked call (True where an entry takes part).
    probs : numpy.ndarray or None
        Row kinds: the exact coefficients as float64.
    beta : numpy.ndarray or None
        Row kinds: the effective inverse temperature per row, shape ``(rows, 1)``.
    strict : numpy.ndarray or None
        The allowance of the strict model where the default one was used (to say when
        a pass relied on an allowance only a log-sum-exp formulation needs).
    textbook : numpy.ndarray or None
        The output of a plain two-pass implementation in the same dtype (float32
        accumulation) on the same inputs, for the error ratio of 16-bit checks.
    scale : numpy.ndarray or None
        Where ULPs are counted (a natural scale per element); ``None``: at the
        reference value (log outputs: at ``max(|value|, 1)``).
    arrays : mapping
        Every argument of the call for reproducers, by name (``{"x": ..., "mask":
        ...}``); empty: ``x`` (and ``mask``) from ``inputs`` and ``mask``.
    call : str
        The call for reproducers (``"fn(x, mask)"``); empty: the kind's.
    rebuild : mapping
        Python expressions that rebuild arrays from the suites (``{"x":
        "build_case('random/n1238', 'float32')"}``), for reproducers of long inputs.
    hint : str
        For kinds other than the row kinds: the likely cause of a failure of this
        batch, as its engine recognises it (``""``: none).
    """

    label: str
    inputs: F64
    out: F64
    values: F64
    allowed: F64
    logits: F64 | None = None
    mask: Bool | None = None
    probs: F64 | None = None
    beta: F64 | None = None
    strict: F64 | None = None
    textbook: F64 | None = None
    scale: F64 | None = None
    arrays: Mapping[str, Any] = field(default_factory=dict)
    call: str = ""
    rebuild: Mapping[str, str] = field(default_factory=dict)
    hint: str = ""

    def row_data(self) -> tuple[F64, F64, F64]:
        """``(logits, probs, beta)`` of a row kind (the row properties need them)."""
        assert self.logits is not None and self.probs is not None and self.beta is not None
        return self.logits, self.probs, self.beta


@dataclass(frozen=True)
class CaseRun:
    """One case, evaluated: the case itself and every variant the properties need.

    Attributes
    ----------
    case : object
        The engine's case (it has a ``name``, ``"suite/case"``).
    main : Evaluated
        The case as it is.
    out_dtype : str
        The dtype of the outputs.
    shifted : list of (float, Evaluated)
        Copies with a constant added to the logits (softmax is invariant).
    permuted : (permutation, Evaluated) or None
        A copy with the entries permuted.
    alone : list of (int, numpy.ndarray)
        Rows of ``main`` evaluated alone (batch independence): the row and its output.
    """

    case: Any
    main: Evaluated
    out_dtype: str
    shifted: list[tuple[float, Evaluated]] = field(default_factory=list)
    permuted: tuple[npt.NDArray[np.intp], Evaluated] | None = None
    alone: list[tuple[int, F64]] = field(default_factory=list)


@dataclass(frozen=True)
class Lenient:
    """Elements the default tolerance allowed only through a non-strict formulation."""

    label: str
    error_ulps: float
    strict_ulps: float
    allowed_ulps: float


@dataclass
class Context:
    """What every check of one dtype shares, and the behaviours it observes.

    Attributes
    ----------
    kind, dtype : str
        What is checked.
    flush_allowed : bool
        Whether a flushed subnormal output is a named behaviour (not a failure).
    log : bool
        Outputs are log-probabilities (absolute tolerance; ULPs at ``max(|v|, 1)``).
    subnormals : set of str
        Observed: ``"flushed"``, ``"kept"``.
    lenient : list of Lenient
        Where a pass relied on an allowance only the log-sum-exp (or scale-first)
        formulations need (the strict model's allowance was exceeded).
    """

    kind: str
    dtype: str
    flush_allowed: bool
    log: bool = False
    subnormals: set[str] = field(default_factory=set)
    lenient: list[Lenient] = field(default_factory=list)


@dataclass
class Tally:
    """What one property found for one dtype, across cases."""

    cases: int = 0
    failures: int = 0
    max_ulp: float = 0.0
    worst_key: tuple[bool, float] = (False, -1.0)
    worst: Worst | None = None
    message: str = ""
    hint: str = ""
    textbook_ulp: float | None = None

    def baseline(self, ulps: float) -> None:
        """Keep the largest error of the textbook two-pass softmax on the same cases."""
        ulps = math.inf if math.isnan(ulps) else ulps
        self.textbook_ulp = max(self.textbook_ulp or 0.0, ulps)

    def add(
        self,
        cases: int,
        failures: int,
        max_ulp: float,
        score: float,
        describe: Callable[[], tuple[Worst, str, str]],
    ) -> None:
        """Count ``cases`` and ``failures``; keep the worst by ``(failed, score)``."""
        self.cases += cases
        self.failures += failures
        max_ulp = math.inf if math.isnan(max_ulp) else max_ulp
        self.max_ulp = max(self.max_ulp, max_ulp)
        score = math.inf if math.isnan(score) else score
        key = (failures > 0, score)
        if key > self.worst_key:
            self.worst_key = key
            self.worst, message, hint = describe()
            if failures:
                self.message, self.hint = message, hint

    def result(self, name: str, dtype: str) -> PropertyResult:
        """The tally as a :class:`PropertyResult`."""
        return PropertyResult(
            name=name,
            dtype=dtype,
            cases=self.cases,
            failures=self.failures,
            max_ulp=self.max_ulp,
            message=f"{self.failures}/{self.cases} failed; worst: {self.message}"
            if self.failures
            else "ok",
            worst=self.worst,
            hint=self.hint if self.failures else "",
            textbook_ulp=self.textbook_ulp,
        )


@dataclass(frozen=True)
class Property:
    """A property of the battery: its name, what it says, and its check.

    Attributes
    ----------
    name : str
        The report's name for it.
    summary : str
        One line on what it checks.
    check : callable
        ``check(run, context, tally)``: judge one evaluated case.
    """

    name: str
    summary: str
    check: Callable[[CaseRun, Context, Tally], None]


# --- element-wise judgement shared by the value properties ----------------------------------


def _visible(ev: Evaluated) -> Bool:
    return np.isfinite(ev.row_data()[0])


def _worst(ev: Evaluated, r: int, c: int, **values: Any) -> Worst:
    """The report's record of element ``(r, c)`` of ``ev``."""
    return Worst(
        case=ev.label,
        row=r,
        column=c,
        inputs=ev.inputs,
        mask=ev.mask,
        arrays=dict(ev.arrays),
        call=ev.call,
        rebuild=dict(ev.rebuild),
        **values,
    )


def judge(
    tally: Tally,
    ctx: Context,
    ev: Evaluated,
    actual: F64,
    expected: F64,
    allowed: F64,
    what: str,
    extra: dict[str, Any] | None = None,
    *,
    flush: bool = False,
    unit_at: F64 | None = None,
) -> None:
    """Compare ``actual`` with ``expected`` element by element and add it to ``tally``.

    Errors and allowances are in ULPs at ``expected`` (or at ``unit_at``).

    With ``flush``, a zero where the expected value is a non-zero subnormal of a dtype
    with float32's range (float32, float64, bfloat16), or within its allowance of one, is
    a named behaviour
    (``subnormals: flushed``), not a failure, unless the caller requires gradual
    underflow.
    """
    if unit_at is None:
        unit_at = ev.scale
    result = compare(actual, expected, allowed, ctx.dtype, log=ctx.log, unit_at=unit_at)
    bad = result.bad
    ulps = result.ulps
    if flush and not ctx.log:
        tiny = 2.0 ** float_format(ctx.dtype).emin
        with np.errstate(all="ignore"):
            # A value that may be computed as a subnormal (within its allowance) may be
            # flushed: XLA's bfloat16 softmax flushes outputs a few ulps above FLT_MIN.
            sub = (np.abs(expected) - allowed < tiny) & (expected != 0)
        flushed = bad & sub & (actual == 0)
        if flushed.any():
            ctx.subnormals.add("flushed")
            if ctx.flush_allowed and flushing_is_named(ctx.dtype):
                bad = bad & ~flushed
                # A named flush is no accuracy error: kept out of the max ULP column
                # (a flushed 1e-308 would read as 2e15 ULP of float64's subnormals).
                ulps = np.where(flushed, 0.0, ulps)
        if (sub & ~bad & (actual != 0)).any():
            ctx.subnormals.add("kept")
    bad_rows = bad.any(axis=-1)
    with np.errstate(all="ignore"):
        ratio = np.where(bad, ulps / np.maximum(result.allowed_ulps, 1e-300), 0.0)
        if not bad.any():
            ratio = np.where(np.isfinite(ulps), ulps, 0.0)
    flat = int(np.nanargmax(np.where(np.isnan(ratio), np.inf, ratio))) if ratio.size else 0
    r, c = (int(i) for i in np.unravel_index(flat, ratio.shape)) if ratio.size else (0, 0)
    score = float(ratio[r, c]) if ratio.size else 0.0
    max_ulp = float(np.max(ulps)) if ulps.size else 0.0

    def describe() -> tuple[Worst, str, str]:
        worst = _worst(
            ev,
            r,
            c,
            actual=float(actual[r, c]),
            expected=float(expected[r, c]),
            allowance=float(allowed[r, c]),
            error_ulps=float(ulps[r, c]),
            allowed_ulps=float(result.allowed_ulps[r, c]),
            extra=dict(extra or {}),
        )
        message = (
            f"{int(bad_rows.sum())}/{actual.shape[0]} rows of {ev.label} beyond tolerance; "
            f"worst {ulps_text(worst.error_ulps, 4)} "
            f"(allowed {ulps_text(worst.allowed_ulps, 4)}) at "
            f"({r}, {c}): actual {worst.actual!r}, {what} {worst.expected!r}"
        )
        return worst, message, _value_hint(ctx, ev, actual, expected, r, c)

    tally.add(actual.shape[0], int(bad_rows.sum()), max_ulp, score, describe)


def _rows_failed(
    tally: Tally,
    ev: Evaluated,
    bad: Bool,
    text: Callable[[int], str],
    hint: str = "",
    column: int = 0,
    expected: Callable[[int], float] = lambda r: math.nan,
    actual: Callable[[int], float] = lambda r: math.nan,
    allowance: Callable[[int], float] = lambda r: math.nan,
) -> None:
    failures = int(bad.sum())
    r = int(np.argmax(bad)) if failures else 0

    def describe() -> tuple[Worst, str, str]:
        worst = _worst(
            ev,
            r,
            column,
            actual=actual(r),
            expected=expected(r),
            allowance=allowance(r),
            error_ulps=math.nan,
            allowed_ulps=math.nan,
        )
        return worst, f"{failures}/{bad.shape[0]} rows of {ev.label}: {text(r)}", hint

    tally.add(bad.shape[0], failures, 0.0, float(failures), describe)


# --- hints ----------------------------------------------------------------------------------


def _non_finite_hint(ctx: Context, logits: F64, beta: float, got: F64, want: F64, c: int) -> str:
    """Why a finite row gave NaN or ±inf: overflow, underflow, a narrower format, a tile."""
    fmt = float_format(ctx.dtype)
    visible = np.isfinite(logits)
    shown = logits[visible]
    top, big = float(np.max(shown)), float(np.max(np.abs(shown)))
    if ctx.dtype == "float64" and big > FORMATS["float32"].max_finite:
        return (
            "float64 logits beyond float32's range came out non-finite: computed in float32 "
            "somewhere?"
        )
    if beta > 1 and beta * big > fmt.max_finite / 2:
        return "β·x overflows before the max shift: subtract the maximum first, then scale"
    if ctx.log and np.isneginf(got[c]) and np.isfinite(want[c]):
        return "log of an underflowed softmax: compute x − max − log Σ exp(x − max)"
    if top > math.log(fmt.max_finite) - 1:
        return "exp overflows: subtract the row's maximum before exp"
    tiny = math.log(2.0 ** FORMATS[accumulation_format(ctx.dtype)].emin)
    if top < tiny:
        leading = int(np.argmax(visible))
        if leading >= 32:
            return (
                f"the row starts with {leading} masked entries and its logits lie below "
                f"{tiny:.0f}: a tile with no visible entry left the running maximum finite "
                "(0.0), and exp(x − 0) underflows to 0/0; start the maximum at −inf and skip "
                "empty tiles"
            )
        return (
            f"every exp(x) underflows (the logits lie below {tiny:.0f}): 0/0 without the "
            "max shift; subtract the row's maximum before exp"
        )
    return "a NaN or infinity for a finite input"


def _value_hint(ctx: Context, ev: Evaluated, actual: F64, expected: F64, r: int, c: int) -> str:
    """The likely cause of a wrong value at ``(r, c)``, where one is recognised.

    The order matters: a non-finite output on a finite row is named for what made it
    (overflow, underflow, a narrower format, an empty tile) before anything else, so that
    a float32 bug is not read as a mask bug; masks come next; then the sums.
    """
    got, want = actual[r], expected[r]
    if ev.logits is None:
        return ev.hint
    logits, _, betas = ev.row_data()
    logits = logits[r]
    visible = np.isfinite(logits)
    fmt = float_format(ctx.dtype)
    zero = -np.inf if ctx.log else 0.0
    finite_in = np.isfinite(ev.inputs[r]) | ~visible
    if visible.any() and not np.all(np.isfinite(got[visible])) and np.all(finite_in):
        return _non_finite_hint(ctx, logits, float(betas[r, 0]), got, want, c)
    masked_wrong = ~visible & (got != zero)
    if masked_wrong.any():
        return (
            "masked entries (a −inf logit, or mask False) must come out exactly "
            f"{'−inf' if ctx.log else '0'}; got {float(got[masked_wrong][0])!r}"
            + (
                ": a mask added as a finite bias meets the value under it"
                if ev.mask is not None
                else ""
            )
        )
    if (~visible).any() and np.all(got == zero) and np.any(want != zero):
        return (
            "a row with masked entries came out all "
            f"{'−inf' if ctx.log else 'zeros'}: only fully masked rows are a policy choice"
        )
    if not ctx.log and np.all(got[visible] == 0) and np.max(logits[visible]) <= -5e4:
        return "zeros for a row below −5e4: an online softmax whose running maximum starts finite"
    if not ctx.log and got[c] == 0 and 0 < abs(want[c]) < 2.0**fmt.emin:
        return f"subnormal outputs flushed to zero: in {ctx.dtype} that loses the value"
    if ctx.dtype == "float64" and want[c] != 0:
        relative = abs(float(got[c]) - float(want[c])) / abs(float(want[c]))
        if 2.0**-30 < relative < 2.0**-20:
            return "an error near 2**-24 in float64: computed in float32 somewhere?"
    size = float(np.max(np.abs(logits[visible])))
    spacing = float(np.spacing(np.float64(size).astype(accumulation_format(ctx.dtype))))
    error = abs(float(got[c]) - float(want[c]))
    if size >= 1024 and 0.1 * spacing < error <= 2 * spacing:
        return (
            f"an error of about an ulp of the logits' size (|x| up to {size:.3g}, ulp "
            f"{spacing:.3g}): something is rounded at their magnitude, such as a log-sum-exp "
            "(x − logsumexp(x)) or β·x before the shift; x − max − log Σ exp(x − max) keeps "
            "the digits"
        )
    total = float(np.sum(got[visible] if not ctx.log else np.exp(got[visible])))
    room = float(np.sum(ev.allowed[r])) + got.shape[-1] * 2.0**-52
    off = math.isfinite(total) and abs(total - 1) > room
    if fmt.precision < 24 and off and np.sum(visible) >= 64:
        return (
            f"the row sums to {total:.6g}: a sum held in the 16-bit format (a running total "
            "stalls once its terms drop below half an ulp of it: past 2048 for terms near 1, "
            "past 4096 for tiles of 32 small ones); accumulate 16-bit sums in float32"
        )
    if off:
        return f"the row sums to {total:.6g}: the normaliser is wrong"
    return ""


# --- the checks -----------------------------------------------------------------------------


def _accuracy(run: CaseRun, ctx: Context, tally: Tally) -> None:
    ev = run.main
    judge(tally, ctx, ev, ev.out, ev.values, ev.allowed, "reference", flush=True)
    if ev.strict is not None:
        _lenient(ctx, ev)
    if ev.textbook is not None:
        baseline = compare(ev.textbook, ev.values, ev.allowed, ctx.dtype, log=ctx.log)
        tally.baseline(baseline.max_ulp)


def _lenient(ctx: Context, ev: Evaluated) -> None:
    """Record where the output passed only through an allowance the strict model lacks."""
    assert ev.strict is not None
    result = compare(ev.out, ev.values, ev.allowed, ctx.dtype, log=ctx.log, unit_at=ev.scale)
    strict = compare(ev.out, ev.values, ev.strict, ctx.dtype, log=ctx.log, unit_at=ev.scale)
    relied = ~result.bad & strict.bad
    if not relied.any():
        return
    with np.errstate(all="ignore"):
        ratio = np.where(relied, result.error / np.maximum(ev.strict, 1e-300), 0.0)
    r, c = (int(i) for i in np.unravel_index(int(np.argmax(ratio)), ratio.shape))
    ctx.lenient.append(
        Lenient(
            label=f"{ev.label} ({r}, {c})",
            error_ulps=float(result.ulps[r, c]),
            strict_ulps=float(strict.allowed_ulps[r, c]),
            allowed_ulps=float(result.allowed_ulps[r, c]),
        )
    )


def _row_sum(run: CaseRun, ctx: Context, tally: Tally) -> None:
    ev = run.main
    _, probs, _ = ev.row_data()
    n = ev.out.shape[-1]
    with np.errstate(all="ignore"):
        if ctx.log:
            total = np.sum(np.exp(ev.out), axis=-1)
            spread = np.where(probs > 0, probs * np.expm1(ev.allowed), 0.0)
            room = np.sum(spread, axis=-1) + n * 2.0**-52
        else:
            total = np.sum(ev.out, axis=-1)
            room = np.sum(ev.allowed, axis=-1) + n * 2.0**-52
        bad = ~(np.abs(total - 1) <= room)

    def text(r: int) -> str:
        return f"row {r} sums to {float(total[r])!r} (allowed 1 ± {float(room[r]):.3g})"

    hint = "the normaliser leaves out or adds something (a skipped term, an epsilon, a bias)"
    _rows_failed(
        tally,
        ev,
        bad,
        text,
        hint,
        expected=lambda r: 1.0,
        actual=lambda r: float(total[r]),
        allowance=lambda r: float(room[r]),
    )


def _shift_invariance(run: CaseRun, ctx: Context, tally: Tally) -> None:
    for shift, ev in run.shifted:
        judge(
            tally, ctx, ev, ev.out, ev.values, ev.allowed, f"reference of x + {shift:g}", flush=True
        )


def _permutation(run: CaseRun, ctx: Context, tally: Tally) -> None:
    if run.permuted is None:
        return
    perm, ev = run.permuted
    main = run.main
    judge(
        tally,
        ctx,
        ev,
        ev.out,
        main.out[:, perm],
        2 * main.allowed[:, perm],
        "f(x) permuted",
        {"perm": perm},
    )


def _t1_bound(run: CaseRun, ctx: Context, tally: Tally) -> None:
    from softmax_dispersion.theory.dispersion import dispersion_lower, dispersion_upper

    ev = run.main
    logits, _, betas = ev.row_data()
    visible = _visible(ev)
    count = visible.sum(axis=-1)
    usable = (count >= 1) & np.all(np.isfinite(ev.inputs) | ~visible, axis=-1)
    with np.errstate(all="ignore"):
        top = np.max(np.where(visible, logits, -np.inf), axis=-1)
        low = np.min(np.where(visible, logits, np.inf), axis=-1)
        spread = np.where(usable, top - low, 0.0)
        beta = betas[:, 0]
        theta = np.where(beta > 0, 1.0 / np.where(beta > 0, beta, 1.0), np.inf)
        size = np.maximum(count, 1).astype(np.float64)
        upper = np.asarray(dispersion_upper.numpy(size, spread, theta), dtype=np.float64)
        lower = np.asarray(dispersion_lower.numpy(size, spread, theta), dtype=np.float64)
        upper = (np.where(np.isfinite(upper), upper, 1.0) * (1 + 1e-14))[:, None]
        lower = (np.where(np.isfinite(lower), lower, 0.0) * (1 - 1e-14))[:, None]
        if ctx.log:
            low_b, high_b = np.log(lower), np.log(upper)
        else:
            low_b, high_b = lower, upper
            if ctx.flush_allowed and flushing_is_named(ctx.dtype):
                low_b = np.where(low_b < 2.0 ** float_format(ctx.dtype).emin, 0.0, low_b)
        inside = (ev.out >= low_b - ev.allowed) & (ev.out <= high_b + ev.allowed)
        bad = usable & ~np.all(inside | ~visible, axis=-1)

    def text(r: int) -> str:
        got = ev.out[r][visible[r]]
        return (
            f"row {r} has a coefficient outside T1's [{float(low_b[r, 0]):.4g}, "
            f"{float(high_b[r, 0]):.4g}]: min {float(np.min(got)):.4g}, "
            f"max {float(np.max(got)):.4g}"
        )

    _rows_failed(
        tally, ev, bad, text, "a coefficient T1 forbids: the normaliser or the scale is wrong"
    )


def _batch_independence(run: CaseRun, ctx: Context, tally: Tally) -> None:
    main = run.main

    def row(array: F64 | None, r: int) -> F64 | None:
        return None if array is None else array[r : r + 1]

    for r, alone in run.alone:
        single = replace(
            main,
            label=f"{main.label} row {r} alone",
            out=alone,
            values=main.out[r : r + 1],
            allowed=2 * main.allowed[r : r + 1],
            logits=row(main.logits, r),
            probs=row(main.probs, r),
            beta=row(main.beta, r),
            scale=row(main.scale, r),
            strict=None,
            textbook=None,
        )
        # The batch's value may be NaN: ULPs of the reference (or the natural scale).
        unit = main.values[r : r + 1] if main.scale is None else main.scale[r : r + 1]
        judge(
            tally,
            ctx,
            single,
            alone,
            main.out[r : r + 1],
            single.allowed,
            "the same row in the batch",
            {"row": r},
            unit_at=unit,
        )


def _masked_entries(run: CaseRun, ctx: Context, tally: Tally) -> None:
    ev = run.main
    hidden = ~_visible(ev)
    keeps = _visible(ev).any(axis=-1)
    rows = hidden.any(axis=-1) & keeps
    if not rows.any():
        return
    zero = -np.inf if ctx.log else 0.0
    wrong = hidden & (ev.out != zero)
    bad = wrong.any(axis=-1) & rows
    column = int(np.argmax(wrong[int(np.argmax(bad))])) if bad.any() else 0

    def text(r: int) -> str:
        j = int(np.argmax(wrong[r]))
        return f"row {r} puts {float(ev.out[r, j])!r} on masked entry {j} (must be {zero})"

    _rows_failed(
        tally,
        ev,
        bad,
        text,
        "masked entries must get no weight: mask before the max and the sum",
        column=column,
        expected=lambda r: zero,
        actual=lambda r: float(ev.out[r, int(np.argmax(wrong[r]))]),
    )


def _shape_dtype(run: CaseRun, ctx: Context, tally: Tally) -> None:
    ev = run.main
    bad = np.array([run.out_dtype != ctx.dtype])
    _rows_failed(
        tally,
        replace(ev, inputs=ev.inputs[:1]),
        bad,
        lambda r: f"output dtype {run.out_dtype}, input dtype {ctx.dtype}",
        "the output must keep the input's dtype (cast back after computing in a wider one)",
    )


PROPERTIES: tuple[Property, ...] = (
    Property(
        "accuracy", "every element within T12's allowance of the certified reference", _accuracy
    ),
    Property("row_sum", "each row sums to 1 within the allowances summed", _row_sum),
    Property("shift_invariance", "f(x + c) matches the reference of x + c", _shift_invariance),
    Property("permutation", "permuting the logits permutes the output", _permutation),
    Property("t1_bound", "every coefficient within claim T1's bounds", _t1_bound),
    Property(
        "batch_independence", "a row alone matches the same row in a batch", _batch_independence
    ),
    Property("masked_entries", "masked entries get exactly no weight", _masked_entries),
    Property("shape_dtype", "the output keeps the input's dtype", _shape_dtype),
)
"""The properties of the battery, in report order."""
