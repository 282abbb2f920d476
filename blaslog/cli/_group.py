"""The `blaslog` command group: --version, --debug, signals and internal errors."""

from __future__ import annotations

import importlib
import os
import signal
import sys
import threading
from typing import Any

import click

from blaslog import __version__
from blaslog.cli._common import EXIT_STATUS_FINDINGS, ReportingCommand, _defuse
from blaslog.formats import library_hints


def version_text() -> str:
    """`blaslog 0.1.0 (C speedups in use)`, or why they are not."""
    from blaslog._fast._c import why_not

    off = why_not()
    if off is None:
        how = "C speedups in use"
    elif off == "not built":
        how = "C speedups not built (no C compiler at install time): pure Python, slower on large logs"
    else:
        how = "C speedups off (BLASLOG_PURE_PYTHON): pure Python"
    return f"blaslog {__version__} ({how})"


def _print_version(ctx: click.Context) -> None:
    click.echo(version_text())
    ctx.exit()


# ---- commands ----------------------------------------------------------------------------------------------------

COMMANDS = {
    "parse": "blaslog.cli._parse",
    "diff": "blaslog.cli._findings",
    "check": "blaslog.cli._findings",
    "emulate": "blaslog.cli._findings",
    "summary": "blaslog.cli._findings",
    "decode-flags": "blaslog.cli._tools",
    "probe": "blaslog.cli._tools",
    "record": "blaslog.cli._tools",
}
"""Each command and the module that defines it (and registers it on the group when imported): a command's module
is imported when the command is run or the commands are listed, so that `blaslog parse` imports none of the
others' (nor what they import)."""


def every_command() -> click.Group:
    """The command group with every command registered (each command's module imported)."""
    for module in dict.fromkeys(COMMANDS.values()):
        importlib.import_module(module)
    return cli


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

    command_class = ReportingCommand  # a command's --help lists its output formats

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            importlib.import_module(COMMANDS[cmd_name])  # its module registers it
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        every_command()
        return super().list_commands(ctx)

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
    """Find the GEMM algorithm differences behind numerical mismatches."""


def _reads() -> str:
    """What the command group's help says it reads: each library's dialects, from their declarations."""
    libraries = [f"{library} ({'; '.join(hints)})" if hints else library for library, hints in library_hints().items()]
    listed = ", ".join(libraries[:-1]) + " and " + libraries[-1] if len(libraries) > 1 else "".join(libraries)
    return (
        f"Reads the logs of {listed}. A LOG is a file (gzip too), a quoted glob ('logs/**/*.log'), a folder "
        "(searched for BLAS logs), or - for standard input."
    )


cli.help = f"{cli.help}\n\n{_reads()}"
