"""hipBLASLt logs: logger lines (HIPBLASLT_LOG_LEVEL / _MASK) and hipblaslt-bench lines (mask 32).

Grammar ``grammars/hipblaslt.lark``. The ``[Trace][rocblaslt_matmul]`` line is
the executed GEMM but names no solution; the bench line of the same launch
carries ``--solution_index``, the field to compare between runs.
"""

from __future__ import annotations

import re
from typing import Any

from blaslog.formats._amd import (
    AFTER_TAG,
    MODELLED,
    BenchFormat,
    CommandTransformer,
    ProfileFormat,
    call_event,
    check_complete,
    option_dict,
    unmodelled,
)
from blaslog.formats._amd import gemm_fields as amd_gemm_fields
from blaslog.formats._logger import MATMUL_KEYS, KvTransformer, LoggerFormat
from blaslog.records import Event, GemmCall


class _LoggerTransformer(KvTransformer):
    def logger(self, children: list[Any]) -> tuple[Any, ...]:
        return self.start(children)


class HipblasLt(LoggerFormat):
    """hipBLASLt logger lines."""

    name = "hipblaslt"
    library = "hipblaslt"
    description = "hipBLASLt logger lines (HIPBLASLT_LOG_LEVEL / HIPBLASLT_LOG_MASK 1-16)"
    logging_hint = "HIPBLASLT_LOG_LEVEL=2 or higher"
    grammar = "hipblaslt.lark"
    start_rule = "logger"
    start = re.compile(r"(?:\[\d{4}-\d\d-\d\d[ T][\d:.]+\])?\[HIPBLASLT\]\[\d+\]\[")
    boundary = rb"\[\d{4}-\d\d-\d\d[ T][\d:.]+\]\[HIPBLASLT\]\[\d+\]\["
    # HIPBLASLT_LOG_MASK=32 writes a bench line for every launch besides its [Trace] line: the bench line,
    # which names the solution, is the one kept
    same_calls_as = "hipblaslt-bench"
    near_miss = r"\[HIPBLASLT\]"
    transformer = _LoggerTransformer
    known_keys = MATMUL_KEYS | {"alpha", "alphaVector"}


_MODELLED = MODELLED | {"scale_type", "activation_type", "function"}


def gemm_fields(values: dict[str, Any], dims: tuple[str, str, str], bias: bool) -> dict[str, Any]:
    """GemmCall keyword arguments from the named values of a hipblaslt-bench line or profile entry (both use
    the bench's option names; `dims` are the names of m, n, k; `bias` says a bias vector is added)."""
    out = amd_gemm_fields(values, dims)
    out["scale_type"] = values.get("scale_type")
    out["activation"] = activation = values.get("activation_type")
    if bias:
        out["bias_pointer"] = True
        out["epilogue"] = "bias" + (f"+{activation}" if activation not in (None, "none") else "")
    elif activation not in (None, "none"):
        out["epilogue"] = activation
    out["extra"] = unmodelled(values, _MODELLED | set(dims))
    return out


class HipblasLtBench(BenchFormat):
    """hipblaslt-bench command lines."""

    name = "hipblaslt-bench"
    library = "hipblaslt"
    description = "hipblaslt-bench command lines (HIPBLASLT_LOG_MASK=32), every format generation"
    logging_hint = "HIPBLASLT_LOG_MASK=32"
    boundary = rb"hipblaslt-bench "
    near_miss = r"^\s*(?:\./)?hipblaslt-bench\b"
    grammar = "hipblaslt.lark"
    start_rule = "bench"
    start = re.compile(AFTER_TAG + r"\s*(?:\S*/)?hipblaslt-bench\b")
    transformer = CommandTransformer
    program = "hipblaslt-bench"

    def build(self, generic: Any) -> tuple[type, dict[str, Any], tuple[str, ...]]:
        _program, options = generic
        warnings: list[str] = []
        values = option_dict(options, warnings)
        # what every generation of the logger writes (since PR #485, 2023-12); a solution index after
        # --algo_method (since 2025)
        needed = ["m", "n", "k", "transA", "transB", "a_type", "b_type", "c_type", "d_type", "compute_type"]
        check_complete(self.program, options, needed + (["solution_index"] if "algo_method" in values else []))
        if "grouped_gemm" in values:
            warnings.append("grouped GEMM: only the first group's shape is recorded")
        out = gemm_fields(values, ("m", "n", "k"), bias="bias_vector" in values)
        out.update(library=self.library, function="hipblaslt-bench", log_format=self.name)
        return GemmCall, out, tuple(warnings)


class HipblasLtProfile(ProfileFormat):
    """hipBLASLt profile entries (HIPBLASLT_LOG_MASK=64, extended 128): one per distinct call, with call_count."""

    name = "hipblaslt-profile"
    library = "hipblaslt"
    description = "hipBLASLt profile YAML flow mappings (HIPBLASLT_LOG_MASK=64/128) with call_count"
    logging_hint = "HIPBLASLT_LOG_MASK=64"
    near_miss = r"^\s*- \{\s*function\s*:"
    grammar = "hipblaslt.lark"
    start_rule = "profile"
    start = re.compile(AFTER_TAG + r"\s*-\s*\{\s*function\s*:")
    transformer = CommandTransformer
    function_key = "function"

    def build(self, generic: Any) -> tuple[type, dict[str, Any], tuple[str, ...]]:
        warnings: list[str] = []
        values = option_dict(generic, warnings)
        function = values.get("function", "?")
        if function != "matmul" or not {"M", "N", "K"} <= set(values):
            return call_event(self, function, values, warnings)
        out = gemm_fields(values, ("M", "N", "K"), bias=values.get("bias_vector") == "true")
        out.update(library=self.library, function="matmul", log_format=self.name)
        return GemmCall, out, tuple(warnings)


__all__ = ["Event", "HipblasLt", "HipblasLtBench", "HipblasLtProfile"]
