"""The parse pipeline: read -> assemble records -> sniff -> grammar -> record, with every line accounted for.

For each input, every physical line ends up in exactly one of three counts:

* ``record_lines``: part of a record (wrapped records and cuBLAS multi-line records span several lines);
* ``foreign_lines``: not BLAS log output (the program's own prints, blank lines);
* ``unparsable_lines``: looks like BLAS log output but could not be parsed; each is a :class:`Problem`.

A record cut short at the very end of an input (the process was killed while
writing) is kept as an Event of kind ``truncated`` with a warning.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from lark.exceptions import LarkError

from blaslog.errors import InputError, LogParseError, SourceLocation
from blaslog.formats import Sniffer
from blaslog.formats._base import LogFormat, RecordError, describe_error
from blaslog.inputs import Line, Reader, expand, text_reader
from blaslog.records import Event, FileSummary, GemmCall, ParseResult, Problem, Record

OnError = Literal["raise", "warn", "skip"]

MAX_RECORD_LINES = 256
"""Most physical lines one record may span (a runaway join stops here)."""


@dataclass(slots=True)
class _Pending:
    fmt: LogFormat
    lines: list[str]
    first: int
    last: int
    notes: list[str] = field(default_factory=list)


class _FileParser:
    """Parses one input; yields records and fills in its FileSummary."""

    def __init__(self, reader: Reader, sniffer: Sniffer, on_error: OnError) -> None:
        self.reader = reader
        self.sniffer = sniffer
        self.on_error = on_error
        self.summary = FileSummary(reader.name)

    def problem(self, line: int, message: str, text: str = "", severity: str = "error", column: int = 0) -> None:
        problem = Problem(self.reader.name, line, message, text, severity, column)
        if severity == "error" and self.on_error == "raise":
            raise LogParseError(SourceLocation(self.reader.name, line, column), message, text)
        self.summary.problems.append(problem)

    def records(self) -> Iterator[Record]:
        summary = self.summary
        pending: _Pending | None = None
        last_number = 0
        for line in self.reader.lines():
            summary.lines += 1
            last_number = line.number
            if line.fatal:
                if pending is not None:
                    yield from self._finish(pending, at_end=False)
                    pending = None
                summary.unparsable_lines += 1
                self.problem(line.number, line.problem or "unreadable line", line.text)
                continue
            if line.problem:
                self.problem(line.number, line.problem, line.text, severity="warning")
            text = line.text
            if pending is not None:
                if len(pending.lines) < MAX_RECORD_LINES and pending.fmt.continues(pending.lines, text):
                    pending.lines.append(text)
                    pending.last = line.number
                    continue
                yield from self._finish(pending, at_end=False)
                pending = None
            found = self.sniffer.sniff(text)
            if found is None:
                self._other(line)
                continue
            fmt, column = found
            pending = _Pending(fmt, [text[column:] if column else text], line.number, line.number)
            if column and text[:column].strip():
                self.problem(line.number, f"other text before the {fmt.library} record was kept apart: "
                             f"{text[:column].strip()[:80]!r}", text, severity="warning", column=column + 1)
        if pending is not None:
            yield from self._finish(pending, at_end=True)
        if self.reader.stream_error:
            self.problem(last_number + 1 if last_number else 0, self.reader.stream_error)
        if summary.lines == 0 and not self.reader.stream_error:
            self.problem(0, "empty input", severity="warning")

    def _other(self, line: Line) -> None:
        if Sniffer.near_miss(line.text):
            self.summary.unparsable_lines += 1
            reason = ("a cuBLAS `i!` line outside a record (its `I! cuBLAS (...) function ... called:` header is missing)"
                      if line.text.lstrip().startswith("i!") else
                      "looks like BLAS library output, but no known log format starts like this")
            self.problem(line.number, reason, line.text)
        else:
            self.summary.foreign_lines += 1

    def _finish(self, pending: _Pending, at_end: bool) -> Iterator[Record]:
        fmt, summary = pending.fmt, self.summary
        count = pending.last - pending.first + 1
        text = fmt.clean(pending.lines)
        try:
            record, warnings = fmt.parse(text, self.reader.name, pending.first, pending.last)
        except (LarkError, RecordError) as exc:
            reason, column = describe_error(exc, text)
            if at_end and self.reader.ended_without_newline:
                summary.record_lines += count
                summary.other_records += 1
                summary.formats[fmt.name] = summary.formats.get(fmt.name, 0) + 1
                self.problem(pending.last, f"the last record is cut short (no line end at the end of the input: "
                             f"the writer was probably killed); kept as a truncated record ({reason})",
                             text, severity="warning", column=column)
                yield Event(fmt.library, "?", "truncated", text=text, file=self.reader.name, line=pending.first,
                            end_line=pending.last, log_format=fmt.name)
                return
            summary.unparsable_lines += count
            self.problem(pending.first, f"cannot parse this {fmt.name} record: {reason}", text, column=column)
            return
        summary.record_lines += count
        summary.formats[fmt.name] = summary.formats.get(fmt.name, 0) + 1
        if isinstance(record, GemmCall):
            summary.gemm_records += 1
        else:
            summary.other_records += 1
        for warning in warnings:
            self.problem(pending.first, warning, text, severity="warning")
        yield record


def iter_file(name: str, *, log_format: Iterable[str] | str | None = None, on_error: OnError = "warn",
              summary_out: list[FileSummary] | None = None) -> Iterator[Record]:
    """Stream the records of one input (a path, or `-` for standard input).

    The input's FileSummary is appended to `summary_out` once the stream is exhausted.
    Raises InputError when the input cannot be opened.
    """
    parser = _FileParser(Reader(name), Sniffer(_names(log_format)), on_error)
    yield from parser.records()
    if summary_out is not None:
        summary_out.append(parser.summary)


def parse_file(name: str, *, log_format: Iterable[str] | str | None = None, on_error: OnError = "warn") -> ParseResult:
    """Parse one input into a ParseResult."""
    summaries: list[FileSummary] = []
    records = tuple(iter_file(name, log_format=log_format, on_error=on_error, summary_out=summaries))
    return ParseResult(records, tuple(summaries))


def parse(names: str | Iterable[str], *, log_format: Iterable[str] | str | None = None,
          on_error: OnError = "warn", jobs: int = 1) -> ParseResult:
    """Parse inputs (paths, globs, directories, `-`) into one ParseResult, inputs in sorted order.

    With `jobs` > 1 several files are parsed in parallel processes.
    """
    files = expand([names] if isinstance(names, str) else list(names))
    if not files:
        raise InputError("no input given")
    if jobs > 1 and len(files) > 1 and "-" not in files:
        from blaslog._parallel import parse_parallel

        results = parse_parallel(files, log_format=_names(log_format), on_error=on_error, jobs=jobs)
    else:
        results = [parse_file(name, log_format=log_format, on_error=on_error) for name in files]
    return ParseResult(
        tuple(r for result in results for r in result.records),
        tuple(s for result in results for s in result.files),
    )


def parse_text(text: str, *, name: str = "<text>", log_format: Iterable[str] | str | None = None,
               on_error: OnError = "warn") -> ParseResult:
    """Parse log text held in memory."""
    parser = _FileParser(text_reader(text, name), Sniffer(_names(log_format)), on_error)
    records = tuple(parser.records())
    return ParseResult(records, (parser.summary,))


def _names(log_format: Iterable[str] | str | None) -> list[str] | None:
    if log_format is None:
        return None
    if isinstance(log_format, str):
        return [log_format]
    return list(log_format) or None
