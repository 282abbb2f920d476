"""The Reporter interface, the registry, and text-safety helpers every reporter uses."""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import pkgutil
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from blaslog.errors import BlaslogError
from blaslog.report import Report

R = TypeVar("R", bound="type[Reporter]")

#: A reporter class in a module's text: `@register` (perhaps among other decorators), then `class NAME(...):`, and
#: the lines of its body up to its first method (or the module's next top-level line): where its declarations are.
_DECLARED_CLASS = re.compile(
    r"^@register[ \t]*\n(?:@.*\n)*(class \w+(?:\([^()]*\))?:[ \t]*(?:#.*)?\n"
    r"(?:(?![ \t]+(?:@|def |async def ))(?:[ \t].*|[ \t]*)\n)*)",
    re.M,
)


@dataclass(frozen=True, slots=True)
class Declared:
    """A reporter class as its module's text declares it, read without importing the module (which may import
    tabulate, an XML library or an extra)."""

    module: str
    """The module of ``blaslog.reporters`` that registers it."""
    values: Mapping[str, Any]
    """Its class attributes written as literals before its first method (`name`, `commands`, `requires` ...)."""


def _declarations(module: str, source: str) -> list[Declared] | None:
    """Each ``@register`` class of a module's text with its literal declarations; None when the text cannot be
    read so (the module is then imported to learn its formats)."""
    found = []
    for match in _declared_classes(source):
        if match is None:
            return None
        try:
            (node,) = ast.parse(match.group(1) + "    pass\n").body
        except (SyntaxError, ValueError):
            return None
        values: dict[str, Any] = {}
        for statement in node.body if isinstance(node, ast.ClassDef) else ():
            target, value = _assignment(statement)
            if target is not None:
                with contextlib.suppress(ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    values[target] = ast.literal_eval(value)  # type: ignore[arg-type]
        if not isinstance(values.get("name"), str):
            return None
        found.append(Declared(module, values))
    return found


def _declared_classes(source: str) -> Iterator[re.Match[str] | None]:
    """_DECLARED_CLASS's match at each line of a module's text that begins with `@register` (None where the
    class is not written as it expects). Each is found by str.find: the regex is tried only there, some ten
    times faster than scanning the whole text."""
    at = source.find("@register")
    while at >= 0:
        if at == 0 or source[at - 1] == "\n":
            yield _DECLARED_CLASS.match(source, at)
        at = source.find("@register", at + 1)


def _assignment(statement: ast.stmt) -> tuple[str | None, ast.expr | None]:
    """(name, value) of `name = value` or `name: type = value`; (None, None) for any other statement."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target, value = statement.targets[0], statement.value
    elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
        target, value = statement.target, statement.value
    else:
        return None, None
    return (target.id, value) if isinstance(target, ast.Name) else (None, None)


class _Registry(Mapping[str, "type[Reporter]"]):
    """The formats by name. Every module of ``blaslog.reporters`` whose name does not begin with ``_`` is one
    (or more) formats: its ``@register`` classes are found in its text, and the module is imported when a class
    is first asked for (``blaslog parse -f jsonl`` loads neither tabulate nor the XML library). A class
    registered from outside the package (:func:`register`) is a format too."""

    def __init__(self) -> None:
        self.loaded: dict[str, type[Reporter]] = {}

    def declared(self) -> dict[str, Declared]:
        """Every format the modules of the package's path declare, by name."""
        return _discover(tuple(importlib.import_module(__package__).__path__))

    def __getitem__(self, name: str) -> type[Reporter]:
        if name not in self.loaded:
            where = self.declared().get(name)
            if where is None:
                raise KeyError(name)
            importlib.import_module(where.module)  # its @register fills `loaded`
            if name not in self.loaded:
                raise BlaslogError(f"{where.module} declares the output format {name!r} but registers none of it")
        return self.loaded[name]

    def __contains__(self, name: object) -> bool:
        return name in self.loaded or name in self.declared()  # without importing the format's module

    def __iter__(self) -> Iterator[str]:
        return iter({**dict.fromkeys(self.declared()), **self.loaded})  # a format registered from outside too

    def __len__(self) -> int:
        return len(self.declared().keys() | self.loaded.keys())

    def declaration(self, name: str, attribute: str, default: Any = None) -> Any:
        """A class attribute of the format `name`: from its class once imported, else from its module's text,
        else (not written there as a literal) from its class, imported now."""
        cls = self.loaded.get(name)
        if cls is None:
            values = self.declared()[name].values if name in self.declared() else {}
            if attribute in values:
                return values[attribute]
            if attribute in _FROM_TEXT:  # not written: the default (a test holds the text to the classes)
                return getattr(Reporter, attribute, default)
            cls = self[name]
        return getattr(cls, attribute, default)


_FROM_TEXT = frozenset({"name", "commands", "extra", "requires"})
"""The declarations the command line reads on every run: from a module's text only, never by importing it."""


@functools.cache
def _discover(path: tuple[str, ...]) -> dict[str, Declared]:
    """The formats the modules on `path` (the package's ``__path__``) declare, by name, read from their text."""
    found: dict[str, Declared] = {}
    for info in pkgutil.iter_modules(list(path)):
        if info.name.startswith("_") or info.ispkg:
            continue
        module = f"{__package__}.{info.name}"
        spec = info.module_finder.find_spec(module, None)
        source = _source(spec, module)
        declarations = None if source is None else _declarations(module, source)
        if declarations is None:  # no text to read (a compiled module), or not written as expected: ask the class
            importlib.import_module(module)
            declarations = [
                Declared(module, {"name": name}) for name, cls in REPORTERS.loaded.items() if cls.__module__ == module
            ]
        for declared in declarations:
            other = found.get(declared.values["name"])
            if other is not None:
                raise BlaslogError(
                    f"the output format {declared.values['name']!r} is declared by {other.module} and by {module}"
                )
            found[declared.values["name"]] = declared
    return found


def _source(spec: Any, module: str) -> str | None:
    loader = getattr(spec, "loader", None)
    try:
        return loader.get_source(module) if loader is not None else None
    except (ImportError, OSError):
        return None


REPORTERS = _Registry()


class Reporter(ABC):
    """Renders a Report as text."""

    name: ClassVar[str]
    """The --format value."""
    commands: ClassVar[tuple[str, ...]] = ()
    """The commands that offer it in --format and --report (`parse`, `summary`, `check`, `diff`, `emulate`)."""
    description: ClassVar[str] = ""
    """One line for --help."""
    stable: ClassVar[bool] = False
    """True when the output is a machine-readable contract."""
    extra: ClassVar[str | None] = None
    """The optional extra of blaslog it needs (``pip install 'blaslog[EXTRA]'``), or None."""
    requires: ClassVar[tuple[str, ...]] = ()
    """The modules of that extra it imports when rendering: without one, the format is refused before any
    input is read (:func:`ready`)."""
    defuse_style: ClassVar[str] = "text"
    """How `##[` is escaped in this output (see :func:`defuse_commands`)."""
    step_summary: ClassVar[bool] = False
    """True when writing it also appends the report's Markdown to the CI job's summary (GITHUB_STEP_SUMMARY)."""

    @abstractmethod
    def render(self, report: Report) -> str:
        """The whole output."""

    def for_output(self, path: str | None, color: str = "auto") -> Reporter:
        """The reporter that writes to `path` (None: standard output) with the `--color` choice `color`: itself,
        or one fitted to the terminal the output goes to."""
        return self

    def spools(self) -> bool:
        """True when `parse` writes its records as they are read into a spool, laid out once the last is read
        (the plain table: its columns' widths are known only then), where this reporter does not stream."""
        return False

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
    """Class decorator: add a reporter to REPORTERS under its name (ValueError when another class has it).

    The declarations the command line needs before the module is imported (`name`, `commands`, `extra`,
    `requires`; `description` too when it is a plain string) are written as literals in the class body, before
    its first method: the registry reads them from the module's text."""
    other = REPORTERS.loaded.get(cls.name)
    if other is not None and (other.__module__, other.__qualname__) != (cls.__module__, cls.__qualname__):
        raise ValueError(f"output format {cls.name!r} is registered already ({other.__module__}.{other.__qualname__})")
    REPORTERS.loaded[cls.name] = cls
    return cls


def offered(command: str) -> tuple[str, ...]:
    """The formats `command` writes (those that declare it in `commands`): the ones most commands write
    first, then by name."""
    names = [name for name in REPORTERS if command in REPORTERS.declaration(name, "commands", ())]
    return tuple(sorted(names, key=lambda name: (-len(REPORTERS.declaration(name, "commands", ())), name)))


def describe(name: str) -> str:
    """The one line of --help on the format `name`."""
    return str(REPORTERS.declaration(name, "description", "") or "")


def ready(name: str) -> None:
    """Nothing when the format `name` can be written here; BlaslogError naming the extra to install when a
    module it requires is missing (checked by importing it, as rendering would)."""
    requires = REPORTERS.declaration(name, "requires", ())
    try:
        for module in requires:
            importlib.import_module(module)
    except ImportError as exc:
        extra = REPORTERS.declaration(name, "extra")
        hint = f": pip install 'blaslog[{extra}]'" if extra else ""
        missing = exc.name or "a module"
        raise BlaslogError(
            f"--format {name} needs {' and '.join(requires)} ({missing} is not installed){hint}"
        ) from None


def get_reporter(name: str) -> Reporter:
    """The reporter for a --format value; BlaslogError with a suggestion for an unknown one."""
    try:
        return REPORTERS[name]()
    except KeyError:
        import difflib  # (only to suggest a name)

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
