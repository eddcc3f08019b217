"""The wheel `make wheel` writes for the running CPython
(dist/pyjion-*-cp311-*-manylinux_*.whl; `make wheel PYVER=3.13`: cp313),
installed as a user would: with no compiler on PATH, with pip into a fresh
venv of Debian's own python3.11 (libpython built into its executable; by a
non-root user; on 3.13 where Debian has one) and of the interpreter this repo
builds with (a shared libpython; by this user where it lives under a home
others cannot enter),
then `PYJION=1 python prog.py`, `python -m pyjion prog.py` and
`python -m pyjion --profile prog.py` run with the JIT."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from jitcheck import REPO

NOBODY = 65534
SETPRIV = shutil.which("setpriv") or "/usr/bin/setpriv"   # found before PATH is narrowed
PROGRAM = """
import sys

def scale(n, x):
    t = 0.0
    for i in range(n):
        t += i * x
    return t

total = 0.0
for _ in range(3000):
    total += scale(50, 0.5)
print("total", total)
if "pyjion" in sys.modules:
    import time
    import pyjion
    # Where warm-up is by samples (3.13's default), a program this short may
    # end before a tick lands in scale: go on calling it (bounded) until one has.
    deadline = time.monotonic() + 20
    while not pyjion.info(scale).compiled and time.monotonic() < deadline:
        scale(50, 0.5)
    print("jit", pyjion.is_enabled(), pyjion.info(scale).compiled)
"""


TAG = "cp%d%d" % sys.version_info[:2]


def wheels():
    return sorted(glob.glob(os.path.join(REPO, "dist", "pyjion-*-%s-%s-manylinux_*_x86_64.whl" % (TAG, TAG))))


def interpreters():
    """Debian's python3.11 (3.13) and the one the venv was made from, where they differ."""
    found = []
    for exe in ("/usr/bin/python%d.%d" % sys.version_info[:2], getattr(sys, "_base_executable", sys.executable)):
        real = os.path.realpath(exe)
        if os.path.exists(real) and real not in [os.path.realpath(e) for e in found]:
            found.append(exe)
    return found


def test_make_wheel_wrote_one_manylinux_wheel():
    assert len(wheels()) == 1, "run `make wheel PYVER=%d.%d` first: %r" % (*sys.version_info[:2], wheels())


@pytest.fixture
def sandbox():
    """A folder the unprivileged user owns, removed after."""
    path = tempfile.mkdtemp(prefix="pyjion-wheel-")
    os.chown(path, NOBODY, NOBODY)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def others_can_run(path):
    """Whether a user other than the owner can reach and run `path` (pyenv's
    installs under /root cannot be: those run as this user)."""
    path = os.path.realpath(path)
    parts = path.split(os.sep)
    for i in range(2, len(parts)):
        if not os.stat(os.sep.join(parts[:i])).st_mode & 0o001:
            return False
    return bool(os.stat(path).st_mode & 0o001)


def as_user(args, env, cwd, unprivileged):
    """args run with only `env` (PATH included); as the unprivileged user
    where asked and this process is root."""
    if unprivileged and os.getuid() == 0:
        args = [SETPRIV, "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups", "--"] + args
    return subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("python", interpreters(), ids=lambda p: os.path.realpath(p))
def test_the_wheel_installs_and_runs_without_a_compiler(python, sandbox):
    wheel = wheels()[-1]
    nobody = others_can_run(python)

    def as_nobody(args, env, cwd):
        return as_user(args, env, cwd, nobody)

    venv = os.path.join(sandbox, "venv")
    bindir = os.path.join(venv, "bin")
    # No compiler anywhere on PATH: the venv's bin folder alone.
    env = {"HOME": sandbox, "PATH": bindir, "PIP_CONFIG_FILE": os.devnull, "PIP_NO_CACHE_DIR": "1",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "LANG": "C.UTF-8"}
    made = as_nobody([os.path.realpath(python), "-m", "venv", venv], env, sandbox)
    assert made.returncode == 0, made.stderr
    for tool in ("cc", "gcc", "g++", "c++", "clang"):
        assert shutil.which(tool, path=env["PATH"]) is None
    shutil.copy(wheel, sandbox)
    installed = as_nobody([os.path.join(bindir, "python"), "-m", "pip", "install", "--no-index",
                           os.path.join(sandbox, os.path.basename(wheel))], env, sandbox)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    prog = os.path.join(sandbox, "prog.py")
    with open(prog, "w") as f:
        f.write(PROGRAM)
    os.chmod(prog, 0o644)
    py = os.path.join(bindir, "python")

    stock = as_nobody([py, prog], env, sandbox)
    assert stock.returncode == 0, stock.stderr
    assert stock.stdout.startswith("total ") and "jit" not in stock.stdout

    for args, extra in (([py, prog], {"PYJION": "1"}), ([py, "-m", "pyjion", prog], {})):
        run = as_nobody(args, dict(env, **extra), sandbox)
        assert run.returncode == 0, run.stderr
        assert run.stdout == stock.stdout + "jit True True\n", (args, run.stdout, run.stderr)
        assert run.stderr == ""

    profiled = as_nobody([py, "-m", "pyjion", "--profile", prog], env, sandbox)
    assert profiled.returncode == 0, profiled.stderr
    assert profiled.stdout.startswith(stock.stdout.splitlines()[0])
    rows = [line for line in (profiled.stdout + profiled.stderr).splitlines() if "prog.py" in line and "(scale)" in line]
    assert rows and rows[0].split()[0] == "3000", profiled.stdout + profiled.stderr
