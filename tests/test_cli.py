"""The command line: exit codes, stdout/stderr discipline, every command documented."""

from __future__ import annotations

import json

import pytest

from blaslog.cli import cli
from tests.conftest import GENERATED, NVIDIA, SEED, layer3_log


def invoke(runner, *args, env=None):
    return runner.invoke(cli, [str(a) for a in args], env=env, catch_exceptions=False)


@pytest.mark.parametrize("command", sorted(cli.commands))
def test_every_command_has_help(runner, command):
    result = invoke(runner, command, "--help")
    assert result.exit_code == 0
    assert "Usage:" in result.stdout and len(result.stdout) > 200


def test_exit_codes_are_documented_in_help(runner):
    text = invoke(runner, "--help").stdout
    assert "130" in text and "--fail-on" in text
    assert "Exit status" in invoke(runner, "diff", "--help").stdout


def test_diff_seed_precision_exit_1(runner):
    result = invoke(runner, "diff", SEED / "sharded.log", SEED / "unsharded.log", "--caps", SEED / "caps.json")
    assert result.exit_code == 1
    assert "PRECISION" in result.stdout and "FMA with FP32 inputs" in result.stdout
    assert "TP 4 inferred" in result.stderr
    assert "TP 4 inferred" not in result.stdout


def test_diff_seed_ffn256_no_difference_exit_0(runner):
    result = invoke(runner, "diff", SEED / "unsharded_ffn256.log", SEED / "unsharded.log")
    assert result.exit_code == 0


@pytest.mark.parametrize(
    "fail_on,exit_code", [("precision", 1), ("reduction", 1), ("schedule", 1), ("any", 1), ("never", 0)]
)
def test_fail_on(runner, fail_on, exit_code):
    result = invoke(
        runner,
        "diff",
        GENERATED / "lt_fp16_tp4_rank0.log",
        GENERATED / "lt_fp16_unsharded.log.gz",
        "--fail-on",
        fail_on,
        "-q",
    )
    expected = exit_code if fail_on in ("schedule", "any", "never") else 0  # that pair differs in tile only
    assert result.exit_code == expected


def test_exit_zero(runner):
    result = invoke(runner, "diff", SEED / "sharded.log", SEED / "unsharded.log", "--exit-zero")
    assert result.exit_code == 0 and "UNKNOWN" in result.stdout


def test_diff_per_rank_glob_says_which_files_differ(runner, tmp_path):
    result = invoke(
        runner,
        "diff",
        str(GENERATED / "lt_fp32_tp4" / "blaslt_*.log"),
        GENERATED / "lt_fp32_unsharded.stdout.log",
        "--caps",
        GENERATED / "caps.json",
        "-f",
        "json",
        "-q",
    )
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert len(doc["comparisons"]) == 4
    assert [c["tp"] for c in doc["comparisons"]] == [4, 4, 4, 4]
    assert len(doc["files_with_findings"]) == 4
    assert len(doc["findings"]) == 3  # one finding per cause, folded across the four ranks
    assert all("ranks 0-3" in f["title"] for f in doc["findings"])
    one = invoke(
        runner,
        "diff",
        str(GENERATED / "lt_fp32_tp4" / "*.log"),
        GENERATED / "lt_fp32_unsharded.stdout.log",
        "--rank",
        "2",
        "-f",
        "json",
        "-q",
    )
    assert [c["sharded"] for c in json.loads(one.stdout)["comparisons"]] == [
        str(GENERATED / "lt_fp32_tp4" / "blaslt_321676.log")
    ]


def test_output_file_written_only_on_success(runner, tmp_path):
    out = tmp_path / "report.json"
    result = invoke(runner, "diff", SEED / "sharded.log", SEED / "unsharded.log", "-f", "json", "-o", out)
    assert result.exit_code == 1 and json.loads(out.read_text())["command"] == "diff"
    assert result.stdout == ""
    bad = tmp_path / "bad.json"
    result = invoke(runner, "diff", SEED / "missing.log", SEED / "unsharded.log", "-o", bad)
    assert result.exit_code == 2 and not bad.exists()


def test_parse_json_summary_and_stderr_accounting(runner):
    result = invoke(runner, "parse", GENERATED / "lt_fp32_unsharded.stdout.log", "-f", "json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["schema_version"] == 1 and len(doc["records"]) == 78
    (summary,) = doc["summary"]["files"]
    assert (
        summary["lines"],
        summary["gemm_records"],
        summary["other_records"],
        summary["foreign_lines"],
        summary["unparsable_lines"],
    ) == (1644, 78, 1554, 4, 0)
    assert "1644 lines: 78 GEMM records" in result.stderr


@pytest.mark.parametrize("fmt", ["table", "jsonl", "csv", "markdown"])
def test_parse_formats(runner, fmt):
    result = invoke(runner, "parse", SEED / "sharded.log", "-f", fmt, "-q")
    assert result.exit_code == 0 and "1024" in result.stdout


def test_parse_kind_all(runner):
    result = invoke(
        runner, "parse", NVIDIA / "cublaslt_12.9.3_level5_api_error_nogpu.log", "--kind", "all", "-f", "json", "-q"
    )
    assert result.exit_code == 0 and len(json.loads(result.stdout)["records"]) == 106


def test_parse_api_only_log_has_no_gemms_but_records(runner):
    result = invoke(runner, "parse", NVIDIA / "cublaslt_12.9.3_level5_api_error_nogpu.log", "-q")
    assert result.exit_code == 0 and "no GEMM records" in result.stdout


def test_stdin(runner):
    result = runner.invoke(cli, ["parse", "-", "-f", "json", "-q"], input=(SEED / "sharded.log").read_bytes())
    assert result.exit_code == 0 and json.loads(result.stdout)["records"][0]["k"] == 8


def test_check_and_summary(runner):
    result = invoke(runner, "check", GENERATED / "rocblas_fp16_trace.log", "-q")
    assert result.exit_code == 1 and "fp16_alt_impl" in result.stdout
    result = invoke(runner, "check", GENERATED / "lt_fp16_tp4_rank0.log", "-q")
    assert result.exit_code == 0
    result = invoke(runner, "summary", GENERATED / "rocblas_fp16_profile.yaml", "-f", "json", "-q")
    assert result.exit_code == 0 and json.loads(result.stdout)["overview"]["gemm_calls"] == 80


def test_github_format_appends_step_summary(runner, tmp_path):
    summary = tmp_path / "summary.md"
    result = invoke(
        runner,
        "diff",
        SEED / "sharded.log",
        SEED / "unsharded.log",
        "--caps",
        SEED / "caps.json",
        "-f",
        "github",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert result.exit_code == 1
    assert result.stdout.startswith("::error file=")
    assert "## blaslog diff" in summary.read_text()


def test_decode_flags(runner):
    result = invoke(runner, "decode-flags", "0x40202")
    assert result.exit_code == 0
    assert "tensor-core MMA (HMMA) with TF32 inputs and FP32 accumulation" in result.stdout
    for name in ("HMMA", "ACCUMULATOR_32F", "INPUT_TF32"):
        assert name in result.stdout
    result = invoke(runner, "decode-flags", "0x80201")
    assert "CUDA-core FMA with FP32 inputs and FP32 accumulation" in result.stdout
    result = invoke(runner, "decode-flags", "HMMA", "ACCUMULATOR_32F", "INPUT_TF32")
    assert result.stdout.startswith("0x40202")
    result = invoke(runner, "decode-flags", "--json", "262658", "0x1000000040202")
    doc = json.loads(result.stdout)
    assert doc[0]["hex"] == "0x40202" and doc[1]["unknown_bits"] == "0x1000000000000"
    result = invoke(runner, "decode-flags", "--lib", "rocblas", "4")
    assert "fp16_alt_impl" in result.stdout and "BF16" in result.stdout
    result = invoke(runner, "decode-flags", "0xZZ")
    assert result.exit_code == 2 and "not a number" in result.stderr
    result = invoke(runner, "decode-flags", "HMAA")
    assert result.exit_code == 2 and "did you mean HMMA" in result.stderr


@pytest.mark.parametrize(
    "args,message",
    [
        (["parse", "no/such/file.log"], "no such file"),
        (["parse", str(GENERATED / "lt_fp32_tp4" / "nothing")], "no such file"),
        (["parse", "--log-format", "cublasltt", str(SEED / "sharded.log")], "did you mean 'cublaslt'"),
        (["diff", str(SEED / "sharded.log"), str(NVIDIA / "cublas_12.9.3_loginfo_nogpu.log")], "no GEMM records"),
        (
            ["diff", str(SEED / "sharded.log"), str(SEED / "unsharded.log"), "--caps", str(SEED / "sharded.log")],
            "not valid JSON",
        ),
    ],
)
def test_trouble_exits_2_with_one_line_and_no_traceback(runner, args, message):
    result = runner.invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert "Traceback" not in result.output and "Traceback" not in result.stderr


def test_parse_glob_reads_the_files_in_name_order(runner):
    result = invoke(runner, "parse", str(SEED / "*.log"), "-q", "-f", "json")
    assert result.exit_code == 0 and len(json.loads(result.stdout)["records"]) == 6
    files = [r["file"] for r in json.loads(result.stdout)["records"]]
    assert files == sorted(files)


def test_probe_without_library_says_where_it_looked(runner, monkeypatch):
    result = runner.invoke(
        cli, ["probe", "--algo-id", "21"], env={"BLASLOG_CUBLASLT": "/nonexistent/libcublasLt.so.12"}
    )
    assert result.exit_code == 2
    assert "not found" in result.stderr and "/nonexistent/libcublasLt.so.12" in result.stderr
    assert "Traceback" not in result.stderr


def test_python_dash_m_and_console_script_agree():
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "blaslog", "decode-flags", "0x40202"], capture_output=True, text=True, check=False
    )
    assert out.returncode == 0 and "HMMA" in out.stdout


def test_the_console_exit_runs_exit_functions_flushes_and_keeps_the_status(runner, tmp_path):
    """`python -m blaslog` leaves without freeing its objects (cli.console): what the command printed, the exit
    functions (saved shapes, a program's own) and the exit status are those of the usual exit."""
    import subprocess
    import sys

    wrapper = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write('EXIT FUNCTION RAN\\n'))\n"
        "sys.stdout.write('unflushed head ')\n"  # buffered by the wrapper: the exit must flush it
        "from blaslog.cli import console\n"
        "sys.argv = ['blaslog', *sys.argv[1:]]\n"
        "console()\n"
    )
    seeds = [str(SEED / "sharded.log"), str(SEED / "unsharded.log"), "--caps", str(SEED / "caps.json")]
    cases = [(["diff", *seeds, "-f", "json", "-q"], 1), (["diff", *seeds, "-f", "json", "-q", "--exit-zero"], 0)]
    for args, status in cases:
        done = subprocess.run([sys.executable, "-c", wrapper, *args], capture_output=True, text=True, check=False)
        assert done.returncode == status, done.stderr
        assert done.stdout.startswith("unflushed head ")
        assert done.stdout.removeprefix("unflushed head ") == invoke(runner, *args).stdout
        assert done.stderr.endswith("EXIT FUNCTION RAN\n")
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "blaslog", "diff", *seeds, "-f", "json", "-q", "-o", str(report)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1 and json.loads(report.read_text())["findings"]
    done = subprocess.run(
        [sys.executable, "-m", "blaslog", "parse", "/nonexistent.log"], capture_output=True, text=True
    )
    assert done.returncode == 2 and "no such file" in done.stderr and "Traceback" not in done.stderr


def test_the_console_exit_is_the_usual_one_where_something_runs_after_the_program():
    """A program that runs blaslog's module in its own process (runpy), a profiler, and a status the exit folds
    get the usual exit from cli.console: the host goes on, the profiler prints its statistics."""
    import subprocess
    import sys

    from blaslog.cli import _ends_alone

    host = (
        "import runpy, sys\n"
        "sys.argv = ['blaslog', 'decode-flags', '0x40202']\n"
        "try:\n"
        "    runpy.run_module('blaslog', run_name='__main__')\n"
        "except SystemExit as exc:\n"
        "    print('HOST GOES ON', exc.code)\n"
    )
    done = subprocess.run([sys.executable, "-c", host], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "HMMA" in done.stdout and done.stdout.endswith("HOST GOES ON 0\n")
    profiled = [sys.executable, "-m", "cProfile", "-m", "blaslog", "decode-flags", "0x40202"]
    done = subprocess.run(profiled, capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "HMMA" in done.stdout and "function calls" in done.stdout
    assert not any(_ends_alone(status) for status in (256, -1, "a message"))


def test_parquet_partitioned_by_run_and_rank(runner, tmp_path):
    pytest.importorskip("pyarrow")
    import pandas as pd

    out = tmp_path / "gemms"
    result = invoke(
        runner, "parse", str(GENERATED / "lt_fp32_tp4" / "*.log"), "--format", "parquet", "--output", out, "-q"
    )
    assert result.exit_code == 0, result.output
    frame = pd.read_parquet(out)
    assert sorted(frame.groupby(["run", "rank"], observed=True).size().items()) == [
        (("lt_fp32_tp4", 0), 78),
        (("lt_fp32_tp4", 1), 78),
        (("lt_fp32_tp4", 2), 78),
        (("lt_fp32_tp4", 3), 77),
    ]
    assert set(frame["algo_id"].dropna().astype(int)) == {0, 21}
    assert invoke(runner, "parse", str(SEED / "sharded.log"), "--format", "parquet").exit_code == 2


def test_memory_does_not_grow_with_repeated_calls():
    """A CompactRun holds each distinct call once: more repeats add a few bytes per call, not a record."""
    import tracemalloc

    import blaslog
    from blaslog.runs import CompactRun

    line = (SEED / "sharded_joined.log").read_text().strip()

    def size(repeats: int) -> tuple[int, int]:
        text = "\n".join(line.replace("[321674]", f"[{321674 + i % 7}]") for i in range(repeats)) + "\n"
        tracemalloc.start()
        run = CompactRun().extend(blaslog.parse_text(text, name="t").records)
        current, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return current, len(run.calls)

    small, calls_small = size(2_000)
    large, calls_large = size(20_000)
    assert calls_small == calls_large == 1
    assert (large - small) / 18_000 < 64  # bytes per additional call


@pytest.mark.parametrize(
    "command",
    [
        [
            "diff",
            str(GENERATED / "lt_fp32_tp4" / "*.log"),
            str(GENERATED / "lt_fp32_unsharded.stdout.log"),
            "--caps",
            str(GENERATED / "caps.json"),
        ],
        ["check", str(GENERATED / "rocblas_fp16_trace.log"), str(GENERATED / "lt_fp32_unsharded.stdout.log")],
        ["summary", str(GENERATED / "rocblas_fp16_trace.log"), str(GENERATED / "lt_fp32_unsharded.stdout.log")],
    ],
)
@pytest.mark.parametrize("fmt", ["json", "sarif", "table", "csv"])
def test_reports_are_byte_identical_run_to_run_and_whatever_the_input_order(runner, command, fmt):
    first = invoke(runner, *command, "-f", fmt, "-q")
    again = invoke(runner, *command, "-f", fmt, "-q")
    assert first.stdout == again.stdout
    if command[0] != "diff":
        swapped = invoke(runner, command[0], command[2], command[1], "-f", fmt, "-q")
        assert swapped.stdout == first.stdout


def test_ctrl_c_exits_130(monkeypatch, capsys):
    import blaslog.cli as cli_module

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_module._group, "cli", interrupted)  # the group main() runs
    with pytest.raises(SystemExit) as exit_info:
        cli_module.main()
    assert exit_info.value.code == 130
    assert "interrupted" in capsys.readouterr().err


def test_ctrl_c_inside_a_command_exits_130(runner, monkeypatch):
    import blaslog.api._inputs

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(blaslog.api._inputs, "read_run", interrupted)
    result = runner.invoke(cli, ["summary", str(SEED / "sharded.log"), "-j", "1"])
    assert result.exit_code == 130


def test_progress_line_only_for_large_inputs_on_a_terminal(monkeypatch, tmp_path, capsys):
    from blaslog.cli import _common as cli_module

    big = tmp_path / "big.log"
    with open(big, "wb") as handle:
        handle.truncate(40 << 20)
    monkeypatch.setattr(cli_module.sys.stderr, "isatty", lambda: True, raising=False)
    progress = cli_module._progress(str(big), quiet=False)
    assert progress is not None
    assert cli_module._progress(str(big), quiet=True) is None
    assert cli_module._progress(str(SEED / "sharded.log"), quiet=False) is None
    progress.last = -1
    progress(20 << 20, 1234)
    progress.close()
    err = capsys.readouterr().err
    assert "50%" in err and "1,234 GEMMs" in err and "MB/s" in err


def test_layer_3_rocblas_log_counts_each_call_once(runner, tmp_path):
    """ROCBLAS_LAYER=3 writes a trace line and a bench line per call: summary counts each call once."""
    path = layer3_log(tmp_path)
    result = invoke(runner, "summary", path, "-f", "json")
    assert json.loads(result.stdout)["overview"]["gemm_calls"] == 80
    assert "rocblas-bench lines are left out" in result.stderr
    check = invoke(runner, "check", path, "-f", "json", "-q")
    (finding,) = json.loads(check.stdout)["findings"]
    assert [v["count"] for v in finding["variants"]] == [2, 2]


def test_version_says_whether_the_c_speedups_are_in_use():
    import os
    import subprocess
    import sys

    from blaslog._fast._c import speedups

    here = subprocess.run([sys.executable, "-m", "blaslog", "--version"], capture_output=True, text=True)
    assert here.returncode == 0
    assert here.stdout.startswith("blaslog ")
    assert ("C speedups in use" in here.stdout) == (speedups is not None)
    pure = subprocess.run(
        [sys.executable, "-m", "blaslog", "--version"],
        capture_output=True,
        text=True,
        env=dict(os.environ, BLASLOG_PURE_PYTHON="1"),
    )
    assert "C speedups off (BLASLOG_PURE_PYTHON): pure Python" in pure.stdout
