"""JUnit XML: one test case per compared GEMM pair (diff), signature (check, summary) or input (parse).

A test case fails (`<failure>`) when one of its findings fails the run at the report's --fail-on threshold,
the same findings that make the exit status 1. A finding below the threshold does not fail its test case:
the case passes and the finding's detail goes to the case's `<system-out>`, so that CI test views show it
without a red test that the exit status contradicts. An input that could not be read at all is a test case
with an `<error>` (the exit status is then 2).

All text goes through :func:`xml_text`: XML 1.0 cannot carry some characters at all (most C0 controls,
U+FFFE, U+FFFF, lone surrogates), so log text, titles and file names cannot make the document unreadable.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from blaslog.report import Case, Finding, Report
from blaslog.reporters._base import Reporter, defuse_commands, printable, register

# everything outside XML 1.0's Char production: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: object, limit: int = 0) -> str:
    """Printable text that XML 1.0 can carry: characters it cannot are written as `\\uXXXX`."""
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", printable(text, limit))


def _cases(report: Report) -> list[Case]:
    if report.cases:
        return report.cases
    return [Case(f.title, report.command, f.location.file, f.location.line, (f,)) for f in report.findings]


def _detail(finding: Finding) -> str:
    return f"{finding.cls}: {finding.title}\n{finding.explanation}"


@register
class JunitReporter(Reporter):
    """JUnit XML for GitLab and JUnit-reading actions."""

    name = "junit"
    commands = ("parse", "summary", "check", "diff")
    stable = True
    description = "JUnit XML: a test case per compared pair / signature / input, a failure per failing finding"

    def render(self, report: Report) -> str:
        cases = _cases(report)
        failures = sum(1 for c in cases if any(report.fails(f) for f in c.failures))
        tests, errors = len(cases) + len(report.failed), len(report.failed)
        suites = ET.Element("testsuites", name="blaslog", tests=str(tests), failures=str(failures), errors=str(errors))
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=f"blaslog {report.command}",
            tests=str(tests),
            failures=str(failures),
            errors=str(errors),
            skipped="0",
        )
        for path in report.failed:
            element = ET.SubElement(
                suite,
                "testcase",
                classname="inputs",
                name=xml_text(f"read {path}", 300),
                file=xml_text(path, 500),
                time="0",
            )
            ET.SubElement(element, "error", type="unreadable_input", message=xml_text(f"{path} could not be read", 500))
        seen: dict[tuple[str, str], int] = {}
        for case in cases:
            name = xml_text(case.name, 300)
            key = (case.classname, name)
            seen[key] = seen.get(key, 0) + 1
            if seen[key] > 1:  # GitLab rejects two tests with the same name and class
                name = f"{name} #{seen[key]}"
            element = ET.SubElement(
                suite,
                "testcase",
                classname=xml_text(case.classname, 300),
                name=name,
                file=xml_text(case.file, 500),
                time="0",
            )
            if case.line:
                element.set("line", str(case.line))
            passed: list[str] = []
            for finding in case.failures:
                if not report.fails(finding):
                    passed.append(_detail(finding))
                    continue
                failure = ET.SubElement(
                    element, "failure", type=finding.cls, message=xml_text(f"{finding.cls}: {finding.title}", 500)
                )
                failure.text = xml_text(finding.explanation, 20000)
            if passed:
                out = ET.SubElement(element, "system-out")
                out.text = xml_text(f"below --fail-on {report.fail_on}, not failing:\n" + "\n\n".join(passed), 20000)
        ET.indent(suites)
        text = ET.tostring(suites, encoding="unicode")
        return defuse_commands('<?xml version="1.0" encoding="utf-8"?>\n' + text + "\n", "xml")
