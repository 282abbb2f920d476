"""rocBLAS logs (ROCBLAS_LAYER): trace (bit 1), bench (bit 2) and profile (bit 4); grammar ``grammars/rocblas.lark``.

The grammar splits a line into its fields; which positional trace field means
what depends on the function and the rocBLAS version, and is written down here
once (FIELD_ORDERS, from the rocBLAS logging source as summarised in
../shared/reference/AMD-FORMATS.md). Since ROCm 3.8 every trace line ends with
the atomics mode; older traces lack it, print transposes as 111/112/113 and
flags as integers. Flags are what the *caller* passed: an environment override
(ROCBLAS_INTERNAL_FP16_ALT_IMPL) acts later and is not logged.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from blaslog.flags import rocblas_flags_value
from blaslog.formats._amd import (
    AFTER_TAG,
    MODELLED,
    TYPE_WORDS,
    UNIQ_COUNT,
    BenchFormat,
    CommandTransformer,
    ProfileFormat,
    call_event,
    check_complete,
    option_dict,
    partial_call,
    unmodelled,
)
from blaslog.formats._amd import gemm_fields as amd_gemm_fields
from blaslog.formats._base import LeafTransformer, LogFormat, RecordError, to_int
from blaslog.formats._switch import LogSwitch, per_level
from blaslog.records import Event, GemmCall

_EX = (
    "transA",
    "transB",
    "m",
    "n",
    "k",
    "alpha",
    "A",
    "a_type",
    "lda",
    "B",
    "b_type",
    "ldb",
    "beta",
    "C",
    "c_type",
    "ldc",
    "D",
    "d_type",
    "ldd",
)
_EX_TAIL = ("compute_type", "algo", "solution_index", "flags")

#: Positional fields after the function name, per function family (the atomics mode may follow).
FIELD_ORDERS: dict[str, tuple[str, ...]] = {
    "gemm_ex": _EX + _EX_TAIL,
    "gemm_ex3": _EX + _EX_TAIL,
    "gemm_batched_ex": (*_EX, "batch_count", *_EX_TAIL),
    "gemm_strided_batched_ex": (
        "transA",
        "transB",
        "m",
        "n",
        "k",
        "alpha",
        "A",
        "a_type",
        "lda",
        "stride_a",
        "B",
        "b_type",
        "ldb",
        "stride_b",
        "beta",
        "C",
        "c_type",
        "ldc",
        "stride_c",
        "D",
        "d_type",
        "ldd",
        "stride_d",
        "batch_count",
        *_EX_TAIL,
    ),
    "gemm": ("transA", "transB", "m", "n", "k", "alpha", "A", "lda", "B", "ldb", "beta", "C", "ldc"),
    "gemm_batched": (
        "transA",
        "transB",
        "m",
        "n",
        "k",
        "alpha",
        "A",
        "lda",
        "B",
        "ldb",
        "beta",
        "C",
        "ldc",
        "batch_count",
    ),
    "gemm_strided_batched": (
        "transA",
        "transB",
        "m",
        "n",
        "k",
        "alpha",
        "A",
        "lda",
        "stride_a",
        "B",
        "ldb",
        "stride_b",
        "beta",
        "C",
        "ldc",
        "stride_c",
        "batch_count",
    ),
}
_TYPED = {"h": "f16_r", "s": "f32_r", "d": "f64_r", "c": "f32_c", "z": "f64_c"}
_TYPED_FAMILIES = ("gemm", "gemm_batched", "gemm_strided_batched")
_FUNCTION = re.compile(r"^rocblas_(?:([hsdcz])(gemm(?:_batched|_strided_batched)?)|(gemm_\w*ex3?))(_64)?$")
_LAYER = "ROCBLAS_LAYER=1 (trace), 2 (bench) or 4 (profile)"
"""One variable turns every rocBLAS log on (its bits add up); the messages are always written."""

_MODELLED = MODELLED | {"m", "n", "k", "composite_compute_type", "algo", "flags", "atomics_mode"}
"""The names :func:`gemm_fields` reads."""


def _family(function: str) -> tuple[str | None, str | None]:
    """(family key of FIELD_ORDERS, precision letter of a typed GEMM) or (None, None)."""
    match = _FUNCTION.match(function)
    if not match:
        return None, None
    if match.group(3):
        return match.group(3), None
    return match.group(2), match.group(1)


def _flags(value: Any, out: dict[str, Any], extra: list[tuple[str, Any]]) -> None:
    try:
        number = rocblas_flags_value(str(value))
    except Exception:
        error = RecordError(f"flags={value!r} is not a rocBLAS gemm flags name or number")
        error.where = ("flags", str(value))
        raise error from None
    if number is None:
        extra.append(("flags", str(value)))
    out["flags"] = number


def gemm_fields(values: dict[str, Any], family: str, precision: str | None, warnings: list[str]) -> dict[str, Any]:
    """GemmCall keyword arguments from named rocBLAS values (trace, bench or profile)."""
    out = amd_gemm_fields(values)
    extra: list[tuple[str, Any]] = []
    if precision:
        for letter in "abcd":
            out[f"{letter}_type"] = _TYPED[precision]
        out["compute_type"] = _TYPED[precision]
        if "ldd" not in out and "ldc" in out:
            out["ldd"] = out["ldc"]
    else:
        if out["d_type"] is None:
            out["d_type"] = out["c_type"]
        if out["compute_type"] is None:
            out["compute_type"] = values.get("composite_compute_type")
    if values.get("algo") is not None:
        out["algo"] = to_int(values["algo"], "algo", low=None)
    if "flags" in values:
        _flags(values["flags"], out, extra)
    for letter in "ABCD":
        if letter in values:
            out[f"{letter.lower()}_ptr"] = values[letter]
    out["atomics"] = values.get("atomics_mode")
    out["extra"] = tuple(extra)
    return out


class TraceTransformer(LeafTransformer):
    """trace tree -> (function, [field text])."""

    def trace(self, children: list[Any]) -> tuple[Any, list[Any]]:
        return (children[0], children[1:])

    def field(self, children: list[Any]) -> Any:
        return children[0] if children else ""


class RocblasTrace(LogFormat):
    """rocBLAS trace lines (ROCBLAS_LAYER bit 1)."""

    name = "rocblas-trace"
    sniff_rank = 30
    # 2 = bench lines (solution index and flags); 3 adds trace lines, 7 the profile written at exit
    logging = LogSwitch(
        "rocblas",
        (
            ("ROCBLAS_LOG_TRACE_PATH", "rocblas-trace"),
            ("ROCBLAS_LOG_BENCH_PATH", "rocblas-bench"),
            ("ROCBLAS_LOG_PROFILE_PATH", "rocblas-profile"),
        ),
        pid_names=False,
        levels=per_level(lambda level: {"ROCBLAS_LAYER": "2" if level <= 2 else "3" if level <= 4 else "7"}),
        default=True,
        settings=("ROCBLAS_",),
        objects=("librocblas",),
    )
    library = "rocblas"
    description = "rocBLAS trace lines (ROCBLAS_LAYER=1): `rocblas_gemm_ex,N,T,...`"
    logging_hint = _LAYER
    boundary = rb"rocblas_\w+,"
    near_miss = r"^\s*rocblas_\w+,"
    grammar = "rocblas.lark"
    start_rule = "trace"
    start = re.compile(AFTER_TAG + r"rocblas_\w+,")
    start_signs = ("rocblas_",)
    transformer = TraceTransformer

    def unfinished(self, lines: list[str]) -> bool:
        """A GEMM trace line without its last field, the atomics mode (ROCm 3.8 and later), or with a cut one:
        its rest may follow on the next line, when the log was cut at a fixed width (an older rocBLAS's line,
        which has no atomics mode, is joined only to a line that gives it one)."""
        function, *fields = " ".join(lines).strip().split(",")
        family, _precision = _family(function)
        if family is None or family not in FIELD_ORDERS:
            return False
        wanted = len(FIELD_ORDERS[family])
        return len(fields) <= wanted or (len(fields) == wanted + 1 and fields[-1] not in _ATOMICS)

    def partial(self, text: str, path: str, line: int, end_line: int) -> GemmCall | None:
        """A GEMM trace line a person elided with `...` (`rocblas_gemm_ex,T,N,34816,512,5120,...,bf16_r,...`): the
        fields before the first `...` stand where the logger writes them and are read; those after it cannot be
        placed (a `...` stands for any number of fields), and are named as not shown."""
        function, *fields = [field.strip() for field in _FIELD_COMMA.split(text.strip())]
        family, precision = _family(function)
        if family is None or family not in FIELD_ORDERS or not any(field in _ELLIPSES for field in fields):
            return None
        order = FIELD_ORDERS[family]
        shown = list(itertools.takewhile(lambda field: field not in _ELLIPSES, fields))
        values: dict[str, Any] = dict(zip(order, shown, strict=False))
        if precision:  # a typed GEMM's types are in its name
            for name in _TYPE_OPTIONS:
                values[name] = _TYPED[precision]
        unseen = [name for name in order[len(shown) :] if name not in _POINTERS and values.get(name) is None]
        return partial_call(self, function, values, unseen, path, line, end_line)

    def build(self, generic: Any) -> tuple[type, dict[str, Any], tuple[str, ...]]:
        function, fields = generic
        warnings: list[str] = []
        family, precision = _family(function)
        if family is None or family not in FIELD_ORDERS:
            return (
                Event,
                {
                    "library": self.library,
                    "function": function,
                    "event": "call",
                    "fields": tuple((str(i), value) for i, value in enumerate(fields, 1)),
                    "log_format": self.name,
                },
                (),
            )
        order = FIELD_ORDERS[family]
        values: dict[str, Any] = dict(zip(order, fields, strict=False))
        if len(fields) == len(order) + 1:
            values["atomics_mode"] = fields[-1]
            if fields[-1] not in _ATOMICS:
                raise RecordError(
                    f"{function} trace line ends in {str(fields[-1])[:40]!r}, not the atomics mode "
                    f"({' or '.join(sorted(_ATOMICS))}): cut short?"
                )
        elif len(fields) != len(order):
            raise RecordError(
                f"{function} trace line has {len(fields)} fields after the name; expected {len(order) + 1} "
                f"(ROCm 3.8 and later) or {len(order)} (older, no atomics mode)"
            )
        try:
            out = gemm_fields(values, family, precision, warnings)
        except RecordError as error:
            if error.where is not None and type(function) is str:
                # a trace line names no field: the bad value is looked for after the function's name
                error.where = (function, error.where[1])
            raise
        out.update(library=self.library, function=function, log_format=self.name)
        return GemmCall, out, tuple(warnings)


_FIELD_COMMA = re.compile(r",(?![^(]*\))")
"""A comma between two fields of a trace line, not the one inside a complex scalar `(1,0)`."""
_ELLIPSES = frozenset({"...", "…", "[...]", "[…]"})
"""What a person writes in a trace line for fields left out (of `_amd.ELIDED`, those no trace field can be)."""
_POINTERS = frozenset({"A", "B", "C", "D"})
"""A trace line's device pointers: no field of the GEMM's."""

_ATOMICS = frozenset({"atomics_allowed", "atomics_not_allowed"})
"""What the last field of a trace line says (rocblas_atomics_mode_to_string)."""

_BENCH_OPTIONS = _MODELLED | {"f", "r", "api", "transposeA", "transposeB", "atomics_not_allowed", "atomics_allowed"}
"""The rocblas-bench options a GEMM record models (the others are kept as `extra`)."""


class RocblasBench(BenchFormat):
    """rocBLAS bench lines (ROCBLAS_LAYER bit 2)."""

    name = "rocblas-bench"
    sniff_rank = 31
    library = "rocblas"
    description = "rocBLAS bench lines (ROCBLAS_LAYER=2): `./rocblas-bench -f gemm_ex ...`"
    logging_hint = _LAYER
    boundary = rb"\./rocblas-bench "
    # ROCBLAS_LAYER=3 writes a trace and a bench line per call: the trace line, which holds the pointers and
    # the atomics mode, is the one kept
    same_calls_as = "rocblas-trace"
    near_miss = r"^\s*(?:\./)?rocblas-bench\b"
    grammar = "rocblas.lark"
    start_rule = "bench"
    start = re.compile(AFTER_TAG + UNIQ_COUNT + r"\s*(?:\S*/)?rocblas-bench\b")
    start_signs = ("rocblas-bench",)
    transformer = CommandTransformer
    program = "rocblas-bench"

    def function_of(self, values: dict[str, Any]) -> str:
        routine = values.get("f") or values.get("function")
        return f"rocblas_{routine}" if routine else self.program

    def logged(self, values: dict[str, Any]) -> list[str]:
        routine = values.get("f") or values.get("function")
        if routine not in FIELD_ORDERS:
            return []
        names = [_BENCH_NAMES.get(name, name) for name in FIELD_ORDERS[routine] if name not in "ABCD"]
        return ["r", *names] if routine in _TYPED_FAMILIES else names

    def generic(self, values: dict[str, Any]) -> dict[str, Any]:
        values, _filled = _as_the_client_reads(dict(values))
        out = {**values, "transA": values.get("transposeA"), "transB": values.get("transposeB")}
        if values.get("flags") is not None:
            try:
                out["flags"] = rocblas_flags_value(str(values["flags"]))
            except Exception:
                out["flags"] = None
        if (values.get("f") or values.get("function")) in _TYPED_FAMILIES:
            precision = values.get("r") or values.get("precision")
            for name in _TYPE_OPTIONS:
                out[name] = precision
        return out

    def needed(self, values: dict[str, Any]) -> list[str]:
        routine = values.get("f") or values.get("function")
        if routine is None:
            return ["f|function"]
        if routine not in FIELD_ORDERS:
            return []
        # the key fields of a GEMM: sizes, transposes and types (a typed GEMM's precision -r, and its ldc, the
        # last option the logger writes for it); `--algo`, `--solution_index` and `--flags`, which the logger
        # writes last, are left out of a command a person typed, which is still a whole call
        needed = ["m", "n", "k", "transposeA", "transposeB"]
        needed += (
            ["r|precision", "ldc"]
            if routine in _TYPED_FAMILIES
            else ["a_type", "b_type", "c_type", "d_type", "compute_type|composite_compute_type"]
        )
        if "source" in values:  # the kernel-selection comment ends with the API that called the GEMM
            needed.append("parent_api")
        return needed

    def build(self, generic: Any) -> tuple[type, dict[str, Any], tuple[str, ...]]:
        _program, options = generic
        warnings: list[str] = []
        values, filled = _as_the_client_reads(option_dict(options, warnings))
        routine = values.get("f") or values.get("function")
        needed = [name for name in self.needed(values) if name.split("|")[0] not in filled]
        if needed:
            check_complete(self.program, options, needed)
        if routine is None:
            raise RecordError("rocblas-bench line without -f FUNCTION")
        ilp64 = values.get("api") == "1"
        precision = None
        if routine in ("gemm", "gemm_batched", "gemm_strided_batched"):
            precision = {v: k for k, v in _TYPED.items()}.get(values.get("r") or values.get("precision") or "f32_r")
            if precision is None:
                raise RecordError(f"unknown precision -r {values.get('r')!r}")
            function = f"rocblas_{precision}{routine}"
        else:
            function = f"rocblas_{routine}"
        function += "_64" if ilp64 else ""
        if routine not in FIELD_ORDERS:
            return (
                Event,
                {
                    "library": self.library,
                    "function": function,
                    "event": "call",
                    "fields": tuple((k, v or "") for k, v in values.items()),
                    "log_format": self.name,
                },
                tuple(warnings),
            )
        values["transA"] = values.get("transposeA", "N")
        values["transB"] = values.get("transposeB", "N")
        if "atomics_not_allowed" in values:
            values["atomics_mode"] = "atomics_not_allowed"
        elif "atomics_allowed" in values:
            values["atomics_mode"] = "atomics_allowed"
        out = gemm_fields(values, routine, precision, warnings)
        out["extra"] += unmodelled(values, _BENCH_OPTIONS)
        out.update(library=self.library, function=function, log_format=self.name)
        return GemmCall, out, tuple(warnings)


def _as_the_client_reads(values: dict[str, Any]) -> tuple[dict[str, Any], frozenset[str]]:
    """A rocblas-bench GEMM command's types as the bench's client reads them (string2rocblas_datatype, and its
    `a_type == "" ? prec : ...`), and the names of the types it took from the precision: a one-letter type (`h`,
    `s`, `d`, `c`, `z`) named in full, and the types a command leaves out (not those it names without a value:
    cut, or elided with `...`) taken from its precision where `-r` (`--precision`) names one, as people type the
    command (`-f gemm_ex -r h --compute_type s`). The client's default precision, f32_r, is not assumed: the logger
    never writes `-r` for `gemm_ex`, and a logged line cut before its types must not read as f32."""
    routine = values.get("f") or values.get("function")
    if routine not in FIELD_ORDERS:
        return values, frozenset()
    for name in _TYPE_OPTIONS:
        if values.get(name) in _TYPED:
            values[name] = _TYPED[values[name]]
    key = "r" if values.get("r") is not None else "precision"
    precision = values.get(key)
    if not isinstance(precision, str):
        return values, frozenset()
    precision = _TYPED.get(precision.lower(), precision.lower())
    if precision not in TYPE_WORDS:  # the client refuses it ("Invalid value for --precision")
        return values, frozenset()
    values[key] = precision
    if routine in _TYPED_FAMILIES:
        return values, frozenset()
    filled = frozenset(name for name in _TYPE_OPTIONS if name not in values)
    values.update(dict.fromkeys(filled, precision))
    return values, filled


_TYPE_OPTIONS = ("a_type", "b_type", "c_type", "d_type", "compute_type")
"""A GEMM's type options, which a typed GEMM's precision (`-r`, the `s` of `rocblas_sgemm`) gives all of."""


_BENCH_NAMES = {"transA": "transposeA", "transB": "transposeB"}
"""The bench options whose names differ from the trace's field names (FIELD_ORDERS)."""

_PROFILE_KEYS = _MODELLED | {"rocblas_function"}
_PROFILE_NAMES = {"m": "M", "n": "N", "k": "K"}
"""The profile keys whose names differ from the trace's field names (FIELD_ORDERS)."""
"""The profile keys a GEMM record models (the others are kept as `extra`)."""


class RocblasProfile(ProfileFormat):
    """rocBLAS profile entries (ROCBLAS_LAYER bit 4)."""

    name = "rocblas-profile"
    sniff_rank = 32
    library = "rocblas"
    description = "rocBLAS profile YAML flow mappings (ROCBLAS_LAYER=4) with call_count"
    logging_hint = _LAYER
    near_miss = r"^\s*(?:- )?\{\s*rocblas_function\s*:"
    grammar = "rocblas.lark"
    start_rule = "profile"
    # the early forms have no `- {`: `rocblas_function: rocblas_sgemm, transA: N, ...`, or no `- ` (2019):
    # `{ rocblas_function: "rocblas_dgemv", ... }`
    start = re.compile(AFTER_TAG + r"\s*(?:-?\s*\{\s*)?rocblas_function\s*:")
    start_signs = ("rocblas_function",)
    transformer = CommandTransformer
    function_key = "rocblas_function"

    def gemm_function(self, function: str) -> bool:
        return _family(function)[0] in FIELD_ORDERS

    def logged(self, function: str) -> list[str]:
        family, _precision = _family(function)
        names = FIELD_ORDERS.get(family or "", ())
        keys = [_PROFILE_NAMES.get(name, name) for name in names if name not in ("A", "B", "C", "D", "alpha", "beta")]
        return [*keys, "call_count"]

    def build(self, generic: Any) -> tuple[type, dict[str, Any], tuple[str, ...]]:
        warnings: list[str] = []
        values = option_dict(generic, warnings)
        function = values.get("rocblas_function")
        if not function:
            raise RecordError("profile entry without rocblas_function")
        family, precision = _family(function)
        if family is None:
            return call_event(self, function, values, warnings)
        renamed = {("m" if k == "M" else "n" if k == "N" else "k" if k == "K" else k): v for k, v in values.items()}
        try:
            out = gemm_fields(renamed, family, precision, warnings)
        except RecordError as error:
            where = error.where
            if where is not None and where[0] in ("m", "n", "k"):
                error.where = (where[0].upper(), where[1])  # the profile's own key, to find the value by
            raise
        out["extra"] += unmodelled(renamed, _PROFILE_KEYS)
        out.update(library=self.library, function=function, log_format=self.name)
        return GemmCall, out, tuple(warnings)


class _MessageTransformer(LeafTransformer):
    def message(self, children: list[Any]) -> tuple[Any, ...]:
        return tuple(children) if len(children) == 3 else (*children, "")


class RocblasMessage(LogFormat):
    """rocBLAS's own error, warning and info lines (a failed Tensile lookup, a backend fallback ...)."""

    name = "rocblas-message"
    sniff_rank = 33
    library = "rocblas"
    description = "rocBLAS messages: `rocBLAS error: ...`, `rocBLAS warning: ...`, `rocBLAS info: ...`"
    grammar = "rocblas.lark"
    start_rule = "message"
    start = re.compile(AFTER_TAG + r"\s*rocBLAS [a-z]+:")
    start_signs = ("rocBLAS ",)
    banner = r"rocBLAS info: maximum library size|rocBLAS version \d"
    transformer = _MessageTransformer

    def build(self, generic: Any) -> tuple[type, dict[str, Any], tuple[str, ...]]:
        _source, level, text = generic
        return (
            Event,
            {
                "library": self.library,
                "function": "rocBLAS",
                "event": str(level),
                "text": text,
                "level": str(level),
                "log_format": self.name,
            },
            (),
        )
