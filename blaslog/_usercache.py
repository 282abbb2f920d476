"""The user's cache folder: what blaslog saves between processes, read back only when it is safe to.

Two things are saved there: the analysed grammars (``formats/_grammars.py``) and the line shapes learnt from
logs (``_fast/saved.py``). Where the folder is:

* ``BLASLOG_CACHE_DIR`` when set (empty, ``0`` or ``off``: no cache at all);
* otherwise ``$XDG_CACHE_HOME/blaslog`` (an absolute path), or ``~/.cache/blaslog``.

A saved file decides how logs are read, so only a regular file that this user owns and nobody else can read or
write is used, opened without following a symbolic link, in a folder that is no symbolic link, that this user
owns and that nobody else can write to. A file is written under a temporary name and renamed, so that a reader
never sees half of it. Anything wrong with the cache (a read-only or missing home, a broken file) only costs
the work the file would have spared. Systems without ``O_NOFOLLOW`` have no cache.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

_FLAGS = getattr(os, "O_NOFOLLOW", 0) and getattr(os, "O_DIRECTORY", 0)
"""Whether this system can open files without following links (else: no cache)."""


def folder() -> Path | None:
    """Where the cache is to be (not checked yet), or None where there is to be none."""
    chosen = os.environ.get("BLASLOG_CACHE_DIR")
    if chosen is not None and chosen.strip().lower() in ("", "0", "off"):
        return None
    if chosen:
        return Path(chosen)
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    try:
        base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"  # a relative XDG path is ignored
    except (RuntimeError, KeyError, OSError):  # no home folder to expand (HOME unset, no passwd entry)
        return None
    return base / "blaslog"


@contextlib.contextmanager
def opened() -> Iterator[int | None]:
    """A descriptor of the cache folder, opened without following a link, when it is safe to use; else None."""
    where = folder() if _FLAGS else None
    fd = None
    if where is not None:
        try:
            where.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(where, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
            info = os.fstat(fd)
            if not (stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o022):
                os.close(fd)
                fd = None
        except (OSError, RuntimeError):
            fd = None
    try:
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


def read(cache: int, name: str, limit: int) -> bytes | None:
    """The bytes of file `name` of the cache folder, when it is there, private and at most `limit` bytes."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0), dir_fd=cache)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not (stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077):
            return None
        if info.st_size > limit:
            return None
        try:
            return handle.read(limit + 1)
        except OSError:
            return None


def write(cache: int, name: str, data: bytes) -> bool:
    """Save `data` as file `name` of the cache folder (private to this user, replaced whole); False where it
    could not be (a read-only or full folder: nothing saved)."""
    import secrets  # (only when something is saved)

    temporary = f".{name}-{secrets.token_hex(8)}.tmp"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=cache)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temporary, name, src_dir_fd=cache, dst_dir_fd=cache)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=cache)
        return False
    return True


__all__ = ["folder", "opened", "read", "write"]
