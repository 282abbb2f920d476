"""Every CI format tells the story the exit status tells: a finding that fails the run (its class at or above
--fail-on) is an error everywhere, and one that does not is never an error anywhere."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blaslog.report import FAIL_ON, FINDING_CLASSES, Case, Finding, Location, Report
from blaslog.reporters import get_reporter
from blaslog.reporters.sarif import SARIF_LEVEL

#: What --fail-on means, spelled out: the classes that give exit status 1.
EXPECTED = {
    "precision": {"precision", "unknown", "input"},  # what was not read may hide a precision difference
    "reduction": {"precision", "unknown", "reduction", "input"},
    "schedule": {"precision", "unknown", "reduction", "schedule", "input"},
    "any": set(FINDING_CLASSES),
    "never": set(),
}


def _report(cls: str, fail_on: str) -> Report:
    finding = Finding("tp_algo_diff", cls, f"{cls} title", "explanation", Location("run.log", 3), key=cls)
    case = Case("line 3 TN 1x2x3 vs line 4 TN 1x2x12", "s.log vs u.log", "run.log", 3, (finding,))
    passing = Case("line 9 NN 4x4x4 vs line 9 NN 4x4x16", "s.log vs u.log", "run.log", 9)
    return Report("diff", findings=[finding], cases=[case, passing], fail_on=fail_on)


def test_the_thresholds_are_the_documented_ones():
    assert set(FAIL_ON) == set(EXPECTED)


@pytest.mark.parametrize("fail_on", sorted(EXPECTED))
@pytest.mark.parametrize("cls", list(FINDING_CLASSES))
def test_exit_status_junit_sarif_and_github_agree(cls, fail_on):
    report = _report(cls, fail_on)
    fails = cls in EXPECTED[fail_on]
    assert report.exit_status(fail_on) == report.exit_status() == int(fails)
    row = FINDING_CLASSES[cls]

    suite = ET.fromstring(get_reporter("junit").render(report)).find("testsuite")
    failing, passing = suite.findall("testcase")
    assert (failing.find("failure") is not None) == fails
    assert (failing.find("system-out") is not None) == (not fails)
    assert suite.get("failures") == str(int(fails)) and suite.get("tests") == "2"
    assert passing.find("failure") is None and passing.find("system-out") is None

    (result,) = json.loads(get_reporter("sarif").render(report))["runs"][0]["results"]
    assert result["level"] == ("error" if fails else SARIF_LEVEL[row.level])

    (annotation,) = get_reporter("github").render(report).splitlines()
    assert annotation.startswith("::error " if fails else f"::{row.level} ")

    (item,) = json.loads(get_reporter("json").render(report))["findings"]
    assert item["level"] == ("error" if fails else row.level)


def test_an_unreadable_input_is_a_junit_error_and_a_github_error():
    report = Report("diff", failed=["gone.log"])
    suite = ET.fromstring(get_reporter("junit").render(report)).find("testsuite")
    assert suite.get("errors") == "1" and suite.find("testcase/error") is not None
    assert get_reporter("github").render(report).startswith("::error file=gone.log,")


def test_github_keeps_ten_per_level_by_the_threshold():
    """At --fail-on schedule the 14 schedule findings are errors: ten shown, the last one counting the rest."""
    findings = [Finding("tp_algo_diff", "schedule", f"f{i}", "x", Location("a.log", i + 1)) for i in range(14)]
    lines = get_reporter("github").render(Report("diff", findings=findings, fail_on="schedule")).splitlines()
    assert len(lines) == 10 and all(line.startswith("::error ") for line in lines)
    assert "5 more error findings" in lines[-1]
    lines = get_reporter("github").render(Report("diff", findings=findings, fail_on="precision")).splitlines()
    assert all(line.startswith("::notice ") for line in lines)


# every code point, lone surrogates and U+FFFE/U+FFFF among them, which XML 1.0 cannot carry (st.text leaves
# surrogates out, so the strings are built from code points)
SPECIAL = [0x0, 0xB, 0x1B, 0x85, 0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xFFFE, 0xFFFF, 0x10FFFF]
ANY_TEXT = st.lists(st.one_of(st.integers(0, 0x10FFFF), st.sampled_from(SPECIAL)), max_size=40).map(
    lambda points: "".join(map(chr, points))
)


@pytest.mark.property
@settings(max_examples=200, deadline=None)
@given(
    title=ANY_TEXT,
    explanation=ANY_TEXT,
    file=ANY_TEXT,
    fail_on=st.sampled_from(sorted(FAIL_ON)),
    cls=st.sampled_from(list(FINDING_CLASSES)),
)
def test_junit_is_well_formed_for_any_text(title, explanation, file, fail_on, cls):
    finding = Finding("tp_algo_diff", cls, title, explanation, Location(file, 1), key="k")
    report = Report(
        "diff", findings=[finding], cases=[Case(title, file, file, 1, (finding,))], failed=[file], fail_on=fail_on
    )
    text = get_reporter("junit").render(report)
    root = ET.fromstring(text.encode("utf-8"))
    assert len(list(root.iter("testcase"))) == 2
