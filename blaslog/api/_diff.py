"""`blaslog diff`: a sharded run against an unsharded one, GEMM by GEMM."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypedDict

from blaslog._fast.cache import SharedShapes
from blaslog.api._check import _overflow_findings, _rank_rows
from blaslog.api._emulate import _emulated, _emulation_gpus
from blaslog.api._inputs import MIN_COVERAGE, CapsLike, Inputs, Options, Paths, Run, _names, _read_for_report
from blaslog.api._settings import SETTINGS_SECTION, _caps_for, add_settings
from blaslog.caps import Caps
from blaslog.diff import DiffResult, diff_runs
from blaslog.errors import BlaslogError, InputError
from blaslog.ranks import compact_ranks
from blaslog.records import GemmCall
from blaslog.report import FailOn, Finding, Location, Report

if TYPE_CHECKING:
    from blaslog.emulate.predict import Settings as EmulateSettings

# ---- diff ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Coverage:
    """How much of one compared file was paired."""

    side: str
    """`sharded` or `unsharded`."""
    file: str
    """The file."""
    rank: int | None
    """Its rank (sharded side)."""
    paired: int
    """GEMM calls paired with a call of the other side."""
    unmatched: int
    """GEMM calls left without a counterpart."""

    @property
    def share(self) -> float:
        """paired / all."""
        total = self.paired + self.unmatched
        return self.paired / total if total else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "side": self.side,
            "file": self.file,
            "rank": self.rank,
            "paired": self.paired,
            "unmatched": self.unmatched,
            "coverage": round(self.share, 4),
        }


def diff(
    sharded: Paths,
    unsharded: Paths,
    *,
    tp: int | None = None,
    rank: int | None = None,
    caps: CapsLike | None = None,
    min_coverage: float = MIN_COVERAGE,
    options: Options | None = None,
    fail_on: str = FailOn.PRECISION,
    emulate: EmulateSettings | None = None,
    pin: bool = False,
) -> Report:
    """What `blaslog diff SHARDED UNSHARDED` prints: each sharded rank's GEMMs paired with the unsharded run's.

    `sharded` and `unsharded` are each a file, a quoted glob, a folder or a list of them. The unsharded run's
    rank 0 (its first file) is the reference. `rank` keeps one sharded rank. A diff that pairs nothing raises
    InputError saying why it thinks so; one that pairs less than `min_coverage` of a sharded file's calls
    reports an `input` finding. With `pin` (`--emit-tunableop`), the report's `pinning` holds the TunableOp
    pins of the sharded GEMMs (see :func:`tunableop_pins`).
    """
    if pin and emulate is not None:
        raise BlaslogError("--emulate and --emit-tunableop are two jobs: run them one at a time")
    sharded = _names(sharded)
    unsharded = _names(unsharded)
    loaded, caps_notes = _caps_for(caps, _names(sharded), _names(unsharded))
    gpus = _emulation_gpus(emulate, loaded, _names(sharded), _names(unsharded))
    diffed = _diff(
        sharded,
        unsharded,
        tp=tp,
        rank=rank,
        caps=loaded,
        min_coverage=min_coverage,
        options=options or Options(),
        fail_on=fail_on,
    )
    report = diffed.report
    report.notes.extend(caps_notes)
    if pin:
        report.pinning = _pinning(diffed)
    return _emulated(report, emulate, loaded, gpus)


class _DiffSettings(TypedDict):
    """The settings diff and diff_many share (see :func:`diff`)."""

    tp: int | None
    rank: int | None
    caps: CapsLike | None
    min_coverage: float
    options: Options | None
    fail_on: str
    emulate: EmulateSettings | None


def diff_command(
    arguments: Paths,
    reference: Paths | None = None,
    *,
    pin: bool = False,
    tp: int | None = None,
    rank: int | None = None,
    caps: CapsLike | None = None,
    min_coverage: float = MIN_COVERAGE,
    options: Options | None = None,
    fail_on: str = FailOn.PRECISION,
    emulate: EmulateSettings | None = None,
) -> Report:
    """What `blaslog diff ARGUMENTS... [--ref REFERENCE] [--emit-tunableop FILE]` prints, from the positional
    arguments as the command takes them: with `reference`, each a run compared with it (:func:`diff_many`); else
    SHARDED UNSHARDED, or the files a shell made of an unquoted glob (:func:`split_diff_arguments`, whose note
    comes first among the report's notes, and ends the message of an InputError the diff raises), compared by
    :func:`diff` (with `pin`: its TunableOp pins)."""
    same: _DiffSettings = {
        "tp": tp,
        "rank": rank,
        "caps": caps,
        "min_coverage": min_coverage,
        "options": options,
        "fail_on": fail_on,
        "emulate": emulate,
    }
    arguments = _names(arguments)  # one path alone is one argument, not its letters
    if reference is not None:
        if pin:
            raise BlaslogError("--emit-tunableop pins one sharded run to one unsharded run: leave out --ref")
        return diff_many(arguments, reference, **same)
    sharded, unsharded, note = split_diff_arguments(arguments)
    try:
        report = diff(sharded, unsharded, **same, pin=pin)
    except InputError as exc:  # nothing paired, say: the split may be why
        if note:
            raise InputError(f"{exc}\nnote: {note}") from None
        raise
    if note:
        report.notes.insert(0, f"note: {note}")
    return report


def tunableop_pins(
    sharded: Paths,
    unsharded: Paths,
    *,
    tp: int | None = None,
    rank: int | None = None,
    caps: CapsLike | None = None,
    min_coverage: float = MIN_COVERAGE,
    options: Options | None = None,
    fail_on: str = FailOn.PRECISION,
) -> tuple[Report, Any]:
    """What `blaslog diff SHARDED UNSHARDED --emit-tunableop FILE` does: the diff's Report, and the Pinning
    (blaslog.tunableop) of each sharded GEMM whose solution differs to the unsharded run's, where the inputs show
    that solution ran for its exact signature; ``blaslog.tunableop.render(pinning)`` is the file to write. (The
    pinning is the report's too: ``diff(..., pin=True).pinning``.)"""
    report = diff(
        sharded,
        unsharded,
        tp=tp,
        rank=rank,
        caps=caps,
        min_coverage=min_coverage,
        options=options,
        fail_on=fail_on,
        pin=True,
    )
    return report, report.pinning


def _pinning(diffed: _Diffed) -> Any:
    """The TunableOp Pinning of a diff's sharded GEMMs (see :func:`tunableop_pins`)."""
    from blaslog.tunableop import is_tuned, pin, validators

    results, side, ref_side = diffed.results, diffed.sharded, diffed.unsharded
    evidence = [occ for run in [*side.runs, *ref_side.runs] for occ in run.calls]

    def _validators(runs: Sequence[Run]) -> dict[str, str]:
        for run in runs:
            if any(is_tuned(c) and c.log_format == "tunableop" for c in run.calls.calls):
                return validators(run.summary.path)
        return {}

    mine, theirs = _validators(side.runs), _validators(ref_side.runs)
    borrowed = not mine and bool(theirs)
    pinning = pin([pair for result in results for pair in result.pairs], evidence, mine or theirs, theirs)
    if borrowed:
        pinning.notes.append(
            "the Validator lines are the unsharded run's (the sharded inputs hold none): check "
            "that both runs used the same PyTorch, ROCm, rocBLAS, hipBLASLt and GPU"
        )
    return pinning


@dataclass(slots=True)
class _Diffed:
    """A diff's report, its per-rank results, and what was read on each side (for callers that need more)."""

    report: Report
    results: list[DiffResult]
    sharded: Inputs
    unsharded: Inputs


def _diff(
    sharded: str | Sequence[str],
    unsharded: str | Sequence[str],
    *,
    tp: int | None,
    rank: int | None,
    caps: Caps | None,
    min_coverage: float,
    options: Options,
    fail_on: str,
) -> _Diffed:
    if "-" in _names(sharded) and "-" in _names(unsharded):
        raise InputError("standard input (-) is named on both sides; it can be read once: save one side to a file")
    options = replace(options, rank_option=True)  # diff takes --rank-from
    shapes = SharedShapes()  # the line shapes one side teaches serve the other (the same program logged both)
    ref_inputs, ref = _reference(_names(unsharded), options, shapes)
    side = _read_for_report(_names(sharded), options, shapes=shapes)
    runs = side.runs
    if rank is not None:
        runs = [run for run in runs if run.input.rank == rank]
        if not runs:
            known = compact_ranks(r.input.rank for r in side.runs if r.input.rank is not None)
            raise InputError(f"--rank {rank}: the sharded side has no rank {rank} (it has ranks {known or 'none'})")
    chosen = [_reference_for(run, ref, ref_inputs) for run in runs]
    calls: dict[int, list[Any]] = {id(r): list[Any](r.calls) for r in chosen}
    results = [
        diff_runs(
            list[Any](run.calls),
            calls[id(other)],
            tp=tp,
            caps=caps,
            sharded_file=run.summary.path,
            unsharded_file=other.summary.path,
            keyed=_keyed(run, other),
        )
        for run, other in zip(runs, chosen, strict=True)
    ]
    if not any(result.pairs for result in results):
        raise InputError(_why_nothing_paired(results, runs, ref, tp))
    used = list({id(r): r for r in chosen}.values())
    coverage = _coverage(results, runs, chosen)
    report = _diff_report(results, runs, used, side, ref_inputs, coverage, min_coverage)
    _tunableop_validators(report, runs, ref)
    report.fail_on = fail_on
    add_settings(report, _names(sharded), _names(unsharded))
    return _Diffed(report, results, side, ref_inputs)


def split_diff_arguments(arguments: Sequence[str]) -> tuple[list[str], list[str], str | None]:
    """(sharded, unsharded, note) from `blaslog diff`'s positional arguments.

    Two arguments are SHARDED UNSHARDED. More are what a shell made of an unquoted glob
    (`blaslog diff logs/tp4/*.log logs/tp1.log`): the trailing files of one folder are the unsharded run, the
    files before them (of other folders) the sharded run, said in the note. Anything else is InputError with
    the quoting hint."""
    if len(arguments) == 2:
        return [arguments[0]], [arguments[1]], None
    usage = (
        "blaslog diff takes two runs, SHARDED UNSHARDED (each a file, a folder or a quoted glob such as "
        "'logs/tp4/*.log'), or several runs with --ref REFERENCE"
    )
    if len(arguments) < 2:
        raise InputError(f"{usage}; got {len(arguments)}")
    if not all(os.path.isfile(a) for a in arguments):
        raise InputError(f"{usage}; got {len(arguments)} arguments: quote globs so that blaslog expands them")
    folder = os.path.dirname(os.path.abspath(arguments[-1]))
    cut = len(arguments)
    while cut > 0 and os.path.dirname(os.path.abspath(arguments[cut - 1])) == folder:
        cut -= 1
    sharded, unsharded = list(arguments[:cut]), list(arguments[cut:])
    if not sharded:
        raise InputError(
            f"{usage}; got {len(arguments)} files of one folder (did the shell expand a glob? quote it: "
            f"blaslog diff 'logs/tp4/*.log' logs/tp1.log)"
        )
    note = (
        f"{len(arguments)} files given (a glob the shell expanded?): comparing the {len(sharded)} files before "
        f"{unsharded[0]} as the sharded run with {', '.join(unsharded)} as the unsharded run; quote globs "
        "('logs/tp4/*.log') to say so explicitly"
    )
    return sharded, unsharded, note


def diff_many(
    runs: Paths,
    reference: Paths,
    *,
    tp: int | None = None,
    rank: int | None = None,
    caps: CapsLike | None = None,
    min_coverage: float = MIN_COVERAGE,
    options: Options | None = None,
    fail_on: str = FailOn.PRECISION,
    emulate: EmulateSettings | None = None,
) -> Report:
    """What `blaslog diff --ref REF RUN...` prints: every run compared with one reference, and per reference
    GEMM which runs agree with it. Each run is a file, a quoted glob or a folder (one file per rank); with
    `emulate`, each run's findings that change the arithmetic carry the emulation's prediction."""
    reference = _names(reference)
    runs = _names(runs)  # each run one file, glob or folder
    options = options or Options()
    loaded, caps_notes = _caps_for(caps, list(runs), _names(reference))
    reports: list[Report] = []
    per_run: list[dict[str, Any]] = []
    agreement: dict[Any, dict[str, set[str]]] = {}
    order: list[Any] = []
    gpus = {name: _emulation_gpus(emulate, loaded, _names(name), _names(reference)) for name in runs}
    for name in runs:
        diffed = _diff(
            name, reference, tp=tp, rank=rank, caps=loaded, min_coverage=min_coverage, options=options, fail_on=fail_on
        )
        report, results = diffed.report, diffed.results
        report = _emulated(report, emulate, loaded, gpus[name])
        reports.append(report)
        per_run.append(
            {
                "run": name,
                "files": len(results),
                "tp": results[0].tp.tp,
                "pairs": sum(len(r.pairs) for r in results),
                "identical": sum(r.identical_pairs for r in results),
                "findings": len(report.findings),
            }
        )
        _agreement(results, name, loaded, agreement, order)
    combined = Report("diff", fail_on=fail_on, files=[f for r in reports for f in r.files])
    for name, report in zip(runs, reports, strict=True):
        combined.findings.extend(_retitled(f, name) for f in report.findings)
        combined.failed.extend(report.failed)
        combined.notes.extend(f"{name}: {note}" for note in report.notes)
        combined.cases.extend(report.cases)
    from blaslog.report import sort_findings

    combined.findings = sort_findings(combined.findings)
    rows: list[dict[str, Any]] = []
    for call in order:
        row: dict[str, Any] = {"gemm": f"{call.function} {call.shape_text()} {call.a_type}/{call.compute_type}"}
        for name in runs:
            verdicts = agreement[call].get(name)
            row[name] = "not paired" if not verdicts else ", ".join(sorted(verdicts))
        rows.append(row)
    combined.sections = [
        (f"{title}: {name}", section)
        for name, report in zip(runs, reports, strict=True)
        for title, section in report.sections
        if title == SETTINGS_SECTION
    ]
    combined.sections += [("Runs against the reference", per_run), ("Agreement with the reference per GEMM", rows)]
    combined.notes.extend(caps_notes)
    combined.rows = [dict(row) for row in rows]
    combined.columns = list(rows[0]) if rows else []
    combined.document = {
        "reference": reference if isinstance(reference, str) else list(reference),
        "runs": [{"run": name, **r.to_json()} for name, r in zip(runs, reports, strict=True)],
        "agreement": rows,
    }
    return combined


def _agreement(
    results: Sequence[DiffResult],
    name: str,
    caps: Caps | None,
    agreement: dict[Any, dict[str, set[str]]],
    order: list[Any],
) -> None:
    """Add run `name`'s verdict on each reference GEMM it paired (`same`, or the class of the difference) to
    `agreement`; reference GEMMs seen for the first time are appended to `order`."""
    from blaslog.explain import compare

    seen: dict[tuple[Any, Any], str] = {}
    for result in results:
        for s, u in result.pairs:
            key = (getattr(s, "call", s), getattr(u, "call", u))
            if key not in seen:
                difference = compare(key[0], key[1], caps)
                seen[key] = "same" if difference is None else difference.cls
            if key[1] not in agreement:
                agreement[key[1]] = {}
                order.append(key[1])
            agreement[key[1]].setdefault(name, set()).add(seen[key])


def _retitled(finding: Finding, run: str) -> Finding:
    from dataclasses import replace

    return replace(finding, title=f"{run}: {finding.title}")


def _reference(names: list[str], options: Options, shapes: SharedShapes | None = None) -> tuple[Inputs, Run]:
    inputs = _read_for_report(names, options, shapes=shapes)
    runs = [run for run in inputs.runs if len(run.calls)]
    ref = min(runs, key=lambda run: (run.input.rank is None, run.input.rank or 0))
    if len(inputs.runs) > 1:
        inputs.notes.append(
            f"{len(inputs.runs)} unsharded files given; {ref.summary.path} ({ref.input.label()}) is the reference"
        )
    return inputs, ref


def _reference_for(run: Run, ref: Run, inputs: Inputs) -> Run:
    """The reference file a sharded file is compared with: the reference (the unsharded run's first file), unless
    the sharded file logged a library it did not (a rank that logged cuBLASLt and cuBLAS, or rocBLAS and
    hipBLASLt, into two files): then the unsharded run's first file that logged most of those libraries."""
    libraries = {c.library for c in run.calls.calls}
    if libraries <= {c.library for c in ref.calls.calls}:
        return ref
    logged = [(len(libraries & {c.library for c in r.calls.calls}), r) for r in inputs.runs if len(r.calls)]
    best = max((overlap for overlap, _ in logged), default=0)
    if best == 0:
        return ref
    # the reference rank's other file, or (its two files told apart by name order) the first that logged them
    return min((r for overlap, r in logged if overlap == best), key=lambda r: (r.input.rank is None, r.input.rank))


def _coverage(results: Sequence[DiffResult], runs: Sequence[Run], refs: Sequence[Run]) -> list[Coverage]:
    out = [
        Coverage("sharded", run.summary.path, run.input.rank, len(result.pairs), len(result.unmatched_sharded))
        for result, run in zip(results, runs, strict=True)
    ]
    for result, run, ref in zip(results, runs, refs, strict=True):
        out.append(
            Coverage("unsharded", ref.summary.path, run.input.rank, len(result.pairs), len(result.unmatched_unsharded))
        )
    return out


def _why_nothing_paired(results: Sequence[DiffResult], runs: Sequence[Run], ref: Run, tp: int | None) -> str:
    """Why a diff paired no GEMM, as far as the logs tell, and what to try."""
    sharded = ", ".join(run.summary.path for run in runs[:3]) + (", ..." if len(runs) > 3 else "")
    head = f"nothing to compare: no GEMM of {sharded} pairs with a GEMM of {ref.summary.path}"
    libs_s = {c.library for run in runs for c in run.calls.calls}
    libs_u = {c.library for c in ref.calls.calls}
    if libs_s.isdisjoint(libs_u):
        return (
            f"{head}: the runs were logged by different libraries ({', '.join(sorted(libs_s))} vs "
            f"{', '.join(sorted(libs_u))}); log both runs with the same library (a cuBLASLt log pairs only with "
            "a cuBLASLt log)"
        )
    if any(result.reversed_hint for result in results):
        return (
            f"{head}: the first run's GEMMs are the larger ones: were the runs given the other way round? The order is "
            f"blaslog diff SHARDED UNSHARDED: try blaslog diff {ref.summary.path} '{runs[0].summary.path}'"
        )
    if all(_keyed(run, ref) for run in runs):
        return _why_no_row_paired(head, runs, ref, tp)
    if tp == 1 and any(result.unmatched_sharded and result.unmatched_unsharded for result in results):
        return (
            f"{head} with --tp 1: GEMMs of the same types were found on both sides, but none of the same shape "
            "(--tp 1 pairs equal shapes only); leave --tp out to infer the degree, or give the one the sharded run used"
        )
    if tp is not None and any(result.unmatched_sharded and result.unmatched_unsharded for result in results):
        return (
            f"{head} with --tp {tp}: GEMMs of the same types were found on both sides, but no dimension of "
            f"them is divided by {tp}; leave --tp out to infer it, or give the degree the sharded run used"
        )
    return (
        f"{head}: no GEMM of one run has a counterpart with the same types and transposes in the other, so "
        "these look like logs of different models or programs; check that both runs ran the same model "
        "(and the same step), or compare two runs of one model"
    )


def _why_no_row_paired(head: str, runs: Sequence[Run], ref: Run, tp: int | None) -> str:
    """Why two sets of tuning-file rows share no row: rows of one shape under other operators or types, or none."""
    rows = ref.calls.calls
    for run in runs:
        for s in run.calls.calls:
            u = next((u for u in rows if u.dims() == s.dims() and u.trans == s.trans), None)
            if u is not None:
                return (
                    f"{head}: no row of one file has the key (operator, parameters and types) of a row of the other; "
                    f"rows of one shape are under other operators or types (first: {_row_text(s)} in "
                    f"{run.summary.path}, {_row_text(u)} in {ref.summary.path}): the runs used other data types "
                    "(TF32 on in one, say) or other operators"
                )
    degree = f" {tp}" if tp else ""
    return (
        f"{head}: the files share no GEMM: no row of one has the key (operator, parameters and types) of a row of "
        f"the other, and none is the other's with one dimension divided by a TP degree{degree}; they look like "
        "results files of different models or shapes"
    )


def _row_text(call: GemmCall) -> str:
    op = dict(call.extra).get("op") or f"{call.function} {call.a_type}"
    return f"{op} {call.trans} {call.m}x{call.n}x{call.k}" + (
        f" batch {call.batch_count}" if call.batch_count > 1 else ""
    )


def _diff_report(
    results: Sequence[DiffResult],
    runs: Sequence[Run],
    refs: Sequence[Run],
    side: Inputs,
    ref_inputs: Inputs,
    coverage: list[Coverage],
    min_coverage: float,
) -> Report:
    from blaslog.views import diff_report

    report = diff_report(
        results,
        [run.summary for run in runs],
        [ref.summary for ref in refs],
        # one file whose rank nothing names is not "rank 0": its findings are not labelled with a rank
        ranks=None
        if len(runs) == 1 and runs[0].input.rank is None
        else [run.input.rank if run.input.rank is not None else i for i, run in enumerate(runs)],
    )
    rows = [c.to_dict() for c in coverage]
    low = [c for c in coverage if c.side == "sharded" and c.share < min_coverage]
    findings = [_coverage_finding(c, min_coverage) for c in low]
    if findings:
        from blaslog.report import sort_findings

        report.findings = sort_findings(report.findings + findings)
    _overflow_findings(report, [*runs, *refs], "compared")
    report.sections.insert(0, ("Coverage", [dict(row, coverage=f"{row['coverage']:.0%}") for row in rows]))
    report.document["coverage"] = rows
    report.document["ranks"] = _rank_rows(runs)
    report.failed = side.failed + ref_inputs.failed
    report.notes[:0] = side.notes + ref_inputs.notes
    report.notes.insert(
        0,
        "compared: "
        + "; ".join(
            f"{c.file} ({'rank ' + str(c.rank) if c.rank is not None else c.side}) {c.paired} of "
            f"{c.paired + c.unmatched} GEMM calls paired"
            for c in coverage
            if c.side == "sharded"
        )
        + f"; reference {refs[0].summary.path}",
    )
    return report


def _coverage_finding(coverage: Coverage, minimum: float) -> Finding:
    total = coverage.paired + coverage.unmatched
    title = (
        f"only {coverage.paired} of {total} GEMM calls of {coverage.file} were paired "
        f"({coverage.share:.0%}, below --min-coverage {minimum:g})"
    )
    return Finding(
        kind="low_coverage",
        cls="input",
        title=title,
        explanation=(
            f"{coverage.unmatched} GEMM calls of {coverage.file} have no counterpart in the other run, so "
            "whatever they ran was not compared. The runs may hold different steps or models, or the "
            "tensor-parallel degree was not inferred right (give --tp)."
        ),
        location=Location(coverage.file, 1, "sharded"),
        key=f"coverage|{coverage.file}",
    )


def _keyed(run: Run, ref: Run) -> bool:
    """Whether two runs are tuning files (TunableOp results, hipBLASLt tuning files): sets of rows keyed by
    operator, parameters and types, paired by key rather than aligned as call sequences."""
    from blaslog.tunableop import is_tuned

    calls = [*run.calls.calls, *ref.calls.calls]
    return bool(run.calls.calls) and bool(ref.calls.calls) and all(is_tuned(c) for c in calls)


def _tunableop_validators(report: Report, runs: Sequence[Run], ref: Run) -> None:
    """A diff of TunableOp files says first whether their Validator lines (versions, GPU arch) agree."""
    from blaslog.tunableop import is_tuned, validator_findings

    if not any(is_tuned(c) for c in ref.calls.calls) and not any(is_tuned(c) for r in runs for c in r.calls.calls):
        return
    findings, rows, notes = validator_findings([run.summary.path for run in runs], ref.summary.path)
    report.findings[:0] = findings
    report.sections.insert(0, ("TunableOp validators", rows))
    report.document["tunableop_validators"] = rows
    report.notes[:0] = notes
