"""The ``certify`` subcommand: certified tables, JSON keys, exit codes and clear errors."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from softmax_dispersion.cli import main


def test_spike_sweep_matches_the_tight_bound(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["certify", "--family", "spike", "--n", "16,1024,1e18", "--delta", "5", "--theta", "1"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "attained" in out and "verdict: VERIFIED" in out
    assert "1000000000000000000" in out


def test_json_has_the_documented_keys(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["certify", "--family", "spike", "--n", "16,10**18", "--delta", "5", "--json"]
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["verified"] is True
    keys = {
        "n",
        "p_max_lower",
        "p_max_upper",
        "p_min_lower",
        "p_min_upper",
        "bound_upper",
        "bound_lower",
        "verified",
    }
    for row in report["sizes"]:
        assert keys <= set(row)
        for key in keys - {"n", "verified"}:
            digits = row[key].split("e")[0].replace(".", "").replace("-", "").lstrip("0")
            assert len(digits) >= 30, (key, row[key])
        # the tight bound lies within the certified enclosure of the spike's p_max
        assert Decimal(row["p_max_lower"]) <= Decimal(row["bound_upper"])
    assert [row["n"] for row in report["sizes"]] == [16, 10**18]


def test_eps_and_s_add_t4_and_t10(capsys: pytest.CaptureFixture[str]) -> None:
    args = [
        "certify",
        "--family",
        "spike",
        "--n",
        "16,1e6",
        "--delta",
        "2",
        "--eps",
        "0.01",
        "--s",
        "0.5",
        "--format",
        "float16",
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "T4: n*(ε = 1/100)" in out and "T10: β = s·log n" in out and "float16" in out


@pytest.mark.parametrize("family", ["dip", "geometric_ladder", "off_block", "long_uniform"])
def test_other_families_hold(family: str, capsys: pytest.CaptureFixture[str]) -> None:
    n = "4096" if family == "long_uniform" else "137"
    args = ["certify", "--family", family, "--n", n]
    if family == "dip":
        args += ["--delta", "3"]
    assert main(args) == 0, capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--family", "nope", "--n", "3"], "unknown family 'nope'"),
        (["--family", "spike", "--n", "0", "--delta", "1"], "--n: '0' is less than 1"),
        (["--family", "spike", "--n", "1.5", "--delta", "1"], "--n: '1.5' is not an integer"),
        (["--family", "spike", "--n", "16", "--delta", "-1"], "--delta"),
        (["--family", "spike", "--n", "16", "--delta", "1", "--theta", "0"], "--theta"),
        (["--family", "spike", "--n", "16", "--delta", "1", "--eps", "1"], "--eps"),
        (["--family", "long_uniform", "--n", "4096", "--delta", "1"], "takes no delta"),
        (["--family", "plus_inf", "--n", "4"], "non-finite"),
        (["--family", "spike", "--n", "16"], "needs delta"),
        (["--family", "spike", "--n", "16", "--delta", "1", "--max-precision", "8"], "64 bits"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["certify", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_violated_bound_exits_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A wrong bound (c/(c+n)) in place of T1's is caught and reported violated."""
    from softmax_dispersion.numerics import checks
    from softmax_dispersion.theory.symbols import c, n

    wrong = tuple(
        checks.Bound(b.label, c / (c + n), b.side) if b.label == "T1 upper" else b
        for b in checks.DISPERSION_BOUNDS
    )
    original = checks.check_dispersion

    def with_wrong_bound(*args, **kwargs):  # type: ignore[no-untyped-def]
        return original(*args, **{**kwargs, "bounds": wrong})

    monkeypatch.setattr(checks, "check_dispersion", with_wrong_bound)
    assert main(["certify", "--family", "spike", "--n", "16", "--delta", "5"]) == 1
    assert "violated" in capsys.readouterr().out
