"""Build hook: compiles blaslog/_speedups.c (the parse pipeline's per-byte loop) where a C compiler is there.

The extension is optional: blaslog reads every log without it, the same way, only slower (blaslog/inputs.py
falls back to Python). When it cannot be built the wheel is pure Python (tagged py3-none-any) and the build prints
one line on stderr, WARNING_PREFIX and why; the compiler's own output is kept out of the build log and its last
line quoted in that warning. (pip shows a backend's output only with -v; `python -m build` always does;
`blaslog --version` says at run time which parser is in use.) BLASLOG_PURE_PYTHON=1 skips the compiling, without
a warning. The compiling is setuptools' (its compiler detection works on every platform CPython builds on);
hatchling stays the build backend.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = "blaslog/_speedups.c"
WARNING_PREFIX = "WARNING: blaslog: "
# what setuptools says when there is no compiler to run: the command is missing (POSIX), or MSVC is (Windows)
NO_COMPILER = ("No such file or directory", "not found", "Microsoft Visual C++", "vcvarsall", "Unable to find")


class SpeedupsHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or os.environ.get("BLASLOG_PURE_PYTHON"):
            return
        self._work = tempfile.mkdtemp(prefix="blaslog-build-")
        built = self._compile(Path(self._work))
        if built is None:
            return
        name = "blaslog/_speedups" + sysconfig.get_config_var("EXT_SUFFIX")
        if version == "editable":  # an editable install imports the source folder
            target = Path(self.root) / name
            staged = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            shutil.copyfile(built, staged)
            # renamed into place, not written over: a process that has the old module loaded keeps its file
            # (writing over a loaded shared library crashes that process)
            os.replace(staged, target)
        else:
            build_data["force_include"][str(built)] = name
        build_data["pure_python"] = False
        build_data["infer_tag"] = True

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if getattr(self, "_work", None):
            shutil.rmtree(self._work, ignore_errors=True)

    def _compile(self, work: Path) -> Path | None:
        chatter = work / "compiler-output.txt"
        try:
            from setuptools import Distribution, Extension
            from setuptools.command.build_ext import build_ext

            extension = Extension("blaslog._speedups", [str(Path(self.root) / SOURCE)])
            command = build_ext(Distribution({"name": "blaslog", "ext_modules": [extension]}))
            command.build_lib, command.build_temp = str(work / "lib"), str(work / "temp")
            command.ensure_finalized()
            with _output_to(chatter):
                command.run()
            return Path(command.get_ext_fullpath("blaslog._speedups"))
        except Exception as exc:  # no compiler, no headers, no setuptools: the wheel is pure Python
            print(warning(exc, _last_line(chatter)), file=sys.stderr, flush=True)
            return None


def warning(exc: BaseException, compiler_said: str = "") -> str:
    """The one line a build without the C extension prints: why, what it costs, what to do."""
    why = _clip(" ".join(f"{type(exc).__name__}: {exc}".split()), 160)
    if compiler_said and compiler_said not in why:  # the compiler's own words survive a long command line
        why += f"; {_clip(compiler_said, 200)}"
    if isinstance(exc, ImportError):
        what = f"setuptools, which compiles {SOURCE}, is not installed"
    elif any(sign in str(exc) for sign in NO_COMPILER):
        what = "no C compiler found"
    else:
        what = f"{SOURCE} did not compile"
    return (
        f"{WARNING_PREFIX}{what} ({why}); installing the pure-Python parser, 1.4-1.6x slower on large logs "
        f"(same results); install gcc or clang (and the Python headers) and reinstall for the C speedups"
    )


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


@contextlib.contextmanager
def _output_to(path: Path) -> Iterator[None]:
    """The compiler's and setuptools' output (file descriptors 1 and 2) into `path` while the block runs."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        with path.open("wb") as sink:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            try:
                yield
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
    finally:
        for fd in saved:
            os.close(fd)


def _last_line(path: Path) -> str:
    """The compiler's last error line (e.g. `fatal error: Python.h: No such file or directory`), or ''."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    errors = [line.strip() for line in lines if "error" in line.lower()]
    return (errors or [""])[-1][:200]
