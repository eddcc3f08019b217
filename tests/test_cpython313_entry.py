"""What pyjion's CPython 3.13 layer will stand on (docs/cpython313.md),
checked on the 3.13 these machines have: a function given its own vectorcall
with PyFunction_SetVectorcall is called through it by interpreted code, even
at a call site the interpreter had already specialised, and by C callers;
and a call run with the exported _PyEvalFramePushAndInit and
_PyEval_EvalFrameDefault alone (no _PyFunction_Vectorcall, which 3.13 does
not export) binds defaults and keywords, keeps reference counts and shows
its frame in tracebacks. The probe is tests/probes/vectorcall_entry.c."""
import os
import subprocess
import textwrap

import pytest

from jitcheck import REPO
from test_other_pythons import OTHERS

PY313 = dict(OTHERS).get("3.13")
PROBE = os.path.join(REPO, "tests", "probes", "vectorcall_entry.c")

RUN = textwrap.dedent("""
    import sys, traceback, vectorcall_entry as probe

    def add(a, b, c=0, *, d=0):
        return a + b + c + d

    def caller(n):
        t = 0
        for i in range(n):
            t = add(t, i)        # CALL_PY_EXACT_ARGS once warm
        return t

    caller(5000)                 # the site specialises on add
    probe.route(add)
    print("interpreted", caller(10000), probe.count())
    print("from C", sum(map(add, range(10), range(10))), probe.count())
    print("keywords", add(1, 2, 3, d=4), probe.count())

    o = object()
    before = sys.getrefcount(o)
    def ident(x, y=1):
        return x
    probe.route(ident)
    for _ in range(1000):
        ident(o)
        ident(o, y=2)
    print("refs", sys.getrefcount(o) - before)

    def boom(x):
        return 1 / x
    probe.route(boom)
    try:
        boom(0)
    except ZeroDivisionError:
        print("traceback", [f.name for f in traceback.extract_tb(sys.exc_info()[2])])
""")


@pytest.fixture(scope="module")
def probe_dir(tmp_path_factory):
    assert PY313, "no CPython 3.13 found (python3.13 on PATH or pyenv's)"
    paths = subprocess.run([PY313, "-c", "import sysconfig; print(sysconfig.get_paths()['include']); "
                                         "print(sysconfig.get_config_var('EXT_SUFFIX'))"],
                           capture_output=True, text=True, check=True).stdout.split()
    out = tmp_path_factory.mktemp("probe313")
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-I" + paths[0], PROBE,
                    "-o", str(out / ("vectorcall_entry" + paths[1]))], check=True)
    return out


def test_a_functions_own_vectorcall_takes_every_call(probe_dir):
    proc = subprocess.run([PY313, "-c", RUN], capture_output=True, text=True, cwd=probe_dir, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "interpreted 49995000 10000",
        "from C 90 10010",
        "keywords 10 10011",
        "refs 0",
        "traceback ['<module>', 'boom']",
    ]
