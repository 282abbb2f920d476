"""cuBLAS API log records (CUBLAS_LOGINFO_DBG=1), grammar ``grammars/cublas.lark``.

A record is an ``I! cuBLAS (vX.Y[.Z]) function ... called:`` header and the
``i!`` lines after it (arguments, then the Time / Process / COMPILED WITH
trailer). GEMM-family calls (``cublasGemmEx``, ``cublasSgemm_v2``,
``cublasGemmStridedBatchedEx`` ...) become GemmCall records; every other call
an Event. The classic log names the algorithm the caller *asked* for
(``requested_algo``), never the kernel that ran.

Forms read besides the plain one: a GEMM record whose argument lines are
missing (cuBLAS 10.2's header-only ``... called`` line, or a person's
``cublasGemmEx(...) called:`` with the type lines only) is a GemmCall whose
unknown fields are None; CUDA.jl's Julia logger frames (``┌ Debug: `` for
``I!``, ``│ `` for ``i!``) are read as the markers they stand for. A record
whose last line has no line end at the end of the input is whole only when
that line is its ``COMPILED WITH`` trailer: any other last line may be cut
inside its value, and the record is kept as truncated with what its whole
lines say.
"""

from __future__ import annotations

import re
from typing import Any

from blaslog._fast.shapes import kind_of
from blaslog.formats._base import LeafTransformer, LogFormat, Slot, to_int, transpose
from blaslog.formats._switch import LogSwitch, per_level
from blaslog.records import Event, GemmCall

_GEMM = re.compile(r"^cublas(?:[SDCHZ]gemm|Gemm)(?:3m)?(?:Ex)?(?:Batched|StridedBatched)?(?:Ex)?(?:_v2)?(?:_64)?$")
_TYPED = {"S": "R_32F", "D": "R_64F", "H": "R_16F", "C": "C_32F", "Z": "C_64F"}
_NAME = re.compile(r"(\w+)\s*\(")
# CUDA.jl hands the log to Julia's logger, which frames a message as `┌ Debug: <first line>`, `│ <line>` ...,
# `└ @ Module file:line`: the frame marks stand where `I!` and `i!` were; the module (`CUDA.CUBLAS`) comes
# before the first line's mark only, so it is part of the record (a launcher's tag before it is kept apart)
_JULIA_HEAD = re.compile(r"^[\w.]*┌ Debug: ?")
_JULIA_LINE = "│ "


_MATH_MODE_END = re.compile(
    r"MathMode=CUBLAS_\w*(?:MATH|REDUCTION)(?:\s*\|\s*CUBLAS_\w*(?:MATH|REDUCTION))*(?:\(\d+\))?$"
)
"""A context line that ends with a whole math mode (`MathMode=CUBLAS_DEFAULT_MATH`), not a cut one (`MathMode=C`)."""


class CublasTransformer(LeafTransformer):
    """Grammar tree -> (version, function signature, args, context)."""

    def start(self, children: list[Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"args": [], "context": [], "trailer": []}
        for kind, value in children:
            if kind == "header":
                out["version"], out["signature"] = value
            elif kind == "arg":
                out["args"].append(value)
            elif kind == "context":
                out["context"].extend(value)
                out["trailer"].append("context")
            elif kind == "note":
                out.setdefault("notes", []).append(value)
            else:
                out["trailer"].append(kind)
                out[kind] = value
        return out

    def header(self, children: list[Any]) -> tuple[str, Any]:
        return ("header", (children[0], children[1]))

    def arg(self, children: list[Any]) -> tuple[str, Any]:
        name, ctype, value = children
        return ("arg", (name, ctype, value))

    def pointer(self, children: list[Any]) -> Any:
        return children[0]

    def enum(self, children: list[Any]) -> Any:
        return ("enum", children[0], children[1])

    def plain(self, children: list[Any]) -> Any:
        return children[0]

    def time(self, children: list[Any]) -> tuple[str, Any]:
        return ("time", tuple(children))

    def context(self, children: list[Any]) -> tuple[str, Any]:
        return ("context", children)

    def context_item(self, children: list[Any]) -> tuple[Any, Any]:
        return (children[0], children[1])

    def compiled(self, children: list[Any]) -> tuple[str, Any]:
        return ("compiled", children[0])

    def note(self, children: list[Any]) -> tuple[str, Any]:
        return ("note", children[0])


class Cublas(LogFormat):
    """cuBLAS classic API log."""

    name = "cublas"
    sniff_rank = 20
    logging = LogSwitch(
        "cublas",
        (("CUBLAS_LOGDEST_DBG", "cublas"),),
        pid_names=False,
        levels=per_level(lambda _: {"CUBLAS_LOGINFO_DBG": "1"}),
        settings=("CUBLAS_",),
        objects=("libcublas",),
        version=("cuBLAS (log)", rb"cuBLAS \(v(\d+(?:\.\d+)+)\)"),
    )
    # the typed and `Ex` spellings of one GEMM (`cublasSgemm_v2`, `cublasGemmEx`, `cublasSgemmEx`) are one family
    function_family = (
        r"cublas(?:[SDCHZ]gemm|Gemm)(3m)?(?:Ex)?(Batched|StridedBatched)?(?:Ex)?(?:_v2)?(?:_64)?",
        r"cublasGemm\1\2",
    )
    compute_as_data_type = True  # cublasSgemm's compute type is `R_32F`: COMPUTE_32F
    library = "cublas"
    description = "cuBLAS API log records (CUBLAS_LOGINFO_DBG=1): `I!` header and `i!` lines"
    logging_hint = "CUBLAS_LOGINFO_DBG=1 with CUBLAS_LOGDEST_DBG=stdout"
    near_miss = r"^\s*[iI]!|^│ +(?:\w+: type=|Time: |Process=|COMPILED WITH: )"
    banner = r"\bcublasCreate(?:_v2)?\("
    grammar = "cublas.lark"
    # not anchored: a launcher's tag (`[rank0]: `) may come first, and is kept apart by the parser
    start = re.compile(r"I! cuBLAS \(|[\w.]*┌ Debug: +cuBLAS \(")
    start_signs = ("I! cuBLAS (", "┌ Debug: ")
    transformer = CublasTransformer
    assembles_by_shape = True  # lines' first characters decide (and a record's first line's), unmasked by SHAPE

    def continues(self, lines: list[str], line: str) -> bool:
        if line.startswith("i!"):
            return True
        return line.startswith(_JULIA_LINE[0]) and _JULIA_HEAD.match(lines[0]) is not None

    def interleaved(self, lines: list[str]) -> bool:
        """A program's print (or a person's `[...]`) between the lines of a record does not end it, until its
        `COMPILED WITH` trailer, the record's last line, has come."""
        return "COMPILED WITH:" not in lines[-1]

    def unfinished(self, lines: list[str]) -> bool:
        """A header line that does not end in `called:`, a `Time:` line that does not end in `seconds`, a
        `Process=` line with a stream but no whole math mode after it, or a line with a `(` not closed
        (`POINTER (IN HEX:0x...)`)."""
        last = lines[-1].rstrip()
        if len(lines) == 1:
            return not last.endswith(("called:", "called"))
        if last.startswith("i! Time:"):  # `... elapsed from start 0.016667 minutes or 1.000000 seconds`
            return not last.endswith("seconds")
        if last.startswith("i!Process=") and "StreamId=" in last:  # a math mode follows the stream (12.x, 13.x)
            return _MATH_MODE_END.search(last) is None
        return last.count("(") > last.count(")")

    def clean(self, lines: list[str]) -> str:
        if _JULIA_HEAD.match(lines[0]):
            lines = [
                _JULIA_HEAD.sub("I!", text, count=1)
                if i == 0
                else "i!" + text[len(_JULIA_LINE) :]
                if text.startswith(_JULIA_LINE)
                else text
                for i, text in enumerate(lines)
            ]
        return "\n".join(lines)

    def whole(self, text: str) -> bool:
        """Only the `COMPILED WITH` trailer (or a header-only record's `called` line) ends a record: any other
        last line left without a line end may have been cut inside its value (`val=C` of
        `val=CUBLAS_COMPUTE_32F(68)`), which the grammar would take as the value."""
        last = text.rsplit("\n", 1)[-1]
        if last.startswith("i! COMPILED WITH:"):
            return True
        return "\n" not in text and re.search(r" called:?\s*$", last) is not None

    def truncated(self, text: str, path: str, line: int, end_line: int) -> Event:
        """What the record's whole lines say (all but its last, which may be cut): its function and arguments,
        thread and time stamp when those lines came."""
        lines = text.split("\n")
        fields: tuple[tuple[str, Any], ...] = ()
        thread, timestamp = None, None
        match = re.search(r"function \S+ (\w+)\(", lines[0])
        function = match.group(1) if match else "?"
        try:  # all but the last line, which may be cut
            generic = self.transformer({}).transform(self.parser().parse("\n".join(lines[:-1]))) if lines[1:] else None
        except Exception:  # a cut record may fail anywhere; its text is kept either way
            generic = None
        if generic is not None:
            function = _function(generic["signature"])
            kwargs = _event_kwargs(generic)
            fields, thread, timestamp = kwargs["fields"], kwargs["thread"], kwargs["timestamp"]
        if thread is None:  # the Process line may be the cut one: its thread id is whole when `;` follows it
            match = re.search(r"^i!Process=\d+; Thread=(\d+);", lines[-1])
            thread = match.group(1) if match else None
        return Event(
            self.library,
            function,
            "truncated",
            text=text,
            fields=fields,
            file=path,
            line=line,
            end_line=end_line,
            thread=thread,
            timestamp=timestamp,
            log_format=self.name,
        )

    def build(self, generic: dict[str, Any]) -> tuple[type, dict[str, Any], tuple[str, ...]]:
        function = _function(generic["signature"])
        warnings: list[str] = []
        if generic["args"] and "time" not in generic["trailer"]:
            warnings.append("cuBLAS record without its trailer (Time / Process / COMPILED WITH lines): cut short?")
        context = dict(generic["context"])
        args = {name: value for name, _ctype, value in generic["args"]}
        if _GEMM.match(function):
            missing = [name for name in ("m", "n", "k") if name not in args]
            if not generic["args"]:
                warnings.append(
                    "cuBLAS GEMM record without argument lines (cuBLAS 10.2 logs only the header): "
                    "shape, transposes and types unknown"
                )
            elif missing:
                warnings.append(
                    f"cuBLAS GEMM record without its {', '.join(missing)} line(s) (left out of the "
                    "excerpt?): shape unknown"
                )
            kwargs = _gemm(function, args, generic, context)
            kwargs["extra"] += tuple(("note", note) for note in generic.get("notes", []))
            kwargs["pointers"] += _elapsed(generic)
            kwargs.update(
                thread=context.get("Thread"),
                timestamp=generic.get("time", (None,))[0],
                log_format=self.name,
                version=generic["version"],
            )
            return GemmCall, kwargs, tuple(warnings)
        kwargs = _event_kwargs(generic)
        return (
            Event,
            dict(library=self.library, function=function, event="call", log_format=self.name, **kwargs),
            tuple(warnings),
        )


def _function(signature: str) -> str:
    """The function's name in the header's C prototype."""
    signature = signature.strip()
    match = _NAME.search(signature)
    return match.group(1) if match else signature.split()[-1]


def _elapsed(generic: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    time, minutes, seconds = generic.get("time", (None, None, None))
    return (("elapsed_minutes", minutes), ("elapsed_seconds", seconds)) if time is not None else ()


def _event_kwargs(generic: dict[str, Any]) -> dict[str, Any]:
    """Event fields, thread and time stamp of a record (every argument and trailer value as printed)."""
    fields = [(name, _text(value)) for name, _ctype, value in generic["args"]]
    fields += [(f"context.{key}", _text(value)) for key, value in generic["context"] if key != "Thread"]
    fields += list(_elapsed(generic))
    if "compiled" in generic:
        fields.append(("compiled_with", generic["compiled"]))
    fields += [("note", note) for note in generic.get("notes", [])]
    fields.insert(0, ("version", generic["version"]))
    return {
        "fields": tuple(fields),
        "thread": dict(generic["context"]).get("Thread"),
        "timestamp": generic.get("time", (None,))[0],
    }


def _text(value: Any) -> Any:
    if isinstance(value, tuple):
        return f"{value[1]}({value[2]})"
    return value


def _enum(value: Any, prefix: str = "") -> str | None:
    """`CUDA_R_16F(2)` -> `R_16F` (prefix removed), plain values as they are."""
    if value is None:
        return None
    name: str = value[1] if isinstance(value, tuple) else value
    return name[len(prefix) :] if prefix and name.startswith(prefix) else name


_GEMM_ARGS = frozenset(
    {
        "handle",
        "transa",
        "transb",
        "m",
        "n",
        "k",
        "lda",
        "ldb",
        "ldc",
        "strideA",
        "strideB",
        "strideC",
        "batchCount",
        "Atype",
        "Btype",
        "Ctype",
        "computeType",
        "algo",
        "A",
        "B",
        "C",
        "alpha",
        "beta",
    }
)
"""The arguments of a cuBLAS GEMM that fields model (the others are kept as extra or pointers)."""


def _gemm(function: str, args: dict[str, Any], generic: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"library": "cublas", "function": function}
    # cuBLAS logs a GEMM's transposes always: where the lines are not there (cuBLAS 10.2's header-only record,
    # an excerpt a person cut), they are unknown, `?`, never the N an absent transpose means elsewhere
    for name in ("transa", "transb"):
        out[name] = transpose(_enum(args[name]), name) if name in args else "?"
    _gemm_sizes(out, args)
    _gemm_types(out, function, args)
    if "algo" in args:
        out["requested_algo"] = _enum(args["algo"])
    for letter in "ABC":
        out[f"{letter.lower()}_ptr"] = args.get(letter)
    out["alpha"] = None
    extra, pointers = _unmodelled(args, context)
    out["extra"] = tuple(extra)
    out["pointers"] = tuple(pointers)
    return out


def _gemm_sizes(out: dict[str, Any], args: dict[str, Any]) -> None:
    """m, n, k, the leading dimensions, the batch strides and the batch count."""
    for name in ("m", "n", "k"):
        out[name] = to_int(args[name], name) if name in args else None
    for name in ("lda", "ldb", "ldc"):
        if name in args:
            out[name] = to_int(args[name], name)
    for letter in "abc":
        key = f"stride{letter.upper()}"
        if key in args:
            out[f"stride_{letter}"] = to_int(args[key], key, low=None)
    if "batchCount" in args:
        out["batch_count"] = to_int(args["batchCount"], "batchCount")


def _gemm_types(out: dict[str, Any], function: str, args: dict[str, Any]) -> None:
    """The matrices' types (given, or the typed function's: cublasSgemm) and the compute type."""
    typed = re.match(r"cublas([SDCHZ])gemm", function)
    for letter in "ABC":
        value = args.get(f"{letter}type")
        out[f"{letter.lower()}_type"] = (
            _enum(value, "CUDA_") if value is not None else (_TYPED[typed.group(1)] if typed else None)
        )
    out["d_type"] = out["c_type"]
    compute = args.get("computeType")
    # CUBLAS_COMPUTE_32F(68) since CUDA 11; CUDA 10 passed a cudaDataType_t such as CUDA_R_32F(0)
    out["compute_type"] = (
        _enum(compute, "CUDA_" if (_enum(compute) or "").startswith("CUDA_") else "CUBLAS_")
        if compute is not None
        else out["c_type"]
    )


def _unmodelled(args: dict[str, Any], context: dict[str, Any]) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    """(extra, pointers): the arguments and trailer values no field models, pointers apart."""
    extra = [(name, _text(value)) for name, value in args.items() if name not in _GEMM_ARGS and not _is_pointer(value)]
    pointers = [(name, value) for name, value in args.items() if name not in _GEMM_ARGS and _is_pointer(value)]
    pointers += [(name, args[name]) for name in ("handle", "alpha", "beta") if name in args]
    for key, value in context.items():
        if key in ("Thread",):
            continue
        (pointers if _is_pointer(value) or key in ("Process", "Handle", "StreamId") else extra).append(
            (f"context.{key}", _text(value))
        )
    return extra, pointers


def _is_pointer(value: Any) -> bool:
    if isinstance(value, Slot):
        return value.kind == "ptr"
    return isinstance(value, str) and kind_of(value) == "ptr"  # what a Slot's kind says of the same text
