"""How `blaslog record` turns a library's logging on: declared on the library's dialect class (its `logging`).

One dialect class per library carries the declaration (cuBLASLt's, cuBLAS's, rocBLAS trace's, hipBLASLt's,
oneMKL's); ``blaslog.record`` reads them all from the registry (:func:`blaslog.formats.loggings`), so a new
library is recorded once its dialect class declares one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LogSwitch:
    """The environment that turns one library's logging on, and the files it then writes."""

    name: str
    """The `--libs` value (`cublaslt`, `cublas`, `rocblas`, `hipblaslt`, `mkl`)."""
    files: tuple[tuple[str, str], ...]
    """(environment variable, key in the file name) of each log file it writes."""
    pid_names: bool
    """True when the library puts the process id in place of `%i` in a file name."""
    levels: tuple[tuple[tuple[str, str], ...], ...]
    """The variables (other than file names) that turn logging on, for each `--level` 1 to 5 in turn."""
    cleared: tuple[str, ...] = ()
    """Variables removed from the command's environment because they would override the level set here."""
    default: bool = False
    """Logged unless `--libs` says otherwise."""
    settings: tuple[str, ...] = ()
    """Prefixes of the environment variables that can change how the library computes (`CUBLASLT_`, `MKL_`): each
    recorded process notes those it holds."""
    objects: tuple[str, ...] = ()
    """Names of the library's shared objects (`libcublasLt`): each recorded process notes those it mapped, with
    their versions."""
    version: tuple[str, bytes] | None = None
    """(label, regular expression whose group 1 is the version) of the library's version as its log names it in
    its first lines (cuBLASLt's `cuBLASLt v12.9`): the run folder's manifest notes it under the label."""

    def names(self) -> frozenset[str]:
        """Every environment variable this declaration sets or clears: they say where and how much the library
        logs, none how it computes (a diff of two runs' settings leaves them out)."""
        levels = (name for level in self.levels for name, _ in level)
        return frozenset((*(name for name, _ in self.files), *levels, *self.cleared))

    def variables(self, level: int) -> dict[str, str]:
        """The variables (other than file names) that turn logging on at `level` (1..5)."""
        return dict(self.levels[level - 1])


def per_level(make: Callable[[int], dict[str, str]]) -> tuple[tuple[tuple[str, str], ...], ...]:
    """`levels` from a function of the level (1..5) to the variables of that level."""
    return tuple(tuple(make(level).items()) for level in range(1, 6))


__all__ = ["LogSwitch", "per_level"]
