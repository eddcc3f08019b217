"""The code heap (pyjion/codegen/machine/code_heap.cpp): machine code lives in pages
that are never writable and executable at once (W^X), and its memory follows
the code objects: freed when they die, flat under churn."""
import gc
import json

import pyjion
from pyjion import _codegen
from jitcheck import assert_compiled, check_python, fresh_function

# A broad program run eagerly (every function compiled at its first call) in a
# fresh interpreter; it then reports the entry addresses of some compiled
# functions and its own /proc/self/maps.
BROAD_PROGRAM = r'''
import json, sys
import pyjion

class Shape:
    def __init__(self, w, h):
        self.w, self.h = w, h
    def area(self):
        return self.w * self.h
    @property
    def double(self):
        return 2 * self.area()

class Square(Shape):
    def __init__(self, s):
        super().__init__(s, s)
    def __repr__(self):
        return "Square(%d)" % self.w

def gen(n):
    for i in range(n):
        if i % 3:
            yield i * i

def outer(k):
    total = 0
    def inner(x):
        nonlocal total
        total += x + k
        return total
    return inner

def fails(x):
    try:
        if x > 2:
            raise ValueError(x)
        return 1 / x
    except ZeroDivisionError:
        return None
    except ValueError as e:
        return str(e)
    finally:
        pass

def comprehensions(n):
    squares = [i * i for i in range(n)]
    evens = {i for i in squares if i % 2 == 0}
    table = {i: str(i) for i in evens}
    return sum(x for x in squares), len(evens), sorted(table.values())

async def coro(x):
    return x + 1

def run_coro(x):
    c = coro(x)
    try:
        c.send(None)
    except StopIteration as e:
        return e.value

def main():
    shapes = [Shape(2, 3), Square(4)]
    results = [s.area() for s in shapes] + [shapes[1].double, repr(shapes[1])]
    results.append(list(gen(10)))
    f = outer(5)
    results.append([f(i) for i in range(4)])
    results.append([fails(x) for x in (0, 1, 2, 3)])
    results.append(comprehensions(20))
    results.append(run_coro(41))
    results.append(sorted({"b": 2, "a": 1}.items(), key=lambda kv: kv[1]))
    return results

main()
functions = [main, Shape.area, Shape.__init__, Square.__repr__, gen, outer, fails, comprehensions,
             coro, run_coro, Shape.double.fget]
entries = {}
for fn in functions:
    assert pyjion.info(fn).compiled, (fn, pyjion.info(fn))
    entries[fn.__qualname__] = pyjion.native(fn)[2]
with open("/proc/self/maps") as f:
    maps = f.read().splitlines()
print(json.dumps({"entries": entries, "maps": maps, "stats": pyjion._codegen.code_heap_stats()}))
'''


def parse_maps(lines):
    """[(start, end, perms, path)] from /proc/self/maps lines."""
    out = []
    for line in lines:
        parts = line.split(None, 5)
        start, end = (int(x, 16) for x in parts[0].split("-"))
        inode = parts[4]
        path = parts[5].strip() if len(parts) > 5 else ""
        out.append((start, end, parts[1], path, inode))
    return out


def test_no_page_is_writable_and_executable():
    out = check_python(BROAD_PROGRAM, env={"PYJION": "1", "PYJION_THRESHOLD": "0"})
    report = json.loads(out.strip().splitlines()[-1])
    maps = parse_maps(report["maps"])
    wx = [m for m in maps if "w" in m[2] and "x" in m[2]]
    assert not wx, "writable and executable mappings: %r" % (wx,)
    assert report["stats"]["allocations"] >= len(report["entries"])
    assert report["stats"]["live_bytes"] > 0
    for name, entry in report["entries"].items():
        holding = [m for m in maps if m[0] <= entry < m[1]]
        assert len(holding) == 1, (name, hex(entry), holding)
        start, end, perms, path, inode = holding[0]
        # private anonymous memory, read+execute only
        assert perms == "r-xp", (name, holding[0])
        assert path == "" and inode == "0", (name, holding[0])


def churn_functions(n, keep=None):
    """Creates, calls (so compiles: eager mode) and drops n functions, each
    from a fresh source string (a new code object)."""
    for k in range(n):
        ns = {}
        exec(compile("def f(a, b):\n    c = a * %d + b\n    return [c, (c, a)]\n" % k, "<churn>", "exec"), ns)
        f = ns["f"]
        assert f(k, 1) == [k * k + 1, (k * k + 1, k)]
        if k % 500 == 0:
            assert_compiled(f)
        if keep is not None:
            keep.append(f)
        del ns, f


def test_code_memory_stays_flat_under_churn(jit):
    churn_functions(100)        # warm up: the arenas the steady state needs,
    churn_functions(100)        # and churn_functions' own code compiled with its profile
    gc.collect()
    before = _codegen.code_heap_stats()
    churn_functions(3000)
    gc.collect()
    after = _codegen.code_heap_stats()
    # 3000 compiled functions (and the module code that made each) held about
    # 10 MB of code; what stays is a few blocks and at most one arena more.
    assert after["live_bytes"] - before["live_bytes"] <= 16 * 1024, (before, after)
    assert after["allocations"] - before["allocations"] <= 8, (before, after)
    assert after["mapped_bytes"] - before["mapped_bytes"] <= 1 << 20, (before, after)
    assert after["arenas"] - before["arenas"] <= 1, (before, after)


def test_kept_functions_keep_their_code(jit):
    # The counter measures real code: functions that stay alive keep theirs
    # (and releasing them gives it back).
    gc.collect()
    before = _codegen.code_heap_stats()
    kept = []
    churn_functions(300, keep=kept)
    gc.collect()
    held = _codegen.code_heap_stats()
    sizes = sum(pyjion.info(f).code_size for f in kept)
    assert held["allocations"] - before["allocations"] >= 300, (before, held)
    assert held["live_bytes"] - before["live_bytes"] >= sizes, (before, held, sizes)
    assert held["mapped_bytes"] >= held["live_bytes"]
    del kept
    gc.collect()
    after = _codegen.code_heap_stats()
    assert after["live_bytes"] - before["live_bytes"] <= 16 * 1024, (before, held, after)


def test_code_dies_with_its_code_object(jit):
    f = fresh_function("def f(x):\n    return [x, x + 1, {x: x}]\n")
    assert f(3) == [3, 4, {3: 3}]
    size = assert_compiled(f).code_size
    gc.collect()
    before = _codegen.code_heap_stats()
    del f
    gc.collect()
    after = _codegen.code_heap_stats()
    assert before["live_bytes"] - after["live_bytes"] >= size, (before, after, size)
    assert after["allocations"] < before["allocations"], (before, after)
