#!/bin/sh
# Builds CUTLASS's Hopper FMHA example (examples/88_hopper_fmha, a CuTe attention in the manner
# of FlashAttention 3) from the sources the pinned nvidia-cutlass wheel carries, in BF16's place
# FP16 and in FP8, for a same-machine comparison with zyfa-bench (docs/performance.md,
# "Hand-written PTX or CUTLASS"). Nothing of it is built into libzyfa.
# Usage: build.sh <output dir>     (needs nvcc 12.3 or later, pip, network access to PyPI)
set -eu
out=$1
version=4.2.0.0
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ ! -d "$out/cutlass-$version" ]; then
  python3 -m pip download --no-deps --quiet --dest "$out" "nvidia-cutlass==$version"
  python3 -m zipfile -e "$out/nvidia_cutlass-$version-py3-none-any.whl" "$out/cutlass-$version"
fi
src=$out/cutlass-$version/cutlass_library/source
ex=$src/examples/88_hopper_fmha
flags="-std=c++17 -O3 -DNDEBUG -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr \
  -I$src/include -I$src/tools/util/include -I$src/examples/common -I$ex"
# As the example's own CMakeLists: fast math for the 16-bit build, FP8 by a define.
# shellcheck disable=SC2086
nvcc $flags --use_fast_math -o "$out/fmha_f16" "$ex/88_hopper_fmha.cu" &
# shellcheck disable=SC2086
nvcc $flags -DFP8 -o "$out/fmha_fp8" "$ex/88_hopper_fmha.cu" &
wait
ls -l "$out/fmha_f16" "$out/fmha_fp8"
