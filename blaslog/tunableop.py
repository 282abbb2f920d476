"""TunableOp files next to BLAS logs: the cross-source check, the validator comparison, and the emit writer.

A TunableOp results file (read by :class:`blaslog.formats.tunableop.TunableOp`) says which solution PyTorch
*chose* for each GEMM; a rocBLAS or hipBLASLt log says which solution *ran*. This module puts the two side by
side:

* :func:`cross_check` (``blaslog check run.log --tunableop tunableop_results0.csv``): GEMMs whose logged
  solution is not the tuned one, GEMMs that ran but were never tuned (the library's default), tuned rows that
  never ran, and, across the GPUs of one run, rows whose chosen solution differs;
* :func:`validator_findings`: two runs' Validator lines (PyTorch, ROCm/HIP, rocBLAS, hipBLASLt, GPU arch) side by
  side, first in a diff, since TunableOp rejects a file whose validators differ and solution indices do not
  carry over between versions or architectures;
* :func:`pin` and :func:`render` (``blaslog diff ... --emit-tunableop FILE``): a results file that pins the
  sharded GEMMs to the solution the unsharded run used, only where the inputs show that solution ran for the
  sharded GEMM's exact signature; everything else is listed as not pinnable.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from blaslog.records import TUNING_FORMATS, Event, GemmCall, OnError
from blaslog.report import Finding, Location

TUNED_FORMATS = TUNING_FORMATS
"""The dialects whose records are tuning choices, not executed calls."""

NUMERICAL_CHECK = "tune it with numerical checks on (PYTORCH_TUNABLEOP_NUMERICAL_CHECK=1)"
"""What to do for a GEMM that cannot be pinned from the logs."""

_CANONICAL = {
    "r_16bf": "bf16_r",
    "r_16f": "f16_r",
    "r_32f": "f32_r",
    "r_64f": "f64_r",
    "r_8f_e4m3": "f8_r",
    "r_8f_e5m2": "bf8_r",
    "r_32i": "i32_r",
    "r_8i": "i8_r",
    "c_32f": "f32_c",
    "c_64f": "f64_c",
}


def _call(record: Any) -> GemmCall:
    return getattr(record, "call", record)  # type: ignore[no-any-return]


def _dtype(value: str | None) -> str:
    text = (value or "").lower()
    return _CANONICAL.get(text, text)


def gemm_key(call: GemmCall) -> tuple[Any, ...]:
    """What a TunableOp row and a logged call of the same GEMM share: transposes, m, n, k, batch, input type."""
    return (call.transa, call.transb, call.m, call.n, call.k, call.batch_count, _dtype(call.a_type))


def _ld_agree(a: GemmCall, b: GemmCall) -> bool:
    """Leading dimensions agree where both name them (older TunableOp files and 10-field tuning rows do not)."""
    return all(x is None or y is None or x == y for x, y in ((a.lda, b.lda), (a.ldb, b.ldb), (a.ldc, b.ldc)))


def is_tuned(call: Any) -> bool:
    """True for a record of a tuning file (a choice), False for an executed call of a BLAS log."""
    return _call(call).log_format in TUNED_FORMATS


def chosen(call: GemmCall) -> tuple[str, int | None] | None:
    """(backend, index) a tuning row chose: backend `rocblas`, `hipblaslt`, `default` or `unknown` (a bare
    index); None for an untuned row."""
    extra = dict(call.extra)
    if call.log_format == "hipblaslt-tuning":
        return "hipblaslt", call.solution_index
    if extra.get("state") == "untuned" or "backend" not in extra:
        return None
    return str(extra["backend"]), call.solution_index


def ran(call: GemmCall) -> tuple[str, int | None] | None:
    """(backend, index) of the solution a logged call ran: rocBLAS's solution_index (None for the default,
    index 0), hipBLASLt's --solution_index; None when the log names no solution."""
    if call.library == "rocblas":
        if call.solution_index is None and call.algo is None:
            return None
        index = call.solution_index
        return "rocblas", index if index not in (None, 0, -1) else None
    if call.library == "hipblaslt" and call.solution_index is not None:
        return "hipblaslt", call.solution_index
    return None


def solution_name(backend: str, index: int | None, call: GemmCall, style: str = "") -> str:
    """The TunableOp solution name of (backend, index): `Gemm_Rocblas_N`, `Gemm_Hipblaslt_TN_N` (or
    `Gemm_Hipblaslt_N` when `style` is `plain`, the older spelling), `Default` for no index."""
    if index is None or backend == "default":
        return "Default"
    if backend == "rocblas":
        return f"Gemm_Rocblas_{index}"
    if backend == "hipblaslt":
        return f"Gemm_Hipblaslt_{index}" if style == "plain" else f"Gemm_Hipblaslt_{call.transa}{call.transb}_{index}"
    return str(index)


def _describe(choice: tuple[str, int | None] | None) -> str:
    if choice is None:
        return "no logged solution"
    backend, index = choice
    if index is None:
        return f"the {'library' if backend == 'default' else backend} default"
    return f"{backend} solution {index}" if backend != "unknown" else f"solution {index}"


def _matches(tuned: tuple[str, int | None], logged: tuple[str, int | None]) -> bool:
    backend, index = tuned
    if backend == "default":
        return True  # the library chose: any solution it picked is the default
    if backend == "unknown":
        return logged[1] == index
    return logged == (backend, index)


# ---- validators --------------------------------------------------------------------------------------------------


VALIDATOR_SIGNS = ("Validator,", "Git Version: ")
"""How the lines of files that :func:`validators` reads begin (both dialects read them from the start of a line
only); what PYTORCH_TUNABLEOP_VERBOSE logs of them (`Validator KEY=VALUE`) may follow a launcher's tag."""


def validators(path: str) -> dict[str, str]:
    """The Validator lines of a TunableOp file (and a hipBLASLt tuning file's `Git Version`), as read by
    blaslog's own reader; {} for a file that has none.

    Only the lines that begin so are parsed (a Validator line is a record of one line, read from the start of a
    line): a log of 100 MB that holds TunableOp rows among others is not read again record by record, which
    took twice as long as the diff's own reading of it."""
    from blaslog.inputs import Reader
    from blaslog.parse import parse_text

    kept = [  # a batch's distinct lines where it has them, in the order they first come
        line
        for batch in Reader(path).batches()
        for line in batch.counts or batch.lines
        if line.startswith(VALIDATOR_SIGNS) or "Validator " in line
    ]
    out: dict[str, str] = {}
    if not kept:
        return out
    text = "\n".join(kept) + "\n"
    for record in parse_text(text, name=path, log_format=list(TUNED_FORMATS), on_error=OnError.SKIP).records:
        if isinstance(record, Event) and record.function in ("Validator", "tuning"):
            for key, value in record.fields:
                out.setdefault(key, value)
    return out


def validator_findings(sharded: Sequence[str], reference: str) -> tuple[list[Finding], list[dict[str, Any]], list[str]]:
    """Findings, section rows and notes comparing each sharded TunableOp file's validators with the reference's."""
    ref = validators(reference)
    rows: list[dict[str, Any]] = []
    findings: list[Finding] = []
    notes: list[str] = []
    for path in sharded:
        mine = validators(path)
        keys = list(dict.fromkeys([*ref, *mine]))
        differing = [(k, mine.get(k), ref.get(k)) for k in keys if mine.get(k) != ref.get(k)]
        rows.extend(
            {
                "file": path,
                "validator": key,
                "value": mine.get(key),
                "reference": ref.get(key),
                "same": mine.get(key) == ref.get(key),
            }
            for key in keys
        )
        if not differing:
            continue
        listed = ", ".join(
            f"{k} {a if a is not None else '-'} vs {b if b is not None else '-'}" for k, a, b in differing
        )
        notes.append(f"TunableOp validators differ: {path} vs {reference}: {listed}")
        findings.append(
            Finding(
                kind="tunableop_validator_diff",
                cls="unknown",
                title=f"TunableOp validators differ: {listed}",
                explanation=(
                    f"{path} and {reference} were tuned with different software or GPUs ({listed}). TunableOp "
                    "rejects a results file whose Validator lines differ from the running ones, and solution "
                    "indices name different kernels in another rocBLAS or hipBLASLt version or on another "
                    "architecture: a solution difference below may be a version difference. Compare runs of "
                    "one software stack, or retune."
                ),
                location=Location(path, 1, "sharded"),
                related=(Location(reference, 1, "unsharded"),),
                fields=tuple((k, (a, b)) for k, a, b in differing),
                key="tunableop-validators|" + listed,
                data={"validators": {"sharded": mine, "unsharded": ref}},
            )
        )
    return findings, rows, notes


# ---- diff ordering -----------------------------------------------------------------------------------------------


# ---- the cross-source check --------------------------------------------------------------------------------------


@dataclass(slots=True)
class Source:
    """One input of the cross-source check: a file, its rank (or ordinal) and its GEMM records."""

    path: str
    """The file."""
    rank: int | None
    """Its rank (a log) or device ordinal (a TunableOp file), None when unknown."""
    calls: list[GemmCall] = field(default_factory=list)
    """Its GEMM records (distinct calls for a log, rows for a tuning file), with their lines."""


_ORDINAL = re.compile(r"(\d+)(?:\.[A-Za-z0-9]+)*$")


def ordinal(path: str) -> int | None:
    """The device ordinal TunableOp put in a file name (`tunableop_results3.csv` -> 3), or None."""
    match = _ORDINAL.search(os.path.basename(path))
    return int(match.group(1)) if match else None


def pair_sources(logs: Sequence[Source], tuned: Sequence[Source]) -> tuple[list[tuple[Source, Source]], list[str]]:
    """Each log with the tuning file of its rank (the only one when there is one), and notes on what is left."""
    notes: list[str] = []
    if len(tuned) == 1:
        return [(log, tuned[0]) for log in logs], notes
    by_rank = {t.rank: t for t in tuned}
    pairs = []
    for i, log in enumerate(logs):
        rank = log.rank if log.rank is not None else i
        match = by_rank.get(rank)
        if match is None:
            notes.append(
                f"{log.path} (rank {rank}): no TunableOp file of that ordinal among "
                f"{', '.join(t.path for t in tuned)}; not checked against one"
            )
            continue
        pairs.append((log, match))
    return pairs, notes


Section = tuple[str, list[dict[str, Any]]]


def cross_check(logs: Sequence[Source], tuned: Sequence[Source]) -> tuple[list[Finding], list[Section], list[str]]:
    """Findings, sections and notes of the cross-source check of one run's logs against its tuning files."""
    findings: list[Finding] = []
    rows: list[dict[str, Any]] = []
    pairs, notes = pair_sources(logs, tuned)
    for log, table in pairs:
        found, summary, said = _check_pair(log, table)
        findings += found
        rows.append(summary)
        notes += said
    findings += _across_ranks(tuned)
    return findings, [("TunableOp against the logs", rows)], notes


def _check_pair(log: Source, table: Source) -> tuple[list[Finding], dict[str, Any], list[str]]:
    rows: dict[Any, list[GemmCall]] = {}
    for row in table.calls:
        rows.setdefault(gemm_key(row), []).append(row)
    findings: list[Finding] = []
    seen_rows: set[int] = set()
    unlogged = 0
    mismatched: dict[int, list[tuple[GemmCall, tuple[str, int | None] | None]]] = {}
    untuned: dict[Any, list[GemmCall]] = {}
    applied = 0
    for call in log.calls:
        candidates = [r for r in rows.get(gemm_key(call), ()) if _ld_agree(r, call)]
        tuned_rows = [r for r in candidates if chosen(r) is not None]
        for r in candidates:
            seen_rows.add(id(r))
        if not tuned_rows:
            untuned.setdefault((gemm_key(call), call.lda, call.ldb, call.ldc), []).append(call)
            continue
        logged = ran(call)
        if logged is None:
            unlogged += 1
            continue
        row = tuned_rows[0]
        choice = chosen(row)
        assert choice is not None
        if _matches(choice, logged):
            applied += 1
        else:
            mismatched.setdefault(id(row), []).append((call, logged))
    by_id = {id(r): r for r in table.calls}
    for row_id, ran_calls in mismatched.items():
        findings.append(_not_applied(by_id[row_id], ran_calls, log, table))
    findings.extend(_never_tuned(same, log, table) for same in untuned.values())
    never_ran = [r for r in table.calls if id(r) not in seen_rows and chosen(r) is not None]
    if never_ran:
        findings.append(_never_ran(never_ran, log, table))
    notes = []
    if unlogged:
        notes.append(
            f"{log.path}: {unlogged} GEMM calls with a tuned row name no solution in the log (hipBLASLt "
            "[Trace] lines do not): log with HIPBLASLT_LOG_MASK=32 or ROCBLAS_LAYER=1 to check them"
        )
    summary = {
        "log": log.path,
        "tunableop": table.path,
        "rank": log.rank,
        "calls": len(log.calls),
        "as_tuned": applied,
        "not_as_tuned": sum(len(c) for c in mismatched.values()),
        "never_tuned": sum(len(c) for c in untuned.values()),
        "no_solution_logged": unlogged,
        "tuned_rows": sum(1 for r in table.calls if chosen(r) is not None),
        "rows_never_ran": len(never_ran),
    }
    return findings, summary, notes


def _signature(call: GemmCall) -> str:
    lds = f" ld {call.lda},{call.ldb},{call.ldc}" if call.lda is not None else ""
    return f"{call.shape_text()} {_dtype(call.a_type)}{lds}"


def _not_applied(
    row: GemmCall, calls: list[tuple[GemmCall, tuple[str, int | None] | None]], log: Source, table: Source
) -> Finding:
    choice = chosen(row)
    first, _logged = calls[0]
    ran_text = ", ".join(sorted({_describe(r) for _, r in calls}))
    title = f"{_signature(row)}: TunableOp chose {dict(row.extra).get('solution')}, the log shows {ran_text}"
    text = (
        f"{table.path} line {row.line} tunes this GEMM to {_describe(choice)} "
        f"({dict(row.extra).get('solution')}), but {len(calls)} call(s) in {log.path} ran {ran_text} "
        f"(first at line {first.line}). The tuned solution was not applied: TunableOp was off for these calls "
        "(PYTORCH_TUNABLEOP_ENABLED), read another file (PYTORCH_TUNABLEOP_FILENAME, device ordinal), rejected "
        "the file (its Validator lines differ from the running versions), or the call did not go through "
        "TunableOp. Another solution may round differently, so results differ from the tuned runs."
    )
    return Finding(
        kind="tunableop_solution_not_applied",
        cls="unknown",
        title=title,
        explanation=text,
        location=Location(log.path, first.line, "log"),
        related=(Location(table.path, row.line, "tunableop"),),
        fields=(("solution", (dict(row.extra).get("solution"), ran_text)),),
        count=len(calls),
        key=f"tunableop-applied|{_signature(row)}|{dict(row.extra).get('solution')}|{ran_text}",
        data={"tunableop": row.to_dict(), "log_lines": [c.line for c, _ in calls[:50]]},
    )


def _never_tuned(calls: list[GemmCall], log: Source, table: Source) -> Finding:
    first = calls[0]
    what = _describe(ran(first))
    title = f"{_signature(first)}: ran ({what}) but has no row in {os.path.basename(table.path)}"
    text = (
        f"{len(calls)} call(s) of this GEMM in {log.path} (first at line {first.line}) have no tuned row in "
        f"{table.path}, so the library's default choice ran ({what}). Another GPU or run that tuned it runs "
        "another kernel; tune it (PYTORCH_TUNABLEOP_TUNING=1, or offline with PYTORCH_TUNABLEOP_RECORD_UNTUNED=1 "
        "and torch.cuda.tunable.tune_gemm_in_file) with numerical checks on (PYTORCH_TUNABLEOP_NUMERICAL_CHECK=1)."
    )
    return Finding(
        kind="tunableop_never_tuned",
        cls="unknown",
        title=title,
        explanation=text,
        location=Location(log.path, first.line, "log"),
        count=len(calls),
        key=f"tunableop-untuned|{_signature(first)}",
        data={"log_lines": [c.line for c in calls[:50]]},
    )


def _never_ran(rows: list[GemmCall], log: Source, table: Source) -> Finding:
    listed = "; ".join(f"{_signature(r)} -> {dict(r.extra).get('solution')} (line {r.line})" for r in rows[:5])
    more = f" and {len(rows) - 5} more" if len(rows) > 5 else ""
    return Finding(
        kind="tunableop_never_ran",
        cls="schedule",
        title=f"{len(rows)} tuned rows of {os.path.basename(table.path)} never ran in {os.path.basename(log.path)}",
        explanation=(
            f"{len(rows)} rows of {table.path} match no GEMM call in {log.path}: {listed}{more}. They do "
            "not change these results; the log may cover only part of the run, or the rows come from "
            "another model or batch size."
        ),
        location=Location(table.path, rows[0].line, "tunableop"),
        related=(Location(log.path, 1, "log"),),
        count=len(rows),
        key=f"tunableop-never-ran|{os.path.basename(table.path)}",
        data={"rows": [r.line for r in rows[:200]]},
    )


def _across_ranks(tuned: Sequence[Source]) -> list[Finding]:
    """Rows whose chosen solution differs between the tuning files of one run's GPUs."""
    if len(tuned) < 2:
        return []
    table: dict[Any, list[tuple[Source, GemmCall]]] = {}
    for source in tuned:
        for row in source.calls:
            if chosen(row) is None:
                continue
            key = (dict(row.extra).get("op", row.function), gemm_key(row), row.lda, row.ldb, row.ldc, row.epilogue)
            table.setdefault(key, []).append((source, row))
    findings = []
    for entries in table.values():
        names = {dict(r.extra).get("solution", str(r.solution_index)) for _, r in entries}
        if len(names) < 2:
            continue
        first = entries[0][1]
        per = "; ".join(
            f"{os.path.basename(s.path)}: {dict(r.extra).get('solution', r.solution_index)}" for s, r in entries
        )
        findings.append(
            Finding(
                kind="tunableop_rank_solution_diff",
                cls="unknown",
                title=f"{_signature(first)}: the GPUs of one run chose {len(names)} solutions",
                explanation=(
                    f"The tuning files of one run chose different solutions for this GEMM ({per}). Each GPU "
                    "runs its own kernel, so ranks that should compute identical results (data-parallel "
                    "replicas, replicated layers) can differ by rounding. Tune once and copy one file to every "
                    "ordinal (torch.cuda.tunable.mgpu_tune_gemm_in_file writes tunableop_results_full0.csv and "
                    "copies it), or pin the row to one solution in every file."
                ),
                location=Location(entries[0][0].path, first.line, "tunableop"),
                related=tuple(Location(s.path, r.line, "tunableop") for s, r in entries[1:]),
                fields=(("solution", tuple(dict(r.extra).get("solution", r.solution_index) for _, r in entries)),),
                count=len(entries),
                key=f"tunableop-ranks|{_signature(first)}|{dict(first.extra).get('op')}",
            )
        )
    return findings


# ---- the emit writer ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Pinning:
    """What ``--emit-tunableop`` writes: pinned rows, and the GEMMs it cannot pin with why."""

    validators: dict[str, str] = field(default_factory=dict)
    """The Validator lines to write (the sharded run's own)."""
    rows: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    """(operator name, parameter signature) -> (solution name, why it may be pinned)."""
    cannot: dict[str, str] = field(default_factory=dict)
    """Signature text -> why it cannot be pinned from these inputs."""
    notes: list[str] = field(default_factory=list)
    """Remarks about the file (validators missing, taken from the other run ...)."""


#: TunableOp operator type names of the BLAS type names (the reverse of DTYPES, tf32 aside).
_TYPE_NAMES = {
    "f32_r": "float",
    "f64_r": "double",
    "f16_r": "Half",
    "bf16_r": "BFloat16",
    "f32_c": "c10::complex<float>",
    "f64_c": "c10::complex<double>",
}


def op_and_params(call: GemmCall) -> tuple[str, str] | None:
    """The TunableOp (operator name, parameter signature) of a GEMM: the row's own for a TunableOp record; for a
    logged call, `GemmTunableOp_<type>_<TN>` with `tn_m_n_k_ld_lda_ldb_ldc` (GemmStridedBatched with `_B_batch`)
    when its types are one type and its leading dimensions are known, else None."""
    if call.log_format == "tunableop":
        extra = dict(call.extra)
        params = f"{call.transa.lower()}{call.transb.lower()}_{call.m}_{call.n}_{call.k}"
        if call.batch_count != 1 or call.function.startswith("GemmStridedBatched"):
            params += f"_B_{call.batch_count}"
        if call.lda is not None:
            params += f"_ld_{call.lda}_{call.ldb}_{call.ldc}"
        if "rowwise" in extra:
            params += f"_rw_{extra['rowwise']}"
        if "bias_type" in extra:
            params += f"_bias_{extra['bias_type']}"
        return str(extra.get("op")), params
    a = _dtype(call.a_type)
    name = _TYPE_NAMES.get(a)
    if name is None or _dtype(call.c_type) != a or call.lda is None or call.ldb is None or call.ldc is None:
        return None
    if call.compute_type and _dtype(call.compute_type) == "xf32_r":
        name = "tf32"
    batched = call.batch_count != 1
    kind = "GemmStridedBatchedTunableOp" if batched else "GemmTunableOp"
    params = f"{call.transa.lower()}{call.transb.lower()}_{call.m}_{call.n}_{call.k}"
    params += f"_B_{call.batch_count}" if batched else ""
    params += f"_ld_{call.lda}_{call.ldb}_{call.ldc}"
    return f"{kind}_{name}_{call.transa}{call.transb}", params


def _solution_of(call: GemmCall, style: str) -> tuple[str, int | None, str] | None:
    """(backend, index, TunableOp solution name) a record shows: a tuning row's choice, a logged call's run."""
    if is_tuned(call):
        choice = chosen(call)
        if choice is None:
            return None
        name = dict(call.extra).get("solution") if call.log_format == "tunableop" else None
        return choice[0], choice[1], str(name or solution_name(choice[0], choice[1], call, style))
    logged = ran(call)
    if logged is None:
        return None
    return logged[0], logged[1], solution_name(logged[0], logged[1], call, style)


def pin(
    pairs: Iterable[tuple[Any, Any]],
    evidence: Iterable[Any],
    sharded_validators: dict[str, str],
    unsharded_validators: dict[str, str],
) -> Pinning:
    """Pin each paired sharded GEMM whose solution differs to the unsharded one's, where `evidence` (every GEMM
    record of both runs) shows that solution ran for the sharded GEMM's exact signature."""
    result = Pinning(validators=dict(sharded_validators))
    style = "plain" if _plain_style(evidence) else ""
    seen: dict[tuple[Any, ...], set[tuple[str, int | None]]] = {}
    for record in evidence:
        call = _call(record)
        shown = _solution_of(call, style)
        if shown is not None and shown[1] is not None:
            seen.setdefault(_exact(call), set()).add((shown[0], shown[1]))
    differ = {
        k
        for k in set(sharded_validators) | set(unsharded_validators)
        if sharded_validators.get(k) != unsharded_validators.get(k)
    }
    if not sharded_validators:
        result.notes.append(
            "the sharded inputs hold no Validator lines: copy them into the file from the run's "
            "own tunableop_results<N>.csv (torch.cuda.tunable.get_validators()), or TunableOp "
            "rejects it"
        )
    for s_rec, u_rec in pairs:
        s, u = _call(s_rec), _call(u_rec)
        mine, theirs = _solution_of(s, style), _solution_of(u, style)
        if theirs is None or (mine is not None and (mine[0], mine[1]) == (theirs[0], theirs[1])):
            continue
        where = op_and_params(s)
        label = f"{s.function} {_signature(s)}"
        if where is None:
            result.cannot[label] = (
                "its TunableOp row cannot be written from this log (mixed types or no leading "
                f"dimensions); {NUMERICAL_CHECK}"
            )
            continue
        if theirs[1] is None:
            result.cannot[label] = (
                f"the unsharded run used the library default ({u.file}:{u.line}), which picks "
                f"per shape: no solution to pin; {NUMERICAL_CHECK}"
            )
            continue
        if differ:
            result.cannot[label] = (
                "the runs' validators differ (" + ", ".join(sorted(differ)) + "), so solution "
                f"{theirs[1]} may name another kernel here; {NUMERICAL_CHECK}"
            )
            continue
        if (theirs[0], theirs[1]) not in seen.get(_exact(s), set()):
            result.cannot[label] = (
                f"cannot pin from these logs: {theirs[0]} solution {theirs[1]} ran for "
                f"{_signature(u)} ({u.file}:{u.line}), never for this signature; {NUMERICAL_CHECK}"
            )
            continue
        result.rows[where] = (
            theirs[2],
            f"{theirs[0]} solution {theirs[1]} ran for this signature in the logs; "
            f"the unsharded run used it ({u.file}:{u.line})",
        )
    return result


def _exact(call: GemmCall) -> tuple[Any, ...]:
    return (*gemm_key(call), call.lda, call.ldb, call.ldc)


def _plain_style(evidence: Iterable[Any]) -> bool:
    """True when the inputs' TunableOp files spell hipBLASLt solutions without transposes (`Gemm_Hipblaslt_N`)."""
    for record in evidence:
        call = _call(record)
        if call.log_format == "tunableop":
            name = str(dict(call.extra).get("solution", ""))
            if name.startswith("Gemm_Hipblaslt_"):
                return re.fullmatch(r"Gemm_Hipblaslt_-?\d+", name) is not None
    return False


def render(pinning: Pinning) -> str:
    """The TunableOp results file: Validator lines, then one row per pinned GEMM (no time: the field is optional)."""
    lines = [f"Validator,{key},{value}" for key, value in pinning.validators.items()]
    lines += [f"{op},{params},{solution}" for (op, params), (solution, _why) in sorted(pinning.rows.items())]
    return "\n".join(lines) + "\n"


__all__ = [
    "NUMERICAL_CHECK",
    "TUNED_FORMATS",
    "VALIDATOR_SIGNS",
    "Pinning",
    "Source",
    "chosen",
    "cross_check",
    "gemm_key",
    "is_tuned",
    "op_and_params",
    "ordinal",
    "pair_sources",
    "pin",
    "ran",
    "render",
    "solution_name",
    "validator_findings",
    "validators",
]
