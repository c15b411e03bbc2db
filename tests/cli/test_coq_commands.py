"""``export-coq`` and ``prove --kernel coq``: the Coq side of the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import softmax_dispersion.theory.coq_proofs as coq_proofs
from softmax_dispersion.cli import main
from softmax_dispersion.theory import all_claims
from softmax_dispersion.theory.coq_proofs import (
    COQ_INSTALL,
    find_coqc,
    formalised_ids,
    proof_sources,
)

needs_coq = pytest.mark.skipif(find_coqc() is None, reason=f"coqc not found ({COQ_INSTALL})")
# A claim without a Coq proof, when there is one (T12 until its Flocq proof lands).
UNFORMALISED = next((c.id for c in all_claims() if c.id not in formalised_ids()), None)
needs_unformalised = pytest.mark.skipif(UNFORMALISED is None, reason="every claim has a proof")


def test_export_coq_writes_a_project(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "proofs"
    assert main(["export-coq", str(target)]) == 0
    out = capsys.readouterr().out
    assert "make -C" in out
    statements = (target / "Statements.v").read_text()
    assert "Definition T1_statement : Prop" in statements
    assert (target / "_CoqProject").read_text().startswith("-Q . SoftmaxDispersion")
    assert (target / "T11.v").read_text().rstrip().endswith("Qed.")


def test_prove_kernel_coq_without_coqc_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", "")
    assert main(["prove", "T2", "T8", "--kernel", "coq"]) == 0
    out = capsys.readouterr().out
    assert "T2     verified  coqc not found" in out
    assert "T8     verified  coqc not found" in out
    assert f"coqc not found: install Coq with {COQ_INSTALL}" in out
    assert main(["prove", "T2", "--kernel", "coq", "--json"]) == 0
    [record] = json.loads(capsys.readouterr().out)
    assert record["coq"]["status"] == "coqc not found"


@pytest.mark.slow
@needs_coq
def test_prove_kernel_coq_reports_each_claim(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prove", "T2", "T13", "--kernel", "coq", "--json"]) == 0
    t2, t13 = json.loads(capsys.readouterr().out)
    assert t2["verified"] and t2["coq"]["status"] == "kernel-checked"
    assert "Coq.Reals.ClassicalDedekindReals.sig_forall_dec" in t2["coq"]["assumptions"]
    # what the theorem checks, and what of the claim's subject it does not
    assert t13["coq"]["status"] == "kernel-checked"
    assert "not kernel-checked" in t13["coq"]["leaves_out"]
    assert t13["coq"]["covers"].startswith("the top weight is 1/(1 + S)")


@pytest.mark.slow
@needs_coq
@needs_unformalised
def test_prove_kernel_coq_reports_a_claim_without_proof(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["prove", str(UNFORMALISED), "--kernel", "coq", "--json"]) == 0
    [record] = json.loads(capsys.readouterr().out)
    assert record["coq"] == {
        "status": "not formalised",
        "assumptions": [],
        "detail": "",
        "seconds": 0.0,
        "files": [],
        "covers": "",
        "leaves_out": "",
    }
    assert main(["prove", "T2", "--kernel", "coq"]) == 0
    out = capsys.readouterr().out
    assert "T2     verified  kernel-checked  4 real-number axioms" in out
    assert "1 of 1 formalised claims kernel-checked by Coq 8." in out


@pytest.mark.slow
@needs_coq
def test_prove_kernel_coq_exits_1_when_a_proof_fails(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = proof_sources()
    broken["T2.v"] = broken["T2.v"].replace("apply frac_le; nra.", "apply frac_le; lra.")
    assert broken["T2.v"] != proof_sources()["T2.v"]
    monkeypatch.setattr(coq_proofs, "proof_sources", lambda: broken)
    assert main(["prove", "T2", "--kernel", "coq"]) == 1
    out = capsys.readouterr().out
    assert "T2     verified  failed" in out and "T2 failed in Coq:" in out
