"""The README documents every command and output format, and opens with the two set-up commands."""

from __future__ import annotations

from blaslog.cli import cli
from blaslog.reporters import REPORTERS
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text()


def test_readme_opens_with_two_setup_commands():
    block = README.split("```sh\n", 1)[1].split("```", 1)[0].strip().splitlines()
    assert len(block) == 2
    assert block[0].startswith("pip install . && blaslog ")
    assert block[1] == "pip install -e '.[test,emulate]' && python -m pytest"


def test_every_command_and_format_is_in_the_readme():
    for command in cli.commands:
        assert f"blaslog {command}" in README, command
    for name in REPORTERS:
        assert f"`{name}`" in README, name
    assert "parquet" in README


def test_ci_runs_the_readme_test_command():
    assert "python3 -m pytest" in (ROOT / ".ci" / "run").read_text()
