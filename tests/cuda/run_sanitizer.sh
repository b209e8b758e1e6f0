#!/bin/sh
# Runs one small cuda test case under compute-sanitizer. Exit 77 (skipped) without a usable GPU.
# Usage: run_sanitizer.sh <compute-sanitizer> <memcheck|racecheck|synccheck> <zyfa-test-cuda>
set -u
sanitizer=$1 tool=$2 binary=$3
filter='Fwd.Cuda/Bf16_D128_Gqa4_S129:Fwd.Cuda/Fp8_D128_Gqa4_S129'
# Without a usable device the test binary itself skips: report that as a skip here too.
if "$binary" --gtest_filter="$filter" 2>&1 | grep -q "cuda backend not usable"; then
  echo "no usable cuda device: skipped"
  exit 77
fi
exec "$sanitizer" --tool "$tool" --error-exitcode 1 "$binary" --gtest_filter="$filter"
