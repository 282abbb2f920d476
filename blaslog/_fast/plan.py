"""The plan for a batch of lines: which lines the parser must assemble, and which are whole records of a shape
seen before (counted without a visit, or built from their template).

This is the first of the two things the parser asks of the speed layer (the second is the shape cache's
template of a line shape). It reads the batch's distinct lines and their counts and C-level passes over the
list; it never calls the parser.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress
from typing import Any

from blaslog._fast import _c
from blaslog._fast.cache import ShapeCache
from blaslog.records import GemmCall

_IS_NONE = functools.partial(operator.is_, None)


@dataclass(slots=True)
class Plan:
    """What the parser does with a batch's lines."""

    visit: Sequence[int]
    """The indices of the lines the parser assembles (in order)."""
    marks: dict[int, Any] | list[Any]
    """The marked lines among those: by index, for the GEMM lines built from their template (only GEMMs are
    wanted); or every line's mark (None: assembled the ordinary way) when every record is wanted."""
    tally: dict[tuple[Any, bool], int]
    """(dialect, whether they are GEMMs) -> how many lines of such records are counted (whole records, handed on
    by the parser where marked (dialect, template) and wanted, else only counted; served from learnt shapes, in
    the cache's `stats.hits`)."""


def plan(lines: list[str], shapes: dict[str, str], counts: dict[str, int], cache: ShapeCache, events: bool) -> Plan:
    """The plan for a batch of `lines` (each distinct line's SHAPE key in `shapes`, its count in `counts`).

    A line of a shape the cache has a shortcut for (an [Api] or [Info] line seen before, say) ends the record
    before it and continues none, so it can be counted without visiting it. A visited line of a new shape may
    continue the record before it, so that line is visited too; so is the batch's last line (the next batch may
    continue it). A GEMM line of a uniform shape is marked (dialect, template): the parser builds it from the
    template, hands it to a sink or on as a ShapedCall, without assembling it. When every record is wanted
    (`events`), nothing is counted without a visit, and every line of a verbatim template
    (``ShapeCache.built``) is marked so.
    """
    shortcuts = cache.built if events else cache.shortcuts
    marks = dict(zip(shapes, map(shortcuts.get, shapes.values()), strict=True))
    speedups = _c.speedups
    unmarked: list[bool] | None = None
    gemm_at: list[int] | None = None  # the indices of the GEMMs marked (dialect, template), where C found them
    if speedups is not None:
        plain, gemm_at = speedups.marked(lines, marks)
    else:
        unmarked = _unmarked(lines, marks)
        plain = list(compress(range(len(lines)), unmarked))
    # the fewer of the unmarked and the marked lines are looked at one by one
    few = len(plain) * 2 < len(lines)
    others: list[int] = []
    if not few:
        unmarked = unmarked if unmarked is not None else _unmarked(lines, marks)
        others = list(compress(range(len(lines)), map(operator.not_, unmarked)))  # the marked lines
    before = _ended(lines, shapes, cache, marks, unmarked, plain, others, few)
    tally: dict[Any, int] = speedups.tallied(marks, counts) if speedups is not None else _tallied(marks, counts)
    for i in before:
        tally[marks[lines[i]]] -= 1
    counted = _counted(tally)
    cache.stats.hits += sum(counted.values())
    if events:
        # every mark is (dialect, template), so every line is visited: the marks go by position
        of = list(map(marks.__getitem__, lines))
        for i in before:
            of[i] = None
        cache.stats.visited += of.count(None)  # the marked lines are not assembled
        return Plan(range(len(lines)), of, counted)
    visit, by_index = _gemms(lines, marks, plain, others, few, before, gemm_at)
    cache.stats.visited += len(visit) - len(by_index)
    return Plan(visit, by_index, counted)


def every_line(count: int, cache: ShapeCache) -> Plan:
    """The plan for a batch of `count` lines whose shapes are not known (the batch holds NUL bytes or lines the
    reader reported, or GEMMs go to a sink while every record is wanted): the parser assembles every line."""
    cache.stats.visited += count
    return Plan(range(count), {}, {})


def _counted(tally: dict[Any, int]) -> dict[tuple[Any, bool], int]:
    """The tally by mark as (dialect, whether GEMMs) -> count (a mark is a dialect, or (dialect, template))."""
    counted: dict[tuple[Any, bool], int] = {}
    for mark, count in tally.items():
        if count:
            what = (mark[0], mark[1].cls is GemmCall) if type(mark) is tuple else (mark, False)
            counted[what] = counted.get(what, 0) + count
    return counted


def _tallied(marks: dict[str, Any], counts: dict[str, int]) -> dict[Any, int]:
    """Each mark other than None -> how many lines of the batch have it (``_speedups.tallied`` in Python)."""
    tally: dict[Any, int] = {}
    for line, mark in marks.items():
        if mark is not None:
            tally[mark] = tally.get(mark, 0) + counts[line]
    return tally


def _unmarked(lines: list[str], marks: dict[str, Any]) -> list[bool]:
    """Whether each line is unmarked (its mark is None)."""
    return list(map(dict(zip(marks, map(_IS_NONE, marks.values()), strict=True)).__getitem__, lines))


def _ended(
    lines: list[str],
    shapes: dict[str, str],
    cache: ShapeCache,
    marks: dict[str, Any],
    unmarked: list[bool] | None,
    plain: list[int],
    others: list[int],
    few: bool,
) -> set[int]:
    """The marked lines assembled the ordinary way: those before an unmarked line of a shape that begins no
    known record (it may continue theirs), and the batch's last line (the next batch may continue it).
    `unmarked`: whether each line is unmarked (given where not `few`)."""
    last = len(lines) - 1
    before = {last} if lines and marks[lines[last]] is not None else set()
    if few:
        after = [i for i in plain if i and marks[lines[i - 1]] is not None]
    else:
        assert unmarked is not None
        after = [i + 1 for i in others if i + 1 < len(lines) and unmarked[i + 1]]
    known = cache.known
    for i in after:
        if shapes[lines[i]] not in known:
            before.add(i - 1)
    return before


def _gemms(
    lines: list[str],
    marks: dict[str, Any],
    plain: list[int],
    others: list[int],
    few: bool,
    before: set[int],
    gemm_at: list[int] | None,
) -> tuple[list[int], dict[int, Any]]:
    """When only GEMMs are wanted: the visited lines (the unmarked ones, and the GEMMs marked (dialect,
    template)), and the marks of those GEMMs by index (`gemm_at`: their indices, where known already)."""
    if gemm_at is not None:
        marked = gemm_at
    elif not (gemms := {line for line, mark in marks.items() if type(mark) is tuple}):
        marked = []
    elif few:
        marked = list(compress(range(len(lines)), map(gemms.__contains__, lines)))
    else:
        marked = [i for i in others if lines[i] in gemms]
    of = dict(zip(marked, map(marks.__getitem__, map(lines.__getitem__, marked)), strict=True))
    visit = plain + marked
    extra = [i for i in before if type(marks[lines[i]]) is not tuple]
    for i in before:
        of.pop(i, None)
    visit += extra
    visit.sort()  # timsort merges the sorted runs
    return visit, of


__all__ = ["Plan", "every_line", "plan"]
