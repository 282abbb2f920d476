"""The README documents every command and points at `--help` for the output formats, which lists each one a command
writes with its one line (from the reporters' declarations, so a new format needs no README edit); the README opens
with the two set-up commands."""

from __future__ import annotations

import re

from click.testing import CliRunner

from blaslog.cli import FORMATS, cli
from blaslog.reporters import REPORTERS, describe
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text()


def test_readme_opens_with_two_setup_commands():
    block = README.split("```sh\n", 1)[1].split("```", 1)[0].strip().splitlines()
    assert len(block) == 2
    assert block[0].startswith("pip install . && blaslog ")
    assert block[1] == "pip install -e '.[test,emulate]' && python -m pytest"


def test_every_command_is_in_the_readme():
    for command in cli.commands:
        assert f"blaslog {command}" in README, command
    assert "parquet" in README


def test_the_readme_points_at_help_for_the_formats():
    section = README.split("### Output formats\n", 1)[1].split("\n### ", 1)[0]
    assert "`blaslog COMMAND --help`" in section and "lists" in section


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_help_lists_every_format_of_a_command_with_its_line():
    """Each reporting command's --help lists the formats the registry says it writes, each with its
    description; the --format and --report choices are those formats."""
    assert set(FORMATS) == {"parse", "summary", "check", "diff", "emulate"}
    for command, names in FORMATS.items():
        text = CliRunner().invoke(cli, [command, "--help"], terminal_width=200).stdout
        listing = text.split("Output formats (-f/--format, --report FORMAT=PATH):\n", 1)[1].split("\n\n", 1)[0]
        listed = [line.split()[0] for line in listing.splitlines() if line.startswith("  ") and line[2] != " "]
        assert listed == list(names), command
        for name in names:
            if name in REPORTERS:
                assert command in REPORTERS.declaration(name, "commands"), (command, name)  # type: ignore[attr-defined]
                assert _one_line(f"{name} {describe(name)}") in _one_line(listing), (command, name)
        options = {p.name: p for p in cli.commands[command].params}
        assert tuple(options["fmt"].type.choices) == names  # type: ignore[attr-defined]


def test_ci_runs_the_readme_test_command():
    assert "python3 -m pytest" in (ROOT / ".ci" / "run").read_text()
