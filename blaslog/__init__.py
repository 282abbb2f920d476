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

import typing

from blaslog import _exports, api

# `blaslog.parse` is this function, not the subpackage of that name: importing blaslog.api._parse imports the
# subpackage first (which makes it an attribute of this package), and this line binds the function over it, for
# good (a later `import blaslog.parse` finds the subpackage imported and binds nothing here)
from blaslog.api._parse import parse, parse_lines, parse_text

if typing.TYPE_CHECKING:
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
    from blaslog.records import Event, FileSummary, GemmCall, OnError, ParseResult, Problem, Severity
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
    "OnError",
    "ParseResult",
    "Problem",
    "RecordKind",
    "Report",
    "Severity",
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

if not typing.TYPE_CHECKING:  # (hidden from type checkers, which see the imports above instead)
    # each module imported when one of its names is first used (see blaslog._exports)
    __getattr__, __dir__ = _exports.exports(
        __name__,
        {
            "blaslog.caps": ("Caps", "load_caps"),
            "blaslog.errors": (
                "BlaslogError",
                "CapsError",
                "CublasStatusError",
                "FlagsError",
                "InputError",
                "LibraryLoadError",
                "LibraryNotFound",
                "LogParseError",
                "NativeError",
                "SymbolNotFound",
                "UnknownFormatError",
            ),
            "blaslog.flags": ("decode_flags", "encode_flags"),
            "blaslog.formats": ("FORMAT_NAMES",),
            "blaslog.frame": ("to_frame",),
            "blaslog.records": ("Event", "FileSummary", "GemmCall", "OnError", "ParseResult", "Problem", "Severity"),
            "blaslog.report": ("FailOn", "Finding", "FindingKind", "Level", "RecordKind", "Report"),
        },
    )
