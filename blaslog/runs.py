"""Compact storage of a run's GEMM calls: each distinct call once, then where each call happened.

A training log repeats a few hundred distinct GEMMs (equal in everything but place, time and pointers)
hundreds of thousands of times. A :class:`CompactRun` keeps each distinct :class:`GemmCall` once and,
per call, three integers (which call, line, thread), so memory does not grow with the log beyond a
few bytes per call. Iterating it gives :class:`Occurrence` objects, which read like GemmCall records
(every attribute comes from the distinct call, except `line`, `end_line` and `thread`); their pointers
and time stamp are those of the first call of that kind.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

from blaslog.formats import same_calls
from blaslog.records import GemmCall, OnError


class Occurrence:
    """One GEMM call: a distinct call and where it happened."""

    __slots__ = ("call", "end_line", "line", "thread")

    def __init__(self, call: GemmCall, line: int, end_line: int, thread: str | None) -> None:
        self.call = call
        self.line = line
        self.end_line = end_line
        self.thread = thread

    def __getattr__(self, name: str) -> Any:
        return getattr(self.call, name)

    def __repr__(self) -> str:
        return f"Occurrence({self.call.function} {self.call.shape_text()} at {self.call.file}:{self.line})"

    def __eq__(self, other: object) -> bool:
        return self.call == (other.call if isinstance(other, Occurrence) else other)

    def __hash__(self) -> int:
        return hash(self.call)

    def record(self) -> GemmCall:
        """A full GemmCall for this occurrence."""
        return replace(self.call, line=self.line, end_line=self.end_line, thread=self.thread)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, like GemmCall.to_dict."""
        out = self.call.to_dict()
        out.update(line=self.line, end_line=self.end_line, thread=self.thread)
        return out


MAX_DISTINCT = 25_000
"""Most distinct calls one CompactRun keeps (a training log repeats a few hundred; a log of nothing but new calls
would otherwise grow without bound). Calls of further distinct calls are counted in `overflow`, not kept."""


class CompactRun:
    """The GEMM calls of one input, in order."""

    def __init__(self, path: str = "", max_distinct: int = MAX_DISTINCT) -> None:
        self.path = path
        self.max_distinct = max_distinct
        """Distinct calls kept at most (see MAX_DISTINCT)."""
        self.overflow = 0
        """Calls not kept because their distinct call came after `max_distinct` others (said in a note)."""
        self.calls: list[GemmCall] = []
        self._index: dict[tuple[GemmCall, str], int] = {}
        """(call, its dialect) -> index in `calls`: equal calls of two dialects stay apart, so that an input
        holding the same calls in both (ROCBLAS_LAYER=3, trace and bench) still shows both dialects."""
        self.threads: list[str | None] = []
        self._thread_index: dict[str | None, int] = {}
        self.which = array("I")
        self.lines = array("Q")
        self.thread_of = array("I")
        self.spans: dict[int, int] = {}  # position -> end_line, for records over several lines
        self._shapes: dict[Any, int] = {}  # LineTemplate -> index of its (one) distinct call

    def add(self, record: GemmCall) -> None:
        """Append one call."""
        self._append(self._call(record), record.line, record.end_line, record.thread)

    def add_shaped(self, template: Any, values: list[str], path: str, line: int, end_line: int) -> None:
        """Append one call of a line shape whose calls are all equal (a uniform LineTemplate), from the
        line's SHAPE values: the record is built for the first call of the shape only."""
        index = self._shapes.get(template)
        if index is None:
            index = self._call(template.instantiate(values, path, line, end_line))
            if index >= 0:
                self._shapes[template] = index
        self._append(index, line, end_line, template.thread_of(values))

    def _call(self, record: GemmCall) -> int:
        """The index of the distinct call equal to `record` (kept as the first of its kind when new), or -1 when
        it is new and `max_distinct` calls are kept already."""
        key = (record, record.log_format)
        index = self._index.get(key)
        if index is None:
            if len(self.calls) >= self.max_distinct:
                return -1
            index = self._index[key] = len(self.calls)
            self.calls.append(record)
        return index

    def _append(self, index: int, line: int, end_line: int, thread_id: str | None) -> None:
        """Append a call of distinct call `index`, at `line` (to `end_line`), on thread `thread_id` (an index of
        -1, a call not kept, is counted in `overflow`)."""
        if index < 0:
            self.overflow += 1
            return
        thread = self._thread_index.get(thread_id)
        if thread is None:
            thread = self._thread_index[thread_id] = len(self.threads)
            self.threads.append(thread_id)
        if end_line != line:
            self.spans[len(self.which)] = end_line
        self.which.append(index)
        self.lines.append(line)
        self.thread_of.append(thread)

    def _absorb(self, piece: CompactRun, name: str, offset: int) -> None:
        """Append the calls of `piece` (a later piece of the same input, named `name`), its lines moved down by
        `offset`: each distinct call and thread is looked up once, the arrays are extended at C level."""
        calls = []
        for call in piece.calls:
            index = self._index.get((call, call.log_format))
            if index is None:  # a call's file is not compared: a piece read under another name gets this one's
                index = self._call(call if call.file == name else replace(call, file=name))
            calls.append(index)
        if -1 in calls:  # calls past max_distinct: counted one by one in `overflow`
            for position, (which, line, thread) in enumerate(
                zip(piece.which, piece.lines, piece.thread_of, strict=True)
            ):
                end_line = piece.spans.get(position, line)
                self._append(calls[which], line + offset, end_line + offset, piece.threads[thread])
            return
        threads = []
        for thread_id in piece.threads:
            known = self._thread_index.get(thread_id)
            if known is None:
                known = self._thread_index[thread_id] = len(self.threads)
                self.threads.append(thread_id)
            threads.append(known)
        start = len(self.which)
        for position, end_line in piece.spans.items():
            self.spans[start + position] = end_line + offset
        self.which.extend(map(calls.__getitem__, piece.which))
        self.lines.extend(map(offset.__add__, piece.lines))
        self.thread_of.extend(map(threads.__getitem__, piece.thread_of))

    def without(self, dialect: str) -> CompactRun:
        """The calls not logged in `dialect` (the other dialect of doubly logged calls), without rebuilding a call:
        the distinct calls renumbered, the arrays filtered, threads and spans carried over."""
        out = CompactRun(self.path, self.max_distinct)
        out.overflow = self.overflow
        kept = [i for i, call in enumerate(self.calls) if call.log_format != dialect]
        index = {old: new for new, old in enumerate(kept)}
        out.calls = [self.calls[i] for i in kept]
        out._index = {(call, call.log_format): i for i, call in enumerate(out.calls)}
        out.threads, out._thread_index = self.threads, self._thread_index
        for position, (which, line, thread) in enumerate(zip(self.which, self.lines, self.thread_of, strict=True)):
            new = index.get(which)
            if new is not None:
                if position in self.spans:
                    out.spans[len(out.which)] = self.spans[position]
                out.which.append(new)
                out.lines.append(line)
                out.thread_of.append(thread)
        return out

    def extend(self, records: Iterable[Any]) -> CompactRun:
        """Append GEMM records (others, and partial GEMM records, which lack fields a person edited out, are
        ignored); returns self."""
        for record in records:
            if isinstance(record, GemmCall) and record.missing is None:
                self.add(record)
        return self

    def thread_of_calls(self) -> list[str | None]:
        """The thread ids the calls ran on (each once)."""
        return [self.threads[t] for t in set(self.thread_of)]

    def __len__(self) -> int:
        return len(self.which)

    def __iter__(self) -> Iterator[Occurrence]:
        calls, threads, spans = self.calls, self.threads, self.spans
        for position, (index, line, thread) in enumerate(zip(self.which, self.lines, self.thread_of, strict=False)):
            yield Occurrence(calls[index], line, spans.get(position, line), threads[thread])

    def __getstate__(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "calls": self.calls,
            "threads": self.threads,
            "which": self.which,
            "lines": self.lines,
            "thread_of": self.thread_of,
            "spans": self.spans,
            "max_distinct": self.max_distinct,
            "overflow": self.overflow,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._index = {(call, call.log_format): i for i, call in enumerate(self.calls)}
        self._thread_index = {thread: i for i, thread in enumerate(self.threads)}
        self._shapes = {}


def read_run(
    name: str,
    *,
    log_format: list[str] | None = None,
    on_error: OnError = OnError.WARN,
    progress: Any = None,
    shapes: Any = None,
) -> tuple[CompactRun, Any]:
    """Parse one input into a CompactRun of its GEMMs and its FileSummary (other records are counted); `shapes`:
    the line shapes the inputs read before learnt (a :class:`~blaslog._fast.cache.SharedShapes`)."""
    from blaslog.parse import iter_file

    summaries: list[Any] = []
    run = CompactRun(name)
    run.extend(
        iter_file(
            name,
            log_format=log_format,
            on_error=on_error,
            summary_out=summaries,
            events=False,
            progress=progress,
            sink=run,
            shapes=shapes,
        )
    )
    return run, summaries[0]


def merge(parts: list[tuple[CompactRun, Any, int]], name: str, *, owned: bool = False) -> tuple[CompactRun, Any]:
    """Join the runs and summaries of consecutive pieces of one input; each piece's lines start at 1,
    the int is its line count. With `owned` (the pieces are the caller's, used once) the first piece's run
    becomes the whole's, the others added to it; else a new run is made (a scheduler may hand a task's result
    to a retried task again)."""
    from blaslog.records import FileSummary

    if not owned:
        parts = [(CompactRun(name, parts[0][0].max_distinct), FileSummary(name), 0), *parts]
    run, first, offset = parts[0]
    summary = FileSummary(name)
    summary.absorb(first)
    for piece, piece_summary, lines in parts[1:]:
        run._absorb(piece, name, offset)
        summary.absorb(piece_summary, offset)
        run.overflow += piece.overflow
        offset += lines
    return run, summary


def one_dialect_per_call(records: list[Any], runs: Iterable[CompactRun] = ()) -> tuple[list[Any], list[str]]:
    """The records with duplicate dialects dropped (see :func:`duplicate_dialects`), and a note for each input
    concerned.

    When the records are the occurrences of `runs`, the dialects are read from the runs' distinct calls."""
    drop, notes = duplicate_dialects([call for run in runs for call in run.calls] if runs else records)
    if not drop:
        return records, []
    return [r for r in records if drop.get(r.file) != r.log_format], notes


def duplicate_dialects(records: Iterable[Any]) -> tuple[dict[str, str], list[str]]:
    """Input -> the dialect to leave out of it, and a note for each input concerned.

    When one input holds the same calls in two dialects (ROCBLAS_LAYER=3 writes a trace and a bench line per
    call; HIPBLASLT_LOG_LEVEL with mask 32 a [Trace] and a bench line per launch), the dialect that declares
    ``same_calls_as`` the other is left out (:func:`blaslog.formats.same_calls`).
    """
    dialects: dict[str, set[str]] = {}
    for record in records:
        dialects.setdefault(record.file, set()).add(record.log_format)
    drop: dict[str, str] = {}
    notes = []
    pairs = same_calls()
    for file, found in dialects.items():
        for keep, duplicate in pairs:
            if keep in found and duplicate in found:
                drop[file] = duplicate
                notes.append(
                    f"{file}: holds both {keep} and {duplicate} lines for the same calls; "
                    f"{duplicate} lines are left out so that each call counts once"
                )
    return drop, notes
