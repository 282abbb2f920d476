"""Human-readable tables: the default output.

Piped or written with -o, the plain layout (tabulate's ``simple`` format, cells cut as always), which scripts read.
On a terminal, and piped when COLUMNS is set, each table is fitted to the width (see ``fit_table``): cells wrap
at spaces and after ``_ , / ; | = -``, a word longer than its column is abbreviated with ``…`` (never split), rows
that take several lines are set apart by a blank line, and columns that do not fit are left out by the table's
priority (``SECTION_PRIORITY``, ``ROWS_PRIORITY``), with a line under the table naming them.

Why not rich (its Table has overflow, min_width, no_wrap, ratio)? Measured for issue 37 (rich 15.0.0 against
tabulate 0.10.0, on this project's two-core machine): importing rich.console and rich.table costs about what
importing tabulate does (46-53 ms against 49-51 ms; tabulate stays either way for the plain layout), but rich
brings pygments, markdown-it-py and mdurl (13 MB installed, against none: tabulate is already a dependency), and
still does neither thing asked here: it breaks lines at spaces only (a path or COMPUTE_32F_FAST_TF32 is one word,
folded through its middle or cut), and it never leaves a column out and says so. Log text is untrusted: with rich
every cell would have to be a Text (a plain str is read as console markup: ``[bold]`` in a log would be
interpreted), with highlighting and emoji codes turned off; and its layout changes between releases, where the
tests here pin text. Tried at 60 columns, rich 15 folded ``fixtures/generated/...`` into ``fixtures/g`` /
``enerated/l``, swallowed ``[bold]``, turned ``:smile:`` into an emoji and passed a raw ESC through. So the
fitting is the small set of functions below (``fit_table``, ``layout``, ``wrap_cell``), tested by property.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import textwrap
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from tabulate import tabulate

from blaslog.report import FINDING_CLASSES, Report, ci_level
from blaslog.reporters._base import Reporter, cell, column_cells, defuse_commands, printable, register


@dataclass(frozen=True, slots=True)
class Terminal:
    """How to lay out for a terminal: its width and whether to colour. The default (no width, no colour) is the
    plain text that scripts read when the output is piped, unchanged by any terminal."""

    width: int | None = None
    """Columns to fit tables and text into (None: the plain layout, cells cut as always; coloured, 100)."""
    color: bool = False
    """Colour finding classes and differing fields (ANSI SGR)."""
    ellipsis: str = "…"
    """What ends a word abbreviated to fit its column: `…`, or `~` where the output's encoding lacks it."""

    def paint(self, text: str, code: str) -> str:
        """`text` in SGR colour `code` when colouring."""
        return f"\x1b[{code}m{text}\x1b[0m" if self.color and code and code != "0" else text

    def paint_class(self, name: str, text: str | None = None) -> str:
        """`text` (by default the class name) in the colour of finding class `name`."""
        return self.paint(name if text is None else text, FINDING_CLASSES[name].ansi if name in FINDING_CLASSES else "")


PLAIN = Terminal()

#: --color values.
COLOR_CHOICES = ("auto", "always", "never")


def terminal_for(stream: Any, color: str = "auto", environ: Mapping[str, str] | None = None) -> Terminal:
    """How to write the table to `stream` (None: a file, given with -o). Width: COLUMNS when it is set to a
    number, on a terminal or piped (``COLUMNS=100 blaslog summary | less``); else the terminal's width; piped
    without COLUMNS, or to a file, none: the plain text scripts read, unchanged by any terminal. Colour:
    `always`, `never`, or with `auto` on a terminal unless NO_COLOR is set (no-color.org), and anywhere when
    FORCE_COLOR is set (not `0`); TERM=dumb turns `auto` colour off."""
    env = os.environ if environ is None else environ
    try:
        tty = stream is not None and bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        tty = False
    if color == "always":
        colored = True
    elif color == "never" or env.get("NO_COLOR"):
        colored = False
    elif env.get("FORCE_COLOR", "") not in ("", "0", "false"):
        colored = True
    else:
        colored = tty and env.get("TERM") != "dumb"
    columns = env.get("COLUMNS", "").strip()
    if stream is None:
        width = None
    elif columns.isascii() and columns.isdigit() and int(columns) > 0:
        width = int(columns)
    elif tty:
        width = _terminal_width(stream)
    else:
        width = None
    try:
        "…".encode(getattr(stream, "encoding", None) or "utf-8")
        ellipsis = "…"
    except (LookupError, UnicodeError):
        ellipsis = "~"
    return Terminal(width, colored, ellipsis)


def _terminal_width(stream: Any) -> int:
    """The width of the terminal `stream` is, else of the one the process runs in, else 80."""
    try:
        width = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        width = 0
    return width if width > 0 else shutil.get_terminal_size().columns


T = TypeVar("T")

#: The least width a table is fitted into (a narrower COLUMNS is read as this).
_MIN_WIDTH = 20
#: The width of coloured output that has none (FORCE_COLOR or --color always, piped without COLUMNS).
_DEFAULT_WIDTH = 100


def simple_table(headers: list[str], body: list[list[str]]) -> str:
    """``tabulate(body, headers, tablefmt="simple", disable_numparse=True)`` of cells that are strings, byte for
    byte, written here when every header and cell is printable ASCII (a table of 25,000 distinct calls takes
    tabulate a second: it finds each cell's type and width one function call at a time). Other text (wide
    characters, tabs) goes to tabulate, which measures it."""
    text = "".join(headers) + "".join(map("".join, body))
    if not (text.isascii() and text.isprintable()) or any(h != h.strip() for h in headers):
        return tabulate(body, headers=headers, tablefmt="simple", disable_numparse=True)
    # tabulate strips each cell, left-aligns text, makes a column at least 2 wider than its header, puts two
    # spaces between columns, and strips each line's end
    body = [[value.strip() for value in row] for row in body]
    widths = [max(len(h) + 2, max((len(row[i]) for row in body), default=0)) for i, h in enumerate(headers)]
    line = "  ".join(f"{{:<{w}}}" for w in widths).format
    return "\n".join(
        [line(*headers).rstrip(), "  ".join("-" * w for w in widths), *(line(*row).rstrip() for row in body)]
    )


def streamed_table(
    rows: Iterable[dict[str, Any]], columns: list[str], empty: str = "no GEMM records\n"
) -> Iterator[str]:
    """The parse table of `rows` (``simple_table`` of their cells, and a line end), in chunks: their cells go to
    a temporary file as the rows come (one line each, tab-separated: a cell holds no control character), which
    gives the columns' widths, and is read back for the lines. The rows are never all held (a 100 MB log made
    some 700 MB of them), except where a cell is not printable ASCII, which tabulate measures."""
    limits = {c: 160 if c in ("algorithms", "algo") else 60 for c in columns}
    widths = [len(h) + 2 for h in columns]
    plain = all(h.isascii() and h.isprintable() and h == h.strip() for h in columns)
    count = 0
    with tempfile.TemporaryFile("w+", encoding="utf-8", newline="\n", prefix="blaslog-") as spool:
        for batch in _batched(rows):
            count += len(batch)
            cells = _cells(batch, columns, limits)
            for i, values in enumerate(zip(*cells, strict=True)):
                text = "".join(values)
                plain = plain and text.isascii() and text.isprintable()
                widths[i] = max(widths[i], max(len(v.strip()) for v in values))
            spool.write("".join("\t".join(row) + "\n" for row in cells))
        if not count:
            yield empty
            return
        spool.seek(0)
        if not plain:
            yield simple_table(columns, [line[:-1].split("\t") for line in spool]) + "\n"
            return
        line = "  ".join(f"{{:<{w}}}" for w in widths).format
        yield line(*columns).rstrip() + "\n" + "  ".join("-" * w for w in widths) + "\n"
        for lines in _batched(spool):
            yield "".join(line(*(v.strip() for v in text[:-1].split("\t"))).rstrip() + "\n" for text in lines)


def _batched(rows: Iterable[T], size: int = 4096) -> Iterator[list[T]]:
    batch: list[T] = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _cells(rows: list[dict[str, Any]], columns: list[str], limits: Mapping[str, int] | None = None) -> list[list[str]]:
    """The plain table's cells of `rows` (the values under `columns`, each cut to its column's limit, 80 unless
    `limits` says), made a column at a time."""
    by_column = [column_cells([row.get(c) for row in rows], (limits or {}).get(c, 80)) for c in columns]
    return [list(row) for row in zip(*by_column, strict=True)]


#: Each table's columns, most wanted first: on a narrow terminal the last are left out first (and named under
#: the table). A column a list does not name comes after those it names, in the table's order (the runs of
#: "Agreement with the reference per GEMM" are named by their paths). The columns themselves are made in
#: blaslog.views, blaslog.api and blaslog.tunableop; tests/test_table_fit.py checks that every table the
#: commands print over the fixtures has its list here, and that each list names columns its table has.
SECTION_PRIORITY: dict[str, tuple[str, ...]] = {
    # summary
    "Overview": ("gemm_calls", "signatures", "signatures_with_several_algorithms", "inputs", "threads"),
    "Inputs": (
        "file",
        "gemm_records",
        "formats",
        "unparsable_lines",
        "lines",
        "other_records",
        "foreign_lines",
    ),
    # diff
    "Settings that differ": ("setting", "sharded", "unsharded"),
    "TunableOp validators": ("validator", "value", "reference", "same", "file"),
    "Coverage": ("side", "file", "rank", "coverage", "paired", "unmatched"),
    "Comparisons": (
        "sharded",
        "unsharded",
        "findings",
        "tp",
        "pairs",
        "identical",
        "tp_how",
        "tp_confidence",
        "unmatched_sharded",
        "unmatched_unsharded",
    ),
    "Runs against the reference": ("run", "findings", "tp", "pairs", "identical", "files"),
    "Agreement with the reference per GEMM": ("gemm",),
    # check --tunableop
    "TunableOp against the logs": (
        "log",
        "rank",
        "not_as_tuned",
        "never_tuned",
        "as_tuned",
        "rows_never_ran",
        "no_solution_logged",
        "tunableop",
        "calls",
        "tuned_rows",
    ),
    # diff and check
    "Findings by class": ("class", "findings", "level", "meaning", "occurrences"),
    # emulate
    "Emulation": ("", "value"),
}
#: The same for the rows of each command's main table.
ROWS_PRIORITY: dict[str, tuple[str, ...]] = {
    "parse": (
        "line",
        "function",
        "trans",
        "m",
        "n",
        "k",
        "algo",
        "kind",
        "level",
        "event",
        "text",
        "compute_type",
        "numerics",
        "a_type",
        "file",
        "batch_count",
        "thread",
    ),
    "summary": ("calls", "function", "trans", "m", "n", "k", "algorithms", "compute", "types", "batch", "threads"),
    "emulate": ("side", "arithmetic", "max vs FP64", "median vs FP64", "tp"),
}


def section(title: str, rows: list[dict[str, object]], terminal: Terminal = PLAIN) -> str:
    """A titled table (fitted to the terminal's width, long cells wrapped, when `terminal` has one)."""
    if not rows:
        return f"{title}: none\n"
    headers = list(rows[0].keys())
    if terminal.width is None and not terminal.color:
        return f"{title}\n{simple_table(headers, _cells(rows, headers))}\n"
    table = fitted(
        headers, [[r.get(h) for h in headers] for r in rows], terminal, priority=SECTION_PRIORITY.get(title, ())
    )
    return f"{title}\n{table}\n"


def fitted(
    headers: list[str],
    rows: list[list[object]],
    terminal: Terminal,
    paint: dict[int, str] | None = None,
    priority: Sequence[str] = (),
) -> str:
    """A table no wider than the terminal (see ``fit_table``); `paint` colours the cells of a column by the
    finding class they name; `priority` orders the columns for leaving out (the first are kept longest)."""
    classes = {i for i, what in (paint or {}).items() if what == "class"}
    return fit_table(
        [printable(h) for h in headers],
        [[cell(value, 100_000) for value in row] for row in rows],
        max(terminal.width or _DEFAULT_WIDTH, _MIN_WIDTH),
        priority,
        terminal.ellipsis,
        (lambda i, text: terminal.paint_class(text) if i in classes else text) if classes and terminal.color else None,
    )


#: Where a cell's line may break besides white space: after one of these (kept at the end of the line), or
#: after a hyphen that follows a letter (``rocblas-`` / ``trace``, not the sign of ``-1``).
_BREAK_AFTER = re.compile(r"(?<=[_,/;|=])(?![_,/;|=-])|(?<=[A-Za-z]-)(?![_,/;|=-])")
#: The widest a column's floor gets (for its longest word, or for its longest cell in _MOST_LINES lines): past
#: it, a word is abbreviated and a cell takes more lines rather than the table losing a column for them.
_WORD_FLOOR = 20
_MOST_LINES = 4


def words_of(text: str) -> list[list[str]]:
    """The words of a cell, each as the pieces a line may break between: ``R_32F/R_32F`` is one word of pieces
    ``R_``, ``32F/``, ``R_``, ``32F``. No piece is ever split."""
    return [[piece for piece in _BREAK_AFTER.split(word) if piece] for word in text.split()]


def text_width(text: str) -> int:
    """Columns `text` takes on a terminal: 2 for each wide (East Asian) character, 0 for a combining mark or a
    format character such as a zero-width joiner, 1 for the others."""
    if text.isascii():
        return len(text)
    return sum(_char_width(c) for c in text)


def _char_width(char: str) -> int:
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _cut(text: str, width: int) -> str:
    """The longest start of `text` that takes at most `width` columns."""
    if text.isascii():
        return text[:width]
    used = 0
    for i, char in enumerate(text):
        used += _char_width(char)
        if used > width:
            return text[:i]
    return text


def abbreviate(word: str, width: int, ellipsis: str = "…") -> str:
    """`word` when it fits in `width` columns, else its start and `ellipsis` in exactly that many or fewer."""
    if text_width(word) <= width:
        return word
    return _cut(word, max(width - text_width(ellipsis), 0)) + _cut(ellipsis, width)


def wrap_cell(text: str, width: int, ellipsis: str = "…") -> list[str]:
    """`text` in lines of at most `width` columns (at least one line): broken at white space (runs of it read as
    one space) and after the characters of ``_BREAK_AFTER``, never inside a piece of ``words_of``; a piece wider
    than `width` is abbreviated with `ellipsis`."""
    if text_width(text) <= width and "  " not in text and text == text.strip():
        return [text]
    lines: list[str] = []
    line, used = "", 0
    for word in words_of(text):
        for j, piece in enumerate(word):
            piece = abbreviate(piece, width, ellipsis)
            size = text_width(piece)
            gap = 1 if j == 0 and line else 0
            if line and used + gap + size <= width:
                line, used = line + " " * gap + piece, used + gap + size
            else:
                if line:
                    lines.append(line)
                line, used = piece, size
    lines.append(line)
    return lines


@dataclass(frozen=True, slots=True)
class Layout:
    """Which columns of a table are shown, and how wide, to fit a width."""

    shown: tuple[int, ...]
    """The indexes of the columns shown, in the table's order."""
    widths: tuple[int, ...]
    """The width of each shown column."""
    dropped: tuple[int, ...]
    """The indexes of the columns left out, in the table's order."""


def layout(headers: Sequence[str], rows: Sequence[Sequence[str]], width: int, priority: Sequence[str] = ()) -> Layout:
    """The columns of a table that fit in `width` (two spaces between columns), and their widths.

    Each column needs at least its floor: its widest cell, or less when longer: its longest word, or the width
    that puts its longest cell in ``_MOST_LINES`` lines, when wider (either up to ``_WORD_FLOOR``), its header's
    longest word, and 6 columns. While the floors do not fit, the column last in `priority` is left out (the
    columns `priority` does not name come after those it names, in table order; one column is always shown).
    The room left then goes to the columns by their natural width, headers wrapping at their words first and
    then the widest cells giving way, so that the columns that wrap are the long ones."""
    count = len(headers)
    natural, soft, floor = _column_widths(headers, rows)
    rank = {name: place for place, name in enumerate(priority)}
    order = sorted(range(count), key=lambda i: (rank.get(headers[i], len(rank)), i))  # most wanted first
    shown = sorted(order)
    while len(shown) > 1 and sum(floor[i] for i in shown) + 2 * (len(shown) - 1) > width:
        shown.remove(next(i for i in reversed(order) if i in shown))
    room = width - 2 * (len(shown) - 1)
    if sum(natural[i] for i in shown) <= room:
        widths = [natural[i] for i in shown]
    elif len(shown) == 1:
        widths = [max(room, 1)]
    else:  # headers wrap first, then the widest cells give way
        target = natural if sum(soft[i] for i in shown) <= room else soft
        widths = _shared_out(shown, order, floor, target, room)
    return Layout(tuple(shown), tuple(widths), tuple(i for i in range(count) if i not in shown))


def _column_widths(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> tuple[list[int], list[int], list[int]]:
    """(natural, soft, floor) width of each column: its widest cell or header; its widest cell or header's
    longest word (the header wrapped at its words); its floor (see :func:`layout`)."""
    count = len(headers)
    body = [0] * count  # the widest cell
    longest = [max((text_width(p) for w in words_of(h) for p in w), default=0) for h in headers]
    header_floor = list(longest)
    for i in range(count):
        for text in {row[i] for row in rows}:
            size = text_width(text)
            body[i] = max(body[i], size)
            if size > longest[i]:  # only a cell longer than the longest word so far can hold a longer one
                longest[i] = max(longest[i], max((text_width(p) for w in words_of(text) for p in w), default=0))
    natural = [max(b, text_width(h)) for b, h in zip(body, headers, strict=True)]
    soft = [max(b, f) for b, f in zip(body, header_floor, strict=True)]  # the header wrapped at its words
    floor = [
        min(soft[i], max(6, header_floor[i], min(max(longest[i], -(-body[i] // _MOST_LINES)), _WORD_FLOOR)))
        for i in range(count)
    ]
    return natural, soft, floor


def _shared_out(shown: list[int], order: list[int], floor: list[int], target: list[int], room: int) -> list[int]:
    """The widths of the `shown` columns in `room`: each column cut to a level (not below its floor) that fits,
    and what is left over widening the columns first in `order` (the most wanted) up to their `target`."""
    low, high = 0, max(target[i] for i in shown)
    while low < high:
        level = (low + high + 1) // 2
        if sum(max(floor[i], min(target[i], level)) for i in shown) <= room:
            low = level
        else:
            high = level - 1
    widths = [max(floor[i], min(target[i], low)) for i in shown]
    spare = room - sum(widths)
    for place in sorted(range(len(shown)), key=lambda k: order.index(shown[k])):
        grow = max(min(spare, target[shown[place]] - widths[place]), 0)
        widths[place] += grow
        spare -= grow
    return widths


def fit_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    width: int,
    priority: Sequence[str] = (),
    ellipsis: str = "…",
    paint: Callable[[int, str], str] | None = None,
) -> str:
    """A table of printable cells in `width` columns, in tabulate's ``simple`` look (a header, a rule, left
    aligned columns two spaces apart): the columns ``layout`` keeps, each cell wrapped by ``wrap_cell`` (an empty
    one shown as ``-``, as a missing value is, so that no row is a blank line); when a row takes several lines,
    a blank line between rows; the columns left out named in a line under the table. `paint(column, text)`
    colours a cell's text after it is measured."""
    plan = layout(headers, rows, width, priority)

    def lines_of(cells: Sequence[str], row: bool) -> list[str]:
        wrapped = [
            wrap_cell(cells[i] if not row or cells[i].strip() else "-", w, ellipsis)
            for i, w in zip(plan.shown, plan.widths, strict=True)
        ]
        out = []
        for n in range(max(map(len, wrapped))):
            parts = []
            for k, column in enumerate(wrapped):
                text = column[n] if n < len(column) else ""
                pad = " " * (plan.widths[k] - text_width(text))
                parts.append((paint(plan.shown[k], text) if row and paint and text else text) + pad)
            out.append("  ".join(parts).rstrip())
        return out

    head = lines_of(headers, False)
    body = [lines_of(row, True) for row in rows]
    apart = any(len(lines) > 1 for lines in body)
    out = [*head, "  ".join("-" * w for w in plan.widths)]
    for n, lines in enumerate(body):
        if apart and n:
            out.append("")
        out += lines
    if plan.dropped:
        if apart:
            out.append("")
        names = ", ".join(headers[i] or "(untitled)" for i in plan.dropped)
        count = len(plan.dropped)
        note = (
            f"{count} column{'s' if count > 1 else ''} not shown at {width} columns: {names} "
            "(widen the terminal or use -f json/csv)"
        )
        out += wrap_cell(note, width, ellipsis)
    return "\n".join(out)


def class_summary(report: Report) -> list[dict[str, object]]:
    """Findings and occurrences per class, most severe first, with the CI level at the report's --fail-on."""
    rows: list[dict[str, object]] = []
    for row in FINDING_CLASSES.values():
        found = [f for f in report.findings if f.cls == row.name]
        if found:
            rows.append(
                {
                    "class": row.name,
                    "level": ci_level(row.name, report.fail_on),
                    "findings": len(found),
                    "occurrences": sum(f.count for f in found),
                    "meaning": row.meaning,
                }
            )
    return rows


@register
class TableReporter(Reporter):
    """Tables for people."""

    name = "table"
    commands = ("parse", "summary", "check", "diff", "emulate")
    description = "tables for people (default)"

    def __init__(self, terminal: Terminal = PLAIN) -> None:
        self.terminal = terminal
        """Width and colour when writing to a terminal (see blaslog.cli); the default is the piped text."""

    def for_output(self, path: str | None, color: str = "auto") -> TableReporter:
        """Sized and coloured for standard output's terminal; piped, or written to a file, the plain text scripts
        read (see :func:`terminal_for`)."""
        return TableReporter(terminal_for(sys.stdout if path is None else None, color))

    def spools(self) -> bool:
        return self.terminal.width is None  # piped or to a file: the plain layout

    def render(self, report: Report) -> str:
        if self.terminal.width is not None or self.terminal.color:
            return defuse_commands(self._render_for_terminal(report))
        parts: list[str] = []
        for title, rows in report.sections:
            parts.append(section(title, rows))
        if report.command in ("diff", "check"):
            parts.append(section("Findings by class", class_summary(report)))
            for index, finding in enumerate(report.findings, 1):
                where = f"{finding.location.file}:{finding.location.line}"
                others = ", ".join(f"{r.role} {r.file}:{r.line}" for r in finding.related[:3])
                head = (
                    f"[{index}] {finding.cls.upper()} x{finding.count} ({report.level(finding)})  "
                    f"{printable(finding.title, 200)}"
                )
                body = textwrap.fill(
                    printable(finding.explanation), width=110, initial_indent="    ", subsequent_indent="    "
                )
                parts.append(
                    f"{head}\n    at {printable(where)}" + (f" ({printable(others)})" if others else "") + f"\n{body}\n"
                )
        elif report.rows:
            columns = report.columns or list(report.rows[0].keys())
            limits = {c: 160 if c in ("algorithms", "algo") else 60 for c in columns}
            parts.append(simple_table(columns, _cells(report.rows, columns, limits)) + "\n")
        elif report.command in ("parse", "summary"):
            parts.append("no GEMM records\n")
        return defuse_commands("\n".join(parts))

    def _render_for_terminal(self, report: Report) -> str:
        """The same report fitted to the terminal: tables no wider than it, long cells and text wrapped (not
        cut), classes and differing fields in colour when colouring."""
        term = self.terminal
        width = max(term.width or _DEFAULT_WIDTH, _MIN_WIDTH)
        parts: list[str] = []
        for title, rows in report.sections:
            parts.append(section(title, rows, terminal=term))
        if report.command in ("diff", "check"):
            summary = class_summary(report)
            if summary:
                headers = list(summary[0])
                parts.append(
                    "Findings by class\n"
                    + fitted(
                        headers,
                        [[r[h] for h in headers] for r in summary],
                        term,
                        {headers.index("class"): "class"},
                        SECTION_PRIORITY["Findings by class"],
                    )
                    + "\n"
                )
            else:
                parts.append("Findings by class: none\n")
            for index, finding in enumerate(report.findings, 1):
                where = f"{finding.location.file}:{finding.location.line}"
                others = ", ".join(f"{r.role} {r.file}:{r.line}" for r in finding.related[:3])
                label = term.paint_class(finding.cls, finding.cls.upper())
                lead = f"[{index}] {finding.cls.upper()} x{finding.count} ({report.level(finding)})  "
                heading = textwrap.wrap(printable(finding.title), width=max(width - len(lead), 20)) or [""]
                lines = [f"[{index}] {label} x{finding.count} ({report.level(finding)})  {heading[0]}"]
                lines += [" " * len(lead) + rest for rest in heading[1:]]
                lines += textwrap.wrap(
                    f"at {printable(where)}" + (f" ({printable(others)})" if others else ""),
                    width=width,
                    initial_indent="    ",
                    subsequent_indent="      ",
                )
                for name, values in finding.fields:
                    shown = " vs ".join(term.paint(printable(v if v is not None else "-"), "1;33") for v in values)
                    lines.append(f"    {term.paint(printable(name), '1')}: {shown}")
                lines += textwrap.wrap(
                    printable(finding.explanation), width=width, initial_indent="    ", subsequent_indent="    "
                )
                parts.append("\n".join(lines) + "\n")
        elif report.rows:
            columns = report.columns or list(report.rows[0].keys())
            cells = [[row.get(c) for c in columns] for row in report.rows]
            parts.append(fitted(columns, cells, term, priority=ROWS_PRIORITY.get(report.command, ())) + "\n")
        elif report.command in ("parse", "summary"):
            parts.append("no GEMM records\n")
        return "\n".join(parts)
