"""Build hook: compiles blaslog/_speedups.c (the parse pipeline's per-byte loop) where a C compiler is there.

The extension is optional: blaslog reads every log without it, the same way, only slower (blaslog/inputs.py
falls back to Python). When it cannot be built the wheel is pure Python and the build says why on stderr;
BLASLOG_PURE_PYTHON=1 skips it. The compiling is setuptools' (its compiler detection works on every platform
CPython builds on); hatchling stays the build backend.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = "blaslog/_speedups.c"


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
        try:
            from setuptools import Distribution, Extension
            from setuptools.command.build_ext import build_ext

            extension = Extension("blaslog._speedups", [str(Path(self.root) / SOURCE)])
            command = build_ext(Distribution({"name": "blaslog", "ext_modules": [extension]}))
            command.build_lib, command.build_temp = str(work / "lib"), str(work / "temp")
            command.ensure_finalized()
            command.run()
            return Path(command.get_ext_fullpath("blaslog._speedups"))
        except Exception as exc:  # no compiler, no headers, no setuptools: the wheel is pure Python
            print(
                f"blaslog: {SOURCE} was not compiled ({type(exc).__name__}: {exc}); blaslog works without it, "
                f"reading large logs more slowly",
                file=sys.stderr,
            )
            return None
