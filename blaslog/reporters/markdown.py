"""GitHub-flavoured Markdown (also what goes into $GITHUB_STEP_SUMMARY)."""

from __future__ import annotations

import re

from blaslog.report import Report
from blaslog.reporters._base import Reporter, defuse_commands, printable, register
from blaslog.reporters.table import class_summary

_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")


def md(value: object, limit: int = 200) -> str:
    """Markdown-escaped, one-line, printable text (log text cannot inject markup or HTML)."""
    text = printable("" if value is None else str(value).replace("\n", " "), limit)
    return _SPECIAL.sub(r"\\\1", text).replace("&", "&amp;")


def code(value: object, limit: int = 500) -> str:
    """An inline code span of one-line printable text. Nothing is escaped inside a code span (a backslash would
    show), so the span is fenced with more backticks than any run of them in the text, and padded with a space
    when the text starts or ends with a backtick (CommonMark 6.1)."""
    text = printable("" if value is None else str(value).replace("\n", " "), limit)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def table(rows: list[dict[str, object]], limit: int = 80) -> str:
    """A Markdown table of rows."""
    if not rows:
        return "_none_\n"
    headers = list(rows[0].keys())
    out = ["| " + " | ".join(md(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(md(r.get(h, ""), limit) for h in headers) + " |" for r in rows]
    return "\n".join(out) + "\n"


def render_markdown(report: Report, max_findings: int = 50) -> str:
    """The report as Markdown."""
    parts = [f"## blaslog {report.command}\n"]
    for title, rows in report.sections:
        parts.append(f"### {md(title)}\n\n{table(rows)}")
    if report.command in ("diff", "check"):
        parts.append(f"### Findings by class\n\n{table(class_summary(report), limit=300)}")  # meaning uncut
        for index, finding in enumerate(report.findings[:max_findings], 1):
            parts.append(
                f"**{index}. {md(finding.cls)} x{finding.count}** ({report.level(finding)}): "
                f"{md(finding.title, 300)}  \n{code(f'{finding.location.file}:{finding.location.line}')}  \n"
                f"{md(finding.explanation, 2000)}\n"
            )
        if len(report.findings) > max_findings:
            parts.append(f"_{len(report.findings) - max_findings} more findings: see the JSON or SARIF report._\n")
    elif report.rows:
        columns = report.columns or list(report.rows[0].keys())
        parts.append(table([{c: r.get(c) for c in columns} for r in report.rows[:500]]))
        if len(report.rows) > 500:
            parts.append(f"_{len(report.rows) - 500} more rows: see the JSON or CSV report._\n")
    return defuse_commands("\n".join(parts))


@register
class MarkdownReporter(Reporter):
    """Markdown tables."""

    name = "markdown"
    commands = ("parse", "summary", "check", "diff", "emulate")
    description = "GitHub-flavoured Markdown"

    def render(self, report: Report) -> str:
        return render_markdown(report)
