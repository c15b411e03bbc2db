"""The main job's oracle section: the battery against every installed softmax library."""

from __future__ import annotations

import importlib.util
import json
import math
import time
import warnings
from pathlib import Path
from typing import Any

from softmax_dispersion.reproduce.section import Section

ORACLE_KINDS = ("softmax", "log_softmax")


def installed_targets() -> list[str]:
    """The built-in targets whose library can be imported here."""
    from softmax_dispersion.testing.targets import BUILTIN_TARGETS

    return [name for name in BUILTIN_TARGETS if importlib.util.find_spec(name) is not None]


def _max_ulp(report: Any) -> float:
    values = [
        float(r.max_ulp)
        for r in report.results
        if r.max_ulp is not None and math.isfinite(float(r.max_ulp))
    ]
    return max(values, default=0.0)


def section(out: Path) -> Section:
    """Run :func:`~softmax_dispersion.testing.check_softmax` on each installed library.

    Every built-in target of ``softmax-dispersion check`` (numpy's textbook softmax,
    scipy, torch, jax) that is installed is checked as softmax and as log-softmax; the
    section passes when every one passes.
    """
    from softmax_dispersion.testing import check_softmax
    from softmax_dispersion.testing.targets import BUILTIN_TARGETS, builtin

    start = time.perf_counter()
    targets = installed_targets()
    rows = []
    for name in targets:
        for kind in ORACLE_KINDS:
            target = builtin(name, kind)
            began = time.perf_counter()
            with warnings.catch_warnings():
                # The battery feeds ±inf and NaN on purpose: the libraries' warnings are noise.
                warnings.simplefilter("ignore", RuntimeWarning)
                report = check_softmax(target.fn, kind=kind, library=target.library)
            rows.append((name, kind, target.library, report, time.perf_counter() - began))

    table = [
        f"{'library':<8} {'kind':<12} {'arrays':<6} {'verdict':<7} {'max ULP':>9} "
        f"{'failures':>9} {'seconds':>8}"
    ]
    for name, kind, library, report, seconds in rows:
        failures = sum(r.failures for r in report.results)
        table.append(
            f"{name:<8} {kind:<12} {library:<6} {'pass' if report.passed else 'FAIL':<7} "
            f"{_max_ulp(report):>9.3g} {failures:>9} {seconds:>8.1f}"
        )
    skipped = [name for name in BUILTIN_TARGETS if name not in targets]
    if skipped:
        table.append(f"not installed, not checked: {', '.join(skipped)}")
    passed = bool(rows) and all(report.passed for *_, report, _ in rows)
    good = sum(report.passed for *_, report, _ in rows)
    summary = (
        f"{good}/{len(rows)} library checks pass ({', '.join(targets)}; softmax and "
        f"log_softmax), worst {max((_max_ulp(r) for *_, r, _ in rows), default=0.0):.3g} ULP"
    )
    details = []
    for *_, report, _ in rows:
        details += [report.to_markdown(), ""]  # each report opens with its own heading
    markdown = "\n".join(
        [
            "## Oracle: every installed softmax against certified references",
            "",
            "Each built-in target of `softmax-dispersion check` runs the oracle's whole "
            "battery; accuracy is measured in ULPs of the output dtype against the "
            "correctly rounded reference, with T12's error bound as the tolerance, and "
            "the non-finite policies are named, not failed.",
            "",
            "```text",
            *table,
            "```",
            "",
            "<details><summary>Every report</summary>",
            "",
            *details,
            "</details>",
        ]
    )
    data = {
        "checks": [
            {
                "library": name,
                "kind": kind,
                "arrays": library,
                "passed": report.passed,
                "max_ulp": _max_ulp(report),
                "seconds": round(seconds, 3),
                "report": json.loads(report.to_json()),
            }
            for name, kind, library, report, seconds in rows
        ],
        "not_installed": skipped,
    }
    return Section(
        name="oracle",
        passed=passed,
        summary=summary,
        markdown=markdown,
        data=data,
        seconds=time.perf_counter() - start,
        table="\n".join(table),
    )
