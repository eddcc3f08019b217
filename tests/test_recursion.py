"""Recursion with the hook installed: the recursion limit behaves as on stock
CPython, and a raised limit ends in RecursionError, never a segfault (with the
hook every Python call nests C frames)."""
import sys
import textwrap

import pytest

import pyjion
from jitcheck import (PY313, SAMPLING_PRELUDE, assert_compiled, assert_too_large, check_python, jit_off, jit_on,
                      make_function, register_source)

DEPTH = """
import sys
import pyjion

def measure():
    n = 0
    def r():
        nonlocal n
        n += 1
        r()
    try:
        r()
    except RecursionError as exc:
        return n, str(exc)
    return n, None
"""


def test_default_limit_matches_stock():
    ns = {}
    exec(compile(DEPTH, register_source(DEPTH, "rec"), "exec"), ns)
    with jit_off():
        stock = ns["measure"]()
    with jit_on():
        hooked = ns["measure"]()
    assert stock[1] == "maximum recursion depth exceeded"
    assert hooked == stock


def test_raised_limit_deep_recursion_raises_instead_of_crashing():
    out = check_python(DEPTH + """
sys.setrecursionlimit(10 ** 6)
pyjion.enable(threshold=0)
n, msg = measure()
print(n, msg)
n2, msg2 = measure()           # and again: the first overflow left nothing broken
# (the first run's outermost call went through the hook, which compiled r, and
# so used a few hundred bytes more C stack than the direct calls after it)
print(abs(n2 - n) <= 64, msg2 == msg)
print(sum(range(10)))
""", timeout=120)
    first, second, last = out.splitlines()
    n, msg = first.split(" ", 1)
    assert int(n) > 5000
    assert msg.startswith("maximum recursion depth exceeded")
    assert second == "True True"
    assert last == "45"


def test_raised_limit_in_a_thread_with_a_small_stack():
    out = check_python(DEPTH + """
import threading
sys.setrecursionlimit(10 ** 6)
threading.stack_size(512 * 1024)
pyjion.enable(threshold=0)
res = []
t = threading.Thread(target=lambda: res.append(measure()))
t.start()
t.join()
print(res[0][0] > 100, res[0][1])
""", timeout=120)
    ok, msg = out.strip().split(" ", 1)
    assert ok == "True"
    assert msg.startswith("maximum recursion depth exceeded")


def test_compiled_recursion_without_the_hook_in_a_thread_with_a_small_stack():
    # CPython 3.13's warm-up by samples: no hook; the interpreter calls a
    # compiled function through its vectorcall, so every level nests C
    # frames: near the end of a 256 KB stack a RecursionError, not a crash.
    if not PY313:
        pytest.skip("warm-up by samples is CPython 3.12+'s")
    out = check_python(SAMPLING_PRELUDE + """
import threading

def down(n):
    if SAMPLE:
        _sample_now()
    if n == 0:
        return 0
    return down(n - 1) + 1

for _ in range(3):
    down(5)
SAMPLE = True
down(1)
SAMPLE = False
assert pyjion.info(down).compiled
sys.setrecursionlimit(10 ** 6)
res = []

def body():
    try:
        res.append(down(200000))
    except RecursionError as e:
        res.append(str(e))

threading.stack_size(256 * 1024)
t = threading.Thread(target=body)
t.start()
t.join()
print(res[0], down(50))
""", env={"PYJION": "1"}, timeout=120)
    assert out.strip() == "maximum recursion depth exceeded (C stack nearly exhausted) 50"


RECURSIVE_ADD = """
def add(a, b):
    c = a + b
    return c
"""


class Recurse:
    """a + b calls add(...) again until n reaches 0: recursion that goes
    through the compiled function at every level."""

    def __init__(self, add, n):
        self.add, self.n = add, n

    def __add__(self, other):
        if self.n == 0:
            return other
        return self.add(Recurse(self.add, self.n - 1), other + 1)


def test_recursion_through_compiled_code():
    add = make_function(RECURSIVE_ADD, register_source(RECURSIVE_ADD, "rec"))
    with jit_on():
        assert add(Recurse(add, 200), 0) == 200
        assert_compiled(add)
        assert pyjion.info(add).run_count == 201


def test_recursion_limit_through_compiled_code_matches_stock():
    src = RECURSIVE_ADD
    stock_add = make_function(src, register_source(src, "rec"))
    jit_add = make_function(src, register_source(src, "rec"))

    def deepest(add):
        lo, hi = 1, 5000          # the deepest n that still works
        msg = None
        while lo < hi:
            mid = (lo + hi + 1) // 2
            try:
                add(Recurse(add, mid), 0)
                lo = mid
            except RecursionError as exc:
                hi = mid - 1
                msg = str(exc)
        return lo, msg

    with jit_off():
        stock = deepest(stock_add)
    with jit_on():
        jitted = deepest(jit_add)
    assert_compiled(jit_add)
    assert stock[1] is not None and "maximum recursion depth exceeded" in stock[1]
    assert jitted == stock


def test_raised_limit_recursion_through_compiled_code_does_not_crash():
    # Stock CPython itself overflows the C stack here (every level goes
    # through a C slot); with the hook installed this must be a RecursionError.
    out = check_python(RECURSIVE_ADD + '''
import sys
import pyjion

class Recurse:
    def __init__(self, n):
        self.n = n
    def __add__(self, other):
        if self.n == 0:
            return other
        return add(Recurse(self.n - 1), other + 1)

sys.setrecursionlimit(10 ** 6)
pyjion.enable(threshold=0)
print(add(Recurse(100), 0))
try:
    add(Recurse(10 ** 6), 0)
except RecursionError as exc:
    print("RecursionError", exc)
print(pyjion.info(add).state)
print(add(Recurse(100), 1))
''', timeout=120)
    lines = out.splitlines()
    assert lines[0] == "100"
    assert lines[1].startswith("RecursionError maximum recursion depth exceeded")
    assert lines[2] == "compiled"
    assert lines[3] == "101"


def test_recursive_function_compiles_and_runs(jit):
    # a recursive function calling itself through a global (LOAD_GLOBAL)
    src = textwrap.dedent("""
    def fact(n):
        if n <= 1:
            return 1
        return n * fact(n - 1)
    """)
    fact = make_function(src, register_source(src, "rec"))
    assert fact(30) == 265252859812191058636308480000000
    assert_compiled(fact)
    assert pyjion.info(fact).run_count == 30
    with pytest.raises(RecursionError):
        fact(10 ** 6)
    assert fact(5) == 120
    assert_compiled(fact)


EXCEPT_STAR_FACT = textwrap.dedent("""
def fact(n):
    try:
        r = 1 if n <= 1 else n * fact(n - 1)
    except* ZeroDivisionError:
        r = 0
    return r
""")


def test_recursive_function_fails_to_compile_but_runs(jit, size_limit):
    # over the size limit: every level runs interpreted
    fact = make_function(EXCEPT_STAR_FACT, register_source(EXCEPT_STAR_FACT, "rec"))
    assert fact(30) == 265252859812191058636308480000000
    assert_too_large(fact, size_limit)
    assert pyjion.info(fact).run_count == 30
    with pytest.raises(RecursionError):         # not matched by except*: propagates
        fact(10 ** 6)
    assert fact(5) == 120
    assert_too_large(fact, size_limit)


def test_recursive_except_star_function_compiles(jit):
    fact = make_function(EXCEPT_STAR_FACT, register_source(EXCEPT_STAR_FACT, "rec"))
    assert fact(30) == 265252859812191058636308480000000
    assert_compiled(fact)
    assert pyjion.info(fact).run_count == 30
    with pytest.raises(RecursionError):
        fact(10 ** 6)
    assert fact(5) == 120
    assert_compiled(fact)
