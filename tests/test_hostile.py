"""Hostile and unusual input that is not a log: caps documents, file names, output encodings. No traceback,
exit 2 with the file and what is wrong; property tests over caps documents and every output format."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blaslog.caps import MAX_CAPS_BYTES, load_caps
from blaslog.cli import FORMATS, cli
from blaslog.errors import CapsError

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "fixtures" / "seed"
SCALE = int(os.environ.get("BLASLOG_FUZZ_SCALE", "1"))


@pytest.mark.parametrize(
    "value,message",
    [
        ("1.5", "is not a flags value"),
        ("[1]", "is not a flags value"),
        ("{}", "is not a flags value"),
        ("1e400", "is not a flags value"),
        ('"0xZZ"', "is not a number"),
        ("-1", "out of range"),
        ("true", "is not a flags value"),
        ("NaN", "is not a number a caps file can hold"),
    ],
)
def test_caps_values_that_are_not_flags(tmp_path, value, message):
    path = tmp_path / "caps.json"
    path.write_text(f'{{"entries": [{{"algoId": 0, "numericalImplFlags": {value}}}]}}')
    result = CliRunner().invoke(cli, ["summary", str(SEED / "sharded.log"), "--caps", str(path)])
    assert result.exit_code == 2 and message in result.stderr and "Traceback" not in result.output


@pytest.mark.parametrize(
    "document,message",
    [
        ('{"entries": [{"algoId": "0"}]}', "is not an algorithm id"),
        ('{"entries": [{"algoId": -3}]}', "is not an algorithm id"),
        ('{"entries": [{"algoId": 0, "Atype": 5}]}', "is not a type name"),
        ('{"entries": [], "gpu": [1]}', "'gpu' must be an object"),
        ('{"entries": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
    ],
)
def test_caps_documents_that_are_not_caps(tmp_path, document, message):
    path = tmp_path / "caps.json"
    path.write_text(document)
    with pytest.raises(CapsError, match=message):
        load_caps(path)


def test_caps_that_are_not_files_or_too_big(tmp_path):
    with pytest.raises(CapsError, match="not a regular file"):
        load_caps("/dev/zero")
    big = tmp_path / "big.json"
    with open(big, "wb") as handle:
        handle.truncate(MAX_CAPS_BYTES + 1)
    with pytest.raises(CapsError, match="more than a caps file holds"):
        load_caps(big)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
        max_leaves=12,
    )
)
@settings(max_examples=100 * SCALE, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_json_document_is_caps_or_a_caps_error(tmp_path, document):
    for candidate in (document, {"entries": [document]}, {"entries": [{"algoId": 1, "numericalImplFlags": document}]}):
        path = tmp_path / "caps.json"
        path.write_text(json.dumps(candidate, allow_nan=True))
        with contextlib.suppress(CapsError):
            load_caps(path)


def _blaslog(*args: bytes | str, **kwargs) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "blaslog", *args], capture_output=True, timeout=60, **kwargs)


@pytest.mark.parametrize("encoding", [None, "utf-8", "ascii"])
def test_non_utf8_file_names_in_every_output(tmp_path, encoding):
    name = os.fsencode(tmp_path) + b"/r\xff.log"
    with open(name, "wb") as handle:
        handle.write((SEED / "sharded.log").read_bytes())
    env = {**os.environ, **({"PYTHONIOENCODING": encoding} if encoding else {})}
    for command in ("parse", "summary"):
        for fmt in FORMATS[command] if encoding == "utf-8" else ("table", "json"):
            if fmt == "parquet":
                continue
            result = _blaslog(command, name, "-f", fmt, env=env)
            assert result.returncode == 0, (command, fmt, result.stderr)
            assert b"Traceback" not in result.stderr
    out = os.fsencode(tmp_path) + b"/o\xfe.json"
    result = _blaslog("parse", name, "-f", "json", "-o", out, env=env)
    assert result.returncode == 0 and json.loads(Path(os.fsdecode(out)).read_text())["command"] == "parse"


HEAD = "[2024-01-01 00:00:00][cublasLt][1][Api][cublasLtMatmul] "


@pytest.mark.parametrize(
    "line,message",
    [
        (HEAD + " ".join(f"k={i}" for i in range(100_000)), "key=value pairs"),
        (HEAD + "a=" + "[" * 400_000 + "]" * 400_000, "nested too deeply"),
        ("x" * 3_000_000, "too long for a BLAS log line"),
    ],
)
def test_lines_beyond_the_limits_are_refused_before_any_grammar(line, message):
    """Bounded cost: a line is refused by counting (C-level), so it never reaches the grammar (whose cost grows
    with its values) and no tree of it is built. The benchmark measures the time (bench/run.py)."""
    import blaslog

    result = blaslog.parse_text("ok line\n" + line + "\n")
    summary = result.files[0]
    assert summary.unparsable_lines == 1 and summary.foreign_lines == 1
    assert message in summary.problems[0].message and summary.problems[0].line == 2
    assert len(summary.problems[0].text) <= 2000


def test_a_record_with_a_thousand_values_is_still_read():
    import blaslog

    result = blaslog.parse_text(HEAD + " ".join(f"k{i}={i}" for i in range(1000)) + "\n")
    assert result.files[0].other_records == 1 and result.files[0].unparsable_lines == 0


def test_leaves_find_their_volatile_spans_by_bisection():
    """LeafTransformer.leaf looks up only the spans a token overlaps (no scan of every span per token)."""
    from blaslog.formats._base import LeafTransformer, Slot

    spans = {(i * 10, i * 10 + 4): Slot(i) for i in range(10_000)}
    leaf = LeafTransformer(spans)

    class Token(str):
        start_pos = 0
        end_pos = 0

    token = Token("ab0x12cd")
    token.start_pos, token.end_pos = 49_996, 50_004  # spans (49990,49994) ends before, (50000,50004) inside
    text = leaf.leaf(token)
    assert [type(part).__name__ for part in text.parts] == ["str", "Slot"]


def test_a_log_of_ever_new_calls_keeps_bounded_tables(monkeypatch, tmp_path):
    """Past MAX_DISTINCT distinct calls a run counts further calls instead of keeping them: summary says so,
    check reports what it did not check as an input finding (a check never passes on what it did not see)."""
    import blaslog.runs
    from blaslog import api
    from tests.conftest import trace_line

    monkeypatch.setattr(blaslog.runs, "MAX_DISTINCT", 5)
    monkeypatch.setattr(blaslog.runs.CompactRun.__init__, "__defaults__", ("", 5))
    text = "".join(trace_line(64 * (1 + i), 128, 256, f"algoId={i % 3}") for i in range(12))
    log = tmp_path / "calls.log"
    log.write_text(text)
    summary = api.summary([str(log)])
    assert summary.document["overview"]["gemm_calls"] == 5
    (note,) = [note for note in summary.notes if "further distinct calls" in note]
    # The note begins with the file's name, whose folder may hold any digits: only what follows must not say 12
    said = note.removeprefix(f"{log}: ")
    assert said != note and "7 calls of further distinct calls are counted only" in said and "12" not in said
    check = api.check([str(log)])
    (finding,) = [f for f in check.findings if f.kind == "too_many_distinct_calls"]
    assert finding.cls == "input" and "7 GEMM calls" in finding.title and check.exit_status() == 1


def test_a_record_past_the_line_limit_says_whose_lines_follow():
    import blaslog

    head = "I! cuBLAS (v12.9.3) function cublasStatus_t cublasGemmEx(cublasHandle_t, cublasOperation_t) called:\n"
    body = "".join(f"i!  x{i}: type=int; val={i}\n" for i in range(300))
    text = head + body + "i! COMPILED WITH: GNU\n" + "step 1\n" + "i!  orphan: type=int; val=1\n"
    summary = blaslog.parse_text(text).files[0]
    errors = [p for p in summary.problems if p.severity == "error"]
    assert summary.balanced() and summary.record_lines == 256
    assert errors[0].line == 257 and "continues the cublas record begun at line 1" in errors[0].message
    assert "header is missing" in errors[-1].message and errors[-1].line == 304  # after other text: an orphan


SEED_LOG = Path(__file__).resolve().parents[1] / "fixtures" / "seed" / "sharded_joined.log"


def test_a_group_nested_in_a_group_is_kept_flat_and_one_in_a_value_is_reported(tmp_path):
    """A later library version may nest groups (`x=[y=1]` inside `algo=[...]`): every command reads the record,
    the nested group kept flat in `extra`; a group where a value belongs is an unparsable line, never a crash."""
    text = SEED_LOG.read_text()
    nested = tmp_path / "nested.log"
    nested.write_text(text.replace("ctaSwizzling=1", "ctaSwizzling=1 x=[y=1]"))
    assert "x=[y=1]" in nested.read_text()
    runner = CliRunner()
    for command in ("summary", "check"):
        result = runner.invoke(cli, [command, str(nested), "-f", "json"])
        assert result.exit_code in (0, 1) and "internal error" not in result.output, result.output
    parsed = runner.invoke(cli, ["parse", str(nested), "-f", "jsonl"])
    assert json.loads(parsed.stdout.splitlines()[0])["extra"]["algo.x.y"] == "1"
    grouped = tmp_path / "grouped.log"
    grouped.write_text(text.replace("computeType=COMPUTE_32F_FAST_TF32", "computeType=[x=1]"))
    result = runner.invoke(cli, ["summary", str(grouped)])
    assert result.exit_code == 2 and "computeDesc.computeType is a group" in result.stderr


def _rank_folder(tmp_path: Path, name: str) -> Path:
    """A folder of two per-rank copies of the seed log."""
    folder = tmp_path / name
    folder.mkdir()
    for rank in (0, 1):
        (folder / f"rank{rank}.log").write_text(SEED_LOG.read_text())
    return folder


def test_a_report_never_replaces_an_input_named_by_a_glob_or_a_folder(tmp_path):
    folder = _rank_folder(tmp_path, "logs")
    before = (folder / "rank1.log").read_text()
    runner = CliRunner()
    for inputs in ([str(folder / "*.log")], [str(folder)]):
        result = runner.invoke(cli, ["summary", *inputs, "-o", str(folder / "rank1.log")])
        assert result.exit_code == 2 and "would destroy the input" in result.stderr
    result = runner.invoke(cli, ["check", str(folder / "rank0.log"), "--summary", str(folder / "rank0.log")])
    assert "not appending the summary" in result.stderr
    assert (folder / "rank1.log").read_text() == before == (folder / "rank0.log").read_text()


def test_a_damaged_compressed_input_is_an_input_error_in_the_api(tmp_path):
    import gzip

    from blaslog import api
    from blaslog.errors import BlaslogError

    data = bytearray(gzip.compress(SEED_LOG.read_bytes()))
    data[len(data) // 2] ^= 0xFF
    damaged = tmp_path / "damaged.log.gz"
    damaged.write_bytes(bytes(data))
    with pytest.raises(BlaslogError, match="ends early"):
        api.summary([str(damaged)])
    result = CliRunner().invoke(cli, ["summary", str(damaged)])
    assert result.exit_code == 2 and "internal error" not in result.output


def test_a_check_that_compared_nothing_does_not_pass(tmp_path):
    """One GEMM signature called once compares nothing: an `input` finding, exit 1, and the note says so; a file
    without GEMMs beside others is named too."""
    once = tmp_path / "once.log"
    once.write_text(SEED_LOG.read_text())
    empty = tmp_path / "prints.log"
    empty.write_text("step 1 loss=2.0\nstep 2 loss=1.9\n")
    result = CliRunner().invoke(cli, ["check", str(once), str(empty), "-f", "json"])
    assert result.exit_code == 1, result.output
    kinds = {(f["kind"], f["location"]["file"]) for f in json.loads(result.stdout)["findings"]}
    assert kinds == {("nothing_compared", str(once)), ("no_gemms", str(empty))}
    assert "compared: " in result.stderr and "0 of 1 GEMM signatures ran more than once" in result.stderr
    twice = tmp_path / "twice.log"
    twice.write_text(SEED_LOG.read_text() * 2)
    result = CliRunner().invoke(cli, ["check", str(twice)])
    assert result.exit_code == 0 and "1 of 1 GEMM signatures ran more than once" in result.stderr


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"environment": ["A=1"]}, "`environment` is a list, not a mapping"),
        ({"ranks": {"0": "A100"}}, "`ranks.0` is a str, not a mapping"),
        ({"ranks": {"0": {"settings": [1]}}}, "`ranks.0.settings` is a list, not a mapping"),
        ({"gpus": ["A100"]}, "`gpus` is not a list of mappings"),
        ({"files": [{"file": "rank0.log", "rank": -7}]}, "is -7, not a rank number"),
        ({"files": [{"file": "rank0.log", "rank": True}]}, "is True, not a rank number"),
        ({"world_size": "four"}, "`world_size` is four"),
        ({"gpus": [{"name": ["x"]}]}, "a GPU's `name` is not a text"),
        ({"ranks": {"\u00b2": {}}}, "is not a rank number"),
    ],
)
def test_a_run_manifest_not_as_record_writes_it_is_an_input_error(tmp_path, change, message):
    """run.json comes from CI artifacts like the logs: a part of the wrong shape is named, never a crash."""
    manifest = {
        "kind": "blaslog-run",
        "files": [{"file": "rank0.log", "rank": 0}],
        "world_size": 1,
        "environment": {"NVIDIA_TF32_OVERRIDE": "0"},
        "ranks": {"0": {"gpu": "A100", "settings": {"allow_tf32": True}}},
    }
    runs = []
    for name, edit in (("edited", change), ("reference", {})):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "rank0.log").write_text(SEED_LOG.read_text())
        (folder / "run.json").write_text(json.dumps({**manifest, **edit}))
        runs.append(str(folder))
    result = CliRunner().invoke(cli, ["diff", *runs])
    assert result.exit_code == 2 and message in result.stderr and "internal error" not in result.output


def test_an_input_not_read_fails_the_api_report_as_it_fails_the_command(tmp_path):
    """The report's own exit status, its JSON and its SARIF say an input was not read, as the exit code 2 does."""
    from blaslog import api
    from blaslog.reporters import get_reporter

    missing = str(tmp_path / "missing.log")
    report = api.check([missing, str(SEED_LOG)])
    assert report.exit_status() == 2 and report.to_json()["failed"] == [f"{missing}: no such file"]
    sarif = json.loads(get_reporter("sarif").render(report))["runs"][0]["invocations"][0]
    assert (
        sarif["executionSuccessful"] is False and missing in sarif["toolExecutionNotifications"][0]["message"]["text"]
    )
    result = CliRunner().invoke(cli, ["check", missing, str(SEED_LOG), "-f", "json"])
    assert result.exit_code == 2 and json.loads(result.stdout)["failed"] == report.to_json()["failed"]


def test_a_folder_or_glob_input_names_the_files_it_cannot_read(tmp_path):
    """A link to nothing in a folder of logs is an input not read (exit 2, named), not a file left out unsaid."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "rank0.log").write_text(SEED_LOG.read_text())
    (folder / "rank1.log").symlink_to(tmp_path / "nowhere.log")
    for name in (str(folder), str(folder / "*.log")):
        result = CliRunner().invoke(cli, ["summary", name])
        assert result.exit_code == 2 and f"{folder / 'rank1.log'}: no such file" in result.stderr, result.stderr


def test_output_dash_is_stdout_and_an_empty_name_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["summary", str(SEED_LOG), "-o", "-", "-q"])
    assert result.exit_code == 0 and "signatures" in result.stdout and not (tmp_path / "-").exists()
    result = CliRunner().invoke(cli, ["summary", str(SEED_LOG), "-o", ""])
    assert result.exit_code == 2 and "an empty file name" in result.stderr


def test_standard_input_on_both_sides_of_a_diff_is_refused():
    result = CliRunner().invoke(cli, ["diff", "-", "-"], input=SEED_LOG.read_text())
    assert result.exit_code == 2 and "standard input (-) is named on both sides" in result.stderr


def test_rank_from_meant_for_the_sharded_side_does_not_fail_the_one_reference_file(tmp_path):
    folder = _rank_folder(tmp_path, "tp")
    reference = tmp_path / "reference.log"
    reference.write_text(SEED_LOG.read_text())
    result = CliRunner().invoke(cli, ["diff", str(folder / "*.log"), str(reference), "--rank-from", r"rank(\d+)"])
    assert result.exit_code in (0, 1) and "matches no rank number" not in result.stderr, result.stderr


def test_a_report_never_replaces_an_input_found_by_a_recursive_glob(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    for path in (tmp_path / "r0.log", tmp_path / "a" / "b" / "r1.log"):
        path.write_text(SEED_LOG.read_text())
    for target in (tmp_path / "r0.log", tmp_path / "a" / "b" / "r1.log"):
        result = CliRunner().invoke(cli, ["summary", str(tmp_path / "**" / "*.log"), "-o", str(target)])
        assert result.exit_code == 2 and "would destroy the input" in result.stderr
        assert target.read_text() == SEED_LOG.read_text()


def test_a_report_beside_the_logs_of_a_folder_input_is_written_again(tmp_path):
    """A report file in the folder is not one of its logs: the second run replaces it as the first wrote it."""
    folder = _rank_folder(tmp_path, "run")
    for _ in range(2):
        result = CliRunner().invoke(cli, ["summary", str(folder), "-o", str(folder / "summary.txt")])
        assert result.exit_code == 0, result.stderr
    assert "signatures" in (folder / "summary.txt").read_text()


def test_ranks_interleaved_inside_multi_line_records_are_unparsable_and_said(tmp_path):
    """Two ranks' tagged cuBLAS records interleaved line by line in one stream: the lines under the other tag are
    unparsable (an `input` finding for check), with a message that says to split the file per tag; never
    counted as program output."""
    text = (
        Path(__file__).resolve().parents[1] / "fixtures" / "real" / "cublas_13.4.1_go-peft-cuda-validation.log"
    ).read_text()
    lines = text.splitlines()
    mixed = tmp_path / "mixed.log"
    mixed.write_text("".join(f"[rank0]:{a}\n[rank1]:{b}\n" for a, b in zip(lines, lines, strict=True)))
    result = CliRunner().invoke(cli, ["check", str(mixed), "-f", "json"])
    doc = json.loads(result.stdout)
    (summary,) = doc["summary"]["files"]
    assert summary["unparsable_lines"] > 0 and summary["foreign_lines"] == 0
    assert "split the file per tag" in result.stderr
    assert result.exit_code == 1 and any(f["kind"] == "unparsable_input" for f in doc["findings"])
