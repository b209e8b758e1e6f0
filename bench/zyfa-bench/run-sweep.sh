#!/bin/sh
# The H200 benchmark of docs/performance.md: the headline shapes with the full protocol (500
# warm-up calls, 3 rotated runs of 100 calls, 5 s idle before each, sampled fp64 accuracy) on
# Gaussian inputs of std 0.1 and, to show how the speed depends on the data, of std 1; then
# the whole sweep (S 2K..32K, MHA and GQA 4:1, d 128 and 192/128, BF16 and FP8) with a
# shorter protocol; then the accuracy run.
#
# Accuracy run: ZYFA and cuDNN against fp64 on sampled rows (per-row relative error mean and
# max, the pooled figure, LSE error per row; sampled_error.h), FP8 and BF16, d 128 and
# 192/128, S 2K, 8K and 32K, on Gaussian inputs of std 0.1 and std 1 (outputs shrink with the
# row length) and on realistic inputs (per-channel means, outliers, RoPE, a sink; outputs do
# not vanish). One call per kernel: the figures need no timing.
#
# varlen: the varlen and chunked-prefill targets with the headline protocol, BF16 and FP8,
# d 128, H 32: 16 sequences of 256..8192 tokens (seed 11 draws 63995 in all) and 2048 queries
# against 16384 keys, each beside cuDNN (ragged offsets / bottom-right causal) and ZYFA's
# fixed-length call of the same causal work; then the batch's sampled fp64 accuracy.
# Usage: run-sweep.sh <zyfa-bench binary> <output dir> [all|accuracy|varlen]
set -eu
bench=$1 out=$2 what=${3:-all}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$out/gpu.csv" 2>&1 || true
if [ "$what" = varlen ]; then
  protocol="--dtype bf16,fp8 --d 128 --gqa 1 --heads 32 --warmup 500 --iters 100 --runs 3 --idle 5"
  batch="--varlen random:16:256:8192:11"
  # shellcheck disable=SC2086
  "$bench" $protocol $batch --json "$out/varlen.json" | tee "$out/varlen.log"
  # shellcheck disable=SC2086
  "$bench" $protocol --chunk 2048:16384 --json "$out/chunk.json" | tee "$out/chunk.log"
  # shellcheck disable=SC2086
  "$bench" --dtype bf16,fp8 --heads 32 $batch --warmup 1 --iters 1 --runs 1 --idle 0 --check \
    --json "$out/varlen-accuracy.json" | tee "$out/varlen-accuracy.log"
  exit 0
fi
if [ "$what" = all ]; then
  headline="--dtype bf16,fp8 --d 128 --gqa 1 --seqlen 32768 --heads 32 --warmup 500 --iters 100 --runs 3 --idle 5 --check"
  # shellcheck disable=SC2086
  "$bench" $headline --json "$out/headline.json" | tee "$out/headline.log"
  # shellcheck disable=SC2086
  "$bench" $headline --input-std 1 --json "$out/headline-std1.json" | tee "$out/headline-std1.log"
  "$bench" --warmup 100 --iters 30 --runs 3 --json "$out/sweep.json" | tee "$out/sweep.log"
fi
accuracy="--dtype fp8,bf16 --d 128,192 --gqa 1 --seqlen 2048,8192,32768 --warmup 1 --iters 1 --runs 1 --idle 0 --check"
for inputs in std0.1 std1 realistic; do
  case $inputs in
  std0.1) args="--inputs gaussian --input-std 0.1" ;;
  std1) args="--inputs gaussian --input-std 1" ;;
  realistic) args="--inputs realistic" ;;
  esac
  # shellcheck disable=SC2086
  "$bench" $accuracy $args --json "$out/accuracy-$inputs.json" | tee "$out/accuracy-$inputs.log"
done
