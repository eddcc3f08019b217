#!/usr/bin/env bash
# Prints the path of a CPython interpreter of version $1 (3.11, 3.13) for
# pyjion's build: python$1 on PATH, else pyenv's newest $1.x, else one built
# once from Debian trixie's python$1 source into build/python$1 (cached).
# Progress goes to stderr; only the path goes to stdout.
set -euo pipefail
ver="${1:?usage: tools/find_python.sh 3.13}"
root="$(cd "$(dirname "$0")/.." && pwd)"

is_version() { "$1" -c "import sys; sys.exit(sys.version_info[:2] != tuple(map(int, '$ver'.split('.'))))" 2>/dev/null; }

if p="$(command -v "python$ver")" && is_version "$p"; then echo "$p"; exit 0; fi
for p in $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$ver".*/bin/"python$ver" 2>/dev/null | sort -V -r); do
    if is_version "$p"; then echo "$p"; exit 0; fi
done
cached="$root/build/python$ver/bin/python$ver"
if [ -x "$cached" ] && is_version "$cached"; then echo "$cached"; exit 0; fi

# Build it. Debian's source package of that version (trixie has 3.13), fetched
# with a private apt configuration so the machine's sources stay as they are.
echo "pyjion set-up: no CPython $ver found; building Debian's python$ver source into build/python$ver" >&2
if [ "$(id -u)" != 0 ]; then
    echo "pyjion set-up: building CPython $ver needs its build dependencies from apt-get; run as root" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
deps=(build-essential pkg-config libssl-dev zlib1g-dev libffi-dev libbz2-dev liblzma-dev libsqlite3-dev
      libreadline-dev libncurses-dev libgdbm-dev uuid-dev xz-utils)
missing=()
for d in "${deps[@]}"; do dpkg -s "$d" >/dev/null 2>&1 || missing+=("$d"); done
if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq >&2
    apt-get install -y -qq "${missing[@]}" >&2
fi
work="$root/build/python$ver-src"
rm -rf "$work" && mkdir -p "$work/apt/lists/partial" "$work/apt/sources.list.d"
cat > "$work/apt/sources.list.d/trixie-src.sources" <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
apt_opts=(-o "Dir::Etc::sourcelist=/dev/null" -o "Dir::Etc::sourceparts=$work/apt/sources.list.d"
          -o "Dir::State::Lists=$work/apt/lists")
apt-get "${apt_opts[@]}" update -qq >&2
(cd "$work" && apt-get "${apt_opts[@]}" source --download-only "python$ver" >&2)
tar -C "$work" -xf "$work"/python"$ver"_*.orig.tar.xz
src="$(ls -d "$work"/Python-"$ver".*/ | head -1)"
(cd "$src" && ./configure -q --prefix="$root/build/python$ver" --enable-shared \
     LDFLAGS="-Wl,-rpath,$root/build/python$ver/lib" >&2 &&
 make -s -j"$(nproc)" >&2 && make -s altinstall >&2)
rm -rf "$work"
is_version "$cached" && echo "$cached"
