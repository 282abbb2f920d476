"""`blaslog parse`."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import Any

import click

from blaslog import api
from blaslog.api._inputs import cut_short, holds_nothing, nothing_found
from blaslog.api._parse import parse_inputs, parse_report, records
from blaslog.cli._common import (
    EXIT_STATUS,
    CliError,
    _account,
    _caps,
    _color,
    _echo,
    _options,
    _report,
    caps_option,
    exit_status,
    input_options,
    output_options,
    report_targets,
    translate_errors,
    warn,
)
from blaslog.cli._group import cli
from blaslog.records import FileSummary
from blaslog.report import FailOn, RecordKind, Report


@cli.command("parse", epilog=EXIT_STATUS)
@click.argument("logs", nargs=-1, required=True)
@click.option(
    "--kind",
    type=click.Choice([kind.value for kind in RecordKind]),
    default=RecordKind.GEMM.value,
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
    reports: list[tuple[str, str]],
    quiet: bool,
) -> None:
    """Print the records of LOG... (every executed GEMM; with --kind all, every record).

    With --format json, jsonl or csv the records are written as they are read, in bounded memory; so is the
    table when piped or written with -o (its columns aligned once the last record is read). With --report,
    one report held in memory gives every output. Every way exits with the same status.
    """
    from blaslog.reporters import get_reporter

    with translate_errors():
        if reports and (fmt == "parquet" or parquet_dir):
            raise CliError("--report writes files of reports, Parquet a folder of records: run them one at a time")
        report_targets(reports, None if fmt == "parquet" else output, logs)
        options = _options(log_format, strict, jobs, quiet)
        if fmt == "parquet" or parquet_dir:
            outcome = _parquet(logs, output if fmt == "parquet" else parquet_dir, run_name, options, quiet)
            sys.exit(exit_status(outcome))
        reporter = get_reporter(fmt).for_output(output, _color())
        # the plain table is streamed too: rows are spooled to a file, which gives the widths, then the lines
        plain_table = reporter.spools()
        if reports or not (reporter.streams or plain_table):  # several reports: rendered from one in memory
            _report(
                parse_report(logs, kind=kind, caps=caps_path, options=options),
                fmt,
                output,
                quiet,
                logs,
                reports=reports,
            )
        if plain_table:
            from blaslog.views import parse_columns

            columns = parse_columns(kind, caps_path is not None)
            outcome = _stream_parse(logs, get_reporter("jsonl"), kind, caps_path, options, output, quiet, columns)
        else:
            outcome = _stream_parse(logs, reporter, kind, caps_path, options, output, quiet)
        sys.exit(exit_status(outcome))


def _outcome(failed: Sequence[str], files: Sequence[FileSummary]) -> Report:
    """What a parse written as it was read (streamed, or to Parquet) came to, said as the plain parse's report
    says it (api.parse_report): the inputs not read or cut short, and that no input held a record."""
    report = Report("parse", files=list(files), fail_on=FailOn.NEVER)
    report.failed = [*failed, *cut_short(files)]
    if holds_nothing(files):
        report.failed.append(nothing_found(files=files))
    return report


def _say_failed(outcome: Report) -> None:
    """Each failure on stderr, but an input cut short: its accounting said so (an error of its own)."""
    said = set(cut_short(outcome.files))
    for message in outcome.failed:
        if message not in said:
            warn(f"blaslog: error: {message}")


def _stream_parse(
    logs: Sequence[str],
    reporter: Any,
    kind: str,
    caps_path: str | None,
    options: api.Options,
    output: str | None,
    quiet: bool,
    table: list[str] | None = None,
) -> Report:
    """`blaslog parse` in a streaming format: rows written as they are read (with `table`, the columns of a
    plain table: `reporter` is jsonl, whose rows make it); what it came to (for exit_status)."""
    from blaslog.stream import Output, parse_chunks, table_chunks, write_behind

    names, failed = parse_inputs(logs, options)
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
        outcome = _outcome(failed, summaries)
    else:
        with Output(output, names) as out:
            write_behind(out.write, chunks)
            outcome = _outcome(failed, summaries)
            if exit_status(outcome) in (0, 1):  # as _report keeps a report file
                out.keep()
    _account(summaries, quiet)
    _say_failed(outcome)
    return outcome


def _parquet(
    logs: Sequence[str], folder: str | None, run_name: str | None, options: api.Options, quiet: bool
) -> Report:
    """`blaslog parse --format parquet`: the GEMM records written under `folder`; what it came to (for
    exit_status)."""
    from blaslog.parquet import write_parquet

    if not folder:
        raise CliError("--format parquet writes a folder: give it with --output DIR")
    names, failed = parse_inputs(logs, options)
    if not names:
        raise CliError("; ".join(failed))
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
            names, folder, lambda name, out: records([name], options=options, summaries=out), run=run_name
        )
    outcome = _outcome(failed, files)
    _account(files, quiet)
    for note in notes:
        warn(f"note: {note}")
    _say_failed(outcome)
    warn(f"wrote {sum(f.gemm_records for f in files)} GEMM records under {folder}")
    return outcome
