"""Parsing: the three entry points of the API (a path, a text, an iterator of lines), and what `blaslog parse`
reads (internal: :func:`records`, :func:`parse_inputs` and :func:`parse_report` serve the command)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

from blaslog._fast.cache import SharedShapes
from blaslog._fast.lazy import Built
from blaslog.api._inputs import (
    CapsLike,
    Options,
    Paths,
    _find_inputs,
    _log_test,
    _names,
    _openable,
    cut_short,
    holds_nothing,
    nothing_found,
)
from blaslog.api._settings import _caps_for
from blaslog.errors import InputError
from blaslog.parse import OnError, iter_file, parse_file
from blaslog.parse import parse_text as _parse_in_memory
from blaslog.ranks import find_inputs
from blaslog.records import FileSummary, OnErrorName, ParseResult, Record
from blaslog.report import FailOn, RecordKind, Report

# ---- the three entry points ------------------------------------------------------------------------------------


def parse(
    names: Paths,
    *,
    log_format: Iterable[str] | str | None = None,
    on_error: OnError | OnErrorName = OnError.WARN,
    jobs: int = 1,
    events: bool = True,
) -> ParseResult:
    """Parse inputs (files, quoted globs, folders, `-`) into one ParseResult, inputs in natural order.

    With `jobs` > 1 several files are parsed in parallel processes. Every record is kept (both dialects of a
    doubly logged call, too); :func:`summary`, :func:`check` and :func:`diff` count each call once.
    """
    on_error = OnError(on_error)  # its value as text too (ValueError for another)
    names = _names(names)
    files = find_inputs(names, looks_like_log=_log_test())
    if not files:
        raise InputError("no input given")
    formats = [log_format] if isinstance(log_format, str) else list(log_format or []) or None
    if jobs > 1 and len(files) > 1 and "-" not in files:
        from blaslog._parallel import parse_parallel

        results = parse_parallel(files, log_format=formats, on_error=on_error, jobs=jobs, events=events)
    else:
        results = [parse_file(name, log_format=formats, on_error=on_error, events=events) for name in files]
    return ParseResult(
        tuple(r for result in results for r in result.records),
        tuple(s for result in results for s in result.files),
    )


def parse_text(
    text: str,
    *,
    name: str = "<text>",
    log_format: Iterable[str] | str | None = None,
    on_error: OnError | OnErrorName = OnError.WARN,
) -> ParseResult:
    """Parse log text held in memory; its problems are reported under `name`."""
    if not isinstance(text, str):
        raise InputError(f"parse_text takes a str (got {type(text).__name__}); a path goes to parse()")
    return _parse_in_memory(text, name=name, log_format=log_format, on_error=on_error)


def parse_lines(
    lines: Iterable[str],
    *,
    name: str = "<lines>",
    log_format: Iterable[str] | str | None = None,
    on_error: OnError | OnErrorName = OnError.WARN,
) -> ParseResult:
    """Parse log lines (with or without their line ends): an open text file, a pipe's output, a list."""
    if isinstance(lines, (str, bytes)):
        raise InputError("parse_lines takes an iterator of lines; a whole text goes to parse_text()")
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    return parse_text(text, name=name, log_format=log_format, on_error=on_error)


# ---- what `blaslog parse` reads (internal) -------------------------------------------------------------------------


def records(
    names: Paths,
    *,
    kind: str = RecordKind.GEMM,
    options: Options | None = None,
    summaries: list[FileSummary] | None = None,
    lazy: bool = False,
    shapes: SharedShapes | None = None,
) -> Iterator[Any]:
    """Stream the records of inputs (GEMMs, or every record with `kind="all"`); each input's FileSummary is
    appended to `summaries` once it is read. With `lazy`, every item is a :class:`blaslog.parse.Records` (records
    of a known line or call shape not built until it is iterated; see :func:`blaslog.parse.iter_file` and
    :mod:`blaslog.stream`). The line shapes
    the first input teaches serve the next (and those inputs read before with the same `shapes`)."""
    names = _names(names)
    options = options or Options()
    if options.scheduler and "-" not in names:
        from blaslog import cluster

        found = cluster.records(
            names,
            scheduler=options.scheduler,
            kind=kind,
            log_format=options.formats,
            on_error=options.on_error,
            workers=options.jobs,
            summaries=summaries if summaries is not None else [],
        )
        yield from map(Built, found) if lazy else found  # the workers' records come built
        return
    shapes = shapes if shapes is not None else SharedShapes()
    for name in names:
        size = os.path.getsize(name) if name != "-" and os.path.isfile(name) else 0
        display = options.progress(name, size) if options.progress is not None else None
        try:
            yield from iter_file(
                name,
                log_format=options.formats,
                on_error=options.on_error,
                summary_out=summaries,
                events=kind == RecordKind.ALL,
                progress=display,
                lazy=lazy,
                shapes=shapes,
            )
        finally:
            if display is not None:
                display.close()


def parse_inputs(names: Paths, options: Options | None = None) -> tuple[list[str], list[str]]:
    """The files `names` stand for that can be opened, and `file: why` for those that cannot."""
    names = _names(names)
    options = options or Options()
    files = _find_inputs(names, options)
    if not files:
        raise InputError("no input given")
    return _openable(files, options.strict)


def parse_report(
    names: Paths, *, kind: str = RecordKind.GEMM, caps: CapsLike | None = None, options: Options | None = None
) -> Report:
    """What `blaslog parse` prints: every GEMM record (every record with `kind="all"`) of the inputs."""
    names = _names(names)
    from blaslog.views import parse_report as build

    options = options or Options()
    good, failed = parse_inputs(names, options)
    if not good:
        raise InputError("; ".join(failed))
    summaries: list[FileSummary] = []
    found: list[Record] = list(records(good, kind=kind, options=options, summaries=summaries))
    if holds_nothing(summaries):
        raise InputError(nothing_found(files=summaries))
    loaded, caps_notes = _caps_for(caps, names)
    report = build(ParseResult(tuple(found), tuple(summaries)), kind=kind, caps=loaded)
    report.fail_on = FailOn.NEVER
    report.failed = failed + cut_short(summaries)
    report.notes.extend(caps_notes)
    return report
