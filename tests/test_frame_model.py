"""The frame model both tiers share (pyjion/codegen/model/): the kinds the
compiler establishes at each bytecode boundary (golden descriptions through
pyjion._codegen.frame_states), and config(debug=True)'s run-time check of the
frame against them (it aborts the process on a mismatch: in subprocesses)."""
import glob
import os
import re
import types

import pytest

import pyjion
import pyjion._codegen as cg
from jitcheck import PY313, run_python


def states(f):
    return [(offset, name, state) for offset, name, state in cg.frame_states(f.__code__)]


# ---- golden descriptions ------------------------------------------------------------
# Kinds: obj (an object), obj? (an object or NULL), null (NULL), const#i (co_consts[i]).

# The same on 3.13: LOAD_FAST_LOAD_FAST, LOAD_GLOBAL and LOAD_ATTR push
# [callable, NULL or self], no PRECALL, FOR_ITER's exit is END_FOR + POP_TOP.
GOLDEN_313 = {
    "add": [
        (0, "RESUME", "depth=0 locals=[obj, obj] stack=[]"),
        (2, "LOAD_FAST_LOAD_FAST", "depth=0 locals=[obj, obj] stack=[]"),
        (4, "BINARY_OP", "depth=2 locals=[obj, obj] stack=[obj, obj]"),
        (8, "RETURN_VALUE", "depth=1 locals=[obj, obj] stack=[obj]"),
    ],
    "total": [
        (0, "RESUME", "depth=0 locals=[obj, obj?, obj?] stack=[]"),
        (2, "LOAD_CONST", "depth=0 locals=[obj, obj?, obj?] stack=[]"),
        (4, "STORE_FAST", "depth=1 locals=[obj, obj?, obj?] stack=[const#1]"),
        (6, "LOAD_GLOBAL", "depth=0 locals=[obj, obj, obj?] stack=[]"),
        (16, "LOAD_FAST", "depth=2 locals=[obj, obj, obj?] stack=[obj, null]"),
        (18, "CALL", "depth=3 locals=[obj, obj, obj?] stack=[obj, null, obj]"),
        (26, "GET_ITER", "depth=1 locals=[obj, obj, obj?] stack=[obj]"),
        (28, "FOR_ITER", "depth=1 locals=[obj, obj, obj?] stack=[obj]"),
        (32, "STORE_FAST", "depth=2 locals=[obj, obj, obj?] stack=[obj, obj]"),
        (34, "LOAD_FAST_LOAD_FAST", "depth=1 locals=[obj, obj, obj] stack=[obj]"),
        (36, "BINARY_OP", "depth=3 locals=[obj, obj, obj] stack=[obj, obj, obj]"),
        (40, "STORE_FAST", "depth=2 locals=[obj, obj, obj] stack=[obj, obj]"),
        (42, "JUMP_BACKWARD", "depth=1 locals=[obj, obj, obj] stack=[obj]"),
        (46, "END_FOR", "depth=2 locals=[obj, obj, obj?] stack=[obj, obj]"),
        (48, "POP_TOP", "depth=1 locals=[obj, obj, obj?] stack=[obj]"),
        (50, "LOAD_FAST", "depth=0 locals=[obj, obj, obj?] stack=[]"),
        (52, "RETURN_VALUE", "depth=1 locals=[obj, obj, obj?] stack=[obj]"),
    ],
    "safe_div": [
        (0, "RESUME", "depth=0 locals=[obj, obj] stack=[]"),
        (2, "NOP", "depth=0 locals=[obj, obj] stack=[]"),
        (4, "LOAD_FAST_LOAD_FAST", "depth=0 locals=[obj, obj] stack=[]"),
        (6, "BINARY_OP", "depth=2 locals=[obj, obj] stack=[obj, obj]"),
        (10, "RETURN_VALUE", "depth=1 locals=[obj, obj] stack=[obj]"),
        (12, "PUSH_EXC_INFO", "depth=1 locals=[obj, obj] stack=[obj]"),
        (14, "LOAD_GLOBAL", "depth=2 locals=[obj, obj] stack=[obj, obj]"),
        (24, "CHECK_EXC_MATCH", "depth=3 locals=[obj, obj] stack=[obj, obj, obj]"),
        (26, "POP_JUMP_IF_FALSE", "depth=3 locals=[obj, obj] stack=[obj, obj, obj]"),
        (30, "POP_TOP", "depth=2 locals=[obj, obj] stack=[obj, obj]"),
        (32, "POP_EXCEPT", "depth=1 locals=[obj, obj] stack=[obj]"),
        (34, "RETURN_CONST", "depth=0 locals=[obj, obj] stack=[]"),
        (36, "RERAISE", "depth=2 locals=[obj, obj] stack=[obj, obj]"),
        (38, "COPY", "depth=3 locals=[obj, obj] stack=[obj, obj, obj]"),
        (40, "POP_EXCEPT", "depth=4 locals=[obj, obj] stack=[obj, obj, obj, obj]"),
        (42, "RERAISE", "depth=3 locals=[obj, obj] stack=[obj, obj, obj]"),
    ],
    "call": [
        (0, "RESUME", "depth=0 locals=[obj] stack=[]"),
        (2, "LOAD_FAST", "depth=0 locals=[obj] stack=[]"),
        (4, "LOAD_ATTR", "depth=1 locals=[obj] stack=[obj]"),
        (24, "LOAD_CONST", "depth=2 locals=[obj] stack=[obj, obj?]"),
        (26, "LOAD_GLOBAL", "depth=3 locals=[obj] stack=[obj, obj?, const#1]"),
        (36, "LOAD_FAST", "depth=5 locals=[obj] stack=[obj, obj?, const#1, obj, null]"),
        (38, "CALL", "depth=6 locals=[obj] stack=[obj, obj?, const#1, obj, null, obj]"),
        (46, "CALL", "depth=4 locals=[obj] stack=[obj, obj?, const#1, obj]"),
        (54, "RETURN_VALUE", "depth=1 locals=[obj] stack=[obj]"),
    ],
}


def add(a, b):
    return a + b


def test_golden_add():
    assert states(add) == (GOLDEN_313['add'] if PY313 else [
        (0, "RESUME", "depth=0 locals=[obj, obj] stack=[]"),
        (2, "LOAD_FAST", "depth=0 locals=[obj, obj] stack=[]"),
        (4, "LOAD_FAST", "depth=1 locals=[obj, obj] stack=[obj]"),
        (6, "BINARY_OP", "depth=2 locals=[obj, obj] stack=[obj, obj]"),
        (10, "RETURN_VALUE", "depth=1 locals=[obj, obj] stack=[obj]"),
    ])


def total(n):
    t = 0
    for i in range(n):
        t += i
    return t


def test_golden_loop():
    # t is bound from its STORE_FAST on, i only inside the loop body; the
    # NULL LOAD_GLOBAL pushes below range may have become a method at CALL
    # (PRECALL unpacks bound methods); the constant 0 is known until stored.
    assert states(total) == (GOLDEN_313['total'] if PY313 else [
        (0, "RESUME", "depth=0 locals=[obj, obj?, obj?] stack=[]"),
        (2, "LOAD_CONST", "depth=0 locals=[obj, obj?, obj?] stack=[]"),
        (4, "STORE_FAST", "depth=1 locals=[obj, obj?, obj?] stack=[const#1]"),
        (6, "LOAD_GLOBAL", "depth=0 locals=[obj, obj, obj?] stack=[]"),
        (18, "LOAD_FAST", "depth=2 locals=[obj, obj, obj?] stack=[null, obj]"),
        (20, "PRECALL", "depth=3 locals=[obj, obj, obj?] stack=[null, obj, obj]"),
        (24, "CALL", "depth=2 locals=[obj, obj, obj?] stack=[obj?, obj]"),
        (34, "GET_ITER", "depth=1 locals=[obj, obj, obj?] stack=[obj]"),
        (36, "FOR_ITER", "depth=1 locals=[obj, obj, obj?] stack=[obj]"),
        (38, "STORE_FAST", "depth=2 locals=[obj, obj, obj?] stack=[obj, obj]"),
        (40, "LOAD_FAST", "depth=1 locals=[obj, obj, obj] stack=[obj]"),
        (42, "LOAD_FAST", "depth=2 locals=[obj, obj, obj] stack=[obj, obj]"),
        (44, "BINARY_OP", "depth=3 locals=[obj, obj, obj] stack=[obj, obj, obj]"),
        (48, "STORE_FAST", "depth=2 locals=[obj, obj, obj] stack=[obj, obj]"),
        (50, "JUMP_BACKWARD", "depth=1 locals=[obj, obj, obj] stack=[obj]"),
        (52, "LOAD_FAST", "depth=0 locals=[obj, obj, obj?] stack=[]"),
        (54, "RETURN_VALUE", "depth=1 locals=[obj, obj, obj?] stack=[obj]"),
    ])


def safe_div(a, b):
    try:
        return a / b
    except ZeroDivisionError:
        return None


def test_golden_try_except():
    # Handlers start from the covered instructions' stack cut to the
    # handler's level, then (lasti) the raising offset, then the exception.
    assert states(safe_div) == (GOLDEN_313['safe_div'] if PY313 else [
        (0, "RESUME", "depth=0 locals=[obj, obj] stack=[]"),
        (2, "NOP", "depth=0 locals=[obj, obj] stack=[]"),
        (4, "LOAD_FAST", "depth=0 locals=[obj, obj] stack=[]"),
        (6, "LOAD_FAST", "depth=1 locals=[obj, obj] stack=[obj]"),
        (8, "BINARY_OP", "depth=2 locals=[obj, obj] stack=[obj, obj]"),
        (12, "RETURN_VALUE", "depth=1 locals=[obj, obj] stack=[obj]"),
        (14, "PUSH_EXC_INFO", "depth=1 locals=[obj, obj] stack=[obj]"),
        (16, "LOAD_GLOBAL", "depth=2 locals=[obj, obj] stack=[obj, obj]"),
        (28, "CHECK_EXC_MATCH", "depth=3 locals=[obj, obj] stack=[obj, obj, obj]"),
        (30, "POP_JUMP_FORWARD_IF_FALSE", "depth=3 locals=[obj, obj] stack=[obj, obj, obj]"),
        (32, "POP_TOP", "depth=2 locals=[obj, obj] stack=[obj, obj]"),
        (34, "POP_EXCEPT", "depth=1 locals=[obj, obj] stack=[obj]"),
        (36, "LOAD_CONST", "depth=0 locals=[obj, obj] stack=[]"),
        (38, "RETURN_VALUE", "depth=1 locals=[obj, obj] stack=[const#0]"),
        (40, "RERAISE", "depth=2 locals=[obj, obj] stack=[obj, obj]"),
        (42, "COPY", "depth=3 locals=[obj, obj] stack=[obj, obj, obj]"),
        (44, "POP_EXCEPT", "depth=4 locals=[obj, obj] stack=[obj, obj, obj, obj]"),
        (46, "RERAISE", "depth=3 locals=[obj, obj] stack=[obj, obj, obj]"),
    ])


def call(o):
    return o.m(1, len(o))


def test_golden_method_call():
    # LOAD_METHOD leaves [method or NULL, self or attribute]; PRECALL counts
    # its arguments as taken (CPython's stack effect), CALL the rest.
    assert states(call) == (GOLDEN_313['call'] if PY313 else [
        (0, "RESUME", "depth=0 locals=[obj] stack=[]"),
        (2, "LOAD_FAST", "depth=0 locals=[obj] stack=[]"),
        (4, "LOAD_METHOD", "depth=1 locals=[obj] stack=[obj]"),
        (26, "LOAD_CONST", "depth=2 locals=[obj] stack=[obj?, obj]"),
        (28, "LOAD_GLOBAL", "depth=3 locals=[obj] stack=[obj?, obj, const#1]"),
        (40, "LOAD_FAST", "depth=5 locals=[obj] stack=[obj?, obj, const#1, null, obj]"),
        (42, "PRECALL", "depth=6 locals=[obj] stack=[obj?, obj, const#1, null, obj, obj]"),
        (46, "CALL", "depth=5 locals=[obj] stack=[obj?, obj, const#1, obj?, obj]"),
        (56, "PRECALL", "depth=4 locals=[obj] stack=[obj?, obj, const#1, obj]"),
        (60, "CALL", "depth=2 locals=[obj] stack=[obj?, obj]"),
        (70, "RETURN_VALUE", "depth=1 locals=[obj] stack=[obj]"),
    ])


def test_unreachable_and_fused_boundaries_have_no_state():
    def f(a, b):
        if a < b:   # COMPARE_OP and its jump are compiled together
            return 1
        return 2
    got = dict((off, s) for off, _, s in states(f))
    jump = next(off for off, name, _ in states(f) if name.startswith("POP_JUMP"))
    assert got[jump] is None
    assert all(s is not None for off, s in got.items() if off != jump)


def test_frame_states_rejects_non_code():
    with pytest.raises(TypeError):
        cg.frame_states(add)


# ---- the model over real code ---------------------------------------------------------

def _codes(co):
    yield co
    for c in co.co_consts:
        if isinstance(c, types.CodeType):
            yield from _codes(c)


def _nlocalsplus(co):
    return len(co.co_varnames) + len([c for c in co.co_cellvars if c not in co.co_varnames]) + len(co.co_freevars)


STATE = re.compile(r"depth=(\d+) locals=\[(.*)\] stack=\[(.*)\]$")
KIND = re.compile(r"obj\??|null|const#\d+$")


def test_model_over_the_standard_library():
    """Every code object of some stdlib modules: the compiler's model agrees
    with CPython's stack effects (a disagreement fails the compile), each
    state's stack has its depth's kinds, every local has one, and a const#i
    names one of the code's constants."""
    lib = os.path.dirname(os.__file__)
    names = ["argparse", "difflib", "textwrap", "json/decoder", "json/encoder", "asyncio/tasks", "contextlib",
             "dataclasses", "enum", "functools", "re/_parser", "re/_compiler", "tomllib/_parser", "pickle"]
    count = 0
    for name in names:
        path = os.path.join(lib, name + ".py")
        top = compile(open(path, encoding="utf-8").read(), path, "exec")
        for co in _codes(top):
            for offset, opname, state in cg.frame_states(co):
                if state is None:
                    continue
                m = STATE.match(state)
                assert m, state
                depth = int(m.group(1))
                stack = m.group(3).split(", ") if m.group(3) else []
                local = m.group(2).split(", ") if m.group(2) else []
                assert len(stack) == depth, (co.co_qualname, offset, state)
                assert len(local) == _nlocalsplus(co), (co.co_qualname, offset, state)
                for kind in stack + local:
                    assert KIND.match(kind), (co.co_qualname, offset, state)
                    if kind.startswith("const#"):
                        assert int(kind[6:]) < len(co.co_consts)
                assert all(k in ("obj", "obj?") for k in local), state
                count += 1
    assert count > 10000


# ---- the run-time check's test of one slot ------------------------------------------

def test_slot_problems():
    code = add.__code__.replace(co_consts=("zero", None, 7))
    p = cg.debug_slot_problem
    assert p("obj", object()) is None
    assert p("obj", null=True) == "is NULL"
    assert p("obj?", null=True) is None
    assert p("obj?", 3) is None
    assert p("null", null=True) is None
    assert p("null", 3) == "holds an object where the model has NULL"
    assert p("const#0", "zero", code=code) is None
    assert p("const#2", 7, code=code) is None
    assert p("const#0", "other", code=code) == "does not hold its constant"
    assert p("const#9", "zero", code=code) == "does not hold its constant"
    assert p("const#0", null=True, code=code) == "is NULL"
    assert p("type", 5, type=int) is None
    assert p("type", True, type=int) == "holds an object of another type"
    with pytest.raises(ValueError):
        p("boxed", 1)


# ---- config(debug=True) over many constructs ----------------------------------------

PROGRAM = r'''
import contextlib

def loops(n):
    out = []
    for i in range(n):
        if i % 3 == 0:
            continue
        j = 0
        while j < i:
            j += 2
            if j > 6:
                break
        else:
            out.append(-j)
        out.append(i * j)
    return out

def exceptions(x):
    log = []
    try:
        try:
            log.append(10 // x)
        except ZeroDivisionError as e:
            log.append(type(e).__name__)
            raise ValueError("v") from e
        finally:
            log.append("inner-finally")
    except ValueError as e:
        log.append(str(e))
    else:
        log.append("else")
    finally:
        log.append("outer-finally")
    return log

def finally_return(x):
    try:
        if x:
            return "try"
    finally:
        if x > 1:
            return "finally"
    return "after"

def groups():
    try:
        raise ExceptionGroup("g", [KeyError("k"), TypeError("t")])
    except* KeyError as e:
        a = len(e.exceptions)
    except* TypeError as e:
        b = len(e.exceptions)
    return a, b

class CM:
    def __init__(self, log, swallow):
        self.log, self.swallow = log, swallow
    def __enter__(self):
        self.log.append("enter")
        return self
    def __exit__(self, t, v, tb):
        self.log.append(("exit", t is not None))
        return self.swallow

def withs(swallow):
    log = []
    with CM(log, swallow) as cm:
        log.append(cm is not None)
        with CM(log, True):
            raise KeyError("inner")
    try:
        with CM(log, swallow):
            1 / 0
    except ZeroDivisionError:
        log.append("propagated")
    with contextlib.suppress(IndexError):
        [][1]
    return log

def gen(n):
    total = 0
    for i in range(n):
        got = yield i * i
        if got is not None:
            total += got
    yield from range(total, total + 2)
    return total

def drive_gen():
    g = gen(4)
    out = [next(g)]
    out.append(g.send(5))
    out.extend(g)
    g2 = gen(10)
    next(g2)
    try:
        g2.throw(KeyError("x"))
    except KeyError as e:
        out.append(repr(e))
    g3 = gen(3)
    next(g3)
    g3.close()
    return out

def comprehensions(n):
    a = [i * 2 for i in range(n) if i % 2]
    b = {i: str(i) for i in range(n)}
    c = {len(s) for s in b.values()}
    d = sum(x for x in a if x > 2)
    e = [(i, j) for i in range(3) for j in range(i)]
    return a, b, sorted(c), d, e

def closures(n):
    acc = 0
    def add(k):
        nonlocal acc
        acc += k
        return acc
    fs = [lambda i=i: i + acc for i in range(3)]
    for i in range(n):
        add(i)
    return acc, [f() for f in fs]

def unbound(flag):
    if flag:
        v = 1
    try:
        return v
    except UnboundLocalError as e:
        return "unbound"

def deletes():
    x = [1]
    y = x
    del x
    try:
        x
    except NameError:
        pass
    return y

def calls(*args, **kw):
    def f(a, b=2, *rest, c=3, **more):
        return (a, b, rest, c, sorted(more.items()))
    o = CM([], False)
    return [f(1), f(1, 2, 3, c=4, d=5), f(*args, **kw), getattr(o, "swallow"), o.__enter__() is o,
            (lambda *a: a)(*range(3)), max(1, 2, key=lambda v: -v), "%s-%d" % ("x", 3)]

def matching(v):
    match v:
        case {"k": [x, *rest]}:
            return ("map", x, rest)
        case (1, y):
            return ("seq", y)
        case CM(swallow=s):
            return ("cls", s)
        case str() as s if s:
            return ("str", s)
        case _:
            return "other"

def strings(a, b):
    first, *mid, last = f"{a!r}:{b:>5}|{a + b}".split(":")
    x, y = b, a
    return first, mid, last, x, y, a < b < 10, a == b != 3

async def coro(n):
    total = 0
    for i in range(n):
        total += await step(i)
    async with ACM() as v:
        total += v
    async for k in AIter(3):
        total += k
    return total

class Awaitable:
    def __init__(self, v):
        self.v = v
    def __await__(self):
        got = yield self.v
        return got

async def step(i):
    return await Awaitable(i)

class ACM:
    async def __aenter__(self):
        return 100
    async def __aexit__(self, *a):
        return False

class AIter:
    def __init__(self, n):
        self.n = n
    def __aiter__(self):
        return self
    async def __anext__(self):
        if self.n == 0:
            raise StopAsyncIteration
        self.n -= 1
        return self.n

def run_coro(n):
    c = coro(n)
    sent = None
    seen = []
    try:
        while True:
            seen.append(c.send(sent))
            sent = seen[-1] * 10
    except StopIteration as stop:
        return seen, stop.value

class Counter:
    count = 0
    def bump(self, by=1):
        self.count += by
        return self.count

def methods(n):
    c = Counter()
    for i in range(n):
        c.bump()
        c.bump(by=i)
    return c.count, Counter.count

CALLS = [
    (loops, (12,)), (exceptions, (0,)), (exceptions, (5,)), (finally_return, (0,)), (finally_return, (1,)),
    (finally_return, (2,)), (groups, ()), (withs, (True,)), (withs, (False,)), (drive_gen, ()),
    (comprehensions, (7,)), (closures, (5,)), (unbound, (True,)), (unbound, (False,)), (deletes, ()),
    (calls, (7, 8)), (calls, (7,), ), (matching, ({"k": [1, 2, 3]},)), (matching, ((1, 5),)),
    (matching, (CM([], 9),)), (matching, ("s",)), (matching, (3.5,)), (strings, (3, 4)), (strings, ("a", "b")),
    (run_coro, (4,)), (methods, (6,)),
]

def run_all():
    out = []
    for fn, args in CALLS:
        try:
            out.append(("ok", repr(fn(*args))))
        except Exception as exc:
            out.append(("raise", type(exc).__name__, str(exc)))
    return out
'''


def test_debug_check_over_many_constructs():
    """Loops, try/except/finally, except*, with, generators, comprehensions,
    closures, coroutines, match...: with config(debug=True) and every
    function compiled at its first call, the frame is checked against the
    model at every boundary (a mismatch aborts the subprocess); the results
    must be the interpreter's."""
    out = run_python("""
        import pyjion
        SRC = %r
        def run(jit):
            ns = {"__name__": "frame_model_program"}
            if jit:
                pyjion.config(debug=True)
                pyjion.enable(threshold=0)
            try:
                exec(compile(SRC, "<frame-model>", "exec"), ns)
                return ns, ns["run_all"]()
            finally:
                pyjion.disable()
        _, want = run(False)
        pyjion.reset_stats()
        ns, got = run(True)
        assert got == want, (got, want)
        funcs = [fn for fn, _ in ns["CALLS"]] + [ns["gen"], ns["coro"], ns["step"], ns["run_all"]]
        for fn in funcs:
            assert pyjion.info(fn).compiled, fn
        stats = pyjion.stats()["jit"]
        assert stats["failed"] == 0, stats
        import io
        text = io.StringIO()
        pyjion.dis_native(ns["exceptions"], file=text)
        assert "pyj_rt_debug_check_frame" in text.getvalue()
        print("ok", stats["compiled"], len(got))
    """ % PROGRAM, timeout=300)
    assert out.returncode == 0, "exit code %s\nstdout:\n%s\nstderr:\n%s" % (
        out.returncode, out.stdout, out.stderr[-4000:])
    assert "pyjion:" not in out.stderr
    words = out.stdout.split()
    assert words[0] == "ok"
    assert int(words[1]) >= 40 and int(words[2]) == 26


def test_debug_check_catches_a_frame_that_breaks_the_model():
    """A local the model has as an object (an argument) cleared behind the
    compiled code's back: the check at the next boundary reports it and aborts."""
    proc = run_python("""
        import ctypes, sys
        import pyjion

        F_FRAME = 24        # PyFrameObject.f_frame (after the object header and f_back)
        # _PyInterpreterFrame.f_code (3.11), .f_executable (3.13)
        F_CODE = 0 if sys.version_info >= (3, 13) else 32
        LOCALSPLUS = 72     # _PyInterpreterFrame.localsplus

        def clobber():
            caller = sys._getframe(1)
            iframe = ctypes.c_void_p.from_address(id(caller) + F_FRAME).value
            assert ctypes.c_void_p.from_address(iframe + F_CODE).value == id(victim.__code__)
            slot = ctypes.c_void_p.from_address(iframe + LOCALSPLUS)
            assert slot.value == id(VALUE)
            slot.value = None

        def victim(a):
            clobber()
            return "not checked"

        VALUE = object()
        pyjion.config(debug=True)
        pyjion.enable(threshold=0)
        print(victim(VALUE), flush=True)
    """)
    assert proc.returncode != 0, (proc.stdout, proc.stderr)
    assert re.search(r"pyjion: local 0 of 1 \(modelled obj\) is NULL before offset \d+ of victim", proc.stderr), \
        proc.stderr
    assert "not checked" not in proc.stdout
