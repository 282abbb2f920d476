"""The ctypes binding of libcublasLt: one prototype table, status codes turned into exceptions.

Every prototype below was checked against cublasLt.h of CUDA 12.9.3 and 13.10.0
(../shared/reference/NVIDIA-ENUMS.md, "Signatures"). ``restype``/``argtypes`` are
set on first use of each function; a missing symbol raises SymbolNotFound.
"""

from __future__ import annotations

import ctypes
from ctypes import POINTER, c_char_p, c_int, c_size_t, c_uint64, c_void_p
from typing import Any

from blaslog.errors import CublasStatusError, SymbolNotFound
from blaslog.native import _enums


class MatmulAlgo(ctypes.Structure):
    """cublasLtMatmulAlgo_t: ``typedef struct { uint64_t data[8]; }`` (64 bytes in 12.x and 13.x)."""

    _fields_ = [("data", c_uint64 * 8)]


c_status = c_int

PROTOTYPES: dict[str, tuple[Any, ...]] = {
    # size_t cublasLtGetVersion(void)
    "cublasLtGetVersion": (c_size_t,),
    # size_t cublasLtGetCudartVersion(void)
    "cublasLtGetCudartVersion": (c_size_t,),
    # const char* cublasLtGetStatusName(cublasStatus_t status)
    "cublasLtGetStatusName": (c_char_p, c_int),
    # const char* cublasLtGetStatusString(cublasStatus_t status)
    "cublasLtGetStatusString": (c_char_p, c_int),
    # cublasStatus_t cublasLtCreate(cublasLtHandle_t* lightHandle)
    "cublasLtCreate": (c_status, POINTER(c_void_p)),
    # cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle)
    "cublasLtDestroy": (c_status, c_void_p),
    # cublasStatus_t cublasLtMatmulAlgoInit(cublasLtHandle_t, cublasComputeType_t, cudaDataType_t scaleType,
    #     cudaDataType_t Atype, cudaDataType_t Btype, cudaDataType_t Ctype, cudaDataType_t Dtype, int algoId,
    #     cublasLtMatmulAlgo_t* algo)
    "cublasLtMatmulAlgoInit": (
        c_status,
        c_void_p,
        c_int,
        c_int,
        c_int,
        c_int,
        c_int,
        c_int,
        c_int,
        POINTER(MatmulAlgo),
    ),
    # cublasStatus_t cublasLtMatmulAlgoCapGetAttribute(const cublasLtMatmulAlgo_t* algo,
    #     cublasLtMatmulAlgoCapAttributes_t attr, void* buf, size_t sizeInBytes, size_t* sizeWritten)
    "cublasLtMatmulAlgoCapGetAttribute": (c_status, POINTER(MatmulAlgo), c_int, c_void_p, c_size_t, POINTER(c_size_t)),
    # cublasStatus_t cublasLtMatmulAlgoConfigGetAttribute(const cublasLtMatmulAlgo_t* algo,
    #     cublasLtMatmulAlgoConfigAttributes_t attr, void* buf, size_t sizeInBytes, size_t* sizeWritten)
    "cublasLtMatmulAlgoConfigGetAttribute": (
        c_status,
        POINTER(MatmulAlgo),
        c_int,
        c_void_p,
        c_size_t,
        POINTER(c_size_t),
    ),
}

STATUS_NAMES = {v: k for k, v in _enums.table("cublasStatus_t").items()}


class Binding:
    """Typed access to one loaded libcublasLt."""

    def __init__(self, lib: ctypes.CDLL, path: str = "") -> None:
        self.lib = lib
        self.path = path
        self._functions: dict[str, Any] = {}

    def function(self, name: str) -> Any:
        """The ctypes function with its prototype set."""
        fn = self._functions.get(name)
        if fn is None:
            try:
                fn = getattr(self.lib, name)
            except AttributeError:
                raise SymbolNotFound(
                    f"{name} is missing from {self.path or 'libcublasLt'} (version {self.version_text()})"
                ) from None
            restype, *argtypes = PROTOTYPES[name]
            fn.restype = restype
            fn.argtypes = argtypes
            self._functions[name] = fn
        return fn

    def call(self, name: str, *args: Any) -> None:
        """Call a status-returning function; CublasStatusError unless it returns CUBLAS_STATUS_SUCCESS."""
        status = int(self.function(name)(*args))
        if status != 0:
            raise CublasStatusError(name, status, self.status_name(status))

    def status_name(self, status: int) -> str:
        """cublasLtGetStatusName when the library has it, else the header's table."""
        try:
            raw = self.function("cublasLtGetStatusName")(status)
            if raw:
                name: str = raw.decode("ascii", "replace")
                return name
        except SymbolNotFound:
            pass
        return STATUS_NAMES.get(status, f"status {status}")

    def version(self) -> int:
        """cublasLtGetVersion(): major*10000 + minor*100 + patch."""
        return int(self.function("cublasLtGetVersion")())

    def version_text(self) -> str:
        """`12.9.3`."""
        try:
            number = int(self.lib.cublasLtGetVersion())
        except Exception:
            return "unknown"
        return f"{number // 10000}.{number // 100 % 100}.{number % 100}"

    def create(self) -> c_void_p:
        """A cuBLASLt handle (needs a GPU and a driver)."""
        handle = c_void_p()
        self.call("cublasLtCreate", ctypes.byref(handle))
        return handle

    def destroy(self, handle: c_void_p) -> None:
        """Release a handle."""
        self.call("cublasLtDestroy", handle)

    def algo_init(
        self, handle: c_void_p, algo_id: int, compute_type: str, scale_type: str, types: tuple[str, str, str, str]
    ) -> MatmulAlgo:
        """cublasLtMatmulAlgoInit for an algorithm id and its types (names as the logs print them)."""
        algo = MatmulAlgo()
        try:
            compute = _enums.value("cublasComputeType_t", compute_type)
            scale = _enums.value("cudaDataType_t", scale_type)
            a, b, c, d = (_enums.value("cudaDataType_t", t) for t in types)
        except KeyError as exc:
            raise ValueError(str(exc.args[0])) from None
        self.call("cublasLtMatmulAlgoInit", handle, compute, scale, a, b, c, d, int(algo_id), ctypes.byref(algo))
        return algo

    def cap(self, algo: MatmulAlgo, attribute: str, ctype: Any = ctypes.c_uint32) -> int:
        """A scalar CUBLASLT_ALGO_CAP_* attribute."""
        value = ctype()
        written = c_size_t()
        attr = _enums.value("cublasLtMatmulAlgoCapAttributes_t", attribute)
        self.call(
            "cublasLtMatmulAlgoCapGetAttribute",
            ctypes.byref(algo),
            attr,
            ctypes.byref(value),
            ctypes.sizeof(value),
            ctypes.byref(written),
        )
        return int(value.value)

    def cap_array(self, algo: MatmulAlgo, attribute: str) -> list[int]:
        """An array CUBLASLT_ALGO_CAP_* attribute (TILE_IDS, STAGES_IDS): size query, then the values."""
        attr = _enums.value("cublasLtMatmulAlgoCapAttributes_t", attribute)
        written = c_size_t()
        self.call("cublasLtMatmulAlgoCapGetAttribute", ctypes.byref(algo), attr, None, 0, ctypes.byref(written))
        count = written.value // 4
        if count == 0:
            return []
        buffer = (ctypes.c_uint32 * count)()
        self.call(
            "cublasLtMatmulAlgoCapGetAttribute",
            ctypes.byref(algo),
            attr,
            buffer,
            ctypes.sizeof(buffer),
            ctypes.byref(written),
        )
        return list(buffer)[: written.value // 4]
