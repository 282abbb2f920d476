"""Reading inputs: files, gzip files, standard input; bytes to text lines, problems noted, nothing dropped."""

from __future__ import annotations

import glob
import gzip
import io
import os
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from blaslog.errors import InputError

MAX_LINE = 1 << 20
"""Longest line (bytes) handed to a grammar; longer lines are reported, not parsed."""


@dataclass(slots=True)
class Line:
    """One physical line of an input."""

    number: int
    """1-based."""
    text: str
    """The line without its end (`\\n` or `\\r\\n`)."""
    problem: str | None = None
    """Set when the bytes could not be used as they are (binary data, invalid UTF-8, too long)."""
    fatal: bool = False
    """True when the line must not be parsed (binary, too long)."""


@dataclass(slots=True)
class Reader:
    """Iterates the lines of one input and remembers how the input ended."""

    name: str
    """As given by the user (`-` for standard input)."""
    ended_without_newline: bool = False
    """The last line had no line end (the writer was cut off)."""
    stream_error: str | None = None
    """The input could not be read to its end (a gzip file cut short ...)."""
    size: int = 0
    """Bytes read (decompressed)."""
    notes: list[str] = field(default_factory=list)

    def lines(self) -> Iterator[Line]:
        """The lines, in order."""
        stream, closers = self._open()
        number = 0
        try:
            while True:
                try:
                    raw = stream.readline(MAX_LINE + 1)
                except (EOFError, OSError, zlib.error) as exc:
                    self.stream_error = f"the input ends early ({_reason(exc)}); lines after {number} are lost"
                    return
                if not raw:
                    return
                if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
                    # read the rest of the overlong line in bounded pieces
                    total = len(raw)
                    while True:
                        try:
                            more = stream.readline(MAX_LINE)
                        except (EOFError, OSError, zlib.error) as exc:
                            self.stream_error = f"the input ends early ({_reason(exc)})"
                            more = b""
                        total += len(more)
                        if not more or more.endswith(b"\n"):
                            break
                    number += 1
                    self.size += total
                    yield Line(number, raw[:200].decode("utf-8", "replace"),
                               f"line of {total} bytes is too long for a BLAS log line; skipped", True)
                    if not more:
                        self.ended_without_newline = True
                        return
                    continue
                number += 1
                self.size += len(raw)
                if raw.endswith(b"\n"):
                    raw = raw[:-1]
                    if raw.endswith(b"\r"):
                        raw = raw[:-1]
                else:
                    self.ended_without_newline = True
                if b"\x00" in raw:
                    preview = raw[:24].hex(" ") + (" ..." if len(raw) > 24 else "")
                    yield Line(number, f"bytes: {preview}", "binary data (NUL bytes), not a text log line; skipped", True)
                    continue
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    text = raw.decode("utf-8", "replace")
                    yield Line(number, text, f"invalid UTF-8 at byte {exc.start + 1}; replaced with U+FFFD")
                    continue
                yield Line(number, text)
        finally:
            for closer in closers:
                closer.close()

    def _open(self) -> tuple[BinaryIO, list[BinaryIO]]:
        """The byte stream to read, and what to close afterwards."""
        if self.name == "-":
            raw: BinaryIO = sys.stdin.buffer
            head = raw.peek(2)[:2] if hasattr(raw, "peek") else b""
            if head == b"\x1f\x8b":
                stream = gzip.GzipFile(fileobj=raw)
                return stream, [stream]  # type: ignore[list-item]
            return raw, []
        path = Path(self.name)
        try:
            if path.is_dir():
                raise InputError(
                    f"{self.name}: is a directory; name the log files in it, or a glob such as '{self.name}/*.log'"
                )
            handle = open(path, "rb")  # noqa: SIM115 - closed by lines()
        except FileNotFoundError:
            raise InputError(f"{self.name}: no such file") from None
        except PermissionError:
            raise InputError(f"{self.name}: permission denied; check the file's read permission") from None
        except IsADirectoryError:
            raise InputError(f"{self.name}: is a directory") from None
        except OSError as exc:
            raise InputError(f"{self.name}: cannot be read ({exc.strerror or exc})") from None
        if handle.peek(2)[:2] == b"\x1f\x8b":  # gzip magic, whatever the name
            stream = gzip.GzipFile(fileobj=handle)
            return stream, [stream, handle]  # type: ignore[list-item]
        return handle, [handle]


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    if isinstance(exc, EOFError):
        return f"compressed stream cut short: {text}"
    return text


def expand(names: list[str] | tuple[str, ...]) -> list[str]:
    """Expand quoted globs to files, sorted, so that the order matches expand to does not depend on the shell.

    Other names (files, `-`, and names that are not there or are directories) are kept as they are; reading
    them reports what is wrong.
    """
    out: list[str] = []
    for name in names:
        if name != "-" and not os.path.exists(name) and glob.has_magic(name):
            files = sorted(p for p in glob.glob(name) if os.path.isfile(p))
            if not files:
                raise InputError(f"{name}: no file matches this pattern")
            out.extend(files)
        else:
            out.append(name)
    return out


def text_reader(text: str, name: str = "<text>") -> Reader:
    """A Reader over an in-memory string (for :func:`blaslog.parse_text`)."""
    reader = _TextReader(name)
    reader.data = text.encode("utf-8", "surrogateescape")
    return reader


class _TextReader(Reader):
    data: bytes = b""

    def _open(self) -> tuple[BinaryIO, list[BinaryIO]]:
        stream = io.BufferedReader(io.BytesIO(self.data))  # type: ignore[arg-type]
        return stream, [stream]  # type: ignore[list-item]
