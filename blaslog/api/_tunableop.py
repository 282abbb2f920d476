"""TunableOp results files: checked against a run, and pins written from a diff."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from blaslog.api._check import _check
from blaslog.api._diff import _diff
from blaslog.api._inputs import (
    MIN_COVERAGE,
    CapsLike,
    Options,
    Paths,
    Run,
    _load,
    _names,
    _read_for_report,
    read_run_files,
)
from blaslog.errors import InputError
from blaslog.report import FailOn, Report

# ---- TunableOp ------------------------------------------------------------------------------------------------


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
    that solution ran for its exact signature; ``blaslog.tunableop.render(pinning)`` is the file to write."""
    sharded = _names(sharded)
    unsharded = _names(unsharded)
    from blaslog.tunableop import is_tuned, pin, validators

    diffed = _diff(
        sharded,
        unsharded,
        tp=tp,
        rank=rank,
        caps=_load(caps),
        min_coverage=min_coverage,
        options=options or Options(),
        fail_on=fail_on,
    )
    report, results, side, ref_side = diffed.report, diffed.results, diffed.sharded, diffed.unsharded
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
    return report, pinning
