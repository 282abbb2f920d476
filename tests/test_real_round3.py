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
