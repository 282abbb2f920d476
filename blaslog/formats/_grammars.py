"""The shipped grammars as LALR parsers, with the analysed parsers kept in the user's cache folder.

Building a parser from a grammar (reading it, then the LALR analysis) takes 40-60 ms per grammar, in every
process: more than parsing a 10 MB log's new shapes. The built parser is saved with ``Lark.save`` under a key
made of every grammar file's bytes, the rule, lark's version and Python's, and later processes load it in
about 2 ms. Where the cache lives:

* ``BLASLOG_CACHE_DIR`` when set (empty, ``0`` or ``off``: no cache);
* otherwise ``$XDG_CACHE_HOME/blaslog``, or ``~/.cache/blaslog``.

A saved parser is a pickle, so only a file that this user owns, in a folder that this user owns and nobody
else can write to, is loaded; it is written to a temporary file and renamed, so that a reader never sees half
of it. Anything wrong with the cache (a read-only home, a file from another version, a broken file) only costs
the build: the parser is then built as without a cache.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import sys
import tempfile
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import lark
from lark import Lark


@functools.cache
def load_grammar(filename: str, start: str = "start") -> Lark:
    """The LALR parser of rule `start` of a grammar shipped in ``blaslog/grammars`` (or the source tree's
    ``grammars/``), from the cache when it holds it."""
    packaged = resources.files("blaslog") / "grammars"
    folder = Path(str(packaged)) if packaged.is_dir() else Path(__file__).resolve().parents[2] / "grammars"
    cache = cache_folder()
    path = cache / f"grammar-{_key(folder, filename, start)}.pickle" if cache is not None else None
    with _without_collision_check():
        if path is not None:
            parser = _load(path)
            if parser is not None:
                return parser
        parser = Lark.open(str(folder / filename), parser="lalr", start=start, import_paths=[str(folder)])
        if path is not None:
            _save(parser, path)
        return parser


def cache_folder() -> Path | None:
    """The folder of saved parsers (created, private), or None where there is to be no cache or it is not safe."""
    chosen = os.environ.get("BLASLOG_CACHE_DIR")
    if chosen is not None and chosen.strip().lower() in ("", "0", "off"):
        return None
    folder = Path(chosen) if chosen else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "blaslog"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = folder.stat()
    except (OSError, RuntimeError):  # RuntimeError: no home folder to expand
        return None
    return folder if _private(info) else None


def _private(info: os.stat_result) -> bool:
    """Owned by this user and writable by nobody else."""
    return (not hasattr(os, "getuid") or info.st_uid == os.getuid()) and not info.st_mode & 0o022


def _key(folder: Path, filename: str, start: str) -> str:
    digest = hashlib.sha256(f"{filename}\0{start}\0{lark.__version__}\0{sys.version_info[:2]}".encode())
    for grammar in sorted(folder.glob("*.lark")):  # a grammar may import any other
        digest.update(grammar.name.encode() + b"\0" + grammar.read_bytes() + b"\0")
    return digest.hexdigest()[:40]


def _load(path: Path) -> Lark | None:
    try:
        with open(path, "rb") as handle:
            if not _private(os.fstat(handle.fileno())):
                return None
            return Lark.load(handle)
    except Exception:  # not there yet, or unreadable: built again
        return None


def _save(parser: Lark, path: Path) -> None:
    try:
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".grammar-", delete=False) as handle:
            try:
                parser.save(handle)
            except BaseException:
                os.unlink(handle.name)
                raise
        os.replace(handle.name, path)
    except Exception:  # a read-only or full cache folder: nothing saved
        return


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
