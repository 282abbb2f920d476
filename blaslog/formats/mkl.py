"""oneMKL verbose mode (MKL_VERBOSE=1), grammar ``grammars/mkl.lark``.

A call line names the function, its arguments, the time it took and `Key:value` fields::

    MKL_VERBOSE SGEMM(T,N,75,75,64,0x7ffca9c475d8,0xd36f60,64,0xd32450,64,0x7ffca9c475e0,0xd3ba70,75) 969.47us
    CNR:OFF Dyn:1 FastMM:1 TID:0  NThr:1     (one line)

The GEMMs (`SGEMM` ... `ZGEMM`, `GEMM_BF16BF16F32`, `GEMM_S8U8S32` ...) are GemmCalls, every other call an Event;
the banner (`MKL_VERBOSE Intel(R) MKL 2020.0 ...`, `MKL_VERBOSE oneMKL 2022.0 ...`) and other lines are `info`
Events. MKL prints no wall-clock time: the call's duration as printed is kept in `timestamp` (not compared), so
that repeated calls are one distinct call. The duration is a `word` of the shape (see LogFormat.words): lines
that differ only in it share one template, made with the grammar once.
"""

from __future__ import annotations

import re
from typing import Any

from blaslog.formats._base import LeafTransformer, LogFormat, to_int, transpose
from blaslog.formats._switch import LogSwitch, per_level
from blaslog.records import Event, GemmCall

_PLAIN = ("transa", "transb", "m", "n", "k", "alpha", "a", "lda", "b", "ldb", "beta", "c", "ldc")
_INTEGER = ("transa", "transb", "offsetc", "m", "n", "k", "alpha", "a", "lda", "ao", "b", "ldb", "bo", "beta", "c",
            "ldc", "co")  # fmt: skip
_F32 = ("float",) * 3
_GEMMS: dict[str, tuple[tuple[str, ...], tuple[str, str, str]]] = {
    "SGEMM": (_PLAIN, _F32),
    "DGEMM": (_PLAIN, ("double",) * 3),
    "CGEMM": (_PLAIN, ("MKL_Complex8",) * 3),
    "ZGEMM": (_PLAIN, ("MKL_Complex16",) * 3),
    "CGEMM3M": (_PLAIN, ("MKL_Complex8",) * 3),
    "ZGEMM3M": (_PLAIN, ("MKL_Complex16",) * 3),
    "HGEMM": (_PLAIN, ("MKL_F16",) * 3),
    "GEMM_BF16BF16F32": (_PLAIN, ("MKL_BF16", "MKL_BF16", "float")),
    "GEMM_F16F16F32": (_PLAIN, ("MKL_F16", "MKL_F16", "float")),
    "GEMM_S8U8S32": (_INTEGER, ("MKL_INT8", "MKL_UINT8", "MKL_INT32")),
    "GEMM_S16S16S32": (_INTEGER, ("MKL_INT16", "MKL_INT16", "MKL_INT32")),
}
"""GEMM functions as MKL prints them (upper case): their argument order and the types of A, B and C (the compute
type is C's). Only SGEMM and DGEMM output was found in public logs; the others follow the documented
Fortran argument lists."""


class _Transformer(LeafTransformer):
    def start(self, children: list[Any]) -> Any:
        return ("call", children)

    def arg(self, children: list[Any]) -> Any:
        return ("arg", children[0] if children else "")

    def field(self, children: list[Any]) -> Any:
        return ("field", children[0])

    def note(self, children: list[Any]) -> Any:
        return ("note", children[0] if children else "")


class MklVerbose(LogFormat):
    """oneMKL verbose mode."""

    name = "mkl"
    library = "mkl"
    description = "oneMKL verbose lines (MKL_VERBOSE=1): one line per call, with its time"
    logging_hint = "MKL_VERBOSE=1"
    logging = LogSwitch(
        "mkl",
        (("MKL_VERBOSE_OUTPUT_FILE", "mkl"),),  # oneMKL 2023.2 and later; older ones write to stdout
        pid_names=False,
        levels=per_level(lambda _: {"MKL_VERBOSE": "1"}),
    )
    banner = r"MKL_VERBOSE (?:Intel\(R\) MKL|oneMKL) \d{4}"
    grammar = "mkl.lark"
    start = re.compile(r"MKL_VERBOSE\s")
    start_signs = ("MKL_VERBOSE",)
    boundary = rb"MKL_VERBOSE\s"
    fallback_rule = "note"
    transformer = _Transformer
    words = re.compile(r"[\s)\x00p]([0-9][0-9.]*(?:[eE][-+]?[0-9]+)?(?:ns|us|ms|s))(?=\s|$)")

    def whole(self, text: str) -> bool | None:
        """A call line ends with its `NThr:` field."""
        return True if "NThr:" in text else None

    def fallback(self, tree: Any, path: str, line: int, end_line: int) -> Event | None:
        text = self.transformer({}).transform(tree)[1]
        return Event(
            self.library, "MKL", "info", text=str(text), file=path, line=line, end_line=end_line, log_format=self.name
        )

    def build(self, generic: Any) -> tuple[type, dict[str, Any], tuple[str, ...]]:
        children = generic[1]
        function = str(children[0])
        args = [value for kind, value in (c for c in children if type(c) is tuple) if kind == "arg"]
        fields = [value for kind, value in (c for c in children if type(c) is tuple) if kind == "field"]
        duration = next(c for c in children[1:] if type(c) is not tuple)
        pairs = [(str(f).partition(":")[0], str(f).partition(":")[2]) for f in fields]
        thread = next((value for key, value in pairs if key == "TID"), None)
        extra = tuple((key, value) for key, value in pairs if key != "TID")
        common = {"library": self.library, "function": function, "thread": thread, "log_format": self.name}
        known = _GEMMS.get(function.upper())
        if known is None or len(args) != len(known[0]):
            return Event, {**common, "event": "call", "timestamp": duration, "fields": extra}, ()
        named = dict(zip(known[0], args, strict=True))
        a_type, b_type, c_type = known[1]
        out = {
            **common,
            "timestamp": duration,
            "transa": transpose(named["transa"], "transa"),
            "transb": transpose(named["transb"], "transb"),
            **{key: to_int(named[key], key) for key in ("m", "n", "k", "lda", "ldb", "ldc")},
            "a_type": a_type,
            "b_type": b_type,
            "c_type": c_type,
            "d_type": c_type,
            "compute_type": c_type,
            "a_ptr": named["a"],
            "b_ptr": named["b"],
            "c_ptr": named["c"],
            "pointers": (("alpha", named["alpha"]), ("beta", named["beta"])),
            "extra": extra,
        }
        return GemmCall, out, ()
