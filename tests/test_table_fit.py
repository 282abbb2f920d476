"""Tables fitted to the terminal (issue 37, 6): at 80, 100 and 120 columns (COLUMNS), every command's table output
over the fixtures has no line wider than that; no cell is split inside a word (each word of a cell is in the
output whole, or abbreviated with …); the columns left out are named under the table; rows that take several
lines are set apart by a blank line. Each table has a declared priority of columns."""

from __future__ import annotations

import glob
import re
from collections.abc import Sequence
from typing import Any
from unittest import mock

import pytest
from click.testing import CliRunner

from blaslog.cli import cli
from blaslog.report import Report
from blaslog.reporters import table as table_module
from blaslog.reporters.table import ROWS_PRIORITY, SECTION_PRIORITY, TableReporter, Terminal, fit_table
from tests.conftest import FIXTURES, GENERATED, SEED

TUNABLEOP = FIXTURES / "tunableop"

#: What a word is (the spec, written apart from the code): white space separates words; inside one, a line
#: may break after `_ , / ; | =`, or after a hyphen that follows a letter, unless one of those follows.
_PIECE_END = re.compile(r"(?<=[_,/;|=])(?![_,/;|=-])|(?<=[A-Za-z]-)(?![_,/;|=-])")
_RULE = re.compile(r"-+(?:  -+)*")
_DROPPED = re.compile(r"(\d+) columns? not shown at (\d+) columns: ")
_NOTE_START = re.compile(r"^\d+ columns?(?: |$)", re.MULTILINE)

COMMANDS: dict[str, list[str]] = {
    "parse": ["parse", str(GENERATED / "lt_fp32_unsharded.stdout.log")],
    "parse-all": ["parse", str(GENERATED / "cublas_classic_fp16.log"), "--kind", "all"],
    "parse-numerics": ["parse", str(SEED / "sharded.log"), "--caps", str(SEED / "caps.json")],
    "summary": ["summary", str(GENERATED / "lt_fp32_tp4")],
    "summary-rocblas": ["summary", str(GENERATED / "rocblas_fp16_trace.log")],
    "check": ["check", str(GENERATED / "rocblas_fp16_trace.log")],
    "diff": [
        "diff",
        str(GENERATED / "lt_fp32_tp4"),
        str(GENERATED / "lt_fp32_unsharded.stdout.log"),
        "--caps",
        str(GENERATED / "caps.json"),
    ],
    "diff-runs": [
        "diff",
        "--ref",
        str(SEED / "unsharded.log"),
        str(SEED / "sharded.log"),
        str(SEED / "unsharded_ffn256.log"),
        str(SEED / "sharded_joined.log"),
        "--caps",
        str(SEED / "caps.json"),
    ],
    "diff-tunableop": ["diff", str(TUNABLEOP / "tp2" / "*.csv"), str(TUNABLEOP / "tp1" / "tunableop_results0.csv")],
    "check-tunableop": [
        "check",
        str(TUNABLEOP / "tp2-logs"),
        "--tunableop",
        *sorted(glob.glob(str(TUNABLEOP / "tp2" / "*.csv"))),
    ],
    "emulate": [
        "emulate",
        *("--gpu", "A100", "--shape", "64x1024x32", "--numerics", "0x40202", "--against", "0x80201"),
        *("--tp", "4", "--samples", "32"),
    ],
}


def pieces(text: str) -> list[str]:
    """The pieces of the words of `text`, in order: no line may break inside one."""
    return [p for word in text.split() for p in _PIECE_END.split(word) if p]


def expected_pieces(text: str, width: int) -> list[str]:
    """The pieces of `text` as a column `width` wide shows them: whole, or cut and ended with … when wider."""
    return [p if len(p) <= width else p[: width - 1] + "…" for p in pieces(text)]


def assert_cell(original: str, lines: list[str], width: int) -> None:
    """`lines` (a cell in a column `width` wide) hold the words of `original` in order, each whole or abbreviated,
    every line break at a piece's end."""
    want = expected_pieces(original, width)
    if not want and lines:  # an empty cell of a row is shown as a missing value is
        assert lines == ["-"], lines
        return
    at = 0
    for line in lines:
        assert len(line) <= width, (line, width)
        compact, built = line.replace(" ", ""), ""
        while len(built) < len(compact) and at < len(want):
            built += want[at]
            at += 1
        assert built == compact, f"{original!r} became {lines!r}: a line ends inside a word"
    assert at == len(want), f"{original!r} became {lines!r}: words missing"


def read_table(
    text: str, one_row: bool = False
) -> tuple[list[tuple[int, int]], list[list[str]], list[list[list[str]]], str]:
    """A fitted table read back: the columns' spans (from the rule under the header), each column's header lines,
    each row as its columns' lines (rows are the blocks between blank lines when there are any, else lines),
    and the note under the table ('' when none). With `one_row`, the body is one row."""
    lines = text.split("\n")
    rule = next(i for i, line in enumerate(lines) if _RULE.fullmatch(line))
    spans = [m.span() for m in re.finditer(r"-+", lines[rule])]
    body = lines[rule + 1 :]
    note_at = next((i for i, line in enumerate(body) if _NOTE_START.match(line)), len(body))
    note = " ".join(body[note_at:])
    body = body[:note_at]
    while body and not body[-1]:
        body.pop()

    def columns(block: list[str]) -> list[list[str]]:
        cut = [[line[start : end + 2].strip() for line in block] for start, end in spans]
        return [[text for text in column if text] or [""] for column in cut]

    blocks = [body] if one_row else [[line] for line in body]
    if "" in body:
        blocks = [block.split("\n") for block in "\n".join(body).split("\n\n")]
    return spans, columns(lines[:rule]), [columns(block) for block in blocks], note


def _kept(headers: Sequence[str], names: list[str]) -> list[int]:
    """Which of `headers` the table shows as `names` (in order; a header wider than the terminal abbreviated)."""
    kept: list[int] = []
    for i, header in enumerate(headers):
        if len(kept) < len(names) and _abbreviates(names[len(kept)], "".join(header.split())):
            kept.append(i)
    return kept


def _abbreviates(shown: str, text: str) -> bool:
    """`shown` is `text`, but where an ellipsis stands for the end of a word too wide for the terminal."""
    return re.fullmatch(".*?".join(map(re.escape, shown.split("…"))), text) is not None


def check_fitted(headers: Sequence[str], rows: Sequence[Sequence[str]], width: int, text: str) -> None:
    """Everything a fitted table promises, for `text` made of `headers` and `rows` in `width` columns."""
    assert max(len(line) for line in text.split("\n")) <= width
    spans, head, body, note = read_table(text, len(rows) == 1)
    shown = [" ".join(h) for h in head]
    # the columns shown are the table's in its order, each header's words whole; the others are named
    names = ["".join(h.split()) for h in shown]
    kept = _kept(headers, names)
    assert len(kept) == len(spans), (headers, shown)
    dropped = [h or "(untitled)" for i, h in enumerate(headers) if i not in kept]
    if dropped:
        found = _DROPPED.match(note)
        assert found and int(found.group(1)) == len(dropped) and int(found.group(2)) == width, note
        listed = note[found.end() :].replace(" ", "")
        # each name whole, but a word wider than the terminal, abbreviated as any word that wide is
        assert _abbreviates(listed, ",".join(dropped).replace(" ", "") + "(widentheterminaloruse-fjson/csv)"), note
    else:
        assert not note
    for (start, end), column, header in zip(spans, head, (headers[i] for i in kept), strict=True):
        assert_cell(header, [line for line in column if line], end - start)
    # one row per block: a row on several lines is set apart from the next by a blank line
    assert len(body) == len(rows), f"{len(rows)} rows read as {len(body)}:\n{text}"
    for row, cells in zip(rows, body, strict=True):
        for (start, end), i, lines in zip(spans, kept, cells, strict=True):
            assert_cell(row[i], [line for line in lines if line], end - start)
    if len(rows) > 1 and any(len(column) > 1 for cells in body for column in cells):
        found = _NOTE_START.search(text)
        assert "\n\n" in text[: found.start() if found else len(text)].strip("\n")


@pytest.fixture(scope="module")
def outputs() -> dict[tuple[str, int], tuple[str, list[tuple[list[str], list[list[str]], int, str]]]]:
    """Each command's stdout at 80, 100 and 120 columns (COLUMNS, stdout not a terminal), with the tables fitted."""
    if "emulate" in COMMANDS:
        pytest.importorskip("numpy")
    results: dict[tuple[str, int], tuple[str, list[tuple[list[str], list[list[str]], int, str]]]] = {}
    for name, args in COMMANDS.items():
        for width in (80, 100, 120):
            tables: list[tuple[list[str], list[list[str]], int, str]] = []

            def spy(headers: Any, rows: Any, width: int, *rest: Any, tables: Any = tables) -> str:
                text = fit_table(headers, rows, width, *rest)
                tables.append((list(headers), [list(r) for r in rows], width, text))
                return text

            with mock.patch.object(table_module, "fit_table", spy):
                result = CliRunner(env={"COLUMNS": str(width), "NO_COLOR": "1", "FORCE_COLOR": None}).invoke(
                    cli, [*args, "-q", "--exit-zero"] if args[0] in ("check", "diff") else [*args, "-q"]
                )
            assert result.exit_code == 0, (name, result.output)
            results[name, width] = (result.stdout, tables)
    return results


@pytest.mark.parametrize("width", [80, 100, 120])
@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_fits_the_terminal(outputs, name, width):
    stdout, tables = outputs[name, width]
    assert tables, "no table was fitted"
    too_wide = [line for line in stdout.splitlines() if len(line) > width]
    assert not too_wide, too_wide
    for headers, rows, at, text in tables:
        assert at == width and text in stdout
        check_fitted(headers, rows, width, text)


def test_narrow_terminals_leave_columns_out_and_say_so(outputs):
    stdout, _ = outputs["summary", 80]
    assert "columns not shown at 80 columns: batch, types, compute, threads" in " ".join(stdout.split())
    assert "(widen the terminal or use -f json/csv)" in " ".join(stdout.split())
    parse80 = outputs["parse", 80][0]
    assert "not shown at 80 columns: file, thread" in " ".join(parse80.split())
    assert parse80.startswith("line  function") and "algo" in parse80.split("\n")[0]  # file and thread go first


def test_the_old_failures_are_gone(outputs):
    """At 100, summary's rows were 11-line blocks of `column  value` lines with no separator; at 120, cells were
    split in the middle of a word (`cublasLtMatm` / `ul`, `_tp4/blaslt_3` / `21674.log`)."""
    summary100, _ = outputs["summary", 100]
    assert "calls  function" in summary100 and "\n  calls       32\n" not in summary100
    for name, width in outputs:
        text = outputs[name, width][0]
        assert "cublasLtMatm\n" not in text and "cublasLtMatm " not in text


# ---- each table declares the order its columns are left out in --------------------------------------------------


def test_every_table_has_a_declared_priority(outputs):
    seen: dict[str, set[str]] = {}

    def record(title: str, rows: Any, terminal: Terminal = table_module.PLAIN) -> str:
        if rows:
            seen.setdefault(title, set()).update(rows[0])
        return ""

    with mock.patch.object(table_module, "section", record):
        for args in COMMANDS.values():
            CliRunner(env={"COLUMNS": "100"}).invoke(cli, [*args, "-q"])
    assert set(seen) <= set(SECTION_PRIORITY), set(seen) - set(SECTION_PRIORITY)
    for title, columns in seen.items():
        if title != "Agreement with the reference per GEMM":  # its other columns are the runs, in order
            assert set(SECTION_PRIORITY[title]) == columns, title
    assert set(ROWS_PRIORITY) == {"parse", "summary", "emulate"}


def test_priorities_name_real_columns():
    from blaslog.views import PARSE_COLUMNS, parse_columns

    named = set(ROWS_PRIORITY["parse"])
    assert set(PARSE_COLUMNS) | set(parse_columns("all", False)) | {"numerics"} == named
    for title, order in SECTION_PRIORITY.items():
        assert len(set(order)) == len(order), title


def test_a_priority_decides_which_columns_go():
    headers = ["a", "b", "c", "d"]
    rows = [["x" * 30, "y" * 30, "z" * 30, "w" * 30]]
    text = fit_table(headers, rows, 70, ("a", "b", "c", "d"))
    assert " ".join(text.split()).endswith(
        "1 column not shown at 70 columns: d (widen the terminal or use -f json/csv)"
    )
    text = fit_table(headers, rows, 70, ("d", "c", "b", "a"))
    assert "1 column not shown at 70 columns: a " in text
    assert text.split("\n")[0].split() == ["b", "c", "d"]  # the order of the table is kept


# ---- the reporter ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("width", [80, 100, 120])
def test_the_reporter_fits_every_report(width):
    import blaslog
    from blaslog.views import check_report, parse_report, summary_report

    rocblas = blaslog.parse(str(GENERATED / "rocblas_fp16_trace.log"))
    reports: list[Report] = [
        parse_report(blaslog.parse(str(SEED / "sharded.log"))),
        check_report(rocblas.gemms, rocblas.files),
        summary_report(rocblas.gemms, rocblas.files),
        Report("diff"),
        Report("parse"),
    ]
    for report in reports:
        text = TableReporter(Terminal(width)).render(report)
        assert max(len(line) for line in text.splitlines()) <= width


def test_markup_and_control_characters_are_text():
    """Log text is untrusted: `[bold]` stays as it is written, control characters are shown escaped, and a
    header from a file name is escaped as its cells are."""
    text = table_module.fitted(
        ["run\x1b[2J", "[bold]x[/bold]"], [["\x1b]0;title\x07 [red]y", "::error::z"]], Terminal(60)
    )
    assert "\x1b" not in text and "\x07" not in text
    assert "\\x1b[2J" in text and "[red]y" in text and "[bold]x[/bold]" in text.replace("\n", "")
