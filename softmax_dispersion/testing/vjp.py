"""The engines of ``kind="softmax_vjp"`` and ``"log_softmax_vjp"``: ``fn(x, g)``.

``fn(x, g)`` returns the VJP (backward pass) along the last axis: ``p ⊙ (g − ⟨g, p⟩)``
for softmax, ``g − p·Σg`` for log-softmax, ``p = softmax(x)``.  Each case of the suites
(:mod:`~softmax_dispersion.testing.vjp_suites`) is one call; the output is compared with
the certified reference (:mod:`~softmax_dispersion.testing.vjp_reference`) within T15's
allowance (:mod:`~softmax_dispersion.testing.vjp_tolerance`, plus the reference's
radius), errors counted in ULPs of T15's natural scale ``p_i(|g_i| + Σ_j p_j|g_j|)``
(log-softmax: ``|g_i| + p_i Σ_j|g_j|``).  Properties: ``accuracy``, ``permutation`` (``x``
and ``g`` permuted together permute the output), ``batch_independence`` (the first two
rows alone), ``shape_dtype``.  A row of only ``−inf`` is the ``all -inf row`` policy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from softmax_dispersion.testing.attention_reference import one_blas_thread
from softmax_dispersion.testing.battery_report import Worst
from softmax_dispersion.testing.calls import Call, SoftmaxCallError
from softmax_dispersion.testing.engine import PolicyOutcome, Session
from softmax_dispersion.testing.properties import CaseRun, Evaluated
from softmax_dispersion.testing.vjp_reference import reference_softmax_vjp, vjp_scale
from softmax_dispersion.testing.vjp_suites import (
    SUITE_BUILDERS,
    VJPCase,
    vjp_policy_cases,
    vjp_suites,
)
from softmax_dispersion.testing.vjp_tolerance import vjp_allowance

__all__ = ["LOG_SOFTMAX_VJP", "SOFTMAX_VJP", "VJPEngine", "check_softmax_vjp", "reproducer"]

F64 = npt.NDArray[np.float64]
Bool = npt.NDArray[np.bool_]

_CONVERT = {
    "numpy": "x, g = x.astype({dtype!r}), g.astype({dtype!r})",
    "torch": "import torch\nx, g = (torch.from_numpy(a).to(torch.{dtype}) for a in (x, g))",
    "jax": "import jax; jax.config.update('jax_enable_x64', True); import jax.numpy as jnp\n"
    "x, g = (jnp.asarray(a, dtype=jnp.{dtype}) for a in (x, g))",
}


def reproducer(case: VJPCase, log: bool, dtype: str, library: str, seed: int, recipe: str) -> str:
    """Python code that rebuilds ``case`` in ``dtype`` and prints its largest deviation.

    ``recipe`` turns the suite's ``x, g`` into the call's (a permutation, a row);
    ``{fn}`` stands for the line that defines ``fn`` (the report fills it in).
    """
    lines = [
        "import numpy as np",
        "from softmax_dispersion.testing.vjp_suites import vjp_suites",
        f"case = next(c for c in vjp_suites({dtype!r}, [{case.suite!r}], seed={seed}) "
        f"if c.name == {case.name!r})",
        "x, g = case.x, case.g",
        *([recipe] if recipe else []),
        _CONVERT[library].format(dtype=dtype),
        "{fn}",
        "out = np.asarray(fn(x, g), dtype=float)",
        "from softmax_dispersion.testing.vjp_reference import reference_softmax_vjp",
        f"ref = reference_softmax_vjp(x, g, log={log})",
        "gap = np.where(np.isnan(ref.values), 0.0, np.abs(out - ref.values))",
        "at = np.unravel_index(np.argmax(np.nan_to_num(gap, nan=np.inf)), gap.shape)",
        "print('largest difference at', at, ':', out[at], 'reference', ref.values[at])",
    ]
    return "\n".join(lines)


def _hint(log: bool, x: F64, g: F64, out: F64, values: F64, allowed: F64, dtype: str) -> str:
    with np.errstate(all="ignore"):
        bad_rows = (~(np.abs(out - values) <= allowed)).any(axis=-1)
    if not bad_rows.any():
        return ""
    got, want = out[bad_rows], values[bad_rows]
    if not np.all(np.isfinite(got)):
        return "a NaN or infinity for finite logits: an exp overflowed, or −inf·0"
    if not log:
        with np.errstate(all="ignore"):
            rows = x[bad_rows]
            p = np.exp(rows - rows.max(axis=-1, keepdims=True))
            p = p / p.sum(axis=-1, keepdims=True)
            if np.allclose(got, p * g[bad_rows], rtol=1e-2, atol=1e-6):
                return "p ⊙ g without the ⟨g, p⟩ term: the Jacobian's rank-one part is missing"
    if dtype == "float64":
        with np.errstate(all="ignore"):
            relative = np.nanmax(np.abs(got - want) / np.maximum(np.abs(want), 1e-300))
        if 2.0**-30 < relative < 2.0**-18:
            return "an error near 2**-24 in float64: computed in float32 somewhere?"
    return ""


class VJPEngine:
    """The engine of one VJP kind (see the module's docstring)."""

    def __init__(self, log: bool) -> None:
        self.log = log

    def suites(self) -> Mapping[str, Callable[[str, int], Sequence[Any]]]:
        """The VJP suites (:mod:`~softmax_dispersion.testing.vjp_suites`)."""
        return SUITE_BUILDERS

    def cases(self, session: Session, suites: Sequence[str]) -> list[Any]:
        """The cases of ``suites`` in the session's dtype."""
        return vjp_suites(session.dtype, list(suites), session.seed)

    def _call(self, session: Session, x: F64, g: F64, where: str) -> tuple[F64, F64, F64, str]:
        called = session.call(Call(where, (("x", x), ("g", g))))
        return called.inputs["x"], called.inputs["g"], called.out, called.out_dtype

    def _evaluated(
        self,
        session: Session,
        case: VJPCase,
        label: str,
        recipe: str,
        x: F64,
        g: F64,
        out: F64,
    ) -> tuple[Evaluated, Bool]:
        """The rows of one output with a finite maximum, and which rows those are."""
        dtype = session.dtype
        ref = reference_softmax_vjp(x, g, log=self.log, dtype=dtype)
        allowed = vjp_allowance(ref, x, g, tolerance=session.tolerance)
        n = x.shape[-1]
        rows_x, rows_g = x.reshape(-1, n), g.reshape(-1, n)
        values = ref.values.reshape(-1, n)
        allowed = allowed.reshape(-1, n) + np.nan_to_num(ref.radius.reshape(-1, n))
        natural = vjp_scale(ref.probs.reshape(-1, n), rows_g, self.log)
        kept = ~ref.undefined.reshape(-1)
        flat = out.reshape(-1, n)
        code = reproducer(case, self.log, dtype, session.library.name, session.seed, recipe)
        ev = Evaluated(
            label=label,
            inputs=rows_x[kept],
            out=flat[kept],
            values=values[kept],
            allowed=allowed[kept],
            scale=natural[kept],
            arrays={"x": case.x, "g": case.g},
            call="fn(x, g)",
            rebuild={"reproducer": code},
            hint=_hint(
                self.log, rows_x[kept], rows_g[kept], flat[kept], values[kept], allowed[kept], dtype
            ),
        )
        return ev, kept

    def evaluate(self, cases: Sequence[Any], session: Session) -> Iterator[CaseRun]:
        """Call the implementation on every case and its variants; yield each evaluated."""
        with one_blas_thread():
            for case in cases:
                yield self._run(case, session)

    def _run(self, case: VJPCase, session: Session) -> CaseRun:
        x, g, out, out_dtype = self._call(session, case.x, case.g, case.name)
        main, kept = self._evaluated(session, case, case.name, "", x, g, out)
        n = case.x.shape[-1]
        permuted = None
        if case.suite in ("random", "neg_inf") and n > 1:
            perm = np.random.default_rng(n).permutation(n)
            label = f"{case.name} permuted"
            px, pg, pout, _ = self._call(session, case.x[..., perm], case.g[..., perm], label)
            recipe = (
                f"perm = np.random.default_rng({n}).permutation({n})\n"
                "x, g = x[..., perm], g[..., perm]"
            )
            ev, _ = self._evaluated(session, case, label, recipe, px, pg, pout)
            permuted = (perm, ev)
        alone: list[tuple[int, F64]] = []
        if case.suite == "random" and case.x.ndim == 2 and case.x.shape[0] >= 2:
            position = np.cumsum(kept) - 1
            for r in range(2):
                if not kept[r]:
                    continue
                _, _, single, _ = self._call(
                    session, case.x[r : r + 1], case.g[r : r + 1], f"{case.name} row {r} alone"
                )
                alone.append((int(position[r]), single.reshape(1, n)))
        return CaseRun(case=case, main=main, out_dtype=out_dtype, permuted=permuted, alone=alone)

    def policies(self, session: Session) -> Iterator[PolicyOutcome]:
        """The row of only ``−inf``, named."""
        for key, case in vjp_policy_cases(session.dtype).items():
            try:
                _, g, out, _ = self._call(session, case.x, case.g, f"policy {key!r}")
            except SoftmaxCallError as exc:
                cause = exc.__cause__
                observed = f"raises {type(cause).__name__}" if cause else f"error: {exc}"
                yield PolicyOutcome(key, observed)
                continue
            row = out[1]
            with np.errstate(all="ignore"):
                if np.all(np.isnan(row)):
                    observed = "NaN"
                elif np.all(row == 0):
                    observed = "zeros"
                elif self.log and np.array_equal(row, g[1]):
                    observed = "g"
                else:
                    listed = "[" + ", ".join(f"{float(v):.4g}" for v in row) + "]"
                    observed = ("NaN in part: " if np.isnan(row).any() else "") + listed
            column = int(np.argmax(np.where(np.isnan(row), np.inf, np.abs(row))))
            worst = Worst(
                case=f"policy {key!r}",
                row=1,
                column=column,
                actual=float(row[column]),
                expected=math.nan,
                allowance=math.nan,
                error_ulps=math.nan,
                allowed_ulps=math.nan,
                inputs=case.x,
                arrays={"x": case.x, "g": case.g},
                call="fn(x, g)",
            )
            yield PolicyOutcome(key, observed, worst)

    def expected(self, arrays: Mapping[str, Any], dtype: str, options: Mapping[str, Any]) -> F64:
        """The certified VJP of ``arrays["x"]`` applied to ``arrays["g"]``, rounded to ``dtype``."""
        return reference_softmax_vjp(arrays["x"], arrays["g"], log=self.log, dtype=dtype).values


SOFTMAX_VJP = VJPEngine(log=False)
"""The engine of ``kind="softmax_vjp"``."""
LOG_SOFTMAX_VJP = VJPEngine(log=True)
"""The engine of ``kind="log_softmax_vjp"``."""


def check_softmax_vjp(fn: Callable[..., Any], *, log: bool = False, **kwargs: Any) -> Any:
    """``check_softmax(fn, kind="softmax_vjp")`` (``"log_softmax_vjp"`` with ``log=True``).

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
    from softmax_dispersion.testing.battery import check_softmax

    return check_softmax(fn, kind="log_softmax_vjp" if log else "softmax_vjp", **kwargs)
