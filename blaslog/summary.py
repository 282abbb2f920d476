"""What a run did, at a glance: distinct GEMM signatures, call counts, threads, algorithms used."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from blaslog.caps import Caps
from blaslog.check import group_variants
from blaslog.explain import describe_flags
from blaslog.records import GemmCall


def summarize(records: Sequence[GemmCall], *, caps: Caps | None = None) -> list[dict[str, Any]]:
    """One row per distinct signature, most called first; each with its algorithms and their counts."""
    rows = []
    for variants in group_variants(records).values():
        first = variants[0].record
        calls = [c for v in variants for c in v.calls]
        threads = sorted({str(c.thread) for c in calls if c.thread is not None})
        algos = []
        for variant in variants:
            entry: dict[str, Any] = {"algo": variant.record.algorithm_text(), "count": variant.count}
            if caps is not None:
                flags = caps.flags(variant.record)
                entry["numerics"] = describe_flags(flags)
            algos.append(entry)
        rows.append({
            "library": first.library,
            "function": first.function,
            "trans": first.trans,
            "m": first.m, "n": first.n, "k": first.k,
            "batch": first.batch_count,
            "types": "/".join(str(t) for t in (first.a_type, first.b_type, first.c_type, first.d_type)),
            "compute": first.compute_type,
            "calls": sum(v.count for v in variants),
            "threads": ",".join(threads) if threads else "-",
            "first_line": min(c.line for c in calls),
            "algorithms": algos,
            "file": first.file,
        })
    rows.sort(key=lambda r: (-r["calls"], r["file"], r["first_line"]))
    return rows
