"""The native probe of libcublasLt: what an algorithm's arithmetic is, asked of the library itself.

Nothing is loaded at import. The library is driven in a worker process
(``blaslog.native._worker``), so that a fault inside it (a crash, an abort)
is reported as :class:`~blaslog.errors.ProbeCrashed` while the rest of the
command completes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

from blaslog.errors import LibraryLoadError, LibraryNotFound, NativeError, ProbeCrashed
from blaslog.native import _loader as _loader  # finds the library; loads nothing until asked

TIMEOUT = 120.0
"""Seconds the worker may take in all."""


@dataclass(slots=True)
class ProbeResult:
    """What the probe learned."""

    library: str = ""
    """Path of the libcublasLt used."""
    version: int = 0
    """cublasLtGetVersion()."""
    version_text: str = ""
    """`12.9.3`."""
    gpu: dict[str, Any] = field(default_factory=dict)
    """Name and compute capability of device 0."""
    entries: list[dict[str, Any]] = field(default_factory=list)
    """One per configuration probed."""
    errors: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    """(configuration, reason) for each configuration that failed."""


_FATAL = {"LibraryNotFound": LibraryNotFound, "LibraryLoadError": LibraryLoadError}


def probe(configs: list[dict[str, Any]], *, timeout: float = TIMEOUT, gpu_info: bool = True) -> ProbeResult:
    """Probe algorithm configurations (dicts with algoId, computeType, scaleType, Atype..Dtype).

    Raises LibraryNotFound / LibraryLoadError / NativeError when nothing can be probed, ProbeCrashed when
    the library crashed the worker (the entries probed before the crash are in the exception's `partial`).
    """
    env = dict(os.environ)
    env.setdefault("PYTHONFAULTHANDLER", "0")
    try:
        completed = subprocess.run(
            [sys.executable, "-m", "blaslog.native._worker"],
            input=json.dumps({"configs": configs, "gpu_info": gpu_info}),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise NativeError(f"the probe did not finish within {timeout:.0f} s (the GPU or driver may be hung)") from None
    result = ProbeResult()
    started: int | None = None
    for line in completed.stdout.splitlines():
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue  # the library's own logging on stdout
        kind = message.get("type")
        if kind == "fatal":
            raise _FATAL.get(message.get("kind"), NativeError)(message["error"])
        if kind == "info":
            result.library, result.version = message["path"], message["version"]
            result.version_text, result.gpu = message["version_text"], message.get("gpu", {})
        elif kind == "start":
            started = message["index"]
        elif kind == "result":
            result.entries.append(message["entry"])
            started = None
        elif kind == "error":
            result.errors.append((configs[message["index"]], message["error"]))
            started = None
    if completed.returncode != 0:
        how = (
            f"signal {signal.Signals(-completed.returncode).name}"
            if completed.returncode < 0
            else f"exit status {completed.returncode}"
        )
        doing = f" while probing {_describe(configs[started])}" if started is not None else ""
        error = ProbeCrashed(
            f"the native library crashed the probe ({how}){doing}; "
            f"{len(result.entries)} configurations were probed before it"
        )
        error.partial = result  # type: ignore[attr-defined]
        raise error
    return result


def _describe(config: dict[str, Any]) -> str:
    return (
        f"algoId {config.get('algoId')} {config.get('computeType')} scale {config.get('scaleType')} "
        f"types {config.get('Atype')},{config.get('Btype')},{config.get('Ctype')},{config.get('Dtype')}"
    )


def configs_from_records(records: Any) -> list[dict[str, Any]]:
    """The distinct algorithm configurations (algoId + compute/scale/data types) of cuBLASLt GEMM records."""
    from blaslog.caps import caps_key, key_entry

    seen: dict[Any, dict[str, Any]] = {}
    for record in records:
        key = caps_key(record)
        if key is None or key in seen or None in key[1:]:
            continue
        seen[key] = key_entry(key)
    return list(seen.values())


__all__ = ["ProbeResult", "configs_from_records", "probe"]
