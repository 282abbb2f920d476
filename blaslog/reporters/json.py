"""JSON (one document) and JSON Lines (one object per record or finding)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import itemgetter
from typing import Any

from blaslog._fast import _c
from blaslog._fast.shapes import keep
from blaslog.records import SCHEMA_VERSION
from blaslog.report import Report
from blaslog.reporters._base import Reporter, defuse_commands, register
from blaslog.views import ShapedRow, ShapedRows

_COMPACT = json.JSONEncoder(ensure_ascii=True, allow_nan=False, default=str)
"""What dumps() writes one line with (made once: json.dumps makes an encoder a call for these options)."""


def dumps(value: Any, indent: int | None = None) -> str:
    """Deterministic JSON: keys in insertion order, non-ASCII escaped, NaN refused."""
    if indent is None:
        return _COMPACT.encode(value)
    return json.dumps(value, indent=indent, ensure_ascii=True, allow_nan=False, default=str)


CHUNK = 1 << 18
"""Characters of output joined into one write, about: large enough that the writer thread takes the GIL back
seldom, and bounded (a chunk used to be 256 texts, and a text the rows of a whole stretch of a batch: 2 MB)."""

ROWS = 1 << 15
"""Most characters of the rows that ``kept_rows`` writes as one text (its first row whatever its length): a
buffer the allocator gives again, where a megabyte is memory fresh from the system, each page faulting."""


def _kept_rows(
    marks: Any, texts: list[str], numbers: Any, kept: dict[str, Any], start: int, limit: int = ROWS
) -> tuple[str, int]:
    """The rows of a run from `start` on for as long as each line's row is kept with its template (a list of
    ASCII parts, joined by the line's number, an int from 0 below 2**63), as one text of at most `limit`
    characters (its first row whatever its length), and the first row not written (the C extension's kept_rows,
    check for check; :meth:`ShapeTexts._run` writes the others)."""
    if len(marks) != len(texts):
        raise ValueError("kept_rows: marks and texts differ in length")
    out: list[str] = []
    used, most = 0, max(int(limit), 0)
    start = max(start, 0)
    for at in range(start, len(texts)):
        if type(numbers) is list and at >= len(numbers):
            raise ValueError("kept_rows: fewer numbers than texts")
        number = numbers[at]
        if type(number) is not int or not 0 <= number < 1 << 63:
            return "".join(out), at
        mark, found = marks[at], kept.get(texts[at])
        if not (
            isinstance(mark, tuple)
            and len(mark) >= 2
            and isinstance(found, tuple)
            and len(found) == 2
            and found[0] is mark[1]
            and type(parts := found[1]) is list
            and parts
            and all(type(part) is str and part.isascii() for part in parts)
        ):
            return "".join(out), at
        row = str(number).join(parts)
        if used and used + len(row) > most:
            return "".join(out), at
        out.append(row)
        used += len(row)
    return "".join(out), max(start, len(texts))


def _chunks(texts: Iterable[list[str]], size: int = CHUNK) -> Iterator[str]:
    """The texts (a list of them per item) joined into chunks of about `size` characters: fewer, larger writes,
    each text copied once (the rows of a ShapedRows are not joined on their own first), and a chunk of a bounded
    size (see :data:`CHUNK`; a ShapedRows may hold a batch's thousands of rows)."""
    batch: list[str] = []
    held = 0
    for parts in texts:
        more = sum(map(len, parts))
        if held + more < size:  # most items: a row, or a run's rows of a few kept stretches
            batch += parts
            held += more
            continue
        for part in parts:
            batch.append(part)
            held += len(part)
            if held >= size:
                yield "".join(batch)
                batch, held = [], 0
    if batch:
        yield "".join(batch)


_MARK = re.compile(r"\\u0000(\d+)\\u0000")

_FILE = "\\u0000file\\u0000"
"""Where the input's name goes in a template's form (see ShapeTexts._make)."""


class ShapeTexts:
    """The texts of rows of known line shapes (ShapedRow), from pieces cached per shape.

    The rows of one shape differ only where the line's SHAPE values (pointers, time stamps, thread ids,
    characters that JSON writes as they are) and its line numbers go. The shape's first row is encoded once
    with a mark in each of those places, and later rows put their own values between the pieces. The pieces
    are checked against a whole encoding of that first row; a shape whose pieces do not give it back is
    encoded whole every time.
    """

    def __init__(self, encode: Callable[[dict[str, Any]], str], style: str) -> None:
        self._encode = encode
        self._style = style
        """The writer's name: what a template's `memo` holds this writer's form of its rows under."""
        self._forms: dict[Any, Any] = {}
        """A template -> the form of its rows with caps (see :meth:`_made`)."""
        self._path: str | None = None
        """The input whose rows `_pieces` and `_rows` write."""
        self._file = ""
        """Its name as JSON writes it inside a string."""
        self._pieces: dict[Any, Any] = {}
        """A template -> the pieces of its rows of this input, checked on its first row, or False (its rows are
        encoded whole)."""
        self._rows: dict[str, tuple[Any, list[str]]] = {}
        """A line -> (its template, its row's text cut where the line number goes), for rows read from lines that
        come again (bounded: see _fast.shapes.keep)."""
        self._seen: dict[int, None] = {}
        """The hashes of the lines of a run's rows seen once and not kept yet, in any input (a row is kept the
        second time its line comes, in this input or a later one: per-rank logs repeat each other's lines; an
        equal hash of another line only keeps that line's row sooner)."""
        self._name = ""
        """The input's name as it is in the text of a row (`_file` without the doubled `%`)."""
        self._across: dict[str, tuple[Any, list[str]]] = {}
        """As `_rows`, with a ``\x01`` where the input's name goes, kept for every input: per-rank logs repeat each
        other's lines, whose rows a later input then takes from here with its own name put in (see
        :meth:`_kept`), not made again (bounded: see _fast.shapes.keep). A row's text holds no raw control
        character but this one (JSON writes them as escapes, and a line's SHAPE values hold none)."""

    def _input(self, path: str) -> None:
        """Write the rows of input `path` from here on."""
        self._path = path
        self._name = _COMPACT.encode(path)[1:-1]
        self._file = self._name.replace("%", "%%")
        # not `_seen`: a line an earlier input saw once is kept when it comes again (per-rank logs share lines)
        self._pieces, self._rows = {}, {}

    def _kept(self, text: str, template: Any) -> list[str] | None:
        """The parts of the row of line `text` (of `template`) kept by an earlier input, with this input's name
        put in and kept for this input too; None where none was kept."""
        found = self._across.get(text)
        if found is None or found[0] is not template:
            return None
        name = self._name
        parts = [part.replace("\x01", name) for part in found[1]]
        keep(self._rows, text, (template, parts))
        return parts

    def parts(self, item: Any) -> list[str]:
        """The texts of the rows of a ShapedRows, or the text of a row (a plain dict, or a ShapedRow)."""
        if type(item) is ShapedRows:
            return self._run(item)
        return [self.text(item)]

    def text(self, item: Any) -> str:
        """The text of a row (a plain dict, or a ShapedRow), or the texts of the rows of a ShapedRows, joined."""
        if type(item) is ShapedRows:
            return "".join(self._run(item))
        if type(item) is not ShapedRow:
            return self._encode(item)
        call = item.call
        if call.path != self._path:
            self._input(call.path)
        pieces = self._pieces.get(call.template)
        if pieces is None:
            pieces = self._made(item)
            keep(self._pieces, call.template, pieces)
        if pieces is False:
            return self._encode(item.row())
        form, pick, _ = pieces  # as _fill does, inline (this runs once per row)
        text = call.text
        if text is None or call.line != call.end_line:
            return form % pick((*call.values, call.line, call.end_line))  # type: ignore[no-any-return]
        # rows of one line that read the same differ only in their line number: the row's text is kept (with
        # its template) with a NUL where the number goes (JSON writes a NUL as \u0000: none is in the text)
        found = self._rows.get(text)
        if found is None or found[0] is not call.template:
            parts = self._kept(text, call.template) or self._keep(call.template, pieces, call.values, text)
            return str(call.line).join(parts)
        return str(call.line).join(found[1])

    def _adopt(self, marks: Sequence[Any], texts: Sequence[str], start: int) -> None:
        """Keep for this input the rows an earlier input kept of the lines `texts[start:]` (of the templates
        `marks[i][1]`), as :meth:`_kept` does for one line: a run of per-rank logs' lines, which each input repeats,
        is then written by kept_rows in one step, not a row at a time."""
        rows = self._rows
        for index in range(start, len(texts)):
            if texts[index] not in rows:
                self._kept(texts[index], marks[index][1])

    def _keep(self, template: Any, pieces: Any, values: list[str], text: str) -> list[str]:
        """The row of `text` (of `template`, whose pieces are `pieces`; its SHAPE values `values`) cut where its
        line number goes, kept for the next time `text` comes."""
        form, pick, marking = pieces
        marked = marking % pick((*values, "\x00", "\x00"))
        parts: list[str]
        if marked.count("\x01") > 1:  # a value holds the mark (none does: see `_across`): the row as it is
            parts = (form % pick((*values, "\x00", "\x00"))).split("\x00")
        else:
            keep(self._across, text, (template, marked.split("\x00")))
            parts = marked.replace("\x01", self._name).split("\x00")
        keep(self._rows, text, (template, parts))
        return parts

    def _run(self, rows: ShapedRows) -> list[str]:
        """The texts of a run's rows: those of lines kept (see :meth:`text`) with their numbers put in, the
        others through :meth:`text`."""
        if len(rows) == 1:
            return [self.text(rows.row(0))]
        run: Any = rows.run  # more than one record: a run of one-line records (``blaslog._fast.lazy.ShapedRun``)
        if run.path != self._path:
            self._input(run.path)
        kept, made, again, seen = self._rows.get, self._pieces.get, run.counts.get, self._seen
        speedups = _c.speedups
        values: Callable[[str], list[str] | None] = speedups.values if speedups is not None else run.values
        stretch = speedups.kept_rows if speedups is not None else _kept_rows
        marks, texts, numbers = run.marks, run.texts, run.numbers
        out: list[str] = []
        append = out.append
        offset, count = 0, len(texts)
        adopted = False  # whether the rows an earlier input kept of this run's lines are kept for this input yet
        while True:
            done, offset = stretch(marks, texts, numbers, self._rows, offset, ROWS)  # rows of lines kept, at once
            if done:
                append(done)
            if offset >= count:
                return out
            template, text, number = marks[offset][1], texts[offset], numbers[offset]
            offset += 1
            found = kept(text)
            if found is not None and found[0] is template:  # as text() does for the ShapedCall of the line
                append(str(number).join(found[1]))
                continue
            parts = self._kept(text, template)  # a row an earlier input kept
            if parts is not None:
                append(str(number).join(parts))
                if not adopted:  # the rest of the run's such rows too, at once: kept_rows then writes them
                    adopted = True
                    self._adopt(marks, texts, offset)
                continue
            pieces = made(template)
            if not pieces:  # the template's pieces are not made yet, or it is encoded whole (False)
                append(self.text(rows.row(offset - 1)))
                continue
            if again(text, 0) > 1 or (code := hash(text)) in seen:  # a line that comes again: its row is kept
                append(str(number).join(self._keep(template, pieces, run.values(text), text)))
                continue
            # a line seen for the first time: its row is written from the pieces (as its kept row would give it:
            # the same pieces, the same values), and the line noted (a log whose pointers never repeat would
            # fill the kept rows with rows that never come again)
            keep(seen, code, None)
            line_values = values(text)
            if line_values is None:  # a str that UTF-8 cannot hold: the Python path takes its values
                line_values = run.values(text)
            append(pieces[0] % pieces[1]((*line_values, number, number)))

    @staticmethod
    def _fill(pieces: tuple[str, Callable[[tuple[Any, ...]], Any], str], call: Any) -> str:
        form, pick, _ = pieces
        row: str = form % pick((*call.values, call.line, call.end_line))
        return row

    def _made(self, item: ShapedRow) -> Any:
        """The pieces of the rows of `item`'s template in this input, or False when they do not give back its
        row (its rows are then encoded whole).

        The form of a template's rows (with a mark where the input's name goes) is a function of the template
        and the writer alone, so it is kept in the template's `memo`, which serves every input of the command
        and is saved with the template for later processes (``_fast/saved.py``); rows with caps (whose columns
        depend on the caps file) keep theirs in this writer only."""
        call = item.call
        if item.caps is None:
            memo = call.template.memo
            form = memo.get(self._style)
            if form is None:
                form = memo[self._style] = self._make(item)
        else:
            form = self._forms.get(call.template)
            if form is None:
                form = self._make(item)
                keep(self._forms, call.template, form)
        order = form[1]
        getter = itemgetter(*order) if order else (lambda values: ())
        pick = getter if len(order) != 1 else (lambda values: (getter(values),))
        pieces = (form[0].replace(_FILE, self._file), pick, form[0].replace(_FILE, "\x01"))
        if form[2] is None:  # checked on the first row of the first input: the name is put in the same way
            form[2] = self._fill(pieces, call) == self._encode(item.row())
        return pieces if form[2] else False

    def _make(self, item: ShapedRow) -> list[Any]:
        """[form, order, verdict] of the rows of `item`'s template: `form` with a mark where the input's name goes
        and a `%s` for each value, `order` the values' indices (a row's volatile values, then its line and end
        line) in the order they go in; verdict, once checked, whether the pieces give back a whole encoding of a
        row (None: not checked yet). Plain values, so that a template saved with it can be checked on reading
        (``_fast/saved.py``)."""
        call = item.call
        count = len(call.values)
        marks = [f"\x00{j}\x00" for j in range(count + 2)]
        text = self._encode(item.marked_row(marks[:count], marks[count], marks[count + 1], "\x00file\x00"))
        for j in (*call.template.numbers, count, count + 1):  # integers: their marks take the quotes with them
            text = text.replace(f'"\\u0000{j}\\u0000"', f"\\u0000{j}\\u0000")
        parts = _MARK.split(text)
        # one %-format with the values picked in the order the text wants them (a value may come twice)
        form = "%s".join(part.replace("%", "%%") for part in parts[0::2])
        return [form, tuple(int(j) for j in parts[1::2]), None]


def _kept_texts(reporter: Reporter, encode: Callable[[dict[str, Any]], str]) -> ShapeTexts:
    """The reporter's one ShapeTexts for every input it writes (the line shapes of per-rank logs come again)."""
    texts = reporter.__dict__.get("_shape_texts")
    if texts is None:
        texts = reporter.__dict__["_shape_texts"] = ShapeTexts(encode, reporter.name)
    return texts


@register
class JsonReporter(Reporter):
    """The whole result as one JSON document with schema_version."""

    name = "json"
    commands = ("parse", "summary", "check", "diff", "emulate")
    defuse_style = "json"
    stable = True
    description = "one JSON document (schema_version, records or findings, summary)"

    def render(self, report: Report) -> str:
        if report.command == "parse":
            return self.render_streamed(report)
        return defuse_commands(dumps(report.to_json(), indent=2) + "\n", "json")

    streams = True
    first_separator = ","

    def stream_begin(self) -> str:
        return f'{{\n  "schema_version": {SCHEMA_VERSION},\n  "command": "parse",\n  "records": ['

    shaped_rows = True

    def stream_rows(self, rows: Iterable[Any], first: bool) -> Iterator[str]:
        rows = iter(rows)
        texts = _kept_texts(self, lambda row: ",\n    " + dumps(row))
        if first:  # the first row has no comma before it
            for row in rows:
                if type(row) is ShapedRows:
                    yield "\n    " + dumps(row.row(0).row())
                    rest = row.after(1)
                    if rest is not None:
                        yield texts.text(rest)
                else:
                    yield "\n    " + dumps(row)
                break
        yield from _chunks(map(texts.parts, rows))

    def stream_end(self, files: list[Any], any_rows: bool) -> str:
        summary = dumps({"files": [f.to_dict() for f in files]}, indent=2).replace("\n", "\n  ")
        return ("\n  ]" if any_rows else "]") + ',\n  "summary": ' + summary + "\n}\n"


@register
class JsonLinesReporter(Reporter):
    """One JSON object per line: each record (parse), finding (diff, check) or row (summary), then the summary."""

    name = "jsonl"
    commands = ("parse", "summary", "check", "diff")
    defuse_style = "json"
    stable = True
    description = "JSON Lines: one object per record/finding/row, then a summary object"

    def render(self, report: Report) -> str:
        if report.command == "parse":
            return self.render_streamed(report)
        doc = report.to_json()
        items = (
            doc.get("records")
            if report.command == "parse"
            else (doc.get("findings") if report.command in ("diff", "check") else doc.get("signatures", report.rows))
        )
        lines = [
            dumps({"type": "item", **item} if isinstance(item, dict) else {"type": "item", "value": item})
            for item in items or []
        ]
        tail = {k: v for k, v in doc.items() if k not in ("records", "findings", "signatures")}
        lines.append(dumps({"type": "summary", **tail, "schema_version": SCHEMA_VERSION}))
        return defuse_commands("\n".join(lines) + "\n", "json")

    streams = True

    shaped_rows = True

    def stream_rows(self, rows: Iterable[Any], first: bool) -> Iterator[str]:
        texts = _kept_texts(self, lambda row: dumps({"type": "item", **row}) + "\n")
        yield from _chunks(map(texts.parts, rows))

    def stream_end(self, files: list[Any], any_rows: bool) -> str:
        return (
            dumps(
                {
                    "type": "summary",
                    "schema_version": SCHEMA_VERSION,
                    "command": "parse",
                    "summary": {"files": [f.to_dict() for f in files]},
                }
            )
            + "\n"
        )
