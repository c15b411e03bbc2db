"""``check_softmax``: run the oracle's property battery against a softmax callable.

The properties (:mod:`~softmax_dispersion.testing.properties`, one object each) are
reported per dtype.  The *named behaviours* are choices, not errors, and fail only when
the caller requires one (``policies=``):

* the outputs on non-finite rows (``+inf``, a row of only ``−inf``, NaN, NaN among
  masked entries; for the masked kind a fully masked row and non-finite values under
  the mask), named ``NaN``, ``zeros``, ``uniform``, ``one-hot (the limit)``, ...;
* ``subnormals``: ``flushed`` (an output that should be a subnormal of float32, float64
  or bfloat16 came out 0: flush-to-zero modes, XLA on CPU) or ``kept``.  In float16 a
  flushed subnormal is a real loss (its smallest normal is 6.1e-5) and an accuracy
  failure;
* ``input``: ``kept`` or ``modified`` (the function wrote into its argument).  Every
  call gets a fresh copy, and the reference is built from the battery's own, so an
  in-place implementation is judged on its values, and the modification is reported
  as its own finding.

Every case of one row length is given to the implementation in one call (the cases,
their shifted and permuted copies, stacked): a compiled implementation (jax, a torch
kernel) compiles once per shape rather than once per case.

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
:mod:`~softmax_dispersion.testing.tolerance`.  For ``"masked_softmax"``, ``fn(x, mask)``
takes a boolean mask (True where an entry takes part: jax's ``where=``, torch's boolean
``attn_mask`` of ``scaled_dot_product_attention``) and the reference is the softmax over
the visible entries.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from softmax_dispersion.numerics.families import OFF_BLOCK_LENGTHS
from softmax_dispersion.numerics.rounding import FORMATS
from softmax_dispersion.testing.adapters import (
    LIBRARY_DTYPES,
    Adapter,
    adapter,
    to_float64,
    wrong_library_hint,
)
from softmax_dispersion.testing.properties import (
    PROPERTIES,
    CaseRun,
    Context,
    Evaluated,
    Tally,
)
from softmax_dispersion.testing.report import PropertyResult, Report, Worst
from softmax_dispersion.testing.suites import (
    MASKED_POLICY_ROWS,
    POLICY_ROWS,
    Case,
    build_suites,
    masked_input,
    policy_rows,
)
from softmax_dispersion.testing.tolerance import Tolerance, accumulation_format, allowed_error

PADDED_LENGTHS = (16, 256, 16384)
"""For a library that compiles per shape, rows are padded with masked entries to these."""
ALONE_LENGTHS = (16, OFF_BLOCK_LENGTHS[0])
"""... and rows are checked alone (batch independence) at these lengths only."""

__all__ = [
    "ALONE_LENGTHS",
    "BEHAVIOURS",
    "KINDS",
    "LIBRARY_DTYPES",
    "PADDED_LENGTHS",
    "POLICY_NAMES",
    "SoftmaxCallError",
    "check_softmax",
    "expected_output",
    "policy_name",
]

F64 = npt.NDArray[np.float64]
Bool = npt.NDArray[np.bool_]

KINDS = ("softmax", "log_softmax", "adaptive_temperature", "ssmax", "masked_softmax")
"""The functions :func:`check_softmax` knows."""
BEHAVIOURS: dict[str, tuple[str, ...]] = {
    "subnormals": ("flushed", "kept"),
    "input": ("kept", "modified"),
}
"""The named behaviours besides the non-finite policies, with their possible values."""


class SoftmaxCallError(ValueError):
    """The callable under test raised, or returned something that is not an output."""


def _name(fn: Callable[..., Any]) -> str:
    module = getattr(fn, "__module__", None) or ""
    qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    return f"{module}.{qualname}" if module else str(qualname)


def _source(fn: Callable[..., Any]) -> str:
    """An import of ``fn`` for reproducers, when its name can be imported."""
    given = getattr(fn, "__oracle_source__", None)
    if isinstance(given, str):
        return given
    module = getattr(fn, "__module__", None) or ""
    qualname = getattr(fn, "__qualname__", "") or ""
    parts = qualname.split(".")
    if module and module != "__main__" and all(p.isidentifier() for p in parts) and len(parts) == 1:
        return f"from {module} import {qualname} as fn"
    return ""


class _Caller:
    """Calls the implementation, copying its inputs and watching them."""

    def __init__(self, fn: Callable[..., Any], library: Adapter, dtype: str, masked: bool) -> None:
        self.fn, self.library, self.dtype, self.masked = fn, library, dtype, masked
        self.modified = ""
        self.overwritten = ""
        self.calls = 0
        self.hint = ""
        # The last output of each shape, as returned and as first read: a later call
        # that changes it returned a buffer it reuses (an internal workspace).
        self._last: dict[tuple[int, ...], tuple[Any, F64, str]] = {}

    def __call__(
        self, rows: F64, mask: Bool | None, where: str, shape: tuple[int, ...] | None = None
    ) -> tuple[F64, F64, str]:
        """``(exact inputs, outputs, output dtype name)`` of one call on ``rows``.

        With ``shape``, the rows are given as an array of that shape (a square or 3-D
        one, last axis the rows'), and inputs and outputs come back as rows.
        """
        flat = rows.shape
        if shape is not None:
            rows = rows.reshape(shape)
            mask = None if mask is None else mask.reshape(shape)
        xin = self.library.array(rows, self.dtype)
        exact = self.library.values(xin)
        args: tuple[Any, ...] = (xin,)
        if self.masked:
            assert mask is not None
            args = (xin, self.library.mask(mask))
        shape = tuple(int(d) for d in rows.shape)
        try:
            # Warnings (overflow in exp, ...) are not the battery's verdict: outputs are.
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = self.fn(*args)
        except Exception as exc:
            hint = wrong_library_hint(self.library.name, exc)
            raise SoftmaxCallError(
                f"{_name(self.fn)} raised {type(exc).__name__}: {exc} (input {where}, shape "
                f"{shape}, dtype {self.dtype})" + (f"; {hint}" if hint else "")
            ) from exc
        after = self.library.values(xin)
        if not self.modified and not np.array_equal(after, exact, equal_nan=True):
            self.modified = where
        if not (hasattr(out, "shape") and hasattr(out, "dtype")):
            raise SoftmaxCallError(
                f"{_name(self.fn)} returned {type(out).__name__}, expected an array "
                f"(input {where}, dtype {self.dtype})"
            )
        try:
            values, name = to_float64(out)
        except Exception as exc:
            raise SoftmaxCallError(
                f"{_name(self.fn)} returned {type(out).__name__}, not an array (input {where}, "
                f"dtype {self.dtype})"
            ) from exc
        if values.shape != shape:
            hint = wrong_library_hint(self.library.name, None, out)
            raise SoftmaxCallError(
                f"{_name(self.fn)} returned shape {values.shape} for an input of shape {shape} "
                f"(input {where}, dtype {self.dtype}): it must normalise over the last axis and "
                "keep the shape" + (f"; {hint}" if hint else "")
            )
        self.hint = self.hint or wrong_library_hint(self.library.name, None, out)
        self.calls += 1
        previous = self._last.get(shape)
        if previous is not None and not self.overwritten:
            earlier, first_read, first_where = previous
            if not np.array_equal(to_float64(earlier)[0], first_read, equal_nan=True):
                self.overwritten = f"the output for {first_where} changed during {where}"
        self._last[shape] = (out, values.copy(), where)
        return exact.reshape(flat), values.reshape(flat), name


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
    from softmax_dispersion.theory.rounding_error import gamma_recursive

    coefficients = np.array([float(c) for c in COEFFICIENTS])
    derivative = np.polyder(coefficients)
    u = FORMATS[dtype].unit_roundoff
    n = rows.shape[-1]
    u_acc = FORMATS[accumulation_format(dtype)].unit_roundoff
    gamma = float(gamma_recursive.numpy(float(n), u_acc))
    with np.errstate(all="ignore"):
        logs = -np.log(probs + float(ENTROPY_OFFSET))
        entropy = np.sum(probs * logs, axis=-1)
        beta = np.asarray(adaptive_inverse_temperature.numpy(entropy), dtype=np.float64)
        first = allowed_error(rows, dtype=dtype, values=probs, probs=probs)
        d_entropy = (
            np.sum(first * (logs + 1), axis=-1)
            + np.sum(probs * ((2 * 2 + 2) * u * logs + u), axis=-1)
            + gamma * entropy
            + 1e-13
        )
        slope = np.zeros_like(entropy)
        near = np.zeros_like(entropy, dtype=bool)
        for h in (entropy - d_entropy, entropy, entropy + d_entropy):
            sharpening = (h > 0.5) & (np.polyval(coefficients, h) > 1)
            slope = np.maximum(slope, np.where(sharpening, np.abs(np.polyval(derivative, h)), 0.0))
            near |= adaptive_inverse_temperature.numpy(h) > 1
        d_beta = np.where(near, np.minimum(1.5 * slope * d_entropy, 1.43), 0.0)
        d_beta = np.where(d_entropy > 1, 1.43, d_beta)
        size = np.polyval(np.abs(coefficients), np.abs(entropy))
        error = d_beta / beta + 8 * u * size / beta + 2.0**-52
    return beta, error


def _reference(rows: F64, kind: str, dtype: str, s: float | None) -> _Ref:
    """The certified reference of ``kind`` on ``rows`` (masked entries already ``−inf``)."""
    n = rows.shape[-1]
    ones = np.ones(rows.shape[0])
    u = FORMATS[dtype].unit_roundoff
    if kind in ("softmax", "log_softmax", "masked_softmax"):
        log = kind == "log_softmax"
        values = _dense(rows, log=log, format=dtype)
        probs = values if (dtype == "float64" and not log) else _dense(rows)
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
    for value in np.unique(beta):
        pick = beta == value
        theta: float | int = 1 if value == 1.0 else 1.0 / float(value)
        values[pick] = _dense(rows[pick], theta=theta, format=dtype)
        probs[pick] = _dense(rows[pick], theta=theta)
    return _Ref(values, probs, beta, error)


def expected_output(
    x: npt.ArrayLike,
    kind: str = "softmax",
    *,
    dtype: str = "float64",
    s: float | None = None,
    mask: npt.ArrayLike | None = None,
) -> F64:
    """The certified output of ``kind`` on the rows of ``x``, as the battery expects it.

    Examples
    --------
    >>> expected_output([[0.0, 0.0, 9.0]], "masked_softmax", mask=[[True, True, False]]).tolist()
    [[0.5, 0.5, 0.0]]
    """
    rows = np.atleast_2d(np.asarray(x, dtype=np.float64))
    if mask is not None:
        rows = np.where(np.atleast_2d(np.asarray(mask, dtype=bool)), rows, -np.inf)
    return _reference(rows, kind, dtype, s).values


# --- the battery ----------------------------------------------------------------------------


@dataclass
class _Request:
    """Rows of one case (or a variant) placed in the call of their row length."""

    case: Case
    purpose: str  # "main", "shift", "perm"
    rows: F64
    mask: Bool | None
    shift: float = 0.0
    perm: npt.NDArray[np.intp] | None = None


def _variants(case: Case, dtype: str, rng: np.random.Generator) -> list[_Request]:
    """The case and the shifted and permuted copies the properties need."""
    main = _Request(case, "main", case.rows, case.mask)
    n = case.rows.shape[-1]
    requests = [main]
    if (case.suite == "random" and 2 <= n <= 1238) or case.name.startswith(
        ("bad_inputs/off", "masks/random")
    ):
        shifts = (64.0, -64.0) if dtype == "float16" else (64.0, -64.0, 1000.0)
        for shift in shifts:
            requests.append(_Request(case, "shift", case.rows + shift, case.mask, shift=shift))
        perm = rng.permutation(n)
        mask = None if case.mask is None else case.mask[:, perm]
        requests.append(_Request(case, "perm", case.rows[:, perm], mask, perm=perm))
    return requests


class _Battery:
    """One dtype's run: the calls, the references, the properties' tallies."""

    def __init__(
        self,
        fn: Callable[..., Any],
        library: Adapter,
        dtype: str,
        kind: str,
        s: float | None,
        tol: Tolerance,
        flush_allowed: bool,
    ) -> None:
        self.kind, self.dtype, self.s, self.tol = kind, dtype, s, tol
        self.masked = kind == "masked_softmax"
        self.call = _Caller(fn, library, dtype, self.masked)
        self.context = Context(kind=kind, dtype=dtype, flush_allowed=flush_allowed)
        self.tallies = {prop.name: Tally() for prop in PROPERTIES}
        # Each policy row, its mask and the output on it (for the report's worst input).
        self.policy_outputs: dict[str, tuple[F64, Bool | None, F64]] = {}
        # N-D shapes the function does not take (it raised, or returned another shape).
        self.unsupported: list[str] = []
        # ssmax's β depends on n and the adaptive rule on every entry: never padded.
        self.pad = library.compiles_per_shape and kind not in ("ssmax", "adaptive_temperature")

    def _inputs(self, request: _Request) -> tuple[F64, Bool | None]:
        """What the implementation gets: masked kind: garbage under the mask, and the mask."""
        if not self.masked:
            return request.rows, None
        rows = masked_input(Case(request.case.name, request.rows, request.mask), self.dtype)
        mask = np.ones(rows.shape, dtype=bool) if request.mask is None else request.mask
        return rows, mask

    def _length(self, n: int) -> int:
        """The length rows of ``n`` are given in: ``n``, or a padded one for jax."""
        if not self.pad or n in OFF_BLOCK_LENGTHS:
            return n
        return next((size for size in PADDED_LENGTHS if size >= n), n)

    def _padded(self, rows: F64, mask: Bool | None, length: int) -> tuple[F64, Bool | None]:
        """``rows`` padded to ``length`` with masked entries (``−inf``, or mask False)."""
        extra = length - rows.shape[-1]
        if extra == 0:
            return rows, mask
        fill = 0.0 if self.masked else -np.inf
        rows = np.concatenate([rows, np.full((rows.shape[0], extra), fill)], axis=1)
        if mask is not None:
            mask = np.concatenate([mask, np.zeros((mask.shape[0], extra), dtype=bool)], axis=1)
        return rows, mask

    def alone(self, main: Evaluated, length: int) -> list[tuple[int, F64]]:
        """The first two rows of ``main``, each given alone as shape ``(1, n)``."""
        n = main.inputs.shape[-1]
        if main.inputs.shape[0] < 2 or n < 2 or (self.pad and length not in ALONE_LENGTHS):
            return []
        found = []
        for r in range(2):
            mask_r = None if main.mask is None else main.mask[r : r + 1]
            rows, mask = self._padded(main.inputs[r : r + 1], mask_r, length)
            _, single, _ = self.call(rows, mask, f"{main.label} row {r} alone")
            found.append((r, single[:, :n]))
        return found

    def run(self, cases: Sequence[Case], seed: int) -> None:
        """Evaluate every case (grouped by call length) and tally every property."""
        rng = np.random.default_rng(seed + 7)
        # One call per row length; a case of its own shape (square, 3-D) is a call alone.
        groups: dict[tuple[int, tuple[int, ...] | None], list[_Request]] = {}
        for case in cases:
            for request in _variants(case, self.dtype, rng):
                n = request.rows.shape[-1]
                key = (self._length(n), None) if case.shape is None else (n, case.shape)
                groups.setdefault(key, []).append(request)
        for (length, shape), requests in groups.items():
            inputs = [self._padded(*self._inputs(request), length) for request in requests]
            stacked = np.concatenate([rows for rows, _ in inputs])
            masks = None
            if self.masked:
                masks = np.concatenate([m for _, m in inputs if m is not None])
            where = f"{len(requests)} case(s) of length {length}"
            if shape is not None:
                where = f"{requests[0].case.name}, shape {shape}"
            try:
                exact, out, out_dtype = self.call(stacked, masks, where, shape)
            except SoftmaxCallError as exc:
                if shape is None or len(shape) == 2:
                    raise
                # The contract is (batch, n): an N-D input is checked where it is taken.
                self.unsupported.append(f"{shape}: {exc}")
                continue
            logits = exact if masks is None else np.where(masks, exact, -np.inf)
            ref = _reference(logits, self.kind, self.dtype, self.s)
            start = 0
            runs: dict[str, dict[str, Any]] = {}
            for request, (rows, mask) in zip(requests, inputs, strict=True):
                stop = start + rows.shape[0]
                n = request.rows.shape[-1]
                label = request.case.name + (
                    f" + {request.shift:g}"
                    if request.purpose == "shift"
                    else " permuted"
                    if request.purpose == "perm"
                    else ""
                )
                cut = (slice(start, stop), slice(0, n))
                ev = self._piece(
                    label, exact[cut], None if mask is None else mask[:, :n], out[cut], ref, cut
                )
                entry = runs.setdefault(request.case.name, {"case": request.case, "shifted": []})
                if request.purpose == "main":
                    entry["main"] = ev
                elif request.purpose == "shift":
                    entry["shifted"].append((request.shift, ev))
                else:
                    assert request.perm is not None
                    entry["permuted"] = (request.perm, ev)
                start = stop
            for entry in runs.values():
                main: Evaluated = entry["main"]
                run = CaseRun(
                    case=entry["case"],
                    main=main,
                    out_dtype=out_dtype,
                    shifted=entry["shifted"],
                    permuted=entry.get("permuted"),
                    alone=self.alone(main, length) if shape is None else [],
                )
                for prop in PROPERTIES:
                    prop.check(run, self.context, self.tallies[prop.name])

    def _piece(
        self,
        label: str,
        exact: F64,
        mask: Bool | None,
        out: F64,
        ref: _Ref,
        cut: tuple[slice, slice],
    ) -> Evaluated:
        logits = exact if mask is None else np.where(mask, exact, -np.inf)
        beta = np.broadcast_to(
            np.asarray(ref.beta, dtype=np.float64).reshape(-1), (ref.values.shape[0],)
        )
        beta_error = np.broadcast_to(
            np.asarray(ref.beta_error, dtype=np.float64).reshape(-1), beta.shape
        )
        piece = cut[0]
        values, probs = ref.values[cut], ref.probs[cut]
        allowed = allowed_error(
            logits,
            dtype=self.dtype,
            log=self.kind == "log_softmax",
            beta=beta[piece],
            beta_error=beta_error[piece],
            values=values,
            probs=probs,
            tolerance=self.tol,
        )
        return Evaluated(
            label=label,
            inputs=exact,
            logits=logits,
            mask=mask,
            out=out,
            values=values,
            probs=probs,
            beta=beta[piece].reshape(-1, 1),
            allowed=allowed,
        )

    def results(self) -> list[PropertyResult]:
        """One result per property that checked anything."""
        return [
            tally.result(name, self.dtype) for name, tally in self.tallies.items() if tally.cases
        ]


# --- named behaviours -----------------------------------------------------------------------


POLICY_NAMES = (
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
)
"""The outputs a policy row may have, by name (``raises`` is followed by the exception's
type; ``ones`` only on the ``finfo.min row``, where ``exp(x − logsumexp(x))`` with the
log-sum-exp rounded at that magnitude gives it).  An output that is none of these is a
failure of the ``policy`` property, required behaviour or not."""

_NAMED_ONLY_FOR: dict[str, tuple[str, ...]] = {"ones": ("finfo.min row",)}
"""Names accepted only on some policy rows."""


def _listed(out: F64) -> str:
    return "[" + ", ".join(f"{float(v):.4g}" for v in out) + "]"


def _describe(out: F64, limit: F64, log: bool, limit_name: str = "the limit") -> str:
    """A name for an output row on a policy input (a list of values when it has none)."""
    zero = -np.inf if log else 0.0
    n = out.shape[-1]
    with np.errstate(all="ignore"):
        if np.all(np.isnan(out)):
            return "NaN"
        if np.all(out == zero):
            return "-inf" if log else "zeros"
        uniform = -math.log(n) if log else 1.0 / n
        if np.all(np.isfinite(out)) and np.allclose(out, uniform, rtol=1e-2, atol=1e-3):
            return "uniform"
        if np.all(np.isfinite(limit)) and np.allclose(out, limit, rtol=1e-2, atol=1e-3):
            if np.any(limit == (0 if log else 1)) and limit_name == "the limit":
                return "one-hot (the limit)"
            return limit_name
        if np.all(out == (0.0 if log else 1.0)):
            return "ones"
        if np.any(np.isnan(out)):
            return "NaN in part: " + _listed(out)
    return _listed(out)


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


def _unnamed(key: str, observed: str) -> bool:
    """Whether the output ``observed`` on policy row ``key`` is none of the named ones."""
    name = policy_name(observed)
    return not name or key not in _NAMED_ONLY_FOR.get(name, (key,))


def _names_for(key: str, kind: str | None = None) -> str:
    """The names an output on policy row ``key`` may have (for ``kind``, or any)."""
    unused = set() if kind is None else {"-inf" if kind != "log_softmax" else "zeros"}
    names = [n for n in POLICY_NAMES if key in _NAMED_ONLY_FOR.get(n, (key,)) and n not in unused]
    return "/".join(names)


def _policies(battery: _Battery) -> dict[str, str]:
    """What the implementation returns on each policy row of its kind."""
    found = {}
    log = battery.kind == "log_softmax"
    rows_by_key: dict[str, tuple[list[float], list[bool] | None]]
    if battery.masked:
        rows_by_key = {key: (row, mask) for key, (row, mask) in MASKED_POLICY_ROWS.items()}
    else:
        rows_by_key = {key: (row, None) for key, row in policy_rows(battery.dtype).items()}
    for key, (row, visible) in rows_by_key.items():
        rows = np.array([row], dtype=np.float64)
        mask = None if visible is None else np.array([visible], dtype=bool)
        padded, padded_mask = battery._padded(rows, mask, battery._length(rows.shape[-1]))
        try:
            _, out, _ = battery.call(padded, padded_mask, f"policy {key!r}")
            out = out[:, : rows.shape[-1]]
        except SoftmaxCallError as exc:
            cause = exc.__cause__
            found[key] = f"raises {type(cause).__name__}" if cause else f"error: {exc}"
            continue
        logits = rows if mask is None else np.where(mask, rows, -np.inf)
        kwargs: dict[str, Any] = {"log": log, "format": "float64"}
        if battery.kind == "ssmax" and battery.s is not None:
            kwargs["s"] = battery.s
        limit = _dense(logits, **kwargs)
        name = "the mask wins" if mask is not None and not mask.all() else "the limit"
        found[key] = _describe(out[0], limit[0], log, name)
        battery.policy_outputs[key] = (rows, mask, out[0])
    return found


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


def _fresh_output(call: _Caller, dtype: str) -> PropertyResult:
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


def _policy_keys(kind: str) -> tuple[str, ...]:
    rows = MASKED_POLICY_ROWS if kind == "masked_softmax" else POLICY_ROWS
    return (*rows, *BEHAVIOURS)


def check_softmax(
    fn: Callable[..., Any],
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
        function of each row (normalised over the last axis), same shape and dtype
        (a square ``(16, 16)`` input among them; one 3-D input ``(2, 3, 7)`` too, checked
        when ``fn`` takes it and named in the notes when it does not);
        ``fn(x, mask)`` for ``kind="masked_softmax"`` (``mask`` boolean, True where an
        entry takes part).
    kind
        ``"softmax"``, ``"log_softmax"``, ``"adaptive_temperature"`` (the paper's rule,
        :mod:`~softmax_dispersion.theory.adaptive_temperature`), ``"ssmax"``
        (``softmax(s·log(n)·x)``; needs ``s``) or ``"masked_softmax"``.
    library
        ``"numpy"``, ``"torch"`` or ``"jax"`` (imported only when named here; jax runs
        with 64-bit types enabled for the check, the caller's setting restored after).
    dtypes
        Dtype names (or one name); all float dtypes of the library by default.
    s
        SSMax's scale (``> 0``), for ``kind="ssmax"`` only.
    suites
        Suite names (:data:`~softmax_dispersion.testing.suites.SUITES`); all by default.
    seed
        Seed of the random suite, the permutations and the shifted cases.
    tolerance
        The accuracy model: ``None`` or ``"recursive"`` (T12 with ``γ_{n−1}``: any
        summation order, every standard formulation), ``"pairwise"`` (the tighter
        opt-in: pairwise sums, max-shifted forms), a number of ULPs or a
        :class:`~softmax_dispersion.testing.Tolerance`.
    policies
        Named behaviours to *require*, e.g. ``{"all -inf row": "zeros", "subnormals":
        "kept", "input": "kept"}``: keys and values as in :attr:`Report.policies`.  A
        different observed behaviour is then a failure of the ``policy`` property;
        without this, behaviours are only reported.

    Returns
    -------
    Report
        Per property and dtype: cases, failures, max ULP error, the worst input; the
        named behaviours observed.

    Raises
    ------
    ValueError
        For an unknown kind, library, dtype, suite or policy, or ``s`` missing for SSMax.
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
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; known: {', '.join(KINDS)}")
    if kind == "ssmax":
        if s is None:
            raise ValueError("kind='ssmax' needs the scale s (softmax(s·log(n)·x))")
        if not (isinstance(s, (int, float)) and s > 0 and math.isfinite(s)):
            raise ValueError(f"s must be a finite number > 0, got {s!r}")
    elif s is not None:
        raise ValueError(f"s is only used with kind='ssmax', not {kind!r}")
    library_adapter = adapter(library)
    tol = Tolerance.coerce(tolerance)
    if isinstance(dtypes, str):
        dtypes = [dtypes]  # one name, not its characters
    chosen = list(library_adapter.dtypes if dtypes is None else dtypes)
    for dtype in chosen:
        if dtype not in library_adapter.dtypes:
            known = ", ".join(library_adapter.dtypes)
            raise ValueError(f"unknown dtype {dtype!r} for {library}; known: {known}")
    required = dict(policies or {})
    keys = _policy_keys(kind)
    for key, value in required.items():
        if key not in keys:
            raise ValueError(f"unknown policy {key!r}; known: {', '.join(keys)}")
        if key in BEHAVIOURS and value not in BEHAVIOURS[key]:
            raise ValueError(
                f"policy {key!r} is one of {', '.join(BEHAVIOURS[key])}, not {value!r}"
            )
        if key not in BEHAVIOURS and (not isinstance(value, str) or _unnamed(key, value)):
            raise ValueError(
                f"policy {key!r} is one of {_names_for(key, kind).replace('/', ', ')} "
                f"('raises TypeName' for an exception), not {value!r}"
            )
    suite_names = list(suites) if suites is not None else None
    if suite_names is not None and kind == "ssmax":
        suite_names = [name for name in suite_names if name != "masks"]
        if not suite_names:
            raise ValueError(
                "kind='ssmax' skips the masks suite (its n is ambiguous under masks): "
                "choose another suite"
            )
    elif suite_names is None and kind == "ssmax":
        # n is the number of keys a row sees: ambiguous under masks, so SSMax skips them.
        suite_names = ["random", "families", "bad_inputs", "shapes"]
    report = Report(
        kind=kind,
        library=library,
        implementation=_name(fn),
        source=_source(fn),
        tolerance=tol.label,
    )
    observed: dict[str, dict[str, str]] = {}
    unnamed: dict[tuple[str, str], Worst] = {}
    flush_allowed = required.get("subnormals") != "kept"
    hints: set[str] = set()
    with library_adapter.session():
        for dtype in chosen:
            battery = _Battery(fn, library_adapter, dtype, kind, s, tol, flush_allowed)
            cases = [
                case
                for case in build_suites(dtype, suite_names, seed)
                if not (kind == "ssmax" and case.mask is not None)
            ]
            battery.run(cases, seed)
            report.results.extend(battery.results())
            found = _policies(battery)
            found["subnormals"] = (
                "flushed"
                if "flushed" in battery.context.subnormals
                else "kept"
                if "kept" in battery.context.subnormals
                else "not exercised"
            )
            found["input"] = "modified" if battery.call.modified else "kept"
            report.results.append(_fresh_output(battery.call, dtype))
            if battery.call.modified:
                hints.add(f"the function modified its input ({dtype}, {battery.call.modified})")
            if battery.call.hint:
                hints.add(battery.call.hint)
            for failure in battery.unsupported:
                hints.add(
                    f"not checked on the {failure.split(':')[0]} input: it raised or "
                    "returned another shape (only (batch, n) is required)"
                )
            for key, value in found.items():
                observed.setdefault(key, {})[dtype] = value
                if key in battery.policy_outputs and _unnamed(key, value):
                    rows, mask, out = battery.policy_outputs[key]
                    column = int(np.argmax(np.where(np.isnan(out), -np.inf, np.abs(out))))
                    unnamed[key, dtype] = Worst(
                        case=f"policy {key!r}",
                        row=0,
                        column=column,
                        actual=float(out[column]),
                        expected=math.nan,
                        allowance=math.nan,
                        error_ulps=math.nan,
                        allowed_ulps=math.nan,
                        inputs=rows,
                        mask=mask,
                    )
    report.policies = _merge(observed)
    if library == "jax":
        hints.add(
            "jax: every dtype judged as computed, float64 with 64-bit types enabled for the "
            "check (the caller's jax_enable_x64 restored after)"
        )
        if battery.pad:
            hints.add(
                "jax: rows padded with masked entries to lengths "
                f"{', '.join(map(str, PADDED_LENGTHS))} (137 and 1238 kept), one compilation "
                "per length and dtype"
            )
    report.notes = sorted(hints)
    for (key, dtype), worst in unnamed.items():
        # Not a choice but a wrong answer (a row summing to 0.5 or 1.2 on +inf).
        seen = observed[key][dtype]
        report.results.append(
            PropertyResult(
                name="policy",
                dtype=dtype,
                cases=1,
                failures=1,
                max_ulp=0.0,
                message=f"1/1 failed; {key}: output is none of {_names_for(key, kind)}: {seen}",
                worst=worst,
                hint="an output on a non-finite or fully masked row must be a named policy "
                "(NaN, zeros, uniform, the limit, ...): this one is a wrong answer",
            )
        )
    for key, wanted in required.items():
        for dtype, seen in observed.get(key, {}).items():
            if (key, dtype) in unnamed:
                continue  # failed above, whatever was required
            exempt = key == "subnormals" and seen == "not exercised"
            failed = seen != wanted and policy_name(seen) != wanted and not exempt
            report.results.append(
                PropertyResult(
                    name="policy",
                    dtype=dtype,
                    cases=1,
                    failures=int(failed),
                    max_ulp=0.0,
                    message=f"{key} → {seen}, required {wanted}" if failed else "ok",
                )
            )
    report.seconds = time.perf_counter() - start
    return report
