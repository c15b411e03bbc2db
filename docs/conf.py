"""Sphinx configuration for the softmax-dispersion documentation.

Build offline, with warnings as errors::

    sphinx-build -W --keep-going -b html docs docs/_build/html

The claim pages under ``theory/claims/`` are generated at build time by the local
extension ``_ext/claim_pages.py``, which checks every claim first and stops the build
if one does not verify; ``_ext/coq_pages.py`` prints the Coq statements and, where
``coqc`` is installed, compiles the Coq proofs and lists what they rest on.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path
from typing import Any

from softmax_dispersion.theory import all_claims

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "softmax-dispersion"
author = "softmax-dispersion developers"
copyright = "softmax-dispersion developers"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    # MathJax 3 shipped inside the build (_static/mathjax/), so that formulas render in
    # a browser without a network, from disk as on a web server.
    "sphinx-mathjax-offline",
    "numpydoc",
    "myst_parser",
    "claim_pages",
    "coq_pages",
    "command_output",
    "run_numbers",
    "formula_math",
    "matplotlib.sphinxext.plot_directive",
]

plot_include_source = False
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 110)]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
# The run folders hold reports included by empirical.md and pretrained.md, and
# theory/coq-generated/ the fragments included by theory/coq.md: not pages themselves.
exclude_patterns = [
    "_build",
    "Thumbs.db",
    ".DS_Store",
    "empirical-run",
    "empirical-run-bounded",
    "pretrained-run",
    "theory/coq-generated",
]

# Nothing is fetched at build time (no intersphinx, no remote images) and nothing when a
# page is viewed: MathJax comes with the build (sphinx-mathjax-offline, above).
myst_enable_extensions = ["deflist", "dollarmath", "substitution"]
# Counts and ranges of claims in the prose come from the registry, so that a new claim
# shows up there without an edit ({{ claim_range }} reads "T1–T12" with twelve claims).
_claim_ids = [claim.id for claim in all_claims()]
myst_substitutions = {"claim_range": f"{_claim_ids[0]}–{_claim_ids[-1]}"}
myst_heading_anchors = 3

autodoc_member_order = "bysource"
# The empirical layer's API pages need torch only to import it; without torch they are
# built from mocks.
if importlib.util.find_spec("torch") is None:
    autodoc_mock_imports = ["torch", "entmax"]
autodoc_typehints = "signature"
# Defaults as written in the source (``bounds=DISPERSION_BOUNDS``), not re-printed from the
# value, which for sympy objects drops parentheses and shows a different formula.
autodoc_preserve_defaults = True

python_maximum_signature_line_length = 88

numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

html_theme = "furo"
html_title = "softmax-dispersion"


def _show_default_factories(
    app: Any,
    what: str,
    name: str,
    obj: Any,
    options: Any,
    signature: str | None,
    return_annotation: str | None,
) -> tuple[str | None, str | None] | None:
    """Replace dataclasses' ``<factory>`` defaults by the value the factory makes.

    ``<factory>`` is not Python, so Sphinx cannot parse such a signature and would show
    it as raw text.
    """
    if what != "class" or not signature or "<factory>" not in signature:
        return None
    if not dataclasses.is_dataclass(obj):
        return None
    for field in dataclasses.fields(obj):
        if field.default_factory is not dataclasses.MISSING:
            signature = signature.replace("<factory>", repr(field.default_factory()), 1)
    return signature.replace("<factory>", "..."), return_annotation


def setup(app: Any) -> None:
    app.connect("autodoc-process-signature", _show_default_factories)
