"""Reading inputs: files, gzip files, standard input; bytes to text lines, problems noted, nothing dropped."""

from __future__ import annotations

import bz2
import codecs
import gzip
import io
import lzma
import re
import sys
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, ClassVar

from blaslog._fast import _c
from blaslog._fast.shapes import Shaper
from blaslog.errors import InputError
from blaslog.records import name_bytes

MAX_LINE = 1 << 20
"""Longest line (bytes) handed to a grammar; longer lines are reported, not parsed."""
ENDS_EARLY = "the input ends early"
"""How the problem of an input that could not be read to its end begins (a cut compressed stream)."""
BLOCK = 1 << 19
"""Bytes read at a time (smaller blocks stay in the CPU's caches and in memory the allocator reuses: 512 kB
measured fastest on level-5 logs, against 256 kB, 1 MB and 4 MB)."""


@dataclass(slots=True)
class Batch:
    """Consecutive lines of an input."""

    start: int
    """Line number of the first line."""
    lines: list[str]
    """The lines without their ends."""
    shapes: dict[str, str] | None
    """Each distinct line -> its SHAPE key (time stamps, pointers, thread ids masked), or None when the batch
    needed line-by-line decoding."""
    problems: dict[int, tuple[str, bool]]
    """Index in `lines` -> (problem, fatal) for lines that could not be used as they are."""
    counts: dict[str, int] | None = None
    """Each distinct line -> how many times it occurs in the batch (with `shapes`; same order)."""


@dataclass
class Reader:
    """Iterates the lines of one input and remembers how the input ended."""

    name: str
    """As given by the user (`-` for standard input)."""
    ended_without_newline: bool = False
    """The last line had no line end (the writer was cut off)."""
    stream_error: str | None = None
    """The input could not be read to its end (a gzip file cut short ...)."""
    cr_lines: bool = False
    """The input ends its lines with a CR alone (classic Mac OS): read with CR as the line end."""
    size: int = 0
    """Bytes read (decompressed)."""
    first_line: int = 1
    """Number of the first line (a piece of a larger input starts further down)."""
    shaper: Shaper = field(default_factory=Shaper)
    """Computes the batches' line shapes (its caches live as long as the reader)."""
    block: int = BLOCK
    """Bytes read at a time (about the size of a batch)."""

    detects_cr_lines: ClassVar[bool] = True
    """Whether a first block of lines that end with CR alone switches the reader to CR line ends (a piece of a
    larger input is not read so: see :func:`read_as_it_lies`)."""

    def batches(self, block: int | None = None) -> Iterator[Batch]:
        """The lines in batches of about `block` bytes (the reader's `block`), each with its lines' shapes when
        the batch is clean text."""
        block = block or self.block
        stream, closers = self._open()
        # read1: a cut-short gzip stream then still gives every byte before the cut
        read = getattr(stream, "read1", stream.read)
        number = self.first_line
        leftover = b""
        skipping = 0  # bytes of an overlong line being skipped
        try:
            while True:
                try:
                    data = read(block)
                except Exception as exc:
                    if not is_stream_error(exc):
                        raise
                    self.stream_error = f"{ENDS_EARLY} ({_reason(exc)}); whatever followed is lost"
                    data = b""
                    leftover = b"" if skipping else leftover
                if not data:
                    break
                self.size += len(data)
                if self.size == len(data) and self.detects_cr_lines and cr_lines(data):
                    self.cr_lines = True
                if self.cr_lines:
                    data = data.replace(b"\r", b"\n")
                if skipping:
                    cut = data.find(b"\n")
                    if cut < 0:
                        skipping += len(data)
                        continue
                    skipping += cut  # the line end is not the line's: as _over_limit counts it
                    yield self._overlong(number, skipping)
                    number += 1
                    skipping = 0
                    data = data[cut + 1 :]
                cut = data.rfind(b"\n")
                if cut < 0:
                    data = leftover + data
                    if len(data) > MAX_LINE:
                        skipping, leftover = len(data), b""
                        self._overlong_head = data[:200]
                    else:
                        leftover = data
                    continue
                # the line begun in the last block, and this block up to its last line end
                batch = self._batch(number, data, cut + 1, leftover)
                leftover = data[cut + 1 :]
                number += len(batch.lines)
                yield batch
                if len(leftover) > MAX_LINE:
                    skipping = len(leftover)
                    self._overlong_head, leftover = leftover[:200], b""
            if skipping:
                self.ended_without_newline = True
                yield self._overlong(number, skipping)
            elif leftover:
                self.ended_without_newline = True
                yield self._batch(number, leftover + b"\n")
        finally:
            for closer in closers:
                closer.close()

    _overlong_head: bytes = b""

    def _overlong(self, number: int, size: int) -> Batch:
        text = self._overlong_head.decode("utf-8", "replace")
        return Batch(
            number, [text], None, {0: (f"line of {size} bytes is too long for a BLAS log line; skipped", True)}
        )

    def _batch(self, number: int, data: bytes, end: int | None = None, head: bytes = b"") -> Batch:
        """Lines of `head` (a line begun in the block before) followed by `data[:end]` (which ends with a
        newline), with the count of each distinct line. The block is decoded where it lies, not copied first
        (the line `head` begins is decoded apart: no UTF-8 character holds a line end)."""
        end = len(data) if end is None else end
        speedups = _c.speedups
        if speedups is not None:
            found = speedups.lines(data, end, head, LONG)
            if found is None:
                return self._checked(number, head + data[:end])
            lines, counts, shapes = found
            return Batch(number, lines, shapes, {}, counts)
        cut = data.find(b"\n", 0, end) + 1 if head else 0  # where the line `head` begins ends
        try:
            first = (head + data[:cut]).decode("utf-8") if head else ""
            text = str(memoryview(data)[cut:end], "utf-8")
        except UnicodeDecodeError:
            return self._checked(number, head + data[:end])
        if "\x00" in text or "\x00" in first:
            return self._checked(number, head + data[:end])
        lines = text.split("\n")
        lines.pop()
        if head:
            lines.insert(0, first[:-1])
        if "\r" in text or "\r" in first:
            lines = [line[:-1] if line.endswith("\r") else line for line in lines]
        counts = Counter(lines)  # C-level: a block of a level-5 log holds a few distinct lines in ten
        if counts and max(map(len, counts)) > LONG:  # C-level, over the distinct lines only
            return self._checked(number, head + data[:end])
        return Batch(number, lines, self.shaper.keys(counts), {}, counts)

    def _checked(self, number: int, data: bytes) -> Batch:
        """Lines of `data` decoded one by one, each line that cannot be used as it is noted (the slow path)."""
        lines = []
        problems: dict[int, tuple[str, bool]] = {}
        for index, raw in enumerate(data.split(b"\n")[:-1]):
            if raw.endswith(b"\r"):
                raw = raw[:-1]
            limit = _over_limit(raw)
            if limit is not None:
                lines.append(raw[:200].decode("utf-8", "replace"))
                problems[index] = (limit, True)
                continue
            if b"\x00" in raw:
                preview = raw[:24].hex(" ") + (" ..." if len(raw) > 24 else "")
                lines.append(f"bytes: {preview}")
                problems[index] = ("binary data (NUL bytes), not a text log line; skipped", True)
                continue
            try:
                lines.append(raw.decode("utf-8"))
            except UnicodeDecodeError as exc:
                lines.append(raw.decode("utf-8", "replace"))
                problems[index] = (f"invalid UTF-8 at byte {exc.start + 1}; replaced with U+FFFD", False)
        return Batch(number, lines, None, problems)

    def _open(self) -> tuple[BinaryIO, list[BinaryIO]]:
        """The byte stream to read, and what to close afterwards."""
        if self.name == "-":
            if sys.stdin is None:
                raise InputError("-: standard input is closed; pipe a log into blaslog or name a file")
            raw: BinaryIO = sys.stdin.buffer
            head = raw.peek(8)[:8] if hasattr(raw, "peek") else b""
            stream, closers = _decoded(raw, head, self.name)
            return stream, closers
        path = Path(self.name)
        try:
            if path.is_dir():
                raise InputError(
                    f"{self.name}: is a directory; name the log files in it, or a glob such as '{self.name}/*.log'"
                )
            handle = open(path, "rb")  # noqa: SIM115 (closed by batches() once read)
        except FileNotFoundError:
            raise InputError(f"{self.name}: no such file") from None
        except PermissionError:
            raise InputError(f"{self.name}: permission denied; check the file's read permission") from None
        except IsADirectoryError:
            raise InputError(f"{self.name}: is a directory") from None
        except OSError as exc:
            raise InputError(f"{self.name}: cannot be read ({exc.strerror or exc})") from None
        try:
            stream, closers = _decoded(handle, handle.peek(8)[:8], self.name)
        except BaseException:
            handle.close()
            raise
        return stream, [*closers, handle]


#: Compressed streams, known by their magic bytes whatever the file's name.
_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"), (b"\x28\xb5\x2f\xfd", "zstd"))

#: What a compressed or re-encoded stream raises when it is cut short or damaged (read as "the input ends early").
STREAM_ERRORS: tuple[type[BaseException], ...] = (EOFError, OSError, zlib.error, lzma.LZMAError)


def is_stream_error(exc: BaseException) -> bool:
    """True for an error of a damaged or cut compressed stream (or of UTF-16 that does not decode)."""
    return isinstance(exc, (*STREAM_ERRORS, UnicodeDecodeError)) or type(exc).__name__ in ("ZstdError",)


def _decoded(raw: BinaryIO, head: bytes, name: str) -> tuple[BinaryIO, list[BinaryIO]]:
    """The stream of UTF-8 (or ASCII) log bytes behind `raw`: decompressed (gzip, bzip2, xz, zstd) or
    re-encoded from UTF-16 (a BOM, or the NUL of every second byte of ASCII text); what to close as well."""
    kind = _compression(head)
    stream: BinaryIO
    if kind == "gzip":
        stream = gzip.GzipFile(fileobj=raw)  # type: ignore[assignment]
    elif kind is not None:
        stream = _Decompressed(raw, kind, name)  # type: ignore[assignment]
    else:
        encoding = _utf16(head)
        if encoding is None:
            return raw, []
        stream = _Recoded(raw, encoding)  # type: ignore[assignment]
    return stream, [stream]


class _Decompressed:
    """The bytes of one or more bzip2, xz or zstd streams one after another, at most about `size` bytes a read
    (a small file of zeros can hold gigabytes; gzip's reader is bounded so too). Damage (a stream cut short,
    bytes after the last stream that are not one) is raised by the read after the bytes before it."""

    PIECE = 1 << 16
    """Compressed bytes read from the file at a time."""
    ZSTD_PIECE = 256
    """Compressed bytes handed to a zstd decompressor at a time: it has no output limit, and a byte of zstd
    makes at most some 32 kB (a 4-byte RLE block is 128 kB), so one call makes at most 8 MB."""

    def __init__(self, raw: BinaryIO, kind: str, name: str) -> None:
        self.raw, self.kind = raw, kind
        self._new: Callable[[], Any] = bz2.BZ2Decompressor if kind == "bzip2" else lzma.LZMADecompressor
        self.limited = True  # decompress() takes an output limit
        if kind == "zstd":
            self._new, self.limited = _zstd_decompressor(name)
        self.decompressor = self._new()
        self.data, self.at = b"", 0  # compressed bytes read and not yet handed over, from `at`
        self.started = False  # inside a stream
        self.streams = 0  # streams read to their end
        self.error: BaseException | None = None
        self.ended = False  # the damage was raised: nothing follows

    def read(self, size: int = -1) -> bytes:
        if self.ended:
            return b""
        size = size if size > 0 else BLOCK
        out: list[bytes] = []
        have = 0
        while have < size and self.error is None:
            if self.at >= len(self.data) and (not self.limited or self.decompressor.needs_input):
                self.data, self.at = self.raw.read(self.PIECE), 0
                if not self.data:
                    if self.started:
                        self.error = EOFError(f"{self.kind} stream cut short: the input ends inside a stream")
                    break
            try:
                chunk = self._step(size - have)
            except Exception as exc:
                if not is_stream_error(exc):
                    raise
                self.error = exc if self.started or not self.streams else _Trailing(self.kind, exc)
                break
            out.append(chunk)
            have += len(chunk)
        if not out and self.error is not None:
            self.ended = True
            raise self.error
        return b"".join(out)

    def _step(self, room: int) -> bytes:
        """Hand the decompressor the next compressed bytes; what it makes (at most `room` bytes, or 8 MB)."""
        if self.decompressor.eof:  # a stream ended: another one follows, or bytes that are not one
            self.decompressor, self.started = self._new(), False
        end = len(self.data) if self.limited else self.at + self.ZSTD_PIECE
        piece = self.data[self.at : end]
        self.at += len(piece)
        chunk: bytes = (
            self.decompressor.decompress(piece, room) if self.limited else self.decompressor.decompress(piece)
        )
        self.started = self.started or bool(piece)  # after decompress(): bytes that begin no stream are _Trailing
        if self.decompressor.eof:
            self.streams += 1
            self.started = False
            self.data, self.at = self.decompressor.unused_data + self.data[self.at :], 0
        return chunk

    read1 = read

    def close(self) -> None:
        """The raw stream is closed by its owner."""


class _Trailing(OSError):
    """Bytes after the last compressed stream that are not a stream (padding, junk)."""

    def __init__(self, kind: str, exc: BaseException) -> None:
        super().__init__(f"the bytes after the end of the {kind} data are not {kind} data ({exc})")


class _Recoded:
    """UTF-8 bytes of a stream of text in another encoding (UTF-16), read a block at a time; text that does not
    decode (a file cut after an odd byte) is raised by the read after the text before it."""

    def __init__(self, raw: BinaryIO, encoding: str) -> None:
        self.raw, self.encoding = raw, encoding
        self.decoder: codecs.IncrementalDecoder | None = None
        self.error: BaseException | None = None

    def read(self, size: int = -1) -> bytes:
        if self.error is not None:
            error, self.error = self.error, None
            raise error
        data = self.raw.read(size if size > 0 else -1)
        if self.decoder is None:  # the byte order a BOM names (the prefix before damage is decoded so too)
            if self.encoding == "utf-16":
                self.encoding = "utf-16-be" if data.startswith(b"\xfe\xff") else "utf-16-le"
                data = data[2:]
            self.decoder = codecs.getincrementaldecoder(self.encoding)()
        try:
            text = self.decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            text = exc.object[: exc.start].decode(self.encoding)
            self.error = OSError("UTF-16 text cut after an odd byte") if exc.reason == "truncated data" else exc
            self.decoder.reset()
            if not text:
                return self.read()
        return text.encode("utf-8", "surrogateescape")

    read1 = read

    def close(self) -> None:
        """The raw stream is closed by its owner."""


def cr_lines(block: bytes) -> bool:
    """True for a first block of an input whose lines end with CR alone (classic Mac OS): no LF in sight."""
    return b"\n" not in block and block.count(b"\r") > 1


def read_as_it_lies(path: str) -> bool:
    """True for a file whose bytes are read as they lie (what `_decoded` returns as it is), so that a piece of it
    can be read on its own: neither compressed nor UTF-16, and its lines not ended with CR alone."""
    with open(path, "rb") as handle:
        first = handle.read(BLOCK)
    head = first[:8]
    return _compression(head) is None and _utf16(head) is None and not cr_lines(first)


def _compression(head: bytes) -> str | None:
    """The compression a stream's first bytes name (see _MAGIC), or None."""
    return next((kind for magic, kind in _MAGIC if head.startswith(magic)), None)


def _utf16(head: bytes) -> str | None:
    """`utf-16` for text with a UTF-16 byte-order mark, `utf-16-le`/`-be` for ASCII text stored as UTF-16
    without one, else None."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    if len(head) >= 8 and head[1::2] == b"\x00" * (len(head) // 2) and b"\x00" not in head[0::2]:
        return "utf-16-le"
    if len(head) >= 8 and head[0::2] == b"\x00" * (len(head) // 2) and b"\x00" not in head[1::2]:
        return "utf-16-be"
    return None


def _zstd_decompressor(name: str) -> tuple[Callable[[], Any], bool]:
    """What makes a decompressor of one zstd frame (`compression.zstd`, Python 3.14, or the zstandard package),
    and whether its decompress() takes an output limit (zstandard's does not); InputError saying how to get one."""
    try:
        from compression import zstd  # type: ignore[import-not-found]

        return zstd.ZstdDecompressor, True
    except ImportError:
        pass
    try:
        import zstandard
    except ImportError:
        raise InputError(
            f"{name}: zstd-compressed, and no zstd decoder is installed: pip install zstandard, or "
            f"decompress it first (zstd -d {name})"
        ) from None
    return zstandard.ZstdDecompressor().decompressobj, False


LONG = 4096
"""Lines longer than this (characters) are checked against the limits below before any grammar sees them."""
MAX_PAIRS = 1024
"""Most `=` signs one line may hold (a BLAS record has a few dozen key=value pairs; the grammar's cost grows
with the number of values)."""
MAX_WORDS = 1024
"""Most words (runs of characters between white space) one line may hold: a BLAS record has some hundred (a
rocBLAS bench command's options); the grammar's work grows with them, `=` or not (a 1 MB line of one-letter words
took minutes)."""
MAX_DEPTH = 64
"""Deepest bracket nesting a line may hold (a BLAS record nests brackets three deep)."""
_DEEP = re.compile(rb"(?:\[[^\[\]\n]*){%d}" % (MAX_DEPTH + 1))


def _over_limit(raw: bytes) -> str | None:
    """Why one line is not handed to a grammar (bounded cost per line), or None. Lines up to LONG characters
    are not checked: they cannot hold more pairs or deeper brackets than the parser handles in bounded time."""
    if len(raw) <= LONG:
        return None
    if len(raw) > MAX_LINE:
        return f"line of {len(raw)} bytes is too long for a BLAS log line; skipped"
    if _DEEP.search(raw) is not None:
        return f"brackets nested too deeply (more than {MAX_DEPTH} levels; a BLAS log record nests a few); skipped"
    if raw.count(b"=") > MAX_PAIRS:
        return (
            f"line with {raw.count(b'='):,} key=value pairs (a BLAS log record has a few dozen; at most "
            f"{MAX_PAIRS} are read); skipped"
        )
    words = len(raw.split())
    if words > MAX_WORDS:
        return f"line of {words:,} words (a BLAS log record has some hundred; at most {MAX_WORDS} are read); skipped"
    return None


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    if isinstance(exc, EOFError):
        return f"compressed stream cut short: {text}"
    return text


def text_reader(text: str, name: str = "<text>") -> Reader:
    """A Reader over an in-memory string (for :func:`blaslog.parse_text`)."""
    reader = _TextReader(name)
    reader.data = name_bytes(text)  # a lone surrogate is invalid UTF-8: read as U+FFFD, with a note
    return reader


class _TextReader(Reader):
    data: bytes = b""

    def _open(self) -> tuple[BinaryIO, list[BinaryIO]]:
        stream = io.BufferedReader(io.BytesIO(self.data))
        return stream, [stream]
