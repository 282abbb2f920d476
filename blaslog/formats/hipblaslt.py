"""hipBLASLt logs: logger lines (HIPBLASLT_LOG_LEVEL / _MASK) and hipblaslt-bench lines (mask 32).

Grammar ``grammars/hipblaslt.lark``. The ``[Trace][rocblaslt_matmul]`` line is
the executed GEMM but names no solution; the bench line of the same launch
carries ``--solution_index``, the field to compare between runs.
"""

from __future__ import annotations

import re
from typing import Any

from blaslog.formats._amd import CommandTransformer, call_event, option_dict
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
        ["A", "Adesc", "B", "Bdesc", "C", "Cdesc", "D", "Ddesc", "computeDesc", "workSpace", "workSpaceSizeInBytes", "alpha", "alphaVector", "beta", "stream"]
    )


_KNOWN = {
    "lda", "ldb", "ldc", "ldd", "stride_a", "stride_b", "stride_c", "stride_d", "alpha", "beta", "transA", "transB",
    "batch_count", "a_type", "b_type", "c_type", "d_type", "compute_type", "scale_type", "solution_index",
    "activation_type", "call_count",
}


def gemm_fields(values: dict[str, Any], dims: tuple[str, str, str], bias: bool) -> dict[str, Any]:
    """GemmCall keyword arguments from the named values of a hipblaslt-bench line or profile entry (both use
    the bench's option names; `dims` are the names of m, n, k; `bias` says a bias vector is added)."""
    out: dict[str, Any] = {}
    for key, name in zip(dims, "mnk"):
        if key not in values:
            raise RecordError(f"the GEMM has no {key} (m, n, k are needed)")
        out[name] = to_int(values[key], key)
    for name in ("lda", "ldb", "ldc", "ldd"):
        if values.get(name) is not None:
            out[name] = to_int(values[name], name)
    for letter in "abcd":
        key = f"stride_{letter}"
        if values.get(key) is not None:
            out[key] = to_int(values[key], key, low=None)
        out[f"{letter}_type"] = values.get(f"{letter}_type")
    out["batch_count"] = to_int(values.get("batch_count", "1"), "batch_count")
    out["transa"] = _letter(values.get("transA", "N"))
    out["transb"] = _letter(values.get("transB", "N"))
    out["compute_type"] = values.get("compute_type")
    out["scale_type"] = values.get("scale_type")
    if values.get("solution_index") is not None:
        out["solution_index"] = to_int(values["solution_index"], "solution_index", low=None)
    out["activation"] = activation = values.get("activation_type")
    if bias:
        out["bias_pointer"] = True
        out["epilogue"] = "bias" + (f"+{activation}" if activation not in (None, "none") else "")
    elif activation not in (None, "none"):
        out["epilogue"] = activation
    out["alpha"], out["beta"] = values.get("alpha"), values.get("beta")
    if "call_count" in values:
        out["call_count"] = to_int(values["call_count"], "call_count", low=1)
    known = _KNOWN | set(dims) | {"function"}
    out["extra"] = tuple((k, v if v is not None else "") for k, v in values.items() if k not in known)
    return out


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
        out = gemm_fields(values, ("m", "n", "k"), bias="bias_vector" in values)
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
            return call_event(self, function, values, warnings)
        out = gemm_fields(values, ("M", "N", "K"), bias=values.get("bias_vector") == "true")
        out.update(library=self.library, function="matmul", log_format=self.name)
        return GemmCall, out, tuple(warnings)


def _letter(value: Any) -> str:
    text = str(value).upper()
    if text not in ("N", "T", "C"):
        raise RecordError(f"transpose {value!r} is not N, T or C")
    return text


__all__ = ["Event", "HipblasLt", "HipblasLtBench", "HipblasLtProfile"]
