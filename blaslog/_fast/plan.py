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
_IS_NOT_NONE = functools.partial(operator.is_not, None)


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
    speedups = _c.speedups
    if speedups is not None:
        of, plain, gemm_at, after, tally = speedups.planned(lines, shapes, shortcuts)
    else:
        of, plain, gemm_at, after, tally = _planned(lines, shapes, counts, shortcuts)
    before = _ended(lines, shapes, cache, of, after)
    for i in before:
        tally[of[i]] -= 1
    counted = _counted(tally)
    cache.stats.hits += sum(counted.values())
    if events:
        # every mark is (dialect, template), so every line is visited: the marks go by position
        for i in before:
            of[i] = None
        cache.stats.visited += of.count(None)  # the marked lines are not assembled
        return Plan(range(len(lines)), of, counted)
    visit, by_index = _gemms(of, plain, before, gemm_at)
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


def _planned(
    lines: list[str], shapes: dict[str, str], counts: dict[str, int], shortcuts: dict[str, Any]
) -> tuple[list[Any], list[int], list[int], list[int], dict[Any, int]]:
    """(each line's mark; the indices of the unmarked lines, of the GEMMs marked (dialect, template), and of the
    unmarked lines after a marked one; each mark other than None -> how many lines have it): ``_speedups.planned``
    in Python."""
    marks = dict(zip(shapes, map(shortcuts.get, shapes.values()), strict=True))
    of = list(map(marks.__getitem__, lines))
    plain = list(compress(range(len(lines)), map(_IS_NONE, of)))
    gemms = [i for i in compress(range(len(lines)), map(_IS_NOT_NONE, of)) if type(of[i]) is tuple]
    after = [i for i in plain if i and of[i - 1] is not None]
    return of, plain, gemms, after, _tallied(marks, counts)


def _tallied(marks: dict[str, Any], counts: dict[str, int]) -> dict[Any, int]:
    """Each mark other than None -> how many lines of the batch have it."""
    tally: dict[Any, int] = {}
    for line, mark in marks.items():
        if mark is not None:
            tally[mark] = tally.get(mark, 0) + counts[line]
    return tally


def _ended(lines: list[str], shapes: dict[str, str], cache: ShapeCache, of: list[Any], after: list[int]) -> set[int]:
    """The marked lines assembled the ordinary way: those before an unmarked line (in `after`, the unmarked lines
    after a marked one) of a shape that begins no known record (it may continue theirs), and the batch's last line
    (the next batch may continue it). `of`: each line's mark."""
    last = len(lines) - 1
    before = {last} if lines and of[last] is not None else set()
    known = cache.known
    for i in after:
        if shapes[lines[i]] not in known:
            before.add(i - 1)
    return before


def _gemms(of: list[Any], plain: list[int], before: set[int], gemm_at: list[int]) -> tuple[list[int], dict[int, Any]]:
    """When only GEMMs are wanted: the visited lines (the unmarked ones, and the GEMMs marked (dialect,
    template), at `gemm_at`), and the marks of those GEMMs by index."""
    by_index = dict(zip(gemm_at, map(of.__getitem__, gemm_at), strict=True))
    visit = plain + gemm_at
    visit += [i for i in before if type(of[i]) is not tuple]
    for i in before:
        by_index.pop(i, None)
    visit.sort()  # timsort merges the sorted runs
    return visit, by_index


__all__ = ["Plan", "every_line", "plan"]
