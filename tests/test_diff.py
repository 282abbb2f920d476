"""blaslog diff: the seed case and exactly the planted differences of fixtures/generated."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import blaslog
from blaslog.diff import diff_runs, dims_match, infer_tp
from tests.conftest import GENERATED, SEED, expected_findings, trace_line

TP_EXPECTED = [e for e in expected_findings() if e["kind"] in ("tp_algo_diff", "tp_solution_diff")]
PAIRS = sorted({(e["sharded_file"], e["unsharded_file"]) for e in TP_EXPECTED})


def _run(sharded, unsharded, caps=None, tp=None):
    s = blaslog.parse(str(sharded)).gemms
    u = blaslog.parse(str(unsharded)).gemms
    return diff_runs(s, u, caps=caps, tp=tp, sharded_file=str(sharded), unsharded_file=str(unsharded))


def test_seed_tp4_against_unsharded_is_a_precision_difference(seed_caps):
    result = _run(SEED / "sharded.log", SEED / "unsharded.log", caps=seed_caps)
    assert result.tp.tp == 4 and result.tp.how == "inferred"
    assert len(result.pairs) == 1
    (finding,) = result.findings
    assert finding.cls == "precision"
    fields = dict(finding.fields)
    assert fields["algoId"] == (0, 21)
    assert fields["tile"] == ("MATMUL_TILE_128x32", "MATMUL_TILE_64x64")
    assert fields["stages"] == (None, "MATMUL_STAGES_16x6")
    assert fields["ctaSwizzling"] == (1, None)
    assert finding.data["sharded"]["k"] == 8 and finding.data["unsharded"]["k"] == 32
    text = finding.explanation
    assert "FMA with FP32 inputs" in text and "TF32 inputs" in text
    assert "unsharded run is the less precise one" in text
    assert "NVIDIA_TF32_OVERRIDE=0" in text and "allow_tf32" in text and "Pinning the algorithm" in text


def test_seed_without_caps_says_numerics_unknown():
    (finding,) = _run(SEED / "sharded.log", SEED / "unsharded.log").findings
    assert finding.cls == "unknown"
    assert "blaslog probe" in finding.explanation and "--caps" in finding.explanation


def test_seed_ffn256_has_no_algorithm_difference_against_unsharded():
    result = _run(SEED / "unsharded_ffn256.log", SEED / "unsharded.log")
    assert result.findings == [] and result.identical_pairs == 1
    assert result.tp.tp == 1


def test_seed_ffn256_against_sharded_has_the_same_precision_difference(seed_caps):
    result = _run(SEED / "sharded_joined.log", SEED / "unsharded_ffn256_joined.log", caps=seed_caps)
    assert [f.cls for f in result.findings] == ["precision"]


@pytest.mark.parametrize("sharded,unsharded", PAIRS)
def test_generated_pairs_find_exactly_the_planted_differences(sharded, unsharded, generated_caps):
    result = _run(GENERATED / sharded, GENERATED / unsharded, caps=generated_caps)
    planted = [e for e in TP_EXPECTED if e["sharded_file"] == sharded and e["unsharded_file"] == unsharded]
    assert result.tp.tp == planted[0]["tp"] and result.tp.confidence == 1.0
    assert not result.unmatched_sharded and not result.unmatched_unsharded
    assert len(result.findings) == len(planted)
    for expected in planted:
        matches = [
            f
            for f in result.findings
            if [f.data["sharded"][d] for d in "mnk"] == expected["sharded_mnk"]
            and [f.data["unsharded"][d] for d in "mnk"] == expected["unsharded_mnk"]
        ]
        assert len(matches) == 1, expected["id"]
        finding = matches[0]
        assert finding.cls == expected["class"]
        assert sorted(name for name, _ in finding.fields) == sorted(expected["differing_fields"])
        assert finding.count == expected["count"]
        lines = sorted((o.sharded_line, o.unsharded_line) for o in finding.occurrences)
        assert lines == sorted((o["sharded_line"], o["unsharded_line"]) for o in expected["occurrences"])
        if "sharded_algo" in expected:
            # the order of keys inside algo=[...] is the log's business; compare the pairs
            assert sorted(finding.data["sharded_algo"].split()) == sorted(expected["sharded_algo"].split())
            assert sorted(finding.data["unsharded_algo"].split()) == sorted(expected["unsharded_algo"].split())
        if expected["class"] == "precision":
            assert finding.data["numerical_impl_flags"] == expected["numerical_impl_flags"]


@pytest.mark.parametrize("rank", ["321675", "321676", "321677"])
def test_other_ranks_show_the_same_differences(rank, generated_caps):
    result = _run(
        GENERATED / f"lt_fp32_tp4/blaslt_{rank}.log", GENERATED / "lt_fp32_unsharded.stdout.log", caps=generated_caps
    )
    assert sorted(f.cls for f in result.findings) == ["precision", "reduction", "schedule"]
    if rank == "321677":  # cut short during step 2: the last GEMM has no partner
        assert len(result.unmatched_unsharded) == 1 and not result.unmatched_sharded


def test_api_only_hipblaslt_logs_compare_shapes_and_say_so():
    result = _run(GENERATED / "hipblaslt_bf16_tp2_rank0.api.log", GENERATED / "hipblaslt_bf16_unsharded.api.log")
    assert result.algorithm_info is False
    assert result.findings == [] and len(result.pairs) == 78 and result.tp.tp == 2


def test_explicit_tp_overrides_and_a_wrong_tp_leaves_pairs_unmatched():
    result = _run(GENERATED / "lt_fp16_tp4_rank0.log", GENERATED / "lt_fp16_unsharded.log.gz", tp=2)
    assert result.tp.how == "given" and result.tp.tp == 2
    assert len(result.unmatched_sharded) == 78 and not result.pairs


def test_repeated_shape_pairs_with_its_own_occurrence():
    """Two identical shapes in a row: each sharded call pairs with the unsharded call at the same position."""

    def line(n, k, algo):
        return trace_line(k, 64, n, f"algoId={algo}")

    sharded = blaslog.parse_text(line(16, 8, 1) + line(16, 8, 2) + line(16, 8, 1)).gemms
    unsharded = blaslog.parse_text(line(16, 32, 1) + line(16, 32, 1) + line(16, 32, 1)).gemms
    result = diff_runs(sharded, unsharded)
    assert result.tp.tp == 4
    assert [(s.line, u.line) for s, u in result.pairs] == [(1, 1), (2, 2), (3, 3)]
    (finding,) = result.findings
    assert finding.location.line == 2 and finding.count == 1


def test_dims_match_and_infer_tp():
    a = blaslog.GemmCall("cublasLt", "x", m=64, n=1024, k=8)
    b = blaslog.GemmCall("cublasLt", "x", m=64, n=1024, k=32)
    batched_s = blaslog.GemmCall("cublasLt", "x", m=64, n=64, k=64, batch_count=8)
    batched_u = blaslog.GemmCall("cublasLt", "x", m=64, n=64, k=64, batch_count=32)
    assert dims_match(a, b, 4) and not dims_match(a, b, 2) and dims_match(a, a, 4)
    assert dims_match(batched_s, batched_u, 4)
    inference = infer_tp([(a, b), (batched_s, batched_u), (a, a)])
    assert (inference.tp, inference.agreeing, inference.sharded_pairs, inference.equal_pairs) == (4, 2, 2, 1)
    assert "TP 4 inferred from 2 of 2" in inference.describe()


def test_swapped_runs_are_pointed_out(runner):
    from blaslog.cli import cli

    result = runner.invoke(cli, ["diff", str(SEED / "unsharded.log"), str(SEED / "sharded.log")])
    assert "were the runs given the other way round" in result.stderr


# -- one finding per cause across ranks ------------------------------------------------------------------

TP4 = sorted((GENERATED / "lt_fp32_tp4").glob("*.log"))


@pytest.fixture(scope="module")
def tp4_results():
    u = blaslog.parse(str(GENERATED / "lt_fp32_unsharded.stdout.log"))
    sharded = [blaslog.parse(str(path)) for path in TP4]
    results = [
        diff_runs(s.gemms, u.gemms, sharded_file=str(path), unsharded_file="u.log")
        for s, path in zip(sharded, TP4, strict=True)
    ]
    return results, [f for s in sharded for f in s.files], list(u.files)


def test_a_tp4_diff_folds_the_ranks_into_one_finding_per_cause(tp4_results):
    from blaslog.views import diff_report

    results, sharded, unsharded = tp4_results
    assert [len(r.findings) for r in results] == [3, 3, 3, 3]
    report = diff_report(results, sharded, unsharded)
    assert [f.cls for f in report.findings] == ["unknown", "reduction", "schedule"]
    for finding in report.findings:
        assert finding.ranks == ("0", "1", "2", "3") and finding.title.startswith("ranks 0-3: ")
        assert finding.count == 16 and len(finding.occurrences) == 16
        assert [o.rank for o in finding.occurrences] == [r for r in "0123" for _ in range(4)]
        assert {loc.file for loc in finding.related} >= {str(p) for p in TP4[1:]}
        # the folded finding keeps the fingerprint of each rank's finding: no rank and no file in it
        assert {f.fingerprint() for r in results for f in r.findings if f.cls == finding.cls} == {finding.fingerprint()}
    doc = report.to_json()
    assert doc["findings"][0]["ranks"] == ["0", "1", "2", "3"] and doc["findings"][0]["occurrences"][5]["rank"] == "1"
    assert len(report.cases) == 78 * 3 + 77
    failing = {id(f) for c in report.cases for f in c.failures}
    assert failing == {id(f) for f in report.findings}


def test_folded_fingerprints_do_not_depend_on_the_rank_count_or_labels(tp4_results):
    from blaslog.views import diff_report

    results, sharded, unsharded = tp4_results
    four = diff_report(results, sharded, unsharded)
    two = diff_report(results[2:], sharded[2:], unsharded, ranks=[2, 3])
    one = diff_report(results[:1], sharded[:1], unsharded)
    named = diff_report(results, sharded, unsharded, ranks=["a", "b", "c", "d"])
    prints = [f.fingerprint() for f in four.findings]
    assert prints == [f.fingerprint() for f in two.findings] == [f.fingerprint() for f in one.findings]
    assert prints == [f.fingerprint() for f in named.findings]
    assert two.findings[0].title.startswith("ranks 2-3: ") and named.findings[0].title.startswith("ranks a,b,c,d: ")
    assert one.findings[0].ranks == () and "rank" not in one.findings[0].title
    with pytest.raises(ValueError, match="4 results but 2 ranks"):
        diff_report(results, sharded, unsharded, ranks=[0, 1])


def test_gitlab_fingerprints_are_unique_in_a_report(tp4_results):
    import json

    from blaslog.report import Finding, Location, Report
    from blaslog.reporters import get_reporter
    from blaslog.views import diff_report

    results, sharded, unsharded = tp4_results
    issues = json.loads(get_reporter("gitlab").render(diff_report(results, sharded, unsharded)))
    assert len(issues) == 3 and len({i["fingerprint"] for i in issues}) == 3
    same = [Finding("batch_dependent_algo", "schedule", "t", "x", Location(name, 1), key="k") for name in "abc"]
    issues = json.loads(get_reporter("gitlab").render(Report("check", findings=same)))
    assert len({i["fingerprint"] for i in issues}) == 3
    assert issues[0]["fingerprint"] == same[0].fingerprint()


def test_fold_ranks_names_ranks_compactly():
    from blaslog.report import Finding, Location, fold_ranks, rank_span

    assert rank_span(["3"]) == "rank 3"
    assert rank_span(["0", "1", "2", "5", "7", "8"]) == "ranks 0-2,5,7-8"
    assert rank_span(["0", "2"]) == "ranks 0,2"
    assert rank_span(["a", "b"]) == "ranks a,b"

    def finding(cls, title, file):
        return Finding("tp_algo_diff", cls, title, "x", Location(file, 5, "sharded"), key=title)

    folded = fold_ranks(
        [
            (0, [finding("schedule", "tile", "r0.log"), finding("precision", "tf32", "r0.log")]),
            (1, [finding("schedule", "tile", "r1.log")]),
            (2, [finding("schedule", "tile", "r2.log"), finding("precision", "tf32", "r2.log")]),
        ]
    )
    assert [(f.cls, f.title, f.count) for f in folded] == [
        ("precision", "ranks 0,2: tf32", 2),
        ("schedule", "ranks 0-2: tile", 3),
    ]
    assert folded[1].location.role == "sharded rank 0"
    assert [(r.file, r.role) for r in folded[1].related] == [("r1.log", "sharded rank 1"), ("r2.log", "sharded rank 2")]


@given(
    st.lists(st.integers(min_value=0, max_value=6), max_size=40),
    st.lists(st.integers(min_value=0, max_value=6), max_size=40),
)
def test_quick_ratio_from_counts_is_difflib_s(a, b):
    """Thread groups are paired by difflib's quick_ratio computed from the sequences' counts: the same float."""
    from collections import Counter
    from difflib import SequenceMatcher

    from blaslog.diff import _quick_ratio

    expected = SequenceMatcher(None, a, b, autojunk=False).quick_ratio()
    assert _quick_ratio(Counter(a), len(a), Counter(b), len(b)) == expected
