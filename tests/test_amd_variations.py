"""AMD logs as they vary in the wild (issue 14): older and edited forms, shell continuations, cut records,
launcher tags, glued commands, and numbers that are not ASCII decimal."""

from __future__ import annotations

from pathlib import Path

import pytest

import blaslog
from blaslog import api

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


@pytest.mark.parametrize(("text", "lines"), [(_OLD_LAYER3, [2, 4, 6]), (_NEW_LAYER3, [1])], ids=["rocm<3.5", "rocm3.8+"])
@pytest.mark.parametrize("jobs", [1, 2])
def test_layer3_trace_and_bench_count_each_call_once(tmp_path: Path, text: str, lines: list[int], jobs: int) -> None:
    calls = len(lines)
    path = tmp_path / "layer3.log"
    path.write_text(text)
    parsed = blaslog.parse_file(str(path))
    assert parsed.files[0].gemm_records == 2 * calls  # parse keeps both dialects' records
    inputs = api.read_run_files([str(path)], api.Options(jobs=jobs))
    occurrences = inputs.occurrences()
    assert [o.log_format for o in occurrences] == ["rocblas-trace"] * calls
    assert [o.line for o in occurrences] == lines
    assert inputs.notes == [f"{path}: holds both rocblas-trace and rocblas-bench lines for the same calls; "
                            "rocblas-bench lines are left out so that each call counts once"]
    report = api.summary([str(path)])
    assert sum(row["calls"] for row in report.rows) == calls
