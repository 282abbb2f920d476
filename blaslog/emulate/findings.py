"""``--emulate`` on a report: each finding that changes the arithmetic gets the prediction of how far it moves
the numbers (its JSON `emulation` object, and a sentence at the end of its explanation)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from blaslog.caps import Caps
from blaslog.emulate.arithmetic import (
    Arithmetic,
    NotModelled,
    candidates,
    compute_format,
    data_format,
    from_cublaslt_flags,
    from_rocblas,
)
from blaslog.emulate.gpus import Evidence, Gpu
from blaslog.emulate.predict import Settings, SideSpec, emulate
from blaslog.records import GemmCall
from blaslog.report import Finding, Report

#: Finding classes whose difference may change the numbers: precision (known), unknown (the candidates), and
#: reduction (the split-K count changes the summation order).
EMULATED_CLASSES = ("precision", "unknown", "reduction")

_DIFF_ROLES = ("sharded", "unsharded")
_CHECK_ROLES = ("other", "first")


@dataclass(frozen=True, slots=True)
class SideGpus:
    """The GPU of each side of a comparison, and where it was read."""

    first: Evidence | None
    """The sharded run's (diff), or the run's (check)."""
    second: Evidence | None
    """The unsharded run's (diff; the run's for check)."""

    def for_side(self, index: int) -> Evidence | None:
        """The evidence for side 0 or 1, falling back on the other side's."""
        mine, other = (self.first, self.second) if index == 0 else (self.second, self.first)
        return mine or other

    def describe(self) -> str:
        """`A100 (Ampere, sm_80), from run.log:2 (cuBLASLt Info line)`; both when they differ."""
        first, second = self.for_side(0), self.for_side(1)
        if first is None or second is None:
            return "unknown"
        if first.gpu == second.gpu:
            sources = dict.fromkeys([first.source, second.source])
            return f"{first.gpu.describe()}, from {' and '.join(sources)}"
        return (
            f"sharded {first.gpu.describe()} (from {first.source}), "
            f"unsharded {second.gpu.describe()} (from {second.source})"
        )


def arithmetics(record: GemmCall, caps: Caps | None, gpu: Gpu) -> tuple[Arithmetic, ...]:
    """What the record's GEMM computed on `gpu`: one arithmetic when its numerics are known (caps, rocBLAS
    flags), else the candidates its types allow; NotModelled when none fits."""
    inputs = data_format(record.a_type) or data_format(record.compute_type)
    if inputs is None:
        raise NotModelled(f"the input type {record.a_type!r} is not one the emulation knows")
    if inputs in ("int8", "int32"):
        raise NotModelled("integer GEMMs accumulate exactly: no rounding to emulate")
    output = data_format(record.d_type) or data_format(record.c_type) or inputs
    if output in ("int8", "int32", "e4m3", "e5m2"):
        output = "fp32"
    splits = record.num_splits_k if record.num_splits_k and record.num_splits_k > 1 else 1
    tile = k_tile(record.stages)
    if record.library in ("rocblas", "hipblaslt"):
        acc, _ = compute_format(record.compute_type)
        return (replace(from_rocblas(gpu, inputs, acc, record.flags, output), splits=splits, split_tile=tile),)
    flags = caps.flags(record) if caps else None
    if flags is not None:
        return tuple(
            replace(a, splits=splits, split_tile=tile) for a in from_cublaslt_flags(flags, gpu, inputs, output)
        )
    math_mode = dict(record.extra).get("context.MathMode")
    found = candidates(gpu, inputs, record.compute_key, output, math_mode)
    return tuple(replace(a, splits=splits, split_tile=tile) for a in found)


def k_tile(stages: str | None) -> int:
    """The k extent of a cuBLASLt stage (`MATMUL_STAGES_64xAUTO` -> 64; 0 when not printed)."""
    import re

    match = re.match(r"MATMUL_STAGES_(\d+)x", stages or "")
    return int(match.group(1)) if match else 0


def tp_of(sharded: GemmCall, unsharded: GemmCall) -> int:
    """Ranks the sharded GEMM's k is split over (1 when another dimension was sharded or none)."""
    if sharded.k and unsharded.k and unsharded.k > sharded.k and unsharded.k % sharded.k == 0:
        return unsharded.k // sharded.k
    return 1


def emulate_finding(finding: Finding, caps: Caps | None, gpus: SideGpus, settings: Settings) -> Finding:
    """The finding with its prediction (or with the reason it could not be emulated)."""
    first_call, second_call = finding.gemms
    diff = finding.kind.startswith("tp_")
    roles = _DIFF_ROLES if diff else _CHECK_ROLES
    try:
        sides = []
        for index, call in enumerate((first_call, second_call)):
            evidence = gpus.for_side(index)
            gpu = settings.gpu or (evidence.gpu if evidence else None)
            if gpu is None:
                raise NotModelled("no GPU is known (give --gpu)")
            sides.append(arithmetics(call, caps, gpu))
        tp = tp_of(first_call, second_call) if diff else 1
        k = second_call.k or first_call.k
        if not k:
            raise NotModelled("the log does not give k")
        first = SideSpec(roles[0], sides[0], tp)
        second = SideSpec(roles[1], sides[1], 1)
        prediction = emulate(first, second, k, settings, label=finding.title[:60])
    except NotModelled as exc:
        data = dict(finding.data, emulation={"skipped": str(exc)})
        return replace(finding, data=data, explanation=f"{finding.explanation} Not emulated: {exc}.")
    source = "--gpu" if settings.gpu else gpus.describe()
    data = dict(finding.data, emulation=prediction.to_dict(source))
    return replace(finding, data=data, explanation=f"{finding.explanation} {prediction.sentence()}")


def emulate_report(report: Report, caps: Caps | None, gpus: SideGpus, settings: Settings) -> Report:
    """Every finding that may change the arithmetic emulated; a note says what was emulated."""
    emulated: list[Finding] = []
    done = skipped = 0
    predictions: list[str] = []
    for finding in report.findings:
        if finding.cls in EMULATED_CLASSES and len(finding.gemms) == 2:
            finding = emulate_finding(finding, caps, gpus, settings)
            emulation: dict[str, Any] = finding.data["emulation"]
            if "skipped" in emulation:
                skipped += 1
            else:
                done += 1
                predictions.append(f"{emulation['difference']['max']:.2g}")
        emulated.append(finding)
    report.findings = emulated
    gpu = f"--gpu {settings.gpu.describe()}" if settings.gpu else gpus.describe()
    if done or skipped:
        report.notes.append(
            f"emulation: {done} finding(s) emulated, {skipped} not ({settings.samples} sampled outputs each; GPU "
            f"{gpu}); largest predicted difference {max(predictions, key=float) if predictions else '-'} of Σ|a·b|"
        )
    else:
        report.notes.append(
            "emulation: no finding changes the arithmetic (precision, unknown or reduction), so nothing was emulated"
        )
    report.document["emulation"] = {
        "emulated": done,
        "skipped": skipped,
        "samples": settings.samples,
        "gpu": gpu,
    }
    return report
