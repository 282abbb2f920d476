"""hipBLASLt logs: logger lines (HIPBLASLT_LOG_LEVEL / _MASK) and hipblaslt-bench lines (mask 32).

Grammar ``grammars/hipblaslt.lark``. The ``[Trace][rocblaslt_matmul]`` line is
the executed GEMM but names no solution; the bench line of the same launch
carries ``--solution_index``, the field to compare between runs.
"""

from __future__ import annotations

import re
from typing import Any

from blaslog.formats._amd import CommandTransformer, option_dict
from blaslog.formats._base import LogFormat, RecordError, to_int
from blaslog.formats._logger import KvTransformer, LoggerFormat
from blaslog.records import Event, GemmCall


class _LoggerTransformer(KvTransformer):
    def logger(self, children: list[Any]) -> tuple[Any, ...]:
        return self.start(children)


class HipblasLt(LoggerFormat):
    """hipBLASLt logger lines."""

    name = "hipblaslt"
    library = "hipblaslt"
    description = "hipBLASLt logger lines (HIPBLASLT_LOG_LEVEL / HIPBLASLT_LOG_MASK 1-16)"
    grammar = "hipblaslt.lark"
    start_rule = "logger"
    start = re.compile(r"(?:\[\d{4}-\d\d-\d\d[ T][\d:.]+\])?\[HIPBLASLT\]\[\d+\]\[")
    transformer = _LoggerTransformer
    known_keys = frozenset(
        "A Adesc B Bdesc C Cdesc D Ddesc computeDesc workSpace workSpaceSizeInBytes alpha alphaVector beta stream".split()
    )


_BENCH_KNOWN = {
    "m", "n", "k", "lda", "ldb", "ldc", "ldd", "stride_a", "stride_b", "stride_c", "stride_d", "alpha", "beta",
    "transA", "transB", "batch_count", "a_type", "b_type", "c_type", "d_type", "compute_type", "scale_type",
    "solution_index", "activation_type",
}


class HipblasLtBench(LogFormat):
    """hipblaslt-bench command lines."""

    name = "hipblaslt-bench"
    library = "hipblaslt"
    description = "hipblaslt-bench command lines (HIPBLASLT_LOG_MASK=32), every format generation"
    grammar = "hipblaslt.lark"
    start_rule = "bench"
    start = re.compile(r"^\s*(?:\S*/)?hipblaslt-bench\b")
    transformer = CommandTransformer

    def build(self, generic: Any) -> tuple[type, dict[str, Any], tuple[str, ...]]:
        _program, options = generic
        warnings: list[str] = []
        values = option_dict(options, warnings)
        if "grouped_gemm" in values:
            warnings.append("grouped GEMM: only the first group's shape is recorded")
        out: dict[str, Any] = {}
        for name in ("m", "n", "k"):
            if name not in values:
                raise RecordError(f"hipblaslt-bench line without -{name}")
            out[name] = to_int(values[name], name)
        for name in ("lda", "ldb", "ldc", "ldd"):
            if values.get(name) is not None:
                out[name] = to_int(values[name], name)
        for letter in "abcd":
            key = f"stride_{letter}"
            if values.get(key) is not None:
                out[key] = to_int(values[key], key, low=None)
        out["batch_count"] = to_int(values.get("batch_count", "1"), "batch_count")
        out["transa"] = _letter(values.get("transA", "N"))
        out["transb"] = _letter(values.get("transB", "N"))
        for letter in "abcd":
            out[f"{letter}_type"] = values.get(f"{letter}_type")
        out["compute_type"] = values.get("compute_type")
        out["scale_type"] = values.get("scale_type")
        if values.get("solution_index") is not None:
            out["solution_index"] = to_int(values["solution_index"], "solution_index", low=None)
        out["activation"] = values.get("activation_type")
        if "bias_vector" in values:
            out["bias_pointer"] = True
            out["epilogue"] = "bias" + (f"+{out['activation']}" if out["activation"] not in (None, "none") else "")
        elif out["activation"] not in (None, "none"):
            out["epilogue"] = out["activation"]
        out["alpha"] = values.get("alpha")
        out["beta"] = values.get("beta")
        out["extra"] = tuple((k, v if v is not None else "") for k, v in values.items() if k not in _BENCH_KNOWN)
        out.update(library=self.library, function="hipblaslt-bench", log_format=self.name)
        return GemmCall, out, tuple(warnings)


class HipblasLtProfile(LogFormat):
    """hipBLASLt profile entries (HIPBLASLT_LOG_MASK=64, extended 128): one per distinct call, with call_count."""

    name = "hipblaslt-profile"
    library = "hipblaslt"
    description = "hipBLASLt profile YAML flow mappings (HIPBLASLT_LOG_MASK=64/128) with call_count"
    grammar = "hipblaslt.lark"
    start_rule = "profile"
    start = re.compile(r"^\s*-\s*\{\s*function\s*:")
    transformer = CommandTransformer

    def build(self, generic: Any) -> tuple[type, dict[str, Any], tuple[str, ...]]:
        warnings: list[str] = []
        values = option_dict(generic, warnings)
        function = values.get("function", "?")
        if function != "matmul" or not {"M", "N", "K"} <= set(values):
            return Event, dict(library=self.library, function=function, event="call",
                               fields=tuple(values.items()), log_format=self.name), tuple(warnings)
        out: dict[str, Any] = {name.lower(): to_int(values[name], name) for name in ("M", "N", "K")}
        for name in ("lda", "ldb", "ldc", "ldd"):
            if values.get(name) is not None:
                out[name] = to_int(values[name], name)
        for letter in "abcd":
            if values.get(f"stride_{letter}") is not None:
                out[f"stride_{letter}"] = to_int(values[f"stride_{letter}"], f"stride_{letter}", low=None)
            out[f"{letter}_type"] = values.get(f"{letter}_type")
        out["batch_count"] = to_int(values.get("batch_count", "1"), "batch_count")
        out["transa"] = _letter(values.get("transA", "N"))
        out["transb"] = _letter(values.get("transB", "N"))
        out["compute_type"] = values.get("compute_type")
        out["scale_type"] = values.get("scale_type")
        if values.get("solution_index") is not None:
            out["solution_index"] = to_int(values["solution_index"], "solution_index", low=None)
        out["activation"] = values.get("activation_type")
        if values.get("bias_vector") == "true":
            out["bias_pointer"] = True
        out["alpha"], out["beta"] = values.get("alpha"), values.get("beta")
        out["call_count"] = to_int(values.get("call_count", "1"), "call_count", low=1)
        known = {"function", "M", "N", "K", "lda", "ldb", "ldc", "ldd", "stride_a", "stride_b", "stride_c",
                 "stride_d", "a_type", "b_type", "c_type", "d_type", "batch_count", "transA", "transB",
                 "compute_type", "scale_type", "solution_index", "activation_type", "alpha", "beta", "call_count"}
        out["extra"] = tuple((k, v) for k, v in values.items() if k not in known)
        out.update(library=self.library, function="matmul", log_format=self.name)
        return GemmCall, out, tuple(warnings)


def _letter(value: Any) -> str:
    text = str(value).upper()
    if text not in ("N", "T", "C"):
        raise RecordError(f"transpose {value!r} is not N, T or C")
    return text


__all__ = ["Event", "HipblasLt", "HipblasLtBench", "HipblasLtProfile"]
