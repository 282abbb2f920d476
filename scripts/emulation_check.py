"""The emulation against a real GPU (part of the GPU validation kit, scripts/gpu_validate.sh).

Runs small GEMMs on the GPU through PyTorch with each math mode pinned (TF32 on, TF32 off, FP16 and BF16 inputs
with FP32 accumulation and no reduced-precision reduction), and a tensor-parallel GEMM (k split over 4 "ranks",
partials summed in FP32 in rank order), with cuBLASLt logging on so that the algorithm each ran is known. Each
output element is then computed by blaslog's emulation from the same inputs, and the two are compared bit for
bit. Writes OUT/emulation_check.json, keeps each math mode's inputs and GPU outputs (OUT/<mode>.npz) and cuBLASLt log
(OUT/<mode>.cublaslt.log), so that the comparison can be made again on any machine (--compare-only), and prints
each case:

    python scripts/emulation_check.py --out OUT [--gpu H100]

Needs PyTorch with CUDA, an NVIDIA GPU and blaslog[emulate] (torch and mmasim).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

CASES = [  # (name, input format, numerics of blaslog emulate, torch settings)
    ("tf32", "fp32", "tf32", {"allow_tf32": True}),
    ("fp32", "fp32", "fma-fp32", {"allow_tf32": False}),
    ("fp16", "fp16", "fp16", {"reduced": False}),
    ("bf16", "bf16", "bf16", {"reduced": False}),
]
SHAPES = [(64, 64, 32), (64, 64, 256), (128, 64, 4096)]


def child(case: str, out: Path) -> None:
    """One math mode in its own process (cuBLASLt reads its logging variables once)."""
    import numpy as np
    import torch

    name, fmt, _, settings = next(c for c in CASES if c[0] == case)
    if torch.cuda.is_available():
        torch.backends.cuda.preferred_blas_library("cublaslt")
    torch.backends.cuda.matmul.allow_tf32 = bool(settings.get("allow_tf32", False))
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = bool(settings.get("reduced", False))
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = bool(settings.get("reduced", False))
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[fmt]
    results = {}
    for m, n, k in SHAPES:
        gen = torch.Generator().manual_seed(m * 1000003 + n * 1009 + k)
        a = torch.randn(m, k, generator=gen).to(dtype)
        b = torch.randn(k, n, generator=gen).to(dtype)
        dev = "cuda" if torch.cuda.is_available() else "cpu"  # cpu: a dry run of the kit on a machine without a GPU
        d = (a.to(dev) @ b.to(dev)).float().cpu()
        tp = 4
        parts = [
            a[:, r * k // tp : (r + 1) * k // tp].to(dev) @ b[r * k // tp : (r + 1) * k // tp].to(dev)
            for r in range(tp)
        ]
        total = parts[0]
        for p in parts[1:]:
            total = total + p  # the all-reduce's sum, in the output type, rank order
        results[f"{m}x{n}x{k}"] = {
            "a": a.float().numpy(),  # FP16 and BF16 values are exact in FP32
            "b": b.float().numpy(),
            "d": d.numpy(),
            "d_tp4": total.float().cpu().numpy(),
        }
    np.savez_compressed(
        out / f"{name}.npz",
        **{f"{shape}.{key}": value for shape, arrays in results.items() for key, value in arrays.items()},
    )


def _split_k(log: Path) -> dict[tuple[int, frozenset[int]], tuple[int, int]]:
    """(k, {m, n}) -> (split-K count, k tile) of each GEMM the case's cuBLASLt log shows (read by blaslog)."""
    from blaslog.emulate.findings import k_tile
    from blaslog.parse import parse_file

    found = {}
    if log.exists():
        for call in parse_file(str(log), events=False).gemms:
            splits = call.num_splits_k if call.num_splits_k and call.num_splits_k > 1 else 1
            found[(call.k, frozenset((call.m, call.n)))] = (splits, k_tile(call.stages))
    return found


def compare(out: Path, gpu_name: str) -> list[dict]:
    from dataclasses import replace

    import numpy as np

    from blaslog.emulate import by_name, gpu_by_name
    from blaslog.emulate.engine import operands, reference, side_output

    gpu = gpu_by_name(gpu_name)
    rows = []
    for name, fmt, numerics, _ in CASES:
        path = out / f"{name}.npz"
        if not path.exists():
            rows.append({"case": name, "error": "the GPU run wrote nothing"})
            continue
        with np.load(path) as saved:
            data: dict[str, dict[str, np.ndarray]] = {}
            for entry in saved.files:
                shape, key = entry.split(".")
                data.setdefault(shape, {})[key] = saved[entry].astype(np.float64)
        logged = _split_k(out / f"{name}.cublaslt.log")
        for shape, values in data.items():
            a, b = values["a"], values["b"]
            m, k = a.shape
            n = b.shape[1]
            ra = np.repeat(a, n, axis=0)  # one sample per output element (i, j), row-major
            rb = np.tile(b.T, (m, 1))
            for label, arith_name, tp, key in ((name, numerics, 1, "d"), (f"{name} tp4", numerics, 4, "d_tp4")):
                splits, tile = logged.get((k // tp, frozenset((m, n))), (1, 0))
                base = by_name(arith_name, gpu, output=fmt if fmt != "fp32" else "fp32")
                hypotheses = [("logged", replace(base, splits=splits, split_tile=tile))]
                if splits > 1:
                    hypotheses.append(("even parts", replace(base, splits=splits, split_tile=0)))
                    hypotheses.append(("no split", base))
                ops = operands(ra, rb, fmt)
                real = values[key].reshape(-1)
                exact, size = reference(ops)
                size = np.where(size > 0, size, 1.0)
                tried = []
                for how, arith in hypotheses:
                    emulated = side_output(arith, ops, tp)
                    tried.append((int(np.count_nonzero(emulated == real)), how, arith, emulated))
                same, how, arith, emulated = max(tried, key=lambda t: t[0])
                rows.append(
                    {
                        "case": label,
                        "shape": shape,
                        "split_k": f"{splits} (tile {tile}; best model: {how}; "
                        + ", ".join(f"{h}: {c}" for c, h, _, _ in tried)
                        + ")",
                        "instruction": arith.instruction,
                        "elements": int(real.size),
                        "bit_identical": same,
                        "share_identical": same / real.size,
                        "max_gpu_vs_emulation": float(np.max(np.abs(real - emulated) / size)),
                        "max_gpu_vs_fp64": float(np.max(np.abs(real - exact) / size)),
                        "max_emulation_vs_fp64": float(np.max(np.abs(emulated - exact) / size)),
                    }
                )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--gpu", default=None, help="GPU name for the model (default: torch's device name)")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--compare-only", action="store_true", help="compare the outputs kept in OUT again")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.case:
        child(args.case, args.out)
        return
    for name, *_ in [] if args.compare_only else CASES:
        env = dict(os.environ, CUBLASLT_LOG_LEVEL="2", CUBLASLT_LOG_FILE=str(args.out / f"{name}.cublaslt.log"))
        subprocess.run([sys.executable, __file__, "--out", str(args.out), "--case", name], env=env, check=False)
    gpu_name = args.gpu
    if gpu_name is None:
        import torch

        gpu_name = torch.cuda.get_device_name(0)
    rows = compare(args.out, gpu_name)
    (args.out / "emulation_check.json").write_text(json.dumps({"gpu": gpu_name, "cases": rows}, indent=1))
    for row in rows:
        if "error" in row:
            print(f"{row['case']}: {row['error']}")
            continue
        print(
            f"{row['case']:9} {row['shape']:12} {row['instruction']}; split-K {row['split_k']}\n"
            f"    bit-identical {row['bit_identical']}/{row['elements']} ({row['share_identical']:.1%}); "
            f"max |gpu-emul|/Σ|ab| {row['max_gpu_vs_emulation']:.2g}; gpu vs FP64 {row['max_gpu_vs_fp64']:.2g}, "
            f"emulation vs FP64 {row['max_emulation_vs_fp64']:.2g}"
        )


if __name__ == "__main__":
    main()
