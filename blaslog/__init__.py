"""blaslog: find the GEMM algorithm differences behind numerical mismatches.

The library API (the ``blaslog`` command is a thin client of it)::

    import blaslog
    result = blaslog.parse("run.log")                 # ParseResult: records + per-file accounting
    frame = blaslog.to_frame(result)                  # pandas DataFrame of the GEMM records
    diff = blaslog.diff_runs(sharded.gemms, unsharded.gemms, caps=blaslog.load_caps("caps.json"))
    blaslog.decode_flags(0x40202).summary             # 'tensor-core MMA (HMMA) with TF32 inputs ...'
"""

from __future__ import annotations

__version__ = "0.1.0"

from blaslog.caps import Caps, load_caps
from blaslog.check import batch_invariance, check_run
from blaslog.diff import DiffResult, TpInference, diff_runs
from blaslog.errors import (
    BlaslogError,
    CapsError,
    CublasStatusError,
    FlagsError,
    InputError,
    LibraryLoadError,
    LibraryNotFound,
    LogParseError,
    NativeError,
    SymbolNotFound,
    UnknownFormatError,
)
from blaslog.flags import decode_flags, encode_flags
from blaslog.formats import FORMAT_NAMES
from blaslog.formats._base import ShapedCall
from blaslog.frame import to_frame
from blaslog.api import parse
from blaslog.parse import iter_file, parse_file, parse_text
from blaslog.records import Event, FileSummary, GemmCall, ParseResult, Problem
from blaslog.summary import summarize

__all__ = [
    "FORMAT_NAMES",
    "BlaslogError",
    "Caps",
    "CapsError",
    "CublasStatusError",
    "DiffResult",
    "Event",
    "FileSummary",
    "FlagsError",
    "GemmCall",
    "InputError",
    "LibraryLoadError",
    "LibraryNotFound",
    "LogParseError",
    "NativeError",
    "ParseResult",
    "Problem",
    "ShapedCall",
    "SymbolNotFound",
    "TpInference",
    "UnknownFormatError",
    "__version__",
    "batch_invariance",
    "check_run",
    "decode_flags",
    "diff_runs",
    "encode_flags",
    "iter_file",
    "load_caps",
    "parse",
    "parse_file",
    "parse_text",
    "summarize",
    "to_frame",
]
