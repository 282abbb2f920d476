"""Build each command's Report from the library's results (the CLI only picks a reporter)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from blaslog.caps import Caps
from blaslog.check import batch_invariance, check_run
from blaslog.diff import DiffResult
from blaslog.explain import describe_flags
from blaslog.formats._base import ShapedCall
from blaslog.inputs import ENDS_EARLY
from blaslog.records import Event, FileSummary, GemmCall, ParseResult, Record
from blaslog.report import Case, Finding, Location, Report, fold_ranks, sort_findings
from blaslog.runs import CompactRun
from blaslog.summary import summarize, summarize_runs

PARSE_COLUMNS = ["file", "line", "thread", "function", "trans", "m", "n", "k", "batch_count", "a_type",
                 "compute_type", "algo"]


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
    """The row of a record read from a line of a known shape (a ShapedCall), for writers that encode the
    rows of one shape from cached pieces (see ``reporters.json.ShapeTexts``)."""

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

    def marked_row(self, marks: list[str], line: Any, end_line: Any) -> dict[str, Any]:
        """The row with `marks` where the SHAPE values go and `line`, `end_line` as the line numbers."""
        return record_row(self.call.marked(marks, line, end_line), self.caps)


def record_rows(items: Iterable[Record | ShapedCall], caps: Caps | None = None,
                shaped: bool = False) -> Iterator[dict[str, Any] | ShapedRow]:
    """Rows of records (and of the ShapedCalls of ``iter_file(lazy=True)``: ShapedRow when `shaped`)."""
    for item in items:
        if type(item) is ShapedCall:
            yield ShapedRow(item, caps) if shaped else record_row(item.record(), caps)
        else:
            yield record_row(item, caps)  # type: ignore[arg-type]


def file_rows(files: Sequence[FileSummary]) -> list[dict[str, Any]]:
    """Per-input accounting rows."""
    return [{"file": s.path, "lines": s.lines, "gemm_records": s.gemm_records, "other_records": s.other_records,
             "foreign_lines": s.foreign_lines, "unparsable_lines": s.unparsable_lines,
             "formats": ", ".join(f"{k}={v}" for k, v in sorted(s.formats.items()))} for s in files]


def input_findings(files: Sequence[FileSummary], role: str = "") -> list[Finding]:
    """One `input` finding per input with unparsable lines or cut short (a damaged compressed stream): what
    was not read may hide GEMMs."""
    out = []
    for summary in files:
        cut = next((p for p in summary.problems if p.message.startswith(ENDS_EARLY)), None)
        if cut is not None:
            where = f"{role} input " if role else "input "
            out.append(Finding(
                kind="input_cut_short", cls="input",
                title=f"{where}{summary.path} ends early: only {summary.lines} lines could be read",
                explanation=(f"{summary.path} could be read up to line {summary.lines} only ({cut.message}). "
                             "GEMMs after that point are missing from this analysis; copy the log again or "
                             "decompress what is left by hand (zcat, xzcat, zstdcat) to see how much is lost."),
                location=Location(summary.path, max(cut.line, 1), role),
                key=f"input-cut|{summary.path}",
            ))
        if not summary.unparsable_lines:
            continue
        first = next((p for p in summary.problems if p.severity == "error"), None)
        where = f"{role} input " if role else "input "
        out.append(Finding(
            kind="unparsable_input", cls="input",
            title=f"{summary.unparsable_lines} unparsable lines in {where}{summary.path}",
            explanation=(f"{summary.unparsable_lines} lines of {summary.path} look like BLAS log output but could not "
                         f"be parsed; GEMMs on them are missing from this analysis."
                         + (f" First: line {first.line}: {first.message}" if first else "")),
            location=Location(summary.path, first.line if first else 1, role),
            key=f"input|{summary.path}",
        ))
    return out


def parse_report(result: ParseResult, *, kind: str = "gemm", caps: Caps | None = None) -> Report:
    """Report of `blaslog parse`."""
    # a record cut short at the end of an input may be a GEMM: it is kept in both kinds, as the stream keeps it
    records = [r for r in result.records
               if kind == "all" or isinstance(r, GemmCall) or getattr(r, "event", None) == "truncated"]
    rows = [record_row(r, caps) for r in records]
    columns = PARSE_COLUMNS + (["numerics"] if caps is not None else [])
    if kind == "all":
        columns = ["file", "line", "kind", "level", "function", "m", "n", "k", "algo", "event", "text"]
        for row, record in zip(rows, records, strict=True):
            if isinstance(record, Event):
                row["text"] = record.text or " ".join(f"{k}={v}" for k, v in record.fields)[:120]
    cases = [Case(f"parse {s.path}", "parse", s.path, 0, tuple(input_findings([s]))) for s in result.files]
    return Report("parse", findings=input_findings(result.files), rows=rows, columns=columns,
                  document={"records": rows, "summary": {"files": [s.to_dict() for s in result.files]}},
                  files=list(result.files), cases=cases)


def diff_report(results: Sequence[DiffResult], sharded_files: Sequence[FileSummary],
                unsharded_files: Sequence[FileSummary], ranks: Sequence[str | int] | None = None) -> Report:
    """Report of `blaslog diff` over one or more sharded inputs.

    With more than one result (or `ranks` given) the findings are folded across ranks (see fold_ranks): one
    finding per cause, naming the ranks it was seen on. `ranks` names the rank of each result (by default its
    position in `results`).
    """
    labels = [str(r) for r in ranks] if ranks is not None else [str(i) for i in range(len(results))]
    if len(labels) != len(results):
        raise ValueError(f"diff_report: {len(results)} results but {len(labels)} ranks")
    per_rank = [(label, result.findings) for label, result in zip(labels, results, strict=True)]
    folded = fold_ranks(per_rank) if ranks is not None or len(results) > 1 else list(results[0].findings if results
                                                                                    else [])
    by_fingerprint = {f.fingerprint(): f for f in folded}
    cases: list[Case] = []
    per_file = []
    notes = []
    for result in results:
        by_pair = {}
        for finding in result.findings:
            for occurrence in finding.occurrences:
                by_pair[occurrence.sharded_line] = by_fingerprint[finding.fingerprint()]
        classname = f"{result.sharded_file} vs {result.unsharded_file}"
        for s, u in result.pairs:
            failure = by_pair.get(s.line)
            cases.append(Case(f"line {s.line} {s.shape_text()} vs line {u.line} {u.shape_text()}", classname,
                              s.file, s.line, (failure,) if failure else ()))
        per_file.append({
            "sharded": result.sharded_file, "unsharded": result.unsharded_file, "tp": result.tp.tp,
            "tp_how": result.tp.how, "tp_confidence": f"{result.tp.confidence:.0%}", "pairs": len(result.pairs),
            "identical": result.identical_pairs, "findings": len(result.findings),
            "unmatched_sharded": len(result.unmatched_sharded),
            "unmatched_unsharded": len(result.unmatched_unsharded),
        })
        notes.append(f"{result.sharded_file}: {result.tp.describe()}")
        if result.reversed_hint:
            notes.append(f"{result.sharded_file}: its GEMMs are the larger ones: were the runs given the other way "
                         "round? The order is: blaslog diff SHARDED UNSHARDED")
        if not result.algorithm_info:
            notes.append(f"{result.sharded_file}: these logs name no algorithm (hipBLASLt [Trace] lines and the cuBLAS "
                         "classic log do not): only shapes were compared. Log with HIPBLASLT_LOG_MASK=32 (bench "
                         "lines with --solution_index) or CUBLASLT_LOG_LEVEL>=2 to compare algorithms.")
        for side, left in (("sharded", result.unmatched_sharded), ("unsharded", result.unmatched_unsharded)):
            if left:
                where = ", ".join(f"{r.file}:{r.line}" for r in left[:5])
                notes.append(f"{len(left)} {side} GEMMs match nothing on the other side (first: {where})")
    findings = [*folded, *input_findings(sharded_files, "sharded"), *input_findings(unsharded_files, "unsharded")]
    notes.extend(f"warning: {summary.path} has {summary.unparsable_lines} unparsable lines that may hide GEMMs"
                 for summary in [*sharded_files, *unsharded_files] if summary.unparsable_lines)
    findings = sort_findings(findings)
    differing = [r["sharded"] for r in per_file if r["findings"]]
    document = {
        "comparisons": [dict(row, tp_inference=res.tp.to_dict(), algorithm_info=res.algorithm_info,
                             unmatched={"sharded": [_where(r) for r in res.unmatched_sharded],
                                        "unsharded": [_where(r) for r in res.unmatched_unsharded]})
                        for row, res in zip(per_file, results, strict=True)],
        "files_with_findings": differing,
        "summary": {"files": [s.to_dict() for s in [*sharded_files, *unsharded_files]]},
    }
    return Report("diff", findings=findings, sections=[("Comparisons", per_file)], document=document,
                  files=[*sharded_files, *unsharded_files], notes=notes, cases=cases)


def check_report(records: Sequence[GemmCall], files: Sequence[FileSummary], *, caps: Caps | None = None,
                 batch: bool = False) -> Report:
    """Report of `blaslog check`: per input file, signatures that ran with more than one algorithm."""
    findings: list[Finding] = []
    cases: list[Case] = []
    by_file: dict[str, list[GemmCall]] = {}
    for record in records:
        by_file.setdefault(record.file, []).append(record)
    for name, calls in by_file.items():
        found = check_run(calls, caps=caps)
        if batch:
            found += batch_invariance(calls)
        findings.extend(found)
        failing = {f.location.line: f for f in found}
        seen = set()
        for call in calls:
            if call.signature() in seen:
                continue
            seen.add(call.signature())
            finding = failing.get(call.line)
            cases.append(Case(f"{call.function} {call.shape_text()} {call.a_type}/{call.compute_type}", name,
                              name, call.line, (finding,) if finding else ()))
    findings.extend(input_findings(files))
    findings = sort_findings(findings)
    sections = [("Inputs", file_rows(files))]
    return Report("check", findings=findings, sections=sections,
                  document={"summary": {"files": [s.to_dict() for s in files]}}, files=list(files), cases=cases)


def summary_report(records: Sequence[GemmCall] | None, files: Sequence[FileSummary], *, caps: Caps | None = None,
                   runs: Sequence[CompactRun] = ()) -> Report:
    """Report of `blaslog summary`, of `records` or (quicker) of the calls of `runs`."""
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
        out["algorithms"] = "; ".join(f"{a['algo']} x{a['count']}" + (f" [{a['numerics']}]" if "numerics" in a else "")
                                      for a in row["algorithms"])
        flat.append(out)
    cases = [Case(f"{r['function']} {r['trans']} {r['m']}x{r['n']}x{r['k']}", r["file"], r["file"], r["first_line"])
             for r in rows]
    overview = [{"inputs": len(files), "gemm_calls": calls, "signatures": len(rows),
                 "threads": len(threads),
                 "signatures_with_several_algorithms": sum(1 for r in rows if len(r["algorithms"]) > 1)}]
    return Report("summary", findings=input_findings(files), rows=flat,
                  columns=["calls", "function", "trans", "m", "n", "k", "batch", "types", "compute", "threads",
                           "algorithms"],
                  sections=[("Overview", overview), ("Inputs", file_rows(files))],
                  document={"overview": overview[0], "signatures": rows,
                            "summary": {"files": [s.to_dict() for s in files]}},
                  files=list(files), cases=cases)


def _where(record: GemmCall) -> dict[str, Any]:
    return {"file": record.file, "line": record.line, "m": record.m, "n": record.n, "k": record.k,
            "batch_count": record.batch_count, "trans": record.trans}
