"""T13: the typical-set band verifies; its false siblings and wrong premises are rejected.

The probability in T13 is Bernstein's (a cited premise); everything the kernel proves is
deterministic: the top weight's form, the radius as the root of the tail bound's
quadratic, and the band on the premise's event.  So the siblings here alter exactly
those parts — the count, the radius, the monotone premise, the band's edges.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import mpmath
import pytest
import sympy as sp

from softmax_dispersion.theory import claim_by_id
from softmax_dispersion.theory.kernel import Family, SumOver
from softmax_dispersion.theory.typical_sets import (
    T13,
    bernstein_radius,
    bound,
    eta,
    mean,
    n,
    other,
    radius,
    top,
    typical_band_lower,
    typical_band_upper,
    typical_mean_field,
    variance,
)

from .conftest import with_statement

_m = n - 1


def test_t13_is_the_registered_claim() -> None:
    # that it verifies is test_claims' (one test per claim)
    assert claim_by_id("T13") is T13


def _weight() -> sp.Expr:
    """The top weight exp(e*)/(exp(e*) + T) as T13 states it."""
    for part in T13.statement.args:
        if isinstance(part, sp.Eq) and part.lhs.has(sp.exp(top)):
            return part.lhs
    raise AssertionError("T13 states the top weight")


def _tail() -> sp.Expr:
    for part in T13.statement.args:
        if isinstance(part, sp.Eq) and part.rhs == eta:
            return part.lhs
    raise AssertionError("T13 states the tail bound at r")


FALSE_SIBLINGS = {
    "upper edge with n instead of n - 1": lambda: sp.Le(
        _weight(), 1 / (1 + n * sp.Max(mean - radius, 0))
    ),
    "lower edge with n - 2 instead of n - 1": lambda: sp.Le(
        1 / (1 + (n - 2) * (mean + radius)), _weight()
    ),
    "upper edge at I_mean + r": lambda: sp.Le(_weight(), 1 / (1 + _m * (mean + radius))),
    "lower edge at I_mean − r": lambda: sp.Le(1 / (1 + _m * (mean - radius)), _weight()),
    "tail bound η/2 at r": lambda: sp.Eq(_tail(), eta / 2),
}


@pytest.mark.parametrize("name", sorted(FALSE_SIBLINGS))
def test_false_sibling_is_rejected(name: str) -> None:
    assert not with_statement(T13, FALSE_SIBLINGS[name]()).check().verified


def test_a_wrong_radius_is_rejected() -> None:
    # Bernstein's 2br/3 read as br/3: the radius no longer solves the quadratic.
    from softmax_dispersion.theory import typical_sets

    wrong = (
        bound * typical_sets.level / 6
        + sp.sqrt((bound * typical_sets.level / 6) ** 2 + 2 * _m * variance * typical_sets.level)
    ) / _m
    definitions = tuple(
        dataclasses.replace(d, expression=wrong) if getattr(d, "symbol", None) == radius else d
        for d in T13.definitions
    )
    result = dataclasses.replace(T13, id="T13-wrong-radius", definitions=definitions).check()
    assert not result.verified
    assert any("solves" in s.description and not s.verified for s in result.steps)


def test_without_a_monotone_map_the_terms_are_not_bounded_by_1() -> None:
    from softmax_dispersion.theory import typical_sets

    anywhere = Family("others", (other,), _m, (), "the other items, logits anywhere")
    terms = SumOver(typical_sets.S, sp.exp(other - top), anywhere, "S without the premise")
    exps = SumOver(typical_sets.T, sp.exp(other), anywhere, "T without the premise")
    definitions = (terms, exps, *T13.definitions[2:])
    result = dataclasses.replace(T13, id="T13-not-monotone", definitions=definitions).check()
    assert not result.verified
    assert any("monotone" in s.description and not s.verified for s in result.steps)


def test_contradictory_premises_are_refused() -> None:
    # An event that cannot happen (S above m(I + r) + 1 and below m(I − r)) would prove
    # anything; the claim's witness must satisfy its assumptions, and here it cannot.
    from softmax_dispersion.theory.typical_sets import S

    impossible = [
        *T13.assumptions[:-2],
        sp.Le(_m * (mean + radius) + 1, S),
        sp.Le(S, _m * (mean - radius)),
    ]
    result = dataclasses.replace(T13, id="T13-vacuous", assumptions=impossible).check()
    assert not result.verified and result.problem


@pytest.mark.parametrize(
    ("count", "var", "b", "level"),
    [(2, 0.0, 1.0, 0.5), (64, 0.01, 1.3, 0.05), (4096, 0.2, 1.0, 1e-3)],
)
def test_the_radius_is_bernsteins_root(count: int, var: float, b: float, level: float) -> None:
    r = float(bernstein_radius.numpy(count, var, b, level))
    m = count - 1
    with mpmath.workdps(40):
        tail = 2 * mpmath.exp(-m * mpmath.mpf(r) ** 2 / (2 * var + 2 * b * mpmath.mpf(r) / 3))
    assert float(tail) == pytest.approx(level, rel=1e-9)
    assert typical_band_lower.numpy(count, 0.1, r) < typical_mean_field.numpy(count, 0.1)
    assert math.isclose(float(typical_band_upper.numpy(count, 0.0, r)), 1.0)


def test_the_claim_names_its_premise() -> None:
    assert "Bernstein" in T13.source and "cited premise" in T13.source
    assert eta in T13.statement.free_symbols


# ---- the certificate: T13 re-decided from the file alone, and edited ones refused -------


@pytest.fixture(scope="module")
def t13_certificate(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from softmax_dispersion.cli import main

    path = tmp_path_factory.mktemp("t13") / "t13.json"
    assert main(["prove", "T13", "--certificate", str(path)]) == 0
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _recheck(data: dict[str, Any], tmp_path: Path) -> bool:
    from softmax_dispersion.theory.recheck import recheck_file

    path = tmp_path / "t13.json"
    path.write_text(json.dumps(data))
    return recheck_file(path).verified


def test_t13_certificate_rechecks(t13_certificate: dict[str, Any], tmp_path: Path) -> None:
    assert [c["id"] for c in t13_certificate["claims"]] == ["T13"]
    assert _recheck(t13_certificate, tmp_path)


def _edited(certificate: dict[str, Any], edit: Any) -> dict[str, Any]:
    from softmax_dispersion.theory._serial import content_hash

    data = copy.deepcopy(certificate)
    entry = data["claims"][0]
    edit(entry["content"])
    entry["hash"] = content_hash(entry["content"])  # an honest-looking hash: still refused
    return data


def _narrow_radius(content: dict[str, Any]) -> None:
    radius_definition = next(d for d in content["definitions"] if d["name"] == "r")
    text = json.dumps(radius_definition["expression"])
    assert '["num", 1, 3]' in text
    radius_definition["expression"] = json.loads(text.replace('["num", 1, 3]', '["num", 1, 6]'))


def _drop_monotone_premise(content: dict[str, Any]) -> None:
    content["families"][0]["domain"] = []


@pytest.mark.parametrize(
    "edit", [_narrow_radius, _drop_monotone_premise], ids=["narrower radius", "no monotone map"]
)
def test_an_edited_t13_certificate_is_refused(
    t13_certificate: dict[str, Any], tmp_path: Path, edit: Any
) -> None:
    assert not _recheck(_edited(t13_certificate, edit), tmp_path)
