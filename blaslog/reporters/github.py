"""GitHub Actions workflow commands: `::error` / `::warning` / `::notice` annotations.

Escaping follows the runner (actions/runner ActionCommand.cs): in the message
`%`, CR and LF are percent-encoded; in property values `:` and `,` as well.
GitHub shows only 10 annotations per level per step, so the most severe come
first and one closing annotation counts what was left out.

A finding that fails the run at the report's --fail-on threshold is an `::error`; one below it takes its
class's level from FINDING_CLASSES (`::warning` or `::notice`), so the annotations and the exit status agree.
An input that could not be read at all is an `::error` too (the exit status is then 2).
"""

from __future__ import annotations

from blaslog.report import Finding, Report
from blaslog.reporters._base import Reporter, defuse_old_syntax, printable, register

PER_LEVEL = 10

#: The annotation levels, most severe first.
LEVELS = ("error", "warning", "notice")


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


def annotation(finding: Finding, level: str) -> str:
    """The command for one finding at `level` (see Report.level)."""
    title = f"blaslog {finding.cls}: {finding.title}"
    message = finding.explanation + (f" ({finding.count} occurrences)" if finding.count > 1 else "")
    return command(level, message, file=finding.location.file, line=finding.location.line, title=title)


@register
class GithubReporter(Reporter):
    """Annotations for GitHub Actions."""

    name = "github"
    commands = ("check", "diff")
    step_summary = True
    description = "GitHub Actions annotations (::error/::warning/::notice), 10 per level"

    def render(self, report: Report) -> str:
        lines = [
            command("error", f"{path} could not be read", file=path, title="blaslog: unreadable input")
            for path in report.failed
        ]
        levels = [report.level(f) for f in report.findings]
        used = {level: len(report.failed) if level == "error" else 0 for level in LEVELS}
        room = {
            level: PER_LEVEL - used[level] - (1 if used[level] + levels.count(level) > PER_LEVEL else 0)
            for level in LEVELS
        }
        shown = dict.fromkeys(LEVELS, 0)
        left = dict.fromkeys(LEVELS, 0)
        for finding, level in zip(report.findings, levels, strict=True):  # already most severe first
            if shown[level] < room[level]:
                lines.append(annotation(finding, level))
                shown[level] += 1
            else:
                left[level] += 1
        for level, count in left.items():
            if count:
                lines.append(
                    command(
                        level,
                        f"{count} more {level} findings not shown here (GitHub shows "
                        f"{PER_LEVEL} per level): see the step summary or the SARIF/JSON report.",
                        title=f"blaslog: {count} more {level} findings",
                    )
                )
        for summary in report.files:
            if summary.unparsable_lines and report.command == "parse":
                first = next((p for p in summary.problems if p.severity == "error"), None)
                lines.append(
                    command(
                        "warning",
                        f"{summary.unparsable_lines} unparsable lines" + (f"; first: {first.message}" if first else ""),
                        file=summary.path,
                        line=first.line if first else 0,
                        title="blaslog: unparsable lines",
                    )
                )
        return defuse_old_syntax("\n".join(lines)) + ("\n" if lines else "")
