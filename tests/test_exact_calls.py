"""Calls from machine code that bind nothing (a Python function given exactly
its positional parameters: the callee's frame pushed by the call helper and
run by its machine code or by the interpreter) and LOAD_SUPER_ATTR's lookup
without a super object (the interpreter's LOAD_SUPER_ATTR_ATTR/_METHOD).
Every case that must leave those paths (defaults, keywords, generators, a
replaced __code__, a shadowed `super`, a self whose type overrides attribute
lookup) must come out as on stock CPython, with the hook
installed (differential) and without it (3.13's warm-up by samples)."""
import json

import pytest

from jitcheck import PY313, SAMPLING_PRELUDE, check_python, differential, run_python

CALLEES = """
def exact(a, b):
    return a - b

def defaults(a, b=10):
    return a + b

def gen(n):
    yield from range(n)

def star(*args):
    return len(args)

class Box:
    def __init__(self, v):
        self.v = v
    def get(self, k):
        return self.v * k

def replaced(a, b):
    return "old"

def several(a, b=1, c=(2,), d="three"):
    return a, b, c, d

def shared(x, into=[]):
    into.append(x)
    return len(into)

def kwonly(a, *, k=5):
    return a * k

def new_body(a, b):
    return "new"
"""


def test_calls_that_bind_nothing_and_those_that_must_bind():
    differential(CALLEES + """
def f(n):
    out = [exact(n, 3), defaults(n), defaults(n, 1), list(gen(n)), star(n, n),
           exact(b=1, a=n), Box(n).get(2)]
    m = Box(n).get
    out.append(m(3))
    out += [several(n), several(n, 2), several(n, 2, 3), several(n, 2, 3, 4), shared(n), shared(n),
            kwonly(n), kwonly(n, k=2)]
    several.__defaults__ = ("B", "C", "D")
    out.append(several(n))
    several.__defaults__ = ("D",)
    out.append(several(n, 1, 2))
    try:
        several(n)
    except TypeError as e:
        out.append(str(e))
    several.__defaults__ = (1, (2,), "three")
    try:
        exact(n)
    except TypeError as e:
        out.append(str(e))
    try:
        exact(n, 1, 2)
    except TypeError as e:
        out.append(str(e))
    replaced.__code__ = new_body.__code__
    out.append(replaced(1, 2))
    return out
""", [(0,), (5,), (7,)], name="f", expect="return")


def test_builtin_classes_called_directly():
    # Classes whose constructor vectorcall is called as CALL_BUILTIN_CLASS
    # calls it, beside classes that must go through type.__call__ (a
    # metaclass's __call__, Python subclasses) and wrong arguments.
    differential("""
class Meta(type):
    def __call__(cls, *args):
        return ("Meta.__call__", cls.__name__, args)

class Made(metaclass=Meta):
    pass

class MyList(list):
    pass

class MyError(ValueError):
    pass

def f(n):
    out = [int(n), float(n), str(n), list(range(n)), tuple([n]), dict(), set([n]), frozenset(),
           bytes(n), range(n), slice(n), bool(n), type(n), Made(n), MyList([n]), repr(ValueError(n)),
           repr(MyError(n)), repr(KeyError(n, n))]
    for bad in (lambda: int("x%d" % n), lambda: list(n), lambda: range()):
        try:
            out.append(bad())
        except (TypeError, ValueError) as e:
            out.append("%s: %s" % (type(e).__name__, e))
    try:
        raise ValueError(n)
    except ValueError as e:
        out.append(e.args)
    return out
""", [(0,), (3,)], name="f", expect="return")


SUPER = """
class Base:
    tag = "base"
    def m(self, x):
        return ("Base.m", type(self).__name__, x)
    @classmethod
    def c(cls):
        return ("Base.c", cls.__name__)
    @staticmethod
    def s(x):
        return ("Base.s", x)
    @property
    def p(self):
        return ("Base.p", type(self).__name__)

class Child(Base):
    def m(self, x):
        return ("Child", super().m(x))
    def attrs(self):
        return super().tag, super().c(), super().s(1), super().p, super(Child, self).m(2)
    def missing(self):
        return super().nothing

class Odd(Base):
    # attribute lookup of its own: a method found must come back bound
    def __getattribute__(self, name):
        return object.__getattribute__(self, name)
    def m(self, x):
        return ("Odd", super().m(x), super().m)

class Shadow(Base):
    def m(self, x):
        super = lambda *a: Base
        return ("Shadow", super().tag)

def two_arg_wrong(x):
    return super(Child, x).m(1)
"""


def test_super_lookups():
    differential(SUPER + """
def f(k):
    out = []
    for obj in (Child(), Odd(), Shadow()):
        out.append(obj.m(k))
    out.append(Child().attrs())
    for bad in (lambda: Child().missing(), lambda: two_arg_wrong(k), lambda: super(Child, Base()).m(1)):
        try:
            out.append(bad())
        except (AttributeError, TypeError) as e:
            out.append("%s: %s" % (type(e).__name__, e))
    return out
""", [(1,), (2,)], name="f", expect="return")


HOOKLESS = SAMPLING_PRELUDE + CALLEES + SUPER + r'''
def leaf(a, b):
    if SAMPLE:
        _sample_now()
    return a * 2 + b

def caller(n):
    if SAMPLE:
        _sample_now()
    t = 0
    for i in range(n):
        t = leaf(i, t) % 1000
        t += exact(t, 1) + defaults(i) + Box(i).get(1) + sum(gen(2))
    return t, Child().m(n), Child().attrs(), Odd().m(n)[:2]

for f, args in ((leaf, (1, 2)), (caller, (3,))):
    for _ in range(3):
        f(*args)
SAMPLE = True
leaf(1, 2)
caller(1)
SAMPLE = False
print(caller(50))
print(two_arg_wrong.__name__, caller(7))
if JIT:
    print(json.dumps({"leaf": pyjion.info(leaf).compiled, "caller": pyjion.info(caller).compiled}), file=sys.stderr)
'''


@pytest.mark.skipif(not PY313, reason="warm-up by samples, without the hook, is CPython 3.12+'s")
def test_calls_between_compiled_functions_without_the_hook():
    stock = check_python(HOOKLESS)
    proc = run_python(HOOKLESS, env={"PYJION": "1"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == stock
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == {"leaf": True, "caller": True}
