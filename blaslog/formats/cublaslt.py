"""cuBLASLt logger lines (CUBLASLT_LOG_LEVEL 1-5, CUBLASLT_LOG_MASK), grammar ``grammars/cublaslt.lark``.

The ``[Trace]`` line of a matmul (``cublasLtMatmul`` or an internal name such
as ``cublasLtSSSMatmul`` when cuBLAS routes through Lt) is the executed GEMM;
every other line (``[Api]`` calls, ``[Info]``, ``[Error]``, hints) is an Event.

A line quoted with its prefix cut down by a person (``[...][Error][...] msg``,
``CUBLASLT_LOG_LEVEL=4 ... [Error][cublasLtMatmulAlgoGetHeuristic] msg``,
``[Info][cublasLtCreate] ...``) is a record of its level too, with no time
stamp or thread: the function must be a cuBLASLt one (``cublasLt...``) unless
the prefix is elided as ``[...]``, so hipBLASLt's ``[Info][initialize]`` is
not taken for cuBLASLt.
"""

from __future__ import annotations

import re

from blaslog.formats._logger import MATMUL_KEYS, LoggerFormat
from blaslog.formats._switch import LogSwitch, per_level

_LEVEL = r"\[(?:Api|Info|Trace|Hints?|Error|Debug|Warn(?:ing)?)\]"
_ELIDED = r"\[(?:\.\.\.|…)\]"
_TRACE_MATMUL = re.compile(r"\[Trace\]\[\w*[Mm]atmul\]")
_STREAM = re.compile(r"\bstream=0[xX][0-9a-fA-F]+(?:\s|$)")


class CublasLt(LoggerFormat):
    """cuBLASLt logger."""

    name = "cublaslt"
    sniff_rank = 10
    logging = LogSwitch(
        "cublaslt",
        (("CUBLASLT_LOG_FILE", "cublaslt"),),
        pid_names=True,
        levels=per_level(lambda level: {"CUBLASLT_LOG_LEVEL": str(level)}),
        cleared=("CUBLASLT_LOG_MASK",),
        default=True,
        settings=("CUBLASLT_",),
        objects=("libcublasLt",),
        version=("cuBLASLt (log)", rb"cuBLASLt v(\d+(?:\.\d+)+)"),
    )
    function_family = (r"(?s).*", "cublasLtMatmul")  # `cublasLtSSSMatmul` ... (cuBLAS routed through Lt) too
    library = "cublasLt"
    description = "cuBLASLt logger lines (CUBLASLT_LOG_LEVEL=1..5 / CUBLASLT_LOG_MASK), any level"
    logging_hint = "CUBLASLT_LOG_LEVEL=2 or higher"
    # `[Api][cublasLtCreate] lightHandle=...` and `[Info][cublasLtCreate] cuBLASLt v12.4 device #0: ...`
    banner = r"\]\[cublasLtCreate\]|cuBLASLt v\d+\.\d+ device #"
    grammar = "cublaslt.lark"
    # A line may begin with other text (program output without a newline); the record starts at its prefix.
    start = re.compile(
        r"(?:\[\d{4}-\d\d-\d\d[ T][\d:.]+\])?\[cublasLt\]\[\d+\]\["
        rf"|(?:{_ELIDED})?{_LEVEL}\[cublasLt\w*\]|{_ELIDED}{_LEVEL}{_ELIDED}"
    )
    start_signs = ("[cublasLt", "[...][", "[…][")  # the logger's name, or a level after an elided part
    boundary = rb"\[\d{4}-\d\d-\d\d[ T][\d:.]+\]\[cublasLt\]\[\d+\]\["
    near_miss = r"\[cublasLt\]"
    known_keys = MATMUL_KEYS | {"algo", "outOfPlace", "preference", "operationDesc", "lightHandle", "result"}

    def interleaved(self, lines: list[str]) -> bool:
        """Besides an open group: a matmul `[Trace]` record is open until its last key, `stream=`, has come."""
        return super().interleaved(lines) or (
            _TRACE_MATMUL.search(lines[0]) is not None and not any("stream=" in text for text in lines)
        )

    def whole(self, text: str) -> bool:
        """A matmul `[Trace]` line ends with `stream=` (keys a later version adds may follow): one without it at
        the very end of the input was cut."""
        return _TRACE_MATMUL.search(text) is None or _STREAM.search(text) is not None
