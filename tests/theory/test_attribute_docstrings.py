"""Formulas and claims are instances, so their docs are the string after the assignment.

Those strings are what Sphinx shows; their examples must run, and the exports of the
modules that document their formulas this way must carry Notes and Examples.
"""

from __future__ import annotations

import ast
import doctest
import itertools
from importlib import import_module
from pathlib import Path
from types import ModuleType

import pytest

from softmax_dispersion.theory import CLAIM_MODULES

DOCUMENTED_EXPORTS = {"entropy": set(), "rounding_error": {"T12"}}
"""Claim modules whose exports (but the ones named) have docs with Notes and Examples."""


def attribute_docstrings(module: ModuleType) -> dict[str, str]:
    """The string literal after each module-level assignment (Sphinx's attribute docs)."""
    tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node, following in itertools.pairwise(tree.body):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            found[node.targets[0].id] = following.value.value
    return found


def _module(name: str) -> ModuleType:
    return import_module(f"softmax_dispersion.theory.{name}")


EXAMPLES = [
    (name, attribute)
    for name in CLAIM_MODULES
    for attribute, doc in attribute_docstrings(_module(name)).items()
    if ">>> " in doc
]


@pytest.mark.parametrize(("module_name", "attribute"), EXAMPLES)
def test_attribute_docstring_examples_run(module_name: str, attribute: str) -> None:
    module = _module(module_name)
    doc = attribute_docstrings(module)[attribute]
    test = doctest.DocTestParser().get_doctest(doc, {}, attribute, str(module.__file__), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


@pytest.mark.parametrize(
    ("module_name", "attribute"),
    [
        (name, attribute)
        for name, excluded in DOCUMENTED_EXPORTS.items()
        for attribute in _module(name).__all__
        if attribute not in excluded
    ],
)
def test_exports_have_notes_and_examples(module_name: str, attribute: str) -> None:
    module = _module(module_name)
    obj = getattr(module, attribute)
    doc = obj.__doc__ if isinstance(obj, type) else attribute_docstrings(module)[attribute]
    assert doc is not None
    assert "Notes\n" in doc and "Examples\n" in doc and ">>> " in doc
