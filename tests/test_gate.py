"""A gate you can trust: a diff that compared nothing never passes, ranks are ranks, what was compared is said
(even with -q), and -o never destroys anything."""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

import blaslog
from blaslog import api
from blaslog.cli import cli
from blaslog.errors import InputError
from blaslog.ranks import assign_ranks, compact_ranks, find_inputs, rank_from_path, rank_from_tags
from tests.conftest import layer3_log

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "fixtures" / "seed"
GENERATED = ROOT / "fixtures" / "generated"
NVIDIA = ROOT / "fixtures" / "nvidia-lib"
TP4 = sorted((GENERATED / "lt_fp32_tp4").glob("*.log"))
UNSHARDED = GENERATED / "lt_fp32_unsharded.stdout.log"


def run(*args: object, input: bytes | None = None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


# ---- nothing compared is exit 2, with -q, and says why ---------------------------------------------------------


def test_swapped_sides_exit_2_even_quiet():
    result = run("diff", UNSHARDED, str(GENERATED / "lt_fp32_tp4" / "*.log"), "--fail-on", "any", "-q", "-f", "json")
    assert result.exit_code == 2 and result.stdout == ""
    assert "other way round" in result.stderr


def test_wrong_tp_exit_2():
    result = run("diff", TP4[0], UNSHARDED, "--tp", "3", "-q")
    assert result.exit_code == 2
    assert "--tp 3" in result.stderr


def test_unrelated_logs_exit_2():
    result = run("diff", GENERATED / "rocblas_fp16_trace.log", UNSHARDED, "-q")
    assert result.exit_code == 2 and "different libraries" in result.stderr
    other = run("diff", SEED / "sharded.log", GENERATED / "hipblaslt_bf16_unsharded.api.log", "-q")
    assert other.exit_code == 2 and "nothing to compare" in other.stderr


def test_library_raises_what_the_command_prints():
    with pytest.raises(InputError, match="other way round"):
        api.diff(str(UNSHARDED), [str(p) for p in TP4])


def test_what_was_compared_is_printed_even_quiet():
    result = run("diff", str(GENERATED / "lt_fp32_tp4" / "*.log"), UNSHARDED, "-q", "-f", "json")
    assert result.exit_code == 1
    assert result.stderr.startswith("compared: ")
    assert "rank 0" in result.stderr and "GEMM calls paired" in result.stderr
    doc = json.loads(result.stdout)
    sharded = [c for c in doc["coverage"] if c["side"] == "sharded"]
    assert [c["rank"] for c in sharded] == [0, 1, 2, 3]
    assert all(c["paired"] > 0 for c in sharded)
    assert {r["how"] for r in doc["ranks"]} == {"name order (guessed)"}


def test_low_coverage_is_an_input_finding():
    # the seed's sharded log holds one GEMM; with lt_fp32_tp4 rank 0 as the other side most calls are unmatched
    result = run("diff", TP4[0], UNSHARDED, "--min-coverage", "1", "--fail-on", "any", "-q", "-f", "json")
    doc = json.loads(result.stdout)
    coverage = next(c for c in doc["coverage"] if c["side"] == "sharded")
    if coverage["unmatched"]:
        assert any(f["kind"] == "low_coverage" and f["class"] == "input" for f in doc["findings"])
        assert result.exit_code == 1
    low = run("diff", TP4[0], UNSHARDED, "--min-coverage", "0", "-q", "-f", "json")
    assert not any(f["kind"] == "low_coverage" for f in json.loads(low.stdout)["findings"])


@pytest.mark.parametrize("command", ["check", "summary"])
def test_check_and_summary_on_inputs_without_gemms_exit_2(command):
    result = run(command, NVIDIA / "cublas_12.9.3_loginfo_nogpu.log", "-q")
    assert result.exit_code == 2
    path = NVIDIA / "cublas_12.9.3_loginfo_nogpu.log"
    assert f"no GEMM records found in {path} (23 lines: 4 records of no GEMM (cublas=4)); was logging on?" in (
        result.stderr
    )


def test_a_missing_file_is_one_error():
    result = run("summary", "no/such/file.log")
    assert result.exit_code == 2
    assert result.stderr.count("error") == 1 and "no such file" in result.stderr


# ---- ranks ------------------------------------------------------------------------------------------------------


def _ranked_layout(tmp_path: Path, names: list[str]) -> list[Path]:
    out = []
    for name, source in zip(names, TP4, strict=False):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, path)
        out.append(path)
    return out


def test_rank_means_rank_not_name_order(tmp_path):
    files = _ranked_layout(tmp_path / "tp4", ["rank0.log", "rank1.log", "rank10.log", "rank2.log"])
    result = run("diff", str(tmp_path / "tp4" / "*.log"), UNSHARDED, "--rank", "2", "-q", "-f", "json")
    doc = json.loads(result.stdout)
    assert [r["file"] for r in doc["ranks"]] == [str(files[3])]
    assert doc["ranks"][0] == {"file": str(files[3]), "rank": 2, "how": "path"}
    missing = run("diff", str(tmp_path / "tp4" / "*.log"), UNSHARDED, "--rank", "5", "-q")
    assert missing.exit_code == 2 and "has no rank 5 (it has ranks 0-2,10)" in missing.stderr


def test_torchrun_log_dir_layout_is_searched_recursively(tmp_path):
    files = _ranked_layout(tmp_path / "run", [f"attempt_0/{r}/stdout.log" for r in range(4)])
    (tmp_path / "run" / "attempt_0" / "0" / "stderr.log").write_text("W1201 warning from a launcher\n")
    result = run("diff", tmp_path / "run", UNSHARDED, "-q", "-f", "json")
    doc = json.loads(result.stdout)
    assert [(r["rank"], r["how"]) for r in doc["ranks"]] == [(r, "path") for r in range(4)]
    assert [r["file"] for r in doc["ranks"]] == [str(f) for f in files]
    recursive = run("diff", str(tmp_path / "run" / "**" / "stdout.log"), UNSHARDED, "-q", "-f", "json")
    assert json.loads(recursive.stdout)["ranks"] == doc["ranks"]


def test_launcher_tag_names_the_rank(tmp_path):
    path = tmp_path / "blaslt_4242.log"
    path.write_text("".join(f"[rank3]:{line}" for line in TP4[0].read_text().splitlines(keepends=True)))
    (ranked,) = assign_ranks([str(path)], [path.read_bytes()[:4096]])
    assert (ranked.rank, ranked.how) == (3, "launcher tag")
    assert rank_from_tags(b"[default5]:x\n[1,7]<stdout>:y\n") == {5, 7}


def test_rank_from_regex_and_paths():
    import re

    assert rank_from_path("logs/node1_gpu6.log", re.compile(r"gpu(\d+)")) == 6
    assert rank_from_path("logs/run_r1/rank_3.log") == 3
    assert rank_from_path("logs/tp4/blaslt_321674.log") is None
    assert rank_from_path("attempt_0/7/stdout.log") == 7
    assert rank_from_path("out-r12.log") == 12
    assert compact_ranks([0, 1, 2, 3, 6, 8, 9]) == "0-3,6,8-9"
    with pytest.raises(InputError, match="not a valid regular expression"):
        assign_ranks(["a", "b"], [b"", b""], "(")


def test_guessed_ranks_say_so():
    result = run("diff", str(GENERATED / "lt_fp32_tp4" / "*.log"), UNSHARDED)
    assert "ranks guessed from the order of the file names" in result.stderr


def test_shell_expanded_glob_is_taken_as_the_sharded_side():
    result = run("diff", *TP4, UNSHARDED, "-f", "json", "-q")
    assert result.exit_code == 1
    assert len(json.loads(result.stdout)["ranks"]) == 4
    noted = run("diff", *TP4, UNSHARDED)
    assert "quote globs" in noted.stderr
    same_folder = run("diff", *TP4)
    assert same_folder.exit_code == 2 and "quote it" in same_folder.stderr


def test_several_runs_against_one_reference():
    result = run(
        "diff", "--ref", SEED / "unsharded.log", SEED / "sharded.log", SEED / "unsharded_ffn256.log", "-f", "json", "-q"
    )
    doc = json.loads(result.stdout)
    assert [r["run"] for r in doc["runs"]] == [str(SEED / "sharded.log"), str(SEED / "unsharded_ffn256.log")]
    (row,) = doc["agreement"]
    assert row[str(SEED / "unsharded_ffn256.log")] == "same"
    assert row[str(SEED / "sharded.log")] in ("precision", "unknown")
    assert result.exit_code == 1


def test_find_inputs_orders_naturally_whatever_the_argument_order(tmp_path):
    files = _ranked_layout(tmp_path, ["rank10.log", "rank2.log"])
    assert find_inputs([str(files[0]), str(files[1])]) == [str(files[1]), str(files[0])]


# ---- the public API is the command ------------------------------------------------------------------------------


def test_readme_api_example_gives_the_commands_answer():
    report = api.diff(str(GENERATED / "lt_fp32_tp4" / "*.log"), str(UNSHARDED), caps=str(GENERATED / "caps.json"))
    cli_doc = json.loads(
        run(
            "diff",
            str(GENERATED / "lt_fp32_tp4" / "*.log"),
            UNSHARDED,
            "--caps",
            GENERATED / "caps.json",
            "-f",
            "json",
            "-q",
        ).stdout
    )
    assert [f.fingerprint() for f in report.findings] == [f["fingerprint"] for f in cli_doc["findings"]]
    assert sum(c["paired"] for c in cli_doc["coverage"] if c["side"] == "sharded") > 200


def test_summary_counts_each_call_once_in_the_api_too(tmp_path):
    """ROCBLAS_LAYER=3 logs a trace and a bench line per call: the library's summary counts 80, as the command."""
    path = layer3_log(tmp_path)
    report = api.summary([str(path)])
    assert report.document["overview"]["gemm_calls"] == 80
    assert any("left out" in note for note in report.notes)


# ---- help, formats, spellings -----------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["parse", "summary", "probe", "decode-flags"])
def test_help_lists_only_what_the_command_has(command):
    text = run(command, "--help").stdout
    assert "--fail-on" not in text and "findings at or above" not in text


def test_diff_help_lists_one_class_per_line():
    text = run("diff", "--help").stdout
    for cls in blaslog.report.FINDING_CLASSES:
        assert any(line.strip().startswith(cls) for line in text.splitlines()), cls


@pytest.mark.parametrize("command,fmt", [("parse", "github"), ("summary", "sarif"), ("parse", "gitlab")])
def test_formats_a_command_cannot_fill_are_refused(command, fmt):
    result = run(command, SEED / "sharded.log", "-f", fmt)
    assert result.exit_code == 2 and "Invalid value for '--format'" in result.stderr


def test_json_and_output_on_every_command(tmp_path):
    assert json.loads(run("decode-flags", "-f", "json", "0x40202").stdout)[0]["hex"] == "0x40202"
    assert json.loads(run("decode-flags", "--json", "0x40202").stdout)[0]["hex"] == "0x40202"
    out = tmp_path / "flags.json"
    assert run("decode-flags", "-f", "json", "-o", out, "0x40202").exit_code == 0
    assert json.loads(out.read_text())[0]["value"] == 0x40202


@pytest.mark.parametrize(
    "value,message",
    [("", "empty value"), ("-1", "negative"), ("1_0", "not a number"), ("٢١", "not a number"), ("0x", "not a number")],
)
def test_decode_flags_rejects_what_is_not_a_flags_value(value, message):
    result = run("decode-flags", value)
    assert result.exit_code == 2 and message in result.stderr


#: Where each file an example in a --help text names comes from (the examples run in a folder laid out so).
EXAMPLE_FILES = {
    **{f"logs/tp4/blaslt_{i}.log": p for i, p in enumerate(TP4)},
    "logs/tp1.log": UNSHARDED,
    "logs/tp1/rank0.log": UNSHARDED,
    **{f"logs/tp2/rank{i}.log": p for i, p in enumerate(TP4[:2])},
    **{f"logs/rank{i}.log": ROOT / "fixtures" / "tunableop" / "tp2-logs" / f"rank{i}.log" for i in range(2)},
    **{
        f"logs/tunableop_results{i}.csv": ROOT / "fixtures" / "tunableop" / "tp2" / f"tunableop_results{i}.csv"
        for i in range(2)
    },
    "run.log": ROOT / "fixtures" / "tunableop" / "tp2-logs" / "rank0.log",
    "tunableop_results0.csv": ROOT / "fixtures" / "tunableop" / "tp2" / "tunableop_results0.csv",
}


def _help_examples() -> list[tuple[str, list[str]]]:
    import shlex

    out = []
    for command in sorted(cli.commands):
        text = run(command, "--help").stdout
        for line in text.splitlines():
            words = shlex.split(line.split("  (")[0].strip()) if line.strip().startswith("blaslog ") else []
            if words and not any(word.isupper() for word in words[2:]):  # SHARDED UNSHARDED: placeholders
                out.append((command, words[1:]))
    return out


def test_every_help_example_runs(tmp_path, monkeypatch):
    """Every `blaslog ...` line of every --help runs as written (exit 0 or 1), in a folder holding the files it
    names. `record` examples launch a training script: tests/test_record.py runs record end to end instead."""
    for name, source in EXAMPLE_FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    examples = _help_examples()
    assert {command for command, _ in examples} >= {"diff", "check", "decode-flags"}
    for command, words in examples:
        if command == "record":  # they need a recorded run
            continue
        result = run(*words)
        assert result.exit_code in (0, 1), (words, result.stderr)


def test_an_internal_error_is_exit_2_with_one_line(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("planted")

    monkeypatch.setattr(api, "summary", broken)
    result = run("summary", SEED / "sharded.log")
    assert result.exit_code == 2
    assert "internal error: RuntimeError: planted" in result.stderr and "Traceback" not in result.stderr


# ---- -o never destroys --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("link", ["same", "symlink", "hardlink"])
def test_output_onto_an_input_is_refused(tmp_path, link):
    log = tmp_path / "x.log"
    shutil.copy(SEED / "sharded.log", log)
    target = log
    if link == "symlink":
        target = tmp_path / "link.log"
        target.symlink_to(log)
    elif link == "hardlink":
        target = tmp_path / "hard.log"
        os.link(log, target)
    before = log.read_bytes()
    for fmt in ("jsonl", "table"):
        result = run("parse", log, "-f", fmt, "-o", target)
        assert result.exit_code == 2 and "would destroy the input" in result.stderr
    assert log.read_bytes() == before


def test_output_never_replaces_what_is_not_a_regular_file(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = run("parse", SEED / "sharded.log", "-f", "jsonl", "-o", fifo)
    assert result.exit_code == 2 and "not a regular file" in result.stderr
    assert fifo.is_fifo()
    folder = tmp_path / "dir"
    folder.mkdir()
    for fmt in ("jsonl", "table"):
        result = run("parse", SEED / "sharded.log", "-f", fmt, "-o", folder)
        assert result.exit_code == 2 and "is a folder" in result.stderr


def test_output_is_kept_only_when_the_run_succeeds(tmp_path):
    out = tmp_path / "report.json"
    out.write_text("old\n")
    result = run("parse", SEED / "sharded.log", "no/such.log", "-f", "json", "-o", out)
    assert result.exit_code == 2 and out.read_text() == "old\n"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]
    result = run("parse", SEED / "sharded.log", "-f", "json", "-o", out)
    assert result.exit_code == 0 and json.loads(out.read_text())["command"] == "parse"


def test_long_output_names_work_when_streaming(tmp_path):
    out = tmp_path / ("r" * 250 + ".json")
    assert run("parse", SEED / "sharded.log", "-f", "jsonl", "-o", out).exit_code == 0
    assert out.read_text().count("\n") == 2


def test_two_writers_never_corrupt_one_output(tmp_path):
    out = tmp_path / "same.jsonl"
    results: list[int] = []

    def write() -> None:
        results.append(run("parse", GENERATED / "lt_fp32_unsharded.stdout.log", "-f", "jsonl", "-o", out).exit_code)

    threads = [threading.Thread(target=write) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [0, 0]
    lines = out.read_text().splitlines()
    assert len(lines) == 79 and all(json.loads(line) for line in lines)


# ---- every input is opened once: pipes give what files give ----------------------------------------------------


def _blaslog(*args: str, **kwargs):
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "blaslog", *args], capture_output=True, text=True, timeout=60, **kwargs
    )


def test_a_fifo_and_dev_stdin_give_what_the_file_gives(tmp_path):
    log = GENERATED / "lt_fp16_tp4_rank0.log"
    expected = _blaslog("parse", str(log), "-f", "jsonl", "-q").stdout.replace(str(log), "X")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(log.read_bytes()))
    writer.start()
    got = _blaslog("parse", str(fifo), "-f", "jsonl", "-q")
    writer.join()
    assert got.returncode == 0 and got.stdout.replace(str(fifo), "X") == expected
    with open(log, "rb") as handle:
        piped = _blaslog("summary", "/dev/stdin", "-f", "json", "-q", stdin=handle)
    doc = json.loads(piped.stdout)
    assert doc["overview"]["gemm_calls"] == 78 and doc["summary"]["files"][0]["lines"] == 1630


def test_closed_stdout_and_stdin_are_errors():
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "blaslog", "parse", str(SEED / "sharded.log"), "-q"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        close_fds=True,
        preexec_fn=lambda: os.close(1),
        timeout=60,
    )
    assert result.returncode == 2 and "standard output is closed" in result.stderr
    result = subprocess.run(
        [sys.executable, "-m", "blaslog", "parse", "-"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        preexec_fn=lambda: os.close(0),
        timeout=60,
    )
    assert result.returncode == 2 and "standard input is closed" in result.stderr


# ---- Parquet --------------------------------------------------------------------------------------------------------


def test_parquet_partitions_never_collide(tmp_path):
    pytest.importorskip("pyarrow")
    for folder, source in (("r un", "sharded.log"), ("r_un", "unsharded.log")):
        (tmp_path / folder).mkdir()
        shutil.copy(SEED / source, tmp_path / folder / "a.log")
    out = tmp_path / "out"
    result = run("parse", tmp_path / "r un" / "a.log", tmp_path / "r_un" / "a.log", "-f", "parquet", "-o", out)
    assert result.exit_code == 0, result.output
    assert sorted(p.parent.parent.name for p in out.rglob("*.parquet")) == ["run=r_un", "run=r_un-2"]
    assert "is written as run=r_un-2" in result.stderr
    onto_file = tmp_path / "file"
    onto_file.write_text("x")
    refused = run("parse", SEED / "sharded.log", "-f", "parquet", "-o", onto_file)
    assert refused.exit_code == 2 and "not a folder" in refused.stderr and onto_file.read_text() == "x"


def test_integers_beyond_64_bits_reach_a_frame_unchanged():
    call = blaslog.GemmCall("cublasLt", "cublasLtMatmul", m=-(2**70), n=4, k=8)
    frame = blaslog.to_frame([call])
    assert frame["m"].tolist() == [-(2**70)] and str(frame["n"].dtype) == "Int64"


def test_ctrl_c_ends_a_wait_on_a_fifo_without_writer(tmp_path):
    """A FIFO nobody writes to is opened once, by the parser, and waits only as long as the user lets it."""
    import signal
    import subprocess
    import sys
    import time

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    child = subprocess.Popen(
        [sys.executable, "-m", "blaslog", "parse", str(fifo), "-q"],
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(1.5)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=30)
    assert child.returncode == 130 and "interrupted" in err


@pytest.mark.parametrize("command", ["summary", "check"])
def test_every_report_names_each_files_rank_and_how(command, tmp_path):
    files = _ranked_layout(tmp_path / "tp4", ["rank0.log", "rank1.log"])
    doc = json.loads(run(command, str(tmp_path / "tp4"), "-f", "json", "-q").stdout)
    assert doc["ranks"] == [{"file": str(f), "rank": i, "how": "path"} for i, f in enumerate(files)]


def test_the_split_of_a_shell_expanded_glob_is_said_even_when_quiet_or_failing(tmp_path):
    """The note saying how `diff a b c` was split is printed with -q too, and ends the error of a diff that pairs
    nothing (the split may be why)."""
    quiet = run("diff", *TP4, UNSHARDED, "-q")
    assert quiet.exit_code == 1 and "quote globs" in quiet.stderr
    (tmp_path / "g").mkdir()
    (tmp_path / "h").mkdir()
    for name in ("g/a.log", "g/b.log"):
        (tmp_path / name).write_text((SEED / "sharded.log").read_text())
    (tmp_path / "h" / "c.log").write_text("MKL_VERBOSE DGEMM(N,N,8,8,8,1,0x1,8,0x2,8,0,0x3,8) 1.0s TID:0 NThr:1\n")
    failing = run("diff", str(tmp_path / "g/a.log"), str(tmp_path / "g/b.log"), str(tmp_path / "h/c.log"))
    assert failing.exit_code == 2 and "nothing to compare" in failing.stderr and "quote globs" in failing.stderr
