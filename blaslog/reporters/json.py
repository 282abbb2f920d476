"""JSON (one document) and JSON Lines (one object per record or finding)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from blaslog.records import SCHEMA_VERSION
from blaslog.report import Report
from blaslog.reporters._base import Reporter, defuse_commands, register


def dumps(value: Any, indent: int | None = None) -> str:
    """Deterministic JSON: keys in insertion order, non-ASCII escaped, NaN refused."""
    return json.dumps(value, indent=indent, ensure_ascii=True, allow_nan=False, default=str)


@register
class JsonReporter(Reporter):
    """The whole result as one JSON document with schema_version."""

    name = "json"
    stable = True
    description = "one JSON document (schema_version, records or findings, summary)"

    def render(self, report: Report) -> str:
        return defuse_commands(dumps(report.to_json(), indent=2) + "\n")

    streams = True
    first_separator = ","

    def stream_begin(self) -> str:
        return f'{{\n  "schema_version": {SCHEMA_VERSION},\n  "command": "parse",\n  "records": ['

    def stream_rows(self, rows: Iterable[dict[str, Any]], first: bool) -> Iterator[str]:
        for row in rows:
            yield ("\n    " if first else ",\n    ") + dumps(row)
            first = False

    def stream_end(self, files: list[Any], any_rows: bool) -> str:
        summary = dumps({"files": [f.to_dict() for f in files]}, indent=2).replace("\n", "\n  ")
        return ("\n  ]" if any_rows else "]") + ',\n  "summary": ' + summary + "\n}\n"


@register
class JsonLinesReporter(Reporter):
    """One JSON object per line: each record (parse), finding (diff, check) or row (summary), then the summary."""

    name = "jsonl"
    stable = True
    description = "JSON Lines: one object per record/finding/row, then a summary object"

    def render(self, report: Report) -> str:
        doc = report.to_json()
        items = doc.get("records") if report.command == "parse" else (
            doc.get("findings") if report.command in ("diff", "check") else doc.get("signatures", report.rows))
        lines = [dumps({"type": "item", **item} if isinstance(item, dict) else {"type": "item", "value": item})
                 for item in items or []]
        tail = {k: v for k, v in doc.items() if k not in ("records", "findings", "signatures")}
        lines.append(dumps({"type": "summary", **tail, "schema_version": SCHEMA_VERSION}))
        return defuse_commands("\n".join(lines) + "\n")

    streams = True

    def stream_rows(self, rows: Iterable[dict[str, Any]], first: bool) -> Iterator[str]:
        for row in rows:
            yield dumps({"type": "item", **row}) + "\n"

    def stream_end(self, files: list[Any], any_rows: bool) -> str:
        return dumps({"type": "summary", "schema_version": SCHEMA_VERSION, "command": "parse",
                      "summary": {"files": [f.to_dict() for f in files]}}) + "\n"
