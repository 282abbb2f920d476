"""The parse pipeline: read -> assemble records -> sniff -> grammar -> record, with every line accounted for.

For each input, every physical line ends up in exactly one of three counts:

* ``record_lines``: part of a record (wrapped records and cuBLAS multi-line records span several lines);
* ``foreign_lines``: not BLAS log output (the program's own prints, blank lines);
* ``unparsable_lines``: looks like BLAS log output but could not be parsed; each is a :class:`Problem`.

A record cut short at the very end of an input (the process was killed while
writing) is kept as an Event of kind ``truncated`` with a warning.
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import compress, islice
from typing import Any, Literal, cast

from lark.exceptions import LarkError

from blaslog._fast.cache import ShapeCache, SharedShapes, in_process
from blaslog._fast.follow import Follow
from blaslog._fast.plan import plan
from blaslog._fast.shapes import keep
from blaslog.errors import LogParseError, SourceLocation
from blaslog.formats import Sniffer
from blaslog.formats._base import (
    LineTemplate,
    LogFormat,
    RecordCut,
    RecordError,
    ShapedCall,
    ShapedRun,
    describe_error,
)
from blaslog.inputs import Batch, Reader, text_reader
from blaslog.records import (
    MAX_PROBLEMS,
    PARTIAL,
    TRUNCATED,
    Event,
    FileSummary,
    GemmCall,
    ParseResult,
    Problem,
    Record,
)

OnError = Literal["raise", "warn", "skip"]

MAX_RECORD_LINES = 256
"""Most physical lines one record may span (a runaway join stops here)."""

_UNFIT = object()
"""A record's SHAPE values do not fit the template bound to its key (see _FileParser._from_template)."""

MAX_HELD_LINES = 16
"""Most lines of other text (prints, a person's `[...]`) in a row inside a record that is not over yet."""

_DIGITS = re.compile(r"(\d+)")

_IS_NONE = functools.partial(operator.is_, None)

_UNSNIFFED = object()
"""A line not in _FileParser._sniffed."""

_SNIFFED = 1024
"""Longest line kept in _FileParser._sniffed (its KEPT entries then hold some 20 MB of ASCII at most)."""

WRAP_MIN = 60
"""Narrowest width at which a line cut at a fixed width (a terminal or a log viewer wrapped it) is joined again."""


@dataclass(slots=True)
class _Pending:
    """The record being assembled."""

    fmt: LogFormat
    """Its dialect."""
    lines: list[str]
    """Its physical lines so far (the first without any other text before the record)."""
    first: int
    """Number of its first line."""
    shape: str | None
    """SHAPE key of its one line; None once it spans lines, or when the batch has no shapes."""
    outer: str | None = None
    """The whole first line's SHAPE key when other text (a launcher's tag) came before the record."""
    prefix: str = ""
    """That other text: a later line that begins with it (the launcher tags every line) continues the record
    without it."""
    shared: bool = False
    """Its first line is the last line of the record before it too (two records glued on one line): that line
    is counted once, with the record before."""
    held: int = 0
    """Lines of other text since its last line, each counted on its own already (the dialect's `interleaved`:
    the record's next line may still come)."""
    skipped: int = 0
    """Lines of other text between its first and last line (not its lines)."""
    pieces: int = 1
    """Physical lines joined into its last line, which was cut at a fixed width (see
    ``_FileParser._rewrapped``); 0 once a shorter piece ended that line."""
    width: int = 0
    """Length of the first piece of its last line, as read (tag included); 0 for a record glued to the one
    before on its first line, which is never joined to a next piece."""
    bound: tuple[str, tuple[int, ...]] | None = None
    """(its lines' SHAPE keys joined by line ends, which of its lines hold SHAPE values) when it was assembled in
    one step (see ``_FileParser._follow``); None once a line is added otherwise."""

    def even(self) -> bool:
        """Two lines or more, each as long as the first (tag included, or the tag left out): the width the
        record's one line was cut at, before the dialect took its pieces for lines (see
        ``_FileParser._rewrapped``)."""
        lines = self.lines
        if len(lines) < 2 or self.pieces != 1:
            return False
        first = len(self.prefix) + len(lines[0])
        return all(len(line) in (first, first - len(self.prefix)) for line in lines[1:])


class _Walk:
    """What :meth:`_FileParser._lines` reads of a batch while it walks the lines at `indices`."""

    __slots__ = ("batch", "by_position", "counts", "indices", "marked", "marked_at", "memo", "positions", "steps")

    def __init__(self, batch: Batch, indices: Sequence[int], marks: dict[int, Any] | list[Any] | None) -> None:
        self.batch = batch
        self.indices = indices
        self.steps = enumerate(indices)
        """(position, index) of each line to visit (:meth:`_FileParser._follow` takes lines out of it)."""
        self.counts = batch.counts or {}
        self.memo: dict[str, list[str]] = {}
        """A line the batch holds again -> its SHAPE values."""
        self.by_position = isinstance(marks, list)
        """Every line's mark is given, or those of the marked lines (by index)."""
        self.positions: list[Any] = marks if isinstance(marks, list) else []
        self.marked: dict[int, Any] = marks if isinstance(marks, dict) else {}
        self.marked_at = list(self.marked)
        """The marked lines' indices, in order (see :meth:`_FileParser._classify`)."""


class _FileParser:
    """Parses one input; yields records and fills in its FileSummary.

    With `events` False, records other than GEMMs are counted (and checked: each shape is parsed once) but
    not built, which is what makes large level-5 logs fast: most lines are then counted by
    :meth:`_classify` without a visit, and :meth:`_lines` assembles the rest. A record of several lines
    (cuBLAS `i!` lines) whose lines have the SHAPE keys of a record read before is taken in one step
    (:meth:`_follow`) and built from the template bound to those keys.
    """

    def __init__(
        self,
        reader: Reader,
        sniffer: Sniffer,
        on_error: OnError,
        events: bool = True,
        shapes: SharedShapes | None = None,
    ) -> None:
        shared = shapes if shapes is not None else in_process()
        if shared is not None:  # the shapes the inputs read before learnt (their sniffer: the same dialects)
            sniffer, self.cache = shared.take(tuple(fmt.name for fmt in sniffer.formats), sniffer)
            reader.shaper = self.cache.shaper
        else:
            self.cache = ShapeCache(reader.shaper)
        """What this input's parse learnt about line shapes (its `stats` count hits and grammar runs), with what
        the inputs before it learnt when they share `shapes`."""
        self.reader = reader
        self.sniffer = sniffer
        self.on_error = on_error
        self.events = events
        self.summary = FileSummary(reader.name)
        self.progress: Callable[[int, int], None] | None = None
        self.prefixes: set[str] = set()
        self._cut_widths: dict[int, int] = {}
        """Width -> how many lines were joined again at it (see :meth:`_rewrapped`)."""
        self._tags: dict[str, re.Pattern[str]] = {}
        """A launcher tag (`[rank0]: `) -> the pattern of its kind (`[rank<n>]: `), see :meth:`_other_tag`."""
        self._open: dict[tuple[Any, str], bool] = {}
        """One-line records -> whether their dialect says they are not over (see :meth:`_unfinished`)."""
        self._starts: dict[str, bool] = {}
        """SHAPE key -> whether a line of it begins a record (see :meth:`_begins_record`)."""
        self.other: tuple[int, str] = (0, "")
        """Number and text of the last line that was no record's (foreign, unparsable)."""
        self.wrap_width = 0
        """The width this input's lines were seen cut at (two whole pieces of one record as long as each other),
        or 0."""
        self.overlong: tuple[str, int] | None = None
        """(dialect, first line) of a record cut at MAX_RECORD_LINES, while its further lines come."""
        self.pending: _Pending | None = None
        """The record being assembled."""
        self.number = 0
        """Number of the last line seen."""
        self.sink: Any = None
        """A CompactRun to hand GEMMs of a known shape to without building them, or None."""
        self.lazy = False
        """Yield a ShapedCall, not the record, for a line of a known shape (when there is no sink)."""
        self.follow = Follow()
        """Records of several lines taken in one step by their lines' SHAPE keys (see :meth:`_follow`)."""
        self._sniffed: dict[str, Any] = {}
        """Lines that came again in a batch -> what the sniffer says of them."""

    def problem(
        self, line: int, message: str, text: str = "", severity: str = "error", column: int = 0, once: str = ""
    ) -> None:
        if severity == "error" and self.on_error == "raise":
            raise LogParseError(SourceLocation(self.reader.name, line, column), message, text)
        if len(self.summary.problems) >= MAX_PROBLEMS and not once:
            self.summary.more_problems += 1
            return
        self.summary.problems.append(Problem(self.reader.name, line, message, text[:2000], severity, column, once))

    def records(self) -> Iterator[Record | ShapedCall | ShapedRun]:
        summary = self.summary
        for batch in self.reader.batches():
            summary.lines += len(batch.lines)
            if batch.shapes is not None and not batch.problems and (not self.events or self.sink is None):
                visit, marks = self._classify(batch)
                # the marked lines are not assembled
                self.cache.stats.visited += marks.count(None) if isinstance(marks, list) else len(visit) - len(marks)
                if isinstance(marks, list) and self.lazy:  # every record wanted: the marks go by position
                    yield from self._in_runs(batch, marks)
                else:
                    yield from self._lines(batch, visit, marks)
            else:
                self.cache.stats.visited += len(batch.lines)
                yield from self._lines(batch, range(len(batch.lines)))
            if self.progress is not None:
                self.progress(self.reader.size, summary.gemm_records)
        if self.pending is not None:
            record = self._finish(self.pending, self.number, at_end=True)
            if record is not None:
                yield record
        if self.reader.ended_without_newline and self.other[0] == self.number and not self.reader.stream_error:
            self.problem(
                self.number,
                "the input ends inside this line (no line end after it), which starts no record: if the writer was "
                "stopped, a record cut this short cannot be recognised; check the end of the log",
                self.other[1],
                severity="warning",
            )
        if self.reader.stream_error:
            self.problem(self.number + 1, self.reader.stream_error)
        if self.reader.cr_lines:
            self.problem(
                1,
                "the lines of this input end with CR alone (classic Mac OS line ends): read as such",
                severity="warning",
            )
        if summary.lines == 0 and not self.reader.stream_error:
            self.problem(0, "empty input", severity="warning")

    def _classify(self, batch: Batch) -> tuple[Sequence[int], dict[int, Any] | list[Any]]:
        """Count the batch's lines that are whole records of a known shape with nothing to build (the speed
        layer's plan for the batch, see ``blaslog._fast.plan``); return the indices of the others, for
        :meth:`_lines`, and the marks among those (by index, for the marked GEMM lines visited; a list of every
        line's mark when every record is wanted, every line visited then)."""
        assert batch.shapes is not None and batch.counts is not None
        found = plan(batch.lines, batch.shapes, batch.counts, self.cache, self.events)
        summary, formats = self.summary, self.summary.formats
        for mark, count in found.tally.items():
            if not count:
                continue
            self.cache.stats.hits += count
            fmt, gemm = (mark[0], mark[1].cls is GemmCall) if type(mark) is tuple else (mark, False)
            summary.record_lines += count
            if gemm:
                summary.gemm_records += count  # handed on by _lines
            else:
                summary.other_records += count  # counted only, or (every record wanted) handed on by _lines
            formats[fmt.name] = formats.get(fmt.name, 0) + count
        return found.visit, found.marks

    def _in_runs(self, batch: Batch, marks: list[Any]) -> Iterator[Record | ShapedCall | ShapedRun]:
        """What :meth:`_lines` gives when every record is wanted and written lazily, with each stretch of marked
        lines (one-line records of known shapes) as one ShapedRun, and the lines between through :meth:`_lines`.

        Every line of the batch is visited then (see :meth:`_classify`), so a stretch of marked lines ends the
        record pending before it at the line before the stretch, as a marked line does in :meth:`_lines`."""
        lines, start, line_marks = batch.lines, batch.start, marks
        count = len(lines)
        plain = list(compress(range(count), map(_IS_NONE, line_marks)))  # lines assembled one by one
        plain.append(count)
        begin = 0  # the first line not handed on yet
        at = 0
        while at < len(plain):
            stop = plain[at]
            if begin < stop:  # lines begin .. stop - 1 are marked
                if self.pending is not None:
                    record = self._finish(self.pending, start + begin - 1, at_end=False)
                    self.pending = None
                    if record is not None:
                        yield record
                yield ShapedRun(
                    line_marks[begin:stop],
                    lines[begin:stop],
                    start + begin,
                    self.reader.name,
                    batch.counts or {},
                    self.cache.shaper.values,
                )
            if stop == count:
                break
            end = at  # the plain lines stop .. plain[end] follow each other
            while plain[end + 1] == plain[end] + 1 and plain[end + 1] < count:
                end += 1
            yield from self._lines(batch, range(stop, plain[end] + 1), marks)
            begin, at = plain[end] + 1, end + 1
        self.number = start + count - 1 if count else self.number

    def _lines(
        self, batch: Batch, indices: Sequence[int], marks: dict[int, Any] | list[Any] | None = None
    ) -> Iterator[Record | ShapedCall]:
        """Assemble and parse the batch's lines at `indices` (in order; a gap holds only lines counted already,
        each a whole record, so a gap ends the pending record). `marks` (from :meth:`_classify`) name the
        GEMMs of a uniform shape, handed on without being assembled."""
        walk = _Walk(batch, indices, marks)
        lines, start, shapes, problems, known = batch.lines, batch.start, batch.shapes, batch.problems, self.cache.known
        previous = -1
        for position, index in walk.steps:
            text = lines[index]
            number = start + index
            mark = walk.positions[index] if walk.by_position else walk.marked.get(index)
            problem = problems.get(index) if problems else None
            if self.pending is not None and (index != previous + 1 or mark is not None or (problem and problem[1])):
                # lines counted already (a gap), a marked GEMM and a line that cannot be used end the record
                record = self._end(start + previous)
                if record is not None:
                    yield record
            previous = index
            if mark is not None:
                item = self._marked_line(walk, mark[1], text, number)
                if item is not None:
                    yield item
                continue
            if problem is not None and self._problem_line(problem, number, text):
                continue
            shape = shapes[text] if shapes is not None else None
            fmt = known.get(shape) if shape is not None else None
            if self.pending is not None:
                taken, record = self._goes_on(text, shape, fmt, number)
                if record is not None:
                    yield record
                if taken:
                    continue
            if fmt is not None:
                self.overlong = None
                previous = self._begin(walk, _Pending(fmt, [text], number, shape, width=len(text)), position)
                continue
            found = self._sniff(walk, text)
            if found is None:
                self._other(number, text)
                continue
            previous = yield from self._start(walk, found, text, number, shape, position)
        if lines:
            self.number = start + len(lines) - 1

    def _end(self, last: int) -> Record | ShapedCall | None:
        """The pending record, over at line `last`."""
        assert self.pending is not None
        record = self._finish(self.pending, last, at_end=False)
        self.pending = None
        return record

    def _marked_line(self, walk: _Walk, template: LineTemplate, text: str, number: int) -> Record | ShapedCall | None:
        """A GEMM of a uniform shape, counted already (see :meth:`_classify`): handed to the sink, or made.

        Its line's SHAPE values fit the template, as their number is that of the NULs in its key (a batch with NUL
        bytes has no shapes)."""
        values, name = self.cache.shaper.values, self.reader.name
        if self.sink is not None:
            self.sink.add_shaped(template, values(text), name, number, number)
            return None
        if not self.lazy:
            return template.make(template.build_fields(values(text), name, number, number))  # type: ignore[no-any-return]
        if walk.counts[text] == 1:
            return ShapedCall(template, values(text), name, number, number)
        # a line the batch holds again: its values are taken once, and a writer may key by it
        line_values = walk.memo.get(text)
        if line_values is None:
            line_values = walk.memo[text] = values(text)
        return ShapedCall(template, line_values, name, number, number, text)

    def _problem_line(self, problem: tuple[str, bool], number: int, text: str) -> bool:
        """Report a line the reader could not take as it is; True when it cannot be used at all (counted)."""
        message, fatal = problem
        if fatal:
            self.summary.unparsable_lines += 1
            self.problem(number, message, text)
            return True
        self.problem(number, message, text, severity="warning")
        return False

    def _goes_on(self, text: str, shape: str | None, fmt: Any, number: int) -> tuple[bool, Record | ShapedCall | None]:
        """Whether line `text` (of SHAPE key `shape`, which begins a record of `fmt` where known) is taken into the
        pending record (a line of it, a piece of its last line, or other text inside it), and the pending record
        when the line ends it."""
        pending = self.pending
        assert pending is not None
        body = text[len(pending.prefix) :] if pending.prefix and text.startswith(pending.prefix) else text
        goes_on = (
            fmt is None
            and len(pending.lines) < MAX_RECORD_LINES
            and pending.fmt.continues(pending.lines, body)
            and not self._begins_record(text, shape)  # whether its shape was seen or not
        )
        if (
            fmt is None
            and WRAP_MIN <= pending.width >= len(text)
            and pending.pieces
            and self._piece(text, body, goes_on)
        ):
            return True, None  # a line cut at a fixed width: see _rewrapped
        if goes_on:
            pending.lines.append(body)
            pending.shape = pending.outer = pending.bound = None
            pending.skipped += pending.held
            pending.held = 0
            pending.pieces, pending.width = 1, len(text)
            return True, None
        if fmt is None and self._held(text, number):
            return True, None
        if fmt is None and len(pending.lines) >= MAX_RECORD_LINES and pending.fmt.continues(pending.lines, body):
            self.overlong = (pending.fmt.name, pending.first)  # its further lines say whose they are
        return False, self._end(number - 1)

    def _piece(self, text: str, body: str, goes_on: bool) -> bool:
        """Whether `text` is joined to the pending record's last line as a piece of it cut at a fixed width.

        The width is known to be one the record's last line was cut at when whole pieces of it were joined
        already, this input's lines were seen cut at it, or the record's lines all are as long as its first (its
        length compared first: this runs for every line of a record). A line the dialect takes as a line of its
        own is a piece only at a width known as a wrap's."""
        pending = self.pending
        assert pending is not None
        seen = (
            pending.pieces > 1
            or pending.width == self.wrap_width
            or (pending.width == len(pending.prefix) + len(pending.lines[0]) and pending.even())
        )
        return (seen or not goes_on) and self._rewrapped(pending, text, body, goes_on, seen)

    def _held(self, text: str, number: int) -> bool:
        """Count `text` on its own when it is other text inside a record that is not over (a program's print
        between cuBLAS `i!` lines, a person's `[...]`): the record's next line may still come."""
        pending = self.pending
        assert pending is not None
        if (
            pending.held >= MAX_HELD_LINES
            or len(pending.lines) >= MAX_RECORD_LINES
            or not pending.fmt.interleaved(pending.lines)
            or self.sniffer.sniff(text) is not None
        ):
            return False
        pending.held += 1
        if not (pending.prefix and not text.startswith(pending.prefix) and self._other_tag(pending, number, text)):
            self._other(number, text)
        return True

    def _begin(self, walk: _Walk, pending: _Pending, position: int) -> int:
        """Make `pending` the record being assembled, and take the lines that follow its first in one step where
        their keys say so (see :meth:`_follow`); the index of the last line taken."""
        self.pending = pending
        index = walk.indices[position]
        if pending.shape in self.follow.spans and not walk.batch.problems:
            return self._follow(pending, walk, position)
        return index

    def _sniff(self, walk: _Walk, text: str) -> tuple[Any, int] | None:
        """(dialect, column) of the record line `text` begins, or None; a line the batch holds again (a cuBLAS
        record's first line) is sniffed once."""
        if walk.counts.get(text, 1) > 1 and len(text) <= _SNIFFED:
            found = self._sniffed.get(text, _UNSNIFFED)
            if found is _UNSNIFFED:
                found = self.sniffer.sniff(text)
                keep(self._sniffed, text, found)
            return found  # type: ignore[no-any-return]
        return self.sniffer.sniff(text)

    def _start(
        self, walk: _Walk, found: tuple[Any, int], text: str, number: int, shape: str | None, position: int
    ) -> Generator[Record | ShapedCall, None, int]:
        """Begin the record `found` in line `text` (after other text where its column is not 0), with the records
        glued before it on the line; return the index of the last line taken."""
        fmt, column = found
        if column:
            self._tag(fmt, text, column, number)
        inner = text[column:]
        at, shared = column, False
        while cut := fmt.glued(inner):
            # two records glued on one line (a person pasted them): each is read on its own
            self.problem(
                number,
                f"two {fmt.name} records on one line (glued together); read apart",
                text,
                severity="warning",
                column=at + cut + 1,
            )
            record = self._finish(_Pending(fmt, [inner[:cut].rstrip()], number, None, shared=shared), number, False)
            if record is not None:
                yield record
            inner, at, shared = inner[cut:], at + cut, True
        if shared:
            self.pending = _Pending(fmt, [inner], number, None, prefix=text[:column], shared=True)
        elif column:
            # the record's own shape, and the whole line's (a line of it is then known without a visit)
            own = self.cache.shaper.split(inner)[0] if shape is not None else None
            self.pending = _Pending(fmt, [inner], number, own, shape, prefix=text[:column], width=len(text))
        else:
            return self._begin(walk, _Pending(fmt, [text], number, shape, width=len(text)), position)
        return walk.indices[position]

    def _tag(self, fmt: Any, text: str, column: int, number: int) -> None:
        """Say once per kind of prefix that other text (a launcher's tag, `[rank0]:`, on every line) came before
        a record and was kept apart."""
        prefix = text[:column].strip()
        kind = re.sub(r"\d+", "0", prefix)
        if prefix and kind not in self.prefixes:
            self.prefixes.add(kind)
            self.problem(
                number,
                f"other text before the {fmt.library} record was kept apart: "
                f"{prefix[:80]!r} (later lines with such a prefix are not reported)",
                text,
                severity="warning",
                column=column + 1,
                once=f"prefix {kind}",
            )

    def _follow(self, pending: _Pending, walk: _Walk, position: int) -> int:
        """Take the lines that follow the pending record's first line (`walk.indices[position]`) into it in one
        step where the speed layer knows them by their SHAPE keys (see ``blaslog._fast.follow``); `walk.steps`
        passes them. Return the index of the record's last line."""
        lines, shapes, index = walk.batch.lines, walk.batch.shapes, walk.indices[position]
        assert shapes is not None  # the first line's key is known to `follow`
        marks = (walk.positions, walk.marked_at)
        found = self.follow.span(pending.fmt, lines, shapes, walk.indices, position, marks, self.cache, self.wrap_width)
        if found is None:
            return index
        count, pending.bound = found
        end = index + count
        pending.lines.extend(lines[index + 1 : end + 1])
        pending.shape = None
        pending.width = len(lines[end])
        next(islice(walk.steps, count - 1, None))
        self.cache.stats.visited -= count
        self.cache.stats.followed += 1
        return end

    def _learn_record(self, pending: _Pending, key: str, parts: list[tuple[str, list[str]]]) -> None:
        """Let :meth:`_follow` take records whose lines have the SHAPE keys of the pending record's (its lines'
        `parts`: (key, values) of each, where they were split; `key`: their keys joined) in one step, where its
        dialect says so (`assembles_by_shape`) and no launcher's tag came before it."""
        if parts and not pending.prefix and pending.fmt.assembles_by_shape:
            self.follow.learn(pending.fmt, key, parts)

    def _rewrapped(self, pending: _Pending, text: str, body: str, goes_on: bool, seen: bool) -> bool:
        """Join `text` to the pending record's last line when it is the rest of that line cut at a fixed width
        (a terminal, a CI log viewer or a mail program wrapped the log, cutting values apart).

        The line is at least WRAP_MIN wide and `text` no longer than its pieces (the caller has seen to both,
        and says whether the width is `seen`: known to be one the line was cut at), and `text` starts no record.
        Where the dialect says the record is not over (its line lacks what its writer always writes), `text` is
        as long as each piece before it, or shorter (the line's last piece) where that width is known, or where
        it finishes the line and the dialect does not take `text` (`body`, without a launcher's tag) as a line
        of its own (`goes_on`: one wrapped at a space; a word wrap that dropped the space leaves what the
        dialect sees as unfinished, `--ldb768`). Where the width is known, a line that looks over goes on with a
        piece that is no line of its own: a whole piece, or a shorter one that does not begin at a space while
        the line does not end with one (a value cut at the width may look whole: `--solution_index 21` of
        `--solution_index 218160`)."""
        if pending.held or pending.shared or pending.pieces >= MAX_RECORD_LINES:
            return False
        lines = pending.lines
        if lines[-1].rstrip().endswith("\\"):
            return False  # a line a ` \\` ends is over; the lines that continue it follow as lines of their own
        width = pending.width
        full = len(text) == width
        fmt = pending.fmt
        if not self._unfinished(fmt, lines):
            if goes_on or not seen or not (full or (not lines[-1][-1:].isspace() and not text[:1].isspace())):
                return False
        elif not full and not seen:
            # the line's last piece, at a width not seen yet: only where it ends the line (a program's print
            # inside a record wrapped at spaces would leave it unfinished) or a ` \\` continues it
            joined = [*lines[:-1], lines[-1] + body]
            if goes_on or (fmt.unfinished(joined) and not joined[-1].rstrip().endswith("\\")):
                return False
        if self.sniffer.sniff(text) is not None:  # last: the costliest test
            return False
        if pending.even():
            # every line so far is a whole piece of one line: pieces the dialect took for lines of their own
            # (`omputeType=...` or `ransa=OP_T]` inside an open group) before the width was known are joined as cut
            pending.pieces = len(lines)
            lines[:] = ["".join(lines)]
        lines[-1] += body  # a launcher that tagged the pieces too (the program cut the line) has its tag left out
        pending.shape = pending.outer = pending.bound = None
        self._cut_widths[width] = self._cut_widths.get(width, 0) + 1
        if full or self._cut_widths[width] > 1:
            self.wrap_width = width  # two whole pieces, or lines of two records cut at one width
        if full:
            pending.pieces += 1
        else:
            pending.pieces = 0  # a shorter piece ends the line
        return True

    def _unfinished(self, fmt: Any, lines: list[str]) -> bool:
        """``fmt.unfinished(lines)``, kept for one-line records (a bench command followed by program output
        asks it of the same command line again and again; the dialect parses its options to answer)."""
        if len(lines) != 1:
            return bool(fmt.unfinished(lines))
        key = (fmt, lines[0])
        found = self._open.get(key)
        if found is None:
            found = fmt.unfinished(lines)
            keep(self._open, key, found)
        return bool(found)

    def _begins_record(self, text: str, shape: str | None) -> bool:
        """Whether a line begins a record (the sniffer finds one in it): such a line continues no record, whether
        its shape was seen before (a known shape begins a record) or not. Looked up by its SHAPE key where the
        batch has one, as a known shape is."""
        if shape is None:
            return self.sniffer.sniff(text) is not None
        found = self._starts.get(shape)
        if found is None:
            found = self.sniffer.sniff(text) is not None
            keep(self._starts, shape, found)
        return found

    def _other_tag(self, pending: _Pending, number: int, text: str) -> bool:
        """Count a line as unparsable, and say why, when it is a line of a record like the pending one but under
        another launcher tag of the same kind (`[rank1]:` inside a record begun under `[rank0]:`): several
        processes wrote multi-line records into one stream, and a record is read only under the tag it began
        with. True when it was so counted."""
        pattern = self._tags.get(pending.prefix)
        if pattern is None:
            pattern = re.compile(
                "".join(r"\d+" if part.isdigit() else re.escape(part) for part in _DIGITS.split(pending.prefix))
            )
            keep(self._tags, pending.prefix, pattern)
        match = pattern.match(text)
        if match is None or not pending.fmt.continues(pending.lines, text[match.end() :]):
            return False
        self.summary.unparsable_lines += 1
        self.problem(
            number,
            f"a line of a {pending.fmt.name} record under the launcher tag {match.group(0).strip()!r}, inside one "
            f"begun under {pending.prefix.strip()!r}: several processes wrote multi-line records into one stream, "
            f"and their lines cannot be told apart here; split the file per tag first "
            f"(grep -F {match.group(0).strip()!r}) and read each part",
            text,
        )
        return True

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
            self.problem(first, warning, text, severity="warning")

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

    def _finish(self, pending: _Pending, last: int, at_end: bool) -> Record | ShapedCall | None:
        """The pending record, over at line `last` (`at_end`: the input's last line), counted; None when there is
        nothing to hand on (a record counted only, or one that cannot be read: reported)."""
        fmt, lines, first = pending.fmt, pending.lines, pending.first
        last -= pending.held  # other text after its last line is no part of it (counted already)
        at_end = at_end and not pending.held
        span = (first, last, last - first + (0 if pending.shared else 1) - pending.skipped)
        # a last line left without a line end may be cut inside a value the grammar would still take: kept as
        # truncated when the dialect can tell (False), with a warning when it cannot (None)
        whole = fmt.whole(fmt.clean(lines)) if at_end and self.reader.ended_without_newline else True
        if whole is True and pending.shape is not None and len(lines) == 1:
            result = self._from_line(pending, span)
            if result is not _UNFIT:
                return cast("GemmCall | Event | ShapedCall | None", result)
        # a record assembled in one step reads as the record whose lines' keys it has (see _follow): its lines
        # joined, made only where needed (a record built from its template needs no text)
        text = fmt.clean(lines) if pending.bound is None else ""
        key: str | None = None
        parts: list[tuple[str, list[str]]] = []
        if len(lines) > 1 and whole is True and (pending.bound is not None or text == "\n".join(lines)):
            key, parts, result, text = self._from_lines(pending, span, text)
            if result is not _UNFIT:
                return cast("GemmCall | Event | ShapedCall | None", result)
        if pending.bound is not None and not text:
            text = "\n".join(lines)
        try:
            record, warnings, how = self.cache.parse(fmt, text, self.reader.name, first, last, lazy=self.lazy)
            if whole is False:  # it parses, but its last value may be cut (`val=C` of `val=CUBLAS_COMPUTE_32F(68)`)
                raise RecordCut("its last line does not end the record")
        except (LarkError, RecordError) as exc:
            return self._unread(pending, exc, text, span, at_end)
        if whole is None:
            value = text.rstrip().rsplit(None, 1)[-1].rsplit(",", 1)[-1]
            warnings = (
                *warnings,
                f"the input ends inside this {fmt.name} record (no line end after it): if the writer was stopped, "
                f"its last value ({value[-80:]!r}) may be cut short; check the end of the log",
            )
        else:
            self._learn(pending, text, how, warnings, key, parts)
        return self._accept(fmt, record, warnings, first, span[2], text)

    def _from_line(self, pending: _Pending, span: tuple[int, int, int]) -> Record | ShapedCall | object | None:
        """:meth:`_finish` of a one-line record from the template bound to its SHAPE key; _UNFIT when there is
        none or its values do not fit it."""
        fmt, shape, line, cache = pending.fmt, pending.shape, pending.lines[0], self.cache
        assert shape is not None
        template = cache.line_template(fmt, shape)
        if template is None:
            return _UNFIT
        if pending.outer is not None:
            cache.shortcut(shape, fmt, template, pending.outer)
        first, last, count = span
        if template.cls is Event and not self.events:
            # a known non-GEMM shape that nobody asked to see: count it, build nothing
            cache.stats.hits += 1
            self._count(fmt, False, template.warnings, first, count, line)
            return None
        result = self._from_template(fmt, template, cache.shaper.values(line), first, last, count, line)
        if result is not _UNFIT:
            cache.stats.hits += 1
        return result

    def _from_lines(
        self, pending: _Pending, span: tuple[int, int, int], text: str
    ) -> tuple[str, list[tuple[str, list[str]]], Any, str]:
        """:meth:`_finish` of a record of several lines (cuBLAS `i!` lines) from the template bound to its SHAPE
        key: (the key, (key, values) of each line where they were split, the record or _UNFIT, its text).

        Its SHAPE key is its lines' keys joined, as no SHAPE match holds a line end and the look-arounds read a
        line end as they read the text's edges."""
        fmt, lines, cache = pending.fmt, pending.lines, self.cache
        split = cache.shaper.split
        parts: list[tuple[str, list[str]]] = []
        if pending.bound is None:
            parts = list(map(split, lines))
            key = "\n".join([part[0] for part in parts])
            valued = [part[1] for part in parts if part[1]]
        else:  # assembled in one step (see _follow): the key is known, and which lines hold values
            key, valued_lines = pending.bound
            valued = [split(lines[i])[1] for i in valued_lines]
        template = cache.line_template(fmt, key)
        if template is None:
            return key, parts, _UNFIT, text
        self._learn_record(pending, key, parts)
        values = [value for part in valued for value in part]
        if template.warnings and not text:
            text = "\n".join(lines)
        first, last, count = span
        result = self._from_template(fmt, template, values, first, last, count, text)
        if result is not _UNFIT:
            cache.stats.hits += 1
        return key, parts, result, text

    def _learn(
        self,
        pending: _Pending,
        text: str,
        how: Any,
        warnings: tuple[str, ...],
        key: str | None,
        parts: list[tuple[str, list[str]]],
    ) -> None:
        """Teach the cache what reading the pending record whole (its `text`) taught about its shape."""
        fmt, lines, cache = pending.fmt, pending.lines, self.cache
        if pending.shape is not None and len(lines) == 1 and text == lines[0]:
            cache.learn(fmt, pending.shape, text, how, warnings, pending.outer)
        elif key is not None:
            cache.learn_record(fmt, key, text, how)
            if cache.line_template(fmt, key) is not None:
                self._learn_record(pending, key, parts)  # bound now (at the key's second record)

    def _unread(
        self, pending: _Pending, exc: Exception, text: str, span: tuple[int, int, int], at_end: bool
    ) -> Record | ShapedCall | None:
        """What :meth:`_finish` gives for a record its grammar rejects or that makes no sense (`exc`): a truncated
        record where it is cut short, a partial GEMM where a person edited it, else nothing (reported)."""
        fmt, (first, last, count) = pending.fmt, span
        reason, column = describe_error(exc, text)
        unended = at_end and self.reader.ended_without_newline
        if unended or isinstance(exc, RecordCut) or (isinstance(exc, LarkError) and fmt.cut_short(text)):
            summary = self.summary
            summary.record_lines += count
            summary.other_records += 1
            summary.formats[fmt.name] = summary.formats.get(fmt.name, 0) + 1
            if unended:
                message = (
                    f"the last record is cut short (no line end at the end of the input: the writer was probably "
                    f"killed); {TRUNCATED} ({reason})"
                )
            else:
                message = f"this {fmt.name} record is cut short; {TRUNCATED} ({reason})"
            self.problem(last if unended else first, message, text, severity="warning", column=column)
            return fmt.truncated(text, self.reader.name, first, last)
        # a record a person edited (a note the grammar rejects, a value left out as `...`); a bad value with
        # no edit in sight (`-m ٢١`) is no edit: it is reported as it is
        edited = isinstance(exc, LarkError) or "..." in text or "…" in text
        partial = fmt.partial(text, self.reader.name, first, last) if edited else None
        if partial is None:
            self.summary.unparsable_lines += count
            self.problem(first, f"cannot parse this {fmt.name} record: {reason}", text, column=column)
            return None
        # a record a person edited inside the line: the GEMM its visible fields define, marked partial where
        # fields are not shown
        said = (
            f"{PARTIAL}: {partial.missing} not shown"
            if partial.missing
            else "read from its fields, which are all there (the text its writer did not write left out)"
        )
        self.problem(
            first, f"this {fmt.name} record was edited ({reason}); {said}", text, severity="warning", column=column
        )
        return self._accept(fmt, partial, (), first, count, text)

    def _from_template(
        self, fmt: Any, template: LineTemplate, values: list[str], first: int, last: int, count: int, text: str
    ) -> Record | ShapedCall | object | None:
        """What :meth:`_finish` gives for a record of a template bound to its SHAPE key, from the record's SHAPE
        `values`; _UNFIT when they do not fit the key (the plain path then reads the text and reports it)."""
        name = self.reader.name
        if len(values) == template.count:
            if self.sink is not None and template.uniform:
                # a GEMM equal to every other of its shape: the sink keeps one record and where each call was
                self.sink.add_shaped(template, values, name, first, last)
                self._count(fmt, True, template.warnings, first, count, text)
                return None
            if self.lazy and template.verbatim:
                # each value that varies goes in as it stands (no conversion that could fail): built when written
                call = ShapedCall(template, values, name, first, last)
                return self._accept(fmt, call, template.warnings, first, count, text)
        fields = template.fields(values, name, first, last)
        if fields is None:
            return _UNFIT
        return self._accept(fmt, template.make(fields), template.warnings, first, count, text)

    def _accept(
        self, fmt: Any, record: Record | ShapedCall, warnings: tuple[str, ...], first: int, count: int, text: str
    ) -> Record | ShapedCall | None:
        gemm = isinstance(record, GemmCall) or (type(record) is ShapedCall and record.template.cls is GemmCall)
        self._count(fmt, gemm, warnings, first, count, text)
        return record if gemm or self.events else None


def iter_file(
    name: str,
    *,
    log_format: Iterable[str] | str | None = None,
    on_error: OnError = "warn",
    summary_out: list[FileSummary] | None = None,
    events: bool = True,
    progress: Callable[[int, int], None] | None = None,
    sink: Any = None,
    lazy: bool = False,
    shapes: SharedShapes | None = None,
) -> Iterator[Record | ShapedCall | ShapedRun]:
    """Stream the records of one input (a path, or `-` for standard input).

    With `events` False only GEMM records are built (the others are counted). The input's FileSummary is
    appended to `summary_out` once the stream is exhausted. `progress(bytes, gemms)` is called as the
    input is read. With a `sink` (a :class:`~blaslog.runs.CompactRun`), GEMMs of a shape seen before are
    added to it without being built or yielded. With `lazy`, such GEMMs, and records of a VOLATILE shape seen
    before (new sizes), are yielded as :class:`~blaslog.formats._base.ShapedCall` (``.record()`` builds it), and
    with `events` too, stretches of one-line records of known shapes as one
    :class:`~blaslog.formats._base.ShapedRun` each (see :func:`built`). Raises InputError when the input cannot
    be opened. `shapes`: what the inputs read before learnt about line shapes, shared (see
    :class:`~blaslog._fast.cache.SharedShapes`; the records are the same).
    """
    parser = _FileParser(Reader(name), Sniffer(_names(log_format)), on_error, events, shapes)
    parser.progress = progress
    parser.sink = sink
    parser.lazy = lazy
    yield from parser.records()
    if summary_out is not None:
        summary_out.append(parser.summary)


def parse_file(
    name: str, *, log_format: Iterable[str] | str | None = None, on_error: OnError = "warn", events: bool = True
) -> ParseResult:
    """Parse one input into a ParseResult (with `events` False, only its GEMM records are kept)."""
    summaries: list[FileSummary] = []
    found = iter_file(name, log_format=log_format, on_error=on_error, summary_out=summaries, events=events)
    return ParseResult(tuple(built(found)), tuple(summaries))


def parse_text(
    text: str, *, name: str = "<text>", log_format: Iterable[str] | str | None = None, on_error: OnError = "warn"
) -> ParseResult:
    """Parse log text held in memory."""
    parser = _FileParser(text_reader(text, name), Sniffer(_names(log_format)), on_error)
    return ParseResult(tuple(built(parser.records())), (parser.summary,))


def built(items: Iterable[Record | ShapedCall | ShapedRun]) -> Iterator[Record]:
    """The records of :func:`iter_file`'s items, each built (the ShapedCalls and ShapedRuns of a lazy parse)."""
    for item in items:
        if type(item) is ShapedCall:
            yield item.record()
        elif type(item) is ShapedRun:
            yield from (call.record() for call in item.calls())
        else:  # a Record (type checkers do not narrow by `type(x) is`)
            yield item  # type: ignore[misc]


def _names(log_format: Iterable[str] | str | None) -> list[str] | None:
    if log_format is None:
        return None
    if isinstance(log_format, str):
        return [log_format]
    return list(log_format) or None
