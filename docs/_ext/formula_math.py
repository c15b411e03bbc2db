"""A ``formula-math`` directive: display math built from the theory's exported formulas.

A formula shown in prose is the theory's own expression, never a retyped copy::

    ```{formula-math}
    {{dispersion_lower}} \\le p_k \\le {{dispersion_upper}}
    ```

Each ``{{name}}`` is replaced by the LaTeX of ``softmax_dispersion.theory.FORMULAS[name]``;
an unknown name fails the build.
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective

PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")


def fill(latex: str, formulas: dict[str, Any]) -> str:
    """``latex`` with every ``{{name}}`` replaced by that formula's LaTeX, braced."""

    def formula(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in formulas:
            raise ExtensionError(f"formula-math: {name!r} is not in theory.FORMULAS")
        return "{" + formulas[name].latex + "}"

    return PLACEHOLDER.sub(formula, latex)


class FormulaMath(SphinxDirective):
    """Display math whose ``{{name}}`` placeholders are exported formulas."""

    has_content = True

    def run(self) -> list[nodes.Node]:
        from softmax_dispersion.theory import FORMULAS

        latex = fill("\n".join(self.content), FORMULAS)
        node = nodes.math_block(latex, latex, nowrap=False, number=None, docname=self.env.docname)
        self.set_source_info(node)
        return [node]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("formula-math", FormulaMath)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
