"""GitHub Actions workflow commands: `::error` / `::warning` / `::notice` annotations.

Escaping follows the runner (actions/runner ActionCommand.cs): in the message
`%`, CR and LF are percent-encoded; in property values `:` and `,` as well.
GitHub shows only 10 annotations per level per step, so the most severe come
first and one closing annotation counts what was left out.
"""

from __future__ import annotations

from blaslog.report import Finding, Report
from blaslog.reporters._base import Reporter, printable, register

PER_LEVEL = 10


def escape_data(text: str) -> str:
    """Escape a workflow-command message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow-command property value."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(level: str, message: str, *, file: str = "", line: int = 0, title: str = "") -> str:
    """One workflow command line (properties left out when empty)."""
    props = []
    if file:
        props.append(f"file={escape_property(printable(file, 500))}")
    if line > 0:
        props.append(f"line={line}")
    if title:
        props.append(f"title={escape_property(printable(title, 250))}")
    head = f"::{level}" + (" " + ",".join(props) if props else "")
    return f"{head}::{escape_data(printable(message, 4000))}"


def annotation(finding: Finding) -> str:
    """The command for one finding."""
    title = f"blaslog {finding.cls}: {finding.title}"
    message = finding.explanation + (f" ({finding.count} occurrences)" if finding.count > 1 else "")
    return command(finding.level, message, file=finding.location.file, line=finding.location.line, title=title)


@register
class GithubReporter(Reporter):
    """Annotations for GitHub Actions."""

    name = "github"
    description = "GitHub Actions annotations (::error/::warning/::notice), 10 per level"

    def render(self, report: Report) -> str:
        lines: list[str] = []
        shown = {"error": 0, "warning": 0, "notice": 0}
        left = {"error": 0, "warning": 0, "notice": 0}
        for finding in report.findings:  # already most severe first
            level = finding.level
            if shown[level] < PER_LEVEL - (1 if _needs_closing(report, level) else 0):
                lines.append(annotation(finding))
                shown[level] += 1
            else:
                left[level] += 1
        for level, count in left.items():
            if count:
                lines.append(command(level, f"{count} more {level} findings not shown here (GitHub shows "
                                            f"{PER_LEVEL} per level): see the step summary or the SARIF/JSON report.",
                                     title=f"blaslog: {count} more {level} findings"))
        for summary in report.files:
            if summary.unparsable_lines and report.command == "parse":
                first = next((p for p in summary.problems if p.severity == "error"), None)
                lines.append(command("warning", f"{summary.unparsable_lines} unparsable lines"
                                     + (f"; first: {first.message}" if first else ""),
                                     file=summary.path, line=first.line if first else 0,
                                     title="blaslog: unparsable lines"))
        return "\n".join(lines) + ("\n" if lines else "")


def _needs_closing(report: Report, level: str) -> bool:
    return sum(1 for f in report.findings if f.level == level) > PER_LEVEL
