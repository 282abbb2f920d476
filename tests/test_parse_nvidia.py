"""cuBLASLt and cuBLAS logs: every bundled file parses, counts match the fixtures' README and MANIFEST."""

from __future__ import annotations

import gzip
import json
from collections import Counter

import pytest

import blaslog
from blaslog import Event, GemmCall
from tests.conftest import GENERATED, NVIDIA, SEED

MANIFEST = json.loads((GENERATED / "MANIFEST.json").read_text())["files"]
LT_FILES = [name for name in MANIFEST if name.startswith("lt_")]


@pytest.mark.parametrize("name", LT_FILES)
def test_generated_cublaslt_counts_match_manifest(name, parsed):
    """Lines, [Api]/[Info]/[Trace] counts and Trace lines per thread as the manifest recounted them."""
    counts = MANIFEST[name]["counts"]
    result = parsed(GENERATED / name)
    summary = result.files[0]
    assert summary.lines == counts["lines"]
    assert summary.unparsable_lines == 0
    assert summary.balanced()
    levels = Counter(r.level for r in result.records if r.library == "cublasLt")
    assert levels["Api"] == counts["cublasLt[Api]"]
    assert levels["Info"] == counts["cublasLt[Info]"]
    gemms = result.gemms
    assert len(gemms) == counts["cublasLt[Trace]"]
    per_thread = Counter(g.thread for g in gemms)
    assert dict(per_thread) == counts["cublasLt Trace per thread id"]


def test_truncated_last_line_is_a_truncated_record_not_an_error(parsed):
    result = parsed(GENERATED / "lt_fp32_tp4/blaslt_321677.log")
    last = result.records[-1]
    assert isinstance(last, Event) and last.event == "truncated" and last.line == 1625
    warnings = [p for p in result.files[0].problems if p.severity == "warning"]
    assert warnings and "cut short" in warnings[0].message
    assert result.files[0].unparsable_lines == 0


def test_stdout_log_counts_program_lines_as_foreign_and_reads_interleaved_cublas(parsed):
    result = parsed(GENERATED / "lt_fp32_unsharded.stdout.log")
    summary = result.files[0]
    assert summary.foreign_lines == 4
    assert summary.formats == {"cublaslt": 1630, "cublas": 2}
    creates = [r for r in result.records if r.library == "cublas"]
    assert [r.function for r in creates] == ["cublasCreate_v2", "cublasCreate_v2"]
    assert summary.record_lines == 1630 + 10


def test_crlf_and_gzip_parse_alike(parsed):
    crlf = parsed(GENERATED / "lt_fp16_tp4_rank0.log")
    gz = parsed(GENERATED / "lt_fp16_unsharded.log.gz")
    assert b"\r\n" in (GENERATED / "lt_fp16_tp4_rank0.log").read_bytes()[:500]
    with gzip.open(GENERATED / "lt_fp16_unsharded.log.gz") as handle:
        assert handle.read(2) == b"[2"
    for result in (crlf, gz):
        assert len(result.gemms) == 78
        assert all(not str(g.extra).count("\r") for g in result.gemms)
        assert result.gemms[0].compute_type == "COMPUTE_32F"


def test_nvidia_lib_level5_file():
    """The real 12.9.3 log: 100 Api, 6 Error lines, 5 thread ids, no GEMM launch."""
    result = blaslog.parse(str(NVIDIA / "cublaslt_12.9.3_level5_api_error_nogpu.log"))
    assert result.files[0].lines == 106 and result.files[0].unparsable_lines == 0
    levels = Counter(r.level for r in result.records)
    assert levels == {"Api": 100, "Error": 6}
    assert {r.thread for r in result.records} == {"9612", "9614", "9616", "9617", "9618"}
    functions = Counter(r.function for r in result.records if r.level == "Api")
    assert functions["cublasLtGetStatusName"] == 47
    assert functions["cublasLtMatmulAlgoConfigGetAttribute"] == 18
    assert not result.gemms
    heuristic = next(r for r in result.records if r.function == "cublasLtMatmulAlgoGetHeuristic")
    fields = dict(heuristic.fields)
    assert fields["Adesc.batchCount"] == "4" and fields["Adesc.stridedBatchOffset"] == "8192"
    assert fields["Bdesc.order"] == "ORDER_ROW"
    assert fields["computeDesc.epilogue"] == "EPILOGUE_BIAS"
    assert fields["computeDesc.biasPointer"] == "0x7f0000001000"
    error = next(r for r in result.records if r.level == "Error")
    assert error.event == "error" and error.text.startswith("Failed to initialize CUDA")


@pytest.mark.parametrize(
    "name,lines,records",
    [
        ("cublaslt_13.10.0_level5_api_error_nogpu.log", 106, 106),
        ("cublas_12.9.3_loginfo_nogpu.log", 23, 4),
        ("cublas_13.10.0_loginfo_nogpu.log", 23, 4),
        ("cublaslt_13.10.0_tid_field_two_threads.log", 2, 2),
        ("cublaslt_12.9.3_mask16_then_mask1.log", 3, 3),
    ],
)
def test_nvidia_lib_files(name, lines, records):
    result = blaslog.parse(str(NVIDIA / name))
    summary = result.files[0]
    assert (summary.lines, len(result.records), summary.unparsable_lines) == (lines, records, 0)
    assert summary.balanced()


def test_cublas_loginfo_records_keep_trailers():
    result = blaslog.parse(str(NVIDIA / "cublas_12.9.3_loginfo_nogpu.log"))
    assert [r.function for r in result.records] == [
        "cublasGetProperty",
        "cublasCreate_v2",
        "cublasGetVersion_v2",
        "cublasGetVersion_v2",
    ]
    first = dict(result.records[0].fields)
    assert first["version"] == "v12.9.3"
    assert first["type"] == "0"
    assert first["compiled_with"].startswith("GNU GCC/G++ / 8.5.0")
    assert result.records[0].thread == "140068041845632"
    assert result.records[0].timestamp == "2026-11-29T14:49:45"


def test_two_threads_are_told_apart():
    result = blaslog.parse(str(NVIDIA / "cublaslt_13.10.0_tid_field_two_threads.log"))
    assert [r.thread for r in result.records] == ["11546", "11547"]


def test_classic_cublas_gemms(parsed):
    result = parsed(GENERATED / "cublas_classic_fp16.log")
    summary = result.files[0]
    assert (summary.lines, summary.gemm_records, summary.other_records) == (955, 39, 2)
    functions = Counter(g.function for g in result.gemms)
    assert functions == {"cublasGemmEx": 27, "cublasGemmStridedBatchedEx": 12}
    first = result.gemms[0]
    assert (first.transa, first.transb, first.m, first.n, first.k) == ("T", "N", 3072, 2048, 1024)
    assert (first.a_type, first.compute_type, first.requested_algo) == (
        "R_16F",
        "COMPUTE_32F",
        "CUBLAS_GEMM_DEFAULT_TENSOR_OP",
    )
    batched = next(g for g in result.gemms if g.batch_count > 1)
    assert batched.batch_count == 32 and batched.stride_a == 65536


@pytest.mark.parametrize(
    "name,mnk,tid",
    [
        ("sharded", (64, 1024, 8), "321674"),
        ("unsharded", (64, 1024, 32), "321377"),
        ("unsharded_ffn256", (64, 1024, 32), "317853"),
    ],
)
@pytest.mark.parametrize("joined", [False, True])
def test_seed_records_wrapped_and_joined(name, mnk, tid, joined):
    path = SEED / (f"{name}_joined.log" if joined else f"{name}.log")
    result = blaslog.parse(str(path))
    assert len(result.gemms) == 1 and len(result.records) == 1
    gemm = result.gemms[0]
    assert (gemm.m, gemm.n, gemm.k) == mnk
    assert gemm.thread == tid
    assert gemm.compute_type == "COMPUTE_32F_FAST_TF32"
    assert {gemm.a_type, gemm.b_type, gemm.c_type, gemm.d_type} == {"R_32F"}
    assert (gemm.beta, gemm.out_of_place, gemm.stream, gemm.workspace_size) == ("0", False, "0X0", 4194304)
    assert result.files[0].unparsable_lines == 0 and result.files[0].balanced()
    assert gemm.end_line == result.files[0].lines
    if name == "sharded":
        assert (gemm.algo_id, gemm.tile, gemm.stages, gemm.cta_swizzling) == (0, "MATMUL_TILE_128x32", None, 1)
    else:
        assert (gemm.algo_id, gemm.tile, gemm.stages) == (21, "MATMUL_TILE_64x64", "MATMUL_STAGES_16x6")


def test_glued_workspace_pointer_splits_into_two_keys():
    gemm = blaslog.parse(str(SEED / "unsharded_joined.log")).gemms[0]
    assert dict(gemm.pointers)["workSpace"] == "0X153056000000"
    assert gemm.workspace_size == 4194304


def test_unknown_keys_are_kept_and_internal_function_names_accepted():
    line = (
        "[2023-04-07 10:00:00][cublasLt][702814][Trace][cublasLtSSSMatmul] A=0X7F Adesc=[type=R_32F rows=8 "
        "cols=4 ld=8 planeOffsetBytes=0] B=0X7E Bdesc=[type=R_32F rows=8 cols=2 ld=8] C=0X0 Cdesc=[type=R_32F "
        "rows=4 cols=2 ld=4] D=0X7D Ddesc=[type=R_32F rows=4 cols=2 ld=4] computeDesc=[computeType=COMPUTE_32F "
        "scaleType=R_32F transa=OP_T smCountTarget=108 aScaleMode=VEC32_UE8M0] algo=[algoId=66 "
        "tile=MATMUL_TILE_128x128 stages=MATMUL_STAGES_128xAUTO customOption=3 clusterShape=CLUSTER_SHAPE_1x1x1 "
        "newAlgoKey=7] workSpace=0X0 workSpaceSizeInBytes=0 beta=? outOfPlace=1 stream=0X0 futureKey=abc"
    )
    gemm = blaslog.parse_text(line).gemms[0]
    assert gemm.function == "cublasLtSSSMatmul"
    assert (gemm.m, gemm.n, gemm.k) == (4, 2, 8)
    assert gemm.sm_count_target == 108 and gemm.custom_option == 3
    assert gemm.cluster_shape == "CLUSTER_SHAPE_1x1x1" and gemm.beta == "?"
    extra = dict(gemm.extra)
    assert extra == {
        "Adesc.planeOffsetBytes": "0",
        "computeDesc.aScaleMode": "VEC32_UE8M0",
        "algo.newAlgoKey": "7",
        "futureKey": "abc",
    }


def test_levels_and_missing_timestamp():
    text = (
        "[cublasLt][702814][Error][cublasLtMatmul] Failed to query heuristics.\n"
        "[2024-05-22 07:22:32][cublasLt][65020][Hints][cublasLtMatmul] try a bigger workspace\n"
        "[2024-05-22 07:22:32][cublasLt][65020][Hint][cublasLtMatmul] x=1\n"
        "[2024-05-22 07:22:32][cublasLt][65020][Debug][internalThing] whatever=[a=1 b=2]\n"
    )
    result = blaslog.parse_text(text)
    assert [r.event for r in result.records] == ["error", "hint", "hint", "debug"]
    assert result.records[0].timestamp is None and result.records[0].thread == "702814"
    assert dict(result.records[3].fields) == {"whatever.a": "1", "whatever.b": "2"}


def test_reduction_scheme_mask_with_spaces():
    line = (
        "[2024-01-01 00:00:00][cublasLt][1][Trace][cublasLtMatmul] A=0X1 Adesc=[type=R_16F rows=4 cols=4 ld=4] "
        "B=0X2 Bdesc=[type=R_16F rows=4 cols=4 ld=4] C=0X3 Cdesc=[type=R_16F rows=4 cols=4 ld=4] D=0X3 "
        "Ddesc=[type=R_16F rows=4 cols=4 ld=4] computeDesc=[computeType=COMPUTE_32F scaleType=R_32F] "
        "algo=[algoId=0 tile=MATMUL_TILE_128x64 reductionScheme=REDUCTION_SCHEME_INPLACE | "
        "REDUCTION_SCHEME_COMPUTE_TYPE numSplitsK=14] workSpace=0X0 workSpaceSizeInBytes=0 beta=0 outOfPlace=0 "
        "stream=0X0"
    )
    gemm = blaslog.parse_text(line).gemms[0]
    assert gemm.reduction_scheme == "REDUCTION_SCHEME_INPLACE | REDUCTION_SCHEME_COMPUTE_TYPE"
    assert gemm.num_splits_k == 14


def test_backslash_continuation_and_comment_prefix():
    text = (
        "[2024-01-01 00:00:00][cublasLt][1][Trace][cublasLtMatmul] A=0X1 \\\n"
        "Adesc=[type=R_16F rows=4 cols=8 ld=4] B=0X2 Bdesc=[type=R_16F rows=8 cols=2 ld=8] \\\n"
        "# C=0X3 Cdesc=[type=R_16F rows=4 cols=2 ld=4] D=0X3 Ddesc=[type=R_16F rows=4 cols=2 ld=4]\n"
        "# computeDesc=[computeType=COMPUTE_32F scaleType=R_32F] algo=[algoId=1] workSpace=0X0 stream=0X0\n"
        "program output here\n"
    )
    result = blaslog.parse_text(text)
    assert len(result.gemms) == 1 and result.gemms[0].dims() == (4, 2, 8, 1)
    assert result.files[0].record_lines == 4 and result.files[0].foreign_lines == 1


def test_text_before_the_prefix_is_reported_and_the_record_kept():
    result = blaslog.parse_text("loss=1.0 [2024-01-01 00:00:00][cublasLt][5][Api][cublasLtCreate] lightHandle=0X1\n")
    assert len(result.records) == 1 and result.records[0].function == "cublasLtCreate"
    assert "other text before" in result.files[0].problems[0].message


def test_stdin(monkeypatch):
    import io
    import sys

    data = (SEED / "sharded_joined.log").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(data))))
    result = blaslog.parse("-")
    assert result.gemms[0].k == 8 and result.files[0].path == "-"


ALL_LOGS = (
    sorted(p for p in (GENERATED.glob("**/*.log*")) if p.is_file())
    + sorted(SEED.glob("*.log"))
    + sorted(NVIDIA.glob("*.log"))
    + [GENERATED / "rocblas_fp16_profile.yaml"]
)


@pytest.mark.parametrize("path", ALL_LOGS, ids=lambda p: p.name)
def test_shape_cache_gives_the_records_a_fresh_parse_gives(path):
    """Every record rebuilt from a cached shape equals the record built from its own text, location and
    volatile fields (pointers, threads, times) included."""
    from blaslog.formats import FORMAT_CLASSES

    by_name = {cls.name: cls() for cls in FORMAT_CLASSES}
    result = blaslog.parse(str(path))
    lines = path.read_bytes()
    if path.suffix == ".gz":
        lines = gzip.decompress(lines)
    lines = lines.decode().replace("\r\n", "\n").split("\n")
    checked = 0
    for record in result.records:
        if record.event == "truncated" if isinstance(record, Event) else False:
            continue
        fmt = by_name[record.log_format]
        text = fmt.clean(lines[record.line - 1 : record.end_line])
        fresh, _ = fmt.record(fmt.parser().parse(text), record.file, record.line, record.end_line)
        assert record == fresh
        for name in ("thread", "timestamp", "file", "line") + (
            ("a_ptr", "b_ptr", "d_ptr", "pointers", "stream") if isinstance(record, GemmCall) else ("fields",)
        ):
            assert getattr(record, name) == getattr(fresh, name), name
        checked += 1
    assert checked == len(result.records) - sum(1 for r in result.records if getattr(r, "event", "") == "truncated")


def test_the_cache_is_used():
    from blaslog._fast.cache import ShapeCache
    from blaslog.formats.cublaslt import CublasLt

    fmt, cache = CublasLt(), ShapeCache(enabled=True)
    lines = (GENERATED / "lt_fp32_tp4/blaslt_321674.log").read_text().splitlines()
    for number, line in enumerate(lines, 1):
        cache.parse(fmt, line, "f", number, number)
    assert cache.stats.grammar_runs < 100 < len(lines) == cache.stats.hits + cache.stats.misses


def test_to_frame_dtypes():
    result = blaslog.parse(str(GENERATED / "lt_fp32_tp4/blaslt_321674.log"))
    frame = blaslog.to_frame(result)
    assert len(frame) == 78
    assert str(frame["m"].dtype) == "Int64"
    assert str(frame["algo_id"].dtype) == "Int64"
    assert str(frame["tile"].dtype) == "category"
    assert frame["num_splits_k"].isna().sum() == 74
    events = blaslog.to_frame(result, kind="event")
    assert len(events) == 1552


@pytest.mark.parametrize(
    "path", [p for p in ALL_LOGS if p.name.startswith(("lt_", "blaslt_", "hipblaslt", "rocblas"))], ids=lambda p: p.name
)
def test_gemm_shapes_are_cacheable(path):
    """Every GEMM shape of the bundled training logs is served from the shape cache (a build step that
    computes with a volatile value would silently send every such line through the grammar)."""
    from blaslog._fast.cache import ShapeCache
    from blaslog.formats import FORMAT_CLASSES
    from blaslog.formats._base import UNCACHEABLE

    result = blaslog.parse(str(path))
    by_name = {cls.name: cls() for cls in FORMAT_CLASSES}
    cache = ShapeCache(enabled=True)
    text = path.read_bytes()
    if path.suffix == ".gz":
        text = gzip.decompress(text)
    lines = text.decode().replace("\r\n", "\n").split("\n")
    for record in result.gemms:
        fmt = by_name[record.log_format]
        line = lines[record.line - 1]
        assert cache.parse(fmt, line, "x", 1, 1)[2] is not UNCACHEABLE, line[:200]
