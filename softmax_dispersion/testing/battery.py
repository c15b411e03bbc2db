"""``check_softmax``: run the oracle's property battery against a softmax callable.

Properties, each reported per dtype (cases, failures, max ULP error, worst input):

``accuracy``
    Every element within :func:`~softmax_dispersion.testing.tolerance.allowed_error` of
    the certified, correctly rounded reference (T12's bound).
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
    T1: every coefficient within ``[1/(1+(n−1)c), c/(c+n−1)]``, ``c = exp(δ·β)`` with
    the row's spread ``δ`` and effective inverse temperature ``β`` (``1``, ``s·log n``
    or the adaptive ``β``), within the allowance (in log space for log-softmax).
``batch_independence``
    Each of the first two rows of a batch, evaluated alone as shape ``(1, n)``, within
    twice the allowance of the same row in the batch.  Within tolerance rather than
    exactly: libraries pick different kernels (vector widths, blockings) for different
    batch shapes, and that is not a bug.
``shape_dtype``
    The output has the input's dtype (a wrong *shape* raises :class:`SoftmaxCallError`).

Non-finite inputs (``+inf``, a row of only ``−inf``, NaN, NaN among masked entries) are
*policies*: what the callable returns is named in :attr:`Report.policies`, and fails only
when the caller requires a different one (``policies=``).

For ``"ssmax"`` the reference is ``softmax(s·log(n)·x)`` with ``s·log n`` exact, and
the tolerance charges the computed ``β = s·log n`` a relative error of ``6u`` (a 2-ulp
``log``, the product, ``s`` rounded).  For ``"adaptive_temperature"`` the reference
takes ``β(H)`` of the paper's rule from the entropy ``H = −Σ p_j log(p_j + 10⁻⁹)`` of the
exact softmax (float64, error ``~10⁻¹⁵``); the implementation's float entropy is off by
at most ``ΔH = Σ_j a_j(L_j + 1) + Σ_j p_j((2k_log + 2)u L_j + u) + γH`` with ``a_j``
the allowance of its first softmax and ``L_j = −log(p_j + 10⁻⁹)``, so its ``β`` by
``Δβ = 1.5·max|P'|·ΔH`` (``P'`` at ``H`` and ``H ± ΔH``; 0 when ``β = 1`` there; at most
``β_max − 1 < 1.43``), plus ``8u·Σ|c_k|H^k`` for evaluating the polynomial.  That relative
``β`` error enters the scaled-argument model of
:mod:`~softmax_dispersion.testing.tolerance`.
"""

from __future__ import annotations

import builtins
import functools
import json
import math
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from softmax_dispersion.numerics.rounding import FORMATS
from softmax_dispersion.testing.assertions import compare, short_row
from softmax_dispersion.testing.reference import as_float64
from softmax_dispersion.testing.suites import POLICY_ROWS, Case, build_suites
from softmax_dispersion.testing.tolerance import (
    Tolerance,
    accumulation_format,
    allowed_error,
)

__all__ = [
    "KINDS",
    "LIBRARY_DTYPES",
    "PROPERTIES",
    "PropertyResult",
    "Report",
    "SoftmaxCallError",
    "check_softmax",
]

F64 = npt.NDArray[np.float64]

KINDS = ("softmax", "log_softmax", "adaptive_temperature", "ssmax")
"""The functions :func:`check_softmax` knows."""
LIBRARY_DTYPES: dict[str, tuple[str, ...]] = {
    "numpy": ("float16", "float32", "float64"),
    "torch": ("float16", "bfloat16", "float32", "float64"),
    "jax": ("float16", "bfloat16", "float32", "float64"),
}
"""The float dtypes tested by default, per library."""
PROPERTIES = (
    "accuracy",
    "row_sum",
    "shift_invariance",
    "permutation",
    "t1_bound",
    "batch_independence",
    "shape_dtype",
)
"""The properties of the battery, in report order."""


class SoftmaxCallError(ValueError):
    """The callable under test raised, or returned something that is not an output."""


@dataclass(frozen=True)
class PropertyResult:
    """One property's result for one dtype.

    Attributes
    ----------
    property, dtype : str
        What was checked, in which dtype.
    cases : int
        Rows (or outputs) checked.
    failures : int
        How many of them failed.
    max_ulp : float
        The largest error in ULPs of the dtype (0 where the property has none).
    worst_input : str
        The case, index and a short repr of the row of the worst element.
    message : str
        ``"ok"``, or what failed.
    reproducer : str
        Python code rebuilding the worst input.
    """

    property: str
    dtype: str
    cases: int
    failures: int
    max_ulp: float
    worst_input: str
    message: str
    reproducer: str = ""

    @builtins.property
    def passed(self) -> bool:
        """Whether no case failed."""
        return self.failures == 0


def _finite(value: float) -> float | str:
    return value if math.isfinite(value) else str(value)


@dataclass
class Report:
    """The result of :func:`check_softmax`.

    Attributes
    ----------
    kind, library, implementation : str
        What was checked.
    results : list of PropertyResult
        One per property and dtype.
    policies : dict of str to str
        The observed behaviour on each non-finite input (not failures).
    seconds : float
        Wall time of the check.
    """

    kind: str
    library: str
    implementation: str
    results: list[PropertyResult] = field(default_factory=list)
    policies: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        """Whether every property passed for every dtype."""
        return all(result.passed for result in self.results)

    @property
    def failures(self) -> list[PropertyResult]:
        """The failed results."""
        return [result for result in self.results if not result.passed]

    def to_json(self) -> str:
        """The report as a JSON object (infinite ULP errors as the string ``"inf"``)."""
        results = []
        for result in self.results:
            item = asdict(result)
            item["max_ulp"] = _finite(result.max_ulp)
            item["passed"] = result.passed
            results.append(item)
        return json.dumps(
            {
                "kind": self.kind,
                "library": self.library,
                "implementation": self.implementation,
                "passed": self.passed,
                "seconds": round(self.seconds, 3),
                "results": results,
                "policies": self.policies,
            },
            indent=2,
        )

    def _grid(self) -> tuple[list[str], list[str], dict[tuple[str, str], PropertyResult]]:
        dtypes = list(dict.fromkeys(result.dtype for result in self.results))
        props = list(dict.fromkeys(result.property for result in self.results))
        cells = {(result.property, result.dtype): result for result in self.results}
        return props, dtypes, cells

    @staticmethod
    def _cell(result: PropertyResult | None) -> str:
        if result is None:
            return "-"
        verdict = "ok" if result.passed else f"FAIL {result.failures}/{result.cases}"
        return f"{verdict} ({result.max_ulp:.3g} ULP)" if result.max_ulp else verdict

    def table(self) -> str:
        """A plain-text table: properties × dtypes, max ULP error, verdict."""
        props, dtypes, cells = self._grid()
        header = ["property", *dtypes, "verdict"]
        rows = []
        for prop in props:
            found = [cells.get((prop, dtype)) for dtype in dtypes]
            ok = all(r is None or r.passed for r in found)
            rows.append([prop, *(self._cell(r) for r in found), "pass" if ok else "FAIL"])
        widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
        lines = [
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
            for row in [header, *rows]
        ]
        lines.insert(1, "  ".join("-" * width for width in widths))
        verdict = "PASSED" if self.passed else f"FAILED ({len(self.failures)} property/dtype pairs)"
        return "\n".join([f"{self.kind} [{self.library}] {self.implementation}: {verdict}", *lines])

    def to_markdown(self) -> str:
        """The report as Markdown: a table, the failures and the observed policies."""
        props, dtypes, cells = self._grid()
        verdict = "passed" if self.passed else "**failed**"
        lines = [
            f"### `{self.implementation}` ({self.kind}, {self.library}): {verdict}",
            "",
            "| property | " + " | ".join(dtypes) + " |",
            "|---|" + "---|" * len(dtypes),
        ]
        for prop in props:
            lines.append(
                f"| {prop} | " + " | ".join(self._cell(cells.get((prop, d))) for d in dtypes) + " |"
            )
        if self.failures:
            lines += ["", "Failures:", ""]
            lines += [f"- {r.property} [{r.dtype}]: {r.message}" for r in self.failures]
        if self.policies:
            lines += ["", "Non-finite policies (reported, not failed):", ""]
            lines += [f"- {key} → {value}" for key, value in self.policies.items()]
        return "\n".join(lines)

    def raise_if_failed(self) -> None:
        """Raise :class:`AssertionError` listing every failure and its reproducer."""
        __tracebackhide__ = True
        if self.passed:
            return
        lines = [f"{self.implementation} ({self.kind}, {self.library}) failed the oracle:"]
        for r in self.failures:
            lines.append(f"- {r.property} [{r.dtype}]: {r.message}")
            lines.append(f"    worst: {r.worst_input}")
            if r.reproducer:
                lines.append(f"    reproduce: {r.reproducer}")
        raise AssertionError("\n".join(lines))


# --- libraries ------------------------------------------------------------------------------


class _Adapter:
    """Builds arrays of a library from float64 rows (the library is imported on request)."""

    def __init__(self, library: str) -> None:
        if library not in LIBRARY_DTYPES:
            raise ValueError(f"unknown library {library!r}; known: {', '.join(LIBRARY_DTYPES)}")
        self.library = library
        self.module: Any = None
        if library == "torch":
            import torch

            self.module = torch
        elif library == "jax":
            import jax.numpy as jnp  # type: ignore[import-not-found, unused-ignore]

            self.module = jnp

    def make(self, rows: F64, dtype: str) -> Any:
        if self.library == "numpy":
            with np.errstate(all="ignore"):
                return np.ascontiguousarray(rows).astype(dtype)
        if self.library == "torch":
            torch = self.module
            return torch.from_numpy(np.ascontiguousarray(rows)).to(getattr(torch, dtype))
        jnp = self.module
        return jnp.asarray(rows, dtype=getattr(jnp, dtype))


def _name(fn: Callable[..., Any]) -> str:
    module = getattr(fn, "__module__", None) or ""
    qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    return f"{module}.{qualname}" if module else str(qualname)


def _call(fn: Callable[[Any], Any], xin: Any, where: str, dtype: str) -> tuple[F64, str]:
    shape = tuple(int(d) for d in xin.shape)
    try:
        # Warnings (overflow in exp, ...) are not the battery's verdict: outputs are.
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(xin)
    except Exception as exc:
        raise SoftmaxCallError(
            f"{_name(fn)} raised {type(exc).__name__}: {exc} (input {where}, shape {shape}, "
            f"dtype {dtype})"
        ) from exc
    try:
        values, name = as_float64(out)
    except Exception as exc:
        raise SoftmaxCallError(
            f"{_name(fn)} returned {type(out).__name__}, not an array (input {where}, "
            f"dtype {dtype})"
        ) from exc
    if values.shape != shape:
        raise SoftmaxCallError(
            f"{_name(fn)} returned shape {values.shape} for an input of shape {shape} "
            f"(input {where}, dtype {dtype}): it must normalise over the last axis and keep "
            "the shape"
        )
    return values, name


# --- references -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Ref:
    values: F64
    probs: F64
    beta: F64
    beta_error: F64


def _dense(rows: F64, **kwargs: Any) -> F64:
    from softmax_dispersion.numerics.dense import certified_softmax_dense

    return np.asarray(certified_softmax_dense(rows, **kwargs).values)


def _adaptive_beta(rows: F64, probs: F64, dtype: str) -> tuple[F64, F64]:
    """The rule's ``β`` from the exact entropy, and the relative error allowed to it."""
    from softmax_dispersion.theory.adaptive_temperature import (
        COEFFICIENTS,
        ENTROPY_OFFSET,
        adaptive_inverse_temperature,
    )
    from softmax_dispersion.theory.rounding_error import gamma_pairwise

    coefficients = np.array([float(c) for c in COEFFICIENTS])
    derivative = np.polyder(coefficients)
    u = FORMATS[dtype].unit_roundoff
    n = rows.shape[-1]
    gamma = float(gamma_pairwise.numpy(float(n), FORMATS[accumulation_format(dtype)].unit_roundoff))
    with np.errstate(all="ignore"):
        logs = -np.log(probs + float(ENTROPY_OFFSET))
        entropy = np.sum(probs * logs, axis=-1)
        beta = np.asarray(adaptive_inverse_temperature.numpy(entropy), dtype=np.float64)
        first = allowed_error(rows, dtype=dtype, values=probs, probs=probs)
        first = np.where(np.isfinite(first), first, 0.0)
        d_entropy = (
            np.sum(first * (logs + 1), axis=-1)
            + np.sum(probs * ((2 * 2 + 2) * u * logs + u), axis=-1)
            + gamma * entropy
            + 1e-13
        )
        slope = np.zeros_like(entropy)
        for h in (entropy - d_entropy, entropy, entropy + d_entropy):
            sharpening = (h > 0.5) & (np.polyval(coefficients, h) > 1)
            slope = np.maximum(slope, np.where(sharpening, np.abs(np.polyval(derivative, h)), 0.0))
        near = np.zeros_like(entropy, dtype=bool)
        for h in (entropy - d_entropy, entropy, entropy + d_entropy):
            near |= adaptive_inverse_temperature.numpy(h) > 1
        d_beta = np.where(near, np.minimum(1.5 * slope * d_entropy, 1.43), 0.0)
        d_beta = np.where(d_entropy > 1, 1.43, d_beta)
        size = np.polyval(np.abs(coefficients), np.abs(entropy))
        error = d_beta / beta + 8 * u * size / beta + 2.0**-52
    return beta, error


def _reference(rows: F64, kind: str, dtype: str, s: float | None) -> _Ref:
    n = rows.shape[-1]
    ones = np.ones(rows.shape[0])
    u = FORMATS[dtype].unit_roundoff
    if kind in ("softmax", "log_softmax"):
        values = _dense(rows, log=kind == "log_softmax", format=dtype)
        probs = values if (dtype == "float64" and kind == "softmax") else _dense(rows)
        return _Ref(values, probs, ones, 0 * ones)
    if kind == "ssmax":
        assert s is not None
        if n == 1:  # β = s·log 1 = 0: the one coefficient is 1
            return _Ref(np.zeros_like(rows) + 1.0, np.zeros_like(rows) + 1.0, 0 * ones, 0 * ones)
        values = _dense(rows, s=s, format=dtype)
        probs = _dense(rows, s=s)
        return _Ref(values, probs, ones * s * math.log(n), ones * 6 * u)
    base = _dense(rows)
    beta, error = _adaptive_beta(rows, base, dtype)
    values = np.empty_like(rows)
    probs = np.empty_like(rows)
    for r in range(rows.shape[0]):
        theta: float | int = 1 if beta[r] == 1.0 else 1.0 / float(beta[r])
        values[r] = _dense(rows[r : r + 1], theta=theta, format=dtype)[0]
        probs[r] = _dense(rows[r : r + 1], theta=theta)[0]
    return _Ref(values, probs, beta, error)


# --- the battery ----------------------------------------------------------------------------


@dataclass
class _Tally:
    cases: int = 0
    failures: int = 0
    max_ulp: float = 0.0
    worst_key: tuple[bool, float] = (False, -1.0)
    worst_input: str = ""
    message: str = ""
    reproducer: str = ""

    def add(
        self,
        cases: int,
        failures: int,
        max_ulp: float,
        score: float,
        describe: Callable[[], tuple[str, str, str]],
    ) -> None:
        self.cases += cases
        self.failures += failures
        if math.isnan(max_ulp):
            max_ulp = math.inf
        self.max_ulp = max(self.max_ulp, max_ulp)
        if math.isnan(score):
            score = math.inf
        key = (failures > 0, score)
        if key > self.worst_key:
            self.worst_key = key
            self.worst_input, message, self.reproducer = describe()
            if failures:
                self.message = message


def _compare_block(
    tally: _Tally,
    case: Case,
    dtype: str,
    seed: int,
    actual: F64,
    expected: F64,
    allowed: F64,
    what: str,
    rows: F64,
    shift: float = 0.0,
    log: bool = False,
) -> None:
    result = compare(actual, expected, allowed, dtype, log=log)
    bad_rows = result.bad.any(axis=-1)
    r, c = result.worst
    with np.errstate(all="ignore"):
        score = float(result.ulps[r, c] / max(result.allowed_ulps[r, c], 1e-300))
    finite = result.ulps[np.isfinite(result.ulps)]
    max_ulp = float(np.max(result.ulps)) if result.ulps.size else 0.0
    del finite

    def describe() -> tuple[str, str, str]:
        worst = (
            f"{case.name} index ({r}, {c}): actual {float(actual[r, c])!r}, {what} "
            f"{float(expected[r, c])!r}, row {short_row(rows[r])}"
        )
        message = (
            f"{int(bad_rows.sum())}/{rows.shape[0]} rows of {case.name} beyond tolerance; "
            f"worst {result.ulps[r, c]:.4g} ULP (allowed {result.allowed_ulps[r, c]:.4g}) "
            f"at index ({r}, {c}): actual {float(actual[r, c])!r}, {what} {float(expected[r, c])!r}"
        )
        shifted = f" + {shift!r}" if shift else ""
        reproducer = (
            "from softmax_dispersion.testing.suites import build_case; "
            f"x = (build_case({case.name!r}, {dtype!r}, seed={seed})[{r}:{r + 1}]{shifted})"
            f".astype({dtype!r})"
        )
        return worst, message, reproducer

    tally.add(rows.shape[0], int(bad_rows.sum()), max_ulp, score, describe)


def _row_failures(
    tally: _Tally,
    case: Case,
    dtype: str,
    seed: int,
    bad: npt.NDArray[np.bool_],
    rows: F64,
    text: str | Callable[[int], str],
) -> None:
    failures = int(bad.sum())
    r = int(np.argmax(bad)) if failures else 0

    def describe() -> tuple[str, str, str]:
        worst = f"{case.name} row {r}: {short_row(rows[r])}"
        message = (
            f"{failures}/{rows.shape[0]} rows of {case.name}: {text(r) if callable(text) else text}"
        )
        reproducer = (
            "from softmax_dispersion.testing.suites import build_case; "
            f"x = build_case({case.name!r}, {dtype!r}, seed={seed})[{r}:{r + 1}].astype({dtype!r})"
        )
        return worst, message, reproducer

    tally.add(rows.shape[0], failures, 0.0, float(failures), describe)


def _sum_text(total: F64, room: F64, r: int) -> str:
    return f"row {r} sums to {float(total[r])!r} (allowed 1 ± {float(room[r]):.3g})"


def _t1_text(low: F64, high: F64, got: F64, r: int) -> str:
    return (
        f"row {r} has a coefficient outside T1's [{float(low[r, 0]):.4g}, "
        f"{float(high[r, 0]):.4g}]: min {float(np.min(got[r])):.4g}, max "
        f"{float(np.max(got[r])):.4g}"
    )


def _t1_bounds(rows: F64, beta: F64) -> tuple[F64, F64, npt.NDArray[np.bool_]]:
    from softmax_dispersion.theory.dispersion import dispersion_lower, dispersion_upper

    n = rows.shape[-1]
    usable = np.all(np.isfinite(rows), axis=-1)
    with np.errstate(all="ignore"):
        spread = np.where(usable, np.max(rows, axis=-1) - np.min(rows, axis=-1), 0.0)
        theta = np.where(beta > 0, 1.0 / np.where(beta > 0, beta, 1.0), np.inf)
        upper = np.asarray(dispersion_upper.numpy(float(n), spread, theta), dtype=np.float64)
        lower = np.asarray(dispersion_lower.numpy(float(n), spread, theta), dtype=np.float64)
    upper = np.where(np.isfinite(upper), upper, 1.0) * (1 + 1e-14)
    lower = np.where(np.isfinite(lower), lower, 0.0) * (1 - 1e-14)
    return lower[:, None], upper[:, None], usable


def _describe(out: F64, limit: F64, log: bool) -> str:
    zero = -np.inf if log else 0.0
    with np.errstate(all="ignore"):
        if np.all(np.isnan(out)):
            return "NaN row"
        if np.all(out == zero):
            return "-inf row" if log else "zeros"
        if np.all(np.isfinite(limit)) and np.allclose(out, limit, rtol=1e-2, atol=1e-3):
            return (
                "one-hot shares (the limit)" if np.any(limit == (0 if log else 1)) else "the limit"
            )
        if np.all(np.isfinite(out)) and np.all(out == out[0]):
            return f"uniform {float(out[0]):.4g}"
    return "[" + ", ".join(f"{float(v):.4g}" for v in out) + "]"


def _policies(
    fn: Callable[[Any], Any], adapter: _Adapter, dtype: str, kind: str, s: float | None
) -> dict[str, str]:
    found = {}
    log = kind == "log_softmax"
    for key, row in POLICY_ROWS.items():
        rows = np.array([row], dtype=np.float64)
        xin = adapter.make(rows, dtype)
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out, _ = _call(fn, xin, f"policy {key!r}", dtype)
        except SoftmaxCallError as exc:
            cause = exc.__cause__
            found[key] = f"raises {type(cause).__name__}" if cause else f"error: {exc}"
            continue
        theta = 1
        kwargs: dict[str, Any] = {"log": log, "format": "float64"}
        if kind == "ssmax" and s is not None:
            kwargs["s"] = s
        limit = _dense(rows, theta=theta, **kwargs)
        found[key] = _describe(out[0], limit[0], log)
    return found


def _check_dtype(
    fn: Callable[[Any], Any],
    adapter: _Adapter,
    dtype: str,
    kind: str,
    s: float | None,
    cases: Sequence[Case],
    seed: int,
    tol: Tolerance,
) -> dict[str, _Tally]:
    tallies = {prop: _Tally() for prop in PROPERTIES}
    log = kind == "log_softmax"
    judge = functools.partial(_compare_block, log=log)
    rng = np.random.default_rng(seed + 7)
    shifts = (64.0, -64.0) if dtype == "float16" else (64.0, -64.0, 1000.0)

    def run(rows: F64, where: str) -> tuple[F64, F64, str]:
        xin = adapter.make(rows, dtype)
        exact, _ = as_float64(xin)
        out, name = _call(fn, xin, where, dtype)
        return exact, out, name

    def allowance(rows: F64, ref: _Ref) -> F64:
        return allowed_error(
            rows,
            dtype=dtype,
            log=log,
            beta=ref.beta,
            beta_error=ref.beta_error,
            values=ref.values,
            probs=ref.probs,
            tolerance=tol,
        )

    for case in cases:
        exact, out, name = run(case.rows, case.name)
        _row_failures(
            tallies["shape_dtype"],
            case,
            dtype,
            seed,
            np.array([name != dtype]),
            exact[:1],
            f"output dtype {name}, input dtype {dtype}",
        )
        ref = _reference(exact, kind, dtype, s)
        allowed = allowance(exact, ref)
        judge(tallies["accuracy"], case, dtype, seed, out, ref.values, allowed, "reference", exact)

        # row sums
        with np.errstate(all="ignore"):
            n = exact.shape[-1]
            if log:
                total = np.sum(np.exp(out), axis=-1)
                spread = np.where(ref.probs > 0, ref.probs * np.expm1(allowed), 0.0)
                room = np.sum(spread, axis=-1) + n * 2.0**-52
            else:
                total = np.sum(out, axis=-1)
                room = np.sum(allowed, axis=-1) + n * 2.0**-52
            bad = ~(np.abs(total - 1) <= room)
        _row_failures(
            tallies["row_sum"],
            case,
            dtype,
            seed,
            bad,
            exact,
            partial(_sum_text, total, room),
        )

        # T1
        lower, upper, usable = _t1_bounds(exact, ref.beta)
        with np.errstate(all="ignore"):
            if log:
                low_b, high_b = np.log(lower), np.log(upper)
            else:
                low_b, high_b = lower, upper
            inside = (out >= low_b - allowed) & (out <= high_b + allowed)
            bad = usable & ~np.all(inside, axis=-1)
        _row_failures(
            tallies["t1_bound"],
            case,
            dtype,
            seed,
            bad,
            exact,
            partial(_t1_text, low_b, high_b, out),
        )

        off_block = case.name.startswith("bad_inputs/off")
        if (case.suite == "random" and 2 <= n <= 1238) or off_block:
            for shift in shifts:
                shifted, out_s, _ = run(case.rows + shift, f"{case.name} + {shift}")
                ref_s = _reference(shifted, kind, dtype, s)
                judge(
                    tallies["shift_invariance"],
                    case,
                    dtype,
                    seed,
                    out_s,
                    ref_s.values,
                    allowance(shifted, ref_s),
                    f"reference of x + {shift}",
                    shifted,
                    shift,
                )
            perm = rng.permutation(n)
            _, out_p, _ = run(exact[:, perm], f"{case.name} permuted")
            judge(
                tallies["permutation"],
                case,
                dtype,
                seed,
                out_p,
                out[:, perm],
                2 * allowed[:, perm],
                "f(x) permuted",
                exact[:, perm],
            )
        if exact.shape[0] >= 2 and n >= 2:
            for r in range(2):
                _, alone, _ = run(exact[r : r + 1], f"{case.name} row {r} alone")
                judge(
                    tallies["batch_independence"],
                    case,
                    dtype,
                    seed,
                    alone,
                    out[r : r + 1],
                    2 * allowed[r : r + 1],
                    "the same row in the batch",
                    exact[r : r + 1],
                )
    return tallies


def check_softmax(
    fn: Callable[[Any], Any],
    *,
    kind: str = "softmax",
    library: str = "numpy",
    dtypes: Iterable[str] | None = None,
    s: float | None = None,
    suites: Iterable[str] | None = None,
    seed: int = 0,
    tolerance: object = None,
    policies: Mapping[str, str] | None = None,
) -> Report:
    """Run the property battery against ``fn`` and report every property per dtype.

    Parameters
    ----------
    fn
        Takes one array of ``library``'s type, shape ``(batch, n)``, and returns the
        function of each row (normalised over the last axis), same shape and dtype.
    kind
        ``"softmax"``, ``"log_softmax"``, ``"adaptive_temperature"`` (the paper's rule,
        :mod:`~softmax_dispersion.theory.adaptive_temperature`) or ``"ssmax"``
        (``softmax(s·log(n)·x)``; needs ``s``).
    library
        ``"numpy"``, ``"torch"`` or ``"jax"`` (imported only when named here).
    dtypes
        Dtype names; all float dtypes of the library by default.
    s
        SSMax's scale (``> 0``), for ``kind="ssmax"`` only.
    suites
        Suite names (:data:`~softmax_dispersion.testing.suites.SUITES`); all by default.
    seed
        Seed of the random suite, the permutations and the shifted cases.
    tolerance
        The accuracy model: ``None`` (T12 with pairwise summation), ``"recursive"``
        (T12 with ``γ_{n−1}``: any summation order, e.g. a sequential loop), a number of
        ULPs or a :class:`~softmax_dispersion.testing.Tolerance`.
    policies
        Non-finite policies to *require*, e.g. ``{"all -inf row": "zeros"}``: keys and
        values as in :attr:`Report.policies`.  A different observed policy is then a
        failure of the ``policy`` property; without this, policies are only reported.

    Returns
    -------
    Report
        Per property and dtype: cases, failures, max ULP error, the worst input; the
        non-finite policies observed.

    Raises
    ------
    ValueError
        For an unknown kind, library, dtype or suite, or ``s`` missing for SSMax.
    SoftmaxCallError
        When ``fn`` raises on a finite input or returns something of the wrong shape.

    Notes
    -----
    The properties and the tolerance of each are described in this module's docstring
    and in :mod:`~softmax_dispersion.testing.tolerance`.

    Examples
    --------
    >>> import numpy as np
    >>> def softmax(x):
    ...     e = np.exp(x - x.max(axis=-1, keepdims=True))
    ...     return e / e.sum(axis=-1, keepdims=True)
    >>> report = check_softmax(softmax, dtypes=["float64"], suites=["bad_inputs"])
    >>> report.passed, report.policies["all -inf row"]
    (True, 'NaN row')
    """
    start = time.perf_counter()
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; known: {', '.join(KINDS)}")
    if kind == "ssmax":
        if s is None:
            raise ValueError("kind='ssmax' needs the scale s (softmax(s·log(n)·x))")
        if not (isinstance(s, (int, float)) and s > 0 and math.isfinite(s)):
            raise ValueError(f"s must be a finite number > 0, got {s!r}")
    elif s is not None:
        raise ValueError(f"s is only used with kind='ssmax', not {kind!r}")
    adapter = _Adapter(library)
    tol = Tolerance.coerce(tolerance)
    chosen = list(LIBRARY_DTYPES[library] if dtypes is None else dtypes)
    for dtype in chosen:
        if dtype not in LIBRARY_DTYPES[library]:
            known = ", ".join(LIBRARY_DTYPES[library])
            raise ValueError(f"unknown dtype {dtype!r} for {library}; known: {known}")
    suite_names = None if suites is None else list(suites)
    report = Report(kind=kind, library=library, implementation=_name(fn))
    seen: dict[str, dict[str, str]] = {}
    for dtype in chosen:
        cases = build_suites(dtype, suite_names, seed)
        tallies = _check_dtype(fn, adapter, dtype, kind, s, cases, seed, tol)
        for prop, tally in tallies.items():
            if tally.cases == 0:
                continue
            report.results.append(
                PropertyResult(
                    property=prop,
                    dtype=dtype,
                    cases=tally.cases,
                    failures=tally.failures,
                    max_ulp=tally.max_ulp,
                    worst_input=tally.worst_input,
                    message=f"{prop}: {tally.message}" if tally.failures else "ok",
                    reproducer=tally.reproducer if tally.failures else "",
                )
            )
        for key, value in _policies(fn, adapter, dtype, kind, s).items():
            seen.setdefault(key, {})[dtype] = value
    for key, by_dtype in seen.items():
        values = set(by_dtype.values())
        if len(values) == 1:
            report.policies[key] = values.pop()
        else:
            report.policies[key] = "; ".join(f"{d}: {v}" for d, v in by_dtype.items())
    for key, wanted in (policies or {}).items():
        if key not in POLICY_ROWS:
            raise ValueError(f"unknown policy {key!r}; known: {', '.join(POLICY_ROWS)}")
        for dtype, observed in seen.get(key, {}).items():
            failed = observed != wanted
            report.results.append(
                PropertyResult(
                    property="policy",
                    dtype=dtype,
                    cases=1,
                    failures=int(failed),
                    max_ulp=0.0,
                    worst_input=key,
                    message=f"policy: {key} → {observed}, required {wanted}" if failed else "ok",
                )
            )
    report.seconds = time.perf_counter() - start
    return report
