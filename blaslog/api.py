"""The library layer: one function per command, inputs in, a Report out.

The ``blaslog`` command is a thin client of this module: it turns options into one call here, hands the
Report to a reporter and turns it into an exit status. Policy (which inputs, which ranks, which dialect of a
doubly logged call to keep, which run is the reference) is decided here, so the Python API and the command
give the same answers.
"""

from __future__ import annotations

from collections.abc import Iterable

from blaslog.errors import InputError
from blaslog.inputs import expand
from blaslog.parse import OnError, parse_file
from blaslog.records import ParseResult


def parse(names: str | Iterable[str], *, log_format: Iterable[str] | str | None = None,
          on_error: OnError = "warn", jobs: int = 1, events: bool = True) -> ParseResult:
    """Parse inputs (paths, globs, `-`) into one ParseResult, inputs in sorted order.

    With `jobs` > 1 several files are parsed in parallel processes.
    """
    files = expand([names] if isinstance(names, str) else list(names))
    if not files:
        raise InputError("no input given")
    if jobs > 1 and len(files) > 1 and "-" not in files:
        from blaslog._parallel import parse_parallel

        formats = [log_format] if isinstance(log_format, str) else list(log_format or []) or None
        results = parse_parallel(files, log_format=formats, on_error=on_error, jobs=jobs, events=events)
    else:
        results = [parse_file(name, log_format=log_format, on_error=on_error, events=events) for name in files]
    return ParseResult(
        tuple(r for result in results for r in result.records),
        tuple(s for result in results for s in result.files),
    )
