"""The known record of a line shape: the second thing the parser asks the speed layer (the first is the plan for
a batch of lines, ``plan.py``).

The parser hands over a record's dialect, SHAPE key and place, and what it wants of records (built, written
later, handed to a sink); it gets back the record, or word that the shape is not known, and never sees a
template. Records served here are counted in the cache's ``stats.hits``.
"""

from __future__ import annotations

from typing import Any

from blaslog._fast.cache import ShapeCache
from blaslog._fast.lazy import ShapedCall
from blaslog._fast.templates import LineTemplate
from blaslog.records import Event, GemmCall, Record

UNKNOWN = object()
"""No template is bound to the key, or the record's SHAPE values do not fit it: the parser reads its text."""

Known = tuple[Record | ShapedCall | None, bool, tuple[str, ...]]
"""(the record, a ShapedCall where it is written later, or None where there is nothing to hand on: an event
nobody asked for, counted only, or a GEMM a sink took; whether it is a GEMM; its warnings)."""


class Wanted:
    """What the parser wants of the records of one input."""

    __slots__ = ("events", "lazy", "sink")

    def __init__(self, events: bool = True) -> None:
        self.events = events
        """Records other than GEMMs are built too (else only counted)."""
        self.lazy = False
        """A record of a template whose values go in as they stand comes as a ShapedCall, built when asked."""
        self.sink: Any = None
        """A CompactRun that takes GEMMs of a uniform shape without their being built, or None."""


def known_record(
    cache: ShapeCache,
    fmt: Any,
    key: str,
    values: list[str] | None,
    line: str,
    place: tuple[str, int, int],
    wanted: Wanted,
    outer: str | None = None,
) -> Known | object:
    """The record of `fmt` whose lines have SHAPE key `key` (a one-line record's key, or the keys of a record's
    lines joined by line ends), at `place` (path, first line, last line), from its SHAPE `values` (None: those of
    `line`, its one line); UNKNOWN when the key has no template, or the values do not fit it. `outer`: the whole
    line's key where other text (a launcher's tag) came before the record (its lines are then known too)."""
    template = cache.line_template(fmt, key)
    if template is None:
        free = values is None and not wanted.events and cache.shortcuts.get(key) is fmt
        if free:  # free text with nothing to build (see ShapeCache.learn), visited only for the lines around it
            if outer is not None:
                cache.shortcut(key, fmt, fmt, outer)
            cache.stats.hits += 1
            return None, False, ()
        return UNKNOWN
    if outer is not None:
        cache.shortcut(key, fmt, template, outer)
    if template.cls is Event and not wanted.events:  # a known non-GEMM shape that nobody asked to see
        cache.stats.hits += 1
        return None, False, template.warnings
    made = _made(template, cache.shaper.values(line) if values is None else values, place, wanted)
    if made is not UNKNOWN:
        cache.stats.hits += 1
    return made


def bound(cache: ShapeCache, fmt: Any, key: str) -> bool:
    """Whether a template is bound to SHAPE key `key` of `fmt` (a record of several lines of it is then taken in
    one step the next time: see ``follow.py``)."""
    return cache.line_template(fmt, key) is not None


def _made(template: LineTemplate, values: list[str], place: tuple[str, int, int], wanted: Wanted) -> Known | object:
    path, first, last = place
    if len(values) == template.count:
        if wanted.sink is not None and template.uniform:
            # a GEMM equal to every other of its shape: the sink keeps one record and where each call was
            wanted.sink.add_shaped(template, values, path, first, last)
            return None, True, template.warnings
        if wanted.lazy and template.verbatim:
            # each value that varies goes in as it stands (no conversion that could fail): built when written
            return ShapedCall(template, values, path, first, last), template.cls is GemmCall, template.warnings
    fields = template.fields(values, path, first, last)
    if fields is None:
        return UNKNOWN
    return template.make(fields), template.cls is GemmCall, template.warnings


def marked_record(
    template: LineTemplate, values: list[str], path: str, number: int, wanted: Wanted, line: str | None = None
) -> Record | ShapedCall | None:
    """The GEMM of a uniform shape on line `number` that the plan marked (dialect, template), from its line's
    SHAPE values: handed to the sink (None), written later, or built. `line`: the line, where it comes again
    nearby (a writer may key by it)."""
    if wanted.sink is not None:
        wanted.sink.add_shaped(template, values, path, number, number)
        return None
    if not wanted.lazy:
        record: Record = template.make(template.build_fields(values, path, number, number))
        return record
    return ShapedCall(template, values, path, number, number, line)


def is_gemm(record: Record | ShapedCall) -> bool:
    """Whether a record (built or not) is a GEMM."""
    return type(record) is GemmCall or (type(record) is ShapedCall and record.template.cls is GemmCall)


__all__ = ["UNKNOWN", "Known", "Wanted", "bound", "is_gemm", "known_record", "marked_record"]
