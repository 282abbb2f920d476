"""Every reporter renders an empty and a real report; CI formats validate and cannot be injected."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from unittest import mock

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tabulate import tabulate

import blaslog
from blaslog.diff import diff_runs
from blaslog.report import Report
from blaslog.reporters import REPORTERS, get_reporter
from blaslog.reporters._base import cell, column_cells
from blaslog.reporters.github import escape_data, escape_property
from blaslog.reporters.table import simple_table
from blaslog.views import check_report, diff_report, parse_report, summary_report
from tests.conftest import GENERATED, SEED

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())


def _diff(caps):
    s = blaslog.parse(str(GENERATED / "lt_fp32_tp4/blaslt_321674.log"))
    u = blaslog.parse(str(GENERATED / "lt_fp32_unsharded.stdout.log"))
    result = diff_runs(s.gemms, u.gemms, caps=caps, sharded_file="s.log", unsharded_file="u.log")
    return diff_report([result], s.files, u.files)


@pytest.fixture(scope="module")
def reports():
    caps = blaslog.load_caps(GENERATED / "caps.json")
    parsed = blaslog.parse(str(SEED / "sharded.log"))
    rocblas = blaslog.parse(str(GENERATED / "rocblas_fp16_trace.log"))
    return {
        "empty-diff": Report("diff"),
        "empty-parse": Report("parse"),
        "parse": parse_report(parsed),
        "parse-all": parse_report(blaslog.parse(str(GENERATED / "lt_fp32_unsharded.stdout.log")), kind="all"),
        "diff": _diff(caps),
        "check": check_report(rocblas.gemms, rocblas.files),
        "summary": summary_report(rocblas.gemms, rocblas.files),
    }


#: The formats blaslog has always had: the registry (found in the package, see blaslog.reporters) may grow, but a
#: format missing (a module deleted, a class no longer registered, a declaration mistyped) fails here.
KNOWN = {
    "csv": ("parse", "summary", "check", "diff"),
    "github": ("check", "diff"),
    "gitlab": ("check", "diff"),
    "html": ("summary", "check", "diff"),
    "json": ("parse", "summary", "check", "diff", "emulate"),
    "jsonl": ("parse", "summary", "check", "diff"),
    "junit": ("parse", "summary", "check", "diff"),
    "markdown": ("parse", "summary", "check", "diff", "emulate"),
    "sarif": ("check", "diff"),
    "table": ("parse", "summary", "check", "diff", "emulate"),
}


def test_the_registry_has_every_format():
    assert set(KNOWN) <= set(REPORTERS)
    for name, commands in KNOWN.items():
        assert set(REPORTERS[name].commands) == set(commands), name
        assert REPORTERS[name].name == name and REPORTERS[name].description, name


@pytest.mark.parametrize("fmt", sorted(REPORTERS))
@pytest.mark.parametrize("which", ["empty-diff", "empty-parse", "parse", "parse-all", "diff", "check", "summary"])
def test_every_reporter_renders_every_report(fmt, which, reports):
    text = get_reporter(fmt).render(reports[which])
    assert isinstance(text, str)
    if fmt in ("json", "sarif", "gitlab"):
        json.loads(text)
    if fmt == "jsonl":
        for line in text.splitlines():
            json.loads(line)
    if fmt == "junit":
        ET.fromstring(text)
    if which in ("diff", "check") and fmt in ("table", "markdown", "github", "gitlab"):
        assert "precision" in text


def test_unknown_format_suggests():
    with pytest.raises(blaslog.BlaslogError, match="did you mean 'sarif'"):
        get_reporter("sarf")


def test_json_diff_document(reports):
    doc = json.loads(get_reporter("json").render(reports["diff"]))
    assert doc["schema_version"] == 1 and doc["command"] == "diff"
    classes = sorted(f["class"] for f in doc["findings"])
    assert classes == ["precision", "reduction", "schedule"]
    finding = next(f for f in doc["findings"] if f["class"] == "precision")
    assert finding["fields"]["algoId"] == [0, 21]
    assert finding["sharded"]["k"] == 256 and finding["unsharded"]["k"] == 1024
    assert finding["sharded"]["file"].endswith("blaslt_321674.log") and finding["sharded"]["line"] == 85
    assert finding["count"] == 4 and finding["explanation"]
    assert doc["comparisons"][0]["tp_inference"]["tp"] == 4


def test_json_parse_document(reports):
    doc = json.loads(get_reporter("json").render(reports["parse"]))
    assert doc["schema_version"] == 1
    (record,) = doc["records"]
    assert (record["m"], record["n"], record["k"]) == (64, 1024, 8)
    (summary,) = doc["summary"]["files"]
    assert summary["lines"] == 8 and summary["gemm_records"] == 1 and summary["unparsable_lines"] == 0


def test_sarif_validates_against_the_official_schema(reports):
    for which in ("diff", "check", "empty-diff"):
        document = json.loads(get_reporter("sarif").render(reports[which]))
        jsonschema.validate(document, SCHEMA)
    document = json.loads(get_reporter("sarif").render(reports["diff"]))
    run = document["runs"][0]
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} >= {"blaslog/precision", "blaslog/reduction"}
    result = next(r for r in run["results"] if r["ruleId"] == "blaslog/precision")
    assert result["level"] == "error"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 85
    again = json.loads(get_reporter("sarif").render(_diff(blaslog.load_caps(GENERATED / "caps.json"))))
    assert [r["partialFingerprints"] for r in again["runs"][0]["results"]] == [
        r["partialFingerprints"] for r in run["results"]
    ]


@pytest.mark.parametrize(
    "fail_on,failing,passing_with_output", [("precision", 4, 8), ("schedule", 12, 0), ("never", 0, 12)]
)
def test_junit_counts(reports, fail_on, failing, passing_with_output):
    """12 compared pairs differ (4 precision, 4 reduction, 4 schedule): those at or above --fail-on fail, the
    others pass with their finding in system-out."""
    report = dataclasses.replace(reports["diff"], fail_on=fail_on)
    root = ET.fromstring(get_reporter("junit").render(report))
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == 78 and suite.get("tests") == "78"
    failures = [c for c in cases if c.find("failure") is not None]
    assert len(failures) == failing and suite.get("failures") == str(failing)
    quiet = [c for c in cases if c.find("failure") is None and c.find("system-out") is not None]
    assert len(quiet) == passing_with_output
    assert all("below --fail-on" in c.find("system-out").text for c in quiet)
    names = [(c.get("classname"), c.get("name")) for c in cases]
    assert len(set(names)) == len(names)


def test_gitlab_code_quality_fields(reports):
    issues = json.loads(get_reporter("gitlab").render(reports["diff"]))
    assert len(issues) == 3
    for issue in issues:
        assert set(issue) >= {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["severity"] in ("info", "minor", "major", "critical", "blocker")
        assert isinstance(issue["location"]["lines"]["begin"], int) and issue["location"]["path"]
    assert len({i["fingerprint"] for i in issues}) == 3


def test_github_escaping_rules():
    assert escape_data("50%\r\nnext") == "50%25%0D%0Anext"
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"


HOSTILE = [
    "::add-mask::secret",
    "::stop-commands::pwned",
    "x%0A::error::forged",
    "line\n::warning::forged",
    "<script>alert(1)</script>",
    "]]></failure><injected/>",
    "\x1b[31mred\x1b[0m",
    "A" * 5000,
]


@pytest.mark.parametrize("evil", HOSTILE)
@pytest.mark.parametrize("fmt", sorted(REPORTERS))
def test_log_text_cannot_inject_commands_or_break_documents(evil, fmt, tmp_path):
    """Crafted values in a log's function name, keys and file name come out escaped in every format."""
    safe_name = evil.replace("\n", " ").replace("\x1b", "")
    tile = safe_name.replace(" ", "_").replace("=", "_").replace("[", "(").replace("]", ")")
    line = (
        "[2024-01-01 00:00:00][cublasLt][1][Trace][cublasLtMatmul] A=0X1 Adesc=[type=R_32F rows=4 cols=8 ld=4] "
        "B=0X2 Bdesc=[type=R_32F rows=8 cols=2 ld=8] C=0X3 Cdesc=[type=R_32F rows=4 cols=2 ld=4] D=0X3 "
        "Ddesc=[type=R_32F rows=4 cols=2 ld=4] computeDesc=[computeType=COMPUTE_32F scaleType=R_32F] "
        f"algo=[algoId=ALGO tile={tile}] "
        "workSpace=0X0 workSpaceSizeInBytes=0 beta=0 outOfPlace=0 stream=0X0"
    )
    first = blaslog.parse_text(line.replace("ALGO", "1") + "\n", name=evil).gemms
    second = blaslog.parse_text(line.replace("ALGO", "2") + "\n", name=evil).gemms
    result = diff_runs(first, second)
    report = diff_report([result], [], [])
    text = get_reporter(fmt).render(report)
    lines = text.splitlines()
    for out in lines:
        if out.lstrip().startswith("::"):
            assert fmt == "github"
            assert out.startswith(("::error ", "::warning ", "::notice ")), out
            command, _, message = out[2:].partition("::")
            assert "\n" not in message and "\r" not in message
            name, _, props = command.partition(" ")
            assert name in ("error", "warning", "notice")
            keys = [prop.split("=", 1)[0] for prop in props.split(",")]
            assert set(keys) <= {"file", "line", "title"} and len(keys) == len(set(keys))
    assert "\x1b" not in text
    if fmt in ("json", "sarif", "gitlab"):
        json.loads(text)
    if fmt == "junit":
        ET.fromstring(text)
    if fmt == "markdown":  # raw text only inside code spans, where Markdown shows HTML as text
        assert "<script>" not in re.sub(r"(`+) ?.*? ?\1", "", text)


def test_github_limits_ten_per_level_with_a_closing_count():
    from blaslog.report import Finding, Location

    findings = [Finding("tp_algo_diff", "precision", f"f{i}", "x", Location("a.log", i + 1)) for i in range(14)]
    text = get_reporter("github").render(Report("diff", findings=findings))
    errors = [line for line in text.splitlines() if line.startswith("::error")]
    assert len(errors) == 10
    assert "5 more error findings" in errors[-1]
    assert errors[0].startswith("::error file=a.log,line=1,title=blaslog precision%3A f0::")


def test_markdown_code_spans_escape_nothing_and_fence_backticks():
    from blaslog.report import Finding, Location
    from blaslog.reporters.markdown import code

    assert code("logs/rank_0__tp4.log:12") == "`logs/rank_0__tp4.log:12`"
    assert code("a`b") == "``a`b``" and code("`x") == "`` `x ``" and code("a``b`") == "``` a``b` ```"
    finding = Finding("tp_algo_diff", "precision", "t", "x", Location("run_tp_4*x.log", 3))
    text = get_reporter("markdown").render(Report("diff", findings=[finding]))
    assert "`run_tp_4*x.log:3`" in text and "\\_" not in text.split("`run_tp_4")[1].split("`")[0]


def test_csv_columns_are_unique(reports):
    from blaslog.reporters.csv import CsvReporter

    header = next(csv.reader(io.StringIO(CsvReporter().stream_begin())))
    assert len(header) == len(set(header)) and {"algo", "event", "trans"} <= set(header)
    for which in ("parse", "parse-all", "diff", "check", "summary"):
        header = next(csv.reader(io.StringIO(get_reporter("csv").render(reports[which]))))
        assert len(header) == len(set(header)), which


def test_parse_table_shows_the_transposes(reports):
    text = get_reporter("table").render(reports["parse"])
    head, _, row = text.splitlines()[:3]
    assert "trans" in head.split()
    assert row.split()[head.split().index("trans")] == "TN"


def test_diff_csv_rows_carry_the_level_at_fail_on(reports):
    rows = list(csv.DictReader(io.StringIO(get_reporter("csv").render(reports["diff"]))))
    assert {(r["class"], r["level"]) for r in rows} == {
        ("precision", "error"),
        ("reduction", "warning"),
        ("schedule", "notice"),
    }


def test_every_format_module_registers_the_formats_it_is_named_for():
    """The lazy registry reads each format module's declarations from its text and imports the module on first
    use: each module registers exactly the formats its text declares, with the declarations the text gives,
    and a reporter registered from outside the package is listed too."""
    import importlib

    from blaslog.reporters._base import Reporter, register

    declared = REPORTERS.declared()  # type: ignore[attr-defined]
    assert set(KNOWN) <= set(declared)
    for name, where in declared.items():
        importlib.import_module(where.module)
        cls = REPORTERS.loaded[name]  # type: ignore[attr-defined]
        assert cls.__module__ == where.module and cls.name == name
        for attribute in ("commands", "extra", "requires", "description", "stable"):
            if attribute in where.values:  # what the command line reads before importing is what the class says
                assert where.values[attribute] == getattr(cls, attribute), (name, attribute)
        assert cls.commands, f"{name} is offered by no command"
    assert {n for n, c in REPORTERS.loaded.items() if c.__module__.startswith("blaslog.")} == set(declared)  # type: ignore[attr-defined]

    @register
    class Outside(Reporter):
        name = "outside-test"
        commands = ("diff",)

        def render(self, report):
            return ""

    try:
        assert "outside-test" in list(REPORTERS) and isinstance(get_reporter("outside-test"), Outside)
        from blaslog.reporters import offered

        assert "outside-test" in offered("diff") and "outside-test" not in offered("parse")
    finally:
        del REPORTERS.loaded["outside-test"]  # type: ignore[attr-defined]


_CELLS = st.one_of(
    st.text(alphabet=" -_.=x/aZ09", max_size=10),
    st.sampled_from(
        ["", " ", "True", "False", "1.5", "007", "-3", "1e5", "nan", " a", "b ", "日本", "é", "\t", "a\tb"]
    ),
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["calls", "m", "algorithms", "a b", "", " h", "True"]), min_size=1, max_size=5).flatmap(
        lambda headers: st.tuples(
            st.just(headers), st.lists(st.lists(_CELLS, min_size=len(headers), max_size=len(headers)), max_size=6)
        )
    )
)
def test_the_plain_table_writer_gives_what_tabulate_gives(table: tuple[list[str], list[list[str]]]) -> None:
    """The big tables (a summary of 25,000 distinct calls) are written without tabulate when their text is
    printable ASCII: byte for byte what tabulate writes, cells stripped, short columns widened to their header."""
    headers, body = table
    expected = tabulate(body, headers=headers, tablefmt="simple", disable_numparse=True)
    assert simple_table(headers, body) == expected


def test_the_plain_table_writer_is_used_for_a_summary_of_many_calls() -> None:
    """A summary table whose text is plain ASCII does not go through tabulate at all."""
    rows = [{"calls": str(i), "function": "cublasLtMatmul", "algorithms": f"algoId={i} x1"} for i in range(50)]
    report = Report("summary", rows=rows, columns=["calls", "function", "algorithms"])
    with mock.patch("blaslog.reporters.table.tabulate", side_effect=AssertionError("tabulate was called")):
        text = get_reporter("table").render(report)
    assert text.splitlines()[:3] == [
        "calls    function        algorithms",
        "-------  --------------  ------------",
        "0        cublasLtMatmul  algoId=0 x1",
    ]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=30), st.sampled_from(["a\nb", "\x1b[31m", "x" * 70])))
)
def test_cells_of_a_column_are_what_cell_makes_of_each(values: list[object]) -> None:
    """The column-at-a-time cells of a big table are those of cell(), escapes and cuts included."""
    assert column_cells(values, 60) == [cell(value, 60) for value in values]
