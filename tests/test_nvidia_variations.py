"""NVIDIA logs as they vary in the wild (issue 14): program prints and a person's `[...]` inside cuBLAS records,
launcher tags, older and edited forms (cuBLAS 10.2 header-only records, elided arguments, cuBLASLt lines with
their prefix cut down, Julia's logger frames), records cut at the end of the input, within-run gaps of `check`,
and numbers that are not ASCII decimal."""

from __future__ import annotations

from pathlib import Path

import pytest

import blaslog
from blaslog import Event, GemmCall
from blaslog.check import check_run
from tests.conftest import GENERATED

CLASSIC = GENERATED / "cublas_classic_fp16.log"


def _parse(tmp_path: Path, text: str, name: str = "nv.log") -> tuple[object, list[GemmCall], list[Event]]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    result = blaslog.parse(str(path))
    summary = result.files[0]
    assert summary.record_lines + summary.foreign_lines + summary.unparsable_lines == summary.lines, summary
    return (
        summary,
        [r for r in result.records if isinstance(r, GemmCall)],
        [r for r in result.records if isinstance(r, Event)],
    )


def _fields(gemm: GemmCall) -> tuple[object, ...]:
    """Everything but where it was (line numbers)."""
    return (gemm, gemm.thread, gemm.timestamp, gemm.a_ptr, gemm.pointers)


def _record(
    function: str,
    args: list[tuple[str, str, str]],
    *,
    time: str = "2026-06-06T16:20:31",
    thread: str = "139694885058368",
    math: str = "CUBLAS_DEFAULT_MATH",
    prototype: str = "cublasHandle_t, ...",
) -> list[str]:
    """A cuBLAS 12.9.3 record as CUBLAS_LOGINFO_DBG=1 prints it."""
    lines = [f"I! cuBLAS (v12.9.3) function cublasStatus_t {function}({prototype}) called:"]
    lines += [f"i!  {name}: type={ctype}; val={value}" for name, ctype, value in args]
    lines += [
        f"i! Time: {time} elapsed from start 0.033333 minutes or 2.000000 seconds",
        f"i!Process=322590; Thread={thread}; GPU=0; Handle=POINTER (IN HEX:0x0x55a178c7a2a0); "
        f"StreamId=POINTER (IN HEX:0x(nil)) (defaultStream); MathMode={math}",
        "i! COMPILED WITH: GNU GCC/G++ / 8.5.0 20210514 (Red Hat 8.5.0-22)",
    ]
    return lines


def _sgemm(m: int = 64, n: int = 32, k: int = 128, **kwargs: str) -> list[str]:
    return _record(
        "cublasSgemm_v2",
        [
            ("handle", "cublasHandle_t", "POINTER (IN HEX:0x0x55a178c7a2a0)"),
            ("transa", "cublasOperation_t", "CUBLAS_OP_T(1)"),
            ("transb", "cublasOperation_t", "CUBLAS_OP_N(0)"),
            ("m", "int", str(m)),
            ("n", "int", str(n)),
            ("k", "int", str(k)),
            ("alpha", "float", "POINTER (IN HEX:0x0x7ffce76e9b74)"),
            ("A", "float", "POINTER (IN HEX:0x0x7f74c0000000)"),
            ("lda", "int", str(k)),
            ("B", "float", "POINTER (IN HEX:0x0x7f76c0000000)"),
            ("ldb", "int", str(k)),
            ("beta", "float", "POINTER (IN HEX:0x0x7ffce76e9b78)"),
            ("C", "float", "POINTER (IN HEX:0x0x7f76c0400000)"),
            ("ldc", "int", str(m)),
        ],
        **kwargs,
    )


def _gemm_ex(m: int = 64, n: int = 32, k: int = 128, algo: str = "CUBLAS_GEMM_DEFAULT(-1)", **kwargs: str) -> list[str]:
    return _record(
        "cublasGemmEx",
        [
            ("handle", "cublasHandle_t", "POINTER (IN HEX:0x0x55a178c7a2a0)"),
            ("transa", "cublasOperation_t", "CUBLAS_OP_T(1)"),
            ("transb", "cublasOperation_t", "CUBLAS_OP_N(0)"),
            ("m", "int", str(m)),
            ("n", "int", str(n)),
            ("k", "int", str(k)),
            ("alpha", "void", "POINTER (IN HEX:0x0x7ffce76e9b74)"),
            ("A", "void", "POINTER (IN HEX:0x0x7f74c0000000)"),
            ("Atype", "cudaDataType_t", "CUDA_R_32F(0)"),
            ("lda", "int", str(k)),
            ("B", "void", "POINTER (IN HEX:0x0x7f76c0000000)"),
            ("Btype", "cudaDataType_t", "CUDA_R_32F(0)"),
            ("ldb", "int", str(k)),
            ("beta", "void", "POINTER (IN HEX:0x0x7ffce76e9b78)"),
            ("C", "void", "POINTER (IN HEX:0x0x7f76c0400000)"),
            ("Ctype", "cudaDataType_t", "CUDA_R_32F(0)"),
            ("ldc", "int", str(m)),
            ("computeType", "cublasComputeType_t", "CUBLAS_COMPUTE_32F(68)"),
            ("algo", "SOME TYPE", algo),
        ],
        **kwargs,
    )


def _text(*records: list[str]) -> str:
    return "".join(line + "\n" for record in records for line in record)


# ---------------------------------------------------------------------------------------------------------------
# 1. Other text inside a cuBLAS record
# ---------------------------------------------------------------------------------------------------------------


def test_program_print_inside_a_cublas_record_does_not_end_it(tmp_path: Path) -> None:
    """`sed '12a step 1 loss=4.21'`: the print lands between the first GEMM's `i!` lines."""
    lines = CLASSIC.read_text().splitlines(keepends=True)
    plain, plain_gemms, _ = _parse(tmp_path, "".join(lines), "plain.log")
    summary, gemms, _ = _parse(tmp_path, "".join([*lines[:12], "step 1 loss=4.21\n", *lines[12:]]))
    assert (summary.foreign_lines, summary.unparsable_lines, summary.record_lines) == (1, 0, plain.record_lines)
    assert [_fields(g) for g in gemms] == [_fields(g) for g in plain_gemms]
    first = gemms[0]
    assert (first.a_type, first.lda, first.ldb, first.ldc) == ("R_16F", 1024, 1024, 3072)
    assert first.thread == "139694885058368"
    assert (first.line, first.end_line) == (6, 29)  # the print (line 13) is inside its span, not one of its lines


def test_person_elision_inside_a_cublas_record_does_not_end_it(tmp_path: Path) -> None:
    record = _sgemm()
    text = _text(record[:2], ["[...]"], record[2:5], ["[...]", ""], record[5:])
    summary, gemms, events = _parse(tmp_path, text)
    assert (summary.foreign_lines, summary.unparsable_lines, len(events)) == (3, 0, 0)
    assert [(g.m, g.n, g.k, g.transa, g.lda, g.thread) for g in gemms] == [(64, 32, 128, "T", 128, "139694885058368")]


def test_foreign_text_after_a_whole_cublas_record_ends_it(tmp_path: Path) -> None:
    """After its COMPILED WITH trailer a record is over: an `i!` line after a print is an orphan."""
    record = _sgemm()
    summary, gemms, _ = _parse(tmp_path, _text(record, ["step 1 loss=4.21", "i!  lda: type=int; val=4"]))
    assert (summary.foreign_lines, summary.unparsable_lines) == (1, 1)
    assert gemms[0].end_line == len(record)
    assert "outside a record" in summary.problems[-1].message


# ---------------------------------------------------------------------------------------------------------------
# 2. Launcher tags
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("tag", ["[rank0]:", "[rank0]: ", "[default0]:", "[1,0]<stdout>:"])
def test_launcher_tag_on_every_cublas_line(tmp_path: Path, tag: str) -> None:
    text = CLASSIC.read_text()
    _, plain_gemms, plain_events = _parse(tmp_path, text, "plain.log")
    summary, gemms, events = _parse(tmp_path, "".join(tag + line + "\n" for line in text.splitlines()))
    assert summary.unparsable_lines == summary.foreign_lines == 0
    assert len(gemms) == len(plain_gemms) == 39
    assert [(_fields(g), g.line, g.end_line) for g in gemms] == [(_fields(g), g.line, g.end_line) for g in plain_gemms]
    assert events == plain_events


_CI_PREFIXES = {
    "github-actions": lambda i: f"2024-01-15T10:23:{45 + i // 100 % 10}.{i:07d}Z ",
    "kubernetes-cri": lambda i: f"2024-01-15T10:23:45.{i:09d}Z stdout F ",
    "docker-compose": lambda i: "trainer-1  | ",
}


@pytest.mark.parametrize("ci", sorted(_CI_PREFIXES))
def test_a_ci_runners_time_stamp_on_every_cublas_line(tmp_path: Path, ci: str) -> None:
    """A CI runner's raw log stamps every line with its own time: a cuBLAS record's lines differ in that prefix,
    and are still one record (they are not another process's, as another launcher tag's are)."""
    text = CLASSIC.read_text()
    _, plain_gemms, plain_events = _parse(tmp_path, text, "plain.log")
    prefix = _CI_PREFIXES[ci]
    stamped = "".join(prefix(i) + line + "\n" for i, line in enumerate(text.splitlines()))
    summary, gemms, events = _parse(tmp_path, stamped)
    assert summary.unparsable_lines == summary.foreign_lines == 0
    assert [(_fields(g), g.line, g.end_line) for g in gemms] == [(_fields(g), g.line, g.end_line) for g in plain_gemms]
    assert len(events) == len(plain_events)
    # a line of another rank's record inside one, both under the runner's stamps, is still told apart
    record = _sgemm()
    mixed = [f"2024-01-15T10:23:45.{i:07d}Z [rank0]: {line}" for i, line in enumerate(record)]
    mixed.insert(3, "2024-01-15T10:23:45.9999999Z [rank1]: i!  m: type=int; val=7")
    summary, gemms, _ = _parse(tmp_path, "\n".join(mixed) + "\n", "mixed.log")
    assert [g.m for g in gemms] == [64] and summary.unparsable_lines == 1


def test_a_cublas_gemm_whose_transpose_lines_are_not_there_has_unknown_transposes(tmp_path: Path) -> None:
    """cuBLAS logs a GEMM's transposes always: where their lines are missing (cuBLAS 10.2's header-only record,
    an excerpt a person cut), the transposes are `?`, never the N that an absent transpose means elsewhere."""
    header = "I! cuBLAS (v10.2) function cublasStatus_t cublasSgemm_v2(cublasContext*, cublasOperation_t) called"
    (gemm,) = blaslog.parse_text(header + "\n").gemms
    assert (gemm.transa, gemm.transb, gemm.trans, gemm.m) == ("?", "?", "??", None)
    record = [line for line in _sgemm() if "transa" not in line]
    (cut,) = blaslog.parse_text("\n".join(record) + "\n").gemms
    assert (cut.transa, cut.transb, cut.m) == ("?", "N", 64)


_WRAPPED_LT = """\
[2025-11-03 19:02:38][cublasLt][557785][Trace][cublasLtMatmul] A=0X736CB315E800 \\
Adesc=[type=R_16F rows=64 cols=1088 ld=64] B=0X736C9B644000 \\
Bdesc=[type=R_16F rows=1088 cols=128 ld=1088] C=0X0 Cdesc=[type=R_16F rows=64 cols=128 ld=64] \\
D=0X736CB30A4400 Ddesc=[type=R_16F rows=64 cols=128 ld=64] \\
computeDesc=[computeType=COMPUTE_32F scaleType=R_32F] algo=[algoId=66 tile=MATMUL_TILE_128x128] \\
workSpace=0X0 workSpaceSizeInBytes=0 beta=0 outOfPlace=1 stream=0X0
"""


def test_launcher_tag_on_a_wrapped_cublaslt_record(tmp_path: Path) -> None:
    _, plain, _ = _parse(tmp_path, _WRAPPED_LT, "plain.log")
    summary, gemms, events = _parse(tmp_path, "".join(f"[rank3]: {line}\n" for line in _WRAPPED_LT.splitlines()))
    assert len(plain) == 1 and (plain[0].m, plain[0].n, plain[0].k, plain[0].algo_id) == (64, 128, 1088, 66)
    assert [_fields(g) for g in gemms] == [_fields(g) for g in plain] and not events
    assert summary.record_lines == 6


def test_program_print_inside_a_wrapped_cublaslt_record(tmp_path: Path) -> None:
    """A print between the wrapped lines, even inside an open `[` group, is not joined into the record."""
    wrapped = "".join(
        line + " \n"
        for line in (  # a person wrapped it at spaces, leaving them at the line ends
            "[2025-11-03 19:02:38][cublasLt][557785][Trace][cublasLtMatmul] A=0X736CB315E800",
            "Adesc=[type=R_16F rows=64 cols=1088 ld=64] B=0X736C9B644000",
            "Bdesc=[type=R_16F rows=1088 cols=128 ld=1088] C=0X0 Cdesc=[type=R_16F rows=64 cols=128 ld=64]",
            "D=0X736CB30A4400 Ddesc=[type=R_16F rows=64 cols=128 ld=64]",
            "computeDesc=[computeType=COMPUTE_32F",
            "scaleType=R_32F] algo=[algoId=66",
            "tile=MATMUL_TILE_128x128]",
            "workSpace=0X0 workSpaceSizeInBytes=0 beta=0 outOfPlace=1 stream=0X0",
        )
    )
    _, plain, _ = _parse(tmp_path, _WRAPPED_LT, "plain.log")
    _, alone, _ = _parse(tmp_path, wrapped, "wrapped.log")
    printed = "".join(f"{line}\nstep 17 loss=4.21\n" for line in wrapped.splitlines())
    summary, gemms, events = _parse(tmp_path, printed)
    assert [_fields(g) for g in gemms] == [_fields(g) for g in alone] == [_fields(g) for g in plain] and not events
    assert (summary.foreign_lines, summary.record_lines, gemms[0].end_line) == (8, 8, 15)


# ---------------------------------------------------------------------------------------------------------------
# 3. Older and edited forms
# ---------------------------------------------------------------------------------------------------------------


def test_cublas_10_2_header_only_gemm_is_a_gemm_of_unknown_shape(tmp_path: Path) -> None:
    text = (
        "I! cuBLAS (v10.2) function cublasStatus_t cublasSgemm_v2(cublasContext*, cublasOperation_t, "
        "cublasOperation_t, int, int, int, const float*, const float*, int, const float*, int, const float*, "
        "float*, int) called\n2\N{MULTIPLICATION SIGN}2 CuArray{Float32, 2}:\n"
    )
    summary, gemms, events = _parse(tmp_path, text)
    assert not events and summary.foreign_lines == 1
    (gemm,) = gemms
    assert (gemm.function, gemm.m, gemm.n, gemm.k, gemm.a_type, gemm.version) == (
        "cublasSgemm_v2",
        None,
        None,
        None,
        "R_32F",
        "v10.2",
    )
    assert any("without argument lines" in p.message for p in summary.problems)


def test_gemm_ex_with_type_lines_only_is_a_gemm_with_types(tmp_path: Path) -> None:
    text = (
        "I! cuBLAS (v11.0) function cublasStatus_t cublasGemmEx(...) called:\n"
        "i!  Atype: type=cudaDataType_t; val=CUDA_R_32F(0)\n"
        "i!  Btype: type=cudaDataType_t; val=CUDA_R_32F(0)\n"
        "i!  Ctype: type=cudaDataType_t; val=CUDA_R_32F(0)\n"
        "i!  computeType: type=cublasComputeType_t; val=CUBLAS_COMPUTE_32F_FAST_16F(74)\n\n"
    )
    summary, gemms, events = _parse(tmp_path, text)
    assert not events and summary.foreign_lines == 1
    (gemm,) = gemms
    assert (gemm.m, gemm.n, gemm.k, gemm.a_type, gemm.d_type, gemm.compute_type) == (
        None,
        None,
        None,
        "R_32F",
        "R_32F",
        "COMPUTE_32F_FAST_16F",
    )
    assert any("shape unknown" in p.message for p in summary.problems)


@pytest.mark.parametrize(
    ("line", "level", "function", "text"),
    [
        (
            "[...][Error][...] Could not obtain green context information",
            "Error",
            "?",
            "Could not obtain green context information",
        ),
        (
            "CUBLASLT_LOG_LEVEL=4 ... [Error][cublasLtMatmulAlgoGetHeuristic] Could not obtain green context information",
            "Error",
            "cublasLtMatmulAlgoGetHeuristic",
            "Could not obtain green context information",
        ),
        (
            "[Info][cublasLtCreate] cuBLASLt v12.4 device #0: multiProcessorCount=92 maxSharedMemPerBlock=49152",
            "Info",
            "cublasLtCreate",
            "cuBLASLt v12.4 device #0: multiProcessorCount=92 maxSharedMemPerBlock=49152",
        ),
        (
            "[…][Api][cublasLtMatmulDescCreate] matmulDesc=0X7FFDB5ABD5E8 computeType=COMPUTE_32F scaleType=0",
            "Api",
            "cublasLtMatmulDescCreate",
            "",
        ),
    ],
)
def test_cublaslt_line_with_an_elided_prefix_is_a_record_of_its_level(
    tmp_path: Path, line: str, level: str, function: str, text: str
) -> None:
    summary, gemms, events = _parse(tmp_path, line + "\n")
    assert (summary.foreign_lines, summary.unparsable_lines, len(gemms)) == (0, 0, 0)
    (event,) = events
    assert (event.library, event.level, event.function, event.text) == ("cublasLt", level, function, text)
    assert event.thread is None and event.timestamp is None


def test_cublaslt_trace_with_an_elided_prefix_is_a_gemm(tmp_path: Path) -> None:
    line = _WRAPPED_LT.replace(" \\\n", " ").replace("[2025-11-03 19:02:38][cublasLt][557785]", "[...]")
    _, gemms, _ = _parse(tmp_path, line)
    (gemm,) = gemms
    assert (gemm.m, gemm.n, gemm.k, gemm.algo_id, gemm.thread) == (64, 128, 1088, 66, None)


def test_hipblaslt_bare_prefix_is_not_taken_for_cublaslt(tmp_path: Path) -> None:
    _, _, events = _parse(tmp_path, "[Info][initialize] Using HIPBLASLT_TENSILE_LIBPATH=...\n")
    assert not any(e.library == "cublasLt" for e in events)


def test_julia_logger_frames_read_as_cublas_markers(tmp_path: Path) -> None:
    record = _sgemm(m=1024, n=1024, k=1024)
    framed = ["CUDA.CUBLAS┌ Debug: " + record[0].removeprefix("I!")]
    framed += ["│ " + line.removeprefix("i!") for line in record[1:]]
    framed += ["└ @ CUDA.CUBLAS ~/.julia/packages/CUDA/fGE8R/lib/cublas/CUBLAS.jl:224"]
    summary, gemms, events = _parse(tmp_path, _text(framed))
    _, plain, _ = _parse(tmp_path, _text(record), "plain.log")
    assert not events and (summary.foreign_lines, summary.unparsable_lines) == (1, 0)
    assert [_fields(g) for g in gemms] == [_fields(g) for g in plain]


# ---------------------------------------------------------------------------------------------------------------
# 4. Records cut at the end of the input
# ---------------------------------------------------------------------------------------------------------------


def test_cut_cublaslt_line_keeps_its_prefix_and_whole_pairs(tmp_path: Path) -> None:
    line = _WRAPPED_LT.replace(" \\\n", " ").rstrip("\n")
    summary, gemms, events = _parse(tmp_path, line[: line.index("algo=") + 12])  # inside algo=[...]
    assert not gemms and summary.unparsable_lines == 0
    (event,) = events
    assert (event.event, event.function, event.level, event.thread, event.timestamp) == (
        "truncated",
        "cublasLtMatmul",
        "Trace",
        "557785",
        "2025-11-03 19:02:38",
    )
    fields = dict(event.fields)
    assert fields["A"] == "0X736CB315E800" and fields["computeDesc"] == "[computeType=COMPUTE_32F scaleType=R_32F]"
    assert "algo" not in fields


@pytest.mark.parametrize("keep", ["workSpaceSizeInBytes=0 beta=0 outOfPlace=1 ", "stream=0", "stream=0X"])
def test_wrapped_cublaslt_record_cut_before_its_end_is_truncated(tmp_path: Path, keep: str) -> None:
    text = _WRAPPED_LT.rstrip("\n")
    cut = text[: text.index(keep) + len(keep)]
    summary, gemms, events = _parse(tmp_path, cut)
    assert not gemms and [e.event for e in events] == ["truncated"]
    assert (events[0].line, events[0].end_line, events[0].thread) == (1, 6, "557785")
    assert "cut short" in summary.problems[-1].message


def test_cublaslt_record_ending_without_a_line_end_but_whole_is_complete(tmp_path: Path) -> None:
    _, gemms, events = _parse(tmp_path, _WRAPPED_LT.rstrip("\n"))
    assert len(gemms) == 1 and not events


def test_cublas_record_whose_last_value_is_cut_is_truncated_not_complete(tmp_path: Path) -> None:
    record = _gemm_ex()
    computetype = next(i for i, line in enumerate(record) if "computeType" in line)
    text = _text(record[:computetype]) + record[computetype][: record[computetype].index("val=") + 5]  # `val=C`
    _, gemms, events = _parse(tmp_path, text)
    assert not gemms
    (event,) = events
    fields = dict(event.fields)
    assert (event.event, event.function, event.line) == ("truncated", "cublasGemmEx", 1)
    assert fields["m"] == "64" and fields["Ctype"] == "CUDA_R_32F(0)" and "computeType" not in fields


def test_cublas_record_cut_in_its_process_line_keeps_thread_and_time(tmp_path: Path) -> None:
    record = _sgemm()
    process = next(i for i, line in enumerate(record) if line.startswith("i!Process="))
    text = _text(record[:process]) + record[process][: record[process].index("GPU=")]
    _, gemms, events = _parse(tmp_path, text)
    assert not gemms
    (event,) = events
    assert (event.event, event.thread, event.timestamp) == ("truncated", "139694885058368", "2026-06-06T16:20:31")


def test_cublas_record_ending_with_its_trailer_without_a_line_end_is_complete(tmp_path: Path) -> None:
    _, gemms, events = _parse(tmp_path, _text(_sgemm()).rstrip("\n"))
    assert len(gemms) == 1 and not events


# ---------------------------------------------------------------------------------------------------------------
# 5. check: within-run gaps
# ---------------------------------------------------------------------------------------------------------------


def test_check_reports_a_math_mode_change_between_calls_of_one_gemm(tmp_path: Path) -> None:
    _, gemms, _ = _parse(tmp_path, _text(_gemm_ex(), _gemm_ex(math="CUBLAS_TF32_TENSOR_OP_MATH")))
    (finding,) = check_run(gemms)
    assert finding.kind == "same_signature_different_math_mode" and finding.cls == "precision"
    assert dict(finding.fields)["MathMode"] == ("CUBLAS_DEFAULT_MATH", "CUBLAS_TF32_TENSOR_OP_MATH")
    assert "CUBLAS_TF32_TENSOR_OP_MATH" in finding.explanation


def test_check_on_calls_differing_in_algo_and_math_mode_does_not_crash(tmp_path: Path) -> None:
    text = _text(_gemm_ex(), _gemm_ex(algo="CUBLAS_GEMM_ALGO1(1)", math="CUBLAS_TF32_TENSOR_OP_MATH"))
    _, gemms, _ = _parse(tmp_path, text)
    (finding,) = check_run(gemms)
    fields = dict(finding.fields)
    assert fields["MathMode"] == ("CUBLAS_DEFAULT_MATH", "CUBLAS_TF32_TENSOR_OP_MATH")
    assert fields["algo"] == ("CUBLAS_GEMM_DEFAULT", "CUBLAS_GEMM_ALGO1")
    assert finding.cls == "precision" and finding.kind == "same_signature_different_algo"


def test_check_compares_sgemm_and_gemm_ex_of_one_shape(tmp_path: Path) -> None:
    _, gemms, _ = _parse(tmp_path, _text(_sgemm(), _gemm_ex()))
    assert gemms[0].signature() == gemms[1].signature()
    assert check_run(gemms) == []  # the same request spelled two ways: no finding
    _, gemms, _ = _parse(tmp_path, _text(_sgemm(), _gemm_ex(math="CUBLAS_TF32_TENSOR_OP_MATH")), "tf32.log")
    (finding,) = check_run(gemms)
    assert finding.kind == "same_signature_different_math_mode"
    assert "cublasGemmEx, cublasSgemm_v2" in finding.explanation


def test_check_keeps_different_precisions_apart(tmp_path: Path) -> None:
    half = _gemm_ex()
    half = [line.replace("CUDA_R_32F(0)", "CUDA_R_16F(2)") for line in half]
    _, gemms, _ = _parse(tmp_path, _text(_sgemm(), half))
    assert gemms[0].signature() != gemms[1].signature() and check_run(gemms) == []


# ---------------------------------------------------------------------------------------------------------------
# 6. Numbers are ASCII decimal
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("algoId=66", "algoId=٦٦"),
        ("rows=64 cols=1088", "rows=6_4 cols=1088"),
        ("rows=64 cols=1088", "rows=0x40 cols=1088"),
    ],
)
def test_cublaslt_number_not_ascii_decimal_is_a_located_error(tmp_path: Path, old: str, new: str) -> None:
    line = _WRAPPED_LT.replace(" \\\n", " ")
    summary, gemms, _ = _parse(tmp_path, line.replace(old, new, 1))
    assert not gemms and summary.unparsable_lines == 1
    (problem,) = [p for p in summary.problems if p.severity == "error"]
    value = new.split("=", 1)[1].split()[0]
    assert "is not a decimal integer" in problem.message and repr(value) in problem.message
    assert problem.text[problem.column - 1 :].startswith(value)


@pytest.mark.parametrize("value", ["١٠٢٤", "1_024", "0x400", "1024.0"])
def test_cublas_number_not_ascii_decimal_is_a_located_error(tmp_path: Path, value: str) -> None:
    record = [line.replace("val=64", f"val={value}") if line.startswith("i!  m:") else line for line in _sgemm()]
    summary, gemms, _ = _parse(tmp_path, _text(record))
    assert not gemms and summary.unparsable_lines == len(record)
    (problem,) = [p for p in summary.problems if p.severity == "error"]
    assert f"m={value!r} is not a decimal integer" in problem.message
    assert problem.text[problem.column - 1 :].startswith(value)


def test_to_int_takes_hex_only_where_asked() -> None:
    from blaslog.formats._base import RecordError, to_int

    assert to_int("0x10", "flags", hex=True) == 16 and to_int(" 12 ", "m") == 12 and to_int("-3", "x", low=None) == -3
    for bad in ("0x10", "٢١", "1_0", "+", "", "1e3"):
        with pytest.raises(RecordError):
            to_int(bad, "m")
