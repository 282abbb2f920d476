"""blaslog's own reading of the fields the regular-expression baseline extracts, through the Python API.

Prints the same tab-separated row per GEMM as `regex_baseline.py` (thread, m, n, k, A type, compute type,
algoId, tile, stages, split-K, reduction scheme, swizzling), but every line of the log is read, checked
and accounted for by blaslog's grammars: the benchmark's like-for-like comparison with the baseline.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's blaslog, installed or not
from blaslog.parse import iter_file


def main() -> None:
    out = sys.stdout
    for gemm in iter_file(sys.argv[1], events=False):
        out.write(
            "\t".join(
                str(x)
                for x in (
                    gemm.thread,
                    gemm.m,
                    gemm.n,
                    gemm.k,
                    gemm.a_type,
                    gemm.compute_type,
                    gemm.algo_id,
                    gemm.tile,
                    gemm.stages,
                    gemm.num_splits_k,
                    gemm.reduction_scheme,
                    gemm.cta_swizzling,
                )
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
