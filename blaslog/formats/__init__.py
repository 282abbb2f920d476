"""The log dialects blaslog reads, and per-line sniffing among them.

Each dialect is one module with one :class:`~blaslog.formats._base.LogFormat`
subclass and one grammar in ``grammars/``. Sniffing is per line, so a file that
mixes dialects (cuBLASLt and cuBLAS on one stdout, rocBLAS trace and bench in
one log) parses whole; ``--log-format`` restricts it to the named dialects.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from blaslog.errors import UnknownFormatError
from blaslog.formats._base import LogFormat
from blaslog.formats._shapes import keep
from blaslog.formats.cublas import Cublas
from blaslog.formats.cublaslt import CublasLt
from blaslog.formats.hipblaslt import HipblasLt, HipblasLtBench, HipblasLtProfile
from blaslog.formats.rocblas import RocblasBench, RocblasMessage, RocblasProfile, RocblasTrace

FORMAT_CLASSES: tuple[type[LogFormat], ...] = (
    CublasLt, Cublas, RocblasTrace, RocblasBench, RocblasProfile, RocblasMessage, HipblasLt, HipblasLtBench,
    HipblasLtProfile,
)
"""Every dialect, in sniffing order."""

FORMAT_NAMES: tuple[str, ...] = tuple(cls.name for cls in FORMAT_CLASSES)

# Lines that look like BLAS library output but begin no record any dialect knows:
# they are reported as unparsable, never passed over as program output.
_NEAR_MISS = re.compile(
    r"\[(?:cublasLt|HIPBLASLT)\]|^\s*[iI]!|^\s*(?:\./)?(?:rocblas-bench|hipblaslt-bench)\b|^\s*rocblas_\w+,"
    r"|^\s*- \{\s*(?:rocblas_function|function)\s*:"
)


class Sniffer:
    """Finds which dialect, if any, begins a record on a line."""

    def __init__(self, names: Iterable[str] | None = None) -> None:
        wanted = resolve_formats(names)
        self.formats = [cls() for cls in FORMAT_CLASSES if cls.name in wanted]
        self._by_group = {f"f{i}": fmt for i, fmt in enumerate(self.formats)}
        pattern = "|".join(f"(?P<f{i}>{fmt.start.pattern})" for i, fmt in enumerate(self.formats))
        self._start = re.compile(pattern)
        self.known: dict[str, LogFormat] = {}
        """Shapes of lines that began a one-line record, with their dialect (skips sniffing them again)."""

    def remember(self, shape: str, fmt: LogFormat) -> None:
        """Note that lines of this shape begin a record of `fmt`."""
        keep(self.known, shape, fmt)

    def sniff(self, line: str) -> tuple[LogFormat, int] | None:
        """(dialect, column where its record starts) for a line that begins a record, else None."""
        match = self._start.search(line)
        if match is None:
            return None
        return self._by_group[match.lastgroup or ""], match.start()

    @staticmethod
    def near_miss(line: str) -> bool:
        """True for a line that looks like BLAS library output though no dialect starts a record with it."""
        return _NEAR_MISS.search(line) is not None


def resolve_formats(names: Iterable[str] | None) -> set[str]:
    """The dialect names to use; unknown names raise UnknownFormatError with a suggestion."""
    if not names:
        return set(FORMAT_NAMES)
    out = set()
    for name in names:
        for part in name.split(","):
            part = part.strip().lower()
            if part in ("rocblas", "hipblaslt-all"):
                out |= {n for n in FORMAT_NAMES if n.startswith(part.split("-")[0])}
                continue
            if part not in FORMAT_NAMES:
                close = difflib.get_close_matches(part, FORMAT_NAMES, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise UnknownFormatError(
                    f"unknown log format {part!r}{hint} Known formats: {', '.join(FORMAT_NAMES)}"
                )
            out.add(part)
    return out


__all__ = ["FORMAT_CLASSES", "FORMAT_NAMES", "LogFormat", "Sniffer", "resolve_formats"]
