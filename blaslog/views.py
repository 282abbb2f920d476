"""Build each command's Report from the library's results (the CLI only picks a reporter)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from blaslog.caps import Caps
from blaslog.explain import describe_flags
from blaslog.inputs import ENDS_EARLY
from blaslog.parse import Records
from blaslog.records import Event, FileSummary, GemmCall, ParseResult, Record
from blaslog.report import FINDING_CLASSES, Case, Finding, Location, RecordKind, Report, fold_ranks, sort_findings
from blaslog.runs import CompactRun

# the modules of diff, check and summary are imported by the reports that use them: `blaslog parse` needs none
if TYPE_CHECKING:
    from blaslog._fast.lazy import ShapedCall
    from blaslog.diff import DiffResult

PARSE_COLUMNS = [
    "file",
    "line",
    "thread",
    "function",
    "trans",
    "m",
    "n",
    "k",
    "batch_count",
    "a_type",
    "compute_type",
    "algo",
]


def record_row(record: Record, caps: Caps | None = None) -> dict[str, Any]:
    """A flat row for tables and CSV."""
    row = record.to_dict()
    if isinstance(record, GemmCall):
        row["trans"] = record.trans  # a property, so not in to_dict(); the parse table shows it
        row["algo"] = record.algorithm_text()
        if caps is not None:
            flags = caps.flags(record)
            row["numerical_impl_flags"] = hex(flags) if flags is not None else None
            row["numerics"] = describe_flags(flags)
    return row


class ShapedRow:
    """The row of a record read from a line of a known shape, for writers that encode the rows of one shape from
    cached pieces (see ``reporters.json.ShapeTexts``)."""

    __slots__ = ("call", "caps")

    def __init__(self, call: ShapedCall, caps: Caps | None) -> None:
        self.call = call
        self.caps = caps

    @property
    def shape(self) -> Any:
        """Rows with the same shape differ only where the SHAPE values and the line numbers go."""
        return self.call.template

    def row(self) -> dict[str, Any]:
        """The ordinary row (as :func:`record_row` gives it)."""
        return record_row(self.call.record(), self.caps)

    def marked_row(self, marks: list[str], line: Any, end_line: Any, path: str | None = None) -> dict[str, Any]:
        """The row with `marks` where the SHAPE values go, `line`, `end_line` as the line numbers (and `path` as
        the input's name, where given)."""
        return record_row(self.call.marked(marks, line, end_line, path), self.caps)


class ShapedRows:
    """The rows of records of known line shapes (a lazy read's item whose rows may be written by shape: see
    :meth:`blaslog.parse.Records.by_shape`), for the same writers as ShapedRow."""

    __slots__ = ("caps", "run")

    def __init__(self, run: Records, caps: Caps | None) -> None:
        self.run = run
        self.caps = caps

    def __len__(self) -> int:
        return len(self.run)

    def row(self, offset: int) -> ShapedRow:
        """The ShapedRow of the record `offset` records into the run."""
        return ShapedRow(self.run.call(offset), self.caps)

    def after(self, offset: int) -> ShapedRows | None:
        """The rows after the first `offset` ones, or None when there are none."""
        return ShapedRows(self.run.after(offset), self.caps) if offset < len(self.run) else None


def record_rows(
    items: Iterable[Records], caps: Caps | None = None, shaped: bool = False
) -> Iterator[dict[str, Any] | ShapedRows]:
    """Rows of a lazy read's items (:class:`blaslog.parse.Records`): a row per record, or ShapedRows where
    `shaped` (the writer takes them) and the item's rows may be written by shape."""
    with_caps = caps is not None
    for item in items:
        if shaped and item.by_shape(with_caps):
            yield ShapedRows(item, caps)
        else:
            for record in item:
                yield record_row(record, caps)


def file_rows(files: Sequence[FileSummary]) -> list[dict[str, Any]]:
    """Per-input accounting rows."""
    return [
        {
            "file": s.path,
            "lines": s.lines,
            "gemm_records": s.gemm_records,
            "other_records": s.other_records,
            "foreign_lines": s.foreign_lines,
            "unparsable_lines": s.unparsable_lines,
            "formats": ", ".join(f"{k}={v}" for k, v in sorted(s.formats.items())),
        }
        for s in files
    ]


def input_findings(files: Sequence[FileSummary], role: str = "") -> list[Finding]:
    """One `input` finding per input with unparsable lines or cut short (a damaged compressed stream): what
    was not read may hide GEMMs."""
    out = []
    for summary in files:
        cut = next((p for p in summary.problems if p.message.startswith(ENDS_EARLY)), None)
        if cut is not None:
            where = f"{role} input " if role else "input "
            out.append(
                Finding(
                    kind="input_cut_short",
                    cls="input",
                    title=f"{where}{summary.path} ends early: only {summary.lines} lines could be read",
                    explanation=(
                        f"{summary.path} could be read up to line {summary.lines} only ({cut.message}). "
                        "GEMMs after that point are missing from this analysis; copy the log again or "
                        "decompress what is left by hand (zcat, xzcat, zstdcat) to see how much is lost."
                    ),
                    location=Location(summary.path, max(cut.line, 1), role),
                    key=f"input-cut|{summary.path}",
                )
            )
        if not summary.unparsable_lines:
            continue
        first = next((p for p in summary.problems if p.severity == "error"), None)
        where = f"{role} input " if role else "input "
        out.append(
            Finding(
                kind="unparsable_input",
                cls="input",
                title=f"{summary.unparsable_lines} unparsable lines in {where}{summary.path}",
                explanation=(
                    f"{summary.unparsable_lines} lines of {summary.path} look like BLAS log output but could not "
                    f"be parsed; GEMMs on them are missing from this analysis."
                    + (f" First: line {first.line}: {first.message}" if first else "")
                ),
                location=Location(summary.path, first.line if first else 1, role),
                key=f"input|{summary.path}",
            )
        )
    return out


def parse_columns(kind: str, caps: bool) -> list[str]:
    """The table columns of `blaslog parse` (`kind` gemm or all; `caps`: a caps file gives the numerics)."""
    if kind == RecordKind.ALL:
        return ["file", "line", "kind", "level", "function", "m", "n", "k", "algo", "event", "text"]
    return PARSE_COLUMNS + (["numerics"] if caps else [])


def event_text(text: str | None, fields: Iterable[tuple[str, Any]]) -> str:
    """An event's text in the parse table: its own, else its fields (cut at 120 characters)."""
    return text or " ".join(f"{k}={v}" for k, v in fields)[:120]


def parse_report(result: ParseResult, *, kind: str = RecordKind.GEMM, caps: Caps | None = None) -> Report:
    """Report of `blaslog parse`."""
    # a record cut short at the end of an input may be a GEMM: it is kept in both kinds, as the stream keeps it
    records = [
        r
        for r in result.records
        if kind == RecordKind.ALL or isinstance(r, GemmCall) or getattr(r, "event", None) == "truncated"
    ]
    rows = [record_row(r, caps) for r in records]
    columns = parse_columns(kind, caps is not None)
    if kind == RecordKind.ALL:
        for row, record in zip(rows, records, strict=True):
            if isinstance(record, Event):
                row["text"] = event_text(record.text, record.fields)
    cases = [Case(f"parse {s.path}", "parse", s.path, 0, tuple(input_findings([s]))) for s in result.files]
    return Report(
        "parse",
        findings=input_findings(result.files),
        rows=rows,
        columns=columns,
        document={"records": rows, "summary": {"files": [s.to_dict() for s in result.files]}},
        files=list(result.files),
        cases=cases,
    )


def _pair_cases(result: DiffResult, by_pair: dict[int, Finding]) -> Iterator[Case]:
    """One test case per pair of `result` (failed by the finding of its sharded line, if any)."""
    classname = f"{result.sharded_file} vs {result.unsharded_file}"
    shapes: dict[int, str] = {}  # shape text by distinct call: a run repeats a few calls many times
    for s, u in result.pairs:
        failure = by_pair.get(s.line)
        s_shape = shapes.get(id(_distinct(s)))
        if s_shape is None:
            s_shape = shapes[id(_distinct(s))] = s.shape_text()
        u_shape = shapes.get(id(_distinct(u)))
        if u_shape is None:
            u_shape = shapes[id(_distinct(u))] = u.shape_text()
        yield Case(
            f"line {s.line} {s_shape} vs line {u.line} {u_shape}",
            classname,
            s.file,
            s.line,
            (failure,) if failure else (),
        )


def _result_notes(result: DiffResult) -> list[str]:
    """What a person should know about one comparison: the TP degree and how it was found, runs given the
    other way round, logs that name no algorithm, GEMMs left unpaired."""
    notes = [f"{result.sharded_file}: {result.tp.describe()}"]
    if result.reversed_hint:
        notes.append(
            f"{result.sharded_file}: its GEMMs are the larger ones: were the runs given the other way "
            "round? The order is: blaslog diff SHARDED UNSHARDED"
        )
    if not result.algorithm_info:
        notes.append(
            f"{result.sharded_file}: these logs name no algorithm (hipBLASLt [Trace] lines and the cuBLAS "
            "classic log do not): only shapes were compared. Log with HIPBLASLT_LOG_MASK=32 (bench "
            "lines with --solution_index) or CUBLASLT_LOG_LEVEL>=2 to compare algorithms."
        )
    for side, left in (("sharded", result.unmatched_sharded), ("unsharded", result.unmatched_unsharded)):
        if left:
            where = ", ".join(f"{r.file}:{r.line}" for r in left[:5])
            notes.append(f"{len(left)} {side} GEMMs match nothing on the other side (first: {where})")
    return notes


def diff_report(
    results: Sequence[DiffResult],
    sharded_files: Sequence[FileSummary],
    unsharded_files: Sequence[FileSummary],
    ranks: Sequence[str | int] | None = None,
) -> Report:
    """Report of `blaslog diff` over one or more sharded inputs.

    With more than one result (or `ranks` given) the findings are folded across ranks (see fold_ranks): one
    finding per cause, naming the ranks it was seen on. `ranks` names the rank of each result (by default its
    position in `results`).
    """
    labels = [str(r) for r in ranks] if ranks is not None else [str(i) for i in range(len(results))]
    if len(labels) != len(results):
        raise ValueError(f"diff_report: {len(results)} results but {len(labels)} ranks")
    per_rank = [(label, result.findings) for label, result in zip(labels, results, strict=True)]
    folded = (
        fold_ranks(per_rank) if ranks is not None or len(results) > 1 else list(results[0].findings if results else [])
    )
    by_fingerprint = {f.fingerprint(): f for f in folded}
    cases: list[Case] = []
    per_file = []
    notes = []
    finding_of: dict[tuple[int, int], Finding] = {}
    for index, result in enumerate(results):
        by_pair = {}
        for finding in result.findings:
            folded_finding = by_fingerprint[finding.fingerprint()]
            for occurrence in finding.occurrences:
                by_pair[occurrence.sharded_line] = folded_finding
        finding_of.update(((index, line), finding) for line, finding in by_pair.items())
        cases.extend(_pair_cases(result, by_pair))
        per_file.append(
            {
                "sharded": result.sharded_file,
                "unsharded": result.unsharded_file,
                "tp": result.tp.tp,
                "tp_how": result.tp.how,
                "tp_confidence": f"{result.tp.confidence:.0%}",
                "pairs": len(result.pairs),
                "identical": result.identical_pairs,
                "findings": len(result.findings),
                "unmatched_sharded": len(result.unmatched_sharded),
                "unmatched_unsharded": len(result.unmatched_unsharded),
            }
        )
        notes.extend(_result_notes(result))
    findings = [*folded, *input_findings(sharded_files, "sharded"), *input_findings(unsharded_files, "unsharded")]
    notes.extend(
        f"warning: {summary.path} has {summary.unparsable_lines} unparsable lines that may hide GEMMs"
        for summary in [*sharded_files, *unsharded_files]
        if summary.unparsable_lines
    )
    findings = sort_findings(findings)
    differing = [r["sharded"] for r in per_file if r["findings"]]
    document = {
        "comparisons": [
            dict(
                row,
                tp_inference=res.tp.to_dict(),
                algorithm_info=res.algorithm_info,
                unmatched={
                    "sharded": [_where(r) for r in res.unmatched_sharded],
                    "unsharded": [_where(r) for r in res.unmatched_unsharded],
                },
            )
            for row, res in zip(per_file, results, strict=True)
        ],
        "files_with_findings": differing,
        "summary": {"files": [s.to_dict() for s in [*sharded_files, *unsharded_files]]},
    }
    return Report(
        "diff",
        findings=findings,
        sections=[("Comparisons", per_file)],
        document=document,
        files=[*sharded_files, *unsharded_files],
        notes=notes,
        cases=cases,
        gemm_map=diff_map(results, labels, finding_of),
    )


def _banner_between(path: str, after: int, before: int) -> int | None:
    """The first line after line `after` and up to line `before` of `path` where a BLAS library starts (its
    banner or version line), or None; read only for a finding that asks (a file read again up to `before`)."""
    import os

    from blaslog.formats import banner
    from blaslog.inputs import Reader

    if path == "-" or not os.path.isfile(path):
        return None
    for batch in Reader(path).batches():
        if batch.start + len(batch.lines) <= after:
            continue
        for number, line in enumerate(batch.lines, batch.start):
            if number > before:
                return None
            if number > after and banner(line):
                return number
    return None


def check_report(
    records: Sequence[GemmCall], files: Sequence[FileSummary], *, caps: Caps | None = None, batch: bool = False
) -> Report:
    """Report of `blaslog check`: per input file, signatures that ran with more than one algorithm."""
    from blaslog.check import batch_invariance, check_run

    findings: list[Finding] = []
    cases: list[Case] = []
    by_file: dict[str, list[GemmCall]] = {}
    gemm_map = GemmMap()
    for record in records:
        by_file.setdefault(record.file, []).append(record)
    for name, calls in by_file.items():
        found = check_run(calls, caps=caps, banner_between=_banner_between)
        if batch:
            found += batch_invariance(calls)
        findings.extend(found)
        failing = {f.location.line: f for f in found}
        _check_map(gemm_map, name, calls, found)
        seen = set()
        looked_at: set[int] = set()  # distinct calls (a run hands the same few over and over)
        for call in calls:
            distinct = _distinct(call)
            if id(distinct) in looked_at:
                continue
            looked_at.add(id(distinct))
            signature = distinct.signature()
            if signature in seen:
                continue
            seen.add(signature)
            finding = failing.get(call.line)
            cases.append(
                Case(
                    f"{call.function} {call.shape_text()} {call.a_type}/{call.compute_type}",
                    name,
                    name,
                    call.line,
                    (finding,) if finding else (),
                )
            )
    findings.extend(input_findings(files))
    reported = {f.location.file for f in findings if f.cls == "input"}  # not read whole: said already
    compared, nothing = _compared(by_file, [s for s in files if s.path not in reported], batch)
    findings.extend(nothing)
    findings = sort_findings(findings)
    sections = [("Inputs", file_rows(files))]
    report = Report(
        "check",
        findings=findings,
        sections=sections,
        document={"summary": {"files": [s.to_dict() for s in files]}},
        files=list(files),
        cases=cases,
        gemm_map=gemm_map.to_dict(),
    )
    report.notes.append(compared)
    return report


def _compared(
    by_file: dict[str, list[GemmCall]], files: Sequence[FileSummary], batch: bool
) -> tuple[str, list[Finding]]:
    """What `check` compared, as a note (per input: the GEMM signatures that ran more than once, whose calls
    were checked against each other), and an `input` finding for each input in which nothing was: no GEMM
    record, or (without `batch`, which compares the signatures of a batch range) no signature that ran twice.
    A check that compared nothing does not pass."""
    from blaslog.tunableop import TUNED_FORMATS

    parts, findings = [], []
    for summary in files:
        calls = by_file.get(summary.path, [])
        behind = list(map(_distinct, calls))
        distinct = {id(call): call for call in behind}  # a run hands the same few calls over
        per_signature: Counter[Any] = Counter()
        for key, times in Counter(map(id, behind)).items():
            per_signature[distinct[key].signature()] += times
        repeated = sum(1 for times in per_signature.values() if times > 1)
        parts.append(f"{summary.path} {repeated} of {len(per_signature)} GEMM signatures ran more than once")
        kind = "nothing_compared"
        if not calls:
            kind, title = "no_gemms", f"{summary.path} holds no GEMM record: nothing in it was checked"
            why = "Was logging on when it ran? (`blaslog summary` says what the file holds.)"
        elif repeated or batch:
            continue
        elif all(call.log_format in TUNED_FORMATS for call in distinct.values()):
            title = (
                f"nothing in {summary.path} was compared: a tuning file holds one row per GEMM it tuned "
                f"({len(per_signature)} here)"
            )
            why = (
                "check compares the calls of one GEMM signature with each other, and a tuning file (a TunableOp "
                "results file, a hipBLASLt tuning file) names each GEMM once, with the solution chosen for it. "
                f"To see whether the tuned solutions ran, check a run's logs against it (`blaslog check LOG "
                f"--tunableop {summary.path}`); to compare it with another run's file, `blaslog diff "
                f"{summary.path} OTHER_FILE`."
            )
        else:
            title = f"nothing in {summary.path} was compared: each of its {len(per_signature)} GEMM signatures ran once"
            why = (
                "check compares the calls of one GEMM signature with each other; a log in which every signature "
                "ran once has nothing to compare (a log of one step or one forward pass, say). Log more steps, "
                "or compare the run with another one (`blaslog diff`), or see which token counts ran which "
                "algorithm (--batch-invariance)."
            )
        findings.append(
            Finding(
                kind=kind,
                cls="input",
                title=title,
                explanation=why,
                location=Location(summary.path, 1),
                key=f"{kind}|{summary.path}",
            )
        )
    return "compared: " + "; ".join(parts), findings


def _check_map(gemm_map: GemmMap, name: str, calls: Sequence[GemmCall], found: Sequence[Finding]) -> None:
    """One map row for the calls of one input of a check, each call's cell marked with the most severe
    finding that names one of its lines (a variant's lines, a range's first line, the finding's place)."""
    at_line: dict[int, Finding] = {}
    for finding in sorted(found, key=lambda f: FINDING_CLASSES[f.cls].rank):  # the most severe is set last
        lines = {finding.location.line}
        for variant in finding.data.get("variants", ()):
            lines.update(variant.get("lines", ()))
        for span in finding.data.get("ranges", ()):
            lines.add(span.get("line"))
        at_line.update((line, finding) for line in lines if isinstance(line, int))
    row = gemm_map.row(name, name)
    tally = _Tally()
    for call in calls:
        tally.add((_distinct(call),), call, at_line.get(call.line))
    for (distinct,), count, line, finding in tally.values():
        gemm_map.add(row, distinct, distinct, line, count, finding)


def summary_report(
    records: Sequence[GemmCall] | None,
    files: Sequence[FileSummary],
    *,
    caps: Caps | None = None,
    runs: Sequence[CompactRun] = (),
) -> Report:
    """Report of `blaslog summary`, of `records` or (quicker) of the calls of `runs`."""
    from blaslog.summary import summarize, summarize_runs

    if records is None:
        rows = summarize_runs(runs, caps=caps)
        threads = sorted({str(t) for run in runs for t in run.thread_of_calls() if t is not None})
        calls = sum(row["calls"] for row in rows)
    else:
        rows = summarize(records, caps=caps)
        threads = sorted({str(r.thread) for r in records if r.thread is not None})
        calls = sum(r.call_count for r in records)
    flat = []
    for row in rows:
        out = {k: v for k, v in row.items() if k != "algorithms"}
        out["algorithms"] = "; ".join(
            f"{a['algo']} x{a['count']}" + (f" [{a['numerics']}]" if "numerics" in a else "") for a in row["algorithms"]
        )
        flat.append(out)
    cases = [
        Case(f"{r['function']} {r['trans']} {r['m']}x{r['n']}x{r['k']}", r["file"], r["file"], r["first_line"])
        for r in rows
    ]
    overview = [
        {
            "inputs": len(files),
            "gemm_calls": calls,
            "signatures": len(rows),
            "threads": len(threads),
            "signatures_with_several_algorithms": sum(1 for r in rows if len(r["algorithms"]) > 1),
        }
    ]
    gemm_map = GemmMap()
    if records is None:
        for run in runs:
            map_row = gemm_map.row(run.path, run.path)
            counts = Counter(run.which)
            first = dict(zip(reversed(run.which), reversed(run.lines), strict=True))  # distinct call -> first line
            for index, line in first.items():
                call = run.calls[index]
                gemm_map.add(map_row, call, call, line, counts[index] * call.call_count)
    else:
        tallies: dict[str, _Tally] = {}
        for record in records:
            tallies.setdefault(record.file, _Tally()).add((_distinct(record),), record, None)
        for file, tally in tallies.items():
            map_row = gemm_map.row(file, file)
            for (distinct,), count, line, _ in tally.values():
                gemm_map.add(map_row, distinct, distinct, line, count)
    return Report(
        "summary",
        findings=input_findings(files),
        rows=flat,
        gemm_map=gemm_map.to_dict(),
        columns=["calls", "function", "trans", "m", "n", "k", "batch", "types", "compute", "threads", "algorithms"],
        sections=[("Overview", overview), ("Inputs", file_rows(files))],
        document={"overview": overview[0], "signatures": rows, "summary": {"files": [s.to_dict() for s in files]}},
        files=list(files),
        cases=cases,
    )


def _where(record: GemmCall) -> dict[str, Any]:
    return {
        "file": record.file,
        "line": record.line,
        "m": record.m,
        "n": record.n,
        "k": record.k,
        "batch_count": record.batch_count,
        "trans": record.trans,
    }


# ---- the algorithm map (pictures of a report: the HTML report) ----------------------------------------------------

#: Most signatures an algorithm map keeps (the first in call order); the rest are counted in `left_out`.
MAP_COLUMNS = 400


def map_finding_ref(finding: Finding) -> str:
    """How a map cell names a finding: fingerprint, file and line (unique within a report's findings)."""
    return f"{finding.fingerprint()}|{finding.location.file}|{finding.location.line}"


def _map_column(column: Any, first: tuple[int, int], calls: int) -> dict[str, Any]:
    """How an algorithm map describes a signature (named by the call `column`)."""
    return {
        "label": f"{column.function} {column.shape_text()} {column.a_type}/{column.compute_type}",
        "function": column.function,
        "trans": column.trans,
        "m": column.m,
        "n": column.n,
        "k": column.k,
        "batch": column.batch_count,
        "types": column.types_text(),
        "compute": column.compute_type,
        "calls": calls,
    }


class GemmMap:
    """Builds :attr:`Report.gemm_map`: per row (a run or rank) and GEMM signature, the algorithms it ran, how
    often, where first, and the most severe finding it showed. One entry per signature and row, never per call."""

    def __init__(self) -> None:
        self._rows: list[dict[str, Any]] = []
        self._columns: dict[tuple[Any, ...], list[Any]] = {}  # signature -> [its column's call, first, calls]
        self._cells: dict[tuple[int, tuple[Any, ...]], dict[str, Any]] = {}

    def row(self, label: str, file: str, rank: Any = None, role: str = "run") -> int:
        """Add a row; its index."""
        self._rows.append({"label": label, "file": file, "rank": rank, "role": role})
        return len(self._rows) - 1

    def add(self, row: int, column: Any, call: Any, line: int, calls: int = 1, finding: Finding | None = None) -> None:
        """Count `calls` calls of `call` (a GemmCall or Occurrence) under `column` (the call that names the
        signature's column: the reference call in a diff) in `row`."""
        key = column.signature()
        info = self._columns.get(key)
        if info is None:  # described in to_dict, for the columns kept only
            info = self._columns[key] = [column, (row, line), 0]
        elif (row, line) < info[1]:
            info[1] = (row, line)
        info[2] += calls
        cell = self._cells.get((row, key))
        if cell is None:
            cell = self._cells[(row, key)] = {
                "algos": Counter(),
                "line": line,
                "call": call,
                "finding": None,
                "cls": None,
                "rank": -1,
            }
        cell["algos"][call.algorithm_text()] += calls
        cell["line"] = min(cell["line"], line)
        if finding is not None and FINDING_CLASSES[finding.cls].rank > cell["rank"]:
            cell.update(finding=map_finding_ref(finding), cls=finding.cls, rank=FINDING_CLASSES[finding.cls].rank)

    def to_dict(self, limit: int = MAP_COLUMNS) -> dict[str, Any]:
        """JSON-ready: `columns` in call order (first row first), `rows` with `cells` (column index -> cell),
        `algorithms` (every algorithm text, most used first) and `left_out` (signatures beyond `limit`)."""
        keys = sorted(self._columns, key=lambda k: self._columns[k][1])
        kept = {key: index for index, key in enumerate(keys[:limit])}
        used: Counter[str] = Counter()
        rows = [dict(r, cells={}) for r in self._rows]
        for (row, key), cell in self._cells.items():
            index = kept.get(key)
            if index is None:
                continue
            algos = cell["algos"].most_common()
            used.update(cell["algos"])
            rows[row]["cells"][index] = {
                "algo": algos[0][0],
                "algos": [[a, n] for a, n in algos],
                "calls": sum(n for _, n in algos),
                "line": cell["line"],
                "shape": cell["call"].shape_text(),
                "finding": cell["finding"],
                "cls": cell["cls"],
            }
        columns = [_map_column(*self._columns[key]) for key in keys[:limit]]
        return {
            "columns": columns,
            "rows": rows,
            "algorithms": [a for a, _ in used.most_common()],
            "left_out": max(len(keys) - limit, 0),
        }


def diff_map(
    results: Sequence[DiffResult], labels: Sequence[str], finding_of: dict[tuple[int, int], Finding]
) -> dict[str, Any]:
    """The algorithm map of a diff: one row per sharded rank and one for the reference, one column per reference
    signature (the sharded calls under the reference call they were paired with). `finding_of` maps (result
    index, sharded line) to the finding that pair showed."""
    gemm_map = GemmMap()
    reference = gemm_map.row(
        f"reference {results[0].unsharded_file}" if results else "reference",
        results[0].unsharded_file if results else "",
        None,
        "unsharded",
    )
    seen: set[int] = set()
    ref_calls = _Tally()
    for index, (result, label) in enumerate(zip(results, labels, strict=True)):
        row = gemm_map.row(f"rank {label}", result.sharded_file, label, "sharded")
        pairs = _Tally()
        for s, u in result.pairs:
            pairs.add((_distinct(s), _distinct(u)), s, finding_of.get((index, s.line)))
            if u.line not in seen:
                seen.add(u.line)
                ref_calls.add((_distinct(u),), u, None)
        for (s_call, u_call), calls, line, finding in pairs.values():
            gemm_map.add(row, u_call, s_call, line, calls, finding)
    for (u_call,), calls, line, _ in ref_calls.values():
        gemm_map.add(reference, u_call, u_call, line, calls)
    return gemm_map.to_dict()


def _distinct(record: Any) -> Any:
    """The distinct call behind an Occurrence (or the record itself)."""
    return getattr(record, "call", record)


class _Tally(dict):  # type: ignore[type-arg]
    """calls -> [calls, count, first line, most severe finding], from records one at a time. Equal calls share
    an entry; each call object is hashed once (hashing a call hashes each of its fields, and a run hands the
    same few call objects over and over)."""

    def __init__(self) -> None:
        super().__init__()
        self._by_id: dict[int, int] = {}
        self._by_value: dict[Any, int] = {}
        self._keys: dict[tuple[int, ...], tuple[int, ...]] = {}  # ids of the calls -> key

    def _number(self, call: Any) -> int:
        number = self._by_id.get(id(call))
        if number is None:
            number = self._by_id[id(call)] = self._by_value.setdefault(call, len(self._by_value))
        return number

    def add(self, calls: tuple[Any, ...], record: Any, finding: Finding | None) -> None:
        ids = tuple(map(id, calls))
        key = self._keys.get(ids)
        if key is None:
            key = self._keys[ids] = tuple(map(self._number, calls))
        entry = self.get(key)
        if entry is None:
            entry = self[key] = [calls, 0, record.line, None]
        entry[1] += getattr(record, "call_count", 1)
        entry[2] = min(entry[2], record.line)
        if finding is not None and (
            entry[3] is None or FINDING_CLASSES[finding.cls].rank > FINDING_CLASSES[entry[3].cls].rank
        ):
            entry[3] = finding
