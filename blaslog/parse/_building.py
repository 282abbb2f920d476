"""A record from the lines assembled for it: from the template bound to its lines' SHAPE key where the speed
layer knows one, else through the grammar; a record cut short or edited by a person kept as such.
"""

from __future__ import annotations

from typing import Any, cast

from blaslog._fast.errors import RecordCut, RecordError, Rejected, describe_error
from blaslog._fast.known import UNKNOWN, Known, bound, is_gemm, known_record
from blaslog._fast.lazy import ShapedCall
from blaslog.parse._accounting import Accounting
from blaslog.parse._state import _Pending
from blaslog.records import PARTIAL, TRUNCATED, Event, GemmCall, Record, Severity

_UNFIT = object()
"""A record's SHAPE values do not fit the template bound to its key (see _FileParser._from_template)."""


class Building(Accounting):
    """The record being assembled, made and counted once it is over."""

    def _end(self, last: int) -> Record | ShapedCall | None:
        """The pending record, over at line `last`."""
        assert self.pending is not None
        record = self._finish(self.pending, last, at_end=False)
        self.pending = None
        return record

    def _finish(self, pending: _Pending, last: int, at_end: bool) -> Record | ShapedCall | None:
        """The pending record, over at line `last` (`at_end`: the input's last line), counted; None when there is
        nothing to hand on (a record counted only, or one that cannot be read: reported)."""
        fmt, lines, first = pending.fmt, pending.lines, pending.first
        last -= pending.held  # other text after its last line is no part of it (counted already)
        at_end = at_end and not pending.held
        span = (first, last, last - first + (0 if pending.shared else 1) - pending.skipped)
        # a last line left without a line end may be cut inside a value the grammar would still take: kept as
        # truncated when the dialect can tell (False), with a warning when it cannot (None)
        whole = fmt.whole(fmt.clean(lines)) if at_end and self.reader.ended_without_newline else True
        if whole is True and pending.shape is not None and len(lines) == 1:
            result = self._from_line(pending, span)
            if result is not _UNFIT:
                return cast("GemmCall | Event | ShapedCall | None", result)
        # a record assembled in one step reads as the record whose lines' keys it has (see _follow): its lines
        # joined, made only where needed (a record built from its template needs no text)
        text = fmt.clean(lines) if pending.bound is None else ""
        key: str | None = None
        parts: list[tuple[str, list[str]]] = []
        if len(lines) > 1 and whole is True and (pending.bound is not None or text == "\n".join(lines)):
            key, parts, result, text = self._from_lines(pending, span, text)
            if result is not _UNFIT:
                return cast("GemmCall | Event | ShapedCall | None", result)
        if pending.bound is not None and not text:
            text = "\n".join(lines)
        try:
            record, warnings, how = self.cache.parse(fmt, text, self.reader.name, first, last, lazy=self.lazy)
            if whole is False:  # it parses, but its last value may be cut (`val=C` of `val=CUBLAS_COMPUTE_32F(68)`)
                raise RecordCut("its last line does not end the record")
        except (RecordError, Rejected) as exc:  # all it raises (lark's errors come as a Rejected)
            return self._unread(pending, exc, text, span, at_end)
        if whole is None:
            value = text.rstrip().rsplit(None, 1)[-1].rsplit(",", 1)[-1]
            warnings = (
                *warnings,
                f"the input ends inside this {fmt.name} record (no line end after it): if the writer was stopped, "
                f"its last value ({value[-80:]!r}) may be cut short; check the end of the log",
            )
        else:
            self._learn(pending, text, how, warnings, key, parts)
        return self._accept(fmt, record, warnings, first, span[2], text)

    def _from_line(self, pending: _Pending, span: tuple[int, int, int]) -> Record | ShapedCall | object | None:
        """:meth:`_finish` of a one-line record, when the speed layer knows the record of its SHAPE key; _UNFIT
        when it does not."""
        fmt, shape, line = pending.fmt, pending.shape, pending.lines[0]
        assert shape is not None
        first, last, count = span
        place = (self.reader.name, first, last)
        found = known_record(self.cache, fmt, shape, None, line, place, self.wanted, pending.outer)
        return _UNFIT if found is UNKNOWN else self._known(fmt, found, first, count, line)

    def _from_lines(
        self, pending: _Pending, span: tuple[int, int, int], text: str
    ) -> tuple[str, list[tuple[str, list[str]]], Any, str]:
        """:meth:`_finish` of a record of several lines (cuBLAS `i!` lines), when the speed layer knows the record
        of its SHAPE key: (the key, (key, values) of each line where they were split, the record or _UNFIT, its
        text).

        Its SHAPE key is its lines' keys joined, as no SHAPE match holds a line end and the look-arounds read a
        line end as they read the text's edges."""
        fmt, lines, cache = pending.fmt, pending.lines, self.cache
        split = cache.shaper.split
        parts: list[tuple[str, list[str]]] = []
        if pending.bound is None:
            parts = list(map(split, lines))
            key = "\n".join([part[0] for part in parts])
            valued = [part[1] for part in parts if part[1]]
        else:  # assembled in one step (see _follow): the key is known, and which lines hold values
            key, valued_lines = pending.bound
            valued = [split(lines[i])[1] for i in valued_lines]
        if not bound(cache, fmt, key):
            return key, parts, _UNFIT, text
        self._learn_record(pending, key, parts)
        values = [value for part in valued for value in part]
        first, last, count = span
        found = known_record(cache, fmt, key, values, "", (self.reader.name, first, last), self.wanted)
        if found is UNKNOWN:
            return key, parts, _UNFIT, text
        if cast("Known", found)[2] and not text:  # warnings: reported with the record's text
            text = "\n".join(lines)
        return key, parts, self._known(fmt, found, first, count, text), text

    def _known(self, fmt: Any, found: Any, first: int, count: int, text: str) -> Record | ShapedCall | None:
        """Count a record the speed layer knew (see ``blaslog._fast.known``), and hand it on where it is wanted."""
        record, gemm, warnings = found
        self._count(fmt, gemm, warnings, first, count, text)
        return record if gemm or self.events else None

    def _learn(
        self,
        pending: _Pending,
        text: str,
        how: Any,
        warnings: tuple[str, ...],
        key: str | None,
        parts: list[tuple[str, list[str]]],
    ) -> None:
        """Teach the cache what reading the pending record whole (its `text`) taught about its shape."""
        fmt, lines, cache = pending.fmt, pending.lines, self.cache
        if pending.shape is not None and len(lines) == 1 and text == lines[0]:
            cache.learn(fmt, pending.shape, text, how, warnings, pending.outer)
        elif key is not None:
            cache.learn_record(fmt, key, text, how)
            if bound(cache, fmt, key):
                self._learn_record(pending, key, parts)  # bound now (at the key's second record)

    def _learn_record(self, pending: _Pending, key: str, parts: list[tuple[str, list[str]]]) -> None:
        """Let :meth:`_follow` take records whose lines have the SHAPE keys of the pending record's (its lines'
        `parts`: (key, values) of each, where they were split; `key`: their keys joined) in one step, where its
        dialect says so (`assembles_by_shape`) and no launcher's tag came before it."""
        if parts and not pending.prefix and pending.fmt.assembles_by_shape:
            self.follow.learn(pending.fmt, key, parts)

    def _unread(
        self, pending: _Pending, exc: RecordError | Rejected, text: str, span: tuple[int, int, int], at_end: bool
    ) -> Record | ShapedCall | None:
        """What :meth:`_finish` gives for a record its grammar rejects or that makes no sense (`exc`): a truncated
        record where it is cut short, a partial GEMM where a person edited it, else nothing (reported)."""
        fmt, (first, last, count) = pending.fmt, span
        reason, column = describe_error(exc, text)
        unended = at_end and self.reader.ended_without_newline
        rejected = isinstance(exc, Rejected)  # by the grammar
        if unended or isinstance(exc, RecordCut) or (rejected and fmt.cut_short(text)):
            summary = self.summary
            summary.record_lines += count
            summary.other_records += 1
            summary.formats[fmt.name] = summary.formats.get(fmt.name, 0) + 1
            if unended:
                message = (
                    f"the last record is cut short (no line end at the end of the input: the writer was probably "
                    f"killed); {TRUNCATED} ({reason})"
                )
            else:
                message = f"this {fmt.name} record is cut short; {TRUNCATED} ({reason})"
            self.problem(last if unended else first, message, text, severity=Severity.WARNING, column=column)
            return fmt.truncated(text, self.reader.name, first, last)
        # a record a person edited (a note the grammar rejects, a value left out as `...`); a bad value with
        # no edit in sight (`-m ٢١`) is no edit: it is reported as it is
        edited = rejected or "..." in text or "…" in text
        partial = fmt.partial(text, self.reader.name, first, last) if edited else None
        if partial is None:
            self.summary.unparsable_lines += count
            self.problem(first, f"cannot parse this {fmt.name} record: {reason}", text, column=column)
            return None
        # a record a person edited inside the line: the GEMM its visible fields define, marked partial where
        # fields are not shown
        said = (
            f"{PARTIAL}: {partial.missing} not shown"
            if partial.missing
            else "read from its fields, which are all there (the text its writer did not write left out)"
        )
        self.problem(
            first,
            f"this {fmt.name} record was edited ({reason}); {said}",
            text,
            severity=Severity.WARNING,
            column=column,
        )
        return self._accept(fmt, partial, (), first, count, text)

    def _accept(
        self, fmt: Any, record: Record | ShapedCall, warnings: tuple[str, ...], first: int, count: int, text: str
    ) -> Record | ShapedCall | None:
        gemm = is_gemm(record)
        self._count(fmt, gemm, warnings, first, count, text)
        return record if gemm or self.events else None
