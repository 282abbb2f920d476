"""The GPUs the emulation models, and the evidence in logs, caps files and run folders that names one.

Each GPU maps to the architecture name of ``mmasim``'s models (Volta ... Blackwell, CDNA1-3). A log names its
GPU in a few places, all read here without the grammars (they are free text, not GEMM records):

* cuBLASLt's ``[Info][cublasLtCreate] cuBLASLt v12.4 device #0: multiProcessorCount=108 ...
  maxSharedMemoryPerBlockOptin=166912`` line (log level 3 and up): the shared memory a block may opt in to
  tells the architecture, the SM count the part;
* a gfx architecture (``gfx90a``, ``gfx942:sramecc+:xnack-``) in rocBLAS/hipBLASLt output and TunableOp
  ``Validator`` lines;
* a caps file's ``gpu`` (``blaslog probe`` writes the device name and compute capability) and a run folder's
  ``run.json`` (``blaslog record`` writes each rank's GPU name).
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from blaslog.errors import BlaslogError


class UnknownGpuError(BlaslogError, ValueError):
    """A GPU name the emulation does not know."""


@dataclass(frozen=True, slots=True)
class Gpu:
    """One GPU part as the emulation models it."""

    name: str
    """Canonical name (`A100`, `MI250X`)."""
    vendor: str
    """`nvidia` or `amd`."""
    arch: str
    """mmasim's architecture name (`Ampere`, `Hopper`, `CDNA2` ...)."""
    target: str
    """Compute capability (`sm_80`) or gfx target (`gfx90a`)."""
    aliases: tuple[str, ...] = ()
    """Other names it goes by (matched case-insensitively, also inside a longer device name)."""
    sm_counts: tuple[int, ...] = ()
    """SM (or CU) counts of its variants, as cuBLASLt's Info line prints them."""

    def describe(self) -> str:
        """`A100 (Ampere, sm_80)`."""
        return f"{self.name} ({self.arch}, {self.target})"


#: Every GPU known by name, newest first within a vendor. Shared memory opt-in per block (bytes) by architecture:
#: sm_70 98304, sm_75 65536, sm_80 166912, sm_86/sm_89 101376, sm_90/sm_100 232448 (CUDA programming guide).
GPUS: tuple[Gpu, ...] = (
    Gpu("B200", "nvidia", "Blackwell", "sm_100", ("GB200", "B100"), (148, 144)),
    Gpu("RTX 5090", "nvidia", "RTX Blackwell", "sm_120", ("RTX 5080", "RTX 5070", "RTX PRO 6000"), (170, 84, 188)),
    Gpu("H200", "nvidia", "Hopper", "sm_90", ("GH200",)),  # 132 SMs like the H100 SXM: only its name tells it
    Gpu("H100", "nvidia", "Hopper", "sm_90", ("H800", "H20"), (132, 114, 78)),
    Gpu("L40S", "nvidia", "Ada Lovelace", "sm_89", ("L40", "L4", "RTX 4090", "RTX 6000 Ada"), (142, 58, 128)),
    Gpu("A100", "nvidia", "Ampere", "sm_80", ("A800", "A30"), (108, 56)),
    Gpu("A10", "nvidia", "Ampere", "sm_86", ("A10G", "A40", "RTX 3090", "A6000"), (72, 80, 84, 82)),
    Gpu("T4", "nvidia", "Turing", "sm_75", ("RTX 2080",), (40,)),
    Gpu("V100", "nvidia", "Volta", "sm_70", ("Tesla V100",), (80,)),
    Gpu("MI300X", "amd", "CDNA3", "gfx942", ("MI300A", "MI325X", "MI300"), (304, 228)),
    Gpu("MI250X", "amd", "CDNA2", "gfx90a", ("MI200", "MI250", "MI210"), (220, 208, 104)),
    Gpu("MI100", "amd", "CDNA1", "gfx908", (), (120,)),
)

_BY_TARGET = {gpu.target: gpu for gpu in reversed(GPUS)}  # the first listed part of an architecture wins


def known_names() -> list[str]:
    """The names --gpu accepts (canonical names first, then aliases)."""
    return [gpu.name for gpu in GPUS] + [alias for gpu in GPUS for alias in gpu.aliases]


def gpu_by_name(name: str) -> Gpu:
    """The GPU called `name` (a canonical name, an alias, a gfx target or sm_XX); UnknownGpuError otherwise."""
    found = find_gpu(name)
    if found is None:
        raise UnknownGpuError(
            f"unknown GPU {name!r}; known: {', '.join(g.name for g in GPUS)} "
            f"(also {', '.join(a for g in GPUS for a in g.aliases)}, or a target such as sm_80 or gfx90a)"
        )
    return found


def find_gpu(text: str) -> Gpu | None:
    """The GPU a device name names (`NVIDIA A100-SXM4-80GB`, `AMD Instinct MI250X`, `gfx90a:sramecc+`), or None."""
    target = _TARGET.search(text)
    if target:
        found = _BY_TARGET.get(target.group(0).lower())
        if found is not None:
            return found
    upper = text.upper()
    # the longest name that occurs as a word wins (`H100` before `H10`, `MI250X` before `MI250`)
    candidates = [(len(n), gpu) for gpu in GPUS for n in (gpu.name, *gpu.aliases) if _word(n, upper)]
    return max(candidates, key=lambda c: c[0])[1] if candidates else None


def _word(name: str, text: str) -> bool:
    return re.search(rf"(?<![A-Z0-9]){re.escape(name.upper())}(?![0-9])", text) is not None


_TARGET = re.compile(r"gfx9(?:08|0a|42)|sm_[0-9]{2,3}(?![0-9])", re.IGNORECASE)
_GFX = re.compile(r"(?<![\w])gfx[0-9][0-9a-f]{2,3}(?![0-9a-z])", re.IGNORECASE)
_LT_INFO = re.compile(r"multiProcessorCount=([0-9]+).*?maxSharedMemoryPerBlockOptin=([0-9]+)")
_SMEM_ARCH = {98304: "sm_70", 65536: "sm_75", 166912: "sm_80", 101376: "sm_86", 232448: "sm_90"}
"""Shared memory a block may opt in to, by architecture (sm_86, sm_89 and sm_120 share 101376)."""


def from_cublaslt_info(sm_count: int, smem_optin: int) -> Gpu | None:
    """The GPU behind cuBLASLt's `multiProcessorCount` and `maxSharedMemoryPerBlockOptin` (None when unknown)."""
    target = _SMEM_ARCH.get(smem_optin)
    if target is None:
        return None
    if target == "sm_90" and sm_count in _BY_TARGET["sm_100"].sm_counts:
        target = "sm_100"
    same_arch = [gpu for gpu in GPUS if gpu.target == target]
    if target == "sm_86":  # sm_86, sm_89 and sm_120 share their opt-in: only a known SM count tells them apart
        same_arch = [gpu for gpu in GPUS if gpu.target in ("sm_86", "sm_89", "sm_120")]
    matching = [gpu for gpu in same_arch if sm_count in gpu.sm_counts]
    if len({gpu.arch for gpu in matching}) == 1:
        return matching[0]
    if matching:  # parts of two architectures have this many SMs (an A40 and an RTX 5080: 84)
        return None
    return None if target == "sm_86" else _BY_TARGET.get(target)


@dataclass(frozen=True, slots=True)
class Evidence:
    """A GPU and where it was read."""

    gpu: Gpu
    """The GPU."""
    source: str
    """Where it was read (`--gpu`, `caps.json gpu`, `run.log:3 cuBLASLt Info line` ...)."""


def evidence_in_lines(lines: Iterable[str], where: str) -> Evidence | None:
    """The first GPU a log's lines name (cuBLASLt's Info line, a gfx target), with its line number."""
    for number, line in enumerate(lines, 1):
        if "multiProcessorCount=" in line:
            match = _LT_INFO.search(line)
            if match:
                gpu = from_cublaslt_info(int(match.group(1)), int(match.group(2)))
                if gpu is not None:
                    return Evidence(gpu, f"{where}:{number} (cuBLASLt Info line)")
        if "gfx" in line:
            for match in _GFX.finditer(line):
                gpu = _BY_TARGET.get(match.group(0).lower())
                if gpu is not None:
                    return Evidence(gpu, f"{where}:{number} ({match.group(0)})")
    return None


def evidence_in_caps(gpu_info: dict[str, Any], where: str) -> Evidence | None:
    """The GPU a caps file's `gpu` object names (`name`, or `compute_capability` 8.0)."""
    name = str(gpu_info.get("name") or "")
    found = find_gpu(name) if name else None
    if found is None:
        capability = re.sub(r"[^0-9]", "", str(gpu_info.get("compute_capability") or ""))
        found = _BY_TARGET.get(f"sm_{capability}") if capability else None
    return Evidence(found, f"{where} gpu") if found else None


def evidence_in_manifest(manifest: dict[str, Any], where: str) -> Evidence | None:
    """The GPU a run folder's manifest names (per rank `gpu`, or the host's `gpus`)."""
    ranks = manifest.get("ranks")
    per_rank = ranks.values() if isinstance(ranks, dict) else []
    names = [r["gpu"] for r in per_rank if isinstance(r, dict) and isinstance(r.get("gpu"), str)]
    host = manifest.get("gpus") or []
    names += [g["name"] for g in host if isinstance(g, dict) and isinstance(g.get("name"), str)]
    for name in names:
        found = find_gpu(name)
        if found is not None:
            return Evidence(found, f"{where} ({name})")
    return None


_HEAD_LINES = 20_000
"""Lines read from the start of each input when looking for the GPU (the Info line comes at the handle's
creation, the gfx target in the first bench lines or TunableOp's Validator header)."""


def detect(names: Sequence[str], caps_gpu: dict[str, Any] | None = None, caps_source: str = "caps") -> Evidence | None:
    """The GPU that ran the inputs `names` (files, folders, globs), from their caps, run folder or log lines."""
    from blaslog.inputs import Reader

    if caps_gpu:
        found = evidence_in_caps(caps_gpu, caps_source)
        if found:
            return found
    from blaslog.ranks import read_manifest

    files: list[str] = []
    for name in names:
        if name == "-":
            continue
        if os.path.isdir(name):
            try:
                manifest = read_manifest(name)
            except BlaslogError:
                manifest = None
            found = evidence_in_manifest(manifest, f"{name}/run.json") if manifest else None
            if found:
                return found
            files.extend(sorted(e.path for e in os.scandir(name) if e.is_file(follow_symlinks=False)))
            continue
        if not os.path.exists(name) and glob.has_magic(name):
            files.extend(sorted(p for p in glob.glob(name, recursive=True) if os.path.isfile(p)))
        else:
            files.append(name)
    for path in files:
        lines: list[str] = []
        try:
            for batch in Reader(path).batches():
                lines.extend(batch.lines)
                if len(lines) >= _HEAD_LINES:
                    break
        except (OSError, BlaslogError):
            continue
        found = evidence_in_lines(lines[:_HEAD_LINES], path)
        if found:
            return found
    return None
