"""Decode and encode numerical-implementation flags, with no GPU and no library.

* cuBLASLt ``cublasLtNumericalImplFlags_t`` (``CUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS``):
  the ``CUBLASLT_NUMERICAL_IMPL_FLAGS_*`` macros of ``cublasLt.h``, identical in
  CUDA 12.9 and 13.10 (../shared/reference/NVIDIA-ENUMS.md).
* rocBLAS ``rocblas_gemm_flags`` (``rocblas-types.h``; AMD-FLAGS.md). The rocBLAS
  trace and profile print the whole value by name and any combination as
  ``invalid``; bench lines print the integer. Here every value decodes bit by bit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from blaslog.errors import FlagsError


@dataclass(frozen=True, slots=True)
class Bit:
    """One named bit (or value) of a flags type."""

    name: str
    """Name without the library prefix (`HMMA`, `fp16_alt_impl`)."""
    value: int
    """Its value."""
    group: str
    """`operation type`, `accumulator`, `input type`, `Gaussian` (cuBLASLt) or `gemm flags` (rocBLAS)."""
    meaning: str
    """What it means for the numbers."""


CUBLASLT_BITS: tuple[Bit, ...] = (
    Bit("FMA", 0x1, "operation type", "CUDA-core fused multiply-add (no tensor cores)"),
    Bit("HMMA", 0x2, "operation type", "tensor-core MMA for half/bfloat16/TF32 inputs (HMMA)"),
    Bit("IMMA", 0x4, "operation type", "integer tensor-core MMA (IMMA)"),
    Bit("DMMA", 0x8, "operation type", "double-precision tensor-core MMA (DMMA)"),
    Bit("ACCUMULATOR_16F", 0x100, "accumulator", "accumulates in FP16"),
    Bit("ACCUMULATOR_32F", 0x200, "accumulator", "accumulates in FP32"),
    Bit("ACCUMULATOR_64F", 0x400, "accumulator", "accumulates in FP64"),
    Bit("ACCUMULATOR_32I", 0x800, "accumulator", "accumulates in INT32"),
    Bit("INPUT_16F", 0x10000, "input type", "multiplies FP16 inputs"),
    Bit("INPUT_16BF", 0x20000, "input type", "multiplies BF16 inputs"),
    Bit("INPUT_TF32", 0x40000, "input type", "multiplies inputs rounded to TF32 (10-bit mantissa)"),
    Bit("INPUT_32F", 0x80000, "input type", "multiplies full FP32 inputs"),
    Bit("INPUT_64F", 0x100000, "input type", "multiplies FP64 inputs"),
    Bit("INPUT_8I", 0x200000, "input type", "multiplies INT8 inputs"),
    Bit("INPUT_8F_E4M3", 0x400000, "input type", "multiplies FP8 E4M3 inputs"),
    Bit("INPUT_8F_E5M2", 0x800000, "input type", "multiplies FP8 E5M2 inputs"),
    Bit("GAUSSIAN", 0x100000000, "Gaussian", "Gaussian (3M) complex multiplication"),
)

#: Masks of cublasLt.h, accepted as names when encoding and used to compare groups.
CUBLASLT_MASKS: dict[str, int] = {
    "TENSOR_OP_MASK": 0xFE,
    "OP_TYPE_MASK": 0xFF,
    "ACCUMULATOR_TYPE_MASK": 0xFF00,
    "OP_INPUT_TYPE_MASK": 0xFF0000,
}

ROCBLAS_BITS: tuple[Bit, ...] = (
    Bit("pack_int8x4", 0x1, "gemm flags", "int8 inputs packed 4 at a time (removed in rocBLAS 4.0; bit reserved)"),
    Bit("use_cu_efficiency", 0x2, "gemm flags", "pick the solution by CU efficiency (no effect on numerics)"),
    Bit(
        "fp16_alt_impl",
        0x4,
        "gemm flags",
        "alternate FP16 implementation (gfx90a/MI200): FP16 inputs are converted to BF16 and multiplied with "
        "BF16 MFMA instructions, trading mantissa bits for the range that avoids FP16 denormal flushing; "
        "PyTorch sets it in the backward pass",
    ),
    Bit("check_solution_index", 0x8, "gemm flags", "validate the solution index only (no effect on numerics)"),
    Bit(
        "fp16_alt_impl_round",
        0x10,
        "gemm flags",
        "alternate FP16 implementation with round-to-nearest conversion to BF16 (rocblas_gemm_flags_fp16_alt_impl_rnz)",
    ),
    Bit("stochastic_rounding", 0x20, "gemm flags", "stochastic rounding of FP8 outputs (gemm_ex3)"),
)

#: rocBLAS flags whose presence changes the arithmetic.
ROCBLAS_NUMERIC_FLAGS = 0x4 | 0x10 | 0x20

_OP_NAMES = {
    "FMA": "CUDA-core FMA",
    "HMMA": "tensor-core MMA (HMMA)",
    "IMMA": "integer tensor-core MMA (IMMA)",
    "DMMA": "double-precision tensor-core MMA (DMMA)",
}
_TYPE_WORDS = {
    "16F": "FP16",
    "16BF": "BF16",
    "TF32": "TF32",
    "32F": "FP32",
    "64F": "FP64",
    "8I": "INT8",
    "32I": "INT32",
    "8F_E4M3": "FP8 E4M3",
    "8F_E5M2": "FP8 E5M2",
}


@dataclass(frozen=True, slots=True)
class Decoded:
    """A flags value taken apart."""

    library: str
    """`cublaslt` or `rocblas`."""
    value: int
    """The value."""
    bits: tuple[Bit, ...]
    """Every known bit that is set."""
    unknown: int
    """Set bits no table names (0 when none); never dropped."""
    summary: str
    """One plain sentence."""
    names: tuple[str, ...] = field(default=())
    """The names of `bits`."""

    @property
    def hex(self) -> str:
        """The value in hex (`0x40202`)."""
        return hex(self.value)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "library": self.library,
            "value": self.value,
            "hex": self.hex,
            "bits": [
                {"name": b.name, "value": hex(b.value), "group": b.group, "meaning": b.meaning} for b in self.bits
            ],
            "unknown_bits": hex(self.unknown) if self.unknown else None,
            "summary": self.summary,
        }


def _table(library: str) -> tuple[Bit, ...]:
    if library in ("cublaslt", "cublasLt", "nvidia", "cuda"):
        return CUBLASLT_BITS
    if library in ("rocblas", "amd"):
        return ROCBLAS_BITS
    raise FlagsError(f"unknown flags library {library!r}; use cublaslt or rocblas")


def decode_flags(value: int | str, library: str = "cublaslt") -> Decoded:
    """Take a flags value (int, or hex/decimal text) apart into named bits and a summary."""
    number = parse_number(value)
    table = _table(library)
    bits = tuple(b for b in table if number & b.value)
    known = 0
    for bit in bits:
        known |= bit.value
    unknown = number & ~known
    lib = "rocblas" if table is ROCBLAS_BITS else "cublaslt"
    summary = _cublaslt_summary(bits, unknown) if lib == "cublaslt" else _rocblas_summary(bits, unknown)
    return Decoded(lib, number, bits, unknown, summary, tuple(b.name for b in bits))


def encode_flags(names: list[str] | tuple[str, ...], library: str = "cublaslt") -> int:
    """The value of a set of names (prefixes such as CUBLASLT_NUMERICAL_IMPL_FLAGS_ are optional)."""
    table = {b.name.upper(): b.value for b in _table(library)}
    if _table(library) is CUBLASLT_BITS:
        table.update(CUBLASLT_MASKS)
    value = 0
    for raw in names:
        for name in raw.replace("|", " ").replace(",", " ").split():
            key = re.sub(r"^(CUBLASLT_NUMERICAL_IMPL_FLAGS_|ROCBLAS_GEMM_FLAGS_)", "", name.upper())
            if key == "NONE":
                continue
            if key == "FP16_ALT_IMPL_RNZ":
                key = "FP16_ALT_IMPL_ROUND"
            if key not in table:
                import difflib

                close = difflib.get_close_matches(key, list(table), n=1)
                hint = f"; did you mean {close[0]}?" if close else ""
                raise FlagsError(f"unknown flag name {name!r}{hint}")
            value |= table[key]
    return value


_NUMBER = re.compile(r"0[xX][0-9a-fA-F]+|[0-9]+")


def decode_values(values: list[str] | tuple[str, ...], library: str = "cublaslt") -> list[Decoded]:
    """What `blaslog decode-flags` takes: numbers (each decoded), or flag names (encoded into one value, decoded).

    FlagsError for nothing given, an empty or negative value, or numbers and names mixed."""
    texts = [v.strip() for v in values]
    if not texts or any(not t for t in texts):
        raise FlagsError("give a flags value (hex like 0x40202, or decimal) or flag names; got an empty value")
    negative = [t for t in texts if t.startswith("-") and t[1:2].isdigit()]
    if negative:
        raise FlagsError(f"{negative[0]!r} is negative: flags values are unsigned (hex like 0x40202, or decimal)")
    numeric = [t for t in texts if t[:1].isdigit()]
    if numeric and len(numeric) != len(texts):
        raise FlagsError("give either numbers or names, not both")
    if numeric:
        return [decode_flags(t, library) for t in texts]
    return [decode_flags(encode_flags(texts, library), library)]


def parse_number(value: int | str) -> int:
    """An int from `0x40202`, `262658`, `0X40202` (or an int); FlagsError otherwise."""
    if isinstance(value, int):
        number = value
    else:
        text = value.strip()
        if _NUMBER.fullmatch(text) is None:  # ASCII digits only: int() would also take `1_0` and `٢١`
            raise FlagsError(f"{value!r} is not a number (give hex like 0x40202 or decimal)")
        number = int(text, 16) if text[:2].lower() == "0x" else int(text, 10)
    if number < 0 or number >= 2**64:
        raise FlagsError(f"{value!r} is out of range for a 64-bit flags value")
    return number


def _words(bits: tuple[Bit, ...], group: str, prefix: str) -> list[str]:
    return [_TYPE_WORDS.get(b.name[len(prefix) :], b.name[len(prefix) :]) for b in bits if b.group == group]


def _cublaslt_summary(bits: tuple[Bit, ...], unknown: int) -> str:
    if not bits and not unknown:
        return "no flags set"
    ops = [_OP_NAMES[b.name] for b in bits if b.group == "operation type"]
    inputs = _words(bits, "input type", "INPUT_")
    accumulators = _words(bits, "accumulator", "ACCUMULATOR_")
    text = " and ".join(ops) if ops else "unknown operation type"
    details = []
    if inputs:
        details.append(f"{'/'.join(inputs)} inputs")
    if accumulators:
        details.append(f"{'/'.join(accumulators)} accumulation")
    if details:
        text += " with " + " and ".join(details)
    if any(b.name == "GAUSSIAN" for b in bits):
        text += ", Gaussian complex multiplication"
    if unknown:
        text += f"; unknown bits {hex(unknown)}"
    return text


def _rocblas_summary(bits: tuple[Bit, ...], unknown: int) -> str:
    if not bits and not unknown:
        return "none: the standard implementation"
    text = "; ".join(f"{b.name}: {b.meaning}" for b in bits)
    if unknown:
        text += ("; " if text else "") + f"unknown bits {hex(unknown)}"
    return text


def rocblas_flags_name(value: int | None) -> str:
    """The name the rocBLAS trace would print, or the bits joined with `|` for a combination."""
    if value is None:
        return "?"
    if value == 0:
        return "none"
    decoded = decode_flags(value, "rocblas")
    names = list(decoded.names)
    if decoded.unknown:
        names.append(hex(decoded.unknown))
    return "|".join(names)


def rocblas_flags_value(name: str) -> int | None:
    """The value of a flags name printed by the rocBLAS trace/profile; None for `invalid` (a combination)."""
    text = name.strip()
    if text == "invalid":
        return None
    if re.fullmatch(r"\d+|0[xX][0-9a-fA-F]+", text):
        return parse_number(text)
    return encode_flags([text], "rocblas")


def numeric_difference(a: int, b: int) -> list[str]:
    """The cuBLASLt flag groups in which two values differ (`operation type`, `input type`, ...)."""
    groups = []
    for group, mask in (
        ("operation type", 0xFF),
        ("accumulator", 0xFF00),
        ("input type", 0xFF0000),
        ("Gaussian", 0x100000000),
    ):
        if a & mask != b & mask:
            groups.append(group)
    if (a & ~0x1FFFFFFFF) != (b & ~0x1FFFFFFFF):
        groups.append("unknown bits")
    return groups
