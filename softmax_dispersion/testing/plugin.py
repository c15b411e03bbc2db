"""A pytest plugin: the ``softmax_oracle`` fixture and marker.

Installed with the package (entry point ``pytest11``), so any project can check its
softmax in three lines::

    def test_my_softmax(softmax_oracle):
        softmax_oracle.check(my_softmax)

The marker sets the fixture's defaults for a test::

    @pytest.mark.softmax_oracle(kind="log_softmax", library="torch", dtypes=["float32"])
    def test_my_log_softmax(softmax_oracle):
        softmax_oracle.check(my_log_softmax)

    @pytest.mark.softmax_oracle(kind="masked_softmax", tolerance="strict",
                                policies={"fully masked row": "zeros"})
    def test_my_attention_softmax(softmax_oracle):
        softmax_oracle.check(my_masked_softmax)  # called as fn(x, mask)

Importing the plugin is cheap, as it must be in every pytest session of every project
that has the package installed: it imports neither numpy nor the oracle; they load when
a test first uses the fixture.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from softmax_dispersion.testing import AttentionReference, Reference, Report, VJPReference

__all__ = ["MARKER_ARGUMENTS", "SoftmaxOracle", "pytest_configure", "softmax_oracle"]

MARKER_ARGUMENTS = (
    "kind",
    "library",
    "dtypes",
    "s",
    "suites",
    "seed",
    "tolerance",
    "policies",
)
"""The keyword arguments of the ``softmax_oracle`` marker (defaults of ``check``)."""


class SoftmaxOracle:
    """The fixture's object: the oracle with the marker's arguments as defaults.

    Parameters
    ----------
    defaults
        Keyword arguments of :func:`~softmax_dispersion.testing.check_softmax` used when a
        call does not give them (from the ``softmax_oracle`` marker).
    folder
        Called on a failure only: the folder long worst inputs are written to (the
        fixture's is the test's ``tmp_path``); ``None``: nothing is written.
    verbose
        Every dtype of a failing property in full (the fixture: pytest's ``-v``).
    """

    def __init__(
        self,
        defaults: Mapping[str, Any] | None = None,
        folder: Callable[[], Path] | None = None,
        verbose: bool = False,
    ) -> None:
        self.defaults: dict[str, Any] = dict(defaults or {})
        self.folder, self.verbose = folder, verbose

    def check(self, fn: Callable[..., Any], **kwargs: Any) -> Report:
        """Run the battery on ``fn`` and fail the test if any property fails.

        Parameters
        ----------
        fn
            The softmax under test: ``fn(x)`` with ``x`` a row or batch of logits.
        **kwargs
            Arguments of :func:`~softmax_dispersion.testing.check_softmax`; they override
            the marker's.

        Returns
        -------
        Report
            The report, when every property held.

        Raises
        ------
        AssertionError
            Naming the failed properties, their worst inputs and a reproducer.
        """
        from softmax_dispersion.testing import check_softmax

        report = check_softmax(fn, **{**self.defaults, **kwargs})
        if not report.passed:
            folder = self.folder() if self.folder is not None else None
            report.raise_if_failed(folder, verbose=self.verbose)
        return report

    def assert_close(self, actual: Any, x: Any, **kwargs: Any) -> None:
        """:func:`~softmax_dispersion.testing.assert_softmax_close` with the marker's
        ``kind`` read as ``log=True`` for ``"log_softmax"`` and its ``tolerance``."""
        from softmax_dispersion.testing import assert_softmax_close

        if "log" not in kwargs and self.defaults.get("kind") == "log_softmax":
            kwargs["log"] = True
        if "tolerance" not in kwargs and "tolerance" in self.defaults:
            kwargs["tolerance"] = self.defaults["tolerance"]
        assert_softmax_close(actual, x, **kwargs)

    def reference(self, x: Any, **kwargs: Any) -> Reference:
        """:func:`~softmax_dispersion.testing.reference_softmax` of ``x``."""
        from softmax_dispersion.testing import reference_softmax

        if "log" not in kwargs and self.defaults.get("kind") == "log_softmax":
            kwargs["log"] = True
        return reference_softmax(x, **kwargs)

    def attention(self, q: Any, k: Any, v: Any, **kwargs: Any) -> AttentionReference:
        """:func:`~softmax_dispersion.testing.reference_attention` of ``q, k, v``
        (keywords: ``attn_mask``, ``is_causal``, ``scale``, ``dtype``)."""
        from softmax_dispersion.testing import reference_attention

        return reference_attention(q, k, v, **kwargs)

    def vjp(self, x: Any, g: Any, **kwargs: Any) -> VJPReference:
        """:func:`~softmax_dispersion.testing.reference_softmax_vjp` of ``x, g``, with the
        marker's ``kind="log_softmax_vjp"`` read as ``log=True``."""
        from softmax_dispersion.testing import reference_softmax_vjp

        if "log" not in kwargs and self.defaults.get("kind") == "log_softmax_vjp":
            kwargs["log"] = True
        return reference_softmax_vjp(x, g, **kwargs)

    def __repr__(self) -> str:
        return f"SoftmaxOracle({self.defaults!r})"


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``softmax_oracle`` marker (so ``--strict-markers`` accepts it)."""
    config.addinivalue_line(
        "markers",
        "softmax_oracle(kind='softmax', library='numpy', dtypes=None, s=None, suites=None, "
        "seed=0, tolerance=None, policies=None): defaults of the softmax_oracle fixture's "
        "check()",
    )


@pytest.fixture
def softmax_oracle(request: pytest.FixtureRequest) -> SoftmaxOracle:
    """The softmax oracle, with the ``softmax_oracle`` marker's arguments as defaults."""
    defaults: dict[str, Any] = {}
    for marker in reversed(list(request.node.iter_markers("softmax_oracle"))):
        if marker.args:
            raise pytest.UsageError(
                "the softmax_oracle marker takes keyword arguments only "
                f"({', '.join(MARKER_ARGUMENTS)}), got positional {marker.args!r}"
            )
        unknown = sorted(set(marker.kwargs) - set(MARKER_ARGUMENTS))
        if unknown:
            raise pytest.UsageError(
                f"softmax_oracle marker: unknown argument {', '.join(unknown)}; "
                f"known: {', '.join(MARKER_ARGUMENTS)}"
            )
        defaults.update(marker.kwargs)
    # The test's tmp_path, asked for only when a check fails (pytest keeps a few).
    return SoftmaxOracle(
        defaults,
        folder=lambda: Path(request.getfixturevalue("tmp_path")),
        verbose=request.config.get_verbosity() > 0,
    )
