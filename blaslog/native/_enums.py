"""cuBLASLt enum tables (from the 12.9.3 and 13.10.0 headers), loaded once from blaslog/data."""

from __future__ import annotations

import functools
import json
from importlib import resources


@functools.cache
def table(enum: str) -> dict[str, int]:
    """Name (without the CUBLASLT_/CUBLAS_/CUDA_ prefix) -> value, for one enum."""
    data = json.loads((resources.files("blaslog") / "data" / "cublaslt_enums.json").read_text(encoding="utf-8"))
    return dict(data["enums"][enum])


def value(enum: str, name: str) -> int:
    """The value of a name (prefixes optional; `R_32F`, `CUDA_R_32F`, `COMPUTE_32F`); KeyError with the known names."""
    names = table(enum)
    key = name.strip()
    for prefix in ("CUBLASLT_", "CUBLAS_", "CUDA_"):
        if key.startswith(prefix) and key[len(prefix) :] in names:
            key = key[len(prefix) :]
    if key in names:
        return names[key]
    if key.lstrip("-").isdigit():
        return int(key)
    raise KeyError(f"unknown {enum} name {name!r}")


def name(enum: str, number: int) -> str:
    """The name of a value, or `UNKNOWN(<n>)`."""
    for key, val in table(enum).items():
        if val == number and not key.endswith(("_END", "_MASK")):
            return key
    return f"UNKNOWN({number})"
