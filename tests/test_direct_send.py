"""SEND (`yield from`, `await`) resumes a compiled generator or coroutine by
entering its machine code directly (codegen/runtime/direct_call.cpp, gen_send: the
work of PyIter_Send and gen_send_ex2); any other receiver, and a generator
that cannot run (running, finished, or just started and sent a value), goes
through PyIter_Send. Values, return values, errors and their messages must be
the interpreter's."""
from jitcheck import differential

GENS = """
import sys

def inner(n):
    got = []
    for i in range(n):
        v = yield i
        got.append(v)
    return ("inner done", got)

def outer(n):
    r = yield from inner(n)
    yield r
    r2 = yield from inner(1)
    return r2

def raises_stop():
    yield 1
    raise StopIteration("inside")

def delegates_stop():
    yield from raises_stop()

def fails(n):
    yield n
    raise KeyError("failed %d" % n)

def delegates_fail(n):
    try:
        yield from fails(n)
    except KeyError as e:
        yield ("caught", str(e), e.__traceback__.tb_frame.f_code.co_name)

def delegates_to(g):
    return (yield from g)

def tree(depth, label=1):
    if depth == 0:
        return 0
    left = yield from tree(depth - 1, label * 2)
    yield label
    right = yield from tree(depth - 1, label * 2 + 1)
    return left + right + 1

async def leaf(x):
    return x * 2

async def middle(x):
    a = await leaf(x)
    b = await leaf(a)
    return a + b

async def top(n):
    total = 0
    for i in range(n):
        total += await middle(i)
    return total

async def coro_raises_stop():
    raise StopIteration("in coroutine")

async def awaits_stop():
    return await coro_raises_stop()

class Awaitable:
    def __await__(self):
        v = yield "from __await__"
        return ("awaited", v)

async def awaits_object():
    return await Awaitable()

def run_coro(c, sends=()):
    out = []
    try:
        out.append(c.send(None))
        for s in sends:
            out.append(c.send(s))
    except StopIteration as e:
        out.append(("return", e.value))
    return out
"""


def test_yield_from_values_sends_and_return_values():
    differential(GENS + """
def f(n):
    out = []
    g = outer(n)
    out.append(next(g))
    try:
        for k in range(2 * n + 3):
            out.append(g.send(k * 10))
    except StopIteration as e:
        out.append(("stop", e.value))
    out.append(list(tree(4)))
    t = tree(3)
    out.append([x for x in t])
    return out
""", [(3,), (0,)], name="f", expect="return")


def test_errors_through_yield_from():
    differential(GENS + """
def f(n):
    out = []
    out.append(list(delegates_fail(n)))
    try:
        list(delegates_stop())
    except RuntimeError as e:
        out.append((type(e).__name__, str(e), repr(e.__cause__)))
    # not resumable: a just-started generator sent a value, a running one, a finished one
    g = delegates_to(inner(2))
    next(g)
    out.append(g.send("x"))
    fresh = delegates_to(inner(2))
    try:
        fresh.send(None)
        fresh2 = inner(1)
        d = delegates_to(fresh2)
        next(d)
        out.append(d.send(5))
    except Exception as e:
        out.append((type(e).__name__, str(e)))
    done = inner(0)
    list(done)
    out.append(list(delegates_to(done)))
    def selfish():
        yield from me
    me = selfish()
    try:
        next(me)
    except ValueError as e:
        out.append(str(e))
    return out
""", [(2,), (5,)], name="f", expect="return")


def test_just_started_generator_sent_a_value_through_yield_from():
    differential(GENS + """
def f(v):
    def starts(g):
        x = yield "outer first"
        r = yield from g
        return r
    s = starts(inner(1))
    out = [next(s)]
    try:
        out.append(s.send(v))
        out.append(s.send(v))
    except Exception as e:
        out.append((type(e).__name__, str(e)))
    return out
""", [(None,), (7,)], name="f", expect="return")


def test_await_chains_and_coroutine_errors():
    differential(GENS + """
def f(n):
    out = []
    out.append(run_coro(top(n)))
    out.append(run_coro(middle(n)))
    try:
        run_coro(awaits_stop())
    except RuntimeError as e:
        out.append((str(e), repr(e.__cause__)))
    out.append(run_coro(awaits_object(), ["sent"]))
    c = leaf(1)
    out.append(run_coro(c))
    async def again():
        return await c
    try:
        run_coro(again())
    except RuntimeError as e:
        out.append(str(e))
    return out
""", [(4,), (0,)], name="f", expect="return")


def test_generator_state_and_frames_while_delegating():
    differential(GENS + """
import inspect
def f(n):
    out = []
    def probe(box):
        out.append(inspect.getgeneratorstate(box[0]))
        f = sys._getframe()
        out.append((f.f_code.co_name, f.f_back.f_code.co_name, f.f_back.f_back.f_code.co_name))
        yield n
        out.append(inspect.getgeneratorstate(box[0]))
    def wrap(box):
        yield from probe(box)
    box = []
    w = wrap(box)
    box.append(w)
    out.append(list(w))
    out.append(inspect.getgeneratorstate(w))
    return out
""", [(1,)], name="f", expect="return")
