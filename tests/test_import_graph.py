"""The package's import graph has no cycle (imports inside functions count too)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {
    "softmax_dispersion": ROOT / "softmax_dispersion",
    "softmax_dispersion.theory": ROOT / "theory",
    "softmax_dispersion.numerics": ROOT / "numerics",
    "softmax_dispersion.empirical": ROOT / "empirical",
}


def _modules() -> dict[str, Path]:
    """Every module of the source tree by its dotted name (layers mapped as installed)."""
    found: dict[str, Path] = {}
    for package, folder in LAYERS.items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's own modules that ``name`` imports, anywhere in its source."""
    is_package = path.name == "__init__.py"
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")[: len(name.split(".")) - node.level + is_package]
                base = ".".join([*anchor, *([base] if base else [])])
            # ``from package import module`` depends on the module; ``from module import
            # name`` on the module that defines the name.
            names = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names
            ]
        else:
            continue
        targets.update(n for n in names if n in known)
    targets.discard(name)
    return targets


def import_graph() -> dict[str, set[str]]:
    """Module → the package modules it imports."""
    modules = _modules()
    return {name: _imports(name, path, set(modules)) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_import_graph_has_no_cycle() -> None:
    graph = import_graph()
    assert len(graph) > 40  # the walk saw the whole package
    assert cycles(graph) == []


@pytest.mark.parametrize(
    "graph",
    [
        {"a": {"b"}, "b": {"a"}},
        {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()},
    ],
)
def test_the_cycle_finder_finds_a_planted_cycle(graph: dict[str, set[str]]) -> None:
    assert cycles(graph)


def test_package_imports_are_seen_in_functions_too() -> None:
    graph = import_graph()
    # The command line loads its subcommands lazily: those edges must still be seen.
    assert "softmax_dispersion.cli._usage" in graph["softmax_dispersion.cli.prove"]


def _named_like_tests(paths: dict[str, Path]) -> list[str]:
    """``module:line name`` of every function in ``paths`` whose name starts with test_."""
    return [
        f"{name}:{node.lineno} {node.name}"
        for name, path in paths.items()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.name.startswith("test_")
    ]


def test_no_library_function_is_named_like_a_test() -> None:
    # pytest collects any function named test_* that a test module imports (and
    # --doctest-modules runs them); a library function must never look like a test.
    assert not _named_like_tests(_modules())


def test_the_naming_check_sees_a_planted_test_function(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text("class Chunks:\n    def test_chunks(self):\n        pass\n")
    assert _named_like_tests({"planted": planted}) == ["planted:2 test_chunks"]
