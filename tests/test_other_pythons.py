"""On a CPython pyjion does not support (these machines have pyenv's 3.12
beside the 3.11 and 3.13 it builds for), `import pyjion` raises ImportError
naming the versions it supports, and PYJION=1 prints one line and runs the
program without the JIT."""
import glob
import os
import shutil
import subprocess
import sys

import pytest

from jitcheck import REPO


SUPPORTED = ("3.11", "3.13")
THIS = "%d.%d" % sys.version_info[:2]


def find_pythons():
    """Interpreters by minor version: this one, python3.11-3.14 on PATH and
    pyenv's installs (the first found of each version)."""
    found = {THIS: sys.executable}
    candidates = [shutil.which("python3.%d" % minor) for minor in (11, 12, 13, 14)]
    candidates += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.1[1-9]*/bin/python3")))
    for exe in candidates:
        if not exe:
            continue
        proc = subprocess.run([exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                              capture_output=True, text=True)
        if proc.returncode == 0:
            found.setdefault(proc.stdout.strip(), exe)
    return found


PYTHONS = find_pythons()
# Interpreters of another minor version than 3.11 (pyenv's 3.12 and 3.13).
OTHERS = sorted((v, exe) for v, exe in PYTHONS.items() if v != "3.11")
# Those pyjion does not support.
UNSUPPORTED = [(v, exe) for v, exe in OTHERS if v not in SUPPORTED]


def run(exe, code, **env):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("PYJION")}
    full_env["PYTHONPATH"] = REPO   # the package's sources; no extension built for that version
    full_env.update(env)
    return subprocess.run([exe, "-c", code], capture_output=True, text=True, env=full_env, timeout=60)


def test_these_machines_have_another_cpython():
    assert UNSUPPORTED, "no python3.12 on PATH or in ~/.pyenv/versions"


@pytest.mark.parametrize("version, exe", UNSUPPORTED, ids=[v for v, _ in UNSUPPORTED])
def test_import_names_the_supported_versions(version, exe):
    proc = run(exe, "import pyjion")
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last == "ImportError: pyjion supports CPython 3.11 and 3.13; this is cpython %s" % version


@pytest.mark.parametrize("version, exe", UNSUPPORTED, ids=[v for v, _ in UNSUPPORTED])
def test_pyjion_env_prints_one_line_and_runs_the_program(version, exe):
    # what pyjion-startup.pth runs at start-up when PYJION is set
    proc = run(exe, "import _pyjion_startup\nprint(sum(range(10)))", PYJION="1")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "45\n"
    assert proc.stderr == ("pyjion: not enabled at start-up: pyjion supports CPython 3.11 and 3.13; this is cpython %s\n"
                           % version)
