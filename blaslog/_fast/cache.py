"""The shape cache of one input: everything the parser learns about line shapes, in one room.

The grammar runs once per distinct record *shape* (see ``shapes.py`` and ``templates.Template``). What the
parser of an input learns about shapes lives here, and the parser uses it through a narrow interface:

* look up: :meth:`ShapeCache.dialect` (which dialect begins a record on lines of a SHAPE key),
  :meth:`ShapeCache.line_template` (the template bound to a key), and the `shortcuts` table that the
  parser's classifying pass reads (lines counted without a visit);
* parse through it: :meth:`ShapeCache.parse` (a record from its shape's template, or from the grammar, which
  then teaches the cache the shape);
* learn: :meth:`ShapeCache.learn` (after a one-line record was parsed whole), :meth:`ShapeCache.learn_record`
  (a record of several lines) and :meth:`ShapeCache.shortcut`.

A dialect whose shapes hold enum words (``LogFormat.words``: `R_16F`, `MATMUL_TILE_128x128`) has them grouped
in *families*, shapes that differ only in those words: the grammar runs for the first shape of a family, whose
template is made with the words as slots too, and the family's other shapes get their template from it
(:meth:`ShapeCache._derive`), so that a log of ever new tiles and types does not run the grammar per shape.

Dialects declare their grammar and build step and hold no cache state. :attr:`ShapeCache.stats` counts, the
same way on every run, the records served from a learnt shape and the texts sent through a grammar, so that
a build step that makes shapes uncacheable shows as a rise in grammar runs (``tests/test_cache_counts.py``).
With the cache switched off (BLASLOG_SHAPE_CACHE=0) every record goes through the grammar and the pipeline
gives the same records.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Protocol

import blaslog._lark as _lark
from blaslog._fast import _c, saved
from blaslog._fast.errors import RecordError, Rejected, rejected
from blaslog._fast.lazy import ShapedCall
from blaslog._fast.making import family_template, template_of
from blaslog._fast.shapes import KEPT, Shaper, keep, mask
from blaslog._fast.templates import FALLBACK, UNCACHEABLE, LineTemplate, Template
from blaslog.records import Event, Record

TREES = 256
"""Most grammar results a ShapeCache keeps by their text (see ``ShapeCache._grammar``)."""

TREE_TEXT = 4096
"""Longest record text whose grammar result is kept."""


class Dialect(Protocol):
    """What the cache asks of a log dialect (``formats._base.LogFormat``): it reads its grammar and build step
    and holds no cache state."""

    @property
    def name(self) -> str: ...
    @property
    def words(self) -> re.Pattern[str] | None: ...
    @property
    def fallback_rule(self) -> str | None: ...
    def parser(self, rule: str | None = None) -> Any: ...
    def transformer(self, spans: dict[tuple[int, int], Any]) -> Any: ...
    def build(self, generic: Any) -> tuple[type, dict[str, Any], tuple[str, ...]]: ...
    def record(self, tree: Any, path: str, line: int, end_line: int) -> tuple[Record, tuple[str, ...]]: ...
    def fallback(self, tree: Any, path: str, line: int, end_line: int) -> Record | None: ...


@dataclass(slots=True)
class CacheStats:
    """Deterministic counts of one input's parse (the same on every run of the same input and options, with the
    same shapes saved by earlier processes: ``saved.py``, switched off in the tests)."""

    hits: int = 0
    """Records served from a learnt shape without the grammar (built from a template, handed on unbuilt, or
    counted without a visit)."""
    misses: int = 0
    """Records read some other way: a shape seen for the first time, an uncacheable one, a free-text
    fallback, or one the grammar rejects."""
    grammar_runs: int = 0
    """Texts handed to a Lark parser (a record the main rule rejects may take two: the main and the looser rule)."""
    masked: int = 0
    """Record texts masked with VOLATILE (the slow way to a template: a record whose lines' SHAPE keys were seen
    before is served from the template bound to them without it)."""
    visited: int = 0
    """Lines the parser assembled into records one by one (the others were counted, or marked to be built from
    their template, by the classifying pass over a batch's distinct lines, or taken in one step with the first
    line of their record: see `followed`)."""
    derived: int = 0
    """VOLATILE shapes whose template was made without the grammar, from their family's (shapes that differ only
    in words the dialect passes on as they are: see ``LogFormat.words``)."""
    followed: int = 0
    """Records of several lines whose lines after the first were taken in one step, their SHAPE keys being those
    of a record read before (``_FileParser._follow``)."""
    recalled: int = 0
    """Texts whose grammar tree, or the grammar's error, was known from a text the same before (records of an
    uncacheable shape, and records the grammar rejects, that a log repeats word for word): not run again."""

    @property
    def hit_rate(self) -> float:
        """hits / (hits + misses), 0.0 before any record."""
        total = self.hits + self.misses
        return self.hits / total if total else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "hits": self.hits,
            "misses": self.misses,
            "grammar_runs": self.grammar_runs,
            "masked": self.masked,
            "visited": self.visited,
            "followed": self.followed,
            "derived": self.derived,
            "recalled": self.recalled,
            "hit_rate": round(self.hit_rate, 4),
        }


class ShapeCache:
    """What the parser of one input learnt about line shapes (each table bounded by KEPT entries)."""

    def __init__(
        self, shaper: Shaper | None = None, *, enabled: bool | None = None, dialects: tuple[Dialect, ...] = ()
    ) -> None:
        self.shaper = shaper if shaper is not None else Shaper()
        """SHAPE keys and values of lines (the reader's, which keys whole batches with it)."""
        self.enabled = _c.shape_cache if enabled is None else enabled
        """False: every record goes through the grammar (BLASLOG_SHAPE_CACHE=0)."""
        self.stats = CacheStats()
        self.known: dict[str, Any] = {}
        """SHAPE key of a line that began a one-line record -> its dialect (spares sniffing it again; kept with
        the cache off too, as sniffing is not what the cache is about)."""
        self.grown = 0
        """How many keys `known` was given: a key not in it is still not in it while this stays the same."""
        self.shortcuts: dict[str, Any] = {}
        """SHAPE keys of one-line records that need no visit when only GEMMs are wanted -> their dialect
        (records with nothing to build or report), or (dialect, LineTemplate) for GEMMs of a uniform shape."""
        self.outer: dict[str, None] = {}
        """The keys in `shortcuts` and `built` of whole lines with other text before the record (see
        :meth:`shortcut`): an input read after this one with the same cache drops them (:meth:`next_input`), so
        that its first such line is visited, and the input says once that the text was kept apart."""
        self.built: dict[str, Any] = {}
        """SHAPE keys of one-line records of a verbatim template without warnings -> (dialect, LineTemplate): what
        the classifying pass marks when every record is wanted (each is built from its line's SHAPE values
        without being assembled)."""
        self._templates: dict[Dialect, dict[str, Any]] = {}
        """Per dialect: VOLATILE shape -> Template, or UNCACHEABLE."""
        self._bound: dict[Dialect, dict[str, LineTemplate]] = {}
        """Per dialect: SHAPE key of a one-line record (or its lines' keys joined by line ends, for a record of
        several lines) -> its LineTemplate."""
        self._families: dict[Dialect, dict[tuple[str, ...], Any]] = {}
        """Per dialect: a family's VOLATILE shape with its words cut out (the pieces between them) -> _Family, or
        False (the family's template cannot be made: each of its shapes goes through the grammar)."""
        self.saved = saved.store() if self.enabled else None
        """This process's shapes learnt by earlier processes, and where it notes what it learns (``saved.py``)."""
        self._saved: dict[Dialect, dict[str, LineTemplate]] = {}
        """Per dialect: the line templates earlier processes bound (see :meth:`_saved_bound`)."""
        self._seen: set[int] = set()
        """Hashes of the one-line record shapes seen once (a shape is bound at its second line)."""
        self._after: dict[tuple[LineTemplate, int], LineTemplate] = {}
        """(a line template, how many values of other text come before its record) -> the template for such lines
        (see :meth:`shortcut`)."""
        self.dialects = dialects
        """The dialects read, in their sniffer's order (what `known` holds depends on them), or () where the
        cache is not told (it then neither reads nor notes the keys earlier processes knew)."""
        if self.saved is not None and dialects:
            self._recall_known()
        self._trees: dict[tuple[Dialect, str | None, str], Any] = {}
        self._records: dict[tuple[Dialect, str], Any] = {}
        """(dialect, text) -> what the dialect built from the text's tree: (record, warnings) or a RecordError
        (see :meth:`_record`)."""
        """(dialect, rule, text) -> the grammar's tree of the text, or its LarkError (see :meth:`_grammar`)."""

    def _recall_known(self) -> None:
        """Start with the keys earlier processes reading the same dialects found to begin one-line records, and
        their shortcuts: the first line of each such key is then not visited either (as a later one of this
        process would not be). A key's dialect, and whether its record is free text, are functions of the key
        and the dialects read, as a template is of its shape."""
        assert self.saved is not None
        by_name = {fmt.name: fmt for fmt in self.dialects}
        for key, (name, free) in self.saved.known_of(self.dialects).items():
            fmt = by_name.get(name)
            if fmt is None:
                continue
            self.known[key] = fmt
            if free:
                self.shortcut(key, fmt, fmt)
                continue
            bound = self._saved_bound(fmt).get(key)
            if bound is not None:
                self._bound.setdefault(fmt, {})[key] = bound
                self.shortcut(key, fmt, bound)
        self.grown = len(self.known)

    # -- look up -------------------------------------------------------------------------------------
    def dialect(self, key: str | None) -> Dialect | None:
        """The dialect whose one-line records begin on lines of SHAPE key `key`, if known (None: no key)."""
        return self.known.get(key)  # type: ignore[arg-type]  # None is no key of it

    def line_template(self, fmt: Dialect, key: str) -> LineTemplate | None:
        """The template bound to SHAPE key `key` of `fmt`'s one-line records (or to the joined keys of a record's
        lines), if any."""
        table = self._bound.get(fmt)
        return None if table is None else table.get(key)

    def tables(self) -> list[dict[Any, Any]]:
        """Every table keyed by shape (for tests of their bounds)."""
        return [
            self.known,
            self.shortcuts,
            self.built,
            self.outer,
            self.shaper._heads,
            self.shaper._messages,
            self.shaper._lines,
            *self._templates.values(),
            *self._families.values(),
            *(family.made for table in self._families.values() for family in table.values() if family),
            *self._bound.values(),
        ]

    # -- parse through it ----------------------------------------------------------------------------
    def parse(
        self,
        fmt: Dialect,
        text: str,
        path: str,
        line: int,
        end_line: int,
        shape: tuple[str, list[str]] | None = None,
        lazy: bool = False,
    ) -> tuple[Record | ShapedCall, tuple[str, ...], Any]:
        """A record of `fmt` from its text, its warnings, and how it was read: its shape's Template,
        UNCACHEABLE (built from its own tree) or FALLBACK (the dialect's looser reading).

        `shape` is ``mask(text)`` when the caller has it already. With `lazy`, a record of a shape seen before
        comes as a ShapedCall of its Template where it can (see Template.writable). Raises RecordError (it parses
        but makes no sense) or Rejected (the grammar rejects the text, and no looser reading takes it: lark's
        error described, and saved for later processes, which raise it without running the grammar). Nothing
        else: lark's errors stay here.
        """
        try:
            try:
                if not self.enabled:
                    self.stats.misses += 1
                    return (*self._uncached(fmt, text, None, path, line, end_line), UNCACHEABLE)
                return self._through_template(fmt, text, path, line, end_line, shape or self._masked(text), lazy)
            except (RecordError, Rejected):  # matched first: a process that runs no grammar has no lark to match
                raise
            except _lark.LarkError as exc:  # the grammar's main rule rejects the text
                loose = self._fallback(fmt, text, path, line, end_line)
                if loose is None:
                    raise self._rejected(fmt, text, exc) from None
                if self.saved is not None:
                    self.saved.read_text(fmt, text, (loose, (), True))
                return loose, (), FALLBACK if self.enabled else UNCACHEABLE
        except RecursionError:
            raise RecordError("groups nested too deeply to be a BLAS log record") from None

    def _rejected(self, fmt: Dialect, text: str, exc: Exception) -> Rejected:
        """Lark's error `exc` for `text`, which no looser reading served, as a Rejected; noted for later processes
        (a record cut inside a value, one a person edited), which raise it without running the grammar."""
        found = rejected(exc, text)
        if self.saved is not None and self.enabled:
            self.saved.read_text(fmt, text, ((found.reason, found.column), (), False))
        return found

    def _masked(self, text: str) -> tuple[str, list[str]]:
        self.stats.masked += 1
        return mask(text)

    def _through_template(
        self, fmt: Dialect, text: str, path: str, line: int, end_line: int, shape: tuple[str, list[str]], lazy: bool
    ) -> tuple[Record | ShapedCall, tuple[str, ...], Any]:
        """:meth:`parse` with the cache on: from the template of the text's VOLATILE `shape` (made from its family's,
        or by the grammar, and learnt, when new), else as an earlier process read the same text, else from the
        text's own tree."""
        stats = self.stats
        key, values = shape
        table = self._templates.get(fmt)
        if table is None:
            table = self._templates[fmt] = self._known_templates(fmt)
        template = table.get(key)
        family = None  # the shape's words and the pieces between them, where the dialect has words
        if template is None and fmt.words is not None:
            family = _family_of(fmt.words, key)
            template = self._derive(fmt, family, values)
            if template is not None:
                stats.derived += 1
                keep(table, key, template)
        if template is not None and template is not UNCACHEABLE:
            try:
                if lazy and template.writable(values):
                    call = ShapedCall(template, values, path, line, end_line)
                    stats.hits += 1
                    return call, template.warnings, template
                record = template.instantiate(values, path, line, end_line)
                stats.hits += 1
                return record, template.warnings, template
            except RecordError:
                pass  # a value out of range: the grammar's reading says which one first, as ever
        stats.misses += 1
        if self.saved is not None:  # a text no template served: as an earlier process read it, if it did
            recalled = self._recalled(fmt, text, path, line, end_line)
            if recalled is not None:
                return recalled
        tree = None
        if template is None:
            tree = self._grammar(fmt, text)
            template = template_of(fmt, tree, text)
            keep(table, key, template)
            if self.saved is not None:
                self.saved.template(fmt, key, template)
            if template is not UNCACHEABLE:
                if family is not None and "\x00" not in text:
                    self._widen(fmt, family, tree, text, key, values)
                try:
                    record = template.instantiate(values, path, line, end_line)
                    return record, template.warnings, template
                except RecordError:
                    pass  # the plain build below says which value is out of range first
        return (*self._uncached(fmt, text, tree, path, line, end_line), UNCACHEABLE)

    def _uncached(
        self, fmt: Dialect, text: str, tree: Any, path: str, line: int, end_line: int
    ) -> tuple[Record, tuple[str, ...]]:
        """The record of `text` built from its own tree (`tree`, None when the grammar has not read it yet) and its
        warnings, noted for later processes (``saved.Store.texts``), as is the RecordError it raises."""
        try:
            record, warnings = self._record(fmt, text, tree, path, line, end_line)
        except RecordError as exc:
            if self.saved is not None:
                self.saved.read_text(fmt, text, (saved.failure(exc), (), False))
            raise
        if self.saved is not None:
            self.saved.read_text(fmt, text, (record, warnings, False))
        return record, warnings

    def _recalled(
        self, fmt: Dialect, text: str, path: str, line: int, end_line: int
    ) -> tuple[Record, tuple[str, ...], Any] | None:
        """What an earlier process read of this very `text`, a record without a template (``saved.Store.texts``):
        the record at its own place, its warnings and how it was read; None where none was noted. Raises the
        RecordError the text's build step raised, or the grammar's rejection of the text (:class:`Rejected`)."""
        assert self.saved is not None
        found = self.saved.text_of(fmt, text)
        if found is None:
            return None
        record, warnings, loose = found
        self.stats.recalled += 1
        if type(record) is tuple:
            raise saved.failed(record)
        return replace(record, file=path, line=line, end_line=end_line), warnings, FALLBACK if loose else UNCACHEABLE

    def _derive(self, fmt: Dialect, family: _Words, values: list[str]) -> Template | None:
        """The template of a VOLATILE shape (its `family` parts, its `values`) from its family's, if known."""
        pieces, words, _spans = family
        table = self._family_table(fmt)
        known = table.get(pieces) if words else None
        if not known or known.first != len(values):
            return None
        made = known.made.get(tuple([words[i] for i in known.kept]))
        return None if made is None else made.specialize(words, known.first)

    def _widen(self, fmt: Dialect, family: _Words, tree: Any, text: str, key: str, values: list[str]) -> None:
        """Teach the family of VOLATILE shape `key` (its `family` parts) its template for the words of this shape
        that its build step computes with, from the tree of `text` (a shape just parsed with the grammar, its
        template cacheable)."""
        pieces, words, in_key = family
        if not words:
            return
        spans = []
        shift = nul = at = 0
        for start, end in in_key:
            while (found := key.find("\x00", at, start)) >= 0:  # the values before the word (2 in the key)
                shift += len(values[nul]) - 2
                nul += 1
                at = found + 2
            spans.append((start + shift, end + shift))
            at = end
        table = self._family_table(fmt)
        known = table.get(pieces)
        if known is False or (known is not None and known.first != len(values)):
            return
        if known is None:
            known = _Family(len(values))
        while True:
            made = family_template(
                fmt, tree, text, tuple(None if i in known.kept else span for i, span in enumerate(spans))
            )
            if type(made) is not int:
                break
            known.kept += (made,)  # a word the build step computes with: the family's templates are per value
            known.made = {}
        if made is UNCACHEABLE:
            keep(table, pieces, False)
        else:
            keep(known.made, tuple([words[i] for i in known.kept]), made)
            keep(table, pieces, known)
        if self.saved is not None:
            self.saved.family(fmt, pieces, None if made is UNCACHEABLE else (known.first, known.kept, dict(known.made)))

    def _known_templates(self, fmt: Dialect) -> dict[str, Any]:
        """A new table of `fmt`'s templates, holding those learnt by earlier processes (``saved.py``)."""
        return self.saved.templates_of(fmt) if self.saved is not None else {}

    def _family_table(self, fmt: Dialect) -> dict[tuple[str, ...], Any]:
        """`fmt`'s table of families, made when first asked for (holding those learnt by earlier processes)."""
        table = self._families.get(fmt)
        if table is None:
            table = self._families[fmt] = {}
            for pieces, (first, kept, made) in (self.saved.families_of(fmt) if self.saved is not None else {}).items():
                family = table[pieces] = _Family(first)  # a copy: this cache teaches its own
                family.kept, family.made = kept, dict(made)
        return table

    def _grammar(self, fmt: Dialect, text: str, rule: str | None = None) -> Any:
        """`fmt`'s tree of `text` (by `rule`, or its main rule); raises the grammar's LarkError.

        With the cache on, what the grammar said of a text of at most :data:`TREE_TEXT` characters is kept
        (:data:`TREES` of them), so that a text a log repeats word for word, yet whose records are not served
        from a template (an uncacheable shape, a record the grammar rejects: a negative cache), is not parsed
        again. A grammar is a function of the text alone and the build steps read trees without changing
        them, so the records and messages are the same (``tests/test_negative_cache.py``)."""
        if not self.enabled or len(text) > TREE_TEXT:
            self.stats.grammar_runs += 1
            return fmt.parser(rule).parse(text)
        trees = self._trees
        key = (fmt, rule, text)
        found = trees.get(key)
        if found is not None:
            self.stats.recalled += 1
            if isinstance(found, _lark.LarkError):
                raise found.with_traceback(None)
            return found
        self.stats.grammar_runs += 1
        try:
            found = fmt.parser(rule).parse(text)
        except _lark.LarkError as exc:
            _remember(trees, key, exc.with_traceback(None))
            raise
        _remember(trees, key, found)
        return found

    def _record(
        self, fmt: Dialect, text: str, tree: Any, path: str, line: int, end_line: int
    ) -> tuple[Record, tuple[str, ...]]:
        """``fmt.record`` of `text` (its `tree`, None when the grammar has not read it yet): with the cache on,
        the record (or the RecordError) of a text of at most :data:`TREE_TEXT` characters is kept by its text,
        and a text read again gets a copy with its own place (a record's fields are immutable values)."""
        if not self.enabled or len(text) > TREE_TEXT:
            return fmt.record(self._grammar(fmt, text) if tree is None else tree, path, line, end_line)
        key = (fmt, text)
        found = self._records.get(key)
        if found is None:
            if tree is None:
                tree = self._grammar(fmt, text)
            try:
                found = fmt.record(tree, path, line, end_line)
            except RecordError as exc:
                _remember(self._records, key, exc.with_traceback(None))
                raise
            _remember(self._records, key, found)
            return found
        self.stats.recalled += 1
        if isinstance(found, RecordError):
            raise found.with_traceback(None)
        record, warnings = found
        return replace(record, file=path, line=line, end_line=end_line), warnings

    def _fallback(self, fmt: Dialect, text: str, path: str, line: int, end_line: int) -> Record | None:
        if fmt.fallback_rule is None:
            return None
        try:
            tree = self._grammar(fmt, text, fmt.fallback_rule)
        except _lark.LarkError:
            return None
        try:
            return fmt.fallback(tree, path, line, end_line)
        except _lark.LarkError:  # its transformer failed (a VisitError): the main rule's error is reported
            return None

    # -- learn ---------------------------------------------------------------------------------------
    def learn(self, fmt: Dialect, key: str, text: str, how: Any, warnings: tuple[str, ...], outer: str | None) -> None:
        """Remember what parsing a one-line record whole (its `text` is its line, of SHAPE key `key`) taught:
        its dialect, and its template bound to the key from the key's second line on (`how`: what
        :meth:`parse` said). `outer`: the whole line's key when other text (a launcher's tag) came first."""
        new = self.known.get(key) is None
        if new:
            keep(self.known, key, fmt)
            self.grown += 1
        free = how is FALLBACK and not warnings
        if (new or free) and self.saved is not None and self.dialects:
            self.saved.known_key(self.dialects, key, fmt, free)
        if how is FALLBACK:
            if not warnings:
                self.shortcut(key, fmt, fmt, outer)  # free text: nothing to build when events are not wanted
        elif how is not UNCACHEABLE:
            self._bind(fmt, key, how, text, outer)

    def learn_record(self, fmt: Dialect, key: str, text: str, how: Any) -> None:
        """Remember what parsing a record of several lines joined by line ends (`text`, of SHAPE key `key`: the
        keys of its lines joined the same way) taught: its template, bound to the key from the key's second
        record on. Such records are never counted without a visit (a record's lines are assembled first)."""
        if how is not FALLBACK and how is not UNCACHEABLE:
            self._bind(fmt, key, how, text, None)

    def _bind(self, fmt: Dialect, key: str, template: Any, text: str, outer: str | None) -> None:
        table = self._bound.get(fmt)
        if table is None:
            table = self._bound[fmt] = {}
        if key in table:
            return
        bound = self._saved_bound(fmt).get(key)  # bound by an earlier process: no need to wait for a second line
        if bound is None:
            seen = hash(key)
            if seen not in self._seen:  # bind a shape at its second line: most of a log of new calls is seen once
                if len(self._seen) >= 10 * KEPT:
                    self._seen.clear()
                self._seen.add(seen)
                return
            bound = LineTemplate.bind(template, text)
            if bound is None:
                return
            if self.saved is not None:
                self.saved.line_template(fmt, key, bound)
        keep(table, key, bound)
        self.shortcut(key, fmt, bound, outer)

    def _saved_bound(self, fmt: Dialect) -> dict[str, LineTemplate]:
        """`fmt`'s line templates bound by earlier processes (``saved.py``), by SHAPE key (a key's template is
        a function of the key and its dialect, as a shape's is of the shape)."""
        table = self._saved.get(fmt)
        if table is None:
            table = self._saved[fmt] = self.saved.bound_of(fmt) if self.saved is not None else {}
        return table

    def shortcut(self, key: str, fmt: Dialect, what: Any, outer: str | None = None) -> None:
        """Let the classifying pass deal with later lines of SHAPE key `key` without visiting them (`what`: the
        dialect, for records with nothing to build, or the key's LineTemplate); also lines of the `outer`
        key, the record after other text (a launcher's `[rank0]: `, a CI runner's time stamp). A template serves
        the outer key with the values of that text left out (see LineTemplate.after)."""
        if self.known.get(key) is not fmt:
            return
        self._serve(key, fmt, what)
        if outer is None or not outer.endswith(key):
            return
        count = outer.count("\x00", 0, len(outer) - len(key))  # the values of the text before the record
        if count and what is not fmt:
            found = self._after.get((what, count))
            if found is None:
                found = what.after(count)
                keep(self._after, (what, count), found)
            what = found
        if len(self.outer) >= KEPT:
            self.next_input()
        self.outer[outer] = None
        self._serve(outer, fmt, what)

    def _serve(self, key: str, fmt: Dialect, what: Any) -> None:
        mark = what if what is fmt else _mark(fmt, what)
        if mark is not None:
            keep(self.shortcuts, key, mark)
        if what is not fmt and what.verbatim and not what.warnings:
            keep(self.built, key, (fmt, what))

    def next_input(self) -> None:
        """Make ready for another input: forget the keys of whole lines with other text before the record (what
        an input says of such lines, once per kind of prefix, comes from visiting the first of them)."""
        shortcuts, built = self.shortcuts, self.built
        for key in self.outer:
            shortcuts.pop(key, None)
            built.pop(key, None)
        self.outer.clear()


class SharedShapes:
    """What the inputs of one read learn about line shapes, kept for the next input: per-rank logs (the layout
    `blaslog record`, torchrun and CI write) say the same things, so the second file on is served from the
    shapes the first taught, not learnt again with the grammar.

    One entry per set of dialects read (their sniffer, which makes the dialect objects the cache's tables are
    keyed by, and its cache), and per state of the shape-cache switch. Each input taken gets fresh `stats`
    (the counts stay per input). The records are the same as with a cache per input (the cache only ever
    spares work: ``tests/test_shape_cache.py`` compares the two)."""

    def __init__(self) -> None:
        self._kept: dict[Any, tuple[Any, ShapeCache]] = {}

    def take(self, dialects: tuple[str, ...], sniffer: Any) -> tuple[Any, ShapeCache]:
        """(sniffer, cache) for an input read with these `dialects` (names): the `sniffer` given and a new
        cache the first time, what the first input was given after that."""
        key = (dialects, _c.shape_cache)
        found = self._kept.get(key)
        if found is None:
            found = self._kept[key] = (sniffer, ShapeCache(dialects=tuple(sniffer.formats)))
        else:
            found[1].stats = CacheStats()
            found[1].next_input()
        return found


_PROCESS: list[SharedShapes] = []
"""The shapes shared by every input a worker process reads (set by :func:`share_in_process`)."""


def share_in_process() -> None:
    """Share learnt shapes between every input this process reads from now on: a pool's initializer, so that
    a worker learns each shape once for all the pieces and files it is handed (a pool lives for one read)."""
    if not _PROCESS:
        _PROCESS.append(SharedShapes())
        saved.at_worker_exit()


def in_process() -> SharedShapes | None:
    """The process's shared shapes (see :func:`share_in_process`), or None."""
    return _PROCESS[0] if _PROCESS else None


def _remember(table: dict[Any, Any], key: Any, value: Any) -> None:
    """``table[key] = value``, emptying the table first when it holds TREES entries."""
    if len(table) >= TREES:
        table.clear()
    table[key] = value


_Words = tuple[tuple[str, ...], list[str], list[tuple[int, int]]]
"""A VOLATILE shape's family parts: the pieces between its words (the family's key), the words, their spans."""


def _family_of(pattern: re.Pattern[str], key: str) -> _Words:
    """The family parts of VOLATILE shape `key` under a dialect's words `pattern`, in one pass."""
    pieces, words, spans = [], [], []
    at = 0
    for match in pattern.finditer(key):
        start, end = match.span(1)
        pieces.append(key[at:start])
        words.append(match.group(1))
        spans.append((start, end))
        at = end
    pieces.append(key[at:])
    return tuple(pieces), words, spans


class _Family:
    """The shapes of a dialect's records that differ only in their words (``LogFormat.words``): their template,
    made from the grammar's tree of one of them, per value of the words its build step computes with."""

    __slots__ = ("first", "kept", "made")

    def __init__(self, first: int) -> None:
        self.first = first
        """How many VOLATILE values a shape of the family has (the word slots are numbered after them)."""
        self.kept: tuple[int, ...] = ()
        """The words (their places among the shape's words) the build step computes with."""
        self.made: dict[tuple[str, ...], Template] = {}
        """The kept words' values -> the family's template for them (its other words are slots)."""


def _mark(fmt: Dialect, template: LineTemplate) -> Any:
    """What `shortcuts` holds for a bound key: its dialect (a record with nothing to build or report),
    (dialect, template) for a GEMM of a uniform shape, or None (lines of it are visited)."""
    if template.warnings:
        return None
    if template.cls is Event:
        return fmt
    return (fmt, template) if template.uniform else None


__all__ = ["CacheStats", "ShapeCache", "SharedShapes", "in_process", "share_in_process"]
