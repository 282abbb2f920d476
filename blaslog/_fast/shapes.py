"""Call shapes: a record's text with its volatile values masked, computed fast for whole blocks of lines.

A level-5 log says the same few hundred things again and again with new pointers, time stamps and thread
ids. The parse pipeline runs the grammar once per distinct *shape* and serves every later record of that
shape from a template (see ``_base.Template``). Two masks define shapes:

* VOLATILE, for one record: pointers, time stamps, thread ids and sizes (what a template has slots for);
* SHAPE, for every line of the input: time stamps, pointers and thread ids only. Every SHAPE match is a
  VOLATILE match at the same place, so a line's SHAPE key names its VOLATILE shape and template.

:class:`Shaper` computes SHAPE keys for a block of lines without running the SHAPE regex over the block:
each distinct line is keyed once, split after its first ``"] "`` (the end of a logger's
``[time][lib][tid][Level][function] `` header) into a head and a message, each looked up in a bounded
cache; a message without time stamps or thread ids is masked by the cheaper pointer pattern. The key is
byte for byte what ``SHAPE.sub`` gives with `mark` (tests compare the two on every bundled log and on fuzzed
lines).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import chain, islice
from typing import Any, cast

from blaslog._fast import _c  # the per-byte loops in C where the extension is in use (its one switch)

VOLATILE = re.compile(
    r"(0x0x[0-9a-fA-F]+"  # cuBLAS pointers
    r"|[0-9](?<![\w.(\-][0-9])"  # the rest starts at a digit that does not continue a word, number or `(`
    r"(?:\d{3}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?Z?"  # time stamps (ISO 8601's UTC `Z` too)
    r"|(?<=0)[xX][0-9a-fA-F]*[1-9a-fA-F][0-9a-fA-F]*"  # pointers other than NULL
    r"|\d*\.\d+"  # decimals
    r"|\d+))(?![\w.])",  # numbers of two digits or more
    re.ASCII,  # logs are ASCII; the ASCII classes are also faster
)
"""The values that change from call to call in every dialect: pointers, time stamps, thread ids, sizes.

The *shape* of a record is its text with each match replaced by NUL and the value's kind (see `key_of`);
records of one shape share a template, so the grammar runs once per shape. Single digits, NULL pointers,
negative numbers and numbers inside `(...)` stay part of the shape (they are flags and enum values more often
than sizes).
"""

SHAPE = re.compile(
    r"(0x0x[0-9a-fA-F]+(?![\w.])"  # cuBLAS pointers (VOLATILE's own alternative: the same spans)
    r"|[0-9](?<![\w.(\-][0-9])(?:\d{3}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?Z?"  # time stamps, `Z` too
    r"|(?<=0)[xX][0-9a-fA-F]*[1-9a-fA-F][0-9a-fA-F]*"  # pointers other than NULL
    r"|(?<=\[[0-9])\d+(?=\]\[))(?![\w.]))",  # thread ids: `[1234][`
    re.ASCII,
)
"""The mask of every input line: time stamps, pointers and thread ids (a subset of VOLATILE's matches).

A level-5 log repeats its sizes, so masking them is not needed to find repeated lines; it only spares
the grammar for new ones.
"""

_POINTER = re.compile(
    r"((?:0x0x[0-9a-fA-F]+|0(?<![\w.(\-]0)[xX][0-9a-fA-F]*[1-9a-fA-F][0-9a-fA-F]*)(?![\w.]))", re.ASCII
)
"""SHAPE's pointer alternative alone: what SHAPE matches in a text holding no time stamp and no thread id
(no `:` and no `][`). It starts with a literal, which makes it several times faster than SHAPE."""


KEPT = 20_000
"""Most shapes kept in any table keyed by shape; a full table is emptied and filled again. A training log
has a few hundred shapes; a log in which every call is new must not grow memory with its length."""


def kind_of(value: str) -> str:
    """What a volatile value looks like: `ptr`, `time` or `num` (the kinds a Slot tells a build step)."""
    return "ptr" if value[:2] in ("0x", "0X") else "time" if ("-" in value or ":" in value) else "num"


def mark(value: str) -> str:
    """What a key holds in place of a masked value: a NUL and a letter for what the value looks like, `p` (a
    pointer), `s` or `t` (a time stamp with a space, or without one: `2026-06-06T15:31:41`), `y` or `z` (the
    same with ISO 8601's `Z` after it: `2024-01-15T10:23:45.1234567Z`, a CI runner's), `d` (a decimal) or `n` (a
    whole number).

    A grammar may read one place of a shape otherwise when it holds another kind of value: a time stamp with
    a space is two words to it, and a logger's thread-id brackets take digits, not a pointer or a decimal.
    Shapes, and so the templates bound to them, therefore differ by their values' kinds as well as by their
    text."""
    kind = kind_of(value)
    if kind == "num":
        return "\x00d" if "." in value else "\x00n"
    if kind == "time":
        if value.endswith("Z"):  # a grammar that reads a logger's own stamp need not read this one
            return "\x00y" if " " in value else "\x00z"
        return "\x00s" if " " in value else "\x00t"
    return "\x00p"


def key_of(parts: list[str], pattern: re.Pattern[str] | None = None) -> str:
    """The key of a text split by a mask's pattern (its texts and values in turn): each value replaced by its
    `mark`. ``key_of(SHAPE.split(text))`` is ``SHAPE.sub(lambda m: mark(m.group(1)), text)``. Every value of
    the `_POINTER` pattern is a pointer."""
    texts = parts[0::2]
    if pattern is _POINTER:
        return "\x00p".join(texts)
    if len(texts) == 1:
        return texts[0]
    joined = list(chain.from_iterable(zip(texts, map(mark, parts[1::2]), strict=False)))  # all texts but the last
    joined.append(texts[-1])
    return "".join(joined)


def keep(table: dict[Any, Any], key: Any, value: Any) -> None:
    """``table[key] = value``, emptying the table first when it holds KEPT entries."""
    if len(table) >= KEPT:
        table.clear()
    table[key] = value


def mask(text: str) -> tuple[str, list[str]]:
    """(VOLATILE shape, volatile values) of a record's text."""
    speedups = _c.speedups
    if speedups is not None and (found := speedups.mask(text)) is not None:
        return cast("tuple[str, list[str]]", found)
    parts = VOLATILE.split(text)
    return key_of(parts), parts[1::2]


def _masked(text: str) -> tuple[str, list[str]]:
    """(SHAPE key, SHAPE values) of a text: the pointer pattern alone where it has no `:` or `][`."""
    pattern = _POINTER if "][" not in text and ":" not in text else SHAPE
    parts = pattern.split(text)
    return key_of(parts, pattern), parts[1::2]


class Shaper:
    """SHAPE keys (and SHAPE values) of lines, with caches (of KEPT entries) of the parts seen before.

    No SHAPE match can span a line's first ``"] "`` (no match holds `]`), and the characters around that
    point read the same to SHAPE's look-arounds whether the line is whole or cut there, so a line's key is
    its head's key followed by its message's key.
    """

    def __init__(self) -> None:
        self._heads: dict[str, tuple[str, list[str]]] = {}
        self._messages: dict[str, tuple[str, list[str]]] = {}
        self._lines: dict[str, tuple[str, list[str]]] = {}
        """Lines of multi-line records (cuBLAS `i!` lines, which come again record after record) split by the C
        extension, which needs no head and message apart."""

    def _part(self, cache: dict[str, tuple[str, list[str]]], text: str) -> tuple[str, list[str]]:
        found = cache.get(text)
        if found is None:
            found = _masked(text)
            keep(cache, text, found)
        return found

    def _head(self, head: str) -> tuple[str, list[str]]:
        """(key, values) of a head, without its `] ` (which the key ends with)."""
        found = self._heads.get(head)
        if found is None:
            found = _masked(head + "] ")
            keep(self._heads, head, found)
        return found

    def split(self, line: str) -> tuple[str, list[str]]:
        """(SHAPE key, SHAPE values) of one line."""
        speedups = _c.speedups
        if speedups is not None:
            found = self._lines.get(line)
            if found is None and (found := speedups.split(line)) is not None:
                keep(self._lines, line, found)
            if found is not None:
                return found
        head, sep, message = line.partition("] ")
        if not sep:
            return self._part(self._messages, line)
        head_key, head_values = self._head(head)
        message_key, message_values = self._part(self._messages, message)
        return head_key + message_key, head_values + message_values if message_values else head_values

    def values(self, line: str) -> list[str]:
        """The SHAPE values of one line (:meth:`split` without building its key)."""
        speedups = _c.speedups
        # not kept: a one-line record's line is seldom seen again (its pointers are new)
        if speedups is not None and (found := speedups.values(line)) is not None:
            return cast("list[str]", found)
        head, sep, message = line.partition("] ")
        if not sep:
            return self._part(self._messages, line)[1]
        head_values = (self._heads.get(head) or self._head(head))[1]
        message_values = (self._messages.get(message) or self._part(self._messages, message))[1]
        return head_values + message_values if message_values else head_values

    def keys(self, lines: Iterable[str]) -> dict[str, str]:
        """Each distinct line of `lines` -> its SHAPE key (in the order of their first occurrence when `lines`
        holds each once, as the keys of a Counter do).

        Messages not seen before are masked together (see :meth:`_learn`): in a log whose pointers never repeat
        nearly every message is new.
        """
        heads, messages = self._heads, self._messages
        out: dict[str, str] = {}
        new: list[tuple[str, str]] = []  # (line, message) of each line whose message is new
        for line in lines if isinstance(lines, dict) else set(lines):
            head, sep, message = line.partition("] ")
            if sep:
                key = (heads.get(head) or self._head(head))[0]
            else:
                key = ""
                message = line
            found = messages.get(message)
            if found is None:
                new.append((line, message))
                out[line] = key  # its message's key follows below (the line keeps its place)
            else:
                out[line] = key + found[0]
        if new:
            learnt = self._learn({message for _, message in new})
            for line, message in new:
                out[line] += learnt[message][0]
        return out

    def _learn(self, messages: set[str]) -> dict[str, tuple[str, list[str]]]:
        """(key, values) of new messages, kept in the message cache (where :meth:`values` finds them too).

        Each kind of message (see `_masked`) is masked in one regular-expression pass over the messages joined by
        line ends (a SHAPE match holds no line end, and the look-arounds read a line end as they read the edge of
        a text); a message's values are the next as many values as its key holds NULs."""
        # a message holding a NUL (never one of a log's batches) is masked on its own: its key's NULs are not
        # all values
        learnt: dict[str, tuple[str, list[str]]] = {m: _masked(m) for m in messages if "\x00" in m}
        if learnt:
            messages = messages - learnt.keys()
        plain = [message for message in messages if "][" not in message and ":" not in message]
        other = [message for message in messages if "][" in message or ":" in message]
        for pattern, group in ((_POINTER, plain), (SHAPE, other)):
            if group:
                parts = pattern.split("\n".join(group))
                keys = key_of(parts, pattern).split("\n")
                found = iter(parts[1::2])
                values = [list(islice(found, key.count("\x00"))) for key in keys]
                learnt.update(zip(group, zip(keys, values, strict=True), strict=True))
        if len(self._messages) + len(learnt) > KEPT:
            self._messages.clear()
        self._messages.update(islice(learnt.items(), KEPT))  # the table stays bounded (the batch has them all)
        return learnt


__all__ = ["KEPT", "SHAPE", "VOLATILE", "Shaper", "keep", "key_of", "kind_of", "mark", "mask"]
