"""The browser check of the built docs (docs/check_pages.py) fails on planted faults.

Each fault a reader could meet is planted in a small site of its own page: raw TeX in
the text, in the title and in dollar math, a MathJax error, an undefined macro, math with
no MathJax, a broken link, a missing anchor, a missing image, a request to the network and
a script error. The check must name every one and pass the clean pages beside them (code
blocks with ``$`` and ``\\frac``, hidden text, rendered math). The browser tests need
Debian's chromium and are skipped, saying so, without it; the MathJax tests also need
sphinx-mathjax-offline (the ``docs`` extra), whose MathJax they load from disk.
"""

from __future__ import annotations

import base64
import importlib.util
import os
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _load_check_pages() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_pages", DOCS / "check_pages.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_pages"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


check_pages = _load_check_pages()
BROWSER = check_pages.find_browser()
needs_browser = pytest.mark.skipif(BROWSER is None, reason="chromium not installed")


def _mathjax_folder() -> Path | None:
    spec = importlib.util.find_spec("sphinx-mathjax-offline")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "static" / "mathjax"


MATHJAX = _mathjax_folder()
needs_mathjax = pytest.mark.skipif(MATHJAX is None, reason="sphinx-mathjax-offline not installed")

# A 1×1 PNG, so that the clean page has an image that loads.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)

CLEAN = """
<h1 id="top">Clean</h1>
<p>Every coefficient lies between 1/(1+(n−1)c) and c/(c+n−1), c = exp(δ/θ) ≥ 1.</p>
<pre>$ softmax-dispersion prove T1
\\frac{1}{n} in a code block is code</pre>
<p><code>$HOME and e^{x}</code> inline code is code too</p>
<p style="display: none">\\frac{hidden}{text}</p>
<p><a href="other.html#there">a link</a>, <a href="#top">an anchor here</a>,
<a href="https://example.org/">the web, not checked offline</a></p>
<img src="pixel.png" alt="a pixel">
"""

PLANTED: dict[str, tuple[str, str]] = {
    # page: (body, the problem the check must report)
    "raw_frac.html": ("<p>The bound is \\frac{1}{n} for large n.</p>", "shows raw TeX"),
    "raw_begin.html": ("<p>\\begin{align}p_k \\le 1\\end{align}</p>", "shows raw TeX"),
    "dollar.html": ("<p>So $p_k \\le 1$ always.</p>", "shows raw TeX"),
    "braces.html": ("<p>the paper's form e^{−δ/θ}/n</p>", "shows raw TeX"),
    "delimiters.html": ('<p><span class="math">\\(x\\)</span></p>', "MathJax did not run"),
    "broken_link.html": ('<p><a href="missing.html">gone</a></p>', "broken link"),
    "broken_anchor.html": ('<p><a href="other.html#nowhere">gone</a></p>', "no such anchor"),
    "missing_image.html": ('<img src="missing.png" alt="gone">', "image does not load"),
    "network.html": ('<script src="https://cdn.example.org/mathjax.js"></script>', "network"),
    "script_error.html": ('<script>throw new Error("planted")</script>', "script error"),
}


def _page(body: str, title: str = "A page", head: str = "") -> str:
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{title}</title>{head}'
        f"</head><body>{body}</body></html>"
    )


@pytest.fixture(scope="module")
def planted_site(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A site of clean and planted pages, checked once in the browser."""
    site = tmp_path_factory.mktemp("site")
    (site / "pixel.png").write_bytes(PIXEL)
    (site / "index.html").write_text(_page(CLEAN))
    (site / "other.html").write_text(_page('<h2 id="there">There</h2>'))
    (site / "raw_title.html").write_text(_page("<p>fine</p>", title="T2: e^{−δ/θ}/n"))
    for name, (body, _) in PLANTED.items():
        (site / name).write_text(_page(body))
    assert BROWSER is not None
    reports = check_pages.check_site(site, BROWSER)
    return {report.page: report for report in reports}


@needs_browser
def test_clean_pages_pass(planted_site: dict[str, Any]) -> None:
    assert planted_site["index.html"].problems == []
    assert planted_site["other.html"].problems == []


@needs_browser
def test_the_browser_starts_with_no_python_code_between_fork_and_exec(tmp_path: Path) -> None:
    # Python run in a forked child (a preexec_fn) is unsafe in a threaded process: with jax
    # imported, its at-fork warning failed these tests.  Without one, no at-fork hook runs.
    forks: list[int] = []
    os.register_at_fork(before=lambda: forks.append(1))
    (tmp_path / "index.html").write_text(_page(CLEAN))
    (tmp_path / "other.html").write_text(_page('<h2 id="there">There</h2>'))
    (tmp_path / "pixel.png").write_bytes(PIXEL)
    assert BROWSER is not None
    before = len(forks)
    reports = check_pages.check_site(tmp_path, BROWSER)
    assert [report.problems for report in reports] == [[], []]
    assert len(forks) == before


@needs_browser
@pytest.mark.parametrize("page", sorted(PLANTED))
def test_each_planted_fault_fails_its_page(planted_site: dict[str, Any], page: str) -> None:
    problems = planted_site[page].problems
    expected = PLANTED[page][1]
    assert any(expected in problem for problem in problems), problems


@needs_browser
def test_raw_tex_in_the_title_fails(planted_site: dict[str, Any]) -> None:
    assert planted_site["raw_title.html"].problems == ["shows raw TeX: 'T2: e^{−δ/θ}/n'"]


@needs_browser
def test_the_command_line_fails_on_a_planted_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "index.html").write_text(_page("<p>Clean.</p>"))
    assert check_pages.main([str(tmp_path), "--require-browser"]) == 0
    (tmp_path / "formula.html").write_text(_page("<p>p = \\frac{1}{n}</p>"))
    assert check_pages.main([str(tmp_path)]) == 1
    printed = capsys.readouterr().out
    assert "formula.html: shows raw TeX: 'p = \\\\frac{1}{n}'" in printed
    assert "1 of 2 pages pass" in printed


def test_without_chromium_the_check_says_so_and_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "index.html").write_text(_page("<p>p = \\frac{1}{n}</p>"))
    monkeypatch.setenv("CHROMIUM", "no-such-browser")
    assert check_pages.main([str(tmp_path)]) == 0
    assert "Chromium not found" in capsys.readouterr().err
    assert check_pages.main([str(tmp_path), "--require-browser"]) == 2


def test_a_folder_without_a_site_is_bad_usage(tmp_path: Path) -> None:
    assert check_pages.main([str(tmp_path)]) == 2


def test_raw_tex_patterns() -> None:
    assert check_pages.raw_tex(["\\frac{1}{n}", "\\begin{align}", "\\(x\\)", "$x$", "e^{x}"])
    assert len(check_pages.raw_tex(["γ_{n−1}", "\\left(", "\\[x\\]"])) == 3
    plain = ["1/(1+(n−1)c)", "exp(−δ/θ)/n ≤ p_k ≤ exp(δ/θ)/n", "nˢᴹ", "10¹⁸", "p_max", "a^b"]
    assert check_pages.raw_tex(plain) == []


@needs_browser
@needs_mathjax
def test_mathjax_from_disk_renders_and_its_errors_fail(tmp_path: Path) -> None:
    assert MATHJAX is not None
    shutil.copytree(MATHJAX, tmp_path / "mathjax")
    script = '<script defer src="mathjax/tex-chtml.js"></script>'
    pages = {
        "index.html": r'<p><span class="math">\(\frac{1}{(n-1)c + 1} \le p_k\)</span></p>',
        "merror.html": r'<p><span class="math">\(\frac{1}\)</span></p>',
        "undefined.html": r'<p><span class="math">\(\notamacro{x}\)</span></p>',
    }
    for name, body in pages.items():
        (tmp_path / name).write_text(_page(body, head=script))
    assert BROWSER is not None
    reports = {r.page: r for r in check_pages.check_site(tmp_path, BROWSER, pages=list(pages))}
    assert reports["index.html"].problems == []
    assert reports["index.html"].math_elements == 1
    assert any("MathJax error" in p for p in reports["merror.html"].problems)
    assert any("undefined control sequence" in p for p in reports["undefined.html"].problems)


@needs_browser
@needs_mathjax
def test_a_sphinx_build_with_a_planted_raw_formula_fails(tmp_path: Path) -> None:
    """The whole chain: Sphinx with the shipped MathJax, then the check, offline."""
    pytest.importorskip("sphinx")
    source, html = tmp_path / "source", tmp_path / "html"
    source.mkdir()
    (source / "conf.py").write_text(
        'extensions = ["sphinx.ext.mathjax", "sphinx-mathjax-offline"]\nproject = "planted"\n'
    )
    (source / "index.rst").write_text(
        "Planted\n=======\n\n"
        "Rendered: :math:`\\frac{1}{n}`.\n\n"
        ".. math:: p_k \\le \\frac{e^{\\delta/\\theta}}{n}\n\n"
        ".. toctree::\n\n   raw\n"
    )
    (source / "raw.rst").write_text(
        "Raw\n===\n\nRendered :math:`n` beside a raw formula: \\\\frac{1}{n}.\n"
    )
    from sphinx.cmd.build import build_main

    assert build_main(["-q", "-W", "-b", "html", str(source), str(html)]) == 0
    assert BROWSER is not None
    reports = {r.page: r for r in check_pages.check_site(html, BROWSER)}
    assert reports["index.html"].problems == []
    assert reports["index.html"].math_elements == 2
    assert reports["raw.html"].problems == [
        "shows raw TeX: 'beside a raw formula: \\\\frac{1}{n}.'"
    ]


@needs_browser
def test_screenshots_are_kept_and_a_missing_page_for_one_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site, shots = tmp_path / "site", tmp_path / "shots"
    site.mkdir()
    (site / "index.html").write_text(_page("<p>Landing.</p>"))
    assert check_pages.main([str(site), "--screenshots", str(shots)]) == 1
    assert "theory/claims/T1.html: not in the site" in capsys.readouterr().out
    assert (shots / "landing.png").read_bytes().startswith(b"\x89PNG")
    (site / "theory" / "claims").mkdir(parents=True)
    (site / "theory" / "claims" / "T1.html").write_text(_page("<p>T1.</p>"))
    assert check_pages.main([str(site), "--screenshots", str(shots)]) == 0
    assert (shots / "T1.png").read_bytes().startswith(b"\x89PNG")
