"""The battery's report: one result per property and dtype, the named behaviours, renderings.

A failing :class:`PropertyResult` carries what a person needs to act: the worst input
(the rows themselves, saved to ``.npy`` files beside the report when they are long),
the actual and reference values there, the allowance (in the same unit as the error),
a runnable reproducer and, where one is known, a hint at the likely cause.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["INLINE_LIMIT", "PropertyResult", "Report", "Worst", "ulps_text"]

SMALLEST_ULPS = 0.01
"""ULP counts below this print as ``"<0.01 ULP"`` (ULPs of a natural scale such as
``Σ_j p_j|v_j|`` can be far below 1: ``9.31e-10 ULP`` read as a number is noise)."""


def ulps_text(value: float, digits: int = 3) -> str:
    """An error in ULPs for reports: ``"2.5 ULP"``, ``"<0.01 ULP"``, ``"0 ULP"``, ``"inf ULP"``.

    Notes
    -----
    ``0 < value < 0.01`` prints as ``<0.01 ULP``; other values with ``digits``
    significant digits (``g`` format).

    Examples
    --------
    >>> ulps_text(9.31e-10), ulps_text(0.0), ulps_text(38.46), ulps_text(0.5)
    ('<0.01 ULP', '0 ULP', '38.5 ULP', '0.5 ULP')
    """
    if 0 < value < SMALLEST_ULPS:
        return f"<{SMALLEST_ULPS:g} ULP"
    return f"{value:.{digits}g} ULP"


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
    textbook_ulp : float or None
        ``accuracy`` in a 16-bit dtype: the largest error of a plain two-pass softmax
        in the same dtype with float32 sums, on the same cases (``None`` elsewhere).
    """

    name: str
    dtype: str
    cases: int
    failures: int
    max_ulp: float
    message: str
    worst: Worst | None = None
    hint: str = ""
    textbook_ulp: float | None = None

    @property
    def error_ratio(self) -> float | None:
        """The worst error over the textbook's (``1.3`` reads "1.3× the textbook error").

        Informative: the verdict is the derived tolerance.  The textbook's error is
        taken as at least half an ULP (no float result does better).

        Examples
        --------
        >>> PropertyResult("accuracy", "float16", 9, 0, 3.0, "ok", textbook_ulp=2.0).error_ratio
        1.5
        """
        if self.textbook_ulp is None:
            return None
        return self.max_ulp / max(self.textbook_ulp, 0.5)

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
    if data.size > INLINE_LIMIT and _constant(data):
        value = repr(float(data.reshape(-1)[0])).replace("inf", "float('inf')")
        return f"np.full({data.shape!r}, {value})"
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
    _saved: dict[tuple[int, str], Path] = field(default_factory=dict, repr=False)

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
            if r.textbook_ulp is not None:
                item["textbook_ulp"] = _finite(r.textbook_ulp)
                item["error_ratio"] = _finite(r.error_ratio or 0.0)
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
                    "shape": list(np.asarray(w.inputs).shape),
                }
                if "perm" in w.extra:
                    item["worst"]["perm"] = [int(i) for i in w.extra["perm"]]
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
        cells: dict[tuple[str, str], PropertyResult] = {}
        for result in self.results:
            # several results of one property and dtype (the policy property: a required
            # behaviour and an unnamed output): the cell shows a failing one
            key = (result.name, result.dtype)
            if key not in cells or cells[key].passed:
                cells[key] = result
        return props, dtypes, cells

    @staticmethod
    def _cell(result: PropertyResult | None) -> str:
        if result is None:
            return "-"
        verdict = "ok" if result.passed else f"FAIL {result.failures}/{result.cases}"
        ratio = result.error_ratio
        if ratio is not None:
            return f"{verdict} ({ulps_text(result.max_ulp)}, {ratio:.3g}×)"
        return f"{verdict} ({ulps_text(result.max_ulp)})" if result.max_ulp else verdict

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

    def _legend(self) -> list[str]:
        if not any(r.textbook_ulp is not None for r in self.results):
            return []
        return [
            "×: the worst accuracy error over that of a plain two-pass softmax with float32 "
            "arithmetic, rounded once to the same 16-bit dtype (informative; the verdict is "
            "the tolerance)"
        ]

    def text(self, folder: str | Path | None = None, *, verbose: bool = False) -> str:
        """The text report: the table, each failing property with its reproducer, behaviours.

        Each failing property takes about 20 lines: its worst dtype in full (message,
        worst input, values, reproducer, likely cause) and one line for each other dtype
        (every dtype in full with ``verbose``; all of it is in :meth:`to_json`).  Long
        worst inputs are written as ``.npy`` files into ``folder`` when one is given;
        otherwise the reproducer rebuilds them from the suites where it can, and says
        how to get the file where it cannot.  No folder is ever created unasked.
        """
        lines = [self.table()]
        if self.tolerance:
            lines.append(f"tolerance: {self.tolerance}")
        lines += self._legend()
        for note in self.notes:
            lines.append(f"note: {note}")
        for group in self._groups():
            lines += ["", *self._describe_group(group, folder, verbose)]
        if self.policies:
            lines += ["", "named behaviours (reported, not failed unless required):"]
            lines += [f"  {line}" for line in self.behaviours()]
        return "\n".join(lines)

    def _groups(self) -> list[list[PropertyResult]]:
        """The failures grouped by property, worst dtype first in each group."""
        groups: dict[str, list[PropertyResult]] = {}
        for result in self.failures:
            groups.setdefault(result.name, []).append(result)
        return [
            sorted(group, key=lambda r: -r.failures / max(r.cases, 1)) for group in groups.values()
        ]

    def _describe_group(
        self, group: list[PropertyResult], folder: str | Path | None, verbose: bool
    ) -> list[str]:
        lines = self.describe(group[0], folder)
        for other in group[1:]:
            if verbose:
                lines += self.describe(other, folder)
            else:
                lines.append(f"  also [{other.dtype}]: {_clip(other.message)}")
        return lines

    def describe(self, result: PropertyResult, folder: str | Path | None = None) -> list[str]:
        """The lines of one failure: message, worst input, values, reproducer, hint."""
        lines = [f"{result.name} [{result.dtype}]: {_clip(result.message, 400)}"]
        w = result.worst
        if w is not None:
            lines.append(f"  worst input: {result.worst_input}")
            values = _values_line(w)
            if values:
                lines.append(values)
            code = self.reproducer(result, folder)
            lines.append("  reproduce:")
            lines += [f"    {line}" for line in code.splitlines()]
        if result.hint:
            lines.append(f"  likely cause: {result.hint}")
        return lines

    def to_markdown(self, folder: str | Path | None = None, *, verbose: bool = False) -> str:
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
        lines += ["", *self._legend()] if self._legend() else []
        if self.notes:
            lines += ["", *[f"- note: {note}" for note in self.notes]]
        if self.failures:
            lines += ["", "Failures:", ""]
            for group in self._groups():
                detail = self._describe_group(group, folder, verbose)
                lines.append(f"- {detail[0]}")
                if len(detail) > 1:
                    lines += ["", "  ```text", *[f"  {line}" for line in detail[1:]], "  ```"]
        if self.policies:
            lines += ["", "Named behaviours (reported, not failed unless required):", ""]
            lines += [f"- {key} → {value}" for key, value in self.policies.items()]
        return "\n".join(lines)

    def raise_if_failed(self, folder: str | Path | None = None, *, verbose: bool = False) -> None:
        """Raise :class:`AssertionError` with each failing property, its worst input and a
        reproducer (about 20 lines a property; every dtype in full with ``verbose``)."""
        __tracebackhide__ = True
        if self.passed:
            return
        lines = [f"{self.implementation} ({self.kind}, {self.library}) failed the oracle:"]
        for group in self._groups():
            lines += self._describe_group(group, folder, verbose)
        raise AssertionError("\n".join(lines))

    # --- reproducers ---------------------------------------------------------------------

    def _arrays(self, w: Worst) -> dict[str, Any]:
        if w.arrays:
            return dict(w.arrays)
        return {"x": w.inputs} | ({} if w.mask is None else {"mask": w.mask})

    def _load(self, result: PropertyResult, folder: str | Path | None) -> list[str]:
        """Lines defining each argument as a numpy array holding the worst input.

        Short arrays are written inline, constant ones as ``np.full``; long ones are
        saved to ``folder`` when one is given, else rebuilt from the suites when the
        engine said how, else named in a comment (the reproducer then needs the file).
        """
        w = result.worst
        assert w is not None
        lines = []
        for name, array in self._arrays(w).items():
            data = np.asarray(array)
            if data.size <= INLINE_LIMIT or _constant(data):
                lines.append(f"{name} = {_literal(data)}")
            elif folder is not None:
                lines.append(f"{name} = np.load({str(self._save(result, name, data, folder))!r})")
            elif name in w.rebuild:
                used = [f for f in ("suite_case", "masked_input") if f in w.rebuild[name]]
                lines.append(
                    f"from softmax_dispersion.testing.suites import {', '.join(used)}; "
                    f"{name} = {w.rebuild[name]}"
                )
            else:
                lines.append(
                    f"{name} = ...  # {w.case}, shape {data.shape}: not inlined; pass "
                    "folder=DIR (check --out DIR) to write it as .npy"
                )
        return lines

    def _save(self, result: PropertyResult, name: str, data: Any, folder: str | Path) -> Path:
        key = (id(result), name)
        if key not in self._saved:
            base = Path(folder)
            base.mkdir(parents=True, exist_ok=True)
            suffix = "" if name == "x" else f"-{name}"
            path = base / f"{result.name}-{result.dtype}{suffix}.npy"
            np.save(path, data)
            self._saved[key] = path
        return self._saved[key]

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
        arrays = self._arrays(w)
        lines = ["import numpy as np", *self._load(result, folder)]
        for name, array in arrays.items():
            if np.asarray(array).dtype == bool:
                converted = library.mask_source(name)
            else:
                converted = library.source(result.dtype, name)
            if converted:
                lines.append(converted)
        lines.append(self.source or "fn = ...  # the function under test")
        call = w.call or ("fn(x, mask)" if "mask" in arrays else "fn(x)")
        lines += _checks(result, self.kind, call, "mask" in arrays)
        return "\n".join(lines)


def _clip(text: str, limit: int = 200) -> str:
    """``text`` cut to ``limit`` characters (the JSON keeps it whole)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _constant(data: Any) -> bool:
    flat = np.asarray(data).reshape(-1)
    return bool(flat.size and data.dtype != bool and np.all(flat == flat[0]))


def _values_line(w: Worst) -> str:
    """``at (r, c): actual .., expected ..`` without NaN placeholders."""
    parts = []
    if not math.isnan(w.actual) or not math.isnan(w.expected):
        parts.append(f"actual {w.actual!r}")
    if not math.isnan(w.expected):
        parts.append(f"expected {w.expected!r}")
    if not math.isnan(w.error_ulps):
        parts.append(
            f"error {ulps_text(w.error_ulps, 4)}, allowed {ulps_text(w.allowed_ulps, 4)} "
            f"(±{w.allowance:.3g})"
        )
    elif not math.isnan(w.allowance):
        parts.append(f"allowed ±{w.allowance:.3g}")
    if not parts:
        return ""
    return f"  at ({w.row}, {w.column}): " + ", ".join(parts)


def _checks(result: PropertyResult, kind: str, call: str, masked: bool) -> list[str]:
    """The last lines of a reproducer: what to run to see ``result``'s failure."""
    from softmax_dispersion.testing.kinds import KINDS

    w = result.worst
    assert w is not None
    r, c = w.row, w.column
    record = KINDS.get(kind)
    log = record is not None and record.log_output
    if result.name in ("accuracy", "shift_invariance"):
        if record is not None and record.assert_source and not w.case.startswith("policy"):
            return record.assert_source.format(call=call).splitlines()
        expected = "" if math.isnan(w.expected) else f", 'expected', {w.expected!r}"
        return [f"print({call}[{r}, {c}]{expected})"]
    if result.name == "permutation":
        perm = [int(i) for i in w.extra.get("perm", [])]
        shown = (
            f"perm = np.array({perm!r})"
            if len(perm) <= 32
            else f"perm = ...  # a permutation of {len(perm)} entries (in the report's JSON)"
        )
        return [
            shown,
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
            if log
            else f"np.asarray({call}[{r}], dtype=float).sum()"
        )
        return [f"print({total}, 'should be 1 within', {w.allowance!r})"]
    if result.name == "shape_dtype":
        return [f"print({call}.dtype, 'for an input of dtype', x.dtype)"]
    return [f"print({call}[{r}])"]
