"""The probe's worker process: talks to libcublasLt so that a crash inside it cannot take blaslog down.

Reads ``{"configs": [...]}`` (JSON) on stdin and writes one JSON object per line:
``{"type": "info", ...}`` first, then ``{"type": "result", "index": i, "entry": {...}}`` or
``{"type": "error", "index": i, ...}`` per configuration, or one ``{"type": "fatal", ...}``.
Run as ``python -m blaslog.native._worker``.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import sys
from typing import Any

from blaslog.errors import BlaslogError, CublasStatusError, NativeError
from blaslog.flags import decode_flags
from blaslog.native import _enums
from blaslog.native._cublaslt import Binding
from blaslog.native._loader import load

_SCALARS = (
    ("splitKSupport", "SPLITK_SUPPORT", ctypes.c_int32),
    ("reductionSchemeMask", "REDUCTION_SCHEME_MASK", ctypes.c_uint32),
    ("ctaSwizzlingSupport", "CTA_SWIZZLING_SUPPORT", ctypes.c_uint32),
    ("stridedBatchSupport", "STRIDED_BATCH_SUPPORT", ctypes.c_int32),
    ("outOfPlaceResultSupport", "OUT_OF_PLACE_RESULT_SUPPORT", ctypes.c_int32),
    ("customOptionMax", "CUSTOM_OPTION_MAX", ctypes.c_int32),
    ("epilogueMask", "EPILOGUE_MASK", ctypes.c_uint32),
    ("minAlignmentA", "MIN_ALIGNMENT_A_BYTES", ctypes.c_uint32),
    ("minAlignmentB", "MIN_ALIGNMENT_B_BYTES", ctypes.c_uint32),
    ("minAlignmentC", "MIN_ALIGNMENT_C_BYTES", ctypes.c_uint32),
    ("minAlignmentD", "MIN_ALIGNMENT_D_BYTES", ctypes.c_uint32),
)


def _emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def gpu_info() -> dict[str, Any]:
    """Name and compute capability of device 0 through the driver API, when there is one."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        return {"error": f"no CUDA driver (libcuda.so.1: {exc})"}
    try:
        if cuda.cuInit(0) != 0:
            return {"error": "cuInit failed (no GPU visible?)"}
        device = ctypes.c_int()
        if cuda.cuDeviceGet(ctypes.byref(device), 0) != 0:
            return {"error": "cuDeviceGet failed"}
        name = ctypes.create_string_buffer(256)
        cuda.cuDeviceGetName(name, 256, device)
        major, minor = ctypes.c_int(), ctypes.c_int()
        cuda.cuDeviceGetAttribute(ctypes.byref(major), 75, device)
        cuda.cuDeviceGetAttribute(ctypes.byref(minor), 76, device)
        return {"name": name.value.decode("utf-8", "replace"), "compute_capability": f"{major.value}.{minor.value}"}
    except Exception as exc:
        return {"error": str(exc)}


def probe_one(binding: Binding, handle: Any, config: dict[str, Any]) -> dict[str, Any]:
    """Every capability of one algorithm configuration."""
    types = (config["Atype"], config["Btype"], config["Ctype"], config["Dtype"])
    algo = binding.algo_init(handle, int(config["algoId"]), config["computeType"], config["scaleType"], types)
    flags = binding.cap(algo, "NUMERICAL_IMPL_FLAGS", ctypes.c_uint64)
    entry: dict[str, Any] = dict(config)
    entry["numericalImplFlags"] = hex(flags)
    decoded = decode_flags(flags)
    entry["decoded"] = list(decoded.names)
    entry["summary"] = decoded.summary
    for key, attribute, ctype in _SCALARS:
        try:
            value = binding.cap(algo, attribute, ctype)
            entry[key] = hex(value) if key.endswith("Mask") else value
        except CublasStatusError as exc:
            entry[key] = f"error: {exc.name}"
    for key, attribute, enum in (
        ("tiles", "TILE_IDS", "cublasLtMatmulTile_t"),
        ("stages", "STAGES_IDS", "cublasLtMatmulStages_t"),
    ):
        try:
            entry[key] = [_enums.name(enum, v) for v in binding.cap_array(algo, attribute)]
        except CublasStatusError as exc:
            entry[key] = f"error: {exc.name}"
    return entry


def main() -> int:
    """Run the probe requests read from stdin."""
    request = json.loads(sys.stdin.read() or "{}")
    try:
        lib, path = load()
        binding = Binding(lib, path)
        version = binding.version()
    except NativeError as exc:
        _emit({"type": "fatal", "kind": type(exc).__name__, "error": str(exc)})
        return 0
    info = {
        "type": "info",
        "path": path,
        "version": version,
        "version_text": f"{version // 10000}.{version // 100 % 100}.{version % 100}",
    }
    info["gpu"] = gpu_info() if request.get("gpu_info", True) else {}
    _emit(info)
    try:
        handle = binding.create()
    except NativeError as exc:
        _emit(
            {
                "type": "fatal",
                "kind": type(exc).__name__,
                "error": f"libcublasLt {info['version_text']} was found at {path}, but CUDA could not start: {exc}",
            }
        )
        return 0
    try:
        for index, config in enumerate(request.get("configs", [])):
            _emit({"type": "start", "index": index})
            try:
                _emit({"type": "result", "index": index, "entry": probe_one(binding, handle, config)})
            except (BlaslogError, ValueError) as exc:
                _emit({"type": "error", "index": index, "error": str(exc)})
    finally:
        with contextlib.suppress(NativeError):
            binding.destroy(handle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
