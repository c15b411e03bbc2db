"""The main job's theory section: every claim checked by sympy/z3 and, where Coq is
installed, by Coq's kernel; a certificate, the exported Coq project, two figures."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from softmax_dispersion.reproduce.section import Section

HEARTBEAT_SECONDS = 20.0
"""How often a long silent stage (Coq compiling) says it is still at work."""


def _progress(line: str) -> None:
    # Standard error, as the experiment's progress: standard output stays the report's.
    print(line, file=sys.stderr, flush=True)


@contextmanager
def _heartbeat(what: str, every: float = HEARTBEAT_SECONDS) -> Iterator[None]:
    """Say every ``every`` seconds that ``what`` is still running, until the block ends."""
    done = threading.Event()
    start = time.perf_counter()

    def beat() -> None:
        while not done.wait(every):
            _progress(f"  … {what} ({time.perf_counter() - start:.0f} s)")

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def section(out: Path) -> Section:
    """Check every claim (sympy/z3, and Coq where installed), write the certificate and
    the Coq project (``coq/``), plot the exported formulas.

    Each claim's verdict is reported as it is decided, and Coq's compilation says every
    :data:`HEARTBEAT_SECONDS` that it is still at work (standard error), so that the
    minutes this section takes are never silent.
    """
    from softmax_dispersion.theory import all_claims, check
    from softmax_dispersion.theory._result_text import coq_table, format_result, summary_table
    from softmax_dispersion.theory.coq_proofs import export_project, find_coqc, kernel_run
    from softmax_dispersion.theory.proof_certificate import build_certificate

    start = time.perf_counter()
    claims = all_claims()
    results = []
    for number, claim in enumerate(claims, 1):
        # One claim at a time, for the progress line; a claim it cites (T1 by T4–T6,
        # T8 by T9) is checked again, under a second.
        (result,) = check(claim.id)
        results.append(result)
        verdict = "verified" if result.verified else "NOT VERIFIED"
        _progress(f"  {claim.id} {verdict} ({result.seconds:.1f} s; {number}/{len(claims)})")
    certificate = build_certificate(results)
    (out / "certificate.json").write_text(json.dumps(certificate, indent=2) + "\n")
    export_project(out / "coq")
    if find_coqc() is not None:
        _progress("  compiling the Coq proofs and asking Coq what each theorem rests on …")
    with _heartbeat("Coq still compiling"):
        coq = kernel_run([r.claim.id for r in results])
    coq_failed = [v.claim_id for v in coq.verdicts if v.status == "failed"]
    figures = _theory_figures(out / "figures")
    verified = sum(r.verified for r in results)
    seconds = time.perf_counter() - start
    kernel = coq_table(results, coq)
    table = kernel + "\n\n" + summary_table(results, seconds)
    checked = sum(v.kernel_checked for v in coq.verdicts)
    derivations = "\n\n".join(format_result(r) for r in results)
    markdown = "\n".join(
        [
            "## Theory: machine-checked claims",
            "",
            "```text",
            summary_table(results, seconds),
            "```",
            "",
            *(f"![{name}](figures/{name})" for name in figures),
            "",
            "### Kernel-checked in Coq",
            "",
            "The formalised claims' statements, printed from the sympy claims, and their "
            "hand-written proofs are in `coq/` (build with `make -C coq`).",
            "",
            "```text",
            kernel,
            "```",
            "",
            "<details><summary>Every step of every proof</summary>",
            "",
            "```text",
            derivations,
            "```",
            "",
            "</details>",
        ]
    )
    return Section(
        name="theory",
        passed=verified == len(results) and not coq_failed,
        summary=f"{verified}/{len(results)} claims verified; {checked} kernel-checked by Coq"
        + (f" (FAILED: {', '.join(coq_failed)})" if coq_failed else ""),
        markdown=markdown,
        data={
            "claims": [
                {**r.to_dict(), "coq": v.to_dict()}
                for r, v in zip(results, coq.verdicts, strict=True)
            ],
            "tools": {**certificate["tools"], "coq": coq.coq_version or "not found"},
        },
        figures=figures,
        seconds=seconds,
        table=table,
    )


def _theory_figures(folder: Path) -> list[str]:
    """Plot the exported formulas; returns the file names (none without matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    folder.mkdir(exist_ok=True)
    import numpy as np
    import sympy as sp

    from softmax_dispersion.theory import Formula
    from softmax_dispersion.theory.adaptive_temperature import (
        adaptive_constants,
        adaptive_inverse_temperature,
    )
    from softmax_dispersion.theory.dispersion import dispersion_upper, paper_upper
    from softmax_dispersion.theory.dispersion_size import dispersion_size

    sizes = np.logspace(0, 7, 400)
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    for spread in (1.0, 3.0, 5.0, 10.0):
        line = ax.loglog(
            sizes, dispersion_upper.numpy(sizes, spread, 1.0), label=f"δ/θ = {spread:g}"
        )
        ax.loglog(
            sizes,
            np.minimum(paper_upper.numpy(sizes, spread, 1.0), 1.0),
            ":",
            color=line[0].get_color(),
        )
        n_star = float(dispersion_size.numpy(0.01, spread, 1.0))
        ax.plot([n_star], [0.01], "o", color=line[0].get_color())
    ax.axhline(0.01, color="grey", lw=0.8)

    # The formulas in the title are the checked ones, typeset (matplotlib's mathtext)
    # from their sympy expressions, with short fractions folded so exponents stay legible.
    def tex(formula: Formula) -> str:
        return str(sp.latex(formula.expr, fold_short_frac=True))

    ax.set(
        xlabel="n (number of logits)",
        ylabel="largest possible coefficient",
        title=(
            f"T1: ${tex(dispersion_upper)}$ (solid), T2: ${tex(paper_upper)}$ (dotted)\n"
            f"dots: T4's size $n^* = {tex(dispersion_size)}$ at $\\epsilon = 0.01$"
        ),
    )
    ax.legend(fontsize=8, loc="lower left")  # the curves leave that corner empty
    fig.tight_layout()
    fig.savefig(folder / "dispersion_bound.png", dpi=120)
    plt.close(fig)

    constants = adaptive_constants()
    entropies = np.linspace(0.0, 8.0, 800)
    beta = np.asarray(adaptive_inverse_temperature.numpy(entropies), dtype=float)
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    ax.plot(entropies, beta, label="β(H)")
    for edge in (constants.sharpening_starts, constants.sharpening_ends):
        ax.axvline(float(edge), color="grey", ls="--", lw=0.8)
    ax.plot(
        [float(constants.peak_entropy)],
        [float(constants.max_inverse_temperature)],
        "o",
        label=f"β_max ≈ {float(constants.max_inverse_temperature):.4f}",
    )
    ax.set(
        xlabel="entropy H (nats)",
        ylabel="inverse temperature β",
        title=(
            "T11: adaptive temperature sharpens only for "
            f"{float(constants.sharpening_starts):.3f} < H < {float(constants.sharpening_ends):.3f}"
        ),
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(folder / "adaptive_temperature.png", dpi=120)
    plt.close(fig)
    return ["dispersion_bound.png", "adaptive_temperature.png"]
