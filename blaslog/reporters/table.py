"""Human-readable tables (tabulate): the default output."""

from __future__ import annotations

import os
import shutil
import tempfile
import textwrap
from collections.abc import Iterable, Iterator, Mapping
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
    """Columns to fit tables and text into (None: the plain layout, cells cut as always)."""
    color: bool = False
    """Colour finding classes and differing fields (ANSI SGR)."""

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
    """How to write the table to `stream` (None: a file): sized to the terminal when it is one, else the plain
    piped text. Colour: `always`, `never`, or with `auto` on a terminal unless NO_COLOR is set (no-color.org),
    and anywhere when FORCE_COLOR is set (not `0`); TERM=dumb turns `auto` colour off."""
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
    width = shutil.get_terminal_size().columns if tty else None
    return Terminal(width, colored)


T = TypeVar("T")

#: The narrowest a wrapped column gets, and the least width a table is fitted into.
_MIN_COLUMN = 6
_MIN_WIDTH = 40


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


def section(title: str, rows: list[dict[str, object]], terminal: Terminal = PLAIN) -> str:
    """A titled table (fitted to the terminal's width, long cells wrapped, when `terminal` has one)."""
    if not rows:
        return f"{title}: none\n"
    headers = list(rows[0].keys())
    if terminal.width is None:
        return f"{title}\n{simple_table(headers, _cells(rows, headers))}\n"
    return f"{title}\n{fitted(headers, [[r.get(h) for h in headers] for r in rows], terminal)}\n"


def fitted(
    headers: list[str], rows: list[list[object]], terminal: Terminal, paint: dict[int, str] | None = None
) -> str:
    """A table no wider than the terminal: the widest columns are narrowed until it fits, and their cells
    wrapped (never cut); `paint` colours the cells of a column by the finding class they name."""
    width = max(terminal.width or 0, _MIN_WIDTH)
    body = [[cell(value, 100_000) for value in row] for row in rows]
    # tabulate's simple format: two spaces between columns, and a column at least 2 wider than its header
    cells = [max((len(row[i]) for row in body), default=0) for i in range(len(headers))]
    natural = [max(c, len(h) + 2) for c, h in zip(cells, headers, strict=True)]
    room = width - 2 * (len(headers) - 1)
    # a column keeps at least its header's longest word (split at `_` too), so headers stay readable
    least = [
        min(n, max(_MIN_COLUMN, *(len(word) + 2 for word in h.replace("_", " ").split())))
        for h, n in zip(headers, natural, strict=True)
    ]
    if sum(least) > room:
        return _listed(headers, body, width, terminal, paint or {})
    widths = list(natural)
    for floor in (least, [min(n, _MIN_COLUMN) for n in natural]):  # then headers break inside words too
        while sum(widths) > room:
            shrinkable = [i for i in range(len(widths)) if widths[i] > floor[i]]
            if not shrinkable:
                break
            widest = max(shrinkable, key=widths.__getitem__)
            widths[widest] -= 1
    for i, column in (paint or {}).items():  # colour after measuring: tabulate skips escape codes when aligning
        for row in body:
            row[i] = terminal.paint_class(row[i]) if column == "class" else row[i]
    return tabulate(
        body,
        headers=headers,
        tablefmt="simple",
        disable_numparse=True,
        maxcolwidths=[w if w < c else None for w, c in zip(widths, cells, strict=True)],
        maxheadercolwidths=[
            w - 2 if w - 2 < len(h) else None  # type: ignore[misc]  # None: as it is
            for w, h in zip(widths, headers, strict=True)
        ],
    )


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


def _listed(headers: list[str], body: list[list[str]], width: int, terminal: Terminal, paint: dict[int, str]) -> str:
    """Rows too wide for the terminal as a table, one block each: `column  value` lines, values wrapped."""
    key_width = max(len(h) for h in headers) + 2
    blocks = []
    for row in body:
        lines = []
        for i, (header, value) in enumerate(zip(headers, row, strict=True)):
            wrapped = textwrap.wrap(value, width=max(width - key_width - 2, 10), break_on_hyphens=False) or [""]
            if paint.get(i) == "class":
                wrapped = [terminal.paint_class(value)]
            lines.append(f"  {header.ljust(key_width)}{wrapped[0]}")
            lines += [" " * (key_width + 2) + rest for rest in wrapped[1:]]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


@register
class TableReporter(Reporter):
    """Tables for people."""

    name = "table"
    description = "tables for people (default)"

    def __init__(self, terminal: Terminal = PLAIN) -> None:
        self.terminal = terminal
        """Width and colour when writing to a terminal (see blaslog.cli); the default is the piped text."""

    def render(self, report: Report) -> str:
        if self.terminal != PLAIN:
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
        width = max(term.width or 0, _MIN_WIDTH)
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
                        headers, [[r[h] for h in headers] for r in summary], term, {headers.index("class"): "class"}
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
            parts.append(fitted(columns, [[row.get(c) for c in columns] for row in report.rows], term) + "\n")
        elif report.command in ("parse", "summary"):
            parts.append("no GEMM records\n")
        return "\n".join(parts)
