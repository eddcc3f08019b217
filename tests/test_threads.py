"""Compiled code and threads: shared compiled functions, the GIL hand-over at
backward jumps (the eval breaker), signals / Ctrl-C and asynchronous
exceptions interrupting compiled loops."""
import sys
import threading
import time

import pytest

import pyjion
from jitcheck import assert_compiled, check_python, fresh_function

SPIN = """
def spin(n):
    i = 0
    while i < n:
        i = i + 1
    return i
"""

MIX = """
def mix(a, b, n):
    acc = 0
    k = 0
    while k < n:
        if k % 3 == 0:
            acc += a * k
        elif k % 3 == 1:
            acc -= b
        else:
            acc = acc ^ (k << 2)
        k += 1
    return acc
"""


def mix_reference(a, b, n):
    acc = 0
    for k in range(n):
        if k % 3 == 0:
            acc += a * k
        elif k % 3 == 1:
            acc -= b
        else:
            acc = acc ^ (k << 2)
    return acc


def test_threads_share_compiled_functions(jit):
    mix = fresh_function(MIX, "threads")
    spin = fresh_function(SPIN, "threads")
    errors = []
    results = {}
    start = threading.Barrier(6)

    def worker(t):
        try:
            start.wait()
            out = []
            for r in range(40):
                a, b, n = t * 7 + r, r - t, 200 + 13 * r
                out.append((mix(a, b, n), mix_reference(a, b, n), spin(n)))
            results[t] = out
        except BaseException as exc:      # reported in the main thread
            errors.append(exc)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)            # switch threads often, inside the loops too
    try:
        threads = [threading.Thread(target=worker, args=(t,)) for t in range(6)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(60)
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors
    assert len(results) == 6
    for out in results.values():
        for got, want, n in out:
            assert got == want
    assert_compiled(mix)
    assert_compiled(spin)
    assert pyjion.info(mix).run_count == 6 * 40
    assert pyjion.info(spin).run_count == 6 * 40


def test_compiled_loop_does_not_starve_other_threads(jit):
    spin = fresh_function(SPIN, "threads")
    spin(10)               # compiled, and compiled again with its profile (eager mode)
    t = time.perf_counter()
    spin(10 ** 6)
    per_million = time.perf_counter() - t
    assert_compiled(spin)
    n = int(10 ** 6 * 1.5 / per_million)    # about 1.5 s of compiled looping
    done = []

    def worker():
        spin(n)
        done.append(time.monotonic())

    th = threading.Thread(target=worker)
    ticks = []
    t0 = time.monotonic()
    th.start()
    while th.is_alive() and len(ticks) < 400:
        time.sleep(0.002)                  # releases the GIL; to wake up it must get it back
        ticks.append(time.monotonic())
    th.join(30)
    assert done, "spin did not finish"
    during = [x for x in ticks if x < done[0]]
    # Had the compiled loop held the GIL, this thread would have woken up only
    # after spin() returned.
    assert done[0] - t0 > 0.3, "the loop was too fast to tell"
    assert len(during) >= 10, (len(during), done[0] - t0)
    gaps = [b - a for a, b in zip([t0] + during, during)]
    assert max(gaps) < 0.25, max(gaps)
    assert pyjion.info(spin).run_count == 3


ASYNC_EXC = r"""
import ctypes, faulthandler, sys, threading, time
import pyjion

faulthandler.dump_traceback_later(8, exit=True)      # a hang fails, with a traceback

def spin(n):
    i = 0
    while i < n:
        i = i + 1
    return i

class Stop(Exception):
    pass

pyjion.enable(threshold=0)
spin(10)
print("state", pyjion.info(spin).state)
caught = []
started = threading.Event()

def worker():
    started.set()
    try:
        spin(10 ** 12)                  # hours of looping unless interrupted
    except Stop as exc:
        tb = exc.__traceback__
        while tb.tb_next is not None:
            tb = tb.tb_next
        caught.append((tb.tb_frame.f_code is spin.__code__,
                       tb.tb_lineno - spin.__code__.co_firstlineno))

th = threading.Thread(target=worker, daemon=True)
th.start()
started.wait(10)
time.sleep(0.1)
print("alive", th.is_alive())
hit = ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(th.ident), ctypes.py_object(Stop))
print("hit", hit)
th.join(10)
print("stopped", not th.is_alive(), caught)

if sys.argv[1] == "then_trace":
    # Afterwards, a traced call (debugger, coverage) must still work.
    events = []
    def tracer(frame, event, arg):
        events.append(event)
        return tracer
    def g(a):
        return a + 1
    sys.settrace(tracer)
    g(1)
    sys.settrace(None)
    print("traced", events)
"""


def test_async_exception_interrupts_compiled_loop():
    # In a subprocess: the interpreter's state after this can hang later
    # traced calls (see test_tracing_still_works_after_an_async_exception).
    out = check_python(ASYNC_EXC, timeout=60, args=["plain"])
    assert out.splitlines() == ["state compiled", "alive True", "hit 1",
                                "stopped True [(True, 2)]"]      # raised at the `while` line


def test_tracing_still_works_after_an_async_exception():
    out = check_python(ASYNC_EXC, timeout=60, args=["then_trace"])
    assert out.splitlines()[-1] == "traced ['call', 'line', 'return']"


INTERRUPT = r"""
import os, signal, threading, time, traceback, _thread
import pyjion

def spin(n):
    i = 0
    while i < n:
        i = i + 1
    return i

class Alarm(Exception):
    pass

def on_alarm(signum, frame):
    raise Alarm("ring")

def arm(how):
    if how == "interrupt_main":
        threading.Timer(0.2, _thread.interrupt_main).start()
        return KeyboardInterrupt
    if how == "sigint":
        threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
        return KeyboardInterrupt
    if how == "alarm":
        signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        return Alarm

for mode in ("stock", "jit"):
    if mode == "jit":
        pyjion.enable(threshold=0)
    for how in ("interrupt_main", "sigint", "alarm"):
        expected = arm(how)
        t = time.monotonic()
        try:
            spin(10 ** 12)       # hours unless interrupted
        except expected as exc:
            frames = []
            tb = exc.__traceback__
            while tb is not None:
                code = tb.tb_frame.f_code
                if code is spin.__code__:
                    frames.append(("spin", tb.tb_lineno - code.co_firstlineno, tb.tb_lasti))
                else:
                    frames.append((code.co_name, tb.tb_lineno))
                tb = tb.tb_next
            print(mode, how, type(exc).__name__, round(time.monotonic() - t, 1) < 5,
                  pyjion.info(spin).state, frames)
    pyjion.disable()
print("done")
"""


def test_signals_interrupt_compiled_loop():
    # In a subprocess: a failure to interrupt must not hang the test session.
    out = check_python(INTERRUPT, timeout=60)
    lines = out.splitlines()
    assert lines[-1] == "done", out
    results = {}
    for line in lines[:-1]:
        mode, how, rest = line.split(" ", 2)
        results[(mode, how)] = rest
    for how, exc in (("interrupt_main", "KeyboardInterrupt"), ("sigint", "KeyboardInterrupt"),
                     ("alarm", "Alarm")):
        assert results[("stock", how)].startswith(exc + " True interpreted")
        assert results[("jit", how)].startswith(exc + " True compiled"), results[("jit", how)]
        # same traceback (functions, lines, spin's last instruction) as stock CPython
        assert results[("jit", how)].split(" ", 3)[3] == results[("stock", how)].split(" ", 3)[3]


BREAKER = r"""
import ctypes, os, signal, threading, time, _thread
import capstone
import pyjion

def spin(n):
    i = 0
    while i < n:
        i = i + 1
    return i

pyjion.enable(threshold=0)
spin(1)
# The address of the interpreter's eval_breaker flag, as the compiled RESUME
# check loads it (movabs rax, <address>; cmp dword ptr [rax], 0), after the
# warm-up count.
code = pyjion._compiled_code(spin)
resume = [b[0] for b in code.boundaries if b[2] == "RESUME"][0]
md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
insns = list(md.disasm(code.code[resume:resume + 80], 0))
import sys
if sys.version_info >= (3, 13):
    # 3.13: the flags are the low byte of the thread's eval_breaker, which
    # the check tests through the thread-state register (test byte ptr
    # [r12 + offset], 0xff); this is the main thread's.
    tests = [a for a in insns if a.mnemonic == "test" and a.op_str.startswith("byte ptr [r12 + ")
             and a.op_str.endswith("], 0xff")]
    assert tests, insns
    offset = int(tests[0].op_str.split("+")[1].split("]")[0], 16)
    ctypes.pythonapi.PyThreadState_Get.restype = ctypes.c_void_p
    breaker = ctypes.c_uint8.from_address(ctypes.pythonapi.PyThreadState_Get() + offset)
else:
    pairs = [(a, b) for a, b in zip(insns, insns[1:])
             if a.mnemonic == "movabs" and a.op_str.startswith("rax,") and b.mnemonic == "cmp"
             and b.op_str == "dword ptr [rax], 0"]
    assert pairs, insns
    breaker = ctypes.c_int.from_address(int(pairs[0][0].op_str.split(",")[1], 16))

def settled():
    # give the interpreter a few chances to recompute the flag
    for _ in range(50):
        if breaker.value == 0:
            return 0
        time.sleep(0.01)
    return breaker.value

print("start", settled())

import sys
case = sys.argv[1]

if case == "async_exc":      # an asynchronous exception delivered to a thread in a compiled loop
  caught = []
  def worker():
      try:
          spin(10 ** 12)
      except ValueError as exc:
          caught.append(exc)
  th = threading.Thread(target=worker)
  th.start()
  time.sleep(0.1)
  ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(th.ident), ctypes.py_object(ValueError))
  th.join(10)
  print("async_exc", len(caught), settled())

if case == "sigint":         # Ctrl-C in the main thread
  threading.Timer(0.1, _thread.interrupt_main).start()
  try:
      spin(10 ** 12)
  except KeyboardInterrupt:
      print("sigint", 1, settled())

if case == "pending_call":   # a signal handler (a pending call) run from the compiled loop
  hits = []
  class Stop(Exception):
      pass
  def handler(s, f):
      hits.append(s)
      raise Stop      # ends the loop, however fast it runs
  signal.signal(signal.SIGUSR1, handler)
  def fire():
      time.sleep(0.1)
      os.kill(os.getpid(), signal.SIGUSR1)
  threading.Thread(target=fire).start()
  try:
      spin(10 ** 12)
  except Stop:
      pass
  print("pending_call", len(hits), settled())
"""


@pytest.mark.parametrize("case", ["async_exc", "sigint", "pending_call"])
def test_eval_breaker_is_cleared_after_compiled_code_handles_it(case):
    # A flag left set makes every later backward jump and call, compiled or
    # interpreted, take the slow path for the rest of the process.
    out = check_python(BREAKER, timeout=60, args=[case])
    assert out.splitlines() == ["start 0", "%s 1 0" % case], out
