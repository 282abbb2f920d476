"""The `blaslog` command: options -> one library call (:mod:`blaslog.api`) -> a reporter -> an exit status.

Exit status (like diff(1)):
  0  success, nothing at or above --fail-on
  1  findings at or above --fail-on (diff, check)
  2  trouble: bad usage, unreadable input, nothing parsable or compared, --strict parse errors, probe failures
  130 interrupted (Ctrl-C)
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
import typing

import click

from blaslog.cli import _group
from blaslog.cli._common import FORMATS, CliError, exit_status, translate_errors, warn
from blaslog.cli._group import version_text

if typing.TYPE_CHECKING:
    from blaslog.cli._group import cli


def main() -> None:
    """Entry point of the console script and `python -m blaslog`."""
    # A command makes objects by the hundred thousand and keeps most (distinct calls, rows, report cells), so
    # the collector's default young generation (700 objects) has it walk them again and again for cycles
    # that blaslog does not make: some 15% of a summary of 25,000 distinct calls. Collect far less often (as
    # mypy does), and never walk what the imports made.
    gc.freeze()
    gc.set_threshold(100_000, 20, 20)
    try:
        _group.cli(prog_name="blaslog")  # imports the module of the command it runs (see _group.COMMANDS)
    except KeyboardInterrupt:
        click.echo("blaslog: interrupted", err=True)
        sys.exit(130)


def console() -> typing.NoReturn:
    """The console script and `python -m blaslog`: :func:`main`, then an exit that leaves the objects a command
    made to the operating system instead of freeing them one by one (what mypy's fast exit does): the exit
    functions run and the standard streams are flushed first, as at any exit. Some 15-25 ms of every command,
    a tenth of a small `diff`. The usual exit wherever something may still have work to do after the program
    (see :func:`_ends_alone`), or a stream cannot be flushed."""
    try:
        main()
        status: str | int | None = 0
    except SystemExit as exc:
        status = exc.code
    if not _ends_alone(status):
        sys.exit(status)
    atexit._run_exitfuncs()  # the saved shapes, multiprocessing's and tempfile's finalizers
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # None: the file descriptor was closed before the start
                stream.flush()
    except (OSError, ValueError):
        sys.exit(status)
    os._exit(status if isinstance(status, int) else 0)


def _ends_alone(status: str | int | None) -> bool:
    """Whether the process may end at once with `status`: a status of 0 to 255 (a message is printed by the
    usual exit, a larger number folded by it); no other thread alive; blaslog's own console script or module
    is the program (not run by another through runpy, nor under cProfile, coverage, pdb or `python -i`, which
    all have work to do when the program is over)."""
    threading = sys.modules.get("threading")
    program = sys.modules.get("__main__")
    return (
        (status is None or (isinstance(status, int) and 0 <= status <= 255))
        and (threading is None or threading.active_count() == 1)
        and getattr(program, "console", None) is console
        and sys.gettrace() is None
        and sys.getprofile() is None
        and not sys.flags.inspect
        and not os.environ.get("PYTHONINSPECT")
        and "pdb" not in sys.modules
    )


__all__ = [
    "FORMATS",
    "CliError",
    "cli",
    "console",
    "exit_status",
    "main",
    "translate_errors",
    "version_text",
    "warn",
]

if not typing.TYPE_CHECKING:  # (hidden from type checkers, which see the import above instead)

    def __getattr__(name: str) -> object:
        """`cli`: the command group with every command registered, for a program that reads the group (its
        `commands`, a test runner's invoke); `main` registers only the command it runs."""
        if name != "cli":
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        globals()["cli"] = group = _group.every_command()
        return group

    def __dir__() -> list[str]:
        return sorted({*globals(), "cli"})
