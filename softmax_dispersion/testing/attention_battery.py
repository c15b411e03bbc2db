"""The attention kind's battery: ``fn(q, k, v, attn_mask=None, is_causal=False, scale=None)``.

For each dtype, every case of the suites (:mod:`~softmax_dispersion.testing.attention_suites`)
is given to the implementation once, its output compared with the certified reference
(:mod:`~softmax_dispersion.testing.attention_reference`) within T14's allowance
(:mod:`~softmax_dispersion.testing.attention_tolerance`), and the properties tallied:

``accuracy``
    Every output element of a row that keeps a key within the allowance of the exact
    output; where the scores are huge (a whole row of ``finfo.min``) the exact and the
    rounded-scores answers are both accepted and named (``scores`` behaviour).
``permutation``
    Permuting the keys (``k``, ``v`` and the mask's columns together) permutes nothing:
    the output stays within twice the allowance (tiles see other keys).
``batch_independence``
    The first query row alone, and the first batch element alone, within twice the
    allowance of the same rows in the batch.
``shape_dtype``
    The output has shape ``(..., L, Ev)`` and ``q``'s dtype.

The named behaviours: ``fully masked row`` (``NaN``, ``zeros`` or ``uniform``: the mean
of the values), ``finfo.min row`` (``exact`` or ``rounded scores``), ``subnormals``
(``flushed`` or ``kept``) and ``input`` (``kept`` or ``modified``).  A NaN in a row that
keeps a key is an accuracy failure, never a behaviour.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from softmax_dispersion.numerics.rounding import FORMATS
from softmax_dispersion.testing.adapters import Adapter, adapter, to_float64, wrong_library_hint
from softmax_dispersion.testing.attention_reference import (
    AttentionProblem,
    AttentionReference,
    attention_problem,
    reference_of,
)
from softmax_dispersion.testing.attention_suites import (
    AttentionCase,
    attention_suites,
    check_suite_names,
    policy_cases,
)
from softmax_dispersion.testing.attention_tolerance import allowance_and_validity, rounded_allowance
from softmax_dispersion.testing.report import PropertyResult, Report, Worst
from softmax_dispersion.testing.tolerance import (
    VALID_UP_TO,
    Tolerance,
    accumulation_format,
    flushing_is_named,
    ulp,
)

__all__ = [
    "ATTENTION_BEHAVIOURS",
    "ATTENTION_PROPERTIES",
    "AttentionCallError",
    "check_attention",
]

F64 = npt.NDArray[np.float64]
Bool = npt.NDArray[np.bool_]

ATTENTION_PROPERTIES = ("accuracy", "permutation", "batch_independence", "shape_dtype")
"""The properties of the attention battery, in report order."""
ATTENTION_BEHAVIOURS: dict[str, tuple[str, ...]] = {
    "fully masked row": ("NaN", "zeros", "uniform"),
    "finfo.min row": ("exact", "rounded scores"),
    "subnormals": ("flushed", "kept"),
    "input": ("kept", "modified"),
}
"""The named behaviours and their possible values (``raises`` too, for the two rows)."""


class AttentionCallError(ValueError):
    """The callable under test raised, or returned something that is not an output."""


def _name(fn: Callable[..., Any]) -> str:
    module = getattr(fn, "__module__", None) or ""
    qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    return f"{module}.{qualname}" if module else str(qualname)


@dataclass
class _Output:
    """One call: the exact inputs it got (as a problem) and its output."""

    problem: AttentionProblem
    out: F64
    dtype: str
    natural: F64 | None = None  # Σ_j p_j|v_j| per output element, once judged


class _Caller:
    """Calls ``fn`` on a case in one dtype, watching its inputs."""

    def __init__(self, fn: Callable[..., Any], library: Adapter, dtype: str) -> None:
        self.fn, self.library, self.dtype = fn, library, dtype
        self.modified = ""
        self.calls = 0

    def arrays(self, case: AttentionCase) -> tuple[Any, Any, Any, Any]:
        lib, dtype = self.library, self.dtype
        q, k, v = (lib.array(a, dtype) for a in (case.q, case.k, case.v))
        mask: Any = None
        if case.mask is not None:
            if np.asarray(case.mask).dtype == bool:
                mask = lib.mask(np.asarray(case.mask))
            else:
                mask = lib.array(np.asarray(case.mask, dtype=np.float64), dtype)
        return q, k, v, mask

    def __call__(self, case: AttentionCase, where: str) -> _Output:
        q, k, v, mask = self.arrays(case)
        before = [to_float64(a)[0] for a in (q, k, v) + ((mask,) if mask is not None else ())]
        problem = attention_problem(q, k, v, mask, case.is_causal, case.scale, dtype=self.dtype)
        kwargs: dict[str, Any] = {}
        if mask is not None:
            kwargs["attn_mask"] = mask
        if case.is_causal:
            kwargs["is_causal"] = True
        if case.scale is not None:
            kwargs["scale"] = case.scale
        shape = (
            *np.broadcast_shapes(case.q.shape[:-2], case.k.shape[:-2]),
            case.q.shape[-2],
            case.v.shape[-1],
        )
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = self.fn(q, k, v, **kwargs)
        except Exception as exc:
            hint = wrong_library_hint(self.library.name, exc)
            raise AttentionCallError(
                f"{_name(self.fn)} raised {type(exc).__name__}: {exc} ({where}, dtype "
                f"{self.dtype})" + (f"; {hint}" if hint else "")
            ) from exc
        after = [to_float64(a)[0] for a in (q, k, v) + ((mask,) if mask is not None else ())]
        if not self.modified and not all(
            np.array_equal(x, y, equal_nan=True) for x, y in zip(before, after, strict=True)
        ):
            self.modified = where
        if not (hasattr(out, "shape") and hasattr(out, "dtype")):
            raise AttentionCallError(
                f"{_name(self.fn)} returned {type(out).__name__}, expected an array ({where})"
            )
        values, name = to_float64(out)
        if values.shape != shape:
            raise AttentionCallError(
                f"{_name(self.fn)} returned shape {values.shape}, expected {shape} = "
                f"(..., L, Ev) ({where}, dtype {self.dtype})"
            )
        self.calls += 1
        return _Output(problem, values.reshape(-1, shape[-2], shape[-1]), name)


# --- judging ------------------------------------------------------------------------------


@dataclass
class _Tally:
    cases: int = 0
    failures: int = 0
    max_ulp: float = 0.0
    worst_score: tuple[bool, float] = (False, -1.0)
    worst: Worst | None = None
    message: str = ""
    hint: str = ""

    def result(self, name: str, dtype: str) -> PropertyResult:
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
        )


@dataclass
class _Judged:
    error: F64  # |actual − exact| (centre), inf for NaN against a finite reference
    bad: Bool
    ulps: F64
    allowed_ulps: F64


def _distance(actual: F64, centre: F64, low: F64) -> F64:
    """``|actual − (centre + low)|`` with the first subtraction exact (TwoSum)."""
    from softmax_dispersion.numerics.dense._double_double import two_sum

    with np.errstate(all="ignore"):
        s, e = two_sum(actual, -centre)
        return np.abs(s + (e - low))


def _judge(
    actual: F64, ref: AttentionReference, allowed: F64, skip: Bool, dtype: str, natural: F64
) -> _Judged:
    """Element errors against the enclosure; bad only where certainly beyond the allowance.

    Errors are counted in ULPs of the natural scale ``Σ_j p_j|v_j|`` (``natural``), the
    unit T14's bound is stated in: an output near 0 from cancelling values is not held
    to the ULPs of its own tiny value.
    """
    centre = ref.centre.reshape(actual.shape)
    low = np.nan_to_num(ref.centre_low.reshape(actual.shape))
    radius = np.nan_to_num(ref.radius.reshape(actual.shape))
    with np.errstate(all="ignore"):
        error = _distance(actual, np.nan_to_num(centre), low)
        error = np.where(np.isfinite(actual), error, np.inf)
        error = np.where(skip[..., None], 0.0, error)
        bad = (error - radius > allowed) & ~skip[..., None]
        unit = ulp(np.where(np.isfinite(natural), natural, 0.0), dtype)
    return _Judged(error, bad, error / unit, allowed / unit)


def _flushed(actual: F64, ref: AttentionReference, bad: Bool, dtype: str) -> Bool:
    """Zeros where the exact output is a non-zero subnormal of ``dtype``."""
    tiny = 2.0 ** FORMATS[dtype].emin
    centre = ref.centre.reshape(actual.shape)
    with np.errstate(all="ignore"):
        return bad & (actual == 0) & (np.abs(centre) < tiny) & (centre != 0)


@dataclass
class _Context:
    dtype: str
    tolerance: Tolerance
    flush_allowed: bool
    library: str = "numpy"
    seed: int = 0
    subnormals: set[str] = field(default_factory=set)
    scores: dict[str, int] = field(default_factory=dict)
    unvouched: int = 0


def _rows_in_doubt(validity: F64, fully: Bool) -> Bool:
    return (validity > VALID_UP_TO) & ~fully


def _accuracy(output: _Output, label: str, ctx: _Context) -> tuple[int, Bool, _Judged, F64, F64]:
    """Judge one call: ``(rows, bad rows, judged, reference centre, allowance)``."""
    problem, dtype = output.problem, ctx.dtype
    ref = reference_of(problem)
    allowed, validity = allowance_and_validity(ref, problem, tolerance=ctx.tolerance)
    shape = output.out.shape
    fully = problem.fully_masked.reshape(shape[:-1])
    allowed = allowed.reshape(shape)
    doubt = _rows_in_doubt(validity.reshape(shape[:-1]), fully)
    with np.errstate(all="ignore"):
        natural = np.matmul(ref.probs.reshape(problem.bias.shape), np.abs(problem.v)).reshape(shape)
    output.natural = natural
    judged = _judge(output.out, ref, allowed, fully, dtype, natural)
    if doubt.any():
        judged, allowed = _either_answer(output, ref, judged, allowed, doubt, ctx, natural)
    bad = judged.bad
    flushed = _flushed(output.out, ref, bad, dtype)
    if flushed.any():
        ctx.subnormals.add("flushed")
        if ctx.flush_allowed and flushing_is_named(dtype):
            bad = bad & ~flushed
            judged = replace(judged, ulps=np.where(flushed, 0.0, judged.ulps))
    centre = ref.centre.reshape(shape)
    tiny = 2.0 ** FORMATS[dtype].emin
    with np.errstate(all="ignore"):
        if ((np.abs(centre) < tiny) & (centre != 0) & (output.out != 0) & ~bad).any():
            ctx.subnormals.add("kept")
    judged = replace(judged, bad=bad)
    rows = int(np.sum(~fully))
    return rows, bad.any(axis=-1), judged, centre, allowed


def _either_answer(
    output: _Output,
    ref: AttentionReference,
    judged: _Judged,
    allowed: F64,
    doubt: Bool,
    ctx: _Context,
    natural: F64,
) -> tuple[_Judged, F64]:
    """Rows whose scores are too large for the first order: the exact or the rounded answer.

    The exact answer is judged with the mask added exactly (in float32 for 16-bit
    formats), where that makes the first order valid; the rounded one against the scores
    rounded once to the format, where that rounding is certain.  Each is bounded; a row
    passes if it is within one that applies, and the answer it matches is named.  A row
    neither applies to keeps T14's own (capped, vacuous) allowance and is counted as
    not vouched for.
    """
    problem, dtype = output.problem, ctx.dtype
    shape = output.out.shape
    sixteen = FORMATS[dtype].precision < 24
    wide = FORMATS[accumulation_format(dtype)].unit_roundoff if sixteen else 0.0
    exact_allowed, exact_validity = allowance_and_validity(
        ref, problem, tolerance=ctx.tolerance, mask_rounding=wide
    )
    exact_allowed = exact_allowed.reshape(shape)
    fully = problem.fully_masked.reshape(shape[:-1])
    exact = _judge(output.out, ref, exact_allowed, fully, dtype, natural)
    exact_applies = doubt & (exact_validity.reshape(shape[:-1]) <= VALID_UP_TO)
    rounded_ref = reference_of(problem, scores="rounded")
    rounded_allowed, certain = rounded_allowance(rounded_ref, problem, tolerance=ctx.tolerance)
    rounded_allowed = rounded_allowed.reshape(shape)
    rounded = _judge(output.out, rounded_ref, rounded_allowed, fully, dtype, natural)
    rounded_applies = doubt & certain.reshape(shape[:-1])
    exact_pass = exact_applies & ~exact.bad.any(axis=-1)
    rounded_pass = rounded_applies & ~rounded.bad.any(axis=-1) & ~exact_pass
    neither = doubt & ~exact_applies & ~rounded_applies
    # a row with a candidate that passes none is judged against the exact answer if it
    # applies, else the rounded one
    use_rounded = rounded_pass | (
        doubt & ~exact_pass & ~rounded_pass & ~exact_applies & rounded_applies
    )
    use_exact = doubt & ~use_rounded & ~neither
    ctx.scores["exact"] = ctx.scores.get("exact", 0) + int(np.sum(exact_pass))
    ctx.scores["rounded scores"] = ctx.scores.get("rounded scores", 0) + int(np.sum(rounded_pass))
    ctx.unvouched += int(np.sum(neither))

    def pick(standard: F64, from_exact: F64, from_rounded: F64) -> F64:
        return np.where(
            use_rounded[..., None],
            from_rounded,
            np.where(use_exact[..., None], from_exact, standard),
        )

    merged = _Judged(
        error=pick(judged.error, exact.error, rounded.error),
        bad=pick(judged.bad, exact.bad, rounded.bad).astype(bool),
        ulps=pick(judged.ulps, exact.ulps, rounded.ulps),
        allowed_ulps=pick(judged.allowed_ulps, exact.allowed_ulps, rounded.allowed_ulps),
    )
    return merged, pick(allowed, exact_allowed, rounded_allowed)


# --- the properties -----------------------------------------------------------------------


_CONVERT = {
    "numpy": "q, k, v = (a.astype({dtype!r}) for a in (q, k, v))\n"
    "mask = mask if mask is None or mask.dtype == bool else mask.astype({dtype!r})",
    "torch": "import torch\n"
    "q, k, v = (torch.from_numpy(a).to(torch.{dtype}) for a in (q, k, v))\n"
    "mask = mask if mask is None else torch.from_numpy(mask) if mask.dtype == bool else "
    "torch.from_numpy(mask).to(torch.{dtype})",
    "jax": "import jax; jax.config.update('jax_enable_x64', True); import jax.numpy as jnp\n"
    "q, k, v = (jnp.asarray(a, dtype=jnp.{dtype}) for a in (q, k, v))\n"
    "mask = mask if mask is None else jnp.asarray(mask) if mask.dtype == bool else "
    "jnp.asarray(mask, dtype=jnp.{dtype})",
}


def reproducer(
    case: AttentionCase, dtype: str, library: str, seed: int, index: tuple[int, ...]
) -> str:
    """Python code that rebuilds ``case`` in ``dtype`` and prints one output beside the reference.

    ``{fn}`` stands for the line that defines ``fn`` (the report fills it in).
    """
    kwargs = []
    if case.mask is not None:
        kwargs.append("attn_mask=mask")
    if case.is_causal:
        kwargs.append("is_causal=True")
    if case.scale is not None:
        kwargs.append(f"scale={case.scale!r}")
    call = ", ".join(["q, k, v", *kwargs])
    lines = [
        "import numpy as np",
        "from softmax_dispersion.testing.attention_suites import attention_suites",
        f"case = next(c for c in attention_suites({dtype!r}, [{case.suite!r}], seed={seed}) "
        f"if c.name == {case.base!r})",
        "q, k, v, mask = case.q, case.k, case.v, case.mask",
        *case.recipe,
        _CONVERT[library].format(dtype=dtype),
        "{fn}",
        f"out = fn({call})",
        "from softmax_dispersion.testing.attention_reference import reference_attention",
        f"ref = reference_attention({call})",
        f"print(np.asarray(out, dtype=float)[{index}], 'reference', ref.values[{index}])",
    ]
    return "\n".join(lines)


def _worst(
    judged: _Judged,
    actual: F64,
    centre: F64,
    allowed: F64,
    case: AttentionCase,
    label: str,
    ctx: _Context,
) -> tuple[tuple[bool, float], Worst, str]:
    """The worst element of a judged call: its score, a :class:`Worst` and a message."""
    with np.errstate(all="ignore"):
        ratio = np.where(judged.bad, judged.ulps / np.maximum(judged.allowed_ulps, 1e-300), 0.0)
        if not judged.bad.any():
            ratio = np.where(np.isfinite(judged.ulps), judged.ulps, 0.0)
    ratio = np.where(np.isnan(ratio), np.inf, ratio)
    flat = int(np.argmax(ratio))
    b, r, c = (int(i) for i in np.unravel_index(flat, ratio.shape))
    rows = ratio.shape[0] * ratio.shape[1]
    failed_rows = int(judged.bad.any(axis=-1).sum())
    worst = Worst(
        case=label,
        row=b * ratio.shape[1] + r,
        column=c,
        actual=float(actual[b, r, c]),
        expected=float(centre[b, r, c]),
        allowance=float(allowed[b, r, c]),
        error_ulps=float(judged.ulps[b, r, c]),
        allowed_ulps=float(judged.allowed_ulps[b, r, c]),
        inputs=case.q.reshape(-1, case.q.shape[-1])[:1],
        extra={"case": case.name, "dtype": ctx.dtype, "query": (b, r), "column": c},
    )
    batch = np.broadcast_shapes(case.q.shape[:-2], case.k.shape[:-2])
    index = (*np.unravel_index(b, batch), r, c) if batch else (r, c)
    worst.extra["reproducer"] = reproducer(
        case, ctx.dtype, ctx.library, ctx.seed, tuple(int(i) for i in index)
    )
    message = (
        f"{failed_rows}/{rows} query rows of {label} beyond tolerance; worst "
        f"{worst.error_ulps:.4g} ULP (allowed {worst.allowed_ulps:.4g} ULP) at batch {b}, "
        f"query {r}, column {c}: actual {worst.actual!r}, reference {worst.expected!r}"
    )
    return (bool(judged.bad.any()), float(ratio[b, r, c])), worst, message


def _add(
    tally: _Tally,
    rows: int,
    bad_rows: int,
    max_ulp: float,
    key: tuple[bool, float],
    make: Callable[[], tuple[Worst, str, str]],
) -> None:
    tally.cases += rows
    tally.failures += bad_rows
    tally.max_ulp = max(tally.max_ulp, math.inf if math.isnan(max_ulp) else max_ulp)
    if key > tally.worst_score:
        tally.worst_score = key
        tally.worst, message, hint = make()
        if key[0]:
            tally.message, tally.hint = message, hint


def _hint(output: _Output, judged: _Judged, ref_centre: F64, dtype: str) -> str:
    """The likely cause of an accuracy failure, where one is recognised."""
    actual = output.out
    fully = output.problem.fully_masked.reshape(actual.shape[:-1])
    bad_rows = judged.bad.any(axis=-1)
    if not bad_rows.any():
        return ""
    if fully.any() and (np.isnan(actual) & ~fully[..., None]).any():
        return (
            "NaN in rows that keep keys, in a batch with a fully masked row: the fully "
            "masked row's NaN spread (a max or a sum taken across rows, or NaN·0 in the "
            "weighted sum)"
        )
    if not np.all(np.isfinite(actual[bad_rows])):
        return (
            "a NaN or infinity for finite input: an exp overflowed or 0/0 (a maximum not "
            "subtracted, or an empty running sum)"
        )
    if np.all(actual[bad_rows] == 0):
        return (
            "zeros in rows that keep keys: every weight underflowed (an online softmax "
            "whose running maximum started at 0, not −inf, before visible scores below −88)"
        )
    fmt = FORMATS[dtype]
    if dtype == "float64":
        centre = ref_centre[bad_rows]
        got = actual[bad_rows]
        with np.errstate(all="ignore"):
            relative = np.nanmax(np.abs(got - centre) / np.maximum(np.abs(centre), 1e-300))
        if 2.0**-30 < relative < 2.0**-18:
            return "an error near 2**-24 in float64: a softmax or a sum computed in float32"
    if fmt.precision < 24:
        return (
            "a 16-bit error beyond T14's: a weighted sum or a running total held in the "
            "16-bit format, or the scores scaled twice"
        )
    return ""


def _run_case(
    call: _Caller,
    case: AttentionCase,
    ctx: _Context,
    tallies: dict[str, _Tally],
    taken: list[str],
) -> None:
    try:
        output = call(case, case.name)
    except AttentionCallError as exc:
        if case.core:
            raise
        taken.append(f"{case.name}: {exc}")
        return
    dtype = ctx.dtype
    shape_ok = output.dtype == dtype
    tallies["shape_dtype"].cases += 1
    if not shape_ok:
        tallies["shape_dtype"].failures += 1
        tallies[
            "shape_dtype"
        ].message = f"output dtype {output.dtype} for inputs of {dtype} ({case.name})"
        tallies[
            "shape_dtype"
        ].hint = "the output must keep q's dtype (cast back after computing in a wider one)"
    rows, bad_rows, judged, centre, allowed = _accuracy(output, case.name, ctx)
    key, worst, message = _worst(judged, output.out, centre, allowed, case, case.name, ctx)
    _add(
        tallies["accuracy"],
        rows,
        int(bad_rows.sum()),
        float(np.max(judged.ulps)) if judged.ulps.size else 0.0,
        key,
        lambda: (worst, message, _hint(output, judged, centre, dtype)),
    )
    if case.suite in ("random", "masks") and not case.is_causal and case.k.shape[-2] <= 1238:
        _permutation(call, case, output, allowed, ctx, tallies["permutation"])
    if case.suite == "random" or case.name == "masks/one_row_fully_masked":
        _alone(call, case, output, allowed, ctx, tallies["batch_independence"])


def _compare_outputs(
    other: F64, base: F64, allowed: F64, skip: Bool, dtype: str, natural: F64
) -> _Judged:
    with np.errstate(all="ignore"):
        same = (other == base) | (np.isnan(other) & np.isnan(base))
        error = np.where(same, 0.0, np.abs(other - base))
        error = np.where(np.isnan(error), np.inf, error)
        error = np.where(skip[..., None], 0.0, error)
        bad = (error > 2 * allowed) & ~skip[..., None]
        unit = ulp(np.where(np.isfinite(natural), natural, 0.0), dtype)
    return _Judged(error, bad, error / unit, 2 * allowed / unit)


def _permutation(
    call: _Caller, case: AttentionCase, output: _Output, allowed: F64, ctx: _Context, tally: _Tally
) -> None:
    keys = case.k.shape[-2]
    perm = np.random.default_rng(keys).permutation(keys)
    mask = case.mask
    if mask is not None:
        mask = np.asarray(mask)[..., perm]
    permuted = replace(
        case,
        k=case.k[..., perm, :],
        v=case.v[..., perm, :],
        mask=mask,
        name=f"{case.name} keys permuted",
        recipe=(
            f"perm = np.random.default_rng({keys}).permutation({keys})",
            "k, v = k[..., perm, :], v[..., perm, :]",
            "mask = None if mask is None else mask[..., perm]",
        ),
    )
    other = call(permuted, permuted.name)
    fully = output.problem.fully_masked.reshape(output.out.shape[:-1])
    assert output.natural is not None
    judged = _compare_outputs(other.out, output.out, allowed, fully, ctx.dtype, output.natural)
    key, worst, message = _worst(
        judged, other.out, output.out, 2 * allowed, permuted, permuted.name, ctx
    )
    worst.extra["perm"] = perm
    _add(
        tally,
        int(np.sum(~fully)),
        int(judged.bad.any(axis=-1).sum()),
        0.0,
        key,
        lambda: (
            worst,
            message.replace("reference", "unpermuted"),
            "the output depends on the order of the keys: a tile or a mask edge handled wrongly",
        ),
    )


def _alone(
    call: _Caller, case: AttentionCase, output: _Output, allowed: F64, ctx: _Context, tally: _Tally
) -> None:
    """The first query row alone, and the first batch element alone."""
    pieces = []
    mask = None if case.mask is None else np.asarray(case.mask)
    q_rows = case.q[..., :1, :]
    if not case.is_causal and case.q.shape[-2] > 1:
        row_mask = (
            None
            if mask is None
            else np.broadcast_to(mask, (*case.q.shape[:-1], case.k.shape[-2]))[..., :1, :]
        )
        pieces.append(
            (
                replace(
                    case,
                    q=q_rows,
                    mask=row_mask,
                    name=f"{case.name} query 0 alone",
                    recipe=(
                        "mask = None if mask is None else np.broadcast_to(mask, "
                        f"{(*case.q.shape[:-1], case.k.shape[-2])!r})[..., :1, :]",
                        "q = q[..., :1, :]",
                    ),
                ),
                (slice(None), slice(0, 1)),
            )
        )
    if case.q.ndim >= 3 and case.q.shape[0] > 1:
        full_mask = (
            None
            if mask is None
            else np.broadcast_to(mask, (*case.q.shape[:-1], case.k.shape[-2]))[:1]
        )
        alone = replace(
            case,
            q=case.q[:1],
            k=case.k[:1] if case.k.shape[0] > 1 else case.k,
            v=case.v[:1] if case.v.shape[0] > 1 else case.v,
            mask=full_mask,
            name=f"{case.name} batch 0 alone",
            recipe=(
                "mask = None if mask is None else np.broadcast_to(mask, "
                f"{(*case.q.shape[:-1], case.k.shape[-2])!r})[:1]",
                "q = q[:1]",
                "k = k[:1] if k.shape[0] > 1 else k",
                "v = v[:1] if v.shape[0] > 1 else v",
            ),
        )
        pieces.append((alone, None))
    base = output.out.reshape(*case.q.shape[:-1], -1)
    base_allowed = allowed.reshape(base.shape)
    base_fully = output.problem.fully_masked.reshape(base.shape[:-1])
    assert output.natural is not None
    base_natural = output.natural.reshape(base.shape)
    for piece, where in pieces:
        other = call(piece, piece.name)
        if where is None:
            reference, limit, skip = base[:1], base_allowed[:1], base_fully[:1]
            natural = base_natural[:1]
        else:
            reference, limit, skip = base[..., :1, :], base_allowed[..., :1, :], base_fully[..., :1]
            natural = base_natural[..., :1, :]
        shape = other.out.shape
        judged = _compare_outputs(
            other.out,
            reference.reshape(shape),
            limit.reshape(shape),
            skip.reshape(shape[:-1]),
            ctx.dtype,
            natural.reshape(shape),
        )
        key, worst, message = _worst(
            judged,
            other.out,
            reference.reshape(shape),
            2 * limit.reshape(shape),
            piece,
            piece.name,
            ctx,
        )
        _add(
            tally,
            int(np.sum(~skip)),
            int(judged.bad.any(axis=-1).sum()),
            0.0,
            key,
            lambda worst=worst, message=message: (
                worst,
                message.replace("reference", "in the batch"),
                "a row's output depends on the other rows of the batch (a reduction across "
                "rows, a shared workspace)",
            ),
        )


# --- the named behaviours -------------------------------------------------------------------


def _describe_fully_masked(out: F64, v: F64) -> str:
    with np.errstate(all="ignore"):
        if np.all(np.isnan(out)):
            return "NaN"
        if np.all(out == 0):
            return "zeros"
        mean = np.mean(v, axis=-2)
        if np.all(np.isfinite(out)) and np.allclose(out, mean, rtol=1e-2, atol=1e-3):
            return "uniform"
    return "[" + ", ".join(f"{float(x):.4g}" for x in out.reshape(-1)[:4]) + ", ...]"


def _policies(call: _Caller, ctx: _Context) -> dict[str, str]:
    found: dict[str, str] = {}
    cases = policy_cases(ctx.dtype)
    for key, case in cases.items():
        try:
            output = call(case, f"policy {key!r}")
        except AttentionCallError as exc:
            cause = exc.__cause__
            found[key] = f"raises {type(cause).__name__}" if cause else f"error: {exc}"
            continue
        row = output.out[0, 1]
        v = output.problem.v[0]
        if key == "fully masked row":
            found[key] = _describe_fully_masked(row, v)
            continue
        # finfo.min row: the exact answer (the mask ignored) or the rounded scores'
        sub = _Context(ctx.dtype, ctx.tolerance, True)
        _, bad_rows, _, _, _ = _accuracy(output, case.name, sub)
        if bad_rows[0, 1]:
            found[key] = _describe_fully_masked(row, v)
        else:
            found[key] = "rounded scores" if sub.scores.get("rounded scores") else "exact"
    return found


def _unnamed(key: str, value: str) -> bool:
    name = "raises" if value.startswith("raises ") else value
    if key in ("fully masked row",):
        return name not in (*ATTENTION_BEHAVIOURS[key], "raises")
    if key == "finfo.min row":
        return name not in (*ATTENTION_BEHAVIOURS[key], "raises")
    return False


# --- the check ----------------------------------------------------------------------------------


def _variants(fn: Callable[..., Any]) -> dict[str, Callable[..., Any]]:
    """The implementations behind ``fn``: its ``__oracle_variants__`` (backends), or itself."""
    found = getattr(fn, "__oracle_variants__", None)
    if isinstance(found, Mapping) and found:
        return dict(found)
    return {"": fn}


def check_attention(
    fn: Callable[..., Any],
    *,
    library: str = "numpy",
    dtypes: Iterable[str] | None = None,
    suites: Iterable[str] | None = None,
    seed: int = 0,
    tolerance: object = None,
    policies: Mapping[str, str] | None = None,
) -> Report:
    """Run the attention battery against ``fn(q, k, v, attn_mask, is_causal, scale)``.

    Parameters
    ----------
    fn
        Scaled dot-product attention with torch's semantics (the module's notes); it is
        called with keywords only where they differ from the defaults.  A callable with
        an ``__oracle_variants__`` mapping (name → callable: torch's CPU backends) is
        checked once per variant, the results named ``property [variant]``.
    library
        ``"numpy"``, ``"torch"`` or ``"jax"``.
    dtypes
        Dtype names; the library's float dtypes by default.
    suites
        Names of :data:`~softmax_dispersion.testing.attention_suites.ATTENTION_SUITES`.
    seed
        Seed of the suites.
    tolerance
        ``None`` (T14), a number of ULPs or a :class:`~softmax_dispersion.testing.Tolerance`.
    policies
        Named behaviours to require (``{"fully masked row": "zeros"}``).

    Returns
    -------
    Report
        Per property, variant and dtype: rows checked, failures, max ULP error, worst case.

    Raises
    ------
    ValueError
        For an unknown library, dtype, suite or policy, or an empty selection.
    AttentionCallError
        When ``fn`` raises or returns the wrong shape on an input of the core contract.

    Examples
    --------
    >>> import numpy as np
    >>> def attention(q, k, v, attn_mask=None, is_causal=False, scale=None):
    ...     s = q @ np.swapaxes(k, -1, -2) * (scale or 1 / np.sqrt(q.shape[-1]))
    ...     if attn_mask is not None:
    ...         s = np.where(attn_mask, s, -np.inf) if attn_mask.dtype == bool else s + attn_mask
    ...     if is_causal:
    ...         s = np.where(np.tril(np.ones(s.shape[-2:], dtype=bool)), s, -np.inf)
    ...     e = np.exp(s - s.max(axis=-1, keepdims=True))
    ...     return (e / e.sum(axis=-1, keepdims=True)) @ v
    >>> report = check_attention(attention, dtypes=["float64"], suites=["random"])
    >>> report.passed, report.policies["fully masked row"]
    (True, 'NaN')
    """
    from softmax_dispersion.testing.attention_reference import one_blas_thread

    start = time.perf_counter()
    library_adapter = adapter(library)
    tol = Tolerance.coerce(tolerance)
    if isinstance(dtypes, str):
        dtypes = [dtypes]
    chosen = list(library_adapter.dtypes if dtypes is None else dtypes)
    if not chosen:
        raise ValueError(
            f"dtypes is empty: choose at least one of {', '.join(library_adapter.dtypes)}"
        )
    for dtype in chosen:
        if dtype not in library_adapter.dtypes:
            raise ValueError(
                f"unknown dtype {dtype!r} for {library}; known: {', '.join(library_adapter.dtypes)}"
            )
    suite_names = (
        None if suites is None else ([suites] if isinstance(suites, str) else list(suites))
    )
    check_suite_names(suite_names)
    required = dict(policies or {})
    for key, value in required.items():
        if key not in ATTENTION_BEHAVIOURS:
            raise ValueError(f"unknown policy {key!r}; known: {', '.join(ATTENTION_BEHAVIOURS)}")
        allowed = ATTENTION_BEHAVIOURS[key]
        if value not in allowed and not (
            value.startswith("raises") and key in ("fully masked row", "finfo.min row")
        ):
            raise ValueError(f"policy {key!r} is one of {', '.join(allowed)}, not {value!r}")
    from softmax_dispersion.testing.battery import _source

    report = Report(
        kind="attention",
        source=_source(fn),
        library=library,
        implementation=_name(fn),
        tolerance=f"T14 ({tol.label})",
    )
    variants = _variants(fn)
    notes: set[str] = set()
    observed: dict[str, dict[str, str]] = {}
    with library_adapter.session(), one_blas_thread():
        for variant, implementation in variants.items():
            suffix = f" [{variant}]" if variant else ""
            for dtype in chosen:
                ctx = _Context(
                    dtype, tol, required.get("subnormals") != "kept", library=library, seed=seed
                )
                call = _Caller(implementation, library_adapter, dtype)
                tallies = {name: _Tally() for name in ATTENTION_PROPERTIES}
                taken: list[str] = []
                for case in attention_suites(dtype, suite_names, seed):
                    _run_case(call, case, ctx, tallies, taken)
                for name, tally in tallies.items():
                    if tally.cases:
                        report.results.append(
                            replace(tally.result(name, dtype), name=name + suffix)
                        )
                found = _policies(call, ctx)
                found["subnormals"] = (
                    "flushed"
                    if "flushed" in ctx.subnormals
                    else "kept"
                    if "kept" in ctx.subnormals
                    else "not exercised"
                )
                found["input"] = "modified" if call.modified else "kept"
                for key, value in found.items():
                    observed.setdefault(key + suffix, {})[dtype] = value
                if ctx.unvouched:
                    notes.add(
                        f"{dtype}: T14 vouches for nothing on {ctx.unvouched} query rows (scores "
                        "too large for the format: the first-order bound exceeds 1/2); judged "
                        "against its capped allowance"
                    )
                for line in taken:
                    notes.add(
                        f"{variant or 'fn'} not checked on {line.split(':')[0]} (it raised; "
                        "outside the core 4-D contract with Ev = E)"
                    )
    for key, by_dtype in observed.items():
        values = set(by_dtype.values())
        report.policies[key] = (
            values.pop()
            if len(values) == 1
            else "; ".join(f"{d}: {v}" for d, v in by_dtype.items())
        )
        base = key.split(" [")[0]
        for dtype, value in by_dtype.items():
            if _unnamed(base, value):
                report.results.append(
                    PropertyResult(
                        name="policy",
                        dtype=dtype,
                        cases=1,
                        failures=1,
                        max_ulp=0.0,
                        message=f"1/1 failed; {key}: output is none of "
                        f"{', '.join(ATTENTION_BEHAVIOURS[base])}: {value}",
                        hint="a fully masked row must come out NaN, zeros or uniform, a row "
                        "of finfo.min the exact or the rounded-scores answer: anything else "
                        "is a wrong answer",
                    )
                )
            wanted = required.get(base)
            if (
                wanted is not None
                and value != wanted
                and not (base == "subnormals" and value == "not exercised")
            ):
                report.results.append(
                    PropertyResult(
                        name="policy",
                        dtype=dtype,
                        cases=1,
                        failures=1,
                        max_ulp=0.0,
                        message=f"{key} → {value}, required {wanted}",
                    )
                )
    report.notes = sorted(notes)
    report.seconds = time.perf_counter() - start
    return report
