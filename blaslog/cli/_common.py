"""What the commands share: the options of reading and reporting, and writing a report and its exit status."""

from __future__ import annotations

import errno
import functools
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn

import click

from blaslog import api
from blaslog.errors import BlaslogError
from blaslog.records import FileSummary
from blaslog.report import FailOn, Report

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

FOLDER_FORMATS = {
    "parse": {
        "parquet": "-f only: Parquet files of the GEMM records under the --output folder, partitioned by run and "
        "rank (pip install 'blaslog[parquet]')",
    },
}
"""The --format values that write a folder, not a report (no reporter renders them; --report takes none)."""


class _Formats(Mapping[str, tuple[str, ...]]):
    """The output formats each reporting command can write, read from the reporters' declarations (see
    blaslog.reporters: each declares its `commands`), the default first; parse adds its folder format."""

    def __getitem__(self, command: str) -> tuple[str, ...]:
        from blaslog.reporters import offered

        names = (*offered(command), *FOLDER_FORMATS.get(command, {}))
        if not names:
            raise KeyError(command)
        return tuple(sorted(names, key=lambda name: name != DEFAULT_FORMAT))  # a stable sort: the rest as offered

    def __iter__(self) -> Iterator[str]:
        from blaslog.reporters import REPORTERS

        commands = {command: None for name in REPORTERS for command in REPORTERS.declaration(name, "commands", ())}
        return iter({**commands, **dict.fromkeys(FOLDER_FORMATS)})

    def __len__(self) -> int:
        return sum(1 for _ in self)


FORMATS: Mapping[str, tuple[str, ...]] = _Formats()
"""The output formats each reporting command can fill (CI annotation formats carry findings: diff and check)."""

DEFAULT_FORMAT = "table"
"""The --format of every reporting command when none is given."""


class FormatChoice(click.Choice[str]):
    """The --format values of one command, asked of the registry each time (a format module added is offered)."""

    def __init__(self, command: str) -> None:
        self.command = command
        super().__init__(())

    @property  # type: ignore[override]
    def choices(self) -> tuple[str, ...]:
        return FORMATS[self.command]

    @choices.setter
    def choices(self, value: Any) -> None:
        """Set by click.Choice.__init__; the choices are the registry's."""


def describe_format(command: str, name: str) -> str:
    """The one line of --help on a --format value of `command`."""
    from blaslog.reporters import describe

    folder = FOLDER_FORMATS.get(command, {})
    return folder[name] if name in folder else describe(name)


class ReportingCommand(click.Command):
    """A command whose --help lists its output formats, each with its one line, under the options."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_options(ctx, formatter)
        for param in self.params:
            if isinstance(param.type, FormatChoice):
                command = param.type.command
                with formatter.section("Output formats (-f/--format, --report FORMAT=PATH)"):
                    formatter.write_dl([(name, describe_format(command, name)) for name in FORMATS[command]])


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
    """--format / --output / --report / --quiet of a reporting command."""

    def decorate(func: Any) -> Any:
        func = click.option(
            "--quiet",
            "-q",
            is_flag=True,
            help="No accounting or notes on stderr (errors and what was compared are still shown).",
        )(func)
        func = click.option(
            "--report",
            "reports",
            multiple=True,
            metavar="FORMAT=PATH",
            callback=functools.partial(_report_option, command),
            cls=_LazyHelpOption,
            help_text=lambda: (
                "Also write the report in FORMAT to the file PATH (repeatable): one read of the "
                "logs, several reports (e.g. --report sarif=blaslog.sarif --report junit=junit.xml). Formats: "
                + ", ".join(_report_formats(command))
                + "."
            ),
        )(func)
        func = click.option(
            "--output",
            "-o",
            type=click.Path(),
            callback=_output_path,
            help="Write the report to FILE (replaced only when "
            "the run succeeds) instead of stdout (`-`: stdout)"
            + (" (a folder for --format parquet)." if command in FOLDER_FORMATS else "."),
        )(func)
        func = click.option(
            "--format",
            "-f",
            "fmt",
            type=FormatChoice(command),
            default=DEFAULT_FORMAT,
            show_default=True,
            callback=_format_ready,
            help="Output format (listed below).",
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


def _report_formats(command: str) -> tuple[str, ...]:
    """The formats --report writes for `command` (a file each: not a folder format, such as parquet)."""
    return tuple(name for name in FORMATS[command] if name not in FOLDER_FORMATS.get(command, {}))


def _extra_ready(fmt: str) -> None:
    """A format whose extra is not installed is refused when the options are read, before any input is."""
    from blaslog.reporters import REPORTERS, ready

    if fmt in REPORTERS:
        try:
            ready(fmt)
        except BlaslogError as exc:
            raise CliError(str(exc)) from None


def _format_ready(ctx: click.Context, param: click.Parameter, value: str) -> str:
    _extra_ready(value)
    return value


def _report_option(
    command: str, ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> list[tuple[str, str]]:
    """--report FORMAT=PATH, each FORMAT one of the command's (and its extra installed), each PATH a file name."""
    reports = []
    for value in values:
        fmt, equals, path = value.partition("=")
        if not equals or not fmt:
            raise click.BadParameter(f"{value!r}: give FORMAT=PATH, e.g. sarif=blaslog.sarif")
        if fmt not in _report_formats(command):
            raise click.BadParameter(
                f"{fmt!r} is not a format {command} writes; choose from {', '.join(_report_formats(command))}"
            )
        if path in ("", "-"):
            raise click.BadParameter(f"{value!r}: give a file name (the --format report is the one on standard output)")
        _extra_ready(fmt)
        reports.append((fmt, path))
    return reports


def report_targets(reports: Sequence[tuple[str, str]], output: str | None, inputs: Sequence[str]) -> None:
    """Refuse, before any input is read, report files that are an input, not a regular file, in no folder, or
    named twice (by two --report, or by --report and -o)."""
    from blaslog.stream import _check_target

    seen: dict[str, str] = {}
    for option, path in [("--output", output)] + [(f"--report {fmt}", path) for fmt, path in reports]:
        if path is None:
            continue
        target = os.path.realpath(path)
        if target in seen:
            raise CliError(f"{path}: named by {seen[target]} and by {option}; give each report its own file")
        seen[target] = option
        _check_target(path, target, inputs)


def deprecated_alias(name: str, dest: str, instead: str, **kwargs: Any) -> Callable[[Any], Any]:
    """An old spelling of an option: hidden from --help, listed as deprecated in the README (Deprecated
    spellings), and still working, with a warning that names the spelling to use instead."""

    def said(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value:
            warn(f"blaslog: warning: {name} is deprecated: use {instead}")
        return value

    return click.option(name, dest, hidden=True, callback=said, help=f"Deprecated: use {instead}.", **kwargs)


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
        type=click.Choice([threshold.value for threshold in FailOn]),
        default=FailOn.PRECISION.value,
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
    reports: Sequence[tuple[str, str]] = (),
) -> NoReturn:
    """Print the accounting, notes and errors, write the report (and each --report FORMAT=PATH), and exit with
    the report's status."""
    from blaslog.reporters import get_reporter
    from blaslog.reporters.markdown import render_markdown

    _account(report.files, quiet)
    for message in report.failed:
        warn(f"blaslog: error: {message}")
    for note in report.notes:
        if not quiet or note.startswith(("compared:", "note: ")):  # what was compared, and how it was understood
            warn(note)
    status = exit_status(report, exit_zero)
    summarised = False
    for one_format, path in [*reports, (fmt, output)]:
        reporter = get_reporter(one_format).for_output(path, _color())
        summarised = summarised or reporter.step_summary
        _write(reporter.render(report), path, inputs, keep=status in (0, 1))
    target = summary_file or (os.environ.get("GITHUB_STEP_SUMMARY") if summarised else None)
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


def _color() -> str:
    """The --color choice of the command running (`auto` outside one)."""
    ctx = click.get_current_context(silent=True)
    return str(ctx.meta.get("blaslog.color", "auto")) if ctx else "auto"


def exit_status(report: Report, exit_zero: bool = False) -> int:
    """The exit status of a command, from what it came to (a Report: what failed, the findings at its
    --fail-on), the one place the commands map an outcome to one: 2 when something failed (an input not read
    or cut short, no record anywhere, a probe that failed); else 1 for findings at or above the report's
    --fail-on (0 with `exit_zero`); else 0. (Errors raised are exit 2 by translate_errors; `record` exits with
    its command's own status.)"""
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
