"""The theory layer: the claims (T1, T2, ...) as checkable proofs, and the exported formulas.

Each claim module can be run as a proof-check script, e.g.
``python -m softmax_dispersion.theory.dispersion``.  The modules load on first use.

Examples
--------
>>> from softmax_dispersion.theory import check, claim_by_id
>>> claim_by_id("t2").id
'T2'
>>> check("T2")[0].verified
True
"""

from __future__ import annotations

import os
import sys
from importlib import import_module
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any


def _import_sympy_without_flint() -> None:
    """Import sympy with gmpy2 or pure-Python ground types, never python-flint.

    sympy adopts python-flint as its ground types whenever it is installed; the theory
    layer promises not to load it (it is the numerics layer's optional engine).  The
    environment variable sympy reads is set only for this import and then restored;
    if sympy is already imported, its choice stands.
    """
    if "sympy" in sys.modules or "SYMPY_GROUND_TYPES" in os.environ:
        return
    os.environ["SYMPY_GROUND_TYPES"] = "gmpy" if find_spec("gmpy2") else "python"
    try:
        import sympy  # noqa: F401
    finally:
        del os.environ["SYMPY_GROUND_TYPES"]


_import_sympy_without_flint()

from softmax_dispersion.theory.formulas import Formula  # noqa: E402
from softmax_dispersion.theory.kernel import Claim, ClaimResult  # noqa: E402

__all__ = [
    "CLAIMS",
    "CLAIM_MODULES",
    "FORMULAS",
    "Claim",
    "ClaimResult",
    "Formula",
    "all_claims",
    "check",
    "claim_by_id",
]

CLAIM_MODULES: tuple[str, ...] = (
    "dispersion",
    "dispersion_size",
    "entropy",
    "weight_norms",
    "composition",
    "length_scaling",
    "adaptive_temperature",
    "rounding_error",
    "typical_sets",
    "attention_error",
    "vjp_error",
)
"""The modules that define claims, in the order of their claims."""

if TYPE_CHECKING:
    CLAIMS: tuple[Claim, ...]
    FORMULAS: dict[str, Formula]


def all_claims() -> tuple[Claim, ...]:
    """Every claim, T1 onwards, in order (imports the claim modules)."""
    claims: list[Claim] = []
    for name in CLAIM_MODULES:
        claims.extend(import_module(f"softmax_dispersion.theory.{name}").CLAIMS)
    return tuple(sorted(claims, key=lambda claim: int(claim.id[1:])))


def __getattr__(name: str) -> Any:
    if name == "CLAIMS":
        return all_claims()
    if name == "FORMULAS":
        all_claims()
        return import_module("softmax_dispersion.theory.formulas").FORMULAS
    raise AttributeError(f"module 'softmax_dispersion.theory' has no attribute {name!r}")


def claim_by_id(claim_id: str) -> Claim:
    """The claim named ``claim_id`` (``"T1"``, ``"T2"``, …, case-insensitive).

    Raises
    ------
    KeyError
        For an unknown id, naming the known ones.
    """
    claims = all_claims()
    for claim in claims:
        if claim.id == claim_id.strip().upper():
            return claim
    known = ", ".join(c.id for c in claims)
    raise KeyError(f"unknown claim id {claim_id!r}; known claims: {known}")


def check(*claim_ids: str) -> list[ClaimResult]:
    """Check the named claims (all when none is named), checking cited claims once."""
    claims = [claim_by_id(i) for i in claim_ids] if claim_ids else list(all_claims())
    cache: dict[str, ClaimResult] = {}
    return [claim.check(cache) for claim in claims]
