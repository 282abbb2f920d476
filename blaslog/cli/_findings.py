"""The commands that report on runs: diff, check, emulate and summary."""

from __future__ import annotations

from typing import Any

import click

from blaslog import api
from blaslog.cli._common import (
    EXIT_STATUS,
    EXIT_STATUS_FINDINGS,
    _caps,
    _options,
    _report,
    _write,
    caps_option,
    fail_options,
    input_options,
    output_options,
    report_targets,
    translate_errors,
    warn,
)
from blaslog.cli._emulate_options import _collected, _emulate_settings, emulate_options, emulate_settings_options
from blaslog.cli._group import cli
from blaslog.report import CLASSES

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
    reports: list[tuple[str, str]],
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
        inputs = [*runs, *([reference] if reference else [])]
        report_targets(reports, output, inputs)
        report = api.diff_command(
            runs,
            reference,
            pin=emit_tunableop is not None,
            tp=tp,
            rank=rank,
            caps=_caps(caps_path),
            min_coverage=min_coverage,
            options=_options(log_format, strict, jobs, quiet, rank_from),
            fail_on=fail_on,
            emulate=_emulate_settings(quiet=quiet, **emulation),
        )
        if emit_tunableop is not None:
            from blaslog.reporters._tools import pinning_output

            text, messages = pinning_output(report.pinning, emit_tunableop, quiet)
            _write(text, emit_tunableop, inputs)
            for message in messages:
                warn(message)
        _report(report, fmt, output, quiet, inputs, summary_file, exit_zero, reports)


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
    reports: list[tuple[str, str]],
    quiet: bool,
) -> None:
    """Find GEMMs inside one run that ran with different algorithms, flags or solutions (each file on its own).

    \b
    blaslog check run.log --tunableop tunableop_results0.csv
    blaslog check 'logs/rank*.log' --tunableop 'logs/tunableop_results*.csv'
    """
    with translate_errors():
        report_targets(reports, output, [*logs, *tunableop])
        report = api.check(
            logs,
            tunableop=tunableop,
            caps=_caps(caps_path),
            batch=batch,
            options=_options(log_format, strict, jobs, quiet),
            fail_on=fail_on,
            emulate=_emulate_settings(quiet=quiet, **emulation),
        )
        _report(report, fmt, output, quiet, [*logs, *tunableop], summary_file, exit_zero, reports)


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
    reports: list[tuple[str, str]],
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
        report_targets(reports, output, list(records))
        settings = _emulate_settings(quiet=quiet, **emulation)
        report = api.emulate_command(
            records, shape=shape, numerics=numerics, against=against, tp=tp, caps=_caps(caps_path), settings=settings
        )
        _report(report, fmt, output, quiet, list(records), reports=reports)


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
    reports: list[tuple[str, str]],
    quiet: bool,
) -> None:
    """What a run did: distinct GEMM signatures with call counts, threads and the algorithms each used."""
    with translate_errors():
        report_targets(reports, output, logs)
        report = api.summary(logs, caps=_caps(caps_path), options=_options(log_format, strict, jobs, quiet))
        _report(report, fmt, output, quiet, logs, reports=reports)
