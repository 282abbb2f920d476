"""blaslog check: the same GEMM with different algorithms or flags inside one run; summary; batch invariance."""

from __future__ import annotations

import pytest

import blaslog
from blaslog.check import batch_invariance, check_run
from blaslog.summary import summarize
from tests.conftest import GENERATED, expected_findings, trace_line

WITHIN = [e for e in expected_findings() if e["kind"].startswith("same_signature")]


@pytest.mark.parametrize(
    "expected", [e for e in WITHIN if e["kind"] == "same_signature_different_algo"], ids=lambda e: e["file"]
)
def test_cublaslt_alignment_switch_is_found(expected, parsed):
    findings = check_run(parsed(GENERATED / expected["file"]).gemms)
    (finding,) = findings
    assert finding.kind == expected["kind"] and finding.cls == "schedule"
    variants = finding.data["variants"]
    assert [(v["algo"], v["count"], v["lines"]) for v in variants] == [
        (v["algo"], v["count"], v["lines"]) for v in expected["variants"]
    ]
    assert variants[1]["alignment"]["B"] == 4 and variants[0]["alignment"]["B"] >= 16
    assert "aligned differently" in finding.explanation


@pytest.mark.parametrize(
    "name,lines",
    [
        ("rocblas_fp16_trace.log", {"none": [26, 106], "fp16_alt_impl": [28, 108]}),
        ("rocblas_fp16_bench.log", {"none": [13, 53], "fp16_alt_impl": [14, 54]}),
    ],
)
def test_rocblas_recompute_case_in_trace_and_bench(name, lines, parsed):
    (finding,) = check_run(parsed(GENERATED / name).gemms)
    assert finding.kind == "same_signature_different_flags" and finding.cls == "precision"
    assert dict(finding.fields)["flags"] == ("none", "fp16_alt_impl")
    assert [v["lines"] for v in finding.data["variants"]] == [lines["none"], lines["fp16_alt_impl"]]
    text = finding.explanation
    assert "BF16" in text and "ROCBLAS_INTERNAL_FP16_ALT_IMPL=0" in text and "opt out" in text
    assert "the flag the caller asked for" in text
    assert finding.data["signature"]["m"] == 50304


def test_rocblas_recompute_case_in_profile(parsed):
    (finding,) = check_run(parsed(GENERATED / "rocblas_fp16_profile.yaml").gemms)
    assert [v["count"] for v in finding.data["variants"]] == [2, 2]
    assert dict(finding.fields)["flags"] == ("none", "fp16_alt_impl")


@pytest.mark.parametrize(
    "name",
    [
        "lt_fp16_tp4_rank0.log",
        "lt_fp16_unsharded.log.gz",
        "hipblaslt_bf16_tp2_rank0.bench.log",
        "hipblaslt_bf16_unsharded.bench.log",
        "cublas_classic_fp16.log",
        "hipblaslt_bf16_tp2_rank0.api.log",
    ],
)
def test_no_switch_in_the_other_runs(name, parsed):
    assert check_run(parsed(GENERATED / name).gemms) == []


def test_summary_counts_signatures_and_algorithms(parsed, generated_caps):
    rows = summarize(parsed(GENERATED / "lt_fp32_tp4/blaslt_321674.log").gemms, caps=generated_caps)
    assert sum(r["calls"] for r in rows) == 78
    switched = [r for r in rows if len(r["algorithms"]) > 1]
    assert len(switched) == 1 and [a["count"] for a in switched[0]["algorithms"]] == [3, 1]
    assert "TF32" in switched[0]["algorithms"][0]["numerics"]
    rocblas = summarize(parsed(GENERATED / "rocblas_fp16_profile.yaml").gemms)
    assert sum(r["calls"] for r in rocblas) == 80


def test_batch_invariance_shows_ranges():
    def line(m, algo, number):
        return trace_line(64, m, 128, f"algoId={algo} tile=MATMUL_TILE_64x64", dtype="R_16F", stream=f"0X{number:X}0")

    text = line(16, 6, 1) + line(32, 6, 2) + line(64, 21, 3) + line(128, 21, 4)
    findings = batch_invariance(blaslog.parse_text(text).gemms)
    (finding,) = [f for f in findings if f.data["dimension"] == "m"]
    assert [(r["from"], r["to"]) for r in finding.data["ranges"]] == [(16, 32), (64, 128)]
    assert finding.kind == "batch_dependent_algo"
