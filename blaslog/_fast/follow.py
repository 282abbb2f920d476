"""Records of several lines (cuBLAS `i!` lines) taken in one step by their lines' SHAPE keys.

Once a record of several lines was read and its template bound to its lines' keys joined, a later record whose
first line has the key of that record's first line, followed by lines of the same keys, is that record again:
its lines are taken at once, not assembled one by one (``CacheStats.followed`` counts such records).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import islice
from typing import Any

from blaslog._fast.cache import ShapeCache
from blaslog._fast.shapes import keep

MAX_LINES = 256
"""Most physical lines one record may span (parse.MAX_RECORD_LINES)."""


class Follow:
    """The records of several lines bound to a template, by their lines' SHAPE keys (bounded tables)."""

    __slots__ = ("records", "spans")

    def __init__(self) -> None:
        self.spans: dict[str, tuple[int, ...]] = {}
        """SHAPE key of a line that began a record of several lines bound to a template -> the numbers of lines
        that followed it in such records."""
        self.records: dict[tuple[str, ...], tuple[Any, tuple[str, tuple[int, ...]], int]] = {}
        """The SHAPE keys of the lines of such a record -> (its dialect, (the keys joined by line ends, which lines
        hold SHAPE values), the cache's `grown` when none of the lines after the first was known to begin a
        record, -1 before that was checked)."""

    def span(
        self,
        fmt: Any,
        lines: list[str],
        shapes: dict[str, str],
        indices: Sequence[int],
        position: int,
        marks: tuple[list[Any], list[int]],
        cache: ShapeCache,
        wrap_width: int = 0,
    ) -> tuple[int, tuple[str, tuple[int, ...]]] | None:
        """(how many lines after line `indices[position]` belong to its record of `fmt`, the record's bound key)
        when their SHAPE keys and its first line's are those of a record bound to a template before; else None.

        Those lines are what the parser would have added one by one: each follows the one before among
        `indices` (no gap), is marked by nobody (`marks`: every line's mark, or the indices of the marked lines
        in order), begins no record (no key after the first is `known` to the cache), and continues the record
        (the dialect's `continues` says so by key, and said so of the lines of that record). The record's second
        line is not as long as its first (a record whose lines are all as long as its first is taken for one
        line cut at that width). Where the input's lines were seen cut at a width (`wrap_width`), no line but the
        last is that long (the line after it could be taken as its next piece). The caller sees that the batch
        has no problems, and takes the lines (counted in the cache's `stats`).
        """
        positions, marked_at = marks
        index = indices[position]
        first = lines[index]
        for count in self.spans.get(shapes[first], ()):
            end = index + count
            if position + count >= len(indices) or indices[position + count] != end:
                continue  # past the batch's lines to visit, or lines counted already among them
            if len(lines[index + 1]) == len(first) or count >= MAX_LINES:
                continue
            if wrap_width and wrap_width in map(len, lines[index:end]):
                continue
            keys = tuple(map(shapes.__getitem__, lines[index : end + 1]))
            entry = self.records.get(keys)
            if entry is None or entry[0] is not fmt:
                continue
            if entry[2] != cache.grown:  # a line after the first may begin a record now
                if not cache.known.keys().isdisjoint(islice(keys, 1, None)):
                    continue
                entry = self.records[keys] = (entry[0], entry[1], cache.grown)
            if positions and positions[index + 1 : end + 1].count(None) != count:
                continue
            if marked_at and bisect_right(marked_at, end) != bisect_right(marked_at, index):
                continue
            cache.stats.visited -= count  # the parser takes them in one step
            cache.stats.followed += 1
            return count, entry[1]
        return None

    def learn(self, fmt: Any, key: str, parts: list[tuple[str, list[str]]]) -> None:
        """Let :meth:`span` take records of `fmt` whose lines have these SHAPE keys (`parts`: (key, values) of each
        line; `key`: the keys joined by line ends)."""
        keys = tuple(part[0] for part in parts)
        if keys not in self.records:
            keep(self.records, keys, (fmt, (key, tuple(i for i, part in enumerate(parts) if part[1])), -1))
        spans = self.spans.get(keys[0], ())  # (emptied apart from `records` when full)
        if len(keys) - 1 not in spans:
            keep(self.spans, keys[0], (len(keys) - 1, *spans[:3]))


__all__ = ["Follow"]
