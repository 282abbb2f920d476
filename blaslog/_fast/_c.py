"""The one switch between the C extension and pure Python, and the one switch of the shape cache.

``speedups`` is the compiled module (blaslog/_speedups.c, built at install time where a compiler is there) or
None: the Python code then does its work, the same way, slower. Every user reads ``_c.speedups`` when it runs
(never a copy taken at import), so that setting it here (the tests' pure-Python mode) switches every user.
BLASLOG_PURE_PYTHON=1 turns it off for a process.

``shape_cache`` is False with BLASLOG_SHAPE_CACHE=0: every record is then parsed with its grammar (the
benchmark's baseline, and debugging); the pipeline gives the same records.
"""

from __future__ import annotations

import os
from types import ModuleType

speedups: ModuleType | None
try:
    import blaslog._speedups as speedups
except ImportError:  # pragma: no cover (a wheel built without a compiler): the Python code does their work
    speedups = None
if os.environ.get("BLASLOG_PURE_PYTHON"):
    speedups = None

shape_cache = os.environ.get("BLASLOG_SHAPE_CACHE", "1") != "0"
"""False: every record goes through the grammar (BLASLOG_SHAPE_CACHE=0)."""


def why_not() -> str | None:
    """None where the C extension is in use; else why not: it is switched off (BLASLOG_PURE_PYTHON), or it was not
    built (no C compiler at install time)."""
    if speedups is not None:
        return None
    return "switched off (BLASLOG_PURE_PYTHON)" if os.environ.get("BLASLOG_PURE_PYTHON") else "not built"


__all__ = ["shape_cache", "speedups", "why_not"]
