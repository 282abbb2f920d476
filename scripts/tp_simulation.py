"""A small tensor-parallel simulation on one GPU, logged by cuBLASLt (part of the GPU validation kit).

The same Linear layers (hidden 1024, ffn 4096, 2048 tokens, FP32 weights) run whole and as 2- and 4-way
Megatron shards (column-parallel up projection: out_features / TP; row-parallel down projection:
in_features / TP), forward and backward, with TF32 on and off. cuBLASLt reads its logging variables when
it is loaded, so each configuration runs in its own process:

    python scripts/tp_simulation.py --out OUT          # writes OUT/<tf32|fp32>_tp<N>/blaslt_<pid>.log
    torchrun --standalone --nproc_per_node=N scripts/tp_simulation.py --rank-shard --tf32 1
                                                       # one process per rank, each its N-way shard (for
                                                       # `blaslog record`, which names the logs by rank)

Needs PyTorch with CUDA and an NVIDIA GPU.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

HIDDEN, FFN, TOKENS = 1024, 4096, 2048


def run_one(tp: int, tf32: bool) -> None:
    """The configuration's forward and backward passes (called in the child process)."""
    import torch

    torch.backends.cuda.preferred_blas_library("cublaslt")
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.manual_seed(0)
    device = torch.device("cuda")
    x = torch.randn(TOKENS, HIDDEN, device=device, requires_grad=True)
    up = torch.nn.Linear(HIDDEN, FFN // tp, bias=False, device=device)  # column-parallel shard
    down = torch.nn.Linear(FFN // tp, HIDDEN, bias=False, device=device)  # row-parallel shard
    for _ in range(2):  # two training steps
        y = down(torch.nn.functional.gelu(up(x)))
        y.sum().backward()
    torch.cuda.synchronize()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="folder for the logs (the whole simulation)")
    parser.add_argument("--child", nargs=2, metavar=("TP", "TF32"), help=argparse.SUPPRESS)
    parser.add_argument(
        "--rank-shard",
        action="store_true",
        help="run this rank's shard (TP = the launcher's WORLD_SIZE) in this process",
    )
    parser.add_argument("--tf32", choices=["0", "1"], default="1", help="with --rank-shard: TF32 on (1) or off (0)")
    args = parser.parse_args()
    if args.rank_shard:
        run_one(int(os.environ.get("WORLD_SIZE", "1")), args.tf32 == "1")
        return
    if args.child:
        run_one(int(args.child[0]), args.child[1] == "1")
        return
    if not args.out:
        parser.error("give --out OUT (or --rank-shard under a launcher)")
    for tf32 in (True, False):
        for tp in (1, 2, 4):
            folder = Path(args.out) / f"{'tf32' if tf32 else 'fp32'}_tp{tp}"
            folder.mkdir(parents=True, exist_ok=True)
            env = dict(os.environ, CUBLASLT_LOG_LEVEL="5", CUBLASLT_LOG_FILE=str(folder / "blaslt_%i.log"))
            subprocess.run(
                [sys.executable, __file__, "--out", args.out, "--child", str(tp), "1" if tf32 else "0"],
                env=env,
                check=True,
                timeout=120,
            )
            print(f"logged {folder}", flush=True)


if __name__ == "__main__":
    main()
