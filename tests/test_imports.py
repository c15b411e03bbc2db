"""Importing the package or its theory layer pulls in no heavy framework."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("torch", "jax", "flint", "matplotlib", "hypothesis", "transformers", "safetensors")


@pytest.mark.parametrize(
    "module",
    [
        "softmax_dispersion",
        "softmax_dispersion.theory",
        "softmax_dispersion.numerics",
        "softmax_dispersion.testing",
        "softmax_dispersion.cli",
        "softmax_dispersion.cli.experiment",
        "softmax_dispersion.reproduce",
        "softmax_dispersion.reproduce.pretrained",
        "softmax_dispersion.cli._pretrained",
    ],
)
def test_import_is_light(module: str) -> None:
    code = f"import sys, {module}; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


def test_generic_layer_names_are_not_importable() -> None:
    code = "import importlib.util as u; print(u.find_spec('theory') is None)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/"
    )
    assert done.stdout.strip() == "True"
