"""The engine of the row kinds: softmax, log-softmax, masked, adaptive and length-scaled.

Every row kind normalises along the last axis of a ``(batch, n)`` array (``fn(x)``, or
``fn(x, mask)`` for the masked kind), so they share one engine, :class:`RowEngine`,
configured by a :class:`RowSpec`: whether the output is a log-probability, whether a
mask is passed, and how the effective inverse temperature ``β`` of a row is found.

References.  Softmax, log-softmax and the masked softmax: the certified dense softmax of
the rows (masked entries ``−inf``).  ``"ssmax"``: ``softmax(s·log(n)·x)`` with ``s·log n``
exact, and the tolerance charges the computed ``β = s·log n`` a relative error of ``6u``
(a 2-ulp ``log``, the product, ``s`` rounded).  ``"adaptive_temperature"``: ``β(H)`` of the
paper's rule from the entropy ``H = −Σ p_j log(p_j + 10⁻⁹)`` of the exact softmax (float64,
error ``~10⁻¹⁵``); the implementation's float entropy is off by at most
``ΔH = Σ_j a_j(L_j + 1) + Σ_j p_j((2k_log + 2)u L_j + u) + γH`` with ``a_j`` the allowance of
its first softmax and ``L_j = −log(p_j + 10⁻⁹)``, so its ``β`` by ``Δβ = 1.5·max|P'|·ΔH``
(``P'`` at ``H`` and ``H ± ΔH``; 0 when ``β = 1`` there; at most ``β_max − 1 < 1.43``), plus
``8u·Σ|c_k|H^k`` for evaluating the polynomial.  That relative ``β`` error enters the
scaled-argument model of :mod:`~softmax_dispersion.testing.tolerance`.

Calls.  Every case of one row length is given to the implementation in one call (the
cases, their shifted and permuted copies, stacked): a compiled implementation (jax, a
torch kernel) compiles once per shape rather than once per case.  For a library that
compiles per shape, rows are padded with masked entries to :data:`PADDED_LENGTHS`
(never for SSMax, whose ``n`` counts the entries, nor the adaptive rule).  The masked
kind gets values under the mask that it must ignore
(:func:`~softmax_dispersion.testing.suites.masked_input`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from softmax_dispersion.numerics.families import OFF_BLOCK_LENGTHS
from softmax_dispersion.numerics.rounding import FORMATS
from softmax_dispersion.testing.battery_report import Worst
from softmax_dispersion.testing.calls import Call, SoftmaxCallError
from softmax_dispersion.testing.engine import PolicyOutcome, Session
from softmax_dispersion.testing.properties import CaseRun, Evaluated
from softmax_dispersion.testing.suites import (
    MASKED_POLICY_ROWS,
    ODD_WIDTHS,
    SUITES,
    Case,
    build_suites,
    masked_input,
    near_finfo_rows,
    policy_rows,
    scale_lengths,
)
from softmax_dispersion.testing.tolerance import accumulation_format, allowances, allowed_error

__all__ = [
    "ADAPTIVE_TEMPERATURE",
    "ALONE_LENGTHS",
    "LOG_SOFTMAX",
    "MASKED_SOFTMAX",
    "PADDED_LENGTHS",
    "SOFTMAX",
    "SSMAX",
    "RowEngine",
    "RowSpec",
    "describe_output",
    "textbook",
]

F64 = npt.NDArray[np.float64]
Bool = npt.NDArray[np.bool_]

PADDED_LENGTHS = (16, 256, 16384, 262144)
"""For a library that compiles per shape, rows are padded with masked entries to these."""
UNPADDED_LENGTHS = (*OFF_BLOCK_LENGTHS, *ODD_WIDTHS)
"""... except rows of these lengths, kept as they are: the widths of known kernel bugs."""
ALONE_LENGTHS = (16, OFF_BLOCK_LENGTHS[0])
"""... and rows are checked alone (batch independence) at these lengths only."""


@dataclass(frozen=True)
class RowSpec:
    """What distinguishes one row kind from another.

    Attributes
    ----------
    log : bool
        Outputs are log-probabilities.
    masked : bool
        ``fn(x, mask)``: a boolean mask is passed, True where an entry takes part.
    beta : str
        How a row's inverse temperature is found: ``"one"`` (plain softmax),
        ``"ssmax"`` (``s·log n``) or ``"adaptive"`` (the paper's rule).
    """

    log: bool = False
    masked: bool = False
    beta: str = "one"

    @property
    def pads(self) -> bool:
        """Whether rows may be padded with masked entries (β does not depend on ``n``)."""
        return self.beta == "one"


@dataclass(frozen=True)
class _Ref:
    values: F64
    probs: F64
    beta: F64
    beta_error: F64


def _dense(rows: F64, **kwargs: Any) -> F64:
    from softmax_dispersion.numerics.dense import certified_softmax_dense

    return np.asarray(certified_softmax_dense(rows, **kwargs).values)


def _dense_pair(rows: F64, log: bool, dtype: str, **kwargs: Any) -> tuple[F64, F64]:
    """The certified values in ``dtype`` and the coefficients as float64, from one pass.

    The coefficients come from the float64 enclosure of the same evaluation (its
    midpoint, within an ulp of float64; for log-softmax its exp): one certified pass
    over a row of 262,144 entries instead of two.
    """
    from softmax_dispersion.numerics.dense import certified_softmax_dense

    result = certified_softmax_dense(rows, log=log, format=dtype, **kwargs)
    values = np.asarray(result.values)
    if dtype == "float64" and not log:
        return values, values
    with np.errstate(all="ignore"):
        lower, upper = np.asarray(result.lower), np.asarray(result.upper)
        middle = np.where(lower == upper, lower, lower / 2 + upper / 2)
        probs = np.exp(middle) if log else middle
    return values, np.asarray(probs, dtype=np.float64)


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


def _reference(rows: F64, spec: RowSpec, dtype: str, s: float | None) -> _Ref:
    """The certified reference on ``rows`` (masked entries already ``−inf``)."""
    n = rows.shape[-1]
    ones = np.ones(rows.shape[0])
    u = FORMATS[dtype].unit_roundoff
    if spec.beta == "one":
        values, probs = _dense_pair(rows, spec.log, dtype)
        return _Ref(values, probs, ones, 0 * ones)
    if spec.beta == "ssmax":
        assert s is not None
        if n == 1:  # β = s·log 1 = 0: the one coefficient is 1
            return _Ref(np.zeros_like(rows) + 1.0, np.zeros_like(rows) + 1.0, 0 * ones, 0 * ones)
        values, probs = _dense_pair(rows, False, dtype, s=s)
        return _Ref(values, probs, ones * s * math.log(n), ones * 6 * u)
    base = _dense(rows)
    beta, error = _adaptive_beta(rows, base, dtype)
    values = np.empty_like(rows)
    probs = np.empty_like(rows)
    for value in np.unique(beta):
        pick = beta == value
        theta: float | int = 1 if value == 1.0 else 1.0 / float(value)
        values[pick], probs[pick] = _dense_pair(rows[pick], False, dtype, theta=theta)
    return _Ref(values, probs, beta, error)


def _to_bfloat16(values: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """float32 values rounded to the nearest bfloat16 (ties to even), kept as float32."""
    bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(values), values, out).astype(np.float32)


def _in(dtype: str, values: Any) -> npt.NDArray[np.float32]:
    """float32 ``values`` rounded to the 16-bit ``dtype`` (and back to float32)."""
    values = np.asarray(values, dtype=np.float32)
    if dtype == "bfloat16":
        return _to_bfloat16(values)
    rounded: npt.NDArray[np.float32] = values.astype(dtype).astype(np.float32)
    return rounded


def textbook(logits: F64, dtype: str, *, log: bool = False, beta: F64 | None = None) -> F64:
    """A plain two-pass softmax of 16-bit logits with float32 arithmetic: the error baseline.

    Pass one takes the row's maximum; pass two sums ``exp(β(x − max))`` in float32; the
    output ``exp(β(x − max))/S`` (or ``β(x − max) − log S``) is computed in float32 and
    rounded once to ``dtype``: what a careful 16-bit kernel does.  Its worst error is the
    denominator of the report's error ratio ("1.3× the textbook error").

    Examples
    --------
    >>> import numpy as np
    >>> textbook(np.array([[0.0, 1.0]]), "float16").tolist()
    [[0.26904296875, 0.73095703125]]
    """
    with np.errstate(all="ignore"):
        w = np.asarray(logits, dtype=np.float32)
        top = np.max(w, axis=-1, keepdims=True)
        top = np.where(np.isfinite(top), top, np.float32(0))
        scale = np.float32(1) if beta is None else np.asarray(beta, dtype=np.float32)
        shifted = ((w - top) * scale).astype(np.float32)
        terms = np.exp(shifted)
        total = np.sum(terms, axis=-1, keepdims=True, dtype=np.float32)
        out = _in(dtype, shifted - np.log(total)) if log else _in(dtype, terms / total)
    return np.asarray(out, dtype=np.float64)


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


# --- naming the outputs on policy rows -------------------------------------------------------


def _listed(out: F64) -> str:
    return "[" + ", ".join(f"{float(v):.4g}" for v in out) + "]"


def describe_output(out: F64, limit: F64, log: bool, limit_name: str = "the limit") -> str:
    """A name for an output row on a policy input (a list of values when it has none).

    Examples
    --------
    >>> import numpy as np
    >>> describe_output(np.full(4, np.nan), np.full(4, np.nan), log=False)
    'NaN'
    >>> describe_output(np.array([0.5, 0.5]), np.array([0.5, 0.5]), log=False)
    'uniform'
    """
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


# --- the engine -------------------------------------------------------------------------------


class RowEngine:
    """The engine of one row kind (see the module's docstring)."""

    def __init__(self, spec: RowSpec) -> None:
        self.spec = spec

    # --- suites and cases ---------------------------------------------------------------------

    def suites(self) -> Mapping[str, Callable[[str, int], Sequence[Any]]]:
        """The row suites (:data:`~softmax_dispersion.testing.suites.SUITES`)."""
        return SUITES

    def cases(self, session: Session, suites: Sequence[str]) -> list[Any]:
        """The cases of ``suites`` (a kind whose ``β`` depends on ``n`` skips masked ones)."""
        cases = build_suites(session.dtype, suites, session.seed)
        if self.spec.beta == "ssmax":
            # n is the number of keys a row sees: ambiguous under masks.
            cases = [case for case in cases if case.mask is None]
            if "bad_inputs" in suites:
                # A small s needs a longer row for s·log n to exceed 1.
                done = {case.rows.shape[-1] for case in cases if "near_finfo" in case.name}
                for n in self._scale_lengths(session):
                    if n not in done and n > 4:
                        cases.append(near_finfo_rows(session.dtype, n))
        return cases

    def _scale_lengths(self, session: Session) -> tuple[int, ...]:
        """The lengths of the finfo.min rows: where the kind's scale exceeds 1 (β = 1:
        the length changes nothing, one row of 4)."""
        if self.spec.beta == "one":
            return scale_lengths()[:1]
        s = session.options.get("s") if self.spec.beta == "ssmax" else None
        return scale_lengths(s)

    # --- calls ---------------------------------------------------------------------------------

    def _pads(self, session: Session) -> bool:
        return session.library.compiles_per_shape and self.spec.pads

    def _length(self, session: Session, n: int) -> int:
        """The length rows of ``n`` are given in: ``n``, or a padded one."""
        if not self._pads(session) or n in UNPADDED_LENGTHS:
            return n
        return next((size for size in PADDED_LENGTHS if size >= n), n)

    def _padded(self, rows: F64, mask: Bool | None, length: int) -> tuple[F64, Bool | None]:
        """``rows`` padded to ``length`` with masked entries (``−inf``, or mask False)."""
        extra = length - rows.shape[-1]
        if extra == 0:
            return rows, mask
        fill = 0.0 if self.spec.masked else -np.inf
        rows = np.concatenate([rows, np.full((rows.shape[0], extra), fill)], axis=1)
        if mask is not None:
            mask = np.concatenate([mask, np.zeros((mask.shape[0], extra), dtype=bool)], axis=1)
        return rows, mask

    def _inputs(self, session: Session, request: _Request) -> tuple[F64, Bool | None]:
        """What the implementation gets: masked kind: garbage under the mask, and the mask."""
        if not self.spec.masked:
            return request.rows, None
        case = Case(request.case.name, request.rows, request.mask)
        rows = masked_input(case, session.dtype)
        mask = np.ones(rows.shape, dtype=bool) if request.mask is None else request.mask
        return rows, mask

    def _call(
        self,
        session: Session,
        rows: F64,
        mask: Bool | None,
        where: str,
        shape: tuple[int, ...] | None = None,
        *,
        transposed: bool = False,
    ) -> tuple[F64, F64, str]:
        """``(exact inputs, outputs, output dtype)`` of one call on ``rows``, as rows."""
        flat = rows.shape
        if shape is not None:
            rows = rows.reshape(shape)
            mask = None if mask is None else mask.reshape(shape)
        arrays: tuple[tuple[str, Any], ...] = (("x", rows),)
        if self.spec.masked:
            assert mask is not None
            arrays = (("x", rows), ("mask", mask))
        names = tuple(name for name, _ in arrays) if transposed else ()
        called = session.call(Call(where, arrays, transposed=names))
        return called.inputs["x"].reshape(flat), called.out.reshape(flat), called.out_dtype

    def _alone(self, session: Session, main: Evaluated, length: int) -> list[tuple[int, F64]]:
        """The first two rows of ``main``, each given alone as shape ``(1, n)``."""
        n = main.inputs.shape[-1]
        pads = self._pads(session)
        if main.inputs.shape[0] < 2 or n < 2 or (pads and length not in ALONE_LENGTHS):
            return []
        found = []
        for r in range(2):
            mask_r = None if main.mask is None else main.mask[r : r + 1]
            rows, mask = self._padded(main.inputs[r : r + 1], mask_r, length)
            _, single, _ = self._call(session, rows, mask, f"{main.label} row {r} alone")
            found.append((r, single[:, :n]))
        return found

    def evaluate(self, cases: Sequence[Any], session: Session) -> Iterator[CaseRun]:
        """Evaluate every case (grouped by call length) with its variants."""
        rng = np.random.default_rng(session.seed + 7)
        # One call per row length; a case of its own shape (square, 3-D) is a call alone.
        groups: dict[tuple[int, tuple[int, ...] | None, bool], list[_Request]] = {}
        for case in cases:
            for request in _variants(case, session.dtype, rng):
                n = request.rows.shape[-1]
                key = (
                    (self._length(session, n), None, False)
                    if case.shape is None
                    else (n, case.shape, case.transposed)
                )
                groups.setdefault(key, []).append(request)
        for (length, shape, transposed), requests in groups.items():
            inputs = [self._padded(*self._inputs(session, request), length) for request in requests]
            stacked = np.concatenate([rows for rows, _ in inputs])
            masks = None
            if self.spec.masked:
                masks = np.concatenate([m for _, m in inputs if m is not None])
            where = f"{len(requests)} case(s) of length {length}"
            if shape is not None:
                where = f"{requests[0].case.name}, shape {shape}"
                if transposed and session.library.name != "jax":
                    where += " (a transposed view: not contiguous)"
            try:
                exact, out, out_dtype = self._call(
                    session, stacked, masks, where, shape, transposed=transposed
                )
            except SoftmaxCallError as exc:
                if shape is None or len(shape) == 2:
                    raise
                # The contract is (batch, n): an N-D input is checked where it is taken.
                session.unsupported.append(f"{shape}: {exc}")
                continue
            logits = exact if masks is None else np.where(masks, exact, -np.inf)
            widths = [request.rows.shape[-1] for request in requests]
            counts = [rows.shape[0] for rows, _ in inputs]
            ref = self._reference(session, logits, widths, counts)
            yield from self._runs(
                session, requests, inputs, exact, out, out_dtype, ref, length, shape
            )

    def _reference(
        self, session: Session, logits: F64, widths: list[int], counts: list[int]
    ) -> _Ref:
        """The reference of a call's rows; padded rows without their padding.

        A padded call stacks rows of several lengths (32,000 and 128,256 entries padded
        to 262,144 for jax): each length's rows are referenced at their own width, so
        the certified pass never runs over the padding.
        """
        s = session.options.get("s")
        if all(width == logits.shape[-1] for width in widths):
            return _reference(logits, self.spec, session.dtype, s)
        values = np.full(logits.shape, np.nan)
        probs = np.zeros(logits.shape)
        beta = np.ones(logits.shape[0])
        beta_error = np.zeros(logits.shape[0])
        starts = np.cumsum([0, *counts])
        for width in sorted(set(widths)):
            rows = np.concatenate(
                [np.arange(starts[k], starts[k + 1]) for k, w in enumerate(widths) if w == width]
            )
            part = _reference(logits[rows, :width], self.spec, session.dtype, s)
            values[rows, :width], probs[rows, :width] = part.values, part.probs
            beta[rows] = np.broadcast_to(np.asarray(part.beta).reshape(-1), rows.shape)
            beta_error[rows] = np.broadcast_to(np.asarray(part.beta_error).reshape(-1), rows.shape)
        return _Ref(values, probs, beta, beta_error)

    def _runs(
        self,
        session: Session,
        requests: list[_Request],
        inputs: list[tuple[F64, Bool | None]],
        exact: F64,
        out: F64,
        out_dtype: str,
        ref: _Ref,
        length: int,
        shape: tuple[int, ...] | None,
    ) -> Iterator[CaseRun]:
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
                session,
                label,
                exact[cut],
                None if mask is None else mask[:, :n],
                out[cut],
                ref,
                cut,
                self._rebuild(session, request),
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
            yield CaseRun(
                case=entry["case"],
                main=main,
                out_dtype=out_dtype,
                shifted=entry["shifted"],
                permuted=entry.get("permuted"),
                alone=self._alone(session, main, length) if shape is None else [],
            )

    def _piece(
        self,
        session: Session,
        label: str,
        exact: F64,
        mask: Bool | None,
        out: F64,
        ref: _Ref,
        cut: tuple[slice, slice],
        rebuild: dict[str, str] | None = None,
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
        allowed = allowances(
            logits,
            dtype=session.dtype,
            log=self.spec.log,
            beta=beta[piece],
            beta_error=beta_error[piece],
            values=values,
            probs=probs,
            tolerance=session.tolerance,
        )
        sixteen = FORMATS[session.dtype].precision < 24
        return Evaluated(
            label=label,
            inputs=exact,
            logits=logits,
            mask=mask,
            textbook=(
                textbook(logits, session.dtype, log=self.spec.log, beta=beta[piece][:, None])
                if sixteen
                else None
            ),
            out=out,
            values=values,
            probs=probs,
            beta=beta[piece].reshape(-1, 1),
            allowed=allowed.total,
            strict=allowed.strict,
            rebuild=rebuild or {},
        )

    def _rebuild(self, session: Session, request: _Request) -> dict[str, str]:
        """Expressions that rebuild a piece's arrays from the suites (reproducers)."""
        if request.purpose == "perm" or request.case.shape is not None:
            return {}
        found = f"suite_case({request.case.name!r}, {session.dtype!r}, seed={session.seed})"
        if self.spec.masked:
            if request.purpose != "main":
                return {}
            return {"x": f"masked_input({found}, {session.dtype!r})", "mask": f"{found}.mask"}
        shift = f" + {request.shift!r}" if request.purpose == "shift" else ""
        return {"x": f"{found}.rows{shift}"}

    # --- policies ------------------------------------------------------------------------------

    def _policy_inputs(
        self, session: Session
    ) -> list[tuple[str, str, list[float], list[bool] | None]]:
        """``(key, label, row, mask)`` of every policy input; ``finfo.min`` rows at each
        length where a scale before the shift would overflow."""
        if self.spec.masked:
            return [(key, "", row, mask) for key, (row, mask) in MASKED_POLICY_ROWS.items()]
        found: list[tuple[str, str, list[float], list[bool] | None]] = []
        for key, row in policy_rows(session.dtype).items():
            if key == "finfo.min row":
                found += [(key, f"n={n}", [row[0]] * n, None) for n in self._scale_lengths(session)]
            else:
                found.append((key, "", row, None))
        return found

    def policies(self, session: Session) -> Iterator[PolicyOutcome]:
        """Call the implementation on each policy row of the kind and name the output."""
        for key, label, row, visible in self._policy_inputs(session):
            rows = np.array([row], dtype=np.float64)
            mask = None if visible is None else np.array([visible], dtype=bool)
            padded, padded_mask = self._padded(rows, mask, self._length(session, rows.shape[-1]))
            try:
                where = f"policy {key!r}" + (f" ({label})" if label else "")
                _, out, _ = self._call(session, padded, padded_mask, where)
                out = out[:, : rows.shape[-1]]
            except SoftmaxCallError as exc:
                cause = exc.__cause__
                observed = f"raises {type(cause).__name__}" if cause else f"error: {exc}"
                yield PolicyOutcome(key, observed, label=label)
                continue
            logits = rows if mask is None else np.where(mask, rows, -np.inf)
            kwargs: dict[str, Any] = {"log": self.spec.log, "format": "float64"}
            if self.spec.beta == "ssmax":
                kwargs["s"] = session.options["s"]
            limit = _dense(logits, **kwargs)
            name = "the mask wins" if mask is not None and not mask.all() else "the limit"
            observed = describe_output(out[0], limit[0], self.spec.log, name)
            column = int(np.argmax(np.where(np.isnan(out[0]), -np.inf, np.abs(out[0]))))
            # On a finite row the limit is the answer itself (the certified value).
            finite = bool(np.all(np.isfinite(logits)))
            arrays: dict[str, Any] = {"x": rows} | ({} if mask is None else {"mask": mask})
            worst = Worst(
                case=f"policy {key!r}" + (f" ({label})" if label else ""),
                row=0,
                column=column,
                actual=float(out[0, column]),
                expected=float(limit[0, column]) if finite else math.nan,
                allowance=math.nan,
                error_ulps=math.nan,
                allowed_ulps=math.nan,
                inputs=rows,
                mask=mask,
                arrays=arrays,
            )
            non_finite = not bool(np.all(np.isfinite(out)))
            yield PolicyOutcome(key, observed, worst, non_finite=non_finite, label=label)

    # --- the expected output --------------------------------------------------------------------

    def expected(self, arrays: Mapping[str, Any], dtype: str, options: Mapping[str, Any]) -> F64:
        """The certified output on ``arrays["x"]`` (masked by ``arrays["mask"]``)."""
        rows = np.atleast_2d(np.asarray(arrays["x"], dtype=np.float64))
        mask = arrays.get("mask")
        if mask is not None:
            rows = np.where(np.atleast_2d(np.asarray(mask, dtype=bool)), rows, -np.inf)
        return _reference(rows, self.spec, dtype, options.get("s")).values


SOFTMAX = RowEngine(RowSpec())
"""The engine of ``kind="softmax"``."""
LOG_SOFTMAX = RowEngine(RowSpec(log=True))
"""The engine of ``kind="log_softmax"``."""
MASKED_SOFTMAX = RowEngine(RowSpec(masked=True))
"""The engine of ``kind="masked_softmax"``."""
ADAPTIVE_TEMPERATURE = RowEngine(RowSpec(beta="adaptive"))
"""The engine of ``kind="adaptive_temperature"``."""
SSMAX = RowEngine(RowSpec(beta="ssmax"))
"""The engine of ``kind="ssmax"``."""
