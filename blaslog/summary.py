"""What a run did, at a glance: distinct GEMM signatures, call counts, threads, algorithms used."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from blaslog.caps import Caps
from blaslog.check import group_variants, variant_key
from blaslog.explain import describe_flags
from blaslog.records import GemmCall
from blaslog.runs import CompactRun


@dataclass(slots=True)
class _Tally:
    """The calls of one signature that ran with one algorithm."""

    record: GemmCall
    count: int = 0
    threads: set[str] = field(default_factory=set)
    first_line: int | None = None

    def add(self, count: int, threads: Iterable[Any], first_line: int) -> None:
        self.count += count
        self.threads.update(str(t) for t in threads if t is not None)
        self.first_line = first_line if self.first_line is None else min(self.first_line, first_line)


def summarize(records: Sequence[GemmCall], *, caps: Caps | None = None) -> list[dict[str, Any]]:
    """One row per distinct signature, most called first; each with its algorithms and their counts."""
    groups: dict[tuple[Any, ...], list[_Tally]] = {}
    for signature, variants in group_variants(records).items():
        tallies = groups[signature] = []
        for variant in variants:
            tally = _Tally(variant.record)
            tally.add(variant.count, (c.thread for c in variant.calls), min(c.line for c in variant.calls))
            tallies.append(tally)
    return _rows(groups, caps)


def summarize_runs(runs: Sequence[CompactRun], *, caps: Caps | None = None) -> list[dict[str, Any]]:
    """:func:`summarize` of the runs' calls in order, read from each run's distinct calls and arrays (no
    object per call: counts, threads and first lines come from C-level passes over the arrays)."""
    groups: dict[tuple[Any, ...], dict[tuple[Any, ...], _Tally]] = {}
    for run in runs:
        counts = Counter(run.which)
        first = dict(zip(reversed(run.which), reversed(run.lines), strict=True))  # distinct call -> its first line
        threads: dict[int, set[Any]] = {}
        for index, thread in set(zip(run.which, run.thread_of, strict=True)):
            threads.setdefault(index, set()).add(run.threads[thread])
        for index in sorted(first, key=first.__getitem__):  # in order of first appearance
            call = run.calls[index]
            variants = groups.setdefault(call.signature(), {})
            key = variant_key(call)
            tally = variants.get(key)
            if tally is None:
                tally = variants[key] = _Tally(call)
            tally.add(counts[index] * call.call_count, threads[index], first[index])
    return _rows({signature: list(variants.values()) for signature, variants in groups.items()}, caps)


def _rows(groups: dict[tuple[Any, ...], list[_Tally]], caps: Caps | None) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for tallies in groups.values():
        first = tallies[0].record
        threads = sorted(set().union(*(t.threads for t in tallies)))
        algos = []
        for tally in tallies:
            entry: dict[str, Any] = {"algo": tally.record.algorithm_text(), "count": tally.count}
            if caps is not None:
                entry["numerics"] = describe_flags(caps.flags(tally.record))
            algos.append(entry)
        rows.append(
            {
                "library": first.library,
                "function": first.function,
                "trans": first.trans,
                "m": first.m,
                "n": first.n,
                "k": first.k,
                "batch": first.batch_count,
                "types": first.types_text(),
                "compute": first.compute_type,
                "calls": sum(t.count for t in tallies),
                "threads": ",".join(threads) if threads else "-",
                "first_line": min(t.first_line for t in tallies if t.first_line is not None),
                "algorithms": algos,
                "file": first.file,
            }
        )
    rows.sort(key=lambda r: (-r["calls"], r["file"], r["first_line"]))
    return rows
