"""The shipped grammars as LALR parsers, with the analysed parsers kept in the user's cache folder.

Building a parser from a grammar (reading it, then the LALR analysis) takes 40-60 ms per grammar, in every
process: more than parsing a 10 MB log's new shapes. The built parser's tables (``Lark.memo_serialize``: dicts,
lists, strings, numbers) are pickled under a key made of every grammar file's bytes, the options, lark's
version and Python's, and later processes read them back in under a millisecond (saved as a Python literal, they
took 11-15 ms to read), from the user's cache folder (``_usercache.py``: where it is, and when a file in it is
used at all).

Nothing read from the cache can run code: it is read by an unpickler that refuses every global, so that no
class or function can be named, let alone called; only dicts, lists, tuples, strings, numbers, booleans and
None come back (the "restricting globals" recipe of the `pickle` documentation). A file from another version or
a broken one only costs the build: the parser is then built as without a cache.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import pickle
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import blaslog._lark as _lark
import blaslog._usercache as usercache

if TYPE_CHECKING:
    from lark import Lark

OPTIONS: dict[str, Any] = {"parser": "lalr"}
"""How every grammar is built (with its `start` rule); part of the cache key."""

MAX_SAVED = 4 << 20
"""Largest cache file read (the biggest parser's tables are some 40 kB)."""


@functools.cache
def load_grammar(filename: str, start: str = "start") -> Lark:
    """The LALR parser of rule `start` of a grammar shipped in ``blaslog/grammars`` (or the source tree's
    ``grammars/``), from the cache when it holds it."""
    Lark = _lark.Lark  # lark is imported here: a process that runs no grammar never imports it
    with _without_collision_check():
        package = Path(__file__).resolve().parents[1]
        folder = package / "grammars" if (package / "grammars").is_dir() else package.parent / "grammars"
        if not folder.is_dir():  # inside a zip: no folder to key or cache
            return Lark.open_from_package("blaslog", filename, ("grammars",), start=start, **OPTIONS)
        name = f"grammar-{_key(folder, filename, start)}.pickle"
        with usercache.opened() as cache:
            if cache is not None:
                tables = _read(cache, name)
                if tables is not None:
                    with contextlib.suppress(Exception):  # tables this lark cannot read: built again
                        return Lark.load(tables)
            parser = Lark.open(str(folder / filename), start=start, import_paths=[str(folder)], **OPTIONS)
            if cache is not None:
                _write(cache, name, parser)
            return parser


def cache_folder() -> Path | None:
    """The folder of saved parsers, or None where there is to be no cache or it is not safe to use."""
    with usercache.opened() as cache:
        return None if cache is None else usercache.folder()


def _key(folder: Path, filename: str, start: str) -> str:
    import lark

    options = repr(sorted(OPTIONS.items()))
    digest = hashlib.sha256(f"{filename}\0{start}\0{options}\0{lark.__version__}\0{sys.version_info[:2]}".encode())
    for grammar in sorted(folder.glob("*.lark")):  # a grammar may import any other
        digest.update(grammar.name.encode() + b"\0" + grammar.read_bytes() + b"\0")
    return digest.hexdigest()[:40]


def _read(cache: int, name: str) -> dict[str, Any] | None:
    """The saved tables of `name`, when the file is there and private; None otherwise."""
    data = usercache.read(cache, name, MAX_SAVED)
    if data is None:
        return None
    try:
        tables = _DataOnly(io.BytesIO(data)).load()
    except Exception:  # a broken or foreign file (any error the unpickler raises): built again
        return None
    return tables if isinstance(tables, dict) and {"data", "memo"} <= tables.keys() else None


def _write(cache: int, name: str, parser: Lark) -> None:
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    data, memo = parser.memo_serialize([TerminalDef, Rule])
    usercache.write(cache, name, pickle.dumps({"data": data, "memo": memo}, protocol=4))


class _DataOnly(pickle.Unpickler):
    """An unpickler of plain data: a pickle that names any class or function (the only way one can run code)
    is refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"a saved parser names {module}.{name}: only plain data is read")


@contextlib.contextmanager
def _without_collision_check() -> Iterator[None]:
    """Lark looks for colliding terminals with `interegular` when that is installed (ML environments often
    have it): a check that only logs, takes about 0.3 s per process, and reports the collisions the
    contextual lexer resolves on purpose (TEXT and TOKEN in cublaslt.lark). Skip it while a grammar is built."""
    import lark.lexer

    saved = getattr(lark.lexer, "has_interegular", False)
    lark.lexer.has_interegular = False
    try:
        yield
    finally:
        lark.lexer.has_interegular = saved


__all__ = ["cache_folder", "load_grammar"]
