"""The table on a terminal: fitted to its width (long cells and text wrapped, never cut), classes and differing
fields in colour (NO_COLOR, FORCE_COLOR and --color honoured); piped, the plain text scripts read, unchanged,
unless COLUMNS says a width. The command runs in a pseudo-terminal of 80 to 200 columns (tests/test_table_fit.py
checks every command's tables in detail)."""

from __future__ import annotations

import errno
import fcntl
import os
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from blaslog import api
from blaslog.report import FINDING_CLASSES
from blaslog.reporters import get_reporter
from blaslog.reporters.table import Terminal, terminal_for

ROOT = Path(__file__).resolve().parents[1]
GENERATED = ROOT / "fixtures" / "generated"
DIFF = [
    "diff",
    str(GENERATED / "lt_fp32_tp4"),
    str(GENERATED / "lt_fp32_unsharded.stdout.log"),
    "--caps",
    str(GENERATED / "caps.json"),
    "--exit-zero",
    "-q",
]
SUMMARY = ["summary", str(GENERATED / "lt_fp32_tp4"), "-q"]
ANSI = re.compile(r"\x1b\[[0-9;]*m")

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pseudo-terminals as Linux has them")


def _env(**changes: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES")}
    env["TERM"] = "xterm-256color"
    env.update({k: v for k, v in changes.items() if v is not None})
    return env


def in_terminal(args: list[str], columns: int, **env: str | None) -> str:
    """stdout of `blaslog ARGS` run with its stdout on a pseudo-terminal `columns` wide (stderr apart)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "blaslog", *args],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=subprocess.PIPE,
        env=_env(**{"COLUMNS": str(columns), **env}),
        cwd=ROOT,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 1 << 16)
        except OSError as exc:  # EIO: the other end is closed
            if exc.errno != errno.EIO:
                raise
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    process.stderr.read()
    process.stderr.close()
    assert process.wait(30) == 0
    return b"".join(chunks).decode().replace("\r\n", "\n")


def piped(args: list[str], **env: str | None) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "blaslog", *args], capture_output=True, text=True, env=_env(**env), cwd=ROOT, check=True
    )
    return result.stdout


def _words(text: str) -> str:
    return " ".join(ANSI.sub("", text).split())


@pytest.mark.parametrize("columns", [80, 100, 120, 200])
@pytest.mark.parametrize("args", [DIFF, SUMMARY], ids=["diff", "summary"])
def test_tables_and_text_fit_the_terminal(args, columns):
    text = in_terminal(args, columns)
    lines = ANSI.sub("", text).splitlines()
    assert max(len(line) for line in lines) <= columns, max(lines, key=len)
    assert "..." not in _words(text).replace("cluster ...", "")  # wrapped, never cut


@pytest.mark.parametrize("columns", [80, 200])
def test_long_cells_and_explanations_are_wrapped_in_full(columns):
    text = _words(in_terminal(DIFF, columns))
    report = api.diff(
        str(GENERATED / "lt_fp32_tp4"),
        str(GENERATED / "lt_fp32_unsharded.stdout.log"),
        caps=str(GENERATED / "caps.json"),
    )
    for finding in report.findings:
        assert " ".join(finding.explanation.split()) in text
        assert " ".join(finding.title.split()) in text
    for row in FINDING_CLASSES.values():
        if row.name in ("precision", "reduction", "schedule"):
            assert row.meaning in text  # the meaning column in full: "... data or compute types, flags)"


def test_classes_and_changed_fields_are_coloured_on_a_terminal():
    text = in_terminal(DIFF, 120)
    precision = FINDING_CLASSES["precision"]
    assert f"\x1b[{precision.ansi}mPRECISION\x1b[0m" in text
    assert f"\x1b[{precision.ansi}mprecision\x1b[0m" in text
    assert "\x1b[1;33m21\x1b[0m" in text  # algoId 0 vs 21


@pytest.mark.parametrize(
    "env,option", [({"NO_COLOR": "1"}, []), ({}, ["--color", "never"]), ({"FORCE_COLOR": "1"}, ["--color", "never"])]
)
def test_no_colour_when_asked(env, option):
    text = in_terminal([*DIFF, *option], 120, **env)
    assert "\x1b[" not in text
    assert max(len(line) for line in text.splitlines()) <= 120  # still fitted


def test_piped_output_is_the_plain_text():
    expected = get_reporter("table").render(
        api.diff(
            str(GENERATED / "lt_fp32_tp4"),
            str(GENERATED / "lt_fp32_unsharded.stdout.log"),
            caps=str(GENERATED / "caps.json"),
        )
    )
    assert piped(DIFF) == expected  # no COLUMNS: no width to fit
    assert "\x1b[" not in expected and "data or comp..." in expected  # today's text, cut as it always was


@pytest.mark.parametrize("columns", [80, 100, 120])
def test_piped_with_columns_is_fitted_to_them(columns):
    """COLUMNS wins, on a terminal or piped (`COLUMNS=100 blaslog summary | less`)."""
    text = piped(SUMMARY, COLUMNS=str(columns))
    assert max(len(line) for line in text.splitlines()) <= columns
    assert text == ANSI.sub("", in_terminal(SUMMARY, 200, COLUMNS=str(columns)))  # COLUMNS wins on a terminal too
    assert "\x1b[" not in text


def test_colour_when_forced_even_piped():
    forced = piped(DIFF, FORCE_COLOR="1")
    assert "\x1b[" in forced
    assert ANSI.sub("", piped([*DIFF, "--color", "always"])) == ANSI.sub("", forced)
    assert "\x1b[" not in piped(DIFF, FORCE_COLOR="1", NO_COLOR="1")


class _Stream:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(
    "tty,choice,env,colored",
    [
        (True, "auto", {}, True),
        (True, "auto", {"NO_COLOR": "1"}, False),
        (True, "auto", {"NO_COLOR": ""}, True),
        (True, "never", {}, False),
        (False, "auto", {}, False),
        (False, "always", {}, True),
        (False, "auto", {"FORCE_COLOR": "1"}, True),
        (False, "auto", {"FORCE_COLOR": "0"}, False),
        (True, "auto", {"TERM": "dumb"}, False),
        (True, "always", {"NO_COLOR": "1"}, True),
    ],
)
def test_the_colour_rules(tty, choice, env, colored):
    terminal = terminal_for(_Stream(tty), choice, env)
    assert terminal.color is colored
    assert (terminal.width is not None) is tty


def test_a_file_gets_the_plain_text():
    assert terminal_for(None, "auto", {}) == Terminal()
    assert terminal_for(None, "auto", {"COLUMNS": "100"}) == Terminal()  # -o FILE: COLUMNS is for the screen


class _Sized(_Stream):
    encoding = "utf-8"

    def fileno(self) -> int:
        raise OSError("not a terminal here")


@pytest.mark.parametrize(
    "tty,env,width",
    [
        (False, {}, None),
        (False, {"COLUMNS": "100"}, 100),
        (True, {"COLUMNS": "90"}, 90),
        (False, {"COLUMNS": " 120 "}, 120),
        (False, {"COLUMNS": "0"}, None),
        (False, {"COLUMNS": "wide"}, None),
        (False, {"COLUMNS": "-5"}, None),
        (False, {"COLUMNS": "٣"}, None),  # a digit, not an ASCII one
    ],
)
def test_the_width_rules(tty, env, width):
    """COLUMNS (a positive number) wins; else a terminal's width; else, piped, none (the plain text)."""
    assert terminal_for(_Sized(tty), "auto", env).width == width


def test_a_terminal_without_columns_has_its_width():
    assert (terminal_for(_Sized(True), "auto", {}).width or 0) > 0


def test_an_encoding_without_the_ellipsis_gets_a_tilde():
    ascii_stream = _Sized(True)
    ascii_stream.encoding = "ascii"  # type: ignore[misc]
    assert terminal_for(ascii_stream, "auto", {"COLUMNS": "80"}).ellipsis == "~"
    assert terminal_for(_Sized(True), "auto", {"COLUMNS": "80"}).ellipsis == "…"
