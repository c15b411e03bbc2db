"""The engine of ``kind="attention"``: ``fn(q, k, v, attn_mask=None, is_causal=False, scale=None)``.

Scaled dot-product attention with the semantics of
``torch.nn.functional.scaled_dot_product_attention``
(:mod:`~softmax_dispersion.testing.attention_reference`).  For each case of the suites
(:mod:`~softmax_dispersion.testing.attention_suites`) the implementation is called once
(with keywords only where they differ from the defaults), its output compared with the
certified reference within T14's allowance
(:mod:`~softmax_dispersion.testing.attention_tolerance`, plus the reference's own radius),
and the battery's properties judge the rows (one row per query; errors in ULPs of the
natural scale ``Σ_j p_j|v_j|``):

``accuracy``
    Every row that keeps a key within the allowance.  Where the scores are too large for
    T14's first order (a whole row of ``finfo.min``), the exact answer and the
    rounded-scores answer are both accepted, each with its own bounded allowance, and
    the row is judged against the one it matches.
``permutation``
    The keys permuted (``k``, ``v`` and the mask's columns together): the output stays
    within twice the allowance.
``batch_independence``
    The first query alone, and the first batch element alone.
``shape_dtype``
    ``q``'s dtype out.

Fully masked rows are not judged (the ``fully masked row`` policy names them: ``NaN``,
``zeros`` or ``uniform``); a NaN in a row that keeps a key is an accuracy failure.  A
callable with an ``__oracle_variants__`` mapping (name → callable: torch's CPU backends)
is evaluated once per variant, its cases labelled ``[name]``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from softmax_dispersion.numerics.rounding import FORMATS
from softmax_dispersion.testing.attention_reference import (
    AttentionProblem,
    AttentionReference,
    attention_problem,
    one_blas_thread,
    reference_of,
)
from softmax_dispersion.testing.attention_suites import (
    SUITE_BUILDERS,
    AttentionCase,
    attention_suites,
    policy_cases,
)
from softmax_dispersion.testing.attention_tolerance import allowance_and_validity, rounded_allowance
from softmax_dispersion.testing.battery_report import Worst
from softmax_dispersion.testing.calls import Call, Caller, SoftmaxCallError
from softmax_dispersion.testing.engine import PolicyOutcome, Session
from softmax_dispersion.testing.properties import CaseRun, Evaluated
from softmax_dispersion.testing.tolerance import VALID_UP_TO, accumulation_format

__all__ = ["ATTENTION", "AttentionEngine", "check_attention", "reproducer"]

F64 = npt.NDArray[np.float64]
Bool = npt.NDArray[np.bool_]


# --- calls ------------------------------------------------------------------------------------


def _call(case: AttentionCase, where: str) -> Call:
    keywords: dict[str, Any] = {}
    if case.mask is not None:
        keywords["attn_mask"] = np.asarray(case.mask)
    if case.is_causal:
        keywords["is_causal"] = True
    if case.scale is not None:
        keywords["scale"] = case.scale
    batch = np.broadcast_shapes(case.q.shape[:-2], case.k.shape[:-2], case.v.shape[:-2])
    shape = (*batch, case.q.shape[-2], case.v.shape[-1])
    return Call(where, (("q", case.q), ("k", case.k), ("v", case.v)), keywords, shape)


def call_source(case: AttentionCase) -> str:
    """The call of ``case`` for reproducers (``fn(q, k, v, attn_mask=attn_mask)``)."""
    parts = ["q, k, v"]
    if case.mask is not None:
        parts.append("attn_mask=attn_mask")
    if case.is_causal:
        parts.append("is_causal=True")
    if case.scale is not None:
        parts.append(f"scale={case.scale!r}")
    return f"fn({', '.join(parts)})"


_CONVERT = {
    "numpy": "q, k, v = (a.astype({dtype!r}) for a in (q, k, v))\n"
    "attn_mask = m if m is None or m.dtype == bool else m.astype({dtype!r})",
    "torch": "import torch\n"
    "q, k, v = (torch.from_numpy(a).to(torch.{dtype}) for a in (q, k, v))\n"
    "attn_mask = m if m is None else torch.from_numpy(m) if m.dtype == bool else "
    "torch.from_numpy(m).to(torch.{dtype})",
    "jax": "import jax; jax.config.update('jax_enable_x64', True); import jax.numpy as jnp\n"
    "q, k, v = (jnp.asarray(a, dtype=jnp.{dtype}) for a in (q, k, v))\n"
    "attn_mask = m if m is None else jnp.asarray(m) if m.dtype == bool else "
    "jnp.asarray(m, dtype=jnp.{dtype})",
}


def reproducer(case: AttentionCase, dtype: str, library: str, seed: int, policy: str = "") -> str:
    """Python code that rebuilds ``case`` in ``dtype`` and prints its largest deviation.

    ``policy`` names the policy input ``case`` is (rebuilt by ``policy_cases``);
    ``{fn}`` stands for the line that defines ``fn`` (the report fills it in).
    """
    call = call_source(case)
    reference = call.replace("fn(", "reference_attention(", 1)
    found = (
        [
            "from softmax_dispersion.testing.attention_suites import policy_cases",
            f"case = policy_cases({dtype!r}, seed={seed})[{policy!r}]",
        ]
        if policy
        else [
            "from softmax_dispersion.testing.attention_suites import attention_suites",
            f"case = next(c for c in attention_suites({dtype!r}, [{case.suite!r}], seed={seed}) "
            f"if c.name == {case.base!r})",
        ]
    )
    lines = [
        "import numpy as np",
        *found,
        "q, k, v, mask = case.q, case.k, case.v, case.mask",
        *case.recipe,
        "m = None if mask is None else np.asarray(mask)",
        _CONVERT[library].format(dtype=dtype),
        "{fn}",
        f"out = {call}",
        "from softmax_dispersion.testing.attention_reference import reference_attention",
        f"ref = {reference}",
        "out = np.asarray(out, dtype=float)",
        "gap = np.where(np.isnan(ref.values), 0.0, np.abs(out - ref.values))",
        "at = np.unravel_index(np.argmax(np.nan_to_num(gap, nan=np.inf)), gap.shape)",
        "print('largest difference at', at, ':', out[at], 'reference', ref.values[at])",
    ]
    return "\n".join(lines)


# --- judging one output ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Judgement:
    """What one call's output is held to: per element a value and an allowance."""

    values: F64  # the reference (rounded) the output is compared with, (B, L, Ev)
    allowed: F64
    natural: F64  # Σ_j p_j|v_j|
    kept: Bool  # (B, L): rows that keep a key
    answer: dict[str, int]  # rows judged against the exact / the rounded-scores answer
    unvouched: int  # rows T14 vouches for nothing on


def _bounds(
    out: F64,
    problem: AttentionProblem,
    ref: AttentionReference,
    allowed: F64,
) -> Bool:
    """Rows of ``out`` within ``allowed`` (plus the reference's radius) of ``ref``."""
    shape = out.shape
    with np.errstate(all="ignore"):
        error = np.abs(out - ref.values.reshape(shape))
        within = (error <= allowed + np.nan_to_num(ref.radius.reshape(shape))) & np.isfinite(out)
    rows: Bool = np.all(within, axis=-1)
    return rows


def judgement(out: F64, problem: AttentionProblem, tolerance: object) -> _Judgement:
    """The reference and allowance every row of ``out`` (``(B, L, Ev)``) is judged against.

    Rows where T14's first order holds: the exact output and T14's allowance.  Rows whose
    scores are too large for it (``max b_j + b̄ > 1/2``): the exact answer with the mask
    added exactly (in float32 for 16-bit formats) where that makes the first order hold,
    or the answer of the scores rounded once to the format where that rounding is
    certain: the one the output matches (the exact one when it matches both or
    neither).  A row neither applies to keeps T14's own capped allowance (counted as
    *unvouched*).
    """
    dtype = problem.dtype
    shape = out.shape
    ref = reference_of(problem)
    allowed, validity = allowance_and_validity(ref, problem, tolerance=tolerance)
    allowed = allowed.reshape(shape) + np.nan_to_num(ref.radius.reshape(shape))
    values = ref.values.reshape(shape)
    with np.errstate(all="ignore"):
        natural = np.matmul(ref.probs.reshape(problem.bias.shape), np.abs(problem.v))
    kept = ~problem.fully_masked
    doubt = (validity.reshape(shape[:-1]) > VALID_UP_TO) & kept
    answer = {"exact": 0, "rounded scores": 0}
    unvouched = 0
    if doubt.any():
        sixteen = FORMATS[dtype].precision < 24
        wide = FORMATS[accumulation_format(dtype)].unit_roundoff if sixteen else 0.0
        exact_allowed, exact_validity = allowance_and_validity(
            ref, problem, tolerance=tolerance, mask_rounding=wide
        )
        exact_allowed = exact_allowed.reshape(shape) + np.nan_to_num(ref.radius.reshape(shape))
        exact_valid = exact_validity.reshape(shape[:-1]) <= VALID_UP_TO
        # a row whose mask is one constant (a row of finfo.min) has the exact answer of
        # the attention without it: removed exactly (a shift by the row's maximum, as
        # some kernels do), T14 holds with no mask at all on that row
        constant = _constant_bias_rows(problem) & doubt
        if constant.any():
            bare = replace(problem, bias=np.where(problem.excluded, -np.inf, 0.0))
            bare_allowed, bare_validity = allowance_and_validity(
                reference_of(bare), bare, tolerance=tolerance
            )
            bare_valid = constant & (bare_validity.reshape(shape[:-1]) <= VALID_UP_TO)
            bare_allowed = bare_allowed.reshape(shape) + np.nan_to_num(ref.radius.reshape(shape))
            widest = np.where(
                exact_valid[..., None], np.maximum(exact_allowed, bare_allowed), bare_allowed
            )
            exact_allowed = np.where(bare_valid[..., None], widest, exact_allowed)
            exact_valid = exact_valid | bare_valid
        exact_applies = doubt & exact_valid
        rounded_ref = reference_of(problem, scores="rounded")
        rounded_allowed, certain = rounded_allowance(rounded_ref, problem, tolerance=tolerance)
        rounded_allowed = rounded_allowed.reshape(shape) + np.nan_to_num(
            rounded_ref.radius.reshape(shape)
        )
        rounded_applies = doubt & certain.reshape(shape[:-1])
        exact_fits = exact_applies & _bounds(out, problem, ref, exact_allowed)
        rounded_fits = rounded_applies & _bounds(out, problem, rounded_ref, rounded_allowed)
        use_rounded = rounded_applies & ~exact_fits & (rounded_fits | ~exact_applies)
        use_exact = exact_applies & ~use_rounded
        answer = {
            "exact": int(np.sum(use_exact & exact_fits)),
            "rounded scores": int(np.sum(use_rounded & rounded_fits)),
        }
        unvouched = int(np.sum(doubt & ~exact_applies & ~rounded_applies))
        pick_exact = use_exact[..., None]
        pick_rounded = use_rounded[..., None]
        allowed = np.where(
            pick_rounded, rounded_allowed, np.where(pick_exact, exact_allowed, allowed)
        )
        values = np.where(pick_rounded, rounded_ref.values.reshape(shape), values)
    return _Judgement(values, allowed, natural.reshape(shape), kept, answer, unvouched)


def _constant_bias_rows(problem: AttentionProblem) -> Bool:
    """Rows ``(B, L)`` whose visible keys all carry one and the same mask value."""
    bias = problem.bias
    visible = ~problem.excluded
    with np.errstate(all="ignore"):
        top = np.max(np.where(visible, bias, -np.inf), axis=-1, keepdims=True)
        low = np.min(np.where(visible, bias, np.inf), axis=-1, keepdims=True)
    found: Bool = ((top == low) & np.isfinite(top))[..., 0]
    return found


def _hint(out: F64, judged: _Judgement, problem: AttentionProblem) -> str:
    """The likely cause of a failure in this output, where one is recognised."""
    with np.errstate(all="ignore"):
        beyond = ~(np.abs(out - judged.values) <= judged.allowed) & judged.kept[..., None]
    bad_rows = beyond.any(axis=-1)
    if not bad_rows.any():
        return ""
    fully = problem.fully_masked
    if fully.any() and np.isnan(out[bad_rows]).any():
        return (
            "NaN in rows that keep keys, in a batch with a fully masked row: the fully "
            "masked row's NaN spread (a maximum or a sum taken across rows, or NaN·0 in "
            "the weighted sum)"
        )
    if not np.all(np.isfinite(out[bad_rows])):
        return (
            "a NaN or infinity for finite input: an exp overflowed or 0/0 (a maximum not "
            "subtracted, or an empty running sum)"
        )
    if np.all(out[bad_rows] == 0):
        return (
            "zeros in rows that keep keys: every weight underflowed (an online softmax "
            "whose running maximum started at 0, not −inf, before scores below −88)"
        )
    fmt = FORMATS[problem.dtype]
    if problem.dtype == "float64":
        with np.errstate(all="ignore"):
            got, want = out[bad_rows], judged.values[bad_rows]
            relative = np.nanmax(np.abs(got - want) / np.maximum(judged.natural[bad_rows], 1e-300))
        if 2.0**-30 < relative < 2.0**-18:
            return "an error near 2**-24 in float64: a softmax or a sum computed in float32"
    if fmt.precision < 24:
        return (
            "a 16-bit error beyond T14's: a weighted sum or a running total held in the "
            "16-bit format, or the scores scaled twice"
        )
    return ""


# --- the engine ------------------------------------------------------------------------------


def _variants(session: Session) -> list[tuple[str, Caller]]:
    """The implementations to evaluate: the callable's ``__oracle_variants__``, or itself."""
    found = getattr(session.call.fn, "__oracle_variants__", None)
    if not isinstance(found, Mapping) or not found:
        return [("", session.call)]
    return [(str(name), Caller(fn, session.library, session.dtype)) for name, fn in found.items()]


def _describe_fully_masked(row: F64, values: F64) -> str:
    """A name for the output on a fully masked row (``values``: every key's value)."""
    with np.errstate(all="ignore"):
        if np.all(np.isnan(row)):
            return "NaN"
        if np.all(row == 0):
            return "zeros"
        mean = np.mean(values, axis=0)
        if np.all(np.isfinite(row)) and np.allclose(row, mean, rtol=1e-2, atol=1e-3):
            return "uniform"
        if np.any(np.isnan(row)):
            return "NaN in part: " + _listed(row)
    return _listed(row)


LISTED = 8
"""How many values of a row a named output lists (the report's worst column among them)."""


def _listed(row: F64) -> str:
    values = row.reshape(-1)
    more = ", …" if values.size > LISTED else ""
    return "[" + ", ".join(f"{float(v):.4g}" for v in values[:LISTED]) + more + "]"


class AttentionEngine:
    """The engine of ``kind="attention"`` (see the module's docstring)."""

    def suites(self) -> Mapping[str, Callable[[str, int], Sequence[Any]]]:
        """The attention suites (:mod:`~softmax_dispersion.testing.attention_suites`)."""
        return SUITE_BUILDERS

    def cases(self, session: Session, suites: Sequence[str]) -> list[Any]:
        """The cases of ``suites`` in the session's dtype."""
        return attention_suites(session.dtype, list(suites), session.seed)

    def evaluate(self, cases: Sequence[Any], session: Session) -> Iterator[CaseRun]:
        """Call every variant on every case; yield each case evaluated."""
        with one_blas_thread():
            for variant, caller in _variants(session):
                for case in cases:
                    run = self._run(case, session, caller, variant)
                    if run is not None:
                        yield run
                if caller is not session.call:
                    # the battery's behaviours and fresh_output read the main caller
                    main = session.call
                    if caller.modified and not main.modified:
                        main.modified = f"{variant}: {caller.modified}"
                    if caller.overwritten and not main.overwritten:
                        main.overwritten = f"{variant}: {caller.overwritten}"
                    main.calls += caller.calls

    def _output(
        self, case: AttentionCase, session: Session, caller: Caller, label: str
    ) -> tuple[AttentionProblem, F64, str]:
        called = caller(_call(case, label))
        inputs = called.inputs
        problem = attention_problem(
            inputs["q"],
            inputs["k"],
            inputs["v"],
            inputs.get("attn_mask"),
            case.is_causal,
            case.scale,
            dtype=session.dtype,
        )
        out = called.out.reshape(problem.output_shape).reshape(
            problem.bias.shape[0], problem.bias.shape[1], -1
        )
        return problem, out, called.out_dtype

    def _evaluated(
        self,
        case: AttentionCase,
        session: Session,
        label: str,
        problem: AttentionProblem,
        out: F64,
        judged: _Judgement,
        rows: Bool,
    ) -> Evaluated:
        """The rows ``rows`` (flattened ``(B·L)``) of one output as the properties see them."""
        flat = out.reshape(-1, out.shape[-1])
        q_rows = problem.q.reshape(-1, problem.q.shape[-1])
        code = reproducer(case, session.dtype, session.library.name, session.seed)
        return Evaluated(
            label=label,
            inputs=q_rows[rows],
            out=flat[rows],
            values=judged.values.reshape(flat.shape)[rows],
            allowed=judged.allowed.reshape(flat.shape)[rows],
            scale=judged.natural.reshape(flat.shape)[rows],
            arrays={"q": case.q, "k": case.k, "v": case.v, "attn_mask": case.mask},
            call=call_source(case),
            rebuild={"reproducer": code},
            hint=_hint(out, judged, problem),
        )

    def _run(
        self, case: AttentionCase, session: Session, caller: Caller, variant: str
    ) -> CaseRun | None:
        prefix = f"[{variant}] " if variant else ""
        try:
            problem, out, out_dtype = self._output(case, session, caller, prefix + case.name)
        except SoftmaxCallError as exc:
            if case.core:
                raise
            session.notes.add(
                f"{prefix}not checked on {case.name} (it raised; outside the core contract "
                f"of 4-D inputs with Ev = E): {str(exc).split(':')[0]}"
            )
            return None
        judged = judgement(out, problem, session.tolerance)
        if judged.unvouched:
            session.notes.add(
                f"{session.dtype}: T14 vouches for nothing on {judged.unvouched} query row(s) "
                f"of {case.name} (scores too large for the format: its first-order bound "
                "exceeds 1/2); judged against its capped allowance"
            )
        kept = judged.kept.reshape(-1)
        main = self._evaluated(case, session, prefix + case.name, problem, out, judged, kept)
        permuted = None
        if case.suite in ("random", "masks") and not case.is_causal and case.k.shape[-2] <= 1238:
            other = _permuted(case)
            _, other_out, _ = self._output(other, session, caller, prefix + other.name)
            ev = self._evaluated(
                other, session, prefix + other.name, problem, other_out, judged, kept
            )
            permuted = (np.arange(out.shape[-1]), ev)
        alone: list[tuple[int, F64]] = []
        # a library that compiles per shape (jax) pays a compilation for each new shape
        some = ("random/s7_e16", "masks/one_row_fully_masked")
        if case.name in some or (case.suite == "random" and not session.library.compiles_per_shape):
            alone = self._alone(case, session, caller, prefix, out, kept)
        return CaseRun(case=case, main=main, out_dtype=out_dtype, permuted=permuted, alone=alone)

    def _alone(
        self,
        case: AttentionCase,
        session: Session,
        caller: Caller,
        prefix: str,
        out: F64,
        kept: Bool,
    ) -> list[tuple[int, F64]]:
        """Query 0 alone and batch element 0 alone: ``(row of main, output row)`` pairs."""
        position = np.cumsum(kept) - 1  # flattened row → row of main
        length = out.shape[1]
        found = []
        for piece, rows in _pieces(case, length, out.shape[0]):
            _, other, _ = self._output(piece, session, caller, prefix + piece.name)
            flat = other.reshape(-1, other.shape[-1])
            for got, row in zip(flat, rows, strict=True):
                if kept[row]:
                    found.append((int(position[row]), got[None, :]))
        return found

    def policies(self, session: Session) -> Iterator[PolicyOutcome]:
        """The fully masked row and the row of ``finfo.min``, named, per variant."""
        with one_blas_thread():
            for variant, caller in _variants(session):
                for key, case in policy_cases(session.dtype, session.seed).items():
                    yield self._policy(key, case, session, caller, variant)

    def _policy(
        self, key: str, case: AttentionCase, session: Session, caller: Caller, variant: str
    ) -> PolicyOutcome:
        try:
            problem, out, _ = self._output(case, session, caller, f"policy {key!r}")
        except SoftmaxCallError as exc:
            cause = exc.__cause__
            observed = f"raises {type(cause).__name__}" if cause else f"error: {exc}"
            return PolicyOutcome(key, observed, label=variant)
        row = out[0, 1]
        finite = bool(np.all(np.isfinite(row)))
        shown = row[:LISTED]
        column = int(np.argmax(np.where(np.isnan(shown), np.inf, np.abs(shown))))
        expected = allowance = math.nan
        if key == "fully masked row":
            observed = _describe_fully_masked(row, problem.v[0])
        else:
            judged = judgement(out, problem, session.tolerance)
            want, allowed = judged.values[0, 1], judged.allowed[0, 1]
            if not finite:
                observed = _describe_fully_masked(row, problem.v[0])
            elif np.all(np.abs(row - want) <= allowed):
                observed = "rounded scores" if judged.answer["rounded scores"] else "exact"
            else:
                # finite, and neither answer within its allowance: the values are in the
                # report's worst input, at the entry farthest beyond its allowance
                observed = "wrong values"
                with np.errstate(all="ignore"):
                    gap = np.abs(shown - want[:LISTED]) / allowed[:LISTED]
                column = int(np.argmax(np.nan_to_num(gap, nan=np.inf)))
                expected, allowance = float(want[column]), float(allowed[column])
        worst = Worst(
            case=f"policy {key!r}",
            row=1,
            column=column,
            actual=float(row[column]),
            expected=expected,
            allowance=allowance,
            error_ulps=math.nan,
            allowed_ulps=math.nan,
            inputs=problem.q[0],
            arrays={"q": case.q, "k": case.k, "v": case.v, "attn_mask": case.mask},
            call=call_source(case),
            rebuild={
                "reproducer": reproducer(
                    case, session.dtype, session.library.name, session.seed, policy=key
                )
            },
        )
        hint = (
            "a row of finfo.min is a finite input: its answer is the attention without the "
            "mask (or, its scores rounded alike, the values' mean); NaN there comes from "
            "scores cast to a narrower format (float64's finfo.min overflows float32) or "
            "from treating the sentinel as a mask"
            if key == "finfo.min row"
            else ""
        )
        return PolicyOutcome(
            key,
            observed,
            worst,
            non_finite=not bool(np.all(np.isfinite(row))),
            label=variant,
            hint=hint,
        )

    def expected(self, arrays: Mapping[str, Any], dtype: str, options: Mapping[str, Any]) -> F64:
        """The certified output on ``arrays`` (``q``, ``k``, ``v``, optional ``attn_mask``,
        ``is_causal``, ``scale``), rounded to ``dtype``."""
        ref = reference_of(
            attention_problem(
                arrays["q"],
                arrays["k"],
                arrays["v"],
                arrays.get("attn_mask"),
                bool(arrays.get("is_causal", False)),
                arrays.get("scale"),
                dtype=dtype,
            )
        )
        return ref.values


def _permuted(case: AttentionCase) -> AttentionCase:
    keys = case.k.shape[-2]
    perm = np.random.default_rng(keys).permutation(keys)
    mask = None if case.mask is None else np.asarray(case.mask)[..., perm]
    return replace(
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


def _pieces(case: AttentionCase, length: int, batch: int) -> list[tuple[AttentionCase, list[int]]]:
    """Query 0 alone and batch element 0 alone, each with the flattened rows it stands for."""
    pieces = []
    full = (*case.q.shape[:-1], case.k.shape[-2])
    mask = None if case.mask is None else np.broadcast_to(np.asarray(case.mask), full)
    if not case.is_causal and length > 1:
        rows = [b * length for b in range(batch)]
        pieces.append(
            (
                replace(
                    case,
                    q=case.q[..., :1, :],
                    mask=None if mask is None else mask[..., :1, :],
                    name=f"{case.name} query 0 alone",
                    recipe=(
                        f"mask = None if mask is None else np.broadcast_to(mask, {full!r})"
                        "[..., :1, :]",
                        "q = q[..., :1, :]",
                    ),
                ),
                rows,
            )
        )
    if case.q.ndim >= 3 and case.q.shape[0] > 1:
        per_element = batch // case.q.shape[0]
        rows = list(range(per_element * length))
        pieces.append(
            (
                replace(
                    case,
                    q=case.q[:1],
                    k=case.k[:1] if case.k.shape[0] > 1 else case.k,
                    v=case.v[:1] if case.v.shape[0] > 1 else case.v,
                    mask=None if mask is None else mask[:1],
                    name=f"{case.name} batch 0 alone",
                    recipe=(
                        f"mask = None if mask is None else np.broadcast_to(mask, {full!r})[:1]",
                        "q = q[:1]",
                        "k = k[:1] if k.shape[0] > 1 else k",
                        "v = v[:1] if v.shape[0] > 1 else v",
                    ),
                ),
                rows,
            )
        )
    return pieces


ATTENTION = AttentionEngine()
"""The engine of ``kind="attention"``."""


def check_attention(fn: Callable[..., Any], **kwargs: Any) -> Any:
    """``check_softmax(fn, kind="attention", **kwargs)``: the attention battery.

    Examples
    --------
    >>> import numpy as np
    >>> def attention(q, k, v, attn_mask=None, is_causal=False, scale=None):
    ...     scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale  # 0 stays 0
    ...     s = q @ np.swapaxes(k, -1, -2) * scale
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
    from softmax_dispersion.testing.battery import check_softmax

    return check_softmax(fn, kind="attention", **kwargs)
