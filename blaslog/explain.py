"""Plain words for algorithm differences: what differs, what it likely does, what a person can do.

Shared by ``diff`` (two runs) and ``check`` (one run); the classification of a
difference lives here too, so both commands class alike. Here are the rule that
picks a finding class (:func:`compare`) and the paragraph that explains each class
(:func:`explain`); everything else about a class (its severity, meaning, CI level,
help text) is its row in ``blaslog.report.FINDING_CLASSES``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from blaslog.caps import Caps
from blaslog.flags import ROCBLAS_NUMERIC_FLAGS, decode_flags, numeric_difference, rocblas_flags_name
from blaslog.records import ALGORITHM_FIELDS, LOG_KEYS, TYPE_FIELDS, GemmCall

#: Keys kept in `extra` that change the arithmetic (cuBLAS's math mode: TF32 tensor-op math or not).
NUMERIC_EXTRA = ("context.MathMode",)

#: Input precision order of cuBLASLt numerical impl input bits, least precise first.
_INPUT_RANK = {0x400000: 1, 0x800000: 1, 0x200000: 1, 0x20000: 2, 0x10000: 3, 0x40000: 4, 0x80000: 5, 0x100000: 6}


@dataclass(frozen=True, slots=True)
class Difference:
    """How two records' algorithms differ."""

    fields: tuple[tuple[str, tuple[Any, Any]], ...]
    """(log key, (first, second)) for every differing field."""
    cls: str
    """precision, unknown, reduction or schedule (a key of blaslog.report.FINDING_CLASSES)."""
    flags: tuple[int | None, int | None]
    """Numerical impl flags of each side when known (cuBLASLt), else None."""

    @property
    def names(self) -> list[str]:
        """The differing log keys."""
        return [name for name, _ in self.fields]


def compared(record: GemmCall, name: str) -> Any:
    """A record's field as compared between calls: the spelling of one request folded together (cuBLAS's
    `cublasSgemm` names its compute type `R_32F` where `cublasGemmEx` says `COMPUTE_32F`; a call that names no
    algorithm asks for `CUBLAS_GEMM_DEFAULT`)."""
    if name == "compute_type":
        return record.compute_key
    value = getattr(record, name)
    if name == "requested_algo" and record.library == "cublas":
        return _DEFAULT_ALGOS.get(value, value)
    return value


_DEFAULT_ALGOS = {None: "CUBLAS_GEMM_DEFAULT", "CUBLAS_GEMM_DFALT": "CUBLAS_GEMM_DEFAULT"}
"""cublasGemmAlgo_t -1 by every name it had; the typed GEMMs (cublasSgemm ...) name no algorithm and run it."""


def numeric_extra(record: GemmCall) -> tuple[Any, ...]:
    """The values of the NUMERIC_EXTRA keys (None where not printed)."""
    extra = dict(record.extra)
    return tuple(extra.get(key) for key in NUMERIC_EXTRA)


def compare(a: GemmCall, b: GemmCall, caps: Caps | None) -> Difference | None:
    """The algorithm difference between two records of the same GEMM, or None when they ran alike."""
    changed = [name for name in TYPE_FIELDS + ALGORITHM_FIELDS if compared(a, name) != compared(b, name)]
    extra_a, extra_b = dict(a.extra), dict(b.extra)
    if extra_a.get("flags") != extra_b.get("flags") and "flags" not in changed:
        changed.append("flags")
    math = [key for key in NUMERIC_EXTRA if extra_a.get(key) != extra_b.get(key)]
    if not changed and not math:
        return None
    fa = caps.flags(a) if caps else None
    fb = caps.flags(b) if caps else None
    fields = tuple((LOG_KEYS.get(name, name), (_show(a, name), _show(b, name))) for name in changed)
    fields += tuple((key.split(".")[-1], (extra_a.get(key), extra_b.get(key))) for key in math)
    cls = "precision" if math else _classify(a, b, changed, fa, fb)
    return Difference(fields, cls, (fa, fb))


def _show(record: GemmCall, name: str) -> Any:
    value = getattr(record, name)
    if name == "flags":
        text = dict(record.extra).get("flags")
        return text if value is None and text else rocblas_flags_name(value) if value is not None else None
    return value


def _classify(a: GemmCall, b: GemmCall, changed: list[str], fa: int | None, fb: int | None) -> str:
    if any(name in TYPE_FIELDS for name in changed):
        return "precision"
    if "flags" in changed:
        va, vb = a.flags, b.flags
        if va is None or vb is None or (va ^ vb) & ROCBLAS_NUMERIC_FLAGS:
            return "precision"
    if fa is not None and fb is not None and numeric_difference(fa, fb):
        return "precision"
    if "algo_id" in changed and (fa is None or fb is None):
        return "unknown"
    if "solution_index" in changed or "requested_algo" in changed:
        return "unknown"
    if "num_splits_k" in changed or "reduction_scheme" in changed:
        return "reduction"
    return "schedule"


def describe_flags(value: int | None) -> str:
    """`CUDA-core FMA with FP32 inputs and FP32 accumulation (0x80201)`."""
    if value is None:
        return "numerics unknown"
    return f"{decode_flags(value).summary} ({hex(value)})"


def explain(diff: Difference, a: GemmCall, b: GemmCall, roles: tuple[str, str]) -> str:
    """A paragraph: what differs, what it likely does, what a person can do."""
    ra, rb = roles
    shape_a, shape_b = a.shape_text(), b.shape_text()
    where = f"The {ra} GEMM ({shape_a}) and the {rb} one" + (f" ({shape_b})" if shape_a != shape_b else "")
    parts: list[str] = []
    if diff.cls == "precision":
        parts.append(_precision(diff, a, b, roles))
    elif diff.cls == "unknown":
        if "solution_index" in diff.names:
            parts.append(
                f"{where} ran different solutions (solution_index {a.solution_index} vs {b.solution_index}). "
                "The log carries no numerics for a solution, so the effect is unknown: the solution names "
                "(hipblaslt-bench --print_kernel_info, or HIPBLASLT_LOG_MASK=128) tell which kernels ran; "
                "pinning the solution (--algo_method index / hipblasLtMatmulAlgo from the index) makes the runs agree."
            )
        elif "requested_algo" in diff.names:
            parts.append(
                f"{where} asked cuBLAS for different algorithms ({a.requested_algo} vs {b.requested_algo}); "
                "the classic log does not show the kernel: set CUBLASLT_LOG_LEVEL=2 as well to see it."
            )
        else:
            parts.append(
                f"{where} ran different algorithms (algoId {a.algo_id} vs {b.algo_id}); algorithm differs, "
                "numerics unknown: run `blaslog probe --from LOG --out caps.json` on a machine with the GPU, "
                "or give --caps, to learn whether the arithmetic differs."
            )
    elif diff.cls == "reduction":
        parts.append(
            f"{where} sum over K in a different order: split-K "
            f"{_value(a.num_splits_k, '1 (none)')} vs {_value(b.num_splits_k, '1 (none)')}, reduction scheme "
            f"{_value(a.reduction_scheme, 'none')} vs {_value(b.reduction_scheme, 'none')}. The arithmetic is the same "
            "but partial sums are added in another order, so results differ at rounding level (typically a few ulp, "
            "growing with K). To make the runs agree, pin the algorithm (cublasLtMatmulAlgoConfigSetAttribute "
            "CUBLASLT_ALGO_CONFIG_SPLITK_NUM=1) or give both runs the same workspace limit; otherwise compare with "
            "a tolerance that allows for reordering."
        )
    else:
        names = ", ".join(f"{n} {_value(x, '-')} vs {_value(y, '-')}" for n, (x, y) in diff.fields)
        parts.append(
            f"{where} use the same arithmetic and summation order, with other tiling or scheduling ({names}). "
            "This normally gives identical or rounding-level results; look elsewhere first for a large mismatch."
        )
    return " ".join(parts)


def _value(value: Any, default: str) -> str:
    return default if value is None else str(value)


def _input_rank(flags: int) -> int:
    return max((rank for bit, rank in _INPUT_RANK.items() if flags & bit), default=0)


def _precision(diff: Difference, a: GemmCall, b: GemmCall, roles: tuple[str, str]) -> str:
    ra, rb = roles
    fa, fb = diff.flags
    out: list[str] = []
    changed_types = [(n, x, y) for n, (x, y) in diff.fields if n in TYPE_FIELDS]
    if fa is not None and fb is not None and fa != fb:
        out.append(
            f"The {ra} GEMM ({a.shape_text()}) ran algoId {a.algo_id}, {describe_flags(fa)}; the {rb} one "
            f"({b.shape_text()}) ran algoId {b.algo_id}, {describe_flags(fb)}. The products are rounded differently, "
            "so results differ beyond reordering noise."
        )
        rank_a, rank_b = _input_rank(fa), _input_rank(fb)
        if rank_a != rank_b:
            worse = rb if rank_b < rank_a else ra
            out.append(f"Here the {worse} run is the less precise one.")
        if (fa | fb) & 0x40000:
            out.append(
                "To remove TF32: NVIDIA_TF32_OVERRIDE=0, or torch.backends.cuda.matmul.allow_tf32 = False "
                "(torch.set_float32_matmul_precision('highest')); or request COMPUTE_32F instead of "
                "COMPUTE_32F_FAST_TF32."
            )
        out.append("Pinning the algorithm (the same algoId for both shapes) is the other way out.")
    if changed_types:
        listed = ", ".join(f"{n} {x} vs {y}" for n, x, y in changed_types)
        out.append(f"The {ra} and {rb} GEMMs were asked for different arithmetic: {listed}.")
    if "MathMode" in diff.names:
        modes = dict(diff.fields)["MathMode"]
        out.append(
            f"The cuBLAS handles ran in different math modes ({modes[0]} vs {modes[1]}): "
            "CUBLAS_TF32_TENSOR_OP_MATH lets FP32 GEMMs use TF32 tensor cores; set the same mode (or "
            "torch.backends.cuda.matmul.allow_tf32) in both runs."
        )
    if "flags" in diff.names:
        out.append(rocblas_flags_text(a, b, roles))
    return " ".join(out)


def rocblas_flags_text(a: GemmCall, b: GemmCall, roles: tuple[str, str]) -> str:
    """Explanation of a rocBLAS gemm flags difference (fp16_alt_impl and friends)."""
    ra, rb = roles
    na = _show(a, "flags")
    nb = _show(b, "flags")
    text = f"The {ra} call ran with flags {na} and the {rb} call with flags {nb}."
    if ((a.flags or 0) | (b.flags or 0)) & 0x14 or "invalid" in (na, nb):
        text += (
            " fp16_alt_impl makes rocBLAS convert FP16 inputs to BF16 and multiply with BF16 MFMA instructions "
            "(gfx90a/MI200), which rounds the inputs to 8 mantissa bits: results differ from the standard FP16 path. "
            "PyTorch passes the flag for GEMMs run under its backward-pass guard, so a forward GEMM recomputed "
            "during backward (activation checkpointing) gets it while the original forward did not. Ways out: "
            "ROCBLAS_INTERNAL_FP16_ALT_IMPL=0 for the process (the standard implementation everywhere), or let the "
            "recompute opt out of the flag (run it outside the backward-pass guard). Note that the log shows the "
            "flag the caller asked for, not what an environment override (ROCBLAS_INTERNAL_FP16_ALT_IMPL) made of it."
        )
    return text


__all__ = ["Difference", "compare", "compared", "describe_flags", "explain", "numeric_extra", "rocblas_flags_text"]
