#!/bin/sh
# A Debian sid sysroot holding a gfx950-capable LLVM (clang-21, lld-21, llvm-21) and the HIP
# device headers and libraries, for machines whose own packages are too old (Debian 12).
# The tools run straight from the sysroot, through its own dynamic loader and library path
# (`wrappers`): no chroot, no mount, no root. Only creating the sysroot may need root.
#
#   gfx950-sysroot.sh [create] [DIR]       create DIR (or reuse it when it is complete)
#   gfx950-sysroot.sh check [DIR]          exit 0 when DIR holds every tool the build needs
#   gfx950-sysroot.sh wrappers DIR OUT     write OUT/bin/<tool> scripts that run DIR's LLVM tools
#                                          on this host, as any user
#   gfx950-sysroot.sh unmount [DIR]        remove bind mounts under DIR left by older builds
#                                          (which chrooted into it); root only
#   gfx950-sysroot.sh default-dir          print the directory used when DIR is not given
#
# DIR defaults to $ZYFA_SYSROOT_DIR, else /var/cache/zyfa/gfx950-sysroot for root and for users
# who find a complete sysroot there, else ${XDG_CACHE_HOME:-$HOME/.cache}/zyfa/gfx950-sysroot.
# Creating: root uses debootstrap; other users use `mmdebstrap --mode=unshare` (Debian 12's
# mmdebstrap and uidmap, an unprivileged user namespace, subordinate ids in /etc/subuid), which leaves
# nothing mounted once it returns. sid's Release file may be past its Valid-Until date, so apt
# is told not to check it.
set -eu

PACKAGES="clang-21 lld-21 llvm-21 libamdhip64-dev rocm-device-libs-21 hipcc"
# Tools the build runs, as named in /usr/lib/llvm-21/bin. clang spawns `clang++ -cc1` and `lld`
# from the directory it believes it lives in, so those need wrappers of their own.
LLVM_TOOLS="clang clang++ lld ld.lld llvm-mc llvm-readobj llvm-objdump"
MIRROR="${ZYFA_SYSROOT_MIRROR:-http://deb.debian.org/debian}"
APT_OPTS="-o Acquire::Check-Valid-Until=false"
SYSTEM_DIR=/var/cache/zyfa/gfx950-sysroot
LLVM_DIR=usr/lib/llvm-21
LOADER=usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2

is_complete() {
  for t in $LLVM_TOOLS; do
    [ -x "$1/$LLVM_DIR/bin/$t" ] || return 1
  done
  [ -x "$1/$LOADER" ] || return 1
  [ -f "$1/usr/include/hip/hip_runtime.h" ] || return 1
  [ -f "$1/.zyfa-sysroot-complete" ] || [ -d "$1/$LLVM_DIR" ]
}

default_dir() {
  if [ -n "${ZYFA_SYSROOT_DIR:-}" ]; then
    echo "$ZYFA_SYSROOT_DIR"
  elif [ "$(id -u)" = 0 ] || is_complete "$SYSTEM_DIR"; then
    echo "$SYSTEM_DIR"
  else
    echo "${XDG_CACHE_HOME:-$HOME/.cache}/zyfa/gfx950-sysroot"
  fi
}

create_as_root() {
  dir="$1"
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
  # chroot without any bind mount: apt only writes inside the sysroot.
  chroot "$dir" apt-get $APT_OPTS update
  chroot "$dir" env DEBIAN_FRONTEND=noninteractive \
    apt-get $APT_OPTS install -y --no-install-recommends $PACKAGES
  chroot "$dir" apt-get clean
}

create_as_user() {
  dir="$1"
  if ! command -v mmdebstrap >/dev/null 2>&1; then
    echo "gfx950 sysroot: creating $dir as a non-root user needs mmdebstrap (apt-get install" \
         "mmdebstrap, as root), or run this script once as root" >&2
    exit 1
  fi
  # mmdebstrap wants a fresh target; an incomplete earlier attempt is only a cache.
  rm -rf "$dir"
  mkdir -p "$(dirname "$dir")"
  echo "gfx950 sysroot: mmdebstrap --mode=unshare sid into $dir"
  packages=$(echo "$PACKAGES" | tr ' ' ',')
  mkdir -p "$dir"
  # As a tar stream unpacked by this user: a directory target would be owned by subordinate
  # ids, which this user could then neither mark complete nor delete. Device nodes are left out
  # (only root can make them; nothing here needs them).
  { mmdebstrap --mode=unshare --variant=minbase --include="$packages" \
      --aptopt='Acquire::Check-Valid-Until "false"' sid - "$MIRROR" |
    tar -x -C "$dir" --no-same-owner --no-same-permissions --exclude='./dev/*'; } || {
    echo "gfx950 sysroot: mmdebstrap failed; it needs unprivileged user namespaces" \
         "(sysctl kernel.unprivileged_userns_clone=1), newuidmap (Debian package uidmap) and an" \
         "entry for $(id -un) in /etc/subuid and /etc/subgid; or run this script once as root" >&2
    exit 1
  }
}

create() {
  dir="$1"
  if is_complete "$dir"; then
    echo "gfx950 sysroot: reusing $dir"
    return 0
  fi
  if [ "$(id -u)" = 0 ]; then
    create_as_root "$dir"
  else
    create_as_user "$dir"
  fi
  is_complete "$dir" || { echo "gfx950 sysroot: $dir is missing tools after install" >&2; exit 1; }
  touch "$dir/.zyfa-sysroot-complete"
  echo "gfx950 sysroot: ready in $dir"
}

# One script per tool: the sysroot's loader runs the sysroot's binary with the sysroot's
# libraries, so sid's glibc and libLLVM never meet the host's. --argv0 names the wrapper, and
# clang (given -no-canonical-prefixes) takes its install directory from argv[0]: the
# sub-processes it starts (clang++ -cc1, lld) are then these wrappers too. OUT/lib/clang points
# at the sysroot's resource directory (builtin headers, device bitcode), which clang looks for
# next to its install directory.
wrappers() {
  dir="$1"; out="$2"
  case "$dir" in /*) ;; *) echo "gfx950 sysroot: DIR must be absolute: $dir" >&2; exit 1;; esac
  is_complete "$dir" || { echo "gfx950 sysroot: $dir is not a complete sysroot" >&2; exit 1; }
  libs="$dir/usr/lib/x86_64-linux-gnu:$dir/$LLVM_DIR/lib"
  mkdir -p "$out/bin" "$out/lib"
  for t in $LLVM_TOOLS; do
    tmp="$out/bin/.$t.tmp"
    printf '#!/bin/sh\n# Generated by gfx950-sysroot.sh: runs %s from %s on this host.\nexec "%s" --library-path "%s" --argv0 "$0" "%s" "$@"\n' \
      "$t" "$dir" "$dir/$LOADER" "$libs" "$dir/$LLVM_DIR/bin/$t" >"$tmp"
    chmod 755 "$tmp"
    mv -f "$tmp" "$out/bin/$t"
  done
  ln -sfn "$dir/$LLVM_DIR/lib/clang" "$out/lib/clang"
}

# Builds before this script ran tools in place chrooted into the sysroot after bind-mounting
# the source and build trees, and left those mounts behind: deleting the sysroot then deleted
# the trees. Remove every mount whose mount point lies under the sysroot, deepest first.
unmount() {
  dir="$1"
  [ -d "$dir" ] || return 0
  real=$(cd "$dir" && pwd -P)
  mounts=$(awk -v p="$real/" 'index($2 "/", p) == 1 { print $2 }' /proc/self/mounts | sort -r)
  [ -n "$mounts" ] || return 0
  if [ "$(id -u)" != 0 ]; then
    # Only deleting the sysroot is dangerous, and this user cannot delete it: warn, go on.
    echo "gfx950 sysroot: warning: mounts left under $real by an older build; do not delete" \
         "the sysroot before root runs: sh $0 unmount $dir" >&2
    return 0
  fi
  for m in $mounts; do
    echo "gfx950 sysroot: removing the leftover mount $m"
    umount "$m" 2>/dev/null || umount -l "$m"
  done
}

case "${1:-create}" in
  create) shift 2>/dev/null || true; create "${1:-$(default_dir)}" ;;
  check) shift; is_complete "${1:-$(default_dir)}" ;;
  wrappers) shift; [ $# -eq 2 ] || { echo "usage: $0 wrappers DIR OUT" >&2; exit 2; }; wrappers "$1" "$2" ;;
  unmount) shift; unmount "${1:-$(default_dir)}" ;;
  default-dir) default_dir ;;
  run)
    # The tool wrapper of build trees configured by older versions (chroot + bind mounts).
    echo "gfx950 sysroot: 'run' (chroot with bind mounts) is gone; this build tree was configured" \
         "by an older version: re-run cmake on it (or delete it) so that it uses the in-place tools" >&2
    exit 2 ;;
  -h|--help) sed -n '2,21p' "$0" ;;
  /*) create "$1" ;;
  *) echo "gfx950 sysroot: unknown command '$1' (create, check, wrappers, unmount, default-dir;" \
          "or an absolute DIR to create)" >&2
     exit 2 ;;
esac
