"""CSV of the command's main table (records, findings or signatures)."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from blaslog.report import Report
from blaslog.reporters._base import Reporter, defuse_commands, printable, register

_FORMULA = re.compile(r"^[=+\-@\t\r]")
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def safe_cell(value: Any) -> str:
    """A CSV cell that a spreadsheet will not run as a formula (log text is untrusted)."""
    if value is None:
        return ""
    if isinstance(value, (dict, list, tuple)):
        value = json.dumps(value, ensure_ascii=True, default=str)
    text = printable(value)
    if _FORMULA.match(text) and not _NUMBER.match(text):
        return "'" + text
    return text


@register
class CsvReporter(Reporter):
    """Comma-separated values."""

    name = "csv"
    commands = ("parse", "summary", "check", "diff")
    stable = True
    description = "CSV of the records (parse), findings (diff, check) or signatures (summary)"

    def render(self, report: Report) -> str:
        if report.command == "parse":
            return self.render_streamed(report)
        rows = report.table_rows()
        # every key of every row, in first-seen order: CSV keeps all fields
        columns = list(dict.fromkeys(k for row in rows for k in row)) or report.columns
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow([safe_cell(row.get(c)) for c in columns])
        return defuse_commands(out.getvalue())

    streams = True

    @staticmethod
    def _columns() -> list[str]:
        from blaslog.frame import EVENT_COLUMNS
        from blaslog.records import GEMM_FIELD_NAMES

        # each column once: GemmCall has an `algo` field (rocBLAS's argument), which the row's algorithm text
        # replaces (see views.record_row), and EVENT_COLUMNS already holds `event`
        return list(dict.fromkeys(["kind", *GEMM_FIELD_NAMES, "trans", "algo", *EVENT_COLUMNS]))

    def stream_begin(self) -> str:
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerow(self._columns())
        return out.getvalue()

    def stream_rows(self, rows: Iterable[Any], first: bool) -> Iterator[str]:
        columns = self._columns()
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        for row in rows:
            writer.writerow([safe_cell(row.get(c)) for c in columns])
            if out.tell() > 1 << 16:
                yield defuse_commands(out.getvalue())
                out.seek(0)
                out.truncate()
        if out.tell():
            yield defuse_commands(out.getvalue())
