"""The package's import graph has no cycle: every import counts, at the top of a module or inside a function.

Floors (see the README's layout): a module never imports one above it, so a newcomer can read the package bottom
up, and no optimisation ties two rooms into one knot.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "blaslog"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the blaslog modules it imports anywhere in its text (functions included). A compiled module is
    there as its type stub (`_speedups.pyi`), which imports nothing of blaslog."""
    modules = {_module_name(p): p for p in (*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.pyi"))}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name and target.startswith("blaslog"):
                    graph[name].add(target)
    return graph


def _without_package_faces(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """A package's __init__ that only hands names on is its children's face: `a.b` importing `a` for a name
    defined in `a.c` is an import of `a.c`, not a cycle through `a`. Only the top-level `blaslog` face is
    dropped here (it re-exports the public API and imports everything)."""
    return {name: {t for t in targets if t != "blaslog"} for name, targets in graph.items() if name != "blaslog"}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph (as a list of modules, first = last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state and (found := visit(target)) is not None:
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def test_the_package_has_no_import_cycle():
    cycle = find_cycle(_without_package_faces(import_graph()))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_finds_cycles():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


@pytest.mark.parametrize(
    "low,high",
    [
        ("blaslog._parallel", "blaslog.reporters"),
        ("blaslog._parallel", "blaslog.views"),
        ("blaslog.parse", "blaslog._parallel"),
        ("blaslog.records", "blaslog.frame"),
        ("blaslog.api", "blaslog.cli"),
        ("blaslog.api", "blaslog.reporters"),
    ],
)
def test_floors(low, high):
    """Lower floors never import higher ones: parsing does not render, the library does not know the CLI."""
    graph = import_graph()
    reach, todo = set(), [low]
    while todo:
        for target in graph.get(todo.pop(), ()):
            if target not in reach:
                reach.add(target)
                todo.append(target)
    assert not any(t == high or t.startswith(high + ".") for t in reach), f"{low} reaches {high}"
