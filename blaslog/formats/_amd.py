"""Pieces shared by the AMD dialects: bench command lines, profile flow mappings, and the GEMM fields both
libraries name alike (rocBLAS and hipBLASLt bench options and profile keys share their names)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from blaslog.formats._base import LeafTransformer, LogFormat, RecordError, to_int, transpose
from blaslog.records import Event

MODELLED = frozenset({
    "lda", "ldb", "ldc", "ldd", "stride_a", "stride_b", "stride_c", "stride_d", "batch_count", "transA", "transB",
    "alpha", "beta", "a_type", "b_type", "c_type", "d_type", "compute_type", "solution_index", "call_count",
})
"""The names :func:`gemm_fields` reads (besides m, n and k): a dialect keeps the others as `extra`."""


class CommandTransformer(LeafTransformer):
    """bench.lark / flowmap.lark trees -> (program, [(option, value)]) or [(key, value)]."""

    def bench(self, children: list[Any]) -> Any:
        return children[0]

    def profile(self, children: list[Any]) -> Any:
        return children[0]

    def command(self, children: list[Any]) -> tuple[Any, list[tuple[str, Any]]]:
        return (children[0], children[1:])

    def bench__command(self, children: list[Any]) -> tuple[Any, list[tuple[str, Any]]]:
        return self.command(children)

    def bench__option(self, children: list[Any]) -> tuple[str, Any]:
        return (children[0], children[1] if len(children) > 1 else None)

    def mapping(self, children: list[Any]) -> list[tuple[str, Any]]:
        return children

    def flowmap__entry(self, children: list[Any]) -> tuple[str, Any]:
        key, value = children
        if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        return (key, value)


def option_dict(options: list[tuple[str, Any]], warnings: list[str]) -> dict[str, Any]:
    """Options as a dict keyed without dashes; a repeated option keeps its first value and is reported."""
    out: dict[str, Any] = {}
    for name, value in options:
        key = name.lstrip("-")
        if key in out:
            if out[key] != value:
                warnings.append(f"option {name} is given more than once ({out[key]!r}, then {value!r}); the first is used")
            continue
        out[key] = value
    return out


def gemm_fields(values: dict[str, Any], dims: Iterable[str] = ("m", "n", "k")) -> dict[str, Any]:
    """GemmCall keyword arguments from the values both AMD libraries name alike (`dims`: the names of m, n
    and k); each dialect adds its own (see MODELLED)."""
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
    out["compute_type"] = values.get("compute_type")
    out["batch_count"] = to_int(values.get("batch_count", "1"), "batch_count")
    out["transa"] = transpose(values.get("transA", "N"), "transA")
    out["transb"] = transpose(values.get("transB", "N"), "transB")
    if values.get("solution_index") is not None:
        out["solution_index"] = to_int(values["solution_index"], "solution_index", low=None)
    if "call_count" in values:
        out["call_count"] = to_int(values["call_count"], "call_count", low=1)
    out["alpha"], out["beta"] = values.get("alpha"), values.get("beta")
    return out


def unmodelled(values: dict[str, Any], known: frozenset[str]) -> tuple[tuple[str, Any], ...]:
    """The values not in `known`, for `extra` (an option given without a value as "")."""
    return tuple((k, v if v is not None else "") for k, v in values.items() if k not in known)


def call_event(fmt: LogFormat, function: str, values: dict[str, Any],
               warnings: list[str]) -> tuple[type, dict[str, Any], tuple[str, ...]]:
    """A profile entry of a function that is not a GEMM: an Event that keeps every key (``build``'s result)."""
    return Event, dict(library=fmt.library, function=function, event="call", fields=tuple(values.items()),
                       log_format=fmt.name), tuple(warnings)
