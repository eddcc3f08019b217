"""Compiled code makes and resumes compiled generators without the hook
(codegen/runtime/direct_call.cpp): a call of a plain generator function builds the
generator itself (make_generator: the argument binding, COPY_FREE_VARS,
MAKE_CELL and RETURN_GENERATOR's work), and FOR_ITER enters the generator's
machine code directly (gen_next: gen_iternext and gen_send_ex2's work).
Everything a generator can do must behave as on stock CPython."""
import inspect

import pyjion
from jitcheck import assert_compiled, differential, fresh_function, jit_on

GENS = """
import sys, inspect

def count(n):
    for i in range(n):
        yield i

def returns_value(n):
    yield from range(n)
    return "done"

def raises_stop():
    yield 1
    raise StopIteration("inside")

def fails_after(n):
    for i in range(n):
        yield i
    raise KeyError("after %d" % n)

def state_seen(box):
    box.append(inspect.getgeneratorstate(box[0]))
    yield 1
    box.append(inspect.getgeneratorstate(box[0]))
    yield 2

def exc_info_inside():
    yield repr(sys.exc_info()[1])
    try:
        raise ValueError("in gen")
    except ValueError:
        yield repr(sys.exc_info()[1])
    yield repr(sys.exc_info()[1])

def frames():
    f = sys._getframe()
    yield (f.f_code.co_name, f.f_back.f_code.co_name, f.f_lineno)
    yield (f.f_code.co_name, f.f_back.f_code.co_name, f.f_lineno)

def finally_runs(log):
    try:
        yield 1
        yield 2
    finally:
        log.append("finally")
"""


def test_values_return_values_and_exhaustion():
    differential(GENS + """
def f(n):
    out = []
    for rounds in range(3):
        out.append([x * 2 for x in count(n)])
        total = 0
        for x in count(n):
            total += x
        out.append(total)
        for x in returns_value(n):
            out.append(x)
        g = count(2)
        for x in g:
            out.append(("first", x))
        for x in g:                       # exhausted: no iteration
            out.append(("again", x))
    return out
""", [(5,), (0,)], name="f", expect="return")


def test_exceptions_from_a_resumed_generator():
    differential(GENS + """
def f(which):
    out = []
    for i in range(10):                  # warm
        out.extend(count(2))
    if which == 0:
        for x in raises_stop():          # StopIteration inside -> RuntimeError
            out.append(x)
    else:
        for x in fails_after(3):
            out.append(x)
    return out
""", [(0,), (1,)], name="f", expect="raise")


def test_generator_running_itself_raises_value_error():
    differential("""
def f():
    def gen():
        yield 1
        for x in me[0]:                  # the generator iterating itself
            yield x
    me = [None]
    out = []
    for i in range(10):
        me[0] = gen()
        try:
            for x in me[0]:
                out.append(x)
        except ValueError as e:
            out.append(str(e))
    return out
""", [()], name="f", expect="return")


def test_state_exc_info_frames_and_finally():
    differential(GENS + """
def f():
    out = []
    for i in range(10):
        box = []
        g = state_seen(box)
        box.insert(0, g)
        for x in g:
            out.append(x)
        out.append(box[1:])
        out.append(inspect.getgeneratorstate(g))
        try:
            raise KeyError("outer")
        except KeyError:
            out.extend(exc_info_inside())
            for x in exc_info_inside():
                out.append(x)
            out.append(repr(sys.exc_info()[1]))
        for x in frames():
            out.append(x)
        log = []
        for x in finally_runs(log):
            if x == 1:
                break
        out.append(log)
    return out
""", [()], name="f", expect="return")


def test_run_count_counts_each_resume_and_generators_stay_compiled():
    gen = fresh_function("""
def gen(n):
    for i in range(n):
        yield i
""", name="gen")
    drive = fresh_function("""
def drive(gen, n):
    total = 0
    for x in gen(n):
        total += x
    return total
""", name="drive")
    with jit_on():
        assert drive(gen, 3) == 3
        before = pyjion.info(gen).run_count
        assert drive(gen, 10) == 45
        after = pyjion.info(gen).run_count
        assert_compiled(gen)
        assert_compiled(drive)
    # one call that creates the generator, then 11 resumes (10 values and the end)
    assert after - before == 12
    assert inspect.isgeneratorfunction(gen)


def test_generators_made_directly_look_like_the_interpreters():
    differential("""
import inspect, sys, weakref
def plain(a, b=2, *, c=None):
    yield a + b
def defaults(a, b=10, c=20):
    yield (a, b, c)
def closure(k):
    def inner(n):
        for i in range(n):
            yield i * k
    return inner
def cell_arg(x):
    fns = [lambda: x]
    yield fns[0]()
    x = x + 1
    yield fns[0]()
def f():
    out = []
    for i in range(12):                  # warm: later calls make generators directly
        g = defaults(i)
        out.append((g.__name__, g.__qualname__, g.gi_code.co_name, inspect.getgeneratorstate(g),
                    g.gi_frame.f_lineno, g.gi_frame.f_lasti, g.gi_running, g.gi_yieldfrom))
        out.append(list(g))
        out.append(list(defaults(i, 1)))
        out.append(list(closure(3)(i % 4)))
        out.append(list(cell_arg(i)))
        g = defaults(1)
        r = weakref.ref(g)
        del g
        out.append(r() is None)
        g = defaults(2)
        try:
            g.send(5)
        except TypeError as e:
            out.append(str(e))
        g.close()
        out.append(inspect.getgeneratorstate(g))
        g = defaults(3)
        try:
            g.throw(KeyError("x"))
        except KeyError as e:
            out.append(repr(e))
        out.append(inspect.getgeneratorstate(g))
    return out
""", [()], name="f", expect="return")


def test_making_a_generator_at_the_recursion_limit():
    differential("""
import sys
def gen():
    yield 1
def down(n):
    if n == 0:
        return 0
    g = gen()
    return down(n - 1) + 1
def f():
    out = []
    for i in range(3):
        for x in gen():
            out.append(x)
        try:
            out.append(down(sys.getrecursionlimit()))
        except RecursionError as e:
            out.append(str(e))
    return out
""", [()], name="f", expect="return")
