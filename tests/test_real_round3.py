"""Issue 35: real inputs, round 3 (complete commands, condensed logs, the 2019 profile form, partly edited records,
TunableOp pairing by key, messages that say what happened, two libraries in one rank, threads in a finding)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import blaslog
from blaslog._fast import _c
from blaslog._fast.cache import ShapeCache
from blaslog.records import Event


def _events(result):
    return [r for r in result.records if isinstance(r, Event)]


def _switch_cache(monkeypatch, cache):
    """Turn the shape cache on ("1") or off ("0") through the one switch (blaslog/_fast/_c.py), for this test."""
    monkeypatch.setattr(_c, "shape_cache", cache == "1")
    assert ShapeCache().enabled is (cache == "1")


def _balanced(result):
    for summary in result.files:
        assert summary.record_lines + summary.foreign_lines + summary.unparsable_lines == summary.lines


HIPBLASLT_HEURISTIC = (
    "hipblaslt-bench --api_method c -m 1024 -n 512 -k 1024 --lda 1024 --ldb 1024 --ldc 1024 --ldd 1024  --stride_a 0 "
    "--stride_b 0 --stride_c 0 --stride_d 0  --alpha 1.000000 --beta 1.000000 --transA N --transB N --batch_count 1  "
    "--a_type f16_r --b_type f16_r --c_type f16_r --d_type f16_r --scale_type f32_r --bias_type f32_r   "
    "--compute_type f32_r --algo_method {method}"
)
ROCBLAS_TYPED = (
    "rocblas-bench -f gemm_ex --transposeA N --transposeB T -m 4096 -n 4096 -k 1024 --alpha 1 --a_type f16_r "
    "--lda 4096 --b_type f16_r --ldb 4096 --beta 0 --c_type f16_r --ldc 4096 --d_type f16_r --ldd 4096 "
    "--compute_type f32_r"
)
ROCBLAS_LOGGED = ROCBLAS_TYPED.replace("rocblas-bench", "./rocblas-bench") + " --algo 0 --solution_index 0 --flags 0"


# -- 1. complete commands ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["heuristic", "all", "heuristic --requested_solution 1 --print_kernel_info"])
def test_a_hipblaslt_bench_command_without_solution_index_is_a_call(method):
    result = blaslog.parse_text(HIPBLASLT_HEURISTIC.format(method=method) + "\n")
    assert [(g.m, g.n, g.k, g.solution_index) for g in result.gemms] == [(1024, 512, 1024, None)]
    assert not [e for e in _events(result) if e.event == "truncated"]
    _balanced(result)


def test_a_typed_rocblas_bench_command_is_a_call():
    result = blaslog.parse_text(ROCBLAS_TYPED + "\n" + ROCBLAS_TYPED + " --flags 4\n")
    assert [(g.m, g.n, g.k, g.trans, g.compute_type, g.flags) for g in result.gemms] == [
        (4096, 4096, 1024, "NT", "f32_r", None),
        (4096, 4096, 1024, "NT", "f32_r", 4),
    ]


@pytest.mark.parametrize(
    "text",
    [
        HIPBLASLT_HEURISTIC.format(method="index"),  # `index` names a solution: without it the line was cut
        ROCBLAS_LOGGED.split(" --c_type")[0],  # key fields missing
        ROCBLAS_LOGGED.split(" --algo")[0][:-3],  # `--compute_type f3`: the last value is broken
        ROCBLAS_LOGGED.rsplit(" ", 1)[0],  # `--flags` without its value
    ],
)
def test_a_command_missing_key_fields_or_with_a_broken_last_value_is_cut(text):
    result = blaslog.parse_text(text + "\n" + ROCBLAS_LOGGED + "\n")
    assert [g.line for g in result.gemms] == [2]
    assert [(e.event, e.line) for e in _events(result)] == [("truncated", 1)]
    _balanced(result)


# -- 3. the 2019 profile form ------------------------------------------------------------------------------------
PROFILE_2019 = (
    '{ rocblas_function: "rocblas_gemm_ex", a_type: "f16_r", b_type: "f16_r", c_type: "f16_r", d_type: "f16_r", '
    "compute_type: \"f32_r\", transA: 'N', transB: 'T', M: 4096, N: 4096, K: 1024, alpha: 1.0, lda: 4096, ldb: 4096, "
    "beta: 0.0, ldc: 4096, ldd: 4096, algo: 0, solution_index: 0, flags: none, call_count: 12 }"
)


@pytest.mark.parametrize("cache", ["1", "0"])
def test_the_2019_profile_form_without_the_dash_is_read(cache, monkeypatch):
    _switch_cache(monkeypatch, cache)
    text = PROFILE_2019 + "\n" + PROFILE_2019.replace("M: 4096", "M: 2048").replace("call_count: 12", "call_count: 3")
    result = blaslog.parse_text(text + "\n")
    assert [(g.m, g.n, g.k, g.trans, g.call_count, g.log_format) for g in result.gemms] == [
        (4096, 4096, 1024, "NT", 12, "rocblas-profile"),
        (2048, 4096, 1024, "NT", 3, "rocblas-profile"),
    ]
    _balanced(result)


def test_a_2019_profile_entry_cut_short_is_truncated():
    result = blaslog.parse_text("step 1\n" + PROFILE_2019[:150] + "\nstep 2\n")
    assert result.gemms == ()
    assert [(e.event, e.function, e.line) for e in _events(result)] == [("truncated", "rocblas_gemm_ex", 2)]


# -- 2. a leading count (`sort | uniq -c`) -------------------------------------------------------------------------
COUNTED = (
    f"     12 {ROCBLAS_LOGGED}\n"
    f"      3 {HIPBLASLT_HEURISTIC.format(method='index --solution_index 5')}\n"
    f"1 {ROCBLAS_LOGGED.replace('-k 1024', '-k 2048')}\n"
)


@pytest.mark.parametrize("cache", ["1", "0"])
@pytest.mark.parametrize("tag", ["", "[rank0]: "])
def test_a_bench_line_behind_a_count_stands_for_that_many_calls(cache, tag, monkeypatch):
    _switch_cache(monkeypatch, cache)
    text = "".join(tag + line + "\n" for line in COUNTED.splitlines())
    result = blaslog.parse_text(text + text.replace("     12 ", "     40 "))
    assert [(g.function, g.k, g.call_count, g.solution_index) for g in result.gemms] == [
        ("rocblas_gemm_ex", 1024, 12, 0),
        ("hipblaslt-bench", 1024, 3, 5),
        ("rocblas_gemm_ex", 2048, 1, 0),
        ("rocblas_gemm_ex", 1024, 40, 0),
        ("hipblaslt-bench", 1024, 3, 5),
        ("rocblas_gemm_ex", 2048, 1, 0),
    ]
    assert result.files[0].foreign_lines == 0
    _balanced(result)


def test_summary_counts_the_calls_a_count_stands_for(tmp_path):
    from blaslog import api

    path = tmp_path / "condensed.log"
    path.write_text(COUNTED)
    signatures = api.summary([str(path)]).document["signatures"]
    assert sorted(s["calls"] for s in signatures) == [1, 3, 12]


# -- 4. partly edited records --------------------------------------------------------------------------------------
ELIDED_BENCH = ROCBLAS_LOGGED.replace("--alpha 1 --a_type f16_r --lda 4096", "...").replace("--ldd 4096", "--ldd ...")
NOTED_BENCH = ROCBLAS_LOGGED + "   <-- this one is slow"
ELIDED_PROFILE = (
    '- { rocblas_function: "rocblas_gemm_ex", atomics_mode: atomics_allowed, a_type: "f16_r", b_type: "f16_r", '
    'c_type: "f16_r", d_type: "f16_r", compute_type: "f32_r", transA: \'N\', transB: \'T\', M: 4096, N: 4096, '
    "K: 1024, ..., call_count: 12 }"
)


@pytest.mark.parametrize("cache", ["1", "0"])
def test_an_edited_record_keeps_the_gemm_its_visible_fields_define(cache, monkeypatch):
    _switch_cache(monkeypatch, cache)
    result = blaslog.parse_text("\n".join([ELIDED_BENCH, NOTED_BENCH, ELIDED_PROFILE, "step 3"]) + "\n")
    got = [(g.line, g.m, g.n, g.k, g.trans, g.a_type, g.compute_type, g.call_count, g.missing) for g in result.gemms]
    assert got == [
        (1, 4096, 4096, 1024, "NT", None, "f32_r", 1, "alpha, a_type, lda, ldd"),
        (2, 4096, 4096, 1024, "NT", "f16_r", "f32_r", 1, None),  # a note after every field: the whole call
        (3, 4096, 4096, 1024, "NT", "f16_r", "f32_r", 12, "lda, ldb, ldc, ldd, algo, solution_index, flags"),
    ]
    assert result.gemms[1].flags == 0 and result.gemms[1].solution_index == 0
    summary = result.files[0]
    assert summary.unparsable_lines == 0 and summary.foreign_lines == 1
    warnings = [p.message for p in summary.problems]
    assert "kept as a partial GEMM record: alpha, a_type, lda, ldd not shown" in warnings[0]
    assert "unexpected '...'" in warnings[0]  # the precise reason stays
    _balanced(result)


def test_an_edited_record_whose_sizes_are_all_gone_stays_unparsable():
    text = ROCBLAS_LOGGED.replace("-m 4096 -n 4096 -k 1024", "...")
    result = blaslog.parse_text(text + "\n")
    assert result.gemms == () and result.files[0].unparsable_lines == 1


def test_partial_records_are_left_out_of_summary_and_said_when_nothing_else_is_there(tmp_path):
    from blaslog import api

    path = tmp_path / "edited.log"
    path.write_text(ELIDED_BENCH + "\n" + ROCBLAS_LOGGED + "\n")
    report = api.summary([str(path)])
    assert [s["calls"] for s in report.document["signatures"]] == [1]  # the whole call; parse lists the partial one
    assert f"{path}: 1 partial GEMM record(s) (fields a person edited out) left out of the analysis" in "\n".join(
        report.notes
    )
    path.write_text(ELIDED_BENCH + "\n")
    with pytest.raises(blaslog.BlaslogError) as caught:
        api.summary([str(path)])
    message = str(caught.value)
    assert message.startswith(f"no usable GEMM records in {path}: 1 record(s) found, each partly edited out")
    assert f"{path}:1: this rocblas-bench record was edited" in message and "was logging on" not in message


# -- 5. TunableOp results files: a set keyed by op, params and types -----------------------------------------------
REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
TUNABLEOP = Path(__file__).resolve().parents[1] / "fixtures" / "tunableop"


def _reordered(path: Path, target: Path) -> Path:
    """The results file with its rows in another order (reversed), as another process's hash order writes it."""
    lines = path.read_text().splitlines()
    validators = [line for line in lines if line.startswith("Validator")]
    rows = [line for line in lines if not line.startswith("Validator")]
    target.write_text("\n".join(validators + rows[::-1]) + "\n")
    return target


def _holds_gemms(path: Path) -> bool:
    return bool(json.loads(path.with_name(path.name + ".expected.json").read_text(encoding="utf-8"))["gemms"])


@pytest.mark.parametrize("name", sorted(p.name for p in REAL.glob("tunableop_*.log") if _holds_gemms(p)))
def test_a_results_file_and_itself_in_another_order_pair_every_row(name, tmp_path):
    from blaslog import api

    path = REAL / name
    report = api.diff([str(_reordered(path, tmp_path / "tunableop_results0.csv"))], [str(path)])
    rows = len(blaslog.parse(str(path)).gemms)
    (comparison,) = report.document["comparisons"]
    assert (comparison["tp"], comparison["pairs"], comparison["identical"]) == (1, rows, rows)


def test_two_versions_files_pair_by_key_and_infer_tp_from_the_keys():
    from blaslog import api

    report = api.diff(
        [str(TUNABLEOP / "v2.5" / "tunableop_results0.csv")], [str(TUNABLEOP / "v2.6" / "tunableop_results0.csv")]
    )
    (comparison,) = report.document["comparisons"]
    assert (comparison["tp"], comparison["pairs"], comparison["unmatched_sharded"]) == (1, 2, 0)
    # the 12288x4096x4096 GEMM was tuned to another hipBLASLt solution: that, not a TP-3 shard, is the finding
    titles = [f.title for f in report.findings]
    assert any("12288x4096x4096 vs TN 12288x4096x4096" in t and "52011 vs 61230" in t for t in titles), titles


def test_a_folder_of_results_files_is_a_run(tmp_path):
    from blaslog import api

    globbed = api.diff([str(TUNABLEOP / "tp2" / "*.csv")], [str(TUNABLEOP / "tp1" / "tunableop_results0.csv")])
    folder = api.diff([str(TUNABLEOP / "tp2")], [str(TUNABLEOP / "tp1")])
    assert folder.document["comparisons"] == globbed.document["comparisons"]
    assert [c["tp"] for c in folder.document["comparisons"]] == [2, 2]


def test_results_files_that_share_no_key_say_so(tmp_path):
    from blaslog import api

    a = tmp_path / "a" / "tunableop_results0.csv"
    b = tmp_path / "b" / "tunableop_results0.csv"
    a.parent.mkdir()
    b.parent.mkdir()
    a.write_text("Validator,PT_VERSION,2.9.1\nGemmTunableOp_Half_TN,tn_64_32_1280_ld_1280_1280_64,Default,0.1\n")
    b.write_text("Validator,PT_VERSION,2.9.1\nGemmTunableOp_BFloat16_TN,tn_64_32_1280_ld_1280_1280_64,Default,0.1\n")
    for tp in (None, 1):
        with pytest.raises(blaslog.BlaslogError) as caught:
            api.diff([str(a)], [str(b)], tp=tp)
        message = str(caught.value)
        assert "no row of one file has the key (operator, parameters and types)" in message
        assert "GemmTunableOp_Half_TN TN 64x32x1280" in message and "GemmTunableOp_BFloat16_TN" in message
        assert "divided by 1" not in message


# -- 6. messages that say what happened ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("content", "held"),
    [(b"", "(empty)"), (b"\r\n\r\n", "(2 lines, none of a BLAS library)"), (b"step 1\n", "(1 lines, none")],
)
@pytest.mark.parametrize("command", ["summary", "check", "parse"])
def test_a_no_records_error_names_the_file(content, held, command, tmp_path):
    from click.testing import CliRunner

    from blaslog.cli import cli

    path = tmp_path / "run.log"
    path.write_bytes(content)
    result = CliRunner().invoke(cli, [command, str(path)])
    assert result.exit_code == 2
    assert f"found in {path} {held}" in result.stderr
    assert "TunableOp results files" in result.stderr  # what else blaslog reads


@pytest.mark.parametrize("command", ["summary", "check"])
def test_when_every_record_was_cut_the_error_says_where_and_why(command, tmp_path):
    from click.testing import CliRunner

    from blaslog.cli import cli

    profile = (REAL / "rocblas_dtk_hygon-autotuning-layer4-profile.log").read_text().splitlines()[0]
    path = tmp_path / "profile.log"
    path.write_text("step 1\n" + profile[: len(profile) // 2] + "\nstep 2\n")
    result = CliRunner().invoke(cli, [command, str(path)])
    assert result.exit_code == 2
    assert f"no usable GEMM records in {path}: 1 record(s) found, each cut short ({path}:2:" in result.stderr
    assert "was logging on" not in result.stderr


def test_parse_of_a_cut_gz_says_the_input_ends_early(tmp_path):
    import gzip

    from click.testing import CliRunner

    from blaslog.cli import cli

    path = tmp_path / "cut.log.gz"
    path.write_bytes(gzip.compress((REAL / "rocblas_unknown_rocmlir-bert-configs-raw.log").read_bytes())[:40])
    for command in ("parse", "summary"):
        result = CliRunner().invoke(cli, [command, str(path)])
        assert result.exit_code == 2 and "the input ends early" in result.stderr, (command, result.stderr)


def test_check_of_a_lone_results_file_advises_what_fits_it():
    from blaslog import api

    path = str(REAL / "tunableop_2.9.1_mi350x-whisper-logits-cache.log")
    (finding,) = [f for f in api.check([path]).findings if f.cls == "input"]
    assert f"blaslog check LOG --tunableop {path}" in finding.explanation
    assert "blaslog diff" in finding.explanation
    assert "--batch" not in finding.explanation and "Log more steps" not in finding.explanation


def test_no_command_advises_an_option_it_lacks(tmp_path):
    from click.testing import CliRunner

    from blaslog.cli import cli

    seed = Path(__file__).resolve().parents[1] / "fixtures" / "seed"
    for name in ("a.log", "b.log"):
        (tmp_path / name).write_text((seed / "sharded.log").read_text())
    runner = CliRunner()
    for command in ("summary", "check", "parse"):
        result = runner.invoke(cli, [command, str(tmp_path / "a.log"), str(tmp_path / "b.log")])
        assert "--rank-from" not in result.stderr, command
        assert command == "parse" or "ranks guessed" in result.stderr, command
        assert "--batch)" not in result.output
    result = runner.invoke(cli, ["diff", str(tmp_path), str(seed / "unsharded.log"), "--exit-zero"])
    assert "--rank-from REGEX" in result.stderr


def test_summary_names_a_default_choice():
    from blaslog import api

    path = str(REAL / "tunableop_2.10.0_citation-forecast-tf32-gfx1100.log")
    rows = api.summary([path]).document["signatures"]
    assert rows and all("Default" in str(row["algorithms"]) for row in rows)
    assert not any("not logged" in str(row["algorithms"]) for row in rows)


# -- 8. a within-run finding says which threads it compares -----------------------------------------------------------
_TRACE = (
    "[2026-06-06 16:02:12][cublasLt][{thread}][Trace][cublasLtMatmul] A=0X1521C0400000 Adesc=[type=R_16F rows=1024 "
    "cols=768 ld=1024] B=0X1523C0000000 Bdesc=[type=R_16F rows=1024 cols=2048 ld=1024] C=0X1523C0400000 "
    "Cdesc=[type=R_16F rows=768 cols=2048 ld=768] D=0X1523C0400000 Ddesc=[type=R_16F rows=768 cols=2048 ld=768] "
    "computeDesc=[computeType=COMPUTE_32F scaleType=R_32F transa=OP_T] algo=[algoId={algo} tile=MATMUL_TILE_128x128 "
    "stages=MATMUL_STAGES_32x3] workSpace=0X1521C0000000 workSpaceSizeInBytes=4194304 beta=0 outOfPlace=0 stream=0X0"
)
_BANNER = (
    "[2024-05-22 07:22:32][cublasLt][{thread}][Info][cublasLtCreate] cuBLASLt v12.4 device #0: "
    "multiProcessorCount=92 maxSharedMemPerBlock=49152"
)


def _check_text(tmp_path, lines):
    from blaslog import api

    path = tmp_path / "run.log"
    path.write_text("\n".join(lines) + "\n")
    (finding,) = [f for f in api.check([str(path)]).findings if f.cls != "input"]
    return path, finding.explanation


def test_a_forward_and_its_recompute_on_two_threads_are_one_run(tmp_path):
    lines = [_BANNER.format(thread=7)]
    for _ in range(3):  # the main thread's forward, the autograd thread's recompute, interleaved
        lines += [_TRACE.format(thread=7, algo=31), _TRACE.format(thread=9, algo=21)]
    _path, text = _check_text(tmp_path, lines)
    assert "variant 1 on thread 7; variant 2 on thread 9" in text and "autograd thread" in text
    assert "two runs" not in text


def test_two_runs_pasted_into_one_file_are_said_to_be_so(tmp_path):
    lines = [_BANNER.format(thread=7), *[_TRACE.format(thread=7, algo=31)] * 3]
    lines += ["step 1 loss=4.2", _BANNER.format(thread=9), *[_TRACE.format(thread=9, algo=21)] * 3]
    path, text = _check_text(tmp_path, lines)
    assert "variant 1 on thread 7; variant 2 on thread 9" in text
    assert "the library starts again at line 6: the file may hold two runs" in text
    assert f"head -n 5 {path} > run1.log" in text and f"tail -n +6 {path} > run2.log" in text
    # without a second banner, threads that never interleave are not taken for two runs
    del lines[5]
    _path, text = _check_text(tmp_path, lines)
    assert "variant 2 on thread 9" in text and "two runs" not in text


# -- 7. a rank that logged two libraries --------------------------------------------------------------------------------
GENERATED = Path(__file__).resolve().parents[1] / "fixtures" / "generated"


def test_a_rank_that_logged_two_libraries_is_paired_per_library(tmp_path):
    """hipBLASLt bench lines and rocBLAS trace lines in one file per rank, the two blocks in another order on each
    side: each library's calls pair with the other run's calls of that library."""
    from blaslog import api

    hip_tp2, hip_tp1 = (GENERATED / f"hipblaslt_bf16_{n}.bench.log" for n in ("tp2_rank0", "unsharded"))
    roc = (GENERATED / "rocblas_fp16_trace.log").read_text()
    sharded, unsharded = tmp_path / "tp2" / "rank0.log", tmp_path / "tp1" / "rank0.log"
    sharded.parent.mkdir()
    unsharded.parent.mkdir()
    sharded.write_text(hip_tp2.read_text() + roc)
    unsharded.write_text(roc + hip_tp1.read_text())
    (comparison,) = api.diff([str(sharded)], [str(unsharded)]).document["comparisons"]
    calls = len(blaslog.parse(str(sharded)).gemms)
    assert (comparison["tp"], comparison["pairs"], comparison["unmatched_sharded"]) == (2, calls, 0)


def test_a_rank_that_logged_two_libraries_into_two_files_is_paired_per_library(tmp_path):
    from blaslog import api

    for side, hip in (("tp2", "tp2_rank0"), ("tp1", "unsharded")):
        (tmp_path / side).mkdir()
        (tmp_path / side / "rank0.hipblaslt.log").write_text(
            (GENERATED / f"hipblaslt_bf16_{hip}.bench.log").read_text()
        )
        (tmp_path / side / "rank0.rocblas.log").write_text((GENERATED / "rocblas_fp16_trace.log").read_text())
    comparisons = api.diff([str(tmp_path / "tp2")], [str(tmp_path / "tp1")]).document["comparisons"]
    got = [
        (c["sharded"].rsplit("/", 1)[-1], c["unsharded"].rsplit("/", 1)[-1], c["unmatched_sharded"])
        for c in comparisons
    ]
    assert got == [("rank0.hipblaslt.log", "rank0.hipblaslt.log", 0), ("rank0.rocblas.log", "rank0.rocblas.log", 0)]


@pytest.mark.parametrize("cache", ["1", "0"])
def test_an_edited_matmul_line_keeps_its_gemm(cache, monkeypatch):
    _switch_cache(monkeypatch, cache)
    line = _TRACE.format(thread=7, algo=31)
    edited = line.replace("B=0X1523C0000000 ", "B=... ").replace(
        "C=0X1523C0400000 Cdesc=[type=R_16F rows=768 cols=2048 ld=768]", "..."
    )
    result = blaslog.parse_text(edited + "\n" + line + "\n")
    partial, whole = result.gemms
    assert (partial.m, partial.n, partial.k, partial.trans, partial.a_type, partial.algo_id) == (
        whole.m,
        whole.n,
        whole.k,
        whole.trans,
        whole.a_type,
        31,
    )
    assert partial.missing == "C, Cdesc, B" and whole.missing is None
    _balanced(result)
