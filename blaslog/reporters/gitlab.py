"""GitLab Code Quality report (a JSON array of CodeClimate issues).

Each issue's severity is its class's `gitlab_severity` in FINDING_CLASSES. GitLab keys issues on their
fingerprint and drops repeats, so every issue of a report has its own (the diff folds the ranks' findings
into one; any repeat left, see unique_fingerprints, is told apart by its place).
"""

from __future__ import annotations

from blaslog.report import Report, unique_fingerprints
from blaslog.reporters._base import Reporter, defuse_commands, printable, register
from blaslog.reporters.json import dumps


@register
class GitlabReporter(Reporter):
    """GitLab Code Quality JSON."""

    name = "gitlab"
    commands = ("check", "diff")
    stable = True
    description = "GitLab Code Quality report (JSON array)"

    def render(self, report: Report) -> str:
        issues = [
            {
                "description": printable(f"{f.cls}: {f.title}. {f.explanation}", 5000),
                "check_name": f"blaslog/{f.cls}",
                "fingerprint": fingerprint,
                "severity": f.finding_class.gitlab_severity,
                "location": {"path": printable(f.location.file, 1000), "lines": {"begin": max(f.location.line, 1)}},
            }
            for f, fingerprint in zip(report.findings, unique_fingerprints(report.findings), strict=True)
        ]
        return defuse_commands(dumps(issues, indent=2) + "\n", "json")
