"""Untrusted text (log lines, file names, caps values) never forms a GitHub workflow command, in either syntax,
in any command's output or on stderr: outputs are read here the way the runner reads them
(actions/runner src/Runner.Common/ActionCommand.cs: TryParseV2 for `::cmd::` at a line start, TryParse for
`##[cmd ...]` anywhere in a line)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from blaslog.cli import FORMATS, cli
from blaslog.reporters._base import defuse_commands

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "fixtures" / "seed"

#: The runner's registered commands (ActionCommandManager and its extensions).
REGISTERED = {
    "set-env",
    "set-output",
    "add-path",
    "add-mask",
    "debug",
    "warning",
    "error",
    "notice",
    "group",
    "endgroup",
    "echo",
    "stop-commands",
    "save-state",
    "add-matcher",
    "remove-matcher",
    "internal-set-repo-path",
}
PAYLOADS = [
    "##[set-output name=verdict]pass",
    "::set-output name=verdict::pass",
    "##[add-mask]x",
    "##[error]forged",
    "##vso[task.setvariable variable=verdict]pass",
    "##teamcity[buildStatus status='SUCCESS']",
]
#: Azure Pipelines' logging commands and TeamCity's service messages: the agents find these anywhere in a line.
OTHER_RUNNERS = re.compile(r"##(?:vso|teamcity)\[", re.IGNORECASE)


def runner_commands(text: str) -> list[str]:
    """The workflow commands the GitHub runner would execute in `text` (both syntaxes), and the lines with an
    Azure Pipelines or TeamCity command."""
    found = []
    for line in re.split(r"\r\n|\r|\n", text):  # the runner's StreamReader.ReadLine
        if OTHER_RUNNERS.search(line):
            found.append(line)
            continue
        stripped = line.lstrip()
        if stripped.startswith("::"):
            end = stripped.find("::", 2)
            name = stripped[2 : end if end > 0 else None].split(" ")[0].lower()
            if end > 0 and name:
                found.append(line)
                continue
        at = line.find("##[")
        if at >= 0:
            rest = line[at + 3 :]
            end = rest.find("]")
            if end > 0 and rest[:end].split(" ")[0].lower() in REGISTERED:
                found.append(line)
    return found


def test_the_runner_reader_sees_both_syntaxes():
    assert runner_commands("x ##[set-output name=a]b") and runner_commands("  ::error::x")
    assert not runner_commands("x ##\\[set-output name=a]b") and not runner_commands("| ::error::x")
    assert runner_commands("x ##vso[task.complete]") and runner_commands("##teamcity[message text='x']")
    assert not runner_commands("x ##vso\\[task.complete]") and not runner_commands("##teamcity\\u005bmessage]")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    """A folder whose log, file name and caps carry workflow commands in every text field."""
    root = tmp_path_factory.mktemp("hostile")
    payload = PAYLOADS[0]
    folder = root / "##[set-output name=dir]x"
    folder.mkdir()
    sharded = (SEED / "sharded.log").read_text()
    lines = [sharded.rstrip("\n")]
    for text in PAYLOADS:
        lines.append(f"[2026-06-06 15:31:42][cublasLt][1][Error][cublasLtMatmul] {text}")
        lines.append(f"[2026-06-06 15:31:42][cublasLt][1][Api][{text}] Adesc=[type={text}]")
        lines.append(f"[2026-06-06 15:31:42][cublasLt][1][Trace][cublasLtMatmul] {text} extra={text}")
        lines.append(text)
    (folder / f"{payload}.log").write_text("\n".join(lines) + "\n")
    shutil.copy(SEED / "unsharded.log", folder / "unsharded.log")
    caps = json.loads((SEED / "caps.json").read_text())
    caps["library_version"] = PAYLOADS[4]
    for entry in caps["entries"]:
        entry["summary"] = PAYLOADS[5]
    (folder / "caps.json").write_text(json.dumps(caps))
    return folder


def _commands(folder: Path) -> list[list[str]]:
    log = str(folder / f"{PAYLOADS[0]}.log")
    caps = str(folder / "caps.json")
    out = []
    for fmt in FORMATS["parse"]:
        if fmt != "parquet":
            out.append(["parse", "--kind", "all", log, "--caps", caps, "-f", fmt])
    out += [["summary", log, "--caps", caps, "-f", fmt] for fmt in FORMATS["summary"]]
    out += [["check", log, "--caps", caps, "-f", fmt] for fmt in FORMATS["check"]]
    out += [["diff", log, str(folder / "unsharded.log"), "--caps", caps, "-f", fmt] for fmt in FORMATS["diff"]]
    out += [["diff", log, str(folder / "no-such-##[error]file.log")]]
    return out


def test_no_output_or_error_line_is_a_workflow_command(hostile):
    runner = CliRunner()
    for args in _commands(hostile):
        result = runner.invoke(cli, args)
        assert result.exit_code in (0, 1, 2), (args, result.output)
        own = {"github"} if "github" in args else set()
        for stream in (result.stdout, result.stderr):
            forged = [
                line
                for line in runner_commands(stream)
                if not (own and line.startswith(("::error ", "::warning ", "::notice ")))
            ]
            assert not forged, (args, forged)
        if "github" in args:
            # blaslog's own annotations: exactly the ones it meant, their text escaped
            for line in runner_commands(result.stdout):
                _head, _, message = line.partition("::")[2].partition("::")
                assert "##[" not in message and not OTHER_RUNNERS.search(message) and "\n" not in message


@given(st.text(min_size=0, max_size=60))
@settings(max_examples=200, deadline=None)
def test_defused_text_never_parses_as_a_command(text):
    for payload in ("::error::x", "##[set-output name=a]b", "##vso[task.complete]b", "##TeamCity[x]"):
        for style in ("text", "xml"):
            assert not runner_commands(defuse_commands(text + payload + text, style))
            assert not runner_commands(defuse_commands(payload + "\n" + text, style))
        # the json style is for JSON documents (no raw line end inside a string: no line starts with `::`)
        for document in ({"t": text + payload + text}, [payload + "\n" + text]):
            for indent in (None, 2):
                assert not runner_commands(defuse_commands(json.dumps(document, indent=indent), "json"))


def test_json_and_xml_keep_the_text_exactly():
    raw = json.loads(defuse_commands(json.dumps({"t": "a ##[error]b"}), "json"))
    assert raw == {"t": "a ##[error]b"}
    import xml.etree.ElementTree as ET

    element = ET.fromstring(defuse_commands("<a>x ##[error]y</a>", "xml"))
    assert element.text == "x ##[error]y"


@pytest.mark.parametrize(
    "path,uri",
    [
        ("r un/a.log", "r%20un/a.log"),
        ("x#1%.log", "x%231%25.log"),
        ("-", "stdin"),
        ("/abs/ünï.log", "/abs/%C3%BCn%C3%AF.log"),
        ("a\nb.log", "a%0Ab.log"),
    ],
)
def test_sarif_uris_are_percent_encoded(path, uri):
    from blaslog.reporters.sarif import artifact_uri

    assert artifact_uri(path) == uri


@pytest.mark.parametrize("density", [0.0, 0.0005, 0.01, 0.3, 0.9])
def test_double_hash_is_found_whatever_the_number_of_single_ones(density):
    """defuse_old_syntax looks for `##` from one `#` to the next while they are few: it must find every `##` that
    `in` finds, in short and long texts, with `#` rare or common."""
    import random

    from blaslog.reporters._base import _double_hash

    rng = random.Random(int(density * 1e4))
    for size in (0, 1, 2, 1023, 1024, 5000, 70_000):
        for _ in range(20):
            text = "".join("#" if rng.random() < density else "x" for _ in range(size))
            if size and rng.random() < 0.5:
                at = rng.randrange(size)
                text = text[:at] + "##" + text[at:]
            assert _double_hash(text) == ("##" in text)
