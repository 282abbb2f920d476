"""The parse pipeline: read -> assemble records -> sniff -> grammar -> record, with every line accounted for.

For each input, every physical line ends up in exactly one of three counts:

* ``record_lines``: part of a record (wrapped records and cuBLAS multi-line records span several lines);
* ``foreign_lines``: not BLAS log output (the program's own prints, blank lines);
* ``unparsable_lines``: looks like BLAS log output but could not be parsed; each is a :class:`Problem`.

A record cut short at the very end of an input (the process was killed while
writing) is kept as an Event of kind ``truncated`` with a warning.

The parser of one input (``_lines._FileParser``) is built in layers, one concern per module, each on the one
before:

* ``_state``: what it holds (the record being assembled, the input's reader, sniffer and shape cache);
* ``_accounting``: every line counted once, and the problems reported under the `on_error` policy;
* ``_building``: a record made of the lines assembled for it (from the speed layer's template of its shape,
  or through the grammar), or kept as cut short or edited;
* ``_joining``: which lines belong to the record being assembled (its lines, pieces of a wrapped line, other
  text inside it);
* ``_lines``: the loop over a batch's lines, after the speed layer's plan for the batch.

The speed layer (``blaslog._fast``) is asked two things, a plan for a batch of lines and the known record of a
line shape, and never calls back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal, overload

from blaslog._fast.cache import SharedShapes
from blaslog._fast.lazy import Records
from blaslog.formats import Sniffer
from blaslog.inputs import Reader, text_reader
from blaslog.parse._lines import _FileParser
from blaslog.records import FileSummary, OnError, OnErrorName, ParseResult, Record


@overload
def iter_file(
    name: str,
    *,
    log_format: Iterable[str] | str | None = ...,
    on_error: OnError | OnErrorName = ...,
    summary_out: list[FileSummary] | None = ...,
    events: bool = ...,
    progress: Callable[[int, int], None] | None = ...,
    sink: Any = ...,
    lazy: Literal[False] = ...,
    shapes: SharedShapes | None = ...,
) -> Iterator[Record]: ...


@overload
def iter_file(
    name: str,
    *,
    log_format: Iterable[str] | str | None = ...,
    on_error: OnError | OnErrorName = ...,
    summary_out: list[FileSummary] | None = ...,
    events: bool = ...,
    progress: Callable[[int, int], None] | None = ...,
    sink: Any = ...,
    lazy: Literal[True],
    shapes: SharedShapes | None = ...,
) -> Iterator[Records]: ...


@overload
def iter_file(
    name: str,
    *,
    log_format: Iterable[str] | str | None = ...,
    on_error: OnError | OnErrorName = ...,
    summary_out: list[FileSummary] | None = ...,
    events: bool = ...,
    progress: Callable[[int, int], None] | None = ...,
    sink: Any = ...,
    lazy: bool,
    shapes: SharedShapes | None = ...,
) -> Iterator[Record] | Iterator[Records]: ...


def iter_file(
    name: str,
    *,
    log_format: Iterable[str] | str | None = None,
    on_error: OnError | OnErrorName = OnError.WARN,
    summary_out: list[FileSummary] | None = None,
    events: bool = True,
    progress: Callable[[int, int], None] | None = None,
    sink: Any = None,
    lazy: bool = False,
    shapes: SharedShapes | None = None,
) -> Iterator[Any]:
    """Stream the records of one input (a path, or `-` for standard input).

    With `events` False only GEMM records are built (the others are counted). The input's FileSummary is
    appended to `summary_out` once the stream is exhausted. `progress(bytes, gemms)` is called as the
    input is read. With a `sink` (a :class:`~blaslog.runs.CompactRun`), GEMMs of a shape seen before are
    added to it without being built or yielded. With `lazy`, every item is a :class:`Records` (one record or a
    run of them, built when iterated: records of a shape seen before are not built until then; see
    :func:`built`). Raises InputError when the input cannot be opened. `shapes`: what the inputs read before
    learnt about line shapes, shared (see :class:`~blaslog._fast.cache.SharedShapes`; the records are the same).
    """
    parser = _FileParser(Reader(name), Sniffer(_names(log_format)), on_error, events, shapes)
    parser.progress = progress
    parser.sink = sink
    yield from parser.items() if lazy else parser.records()
    if summary_out is not None:
        summary_out.append(parser.summary)


def parse_file(
    name: str,
    *,
    log_format: Iterable[str] | str | None = None,
    on_error: OnError | OnErrorName = OnError.WARN,
    events: bool = True,
) -> ParseResult:
    """Parse one input into a ParseResult (with `events` False, only its GEMM records are kept)."""
    summaries: list[FileSummary] = []
    found = iter_file(name, log_format=log_format, on_error=on_error, summary_out=summaries, events=events)
    return ParseResult(tuple(found), tuple(summaries))


def parse_text(
    text: str,
    *,
    name: str = "<text>",
    log_format: Iterable[str] | str | None = None,
    on_error: OnError | OnErrorName = OnError.WARN,
) -> ParseResult:
    """Parse log text held in memory."""
    parser = _FileParser(text_reader(text, name), Sniffer(_names(log_format)), on_error)
    return ParseResult(tuple(parser.records()), (parser.summary,))


def built(items: Iterable[Records]) -> Iterator[Record]:
    """The records of a lazy read's items, each built."""
    for item in items:
        yield from item


def _names(log_format: Iterable[str] | str | None) -> list[str] | None:
    if log_format is None:
        return None
    if isinstance(log_format, str):
        return [log_format]
    return list(log_format) or None


__all__ = ["OnError", "Records", "built", "iter_file", "parse_file", "parse_text"]
