"""Reading inputs: which files a run is made of, their ranks, and each file read once into a Run."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from blaslog._fast.cache import SharedShapes
from blaslog.caps import Caps, load_caps
from blaslog.errors import InputError
from blaslog.formats import Sniffer, logging_hints
from blaslog.inputs import ENDS_EARLY, Reader, is_stream_error
from blaslog.parse import OnError
from blaslog.ranks import HEAD, RankedInput, assign_ranks, find_inputs
from blaslog.records import PARTIAL, TRUNCATED, FileSummary
from blaslog.runs import CompactRun, duplicate_dialects, read_run

if TYPE_CHECKING:
    from blaslog.cluster import Read

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
        return OnError.RAISE if self.strict else OnError.WARN

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
    return _read_run_files(names, options, None)


def _read_run_files(names: Paths, options: Options | None, shapes: SharedShapes | None) -> Inputs:
    """:func:`read_run_files`, the inputs read in this process served by `shapes`: what earlier reads learnt
    about line shapes (the other side of a diff says the same things); a read makes its own when None (the
    records are the same)."""
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
        read = _read_on_cluster(good, options.scheduler, options, inputs)
        good = read.names
        if not good:
            return inputs
    ranked = assign_ranks(good, read.heads if read else [_head(name) for name in good], options.rank_from)
    inputs.notes.extend(_guessed_ranks_note(ranked, options))
    pairs = read.pairs if read is not None else _read_here(good, options, shapes)
    for rank, (calls, summary) in zip(ranked, pairs, strict=True):
        inputs.runs.append(Run(rank, calls, summary))
    for run in inputs.runs:
        inputs.notes.extend(_run_notes(run))
    drop, notes = duplicate_dialects(call for run in inputs.runs for call in run.calls.calls)
    inputs.notes.extend(notes)
    for run in inputs.runs:
        if run.summary.path in drop:
            run.calls = run.calls.without(drop[run.summary.path])
    return inputs


def _read_on_cluster(good: list[str], scheduler: str, options: Options, inputs: Inputs) -> Read:
    """The inputs read by the cluster's workers (InputError for the first that failed when strict; else each
    failure added to `inputs`)."""
    from blaslog.cluster import read_runs

    read = read_runs(
        good,
        scheduler=scheduler,
        log_format=options.formats,
        on_error=options.on_error,
        workers=options.jobs,
    )
    if read.failed and options.strict:
        raise InputError(read.failed[0])
    inputs.failed.extend(read.failed)
    return read


def _read_here(
    good: list[str], options: Options, shapes: SharedShapes | None = None
) -> list[tuple[CompactRun, FileSummary]]:
    """The inputs read in this process, or in a pool of processes for big inputs (see :func:`jobs_for`)."""
    processes = jobs_for(options.jobs, good)
    if processes > 1 and "-" not in good:
        from blaslog._parallel import read_runs_parallel

        return read_runs_parallel(good, log_format=options.formats, on_error=options.on_error, jobs=processes)
    if shapes is None:
        shapes = SharedShapes()  # the shapes the first file learns serve the next (per-rank logs say the same)
    return [_read_one(name, options, shapes) for name in good]


def _guessed_ranks_note(ranked: Sequence[RankedInput], options: Options) -> list[str]:
    """A note saying the ranks are guessed from the files' names, when they are."""
    if not any(r.how == "name order (guessed)" for r in ranked):
        return []
    return [
        "ranks guessed from the order of the file names ("
        + ", ".join(f"{r.path} = rank {r.rank}" for r in ranked[:8])
        + (", ..." if len(ranked) > 8 else "")
        + "); name the files by rank (rank3.log, rank_3/)"
        + (" or give --rank-from REGEX" if options.rank_option else "")
    ]


def _run_notes(run: Run) -> list[str]:
    """What a person should know of one run: partial records left out, distinct calls past the bound."""
    notes = []
    partial = sum(PARTIAL in p.message for p in run.summary.problems)
    if partial and len(run.calls):
        notes.append(
            f"{run.summary.path}: {partial} partial GEMM record(s) (fields a person edited out) left out of the "
            "analysis; `blaslog parse` lists them"
        )
    if run.calls.overflow:
        notes.append(
            f"{run.summary.path}: more than {run.calls.max_distinct:,} distinct GEMM calls: the "
            f"first {run.calls.max_distinct:,} are kept, {run.calls.overflow:,} calls of further "
            "distinct calls are counted only (in bounded memory)"
        )
    return notes


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


def _read_for_report(
    names: Sequence[str], options: Options | None, what: str = "GEMM records", shapes: SharedShapes | None = None
) -> Inputs:
    """Read inputs for a report; InputError when none could be read or none holds a GEMM. `shapes`: see
    :func:`_read_run_files`."""
    inputs = _read_run_files(names, options, shapes)
    if not inputs.runs:
        raise InputError("; ".join(inputs.failed) or "no input could be read")
    if not any(len(run.calls) for run in inputs.runs):
        raise InputError(nothing_found(what, inputs.files))
    return inputs


def _load(caps: CapsLike | None) -> Caps | None:
    return load_caps(os.fspath(caps)) if isinstance(caps, (str, os.PathLike)) else caps


def cut_short(files: Sequence[FileSummary]) -> list[str]:
    """`file: why` for each input whose stream ended early (a damaged or cut compressed file): what followed is
    lost, so a command without findings (parse, summary) fails as for an input not read."""
    return [f"{s.path}: {p.message}" for s in files for p in s.problems if p.message.startswith(ENDS_EARLY)]


def _names(value: Paths) -> list[str]:
    """One path (a str or a PathLike: never a sequence of one-letter names) or several, as a list of str."""
    if isinstance(value, (str, os.PathLike)):
        return [os.fspath(value)]
    if isinstance(value, bytes):
        raise InputError(f"{value[:80]!r}: a path is a str or a PathLike (os.fsdecode gives one of bytes)")
    return [os.fspath(name) for name in value]
