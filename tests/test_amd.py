"""rocBLAS (trace, bench, profile) and hipBLASLt (logger, bench) logs."""

from __future__ import annotations

import json
from collections import Counter

import pytest

import blaslog
from tests.conftest import GENERATED

MANIFEST = json.loads((GENERATED / "MANIFEST.json").read_text())["files"]


@pytest.mark.parametrize(
    "name,lines,gemms",
    [
        ("rocblas_fp16_trace.log", 160, 80),
        ("rocblas_fp16_bench.log", 80, 80),
        ("rocblas_fp16_profile.yaml", 22, 22),
        ("hipblaslt_bf16_tp2_rank0.api.log", 1394, 78),
        ("hipblaslt_bf16_unsharded.api.log", 1394, 78),
        ("hipblaslt_bf16_tp2_rank0.bench.log", 78, 78),
        ("hipblaslt_bf16_unsharded.bench.log", 78, 78),
    ],
)
def test_amd_files_parse_whole(name, lines, gemms, parsed):
    result = parsed(GENERATED / name)
    summary = result.files[0]
    assert summary.lines == lines == MANIFEST[name]["counts"]["lines"]
    assert summary.unparsable_lines == 0 and summary.balanced()
    assert len(result.gemms) == gemms


def _tally(records):
    return Counter(
        (g.function, g.trans, g.m, g.n, g.k, g.batch_count, g.a_type, g.compute_type, g.flags)
        for g in records
        for _ in range(g.call_count)
    )


def test_trace_bench_and_profile_describe_the_same_gemms(parsed):
    trace = _tally(parsed(GENERATED / "rocblas_fp16_trace.log").gemms)
    bench = _tally(parsed(GENERATED / "rocblas_fp16_bench.log").gemms)
    profile = _tally(parsed(GENERATED / "rocblas_fp16_profile.yaml").gemms)
    assert trace == bench == profile
    assert sum(trace.values()) == 80
    assert sum(g.call_count for g in parsed(GENERATED / "rocblas_fp16_profile.yaml").gemms) == 80


def test_rocblas_trace_fields(parsed):
    result = parsed(GENERATED / "rocblas_fp16_trace.log")
    logits = [g for g in result.gemms if g.m == 50304 and g.trans == "TN"]
    assert [(g.line, g.flags) for g in logits] == [(26, 0), (28, 4), (106, 0), (108, 4)]
    first = logits[0]
    assert (first.lda, first.ldb, first.ldc, first.ldd) == (1024, 1024, 50304, 50304)
    assert (first.a_type, first.compute_type, first.atomics, first.solution_index) == (
        "f16_r",
        "f32_r",
        "atomics_allowed",
        0,
    )
    events = [r for r in result.records if not isinstance(r, blaslog.GemmCall)]
    assert {e.function for e in events} == {"rocblas_set_stream"}


@pytest.mark.parametrize(
    "line,expected",
    [
        # ROCm 3.5-3.8: no atomics field
        (
            "rocblas_gemm_ex,N,T,4,8,16,1,0x7f,f16_r,4,0x7e,f16_r,8,0,0x7d,f16_r,4,0x7d,f16_r,4,f32_r,0,0,none",
            {"m": 4, "n": 8, "k": 16, "transb": "T", "flags": 0, "atomics": None},
        ),
        # pre-3.5: numeric transposes, integer flags
        (
            "rocblas_gemm_ex,111,112,4,8,16,1,0x7f,f16_r,4,0x7e,f16_r,8,0,0x7d,f16_r,4,0x7d,f16_r,4,f32_r,0,0,4",
            {"transa": "N", "transb": "T", "flags": 4},
        ),
        # ILP64 name, combined flags printed as invalid, atomics not allowed
        (
            "rocblas_gemm_ex_64,N,N,4,8,16,1,0x7f,bf16_r,4,0x7e,bf16_r,16,0,0x7d,bf16_r,4,0x7d,bf16_r,4,f32_r,0,0,invalid,"
            "atomics_not_allowed",
            {"function": "rocblas_gemm_ex_64", "flags": None, "atomics": "atomics_not_allowed"},
        ),
        # typed complex GEMM: a comma inside alpha
        (
            "rocblas_zgemm,N,T,4,4,4,(1,0),0x7f,4,0x7e,4,(0,0),0x7d,4,atomics_allowed",
            {"a_type": "f64_c", "alpha": "(1,0)", "ldd": 4},
        ),
        (
            "rocblas_hgemm_strided_batched,N,N,4,4,4,1,0x7f,4,16,0x7e,4,16,0,0x7d,4,16,8,atomics_allowed",
            {"batch_count": 8, "stride_c": 16, "a_type": "f16_r"},
        ),
        (
            "rocblas_gemm_batched_ex,N,N,4,4,4,1,0x7f,f16_r,4,0x7e,f16_r,4,0,0x7d,f16_r,4,0x7d,f16_r,4,3,f32_r,0,0,none,"
            "atomics_allowed",
            {"batch_count": 3},
        ),
        (
            "rocblas_gemm_ex3,N,N,4,4,4,1,0x7f,f8_r,4,0x7e,f8_r,4,0,0x7d,f16_r,4,0x7d,f16_r,4,f8_f8_f32,0,0,"
            "stochastic_rounding,atomics_allowed",
            {"compute_type": "f8_f8_f32", "flags": 32},
        ),
    ],
)
def test_rocblas_trace_variants(line, expected):
    result = blaslog.parse_text(line + "\n")
    assert result.files[0].unparsable_lines == 0, result.files[0].problems
    gemm = result.gemms[0]
    for key, value in expected.items():
        assert getattr(gemm, key) == value, key


@pytest.mark.parametrize(
    "line,expected",
    [
        (
            "./rocblas-bench -f gemm_ex --transposeA N --transposeB T -m 4096 -n 4096 -k 1024 --alpha 1 --a_type f16_r "
            "--lda 4096 --b_type f16_r --ldb 4096 --beta 0 --c_type f16_r --ldc 4096 --d_type f16_r --ldd 4096 "
            "--compute_type f32_r --algo 0 --solution_index 0 --flags 4 --atomics_not_allowed",
            {"flags": 4, "atomics": "atomics_not_allowed", "transb": "T"},
        ),
        (
            "./rocblas-bench --api 1 -f gemm_ex --transposeA N --transposeB N -m 4 -n 4 -k 4 --alpha 1 --a_type bf16_r "
            "--lda 4 --b_type bf16_r --ldb 4 --beta 0 --c_type bf16_r --ldc 4 --d_type bf16_r --ldd 4 --compute_type f32_r "
            "--algo 0 --solution_index 0 --flags 0 --atomics_allowed ",
            {"function": "rocblas_gemm_ex_64", "atomics": "atomics_allowed"},
        ),
        (
            "./rocblas-bench -f gemm -r f32_r --transposeA T --transposeB N -m 8 -n 4 -k 2 --alpha 1 --lda 2 --ldb 2 "
            "--beta 0 --ldc 8 ",
            {"function": "rocblas_sgemm", "a_type": "f32_r", "transa": "T", "flags": None},
        ),
        (
            "./rocblas-bench -f gemm_ex3 --transposeA N --transposeB N -m 4 -n 4 -k 4 --alpha 1 --a_type f8_r --lda 4 "
            "--b_type f8_r --ldb 4 --beta 0 --c_type f16_r --ldc 4 --d_type f16_r --ldd 4 --composite_compute_type f32 "
            "--algo 0 --solution_index 0 --flags 0",
            {"compute_type": "f32"},
        ),
    ],
)
def test_rocblas_bench_variants(line, expected):
    gemm = blaslog.parse_text(line + "\n").gemms[0]
    for key, value in expected.items():
        assert getattr(gemm, key) == value, key


@pytest.mark.parametrize(
    "line,expected",
    [
        # 2023-12 first format: no --api_method / --algo_method / --solution_index
        (
            "hipblaslt-bench -m 1024 -n 512 -k 256 --lda 1024 --ldb 256 --ldc 1024 --ldd 1024 --alpha 1.000000 "
            "--beta 0.000000 --transA N --transB N --batch_count 1 --a_type f16_r --b_type f16_r --c_type f16_r "
            "--d_type f16_r --compute_type f32_r",
            {"solution_index": None, "m": 1024},
        ),
        # 2024-10: --api_method, activation only when set, bias options
        (
            "hipblaslt-bench --api_method c -m 8 -n 4 -k 2 --lda 8 --ldb 2 --ldc 8 --ldd 8  --stride_a 0 --stride_b 0 "
            "--stride_c 0 --stride_d 0  --alpha 1.000000 --beta 0.000000 --transA T --transB N --batch_count 1 "
            "--bias_vector --bias_source d --a_type f16_r --b_type f16_r --c_type f16_r --d_type f16_r --scale_type f32_r "
            "--bias_type f32_r   --compute_type f32_r --activation_type gelu ",
            {"epilogue": "bias+gelu", "bias_pointer": True, "transa": "T"},
        ),
        (
            "hipblaslt-bench --api_method cpp -m 8 -n 4 -k 2 --lda 8 --ldb 2 --ldc 8 --ldd 8 --alpha 1.000000 --alphai 0 "
            "--beta 0.000000 --transA N --transB T --batch_count 2 --a_type bf16_r --b_type bf16_r --c_type bf16_r "
            "--d_type bf16_r --scale_type f32_r --compute_type xf32_r --algo_method index --solution_index -7 "
            "--activation_type none --rotating 512 --cold_iters 2 --iters 10",
            {"solution_index": -7, "batch_count": 2},
        ),
    ],
)
def test_hipblaslt_bench_generations(line, expected):
    result = blaslog.parse_text(line + "\n")
    gemm = result.gemms[0]
    for key, value in expected.items():
        assert getattr(gemm, key) == value, key


def test_hipblaslt_logger_lines(parsed):
    result = parsed(GENERATED / "hipblaslt_bf16_tp2_rank0.api.log")
    gemm = result.gemms[0]
    assert (gemm.library, gemm.function, gemm.transa, gemm.transb) == ("hipblaslt", "rocblaslt_matmul", "T", "N")
    assert (gemm.m, gemm.n, gemm.k) == (1536, 2048, 1024)
    assert gemm.epilogue is None and gemm.alpha == "1" and gemm.solution_index is None
    batched = next(g for g in result.gemms if g.batch_count > 1)
    assert batched.batch_count == 16 and batched.stride_a == 65536
    create = result.records[0]
    assert create.function == "rocblaslt_create" and dict(create.fields)["handle[out]"] == "0x55a8059242a0"


def test_mixed_file_sniffs_per_line():
    text = (
        "\n".join(
            [
                "rocblas_gemm_ex,N,N,4,4,4,1,0x7f,f16_r,4,0x7e,f16_r,4,0,0x7d,f16_r,4,0x7d,f16_r,4,f32_r,0,0,none,atomics_allowed",
                "./rocblas-bench -f gemm_ex --transposeA N --transposeB N -m 4 -n 4 -k 4 --alpha 1 --a_type f16_r --lda 4 "
                "--b_type f16_r --ldb 4 --beta 0 --c_type f16_r --ldc 4 --d_type f16_r --ldd 4 --compute_type f32_r --algo 0 "
                "--solution_index 0 --flags 0",
                "epoch 1 loss 2.5",
                "I! cuBLAS (v12.9.3) function cublasStatus_t cublasCreate_v2(cublasContext**) called:",
                "i!  handle: type=cublasHandle_t; val=POINTER (IN HEX:0x0x7ffce76e9d18)",
                '- { rocblas_function: "rocblas_gemm_ex", atomics_mode: atomics_allowed, a_type: "f16_r", b_type: '
                '"f16_r", c_type: "f16_r", d_type: "f16_r", compute_type: "f32_r", transA: \'N\', transB: \'N\', M: 4, '
                "N: 4, K: 4, alpha: 1.0, lda: 4, ldb: 4, beta: 0.0, ldc: 4, ldd: 4, algo: 0, solution_index: 0, flags: none, "
                "call_count: 3 }",
            ]
        )
        + "\n"
    )
    result = blaslog.parse_text(text)
    summary = result.files[0]
    assert summary.formats == {"rocblas-trace": 1, "rocblas-bench": 1, "cublas": 1, "rocblas-profile": 1}
    assert (summary.foreign_lines, summary.unparsable_lines, summary.lines) == (1, 0, 6)
    only = blaslog.parse_text(text, log_format="rocblas-bench")
    assert only.files[0].formats == {"rocblas-bench": 1}
    assert only.files[0].balanced()


def test_hipblaslt_profile_entries():
    line = (
        "- { function: matmul, M: 1024, N: 2048, K: 4096, lda: 1024, ldb: 4096, ldc: 1024, ldd: 1024, "
        "stride_a: 0, stride_b: 0, stride_c: 0, stride_d: 0, alpha: 1.000000, beta: 0.000000, transA: N, "
        "transB: T, batch_count: 1, scaleA: 0, scaleB: 0, scaleC: 0, scaleD: 0, swizzleA: false, swizzleB: false, "
        "scaleAlpha_vector: false, gradient: false, use_e: false, bias_vector: false, bias_source: d, "
        "a_type: bf16_r, b_type: bf16_r, c_type: bf16_r, d_type: bf16_r, scale_type: f32_r, bias_type: f32_r, "
        "aux_type: f32_r, compute_type: c_f32_r, activation_type: none, flush: false, any_stride: true, "
        "rotating: 0, cold_iters: 0, iters: 0, algo_method: index, solution_index: 163377, call_count: 12 }"
    )
    result = blaslog.parse_text(line + "\n- { function: other_thing, x: 1 }\n")
    assert result.files[0].formats == {"hipblaslt-profile": 2} and result.files[0].unparsable_lines == 0
    gemm = result.gemms[0]
    assert (gemm.m, gemm.n, gemm.k, gemm.transb, gemm.call_count, gemm.solution_index) == (
        1024,
        2048,
        4096,
        "T",
        12,
        163377,
    )
    assert gemm.compute_type == "c_f32_r" and dict(gemm.extra)["algo_method"] == "index"


def test_rocblas_messages_are_events():
    text = (
        "rocBLAS warning: hipBlasLT failed. Fallback to other GEMM backend.\n"
        'rocBLAS error: No Tensile solution found for { a_type: "f16_r", atomics_mode: atomics_allowed }\n'
        "rocBLAS info: maximum library size per device is 0.394265 GB.\n"
    )
    result = blaslog.parse_text(text)
    assert [(r.event, r.text[:20]) for r in result.records] == [
        ("warning", "hipBlasLT failed. Fa"),
        ("error", "No Tensile solution "),
        ("info", "maximum library size"),
    ]
    assert result.files[0].formats == {"rocblas-message": 3} and result.files[0].balanced()


BENCH_2018 = (
    "./rocblas-bench -f gemm_strided_batched -r h --transposeA N --transposeB T -m 196 -n 1024 -k 256 --alpha 15360 "
    "--lda 196 --stride_a 50176 --ldb 1024 --stride_b 0 --beta 0 --ldc 196 --stride_c 200704 --batch 64"
)


@pytest.mark.parametrize("tail", ["", " >> gemm.sb.txt", " 2>&1 | tee run.log", " > out.txt", " | |"], ids=repr)
def test_bench_command_with_what_the_shell_or_a_table_added(tail):
    """What follows a command for the shell (a redirect, a pipe) or a rendered table (its cell borders) is not
    the command's: the GEMM is whole either way; `--batch` is the batch count of rocblas-bench before ROCm 2."""
    result = blaslog.parse_text(BENCH_2018 + tail + "\n")
    (gemm,) = result.gemms
    assert (gemm.function, gemm.m, gemm.n, gemm.k, gemm.batch_count) == (
        "rocblas_hgemm_strided_batched",
        196,
        1024,
        256,
        64,
    )
    assert (gemm.stride_a, gemm.stride_c, gemm.ldc) == (50176, 200704, 196)
    assert result.files[0].unparsable_lines == 0 and not result.files[0].problems


def test_bench_option_without_its_value_is_reported():
    """rocBLAS has logged `--ldc` with no value: the GEMM is read, its ldc unknown, and the line says so."""
    line = (
        "./rocblas-bench -f gemm_batched_ex --transposeA T --transposeB N -m 32 -n 2 -k 128 --alpha 1 --a_type f16_r "
        "--lda 1024 --b_type f16_r --ldb 4096 --beta 0 --c_type f32_r --ldc --d_type f32_r --ldd 32 --batch_count 32 "
        "--compute_type f32_r --algo 0 --solution_index 0 --flags 1\n"
    )
    result = blaslog.parse_text(line)
    (gemm,) = result.gemms
    assert (gemm.m, gemm.n, gemm.k, gemm.ldc, gemm.ldd, gemm.batch_count) == (32, 2, 128, None, 32, 32)
    assert [p.message for p in result.files[0].problems] == ["option --ldc has no value"]


_EX = (
    "./rocblas-bench -f gemm_ex --transposeA N --transposeB T -m 4096 -n 4096 -k 1024 --alpha 1 --a_type f16_r "
    "--lda 4096 --b_type f16_r --ldb 4096 --beta 0 --c_type f16_r --ldc 4096 --d_type f16_r --ldd 4096 "
    "--compute_type f32_r --algo 0 --solution_index 0 --flags 0"
)


@pytest.mark.parametrize(
    "line",
    [
        # a comment's words may hold what a shell would take for a redirect or a pipe: they are the comment's
        _EX + " # source=rocblas kernel=gemm_kernel<float, 4> fallback_from=hipblaslt parent_api=rocblas_gemm_ex",
        _EX + " # source=tensile kernel=Cijk_A | fallback_from=hipblaslt parent_api=x",
        # a pipe or redirect with options after it is no tail: the command is read from its fields (an edit)
        _EX.replace(" -m 4096", " | -m 4096") + " |",
        _EX.replace("rocblas-bench -f", "rocblas-bench 2>&1 -f"),
    ],
    ids=["comment-angle", "comment-pipe", "table-cells-inside", "redirect-first"],
)
def test_what_looks_like_a_shell_inside_a_command_keeps_the_gemm(line):
    (gemm,) = blaslog.parse_text(line + "\n").gemms
    assert (gemm.m, gemm.n, gemm.k, gemm.transa, gemm.transb, gemm.missing) == (4096, 4096, 1024, "N", "T", None)


def test_hipblaslt_bench_switches_are_no_options_without_values():
    """hipBLASLt's bool switches (--amaxD, --c_equal_d ...; --scaleC and --scaleD as TensileLite prints them) take
    no value: no warning; `--batch` is `--batch_count` in both benches (their clients' fix_batch)."""
    line = (
        "hipblaslt-bench --api_method c -m 3072 -n 2048 -k 1024 --lda 1024 --ldb 1024 --ldc 3072 --ldd 3072 "
        "--alpha 1.000000 --beta 0.000000 --transA T --transB N --batch 4 --scaleA 1 --scaleB 1 --scaleC --scaleD "
        "--amaxD --a_type f8_r --b_type f8_r --c_type bf16_r --d_type bf16_r --scale_type f32_r --compute_type f32_r "
        "--algo_method index --solution_index 163482 --activation_type none --c_equal_d\n"
    )
    result = blaslog.parse_text(line)
    (gemm,) = result.gemms
    assert (gemm.m, gemm.n, gemm.k, gemm.batch_count, gemm.missing) == (3072, 2048, 1024, 4, None)
    assert not result.files[0].problems
