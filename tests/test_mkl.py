"""oneMKL verbose lines (blaslog/formats/mkl.py): GEMMs, the banner, `record --libs mkl`, and the shape cache."""

from __future__ import annotations

from blaslog import parse_text
from blaslog.formats import Sniffer
from blaslog.inputs import text_reader
from blaslog.parse._lines import _FileParser
from blaslog.record import logging_environment

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
