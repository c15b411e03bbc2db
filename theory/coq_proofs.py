"""The Coq proofs shipped with the package: export them, compile them, read their axioms.

The proofs are hand-written ``.v`` files under ``theory/coq/`` (package data): one file
``<Id>.v`` per formalised claim, ending in ``Theorem <Id> : <Id>_statement.``, and
shared lemma files.  The statements they prove are *not* among them: they are printed
from the sympy claims by :mod:`softmax_dispersion.theory.coq` into a generated
``Statements.v``, which every proof ``Require``\\ s.

:func:`export_project` writes a self-contained Coq project (statements, proofs,
``_CoqProject``, a ``Makefile`` calling ``coq_makefile``, a ``Print_Assumptions.v``) that
compiles with Coq 8.16, Coquelicot and Interval (and Flocq, where a statement needs it)
alone.  :func:`kernel_check` exports the project to a temporary folder, compiles every
file ``coqc`` needs for the named claims, and asks Coq's kernel what each theorem rests
on (``Print Assumptions``).  A theorem is *kernel-checked* when its file compiles, its
type is the generated statement, no proof file declares an axiom or admits a goal, and
every assumption is one of the standard library's axioms of the real numbers or a
primitive-float/63-bit-integer axiom (Interval's certified computations run on Coq's
primitive floats).  Each proof file says, in its opening comment, what its theorem
covers and what of its claim's subject it leaves out (:func:`proof_scope`).
"""

from __future__ import annotations

import re
import resource
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from softmax_dispersion.theory.coq import (
    CoqPrintError,
    coq_statement,
    statement_hook,
    statements_file,
)
from softmax_dispersion.theory.coq_reader import statement_mismatches
from softmax_dispersion.theory.kernel import Claim

__all__ = [
    "COQ_INSTALL",
    "LOGICAL_ROOT",
    "PRIMITIVE_AXIOM_LIBRARIES",
    "REAL_AXIOMS",
    "CoqRun",
    "CoqVerdict",
    "coq_version",
    "disallowed",
    "export_project",
    "find_coqc",
    "forbidden_commands",
    "formalised_ids",
    "kernel_check",
    "kernel_run",
    "proof_scope",
    "proof_sources",
]

COQ_INSTALL = "apt-get install -y coq libcoq-coquelicot libcoq-interval libcoq-flocq"
"""How to install the Coq toolchain the proofs need (Debian/Ubuntu packages)."""
LOGICAL_ROOT = "SoftmaxDispersion"
"""The Coq logical path the exported project binds its folder to."""
REAL_AXIOMS: tuple[str, ...] = (
    "Coq.Reals.ClassicalDedekindReals.sig_forall_dec",
    "Coq.Reals.ClassicalDedekindReals.sig_not_dec",
    "Coq.Logic.FunctionalExtensionality.functional_extensionality_dep",
    "Coq.Logic.Classical_Prop.classic",
)
"""The standard library's axioms behind its classical real numbers."""
PRIMITIVE_AXIOM_LIBRARIES: tuple[str, ...] = ("Coq.Floats.", "Coq.Numbers.Cyclic.Int63.")
"""Coq's primitive floats and 63-bit integers, whose specifications are axioms."""
COQC_FLAGS: tuple[str, ...] = ("-w", "-ambiguous-paths")
"""Silences one warning: Coquelicot's coercion from ``R`` to ``Rbar``, harmless here."""
COMPILE_TIMEOUT_S = 600
"""A proof file that takes longer than this has failed."""

STATEMENTS = "Statements"
_FORBIDDEN = re.compile(
    r"\b(Admitted|Admit|admit|give_up|Axiom|Axioms|Parameter|Parameters|Conjecture|Hypothesis|"
    r"Hypotheses|Variable|Variables|Primitive|Module|Declare|Extern|Unset|Typing|bypass_check)\b"
)
_REQUIRES = re.compile(
    r"From\s+" + LOGICAL_ROOT + r"\s+Require\s+(?:Import\s+|Export\s+)?([^.]+)\."
)


@dataclass(frozen=True)
class CoqVerdict:
    """What Coq's kernel says about one claim.

    ``status`` is ``"kernel-checked"``, ``"failed"``, ``"not formalised"`` or
    ``"coqc not found"``; ``assumptions`` are the fully qualified names ``Print
    Assumptions`` lists for the theorem (empty unless it compiled).  ``covers`` and
    ``leaves_out`` say what the theorem is about and what of the claim's subject it does
    not check (from its proof file's header, :func:`proof_scope`).
    """

    claim_id: str
    status: str
    assumptions: tuple[str, ...] = ()
    detail: str = ""
    seconds: float = 0.0
    files: tuple[str, ...] = field(default_factory=tuple)
    covers: str = ""
    leaves_out: str = ""

    @property
    def kernel_checked(self) -> bool:
        return self.status == "kernel-checked"

    def to_dict(self) -> dict[str, object]:
        return {
            "status": self.status,
            "assumptions": list(self.assumptions),
            "detail": self.detail,
            "seconds": round(self.seconds, 3),
            "files": list(self.files),
            "covers": self.covers,
            "leaves_out": self.leaves_out,
        }


@dataclass(frozen=True)
class CoqRun:
    """One run of :func:`kernel_run`: the verdicts, and what compiling them cost.

    ``compile_seconds`` holds the wall time of each file compiled in this run (files
    found up to date are absent); ``seconds`` is the wall time of the whole run,
    ``Print Assumptions`` included.
    """

    verdicts: tuple[CoqVerdict, ...]
    compile_seconds: dict[str, float]
    seconds: float
    coq_version: str
    compile_cpu_seconds: float = 0.0
    """The CPU time (user + system) of the ``coqc`` processes that compiled the files."""

    @property
    def compiled_in(self) -> float:
        """The wall time spent compiling, all files together."""
        return sum(self.compile_seconds.values())


def proof_sources() -> dict[str, str]:
    """Every shipped ``.v`` file by name (``"T1.v"``, ``"Lemmas.v"``, …)."""
    folder = resources.files("softmax_dispersion.theory") / "coq"
    return {
        entry.name: entry.read_text(encoding="utf-8")
        for entry in sorted(folder.iterdir(), key=lambda e: e.name)
        if entry.name.endswith(".v")
    }


def formalised_ids(sources: dict[str, str] | None = None) -> tuple[str, ...]:
    """The ids of the claims with a proof file ``<Id>.v`` that proves ``<Id>_statement``.

    Examples
    --------
    >>> "T1" in formalised_ids()
    True
    """
    ids = []
    for name, text in (proof_sources() if sources is None else sources).items():
        claim_id = name[: -len(".v")]
        if re.search(rf"\bTheorem\s+{claim_id}\s*:\s*{claim_id}_statement\s*\.", text):
            ids.append(claim_id)
    return tuple(sorted(ids, key=lambda i: (len(i), i)))


_SCOPE = re.compile(r"(Covers|Leaves out):\s*(.*?)\s*(?=Covers:|Leaves out:|\*\))", re.DOTALL)


def proof_scope(claim_id: str, sources: dict[str, str] | None = None) -> tuple[str, str]:
    """What ``<Id>.v``'s theorem covers, and what of its claim's subject it leaves out.

    Every proof file opens with a comment holding the two sentences, after ``Covers:``
    and ``Leaves out:``; they are what the docs and the Coq verdict say of the theorem.
    A claim without a proof file has neither (empty strings).

    Examples
    --------
    >>> covers, leaves_out = proof_scope("T13")
    >>> "Bernstein" in leaves_out
    True
    """
    sources = proof_sources() if sources is None else sources
    text = sources.get(f"{claim_id}.v", "")
    opening = re.match(r"\s*\(\*.*?\*\)", text, re.DOTALL)
    found = dict(_SCOPE.findall(opening.group(0))) if opening else {}
    return tuple(" ".join(found.get(key, "").split()) for key in ("Covers", "Leaves out"))  # type: ignore[return-value]


def _strip_comments(text: str) -> str:
    out, depth, k = [], 0, 0
    while k < len(text):
        if text.startswith("(*", k):
            depth, k = depth + 1, k + 2
        elif text.startswith("*)", k) and depth:
            depth, k = depth - 1, k + 2
        else:
            if not depth:
                out.append(text[k])
            k += 1
    return "".join(out)


def _requires(text: str) -> list[str]:
    return [name for group in _REQUIRES.findall(_strip_comments(text)) for name in group.split()]


def _closure(
    names: Sequence[str], sources: dict[str, str], statement_needs: Sequence[str] = ()
) -> list[str]:
    """The files the named modules need, each after its dependencies.

    ``Statements.v`` needs ``statement_needs``: the package's own modules that a
    :class:`~softmax_dispersion.theory.coq.StatementHook` requires.
    """
    order: list[str] = []
    visiting: set[str] = set()

    def visit(module: str) -> None:
        if module in order:
            return
        if module in visiting:
            raise ValueError(f"the proof files require each other in a cycle at {module}")
        visiting.add(module)
        for dependency in _needs(module, sources, statement_needs):
            visit(dependency)
        order.append(module)

    for name in names:
        visit(name)
    return order


def _needs(module: str, sources: dict[str, str], statement_needs: Sequence[str]) -> list[str]:
    """The modules ``module`` requires."""
    if module == STATEMENTS:
        return list(statement_needs)
    return _requires(sources[f"{module}.v"])


def export_project(
    directory: Path | str,
    claims: Sequence[Claim] | None = None,
    *,
    sources: dict[str, str] | None = None,
) -> list[Path]:
    """Write a self-contained Coq project for the formalised claims into ``directory``.

    Parameters
    ----------
    directory
        The folder to write (created if needed; existing files of the same names are
        replaced).
    claims
        The claims whose statements to print; by default the package's own claims that
        have a proof.  A test passes an altered claim here to see its proof fail.
    sources
        The proof files by name; by default the shipped ones (:func:`proof_sources`).

    Returns
    -------
    list of Path
        The files written.

    Raises
    ------
    CoqPrintError
        When a claim cannot be printed, or its printed statement does not read back as
        the claim (:func:`~softmax_dispersion.theory.coq_reader.statement_mismatches`).

    Notes
    -----
    The project binds its folder to the logical path ``SoftmaxDispersion``.  Build it
    with ``make`` (which runs ``coq_makefile -f _CoqProject -o Makefile.coq``), then
    ``coqc -Q . SoftmaxDispersion Print_Assumptions.v`` lists each theorem's axioms.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     names = sorted(p.name for p in export_project(folder))
    >>> [name for name in names if not name.startswith("T")][:4]
    ['Lemmas.v', 'Limits.v', 'ListSums.v', 'Makefile']
    """
    from softmax_dispersion.theory import claim_by_id

    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    sources = proof_sources() if sources is None else sources
    ids = formalised_ids(sources)
    chosen = list(claims) if claims is not None else [claim_by_id(i) for i in ids]
    written: list[Path] = []

    def write(name: str, text: str) -> None:
        # Unchanged files keep their time stamps, so that compiled files stay valid.
        path = folder / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        written.append(path)

    for claim in chosen:  # never ship a statement that does not read back as its claim
        problems = statement_mismatches(claim, coq_statement(claim))
        if problems:
            raise CoqPrintError(f"{claim.id}'s printed statement differs: {problems[0]}")
    statements = statements_file(chosen)
    write(f"{STATEMENTS}.v", statements)
    for name, text in sources.items():
        write(name, text)
    order = _closure([i for i in ids if f"{i}.v" in sources], sources, _requires(statements))
    flags = [f"-Q . {LOGICAL_ROOT}", *(f"-arg {flag}" for flag in COQC_FLAGS)]
    write("_CoqProject", "\n".join([*flags, *(f"{m}.v" for m in order)]) + "\n")
    write("Makefile", _MAKEFILE)
    write("Print_Assumptions.v", _assumptions_script(ids))
    write("README.md", _README.format(install=COQ_INSTALL, root=LOGICAL_ROOT))
    return sorted(written)


def _assumptions_script(ids: Sequence[str]) -> str:
    lines = [f"From {LOGICAL_ROOT} Require Import {STATEMENTS} {' '.join(ids)}."]
    for claim_id in ids:
        lines += [
            f'Goal True. idtac "BEGIN {claim_id}". Abort.',
            f"Check ({claim_id} : {LOGICAL_ROOT}.{STATEMENTS}.{claim_id}_statement).",
            f"Print Assumptions {claim_id}.",
        ]
    return "\n".join(lines) + "\n"


_MAKEFILE = """\
# Build the proofs with Coq 8.16, Coquelicot and Interval:  make
# Then list what each theorem rests on:  coqc -Q . SoftmaxDispersion Print_Assumptions.v
all: Makefile.coq
\t$(MAKE) -f Makefile.coq

Makefile.coq: _CoqProject
\tcoq_makefile -f _CoqProject -o Makefile.coq

clean:
\tif [ -f Makefile.coq ]; then $(MAKE) -f Makefile.coq cleanall; fi
\trm -f Makefile.coq Makefile.coq.conf

.PHONY: all clean
"""

_README = """\
# softmax-dispersion: the Coq proofs

`Statements.v` is generated from the package's sympy claims (do not edit it); every
other `.v` file is a hand-written proof or a lemma the proofs share.  Each `<Id>.v` ends
in `Theorem <Id> : <Id>_statement.`

Check it yourself with Coq 8.16, Coquelicot and Interval (`{install}`):

    make
    coqc -Q . {root} Print_Assumptions.v

`make` compiles everything (a failing proof stops it); `Print_Assumptions.v` checks
that each theorem's type is the generated statement and lists the axioms it rests on:
only the standard library's axioms of the real numbers, and Coq's primitive-float and
63-bit-integer axioms where the `interval` tactic computed.
"""


def find_coqc() -> str | None:
    """The path of ``coqc`` on ``PATH``, or ``None``."""
    return shutil.which("coqc")


@dataclass(frozen=True)
class _Compiled:
    ok: bool
    seconds: float
    detail: str
    cpu: float = 0.0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _compile(coqc: str, folder: Path, module: str) -> _Compiled:
    start, cpu = time.perf_counter(), _children_cpu()
    try:
        done = subprocess.run(
            [coqc, "-q", *COQC_FLAGS, "-Q", ".", LOGICAL_ROOT, f"{module}.v"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=COMPILE_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return _Compiled(
            False, time.perf_counter() - start, f"timed out after {COMPILE_TIMEOUT_S} s"
        )
    seconds = time.perf_counter() - start
    cpu = _children_cpu() - cpu
    if done.returncode != 0:
        errors = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
        return _Compiled(False, seconds, "\n".join(_error_lines(errors)), cpu)
    return _Compiled(True, seconds, "", cpu)


def _up_to_date(folder: Path, module: str, needs: Sequence[str], rebuilt: set[str]) -> bool:
    """``module.vo`` is newer than its source and every dependency's, none rebuilt now."""
    target = folder / f"{module}.vo"
    if not target.exists() or any(d in rebuilt for d in needs):
        return False
    stamp = target.stat().st_mtime
    sources = [folder / f"{module}.v", *(folder / f"{d}.vo" for d in needs)]
    return all(p.exists() and p.stat().st_mtime <= stamp for p in sources)


def _error_lines(lines: list[str]) -> list[str]:
    """The lines from the first ``Error`` on (with the location line before it)."""
    for k, line in enumerate(lines):
        if line.startswith("Error"):
            start = k - 1 if k and lines[k - 1].startswith("File ") else k
            return lines[start : start + 12]
    return lines[-12:]


def _print_assumptions(
    coqc: str, folder: Path, ids: Sequence[str]
) -> tuple[dict[str, list[str]], str]:
    """Each theorem's assumptions by fully qualified name (two coqc runs: list, locate)."""
    (folder / "Print_Assumptions.v").write_text(_assumptions_script(ids), encoding="utf-8")
    listed = subprocess.run(
        [coqc, "-q", *COQC_FLAGS, "-Q", ".", LOGICAL_ROOT, "Print_Assumptions.v"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=COMPILE_TIMEOUT_S,
        check=False,
    )
    if listed.returncode != 0:
        return {}, "\n".join(_error_lines((listed.stdout + listed.stderr).splitlines()))
    short = _parse_assumptions(listed.stdout)
    names = sorted({name for group in short.values() for name in group})
    script = [f"From {LOGICAL_ROOT} Require Import {STATEMENTS} {' '.join(ids)}."]
    for name in names:
        script += [f'Goal True. idtac "BEGIN {name}". Abort.', f"Locate {name}."]
    (folder / "Locate_Assumptions.v").write_text("\n".join(script) + "\n", encoding="utf-8")
    located = subprocess.run(
        [coqc, "-q", *COQC_FLAGS, "-Q", ".", LOGICAL_ROOT, "Locate_Assumptions.v"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=COMPILE_TIMEOUT_S,
        check=False,
    )
    if located.returncode != 0:
        return {}, "\n".join(_error_lines((located.stdout + located.stderr).splitlines()))
    # "Constant Coq.Reals.…" names the object; anything else ("No object of suffix …")
    # leaves the short name, which no allowed library matches.
    full = {
        name: lines[0].split()[1]
        if lines and lines[0].startswith(("Constant ", "Inductive ", "Constructor "))
        else name
        for name, lines in _blocks(located.stdout).items()
    }
    return {i: [full.get(n, n) for n in group] for i, group in short.items()}, ""


def _blocks(output: str) -> dict[str, list[str]]:
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in output.splitlines():
        if line.startswith("BEGIN "):
            current = blocks.setdefault(line[len("BEGIN ") :].strip(), [])
        elif current is not None and line.strip():
            current.append(line)
    return blocks


def _parse_assumptions(output: str) -> dict[str, list[str]]:
    """``Print Assumptions`` output per theorem: the names of the listed axioms."""
    result: dict[str, list[str]] = {}
    for claim_id, lines in _blocks(output).items():
        names: list[str] = []
        section = None
        for line in lines:
            if line.startswith("Closed under the global context"):
                section = None
            elif line.rstrip().endswith(":") and not line.startswith(" "):
                section = line.rstrip()[:-1]
            elif section is not None and not line.startswith(" "):
                names.append(line.split(" : ")[0].strip())
        result[claim_id] = names
    return result


def disallowed(assumptions: Sequence[str]) -> list[str]:
    """The assumptions that are neither real-number nor primitive-arithmetic axioms.

    Examples
    --------
    >>> disallowed(["Coq.Logic.Classical_Prop.classic", "SoftmaxDispersion.T1.cheat"])
    ['SoftmaxDispersion.T1.cheat']
    """
    return [
        name
        for name in assumptions
        if name not in REAL_AXIOMS and not name.startswith(PRIMITIVE_AXIOM_LIBRARIES)
    ]


def forbidden_commands(sources: dict[str, str]) -> dict[str, list[str]]:
    """Commands no proof file may use (axioms, admitted goals, modules), by file."""
    found: dict[str, list[str]] = {}
    for name, text in sources.items():
        hits = sorted(set(_FORBIDDEN.findall(_strip_comments(text))))
        if hits:
            found[name] = hits
    return found


def coq_version(coqc: str) -> str:
    """``coqc --version``'s version number (``"8.16.1"``), or its first line."""
    done = subprocess.run([coqc, "--version"], capture_output=True, text=True, check=False)
    found = re.search(r"version\s+(\S+)", done.stdout)
    return found.group(1) if found else "unknown"


def kernel_check(
    claim_ids: Sequence[str] = (),
    *,
    claims: Sequence[Claim] | None = None,
    directory: Path | str | None = None,
    sources: dict[str, str] | None = None,
) -> list[CoqVerdict]:
    """Compile the proofs of the named claims and report what Coq's kernel says.

    Parameters
    ----------
    claim_ids
        The claims to report on (all when empty).  A claim without a proof file is
        ``"not formalised"``.
    claims
        The claims whose statements are printed (by default the package's own); a test
        passes false siblings here.
    directory
        Where to export and compile (a temporary folder by default).  Files compiled
        there before are reused while they are newer than their sources.
    sources
        The proof files by name; by default the shipped ones (a test plants bugs here).

    Returns
    -------
    list of CoqVerdict
        One verdict per claim, in the order given.

    Notes
    -----
    A claim is kernel-checked when (1) its proof file and every file it needs compile,
    (2) ``Check (<Id> : SoftmaxDispersion.Statements.<Id>_statement)`` succeeds, so the
    theorem proves the generated statement and not a local redefinition, (3) no proof
    file contains an axiom, an admitted goal or a module, and (4) every assumption that
    ``Print Assumptions`` lists is in :data:`REAL_AXIOMS` or in
    :data:`PRIMITIVE_AXIOM_LIBRARIES`.

    Examples
    --------
    >>> [v.status for v in kernel_check(["T1"], sources={})]  # no proof file for T1
    ['not formalised']
    """
    run = kernel_run(claim_ids, claims=claims, directory=directory, sources=sources)
    return list(run.verdicts)


def kernel_run(
    claim_ids: Sequence[str] = (),
    *,
    claims: Sequence[Claim] | None = None,
    directory: Path | str | None = None,
    sources: dict[str, str] | None = None,
) -> CoqRun:
    """:func:`kernel_check` with the compile times and the Coq version."""
    from softmax_dispersion.theory import all_claims

    start = time.perf_counter()
    ids = list(claim_ids) or [c.id for c in all_claims()]
    coqc = find_coqc()
    formalised = set(formalised_ids(sources))
    if coqc is None:
        verdicts = [
            CoqVerdict(
                i,
                "coqc not found" if i in formalised else "not formalised",
                detail=f"install Coq: {COQ_INSTALL}" if i in formalised else "",
                covers=proof_scope(i, sources)[0],
                leaves_out=proof_scope(i, sources)[1],
            )
            for i in ids
        ]
        return CoqRun(tuple(verdicts), {}, time.perf_counter() - start, "")
    if directory is None:
        with tempfile.TemporaryDirectory(prefix="softmax-dispersion-coq-") as folder:
            verdicts, compiled = _check_in(coqc, Path(folder), ids, formalised, claims, sources)
    else:
        verdicts, compiled = _check_in(coqc, Path(directory), ids, formalised, claims, sources)
    return CoqRun(
        tuple(verdicts),
        {name: result.seconds for name, result in compiled.items()},
        time.perf_counter() - start,
        coq_version(coqc),
        sum(result.cpu for result in compiled.values()),
    )


def _check_in(
    coqc: str,
    folder: Path,
    ids: Sequence[str],
    formalised: set[str],
    claims: Sequence[Claim] | None,
    sources: dict[str, str] | None,
) -> tuple[list[CoqVerdict], dict[str, _Compiled]]:
    sources = proof_sources() if sources is None else sources
    export_project(folder, claims, sources=sources)
    statement_needs = _requires((folder / f"{STATEMENTS}.v").read_text(encoding="utf-8"))
    wanted = [i for i in ids if i in formalised]
    compiled: dict[str, _Compiled] = {}
    rebuilt: set[str] = set()
    for module in _closure(wanted, sources, statement_needs) if wanted else []:
        needs = _needs(module, sources, statement_needs)
        failed_dependency = next((d for d in needs if not compiled[d].ok), None)
        if failed_dependency is not None:
            compiled[module] = _Compiled(False, 0.0, f"needs {failed_dependency}.v, which failed")
        elif _up_to_date(folder, module, needs, rebuilt):
            compiled[module] = _Compiled(True, 0.0, "compiled before")
        else:
            (folder / f"{module}.vo").unlink(missing_ok=True)
            compiled[module] = _compile(coqc, folder, module)
            rebuilt.add(module)
    forbidden = forbidden_commands(sources)
    good = [i for i in wanted if compiled[i].ok]
    assumptions, problem = _print_assumptions(coqc, folder, good) if good else ({}, "")
    verdicts = []
    for claim_id in ids:
        if claim_id not in formalised:
            verdicts.append(CoqVerdict(claim_id, "not formalised"))
            continue
        files = _closure([claim_id], sources, statement_needs)
        covers, leaves_out = proof_scope(claim_id, sources)
        seconds = sum(compiled[m].seconds for m in files)
        bad_files = {f: forbidden[f] for f in (f"{m}.v" for m in files) if f in forbidden}
        result = compiled[claim_id]
        if not result.ok:
            failing = next((m for m in files if not compiled[m].ok), claim_id)
            detail = f"{failing}.v: {compiled[failing].detail}"
            verdicts.append(
                CoqVerdict(
                    claim_id,
                    "failed",
                    detail=detail,
                    seconds=seconds,
                    files=tuple(f"{m}.v" for m in files),
                    covers=covers,
                    leaves_out=leaves_out,
                )
            )
            continue
        listed = tuple(assumptions.get(claim_id, ()))
        reasons = []
        if problem or claim_id not in assumptions:
            reasons.append(f"Print Assumptions failed: {problem}")
        if bad_files:
            reasons.append(f"forbidden commands: {bad_files}")
        if disallowed(listed):
            reasons.append(f"axioms outside the standard library: {disallowed(listed)}")
        hook = statement_hook(claim_id)
        verdicts.append(
            CoqVerdict(
                claim_id,
                "failed" if reasons else "kernel-checked",
                assumptions=listed,
                detail="; ".join(reasons) or (hook.coverage if hook is not None else ""),
                seconds=seconds,
                files=tuple(f"{m}.v" for m in files),
                covers=covers,
                leaves_out=leaves_out,
            )
        )
    return verdicts, {f"{m}.v": compiled[m] for m in sorted(rebuilt)}
