"""AMD logs as they vary in the wild (issue 14): older and edited forms, shell continuations, cut records,
launcher tags, glued commands, and numbers that are not ASCII decimal."""

from __future__ import annotations

from pathlib import Path

import pytest

import blaslog
from blaslog import api
from blaslog.api import _parse as api_parse

# ---------------------------------------------------------------------------------------------------------------
# 1. ROCBLAS_LAYER=3: a trace and a bench line per call count once, whatever the trace's generation
# ---------------------------------------------------------------------------------------------------------------

# ROCm < 3.5 trace (AMD-FORMATS.md 1.3): transposes as 111/112/113, flags as an integer, no atomics field; the
# bench line of the same call has no atomics switch either, so the two records are equal in every compared field.
_OLD_LAYER3 = """\
rocblas_create_handle
rocblas_sgemm,111,112,128,64,256,1,0x7f4431820000,128,0x7f4431830000,64,0,0x7f4431908000,128
./rocblas-bench -f gemm -r f32_r --transposeA N --transposeB T -m 128 -n 64 -k 256 --alpha 1 --lda 128 --ldb 64 --beta 0 --ldc 128
rocblas_gemm_ex,111,111,1024,16,27,1,0x7be683213a00,f32_r,1024,0x7be683203000,f32_r,27,0,0x7be683203a00,f32_r,1024,0x7be683203a00,f32_r,1024,f32_r,0,0,0
./rocblas-bench -f gemm_ex --transposeA N --transposeB N -m 1024 -n 16 -k 27 --alpha 1 --a_type f32_r --lda 1024 --b_type f32_r --ldb 27 --beta 0 --c_type f32_r --ldc 1024 --d_type f32_r --ldd 1024 --compute_type f32_r --algo 0 --solution_index 0 --flags 0
rocblas_gemm_ex,111,111,1024,16,27,1,0x7be683213a00,f32_r,1024,0x7be683203000,f32_r,27,0,0x7be683203a00,f32_r,1024,0x7be683203a00,f32_r,1024,f32_r,0,0,0
./rocblas-bench -f gemm_ex --transposeA N --transposeB N -m 1024 -n 16 -k 27 --alpha 1 --a_type f32_r --lda 1024 --b_type f32_r --ldb 27 --beta 0 --c_type f32_r --ldc 1024 --d_type f32_r --ldd 1024 --compute_type f32_r --algo 0 --solution_index 0 --flags 0
"""

# ROCm 3.8 .. 6.x: the trace line ends with the atomics mode, the bench line has no switch when allowed
_NEW_LAYER3 = """\
rocblas_gemm_ex,N,N,1024,16,27,1,0x7be683213a00,f32_r,1024,0x7be683203000,f32_r,27,0,0x7be683203a00,f32_r,1024,0x7be683203a00,f32_r,1024,f32_r,0,0,none,atomics_allowed
./rocblas-bench -f gemm_ex --transposeA N --transposeB N -m 1024 -n 16 -k 27 --alpha 1 --a_type f32_r --lda 1024 --b_type f32_r --ldb 27 --beta 0 --c_type f32_r --ldc 1024 --d_type f32_r --ldd 1024 --compute_type f32_r --algo 0 --solution_index 0 --flags 0
"""


@pytest.mark.parametrize(
    ("text", "lines"), [(_OLD_LAYER3, [2, 4, 6]), (_NEW_LAYER3, [1])], ids=["rocm<3.5", "rocm3.8+"]
)
@pytest.mark.parametrize("jobs", [1, 2])
def test_layer3_trace_and_bench_count_each_call_once(tmp_path: Path, text: str, lines: list[int], jobs: int) -> None:
    calls = len(lines)
    path = tmp_path / "layer3.log"
    path.write_text(text)
    parsed = blaslog.parse(str(path))
    assert parsed.files[0].gemm_records == 2 * calls  # parse keeps both dialects' records
    inputs = api.read_run_files([str(path)], api.Options(jobs=jobs))
    occurrences = inputs.occurrences()
    assert [o.log_format for o in occurrences] == ["rocblas-trace"] * calls
    assert [o.line for o in occurrences] == lines
    assert inputs.notes == [
        f"{path}: holds both rocblas-trace and rocblas-bench lines for the same calls; "
        "rocblas-bench lines are left out so that each call counts once"
    ]
    report = api.summary([str(path)])
    assert sum(row["calls"] for row in report.rows) == calls


def _parse(text: str) -> blaslog.ParseResult:
    return blaslog.parse_text(text)


def _only(result: blaslog.ParseResult) -> blaslog.FileSummary:
    summary = result.files[0]
    assert summary.record_lines + summary.foreign_lines + summary.unparsable_lines == summary.lines
    return summary


_BENCH_EX = (
    "./rocblas-bench -f gemm_ex --transposeA N --transposeB T -m 1024 -n 16 -k 27 --alpha 1 --a_type f32_r "
    "--lda 1024 --b_type f32_r --ldb 16 --beta 0 --c_type f32_r --ldc 1024 --d_type f32_r --ldd 1024 "
    "--compute_type f32_r --algo 0 --solution_index 0 --flags 0"
)
_HIP_BENCH = (
    "hipblaslt-bench --api_method c -m 48 -n 176 -k 1024 --lda 48 --ldb 176 --ldc 48 --ldd 48  --stride_a 0 "
    "--stride_b 0 --stride_c 0 --stride_d 0  --alpha 1.000000 --beta 0.000000 --transA N --transB T "
    "--batch_count 1 --scaleA 0 --scaleB 0  --a_type bf16_r --b_type bf16_r --c_type bf16_r --d_type bf16_r "
    "--scale_type f32_r --bias_type f32_r   --compute_type f32_r --algo_method index --solution_index 218160 "
    "--activation_type none "
)
_TRACE_EX = (
    "rocblas_gemm_ex,N,T,1024,16,27,1,0x7be683213a00,f32_r,1024,0x7be683203000,f32_r,16,0,0x7be683203a00,"
    "f32_r,1024,0x7be683203a00,f32_r,1024,f32_r,0,0,none,atomics_allowed"
)
_PROFILE_EX = (
    '- { rocblas_function: "rocblas_gemm_ex", atomics_mode: atomics_allowed, a_type: "f32_r", '
    'b_type: "f32_r", '
    'c_type: "f32_r", d_type: "f32_r", compute_type: "f32_r", transA: \'N\', transB: \'T\', M: 1024, N: 16, '
    "K: 27, alpha: 1.0, lda: 1024, ldb: 16, beta: 0.0, ldc: 1024, ldd: 1024, algo: 0, solution_index: 0, "
    "flags: none, call_count: 3 }"
)
_HIP_PROFILE = (
    "- { function: matmul, M: 1024, N: 512, K: 256, lda: 1024, ldb: 256, ldc: 1024, ldd: 1024, "
    "stride_a: 0, stride_b: 0, stride_c: 0, stride_d: 0, alpha: 1.000000, beta: 0.000000, transA: N, "
    "transB: T, batch_count: 1, a_type: f16_r, b_type: f16_r, c_type: f16_r, d_type: f16_r, "
    "scale_type: f32_r, compute_type: c_f32_r, activation_type: none, call_count: 7 }"
)
_HIP_TRACE = (
    "[2026-07-21 10:04:56][HIPBLASLT][51877][Trace][rocblaslt_matmul] A=0x7f01 Adesc=[type=R_16BF rows=64 "
    "cols=48 ld=64] B=0x7f02 Bdesc=[type=R_16BF rows=48 cols=32 ld=48] C=0x7f03 Cdesc=[type=R_16BF rows=64 "
    "cols=32 ld=64] D=0x7f03 Ddesc=[type=R_16BF rows=64 cols=32 ld=64] computeDesc=[computeType=COMPUTE_32F "
    "scaleType=R_32F transA=OP_N transB=OP_N] workSpace=0x0 workSpaceSizeInBytes=0 alpha=1 beta=0 stream=0x0"
)


def _key(gemm: blaslog.GemmCall) -> tuple:
    return (gemm.function, gemm.m, gemm.n, gemm.k, gemm.trans, gemm.a_type, gemm.compute_type, gemm.solution_index)


# ---------------------------------------------------------------------------------------------------------------
# 2. Shell continuations and hand-wrapped commands
# ---------------------------------------------------------------------------------------------------------------


def _continued(command: str, at: tuple[str, ...], indent: str = "    ") -> list[str]:
    """`command` split before each option of `at`, each line but the last ending in ` \\` (as docs print it)."""
    lines, rest = [], command
    for option in at:
        head, _, rest = rest.partition(f" {option} ")
        lines.append(head)
        rest = f"{option} {rest}"
    lines.append(rest)
    return [(indent if i else "") + line + (" \\" if i < len(lines) - 1 else "") for i, line in enumerate(lines)]


@pytest.mark.parametrize(
    ("command", "at"),
    [
        (_BENCH_EX, ("--alpha", "--beta", "--compute_type")),
        (_HIP_BENCH, ("--lda", "--transA", "--a_type", "--algo_method")),
    ],
)
def test_a_command_continued_with_backslashes_is_one_record(command: str, at: tuple[str, ...]) -> None:
    one = _parse(command + "\n").gemms
    lines = _continued(command, at)
    result = _parse("docs say:\n" + "\n".join(lines) + "\nresult: 12 TFLOPS\n")
    summary = _only(result)
    assert [_key(g) for g in result.gemms] == [_key(g) for g in one] and len(one) == 1
    assert (result.gemms[0].line, result.gemms[0].end_line) == (2, len(lines) + 1)
    assert (summary.record_lines, summary.foreign_lines, summary.unparsable_lines) == (len(lines), 2, 0)


def test_the_kernel_selection_comment_is_kept_as_fields() -> None:
    text = (
        _BENCH_EX + " \\\n    # source=tensile kernel=Cijk_Ailk_Bljk_SB_MT128x128x8 tensile_index=12 \\\n"
        "    fallback_from=hipblaslt parent_api=rocblas_strsm\n"
    )
    (gemm,) = _parse(text).gemms
    assert dict(gemm.extra) == {
        "source": "tensile",
        "kernel": "Cijk_Ailk_Bljk_SB_MT128x128x8",
        "tensile_index": "12",
        "fallback_from": "hipblaslt",
        "parent_api": "rocblas_strsm",
    }


def test_a_command_wrapped_by_hand_without_backslashes_is_joined() -> None:
    lines = _continued(_HIP_BENCH, ("--lda", "--transA", "--a_type", "--algo_method"), indent="  ")
    text = "\n".join(line.removesuffix(" \\") for line in lines) + "\n"
    (gemm,) = _parse(text).gemms
    assert _key(gemm) == ("hipblaslt-bench", 48, 176, 1024, "NT", "bf16_r", "f32_r", 218160)


def test_a_result_row_or_kernel_info_after_a_command_is_not_joined() -> None:
    text = _HIP_BENCH + "\n--Solution index: 218160\n--Solution name: Cijk_Alik_Bljk\n" + _BENCH_EX + "\n-----\n"
    result = _parse(text)
    assert len(result.gemms) == 2 and _only(result).foreign_lines == 3


# ---------------------------------------------------------------------------------------------------------------
# 3. Cut records
# ---------------------------------------------------------------------------------------------------------------


def _truncated(result: blaslog.ParseResult) -> list[blaslog.Event]:
    return [r for r in result.records if isinstance(r, blaslog.Event) and r.event == "truncated"]


@pytest.mark.parametrize("end", ["\n", "\n" + _HIP_PROFILE + "\n", ""], ids=["newline", "entry-after", "no-newline"])
def test_a_cut_hipblaslt_profile_entry_is_a_truncated_record_with_its_fields(end: str) -> None:
    cut = _HIP_PROFILE[: _HIP_PROFILE.index("transA") + 10]  # `..., transA: N, tran`
    result = _parse(_HIP_PROFILE + "\n" + cut + end)
    summary = _only(result)
    (event,) = _truncated(result)
    assert (event.function, event.line, event.log_format) == ("matmul", 2, "hipblaslt-profile")
    fields = dict(event.fields)
    assert fields["M"] == "1024" and fields["transA"] == "N" and "transB" not in fields
    assert summary.unparsable_lines == 0 and len(result.gemms) == 1 + (end.count("function") == 1)
    assert not [p for p in summary.problems if p.severity == "error"]


def test_a_cut_rocblas_profile_entry_is_truncated_too() -> None:
    result = _parse(_PROFILE_EX[:120] + "\n")
    (event,) = _truncated(result)
    assert event.function == "rocblas_gemm_ex" and _only(result).unparsable_lines == 0


@pytest.mark.parametrize("command", [_BENCH_EX, _HIP_BENCH])
@pytest.mark.parametrize("newline", ["", "\n"])
def test_a_bench_line_cut_before_its_types_is_truncated_not_a_defaulted_gemm(command: str, newline: str) -> None:
    cut = command[: command.index("--alpha" if "rocblas" in command else "--transB") + 5]  # no types, no trans
    result = _parse(command + "\n" + cut + newline)
    assert len(result.gemms) == 1
    (event,) = _truncated(result)
    assert event.line == 2 and dict(event.fields)["m"] in ("1024", "48")
    assert event.function == ("rocblas_gemm_ex" if "rocblas" in command else "hipblaslt-bench")


def test_a_typed_rocblas_bench_command_is_read_as_the_bench_client_reads_it() -> None:
    """As people type the command (rocBLAS issue #1235): one-letter types (`h`, `s`), types left to `-r`
    (the client's `a_type == "" ? prec : ...`), Markdown bold around values; without `-r` a command that names
    no types is still a cut one (the logger writes them, and the client's default f32_r is not assumed)."""
    base = "./rocblas-bench -f **gemm_ex** --compute_type **s** -r h {types}--transposeA N --transposeB T -m 64 -n 32 -k 16 --alpha 1 --lda 64 --ldb 32 --beta 0 --ldc 64"
    for types in ("--a_type h --b_type h --c_type h --d_type h ", ""):
        (gemm,) = _parse(base.format(types=types) + "\n").gemms
        assert (gemm.function, gemm.trans, gemm.m, gemm.n, gemm.k) == ("rocblas_gemm_ex", "NT", 64, 32, 16)
        assert (gemm.a_type, gemm.b_type, gemm.c_type, gemm.d_type, gemm.compute_type) == (*["f16_r"] * 4, "f32_r")
    (sgemm,) = _parse(base.replace("**gemm_ex**", "gemm").replace("-r h", "-r S").format(types="") + "\n").gemms
    assert (sgemm.function, sgemm.a_type) == ("rocblas_sgemm", "f32_r")
    untyped = _parse(base.replace(" -r h", "").format(types="") + "\n")
    assert not untyped.gemms and len(_truncated(untyped)) == 1


def test_a_rocblas_trace_line_elided_by_a_person_is_a_partial_gemm() -> None:
    """`...` for fields left out: those before the first stand where the logger writes them; those after it
    cannot be placed, so they are named as not shown (not guessed by position)."""
    result = _parse("rocblas_gemm_ex,T,N,34816,512,5120,...,bf16_r,...,bf16_r,...,f32_r,...\n")
    (gemm,) = result.gemms
    assert (gemm.trans, gemm.m, gemm.n, gemm.k, gemm.a_type, gemm.compute_type) == ("TN", 34816, 512, 5120, None, None)
    assert gemm.missing is not None and "a_type" in gemm.missing and "compute_type" in gemm.missing
    (typed,) = _parse("rocblas_hgemm,N,N,8,8,...\n").gemms
    assert (typed.m, typed.n, typed.k, typed.a_type) == (8, 8, None, "f16_r")
    assert _only(_parse("rocblas_gemm_ex,T,N,1,2\n")).unparsable_lines == 1  # no `...`: no edit, an error
    (scalar,) = _parse("rocblas_gemm_ex,N,N,8,8,8,(1,0),0x7f00,f32_c,8,...\n").gemms  # a complex alpha is one field
    assert (scalar.m, scalar.a_type, scalar.lda) == (8, "f32_c", 8)


@pytest.mark.parametrize(
    "prefix", ["2024-01-15T10:23:45.1234567Z ", "2024-01-15T10:23:45.123456789Z stdout F ", "trainer-1  | "]
)
def test_amd_lines_behind_a_ci_runners_prefix_are_read(prefix: str) -> None:
    """GitHub Actions' raw logs, Kubernetes' CRI logs and docker compose put a prefix before every line: a bench
    line, a trace line and a bench table behind it are read as without it."""
    table = (
        "transA,transB,grouped_gemm,batch_count,m,n,k,alpha,lda,stride_a,beta,ldb,stride_b,ldc,stride_c,ldd,stride_d,"
        "a_type,b_type,c_type,d_type,compute_type,hipblaslt-Gflops,us\n"
        "N,N,0,1,128,128,128,1,128,16384,0,128,16384,128,16384,128,16384,f32_r,f32_r,f32_r,f32_r,f32_r,530.9,7.9\n"
    )
    text = _HIP_BENCH + "\n" + _NEW_LAYER3 + table
    plain = _parse(text)
    tagged = _parse("".join(prefix + line + "\n" for line in text.splitlines()))
    assert len(plain.gemms) == 4 and _only(tagged).foreign_lines == _only(plain).foreign_lines == 0
    assert [(g.function, g.m, g.n, g.k, g.trans, g.a_type) for g in tagged.gemms] == [
        (g.function, g.m, g.n, g.k, g.trans, g.a_type) for g in plain.gemms
    ]


def test_what_the_rocblas_bench_client_refuses_or_does_not_fill() -> None:
    """`-r` fills only the types a command leaves out (not one it names without a value, cut or elided), only of
    a GEMM, and only with a precision the client takes; a command cut after an option name stays truncated."""
    head = "rocblas-bench -f gemm_ex -r h --transposeA N --transposeB N -m 8 -n 8 -k 8 --alpha 1 "
    (elided,) = _parse(head + "--a_type f32_r --b_type f32_r --c_type ... --d_type ... --compute_type ...\n").gemms
    assert elided.a_type == "f32_r" and "f16_r" not in (elided.c_type, elided.d_type, elided.compute_type)
    cut = _parse(head + "--a_type f16_r --lda 8 --c_type\nTotal time: 5 s\n")
    assert not cut.gemms and len(_truncated(cut)) == 1 and _only(cut).foreign_lines == 1
    refused = _parse(head.replace("-r h", "-r xyz") + "\n")
    assert not refused.gemms and len(_truncated(refused)) == 1
    (gemv,) = _parse("rocblas-bench -f gemv -r d -m 8 -n 8 --lda 8\n").records
    assert isinstance(gemv, blaslog.Event) and dict(gemv.fields)["r"] == "d" and "a_type" not in dict(gemv.fields)


def test_a_bench_line_cut_after_an_option_name_is_truncated() -> None:
    result = _parse(_HIP_BENCH + "--rotating")
    assert result.gemms == () and len(_truncated(result)) == 1


@pytest.mark.parametrize(
    ("line", "thread", "timestamp"),
    [
        (_HIP_TRACE, "51877", "2026-07-21 10:04:56"),
        (_HIP_TRACE.replace("[51877]", ""), None, "2026-07-21 10:04:56"),
    ],
)
def test_a_cut_logger_line_keeps_its_thread_and_time_stamp(line: str, thread: str | None, timestamp: str) -> None:
    result = _parse(line[: line.index("Cdesc") + 20])
    (event,) = _truncated(result)
    assert (event.function, event.thread, event.timestamp, event.level) == (
        "rocblaslt_matmul",
        thread,
        timestamp,
        "Trace",
    )


def test_a_trace_line_must_end_with_its_atomics_mode() -> None:
    result = _parse(_TRACE_EX[:-5])  # `...,none,atomics_al`, the writer killed
    assert result.gemms == () and len(_truncated(result)) == 1


# ---------------------------------------------------------------------------------------------------------------
# 4. Launcher tags
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("tag", ["[rank0]: ", "[default3]:", "[1,0]<stdout>:"])
@pytest.mark.parametrize(
    "line",
    [_TRACE_EX, _BENCH_EX, _PROFILE_EX, _HIP_BENCH, _HIP_PROFILE, _HIP_TRACE],
    ids=["trace", "bench", "profile", "hipblaslt-bench", "hipblaslt-profile", "hipblaslt"],
)
def test_records_behind_a_launcher_tag(tag: str, line: str) -> None:
    plain = _parse(line + "\n" + line + "\n").gemms
    tagged = _parse(f"{tag}step 1\n{tag}{line}\n{tag}{line}\n")
    assert [_key(g) for g in tagged.gemms] == [_key(g) for g in plain] and len(plain) == 2
    assert [g.line for g in tagged.gemms] == [2, 3]
    assert (_only(tagged).record_lines, _only(tagged).foreign_lines) == (2, 1)


def test_a_continued_command_behind_a_launcher_tag() -> None:
    lines = _continued(_BENCH_EX, ("--alpha", "--beta"))
    (gemm,) = _parse("".join(f"[rank1]: {line}\n" for line in lines)).gemms
    assert _key(gemm) == _key(_parse(_BENCH_EX).gemms[0]) and gemm.end_line == 3


def test_a_word_before_a_record_is_no_launcher_tag() -> None:
    result = _parse("error in rocblas_gemm_ex, status 3\nsee ./rocblas-bench --help\n")
    assert result.records == () and _only(result).foreign_lines == 2


# ---------------------------------------------------------------------------------------------------------------
# 5. Older and edited forms
# ---------------------------------------------------------------------------------------------------------------


def test_the_early_rocblas_profile_form_without_braces() -> None:
    entry = _PROFILE_EX.removeprefix("- { ").removesuffix(" }")
    (gemm,) = _parse(entry + "\n").gemms
    assert _key(gemm) == _key(_parse(_PROFILE_EX).gemms[0]) and gemm.call_count == 3
    typed = (
        "rocblas_function: rocblas_sgemm, transA: N, transB: T, M: 64, N: 32, K: 16, alpha: 1.0, lda: 64, "
        "ldb: 32, beta: 0.0, ldc: 64, call_count: 2"
    )
    (gemm,) = _parse(typed + "\n").gemms
    assert (gemm.function, gemm.a_type, gemm.trans, gemm.call_count) == ("rocblas_sgemm", "f32_r", "NT", 2)


def test_hipblaslt_lines_without_a_process_id() -> None:
    lines = [
        "[2026-01-16 01:55:05][HIPBLASLT][Api][rocblaslt_create] handle[out]=00000223F861AEA0",
        "[2026-01-16 01:55:05][HIPBLASLT][Info][initialize] Using library: C:\\hipblaslt\\library",
        _HIP_TRACE.replace("[51877]", ""),
    ]
    result = _parse("\n".join(lines) + "\n")
    assert [(r.function, r.thread, r.timestamp) for r in result.records] == [
        ("rocblaslt_create", None, "2026-01-16 01:55:05"),
        ("initialize", None, "2026-01-16 01:55:05"),
        ("rocblaslt_matmul", None, "2026-07-21 10:04:56"),
    ]
    assert _key(result.gemms[0]) == _key(_parse(_HIP_TRACE).gemms[0])


def test_hipblaslt_lines_with_the_prefix_elided() -> None:
    text = (
        "[Info][initialize] Using HIPBLASLT_TENSILE_LIBPATH=...\n"
        "[Trace][rocblaslt_matmul] A=...[type=R_8I rows=4096 cols=4096 ld=4096]\n"
        "                         B=...[type=R_8I rows=4096 cols=512 ld=4096]\n"
        "                         computeDesc=[computeType=COMPUTE_32I ...]\n"
    )
    result = _parse(text)
    assert [r.log_format for r in result.records] == ["hipblaslt", "hipblaslt"]
    gemm = result.gemms[0]
    assert (gemm.a_type, gemm.b_type, gemm.compute_type, gemm.m, gemm.n, gemm.k) == (
        "R_8I",
        "R_8I",
        "COMPUTE_32I",
        4096,
        512,
        4096,
    )
    assert any("transA" in p.message for p in result.files[0].problems)  # trans assumed, and said so


def test_an_elided_cublaslt_line_is_not_taken_for_hipblaslt() -> None:
    result = _parse("[Info][cublasLtCreate] lightHandle=0X55D2\n")
    assert [r.log_format for r in result.records] != ["hipblaslt"]


def test_two_bench_commands_glued_on_one_line_are_two_records() -> None:
    result = _parse(_HIP_BENCH + " " + _HIP_BENCH + "\n" + _BENCH_EX + "  " + _BENCH_EX + "\n")
    summary = _only(result)
    assert [g.line for g in result.gemms] == [1, 1, 2, 2] and summary.record_lines == 2
    assert len({_key(g) for g in result.gemms}) == 2
    assert [p.column for p in summary.problems if "glued" in p.message] == [len(_HIP_BENCH) + 2, len(_BENCH_EX) + 3]


# ---------------------------------------------------------------------------------------------------------------
# 6. Numbers are ASCII decimal
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["٢١", "1_0", "２１", "0x15"])  # noqa: RUF001 (other scripts' digits on purpose)
@pytest.mark.parametrize(
    ("line", "good"),
    [
        (_TRACE_EX, ",1024,16,"),
        (_BENCH_EX, "-m 1024 "),
        (_PROFILE_EX, "M: 1024,"),
        (_HIP_BENCH, "-m 48 "),
        (_HIP_PROFILE, "M: 1024,"),
        (_HIP_TRACE, "rows=64 "),
    ],
    ids=["trace", "bench", "profile", "hipblaslt-bench", "hipblaslt-profile", "hipblaslt"],
)
def test_a_number_that_is_not_ascii_decimal_is_a_located_error(line: str, good: str, bad: str) -> None:
    number = next(part for part in good.replace(",", " ").replace("=", " ").split() if part.isdigit())
    broken = line.replace(good, good.replace(number, bad), 1)
    result = _parse(broken + "\n" + broken + "\n")  # twice: the second line's shape is known
    summary = _only(result)
    assert result.gemms == () and summary.unparsable_lines == 2
    problem = summary.problems[0]
    assert problem.severity == "error" and "is not a decimal integer" in problem.message
    assert broken[problem.column - 1 :].startswith(bad), (problem.column, problem.message)


def test_a_blas_log_that_does_not_parse_is_not_asked_whether_logging_was_on(tmp_path: Path) -> None:
    path = tmp_path / "bad.log"
    path.write_text(_TRACE_EX.replace(",1024,16,", ",1_0,16,", 1) + "\n")
    for call in (lambda: api.summary([str(path)]), lambda: api_parse.parse_report([str(path)], kind="all")):
        with pytest.raises(blaslog.InputError) as info:
            call()
        assert "was logging on" not in str(info.value)
        assert f"could be read: 1 unparsable line(s) (first: {path}:1:" in str(info.value)
