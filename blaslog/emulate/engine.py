"""The arithmetic itself: sampled output elements of a GEMM computed bit for bit as one GPU computes them.

Each sampled output element is a dot product over its full k. The engine computes all samples at once, one k
step (FMA) or one instruction step (MMA) at a time over the whole batch: never a Python loop over elements.

* ``fma``: IEEE fused multiply-add in k order, ``c = fma(a_k, b_k, c)``, each rounded once to the accumulator
  format. Computed in FP64 with round-to-odd (the exact sum's sticky bit kept in the last place), which rounds
  once to FP32 or FP16 exactly as a fused operation does (53 >= 2 x 24 + 2 bits); FP64 FMA uses mmasim's.
* ``mma``: mmasim's model of the instruction (``dpa``: the instruction's fused dot product chained along k, the
  accumulator carried from step to step, as a kernel's main loop does).

A sharded side (tensor parallelism over k) computes each rank's partial product over its k slice, rounds it to
the output type, and sums the partials in rank order in the output type, as an all-reduce does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Any

import numpy as np

from blaslog.emulate.arithmetic import Arithmetic, NotModelled
from blaslog.errors import BlaslogError

INSTALL = "pip install 'blaslog[emulate]'"
"""What installs the emulation's engine (torch's CPU build first keeps the CUDA wheels out: see the README)."""


class EmulationUnavailable(BlaslogError):
    """torch or mmasim is not installed."""


def require() -> None:
    """EmulationUnavailable (one line naming the install command) unless torch and mmasim import."""
    import importlib.util

    missing = [name for name in ("torch", "mmasim") if importlib.util.find_spec(name) is None]
    if missing:
        raise EmulationUnavailable(
            f"--emulate needs {' and '.join(missing)} (the emulate extra): {INSTALL} "
            "(install torch's CPU build first: pip install torch --index-url https://download.pytorch.org/whl/cpu)"
        )


# ---- formats ----------------------------------------------------------------------------------------------------


def _torch() -> Any:
    import torch

    return torch


_TORCH_DTYPES = {
    "fp16": "float16",
    "bf16": "bfloat16",
    "fp32": "float32",
    "fp64": "float64",
    "e4m3": "float8_e4m3fn",
    "e5m2": "float8_e5m2",
}
_AMD_FP8 = {"e4m3": "float8_e4m3fnuz", "e5m2": "float8_e5m2fnuz"}
FP8_MAX = {"e4m3": 448.0, "e5m2": 57344.0}
"""Largest finite value of each FP8 format (NVIDIA's OCP formats; per-tensor scales map the amax onto it)."""


def dtype(fmt: str, vendor: str = "nvidia") -> Any:
    """The torch dtype of a format (AMD's FP8 formats are the fnuz ones)."""
    name = _AMD_FP8[fmt] if vendor == "amd" and fmt in _AMD_FP8 else _TORCH_DTYPES[fmt]
    return getattr(_torch(), name)


def round_to(values: np.ndarray, fmt: str, vendor: str = "nvidia") -> np.ndarray:
    """Values rounded (to nearest, ties to even) to `fmt`, returned as FP64."""
    if fmt == "fp64":
        return values.astype(np.float64)
    if fmt == "fp32":
        return values.astype(np.float32).astype(np.float64)
    if fmt == "fp16":
        return values.astype(np.float16).astype(np.float64)
    torch = _torch()
    # FP64 -> FP32 first would round twice: torch converts FP64 to these formats directly
    tensor = torch.from_numpy(np.ascontiguousarray(values, dtype=np.float64))
    return tensor.to(dtype(fmt, vendor)).to(torch.float64).numpy()  # type: ignore[no-any-return]


def to_bf16(values: np.ndarray, mode: str) -> np.ndarray:
    """FP16 (or FP32) values converted to BF16 by truncation (`bf16-rz`) or to nearest with ties toward zero
    (`bf16-rnz`), as rocBLAS's fp16_alt_impl and fp16_alt_impl_rnz convert them."""
    bits = values.astype(np.float32).view(np.uint32)
    if mode == "bf16-rnz":
        # round half toward zero: add just under half an ulp of BF16 (0x7FFF), then truncate
        finite = (bits & 0x7F800000) != 0x7F800000
        bits = np.where(finite, bits + np.uint32(0x7FFF), bits)
    truncated = (bits & np.uint32(0xFFFF0000)).view(np.float32)
    return truncated.astype(np.float64)


def to_tf32(values: np.ndarray) -> np.ndarray:
    """FP32 values rounded to TF32 (10 mantissa bits) to nearest, ties away from zero (`cvt.rna.tf32.f32`)."""
    bits = values.astype(np.float32).view(np.uint32)
    finite = (bits & 0x7F800000) != 0x7F800000
    rounded = np.where(finite, (bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000), bits)
    return rounded.view(np.float32).astype(np.float64)


# ---- fused multiply-add --------------------------------------------------------------------------------------

_NARROW = {"fp32": np.float32, "fp16": np.float16}
"""The formats the FMA chain rounds to through FP64 (24 and 11 significand bits: 53 >= 2 x 24 + 2)."""


def fma_round(a: np.ndarray, b: np.ndarray, c: np.ndarray, fmt: str) -> np.ndarray:
    """fma(a, b, c) rounded once to `fmt` (`fp32` or `fp16`), element by element, for a, b, c exact in `fmt`:
    a chain of one step."""
    return fma_chain(a[:, None], b[:, None], fmt, c)


def fma_chain(a: np.ndarray, b: np.ndarray, fmt: str, c: np.ndarray | None = None) -> np.ndarray:
    """Σ_k a[:, k] b[:, k] (plus c) as a chain of fused multiply-adds in k order, rounded to `fmt` at each step
    (`fp32`, `fp16` or `fp64`).

    a*b is exact in FP64 (at most 2 x 24 bits); a*b + c is computed in FP64 and its rounding error found exactly
    (TwoSum); where that error is not zero the sum's last bit is made odd (round to odd), which keeps what a
    second rounding to a format of 24 or fewer bits needs: one rounding to `fmt`, as a fused operation does."""
    samples, k = a.shape
    acc = np.zeros(samples) if c is None else c.copy()
    if fmt == "fp64":
        torch = _torch()
        from mmasim.arithmetic.fma import fma

        at, bt = torch.from_numpy(np.ascontiguousarray(a.T)), torch.from_numpy(np.ascontiguousarray(b.T))
        out = torch.from_numpy(acc)
        for i in range(k):
            out = fma(at[i], bt[i], out)
        return out.numpy()  # type: ignore[no-any-return]
    kind = _NARROW[fmt]
    products = np.ascontiguousarray((a * b).T)  # exact: at most 2 x 24 bits
    total, back, error, scratch = (np.empty(samples) for _ in range(4))
    narrow = np.empty(samples, dtype=kind)
    acc = acc.astype(np.float64)
    bits = total.view(np.int64)
    for i in range(k):
        # in place: the sum and its exact error (TwoSum)
        p = products[i]
        np.add(p, acc, out=total)
        np.subtract(total, acc, out=back)
        np.subtract(total, back, out=scratch)
        np.subtract(acc, scratch, out=scratch)
        np.subtract(p, back, out=error)
        np.add(error, scratch, out=error)
        # round to odd: a*b + c is inexact in FP64 and its last bit even (an infinite sum is left as it is)
        odd_needed = (error != 0) & ((bits & 1) == 0) & np.isfinite(total)
        if odd_needed.any():
            away = np.signbit(error) == np.signbit(total)
            bits += np.where(odd_needed & (total != 0), np.where(away, 1, -1), 0)
        narrow[...] = total  # the one rounding, to `fmt` (assignment casts, to nearest even)
        acc[...] = narrow
    return acc


# ---- tensor-core and matrix-core instructions ----------------------------------------------------------------


def _operation(arith: Arithmetic) -> Any:
    """mmasim's model of the arithmetic's instruction."""
    name = arith.instruction
    if arith.gpu.vendor == "amd":
        from mmasim.amd import MFMA

        return MFMA(arith.gpu.arch, name.removeprefix("v_mfma_"))
    import mmasim.nv_ptx as nv

    for prefix, cls in (("mma.sync.", nv.MMA), ("wgmma.", nv.WGMMA), ("tcgen05.mma.", nv.TCGen05MMA)):
        if name.startswith(prefix):
            return cls(arith.gpu.arch, name.removeprefix(prefix))
    raise NotModelled(f"no mmasim model for {name}")


_SUBNORMAL_EXPONENT = {"fp32": -126, "tf32": -126, "xf32": -126, "fp16": -14, "bf16": -126, "e4m3": -6, "e5m2": -14}


def _frexp(x: np.ndarray, e_subnormal: int) -> tuple[np.ndarray, np.ndarray]:
    """mmasim's frexp_and_normalize: x = s 2^e with 1 <= |s| < 2, subnormals at `e_subnormal`, zero's e there."""
    s, e = np.frexp(x)
    s, e = s * 2.0, e.astype(np.int64) - 1
    low = e < e_subnormal
    if low.any():
        s = np.where(low, np.ldexp(s, np.minimum(e - e_subnormal, 0)), s)
        e = np.where(low, e_subnormal, e)
    e = np.where(s == 0.0, e_subnormal, e)
    return s, e


def _rounded(total: np.ndarray, e_max: np.ndarray, rho: str) -> np.ndarray:
    """mmasim's ldexp_and_normalize: the fused sum rounded to the accumulator (RZ-FP32, RZ-E8M13, RNE-FP16)."""
    with np.errstate(over="ignore", invalid="ignore"):
        value = np.ldexp(total, e_max)
        if rho == "RNE-FP16":
            s, e = _frexp(value, -14)
            out = np.ldexp(np.round(s * 2.0**10) * 2.0**-10, e).astype(np.float16).astype(np.float64)
        elif rho == "RNE-FP32":
            out = value.astype(np.float32).astype(np.float64)
        else:
            s, e = _frexp(value, -126)
            bits = 13 if rho == "RZ-E8M13" else 23
            out = np.ldexp(np.trunc(s * 2.0**bits) * 2.0**-bits, e).astype(np.float32).astype(np.float64)
    positive: np.ndarray = out + 0.0  # -0.0 to +0.0
    return positive


_BLOCK = 1024
"""Columns of k whose products are formed at once (bounds the memory of long k)."""
_NEVER = -(1 << 20)
"""The exponent of padding past the end of k: it never wins a step's maximum (and adds 0)."""


def _product_steps(
    a: np.ndarray, b: np.ndarray, sub: int, e_zero: int, L: int, saturate: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """The exact products of a block of k as significand and exponent, [samples, steps, L]: a zero's exponent is
    `e_zero`, padding past the end of k adds 0 and never wins a step's maximum; with `saturate`, a product past
    FP32's range is infinite (CDNA3)."""
    sa, ea = _frexp(a, sub)
    sb, eb = _frexp(b, sub)
    sp, ep = sa * sb, ea + eb
    if saturate:
        sp = np.where((np.abs(sp) >= 2.0) + ep >= 128, sp * np.inf, sp)
    ep = np.where(sp == 0.0, e_zero, ep)
    samples, width = sp.shape
    steps = -(-width // L)
    pad = steps * L - width
    if pad:
        sp = np.pad(sp, ((0, 0), (0, pad)))
        ep = np.pad(ep, ((0, 0), (0, pad)), constant_values=_NEVER)
    return sp.reshape(samples, steps, L), ep.reshape(samples, steps, L)


def t_fdpa_chain(a: np.ndarray, b: np.ndarray, fmt: str, acc: str, F: int, rho: str, L: int, e_zero: int) -> np.ndarray:
    """mmasim's MMA_T_FDPA.dpa (NVIDIA's tensor cores: products exact, aligned to the largest exponent of the step
    and its accumulator, truncated to F fraction bits, summed, rounded to the accumulator), chained along k.

    The same arithmetic as mmasim's model, evaluated in NumPy: the products and exponents of a block of steps
    formed at once, then a few operations per step of L products; with round-toward-zero accumulators the
    accumulator is carried as its significand and exponent. tests/test_emulate.py holds it to mmasim bit for bit."""
    sub = _SUBNORMAL_EXPONENT[fmt]
    samples, k = a.shape
    L = min(L, k)
    acc_sub = -14 if acc == "fp16" else -126
    carried = rho in ("RZ-FP32", "RZ-E8M13")
    bits = 13 if rho == "RZ-E8M13" else 23
    s_c, e_c = np.zeros(samples), np.full(samples, acc_sub, dtype=np.int64)
    c = np.zeros(samples)
    scale = 2.0**-F
    block = max(L, _BLOCK // L * L)
    for lo in range(0, k, block):
        hi = min(lo + block, k)
        sp, ep = _product_steps(a[:, lo:hi], b[:, lo:hi], sub, e_zero, L)
        step_max = ep.max(axis=2)
        for j in range(sp.shape[1]):
            if not carried:
                s_c, e_c = _frexp(c, acc_sub)
            e_cz = np.where(s_c == 0.0, e_zero, e_c)
            e_max = np.maximum(step_max[:, j], e_cz)
            terms = np.trunc(np.ldexp(sp[:, j], ep[:, j] - e_max[:, None] + F)).sum(axis=1)
            terms += np.trunc(np.ldexp(s_c, e_cz - e_max + F))
            if carried:
                s_c, e_c = _frexp(np.ldexp(terms * scale, e_max), -126)
                s_c = np.trunc(s_c * 2.0**bits) * 2.0**-bits
            else:
                c = _rounded(terms * scale, e_max, rho)
    if carried:
        with np.errstate(over="ignore"):
            c = np.ldexp(s_c, e_c).astype(np.float32).astype(np.float64) + 0.0
    return c


def tr_fdpa_chain(a: np.ndarray, b: np.ndarray, fmt: str, F: int, F2: int, L: int) -> np.ndarray:
    """mmasim's MMA_TR_FDPA.dpa (CDNA3's matrix cores: the L products' fused sum truncated to F bits, aligned
    with the accumulator (floor to F2 + 1 and F bits), their sum floored to F2 bits, rounded to FP32 to nearest),
    chained along k, in NumPy. tests/test_emulate.py holds it to mmasim bit for bit."""
    sub = _SUBNORMAL_EXPONENT[fmt]
    samples, k = a.shape
    L = min(L, k)
    c = np.zeros(samples)
    block = max(L, _BLOCK // L * L)
    with np.errstate(over="ignore", invalid="ignore"):
        for lo in range(0, k, block):
            hi = min(lo + block, k)
            sp, ep = _product_steps(a[:, lo:hi], b[:, lo:hi], sub, -999, L, saturate=True)
            e_dot_all = ep.max(axis=2)
            for j in range(sp.shape[1]):
                e_dot = e_dot_all[:, j]
                s_dot = np.trunc(np.ldexp(sp[:, j], ep[:, j] - e_dot[:, None] + F)).sum(axis=1) * 2.0**-F
                s_c, e_c = _frexp(c, -126)
                e_max = np.maximum(e_dot, e_c)
                s_dot = np.floor(np.ldexp(s_dot, e_dot - e_max + F2 + 1)) * 2.0 ** -(F2 + 1)
                s_c = np.floor(np.ldexp(s_c, e_c - e_max + F)) * 2.0**-F
                total, e_sum = _frexp(np.ldexp(s_dot + s_c, e_max), -126)
                total = np.floor(total * 2.0**F2) * 2.0**-F2
                c = np.ldexp(total, e_sum).astype(np.float32).astype(np.float64)
    return c


def ftz_chain(a: np.ndarray, b: np.ndarray, fmt: str, P: int) -> np.ndarray:
    """mmasim's MMA_FTZ_MUL_ADD.dpa (CDNA2's FP16/BF16 matrix cores: subnormal inputs and results flushed to
    zero, FP32 products added in pairs (and pairs of pairs), then to the accumulator), in NumPy; k is padded with
    zeros to a multiple of P. tests/test_emulate.py holds it to mmasim bit for bit."""
    low = 2.0 ** _SUBNORMAL_EXPONENT[fmt]
    tiny = np.float32(2.0**-126)
    a = np.where(np.abs(a) < low, 0.0, a).astype(np.float32)
    b = np.where(np.abs(b) < low, 0.0, b).astype(np.float32)
    products = a * b
    products = np.where(np.abs(products) < tiny, products * np.float32(0.0), products)
    pad = -products.shape[1] % P
    if pad:
        products = np.pad(products, ((0, 0), (0, pad)))
    products = np.ascontiguousarray(products.T)

    def add(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        total = x + y
        kept: np.ndarray = np.where(np.abs(total) < tiny, total * np.float32(0.0), total)
        return kept

    c = np.zeros(products.shape[1], dtype=np.float32)
    for i in range(0, products.shape[0], P):
        pair = add(products[i], products[i + 1])
        if P == 4:
            pair = add(pair, add(products[i + 2], products[i + 3]))
        c = add(c, pair)
    return c.astype(np.float64)


def mma_chain(arith: Arithmetic, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Σ_k a[:, k] b[:, k] by the instruction's fused dot products chained along k: mmasim's model (its dpa),
    evaluated by t_fdpa_chain where the model is NVIDIA's T-FDPA (the same bits, far fewer small operations)."""
    op = _operation(arith)
    from mmasim.arithmetic.fdpa import MMA_T_FDPA, MMA_TR_FDPA
    from mmasim.arithmetic.ftz_mul_add import MMA_FTZ_MUL_ADD

    model = op.arithmetic_op
    fmt = arith.multiplies
    if type(model) is MMA_T_FDPA and fmt in _SUBNORMAL_EXPONENT and arith.gpu.vendor == "nvidia":
        if fmt == "tf32" and arith.convert != "tf32-rna":  # the instruction reads the top 19 bits
            a, b = _truncate_tf32(a), _truncate_tf32(b)
        return t_fdpa_chain(a, b, fmt, arith.accumulates, model.F, model.rho, model.L_max, model.e_zero)
    if type(model) is MMA_TR_FDPA and fmt in ("fp16", "bf16", "xf32") and model.rho == "RNE-FP32":
        if fmt == "xf32":
            a, b = _truncate_tf32(a), _truncate_tf32(b)
        return tr_fdpa_chain(a, b, fmt, model.F, model.F2, model.L_max)
    if type(model) is MMA_FTZ_MUL_ADD and fmt in ("fp16", "bf16"):
        return ftz_chain(a, b, fmt, model.P)
    return mma_chain_reference(arith, a, b, op)


def _truncate_tf32(values: np.ndarray) -> np.ndarray:
    bits = values.astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000)
    return bits.view(np.float32).astype(np.float64)


def mma_chain_reference(arith: Arithmetic, a: np.ndarray, b: np.ndarray, op: Any = None) -> np.ndarray:
    """mma_chain through mmasim's own dpa, always (and the fast path's reference in the tests)."""
    torch = _torch()
    op = op or _operation(arith)
    vendor = arith.gpu.vendor
    stored = "fp32" if arith.multiplies in ("tf32", "xf32") else arith.multiplies
    a_t = torch.from_numpy(np.ascontiguousarray(a)).to(dtype(stored, vendor))
    b_t = torch.from_numpy(np.ascontiguousarray(b)).to(dtype(stored, vendor))
    acc = torch.zeros(a.shape[0], dtype=dtype(arith.accumulates, vendor))
    with torch.no_grad():
        out = op.dpa(a_t, b_t, acc)
    return out.to(torch.float64).numpy()  # type: ignore[no-any-return]


# ---- one side: its inputs, its k partition, its output ------------------------------------------------------


def products(arith: Arithmetic, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The accumulator of every sample (FP64 holding values of the accumulator format), before the output
    rounding. a and b hold values exact in `arith.inputs` (FP8 inputs already scaled)."""
    if arith.convert == "tf32-rna":
        a, b = to_tf32(a), to_tf32(b)
    elif arith.convert:
        a, b = to_bf16(a, arith.convert), to_bf16(b, arith.convert)
    if arith.splits > 1:
        parts = split_k(a.shape[1], arith.splits, arith.split_tile)
        single = replace(arith, splits=1, split_tile=0, convert=None)
        return ordered_sum([products(single, a[:, p], b[:, p]) for p in parts], "fp32")
    if arith.kind == "fma":
        return fma_chain(a, b, arith.accumulates)
    return mma_chain(arith, a, b)


def ordered_sum(parts: list[np.ndarray], fmt: str, vendor: str = "nvidia") -> np.ndarray:
    """The parts added one after the other, each sum rounded to `fmt` (split-K's reduction, TP's all-reduce)."""
    total = round_to(parts[0], fmt, vendor)
    for part in parts[1:]:
        total = round_to(total + part, fmt, vendor)
    return total


def split_k(k: int, splits: int, tile: int = 0) -> list[np.ndarray]:
    """The k indices of each split-K part: parts of ceil(k / splits) rounded up to a multiple of `tile` (the
    last part takes what is left), or as even as can be without a tile."""
    if tile <= 0:
        return [p for p in np.array_split(np.arange(k), splits) if len(p)]
    per_part = math.ceil(k / splits)
    size = math.ceil(per_part / tile) * tile
    return [np.arange(lo, min(lo + size, k)) for lo in range(0, k, size)]


@dataclass(frozen=True, slots=True)
class Operands:
    """The sampled rows of op(A) and columns of op(B) one side multiplies, in its input format."""

    a: np.ndarray
    """[samples, k], exact in the input format (FP8: the quantized values)."""
    b: np.ndarray
    """[samples, k]."""
    scale: float = 1.0
    """Product of the per-tensor scales (FP8): the epilogue multiplies the accumulator by it in FP32."""


def operands(a: np.ndarray, b: np.ndarray, fmt: str, vendor: str = "nvidia") -> Operands:
    """FP64 draws rounded to the input format; FP8 inputs get per-tensor scales that map the amax onto the
    format's largest value (as Transformer Engine's delayed scaling does when its history holds this tensor)."""
    if fmt in FP8_MAX:
        limit = FP8_MAX[fmt] if vendor == "nvidia" else FP8_MAX[fmt] / 2  # fnuz formats reach half as far
        amax_a, amax_b = float(np.abs(a).max()) or 1.0, float(np.abs(b).max()) or 1.0
        sa, sb = 2.0 ** math.floor(math.log2(limit / amax_a)), 2.0 ** math.floor(math.log2(limit / amax_b))
        return Operands(round_to(a * sa, fmt, vendor), round_to(b * sb, fmt, vendor), 1.0 / (sa * sb))
    return Operands(round_to(a, fmt, vendor), round_to(b, fmt, vendor))


def side_output(arith: Arithmetic, ops: Operands, tp: int = 1) -> np.ndarray:
    """What the GEMM writes to D for each sample: with `tp` > 1 the k range is split into `tp` contiguous
    slices (one per rank), each rank's partial rounded to D's format, and the partials summed in rank order in
    D's format (the all-reduce)."""
    k = ops.a.shape[1]
    if tp <= 1 or k < tp:
        return _epilogue(arith, products(arith, ops.a, ops.b), ops.scale)
    edges = [k * r // tp for r in range(tp + 1)]
    parts = [
        _epilogue(arith, products(arith, ops.a[:, lo:hi], ops.b[:, lo:hi]), ops.scale) for lo, hi in pairwise(edges)
    ]
    return ordered_sum(parts, arith.output, arith.gpu.vendor)


def _epilogue(arith: Arithmetic, acc: np.ndarray, scale: float) -> np.ndarray:
    if scale != 1.0:
        acc = round_to(acc * scale, "fp32")
    return round_to(acc, arith.output, arith.gpu.vendor)


def reference(ops: Operands) -> tuple[np.ndarray, np.ndarray]:
    """(Σ a·b, Σ |a·b|) of the stored inputs in FP64 (exact products; pairwise sums, error far below FP32's)."""
    prod = ops.a * ops.b * ops.scale
    return prod.sum(axis=1), np.abs(prod).sum(axis=1)
