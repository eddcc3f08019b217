"""Warm-up by samples and entry through functions' vectorcall (function_entry.h):
CPython 3.13's default, where pyjion installs no PEP 523 hook. Programs run
in fresh interpreters with PYJION=1 and stock; their output must be the same.
On 3.11 the mode does not exist and asking for it is an error."""
import json
import textwrap

import pytest

import pyjion
from pyjion import _eval
from jitcheck import PY313, SAMPLING_PRELUDE, _restore, _snapshot, check_python, run_python

needs_313 = pytest.mark.skipif(not PY313, reason="entry through vectorcall needs CPython 3.12+")

# `_sample_now()` inside a function is one hot sample of its frame: the
# function is compiled there and then (deterministic, unlike the sampler's
# own ticks). Facts only the JIT run can state go to stderr as JSON.
PROGRAM = SAMPLING_PRELUDE + r'''
import threading, traceback
if JIT:
    from pyjion._eval import hook_installed

def fib(n, sample=False):
    if sample:
        _sample_now()
    return n if n < 2 else fib(n - 1) + fib(n - 2)

# The interpreter's call site below specialises on fib before it is compiled.
before = [fib(i) for i in range(15) for _ in range(20)]
fib(5, sample=True)
after = [fib(i) for i in range(15) for _ in range(20)]
print("fib", before == after, sum(after))

def outer(k, sample=False):
    def inner(x, scale=2, *, shift=0):
        if sample:
            _sample_now()
        s = 0
        for j in range(x):
            s += j * k * scale + shift
        return s
    return inner(30) + inner(10, 3, shift=k)

first = outer(1, sample=True)           # compiles inner's code
print("closures", first, sum(outer(k) for k in range(300)))

class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y
    def norm2(self, sample=False):
        if sample:
            _sample_now()
        return self.x * self.x + self.y * self.y

p = Point(3, 4)
p.norm2(sample=True)
print("methods", sum(Point(i, i + 1).norm2() for i in range(500)))

def fails(d, key, sample=False):
    if sample:
        _sample_now()
    return d[key] + 1

fails({"a": 1}, "a", sample=True)
try:
    fails({"a": 1}, "b")
except KeyError:
    tb = traceback.format_exc().splitlines()
    print("traceback", [line for line in tb if "line" in line])

def twice(x, sample=False):
    if sample:
        _sample_now()
    return 2 * x

def thrice(x, sample=False):
    return 3 * x

twice(1, sample=True)
print("code swap before", twice(7))
twice.__code__ = thrice.__code__
print("code swap after", twice(7), [twice(i) for i in range(5)])

events = []
def tracer(frame, event, arg):
    if frame.f_code is fib.__code__:
        events.append((event, frame.f_lineno - fib.__code__.co_firstlineno))
    return tracer
sys.settrace(tracer)
fib(3)
sys.settrace(None)
print("trace", events)
print("after trace", fib(20))

out = []
threads = [threading.Thread(target=lambda i=i: out.append(fib(18 + i % 2))) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("threads", sorted(out))

# (No default argument here: stock 3.13.0 counts no recursion for calls
# that fill in defaults, CALL_PY_WITH_DEFAULTS, and recursion would not end.)
SAMPLE_DOWN = True
def down(n):
    if SAMPLE_DOWN:
        _sample_now()
    return 0 if n == 0 else 1 + down(n - 1)

down(0)
SAMPLE_DOWN = False
try:
    down(10 ** 6)
except RecursionError as exc:
    print("recursion", type(exc).__name__)
print("recursion ok", down(500))

def gen(n, sample=False):
    if sample:
        _sample_now()
    for i in range(n):
        yield i * i

print("generator", sum(gen(10, sample=True)), list(gen(5)))

if JIT:
    def facts(f):
        info = pyjion.info(f)
        return [info.state, info.run_count]
    inner = [c for c in outer.__code__.co_consts if hasattr(c, "co_code")][0]
    json.dump({"hook": hook_installed(), "enabled": pyjion.is_enabled(),
               "warmup": pyjion.config()["warmup"],
               "fib": facts(fib), "inner": facts(inner), "norm2": facts(Point.norm2),
               "down": facts(down), "gen": facts(gen),
               "given": pyjion.stats()["jit"]["functions_given_vectorcall"]}, sys.stderr)
'''


@needs_313
def test_programs_run_as_on_stock_and_enter_machine_code_without_the_hook():
    stock = check_python(PROGRAM)
    proc = run_python(PROGRAM, env={"PYJION": "1"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == stock
    facts = json.loads(proc.stderr.strip().splitlines()[-1])
    assert facts["enabled"] and not facts["hook"] and facts["warmup"] == "samples"
    # Compiled by the sample, and entered through the vectorcall from the
    # interpreter's call sites, the ones specialised before the compile too.
    for name in ("fib", "norm2", "down"):
        state, runs = facts[name]
        assert state == "compiled" and runs > 100, (name, facts[name])
    # Closures made after their code was compiled got the vectorcall at birth.
    state, runs = facts["inner"]
    assert state == "compiled" and runs >= 600, facts["inner"]
    # Generator code stays interpreted: no vectorcall enters its resumes.
    assert facts["gen"] == ["interpreted", 0]
    assert facts["given"] >= 4


@needs_313
def test_the_hook_comes_and_goes_with_the_settings_that_need_it():
    snap = _snapshot()
    try:
        pyjion.disable()
        pyjion.config(warmup="samples", threshold=1000)   # (not eager: that needs the hook)
        assert pyjion.enable() is True
        assert pyjion.is_enabled() and not _eval.hook_installed()
        assert pyjion.config()["warmup"] == "samples"
        pyjion.config(threshold=5)                 # a threshold counts calls: the hook
        assert pyjion.config()["warmup"] == "calls" and _eval.hook_installed()
        pyjion.config(warmup="samples")
        assert not _eval.hook_installed() and pyjion.is_enabled()
        pyjion.config(profile=True)                # the profiler sees every call: the hook
        assert _eval.hook_installed()
        pyjion.config(profile=False)
        assert not _eval.hook_installed()
        pyjion.config(threshold=0, warmup="samples")   # eager: the hook
        assert _eval.hook_installed()
        pyjion.config(threshold=1000, warmup="samples")
        assert not _eval.hook_installed()
        assert pyjion.disable() is True
        assert not pyjion.is_enabled() and not _eval.hook_installed()
        assert pyjion.disable() is False
    finally:
        _restore(snap)


@needs_313
def test_compiled_functions_run_in_the_interpreter_after_disable():
    out = check_python("""
        import pyjion
        from pyjion._eval import _sample_now
        pyjion.enable()
        def f(x, sample=False):
            if sample:
                _sample_now()
            return x + 1
        f(1, sample=True)
        f(2)
        runs = pyjion.info(f).run_count
        pyjion.disable()
        print(f(3), pyjion.info(f).state, pyjion.info(f).run_count - runs)
        pyjion.enable()
        f(4)
        print(pyjion.info(f).run_count - runs)
    """)
    assert out.split() == ["4", "compiled", "0", "1"]


@needs_313
def test_the_sampler_alone_compiles_hot_functions():
    # No _sample_now: the sampler thread's ticks find the hot function.
    out = check_python("""
        import time, pyjion
        def work(n):
            s = 0
            for i in range(n):
                s += i % 7
            return s
        deadline = time.monotonic() + 20
        while pyjion.info(work).state != "compiled" and time.monotonic() < deadline:
            work(2000)
        before = pyjion.info(work).run_count
        total = sum(work(100) for _ in range(50))
        print(pyjion.info(work).state, pyjion.info(work).run_count - before, total)
    """, env={"PYJION": "1"})
    state, runs, total = out.split()
    assert state == "compiled" and runs == "50"
    assert int(total) == 50 * sum(i % 7 for i in range(100))


@pytest.mark.skipif(PY313, reason="3.11 has no vectorcall entry")
def test_warmup_by_samples_needs_a_newer_cpython():
    assert pyjion.config()["warmup"] == "calls"
    with pytest.raises(ValueError, match="3.12"):
        pyjion.config(warmup="samples")
    with pytest.raises(ValueError, match="warmup must be one of"):
        pyjion.config(warmup="sometimes")
    assert pyjion.config()["warmup"] == "calls"


# pyjion enabled with its defaults (3.13: no hook) and `scale`, which one
# forced sample compiles with the optimising tier once it ran on ints; float
# arguments then fail its entry guard until the tier gives the code up.
SCALE_PROGRAM = textwrap.dedent("""
    import pyjion
    from pyjion._eval import _sample_now
    pyjion.enable()
    def scale(x, sample=False):
        if sample:
            _sample_now()
        acc = 0
        for i in range(8):
            acc = acc + x * i
        return acc
""")


@needs_313
def test_code_given_up_by_the_optimising_tier_is_recompiled_without_the_hook():
    # Compiled by the optimising tier for int arguments, then called with
    # floats: its entry guard fails on every call until the tier gives the
    # code up. The hook recompiles such code (baseline) at the next call it
    # sees; without the hook installed that call comes through the
    # function's vectorcall, and must recompile too, not go on in the
    # interpreter for good.
    out = check_python(SCALE_PROGRAM + textwrap.dedent("""
        from pyjion._eval import hook_installed
        ints = [scale(3) for _ in range(50)]
        scale(3, sample=True)
        first = pyjion.info(scale)
        floats = [scale(0.5 + k) for k in range(300)]
        after = pyjion.info(scale)
        runs = after.run_count
        more = [scale(k + 0.25) for k in range(20)]
        print(hook_installed(), first.tier, after.opt_given_up, after.state, after.tier,
              pyjion.info(scale).run_count - runs, sum(ints), sum(floats), sum(more))
    """))
    hooked, first_tier, given_up, state, tier, runs, ints, floats, more = out.split()
    assert (hooked, first_tier, given_up, state, tier) == ("False", "2", "True", "compiled", "1")
    assert runs == "20"      # every later call runs the recompiled machine code
    assert int(ints) == 50 * 3 * 28
    assert float(floats) == sum((0.5 + k) * 28 for k in range(300))
    assert float(more) == sum((k + 0.25) * 28 for k in range(20))


@needs_313
def test_code_awaiting_its_recompile_goes_to_another_pep523_evaluator_installed_after_pyjion():
    # Such a frame goes to the hook's entry to be recompiled only where the
    # hook (or nothing) is the evaluator: a debugger's PEP 523 function,
    # installed later, is given the frame as the interpreter would give it.
    pytest.importorskip("_testinternalcapi", reason="this CPython build has no _testinternalcapi")
    out = check_python(SCALE_PROGRAM + textwrap.dedent("""
        import json, _testinternalcapi
        def caller(x, sample=False):
            if sample:
                _sample_now()
            return scale(x) + 1
        for _ in range(50):
            scale(3)
            caller(3)
        scale(3, sample=True)
        caller(3, sample=True)
        k = 0
        while pyjion.info(scale).pgc == 2 and k < 1000:   # until the tier gives scale's code up
            scale(0.5 + k)
            k += 1
        awaiting = pyjion.info(scale).opt_given_up and pyjion.info(scale).pgc == 1
        seen = []
        _testinternalcapi.set_eval_frame_record(seen)
        try:
            r = caller(2.5)
        finally:
            _testinternalcapi.set_eval_frame_default()
        print(json.dumps([awaiting, pyjion.info(caller).compiled, r, [s for s in seen if s in ("scale", "caller")]]))
    """))
    assert json.loads(out) == [True, True, 71.0, ["scale"]]
