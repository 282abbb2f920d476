"""Caps files: what a GPU machine learned about algorithms, for machines without one.

A caps file is JSON::

    {
      "schema_version": 1,
      "kind": "blaslog-caps",
      "library_version": "12.9.3",          // cublasLtGetVersion, when probed
      "gpu": {"name": "NVIDIA A100-SXM4-80GB", "compute_capability": "8.0"},
      "entries": [
        {"algoId": 0, "computeType": "COMPUTE_32F_FAST_TF32", "scaleType": "R_32F",
         "Atype": "R_32F", "Btype": "R_32F", "Ctype": "R_32F", "Dtype": "R_32F",
         "numericalImplFlags": "0x80201"}
      ]
    }

One entry per algorithm configuration (algoId with the compute, scale and data
types it was initialised with). ``blaslog probe --from LOG --out caps.json``
writes it; a hand-written file with the same keys works the same way (the
``_note`` of ``fixtures/seed/caps.json`` says where its values come from).
Entries may carry more of the probe's answers (tiles, stages, split-K support ...).
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from blaslog.errors import CapsError, FlagsError
from blaslog.flags import parse_number
from blaslog.records import GemmCall

CapsKey = tuple[int, str | None, str | None, str | None, str | None, str | None, str | None]


KEY_FIELDS = ("algoId", "computeType", "scaleType", "Atype", "Btype", "Ctype", "Dtype")
"""The fields of a caps entry that name its configuration, in the order of a CapsKey."""


def entry_key(entry: dict[str, Any]) -> CapsKey:
    """The configuration a caps entry (a probe's answer, or an entry of a caps file) describes."""
    return (
        int(entry["algoId"]),
        entry.get("computeType"),
        entry.get("scaleType"),
        entry.get("Atype"),
        entry.get("Btype"),
        entry.get("Ctype"),
        entry.get("Dtype"),
    )


def key_entry(key: CapsKey) -> dict[str, Any]:
    """The configuration fields of a caps entry for `key` (what entry_key reads back)."""
    return dict(zip(KEY_FIELDS, key, strict=True))


def caps_key(record: GemmCall) -> CapsKey | None:
    """The configuration a record's algorithm was initialised with, or None without an algoId."""
    if record.algo_id is None:
        return None
    return (
        record.algo_id,
        record.compute_type,
        record.scale_type,
        record.a_type,
        record.b_type,
        record.c_type,
        record.d_type,
    )


@dataclass(slots=True)
class Caps:
    """Numerical impl flags (and more) per algorithm configuration."""

    entries: dict[CapsKey, dict[str, Any]] = field(default_factory=dict)
    """Entry per configuration."""
    library_version: str | None = None
    """cuBLASLt version the values came from."""
    gpu: dict[str, Any] = field(default_factory=dict)
    """GPU name and compute capability."""
    source: str = ""
    """Where the caps came from (a file name)."""

    def flags(self, record: GemmCall) -> int | None:
        """The numerical impl flags of the algorithm a record ran, or None when unknown."""
        key = caps_key(record)
        if key is None:
            return None
        entry = self.entries.get(key)
        if entry is None:
            # an entry that names only algoId and computeType applies to every data type
            entry = self.entries.get((key[0], key[1], None, None, None, None, None))
        if entry is None:
            return None
        return entry.get("_flags")

    def add(self, key: CapsKey, entry: dict[str, Any]) -> None:
        """Add or replace one configuration."""
        value = entry.get("numericalImplFlags")
        entry = dict(entry)
        entry["_flags"] = parse_number(value) if value is not None else None
        self.entries[key] = entry

    def to_json(self) -> dict[str, Any]:
        """The caps file document."""
        entries = []
        for key, entry in sorted(self.entries.items(), key=lambda kv: tuple(str(x) for x in kv[0])):
            out = key_entry(key)
            out.update({k: v for k, v in entry.items() if not k.startswith("_") and k not in out})
            entries.append(out)
        return {
            "schema_version": 1,
            "kind": "blaslog-caps",
            "library_version": self.library_version,
            "gpu": self.gpu,
            "entries": entries,
        }


MAX_CAPS_BYTES = 16 << 20
"""Largest caps file read (a probe of every configuration a training job uses is a few hundred kB)."""

_TYPE_KEYS = ("computeType", "scaleType", "Atype", "Btype", "Ctype", "Dtype")


def load_caps(path: str | Path) -> Caps:
    """Read a caps file; CapsError says what is wrong with it (file, entry, key and what to do).

    The file is untrusted (a CI artifact): it must be a regular file under MAX_CAPS_BYTES of JSON, algoId an
    integer, numericalImplFlags an unsigned 64-bit integer or its hex/decimal text, the type names strings."""
    name = str(path)
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise CapsError(f"{name}: not a regular file; a caps file is a JSON file written by blaslog probe -o")
        if info.st_size > MAX_CAPS_BYTES:
            raise CapsError(
                f"{name}: {info.st_size:,} bytes is more than a caps file holds (at most "
                f"{MAX_CAPS_BYTES >> 20} MB); is it the right file?"
            )
        with open(path, "rb") as handle:
            raw = handle.read(MAX_CAPS_BYTES + 1)
        document = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except FileNotFoundError:
        raise CapsError(f"{name}: no such caps file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CapsError(f"{name}: cannot read the caps file ({exc})") from None
    except json.JSONDecodeError as exc:
        raise CapsError(f"{name}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise CapsError(f"{name}: nested too deeply to be a caps file") from None
    except ValueError as exc:
        raise CapsError(f"{name}: not valid JSON: {exc}") from None
    if not isinstance(document, dict) or not isinstance(document.get("entries"), list):
        raise CapsError(f"{name}: a caps file is a JSON object with an 'entries' list (see blaslog/caps.py)")
    gpu = document.get("gpu") or {}
    version = document.get("library_version")
    if not isinstance(gpu, dict) or not (version is None or isinstance(version, str)):
        raise CapsError(f"{name}: 'gpu' must be an object and 'library_version' a string")
    caps = Caps(library_version=version, gpu=gpu, source=name)
    for index, entry in enumerate(document["entries"]):
        _check_entry(name, index, entry)
        try:
            caps.add(entry_key(entry), entry)
        except FlagsError as exc:
            raise CapsError(f"{name}: entry {index}: numericalImplFlags: {exc}") from None
    return caps


def _check_entry(name: str, index: int, entry: Any) -> None:
    """CapsError when entry `index` of caps file `name` is not an object with an algorithm id, type names and a
    flags value."""
    if not isinstance(entry, dict) or "algoId" not in entry:
        raise CapsError(f"{name}: entry {index} has no algoId")
    algo = entry["algoId"]
    if isinstance(algo, bool) or not isinstance(algo, int) or not 0 <= algo < 2**31:
        raise CapsError(f"{name}: entry {index}: algoId {algo!r} is not an algorithm id (a non-negative integer)")
    for key in _TYPE_KEYS:
        if not (entry.get(key) is None or isinstance(entry.get(key), str)):
            raise CapsError(f"{name}: entry {index}: {key} {entry.get(key)!r} is not a type name")
    flags = entry.get("numericalImplFlags")
    if flags is not None and (isinstance(flags, bool) or not isinstance(flags, (int, str))):
        raise CapsError(
            f"{name}: entry {index}: numericalImplFlags {flags!r} is not a flags value "
            '(an unsigned integer, or its hex text such as "0x40202")'
        )


def _no_constant(text: str) -> Any:
    raise ValueError(f"{text} is not a number a caps file can hold")


def probed_caps(document: dict[str, Any], existing: Caps | None = None) -> Caps:
    """The caps a probe's answers make (its `document`: the library `version`, the `gpu` and the `entries`, as
    `blaslog probe -f json` prints them), merged into `existing`: the probe's entries win."""
    caps = existing if existing is not None else Caps()
    caps.library_version, caps.gpu = document["version"], document["gpu"]
    for entry in document["entries"]:
        caps.add(entry_key(entry), entry)
    return caps
