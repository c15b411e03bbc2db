"""The pytest plugin: another project checks its softmax in three lines."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from softmax_dispersion.testing.plugin import SoftmaxOracle

pytest_plugins = ["pytester"]


def my_softmax(x: Any) -> Any:
    shifted = x - np.max(x, axis=-1, keepdims=True)
    exps = np.exp(shifted)
    return exps / np.sum(exps, axis=-1, keepdims=True)


# The three lines another project writes:
def test_my_softmax(softmax_oracle):  # type: ignore[no-untyped-def]
    softmax_oracle.check(my_softmax)


class Recorder:
    """Stands in for the core: records the arguments the fixture passes on."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def check_softmax(self, fn: Any, **kwargs: Any) -> Any:
        self.calls.append(("check", kwargs))
        recorder = self

        class Failed:
            passed = False

            def raise_if_failed(self, folder: Any = None, verbose: bool = False) -> None:
                recorder.calls.append(("raise_if_failed", {"folder": folder}))

        return Failed()

    def assert_softmax_close(self, actual: Any, x: Any, **kwargs: Any) -> None:
        self.calls.append(("assert_close", kwargs))

    def reference_softmax(self, x: Any, **kwargs: Any) -> str:
        self.calls.append(("reference", kwargs))
        return "reference"


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    import softmax_dispersion.testing as testing

    fake = Recorder()
    for name in ("check_softmax", "assert_softmax_close", "reference_softmax"):
        monkeypatch.setattr(testing, name, getattr(fake, name), raising=False)
    return fake


@pytest.mark.softmax_oracle(kind="log_softmax", dtypes=["float64"], tolerance="strict")
def test_marker_arguments_become_defaults(
    softmax_oracle: SoftmaxOracle, recorder: Recorder
) -> None:
    assert softmax_oracle.defaults == {
        "kind": "log_softmax",
        "dtypes": ["float64"],
        "tolerance": "strict",
    }
    softmax_oracle.check(my_softmax, dtypes=["float32"], seed=3)
    assert recorder.calls[0] == (
        "check",
        {"kind": "log_softmax", "dtypes": ["float32"], "tolerance": "strict", "seed": 3},
    )
    assert recorder.calls[1][0] == "raise_if_failed"
    assert recorder.calls[1][1]["folder"].is_dir()  # the test's tmp_path, on a failure only
    softmax_oracle.assert_close(np.zeros(2), np.zeros(2))
    assert recorder.calls[2] == ("assert_close", {"log": True, "tolerance": "strict"})
    reference: object = softmax_oracle.reference(np.zeros(2), theta=2.0)
    assert reference == "reference"
    assert recorder.calls[3] == ("reference", {"theta": 2.0, "log": True})


def test_fixture_without_marker_has_no_defaults(softmax_oracle: SoftmaxOracle) -> None:
    assert softmax_oracle.defaults == {}
    assert "SoftmaxOracle" in repr(softmax_oracle)


def test_plugin_is_an_installed_entry_point() -> None:
    from importlib.metadata import entry_points

    found = [e for e in entry_points(group="pytest11") if e.name == "softmax_dispersion"]
    assert [e.value for e in found] == ["softmax_dispersion.testing.plugin"]


def loaded_by(module: str) -> set[str]:
    """The modules of interest that importing ``module`` loads, in a fresh interpreter."""
    watched = (
        "numpy",
        "torch",
        "jax",
        "hypothesis",
        "flint",
        "scipy",
        "sympy",
        "matplotlib",
        "softmax_dispersion.testing.battery",
        "softmax_dispersion.testing.tolerance",
    )
    code = f"import sys, {module}; print(','.join(m for m in {watched!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(filter(None, done.stdout.strip().split(",")))


def test_plugin_import_is_cheap() -> None:
    # Loaded in every pytest session wherever the package is installed: nothing heavy,
    # not even numpy, until a test uses the fixture.
    assert loaded_by("softmax_dispersion.testing.plugin") == set()


def test_the_cheap_import_check_can_fail() -> None:
    # The same check sees numpy and the battery when a module does load them.
    found = loaded_by("softmax_dispersion.testing.battery")
    assert {"numpy", "softmax_dispersion.testing.battery"} <= found


EXTERNAL_MARKERS = """
import pytest


@pytest.mark.softmax_oracle(kind="log_softmax", library="numpy", dtypes=["float64"], s=None)
def test_marked(softmax_oracle):
    assert softmax_oracle.defaults["kind"] == "log_softmax"


@pytest.mark.softmax_oracle("softmax")
def test_positional_marker(softmax_oracle):
    pass


@pytest.mark.softmax_oracle(temperature=2)
def test_unknown_marker_argument(softmax_oracle):
    pass
"""


def test_external_project_marker(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_external=EXTERNAL_MARKERS)
    result = pytester.runpytest_subprocess("--strict-markers", "-q")
    result.assert_outcomes(passed=1, errors=2)
    result.stdout.fnmatch_lines(["*keyword arguments only*", "*unknown argument temperature*"])


EXTERNAL_CHECK = """
import numpy as np
import pytest


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def test_my_softmax(softmax_oracle):
    softmax_oracle.check(softmax)


@pytest.mark.softmax_oracle(dtypes=["float32"])
def test_broken_softmax(softmax_oracle):
    softmax_oracle.check(lambda x: np.full_like(x, 0.5))


def test_close(softmax_oracle):
    x = np.array([1.0, 2.0, 3.0])
    softmax_oracle.assert_close(softmax(x), x)


def masked(x, mask):
    return softmax(np.where(mask, x, -np.inf))


@pytest.mark.softmax_oracle(
    kind="masked_softmax", dtypes=["float64"], policies={"fully masked row": "NaN"}
)
def test_masked(softmax_oracle):
    softmax_oracle.check(masked)


@pytest.mark.softmax_oracle(
    kind="masked_softmax", dtypes=["float64"], policies={"fully masked row": "zeros"}
)
def test_masked_policy_required(softmax_oracle):
    softmax_oracle.check(masked)
"""


def test_external_project_checks_its_softmax(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_external=EXTERNAL_CHECK)
    result = pytester.runpytest_subprocess("--strict-markers", "-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=2)
    result.stdout.fnmatch_lines(
        ["*test_broken_softmax*", "*fully masked row → NaN, required zeros*"]
    )


LONG_FAILURE = """
import numpy as np
import pytest


@pytest.mark.softmax_oracle(dtypes=["float32"], suites=["random"])
def test_wrong_on_long_rows(softmax_oracle):
    def softmax(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        p = e / e.sum(axis=-1, keepdims=True)
        return (p * 1.01 if x.shape[-1] > 20000 else p).astype(x.dtype)

    softmax_oracle.check(softmax)
"""


def test_a_failure_writes_long_inputs_into_the_test_tmp_path_only(
    pytester: pytest.Pytester,
) -> None:
    # The reproducer of a long worst input loads it from the failing test's tmp_path
    # (pytest's, kept a few runs), never from a temporary folder of its own.
    pytester.makepyfile(test_long=LONG_FAILURE)
    base = pytester.path / "base"
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", f"--basetemp={base}")
    result.assert_outcomes(failed=1)
    saved = sorted(base.rglob("*.npy"))
    assert saved and all("test_wrong_on_long_rows" in str(p) for p in saved)
    assert any("np.load(" in line and str(base) in line for line in result.outlines)
    lines = [line for line in result.outlines if line.startswith("E ")]
    per_property = len(lines) / max(1, sum("failed; worst" in line for line in lines))
    assert per_property <= 22, "\n".join(lines)
