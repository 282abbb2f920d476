"""What every log dialect module provides, and the machinery they share.

A dialect is a :class:`LogFormat`: a Lark grammar (the one definition of its
syntax, in ``grammars/``), a Transformer from the grammar's tree to keyword
arguments of a record, and a ``start`` regular expression that only *finds*
lines that may begin a record (a cheap prefilter; the grammar decides).

Speed comes from running the grammar once per distinct call *shape*: the text
with its volatile values (VOLATILE: pointers, time stamps, thread ids, sizes)
masked. A record whose shape was seen before is rebuilt from the cached
Template with its own values put back (integers converted and range-checked
again); a shape whose build step computes with a volatile value is marked
UNCACHEABLE and parsed every time. Any other byte of difference is a new shape.

The templates and their slots are the speed layer's (``blaslog/_fast/templates.py``); a dialect's build step
sees them only as :class:`Slot` values, re-exported here with the errors a build step raises.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, ClassVar

import blaslog._lark as _lark
from blaslog._fast.errors import RecordCut, RecordError, describe_error
from blaslog._fast.shapes import VOLATILE, mask
from blaslog._fast.templates import (
    FALLBACK,
    UNCACHEABLE,
    LeafTransformer,
    LineTemplate,
    Slot,
    Template,
    Text,
    concat,
    to_int,
)
from blaslog.formats._grammars import load_grammar
from blaslog.formats._switch import LogSwitch
from blaslog.records import Event, GemmCall, Record

if TYPE_CHECKING:
    from lark import Lark


class LogFormat:
    """One log dialect. Subclasses set the class attributes and implement :meth:`build`; registering the class
    (:func:`blaslog.formats.register_format`) is all the rest of blaslog needs to read it: sniffing, cutting a
    big file into pieces, dropping a second dialect's copy of the same calls, near misses and help texts all
    read these attributes."""

    name: ClassVar[str]
    """The `--log-format` value."""
    library: ClassVar[str]
    """The library that writes it (`--log-format LIBRARY-all` names every dialect of it)."""
    description: ClassVar[str]
    """One line for `--help` and the docs."""
    logging_hint: ClassVar[str] = ""
    """How to turn this dialect's logging on (the environment variables), one line; empty when the library
    always writes it. Shown when an input holds no record ("was logging on?")."""
    sniff_rank: ClassVar[int] = 100
    """Where the dialect comes in sniffing order among those shipped (lower first; a tie between two dialects'
    starts on one line goes to the first); dialects of one rank come in module and definition order."""
    logging: ClassVar[LogSwitch | None] = None
    """How `blaslog record --libs NAME` turns the library's logging on and where it writes (its environment
    variables per level and its log files); declared by one dialect of each library, None for the others."""
    tuning: ClassVar[bool] = False
    """True when its records are tuning choices (a TunableOp results row), not executed calls."""
    function_family: ClassVar[tuple[str, str] | None] = None
    """(regular expression, template): how the library's function names fold into one family (GemmCall.family):
    a name the expression matches whole becomes the template expanded with its groups (an unmatched group is
    empty). None: a name is its family, without a `_64` suffix."""
    compute_as_data_type: ClassVar[bool] = False
    """True when the library prints a compute type as a data type (cuBLAS's `R_32F` for cublasSgemm), which
    GemmCall.compute_key compares as `COMPUTE_32F`."""
    boundary: ClassVar[bytes | None] = None
    """Regular expression (bytes) matching at the start of a line that always begins a one-line record of this
    dialect and continues no record before it: a big file may be cut into pieces just before such a line. None:
    a file of this dialect alone is not cut (its records may span lines)."""
    same_calls_as: ClassVar[str | None] = None
    """The dialect that logs the same calls as this one when both are switched on (ROCBLAS_LAYER=3 writes a
    trace and a bench line per call): in an input that holds both, that dialect's records are kept and this
    one's left out, so that each call counts once."""
    banner: ClassVar[str | None] = None
    """Regular expression (searched in a line) for what the library writes once when a process starts using it
    (its version, its handle's creation): a second one in a file starts the output of another process, perhaps
    of another run pasted after the first."""
    near_miss: ClassVar[str | None] = None
    """Regular expression (searched in a line) for text that looks like this library's output though no
    dialect begins a record with it: such a line is reported as unparsable, never passed over as the
    program's own output."""
    grammar: ClassVar[str]
    """File in grammars/ (see :meth:`parser`)."""
    start_rule: ClassVar[str] = "start"
    """The grammar rule a record is parsed with."""
    start: ClassVar[re.Pattern[str]]
    """Matches (with .match) a physical line that begins a record."""
    start_signs: ClassVar[tuple[str, ...] | None] = None
    """Texts one of which every line `start` finds a record in holds (`[cublasLt`, `rocblas_`): the sniffer
    looks for every dialect's signs in one pass and runs only the `start` of the dialects whose signs a line
    holds (most of a program's own lines hold none). None: this dialect's `start` runs on every line."""
    transformer: ClassVar[type[LeafTransformer]]

    fallback_rule: ClassVar[str | None] = None
    """A looser grammar rule for text the main rule rejects (a free-text message), read by :meth:`fallback`."""

    words: ClassVar[re.Pattern[str] | None] = None
    """Where the VOLATILE shapes of this dialect's records hold words that its grammar reads as one terminal of
    the same type whatever word is there, and that the build step passes on as they are (enum names such as
    `R_16F`, `MATMUL_TILE_128x128`): a pattern that finds them in a VOLATILE shape, its group 1 the word. The
    shapes that differ only in those words are one family, whose template is made once from the grammar and
    specialised for each of them without it (a word the build step computes with stays in the family's key).
    None: every VOLATILE shape goes through the grammar once."""

    # -- record assembly -------------------------------------------------
    assembles_by_shape: ClassVar[bool] = False
    """:meth:`continues` and :meth:`clean` say the same of lines of one SHAPE key (they read none of the values
    SHAPE masks): a record whose lines' keys are those of a record read before is then assembled without asking
    `continues` line by line, and its text is its lines joined as that record's was (see
    ``_FileParser._follow``)."""

    def continues(self, lines: list[str], line: str) -> bool:
        """Whether `line` continues the record made of `lines` (human-wrapped or multi-line records)."""
        return False

    def unfinished(self, lines: list[str]) -> bool:
        """Whether the record made of `lines` so far visibly lacks what its writer always writes on its last
        line (the rest of that line may follow on the next, when the log was cut at a fixed width)."""
        return False

    def clean(self, lines: list[str]) -> str:
        """Join the physical lines of a record into the text the grammar parses."""
        return " ".join(lines)

    def interleaved(self, lines: list[str]) -> bool:
        """Whether other text (a program's print, a person's `[...]`) may come between the lines of the record
        made of `lines` so far without ending it: the record's next line after such text still continues it,
        and the text is counted on its own. False: the record ends at the first line that does not continue it."""
        return False

    def whole(self, text: str) -> bool | None:
        """Whether a record's `text`, whose last line has no line end at the end of the input, is whole: False
        when that line may have been cut inside a value the grammar would still accept (the record is then
        kept as truncated); None when the dialect cannot tell (nothing closes its records: the record is kept
        with a warning that its last value may be cut). By default a record that ends in a closing bracket is
        whole."""
        return True if text.rstrip().endswith((")", "]", "}")) else None

    def glued(self, text: str) -> int:
        """Where a second record of this dialect begins inside the first line of a record (`text`: the line from
        the record's start), when a person glued two records onto one line; 0 when none does."""
        return 0

    def cut_short(self, text: str) -> bool:
        """Whether a record's `text`, which the grammar rejects, is a record cut short (kept as truncated)
        rather than a malformed one (unparsable). A build step says so by raising :class:`RecordCut`."""
        return False

    def partial(self, text: str, path: str, line: int, end_line: int) -> GemmCall | None:
        """The GEMM a record the grammar rejects still shows, where a person edited it inside the line (fields
        replaced with `...`, a note appended): m, n, k, transposes and types where visible, the fields not shown
        named in `missing`; None (the record is reported as unparsable) where the dialect reads no such record
        or too little of the GEMM is left."""
        return None

    def truncated(self, text: str, path: str, line: int, end_line: int) -> Event:
        """The truncated record of a cut `text`: what can be read of it (its function, fields, thread and time
        stamp where the dialect knows how)."""
        return Event(
            self.library, "?", "truncated", text=text, file=path, line=line, end_line=end_line, log_format=self.name
        )

    # -- parsing -----------------------------------------------------------
    def parser(self, rule: str | None = None) -> Lark:
        """The LALR parser of a rule (`start_rule` by default) of the shipped grammar `grammar` (a dialect
        defined elsewhere, a test's toy one say, may build its own)."""
        return load_grammar(self.grammar, rule or self.start_rule)

    def parse(self, text: str, path: str, line: int, end_line: int) -> tuple[Record, tuple[str, ...]]:
        """Parse one record's text with the grammar (no shape cache) into a record and warnings about it.

        Raises UnexpectedInput (the grammar rejects it) or RecordError (it parses but makes no sense). The
        parse pipeline goes through the shape cache of its input instead (``ShapeCache.parse``).
        """
        try:
            try:
                tree = self.parser().parse(text)
            except _lark.LarkError:  # the main rule rejects the text: the looser reading, if any, or that error
                if self.fallback_rule is not None:
                    try:
                        loose = self.fallback(self.parser(self.fallback_rule).parse(text), path, line, end_line)
                    except _lark.LarkError:
                        loose = None
                    if loose is not None:
                        return loose, ()
                raise
            return self.record(tree, path, line, end_line)
        except RecursionError:
            raise RecordError("groups nested too deeply to be a BLAS log record") from None

    def record(self, tree: Any, path: str, line: int, end_line: int) -> tuple[Record, tuple[str, ...]]:
        """The record (and warnings) of a tree of :meth:`parser`."""
        cls, kwargs, warnings = self.build(self.transformer({}).transform(tree))
        return cls(file=path, line=line, end_line=end_line, **kwargs), warnings

    def fallback(self, tree: Any, path: str, line: int, end_line: int) -> Record | None:
        """A record from a tree of `fallback_rule` (text the main rule rejects), or None to report the main
        rule's error."""
        return None

    def build(self, generic: Any) -> tuple[type, dict[str, Any], tuple[str, ...]]:
        """Turn the Transformer's output into (record class, keyword arguments, warnings)."""
        raise NotImplementedError


_TRANSPOSES = {"N": "N", "T": "T", "C": "C", "HERMITAN": "C", "CONJG": "C", "111": "N", "112": "T", "113": "C"}
"""Transpose spellings by their last `_`-separated word: cuBLASLt and hipBLASLt `OP_T`, cuBLAS `CUBLAS_OP_T`,
hipBLAS `HIPBLAS_OP_T`, the AMD bench and profile `T`, and rocBLAS before 3.5 `111`-`113`."""


def transpose(value: Any, what: str) -> str:
    """The transpose letter (N, T or C) of any dialect's spelling of it; an absent value is N.

    A volatile value raises TypeError (only `111`-`113` look like one: that shape is then parsed every time).
    """
    if value is None:
        return "N"
    letter = _TRANSPOSES.get(str(value).strip("'\"").rsplit("_", 1)[-1].upper())
    if letter is None:
        raise RecordError(f"{what}={value!r} is not a transpose (N, T or C)")
    return letter


__all__ = [
    "FALLBACK",
    "UNCACHEABLE",
    "VOLATILE",
    "Event",
    "GemmCall",
    "LeafTransformer",
    "LineTemplate",
    "LogFormat",
    "RecordCut",
    "RecordError",
    "Slot",
    "Template",
    "Text",
    "concat",
    "describe_error",
    "load_grammar",
    "mask",
    "to_int",
    "transpose",
]
