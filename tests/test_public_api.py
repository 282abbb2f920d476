"""The public API: three parse entry points, and every public name in `__all__` (issue 34)."""

from __future__ import annotations

import importlib
import inspect
import io
import pkgutil
import types
from pathlib import Path

import pytest

import blaslog
from blaslog import api
from blaslog.errors import InputError

SEED = Path(__file__).resolve().parent.parent / "fixtures" / "seed"

#: The modules a user imports: what they hold that is not private is exactly their __all__.
PUBLIC = ("blaslog", "blaslog.api", "blaslog.cli")


def _modules() -> list[types.ModuleType]:
    found = [blaslog]
    for info in pkgutil.walk_packages(blaslog.__path__, "blaslog."):
        if info.name.endswith("__main__"):
            continue
        try:
            found.append(importlib.import_module(info.name))
        except ImportError:  # an optional extra (numpy, pyarrow ...) that is not installed
            continue
    return found


@pytest.mark.parametrize("name", PUBLIC)
def test_a_public_module_shows_exactly_its_all(name):
    module = importlib.import_module(name)
    # dir(), not vars(): a package hands on some names from modules imported when first used (PEP 562)
    shown = {
        key
        for key in dir(module)
        if not key.startswith("_") and not isinstance(getattr(module, key), types.ModuleType) and key != "annotations"
    }
    listed = {key for key in module.__all__ if not isinstance(getattr(module, key), types.ModuleType)}
    assert shown == listed - {"__version__"}, f"{name}: left out of __all__, or listed there but missing"


def test_every_public_name_a_module_defines_is_in_its_all():
    missing = []
    for module in _modules():
        public_module = not any(part.startswith("_") for part in module.__name__.split("."))
        if not public_module or not hasattr(module, "__all__"):
            continue
        for key, value in vars(module).items():
            defined_here = getattr(value, "__module__", None) == module.__name__
            public = (inspect.isfunction(value) or inspect.isclass(value)) and not key.startswith("_")
            if defined_here and public and key not in module.__all__:
                missing.append(f"{module.__name__}.{key}")
    assert missing == []


def test_three_parse_entry_points_and_no_more():
    parsers = {name for name in api.__all__ if name.startswith("parse")}
    assert parsers == {"parse", "parse_text", "parse_lines"}
    assert {name for name in blaslog.__all__ if name.startswith("parse")} == parsers
    for gone in ("parse_file", "records", "parse_inputs", "parse_report", "iter_file"):
        assert not hasattr(api, gone) or gone.startswith("_"), gone
        assert gone not in blaslog.__all__


def test_a_path_a_text_and_lines_give_the_same_records():
    log = SEED / "sharded.log"
    text = log.read_text()
    by_path = blaslog.parse(str(log))
    by_text = blaslog.parse_text(text, name=str(log))
    with open(log, encoding="utf-8") as handle:
        by_lines = blaslog.parse_lines(handle, name=str(log))
    stripped = blaslog.parse_lines(io.StringIO(text).read().splitlines(), name=str(log))
    assert by_path.gemms and by_path.records == by_text.records == by_lines.records == stripped.records
    assert by_path.files == by_text.files == by_lines.files


def test_entry_points_refuse_the_wrong_kind_of_input_clearly():
    with pytest.raises(InputError, match="parse_text"):
        blaslog.parse_lines("one line\n")
    with pytest.raises(InputError, match="parse\\(\\)"):
        blaslog.parse_text(Path("run.log"))  # type: ignore[arg-type]


def test_closed_vocabularies_are_str_enums_that_write_as_before():
    import json

    from blaslog.cli import cli
    from blaslog.report import FINDING_CLASSES, THRESHOLDS

    assert list(FINDING_CLASSES) == list(blaslog.FindingKind)
    assert list(THRESHOLDS) == list(blaslog.FailOn)
    assert {row.level for row in FINDING_CLASSES.values()} <= set(blaslog.Level)
    assert json.dumps({blaslog.FindingKind.PRECISION: blaslog.Level.ERROR}) == '{"precision": "error"}'
    assert f"{blaslog.FailOn.NEVER}" == "never" == blaslog.FailOn.NEVER
    choices = {p.name: list(p.type.choices) for p in cli.commands["diff"].params if hasattr(p.type, "choices")}
    assert choices["fail_on"] == [m.value for m in blaslog.FailOn]
    kinds = {p.name: list(p.type.choices) for p in cli.commands["parse"].params if hasattr(p.type, "choices")}
    assert kinds["kind"] == [m.value for m in blaslog.RecordKind]


def test_closed_vocabularies_are_enums_that_take_their_values_as_text_too():
    """`on_error` is an OnError (a str of its values works too); a problem's severity is a Severity."""
    text = (SEED.parent / "bad" / "unbalanced_brackets.log").read_text()
    warned = blaslog.parse_text(text, on_error=blaslog.OnError.WARN)
    assert warned.problems and {p.severity for p in warned.problems} <= set(blaslog.Severity)
    assert any(p.severity is blaslog.Severity.ERROR for p in warned.problems)
    assert blaslog.parse_text(text, on_error="warn").problems == warned.problems
    skipped = blaslog.parse_text(text, on_error="skip")  # the lines still counted, with no Problem of their own
    assert not [p for p in skipped.problems if p.severity == "error"] and skipped.records == warned.records
    assert skipped.files[0].unparsable_lines == warned.files[0].unparsable_lines > 0
    for way in (blaslog.OnError.RAISE, "raise"):
        with pytest.raises(blaslog.LogParseError):
            blaslog.parse_text(text, on_error=way)
    with pytest.raises(ValueError, match="'stop' is not a valid OnError"):
        blaslog.parse_text(text, on_error="stop")  # type: ignore[arg-type]


def test_skip_still_says_what_is_said_of_the_whole_input():
    """OnError.SKIP leaves a counted line without a Problem, never a stream cut short (which no count holds)."""
    cut = str(SEED.parent / "bad" / "gzip_cut_short.log.gz")
    warned, skipped = blaslog.parse(cut, on_error="warn"), blaslog.parse(cut, on_error="skip")
    ends = [p for p in warned.problems if "ends early" in p.message]
    assert ends and [p for p in skipped.problems if "ends early" in p.message] == ends
    assert ends[0].severity is blaslog.Severity.ERROR


def test_a_problem_holds_a_severity_and_says_it_as_text():
    problem = blaslog.Problem("f.log", 3, "odd", severity="warning")  # type: ignore[arg-type]
    assert problem.severity is blaslog.Severity.WARNING and problem.render().startswith("f.log:3: warning: odd")
    with pytest.raises(ValueError):
        blaslog.Problem("f.log", 3, "odd", severity="fatal")  # type: ignore[arg-type]
    summary = blaslog.parse(str(SEED.parent / "bad" / "unbalanced_brackets.log")).files[0]
    assert {type(p["severity"]) for p in summary.to_dict()["problems"]} == {str}  # JSON-ready: no enum member
