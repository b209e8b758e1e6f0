#!/bin/sh
# Fetches AMD AITER's hand-written gfx950 flash-attention forward code objects (and the header
# that declares their kernel arguments) from the pinned PyPI wheel into a cache directory, for
# the emulator tests that run kernels this project did not write (tests/aiter). Usage:
# fetch-aiter-kernels.sh [CACHE_DIR] (default: <repo>/.cache/aiter). The wheel (40 MB) is
# downloaded into a temporary directory and only these files are kept:
#   fmha_v3_fwd/fwd_hd128_bf16{,_causal}.co, fmha_v3_fwd/fwd_hd192_hd128_bf16{,_causal}.co,
#   fmha_v3_fwd/codegen.py (launch geometry), include/mha_fwd.h (struct fmha_fwd_v3_args).
set -eu
version=0.1.7.post2.dev18
here=$(cd "$(dirname "$0")" && pwd)
cache=${1:-$here/../../.cache/aiter}
if [ -f "$cache/fmha_v3_fwd/fwd_hd128_bf16_causal.co" ] && [ -f "$cache/VERSION" ] &&
   [ "$(cat "$cache/VERSION")" = "$version" ]; then
  echo "amd-aiter $version kernels already in $cache"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A pure-Python wheel (py3-none-any): no platform or interpreter selection needed.
python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$tmp" "amd-aiter==$version"
rm -rf "$cache/fmha_v3_fwd" "$cache/include"
mkdir -p "$cache/fmha_v3_fwd" "$cache/include"
python3 - "$tmp" "$cache" <<'PY'
import glob, os, sys, zipfile
tmp, cache = sys.argv[1], sys.argv[2]
whl = glob.glob(tmp + "/amd_aiter-*.whl")[0]
wanted = {
    "aiter_meta/hsa/gfx950/fmha_v3_fwd/" + n: "fmha_v3_fwd/" + n
    for n in ["fwd_hd128_bf16.co", "fwd_hd128_bf16_causal.co", "fwd_hd192_hd128_bf16.co",
              "fwd_hd192_hd128_bf16_causal.co", "codegen.py"]
}
wanted["aiter_meta/csrc/include/mha_fwd.h"] = "include/mha_fwd.h"
with zipfile.ZipFile(whl) as z:
    for src, dst in wanted.items():
        with z.open(src) as f, open(os.path.join(cache, dst), "wb") as out:
            out.write(f.read())
PY
echo "$version" > "$cache/VERSION"
echo "amd-aiter $version gfx950 fmha_v3_fwd kernels in $cache"
