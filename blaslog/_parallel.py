"""Parsing in several processes: one input per worker, and a large input cut into pieces at record starts.

This module parses; it renders nothing (streamed output of pieces is :mod:`blaslog.stream`)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from itertools import chain, pairwise, repeat
from typing import TYPE_CHECKING, Any

from blaslog.formats import Sniffer, boundary_regex
from blaslog.formats._shapes import speedups
from blaslog.inputs import Reader, read_as_it_lies
from blaslog.parse import _FileParser, parse_file
from blaslog.records import ParseResult
from blaslog.runs import CompactRun, merge, read_run

if TYPE_CHECKING:
    from concurrent.futures import Executor

SPLIT_MIN = 64 << 20
"""Inputs smaller than this are not cut into pieces."""


def process_pool(jobs: int) -> Executor:
    """A pool of `jobs` worker processes, which a `with` block left by an exception (a SIGTERM, Ctrl-C, an error)
    stops at once: pieces not begun are cancelled and the workers ended, where the executor's own exit waits
    for every piece (and a worker outlived a killed blaslog). `multiprocessing` is imported only here: it costs
    some 10 ms of start-up, a tenth of a one-process command's, which it would otherwise pay for nothing."""
    from concurrent.futures import ProcessPoolExecutor

    class Pool(ProcessPoolExecutor):
        def __exit__(self, kind: Any, exc: Any, traceback: Any) -> bool | None:
            if kind is not None:
                self.shutdown(wait=False, cancel_futures=True)
                for process in list((getattr(self, "_processes", None) or {}).values()):
                    process.terminate()
            return super().__exit__(kind, exc, traceback)

    return Pool(max_workers=jobs)


class _RangeReader(Reader):
    """A Reader over bytes [start, end) of a file (which begin and end at line starts)."""

    detects_cr_lines = False  # a file of CR line ends is not cut (read_as_it_lies)

    def __init__(self, name: str, start: int, end: int, first_line: int = 1) -> None:
        super().__init__(name, first_line=first_line)
        self.start, self.end = start, end

    def _open(self) -> tuple[Any, list[Any]]:
        handle = open(self.name, "rb")  # noqa: SIM115 (closed by the Reader that reads it)
        handle.seek(self.start)
        return _Bounded(handle, self.end - self.start), [handle]


class _Bounded:
    """Reads at most `left` bytes of a file, a block at a time (a piece of a large input, in bounded memory)."""

    def __init__(self, handle: Any, left: int) -> None:
        self.handle, self.left = handle, left

    def read1(self, size: int) -> bytes:
        data = self.handle.read(min(size, self.left)) if self.left > 0 else b""
        self.left -= len(data)
        return data

    read = read1


def split_points(path: str, pieces: int, log_format: list[str] | None = None) -> list[int]:
    """Byte offsets that cut `path` into about `pieces` parts, each cut just before a line that begins a record
    of the dialects read (`log_format`; a launcher's tag may come first: a record's start is sought where the
    parser seeks it, anywhere in the line), and not after a line that ends with a backslash (which some dialects
    continue onto the next line)."""
    size = os.path.getsize(path)
    boundary = boundary_regex()  # each registered dialect declares where its records may be cut
    sniffer = Sniffer(log_format)
    points = [0]
    with open(path, "rb") as handle:
        for i in range(1, pieces):
            at = size * i // pieces
            base = max(at - 1024, 0)  # the end of the line before a candidate is read too
            handle.seek(base)
            window = handle.read((1 << 20) + at - base)
            for match in boundary.finditer(window, at - base):
                start = match.start() + 1
                if window[max(start - 1024, 0) : start - 1].rstrip().endswith(b"\\"):
                    continue
                end = window.find(b"\n", start)
                line = window[start : end if end >= 0 else len(window)].decode("utf-8", "replace")
                if sniffer.cuts(line):
                    if base + start > points[-1]:
                        points.append(base + start)
                    break
    points.append(size)
    return points


def range_parser(
    name: str,
    start: int,
    end: int,
    log_format: list[str] | None,
    on_error: str,
    *,
    first_line: int = 1,
    events: bool = False,
    wrap_width: int = 0,
) -> _FileParser:
    """A parser of bytes [start, end) of `name` (cut at line starts), its lines numbered from `first_line`;
    `wrap_width` is the width the lines before were seen cut at (see :func:`rewrapped`)."""
    parser = _FileParser(
        _RangeReader(name, start, end, first_line),
        Sniffer(log_format),
        on_error,  # type: ignore[arg-type]
        events=events,
    )
    parser.wrap_width = wrap_width
    return parser


def rewrapped(widths: list[int]) -> list[int]:
    """For pieces read side by side whose readers saw their lines cut at `widths` (0: not seen), the width to
    read each piece again with, or 0 where the piece's reading stands. A reader of the whole input that saw its
    lines cut at a width (a terminal or a CI viewer wrapped them) joins later pieces of lines at that width; a
    piece read without knowing it may leave some apart. Only inputs so wrapped are read twice."""
    again, known = [], 0
    for width in widths:
        again.append(known)
        known = known or width
    return again


def _piece(
    name: str, start: int, end: int, log_format: list[str] | None, on_error: str, wrap_width: int = 0
) -> tuple[CompactRun, Any, int, int]:
    """The run, summary and line count of bytes [start, end) of `name`, and the width its lines were seen cut at."""
    parser = range_parser(name, start, end, log_format, on_error, wrap_width=wrap_width)
    run = parser.sink = CompactRun(name)
    run.extend(parser.records())
    return run, parser.summary, parser.summary.lines, parser.wrap_width


def _whole(name: str, log_format: list[str] | None, on_error: str) -> tuple[CompactRun, Any]:
    return read_run(name, log_format=log_format, on_error=on_error)


def read_runs_parallel(
    names: list[str], *, log_format: list[str] | None, on_error: str, jobs: int
) -> list[tuple[CompactRun, Any]]:
    """CompactRun and FileSummary of each input, using up to `jobs` processes (inputs in the given order). One
    large input is cut into pieces: this process reads the first while `jobs - 1` workers read the others."""
    if len(names) == 1 and splittable(names[0], on_error):
        name = names[0]
        ranges = list(pairwise(split_points(name, jobs, log_format)))
        with process_pool(max(len(ranges) - 1, 1)) as pool:
            others = [pool.submit(_piece, name, a, b, log_format, on_error) for a, b in ranges[1:]]
            parts = [_piece(name, *ranges[0], log_format, on_error), *(f.result() for f in others)]
        for i, width in enumerate(rewrapped([part[3] for part in parts])):
            if width:
                parts[i] = _piece(name, *ranges[i], log_format, on_error, width)
        return [merge([part[:3] for part in parts], name, owned=True)]
    with process_pool(jobs) as pool:
        wholes = [pool.submit(_whole, name, log_format, on_error) for name in names]
        return [f.result() for f in wholes]


def parse_parallel(
    names: list[str], *, log_format: list[str] | None, on_error: str, jobs: int, events: bool = True
) -> list[ParseResult]:
    """ParseResults of several inputs parsed in parallel processes."""
    with process_pool(jobs) as pool:
        futures = [
            pool.submit(parse_file, name, log_format=log_format, on_error=on_error, events=events)  # type: ignore[arg-type]
            for name in names
        ]
        return [f.result() for f in futures]


def line_starts(path: str, points: list[int], pool: Executor | None = None, parts: int = 1) -> list[int]:
    """The line number at each of `points` but the last (byte offsets at line starts). The newlines before the
    last piece are counted in `parts` ranges of about equal size: when `pool` is given, the first by this process
    while its processes count the others (the pieces' parsers cannot start before: their rows carry line
    numbers)."""
    ends = points[:-1]
    cuts = sorted(set(ends) | {ends[-1] * i // parts for i in range(parts)})
    ranges = list(pairwise(cuts))
    starts, stops = [a for a, _ in ranges], [b for _, b in ranges]
    counts: Iterable[int]
    if pool is None or not ranges:
        counts = map(_count_lines, repeat(path, len(ranges)), starts, stops)
    else:
        others = pool.map(_count_lines, repeat(path, len(ranges) - 1), starts[1:], stops[1:])  # submitted now
        counts = chain([_count_lines(path, starts[0], stops[0])], others)
    number, total = {0: 1}, 1
    for stop, count in zip(stops, counts, strict=True):  # the ranges in order: a running total
        total += count
        number[stop] = total
    return [number[point] for point in ends]


def _count_lines(path: str, start: int, end: int) -> int:
    """Newlines in bytes [start, end) of a file (read into one reused buffer: no new memory per block)."""
    count, left = 0, end - start
    buffer = bytearray(min(left, 1 << 20))
    view = memoryview(buffer)
    with open(path, "rb", buffering=0) as handle:
        handle.seek(start)
        while left > 0:
            got = handle.readinto(view[: min(left, len(buffer))])
            if not got:
                break
            count += speedups.newlines(view, got) if speedups is not None else buffer.count(b"\n", 0, got)
            left -= got
    return count


def splittable(name: str, on_error: str = "warn") -> bool:
    """A file large enough to cut into pieces, whose pieces can be read on their own (not compressed or UTF-16,
    lines not ended with CR alone: see read_as_it_lies), and not read with `on_error` "raise" (--strict: the
    first error stops the reading, at its line in the whole input)."""
    if name == "-" or not os.path.isfile(name) or os.path.getsize(name) < SPLIT_MIN or on_error == "raise":
        return False
    return read_as_it_lies(name)
