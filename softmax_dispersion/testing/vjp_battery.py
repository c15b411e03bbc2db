"""The VJP kinds' battery: ``fn(x, g)`` → ``p ⊙ (g − ⟨g, p⟩)`` or ``g − p·Σg``.

For each dtype, every case of the suites (:mod:`~softmax_dispersion.testing.vjp_suites`)
is given to the implementation once; its output is compared with the certified reference
(:mod:`~softmax_dispersion.testing.vjp_reference`) within T15's allowance
(:mod:`~softmax_dispersion.testing.vjp_tolerance`):

``accuracy``
    Every element of a row with a finite maximum within the allowance (errors counted in
    ULPs of T15's natural scale ``p_i(|g_i| + Σ_j p_j|g_j|)``, log-softmax
    ``|g_i| + p_i Σ_j|g_j|``).
``permutation``
    Permuting ``x`` and ``g`` together permutes the output, within twice the allowance.
``batch_independence``
    The first two rows alone, within twice the allowance of the same rows in the batch.
``shape_dtype``
    The output keeps ``x``'s shape and dtype.

Named behaviours: ``all -inf row`` (``NaN``, ``zeros``; for log-softmax also ``g``: the
weights taken as 0), ``subnormals`` and ``input``.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from softmax_dispersion.numerics.rounding import FORMATS
from softmax_dispersion.testing.adapters import Adapter, adapter, to_float64, wrong_library_hint
from softmax_dispersion.testing.attention_battery import (
    AttentionCallError,
    _add,
    _distance,
    _Judged,
    _name,
    _Tally,
)
from softmax_dispersion.testing.attention_reference import one_blas_thread
from softmax_dispersion.testing.report import PropertyResult, Report, Worst
from softmax_dispersion.testing.tolerance import Tolerance, flushing_is_named, ulp
from softmax_dispersion.testing.vjp_reference import VJPReference, reference_softmax_vjp, vjp_scale
from softmax_dispersion.testing.vjp_suites import (
    VJPCase,
    check_vjp_suite_names,
    vjp_policy_cases,
    vjp_suites,
)
from softmax_dispersion.testing.vjp_tolerance import vjp_allowance

__all__ = ["VJP_BEHAVIOURS", "VJP_KINDS", "VJP_PROPERTIES", "check_softmax_vjp"]

F64 = npt.NDArray[np.float64]
Bool = npt.NDArray[np.bool_]

VJP_KINDS = ("softmax_vjp", "log_softmax_vjp")
"""The two VJP kinds."""
VJP_PROPERTIES = ("accuracy", "permutation", "batch_independence", "shape_dtype")
"""The properties of the VJP battery, in report order."""
VJP_BEHAVIOURS: dict[str, tuple[str, ...]] = {
    "all -inf row": ("NaN", "zeros", "g"),
    "subnormals": ("flushed", "kept"),
    "input": ("kept", "modified"),
}
"""The named behaviours and their possible values (``raises`` too, for the row)."""


@dataclass
class _Output:
    x: F64  # exact inputs as given (rounded to the dtype)
    g: F64
    out: F64
    dtype: str


class _Caller:
    def __init__(self, fn: Callable[..., Any], library: Adapter, dtype: str) -> None:
        self.fn, self.library, self.dtype = fn, library, dtype
        self.modified = ""

    def __call__(self, x: F64, g: F64, where: str) -> _Output:
        xin = self.library.array(x, self.dtype)
        gin = self.library.array(g, self.dtype)
        exact_x, exact_g = self.library.values(xin), self.library.values(gin)
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = self.fn(xin, gin)
        except Exception as exc:
            hint = wrong_library_hint(self.library.name, exc)
            raise AttentionCallError(
                f"{_name(self.fn)} raised {type(exc).__name__}: {exc} ({where}, dtype "
                f"{self.dtype})" + (f"; {hint}" if hint else "")
            ) from exc
        if not self.modified and not (
            np.array_equal(self.library.values(xin), exact_x, equal_nan=True)
            and np.array_equal(self.library.values(gin), exact_g, equal_nan=True)
        ):
            self.modified = where
        if not (hasattr(out, "shape") and hasattr(out, "dtype")):
            raise AttentionCallError(
                f"{_name(self.fn)} returned {type(out).__name__}, expected an array ({where})"
            )
        values, name = to_float64(out)
        if values.shape != exact_x.shape:
            raise AttentionCallError(
                f"{_name(self.fn)} returned shape {values.shape} for x of shape "
                f"{exact_x.shape} ({where}, dtype {self.dtype})"
            )
        return _Output(exact_x, exact_g, values, name)


def _judge(actual: F64, ref: VJPReference, allowed: F64, natural: F64, dtype: str) -> _Judged:
    skip = ref.undefined[..., None]
    with np.errstate(all="ignore"):
        error = _distance(actual, np.nan_to_num(ref.centre), np.nan_to_num(ref.centre_low))
        error = np.where(np.isfinite(actual), error, np.inf)
        error = np.where(skip, 0.0, error)
        bad = (error - np.nan_to_num(ref.radius) > allowed) & ~skip
        unit = ulp(np.where(np.isfinite(natural), natural, 0.0), dtype)
    return _Judged(error, bad, error / unit, allowed / unit)


_CONVERT = {
    "numpy": "x, g = x.astype({dtype!r}), g.astype({dtype!r})",
    "torch": "import torch\nx, g = (torch.from_numpy(a).to(torch.{dtype}) for a in (x, g))",
    "jax": "import jax; jax.config.update('jax_enable_x64', True); import jax.numpy as jnp\n"
    "x, g = (jnp.asarray(a, dtype=jnp.{dtype}) for a in (x, g))",
}


def reproducer(
    case: VJPCase, kind: str, dtype: str, library: str, seed: int, index: tuple[int, ...]
) -> str:
    """Python code that rebuilds ``case`` in ``dtype`` and prints one element beside the reference.

    ``{fn}`` stands for the line that defines ``fn`` (the report fills it in).
    """
    base, _, derived = case.name.partition(" ")
    lines = [
        "import numpy as np",
        "from softmax_dispersion.testing.vjp_suites import vjp_suites",
        f"case = next(c for c in vjp_suites({dtype!r}, [{case.suite!r}], seed={seed}) "
        f"if c.name == {base!r})",
        "x, g = case.x, case.g",
    ]
    if derived == "permuted":
        size = case.x.shape[-1]
        lines.append(f"perm = np.random.default_rng({size}).permutation({size})")
        lines.append("x, g = x[..., perm], g[..., perm]")
    elif derived.startswith("row"):
        r = int(derived.split()[1])
        lines.append(f"x, g = x[{r}:{r + 1}], g[{r}:{r + 1}]")
    lines += [
        _CONVERT[library].format(dtype=dtype),
        "{fn}",
        "from softmax_dispersion.testing.vjp_reference import reference_softmax_vjp",
        f"ref = reference_softmax_vjp(x, g, log={kind == 'log_softmax_vjp'})",
        f"print(np.asarray(fn(x, g), dtype=float)[{index}], 'reference', ref.values[{index}])",
    ]
    return "\n".join(lines)


def _worst(
    judged: _Judged,
    actual: F64,
    expected: F64,
    allowed: F64,
    case: VJPCase,
    label: str,
    where: tuple[str, str, str, int] = ("softmax_vjp", "float64", "numpy", 0),
) -> tuple[tuple[bool, float], Worst, str]:
    with np.errstate(all="ignore"):
        ratio = np.where(judged.bad, judged.ulps / np.maximum(judged.allowed_ulps, 1e-300), 0.0)
        if not judged.bad.any():
            ratio = np.where(np.isfinite(judged.ulps), judged.ulps, 0.0)
    ratio = np.where(np.isnan(ratio), np.inf, ratio).reshape(-1, actual.shape[-1])
    flat = int(np.argmax(ratio))
    r, c = (int(i) for i in np.unravel_index(flat, ratio.shape))
    rows = actual.reshape(ratio.shape)
    failed = int(judged.bad.reshape(ratio.shape).any(axis=-1).sum())
    worst = Worst(
        case=label,
        row=r,
        column=c,
        actual=float(rows[r, c]),
        expected=float(expected.reshape(ratio.shape)[r, c]),
        allowance=float(allowed.reshape(ratio.shape)[r, c]),
        error_ulps=float(judged.ulps.reshape(ratio.shape)[r, c]),
        allowed_ulps=float(judged.allowed_ulps.reshape(ratio.shape)[r, c]),
        inputs=case.x.reshape(-1, case.x.shape[-1]),
        extra={"case": case.name, "g": case.g.reshape(-1, case.g.shape[-1])},
    )
    kind, dtype, library, seed = where
    index = np.unravel_index(r * actual.shape[-1] + c, actual.shape)
    worst.extra["reproducer"] = reproducer(
        replace(case, name=label), kind, dtype, library, seed, tuple(int(i) for i in index)
    )
    message = (
        f"{failed}/{ratio.shape[0]} rows of {label} beyond tolerance; worst "
        f"{worst.error_ulps:.4g} ULP (allowed {worst.allowed_ulps:.4g} ULP) at ({r}, {c}): "
        f"actual {worst.actual!r}, reference {worst.expected!r}"
    )
    return (bool(judged.bad.any()), float(ratio[r, c])), worst, message


def _hint(kind: str, out: _Output, judged: _Judged, ref: VJPReference) -> str:
    bad_rows = judged.bad.reshape(-1, out.out.shape[-1]).any(axis=-1)
    if not bad_rows.any():
        return ""
    actual = out.out.reshape(-1, out.out.shape[-1])[bad_rows]
    expected = ref.centre.reshape(-1, out.out.shape[-1])[bad_rows]
    if not np.all(np.isfinite(actual)):
        return "a NaN or infinity for finite logits: an exp overflowed, or −inf·0"
    if kind == "softmax_vjp":
        with np.errstate(all="ignore"):
            x = out.x.reshape(-1, out.x.shape[-1])[bad_rows]
            g = out.g.reshape(-1, out.x.shape[-1])[bad_rows]
            p = np.exp(x - x.max(axis=-1, keepdims=True))
            p = p / p.sum(axis=-1, keepdims=True)
            if np.allclose(actual, p * g, rtol=1e-2, atol=1e-6):
                return "p ⊙ g without the ⟨g, p⟩ term: the Jacobian's rank-one part is missing"
    if out.dtype == "float64":
        with np.errstate(all="ignore"):
            relative = np.nanmax(np.abs(actual - expected) / np.maximum(np.abs(expected), 1e-300))
        if 2.0**-30 < relative < 2.0**-18:
            return "an error near 2**-24 in float64: computed in float32 somewhere?"
    return ""


def _run_case(
    kind: str,
    call: _Caller,
    case: VJPCase,
    tol: Tolerance,
    flush: bool,
    tallies: dict[str, _Tally],
    seen: set[str],
    seed: int = 0,
) -> None:
    log = kind == "log_softmax_vjp"
    dtype = call.dtype
    where = (kind, dtype, call.library.name, seed)
    out = call(case.x, case.g, case.name)
    tallies["shape_dtype"].cases += 1
    if out.dtype != dtype:
        tallies["shape_dtype"].failures += 1
        tallies[
            "shape_dtype"
        ].message = f"output dtype {out.dtype} for inputs of {dtype} ({case.name})"
        tallies["shape_dtype"].hint = "the output must keep x's dtype"
    ref = reference_softmax_vjp(out.x, out.g, log=log, dtype=dtype)
    allowed = vjp_allowance(ref, out.x, out.g, tolerance=tol)
    natural = vjp_scale(
        ref.probs.reshape(-1, out.x.shape[-1]), out.g.reshape(-1, out.x.shape[-1]), log
    ).reshape(out.x.shape)
    judged = _judge(out.out, ref, allowed, natural, dtype)
    bad = judged.bad
    tiny = 2.0 ** FORMATS[dtype].emin
    with np.errstate(all="ignore"):
        sub = (np.abs(ref.centre) < tiny) & (ref.centre != 0)
        flushed = bad & sub & (out.out == 0)
    if flushed.any():
        seen.add("flushed")
        if flush and flushing_is_named(dtype):
            bad = bad & ~flushed
            judged = replace(judged, bad=bad, ulps=np.where(flushed, 0.0, judged.ulps))
    if (sub & ~bad & (out.out != 0)).any():
        seen.add("kept")
    rows = int(np.sum(~ref.undefined))
    key, worst, message = _worst(judged, out.out, ref.centre, allowed, case, case.name, where)
    _add(
        tallies["accuracy"],
        rows,
        int(bad.reshape(-1, out.x.shape[-1]).any(axis=-1).sum()),
        float(np.max(judged.ulps)) if judged.ulps.size else 0.0,
        key,
        lambda: (worst, message, _hint(kind, out, judged, ref)),
    )
    if case.suite in ("random", "neg_inf") and case.x.shape[-1] > 1:
        perm = np.random.default_rng(case.x.shape[-1]).permutation(case.x.shape[-1])
        other = call(case.x[..., perm], case.g[..., perm], f"{case.name} permuted")
        _compare(
            tallies["permutation"],
            other.out,
            out.out[..., perm],
            2 * allowed[..., perm],
            natural[..., perm],
            ref.undefined,
            case,
            f"{case.name} permuted",
            where,
            "the output depends on the order of the entries",
        )
    if case.suite == "random" and case.x.ndim == 2 and case.x.shape[0] >= 2:
        for r in range(2):
            other = call(case.x[r : r + 1], case.g[r : r + 1], f"{case.name} row {r} alone")
            _compare(
                tallies["batch_independence"],
                other.out,
                out.out[r : r + 1],
                2 * allowed[r : r + 1],
                natural[r : r + 1],
                ref.undefined[r : r + 1],
                case,
                f"{case.name} row {r} alone",
                where,
                "a row's output depends on the other rows",
            )


def _compare(
    tally: _Tally,
    other: F64,
    base: F64,
    allowed: F64,
    natural: F64,
    undefined: Bool,
    case: VJPCase,
    label: str,
    where: tuple[str, str, str, int],
    hint: str,
) -> None:
    dtype = where[1]
    skip = undefined[..., None]
    with np.errstate(all="ignore"):
        same = (other == base) | (np.isnan(other) & np.isnan(base))
        error = np.where(same, 0.0, np.abs(other - base))
        error = np.where(np.isnan(error), np.inf, error)
        error = np.where(skip, 0.0, error)
        bad = (error > allowed) & ~skip
        unit = ulp(np.where(np.isfinite(natural), natural, 0.0), dtype)
    judged = _Judged(error, bad, error / unit, allowed / unit)
    key, worst, message = _worst(judged, other, base, allowed, case, label, where)
    _add(
        tally,
        int(np.sum(~undefined)),
        int(bad.reshape(-1, other.shape[-1]).any(axis=-1).sum()),
        0.0,
        key,
        lambda: (worst, message.replace("reference", "base"), hint),
    )


def _policy(kind: str, call: _Caller) -> str:
    case = vjp_policy_cases(call.dtype)["all -inf row"]
    try:
        out = call(case.x, case.g, "policy 'all -inf row'")
    except AttentionCallError as exc:
        cause = exc.__cause__
        return f"raises {type(cause).__name__}" if cause else f"error: {exc}"
    row = out.out[1]
    with np.errstate(all="ignore"):
        if np.all(np.isnan(row)):
            return "NaN"
        if np.all(row == 0):
            return "zeros"
        if kind == "log_softmax_vjp" and np.array_equal(row, out.g[1]):
            return "g"
    return "[" + ", ".join(f"{float(v):.4g}" for v in row) + "]"


def check_softmax_vjp(
    fn: Callable[..., Any],
    *,
    kind: str = "softmax_vjp",
    library: str = "numpy",
    dtypes: Iterable[str] | None = None,
    suites: Iterable[str] | None = None,
    seed: int = 0,
    tolerance: object = None,
    policies: Mapping[str, str] | None = None,
) -> Report:
    """Run the VJP battery against ``fn(x, g)``.

    Parameters
    ----------
    fn
        ``fn(x, g)`` → the VJP of softmax (``kind="softmax_vjp"``: ``p ⊙ (g − ⟨g, p⟩)``)
        or log-softmax (``"log_softmax_vjp"``: ``g − p·Σg``) over the last axis, shaped
        and typed like ``x``.
    kind
        ``"softmax_vjp"`` or ``"log_softmax_vjp"``.
    library, dtypes, suites, seed, tolerance, policies
        As for :func:`~softmax_dispersion.testing.attention_battery.check_attention`;
        suites from :data:`~softmax_dispersion.testing.vjp_suites.VJP_SUITES`, policies
        from :data:`VJP_BEHAVIOURS`.

    Returns
    -------
    Report
        Per property and dtype: rows checked, failures, max ULP error, worst case.

    Examples
    --------
    >>> import numpy as np
    >>> def vjp(x, g):
    ...     p = np.exp(x - x.max(axis=-1, keepdims=True))
    ...     p = p / p.sum(axis=-1, keepdims=True)
    ...     return p * (g - (p * g).sum(axis=-1, keepdims=True))
    >>> check_softmax_vjp(vjp, dtypes=["float64"], suites=["random"]).passed
    True
    >>> check_softmax_vjp(lambda x, g: vjp(x, g) * (1 + 1e-12), dtypes=["float64"],
    ...     suites=["random"]).passed
    False
    """
    start = time.perf_counter()
    if kind not in VJP_KINDS:
        raise ValueError(f"unknown VJP kind {kind!r}; known: {', '.join(VJP_KINDS)}")
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
            known = ", ".join(library_adapter.dtypes)
            raise ValueError(f"unknown dtype {dtype!r} for {library}; known: {known}")
    suite_names = check_vjp_suite_names(
        None if suites is None else ([suites] if isinstance(suites, str) else list(suites))
    )
    required = dict(policies or {})
    for key, value in required.items():
        if key not in VJP_BEHAVIOURS:
            raise ValueError(f"unknown policy {key!r}; known: {', '.join(VJP_BEHAVIOURS)}")
        if value not in VJP_BEHAVIOURS[key] and not (
            key == "all -inf row" and value.startswith("raises")
        ):
            raise ValueError(
                f"policy {key!r} is one of {', '.join(VJP_BEHAVIOURS[key])}, not {value!r}"
            )
    from softmax_dispersion.testing.battery import _source

    report = Report(
        kind=kind,
        source=_source(fn),
        library=library,
        implementation=_name(fn),
        tolerance=f"T15 ({tol.label})",
    )
    observed: dict[str, dict[str, str]] = {}
    flush = required.get("subnormals") != "kept"
    with library_adapter.session(), one_blas_thread():
        for dtype in chosen:
            call = _Caller(fn, library_adapter, dtype)
            tallies = {name: _Tally() for name in VJP_PROPERTIES}
            seen: set[str] = set()
            for case in vjp_suites(dtype, suite_names, seed):
                _run_case(kind, call, case, tol, flush, tallies, seen, seed)
            for name, tally in tallies.items():
                if tally.cases:
                    report.results.append(tally.result(name, dtype))
            found = {
                "all -inf row": _policy(kind, call),
                "subnormals": "flushed"
                if "flushed" in seen
                else "kept"
                if "kept" in seen
                else "not exercised",
                "input": "modified" if call.modified else "kept",
            }
            for key, value in found.items():
                observed.setdefault(key, {})[dtype] = value
    for key, by_dtype in observed.items():
        values = set(by_dtype.values())
        report.policies[key] = (
            values.pop()
            if len(values) == 1
            else "; ".join(f"{d}: {v}" for d, v in by_dtype.items())
        )
        for dtype, value in by_dtype.items():
            named = value in VJP_BEHAVIOURS[key] or value.startswith("raises")
            if key == "all -inf row" and not named:
                report.results.append(
                    PropertyResult(
                        name="policy",
                        dtype=dtype,
                        cases=1,
                        failures=1,
                        max_ulp=0.0,
                        message="1/1 failed; all -inf row: output is none of NaN, zeros, g: "
                        + value,
                        hint="a row with no finite logit has no VJP: NaN, zeros (or g for "
                        "log-softmax), nothing else",
                    )
                )
            wanted = required.get(key)
            if (
                wanted is not None
                and value != wanted
                and not (key == "subnormals" and value == "not exercised")
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
    report.seconds = time.perf_counter() - start
    return report
