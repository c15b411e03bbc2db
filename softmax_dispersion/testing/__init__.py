"""The oracle: certified references, assertions and a property battery for softmax code.

Three layers (the Oracle page of the docs, docs/oracle.md, describes each):

1. :func:`reference_softmax`: the certified, correctly rounded softmax or log-softmax of
   a numpy, torch or jax array (masked or not), with float64 enclosures.
2. :func:`assert_softmax_close` (one output against the reference, T12's tolerance) and
   :func:`check_softmax` (the whole battery against a callable, a :class:`Report`).
3. Inputs: the fixed suites (:mod:`softmax_dispersion.testing.suites`) and hypothesis
   strategies (``softmax_dispersion.testing.strategies``: it needs hypothesis).

Importing this package loads nothing but the standard library: numpy and the oracle's
modules load on first use of a name, and torch, jax, python-flint and hypothesis only
when asked for.  (So does the pytest plugin, which lives here.)

Examples
--------
>>> import numpy as np
>>> from softmax_dispersion.testing import assert_softmax_close, reference_softmax
>>> x = np.array([0.0, 1.0], dtype=np.float32)
>>> reference_softmax(x).values.tolist()
[0.2689414322376251, 0.7310585975646973]
>>> assert_softmax_close(np.exp(x - 1) / np.exp(x - 1).sum(), x)
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from softmax_dispersion.testing import strategies
    from softmax_dispersion.testing.assertions import assert_softmax_close
    from softmax_dispersion.testing.attention import check_attention
    from softmax_dispersion.testing.attention_reference import (
        AttentionReference,
        reference_attention,
    )
    from softmax_dispersion.testing.battery import SoftmaxCallError, check_softmax
    from softmax_dispersion.testing.battery_report import PropertyResult, Report
    from softmax_dispersion.testing.kinds import KINDS, Kind
    from softmax_dispersion.testing.reference import Reference, reference_softmax
    from softmax_dispersion.testing.tolerance import Tolerance
    from softmax_dispersion.testing.vjp import check_softmax_vjp
    from softmax_dispersion.testing.vjp_reference import VJPReference, reference_softmax_vjp

__all__ = [
    "KINDS",
    "AttentionReference",
    "Kind",
    "PropertyResult",
    "Reference",
    "Report",
    "SoftmaxCallError",
    "Tolerance",
    "VJPReference",
    "assert_softmax_close",
    "check_attention",
    "check_softmax",
    "check_softmax_vjp",
    "reference_attention",
    "reference_softmax",
    "reference_softmax_vjp",
    "strategies",
]

_HOMES = {
    "AttentionReference": "attention_reference",
    "KINDS": "kinds",
    "Kind": "kinds",
    "PropertyResult": "battery_report",
    "Reference": "reference",
    "Report": "battery_report",
    "SoftmaxCallError": "battery",
    "VJPReference": "vjp_reference",
    "check_attention": "attention",
    "check_softmax_vjp": "vjp",
    "reference_attention": "attention_reference",
    "reference_softmax_vjp": "vjp_reference",
    "Tolerance": "tolerance",
    "assert_softmax_close": "assertions",
    "check_softmax": "battery",
    "reference_softmax": "reference",
}


def __getattr__(name: str) -> Any:
    if name == "strategies":
        return import_module("softmax_dispersion.testing.strategies")
    if name in _HOMES:
        value = getattr(import_module(f"softmax_dispersion.testing.{_HOMES[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'softmax_dispersion.testing' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
