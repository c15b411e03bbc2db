"""The battery's report: one result per property and dtype, the named behaviours, renderings.

A failing :class:`PropertyResult` carries what a person needs to act: the worst input
(the rows themselves, saved to ``.npy`` files beside the report when they are long),
the actual and reference values there, the allowance (in the same unit as the error),
a runnable reproducer and, where one is known, a hint at the likely cause.
"""

from __future__ import annotations

import json
import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["INLINE_LIMIT", "PropertyResult", "Report", "Worst"]

F64 = npt.NDArray[np.float64]
Bool = npt.NDArray[np.bool_]
INLINE_LIMIT = 16
"""Rows of at most this many values are written into the reproducer; longer ones to ``.npy``."""


@dataclass(frozen=True)
class Worst:
    """The worst failing element of a property (or the worst case when all passed).

    Attributes
    ----------
    case : str
        The case name (``"suite/case"``) and what was done to it (``"+ 64"``, ...).
    row, column : int
        Where in the case's batch.
    actual, expected : float
        The implementation's value and what it was compared with.
    allowance : float
        The absolute error allowed there.
    error_ulps, allowed_ulps : float
        The error and the allowance in ULPs of the output dtype (one unit for both).
    inputs : numpy.ndarray
        The input to reproduce it with, shape ``(rows, n)`` (float64 values of the dtype).
    mask : numpy.ndarray or None
        The boolean mask (``kind="masked_softmax"``).
    extra : dict
        Property-specific data for the reproducer (a permutation, the row index).
    arrays : dict
        Every argument of the call, by name, for the reproducer (empty: ``x`` and
        ``mask`` from ``inputs`` and ``mask``).
    call : str
        The call for the reproducer (empty: ``fn(x)``, or ``fn(x, mask)``).
    rebuild : dict
        Python expressions rebuilding long arrays from the suites, by name; under
        ``"reproducer"``, a whole program that rebuilds the input from its suite and
        prints the failure (``{fn}`` standing for the line defining ``fn``).
    """

    case: str
    row: int
    column: int
    actual: float
    expected: float
    allowance: float
    error_ulps: float
    allowed_ulps: float
    inputs: F64
    mask: Bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    arrays: dict[str, Any] = field(default_factory=dict)
    call: str = ""
    rebuild: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PropertyResult:
    """One property's result for one dtype.

    Attributes
    ----------
    name, dtype : str
        The property checked and the dtype.
    cases : int
        Rows (or outputs) checked.
    failures : int
        How many of them failed.
    max_ulp : float
        The largest error in ULPs of the dtype (0 where the property has none).
    message : str
        ``"ok"``, or what failed: counts, the worst error and its allowance in ULPs.
    worst : Worst or None
        The worst failing element (the worst one checked when none failed).
    hint : str
        The likely cause of a failure, where one is recognised (``""`` otherwise).
    """

    name: str
    dtype: str
    cases: int
    failures: int
    max_ulp: float
    message: str
    worst: Worst | None = None
    hint: str = ""

    @property
    def passed(self) -> bool:
        """Whether no case failed."""
        return self.failures == 0

    @property
    def worst_input(self) -> str:
        """A one-line description of the worst input."""
        if self.worst is None:
            return ""
        w = self.worst
        return f"{w.case} row {w.row}: {short_row(w.inputs[min(w.row, len(w.inputs) - 1)])}"


def short_row(row: npt.ArrayLike, limit: int = 8) -> str:
    """A short repr of a row: every value when ``n <= limit``, else its ends and length.

    Examples
    --------
    >>> short_row([0.0, 1.5])
    '[0.0, 1.5]'
    >>> short_row(range(100), limit=4)
    '[0.0, 1.0, ..., 98.0, 99.0] (n=100)'
    """
    values = [float(v) for v in np.asarray(row, dtype=np.float64).reshape(-1)]
    if len(values) <= limit:
        return "[" + ", ".join(repr(v) for v in values) + "]"
    half = limit // 2
    head = ", ".join(repr(v) for v in values[:half])
    tail = ", ".join(repr(v) for v in values[-half:])
    return f"[{head}, ..., {tail}] (n={len(values)})"


def _finite(value: float) -> float | str:
    return value if math.isfinite(value) else str(value)


def _literal(array: npt.ArrayLike, dtype: str = "float64") -> str:
    data = np.asarray(array)
    if data.dtype == bool:
        return f"np.array({data.tolist()!r})"
    values = repr([float(v) for v in data.reshape(-1)])
    values = values.replace("inf", "float('inf')").replace("nan", "float('nan')")
    return f"np.array({values}).reshape({data.shape!r})"


@dataclass
class Report:
    """The result of :func:`~softmax_dispersion.testing.check_softmax`.

    Attributes
    ----------
    kind, library, implementation : str
        What was checked.
    results : list of PropertyResult
        One per property and dtype.
    policies : dict of str to str
        The named behaviours observed (not failures unless required): the non-finite
        rows, the fully masked row, ``subnormals`` (``flushed`` or ``kept``) and
        ``input`` (``kept`` or ``modified``).
    notes : list of str
        Findings worth reading even when everything passed ("the function modified its
        input", the dtypes judged).
    seconds : float
        Wall time of the check.
    source : str
        Python code that defines ``fn`` for the reproducers (an import), or ``""``.
    tolerance : str
        The tolerance model's label.
    """

    kind: str
    library: str
    implementation: str
    results: list[PropertyResult] = field(default_factory=list)
    policies: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    source: str = ""
    tolerance: str = ""
    _saved: dict[int, Path] = field(default_factory=dict, repr=False)

    @property
    def passed(self) -> bool:
        """Whether every property passed for every dtype."""
        return all(result.passed for result in self.results)

    @property
    def failures(self) -> list[PropertyResult]:
        """The failed results."""
        return [result for result in self.results if not result.passed]

    # --- machine renderings -----------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The report as plain data (infinite ULP errors as the string ``"inf"``)."""
        results = []
        for r in self.results:
            item: dict[str, Any] = {
                "property": r.name,
                "dtype": r.dtype,
                "cases": r.cases,
                "failures": r.failures,
                "max_ulp": _finite(r.max_ulp),
                "passed": r.passed,
                "message": r.message,
                "hint": r.hint,
            }
            if r.worst is not None and not r.passed:
                w = r.worst
                item["worst"] = {
                    "case": w.case,
                    "row": w.row,
                    "column": w.column,
                    "actual": _finite(w.actual),
                    "expected": _finite(w.expected),
                    "allowance": _finite(w.allowance),
                    "error_ulps": _finite(w.error_ulps),
                    "allowed_ulps": _finite(w.allowed_ulps),
                }
            results.append(item)
        return {
            "kind": self.kind,
            "library": self.library,
            "implementation": self.implementation,
            "tolerance": self.tolerance,
            "passed": self.passed,
            "seconds": round(self.seconds, 3),
            "results": results,
            "policies": self.policies,
            "notes": self.notes,
        }

    def to_json(self) -> str:
        """The report as a JSON object (see :meth:`to_dict`)."""
        return json.dumps(self.to_dict(), indent=2)

    # --- human renderings ---------------------------------------------------------------

    def _grid(self) -> tuple[list[str], list[str], dict[tuple[str, str], PropertyResult]]:
        dtypes = list(dict.fromkeys(result.dtype for result in self.results))
        props = list(dict.fromkeys(result.name for result in self.results))
        cells = {(result.name, result.dtype): result for result in self.results}
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
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
            for row in [header, *rows]
        ]
        lines.insert(1, "  ".join("-" * width for width in widths))
        verdict = "PASSED" if self.passed else f"FAILED ({len(self.failures)} property/dtype pairs)"
        return "\n".join([f"{self.kind} [{self.library}] {self.implementation}: {verdict}", *lines])

    def behaviours(self) -> list[str]:
        """The named behaviours as lines ``key: observed``."""
        return [f"{key}: {value}" for key, value in self.policies.items()]

    def text(self, folder: str | Path | None = None) -> str:
        """The full text report: the table, every failure with its reproducer, behaviours.

        Long worst inputs are written as ``.npy`` files into ``folder`` (a new temporary
        folder when ``None``), and the reproducers load them from there.
        """
        lines = [self.table()]
        if self.tolerance:
            lines.append(f"tolerance: {self.tolerance}")
        for note in self.notes:
            lines.append(f"note: {note}")
        for r in self.failures:
            lines += ["", *self.describe(r, folder)]
        if self.policies:
            lines += ["", "named behaviours (reported, not failed unless required):"]
            lines += [f"  {line}" for line in self.behaviours()]
        return "\n".join(lines)

    def describe(self, result: PropertyResult, folder: str | Path | None = None) -> list[str]:
        """The lines of one failure: message, worst input, values, reproducer, hint."""
        lines = [f"{result.name} [{result.dtype}]: {result.message}"]
        w = result.worst
        if w is not None:
            lines.append(f"  worst input: {result.worst_input}")
            values = f"  at ({w.row}, {w.column}): actual {w.actual!r}, expected {w.expected!r}"
            if not math.isnan(w.error_ulps):
                values += (
                    f", error {w.error_ulps:.4g} ULP, allowed {w.allowed_ulps:.4g} ULP "
                    f"(±{w.allowance:.3g})"
                )
            elif not math.isnan(w.allowance):
                values += f", allowed ±{w.allowance:.3g}"
            if not (math.isnan(w.actual) and math.isnan(w.expected)) or values.count(",") > 1:
                lines.append(values)
            code = self.reproducer(result, folder)
            lines.append("  reproduce:")
            lines += [f"    {line}" for line in code.splitlines()]
        if result.hint:
            lines.append(f"  likely cause: {result.hint}")
        return lines

    def to_markdown(self, folder: str | Path | None = None) -> str:
        """The report as Markdown: a table, the failures and the named behaviours."""
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
        if self.tolerance:
            lines += ["", f"Tolerance: {self.tolerance}."]
        if self.notes:
            lines += ["", *[f"- note: {note}" for note in self.notes]]
        if self.failures:
            lines += ["", "Failures:", ""]
            for r in self.failures:
                detail = self.describe(r, folder)
                lines.append(f"- {detail[0]}")
                if len(detail) > 1:
                    lines += ["", "  ```text", *[f"  {line}" for line in detail[1:]], "  ```"]
        if self.policies:
            lines += ["", "Named behaviours (reported, not failed unless required):", ""]
            lines += [f"- {key} → {value}" for key, value in self.policies.items()]
        return "\n".join(lines)

    def raise_if_failed(self, folder: str | Path | None = None) -> None:
        """Raise :class:`AssertionError` with every failure, its worst input and reproducer."""
        __tracebackhide__ = True
        if self.passed:
            return
        lines = [f"{self.implementation} ({self.kind}, {self.library}) failed the oracle:"]
        for r in self.failures:
            lines += self.describe(r, folder)
        raise AssertionError("\n".join(lines))

    # --- reproducers ---------------------------------------------------------------------

    def _load(self, result: PropertyResult, folder: str | Path | None) -> list[str]:
        """Lines defining ``x`` (and ``mask``) as numpy arrays holding the worst input."""
        w = result.worst
        assert w is not None
        if w.inputs.size <= INLINE_LIMIT:
            lines = [f"x = {_literal(w.inputs)}"]
            if w.mask is not None:
                lines.append(f"mask = {_literal(w.mask)}")
            return lines
        key = id(result)
        if key not in self._saved:
            base = (
                Path(folder)
                if folder is not None
                else Path(tempfile.mkdtemp(prefix="softmax-oracle-"))
            )
            base.mkdir(parents=True, exist_ok=True)
            stem = base / f"{result.name}-{result.dtype}"
            np.save(f"{stem}.npy", w.inputs)
            if w.mask is not None:
                np.save(f"{stem}-mask.npy", w.mask)
            self._saved[key] = stem
        stem = self._saved[key]
        lines = [f"x = np.load({str(stem) + '.npy'!r})"]
        if w.mask is not None:
            lines.append(f"mask = np.load({str(stem) + '-mask.npy'!r})")
        return lines

    def reproducer(self, result: PropertyResult, folder: str | Path | None = None) -> str:
        """Python code that rebuilds the worst input of ``result`` and shows the failure."""
        from softmax_dispersion.testing.adapters import adapter

        w = result.worst
        if w is None:
            return ""
        program = w.rebuild.get("reproducer")
        if isinstance(program, str):  # a kind whose whole input is rebuilt from its suite
            return program.replace("{fn}", self.source or "fn = ...  # the function under test")
        library = adapter(self.library)
        lines = ["import numpy as np", *self._load(result, folder), library.source(result.dtype)]
        masked = w.mask is not None
        if masked and library.mask_source():
            lines.append(library.mask_source())
        lines.append(self.source or "fn = ...  # the function under test")
        call = "fn(x, mask)" if masked else "fn(x)"
        lines += _checks(result, self.kind, call, masked)
        return "\n".join(lines)


def _checks(result: PropertyResult, kind: str, call: str, masked: bool) -> list[str]:
    """The last lines of a reproducer: what to run to see ``result``'s failure."""
    w = result.worst
    assert w is not None
    r, c = w.row, w.column
    if result.name in ("accuracy", "shift_invariance") and kind in (
        "softmax",
        "log_softmax",
        "masked_softmax",
    ):
        options = ", log=True" if kind == "log_softmax" else ", mask=mask" if masked else ""
        return [
            "from softmax_dispersion.testing import assert_softmax_close",
            f"assert_softmax_close({call}, x{options})",
        ]
    if result.name in ("accuracy", "shift_invariance"):
        return [f"print({call}[{r}, {c}], 'expected', {w.expected!r})"]
    if result.name == "permutation":
        perm = w.extra.get("perm", [])
        return [
            f"perm = np.array({list(map(int, perm))!r})",
            f"print(({call})[:, perm][{r}, {c}], 'vs, on the permuted input,', "
            + (
                f"fn(x[:, perm], mask[:, perm])[{r}, {c}])"
                if masked
                else f"fn(x[:, perm])[{r}, {c}])"
            ),
        ]
    if result.name == "batch_independence":
        alone = f"fn(x[{r}:{r + 1}], mask[{r}:{r + 1}])" if masked else f"fn(x[{r}:{r + 1}])"
        return [f"print(({call})[{r}, {c}], 'in the batch vs alone', {alone}[0, {c}])"]
    if result.name == "row_sum":
        total = (
            f"np.exp(np.asarray({call}[{r}], dtype=float)).sum()"
            if kind == "log_softmax"
            else (f"np.asarray({call}[{r}], dtype=float).sum()")
        )
        return [f"print({total}, 'should be 1 within', {w.allowance!r})"]
    if result.name == "shape_dtype":
        return [f"print({call}.dtype, 'for an input of dtype', x.dtype)"]
    return [f"print({call}[{r}])"]
