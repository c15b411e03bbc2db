"""``recheck``: a certificate re-decided from the file alone; edited and hostile files refused.

Exit status 0 when every claim re-verifies, 1 when a claim or a step does not (named),
2 for a file that is not a readable certificate; a hostile file gets one line, never a
traceback or a hang, and nothing in it is ever run.
"""

from __future__ import annotations

import ast
import copy
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import sympy as sp

from softmax_dispersion.cli import main
from softmax_dispersion.theory import CLAIM_MODULES, all_claims

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
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def _edit(certificate: dict[str, Any], claim_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    edited = copy.deepcopy(certificate)
    entry = next(c for c in edited["claims"] if c["id"] == claim_id)
    return edited, entry


def _rehash(entry: dict[str, Any]) -> None:
    from softmax_dispersion.theory._serial import content_hash

    entry["hash"] = content_hash(entry["content"])


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "Traceback" not in text
    assert text.count("\n") == 1, text
    return text


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
    claim_lines = [line for line in done.stdout.splitlines() if not line.startswith(" ")]
    assert [line.split()[0] for line in claim_lines[:3]] == ["T2", "T1", "T4"]


def test_the_format_is_version_3_with_term_trees(certificate: dict[str, Any]) -> None:
    assert certificate["format_version"] == 3
    t1 = next(c for c in certificate["claims"] if c["id"] == "T1")
    assert t1["content"]["statement"][0] == "and"
    assert t1["statement"].startswith("(1/((n - 1)*exp((M - m)/theta) + 1) <= ")
    assert "srepr" not in json.dumps(certificate) and "Symbol(" not in json.dumps(certificate)


# --------------------------------------------------------------------------------------
# Edited certificates: exit 1, naming what is wrong


def test_one_edited_constant_fails_on_its_hash_in_one_line(
    certificate: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edited, t1 = _edit(certificate, "T1")
    inputs = t1["content"]["steps"][2]["inputs"]  # SumOfTerms: the lower bound exp(m/θ)
    assert "m" in json.dumps(inputs["lower"])
    inputs["lower"] = json.loads(json.dumps(inputs["lower"]).replace('"m"', '"M"'))
    assert main(["recheck", str(_write(tmp_path, edited))]) == 1
    line = _one_line(capsys)
    assert "T1: the recorded content does not have the recorded hash" in line


def test_an_edited_constant_with_a_recomputed_hash_names_the_step(
    certificate: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edited, t1 = _edit(certificate, "T1")
    inputs = t1["content"]["steps"][2]["inputs"]
    inputs["lower"] = json.loads(json.dumps(inputs["lower"]).replace('"m"', '"M"'))
    _rehash(t1)
    assert main(["recheck", str(_write(tmp_path, edited))]) == 1
    # the step's readable conclusion no longer says what the content concludes
    assert "T1, step 3: the readable statement is not the content's" in _one_line(capsys)


def test_an_edited_statement_with_its_hash_and_readable_text_still_fails(
    certificate: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The careful forger: content, hash and readable statement all made consistent."""
    from softmax_dispersion.theory._serial import read_claim
    from softmax_dispersion.theory.terms import show

    edited, t2 = _edit(certificate, "T2")
    text = json.dumps(t2["content"]["statement"])
    assert '["num", -1, 1]' in text
    t2["content"]["statement"] = json.loads(text.replace('["num", -1, 1]', '["num", -2, 1]', 1))
    _rehash(t2)
    t2["statement"] = show(read_claim(t2["content"]).statement)
    assert main(["recheck", str(_write(tmp_path, edited))]) == 1
    assert "T2: the last step does not conclude the statement" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("where", "field", "value"),
    [
        ("statement", "statement", "2/((n - 1)*c + 1) <= p_k"),
        ("title", "title", "a stronger bound than was checked"),
        ("id", "id", "T9"),
        # an assumption hidden from the reader (T1's theta > 0 left out)
        ("assumptions", "assumptions", ["n >= 1", "m <= e_k", "e_k <= M"]),
        ("assumptions", "assumptions", []),
        # red team 14: what S means, shown and compared (T1's sum over the others)
        ("definitions", "definitions", ["S = sum of exp(m/theta) over 'others'"]),
    ],
)
def test_an_edited_readable_field_is_refused(
    certificate: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    where: str,
    field: str,
    value: str | list[str],
) -> None:
    edited, t1 = _edit(certificate, "T1")
    assert t1[field] != value
    t1[field] = value
    assert main(["recheck", str(_write(tmp_path, edited))]) == 1
    line = _one_line(capsys)
    assert f"the readable {where} is not the content's" in line


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t1: t1.update(witness="every assumption holds at M = 5"), "witness line"),
        (lambda t1: t1.update(problem="refuted by a counterexample"), "records a problem"),
        (lambda t1: t1.update(verified=False), "records it as failed"),
        (lambda t1: t1["steps"][1].update(verified=False), "step 2: the file records another"),
    ],
    ids=["witness", "problem", "verified", "step verdict"],
)
def test_a_recorded_verdict_other_than_the_decided_one_fails(
    certificate: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    edit: Any,
    message: str,
) -> None:
    """Red team 7: the verdict fields were informative, so a file could say a true claim
    failed, or show a witness line that was not the check's, and still exit 0."""
    edited, t1 = _edit(certificate, "T1")
    edit(t1)
    if t1["verified"] is False:
        edited["verified"] = False  # the file's own summary agrees with its claim
    assert main(["recheck", str(_write(tmp_path, edited))]) == 1
    assert message in capsys.readouterr().out


def _zero_width(key: str) -> str:
    return key + "\u200b"


@pytest.mark.parametrize(
    ("edit", "code", "message"),
    [
        # a key that looks like 'statement' holding another statement (red team 8)
        (lambda c, t1: t1.update({_zero_width("statement"): "x >= 3"}), 2, "statement\\u200b"),
        (lambda c, t1: t1.update({"assumptions ": []}), 2, "'assumptions '"),
        (lambda c, t1: c.update({_zero_width("verified"): False}), 2, "verified\\u200b"),
        (lambda c, t1: t1.update(coq="kernel-checked"), 2, "'coq'"),
        (lambda c, t1: t1["steps"][0].update(checked_by="Coq"), 1, "'checked_by'"),
        (lambda c, t1: t1["steps"][0].update(verdict="failed"), 1, "another verdict"),
        (lambda c, t1: t1.update(seconds=-1), 2, "seconds, 0 or more"),
        (lambda c, t1: c.update(tools=["sympy 9.9"]), 2, "record of versions"),
        # red team 10: text a person reads inside fields the format defines
        (lambda c, t1: c["tools"].update(coq="8.16.1: T1 kernel-checked"), 2, "versions of"),
        (lambda c, t1: c["tools"].update(sympy="1.14: checked by Coq"), 2, "versions of"),
        (lambda c, t1: c.update(created={"coq": "kernel-checked"}), 2, "ISO 8601"),
        (lambda c, t1: c.update(created="verified by Coq 8.16"), 2, "ISO 8601"),
    ],
    ids=[
        *("zero-width", "trailing space", "top-level", "extra", "step extra", "verdict"),
        *("time", "tools", "a tool", "a version", "created object", "created text"),
    ],
)
def test_a_field_no_check_reads_is_refused(
    certificate: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    edit: Any,
    code: int,
    message: str,
) -> None:
    """Red team 8: fields outside the format were ignored, so a viewer could show a
    'statement' (with a zero-width space) or a 'verified' nothing checked."""
    edited, t1 = _edit(certificate, "T1")
    edit(edited, t1)
    assert main(["recheck", str(_write(tmp_path, edited))]) == code
    output = capsys.readouterr()
    assert message in output.out + output.err


def test_an_infinite_number_is_refused(
    certificate: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """1e400 is read as an infinity: refused like the literal Infinity (red team 8)."""
    path = tmp_path / "infinite.json"
    edited, t1 = _edit(certificate, "T1")
    t1["seconds"] = 12345.5
    path.write_text(json.dumps(edited).replace("12345.5", "1e400"))
    assert main(["recheck", str(path)]) == 2
    assert "1e400 is not a finite number" in capsys.readouterr().err


def test_recheck_json_reports_its_own_tools_apart_from_the_files(
    certificate: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Red team 8: a file's 'sympy': '9.9' was printed as the tools of the recheck."""
    edited, _ = _edit(certificate, "T1")
    edited["tools"] = {**edited["tools"], "sympy": "9.9"}
    assert main(["recheck", "--json", str(_write(tmp_path, edited))]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["recorded_tools"]["sympy"] == "9.9"
    assert record["tools"]["sympy"] == sp.__version__


def test_a_summary_other_than_its_claims_is_refused(
    certificate: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edited, t1 = _edit(certificate, "T1")
    t1["verified"] = False
    assert main(["recheck", str(_write(tmp_path, edited))]) == 1
    assert "the file's 'verified' is not what its claims record" in _one_line(capsys)


def test_an_edited_step_statement_is_refused(
    certificate: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edited, t1 = _edit(certificate, "T1")
    t1["steps"][0]["statement"] = "exp(m/theta) <= exp(M/theta)"  # not what step 1 concludes
    t1["steps"][2]["substeps"][0]["description"] = "a different description"
    assert main(["recheck", str(_write(tmp_path, edited))]) == 1
    assert "T1, step 1: the readable statement is not the content's" in _one_line(capsys)


@pytest.mark.parametrize(
    ("where", "change"),
    [
        ("witness", lambda t1: t1["content"]["witness"][0].__setitem__("value", ["num", -9, 1])),
        (
            "an assumption",
            lambda t1: t1["content"]["assumptions"].__setitem__(
                0, ["gt", ["sym", "theta"], ["num", -1, 1]]
            ),
        ),
        (
            "the family's count",
            lambda t1: t1["content"]["families"][0].__setitem__("count", ["sym", "n"]),
        ),
        ("a rule", lambda t1: t1["content"]["steps"][0].__setitem__("rule", "SqrtMonotone")),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
@pytest.mark.parametrize("rehash", [False, True], ids=["hash kept", "hash recomputed"])
def test_other_edits_fail(
    certificate: dict[str, Any], tmp_path: Path, where: str, change: Any, rehash: bool
) -> None:
    from softmax_dispersion.theory.recheck import CertificateFormatError, recheck_file

    edited, t1 = _edit(certificate, "T1")
    change(t1)
    if rehash:
        _rehash(t1)
    try:
        report = recheck_file(_write(tmp_path, edited))
    except CertificateFormatError:
        return  # refused as unreadable: exit 2
    assert not report.verified, where


# --------------------------------------------------------------------------------------
# Hostile files: exit 1 or 2, one line, nothing run, no hang


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not JSON"),
        ('{"format": "something else"}', "not a softmax-dispersion certificate"),
        ("[1, 2]", "a certificate is a JSON object"),
        ("[" * 100_000 + "]" * 100_000, "nested too deep"),
        ('{"format": "softmax-dispersion proof certificate", "format_version": NaN}', "NaN"),
        ("1" * 5000, "an integer of more than"),
    ],
    ids=["syntax", "format", "array", "deep", "nan", "huge-integer"],
)
def test_unreadable_files_exit_2_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    assert main(["recheck", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_a_version_2_certificate_is_refused(
    certificate: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = copy.deepcopy(certificate)
    old["format_version"] = 2
    assert main(["recheck", str(_write(tmp_path, old))]) == 2
    assert "format version 2, not 3" in _one_line(capsys)


def _payload(marker: Path) -> str:
    return f"__import__('pathlib').Path({str(marker)!r}).touch()"


@pytest.mark.parametrize("rehash", [False, True], ids=["hash kept", "hash recomputed"])
@pytest.mark.parametrize(
    "place",
    ["statement", "witness value", "witness tuple", "step input", "rule name", "name"],
)
def test_code_in_a_certificate_is_never_run(
    certificate: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    place: str,
    rehash: bool,
) -> None:
    """The issue's payload ({"tuple": ["<python>"]} as a witness value) and its kin."""
    marker = tmp_path / "ran"
    code = _payload(marker)
    edited, t2 = _edit(certificate, "T2")
    content = t2["content"]
    if place == "statement":
        content["statement"] = code
    elif place == "witness value":
        content["witness"][0]["value"] = code
    elif place == "witness tuple":
        content["witness"][0]["value"] = {"tuple": [code]}
    elif place == "step input":
        content["steps"][0]["inputs"]["lower"] = ["sym", code]
    elif place == "rule name":
        content["steps"][0]["rule"] = code
    else:
        content["naturals"] = [code]
    if rehash:
        _rehash(t2)
    status = main(["recheck", str(_write(tmp_path, edited))])
    assert status in (1, 2)
    _one_line(capsys)
    assert not marker.exists()


def _tower(levels: int) -> list[Any]:
    term: list[Any] = ["num", 2, 1]
    for _ in range(levels):
        term = ["pow", term, ["num", 64, 1]]
    return term


@pytest.mark.parametrize("levels", [3, 5, 40])
def test_a_tower_of_powers_is_refused_quickly(
    certificate: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str], levels: int
) -> None:
    """The issue's Pow(..., 64) tower: refused by the size limit, or decided, quickly."""
    edited, t2 = _edit(certificate, "T2")
    t2["content"]["statement"] = ["lt", ["num", 0, 1], _tower(levels)]
    _rehash(t2)
    start = time.perf_counter()
    status = main(["recheck", str(_write(tmp_path, edited))])
    assert time.perf_counter() - start < 10
    assert status in (1, 2)
    _one_line(capsys)


@pytest.mark.parametrize(
    "step",
    [
        "not a step",
        {"rule": "Implied"},
        {"rule": "Implied", "inputs": {"statement": ["true"]}},
        {"rule": "Implied", "inputs": {"statement": ["true"], "description": 5}},
        {"rule": "Implied", "inputs": {"statement": "True", "description": ""}},
        {"rule": "Implied", "inputs": {"statement": ["true"], "description": "", "extra": 1}},
        {"rule": ["Implied"], "inputs": {}},
        {"rule": "SumOfTerms", "inputs": {"total": {"sum": "S"}, "termwise": 7}},
    ],
)
def test_a_malformed_step_exits_2_in_one_line(
    certificate: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str], step: Any
) -> None:
    edited, t2 = _edit(certificate, "T2")
    t2["content"]["steps"][0] = step
    _rehash(t2)
    assert main(["recheck", str(_write(tmp_path, edited))]) == 2
    assert "is not a readable certificate" in _one_line(capsys)


def test_deeply_nested_terms_exit_2_in_one_line(
    certificate: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edited, t2 = _edit(certificate, "T2")
    term: list[Any] = ["sym", "x"]
    for _ in range(250):
        term = ["exp", term]
    t2["content"]["statement"] = ["lt", ["num", 0, 1], term]
    _rehash(t2)
    assert main(["recheck", str(_write(tmp_path, edited))]) == 2
    assert "nested deeper than" in _one_line(capsys)


def test_json_output(
    certificate: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["recheck", str(_write(tmp_path, certificate)), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["verified"] is True
    assert [c["id"] for c in record["claims"]] == ["T2", "T1", "T4"]


# --------------------------------------------------------------------------------------
# The recheck path reads data, never code


_RECHECK_PATH = (
    "theory/recheck.py",
    "theory/_serial.py",
    "theory/_snapshot.py",
    "theory/proof_certificate.py",
    "theory/kernel.py",
    "theory/_core.py",
    "theory/terms.py",
    "theory/_expressions.py",
    "theory/_bridge.py",
    "theory/_witness.py",
    "theory/_z3.py",
    "theory/_deciders.py",
    "theory/_exponentials.py",
    "theory/rules.py",
    "theory/calculus.py",
    "theory/definitions.py",
    "softmax_dispersion/cli/recheck.py",
)
_BUILTINS = {"eval", "exec", "compile", "__import__"}
"""Python's own evaluators, called by their bare names."""
_PARSERS = {"sympify", "parse_expr", "S", "simplify", "parse", "literal_eval"}
"""sympy's and Python's readers of text, called by any name (``sp.sympify``, ``S``)."""


def _calls(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            bare = isinstance(func, ast.Name)
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in _PARSERS or (bare and name in _BUILTINS):
                found.append(f"{path.name}:{node.lineno} {name}(...)")
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [alias.name for alias in node.names]
            module = getattr(node, "module", "") or ""
            if "pickle" in names or module in ("pickle", "marshal") or "marshal" in names:
                found.append(f"{path.name}:{node.lineno} imports {module or names}")
    return found


def test_the_recheck_path_never_evaluates_text() -> None:
    root = Path(__file__).resolve().parents[2]
    found = [call for relative in _RECHECK_PATH for call in _calls(root / relative)]
    assert found == []


def test_the_scan_sees_a_planted_sympify(tmp_path: Path) -> None:
    """The scan itself must be able to fail."""
    planted = tmp_path / "planted.py"
    planted.write_text(
        "import sympy as sp\nx = sp.sympify(text)\ny = sp.S('1/2')\nz = eval(text)\n"
        "w = poly.eval(2)\n"
    )
    assert _calls(planted) == [
        "planted.py:2 sympify(...)",
        "planted.py:3 S(...)",
        "planted.py:4 eval(...)",
    ]


@pytest.mark.slow
def test_every_claim_rechecks_from_a_full_certificate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "all.json"
    assert main(["prove", "--json", "--certificate", str(path)]) == 0
    capsys.readouterr()
    assert main(["recheck", str(path)]) == 0
    count = len(all_claims())
    assert f"{count} of {count} claims re-verified" in capsys.readouterr().out


# --------------------------------------------------------------------------------------
# T10 in the paper's form: steps under a hypothesis, limits with parameter relations


@pytest.fixture(scope="module")
def t10_certificate(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("t10") / "t10.json"
    assert main(["prove", "T10", "--json", "--certificate", str(path)]) == 0
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _regime_limit(t10: dict[str, Any], relation: str) -> dict[str, Any]:
    """The Limit step under the hypothesis ``s*(M - m) <relation> 1``."""
    [assume] = [
        step
        for step in t10["content"]["steps"]
        if step["rule"] == "Assume" and step["inputs"]["hypothesis"][0] == relation
    ]
    limit: dict[str, Any] = assume["inputs"]["steps"][0]
    return limit


def test_t10_rechecks_with_its_regimes_as_sub_steps(
    t10_certificate: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["recheck", str(_write(tmp_path, t10_certificate))]) == 0
    assert "1 of 1 claims re-verified" in capsys.readouterr().out
    [t10] = t10_certificate["claims"]
    regimes = [step for step in t10["steps"] if step["rule"] == "Assume"]
    p_max = "Eq(Limit(n**(s*(M - m))/(n + n**(s*(M - m)) - 1), n, oo)"
    assert [step["statement"] for step in regimes] == [
        f"Implies(s*(M - m) > 1, {p_max}, 1))",
        f"Implies(Eq(s*(M - m), 1), {p_max}, 1/2))",
        f"Implies(s*(M - m) < 1, {p_max}, 0))",
    ]
    assert [step["substeps"][0]["rule"] for step in regimes] == ["Limit"] * 3


@pytest.mark.parametrize(
    ("relation", "field", "edit", "reason"),
    [
        ("gt", "substitute", ('["num", 1, 1]', '["num", 2, 1]'), "parameter relation"),
        ("lt", "expected", ('["num", 0, 1]', '["num", 1, 1]'), "claimed value is 1"),
    ],
    ids=["a wrong reparametrisation", "a wrong regime's limit"],
)
def test_an_edited_regime_of_t10_fails_recheck_at_its_step(
    t10_certificate: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    relation: str,
    field: str,
    edit: tuple[str, str],
    reason: str,
) -> None:
    """Content and hash made consistent: the kernel re-decides the sub-step, refuses it."""
    edited, t10 = _edit(t10_certificate, "T10")
    limit = _regime_limit(t10, relation)
    text = json.dumps(limit["inputs"][field])
    assert edit[0] in text
    limit["inputs"][field] = json.loads(text.replace(edit[0], edit[1], 1))
    _rehash(t10)
    if field == "expected":  # the readable conclusions say the new limit too
        from softmax_dispersion.theory._serial import read_claim
        from softmax_dispersion.theory.definitions import Definitions
        from softmax_dispersion.theory.proof_certificate import readable_steps
        from softmax_dispersion.theory.terms import show

        frozen = read_claim(t10["content"])
        readable = readable_steps(frozen, Definitions(frozen.definitions))
        for step, record in zip(t10["steps"], readable, strict=True):
            step["statement"] = record["statement"]
            for sub, sub_record in zip(
                step.get("substeps", []), record.get("substeps", []), strict=True
            ):
                sub["statement"] = sub_record["statement"]
        t10["statement"] = show(frozen.statement)
    assert main(["recheck", str(_write(tmp_path, edited))]) == 1
    out = capsys.readouterr().out
    assert "T10 step" in out and "Assume" in out and reason in out, out


# --------------------------------------------------------------------------------------
# Red team round 4: certificates of its attacks, a faithful printer, costs bound by size


def _certificate_of(claim: Any) -> dict[str, Any]:
    """The certificate of ``claim`` as the kernel wrote it before round 4: every verdict
    'verified' (the content is what the attacker's kernel would have written)."""
    from softmax_dispersion.theory.proof_certificate import build_certificate

    data: dict[str, Any] = json.loads(json.dumps(build_certificate([claim.check()])))
    data["verified"] = True
    for entry in data["claims"]:
        entry.update(verified=True, problem="")
        for step in entry["steps"]:
            step.update(verified=True, verdict="verified")
    return data


def _round4_claim(name: str) -> Any:
    import sympy as sp

    from softmax_dispersion.theory._core import Step
    from softmax_dispersion.theory.kernel import Claim, Differentiate, Identity, Implied, RealRoot

    x, y, r = sp.symbols("x y r", real=True)
    goal = sp.Lt(y, 0, evaluate=False)
    proof: list[Step]
    definitions: tuple[RealRoot, ...]
    if name == "root":  # (√x)² + 1, which sympy reads as x + 1
        root = RealRoot(r, sp.Pow(sp.sqrt(x), 2, evaluate=False) + 1, x, -2, 0, "x + 1?")
        proof, definitions = [Implied(goal, "from the root's equation")], (root,)
    elif name == "derivative":  # D = 0, then D/D = 1
        d = sp.Subs(sp.Derivative(x**2, x), x, 0)
        proof = [
            Differentiate(x**2, x, "D = 0", point=0),
            Identity(sp.Mul(d, sp.Pow(d, -1), evaluate=False), 1, "D/D = 1"),
            Implied(goal, "D = 0 and D/D = 1 contradict"),
        ]
        definitions = ()
    else:  # one root of a polynomial of degree 1024: 1.4 KB, 42 s before round 4
        root = RealRoot(r, (x + sp.Rational(7, 3)) ** 1024 + x, x, -2, 0, "degree 1024")
        goal = sp.Lt(r, 0, evaluate=False)
        proof, definitions = [Implied(goal, "r < 0")], (root,)
    return Claim(
        id="R4",
        title="a claim of red team round 4",
        statement=goal,
        assumptions=[],
        source="red team",
        proof=lambda: proof,
        definitions=definitions,
        witness={} if name == "degree" else {y: 0},
    )


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("root", "R4: the polynomial of r: sqrt(x) is not a polynomial in x"),
        ("derivative", "the denominator Subs(Derivative(x**2, x), x, 0) != 0"),
        ("degree", "R4: the polynomial of r: degree 1024 is beyond 8"),
    ],
)
def test_certificates_of_round_4_attacks_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, reason: str
) -> None:
    """The red team's root1.json, der1.json and slow.json, as their kernel wrote them."""
    path = _write(tmp_path, _certificate_of(_round4_claim(name)))
    start = time.perf_counter()
    assert main(["recheck", str(path)]) == 1
    assert time.perf_counter() - start < 5  # slow.json took 42 s
    out = capsys.readouterr().out
    assert "Traceback" not in out and reason in out, out


def _partial_derivative_certificate(in_a_step: bool) -> dict[str, Any]:
    """d/dx (x·t) at x = t is t: true, and its certificate re-verifies (``in_a_step``:
    an ``Implied`` step restates it, so a step's readable statement shows it too)."""
    import sympy as sp

    from softmax_dispersion.theory._core import Step
    from softmax_dispersion.theory.kernel import Claim, Differentiate, Implied
    from softmax_dispersion.theory.proof_certificate import build_certificate

    x, t = sp.symbols("x t", real=True)
    statement = sp.Eq(sp.Subs(sp.Derivative(x * t, x), x, t), t)
    proof: list[Step] = [
        Differentiate(x * t, x, "d/dx (x t) at x = t", point=t, value=t, constants=[t])
    ]
    if in_a_step:
        proof.append(Implied(statement, "restated"))
    claim = Claim(
        id="D1",
        title="a partial derivative",
        statement=statement,
        assumptions=[],
        source="derived",
        proof=lambda: proof,
        witness={t: 0},
    )
    result = claim.check()
    assert result.verified, result.problem
    data: dict[str, Any] = json.loads(json.dumps(build_certificate([result])))
    return data


def _rename_hints(term: Any, old: str, new: str) -> None:
    """Every ``der`` node of a JSON term (or record) whose hint is ``old`` gets ``new``."""
    if isinstance(term, dict):
        for value in term.values():
            _rename_hints(value, old, new)
    elif isinstance(term, list):
        if term and term[0] == "der" and term[1] == old:
            term[1] = new
        for child in term[1:]:
            _rename_hints(child, old, new)


_FORGED = "Derivative(t*t, t)"  # d/dt t², which is 2t: the red team's text, false


@pytest.mark.parametrize("in_a_step", [False, True], ids=["the statement", "a step"])
def test_a_hint_edited_to_a_free_name_cannot_change_what_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], in_a_step: bool
) -> None:
    """The red team's der_edit.py: the bound variable's hint x edited to t (a name free in
    the body) once printed Derivative(t*t, t) = t, false, and re-verified.  Now the
    printer never reuses a free name: the forger's text is refused, and the text the
    kernel generates for the edited content says what was checked.  New form: the same
    edit in a step's input, whose readable statement is generated and compared too."""
    from softmax_dispersion.theory._serial import read_claim
    from softmax_dispersion.theory.definitions import Definitions
    from softmax_dispersion.theory.proof_certificate import readable_steps
    from softmax_dispersion.theory.terms import show

    data = _partial_derivative_certificate(in_a_step)
    [entry] = data["claims"]
    _rename_hints(entry["content"], "x", "t")
    _rehash(entry)
    frozen = read_claim(entry["content"])
    honest = show(frozen.statement)
    assert _FORGED not in honest and "t1" in honest, honest
    readable = readable_steps(frozen, Definitions(frozen.definitions, decide=False))
    shown = [record["statement"] for record in readable]
    assert all(_FORGED not in text for text in shown), shown
    forged = "Eq(" + _FORGED + ", t)"
    if in_a_step:
        entry["statement"] = honest
        entry["steps"][-1]["statement"] = forged
    else:
        entry["statement"] = forged
    assert main(["recheck", str(_write(tmp_path, data))]) == 1
    assert "the readable statement is not the content's" in _one_line(capsys)
    entry["statement"] = honest  # what the kernel prints for the edited content: true
    for step, text in zip(entry["steps"], shown, strict=True):
        step["statement"] = text
    assert main(["recheck", str(_write(tmp_path, data))]) == 0
    capsys.readouterr()


def test_the_budget_of_a_certificate_grows_with_its_size() -> None:
    from softmax_dispersion.theory.recheck import BASE_BUDGET_S, TOTAL_BUDGET_S, budget_for

    assert budget_for(1434) < BASE_BUDGET_S + 2  # slow.json: about 11 s, not 1800 + 1800
    assert budget_for(254_000) < 300  # the thirteen claims' certificate: about 258 s
    assert budget_for(64 * 1024 * 1024) == TOTAL_BUDGET_S


def test_whitespace_in_a_file_earns_no_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The budget is set by the data, not the file: slow.json padded with 1 MiB of
    spaces (which JSON allows) would otherwise earn 1024 s more."""
    from softmax_dispersion.theory import recheck as module

    sizes: list[int] = []
    budget_for = module.budget_for

    def recorded(size: int) -> float:
        sizes.append(size)
        return budget_for(size)

    monkeypatch.setattr(module, "budget_for", recorded)
    data = _certificate_of(_round4_claim("degree"))
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(data), encoding="utf-8")
    padded = tmp_path / "padded.json"
    padded.write_text(json.dumps(data, indent=4) + " " * (1 << 20), encoding="utf-8")
    for path in (plain, padded):
        assert not module.recheck_file(path).verified
    assert len(sizes) == 2 and sizes[0] == sizes[1] < 4096, sizes


def test_every_stage_shares_one_budget_set_by_the_size(
    certificate: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Planted: a budget of almost nothing per KiB.  The decision runs out of the time
    the readable stage left it, and every claim fails naming the budget."""
    from softmax_dispersion.theory import recheck as module

    monkeypatch.setattr(module, "BASE_BUDGET_S", 0.0)
    monkeypatch.setattr(module, "BUDGET_PER_KIB_S", 1e-6)
    report = module.recheck(copy.deepcopy(certificate))
    assert not report.verified
    text = report.refused + " ".join(p for c in report.claims for p in c.problems)
    assert "budget" in text, text


def test_the_readable_stage_isolates_no_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Roots are isolated once, in the decision: never again to print a claim."""
    import sympy as sp

    from softmax_dispersion.theory import definitions
    from softmax_dispersion.theory.kernel import Claim, Implied, RealRoot
    from softmax_dispersion.theory.recheck import recheck

    x, r = sp.symbols("x r", real=True)
    root = RealRoot(r, x**2 - 2, x, 1, 2, "√2")
    goal = sp.Gt(r, 1, evaluate=False)
    claim = Claim(
        id="R",
        title="√2 > 1",
        statement=goal,
        assumptions=[],
        source="derived",
        proof=lambda: [Implied(goal, "from its interval")],
        definitions=(root,),
        witness={},
    )
    data = _certificate_of(claim)
    calls: list[str] = []
    isolate = definitions.isolate

    def counted(found: Any) -> None:
        calls.append(found.name)
        isolate(found)

    monkeypatch.setattr(definitions, "isolate", counted)
    assert recheck(data).verified
    assert calls == ["r"]


# --------------------------------------------------------------------------------------
# Red team round 5: the chain rule without differentiability (F1.json)


def test_certificate_of_the_chain_rule_without_differentiability_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The red team's F1.json: f(x) = 1 and (f²)'(x) = 0 imply f'(x) = 0, false for a
    step function at 0, licensed by the tautology f' = f'; its kernel re-verified it."""
    import sympy as sp

    from softmax_dispersion.theory.kernel import Claim, Differentiate, Implied

    x, s = sp.symbols("x t", real=True)
    f = sp.Function("f", real=True)
    slope = sp.Derivative(f(x), x)
    goal = sp.Implies(
        sp.And(sp.Eq(f(x), 1), sp.Eq(sp.Derivative(f(x) ** 2, x), 0)), sp.Eq(slope, 0)
    )
    claim = Claim(
        id="R5F1",
        title="f(x) = 1 and (f^2)'(x) = 0 imply f'(x) = 0",
        statement=goal,
        assumptions=[],
        source="derived",
        proof=lambda: [
            Implied(sp.Eq(slope, slope, evaluate=False), "a fact that merely names f'(x)"),
            Differentiate(f(x) ** 2, x, "chain rule: (f^2)' = 2 f f'"),
            Implied(goal, "divide by 2 f(x) = 2"),
        ],
        witness={x: 0, f: sp.Lambda(s, s)},
    )
    assert main(["recheck", str(_write(tmp_path, _certificate_of(claim)))]) == 1
    out = capsys.readouterr().out
    assert "Traceback" not in out and "R5F1" in out and "not shown to exist" in out, out


# Red team round 5, F2 and F3: content lists that name one thing twice, a citation's label
# that is not the cited claim's id, two claims of one id, formulas nothing re-decides.


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("witness", "the witness lists M twice"),
        ("cites", "cites lists dd73adc6d09f3572"),
        ("formulas", "formulas lists dispersion_size twice"),
        ("definitions", "the definitions lists"),
    ],
)
def test_a_content_list_naming_one_thing_twice_is_refused(
    certificate: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    key: str,
    reason: str,
) -> None:
    """e_dupwit2.json: theta = -1, then theta = 1; a reader saw the first, the kernel
    used the last.  Here the repeated entry is the same, so the old reader passed it."""
    edited, t4 = _edit(certificate, "T4")
    t4["content"][key].append(copy.deepcopy(t4["content"][key][0]))
    _rehash(t4)
    assert main(["recheck", str(_write(tmp_path, edited))]) == 2
    err = capsys.readouterr().err
    assert reason in err and "Traceback" not in err, err


def test_a_family_index_naming_one_symbol_twice_is_refused(
    certificate: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edited, t4 = _edit(certificate, "T4")
    family = t4["content"]["families"][0]
    family["index"].append(family["index"][0])
    _rehash(t4)
    assert main(["recheck", str(_write(tmp_path, edited))]) == 2
    assert "repeats a name" in capsys.readouterr().err


def test_a_citation_labelled_with_another_claims_id_fails(
    certificate: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """e_label.json: a Cite of T99 labelled T1 re-verified."""
    edited, t4 = _edit(certificate, "T4")
    cite = next(s for s in t4["content"]["steps"] if s["rule"] == "Cite")
    cite["inputs"]["claim"]["label"] = "T2"
    _rehash(t4)
    assert main(["recheck", str(_write(tmp_path, edited))]) == 1
    assert "the citation is labelled 'T2' but cites T1" in capsys.readouterr().out


def test_two_claims_of_one_id_are_refused(
    certificate: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """e_dupid.json: two claims T99 of different statements, each 're-verified'."""
    edited, t2 = _edit(certificate, "T2")
    t2["id"] = t2["content"]["id"] = "T4"
    _rehash(t2)
    assert main(["recheck", str(_write(tmp_path, edited))]) == 2
    assert "the id 'T4' is taken" in capsys.readouterr().err


def test_recheck_says_the_formulas_a_claim_names_are_not_re_decided(
    certificate: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """e_formulas.json: T99 named dispersion_upper, which it does not prove; the name is
    a label, and what recheck prints says so rather than lending it the verdict."""
    edited, t4 = _edit(certificate, "T4")
    t4["content"]["formulas"] = ["dispersion_upper"]
    _rehash(t4)
    assert main(["recheck", str(_write(tmp_path, edited))]) == 0
    out = capsys.readouterr().out
    assert "names the formulas dispersion_upper: a label, not re-decided" in out, out


@pytest.mark.slow  # runs to its budget: about 13 s
def test_a_certificate_past_its_budget_fails_in_one_line() -> None:
    """Red team round 6: a 2.3 KB certificate whose one step is a hard inequality ran past
    its budget and printed a traceback from z3's destructor (the budget's exception raised
    inside it was swallowed). z3's timeout is now the time left, and the alarm never raises
    inside z3's code: the file fails, with no traceback."""
    data = Path(__file__).parent / "data" / "hard_inequality_certificate.json"
    done = subprocess.run(
        [sys.executable, "-m", "softmax_dispersion", "recheck", str(data)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAILED" in done.stdout
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr


def test_recheck_says_titles_and_sources_are_not_re_decided(
    certificate: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Red team 13: a title edited to misdescribe its statement (content, readable field
    and hash made consistent) rechecks; the report must say what it did not decide."""
    assert main(["recheck", str(_write(tmp_path, certificate))]) == 0
    assert (
        "and the details recorded for its steps, are its author's words" in capsys.readouterr().out
    )
    assert main(["recheck", "--json", str(_write(tmp_path, certificate))]) == 0
    assert json.loads(capsys.readouterr().out)["not_re_decided"] == [
        "title",
        "source",
        "descriptions",
        "details",
        "formulas",
    ]


@pytest.mark.parametrize(
    ("detail", "message"),
    [
        ("proved\nT4     FAILED: forged report line", "'0xa'"),
        ("verified \u202e1 = 2", "RIGHT-TO-LEFT OVERRIDE"),
        ("nul \x00 inside", "'0x0'"),
        (5, "must be text, not int"),
        ("x" * 20_000, "longer than 10000 characters"),
    ],
)
def test_a_steps_detail_must_be_text_that_prints_as_itself(
    certificate: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    detail: object,
    message: str,
) -> None:
    """Red team 16: a step's detail (outside the hashed content) held a newline and a
    forged report line, a right-to-left override, a NUL, a number and 20 MB, each
    rechecked with exit 0. A detail is the author's words (recheck prints its own, and
    says so), but it is read: it must be text that prints as itself."""
    edited, t2 = _edit(certificate, "T2")
    t2["steps"][0]["detail"] = detail
    assert main(["recheck", str(_write(tmp_path, edited))]) == 1
    line = _one_line(capsys)
    assert "T2, step 1: its detail" in line and message in line, line


def test_the_kernels_own_details_are_written_as_one_printable_line() -> None:
    from softmax_dispersion.theory.proof_certificate import _one_line as one_line

    assert one_line("x = 1,\n y = 2") == "x = 1, y = 2"
    assert one_line("a\u202eb") == "a\N{REPLACEMENT CHARACTER}b"
    assert len(one_line("z" * 20_000)) == 10_000


def test_a_product_of_large_numbers_is_shown_factor_by_factor(
    certificate: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Red team 16: four numbers of 4001 bits each (each within the 4096-bit limit) in one
    product were multiplied by the printer into 4,800 digits, past Python's limit on
    turning an integer into text: recheck printed a traceback. The printer never makes a
    number longer than the ones it is given: the file now fails on its readable
    statement, in one line."""
    big = 2**4000 + 1
    edited, t2 = _edit(certificate, "T2")
    product = ["mul", *[["num", big, 1]] * 4, ["sym", "n"]]
    t2["content"]["statement"] = ["gt", product, ["num", 0, 1]]
    _rehash(t2)
    assert main(["recheck", str(_write(tmp_path, edited))]) == 1
    assert "the readable statement is not the content's" in _one_line(capsys)
