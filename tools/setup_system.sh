#!/usr/bin/env bash
# Installs the system packages pyjion's build needs, only those missing:
# a C/C++ toolchain, cmake, AsmJit's headers (libasmjit-dev), Debian's
# source entries so tools/build_asmjit.sh can fetch AsmJit's sources, and
# chromium for the flame-graph page's test.
set -euo pipefail
need=()
command -v g++ >/dev/null || need+=(g++)
command -v cmake >/dev/null || need+=(cmake)
command -v make >/dev/null || need+=(make)
[ -f /usr/include/asmjit/asmjit.h ] || need+=(libasmjit-dev)
command -v xz >/dev/null || need+=(xz-utils)
# The tests open the profiler's flame-graph page in a real (headless) browser.
command -v chromium >/dev/null || need+=(chromium)
srcs=/etc/apt/sources.list.d/pyjion-deb-src.sources
has_deb_src() { grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/ ; }
if [ ${#need[@]} -eq 0 ] && { [ -n "${ASMJIT_ROOT:-}" ] || [ -f build/asmjit/lib/libasmjit.a ] || has_deb_src; }; then
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "pyjion set-up: missing system pieces (${need[*]:-deb-src entries}); run as root or install them:" \
         "apt-get install g++ cmake make libasmjit-dev xz-utils chromium" >&2
    exit 1
fi
if ! has_deb_src && [ -f /etc/apt/sources.list.d/debian.sources ]; then
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > "$srcs"
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
[ ${#need[@]} -eq 0 ] || apt-get install -y -qq "${need[@]}" >/dev/null
echo "pyjion set-up: system packages ready"
