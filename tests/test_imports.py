"""Importing the package or its theory layer pulls in no heavy framework, and the command
line's parser and help load no mathematics at all."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

HEAVY = ("torch", "jax", "flint", "matplotlib", "hypothesis", "transformers", "safetensors")
HELP_HEAVY = (*HEAVY, "sympy", "z3", "numpy", "mpmath", "scipy")
"""What building the parser and printing a help may not import: ``--help`` must answer at
once (under 0.3 s; ``tests/benchmarks/bench_cli.py`` measures it), and sympy alone takes
about half a second to import."""

PRINTING = "printing every help"

# Builds the parser one subcommand at a time, as main() does, and names the heavy modules
# each subcommand's parser brought in; then prints every help through main().
HELP_PROBE = f"""
import contextlib, io, json, sys
from importlib import import_module
from softmax_dispersion.cli import COMMANDS, main
from softmax_dispersion.cli._usage import CommandParser
from softmax_dispersion.cli.experiment import TASKS

def heavy():
    return {{m for m in {HELP_HEAVY!r} if m in sys.modules}}

found = {{}}
subcommands = CommandParser(prog="softmax-dispersion").add_subparsers()
for name in COMMANDS:
    before = heavy()
    import_module(f"softmax_dispersion.cli.{{name}}").add_parser(subcommands)
    found[name] = sorted(heavy() - before)
before = heavy()
helps = [[], *([c.replace("_", "-")] for c in COMMANDS), *(["experiment", t] for t in TASKS)]
for command in helps:
    with contextlib.redirect_stdout(io.StringIO()) as shown:
        try:
            main([*command, "--help"])
        except SystemExit as done:
            assert done.code == 0 and "usage: softmax-dispersion" in shown.getvalue(), command
found[{PRINTING!r}] = sorted(heavy() - before)
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def heavy_by_command() -> dict[str, list[str]]:
    """The heavy modules each subcommand's parser imports (one subprocess for all)."""
    done = subprocess.run(
        [sys.executable, "-c", HELP_PROBE], capture_output=True, text=True, check=True
    )
    found: dict[str, list[str]] = json.loads(done.stdout)
    return found


def _commands() -> list[Any]:
    from softmax_dispersion.cli import COMMANDS

    return [*COMMANDS, PRINTING]


@pytest.mark.parametrize("command", _commands())
def test_the_parser_and_help_load_no_mathematics(
    command: str, heavy_by_command: dict[str, list[str]]
) -> None:
    assert heavy_by_command[command] == []


def test_the_help_probe_sees_a_heavy_parser() -> None:
    """The probe can fail: a subcommand whose parser imports sympy is named."""
    planted = HELP_PROBE.replace(
        "    before = heavy()\n",
        "    before = heavy()\n    if name == 'prove':\n        import sympy\n",
    )
    done = subprocess.run([sys.executable, "-c", planted], capture_output=True, text=True)
    assert "sympy" in json.loads(done.stdout)["prove"]


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
