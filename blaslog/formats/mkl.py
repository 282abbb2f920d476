"""oneMKL verbose mode (MKL_VERBOSE=1), grammar ``grammars/mkl.lark``.

A call line names the function, its arguments, the time it took and `Key:value` fields::

    MKL_VERBOSE SGEMM(T,N,75,75,64,0x7ffca9c475d8,0xd36f60,64,0xd32450,64,0x7ffca9c475e0,0xd3ba70,75) 969.47us
    CNR:OFF Dyn:1 FastMM:1 TID:0  NThr:1     (one line)

A call of the DPC++ (SYCL) interface on a GPU names its namespace, passes the queue and the layout first and
prints scalars by value; it ends with the device instead of the CPU fields::

    MKL_VERBOSE oneapi::mkl::blas::dgemm(0x7fffe44a77d0,ColumnMajor,NonTranspose,NonTranspose,2400,600,1200,1,
    0x7fffe44a7710,2400,0x7fffe44a7780,1200,0,0x7fffe44a7750,2400,0,0,0) 0.00s GPU0     (one line)

The GEMMs (`SGEMM` ... `ZGEMM`, `GEMM_BF16BF16F32`, `GEMM_S8U8S32` ..., `oneapi::mkl::blas::dgemm`) are
GemmCalls, every other call (LAPACK, the other BLAS levels, FFT, SGEMM_BATCH, whose arguments are pointers to
the sizes and which MKL cuts short) a `call` Event; the banner (`MKL_VERBOSE Intel(R) MKL 2020.0 ...`,
`MKL_VERBOSE oneMKL 2022.0 ...`), `MKL_VERBOSE Detected GPU0 ...` and other lines are `info` Events. A GEMM
line the grammar rejects is reported (or kept as truncated where it is cut short), never passed over as info.
MKL writes each line whole with its line end: a last line without one was cut.

MKL prints no wall-clock time: the call's duration as printed is kept in `timestamp` (not compared), so that
repeated calls are one distinct call. The duration is a `word` of the shape (see LogFormat.words): lines that
differ only in it share one template, made with the grammar once.
"""

from __future__ import annotations

import re
from typing import Any

from blaslog.formats._base import LeafTransformer, LogFormat, RecordError, to_int, transpose
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
type is C's). SGEMM and DGEMM lines (and one DPC++ `dgemm`) were found in public logs (fixtures/real/mkl_*); the
others follow the documented Fortran argument lists."""

_DPCPP = ("queue", "transa", "transb", "m", "n", "k", "alpha", "a", "lda", "b", "ldb", "beta", "c", "ldc")
"""Arguments of a DPC++ GEMM (`oneapi::mkl::blas::dgemm`) as MKL prints them, with the layout after the queue
when the call names one (`ColumnMajor`); scalars by value. What follows `ldc` (`0,0,0`) is kept as `rest`."""
_LAYOUTS = {"ColumnMajor": None, "RowMajor": "RowMajor"}
_DPCPP_TRANSPOSES = {"NonTranspose": "N", "Transpose": "T", "ConjTranspose": "C"}

_CALL = re.compile(r"\s*([A-Za-z_][\w:]*)\((?!R\))")
"""A call line's function, after `MKL_VERBOSE` (the banner's `Intel(R)` is none)."""
_ENDS = re.compile(
    r"(?:\sNThr:[0-9]+(?:,\w+:[0-9]+)*(?:\s+WDiv:\S+)?|\sGPU[0-9]+|\sFastMM:[0-9]+|"
    r"(?:intel|gnu|tbb|pgi)_thread(?:\s+NMICDev:[0-9]+)?|\ssequential(?:\s+NMICDev:[0-9]+)?)\**\s*$"
)
"""What MKL writes last on a line: a call's thread count (NThr:, the domain counts after it, WDiv: on some
versions), its device (GPU0) or, with TBB threading, FastMM:; the banner's threading layer (NMICDev: on some)."""
_BANNER = re.compile(r"MKL_VERBOSE\s+(?:Intel\(R\) MKL|oneMKL|Intel\(R\) oneAPI)")


class _Transformer(LeafTransformer):
    def start(self, children: list[Any]) -> Any:
        return ("call", [c for c in children if not (isinstance(c, str) and c == "**")])

    def arg(self, children: list[Any]) -> Any:
        return ("arg", children[0] if children else "")

    def field(self, children: list[Any]) -> Any:
        return ("field", (str(children[0])[:-1], children[1] if len(children) > 1 else ""))

    def device(self, children: list[Any]) -> Any:
        return ("device", children[0])

    def note(self, children: list[Any]) -> Any:
        return ("note", children[0] if children else "")


def _gemm_like(function: str) -> bool:
    """Whether a function name is a GEMM's (`SGEMM`, `GEMM_S8U8S32`, `oneapi::mkl::blas::dgemm`, `SGEMM_BATCH`)."""
    return "GEMM" in function.rsplit("::", 1)[-1].upper()


_ELIDED = frozenset({"...", "…", "[...]", "[…]"})
"""What a person writes for arguments left out of a call they post (`DGEMM(N,N,4096,4096,4096,...)`)."""


def _elided(function: str, args: list[str]) -> dict[str, Any] | None:
    """A partial GEMM's fields (GemmCall keywords) of a Fortran GEMM call whose arguments a person cut short with
    `...`: the arguments before it, by position, the others named in `missing`; None for any other call, or one
    that shows too little (no m, n or k), all its arguments, or something no GEMM has there (a transpose `X`)."""
    fortran = _GEMMS.get(function.upper()) if "::" not in function else None
    cut = next((i for i, arg in enumerate(args) if arg in _ELIDED), None)
    if fortran is None or cut is None:
        return None
    names, (a_type, b_type, c_type) = fortran
    shown = dict(zip(names[:cut], args, strict=False))
    missing = [name for name in names if name not in shown]
    if not missing or not {"m", "n", "k"} & set(shown):
        return None
    try:
        out: dict[str, Any] = {
            "transa": transpose(shown["transa"], "transa") if "transa" in shown else "?",
            "transb": transpose(shown["transb"], "transb") if "transb" in shown else "?",
            **{key: to_int(shown[key], key) for key in ("m", "n", "k", "lda", "ldb", "ldc") if key in shown},
        }
    except RecordError:
        return None
    return {**out, "a_type": a_type, "b_type": b_type, "c_type": c_type, "d_type": c_type, "compute_type": c_type,
            "missing": ", ".join(missing)}  # fmt: skip


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
        settings=("MKL_",),  # MKL_CBWR (reproducible results), MKL_ENABLE_INSTRUCTIONS, MKL_NUM_THREADS
        objects=("libmkl_rt", "libmkl_core"),
        version=("oneMKL (log)", rb"MKL_VERBOSE (?:Intel\(R\) MKL|oneMKL) (\d{4}(?:\.\d+)?(?: Update \d+)?)"),
    )
    banner = r"MKL_VERBOSE (?:Intel\(R\) MKL|oneMKL) \d{4}"
    grammar = "mkl.lark"
    start = re.compile(r"MKL_VERBOSE\s")
    start_signs = ("MKL_VERBOSE",)
    boundary = rb"MKL_VERBOSE\s"
    fallback_rule = "note"
    transformer = _Transformer
    words = re.compile(r"[\s)\x00p*]([0-9][0-9.]*(?:[eE][-+]?[0-9]+)?(?:ns|us|ms|s))(?=\s|$|\*)")

    def whole(self, text: str) -> bool:
        """MKL writes each line whole, line end and all: a last line without its line end was cut (inside the
        thread count, say: `NThr:1` of `NThr:16`)."""
        return False

    def unfinished(self, lines: list[str]) -> bool:
        """A call line or the banner without what MKL writes last on it (the thread count, the device, the
        threading layer): its rest may follow on the next line, when the log was cut at a fixed width."""
        text = " ".join(lines)
        body = text[text.find("MKL_VERBOSE") :]
        if not (_CALL.match(body, len("MKL_VERBOSE")) or _BANNER.match(body)):
            return False
        return _ENDS.search(text) is None

    def cut_short(self, text: str) -> bool:
        """A call line without its time and fields (cut inside its arguments)."""
        return self.unfinished([text])

    def partial(self, text: str, path: str, line: int, end_line: int) -> GemmCall | None:
        """The partial GEMM of a Fortran GEMM call a person cut short with `...` (`DGEMM(N,N,4096,4096,4096,...)`):
        its arguments before the `...` by position, the others named missing (see :func:`_elided`)."""
        call = _CALL.match(text, text.find("MKL_VERBOSE") + len("MKL_VERBOSE"))
        if call is None:
            return None
        args = [arg.strip() for arg in text[call.end() :].split(")", 1)[0].split(",")]
        fields = _elided(call.group(1), args)
        if fields is None:
            return None
        return GemmCall(
            self.library, call.group(1), **fields, file=path, line=line, end_line=end_line, log_format=self.name
        )

    def truncated(self, text: str, path: str, line: int, end_line: int) -> Event:
        """The function of a cut call line, where its name is whole."""
        call = _CALL.match(text, text.find("MKL_VERBOSE") + len("MKL_VERBOSE"))
        return self._event(call.group(1) if call else "?", "truncated", text, path, line, end_line)

    def fallback(self, tree: Any, path: str, line: int, end_line: int) -> Event | None:
        """An `info` Event of a line that is no call (the banner, `Detected GPU0 ...`); a `call` Event of a
        call the grammar rejects (its arguments as text); None for a GEMM's, which is then reported."""
        text = str(self.transformer({}).transform(tree)[1])
        call = _CALL.match(text)
        if call is None:
            return self._event("MKL", "info", text, path, line, end_line)
        if _gemm_like(call.group(1)):
            return None
        return self._event(call.group(1), "call", text, path, line, end_line)

    def _event(self, function: str, event: str, text: str, path: str, line: int, end_line: int) -> Event:
        return Event(
            self.library, function, event, text=text, file=path, line=line, end_line=end_line, log_format=self.name
        )

    def build(self, generic: Any) -> tuple[type, dict[str, Any], tuple[str, ...]]:
        children = generic[1]
        function = str(children[0])
        tagged = [c for c in children if type(c) is tuple]
        args = [value for kind, value in tagged if kind == "arg"]
        fields = [value for kind, value in tagged if kind == "field"]
        devices = [("device", value) for kind, value in tagged if kind == "device"]
        duration = next(c for c in children[1:] if type(c) is not tuple)
        pairs = [(key, value) for key, value in fields]  # values passed on as they are (see grammars/mkl.lark)
        thread = next((value for key, value in pairs if key == "TID"), None)
        extra = (*((key, value) for key, value in pairs if key != "TID"), *devices)
        common = {"library": self.library, "function": function, "thread": thread, "log_format": self.name}
        known = self._gemm(function, args)
        if known is None:
            return Event, {**common, "event": "call", "timestamp": duration, "fields": extra}, ()
        named, (a_type, b_type, c_type), by_value, more = known
        scalars: dict[str, Any] = (
            {"alpha": named["alpha"], "beta": named["beta"]}
            if by_value
            else {"pointers": (("alpha", named["alpha"]), ("beta", named["beta"]))}
        )
        out = {
            **common,
            "timestamp": duration,
            "transa": transpose(_DPCPP_TRANSPOSES.get(named["transa"], named["transa"]), "transa"),
            "transb": transpose(_DPCPP_TRANSPOSES.get(named["transb"], named["transb"]), "transb"),
            **{key: to_int(named[key], key) for key in ("m", "n", "k", "lda", "ldb", "ldc")},
            "a_type": a_type,
            "b_type": b_type,
            "c_type": c_type,
            "d_type": c_type,
            "compute_type": c_type,
            "a_ptr": named["a"],
            "b_ptr": named["b"],
            "c_ptr": named["c"],
            **scalars,
            "extra": (*more, *extra),
        }
        return GemmCall, out, ()

    @staticmethod
    def _gemm(
        function: str, args: list[Any]
    ) -> tuple[dict[str, Any], tuple[str, str, str], bool, tuple[Any, ...]] | None:
        """A GEMM's arguments by name, its types, whether it prints alpha and beta by value (DPC++), and what
        else it prints (the layout, the DPC++ arguments after `ldc`); None for any other call. A GEMM printed with
        too few or too many arguments is reported (RecordError), not passed over as a call."""
        if "::" not in function:
            fortran = _GEMMS.get(function.upper())
            if fortran is None:
                return None
            if len(args) != len(fortran[0]):
                raise RecordError(
                    f"{function} with {len(args)} arguments; MKL prints {len(fortran[0])} ({','.join(fortran[0])})"
                )
            return dict(zip(fortran[0], args, strict=True)), fortran[1], False, ()
        known = _GEMMS.get(function.rsplit("::", 1)[-1].upper())
        if known is None or known[0] is not _PLAIN:
            return None
        layout = args[1] if len(args) > 1 and isinstance(args[1], str) and args[1] in _LAYOUTS else None
        given = [args[0], *args[2:]] if layout is not None else args
        if len(given) < len(_DPCPP):
            raise RecordError(
                f"{function} with {len(args)} arguments; MKL prints at least {len(_DPCPP)} ({','.join(_DPCPP)})"
            )
        named = dict(zip(_DPCPP, given, strict=False))
        more: list[tuple[str, Any]] = []
        if layout is not None and _LAYOUTS[layout] is not None:
            more.append(("layout", layout))
        if len(given) > len(_DPCPP):
            more.append(("rest", ",".join(str(value) for value in given[len(_DPCPP) :])))
        return named, known[1], True, tuple(more)
