"""Generate one documentation page per theory claim, after checking every claim.

At ``builder-inited`` this extension imports :mod:`softmax_dispersion.theory`, checks
every claim returned by ``all_claims()`` (sharing one cache, so a cited claim is
checked once) and writes MyST pages into ``theory/claims/``:

* ``<ID>.md`` for each claim: title, source, statement, assumptions, the proof step by
  step with each step's method, conclusion, verdict and time, the claim's verdict, the
  formulas it exports and how to re-run the check;
* ``index.md``: a table of all claims and the toctree that links them.

The folder is generated (and git-ignored).  If any claim fails to verify, the build
stops with an error naming the claim and the failing steps: the documentation never
shows an unverified claim as a theorem.
"""

from __future__ import annotations

import platform
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

OUTPUT_FOLDER = Path("theory") / "claims"
"""Where the pages go, relative to the Sphinx source folder."""

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]{}<>#|$~!])")

_SUPERSCRIPTS = dict(zip("0123456789+−-=()nistMδθ", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ⁿⁱˢᵗᴹᵟᶿ", strict=True))
_SUBSCRIPTS = dict(zip("0123456789+−-=()aeijklmnrstu", "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑᵢⱼₖₗₘₙᵣₛₜᵤ", strict=True))
_BRACED = re.compile(r"(\w)([\^_])\{([^{}]*)\}")
_RELATIONS = (("<=", "≤"), (">=", "≥"), ("!=", "≠"), ("->", "→"))


def _unbrace(match: re.Match[str]) -> str:
    base, mark, inner = match.groups()
    table = _SUPERSCRIPTS if mark == "^" else _SUBSCRIPTS
    if all(char in table for char in inner):
        return base + "".join(table[char] for char in inner)
    if base == "e" and mark == "^":
        return f"exp({inner})"
    return f"{base}{mark}({inner})"


def plain_text(text: str) -> str:
    """A claim's text in plain Unicode: no TeX braces, relations as symbols.

    Titles and step descriptions are written for a terminal; on a page (and in its
    sidebar entry) ``e^{−δ/θ}`` and ``<=`` read as leftovers of TeX.  A braced
    super- or subscript becomes Unicode where every character has a raised or lowered
    form, an exponential ``exp(…)``, and anything else a parenthesised ``^(…)``/``_(…)``.

    >>> plain_text("the paper's form e^{−δ/θ}/n <= p_k <= e^{δ/θ}/n")
    "the paper's form exp(−δ/θ)/n ≤ p_k ≤ exp(δ/θ)/n"
    >>> plain_text("exp(s log n · M) = n^{sM}; γ_{n−1}; γ_{⌈log2 n⌉}")
    'exp(s log n · M) = nˢᴹ; γₙ₋₁; γ_(⌈log2 n⌉)'
    """
    for ascii_form, symbol in _RELATIONS:
        text = text.replace(ascii_form, symbol)
    return _BRACED.sub(_unbrace, text)


def escape(text: str) -> str:
    """Plain Unicode (:func:`plain_text`), escaped so that MyST shows it literally."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(plain_text(text).split()))


def display_math(latex: str | Sequence[str], indent: str = "") -> list[str]:
    """A ```{math} block; several formulas become separate lines of one display."""
    parts = [latex] if isinstance(latex, str) else list(latex)
    lines = [f"{indent}```{{math}}"]
    for number, part in enumerate(parts):
        if number:
            lines.append("")
        lines.append(f"{indent}{part}")
    lines.append(f"{indent}```")
    return lines


def _a_letter(word: str) -> bool:
    """Whether sympy prints ``word`` as one letter: a letter or a Greek name, with any
    accents it names (``Ydot``: a dotted Y)."""
    from sympy.printing.latex import greek_letters_set, modifier_dict, other_symbols

    if len(word) == 1 or word.lower() in greek_letters_set | {"lamda"} or word in other_symbols:
        return True
    return any(
        word.lower().endswith(key) and len(word) > len(key) and _a_letter(word[: -len(key)])
        for key in modifier_dict
    )


def _name_part(text: str, font: str) -> str:
    """One part of a symbol's name: a letter as sympy prints it (:func:`_a_letter`), any
    other word (``norm``, ``max``) in ``font`` as one word, not as a product of letters.

    sympy reads the endings of other words as accents too ("typical" ends in "cal" and
    would print as ``\\mathcal{typi}``); here they stay words.
    """
    import sympy as sp

    words = [
        sp.latex(sp.Symbol(word)) if _a_letter(word) else f"\\{font}{{{word}}}"
        for word in text.split()
    ]
    return r"\ ".join(words)


def symbol_latex(name: str) -> str:
    r"""The LaTeX of a symbol's name, with words set as words.

    sympy prints ``norm_Kx i`` as ``norm_{Kx i}``, which TeX sets as the product of four
    letters with the space dropped; here a word of the base is italic and a word of a
    sub- or superscript upright, and spaces are kept.

    >>> symbol_latex("norm_attention out"), symbol_latex("p_max"), symbol_latex("sigma_q")
    ('\\mathit{norm}_{\\mathrm{attention}\\ \\mathrm{out}}', 'p_{\\mathrm{max}}', '\\sigma_{q}')
    """
    from sympy.printing.conventions import split_super_sub

    if "{" in name or "\\" in name:  # already TeX: leave it to sympy
        import sympy as sp

        return str(sp.latex(sp.Symbol(name)))
    base, supers, subs = split_super_sub(name)
    latex = _name_part(base, "mathit")
    if supers:
        latex += "^{" + r"\ ".join(_name_part(s, "mathrm") for s in supers) + "}"
    if subs:
        latex += "_{" + r"\ ".join(_name_part(s, "mathrm") for s in subs) + "}"
    return latex


def tex(expr: Any) -> str:
    """``sympy.latex`` of an expression, its symbols' names set by :func:`symbol_latex`."""
    import sympy as sp

    expr = sp.sympify(expr)
    names = {s: symbol_latex(s.name) for s in expr.atoms(sp.Symbol)}
    return str(sp.latex(expr, symbol_names=names))


_RELATION_LATEX = {"==": "=", "<=": r"\leq", ">=": r"\geq", "<": "<", ">": ">", "!=": r"\neq"}


def conjuncts_latex(statement: Any) -> list[str]:
    """The LaTeX of a statement, one entry per conjunct of a top-level ``And``.

    With several conjuncts, each entry carries one alignment mark ``&``, before a
    relation's sign, so that their display lines up on the relations.
    """
    import sympy as sp

    parts = statement.args if isinstance(statement, sp.And) else (statement,)
    if len(parts) == 1:
        return [tex(statement)]
    lines = []
    for part in parts:
        if isinstance(part, sp.core.relational.Relational):
            sign = _RELATION_LATEX[part.rel_op]
            lines.append(f"{tex(part.lhs)} &{sign} {tex(part.rhs)}")
        else:
            lines.append(f"&{tex(part)}")
    return lines


def _inline(latex: str) -> str:
    return f"{{math}}`{latex}`"


def definition_lines(definitions: Sequence[Any]) -> list[str]:
    """The bullet list of a claim's recorded definitions: families first, then each symbol.

    Every symbol a statement or step uses beyond the claim's parameters (the sum ``S``
    of the other exponentials, a root, an abbreviation) is one of these, so the page
    defines it from the claim's own record, never from retyped text.
    """

    from softmax_dispersion.theory.definitions import Let, RealRoot, SumOver

    families = []
    for definition in definitions:
        if isinstance(definition, SumOver) and definition.family not in families:
            families.append(definition.family)
    lines = []
    for family in families:
        members = ", ".join(tex(index) for index in family.index)
        if len(family.index) > 1:
            members = f"({members})"
        member_of = members + r" \in \text{" + family.name + "}"
        domain = r",\ ".join(tex(relation) for relation in family.domain)
        where = f", each with {_inline(domain)}" if domain else ""
        lines.append(
            f"- {_inline(member_of)}: {escape(family.description.rstrip('.'))} "
            f"({_inline(tex(family.count))} terms{where})."
        )
    for definition in definitions:
        symbol = tex(definition.symbol)
        if isinstance(definition, SumOver):
            family = definition.family
            index = ", ".join(tex(i) for i in family.index)
            over = r"\sum_{" + index + r" \in \text{" + family.name + "}}"
            shown = _inline(f"{symbol} = {over} {tex(definition.term)}")
        elif isinstance(definition, Let):
            shown = _inline(f"{symbol} = {tex(definition.expression)}")
        elif isinstance(definition, RealRoot):
            ends = f"{tex(definition.lower)}, {tex(definition.upper)}"
            shown = (
                f"{_inline(symbol)}, the one real root in {_inline(f'({ends})')} of "
                f"{_inline(tex(definition.equation))}"
            )
        else:  # a kind of definition this page does not know: fail the build loudly
            raise ExtensionError(f"cannot show a {type(definition).__name__} definition")
        lines.append(f"- {shown}: {escape(definition.description.rstrip('.'))}.")
    return lines


def parameters(claim: Any, conclusions: Sequence[Any]) -> list[str]:
    """The LaTeX of every symbol and function the page shows that no definition defines.

    These are the claim's parameters: it holds for all their real values that satisfy
    its assumptions.  With the definitions, they account for every symbol on the page.
    """
    import sympy as sp
    from sympy.core.function import AppliedUndef

    defined: set[Any] = set()
    for definition in claim.definitions:
        symbol = definition.symbol
        defined.add(symbol.func if isinstance(symbol, AppliedUndef) else symbol)
        family = getattr(definition, "family", None)
        if family is not None:
            defined.update(family.index)
    shown = [claim.statement, *claim.assumptions, *conclusions]
    symbols = {s for expr in shown for s in expr.free_symbols} - defined
    functions: dict[Any, Any] = {}
    for expr in shown:
        for applied in sorted(expr.atoms(AppliedUndef), key=sp.default_sort_key):
            if applied.func not in defined:
                functions.setdefault(applied.func, applied)
    found = sorted(symbols, key=sp.default_sort_key)
    found += sorted(functions.values(), key=sp.default_sort_key)
    return [tex(item) for item in found]


def _versions() -> str:
    import sympy as sp

    try:
        import z3

        z3_version = z3.get_version_string()
    except Exception:  # pragma: no cover - z3 is a hard dependency of the theory layer
        z3_version = "unavailable"
    return f"sympy {sp.__version__}, z3 {z3_version}, Python {platform.python_version()}"


def claim_page(result: Any, formulas: dict[str, Any], versions: str) -> str:
    """The MyST page of one verified claim."""

    claim = result.claim
    module = claim.proof.__module__
    # ``proof()`` builds fresh step objects; their conclusions are sympy objects,
    # which print as LaTeX (the results keep only a plain-text form).
    steps = list(claim.proof())
    if len(steps) != len(result.steps):
        raise ExtensionError(
            f"claim {claim.id}: proof() returned {len(steps)} steps on a second call but "
            f"the check recorded {len(result.steps)}; a proof must be deterministic"
        )
    lines = [
        "<!-- Generated by docs/_ext/claim_pages.py at build time; do not edit. -->",
        "",
        f"# {claim.id}: {escape(claim.title)}",
        "",
        f"**Source:** {escape(claim.source)}",
        "",
        f"**Verdict:** verified, all {len(result.steps)} steps decided "
        f"in {result.seconds:.3f} s ({escape(versions)}).",
        "",
        "## Statement",
        "",
    ]
    statement = conjuncts_latex(claim.statement)
    if len(statement) > 1:
        lines += ["All of the following hold:", ""]
    lines += [*display_math(statement), ""]

    if claim.definitions:
        lines += [
            "## Definitions",
            "",
            "Part of the claim, checked by the kernel before any step (each a fresh "
            "symbol, defined once, before it is used); their defining equations are among "
            "the facts the steps may use.",
            "",
            *definition_lines(claim.definitions),
            "",
        ]

    lines += ["## Assumptions", ""]
    free = parameters(claim, [step.conclusion for step in steps])
    if free:
        # one formula per symbol, so that a long list wraps (inline math does not)
        values = f"The claim holds for all real values of {', '.join(map(_inline, free))}"
        lines += [values + (" that satisfy:" if claim.assumptions else "."), ""]
    if claim.assumptions:
        lines += [f"- {{math}}`{tex(a)}`" for a in claim.assumptions]
    else:
        lines.append("None.")
    lines.append("")
    if result.witness:
        lines += [f"**Not vacuous:** {escape(result.witness)}.", ""]
    if claim.cites:
        cited = ", ".join(f"{{doc}}`{c.id}`" for c in claim.cites)
        lines += [f"The proof also uses the statements of {cited}, checked first.", ""]

    lines += [
        "## Proof",
        "",
        "Each step is decided by the named method; only then is its conclusion added to "
        "the facts that later steps may use.",
        "",
    ]
    for number, (step, outcome) in enumerate(zip(steps, result.steps, strict=True), 1):
        lines += [
            f"{number}. {escape(outcome.description)}",
            "",
            f"   *Method:* `{outcome.method}`. "
            f"*Verdict:* verified in {outcome.seconds:.3f} s ({escape(outcome.detail)}).",
            "",
            "   Shows:",
            "",
            *display_math(conjuncts_latex(step.conclusion), indent="   "),
            "",
        ]
    lines += [
        "The last step concludes the statement, so the claim is verified.",
        "",
    ]

    lines += ["## Exported formulas", ""]
    if claim.formulas:
        for name in claim.formulas:
            if name not in formulas:
                raise ExtensionError(
                    f"claim {claim.id} names formula {name!r}, which is not in FORMULAS"
                )
            formula = formulas[name]
            args = ", ".join(tex(arg) for arg in formula.args)
            lines += [
                f"- `{name}({', '.join(str(a) for a in formula.args)})`: "
                f"{escape(formula.description)}",
                "",
                *display_math(
                    rf"\texttt{{{name}}}({args}) = {formula.latex}",
                    indent="  ",
                ),
                "",
            ]
    else:
        lines += ["None.", ""]

    lines += [
        "## Re-run the check",
        "",
        "```console",
        f"$ python -m {module}",
        f"$ softmax-dispersion prove {claim.id}",
        "```",
        "",
    ]
    return "\n".join(lines)


def index_page(results: Sequence[Any], seconds: float) -> str:
    """The table of all claims and the toctree of their pages."""
    lines = [
        "<!-- Generated by docs/_ext/claim_pages.py at build time; do not edit. -->",
        "",
        "# Claims",
        "",
        f"Every claim below was checked while this documentation was built "
        f"({len(results)} claims, {seconds:.2f} s in all); the build stops if one fails.",
        "",
        "| Claim | Title | Verified | Seconds |",
        "| --- | --- | --- | ---: |",
    ]
    for result in results:
        claim = result.claim
        verdict = "yes" if result.verified else "**no**"
        lines.append(
            f"| {{doc}}`{claim.id} <{claim.id}>` | {escape(claim.title)} "
            f"| {verdict} | {result.seconds:.3f} |"
        )
    lines += ["", "```{toctree}", ":hidden:", ":maxdepth: 1", ""]
    lines += [result.claim.id for result in results]
    lines += ["```", ""]
    return "\n".join(lines)


def failure_report(failed: Sequence[Any]) -> str:
    """A readable account of the claims that did not verify."""
    lines = [f"{len(failed)} claim(s) did not verify; refusing to document them as theorems:"]
    for result in failed:
        claim = result.claim
        lines.append(f"  {claim.id} ({claim.title}): {result.problem or 'not verified'}")
        for number, step in enumerate(result.steps, 1):
            if not step.verified:
                lines.append(f"    step {number} [{step.method}] {step.description}: {step.detail}")
    lines.append("Re-run with: softmax-dispersion prove <ID>")
    return "\n".join(lines)


def _write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def generate_claim_pages(app: Sphinx) -> None:
    """Check every claim and write the claim pages (the ``builder-inited`` hook)."""
    try:
        from softmax_dispersion import theory
    except Exception as error:
        raise ExtensionError(f"cannot import softmax_dispersion.theory: {error}") from error

    start = time.perf_counter()
    claims = theory.all_claims()
    if not claims:
        raise ExtensionError("softmax_dispersion.theory.all_claims() returned no claims")
    cache: dict[str, Any] = {}
    results = []
    for claim in claims:
        logger.info(f"[claim_pages] checking {claim.id} ...", nonl=True)
        result = claim.check(cache)
        logger.info(f" {'verified' if result.verified else 'FAILED'} ({result.seconds:.2f} s)")
        results.append(result)
    seconds = time.perf_counter() - start

    folder = Path(app.srcdir) / OUTPUT_FOLDER
    failed = [r for r in results if not r.verified]
    if failed:
        for result in failed:  # never leave an old page of a claim that now fails
            (folder / f"{result.claim.id}.md").unlink(missing_ok=True)
        raise ExtensionError(failure_report(failed))

    folder.mkdir(parents=True, exist_ok=True)
    versions = _versions()
    pages = {f"{r.claim.id}.md": claim_page(r, theory.FORMULAS, versions) for r in results}
    pages["index.md"] = index_page(results, seconds)
    for stale in folder.glob("*.md"):
        if stale.name not in pages:
            stale.unlink()
    for name, text in pages.items():
        _write_if_changed(folder / name, text)
    logger.info(f"[claim_pages] {len(results)} claims verified in {seconds:.2f} s")


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the generator."""
    app.connect("builder-inited", generate_claim_pages)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
