"""Pieces shared by the AMD dialects: bench command lines and profile flow mappings."""

from __future__ import annotations

from typing import Any

from blaslog.formats._base import LeafTransformer, LogFormat
from blaslog.records import Event


class CommandTransformer(LeafTransformer):
    """bench.lark / flowmap.lark trees -> (program, [(option, value)]) or [(key, value)]."""

    def bench(self, children: list[Any]) -> Any:
        return children[0]

    def profile(self, children: list[Any]) -> Any:
        return children[0]

    def command(self, children: list[Any]) -> tuple[Any, list[tuple[str, Any]]]:
        return (children[0], children[1:])

    def bench__command(self, children: list[Any]) -> tuple[Any, list[tuple[str, Any]]]:
        return self.command(children)

    def bench__option(self, children: list[Any]) -> tuple[str, Any]:
        return (children[0], children[1] if len(children) > 1 else None)

    def mapping(self, children: list[Any]) -> list[tuple[str, Any]]:
        return children

    def flowmap__entry(self, children: list[Any]) -> tuple[str, Any]:
        key, value = children
        if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        return (key, value)


def option_dict(options: list[tuple[str, Any]], warnings: list[str]) -> dict[str, Any]:
    """Options as a dict keyed without dashes; a repeated option keeps its first value and is reported."""
    out: dict[str, Any] = {}
    for name, value in options:
        key = name.lstrip("-")
        if key in out:
            if out[key] != value:
                warnings.append(f"option {name} is given more than once ({out[key]!r}, then {value!r}); the first is used")
            continue
        out[key] = value
    return out


def call_event(fmt: LogFormat, function: str, values: dict[str, Any],
               warnings: list[str]) -> tuple[type, dict[str, Any], tuple[str, ...]]:
    """A profile entry of a function that is not a GEMM: an Event that keeps every key (``build``'s result)."""
    return Event, dict(library=fmt.library, function=function, event="call", fields=tuple(values.items()),
                       log_format=fmt.name), tuple(warnings)
