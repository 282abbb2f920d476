"""What every log dialect module provides, and the machinery they share.

A dialect is a :class:`LogFormat`: a Lark grammar (the one definition of its
syntax, in ``grammars/``), a Transformer from the grammar's tree to keyword
arguments of a record, and a few regular expressions that only *find* things:

* ``start``: does this physical line begin a record of the dialect? (a cheap
  prefilter; the grammar decides whether it really is one);
* ``volatile``: the values that change from call to call (pointers, time
  stamps, thread ids).

Speed comes from running the grammar once per distinct call *shape*: a record
whose text, with its volatile values masked, was seen before is rebuilt from
the cached result with the new values put back. The cache keys on the masked
text, so a record whose non-volatile text differs in any byte is parsed anew.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from lark import Lark, Token, Transformer
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from blaslog.records import Event, GemmCall, Record

CACHE_LIMIT = 50_000
"""Most distinct call shapes kept per dialect (a log of only distinct calls must not grow memory forever)."""


class Slot:
    """Stands for the i-th volatile value of a record while its shape is cached.

    It deliberately supports no arithmetic or conversion: a build step that
    tries to compute with a volatile value raises TypeError, and that shape is
    then parsed every time instead of cached.
    """

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def __repr__(self) -> str:
        return f"Slot({self.index})"

    def __int__(self) -> int:
        raise TypeError("volatile value")

    def __index__(self) -> int:
        raise TypeError("volatile value")

    def __str__(self) -> str:
        raise TypeError("volatile value")

    def __bool__(self) -> bool:
        return True


class RecordError(Exception):
    """A record's text parsed but makes no sense (raised by build steps)."""

    def __init__(self, message: str, column: int = 0) -> None:
        self.column = column
        super().__init__(message)


class LeafTransformer(Transformer[Token, Any]):
    """Base Transformer that turns leaves into plain str, or Slot for volatile spans."""

    def __default_token__(self, token: Token) -> str | Slot:
        return self.leaf(token)

    def __init__(self, spans: dict[tuple[int, int], int]) -> None:
        super().__init__()
        self._spans = spans
        self.used = 0

    def leaf(self, token: Token) -> str | Slot:
        """The token's text, or its Slot when the token is one of the masked volatile values."""
        index = self._spans.get((token.start_pos, token.end_pos)) if self._spans else None
        if index is None:
            return str(token)
        self.used += 1
        return Slot(index)


@dataclass(slots=True)
class _Template:
    cls: type
    kwargs: dict[str, Any]
    warnings: tuple[str, ...]
    direct: tuple[tuple[str, int], ...]
    nested: tuple[tuple[str, int, int, int], ...]


_UNCACHEABLE = object()


@functools.cache
def load_grammar(filename: str, start: str = "start") -> Lark:
    """Build the LALR parser of a grammar shipped in ``blaslog/grammars`` (or the source tree's ``grammars/``)."""
    packaged = resources.files("blaslog") / "grammars"
    if packaged.is_dir():
        return Lark.open_from_package(
            "blaslog", filename, ("grammars",), parser="lalr", start=start, cache=False
        )
    source = Path(__file__).resolve().parents[2] / "grammars"  # running from a source checkout
    return Lark.open(str(source / filename), parser="lalr", start=start, import_paths=[str(source)])


class LogFormat:
    """One log dialect. Subclasses set the class attributes and implement :meth:`build`."""

    name: ClassVar[str]
    """The `--log-format` value."""
    library: ClassVar[str]
    """The library that writes it."""
    description: ClassVar[str]
    """One line for `--help` and the docs."""
    grammar: ClassVar[str]
    """File in grammars/."""
    start_rule: ClassVar[str] = "start"
    start: ClassVar[re.Pattern[str]]
    """Matches (with .match) a physical line that begins a record."""
    volatile: ClassVar[re.Pattern[str] | None] = None
    """One capture group; each match is a value that changes from call to call."""
    transformer: ClassVar[type[LeafTransformer]]
    multiline: ClassVar[bool] = False

    def __init__(self) -> None:
        self._cache: dict[str, Any] = {}

    # -- record assembly -------------------------------------------------
    def continues(self, lines: list[str], line: str) -> bool:
        """Whether `line` continues the record made of `lines` (human-wrapped or multi-line records)."""
        return False

    def clean(self, lines: list[str]) -> str:
        """Join the physical lines of a record into the text the grammar parses."""
        return " ".join(lines)

    # -- parsing -----------------------------------------------------------
    def parse(self, text: str, path: str, line: int, end_line: int) -> tuple[Record, tuple[str, ...]]:
        """Parse one record's text into a record and warnings about it.

        Raises UnexpectedInput (the grammar rejects it) or RecordError (it parses but makes no sense).
        """
        if self.volatile is not None:
            parts = self.volatile.split(text)
            key = "\x00".join(parts[0::2])
            values = parts[1::2]
        else:
            key, values = text, []
        template = self._cache.get(key)
        if template is None:
            template = self._make_template(text, values)
            if len(self._cache) < CACHE_LIMIT:
                self._cache[key] = template
        if template is _UNCACHEABLE:
            cls, kwargs, warnings = self._build_plain(text)
            return cls(file=path, line=line, end_line=end_line, **kwargs), warnings
        kwargs = dict(template.kwargs)
        for name, index in template.direct:
            kwargs[name] = values[index]
        if template.nested:
            patched: dict[str, list[Any]] = {}
            for name, i, j, index in template.nested:
                items = patched.setdefault(name, [list(p) for p in kwargs[name]])
                items[i][j] = values[index]
            for name, items in patched.items():
                kwargs[name] = tuple(tuple(p) for p in items)
        return template.cls(file=path, line=line, end_line=end_line, **kwargs), template.warnings

    def _tree(self, text: str) -> Any:
        return load_grammar(self.grammar, self.start_rule).parse(text)

    def _build_plain(self, text: str) -> tuple[type, dict[str, Any], tuple[str, ...]]:
        generic = self.transformer({}).transform(self._tree(text))
        return self.build(generic)

    def _make_template(self, text: str, values: list[str]) -> Any:
        tree = self._tree(text)  # grammar errors propagate to the caller
        if not values:
            cls, kwargs, warnings = self.build(self.transformer({}).transform(tree))
            return _Template(cls, kwargs, warnings, (), ())
        spans = {}
        pos = 0
        for match in self.volatile.finditer(text):  # type: ignore[union-attr]
            spans[match.span(1)] = pos
            pos += 1
        transformer = self.transformer(spans)
        try:
            cls, kwargs, warnings = self.build(transformer.transform(tree))
        except (TypeError, RecordError, LarkError):
            # let the plain path raise the real error, or build what needs the real values
            return _UNCACHEABLE
        direct: list[tuple[str, int]] = []
        nested: list[tuple[str, int, int, int]] = []
        seen = 0
        for name, value in kwargs.items():
            if isinstance(value, Slot):
                direct.append((name, value.index))
                seen += 1
            elif isinstance(value, tuple):
                for i, item in enumerate(value):
                    if isinstance(item, tuple):
                        for j, sub in enumerate(item):
                            if isinstance(sub, Slot):
                                nested.append((name, i, j, sub.index))
                                seen += 1
                            elif not _plain(sub):
                                return _UNCACHEABLE
                    elif isinstance(item, Slot) or not _plain(item):
                        return _UNCACHEABLE
            elif not _plain(value):
                return _UNCACHEABLE
        if seen != len(values):
            # a volatile value was consumed by a computation or dropped: the
            # template cannot reproduce the next record faithfully
            return _UNCACHEABLE
        return _Template(cls, kwargs, warnings, tuple(direct), tuple(nested))

    def build(self, generic: Any) -> tuple[type, dict[str, Any], tuple[str, ...]]:
        """Turn the Transformer's output into (record class, keyword arguments, warnings)."""
        raise NotImplementedError


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


_TERMINAL_NAMES = {
    "RSQB": "']'", "LSQB": "'['", "EQUAL": "'='", "COMMA": "','", "COLON": "':'", "SEMICOLON": "';'",
    "LBRACE": "'{'", "RBRACE": "'}'", "LPAR": "'('", "RPAR": "')'", "VBAR": "'|'", "$END": "the end of the record",
    "TOKEN": "a word", "POINTER": "a pointer", "EMPTY_VALUE": "'='", "OUT_KEY": "a key", "_NL": "a new line",
}


def _terminal(name: str) -> str:
    bare = name.split("__")[-1]
    return _TERMINAL_NAMES.get(bare, bare.lower().replace("_", " "))


def describe_error(exc: Exception, text: str) -> tuple[str, int]:
    """A one-line reason and a 1-based column for a grammar or build error."""
    if isinstance(exc, UnexpectedCharacters):
        char = text[exc.pos_in_stream] if exc.pos_in_stream < len(text) else ""
        expected = sorted({_terminal(t) for t in exc.allowed or ()})
        hint = f"; expected {' or '.join(expected[:4])}" if expected else ""
        return f"unexpected character {char!r}{hint}", exc.column
    if isinstance(exc, UnexpectedEOF):
        return "the record ends too early (cut short?)", len(text) + 1
    if isinstance(exc, UnexpectedToken):
        if exc.token.type == "$END":
            return "the record ends too early (cut short, or a `[` is not closed)", len(text) + 1
        expected = sorted({_terminal(t) for t in exc.expected})
        hint = f"; expected {' or '.join(expected[:4])}" if expected else ""
        return f"unexpected {str(exc.token)[:40]!r}{hint}", exc.column
    if isinstance(exc, UnexpectedInput):
        return str(exc).splitlines()[0], getattr(exc, "column", 0)
    if isinstance(exc, RecordError):
        return str(exc), exc.column
    return str(exc), 0


def to_int(value: Any, what: str, *, low: int | None = 0, high: int = 2**63 - 1) -> int:
    """An integer field, with a clear error for non-numbers and out-of-range values."""
    if isinstance(value, Slot):
        raise TypeError("volatile value")
    try:
        number = int(value, 0) if isinstance(value, str) and value.lower().startswith(("0x", "-0x")) else int(value)
    except (TypeError, ValueError):
        raise RecordError(f"{what}={value!r} is not an integer") from None
    if (low is not None and number < low) or number > high:
        raise RecordError(f"{what}={value} is out of range")
    return number


__all__ = ["Event", "GemmCall", "LogFormat", "RecordError", "Slot", "describe_error", "load_grammar", "to_int"]
