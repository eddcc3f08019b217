"""Builds pyjion's two extensions.

pyjion._eval     Cython: the PEP 523 hook, per-code records, the profiler clock.
pyjion._codegen  pybind11 over pyjion/codegen/ (front, baseline, runtime, machine, cpython): bytecode -> x86-64 with AsmJit.

AsmJit comes from Debian's source package, built once with -fPIC by
tools/build_asmjit.sh into build/asmjit (ASMJIT_ROOT overrides). Neither
extension links libpython: CPython's own extension modules do not, a
manylinux wheel may not, and an interpreter with libpython built into its
executable (Debian's python3.11) would load a second copy. Their CPython
symbols are bound at import, from whichever 3.11 loads them;
tests/test_extension_linkage.py checks that each one is exported.
"""
import glob
import os
import re
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))
PTH_NAME = "pyjion-startup.pth"


def fail(msg):
    sys.exit("pyjion build: " + msg)


def asmjit_root():
    root = os.environ.get("ASMJIT_ROOT") or os.path.join(ROOT, "build", "asmjit")
    if not os.path.exists(os.path.join(root, "lib", "libasmjit.a")):
        subprocess.check_call([os.path.join(ROOT, "tools", "build_asmjit.sh")])
    return root


# The CPython versions with a layer (pyjion/codegen/pyNNN, pyjion/cpythonNNN.h).
LAYERS = ((3, 11), (3, 13))
VERSION_LAYER = re.compile(r"py3\d+$")


def codegen_files(pattern):
    """pyjion/codegen's files matching `pattern`, its layers' folders included;
    of the version layers (pyjion/codegen/py311, py313, ...) only the running
    CPython's."""
    own = "py%d%d" % sys.version_info[:2]
    folders = [d for d in glob.glob("pyjion/codegen/*/")
               if not VERSION_LAYER.match(os.path.basename(d.rstrip("/"))) or d.rstrip("/").endswith(own)]
    return sorted(glob.glob("pyjion/codegen/" + pattern) + [f for d in folders for f in glob.glob(d + pattern)])


def extensions():
    try:
        import pybind11
        from Cython.Build import cythonize
    except ImportError as exc:
        fail("missing build dependency %s; run 'make setup' (or pip install Cython pybind11)" % exc.name)
    if sys.version_info[:2] not in LAYERS:
        fail("pyjion has layers for CPython %s; this is %d.%d"
             % (" and ".join("%d.%d" % v for v in LAYERS), *sys.version_info[:2]))
    asmjit = asmjit_root()
    debug = os.environ.get("PYJION_DEBUG_BUILD") == "1"
    opt = ["-O0", "-g"] if debug else ["-O2"]
    eval_ext = Extension(
        "pyjion._eval",
        ["pyjion/_eval.pyx"],
        include_dirs=["pyjion"],
        depends=glob.glob("pyjion/*.h"),
        extra_compile_args=opt + ["-Wno-unused-function"],
    )
    codegen_ext = Extension(
        "pyjion._codegen",
        ["pyjion/_codegen.cpp"] + codegen_files("*.cpp") + codegen_files("*.c"),
        # Sources name each other by layer: "front/bytecode.h", "runtime/runtime.h".
        include_dirs=["pyjion", "pyjion/codegen", pybind11.get_include(), os.path.join(asmjit, "include")],
        depends=codegen_files("*.h") + codegen_files("*.def") + glob.glob("pyjion/*.h"),
        # pybind11's default (internals version 4 before Python 3.12) keeps its
        # internals capsule in the builtins dict, where Python code sees it (a
        # deepcopy of an exec() namespace then meets an unpicklable PyCapsule);
        # version 5 keeps it in the interpreter's state dict instead.
        # libstdc++ is linked in statically: python itself does not load the
        # shared one, and loading it (its relocations) was most of the
        # module's import time (1.24 -> 0.43 ms, paid by every process with
        # PYJION=1). Our pybind11 internals are then kept apart from other
        # pybind11 modules' (their own INTERNALS_KIND), so no C++ object
        # made by one copy of libstdc++ is used through the other.
        # --exclude-libs keeps the static archives' symbols (libstdc++'s,
        # AsmJit's) local: resolved at link time, not looked up at every
        # import (1.57M -> 1.12M instructions).
        define_macros=[("ASMJIT_STATIC", "1"), ("PYBIND11_INTERNALS_VERSION", "5"),
                       ("PYBIND11_INTERNALS_KIND", '"_pyjion"')] + ([("PYJION_DEBUG", "1")] if debug else []),
        extra_compile_args=opt + ["-std=c++17", "-fvisibility=hidden", "-Wall", "-Wno-unused-parameter",
                                  "-Wno-missing-field-initializers"],
        extra_objects=[os.path.join(asmjit, "lib", "libasmjit.a")],
        extra_link_args=["-lrt", "-lpthread", "-static-libstdc++", "-static-libgcc", "-Wl,--exclude-libs,ALL"],
        language="c++",
    )
    return cythonize([eval_ext], language_level=3, compiler_directives={"boundscheck": False,
                                                                        "wraparound": False}) + [codegen_ext]


class build_py_with_pth(build_py):
    """Ships pyjion-startup.pth at the top of site-packages: PYJION=1 then enables
    the JIT at interpreter start-up (also in subprocesses and workers)."""

    def run(self):
        super().run()
        self.copy_file(os.path.join(ROOT, "pyjion", PTH_NAME), os.path.join(self.build_lib, PTH_NAME))

    def get_outputs(self, include_bytecode=1):
        return super().get_outputs(include_bytecode) + [os.path.join(self.build_lib, PTH_NAME)]


setup(ext_modules=extensions(), cmdclass={"build_py": build_py_with_pth})
