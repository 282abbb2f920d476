"""GitLab Code Quality report (a JSON array of CodeClimate issues)."""

from __future__ import annotations

from blaslog.report import Report
from blaslog.reporters._base import Reporter, defuse_commands, printable, register
from blaslog.reporters.json import dumps

_SEVERITY = {"precision": "critical", "unknown": "major", "reduction": "minor", "schedule": "info", "input": "minor"}


@register
class GitlabReporter(Reporter):
    """GitLab Code Quality JSON."""

    name = "gitlab"
    stable = True
    description = "GitLab Code Quality report (JSON array)"

    def render(self, report: Report) -> str:
        issues = [{
            "description": printable(f"{f.cls}: {f.title}. {f.explanation}", 5000),
            "check_name": f"blaslog/{f.cls}",
            "fingerprint": f.fingerprint(),
            "severity": _SEVERITY.get(f.cls, "major"),
            "location": {"path": printable(f.location.file, 1000), "lines": {"begin": max(f.location.line, 1)}},
        } for f in report.findings]
        return defuse_commands(dumps(issues, indent=2) + "\n")
