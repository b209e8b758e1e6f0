#!/bin/sh
# Fetches the cuDNN C++ frontend headers (header-only) from the pinned PyPI wheel into a cache
# directory, for zyfa-bench's cuDNN comparison. Usage: fetch-cudnn-frontend.sh [CACHE_DIR]
# (default: <repo>/.cache/cudnn-frontend). Then configure with
#   -DZYFA_CUDNN_FRONTEND_INCLUDE=<CACHE_DIR>/include
set -eu
version=1.32.0
here=$(cd "$(dirname "$0")" && pwd)
cache=${1:-$here/../../.cache/cudnn-frontend}
if [ -f "$cache/include/cudnn_frontend.h" ] && [ -f "$cache/VERSION" ] && [ "$(cat "$cache/VERSION")" = "$version" ]; then
  echo "cudnn-frontend $version already in $cache"
  exit 0
fi
mkdir -p "$cache/wheel"
# Any CPython build of the wheel carries the same headers.
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.11 \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  -d "$cache/wheel" "nvidia-cudnn-frontend==$version"
rm -rf "$cache/include"
python3 - "$cache" <<'PY'
import glob, sys, zipfile
cache = sys.argv[1]
whl = glob.glob(cache + "/wheel/nvidia_cudnn_frontend-*.whl")[0]
with zipfile.ZipFile(whl) as z:
    for name in z.namelist():
        if name.startswith("include/"):
            z.extract(name, cache)
PY
echo "$version" > "$cache/VERSION"
echo "cudnn-frontend $version headers in $cache/include"
