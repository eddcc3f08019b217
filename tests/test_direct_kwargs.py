"""Calls with keyword arguments, and calls of functions taking *args, **kwargs
or keyword-only parameters, bind their arguments directly into the callee's
frame (codegen/runtime/arg_binding.cpp, direct_call.cpp's try_call): the frame takes
the caller's references as stock 3.11's CALL does, so an argument the callee
drops dies at the same moment (__del__ order), and calls whose arguments do
not bind raise CPython's own TypeError with the same traceback."""
import os
import sys

import pytest

import pyjion
from jitcheck import PY313, REPO, assert_compiled, differential, fresh_namespace, jit_on, run_python

sys.path.insert(0, os.path.join(REPO, "tools"))
import refleak  # noqa: E402

# D(n) records when it dies; every callee drops its parameters, then logs.
CALLEES = """
import sys
LOG = []

class D:
    def __init__(self, n):
        self.n = n
    def __del__(self):
        LOG.append(("del", self.n))
    def __repr__(self):
        return "D(%r)" % self.n

def kw(x, y=2):
    x = y = None
    LOG.append("kw")

def kwonly(x, *, k, m=5):
    LOG.append(("kwonly", m if type(m) is int else "D"))
    x = k = m = None
    LOG.append("kwonly dropped")

def kwonly_nodefaults(*, a, b):
    a = None
    LOG.append("kwonly_nodefaults")
    b = None

def star(a, *rest):
    LOG.append(("star", len(rest)))
    a = rest = None
    LOG.append("star dropped")

def starstar(a, **kw):
    LOG.append(("starstar", sorted(kw)))
    a = kw = None
    LOG.append("starstar dropped")

def everything(a, b=1, /, c=2, *args, d, e=3, **kw):
    LOG.append(("everything", len(args), sorted(kw)))
    a = b = c = args = d = e = kw = None
    LOG.append("everything dropped")

def posonly(a, b, /, c=0):
    a = b = c = None
    LOG.append("posonly")

def posonly_kwargs(a, /, **kw):
    LOG.append(("posonly_kwargs", sorted(kw)))
    kw = None
    LOG.append("posonly_kwargs dropped")

class K:
    def m(self, x, *, k=0):
        x = k = None
        LOG.append("m")
    @staticmethod
    def s(x, y=0):
        x = y = None
        LOG.append("s")
    @classmethod
    def c(cls, x, **kw):
        x = kw = None
        LOG.append("c")
"""


def run(body):
    """A function f(n) that runs `body` (statements using the callees) n
    times and returns the log: warm rounds use the direct path."""
    indented = "\n".join("        " + line for line in body.strip().splitlines())
    return CALLEES + """
def f(n):
    LOG.clear()
    for i in range(n):
%s
        LOG.append("-")
    return list(LOG)
""" % indented


CALLS = {
    "keywords": """
kw(D(1), y=D(2))
kw(y=D(3), x=D(4))
kw(x=D(5))
""",
    "keyword-only": """
kwonly(D(1), k=D(2))
kwonly(D(3), m=D(4), k=D(5))
kwonly(x=D(6), k=7)
kwonly_nodefaults(b=D(8), a=D(9))
""",
    "*args": """
star(D(1))
star(D(2), D(3), D(4))
star(*[D(5), D(6)])
star(a=D(7))
""",
    "**kwargs": """
starstar(D(1))
starstar(D(2), b=D(3), c=D(4))
starstar(b=D(5), a=D(6))
posonly_kwargs(D(7), a=D(8))
""",
    "everything": """
everything(D(1), d=D(2))
everything(D(3), D(4), D(5), D(6), D(7), d=D(8), e=D(9), z=D(10))
everything(D(11), c=D(12), d=D(13), a=D(14))
""",
    "methods": """
K().m(D(1), k=D(2))
k = K()
k.m(x=D(3))
K.s(D(4), y=D(5))
k.s(y=D(6), x=D(7))
K.c(D(8), z=D(9))
k.c(x=D(10))
m = k.m
m(D(11), k=D(12))
""",
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_arguments_die_where_stock_drops_them(name):
    outcomes = differential(run(CALLS[name]), [(1,), (12,)], name="f", expect="return")
    assert "'del'" in repr(outcomes[1])


# (call, message) pairs: the generic path's TypeError, exactly as stock's.
ERRORS = {
    "positional-only by keyword": "posonly(D(1), b=D(2))",
    "missing positional": "kw(y=D(1))",
    "missing keyword-only": "kwonly(D(1))",
    "missing keyword-only, no defaults": "kwonly_nodefaults(a=D(1))",
    "too many positional": "kw(D(1), D(2), D(3))",
    "too many with keyword-only": "kwonly(D(1), D(2), k=D(3))",
    "unexpected keyword": "kw(D(1), z=D(2))",
    "multiple values": "kw(D(1), x=D(2))",
    "multiple values for a *args function": "star(D(1), a=D(2))",
    "method, unexpected keyword": "K().m(D(1), j=D(2))",
    "method, self by keyword": "K().m(D(1), self=D(2))",
    "static, missing": "K.s(y=D(1))",
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_arguments_that_do_not_bind_raise_as_on_stock(name):
    src = CALLEES + """
def f(n):
    LOG.clear()
    for i in range(n):
        %s
""" % ERRORS[name]
    differential(src, [(1,)], name="f", expect="raise")
    # caught in a warm loop: the same messages and release order
    src = CALLEES + """
def f(n):
    LOG.clear()
    for i in range(n):
        try:
            %s
        except TypeError as e:
            LOG.append(str(e))
    return list(LOG)
""" % ERRORS[name]
    differential(src, [(12,)], name="f", expect="return")


def test_generators_called_with_keywords():
    differential(CALLEES + """
def gen(x, *rest, k=0, **kw):
    LOG.append(("gen", len(rest), sorted(kw)))
    x = rest = kw = None
    yield k
    LOG.append("gen resumed")
    yield 2

def gen_cell(x, *, k):
    def inner():
        return x
    yield inner()
    x = k = None
    yield "dropped"

def f(n):
    LOG.clear()
    out = []
    for i in range(n):
        g = gen(D(1), D(2), k=D(3), z=D(4))
        LOG.append("made")
        out.append(repr(next(g)))
        out.append(list(gen(x=D(5))))
        out.append(list(gen_cell(k=D(6), x=D(7))))
        g = None
        try:
            gen(k=1)
        except TypeError as e:
            out.append(str(e))
    return out, list(LOG)
""", [(1,), (12,)], name="f", expect="return")


def test_recursion_limit_with_keyword_calls():
    differential("""
import sys
DEEPEST = [0]
def down(depth, *, step=1, **extra):
    DEEPEST[0] = max(DEEPEST[0], depth)
    return down(depth=depth + step, step=step, tag=1)
def star_down(*args, depth=0):
    DEEPEST[0] = max(DEEPEST[0], depth)
    return star_down(*args, depth=depth + 1)
def f():
    out = []
    for fn in (down, star_down) * 2:
        DEEPEST[0] = 0
        try:
            fn(depth=0)
        except RecursionError as e:
            out.append(str(e))
        out.append(DEEPEST[0] - sys.getrecursionlimit())   # how deep the calls got
    return out
""", [()], name="f", expect="return")


def test_deep_keyword_recursion_returns():
    differential("""
def depth(n, *, acc=0):
    if n == 0:
        return acc
    return depth(n=n - 1, acc=acc + 1)
def f(n):
    return depth(n=n)
""", [(50,), (900,)], name="f", expect="return")


def test_callees_are_compiled_and_called_directly():
    ns = fresh_namespace("""
LOG = []
class D:
    def __del__(self):
        LOG.append("del")
def callee(x, *a, k=0, **kw):
    x = None
    LOG.append("after")
def loop(n):
    for i in range(n):
        callee(D(), k=1, z=2)
        callee(D())
""", "direct-kw")
    with jit_on():
        ns["loop"](1)
        before = pyjion.info(ns["callee"]).run_count
        ns["loop"](10)
        after = pyjion.info(ns["callee"]).run_count
        assert_compiled(ns["callee"])
        assert_compiled(ns["loop"])
    assert after - before == 20
    assert ns["LOG"][-4:] == ["del", "after", "del", "after"]


def test_func_defaults_and_kwdefaults_changed_between_calls():
    differential(CALLEES + """
def f(n):
    out = []
    for i in range(n):
        out.append(kwonly.__kwdefaults__)
        kwonly.__kwdefaults__ = {"m": i} if i % 3 else None
        kw.__defaults__ = (i,) if i % 2 else None
        try:
            kw(x=i)
            out.append("kw ok")
        except TypeError as e:
            out.append(str(e))
        try:
            kwonly(i, k=1)
            out.append(LOG[-2])
        except TypeError as e:
            out.append(str(e))
    return out
""", [(12,)], name="f", expect="return")


def test_keyword_calls_do_not_leak():
    src = run(CALLS["everything"] + CALLS["methods"] + CALLS["**kwargs"] + ERRORS["multiple values"])
    src = src.replace("    for i in range(n):", "    for i in range(n):\n      try:").replace(
        '        LOG.append("-")', '      except TypeError:\n        LOG.append("-")')

    def body():
        ns = {"__name__": "kwleak"}
        exec(compile(src, "<kw-leak>", "exec"), ns)   # fresh code objects each round
        with jit_on():
            ns["f"](12)
        assert pyjion.info(ns["f"]).compiled
    refleak.check(body, warmup=3, runs=3, name="keyword calls")


@pytest.mark.xfail(PY313, reason="3.13 layer: class calls go through type_call, whose arguments live until __init__ returns; 3.13's CALL_ALLOC_AND_ENTER_INIT hands them to __init__'s frame (issue 26)", strict=True)
def test_constructor_arguments_live_until_init_returns():
    """type_call's argument tuple keeps the arguments while __init__ runs, so
    one that __init__ drops dies only after the call (try_construct)."""
    differential(CALLEES + """
class C:
    def __init__(self, x, y=0):
        x = y = None
        LOG.append("init")
class Bad:
    def __init__(self, x):
        x = None
        return 1
def f(n):
    LOG.clear()
    for i in range(n):
        C(D(1), D(2))
        C(D(3))
        C(D(4), y=D(5))
        try:
            Bad(D(6))
        except TypeError as e:
            LOG.append(str(e))
        try:
            C(D(7), D(8), D(9))
        except TypeError as e:
            LOG.append(str(e))
        LOG.append("-")
    return list(LOG)
""", [(1,), (12,)], name="f", expect="return")


def test_memory_errors_while_binding_release_everything():
    """*args's tuple, **kwargs's dict and its growth, and the generator made
    from the bound frame each fail in turn (_testcapi.set_nomemory): a
    MemoryError, with every argument reference released."""
    out = run_python("""
import sys, _testcapi, pyjion
class D:
    pass
def callee(a, *rest, k=0, **kw):
    return len(rest) + len(kw)
def gen(a, *rest, k=0, **kw):
    yield len(rest) + len(kw)
def caller(a, b, c):
    return callee(a, %(args)s, k=b, %(kws)s)
def gen_caller(a, b, c):
    return gen(a, %(args)s, k=b, %(kws)s)
a, b, c = D(), D(), D()
pyjion.enable(threshold=0)
for i in range(20):                      # warm: compiled, called directly
    caller(a, b, c)
    list(gen_caller(a, b, c))
base = [sys.getrefcount(x) for x in (a, b, c)]
for fn in (caller, gen_caller):
    outcomes = set()
    for start in range(80):
        _testcapi.set_nomemory(start, start + 1)
        try:
            r = fn(a, b, c)
            r = None
            outcomes.add("ok")
        except MemoryError:
            outcomes.add("MemoryError")
        finally:
            _testcapi.remove_mem_hooks()
        assert [sys.getrefcount(x) for x in (a, b, c)] == base, (fn.__name__, start)
    print(fn.__name__, sorted(outcomes))
pyjion.disable()
print(pyjion.info(callee).compiled, pyjion.info(gen).compiled)
""" % {"args": ", ".join(["b", "c"] * 12), "kws": ", ".join("z%d=c" % i for i in range(12))})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines == ["caller ['MemoryError', 'ok']", "gen_caller ['MemoryError', 'ok']", "True True"], out.stdout
