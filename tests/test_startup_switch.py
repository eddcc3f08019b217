"""PYJION=1 in the environment enables pyjion at interpreter start-up (through
pyjion-startup.pth), for the program and for the processes it starts."""
from jitcheck import check_python, run_python

PROBE = """
import pyjion
print("enabled", pyjion.is_enabled())
def f(a, b):
    c = a * b + 1
    while c > 100:
        c //= 2
    return c
print("result", f(30, 40))
print("state", pyjion.info(f).state)
cfg = pyjion.config()
print("threshold", cfg["threshold"])
print("profile", cfg["profile"])
print("jit", cfg["jit"])
"""


def probe(env):
    out = check_python(PROBE, env=env)
    return dict(line.split(" ", 1) for line in out.splitlines())


def test_pyjion_env_enables_at_startup():
    got = probe({"PYJION": "1", "PYJION_THRESHOLD": "0"})
    assert got["enabled"] == "True"
    assert got["result"] == "75"
    assert got["state"] == "compiled"
    assert got["threshold"] == "0"
    assert got["profile"] == "False"


def test_pyjion_threshold_env_is_honoured():
    got = probe({"PYJION": "1", "PYJION_THRESHOLD": "5"})
    assert got["enabled"] == "True"
    assert got["threshold"] == "5"
    assert got["state"] == "interpreted"      # one call, threshold 5


def test_without_pyjion_env_nothing_is_enabled():
    got = probe({})
    assert got["enabled"] == "False"
    assert got["state"] == "interpreted"
    for off in ("0", ""):
        got = probe({"PYJION": off})
        assert got["enabled"] == "False", off


def test_pyjion_profile_env():
    got = probe({"PYJION": "1", "PYJION_THRESHOLD": "0", "PYJION_PROFILE": "1"})
    assert got["enabled"] == "True"
    assert got["profile"] == "True"
    assert got["state"] == "compiled"


def test_pyjion_jit_env_off_enables_without_compiling():
    # Threshold 0 would compile f at its first call: PYJION_JIT=0 keeps it interpreted.
    for off in ("0", "off", "no"):
        got = probe({"PYJION": "1", "PYJION_THRESHOLD": "0", "PYJION_JIT": off})
        assert got["enabled"] == "True", off
        assert got["jit"] == "False", off
        assert got["result"] == "75"
        assert got["state"] == "interpreted", off
    for on in ("1", ""):
        got = probe({"PYJION": "1", "PYJION_THRESHOLD": "0", "PYJION_JIT": on})
        assert got["jit"] == "True", on
        assert got["state"] == "compiled", on


def test_startup_does_not_print_anything():
    proc = run_python("print('hi')", env={"PYJION": "1"})
    assert proc.returncode == 0
    assert proc.stdout == "hi\n"
    assert proc.stderr == ""


def test_spawned_multiprocessing_child_is_enabled_too(tmp_path):
    # (spawn needs a real __main__ file to import in the child)
    script = tmp_path / "spawner.py"
    script.write_text("""
import multiprocessing as mp
import pyjion

def f(a, b):
    c = a + b
    return c * 2

def child(q):
    q.put((pyjion.is_enabled(), f(2, 3), pyjion.info(f).state))

if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=child, args=(q,))
    p.start()
    print("child", q.get(timeout=30))
    p.join(60)
    print("exitcode", p.exitcode)
    print("parent", pyjion.is_enabled())
""")
    out = check_python("import runpy, sys; runpy.run_path(sys.argv[1], run_name='__main__')",
                       args=[str(script)], env={"PYJION": "1", "PYJION_THRESHOLD": "0"},
                       timeout=120)
    lines = out.splitlines()
    assert lines[0] == "child (True, 10, 'compiled')"
    assert lines[1] == "exitcode 0"
    assert lines[2] == "parent True"


def test_forked_child_keeps_compiled_code_and_compiles_more():
    out = check_python("""
import os
import pyjion

def f(a, b):
    c = a * b
    return c + 1

pyjion.enable(threshold=0)
f(2, 3)
pid = os.fork()
if pid == 0:
    def g(a):
        x = a
        while x > 0:
            x = x - 1
        return x
    ok = (f(4, 5) == 21 and g(1000) == 0 and pyjion.info(g).compiled
          and pyjion.info(f).compiled and pyjion.is_enabled())
    os._exit(0 if ok else 3)
_, status = os.waitpid(pid, 0)
print("child", os.waitstatus_to_exitcode(status))
print("parent", f(1, 1), pyjion.info(f).run_count)
""")
    assert out.splitlines() == ["child 0", "parent 2 2"]


IMPORT_INTERPRETERS = """
try:
    import _interpreters as interpreters          # CPython 3.13
    # 3.13 makes isolated ones by default, refusing extensions that do not
    # support them at import; "legacy" is what 3.11's create() made
    CONFIG = ("legacy",)
except ImportError:
    import _xxsubinterpreters as interpreters      # CPython 3.11
    CONFIG = ()
"""
SUBINTERPRETER = IMPORT_INTERPRETERS + """import pyjion
interp = interpreters.create()
interpreters.run_string(interp, "import sys; print('sub', sum(range(10)), 'pyjion' in sys.modules)")
print("main", pyjion.is_enabled())
"""


def test_subinterpreters_start_silently_without_the_jit():
    # A subinterpreter runs the start-up .pth too; pyjion's extensions load
    # into one interpreter per process, so it goes on without them, silently.
    proc = run_python(SUBINTERPRETER, env={"PYJION": "1"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["sub 45 False", "main True"]
    assert proc.stderr == ""


IN_SUBINTERPRETER = """
import pyjion
try:
    pyjion.enable()
except RuntimeError as exc:
    print("refused:", exc)
print("installed", pyjion.is_enabled())
"""


def test_a_subinterpreter_cannot_install_the_hook():
    # The main interpreter never imported pyjion, so a subinterpreter can
    # import it; installing the hook there is refused with a clear error.
    out = check_python(IMPORT_INTERPRETERS +
                       "interpreters.run_string(interpreters.create(*CONFIG), %r)\n" % IN_SUBINTERPRETER)
    assert out.splitlines() == [
        "refused: pyjion runs in the main interpreter only, not in a subinterpreter",
        "installed False"]


def test_startup_leaves_what_it_does_not_need_unloaded():
    # Every PYJION=1 process pays for start-up: it does not ask
    # _xxsubinterpreters (3.13: _interpreters), make the CompilationResult enum or run the getitem
    # probe (each made or run when first needed).
    out = check_python("""
        import sys
        import pyjion
        from pyjion import _eval
        print(pyjion.is_enabled(), "_xxsubinterpreters" in sys.modules or "_interpreters" in sys.modules,
              "CompilationResult" in vars(pyjion), _eval._getitem_probe_result())
        print(pyjion.CompilationResult.Success == 1, "CompilationResult" in vars(pyjion))
    """, env={"PYJION": "1"})
    assert out.splitlines() == ["True False False None", "True True"]
