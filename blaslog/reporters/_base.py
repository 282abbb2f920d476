"""The Reporter interface, the registry, and text-safety helpers every reporter uses."""

from __future__ import annotations

import difflib
import importlib
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, ClassVar, TypeVar

from blaslog.errors import BlaslogError
from blaslog.report import Report

MODULES = {
    "csv": "csv",
    "github": "github",
    "gitlab": "gitlab",
    "html": "html",
    "json": "json",
    "jsonl": "json",
    "junit": "junit",
    "markdown": "markdown",
    "sarif": "sarif",
    "table": "table",
}
"""Each ``--format`` value -> the module of ``blaslog.reporters`` that registers its reporter."""

R = TypeVar("R", bound="type[Reporter]")


class _Registry(Mapping[str, "type[Reporter]"]):
    """The formats by name; a format's module is imported when its class is first asked for."""

    def __init__(self) -> None:
        self.loaded: dict[str, type[Reporter]] = {}

    def __getitem__(self, name: str) -> type[Reporter]:
        if name not in self.loaded and name in MODULES:
            importlib.import_module(f"blaslog.reporters.{MODULES[name]}")  # its @register fills `loaded`
        return self.loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter({**dict.fromkeys(MODULES), **self.loaded})  # a format registered from outside too

    def __len__(self) -> int:
        return len(MODULES.keys() | self.loaded.keys())


REPORTERS = _Registry()


class Reporter(ABC):
    """Renders a Report as text."""

    name: ClassVar[str]
    """The --format value."""
    stable: ClassVar[bool] = False
    """True when the output is a machine-readable contract."""
    description: ClassVar[str] = ""
    """One line for --help."""
    defuse_style: ClassVar[str] = "text"
    """How `##[` is escaped in this output (see :func:`defuse_commands`)."""

    @abstractmethod
    def render(self, report: Report) -> str:
        """The whole output."""

    streams: ClassVar[bool] = False
    """True when records can be written as they are parsed (see stream_begin/stream_rows/stream_end)."""
    first_separator: ClassVar[str] = ""
    """What to drop from the text of the very first row when rows were rendered as not first (JSON's comma)."""
    shaped_rows: ClassVar[bool] = False
    """True when stream_rows takes ShapedRow items besides dict rows (see blaslog.views.record_rows)."""

    def stream_begin(self) -> str:
        """Text before the first record."""
        return ""

    def stream_rows(self, rows: Iterable[Any], first: bool) -> Iterator[str]:
        """Text of rows; `first` says whether no row of the output came before them."""
        raise NotImplementedError

    def stream_end(self, files: list[Any], any_rows: bool) -> str:
        """Text after the last record (the inputs' accounting)."""
        return ""

    def render_streamed(self, report: Report) -> str:
        """A parse report as the streamed output gives it (so that the library and the command write one text)."""
        return "".join(self._stream(report.document.get("records", report.rows), lambda: report.files))

    def _stream(self, rows: Iterable[dict[str, Any]], files: Callable[[], list[Any]]) -> Iterator[str]:
        yield self.stream_begin()
        any_rows = False
        for text in self.stream_rows(rows, True):
            any_rows = True
            yield defuse_commands(text, self.defuse_style)
        yield defuse_commands(self.stream_end(files(), any_rows), self.defuse_style)


def register(cls: R) -> R:
    """Class decorator: add a reporter to REPORTERS under its name."""
    REPORTERS.loaded[cls.name] = cls
    return cls


def get_reporter(name: str) -> Reporter:
    """The reporter for a --format value; BlaslogError with a suggestion for an unknown one."""
    try:
        return REPORTERS[name]()
    except KeyError:
        close = difflib.get_close_matches(name, list(REPORTERS), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise BlaslogError(f"unknown output format {name!r}{hint} Known: {', '.join(sorted(REPORTERS))}") from None


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 256 else f"\\u{code:04x}"


def printable(text: object, limit: int = 0) -> str:
    """Text safe for a terminal or a CI log: control characters (ANSI escapes, CR, bidi overrides) shown escaped."""
    value = "" if text is None else str(text)
    if not value.isprintable():  # every character _CONTROL escapes is unprintable to str.isprintable
        value = _CONTROL.sub(_escaped, value)
    if limit and len(value) > limit:
        value = value[: limit - 3] + "..."
    return value


#: How the `[` of `##[`, `##vso[` and `##teamcity[` is written in each kind of output so that no runner's
#: command syntax matches: GitHub's older one (`##[set-output ...]`), Azure Pipelines' logging commands
#: (`##vso[task.setvariable ...]`, found anywhere in a line by the agent) and TeamCity's service messages
#: (`##teamcity[...]`). JSON and XML spell the bracket with an escape of their own (the text reads back
#: unchanged); plain text, Markdown and CSV put a backslash before it.
_BRACKET = {"text": "\\[", "json": "\\u005b", "xml": "&#91;"}
_HASH_COMMAND = re.compile(r"(##(?:vso|teamcity)?)\[", re.IGNORECASE)


#: A line that starts, after white space, with `::`. The runner reads lines up to `\r` or `\n` (a CR inside a
#: CSV field or a message starts a line for it too) and trims white space before looking for `::`.
_COMMAND_LINE = re.compile(r"(^|[\r\n])(?=[^\S\r\n]*::)")


def _double_hash(text: str) -> bool:
    """`"##" in text`, found faster in text that holds a few single `#`s (a cuBLASLt [Info] line's `device #0`):
    each `#` is found by memchr, where the search for `##` reads every character; it reads them all only when
    `#` is common (one in a thousand characters, or more)."""
    at = text.find("#")
    for _ in range(len(text) >> 10):
        if at < 0:
            return False
        if text.startswith("#", at + 1):
            return True
        at = text.find("#", at + 2)
    return at >= 0 and text.find("##", at) >= 0


def defuse_old_syntax(text: str, style: str = "text") -> str:
    """Every ``##[``, ``##vso[`` and ``##teamcity[`` of `text` written so that no runner's parser matches (see
    defuse_commands); for outputs made of GitHub workflow commands on purpose (the github format)."""
    if not _double_hash(text):
        return text
    bracket = _BRACKET[style]
    return _HASH_COMMAND.sub(lambda match: match.group(1) + bracket, text)


def defuse_commands(text: str, style: str = "text") -> str:
    """Make sure no line of `text` can be read as a CI runner's command: GitHub Actions' (either syntax), Azure
    Pipelines' or TeamCity's.

    The runner (actions/runner, src/Runner.Common/ActionCommand.cs, used by ActionCommandManager) reads every
    line a step prints, stdout and stderr alike, and tries two parsers:

    * ``TryParseV2``: after leading white space the line (up to CR or LF) starts with ``::``; the command runs to
      the next ``::``. Such a line gets ``| `` put before it here.
    * ``TryParse`` (the older syntax): ``##[`` ANYWHERE in the line, then a registered command name up to a
      space or ``]`` (``##[set-output name=x]value``, ``##[error]...``, ``##[add-mask]...``). Every ``##[`` has
      its bracket written as `_BRACKET` gives for the output's `style` (``text``, ``json``, ``xml``); so have
      Azure Pipelines' ``##vso[`` and TeamCity's ``##teamcity[``, which those runners look for the same way.

    Every reporter passes its whole output through here, and the CLI its stderr lines; log text, file names
    and caps values cannot reach the runner any other way.
    """
    text = defuse_old_syntax(text, style)
    if style == "json" or "::" not in text:
        # JSON holds no raw CR or LF inside a string, and each of its lines starts with a bracket, a brace, a
        # quote or white space before one: no JSON line can start with `::` (one scan of the text fewer)
        return text
    return _COMMAND_LINE.sub(r"\1| ", text)


def cell(value: object, limit: int = 80) -> str:
    """A table cell: printable, one line, cut to `limit`."""
    if value is None:
        return "-"
    return printable(str(value).replace("\n", " "), limit)


def column_cells(values: list[object], limit: int = 80) -> list[str]:
    """:func:`cell` of each value of a column, in two passes over the column's text where all of it is printable
    and no cell is too long (a table of 25,000 rows has 275,000 cells)."""
    texts = ["-" if value is None else str(value) for value in values]
    if "".join(texts).isprintable() and max(map(len, texts), default=0) <= limit:  # no line end, nothing to cut
        return texts
    return [cell(value, limit) for value in values]
