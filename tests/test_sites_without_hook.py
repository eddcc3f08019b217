"""Site forms CPython 3.13's interpreter specialises only while no PEP 523
function is installed (LOAD_ATTR_PROPERTY, CALL_ALLOC_AND_ENTER_INIT): with
warm-up by samples (3.13's default, no hook) machine code follows them. Each
program warms its sites in the interpreter, compiles the function there and
then (`_sample_now()` inside it: one hot sample, deterministic), shows the
sites' forms were the specialised ones when it compiled, and runs the cases
that must come out as on stock CPython."""
import json

import pytest

from jitcheck import PY313, SAMPLING_PRELUDE, check_python, run_python

needs_313 = pytest.mark.skipif(not PY313, reason="these site forms are CPython 3.13's")

PRELUDE = SAMPLING_PRELUDE + r'''
def forms(f):
    return sorted({i.opname for i in dis.get_instructions(f, adaptive=True)})

def outcome(f, *args):
    try:
        return repr(f(*args))
    except Exception as exc:
        return "%s: %s" % (type(exc).__name__, exc)

def compile_now(f, *args):
    """Warm f's sites in the interpreter, then one call with a sample in it."""
    global SAMPLE
    for _ in range(4):
        f(*args)
    seen = forms(f)
    SAMPLE = True
    f(*args)
    SAMPLE = False
    return seen
'''


def run_both(program):
    """The program's stdout on stock CPython and with PYJION=1 (equal), and
    the JIT run's facts (its last stderr line, JSON)."""
    stock = check_python(PRELUDE + program)
    proc = run_python(PRELUDE + program, env={"PYJION": "1"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == stock
    return json.loads(proc.stderr.strip().splitlines()[-1])


PROPERTY = r'''
class Temp:
    def __init__(self, c):
        self.c = c
    @property
    def f(self):
        if self.c is None:
            raise ValueError("no reading")
        return self.c * 9 / 5 + 32

class Other:
    f = "plain"

def get_f(o):
    if SAMPLE:
        _sample_now()
    return o.f

seen = compile_now(get_f, Temp(1))
t = Temp(100)
for o in (t, Temp(None), Other(), t):
    print(outcome(get_f, o))
Temp.f = property(lambda self: "replaced")
print(outcome(get_f, t))
del Temp.f
print(outcome(get_f, t))
if JIT:
    json.dump({"forms": seen, "state": pyjion.info(get_f).state}, sys.stderr)
'''


@needs_313
def test_property_site_calls_the_getter():
    facts = run_both(PROPERTY)
    assert "LOAD_ATTR_PROPERTY" in facts["forms"], facts
    assert facts["state"] == "compiled"


CONSTRUCT = r'''
class Point:
    def __init__(self, x, y):
        if x is None:
            raise ValueError("no x")
        self.x = x
        self.y = y
        if y == "ret":
            return 5

class Other:
    def __init__(self, x, y):
        self.s = x + y

def make(x, y):
    if SAMPLE:
        _sample_now()
    p = Point(x, y)
    return type(p).__name__, vars(p)

def make_any(cls, x, y):
    if SAMPLE:
        _sample_now()
    p = cls(x, y)
    return type(p).__name__, vars(p)

seen = compile_now(make, 1, 2)
seen_any = compile_now(make_any, Point, 1, 2)
for args in ((1, 2), (None, 2), (1, "ret"), ([1], [2])):
    print(outcome(make, *args))
for args in ((Point, 1, 2), (Other, 1, 2), (Point, None, 0), (dict, (), ())):
    print(outcome(make_any, *args))
Point.__init__ = lambda self, x, y: setattr(self, "z", x)
print(outcome(make, 3, 4), outcome(make_any, Point, 5, 6))
print(outcome(make, 3))
if JIT:
    json.dump({"forms": seen + seen_any, "states": [pyjion.info(make).state, pyjion.info(make_any).state]},
              sys.stderr)
'''


@needs_313
def test_class_construction_site_runs_init():
    facts = run_both(CONSTRUCT)
    assert "CALL_ALLOC_AND_ENTER_INIT" in facts["forms"], facts
    assert facts["states"] == ["compiled", "compiled"]


ATTRIBUTES = r'''
import types
mod = types.ModuleType("mod")
mod.value = 1
mod.other = 2

class Cls:
    LIMIT = 10
    def __init__(self):
        self.x = 1

class Slotted:
    __slots__ = ("a",)
    LIMIT = 20

def read_module(m):
    if SAMPLE:
        _sample_now()
    return m.value

def read_class(c):
    if SAMPLE:
        _sample_now()
    return c.LIMIT

def read_through_instance(o):
    if SAMPLE:
        _sample_now()
    return o.LIMIT

def read_slotted(o):
    if SAMPLE:
        _sample_now()
    return o.LIMIT

mod.helper = lambda k: k * 2

def call_module(m):
    if SAMPLE:
        _sample_now()
    return m.helper(3)

seen = compile_now(read_module, mod) + compile_now(read_class, Cls) + compile_now(call_module, mod)
seen += compile_now(read_through_instance, Cls()) + compile_now(read_slotted, Slotted())
print(outcome(read_module, mod))
mod.value = 5                         # the same key: the keys version holds
print(outcome(read_module, mod))
mod.new_key = 3                       # a new key: another keys version
print(outcome(read_module, mod))
other = types.ModuleType("other")
print(outcome(read_module, other))    # AttributeError
del mod.value
print(outcome(read_module, mod))      # AttributeError
print(outcome(read_module, Cls))      # not a module
print(outcome(read_class, Cls))
Cls.LIMIT = 11
print(outcome(read_class, Cls), outcome(read_class, Slotted), outcome(read_class, 5))
o = Cls()
print(outcome(read_through_instance, o))
o.LIMIT = "own"                        # the instance's own attribute shadows the class's
print(outcome(read_through_instance, o), outcome(read_through_instance, Cls()))
print(outcome(read_slotted, Slotted()))
print(outcome(call_module, mod))
mod.helper = len
print(outcome(call_module, mod), outcome(call_module, Cls))
Slotted.LIMIT = 21
print(outcome(read_slotted, Slotted()), outcome(read_slotted, Cls()))
if JIT:
    json.dump({"forms": seen, "states": [pyjion.info(f).state for f in
                                         (read_module, read_class, read_through_instance, read_slotted,
                                          call_module)]},
              sys.stderr)
'''


@needs_313
def test_module_class_and_class_attribute_sites():
    facts = run_both(ATTRIBUTES)
    for form in ("LOAD_ATTR_MODULE", "LOAD_ATTR_CLASS", "LOAD_ATTR_NONDESCRIPTOR_WITH_VALUES",
                 "LOAD_ATTR_NONDESCRIPTOR_NO_DICT"):
        assert form in facts["forms"], (form, facts)
    assert facts["states"] == ["compiled"] * 5
