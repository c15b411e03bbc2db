"""The Python examples of the theory pages that assert something run, and hold.

(An example that only prints, such as checking every claim, is left to the claim tests.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGES = sorted((Path(__file__).parents[2] / "docs" / "theory").glob("*.md"))
_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)
EXAMPLES = [
    (page.name, number, code)
    for page in PAGES
    for number, code in enumerate(_BLOCK.findall(page.read_text(encoding="utf-8")), 1)
    if "assert " in code
]


def test_the_theory_pages_have_examples() -> None:
    assert {name for name, _, _ in EXAMPLES} >= {"kernel.md", "trust.md"}


@pytest.mark.parametrize(
    ("page", "number", "code"), EXAMPLES, ids=[f"{p}-{n}" for p, n, _ in EXAMPLES]
)
def test_example_runs(page: str, number: int, code: str) -> None:
    exec(compile(code, f"{page} example {number}", "exec"), {"__name__": "docs_example"})
