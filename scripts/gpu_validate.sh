#!/usr/bin/env bash
# GPU validation kit: on a machine with an NVIDIA GPU, PyTorch and libcublasLt (the nvidia-cublas wheel that
# PyTorch installs is found automatically), in under 10 minutes:
#   1. the tests marked `gpu` (the real probe),
#   2. real level-5 cuBLASLt logs of a small TP simulation (scripts/tp_simulation.py),
#   3. blaslog probe --from those logs -> caps.json,
#   4. blaslog diff of every sharded run against the unsharded one, with and without TF32,
#   5. blaslog record --probe around torchrun (TP 2 and TP 1, one process per rank), then diff of the two run
#      folders (ranks from the manifest, caps from the folders, settings compared),
#   6. the emulation against this GPU (scripts/emulation_check.py): the same GEMMs run with each math mode pinned
#      (TF32 on/off, FP16, BF16; whole and split over 4 "ranks") and emulated from the same inputs, compared bit
#      for bit; and `diff --emulate` of the TP simulation's logs (the GPU taken from cuBLASLt's Info line),
# everything written to one folder (default: gpu-validation/, or $OUT when set). Keep $OUT/logs, $OUT/runs and
# $OUT/caps.json as fixtures: they are real cuBLASLt output of this GPU.
#
#   bash scripts/gpu_validate.sh [OUT]
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-${OUT:-gpu-validation}}"
mkdir -p "$out"
status=0
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
# blaslog needs lark, pandas, click and tabulate (pip install -e . where there is a network; on a machine
# without one, install their wheels first); the gpu tests need pytest; the simulation needs torch with CUDA.
python3 -c "import lark, pandas, click, tabulate, pytest" 2>/dev/null || {
  echo "missing Python packages: python3 -m pip install -e '.[test]' (or carry their wheels)" >&2; exit 2; }
{
  echo "# blaslog GPU validation, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader 2>&1 || true
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1 || true
} | tee "$out/environment.txt"

echo "== 1. gpu tests" | tee -a "$out/summary.txt"
timeout 180 python3 -m pytest -m gpu -p no:cacheprovider -q tests/native 2>&1 | tee "$out/gpu-tests.txt" | tail -3 | tee -a "$out/summary.txt" || status=1

echo "== 2. TP simulation logs" | tee -a "$out/summary.txt"
timeout 300 python3 scripts/tp_simulation.py --out "$out/logs" 2>&1 | tee -a "$out/summary.txt" || status=1

echo "== 2b. emulation against this GPU (needs blaslog[emulate]: torch and mmasim)" | tee -a "$out/summary.txt"
if python3 -c "import mmasim" 2>/dev/null; then
  timeout 240 python3 scripts/emulation_check.py --out "$out/emulation" 2>&1 | tee "$out/emulation.txt" | tee -a "$out/summary.txt" || status=1
else
  echo "skipped: mmasim is not installed (carry its wheel)" | tee -a "$out/summary.txt"
fi

echo "== 3. probe" | tee -a "$out/summary.txt"
timeout 120 python3 -m blaslog probe --from "$out/logs/*/*.log" -o "$out/caps.json" > "$out/probe.txt" 2>&1 || status=1
head -20 "$out/probe.txt" | tee -a "$out/summary.txt"

echo "== 4. diffs" | tee -a "$out/summary.txt"
for mode in tf32 fp32; do
  for tp in 2 4; do
    name="${mode}_tp${tp}_vs_tp1"
    python3 -m blaslog diff "$out/logs/${mode}_tp${tp}/*.log" "$out/logs/${mode}_tp1/*.log" --caps "$out/caps.json" \
      --format json --output "$out/$name.json" --exit-zero -q
    python3 -m blaslog diff "$out/logs/${mode}_tp${tp}/*.log" "$out/logs/${mode}_tp1/*.log" --caps "$out/caps.json" \
      --exit-zero > "$out/$name.txt" 2>&1
    echo "$name: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(len(d['findings']), 'findings', [f['class'] for f in d['findings']], 'TP', [c['tp'] for c in d['comparisons']])" "$out/$name.json")" | tee -a "$out/summary.txt"
  done
done
python3 -m blaslog check "$out/logs/*/*.log" --caps "$out/caps.json" --exit-zero > "$out/check.txt" 2>&1
if python3 -c "import mmasim" 2>/dev/null; then
  python3 -m blaslog diff "$out/logs/tf32_tp4/*.log" "$out/logs/tf32_tp1/*.log" --caps "$out/caps.json" --emulate \
    --samples 256 --format json --output "$out/emulate_diff.json" --exit-zero -q 2> "$out/emulate_diff.txt" || status=1
  echo "diff --emulate: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print([(f['class'], (f.get('emulation') or {}).get('gpu'), (f.get('emulation') or {}).get('difference') or (f.get('emulation') or {}).get('skipped')) for f in d['findings']][:6])" "$out/emulate_diff.json" 2>&1)" | tee -a "$out/summary.txt"
fi

echo "== 5. blaslog record around torchrun" | tee -a "$out/summary.txt"
for tp in 1 2; do
  timeout 300 python3 -m blaslog record --probe --force --out "$out/runs/tf32_tp$tp" -- \
    python3 -m torch.distributed.run --standalone --nproc_per_node="$tp" scripts/tp_simulation.py --rank-shard --tf32 1 \
    > "$out/record_tp$tp.txt" 2>&1 || status=1
  tail -3 "$out/record_tp$tp.txt" | tee -a "$out/summary.txt"
done
python3 -m blaslog diff "$out/runs/tf32_tp2" "$out/runs/tf32_tp1" --format json --output "$out/record_diff.json" \
  --exit-zero -q || status=1
python3 -m blaslog diff "$out/runs/tf32_tp2" "$out/runs/tf32_tp1" --exit-zero > "$out/record_diff.txt" 2>&1 || status=1
head -40 "$out/record_diff.txt" | tee -a "$out/summary.txt"
echo "exit status $status" | tee -a "$out/summary.txt"
exit $status
