"""What one finding's emulation costs: `blaslog emulate` of one instruction kind against the FP32 FMA path, per k.

    python bench/emulate.py                 # every row; a few minutes on 2 cores
    python bench/emulate.py --k 1024 4096   # fewer k
    python bench/emulate.py --markdown      # also the table as Markdown (bench/EMULATE.md holds it)

Each row is one `blaslog emulate` process (two sides, 1024 sampled outputs each with its full k, the default),
timed as a whole with its peak memory (/usr/bin/time), the median of --runs runs. Beside them, the baseline:
the process that only imports the engine (python, torch and mmasim), which every row pays too. The bound the
emulation is held to: one finding in at most 10 s on two cores for k <= 16384.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

KINDS = [  # (label, GPU, numerics)
    ("FP32 FMA (CUDA cores)", "A100", "fma-fp32"),
    ("TF32 mma.sync (A100)", "A100", "tf32"),
    ("TF32 wgmma (H100)", "H100", "tf32"),
    ("FP16 mma.sync (A100)", "A100", "fp16"),
    ("BF16 tcgen05 (B200)", "B200", "bf16"),
    ("FP8 E4M3 wgmma (H100)", "H100", "fp8-e4m3"),
    ("FP16 MFMA (MI250X)", "MI250X", "fp16"),
    ("fp16_alt_impl BF16 MFMA (MI250X)", "MI250X", "fp16-alt-impl"),
    ("FP16 MFMA (MI300X)", "MI300X", "fp16"),
]


def timed(command: list[str]) -> tuple[float, float]:
    """(wall seconds, peak MB) of one run."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
        subprocess.run(
            ["/usr/bin/time", "-f", "%e %M", "-o", out.name, *command],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
        )
        wall, peak = out.read().split()[-2:]
    return float(wall), int(peak) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=int, nargs="+", default=[1024, 4096, 16384])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    rows = []
    base = [timed([sys.executable, "-c", "import torch, mmasim.nv_ptx, mmasim.amd"]) for _ in range(args.runs)]
    rows.append(("baseline: import python, torch, mmasim", "-", statistics.median(w for w, _ in base),
                 statistics.median(p for _, p in base)))  # fmt: skip
    for label, gpu, numerics in KINDS:
        against = "fma-fp32" if numerics != "fp16-alt-impl" else "fp16"
        for k in args.k:
            command = [sys.executable, "-m", "blaslog", "emulate", "--gpu", gpu, "--shape", f"4096x4096x{k}",
                       "--numerics", numerics, "--against", against, "-q"]  # fmt: skip
            runs = [timed(command) for _ in range(args.runs)]
            wall = statistics.median(w for w, _ in runs)
            peak = statistics.median(p for _, p in runs)
            rows.append((f"{label} vs {against}", str(k), wall, peak))
            print(f"{label:38} k={k:6}  {wall:6.2f} s  {peak:6.0f} MB  {'ok' if wall <= 10 else 'OVER 10 s'}",
                  flush=True)  # fmt: skip
    if args.markdown:
        print("\n| finding (two sides, 1024 samples) | k | wall s (median) | peak MB | within 10 s |")
        print("|---|---|---|---|---|")
        for label, k, wall, peak in rows:
            print(f"| {label} | {k} | {wall:.2f} | {peak:.0f} | {'yes' if wall <= 10 else 'NO'} |")


if __name__ == "__main__":
    main()
