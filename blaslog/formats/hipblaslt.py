"""hipBLASLt logs: logger lines (HIPBLASLT_LOG_LEVEL / _MASK) and hipblaslt-bench lines (mask 32).

Grammar ``grammars/hipblaslt.lark``. The ``[Trace][rocblaslt_matmul]`` line is
the executed GEMM but names no solution; the bench line of the same launch
carries ``--solution_index``, the field to compare between runs.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from blaslog.formats._amd import (
    AFTER_TAG,
    MODELLED,
    UNIQ_COUNT,
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
from blaslog.formats._switch import LogSwitch, per_level
from blaslog.records import Event, GemmCall


class _LoggerTransformer(KvTransformer):
    def logger(self, children: list[Any]) -> tuple[Any, ...]:
        # [time]? [HIPBLASLT] [pid]? [Level] [function] message: the library's name tells the optional parts apart
        at = 0 if type(children[0]) is str and children[0] == "HIPBLASLT" else 1
        timestamp = children[0] if at else None
        rest = children[at + 1 :]
        if len(rest) == 3:  # no process id
            rest = [None, *rest]
        return (timestamp, children[at], *rest)

    def elided(self, children: list[Any]) -> tuple[Any, ...]:
        """`[Level][function] message` (the function may be `...` too): no time stamp, library or process id."""
        if len(children) == 2:
            return (None, None, None, children[0], "?", children[1])
        return (None, None, None, *children)


_ELIDED = (
    r"(?:\[(?:\.\.\.|…)\])?\[(?:Error|Trace|Hints?|Info|Api|Bench|Profile|ExtendedProfile)\]"
    r"\[(?:rocblaslt_\w+|hipblas[Ll]t\w*|initialize)\]"
)
"""The start of a line whose `[time][HIPBLASLT][pid]` a person cut off: a level hipBLASLt writes and a function
only hipBLASLt has (its internal rocblaslt_ names, `initialize` of its Tensile host)."""
_TRACE_MATMUL = re.compile(r"\[Trace\]\[\w*matmul\]")
_PREFIX = re.compile(
    r"\s*(?:\[(?P<time>\d{4}-\d\d-\d\d[ T][\d:.]+)\])?(?:\[HIPBLASLT\](?:\[(?P<pid>\d+)\])?)?"
    r"(?:\[(?:\.\.\.|…)\])?\[(?P<level>[A-Za-z]+)\]\[(?P<function>[A-Za-z_][\w:~<>]*)?"
)
"""The parts of a logger line's prefix (any of the forms the grammar reads), for a cut line."""
_GLUED_GROUP = re.compile(r"(?<![^\s])([ABCD])=(?:\.\.\.|…)?\[")
"""`A=[type=...]` or `A=...[type=...]`: a person merged the pointer and its layout (Adesc) into one key."""


class HipblasLt(LoggerFormat):
    """hipBLASLt logger lines."""

    name = "hipblaslt"
    sniff_rank = 40
    # 32 = bench lines (solution index) + 1 errors; higher levels add trace, hints, info, api
    logging = LogSwitch(
        "hipblaslt",
        (("HIPBLASLT_LOG_FILE", "hipblaslt"),),
        pid_names=True,
        levels=per_level(lambda level: {"HIPBLASLT_LOG_MASK": str(33 if level <= 2 else ((1 << level) - 1) | 32)}),
        cleared=("HIPBLASLT_LOG_LEVEL",),
        default=True,
        settings=("HIPBLASLT_",),
        objects=("libhipblaslt",),
    )
    library = "hipblaslt"
    description = "hipBLASLt logger lines (HIPBLASLT_LOG_LEVEL / HIPBLASLT_LOG_MASK 1-16)"
    logging_hint = "HIPBLASLT_LOG_LEVEL=2 or higher"
    grammar = "hipblaslt.lark"
    start_rule = "logger"
    start = re.compile(r"(?:\[\d{4}-\d\d-\d\d[ T][\d:.]+\])?\[HIPBLASLT\](?:\[\d+\])?\[|" + _ELIDED)
    start_signs = ("[HIPBLASLT]", "][rocblaslt_", "][hipblaslt", "][hipblasLt", "][initialize]")
    boundary = rb"\[\d{4}-\d\d-\d\d[ T][\d:.]+\]\[HIPBLASLT\]\[\d+\]\["
    # HIPBLASLT_LOG_MASK=32 writes a bench line for every launch besides its [Trace] line: the bench line,
    # which names the solution, is the one kept
    same_calls_as = "hipblaslt-bench"
    near_miss = r"\[HIPBLASLT\]"
    # `[Info][initialize] Using library: ...`, the handle's creation
    banner = r"\]\[(?:initialize|rocblaslt_create|hipblasLtCreate)\]"
    transformer = _LoggerTransformer
    known_keys = MATMUL_KEYS | {"alpha", "alphaVector"}

    def interleaved(self, lines: list[str]) -> bool:
        """Other text may come between the lines of a record a person wrapped while a group is open, a line ends
        with ` \\`, or a matmul [Trace] record has not reached `stream=`, the last key its logger writes."""
        if lines[-1].endswith("\\") or sum(text.count("[") - text.count("]") for text in lines) > 0:
            return True
        return _TRACE_MATMUL.search(lines[0]) is not None and not any("stream=" in text for text in lines)

    def gemm(self, pairs: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
        compute = pairs.get("computeDesc")
        if isinstance(compute, dict) and not {"transA", "transB", "transa", "transb"} & set(compute):
            warnings.append("computeDesc names no transA/transB (edited out?): N assumed for both")
        return super().gemm(pairs, warnings)

    def truncated(self, text: str, path: str, line: int, end_line: int) -> Event:
        """A cut logger line keeps what its prefix says: function, level, process id and time stamp."""
        event = super().truncated(text, path, line, end_line)
        match = _PREFIX.match(text)
        if match is None:
            return event
        return replace(
            event,
            function=match.group("function") or event.function,
            level=match.group("level"),
            thread=match.group("pid"),
            timestamp=match.group("time"),
        )

    def clean(self, lines: list[str]) -> str:
        text = super().clean(lines)
        if "=[" in text or "=...[" in text or "=…[" in text:
            # edited matmul lines: the layout written as A's value (`A=[type=R_32F ...]`, `A=...[type=...]`)
            text = _GLUED_GROUP.sub(r"\1desc=[", text)
        return text


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
    sniff_rank = 41
    library = "hipblaslt"
    description = "hipblaslt-bench command lines (HIPBLASLT_LOG_MASK=32), every format generation"
    logging_hint = "HIPBLASLT_LOG_MASK=32"
    boundary = rb"hipblaslt-bench "
    near_miss = r"^\s*(?:\./)?hipblaslt-bench\b"
    grammar = "hipblaslt.lark"
    start_rule = "bench"
    start = re.compile(AFTER_TAG + UNIQ_COUNT + r"\s*(?:\S*/)?hipblaslt-bench\b")
    start_signs = ("hipblaslt-bench",)
    transformer = CommandTransformer
    program = "hipblaslt-bench"

    def needed(self, values: dict[str, Any]) -> list[str]:
        # the key fields every generation of the logger writes (since PR #485, 2023-12); a solution index only
        # after `--algo_method index` (the logger's form since 2025): `--algo_method heuristic|all`, as tuning
        # docs and people type the command, names no solution and is a whole call
        needed = ["m", "n", "k", "transA", "transB", "a_type", "b_type", "c_type", "d_type", "compute_type"]
        return needed + (["solution_index"] if values.get("algo_method") == "index" else [])

    def logged(self, values: dict[str, Any]) -> list[str]:
        # the key fields, and the solution an `--algo_method index` command names (other options came and went
        # between versions: one not shown may not have been logged)
        return self.needed(values)

    def build(self, generic: Any) -> tuple[type, dict[str, Any], tuple[str, ...]]:
        _program, options = generic
        warnings: list[str] = []
        values = option_dict(options, warnings)
        check_complete(self.program, options, self.needed(values))
        if "grouped_gemm" in values:
            warnings.append("grouped GEMM: only the first group's shape is recorded")
        out = gemm_fields(values, ("m", "n", "k"), bias="bias_vector" in values)
        out.update(library=self.library, function="hipblaslt-bench", log_format=self.name)
        return GemmCall, out, tuple(warnings)


class HipblasLtProfile(ProfileFormat):
    """hipBLASLt profile entries (HIPBLASLT_LOG_MASK=64, extended 128): one per distinct call, with call_count."""

    name = "hipblaslt-profile"
    sniff_rank = 42
    library = "hipblaslt"
    description = "hipBLASLt profile YAML flow mappings (HIPBLASLT_LOG_MASK=64/128) with call_count"
    logging_hint = "HIPBLASLT_LOG_MASK=64"
    near_miss = r"^\s*- \{\s*function\s*:"
    grammar = "hipblaslt.lark"
    start_rule = "profile"
    start = re.compile(AFTER_TAG + r"\s*-\s*\{\s*function\s*:")
    start_signs = ("function",)
    transformer = CommandTransformer
    function_key = "function"

    def gemm_function(self, function: str) -> bool:
        return function == "matmul"

    def build(self, generic: Any) -> tuple[type, dict[str, Any], tuple[str, ...]]:
        warnings: list[str] = []
        values = option_dict(generic, warnings)
        function = values.get("function", "?")
        if function != "matmul" or not {"M", "N", "K"} <= set(values):
            return call_event(self, function, values, warnings)
        out = gemm_fields(values, ("M", "N", "K"), bias=values.get("bias_vector") == "true")
        out.update(library=self.library, function="matmul", log_format=self.name)
        return GemmCall, out, tuple(warnings)


__all__ = ["Event", "HipblasLt", "HipblasLtBench", "HipblasLtProfile", "gemm_fields"]
