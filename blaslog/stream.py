"""Output: `blaslog parse` rows written as they are read, and reports written safely to a file.

* :func:`parse_chunks` gives the text of `blaslog parse` in a streaming format (JSON, JSON Lines, CSV) input by
  input, in bounded memory; a large input is parsed in pieces by several processes, each writing its rows to a
  temporary file that is copied out in order.
* :class:`Output` writes a report to ``-o FILE``: never onto an input (same file, hard link or symlink), never
  onto anything but a regular file, through a unique temporary file in the target's folder that replaces the
  target only when the run is kept (exit 0 or 1), so two writers never corrupt it and a failed run leaves the
  old file as it was.
* :func:`write_behind` moves text to its destination from a second thread, so that the system calls that move
  gigabytes of JSON run while the next records are parsed.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import json
import os
import queue
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from blaslog._fast.cache import SharedShapes
from blaslog.api import Options
from blaslog.api._inputs import holds_nothing, jobs_for, looks_like_log
from blaslog.api._parse import records
from blaslog.caps import Caps, load_caps
from blaslog.errors import BlaslogError
from blaslog.records import FileSummary
from blaslog.reporters import Reporter, get_reporter
from blaslog.reporters._base import defuse_commands
from blaslog.views import event_text, record_rows

if TYPE_CHECKING:
    from blaslog.parse._lines import _FileParser


def parse_chunks(
    names: Sequence[str],
    reporter: Reporter,
    *,
    kind: str,
    caps_path: str | None,
    caps: Caps | None,
    options: Options,
    summaries: list[FileSummary],
) -> Iterator[str | bytes | Spool]:
    """The text of `blaslog parse` in `reporter`'s streaming format, in chunks of text, of UTF-8 bytes, or
    Spools (the rows of a piece parsed by another process, in its file); each input's FileSummary is appended to
    `summaries` once it is read. No chunk can carry a CI workflow command (see defuse_commands)."""
    style = reporter.defuse_style
    chunks: Iterator[str | bytes | Spool]
    if options.scheduler:  # the rows rendered by the cluster's workers
        from blaslog.cluster import parse_chunks as cluster_chunks

        chunks = cluster_chunks(
            names, reporter, record_rows, kind=kind, caps=caps, options=options, summaries=summaries
        )
    else:
        chunks = _parse_chunks(
            names, reporter, kind=kind, caps_path=caps_path, caps=caps, options=options, summaries=summaries
        )
    for chunk in chunks:
        # bytes and Spools: rows a worker wrote to a piece's file, defused there a whole row at a time
        yield defuse_commands(chunk, style) if type(chunk) is str else chunk


def _parse_chunks(
    names: Sequence[str],
    reporter: Reporter,
    *,
    kind: str,
    caps_path: str | None,
    caps: Caps | None,
    options: Options,
    summaries: list[FileSummary],
) -> Iterator[str | bytes | Spool]:
    yield reporter.stream_begin()
    any_rows = False
    shapes = SharedShapes()  # the line shapes the first input learns serve the next
    for name in names:
        processes = jobs_for(options.jobs, [name])
        if _in_pieces(name, options, processes):
            pieces = _stream_pieces(name, reporter, kind, caps_path, caps, options, processes, summaries, not any_rows)
            for chunk in pieces:
                any_rows = any_rows or type(chunk) is not Spool or chunk.size > chunk.offset
                yield chunk
            continue
        rows = record_rows(
            records([name], kind=kind, options=options, summaries=summaries, lazy=True, shapes=shapes),
            caps,
            reporter.shaped_rows,
        )
        for text in reporter.stream_rows(rows, not any_rows):
            any_rows = True
            yield text
    yield reporter.stream_end(summaries, any_rows)


def _in_pieces(name: str, options: Options, processes: int) -> bool:
    """Whether input `name` is read in `processes` pieces at once: more than one, and a file that can be cut
    (the module of parallel reading is imported only then)."""
    if processes <= 1:
        return False
    from blaslog._parallel import splittable

    return splittable(name, options.on_error)


def table_chunks(
    chunks: Iterable[str | bytes | Spool], columns: list[str], kind: str, summaries: list[FileSummary]
) -> Iterator[str]:
    """The parse table (see reporters.table.streamed_table) of the rows of `chunks`, the jsonl text of
    :func:`parse_chunks` (whole lines). Nothing when the inputs (their `summaries`) hold no record at all: that
    is an error, not an empty table."""
    from blaslog.reporters.table import streamed_table

    def rows() -> Iterator[dict[str, Any]]:
        for chunk in chunks:
            blocks = chunk.blocks() if isinstance(chunk, Spool) else [chunk]
            for block in blocks:  # JSON lines: split at LF only (str.splitlines splits at U+2028 too)
                text = block if isinstance(block, str) else block.decode("utf-8")
                for line in filter(None, text.split("\n")):
                    row = json.loads(line)
                    if row.get("type") == "item":
                        if kind == "all" and row.get("kind") == "event":
                            row["text"] = event_text(row.get("text"), (row.get("fields") or {}).items())
                        yield {column: row.get(column) for column in columns}  # a batch holds these only
            if isinstance(chunk, Spool):
                chunk.close()

    found = rows()
    first = next(found, None)  # the inputs are read (and `summaries` filled) before an empty table is written
    empty = "" if holds_nothing(summaries) else "no GEMM records\n"
    for text in streamed_table(itertools.chain([first] if first else [], found), columns, empty):
        yield defuse_commands(text)


class Spool:
    """The rows a worker wrote to a piece's file (UTF-8, defused), from `offset` to the end, to be written out as
    they lie. A writer whose output takes UTF-8 bytes as they are lets the kernel copy them (:meth:`send`: some
    360 MB of JSON for a 1 GB log never pass through this process); any other writes :meth:`blocks`."""

    def __init__(self, path: str, skip: bytes = b"") -> None:
        self.handle = open(path, "rb")  # noqa: SIM115 (closed by send(), blocks() or close())
        try:
            self.size = os.fstat(self.handle.fileno()).st_size
            self.offset = len(skip) if skip and self.handle.read(len(skip)) == skip else 0
        except BaseException:
            self.handle.close()
            raise
        """Where the rows begin: past `skip` (JSON's separator before what is now the first row) if it is there."""

    def send(self, fd: int) -> bool:
        """Copy the rows to file descriptor `fd` with os.sendfile; False (nothing written) where it cannot."""
        offset = self.offset
        try:
            while offset < self.size:
                sent = os.sendfile(fd, self.handle.fileno(), offset, self.size - offset)
                if not sent:
                    break
                offset += sent
        except OSError:
            if offset != self.offset:  # part of it went out: the rest cannot follow another way
                self.handle.close()
                raise
            return False
        self.handle.close()
        return True

    def close(self) -> None:
        """Let the file go without writing it (the output failed)."""
        self.handle.close()

    def blocks(self, size: int = 1 << 20) -> Iterator[bytes]:
        """The rows in blocks of about `size` bytes that end at a line end (the last one where the file ends): a
        block never cuts a UTF-8 character, so a writer that must decode them (an output that is not UTF-8) can."""
        with self.handle:
            self.handle.seek(self.offset)
            yield from _whole_lines(self.handle, size)


def _whole_lines(handle: IO[bytes], size: int = 1 << 20) -> Iterator[bytes]:
    """The rest of a file in blocks of about `size` that end at a line end (the last one where the file ends)."""
    rest = b""
    while block := handle.read(size):
        cut = block.rfind(b"\n") + 1
        if not cut:
            rest += block
            continue
        yield rest + block[:cut]
        rest = block[cut:]
    if rest:
        yield rest


def _rows(parser: _FileParser, reporter: Reporter, caps: Caps | None, first: bool) -> Iterator[str]:
    """The text of the rows of a piece's records in `reporter`'s streaming format (`first`: no row came before
    them)."""
    return reporter.stream_rows(record_rows(parser.items(), caps, reporter.shaped_rows), first)


@dataclass(frozen=True, slots=True)
class _RowsToFile:
    """A job of :func:`blaslog._parallel.read_piece` on a pool's worker: write the rows of a piece (rendered as
    not first) to a new file in `folder`, defused a chunk of whole rows at a time (see defuse_commands); its
    path is the job's value."""

    folder: str
    fmt: str
    caps_path: str | None

    def __call__(self, parser: _FileParser) -> str:
        caps = load_caps(self.caps_path) if self.caps_path else None
        reporter = get_reporter(self.fmt)
        style = reporter.defuse_style
        fd, path = tempfile.mkstemp(prefix="piece-", dir=self.folder)
        with open(fd, "w", encoding="utf-8") as handle:
            for text in _rows(parser, reporter, caps, False):
                handle.write(defuse_commands(text, style))
        return path


def _stream_pieces(
    name: str,
    reporter: Reporter,
    kind: str,
    caps_path: str | None,
    caps: Caps | None,
    options: Options,
    jobs: int,
    summaries: list[FileSummary],
    first: bool,
) -> Iterator[str | bytes | Spool]:
    """The rows of a large input parsed in `jobs` pieces at once (`first`: no row came before them). This process
    reads the first piece and renders its rows as they come, while `jobs - 1` workers each write the rows of a
    further piece to a file; those files follow, in order, as Spools (a piece read with a wrong guess of the width
    lines were cut at before it is read again: see _parallel.misread). The input's summary is appended to
    `summaries` once every piece is read."""
    from blaslog._parallel import PieceRead, PieceReads, cut, pool_submit, process_pool

    with tempfile.TemporaryDirectory(prefix="blaslog-") as tmp:
        with process_pool(jobs - 1) as pool:
            pieces = cut(
                name,
                jobs,
                log_format=options.formats,
                on_error=options.on_error,
                events=kind == "all",
                numbered=True,  # the newlines before each piece, counted side by side
                pool=pool,
            )
            job = _RowsToFile(tmp, reporter.name, caps_path)
            driver = PieceReads(pool_submit(pool), pieces, job, here=True)  # this process reads the first piece
            parser = driver.pieces[0].parser()
            for text in _rows(parser, reporter, caps, first):
                first = False
                yield text
            read: PieceRead[Any] = PieceRead(None, parser.summary, parser.wrap_width)  # its rows: streamed above
            reads = [future.result() for future in driver.settled(read)]
            written = [future.result().value for future in driver.reads]
        for read, path in zip(reads[1:], written, strict=True):
            if read.value != path:  # read again: the rows first written are not the piece's
                os.remove(path)
        summary = FileSummary(name)
        separator = reporter.first_separator.encode("utf-8")
        for read in reads:
            summary.absorb(read.summary)
            if read.value is None:
                continue
            spool = Spool(read.value, separator if first else b"")
            first = first and spool.size == spool.offset
            if hasattr(os, "sendfile"):
                os.remove(read.value)  # free the disk as soon as the writer is done with it (the file is open)
                yield spool
            else:
                yield from spool.blocks()
                os.remove(read.value)
        summaries.append(summary)


def write_behind(write: Callable[[Any], Any], chunks: Iterable[str | bytes | Spool]) -> None:
    """``for chunk in chunks: write(chunk)``, the writes done by a second thread. An error in a write is raised
    here (and stops the reading)."""
    pending: queue.Queue[str | bytes | Spool | None] = queue.Queue(maxsize=16)
    failed: list[BaseException] = []

    def writer() -> None:
        while True:
            try:
                # a timeout: a signal's exception (SIGTERM) raised in the reading thread inside the queue's
                # notify() can leave a stale waiter there, and the wake-up of the final None goes to it (seen:
                # blaslog hung at exit, its writer waiting for ever)
                chunk = pending.get(timeout=0.2)
            except queue.Empty:
                continue
            if chunk is None:
                break
            if failed and type(chunk) is Spool:
                chunk.close()
            elif not failed:
                try:
                    write(chunk)
                except BaseException as exc:  # handed to the reading thread
                    failed.append(exc)

    thread = threading.Thread(target=writer, name="blaslog-writer", daemon=True)
    thread.start()
    try:
        for chunk in chunks:
            if failed:
                if type(chunk) is Spool:
                    chunk.close()
                break
            pending.put(chunk)
    finally:
        pending.put(None)
        thread.join()
        close = getattr(chunks, "close", None)
        if close is not None:
            close()  # a generator's clean-up (a folder of pieces) runs now, not when it is collected
    if failed:
        raise failed[0]


class Output:
    """A report file written safely: see the module's docstring. Use as::

    with Output(path, inputs) as out:
        out.write(text)
        out.keep()       # without keep() the target is left as it was
    """

    def __init__(self, path: str, inputs: Sequence[str] = ()) -> None:
        self.path = path
        self.target = os.path.realpath(path)  # a symlink is written through, never replaced
        _check_target(path, self.target, inputs)
        folder = os.path.dirname(self.target) or "."
        try:
            fd, self.temporary = tempfile.mkstemp(prefix=".blaslog-", suffix=".part", dir=folder)
        except OSError as exc:
            raise BlaslogError(f"{path}: cannot write the report here ({exc.strerror or exc})") from None
        self.handle: IO[str] = os.fdopen(fd, "w", encoding="utf-8", newline="")
        self.kept = False

    def write(self, text: str | bytes | Spool) -> None:
        """Append text (or UTF-8 bytes, or a Spool's rows)."""
        if type(text) is str:
            self.handle.write(text)
            return
        self.handle.flush()
        buffer = self.handle.buffer  # type: ignore[attr-defined]
        if type(text) is bytes:
            buffer.write(text)
            return
        try:
            buffer.flush()
            if not text.send(buffer.fileno()):  # type: ignore[union-attr]
                for block in text.blocks():  # type: ignore[union-attr]
                    buffer.write(block)
        finally:
            text.close()  # type: ignore[union-attr]

    def keep(self) -> None:
        """Put the written text in place of the target."""
        self.handle.close()
        try:
            if os.path.exists(self.target):
                os.chmod(self.temporary, stat.S_IMODE(os.stat(self.target).st_mode))
            else:
                umask = os.umask(0)
                os.umask(umask)
                os.chmod(self.temporary, 0o666 & ~umask)
            os.replace(self.temporary, self.target)
        except OSError as exc:
            raise BlaslogError(f"{self.path}: cannot write the report ({exc.strerror or exc})") from None
        self.kept = True

    def __enter__(self) -> Output:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.kept:
            self.handle.close()
            with contextlib.suppress(OSError):
                os.unlink(self.temporary)


def _check_target(path: str, target: str, inputs: Sequence[str]) -> None:
    """Refuse an output that is an input, or that is not a regular file (or not there yet)."""
    try:
        info = os.stat(target)
    except FileNotFoundError:
        folder = os.path.dirname(target) or "."
        if not os.path.isdir(folder):
            raise BlaslogError(f"{path}: its folder {folder} does not exist") from None
        return
    except OSError as exc:
        raise BlaslogError(f"{path}: cannot write the report ({exc.strerror or exc})") from None
    if stat.S_ISDIR(info.st_mode):
        raise BlaslogError(f"{path}: is a folder; give a file name for the report")
    if not stat.S_ISREG(info.st_mode):
        raise BlaslogError(
            f"{path}: not a regular file (a device, pipe or socket); blaslog replaces only regular "
            "files: redirect standard output instead (> FILE)"
        )
    name = input_at(target, inputs)
    if name is not None:
        raise BlaslogError(
            f"{path}: is the input {name} (or a link to it, or a file of it); writing the report there would "
            "destroy the input: give another output file"
        )


def input_at(path: str, inputs: Sequence[str]) -> str | None:
    """The input (as named: a file, a glob, a folder) that the existing file `path` is, or is one of; None when
    it is none of them."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    real = os.path.realpath(path)
    for name in inputs:
        if name == "-":
            # standard input redirected from the file (`parse - -o s.log < s.log`)
            stdin = getattr(sys.stdin, "fileno", None)
            with contextlib.suppress(OSError, ValueError):
                if stdin is not None and os.path.samestat(info, os.fstat(stdin())):
                    return "- (standard input)"
            continue
        if os.path.isdir(name):
            # a folder input reads the logs below it (a report beside them is not read): one of those is an input
            folder = os.path.realpath(name)
            if os.path.commonpath([real, folder]) == folder and looks_like_log(path):
                return name
            continue
        named = [name] if os.path.exists(name) or not glob.has_magic(name) else glob.glob(name, recursive=True)
        if any(_same(info, one) for one in named):
            return name
    return None


def _same(info: os.stat_result, name: str) -> bool:
    """Whether `name` is the file of `info` (False when it cannot be looked at)."""
    try:
        return os.path.samestat(info, os.stat(name))
    except OSError:
        return False
