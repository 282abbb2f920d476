"""A new output format is one module of blaslog.reporters (plus its test): nothing else names it.

The proof: a tiny reporter module dropped on the package's path (as a file in blaslog/reporters/ is found) is
offered by the commands it declares, in --format, --report and --help, and renders; none of blaslog's files
changes. Discovery reads the modules' text: a command line never imports a format it does not write.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

import blaslog.reporters
from blaslog.cli import FORMATS, cli
from blaslog.errors import BlaslogError
from blaslog.reporters import REPORTERS, describe, get_reporter, offered
from tests.conftest import ROOT, SEED

TOY = '''
"""A toy output format: one line per finding."""

from blaslog.report import Report
from blaslog.reporters._base import Reporter, register


@register
class ToyReporter(Reporter):
    """One line per finding, then a count."""

    name = "toy"
    commands = ("check", "diff")
    description = "one line per finding (a test's toy format)"

    def render(self, report: Report) -> str:
        lines = [f"TOY {f.cls} {f.location.file}:{f.location.line}" for f in report.findings]
        return "\\n".join([*lines, f"TOY {len(report.findings)} findings"]) + "\\n"
'''

DIFF = ["diff", str(SEED / "sharded.log"), str(SEED / "unsharded.log"), "--caps", str(SEED / "caps.json")]


@pytest.fixture
def package_path(tmp_path, monkeypatch):
    """A folder on blaslog.reporters' path (as blaslog/reporters/ is): write a module there and it is a format.
    What the modules register is taken back afterwards."""
    folder = tmp_path / "more_reporters"
    folder.mkdir()
    monkeypatch.setattr(blaslog.reporters, "__path__", [*blaslog.reporters.__path__, str(folder)])
    before = dict(REPORTERS.loaded)  # type: ignore[attr-defined]
    modules = set(sys.modules)
    yield folder
    REPORTERS.loaded.clear()  # type: ignore[attr-defined]
    REPORTERS.loaded.update(before)  # type: ignore[attr-defined]
    for name in set(sys.modules) - modules:
        if name.startswith("blaslog.reporters."):
            del sys.modules[name]


def _run(*args: str):
    return CliRunner().invoke(cli, list(args), terminal_width=200)


def test_a_module_dropped_in_is_a_format_of_the_commands_it_declares(package_path, tmp_path):
    (package_path / "toy.py").write_text(TOY)
    assert "toy" in REPORTERS and "toy" in offered("diff") and "toy" in FORMATS["check"]
    assert "toy" not in FORMATS["parse"] and "toy" not in FORMATS["summary"] and "toy" not in FORMATS["emulate"]
    assert "blaslog.reporters.toy" not in sys.modules  # offered from its text, not imported
    assert describe("toy") == "one line per finding (a test's toy format)"

    for command in ("diff", "check"):
        text = _run(command, "--help").stdout
        assert "toy" in text.split("--format [", 1)[1].split("]", 1)[0].split("|"), command
        assert "toy       one line per finding (a test's toy format)" in text
        assert "toy." in text.split("Formats:", 1)[1] or "toy," in text.split("Formats:", 1)[1]  # --report's list
    assert "toy" not in _run("parse", "--help").stdout

    result = _run(*DIFF, "-f", "toy")
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("TOY precision ") and result.stdout.endswith(" findings\n")
    assert isinstance(get_reporter("toy"), REPORTERS["toy"])

    report = tmp_path / "findings.toy"
    both = _run(*DIFF, "-f", "json", "--report", f"toy={report}", "-q")
    assert both.exit_code == 1 and report.read_text() == result.stdout

    refused = _run("parse", str(SEED / "sharded.log"), "-f", "toy")
    assert refused.exit_code == 2 and "'toy' is not one of" in refused.output
    refused = _run("summary", str(SEED / "sharded.log"), "--report", f"toy={report}")
    assert refused.exit_code == 2 and "'toy' is not a format summary writes" in refused.output


def test_a_format_that_declares_a_step_summary_gets_one(package_path, tmp_path, monkeypatch):
    """The CI job's summary is appended for any format whose class says `step_summary` (GitHub's annotations say
    so), not for a format the command line names."""
    (package_path / "toy.py").write_text(TOY.replace('name = "toy"', 'name = "toy"\n    step_summary = True'))
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert _run(*DIFF, "-f", "toy", "-q").exit_code == 1
    said = summary.read_text()
    assert said.startswith("#") and "precision" in said
    summary.unlink()
    assert _run(*DIFF, "-f", "json", "-q").exit_code == 1 and not summary.exists()  # json declares none
    assert {name for name in REPORTERS if getattr(REPORTERS[name], "step_summary", False)} == {"github", "toy"}


def test_a_format_whose_extra_is_missing_is_refused_before_any_input_is_read(package_path):
    (package_path / "needy.py").write_text(
        TOY.replace('name = "toy"', 'name = "needy"\n    extra = "needy"\n    requires = ("blaslog_no_such_module",)')
    )
    for args in (["-f", "needy"], ["--report", "needy=out.needy"]):
        result = _run("diff", "no-such-input.log", "other.log", *args)
        assert result.exit_code == 2, args
        assert (
            "--format needy needs blaslog_no_such_module (blaslog_no_such_module is not installed): "
            "pip install 'blaslog[needy]'"
        ) in result.output
        assert "no-such-input.log" not in result.output  # refused before the inputs are looked at


def test_a_declaration_the_text_does_not_give_is_asked_of_the_class(package_path):
    """A name not written as a literal: the module is imported to learn it (slower, still found)."""
    (package_path / "spelled.py").write_text(TOY.replace('name = "toy"', 'name = "spel" + "led"'))
    assert "spelled" in REPORTERS and "spelled" in FORMATS["diff"]
    assert "blaslog.reporters.spelled" in sys.modules


def test_two_modules_cannot_declare_one_format(package_path):
    (package_path / "again.py").write_text(TOY.replace('name = "toy"', 'name = "json"'))
    with pytest.raises(
        BlaslogError, match=r"'json' is declared by blaslog\.reporters\.json and by blaslog\.reporters\.again"
    ):
        list(REPORTERS)


def test_a_module_that_declares_a_format_it_does_not_register_is_an_error(package_path):
    text = TOY.replace('name = "toy"', 'name = "liar"').replace(
        "from blaslog.reporters._base import Reporter, register",
        "from blaslog.reporters._base import Reporter\n\n\ndef register(cls):\n    return cls",
    )
    (package_path / "liar.py").write_text(text)
    assert "liar" in REPORTERS
    with pytest.raises(BlaslogError, match="declares the output format 'liar' but registers none"):
        get_reporter("liar")


def test_modules_starting_with_an_underscore_are_not_formats(package_path):
    (package_path / "_helpers.py").write_text(TOY.replace('name = "toy"', 'name = "helper"'))
    assert "helper" not in REPORTERS


def test_a_command_imports_only_the_format_it_writes():
    """`parse -f jsonl` reads every format's declarations from the text, and imports none but json's: no
    tabulate, no XML library, no html extra."""
    script = textwrap.dedent(
        f"""
        import sys
        from blaslog.cli import cli
        try:
            cli(["parse", {str(SEED / "sharded.log")!r}, "-f", "jsonl", "-q"])
        except SystemExit as exc:
            status = exc.code
        heavy = [m for m in ("tabulate", "xml.etree.ElementTree", "jinja2", "plotly") if m in sys.modules]
        formats = sorted(m for m in sys.modules if m.startswith("blaslog.reporters."))
        print("STATUS", status, heavy, formats, file=sys.stderr)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=False, timeout=120
    )
    assert "STATUS 0 [] ['blaslog.reporters._base', 'blaslog.reporters.json']" in result.stderr, result.stderr
    assert '"k": 8' in result.stdout


def test_declarations_are_read_from_the_text_as_a_class_is_written():
    from blaslog.reporters._base import _declarations

    text = textwrap.dedent(
        '''
        @register
        class Wrapped(
            Reporter,
        ):  # a header on three lines
            """Docstring first."""

            name: ClassVar[str] = "wrapped"
            commands = ("diff",)
            description = f"not a literal: {HINT}"

            def render(self, report):
                name = "not a declaration"


        @register
        @functools.total_ordering
        class Second(Reporter, metaclass=ABCMeta):
            name = "second"
        '''
    )
    wrapped, second = _declarations("m", text)  # type: ignore[misc]
    assert dict(wrapped.values) == {"name": "wrapped", "commands": ("diff",)}
    assert dict(second.values) == {"name": "second"}
    assert _declarations("m", text + "\n@register\ndef not_a_class(cls):\n    return cls\n") is None  # import it
    assert _declarations("m", "from x import register\n") == []  # a helper module of no format
