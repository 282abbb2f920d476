"""Issue 35: real inputs, round 3 (complete commands, condensed logs, the 2019 profile form, partly edited records,
TunableOp pairing by key, messages that say what happened, two libraries in one rank, threads in a finding)."""

from __future__ import annotations

import pytest

import blaslog
from blaslog.records import Event


def _events(result):
    return [r for r in result.records if isinstance(r, Event)]


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
    monkeypatch.setenv("BLASLOG_SHAPE_CACHE", cache)
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
    monkeypatch.setenv("BLASLOG_SHAPE_CACHE", cache)
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
