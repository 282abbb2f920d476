"""The CI examples in ci/ use blaslog the way its CLI works."""

from __future__ import annotations

import re
import shlex

import pytest
from click.testing import CliRunner

from blaslog.cli import cli
from tests.conftest import ROOT

FILES = sorted((ROOT / "ci").glob("*.yml"))


def test_there_is_a_github_workflow_and_a_gitlab_job():
    names = [p.name for p in FILES]
    assert "github-numerics.yml" in names and "gitlab-numerics.yml" in names


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_blaslog_command_in_the_examples_is_accepted(path):
    text = path.read_text()
    assert "CUBLASLT_LOG_LEVEL" in text and "CUBLASLT_LOG_FILE" in text
    joined = re.sub(r"\\\n\s*", " ", text)
    joined = re.sub(r"\n\s+--", " --", joined)
    commands = [line.strip().lstrip("- ").split("||")[0] for line in joined.splitlines() if "blaslog " in line
                and ("blaslog diff" in line or "blaslog probe" in line)]
    assert commands
    for command in commands:
        words = shlex.split(command[command.index("blaslog"):])[1:]
        # parse the options only: --help after them makes click validate names and choices without running
        result = CliRunner().invoke(cli, [words[0], "--help"])
        assert result.exit_code == 0
        for option in (w.split("=")[0] for w in words if w.startswith("--")):
            assert option in result.stdout, (path.name, option)
        if "--format" in words:
            assert words[words.index("--format") + 1] in ("github", "sarif", "junit", "gitlab", "table")
