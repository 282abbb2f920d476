"""Every line of an input accounted for, once: as part of a record, as foreign text, or as unparsable (with a
Problem that says why), and the problems of an input reported under its `on_error` policy.
"""

from __future__ import annotations

from typing import Any

from blaslog.errors import LogParseError, SourceLocation
from blaslog.parse._state import MAX_RECORD_LINES, ParserState
from blaslog.records import MAX_PROBLEMS, OnError, Problem, Severity


class Accounting(ParserState):
    """The counts of the input's FileSummary and its problems."""

    def problem(
        self,
        line: int,
        message: str,
        text: str = "",
        severity: Severity = Severity.ERROR,
        column: int = 0,
        once: str = "",
        counted: bool = True,
    ) -> None:
        """Report a problem at `line` (an error raises LogParseError under OnError.RAISE). `counted`: the line is
        counted in the summary (unparsable_lines) by the caller, so that OnError.SKIP may leave it without a
        Problem; what is said of the input as a whole (a stream cut short) is always said."""
        if severity == Severity.ERROR and self.on_error != OnError.WARN:
            if self.on_error == OnError.RAISE:
                raise LogParseError(SourceLocation(self.reader.name, line, column), message, text)
            if counted:
                return
        if len(self.summary.problems) >= MAX_PROBLEMS and not once:
            self.summary.more_problems += 1
            return
        self.summary.problems.append(Problem(self.reader.name, line, message, text[:2000], severity, column, once))

    def _at_end(self) -> None:
        """Report what the input's end says: a last line left without its line end, a stream cut short, CR line
        ends, no line at all."""
        reader = self.reader
        if reader.ended_without_newline and self.other[0] == self.number and not reader.stream_error:
            self.problem(
                self.number,
                "the input ends inside this line (no line end after it), which starts no record: if the writer was "
                "stopped, a record cut this short cannot be recognised; check the end of the log",
                self.other[1],
                severity=Severity.WARNING,
            )
        if reader.stream_error:
            self.problem(self.number + 1, reader.stream_error, counted=False)
        if reader.cr_lines:
            self.problem(
                1,
                "the lines of this input end with CR alone (classic Mac OS line ends): read as such",
                severity=Severity.WARNING,
            )
        if self.summary.lines == 0 and not reader.stream_error:
            self.problem(0, "empty input", severity=Severity.WARNING)

    def _count(self, fmt: Any, gemm: bool, warnings: tuple[str, ...], first: int, count: int, text: str) -> None:
        """Account for a record of `count` lines starting at line `first`, and report its warnings."""
        summary = self.summary
        summary.record_lines += count
        summary.formats[fmt.name] = summary.formats.get(fmt.name, 0) + 1
        if gemm:
            summary.gemm_records += 1
        else:
            summary.other_records += 1
        for warning in warnings:
            self.problem(first, warning, text, severity=Severity.WARNING)

    def _other(self, number: int, text: str) -> None:
        self.other = (number, text)
        if self.sniffer.near_miss(text):
            self.summary.unparsable_lines += 1
            if self.overlong is not None:
                reason = (
                    f"continues the {self.overlong[0]} record begun at line {self.overlong[1]}, which runs past "
                    f"{MAX_RECORD_LINES} lines (no BLAS log record is that long): the record was cut there"
                )
            elif text.lstrip().startswith("i!"):
                reason = (
                    "a cuBLAS `i!` line outside a record (its `I! cuBLAS (...) function ... called:` header is missing)"
                )
            else:
                reason = "looks like BLAS library output, but no known log format starts like this"
            self.problem(number, reason, text)
        else:
            self.overlong = None
            self.summary.foreign_lines += 1

    def _problem_line(self, problem: tuple[str, bool], number: int, text: str) -> bool:
        """Report a line the reader could not take as it is; True when it cannot be used at all (counted)."""
        message, fatal = problem
        if fatal:
            self.summary.unparsable_lines += 1
            self.problem(number, message, text)
            return True
        self.problem(number, message, text, severity=Severity.WARNING)
        return False
