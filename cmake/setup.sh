#!/bin/sh
# One-time set-up of a Debian 12 machine for building zyfa with every backend it can carry:
# Debian packages, the gfx950 sysroot (cmake/gfx950-sysroot.sh), the pinned PyPI header
# wheel of the cuDNN comparison (bench/zyfa-bench/fetch-cudnn-frontend.sh) and AITER's gfx950
# kernels for the emulator tests (bench/aiter/fetch-aiter-kernels.sh). Idempotent: present pieces are reused.
# Root (or sudo) is needed only to install missing Debian packages. The sysroot is made by root
# with debootstrap, by any other user with mmdebstrap in a user namespace; building with it
# needs no root at all (its tools run in place, nothing is mounted).
set -eu
here=$(cd "$(dirname "$0")" && pwd)

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

packages="cmake ninja-build g++ python3 python3-pip ccache libgtest-dev libgmock-dev libbenchmark-dev libfmt-dev
          libamdhip64-dev debootstrap mmdebstrap uidmap pkgconf dpkg-dev binutils"
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "setup: installing Debian packages:$missing (apt needs root: using sudo unless root)"
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
fi

# The gfx950 toolchain: a native ROCm >= 6.4 is used as is; otherwise the Debian sid sysroot.
if [ -x "${ROCM_PATH:-/opt/rocm}/llvm/bin/clang++" ] && [ "${ZYFA_AMD_TOOLCHAIN:-auto}" != sysroot ]; then
  echo "setup: using ROCm at ${ROCM_PATH:-/opt/rocm}"
else
  sysroot=$(sh "$here/gfx950-sysroot.sh" default-dir)
  # Builds of earlier versions chrooted into the sysroot and left the source and build trees
  # bind-mounted inside it; remove those mounts before anything deletes or reuses it.
  sh "$here/gfx950-sysroot.sh" unmount "$sysroot"
  sh "$here/gfx950-sysroot.sh" create "$sysroot"
fi

# Header-only cuDNN frontend (pinned PyPI wheel) for zyfa-bench's cuDNN comparison. Optional:
# without it the bench builds without the comparison.
sh "$here/../bench/zyfa-bench/fetch-cudnn-frontend.sh" ||
  echo "setup: cuDNN frontend headers not fetched; zyfa-bench will build without the cuDNN comparison"
# AMD AITER's shipped gfx950 attention kernels (pinned PyPI wheel, only the code objects and
# their argument header kept), run by the emulator tests in tests/aiter. Optional: without them
# those tests skip and say why.
sh "$here/../bench/aiter/fetch-aiter-kernels.sh" ||
  echo "setup: AITER kernels not fetched; the tests that run them on the emulator will skip"
echo "setup: done"
