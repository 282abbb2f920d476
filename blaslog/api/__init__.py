"""The library layer: one function per command, inputs in, a Report out.

The ``blaslog`` command is a thin client of this module: it turns options into one call here, hands the
Report to a reporter and turns it into an exit status. Policy is decided here and nowhere else: which files
a run is made of and which rank wrote each (:mod:`blaslog.ranks`), which dialect of a doubly logged call is
kept, which file is the reference of a diff, how much of a diff must be paired. So the Python API and the
command give the same answers::

    from blaslog import api
    report = api.diff("logs/tp4/", "logs/tp1.log")       # what `blaslog diff logs/tp4/ logs/tp1.log` prints
    report.findings, report.exit_status()

Three entry points parse logs into a :class:`~blaslog.records.ParseResult`: :func:`parse` (paths: files,
quoted globs, folders, `-`), :func:`parse_text` (a text in memory) and :func:`parse_lines` (an iterator of
lines). The other functions are one per command (:func:`summary`, :func:`check`, :func:`diff` ...) or read
run folders. The modules under this package (``blaslog.api._*``) are internal.
"""

from __future__ import annotations

import typing

from blaslog import _exports

if typing.TYPE_CHECKING:
    from blaslog.api._check import check, check_tunableop, summary
    from blaslog.api._diff import Coverage, diff, diff_command, diff_many, split_diff_arguments, tunableop_pins
    from blaslog.api._emulate import emulate_command, emulate_gemm
    from blaslog.api._inputs import MIN_COVERAGE, CapsLike, Inputs, Options, Paths, Progress, Run, read_run_files
    from blaslog.api._parse import parse, parse_lines, parse_text
    from blaslog.api._probe import caps_from_probe, probe, probe_configs, probe_document
    from blaslog.api._settings import (
        SETTINGS_SECTION,
        add_settings,
        folder_caps,
        run_manifest,
        run_settings,
        settings_diff,
    )

__all__ = [
    "MIN_COVERAGE",
    "SETTINGS_SECTION",
    "CapsLike",
    "Coverage",
    "Inputs",
    "Options",
    "Paths",
    "Progress",
    "Run",
    "add_settings",
    "caps_from_probe",
    "check",
    "check_tunableop",
    "diff",
    "diff_command",
    "diff_many",
    "emulate_command",
    "emulate_gemm",
    "folder_caps",
    "parse",
    "parse_lines",
    "parse_text",
    "probe",
    "probe_configs",
    "probe_document",
    "read_run_files",
    "run_manifest",
    "run_settings",
    "settings_diff",
    "split_diff_arguments",
    "summary",
    "tunableop_pins",
]

if not typing.TYPE_CHECKING:  # (hidden from type checkers, which see the imports above instead)
    # each module imported when one of its names is first used: a command imports what it needs, no more
    __getattr__, __dir__ = _exports.exports(
        __name__,
        {
            "blaslog.api._check": ("check", "check_tunableop", "summary"),
            "blaslog.api._diff": (
                "Coverage",
                "diff",
                "diff_command",
                "diff_many",
                "split_diff_arguments",
                "tunableop_pins",
            ),
            "blaslog.api._emulate": ("emulate_command", "emulate_gemm"),
            "blaslog.api._inputs": (
                "MIN_COVERAGE",
                "CapsLike",
                "Inputs",
                "Options",
                "Paths",
                "Progress",
                "Run",
                "read_run_files",
            ),
            "blaslog.api._parse": ("parse", "parse_lines", "parse_text"),
            "blaslog.api._probe": ("caps_from_probe", "probe", "probe_configs", "probe_document"),
            "blaslog.api._settings": (
                "SETTINGS_SECTION",
                "add_settings",
                "folder_caps",
                "run_manifest",
                "run_settings",
                "settings_diff",
            ),
        },
    )
