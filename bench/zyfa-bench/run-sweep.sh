#!/bin/sh
# The H200 benchmark of docs/performance.md: the headline shapes with the full protocol (500
# warm-up calls, 3 rotated runs of 100 calls, sampled fp64 accuracy), then the whole sweep
# (S 2K..32K, MHA and GQA 4:1, d 128 and 192/128, BF16 and FP8) with a shorter protocol.
# Usage: run-sweep.sh <zyfa-bench binary> <output dir>
set -eu
bench=$1 out=$2
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$out/gpu.csv" 2>&1 || true
"$bench" --dtype bf16,fp8 --d 128 --gqa 1 --seqlen 32768 --heads 32 --warmup 500 --iters 100 --runs 3 \
  --check --json "$out/headline.json" | tee "$out/headline.log"
"$bench" --warmup 100 --iters 30 --runs 3 --json "$out/sweep.json" | tee "$out/sweep.log"
