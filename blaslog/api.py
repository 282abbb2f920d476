"""The library layer: one function per command, inputs in, a Report out.

The ``blaslog`` command is a thin client of this module: it turns options into one call here, hands the
Report to a reporter and turns it into an exit status. Policy is decided here and nowhere else: which files
a run is made of and which rank wrote each (:mod:`blaslog.ranks`), which dialect of a doubly logged call is
kept, which file is the reference of a diff, how much of a diff must be paired. So the Python API and the
command give the same answers::

    from blaslog import api
    report = api.diff("logs/tp4/", "logs/tp1.log")       # what `blaslog diff logs/tp4/ logs/tp1.log` prints
    report.findings, report.exit_status()
"""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeAlias

from blaslog._fast.cache import SharedShapes
from blaslog.caps import Caps, entry_key, load_caps
from blaslog.diff import DiffResult, diff_runs
from blaslog.errors import InputError
from blaslog.formats import Sniffer, logging_hints
from blaslog.inputs import ENDS_EARLY, Reader, is_stream_error
from blaslog.parse import OnError, iter_file, parse_file
from blaslog.ranks import HEAD, RankedInput, assign_ranks, compact_ranks, find_inputs, read_manifest
from blaslog.records import PARTIAL, TRUNCATED, FileSummary, GemmCall, ParseResult, Record
from blaslog.report import Finding, Location, Report
from blaslog.runs import CompactRun, duplicate_dialects, read_run

if TYPE_CHECKING:
    from blaslog.emulate.predict import Settings as EmulateSettings

Paths: TypeAlias = "str | os.PathLike[str] | Sequence[str | os.PathLike[str]]"
"""Inputs as the API takes them: one path (a str or a PathLike is one path, never a sequence of names) or a
sequence of them; each a file, a quoted glob, a folder or `-`."""
CapsLike: TypeAlias = "Caps | str | os.PathLike[str]"
"""Caps, or the path of a caps file."""

#: An input this large (bytes) is read with one process per CPU when --jobs is 0 (automatic).
PARALLEL_MIN = 64 << 20

MIN_COVERAGE = 0.5
"""Default share of the sharded GEMM calls a diff must pair; below it the diff reports an `input` finding."""

Progress = Callable[[str, int], Any]
"""A factory of progress displays: ``progress(name, size)`` gives None or an object called as
``display(bytes_done, gemms)`` while the input is read and closed with ``display.close()``."""


@dataclass(slots=True)
class Options:
    """How inputs are read (the options every reading command shares)."""

    log_format: tuple[str, ...] = ()
    """Read only these dialects (all when empty)."""
    strict: bool = False
    """Stop at the first unparsable line (LogParseError) instead of reporting it and going on."""
    jobs: int = 0
    """Processes to parse with; 0 = one per CPU (at most 8) for inputs over 64 MB, else 1."""
    rank_from: str | None = None
    """A regular expression whose first group in a file's path is its rank (see :mod:`blaslog.ranks`)."""
    progress: Progress | None = None
    """Progress displays for large inputs (the CLI's on a terminal), or None."""
    scheduler: str | None = None
    """A Dask scheduler's address (or `local`: a LocalCluster of `jobs` processes) whose workers read the inputs
    (see :mod:`blaslog.cluster`; inputs may be fsspec URLs then); None reads them here."""
    rank_option: bool = False
    """Whether the command takes `--rank-from` (`diff` does): only then do notes suggest it."""

    @property
    def on_error(self) -> OnError:
        """The parser's error policy."""
        return "raise" if self.strict else "warn"

    @property
    def formats(self) -> list[str] | None:
        """`log_format` as the parser takes it."""
        return list(self.log_format) or None


@dataclass(slots=True)
class Run:
    """The GEMM calls of one input file, compactly stored, with its rank and its accounting."""

    input: RankedInput
    """The file and its rank."""
    calls: CompactRun
    """Its GEMM calls (one dialect per call: see :func:`read_run_files`)."""
    summary: FileSummary
    """Every line of it accounted for."""


@dataclass(slots=True)
class Inputs:
    """The runs read from some command-line inputs, and what went wrong reading them."""

    runs: list[Run] = field(default_factory=list)
    """One per readable file, in natural name order."""
    failed: list[str] = field(default_factory=list)
    """`file: why` for each input that could not be read at all."""
    notes: list[str] = field(default_factory=list)
    """What a person should know about how the inputs were read (ranks guessed, dialects left out)."""

    @property
    def files(self) -> list[FileSummary]:
        """The accounting of each run."""
        return [run.summary for run in self.runs]

    def occurrences(self) -> list[Any]:
        """Every GEMM call of every run, in order (Occurrence objects, which read like GemmCall)."""
        return [call for run in self.runs for call in run.calls]


# ---- reading ---------------------------------------------------------------------------------------------------


def looks_like_log(path: str, sniffer: Sniffer | None = None) -> bool:
    """True when the first lines of `path` hold a line a BLAS dialect begins a record with (or nearly)."""
    head = _head(path)
    if not head:
        return False
    sniffer = sniffer or Sniffer()
    text = head.decode("utf-8", "replace")
    return any(sniffer.sniff(line) is not None or sniffer.near_miss(line) for line in text.splitlines())


def _head(path: str) -> bytes:
    """The first HEAD bytes of a regular file (decompressed), b"" for anything else or on error."""
    if path == "-" or not os.path.isfile(path):
        return b""
    try:
        stream, closers = Reader(path)._open()
        try:
            return bytes(stream.read(HEAD))
        finally:
            for closer in closers:
                closer.close()
    except Exception as exc:  # a damaged compressed stream raises its library's own error (zlib, lzma, zstd)
        if isinstance(exc, (OSError, EOFError, InputError, ValueError)) or is_stream_error(exc):
            return b""
        raise


def _openable(files: Sequence[str], strict: bool) -> tuple[list[str], list[str]]:
    """The files that can be opened, and `file: why` for the others (InputError at once when `strict`)."""
    good, failed = [], []
    for name in files:
        problem = _cannot_open(name)
        if problem is None:
            good.append(name)
        elif strict:
            raise InputError(problem)
        else:
            failed.append(problem)
    return good, failed


def _cannot_open(name: str) -> str | None:
    """Why `name` cannot be read, or None. Only a regular file is tried here: a pipe, FIFO, `<(cmd)` or
    /dev/stdin can be read once only, so it is opened once, by the parser, and its errors are reported then."""
    if name == "-":
        return "-: standard input is closed; pipe a log into blaslog or name a file" if sys.stdin is None else None
    if "://" in name:
        return None  # a URL (--scheduler): the worker that reads it says what is wrong
    try:
        if not stat.S_ISREG(os.stat(name).st_mode) and not os.path.isdir(name):
            return None
    except OSError:
        pass  # opening it says what is wrong
    try:
        for closer in Reader(name)._open()[1]:
            closer.close()
    except InputError as exc:
        return str(exc)
    return None


def jobs_for(jobs: int, names: Sequence[str]) -> int:
    """Processes to read `names` with: `jobs`, or when 0 one per CPU (at most 8) for inputs over 64 MB."""
    if jobs:
        return jobs
    size = sum(os.path.getsize(n) for n in names if n != "-" and os.path.isfile(n))
    return min(os.cpu_count() or 1, 8) if size >= PARALLEL_MIN else 1


def read_run_files(names: Paths, options: Options | None = None) -> Inputs:
    """Read inputs (files, quoted globs, folders, `-`) into runs of GEMM calls, each file with its rank.

    When a file logs the same calls in two dialects (ROCBLAS_LAYER=3 writes a trace and a bench line per call;
    hipBLASLt a [Trace] and a bench line per launch), one of them is kept, so that each call counts once.
    """
    names = _names(names)
    options = options or Options()
    files = _find_inputs(names, options)
    if not files:
        raise InputError("no input given")
    good, failed = _openable(files, options.strict)
    inputs = Inputs(failed=failed)
    if not good:
        return inputs
    read = None
    if options.scheduler and "-" not in good:  # the cluster's workers read the inputs (and their heads)
        from blaslog.cluster import read_runs

        read = read_runs(
            good,
            scheduler=options.scheduler,
            log_format=options.formats,
            on_error=options.on_error,
            workers=options.jobs,
        )
        if read.failed and options.strict:
            raise InputError(read.failed[0])
        inputs.failed.extend(read.failed)
        good = read.names
        if not good:
            return inputs
    ranked = assign_ranks(good, read.heads if read else [_head(name) for name in good], options.rank_from)
    if any(r.how == "name order (guessed)" for r in ranked):
        inputs.notes.append(
            "ranks guessed from the order of the file names ("
            + ", ".join(f"{r.path} = rank {r.rank}" for r in ranked[:8])
            + (", ..." if len(ranked) > 8 else "")
            + "); name the files by rank (rank3.log, rank_3/)"
            + (" or give --rank-from REGEX" if options.rank_option else "")
        )
    processes = jobs_for(options.jobs, good) if read is None else 0
    if read is not None:
        pairs = read.pairs
    elif processes > 1 and "-" not in good:
        from blaslog._parallel import read_runs_parallel

        pairs = read_runs_parallel(good, log_format=options.formats, on_error=options.on_error, jobs=processes)
    else:
        shapes = SharedShapes()  # the shapes the first file learns serve the next (per-rank logs say the same)
        pairs = [_read_one(name, options, shapes) for name in good]
    for rank, (calls, summary) in zip(ranked, pairs, strict=True):
        inputs.runs.append(Run(rank, calls, summary))
    for run in inputs.runs:
        partial = sum(PARTIAL in p.message for p in run.summary.problems)
        if partial and len(run.calls):
            inputs.notes.append(
                f"{run.summary.path}: {partial} partial GEMM record(s) (fields a person edited out) left out of the "
                "analysis; `blaslog parse` lists them"
            )
        if run.calls.overflow:
            inputs.notes.append(
                f"{run.summary.path}: more than {run.calls.max_distinct:,} distinct GEMM calls: the "
                f"first {run.calls.max_distinct:,} are kept, {run.calls.overflow:,} calls of further "
                "distinct calls are counted only (in bounded memory)"
            )
    drop, notes = duplicate_dialects(call for run in inputs.runs for call in run.calls.calls)
    inputs.notes.extend(notes)
    for run in inputs.runs:
        if run.summary.path in drop:
            run.calls = run.calls.without(drop[run.summary.path])
    return inputs


def _log_test() -> Callable[[str], bool]:
    """`looks_like_log` with one Sniffer for a whole folder search (not one compiled per file), made only when a
    folder is searched."""
    made: list[Sniffer] = []

    def test(path: str) -> bool:
        if not made:
            made.append(Sniffer())
        return looks_like_log(path, made[0])

    return test


def _find_inputs(names: Sequence[str], options: Options) -> list[str]:
    """The files `names` stand for (with a scheduler, URLs too)."""
    if options.scheduler:
        from blaslog.cluster import find_names

        return find_names(names, looks_like_log=_log_test())
    return find_inputs(names, looks_like_log=_log_test())


def _read_one(name: str, options: Options, shapes: SharedShapes) -> tuple[CompactRun, FileSummary]:
    size = os.path.getsize(name) if name != "-" and os.path.isfile(name) else 0
    display = options.progress(name, size) if options.progress is not None else None
    try:
        return read_run(name, log_format=options.formats, on_error=options.on_error, progress=display, shapes=shapes)
    finally:
        if display is not None:
            display.close()


def holds_nothing(summaries: Sequence[FileSummary]) -> bool:
    """True when inputs were read and not one record was found in them."""
    return bool(summaries) and all(s.gemm_records + s.other_records == 0 for s in summaries)


def nothing_found(what: str = "BLAS log records", files: Sequence[FileSummary] = ()) -> str:
    """The message for inputs that hold nothing to report, naming each input and what it held: a compressed
    input that ends early, BLAS log output that did not parse, records that were all cut short or partly edited
    out (file, line and reason), or nothing of a BLAS library (logging was off)."""
    cut = cut_short(files)
    if cut:
        return f"{cut[0]}; no {what.removesuffix('s')} could be read before that point"
    errors = [p for summary in files for p in summary.problems if p.severity == "error"]
    unparsable = sum(summary.unparsable_lines for summary in files)
    if errors and unparsable:
        first = errors[0]
        return (
            f"no {what} could be read: {unparsable} unparsable line(s) (first: {first.path}:{first.line}:"
            f"{first.column}: {first.message})"
        )
    unusable = [p for summary in files for p in summary.problems if TRUNCATED in p.message or PARTIAL in p.message]
    if unusable:
        cut_count = sum(TRUNCATED in p.message for p in unusable)
        kinds = (["cut short"] if cut_count else []) + (["partly edited out"] if len(unusable) > cut_count else [])
        shown = "; ".join(f"{p.path}:{p.line}: {p.message}" for p in unusable[:3])
        more = f"; and {len(unusable) - 3} more" if len(unusable) > 3 else ""
        return (
            f"no usable {what} in {_names_of(files)}: {len(unusable)} record(s) found, each {' or '.join(kinds)} "
            f"({shown}{more})"
        )
    held = ", ".join(f"{summary.path} ({_held(summary)})" for summary in files[:4])
    more = f" and {len(files) - 4} more inputs" if len(files) > 4 else ""
    return (
        f"no {what} found in {held or 'the input'}{more}; was logging on? ({'; '.join(logging_hints())}); "
        f"blaslog reads those libraries' logs, {TUNING_INPUTS}"
    )


TUNING_INPUTS = (
    "PyTorch TunableOp results files (tunableop_results0.csv, tunableop_untuned0.csv) and hipBLASLt tuning files "
    "(HIPBLASLT_TUNING_FILE)"
)
"""The inputs besides logs that blaslog reads, as messages name them."""


def _names_of(files: Sequence[FileSummary]) -> str:
    names = [summary.path for summary in files]
    return ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")


def _held(summary: FileSummary) -> str:
    """What an input without a usable record held."""
    if summary.lines == 0:
        return "empty"
    if summary.other_records:
        formats = ", ".join(f"{name}={count}" for name, count in sorted(summary.formats.items()))
        return f"{summary.lines} lines: {summary.other_records} records of no GEMM ({formats})"
    return f"{summary.lines} lines, none of a BLAS library"


def _read_for_report(names: Sequence[str], options: Options | None, what: str = "GEMM records") -> Inputs:
    """Read inputs for a report; InputError when none could be read or none holds a GEMM."""
    inputs = read_run_files(names, options)
    if not inputs.runs:
        raise InputError("; ".join(inputs.failed) or "no input could be read")
    if not any(len(run.calls) for run in inputs.runs):
        raise InputError(nothing_found(what, inputs.files))
    return inputs


def _load(caps: CapsLike | None) -> Caps | None:
    return load_caps(os.fspath(caps)) if isinstance(caps, (str, os.PathLike)) else caps


# ---- the commands ----------------------------------------------------------------------------------------------


def parse(
    names: Paths,
    *,
    log_format: Iterable[str] | str | None = None,
    on_error: OnError = "warn",
    jobs: int = 1,
    events: bool = True,
) -> ParseResult:
    """Parse inputs (files, quoted globs, folders, `-`) into one ParseResult, inputs in natural order.

    With `jobs` > 1 several files are parsed in parallel processes. Every record is kept (both dialects of a
    doubly logged call, too); :func:`summary`, :func:`check` and :func:`diff` count each call once.
    """
    names = _names(names)
    files = find_inputs(names, looks_like_log=_log_test())
    if not files:
        raise InputError("no input given")
    formats = [log_format] if isinstance(log_format, str) else list(log_format or []) or None
    if jobs > 1 and len(files) > 1 and "-" not in files:
        from blaslog._parallel import parse_parallel

        results = parse_parallel(files, log_format=formats, on_error=on_error, jobs=jobs, events=events)
    else:
        results = [parse_file(name, log_format=formats, on_error=on_error, events=events) for name in files]
    return ParseResult(
        tuple(r for result in results for r in result.records),
        tuple(s for result in results for s in result.files),
    )


def records(
    names: Paths,
    *,
    kind: str = "gemm",
    options: Options | None = None,
    summaries: list[FileSummary] | None = None,
    lazy: bool = False,
    shapes: SharedShapes | None = None,
) -> Iterator[Any]:
    """Stream the records of inputs (GEMMs, or every record with `kind="all"`); each input's FileSummary is
    appended to `summaries` once it is read. With `lazy`, records of a known line or call shape come unbuilt
    (``.record()`` builds one; see :func:`blaslog.parse.iter_file` and :mod:`blaslog.stream`). The line shapes
    the first input teaches serve the next (and those inputs read before with the same `shapes`)."""
    names = _names(names)
    options = options or Options()
    if options.scheduler and "-" not in names:
        from blaslog import cluster

        yield from cluster.records(
            names,
            scheduler=options.scheduler,
            kind=kind,
            log_format=options.formats,
            on_error=options.on_error,
            workers=options.jobs,
            summaries=summaries if summaries is not None else [],
        )
        return
    shapes = shapes if shapes is not None else SharedShapes()
    for name in names:
        size = os.path.getsize(name) if name != "-" and os.path.isfile(name) else 0
        display = options.progress(name, size) if options.progress is not None else None
        try:
            yield from iter_file(
                name,
                log_format=options.formats,
                on_error=options.on_error,
                summary_out=summaries,
                events=kind == "all",
                progress=display,
                lazy=lazy,
                shapes=shapes,
            )
        finally:
            if display is not None:
                display.close()


def parse_inputs(names: Paths, options: Options | None = None) -> tuple[list[str], list[str]]:
    """The files `names` stand for that can be opened, and `file: why` for those that cannot."""
    names = _names(names)
    options = options or Options()
    files = _find_inputs(names, options)
    if not files:
        raise InputError("no input given")
    return _openable(files, options.strict)


def parse_report(
    names: Paths, *, kind: str = "gemm", caps: CapsLike | None = None, options: Options | None = None
) -> Report:
    """What `blaslog parse` prints: every GEMM record (every record with `kind="all"`) of the inputs."""
    names = _names(names)
    from blaslog.views import parse_report as build

    options = options or Options()
    good, failed = parse_inputs(names, options)
    if not good:
        raise InputError("; ".join(failed))
    summaries: list[FileSummary] = []
    found: list[Record] = list(records(good, kind=kind, options=options, summaries=summaries))
    if holds_nothing(summaries):
        raise InputError(nothing_found(files=summaries))
    loaded, caps_notes = _caps_for(caps, names)
    report = build(ParseResult(tuple(found), tuple(summaries)), kind=kind, caps=loaded)
    report.fail_on = "never"
    report.failed = failed + cut_short(summaries)
    report.notes.extend(caps_notes)
    return report


def cut_short(files: Sequence[FileSummary]) -> list[str]:
    """`file: why` for each input whose stream ended early (a damaged or cut compressed file): what followed is
    lost, so a command without findings (parse, summary) fails as for an input not read."""
    return [f"{s.path}: {p.message}" for s in files for p in s.problems if p.message.startswith(ENDS_EARLY)]


def summary(names: Paths, *, caps: CapsLike | None = None, options: Options | None = None) -> Report:
    """What `blaslog summary` prints: distinct GEMM signatures with call counts, threads and algorithms."""
    names = _names(names)
    from blaslog.views import summary_report

    inputs = _read_for_report(names, options)
    loaded, caps_notes = _caps_for(caps, names)
    report = summary_report(None, inputs.files, caps=loaded, runs=[run.calls for run in inputs.runs])
    report.fail_on = "never"  # a summary reports; it does not judge
    report.notes.extend(caps_notes)
    report = _finish(report, inputs)
    report.failed += cut_short(inputs.files)
    return report


def check(
    names: Paths,
    *,
    caps: CapsLike | None = None,
    batch: bool = False,
    options: Options | None = None,
    fail_on: str = "precision",
    emulate: EmulateSettings | None = None,
) -> Report:
    """What `blaslog check` prints: GEMMs inside one run that ran with different algorithms, flags or solutions
    (each file on its own); with `batch`, also the algorithm ranges along the dimension that varies; with
    `emulate`, each finding that changes the arithmetic carries the emulation's prediction."""
    names = _names(names)
    loaded = _caps_for(caps, names)[0] if emulate is not None else None
    gpus = _emulation_gpus(emulate, loaded, names, names)
    report = _check(_read_for_report(names, options), names, caps=caps, batch=batch, fail_on=fail_on)
    return _emulated(report, emulate, loaded, gpus)


def _check(inputs: Inputs, names: Sequence[str], *, caps: CapsLike | None, batch: bool, fail_on: str) -> Report:
    """`check` of inputs read already."""
    from blaslog.views import check_report

    loaded, caps_notes = _caps_for(caps, names)
    report = check_report(inputs.occurrences(), inputs.files, caps=loaded, batch=batch)
    report.fail_on = fail_on
    report.notes.extend(caps_notes)
    _overflow_findings(report, inputs.runs, "checked")
    return _finish(report, inputs)


def _overflow_findings(report: Report, runs: Sequence[Run], what: str) -> None:
    """An `input` finding for each run that kept only its first MAX_DISTINCT distinct calls: the calls of the
    others were counted but not `what` (checked, compared)."""
    from blaslog.report import sort_findings

    extra = []
    for run in runs:
        calls = run.calls
        if not calls.overflow:
            continue
        extra.append(
            Finding(
                kind="too_many_distinct_calls",
                cls="input",
                title=f"{calls.overflow:,} GEMM calls of {run.summary.path} were not {what}",
                explanation=(
                    f"{run.summary.path} holds more than {calls.max_distinct:,} distinct GEMM calls (a training "
                    f"log repeats a few hundred); blaslog keeps the first {calls.max_distinct:,} to stay in "
                    f"bounded memory, so the {calls.overflow:,} calls of the others were counted but not {what}. "
                    "Split the log (per rank, per step range) to look at all of them."
                ),
                location=Location(run.summary.path, 1),
                key=f"overflow|{run.summary.path}",
            )
        )
    if extra:
        report.findings = sort_findings(report.findings + extra)


def _finish(report: Report, inputs: Inputs) -> Report:
    """The inputs' errors and notes, and each file's rank and how it was known, into the report."""
    report.failed = list(inputs.failed)
    report.notes[:0] = inputs.notes
    report.document["ranks"] = _rank_rows(inputs.runs)
    return report


def _rank_rows(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """Each file's rank and how it was known, as every report states them."""
    return [{"file": run.input.path, "rank": run.input.rank, "how": run.input.how} for run in runs]


# ---- diff ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Coverage:
    """How much of one compared file was paired."""

    side: str
    """`sharded` or `unsharded`."""
    file: str
    """The file."""
    rank: int | None
    """Its rank (sharded side)."""
    paired: int
    """GEMM calls paired with a call of the other side."""
    unmatched: int
    """GEMM calls left without a counterpart."""

    @property
    def share(self) -> float:
        """paired / all."""
        total = self.paired + self.unmatched
        return self.paired / total if total else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "side": self.side,
            "file": self.file,
            "rank": self.rank,
            "paired": self.paired,
            "unmatched": self.unmatched,
            "coverage": round(self.share, 4),
        }


def diff(
    sharded: Paths,
    unsharded: Paths,
    *,
    tp: int | None = None,
    rank: int | None = None,
    caps: CapsLike | None = None,
    min_coverage: float = MIN_COVERAGE,
    options: Options | None = None,
    fail_on: str = "precision",
    emulate: EmulateSettings | None = None,
) -> Report:
    """What `blaslog diff SHARDED UNSHARDED` prints: each sharded rank's GEMMs paired with the unsharded run's.

    `sharded` and `unsharded` are each a file, a quoted glob, a folder or a list of them. The unsharded run's
    rank 0 (its first file) is the reference. `rank` keeps one sharded rank. A diff that pairs nothing raises
    InputError saying why it thinks so; one that pairs less than `min_coverage` of a sharded file's calls
    reports an `input` finding.
    """
    sharded = _names(sharded)
    unsharded = _names(unsharded)
    loaded, caps_notes = _caps_for(caps, _names(sharded), _names(unsharded))
    gpus = _emulation_gpus(emulate, loaded, _names(sharded), _names(unsharded))
    report = _diff(
        sharded,
        unsharded,
        tp=tp,
        rank=rank,
        caps=loaded,
        min_coverage=min_coverage,
        options=options or Options(),
        fail_on=fail_on,
    ).report
    report.notes.extend(caps_notes)
    return _emulated(report, emulate, loaded, gpus)


@dataclass(slots=True)
class _Diffed:
    """A diff's report, its per-rank results, and what was read on each side (for callers that need more)."""

    report: Report
    results: list[DiffResult]
    sharded: Inputs
    unsharded: Inputs


def _diff(
    sharded: str | Sequence[str],
    unsharded: str | Sequence[str],
    *,
    tp: int | None,
    rank: int | None,
    caps: Caps | None,
    min_coverage: float,
    options: Options,
    fail_on: str,
) -> _Diffed:
    if "-" in _names(sharded) and "-" in _names(unsharded):
        raise InputError("standard input (-) is named on both sides; it can be read once: save one side to a file")
    options = replace(options, rank_option=True)  # diff takes --rank-from
    ref_inputs, ref = _reference(_names(unsharded), options)
    side = _read_for_report(_names(sharded), options)
    runs = side.runs
    if rank is not None:
        runs = [run for run in runs if run.input.rank == rank]
        if not runs:
            known = compact_ranks(r.input.rank for r in side.runs if r.input.rank is not None)
            raise InputError(f"--rank {rank}: the sharded side has no rank {rank} (it has ranks {known or 'none'})")
    chosen = [_reference_for(run, ref, ref_inputs) for run in runs]
    calls: dict[int, list[Any]] = {id(r): list[Any](r.calls) for r in chosen}
    results = [
        diff_runs(
            list[Any](run.calls),
            calls[id(other)],
            tp=tp,
            caps=caps,
            sharded_file=run.summary.path,
            unsharded_file=other.summary.path,
            keyed=_keyed(run, other),
        )
        for run, other in zip(runs, chosen, strict=True)
    ]
    if not any(result.pairs for result in results):
        raise InputError(_why_nothing_paired(results, runs, ref, tp))
    used = list({id(r): r for r in chosen}.values())
    coverage = _coverage(results, runs, chosen)
    report = _diff_report(results, runs, used, side, ref_inputs, coverage, min_coverage)
    _tunableop_validators(report, runs, ref)
    report.fail_on = fail_on
    add_settings(report, _names(sharded), _names(unsharded))
    return _Diffed(report, results, side, ref_inputs)


def split_diff_arguments(arguments: Sequence[str]) -> tuple[list[str], list[str], str | None]:
    """(sharded, unsharded, note) from `blaslog diff`'s positional arguments.

    Two arguments are SHARDED UNSHARDED. More are what a shell made of an unquoted glob
    (`blaslog diff logs/tp4/*.log logs/tp1.log`): the trailing files of one folder are the unsharded run, the
    files before them (of other folders) the sharded run, said in the note. Anything else is InputError with
    the quoting hint."""
    if len(arguments) == 2:
        return [arguments[0]], [arguments[1]], None
    usage = (
        "blaslog diff takes two runs, SHARDED UNSHARDED (each a file, a folder or a quoted glob such as "
        "'logs/tp4/*.log'), or several runs with --ref REFERENCE"
    )
    if len(arguments) < 2:
        raise InputError(f"{usage}; got {len(arguments)}")
    if not all(os.path.isfile(a) for a in arguments):
        raise InputError(f"{usage}; got {len(arguments)} arguments: quote globs so that blaslog expands them")
    folder = os.path.dirname(os.path.abspath(arguments[-1]))
    cut = len(arguments)
    while cut > 0 and os.path.dirname(os.path.abspath(arguments[cut - 1])) == folder:
        cut -= 1
    sharded, unsharded = list(arguments[:cut]), list(arguments[cut:])
    if not sharded:
        raise InputError(
            f"{usage}; got {len(arguments)} files of one folder (did the shell expand a glob? quote it: "
            f"blaslog diff 'logs/tp4/*.log' logs/tp1.log)"
        )
    note = (
        f"{len(arguments)} files given (a glob the shell expanded?): comparing the {len(sharded)} files before "
        f"{unsharded[0]} as the sharded run with {', '.join(unsharded)} as the unsharded run; quote globs "
        "('logs/tp4/*.log') to say so explicitly"
    )
    return sharded, unsharded, note


def diff_many(
    runs: Paths,
    reference: Paths,
    *,
    tp: int | None = None,
    rank: int | None = None,
    caps: CapsLike | None = None,
    min_coverage: float = MIN_COVERAGE,
    options: Options | None = None,
    fail_on: str = "precision",
    emulate: EmulateSettings | None = None,
) -> Report:
    """What `blaslog diff --ref REF RUN...` prints: every run compared with one reference, and per reference
    GEMM which runs agree with it. Each run is a file, a quoted glob or a folder (one file per rank); with
    `emulate`, each run's findings that change the arithmetic carry the emulation's prediction."""
    reference = _names(reference)
    runs = _names(runs)  # each run one file, glob or folder
    from blaslog.explain import compare

    options = options or Options()
    loaded, caps_notes = _caps_for(caps, list(runs), _names(reference))
    reports: list[Report] = []
    per_run: list[dict[str, Any]] = []
    agreement: dict[Any, dict[str, set[str]]] = {}
    order: list[Any] = []
    gpus = {name: _emulation_gpus(emulate, loaded, _names(name), _names(reference)) for name in runs}
    for name in runs:
        diffed = _diff(
            name, reference, tp=tp, rank=rank, caps=loaded, min_coverage=min_coverage, options=options, fail_on=fail_on
        )
        report, results = diffed.report, diffed.results
        report = _emulated(report, emulate, loaded, gpus[name])
        reports.append(report)
        per_run.append(
            {
                "run": name,
                "files": len(results),
                "tp": results[0].tp.tp,
                "pairs": sum(len(r.pairs) for r in results),
                "identical": sum(r.identical_pairs for r in results),
                "findings": len(report.findings),
            }
        )
        seen: dict[tuple[Any, Any], str] = {}
        for result in results:
            for s, u in result.pairs:
                key = (getattr(s, "call", s), getattr(u, "call", u))
                if key not in seen:
                    difference = compare(key[0], key[1], loaded)
                    seen[key] = "same" if difference is None else difference.cls
                if key[1] not in agreement:
                    agreement[key[1]] = {}
                    order.append(key[1])
                agreement[key[1]].setdefault(name, set()).add(seen[key])
    combined = Report("diff", fail_on=fail_on, files=[f for r in reports for f in r.files])
    for name, report in zip(runs, reports, strict=True):
        combined.findings.extend(_retitled(f, name) for f in report.findings)
        combined.failed.extend(report.failed)
        combined.notes.extend(f"{name}: {note}" for note in report.notes)
        combined.cases.extend(report.cases)
    from blaslog.report import sort_findings

    combined.findings = sort_findings(combined.findings)
    rows: list[dict[str, Any]] = []
    for call in order:
        row: dict[str, Any] = {"gemm": f"{call.function} {call.shape_text()} {call.a_type}/{call.compute_type}"}
        for name in runs:
            verdicts = agreement[call].get(name)
            row[name] = "not paired" if not verdicts else ", ".join(sorted(verdicts))
        rows.append(row)
    combined.sections = [
        (f"{title}: {name}", section)
        for name, report in zip(runs, reports, strict=True)
        for title, section in report.sections
        if title == SETTINGS_SECTION
    ]
    combined.sections += [("Runs against the reference", per_run), ("Agreement with the reference per GEMM", rows)]
    combined.notes.extend(caps_notes)
    combined.rows = [dict(row) for row in rows]
    combined.columns = list(rows[0]) if rows else []
    combined.document = {
        "reference": reference if isinstance(reference, str) else list(reference),
        "runs": [{"run": name, **r.to_json()} for name, r in zip(runs, reports, strict=True)],
        "agreement": rows,
    }
    return combined


def _retitled(finding: Finding, run: str) -> Finding:
    from dataclasses import replace

    return replace(finding, title=f"{run}: {finding.title}")


def _names(value: Paths) -> list[str]:
    """One path (a str or a PathLike: never a sequence of one-letter names) or several, as a list of str."""
    if isinstance(value, (str, os.PathLike)):
        return [os.fspath(value)]
    if isinstance(value, bytes):
        raise InputError(f"{value[:80]!r}: a path is a str or a PathLike (os.fsdecode gives one of bytes)")
    return [os.fspath(name) for name in value]


def _reference(names: list[str], options: Options) -> tuple[Inputs, Run]:
    inputs = _read_for_report(names, options)
    runs = [run for run in inputs.runs if len(run.calls)]
    ref = min(runs, key=lambda run: (run.input.rank is None, run.input.rank or 0))
    if len(inputs.runs) > 1:
        inputs.notes.append(
            f"{len(inputs.runs)} unsharded files given; {ref.summary.path} ({ref.input.label()}) is the reference"
        )
    return inputs, ref


def _reference_for(run: Run, ref: Run, inputs: Inputs) -> Run:
    """The reference file a sharded file is compared with: the reference (the unsharded run's first file), unless
    the sharded file logged a library it did not (a rank that logged cuBLASLt and cuBLAS, or rocBLAS and
    hipBLASLt, into two files): then the unsharded run's first file that logged most of those libraries."""
    libraries = {c.library for c in run.calls.calls}
    if libraries <= {c.library for c in ref.calls.calls}:
        return ref
    logged = [(len(libraries & {c.library for c in r.calls.calls}), r) for r in inputs.runs if len(r.calls)]
    best = max((overlap for overlap, _ in logged), default=0)
    if best == 0:
        return ref
    # the reference rank's other file, or (its two files told apart by name order) the first that logged them
    return min((r for overlap, r in logged if overlap == best), key=lambda r: (r.input.rank is None, r.input.rank))


def _coverage(results: Sequence[DiffResult], runs: Sequence[Run], refs: Sequence[Run]) -> list[Coverage]:
    out = [
        Coverage("sharded", run.summary.path, run.input.rank, len(result.pairs), len(result.unmatched_sharded))
        for result, run in zip(results, runs, strict=True)
    ]
    for result, run, ref in zip(results, runs, refs, strict=True):
        out.append(
            Coverage("unsharded", ref.summary.path, run.input.rank, len(result.pairs), len(result.unmatched_unsharded))
        )
    return out


def _why_nothing_paired(results: Sequence[DiffResult], runs: Sequence[Run], ref: Run, tp: int | None) -> str:
    """Why a diff paired no GEMM, as far as the logs tell, and what to try."""
    sharded = ", ".join(run.summary.path for run in runs[:3]) + (", ..." if len(runs) > 3 else "")
    head = f"nothing to compare: no GEMM of {sharded} pairs with a GEMM of {ref.summary.path}"
    libs_s = {c.library for run in runs for c in run.calls.calls}
    libs_u = {c.library for c in ref.calls.calls}
    if libs_s.isdisjoint(libs_u):
        return (
            f"{head}: the runs were logged by different libraries ({', '.join(sorted(libs_s))} vs "
            f"{', '.join(sorted(libs_u))}); log both runs with the same library (a cuBLASLt log pairs only with "
            "a cuBLASLt log)"
        )
    if any(result.reversed_hint for result in results):
        return (
            f"{head}: the first run's GEMMs are the larger ones: were the runs given the other way round? The order is "
            f"blaslog diff SHARDED UNSHARDED: try blaslog diff {ref.summary.path} '{runs[0].summary.path}'"
        )
    if all(_keyed(run, ref) for run in runs):
        return _why_no_row_paired(head, runs, ref, tp)
    if tp == 1 and any(result.unmatched_sharded and result.unmatched_unsharded for result in results):
        return (
            f"{head} with --tp 1: GEMMs of the same types were found on both sides, but none of the same shape "
            "(--tp 1 pairs equal shapes only); leave --tp out to infer the degree, or give the one the sharded run used"
        )
    if tp is not None and any(result.unmatched_sharded and result.unmatched_unsharded for result in results):
        return (
            f"{head} with --tp {tp}: GEMMs of the same types were found on both sides, but no dimension of "
            f"them is divided by {tp}; leave --tp out to infer it, or give the degree the sharded run used"
        )
    return (
        f"{head}: no GEMM of one run has a counterpart with the same types and transposes in the other, so "
        "these look like logs of different models or programs; check that both runs ran the same model "
        "(and the same step), or compare two runs of one model"
    )


def _why_no_row_paired(head: str, runs: Sequence[Run], ref: Run, tp: int | None) -> str:
    """Why two sets of tuning-file rows share no row: rows of one shape under other operators or types, or none."""
    rows = ref.calls.calls
    for run in runs:
        for s in run.calls.calls:
            u = next((u for u in rows if u.dims() == s.dims() and u.trans == s.trans), None)
            if u is not None:
                return (
                    f"{head}: no row of one file has the key (operator, parameters and types) of a row of the other; "
                    f"rows of one shape are under other operators or types (first: {_row_text(s)} in "
                    f"{run.summary.path}, {_row_text(u)} in {ref.summary.path}): the runs used other data types "
                    "(TF32 on in one, say) or other operators"
                )
    degree = f" {tp}" if tp else ""
    return (
        f"{head}: the files share no GEMM: no row of one has the key (operator, parameters and types) of a row of "
        f"the other, and none is the other's with one dimension divided by a TP degree{degree}; they look like "
        "results files of different models or shapes"
    )


def _row_text(call: GemmCall) -> str:
    op = dict(call.extra).get("op") or f"{call.function} {call.a_type}"
    return f"{op} {call.trans} {call.m}x{call.n}x{call.k}" + (
        f" batch {call.batch_count}" if call.batch_count > 1 else ""
    )


def _diff_report(
    results: Sequence[DiffResult],
    runs: Sequence[Run],
    refs: Sequence[Run],
    side: Inputs,
    ref_inputs: Inputs,
    coverage: list[Coverage],
    min_coverage: float,
) -> Report:
    from blaslog.views import diff_report

    report = diff_report(
        results,
        [run.summary for run in runs],
        [ref.summary for ref in refs],
        # one file whose rank nothing names is not "rank 0": its findings are not labelled with a rank
        ranks=None
        if len(runs) == 1 and runs[0].input.rank is None
        else [run.input.rank if run.input.rank is not None else i for i, run in enumerate(runs)],
    )
    rows = [c.to_dict() for c in coverage]
    low = [c for c in coverage if c.side == "sharded" and c.share < min_coverage]
    findings = [_coverage_finding(c, min_coverage) for c in low]
    if findings:
        from blaslog.report import sort_findings

        report.findings = sort_findings(report.findings + findings)
    _overflow_findings(report, [*runs, *refs], "compared")
    report.sections.insert(0, ("Coverage", [dict(row, coverage=f"{row['coverage']:.0%}") for row in rows]))
    report.document["coverage"] = rows
    report.document["ranks"] = _rank_rows(runs)
    report.failed = side.failed + ref_inputs.failed
    report.notes[:0] = side.notes + ref_inputs.notes
    report.notes.insert(
        0,
        "compared: "
        + "; ".join(
            f"{c.file} ({'rank ' + str(c.rank) if c.rank is not None else c.side}) {c.paired} of "
            f"{c.paired + c.unmatched} GEMM calls paired"
            for c in coverage
            if c.side == "sharded"
        )
        + f"; reference {refs[0].summary.path}",
    )
    return report


def _coverage_finding(coverage: Coverage, minimum: float) -> Finding:
    total = coverage.paired + coverage.unmatched
    title = (
        f"only {coverage.paired} of {total} GEMM calls of {coverage.file} were paired "
        f"({coverage.share:.0%}, below --min-coverage {minimum:g})"
    )
    return Finding(
        kind="low_coverage",
        cls="input",
        title=title,
        explanation=(
            f"{coverage.unmatched} GEMM calls of {coverage.file} have no counterpart in the other run, so "
            "whatever they ran was not compared. The runs may hold different steps or models, or the "
            "tensor-parallel degree was not inferred right (give --tp)."
        ),
        location=Location(coverage.file, 1, "sharded"),
        key=f"coverage|{coverage.file}",
    )


# ---- run folders (blaslog record) ------------------------------------------------------------------------------

SETTINGS_SECTION = "Settings that differ"
"""The title of a diff report's section listing what differs between two run folders' manifests."""

#: Variables that only say where and how much blaslog record logged, or which devices a process saw.
_NOT_SETTINGS = re.compile(
    r"^(CUBLASLT_LOG_|CUBLAS_LOG|ROCBLAS_LAYER$|ROCBLAS_LOG_|HIPBLASLT_LOG_|BLASLOG_|"
    r"WORLD_SIZE$|LOCAL_WORLD_SIZE$|CUDA_VISIBLE_DEVICES$|HIP_VISIBLE_DEVICES$)"
)


def run_manifest(names: Paths) -> tuple[str, dict[str, Any]] | None:
    """(folder, manifest) when `names` are one run folder (or files of one), else None."""
    names = _names(names)
    folders = {name if os.path.isdir(name) else os.path.dirname(name) or "." for name in names}
    if len(folders) != 1:
        return None
    folder = folders.pop()
    manifest = read_manifest(folder)
    return (folder, manifest) if manifest is not None else None


def folder_caps(names: Paths) -> tuple[Caps | None, list[str]]:
    """The caps.json files of the run folders among `names`, merged (the first wins a conflict, said in a note)."""
    names = _names(names)
    merged: Caps | None = None
    notes: list[str] = []
    seen: set[str] = set()
    for name in names:
        found = run_manifest([name])
        if found is None or found[0] in seen or not os.path.isfile(os.path.join(found[0], "caps.json")):
            continue
        seen.add(found[0])
        path = os.path.join(found[0], "caps.json")
        caps = load_caps(path)
        if merged is None:
            merged = caps
            continue
        conflicts = [
            key
            for key, entry in caps.entries.items()
            if key in merged.entries and merged.entries[key].get("_flags") != entry.get("_flags")
        ]
        notes.extend(
            f"caps: algoId {key[0]} {key[1]} has numerical impl flags "
            f"{merged.entries[key].get('numericalImplFlags')} in {merged.source} and "
            f"{caps.entries[key].get('numericalImplFlags')} in {path} (other GPUs or library versions?); "
            f"using {merged.source}'s"
            for key in conflicts[:3]
        )
        if len(conflicts) > 3:
            notes.append(f"caps: {len(conflicts) - 3} more conflicts between {merged.source} and {path}")
        for key, entry in caps.entries.items():
            merged.entries.setdefault(key, entry)
        merged.source += f", {path}"
    if merged is not None:
        notes.insert(0, f"caps from the run folders: {merged.source} (--caps FILE overrides)")
    return merged, notes


def _caps_for(caps: CapsLike | None, *groups: Sequence[str]) -> tuple[Caps | None, list[str]]:
    """The caps given, else those of the run folders among the inputs."""
    if caps is not None:
        return _load(caps), []
    return folder_caps([name for group in groups for name in group])


# ---- --emulate ---------------------------------------------------------------------------------------------------


def _emulation_gpus(
    settings: EmulateSettings | None, caps: Caps | None, first: Sequence[str], second: Sequence[str]
) -> Any:
    """The GPU of each side for --emulate (from the caps as resolved by _caps_for, run folders and log lines),
    found before anything is parsed: InputError when neither side names one and --gpu was not given;
    EmulationUnavailable when the emulate extra is missing."""
    if settings is None:
        return None
    from blaslog.emulate.engine import require
    from blaslog.emulate.findings import SideGpus
    from blaslog.emulate.gpus import detect, known_names

    require()
    caps_gpu, caps_source = (caps.gpu, caps.source or "caps") if caps is not None else (None, "")
    gpus = SideGpus(detect(first, caps_gpu, caps_source), detect(second, caps_gpu, caps_source))
    if settings.gpu is None and gpus.first is None and gpus.second is None:
        raise InputError(
            "--emulate: the inputs do not say which GPU ran them (no cuBLASLt Info line, gfx target, caps gpu or "
            f"run.json GPU); give --gpu NAME ({', '.join(known_names()[:11])} ...)"
        )
    return gpus


def _emulated(report: Report, settings: EmulateSettings | None, caps: Caps | None, gpus: Any) -> Report:
    """The report with its findings emulated (unchanged without `settings`); `caps` as resolved by _caps_for."""
    if settings is None:
        return report
    from blaslog.emulate.findings import emulate_report

    return emulate_report(report, caps, gpus, settings)


def emulate_gemm(
    *,
    k: int,
    first: Any,
    second: Any,
    settings: EmulateSettings,
    source: str = "",
) -> Report:
    """What `blaslog emulate` prints: one GEMM's two sides (SideSpec) emulated, as a report of one section."""
    from blaslog.emulate.predict import emulate

    prediction = emulate(first, second, k, settings)
    document = prediction.to_dict(source)
    rows = [
        {
            "side": side.role,
            "arithmetic": " | ".join(a.describe() for a in side.arithmetics),
            "tp": side.tp,
            "max vs FP64": f"{prediction.relative[side.role]['max']:.3g}",
            "median vs FP64": f"{prediction.relative[side.role]['median']:.3g}",
        }
        for side in prediction.sides
    ]
    report = Report("emulate", rows=rows, columns=list(rows[0]), document={"emulation": document})
    report.fail_on = "never"
    verdict = prediction.verdict["text"] if prediction.verdict else "give --tolerance atol=A,rtol=R for a verdict"
    gpus = dict.fromkeys(a.gpu.describe() for side in prediction.sides for a in side.arithmetics)
    facts = {
        "GPU": " and ".join(gpus) + (f" (from {source})" if source else ""),
        "inputs": f"{prediction.inputs['description']}; {prediction.samples} sampled outputs, each with k={k}",
        "metric": "|Δ| / Σ_k |a_ik·b_kj|",
        "between the sides": f"max {prediction.difference['max']:.3g}, median {prediction.difference['median']:.3g} "
        f"of Σ|a·b|; largest |Δ| {prediction.absolute['max']:.3g}",
        "verdict": verdict,
    }
    import textwrap

    lines = [
        {"": name if i == 0 else "", "value": part}
        for name, value in facts.items()
        for i, part in enumerate(textwrap.wrap(value, 76, break_on_hyphens=False) or [""])
    ]
    report.sections.append(("Emulation", lines))
    return report


def run_settings(manifest: dict[str, Any]) -> dict[str, str]:
    """What a run folder's manifest says can change which GEMM algorithm runs, flattened to `setting -> value`:
    world size, GPU, library versions, torch's matmul settings and environment variables (`env NAME`; unset
    ones left out). A value that differs between ranks reads `by rank: 0-1 A; 2-3 B`."""
    values: dict[str, dict[str, set[int]]] = {}

    def put(key: str, value: Any, rank: int) -> None:
        if value is not None and value != {}:
            values.setdefault(key, {}).setdefault(str(value), set()).add(rank)

    top = {k: v for k, v in (manifest.get("environment") or {}).items() if not _NOT_SETTINGS.match(k)}
    ranks = manifest.get("ranks") or {}
    for text, info in ranks.items() if ranks else [("0", {})]:
        rank = int(text) if str(text).isdigit() else 0
        environment = info.get("environment")
        environment = (
            top if environment is None else {k: v for k, v in environment.items() if not _NOT_SETTINGS.match(k)}
        )
        for key in sorted({*top, *environment}):
            put(f"env {key}", environment.get(key, "unset"), rank)
        put("GPU", info.get("gpu"), rank)
        for key, value in sorted((info.get("settings") or {}).items()):
            put(key, value, rank)
        for key, value in sorted((info.get("versions") or {}).items()):
            put(f"version {key}", value, rank)
    if "GPU" not in values and manifest.get("gpus"):
        values["GPU"] = {", ".join(sorted({g.get("name", "?") for g in manifest["gpus"]})): {0}}
    out = {"world size": str(manifest.get("world_size") or len(ranks) or 1)}
    for key, by_value in values.items():
        if len(by_value) == 1:
            out[key] = next(iter(by_value))
        else:
            out[key] = "by rank: " + "; ".join(
                f"{compact_ranks(r)} {v}" for v, r in sorted(by_value.items(), key=lambda item: min(item[1]))
            )
    return out


def _setting_order(key: str) -> tuple[int, str]:
    first = ("world size", "GPU", "env ", "torch", "version ")
    return next((i for i, p in enumerate(first) if key.startswith(p)), len(first)), key


def settings_diff(first: dict[str, Any], second: dict[str, Any]) -> list[dict[str, str]]:
    """What differs between two run folders' manifests: one row per setting (`setting`, `sharded`, `unsharded`),
    world size and GPU first. An environment variable set on one side only is `unset` on the other; other
    settings recorded on one side only are left out (nothing to compare)."""
    a, b = run_settings(first), run_settings(second)
    rows = []
    for key in sorted({*a, *b}, key=_setting_order):
        left, right = a.get(key), b.get(key)
        if key.startswith("env "):
            left, right = left or "unset", right or "unset"
        if left is None or right is None or left == right:
            continue
        rows.append({"setting": key, "sharded": left, "unsharded": right})
    return rows


def add_settings(report: Report, sharded: Paths, unsharded: Paths) -> None:
    """When both sides of a diff are run folders: what differs between their manifests, as the report's first
    section and first note (it is often the answer), and in its JSON document (`settings`)."""
    sharded = _names(sharded)
    unsharded = _names(unsharded)
    a, b = run_manifest(sharded), run_manifest(unsharded)
    if a is None or b is None:
        return
    rows = settings_diff(a[1], b[1])
    report.document["settings"] = {"sharded": a[0], "unsharded": b[0], "differ": rows}
    if not rows:
        report.notes.insert(0, f"settings: {a[0]} and {b[0]} agree on every setting their manifests recorded")
        return
    report.sections.insert(0, (SETTINGS_SECTION, rows))
    telling = [r for r in rows if r["setting"] != "world size"] or rows
    report.notes.insert(
        0,
        f"settings that differ between {a[0]} and {b[0]} (often the answer): "
        + "; ".join(f"{r['setting']} {r['sharded']} vs {r['unsharded']}" for r in telling[:6])
        + (f"; {len(telling) - 6} more" if len(telling) > 6 else "")
        + f" (see '{SETTINGS_SECTION}')",
    )


# ---- TunableOp ------------------------------------------------------------------------------------------------


def _keyed(run: Run, ref: Run) -> bool:
    """Whether two runs are tuning files (TunableOp results, hipBLASLt tuning files): sets of rows keyed by
    operator, parameters and types, paired by key rather than aligned as call sequences."""
    from blaslog.tunableop import is_tuned

    calls = [*run.calls.calls, *ref.calls.calls]
    return bool(run.calls.calls) and bool(ref.calls.calls) and all(is_tuned(c) for c in calls)


def _tunableop_validators(report: Report, runs: Sequence[Run], ref: Run) -> None:
    """A diff of TunableOp files says first whether their Validator lines (versions, GPU arch) agree."""
    from blaslog.tunableop import is_tuned, validator_findings

    if not any(is_tuned(c) for c in ref.calls.calls) and not any(is_tuned(c) for r in runs for c in r.calls.calls):
        return
    findings, rows, notes = validator_findings([run.summary.path for run in runs], ref.summary.path)
    report.findings[:0] = findings
    report.sections.insert(0, ("TunableOp validators", rows))
    report.document["tunableop_validators"] = rows
    report.notes[:0] = notes


def check_tunableop(
    names: Paths,
    tunableop: Paths,
    *,
    caps: CapsLike | None = None,
    batch: bool = False,
    options: Options | None = None,
    fail_on: str = "precision",
) -> Report:
    """What `blaslog check LOG... --tunableop FILE...` prints: `check` of the logs, plus the logs against the run's
    TunableOp (or hipBLASLt tuning) files: GEMMs that did not run the tuned solution, GEMMs that ran but were
    never tuned, tuned rows that never ran, and rows whose solution differs between the run's GPUs."""
    names = _names(names)
    tunableop = _names(tunableop)
    from blaslog.report import sort_findings
    from blaslog.tunableop import Source, cross_check, is_tuned, ordinal

    options = options or Options()
    logs = _read_for_report(names, options)
    report = _check(logs, names, caps=caps, batch=batch, fail_on=fail_on)
    tuned_options = Options(log_format=("tunableop", "hipblaslt-tuning"), strict=options.strict)
    tables = read_run_files(tunableop, tuned_options)
    if not tables.runs or not any(len(run.calls) for run in tables.runs):
        raise InputError(
            "; ".join(tables.failed)
            or f"no TunableOp rows in {', '.join(tunableop)} (a "
            "tunableop_results<N>.csv written with PYTORCH_TUNABLEOP_ENABLED=1)"
        )
    log_sources = [
        Source(run.summary.path, run.input.rank, [occ.record() for occ in run.calls if not is_tuned(occ)])
        for run in logs.runs
    ]
    tuned_sources = [
        Source(run.summary.path, ordinal(run.summary.path), [occ.record() for occ in run.calls]) for run in tables.runs
    ]
    from blaslog.views import input_findings

    findings, sections, notes = cross_check([s for s in log_sources if s.calls], tuned_sources)
    # the logs' GEMMs were compared with the tuned rows, if not with each other; the tuning files are inputs too:
    # accounted for, and what of them could not be read is a finding
    kept = [f for f in report.findings if f.kind != "nothing_compared"]
    report.findings = sort_findings(kept + findings + input_findings(tables.files))
    report.sections[:0] = sections
    report.document["tunableop"] = dict(sections)
    report.notes.extend(notes + [n for n in tables.notes if not n.startswith("ranks guessed")])
    report.failed.extend(tables.failed)
    report.files.extend(tables.files)
    report.document.setdefault("summary", {"files": []})["files"].extend(f.to_dict() for f in tables.files)
    return report


def tunableop_pins(
    sharded: Paths,
    unsharded: Paths,
    *,
    tp: int | None = None,
    rank: int | None = None,
    caps: CapsLike | None = None,
    min_coverage: float = MIN_COVERAGE,
    options: Options | None = None,
    fail_on: str = "precision",
) -> tuple[Report, Any]:
    """What `blaslog diff SHARDED UNSHARDED --emit-tunableop FILE` does: the diff's Report, and the Pinning
    (blaslog.tunableop) of each sharded GEMM whose solution differs to the unsharded run's, where the inputs show
    that solution ran for its exact signature; ``blaslog.tunableop.render(pinning)`` is the file to write."""
    sharded = _names(sharded)
    unsharded = _names(unsharded)
    from blaslog.tunableop import is_tuned, pin, validators

    diffed = _diff(
        sharded,
        unsharded,
        tp=tp,
        rank=rank,
        caps=_load(caps),
        min_coverage=min_coverage,
        options=options or Options(),
        fail_on=fail_on,
    )
    report, results, side, ref_side = diffed.report, diffed.results, diffed.sharded, diffed.unsharded
    evidence = [occ for run in [*side.runs, *ref_side.runs] for occ in run.calls]

    def _validators(runs: Sequence[Run]) -> dict[str, str]:
        for run in runs:
            if any(is_tuned(c) and c.log_format == "tunableop" for c in run.calls.calls):
                return validators(run.summary.path)
        return {}

    mine, theirs = _validators(side.runs), _validators(ref_side.runs)
    borrowed = not mine and bool(theirs)
    pinning = pin([pair for result in results for pair in result.pairs], evidence, mine or theirs, theirs)
    if borrowed:
        pinning.notes.append(
            "the Validator lines are the unsharded run's (the sharded inputs hold none): check "
            "that both runs used the same PyTorch, ROCm, rocBLAS, hipBLASLt and GPU"
        )
    return report, pinning


# ---- probe -----------------------------------------------------------------------------------------------------


def probe_configs(
    from_logs: Paths = (),
    *,
    algo_id: int | None = None,
    compute_type: str = "COMPUTE_32F",
    scale_type: str = "R_32F",
    types: Sequence[str] = ("R_32F",) * 4,
) -> list[dict[str, Any]]:
    """The algorithm configurations to probe: every distinct one in `from_logs`, or the one given."""
    from_logs = _names(from_logs)
    from blaslog import native

    if from_logs:
        inputs = _read_for_report(from_logs, Options())
        configs = native.configs_from_records(inputs.occurrences())
        if not configs:
            raise InputError("no cuBLASLt GEMM with an algoId in the logs (a level-2 or higher cuBLASLt log is needed)")
        return configs
    if algo_id is None:
        raise InputError("give --algo-id (with --compute-type, --scale-type, --types) or --from LOG")
    if len(types) != 4:
        raise InputError("--types takes four data types: A,B,C,D (e.g. R_32F,R_32F,R_32F,R_32F)")
    return [
        {
            "algoId": algo_id,
            "computeType": compute_type,
            "scaleType": scale_type,
            "Atype": types[0],
            "Btype": types[1],
            "Ctype": types[2],
            "Dtype": types[3],
        }
    ]


def caps_from_probe(probed: Any, existing: Caps | None = None) -> Caps:
    """A caps file's contents from a probe (merged into `existing`: the probe's entries win)."""
    caps = existing if existing is not None else Caps()
    caps.library_version, caps.gpu = probed.version_text, probed.gpu
    for entry in probed.entries:
        caps.add(entry_key(entry), entry)
    return caps


__all__ = [
    "Coverage",
    "Inputs",
    "Options",
    "Run",
    "add_settings",
    "caps_from_probe",
    "check",
    "diff",
    "folder_caps",
    "parse",
    "parse_report",
    "probe_configs",
    "read_run_files",
    "records",
    "run_manifest",
    "run_settings",
    "settings_diff",
    "summary",
]
