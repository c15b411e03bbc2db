"""The ``prove`` subcommand: output, JSON, certificates and clear errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from softmax_dispersion.cli import main


def test_prove_prints_steps_and_a_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prove", "T1", "t2"]) == 0
    out = capsys.readouterr().out
    assert "T1  tight bounds" in out and "method: z3 nlsat" in out
    assert "2 of 2 claims verified" in out


def test_prove_json_lists_one_object_per_claim(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prove", "T2", "T3", "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in records] == ["T2", "T3"]
    for record in records:
        assert record["verified"] is True
        assert isinstance(record["seconds"], float)
        assert record["steps"] and all(s["verdict"] == "verified" for s in record["steps"])


def test_certificate_records_methods_and_versions(tmp_path: Path) -> None:
    target = tmp_path / "certificate.json"
    assert main(["prove", "T4", "--certificate", str(target), "--json"]) == 0
    certificate = json.loads(target.read_text())
    assert certificate["verified"] is True
    assert {"sympy", "z3-solver", "python"} <= set(certificate["tools"])
    # the cited claim comes first, with its content hash, which T4's content names
    t1, t4 = certificate["claims"]
    assert (t1["id"], t4["id"]) == ("T1", "T4")
    assert t4["content"]["cites"] == [t1["hash"]]
    step = t1["steps"][2]
    assert step["rule"] == "SumOfTerms" and step["method"] and step["statement"]
    assert step["substeps"][0]["rule"] == "ExpMonotone"
    recorded = t1["content"]["steps"][2]
    assert recorded["rule"] == "SumOfTerms"
    assert set(recorded["inputs"]) == {
        "total",
        "lower",
        "upper",
        "description",
        "termwise",
        "strict",
    }
    assert t1["content"]["statement"][0] == "and"  # a term tree: ["and", [...], ...]
    assert [d["kind"] for d in t1["content"]["definitions"]] == ["sum"]
    assert t1["content"]["families"][0]["domain"]


def test_at_evaluates_formulas_exactly(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prove", "T4", "--at", "epsilon=0.01", "delta=5", "theta=1"]) == 0
    assert "dispersion_size = 1 + 99*exp(5) ≈ 14693.9027511551" in capsys.readouterr().out


def test_at_puts_in_values_unevaluated_where_a_power_would_pass_4096_bits(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Red team 16: at n = 2, s = delta = 1000 the exact value of n**(delta*s) has a million
    bits, and printing it raised Python's digit limit; at n = 16 it is still computed."""
    assert main(["prove", "T10", "--at", "n=2", "s=1000", "delta=1000"]) == 0
    out = capsys.readouterr().out
    assert "= 2**(1000*1000)/(-1 + 2 + 2**(1000*1000)) ≈ 1.00000000000000" in out
    assert main(["prove", "T10", "--at", "n=16", "s=1", "delta=2"]) == 0
    assert "length_scaled_spike_max = 256/271 ≈ 0.944649446494465" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["prove", "T0"], "unknown claim id 'T0'"),  # ids count from T1
        (["prove", "T4", "--at", "theta=0"], "theta must be a number > 0, got 0"),
        (["prove", "T4", "--at", "theta=-1"], "theta must be a number > 0"),
        (["prove", "T1", "--at", "n=0"], "n must be an integer >= 1"),
        (["prove", "T4", "--at", "epsilon=1"], "epsilon must be a number strictly between 0 and 1"),
        (["prove", "T4", "--at", "epsilon=abc"], "epsilon must be a finite number"),
        (["prove", "T4", "--at", "size=3"], "unknown parameter 'size'"),
        (["prove", "T4", "--at", "theta"], "expects NAME=VALUE"),
        # red team 18: a point outside the claim's assumptions printed T5's formula as zoo
        (["prove", "T5", "--at", "n=1", "epsilon=1/2"], "T5 assumes n >= 2, which n=1 does"),
        (["prove", "T10", "--at", "n=1", "s=1", "delta=1"], "T10 assumes n > 1"),
        (["prove", "T10", "--at", "n=3", "s=1", "delta=1", "n=2"], "n is given twice"),
        (["prove", "T2", "--certificate", "/no/such/folder/c.json"], "does not exist"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(args) == 2
    captured = capsys.readouterr()
    assert message in captured.err
    assert len(captured.err.strip().splitlines()) == 1
    assert "Traceback" not in captured.err


def test_failing_claim_exits_1(monkeypatch: pytest.MonkeyPatch) -> None:
    from softmax_dispersion.theory import _z3, dispersion

    monkeypatch.setattr(_z3, "prove_with_z3", lambda *args: ("unknown", "forced"))
    assert main(["prove", "T2", "--json"]) == 1
    assert dispersion.T2.check().verified is False


def test_module_entry_point_and_help() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "softmax_dispersion", "prove", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "--certificate" in done.stdout and "NAME=VALUE" in done.stdout
    usage = subprocess.run(
        [sys.executable, "-m", "softmax_dispersion"], capture_output=True, text=True
    )
    assert usage.returncode == 2 and "COMMAND" in usage.stderr


def test_claim_module_runs_as_a_script() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "softmax_dispersion.theory.dispersion"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "T1  tight bounds on every coefficient  [VERIFIED" in done.stdout
    assert "RuntimeWarning" not in done.stderr


def test_at_never_prints_a_value_that_is_no_real_number(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Planted: a formula whose value at the point is complex infinity is refused in one
    line (exit 2), never printed as the value of a verified claim's formula."""
    import sympy as sp

    from softmax_dispersion.cli import prove

    monkeypatch.setattr(prove, "_exact", lambda expr, values: sp.zoo)
    assert main(["prove", "T4", "--at", "epsilon=0.5", "delta=1", "theta=1"]) == 2
    err = capsys.readouterr().err
    assert "dispersion_size at epsilon=1/2, delta=1, theta=1 is no real number" in err
    assert len(err.strip().splitlines()) == 1


def test_at_gives_fifteen_correct_digits_or_none(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Red team 22: T6 at delta = 300 printed ``≈ 0.e-122`` (its digits cancel: the value
    is about 5.1e-131). The value now has 15 correct digits, worked out at a higher
    precision; planted: with too little precision allowed, it says there is none."""
    from softmax_dispersion.cli import prove

    assert main(["prove", "T6", "--at", "n=2", "delta=300", "theta=1"]) == 0
    assert "= -300 + log(1 + exp(300)) ≈ 5.14820022241201e-131" in capsys.readouterr().out
    monkeypatch.setattr(prove, "APPROXIMATION_DIGITS", (20,))
    assert main(["prove", "T6", "--at", "n=2", "delta=300", "theta=1", "--json"]) == 0
    [record] = json.loads(capsys.readouterr().out)
    cancelled = [row for row in record["instances"] if row["formula"] == "entropy_lower_bound"]
    assert cancelled[0]["value"] is None
