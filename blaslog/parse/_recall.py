"""Runs of lines read before, word for word: what the parser made of such a run the first time, made again without
reading its lines (a log that prints the same stretch again and again: the same records between the same prints).

A *run* is a stretch of consecutive lines the parser visits (the plan counted or marked none of them), begun with
no record pending, that ends before the batch's last line: the line after it is one the plan counted (a gap) or
marked, which ends the record pending then. What the parser makes of such a run follows from its lines' texts
and from the state the parser reads while it walks them; the state is the same at each run's start here (no
record pending, no record cut at MAX_RECORD_LINES, the wrap width the run was read at), and a run is kept only
where reading it changed none of what the parser's later reading depends on (a launcher tag's kind said once,
the wrap width, a width lines were cut at other than it). The rest it leaves is what is made again: its records
(moved to the run's lines), its problems, its lines' counts, the last line that was no record's. The records
of a run made again count as the shape cache's hits (served from what was learnt, with no grammar run).

Only with the shape cache on (with it off, every line is read as it comes: the reference the tests compare with).
Where a sink takes GEMMs (``summary``, ``diff`` and ``check`` read so), the calls a run handed it are noted and
handed to it again, moved, in the order a plain read hands them over among the run's records.
"""

from __future__ import annotations

import functools
import operator
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import compress, count, islice
from typing import Any

from blaslog._fast.lazy import ShapedCall, ShapedRun
from blaslog._fast.templates import moved_record
from blaslog.inputs import Batch
from blaslog.parse._joining import Joining
from blaslog.parse._state import _Walk
from blaslog.records import FileSummary, Problem, Record

MAX_RUN = 2048
"""Most lines of a run that is kept."""

MAX_KEPT = 50_000
"""Most lines of the runs kept at once (then the table is emptied)."""

MAX_SEEN = 100_000
"""Most runs noted as seen once (then the table is emptied)."""

_COUNTS = ("gemm_records", "other_records", "record_lines", "foreign_lines", "unparsable_lines", "more_problems")
_counts = operator.attrgetter(*_COUNTS)

_IS_MARKED = functools.partial(operator.is_not, None)


@dataclass(slots=True)
class Run:
    """What reading a run of lines left, the first time."""

    first: int
    """Number of its first line then."""
    items: list[Record | ShapedCall]
    """The records it gave, in order (their lines numbered as then)."""
    counts: tuple[int, ...]
    """What it added to the FileSummary's counts (_COUNTS)."""
    formats: list[tuple[str, int]]
    """What it added to the records per dialect."""
    problems: list[Problem]
    """The problems it reported (numbered as then)."""
    other: tuple[int, str] | None
    """Its last line that was no record's (as an offset from its first line, and the text), if any."""
    cut: int
    """Lines it joined again at the wrap width."""
    calls: list[Call]
    """The calls it handed the sink (none without one)."""


Call = tuple[int, Any, list[str], int, int]
"""A call handed to the sink while a run was read: (how many of the run's records came before it, the template,
the line's SHAPE values, its first and last line)."""


class _Noted:
    """Stands in for the sink while a run is read: notes each call it is handed, after how many of the run's
    records, for the sink to be handed them in order afterwards (:func:`_handed`)."""

    __slots__ = ("calls", "items")

    def __init__(self, items: list[Any]) -> None:
        self.items = items
        self.calls: list[Call] = []

    def add_shaped(self, template: Any, values: list[str], path: str, line: int, end_line: int) -> None:
        self.calls.append((len(self.items), template, values, line, end_line))


def _handed(items: list[Any], calls: list[Call], sink: Any, path: str, offset: int) -> Iterator[Any]:
    """`items` (a run's records, moved already), with each of `calls` handed to `sink` `offset` lines further
    down, before the record it came before."""
    at = 0
    for position, item in enumerate(items):
        while at < len(calls) and calls[at][0] <= position:
            _, template, values, line, end_line = calls[at]
            sink.add_shaped(template, values, path, line + offset, end_line + offset)
            at += 1
        yield item
    for _, template, values, line, end_line in calls[at:]:
        sink.add_shaped(template, values, path, line + offset, end_line + offset)


class Runs:
    """The runs read before, by (wrap width, their lines' texts)."""

    __slots__ = ("kept", "lines", "recalled", "seen")

    def __init__(self) -> None:
        self.kept: dict[tuple[int, tuple[str, ...]], Run | None] = {}
        """None: a run that was read but could not be kept."""
        self.lines = 0
        """Lines of the runs kept."""
        self.seen: set[int] = set()
        """Hashes of the keys of runs read once: a run is kept the second time it comes (a log whose runs never
        come again, with new pointers on every line, pays for no copy of what it gives)."""
        self.recalled = 0
        """Runs made again from what was kept."""

    def again(self, key: tuple[int, tuple[str, ...]]) -> bool:
        """Whether the run of `key` (not kept) was seen before (a hash the same is taken for it: such a run is
        then read, and kept, a time early); notes it as seen."""
        seen = self.seen
        found = hash(key)
        if found in seen:
            return True
        if len(seen) >= MAX_SEEN:
            seen.clear()
        seen.add(found)
        return False

    def keep(self, key: tuple[int, tuple[str, ...]], run: Run | None) -> None:
        size = len(key[1])
        if self.lines + size > MAX_KEPT:
            self.kept.clear()
            self.lines = 0
        self.kept[key] = run
        self.lines += size


def run_end(walk: _Walk, position: int) -> int:
    """The index of the last line of the run that line `walk.indices[position]` begins; -1 where that run is too long
    or reaches the batch's last line."""
    indices, index = walk.indices, walk.indices[position]
    # the lines visited one after another: indices only grow, so a stretch is consecutive where its ends are
    low, high = 1, min(len(indices) - position, MAX_RUN + 1)
    while low < high:
        middle = (low + high + 1) // 2
        if indices[position + middle - 1] == index + middle - 1:
            low = middle
        else:
            high = middle - 1
    end = index + low  # one past the stretch
    if walk.by_position:
        end = next(compress(count(index), map(_IS_MARKED, islice(walk.positions, index, end))), end)
    elif walk.marked_at:
        after = bisect_right(walk.marked_at, index)
        if after < len(walk.marked_at):
            end = min(end, walk.marked_at[after])
    if end - index > MAX_RUN or end >= len(walk.batch.lines):
        return -1
    return end - 1


def moved(item: Record | ShapedCall, offset: int) -> Record | ShapedCall:
    """A record of a run `offset` lines further down."""
    if type(item) is ShapedCall:
        return ShapedCall(item.template, item.values, item.path, item.line + offset, item.end_line + offset, item.text)
    assert not isinstance(item, ShapedRun)  # a run holds no marked line
    return moved_record(item, offset)  # type: ignore[no-any-return]


class Recalling(Joining):
    """Runs of lines read before, made again (see the module's text)."""

    runs: Runs | None = None

    def _lines(
        self, batch: Batch, indices: Sequence[int], marks: dict[int, Any] | list[Any] | None = None, recall: bool = True
    ) -> Iterator[Record | ShapedCall | ShapedRun]:
        raise NotImplementedError  # see _lines._FileParser

    def _recaller(self, walk: _Walk, recall: bool) -> Callable[[_Walk, int], tuple[int, Iterable[Any]] | None]:
        """:meth:`_recall`, where runs of the batch `walk` reads may be made again, or kept (and `recall` says
        so); else what says of every line that it is read as it comes."""
        batch = walk.batch
        if not recall or not self.cache.enabled or batch.problems:
            return _no_recall
        if batch.shapes is None:
            return _no_recall
        if self.runs is None:
            self.runs = Runs()
        return self._recall

    def _recall(self, walk: _Walk, position: int) -> tuple[int, Iterable[Record | ShapedCall]] | None:
        """Where line `walk.indices[position]` begins a run (no record pending, the line before it counted or
        marked, or none), read the run, or make it again where it was read before: the index of its last line,
        whose step `walk.steps` has passed, and the records it gives; None: the line is read as it comes."""
        if self.pending is not None or self.overlong is not None:
            return None
        indices, index = walk.indices, walk.indices[position]
        if position and indices[position - 1] == index - 1 and walk.mark_of(index - 1) is None:
            return None  # inside a run
        end = run_end(walk, position)
        if end < 0:
            return None
        runs = self.runs
        assert runs is not None
        lines, first = walk.batch.lines, walk.batch.start + index
        key = (self.wrap_width, tuple(lines[index : end + 1]))
        kept = runs.kept.get(key, walk)  # walk: not kept
        if kept is walk and runs.again(key):
            items = self._read_run(walk, position, end, key)
        elif kept is None or kept is walk:
            return None
        else:
            assert isinstance(kept, Run)
            items = self._made_again(kept, first)
            runs.recalled += 1
        if end > index:
            next(islice(walk.steps, end - index - 1, None))
        return end, items

    def _read_run(
        self, walk: _Walk, position: int, end: int, key: tuple[int, tuple[str, ...]]
    ) -> Iterable[Record | ShapedCall]:
        """Read the run of lines `walk.indices[position]` to `end` as they come, ending the record pending after its
        last line; keep what it left where it can be made again."""
        summary, batch, wanted = self.summary, walk.batch, self.wanted
        first = batch.start + walk.indices[position]
        counts, formats, problems = _counts(summary), dict(summary.formats), len(summary.problems)
        other, prefixes, width, cut = self.other, len(self.prefixes), self.wrap_width, dict(self._cut_widths)
        items: list[Any] = []
        sink, noted = wanted.sink, None
        if sink is not None:
            wanted.sink = noted = _Noted(items)
        try:
            items.extend(self._lines(batch, range(walk.indices[position], end + 1), None, False))
            if self.pending is not None:
                record = self._end(batch.start + end)
                if record is not None:
                    items.append(record)
        finally:
            wanted.sink = sink
        calls = [] if noted is None else noted.calls
        given = _handed(items, calls, sink, self.reader.name, 0) if calls else items
        assert self.runs is not None
        cuts = {w: n - cut.get(w, 0) for w, n in self._cut_widths.items() if n != cut.get(w, 0)}
        if (
            self.overlong is not None
            or len(self.prefixes) != prefixes
            or self.wrap_width != width
            or set(cuts) - {width}
        ):
            self.runs.keep(key, None)
            return given
        run = Run(
            first,
            items,
            tuple(map(operator.sub, _counts(summary), counts)),
            _added(summary, formats),
            summary.problems[problems:],
            None if self.other is other else (self.other[0] - first, self.other[1]),
            cuts.get(width, 0),
            calls,
        )
        self.runs.keep(key, run)
        return given

    def _made_again(self, run: Run, first: int) -> Iterable[Record | ShapedCall]:
        """What reading `run` again at line `first` gives: its records moved there, its counts and problems."""
        summary, offset = self.summary, first - run.first
        for name, added in zip(_COUNTS, run.counts, strict=True):
            if added:
                setattr(summary, name, getattr(summary, name) + added)
        self.cache.stats.hits += run.counts[0] + run.counts[1]  # its records, none read again
        formats = summary.formats
        for name, added in run.formats:
            formats[name] = formats.get(name, 0) + added
        for problem in run.problems:
            self.problem(
                problem.line + offset, problem.message, problem.text, problem.severity, problem.column, problem.once
            )
        if run.other is not None:
            self.other = (first + run.other[0], run.other[1])
        if run.cut:
            self._cut_widths[self.wrap_width] += run.cut
        items = [moved(item, offset) for item in run.items]
        return _handed(items, run.calls, self.wanted.sink, self.reader.name, offset) if run.calls else items


def _no_recall(walk: _Walk, position: int) -> None:
    """No run is made again: the line is read as it comes."""
    return None


def _added(summary: FileSummary, before: dict[str, int]) -> list[tuple[str, int]]:
    """What was added to the records per dialect since `before`."""
    return [(name, n - before.get(name, 0)) for name, n in summary.formats.items() if n != before.get(name, 0)]


__all__ = ["MAX_RUN", "Recalling", "Run", "Runs", "moved", "run_end"]
