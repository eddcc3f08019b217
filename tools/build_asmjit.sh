#!/usr/bin/env bash
# Builds AsmJit from Debian's source package as a position-independent static
# library, once, into build/asmjit (Debian's own libasmjit.a is not -fPIC and
# cannot be linked into a Python extension).
# ASMJIT_ROOT=/path (with include/asmjit/asmjit.h and lib/libasmjit.a) skips it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prefix="$root/build/asmjit"
if [ -n "${ASMJIT_ROOT:-}" ]; then
    [ -f "$ASMJIT_ROOT/include/asmjit/asmjit.h" ] && [ -f "$ASMJIT_ROOT/lib/libasmjit.a" ] || {
        echo "ASMJIT_ROOT=$ASMJIT_ROOT lacks include/asmjit/asmjit.h or lib/libasmjit.a" >&2; exit 1; }
    exit 0
fi
[ -f "$prefix/lib/libasmjit.a" ] && [ -f "$prefix/include/asmjit/asmjit.h" ] && exit 0

for tool in cmake c++ tar apt-get; do
    command -v "$tool" >/dev/null || { echo "pyjion set-up: '$tool' is missing; install it (apt-get install cmake g++ tar)" >&2; exit 1; }
done
# The source version is pinned (Debian 12's package; the newest deb-src entry
# would be taken otherwise, and with testing/unstable entries configured that
# is a version the code was never built with). ASMJIT_SOURCE_VERSION overrides.
version="${ASMJIT_SOURCE_VERSION:-0.0~git20221210.5b5b0b3-1}"
work="$root/build/asmjit-src"
rm -rf "$work" && mkdir -p "$work"
cd "$work"
if ! apt-get source --download-only "asmjit=$version" >/dev/null 2>&1; then
    echo "pyjion set-up: could not download Debian's asmjit source package $version; run 'make setup'" \
         "as root (it enables deb-src entries) or set ASMJIT_ROOT to an AsmJit built with -fPIC" >&2
    exit 1
fi
tar xJf asmjit_*.orig.tar.xz
src=$(find . -maxdepth 1 -type d -name 'asmjit-*' | head -n1)
cmake -S "$src" -B cmake-build -DASMJIT_STATIC=ON -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
      -DCMAKE_BUILD_TYPE=Release -DASMJIT_TEST=OFF -DCMAKE_INSTALL_PREFIX="$prefix" >/dev/null
cmake --build cmake-build -j"$(nproc)" >/dev/null
cmake --install cmake-build >/dev/null
# Some layouts install into lib64 or lib/<triplet>; normalise to lib/.
if [ ! -f "$prefix/lib/libasmjit.a" ]; then
    mkdir -p "$prefix/lib"
    cp "$(find "$prefix" -name libasmjit.a | head -n1)" "$prefix/lib/libasmjit.a"
fi
rm -rf "$work"
echo "pyjion set-up: built position-independent AsmJit into $prefix"
