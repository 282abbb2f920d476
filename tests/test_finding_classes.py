"""A finding class is one row of FINDING_CLASSES, and every reporter shows what that row says."""

from __future__ import annotations

import ast
import csv
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from blaslog.report import CLASSES, FAIL_ON, FINDING_CLASSES, Finding, Location, Report, ci_level, sort_findings
from blaslog.reporters import REPORTERS, get_reporter
from blaslog.reporters.markdown import md
from blaslog.reporters.sarif import SARIF_LEVEL

ROWS = list(FINDING_CLASSES.values())


def _report(cls: str, fail_on: str = "precision") -> Report:
    finding = Finding(
        "tp_algo_diff",
        cls,
        f"a {cls} title",
        f"what the {cls} difference does",
        Location("run.log", 7),
        key=f"key-{cls}",
    )
    return Report("diff", findings=[finding], fail_on=fail_on)


def test_the_table_is_most_severe_first_with_distinct_ranks():
    ranks = [row.rank for row in ROWS]
    assert ranks == sorted(ranks, reverse=True) and len(set(ranks)) == len(ranks)
    assert list(CLASSES) == ["precision", "input", "unknown", "reduction", "schedule"]
    assert all(row.level in ("warning", "notice") for row in ROWS)
    assert all(row.gitlab_severity in ("info", "minor", "major", "critical", "blocker") for row in ROWS)


def test_fail_on_keeps_its_values_and_meaning():
    expected = {
        "precision": {"precision", "unknown", "input"},
        "reduction": {"precision", "unknown", "reduction", "input"},
        "schedule": {"precision", "unknown", "reduction", "schedule", "input"},
        "any": {"precision", "unknown", "reduction", "schedule", "input"},
        "never": set(),
    }
    assert expected == FAIL_ON


def test_an_unknown_class_is_an_error_not_a_default():
    with pytest.raises(ValueError, match="unknown finding class 'fatal'"):
        Finding("tp_algo_diff", "fatal", "t", "e", Location("a.log", 1))
    with pytest.raises(ValueError, match="unknown --fail-on value"):
        Report("diff", fail_on="sometimes").exit_status()


def test_findings_sort_by_the_rank_of_their_class():
    findings = [_report(row.name).findings[0] for row in reversed(ROWS)]
    assert [f.cls for f in sort_findings(findings)] == list(FINDING_CLASSES)


def test_no_reporter_has_a_table_of_its_own():
    """No reporter module names a finding class: what a class looks like comes from FINDING_CLASSES only."""
    folder = Path(__file__).resolve().parents[1] / "blaslog" / "reporters"
    for path in folder.glob("*.py"):
        names = {node.value for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Constant)}
        assert not names & set(FINDING_CLASSES), path.name


def _table(text: str, row, level: str) -> None:
    assert f"{row.name.upper()} x1 ({level})" in text
    assert row.meaning[:60] in text


def _markdown(text: str, row, level: str) -> None:
    assert f"**1. {md(row.name)} x1** ({level})" in text
    assert f"| {md(row.meaning, 300)} |" in text  # in full, never cut to "data or comp..."


def _json(text: str, row, level: str) -> None:
    (finding,) = json.loads(text)["findings"]
    assert (finding["class"], finding["level"]) == (row.name, level)


def _jsonl(text: str, row, level: str) -> None:
    (item,) = [json.loads(line) for line in text.splitlines() if json.loads(line)["type"] == "item"]
    assert (item["class"], item["level"]) == (row.name, level)


def _csv(text: str, row, level: str) -> None:
    (record,) = csv.DictReader(io.StringIO(text))
    assert (record["class"], record["level"]) == (row.name, level)


def _github(text: str, row, level: str) -> None:
    (line,) = text.splitlines()
    assert line.startswith(f"::{level} file=run.log,line=7,title=blaslog {row.name}%3A ")


def _sarif(text: str, row, level: str) -> None:
    run = json.loads(text)["runs"][0]
    (result,) = run["results"]
    assert result["level"] == SARIF_LEVEL[level] and result["ruleId"] == f"blaslog/{row.name}"
    rule = run["tool"]["driver"]["rules"][result["ruleIndex"]]
    assert rule["help"]["text"] == row.help and rule["fullDescription"]["text"] == row.meaning
    assert rule["name"] == row.rule_name and rule["shortDescription"]["text"] == row.short
    assert rule["defaultConfiguration"]["level"] == SARIF_LEVEL[level]


def _gitlab(text: str, row, level: str) -> None:
    (issue,) = json.loads(text)
    assert issue["severity"] == row.gitlab_severity and issue["check_name"] == f"blaslog/{row.name}"


def _junit(text: str, row, level: str) -> None:
    (case,) = ET.fromstring(text).iter("testcase")
    failure = case.find("failure")
    if level == "error":
        assert failure is not None and failure.get("type") == row.name
    else:
        assert failure is None and f"{row.name}: a {row.name} title" in case.find("system-out").text


def _html(text: str, row, level: str) -> None:
    assert f'<article class="card" id="finding-1" data-class="{row.name}"' in text
    assert row.meaning in text and row.help in text and row.color in text
    assert f'<span class="muted">{level}</span>' in text


def _named(text: str, row, level: str) -> None:
    """A format with no check of its own here (one added since; its own test checks its layout): it names the
    finding's class, in any of the ways a report spells it."""
    assert row.name in text or row.name.upper() in text or md(row.name) in text


#: How each of blaslog's own formats shows a finding: the class and the level at --fail-on, where it puts them.
SHOWS = {
    "table": _table,
    "markdown": _markdown,
    "json": _json,
    "jsonl": _jsonl,
    "csv": _csv,
    "github": _github,
    "sarif": _sarif,
    "gitlab": _gitlab,
    "junit": _junit,
    "html": _html,
}


def test_every_reporter_is_checked():
    """Every format of SHOWS is registered (a format gone missing fails here); every registered format is
    checked below, those not in SHOWS by _named."""
    assert set(SHOWS) <= set(REPORTERS)


@pytest.mark.parametrize("fail_on", ["precision", "never"])
@pytest.mark.parametrize("fmt", sorted(REPORTERS))
@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.name)
def test_every_reporter_shows_the_row_of_the_class(row, fmt, fail_on):
    level = ci_level(row.name, fail_on)
    assert level == ("error" if row.name in FAIL_ON[fail_on] else row.level)
    SHOWS.get(fmt, _named)(get_reporter(fmt).render(_report(row.name, fail_on)), row, level)
