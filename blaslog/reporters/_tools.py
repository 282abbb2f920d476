"""The outputs of the commands that make no Report of findings: `decode-flags` (the bits of flags values), `probe`
(what libcublasLt said of each algorithm) and the caps file `probe -o` writes; and the TunableOp file of
`diff --emit-tunableop`. Their text and JSON are made here, not in the command line, as every other output is made
by a reporter."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from blaslog.caps import probed_caps
from blaslog.reporters.json import dumps

if TYPE_CHECKING:
    from blaslog.caps import Caps
    from blaslog.flags import Decoded

PROBE_KEYS = (
    "splitKSupport",
    "reductionSchemeMask",
    "ctaSwizzlingSupport",
    "customOptionMax",
    "epilogueMask",
    "minAlignmentA",
    "minAlignmentB",
    "minAlignmentC",
    "minAlignmentD",
)
"""The scalar capabilities the text of a probe shows for each algorithm."""


def flags_output(decoded: Sequence[Decoded], library: str, fmt: str) -> str:
    """`decode-flags` output: in JSON (`fmt` `json`) each value's fields; else each value's summary and its bits,
    one a line, with the bits no table of `library` names."""
    if fmt == "json":
        return dumps([d.to_dict() for d in decoded], indent=2) + "\n"
    lines = []
    for d in decoded:
        lines.append(f"{d.hex} ({d.value}): {d.summary}")
        lines.extend(f"  {hex(bit.value):>12}  {bit.name:<20} {bit.group:<15} {bit.meaning}" for bit in d.bits)
        if d.unknown:
            lines.append(f"  {hex(d.unknown):>12}  unknown bits 0x{d.unknown:x} (not in the {library} tables)")
        if not d.bits and not d.unknown:
            lines.append("  (no bits set)")
    return "\n".join(lines) + "\n"


def probe_output(document: dict[str, Any], fmt: str) -> str:
    """`probe` output: in JSON (`fmt` `json`) its `document` (``api.probe_document``); else the library, the GPU
    and each configuration's answer, a few lines each."""
    if fmt == "json":
        return dumps(document, indent=2) + "\n"
    gpu = document["gpu"].get("name") or document["gpu"].get("error") or "unknown GPU"
    cc = document["gpu"].get("compute_capability")
    lines = [f"libcublasLt {document['version']} ({document['library']}); GPU: {gpu}" + (f" (sm {cc})" if cc else "")]
    for entry in document["entries"]:
        lines.append(
            f"algoId {entry['algoId']} {entry['computeType']} scale {entry['scaleType']} "
            f"{entry['Atype']},{entry['Btype']},{entry['Ctype']},{entry['Dtype']}"
        )
        lines.append(f"  numerical impl flags {entry['numericalImplFlags']}: {entry['summary']}")
        lines.append(f"    {' | '.join(entry['decoded'])}")
        lines.extend(f"  {key}: {entry.get(key)}" for key in PROBE_KEYS)
        for key in ("tiles", "stages"):
            value = entry.get(key)
            lines.append(f"  {key}: {', '.join(value) if isinstance(value, list) else value}")
    return "\n".join(lines) + "\n"


def caps_output(document: dict[str, Any], existing: Caps | None = None) -> tuple[str, int]:
    """`probe -o FILE`: the text of the caps file (JSON) a probe's `document` makes, merged into the `existing`
    caps of FILE (the probe's entries win), and how many configurations it holds."""
    caps = probed_caps(document, existing)
    return dumps(caps.to_json(), indent=2) + "\n", len(caps.entries)


def pinning_output(pinning: Any, path: str, quiet: bool) -> tuple[str, list[str]]:
    """`diff --emit-tunableop PATH`: the TunableOp results file of a diff's pins (a Pinning of blaslog.tunableop),
    and the lines for stderr: how many GEMMs were pinned, each pin (unless `quiet`), each GEMM that cannot be
    pinned and why, and the pinning's notes."""
    from blaslog.tunableop import render

    messages = [f"wrote {path}: {len(pinning.rows)} GEMMs pinned, {len(pinning.cannot)} cannot be pinned"]
    if not quiet:
        pins = sorted(pinning.rows.items())
        messages += [f"  pinned {op},{params} -> {solution}: {why}" for (op, params), (solution, why) in pins]
    messages += [f"  {label}: {why}" for label, why in sorted(pinning.cannot.items())]
    messages += [f"note: {note}" for note in pinning.notes]
    return render(pinning), messages


__all__ = ["PROBE_KEYS", "caps_output", "flags_output", "pinning_output", "probe_output"]
