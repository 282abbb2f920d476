"""The `blaslog` command: options -> one library call -> a reporter -> an exit status.

Exit status (like diff(1)):
  0  success, nothing at or above --fail-on
  1  findings at or above --fail-on (diff, check)
  2  trouble: bad usage, unreadable input, nothing parsable, --strict parse errors, probe failures
  130 interrupted (Ctrl-C)
"""

from __future__ import annotations

import contextlib
import os
import queue
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import click

from blaslog import __version__
from blaslog.errors import BlaslogError, InputError
from blaslog.formats import FORMAT_CLASSES, FORMAT_NAMES
from blaslog.records import FileSummary, GemmCall, ParseResult
from blaslog.report import CLASSES, FAIL_ON, Report

EXIT_CODES = """\b
Exit status:
  0    success; no finding at or above --fail-on
  1    findings at or above --fail-on (diff, check)
  2    trouble: bad usage, unreadable input, nothing parsable, --strict errors
  130  interrupted"""


class CliError(click.ClickException):
    """An error the CLI reports in one line and exit status 2."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"blaslog: error: {_defuse(self.format_message())}", err=True)


def _defuse(text: str) -> str:
    from blaslog.reporters._base import defuse_commands, printable

    return defuse_commands("\n".join(printable(line) for line in text.split("\n")))


def warn(message: str) -> None:
    """A line on stderr (never read as a CI workflow command)."""
    click.echo(_defuse(message), err=True)


@contextlib.contextmanager
def translate_errors() -> Iterator[None]:
    """Turn library errors into one-line messages and exit status 2; Ctrl-C into 130."""
    try:
        yield
    except BlaslogError as exc:
        raise CliError(str(exc)) from exc
    except KeyboardInterrupt:
        click.echo("blaslog: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)


def _reporter_names() -> list[str]:
    from blaslog.reporters import REPORTERS

    return sorted(REPORTERS)


def output_options(default: str = "table", extra: tuple[str, ...] = ()) -> Any:
    """--format / --output / --quiet, shared by the reporting commands."""
    def decorate(func: Any) -> Any:
        func = click.option("--quiet", "-q", is_flag=True, help="No accounting summary or notes on stderr.")(func)
        func = click.option("--output", "-o", type=click.Path(writable=True),
                            help="Write the report to FILE (only once the run succeeded) instead of stdout"
                                 + (" (a folder for --format parquet)." if extra else "."))(func)
        func = click.option("--format", "-f", "fmt", type=click.Choice(sorted([*_reporter_names(), *extra])),
                            default=default, show_default=True, help="Output format.")(func)
        return func
    return decorate


def input_options(func: Any) -> Any:
    """--log-format / --strict / --jobs, shared by the commands that read logs."""
    func = click.option("--jobs", "-j", type=click.IntRange(0, 256), default=0,
                        help="Processes to parse with (0, the default: one per CPU for inputs over 64 MB, else 1). "
                             "Several inputs are parsed side by side; one large input is cut into pieces.")(func)
    func = click.option("--strict", is_flag=True,
                        help="Stop at the first unparsable line (exit 2) instead of reporting it and going on.")(func)
    func = click.option("--log-format", "log_format", multiple=True, metavar="NAME",
                        help="Read only this log format (repeatable): " + ", ".join(FORMAT_NAMES) + ".")(func)
    return func


def caps_option(func: Any) -> Any:
    """--caps FILE."""
    return click.option("--caps", "caps_path", type=click.Path(dir_okay=False),
                        help="Caps file (blaslog probe --out) giving each algorithm's numerical impl flags.")(func)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110},
             epilog=EXIT_CODES)
@click.version_option(__version__, prog_name="blaslog")
def cli() -> None:
    """Find the GEMM algorithm differences behind numerical mismatches.

    Reads cuBLASLt (CUBLASLT_LOG_LEVEL=1..5), cuBLAS (CUBLAS_LOGINFO_DBG=1), rocBLAS (ROCBLAS_LAYER=1,2,4) and
    hipBLASLt (HIPBLASLT_LOG_LEVEL, HIPBLASLT_LOG_MASK=32) logs. A LOG is a file, a gzip file, a quoted glob
    (expanded in name order), or - for standard input.
    """


def _load_caps(path: str | None) -> Any:
    if path is None:
        return None
    from blaslog.caps import load_caps

    return load_caps(path)


def _jobs(jobs: int, names: Sequence[str]) -> int:
    if jobs:
        return jobs
    size = sum(os.path.getsize(n) for n in names if n != "-" and os.path.isfile(n))
    return min(os.cpu_count() or 1, 8) if size >= 64 << 20 else 1


def _read_runs(logs: Sequence[str], log_format: Sequence[str], strict: bool, jobs: int,
               quiet: bool) -> tuple[list[tuple[Any, FileSummary]], list[str]]:
    """Each readable input as a CompactRun (GEMMs only, compact) with its summary; unreadable ones reported."""
    from blaslog.runs import read_run

    good, failed = _openable(logs, strict)
    on_error = "raise" if strict else "warn"
    processes = _jobs(jobs, good)
    if processes > 1 and good and "-" not in good:
        from blaslog._parallel import read_runs_parallel

        return read_runs_parallel(good, log_format=list(log_format) or None, on_error=on_error, jobs=processes), failed
    results = []
    for name in good:
        progress = _progress(name, quiet)
        try:
            results.append(read_run(name, log_format=list(log_format) or None, on_error=on_error, progress=progress))
        finally:
            if progress is not None:
                progress.close()
    return results, failed


class _Progress:
    """A one-line progress display on stderr: bytes, GEMM records, rate."""

    def __init__(self, name: str, total: int) -> None:
        import time

        self.name, self.total, self.start, self.last = name, total, time.monotonic(), 0.0

    def __call__(self, done: int, gemms: int) -> None:
        import time

        now = time.monotonic()
        if now - self.last < 0.25:
            return
        self.last = now
        rate = done / max(now - self.start, 1e-9) / 1e6
        share = f" {100 * done / self.total:3.0f}%" if self.total else ""
        click.echo(f"\r{self.name}:{share} {done / 1e6:,.0f} MB, {gemms:,} GEMMs, {rate:,.0f} MB/s ", err=True, nl=False)

    def close(self) -> None:
        click.echo("\r\033[K", err=True, nl=False)


def _progress(name: str, quiet: bool) -> _Progress | None:
    """A progress display for a large input when stderr is a terminal and --quiet is not given."""
    if quiet or name == "-" or not sys.stderr.isatty():
        return None
    size = os.path.getsize(name) if os.path.isfile(name) else 0
    return _Progress(name, size) if size >= 32 << 20 else None


def _account(files: Sequence[FileSummary], quiet: bool, max_problems: int = 5) -> None:
    for s in files:
        if quiet and not s.unparsable_lines:
            continue
        if not quiet:
            warn(f"{s.path}: {s.lines} lines: {s.gemm_records} GEMM records, {s.other_records} other records "
                 f"({s.record_lines} lines), {s.foreign_lines} foreign lines, {s.unparsable_lines} unparsable")
        shown = [p for p in s.problems if not quiet or p.severity == "error"][:max_problems]
        for problem in shown:
            warn(problem.render())
        rest = len([p for p in s.problems if not quiet or p.severity == "error"]) - len(shown) + s.more_problems
        if rest > 0:
            warn(f"{s.path}: {rest} more problems (see --format json)")


def _emit(report: Report, fmt: str, output: str | None, quiet: bool, summary_file: str | None = None) -> None:
    from blaslog.reporters import get_reporter
    from blaslog.reporters.markdown import render_markdown

    text = get_reporter(fmt).render(report)
    if not quiet:
        for note in report.notes:
            warn(note)
    if output:
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise CliError(f"{output}: cannot write the report ({exc.strerror or exc})") from None
    else:
        click.echo(text, nl=False)
    target = summary_file or (os.environ.get("GITHUB_STEP_SUMMARY") if fmt == "github" else None)
    if target:
        try:
            with open(target, "a", encoding="utf-8") as handle:
                handle.write(render_markdown(report) + "\n")
        except OSError as exc:
            warn(f"blaslog: warning: cannot append the summary to {target} ({exc.strerror or exc})")


def _gemms(logs: Sequence[str], log_format: Sequence[str], strict: bool, jobs: int, quiet: bool,
           runs_out: list[Any] | None = None) -> tuple[list[Any] | None, list[FileSummary], list[str]]:
    """Every GEMM call of the inputs (compactly stored), their summaries, and the inputs that failed. With
    `runs_out`, the calls are left in the runs appended to it (None for the calls) when no input holds
    the same calls twice."""
    runs, failed = _read_runs(logs, log_format, strict, jobs, quiet)
    files = [summary for _, summary in runs]
    _account(files, quiet)
    if not runs:
        sys.exit(2)  # every input failed to open; each was reported
    if all(s.gemm_records + s.other_records == 0 for s in files):
        raise CliError("no BLAS log records found in the inputs")
    from blaslog.runs import duplicate_dialects, one_dialect_per_call

    compact = [run for run, _ in runs]
    if runs_out is not None and not duplicate_dialects(call for run in compact for call in run.calls)[0]:
        runs_out.extend(compact)
        return None, files, failed
    gemms, notes = one_dialect_per_call([occurrence for run in compact for occurrence in run], compact)
    if not quiet:
        for note in notes:
            warn(f"note: {note}")
    return gemms, files, failed


@cli.command("parse", epilog=EXIT_CODES)
@click.argument("logs", nargs=-1, required=True)
@click.option("--kind", type=click.Choice(["gemm", "all"]), default="gemm", show_default=True,
              help="gemm: executed GEMMs only; all: every record (API calls, errors, info too).")
@click.option("--parquet", "parquet_dir", type=click.Path(file_okay=False),
              help="Also write the GEMM records as Parquet under DIR, partitioned by run (the input's folder, or "
                   "--run) and rank (needs pyarrow: pip install 'blaslog[parquet]').")
@click.option("--run", "run_name", help="Run name for --parquet partitions.")
@caps_option
@input_options
@output_options(extra=("parquet",))
def parse_cmd(logs: tuple[str, ...], kind: str, parquet_dir: str | None, run_name: str | None,
              caps_path: str | None, log_format: tuple[str, ...], strict: bool, jobs: int, fmt: str,
              output: str | None, quiet: bool) -> None:
    """Print the records of LOG... (every executed GEMM; with --kind all, every record).

    With --format json, jsonl or csv the records are written as they are read, in bounded memory.
    """
    from blaslog.reporters import get_reporter
    from blaslog.views import parse_report

    with translate_errors():
        caps = _load_caps(caps_path)
        summaries: list[FileSummary] = []
        names, failed = _openable(logs, strict)
        if not names:
            sys.exit(2)  # every input failed to open; each was reported
        if fmt == "parquet":
            if not output:
                raise CliError("--format parquet writes a folder: give it with --output DIR")
            parquet_dir = output
        if parquet_dir:
            from blaslog.parquet import write_parquet

            files = write_parquet(names, parquet_dir, lambda name, out: _records(name, log_format, strict, "gemm",
                                                                                    out, quiet), run=run_name)
            _account(files, quiet)
            warn(f"wrote {sum(f.gemm_records for f in files)} GEMM records under {parquet_dir}")
            sys.exit(2 if failed or all(f.gemm_records == 0 for f in files) else 0)
        reporter = get_reporter(fmt)
        chunks = None
        if reporter.streams:
            chunks = _stream_parse(names, reporter, fmt, kind, caps_path, caps, log_format, strict, jobs, summaries,
                                   quiet)
            _write_stream(chunks, output)
        else:
            records = [record for name in names for record in _records(name, log_format, strict, kind, summaries,
                                                                         quiet)]
        _account(summaries, quiet)
        if all(s.gemm_records + s.other_records == 0 for s in summaries):
            if output and chunks is not None:
                Path(output + ".part").unlink(missing_ok=True)
            warn("blaslog: error: no BLAS log records found; was logging on? (CUBLASLT_LOG_LEVEL=2 or higher, "
                 "CUBLAS_LOGINFO_DBG=1, ROCBLAS_LAYER=1, HIPBLASLT_LOG_LEVEL=2 or HIPBLASLT_LOG_MASK=32)")
            sys.exit(2)
        if chunks is None:
            _emit(parse_report(ParseResult(tuple(records), tuple(summaries)), kind=kind, caps=caps), fmt, output,
                  quiet)
        elif output:
            os.replace(output + ".part", output)
    sys.exit(2 if failed else 0)


def _stream_parse(names: list[str], reporter: Any, fmt: str, kind: str, caps_path: str | None, caps: Any,
                  log_format: Sequence[str], strict: bool, jobs: int, summaries: list[FileSummary],
                  quiet: bool) -> Any:
    """The text of `blaslog parse` for a streaming format, input by input; a large input is parsed in pieces by
    several processes, each writing its rows to a file that is copied out in order."""
    import tempfile

    from blaslog._parallel import splittable, stream_pieces
    from blaslog.views import record_rows

    yield reporter.stream_begin()
    any_rows = False
    for name in names:
        processes = _jobs(jobs, [name])
        if processes > 1 and splittable(name):
            with tempfile.TemporaryDirectory(prefix="blaslog-") as tmp:
                pieces, summary = stream_pieces(name, fmt=fmt, kind=kind, caps_path=caps_path,
                                                log_format=list(log_format) or None,
                                                on_error="raise" if strict else "warn", jobs=processes, tmp_dir=tmp)
                summaries.append(summary)
                for piece in pieces:
                    with open(piece, encoding="utf-8") as handle:
                        head = handle.read(1 << 20)
                        if not head:
                            continue
                        if not any_rows and reporter.first_separator and head.startswith(reporter.first_separator):
                            head = head[len(reporter.first_separator):]
                        any_rows = True
                        yield head
                        while block := handle.read(1 << 20):
                            yield block
                    os.remove(piece)  # free the disk as we go
            continue
        rows = record_rows(_records(name, log_format, strict, kind, summaries, quiet, lazy=True), caps,
                           reporter.shaped_rows)
        for text in reporter.stream_rows(rows, not any_rows):
            any_rows = True
            yield text
    yield reporter.stream_end(summaries, any_rows)


def _openable(logs: Sequence[str], strict: bool) -> tuple[list[str], list[str]]:
    """The inputs that can be opened; the others are reported (exit 2 at once with --strict)."""
    from blaslog.inputs import Reader, expand

    good, failed = [], []
    for name in expand(list(logs)):
        try:
            if name != "-":
                for closer in Reader(name)._open()[1]:
                    closer.close()
            good.append(name)
        except InputError as exc:
            warn(f"blaslog: error: {exc}")
            failed.append(name)
            if strict:
                raise CliError(str(exc)) from None
    return good, failed


def _records(name: str, log_format: Sequence[str], strict: bool, kind: str, summaries: list[FileSummary],
             quiet: bool, lazy: bool = False) -> Any:
    from blaslog.parse import iter_file

    progress = _progress(name, quiet)
    try:
        yield from iter_file(name, log_format=list(log_format) or None, on_error="raise" if strict else "warn",
                             summary_out=summaries, events=kind == "all", progress=progress, lazy=lazy)
    finally:
        if progress is not None:
            progress.close()


def _write_stream(chunks: Any, output: str | None) -> None:
    """Write streamed output to stdout, or to OUTPUT.part (renamed once the run succeeded)."""
    if output is None:
        _write_behind(lambda chunk: click.echo(chunk, nl=False), chunks)
        return
    try:
        with open(output + ".part", "w", encoding="utf-8") as handle:
            _write_behind(handle.write, chunks)
    except OSError as exc:
        raise CliError(f"{output}: cannot write the report ({exc.strerror or exc})") from None
    except BaseException:
        Path(output + ".part").unlink(missing_ok=True)
        raise


def _write_behind(write: Any, chunks: Any) -> None:
    """``for chunk in chunks: write(chunk)``, the writes done by a second thread: the system calls that move
    gigabytes of JSON into a pipe or file then run while the next records are parsed. An error in a write is
    raised here."""
    pending: queue.Queue[Any] = queue.Queue(maxsize=16)
    failed: list[BaseException] = []

    def writer() -> None:
        while (chunk := pending.get()) is not None:
            if not failed:
                try:
                    write(chunk)
                except BaseException as exc:
                    failed.append(exc)

    thread = threading.Thread(target=writer, name="blaslog-writer", daemon=True)
    thread.start()
    try:
        for chunk in chunks:
            if failed:
                break
            pending.put(chunk)
    finally:
        pending.put(None)
        thread.join()
    if failed:
        raise failed[0]


def _fail_options(func: Any) -> Any:
    func = click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings (report-only CI steps).")(func)
    func = click.option("--fail-on", type=click.Choice(list(FAIL_ON)), default="precision", show_default=True,
                        help="Exit 1 when a finding of this class or a more severe one is found "
                             "(precision includes unknown).")(func)
    func = click.option("--summary", "summary_file", type=click.Path(dir_okay=False),
                        help="Append a Markdown summary to FILE (default with --format github: $GITHUB_STEP_SUMMARY).")(func)
    return func


def _finish(report: Report, fmt: str, output: str | None, quiet: bool, fail_on: str, exit_zero: bool,
            summary_file: str | None, failed: list[str]) -> None:
    _emit(report, fmt, output, quiet, summary_file)
    if failed:
        sys.exit(2)
    sys.exit(0 if exit_zero else report.exit_status(fail_on))


@cli.command("diff", epilog=EXIT_CODES + "\n\nFinding classes:\n\b\n" + "\n".join(f"  {k:10} {v}" for k, v in CLASSES.items()))
@click.argument("sharded")
@click.argument("unsharded")
@click.option("--tp", type=click.IntRange(1, 4096), help="Tensor-parallel degree (inferred from the logs when not given).")
@click.option("--rank", type=int, help="Compare only the RANK-th sharded file (0-based, files sorted by name).")
@caps_option
@_fail_options
@input_options
@output_options()
def diff_cmd(sharded: str, unsharded: str, tp: int | None, rank: int | None, caps_path: str | None,
             fail_on: str, exit_zero: bool, summary_file: str | None, log_format: tuple[str, ...], strict: bool,
             jobs: int, fmt: str, output: str | None, quiet: bool) -> None:
    """Compare a sharded (tensor-parallel) run with an unsharded run, GEMM by GEMM.

    SHARDED and UNSHARDED are each a log file or a quoted glob ('logs/tp4/blaslt_*.log') of
    per-rank files. Every sharded file is compared with the unsharded run; the report says which differ.
    """
    from blaslog.diff import diff_runs
    from blaslog.inputs import expand
    from blaslog.views import diff_report

    with translate_errors():
        caps = _load_caps(caps_path)
        sharded_names = expand([sharded])
        if rank is not None:
            if not 0 <= rank < len(sharded_names):
                raise CliError(f"--rank {rank}: the sharded side has {len(sharded_names)} files (0..{len(sharded_names) - 1})")
            sharded_names = [sharded_names[rank]]
        unsharded_names = expand([unsharded])
        if len(unsharded_names) > 1:
            warn(f"note: {len(unsharded_names)} unsharded files given; {unsharded_names[0]} is the reference")
            unsharded_names = unsharded_names[:1]
        refs, failed_u = _read_runs(unsharded_names, log_format, strict, jobs, quiet)
        _account([summary for _, summary in refs], quiet)
        if failed_u or not refs or not len(refs[0][0]):
            raise CliError(f"{unsharded}: no GEMM records to compare with (a level-2 or higher log is needed)")
        from blaslog.runs import one_dialect_per_call

        ref_run, ref_summary = refs[0]
        ref_gemms, _ = one_dialect_per_call(list(ref_run), [ref_run])
        sides, failed = _read_runs(sharded_names, log_format, strict, jobs, quiet)
        results = []
        summaries: list[FileSummary] = []
        for run, summary in sides:
            _account([summary], quiet)
            summaries.append(summary)
            if not len(run):
                warn(f"blaslog: error: {summary.path}: no GEMM records")
                failed.append(summary.path)
                continue
            side_gemms, _ = one_dialect_per_call(list(run), [run])
            results.append(diff_runs(side_gemms, ref_gemms, tp=tp, caps=caps, sharded_file=summary.path,
                                     unsharded_file=ref_summary.path))
        if not results:
            raise CliError(f"{sharded}: no GEMM records to compare")
        report = diff_report(results, summaries, [ref_summary])
        _finish(report, fmt, output, quiet, fail_on, exit_zero, summary_file, failed)


@cli.command("check", epilog=EXIT_CODES)
@click.argument("logs", nargs=-1, required=True)
@click.option("--batch-invariance", "batch", is_flag=True,
              help="Also group GEMMs that differ only in one dimension (the token count) and show which ranges ran "
                   "which algorithm.")
@caps_option
@_fail_options
@input_options
@output_options()
def check_cmd(logs: tuple[str, ...], batch: bool, caps_path: str | None, fail_on: str, exit_zero: bool,
              summary_file: str | None, log_format: tuple[str, ...], strict: bool, jobs: int, fmt: str,
              output: str | None, quiet: bool) -> None:
    """Find GEMMs inside one run that ran with different algorithms, flags or solutions (each file on its own)."""
    from blaslog.views import check_report

    with translate_errors():
        caps = _load_caps(caps_path)
        gemms, files, failed = _gemms(logs, log_format, strict, jobs, quiet)
        report = check_report(gemms, files, caps=caps, batch=batch)
        _finish(report, fmt, output, quiet, fail_on, exit_zero, summary_file, failed)


@cli.command("summary", epilog=EXIT_CODES)
@click.argument("logs", nargs=-1, required=True)
@caps_option
@input_options
@output_options()
def summary_cmd(logs: tuple[str, ...], caps_path: str | None, log_format: tuple[str, ...], strict: bool, jobs: int,
                fmt: str, output: str | None, quiet: bool) -> None:
    """What a run did: distinct GEMM signatures with call counts, threads and the algorithms each used."""
    from blaslog.views import summary_report

    with translate_errors():
        caps = _load_caps(caps_path)
        runs: list[Any] = []
        gemms, files, failed = _gemms(logs, log_format, strict, jobs, quiet, runs_out=runs)
        _emit(summary_report(gemms, files, caps=caps, runs=runs), fmt, output, quiet)
    sys.exit(2 if failed else 0)


@cli.command("decode-flags")
@click.argument("values", nargs=-1, required=True)
@click.option("--lib", type=click.Choice(["cublaslt", "rocblas"]), default="cublaslt", show_default=True,
              help="Whose flags: cuBLASLt numerical impl flags, or rocblas_gemm_flags.")
@click.option("--json", "as_json", is_flag=True, help="JSON output.")
def decode_flags_cmd(values: tuple[str, ...], lib: str, as_json: bool) -> None:
    """Decode flags values (hex or decimal), or encode names into a value.

    \b
    blaslog decode-flags 0x40202 0x80201
    blaslog decode-flags HMMA ACCUMULATOR_32F INPUT_TF32
    blaslog decode-flags --lib rocblas 4 invalid-combination-20
    """
    from blaslog.flags import decode_flags, encode_flags
    from blaslog.reporters.json import dumps

    with translate_errors():
        numeric = [v for v in values if v.strip()[:1].isdigit()]
        if numeric and len(numeric) != len(values):
            raise CliError("give either numbers or names, not both")
        if numeric:
            decoded = [decode_flags(v, lib) for v in values]
        else:
            decoded = [decode_flags(encode_flags(list(values), lib), lib)]
        if as_json:
            click.echo(dumps([d.to_dict() for d in decoded], indent=2))
            return
        for d in decoded:
            click.echo(f"{d.hex} ({d.value}): {d.summary}")
            for bit in d.bits:
                click.echo(f"  {hex(bit.value):>12}  {bit.name:<20} {bit.group:<15} {bit.meaning}")
            if d.unknown:
                click.echo(f"  {hex(d.unknown):>12}  unknown bits 0x{d.unknown:x} (not in the {lib} tables)")
            if not d.bits and not d.unknown:
                click.echo("  (no bits set)")


@cli.command("probe", epilog=EXIT_CODES)
@click.option("--algo-id", type=int, help="Algorithm id to probe.")
@click.option("--compute-type", default="COMPUTE_32F", show_default=True, help="cublasComputeType_t name.")
@click.option("--scale-type", default="R_32F", show_default=True, help="cudaDataType_t of alpha/beta.")
@click.option("--types", default="R_32F,R_32F,R_32F,R_32F", show_default=True, help="A,B,C,D data types.")
@click.option("--from", "from_logs", multiple=True, metavar="LOG",
              help="Probe every distinct algorithm configuration found in LOG (repeatable).")
@click.option("--out", "out", type=click.Path(dir_okay=False), help="Write (or update) a caps file for --caps.")
@click.option("--json", "as_json", is_flag=True, help="JSON output.")
def probe_cmd(algo_id: int | None, compute_type: str, scale_type: str, types: str, from_logs: tuple[str, ...],
              out: str | None, as_json: bool) -> None:
    """Ask libcublasLt what algorithms do: numerical impl flags, tiles, stages, split-K, alignments.

    Needs an NVIDIA GPU and libcublasLt (found through BLASLOG_CUBLASLT, the nvidia-cublas wheels, or the
    system's libcublasLt.so.N). Without them it says which is missing and exits 2; every other command
    works without it. The caps file it writes lets machines without a GPU class differences (--caps).
    """
    from blaslog import native
    from blaslog.caps import Caps, caps_key
    from blaslog.reporters.json import dumps

    with translate_errors():
        if from_logs:
            gemms, _files, _failed = _gemms(from_logs, (), False, 0, True)
            configs = native.configs_from_records(gemms)
            if not configs:
                raise CliError("no cuBLASLt GEMM with an algoId in the logs (a level-2 or higher cuBLASLt log is needed)")
        elif algo_id is not None:
            parts = [t.strip() for t in types.split(",")]
            if len(parts) != 4:
                raise CliError("--types takes four data types: A,B,C,D (e.g. R_32F,R_32F,R_32F,R_32F)")
            configs = [{"algoId": algo_id, "computeType": compute_type, "scaleType": scale_type, "Atype": parts[0],
                        "Btype": parts[1], "Ctype": parts[2], "Dtype": parts[3]}]
        else:
            raise CliError("give --algo-id (with --compute-type, --scale-type, --types) or --from LOG")
        try:
            probed = native.probe(configs)
        except Exception as exc:
            partial = getattr(exc, "partial", None)
            if partial is None or not isinstance(exc, BlaslogError):
                raise
            warn(f"blaslog: error: {exc}")
            probed = partial
        if as_json:
            click.echo(dumps({"library": probed.library, "version": probed.version_text, "gpu": probed.gpu,
                              "entries": probed.entries,
                              "errors": [{"config": c, "error": e} for c, e in probed.errors]}, indent=2))
        else:
            gpu = probed.gpu.get("name") or probed.gpu.get("error") or "unknown GPU"
            cc = probed.gpu.get("compute_capability")
            click.echo(f"libcublasLt {probed.version_text} ({probed.library}); GPU: {gpu}" + (f" (sm {cc})" if cc else ""))
            for entry in probed.entries:
                click.echo(f"algoId {entry['algoId']} {entry['computeType']} scale {entry['scaleType']} "
                           f"{entry['Atype']},{entry['Btype']},{entry['Ctype']},{entry['Dtype']}")
                click.echo(f"  numerical impl flags {entry['numericalImplFlags']}: {entry['summary']}")
                click.echo(f"    {' | '.join(entry['decoded'])}")
                for key in ("splitKSupport", "reductionSchemeMask", "ctaSwizzlingSupport", "customOptionMax",
                            "epilogueMask", "minAlignmentA", "minAlignmentB", "minAlignmentC", "minAlignmentD"):
                    click.echo(f"  {key}: {entry.get(key)}")
                tiles = entry.get("tiles")
                click.echo(f"  tiles: {', '.join(tiles) if isinstance(tiles, list) else tiles}")
                stages = entry.get("stages")
                click.echo(f"  stages: {', '.join(stages) if isinstance(stages, list) else stages}")
            for config, error in probed.errors:
                warn(f"blaslog: error: algoId {config.get('algoId')} {config.get('computeType')}: {error}")
        if out:
            caps = Caps(library_version=probed.version_text, gpu=probed.gpu)
            if Path(out).exists():
                from blaslog.caps import load_caps

                caps = load_caps(out)
                caps.library_version, caps.gpu = probed.version_text, probed.gpu
            for entry in probed.entries:
                record = GemmCall("cublasLt", "probe", algo_id=entry["algoId"], compute_type=entry["computeType"],
                                  scale_type=entry["scaleType"], a_type=entry["Atype"], b_type=entry["Btype"],
                                  c_type=entry["Ctype"], d_type=entry["Dtype"])
                key = caps_key(record)
                assert key is not None
                caps.add(key, entry)
            Path(out).write_text(dumps(caps.to_json(), indent=2) + "\n", encoding="utf-8")
            warn(f"wrote {len(caps.entries)} configurations to {out}")
        if probed.errors or not probed.entries:
            sys.exit(2)


def main() -> None:
    """Entry point of the console script and `python -m blaslog`."""
    try:
        cli(prog_name="blaslog")
    except KeyboardInterrupt:
        click.echo("blaslog: interrupted", err=True)
        sys.exit(130)


__all__ = ["FORMAT_CLASSES", "GemmCall", "cli", "main"]
