"""Compiled code calls compiled Python functions directly (codegen/runtime/direct_call.cpp:
the callee's frame is pushed on the thread's data stack and its machine code
entered without _PyEval_Vector). Every way a callee can be called, and every
way its frame can outlive the call, must behave as on stock CPython."""
import pyjion
from jitcheck import assert_compiled, differential, fresh_namespace, jit_on, run_python

HELPERS = """
import sys

def add(a, b):
    return a + b

def with_defaults(a, b=10, c=20):
    return (a, b, c)

def only_kw(a, *, k=3):
    return a * k

def star(*args, **kw):
    return (args, sorted(kw.items()))

class Box:
    def __init__(self, v):
        self.v = v
    def get(self, extra):
        return self.v + extra
"""


def test_positional_calls_defaults_and_methods():
    differential(HELPERS + """
def f(n):
    out = []
    for i in range(n):
        out.append(add(i, i))
        out.append(with_defaults(i))
        out.append(with_defaults(i, 1))
        out.append(with_defaults(i, 1, 2))
        out.append(only_kw(i))
        out.append(only_kw(i, k=2))
        out.append(star(i, 2, x=1))
        b = Box(i)
        out.append(b.get(5))
        m = b.get
        out.append(m(6))
    return out
""", [(3,), (0,)], name="f", expect="return")


def test_wrong_argument_counts_raise_the_same_errors():
    differential(HELPERS + """
def f(which):
    if which == 0:
        return add(1)
    if which == 1:
        return add(1, 2, 3)
    if which == 2:
        return with_defaults()
    return with_defaults(1, 2, 3, 4)
""", [(0,), (1,), (2,), (3,)], name="f", expect="raise")


def test_exception_in_callee_has_both_frames_in_the_traceback():
    differential("""
def inner(x):
    return 1 // x

def middle(x):
    y = x - 1
    return inner(y) + 1

def f(x):
    return middle(x) * 2
""", [(1,), (2,)], name="f")


def test_closures_cells_and_changed_code_and_defaults():
    differential("""
def f(n):
    total = []
    def make(k):
        def inner(x):
            return x + k + n
        return inner
    for i in range(3):
        total.append(make(i)(10))
    def counter():
        c = 0
        def bump():
            nonlocal c
            c += 1
            return c
        return bump
    b = counter()
    total.append([b(), b(), b()])
    def g(a):
        return a
    def h(a):
        return -a
    total.append(g(5))
    g.__code__ = h.__code__
    total.append(g(5))
    def d(a, b=1):
        return a + b
    total.append(d(1))
    d.__defaults__ = (100,)
    total.append(d(1))
    return total
""", [(1,)], name="f", expect="return")


def test_escaping_frames_keep_their_data_and_back_links():
    differential("""
import sys

def leak(a, b):
    c = a * b
    return sys._getframe()

def caller(x):
    local_in_caller = x + 1
    fr = leak(x, 3)
    return fr

def f(x):
    fr = caller(x)
    back = fr.f_back
    return (fr.f_code.co_name, sorted(fr.f_locals.items()), fr.f_lineno,
            back.f_code.co_name, back.f_locals.get("local_in_caller"),
            back.f_back.f_code.co_name, fr.f_lasti >= 0)
""", [(2,), (5,)], name="f", expect="return")


def test_kept_traceback_frames_show_their_locals():
    differential("""
def fail(a):
    secret = a * 7
    raise ValueError(secret)

def f(x):
    try:
        fail(x)
    except ValueError as e:
        tb = e.__traceback__
    frames = []
    while tb is not None:
        frames.append((tb.tb_frame.f_code.co_name, tb.tb_lineno, sorted(tb.tb_frame.f_locals.items())
                       if tb.tb_frame.f_code.co_name == "fail" else None))
        tb = tb.tb_next
    return frames
""", [(3,)], name="f", expect="return")


def test_generator_functions_and_class_bodies_are_called_normally():
    differential("""
def gen(n):
    for i in range(n):
        yield i * i

def f(n):
    class K:
        a = n
        def m(self):
            return self.a
    return (list(gen(n)), K().m(), sum(gen(n)))
""", [(4,)], name="f", expect="return")


def test_deep_recursion_through_direct_calls():
    # Deep enough to take new data-stack chunks on the way down, and past the
    # recursion limit: the same RecursionError as stock.
    differential("""
def depth(n):
    if n == 0:
        return 0
    return depth(n - 1) + 1

def f(n):
    try:
        return depth(n)
    except RecursionError:
        return "RecursionError"
""", [(50,), (900,), (100000,)], name="f", expect="return")


def test_runaway_recursion_is_a_recursion_error():
    out = run_python("""
import sys, pyjion
sys.setrecursionlimit(200000)
def down(n):
    return down(n + 1) + 1
pyjion.enable(threshold=0)
try:
    down(0)
except RecursionError as e:
    print("RecursionError")
pyjion.disable()
def again(n):
    return n if n == 0 else again(n - 1)
pyjion.enable(threshold=0)
print(again(5000))
""")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["RecursionError", "0"]


# loop(n) calls leaf n times: directly, once both are compiled.
LEAF_LOOP = """
def leaf(x):
    return x + 1

def loop(n):
    t = 0
    for i in range(n):
        t += leaf(i)
    return t
"""


def test_direct_calls_count_as_runs():
    ns = fresh_namespace(LEAF_LOOP, "direct-runs")
    with jit_on():
        assert ns["loop"](1) == 1      # compiles both
        assert ns["loop"](100) == 5050
    assert_compiled(ns["leaf"])
    assert pyjion.info(ns["leaf"]).run_count == 101


def test_after_disable_callees_run_on_stock_cpython():
    ns = fresh_namespace("""
import pyjion

def leaf(x):
    return x + 1

def outer(n, switch_off):
    t = leaf(n)
    if switch_off:
        pyjion.disable()
    for i in range(3):
        t += leaf(i)
    return t
""", "direct-disable")
    with jit_on():
        assert ns["outer"](1, False) == 8
        runs = pyjion.info(ns["leaf"]).run_count
        assert ns["outer"](1, True) == 8
        assert not pyjion.is_enabled()
        # the first call ran under the hook, the three after disable() did not
        assert pyjion.info(ns["leaf"]).run_count == runs + 1


def test_tracing_switched_on_in_a_caller_sees_the_callee():
    ns = fresh_namespace("""
import sys

def leaf(x):
    y = x + 1
    return y

def outer(tracer):
    a = leaf(1)
    sys.settrace(tracer)
    b = leaf(2)
    sys.settrace(None)
    return a + b
""", "direct-trace")
    events = []

    def tracer(frame, event, arg):
        if frame.f_code.co_name == "leaf":
            events.append((event, frame.f_lineno))
        return tracer

    with jit_on():
        ns["outer"](None)
        ns["outer"](None)
        assert_compiled(ns["leaf"])
        assert ns["outer"](tracer) == 5
    assert events == [("call", 4), ("line", 5), ("line", 6), ("return", 6)]


def test_profiler_sees_direct_calls():
    ns = fresh_namespace(LEAF_LOOP, "direct-profile")
    with jit_on():
        ns["loop"](2)
        pyjion.reset_stats()
        pyjion.enable(threshold=0, profile=True)
        ns["loop"](25)
        stats = pyjion.stats()["functions"]
        pyjion.enable(threshold=0, profile=False)
    leaf = [v for k, v in stats.items() if k[0] == ns["leaf"].__code__.co_filename and k[2] == "leaf"]
    assert leaf and leaf[0]["calls"] == 25


def test_generators_coroutines_and_async_generators_made_by_direct_calls():
    differential("""
import types

def gen(a, b=2):
    x = yield a
    yield (x, b)
    return a + b

async def coro(a):
    return a * 3

async def agen(n):
    for i in range(n):
        yield i

@types.coroutine
def legacy(a):
    yield a

def drive(c):
    try:
        c.send(None)
    except StopIteration as e:
        return e.value

def f(n):
    out = []
    for i in range(n):
        g = gen(i)
        out.append((next(g), g.send("sent"), g.gi_frame.f_locals["b"]))
        try:
            next(g)
        except StopIteration as e:
            out.append(e.value)
        out.append(drive(coro(i)))
        ag = agen(2)
        out.append(drive(ag.__anext__()))
        out.append(list(legacy(i)))
    return out
""", [(3,), (1,)], name="f", expect="return")


def test_compact_call_sites_that_saw_python_functions():
    """A long function (compact sites) compiled after it ran interpreted: its
    CALLs whose PRECALL the interpreter quickened for Python functions or
    bound methods put the direct call inline and the C-call cache out of line,
    and a PRECALL that only saw functions unpacks no bound method inline.
    Such a site later meeting a bound method, a builtin, a class, a callable
    object or a function with defaults gets stock's results and errors."""
    from jitcheck import site_form
    src = HELPERS + """
def call_one(fn, x):
    return fn(x)

def call_two(obj, x):
    return obj.get(x)

def run(fns, objs, n):
    out = []
    for i in range(n):
        for fn in fns:
            try:
                r = call_one(fn, i)
                out.append(("Box", r.v) if isinstance(r, Box) else r)
            except TypeError as e:
                out.append(str(e))
        for obj in objs:
            out.append(call_two(obj, i))
    return out
"""
    # padding: call_one and call_two made long enough to be compact
    pad = "".join("    _%d = x\\n" % k for k in range(60))
    src = src.replace("def call_one(fn, x):\\n", "def call_one(fn, x):\\n" + pad)
    src = src.replace("def call_two(obj, x):\\n", "def call_two(obj, x):\\n" + pad.replace("x\\n", "obj\\n"))
    results = []
    for jit in (True, False):
        ns = fresh_namespace(src, "compact-call")
        fns_warm = [ns["with_defaults"], lambda v: v + 1]
        fns_late = [ns["Box"](3).get, len, str, ns["Box"], ns["add"], ns["with_defaults"]]
        objs = [ns["Box"](1), ns["Box"](2)]
        if jit:
            with site_form("compact"), jit_on(threshold=20):
                warm = ns["run"](fns_warm, objs, 30)       # quickened, then compiled
                assert_compiled(ns["call_one"])
                assert_compiled(ns["call_two"])
                late = ns["run"](fns_late, objs + [ns["Box"](7)], 5)
        else:
            warm = ns["run"](fns_warm, objs, 30)
            late = ns["run"](fns_late, objs + [ns["Box"](7)], 5)
        results.append((warm, late))
    assert results[0] == results[1]
