"""The extension modules as a wheel must ship them: no libpython among their
needed libraries (so any CPython 3.11 (or 3.13) build loads them, one with libpython in
its executable included), every CPython symbol they use exported by
libpython (what -Wl,-z,defs checked when they linked it: a symbol CPython
keeps internal fails here instead of at import), and nothing else needed
but the C library's parts (libstdc++ and AsmJit are linked in)."""
import glob
import os
import subprocess
import sys
import sysconfig

import pytest

from jitcheck import REPO

# the extensions built for the running CPython (3.11 or 3.13)
EXTENSIONS = sorted(glob.glob(os.path.join(REPO, "pyjion", "_*.cpython-%d%d-*.so" % sys.version_info[:2])))
ALLOWED_NEEDED = {"libc.so.6", "libm.so.6", "libpthread.so.0", "librt.so.1", "libdl.so.2", "ld-linux-x86-64.so.2"}


def dynamic_symbols(path, defined):
    out = subprocess.run(["nm", "-D", "--defined-only" if defined else "--undefined-only", path],
                         capture_output=True, text=True, check=True).stdout
    return {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}


def needed(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return {line.split("[", 1)[1].split("]", 1)[0] for line in out.splitlines() if "(NEEDED)" in line}


def libpython_exports():
    """What the running interpreter exports: its libpython, or its executable
    where libpython is built in."""
    libdir, ldlib = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("LDLIBRARY") or ""
    shared = os.path.join(libdir, ldlib)
    return dynamic_symbols(shared if ldlib.endswith(".so") and os.path.exists(shared) else
                           os.path.realpath(sysconfig.get_config_var("BINDIR") + "/python%d.%d" % sys.version_info[:2]), defined=True)


def test_both_extensions_are_built():
    assert [os.path.basename(p).split(".")[0] for p in EXTENSIONS] == ["_codegen", "_eval"]


@pytest.mark.parametrize("path", EXTENSIONS, ids=os.path.basename)
def test_no_libpython_and_only_the_c_library_is_needed(path):
    libs = needed(path)
    assert not [lib for lib in libs if "python" in lib], libs
    assert libs <= ALLOWED_NEEDED, libs - ALLOWED_NEEDED


@pytest.mark.parametrize("path", EXTENSIONS, ids=os.path.basename)
def test_every_cpython_symbol_used_is_exported(path):
    used = {s for s in dynamic_symbols(path, defined=False) if s.startswith(("Py", "_Py"))}
    assert used, "no CPython symbol found: is nm reading the right file?"
    missing = sorted(used - libpython_exports())
    assert not missing, missing
