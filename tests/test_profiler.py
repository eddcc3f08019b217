"""pyjion's call-level profiler against cProfile, and pyjion.profile's pstats views.

Each program runs twice in a fresh interpreter: once under cProfile, once under
pyjion.enable(profile=True) (with the JIT off and with it forced at threshold 0). For every
Python function of the program the call count, the primitive call count and the callers must
equal cProfile's. cProfile also records builtins (sorted, exec, __build_class__, ...), as
callers and as entries of their own. pyjion sees those that machine code calls: with the JIT
forced every such call is, and the builtins the program calls or that call it back must have
cProfile's entries and edges exactly. Without the JIT pyjion sees no builtin and records the
nearest Python frame instead, so a call that cProfile attributes to a builtin must appear in
pyjion under the Python function that called that builtin."""
import io
import marshal
import os
import pstats
import subprocess
import sys
import textwrap

import pytest

import pyjion
import pyjion.profile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

HARNESS = r'''
import marshal, sys, time
mode, prog_path, out_path, entry = sys.argv[1:5]
with open(prog_path) as f:
    code = compile(f.read(), prog_path, "exec")
g = {"__name__": "prog", "__file__": prog_path, "__builtins__": __builtins__}
if entry == "main":
    exec(code, g)

def run():
    if entry == "module":
        exec(code, g)
    else:
        g["main"]()

extra = {}
if mode == "cprofile":
    import cProfile
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    run()
    prof.disable()
    wall = time.perf_counter() - t0
    prof.create_stats()
    stats = prof.stats
else:
    import os, pyjion, pyjion.profile
    assert not pyjion.is_enabled()
    if os.environ.get("PROFILE_CLOCK"):
        pyjion.config(profile_clock=os.environ["PROFILE_CLOCK"])
    if os.environ.get("TREE_BOUNDS"):
        depth, nodes = map(int, os.environ["TREE_BOUNDS"].split(","))
        pyjion.config(tree_depth=depth, tree_nodes=nodes)
    pyjion.enable(profile=True, threshold=0, jit=(mode == "jit"))
    t0 = time.perf_counter()
    run()
    pyjion.disable()
    wall = time.perf_counter() - t0
    raw = pyjion.stats()["functions"]
    stats = pyjion.profile.to_pstats(raw)
    extra["raw"] = raw
    extra["jit"] = pyjion.stats()["jit"]
    if mode == "jit":
        extra["states"] = {(f.__code__.co_filename, f.__code__.co_firstlineno, f.__code__.co_name):
                           pyjion.info(f).state for f in g.values() if type(f) is type(run)}
with open(out_path, "wb") as f:
    marshal.dump({"stats": stats, "wall": wall, **extra}, f)
'''


def child_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYJION")}
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run_profiled(tmp_path, source, mode, entry="main", clock=None, tree_bounds=None):
    harness = tmp_path / "harness.py"
    harness.write_text(HARNESS)
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent(source))
    out = tmp_path / ("out-%s.marshal" % mode)
    env = child_env()
    if clock is not None:
        env["PROFILE_CLOCK"] = clock
    if tree_bounds is not None:
        env["TREE_BOUNDS"] = "%d,%d" % tree_bounds
    proc = subprocess.run([sys.executable, str(harness), mode, str(prog), str(out), entry],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, "harness (%s) failed:\n%s%s" % (mode, proc.stdout, proc.stderr)
    with open(out, "rb") as f:
        data = marshal.load(f)
    data["prog"] = str(prog)
    return data


def is_builtin(key):
    return key[0] == "~"


def expected_callers(cp, prog, func):
    """What pyjion should report as func's callers (restricted to the program's functions),
    from cProfile's data: {caller: (nc, cc)} for direct calls, plus calls through builtins
    credited to the builtin's Python caller. Returns (exact, pools): pools are calls through a
    builtin that several program functions called, as (set of candidate callers, nc)."""
    exact = {}
    pools = []
    for caller, (nc, cc, tt, ct) in cp[func][4].items():
        if caller[0] == prog:
            old = exact.get(caller, (0, 0, None))
            exact[caller] = (old[0] + nc, old[1] + cc, "direct" if old[2] in (None, "direct") else "mixed")
        elif is_builtin(caller):
            outer = {c for c in cp.get(caller, (0, 0, 0, 0, {}))[4] if c[0] == prog}
            if len(outer) == 1:
                (c,) = outer
                old = exact.get(c, (0, 0, None))
                exact[c] = (old[0] + nc, old[1] + cc, "mixed")
            elif len(outer) > 1:
                pools.append((outer, nc))
            # no Python caller inside the program: the builtin ran at the top (e.g. exec)
    return exact, pools


def program_keys(stats, prog):
    """The program's functions, the builtins they called and the builtins that called them."""
    keys = {k for k in stats if k[0] == prog}
    for k, (cc, nc, tt, ct, callers) in stats.items():
        if k[0] == prog:
            keys.update(c for c in callers if is_builtin(c))
        elif is_builtin(k) and any(c[0] == prog for c in callers):
            keys.add(k)
    return keys


def compare_exactly(cp, pj, prog):
    """Builtins included: the same entries, counts and edges among the program's keys."""
    theirs, mine = program_keys(cp, prog), program_keys(pj, prog)
    assert sorted(mine) == sorted(theirs), "entries differ: pyjion only %s, cProfile only %s" % (
        sorted(mine - theirs), sorted(theirs - mine))
    problems = []
    for func in sorted(theirs):
        t_callers = {c: v[:2] for c, v in cp[func][4].items() if c in theirs}
        m_callers = {c: v[:2] for c, v in pj[func][4].items() if c in theirs}
        # a builtin's whole count may include calls from outside the program (the harness)
        if func[0] == prog and pj[func][:2] != cp[func][:2]:
            problems.append("%s: calls %r, cProfile %r" % (func[2], pj[func][:2], cp[func][:2]))
        if t_callers != m_callers:
            problems.append("%s: callers %r, cProfile %r" % (func[2], m_callers, t_callers))
    assert not problems, "pyjion's profile differs from cProfile's:\n" + "\n".join(problems)


def compare_with_cprofile(cp, pj, prog, builtins_seen=False):
    if builtins_seen:
        return compare_exactly(cp, pj, prog)
    mine = {k: v for k, v in pj.items() if k[0] == prog}
    theirs = {k: v for k, v in cp.items() if k[0] == prog}
    assert sorted(mine) == sorted(theirs), "functions differ"
    problems = []
    for func, (cc, nc, tt, ct, callers) in theirs.items():
        p_cc, p_nc, p_tt, p_ct, p_callers = mine[func]
        if (p_nc, p_cc) != (nc, cc):
            problems.append("%s: calls %d/%d, cProfile %d/%d" % (func[2], p_nc, p_cc, nc, cc))
        got = {c: v[:2] for c, v in p_callers.items() if c[0] == prog}
        exact, pools = expected_callers(cp, prog, func)
        pooled = set().union(*(cands for cands, _ in pools)) if pools else set()
        for caller, (e_nc, e_cc, how) in exact.items():
            if caller in pooled:
                continue
            g_nc, g_cc = got.get(caller, (0, 0))
            # primitive counts of an edge only match when cProfile saw the same edge
            if g_nc != e_nc or (how == "direct" and g_cc != e_cc):
                problems.append("%s <- %s: %r, cProfile %r" % (func[2], caller[2], (g_nc, g_cc),
                                                                (e_nc, e_cc)))
        extra = set(got) - set(exact) - pooled
        if extra:
            problems.append("%s: unexpected callers %s" % (func[2], sorted(c[2] for c in extra)))
        if pools:
            direct = sum(exact.get(c, (0, 0))[0] for c in pooled)
            via_builtins = sum(nc for _, nc in pools)
            got_pooled = sum(got.get(c, (0, 0))[0] for c in pooled)
            if got_pooled != direct + via_builtins:
                problems.append("%s: %d calls from %s, cProfile %d"
                                % (func[2], got_pooled, sorted(c[2] for c in pooled),
                                   direct + via_builtins))
    assert not problems, "pyjion's profile differs from cProfile's:\n" + "\n".join(problems)


def check_times(data):
    """Own and total times are sane, and the call graph adds up."""
    pj, raw = data["stats"], data["raw"]
    eps = 1e-9
    for func, (cc, nc, tt, ct, callers) in pj.items():
        assert tt >= 0 and ct >= 0, func
        assert tt <= ct * (1 + 1e-6) + eps, (func, tt, ct)
        assert 0 <= cc <= nc, func
        for caller, (e_nc, e_cc, e_tt, e_ct) in callers.items():
            assert 0 <= e_cc <= e_nc <= nc, (func, caller)
            assert 0 <= e_tt <= tt * (1 + 1e-6) + eps, (func, caller)
            assert 0 <= e_ct <= ct * (1 + 1e-6) + eps, (func, caller)
    for func, entry in raw.items():
        if func[0] == data["prog"]:
            # every call of a program function came from a profiled Python frame (run() at least)
            assert sum(e["calls"] for e in entry["callers"].values()) == entry["calls"], func
    main = [v for k, v in pj.items() if k[0] == data["prog"] and k[2] in ("main", "<module>")]
    assert main
    for cc, nc, tt, ct, callers in main:
        assert ct <= data["wall"] * 1.05 + 1e-3, (ct, data["wall"])


PROGRAMS = {
    # asyncio: each resume of a coroutine is a call, as cProfile counts it
    "coroutines": """
        import asyncio

        async def leaf(i):
            await asyncio.sleep(0)
            return i

        async def worker(n):
            total = 0
            for i in range(n):
                total += await leaf(i)
            return total

        async def both():
            return sum(await asyncio.gather(worker(20), worker(30)))

        def main():
            return asyncio.run(both())
    """,
    "recursion": """
        def fib(n):
            if n < 2:
                return n
            return fib(n - 1) + fib(n - 2)

        def fact(n):
            return 1 if n <= 1 else n * fact(n - 1)

        def sum_to(n, acc=0):
            if n == 0:
                return acc
            return sum_to(n - 1, acc + n)

        def main():
            total = 0
            for i in range(12):
                total += fib(i)
            total += fact(25) + sum_to(200)
            return total
    """,
    "mutual_recursion": """
        def is_even(n):
            if n == 0:
                return True
            return is_odd(n - 1)

        def is_odd(n):
            if n == 0:
                return False
            return is_even(n - 1)

        def a(n):
            return 0 if n <= 0 else b(n - 1) + 1

        def b(n):
            return 0 if n <= 0 else c(n - 2) + 1

        def c(n):
            return 0 if n <= 0 else a(n - 1) + b(n - 3) + 1

        def main():
            hits = 0
            for i in range(20):
                hits += is_even(i) + is_odd(i + 3)
            return hits + a(25)
    """,
    "methods": """
        class Vec:
            def __init__(self, x, y):
                self.x = x
                self.y = y

            def __add__(self, other):
                return Vec(self.x + other.x, self.y + other.y)

            def __eq__(self, other):
                return self.x == other.x and self.y == other.y

            def dot(self, other):
                return self.x * other.x + self.y * other.y

            @property
            def norm2(self):
                return self.dot(self)

            @classmethod
            def zero(cls):
                return cls(0, 0)

            @staticmethod
            def diag(v):
                return Vec(v, v)

        class Vec3(Vec):
            def __init__(self, x, y, z=0):
                super().__init__(x, y)
                self.z = z

            def dot(self, other):
                return super().dot(other) + self.z * getattr(other, "z", 0)

        class Countdown:
            def __init__(self, n):
                self.n = n

            def __iter__(self):
                return self

            def __next__(self):
                if self.n <= 0:
                    raise StopIteration
                self.n -= 1
                return self.n

        class Ctx:
            entered = 0

            def __enter__(self):
                Ctx.entered += 1
                return self

            def __exit__(self, *exc):
                return False

        def main():
            acc = Vec.zero()
            for i in range(10):
                acc = acc + Vec.diag(i)
                if acc == Vec(i, i):
                    acc = acc + Vec(1, 0)
            total = acc.norm2
            for k in Countdown(6):
                with Ctx():
                    total += Vec3(k, k, k).dot(Vec3(1, 1, 1))
            return total
    """,
    "generators": """
        def count_up(n):
            i = 0
            while i < n:
                yield i
                i += 1

        def evens(n):
            for x in count_up(n):
                if x % 2 == 0:
                    yield x

        def delegate(n):
            yield from count_up(n)
            yield from evens(n)
            return "done"

        def tree(depth):
            if depth == 0:
                yield 1
                return
            yield from tree(depth - 1)
            yield from tree(depth - 1)

        def early(n):
            try:
                for i in range(n):
                    yield i
            finally:
                cleanup()

        def cleanup():
            return None

        def main():
            total = 0
            for v in delegate(10):
                total += v
            for v in tree(4):
                total += v
            for v in early(100):
                if v == 3:
                    break
            squares = [x * x for x in range(10)]
            total += sum(squares)
            for v in (y + 1 for y in count_up(5)):
                total += v
            return total
    """,
    "generator_methods": """
        def gen():
            try:
                yield 1
                yield 2
            except ValueError:
                yield 3
            finally:
                fin()

        def fin():
            return 0

        def main():
            g = gen()
            for v in g:
                if v == 1:
                    r = g.throw(ValueError)
                    break
            g.close()
            h = gen()
            next(h)
            h.close()
            k = gen()
            next(k)
            del k
            return r
    """,
    "closures": """
        def make_adder(k):
            def add(x):
                return x + k
            return add

        def memo(f):
            cache = {}
            def wrapper(n):
                if n not in cache:
                    cache[n] = f(n)
                return cache[n]
            return wrapper

        @memo
        def mfib(n):
            return n if n < 2 else mfib(n - 1) + mfib(n - 2)

        def counter():
            count = 0
            def bump():
                nonlocal count
                count += 1
                return count
            return bump

        def main():
            total = 0
            for i in range(5):
                total += make_adder(i)(10)
            double = lambda x: x * 2
            for i in range(3):
                total += double(i)
            total += mfib(25)
            bump = counter()
            for _ in range(4):
                total += bump()
            return total
    """,
    "exceptions": """
        class Oops(Exception):
            pass

        def leaf(n):
            if n % 3 == 0:
                raise Oops(n)
            return n

        def middle(n):
            return leaf(n) + 1

        def top(n):
            try:
                return middle(n)
            except Oops:
                return -1

        def deep(n):
            if n == 0:
                raise ValueError("bottom")
            return deep(n - 1)

        def catcher():
            try:
                deep(12)
            except ValueError:
                return 1

        def cleanup(n):
            try:
                return middle(n)
            finally:
                note()

        def note():
            return 0

        def failing_gen():
            yield 1
            raise KeyError("gen")

        def main():
            total = 0
            for i in range(10):
                total += top(i)
            total += catcher()
            total += cleanup(1)
            try:
                cleanup(3)
            except Oops:
                total += 1
            try:
                for v in failing_gen():
                    total += v
            except KeyError:
                total += 1
            return total
    """,
    "through_builtins": """
        def key(x):
            return -x

        def square(x):
            return x * x

        def pred(x):
            return x % 2 == 0

        class Made:
            def __init__(self):
                self.v = 1

        def build():
            class Local:
                attr = key(3)
            return Local

        def main():
            data = sorted(range(20), key=key)
            total = sum(map(square, data)) + len(list(filter(pred, data)))
            total += max(data, key=key)
            build()
            build()
            return total + Made().v
    """,
}


@pytest.mark.parametrize("mode", ["interp", "jit"])
@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_counts_and_callers_match_cprofile(tmp_path, program, mode):
    source = PROGRAMS[program]
    cp = run_profiled(tmp_path, source, "cprofile")
    pj = run_profiled(tmp_path, source, mode)
    prog = pj["prog"]
    assert any(k[0] == prog for k in pj["stats"]), "pyjion recorded nothing for the program"
    compare_with_cprofile(cp["stats"], pj["stats"], prog, mode == "jit")
    check_times(pj)
    if mode == "jit":
        check_compiled(pj)


@pytest.mark.parametrize("bounds", [(3, 10000), (100, 16)], ids=["shallow", "small"])
@pytest.mark.parametrize("mode", ["interp", "jit"])
@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_folded_calls_match_cprofile(tmp_path, program, mode, bounds):
    # The flat profile is summed from the call tree's nodes (exact calls) and
    # kept the old way for calls the tree cannot hold (profiler.h): with a
    # tree three levels deep, or of 16 nodes, most calls are folded, below
    # exact ones of the same functions and caller->callee pairs.
    source = PROGRAMS[program]
    cp = run_profiled(tmp_path, source, "cprofile")
    pj = run_profiled(tmp_path, source, mode, tree_bounds=bounds)
    compare_with_cprofile(cp["stats"], pj["stats"], pj["prog"], mode == "jit")
    check_times(pj)


CLASS_CALLS = """
    class Point:
        def __init__(self, x, y):
            self.x = x
            self.y = y

    def main():
        points = []
        for i in range(300):
            points.append(Point(i, -i))
        return len(points)
"""


@pytest.mark.parametrize("mode", ["interp", "jit"])
def test_every_init_of_a_class_call_in_a_loop_is_counted(tmp_path, mode):
    # A warm class call with a simple Python __init__: 3.13's interpreter
    # specialises it (CALL_ALLOC_AND_ENTER_INIT) to push __init__'s frame
    # without asking the PEP 523 hook; profiled code must still show every call.
    cp = run_profiled(tmp_path, CLASS_CALLS, "cprofile")
    pj = run_profiled(tmp_path, CLASS_CALLS, mode)
    prog = pj["prog"]
    init = [v for k, v in pj["stats"].items() if k[0] == prog and k[2] == "__init__"]
    assert len(init) == 1 and init[0][:2] == (300, 300)
    compare_with_cprofile(cp["stats"], pj["stats"], prog, mode == "jit")


def check_compiled(data):
    """With the JIT forced (threshold 0), every function that ran was handed to the compiler."""
    ran = [k for k in data["states"] if k in data["stats"]]
    assert ran
    for key in ran:
        assert data["states"][key] in ("compiled", "failed"), (key, data["states"][key])


MODULE_PROGRAM = """
    def helper(n):
        return n + 1

    class Shape:
        sides = helper(3)

        def area(self):
            return helper(self.sides)

    class Square(Shape):
        sides = helper(3)

    total = 0
    for i in range(5):
        total += helper(i) + Square().area()

    def later():
        class Inner:
            size = helper(1)
        return Inner

    later()
"""


@pytest.mark.parametrize("mode", ["interp", "jit"])
def test_module_and_class_bodies_match_cprofile(tmp_path, mode):
    """Module bodies and class bodies are frames too: counted once each, with their callers."""
    cp = run_profiled(tmp_path, MODULE_PROGRAM, "cprofile", entry="module")
    pj = run_profiled(tmp_path, MODULE_PROGRAM, mode, entry="module")
    prog = pj["prog"]
    compare_with_cprofile(cp["stats"], pj["stats"], prog, mode == "jit")
    names = {k[2]: v for k, v in pj["stats"].items() if k[0] == prog}
    assert names["<module>"][:2] == (1, 1)
    assert names["Shape"][:2] == names["Square"][:2] == names["Inner"][:2] == (1, 1)
    assert names["helper"][:2] == (13, 13)
    if mode == "jit":
        # as in cProfile: the class body's caller is __build_class__, called by later()
        build = ("~", 0, "<built-in method builtins.__build_class__>")
        assert set(names["Inner"][4]) == {build}
        assert any(c[2] == "later" for c in pj["stats"][build][4])
    else:
        assert {c[2] for c in names["Inner"][4]} == {"later"}
    check_times(pj)


TIMED_PROGRAM = """
    import time

    def spin(seconds):
        end = time.perf_counter() + seconds
        n = 0
        while time.perf_counter() < end:
            n += 1
        return n

    def light():
        return 1

    def outer():
        spin(0.04)
        return light()

    def main():
        outer()
        spin(0.03)
        return light()
"""


@pytest.mark.parametrize("clock", ["ticks", "tsc"])
@pytest.mark.parametrize("mode", ["interp", "jit"])
def test_times_are_consistent(tmp_path, mode, clock):
    cp = run_profiled(tmp_path, TIMED_PROGRAM, "cprofile")
    data = run_profiled(tmp_path, TIMED_PROGRAM, mode, clock=clock)
    prog = data["prog"]
    # (how often spin's loop calls perf_counter depends on the time: Python functions only)
    compare_with_cprofile(cp["stats"], data["stats"], prog)
    check_times(data)
    st = {k[2]: v for k, v in data["stats"].items() if k[0] == prog}
    cps = {k[2]: v for k, v in cp["stats"].items() if k[0] == prog}
    cc, nc, tt, ct, callers = st["spin"]
    # spin busy-waits 0.07 s in all: in its own code, or (in machine code, where pyjion times
    # the builtins it calls, as cProfile does) in time.perf_counter
    assert 0.07 * 0.9 <= ct <= 0.07 * 1.5 + 0.02, ct
    clock = data["stats"].get(("~", 0, "<built-in method time.perf_counter>"))
    if mode == "jit":
        from_spin = [v for c, v in clock[4].items() if c[2] == "spin"]
        assert len(from_spin) == 1 and from_spin[0][0] > 100, clock
        assert tt + from_spin[0][3] >= 0.9 * ct, (tt, from_spin, ct)
        assert tt + from_spin[0][3] <= ct * (1 + 1e-6) + 1e-6, (tt, from_spin, ct)
    else:
        assert clock is None                    # interpreted code's builtins are not seen
        assert tt >= 0.9 * ct, (tt, ct)
    by_caller = {c[2]: v for c, v in callers.items()}
    assert 0.04 * 0.9 <= by_caller["outer"][3] <= st["outer"][3] * (1 + 1e-6)
    assert 0.03 * 0.9 <= by_caller["main"][3]
    main_ct = st["main"][3]
    assert main_ct >= st["outer"][3] + by_caller["main"][3] - 1e-6
    assert st["main"][2] < 0.3 * main_ct        # main itself does little
    assert st["light"][3] < 0.01
    # cumulative times agree with cProfile's within 25%
    for name in ("main", "outer", "spin"):
        assert abs(st[name][3] - cps[name][3]) <= 0.25 * cps[name][3] + 0.01, (name, st[name], cps[name])
    assert main_ct <= data["wall"] * 1.05 + 1e-3


# ---- pstats views (pyjion.profile) --------------------------------------------------------

HAND_MADE = {
    "functions": {
        ("/src/a.py", 10, "f"): {
            "calls": 5, "primitive_calls": 3, "total_time": 0.5, "own_time": 0.25,
            "callers": {
                ("/src/a.py", 1, "main"): {"calls": 2, "primitive_calls": 2, "total_time": 0.4,
                                           "own_time": 0.125},
                ("/src/a.py", 10, "f"): {"calls": 3, "primitive_calls": 1, "total_time": 0.1,
                                         "own_time": 0.125},
            }},
        ("/src/a.py", 1, "main"): {
            "calls": 1, "primitive_calls": 1, "total_time": 0.75, "own_time": 0.25,
            "callers": {}},
    },
    "jit": {"compiled": 0, "failed": 0, "failed_reasons": {}, "compile_time_s": 0.0,
            "code_bytes": 0},
}


def test_to_pstats_tuple_orders():
    st = pyjion.profile.to_pstats(HAND_MADE)
    assert st == {
        # (cc, nc, tt, ct, callers); callers: (nc, cc, tt, ct)  -- as cProfile.Profile.stats
        ("/src/a.py", 10, "f"): (3, 5, 0.25, 0.5, {("/src/a.py", 1, "main"): (2, 2, 0.125, 0.4),
                                                   ("/src/a.py", 10, "f"): (3, 1, 0.125, 0.1)}),
        ("/src/a.py", 1, "main"): (1, 1, 0.25, 0.75, {}),
    }
    # the functions part alone is accepted too
    assert pyjion.profile.to_pstats(HAND_MADE["functions"]) == st


def test_to_pstats_matches_cprofile_layout():
    """The same shape as cProfile's own dict: pstats computes the same totals from both."""
    import cProfile

    def work(n):
        return n if n < 2 else work(n - 1) + work(n - 2)

    prof = cProfile.Profile()
    prof.runcall(work, 6)
    prof.create_stats()
    key = (work.__code__.co_filename, work.__code__.co_firstlineno, "work")
    cc, nc, tt, ct, callers = prof.stats[key]
    as_pyjion = {key: {"calls": nc, "primitive_calls": cc, "own_time": tt, "total_time": ct,
                       "callers": {c: {"calls": v[0], "primitive_calls": v[1], "own_time": v[2],
                                       "total_time": v[3]} for c, v in callers.items()}}}
    assert pyjion.profile.to_pstats(as_pyjion) == {key: prof.stats[key]}


def test_dump_stats_loads_in_pstats(tmp_path):
    path = str(tmp_path / "hand.prof")
    assert pyjion.profile.dump_stats(path, HAND_MADE) == path
    st = pstats.Stats(path)
    assert st.stats == pyjion.profile.to_pstats(HAND_MADE)
    assert st.total_calls == 6 and st.prim_calls == 4
    assert st.total_tt == pytest.approx(0.5)


def test_print_stats_table():
    out = io.StringIO()
    pyjion.profile.print_stats(stats=HAND_MADE, stream=out)
    text = out.getvalue()
    assert "6 function calls (4 primitive calls) in 0.500 seconds" in text
    assert "Ordered by: cumulative time" in text
    lines = [l for l in text.splitlines() if l.strip().endswith(("(f)", "(main)"))]
    assert lines[0].endswith("a.py:1(main)")                 # cumulative: main first
    assert lines[1].split()[0] == "5/3"
    assert lines[1].endswith("a.py:10(f)")
    assert "/src/" not in text                                # dirs stripped, as cProfile does
    out = io.StringIO()
    pyjion.profile.print_stats(sort="ncalls", limit=1, stream=out, stats=HAND_MADE)
    text = out.getvalue()
    assert "List reduced from 2 to 1" in text
    assert "a.py:10(f)" in text and "(main)" not in text.split("List reduced")[1]
    out = io.StringIO()
    pyjion.profile.print_stats(stats={"functions": {}}, stream=out)
    assert "0 function calls in 0.000 seconds" in out.getvalue()


def test_profile_object_for_pstats():
    st = pstats.Stats(pyjion.profile.Profile(HAND_MADE))
    assert st.stats == pyjion.profile.to_pstats(HAND_MADE)
    out = io.StringIO()
    pstats.Stats(pyjion.profile.Profile(HAND_MADE), stream=out).sort_stats("tottime").print_callers()
    assert "was called by" in out.getvalue()


PSTATS_PROGRAM = """
    import sys, io, pstats
    import pyjion, pyjion.profile

    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    def main():
        return fib(15)

    pyjion.enable(profile=True, threshold=0)
    main()
    pyjion.disable()
    pyjion.profile.dump_stats(sys.argv[1])
    st = pstats.Stats(pyjion.profile.Profile())
    key = (__file__, fib.__code__.co_firstlineno, "fib")
    print(st.stats[key][:2])
    buf = io.StringIO()
    pyjion.profile.print_stats(sort="calls", limit=3, stream=buf)
    print(buf.getvalue())
"""


def test_real_profile_round_trip(tmp_path):
    prog = tmp_path / "fibprog.py"
    prog.write_text(textwrap.dedent(PSTATS_PROGRAM))
    path = tmp_path / "fib.prof"
    proc = subprocess.run([sys.executable, str(prog), str(path)], capture_output=True, text=True,
                          env=child_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    # fib(15) makes 1973 calls, one of them primitive
    assert proc.stdout.splitlines()[0] == "(1, 1973)"
    assert "1973/1" in proc.stdout and "fibprog.py:5(fib)" in proc.stdout
    st = pstats.Stats(str(path))
    key = (str(prog), 5, "fib")
    assert st.stats[key][:2] == (1, 1973)
    assert st.stats[key][4][(str(prog), 8, "main")][:2] == (1, 1)
    assert st.stats[key][4][key][:2] == (1972, 2)       # as cProfile counts the fib->fib edge
    # python -m pstats reads it too
    proc = subprocess.run([sys.executable, "-m", "pstats", str(path)],
                          input="sort calls\nstats 3\ncallers fib\nquit\n", capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "1973/1" in proc.stdout
    assert "was called by" in proc.stdout and "fibprog.py:8(main)" in proc.stdout


PROFILE_OBJECT_PROGRAM = """
    import pstats, sys
    import pyjion, pyjion.profile

    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    def unprofiled():
        return 0

    unprofiled()
    prof = pyjion.profile.Profile()
    print(prof.runcall(fib, 10), pyjion.is_enabled())
    unprofiled()
    st = pstats.Stats(prof)
    names = sorted(k[2] for k in st.stats)
    print(names, st.stats[(__file__, 5, "fib")][:2])

    pyjion.enable(threshold=0)
    with pyjion.profile.Profile() as prof:
        fib(5)
        fib(3)
    print(pyjion.is_enabled(), pyjion.config()["profile"])
    prof.dump_stats(sys.argv[1])
    st = pstats.Stats(sys.argv[1])
    # (builtins pyjion's own compiled code called while profiling, such as the
    # codegen's exit_counts() in the snapshot, are shown as cProfile shows its
    # Profiler.disable(); none is the program's)
    print(sorted(k[2] for k in st.stats if k[0] != "~"), st.stats[(__file__, 5, "fib")][:2])
    print([k for k, v in st.stats.items() if k[0] == "~" and any(c[0] == __file__ for c in v[4])])
"""


def test_profile_object(tmp_path):
    """pyjion.profile.Profile works as cProfile.Profile does: runcall, with, pstats.Stats(p),
    dump_stats; each Profile starts empty and holds only what ran while it was enabled."""
    prog = tmp_path / "objprog.py"
    prog.write_text(textwrap.dedent(PROFILE_OBJECT_PROGRAM))
    path = tmp_path / "obj.prof"
    proc = subprocess.run([sys.executable, str(prog), str(path)], capture_output=True, text=True,
                          env=child_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "55 False",                                  # the hook it installed is gone again
        "['fib'] (1, 177)",
        "True False",                                # a hook installed before stays
        "['fib'] (2, 20)",                           # fib(5) + fib(3): 15 + 5 calls
        "[]",
    ]
