"""The `blaslog` command: options -> one library call (:mod:`blaslog.api`) -> a reporter -> an exit status.

Exit status (like diff(1)):
  0  success, nothing at or above --fail-on
  1  findings at or above --fail-on (diff, check)
  2  trouble: bad usage, unreadable input, nothing parsable or compared, --strict parse errors, probe failures
  130 interrupted (Ctrl-C)
"""

from __future__ import annotations

import errno
import functools
import gc
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn

import click

from blaslog import __version__, api
from blaslog.errors import BlaslogError
from blaslog.records import FileSummary
from blaslog.report import CLASSES, FAIL_ON, Report

EXIT_STATUS = """\b
Exit status:
  0    success
  2    trouble: bad usage, unreadable input, nothing parsable, --strict errors
  130  interrupted"""

EXIT_STATUS_FINDINGS = """\b
Exit status:
  0    success; no finding at or above --fail-on
  1    findings at or above --fail-on
  2    trouble: bad usage, unreadable input, nothing parsable or compared, --strict errors
  130  interrupted"""

#: The output formats each reporting command can fill (CI annotation formats carry findings: diff and check).
FORMATS = {
    "parse": ("table", "json", "jsonl", "csv", "markdown", "junit", "parquet"),
    "summary": ("table", "json", "jsonl", "csv", "markdown", "junit", "html"),
    "check": ("table", "json", "jsonl", "csv", "markdown", "junit", "github", "sarif", "gitlab", "html"),
    "diff": ("table", "json", "jsonl", "csv", "markdown", "junit", "github", "sarif", "gitlab", "html"),
    "emulate": ("table", "json", "markdown"),
}


class CliError(click.ClickException):
    """An error the CLI reports in one line and exit status 2."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"blaslog: error: {_defuse(self.format_message())}", err=True)


def _output_path(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """-o: `-` is standard output (as for inputs); an empty name is refused (it names no file)."""
    if value == "-":
        return None
    if value == "":
        raise click.BadParameter("an empty file name: give a file, or leave the option out to write to stdout")
    return value


def _defuse(text: str) -> str:
    from blaslog.reporters._base import defuse_commands, printable

    return defuse_commands("\n".join(printable(line) for line in text.split("\n")))


def warn(message: str) -> None:
    """A line on stderr (never read as a CI workflow command)."""
    click.echo(_defuse(message), err=True)


@contextmanager
def translate_errors() -> Iterator[None]:
    """Library errors become one-line messages and exit status 2; Ctrl-C becomes 130."""
    try:
        yield
    except BlaslogError as exc:
        raise CliError(str(exc)) from exc
    except KeyboardInterrupt:
        click.echo("blaslog: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)


# ---- shared options --------------------------------------------------------------------------------------------


def output_options(command: str) -> Callable[[Any], Any]:
    """--format / --output / --quiet of a reporting command."""

    def decorate(func: Any) -> Any:
        func = click.option(
            "--quiet",
            "-q",
            is_flag=True,
            help="No accounting or notes on stderr (errors and what was compared are still shown).",
        )(func)
        func = click.option(
            "--output",
            "-o",
            type=click.Path(),
            callback=_output_path,
            help="Write the report to FILE (replaced only when "
            "the run succeeds) instead of stdout (`-`: stdout)"
            + (" (a folder for --format parquet)." if "parquet" in FORMATS[command] else "."),
        )(func)
        func = click.option(
            "--format",
            "-f",
            "fmt",
            type=click.Choice(FORMATS[command]),
            default="table",
            show_default=True,
            help="Output format.",
        )(func)
        func = click.option(
            "--color",
            type=click.Choice(["auto", "always", "never"]),
            default="auto",
            show_default=True,
            expose_value=False,
            callback=_keep_color,
            help="Colour the table on a terminal (auto honours NO_COLOR and FORCE_COLOR); piped output is plain text.",
        )(func)
        return func

    return decorate


def _keep_color(ctx: click.Context, param: click.Parameter, value: str) -> None:
    ctx.meta["blaslog.color"] = value


def _log_format_help() -> str:
    from blaslog.formats import format_names

    return "Read only this log format (repeatable): " + ", ".join(format_names()) + "."


class _LazyHelpOption(click.Option):
    """An option whose help text is computed when --help is shown (the registered dialects may grow)."""

    def __init__(self, *args: Any, help_text: Callable[[], str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._help_text = help_text

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        self.help = self._help_text()
        return super().get_help_record(ctx)


def input_options(func: Any) -> Any:
    """--log-format / --strict / --jobs / --scheduler, shared by the commands that read logs."""
    func = click.option(
        "--scheduler",
        metavar="ADDRESS",
        envvar="DASK_SCHEDULER_ADDRESS",
        expose_value=False,
        callback=_keep_scheduler,
        help="Read the inputs on a Dask cluster: its scheduler's address (default: "
        "$DASK_SCHEDULER_ADDRESS), or `local` for a LocalCluster of --jobs processes. Inputs may "
        "be fsspec URLs (s3://...) then (pip install 'blaslog[dask]').",
    )(func)
    func = click.option(
        "--jobs",
        "-j",
        type=click.IntRange(0, 256),
        default=0,
        help="Processes to parse with (0, the default: one per CPU for inputs over 64 MB, else 1). "
        "Several inputs are parsed side by side; one large input is cut into pieces.",
    )(func)
    func = click.option(
        "--strict",
        is_flag=True,
        help="Stop at the first unparsable line (exit 2) instead of reporting it and going on.",
    )(func)
    func = click.option(
        "--log-format", "log_format", multiple=True, metavar="NAME", cls=_LazyHelpOption, help_text=_log_format_help
    )(func)
    return func


def caps_option(func: Any) -> Any:
    """--caps FILE."""
    return click.option(
        "--caps",
        "caps_path",
        type=click.Path(dir_okay=False),
        help="Caps file (blaslog probe -o) giving each algorithm's numerical impl flags.",
    )(func)


def fail_options(func: Any) -> Any:
    """--fail-on / --exit-zero / --summary of the commands that report findings."""
    func = click.option(
        "--exit-zero", is_flag=True, help="Exit 0 even when there are findings (report-only CI steps)."
    )(func)
    func = click.option(
        "--fail-on",
        type=click.Choice(list(FAIL_ON)),
        default="precision",
        show_default=True,
        help="Exit 1 when a finding of this class or a more severe one is found (precision includes unknown).",
    )(func)
    func = click.option(
        "--summary",
        "summary_file",
        type=click.Path(dir_okay=False),
        help="Append a Markdown summary to FILE (default with --format github: $GITHUB_STEP_SUMMARY).",
    )(func)
    return func


def _gpu(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    if value is None:
        return None
    from blaslog.emulate.gpus import UnknownGpuError, gpu_by_name

    try:
        return gpu_by_name(value)
    except UnknownGpuError as exc:
        raise click.BadParameter(str(exc)) from None


def _tolerance(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    if value is None:
        return None
    from blaslog.emulate.predict import Tolerance

    try:
        return Tolerance.parse(value)
    except BlaslogError as exc:
        raise click.BadParameter(str(exc)) from None


def _finite(ctx: click.Context, param: click.Parameter, value: float) -> float:
    if value != value:  # NaN passes FloatRange's bounds
        raise click.BadParameter("give a finite number")
    return value


def emulate_settings_options(func: Any) -> Any:
    """--gpu, --tolerance, --scale, --samples, --seed, --inputs: how a GEMM is emulated."""
    func = click.option(
        "--inputs",
        "inputs_npy",
        metavar="A.npy,B.npy",
        help="Sample the outputs from your own op(A) [m, k] and op(B) [k, n] (NumPy .npy, no pickles) instead of "
        "random inputs.",
    )(func)
    func = click.option("--seed", type=click.IntRange(0), default=0, show_default=True, help="Seed of the inputs.")(
        func
    )
    func = click.option(
        "--samples",
        type=click.IntRange(1, 1 << 16),
        default=1024,
        show_default=True,
        help="Output elements emulated, each with its full k.",
    )(func)
    func = click.option(
        "--scale",
        type=click.FloatRange(min=0, min_open=True, max=1e30),
        callback=_finite,
        default=1.0,
        show_default=True,
        help="Inputs are drawn from N(0, 1) times SCALE (the size of your activations and weights).",
    )(func)
    func = click.option(
        "--tolerance",
        metavar="atol=A,rtol=R",
        callback=_tolerance,
        help="Your test's tolerance: say what share of the sampled outputs would fail |x-y| <= atol + rtol|y| "
        "from the arithmetic alone.",
    )(func)
    func = click.option(
        "--gpu",
        metavar="NAME",
        callback=_gpu,
        help="The GPU that ran the GEMMs (V100, A100, H100, B200, MI100, MI250X, MI300X ...); by default what the "
        "logs, caps or run folder say.",
    )(func)
    return func


_EMULATION_PARAMETERS = ("emulate", "gpu", "tolerance", "scale", "samples", "seed", "inputs_npy")


def _collected(func: Any) -> Any:
    """The command gets its emulation options as one `emulation` mapping (they go to _emulate_settings)."""

    @functools.wraps(func)
    def command(**params: Any) -> Any:
        emulation = {name: params.pop(name) for name in _EMULATION_PARAMETERS if name in params}
        return func(emulation=emulation, **params)

    return command


def emulate_options(func: Any) -> Any:
    """--emulate and its settings, on diff and check."""
    func = emulate_settings_options(_collected(func))
    return click.option(
        "--emulate",
        is_flag=True,
        help="Emulate both sides' arithmetic bit for bit (needs blaslog[emulate]) and say how far each finding "
        "that changes it moves the outputs.",
    )(func)


def _emulate_settings(
    *,
    quiet: bool,
    gpu: Any,
    tolerance: Any,
    scale: float,
    samples: int,
    seed: int,
    inputs_npy: str | None,
    emulate: bool = True,
) -> Any:
    """api's emulation settings from the options (None without --emulate); a missing extra is reported here,
    before any input is read."""
    if not emulate:
        ctx = click.get_current_context()
        given = [
            param.opts[0]
            for param in ctx.command.params
            if param.name in _EMULATION_PARAMETERS
            and param.name != "emulate"
            and ctx.get_parameter_source(param.name) is not click.core.ParameterSource.DEFAULT
        ]
        if given:
            raise CliError(f"{', '.join(given)} set how findings are emulated: add --emulate")
        return None
    from blaslog.emulate.engine import require
    from blaslog.emulate.predict import Settings

    require()
    a = b = None
    if inputs_npy:
        a, b = _load_npy(inputs_npy)
    return Settings(
        samples=samples,
        seed=seed,
        scale=scale,
        tolerance=tolerance,
        a=a,
        b=b,
        inputs_source=inputs_npy or "",
        gpu=gpu,
        progress=not quiet and sys.stderr.isatty(),
    )


def _load_npy(text: str) -> tuple[Any, Any]:
    import numpy as np

    names = [p for p in text.split(",") if p]
    if len(names) != 2:
        raise BlaslogError(f"--inputs {text!r}: give two .npy files, A.npy,B.npy")
    arrays = []
    for name in names:
        try:
            array = np.load(name, allow_pickle=False, mmap_mode="r")
        except (OSError, ValueError) as exc:
            raise BlaslogError(f"--inputs: {name}: cannot be read as a .npy array ({exc})") from None
        if array.dtype.kind != "f" or array.ndim != 2:
            raise BlaslogError(
                f"--inputs: {name}: a 2-D floating-point array is needed (got {array.dtype}, {array.ndim}-D)"
            )
        arrays.append(array)
    return arrays[0], arrays[1]


def _keep_scheduler(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    ctx.meta["blaslog.scheduler"] = value or None


def _options(
    log_format: Sequence[str], strict: bool, jobs: int, quiet: bool, rank_from: str | None = None
) -> api.Options:
    ctx = click.get_current_context(silent=True)
    scheduler = ctx.meta.get("blaslog.scheduler") if ctx is not None else None
    return api.Options(tuple(log_format), strict, jobs, rank_from, None if quiet else _progress, scheduler)


class _Progress:
    """A one-line progress display on stderr: bytes, GEMM records, rate."""

    def __init__(self, name: str, total: int) -> None:
        self.name, self.total, self.start, self.last = name, total, time.monotonic(), 0.0

    def __call__(self, done: int, gemms: int) -> None:
        now = time.monotonic()
        if now - self.last < 0.25:
            return
        self.last = now
        rate = done / max(now - self.start, 1e-9) / 1e6
        share = f" {100 * done / self.total:3.0f}%" if self.total else ""
        click.echo(
            f"\r{_defuse(self.name)}:{share} {done / 1e6:,.0f} MB, {gemms:,} GEMMs, {rate:,.0f} MB/s ",
            err=True,
            nl=False,
        )

    def close(self) -> None:
        click.echo("\r\033[K", err=True, nl=False)


def _progress(name: str, size: int = -1, quiet: bool = False) -> _Progress | None:
    """A progress display for a large input when stderr is a terminal and --quiet is not given."""
    if quiet or name == "-" or not sys.stderr.isatty():
        return None
    if size < 0:
        size = os.path.getsize(name) if os.path.isfile(name) else 0
    return _Progress(name, size) if size >= 32 << 20 else None


# ---- what every reporting command does after its library call --------------------------------------------------


def _account(files: Sequence[FileSummary], quiet: bool, max_problems: int = 5) -> None:
    """Each input's accounting on stderr (with --quiet: only its errors)."""
    for s in files:
        if not quiet:
            warn(
                f"{s.path}: {s.lines} lines: {s.gemm_records} GEMM records, {s.other_records} other records "
                f"({s.record_lines} lines), {s.foreign_lines} foreign lines, {s.unparsable_lines} unparsable"
            )
        wanted = [p for p in s.problems if not quiet or p.severity == "error"]
        for problem in wanted[:max_problems]:
            warn(problem.render())
        rest = len(wanted) - max_problems + (s.more_problems if not quiet or s.unparsable_lines else 0)
        if rest > 0:
            warn(f"{s.path}: {rest} more problems (see --format json)")


def _report(
    report: Report,
    fmt: str,
    output: str | None,
    quiet: bool,
    inputs: Sequence[str],
    summary_file: str | None = None,
    exit_zero: bool = False,
) -> NoReturn:
    """Print the accounting, notes and errors, write the report, and exit with the report's status."""
    from blaslog.reporters import get_reporter
    from blaslog.reporters.markdown import render_markdown

    _account(report.files, quiet)
    for message in report.failed:
        warn(f"blaslog: error: {message}")
    for note in report.notes:
        if not quiet or note.startswith("compared:"):
            warn(note)
    status = exit_status(report, exit_zero)
    reporter = get_reporter(fmt)
    if fmt == "table":  # sized and coloured for a terminal; piped, the plain text scripts read
        from blaslog.reporters.table import TableReporter

        reporter = TableReporter(_table_terminal(output))
    text = reporter.render(report)
    _write(text, output, inputs, keep=status in (0, 1))
    target = summary_file or (os.environ.get("GITHUB_STEP_SUMMARY") if fmt == "github" else None)
    from blaslog.stream import input_at

    clash = input_at(target, inputs) if target else None
    if clash is not None:
        warn(f"blaslog: warning: not appending the summary to {target}: it is the input {clash} (or a file of it)")
    elif target:
        try:
            _append(target, render_markdown(report) + "\n")
        except OSError as exc:
            reason = "a pipe that nobody reads" if exc.errno == errno.ENXIO else exc.strerror or exc
            warn(f"blaslog: warning: cannot append the summary to {target} ({reason})")
    sys.exit(status)


def _append(path: str, text: str) -> None:
    """Append `text` to `path`, opened without waiting: a pipe without a reader is an OSError (ENXIO), where
    open() blocked for ever."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0), 0o666)
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)  # the writes themselves may wait for a slow reader
    with open(fd, "a", encoding="utf-8") as handle:
        handle.write(text)


def _table_terminal(output: str | None) -> Any:
    """The terminal a table is fitted to: stdout's, with --color (PLAIN when piped or with -o)."""
    from blaslog.reporters.table import terminal_for

    ctx = click.get_current_context(silent=True)
    return terminal_for(
        sys.stdout if output is None else None, ctx.meta.get("blaslog.color", "auto") if ctx else "auto"
    )


def exit_status(report: Report, exit_zero: bool = False) -> int:
    """2 when an input could not be read; else 1 for findings at or above the report's --fail-on (0 with
    `exit_zero`); else 0."""
    if report.failed:
        return 2
    return 0 if exit_zero else report.exit_status()


def _write(text: str, output: str | None, inputs: Sequence[str], keep: bool = True) -> None:
    """`text` to stdout, or to `output` (replaced only when `keep`)."""
    if output is None:
        _echo(text)
        return
    from blaslog.stream import Output

    with Output(output, inputs) as out:
        out.write(text)
        if keep:
            out.keep()


def _echo(text: Any) -> None:
    """Write text (str, UTF-8 bytes in whole lines, or a Spool of them) to stdout; a closed or full stdout is an
    error (exit 2), not a silent success."""
    if sys.stdout is None:
        raise CliError("standard output is closed: nowhere to write the report (give -o FILE)")
    try:
        if type(text) is str:
            sys.stdout.write(text)
            sys.stdout.flush()
            return
        try:
            _echo_utf8(text)
        finally:
            if type(text) is not bytes:
                text.close()  # whatever happened (a closed pipe), a piece's file is let go
    except BrokenPipeError:
        raise
    except (OSError, ValueError, AttributeError) as exc:
        raise CliError(f"cannot write to standard output ({getattr(exc, 'strerror', None) or exc})") from None


def _echo_utf8(text: Any) -> None:
    """Write UTF-8 bytes (whole lines), or a Spool's rows, to stdout: as they are where stdout takes them so (a
    Spool then by os.sendfile where it can), else decoded."""
    buffer = getattr(sys.stdout, "buffer", None)
    utf8 = (sys.stdout.encoding or "").lower().replace("-", "") == "utf8"
    if buffer is None or not utf8 or os.linesep != "\n":
        # an output that is not UTF-8, not bytes underneath, or that translates line ends, writes text
        for block in [text] if type(text) is bytes else text.blocks():
            sys.stdout.write(block.decode("utf-8"))
        sys.stdout.flush()
        return
    sys.stdout.flush()
    if type(text) is bytes:
        buffer.write(text)
    else:
        buffer.flush()
        fd = _fileno(buffer)
        if fd is None or not text.send(fd):
            for block in text.blocks():
                buffer.write(block)
    buffer.flush()


def _fileno(stream: Any) -> int | None:
    """The file descriptor under a stream, or None (a test's in-memory stream has none)."""
    try:
        return int(stream.fileno())
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError and a ValueError
        return None


def _caps(path: str | None) -> Any:
    from blaslog.caps import load_caps

    return load_caps(path) if path else None


def version_text() -> str:
    """`blaslog 0.1.0 (C speedups in use)`, or why they are not."""
    from blaslog._fast._c import speedups

    if speedups is not None:
        how = "C speedups in use"
    elif os.environ.get("BLASLOG_PURE_PYTHON"):
        how = "C speedups off (BLASLOG_PURE_PYTHON): pure Python"
    else:
        how = "C speedups not built (no C compiler at install time): pure Python, slower on large logs"
    return f"blaslog {__version__} ({how})"


def _print_version(ctx: click.Context) -> None:
    click.echo(version_text())
    ctx.exit()


# ---- commands ----------------------------------------------------------------------------------------------------


def _exit_on_signals() -> None:
    """SIGTERM and SIGHUP (a cancelled CI job, a closed terminal) end blaslog as an exception does, with status
    128+N: worker processes are stopped and temporary files removed on the way out (the default action left a
    worker running and /tmp/blaslog-* behind). `record` forwards them to its command instead, while it runs."""
    if threading.current_thread() is not threading.main_thread():
        return

    def stop(number: int, frame: Any) -> None:
        signal.signal(number, signal.SIG_DFL)  # a second one ends blaslog as before
        raise SystemExit(128 + number)

    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None and signal.getsignal(number) is signal.SIG_DFL:
            signal.signal(number, stop)


class _Group(click.Group):
    """The command group: an unexpected exception anywhere is exit 2 with one line and a hint to report it
    (exit 1 always means findings, never a crash); --debug or BLASLOG_DEBUG=1 shows the traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        _exit_on_signals()
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:
            if ctx.params.get("debug") or os.environ.get("BLASLOG_DEBUG"):
                raise
            click.echo(
                f"blaslog: internal error: {type(exc).__name__}: {_defuse(str(exc))[:500]} (a bug in "
                "blaslog: please report it with the command line; --debug shows the traceback)",
                err=True,
            )
            sys.exit(2)


@click.group(
    cls=_Group,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110},
    epilog=EXIT_STATUS_FINDINGS,
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=lambda ctx, param, value: _print_version(ctx) if value else None,
    help="Show the version, and whether the C speedups are in use, and exit.",
)
@click.option("--debug", is_flag=True, help="Show the traceback of an internal error.")
def cli(debug: bool) -> None:
    """Find the GEMM algorithm differences behind numerical mismatches.

    Reads cuBLASLt (CUBLASLT_LOG_LEVEL=1..5), cuBLAS (CUBLAS_LOGINFO_DBG=1), rocBLAS (ROCBLAS_LAYER=1,2,4) and
    hipBLASLt (HIPBLASLT_LOG_LEVEL, HIPBLASLT_LOG_MASK=32) logs. A LOG is a file (gzip too), a quoted glob
    ('logs/**/*.log'), a folder (searched for BLAS logs), or - for standard input.
    """


@cli.command("parse", epilog=EXIT_STATUS)
@click.argument("logs", nargs=-1, required=True)
@click.option(
    "--kind",
    type=click.Choice(["gemm", "all"]),
    default="gemm",
    show_default=True,
    help="gemm: executed GEMMs only; all: every record (API calls, errors, info too).",
)
@click.option(
    "--parquet",
    "parquet_dir",
    type=click.Path(file_okay=False),
    help="Also write the GEMM records as Parquet under DIR, partitioned by run (the input's folder, or "
    "--run) and rank (needs pyarrow: pip install 'blaslog[parquet]').",
)
@click.option("--run", "run_name", help="Run name for --parquet partitions.")
@caps_option
@input_options
@output_options("parse")
def parse_cmd(
    logs: tuple[str, ...],
    kind: str,
    parquet_dir: str | None,
    run_name: str | None,
    caps_path: str | None,
    log_format: tuple[str, ...],
    strict: bool,
    jobs: int,
    fmt: str,
    output: str | None,
    quiet: bool,
) -> None:
    """Print the records of LOG... (every executed GEMM; with --kind all, every record).

    With --format json, jsonl or csv the records are written as they are read, in bounded memory; so is the
    table when piped or written with -o (its columns aligned once the last record is read).
    """
    from blaslog.reporters import get_reporter

    with translate_errors():
        options = _options(log_format, strict, jobs, quiet)
        if fmt == "parquet" or parquet_dir:
            _parquet(logs, output if fmt == "parquet" else parquet_dir, run_name, options, quiet)
        reporter = get_reporter(fmt)
        if fmt == "table" and _table_terminal(output).width is None:
            # the plain table is streamed too: rows are spooled to a file, which gives the widths, then the lines
            from blaslog.views import parse_columns

            columns = parse_columns(kind, caps_path is not None)
            _stream_parse(logs, get_reporter("jsonl"), kind, caps_path, options, output, quiet, columns)
        if not reporter.streams:
            report = api.parse_report(logs, kind=kind, caps=caps_path, options=options)
            _report(report, fmt, output, quiet, logs)
        _stream_parse(logs, reporter, kind, caps_path, options, output, quiet)


def _stream_parse(
    logs: Sequence[str],
    reporter: Any,
    kind: str,
    caps_path: str | None,
    options: api.Options,
    output: str | None,
    quiet: bool,
    table: list[str] | None = None,
) -> NoReturn:
    """`blaslog parse` in a streaming format: rows written as they are read (with `table`, the columns of a
    plain table: `reporter` is jsonl, whose rows make it)."""
    from blaslog.stream import Output, parse_chunks, table_chunks, write_behind

    names, failed = api.parse_inputs(logs, options)
    if not names:
        raise CliError("; ".join(failed))
    summaries: list[FileSummary] = []
    # as api.parse_report: the caps given, else those of the run folders among the inputs
    caps = _caps(caps_path) if caps_path else api.folder_caps(list(logs))[0]
    chunks: Iterable[Any] = parse_chunks(
        names, reporter, kind=kind, caps_path=caps_path, caps=caps, options=options, summaries=summaries
    )
    if table is not None:
        chunks = table_chunks(chunks, table, kind, summaries)
    if output is None:
        write_behind(_echo, chunks)
        ok = True
    else:
        with Output(output, names) as out:
            write_behind(out.write, chunks)
            ok = not failed and not api.holds_nothing(summaries)
            if ok:
                out.keep()
    _account(summaries, quiet)
    for message in failed:
        warn(f"blaslog: error: {message}")
    if api.holds_nothing(summaries):
        warn(f"blaslog: error: {api.nothing_found(files=summaries)}")
        sys.exit(2)
    sys.exit(2 if failed or not ok or api.cut_short(summaries) else 0)


def _parquet(
    logs: Sequence[str], folder: str | None, run_name: str | None, options: api.Options, quiet: bool
) -> NoReturn:
    from blaslog.parquet import write_parquet

    if not folder:
        raise CliError("--format parquet writes a folder: give it with --output DIR")
    names, failed = api.parse_inputs(logs, options)
    if options.scheduler:  # each input written by the worker that reads it
        from blaslog.cluster import write_parquet as write_on_cluster

        files, notes, more = write_on_cluster(
            names,
            folder,
            scheduler=options.scheduler,
            run=run_name,
            log_format=options.formats,
            on_error=options.on_error,
            workers=options.jobs,
        )
        failed += more
    else:
        files, notes = write_parquet(
            names, folder, lambda name, out: api.records([name], options=options, summaries=out), run=run_name
        )
    _account(files, quiet)
    for note in notes:
        warn(f"note: {note}")
    for message in failed:
        warn(f"blaslog: error: {message}")
    warn(f"wrote {sum(f.gemm_records for f in files)} GEMM records under {folder}")
    sys.exit(2 if failed or all(f.gemm_records == 0 for f in files) else 0)


_CLASSES_HELP = "\n\n\b\nFinding classes (most severe first):\n" + "\n".join(
    f"  {k:10} {v}" for k, v in CLASSES.items()
)


@cli.command("diff", epilog=EXIT_STATUS_FINDINGS + _CLASSES_HELP)
@click.argument("runs", nargs=-1, required=True)
@click.option(
    "--ref",
    "reference",
    metavar="RUN",
    help="The reference run; every RUN is compared with it (several runs at once: --ref tp1/ tp2/ tp4/).",
)
@click.option(
    "--tp",
    type=click.IntRange(1, 4096),
    help="Tensor-parallel degree (inferred from the logs when not given; "
    "--tp 1 compares two runs of the same shapes, e.g. before and after a library upgrade).",
)
@click.option("--rank", type=click.IntRange(0), help="Compare only this rank of the sharded run.")
@click.option(
    "--rank-from",
    metavar="REGEX",
    help="Take each file's rank from REGEX's first group in its path (e.g. 'node\\d+_gpu(\\d+)').",
)
@click.option(
    "--min-coverage",
    type=click.FloatRange(0, 1),
    default=api.MIN_COVERAGE,
    show_default=True,
    help="Report an input finding when less than this share of a sharded file's GEMM calls is paired.",
)
@click.option(
    "--emit-tunableop",
    "emit_tunableop",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    help="Write a TunableOp results file pinning the sharded GEMMs to the unsharded run's solutions, where "
    "the logs show that solution ran for the exact GEMM (the rest are listed on stderr).",
)
@caps_option
@emulate_options
@fail_options
@input_options
@output_options("diff")
def diff_cmd(
    runs: tuple[str, ...],
    reference: str | None,
    tp: int | None,
    rank: int | None,
    rank_from: str | None,
    min_coverage: float,
    emit_tunableop: str | None,
    caps_path: str | None,
    emulation: dict[str, Any],
    fail_on: str,
    exit_zero: bool,
    summary_file: str | None,
    log_format: tuple[str, ...],
    strict: bool,
    jobs: int,
    fmt: str,
    output: str | None,
    quiet: bool,
) -> None:
    """Compare a sharded (tensor-parallel) run with an unsharded run, GEMM by GEMM.

    \b
    blaslog diff SHARDED UNSHARDED
    blaslog diff 'logs/tp4/*.log' logs/tp1.log      (a quoted glob or a folder: one file per rank)
    blaslog diff --ref logs/tp1/ logs/tp2/ logs/tp4/  (several runs against one reference)

    Each file's rank comes from --rank-from, a launcher's tag in its lines ([rank3]:), its path (rank3,
    attempt_0/3/) or, said to be a guess, its place in name order. The report says, per rank, how many GEMM
    calls were paired; a diff that pairs nothing exits 2 and says why.
    """
    with translate_errors():
        options = _options(log_format, strict, jobs, quiet, rank_from)
        caps = _caps(caps_path)
        emulating = _emulate_settings(quiet=quiet, **emulation)
        if emulating is not None and emit_tunableop:
            raise CliError("--emulate and --emit-tunableop are two jobs: run them one at a time")
        if reference is not None:
            report = api.diff_many(
                list(runs),
                reference,
                tp=tp,
                rank=rank,
                caps=caps,
                min_coverage=min_coverage,
                options=options,
                fail_on=fail_on,
                emulate=emulating,
            )
        else:
            sharded, unsharded, note = api.split_diff_arguments(runs)
            if note:
                warn(f"note: {note}")
            if emit_tunableop:
                report = _emit_tunableop(
                    emit_tunableop,
                    sharded,
                    unsharded,
                    list(runs),
                    quiet,
                    tp=tp,
                    rank=rank,
                    caps=caps,
                    min_coverage=min_coverage,
                    options=options,
                    fail_on=fail_on,
                )
            else:
                report = api.diff(
                    sharded,
                    unsharded,
                    tp=tp,
                    rank=rank,
                    caps=caps,
                    min_coverage=min_coverage,
                    options=options,
                    fail_on=fail_on,
                    emulate=emulating,
                )
        _report(report, fmt, output, quiet, list(runs) + ([reference] if reference else []), summary_file, exit_zero)


def _emit_tunableop(
    path: str, sharded: list[str], unsharded: list[str], inputs: list[str], quiet: bool, **kwargs: Any
) -> Report:
    """Run the diff, write the TunableOp file of its pins to `path`, and list what could not be pinned."""
    from blaslog.tunableop import render

    report, pinning = api.tunableop_pins(sharded, unsharded, **kwargs)
    _write(render(pinning), path, inputs)
    warn(f"wrote {path}: {len(pinning.rows)} GEMMs pinned, {len(pinning.cannot)} cannot be pinned")
    for (op, params), (solution, why) in sorted(pinning.rows.items()):
        if not quiet:
            warn(f"  pinned {op},{params} -> {solution}: {why}")
    for label, why in sorted(pinning.cannot.items()):
        warn(f"  {label}: {why}")
    for note in pinning.notes:
        warn(f"note: {note}")
    return report


@cli.command("check", epilog=EXIT_STATUS_FINDINGS + _CLASSES_HELP)
@click.argument("logs", nargs=-1, required=True)
@click.option(
    "--batch-invariance",
    "batch",
    is_flag=True,
    help="Also group GEMMs that differ only in one dimension (the token count) and show which ranges ran "
    "which algorithm.",
)
@click.option(
    "--tunableop",
    "tunableop",
    multiple=True,
    metavar="FILE",
    help="The run's TunableOp results file(s) (tunableop_results<N>.csv, one per GPU; or hipBLASLt tuning "
    "files): report GEMMs that did not run the tuned solution, ran untuned, or were tuned differently "
    "on another GPU.",
)
@caps_option
@emulate_options
@fail_options
@input_options
@output_options("check")
def check_cmd(
    logs: tuple[str, ...],
    batch: bool,
    tunableop: tuple[str, ...],
    caps_path: str | None,
    emulation: dict[str, Any],
    fail_on: str,
    exit_zero: bool,
    summary_file: str | None,
    log_format: tuple[str, ...],
    strict: bool,
    jobs: int,
    fmt: str,
    output: str | None,
    quiet: bool,
) -> None:
    """Find GEMMs inside one run that ran with different algorithms, flags or solutions (each file on its own).

    \b
    blaslog check run.log --tunableop tunableop_results0.csv
    blaslog check 'logs/rank*.log' --tunableop 'logs/tunableop_results*.csv'
    """
    with translate_errors():
        options = _options(log_format, strict, jobs, quiet)
        emulating = _emulate_settings(quiet=quiet, **emulation)
        if tunableop:
            if emulating is not None:
                raise CliError("--emulate is for the algorithm findings of check and diff; leave out --tunableop")
            report = api.check_tunableop(
                logs, tunableop, caps=_caps(caps_path), batch=batch, options=options, fail_on=fail_on
            )
        else:
            report = api.check(
                logs, caps=_caps(caps_path), batch=batch, options=options, fail_on=fail_on, emulate=emulating
            )
        _report(report, fmt, output, quiet, [*logs, *tunableop], summary_file, exit_zero)


@cli.command("emulate", epilog=EXIT_STATUS)
@click.argument("records", nargs=-1, metavar="[LOG:LINE [LOG:LINE]]")
@click.option("--shape", metavar="MxNxK", help="The (unsharded) GEMM's m, n and k, e.g. 64x1024x32.")
@click.option(
    "--numerics",
    metavar="VALUE",
    help="The arithmetic of the GEMM given by --shape: cuBLASLt numerical impl flags (0x40202), rocblas:FLAGS, or "
    "a name (tf32, fma-fp32, fp16, bf16, fp16-acc16, fp8-e4m3, fp16-alt-impl ...).",
)
@click.option(
    "--against",
    metavar="VALUE",
    help="The other side's arithmetic (same spellings), run sharded by --tp over k.",
)
@click.option(
    "--tp",
    type=click.IntRange(1, 4096),
    default=1,
    show_default=True,
    help="Ranks the --against side splits k over (its partial products summed in the output type, in rank order).",
)
@caps_option
@emulate_settings_options
@_collected
@output_options("emulate")
def emulate_cmd(
    records: tuple[str, ...],
    shape: str | None,
    numerics: str | None,
    against: str | None,
    tp: int,
    caps_path: str | None,
    emulation: dict[str, Any],
    fmt: str,
    output: str | None,
    quiet: bool,
) -> None:
    """Emulate one GEMM's arithmetic on two sides, bit for bit, and say how far apart they put its outputs.

    \b
    blaslog emulate --gpu A100 --shape 64x1024x32 --numerics 0x40202 --against 0x80201 --tp 4
    blaslog emulate --gpu MI250X --shape 4096x4096x4096 --numerics fp16 --against fp16-alt-impl
    blaslog emulate logs/tp4/blaslt_0.log:1 logs/tp1.log:1 --gpu A100   (two log records; numerics from --caps)
    blaslog emulate logs/tp1.log:1 --gpu A100 --numerics tf32 --against fma-fp32   (a record's shape and types)

    The metric is |Δ| / Σ_k |a_ik·b_kj| over sampled output elements, each with its full k; inputs are drawn
    from N(0, 1) x --scale with --seed (or sampled from --inputs). Needs blaslog[emulate].
    """
    with translate_errors():
        settings = _emulate_settings(quiet=quiet, **emulation)
        from blaslog.emulate.gemm import cli_sides

        k, first, second, source = cli_sides(
            list(records),
            shape=shape,
            numerics=numerics,
            against=against,
            tp=tp,
            caps=_caps(caps_path),
            gpu=settings.gpu,
        )
        report = api.emulate_gemm(k=k, first=first, second=second, settings=settings, source=source)
        _report(report, fmt, output, quiet, list(records))


@cli.command("summary", epilog=EXIT_STATUS)
@click.argument("logs", nargs=-1, required=True)
@caps_option
@input_options
@output_options("summary")
def summary_cmd(
    logs: tuple[str, ...],
    caps_path: str | None,
    log_format: tuple[str, ...],
    strict: bool,
    jobs: int,
    fmt: str,
    output: str | None,
    quiet: bool,
) -> None:
    """What a run did: distinct GEMM signatures with call counts, threads and the algorithms each used."""
    with translate_errors():
        report = api.summary(logs, caps=_caps(caps_path), options=_options(log_format, strict, jobs, quiet))
        _report(report, fmt, output, quiet, logs)


@cli.command("decode-flags", epilog=EXIT_STATUS, context_settings={"ignore_unknown_options": True})
@click.argument("values", nargs=-1, required=True)
@click.option(
    "--lib",
    type=click.Choice(["cublaslt", "rocblas"]),
    default="cublaslt",
    show_default=True,
    help="Whose flags: cuBLASLt numerical impl flags, or rocblas_gemm_flags.",
)
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="Output format.",
)
@click.option("--json", "as_json", is_flag=True, hidden=True, help="Same as --format json.")
@click.option(
    "--output", "-o", type=click.Path(), callback=_output_path, help="Write the output to FILE instead of stdout."
)
def decode_flags_cmd(values: tuple[str, ...], lib: str, fmt: str, as_json: bool, output: str | None) -> None:
    """Decode flags values (hex or decimal), or encode names into a value.

    \b
    blaslog decode-flags 0x40202 0x80201
    blaslog decode-flags HMMA ACCUMULATOR_32F INPUT_TF32
    blaslog decode-flags --lib rocblas 4
    """
    from blaslog.flags import decode_values
    from blaslog.reporters.json import dumps

    with translate_errors():
        decoded = decode_values(values, lib)
        if fmt == "json" or as_json:
            _write(dumps([d.to_dict() for d in decoded], indent=2) + "\n", output, ())
            return
        lines = []
        for d in decoded:
            lines.append(f"{d.hex} ({d.value}): {d.summary}")
            lines.extend(f"  {hex(bit.value):>12}  {bit.name:<20} {bit.group:<15} {bit.meaning}" for bit in d.bits)
            if d.unknown:
                lines.append(f"  {hex(d.unknown):>12}  unknown bits 0x{d.unknown:x} (not in the {lib} tables)")
            if not d.bits and not d.unknown:
                lines.append("  (no bits set)")
        _write("\n".join(lines) + "\n", output, ())


@cli.command("probe", epilog=EXIT_STATUS)
@click.option("--algo-id", type=int, help="Algorithm id to probe.")
@click.option("--compute-type", default="COMPUTE_32F", show_default=True, help="cublasComputeType_t name.")
@click.option("--scale-type", default="R_32F", show_default=True, help="cudaDataType_t of alpha/beta.")
@click.option("--types", default="R_32F,R_32F,R_32F,R_32F", show_default=True, help="A,B,C,D data types.")
@click.option(
    "--from",
    "from_logs",
    multiple=True,
    metavar="LOG",
    help="Probe every distinct algorithm configuration found in LOG (repeatable).",
)
@click.option(
    "--output",
    "-o",
    "out",
    type=click.Path(dir_okay=False),
    help="Write (or update) a caps file, for --caps of the other commands.",
)
@click.option("--out", "out_alias", type=click.Path(dir_okay=False), hidden=True, help="Same as --output.")
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="Output format of what was learnt (on stdout).",
)
@click.option("--json", "as_json", is_flag=True, hidden=True, help="Same as --format json.")
def probe_cmd(
    algo_id: int | None,
    compute_type: str,
    scale_type: str,
    types: str,
    from_logs: tuple[str, ...],
    out: str | None,
    out_alias: str | None,
    fmt: str,
    as_json: bool,
) -> None:
    """Ask libcublasLt what algorithms do: numerical impl flags, tiles, stages, split-K, alignments.

    Needs an NVIDIA GPU and libcublasLt (found through BLASLOG_CUBLASLT, the nvidia-cublas wheels, or the
    system's libcublasLt.so.N). Without them it says which is missing and exits 2; every other command
    works without it. The caps file it writes lets machines without a GPU class differences (--caps).
    """
    from blaslog import native
    from blaslog.reporters.json import dumps

    out = out or out_alias
    with translate_errors():
        configs = api.probe_configs(
            from_logs,
            algo_id=algo_id,
            compute_type=compute_type,
            scale_type=scale_type,
            types=[t.strip() for t in types.split(",")],
        )
        try:
            probed = native.probe(configs)
        except BlaslogError as exc:
            partial = getattr(exc, "partial", None)
            if partial is None:
                raise
            warn(f"blaslog: error: {exc}")
            probed = partial
        if fmt == "json" or as_json:
            _echo(
                dumps(
                    {
                        "library": probed.library,
                        "version": probed.version_text,
                        "gpu": probed.gpu,
                        "entries": probed.entries,
                        "errors": [{"config": c, "error": e} for c, e in probed.errors],
                    },
                    indent=2,
                )
                + "\n"
            )
        else:
            _echo(_probe_text(probed))
        for config, error in probed.errors:
            warn(f"blaslog: error: algoId {config.get('algoId')} {config.get('computeType')}: {error}")
        if out:
            existing = _caps(out) if os.path.exists(out) else None
            caps = api.caps_from_probe(probed, existing)
            _write(dumps(caps.to_json(), indent=2) + "\n", out, list(from_logs))
            warn(f"wrote {len(caps.entries)} configurations to {out}")
        if probed.errors or not probed.entries:
            sys.exit(2)


RECORD_EXIT_STATUS = """\b
Exit status:
  the command's own (128+N when signal N ended it; 127: not found)
  2    trouble before the command ran: bad usage, --out exists (give --force)
  130  interrupted"""


@cli.command(
    "record",
    epilog=RECORD_EXIT_STATUS,
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@click.option(
    "--out",
    "-o",
    "out",
    type=click.Path(file_okay=False),
    help="The run folder to write (default: runs/YYYYmmdd-HHMMSS); an existing one only with --force.",
)
@click.option(
    "--level",
    type=click.IntRange(1, 5),
    default=2,
    show_default=True,
    help="cuBLASLt log level: 2 logs one line per GEMM with its algorithm, 5 every API call (some 20 lines "
    "per GEMM); rocBLAS and hipBLASLt get their bench lines, plus trace/API lines above 2.",
)
@click.option(
    "--libs",
    default=",".join(("cublaslt", "rocblas", "hipblaslt")),
    show_default=True,
    metavar="LIB,...",
    help="Libraries to log: cublaslt, cublas, rocblas, hipblaslt.",
)
@click.option(
    "--no-compress", "no_compress", is_flag=True, help="Leave the logs plain (default: gzip them at the end)."
)
@click.option("--force", is_flag=True, help="Replace the run folder --out names if one is there.")
@click.option(
    "--probe",
    "probe",
    is_flag=True,
    help="After the command: probe every cuBLASLt algorithm it ran into caps.json in the folder (needs the "
    "GPU and libcublasLt; a failure is a note in run.json, never a lost run).",
)
def record_cmd(
    command: tuple[str, ...], out: str | None, level: int, libs: str, no_compress: bool, force: bool, probe: bool
) -> None:
    """Run COMMAND with BLAS logging on and leave a run folder: one log per rank and library, and run.json.

    \b
    blaslog record --out runs/tp4 -- torchrun --nproc-per-node 4 train.py --tp 4
    blaslog record --out runs/tp1 -- python train.py --tp 1
    blaslog diff runs/tp4 runs/tp1

    Python processes learn their rank from the launcher (RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID,
    LOCAL_RANK) through a start-up hook blaslog puts first on PYTHONPATH; others are named by process id.
    COMMAND's output passes through unchanged and its exit status is blaslog's; Ctrl-C and SIGTERM go to it,
    and the folder is still written. diff, check, summary and parse read the folder as one run.
    """
    from blaslog.record import record

    with translate_errors():
        result = record(
            command,
            out=out,
            level=level,
            libs=libs,
            compress=not no_compress,
            force=force,
            probe=probe,
            on_note=lambda note: warn(f"note: {note}"),
        )
        files = result.manifest.get("files") or []
        ranks = result.manifest.get("ranks") or {}
        warn(
            f"blaslog: recorded {result.folder}: {len(files)} log files of {len(ranks)} ranks, exit status "
            f"{result.exit_status}"
        )
    sys.exit(result.exit_status)


#: The scalar capabilities `probe` prints for each algorithm.
_PROBE_KEYS = (
    "splitKSupport",
    "reductionSchemeMask",
    "ctaSwizzlingSupport",
    "customOptionMax",
    "epilogueMask",
    "minAlignmentA",
    "minAlignmentB",
    "minAlignmentC",
    "minAlignmentD",
)


def _probe_text(probed: Any) -> str:
    gpu = probed.gpu.get("name") or probed.gpu.get("error") or "unknown GPU"
    cc = probed.gpu.get("compute_capability")
    lines = [f"libcublasLt {probed.version_text} ({probed.library}); GPU: {gpu}" + (f" (sm {cc})" if cc else "")]
    for entry in probed.entries:
        lines.append(
            f"algoId {entry['algoId']} {entry['computeType']} scale {entry['scaleType']} "
            f"{entry['Atype']},{entry['Btype']},{entry['Ctype']},{entry['Dtype']}"
        )
        lines.append(f"  numerical impl flags {entry['numericalImplFlags']}: {entry['summary']}")
        lines.append(f"    {' | '.join(entry['decoded'])}")
        lines.extend(f"  {key}: {entry.get(key)}" for key in _PROBE_KEYS)
        for key in ("tiles", "stages"):
            value = entry.get(key)
            lines.append(f"  {key}: {', '.join(value) if isinstance(value, list) else value}")
    return "\n".join(lines) + "\n"


def main() -> None:
    """Entry point of the console script and `python -m blaslog`."""
    # A command makes objects by the hundred thousand and keeps most (distinct calls, rows, report cells), so
    # the collector's default young generation (700 objects) has it walk them again and again for cycles
    # that blaslog does not make: some 15% of a summary of 25,000 distinct calls. Collect far less often (as
    # mypy does), and never walk what the imports made.
    gc.freeze()
    gc.set_threshold(100_000, 20, 20)
    try:
        cli(prog_name="blaslog")
    except KeyboardInterrupt:
        click.echo("blaslog: interrupted", err=True)
        sys.exit(130)


__all__ = ["cli", "main"]
