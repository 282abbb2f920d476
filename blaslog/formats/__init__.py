"""The log dialects blaslog reads: their registry, and per-line sniffing among them.

Each dialect is one :class:`~blaslog.formats._base.LogFormat` subclass (one
module, one grammar in ``grammars/``) that declares everything the rest of
blaslog needs to know about it: how to find and parse its records, where a big
file of it may be cut, which other dialect logs the same calls, what looks
like its output though it is none, and how to turn its logging on. The rest of
the package reads those declarations through the functions here
(:func:`format_names`, :func:`boundary_regex`, :func:`same_calls`,
:func:`near_miss`, :func:`logging_hints`, :func:`loggings`, :func:`tuning_formats`),
and the record model is told what it needs of a library (``records.declare_library``:
how its function names fold into families, whether it prints a compute type as a
data type), so registering a class (:func:`register_format`) is all a new dialect
needs. CONTRIBUTING.md lists the files a new dialect touches.

Sniffing is per line, so a file that mixes dialects (cuBLASLt and cuBLAS on
one stdout, rocBLAS trace and bench in one log) parses whole;
``--log-format`` restricts it to the named dialects.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import pkgutil
import re
from collections.abc import Iterable, Iterator
from typing import TypeVar

from blaslog.errors import UnknownFormatError
from blaslog.formats._base import LogFormat
from blaslog.formats._switch import LogSwitch
from blaslog.records import TUNING_FORMATS, declare_library

F = TypeVar("F", bound=type[LogFormat])

_REGISTRY: dict[str, type[LogFormat]] = {}
"""Every registered dialect by name, in sniffing order (a tie between two dialects' starts goes to the first)."""


def register_format(cls: F) -> F:
    """Add a dialect (usable as a class decorator); raises ValueError when another class has its name."""
    other = _REGISTRY.get(cls.name)
    if other is not None and other is not cls:
        raise ValueError(f"log format {cls.name!r} is registered already ({other.__module__}.{other.__qualname__})")
    same_as = cls.same_calls_as
    if same_as is not None and same_as == cls.name:
        raise ValueError(f"log format {cls.name!r} cannot log the same calls as itself")
    logging = cls.logging
    if logging is not None:
        for other in _REGISTRY.values():
            if other is not cls and other.logging is not None and other.logging.name == logging.name:
                raise ValueError(f"log format {cls.name!r}: {other.name!r} declares the logging of {logging.name!r}")
    _REGISTRY[cls.name] = cls
    declare_library(
        cls.library,
        cls.name,
        family=cls.function_family,
        compute_as_data_type=cls.compute_as_data_type,
        tuning=cls.tuning,
    )
    return cls


def unregister_format(name: str) -> type[LogFormat]:
    """Remove a dialect registered before, by name; returns its class (KeyError when there is none)."""
    cls = _REGISTRY.pop(name)
    TUNING_FORMATS.discard(name)
    return cls


@contextlib.contextmanager
def registered(cls: type[LogFormat]) -> Iterator[type[LogFormat]]:
    """Register `cls` for the duration of a ``with`` block (a test's toy dialect)."""
    register_format(cls)
    try:
        yield cls
    finally:
        if _REGISTRY.get(cls.name) is cls:
            unregister_format(cls.name)


def format_classes() -> tuple[type[LogFormat], ...]:
    """Every registered dialect, in sniffing order."""
    return tuple(_REGISTRY.values())


def format_names() -> tuple[str, ...]:
    """The `--log-format` names of every registered dialect, in sniffing order."""
    return tuple(_REGISTRY)


TAG_MAX = 256
"""Bytes of other text a line may hold before a record's start where a piece of a big file may begin: a
launcher's tag (``[rank0]: `` from torchrun, ``0: `` from ``srun --label``, ``[1,0]<stdout>:`` from mpirun)."""


def boundary_regex() -> re.Pattern[bytes]:
    """Matches a line end (``\\n``) after which a piece of a big file may begin: the next line begins a
    one-line record of a dialect that declares a `boundary`, perhaps after a launcher's tag of at most
    :data:`TAG_MAX` bytes (unless the dialect's `start` is anchored at the line's start: ``^``). A candidate:
    :meth:`Sniffer.cuts` has the last word. Never matches when no dialect declares a boundary."""
    return _boundary(format_classes())


def same_calls() -> tuple[tuple[str, str], ...]:
    """(kept, left out) pairs of dialects that log the same calls: in an input holding both, the records of
    the second are left out so that each call counts once (from each dialect's `same_calls_as`)."""
    return tuple((cls.same_calls_as, cls.name) for cls in _REGISTRY.values() if cls.same_calls_as is not None)


def near_miss(line: str) -> bool:
    """True for a line that looks like BLAS library output though no dialect begins a record with it."""
    return _near_miss(format_classes()).search(line) is not None


def banner(line: str) -> bool:
    """True for a line a library writes once when a process starts using it (every registered dialect's
    `banner`: a version line, a handle's creation)."""
    return _banner(format_classes()).search(line) is not None


@functools.lru_cache(maxsize=8)
def _banner(classes: tuple[type[LogFormat], ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{cls.banner})" for cls in classes if cls.banner) or "(?!)")


def loggings() -> tuple[LogSwitch, ...]:
    """How `blaslog record` turns each library's logging on (every registered dialect's `logging`, in
    registration order): the libraries `--libs` can name."""
    return tuple(cls.logging for cls in _REGISTRY.values() if cls.logging is not None)


def tuning_formats() -> tuple[str, ...]:
    """The dialects whose records are tuning choices, not executed calls (each dialect's `tuning`)."""
    return tuple(cls.name for cls in _REGISTRY.values() if cls.tuning)


def logging_hints() -> tuple[str, ...]:
    """How to turn each library's logging on (each registered dialect's `logging_hint`, each once, in
    registration order): what to suggest when an input holds no record."""
    return tuple(dict.fromkeys(cls.logging_hint for cls in _REGISTRY.values() if cls.logging_hint))


def library_hints() -> dict[str, tuple[str, ...]]:
    """Each library blaslog reads (every registered dialect's `library`, in registration order) with how to turn
    its logging on (its dialects' `logging_hint` s, each once; none where the library always writes its output):
    what `blaslog --help` lists."""
    found: dict[str, list[str]] = {}
    for cls in _REGISTRY.values():
        hints = found.setdefault(cls.library, [])
        if cls.logging_hint and cls.logging_hint not in hints:
            hints.append(cls.logging_hint)
    return {library: tuple(hints) for library, hints in found.items()}


@functools.lru_cache(maxsize=8)
def _boundary(classes: tuple[type[LogFormat], ...]) -> re.Pattern[bytes]:
    bare: list[bytes] = []  # dialects whose records begin at the line's start
    tagged: list[bytes] = []  # the others: a launcher's tag may come first
    for cls in classes:
        if cls.boundary is not None:
            (bare if cls.start.pattern.startswith("^") else tagged).append(cls.boundary)
    sources = [b"(?=(?:" + b"|".join(bare) + b"))"] if bare else []
    if tagged:
        sources.append(rb"(?=[^\n]{0,%d}?(?:" % TAG_MAX + b"|".join(tagged) + b"))")
    return re.compile(rb"\n(?:" + b"|".join(sources) + b")" if sources else rb"(?!)")


@functools.lru_cache(maxsize=32)
def _text_boundary(boundary: bytes) -> re.Pattern[str]:
    return re.compile(r"\s*(?:" + boundary.decode("ascii") + ")")  # a start may take the blanks before it


@functools.lru_cache(maxsize=8)
def _near_miss(classes: tuple[type[LogFormat], ...]) -> re.Pattern[str]:
    sources = [f"(?:{cls.near_miss})" for cls in classes if cls.near_miss is not None]
    return re.compile("|".join(sources) if sources else "(?!)")


def _shipped() -> list[type[LogFormat]]:
    """The dialect classes of the package's own modules (every module of ``blaslog/formats`` whose name does not
    begin with `_`): each class defined there that names itself (`name`), in `sniff_rank` order, then module and
    definition order."""
    found: list[type[LogFormat]] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.extend(
            value
            for value in vars(module).values()
            if isinstance(value, type)
            and issubclass(value, LogFormat)
            and value.__module__ == module.__name__
            and "name" in vars(value)
        )
    return sorted(found, key=lambda cls: cls.sniff_rank)


for _cls in _shipped():
    register_format(_cls)

FORMAT_CLASSES: tuple[type[LogFormat], ...] = format_classes()
"""The dialects blaslog comes with, in sniffing order (:func:`format_classes` adds those registered later)."""

FORMAT_NAMES: tuple[str, ...] = format_names()
"""The names of the dialects blaslog comes with (:func:`format_names` adds those registered later)."""


class Sniffer:
    """Finds which dialect, if any, begins a record on a line (among the dialects registered when it is made).

    Each dialect declares texts one of which every line it begins a record in holds (`start_signs`): one search
    settles the lines that hold none, a substring test per sign finds which of them a line holds, and only the
    `start` patterns of those dialects run, in one expression per set of dialects (the same answer as running
    every dialect's: a dialect whose signs a line lacks finds no record in it). What a line of at most
    :data:`REMEMBERED` characters holding a sign was found to begin is remembered by its text, so that the lines
    a log repeats (a program's prints that look like a library's, the lines of records that span lines) are
    searched once."""

    def __init__(self, names: Iterable[str] | None = None) -> None:
        wanted = resolve_formats(names)
        classes = format_classes()
        self.formats = [cls() for cls in classes if cls.name in wanted]
        self._by_group = {f"f{i}": fmt for i, fmt in enumerate(self.formats)}
        self._near_miss = _near_miss(classes)
        self._signs: re.Pattern[str] | None = None
        """Finds whether a line holds any sign; None when a dialect declares none."""
        self._owners: dict[str, int] = {}
        """A sign -> the dialects (bits by their place in `formats`) that declare it."""
        if all(fmt.start_signs for fmt in self.formats):
            for bit, fmt in enumerate(self.formats):
                for sign in fmt.start_signs or ():
                    self._owners[sign] = self._owners.get(sign, 0) | 1 << bit
            self._signs = re.compile("|".join(map(re.escape, self._owners)))
        self._subsets: dict[int, re.Pattern[str]] = {}
        """Dialect bits -> the `start` expression of those dialects only."""
        self._found: dict[str, tuple[LogFormat, int] | None] = {}
        """A line holding a sign -> what :meth:`sniff` says of it (bounded, see `keep`)."""
        self._near: dict[str, bool] = {}
        """A line -> what :meth:`near_miss` says of it."""

    @functools.cached_property
    def _start(self) -> re.Pattern[str]:
        """Every dialect's `start` in one expression: what is searched where some dialect declares no signs
        (built when first needed, as it is not needed where every dialect does)."""
        return _starts(tuple(self.formats), range(len(self.formats)))

    def sniff(self, line: str) -> tuple[LogFormat, int] | None:
        """(dialect, column where its record starts) for a line that begins a record, else None."""
        signs = self._signs
        if signs is None:
            return self._search(self._start, line)
        if len(line) > REMEMBERED:
            return self._sniff(line)
        found = self._found.get(line, _UNKNOWN)
        if found is _UNKNOWN:
            if signs.search(line) is None:
                return None  # no dialect's sign: most lines that are not a library's, settled in one search
            found = self._sniff(line)
            if len(self._found) >= _KEPT:
                self._found.clear()
            self._found[line] = found
        return found  # type: ignore[return-value]

    def _sniff(self, line: str) -> tuple[LogFormat, int] | None:
        bits = 0
        for sign, owners in self._owners.items():  # a substring test per sign: five times faster than finding
            if sign in line:  # every place with `signs`, and each sign counts where a longer one holds it too
                bits |= owners
        if not bits:
            return None
        pattern = self._subsets.get(bits)
        if pattern is None:
            wanted = [i for i in range(len(self.formats)) if bits >> i & 1]
            pattern = self._subsets[bits] = _starts(tuple(self.formats), wanted)
        return self._search(pattern, line)

    def _search(self, pattern: re.Pattern[str], line: str) -> tuple[LogFormat, int] | None:
        match = pattern.search(line)
        if match is None:
            return None
        return self._by_group[match.lastgroup or ""], match.start()

    def cuts(self, line: str) -> bool:
        """True when a piece of a big input may begin with `line`: the record it begins (perhaps after a
        launcher's tag) is of a dialect that declares a `boundary`, and matches it (see :func:`boundary_regex`,
        which finds the candidates)."""
        found = self.sniff(line)
        if found is None:
            return False
        fmt, column = found
        return fmt.boundary is not None and _text_boundary(fmt.boundary).match(line, column) is not None

    def near_miss(self, line: str) -> bool:
        """True for a line that looks like BLAS library output though no dialect starts a record with it
        (every registered dialect's `near_miss`, whichever dialects this sniffer reads); remembered by the
        line's text, as :meth:`sniff` remembers."""
        if len(line) > REMEMBERED:
            return self._near_miss.search(line) is not None
        found = self._near.get(line)
        if found is None:
            found = self._near_miss.search(line) is not None
            if len(self._near) >= _KEPT:
                self._near.clear()
            self._near[line] = found
        return found


REMEMBERED = 1024
"""Longest line whose sniffing a :class:`Sniffer` remembers (its tables then hold some 40 MB at most)."""

_KEPT = 20_000
"""Most lines a Sniffer's tables remember; a full table is emptied and filled again."""

_UNKNOWN = object()


def _starts(formats: tuple[LogFormat, ...], wanted: Iterable[int]) -> re.Pattern[str]:
    """One expression of the `start` patterns of ``formats[i]`` for each i `wanted` (group ``f<i>``, in order:
    a tie between two dialects' starts goes to the first)."""
    pattern = "|".join(f"(?P<f{i}>{formats[i].start.pattern})" for i in wanted)
    return re.compile(pattern or "(?!)")


def resolve_formats(names: Iterable[str] | None) -> set[str]:
    """The dialect names to use; unknown names raise UnknownFormatError with a suggestion.

    Besides a dialect's name: a library's name that is no dialect's (`rocblas`), or ``LIBRARY-all``
    (`hipblaslt-all`), names every dialect of that library.
    """
    known = format_names()
    if not names:
        return set(known)
    libraries: dict[str, set[str]] = {}
    for cls in _REGISTRY.values():
        library = cls.library.lower()
        libraries.setdefault(f"{library}-all", set()).add(cls.name)
        if library not in _REGISTRY:
            libraries.setdefault(library, set()).add(cls.name)
    out = set()
    for name in names:
        for part in name.split(","):
            part = part.strip().lower()
            if part in libraries:
                out |= libraries[part]
                continue
            if part not in known:
                import difflib  # (only to suggest a name)

                close = difflib.get_close_matches(part, known, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise UnknownFormatError(f"unknown log format {part!r}{hint} Known formats: {', '.join(known)}")
            out.add(part)
    return out


__all__ = [
    "FORMAT_CLASSES",
    "FORMAT_NAMES",
    "LogFormat",
    "LogSwitch",
    "Sniffer",
    "banner",
    "boundary_regex",
    "format_classes",
    "format_names",
    "library_hints",
    "logging_hints",
    "loggings",
    "near_miss",
    "register_format",
    "registered",
    "resolve_formats",
    "same_calls",
    "tuning_formats",
    "unregister_format",
]
