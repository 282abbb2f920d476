"""cuBLAS API log records (CUBLAS_LOGINFO_DBG=1), grammar ``grammars/cublas.lark``.

A record is an ``I! cuBLAS (vX.Y[.Z]) function ... called:`` header and the
``i!`` lines after it (arguments, then the Time / Process / COMPILED WITH
trailer). GEMM-family calls (``cublasGemmEx``, ``cublasSgemm_v2``,
``cublasGemmStridedBatchedEx`` ...) become GemmCall records; every other call
an Event. The classic log names the algorithm the caller *asked* for
(``requested_algo``), never the kernel that ran.
"""

from __future__ import annotations

import re
from typing import Any

from blaslog.formats._base import LeafTransformer, LogFormat, Slot, to_int, transpose
from blaslog.records import Event, GemmCall

_GEMM = re.compile(r"^cublas(?:[SDCHZ]gemm|Gemm)(?:3m)?(?:Ex)?(?:Batched|StridedBatched)?(?:Ex)?(?:_v2)?(?:_64)?$")
_TYPED = {"S": "R_32F", "D": "R_64F", "H": "R_16F", "C": "C_32F", "Z": "C_64F"}
_NAME = re.compile(r"(\w+)\s*\(")


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
    library = "cublas"
    description = "cuBLAS API log records (CUBLAS_LOGINFO_DBG=1): `I!` header and `i!` lines"
    logging_hint = "CUBLAS_LOGINFO_DBG=1 with CUBLAS_LOGDEST_DBG=stdout"
    near_miss = r"^\s*[iI]!"
    grammar = "cublas.lark"
    start = re.compile(r"^I! cuBLAS \(")
    transformer = CublasTransformer

    def continues(self, lines: list[str], line: str) -> bool:
        return line.startswith("i!")

    def clean(self, lines: list[str]) -> str:
        return "\n".join(lines)

    def build(self, generic: dict[str, Any]) -> tuple[type, dict[str, Any], tuple[str, ...]]:
        signature = generic["signature"].strip()
        match = _NAME.search(signature)
        function = match.group(1) if match else signature.split()[-1]
        warnings: list[str] = []
        if generic["args"] and "time" not in generic["trailer"]:
            warnings.append("cuBLAS record without its trailer (Time / Process / COMPILED WITH lines): cut short?")
        context = dict(generic["context"])
        time, minutes, seconds = generic.get("time", (None, None, None))
        elapsed = (("elapsed_minutes", minutes), ("elapsed_seconds", seconds)) if time is not None else ()
        common = dict(thread=context.get("Thread"), timestamp=time, log_format=self.name)
        args = {name: value for name, _ctype, value in generic["args"]}
        if _GEMM.match(function) and {"m", "n", "k"} <= set(args):
            kwargs = _gemm(function, args, generic, context)
            kwargs["extra"] += tuple(("note", note) for note in generic.get("notes", []))
            kwargs["pointers"] += elapsed
            kwargs.update(common)
            kwargs["version"] = generic["version"]
            return GemmCall, kwargs, tuple(warnings)
        fields = [(name, _text(value)) for name, _ctype, value in generic["args"]]
        fields += [(f"context.{key}", _text(value)) for key, value in generic["context"] if key != "Thread"]
        fields += list(elapsed)
        if "compiled" in generic:
            fields.append(("compiled_with", generic["compiled"]))
        fields += [("note", note) for note in generic.get("notes", [])]
        fields.insert(0, ("version", generic["version"]))
        return Event, dict(library=self.library, function=function, event="call", fields=tuple(fields), **common), tuple(warnings)


def _text(value: Any) -> Any:
    if isinstance(value, tuple):
        return f"{value[1]}({value[2]})"
    return value


def _enum(value: Any, prefix: str = "") -> str | None:
    """`CUDA_R_16F(2)` -> `R_16F` (prefix removed), plain values as they are."""
    if value is None:
        return None
    name = value[1] if isinstance(value, tuple) else value
    return name[len(prefix):] if prefix and name.startswith(prefix) else name


def _gemm(function: str, args: dict[str, Any], generic: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = dict(library="cublas", function=function)
    out["transa"] = transpose(_enum(args.get("transa")), "transa")
    out["transb"] = transpose(_enum(args.get("transb")), "transb")
    for name in ("m", "n", "k"):
        out[name] = to_int(args[name], name)
    for name in ("lda", "ldb", "ldc"):
        if name in args:
            out[name] = to_int(args[name], name)
    for letter in "abc":
        key = f"stride{letter.upper()}"
        if key in args:
            out[f"stride_{letter}"] = to_int(args[key], key, low=None)
    if "batchCount" in args:
        out["batch_count"] = to_int(args["batchCount"], "batchCount")
    typed = re.match(r"cublas([SDCHZ])gemm", function)
    for letter in "ABC":
        value = args.get(f"{letter}type")
        out[f"{letter.lower()}_type"] = _enum(value, "CUDA_") if value is not None else (
            _TYPED[typed.group(1)] if typed else None
        )
    out["d_type"] = out["c_type"]
    compute = args.get("computeType")
    # CUBLAS_COMPUTE_32F(68) since CUDA 11; CUDA 10 passed a cudaDataType_t such as CUDA_R_32F(0)
    out["compute_type"] = (_enum(compute, "CUDA_" if _enum(compute).startswith("CUDA_") else "CUBLAS_")
                           if compute is not None else out["c_type"])
    if "algo" in args:
        out["requested_algo"] = _enum(args["algo"])
    for letter in "ABC":
        out[f"{letter.lower()}_ptr"] = args.get(letter)
    out["alpha"] = None
    known = {"handle", "transa", "transb", "m", "n", "k", "lda", "ldb", "ldc", "strideA", "strideB", "strideC",
             "batchCount", "Atype", "Btype", "Ctype", "computeType", "algo", "A", "B", "C", "alpha", "beta"}
    extra = [(name, _text(value)) for name, value in args.items() if name not in known and not _is_pointer(value)]
    pointers = [(name, value) for name, value in args.items() if name not in known and _is_pointer(value)]
    pointers += [(name, args[name]) for name in ("handle", "alpha", "beta") if name in args]
    for key, value in context.items():
        if key in ("Thread",):
            continue
        (pointers if _is_pointer(value) or key in ("Process", "Handle", "StreamId") else extra).append(
            (f"context.{key}", _text(value)))
    out["extra"] = tuple(extra)
    out["pointers"] = tuple(pointers)
    return out


def _is_pointer(value: Any) -> bool:
    if isinstance(value, Slot):
        return value.kind == "ptr"
    return isinstance(value, str) and value.startswith("0x")
