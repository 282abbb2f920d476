"""Finding and loading libcublasLt, without failing at import.

Search order:
1. ``BLASLOG_CUBLASLT``: a path to the library (``0`` or ``off`` disables the probe);
2. the nvidia-cublas wheels' folders on sys.path (``nvidia/cu13/lib``, ``nvidia/cublas/lib``);
3. the system loader's versioned sonames (``libcublasLt.so.13``, ``.so.12``, ``.so.11``).
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from pathlib import Path

from blaslog.errors import LibraryLoadError, LibraryNotFound

ENV = "BLASLOG_CUBLASLT"
SONAMES = ("libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11")
WHEEL_DIRS = (("nvidia", "cu13", "lib"), ("nvidia", "cublas", "lib"))


def candidates() -> list[str]:
    """Every path or soname tried, in order."""
    override = os.environ.get(ENV)
    if override:
        return [override]
    out: list[str] = []
    for entry in sys.path:
        for parts in WHEEL_DIRS:
            folder = Path(entry or ".").joinpath(*parts)
            out.extend(str(folder / soname) for soname in SONAMES if (folder / soname).exists())
    out.extend(SONAMES)
    return out


@functools.cache
def load() -> tuple[ctypes.CDLL, str]:
    """The loaded library and where it came from; LibraryNotFound or LibraryLoadError otherwise."""
    override = os.environ.get(ENV)
    if override and override.lower() in ("0", "off", "no", "false"):
        raise LibraryNotFound(f"the probe is switched off ({ENV}={override})")
    tried: list[str] = []
    for candidate in candidates():
        looks_like_path = "/" in candidate
        if looks_like_path and not Path(candidate).exists():
            tried.append(f"{candidate}: no such file")
            continue
        try:
            return ctypes.CDLL(candidate), candidate
        except OSError as exc:
            if looks_like_path:
                raise LibraryLoadError(f"libcublasLt found at {candidate} but could not be loaded: {exc}") from exc
            tried.append(f"{candidate}: {exc}")
    raise LibraryNotFound(
        "libcublasLt not found; looked in: "
        + "; ".join(tried)
        + f". Install nvidia-cublas-cu12 (or nvidia-cublas for CUDA 13), or set {ENV}=/path/to/libcublasLt.so.N "
        f"({ENV}=0 skips the probe)"
    )
