"""What `blaslog record` adds to a run folder once the command ended: the logs gzip-compressed, the host's GPUs,
and the probe's caps file."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from blaslog.errors import BlaslogError

CAPS = "caps.json"
"""The probe's caps file in a run folder."""


def host_gpus() -> list[dict[str, str]]:
    """The host's GPUs as nvidia-smi names them (nothing without it)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return []
    try:
        completed = subprocess.run(
            [smi, "--query-gpu=index,name,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    out = []
    for line in completed.stdout.splitlines() if completed.returncode == 0 else []:
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 3:
            out.append({"index": parts[0], "name": parts[1], "driver": parts[2]})
    return out


def compress(folder: Path, files: list[dict[str, Any]], notes: list[str]) -> dict[str, str]:
    """gzip every log (several at once: zlib lets go of the GIL); each through a .part file, so that an
    interrupted or failed compression (a full disk) leaves the plain log, with a note. Old name -> new name."""

    def one(entry: dict[str, Any]) -> str | None:
        source = folder / entry["file"]
        target = folder / (entry["file"] + ".gz")
        part = folder / (entry["file"] + ".gz.part")
        try:
            with (
                open(source, "rb") as raw,
                open(part, "wb") as sink,
                gzip.GzipFile(filename=entry["file"], mode="wb", fileobj=sink, compresslevel=6, mtime=0) as packed,
            ):
                shutil.copyfileobj(raw, packed, 1 << 20)
            os.replace(part, target)
        except OSError as exc:
            with contextlib.suppress(OSError):
                part.unlink()
            return f"{entry['file']} ({exc.strerror or exc})"
        source.unlink()
        entry["file"] += ".gz"
        return None

    before = [entry["file"] for entry in files]
    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
        failed = [problem for problem in pool.map(one, files) if problem]
    if failed:
        notes.append(f"not compressed, left plain: {', '.join(failed)}")
    return {old: entry["file"] for old, entry in zip(before, files, strict=True)}


def probe(folder: Path) -> dict[str, Any]:
    """Probe every distinct cuBLASLt algorithm of the run into caps.json; whatever goes wrong is a note."""
    from blaslog import api, native

    try:
        configs = api.probe_configs(from_logs=[str(folder)])
    except BlaslogError as exc:
        return {"status": "skipped", "note": f"nothing to probe ({exc})"}
    result: dict[str, Any] = {"configurations": len(configs)}
    try:
        probed = native.probe(configs)
    except BlaslogError as exc:
        partial: native.ProbeResult | None = getattr(exc, "partial", None)
        if partial is None:
            return {**result, "status": "failed", "note": f"not probed: {exc}"}
        probed = partial
        result.update(status="partial", note=f"{exc}; the configurations probed before are in {CAPS}")
    except Exception as exc:  # never lose the run for the probe's sake
        return {**result, "status": "failed", "note": f"not probed: {type(exc).__name__}: {exc}"}
    result.setdefault("status", "ok")
    result.update(
        library=probed.library,
        version=probed.version_text,
        gpu=probed.gpu,
        probed=len(probed.entries),
        errors=[{"config": c, "error": e} for c, e in probed.errors],
    )
    if probed.entries:
        caps = api.caps_from_probe(probed)
        (folder / CAPS).write_text(json.dumps(caps.to_json(), indent=2) + "\n", encoding="utf-8")
        result["caps"] = CAPS
    if probed.errors and result["status"] == "ok":
        result.update(
            status="partial",
            note=f"{len(probed.errors)} of {len(configs)} configurations could not be probed (see probe.errors)",
        )
    return result


__all__ = ["CAPS", "compress", "host_gpus", "probe"]
