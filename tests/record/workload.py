"""A fake GPU workload for tests of `blaslog record`: writes the BLAS libraries' log lines, as the libraries
would, to the files their environment variables name.

It runs no GPU code. Per step it "runs" two GEMMs of a tensor-parallel layer (a column-parallel projection whose
M is divided by the TP degree, and a row-parallel one whose K is), FP32 with TF32 tensor cores
(COMPUTE_32F_FAST_TF32, algoId 21), and logs them in each library whose logging is on:

* cuBLASLt (CUBLASLT_LOG_LEVEL >= 2, CUBLASLT_LOG_FILE with `%i` = pid): a [Trace] line per GEMM, the [Api]
  lines of the calls around it at level 5 (shapes copied from fixtures/generated/lt_fp16_tp4_rank0.log);
* cuBLAS (CUBLAS_LOGINFO_DBG=1, CUBLAS_LOGDEST_DBG): an `I! ... cublasGemmEx` record (no `%i`);
* rocBLAS (ROCBLAS_LAYER bits 1/2, ROCBLAS_LOG_TRACE_PATH / ROCBLAS_LOG_BENCH_PATH): trace and bench lines;
* hipBLASLt (HIPBLASLT_LOG_MASK bit 32, HIPBLASLT_LOG_FILE with `%i`): bench lines.

Only the libraries of one platform are "loaded", as in a real process: --platform nvidia (the default: cuBLASLt
and cuBLAS) or amd (rocBLAS and hipBLASLt).

Options: --tp N (default WORLD_SIZE), --steps N, --plant-rank R (rank R runs the row-parallel GEMM with algoId 0,
a CUDA-core kernel, instead), --exit N, --wait-signal DIR (after logging, wait for SIGINT/SIGTERM and leave
DIR/<signal>.<rank>), --torch on|off (import the fake torch of tests/record/fake_torch with TF32 on or off),
--marker DIR (leave DIR/ran.<pid> with the value of USER_SITECUSTOMIZE).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path

STAMP = "[2026-06-06 16:02:12]"


def _file(variable: str, pid_names: bool) -> str | None:
    name = os.environ.get(variable)
    if not name:
        return None
    return name.replace("%i", str(os.getpid())) if pid_names else name


def _lt_trace(pid: int, a_rows: int, a_cols: int, n: int, algo: str) -> str:
    m, k = a_cols, a_rows  # A is transposed: op(A) is m x k
    return (
        f"{STAMP}[cublasLt][{pid}][Trace][cublasLtMatmul] A=0X1521C0400000 Adesc=[type=R_32F rows={a_rows} "
        f"cols={a_cols} ld={a_rows}] B=0X1523C0000000 Bdesc=[type=R_32F rows={k} cols={n} ld={k}] "
        f"C=0X1523C0400000 Cdesc=[type=R_32F rows={m} cols={n} ld={m}] D=0X1523C0400000 Ddesc=[type=R_32F "
        f"rows={m} cols={n} ld={m}] computeDesc=[computeType=COMPUTE_32F_FAST_TF32 scaleType=R_32F "
        f"transa=OP_T] algo=[{algo}] workSpace=0X1521C0000000 workSpaceSizeInBytes=4194304 beta=0 "
        "outOfPlace=0 stream=0X0\n"
    )


def _lt_api(pid: int, a_rows: int, a_cols: int, n: int) -> list[str]:
    m, k = a_cols, a_rows
    head = f"{STAMP}[cublasLt][{pid}][Api]"
    return [
        f"{head}[cublasLtMatmulDescCreate] matmulDesc=0X7FFDEC562C08 computeType=COMPUTE_32F_FAST_TF32 scaleType=0\n",
        f"{head}[cublasLtMatmulDescSetAttribute] matmulDesc=0X55A04C63F4A0 attr=MATMUL_DESC_TRANSA "
        "buf=0X7FFDEC562C2C sizeInBytes=4\n",
        f"{head}[cublasLtMatrixLayoutCreate] matLayout=0X7FFDEC562BF8 type=R_32F rows={a_rows} cols={a_cols} "
        f"ld={a_rows}\n",
        f"{head}[cublasLtMatrixLayoutCreate] matLayout=0X7FFDEC562BF8 type=R_32F rows={k} cols={n} ld={k}\n",
        f"{head}[cublasLtMatrixLayoutCreate] matLayout=0X7FFDEC562BF8 type=R_32F rows={m} cols={n} ld={m}\n",
        f"{head}[cublasLtMatmulPreferenceCreate] matmulPref=0X7FFDEC562BE8\n",
        f"{head}[cublasLtMatmulPreferenceSetAttribute] pref=0X55A04C63F6E0 attr=MATMUL_PREF_MAX_WORKSPACE_BYTES "
        "buf=0X7FFDEC562C48 sizeInBytes=8\n",
    ]


def _lt_api_after() -> list[str]:
    return [
        f"{STAMP}[cublasLt][1][Api][cublasLtMatmulPreferenceDestroy] matmulPref=0X55A04C63F6E0\n",
        f"{STAMP}[cublasLt][1][Api][cublasLtMatrixLayoutDestroy] matLayout=0X55A04C63F680\n",
        f"{STAMP}[cublasLt][1][Api][cublasLtMatmulDescDestroy] matmulDesc=0X55A04C63F4A0\n",
    ]


def _cublas(pid: int, m: int, n: int, k: int) -> str:
    fields = [
        ("handle", "cublasHandle_t", "POINTER (IN HEX:0x0x55a178c7a2a0)"),
        ("transa", "cublasOperation_t", "CUBLAS_OP_T(1)"),
        ("transb", "cublasOperation_t", "CUBLAS_OP_N(0)"),
        ("m", "int", m),
        ("n", "int", n),
        ("k", "int", k),
        ("alpha", "void", "POINTER (IN HEX:0x0x7ffce76e9b74)"),
        ("A", "void", "POINTER (IN HEX:0x0x7f74c0000000)"),
        ("Atype", "cudaDataType_t", "CUDA_R_32F(0)"),
        ("lda", "int", k),
        ("B", "void", "POINTER (IN HEX:0x0x7f76c0000000)"),
        ("Btype", "cudaDataType_t", "CUDA_R_32F(0)"),
        ("ldb", "int", k),
        ("beta", "void", "POINTER (IN HEX:0x0x7ffce76e9b78)"),
        ("C", "void", "POINTER (IN HEX:0x0x7f76c0400000)"),
        ("Ctype", "cudaDataType_t", "CUDA_R_32F(0)"),
        ("ldc", "int", m),
        ("computeType", "cublasComputeType_t", "CUBLAS_COMPUTE_32F_FAST_TF32(77)"),
        ("algo", "SOME TYPE", "CUBLAS_GEMM_DEFAULT_TENSOR_OP(99)"),
    ]
    lines = [
        "I! cuBLAS (v12.9.3) function cublasStatus_t cublasGemmEx(cublasHandle_t, cublasOperation_t, "
        "cublasOperation_t, int, int, int, const void*, const void*, cudaDataType_t, int, const void*, "
        "cudaDataType_t, int, const void*, void*, cudaDataType_t, int, cublasComputeType_t, cublasGemmAlgo_t) "
        "called:\n"
    ]
    lines += [f"i!  {name}: type={kind}; val={value}\n" for name, kind, value in fields]
    lines += [
        "i! Time: 2026-06-06T16:20:31 elapsed from start 0.033333 minutes or 2.000000 seconds\n",
        f"i!Process={pid}; Thread=139694885058368; GPU=0; Handle=POINTER (IN HEX:0x0x55a178c7a2a0); "
        "StreamId=POINTER (IN HEX:0x(nil)) (defaultStream); MathMode=CUBLAS_DEFAULT_MATH\n",
        "i! COMPILED WITH: GNU GCC/G++ / 8.5.0 20210514 (Red Hat 8.5.0-22)\n",
    ]
    return "".join(lines)


def _rocblas_trace(m: int, n: int, k: int) -> str:
    return (
        f"rocblas_gemm_ex,T,N,{m},{n},{k},1,0x7f2c1e600000,f32_r,{k},0x7f2e1e600000,f32_r,{k},0,"
        f"0x7f2e1ea00000,f32_r,{m},0x7f2e1ea00000,f32_r,{m},f32_r,0,0,none,atomics_allowed\n"
    )


def _rocblas_bench(m: int, n: int, k: int) -> str:
    return (
        f"./rocblas-bench -f gemm_ex --transposeA T --transposeB N -m {m} -n {n} -k {k} --alpha 1 --a_type f32_r "
        f"--lda {k} --b_type f32_r --ldb {k} --beta 0 --c_type f32_r --ldc {m} --d_type f32_r --ldd {m} "
        "--compute_type f32_r --algo 0 --solution_index 0 --flags 0\n"
    )


def _hipblaslt_bench(m: int, n: int, k: int, solution: int) -> str:
    return (
        f"hipblaslt-bench --api_method c -m {m} -n {n} -k {k} --lda {k} --ldb {k} --ldc {m} --ldd {m}  "
        "--stride_a 0 --stride_b 0 --stride_c 0 --stride_d 0  --alpha 1.000000 --beta 0.000000 --transA T "
        "--transB N --batch_count 1 --scaleA 0 --scaleB 0  --a_type f32_r --b_type f32_r --c_type f32_r "
        "--d_type f32_r --scale_type f32_r --bias_type f32_r   --compute_type f32_r --algo_method index "
        f"--solution_index {solution} --activation_type none \n"
    )


class Logs:
    """The log files this process writes, opened as the libraries open theirs (on first use)."""

    def __init__(self) -> None:
        self.handles: dict[str, object] = {}

    def write(self, variable: str, pid_names: bool, text: str) -> None:
        name = _file(variable, pid_names)
        if name is None:
            sys.stdout.write(text)
            return
        if name not in self.handles:
            self.handles[name] = open(name, "a", encoding="utf-8")  # noqa: SIM115
        handle = self.handles[name]
        handle.write(text)  # type: ignore[attr-defined]
        handle.flush()  # type: ignore[attr-defined]


def run_step(logs: Logs, rank: int, tp: int, plant_rank: int | None, platform: str) -> None:
    pid = os.getpid()
    hidden, tokens = 64, 1024
    # (A rows = K, A cols = M): column-parallel QKV (M / tp), row-parallel output projection (K / tp)
    gemms = [
        (hidden, 3 * hidden // tp, "algoId=21 tile=MATMUL_TILE_64x64 stages=MATMUL_STAGES_32x6"),
        (hidden // tp, hidden, "algoId=21 tile=MATMUL_TILE_64x64 stages=MATMUL_STAGES_32x6"),
    ]
    if plant_rank == rank:
        gemms[1] = (hidden // tp, hidden, "algoId=0 tile=MATMUL_TILE_128x32 ctaSwizzling=1")
    nvidia = platform == "nvidia"
    level = int(os.environ.get("CUBLASLT_LOG_LEVEL", "0") or 0) if nvidia else 0
    cublas = nvidia and os.environ.get("CUBLAS_LOGINFO_DBG") == "1"
    layer = 0 if nvidia else int(os.environ.get("ROCBLAS_LAYER", "0") or 0, 0)
    mask = 0 if nvidia else int(os.environ.get("HIPBLASLT_LOG_MASK", "0") or 0, 0)
    for a_rows, a_cols, algo in gemms:
        m, k = a_cols, a_rows
        if level >= 5:
            for line in _lt_api(pid, a_rows, a_cols, tokens):
                logs.write("CUBLASLT_LOG_FILE", True, line)
        if level >= 2:
            logs.write("CUBLASLT_LOG_FILE", True, _lt_trace(pid, a_rows, a_cols, tokens, algo))
        if level >= 5:
            for line in _lt_api_after():
                logs.write("CUBLASLT_LOG_FILE", True, line)
        if cublas:
            logs.write("CUBLAS_LOGDEST_DBG", False, _cublas(pid, m, tokens, k))
        if layer & 1:
            logs.write("ROCBLAS_LOG_TRACE_PATH", False, _rocblas_trace(m, tokens, k))
        if layer & 2:
            logs.write("ROCBLAS_LOG_BENCH_PATH", False, _rocblas_bench(m, tokens, k))
        if mask & 32:
            logs.write("HIPBLASLT_LOG_FILE", True, _hipblaslt_bench(m, tokens, k, 163482 if "algoId=21" in algo else 7))


def _fake_torch(tf32: bool) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent / "fake_torch"))
    import torch

    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.set_float32_matmul_precision("high" if tf32 else "highest")
    torch.cuda.init()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tp", type=int, default=None)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--plant-rank", type=int, default=None)
    parser.add_argument("--exit", type=int, default=0)
    parser.add_argument("--wait-signal", default=None)
    parser.add_argument("--torch", choices=("on", "off"), default=None)
    parser.add_argument("--marker", default=None)
    parser.add_argument("--platform", choices=("nvidia", "amd"), default="nvidia")
    args = parser.parse_args()
    rank_text = os.environ.get("RANK", "0").strip()
    rank = int(rank_text) if rank_text.isascii() and rank_text.isdigit() else 0  # RANK=² in a hostile test
    tp = args.tp or int(os.environ.get("WORLD_SIZE", "1"))
    if args.marker:
        Path(args.marker, f"ran.{os.getpid()}").write_text(os.environ.get("USER_SITECUSTOMIZE", ""))
    if args.torch:
        _fake_torch(args.torch == "on")
    print(f"rank {rank}: training with tp {tp}", flush=True)
    logs = Logs()
    for _ in range(args.steps):
        run_step(logs, rank, tp, args.plant_rank, args.platform)
    if args.wait_signal:
        got: list[str] = []

        def note(number: int, frame: object) -> None:
            got.append(signal.Signals(number).name)

        signal.signal(signal.SIGINT, note)
        signal.signal(signal.SIGTERM, note)
        Path(args.wait_signal, f"ready.{rank}").write_text("")
        deadline = time.monotonic() + 60
        while not got and time.monotonic() < deadline:
            time.sleep(0.02)
        Path(args.wait_signal, f"{got[0] if got else 'timeout'}.{rank}").write_text("")
        return 130 if got else 1
    print(f"rank {rank}: done", flush=True)
    return args.exit


if __name__ == "__main__":
    sys.exit(main())
