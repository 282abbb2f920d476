"""oneMKL verbose lines (blaslog/formats/mkl.py): GEMMs, the banner, `record --libs mkl`, the shape cache, and the
real excerpts of fixtures/real/mkl_* (plain and changed the ways logs are)."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest

import blaslog
from blaslog import parse_text
from blaslog.formats import Sniffer
from blaslog.inputs import text_reader
from blaslog.parse._lines import _FileParser
from blaslog.record import logging_environment
from blaslog.records import Event, GemmCall

BANNER = (
    "MKL_VERBOSE Intel(R) MKL 2020.0 Update 2 Product build 20200624 for Intel(R) 64 architecture Intel(R) Advanced "
    "Vector Extensions 2 (Intel(R) AVX2) enabled processors, Lnx 4.00GHz ilp64 gnu_thread"
)
SGEMM = (
    "MKL_VERBOSE SGEMM(T,N,75,75,64,0x7ffca9c475d8,0xd36f60,64,0xd32450,64,0x7ffca9c475e0,0xd3ba70,75) {time} "
    "CNR:OFF Dyn:1 FastMM:1 TID:0  NThr:1"
)


def test_a_gemm_line_and_the_banner():
    result = parse_text(BANNER + "\n" + SGEMM.format(time="969.47us") + "\n")
    banner, gemm = result.records
    assert banner.kind == "event" and banner.event == "info"
    assert (gemm.function, gemm.trans, gemm.m, gemm.n, gemm.k, gemm.lda, gemm.ldc) == (
        "SGEMM",
        "TN",
        75,
        75,
        64,
        64,
        75,
    )
    assert gemm.a_type == "float" and gemm.timestamp == "969.47us" and dict(gemm.extra)["NThr"] == "1"
    assert result.files[0].balanced() and result.files[0].unparsable_lines == 0


def test_record_turns_mkl_verbose_on(tmp_path):
    env = logging_environment(tmp_path, ["mkl"], 2)
    assert env["MKL_VERBOSE"] == "1" and env["MKL_VERBOSE_OUTPUT_FILE"].endswith("process.mkl.log")


def test_varying_times_hit_the_shape_cache():
    times = ("us", "ms", "s")
    text = "".join(SGEMM.format(time=f"{i % 997}.{i % 89:02d}{times[i % 3]}") + "\n" for i in range(10_000))
    parser = _FileParser(text_reader(text, "mkl.log"), Sniffer(), "warn", events=True)
    records = list(parser.records())
    stats = parser.cache.stats
    assert len(records) == 10_000
    assert stats.grammar_runs <= 3 and stats.hits >= 9_990, stats.to_dict()


# ---------------------------------------------------------------------------------------------------------------
# Real excerpts (fixtures/real/mkl_*, sources in fixtures/real/SOURCES.md): what the corpus test does not compare
# (thread, thread count, time, the non-GEMM calls' names), and the lines real logs hold that the docs do not show.
# ---------------------------------------------------------------------------------------------------------------

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"


def _real(name: str) -> tuple[Any, list[GemmCall], list[Event]]:
    result = blaslog.parse(str(REAL / name))
    return (
        result.files[0],
        [r for r in result.records if isinstance(r, GemmCall)],
        [r for r in result.records if isinstance(r, Event)],
    )


def test_real_cpu_gemm_keeps_thread_count_and_time():
    summary, gemms, events = _real("mkl_2020.0_onednn-issue-789-prints.log")
    assert [(g.function, g.trans, g.m, g.n, g.k, g.lda, g.ldb, g.ldc, g.a_type) for g in gemms] == [
        ("SGEMM", "TN", 75, 75, 64, 64, 64, 75, "float"),
        ("SGEMM", "TN", 37, 37, 64, 64, 64, 37, "float"),
    ]
    assert [(g.thread, dict(g.extra)["NThr"], g.timestamp, g.line) for g in gemms] == [
        ("0", "1", "969.47us", 3),
        ("0", "1", "11.37us", 6),
    ]
    assert [e.event for e in events] == ["info"] and "MKL 2020.0 Update 2" in events[0].text
    assert summary.foreign_lines == 6 and summary.problems == []


def test_real_time_in_seconds_and_version_prints_around_it():
    summary, gemms, _ = _real("mkl_2019.0_lab4-report-dgemm-srun-version-prints.log")
    (gemm,) = gemms
    assert (gemm.function, gemm.m, gemm.n, gemm.k, gemm.a_type, gemm.timestamp) == (
        "DGEMM",
        4000,
        4000,
        4000,
        "double",
        "2.25s",
    )
    assert dict(gemm.extra)["NThr"] == "8" and summary.unparsable_lines == 0


def test_real_dpcpp_gpu_gemm():
    """oneMKL's DPC++ interface on a GPU: queue and layout first, scalars by value, the device at the end."""
    summary, gemms, events = _real("mkl_2022.0_mkl-verbose-toolkit-issue-3-gpu-dpcpp.log")
    (gemm,) = gemms
    assert (gemm.function, gemm.trans, gemm.m, gemm.n, gemm.k, gemm.lda, gemm.ldb, gemm.ldc) == (
        "oneapi::mkl::blas::dgemm",
        "NN",
        2400,
        600,
        1200,
        2400,
        1200,
        2400,
    )
    assert (gemm.a_type, gemm.compute_type, gemm.alpha, gemm.beta, gemm.a_ptr) == (
        "double",
        "double",
        "1",
        "0",
        "0x7fffe44a7710",
    )
    assert gemm.thread is None and gemm.timestamp == "0.00s" and dict(gemm.extra)["device"] == "GPU0"
    assert [(e.event, e.text.split()[0]) for e in events] == [
        ("info", "oneMKL"),
        ("info", "Detected"),
        ("info", "Detected"),
    ]
    assert summary.problems == []


def test_real_markdown_bold_time_and_cut_batch_arguments():
    """A poster bolded the times (`**190.00us**`); MKL cut SGEMM_BATCH's arguments itself (no `)`)."""
    summary, gemms, events = _real("mkl_unknown_turbotransformers-issue-143-bold-batch.log")
    assert [(g.trans, g.m, g.n, g.k, g.timestamp, g.line) for g in gemms] == [
        ("TN", 768, 8, 768, "190.00us", 1),
        ("TN", 768, 8, 768, "149.12us", 2),
        ("TN", 768, 8, 768, "93.84us", 5),
    ]
    assert [(e.event, e.function, e.timestamp, dict(e.fields)["NThr"]) for e in events] == [
        ("call", "SGEMM_BATCH", "22.83us", "8"),
        ("call", "SGEMM_BATCH", "14.40us", "8"),
    ]
    assert summary.problems == []


def test_real_non_gemm_calls_are_named_call_events():
    """LAPACK, level 1 and 2 BLAS, TRSM and FFT lines are events that name their function, not errors."""
    _, gemms, events = _real("mkl_2019.0_mkl-verbose-toolkit-tests-raw-head.log")
    calls = [e.function for e in events if e.event == "call"]
    assert calls == ["FFT"] * 11 + ["DGESVD", "DGETRF", "DGETRI", "DGETRF", "DGETRI"] and len(gemms) == 6
    summary, gemms, events = _real("mkl_unknown_mkl-verbose-toolkit-readme-zmore.log")
    assert gemms == [] and summary.problems == [] and summary.foreign_lines == 2  # the poster's `...`
    assert [(e.event, e.function) for e in events] == [
        *[("call", "DCOPY")] * 3,
        *[("call", "DTRSM")] * 3,
        *[("info", "MKL")] * 2,  # `FFT: MAIN_DESC | dco8192:1:1 | ...`, an older FFT line without arguments
        *[("call", "DCOPY")] * 2,
    ]
    for name, function in (
        ("mkl_2020.0_hpc-notes-dgemv-sequential.log", "DGEMV"),
        ("mkl_2020.0_mxnet-docs-dnnl-readme-sgesv.log", "SGESV"),
    ):
        summary, gemms, events = _real(name)
        assert gemms == [] and [e.function for e in events if e.event == "call"] == [function], name
        assert summary.unparsable_lines == 0, name


# ---------------------------------------------------------------------------------------------------------------
# Real lines changed the ways logs are: the fields the corpus mutation test does not compare
# ---------------------------------------------------------------------------------------------------------------

_EXCERPTS = (
    "mkl_2020.0_onednn-issue-789-prints.log",
    "mkl_2022.0_mkl-verbose-toolkit-issue-3-gpu-dpcpp.log",
    "mkl_unknown_turbotransformers-issue-143-bold-batch.log",
    "mkl_2019.0_mxnet-docs-mkldnn-readme-sgemm.log",
)


def _seen(records: list[Any]) -> list[tuple[Any, ...]]:
    return [
        (r.kind, r.function, r.thread, r.timestamp, r.extra if isinstance(r, GemmCall) else r.fields) for r in records
    ]


@pytest.mark.parametrize("name", _EXCERPTS)
@pytest.mark.parametrize("mutation", ["crlf", "launcher-tag", "prints", "gzip", "hard-wrap"])
def test_real_mutated_keeps_thread_time_and_fields(name: str, mutation: str, tmp_path: Path):
    plain = blaslog.parse(str(REAL / name))
    text = (REAL / name).read_text(encoding="utf-8")
    lines = text.splitlines()
    target = tmp_path / name
    if mutation == "crlf":
        target.write_bytes(text.replace("\n", "\r\n").encode())
    elif mutation == "launcher-tag":
        target.write_text("".join(f"[rank0]: {line}\n" for line in lines), encoding="utf-8")
    elif mutation == "prints":
        target.write_text("".join(f"{line}\nstep 17 loss=4.21\n" for line in lines), encoding="utf-8")
    elif mutation == "gzip":
        target = tmp_path / (name + ".gz")
        target.write_bytes(gzip.compress(text.encode()))
    else:
        target.write_text("".join(f"{line[i : i + 80]}\n" for line in lines for i in range(0, len(line) or 1, 80)))
    mutated = blaslog.parse(str(target))
    assert _seen(mutated.records) == _seen(plain.records)
    assert mutated.files[0].unparsable_lines == 0


def test_cut_inside_the_arguments_is_a_truncated_call():
    """The last line cut inside its arguments (the writer killed): a truncated record named by its function,
    with a warning that says so, not an info event."""
    line = (REAL / "mkl_2025.1_pt-notes-sgemm-avx2.log").read_text(encoding="utf-8").splitlines()[1]
    result = parse_text(line[:60], name="cut.log")
    (record,) = result.records
    assert (record.kind, record.event, record.function) == ("event", "truncated", "SGEMM")
    (problem,) = result.files[0].problems
    assert problem.severity == "warning" and "cut short" in problem.message and problem.line == 1


def test_cut_after_the_time_is_truncated_too():
    """`NThr:1` may be `NThr:16` cut: MKL writes every line with its line end, so a last line without one was cut."""
    line = SGEMM.format(time="969.47us")
    (record,) = parse_text(line).records
    assert record.kind == "event" and record.event == "truncated"
    (gemm,) = parse_text(line + "\n").records
    assert gemm.kind == "gemm"


def test_gemm_line_the_grammar_rejects_is_reported_not_passed_over():
    """A whole GEMM line blaslog cannot read is an error naming its line, never an info event."""
    bad = SGEMM.format(time="969.47us").replace("FastMM:1", "FastMM:1 ???")
    result = parse_text(BANNER + "\n" + bad + "\n", name="bad.log")
    assert [r.kind for r in result.records] == ["event"]
    (problem,) = result.files[0].problems
    assert problem.line == 2 and problem.severity == "error" and "cannot parse this mkl record" in problem.message
    assert result.files[0].unparsable_lines == 1 and result.files[0].balanced()


def test_other_call_the_grammar_rejects_is_a_named_call_event():
    """A non-GEMM call the grammar cannot read whole (ScaLAPACK prints `(nil)` and `{...}` among its arguments) is
    a `call` event that names its function, without an error. The arguments are as a public MKL_VERBOSE parser's
    docstring quotes them (without the time, which is added here)."""
    line = (
        "MKL_VERBOSE PDPOTRF(l,1024,(nil),1,1,0x7fff5c591294,0,nb={1024,1024},myid={8,0},process_grid={32,1})"
        " 1.20ms CNR:OFF Dyn:1 FastMM:1 TID:0  NThr:1"
    )
    result = parse_text(line + "\n")
    (event,) = result.records
    assert (event.kind, event.event, event.function) == ("event", "call", "PDPOTRF")
    assert result.files[0].problems == []


def test_bold_times_hit_the_shape_cache():
    text = "".join(SGEMM.format(time=f"**{i % 997}.{i % 89:02d}us**") + "\n" for i in range(2_000))
    parser = _FileParser(text_reader(text, "mkl.log"), Sniffer(), "warn", events=True)
    records = list(parser.records())
    assert len(records) == 2_000 and {r.timestamp for r in records[:3]} == {"0.00us", "1.01us", "2.02us"}
    assert parser.cache.stats.grammar_runs <= 3, parser.cache.stats.to_dict()


def test_thread_counts_and_wdiv_hit_the_shape_cache():
    """Real lines carry counts of two digits (`NThr:40`) and `WDiv:HOST:+0.000` (fixtures/real/mkl_*): values
    that vary are passed on as they are, so such lines share one template."""
    line = (REAL / "mkl_2019.0_mxnet-docs-mkldnn-readme-sgemm.log").read_text(encoding="utf-8").splitlines()[4]
    text = "".join(
        line.replace("8.93ms", f"{i % 97}.{i % 89:02d}ms").replace("NThr:40", f"NThr:{i % 64 + 10}") + "\n"
        for i in range(3_000)
    )
    parser = _FileParser(text_reader(text, "mkl.log"), Sniffer(), "warn", events=True)
    records = list(parser.records())
    assert [(r.thread, dict(r.extra)["NThr"], dict(r.extra)["WDiv"]) for r in records[:2]] == [
        ("0", "10", "HOST:+0.000"),
        ("0", "11", "HOST:+0.000"),
    ]
    assert len(records) == 3_000 and parser.cache.stats.grammar_runs <= 3, parser.cache.stats.to_dict()


def test_gemm_with_an_argument_missing_is_reported():
    """A GEMM line that parses but lacks an argument (a person's edit) is an error naming what MKL prints, not a
    call event; SGEMM_BATCH, whose arguments MKL itself cuts, stays a call event."""
    line = SGEMM.format(time="969.47us").replace(",0xd3ba70,75)", ",0xd3ba70)")
    batch = "MKL_VERBOSE SGEMM_BATCH(N,N,0x7ffcdacca2fc,0x7 22.83us CNR:OFF Dyn:1 FastMM:1 TID:0  NThr:8"
    result = parse_text(line + "\n" + batch + "\n", name="edited.log")
    assert [(r.kind, r.function) for r in result.records] == [("event", "SGEMM_BATCH")]
    (problem,) = result.files[0].problems
    assert problem.line == 1 and "SGEMM with 12 arguments; MKL prints 13" in problem.message


def test_a_looser_reading_that_fails_leaves_the_grammar_s_error_to_report(monkeypatch):
    """A dialect's fallback whose transformer raises (lark wraps it in a VisitError) reads nothing: the main rule's
    rejection is reported, as for a text no looser reading takes (nothing of lark's leaves the shape cache)."""
    import blaslog.formats.mkl as mkl

    class Failing(mkl._Transformer):  # type: ignore[misc,name-defined]
        def note(self, children: Any) -> Any:
            raise ValueError("boom")

    monkeypatch.setattr(mkl.MklVerbose, "transformer", lambda self, spans: Failing(spans))
    monkeypatch.setenv("BLASLOG_SAVED_SHAPES", "0")
    text = "MKL_VERBOSE oneMKL 2024.0 Product build\n" + SGEMM.format(time="1.0us") + "\n"
    result = parse_text(text, log_format="mkl")
    assert result.gemms and [p.line for p in result.problems] == [1]
    assert "unexpected '2024.0'" in result.problems[0].message


def test_a_gemm_a_person_cut_short_with_dots_is_partial():
    """`DGEMM(N,N,4096,4096,4096,...) 2.1s CNT=1` (a README's excerpt): the arguments before `...` read by
    position, the rest named missing, and said so (summary, check and diff leave it out); a `Key=value` field after
    the time is a field like `Key:value`. A call that shows every argument, then `...`, is no partial GEMM."""
    result = blaslog.parse_text(
        "MKL_VERBOSE Intel(R) oneAPI Math Kernel Library 2026.0 ...\nMKL_VERBOSE DGEMM(N,N,4096,4096,4096,...) 2.1s CNT=1\n"
    )
    (gemm,) = result.gemms
    assert (gemm.transa, gemm.transb, gemm.m, gemm.n, gemm.k, gemm.a_type) == ("N", "N", 4096, 4096, 4096, "double")
    assert gemm.missing == "alpha, a, lda, b, ldb, beta, c, ldc"
    assert result.files[0].unparsable_lines == 0
    (said,) = [p.message for p in result.files[0].problems]
    assert "kept as a partial GEMM record: alpha, a, lda, b, ldb, beta, c, ldc not shown" in said
    whole = blaslog.parse_text(
        "MKL_VERBOSE DGEMM(N,N,8,8,8,0x7ffd9c4c0a38,0x7f2c,8,0x7f3c,8,0x7ffd9c4c0a40,0x7f4c,8) 1.23ms CNR:OFF Dyn:1 "
        "FastMM:1 TID:0 NThr:8 CNT=1\n"
    )
    assert whole.gemms[0].missing is None and ("CNT", "1") in whole.gemms[0].extra
    every = blaslog.parse_text("MKL_VERBOSE DGEMM(N,N,8,8,8,1,0x1,8,0x2,8,0,0x3,8,...) 1.0s CNR:OFF TID:0 NThr:8\n")
    assert not every.gemms and every.files[0].unparsable_lines == 1
