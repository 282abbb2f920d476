"""The record model: one frozen dataclass per thing a BLAS log says.

Every library's log becomes the same two kinds of record:

* :class:`GemmCall`, one per executed GEMM (a cuBLASLt ``[Trace]`` matmul line, a
  cuBLAS GEMM-family ``I!`` record, a rocBLAS trace/bench/profile GEMM line, a
  hipBLASLt ``[Trace]`` matmul line or ``hipblaslt-bench`` line);
* :class:`Event`, every other line the library wrote (API calls, heuristic
  queries, errors, info), so that nothing in a log is lost.

Where a record came from (file, line, thread, time) is kept in fields declared
with ``compare=False``: two records are equal when they describe the same GEMM.

``m``, ``n``, ``k`` are the column-major BLAS dimensions: ``op(A)`` is m x k,
``op(B)`` is k x n, ``D`` is m x n. cuBLASLt prints no m/n/k; they are derived
from the layouts: m and k from ``Adesc`` rows/cols (swapped when ``transa=OP_T``),
n from ``Ddesc`` cols (or ``Bdesc`` when D is missing).
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from typing import Any, Literal

SCHEMA_VERSION = 1
"""Version of every JSON document blaslog writes; bumped on incompatible change."""

Pairs = tuple[tuple[str, str], ...]

#: The fields that describe the algorithm a GEMM ran with (what diff and check compare).
ALGORITHM_FIELDS: tuple[str, ...] = (
    "algo_id",
    "tile",
    "stages",
    "num_splits_k",
    "reduction_scheme",
    "cta_swizzling",
    "custom_option",
    "inner_shape",
    "cluster_shape",
    "scheduling_mode",
    "workspace_size",
    "sm_count_target",
    "solution_index",
    "flags",
    "requested_algo",
    "algo",
)

#: The fields that say what arithmetic was asked for (types and compute type).
TYPE_FIELDS: tuple[str, ...] = (
    "a_type",
    "b_type",
    "c_type",
    "d_type",
    "compute_type",
    "scale_type",
)


def name_bytes(text: str) -> bytes:
    """The UTF-8 bytes of a name: the bytes of a file name that is not UTF-8, which os.fsdecode holds as
    surrogates, are given back; any other lone surrogate is encoded as it is (invalid UTF-8, never an error)."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


@dataclass(frozen=True, slots=True)
class GemmCall:
    """One executed GEMM, as one of the supported logs describes it."""

    library: str
    """`cublasLt`, `cublas`, `rocblas` or `hipblaslt`."""
    function: str
    """The function the log names (`cublasLtMatmul`, `cublasLtSSSMatmul`, `cublasGemmEx`, `rocblas_gemm_ex` ...)."""
    m: int | None = None
    """Rows of op(A) and D."""
    n: int | None = None
    """Columns of op(B) and D."""
    k: int | None = None
    """Columns of op(A), rows of op(B): the summed dimension."""
    batch_count: int = 1
    """Number of GEMMs in a batched call (1 when not batched)."""
    transa: str = "N"
    """Operation on A: `N`, `T` or `C`."""
    transb: str = "N"
    """Operation on B: `N`, `T` or `C`."""
    a_type: str | None = None
    """Data type of A, spelled as the library spells it (`R_32F`, `f16_r` ...)."""
    b_type: str | None = None
    """Data type of B."""
    c_type: str | None = None
    """Data type of C."""
    d_type: str | None = None
    """Data type of D."""
    compute_type: str | None = None
    """Compute type (`COMPUTE_32F_FAST_TF32`, `f32_r` ...)."""
    scale_type: str | None = None
    """Type of alpha and beta."""
    order: str | None = None
    """Non-default memory orders, e.g. `A=ORDER_ROW` (column-major everywhere when None)."""
    lda: int | None = None
    """Leading dimension of A."""
    ldb: int | None = None
    """Leading dimension of B."""
    ldc: int | None = None
    """Leading dimension of C."""
    ldd: int | None = None
    """Leading dimension of D."""
    stride_a: int | None = None
    """Batch stride of A, in elements."""
    stride_b: int | None = None
    """Batch stride of B."""
    stride_c: int | None = None
    """Batch stride of C."""
    stride_d: int | None = None
    """Batch stride of D."""
    epilogue: str | None = None
    """Epilogue (`EPILOGUE_BIAS` ...); None for the default."""
    bias_pointer: bool = False
    """A bias pointer was set."""
    scale_pointers: bool = False
    """Any of the A/B/C/D scale pointers was set (FP8 and block-scaled GEMMs)."""
    algo_id: int | None = None
    """cuBLASLt algorithm id."""
    tile: str | None = None
    """cuBLASLt tile (`MATMUL_TILE_64x64`)."""
    stages: str | None = None
    """cuBLASLt stages (`MATMUL_STAGES_16x6`)."""
    num_splits_k: int | None = None
    """Split-K count (None: not printed, i.e. no split-K)."""
    reduction_scheme: str | None = None
    """Split-K reduction scheme."""
    cta_swizzling: int | None = None
    """CTA swizzling."""
    custom_option: int | None = None
    """Algorithm custom option."""
    inner_shape: str | None = None
    """Inner shape (`MATMUL_INNER_SHAPE_MMA16816`)."""
    cluster_shape: str | None = None
    """Cluster shape (`CLUSTER_SHAPE_2x1x1`)."""
    scheduling_mode: int | None = None
    """Scheduling mode."""
    workspace_size: int | None = None
    """Workspace size in bytes."""
    sm_count_target: int | None = None
    """SM count target set on the descriptor."""
    out_of_place: bool | None = None
    """D is not C."""
    alpha: str | None = None
    """alpha as printed (a value, a value category for rocBLAS profiles, or None)."""
    beta: str | None = None
    """beta as printed (`0`, `1`, `?` for a device pointer ...)."""
    flags: int | None = None
    """rocBLAS gemm flags (what the caller asked for), as an integer."""
    solution_index: int | None = None
    """rocBLAS or hipBLASLt solution index."""
    algo: int | None = None
    """rocBLAS `algo` argument (0 standard, 1 solution index)."""
    requested_algo: str | None = None
    """The cublasGemmAlgo_t a cuBLAS caller asked for (the classic log shows no kernel)."""
    atomics: str | None = None
    """rocBLAS atomics mode (`atomics_allowed`, `atomics_not_allowed`)."""
    activation: str | None = None
    """hipBLASLt activation (`none`, `gelu` ...)."""
    call_count: int = 1
    """How many calls this record stands for (rocBLAS/hipBLASLt profile entries)."""
    extra: Pairs = ()
    """Every key the log printed that the fields above do not name, as (key, value)."""
    pointers: Pairs = field(default=(), compare=False)
    """Other pointer-valued keys (workspace, bias, scale pointers ...), which change from call to call."""
    a_ptr: str | None = field(default=None, compare=False)
    """Device pointer of A."""
    b_ptr: str | None = field(default=None, compare=False)
    """Device pointer of B."""
    c_ptr: str | None = field(default=None, compare=False)
    """Device pointer of C."""
    d_ptr: str | None = field(default=None, compare=False)
    """Device pointer of D."""
    stream: str | None = field(default=None, compare=False)
    """Stream the GEMM ran on."""
    file: str = field(default="", compare=False)
    """Input file (`-` for standard input)."""
    line: int = field(default=0, compare=False)
    """First physical line of the record."""
    end_line: int = field(default=0, compare=False)
    """Last physical line of the record (records wrapped over lines span several)."""
    thread: str | None = field(default=None, compare=False)
    """OS thread id (cuBLASLt, cuBLAS) or process id (hipBLASLt); None when the log has none."""
    timestamp: str | None = field(default=None, compare=False)
    """Time as printed."""
    level: str | None = field(default=None, compare=False)
    """Logger level word (`Trace`, `Api` ...)."""
    log_format: str = field(default="", compare=False)
    """Which dialect the record was read from (`cublaslt`, `rocblas-trace` ...)."""
    version: str | None = field(default=None, compare=False)
    """Library version printed with the record, when the log prints one."""
    missing: str | None = field(default=None, compare=False)
    """A partial record (a person edited fields out of it, `--lda ...`, or wrote a note into it): the fields its
    writer logs that it does not show, comma-separated (a transpose not shown is `?`); None for a whole record.
    Partial records are listed by `parse` and left out of `summary`, `check` and `diff`."""

    kind = "gemm"

    @property
    def trans(self) -> str:
        """The two transpose letters, `TN` style."""
        return self.transa + self.transb

    @property
    def family(self) -> str:
        """The function family, with internal spellings and `_64` suffixes folded together; cuBLAS's typed and
        `Ex` spellings of one GEMM (`cublasSgemm_v2`, `cublasGemmEx`, `cublasSgemmEx`) are one family
        (`cublasGemm`, `cublasGemmBatched`, `cublasGemmStridedBatched`, `cublasGemm3m`): the types tell them apart."""
        return _family(self.library, self.function)

    @property
    def compute_key(self) -> str | None:
        """The compute type as compared between calls: cuBLAS's typed GEMMs (and CUDA 10's `cublasGemmEx`) name
        it as a data type (`R_32F` for cublasSgemm), which is the compute type `COMPUTE_32F` of CUDA 11's names."""
        value = self.compute_type
        if value is not None and self.library in _DATA_AS_COMPUTE_LIBRARIES:
            match = _DATA_AS_COMPUTE.fullmatch(value)
            if match:
                return f"COMPUTE_{match.group(1)}"
        return value

    def dims(self) -> tuple[int | None, int | None, int | None, int]:
        """(m, n, k, batch_count)."""
        return (self.m, self.n, self.k, self.batch_count)

    def signature(self) -> tuple[Any, ...]:
        """What makes two calls "the same GEMM": shape, types, transposes, compute type, epilogue."""
        return (
            self.library,
            self.family,
            self.trans,
            self.m,
            self.n,
            self.k,
            self.batch_count,
            self.a_type,
            self.b_type,
            self.c_type,
            self.d_type,
            self.compute_key,
            self.scale_type,
            self.order,
            self.epilogue,
            self.lda,
            self.ldb,
            self.ldc,
            self.ldd,
        )

    def algorithm(self) -> tuple[Any, ...]:
        """The algorithm fields, in ALGORITHM_FIELDS order."""
        return _algorithm(self)

    def has_algorithm_info(self) -> bool:
        """True when the log named the algorithm, solution or flags this GEMM ran with."""
        return any(getattr(self, name) is not None for name in ("algo_id", "solution_index", "flags", "tile"))

    def algorithm_text(self) -> str:
        """The algorithm as a short `key=value` string, in the log's own key names."""
        values = _text_values(self)
        if self.flags is not None:
            from blaslog.flags import rocblas_flags_name

            named = zip(_TEXT_FIELDS, values, strict=True)
            values = tuple(rocblas_flags_name(value) if name == "flags" else value for name, value in named)
        parts = [f"{key}={value}" for key, value in zip(_TEXT_KEYS, values, strict=True) if value is not None]
        if not parts:
            # a tuning row that chose the library's own pick (TunableOp `Default`) names it, not an index
            chose = next((value for key, value in self.extra if key == "solution"), None)
            if chose:
                return str(chose)
            return "(not shown)" if self.missing else "(not logged)"
        return " ".join(parts)

    def types_text(self) -> str:
        """`R_16F/R_16F/R_16F/R_16F`: the A, B, C and D types."""
        return f"{self.a_type}/{self.b_type}/{self.c_type}/{self.d_type}"

    def shape_text(self) -> str:
        """`TN 64x1024x8` plus the batch when batched."""
        text = f"{self.trans} {self.m}x{self.n}x{self.k}"
        return text + (f" batch {self.batch_count}" if self.batch_count != 1 else "")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (extra and pointers as mappings)."""
        out = {name: getattr(self, name) for name in GEMM_FIELD_NAMES}  # asdict() deep-copies: far slower
        out["kind"] = "gemm"
        out["extra"] = pairs_to_dict(self.extra)
        out["pointers"] = pairs_to_dict(self.pointers)
        return out


_DATA_AS_COMPUTE = re.compile(r"[RC]_(\d+[FI])")

_FAMILIES: dict[str, tuple[re.Pattern[str], str]] = {}
"""Library -> (expression, template) folding its function names into families (each dialect's
`function_family`, declared with :func:`declare_library` when the dialect is registered)."""
_DATA_AS_COMPUTE_LIBRARIES: set[str] = set()
"""The libraries that print a compute type as a data type (each dialect's `compute_as_data_type`)."""
TUNING_FORMATS: set[str] = set()
"""The dialects whose records are tuning choices (a TunableOp results row, a hipBLASLt tuning row or bench table),
not executed calls: each dialect's `tuning`, declared with :func:`declare_library` when it is registered."""


@functools.lru_cache(maxsize=4096)
def _family(library: str, name: str) -> str:
    """The family of function `name` of `library` (see :attr:`GemmCall.family`), kept per pair (Match.expand parses
    its template on every call: 25 us, some 36 times per input of a summary); forgotten when a library is declared."""
    rule = _FAMILIES.get(library)
    if rule is not None:
        match = rule[0].fullmatch(name)
        if match:
            return match.expand(rule[1])
    return name[:-3] if name.endswith("_64") else name


def declare_library(
    library: str,
    log_format: str,
    *,
    family: tuple[str, str] | None = None,
    compute_as_data_type: bool = False,
    tuning: bool = False,
) -> None:
    """What the record model needs to know of a library and one of its dialects, from the dialect's class (the
    dialect registry, ``blaslog.formats.register_format``, calls this: a record's library is only a name here)."""
    if family is not None:
        _FAMILIES[library] = (re.compile(family[0]), family[1])
        _family.cache_clear()
    if compute_as_data_type:
        _DATA_AS_COMPUTE_LIBRARIES.add(library)
    if tuning:
        TUNING_FORMATS.add(log_format)
    else:
        TUNING_FORMATS.discard(log_format)


#: The names the logs use for the algorithm fields (for messages and findings).
LOG_KEYS: dict[str, str] = {
    "algo_id": "algoId",
    "num_splits_k": "numSplitsK",
    "reduction_scheme": "reductionScheme",
    "cta_swizzling": "ctaSwizzling",
    "custom_option": "customOption",
    "inner_shape": "innerShape",
    "cluster_shape": "clusterShape",
    "scheduling_mode": "schedulingMode",
    "workspace_size": "workSpaceSizeInBytes",
    "sm_count_target": "smCountTarget",
    "solution_index": "solution_index",
    "requested_algo": "algo",
}

_algorithm = operator.attrgetter(*ALGORITHM_FIELDS)
_TEXT_FIELDS = tuple(name for name in ALGORITHM_FIELDS if name not in ("workspace_size", "algo"))
"""The algorithm fields GemmCall.algorithm_text writes, each as its LOG_KEYS name (_TEXT_KEYS)."""
_TEXT_KEYS = tuple(LOG_KEYS.get(name, name) for name in _TEXT_FIELDS)
_text_values = operator.attrgetter(*_TEXT_FIELDS)


@dataclass(frozen=True, slots=True)
class Event:
    """Any line (or multi-line record) of a BLAS log that is not an executed GEMM."""

    library: str
    """`cublasLt`, `cublas`, `rocblas` or `hipblaslt`."""
    function: str
    """Function the log names."""
    event: str
    """What it is: `api`, `error`, `info`, `hint`, `trace` (a non-GEMM trace line), `call` (cuBLAS or rocBLAS
    non-GEMM call), `truncated` (a record cut short at the end of the input)."""
    text: str = ""
    """The message as printed (for free-text messages), or the line itself."""
    fields: Pairs = ()
    """key=value pairs of the message; groups are kept as their bracketed text."""
    file: str = field(default="", compare=False)
    """Input file."""
    line: int = field(default=0, compare=False)
    """First physical line."""
    end_line: int = field(default=0, compare=False)
    """Last physical line."""
    thread: str | None = field(default=None, compare=False)
    """Thread id when the log gives one."""
    timestamp: str | None = field(default=None, compare=False)
    """Time as printed."""
    level: str | None = field(default=None, compare=False)
    """Logger level word."""
    log_format: str = field(default="", compare=False)
    """Dialect the record was read from."""

    kind = "event"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (fields as a mapping)."""
        out = {name: getattr(self, name) for name in EVENT_FIELD_NAMES}
        out["kind"] = "event"
        out["fields"] = pairs_to_dict(self.fields)
        return out


Record = GemmCall | Event


def record_maker(cls: type) -> tuple[tuple[str, ...], Any]:
    """(field names, make) for a record class: ``make(values)`` builds a record from all its field values in
    field order, setting the slots directly (about twice as fast as the frozen dataclass's __init__, which
    goes through object.__setattr__ per field; used for the records rebuilt from a shape's template)."""
    names = tuple(f.name for f in fields(cls))
    setters = tuple(getattr(cls, name).__set__ for name in names)
    new = object.__new__

    def make(values: list[Any]) -> Any:
        record: Any = new(cls)
        for setter, value in zip(setters, values, strict=False):
            setter(record, value)
        return record

    return names, make


class Severity(StrEnum):
    """How bad a Problem is."""

    ERROR = "error"
    """The line was not used."""
    WARNING = "warning"
    """The line was used, with a doubt."""


OnErrorName = Literal["raise", "warn", "skip"]
"""An OnError's value, which every `on_error` parameter takes too."""


class OnError(StrEnum):
    """What parsing does with a line it cannot use (a Problem of severity `error`)."""

    RAISE = "raise"
    """Stop with a LogParseError (`--strict`)."""
    WARN = "warn"
    """Report it as a problem, count it and read on."""
    SKIP = "skip"
    """Count it (FileSummary.unparsable_lines) and read on, with no Problem for it (warnings, and what is said of
    the input as a whole, a stream cut short, are still reported)."""


@dataclass(frozen=True, slots=True)
class Problem:
    """Something blaslog could not read, or read with a doubt; always tied to a place in the input."""

    path: str
    """Input file."""
    line: int
    """1-based physical line (0 for the file as a whole)."""
    message: str
    """What is wrong and, where it helps, what to do."""
    text: str = ""
    """The offending text (cut to a readable length when shown)."""
    severity: Severity = Severity.ERROR
    """`error` (the line was not used) or `warning` (it was used, with a doubt)."""
    column: int = 0
    """1-based column, 0 when unknown."""
    once: str = ""
    """For a problem said once per input, what it is said once for (a kind of launcher tag): the pieces of an
    input read side by side each say it, and their accounting keeps the first. Kept past MAX_PROBLEMS."""

    def __post_init__(self) -> None:
        if type(self.severity) is not Severity:  # `"warning"` given: the member (a bad name is a ValueError)
            object.__setattr__(self, "severity", Severity(self.severity))

    def render(self) -> str:
        """`path:line: severity: message` plus the text and a caret."""
        from blaslog.errors import LogParseError, SourceLocation

        where = SourceLocation(self.path, self.line, self.column)
        return LogParseError(where, f"{self.severity}: {self.message}", self.text).render()


MAX_PROBLEMS = 1000
"""Problems kept per input (the others are counted; what is said once per input, `Problem.once`, is kept)."""

TRUNCATED = "kept as a truncated record"
"""What the problem of a record cut short says (a record ended before its writer finished it: an Event)."""
PARTIAL = "kept as a partial GEMM record"
"""What the problem of a record a person edited inside the line says (a GemmCall with `missing` set)."""


@dataclass(slots=True)
class FileSummary:
    """Line accounting for one input: lines = record_lines + foreign_lines + unparsable_lines."""

    path: str
    """The input as named."""
    lines: int = 0
    """Physical lines read."""
    gemm_records: int = 0
    """GEMM records found."""
    other_records: int = 0
    """Non-GEMM records found."""
    record_lines: int = 0
    """Physical lines that belong to a record."""
    foreign_lines: int = 0
    """Lines that are not BLAS log output (program output, blank lines)."""
    unparsable_lines: int = 0
    """Lines that look like BLAS log output but could not be parsed."""
    formats: dict[str, int] = field(default_factory=dict)
    """Records per dialect."""
    problems: list[Problem] = field(default_factory=list)
    """Unparsable lines and warnings, in line order (the first MAX_PROBLEMS of them)."""
    more_problems: int = 0
    """Problems beyond the first MAX_PROBLEMS, counted only (a log with a problem on every line stays small)."""

    def absorb(self, part: FileSummary, line_offset: int = 0) -> None:
        """Add the accounting of the next piece of the same input (its lines numbered from 1, or from after
        `line_offset` lines of this one); a piece's "empty input" warning is no warning of the whole, what is
        said once per input (`Problem.once`) is kept from the first piece that said it, and past MAX_PROBLEMS the
        others are counted."""
        for name in (
            "lines",
            "gemm_records",
            "other_records",
            "record_lines",
            "foreign_lines",
            "unparsable_lines",
            "more_problems",
        ):
            setattr(self, name, getattr(self, name) + getattr(part, name))
        for dialect, count in part.formats.items():
            self.formats[dialect] = self.formats.get(dialect, 0) + count
        said = {p.once for p in self.problems if p.once}
        for problem in part.problems:  # kept as one reader keeps them: MAX_PROBLEMS, and what is said once
            if problem.message == "empty input" or (problem.once and problem.once in said):
                continue
            if len(self.problems) >= MAX_PROBLEMS and not problem.once:
                self.more_problems += 1
                continue
            if problem.once:
                said.add(problem.once)
            if line_offset or problem.path != self.path:
                problem = replace(problem, path=self.path, line=problem.line + line_offset if problem.line else 0)
            self.problems.append(problem)

    def balanced(self) -> bool:
        """True when every line is accounted for."""
        return self.lines == self.record_lines + self.foreign_lines + self.unparsable_lines

    def to_dict(self, max_problems: int = 20) -> dict[str, Any]:
        """JSON-ready, with the first `max_problems` problems."""
        return {
            "path": self.path,
            "lines": self.lines,
            "gemm_records": self.gemm_records,
            "other_records": self.other_records,
            "record_lines": self.record_lines,
            "foreign_lines": self.foreign_lines,
            "unparsable_lines": self.unparsable_lines,
            "formats": dict(sorted(self.formats.items())),
            "problems": [
                {"line": p.line, "severity": str(p.severity), "message": p.message, "text": p.text[:200]}
                for p in self.problems[:max_problems]
            ],
            "more_problems": self.more_problems + max(0, len(self.problems) - max_problems),
        }


@dataclass(frozen=True, slots=True)
class ParseResult:
    """Records of one or more inputs, with the accounting of every input."""

    records: tuple[Record, ...]
    """GEMM and other records, in input order."""
    files: tuple[FileSummary, ...]
    """One summary per input."""

    @property
    def gemms(self) -> tuple[GemmCall, ...]:
        """The GEMM records only."""
        return tuple(r for r in self.records if isinstance(r, GemmCall))

    @property
    def problems(self) -> list[Problem]:
        """Problems of every input."""
        return [p for f in self.files for p in f.problems]

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)

    def __repr__(self) -> str:  # the records themselves would be megabytes
        gemms = sum(1 for r in self.records if isinstance(r, GemmCall))
        problems = sum(len(f.problems) + f.more_problems for f in self.files)
        return (
            f"<ParseResult {len(self.records)} records ({gemms} GEMMs) from {len(self.files)} inputs"
            + (f", {problems} problems" if problems else "")
            + ">"
        )

    def _repr_html_(self) -> str:
        """Each input's accounting as a small HTML table, for notebooks (file names escaped)."""
        import html

        head = "".join(
            f"<th>{name}</th>"
            for name in ("file", "lines", "GEMM records", "other records", "foreign lines", "unparsable lines")
        )
        rows = "".join(
            f"<tr><td><code>{html.escape(f.path)}</code></td><td>{f.lines}</td><td>{f.gemm_records}</td>"
            f"<td>{f.other_records}</td><td>{f.foreign_lines}</td><td>{f.unparsable_lines}</td></tr>"
            for f in self.files[:50]
        )
        more = f"<p>{len(self.files) - 50} more inputs</p>" if len(self.files) > 50 else ""
        return (
            f"<div><b>{html.escape(repr(self))}</b><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody>"
            f"</table>{more}</div>"
        )


def pairs_to_dict(pairs: Pairs) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in pairs:
        name, n = key, 2
        while name in out:  # a key printed twice keeps both values
            name, n = f"{key}#{n}", n + 1
        out[name] = value
    return out


GEMM_FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in fields(GemmCall))
"""Every GemmCall field, in declaration order."""
EVENT_FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Event))
"""Every Event field, in declaration order."""
