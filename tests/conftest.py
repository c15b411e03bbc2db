"""The test suite's one hypothesis profile, and its slow tests.

Tests marked ``slow`` (they train models, compile the Coq proofs or run the main job:
minutes each) are deselected unless ``--run-slow`` is given; CI gives it, in a step of
its own after the README's test command.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

# Exact and certified arithmetic has long-tailed run times (a precision ladder may climb),
# so no per-example deadline; each test sets how many examples it draws.
settings.register_profile(
    "softmax-dispersion",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.load_profile("softmax-dispersion")

RUN_SLOW = "--run-slow"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        RUN_SLOW,
        action="store_true",
        help="also run the tests marked slow (they train models, compile the Coq proofs "
        "or run the main job; CI runs them)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Deselected, not skipped: -ra would list every one of them.
    if config.getoption(RUN_SLOW):
        return
    slow = [item for item in items if "slow" in item.keywords]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if "slow" not in item.keywords]


def pytest_report_header(config: pytest.Config) -> str:
    # In the header: under xdist the deselection happens in the workers, unseen.
    if config.getoption(RUN_SLOW):
        return "slow tests: run (--run-slow)"
    return f"slow tests: deselected (training, Coq, the main job); {RUN_SLOW} runs them"
