"""No function of blaslog is more complex than MAX_COMPLEXITY (radon's cyclomatic complexity), and no module is
longer than MAX_LINES lines (issue 34): a function past the limit is split into small named steps (a table or
a dispatch dict where its branches are data), a module past it into modules of one concern each.
"""

from __future__ import annotations

from pathlib import Path

from radon.visitors import Class, ComplexityVisitor, Function

PACKAGE = Path(__file__).resolve().parent.parent / "blaslog"
MAX_COMPLEXITY = 25
"""The most cyclomatic complexity (as `radon cc` counts it) a function, method or closure may have."""
MAX_LINES = 800
"""The most lines a module may have."""


def _functions(blocks: list[Function | Class], prefix: str = "") -> list[tuple[str, Function]]:
    """(qualified name, block) of every function, method and closure among radon's blocks, nested ones too."""
    found: list[tuple[str, Function]] = []
    for block in blocks:
        if isinstance(block, Class):
            found += _functions([*block.methods, *block.inner_classes], f"{prefix}{block.name}.")
        else:
            name = f"{prefix}{block.name}"
            found.append((name, block))
            found += _functions(block.closures, f"{name}.")
    return found


def too_complex(package: Path, limit: int = MAX_COMPLEXITY) -> dict[str, str]:
    """`path::qualified name` -> what it measures, for every function of `package` over `limit`."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        where = path.relative_to(package.parent).as_posix()
        visitor = ComplexityVisitor.from_code(path.read_text(encoding="utf-8"))
        for name, block in _functions([*visitor.functions, *visitor.classes]):
            if block.complexity > limit:
                out[f"{where}::{name}"] = f"complexity {block.complexity} (line {block.lineno})"
    return out


def too_long(package: Path, limit: int = MAX_LINES) -> dict[str, str]:
    """`path` -> its line count, for every module of `package` longer than `limit` lines."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > limit:
            out[path.relative_to(package.parent).as_posix()] = f"{lines} lines"
    return out


def _listed(found: dict[str, str]) -> str:
    return "".join(f"\n  {name}: {what}" for name, what in sorted(found.items()))


def test_no_function_is_too_complex() -> None:
    over = too_complex(PACKAGE)
    assert not over, (
        f"functions over cyclomatic complexity {MAX_COMPLEXITY} (radon cc): split each into small named steps "
        f"(a table or a dispatch dict where its branches are data):{_listed(over)}"
    )


def test_no_module_is_too_long() -> None:
    over = too_long(PACKAGE)
    assert not over, f"modules over {MAX_LINES} lines: split each into modules of one concern:{_listed(over)}"


def _branches(count: int) -> str:
    """A function of cyclomatic complexity 1 + `count`."""
    return (
        "def choose(x):\n"
        + "".join(f"    if x == {i}:\n        return {i}\n" for i in range(count))
        + "    return -1\n"
    )


def test_the_measures_find_a_function_and_a_module_just_past_the_limits(tmp_path: Path) -> None:
    """The checks above can fail: a method, a closure and a function one past the limit are named, one at the
    limit is not; a module one line past the limit is named, one at it is not."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    at_limit = _branches(MAX_COMPLEXITY - 1)
    past = _branches(MAX_COMPLEXITY)
    (package / "ok.py").write_text(at_limit + "\n" * (MAX_LINES - len(at_limit.splitlines())), encoding="utf-8")
    nested = "class Picker:\n" + "".join(f"    {line}\n" for line in past.splitlines())
    nested += "def outer():\n" + "".join(f"    {line}\n" for line in past.splitlines()) + "    return choose\n"
    (package / "sub" / "bad.py").write_text(past + nested + "\n" * MAX_LINES, encoding="utf-8")
    assert len((package / "ok.py").read_text(encoding="utf-8").splitlines()) == MAX_LINES
    assert set(too_complex(package)) == {
        "pkg/sub/bad.py::choose",
        "pkg/sub/bad.py::Picker.choose",
        "pkg/sub/bad.py::outer.choose",
    }
    assert too_complex(package)["pkg/sub/bad.py::choose"] == f"complexity {MAX_COMPLEXITY + 1} (line 1)"
    assert set(too_long(package)) == {"pkg/sub/bad.py"}
