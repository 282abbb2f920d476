"""Parsing in several processes: one input per worker, and a large input cut into pieces at record starts."""

from __future__ import annotations

import os
import re
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from blaslog.inputs import Reader
from blaslog.records import ParseResult
from blaslog.runs import CompactRun, merge, read_run

SPLIT_MIN = 64 << 20
"""Inputs smaller than this are not cut into pieces."""

# A line that always begins a one-line record: a piece may start there.
_BOUNDARY = re.compile(rb"\n(?=\[\d{4}-\d\d-\d\d[ T][\d:.]+\]\[(?:cublasLt|HIPBLASLT)\]\[\d+\]\[|rocblas_\w+,|\./rocblas-bench |hipblaslt-bench )")


class _RangeReader(Reader):
    """A Reader over bytes [start, end) of a file (which begin and end at line starts)."""

    def __init__(self, name: str, start: int, end: int, first_line: int = 1) -> None:
        super().__init__(name, first_line=first_line)
        self.start, self.end = start, end

    def _open(self) -> tuple[Any, list[Any]]:
        handle = open(self.name, "rb")
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


def split_points(path: str, pieces: int) -> list[int]:
    """Byte offsets that cut `path` into about `pieces` parts, each cut just before a record start."""
    size = os.path.getsize(path)
    points = [0]
    with open(path, "rb") as handle:
        for i in range(1, pieces):
            handle.seek(size * i // pieces)
            window = handle.read(1 << 20)
            match = _BOUNDARY.search(window)
            if match is None:
                continue
            point = size * i // pieces + match.start() + 1
            if point > points[-1]:
                points.append(point)
    points.append(size)
    return points


def _piece(name: str, start: int, end: int, log_format: list[str] | None, on_error: str) -> tuple[CompactRun, Any, int]:
    from blaslog.formats import Sniffer
    from blaslog.parse import _FileParser

    parser = _FileParser(_RangeReader(name, start, end), Sniffer(log_format), on_error, events=False)  # type: ignore[arg-type]
    run = parser.sink = CompactRun(name)
    run.extend(parser.records())
    return run, parser.summary, parser.summary.lines


def _whole(name: str, log_format: list[str] | None, on_error: str) -> tuple[CompactRun, Any]:
    return read_run(name, log_format=log_format, on_error=on_error)


def read_runs_parallel(names: list[str], *, log_format: list[str] | None, on_error: str,
                       jobs: int) -> list[tuple[CompactRun, Any]]:
    """CompactRun and FileSummary of each input, using up to `jobs` processes (inputs in the given order)."""
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        if len(names) == 1:
            name = names[0]
            with open(name, "rb") as handle:
                gzip = handle.read(2) == b"\x1f\x8b"
            if os.path.getsize(name) >= SPLIT_MIN and not gzip:
                points = split_points(name, jobs)
                futures = [pool.submit(_piece, name, a, b, log_format, on_error) for a, b in zip(points, points[1:])]
                return [merge([f.result() for f in futures], name)]
        futures = [pool.submit(_whole, name, log_format, on_error) for name in names]
        return [f.result() for f in futures]


def parse_parallel(names: list[str], *, log_format: list[str] | None, on_error: str, jobs: int,
                   events: bool = True) -> list[ParseResult]:
    """ParseResults of several inputs parsed in parallel processes."""
    from blaslog.parse import parse_file

    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(parse_file, name, log_format=log_format, on_error=on_error, events=events)  # type: ignore[arg-type]
                   for name in names]
        return [f.result() for f in futures]


def line_starts(path: str, points: list[int]) -> list[int]:
    """The line number at each of `points` (byte offsets at line starts), counting newlines in one pass."""
    numbers = [1]
    with open(path, "rb") as handle:
        for start, end in zip(points, points[1:-1]):
            count, left = 0, end - start
            while left > 0:
                block = handle.read(min(left, 1 << 24))
                if not block:
                    break
                count += block.count(b"\n")
                left -= len(block)
            numbers.append(numbers[-1] + count)
    return numbers


def _stream_piece(name: str, start: int, end: int, first_line: int, fmt: str, kind: str, caps_path: str | None,
                  log_format: list[str] | None, on_error: str, out_path: str) -> Any:
    """Parse one piece and write its rows (rendered as not first) to `out_path`; return its FileSummary."""
    from blaslog.caps import load_caps
    from blaslog.formats import Sniffer
    from blaslog.parse import _FileParser
    from blaslog.reporters import get_reporter
    from blaslog.views import record_rows

    caps = load_caps(caps_path) if caps_path else None
    parser = _FileParser(_RangeReader(name, start, end, first_line), Sniffer(log_format), on_error,  # type: ignore[arg-type]
                         events=kind == "all")
    parser.lazy = True
    reporter = get_reporter(fmt)
    with open(out_path, "w", encoding="utf-8") as handle:
        for text in reporter.stream_rows(record_rows(parser.records(), caps, reporter.shaped_rows), first=False):
            handle.write(text)
    return parser.summary


def stream_pieces(name: str, *, fmt: str, kind: str, caps_path: str | None, log_format: list[str] | None,
                  on_error: str, jobs: int, tmp_dir: str) -> tuple[list[str], Any]:
    """Parse a large input in `jobs` pieces at once; the pieces' row files in order, and the input's summary."""
    from blaslog.records import FileSummary

    points = split_points(name, jobs)
    starts = line_starts(name, points)
    outs = [os.path.join(tmp_dir, f"piece-{i:04d}") for i in range(len(points) - 1)]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(_stream_piece, name, a, b, first, fmt, kind, caps_path, log_format, on_error, out)
                   for a, b, first, out in zip(points, points[1:], starts, outs)]
        parts = [f.result() for f in futures]
    summary = FileSummary(name)
    for part in parts:
        for field in ("lines", "gemm_records", "other_records", "record_lines", "foreign_lines", "unparsable_lines",
                      "more_problems"):
            setattr(summary, field, getattr(summary, field) + getattr(part, field))
        for dialect, count in part.formats.items():
            summary.formats[dialect] = summary.formats.get(dialect, 0) + count
        summary.problems.extend(p for p in part.problems if p.message != "empty input")
    return outs, summary


def splittable(name: str) -> bool:
    """A file large enough to cut into pieces, and not gzip (which cannot be read from the middle)."""
    if name == "-" or not os.path.isfile(name) or os.path.getsize(name) < SPLIT_MIN:
        return False
    with open(name, "rb") as handle:
        return handle.read(2) != b"\x1f\x8b"
