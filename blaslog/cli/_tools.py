"""decode-flags, probe and record."""

from __future__ import annotations

import os
import sys

import click

from blaslog import api
from blaslog.cli._common import (
    EXIT_STATUS,
    _caps,
    _echo,
    _output_path,
    _write,
    deprecated_alias,
    exit_status,
    translate_errors,
    warn,
)
from blaslog.cli._group import cli
from blaslog.formats import loggings


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
@deprecated_alias("--json", "as_json", "--format json", is_flag=True)
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
    from blaslog.reporters._tools import flags_output

    with translate_errors():
        decoded = decode_values(values, lib)
        _write(flags_output(decoded, lib, "json" if as_json else fmt), output, ())


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
    "output",
    type=click.Path(dir_okay=False),
    help="Write (or update) a caps file, for --caps of the other commands.",
)
@deprecated_alias("--out", "out_alias", "--output", type=click.Path(dir_okay=False))
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="Output format of what was learnt (on stdout).",
)
@deprecated_alias("--json", "as_json", "--format json", is_flag=True)
def probe_cmd(
    algo_id: int | None,
    compute_type: str,
    scale_type: str,
    types: str,
    from_logs: tuple[str, ...],
    output: str | None,
    out_alias: str | None,
    fmt: str,
    as_json: bool,
) -> None:
    """Ask libcublasLt what algorithms do: numerical impl flags, tiles, stages, split-K, alignments.

    Needs an NVIDIA GPU and libcublasLt (found through BLASLOG_CUBLASLT, the nvidia-cublas wheels, or the
    system's libcublasLt.so.N). Without them it says which is missing and exits 2; every other command
    works without it. The caps file it writes lets machines without a GPU class differences (--caps).
    """
    from blaslog.reporters._tools import caps_output, probe_output

    out = output or out_alias
    with translate_errors():
        report = api.probe(
            from_logs,
            algo_id=algo_id,
            compute_type=compute_type,
            scale_type=scale_type,
            types=[t.strip() for t in types.split(",")],
        )
        _echo(probe_output(report.document, "json" if as_json else fmt))
        for message in report.failed:
            warn(f"blaslog: error: {message}")
        if out and report.document["entries"]:
            text, count = caps_output(report.document, _caps(out) if os.path.exists(out) else None)
            _write(text, out, list(from_logs))
            warn(f"wrote {count} configurations to {out}")
    sys.exit(exit_status(report))


RECORD_EXIT_STATUS = """\b
Exit status:
  the command's own (128+N when signal N ended it; 127: not found)
  2    trouble before the command ran: bad usage, --output exists (give --force)
  130  interrupted"""


@cli.command(
    "record",
    epilog=RECORD_EXIT_STATUS,
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@click.option(
    "--output",
    "-o",
    "output",
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
    default=",".join(switch.name for switch in loggings() if switch.default),
    show_default=True,
    metavar="LIB,...",
    help=f"Libraries to log: {', '.join(switch.name for switch in loggings())}.",
)
@click.option(
    "--no-compress", "no_compress", is_flag=True, help="Leave the logs plain (default: gzip them at the end)."
)
@deprecated_alias("--out", "out_alias", "--output", type=click.Path(file_okay=False))
@click.option("--force", is_flag=True, help="Replace the run folder --output names if one is there.")
@click.option(
    "--probe",
    "probe",
    is_flag=True,
    help="After the command: probe every cuBLASLt algorithm it ran into caps.json in the folder (needs the "
    "GPU and libcublasLt; a failure is a note in run.json, never a lost run).",
)
def record_cmd(
    command: tuple[str, ...],
    output: str | None,
    out_alias: str | None,
    level: int,
    libs: str,
    no_compress: bool,
    force: bool,
    probe: bool,
) -> None:
    """Run COMMAND with BLAS logging on and leave a run folder: one log per rank and library, and run.json.

    \b
    blaslog record -o runs/tp4 -- torchrun --nproc-per-node 4 train.py --tp 4
    blaslog record -o runs/tp1 -- python train.py --tp 1
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
            out=output or out_alias,
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
