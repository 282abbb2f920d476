"""Templates: a record rebuilt from its shape's template with its own values put in, not parsed again.

A dialect's build step runs once per shape on a tree whose volatile values are :class:`Slot` objects; what it
returns, with the slots where it put them, is the shape's :class:`Template`. A :class:`LineTemplate` binds a
Template to a line's SHAPE key (see ``shapes.py``), with the values SHAPE leaves in the key put in once, so
that a later line of that key needs only its SHAPE values (records not built yet are ``lazy.py``'s).

Dialect modules see this only as :class:`Slot` values in a build step (re-exported by ``formats/_base.py``).
"""

from __future__ import annotations

import bisect
import copy
import dataclasses
import functools
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import blaslog._lark as _lark
from blaslog._fast import _c
from blaslog._fast.errors import RecordError
from blaslog._fast.shapes import SHAPE, VOLATILE
from blaslog.records import GemmCall, Record, record_maker


class Slot:
    """Stands for the i-th volatile value of a record while its shape is cached.

    It supports no conversion, comparison or hashing: a build step that computes with a volatile value
    raises TypeError, and that shape is then parsed every time instead of cached. ``kind`` says what
    the value looked like (`ptr`, `time` or `num`; `word` for a family's word), which build steps may ask
    (to file pointers apart): a shape's key holds its values' kinds (see _fast.shapes.mark), so every
    record of the shape has a value of this kind here.
    """

    __slots__ = ("index", "kind")

    def __init__(self, index: int, kind: str = "num") -> None:
        self.index = index
        self.kind = kind

    def __repr__(self) -> str:
        return f"Slot({self.index}, {self.kind})"

    def __eq__(self, other: object) -> bool:
        raise Volatile(self)

    def __hash__(self) -> int:
        raise Volatile(self)

    def __int__(self) -> int:
        raise Volatile(self)

    def __index__(self) -> int:
        raise Volatile(self)

    def __float__(self) -> float:
        raise Volatile(self)

    def __str__(self) -> str:
        raise Volatile(self)

    def __bool__(self) -> bool:
        return True


class Volatile(TypeError):
    """A build step computed with a volatile value (`slot`): the shape is not cached that way."""

    def __init__(self, slot: Slot) -> None:
        super().__init__("volatile value")
        self.slot = slot


class IntSlot(Slot):
    """A volatile value a build step wants as an integer: converted, range-checked, when the template is used."""

    __slots__ = ("hex", "high", "low", "what")

    def __init__(self, slot: Slot, what: str, low: int | None, high: int, hex: bool = False) -> None:
        super().__init__(slot.index, slot.kind)
        self.what, self.low, self.high, self.hex = what, low, high, hex

    def convert(self, text: str) -> int:
        """The integer, or RecordError."""
        if text.isascii() and text.isdigit():  # the common case, as to_int reads it, without its regex
            number = int(text)
            if (self.low is None or number >= self.low) and number <= self.high:
                return number
        converted: int = to_int(text, self.what, low=self.low, high=self.high, hex=self.hex)
        return converted


class Text:
    """Text a build step composed from parts some of which are volatile (a free-text message rendered from
    its words and pairs): literal strings and Slots, put together when the template is used."""

    __slots__ = ("parts",)
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, parts: tuple[str | Slot, ...]) -> None:
        self.parts = parts

    def __eq__(self, other: object) -> bool:
        raise TypeError("volatile value")

    def __str__(self) -> str:
        raise TypeError("volatile value")

    def fill(self, values: list[str]) -> str:
        """The text with the record's volatile values put in."""
        return "".join(part if isinstance(part, str) else values[part.index] for part in self.parts)


def concat(parts: list[Any]) -> Any:
    """``"".join(parts)``, or a Text when some parts are volatile (Slot or Text)."""
    if all(type(part) is str for part in parts):
        return "".join(parts)
    flat: list[Any] = []
    for part in parts:
        for piece in part.parts if isinstance(part, Text) else (part,):
            if type(piece) is str and flat and type(flat[-1]) is str:
                flat[-1] += piece
            elif not (type(piece) is str and not piece):
                flat.append(piece)
    return Text(tuple(flat))


if TYPE_CHECKING:
    from lark import Token, Transformer

    class _Transformer(Transformer[Token, Any]):
        pass

else:
    _Transformer = object


class LeafTransformer(_Transformer):
    """Base Transformer that turns leaves into plain str, or Slot for volatile spans.

    A dialect's transformer is a subclass, yet defining one does not import lark (see ``blaslog/_lark.py``):
    making one makes it an instance of the class with lark's Transformer mixed in after it (made once per
    class), so that it transforms trees as lark's Transformer does, with this class's and its subclass's
    methods first. So a subclass is not one of lark's classes where it is defined: lark's class decorators
    (`v_args`) do not apply to it (a method takes its rule's children as a list), and it is no subclass of
    lark's Transformer (its instances are)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        return object.__new__(_with_lark(cls))

    def __default_token__(self, token: Token) -> str | Slot | Text:
        return self.leaf(token)

    def __init__(self, spans: dict[tuple[int, int], Slot]) -> None:
        super().__init__()
        self._spans = spans
        self._order = sorted(spans)  # the spans by start: a token finds those it overlaps by bisection
        self._starts = [s for s, _ in self._order]

    def leaf(self, token: Token) -> str | Slot | Text:
        """The token's text; its Slot when the token is one of the masked volatile values; a Text when it
        holds some (`0x7f..[`, say). A volatile value across the token's edge makes the shape uncacheable.

        O(log n + overlaps) per token, so a line of n values costs O(n log n), not O(n^2)."""
        if not self._spans:
            return str(token)
        start, end = token.start_pos or 0, token.end_pos or 0
        slot = self._spans.get((start, end))
        if slot is not None:
            return slot
        first = max(bisect.bisect_right(self._starts, start) - 1, 0)  # spans do not overlap each other
        inside = []
        for s, e in self._order[first : bisect.bisect_left(self._starts, end)]:
            if e > start:
                inside.append((s, e, self._spans[(s, e)]))
        if not inside:
            return str(token)
        text = str(token)
        parts: list[Any] = []
        at = 0
        for s, e, slot in inside:
            if s < start or e > end:
                raise TypeError("a volatile value across a token's edge")
            parts += [text[at : s - start], slot]
            at = e - start
        parts.append(text[at:])
        joined: str | Slot | Text = concat(parts)
        return joined


@functools.cache
def _with_lark(cls: type) -> type:
    """`cls` (a LeafTransformer) with lark's Transformer mixed in after it (see :class:`LeafTransformer`)."""
    if issubclass(cls, _lark.Transformer):
        return cls
    return type(
        cls.__name__, (cls, _lark.Transformer), {"__module__": cls.__module__, "__qualname__": cls.__qualname__}
    )


@dataclass(slots=True, eq=False)
class Template:
    """A parsed record shape: the record's keyword arguments with Slots where the volatile values go (compared
    and hashed by identity: writers key what they made of a template by it)."""

    cls: type
    kwargs: dict[str, Any]
    warnings: tuple[str, ...]
    direct: tuple[tuple[str, Slot], ...]
    nested: tuple[tuple[str, int, int, Slot | Text], ...]
    """(field, i, j, what) for the volatile value (a Slot) or composed text (a Text, a free-text value holding
    some) at `field[i][j]` of a tuple-of-pairs field."""
    texts: tuple[tuple[str, Text], ...] = ()
    plan: Any = dataclasses.field(default=None, compare=False, repr=False)
    """How :meth:`instantiate` fills a record by field position (made when first used), or False when the
    keyword arguments do not name every required field exactly (the class's own __init__ then says why)."""
    memo: dict[str, Any] = dataclasses.field(default_factory=dict, compare=False, repr=False)
    """What writers made of the rows of this template, by writer (see LineTemplate.memo; saved with it)."""

    same_call: ClassVar[bool] = False
    """Records of one template differ in their sizes too (compare LineTemplate.same_call)."""

    def __getstate__(self) -> dict[str, Any]:
        """Its fields less the plan (functions, made again when first used)."""
        return {name: getattr(self, name) for name in self.__slots__ if name != "plan"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.memo = {}
        for name, value in state.items():
            setattr(self, name, value)
        self.plan = None

    def instantiate(self, values: list[str], path: str, line: int, end_line: int) -> Record:
        """A record of this shape with the given volatile values."""
        plan = self._planned()
        if plan is False:
            return self._instantiate(values, path, line, end_line)
        return plan[0](self.build_fields(values, path, line, end_line))  # type: ignore[no-any-return]

    def _planned(self) -> Any:
        """The plan, made when first asked for."""
        plan = self.plan
        if plan is None:
            plan = self.plan = self._plan()
        return plan

    @property
    def make(self) -> Callable[[list[Any]], Record]:
        """Builds a record from :meth:`build_fields`'s list (once :meth:`writable` said yes)."""
        return self.plan[0]  # type: ignore[no-any-return]

    @property
    def numbers(self) -> frozenset[int]:
        """The volatile values (their indices) that records hold as integers (once :meth:`writable` said yes)."""
        return frozenset(index for index, _ in self.plan[6])

    def writable(self, values: list[str]) -> bool:
        """Whether the record of `values` may be built later, or written from pieces (see ShapedCall): its fields
        are filled by position, and each value it holds as an integer is printed as the integer is (digits, no
        leading zero). Raises RecordError where :meth:`instantiate` would (a value out of range)."""
        plan = self._planned()
        if plan is False:
            return False
        for index, slot in plan[6]:
            value = values[index]
            slot.convert(value)
            if not value.isdigit() or (value[0] == "0" and len(value) > 1):
                return False
        return True

    def build_fields(self, values: list[Any], path: str, line: Any, end_line: Any, convert: bool = True) -> list[Any]:
        """The record's field values, in field order (`convert` False: the values put in as they are, integers
        too: a writer's marks)."""
        _make, base, (at_file, at_line, at_end), direct, texts, nested, _numbers = self.plan
        fields: list[Any] = base.copy()
        fields[at_file] = path
        fields[at_line] = line
        fields[at_end] = end_line
        for position, index, slot in direct:
            fields[position] = values[index] if slot is None or not convert else slot.convert(values[index])
        for position, text in texts:
            fields[position] = text.fill(values)
        if nested:
            patched: dict[int, list[Any]] = {}
            for position, i, j, index, slot in nested:
                items = patched.get(position)
                if items is None:
                    items = patched[position] = [list(p) for p in fields[position]]
                if type(index) is not int:  # a Text
                    items[i][j] = index.fill(values)
                else:
                    items[i][j] = values[index] if slot is None or not convert else slot.convert(values[index])
            for position, items in patched.items():
                fields[position] = tuple(tuple(p) for p in items)
        return fields

    def _plan(self) -> Any:
        names, make, position, defaults = _layout(self.cls, _c.speedups)
        if not self.kwargs.keys() <= position.keys() or not {"file", "line", "end_line"} <= position.keys():
            return False
        base = [self.kwargs.get(name, defaults[name]) for name in names]
        filled = {name for name, _ in self.direct} | {name for name, _ in self.texts} | {"file", "line", "end_line"}
        if any(value is dataclasses.MISSING and name not in filled for name, value in zip(names, base, strict=True)):
            return False
        where = (position["file"], position["line"], position["end_line"])

        def converter(slot: Slot) -> Slot | None:
            return slot if type(slot) is IntSlot else None

        direct = tuple((position[name], slot.index, converter(slot)) for name, slot in self.direct)
        texts = tuple((position[name], text) for name, text in self.texts)
        nested = tuple(
            (position[name], i, j, what, None)  # a Text: filled, not looked up
            if isinstance(what, Text)
            else (position[name], i, j, what.index, converter(what))
            for name, i, j, what in self.nested
        )
        numbers = tuple((entry[1], entry[2]) for entry in direct if entry[2] is not None) + tuple(
            (entry[3], entry[4]) for entry in nested if entry[4] is not None
        )
        return make, base, where, direct, texts, nested, numbers

    def specialize(self, words: list[str], first: int) -> Template:
        """This template with its word slots (indices `first` on, see :attr:`LogFormat.words`) filled with
        `words`: the Template of one VOLATILE shape of the family this one was made for."""

        def fill(what: Any) -> Any:
            if isinstance(what, Text):
                return concat([fill(part) for part in what.parts])
            if isinstance(what, Slot) and what.index >= first:
                return words[what.index - first]
            return what

        kwargs = dict(self.kwargs)
        direct = []
        for name, slot in self.direct:
            if slot.index >= first:
                kwargs[name] = words[slot.index - first]
            else:
                direct.append((name, slot))
        texts = []
        for name, text in self.texts:
            value = fill(text)
            if isinstance(value, Text):
                texts.append((name, value))
            else:
                kwargs[name] = value
        nested: list[tuple[str, int, int, Any]] = []
        constants: list[tuple[str, int, int, Any]] = []
        for name, i, j, what in self.nested:
            value = fill(what)
            (nested if isinstance(value, (Slot, Text)) else constants).append((name, i, j, value))
        _patch(kwargs, constants)
        return Template(self.cls, kwargs, self.warnings, tuple(direct), tuple(nested), tuple(texts))

    def _instantiate(self, values: list[str], path: str, line: int, end_line: int) -> Record:
        kwargs = dict(self.kwargs)
        for name, slot in self.direct:
            kwargs[name] = slot.convert(values[slot.index]) if type(slot) is IntSlot else values[slot.index]
        for name, text in self.texts:
            kwargs[name] = text.fill(values)
        if self.nested:
            patched: dict[str, list[Any]] = {}
            for name, i, j, what in self.nested:
                items = patched.get(name)
                if items is None:
                    items = patched[name] = [list(p) for p in kwargs[name]]
                if isinstance(what, Text):
                    items[i][j] = what.fill(values)
                else:
                    value = values[what.index]
                    items[i][j] = what.convert(value) if type(what) is IntSlot else value
            for name, items in patched.items():
                kwargs[name] = tuple(tuple(p) for p in items)
        return self.cls(file=path, line=line, end_line=end_line, **kwargs)  # type: ignore[no-any-return]


def _patch(fields: Any, edits: list[tuple[Any, int, int, Any]]) -> None:
    """``fields[key][i][j] = value`` for each (key, i, j, value) of `edits`, in fields that are tuples of pairs
    (each one edited is made again)."""
    patched: dict[Any, list[list[Any]]] = {}
    for key, i, j, value in edits:
        items = patched.get(key)
        if items is None:
            items = patched[key] = [list(pair) for pair in fields[key]]
        items[i][j] = value
    for key, items in patched.items():
        fields[key] = tuple(tuple(pair) for pair in items)


class _Binding:
    """A Template's slots bound to one SHAPE key (see LineTemplate): each slot whose value SHAPE leaves in the key
    put in as a constant (`kwargs`), the others by their SHAPE index, at their field's position."""

    def __init__(
        self, template: Template, where: dict[int, int], volatile: list[str], position: dict[str, int]
    ) -> None:
        self.template = template
        self.where = where
        """VOLATILE index -> SHAPE index."""
        self.volatile = volatile
        """The VOLATILE values of the key's first line."""
        self.position = position
        """Field name -> position."""
        self.kwargs = dict(template.kwargs)
        """The template's keyword arguments with the key's constants put in."""

    def constant(self, slot: Slot) -> Any:
        """The value of a slot SHAPE leaves in the key (converted; RecordError where it does not convert)."""
        value = self.volatile[slot.index]
        return slot.convert(value) if type(slot) is IntSlot else value

    def direct(self) -> list[tuple[int, int, IntSlot | None]]:
        """(position, SHAPE index, IntSlot or None) of each field that is a line's SHAPE value."""
        direct = []
        for name, slot in self.template.direct:
            if slot.index in self.where:
                direct.append((self.position[name], self.where[slot.index], slot if type(slot) is IntSlot else None))
            else:
                self.kwargs[name] = self.constant(slot)
        return direct

    def composed(self, text: Text) -> tuple[Any, ...]:
        """The text's parts: strings (its constant pieces and the volatile values SHAPE leaves in the key) and
        SHAPE indices of the line's values."""
        where, volatile = self.where, self.volatile
        merged: list[Any] = []
        for p in text.parts:
            part = p if isinstance(p, str) else where[p.index] if p.index in where else volatile[p.index]
            if type(part) is str and merged and type(merged[-1]) is str:
                merged[-1] += part
            else:
                merged.append(part)
        return tuple(merged)

    def nested(self) -> list[tuple[int, int, int, Any, IntSlot | None]]:
        """(position, i, j, SHAPE index or composed text, IntSlot or None) of each value at `field[i][j]` that
        varies between the key's lines; the others put in `kwargs`."""
        nested: list[tuple[int, int, int, Any, IntSlot | None]] = []
        constants: list[tuple[str, int, int, Any]] = []
        for name, i, j, what in self.template.nested:
            if isinstance(what, Text):
                parts = self.composed(what)
                if any(type(part) is int for part in parts):
                    nested.append((self.position[name], i, j, parts, None))
                    continue
                value: Any = "".join(parts)
            elif what.index in self.where:
                slot = what if type(what) is IntSlot else None
                nested.append((self.position[name], i, j, self.where[what.index], slot))
                continue
            else:
                value = self.constant(what)
            constants.append((name, i, j, value))
        _patch(self.kwargs, constants)
        return nested

    def texts(self) -> list[tuple[int, tuple[Any, ...]]]:
        """(position, composed text) of each text field."""
        return [(self.position[name], self.composed(text)) for name, text in self.template.texts]


def _thread_source(at: int | None, direct: list[Any], texts: list[Any], values: list[Any]) -> Any:
    """Where a line's thread id comes from (see LineTemplate.thread), the thread field being at position `at`."""
    return (
        next((("value", j, slot) for p, j, slot in direct if p == at), None)
        or next((("text", parts, None) for p, parts in texts if p == at), None)
        or ("constant", values[at] if at else None, None)
    )


class LineTemplate:
    """A Template bound to one SHAPE key: the volatile values that SHAPE leaves in the key (sizes, numbers)
    are the same for every line of the key, so they are put in and converted once; only the SHAPE values
    (time stamps, pointers, thread ids) come from each line."""

    __slots__ = (
        "cls",
        "count",
        "direct",
        "make",
        "memo",
        "nested",
        "texts",
        "thread",
        "uniform",
        "values",
        "varying",
        "verbatim",
        "warnings",
        "where",
    )

    def __init__(self, template: Template, where: dict[int, int], volatile: list[str]) -> None:
        """`where`: VOLATILE index -> SHAPE index of the key's first line; `volatile`: that line's values.
        Raises RecordError when a constant does not convert."""
        self.memo: dict[str, Any] = {}
        """By writer, the form it made of this key's rows (``reporters/json.ShapeTexts``; saved: ``saved.py``)."""
        self.cls = template.cls
        self.warnings = template.warnings
        self.count = len(where)
        names, self.make = _makers(template.cls)
        binding = _Binding(template, where, volatile, {name: i for i, name in enumerate(names)})
        direct, nested, texts = binding.direct(), binding.nested(), binding.texts()
        defaults = {f.name: f.default for f in dataclasses.fields(template.cls)}
        kwargs = binding.kwargs
        self.values: list[Any] = [kwargs[name] if name in kwargs else defaults[name] for name in names]
        if any(value is dataclasses.MISSING for value in self.values):
            raise RecordError("a required field is missing")  # the plain path reports it
        self.direct = tuple(direct)
        self.nested = tuple(nested)
        self.texts = tuple(texts)
        position = binding.position
        self.where = (position["file"], position["line"], position["end_line"])
        compared = [f.compare for f in dataclasses.fields(template.cls)]
        self.varying = sorted({entry[0] for entry in direct + nested + texts} | set(self.where))
        """Positions of the fields that differ between records of this key."""
        self.verbatim = all(entry[-1] is None for entry in direct + nested)
        """Every value that varies between records of this key is a line's SHAPE value as it stands (no
        conversion that could fail): such records can be written from pieces (see ShapedCall)."""
        self.uniform = self.verbatim and template.cls is GemmCall and not any(compared[p] for p in self.varying)
        """Every record of this key is equal (==) to every other: only fields outside the comparison vary."""
        self.thread: Any = _thread_source(position.get("thread"), direct, texts, self.values)
        """Where a line's thread id comes from: ("value", SHAPE index, IntSlot or None), ("text", parts, None)
        or ("constant", the thread id of every line, None)."""

    def __getstate__(self) -> dict[str, Any]:
        """Its fields less `make`, a function, found again from the record class (``saved.py``)."""
        return {name: getattr(self, name) for name in self.__slots__ if name != "make"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)
        self.make = _makers(self.cls)[1]

    def after(self, count: int) -> LineTemplate:
        """This template for lines whose record follows `count` SHAPE values of other text (a CI runner's time
        stamp before every line): the same record, its values taken from the whole line's, those of the text
        before it left out. The forms writers made of its rows are not carried over (they are made again)."""
        shifted = copy.copy(self)
        shifted.memo = {}
        shifted.count = self.count + count

        def moved(parts: Any) -> Any:
            return tuple(part + count if type(part) is int else part for part in parts)

        shifted.direct = tuple((position, j + count, slot) for position, j, slot in self.direct)
        shifted.nested = tuple(
            (position, i, k, moved(j) if type(j) is tuple else j + count, slot)
            for position, i, k, j, slot in self.nested
        )
        shifted.texts = tuple((position, moved(parts)) for position, parts in self.texts)
        kind, where, slot = self.thread
        if kind == "value":
            shifted.thread = (kind, where + count, slot)
        elif kind == "text":
            shifted.thread = (kind, moved(where), slot)
        return shifted

    @classmethod
    def bind(cls, template: Template, text: str) -> LineTemplate | None:
        """The template for lines of `text`'s SHAPE key, or None when it cannot be bound (a constant that
        does not convert: every line of the key then goes the plain way and reports it)."""
        volatile = list(VOLATILE.finditer(text))
        index = {m.span(1): i for i, m in enumerate(volatile)}
        where = {}
        for j, match in enumerate(SHAPE.finditer(text)):
            i = index.get(match.span(1))
            if i is None:
                return None
            where[i] = j
        # The key holds each SHAPE value's kind, so every line of it has a pointer, time stamp or thread id
        # where its first line had one: what a build step asked of a value's kind holds for all.
        try:
            return cls(template, where, [m.group(1) for m in volatile])
        except RecordError:
            return None

    def thread_of(self, values: list[str]) -> Any:
        """The thread id of a line of this key, from its SHAPE values."""
        kind, where, slot = self.thread
        if kind == "value":
            return values[where] if slot is None else slot.convert(values[where])
        if kind == "text":
            return "".join(part if type(part) is str else values[part] for part in where)
        return where

    def instantiate(self, values: list[str], path: str, line: int, end_line: int) -> Record | None:
        """A record of this key with the line's SHAPE values (None when they do not fit the key)."""
        fields = self.fields(values, path, line, end_line)
        return None if fields is None else self.make(fields)

    def fields(self, values: list[str], path: str, line: int, end_line: int) -> list[Any] | None:
        """The field values, in field order, of a record of this key (None when the line's SHAPE values do
        not fit the key, or one does not convert: the plain path then reports it)."""
        if len(values) != self.count:
            return None
        try:
            return self.build_fields(values, path, line, end_line)
        except RecordError:
            return None

    same_call: ClassVar[bool] = True
    """Records of one key are one call: only pointers, time stamps, thread ids and places differ."""
    numbers: ClassVar[frozenset[int]] = frozenset()
    """A ShapedCall's values that its record holds as integers: none (only verbatim templates make ShapedCalls)."""

    def build_fields(self, values: list[Any], path: str, line: Any, end_line: Any, convert: bool = True) -> list[Any]:
        """The record's field values, in field order (`convert` False: the values put in as they are)."""
        fields = self.values.copy()
        at_file, at_line, at_end = self.where
        fields[at_file] = path
        fields[at_line] = line
        fields[at_end] = end_line
        for position, j, slot in self.direct:
            fields[position] = values[j] if slot is None or not convert else slot.convert(values[j])
        for position, parts in self.texts:
            fields[position] = "".join(part if type(part) is str else values[part] for part in parts)
        if self.nested:
            patched: dict[int, list[Any]] = {}
            for position, i, k, j, slot in self.nested:
                items = patched.get(position)
                if items is None:
                    items = patched[position] = [list(p) for p in fields[position]]
                if type(j) is tuple:  # a text composed of constant pieces and the line's values
                    items[i][k] = "".join(part if type(part) is str else values[part] for part in j)
                else:
                    items[i][k] = values[j] if slot is None or not convert else slot.convert(values[j])
            for position, items in patched.items():
                fields[position] = tuple(tuple(p) for p in items)
        return fields


def _makers(cls: type) -> tuple[tuple[str, ...], Any]:
    """(field names, make) of records.record_maker, make in C where the extension is in use."""
    return _layout(cls, _c.speedups)[:2]


@functools.cache
def _layout(cls: type, speedups: Any) -> tuple[tuple[str, ...], Any, dict[str, int], dict[str, Any]]:
    """(field names, make, each name's position, each field's default) of a record class (make: records.
    record_maker's, in C where the extension is in use); what every template of the class plans with."""
    names, make = record_maker(cls)
    if speedups is not None:
        make = functools.partial(speedups.make, speedups.maker(cls, names))
    return names, make, {name: i for i, name in enumerate(names)}, {f.name: f.default for f in dataclasses.fields(cls)}


@functools.cache
def _mover(cls: type, speedups: Any) -> tuple[Any, int, int, Any]:
    names, make = _layout(cls, speedups)[:2]
    return operator.attrgetter(*names), names.index("line"), names.index("end_line"), make


def moved_record(record: Any, offset: int) -> Any:
    """`record` (a record dataclass with `line` and `end_line`) `offset` lines further down: what
    ``dataclasses.replace`` gives, made as a template makes its records, without a call of __init__ per field (a
    run of lines made again moves its records; see blaslog.parse._recall)."""
    cls: type = type(record)
    get, line, end_line, make = _mover(cls, _c.speedups)
    values = list(get(record))
    values[line] += offset
    values[end_line] += offset
    return make(values)


UNCACHEABLE = object()
"""Cache entry of a shape whose records must be built from their own text every time."""

FALLBACK = object()
"""How a record was read (``ShapeCache.parse``) when the dialect's looser reading (:meth:`LogFormat.fallback`)
read it: its shape is one the grammar's main rule rejects. With the shape cache on, later lines of the shape
are counted without parsing them when their records are not wanted (``parse`` without events)."""


_DECIMAL = re.compile(r"[-+]?[0-9]+", re.ASCII)
_HEX = re.compile(r"[-+]?0[xX][0-9a-fA-F]+", re.ASCII)


def to_int(value: Any, what: str, *, low: int | None = 0, high: int = 2**63 - 1, hex: bool = False) -> Any:
    """An integer field, with a clear error for non-numbers and out-of-range values.

    Logs print ASCII decimal digits (an optional sign first); `hex` also takes `0x` hex, for the fields a library
    prints in hex. Other scripts' digits, `_` separators and hex where the library prints decimal are errors,
    though Python's int() would take them.

    A volatile value becomes an IntSlot, converted (and checked) each time its template is used.
    """
    if isinstance(value, Slot):
        if isinstance(value, IntSlot) or value.kind != "num":  # a pointer or time stamp: computed with
            raise Volatile(value)
        return IntSlot(value, what, low, high, hex)
    text = value.strip() if isinstance(value, str) else None
    match = _DECIMAL.fullmatch(text) if text is not None else None
    if match is None and hex and text is not None:
        match = _HEX.fullmatch(text)
    if match is None:
        # int() would also take `٢١` (other scripts' digits), `1_0` and, with base 0, `0x10`: no library prints those
        spelled = "a decimal or 0x hex integer" if hex else "a decimal integer"
        error = RecordError(f"{what}={value!r} is not {spelled}")
        error.where = (what, text)
        raise error
    number = int(text, 16 if match.re is _HEX else 10)  # type: ignore[arg-type]
    if (low is not None and number < low) or number > high:
        raise RecordError(f"{what}={value} is out of range")
    return number
