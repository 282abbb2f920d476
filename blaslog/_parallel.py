"""Reading a large input in pieces, and inputs in several processes.

A large input is cut at record starts into :class:`Piece` s (:func:`cut`). A piece is a small, picklable
description of bytes of the input that carries everything needed to read them on their own, and
:func:`read_piece` reads one wherever it runs: in this process, in a worker of the process pool
(:func:`read_runs_parallel`; :mod:`blaslog.stream` for `blaslog parse`), or on a Dask worker
(:mod:`blaslog.cluster`, which only schedules it). One rule holds for all of them: a reader of the whole input
that saw its lines cut at a width (a terminal or a CI viewer wrapped them) joins later pieces of lines at that
width, so a piece read before that width was known is read again with it (:func:`again`).

This module parses; it renders nothing (the rows of pieces are rendered by :mod:`blaslog.stream`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import chain, pairwise, repeat
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from blaslog._fast import _c
from blaslog._fast.cache import share_in_process
from blaslog.formats import Sniffer, boundary_regex
from blaslog.inputs import Reader, read_as_it_lies
from blaslog.parse import parse_file
from blaslog.parse._lines import _FileParser
from blaslog.records import FileSummary, ParseResult
from blaslog.runs import CompactRun, merge, read_run

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future

T = TypeVar("T")

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

    return Pool(max_workers=jobs, initializer=share_in_process)  # a worker learns each line shape once


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


@dataclass(frozen=True, slots=True)
class Piece:
    """Bytes [start, end) of an input, cut at line starts, with everything needed to read them on their own: a
    small, picklable description that a pool's or a Dask worker reads (:func:`read_piece`)."""

    name: str
    """The input: a local file that can be read in pieces (see :func:`splittable`)."""
    start: int
    """Its first byte, at a line start."""
    end: int
    """The byte after its last one, at a line start (or the input's end)."""
    first_line: int = 1
    """Number of its first line in the input; 1 where its lines are numbered from its start and shifted when the
    pieces are merged (:func:`blaslog.runs.merge`)."""
    log_format: tuple[str, ...] | None = None
    """The dialects read (`--log-format`), None for all."""
    on_error: str = "warn"
    """What a record that cannot be parsed does (see :func:`blaslog.parse.iter_file`)."""
    events: bool = False
    """Records other than GEMMs are built too (`--kind all`), not only counted."""
    wrap_width: int = 0
    """The width the lines before it were seen cut at (see :func:`again`); 0 when none was."""

    def parser(self) -> _FileParser:
        """The parser of the piece."""
        parser = _FileParser(
            _RangeReader(self.name, self.start, self.end, self.first_line),
            Sniffer(list(self.log_format) if self.log_format else None),
            self.on_error,  # type: ignore[arg-type]
            events=self.events,
        )
        parser.wrap_width = self.wrap_width
        return parser


@dataclass(frozen=True, slots=True)
class PieceRead(Generic[T]):
    """What reading a piece gave."""

    value: T
    """What the reading job made of its records (a CompactRun, rows ...)."""
    summary: FileSummary
    """Its accounting (lines, records, problems), lines numbered as the piece's were."""
    wrap_width: int
    """The width its lines were seen cut at, or 0 (see :func:`again`)."""


def cut(
    name: str,
    count: int,
    *,
    log_format: Sequence[str] | None = None,
    on_error: str = "warn",
    events: bool = False,
    numbered: bool = False,
    pool: Executor | None = None,
) -> list[Piece]:
    """`name` cut into about `count` pieces at record starts (see :func:`split_points`). With `numbered`, each
    piece knows the number of its first line in the input (counted by `pool` too, when given: see
    :func:`line_starts`); else each numbers its lines from 1 (see :attr:`Piece.first_line`)."""
    formats = list(log_format) if log_format else None
    points = split_points(name, count, formats)
    how = (tuple(formats) if formats else None, on_error, events)
    pieces = [Piece(name, a, b, 1, *how) for a, b in pairwise(points)]
    return with_line_numbers(pieces, pool) if numbered else pieces


def with_line_numbers(pieces: Sequence[Piece], pool: Executor | None = None) -> list[Piece]:
    """The consecutive `pieces` of an input, each with the number of its first line in the input (the newlines
    before it counted in as many ranges, by `pool` too when given: see :func:`line_starts`)."""
    points = [piece.start for piece in pieces] + [pieces[-1].end]
    firsts = line_starts(pieces[0].name, points, pool, len(pieces))
    return [replace(piece, first_line=first) for piece, first in zip(pieces, firsts, strict=True)]


def read_piece(piece: Piece, job: Callable[[_FileParser], T]) -> PieceRead[T]:
    """Read one piece: `job` takes its parser and makes something of its records (see :func:`run_of`)."""
    parser = piece.parser()
    value = job(parser)
    return PieceRead(value, parser.summary, parser.wrap_width)


def run_of(parser: _FileParser) -> CompactRun:
    """A job of :func:`read_piece`: the GEMM calls of a piece, as a CompactRun."""
    run = parser.sink = CompactRun(parser.reader.name)
    run.extend(parser.records())
    return run


def again(pieces: Sequence[Piece], widths: Sequence[int]) -> list[Piece | None]:
    """For pieces read side by side whose readers saw their lines cut at `widths` (0: not seen), each piece to
    read again (with the width seen before it), or None where its reading stands. A reader of the whole input
    that saw its lines cut at a width joins later pieces of lines at that width; a piece read without knowing
    it may leave some apart. Only inputs so wrapped are read twice."""
    known = rewrapped(widths)
    return [replace(piece, wrap_width=width) if width else None for piece, width in zip(pieces, known, strict=True)]


def rewrapped(widths: Sequence[int]) -> list[int]:
    """For pieces whose readers saw their lines cut at `widths`, the width to read each again with, or 0 (see
    :func:`again`): the first width seen before it."""
    out, known = [], 0
    for width in widths:
        out.append(known)
        known = known or width
    return out


def settled(
    pool: Executor, job: Callable[[_FileParser], T], pieces: Sequence[Piece], reads: list[PieceRead[T]]
) -> list[PieceRead[T]]:
    """`reads` of `pieces` by `job`, with those to read again (see :func:`again`) read again in `pool`, side by
    side."""
    redo: dict[int, Future[PieceRead[T]]] = {
        i: pool.submit(read_piece, piece, job)
        for i, piece in enumerate(again(pieces, [read.wrap_width for read in reads]))
        if piece is not None
    }
    return [redo[i].result() if i in redo else read for i, read in enumerate(reads)]


def _whole(name: str, log_format: list[str] | None, on_error: str) -> tuple[CompactRun, Any]:
    return read_run(name, log_format=log_format, on_error=on_error)


def read_runs_parallel(
    names: list[str], *, log_format: list[str] | None, on_error: str, jobs: int
) -> list[tuple[CompactRun, Any]]:
    """CompactRun and FileSummary of each input, using up to `jobs` processes (inputs in the given order). One
    large input is cut into pieces: this process reads the first while `jobs - 1` workers read the others."""
    if len(names) == 1 and splittable(names[0], on_error):
        name = names[0]
        pieces = cut(name, jobs, log_format=log_format, on_error=on_error)
        with process_pool(max(len(pieces) - 1, 1)) as pool:
            others = [pool.submit(read_piece, piece, run_of) for piece in pieces[1:]]
            reads = [read_piece(pieces[0], run_of), *(future.result() for future in others)]
            reads = settled(pool, run_of, pieces, reads)
        return [merge([(read.value, read.summary, read.summary.lines) for read in reads], name, owned=True)]
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
        others = pool.map(_count_lines, [path] * (len(ranges) - 1), starts[1:], stops[1:])  # submitted now
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
            count += _c.speedups.newlines(view, got) if _c.speedups is not None else buffer.count(b"\n", 0, got)
            left -= got
    return count


def splittable(name: str, on_error: str = "warn") -> bool:
    """A file large enough to cut into pieces, whose pieces can be read on their own (not compressed or UTF-16,
    lines not ended with CR alone: see read_as_it_lies), and not read with `on_error` "raise" (--strict: the
    first error stops the reading, at its line in the whole input)."""
    if name == "-" or not os.path.isfile(name) or os.path.getsize(name) < SPLIT_MIN or on_error == "raise":
        return False
    return read_as_it_lies(name)
