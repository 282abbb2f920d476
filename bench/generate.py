"""Write large, realistic BLAS logs for the benchmark (deterministic; no clock, seeded).

    python bench/generate.py --size 1000 --out bench/data/level5_1000mb.log          # cuBLASLt level 5
    python bench/generate.py --size 100 --kind distinct --out bench/data/distinct.log  # every line another call

`level5`: a training job's cuBLASLt level-5 log. One training step is taken from the real-format fixture
fixtures/generated/lt_fp32_tp4/blaslt_321674.log (19-25 [Api]/[Trace] lines per GEMM, two threads); each
further step moves the activation and gradient pointers, advances the time stamps, and now and then the
program prints a line of its own (`--pointers new`: no device address is ever used twice). Layers are repeated so that a step has 39 GEMMs per 2 layers as in the
fixture's model. `distinct`: [Trace] lines of which no two describe the same call: every m, n, k, leading dimension,
pointer, thread, SM count, workspace and algorithm id is drawn anew (tiles, stages and options from
the sets real logs show). `rocblas`: rocBLAS trace lines of the same job.
"""

from __future__ import annotations

import argparse
import random
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = {
    "tp4": ROOT / "fixtures" / "generated" / "lt_fp32_tp4" / "blaslt_321674.log",
    "unsharded": ROOT / "fixtures" / "generated" / "lt_fp32_unsharded.stdout.log",
}
ROCBLAS = ROOT / "fixtures" / "generated" / "rocblas_fp16_trace.log"
ROCBLAS_BENCH = ROOT / "fixtures" / "generated" / "rocblas_fp16_bench.log"
HIPBLASLT_BENCH = ROOT / "fixtures" / "generated" / "hipblaslt_bf16_tp2_rank0.bench.log"
CUBLAS = ROOT / "fixtures" / "generated" / "cublas_classic_fp16.log"
_DEVICE = re.compile(r"0X15[0-9A-F]{10}")
_TIME = re.compile(r"^\[2026-06-06 15:3\d:(\d\d)\]")


def _step_lines(template: list[str]) -> list[str]:
    """The lines of one training step (the fixture holds two; take the first half by GEMM count)."""
    traces = [i for i, line in enumerate(template) if "[Trace]" in line]
    cut = traces[len(traces) // 2 - 1] + 6  # after the 39th GEMM's destroys
    return template[2:cut]  # without the per-thread create lines, written once


def level5(out, size: int, seed: int, run: str = "tp4", pointers: str = "cycle", prefix: str = "") -> None:
    rng = random.Random(seed)
    template = [line for line in TEMPLATES[run].read_text().splitlines() if line.startswith("[")]
    head, step = template[:2], _step_lines(template)
    written = 0
    for line in head:
        out.write(prefix + line + "\n")
    number = 0
    while written < size:
        # `cycle`: a caching allocator hands out the same blocks every 64 steps; `new`: never the same address twice
        shift = (number % 64 if pointers == "cycle" else number) * 0x200000
        seconds = number // 3
        stamp = f"[2026-06-{6 + seconds // 86400 % 20:02d} {seconds // 3600 % 24:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}]"
        for line in step:
            line = _DEVICE.sub(lambda m, shift=shift: f"0X{int(m.group()[2:], 16) + shift:X}", line)
            line = prefix + _TIME.sub(stamp, line)
            out.write(line)
            out.write("\n")
            written += len(line) + 1
        if rng.random() < 0.5:
            noise = f"{prefix}step {number} loss={10 - number * 1e-4:.4f} dt={rng.uniform(300, 900):.1f}ms\n"
            out.write(noise)
            written += len(noise)
        number += 1


def distinct(out, size: int, seed: int) -> None:
    rng = random.Random(seed)
    written = 0
    tiles = [
        "MATMUL_TILE_64x64",
        "MATMUL_TILE_128x128",
        "MATMUL_TILE_128x64",
        "MATMUL_TILE_256x128",
        "MATMUL_TILE_64x128",
        "MATMUL_TILE_128x256",
    ]
    while written < size:
        m, n, k = (rng.randrange(16, 1 << 16) for _ in range(3))
        line = (
            f"[2026-06-06 15:31:42][cublasLt][{rng.randrange(1000, 10**6)}][Trace][cublasLtMatmul] "
            f"A=0X{rng.getrandbits(44):X} Adesc=[type=R_16F rows={k} cols={m} ld={k}] B=0X{rng.getrandbits(44):X} "
            f"Bdesc=[type=R_16F rows={k} cols={n} ld={k}] C=0X{rng.getrandbits(44):X} Cdesc=[type=R_16F rows={m} "
            f"cols={n} ld={m}] D=0X{rng.getrandbits(44):X} Ddesc=[type=R_16F rows={m} cols={n} ld={m}] "
            f"computeDesc=[computeType=COMPUTE_32F scaleType=R_32F transa=OP_T smCountTarget={rng.randrange(200)}] "
            f"algo=[algoId={rng.randrange(10, 100)} tile={rng.choice(tiles)} stages=MATMUL_STAGES_{rng.choice([16, 32, 64])}x"
            f"{rng.randrange(1, 7)} customOption={rng.randrange(4)}] workSpace=0X{rng.getrandbits(44):X} "
            f"workSpaceSizeInBytes={rng.randrange(1 << 25)} beta=0 outOfPlace=0 stream=0X{rng.getrandbits(44):X}\n"
        )
        out.write(line)
        written += len(line)


def rocblas(out, size: int, seed: int) -> None:
    lines = [line for line in ROCBLAS.read_text().splitlines() if line]
    written = 0
    step = 0
    while written < size:
        for line in lines:
            line = re.sub(
                r"0x7f2e([0-9a-f]{8})",
                lambda m, step=step: f"0x7f2e{(int(m.group(1), 16) + step * 0x1000) % (1 << 32):08x}",
                line,
            )
            out.write(line + "\n")
            written += len(line) + 1
        step += 1


def rocblas3(out, size: int, seed: int) -> None:
    """ROCBLAS_LAYER=3: a trace line and a bench line per call, as rocBLAS writes them to one stream."""
    trace = [line for line in ROCBLAS.read_text().splitlines() if line]
    bench = [line for line in ROCBLAS_BENCH.read_text().splitlines() if line]
    written, step = 0, 0
    while written < size:
        calls = iter(bench)
        for line in trace:
            line = re.sub(
                r"0x7f2e([0-9a-f]{8})",
                lambda m, step=step: f"0x7f2e{(int(m.group(1), 16) + step * 0x1000) % (1 << 32):08x}",
                line,
            )
            text = line + "\n"
            if line.startswith("rocblas_gemm"):
                text += next(calls, bench[0]) + "\n"
            out.write(text)
            written += len(text)
        step += 1


def hipblaslt_bench(out, size: int, seed: int) -> None:
    """hipblaslt-bench lines (HIPBLASLT_LOG_MASK=32) of a training job, with the program's own prints."""
    rng = random.Random(seed)
    lines = [line for line in HIPBLASLT_BENCH.read_text().splitlines() if line]
    written, step = 0, 0
    while written < size:
        for line in lines:
            out.write(line + "\n")
            written += len(line) + 1
        if rng.random() < 0.5:
            noise = f"step {step} loss={10 - step * 1e-4:.4f}\n"
            out.write(noise)
            written += len(noise)
        step += 1


def mixed(out, size: int, seed: int) -> None:
    """One program's stdout: cuBLASLt [Trace] lines (level 2), cuBLAS classic records (CUBLAS_LOGINFO_DBG=1,
    CUBLAS_LOGDEST_DBG=stdout) and the program's own prints, interleaved step by step."""
    rng = random.Random(seed)
    trace = [line for line in TEMPLATES["tp4"].read_text().splitlines() if "][Trace][" in line]
    classic = CUBLAS.read_text().splitlines()
    written, step = 0, 0
    while written < size:
        seconds = step // 3
        stamp = f"[2026-06-{6 + seconds // 86400 % 20:02d} {seconds // 3600 % 24:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}]"
        chunk = (
            [_TIME.sub(stamp, line) for line in trace[:20]]
            + classic
            + [f"step {step} loss={10 - step * 1e-4:.4f} dt={rng.uniform(300, 900):.1f}ms"]
        )
        text = "\n".join(chunk) + "\n"
        out.write(text)
        written += len(text)
        step += 1


def real(out, size: int, seed: int) -> None:
    """The real logs of the fixtures (fixtures/real: every dialect, from bug reports and docs; fixtures/gpu: the
    cuBLASLt logs the GPU validation kit wrote on an H200; fixtures/nvidia-lib), one after another in name order,
    again and again: shapes nobody here generated. `seed` is not used (the logs are written as they are)."""
    names = sorted((ROOT / "fixtures" / "real").glob("*.log"))
    names += sorted((ROOT / "fixtures" / "gpu").rglob("*.log")) + sorted(
        (ROOT / "fixtures" / "nvidia-lib").glob("*.log")
    )
    texts = [path.read_text(encoding="utf-8", errors="replace") for path in names]
    corpus = "".join(text if text.endswith("\n") else text + "\n" for text in texts)
    written = 0
    while written < size:
        out.write(corpus)
        written += len(corpus.encode("utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=float, required=True, help="megabytes to write (approximately)")
    parser.add_argument(
        "--kind",
        choices=["level5", "distinct", "rocblas", "rocblas3", "hipblaslt-bench", "mixed", "real"],
        default="level5",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--run", choices=sorted(TEMPLATES), default="tp4", help="level5: which fixture run to repeat")
    parser.add_argument("--prefix", default="", help="level5: text before every line (a launcher's `[rank0]: `)")
    parser.add_argument(
        "--pointers",
        choices=["cycle", "new"],
        default="cycle",
        help="level5: device pointers repeat every 64 steps (cycle) or never (new)",
    )
    parser.add_argument(
        "--per-rank",
        type=int,
        default=0,
        metavar="N",
        help="level5: write N per-rank logs rank<i>.log of --size/N MB each into the folder --out (seed + i each), "
        "the layout `blaslog record`, torchrun and CI produce",
    )
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    if args.per_rank:
        folder = Path(args.out)
        folder.mkdir(parents=True, exist_ok=True)
        for rank in range(args.per_rank):
            with open(folder / f"rank{rank}.log", "w", encoding="utf-8", buffering=1 << 20) as out:
                size = int(args.size * 1e6 / args.per_rank)
                level5(out, size, args.seed + rank, args.run, args.pointers, args.prefix)
        return
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8", buffering=1 << 20) as out:
        if args.kind == "level5":
            level5(out, int(args.size * 1e6), args.seed, args.run, args.pointers, args.prefix)
        else:
            kinds = {
                "distinct": distinct,
                "rocblas": rocblas,
                "rocblas3": rocblas3,
                "hipblaslt-bench": hipblaslt_bench,
                "mixed": mixed,
                "real": real,
            }
            kinds[args.kind](out, int(args.size * 1e6), args.seed)


if __name__ == "__main__":
    main()
