#!/bin/sh
# Screens variants of the cuda kernels against each other on one GPU. A variant is a source
# tree: a copy (e.g. a git worktree) with its own src/kernels/cuda/fwd_tuning.h or kernel edit.
#
#   variants.sh build <name> [<source tree>]
#       configures build-var-<name> (cuda only, Release) from the tree (default: this one) and
#       builds zyfa-bench and zyfa-test-cuda; run on a machine with nvcc.
#   variants.sh time <out dir> <bench args> -- <name> ...
#       times every variant with zyfa-bench (zyfa only), in the given order and then reversed,
#       each in its own process; then each once more with --check (error against fp64).
#       Output: <out dir>/<name>.<pass>.log and a summary on stdout.
set -eu
mode=$1; shift
case $mode in
build)
  name=$1; shift
  src=${1:-.}
  dir=build-var-$name
  mkdir -p "$dir"
  cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DZYFA_CUDA=on -DZYFA_AMD_TOOLCHAIN=off \
    -DZYFA_BUILD_EXAMPLES=OFF \
    -DZYFA_CUDNN_FRONTEND_INCLUDE="$PWD/.cache/cudnn-frontend/include" > "$dir/configure.log"
  cmake --build "$dir" --target zyfa-bench zyfa-test-cuda
  ;;
time)
  out=$1; shift
  args=
  while [ "$1" != "--" ]; do args="$args $1"; shift; done
  shift
  mkdir -p "$out"
  names=$*
  reversed=
  for n in $names; do reversed="$n $reversed"; done
  pass=0
  for order in "$names" "$reversed"; do
    pass=$((pass + 1))
    for n in $order; do
      # shellcheck disable=SC2086
      build-var-"$n"/bin/zyfa-bench --no-cudnn $args > "$out/$n.$pass.log" 2>&1
      grep " zyfa " "$out/$n.$pass.log" | sed "s/^/pass $pass $n: /"
    done
  done
  for n in $names; do
    # shellcheck disable=SC2086
    build-var-"$n"/bin/zyfa-bench --no-cudnn $args --warmup 3 --iters 1 --runs 1 --check > "$out/$n.check.log" 2>&1
    grep " zyfa " "$out/$n.check.log" | sed "s/^/check $n: /"
  done
  ;;
*)
  echo "usage: variants.sh build <name> [source tree] | time <out> <bench args> -- <names>" >&2
  exit 2
  ;;
esac
