"""Tuning files as log dialects: PyTorch TunableOp results (and untuned) files, and hipBLASLt offline-tuning files.

Grammars ``grammars/tunableop.lark`` and ``grammars/hipblaslt_tuning.lark``; every format variant and where it
was found is listed in ``fixtures/tunableop/SOURCES.md``.

A TunableOp file (``tunableop_results<ordinal>.csv``) says which solution PyTorch chose for each GEMM it tuned:
its ``Validator`` lines (PyTorch, ROCm/HIP, rocBLAS and hipBLASLt versions, GPU arch) become Events, and each
result row a GemmCall with the fields a log record has. The parameter signature is in BLAS column-major terms,
as rocBLAS and hipBLASLt log the call (``tn_M_N_K_ld_lda_ldb_ldc``), so a row and a log record of the same GEMM
have the same m, n, k, transposes and leading dimensions. The solution becomes ``solution_index`` (the rocBLAS
or hipBLASLt index) with the backend (``rocblas``, ``hipblaslt``, ``default``) and the name as written in
``extra``; ``Default`` (the library's own choice) has no index.

A hipBLASLt tuning file (HIPBLASLT_TUNING_FILE, read back by HIPBLASLT_TUNING_OVERRIDE_FILE) holds the
winning ``solution_index`` per problem; its rows become GemmCalls of library ``hipblaslt``.
"""

from __future__ import annotations

import re
from typing import Any

from blaslog.formats._amd import AFTER_TAG
from blaslog.formats._base import LeafTransformer, LogFormat, RecordCut, RecordError, to_int, transpose
from blaslog.formats.hipblaslt import gemm_fields as hipblaslt_gemm_fields
from blaslog.records import Event, GemmCall

#: TunableOp's C++ type names (TypeName<T>, c10::ScalarType) -> the BLAS type names rocBLAS and hipBLASLt log.
DTYPES: dict[str, str] = {
    "float": "f32_r",
    "tf32": "f32_r",
    "double": "f64_r",
    "Half": "f16_r",
    "BFloat16": "bf16_r",
    "c10::complex<float>": "f32_c",
    "c10::complex<double>": "f64_c",
    "Float8_e4m3fn": "f8_r",
    "Float8_e5m2": "bf8_r",
    "Float8_e4m3fnuz": "f8_fnuz_r",
    "Float8_e5m2fnuz": "bf8_fnuz_r",
    "Float4_e2m1fn_x2": "f4_r",
    "Float": "f32_r",
}
#: The compute type TunableOp's ComputeTypeFor<T> names for each input type (fp16, bf16 and fp8 accumulate in f32).
COMPUTE: dict[str, str] = {
    "float": "f32_r",
    "tf32": "xf32_r",
    "double": "f64_r",
    "c10::complex<float>": "f32_c",
    "c10::complex<double>": "f64_c",
}

_OP = re.compile(r"^(?P<kind>[A-Za-z]\w*?TunableOp)_(?P<types>.+)_(?P<layout>[NTCntc]{2})$")
_TYPE = re.compile(r"(Float8_e4m3fnuz|Float8_e5m2fnuz|Float8_e4m3fn|Float8_e5m2|Float4_e2m1fn_x2|[^_]+)(?:_|$)")
_SOLUTION = re.compile(r"^Gemm_(?P<backend>[A-Za-z]+)(?:_(?P<trans>[NTCntc]{2}))?_(?P<index>-?\d+)$")
_DIMS = re.compile(r"^([nNtTcC])([nNtTcC])_(\d+)_(\d+)_(\d+)$")


def op_types(op: str) -> tuple[str, list[str], str]:
    """(kind, data type names, layout) of a TunableOp operator name: `GemmTunableOp_BFloat16_TN` ->
    (`GemmTunableOp`, [`BFloat16`], `TN`); a scaled GEMM names A, B and C types. RecordError when it is none."""
    match = _OP.match(op)
    if match is None:
        raise RecordError(f"operator {op!r} is not KIND_TYPE_LAYOUT (GemmTunableOp_BFloat16_TN)")
    types = [m.group(1) for m in _TYPE.finditer(match.group("types")) if m.group(1)]
    return match.group("kind"), types, match.group("layout").upper()


def parse_solution(text: str) -> tuple[str, int | None]:
    """(backend, index) of a solution name: `Gemm_Rocblas_1216` -> (`rocblas`, 1216), `Gemm_Hipblaslt_TN_7` ->
    (`hipblaslt`, 7), `Default` -> (`default`, None), a bare `1219` (PyTorch 2.2) -> (`""`, 1219), anything else
    -> (`""`, None)."""
    if text == "Default":
        return "default", None
    match = _SOLUTION.match(text)
    if match is not None:
        return match.group("backend").lower(), int(match.group("index"))
    if re.fullmatch(r"-?\d+", text):
        return "", int(text)
    return "", None


class _TunableOpTransformer(LeafTransformer):
    def start(self, children: list[Any]) -> Any:
        return children[0]

    def validator(self, children: list[Any]) -> tuple[Any, ...]:
        return ("validator", children[0], children[1] if len(children) > 1 else "")

    def result(self, children: list[Any]) -> tuple[Any, ...]:
        return ("result", children[0], children[1], children[2] if len(children) > 2 else {})

    logged_validator = validator  # the same record, as PYTORCH_TUNABLEOP_VERBOSE logs it
    logged_result = result

    def params(self, children: list[Any]) -> dict[str, Any]:
        return {token.type: token.value for token in children}

    def tail(self, children: list[Any]) -> dict[str, Any]:
        return {token.type: token.value for token in children}

    def __default_token__(self, token: Any) -> Any:
        # params and tail need the terminal's name: keep (type, value) pairs
        return _Leaf(token.type, self.leaf(token))


class _Leaf:
    __slots__ = ("type", "value")

    def __init__(self, type_: str, value: Any) -> None:
        self.type, self.value = type_, value

    def __str__(self) -> str:
        return str(self.value)


def _value(leaf: Any) -> Any:
    return leaf.value if isinstance(leaf, _Leaf) else leaf


def _logged(text: str) -> str | None:
    """What follows the arrow of a result as PYTORCH_TUNABLEOP_VERBOSE logs it (`OP(PARAMS) -> ` then the
    solution and its time), without a BLAS_PARAMS tail; None for a row of a results file."""
    head, arrow, rest = text.partition(") -> ")
    if not arrow or "," in head:
        return None
    return rest.split(",BLAS_PARAMS:", 1)[0]


class TunableOp(LogFormat):
    """PyTorch TunableOp results and untuned files (PYTORCH_TUNABLEOP_ENABLED, PYTORCH_TUNABLEOP_RECORD_UNTUNED),
    and the same records as PYTORCH_TUNABLEOP_VERBOSE logs them (`OP(PARAMS) -> SOLUTION,TIME`,
    `Validator KEY=VALUE`)."""

    name = "tunableop"
    sniff_rank = 50
    tuning = True
    library = "tunableop"
    description = (
        "PyTorch TunableOp results files (tunableop_results<N>.csv): Validator lines and tuned GEMM rows; the same "
        "records as PYTORCH_TUNABLEOP_VERBOSE logs them"
    )
    # a tuning file is no log: it is not named among the "was logging on?" hints
    logging_hint = ""
    boundary = rb"(?:Validator[, ]|[A-Za-z]\w*TunableOp_)"
    grammar = "tunableop.lark"
    start_rule = "start"
    # a results file's rows at a line's start (PyTorch writes the file itself); what the verbose mode logs also
    # after a launcher's tag (it is the process's output)
    start = re.compile(
        r"^(?:Validator,|[A-Za-z]\w*TunableOp_[^,\s(]*,)"
        rf"|{AFTER_TAG}(?:Validator [A-Z][A-Z0-9_]*=\S*\s*$|[A-Za-z]\w*TunableOp_[^,\s(]*\([^()\s]*\) -> )"
    )
    start_signs = ("Validator", "TunableOp_")
    transformer = _TunableOpTransformer

    def whole(self, text: str) -> bool | None:
        """A result row at the very end of the file without the time PyTorch writes after its solution was cut
        (`Gemm_Rocb` of `Gemm_Rocblas_-621295520`), or a logged result without it; any other may have been cut
        inside its last value."""
        if text.startswith("Validator"):
            return None
        logged = _logged(text)
        if logged is not None:
            return False if "," not in logged else None
        return False if text.count(",") == 2 else None

    def unfinished(self, lines: list[str]) -> bool:
        """A row without the tuning time PyTorch writes after a solution (an untuned row has neither; a file
        written by hand or by `blaslog tunableop emit` may leave the time out, but its next line is a row), or
        one with white space inside, which no row holds (two pieces joined with a space that was not there), or
        one whose time is cut short (`0.`)."""
        last = lines[-1].strip()
        if last.startswith("Validator"):
            return False
        logged = _logged(last)
        if logged is not None:  # the solution and its time after the arrow: the logger always prints both
            return "," not in logged or logged.endswith((",", ".", "e", "E", "-", "+"))
        row = last.split(",BLAS_PARAMS:", 1)[0]
        return row.count(",") <= 2 or " " in row or row.endswith((".", "e", "E", "-", "+"))  # a time cut short

    def build(self, generic: Any) -> tuple[type, dict[str, Any], tuple[str, ...]]:
        kind = generic[0]
        if kind == "validator":
            key, value = str(_value(generic[1])), _value(generic[2])
            return (
                Event,
                {
                    "library": self.library,
                    "function": "Validator",
                    "event": "info",
                    "fields": ((key, value),),
                    "log_format": self.name,
                },
                (),
            )
        _, op_leaf, params, tail = generic
        return GemmCall, *self._gemm(str(_value(op_leaf)), params, tail)

    def _gemm(self, op: str, params: dict[str, Any], tail: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
        warnings: list[str] = []
        kind, types, layout = op_types(op)
        dims = _DIMS.match(str(params["DIMS"]))
        if dims is None:  # the grammar's DIMS guarantees the shape
            raise RecordError(f"parameters {params['DIMS']!r} are not TRANS_M_N_K")
        ta, tb, m, n, k = dims.groups()
        if (ta + tb).upper() != layout:
            warnings.append(
                f"the operator's layout {layout} and the parameters' {ta}{tb} differ; the parameters' "
                "transposes are used"
            )
        blas = [DTYPES.get(t) for t in types]
        for name, value in zip(types, blas, strict=True):
            if value is None:
                warnings.append(f"data type {name!r} is not one blaslog knows; kept as written")
        spelled = [b or t for t, b in zip(types, blas, strict=True)]
        if len(spelled) == 1:
            a = b_ = c = spelled[0]
        elif len(spelled) == 2:
            a = b_ = spelled[0]
            c = spelled[1]
        else:
            a, b_, c = spelled[0], spelled[1], spelled[-1]
        out: dict[str, Any] = {
            "library": self.library,
            "function": kind,
            "log_format": self.name,
            "m": to_int(m, "m"),
            "n": to_int(n, "n"),
            "k": to_int(k, "k"),
            "transa": transpose(ta.upper(), "transa"),
            "transb": transpose(tb.upper(), "transb"),
            "a_type": a,
            "b_type": b_,
            "c_type": c,
            "d_type": c,
            "compute_type": COMPUTE.get(types[0], "f32_r" if blas[0] is not None else None),
        }
        extra: list[tuple[str, Any]] = [("op", op)]
        if "BATCH" in params:
            out["batch_count"] = to_int(str(params["BATCH"])[3:], "batch")
        if "LD" in params:
            lda, ldb, ldc = str(params["LD"])[4:].split("_")
            out["lda"], out["ldb"], out["ldc"] = to_int(lda, "lda"), to_int(ldb, "ldb"), to_int(ldc, "ldc")
            out["ldd"] = out["ldc"]
        if kind.startswith("ScaledGemm"):
            out["scale_pointers"] = True
        if "SCALING" in params:
            extra.append(("rowwise", str(params["SCALING"])[4:]))
        if "BIAS" in params:
            bias = str(params["BIAS"])[6:]
            extra.append(("bias_type", bias))
            if bias != "None":
                out["bias_pointer"] = True
                out["epilogue"] = "bias"
        elif kind.startswith("GemmAndBias"):
            out["bias_pointer"] = True
            out["epilogue"] = "bias"
        if "PARAMS_TAIL" in params:
            extra.append(("params_tail", params["PARAMS_TAIL"]))
            warnings.append(f"parameter part {params['PARAMS_TAIL']!r} is not one blaslog knows; kept in extra")
        solution = tail.get("SOLUTION")
        if solution is None:
            extra.append(("state", "untuned"))
        else:
            text = str(solution)
            backend, index = parse_solution(text)
            if backend == "" and index is None:
                warnings.append(f"solution name {text!r} is not Default, Gemm_<Backend>_<index> or an index")
            out["solution_index"] = index
            extra += [("backend", backend or "unknown"), ("solution", text)]
        if tail.get("TIME") is not None:
            extra.append(("time_ms", tail["TIME"]))
        if tail.get("BLAS_PARAMS") is not None:
            extra.append(("blas_params", str(tail["BLAS_PARAMS"])[len("BLAS_PARAMS:") :].strip()))
        out["extra"] = tuple(extra)
        return out, tuple(warnings)


#: hipblaslt-bench's CSV columns up to the compute type: the same in every version.
_BENCH_HEAD = (
    "transA",
    "transB",
    "grouped_gemm",
    "batch_count",
    "m",
    "n",
    "k",
    "alpha",
    "lda",
    "stride_a",
    "beta",
    "ldb",
    "stride_b",
    "ldc",
    "stride_c",
    "ldd",
    "stride_d",
    "a_type",
    "b_type",
    "c_type",
    "d_type",
    "compute_type",
)
#: The 37 fields of a tuning row of hipBLASLt 0.10-0.12 (the bench's columns, `soulution_index`, arch, CUs).
LEGACY_37 = (
    *_BENCH_HEAD,
    "scaleA",
    "scaleB",
    "scaleC",
    "scaleD",
    "amaxD",
    "activation_type",
    "bias_vector",
    "bias_type",
    "rotating_buffer",
    "hipblaslt-Gflops",
    "hipblaslt-GB/s",
    "us",
    "solution_index",
    "gcnArchName",
    "CUs",
)
#: The 10 fields of the first override reader's rows.
LEGACY_10 = ("transA", "transB", "batch_count", "m", "n", "k", "a_type", "c_type", "compute_type", "solution_index")


class _TuningTransformer(LeafTransformer):
    def version(self, children: list[Any]) -> tuple[Any, ...]:
        return ("version", children[1] if len(children) > 1 else "")

    def row(self, children: list[Any]) -> tuple[Any, ...]:
        return ("row", [c.strip() if isinstance(c, str) else c for c in children])

    def table(self, children: list[Any]) -> tuple[Any, ...]:
        """(`table`, the header's column names, the row's cells, what the lines after the row say of the
        solution): the label `[0]:` is left out."""
        at = next(i for i, child in enumerate(children) if isinstance(child, tuple))
        header = next(str(child) for child in children if "," in str(child))  # a label may come first
        return ("table", header.split(","), children[at][1], [str(c) for c in children[at + 1 :]])

    def tuning(self, children: list[Any]) -> Any:
        return children[0]


class HipblasLtTuning(LogFormat):
    """hipBLASLt offline-tuning files (HIPBLASLT_TUNING_FILE / HIPBLASLT_TUNING_OVERRIDE_FILE)."""

    name = "hipblaslt-tuning"
    sniff_rank = 51
    tuning = True
    library = "hipblaslt"
    description = "hipBLASLt tuning files (HIPBLASLT_TUNING_FILE, read by HIPBLASLT_TUNING_OVERRIDE_FILE)"
    logging_hint = ""
    grammar = "hipblaslt_tuning.lark"
    start_rule = "tuning"
    start = re.compile(
        r"^(?:Git Version: \S"
        r"|\s*[NTC],[NTC],(?:[^,\n]*,){7,}[^,\n]*,gfx[0-9a-zA-Z]+(?::[^,\s]*)?,\d+\s*$"
        r"|\s*[NTC],[NTC],\d+,\d+,\d+,\d+,\w+,\w+,\w+,-?\d+\s*$)"
        # the bench's table is its stdout: a launcher may tag it
        rf"|{AFTER_TAG}\s*(?:\[\d+\]:)?transA,transB,(?:grouped_gemm,|.*\bhipblaslt-Gflops\b)"
    )
    start_signs = ("Git Version: ", "transA,transB,", *(f"{a},{b}," for a in "NTC" for b in "NTC"))
    transformer = _TuningTransformer

    def clean(self, lines: list[str]) -> str:
        """The line without the bench's indentation, nor the backtick of a person's Markdown code span around
        it (`` `N,N,0,...,2361.71` `` in an issue); a table's lines (header, label, row) one a line."""
        return "\n".join(line.strip().strip("`").strip() for line in lines)

    def continues(self, lines: list[str], line: str) -> bool:
        """A table's header goes on with `[0]:` and its value row (a line of at most as many cells as the header
        names: fewer when it was cut), and the row with what the bench prints of the solution (`--Solution
        index: N`, `--Solution name: ...`, `--kernel name: ...`)."""
        if not _TABLE.match(lines[0]):
            return False
        if _row_of(lines) is not None:  # the solution's lines follow the row, each at most once
            after = lines[-1]
            kind = _INFO.match(line)
            return (
                kind is not None
                and (_ROW.match(after) is not None or _INFO.match(after) is not None)
                and not any(one.lstrip().startswith(kind.group(1)) for one in lines)
            )
        if len(lines) == 1 and _LABEL.match(line):
            return True
        return line.count(",") <= lines[0].count(",") and _ROW.match(line) is not None

    def interleaved(self, lines: list[str]) -> bool:
        """A table's header may stand apart from its row (a blank line between, as the bench prints it, or a
        program's print) until the row came, and the row from the solution's lines until the last came."""
        if _TABLE.match(lines[0]) is None:
            return False
        return _row_of(lines) is None or sum(_INFO.match(line) is not None for line in lines) < len(_INFO_NAMES)

    def unfinished(self, lines: list[str]) -> bool:
        """A table whose header does not yet name the bench's timing (`hipblaslt-Gflops`), or whose row has fewer
        cells than the header names: the rest of that line may follow, when the log was cut at a fixed width."""
        if not _TABLE.match(lines[0]):
            return False
        row = _row_of(lines)
        if row is None:
            return len(lines) == 1 and "hipblaslt-Gflops" not in lines[0]
        return row.count(",") < lines[0].count(",")

    def whole(self, text: str) -> bool | None:
        """A table whose row (or `--Solution index:` line) has no line end at the end of the input was cut (the
        bench ends it with one); a tuning file's row may have been cut inside its last value, and so may a
        table's solution or kernel name, which is no field of the GEMM (kept, with a warning)."""
        if _TABLE.match(text) is None:
            return None
        last = _INFO.match(text.rsplit("\n", 1)[-1])
        return None if last is not None and last.group(1) != "--Solution index:" else False

    def cut_short(self, text: str) -> bool:
        """A table without its value row, or with a row of fewer cells than its header names."""
        lines = text.split("\n")
        if not _TABLE.match(lines[0]):
            return False
        row = _row_of(lines)
        return row is None or row.count(",") < lines[0].count(",")

    def build(self, generic: Any) -> tuple[type, dict[str, Any], tuple[str, ...]]:
        if generic[0] == "version":
            return (
                Event,
                {
                    "library": self.library,
                    "function": "tuning",
                    "event": "info",
                    "fields": (("git_version", generic[1]),),
                    "log_format": self.name,
                },
                (),
            )
        warnings: list[str] = []
        if generic[0] == "table":
            return self._table(generic[1], generic[2], generic[3], warnings)
        cells = generic[1]
        if len(cells) == len(LEGACY_10):
            values = dict(zip(LEGACY_10, cells, strict=True))
            values["b_type"], values["d_type"] = values["a_type"], values["c_type"]
        elif len(cells) == len(LEGACY_37):
            values = dict(zip(LEGACY_37, cells, strict=True))
        elif len(cells) > len(_BENCH_HEAD) + 3:
            # a newer bench with more columns: the first 22 and the last three are known
            values = dict(zip(_BENCH_HEAD, cells, strict=False))
            values.update(solution_index=cells[-3], gcnArchName=cells[-2], CUs=cells[-1])
            values["columns"] = "|".join(str(c) for c in cells[len(_BENCH_HEAD) : -3])
        else:
            raise RecordError(
                f"a tuning row of {len(cells)} fields; blaslog reads rows of 10 fields, 37 fields, or "
                "the bench's columns followed by solution index, arch and CU count"
            )
        values = {k: v for k, v in values.items() if v not in ("", None)}
        out = hipblaslt_gemm_fields(values, ("m", "n", "k"), bias=values.get("bias_vector") == "1")
        out.update(library=self.library, function="hipblaslt-tuning", log_format=self.name)
        return GemmCall, out, tuple(warnings)

    def _table(
        self, names: list[str], cells: list[Any], infos: list[str], warnings: list[str]
    ) -> tuple[type, dict[str, Any], tuple[str, ...]]:
        """A bench table's value row, read by its header's column names (`M` or `m`, `soulution_index`), with
        the solution's index and names from the lines after it."""
        if len(cells) < len(names):
            raise RecordCut(f"the table's row has {len(cells)} of the {len(names)} cells its header names")
        if len(names) != len(cells):
            raise RecordError(f"the table's header names {len(names)} columns and its row has {len(cells)} cells")
        values = {_TABLE_NAMES.get(name.strip(), name.strip()): cell for name, cell in zip(names, cells, strict=True)}
        for info in infos:
            name, _, said = info[2:].partition(":")
            field = _INFO_NAMES[name.strip()]
            if said.strip() and values.setdefault(field, said.strip()) != said.strip():
                raise RecordError(f"the table's {field} is {values[field]} and the line after it says {said.strip()}")
        values = {k: v for k, v in values.items() if v not in ("", None)}
        out = hipblaslt_gemm_fields(values, ("m", "n", "k"), bias=values.get("bias_vector") == "1")
        out.update(library=self.library, function="hipblaslt-bench", log_format=self.name)
        return GemmCall, out, tuple(warnings)


_TABLE = re.compile(r"\s*(?:\[\d+\]:)?transA,transB,(?:grouped_gemm,|.*\bhipblaslt-Gflops\b)")
"""A hipblaslt-bench table's header (the start of a table record): it names `grouped_gemm` (hipBLASLt since late
2023) or the bench's `hipblaslt-Gflops`; rocblas-bench's table names neither."""


def _row_of(lines: list[str]) -> str | None:
    """A table record's value row, once it came."""
    return next((line for line in lines[1:] if _ROW.match(line)), None)


_LABEL = re.compile(r"\s*\[\d+\]:\s*$")
_INFO = re.compile(r"\s*(--(?:Solution index|Solution name|kernel name):)")
_INFO_NAMES = {"Solution index": "solution_index", "Solution name": "solution_name", "kernel name": "kernel_name"}
"""What hipblaslt-bench prints of a solution after its table's row (testing_matmul.hpp) -> the value's name."""
_ROW = re.compile(r"\s*[NTC],[NTC],")
_TABLE_NAMES = {"M": "m", "N": "n", "K": "k", "soulution_index": "solution_index"}
"""The bench table's column names that differ from its option names (older tables, the bench's own typo)."""


__all__ = ["COMPUTE", "DTYPES", "HipblasLtTuning", "TunableOp", "op_types", "parse_solution"]
