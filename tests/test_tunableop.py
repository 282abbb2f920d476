"""TunableOp results files and hipBLASLt tuning files as dialects; diff of two runs' files (validators first);
the cross-source check of a run's logs against its TunableOp files; the --emit-tunableop writer (round trip)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import blaslog
from blaslog import api
from blaslog.cli import cli
from blaslog.formats.tunableop import op_types, parse_solution
from blaslog.records import Event
from blaslog.tunableop import ordinal, render, validators

HERE = Path(__file__).resolve().parent.parent / "fixtures" / "tunableop"
TP2 = str(HERE / "tp2" / "*.csv")
TP1 = str(HERE / "tp1" / "tunableop_results0.csv")


def _gemms(path: Path) -> list[blaslog.GemmCall]:
    result = blaslog.parse(str(path))
    summary = result.files[0]
    assert summary.unparsable_lines == 0 and summary.foreign_lines == 0, [p.message for p in summary.problems]
    return list(result.gemms)


def test_public_readme_rows_bare_indices():
    """PyTorch 2.2's README example: bare solution numbers, ROCM_VERSION validator (verbatim lines)."""
    result = blaslog.parse(str(HERE / "pytorch-2.2-readme.csv"))
    events = [r for r in result.records if isinstance(r, Event)]
    assert next(dict(e.fields) for e in events) == {"PT_VERSION": "2.2.0"}
    first, second = result.gemms
    assert (first.function, first.transa, first.transb, first.m, first.n, first.k) == (
        "GemmTunableOp",
        "N",
        "T",
        25088,
        4096,
        64,
    )
    assert (first.a_type, first.compute_type, first.solution_index) == ("f32_r", "f32_r", 1219)
    assert dict(first.extra)["backend"] == "unknown" and dict(first.extra)["time_ms"] == "1.262"
    assert second.solution_index == 1216 and first.lda is None


def test_public_docs_rows_named_backends():
    first, second = _gemms(HERE / "pytorch-docs-named.csv")
    assert (dict(first.extra)["backend"], first.solution_index) == ("hipblaslt", 1219)
    assert (dict(second.extra)["backend"], second.solution_index) == ("rocblas", 1216)


def test_every_row_variant():
    rows = _gemms(HERE / "variants.csv")
    by_op = {(dict(r.extra)["op"], r.m, r.n): r for r in rows}
    strided = [r for r in rows if r.function == "GemmStridedBatchedTunableOp"]
    assert [(r.batch_count, r.lda, r.solution_index) for r in strided] == [(32, None, 3788), (32, 128, 96342)]
    tf32 = by_op[("GemmTunableOp_tf32_NN", 1024, 1024)]
    assert (tf32.a_type, tf32.compute_type, dict(tf32.extra)["solution"]) == (
        "f32_r",
        "xf32_r",
        "Gemm_Hipblaslt_NN_49257",
    )
    scaled = [r for r in rows if r.function == "ScaledGemmTunableOp"]
    assert [(r.a_type, r.c_type, r.scale_pointers, r.epilogue, r.solution_index) for r in scaled] == [
        ("f8_fnuz_r", "bf16_r", True, None, 6742),
        ("f8_r", "f8_r", True, "bias", None),
    ]
    bias = next(r for r in rows if r.function == "GemmAndBiasTunableOp")
    assert (bias.epilogue, bias.ldc, bias.solution_index) == ("bias", 768, 220580)
    negative = by_op[("GemmTunableOp_double_NN", 64, 64)]
    assert negative.solution_index == -12 and negative.a_type == "f64_r"
    complex_default = by_op[("GemmTunableOp_c10::complex<float>_NN", 32, 32)]
    assert complex_default.solution_index is None and dict(complex_default.extra)["backend"] == "default"
    logged = by_op[("GemmTunableOp_BFloat16_TN", 8192, 1)]
    assert logged.solution_index == 621284994 and dict(logged.extra)["blas_params"].startswith("- { function: matmul")


def test_untuned_file():
    rows = _gemms(HERE / "tunableop_untuned0.csv")
    assert [dict(r.extra).get("state") for r in rows] == ["untuned"] * 3
    assert all(r.solution_index is None for r in rows) and rows[2].epilogue == "bias"


def test_hipblaslt_tuning_file():
    result = blaslog.parse(str(HERE / "hipblaslt_tuning.txt"))
    assert [dict(r.fields) for r in result.records if isinstance(r, Event)] == [{"git_version": "d5f81531"}]
    first, second, legacy = result.gemms
    assert (first.m, first.n, first.k, first.a_type, first.compute_type, first.solution_index) == (
        1024,
        512,
        1024,
        "f16_r",
        "f32_r",
        56537,
    )
    assert dict(first.extra)["gcnArchName"] == "gfx942" and second.solution_index == 49257
    assert (legacy.m, legacy.solution_index, legacy.d_type, legacy.lda) == (1024, 56537, "f16_r", None)


def test_bench_stdout_tables_are_read_by_their_header():
    """hipblaslt-bench prints its result as a CSV table on stdout (a header, then the value row, `[0]:` between
    with --print_kernel_info): one tuning record read by the header's names (issue 35); a table without
    `hipblaslt-Gflops` in its header (rocblas-bench's) or a row alone without the arch and CU count is none."""
    header = (
        "transA,transB,grouped_gemm,batch_count,m,n,k,alpha,lda,stride_a,beta,ldb,stride_b,ldc,stride_c,ldd,"
        "stride_d,a_type,b_type,c_type,d_type,compute_type,hipblaslt-Gflops,us,soulution_index"
    )
    row = "T,N,0,1,1024,512,2048,1,2048,1048576,0,2048,524288,1024,524288,1024,524288,f16_r,f16_r,f16_r,f16_r,f32_r,"
    result = blaslog.parse_text(f"{header}\n[0]:\n{row}37575.2,28.5,56537\n")
    (table,) = result.gemms
    assert (table.m, table.n, table.k, table.trans, table.lda, table.compute_type, table.solution_index) == (
        1024,
        512,
        2048,
        "TN",
        2048,
        "f32_r",
        56537,
    )
    assert table.log_format == "hipblaslt-tuning" and result.files[0].record_lines == 3
    rocblas = "transA,transB,M,N,K,alpha,lda,ldb,beta,ldc,rocblas-Gflops,us\nN,N,1600,512,1024,-1,1600,1024,1,1600,6641.81,252.6\n"
    other = blaslog.parse_text(rocblas + row + "1,2,3\n")
    assert not other.gemms and other.files[0].foreign_lines == 3


def test_what_the_verbose_mode_logs_is_read_as_the_rows_of_a_results_file_are():
    """PYTORCH_TUNABLEOP_VERBOSE logs each result loaded or tuned as `OP(PARAMS) -> SOLUTION,TIME` and each
    validator as `Validator KEY=VALUE` (Tunable.cpp), after a launcher's tag too: the records are those of the
    same results file's rows."""
    rows = (
        "Validator,PT_VERSION,2.5.0\n"
        "GemmTunableOp_BFloat16_TN,tn_8192_2_1024,Gemm_Hipblaslt_TN_61169,0.0171694\n"
        "GemmAndBiasTunableOp_float_TN,tn_768_32_1024_ld_1024_1024_768,Gemm_Rocblas_220580,0.0103395\n"
    )
    logged = (
        "Validator PT_VERSION=2.5.0\n"
        "GemmTunableOp_BFloat16_TN(tn_8192_2_1024) -> Gemm_Hipblaslt_TN_61169,0.0171694\n"
        "GemmAndBiasTunableOp_float_TN(tn_768_32_1024_ld_1024_1024_768) -> Gemm_Rocblas_220580,0.0103395\n"
    )

    def fields(text: str) -> list[dict[str, object]]:
        result = blaslog.parse_text(text, name="x")
        assert result.files[0].record_lines == 3 and result.files[0].foreign_lines == 0
        return [{k: v for k, v in r.to_dict().items() if k not in ("line", "end_line")} for r in result.records]

    want = fields(rows)
    assert [r.get("solution_index") for r in want] == [None, 61169, 220580]
    assert fields(logged) == want
    tagged = blaslog.parse_text("".join(f"[rank0]: {line}\n" for line in logged.splitlines()), name="x")
    assert [g.solution_index for g in tagged.gemms] == [61169, 220580] and len(tagged.records) == 3
    # PyTorch's other lines about an op, and English that begins with `Validator`, are no records
    others = (
        "GemmTunableOp_BFloat16_TN(tn_8192_2_1024) already has a best kernel id=Gemm_Hipblaslt_TN_61169,0.0171694 "
        "selected, want to add a different best kernel Gemm_Rocblas_1,0.02, the new kernel id will be ignored.\n"
        "GemmTunableOp_BFloat16_TN(tn_8192_2_1024)\nValidator mode=strict enabled\nValidator: PT_VERSION mismatch\n"
        "[INFO]: Validator retries=3 (default)\n"
    )
    none = blaslog.parse_text(others)
    assert not none.records and none.files[0].foreign_lines == 5 and not none.files[0].problems
    # a logged result cut before its time (the input ended inside it) is kept as truncated, not as a whole row
    cut = blaslog.parse_text("GemmTunableOp_BFloat16_TN(tn_8192_2_1024) -> Gemm_Hipbl")
    assert not cut.gemms and [r.event for r in cut.records] == ["truncated"]


def test_hipblaslt_bench_solution_lines_belong_to_its_table():
    """After its table's row, hipblaslt-bench prints the solution found (testing_matmul.hpp: `--Solution index:`,
    `--Solution name:`, `--kernel name:`), the only place newer tables give the index: they are the table
    record's lines, a program's print between them too; a row alone is still a table without an index."""
    header = (
        "[0]:transA,transB,grouped_gemm,batch_count,m,n,k,alpha,lda,stride_a,beta,ldb,stride_b,ldc,stride_c,ldd,"
        "stride_d,a_type,b_type,c_type,d_type,compute_type,hipblaslt-Gflops,hipblaslt-GB/s,us"
    )
    row = "    N,T,0,1,3584,512,2048,1,3584,7340032,0,512,1048576,3584,1835008,3584,1835008,bf16_r,bf16_r,bf16_r,bf16_r,f32_r,1,2,3"
    infos = ["    --Solution index: 300119", "    --Solution name:  Cijk_A", "    --kernel name:    Cijk_K"]
    for lines, first, last in (
        ([header, row, *infos], 1, 5),
        ([header, row, "step 1 loss=2", infos[0], "step 2", infos[1], infos[2]], 1, 7),
        ([f"[rank0]: {line}" for line in (header, row, *infos)], 1, 5),
    ):
        result = blaslog.parse_text("\n".join(lines) + "\nafter\n")
        (gemm,) = result.gemms
        assert (gemm.m, gemm.solution_index, gemm.line, gemm.end_line) == (3584, 300119, first, last), lines
        assert dict(gemm.extra)["solution_name"] == "Cijk_A" and dict(gemm.extra)["kernel_name"] == "Cijk_K"
        assert result.files[0].foreign_lines == len(lines) + 1 - 5
        assert all("kept apart" in p.message for p in result.files[0].problems)  # the launcher's tag, said once
    (alone,) = blaslog.parse_text(f"{header}\n{row}\n").gemms
    assert alone.solution_index is None
    # each kind of line once (a second index line is not the table's), and a last line without its line end:
    # an index line may be cut (the table is truncated), a name is no field of the GEMM (kept, with a warning)
    again = blaslog.parse_text("\n".join([header, row, infos[0], infos[0].replace("300119", "6")]) + "\n")
    assert [g.solution_index for g in again.gemms] == [300119] and again.files[0].foreign_lines == 1
    for last, said in ((infos[0], "the last record is cut short"), (infos[2], "the input ends inside")):
        ended = blaslog.parse_text("\n".join([header, row, *infos[: infos.index(last) + 1]]))
        assert len(ended.gemms) == (last == infos[2]) and any(said in p.message for p in ended.files[0].problems)
    # an index the table holds and a line that says another: the record makes no sense, said so
    clash = blaslog.parse_text(
        header.replace(",us", ",us,soulution_index") + "\n" + row + ",7\n    --Solution index: 8\n", on_error="warn"
    )
    assert not clash.gemms and clash.files[0].unparsable_lines == 3


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Default", ("default", None)),
        ("Gemm_Rocblas_1216", ("rocblas", 1216)),
        ("1219", ("", 1219)),
        ("Gemm_Hipblaslt_TN_52011", ("hipblaslt", 52011)),
        ("Gemm_Hipblaslt_1219", ("hipblaslt", 1219)),
        ("Gemm_Rocblas_-12", ("rocblas", -12)),
        ("Mystery", ("", None)),
    ],
)
def test_solution_names(text, expected):
    assert parse_solution(text) == expected


def test_operator_names():
    assert op_types("ScaledGemmTunableOp_Float8_e4m3fnuz_Float8_e5m2fnuz_Half_TN") == (
        "ScaledGemmTunableOp",
        ["Float8_e4m3fnuz", "Float8_e5m2fnuz", "Half"],
        "TN",
    )
    assert op_types("GemmTunableOp_c10::complex<double>_NT") == ("GemmTunableOp", ["c10::complex<double>"], "NT")
    assert ordinal("logs/tunableop_results3.csv") == 3 and ordinal("a/b.csv") is None


def test_a_broken_row_is_reported_not_skipped():
    result = blaslog.parse_text("Validator,PT_VERSION,2.5.1\nGemmTunableOp_BFloat16_TN,garbage,Default\n")
    assert result.files[0].unparsable_lines == 1 and not result.gemms


def test_diff_sharded_vs_unsharded_files():
    report = api.diff([TP2], [TP1])
    titles = [f.title for f in report.findings]
    assert any("solution_index 57333 vs 58200" in t for t in titles)
    assert any("solution_index 20975 vs 20981" in t and "ranks 0-1" in t for t in titles)
    assert all(f.cls == "unknown" for f in report.findings)
    assert report.sections[0][0] == "TunableOp validators"
    assert {row["same"] for row in report.sections[0][1]} == {True}
    coverage = report.document["coverage"]
    assert all(row["unmatched"] == 0 for row in coverage)  # rows in hash order are paired all the same


def test_diff_two_versions_reports_validators_first():
    report = api.diff(
        [str(HERE / "v2.6" / "tunableop_results0.csv")], [str(HERE / "v2.5" / "tunableop_results0.csv")], tp=1
    )
    first = report.findings[0]
    assert first.kind == "tunableop_validator_diff"
    assert dict(first.fields)["PT_VERSION"] == ("2.6.0", "2.5.1")
    assert report.notes[0].startswith("TunableOp validators differ")
    assert any("solution_index 61230 vs 52011" in f.title for f in report.findings[1:])


def test_cross_source_check():
    logs = [str(HERE / "tp2-logs" / "rank0.log"), str(HERE / "tp2-logs" / "rank1.log")]
    report = api.check_tunableop(logs, [TP2])
    kinds = sorted(f.kind for f in report.findings)
    assert kinds == [
        "tunableop_never_ran",
        "tunableop_never_tuned",
        "tunableop_rank_solution_diff",
        "tunableop_solution_not_applied",
    ]
    by_kind = {f.kind: f for f in report.findings}
    assert "hipblaslt solution 60001" in by_kind["tunableop_solution_not_applied"].title
    assert by_kind["tunableop_solution_not_applied"].count == 2
    assert "16000x4096x4096" in by_kind["tunableop_never_tuned"].title
    assert "4096x4096x5504" in by_kind["tunableop_never_ran"].explanation
    rows = {row["rank"]: row for row in report.document["tunableop"]["TunableOp against the logs"]}
    assert (rows[0]["as_tuned"], rows[0]["not_as_tuned"], rows[0]["never_tuned"]) == (4, 2, 2)
    assert (rows[1]["as_tuned"], rows[1]["not_as_tuned"], rows[1]["rows_never_ran"]) == (4, 0, 0)


def test_cross_source_check_cli_equals_library():
    log = str(HERE / "tp2-logs" / "rank0.log")
    table = str(HERE / "tp2" / "tunableop_results0.csv")
    result = CliRunner().invoke(cli, ["check", log, "--tunableop", table, "-f", "json", "-q"])
    assert result.exit_code == 1, result.output
    from blaslog.reporters import get_reporter

    assert result.stdout == get_reporter("json").render(api.check_tunableop([log], [table]))
    assert {f["kind"] for f in json.loads(result.stdout)["findings"]} >= {"tunableop_solution_not_applied"}


def test_emit_pins_only_what_the_logs_show(tmp_path):
    out = tmp_path / "pinned.csv"
    result = CliRunner().invoke(cli, ["diff", TP2, TP1, "--emit-tunableop", str(out), "-q"])
    assert result.exit_code == 1, result.output
    text = out.read_text()
    assert text.splitlines()[0] == "Validator,PT_VERSION,2.5.1"
    # rank 1 ran Gemm_Hipblaslt_TN_58200 for the sharded up projection: that one can be pinned
    assert "GemmTunableOp_BFloat16_TN,tn_11008_4096_4096_ld_4096_4096_11008,Gemm_Hipblaslt_TN_58200" in text
    # Gemm_Rocblas_20981 ran only for the unsharded 4096x4096x4096: not pinned, listed
    assert "tn_4096_4096_2048" not in text
    assert "cannot pin from these logs" in result.stderr and "PYTORCH_TUNABLEOP_NUMERICAL_CHECK" in result.stderr
    # the file round-trips through blaslog's own reader
    again = blaslog.parse(str(out))
    assert again.files[0].unparsable_lines == 0
    assert [(g.m, g.n, g.k, g.solution_index) for g in again.gemms] == [(11008, 4096, 4096, 58200)]
    assert validators(str(out)) == validators(str(HERE / "tp2" / "tunableop_results0.csv"))


def test_emit_refuses_across_versions():
    _report, pinning = api.tunableop_pins(
        [str(HERE / "v2.6" / "tunableop_results0.csv")], [str(HERE / "v2.5" / "tunableop_results0.csv")], tp=1
    )
    assert not pinning.rows
    assert any("validators differ" in why for why in pinning.cannot.values())
    assert render(pinning).startswith("Validator,PT_VERSION,2.6.0\n")


def test_emit_from_blas_logs_pins_a_logged_solution(tmp_path):
    """From rocBLAS logs alone: the unsharded solution ran for the sharded signature in another sharded call."""
    trace = (
        "rocblas_gemm_ex,T,N,{m},4096,{k},1,0x7f2c1e600000,bf16_r,{k},0x7f2c1e800000,bf16_r,{k},0,"
        "0x7f2c1ea00000,bf16_r,{m},0x7f2c1ea00000,bf16_r,{m},f32_r,1,{sol},none,atomics_allowed\n"
    )
    (tmp_path / "tp2").mkdir()
    (tmp_path / "tp2" / "rank0.log").write_text(
        trace.format(m=2048, k=4096, sol=11) + trace.format(m=2048, k=4096, sol=7)
    )
    (tmp_path / "tp1.log").write_text(trace.format(m=4096, k=4096, sol=7) + trace.format(m=4096, k=4096, sol=7))
    _report, pinning = api.tunableop_pins([str(tmp_path / "tp2" / "rank0.log")], [str(tmp_path / "tp1.log")], tp=2)
    assert next(iter(pinning.rows.values()))[0] == "Gemm_Rocblas_7"
    assert next(iter(pinning.rows)) == ("GemmTunableOp_BFloat16_TN", "tn_2048_4096_4096_ld_4096_4096_2048")
    assert any("Validator" in note for note in pinning.notes)
    written = tmp_path / "out.csv"
    written.write_text(render(pinning))
    assert [g.solution_index for g in blaslog.parse(str(written)).gemms] == [7]


def test_check_accounts_for_the_tunableop_files_and_never_uses_a_cut_row(tmp_path):
    """The TunableOp files of `check --tunableop` are inputs: on the accounting, in the JSON summary, an unparsable
    row an `input` finding; a row cut at the end of the file (no time after its solution) is no tuned solution."""
    table = tmp_path / "tunableop_results1.csv"
    text = (HERE / "tp2" / "tunableop_results1.csv").read_text()
    table.write_text(
        text + "GemmTunableOp_BFloat16_TN,tn_BROKEN_4096,Gemm_Rocblas_1,0.1\n"
        "GemmTunableOp_BFloat16_TN,tn_4096_4096_4096_ld_4096_4096_4096,Gemm_Rocb"
    )
    log = str(HERE / "tp2-logs" / "rank1.log")
    result = CliRunner().invoke(cli, ["check", log, "--tunableop", str(table), "-f", "json"])
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert str(table) in [f["path"] for f in doc["summary"]["files"]]
    assert any(f["kind"] == "unparsable_input" and f["location"]["file"] == str(table) for f in doc["findings"])
    used = json.dumps({key: value for key, value in doc.items() if key != "summary"})
    assert 'Gemm_Rocb"' not in used and f"{table}: 11 lines" in result.stderr


def _validators_read_whole(path: str) -> dict[str, str]:
    """What validators() gave when it read the whole file record by record (its reference)."""
    from blaslog.parse import iter_file
    from blaslog.records import Event
    from blaslog.tunableop import TUNED_FORMATS

    out: dict[str, str] = {}
    for record in iter_file(path, log_format=list(TUNED_FORMATS), on_error="skip", events=True):
        if isinstance(record, Event) and record.function in ("Validator", "tuning"):
            for key, value in record.fields:
                out.setdefault(key, value)
    return out


def test_validators_read_only_their_lines_as_a_whole_reading_gives_them(tmp_path):
    """validators() parses only the lines that begin as Validator and `Git Version` lines do, and finds what a
    reading of the whole file finds: in every bundled TunableOp and tuning file, and in a log that holds them
    among other dialects' lines, program prints and CRLF ends, gzip-compressed."""
    import gzip

    root = Path(__file__).resolve().parents[1] / "fixtures"
    files = sorted(
        [
            *root.glob("tunableop/**/*.csv"),
            root / "tunableop" / "hipblaslt_tuning.txt",
            *root.glob("real/tunableop_*.log"),
        ]
    )
    assert len(files) >= 8
    for path in files:
        assert validators(str(path)) == _validators_read_whole(str(path)), path
    mixed = "".join(
        f"step {n}: loss 2.5\n" + path.read_text(encoding="utf-8", errors="replace") for n, path in enumerate(files)
    )
    mixed += (root / "real").joinpath(sorted(p.name for p in (root / "real").glob("cublaslt_*.log"))[0]).read_text()
    log = tmp_path / "mixed.log.gz"
    log.write_bytes(gzip.compress(mixed.replace("\n", "\r\n").encode()))
    found = validators(str(log))
    assert found and found == _validators_read_whole(str(log))
    assert "PT_VERSION" in found and "git_version" in found
