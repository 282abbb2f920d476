"""--emulate: each finding's arithmetic emulated on both sides."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from blaslog.api._inputs import CapsLike, _load
from blaslog.caps import Caps
from blaslog.errors import InputError
from blaslog.report import FailOn, Report

if TYPE_CHECKING:
    from blaslog.emulate.predict import Settings as EmulateSettings

# ---- --emulate ---------------------------------------------------------------------------------------------------


def _emulation_gpus(
    settings: EmulateSettings | None, caps: Caps | None, first: Sequence[str], second: Sequence[str]
) -> Any:
    """The GPU of each side for --emulate (from the caps as resolved by _caps_for, run folders and log lines),
    found before anything is parsed: InputError when neither side names one and --gpu was not given;
    EmulationUnavailable when the emulate extra is missing."""
    if settings is None:
        return None
    from blaslog.emulate.engine import require
    from blaslog.emulate.findings import SideGpus
    from blaslog.emulate.gpus import detect, known_names

    require()
    caps_gpu, caps_source = (caps.gpu, caps.source or "caps") if caps is not None else (None, "")
    gpus = SideGpus(detect(first, caps_gpu, caps_source), detect(second, caps_gpu, caps_source))
    if settings.gpu is None and gpus.first is None and gpus.second is None:
        raise InputError(
            "--emulate: the inputs do not say which GPU ran them (no cuBLASLt Info line, gfx target, caps gpu or "
            f"run.json GPU); give --gpu NAME ({', '.join(known_names()[:11])} ...)"
        )
    return gpus


def _emulated(report: Report, settings: EmulateSettings | None, caps: Caps | None, gpus: Any) -> Report:
    """The report with its findings emulated (unchanged without `settings`); `caps` as resolved by _caps_for."""
    if settings is None:
        return report
    from blaslog.emulate.findings import emulate_report

    return emulate_report(report, caps, gpus, settings)


def emulate_command(
    records: str | Sequence[str] = (),
    *,
    shape: str | None = None,
    numerics: str | None = None,
    against: str | None = None,
    tp: int = 1,
    caps: CapsLike | None = None,
    settings: EmulateSettings,
) -> Report:
    """What `blaslog emulate [LOG:LINE [LOG:LINE]] [--shape MxNxK --numerics A --against B --tp N]` prints, from
    its arguments as the command takes them: the two sides made of them (two log records, their arithmetic as
    `caps` knows it; or one record or `shape`, with `numerics` and `against`, the latter split over `tp` ranks),
    emulated by :func:`emulate_gemm`. The GPU is `settings.gpu`, else the one the records' logs or `caps`
    name."""
    from blaslog.emulate.gemm import cli_sides

    k, first, second, source = cli_sides(
        [records] if isinstance(records, str) else list(records),
        shape=shape,
        numerics=numerics,
        against=against,
        tp=tp,
        caps=_load(caps),
        gpu=settings.gpu,
    )
    return emulate_gemm(k=k, first=first, second=second, settings=settings, source=source)


def emulate_gemm(
    *,
    k: int,
    first: Any,
    second: Any,
    settings: EmulateSettings,
    source: str = "",
) -> Report:
    """What `blaslog emulate` prints: one GEMM's two sides (SideSpec) emulated, as a report of one section."""
    from blaslog.emulate.predict import emulate

    prediction = emulate(first, second, k, settings)
    document = prediction.to_dict(source)
    rows = [
        {
            "side": side.role,
            "arithmetic": " | ".join(a.describe() for a in side.arithmetics),
            "tp": side.tp,
            "max vs FP64": f"{prediction.relative[side.role]['max']:.3g}",
            "median vs FP64": f"{prediction.relative[side.role]['median']:.3g}",
        }
        for side in prediction.sides
    ]
    report = Report("emulate", rows=rows, columns=list(rows[0]), document={"emulation": document})
    report.fail_on = FailOn.NEVER
    verdict = prediction.verdict["text"] if prediction.verdict else "give --tolerance atol=A,rtol=R for a verdict"
    gpus = dict.fromkeys(a.gpu.describe() for side in prediction.sides for a in side.arithmetics)
    facts = {
        "GPU": " and ".join(gpus) + (f" (from {source})" if source else ""),
        "inputs": f"{prediction.inputs['description']}; {prediction.samples} sampled outputs, each with k={k}",
        "metric": "|Δ| / Σ_k |a_ik·b_kj|",
        "between the sides": f"max {prediction.difference['max']:.3g}, median {prediction.difference['median']:.3g} "
        f"of Σ|a·b|; largest |Δ| {prediction.absolute['max']:.3g}",
        "verdict": verdict,
    }
    import textwrap

    lines = [
        {"": name if i == 0 else "", "value": part}
        for name, value in facts.items()
        for i, part in enumerate(textwrap.wrap(value, 76, break_on_hyphens=False) or [""])
    ]
    report.sections.append(("Emulation", lines))
    return report
