"""SARIF 2.1.0 for GitHub code scanning: one rule per finding class, stable fingerprints, levels by --fail-on."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from blaslog import __version__
from blaslog.records import name_bytes
from blaslog.report import FINDING_CLASSES, Finding, FindingClass, Report, ci_level
from blaslog.reporters._base import Reporter, defuse_commands, printable, register
from blaslog.reporters.json import dumps

#: SARIF's names for the CI levels of blaslog.report (ci_level): `notice` is SARIF's `note`.
SARIF_LEVEL = {"error": "error", "warning": "warning", "notice": "note"}


def rule_id(cls: str) -> str:
    """`blaslog/precision` etc."""
    return f"blaslog/{cls}"


def _rule(row: FindingClass, fail_on: str) -> dict[str, Any]:
    return {
        "id": rule_id(row.name),
        "name": row.rule_name,
        "shortDescription": {"text": row.short},
        "fullDescription": {"text": row.meaning},
        "help": {"text": row.help},
        "defaultConfiguration": {"level": SARIF_LEVEL[ci_level(row.name, fail_on)]},
        "properties": {"tags": ["numerics", "gemm", row.name]},
    }


def artifact_uri(path: str) -> str:
    """A SARIF artifactLocation.uri (RFC 3986): the path with `/` kept and everything else outside the unreserved
    characters percent-encoded (spaces, `#`, `%`, non-ASCII, control characters); `-` is `stdin`."""
    if path == "-":
        return "stdin"
    # a file name that is not UTF-8 holds its bytes as surrogates (os.fsdecode): those bytes are percent-encoded
    return quote(name_bytes(path.replace("\\", "/")), safe="/")


def _result(finding: Finding, rule_index: int, level: str) -> dict[str, Any]:
    uri = artifact_uri(finding.location.file)
    region = {"startLine": max(finding.location.line, 1)}
    result: dict[str, Any] = {
        "ruleId": rule_id(finding.cls),
        "ruleIndex": rule_index,
        "level": SARIF_LEVEL[level],
        "message": {"text": printable(f"{finding.title}. {finding.explanation}", 10000)},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}, "region": region}}],
        "partialFingerprints": {"blaslogFindingHash/v1": finding.fingerprint()},
        "properties": {"count": finding.count, "kind": finding.kind},
    }
    if finding.ranks:
        result["properties"]["ranks"] = list(finding.ranks)
    if finding.related:
        result["relatedLocations"] = [
            {
                "id": i,
                "message": {"text": printable(loc.role or "related", 200)},
                "physicalLocation": {
                    "artifactLocation": {"uri": artifact_uri(loc.file)},
                    "region": {"startLine": max(loc.line, 1)},
                },
            }
            for i, loc in enumerate(finding.related[:100])
        ]
    return result


@register
class SarifReporter(Reporter):
    """SARIF 2.1.0: one rule per row of FINDING_CLASSES; a result is `error` when it fails the run at the
    report's --fail-on threshold, else its class's level (`warning`, or `note` for a CI `notice`)."""

    name = "sarif"
    commands = ("check", "diff")
    stable = True
    description = "SARIF 2.1.0 (GitHub code scanning)"

    def render(self, report: Report) -> str:
        classes = list(FINDING_CLASSES)
        rules = [_rule(row, report.fail_on) for row in FINDING_CLASSES.values()]
        results = [_result(f, classes.index(f.cls), report.level(f)) for f in report.findings]
        document = {
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [
                {
                    "tool": {
                        "driver": {
                            "name": "blaslog",
                            "semanticVersion": __version__,
                            "rules": rules,
                        }
                    },
                    "automationDetails": {"id": f"blaslog/{report.command}/"},
                    # an input not read at all fails the run (exit 2) whatever was found: said as the tool's own
                    # notifications, which code scanning shows apart from the results
                    "invocations": [
                        {
                            "executionSuccessful": not report.failed,
                            "toolExecutionNotifications": [
                                {"level": "error", "message": {"text": message}} for message in report.failed
                            ],
                        }
                    ],
                    "results": results,
                }
            ],
        }
        return defuse_commands(dumps(document, indent=2) + "\n", "json")
