"""The loop over an input's lines, batch by batch: the speed layer's plan for a batch, then each line the plan
leaves to the parser taken into the record being assembled, begun as a record of its own, or counted.
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable, Generator, Iterator, Sequence
from itertools import compress, islice
from typing import Any, cast

from blaslog._fast.known import marked_record
from blaslog._fast.lazy import Built, Records, ShapedCall, ShapedRun
from blaslog._fast.plan import every_line, plan
from blaslog._fast.shapes import keep
from blaslog._fast.templates import LineTemplate
from blaslog.inputs import Batch
from blaslog.parse._recall import Recalling
from blaslog.parse._state import _Pending, _Walk
from blaslog.records import Event, GemmCall, Record, Severity

_IS_NONE = functools.partial(operator.is_, None)

_BUILT = frozenset((GemmCall, Event))
"""The records built already (a lazy read hands each on as a Built)."""

_UNSNIFFED = object()
"""A line not in _FileParser._sniffed."""

_NOTHING: dict[Any, Any] = {}
"""Looked up where a batch has no shapes or no problems: None for every key."""

_SNIFFED = 1024
"""Longest line kept in _FileParser._sniffed (its KEPT entries then hold some 20 MB of ASCII at most)."""


class _FileParser(Recalling):
    """Parses one input; yields records and fills in its FileSummary.

    With `events` False, records other than GEMMs are counted (and checked: each shape is parsed once) but
    not built, which is what makes large level-5 logs fast: most lines are then counted by
    :meth:`_classify` without a visit, and :meth:`_lines` assembles the rest. A record of several lines
    (cuBLAS `i!` lines) whose lines have the SHAPE keys of a record read before is taken in one step
    (:meth:`_follow`) and built from the template bound to those keys.
    """

    def records(self) -> Iterator[Record]:
        """The input's records, each built (GEMMs only without `events`; none of those a `sink` takes)."""
        self.lazy = False
        return cast("Iterator[Record]", self._read())

    def items(self) -> Iterator[Records]:
        """The input's records as a lazy read gives them: records of known shapes not built yet (see
        ``blaslog._fast.lazy``), all of one type."""
        self.lazy = True
        for item in self._read():
            yield Built(item) if type(item) in _BUILT else item  # type: ignore[misc,arg-type]

    def _read(self) -> Iterator[Record | ShapedCall | ShapedRun]:
        """The records, batch by batch: what the speed layer's plan counts or marks, the rest assembled line by
        line; then the record the input ends in, and what the input's end says."""
        summary = self.summary
        for batch in self.reader.batches():
            summary.lines += len(batch.lines)
            visit, marks = self._classify(batch)
            if isinstance(marks, list) and self.lazy:  # every record wanted: the marks go by position
                yield from self._in_runs(batch, marks)
            else:
                yield from self._lines(batch, visit, marks)
            if self.progress is not None:
                self.progress(self.reader.size, summary.gemm_records)
        if self.pending is not None:
            record = self._finish(self.pending, self.number, at_end=True)
            if record is not None:
                yield record
        self._at_end()

    def _classify(self, batch: Batch) -> tuple[Sequence[int], dict[int, Any] | list[Any]]:
        """Count the batch's lines that are whole records of a known shape with nothing to build (the speed
        layer's plan for the batch, see ``blaslog._fast.plan``); return the indices of the others, for
        :meth:`_lines`, and the marks among those (by index, for the marked GEMM lines visited; a list of every
        line's mark when every record is wanted, every line visited then)."""
        if batch.shapes is None or batch.counts is None or batch.problems or (self.events and self.sink is not None):
            return every_line(len(batch.lines), self.cache).visit, {}
        found = plan(batch.lines, batch.shapes, batch.counts, self.cache, self.events)
        summary, formats = self.summary, self.summary.formats
        for (fmt, gemm), count in found.tally.items():
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
                    range(start + begin, start + stop),
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
        self._read_to_end(batch)

    def _lines(
        self, batch: Batch, indices: Sequence[int], marks: dict[int, Any] | list[Any] | None = None, recall: bool = True
    ) -> Iterator[Record | ShapedCall | ShapedRun]:
        """Assemble and parse the batch's lines at `indices` (in order; a gap holds only lines counted already,
        each a whole record, so a gap ends the pending record). `marks` (from :meth:`_classify`) name the
        GEMMs of a uniform shape, handed on without being assembled. With `recall`, a run of lines read before
        word for word is made again from what reading it left (see ``_recall``)."""
        walk = _Walk(batch, indices, marks)
        recall_at = self._recaller(walk, recall)
        lines, start, shapes, problems = batch.lines, batch.start, batch.shapes, batch.problems
        dialect: Callable[[str | None], Any] = self.cache.dialect  # who begins a record on lines of a SHAPE key
        mark_of = walk.mark_of
        shape_of: Callable[[str], str | None] = shapes.__getitem__ if shapes is not None else _NOTHING.get
        problem_of: Callable[[int], Any] = problems.get if problems else _NOTHING.get
        unusable = walk.unusable
        previous = -1
        # marked GEMMs handed on not built go as one ShapedRun, up to the next line assembled
        group: list[int] | None = [] if self.lazy and self.wanted.sink is None else None
        for position, index in walk.steps:
            mark = mark_of(index)
            if group and mark is None:
                yield self._marked_run(walk, group)
                group = []
            text = lines[index]
            number = start + index
            problem = problem_of(index)
            if self.pending is not None and (index != previous + 1 or mark is not None or index in unusable):
                # lines counted already (a gap), a marked GEMM and a line that cannot be used end the record
                record = self._end(start + previous)
                if record is not None:
                    yield record
            previous = index
            if mark is not None:
                if group is not None:  # no record is pending now (a marked line ended it)
                    group.append(index)
                    continue
                yield from self._marked(walk, index, mark[1])
                continue
            if problem is not None and self._problem_line(problem, number, text):
                continue
            if (recalled := recall_at(walk, position)) is not None:
                previous, items = recalled  # the run's records are over
                yield from items
                continue
            shape = shape_of(text)
            fmt = dialect(shape)
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
        if group:
            yield self._marked_run(walk, group)
        self._read_to_end(batch)

    def _read_to_end(self, batch: Batch) -> None:
        """Note the batch's last line as the last line read (an empty batch reads none)."""
        if batch.lines:
            self.number = batch.start + len(batch.lines) - 1

    def _marked_run(self, walk: _Walk, group: list[int]) -> ShapedRun:
        """The marked GEMMs at indices `group` (in order, only lines counted already between them), handed on not
        built: what :meth:`_marked_line` makes of each, as one item."""
        batch = walk.batch
        lines, start = batch.lines, batch.start
        return ShapedRun(
            list(map(walk.mark_of, group)),
            list(map(lines.__getitem__, group)),
            [start + index for index in group],
            self.reader.name,
            walk.counts,
            self.cache.shaper.values,
        )

    def _marked(self, walk: _Walk, index: int, template: LineTemplate) -> Iterator[Any]:
        """A marked GEMM at `index` not gathered into a ShapedRun, as :meth:`_marked_line` makes it."""
        item = self._marked_line(walk, template, walk.batch.lines[index], walk.batch.start + index)
        if item is not None:
            yield item

    def _marked_line(self, walk: _Walk, template: LineTemplate, text: str, number: int) -> Record | ShapedCall | None:
        """A GEMM of a uniform shape, counted already (see :meth:`_classify`): what the speed layer makes of it.

        Its line's SHAPE values fit the template, as their number is that of the NULs in its key (a batch with NUL
        bytes has no shapes)."""
        values, name = self.cache.shaper.values, self.reader.name
        if walk.counts[text] == 1 or not self.lazy:
            return marked_record(template, values(text), name, number, self.wanted)
        # a line the batch holds again: its values are taken once, and a writer may key by it
        line_values = walk.memo.get(text)
        if line_values is None:
            line_values = walk.memo[text] = values(text)
        return marked_record(template, line_values, name, number, self.wanted, text)

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
        inner = text[column:]
        # the record's own shape, and the whole line's (a line of it is then known without a visit)
        own = self.cache.shaper.split(inner)[0] if column and shape is not None else None
        if column:
            self._tag(fmt, text, column, number, shape, own)
        at, shared = column, False
        while cut := fmt.glued(inner):
            # two records glued on one line (a person pasted them): each is read on its own
            self.problem(
                number,
                f"two {fmt.name} records on one line (glued together); read apart",
                text,
                severity=Severity.WARNING,
                column=at + cut + 1,
            )
            record = self._finish(_Pending(fmt, [inner[:cut].rstrip()], number, None, shared=shared), number, False)
            if record is not None:
                yield record
            inner, at, shared = inner[cut:], at + cut, True
        if shared:
            self.pending = _Pending(fmt, [inner], number, None, prefix=text[:column], shared=True)
        elif column:
            self.pending = _Pending(fmt, [inner], number, own, shape, prefix=text[:column], width=len(text))
        else:
            return self._begin(walk, _Pending(fmt, [text], number, shape, width=len(text)), position)
        return walk.indices[position]

    def _tag(self, fmt: Any, text: str, column: int, number: int, shape: str | None, own: str | None) -> None:
        """Say once per kind of prefix that other text (a launcher's tag, `[rank0]:`, a CI runner's time stamp, on
        every line) came before a record and was kept apart. Its kind is its SHAPE key (`shape`, the whole
        line's, less `own`, the record's), numbers made 0: lines whose keys are equal, of which only the first is
        visited once the record's shape is known, are of one kind (a launcher's pointer or time stamp may change
        from line to line)."""
        prefix = text[:column].strip()
        if shape is None or own is None:  # a batch without keys (a bad byte in it): the same kinds all the same
            shape, own = self.cache.shaper.split(text)[0], self.cache.shaper.split(text[column:])[0]
        prefix_key = shape[: len(shape) - len(own)].strip() if shape.endswith(own) else prefix
        kind = re.sub(r"\d+", "0", prefix_key)
        if prefix and kind not in self.prefixes:
            self.prefixes.add(kind)
            self.problem(
                number,
                f"other text before the {fmt.library} record was kept apart: "
                f"{prefix[:80]!r} (later lines with such a prefix are not reported)",
                text,
                severity=Severity.WARNING,
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
        return end
