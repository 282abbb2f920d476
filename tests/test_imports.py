"""The package's import graph has no cycle: every import counts, at the top of a module or inside a function.

Floors (see the README's layout): a module never imports one above it, so a newcomer can read the package bottom
up, and no optimisation ties two rooms into one knot.
"""

from __future__ import annotations

import ast
import subprocess
import sys
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


# ---- what a command imports ----------------------------------------------------------------------------------------

SEED = PACKAGE.parent / "fixtures" / "seed"

#: Modules of the other commands (and of optional ways of reading) that `blaslog parse` must not import: their
#: import is start-up time every parse would pay.
NOT_FOR_PARSE = (
    "blaslog.api._check",
    "blaslog.api._diff",
    "blaslog.api._emulate",
    "blaslog.api._probe",
    "blaslog.check",
    "blaslog.diff",
    "blaslog.summary",
    "blaslog.tunableop",
    "blaslog.emulate",
    "blaslog.native",
    "blaslog.record",
    "blaslog.cluster",
    "blaslog.parquet",
    "blaslog.frame",
    "blaslog._parallel",
    "blaslog.cli._findings",
    "blaslog.cli._tools",
    "blaslog.cli._emulate_options",
)


def _imported_by(code: str) -> set[str]:
    """The blaslog modules a fresh interpreter holds once `code` has run (and exited, as a command does)."""
    report = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('MODULES', *sorted(m for m in sys.modules if m.startswith('blaslog'))))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", report + code], capture_output=True, text=True, timeout=120, cwd=PACKAGE.parent
    )
    assert result.returncode == 0, result.stderr
    [line] = [line for line in result.stdout.splitlines() if line.startswith("MODULES ")]
    return set(line.split()[1:])


def test_parse_imports_no_other_commands_modules():
    command = ["blaslog", "parse", "-f", "jsonl", str(SEED / "sharded.log"), "-q"]
    modules = _imported_by(
        f"import runpy, sys\nsys.argv = {command!r}\nrunpy.run_module('blaslog', run_name='__main__')"
    )
    assert "blaslog.parse._lines" in modules  # it did parse
    assert not [m for m in modules if any(m == n or m.startswith(n + ".") for n in NOT_FOR_PARSE)]


def test_import_blaslog_imports_no_commands_modules():
    modules = _imported_by("import blaslog")
    assert not [m for m in modules if any(m == n or m.startswith(n + ".") for n in NOT_FOR_PARSE)]
    assert not [m for m in modules if m.startswith(("blaslog.cli", "blaslog.reporters", "blaslog.views"))]


@pytest.mark.parametrize(
    "first",
    [
        "import blaslog",
        "import blaslog.parse",
        "from blaslog.parse import iter_file",
        "import blaslog.parse._lines",
        "from blaslog import api",
        "import blaslog.api._parse",
        "import blaslog.cli",
        "from blaslog import Report, GemmCall",
        "from blaslog import *",
    ],
)
def test_blaslog_parse_is_the_function_whatever_is_imported_first(first):
    """`blaslog.parse` is the API's function though a subpackage has the same name: whatever is imported
    first (the subpackage too), the function is what the package hands on."""
    code = (
        f"{first}\n"
        "import blaslog, blaslog.parse, blaslog.api, types\n"
        "from blaslog.parse import iter_file\n"
        "assert blaslog.parse is blaslog.api.parse, blaslog.parse\n"
        "assert isinstance(blaslog.parse, types.FunctionType)\n"
        "assert blaslog.parse_text is blaslog.api.parse_text and blaslog.parse_lines is blaslog.api.parse_lines\n"
        "import sys; assert isinstance(sys.modules['blaslog.parse'], types.ModuleType)\n"
        "print('MODULES')\n"
    )
    _imported_by(code)


def test_every_name_of_the_api_can_be_had():
    code = (
        "import blaslog, blaslog.api\n"
        "for module in (blaslog, blaslog.api):\n"
        "    for name in module.__all__:\n"
        "        assert getattr(module, name) is not None, name\n"
        "    assert set(module.__all__) <= set(dir(module))\n"
        "    try:\n"
        "        module.no_such_name\n"
        "    except AttributeError:\n"
        "        pass\n"
        "    else:\n"
        "        raise AssertionError('no_such_name')\n"
    )
    _imported_by(code)


def test_the_group_knows_the_module_of_every_command():
    """A command is run from the module _group.COMMANDS names (imported then): every command registered on the
    group is there, under the module that registers it."""
    from blaslog.cli import _group, cli

    assert cli is _group.cli
    assert sorted(cli.commands) == sorted(_group.COMMANDS)
    for name, command in cli.commands.items():
        assert command.callback is not None
        assert command.callback.__module__ == _group.COMMANDS[name], name


def test_the_command_line_builds_no_output_of_its_own():
    """`blaslog/cli/` is options, a library call, a reporter and an exit status (issue 34): no JSON is made there
    (no `json` module, no `dumps`), every output text comes from blaslog.reporters."""
    made = []
    for path in sorted((PACKAGE / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [alias.name for alias in node.names] + [getattr(node, "module", None) or ""]
                if any(name == "json" or name.endswith((".json", "dumps")) for name in names):
                    made.append(f"{path.name}:{node.lineno}: imports {names}")
            elif (
                isinstance(node, ast.Attribute | ast.Name) and getattr(node, "attr", getattr(node, "id", "")) == "dumps"
            ):
                made.append(f"{path.name}:{node.lineno}: dumps")
    assert made == []


def test_each_command_makes_one_library_call():
    """A command is options, ONE call of blaslog.api, a reporter and an exit status (issue 34): the choice among
    library functions its arguments make (diff's --ref and --emit-tunableop, check's --tunableop, emulate's
    records or --shape, probe's partial answers) is made in the library, where the Python API makes it too."""
    calls = {}
    for path in sorted((PACKAGE / "cli").glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and any("command" in ast.unparse(d) for d in node.decorator_list):
                calls[node.name] = [
                    ast.unparse(call.func)
                    for call in ast.walk(node)
                    if isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Attribute)
                    and isinstance(call.func.value, ast.Name)
                    and call.func.value.id == "api"
                ]
    assert {"diff_cmd", "check_cmd", "emulate_cmd", "summary_cmd", "probe_cmd"} <= set(calls)
    assert {name: found for name, found in calls.items() if len(found) > 1} == {}
    assert calls["diff_cmd"] == ["api.diff_command"] and calls["probe_cmd"] == ["api.probe"]
