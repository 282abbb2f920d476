"""Run folders (`blaslog record`): their manifests, caps files and the settings that differ."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

from blaslog.api._inputs import CapsLike, Paths, _load, _names
from blaslog.caps import Caps, load_caps
from blaslog.formats import loggings
from blaslog.ranks import compact_ranks, read_manifest
from blaslog.report import Report

# ---- run folders (blaslog record) ------------------------------------------------------------------------------

SETTINGS_SECTION = "Settings that differ"
"""The title of a diff report's section listing what differs between two run folders' manifests."""

#: Variables that only say which devices a process saw, or are blaslog's own (those of the libraries' logging
#: are each library's declaration's: `LogSwitch.names`).
_NOT_SETTINGS = re.compile(r"^(BLASLOG_|WORLD_SIZE$|LOCAL_WORLD_SIZE$|CUDA_VISIBLE_DEVICES$|HIP_VISIBLE_DEVICES$)")


def _settings(environment: dict[str, Any]) -> dict[str, Any]:
    """The variables of `environment` that may change how a process computes: not those that only say where and
    how much blaslog record logged, or which devices it saw."""
    logging = frozenset().union(*(switch.names() for switch in loggings()))
    return {k: v for k, v in environment.items() if k not in logging and not _NOT_SETTINGS.match(k)}


def run_manifest(names: Paths) -> tuple[str, dict[str, Any]] | None:
    """(folder, manifest) when `names` are one run folder (or files of one), else None."""
    names = _names(names)
    folders = {name if os.path.isdir(name) else os.path.dirname(name) or "." for name in names}
    if len(folders) != 1:
        return None
    folder = folders.pop()
    manifest = read_manifest(folder)
    return (folder, manifest) if manifest is not None else None


def folder_caps(names: Paths) -> tuple[Caps | None, list[str]]:
    """The caps.json files of the run folders among `names`, merged (the first wins a conflict, said in a note)."""
    names = _names(names)
    merged: Caps | None = None
    notes: list[str] = []
    seen: set[str] = set()
    for name in names:
        found = run_manifest([name])
        if found is None or found[0] in seen or not os.path.isfile(os.path.join(found[0], "caps.json")):
            continue
        seen.add(found[0])
        path = os.path.join(found[0], "caps.json")
        caps = load_caps(path)
        if merged is None:
            merged = caps
            continue
        conflicts = [
            key
            for key, entry in caps.entries.items()
            if key in merged.entries and merged.entries[key].get("_flags") != entry.get("_flags")
        ]
        notes.extend(
            f"caps: algoId {key[0]} {key[1]} has numerical impl flags "
            f"{merged.entries[key].get('numericalImplFlags')} in {merged.source} and "
            f"{caps.entries[key].get('numericalImplFlags')} in {path} (other GPUs or library versions?); "
            f"using {merged.source}'s"
            for key in conflicts[:3]
        )
        if len(conflicts) > 3:
            notes.append(f"caps: {len(conflicts) - 3} more conflicts between {merged.source} and {path}")
        for key, entry in caps.entries.items():
            merged.entries.setdefault(key, entry)
        merged.source += f", {path}"
    if merged is not None:
        notes.insert(0, f"caps from the run folders: {merged.source} (--caps FILE overrides)")
    return merged, notes


def _caps_for(caps: CapsLike | None, *groups: Sequence[str]) -> tuple[Caps | None, list[str]]:
    """The caps given, else those of the run folders among the inputs."""
    if caps is not None:
        return _load(caps), []
    return folder_caps([name for group in groups for name in group])


def run_settings(manifest: dict[str, Any]) -> dict[str, str]:
    """What a run folder's manifest says can change which GEMM algorithm runs, flattened to `setting -> value`:
    world size, GPU, library versions, torch's matmul settings and environment variables (`env NAME`; unset
    ones left out). A value that differs between ranks reads `by rank: 0-1 A; 2-3 B`."""
    values: dict[str, dict[str, set[int]]] = {}

    def put(key: str, value: Any, rank: int) -> None:
        if value is not None and value != {}:
            values.setdefault(key, {}).setdefault(str(value), set()).add(rank)

    top = _settings(manifest.get("environment") or {})
    ranks = manifest.get("ranks") or {}
    for text, info in ranks.items() if ranks else [("0", {})]:
        rank = int(text) if str(text).isdigit() else 0
        environment = info.get("environment")
        environment = top if environment is None else _settings(environment)
        for key in sorted({*top, *environment}):
            put(f"env {key}", environment.get(key, "unset"), rank)
        put("GPU", info.get("gpu"), rank)
        for key, value in sorted((info.get("settings") or {}).items()):
            put(key, value, rank)
        for key, value in sorted((info.get("versions") or {}).items()):
            put(f"version {key}", value, rank)
    if "GPU" not in values and manifest.get("gpus"):
        values["GPU"] = {", ".join(sorted({g.get("name", "?") for g in manifest["gpus"]})): {0}}
    out = {"world size": str(manifest.get("world_size") or len(ranks) or 1)}
    for key, by_value in values.items():
        if len(by_value) == 1:
            out[key] = next(iter(by_value))
        else:
            out[key] = "by rank: " + "; ".join(
                f"{compact_ranks(r)} {v}" for v, r in sorted(by_value.items(), key=lambda item: min(item[1]))
            )
    return out


def _setting_order(key: str) -> tuple[int, str]:
    first = ("world size", "GPU", "env ", "torch", "version ")
    return next((i for i, p in enumerate(first) if key.startswith(p)), len(first)), key


def settings_diff(first: dict[str, Any], second: dict[str, Any]) -> list[dict[str, str]]:
    """What differs between two run folders' manifests: one row per setting (`setting`, `sharded`, `unsharded`),
    world size and GPU first. An environment variable set on one side only is `unset` on the other; other
    settings recorded on one side only are left out (nothing to compare)."""
    a, b = run_settings(first), run_settings(second)
    rows = []
    for key in sorted({*a, *b}, key=_setting_order):
        left, right = a.get(key), b.get(key)
        if key.startswith("env "):
            left, right = left or "unset", right or "unset"
        if left is None or right is None or left == right:
            continue
        rows.append({"setting": key, "sharded": left, "unsharded": right})
    return rows


def add_settings(report: Report, sharded: Paths, unsharded: Paths) -> None:
    """When both sides of a diff are run folders: what differs between their manifests, as the report's first
    section and first note (it is often the answer), and in its JSON document (`settings`)."""
    sharded = _names(sharded)
    unsharded = _names(unsharded)
    a, b = run_manifest(sharded), run_manifest(unsharded)
    if a is None or b is None:
        return
    rows = settings_diff(a[1], b[1])
    report.document["settings"] = {"sharded": a[0], "unsharded": b[0], "differ": rows}
    if not rows:
        report.notes.insert(0, f"settings: {a[0]} and {b[0]} agree on every setting their manifests recorded")
        return
    report.sections.insert(0, (SETTINGS_SECTION, rows))
    telling = [r for r in rows if r["setting"] != "world size"] or rows
    report.notes.insert(
        0,
        f"settings that differ between {a[0]} and {b[0]} (often the answer): "
        + "; ".join(f"{r['setting']} {r['sharded']} vs {r['unsharded']}" for r in telling[:6])
        + (f"; {len(telling) - 6} more" if len(telling) > 6 else "")
        + f" (see '{SETTINGS_SECTION}')",
    )
