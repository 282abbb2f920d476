#!/bin/sh
# A non-Python worker for tests of `blaslog record`: writes one cuBLASLt [Trace] line to $CUBLASLT_LOG_FILE with
# `%i` replaced by its process id, as libcublasLt does; it sleeps first so that blaslog sees it in /proc (3 s: a
# loaded CI machine's watcher once missed a worker that slept 1 s).
sleep 3
file=$(printf '%s' "$CUBLASLT_LOG_FILE" | sed "s/%i/$$/")
printf '%s\n' "[2026-06-06 16:02:12][cublasLt][$$][Trace][cublasLtMatmul] A=0X1 Adesc=[type=R_32F rows=64 cols=96 ld=64] B=0X2 Bdesc=[type=R_32F rows=64 cols=1024 ld=64] C=0X3 Cdesc=[type=R_32F rows=96 cols=1024 ld=96] D=0X3 Ddesc=[type=R_32F rows=96 cols=1024 ld=96] computeDesc=[computeType=COMPUTE_32F_FAST_TF32 scaleType=R_32F transa=OP_T] algo=[algoId=21 tile=MATMUL_TILE_64x64 stages=MATMUL_STAGES_32x6] workSpace=0X0 workSpaceSizeInBytes=4194304 beta=0 outOfPlace=0 stream=0X0" >> "$file"
