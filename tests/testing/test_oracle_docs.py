"""The Oracle page's interactive examples print what the page says."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "oracle.md"


def test_the_oracle_page_examples_hold() -> None:
    blocks = [b for b in re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S) if ">>>" in b]
    assert len(blocks) >= 2
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for number, block in enumerate(blocks):
        runner.run(parser.get_doctest(block, {}, f"oracle.md block {number}", str(PAGE), 0))
    result = runner.summarize(verbose=False)
    assert result.failed == 0 and result.attempted >= 5
