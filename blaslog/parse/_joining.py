"""Which lines belong to the record being assembled: its next line, a piece of its last line cut at a fixed
width (a terminal wrapped the log), other text inside it (a program's print), or a line that ends it.
"""

from __future__ import annotations

import re
from typing import Any

from blaslog._fast.lazy import ShapedCall
from blaslog._fast.shapes import keep
from blaslog.parse._building import Building
from blaslog.parse._state import MAX_HELD_LINES, MAX_RECORD_LINES, WRAP_MIN, _Pending
from blaslog.records import Record

_DIGITS = re.compile(r"(\d+)")
_TIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?|\d\d:\d\d:\d\d(?:[.,]\d+)?")
"""A time stamp in a prefix that a CI runner or a log collector puts before every line (GitHub Actions' raw logs,
Kubernetes' CRI logs, journald): it changes from line to line of one process."""
_MISSING: Any = object()


class Joining(Building):
    """The record being assembled, taking lines."""

    def _goes_on(self, text: str, shape: str | None, fmt: Any, number: int) -> tuple[bool, Record | ShapedCall | None]:
        """Whether line `text` (of SHAPE key `shape`, which begins a record of `fmt` where known) is taken into the
        pending record (a line of it, a piece of its last line, or other text inside it), and the pending record
        when the line ends it."""
        pending = self.pending
        assert pending is not None
        prefix = pending.prefix
        body = text[len(prefix) :] if text.startswith(prefix) else self._body(prefix, text)
        goes_on = (
            fmt is None
            and len(pending.lines) < MAX_RECORD_LINES
            and pending.fmt.continues(pending.lines, body)
            and not self._begins_record(text, shape)  # whether its shape was seen or not
        )
        if (
            fmt is None
            and WRAP_MIN <= pending.width >= len(text)
            and pending.pieces
            and self._piece(text, body, goes_on)
        ):
            return True, None  # a line cut at a fixed width: see _rewrapped
        if goes_on:
            pending.lines.append(body)
            pending.shape = pending.outer = pending.bound = None
            pending.skipped += pending.held
            pending.held = 0
            pending.pieces, pending.width = 1, len(text)
            return True, None
        if fmt is None and self._held(text, number):
            return True, None
        if fmt is None and len(pending.lines) >= MAX_RECORD_LINES and pending.fmt.continues(pending.lines, body):
            self.overlong = (pending.fmt.name, pending.first)  # its further lines say whose they are
        return False, self._end(number - 1)

    def _body(self, prefix: str, text: str) -> str:
        """`text`, which does not begin with the pending record's `prefix` (other text before its first line: a
        launcher's tag), without that prefix at another time (a prefix holding a time stamp, which a CI runner
        puts before every line, changes from line to line); else `text` as it is. (`_goes_on` takes off a prefix
        the line begins with, and the empty one.)"""
        pattern = self._timed.get(prefix, _MISSING)
        if pattern is _MISSING:
            parts = _TIME.split(prefix)
            pattern = None if len(parts) == 1 else re.compile(f"(?:{_TIME.pattern})".join(map(re.escape, parts)))
            keep(self._timed, prefix, pattern)
        found = pattern.match(text) if pattern is not None else None
        return text[found.end() :] if found is not None else text

    def _piece(self, text: str, body: str, goes_on: bool) -> bool:
        """Whether `text` is joined to the pending record's last line as a piece of it cut at a fixed width.

        The width is known to be one the record's last line was cut at when whole pieces of it were joined
        already, this input's lines were seen cut at it, or the record's lines all are as long as its first (its
        length compared first: this runs for every line of a record). A line the dialect takes as a line of its
        own is a piece only at a width known as a wrap's."""
        pending = self.pending
        assert pending is not None
        seen = (
            pending.pieces > 1
            or pending.width == self.wrap_width
            or (pending.width == len(pending.prefix) + len(pending.lines[0]) and pending.even())
        )
        return (seen or not goes_on) and self._rewrapped(pending, text, body, goes_on, seen)

    def _held(self, text: str, number: int) -> bool:
        """Count `text` on its own when it is other text inside a record that is not over (a program's print
        between cuBLAS `i!` lines, a person's `[...]`): the record's next line may still come."""
        pending = self.pending
        assert pending is not None
        if (
            pending.held >= MAX_HELD_LINES
            or len(pending.lines) >= MAX_RECORD_LINES
            or not pending.fmt.interleaved(pending.lines)
            or self.sniffer.sniff(text) is not None
        ):
            return False
        pending.held += 1
        if not (pending.prefix and not text.startswith(pending.prefix) and self._other_tag(pending, number, text)):
            self._other(number, text)
        return True

    def _rewrapped(self, pending: _Pending, text: str, body: str, goes_on: bool, seen: bool) -> bool:
        """Join `text` to the pending record's last line when it is the rest of that line cut at a fixed width
        (a terminal, a CI log viewer or a mail program wrapped the log, cutting values apart).

        The line is at least WRAP_MIN wide and `text` no longer than its pieces (the caller has seen to both,
        and says whether the width is `seen`: known to be one the line was cut at), and `text` starts no record.
        Where the dialect says the record is not over (its line lacks what its writer always writes), `text` is
        as long as each piece before it, or shorter (the line's last piece) where that width is known, or where
        it finishes the line and the dialect does not take `text` (`body`, without a launcher's tag) as a line
        of its own (`goes_on`: one wrapped at a space; a word wrap that dropped the space leaves what the
        dialect sees as unfinished, `--ldb768`). Where the width is known, a line that looks over goes on with a
        piece that is no line of its own: a whole piece, or a shorter one that does not begin at a space while
        the line does not end with one (a value cut at the width may look whole: `--solution_index 21` of
        `--solution_index 218160`)."""
        if pending.held or pending.shared or pending.pieces >= MAX_RECORD_LINES:
            return False
        lines = pending.lines
        if lines[-1].rstrip().endswith("\\"):
            return False  # a line a ` \\` ends is over; the lines that continue it follow as lines of their own
        width = pending.width
        full = len(text) == width
        fmt = pending.fmt
        if not self._unfinished(fmt, lines):
            if goes_on or not seen or not (full or (not lines[-1][-1:].isspace() and not text[:1].isspace())):
                return False
        elif not full and not seen:
            # the line's last piece, at a width not seen yet: only where it ends the line (a program's print
            # inside a record wrapped at spaces would leave it unfinished) or a ` \\` continues it
            joined = [*lines[:-1], lines[-1] + body]
            if goes_on or (fmt.unfinished(joined) and not joined[-1].rstrip().endswith("\\")):
                return False
        if self.sniffer.sniff(text) is not None:  # last: the costliest test
            return False
        if pending.even():
            # every line so far is a whole piece of one line: pieces the dialect took for lines of their own
            # (`omputeType=...` or `ransa=OP_T]` inside an open group) before the width was known are joined as cut
            pending.pieces = len(lines)
            lines[:] = ["".join(lines)]
        lines[-1] += body  # a launcher that tagged the pieces too (the program cut the line) has its tag left out
        pending.shape = pending.outer = pending.bound = None
        self._cut_widths[width] = self._cut_widths.get(width, 0) + 1
        if full or self._cut_widths[width] > 1:
            self.wrap_width = width  # two whole pieces, or lines of two records cut at one width
        if full:
            pending.pieces += 1
        else:
            pending.pieces = 0  # a shorter piece ends the line
        return True

    def _unfinished(self, fmt: Any, lines: list[str]) -> bool:
        """``fmt.unfinished(lines)``, kept for one-line records (a bench command followed by program output
        asks it of the same command line again and again; the dialect parses its options to answer)."""
        if len(lines) != 1:
            return bool(fmt.unfinished(lines))
        key = (fmt, lines[0])
        found = self._open.get(key)
        if found is None:
            found = fmt.unfinished(lines)
            keep(self._open, key, found)
        return bool(found)

    def _begins_record(self, text: str, shape: str | None) -> bool:
        """Whether a line begins a record (the sniffer finds one in it): such a line continues no record, whether
        its shape was seen before (a known shape begins a record) or not. Looked up by its SHAPE key where the
        batch has one, as a known shape is."""
        if shape is None:
            return self.sniffer.sniff(text) is not None
        found = self._starts.get(shape)
        if found is None:
            found = self.sniffer.sniff(text) is not None
            keep(self._starts, shape, found)
        return found

    def _other_tag(self, pending: _Pending, number: int, text: str) -> bool:
        """Count a line as unparsable, and say why, when it is a line of a record like the pending one but under
        another launcher tag of the same kind (`[rank1]:` inside a record begun under `[rank0]:`): several
        processes wrote multi-line records into one stream, and a record is read only under the tag it began
        with. True when it was so counted."""
        pattern = self._tags.get(pending.prefix)
        if pattern is None:
            pattern = re.compile(
                "".join(r"\d+" if part.isdigit() else re.escape(part) for part in _DIGITS.split(pending.prefix))
            )
            keep(self._tags, pending.prefix, pattern)
        match = pattern.match(text)
        if match is None or not pending.fmt.continues(pending.lines, text[match.end() :]):
            return False
        self.summary.unparsable_lines += 1
        self.problem(
            number,
            f"a line of a {pending.fmt.name} record under the launcher tag {match.group(0).strip()!r}, inside one "
            f"begun under {pending.prefix.strip()!r}: several processes wrote multi-line records into one stream, "
            f"and their lines cannot be told apart here; split the file per tag first "
            f"(grep -F {match.group(0).strip()!r}) and read each part",
            text,
        )
        return True
