"""What reading a record's text can raise, and the one-line reason and column a report gives for it.

Reading a record (``ShapeCache.parse``) raises only these: :class:`RecordError` (the text parses but makes no
sense; :class:`RecordCut`: it ends before the record does) and :class:`Rejected` (the dialect's grammar rejects
the text). Lark's own errors stay inside the speed layer: where the grammar rejects a text, the cache describes
lark's error (:func:`describe_error`), saves the description for later processes (which then raise it without
the grammar, and import no lark) and raises it as a Rejected.
"""

from __future__ import annotations

import re

import blaslog._lark as _lark


class RecordError(Exception):
    """A record's text parsed but makes no sense (raised by build steps)."""

    def __init__(self, message: str, column: int = 0) -> None:
        self.column = column
        self.where: tuple[str, str | None] | None = None
        """(field, value as printed) of a bad value, which :func:`describe_error` finds in the text when no
        column is given."""
        super().__init__(message)


class RecordCut(RecordError):
    """A record's text ends before the record does (the writer was killed mid-record, or a person cut it): the
    parser keeps it as a truncated record (what :meth:`LogFormat.truncated` reads of it), wherever it is."""


class Rejected(Exception):
    """A record's text its dialect's grammar rejects: lark's error as :func:`describe_error` puts it, a reason and
    a 1-based column. It is what ``ShapeCache.parse`` raises for lark's error, and what a later process raises
    for the same text from the saved shapes (``saved.Store.texts``) without running the grammar.

    It is not a RecordError: the parser tells the two apart (a rejected text may be one cut short or edited by a
    person; a RecordError's text was read)."""

    def __init__(self, reason: str, column: int = 0) -> None:
        self.reason, self.column = reason, column
        super().__init__(reason, column)  # both in `args`: pickled and copied whole

    def __str__(self) -> str:
        return self.reason


_TERMINAL_NAMES = {
    "RSQB": "']'",
    "LSQB": "'['",
    "EQUAL": "'='",
    "COMMA": "','",
    "COLON": "':'",
    "SEMICOLON": "';'",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "LPAR": "'('",
    "RPAR": "')'",
    "VBAR": "'|'",
    "$END": "the end of the record",
    "_SHELL": "a redirect",  # bench.lark: what a shell does with a command's output
    "SHELL": "a redirect",  # (its name where another grammar imports bench.lark)
    "TOKEN": "a word",
    "POINTER": "a pointer",
    "EMPTY_VALUE": "'='",
    "OUT_KEY": "a key",
    "_NL": "a new line",
}


def _terminal(name: str) -> str:
    bare = name.split("__")[-1]
    return _TERMINAL_NAMES.get(bare, bare.lower().replace("_", " "))


def _locate(text: str, what: str, value: str) -> int:
    """The 1-based column of `value` printed after the key `what` names (`Adesc.rows` -> `rows=`, cuBLAS `m` ->
    `m: type=int; val=`) in a record's text, 0 when not found."""
    key = what.rsplit(".", 1)[-1]
    match = re.search(rf"(?<![\w.]){re.escape(key)}\b[^\n]*?(?<![^\s=:;\[,])({re.escape(value)})(?![^\s\],}}])", text)
    return match.start(1) + 1 if match else 0


def describe_error(exc: Exception, text: str) -> tuple[str, int]:
    """A one-line reason and a 1-based column for a grammar or build error."""
    if isinstance(exc, RecordError):  # first: the others are lark's (imported when first asked for)
        return str(exc), exc.column or _locate(text, exc.where[0], exc.where[1] or "") if exc.where else exc.column
    if isinstance(exc, Rejected):  # described already
        return exc.reason, exc.column
    if isinstance(exc, _lark.UnexpectedCharacters):
        at = exc.pos_in_stream or 0
        char = text[at] if at < len(text) else ""
        expected = sorted({_terminal(t) for t in exc.allowed or ()})
        hint = f"; expected {' or '.join(expected[:4])}" if expected else ""
        return f"unexpected character {char!r}{hint}", exc.column
    if isinstance(exc, _lark.UnexpectedEOF):
        return "the record ends too early (cut short?)", len(text) + 1
    if isinstance(exc, _lark.UnexpectedToken):
        if exc.token.type == "$END":
            return "the record ends too early (cut short, or a `[` is not closed)", len(text) + 1
        expected = sorted({_terminal(t) for t in exc.expected})
        hint = f"; expected {' or '.join(expected[:4])}" if expected else ""
        return f"unexpected {str(exc.token)[:40]!r}{hint}", exc.column
    if isinstance(exc, _lark.UnexpectedInput):
        return str(exc).splitlines()[0], getattr(exc, "column", 0)
    return str(exc), 0


def rejected(exc: Exception, text: str) -> Rejected:
    """Lark's error `exc` for `text`, described (:func:`describe_error`) as a Rejected."""
    return Rejected(*describe_error(exc, text))


__all__ = ["RecordCut", "RecordError", "Rejected", "describe_error", "rejected"]
