"""JUnit XML: one test case per compared GEMM pair (diff), signature (check, summary) or input (parse)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from blaslog.report import Case, Report
from blaslog.reporters._base import Reporter, defuse_commands, printable, register


def _cases(report: Report) -> list[Case]:
    if report.cases:
        return report.cases
    return [Case(f.title, report.command, f.location.file, f.location.line, (f,)) for f in report.findings]


@register
class JunitReporter(Reporter):
    """JUnit XML for GitLab and JUnit-reading actions."""

    name = "junit"
    stable = True
    description = "JUnit XML: a test case per compared pair / signature / input, a failure per finding"

    def render(self, report: Report) -> str:
        cases = _cases(report)
        failures = sum(1 for c in cases if c.failures)
        suites = ET.Element("testsuites", name="blaslog", tests=str(len(cases)), failures=str(failures), errors="0")
        suite = ET.SubElement(suites, "testsuite", name=f"blaslog {report.command}", tests=str(len(cases)),
                              failures=str(failures), errors="0", skipped="0")
        seen: dict[tuple[str, str], int] = {}
        for case in cases:
            name = printable(case.name, 300)
            key = (case.classname, name)
            seen[key] = seen.get(key, 0) + 1
            if seen[key] > 1:  # GitLab rejects two tests with the same name and class
                name = f"{name} #{seen[key]}"
            element = ET.SubElement(suite, "testcase", classname=printable(case.classname, 300), name=name,
                                    file=printable(case.file, 500), time="0")
            if case.line:
                element.set("line", str(case.line))
            for finding in case.failures:
                failure = ET.SubElement(element, "failure", type=finding.cls,
                                        message=printable(f"{finding.cls}: {finding.title}", 500))
                failure.text = printable(finding.explanation, 20000)
        ET.indent(suites)
        return defuse_commands('<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n")
