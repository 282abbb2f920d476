"""Records built when asked: what a lazy read (``iter_file(lazy=True)``) yields, all of one type.

:class:`Records` is that type: one record or a run of consecutive records of one input. A caller iterates an
item for its records (each built then) and asks nothing else of it; a writer that writes rows from pieces kept
per line shape (the JSON writers) asks :meth:`Records.by_shape` first. Three kinds stand behind it, and no
caller tells them apart:

* :class:`Built`: a record built already (read with the grammar, or from a template that converts values);
* :class:`ShapedCall`: a record read from a line (or a call) of a known shape, not built yet;
* :class:`ShapedRun`: consecutive one-line records of known shapes, not built yet (a level-5 log's batch is
  mostly one), without an object per record.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from blaslog._fast.templates import LineTemplate, Template
from blaslog.records import Record


class Records(ABC):
    """Records of one input, built when asked: one record, or a run of consecutive ones."""

    __slots__ = ()

    @abstractmethod
    def __len__(self) -> int:
        """How many records."""

    @abstractmethod
    def __iter__(self) -> Iterator[Record]:
        """The records, in order, each built."""

    def by_shape(self, caps: bool) -> bool:
        """Whether a writer may write these records' rows from pieces kept per line shape (:meth:`call` and
        :meth:`after` then say what it needs; `caps`: the rows carry numerics looked up by algorithm, which only a
        template of one call has one of for all its rows)."""
        return False

    def call(self, offset: int) -> ShapedCall:
        """The record `offset` records in, not built (where :meth:`by_shape` says yes)."""
        raise NotImplementedError

    def after(self, offset: int) -> Records:
        """The records after the first `offset` (fewer than all; where :meth:`by_shape` says yes)."""
        raise NotImplementedError


class Built(Records):
    """A record built already."""

    __slots__ = ("record",)

    def __init__(self, record: Record) -> None:
        self.record = record

    def __len__(self) -> int:
        return 1

    def __iter__(self) -> Iterator[Record]:
        yield self.record


class ShapedCall(Records):
    """A record read from a line of a known shape, not built yet.

    Its template is a LineTemplate (the line's SHAPE key is known) or a Template (its VOLATILE shape is). Records
    of one template differ only where the values (SHAPE's, or VOLATILE's) and the place go, each put in as it
    stands (an integer as it is printed), so a writer that encoded the template's first record with marks there
    can write later ones by putting the values between the pieces."""

    __slots__ = ("end_line", "line", "path", "template", "text", "values")

    def __init__(
        self,
        template: LineTemplate | Template,
        values: list[str],
        path: str,
        line: int,
        end_line: int,
        text: str | None = None,
    ) -> None:
        self.template = template
        self.values = values
        """The line's SHAPE values (a LineTemplate's), or the record's VOLATILE values (a Template's)."""
        self.path = path
        self.line = line
        self.end_line = end_line
        self.text = text
        """The one line the record was read from, given where the line comes again nearby (its SHAPE values are
        all that tells it apart from other lines of its template: a writer may key what it wrote by it)."""

    def __len__(self) -> int:
        return 1

    def __iter__(self) -> Iterator[Record]:
        yield self.record()

    def by_shape(self, caps: bool) -> bool:
        return not caps or self.template.same_call

    def call(self, offset: int) -> ShapedCall:
        return self

    def record(self) -> Record:
        """The record."""
        return self.template.make(self.template.build_fields(self.values, self.path, self.line, self.end_line))

    def marked(self, marks: list[str], line: Any, end_line: Any, path: str | None = None) -> Record:
        """The record with `marks` in place of the values and of the line numbers (and `path` of the input's
        name, where given)."""
        fields = self.template.build_fields(marks, self.path if path is None else path, line, end_line, convert=False)
        return self.template.make(fields)


class ShapedRun(Records):
    """One-line records of known shapes, not built yet: what a ShapedCall per line would say, without an object
    per record. The lines follow each other (every record wanted), or are the marked GEMM lines of a batch with
    only lines counted already between them (only GEMMs wanted)."""

    __slots__ = ("counts", "marks", "numbers", "path", "texts", "values")

    def __init__(
        self,
        marks: list[tuple[Any, LineTemplate]],
        texts: list[str],
        numbers: Sequence[int],
        path: str,
        counts: dict[str, int],
        values: Callable[[str], list[str]],
    ) -> None:
        self.marks = marks
        """(dialect, template) of each record."""
        self.texts = texts
        """Each record's line."""
        self.numbers = numbers
        """Each record's line number."""
        self.path = path
        self.counts = counts
        """How often each line comes in its batch (a writer keeps what it wrote only for lines that come again)."""
        self.values = values
        """A line's SHAPE values."""

    def __len__(self) -> int:
        return len(self.texts)

    def __iter__(self) -> Iterator[Record]:
        return (self.call(offset).record() for offset in range(len(self.texts)))

    def by_shape(self, caps: bool) -> bool:
        return True  # LineTemplates: records of one template are one call

    def again(self, text: str) -> bool:
        """Whether the line `text` comes again in its batch (a ShapedCall then carries it: see ShapedCall.text)."""
        return self.counts.get(text, 0) > 1

    def call(self, offset: int) -> ShapedCall:
        text, number = self.texts[offset], self.numbers[offset]
        kept = text if self.again(text) else None
        return ShapedCall(self.marks[offset][1], self.values(text), self.path, number, number, kept)

    def after(self, offset: int) -> ShapedRun:
        return ShapedRun(
            self.marks[offset:], self.texts[offset:], self.numbers[offset:], self.path, self.counts, self.values
        )


__all__ = ["Built", "Records", "ShapedCall", "ShapedRun"]
