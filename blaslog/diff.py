"""Align a sharded (tensor-parallel) run with an unsharded run and class every algorithm difference.

Alignment is a sequence alignment per thread: each run's GEMMs are taken in
call order within a thread, threads are paired by how alike their call
sequences are, and the sequences are aligned on a *coarse key* (function
family, transposes, types, compute type, epilogue, batched or not) that leaves
the dimensions out, so that a sharded GEMM lines up with its unsharded
counterpart and a repeated shape pairs with its own occurrence. A pair is kept
when its dimensions agree, or when exactly one of m, n, k, batch is the
unsharded value divided by the TP degree (column-parallel layers divide output
features, row-parallel layers input features, attention divides heads, i.e.
the batch). The TP degree is the ratio most pairs agree on, unless given.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from itertools import chain
from typing import Any

from blaslog.caps import Caps
from blaslog.explain import Difference, compare, explain
from blaslog.records import GemmCall
from blaslog.report import Finding, Location, Occurrence, sort_findings

_WINDOW = 64
_SEQUENCE_MATCHER_LIMIT = 4_000_000


@dataclass(frozen=True, slots=True)
class TpInference:
    """The tensor-parallel degree used for matching, and how it was found."""

    tp: int
    """The degree."""
    how: str
    """`given` (--tp), `inferred`, or `none` (no pair has a sharded dimension)."""
    agreeing: int = 0
    """Pairs whose dimension ratio equals `tp`."""
    sharded_pairs: int = 0
    """Pairs with one dimension divided."""
    equal_pairs: int = 0
    """Pairs with equal dimensions."""

    @property
    def confidence(self) -> float:
        """Share of sharded pairs that agree with `tp` (1.0 when given)."""
        if self.how == "given":
            return 1.0
        return self.agreeing / self.sharded_pairs if self.sharded_pairs else 0.0

    def describe(self) -> str:
        """One line for people."""
        if self.how == "given":
            return f"TP {self.tp} (given with --tp)"
        if self.how == "none":
            return f"TP 1: no GEMM pair has a sharded dimension ({self.equal_pairs} pairs with equal shapes)"
        return (
            f"TP {self.tp} inferred from {self.agreeing} of {self.sharded_pairs} GEMM pairs with a sharded "
            f"dimension ({self.confidence:.0%}); {self.equal_pairs} pairs have equal shapes"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "tp": self.tp,
            "how": self.how,
            "confidence": round(self.confidence, 4),
            "agreeing": self.agreeing,
            "sharded_pairs": self.sharded_pairs,
            "equal_pairs": self.equal_pairs,
            "text": self.describe(),
        }


@dataclass(slots=True)
class DiffResult:
    """The outcome of comparing one sharded input with one unsharded input."""

    sharded_file: str
    unsharded_file: str
    tp: TpInference
    pairs: list[tuple[GemmCall, GemmCall]] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    unmatched_sharded: list[GemmCall] = field(default_factory=list)
    unmatched_unsharded: list[GemmCall] = field(default_factory=list)
    algorithm_info: bool = True
    """False when neither run's log names the algorithm (only shapes could be compared)."""
    reversed_hint: bool = False
    """True when the first run's GEMMs look like the unsharded ones (the runs were probably given swapped)."""
    identical_pairs: int = 0
    """Pairs that ran the same algorithm."""


def _call(record: Any) -> GemmCall:
    """The distinct call behind a record (an Occurrence of a CompactRun, or the record itself)."""
    return getattr(record, "call", record)  # type: ignore[no-any-return]


def coarse_key(record: GemmCall) -> tuple[Any, ...]:
    """What must agree between a sharded GEMM and its counterpart, dimensions left out."""
    record = _call(record)
    return (
        record.library,
        record.family,
        record.trans,
        record.a_type,
        record.b_type,
        record.c_type,
        record.d_type,
        record.compute_type,
        record.scale_type,
        record.epilogue,
        record.order,
        record.batch_count > 1,
    )


def _loose_key(record: GemmCall) -> tuple[Any, ...]:
    return (record.library, record.family, record.trans, record.batch_count > 1)


def dims_match(s: GemmCall, u: GemmCall, tp: int) -> bool:
    """True when the dimensions agree, or exactly one is the unsharded value divided by `tp`."""
    sd, ud = s.dims(), u.dims()
    if sd == ud:
        return True
    if tp <= 1:
        return False
    differing = [(a, b) for a, b in zip(sd, ud, strict=True) if a != b]
    if len(differing) != 1:
        return False
    a, b = differing[0]
    return a is not None and b is not None and a * tp == b


def _ratio(s: GemmCall, u: GemmCall) -> int | None:
    """1 for equal dimensions, the divisor when exactly one dimension is divided, None otherwise."""
    sd, ud = s.dims(), u.dims()
    if sd == ud:
        return 1
    differing = [(a, b) for a, b in zip(sd, ud, strict=True) if a != b]
    if len(differing) != 1:
        return None
    a, b = differing[0]
    if not a or not b or b % a or b <= a:
        return None
    return b // a


def infer_tp(candidates: Sequence[tuple[GemmCall, GemmCall]]) -> TpInference:
    """The TP degree most candidate pairs agree on."""
    votes: Counter[int] = Counter()
    equal = 0
    calls: dict[tuple[int, int], tuple[GemmCall, GemmCall]] = {}
    count: Counter[tuple[int, int]] = Counter()
    for s, u in candidates:  # each pair of distinct calls is looked at once
        ids = (id(_call(s)), id(_call(u)))
        if ids not in calls:
            calls[ids] = (_call(s), _call(u))
        count[ids] += 1
    for ids, (s, u) in calls.items():
        ratio = _ratio(s, u)
        if ratio == 1:
            equal += count[ids]
        elif ratio is not None:
            votes[ratio] += count[ids]
    if not votes:
        return TpInference(1, "none", equal_pairs=equal)
    tp, agreeing = max(votes.items(), key=lambda kv: (kv[1], -kv[0]))
    return TpInference(tp, "inferred", agreeing, sum(votes.values()), equal)


class _KeyNumbers:
    """The coarse key of each record as a number (equal keys, equal numbers), worked out once per distinct call:
    a run repeats a few calls many times, and the alignment then compares and hashes small integers."""

    def __init__(self) -> None:
        self.by_call: dict[int, int] = {}  # id of a distinct call -> number
        self.by_key: dict[tuple[Any, ...], int] = {}

    def of(self, records: Sequence[GemmCall]) -> list[int]:
        by_call, by_key = self.by_call, self.by_key
        out = []
        for record in records:
            call = _call(record)
            number = by_call.get(id(call))
            if number is None:
                number = by_call[id(call)] = by_key.setdefault(coarse_key(call), len(by_key))
            out.append(number)
        return out


def _by_library(
    sharded: Sequence[GemmCall], unsharded: Sequence[GemmCall]
) -> list[tuple[Sequence[GemmCall], Sequence[GemmCall]]]:
    """The two runs' calls library by library (a rank that logged cuBLASLt and cuBLAS, or rocBLAS and hipBLASLt,
    into one file holds two call sequences, whose order relative to each other means nothing: each library's
    calls are aligned with the other run's calls of that library). One pair when each run logged one library."""
    libraries = dict.fromkeys(_call(r).library for r in chain(sharded, unsharded))
    if len(libraries) < 2:
        return [(sharded, unsharded)]
    sides: list[dict[str, list[GemmCall]]] = []
    for records in (sharded, unsharded):
        side: dict[str, list[GemmCall]] = {name: [] for name in libraries}
        for record in records:
            side[_call(record).library].append(record)
        sides.append(side)
    return [(sides[0][name], sides[1][name]) for name in libraries]


def _by_thread(records: Sequence[GemmCall]) -> list[list[GemmCall]]:
    groups: dict[Any, list[GemmCall]] = {}
    for record in records:
        groups.setdefault(record.thread, []).append(record)
    return list(groups.values())


def _pair_threads(
    a: list[list[GemmCall]], b: list[list[GemmCall]], numbers: _KeyNumbers
) -> list[tuple[list[GemmCall], list[GemmCall]]]:
    """Pair thread groups by how alike their call sequences are (greedy, deterministic)."""
    if len(a) == 1 and len(b) == 1:
        return [(a[0], b[0])]
    scores = []
    counts_b = [(Counter(kb), len(kb)) for kb in map(numbers.of, b)]
    for i, ga in enumerate(a):
        ka = numbers.of(ga)
        count_a = Counter(ka)
        for j, (count_b, size_b) in enumerate(counts_b):
            scores.append((_quick_ratio(count_a, len(ka), count_b, size_b), -abs(i - j), i, j))
    scores.sort(reverse=True)
    used_a: set[int] = set()
    used_b: set[int] = set()
    pairs = []
    for score, _, i, j in scores:
        if i in used_a or j in used_b or score == 0:
            continue
        used_a.add(i)
        used_b.add(j)
        pairs.append((i, j))
    out = [(a[i], b[j]) for i, j in sorted(pairs)]
    out += [(a[i], []) for i in range(len(a)) if i not in used_a]
    out += [([], b[j]) for j in range(len(b)) if j not in used_b]
    return out


def _quick_ratio(count_a: Counter[int], size_a: int, count_b: Counter[int], size_b: int) -> float:
    """``SequenceMatcher(None, a, b).quick_ratio()`` of two sequences from their element counts and lengths: twice
    the elements they share (each as often as both hold it) over their total length, 1.0 for two empty ones. The
    same float, without the matcher's index of `b` that quick_ratio does not read."""
    length = size_a + size_b
    if not length:
        return 1.0
    return 2.0 * (count_a & count_b).total() / length


def _align(
    s: list[GemmCall], u: list[GemmCall], numbers: _KeyNumbers
) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """Candidate pairs (indices) and the indices left over on each side."""
    ks = numbers.of(s)
    ku = numbers.of(u)
    if ks == ku:
        return [(i, i) for i in range(len(s))], [], []
    opcodes: Sequence[tuple[str, int, int, int, int]]
    if len(ks) * len(ku) <= _SEQUENCE_MATCHER_LIMIT:
        opcodes = SequenceMatcher(None, ks, ku, autojunk=False).get_opcodes()
    else:
        opcodes = _windowed_opcodes(ks, ku)
    pairs: list[tuple[int, int]] = []
    left_s: list[int] = []
    left_u: list[int] = []
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            pairs.extend(zip(range(i1, i2), range(j1, j2), strict=True))
            continue
        # a replaced run: pair calls of the same family and transposes whose types changed
        i, j = i1, j1
        while i < i2 and j < j2:
            if _loose_key(s[i]) == _loose_key(u[j]):
                pairs.append((i, j))
                i, j = i + 1, j + 1
            elif i2 - i > j2 - j:
                left_s.append(i)
                i += 1
            else:
                left_u.append(j)
                j += 1
        left_s.extend(range(i, i2))
        left_u.extend(range(j, j2))
    return pairs, left_s, left_u


def _windowed_opcodes(ks: list[Any], ku: list[Any]) -> list[tuple[str, int, int, int, int]]:
    """A linear-time lockstep alignment with resynchronisation inside a window (for very long runs)."""
    ops: list[tuple[str, int, int, int, int]] = []
    i = j = 0
    while i < len(ks) and j < len(ku):
        if ks[i] == ku[j]:
            start_i, start_j = i, j
            while i < len(ks) and j < len(ku) and ks[i] == ku[j]:
                i, j = i + 1, j + 1
            ops.append(("equal", start_i, i, start_j, j))
            continue
        best = None
        for step in range(1, _WINDOW):
            if i + step < len(ks) and ks[i + step] == ku[j]:
                best = ("delete", i, i + step, j, j)
                break
            if j + step < len(ku) and ks[i] == ku[j + step]:
                best = ("insert", i, i, j, j + step)
                break
        if best is None:
            best = ("replace", i, i + 1, j, j + 1)
        ops.append(best)
        i, j = best[2], best[4]
    if i < len(ks):
        ops.append(("delete", i, len(ks), j, j))
    if j < len(ku):
        ops.append(("insert", i, i, j, len(ku)))
    return ops


def row_key(record: GemmCall) -> tuple[Any, ...]:
    """What makes a row of a tuning file (TunableOp: operator, parameters and types) the row of one GEMM: its
    coarse key, dimensions and leading dimensions."""
    call = _call(record)
    return (coarse_key(call), call.dims(), call.lda, call.ldb, call.ldc)


def pair_by_key(
    sharded: Sequence[GemmCall], unsharded: Sequence[GemmCall], tp: int | None
) -> tuple[list[tuple[GemmCall, GemmCall]], list[GemmCall], list[GemmCall], TpInference]:
    """Pair the rows of two tuning files, which are sets written in hash order, not call sequences: a row with
    the other file's row of the same key (:func:`row_key`), then, of the rows left, one whose single differing
    dimension is the other's divided by the TP degree (`tp`, else the degree most such rows agree on: rows that
    share a key are the same GEMM in both runs, and say nothing of the degree). Returns (pairs, sharded rows left,
    unsharded rows left, the degree and how it was found)."""
    by_key: dict[tuple[Any, ...], list[int]] = {}
    for j, u in enumerate(unsharded):
        by_key.setdefault(row_key(u), []).append(j)
    taken: set[int] = set()
    pairs: list[tuple[GemmCall, GemmCall]] = []
    left_s: list[GemmCall] = []
    for s in sharded:
        free = [j for j in by_key.get(row_key(s), ()) if j not in taken]
        if free:
            taken.add(free[0])
            pairs.append((s, unsharded[free[0]]))
        else:
            left_s.append(s)
    left_u = [u for j, u in enumerate(unsharded) if j not in taken]
    by_coarse: dict[tuple[Any, ...], list[GemmCall]] = {}
    for u in left_u:
        by_coarse.setdefault(coarse_key(u), []).append(u)
    if tp:
        inference = TpInference(tp, "given")
    else:
        votes: Counter[int] = Counter()
        for s in left_s:
            for ratio in {_ratio(_call(s), _call(u)) for u in by_coarse.get(coarse_key(s), ())}:
                if ratio is not None and ratio > 1:
                    votes[ratio] += 1
        if votes:
            degree, agreeing = max(votes.items(), key=lambda kv: (kv[1], -kv[0]))
            inference = TpInference(degree, "inferred", agreeing, sum(votes.values()), len(pairs))
        else:
            inference = TpInference(1, "none", equal_pairs=len(pairs))
    if inference.tp > 1:
        used: set[int] = set()
        rest: list[GemmCall] = []
        for s in left_s:
            match = next(
                (
                    u
                    for u in by_coarse.get(coarse_key(s), ())
                    if id(u) not in used and dims_match(_call(s), _call(u), inference.tp)
                ),
                None,
            )
            if match is None:
                rest.append(s)
            else:
                used.add(id(match))
                pairs.append((s, match))
        left_s, left_u = rest, [u for u in left_u if id(u) not in used]
    return pairs, left_s, left_u, inference


def diff_runs(
    sharded: Sequence[GemmCall],
    unsharded: Sequence[GemmCall],
    *,
    tp: int | None = None,
    caps: Caps | None = None,
    sharded_file: str = "",
    unsharded_file: str = "",
    keyed: bool = False,
) -> DiffResult:
    """Compare the GEMMs of a sharded run with those of an unsharded run (`keyed`: both are tuning files, whose
    rows are paired by key, see :func:`pair_by_key`, not aligned as call sequences)."""
    candidates: list[tuple[GemmCall, GemmCall]] = []
    unmatched_s: list[GemmCall] = []
    unmatched_u: list[GemmCall] = []
    if keyed:
        candidates, unmatched_s, unmatched_u, inference = pair_by_key(sharded, unsharded, tp)
    else:
        numbers = _KeyNumbers()
        threads = (
            thread_pair
            for ls, lu in _by_library(sharded, unsharded)
            for thread_pair in _pair_threads(_by_thread(ls), _by_thread(lu), numbers)
        )
        for gs, gu in threads:
            pairs, left_s, left_u = _align(gs, gu, numbers)
            candidates.extend((gs[i], gu[j]) for i, j in pairs)
            unmatched_s.extend(gs[i] for i in left_s)
            unmatched_u.extend(gu[j] for j in left_u)
        inference = TpInference(tp, "given") if tp else infer_tp(candidates)
    result = DiffResult(sharded_file, unsharded_file, inference)
    if inference.how == "none" and infer_tp([(u, s) for s, u in candidates]).how == "inferred":
        result.reversed_hint = True
    matching: dict[tuple[int, int], bool] = {}  # by pair of distinct calls
    for s, u in candidates:
        ids = (id(_call(s)), id(_call(u)))
        match = matching.get(ids)
        if match is None:
            match = matching[ids] = dims_match(_call(s), _call(u), inference.tp)
        if match:
            result.pairs.append((s, u))
        else:
            unmatched_s.append(s)
            unmatched_u.append(u)
    result.unmatched_sharded = sorted(unmatched_s, key=lambda r: r.line)
    result.unmatched_unsharded = sorted(unmatched_u, key=lambda r: r.line)
    distinct = {id(call): call for call in map(_call, chain(sharded, unsharded))}
    result.algorithm_info = any(call.has_algorithm_info() for call in distinct.values())
    result.findings, result.identical_pairs = _findings(result.pairs, caps)
    return result


def _findings(pairs: list[tuple[GemmCall, GemmCall]], caps: Caps | None) -> tuple[list[Finding], int]:
    folded: dict[Any, list[tuple[GemmCall, GemmCall, Difference]]] = {}
    identical = 0
    compared: dict[tuple[int, int], tuple[Difference | None, Any]] = {}  # per pair of distinct calls
    for s, u in pairs:
        ids = (id(_call(s)), id(_call(u)))
        known = compared.get(ids)
        if known is None:
            difference = compare(_call(s), _call(u), caps)
            key = (
                (difference.fields, difference.cls, _call(s).signature(), _call(u).signature()) if difference else None
            )
            known = compared[ids] = (difference, key)
        difference, key = known
        if difference is None:
            identical += 1
            continue
        folded.setdefault(key, []).append((s, u, difference))
    findings = []
    for occurrences in folded.values():
        s, u, difference = occurrences[0]
        findings.append(_finding(s, u, difference, occurrences, caps))
    return sort_findings(findings), identical


def _kind(difference: Difference) -> str:
    names = difference.names
    if "solution_index" in names:
        return "tp_solution_diff"
    if any(n in names for n in ("a_type", "b_type", "c_type", "d_type", "compute_type", "scale_type")):
        return "tp_type_diff"
    return "tp_algo_diff"


def _finding(
    s: GemmCall,
    u: GemmCall,
    difference: Difference,
    occurrences: list[tuple[GemmCall, GemmCall, Difference]],
    caps: Caps | None,
) -> Finding:
    changed = ", ".join(
        f"{name} {a if a is not None else '-'} vs {b if b is not None else '-'}" for name, (a, b) in difference.fields
    )
    title = f"{s.shape_text()} vs {u.shape_text()}: {changed}"
    flags = difference.flags
    data: dict[str, Any] = {
        "sharded": _brief(s),
        "unsharded": _brief(u),
        "sharded_algo": s.algorithm_text(),
        "unsharded_algo": u.algorithm_text(),
    }
    if flags[0] is not None or flags[1] is not None:
        data["numerical_impl_flags"] = {
            "sharded": hex(flags[0]) if flags[0] is not None else None,
            "unsharded": hex(flags[1]) if flags[1] is not None else None,
        }
    # the whole signature of both sides is in the key (two GEMMs of one shape with other types or epilogues are
    # two causes), but no file, line or thread: the same cause on another rank or run keeps its fingerprint
    signatures = json.dumps([[_plain(v) for v in _call(s).signature()], [_plain(v) for v in _call(u).signature()]])
    return Finding(
        kind=_kind(difference),
        cls=difference.cls,
        title=title,
        explanation=explain(difference, s, u, ("sharded", "unsharded")),
        location=Location(s.file, s.line, "sharded"),
        related=(Location(u.file, u.line, "unsharded"),),
        fields=difference.fields,
        count=len(occurrences),
        key=f"{s.family}|{s.shape_text()}|{u.shape_text()}|{changed}|{signatures}",
        occurrences=tuple(Occurrence(a.line, b.line, a.thread, b.thread) for a, b, _ in occurrences),
        data=data,
        gemms=(_call(s), _call(u)),
    )


def _plain(value: Any) -> Any:
    """A signature value for JSON: str Enums by their value."""
    return value if value is None or isinstance(value, (int, float)) else str(getattr(value, "value", value))


def _brief(record: GemmCall) -> dict[str, Any]:
    return {
        "file": record.file,
        "line": record.line,
        "thread": record.thread,
        "function": record.function,
        "m": record.m,
        "n": record.n,
        "k": record.k,
        "batch_count": record.batch_count,
        "trans": record.trans,
        "compute_type": record.compute_type,
        "a_type": record.a_type,
        "algo": record.algorithm_text(),
    }
