"""One read, several reports: --report FORMAT=PATH beside -f/--format (issue 37), options named alike on every
command, and a missing extra refused before any input is read."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import blaslog.api._inputs as inputs_module
from blaslog.cli import FORMATS, cli

SEED = Path(__file__).resolve().parent.parent / "fixtures" / "seed"
DIFF = ["diff", str(SEED / "sharded.log"), str(SEED / "unsharded.log"), "--caps", str(SEED / "caps.json")]


@pytest.fixture
def reads(monkeypatch):
    """The input files read, in order (each read of a file is one entry)."""
    seen: list[str] = []
    real = inputs_module._read_one

    def counting(name, options, shapes):
        seen.append(name)
        return real(name, options, shapes)

    monkeypatch.setattr(inputs_module, "_read_one", counting)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return seen


def _run(*args: str) -> click.testing.Result:
    return CliRunner().invoke(cli, [*args, "-q", "-j", "1"])


def test_one_read_writes_three_reports_identical_to_three_runs(tmp_path, reads):
    one = _run(
        *DIFF,
        "-f",
        "github",
        "--report",
        f"sarif={tmp_path / 'one.sarif'}",
        "--report",
        f"junit={tmp_path / 'one.xml'}",
    )
    assert one.exit_code == 1, one.output  # the seed diff has findings
    assert len(reads) == 2  # each input read once, for all three reports
    del reads[:]
    github = _run(*DIFF, "-f", "github")
    sarif = _run(*DIFF, "-f", "sarif", "-o", str(tmp_path / "alone.sarif"))
    junit = _run(*DIFF, "-f", "junit", "-o", str(tmp_path / "alone.xml"))
    assert len(reads) == 6
    assert {github.exit_code, sarif.exit_code, junit.exit_code} == {1}
    assert one.stdout == github.stdout
    assert "::error" in github.stdout or "::warning" in github.stdout
    assert (tmp_path / "one.sarif").read_bytes() == (tmp_path / "alone.sarif").read_bytes()
    assert (tmp_path / "one.xml").read_bytes() == (tmp_path / "alone.xml").read_bytes()


@pytest.mark.parametrize("command", sorted(FORMATS))
def test_every_reporting_command_takes_report(tmp_path, command, reads):
    args = {
        "parse": ["parse", str(SEED / "sharded.log")],
        "summary": ["summary", str(SEED / "sharded.log")],
        "check": ["check", str(SEED / "sharded.log")],
        "diff": DIFF,
        "emulate": None,
    }[command]
    if args is None:  # emulate reads no logs here: its options are checked below
        assert "--report" in {opt for p in cli.commands[command].params for opt in p.opts}
        return
    both = _run(*args, "-f", "json", "--report", f"markdown={tmp_path / 'r.md'}")
    alone = _run(*args, "-f", "markdown", "-o", str(tmp_path / "alone.md"))
    assert both.exit_code == alone.exit_code and both.exit_code in (0, 1), both.output
    assert both.stdout == _run(*args, "-f", "json").stdout
    assert (tmp_path / "r.md").read_text() == (tmp_path / "alone.md").read_text()


@pytest.mark.parametrize(
    ("report", "message"),
    [
        ("xml=out.xml", "'xml' is not a format diff writes; choose from table, json"),
        ("parquet=out", "'parquet' is not a format diff writes"),
        ("sarif", "give FORMAT=PATH"),
        ("=out.sarif", "give FORMAT=PATH"),
        ("sarif=", "give a file name"),
        ("sarif=-", "give a file name"),
    ],
)
def test_a_bad_format_is_refused_with_exit_2(report, message, reads):
    result = _run(*DIFF, "--report", report)
    assert result.exit_code == 2
    assert message in result.output
    assert reads == []


def test_a_bad_path_is_refused_before_any_input_is_read(tmp_path, reads):
    cases = {
        str(SEED / "sharded.log"): "writing the report there would destroy the input",
        str(tmp_path): "is a folder",
        str(tmp_path / "nowhere" / "r.sarif"): "does not exist",
        "/dev/null": "not a regular file",
    }
    for path, message in cases.items():
        result = _run(*DIFF, "--report", f"sarif={path}")
        assert result.exit_code == 2, path
        assert message in result.output, (path, result.output)
    twice = _run(*DIFF, "--report", f"sarif={tmp_path / 'r'}", "--report", f"junit={tmp_path / 'r'}")
    assert twice.exit_code == 2 and "give each report its own file" in twice.output
    with_output = _run(*DIFF, "-o", str(tmp_path / "r"), "--report", f"junit={tmp_path / 'r'}")
    assert with_output.exit_code == 2 and "named by --output and by --report junit" in with_output.output
    assert reads == []
    assert not (tmp_path / "r").exists()


def test_html_without_its_extra_is_refused_before_any_input_is_read(monkeypatch, tmp_path, reads):
    monkeypatch.setitem(sys.modules, "jinja2", None)  # `import jinja2` raises ImportError
    for args in (["-f", "html"], ["--report", f"html={tmp_path / 'r.html'}"]):
        result = _run("summary", str(SEED / "sharded.log"), *args)
        assert result.exit_code == 2, args
        assert "needs jinja2" in result.output and "blaslog[html]" in result.output
        assert reads == []
        assert not (tmp_path / "r.html").exists()


def _options_of(command: click.Command) -> dict[str, tuple[str, ...]]:
    return {p.name: tuple(sorted(p.opts)) for p in command.params if isinstance(p, click.Option)}


def test_an_option_has_one_spelling_on_every_command():
    spellings: dict[str, set[tuple[str, ...]]] = {}
    owners: dict[str, set[str]] = {}
    for command in cli.commands.values():
        for dest, opts in _options_of(command).items():
            spellings.setdefault(dest, set()).add(opts)
            for opt in opts:
                owners.setdefault(opt, set()).add(dest)
    assert {dest: s for dest, s in spellings.items() if len(s) > 1} == {}
    assert {opt: d for opt, d in owners.items() if len(d) > 1} == {}
    for name, command in cli.commands.items():
        options = _options_of(command)
        if "-o" in {opt for opts in options.values() for opt in opts}:
            assert any(opts == ("--output", "-o") for opts in options.values()), name


@pytest.mark.parametrize(
    ("args", "instead"),
    [(["decode-flags", "--json", "0x40202"], "--format json"), (["probe", "--out", "x.json", "--help"], "")],
)
def test_deprecated_spellings_still_work_and_say_so(args, instead):
    result = CliRunner().invoke(cli, args)
    if instead:
        assert result.exit_code == 0
        assert f"--json is deprecated: use {instead}" in result.stderr
        assert '"hex": "0x40202"' in result.stdout
    for name, command in cli.commands.items():
        hidden = [p for p in command.params if isinstance(p, click.Option) and p.hidden]
        assert all(p.help and p.help.startswith("Deprecated: use ") for p in hidden), name
