"""Reference leaks of compiled code, checked the way regrtest's -R does it but
on a release build (tools/refleak.py: a tracked reference-count sum, allocated
blocks and file descriptors over repeated rounds).

First the check itself must be able to fail: deliberate leaks (a C-level
Py_IncRef per round, a growing cache, an unclosed descriptor, and a leak made
inside JIT-compiled code) are detected. Then a selection of programs covering
the opcode families is compiled afresh and run every round with the JIT
forced, and must not leak. `make refleak` runs the whole test suite this way."""
import ctypes
import os
import sys

import pytest

import pyjion
from jitcheck import REPO, jit_on, run_python

sys.path.insert(0, os.path.join(REPO, "tools"))
import refleak  # noqa: E402

incref = ctypes.pythonapi.Py_IncRef
incref.argtypes = [ctypes.py_object]
incref.restype = None
decref = ctypes.pythonapi.Py_DecRef
decref.argtypes = [ctypes.py_object]
decref.restype = None


class Leaker:
    """incref(obj) per call, undone by undo() (the detectors leak on purpose,
    but must not leave the process with extra references)."""

    def __init__(self, obj):
        self.obj, self.count = obj, 0

    def __call__(self):
        incref(self.obj)
        self.count += 1

    def undo(self):
        for _ in range(self.count):
            decref(self.obj)
        self.count = 0


SINGLETON = object()

# Leaking on purpose: never repeated by the refleak plugin (`make refleak`).
detector = pytest.mark.no_refleak


# ---- the check can fail -------------------------------------------------------------

def test_clean_body_passes():
    report = refleak.check(lambda: [object() for _ in range(10)], name="clean")
    assert not report.leaked


def test_a_leak_is_the_floor_of_two_hunts():
    # noise adds to a round of one hunt; the leak is in every round of both
    first = refleak.LeakReport("x", [1, 1, 1], [0, 3, 0], [0, 0, 1])
    confirmed = first.confirmed_by(refleak.LeakReport("x", [2, 1, 1], [0, 1, 0], [0, 0, 1]))
    assert confirmed.refs == [1, 1, 1] and confirmed.leaked
    assert confirmed.blocks == [0, 1, 0] and confirmed.fds == [0, 0, 1]
    noise = first.confirmed_by(refleak.LeakReport("x", [1, 0, 1], [0, 0, 0], [0, 0, 0]))
    assert noise.refs == [1, 0, 1] and not noise.leaked
    assert first.confirmed_by(refleak.LeakReport("x", [-1, 1, 1], [0, 0, 0], [0, 0, -1])).refs == [0, 1, 1]


@detector
def test_detects_a_leaked_reference_to_none():
    # None is immortal from 3.12 on (PEP 683): Py_IncRef leaves its count
    # alone, so nothing can leak it there; a singleton of the test's own
    # takes its place.
    leak = Leaker(None if sys.version_info < (3, 12) else SINGLETON)
    try:
        with pytest.raises(refleak.LeakError, match=r"leaked \[1, 1, 1\] references"):
            refleak.check(leak, name="none")
    finally:
        leak.undo()


@detector
def test_detects_a_leaked_reference_to_an_argument_and_names_it():
    class Argument:
        def __repr__(self):
            return "<the argument>"
    arg = Argument()
    leak = Leaker(arg)
    try:
        with pytest.raises(refleak.LeakError, match=r"references") as info:
            refleak.check(leak, name="arg")
    finally:
        leak.undo()
    assert "<the argument> (+3)" in str(info.value)


@detector
def test_detects_a_growing_cache():
    cache = []
    with pytest.raises(refleak.LeakError, match=r"memory blocks"):
        refleak.check(lambda: cache.append(object()), name="cache")


@detector
def test_detects_a_leaked_file_descriptor():
    fds = []
    try:
        with pytest.raises(refleak.LeakError, match=r"file descriptors"):
            refleak.check(lambda: fds.append(os.open(os.devnull, os.O_RDONLY)), name="fd")
    finally:
        for fd in fds:
            os.close(fd)


@detector
def test_detects_a_leak_inside_compiled_code():
    token = object()
    leak = Leaker(token)
    ns = {"leak": leak}
    exec("def f(x):\n    leak()\n    return x\n", ns)
    f = ns["f"]

    def body():
        # Three references a round: a round in which something else drops
        # one (a finaliser, a cache) still grows.
        with jit_on():
            for _ in range(3):
                f(token)
    try:
        with pytest.raises(refleak.LeakError):
            refleak.check(body, name="compiled")
    finally:
        leak.undo()
    assert pyjion.info(f).compiled


# ---- compiled code does not leak ------------------------------------------------------

def test_info_of_a_compiled_function_does_not_leak():
    """pyjion.info() leaked a reference to Cython's function type per call
    (the hook's record_info made a lambda to find the code type)."""
    ns = {}
    exec("def f(x):\n    return x + 1\n", ns)
    f = ns["f"]
    with jit_on():
        f(1)
    assert pyjion.info(f).compiled

    def body():
        for _ in range(20):
            pyjion.info(f)
    report = refleak.check(body, name="info")
    assert not report.leaked
    cyfunction = type(pyjion._eval.record_info)
    before = sys.getrefcount(cyfunction)
    for _ in range(100):
        pyjion.info(f)
    assert sys.getrefcount(cyfunction) - before < 10


PROGRAMS = {
    "arith": ("def f(a, b):\n    x = a + b * 2 - a // 3 % 7\n    y = a / 2.5 + b ** 2\n"
              "    return x, y, -a, ~b, not a, a < b, a == b, a is b\n",
              [(3, 4), (2.5, 1.5), (10 ** 30, 7), ("s", 0)]),
    "containers": ("def f(a, b):\n    l = [a, b, *range(3)]\n    t = (a, *l)\n    s = {a, b}\n"
                   "    d = {a: b, **{'k': 1}}\n    l[0] = d[a]\n    del l[1]\n    return l[1:3], t[-1], a in s, d.get('k')\n",
                   [(1, 2), ("x", "y"), ([], 1)]),
    "calls": ("def f(g, a):\n    r = g(a), g(*[a]), g(a, **{}) if g is not max else 0\n"
              "    m = [a].count(a)\n    return r, m, sorted([a, a], key=lambda v: v, reverse=True)\n",
              [(abs, -3), (str, 4), (len, 5), (max, 1)]),
    "methods_attrs": ("class C:\n    k = 1\n    def m(self, x):\n        return self.k + x\n"
                      "def f(a):\n    c = C()\n    c.v = a\n    n = c.v + c.m(a)\n    del c.v\n"
                      "    return n, getattr(c, 'v', None), c.missing\n",
                      [(1,), (2.0,)]),
    "globals_builtins": ("G = 5\ndef f(a):\n    global H\n    H = a\n    r = len(str(G + H))\n    del H\n"
                         "    return r, undefined_name\n", [(1,), (1000,)]),
    "exceptions": ("def f(a):\n    try:\n        try:\n            1 / a\n        except ZeroDivisionError as e:\n"
                   "            raise ValueError('v') from e\n        finally:\n            x = a\n"
                   "    except ValueError as e:\n        return repr(e.__cause__)\n    n = 0\n    try:\n        raise KeyError(a)\n"
                   "    except* KeyError as eg:\n        n = len(eg.exceptions)\n    return n\n",
                   [(0,), (1,)]),
    "reraise_uncaught": ("def f(a):\n    try:\n        return [1][a]\n    except IndexError:\n        raise\n",
                         [(0,), (3,)]),
    "with": ("import contextlib\nclass CM:\n    def __enter__(self):\n        return self\n"
             "    def __exit__(self, *e):\n        return e[0] is KeyError\n"
             "def f(a):\n    with CM() as c, contextlib.suppress(TypeError):\n        if a == 1:\n            raise KeyError\n"
             "        if a == 2:\n            raise TypeError\n        if a == 3:\n            raise OSError\n    return a\n",
             [(0,), (1,), (2,), (3,)]),
    "generators": ("def g(n):\n    for i in range(n):\n        x = yield i\n        if x:\n            return x\n"
                   "def f(n):\n    gen = g(n)\n    out = list(gen)\n    gen2 = g(5)\n    next(gen2)\n"
                   "    try:\n        gen2.send(7)\n    except StopIteration as e:\n        out.append(e.value)\n"
                   "    gen3 = g(5)\n    next(gen3)\n    gen3.close()\n    return out, list(x for x in g(n) if x), [y for y in range(n)]\n",
                   [(3,), (0,)]),
    "yield_from_await": ("import asyncio\nasync def c(x):\n    await asyncio.sleep(0)\n    return x * 2\n"
                         "async def main(n):\n    return [await c(i) for i in range(n)]\n"
                         "def inner():\n    yield 1\n    return 2\n"
                         "def outer():\n    r = yield from inner()\n    yield r\n"
                         "def f(n):\n    return list(outer()), asyncio.run(main(n))\n", [(3,)]),
    "closures": ("def f(a):\n    b = a\n    def inner(c):\n        nonlocal b\n        b += c\n        return b\n"
                 "    inner(1)\n    del_me = 2\n    def k():\n        return del_me\n    del del_me\n    try:\n        k()\n"
                 "    except NameError as e:\n        return b, str(e)\n", [(1,), (2.5,)]),
    "unpack_fstring": ("def f(a):\n    x, *y, z = a\n    (p, q), r = (x, z), y\n    return f'{x!r:>5}{p}{q:{len(a)}}{r}', x\n",
                       [([1, 2, 3, 4],), ("abc",), ([1],)]),
    "match": ("def f(v):\n    match v:\n        case [1, *rest]:\n            return rest\n        case {'k': x, **kw}:\n"
              "            return x, kw\n        case int(n) if n > 3:\n            return n\n"
              "        case str() | bytes():\n            return 's'\n        case _:\n            return None\n",
              [([1, 2, 3],), ({"k": 1, "z": 2},), (5,), ("x",), (2,)]),
    "import": ("def f(a):\n    import os.path\n    from collections import OrderedDict as OD\n"
               "    from json import nosuchthing\n", [(1,)]),
    "loops_iter_errors": ("class Bad:\n    def __iter__(self):\n        return self\n    def __next__(self):\n"
                          "        raise RuntimeError('x')\n"
                          "def f(a):\n    total = 0\n    for i in range(a):\n        if i % 3 == 0:\n            continue\n"
                          "        total += i\n        if total > 50:\n            break\n    else:\n        total = -total\n"
                          "    while a > 0:\n        a -= 1\n    for x in Bad():\n        pass\n", [(10,), (100,)]),
    "class_body": ("def f(a):\n    class K:\n        x = a\n        def m(self):\n            return __class__\n"
                   "    assert K().m() is K, 'msg'\n    assert a, 'no'\n    return K.x\n", [(1,), (0,)]),
    "locals_exec": ("def f(a):\n    ns = {}\n    exec('b = a + 1', {'a': a}, ns)\n    return eval('b * 2', ns), locals()\n",
                    [(1,)]),
}


def run_program(src, calls):
    ns = {"__name__": "leakprog"}
    exec(compile(src, "<refleak-%s>" % len(src), "exec"), ns)
    f = ns["f"]
    out = []
    with jit_on():
        for args in calls:
            try:
                out.append(("ok", f(*args)))
            except Exception as exc:      # every kind of outcome is exercised
                out.append(("raise", type(exc)))
    return f, out


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_compiled_program_does_not_leak(name):
    src, calls = PROGRAMS[name]
    f, _ = run_program(src, calls)
    assert pyjion.info(f).compiled, pyjion.info(f)
    # Each round compiles fresh code objects (compile-time leaks count too)
    # and runs them: leaks per compile or per call both grow every round.
    refleak.check(lambda: run_program(src, calls), warmup=3, runs=3, name=name)


PLUGIN_TESTS = """
import ctypes
import sys
incref = ctypes.pythonapi.Py_IncRef
incref.argtypes = [ctypes.py_object]
incref.restype = None
log = []
# (None is immortal from 3.12 on: leaking a reference to it changes no count)
LEAKED = None if sys.version_info < (3, 12) else object()


def test_clean(monkeypatch):
    # monkeypatch records every setattr: fixtures are set up afresh each round
    monkeypatch.setattr("os.sep", "/")
    assert [x * 2 for x in range(5)][-1] == 8

def test_leaky():
    incref(LEAKED)

def test_cache():
    log.append(object())
"""


@detector
def test_pytest_plugin_reports_only_the_leaking_tests(tmp_path):
    """`python tools/refleak.py -R 3:3 <pytest args>` (what `make refleak` runs
    over the whole suite) fails the leaking tests, with the deltas."""
    (tmp_path / "test_sample.py").write_text(PLUGIN_TESTS)
    proc = run_python("""
        import sys
        sys.path.insert(0, "tools")
        import refleak
        sys.exit(refleak.main(["-R", "3:3", sys.argv[1], "-q", "-p", "no:cacheprovider", "-p", "no:pyjion"]))
    """, args=[str(tmp_path / "test_sample.py")], timeout=120)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "2 failed, 1 passed" in out, out
    assert "test_leaky leaked [1, 1, 1] references" in out, out
    assert "test_cache leaked [1, 1, 1] memory blocks" in out, out
