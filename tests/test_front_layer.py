"""The front layer (pyjion/codegen/front: decoding, jump targets, stack
depths, the exception table) builds from one tree for each supported CPython
and decodes that CPython's bytecode as its dis module does: built alone as a
probe module (tests/probes/front_decode.cpp) for the running CPython and for
the other supported one (pyenv's),
and run over a corpus of standard-library code there
(tests/probes/front_check.py)."""
import os
import subprocess

import pytest

from jitcheck import REPO
import test_other_pythons

PYTHONS = [(v, test_other_pythons.PYTHONS.get(v)) for v in ("3.11", "3.13")]
SOURCES = [os.path.join(REPO, "pyjion", "codegen", "front", name) for name in ("bytecode.cpp", "exception_table.cpp")]


def build(python, out):
    include, suffix = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['include']); "
                       "print(sysconfig.get_config_var('EXT_SUFFIX'))"],
        capture_output=True, text=True, check=True).stdout.split()
    target = os.path.join(out, "front_decode" + suffix)
    subprocess.run(["c++", "-std=c++17", "-O1", "-shared", "-fPIC", "-Wall", "-Werror", "-Wno-unused-function",
                    "-I" + include, "-I" + os.path.join(REPO, "pyjion"), "-I" + os.path.join(REPO, "pyjion", "codegen"),
                    *SOURCES, os.path.join(REPO, "tests", "probes", "front_decode.cpp"), "-o", target], check=True)


@pytest.mark.parametrize("version, python", PYTHONS, ids=[v for v, _ in PYTHONS])
def test_the_front_layer_decodes_as_dis_does(version, python, tmp_path):
    assert python, "no CPython %s found (python%s on PATH or pyenv's)" % (version, version)
    build(python, str(tmp_path))
    proc = subprocess.run([python, os.path.join(REPO, "tests", "probes", "front_check.py")], cwd=tmp_path,
                          env=dict(os.environ, PYTHONPATH=str(tmp_path)), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith(version + ": ") and "as dis has them" in proc.stdout
