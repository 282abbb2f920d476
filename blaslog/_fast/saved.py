"""Line shapes learnt by earlier processes: the templates the grammars made, kept in the user's cache folder.

A log's first megabyte costs more than any later one: each record shape seen for the first time runs its
grammar and has its template made (about a millisecond each; the benchmark's corpus of public logs holds some
390 shapes in its first megabyte, a third of the time it takes to read all 100 MB of it). An investigation
reads the same program's logs again and again (`summary`, `diff`, `check`, the test run again), and each
process used to learn the same shapes anew. Now the templates a process learns are saved when it ends, and a
later process starts with them: the records are the same (a template is a function of its shape and of the
code that made it, the rule the shape cache of one process rests on already), made without the grammar.

What is saved: per dialect shipped with blaslog (by name; a dialect registered by a user's code is not, as its
code is no part of the fingerprint below), each VOLATILE shape's Template and the families of shapes (see
``ShapeCache._derive``), at most :data:`SAVED` templates, the newest kept; and as many LineTemplates, each bound to
a line's SHAPE key (a function of the key and its dialect as a Template is of its shape). Both hold the forms that
the JSON writers made of their rows (``memo``: a later process neither binds them nor makes the forms again,
which cost as much as the templates' grammar did; a form's values are checked against the count a template's
key, or a line template, gives). And per set of dialects read, the SHAPE keys of lines that began one-line
records, with their dialect and whether the record is free text with nothing to build (``ShapeCache.known`` and
its shortcuts: a later process counts even the first line of such a key without a visit, as the process that
learnt it counted its later ones). A shape found uncacheable is not saved (a value out of range can make one
so); instead, the texts of records that no template serves (a shape whose build step computes with a volatile
value, a record its build step rejects with a RecordError, free text only the dialect's looser rule reads: a
tuning file's header, a bench line cut short, a library's version note; a record the grammar itself rejects, with
the grammar's error as ``describe_error`` put it) are saved with what was read of them, the first :data:`TEXTS`
(a record is a function of its text and its dialect, the rule the cache of one process rests on for such texts
already, ``ShapeCache._record``). A log read again then runs no grammar, and its process never imports lark (some
40 ms: ``blaslog/_lark.py``), unless it holds an edited record or a cuBLAS record cut at the input's end: the
partial or truncated record made of such text is read by the grammar each time.

The file is named after a fingerprint of the code that makes templates (every module, grammar and extension of
the package: names, sizes, modification and change times; Python's version and lark's installed module, found
without importing it; the C extension in use or not), so code that changed never reads shapes that older code
learnt. Saving keeps the :data:`FILES` newest files of other fingerprints (other environments that
share the folder) and removes the rest. The workers of a process pool save too, when they end; the last file
written wins.

Trust: the file is read only when the user's cache folder and the file are private (``_usercache.py``), and
by an unpickler that names nothing but the template classes and the record classes, so that no other class or
function can be called; what it gives is checked for the types a saved file holds. Anything wrong with the
file (broken, foreign, from other code) only costs learning the shapes again. The saved texts are the parts
of log records that are no volatile value (function names, types, messages): they stay in that private folder.
``BLASLOG_SAVED_SHAPES=0`` (or ``BLASLOG_CACHE_DIR=off``, or the shape cache switched off) reads and saves none;
``blaslog`` then learns every shape in every process, as before.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import enum
import functools
import hashlib
import importlib.util
import io
import os
import pickle
import sys
import time
from pathlib import Path
from typing import Any

import blaslog._usercache as usercache
from blaslog._fast import _c
from blaslog._fast.errors import RecordCut, RecordError, Rejected
from blaslog._fast.shapes import keep
from blaslog._fast.templates import (
    UNCACHEABLE,
    IntSlot,
    LineTemplate,
    Slot,
    Template,
    Text,
)

SAVED = 2048
"""Most templates kept in the file, a family's counted one by one (a training log has a few hundred shapes; a
file of every shape ever seen would grow without end, and cost its reading in every process)."""

MAX_BYTES = 16 << 20
"""Largest file read (2048 templates of long records)."""

FILES = 8
"""Most files of shapes kept in the folder (one per fingerprint: environments that share the folder)."""

_PREFIX = "shapes-"

TEXTS = 256
"""Most records kept by their text (see :attr:`Store.texts`): a log holds a few such texts (tuning files' headers,
a bench's command lines, a library's version notes), which come again in every process."""

TEXT = 4096
"""Longest text of a record kept by its text."""

Read = tuple[Any, tuple[str, ...], bool]
"""A record read from a text without a template, as saved: the record (its place is the first process's), the
RecordError its build step raised or the grammar's rejection of the text (see :func:`failure`), its warnings, and
whether the dialect's looser rule read it (free text)."""

Failure = tuple[bool, str, int, "tuple[str, str | None] | None"] | tuple[str, int]
"""A RecordError as saved: whether it is a RecordCut, its message, column and `where`; or the grammar's rejection
of the text (:class:`Rejected`): its reason and column."""


def failure(exc: RecordError | Rejected) -> Failure:
    """`exc` as saved (see :data:`Failure`)."""
    if isinstance(exc, Rejected):
        return exc.reason, exc.column
    return isinstance(exc, RecordCut), str(exc), exc.column, exc.where


def failed(saved: Failure) -> RecordError | Rejected:
    """The RecordError or rejection saved as `saved`."""
    if len(saved) == 2:
        return Rejected(*saved)
    cut, message, column, where = saved
    exc = (RecordCut if cut else RecordError)(message, column)
    exc.where = where
    return exc


Family = tuple[int, tuple[int, ...], dict[tuple[str, ...], Template]]
"""A family of shapes as saved: how many VOLATILE values its shapes have, the words its build step computes with,
and its templates by the values of those words (``cache._Family``'s fields)."""


class Store:
    """The shapes this process knows from earlier processes and has learnt itself, by dialect name."""

    def __init__(
        self,
        templates: dict[str, dict[str, Template]],
        families: dict[str, dict[Any, Family]],
        bound: dict[str, dict[str, LineTemplate]] | None = None,
        known: dict[tuple[str, ...], dict[str, tuple[str, bool]]] | None = None,
        texts: dict[str, dict[str, Read]] | None = None,
    ) -> None:
        self.templates = templates
        """Dialect name -> VOLATILE shape -> Template."""
        self.families = families
        """Dialect name -> a family's pieces -> the family (see :data:`Family`)."""
        self.bound: dict[str, dict[str, LineTemplate]] = bound if bound is not None else {}
        """Dialect name -> SHAPE key (of a one-line record, or its lines' keys joined) -> its LineTemplate."""
        self.known: dict[tuple[str, ...], dict[str, tuple[str, bool]]] = known if known is not None else {}
        """The dialects read (their names, in the sniffer's order) -> SHAPE key of a line that began a one-line
        record -> (its dialect's name, whether the record is free text with nothing to build: a line of it is
        counted without a visit when only GEMMs are wanted). Which dialect begins a record on a line depends on
        the dialects read, hence a table per set."""
        self.texts: dict[str, dict[str, Read]] = texts if texts is not None else {}
        """Dialect name -> the text of a record that no template serves (its build step computes with a volatile
        value, or rejects it with a RecordError), that only the dialect's looser rule reads (free text), or that
        the grammar rejects -> what was read of it (see :data:`Read`): a log read again then runs no grammar for
        it (nor imports lark: ``blaslog/_lark.py``). One budget (:data:`TEXTS`) for all of them: the first noted
        stay."""
        self.unsaved = 0
        """Notes taken since the file was last written (saved when the process ends, when there are any)."""
        self.memos = self._memos()
        """How many forms writers had made of the templates' rows when the file was last read or written (see
        ``LineTemplate.memo``): a writer makes them without a note, and more of them are saved too."""

    def _memos(self) -> int:
        lines = sum(len(line.memo) for table in self.bound.values() for line in table.values())
        return lines + sum(len(template.memo) for table in self.templates.values() for template in table.values())

    def changed(self) -> bool:
        """Whether the process learnt anything since the file was last read or written."""
        return bool(self.unsaved) or self._memos() != self.memos

    def templates_of(self, fmt: Any) -> dict[str, Any]:
        """A new table of `fmt`'s templates, holding those known (none for a dialect not shipped with blaslog)."""
        return dict(self.templates.get(fmt.name, ())) if _shipped(fmt) else {}

    def families_of(self, fmt: Any) -> dict[Any, Family]:
        """`fmt`'s families known (to be copied: a cache changes its own)."""
        return self.families.get(fmt.name, {}) if _shipped(fmt) else {}

    def template(self, fmt: Any, key: str, template: Any) -> None:
        """Note a template this process learnt with a grammar."""
        if template is not UNCACHEABLE and _shipped(fmt):
            keep(self.templates.setdefault(fmt.name, {}), key, template)
            self.unsaved += 1

    def bound_of(self, fmt: Any) -> dict[str, LineTemplate]:
        """A new table of `fmt`'s line templates, holding those known (none for a dialect not shipped)."""
        return dict(self.bound.get(fmt.name, ())) if _shipped(fmt) else {}

    def line_template(self, fmt: Any, key: str, template: LineTemplate) -> None:
        """Note a template this process bound to a SHAPE key."""
        if _shipped(fmt):
            keep(self.bound.setdefault(fmt.name, {}), key, template)
            self.unsaved += 1

    def known_of(self, dialects: tuple[Any, ...]) -> dict[str, tuple[str, bool]]:
        """The SHAPE keys known to begin one-line records when `dialects` (dialect objects, in the sniffer's
        order) are read (none where a dialect is not shipped with blaslog)."""
        return self.known.get(_names(dialects), {}) if all(map(_shipped, dialects)) else {}

    def known_key(self, dialects: tuple[Any, ...], key: str, fmt: Any, free: bool) -> None:
        """Note that a line of SHAPE key `key` began a one-line record of `fmt` (`free`: free text with nothing
        to build) when `dialects` are read."""
        if dialects and all(map(_shipped, dialects)):
            table = self.known.setdefault(_names(dialects), {})
            if table.get(key) != (fmt.name, free):
                keep(table, key, (fmt.name, free))
                self.unsaved += 1

    def text_of(self, fmt: Any, text: str) -> Read | None:
        """What an earlier process read of `text`, a record of `fmt` without a template, if it was noted."""
        table = self.texts.get(fmt.name)
        return None if table is None or not _shipped(fmt) else table.get(text)

    def read_text(self, fmt: Any, text: str, read: Read) -> None:
        """Note what was read of `text`, a record of `fmt` without a template, while fewer than :data:`TEXTS` are
        noted: the first ones stay (a log of more such texts, or of free text that changes from run to run, would
        otherwise have the file saved again by every process, never holding what the next one reads). A read that
        a saved file's check would refuse, or that pickle and the file's unpickler do not give back the same, is
        not noted: it would cost the whole file."""
        if not _shipped(fmt) or len(text) > TEXT or text in self.texts.get(fmt.name, ()):
            return
        if sum(map(len, self.texts.values())) >= TEXTS or not _is_read(text, read):
            return
        try:
            if _TemplateUnpickler(io.BytesIO(pickle.dumps(read, protocol=pickle.HIGHEST_PROTOCOL))).load() != read:
                return
        except Exception:
            return
        self.texts.setdefault(fmt.name, {})[text] = read
        self.unsaved += 1

    def family(self, fmt: Any, pieces: Any, family: Family | None) -> None:
        """Note what a family is now (None: its template cannot be made, which is not saved)."""
        if family is not None and _shipped(fmt):
            keep(self.families.setdefault(fmt.name, {}), pieces, family)
            self.unsaved += 1


def _shipped(fmt: Any) -> bool:
    return type(fmt).__module__.startswith("blaslog.formats.")


def _names(dialects: tuple[Any, ...]) -> tuple[str, ...]:
    return tuple(fmt.name for fmt in dialects)


_STORE: list[Store | None] = []


def store() -> Store | None:
    """This process's store of shapes (read from the cache folder when first asked for), or None where shapes
    are not saved."""
    if not _STORE:
        _STORE.append(_load() if switched_on() else None)
    return _STORE[0]


def switched_on() -> bool:
    """Whether shapes are read and saved (BLASLOG_SAVED_SHAPES not 0, the shape cache on, a cache folder)."""
    return _c.shape_cache and os.environ.get("BLASLOG_SAVED_SHAPES", "1") != "0" and usercache.folder() is not None


def forget() -> None:
    """Drop this process's store (the next :func:`store` reads the file again): for tests."""
    _STORE.clear()


def at_worker_exit() -> None:
    """Save what this process learnt when it ends as a worker of a process pool (which ends without running the
    atexit functions that :func:`save` is registered with)."""
    from multiprocessing import util

    util.Finalize(None, save, exitpriority=10)


def _load() -> Store | None:
    name = _name()
    if name is None:
        return None
    found = None
    with usercache.opened() as cache:
        if cache is not None:
            data = usercache.read(cache, name, MAX_BYTES)
            if data is not None:
                try:
                    found = _checked(_TemplateUnpickler(io.BytesIO(data)).load())
                except Exception:  # a broken or foreign file (any error the unpickler raises): learnt again
                    found = None
    atexit.register(save)
    return found or Store({}, {})


def save() -> bool:
    """Save what this process learnt (run when it ends); False where nothing was saved."""
    found = _STORE[0] if _STORE else None
    name = _name()
    if found is None or name is None or not found.changed():
        return False
    try:
        data = pickle.dumps((_VERSION, *_newest(found)), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # a value pickle cannot hold (a build step's own object): nothing saved, as without a cache
        return False
    if len(data) > MAX_BYTES:
        return False
    with usercache.opened() as cache:
        if cache is None or not usercache.write(cache, name, data):
            return False
        found.unsaved, found.memos = 0, found._memos()
        _tidy(cache, name)
    return True


_VERSION = 7
"""The layout of a saved file."""


def _newest(
    found: Store,
) -> tuple[
    dict[str, dict[str, Template]],
    dict[str, dict[Any, Family]],
    dict[str, dict[str, LineTemplate]],
    dict[tuple[str, ...], dict[str, tuple[str, bool]]],
    dict[str, dict[str, Read]],
]:
    """The store's tables as saved: at most SAVED templates (the families first, then the templates last noted),
    at most SAVED line templates (the last noted), at most SAVED known keys per set of dialects (the last
    noted), and the texts (at most TEXTS, the first noted)."""
    entries: list[tuple[int, str, Any, Any]] = [
        (0, dialect, key, value) for dialect, table in found.templates.items() for key, value in table.items()
    ]
    entries += [(1, dialect, key, value) for dialect, table in found.families.items() for key, value in table.items()]
    total = 0
    kept = []
    for entry in reversed(entries):
        size = 1 if entry[0] == 0 else max(len(entry[3][2]), 1)
        if total + size <= SAVED:
            total += size
            kept.append(entry)
    templates: dict[str, dict[str, Template]] = {}
    families: dict[str, dict[Any, Family]] = {}
    for kind, dialect, key, value in reversed(kept):
        (families if kind else templates).setdefault(dialect, {})[key] = value
    lines = [(dialect, key, value) for dialect, table in found.bound.items() for key, value in table.items()]
    bound: dict[str, dict[str, LineTemplate]] = {}
    for dialect, key, value in lines[-SAVED:]:
        bound.setdefault(dialect, {})[key] = value
    known = {dialects: dict(list(table.items())[-SAVED:]) for dialects, table in found.known.items()}
    return templates, families, bound, known, found.texts  # at most TEXTS: read_text notes no more


def _tidy(cache: int, name: str) -> None:
    """Keep the FILES newest files of shapes (`name` among them); remove the rest, and temporary files that a
    process killed while writing left an hour ago or more."""
    files = []
    for other in os.listdir(cache):
        with contextlib.suppress(OSError):
            info = os.stat(other, dir_fd=cache, follow_symlinks=False)
            if other.startswith(_PREFIX) and other.endswith(".pickle") and other != name:
                files.append((info.st_mtime, other))
            elif other.startswith("." + _PREFIX) and other.endswith(".tmp") and info.st_mtime < time.time() - 3600:
                os.unlink(other, dir_fd=cache)
    for _, other in sorted(files, reverse=True)[FILES - 1 :]:
        with contextlib.suppress(OSError):
            os.unlink(other, dir_fd=cache)


def _checked(loaded: Any) -> Store | None:
    """The Store of what a file held, or None where it is not what :func:`save` writes."""
    if not (isinstance(loaded, tuple) and len(loaded) == 6 and type(loaded[0]) is int and loaded[0] == _VERSION):
        return None
    _, templates, families, bound, known, texts = loaded
    if not (
        _table(templates, str, lambda key, value: _is_template(value, key.count("\x00")))
        and _table(families, tuple, lambda _key, value: _is_family(value))
        and _table(bound, str, lambda _key, value: _is_line_template(value))
        and _table(known, str, lambda _key, value: _is_known(value), _is_names)
        and _table(texts, str, _is_read)
        and sum(map(len, texts.values())) <= TEXTS
    ):
        return None
    return Store(templates, families, bound, known, texts)


def _table(tables: Any, key: type, valid: Any, outer: Any = lambda name: type(name) is str) -> bool:
    return type(tables) is dict and all(
        outer(dialect) and type(table) is dict and all(type(k) is key and valid(k, value) for k, value in table.items())
        for dialect, table in tables.items()
    )


def _is_names(names: Any) -> bool:
    return type(names) is tuple and all(type(name) is str for name in names)


def _is_known(value: Any) -> bool:
    return type(value) is tuple and len(value) == 2 and type(value[0]) is str and type(value[1]) is bool


def _is_read(text: Any, value: Any) -> bool:
    """Whether `value` is a :data:`Read` of `text`: a GemmCall or Event whose every field holds a value of its
    declared type (see :func:`_is_record`), or a failure whose column lies in the text; warnings of str."""
    return (
        type(text) is str
        and len(text) <= TEXT
        and type(value) is tuple
        and len(value) == 3
        and (_is_record(value[0]) or _is_failure(value[0], len(text)))
        and type(value[1]) is tuple
        and all(type(warning) is str for warning in value[1])
        and type(value[2]) is bool
    )


def _is_failure(value: Any, length: int) -> bool:
    if type(value) is tuple and len(value) == 2:  # a rejection: its reason and column
        return type(value[0]) is str and type(value[1]) is int and 0 <= value[1] <= length + 1
    if not (type(value) is tuple and len(value) == 4 and type(value[0]) is bool and type(value[1]) is str):
        return False
    column, where = value[2], value[3]
    return (
        type(column) is int
        and 0 <= column <= length + 1
        and (
            where is None
            or (type(where) is tuple and len(where) == 2 and type(where[0]) is str and type(where[1]) in (str, NONE))
        )
    )


NONE = type(None)

_FIELD_TYPES: dict[str, Any] = {
    "str": lambda value: type(value) is str,
    "int": lambda value: type(value) is int,
    "bool": lambda value: type(value) is bool,
    "Pairs": lambda value: (
        type(value) is tuple
        and all(type(pair) is tuple and len(pair) == 2 and type(pair[0]) is type(pair[1]) is str for pair in value)
    ),
}
"""The checks of the types a record's fields are declared with (``blaslog.records``; `X | None` allows None)."""


def _is_record(record: Any) -> bool:
    """Whether `record` is a GemmCall or an Event (what a dialect reads) whose every field holds a value of its
    declared type (a field of a type not in :data:`_FIELD_TYPES` refuses the record: a new one is added there)."""
    cls: type = type(record)
    if not (_is_record_class(cls) and cls.__name__ in ("GemmCall", "Event")):
        return False
    for name, declared in _declared(cls):
        value = getattr(record, name, _MISSING)
        if value is _MISSING or not ((value is None and declared.endswith(" | None")) or _typed(declared, value)):
            return False
    return True


_MISSING = object()


def _typed(declared: str, value: Any) -> bool:
    check = _FIELD_TYPES.get(declared.removesuffix(" | None"))
    return check is not None and bool(check(value))


@functools.cache
def _declared(cls: type) -> tuple[tuple[str, str], ...]:
    return tuple((field.name, str(field.type)) for field in dataclasses.fields(cls))


def _is_template(value: Any, values: int) -> bool:
    """Whether `value` is a Template whose memo holds forms of rows of `values` volatile values (a VOLATILE key's
    NULs, a family's count)."""
    if type(value) is not Template:
        return False
    return (
        _is_record_class(getattr(value, "cls", None))
        and type(getattr(value, "kwargs", None)) is dict
        and all(type(getattr(value, name, None)) is tuple for name in ("warnings", "direct", "nested", "texts"))
        and _is_memo(getattr(value, "memo", None), values + 2)
    )


def _is_line_template(value: Any) -> bool:
    """Whether `value` is a LineTemplate whose fields have the types its methods read (what a saved file could
    hold, by the unpickler's classes, is checked no further: the values of records)."""
    if type(value) is not LineTemplate:
        return False
    cls: Any = getattr(value, "cls", None)
    if not (_is_record_class(cls) and all(hasattr(value, name) for name in LineTemplate.__slots__)):
        return False
    where, thread, values = value.where, value.thread, value.values
    return (
        type(value.count) is int
        and type(values) is list
        and len(values) == _field_count(cls)
        and type(where) is tuple
        and len(where) == 3
        and all(type(at) is int and 0 <= at < len(values) for at in where)
        and all(type(getattr(value, name)) is tuple for name in ("direct", "nested", "texts", "warnings"))
        and all(_fits(entry, values, value.count) for entry in value.direct + value.nested + value.texts)
        and type(value.varying) is list
        and type(value.verbatim) is bool
        and type(value.uniform) is bool
        and type(thread) is tuple
        and len(thread) == 3
        and _is_memo(value.memo, value.count + 2)
    )


def _fits(entry: Any, fields: list[Any], values: int) -> bool:
    """Whether an entry of a LineTemplate's `direct` (position, j, slot), `nested` (position, i, k, j, slot) or
    `texts` (position, parts) puts a line's values (j: below `values`) into one of its `fields` (for `nested`,
    into item k of pair i of a field of pairs)."""
    if not (type(entry) is tuple and len(entry) in (2, 3, 5) and type(entry[0]) is int and 0 <= entry[0] < len(fields)):
        return False
    if len(entry) == 2:
        return _parts(entry[1], values)
    if len(entry) == 5:
        pairs, i, k = fields[entry[0]], entry[1], entry[2]
        if not (type(pairs) is tuple and type(i) is int and type(k) is int and 0 <= i < len(pairs)):
            return False
        if not (type(pairs[i]) is tuple and 0 <= k < len(pairs[i])):
            return False
    j = entry[-2]
    return (type(j) is int and 0 <= j < values) or _parts(j, values)


def _parts(parts: Any, values: int) -> bool:
    """Whether `parts` is a text's pieces: strs and the indices of values (below `values`)."""
    return type(parts) is tuple and all(
        type(part) is str or (type(part) is int and 0 <= part < values) for part in parts
    )


@functools.cache
def _field_count(cls: type) -> int:
    return len(dataclasses.fields(cls))


def _is_record_class(cls: Any) -> bool:
    return isinstance(cls, type) and cls.__module__ == "blaslog.records" and dataclasses.is_dataclass(cls)


def _is_memo(memo: Any, values: int) -> bool:
    """Whether `memo` is what writers keep in a line template's memo: by writer, [form, order, verdict] (see
    ``reporters/json.ShapeTexts._make``), `form` taking one str for each entry of `order`, each the index of one
    of the `values` a row is written from."""
    return type(memo) is dict and all(
        type(writer) is str
        and type(form) is list
        and len(form) == 3
        and type(form[0]) is str
        and type(form[1]) is tuple
        and all(type(j) is int and 0 <= j < values for j in form[1])
        and type(form[2]) is bool
        and _takes(form[0], len(form[1]))
        for writer, form in memo.items()
    )


def _takes(form: str, count: int) -> bool:
    """Whether %-format `form` takes `count` strs."""
    try:
        form % (("",) * count)
    except (TypeError, ValueError):
        return False
    return True


def _is_family(value: Any) -> bool:
    return (
        type(value) is tuple
        and len(value) == 3
        and type(value[0]) is int
        and type(value[1]) is tuple
        and all(type(word) is int for word in value[1])
        and type(value[2]) is dict
        and all(type(words) is tuple and _is_template(made, value[0]) for words, made in value[2].items())
    )


def _name() -> str | None:
    fingerprint = _fingerprint()
    return None if fingerprint is None else f"{_PREFIX}{fingerprint}.pickle"


_FINGERPRINT: list[str | None] = []


def _fingerprint() -> str | None:
    """The fingerprint of the code that makes templates (see the module's text); None where its files cannot all
    be read (shapes are then not saved)."""
    if not _FINGERPRINT:
        package = Path(__file__).resolve().parents[1]
        digest = hashlib.sha256(f"{sys.version}\0{_lark_version()}\0{_c.speedups is None}".encode())
        try:
            # the package, and the grammars beside it in a source checkout (in an installed package they are in it)
            for folder in (package, package.parent / "grammars"):
                for root, dirs, files in os.walk(folder, onerror=_raise):
                    dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                    for name in sorted(files):
                        if name.endswith((".py", ".lark", ".so", ".pyd")):
                            info = os.stat(os.path.join(root, name))
                            stamp = f"{root}/{name}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ctime_ns}\0"
                            digest.update(stamp.encode())
            _FINGERPRINT.append(digest.hexdigest()[:40])
        except OSError:
            _FINGERPRINT.append(None)
    return _FINGERPRINT[0]


def _raise(error: OSError) -> None:
    if error.filename and Path(error.filename).name != "grammars":  # no grammars beside an installed package
        raise error


def _lark_version() -> str:
    """lark's installed module, by its path, size and times: installing another lark (or the same again) writes
    it anew. Importing lark to read its version would cost a process that runs no grammar some 40 ms (see
    ``blaslog/_lark.py``); where lark is no file of its own (in a zip), its version is read so."""
    spec = importlib.util.find_spec("lark")
    try:
        info = os.stat(spec.origin) if spec is not None and spec.origin else None
    except OSError:
        info = None
    if spec is None or info is None:
        import lark

        return str(lark.__version__)
    return f"{spec.origin}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ctime_ns}"


_TEMPLATES = {cls.__name__: cls for cls in (Template, LineTemplate, Slot, IntSlot, Text)}


class _TemplateUnpickler(pickle.Unpickler):
    """An unpickler that names only the classes of templates (``templates.py``) and the record classes and enums
    of ``blaslog.records``: a file naming any other class or function is refused."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "blaslog._fast.templates" and name in _TEMPLATES:
            return _TEMPLATES[name]
        found = getattr(sys.modules.get("blaslog.records"), name, None) if module == "blaslog.records" else None
        if isinstance(found, type) and (dataclasses.is_dataclass(found) or issubclass(found, enum.Enum)):
            return found
        raise pickle.UnpicklingError(f"saved shapes name {module}.{name}: only template and record classes")


__all__ = ["FILES", "SAVED", "Family", "Store", "at_worker_exit", "forget", "save", "store", "switched_on"]
