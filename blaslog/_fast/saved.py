"""Line shapes learnt by earlier processes: the templates the grammars made, kept in the user's cache folder.

A log's first megabyte costs more than any later one: each record shape seen for the first time runs its
grammar and has its template made (about a millisecond each; the benchmark's corpus of public logs holds some
390 shapes in its first megabyte, a third of the time it takes to read all 100 MB of it). An investigation
reads the same program's logs again and again (`summary`, `diff`, `check`, the test run again), and each
process used to learn the same shapes anew. Now the templates a process learns are saved when it ends, and a
later process starts with them: the records are the same (a template is a function of its shape and of the
code that made it, the rule the shape cache of one process rests on already), made without the grammar.

What is saved: per dialect (by name), each VOLATILE shape's Template (or that the shape is uncacheable), and
the families of shapes (see ``ShapeCache._derive``), at most :data:`SAVED` templates, the newest kept. The file
is named after a fingerprint of the code that makes templates (every module, grammar and extension of the
package: names, sizes and modification times; Python's and lark's versions; the C extension in use or not),
so code that changed never reads shapes that older code learnt; the files of other fingerprints are removed
when one is saved.

Trust: the file is read only when the user's cache folder and the file are private (``_usercache.py``), and
by an unpickler that names nothing but the template classes and the record classes, so that no other class or
function can be called. The saved texts are the parts of log records that are no volatile value (function
names, types, messages): they stay in that private folder. ``BLASLOG_SAVED_SHAPES=0`` (or
``BLASLOG_CACHE_DIR=off``, or the shape cache switched off) reads and saves none; ``blaslog`` then learns every
shape in every process, as before.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import enum
import hashlib
import io
import os
import pickle
import sys
from pathlib import Path
from typing import Any

import blaslog._usercache as usercache
from blaslog._fast import _c
from blaslog._fast.shapes import keep
from blaslog._fast.templates import UNCACHEABLE

SAVED = 2048
"""Most templates kept in the file (a training log has a few hundred shapes; a file of every shape ever seen
would grow without end, and cost its reading in every process)."""

MAX_BYTES = 16 << 20
"""Largest file read (2048 templates of long records)."""

_PREFIX = "shapes-"


class Store:
    """The shapes this process knows from earlier processes and has learnt itself, by dialect name."""

    def __init__(self, templates: dict[str, dict[str, Any]], families: dict[str, dict[Any, Any]]) -> None:
        self.templates = templates
        """Dialect name -> VOLATILE shape -> Template, or UNCACHEABLE."""
        self.families = families
        """Dialect name -> a family's pieces -> its ``_Family``, or False (see ``ShapeCache._families``)."""
        self.learnt = 0
        """Templates and families learnt by this process (saved when it ends, when there are any)."""

    def template(self, dialect: str, key: str, template: Any) -> None:
        """Note a template this process learnt with a grammar."""
        keep(self.templates.setdefault(dialect, {}), key, template)
        self.learnt += 1

    def family(self, dialect: str, pieces: Any, family: Any) -> None:
        """Note a family this process learnt, or taught a template."""
        keep(self.families.setdefault(dialect, {}), pieces, family)
        self.learnt += 1


_PROCESS: list[Store | None] = []


def store() -> Store | None:
    """This process's store of shapes (read from the cache folder when first asked for), or None where shapes
    are not saved."""
    if not _PROCESS:
        _PROCESS.append(_load() if switched_on() else None)
    return _PROCESS[0]


def switched_on() -> bool:
    """Whether shapes are read and saved (BLASLOG_SAVED_SHAPES not 0, the shape cache on, a cache folder)."""
    return _c.shape_cache and os.environ.get("BLASLOG_SAVED_SHAPES", "1") != "0" and usercache.folder() is not None


def forget() -> None:
    """Drop this process's store (the next :func:`store` reads the file again): for tests."""
    _PROCESS.clear()


def _load() -> Store:
    found = Store({}, {})
    with usercache.opened() as cache:
        if cache is not None:
            data = usercache.read(cache, _name(), MAX_BYTES)
            if data is not None:
                try:
                    loaded = _Classes(io.BytesIO(data)).load()
                except Exception:  # a broken or foreign file (any error the unpickler raises): learnt again
                    loaded = None
                found = _checked(loaded) or found
    atexit.register(save)
    return found


def save() -> bool:
    """Save what this process learnt (run when it ends); False where nothing was saved."""
    found = _PROCESS[0] if _PROCESS else None
    if found is None or not found.learnt:
        return False
    templates, families = _newest(found)
    try:
        data = pickle.dumps((_VERSION, templates, families), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # a value pickle cannot hold (a build step's own object): nothing saved, as without a cache
        return False
    if len(data) > MAX_BYTES:
        return False
    with usercache.opened() as cache:
        if cache is None or not usercache.write(cache, _name(), data):
            return False
        found.learnt = 0
        for other in os.listdir(cache):  # the shapes of code that changed since
            if other.startswith(_PREFIX) and other != _name():
                with contextlib.suppress(OSError):
                    os.unlink(other, dir_fd=cache)
    return True


def at_worker_exit() -> None:
    """Save what this process learnt when it ends as a worker of a process pool (which ends without running the
    atexit functions that :func:`save` is registered with)."""
    from multiprocessing import util

    util.Finalize(None, save, exitpriority=10)


_VERSION = 1
"""The layout of a saved file."""


def _newest(found: Store) -> tuple[dict[str, dict[str, Any]], dict[str, dict[Any, Any]]]:
    """The store's tables as saved: UNCACHEABLE as None, at most SAVED templates (the last learnt)."""
    entries = [
        ("t", dialect, key, None if value is UNCACHEABLE else value)
        for dialect, table in found.templates.items()
        for key, value in table.items()
    ] + [("f", dialect, key, value) for dialect, table in found.families.items() for key, value in table.items()]
    total = 0
    kept = []
    for entry in reversed(entries):
        value = entry[3]
        total += len(value.made) if entry[0] == "f" and value else 1
        if total > SAVED:
            break
        kept.append(entry)
    templates: dict[str, dict[str, Any]] = {}
    families: dict[str, dict[Any, Any]] = {}
    for kind, dialect, key, value in reversed(kept):
        (templates if kind == "t" else families).setdefault(dialect, {})[key] = value
    return templates, families


def _checked(loaded: Any) -> Store | None:
    """The Store of what a file held, or None where it is not what :func:`save` writes."""
    if not (isinstance(loaded, tuple) and len(loaded) == 3 and loaded[0] == _VERSION):
        return None
    _, templates, families = loaded
    if not (isinstance(templates, dict) and isinstance(families, dict)):
        return None
    tables: dict[str, dict[str, Any]] = {}
    for dialect, table in templates.items():
        if not isinstance(dialect, str) or not isinstance(table, dict):
            return None
        tables[dialect] = {key: UNCACHEABLE if value is None else value for key, value in table.items()}
    return Store(tables, families)


def _name() -> str:
    return f"{_PREFIX}{_fingerprint()}.pickle"


_FINGERPRINT: list[str] = []


def _fingerprint() -> str:
    """The fingerprint of the code that makes templates (see the module's text)."""
    if not _FINGERPRINT:
        package = Path(__file__).resolve().parents[1]
        digest = hashlib.sha256(f"{sys.version}\0{_lark_version()}\0{_c.speedups is None}".encode())
        for folder in (package, package.parent / "grammars"):
            for root, dirs, files in os.walk(folder):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for name in sorted(files):
                    if name.endswith((".py", ".lark", ".so", ".pyd")):
                        info = os.stat(os.path.join(root, name))
                        digest.update(f"{root}/{name}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
        _FINGERPRINT.append(digest.hexdigest()[:40])
    return _FINGERPRINT[0]


def _lark_version() -> str:
    import lark

    return str(lark.__version__)


_TEMPLATES = frozenset({"Template", "Slot", "IntSlot", "Text"})


class _Classes(pickle.Unpickler):
    """An unpickler that names only the classes of templates (``templates.py``, ``cache._Family``) and the
    record classes and enums of ``blaslog.records``: a file naming any other class or function is refused."""

    def find_class(self, module: str, name: str) -> Any:
        found = getattr(sys.modules.get(module), name, None) if module.startswith("blaslog.") else None
        allowed = (
            (module == "blaslog._fast.templates" and name in _TEMPLATES)
            or (module == "blaslog._fast.cache" and name == "_Family")
            or (
                module == "blaslog.records"
                and isinstance(found, type)
                and (dataclasses.is_dataclass(found) or issubclass(found, enum.Enum))
            )
        )
        if not allowed or found is None:
            raise pickle.UnpicklingError(f"saved shapes name {module}.{name}: only template and record classes")
        return found


__all__ = ["SAVED", "Store", "at_worker_exit", "forget", "save", "store", "switched_on"]
