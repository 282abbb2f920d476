"""The errors blaslog raises. The library raises; only the CLI prints and exits."""

from __future__ import annotations

from dataclasses import dataclass


class BlaslogError(Exception):
    """Base of every error blaslog raises on purpose."""


class InputError(BlaslogError):
    """An input could not be read or understood."""


class UnknownFormatError(InputError):
    """No known log format matches the input (or a `--log-format` name is unknown)."""


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """A place in an input file."""

    path: str
    """The file as named by the user (`-` for standard input)."""
    line: int
    """1-based physical line number."""
    column: int = 0
    """1-based column, 0 when unknown."""

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" + (f":{self.column}" if self.column else "")


class LogParseError(InputError, ValueError):
    """A line that looks like a BLAS log line but does not parse.

    Rendered as ``path:line:col: message`` followed by the offending text and a caret.
    """

    def __init__(self, location: SourceLocation, message: str, text: str = "") -> None:
        self.location = location
        self.message = message
        self.text = text
        super().__init__(self.render())

    def __reduce__(self) -> tuple[type, tuple[SourceLocation, str, str]]:
        return (type(self), (self.location, self.message, self.text))  # picklable across worker processes

    def render(self) -> str:
        """The full message: location, reason, the text, and a caret under the column."""
        out = f"{self.location}: {self.message}"
        if self.text:
            shown, col = _excerpt(self.text, self.location.column)
            out += f"\n    {shown}"
            if col:
                out += "\n    " + " " * (col - 1) + "^"
        return out


def _excerpt(text: str, column: int, width: int = 120) -> tuple[str, int]:
    """Cut a long line down to `width` characters around `column`; return it and the new column."""
    text = text.replace("\t", " ").replace("\n", "\u23ce")  # a multi-line record shows its line breaks as ⏎
    safe = "".join(c if c.isprintable() else "\N{REPLACEMENT CHARACTER}" for c in text)
    if len(safe) <= width:
        return safe, column
    start = max(0, min(column - width // 2, len(safe) - width)) if column else 0
    cut = safe[start : start + width]
    prefix = "..." if start else ""
    suffix = "..." if start + width < len(safe) else ""
    return prefix + cut + suffix, (column - start + len(prefix)) if column else 0


class FlagsError(BlaslogError, ValueError):
    """A flags value or name that cannot be decoded or encoded."""


class CapsError(InputError):
    """A caps file that cannot be read."""


class NativeError(BlaslogError):
    """The native cuBLASLt probe failed."""


class LibraryNotFound(NativeError):
    """libcublasLt was not found anywhere blaslog looked."""


class LibraryLoadError(NativeError):
    """libcublasLt was found but could not be loaded."""


class SymbolNotFound(NativeError):
    """The loaded libcublasLt lacks a function blaslog needs."""


class CublasStatusError(NativeError):
    """A cuBLASLt call returned a status other than CUBLAS_STATUS_SUCCESS."""

    def __init__(self, function: str, code: int, name: str) -> None:
        self.function = function
        self.code = code
        self.name = name
        super().__init__(f"{function} returned {name} ({code})")


class ProbeCrashed(NativeError):
    """The native library crashed the probe's worker process."""
