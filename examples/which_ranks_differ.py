"""Which GEMM signatures ran different algorithms on different ranks? One SQL query over blaslog's Parquet.

    blaslog parse 'logs/tp4/*.log' --format parquet --output gemms/      # or --scheduler ADDRESS: the workers write
    python examples/which_ranks_differ.py gemms/                         # a table
    python examples/which_ranks_differ.py gemms/ --json                  # the same as JSON

A signature is what `blaslog check` calls "the same GEMM" (GemmCall.signature: library, function family,
transposes, m, n, k, batch, types, compute and scale type, order, epilogue, leading dimensions); an algorithm is
every algorithm field (GemmCall.algorithm) and rocBLAS flags (check's variant_key). For each run and signature
that ran more than one algorithm, the answer lists each rank's algorithms with their calls and first line, and
says whether the ranks disagree within themselves (what `blaslog check` reports for each rank's file) or only
with each other (each rank consistent, the ranks not). Needs duckdb (pip install duckdb). The dataset's
schema is described in bench/SCALE.md (blaslog_schema_version 1).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

SIGNATURE = (
    "library",
    "family",
    "trans",
    "m",
    "n",
    "k",
    "batch_count",
    "a_type",
    "b_type",
    "c_type",
    "d_type",
    "compute_type",
    "scale_type",
    "order",
    "epilogue",
    "lda",
    "ldb",
    "ldc",
    "ldd",
)
ALGORITHM = (
    "algo_id",
    "tile",
    "stages",
    "num_splits_k",
    "reduction_scheme",
    "cta_swizzling",
    "custom_option",
    "inner_shape",
    "cluster_shape",
    "scheduling_mode",
    "workspace_size",
    "sm_count_target",
    "solution_index",
    "flags",
    "requested_algo",
    "algo",
    "rocblas_flags",
)


def _key(columns: tuple[str, ...]) -> str:
    """One text of several columns; NULL is a value of its own (so no two keys collide)."""
    return "concat_ws('|', " + ", ".join(f"coalesce(CAST(\"{c}\" AS VARCHAR), '-')" for c in columns) + ")"


QUERY = f"""
WITH calls AS (
    SELECT run, rank, file, line, call_count, function, trans, m, n, k, a_type, compute_type,
           {_key(SIGNATURE)} AS signature, {_key(ALGORITHM)} AS algorithm,
           concat_ws(' ', 'algoId=' || algo_id, 'tile=' || tile, 'stages=' || stages, 'splitK=' || num_splits_k,
                     'solution=' || solution_index, 'flags=' || flags, 'algo=' || algo) AS algorithm_text
    FROM (SELECT *, CASE WHEN library = 'cublasLt' THEN 'cublasLtMatmul'
                         ELSE regexp_replace(function, '_64$', '') END AS family,
                 transa || transb AS trans, json_extract_string(extra, '$.flags') AS rocblas_flags
          FROM read_parquet($files, hive_partitioning = true))
),
variants AS (
    SELECT run, rank, file, signature, algorithm, any_value(algorithm_text) AS algorithm_text,
           sum(call_count) AS calls, min(line) AS first_line
    FROM calls GROUP BY run, rank, file, signature, algorithm
),
differing AS (
    SELECT run, signature FROM variants GROUP BY run, signature HAVING count(DISTINCT algorithm) > 1
)
SELECT v.run, v.signature, any_value(c.function) AS function, any_value(c.trans) AS trans, any_value(c.m) AS m,
       any_value(c.n) AS n, any_value(c.k) AS k, any_value(c.a_type) AS a_type,
       any_value(c.compute_type) AS compute_type, v.rank, v.file,
       list({{'algorithm': v.algorithm_text, 'calls': v.calls, 'first_line': v.first_line}}
            ORDER BY v.first_line) AS variants
FROM variants v JOIN differing USING (run, signature)
JOIN calls c ON c.run = v.run AND c.signature = v.signature AND c.rank = v.rank AND c.line = v.first_line
GROUP BY v.run, v.signature, v.rank, v.file
ORDER BY v.run, m, n, k, v.signature, v.rank
"""


def differences(dataset: str) -> list[dict]:
    """Per run and signature that ran more than one algorithm: each rank's algorithms (see the docstring)."""
    import duckdb

    files = (
        [str(p) for p in sorted(Path(dataset).glob("run=*/rank=*/*.parquet"))]
        if "://" not in dataset
        else [dataset.rstrip("/") + "/*/*/*.parquet"]
    )
    if not files:
        raise SystemExit(f"{dataset}: no Parquet files (write them with blaslog parse ... --format parquet -o DIR)")
    rows = duckdb.connect().execute(QUERY, {"files": files}).fetchall()
    out: dict[tuple[str, str], dict] = {}
    for run, signature, function, trans, m, n, k, a_type, compute_type, rank, file, variants in rows:
        entry = out.setdefault(
            (run, signature),
            {"run": run, "gemm": f"{function} {trans} {m}x{n}x{k} {a_type}/{compute_type}", "ranks": []},
        )
        entry["ranks"].append({"rank": rank, "file": file, "variants": variants})
    for entry in out.values():
        entry["within_rank"] = [r["rank"] for r in entry["ranks"] if len(r["variants"]) > 1]
        entry["across_ranks_only"] = not entry["within_rank"]
    return list(out.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", help="the folder blaslog wrote (--format parquet -o DIR)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    found = differences(args.dataset)
    if args.json:
        print(json.dumps(found, indent=2, default=str))
        return
    if not found:
        print("every signature ran one algorithm on every rank")
    for entry in found:
        where = (
            f"differs within ranks {entry['within_rank']}"
            if entry["within_rank"]
            else "each rank consistent, the ranks differ"
        )
        print(f"{entry['run']}: {entry['gemm']}: {where}")
        for rank in entry["ranks"]:
            text = "; ".join(f"{v['algorithm']} x{v['calls']} (from line {v['first_line']})" for v in rank["variants"])
            print(f"  rank {rank['rank']}: {text}")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
