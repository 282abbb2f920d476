"""cuBLASLt logger lines (CUBLASLT_LOG_LEVEL 1-5, CUBLASLT_LOG_MASK), grammar ``grammars/cublaslt.lark``.

The ``[Trace]`` line of a matmul (``cublasLtMatmul`` or an internal name such
as ``cublasLtSSSMatmul`` when cuBLAS routes through Lt) is the executed GEMM;
every other line (``[Api]`` calls, ``[Info]``, ``[Error]``, hints) is an Event.
"""

from __future__ import annotations

import re

from blaslog.formats._logger import MATMUL_KEYS, LoggerFormat


class CublasLt(LoggerFormat):
    """cuBLASLt logger."""

    name = "cublaslt"
    library = "cublasLt"
    description = "cuBLASLt logger lines (CUBLASLT_LOG_LEVEL=1..5 / CUBLASLT_LOG_MASK), any level"
    logging_hint = "CUBLASLT_LOG_LEVEL=2 or higher"
    grammar = "cublaslt.lark"
    # A line may begin with other text (program output without a newline); the record starts at its prefix.
    start = re.compile(r"(?:\[\d{4}-\d\d-\d\d[ T][\d:.]+\])?\[cublasLt\]\[\d+\]\[")
    boundary = rb"\[\d{4}-\d\d-\d\d[ T][\d:.]+\]\[cublasLt\]\[\d+\]\["
    near_miss = r"\[cublasLt\]"
    known_keys = MATMUL_KEYS | {"algo", "outOfPlace", "preference", "operationDesc", "lightHandle", "result"}
