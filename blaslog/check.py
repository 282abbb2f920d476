"""Look inside one run: the same GEMM run with different algorithms, flags or solutions.

Calls are grouped by signature (shape, types, transposes, compute type,
epilogue, leading dimensions); a group with more than one algorithm is a
finding, each variant with where it ran (threads, first and last line, count).
``batch_invariance`` groups GEMMs that differ in one dimension only (the token
dimension) and shows which ranges of it ran which algorithm.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from blaslog.caps import Caps
from blaslog.explain import NUMERIC_EXTRA, compare, compared, explain, numeric_extra
from blaslog.records import ALGORITHM_FIELDS, GEMM_FIELD_NAMES, TUNING_FORMATS, GemmCall
from blaslog.report import Finding, Location, finding_class, sort_findings


@dataclass(slots=True)
class Variant:
    """One algorithm a signature ran with."""

    record: GemmCall
    """The first call with this algorithm."""
    calls: list[GemmCall] = field(default_factory=list)
    """Every call with it."""

    @property
    def count(self) -> int:
        """Calls, counting profile entries by their call_count."""
        return sum(c.call_count for c in self.calls)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        threads = sorted({c.thread for c in self.calls if c.thread is not None})
        return {
            "algo": self.record.algorithm_text(),
            "count": self.count,
            "threads": threads,
            "first_line": self.calls[0].line,
            "last_line": self.calls[-1].line,
            "lines": [c.line for c in self.calls[:50]],
            "alignment": _min_alignments(self.calls),
        }


def variant_key(record: GemmCall) -> tuple[Any, ...]:
    """What tells two algorithms of one signature apart: the algorithm fields (as compared between calls), the
    rocBLAS flags and cuBLAS's math mode (TF32 tensor-op math on or off)."""
    return (
        *(compared(record, name) for name in ALGORITHM_FIELDS),
        dict(record.extra).get("flags"),
        *numeric_extra(record),
    )


def group_variants(records: Sequence[GemmCall]) -> dict[tuple[Any, ...], list[Variant]]:
    """Signature -> variants in order of first appearance."""
    groups: dict[tuple[Any, ...], dict[tuple[Any, ...], Variant]] = {}
    variant_of: dict[int, Variant] = {}  # per distinct call (the occurrences of a CompactRun share theirs)
    for record in records:
        call = getattr(record, "call", record)
        variant = variant_of.get(id(call))
        if variant is None:
            variants = groups.setdefault(call.signature(), {})
            key = variant_key(call)
            variant = variants.get(key)
            if variant is None:
                variant = variants[key] = Variant(record)
            variant_of[id(call)] = variant
        variant.calls.append(record)
    return {sig: list(v.values()) for sig, v in groups.items()}


BannerBetween = Callable[[str, int, int], "int | None"]
"""(file, after line, before line) -> the first line between them where a library starts (its banner or version
line, see ``blaslog.formats.banner``), or None."""


def check_run(
    records: Sequence[GemmCall], *, caps: Caps | None = None, banner_between: BannerBetween | None = None
) -> list[Finding]:
    """Findings for every signature that ran with more than one algorithm, flags value or solution. Each says
    which threads it compares; where its two variants ran on threads whose calls never interleave and a library
    starts again between them (`banner_between` looks), that the file may hold two runs."""
    if any(getattr(r, "call", r).log_format not in TUNING_FORMATS for r in records):
        # a log that also quotes a tuning table (the bench's winner): the choice is no call of the run
        records = [r for r in records if getattr(r, "call", r).log_format not in TUNING_FORMATS]
    spans: dict[Any, tuple[int, int]] = {}
    for record in records:
        if record.thread is not None:
            low, high = spans.get(record.thread, (record.line, record.line))
            spans[record.thread] = (min(low, record.line), max(high, record.line))
    findings = []
    for variants in group_variants(records).values():
        if len(variants) < 2:
            continue
        findings.append(_finding(variants, caps, _thread_note(variants, spans, banner_between)))
    return sort_findings(findings)


def _thread_note(
    variants: list[Variant], spans: dict[Any, tuple[int, int]], banner_between: BannerBetween | None
) -> str:
    """Which threads a finding compares (cuBLASLt's and cuBLAS's bracket field, hipBLASLt's process id), and
    whether they look like two runs pasted into one file (never dropping the finding on that guess)."""
    sets = [sorted({str(c.thread) for c in v.calls if c.thread is not None}) for v in variants]
    if not all(sets):
        return ""
    if len({t for threads in sets for t in threads}) == 1:
        return f" Every call of it ran on thread {sets[0][0]}."
    parts = "; ".join(f"variant {i} on {_thread_list(threads)}" for i, threads in enumerate(sets, 1))
    note = (
        f" It compares calls on several threads ({parts}). In cuBLASLt and cuBLAS logs the bracketed number is the "
        "thread id: a forward GEMM on the main thread and its recompute on the autograd thread are one run, and "
        "compared as such."
    )
    if len(sets) != 2 or set(sets[0]) & set(sets[1]) or banner_between is None:
        return note
    first, second = ([spans[t] for t in threads] for threads in sets)
    if max(e for _, e in first) < min(b for b, _ in second):
        before, after, end, start = sets[0], sets[1], max(e for _, e in first), min(b for b, _ in second)
    elif max(e for _, e in second) < min(b for b, _ in first):
        before, after, end, start = sets[1], sets[0], max(e for _, e in second), min(b for b, _ in first)
    else:
        return note  # the threads' calls interleave: one process
    file = variants[0].record.file
    line = banner_between(file, end, start)
    if line is None:
        return note
    return note + (
        f" Yet every call of {_thread_list(before)} comes before every call of {_thread_list(after)} (lines up to "
        f"{end}, then from {start}), and the library starts again at line {line}: the file may hold two runs pasted "
        f"one after the other. Check them separately: `head -n {line - 1} {file} > run1.log`, `tail -n +{line} "
        f"{file} > run2.log`, then `blaslog check run1.log`, `blaslog check run2.log` and `blaslog diff --tp 1 "
        "run2.log run1.log`."
    )


def _thread_list(threads: Sequence[str]) -> str:
    return ("thread " if len(threads) == 1 else "threads ") + ", ".join(threads)


def _finding(variants: list[Variant], caps: Caps | None, thread_note: str = "") -> Finding:
    first = variants[0].record
    differences = [compare(first, v.record, caps) for v in variants[1:]]
    worst = max((d for d in differences if d is not None), key=lambda d: _rank(d.cls))
    fields = _differing_fields(worst, differences)
    from blaslog.records import LOG_KEYS

    reverse = {v: k for k, v in LOG_KEYS.items()}
    values = {name: tuple(_field(v.record, reverse.get(name, name)) for v in variants) for name in fields}
    math_only = set(fields) <= {key.split(".")[-1] for key in NUMERIC_EXTRA}
    kind, what = _kind_of(fields, math_only)
    shown_extra = [key for key in NUMERIC_EXTRA if key.split(".")[-1] in fields]
    described = "; ".join(
        f"{_variant_text(v.record, shown_extra)} x{v.count} (lines {v.calls[0].line}-{v.calls[-1].line}{_threads(v)})"
        for v in variants
    )
    title = (
        f"{first.function} {first.shape_text()} {first.a_type}/{first.compute_type}: {len(variants)} "
        f"{'math modes' if math_only else 'algorithms'}"
    )
    other = variants[differences.index(worst) + 1].record
    text = explain(worst, first, other, ("first", "other"))
    functions = sorted({c.function for v in variants for c in v.calls})
    called = f" (called as {', '.join(functions)})" if len(functions) > 1 else ""
    text = (
        f"The same GEMM ({first.shape_text()}, {first.a_type} inputs, compute {first.compute_type}){called} ran "
        f"with {len(variants)} different {what}: {described}. " + text
    )
    text += _alignment_note(variants)
    if not any(c.thread for v in variants for c in v.calls):
        text += " (This log names no threads.)"
    text += thread_note
    return Finding(
        kind=kind,
        cls=worst.cls,
        title=title,
        explanation=text,
        location=Location(first.file, first.line, "variant 1"),
        related=tuple(Location(v.record.file, v.record.line, f"variant {i}") for i, v in enumerate(variants[1:], 2)),
        fields=tuple((name, vals) for name, vals in values.items()),
        count=sum(v.count for v in variants),
        key=f"{first.file}|{first.signature()}",
        data={
            "file": first.file,
            "signature": {
                "function": first.function,
                "trans": first.trans,
                "m": first.m,
                "n": first.n,
                "k": first.k,
                "batch_count": first.batch_count,
                "a_type": first.a_type,
                "compute_type": first.compute_type,
                "lda": first.lda,
                "ldb": first.ldb,
                "ldc": first.ldc,
            },
            "variants": [v.to_dict() for v in variants],
        },
        gemms=(other, first),
    )


def _kind_of(fields: dict[str, list[Any]], math_only: bool) -> tuple[str, str]:
    """The finding's kind, and what the variants differ in (flags, math modes or algorithms)."""
    if "flags" in fields:
        return "same_signature_different_flags", "flags"
    if math_only:
        return "same_signature_different_math_mode", "math modes"
    return "same_signature_different_algo", "algorithms"


def _differing_fields(worst: Any, differences: list[Any]) -> dict[str, list[Any]]:
    """The fields that differ between the variants, those of the worst difference first."""
    fields: dict[str, list[Any]] = {}
    for name, _ in worst.fields:
        fields[name] = []
    for d in differences:
        if d is None:
            continue
        for name, _ in d.fields:
            fields.setdefault(name, [])
    return fields


def _variant_text(record: GemmCall, extra: list[str]) -> str:
    """The variant's algorithm, and its math mode when variants differ in it."""
    values = dict(record.extra)
    shown = " ".join(f"{key.split('.')[-1]}={values.get(key)}" for key in extra)
    return f"{record.algorithm_text()} {shown}" if shown else record.algorithm_text()


def _threads(variant: Variant) -> str:
    threads = sorted({str(c.thread) for c in variant.calls if c.thread})
    return f", threads {', '.join(threads)}" if threads else ""


def _field(record: GemmCall, name: str) -> Any:
    if name == "flags":
        from blaslog.flags import rocblas_flags_name

        text = dict(record.extra).get("flags")
        return text if record.flags is None and text else rocblas_flags_name(record.flags)
    if name not in GEMM_FIELD_NAMES:  # a key kept in extra (cuBLAS's MathMode is `context.MathMode`)
        extra = dict(record.extra)
        return next((extra[key] for key in NUMERIC_EXTRA if key.split(".")[-1] == name), extra.get(name))
    return getattr(record, name)


def _rank(cls: str) -> int:
    return finding_class(cls).rank


def _alignment(pointer: str | None) -> int | None:
    if not pointer or not isinstance(pointer, str):
        return None
    try:
        value = int(pointer.replace("0x0x", "0x"), 16)
    except ValueError:
        return None
    if value == 0:
        return None
    align = 1
    while value % (align * 2) == 0 and align < 256:
        align *= 2
    return align


def _min_alignments(calls: list[GemmCall]) -> dict[str, int]:
    out: dict[str, int] = {}
    for call in calls:
        for letter in "abcd":
            align = _alignment(getattr(call, f"{letter}_ptr"))
            if align is not None:
                out[letter.upper()] = min(out.get(letter.upper(), 256), align)
    return out


def _alignment_note(variants: list[Variant]) -> str:
    """Name an operand whose pointer alignment differs between variants (cuBLASLt's heuristic keys on it)."""
    aligns = [_min_alignments(v.calls) for v in variants]
    notes = []
    for letter in "ABCD":
        found = [a.get(letter) for a in aligns]
        values = [v for v in found if v is not None]
        if len(values) == len(found) and len(set(values)) > 1 and min(values) < 16:
            listed = " vs ".join(f"{v}-byte" for v in values)
            notes.append(f"{letter} ({listed})")
    if not notes:
        return ""
    return (
        f" The operand pointers are aligned differently between the variants: {', '.join(notes)}; "
        "cuBLASLt chooses among algorithms by pointer alignment (see minBytesAlignment in the heuristic line), "
        "so an offset view or a sliced tensor can switch the kernel. Keeping operands 16-byte aligned "
        "(contiguous copies) makes the choice stable."
    )


# -- batch invariance -----------------------------------------------------------------------------

_DIMS = ("m", "n", "k")


def batch_invariance(records: Sequence[GemmCall]) -> list[Finding]:
    """Groups of GEMMs that differ only in one dimension and ran different algorithms across its values."""
    findings = []
    for free in _DIMS:
        groups: dict[tuple[Any, ...], list[GemmCall]] = {}
        for record in records:
            signature = list(record.signature())
            index = 3 + _DIMS.index(free)
            signature[index] = None
            # leading dimensions follow the free dimension; leave them out too
            signature = signature[:15]
            groups.setdefault(tuple(signature), []).append(record)
        for calls in groups.values():
            values = {getattr(c, free) for c in calls}
            algos = {variant_key(c) for c in calls}
            if len(values) < 2 or len(algos) < 2:
                continue
            findings.append(_batch_finding(free, calls))
    return sort_findings(findings)


def _batch_finding(free: str, calls: list[GemmCall]) -> Finding:
    by_value: dict[int, GemmCall] = {}
    for call in sorted(calls, key=lambda c: (getattr(c, free) or 0, c.line)):
        by_value.setdefault(getattr(call, free) or 0, call)
    ranges: list[dict[str, Any]] = []
    for value, call in sorted(by_value.items()):
        algo = call.algorithm_text()
        if ranges and ranges[-1]["algo"] == algo:
            ranges[-1]["to"] = value
        else:
            ranges.append({"from": value, "to": value, "algo": algo, "line": call.line})
    first = calls[0]
    listed = "; ".join(
        f"{free}={r['from']}" + (f"..{r['to']}" if r["to"] != r["from"] else "") + f": {r['algo']}" for r in ranges
    )
    title = f"{first.function} {first.trans} {first.a_type}/{first.compute_type}: algorithm depends on {free}"
    text = (
        f"GEMMs that differ only in {free} (the token dimension when it is the batch of rows) ran different "
        f"algorithms: {listed}. A row's result then depends on how many rows were in the batch "
        "(batch invariance is broken): padding to a fixed size, pinning the algorithm, or a batch-invariant "
        "mode (cuBLASLt 13 CUBLASLT_MATMUL_DESC_BATCH_INVARIANCE_FLAGS) keeps results independent of batch size."
    )
    same_algo_id = len({r["algo"].split()[0] for r in ranges}) == 1
    return Finding(
        kind="batch_dependent_algo",
        cls="schedule" if same_algo_id else "unknown",
        title=title,
        explanation=text,
        location=Location(first.file, first.line, "first"),
        related=tuple(Location(first.file, r["line"], f"{free}={r['from']}") for r in ranges[1:]),
        fields=((free, tuple(r["from"] for r in ranges)), ("algo", tuple(r["algo"] for r in ranges))),
        count=len(calls),
        key=title,
        data={"dimension": free, "ranges": ranges},
    )
