"""blaslog: find the GEMM algorithm differences behind numerical mismatches.

The library API; the ``blaslog`` command is a thin client of :mod:`blaslog.api`, so both give one answer::

    from blaslog import api
    report = api.diff("logs/tp4/", "logs/tp1.log", caps="caps.json")   # = blaslog diff logs/tp4/ logs/tp1.log
    for finding in report.findings:
        print(finding.cls, finding.title)
    report.exit_status()                                                 # what the command exits with

    import blaslog
    result = blaslog.parse("run.log")                  # ParseResult: every record + per-file accounting
    result = blaslog.parse_text(text)                  # the same of a log held in memory
    result = blaslog.parse_lines(process.stdout)       # ... or of an iterator of lines
    frame = blaslog.to_frame(result)                   # pandas DataFrame of the GEMM records
    blaslog.decode_flags(0x40202).summary              # 'tensor-core MMA (HMMA) with TF32 inputs ...'
"""

from __future__ import annotations

__version__ = "0.1.0"

from blaslog import api
from blaslog.api import parse, parse_lines, parse_text
from blaslog.caps import Caps, load_caps
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
from blaslog.frame import to_frame
from blaslog.records import Event, FileSummary, GemmCall, ParseResult, Problem
from blaslog.report import FailOn, Finding, FindingKind, Level, RecordKind, Report

__all__ = [
    "FORMAT_NAMES",
    "BlaslogError",
    "Caps",
    "CapsError",
    "CublasStatusError",
    "Event",
    "FailOn",
    "FileSummary",
    "Finding",
    "FindingKind",
    "FlagsError",
    "GemmCall",
    "InputError",
    "Level",
    "LibraryLoadError",
    "LibraryNotFound",
    "LogParseError",
    "NativeError",
    "ParseResult",
    "Problem",
    "RecordKind",
    "Report",
    "SymbolNotFound",
    "UnknownFormatError",
    "__version__",
    "api",
    "decode_flags",
    "encode_flags",
    "load_caps",
    "parse",
    "parse_lines",
    "parse_text",
    "to_frame",
]
