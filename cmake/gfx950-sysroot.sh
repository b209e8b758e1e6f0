#!/bin/sh
# A Debian sid sysroot holding a gfx950-capable LLVM (clang-21, lld-21, llvm-21) and the HIP
# device headers and libraries, for machines whose own packages are too old (Debian 12).
#
#   gfx950-sysroot.sh [create] [DIR]       create DIR (or reuse it when it is complete)
#   gfx950-sysroot.sh check [DIR]          exit 0 when DIR holds every tool the build needs
#   gfx950-sysroot.sh run DIR BIND... -- CMD [ARG...]
#                                          run CMD inside DIR with each BIND directory mounted at
#                                          the same path, in the caller's working directory
#
# DIR defaults to $ZYFA_SYSROOT_DIR, else /var/cache/zyfa/gfx950-sysroot. Creating and running
# need root (debootstrap, mount, chroot). sid's Release file may be past its Valid-Until date,
# so apt is told not to check it.
set -eu

PACKAGES="clang-21 lld-21 llvm-21 libamdhip64-dev rocm-device-libs-21 hipcc"
TOOLS="clang++-21 llvm-mc-21 ld.lld-21 llvm-readobj-21 llvm-objdump-21"
MIRROR="${ZYFA_SYSROOT_MIRROR:-http://deb.debian.org/debian}"
APT_OPTS="-o Acquire::Check-Valid-Until=false"

default_dir() { echo "${ZYFA_SYSROOT_DIR:-/var/cache/zyfa/gfx950-sysroot}"; }

is_complete() {
  for t in $TOOLS; do
    [ -x "$1/usr/bin/$t" ] || return 1
  done
  [ -f "$1/usr/include/hip/hip_runtime.h" ] || return 1
  [ -f "$1/.zyfa-sysroot-complete" ] || [ -d "$1/usr/lib/llvm-21" ]
}

create() {
  dir="$1"
  if is_complete "$dir"; then
    echo "gfx950 sysroot: reusing $dir"
    return 0
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "gfx950 sysroot: creating $dir needs root (debootstrap, chroot)" >&2
    exit 1
  fi
  if ! command -v debootstrap >/dev/null 2>&1; then
    echo "gfx950 sysroot: installing debootstrap"
    apt-get install -y --no-install-recommends debootstrap >/dev/null ||
      { apt-get update >/dev/null && apt-get install -y --no-install-recommends debootstrap >/dev/null; }
  fi
  mkdir -p "$dir"
  if [ ! -x "$dir/usr/bin/apt-get" ]; then
    echo "gfx950 sysroot: debootstrap sid into $dir"
    debootstrap --variant=minbase sid "$dir" "$MIRROR"
  fi
  echo "gfx950 sysroot: installing $PACKAGES"
  chroot "$dir" apt-get $APT_OPTS update
  chroot "$dir" env DEBIAN_FRONTEND=noninteractive \
    apt-get $APT_OPTS install -y --no-install-recommends $PACKAGES
  chroot "$dir" apt-get clean
  is_complete "$dir" || { echo "gfx950 sysroot: $dir is missing tools after install" >&2; exit 1; }
  touch "$dir/.zyfa-sysroot-complete"
  echo "gfx950 sysroot: ready in $dir"
}

# Bind-mount each directory at the same path inside the sysroot, once: clang, lld and the
# build's own scripts then see the same file names inside and outside.
mount_binds() {
  dir="$1"; shift
  for b in "$@"; do
    [ -d "$b" ] || continue
    case "$b" in /*) ;; *) echo "gfx950 sysroot: bind path must be absolute: $b" >&2; exit 1;; esac
    target="$dir$b"
    # Already bound when both paths name the same directory (device and inode). A mount whose
    # source was deleted and re-created (a fresh build dir) is stale: replace it.
    if [ -d "$target" ] && [ "$(stat -c %d:%i "$b")" = "$(stat -c %d:%i "$target")" ]; then
      continue
    fi
    if grep -q " $target " /proc/self/mounts 2>/dev/null; then
      umount -l "$target"
    fi
    mkdir -p "$target"
    mount --bind "$b" "$target"
  done
}

run() {
  dir="$1"; shift
  binds=""
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    binds="$binds $1"; shift
  done
  [ $# -gt 0 ] && shift
  # Two compile jobs may start at once; the lock keeps the mount check and the mount together.
  lock="$dir/.zyfa-mount.lock"
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$lock"
    flock 9
    # shellcheck disable=SC2086
    mount_binds "$dir" $binds
    flock -u 9
    exec 9>&-
  else
    # shellcheck disable=SC2086
    mount_binds "$dir" $binds
  fi
  exec chroot "$dir" /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$PWD" "$@"
}

case "${1:-create}" in
  create) shift 2>/dev/null || true; create "${1:-$(default_dir)}" ;;
  check) shift; is_complete "${1:-$(default_dir)}" ;;
  run) shift; run "$@" ;;
  -h|--help) sed -n '2,13p' "$0" ;;
  *) create "$1" ;;
esac
