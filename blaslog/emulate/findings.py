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
from blaslog.errors import BlaslogError
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

    def names(self) -> Any:
        """The GPU's name, or each side's when they differ (None when unknown)."""
        first, second = self.for_side(0), self.for_side(1)
        if first is None or second is None:
            return None
        return first.gpu.name if first.gpu == second.gpu else {"sharded": first.gpu.name, "unsharded": second.gpu.name}

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
    if record.library in ("cublasLt", "cublas") and gpu.vendor != "nvidia":
        raise NotModelled(f"a {record.library} GEMM does not run on {gpu.name}, an AMD GPU: --gpu or the GPU evidence "
                          "is wrong")  # fmt: skip
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


def _unknown_split(record: GemmCall) -> str:
    """A note when the log says split-K without its count (numSplitsK=-1: the kernel decides)."""
    if record.num_splits_k is not None and record.num_splits_k < 0:
        return (
            f" The {record.shape_text()} record's split-K count is not logged (numSplitsK={record.num_splits_k}): "
            "it is modelled without split-K."
        )
    return ""


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
    except BlaslogError as exc:
        reason = str(exc).rstrip(".")
        data = dict(finding.data, emulation={"skipped": reason})
        return replace(finding, data=data, explanation=f"{finding.explanation} Not emulated: {reason}.")
    source = "--gpu" if settings.gpu else gpus.describe()
    data = dict(finding.data, emulation=prediction.to_dict(source))
    note = _unknown_split(first_call) + _unknown_split(second_call)
    return replace(finding, data=data, explanation=f"{finding.explanation} {prediction.sentence()}{note}")


def emulate_report(report: Report, caps: Caps | None, gpus: SideGpus, settings: Settings) -> Report:
    """Every finding that may change the arithmetic emulated; a note says what was emulated."""
    emulated: list[Finding] = []
    done = skipped = 0
    predictions: list[float] = []
    for finding in report.findings:
        if finding.cls in EMULATED_CLASSES and len(finding.gemms) == 2:
            finding = emulate_finding(finding, caps, gpus, settings)
            emulation: dict[str, Any] = finding.data["emulation"]
            if "skipped" in emulation:
                skipped += 1
            else:
                done += 1
                predictions.append(emulation["difference"]["max"])
        emulated.append(finding)
    report.findings = emulated
    by_fingerprint = {f.fingerprint(): f for f in emulated if "emulation" in f.data}
    report.cases = [
        replace(case, failures=tuple(_carried(f, by_fingerprint) for f in case.failures)) for case in report.cases
    ]
    gpu = f"--gpu {settings.gpu.describe()}" if settings.gpu else gpus.describe()
    if done or skipped:
        report.notes.append(
            f"emulation: {done} finding(s) emulated, {skipped} not ({settings.samples} sampled outputs each; GPU "
            f"{gpu}); largest predicted difference {f'{max(predictions):.2g}' if predictions else '-'} of Σ|a·b|"
        )
    else:
        report.notes.append(
            "emulation: no finding changes the arithmetic (precision, unknown or reduction), so nothing was emulated"
        )
    report.document["emulation"] = {
        "emulated": done,
        "skipped": skipped,
        "samples": settings.samples,
        "gpu": settings.gpu.name if settings.gpu else gpus.names(),
        "gpu_source": "--gpu" if settings.gpu else gpus.describe(),
    }
    return report


def _carried(finding: Finding, emulated: dict[str, Finding]) -> Finding:
    """A JUnit case's finding with the emulation of the report's finding of the same cause."""
    twin = emulated.get(finding.fingerprint())
    if twin is None or "emulation" in finding.data:
        return finding
    return replace(finding, explanation=twin.explanation, data=dict(finding.data, emulation=twin.data["emulation"]))
