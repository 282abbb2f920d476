"""What the parser of one input holds while it reads: the record being assembled, and the parser's state.

Every other module of the parser adds one concern to this state: counting lines and reporting problems
(``_accounting``), making a record of an assembled one (``_building``), deciding which lines belong to the record
being assembled (``_joining``), and the loop over a batch's lines (``_lines``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from blaslog._fast.cache import ShapeCache, SharedShapes, in_process
from blaslog._fast.follow import Follow
from blaslog._fast.known import Wanted
from blaslog.formats import Sniffer
from blaslog.formats._base import LogFormat
from blaslog.inputs import Batch, Reader
from blaslog.records import FileSummary, OnError, OnErrorName

MAX_RECORD_LINES = 256
"""Most physical lines one record may span (a runaway join stops here)."""

MAX_HELD_LINES = 16
"""Most lines of other text (prints, a person's `[...]`) in a row inside a record that is not over yet."""

WRAP_MIN = 60
"""Narrowest width at which a line cut at a fixed width (a terminal or a log viewer wrapped it) is joined again."""


@dataclass(slots=True)
class _Pending:
    """The record being assembled."""

    fmt: LogFormat
    """Its dialect."""
    lines: list[str]
    """Its physical lines so far (the first without any other text before the record)."""
    first: int
    """Number of its first line."""
    shape: str | None
    """SHAPE key of its one line; None once it spans lines, or when the batch has no shapes."""
    outer: str | None = None
    """The whole first line's SHAPE key when other text (a launcher's tag) came before the record."""
    prefix: str = ""
    """That other text: a later line that begins with it (the launcher tags every line) continues the record
    without it."""
    shared: bool = False
    """Its first line is the last line of the record before it too (two records glued on one line): that line
    is counted once, with the record before."""
    held: int = 0
    """Lines of other text since its last line, each counted on its own already (the dialect's `interleaved`:
    the record's next line may still come)."""
    skipped: int = 0
    """Lines of other text between its first and last line (not its lines)."""
    pieces: int = 1
    """Physical lines joined into its last line, which was cut at a fixed width (see
    ``_FileParser._rewrapped``); 0 once a shorter piece ended that line."""
    width: int = 0
    """Length of the first piece of its last line, as read (tag included); 0 for a record glued to the one
    before on its first line, which is never joined to a next piece."""
    bound: tuple[str, tuple[int, ...]] | None = None
    """(its lines' SHAPE keys joined by line ends, which of its lines hold SHAPE values) when it was assembled in
    one step (see ``_FileParser._follow``); None once a line is added otherwise."""

    def even(self) -> bool:
        """Two lines or more, each as long as the first (tag included, or the tag left out): the width the
        record's one line was cut at, before the dialect took its pieces for lines (see
        ``_FileParser._rewrapped``)."""
        lines = self.lines
        if len(lines) < 2 or self.pieces != 1:
            return False
        first = len(self.prefix) + len(lines[0])
        return all(len(line) in (first, first - len(self.prefix)) for line in lines[1:])


class _Walk:
    """What :meth:`_FileParser._lines` reads of a batch while it walks the lines at `indices`."""

    __slots__ = (
        "batch",
        "by_position",
        "counts",
        "indices",
        "mark_of",
        "marked",
        "marked_at",
        "memo",
        "positions",
        "steps",
        "unusable",
    )

    def __init__(self, batch: Batch, indices: Sequence[int], marks: dict[int, Any] | list[Any] | None) -> None:
        self.batch = batch
        self.indices = indices
        self.steps = enumerate(indices)
        """(position, index) of each line to visit (:meth:`_FileParser._follow` takes lines out of it)."""
        self.counts = batch.counts or {}
        self.memo: dict[str, list[str]] = {}
        """A line the batch holds again -> its SHAPE values."""
        self.by_position = isinstance(marks, list)
        """Every line's mark is given, or those of the marked lines (by index)."""
        self.positions: list[Any] = marks if isinstance(marks, list) else []
        self.marked: dict[int, Any] = marks if isinstance(marks, dict) else {}
        self.marked_at = list(self.marked)
        self.mark_of: Callable[[int], Any] = self.positions.__getitem__ if self.by_position else self.marked.get
        """The mark of the line at an index (None: not marked)."""
        problems = batch.problems
        self.unusable = {index for index, (_message, fatal) in problems.items() if fatal} if problems else set()
        """The indices of the lines that cannot be used at all (the reader's problems say so)."""
        """The marked lines' indices, in order (see :meth:`_FileParser._classify`)."""


class ParserState:
    """The state of the parser of one input (see ``_lines._FileParser``, which reads with it)."""

    def __init__(
        self,
        reader: Reader,
        sniffer: Sniffer,
        on_error: OnError | OnErrorName,
        events: bool = True,
        shapes: SharedShapes | None = None,
    ) -> None:
        shared = shapes if shapes is not None else in_process()
        if shared is not None:  # the shapes the inputs read before learnt (their sniffer: the same dialects)
            sniffer, self.cache = shared.take(tuple(fmt.name for fmt in sniffer.formats), sniffer)
            reader.shaper = self.cache.shaper
        else:
            self.cache = ShapeCache(reader.shaper, dialects=tuple(sniffer.formats))
        """What this input's parse learnt about line shapes (its `stats` count hits and grammar runs), with what
        the inputs before it learnt when they share `shapes`."""
        self.reader = reader
        self.sniffer = sniffer
        self.on_error = OnError(on_error)  # a str of its values too (the API's callers may pass one)
        self.events = events
        self.summary = FileSummary(reader.name)
        self.progress: Callable[[int, int], None] | None = None
        self.prefixes: set[str] = set()
        self._cut_widths: dict[int, int] = {}
        """Width -> how many lines were joined again at it (see :meth:`_rewrapped`)."""
        self._timed: dict[str, re.Pattern[str] | None] = {}
        """A prefix with a time stamp (a CI runner's `2024-01-15T10:23:45.1234567Z ` before every line) -> the
        pattern of that prefix at any time, None for a prefix without one (see ``_joining._body``)."""
        self._tags: dict[str, re.Pattern[str]] = {}
        """A launcher tag (`[rank0]: `) -> the pattern of its kind (`[rank<n>]: `), see :meth:`_other_tag`."""
        self._open: dict[tuple[Any, str], bool] = {}
        """One-line records -> whether their dialect says they are not over (see :meth:`_unfinished`)."""
        self._starts: dict[str, bool] = {}
        """SHAPE key -> whether a line of it begins a record (see :meth:`_begins_record`)."""
        self.other: tuple[int, str] = (0, "")
        """Number and text of the last line that was no record's (foreign, unparsable)."""
        self.wrap_width = 0
        """The width this input's lines were seen cut at (two whole pieces of one record as long as each other),
        or 0."""
        self.overlong: tuple[str, int] | None = None
        """(dialect, first line) of a record cut at MAX_RECORD_LINES, while its further lines come."""
        self.pending: _Pending | None = None
        """The record being assembled."""
        self.number = 0
        """Number of the last line seen."""
        self.wanted = Wanted(events)
        """What is wanted of the records (what the speed layer is told when it makes one)."""
        self.follow = Follow()
        """Records of several lines taken in one step by their lines' SHAPE keys (see :meth:`_follow`)."""
        self._sniffed: dict[str, Any] = {}
        """Lines that came again in a batch -> what the sniffer says of them."""

    @property
    def sink(self) -> Any:
        """A CompactRun to hand GEMMs of a known shape to without building them, or None."""
        return self.wanted.sink

    @sink.setter
    def sink(self, sink: Any) -> None:
        self.wanted.sink = sink

    @property
    def lazy(self) -> bool:
        """Records of a known shape come not built yet (a lazy read: see ``_lines._FileParser.items``)."""
        return self.wanted.lazy

    @lazy.setter
    def lazy(self, lazy: bool) -> None:
        self.wanted.lazy = lazy
