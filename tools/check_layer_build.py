#!/usr/bin/env python3
"""Compiles pyjion/codegen's C++ sources (syntax and types only, no object
files) against another CPython's headers: how a version layer is brought up
before the whole extension builds there.

    tools/check_layer_build.py --python ~/.pyenv/versions/3.13.0/bin/python3.13 [files...]

Prints each file's first errors and a count per file; exit status 1 if any
file fails. The file selection is setup.py's (only the target's pyNNN layer).
"""
import argparse
import glob
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYER = re.compile(r"py3\d+$")


def target_info(python):
    out = subprocess.check_output([python, "-c", "import sys, sysconfig; "
                                   "print(sysconfig.get_paths()['include']); print('py%d%d' % sys.version_info[:2])"],
                                  text=True).split()
    return out[0], out[1]


def sources(own):
    files = glob.glob(os.path.join(ROOT, "pyjion/codegen/*.cpp")) + [os.path.join(ROOT, "pyjion/_codegen.cpp")]
    for d in glob.glob(os.path.join(ROOT, "pyjion/codegen/*/")):
        name = os.path.basename(d.rstrip("/"))
        if not LAYER.match(name) or name == own:
            files += glob.glob(d + "*.cpp")
    return sorted(files)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", required=True, help="the target CPython's executable")
    ap.add_argument("--errors", type=int, default=3, help="errors shown per file")
    ap.add_argument("files", nargs="*", help="only these sources (default: all of the target's)")
    args = ap.parse_args()
    include, own = target_info(args.python)
    import pybind11
    # Our folders before CPython's, as setup.py orders them (codegen/compile.h, not CPython's compile.h).
    flags = ["g++", "-std=c++17", "-fsyntax-only", "-DASMJIT_STATIC",
             "-I" + os.path.join(ROOT, "pyjion"), "-I" + os.path.join(ROOT, "pyjion/codegen"),
             "-I" + pybind11.get_include(), "-I" + os.path.join(ROOT, "build/asmjit/include"), "-I" + include]
    files = [os.path.abspath(f) for f in args.files] or sources(own)

    def check(path):
        r = subprocess.run(flags + [path], capture_output=True, text=True)
        return path, [line for line in r.stderr.splitlines() if " error" in line]

    failed = 0
    with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        for path, errors in pool.map(check, files):
            rel = os.path.relpath(path, ROOT)
            print("%4d %s" % (len(errors), rel))
            for line in errors[:args.errors]:
                print("       " + line.replace(ROOT + "/", ""))
            failed += bool(errors)
    print("%d of %d files fail against %s" % (failed, len(files), own))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
