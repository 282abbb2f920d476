"""Which files a run is made of, and which rank wrote each.

A run on the command line is a file, a quoted glob (``**`` searches folders below), a folder (searched
recursively for BLAS logs, gzip too) or ``-``. Each file's rank is taken, in this order, from:

1. ``--rank-from REGEX``: the first group (or the whole match) of REGEX searched in the file's path;
1a. the manifest of a run folder (``run.json``, written by ``blaslog record``), which lists each log's rank;
2. a launcher's tag on the log lines (``[rank3]:`` from torchrun, ``[default3]:`` from older torch elastic,
   ``[1,3]<stdout>:`` from ``mpirun --tag-output``);
3. the path (``rank3``, ``rank_3``, ``rank-3``, ``attempt_0/3/``, ``-r3``, ``_r3``);
4. the place of the file in natural order (``rank2`` before ``rank10``): a guess, and said to be one.

Every report names each file's rank and how it was known (:attr:`RankedInput.how`).
"""

from __future__ import annotations

import functools
import glob
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from blaslog._hook.sitecustomize import MAX_RANK
from blaslog.errors import InputError

HEAD = 1 << 16
"""Bytes of a file read to find a launcher's tag or a BLAS record."""

#: Launchers' tags at a line's start (after its line end: searched in the text with a line end put before it), the
#: rank in one of the two groups. Led by a literal line end, so that the search skips to line ends at C speed (with
#: `^` and re.MULTILINE it tried every byte: half a millisecond per 64 KB head, per input).
_TAG = re.compile(rb"\n\[(?:(?:rank|default)(\d+)\]:|\d+,(\d+)\]<std(?:out|err)>:)")

#: The rank in a path: `rank3`, `rank_3`, `rank-3`, `attempt_0/3/`, `-r3`, `_r3` (not `r3` inside a word).
_PATH = re.compile(r"rank[_-]?(\d+)|attempt_\d+[/\\](\d+)(?:[/\\]|$)|(?:^|[-_./\\])r(\d+)(?=[-_./\\]|$)", re.IGNORECASE)

MANIFEST = "run.json"
"""The manifest that makes a folder a run folder (``blaslog record``): the command, its settings, each log's rank."""

#: File names under a folder that are never BLAS logs.
_SKIP_SUFFIXES = (".json", ".yaml.expected", ".expected", ".md", ".py", ".parquet", ".html", ".png")
"""Files a folder search never looks into. A `.csv` file is looked into: TunableOp results files are CSV (a
folder of them is a run), and a CSV of something else holds no line a BLAS dialect begins a record with."""


@dataclass(frozen=True, slots=True)
class RankedInput:
    """One input file of a run, with its rank."""

    path: str
    """The file (as found: the user's spelling, or below a folder the user named)."""
    rank: int | None
    """The rank that wrote it, or None when there is one input and nothing names its rank."""
    how: str
    """How the rank was known: `--rank-from`, `manifest`, `launcher tag`, `path`, `name order (guessed)`, or
    `single input`."""

    def label(self) -> str:
        """`rank 3` or the file name when the rank is unknown."""
        return f"rank {self.rank}" if self.rank is not None else self.path


def natural_key(text: str) -> tuple[object, ...]:
    """Sort key that puts `rank2` before `rank10`."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


def find_inputs(names: Sequence[str], *, looks_like_log: object = None) -> list[str]:
    """The files the arguments name: files and `-` as given, quoted globs expanded (``**`` recursive), folders
    searched recursively for files that hold BLAS log lines (`looks_like_log(path) -> bool` decides; by default
    every file not known to be something else). In natural order, each file once."""
    out: list[str] = []
    for name in names:
        if name == "-" or os.path.isfile(name):
            out.append(name)
        elif os.path.isdir(name) and read_manifest(name) is not None:
            out.extend(manifest_files(name))
        elif os.path.isdir(name):
            # a file that cannot be looked at (no read permission, a link to nothing) is kept: reading it says
            # so, rather than leaving it out unsaid
            found = [
                p
                for p in _walk(name)
                if looks_like_log is None or looks_like_log(p) or _unreadable(p)  # type: ignore[operator]
            ]
            if not found:
                raise InputError(
                    f"{name}: a folder, but no BLAS log was found under it (searched every file below it for "
                    "cuBLASLt, cuBLAS, rocBLAS or hipBLASLt lines, TunableOp results files and hipBLASLt tuning "
                    "files)"
                )
            out.extend(sorted(found, key=natural_key))
        elif glob.has_magic(name):
            files = [p for p in glob.glob(name, recursive=True) if os.path.isfile(p) or _unreadable(p)]
            if not files:
                raise InputError(f"{name}: no file matches this pattern")
            out.extend(sorted(files, key=natural_key))
        else:
            out.append(name)  # reading it says what is wrong
    # in natural order whatever the order they were named in (`-` first), so that reports do not depend on it;
    # a file reached twice (a `**` glob through a linked folder, `latest -> run7`) is read once, by its first name
    seen: set[object] = set()
    found = []
    for name in sorted(dict.fromkeys(out), key=lambda name: (name != "-", natural_key(name))):
        key = name if name == "-" else _file_id(name)
        if key not in seen:
            seen.add(key)
            found.append(name)
    return found


def _file_id(path: str) -> object:
    """What a file is, whatever it is named by: its device and inode (its real path where it cannot be looked at)."""
    try:
        info = os.stat(path)
    except OSError:
        return os.path.realpath(path)
    return (info.st_dev, info.st_ino)


def _unreadable(path: str) -> bool:
    """A link to nothing, or a regular file that cannot be opened for reading."""
    if not os.path.exists(path):
        return os.path.islink(path)
    if not os.path.isfile(path):
        return False  # a pipe or a device in the folder is not read
    try:
        with open(path, "rb"):
            return False
    except OSError:
        return True


def _walk(folder: str) -> Iterable[str]:
    for root, dirs, files in os.walk(folder):
        dirs.sort(key=natural_key)
        for file in files:
            if file.startswith(".") or file.endswith(_SKIP_SUFFIXES):
                continue
            yield os.path.join(root, file)


# ---- run folders (blaslog record) -------------------------------------------------------------------------------


def read_manifest(folder: str) -> dict[str, Any] | None:
    """The manifest of a run folder, or None when `folder` holds none (InputError when it cannot be read)."""
    path = os.path.join(folder, MANIFEST)
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return _manifest(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=64)
def _manifest(path: str, mtime: int, size: int) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{path}: a run folder's manifest that cannot be read ({exc})") from None
    if not isinstance(document, dict) or document.get("kind") != "blaslog-run":
        return None  # some other run.json: the folder is searched like any other
    problem = _manifest_problem(document)
    if problem is not None:
        raise InputError(
            f"{path}: a run folder's manifest that is not as `blaslog record` writes it ({problem}); it was "
            "edited or damaged: record the run again, or remove run.json to read the folder's logs as they are"
        )
    return document


#: The manifest's parts that are read, and what each must be: a mapping of names to values, a list of mappings.
_MAPPINGS = ("environment", "ranks")
_LISTS_OF_MAPPINGS = ("files", "gpus")
_RANK_MAPPINGS = ("environment", "settings", "versions")


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _manifest_problem(document: dict[str, Any]) -> str | None:
    """What is wrong with the shape of a blaslog-run manifest's parts that blaslog reads, or None."""
    for key in _MAPPINGS:
        if document.get(key) is not None and not isinstance(document[key], dict):
            return f"`{key}` is a {_kind(document[key])}, not a mapping"
    for key in _LISTS_OF_MAPPINGS:
        value = document.get(key)
        if value is not None and (not isinstance(value, list) or not all(isinstance(v, dict) for v in value)):
            return f"`{key}` is not a list of mappings"
    for gpu in document.get("gpus") or []:
        if not isinstance(gpu.get("name", ""), str):
            return "a GPU's `name` is not a text"
    problem = _ranks_problem(document.get("ranks") or {})
    if problem is not None:
        return problem
    for entry in document.get("files") or []:
        rank = entry.get("rank")
        if rank is not None and (type(rank) is not int or not 0 <= rank < MAX_RANK):
            return f"the rank of {str(entry.get('file'))[:80]!r} is {str(rank)[:20]}, not a rank number"
    world = document.get("world_size")
    if world is not None and (type(world) is not int or not 0 < world <= MAX_RANK):
        return f"`world_size` is {str(world)[:20]}, not a number of processes"
    return None


def _ranks_problem(ranks: dict[str, Any]) -> str | None:
    """What is wrong with a manifest's `ranks` mapping, or None."""
    for rank, info in ranks.items():
        if not re.fullmatch(r"[0-9]{1,7}", rank):
            return f"the key {rank[:20]!r} of `ranks` is not a rank number"
        if not isinstance(info, dict):
            return f"`ranks.{rank}` is a {_kind(info)}, not a mapping"
        for key in _RANK_MAPPINGS:
            if info.get(key) is not None and not isinstance(info[key], dict):
                return f"`ranks.{rank}.{key}` is a {_kind(info[key])}, not a mapping"
    return None


def manifest_files(folder: str) -> list[str]:
    """The logs a run folder's manifest lists that are there (gzipped or not since), in natural order."""
    manifest = read_manifest(folder) or {}
    out = []
    for entry in manifest.get("files") or []:
        name = entry.get("file") if isinstance(entry, dict) else None
        if not isinstance(name, str) or os.path.basename(name) != name:
            continue
        for candidate in (name, name.removesuffix(".gz"), name + ".gz"):
            if os.path.isfile(os.path.join(folder, candidate)):
                out.append(os.path.join(folder, candidate))
                break
    if not out:
        raise InputError(
            f"{folder}: a run folder ({MANIFEST}), but none of the logs it lists is there"
            + ("" if manifest.get("files") else " (it lists none: the recorded command logged no GEMM)")
        )
    return sorted(out, key=natural_key)


def manifest_rank(path: str) -> int | None:
    """The rank a run folder's manifest gives the file at `path` (None when it is in none, or unknown there)."""
    if path == "-":
        return None
    folder, name = os.path.split(path)
    try:
        manifest = read_manifest(folder or ".")
    except InputError:
        return None
    if manifest is None:
        return None
    wanted = {name, name.removesuffix(".gz"), name + ".gz"}
    for entry in manifest.get("files") or []:
        if isinstance(entry, dict) and entry.get("file") in wanted and isinstance(entry.get("rank"), int):
            return int(entry["rank"])
    return None


def rank_from_path(path: str, pattern: re.Pattern[str] | None = None) -> int | None:
    """The rank a path names (`pattern`'s first group, or the built-in patterns), or None."""
    if pattern is not None:
        match = pattern.search(path)
        if match is None:
            return None
        text = next((g for g in match.groups() if g is not None), match.group(0))
        digits = re.search(r"\d+", text)
        return int(digits.group()) if digits else None
    found = None
    for match in _PATH.finditer(path):  # the last mention wins: `run_r1/rank3.log` is rank 3
        found = int(next(g for g in match.groups() if g is not None))
    return found


def rank_from_tags(head: bytes) -> set[int]:
    """The ranks named by launchers' tags in the first lines of a file."""
    return {int(a or b) for a, b in _TAG.findall(b"\n" + head)}


def assign_ranks(paths: Sequence[str], heads: Sequence[bytes], rank_from: str | None = None) -> list[RankedInput]:
    """Each path with its rank (see the module's docstring); `heads` holds the first bytes of each file.

    Raises InputError when `rank_from` is not a valid regular expression or two files claim one rank."""
    pattern = _rank_pattern(rank_from)
    recorded = [None if rank_from else manifest_rank(path) for path in paths]
    if any(rank is not None for rank in recorded):
        return _with_manifest_ranks(paths, heads, recorded)
    out = [_named_rank(path, head, pattern) for path, head in zip(paths, heads, strict=True)]
    if len(paths) == 1:  # one input needs no rank: --rank-from (meant for the other side of a diff) may miss it
        return [out[0] or RankedInput(paths[0], None, "single input")]
    known = [r for r in out if r is not None]
    if len(known) == len(out) and len({r.rank for r in known}) == len(known):
        return known
    if pattern is not None and len(known) < len(out):
        missing = [p for p, r in zip(paths, out, strict=True) if r is None]
        raise InputError(
            f"--rank-from {rank_from!r} matches no rank number in {missing[0]}"
            + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
        )
    # some names carry no rank, or two carry the same: fall back to natural name order, said to be a guess
    ordered = sorted(paths, key=natural_key)
    return [RankedInput(path, ordered.index(path), "name order (guessed)") for path in paths]


def _rank_pattern(rank_from: str | None) -> re.Pattern[str] | None:
    """`--rank-from` compiled (None when not given), or InputError."""
    if not rank_from:
        return None
    try:
        return re.compile(rank_from)
    except re.error as exc:
        raise InputError(f"--rank-from {rank_from!r}: not a valid regular expression ({exc})") from None


def _with_manifest_ranks(
    paths: Sequence[str], heads: Sequence[bytes], recorded: Sequence[int | None]
) -> list[RankedInput]:
    """A run folder's logs: ranks as recorded (two libraries' logs of one rank share it); the others as
    :func:`assign_ranks` finds them."""
    rest = [(p, h) for p, h, r in zip(paths, heads, recorded, strict=True) if r is None]
    others = {r.path: r for r in assign_ranks([p for p, _ in rest], [h for _, h in rest])} if rest else {}
    return [RankedInput(p, r, "manifest") if r is not None else others[p] for p, r in zip(paths, recorded, strict=True)]


def _named_rank(path: str, head: bytes, pattern: re.Pattern[str] | None) -> RankedInput | None:
    """The rank `--rank-from` finds in the path, or else a launcher's tag in the head, or else the path; None."""
    if pattern is not None:
        rank = rank_from_path(path, pattern)
        return RankedInput(path, rank, "--rank-from") if rank is not None else None
    tags = rank_from_tags(head)
    if len(tags) == 1:
        return RankedInput(path, tags.pop(), "launcher tag")
    rank = rank_from_path(path)
    return RankedInput(path, rank, "path") if rank is not None else None


def compact_ranks(ranks: Iterable[int]) -> str:
    """`0-3,6` for ranks 0, 1, 2, 3 and 6."""
    values = sorted(set(ranks))
    parts: list[str] = []
    start = previous = None
    for value in values:
        if start is None:
            start = previous = value
        elif value == previous + 1:  # type: ignore[operator]
            previous = value
        else:
            parts.append(f"{start}-{previous}" if previous != start else f"{start}")
            start = previous = value
    if start is not None:
        parts.append(f"{start}-{previous}" if previous != start else f"{start}")
    return ",".join(parts)
