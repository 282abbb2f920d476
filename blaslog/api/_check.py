"""`blaslog summary` and `blaslog check`: reports of one run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from blaslog.api._emulate import _emulated, _emulation_gpus
from blaslog.api._inputs import (
    CapsLike,
    Inputs,
    Options,
    Paths,
    Run,
    _names,
    _read_for_report,
    cut_short,
    read_run_files,
)
from blaslog.api._settings import _caps_for
from blaslog.errors import BlaslogError, InputError
from blaslog.report import FailOn, Finding, Location, Report

if TYPE_CHECKING:
    from blaslog.emulate.predict import Settings as EmulateSettings


def summary(names: Paths, *, caps: CapsLike | None = None, options: Options | None = None) -> Report:
    """What `blaslog summary` prints: distinct GEMM signatures with call counts, threads and algorithms."""
    names = _names(names)
    from blaslog.views import summary_report

    inputs = _read_for_report(names, options)
    loaded, caps_notes = _caps_for(caps, names)
    report = summary_report(None, inputs.files, caps=loaded, runs=[run.calls for run in inputs.runs])
    report.fail_on = FailOn.NEVER  # a summary reports; it does not judge
    report.notes.extend(caps_notes)
    report = _finish(report, inputs)
    report.failed += cut_short(inputs.files)
    return report


def check(
    names: Paths,
    *,
    tunableop: Paths = (),
    caps: CapsLike | None = None,
    batch: bool = False,
    options: Options | None = None,
    fail_on: str = FailOn.PRECISION,
    emulate: EmulateSettings | None = None,
) -> Report:
    """What `blaslog check` prints: GEMMs inside one run that ran with different algorithms, flags or solutions
    (each file on its own); with `batch`, also the algorithm ranges along the dimension that varies; with
    `emulate`, each finding that changes the arithmetic carries the emulation's prediction. With `tunableop`
    (the run's TunableOp results files: `--tunableop`), the logs are checked against them too (see
    :func:`check_tunableop`); that check is not emulated."""
    if tunableop:
        if emulate is not None:
            raise BlaslogError("--emulate is for the algorithm findings of check and diff; leave out --tunableop")
        return check_tunableop(names, tunableop, caps=caps, batch=batch, options=options, fail_on=fail_on)
    names = _names(names)
    loaded = _caps_for(caps, names)[0] if emulate is not None else None
    gpus = _emulation_gpus(emulate, loaded, names, names)
    report = _check(_read_for_report(names, options), names, caps=caps, batch=batch, fail_on=fail_on)
    return _emulated(report, emulate, loaded, gpus)


def check_tunableop(
    names: Paths,
    tunableop: Paths,
    *,
    caps: CapsLike | None = None,
    batch: bool = False,
    options: Options | None = None,
    fail_on: str = FailOn.PRECISION,
) -> Report:
    """What `blaslog check LOG... --tunableop FILE...` prints: `check` of the logs, plus the logs against the run's
    TunableOp (or hipBLASLt tuning) files: GEMMs that did not run the tuned solution, GEMMs that ran but were
    never tuned, tuned rows that never ran, and rows whose solution differs between the run's GPUs."""
    names = _names(names)
    tunableop = _names(tunableop)
    from blaslog.report import sort_findings
    from blaslog.tunableop import Source, cross_check, is_tuned, ordinal

    options = options or Options()
    logs = _read_for_report(names, options)
    report = _check(logs, names, caps=caps, batch=batch, fail_on=fail_on)
    tuned_options = Options(log_format=("tunableop", "hipblaslt-tuning"), strict=options.strict)
    tables = read_run_files(tunableop, tuned_options)
    if not tables.runs or not any(len(run.calls) for run in tables.runs):
        raise InputError(
            "; ".join(tables.failed)
            or f"no TunableOp rows in {', '.join(tunableop)} (a "
            "tunableop_results<N>.csv written with PYTORCH_TUNABLEOP_ENABLED=1)"
        )
    log_sources = [
        Source(run.summary.path, run.input.rank, [occ.record() for occ in run.calls if not is_tuned(occ)])
        for run in logs.runs
    ]
    tuned_sources = [
        Source(run.summary.path, ordinal(run.summary.path), [occ.record() for occ in run.calls]) for run in tables.runs
    ]
    from blaslog.views import input_findings

    findings, sections, notes = cross_check([s for s in log_sources if s.calls], tuned_sources)
    # the logs' GEMMs were compared with the tuned rows, if not with each other; the tuning files are inputs too:
    # accounted for, and what of them could not be read is a finding
    kept = [f for f in report.findings if f.kind != "nothing_compared"]
    report.findings = sort_findings(kept + findings + input_findings(tables.files))
    report.sections[:0] = sections
    report.document["tunableop"] = dict(sections)
    report.notes.extend(notes + [n for n in tables.notes if not n.startswith("ranks guessed")])
    report.failed.extend(tables.failed)
    report.files.extend(tables.files)
    report.document.setdefault("summary", {"files": []})["files"].extend(f.to_dict() for f in tables.files)
    return report


def _check(inputs: Inputs, names: Sequence[str], *, caps: CapsLike | None, batch: bool, fail_on: str) -> Report:
    """`check` of inputs read already."""
    from blaslog.views import check_report

    loaded, caps_notes = _caps_for(caps, names)
    report = check_report(inputs.occurrences(), inputs.files, caps=loaded, batch=batch)
    report.fail_on = fail_on
    report.notes.extend(caps_notes)
    _overflow_findings(report, inputs.runs, "checked")
    return _finish(report, inputs)


def _overflow_findings(report: Report, runs: Sequence[Run], what: str) -> None:
    """An `input` finding for each run that kept only its first MAX_DISTINCT distinct calls: the calls of the
    others were counted but not `what` (checked, compared)."""
    from blaslog.report import sort_findings

    extra = []
    for run in runs:
        calls = run.calls
        if not calls.overflow:
            continue
        extra.append(
            Finding(
                kind="too_many_distinct_calls",
                cls="input",
                title=f"{calls.overflow:,} GEMM calls of {run.summary.path} were not {what}",
                explanation=(
                    f"{run.summary.path} holds more than {calls.max_distinct:,} distinct GEMM calls (a training "
                    f"log repeats a few hundred); blaslog keeps the first {calls.max_distinct:,} to stay in "
                    f"bounded memory, so the {calls.overflow:,} calls of the others were counted but not {what}. "
                    "Split the log (per rank, per step range) to look at all of them."
                ),
                location=Location(run.summary.path, 1),
                key=f"overflow|{run.summary.path}",
            )
        )
    if extra:
        report.findings = sort_findings(report.findings + extra)


def _finish(report: Report, inputs: Inputs) -> Report:
    """The inputs' errors and notes, and each file's rank and how it was known, into the report."""
    report.failed = list(inputs.failed)
    report.notes[:0] = inputs.notes
    report.document["ranks"] = _rank_rows(inputs.runs)
    return report


def _rank_rows(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """Each file's rank and how it was known, as every report states them."""
    return [{"file": run.input.path, "rank": run.input.rank, "how": run.input.how} for run in runs]
