"""Human-readable tables (tabulate): the default output."""

from __future__ import annotations

import textwrap

from tabulate import tabulate

from blaslog.report import FINDING_CLASSES, Report, ci_level
from blaslog.reporters._base import Reporter, cell, defuse_commands, printable, register


def section(title: str, rows: list[dict[str, object]], fmt: str = "simple") -> str:
    """A titled table."""
    if not rows:
        return f"{title}: none\n"
    headers = list(rows[0].keys())
    body = [[cell(r.get(h)) for h in headers] for r in rows]
    return f"{title}\n{tabulate(body, headers=headers, tablefmt=fmt, disable_numparse=True)}\n"


def class_summary(report: Report) -> list[dict[str, object]]:
    """Findings and occurrences per class, most severe first, with the CI level at the report's --fail-on."""
    rows: list[dict[str, object]] = []
    for row in FINDING_CLASSES.values():
        found = [f for f in report.findings if f.cls == row.name]
        if found:
            rows.append({"class": row.name, "level": ci_level(row.name, report.fail_on), "findings": len(found),
                         "occurrences": sum(f.count for f in found), "meaning": row.meaning})
    return rows


@register
class TableReporter(Reporter):
    """Tables for people."""

    name = "table"
    description = "tables for people (default)"

    def render(self, report: Report) -> str:
        parts: list[str] = []
        for title, rows in report.sections:
            parts.append(section(title, rows))
        if report.command in ("diff", "check"):
            parts.append(section("Findings by class", class_summary(report)))
            for index, finding in enumerate(report.findings, 1):
                where = f"{finding.location.file}:{finding.location.line}"
                others = ", ".join(f"{r.role} {r.file}:{r.line}" for r in finding.related[:3])
                head = (f"[{index}] {finding.cls.upper()} x{finding.count} ({report.level(finding)})  "
                        f"{printable(finding.title, 200)}")
                body = textwrap.fill(printable(finding.explanation), width=110, initial_indent="    ",
                                     subsequent_indent="    ")
                parts.append(f"{head}\n    at {printable(where)}" + (f" ({printable(others)})" if others else "")
                             + f"\n{body}\n")
        elif report.rows:
            columns = report.columns or list(report.rows[0].keys())
            table = [[cell(row.get(c), 160 if c in ("algorithms", "algo") else 60) for c in columns]
                     for row in report.rows]
            parts.append(tabulate(table, headers=columns, tablefmt="simple", disable_numparse=True) + "\n")
        elif report.command in ("parse", "summary"):
            parts.append("no GEMM records\n")
        return defuse_commands("\n".join(parts))
