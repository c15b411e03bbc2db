"""``recheck``: a certificate re-decided from the file alone, and edited ones refused.

Exit status 0 when every claim re-verifies, 1 when a claim or a step does not (named),
2 for a file that is not a readable certificate (one line, no traceback).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from softmax_dispersion.cli import main
from softmax_dispersion.theory import CLAIM_MODULES

_IN_A_FRESH_PROCESS = """
import sys
from softmax_dispersion.cli import main
status = main(["recheck", sys.argv[1]])
claims = {modules!r}
loaded = [m for m in claims if "softmax_dispersion.theory." + m in sys.modules]
assert not loaded, f"recheck imported the claim modules {{loaded}}"
sys.exit(status)
"""


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A fresh certificate of T2 and T4 (T4 cites T1, which comes with it)."""
    path = tmp_path_factory.mktemp("certificate") / "proof.json"
    assert main(["prove", "T2", "T4", "--json", "--certificate", str(path)]) == 0
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _write(tmp_path: Path, data: object, name: str = "edited.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_a_fresh_certificate_rechecks_in_a_process_without_the_claim_modules(
    certificate: dict[str, Any], tmp_path: Path
) -> None:
    path = _write(tmp_path, certificate, "proof.json")
    script = _IN_A_FRESH_PROCESS.format(modules=CLAIM_MODULES)
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 of 3 claims re-verified from the certificate" in done.stdout
    assert [line.split()[0] for line in done.stdout.splitlines()[:3]] == ["T2", "T1", "T4"]


def _edit(certificate: dict[str, Any], claim_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    edited = copy.deepcopy(certificate)
    entry = next(c for c in edited["claims"] if c["id"] == claim_id)
    return edited, entry


def test_one_edited_constant_fails_and_names_the_step(
    certificate: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edited, t1 = _edit(certificate, "T1")
    inputs = t1["content"]["steps"][2]["inputs"]  # SumOfTerms: the lower bound exp(m/θ)
    assert "Symbol('m', real=True)" in inputs["lower"]["sympy"]
    inputs["lower"]["sympy"] = inputs["lower"]["sympy"].replace("Symbol('m'", "Symbol('M'")
    assert main(["recheck", str(_write(tmp_path, edited))]) == 1
    out = capsys.readouterr().out
    assert "T1     FAILED" in out
    assert "T1 step 3 (SumOfTerms: 'sum the termwise bounds" in out
    assert "does not have the recorded hash" in out
    assert "T4     FAILED" in out  # it cites T1, which no longer verifies


def test_an_edited_statement_with_a_recomputed_hash_still_fails(
    certificate: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from softmax_dispersion.theory._serial import content_hash

    edited, t2 = _edit(certificate, "T2")
    statement = t2["content"]["statement"]
    t2["content"]["statement"] = statement.replace("Integer(-1)", "Integer(-2)", 1)
    assert t2["content"]["statement"] != statement
    t2["hash"] = content_hash(t2["content"])
    assert main(["recheck", str(_write(tmp_path, edited))]) == 1
    assert "T2: the last step does not conclude the statement" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("where", "change"),
    [
        (
            "witness",
            lambda t1: t1["content"]["witness"][0].__setitem__(1, {"sympy": "Integer(-9)"}),
        ),
        (
            "an assumption",
            lambda t1: t1["content"]["assumptions"].__setitem__(
                0, "StrictGreaterThan(Symbol('theta', real=True), Integer(-1))"
            ),
        ),
        (
            "the family's count",
            lambda t1: t1["content"]["families"][0].__setitem__("count", "Symbol('n', real=True)"),
        ),
        ("a rule", lambda t1: t1["content"]["steps"][0].__setitem__("rule", "SqrtMonotone")),
        (
            "a float",
            lambda t1: t1["content"]["steps"][2]["inputs"].__setitem__(
                "upper", {"sympy": "Float('2.5', precision=53)"}
            ),
        ),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_other_edits_fail(
    certificate: dict[str, Any], tmp_path: Path, where: str, change: Any
) -> None:
    edited, t1 = _edit(certificate, "T1")
    change(t1)
    path = _write(tmp_path, edited)
    from softmax_dispersion.theory.recheck import recheck_file

    report = recheck_file(path)
    t1_verdict = next(c for c in report.claims if c.id == "T1")
    assert not t1_verdict.verified, where
    assert not report.verified


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not JSON"),
        ('{"format": "something else"}', "not a softmax-dispersion certificate"),
        ("[1, 2]", "a certificate is a JSON object"),
    ],
)
def test_unreadable_files_exit_2_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    assert main(["recheck", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_code_in_an_expression_is_refused_not_run(
    certificate: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edited, t2 = _edit(certificate, "T2")
    marker = tmp_path / "ran"
    t2["content"]["statement"] = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    assert main(["recheck", str(_write(tmp_path, edited))]) == 2
    assert "is not a readable certificate" in capsys.readouterr().err
    assert not marker.exists()


def test_json_output(
    certificate: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["recheck", str(_write(tmp_path, certificate)), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["verified"] is True
    assert [c["id"] for c in record["claims"]] == ["T2", "T1", "T4"]


@pytest.mark.slow
def test_every_claim_rechecks_from_a_full_certificate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "all.json"
    assert main(["prove", "--json", "--certificate", str(path)]) == 0
    capsys.readouterr()
    assert main(["recheck", str(path)]) == 0
    from softmax_dispersion.theory import all_claims

    claims = len(all_claims())
    assert f"{claims} of {claims} claims re-verified" in capsys.readouterr().out
