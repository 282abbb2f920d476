"""Which arithmetic a GEMM ran: from the decoded numerics (or the types alone) to one instruction of one GPU.

An :class:`Arithmetic` says what the emulation engine runs for one side of a finding: the operand format the
kernel multiplies, the accumulator, and either an IEEE fused multiply-add in k order (CUDA-core kernels, AMD FP32
MFMA) or one of mmasim's tensor-core / matrix-core instructions. It is chosen from

* cuBLASLt's numerical impl flags (``--caps``, or ``--numerics 0x40202``): operation type, input and accumulator
  bits;
* rocBLAS / hipBLASLt types and gemm flags (``fp16_alt_impl`` converts FP16 inputs to BF16 for BF16 MFMA);
* where the flags are unknown, the compute type and data types, which allow a few *candidates* (TF32 or FP32
  FMA for ``COMPUTE_32F_FAST_TF32``), each labelled as one.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, replace
from typing import Any

from blaslog.emulate.gpus import Gpu
from blaslog.errors import BlaslogError


class NotModelled(BlaslogError):
    """An arithmetic the emulation cannot run on the GPU asked for (no such instruction, integer inputs ...)."""


@dataclass(frozen=True, slots=True)
class Arithmetic:
    """What one side of a finding computes."""

    kind: str
    """`fma` (IEEE fused multiply-add in k order) or `mma` (a tensor-core / matrix-core instruction)."""
    inputs: str
    """Format A and B are stored in (`fp32`, `fp16`, `bf16`, `fp64`, `e4m3`, `e5m2`)."""
    multiplies: str
    """Format the products are formed in (`tf32` for FP32 inputs on TF32 tensor cores, `bf16` for rocBLAS's
    fp16_alt_impl ...)."""
    accumulates: str
    """Accumulator format (`fp32`, `fp16`, `fp64`)."""
    output: str
    """Format of D (the accumulator is rounded to it, round to nearest even)."""
    instruction: str
    """The instruction modelled (`mma.m16n8k8.f32.tf32.tf32.f32`, `fma.rn.f32`, `v_mfma_f32_32x32x8bf16_1k`)."""
    gpu: Gpu
    """The GPU whose instruction it is."""
    label: str
    """In words (`TF32 tensor-core MMA`)."""
    source: str = ""
    """What it was chosen from (`numerics 0x40202`, `fp16_alt_impl (rocBLAS flags 0x4)`, `candidate for
    COMPUTE_32F_FAST_TF32`)."""
    convert: str | None = None
    """Conversion of the inputs before the instruction: `bf16-rz` (truncation) or `bf16-rnz` (round to nearest,
    ties toward zero), rocBLAS's fp16_alt_impl and fp16_alt_impl_rnz; `tf32-rna` (round to nearest, ties away
    from zero: `cvt.rna.tf32.f32`, as cuBLAS's TF32 kernels convert FP32 operands; seen bit for bit on an H200)."""
    candidate: bool = False
    """True when the numerics are not known and this is one the types allow."""
    splits: int = 1
    """Split-K count: the k range is cut in this many parts, their partial sums added in FP32 in order."""
    split_tile: int = 0
    """With split-K, each part's k is a multiple of this (the kernel's k tile; 0: parts as even as can be)."""

    def describe(self) -> str:
        """One line: `TF32 tensor-core MMA (mma.m16n8k8.f32.tf32.tf32.f32 on A100)`."""
        split = f", split-K {self.splits}" if self.splits > 1 else ""
        return f"{self.label} ({self.instruction} on {self.gpu.name}{split})"

    def key(self) -> tuple[Any, ...]:
        """What makes two arithmetics compute the same numbers."""
        return (
            self.kind,
            self.inputs,
            self.multiplies,
            self.accumulates,
            self.output,
            self.instruction,
            self.gpu.arch,
            self.convert,
            self.splits,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "label": self.label,
            "instruction": self.instruction,
            "kind": self.kind,
            "inputs": self.inputs,
            "multiplies": self.multiplies,
            "accumulates": self.accumulates,
            "output": self.output,
            "convert": self.convert,
            "splits": self.splits,
            "source": self.source,
            "candidate": self.candidate,
        }


_WORDS = {
    "fp32": "FP32",
    "fp16": "FP16",
    "bf16": "BF16",
    "tf32": "TF32",
    "fp64": "FP64",
    "e4m3": "FP8 E4M3",
    "e5m2": "FP8 E5M2",
    "xf32": "XF32",
}

# ---- types as the logs spell them ------------------------------------------------------------------------------

_NV_TYPE = re.compile(r"(?:CUDA_|HIP_)?R_?(\d+)(F|BF|I|U)(?:_(E4M3|E5M2))?", re.IGNORECASE)
_ROC_TYPE = {
    "f64_r": "fp64",
    "f32_r": "fp32",
    "f16_r": "fp16",
    "bf16_r": "bf16",
    "f8_r": "e4m3",
    "bf8_r": "e5m2",
    "i8_r": "int8",
    "i32_r": "int32",
    "i_r32": "int32",
    "xf32_r": "fp32",
}


def data_format(text: str | None) -> str | None:
    """`fp32`, `fp16`, `bf16`, `fp64`, `e4m3`, `e5m2`, `int8`, `int32` for a type as any log spells it, or None."""
    if not text:
        return None
    lowered = text.strip().lower()
    if lowered in _ROC_TYPE:
        return _ROC_TYPE[lowered]
    match = _NV_TYPE.fullmatch(text.strip())
    if match is None:
        return None
    bits, kind, fp8 = match.group(1), match.group(2).upper(), match.group(3)
    if fp8:
        return fp8.lower()
    if kind == "BF" and bits == "16":
        return "bf16"
    if kind == "F":
        return {"64": "fp64", "32": "fp32", "16": "fp16"}.get(bits)
    return {"8": "int8", "32": "int32"}.get(bits)


def compute_format(text: str | None) -> tuple[str | None, str | None]:
    """(accumulator, fast mode) of a compute type: `COMPUTE_32F_FAST_TF32` -> (`fp32`, `tf32`), `f32_r` ->
    (`fp32`, None), `COMPUTE_16F` -> (`fp16`, None)."""
    if not text:
        return None, None
    upper = text.strip().upper()
    match = re.fullmatch(r"(?:CUBLAS_)?COMPUTE_(\d+)([FI])(?:_PEDANTIC)?(?:_FAST_(TF32|16F|16BF))?", upper)
    if match:
        acc = {"64": "fp64", "32": "fp32", "16": "fp16"}.get(match.group(1)) if match.group(2) == "F" else "int32"
        fast = {"TF32": "tf32", "16F": "fp16", "16BF": "bf16"}.get(match.group(3) or "")
        return acc, fast
    return data_format(text), None


# ---- the instruction of each GPU --------------------------------------------------------------------------------

_SM80 = {  # warp-level mma.sync of Ampere, kept by Ada and sm_120
    ("tf32", "fp32"): ("MMA", "m16n8k8.f32.tf32.tf32.f32"),
    ("fp16", "fp32"): ("MMA", "m16n8k16.f32.f16.f16.f32"),
    ("fp16", "fp16"): ("MMA", "m16n8k16.f16.f16.f16.f16"),
    ("bf16", "fp32"): ("MMA", "m16n8k16.f32.bf16.bf16.f32"),
}
_SM89_FP8 = {
    ("e4m3", "fp32"): ("MMA", "m16n8k32.f32.e4m3.e4m3.f32"),
    ("e5m2", "fp32"): ("MMA", "m16n8k32.f32.e5m2.e5m2.f32"),
}
_NV_SHAPES = {
    # (arch, multiplies, accumulates) -> (class, mmasim shape and type)
    "Volta": {("fp16", "fp32"): ("MMA", "m8n8k4.f32.f16.f16.f32"), ("fp16", "fp16"): ("MMA", "m8n8k4.f16.f16.f16.f16")},
    "Turing": {
        ("fp16", "fp32"): ("MMA", "m16n8k8.f32.f16.f16.f32"),
        ("fp16", "fp16"): ("MMA", "m16n8k8.f16.f16.f16.f16"),
    },
    "Ampere": {**_SM80, ("fp64", "fp64"): ("MMA", "m8n8k4.f64.f64.f64.f64")},
    "Ada Lovelace": {**_SM80, **_SM89_FP8},
    "RTX Blackwell": {**_SM80, **_SM89_FP8},  # sm_120: warp-level mma.sync, as Ada
    "Hopper": {  # cuBLASLt's Hopper kernels use warpgroup MMA
        ("tf32", "fp32"): ("WGMMA", "m64n8k8.f32.tf32.tf32"),
        ("fp16", "fp32"): ("WGMMA", "m64n8k16.f32.f16.f16"),
        ("fp16", "fp16"): ("WGMMA", "m64n8k16.f16.f16.f16"),
        ("bf16", "fp32"): ("WGMMA", "m64n8k16.f32.bf16.bf16"),
        ("e4m3", "fp32"): ("WGMMA", "m64n8k32.f32.e4m3.e4m3"),
        ("e5m2", "fp32"): ("WGMMA", "m64n8k32.f32.e5m2.e5m2"),
        ("fp64", "fp64"): ("MMA", "m16n8k4.f64.f64.f64.f64"),
    },
    "Blackwell": {  # tcgen05.mma
        ("tf32", "fp32"): ("TCGen05MMA", "m128n8k8.kind::tf32.f32.tf32.tf32"),
        ("fp16", "fp32"): ("TCGen05MMA", "m128n8k16.kind::f16.f32.f16.f16"),
        ("fp16", "fp16"): ("TCGen05MMA", "m128n8k16.kind::f16.f16.f16.f16"),
        ("bf16", "fp32"): ("TCGen05MMA", "m128n8k16.kind::f16.f32.bf16.bf16"),
        ("e4m3", "fp32"): ("TCGen05MMA", "m128n8k32.kind::f8f6f4.f32.e4m3.e4m3"),
        ("e5m2", "fp32"): ("TCGen05MMA", "m128n8k32.kind::f8f6f4.f32.e5m2.e5m2"),
        ("fp64", "fp64"): ("MMA", "m8n8k4.f64.f64.f64.f64"),
    },
}
_AMD_SHAPES = {
    # (arch, multiplies) -> MFMA suffix (accumulation FP32, FP64 for f64)
    "CDNA1": {"fp32": "f32_32x32x2f32", "fp16": "f32_32x32x8f16", "bf16": "f32_32x32x4bf16"},
    "CDNA2": {
        "fp32": "f32_32x32x2f32",
        "fp16": "f32_32x32x8f16",
        "bf16": "f32_32x32x8bf16_1k",
        "fp64": "f64_16x16x4f64",
    },
    "CDNA3": {
        "fp32": "f32_32x32x2_f32",
        "xf32": "f32_32x32x4_xf32",
        "fp16": "f32_32x32x8_f16",
        "bf16": "f32_32x32x8_bf16",
        "e4m3": "f32_32x32x16_fp8_fp8",
        "e5m2": "f32_32x32x16_bf8_bf8",
        "fp64": "f64_16x16x4_f64",
    },
}


def tensor_core(gpu: Gpu, multiplies: str, accumulates: str) -> tuple[str, str]:
    """(mmasim class, shape and type) of the tensor-core / matrix-core instruction for these formats on `gpu`;
    NotModelled when the GPU has none."""
    if gpu.vendor == "amd":
        suffix = _AMD_SHAPES.get(gpu.arch, {}).get(multiplies)
        if suffix is None or (accumulates == "fp16"):
            raise NotModelled(
                f"{gpu.name} ({gpu.arch}) has no {_WORDS.get(multiplies, multiplies)} matrix-core "
                f"instruction accumulating in {_WORDS.get(accumulates, accumulates)}"
            )
        return "MFMA", suffix
    found = _NV_SHAPES.get(gpu.arch, {}).get((multiplies, accumulates))
    if found is None:
        raise NotModelled(
            f"{gpu.name} ({gpu.arch}) has no {_WORDS.get(multiplies, multiplies)} tensor-core instruction "
            f"accumulating in {_WORDS.get(accumulates, accumulates)}"
        )
    return found


def instruction_name(gpu: Gpu, op: str, shape: str) -> str:
    """The PTX / ISA spelling: `mma.sync.m16n8k8...`, `wgmma.m64n8k8...`, `v_mfma_f32_32x32x8f16`."""
    if op == "MFMA":
        return f"v_mfma_{shape}"
    return {"MMA": "mma.sync.", "WGMMA": "wgmma.", "TCGen05MMA": "tcgen05.mma."}[op] + shape


def _mma(gpu: Gpu, inputs: str, multiplies: str, accumulates: str, output: str, source: str, **kw: Any) -> Arithmetic:
    op, shape = tensor_core(gpu, multiplies, accumulates)
    if multiplies == "tf32" and gpu.vendor == "nvidia" and "convert" not in kw:
        kw["convert"] = "tf32-rna"
    core = "matrix-core MFMA" if gpu.vendor == "amd" else "tensor-core MMA"
    return Arithmetic(
        "mma",
        inputs,
        multiplies,
        accumulates,
        output,
        instruction_name(gpu, op, shape),
        gpu,
        f"{_WORDS.get(multiplies, multiplies)} {core}",
        source,
        **kw,
    )


def _fma(gpu: Gpu, inputs: str, accumulates: str, output: str, source: str, **kw: Any) -> Arithmetic:
    width = {"fp32": "f32", "fp16": "f16", "fp64": "f64"}[accumulates]
    unit = "CUDA-core" if gpu.vendor == "nvidia" else "vector"
    return Arithmetic(
        "fma",
        inputs,
        inputs if accumulates != "fp32" else "fp32",
        accumulates,
        output,
        f"fma.rn.{width}",
        gpu,
        f"{unit} {_WORDS[accumulates]} FMA",
        source,
        **kw,
    )


# ---- from numerics --------------------------------------------------------------------------------------------

_INPUT_BITS = {
    0x10000: "fp16",
    0x20000: "bf16",
    0x40000: "tf32",
    0x80000: "fp32",
    0x100000: "fp64",
    0x400000: "e4m3",
    0x800000: "e5m2",
    0x200000: "int8",
}
_ACC_BITS = {0x100: "fp16", 0x200: "fp32", 0x400: "fp64", 0x800: "int32"}


def from_cublaslt_flags(flags: int, gpu: Gpu, inputs: str, output: str, source: str = "") -> tuple[Arithmetic, ...]:
    """The arithmetic cuBLASLt numerical impl flags name (`0x40202`: HMMA, TF32 inputs, FP32 accumulator): one,
    or the candidates where the flags leave it open."""
    source = source or f"numerics {hex(flags)}"
    inputs_named = [name for bit, name in _INPUT_BITS.items() if flags & bit]
    accs_named = [name for bit, name in _ACC_BITS.items() if flags & bit]
    ops_named = [bit for bit in (0x1, 0x2, 0x4, 0x8) if flags & bit]
    if len(inputs_named) != 1 or len(accs_named) != 1 or len(ops_named) != 1 or flags >> 24:
        raise NotModelled(
            f"numerics {hex(flags)} do not name one operation type, one input type and one accumulator (as "
            "cuBLASLt's numerical impl flags do, e.g. 0x40202)"
        )
    multiplied, acc = inputs_named[0], accs_named[0]
    if multiplied == "int8" or acc == "int32":
        raise NotModelled("integer GEMMs (IMMA, INT32 accumulation) are exact: no rounding to emulate")
    if gpu.vendor != "nvidia":
        raise NotModelled(f"cuBLASLt numerics {hex(flags)} are NVIDIA's; {gpu.name} is an AMD GPU")
    if flags & 0x1 and multiplied == "tf32":
        # cuBLASLt 13 reports some of its Hopper TF32 kernels so (seen on an H200): the numerics name TF32 inputs
        # but no tensor-core operation. Both readings are emulated, labelled as candidates.
        why = f"numerics {hex(flags)} (FMA with TF32 inputs: which unit is not said)"
        on_cores = replace(
            _fma(gpu, inputs, "fp32", output, why, convert="tf32-rna"), label="FMA on TF32-rounded inputs"
        )
        return (
            replace(_mma(gpu, inputs, "tf32", acc, output, why), candidate=True),
            replace(on_cores, candidate=True),
        )
    if flags & 0x1:  # FMA: CUDA cores
        if multiplied not in ("fp32", "fp16", "bf16", "fp64"):
            raise NotModelled(f"a CUDA-core FMA kernel with {_WORDS.get(multiplied, multiplied)} inputs")
        return (_fma(gpu, inputs, acc if acc in ("fp16", "fp64") else "fp32", output, source),)
    if flags & 0x2 or flags & 0x8:  # HMMA, DMMA
        return (_mma(gpu, inputs, multiplied, acc, output, source),)
    raise NotModelled(f"numerics {hex(flags)} name no operation type the emulation knows (FMA, HMMA, DMMA)")


def from_rocblas(gpu: Gpu, inputs: str, compute: str | None, flags: int | None, output: str) -> Arithmetic:
    """The arithmetic of a rocBLAS / hipBLASLt GEMM on an AMD GPU: its types and gemm flags (fp16_alt_impl)."""
    if gpu.vendor != "amd":
        raise NotModelled(f"a rocBLAS GEMM on {gpu.name}, an NVIDIA GPU: give --gpu with an AMD GPU")
    flags = flags or 0
    if inputs == "fp16" and flags & 0x4 and gpu.arch != "CDNA2":
        plain = _mma(gpu, inputs, inputs, "fp32", output, f"rocBLAS flags {hex(flags)}")
        return replace(plain, source=f"rocBLAS flags {hex(flags)}: fp16_alt_impl is ignored off gfx90a (MI200)")
    if inputs == "fp16" and flags & 0x4 and gpu.arch == "CDNA2":
        rounding = "bf16-rnz" if flags & 0x10 else "bf16-rz"
        words = "rounded to nearest (ties toward zero)" if flags & 0x10 else "truncated"
        return replace(
            _mma(gpu, inputs, "bf16", "fp32", output, f"fp16_alt_impl (rocBLAS flags {hex(flags)})", convert=rounding),
            label=f"fp16_alt_impl: FP16 inputs {words} to BF16, BF16 matrix-core MFMA",
        )
    if inputs in ("fp64",):
        return _mma(gpu, inputs, "fp64", "fp64", output, "types")
    if inputs == "fp32" and compute == "xf32":
        return _mma(gpu, inputs, "xf32", "fp32", output, "xf32 math mode")
    if inputs == "fp32":
        op, shape = tensor_core(gpu, "fp32", "fp32")
        return Arithmetic(
            "fma",
            inputs,
            "fp32",
            "fp32",
            output,
            instruction_name(gpu, op, shape),
            gpu,
            "FP32 matrix-core MFMA (an FMA chain in k order)",
            "types",
        )
    return _mma(gpu, inputs, inputs, "fp32", output, f"types ({_WORDS.get(inputs, inputs)} inputs)")


def candidates(
    gpu: Gpu, inputs: str, compute: str | None, output: str, math_mode: str | None = None
) -> list[Arithmetic]:
    """The arithmetics a cuBLAS / cuBLASLt GEMM of these types may run when its numerics are not known,
    each labelled as a candidate."""
    acc, fast = compute_format(compute)
    acc = acc or ("fp32" if inputs in ("fp32", "fp16", "bf16", "tf32", "e4m3", "e5m2") else inputs)
    if math_mode and "TF32" in math_mode.upper() and inputs == "fp32":
        fast = "tf32"
    found: list[Arithmetic] = []
    why = f"candidate for {compute or 'these types'}"

    def add(make: Any, *args: Any) -> None:
        with contextlib.suppress(NotModelled):
            found.append(replace(make(gpu, *args), candidate=True))

    if inputs in ("e4m3", "e5m2"):
        add(_mma, inputs, inputs, "fp32", output, why)
    elif inputs == "fp64":
        add(_fma, inputs, "fp64", output, why)
    elif inputs == "fp32":
        add(_fma, inputs, "fp32", output, why)
        if fast:
            add(_mma, inputs, fast, "fp32", output, why)
    elif inputs in ("fp16", "bf16"):
        add(_mma, inputs, inputs, acc if acc == "fp16" else "fp32", output, why)
        add(_fma, inputs, "fp16" if acc == "fp16" and inputs == "fp16" else "fp32", output, why)
    if not found:
        raise NotModelled(
            f"no arithmetic of {gpu.name} fits {_WORDS.get(inputs, inputs)} inputs and compute {compute or '?'}"
        )
    return found


# ---- by name (blaslog emulate --numerics NAME) ------------------------------------------------------------------

NAMES: dict[str, str] = {
    "fma-fp32": "CUDA-core / vector FP32 FMA in k order (cuBLASLt 0x80201)",
    "fma-fp16": "FP16 FMA in k order, FP16 accumulation (0x10101)",
    "tf32": "TF32 tensor-core MMA, FP32 accumulation (0x40202)",
    "fp16": "FP16 tensor-core / matrix-core MMA, FP32 accumulation (0x10202)",
    "fp16-acc16": "FP16 tensor-core MMA, FP16 accumulation (COMPUTE_16F, 0x10102)",
    "bf16": "BF16 tensor-core / matrix-core MMA, FP32 accumulation (0x20202)",
    "fp8-e4m3": "FP8 E4M3 tensor-core MMA, FP32 accumulation, per-tensor scales (0x400202)",
    "fp8-e5m2": "FP8 E5M2 tensor-core MMA, FP32 accumulation, per-tensor scales (0x800202)",
    "fp64": "FP64 (DMMA or FMA; one fused multiply-add per k)",
    "xf32": "XF32 matrix-core MFMA (MI300)",
    "fp16-alt-impl": "rocBLAS fp16_alt_impl: FP16 inputs truncated to BF16, BF16 MFMA (MI200; flags 0x4)",
    "fp16-alt-impl-rnz": "rocBLAS fp16_alt_impl_rnz: FP16 inputs rounded to BF16, BF16 MFMA (MI200; flags 0x14)",
}


_NUMBER = re.compile(r"0x[0-9a-f]+|[0-9]+")
_NAMED_FMA: dict[str, tuple[str, str]] = {
    "fma-fp32": ("fp32", "fp32"),
    "fma-fp16": ("fp16", "fp16"),
    "fp64": ("fp64", "fp64"),
}
"""(inputs, accumulation) of each name of an FMA in k order (either vendor's)."""
_NAMED_MATRIX: dict[str, tuple[str, str, str]] = {
    "tf32": ("fp32", "tf32", "fp32"),
    "xf32": ("fp32", "xf32", "fp32"),
    "fp16": ("fp16", "fp16", "fp32"),
    "fp16-acc16": ("fp16", "fp16", "fp16"),
    "bf16": ("bf16", "bf16", "fp32"),
    "fp8-e4m3": ("e4m3", "e4m3", "fp32"),
    "fp8-e5m2": ("e5m2", "e5m2", "fp32"),
}
"""(inputs, multiplies, accumulation) of each name of a tensor-core / matrix-core MMA."""
_AMD_LACKS = {"tf32": "TF32 (MI300X has XF32: --numerics xf32)", "fp16-acc16": "FP16-accumulating"}
"""The matrix-core instructions AMD has not, by name."""
_ALT_IMPL = {"fp16-alt-impl": 0x4, "fp16-alt-impl-rnz": 0x14}
"""rocBLAS gemm flags of each fp16_alt_impl name."""


def by_name(name: str, gpu: Gpu, output: str | None = None) -> Arithmetic:
    """The arithmetic --numerics names: a cuBLASLt flags value (`0x40202`), a rocBLAS flags value with `rocblas:`
    (`rocblas:0x4`), or one of NAMES."""
    text = name.strip().lower()
    if _NUMBER.fullmatch(text):
        return _by_cublaslt_flags(int(text, 0), gpu, output)
    if text.startswith("rocblas:"):
        value = text.split(":", 1)[1]
        if not _NUMBER.fullmatch(value) or int(value, 0) >= 1 << 32:
            raise NotModelled(f"--numerics {name!r}: give rocBLAS gemm flags as rocblas:0x4 (a number)")
        return from_rocblas(gpu, "fp16", "fp32", int(value, 0), output or "fp16")
    if text not in NAMES:
        raise NotModelled(
            f"unknown numerics {name!r}; give a cuBLASLt flags value (0x40202), rocblas:FLAGS, or "
            f"one of {', '.join(NAMES)}"
        )
    if text in _ALT_IMPL:
        if gpu.arch != "CDNA2":
            raise NotModelled(f"fp16_alt_impl applies on MI200 (gfx90a) only; {gpu.describe()} ignores it")
        return from_rocblas(gpu, "fp16", "fp32", _ALT_IMPL[text], output or "fp16")
    if text in _NAMED_FMA:
        inputs, accumulates = _NAMED_FMA[text]
        return _fma(gpu, inputs, accumulates, output or _default_output(inputs), f"--numerics {text}")
    return _matrix_core(text, gpu, output)


def _by_cublaslt_flags(flags: int, gpu: Gpu, output: str | None) -> Arithmetic:
    """The one arithmetic a cuBLASLt numerical-implementation flags value names."""
    bits = next((v for b, v in _INPUT_BITS.items() if flags & b), "fp32")
    inputs = "fp32" if bits == "tf32" else bits
    found = from_cublaslt_flags(flags, gpu, inputs, output or _default_output(inputs))
    if len(found) > 1:
        raise NotModelled(
            f"numerics {hex(flags)} leave the arithmetic open ({' or '.join(a.label for a in found)}): "
            "give the one you mean by name (tf32, fma-fp32 ...)"
        )
    return found[0]


def _matrix_core(text: str, gpu: Gpu, output: str | None) -> Arithmetic:
    """The tensor-core (NVIDIA) or matrix-core (AMD) MMA of a name of _NAMED_MATRIX."""
    inputs, multiplies, accumulates = _NAMED_MATRIX[text]
    out = output or _default_output(inputs)
    if gpu.vendor == "amd":
        if text in _AMD_LACKS:
            raise NotModelled(f"{gpu.name} ({gpu.arch}) has no {_AMD_LACKS[text]} matrix-core instruction")
        if text == "xf32" and gpu.arch != "CDNA3":
            raise NotModelled(f"{gpu.name} ({gpu.arch}) has no XF32 matrix-core instruction (MI300X has)")
        return from_rocblas(gpu, inputs, "xf32" if text == "xf32" else "fp32", 0, out)
    if text == "xf32":
        raise NotModelled("XF32 is AMD's (MI300X); NVIDIA's is tf32")
    return _mma(gpu, inputs, multiplies, accumulates, out, f"--numerics {text}")


def _default_output(inputs: str) -> str:
    return "fp32" if inputs in ("e4m3", "e5m2") else inputs
