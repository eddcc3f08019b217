"""Tracers, profilers and debuggers see exactly what they see on stock
CPython, also for functions that have machine code."""
import bdb
import cProfile
import io
import pstats
import sys

import pytest

import pyjion
from jitcheck import PY313, assert_compiled, same_as_stock

BODY = """
def f(a, b, n):
    total = 0
    k = 0
    while k < n:
        if k % 2 == 0:
            total += a
        else:
            total -= b
        k += 1
    if total > 10 and a is not None:
        total = total * 2
    elif total < 0 or b is None:
        total = 0 - total
    return total
"""


def trace_events(f, *args, setter=sys.settrace):
    """(result, events) of f(*args) under a tracer; events are (event, line
    relative to def) of f's frame only."""
    code = f.__code__
    events = []

    def tracer(frame, event, arg):
        if frame.f_code is code:
            events.append((event, frame.f_lineno - code.co_firstlineno,
                           arg if event == "return" else None))
        return tracer

    setter(tracer)
    try:
        result = f(*args)
    finally:
        setter(None)
    return result, events


def test_settrace_sees_every_line_of_a_compiled_function():
    def after_tracing(f_jit, warm_result, before):
        assert warm_result == 9
        assert pyjion.info(f_jit).tracing is False
        # still compiled, and used again once the tracer is gone
        assert_compiled(f_jit)
        assert f_jit(3, 1, 7) == 9
        assert pyjion.info(f_jit).run_count == before.run_count + 3

    want = same_as_stock(BODY, lambda f: [trace_events(f, 3, 1, 7), trace_events(f, 1, 5, 4)],
                         warm=(3, 1, 7), tag="trace", then=after_tracing)
    assert want[0][1][0][0] == "call" and len(want[0][1]) > 20


def test_settrace_opcode_events_match_stock():
    def opcode_events(f):
        code = f.__code__
        events = []

        def tracer(frame, event, arg):
            if frame.f_code is code:
                frame.f_trace_opcodes = True
                events.append((event, frame.f_lasti))
            return tracer

        sys.settrace(tracer)
        try:
            f(2, 3, 5)
        finally:
            sys.settrace(None)
        return events

    want = same_as_stock(BODY, opcode_events, warm=(1, 1, 1), tag="trace")
    assert [e for e in want if e[0] == "opcode"]


def test_setprofile_sees_call_and_return():
    want = same_as_stock(BODY, lambda f: trace_events(f, 4, 1, 6, setter=sys.setprofile),
                         warm=(1, 2, 3), tag="trace")
    assert [e[0] for e in want[1]] == ["call", "return"]


def test_cprofile_counts_compiled_function_calls():
    def profile(f):
        prof = cProfile.Profile()
        prof.enable()
        try:
            for k in range(5):
                f(k, 1, 3)
        finally:
            prof.disable()
        stats = pstats.Stats(prof, stream=io.StringIO())
        code = f.__code__
        for (filename, line, name), row in stats.stats.items():
            if filename == code.co_filename and name == code.co_name:
                return row[0], row[1]          # call counts
        return None

    def five_more_runs(f_jit, warm_result, before):
        # 3.11: the hook counts the five profiled calls. 3.13: cProfile is a
        # sys.monitoring tool, and the hook steps aside for the rest of a
        # frame that turned one on (hook_entry.h): those calls run as on
        # stock, unseen by pyjion.
        assert pyjion.info(f_jit).run_count == (1 if PY313 else 6)

    want = same_as_stock(BODY, profile, warm=(0, 0, 0), tag="trace", then=five_more_runs)
    assert want == (5, 5)


class ArmTracer:
    """An operand whose + installs a tracer the way debuggers do
    (bdb.set_trace(): sys.settrace and f_trace on the frames up the stack)."""

    def __init__(self, tracer):
        self.tracer = tracer

    def _arm(self, other):
        sys.settrace(self.tracer)
        sys._getframe(2).f_trace = self.tracer   # the frame that applied the operator
        return other

    def __add__(self, other):
        return self._arm(other)


MIDWAY = """
def g(a, b):
    x = a + b
    y = x * 2
    z = y - 1
    return z
"""


def armed_run(arming, consume=lambda result: result):
    """A probe: g(arming(tracer), 5), where the operand switches the tracer on
    midway; returns consume(g's result) and its own frame's events (relative
    lines)."""
    def run(g):
        code = g.__code__
        events = []

        def tracer(frame, event, arg):
            if frame.f_code is code:
                events.append((event, frame.f_lineno - code.co_firstlineno))
            return tracer

        try:
            result = consume(g(arming(tracer), 5))
        finally:
            sys.settrace(None)
        return result, events
    return run


def test_tracer_attached_while_a_compiled_frame_runs():
    # A debugger that attaches while the compiled function is on the stack
    # (breakpoint() in a callee, then stepping back out) must get the rest of
    # the frame's line events and its return event, as on stock CPython.
    want = same_as_stock(MIDWAY, armed_run(ArmTracer), warm=(1, 1), tag="trace")
    assert want == (9, [("line", 2), ("line", 3), ("line", 4), ("return", 4)])


class ArmProfiler:
    def __init__(self, profiler):
        self.profiler = profiler

    def __add__(self, other):
        sys.setprofile(self.profiler)
        return other


def test_profiler_attached_while_a_compiled_frame_runs():
    # sys.setprofile() from a callee: stock CPython reports the return of
    # every frame still on the stack, the compiled one included.
    def run(g):
        code = g.__code__
        events = []

        def profiler(frame, event, arg):
            if frame.f_code is code:
                events.append((event, arg))
        try:
            result = g(ArmProfiler(profiler), 5)
        finally:
            sys.setprofile(None)
        return result, events

    want = same_as_stock(MIDWAY, run, warm=(1, 1), tag="trace")
    assert want == (9, [("return", 9)])


class Stepper(bdb.Bdb):
    """A scripted debugger: stops at a breakpoint, then steps to the end,
    recording where it stopped."""

    def __init__(self):
        super().__init__()
        self.stops = []

    def user_line(self, frame):
        self.stops.append((frame.f_code.co_name, frame.f_lineno))
        self.set_step()

    def user_return(self, frame, value):
        self.stops.append(("return", frame.f_code.co_name))
        self.set_step()


def test_bdb_breakpoint_and_stepping_in_compiled_function():
    def debug(f):
        dbg = Stepper()
        code = f.__code__
        dbg.set_break(code.co_filename, code.co_firstlineno + 9)     # `k += 1`
        result = dbg.runcall(f, 2, 1, 3)
        first = code.co_firstlineno
        return result, [(n, l - first if isinstance(l, int) else l) for n, l in dbg.stops
                        if n in ("f", "return")]

    want = same_as_stock(BODY, debug, warm=(0, 0, 0), tag="trace")
    assert ("f", 9) in want[1]


class BreakIn:
    """An operand whose + starts a debugger, as `breakpoint()` / pdb.set_trace()
    in library code would; the debugger then single-steps."""

    def __init__(self, dbg):
        self.dbg = dbg

    def __add__(self, other):
        self.dbg.set_trace(sys._getframe())
        return other


def test_debugger_started_in_a_callee_steps_through_the_compiled_caller():
    def debug(g):
        dbg = Stepper()
        try:
            result = g(BreakIn(dbg), 5)
        finally:
            sys.settrace(None)
        first = g.__code__.co_firstlineno
        return result, [(n, l - first if n == "g" else l) for n, l in dbg.stops
                        if n in ("g", "return")]

    want = same_as_stock(MIDWAY, debug, warm=(1, 1), tag="trace")
    # stock: the debugger stops at each remaining line of g and at its return
    assert want == (9, [("return", "__add__"), ("g", 2), ("g", 3), ("g", 4), ("return", "g")])


class ArmTracerAnyOp(ArmTracer):
    """The same for the generic operations compiled code leaves to one helper
    call (>>, subscript, comparison with or without a jump)."""

    def __rshift__(self, other):
        return self._arm(other)

    def __getitem__(self, other):
        return self._arm(other)

    def __lt__(self, other):
        return self._arm(other)


@pytest.mark.parametrize("first_line, warm", [("x = a >> b", (1, 1)), ("x = a[b]", ([0, 1], 1)),
                                              ("x = a < b", (1, 1)), ("x = b\n    if a < b: x = b + 1", (1, 1))])
def test_tracer_attached_by_a_generic_operation(first_line, warm):
    src = MIDWAY.replace("x = a + b", first_line)
    want = same_as_stock(src, armed_run(ArmTracerAnyOp), warm=warm, tag="trace")
    assert ("return", len(src.strip().splitlines()) - 1) in want[1]


class ArmTracerEverywhere(ArmTracerAnyOp):
    """ArmTracerAnyOp for a comparison (> as well), a truth test, an
    attribute store and a call too."""

    def __init__(self, tracer):
        object.__setattr__(self, "tracer", tracer)

    def __gt__(self, other):
        return self._arm(other)

    def __bool__(self):
        self._arm(None)
        return True

    def __setattr__(self, name, value):
        self._arm(value)

    def __call__(self):
        return self._arm(5)


# g(a, b) with `a` the operand that switches the tracer on: the frame's
# line events from there on are stock's, wherever the interpreter takes the
# frame over (at a jump, at the first instruction of a line, inside a loop).
ATTACHED = {
    "comparison, jump taken": """
        def g(a, b):
            x = b
            if a > b: x = b + 1
            y = x * 2
            return y
    """,
    "comparison, no jump": """
        def g(a, b):
            x = b
            if a < b: x = b + 1
            y = x * 2
            return y
    """,
    "comparison, block on the next line": """
        def g(a, b):
            x = b
            if a < b:
                x = b + 1
            y = x * 2
            return y
    """,
    "truth test": """
        def g(a, b):
            x = 0
            if not a:
                x = 1
            return x
    """,
    "truth test, block on the same line": """
        def g(a, b):
            x = 0
            if a: x = 1
            y = x + b
            return y
    """,
    "attribute store ending a line": """
        def g(a, b):
            a.x = 1
            y = b * 2
            return y
    """,
    "attribute store before a loop's back edge": """
        def g(a, b):
            t = 0
            for i in range(3):
                t += i
                a.x = i
            return t
    """,
    "while loop's comparison": """
        def g(a, b):
            k = 0
            while a < b:
                k += 1
                b -= 1
            return k
    """,
    "call in a loop": """
        def g(a, b):
            t = 0
            for i in range(b):
                if i == 1:
                    t += a()
                t += i
            return t
    """,
}


class Quiet:
    """The same operations, switching nothing on (the compiling call's operand)."""

    def __lt__(self, other):
        return 5 < other

    def __gt__(self, other):
        return 5 > other

    def __call__(self):
        return 5


@pytest.mark.parametrize("name", sorted(ATTACHED))
def test_line_events_after_a_tracer_attached_midway(name):
    want = same_as_stock(ATTACHED[name], armed_run(ArmTracerEverywhere), warm=(Quiet(), 3), tag="trace")
    assert want[1] and want[1][-1][0] == "return"


ATTACHED_GENERATOR = """
def g(a, b):
    yield 1
    if a < b:
        yield 2
    for i in range(2):
        yield i
    yield 4
"""


def test_line_events_after_a_tracer_attached_in_a_generator():
    run = armed_run(ArmTracerEverywhere, consume=list)

    def warm_fully(f_jit, warm_result, before):
        assert list(f_jit(1, 3)) == [1, 2, 0, 1, 4]

    want = same_as_stock(ATTACHED_GENERATOR, run, warm=(1, 3), tag="trace", then=warm_fully)
    assert ("line", 4) in want[1]
