"""SARIF 2.1.0 for GitHub code scanning: one rule per finding class, stable fingerprints."""

from __future__ import annotations

from typing import Any

from blaslog import __version__
from blaslog.report import CLASSES, Finding, Report
from blaslog.reporters._base import Reporter, defuse_commands, printable, register
from blaslog.reporters.json import dumps

_LEVEL = {"error": "error", "warning": "warning", "notice": "note"}
_HELP = {
    "precision": "The two GEMMs ran different arithmetic. Align the math mode (TF32 on or off in both runs, the "
                 "same compute type, the same rocBLAS flags) or pin the algorithm.",
    "unknown": "The algorithm differs and the log does not say whether the arithmetic does. Run `blaslog probe "
               "--from LOG --out caps.json` on a machine with the GPU and pass --caps caps.json.",
    "reduction": "Split-K or the reduction scheme differs: the summation order changes. Pin the algorithm or "
                 "give both runs the same workspace limit, or compare with a reordering-aware tolerance.",
    "schedule": "Tiling or scheduling differs with the same arithmetic; rarely the cause of a large mismatch.",
    "input": "Part of an input could not be read; GEMMs may be missing from the comparison.",
}


def rule_id(cls: str) -> str:
    """`blaslog/precision` etc."""
    return f"blaslog/{cls}"


def _result(finding: Finding, rule_index: int) -> dict[str, Any]:
    uri = "stdin" if finding.location.file == "-" else finding.location.file
    region = {"startLine": max(finding.location.line, 1)}
    result: dict[str, Any] = {
        "ruleId": rule_id(finding.cls),
        "ruleIndex": rule_index,
        "level": _LEVEL.get(finding.level, "warning"),
        "message": {"text": printable(f"{finding.title}. {finding.explanation}", 10000)},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": printable(uri, 1000)}, "region": region}}],
        "partialFingerprints": {"blaslogFindingHash/v1": finding.fingerprint()},
        "properties": {"count": finding.count, "kind": finding.kind},
    }
    if finding.related:
        result["relatedLocations"] = [
            {"id": i, "message": {"text": printable(loc.role or "related", 200)},
             "physicalLocation": {"artifactLocation": {"uri": printable(loc.file, 1000)},
                                  "region": {"startLine": max(loc.line, 1)}}}
            for i, loc in enumerate(finding.related[:100])
        ]
    return result


@register
class SarifReporter(Reporter):
    """SARIF 2.1.0."""

    name = "sarif"
    stable = True
    description = "SARIF 2.1.0 (GitHub code scanning)"

    def render(self, report: Report) -> str:
        classes = list(CLASSES)
        rules = [{
            "id": rule_id(cls),
            "name": f"gemm-{cls}-difference" if cls != "input" else "unreadable-input",
            "shortDescription": {"text": f"GEMM algorithm difference: {cls}" if cls != "input" else "Unreadable input"},
            "fullDescription": {"text": CLASSES[cls]},
            "help": {"text": _HELP[cls]},
            "defaultConfiguration": {"level": _LEVEL[{"precision": "error", "schedule": "notice"}.get(cls, "warning")]},
            "properties": {"tags": ["numerics", "gemm", cls]},
        } for cls in classes]
        results = [_result(f, classes.index(f.cls)) for f in report.findings if f.cls in classes]
        document = {
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [{
                "tool": {"driver": {"name": "blaslog", "semanticVersion": __version__,
                                    "informationUri": "https://github.com/blaslog/blaslog", "rules": rules}},
                "automationDetails": {"id": f"blaslog/{report.command}/"},
                "results": results,
            }],
        }
        return defuse_commands(dumps(document, indent=2) + "\n")
