"""Reading a large input in pieces, and inputs in several processes.

A large input is cut at record starts into :class:`Piece` s (:func:`cut`). A piece is a small, picklable
description of bytes of the input that carries everything needed to read them on their own, and
:func:`read_piece` reads one wherever it runs: in this process, in a worker of the process pool
(:func:`read_runs_parallel`; :mod:`blaslog.stream` for `blaslog parse`), or on a Dask worker
(:mod:`blaslog.cluster`, which only schedules it). One rule holds for all of them: a reader of the whole input
that saw its lines cut at a width (a terminal or a CI viewer wrapped them) joins later pieces of lines at that
width, so each piece is read with a guess of the width known at its start (its reader first reads a few bytes
before it: :func:`guessed`), and a piece whose guess the reading of the piece before it proves wrong is read again
(:func:`misread`). :class:`PieceReads` is the one driver of that rule, for the local pool and for Dask alike: each
hands it only how to run a task (:data:`Submit`).

This module parses; it renders nothing (the rows of pieces are rendered by :mod:`blaslog.stream`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import chain, pairwise, repeat
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from blaslog._fast import _c, saved
from blaslog._fast.cache import SharedShapes, in_process, share_in_process
from blaslog.formats import Sniffer, boundary_regex
from blaslog.inputs import Reader, read_as_it_lies
from blaslog.parse import parse_file
from blaslog.parse._lines import _FileParser
from blaslog.records import FileSummary, OnError, ParseResult
from blaslog.runs import CompactRun, merge, read_run

if TYPE_CHECKING:
    from concurrent.futures import Executor

T = TypeVar("T")

SPLIT_MIN = 64 << 20
"""Inputs smaller than this are not cut into pieces."""
PROBE_BYTES = 1 << 20
"""Bytes read before a piece to guess the width lines are cut at there (see :func:`guessed`): more than a turn of
the benchmark's real corpus (0.4 MB), whose one wrapped log a turn holds."""


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

    saved.store()  # read before the workers are forked, which then start with it (each would read it anew)
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
    on_error: OnError = OnError.WARN
    """What a record that cannot be parsed does (see :func:`blaslog.parse.iter_file`)."""
    events: bool = False
    """Records other than GEMMs are built too (`--kind all`), not only counted."""
    wrap_width: int = 0
    """The width the lines before it were seen cut at, as far as known when it is read (see :func:`misread`); 0
    when none was."""
    probe_from: int = -1
    """Where not -1, its reader first reads bytes [probe_from, start) to guess `wrap_width`, kept where it sees
    lines cut at no width (see :func:`guessed`)."""

    def at_width(self, width: int) -> Piece:
        """The piece to read with `width` known (no guess: see :func:`misread`)."""
        return replace(self, wrap_width=width, probe_from=-1)

    def parser(self, shapes: SharedShapes | None = None) -> _FileParser:
        """The parser of the piece (learning line shapes into `shapes` too, when given)."""
        parser = _FileParser(
            _RangeReader(self.name, self.start, self.end, self.first_line),
            Sniffer(list(self.log_format) if self.log_format else None),
            self.on_error,
            events=self.events,
            shapes=shapes,
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
    """The width its reader knew lines were cut at when done, or 0: the width the next piece is to be read with
    (see :func:`misread`)."""
    read_with: int = 0
    """The width it was read with (:attr:`Piece.wrap_width`)."""


def cut(
    name: str,
    count: int,
    *,
    log_format: Sequence[str] | None = None,
    on_error: OnError = OnError.WARN,
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
    """Read one piece: `job` takes its parser and makes something of its records (see :func:`run_of`). A piece
    with a `probe_from` is read with the width its reader sees lines cut at before it, if any (see
    :func:`guessed`; what the few bytes taught about line shapes serves the piece)."""
    shapes = None
    if piece.probe_from >= 0:
        shapes = in_process() or SharedShapes()
        width = probe(piece, piece.probe_from, piece.start, shapes)
        piece = piece.at_width(width or piece.wrap_width)
    parser = piece.parser(shapes)
    value = job(parser)
    return PieceRead(value, parser.summary, parser.wrap_width, piece.wrap_width)


def run_of(parser: _FileParser) -> CompactRun:
    """A job of :func:`read_piece`: the GEMM calls of a piece, as a CompactRun."""
    run = parser.sink = CompactRun(parser.reader.name)
    run.extend(parser.records())
    return run


def guessed(pieces: Sequence[Piece]) -> list[Piece]:
    """The consecutive `pieces` of an input, each but the first to be read with a guess of the width a reader of
    the whole input knows its lines cut at when it reaches the piece (see :func:`misread`): the width a reader of
    the PROBE_BYTES before the piece sees, if any. The piece's own reader reads them (:func:`read_piece`), before
    the piece, side by side with the others. The few bytes cost far less than reading again a piece read without
    the width; where the guess is wrong (the lines just before the piece not cut, the width known from earlier
    lines), the piece is read again."""
    return [pieces[0], *(replace(b, probe_from=max(a.start, b.start - PROBE_BYTES)) for a, b in pairwise(pieces))]


def probe(piece: Piece, start: int, end: int, shapes: SharedShapes | None = None) -> int:
    """The width a reader of bytes [start, end) of `piece`'s input, from the first line start on, saw lines cut
    at (0: none), learning line shapes into `shapes`."""
    if start > 0:
        with open(piece.name, "rb") as handle:
            handle.seek(start - 1)
            newline = handle.read(end - start + 1).find(b"\n")
        if newline < 0:
            return 0
        start += newline
    if start >= end:
        return 0
    window = Piece(piece.name, start, end, 1, piece.log_format, OnError.WARN, events=False)
    parser = window.parser(shapes)
    run_of(parser)
    return parser.wrap_width


def misread(reads: Sequence[PieceRead[Any]]) -> list[int]:
    """Indices of the `reads` of consecutive pieces that were not read with the width the reading of the piece
    before them ended with (the first: with none), to read again with it. A reader of the whole input that saw
    its lines cut at a width joins later pieces of lines at that width: a piece read as it would is read with the
    width it knew on reaching the piece; that is the rule that makes pieces read side by side give what one
    reader gives. Only inputs so wrapped are read twice, and only where the guess (:func:`guessed`) was wrong."""
    known = [0, *(read.wrap_width for read in reads[:-1])]
    return [i for i, (read, width) in enumerate(zip(reads, known, strict=True)) if read.read_with != width]


def _width(read: PieceRead[Any]) -> int:
    return read.wrap_width


def _same(read: PieceRead[T]) -> PieceRead[T]:
    return read


def _settled(read: PieceRead[T], piece: Piece, width: int, job: Callable[[_FileParser], T]) -> PieceRead[T]:
    """A piece's reading, or, where it was not read with `width` (the width the reading of the piece before it
    ended with), the piece read again with that width (see :func:`misread`)."""
    return read if read.read_with == width else read_piece(piece.at_width(width), job)


Submit = Callable[..., Any]
"""How a piece driver runs a task: ``submit(fn, *args, here=False)`` gives a future of ``fn(*args)``, the
arguments that are futures passed as their results. `here` marks a task on results (a width; a check that reads
a misread piece again): a local pool runs it in this process, where the results are, instead of sending them to
a worker and back (a piece read again is then read here, one at a time); a Dask client runs every task on its
workers, where the results stay (see :func:`pool_submit`, :func:`blaslog.cluster`)."""


class PieceReads(Generic[T]):
    """The one driver of an input's pieces read side by side, wherever they run (a local process pool, a Dask
    cluster): each piece is read by `job` with a guess of the width lines are cut at before it (:func:`guessed`),
    and read again where the reading of the piece before it ended with another width (:func:`misread`), the width
    travelling from each piece's reading to the next. The misread pieces are read again with the width the first
    reading of the piece before ended with (side by side on Dask's workers; in this process for a local pool,
    where the readings are), then each is checked, in order, against the final reading of the piece before it
    (read again only where that one's width changed). Only a log whose lines were cut at a width is ever read
    again, and only where the guess was wrong."""

    def __init__(self, submit: Submit, pieces: Sequence[Piece], job: Callable[[_FileParser], T], here: bool = False):
        """Submit the reading of every piece (but the first with `here`: this process reads it, see
        :meth:`settled`)."""
        self.submit, self.job = submit, job
        self.pieces = guessed(pieces)
        self.reads: list[Any] = [submit(read_piece, piece, job) for piece in self.pieces[1 if here else 0 :]]

    def settled(self, first: PieceRead[T] | None = None) -> list[Any]:
        """Futures of each piece's final reading, in order (`first`: the first piece's reading, when this process
        read it)."""
        submit, job, pieces = self.submit, self.job, self.pieces
        reads = self.reads if first is None else [submit(_same, first, here=True), *self.reads]
        widths = [submit(_width, read, here=True) for read in reads[:-1]]
        side = [reads[0]] + [
            submit(_settled, read, piece, width, job, here=True)
            for read, piece, width in zip(reads[1:], pieces[1:], widths, strict=True)
        ]
        out = [side[0]]
        for read, piece in zip(side[1:], pieces[1:], strict=True):
            width = submit(_width, out[-1], here=True)
            out.append(submit(_settled, read, piece, width, job, here=True))
        return out


def pool_submit(pool: Executor) -> Submit:
    """A :data:`Submit` over a concurrent.futures pool: as Dask's client does, future arguments are passed as their
    results (waited for here), and a task marked `here` runs in this process."""
    from concurrent.futures import Future

    def submit(fn: Callable[..., Any], *args: Any, here: bool = False) -> Any:
        args = tuple(arg.result() if isinstance(arg, Future) else arg for arg in args)
        if not here:
            return pool.submit(fn, *args)
        done: Future[Any] = Future()
        done.set_result(fn(*args))
        return done

    return submit


def _whole(name: str, log_format: list[str] | None, on_error: OnError) -> tuple[CompactRun, Any]:
    return read_run(name, log_format=log_format, on_error=on_error)


def read_runs_parallel(
    names: list[str], *, log_format: list[str] | None, on_error: OnError, jobs: int
) -> list[tuple[CompactRun, Any]]:
    """CompactRun and FileSummary of each input, using up to `jobs` processes (inputs in the given order). One
    large input is cut into pieces: this process reads the first while `jobs - 1` workers read the others."""
    if len(names) == 1 and splittable(names[0], on_error):
        name = names[0]
        pieces = cut(name, jobs, log_format=log_format, on_error=on_error)
        with process_pool(max(len(pieces) - 1, 1)) as pool:
            driver = PieceReads(pool_submit(pool), pieces, run_of, here=True)
            reads = [future.result() for future in driver.settled(read_piece(driver.pieces[0], run_of))]
        return [merge([(read.value, read.summary, read.summary.lines) for read in reads], name, owned=True)]
    with process_pool(jobs) as pool:
        wholes = [pool.submit(_whole, name, log_format, on_error) for name in names]
        return [f.result() for f in wholes]


def parse_parallel(
    names: list[str], *, log_format: list[str] | None, on_error: OnError, jobs: int, events: bool = True
) -> list[ParseResult]:
    """ParseResults of several inputs parsed in parallel processes."""
    with process_pool(jobs) as pool:
        futures = [
            pool.submit(parse_file, name, log_format=log_format, on_error=on_error, events=events) for name in names
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


def splittable(name: str, on_error: OnError = OnError.WARN) -> bool:
    """A file large enough to cut into pieces, whose pieces can be read on their own (not compressed or UTF-16,
    lines not ended with CR alone: see read_as_it_lies), and not read with `on_error` "raise" (--strict: the
    first error stops the reading, at its line in the whole input)."""
    if name == "-" or not os.path.isfile(name) or os.path.getsize(name) < SPLIT_MIN or on_error == OnError.RAISE:
        return False
    return read_as_it_lies(name)
