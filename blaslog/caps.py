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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from blaslog.errors import CapsError
from blaslog.flags import parse_number
from blaslog.records import GemmCall

CapsKey = tuple[int, str | None, str | None, str | None, str | None, str | None, str | None]


def caps_key(record: GemmCall) -> CapsKey | None:
    """The configuration a record's algorithm was initialised with, or None without an algoId."""
    if record.algo_id is None:
        return None
    return (record.algo_id, record.compute_type, record.scale_type, record.a_type, record.b_type,
            record.c_type, record.d_type)


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
            out = {"algoId": key[0], "computeType": key[1], "scaleType": key[2], "Atype": key[3],
                   "Btype": key[4], "Ctype": key[5], "Dtype": key[6]}
            out.update({k: v for k, v in entry.items() if not k.startswith("_") and k not in out})
            entries.append(out)
        return {"schema_version": 1, "kind": "blaslog-caps", "library_version": self.library_version,
                "gpu": self.gpu, "entries": entries}


def load_caps(path: str | Path) -> Caps:
    """Read a caps file; CapsError says what is wrong with it."""
    name = str(path)
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CapsError(f"{name}: no such caps file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CapsError(f"{name}: cannot read the caps file ({exc})") from None
    except json.JSONDecodeError as exc:
        raise CapsError(f"{name}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
    if not isinstance(document, dict) or not isinstance(document.get("entries"), list):
        raise CapsError(f"{name}: a caps file is a JSON object with an 'entries' list (see blaslog/caps.py)")
    caps = Caps(library_version=document.get("library_version"), gpu=document.get("gpu") or {}, source=name)
    for index, entry in enumerate(document["entries"]):
        if not isinstance(entry, dict) or "algoId" not in entry:
            raise CapsError(f"{name}: entry {index} has no algoId")
        try:
            key = (int(entry["algoId"]), entry.get("computeType"), entry.get("scaleType"), entry.get("Atype"),
                   entry.get("Btype"), entry.get("Ctype"), entry.get("Dtype"))
            caps.add(key, entry)
        except (ValueError, TypeError) as exc:
            raise CapsError(f"{name}: entry {index}: {exc}") from None
    return caps
