"""Templates made from a grammar's tree: a dialect's build step run with Slots where a shape's volatile values go
(and its words, for a family of shapes), what it returns with the slots where it put them being the template.

The template classes are ``templates.py``'s; the shape cache (``cache.py``) asks for templates here.
"""

from __future__ import annotations

from typing import Any

import blaslog._lark as _lark
from blaslog._fast.shapes import VOLATILE, kind_of
from blaslog._fast.templates import UNCACHEABLE, IntSlot, Slot, Template, Text, Volatile


def _rebuilds(fmt: Any, template: Template, tree: Any, values: list[str]) -> bool:
    """Whether `template` gives back, with `values` put in, the record a fresh build of the `tree` gives. A build
    step can tell a Text (text composed with volatile values) or a word's Slot from a str without computing with
    it (`isinstance(value, str)`): it then takes another branch, silently, which a template holding Texts or word
    slots is checked for on its first record."""
    try:
        fresh, warnings = fmt.record(tree, "", 1, 1)
        again = template.instantiate(values, "", 1, 1)
    except Exception:
        return False
    same: bool = warnings == template.warnings and fresh.to_dict() == again.to_dict()
    return same


Words = tuple[tuple[int, int] | None, ...]
"""Spans of a record's text that are words of its dialect (``LogFormat.words``) taken as slots; None for one kept."""


def template_of(fmt: Any, tree: Any, text: str) -> Any:
    """The Template of `text`'s VOLATILE shape from its tree (`fmt`'s grammar read it), or UNCACHEABLE when the
    dialect's build step computes with a volatile value (or fails: the plain path then reports why)."""
    made = family_template(fmt, tree, text, ())
    return UNCACHEABLE if isinstance(made, int) else made


def family_template(fmt: Any, tree: Any, text: str, words: Words) -> Any:
    """The Template of `text`'s VOLATILE shape with its `words` as slots too, numbered after VOLATILE's values:
    the template of every shape that differs from this one only in those words (see ``ShapeCache``).
    UNCACHEABLE when `fmt`'s build step computes with a volatile value, or the index in `words` of a word it
    computes with (which must then stay in the shape).

    The build step runs on the tree with Slots where the values go (``fmt.transformer(spans)`` puts them in
    the leaves); what it returns, with the slots where it put them, is the template."""
    spans, values = _slots(text, words)
    first = len(values) - len(words)
    try:
        cls, kwargs, warnings = fmt.build(fmt.transformer(spans).transform(tree))
    except Exception as exc:
        # let the plain path raise the real error, or build what needs the real values
        if isinstance(exc, _lark.VisitError):
            exc = exc.orig_exc
        if isinstance(exc, Volatile) and exc.slot.index >= first:
            return exc.slot.index - first
        return UNCACHEABLE
    placed = _placed(kwargs)
    if placed is None:
        return UNCACHEABLE
    direct, nested, texts = placed
    # A volatile value the record does not hold (Bdesc rows, say, implied by k and n) is not needed to
    # rebuild it; one that a build step computed with raised TypeError above. Either way the template
    # reproduces what a fresh build of the next record of this shape would give.
    template = Template(cls, kwargs, warnings, tuple(direct), tuple(nested), tuple(texts))
    holds_text = bool(texts) or any(type(entry[3]) is Text for entry in nested)
    if (holds_text or any(words)) and not _rebuilds(fmt, template, tree, values):
        return UNCACHEABLE
    return template


def _slots(text: str, words: Words) -> tuple[dict[tuple[int, int], Slot], list[str]]:
    """(span -> Slot, the values) of `text`'s VOLATILE values and then of its `words`."""
    spans: dict[tuple[int, int], Slot] = {}
    values = []
    for index, match in enumerate(VOLATILE.finditer(text)):
        value = match.group(1)
        spans[match.span(1)] = Slot(index, kind_of(value))
        values.append(value)
    first = len(values)
    for index, span in enumerate(words):
        if span is not None:
            spans[span] = Slot(first + index, "word")
        values.append("" if span is None else text[span[0] : span[1]])
    return spans, values


_Placed = tuple[list[tuple[str, Slot]], list[tuple[str, int, int, Slot | Text]], list[tuple[str, Text]]]


def _placed(kwargs: dict[str, Any]) -> _Placed | None:
    """Where a build step put the slots in its keyword arguments: (field, Slot) of the fields that are one,
    (field, i, j, Slot or Text) of those inside a tuple of pairs, (field, Text) of composed texts; None when a
    slot is where a template cannot put a value back (a Text holding an integer, a slot in a tuple not of pairs,
    a value of another type)."""
    direct: list[tuple[str, Slot]] = []
    nested: list[tuple[str, int, int, Slot | Text]] = []
    texts: list[tuple[str, Text]] = []
    for name, value in kwargs.items():
        if isinstance(value, Slot):
            direct.append((name, value))
        elif isinstance(value, Text):
            if _holds_integer(value):
                return None
            texts.append((name, value))
        elif isinstance(value, tuple):
            if not _place_pairs(name, value, nested):
                return None
        elif not _plain(value):
            return None
    return direct, nested, texts


def _place_pairs(name: str, value: tuple[Any, ...], nested: list[tuple[str, int, int, Slot | Text]]) -> bool:
    """Add the slots of field `name`, a tuple of pairs, to `nested`; False when one cannot be put back."""
    for i, item in enumerate(value):
        if not isinstance(item, tuple):
            if isinstance(item, Slot) or not _plain(item):
                return False
            continue
        for j, sub in enumerate(item):
            if isinstance(sub, Slot):
                nested.append((name, i, j, sub))
            elif isinstance(sub, Text):  # free text holding volatile values (`GCC 8.5.0 20210514`)
                if _holds_integer(sub):
                    return False
                nested.append((name, i, j, sub))
            elif not _plain(sub):
                return False
    return True


def _holds_integer(text: Text) -> bool:
    return any(type(part) is IntSlot for part in text.parts)


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


__all__ = ["Words", "family_template", "template_of"]
