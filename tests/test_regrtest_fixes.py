"""Regression tests for differences CPython's own regression suite showed
between stock CPython and pyjion (docs/regrtest-3.11.md). Each runs in a fresh
interpreter with PYJION=1 PYJION_THRESHOLD=0, as tools/regrtest.py does."""
import re
import sys

from jitcheck import check_python, run_python

JIT_ENV = {"PYJION": "1", "PYJION_THRESHOLD": "0"}

# test_code: a tool that registers a code-extra free function after pyjion (as
# test_code does with a ctypes callback). CPython's code_dealloc calls every
# registered free function for every extra slot below ce_size, empty or not;
# pyjion's records must not size co_extra to cover the tool's index, or CPython
# calls the tool's free function (with NULL) for every code object pyjion ran,
# including at interpreter exit, where a ctypes callback crashes.
FREE_FUNC_SETUP = """
import ctypes, gc, pyjion
class _API:
    # the code-extra API: _PyEval_RequestCodeExtraIndex, _PyCode_SetExtra and
    # _PyCode_GetExtra on 3.11, PyUnstable_Eval_..., PyUnstable_Code_... since 3.12
    def __getattr__(self, name):
        api = ctypes.pythonapi
        func = getattr(api, name) if hasattr(api, name) else getattr(api, name.replace("_Py", "PyUnstable_", 1))
        setattr(self, name, func)
        return func
py = _API()
freefunc = ctypes.CFUNCTYPE(None, ctypes.c_voidp)
py._PyEval_RequestCodeExtraIndex.argtypes = (freefunc,)
py._PyEval_RequestCodeExtraIndex.restype = ctypes.c_ssize_t
py._PyCode_SetExtra.argtypes = (ctypes.py_object, ctypes.c_ssize_t, ctypes.c_voidp)
py._PyCode_SetExtra.restype = ctypes.c_int
py._PyCode_GetExtra.argtypes = (ctypes.py_object, ctypes.c_ssize_t, ctypes.POINTER(ctypes.c_voidp))
py._PyCode_GetExtra.restype = ctypes.c_int
assert pyjion.is_enabled()
freed = []
LAST_FREED = None
def myfree(ptr):
    global LAST_FREED          # STORE_GLOBAL, as test_code's free function does
    LAST_FREED = ptr
    freed.append(ptr)
FREE = freefunc(myfree)
INDEX = py._PyEval_RequestCodeExtraIndex(FREE)
assert INDEX >= 1, INDEX      # pyjion's index was requested at start-up

def fresh(k):
    ns = {}
    exec("def f(a):\\n    return a + %d\\n" % k, ns)
    return ns["f"]
"""


def test_other_tools_free_function_not_called_for_code_only_pyjion_ran():
    out = check_python(FREE_FUNC_SETUP + """
fns = [fresh(k) for k in range(20)]
assert [f(1) for f in fns] == [k + 1 for k in range(20)]
assert all(pyjion.info(f).compiled for f in fns)
del fns
gc.collect()
print("freed", freed)
# and functions that stay alive until exit (module-level, like test modules'):
def kept(a):
    return a * 2
assert kept(21) == 42 and pyjion.info(kept).compiled
""", env=JIT_ENV)
    assert "freed []" in out


def test_tool_extra_and_pyjion_record_share_a_code_object():
    # Both orders: the tool's slot set after pyjion's record, and before it.
    out = check_python(FREE_FUNC_SETUP + """
value = ctypes.c_voidp()
f = fresh(1)
assert f(1) == 2 and pyjion.info(f).compiled            # pyjion's record first
assert py._PyCode_GetExtra(f.__code__, INDEX, value) == 0 and value.value is None
assert py._PyCode_SetExtra(f.__code__, INDEX, ctypes.c_voidp(100)) == 0
assert py._PyCode_GetExtra(f.__code__, INDEX, value) == 0 and value.value == 100
assert f(2) == 3 and pyjion.info(f).compiled and pyjion.info(f).run_count == 2
del f
gc.collect()
assert freed == [100], freed

g = fresh(2)
assert py._PyCode_SetExtra(g.__code__, INDEX, ctypes.c_voidp(200)) == 0   # the tool first
assert g(1) == 3 and pyjion.info(g).compiled
assert py._PyCode_GetExtra(g.__code__, INDEX, value) == 0 and value.value == 200
del g
gc.collect()
assert freed == [100, 200], freed
print("ok")
""", env=JIT_ENV)
    assert "ok" in out


# test_getpath: pybind11 (internals version 4, its default before Python 3.12)
# keeps its internals in a PyCapsule in the builtins dict; exec() puts that dict
# in a namespace as __builtins__, and copy.deepcopy of the namespace then fails
# with "cannot pickle 'PyCapsule' object". pyjion._codegen keeps them in the
# interpreter's state dict instead.
def test_builtins_hold_no_capsule_after_pyjion_starts():
    out = check_python("""
import builtins, copy, sys
import pyjion
assert pyjion.is_enabled() and "pyjion._codegen" in sys.modules
print("capsules", [k for k, v in vars(builtins).items() if type(v).__name__ == "PyCapsule"])
ns = {"x": 1}
exec("y = x + 1", ns)                  # adds __builtins__ (the builtins dict)
assert "__builtins__" in ns
ns2 = copy.deepcopy(ns)                # what test_getpath does before each exec
assert ns2["y"] == 2
import pyjion._codegen
code = pyjion._codegen.compile((lambda a: a + 1).__code__)   # pybind11 still works
assert code.size > 0
print("ok")
""", env=JIT_ENV)
    assert "capsules []" in out
    assert "ok" in out


# test_support (test_recursion): the recursion depth that Python code called
# from a builtin sees. PyObject_Vectorcall counts one level for every builtin
# call; the interpreter's specialised (warm) calls of METH_FASTCALL builtins and
# method descriptors and of len() do not. contextlib's __enter__ resumes its
# generator through next(), so under the JIT the generator ran one level deeper
# than in warm stock code, and support.infinite_recursion(4)'s
# sys.setrecursionlimit() call found the depth already at the new limit.
DEPTH_PROBES = """
import _testinternalcapi

def here():
    return _testinternalcapi.get_recursion_depth()

seen = []

def record(x=None):
    seen.append(here())
    return x

def gen():
    yield here()

class Sized:
    def __len__(self):
        return here()

class Shown:
    def __repr__(self):
        return str(here())

class Hashed:
    def __hash__(self):
        return record(1)

def via_next():                    # METH_FASTCALL builtin
    return next(gen()) - here()

def via_sorted():                  # METH_FASTCALL | METH_KEYWORDS builtin, with a keyword
    sorted([1], key=record)
    return seen.pop() - here()

def via_len():                     # len(): the interpreter's PRECALL_NO_KW_LEN
    return len(Sized()) - here()

def via_repr():                    # METH_O builtin (and PyObject_Repr): counted, warm or not
    return int(repr(Shown())) - here()

def via_method_fast():             # METH_FASTCALL method descriptor: dict.setdefault
    {}.setdefault(Hashed(), 0)
    return seen.pop() - here()

def via_method_kw():               # method descriptor called with a keyword: counted
    [3, 1].sort(key=record)
    seen.pop()
    return seen.pop() - here()
"""

PROBE_NAMES = ["via_next", "via_sorted", "via_len", "via_repr", "via_method_fast", "via_method_kw"]


def _depths(ns):
    return {name: ns[name]() for name in PROBE_NAMES}


def test_recursion_depth_below_builtin_calls_matches_the_interpreter_cold_and_warm():
    # 3.11 counts a recursion level for a call to a C function until the
    # calling code is warm (8 RESUMEs/backward jumps: quickened, calls
    # specialised), and not after; compiled code keeps the same count.
    import pyjion
    from jitcheck import jit_off, jit_on

    def runs(jit):
        ns = {}
        exec(compile(DEPTH_PROBES, "<depth-%s>" % ("jit" if jit else "stock"), "exec"), ns)
        cold = _depths(ns)
        for _ in range(200):
            warm = _depths(ns)
        if jit:
            for name in PROBE_NAMES:
                assert pyjion.info(ns[name]).compiled, name
        return cold, warm

    with jit_off():
        stock_cold, stock_warm = runs(False)
    with jit_on():
        jit_cold, jit_warm = runs(True)
    assert jit_cold == stock_cold
    assert jit_warm == stock_warm
    if sys.version_info >= (3, 12):
        # the Python recursion depth counts Python frames only: C calls
        # count nothing, warm or cold
        assert stock_cold == stock_warm
        assert stock_warm["via_next"] == 1 and stock_warm["via_method_kw"] == 1
        return
    assert stock_cold != stock_warm        # the probes see the difference
    assert stock_warm["via_next"] == 1     # the generator's frame; nothing for next()
    assert stock_warm["via_method_kw"] == stock_warm["via_next"] + 1   # counted, warm or not


def test_contextmanager_recursion_limit_as_test_support_sets_it():
    # test_support.test_recursion's last step in a fresh interpreter, once
    # with contextlib cold and once warmed up (as it is by the time regrtest
    # gets there): with the JIT forced, the outcome is the interpreter's.
    script = """
import sys
import unittest
from test import support

if sys.argv[1] == "warm":
    for _ in range(20):
        with support.infinite_recursion(1000):
            pass

class T(unittest.TestCase):
    def test(self):
        def recursive_function(depth):
            if depth:
                recursive_function(depth - 1)
        for max_depth in (4, 5, 25):
            with support.infinite_recursion(max_depth):
                available = support.get_recursion_available()
                recursive_function(available)
                try:
                    recursive_function(available + 1)
                except RecursionError:
                    pass
                else:
                    self.fail("RecursionError was not raised")

result = unittest.TextTestRunner(verbosity=0).run(unittest.TestSuite([T("test")]))
print("ok" if result.wasSuccessful() else "failed")
"""
    for state in ("cold", "warm"):
        stock = check_python(script, args=(state,)).strip().splitlines()[-1]
        jit = check_python(script, args=(state,), env=JIT_ENV).strip().splitlines()[-1]
        assert jit == stock, state
        if state == "warm":
            assert jit == "ok"


def test_cold_code_counts_c_calls_as_the_interpreter_does():
    # test_exceptions.test_recursion_normalizing_exception: module code run
    # once calls gen.throw (a METH_FASTCALL method) at the recursion limit;
    # cold, the interpreter counts that C call and raises there, before the
    # generator is resumed, so the generator is finalised at exit.
    script = """
import sys
from _testinternalcapi import get_recursion_depth

class Resource:
    def __del__(self):
        print("finalised", file=sys.stderr)

def recurse(cnt):
    cnt -= 1
    if cnt:
        recurse(cnt)
    else:
        generator.throw(KeyError)

def gen():
    r = Resource()
    yield

generator = gen()
next(generator)
limit = sys.getrecursionlimit()
depth = get_recursion_depth()
try:
    sys.setrecursionlimit(depth + 2)
    try:
        recurse(2)
    finally:
        sys.setrecursionlimit(limit)
except RecursionError as e:
    message = str(e)
print(message)
"""
    stock = run_python(script)
    jit = run_python(script, env=JIT_ENV)
    if sys.version_info >= (3, 12):
        # C calls count nothing: the Python call to recurse() is what exceeds the limit
        assert stock.stdout == "maximum recursion depth exceeded\n"
    else:
        assert stock.stdout == "maximum recursion depth exceeded while calling a Python object\n"
    def addressless(text):
        return re.sub(r"0x[0-9a-f]+", "0x?", text)
    assert (jit.stdout, addressless(jit.stderr), jit.returncode) == (
        stock.stdout, addressless(stock.stderr), stock.returncode)


# test_capi (Test_Pep523API): another PEP 523 function replaces pyjion's hook
# while compiled code is running. Calls made from compiled code must then reach
# that function for every frame, as on stock CPython: direct calls check that
# the interpreter's frame evaluator is still pyjion's, not only that pyjion
# is enabled.
def test_a_replacing_frame_evaluator_sees_calls_from_compiled_code():
    check_python("""
import pyjion, _testinternalcapi
assert pyjion.is_enabled()
class C:
    def __getitem__(self, other):
        return None
def func():
    C()[42]
def leaf(x):
    return x
def direct():
    return leaf(1)
def drive(fn, start, count):
    calls = []
    try:
        for i in range(count):
            if i == start:
                _testinternalcapi.set_eval_frame_record(calls)
            fn()
    finally:
        _testinternalcapi.set_eval_frame_default()
    return calls
for fn, names in ((func, ["func", "__getitem__"]), (direct, ["direct", "leaf"])):
    pyjion.enable(threshold=0)   # set_eval_frame_default removed the hook
    calls = drive(fn, 50, 80)
    assert calls == names * 30, (fn.__name__, len(calls), calls[:6])
    assert pyjion.info(drive).state == "compiled"
    assert pyjion.info(fn).state == "compiled"
print("ok")
""", env=JIT_ENV)
