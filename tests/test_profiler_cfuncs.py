"""C functions in pyjion's profile: the builtins and C methods that machine code calls.

cProfile gives each C function a CALL instruction calls (a builtin function, or a method
descriptor called with self) an entry of its own, keyed ("~", 0, label), and a Python function
that such a C function calls back (sorted's key, a generator driven by sum) has the C function
as caller. With the JIT forced (threshold 0) every call of the program is made by machine code,
and pyjion's profile must have cProfile's entries, counts and edges exactly, for the program's
Python functions and for the C functions they call or are called by."""
import io
import os
import pstats
import subprocess
import sys
import textwrap

import pytest

from test_profiler import check_times, child_env, compare_exactly, run_profiled

PROGRAMS = {
    "sorted_key": """
        def key(x):
            return -x

        def pair_key(p):
            return p[1]

        def main():
            data = sorted(range(30), key=key)
            pairs = sorted([(i, -i) for i in range(10)], key=pair_key, reverse=True)
            best = max(data, key=key) + min(data, key=key)
            data.sort(key=key)
            return data[0], pairs[0], best
    """,
    "sum_generator": """
        def count(n):
            i = 0
            while i < n:
                yield i
                i += 1

        def squares(n):
            return sum(x * x for x in count(n))

        def main():
            total = sum(count(20)) + squares(10)
            total += sum(1 for _ in count(7))
            return total + max(count(5)) + len(list(count(4)))
    """,
    "map_filter": """
        def square(x):
            return x * x

        def odd(x):
            return x % 2 == 1

        def add(a, b):
            return a + b

        def main():
            total = sum(map(square, range(10)))
            total += len(list(filter(odd, range(15))))
            total += sum(map(add, range(5), range(5)))
            for v in map(square, filter(odd, range(9))):
                total += v
            return total + any(map(odd, [2, 4, 5]))
    """,
    "methods": """
        class Box:
            def __init__(self, v):
                self.v = v

        def build(n):
            out = []
            for i in range(n):
                out.append(i)
            out.extend([1, 2])
            return out

        def main():
            items = build(12)
            d = {}
            for i in items:
                d[i] = d.get(i, 0) + 1
            words = ", ".join(str(i) for i in items[:5])
            n = len(items) + len(d) + len(words)
            n += isinstance(items, list) + isinstance(Box(1), (int, Box)) + words.count(",")
            n += sum(1 for w in words.split(",") if w.strip().isdigit())
            append = items.append          # a bound builtin method: the same entry as the descriptor
            append(3)
            list.append(items, 4)          # the descriptor called with self from an attribute
            size = len
            n += size(items) + items.pop() + d.setdefault(99, 0)
            keys = list(d.keys())
            return n, words, keys[:3], getattr(Box(5), "v")
    """,
    "raising_builtins": """
        import math

        def safe_sqrt(x):
            try:
                return math.sqrt(x)
            except ValueError:
                return -1.0

        def first(xs):
            try:
                return next(iter(xs))
            except StopIteration:
                return None

        def take(d, k):
            try:
                return d.pop(k)
            except KeyError:
                return 0

        def main():
            total = 0.0
            for x in (4, -1, 9, -4):
                total += safe_sqrt(x)
            total += take({1: 5}, 1) + take({}, 2)
            try:
                [].pop()
            except IndexError:
                total += 1
            try:
                getattr(object(), "missing")
            except AttributeError:
                total += 1
            return total, first([]), first([7])
    """,
    "star_calls_and_nesting": """
        def key(x):
            return (x % 3, x)

        def inner(xs):
            return sorted(xs, key=key)

        def outer_key(xs):
            return len(inner(xs))

        def main():
            args = ([3, 1, 2],)
            n = len(*args) + max(*args[0], key=key)      # CALL_FUNCTION_EX on builtins
            groups = [[5, 4], [1, 2, 3], [9]]
            ordered = sorted(groups, key=outer_key)      # sorted -> outer_key -> sorted -> key
            kw = {"key": key}
            ordered2 = sorted(*args, **kw)
            out = []
            out.append(*[1])
            return n, ordered, ordered2, out, print(end="")
    """,
    "warm_appends": """
        def fill(n):
            out = []
            for i in range(n):
                out.append(i)              # warm: machine code's inline append, counted
                if i % 3 == 0:
                    out.append(-i)
            return out

        def main():
            total = 0
            for k in range(200):
                total += len(fill(60))
            return total
    """,
    "class_bodies": """
        def attr(n):
            return n * 2

        def make():
            class Local:
                size = attr(3)
            return Local

        class Top:
            depth = attr(1)

        def main():
            return make().size + make().size + Top.depth
    """,
}


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_c_functions_match_cprofile(tmp_path, program):
    source = PROGRAMS[program]
    cp = run_profiled(tmp_path, source, "cprofile")
    pj = run_profiled(tmp_path, source, "jit")
    prog = pj["prog"]
    builtins_seen = [k for k in pj["stats"] if k[0] == "~" and any(c[0] == prog for c in pj["stats"][k][4])]
    assert builtins_seen, "pyjion recorded no C function for the program"
    compare_exactly(cp["stats"], pj["stats"], prog)
    check_times(pj)


@pytest.mark.parametrize("clock", ["ticks", "tsc"])
def test_warm_inline_appends_counted_on_each_clock(tmp_path, clock):
    """Code compiled while profiling appends inline once warm; each append is still one call
    of list.append under its caller, as cProfile counts it: counted without a context on the
    ticks clock, timed as a C call on the exact one."""
    source = PROGRAMS["warm_appends"]
    cp = run_profiled(tmp_path, source, "cprofile")
    pj = run_profiled(tmp_path, source, "jit", clock=clock)
    prog = pj["prog"]
    append = pj["stats"][("~", 0, "<method 'append' of 'list' objects>")]
    assert append[:2] == (200 * 80, 200 * 80)
    assert {c[2] for c in append[4] if c[0] == prog} == {"fill"}
    compare_exactly(cp["stats"], pj["stats"], prog)
    check_times(pj)


def test_c_function_labels(tmp_path):
    """The labels cProfile gives (Modules/_lsprof.c normalizeUserObj), for the usual kinds."""
    pj = run_profiled(tmp_path, PROGRAMS["methods"], "jit")
    prog = pj["prog"]
    called = {k[2] for k, v in pj["stats"].items() if k[0] == "~" and any(c[0] == prog for c in v[4])}
    for label in ("<built-in method builtins.len>", "<built-in method builtins.isinstance>",
                  "<built-in method builtins.getattr>", "<method 'append' of 'list' objects>",
                  "<method 'get' of 'dict' objects>", "<method 'join' of 'str' objects>",
                  "<method 'pop' of 'list' objects>", "<method 'keys' of 'dict' objects>"):
        assert label in called, (label, sorted(called))
    append = pj["stats"][("~", 0, "<method 'append' of 'list' objects>")]
    # loop (12) + bound method (1) + list.append(items, 4) (1): one entry for all three forms
    assert append[:2] == (14, 14)


SUM_GEN = """
    def gen(n):
        for i in range(n):
            yield i

    def main():
        return sum(gen(50)) + sum(gen(10))
"""


def test_generator_driven_by_sum_has_sum_as_caller(tmp_path):
    pj = run_profiled(tmp_path, SUM_GEN, "jit")
    prog = pj["prog"]
    st = pj["stats"]
    (gen_key,) = [k for k in st if k[0] == prog and k[2] == "gen"]
    (main_key,) = [k for k in st if k[0] == prog and k[2] == "main"]
    sum_key = ("~", 0, "<built-in method builtins.sum>")
    # each resume is a call, as in cProfile: 51 + 11 resumes, all from sum
    assert st[gen_key][:2] == (62, 62)
    assert set(st[gen_key][4]) == {sum_key}
    assert st[gen_key][4][sum_key][:2] == (62, 62)
    assert st[sum_key][:2] == (2, 2) and set(st[sum_key][4]) == {main_key}
    # the generator's time is sum's callee time, not its own
    s_cc, s_nc, s_tt, s_ct, _ = st[sum_key]
    assert s_tt + st[gen_key][3] <= s_ct * (1 + 1e-6) + 1e-6
    assert st[main_key][3] >= s_ct * (1 - 1e-6)


TREE_HARNESS = r'''
import json, sys
import pyjion, pyjion.calltree, pyjion.flamegraph, pyjion.profile
g = {"__name__": "prog"}
exec(compile(open(sys.argv[1]).read(), "prog.py", "exec"), g)
# The exact clock: the program runs for less than a tick of the default one,
# and the flame graph draws only what took time.
pyjion.config(profile_clock="tsc")
pyjion.enable(profile=True, threshold=0)
g["main"]()
pyjion.disable()
roots = pyjion.calltree.call_tree()
def dump(node):
    return {"name": list(node.name), "label": node.label(), "calls": node.calls,
            "children": [dump(c) for c in node.children]}
out = io = None
import io
text = io.StringIO()
pyjion.profile.print_stats(stream=text)
doc = pyjion.flamegraph.speedscope(roots)
page = pyjion.flamegraph.html_page(roots)
functions = pyjion.stats()["functions"]
pyjion.reset_stats()
after = [k for k in pyjion.stats()["functions"] if k[0] == "~"]
print(json.dumps({"roots": [dump(r) for r in roots], "pstats": text.getvalue(),
                  "frames": doc["shared"]["frames"], "html_has_sum": "builtins.sum" in page,
                  "c_entries": len([k for k in functions if k[0] == "~"]), "after_reset": after}))
'''


def test_c_functions_in_call_tree_pstats_and_exports(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent(SUM_GEN))
    harness = tmp_path / "harness.py"
    harness.write_text(TREE_HARNESS)
    proc = subprocess.run([sys.executable, str(harness), str(prog)], capture_output=True, text=True,
                          env=child_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    import json
    data = json.loads(proc.stdout)
    (root,) = data["roots"]

    def find(node, name):
        return [c for c in node["children"] if c["name"][2] == name]

    paths = [n for c in root["children"] for n in [c] + c["children"] if n["name"][2] == "main"]
    (main,) = paths
    (sum_node,) = find(main, "<built-in method builtins.sum>")
    assert sum_node["name"] == ["~", 0, "<built-in method builtins.sum>"]
    assert sum_node["label"] == "<built-in method builtins.sum>" and sum_node["calls"] == 2
    (gen_node,) = find(sum_node, "gen")
    assert gen_node["calls"] == 62
    # pstats prints C entries as it prints cProfile's: {built-in method builtins.sum}
    assert "{built-in method builtins.sum}" in data["pstats"]
    assert {"name": "<built-in method builtins.sum>"} in data["frames"]
    assert data["html_has_sum"]
    assert data["c_entries"] >= 1
    assert data["after_reset"] == []


def test_dump_stats_c_entries_read_by_pstats(tmp_path):
    """A profile written by pyjion.profile.dump_stats shows the C entries to pstats under
    cProfile's names (what snakeviz and gprof2dot read)."""
    source = PROGRAMS["sorted_key"]
    pj = run_profiled(tmp_path, source, "jit")
    path = tmp_path / "out.prof"
    import marshal
    with open(path, "wb") as f:
        marshal.dump(pj["stats"], f)
    st = pstats.Stats(str(path), stream=io.StringIO())
    key = ("~", 0, "<built-in method builtins.sorted>")
    assert st.stats[key][:2] == (2, 2)
    out = io.StringIO()
    st.stream = out
    st.print_callers("sorted")
    assert "{built-in method builtins.sorted}" in out.getvalue()
    assert "main" in out.getvalue()


UNPROFILED_THEN_PROFILED = """
    import pyjion

    def work(xs):
        out = []
        for x in xs:
            out.append(len(str(x)))
        return sorted(out, reverse=True), max(out)

    pyjion.enable(threshold=0)
    first = work(range(50))              # compiled and warm without the profiler
    pyjion.config(profile=True)
    second = work(range(50))
    third = work(range(50))
    pyjion.disable()
    assert first == second == third
    st = pyjion.stats()["functions"]
    labels = {k[2]: v["calls"] for k, v in st.items() if k[0] == "~"}
    print(labels.get("<built-in method builtins.sorted>"), st[(__file__, 4, "work")]["calls"])
"""


def test_code_compiled_before_profiling(tmp_path):
    """Machine code made before the profiler was switched on still counts the calls that take
    the generic call path (a call with keywords always does): it checks the profiler there.
    (Its call-cache sites filled earlier, max() here, call unobserved: see pyjion.profile.)"""
    prog = tmp_path / "late.py"
    prog.write_text(textwrap.dedent(UNPROFILED_THEN_PROFILED))
    proc = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True, env=child_env(),
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["2", "2"]
