"""Lines cut where nothing says so: the end of an input without a line end, and logs cut at a fixed width (a
terminal, a CI log viewer or a mail program wrapped them, values and all)."""

from __future__ import annotations

from pathlib import Path

import pytest

from blaslog import parse_text
from tests.conftest import FIXTURES

BENCH = (
    "hipblaslt-bench --api_method c -m 1 -n 256 -k 256 --lda 1 --ldb 256 --ldc 1 --ldd 1  --stride_a 0 --stride_b 0"
    " --stride_c 0 --stride_d 0  --alpha 1.000000 --beta 1.000000 --transA N --transB N --batch_count 1 --scaleA 0"
    " --scaleB 0  --a_type f32_r --b_type f32_r --c_type f32_r --d_type f32_r --scale_type f32_r --bias_type f32_r"
    "   --compute_type f32_r --algo_method index --solution_index 1214"
)


def _ends_inside(result) -> list[str]:
    return [p.message for p in result.files[0].problems if "the input ends inside" in p.message]


def test_a_record_without_a_line_end_is_kept_with_a_warning_where_its_dialect_cannot_tell():
    """A bench command's last value may have been cut (`--solution_index 1` of `1214`): kept, and said."""
    whole = parse_text(BENCH + "\n")
    cut = parse_text(BENCH)
    assert [g.solution_index for g in whole.gemms] == [g.solution_index for g in cut.gemms] == [1214]
    assert _ends_inside(whole) == []
    assert len(_ends_inside(cut)) == 1 and "'1214'" in _ends_inside(cut)[0]


def test_a_line_cut_before_its_dialect_shows_is_reported():
    result = parse_text(BENCH + "\nhipbl")
    assert [g.solution_index for g in result.gemms] == [1214]
    assert result.files[0].foreign_lines == 1 and len(_ends_inside(result)) == 1


def _hard_wrap(text: str, width: int) -> str:
    return "".join(line[i : i + width] + "\n" for line in text.splitlines() for i in range(0, max(len(line), 1), width))


def _calls(result) -> list[tuple]:
    return [
        (
            g.function,
            g.m,
            g.n,
            g.k,
            g.transa,
            g.transb,
            g.a_type,
            g.compute_type,
            g.algo_id,
            g.tile,
            g.stages,
            g.custom_option,
            g.solution_index,
            g.workspace_size,
        )
        for g in result.gemms
    ]


@pytest.mark.parametrize("width", [64, 80, 100, 132])
@pytest.mark.parametrize(
    "name",
    [
        "generated/lt_fp32_tp4/blaslt_321677.log",
        "real/rocblas_unknown_rocmlir-bert-configs-raw.log",
        "real/hipblaslt_unknown_legacy-rocm-build-issue-5941-win-7900xtx.log",
        "real/tunableop_2.11.0_openpi-gfx942-tf32-negative-id.log",
        "real/cublas_13.4.1_go-peft-cuda-validation.log",
    ],
)
def test_a_log_cut_at_a_fixed_width_reads_as_the_log(name: str, width: int):
    text = Path(FIXTURES, name).read_text(encoding="utf-8")
    plain = parse_text(text)
    wrapped = parse_text(_hard_wrap(text, width))
    assert plain.gemms and _calls(wrapped) == _calls(plain)
    # every line is accounted for: records (joined again), or program output, or reported as unparsable (an
    # [Api] line cut before the width is known)
    summary = wrapped.files[0]
    assert summary.lines == len(_hard_wrap(text, width).splitlines())
    assert summary.record_lines + summary.foreign_lines + summary.unparsable_lines == summary.lines
    assert len([p for p in summary.problems if p.severity == "error"]) >= min(summary.unparsable_lines, 1)


def test_a_print_after_a_whole_record_at_the_width_is_not_taken_for_its_rest():
    """A matmul line that ends exactly where the width cut the line before it ends there: the print after it is
    the program's (a line wrapped at a space keeps its own line too)."""
    text = Path(FIXTURES, "generated/lt_fp32_tp4/blaslt_321677.log").read_text(encoding="utf-8")
    plain = parse_text(text)
    printed = "".join(line + "\nstep 17 loss=4.21\n" for line in text.splitlines())
    assert _calls(parse_text(printed)) == _calls(plain)


def test_lines_that_end_with_cr_alone_are_read_as_lines(tmp_path):
    """Classic Mac OS line ends: the same records, line for line, and a warning that says how they were read."""
    from blaslog import parse as parse_file

    text = Path(FIXTURES, "real/cublas_13.4.1_go-peft-cuda-validation.log").read_text(encoding="utf-8")
    path = tmp_path / "cr.log"
    path.write_bytes(text.replace("\n", "\r").encode())
    plain, cr = parse_text(text), parse_file(str(path))
    assert plain.gemms and _calls(cr) == _calls(plain)
    assert [g.line for g in cr.gemms] == [g.line for g in plain.gemms]
    assert any("end with CR alone" in p.message for p in cr.files[0].problems)


def _said(result) -> bool:
    return any(p.severity in ("error", "warning") for p in result.files[0].problems)


@pytest.mark.parametrize(
    "name",
    [
        "generated/lt_fp32_tp4/blaslt_321675.log",
        "generated/cublas_classic_fp16.log",
        "real/cublas_13.4.1_go-peft-cuda-validation.log",
        "real/rocblas_unknown_rocm-libraries-issue-3413.log",
        "real/hipblaslt_unknown_legacy-rocm-build-issue-5941-win-7900xtx.log",
    ],
)
def test_at_any_width_a_cut_log_reads_right_or_says_what_it_could_not(name: str):
    """Cut at every width from 60 to 260 columns (3 apart), a log gives its GEMMs as they are, or reports what it
    could not join; it never gives a GEMM with a field cut short and says nothing (`computeType=` of a word wrap
    at `t|ype`, a cuBLAS line exactly as wide as the cut taken for a piece)."""
    text = Path(FIXTURES, name).read_text(encoding="utf-8")
    plain = _calls(parse_text(text))
    silent = []
    for width in range(60, 261, 3):
        result = parse_text(_hard_wrap(text, width))
        got = _calls(result)
        if got != plain and (not _said(result) or any(call not in plain for call in got)):
            silent.append(width)
    assert silent == []


def test_a_word_wrap_that_dropped_its_space_is_not_joined_as_a_cut():
    """`--ldb` / `768 --beta 0 ...`: with or without the space the command is whole, so nothing says which: the
    record is kept as cut short (a warning), never read as `--ldb768`."""
    text = (
        "./rocblas-bench -f gemm_ex --transposeA N --transposeB N -m 2 -n 16384 -k 768 --alpha 1 --a_type f32_r "
        "--lda 2 --b_type f32_r --ldb\n768 --beta 0 --c_type f32_r --ldc 2 --d_type f32_r --ldd 2 --compute_type "
        "f32_r --algo 0 --solution_index 0 --flags 1\n"
    )
    result = parse_text(text)
    assert all(g.ldb in (None, 768) for g in result.gemms) and not any("ldb768" in dict(g.extra) for g in result.gemms)
    assert result.gemms == () or result.gemms[0].ldb == 768 or _said(result)
