"""Differences CPython 3.13's regression suite showed between stock 3.13 and
pyjion with the JIT forced on every function (tools/regrtest.py --jit-only),
each checked against stock CPython. The constructs exist on 3.11 too, where
the same checks hold the 3.11 behaviour."""
import sys

import pytest

from jitcheck import check_python, differential, same_as_stock

JIT_ENV = {"PYJION": "1", "PYJION_THRESHOLD": "0"}


# test_raise: 3.12+ raise TypeError when a cause class, called, does not
# return an exception instance (3.11 took the result as the cause).
def test_raise_from_cause_class_returning_non_exception():
    differential("""
        def f(k):
            class ConstructsNone(BaseException):
                @classmethod
                def __new__(*args, **kwargs):
                    return None
            class Fine(Exception):
                pass
            cause = ConstructsNone if k == 0 else Fine
            try:
                raise IndexError from cause
            except BaseException as e:
                return type(e).__name__, str(e), type(e.__cause__).__name__, e.__suppress_context__
    """, [(0,), (1,)], expect="return")


# test_unpack_ex: DICT_MERGE's KeyError for a repeated keyword becomes the
# TypeError naming the function (3.12+: the KeyError is an instance, its key
# in args).
def test_dict_merge_repeated_keyword_names_the_function():
    differential("""
        def f(k):
            def g(*args, **kwargs):
                return args, sorted(kwargs.items())
            if k == 0:
                return g(x=5, **{'x': 3}, y=2)
            if k == 1:
                return g(**{'x': 3}, x=5, y=2)
            if k == 2:
                return g(**{'x': 3}, **{'x': 5}, y=2)
            return g(**{'x': 3}, **{'y': 5}, z=2)
    """, [(0,), (1,), (2,), (3,)])


# test_generators, test_exceptions: POP_EXCEPT in a generator restores "no
# exception" as NULL on 3.12+ (None hid the exception its caller handles from
# sys.exception()).
def test_generator_handler_exit_leaves_callers_exception_visible():
    differential("""
        import sys
        def f(k):
            seen = []
            def gen():
                try:
                    seen.append(repr(sys.exception()))
                    yield
                    raise TypeError()
                except TypeError as exc:
                    seen.append(repr(sys.exception()))
                    seen.append(type(exc.__context__).__name__)
                seen.append(repr(sys.exception()))
                yield
                seen.append(repr(sys.exception()))
                yield "done"
            g = gen()
            next(g)
            try:
                raise ValueError(k)
            except Exception:
                next(g)
            seen.append(next(g))
            seen.append(repr(sys.exception()))
            return seen
    """, [(0,), (1,)], expect="return")


def test_generator_leaking_exception_state():
    differential("""
        import sys
        def f(k):
            def yield_raise():
                try:
                    raise KeyError("caught")
                except KeyError:
                    yield sys.exception()
                    yield sys.exception()
                yield sys.exception()
            out = []
            try:
                raise TypeError("foo")
            except TypeError:
                g = yield_raise()
                out.append(repr(next(g)))
                out.append(repr(sys.exception()))
                out.append(repr(next(g)))
                out.append(repr(next(g)))
                out.append(repr(sys.exception()))
            return out
    """, [(0,)], expect="return")


# test_traceback: `from m import name` failing sets the ImportError's
# name_from (3.12+), which "Did you mean" suggestions read.
def test_import_from_failure_names_the_missing_name():
    differential("""
        def f(k):
            try:
                from os import pathh
            except ImportError as e:
                return str(e).split(" (")[0], e.name, getattr(e, "name_from", "absent")
    """, [(0,)], expect="return")


# test_sys: compiled code's increments and decrements leave immortal objects'
# counts alone (3.12+), as Py_INCREF/Py_DECREF do: sys.getrefcount(None) does
# not move while None is held in locals and on the stack.
def test_refcounts_of_immortal_objects_do_not_move():
    differential("""
        import sys
        def f(k):
            c = sys.getrefcount(None)
            n = None
            m = [None, True, k]
            d = sys.getrefcount(None) - c
            del n
            return d, sys.getrefcount(None) - c
    """, [(0,), (1,)], expect="return")


# test_list: the optimising tier's type inference took `[0] * n` for int
# arithmetic on 3.13 (BUILD_LIST 1 kept the constant's type as the list's).
def test_list_repetition_of_a_constant_stays_a_list():
    differential("""
        def f(n):
            l = [0] * n
            s = repr(l)
            t = (n,) * 2
            return s[:10], len(s), len(l), t, {n: 1} == {n: 1}, f"{n}{n}" * 2
    """, [(10,), (3,), (1000,), (0,)], expect="return")


# test_functools: recursion through a Python wrapper 5,700 frames deep runs on
# stock 3.13 (the interpreter counts no C stack for the Python calls it
# inlines); compiled frames must not exhaust the C recursion limit first.
def test_deep_recursion_through_a_wrapper():
    out = check_python("""
        import sys
        def wrap(f):
            def wrapper(*args, **kwds):
                return f(*args, **kwds)
            return wrapper
        @wrap
        def down(n):
            return 0 if n <= 1 else down(n - 1) + 1
        sys.setrecursionlimit(20000)
        print(down(2857))
    """, env=JIT_ENV)
    assert out.split()[0] == "2856"


# test_sys_settrace: a coroutine awaited by a traced frame returns without a
# RAISE event in the awaiting frame (3.13 inlines the resume only without a
# PEP 523 function: the hook steps aside while a tool traces).
TRACE_ASYNC_FOR = """
    import sys
    class AsyncIteratorWrapper:
        def __init__(self, obj):
            self._it = iter(obj)
        def __aiter__(self):
            return self
        async def __anext__(self):
            try:
                return next(self._it)
            except StopIteration:
                raise StopAsyncIteration
    async def doit_async():
        async for letter in AsyncIteratorWrapper("abc"):
            x = letter
        y = 42
    base = doit_async.__code__.co_firstlineno
    events = []
    def tracer(frame, event, arg):
        events.append((frame.f_code.co_name, frame.f_lineno - base, event))
        return tracer
    def run():
        x = doit_async()
        try:
            sys.settrace(tracer)
            x.send(None)
        finally:
            sys.settrace(None)
    for i in range(2):
        events.clear()
        try:
            run()
        except StopIteration:
            pass
        print(events)
"""


def test_traced_async_for_events_as_stock():
    stock = check_python(TRACE_ASYNC_FOR)
    jit = check_python(TRACE_ASYNC_FOR, env=JIT_ENV)
    assert jit.splitlines()[:2] == stock.splitlines()[:2]
    assert "'exception'" in stock


def test_hook_back_after_tracing():
    out = check_python("""
        import sys, pyjion
        def traced():
            return pyjion.is_enabled()
        def inner():
            return 1
        sys.settrace(lambda *a: None)
        during = traced()
        sys.settrace(None)
        assert inner() == 1
        print(during, pyjion.is_enabled(), pyjion.info(inner).compiled)
    """, env=JIT_ENV)
    assert out.split() == ["True", "True", "True"]


# Issue 26: once a tracer has been on and off, every code object the
# interpreter has not run since carries an old instrumentation version.
# Instrumenting such code changes nothing while no tool monitors anything,
# so machine code brings the version up to date and runs it from its first
# call (it had handed every such frame to the interpreter, where a call keeps
# its arguments alive until it returns: a callee's dropped argument died
# later than on stock).
TRACED_BEFORE = """
    import sys
    sys.settrace(lambda *a: None)
    sys.settrace(None)
    LOG = []

    class D:
        def __del__(self):
            LOG.append("del")

    def drop(x):
        x = None
        LOG.append("dropped")

    def f(n):
        LOG.clear()
        for i in range(n):
            drop(D())
        return list(LOG)
"""


def test_code_made_after_tracing_runs_compiled_from_its_first_call():
    differential(TRACED_BEFORE, [(1,), (3,)], name="f", expect="return")


def test_code_made_after_tracing_is_not_run_by_the_interpreter():
    out = check_python("""
        import dis, sys, pyjion
        def fresh():
            ns = {}
            exec("def g(a):\\n    t = 0\\n    for i in range(a):\\n        t += i\\n    return t\\n", ns)
            return ns["g"]
        sys.settrace(lambda *a: None)
        sys.settrace(None)
        g, stock = fresh(), fresh()
        results = [g(n) for n in (3, 4, 5)]
        pyjion.disable()
        assert stock(3) == 3
        def first(f):   # RESUME becomes RESUME_CHECK once the interpreter ran it (3.13)
            return next(i.opname for i in dis.get_instructions(f, adaptive=True) if "RESUME" in i.opname)
        print(results, pyjion.info(g).compiled, pyjion.info(g).run_count, first(g), first(stock))
    """, env=JIT_ENV)
    assert out.startswith("[3, 6, 10] True 3 ")
    if sys.version_info >= (3, 13):
        assert out.split()[-2:] == ["RESUME", "RESUME_CHECK"], out


# A tool that sys.monitoring gives the LINE event while a compiled frame
# runs (here turned on by a comparison before a jump) sees that frame's
# next line first, as on stock (the frame is handed to the interpreter at
# the jump), and a DISABLE answer turns that line's event off as the
# interpreter does.
MONITOR_MIDWAY = """
def g(a, b):
    x = b
    if a < b:
        x = b + 1
    y = x * 2
    return x, y
"""


class LineToolOnCompare:
    TOOL = 3

    def __init__(self, log, disable):
        self.log, self.disable = log, disable

    def __lt__(self, other):
        mon = sys.monitoring
        mon.use_tool_id(self.TOOL, "pyjion-test")

        def line(code, lineno):
            if code.co_name == "g":
                self.log.append(lineno - code.co_firstlineno)
                if self.disable:
                    return mon.DISABLE
            return None

        mon.register_callback(self.TOOL, mon.events.LINE, line)
        mon.set_events(self.TOOL, mon.events.LINE)
        return True


@pytest.mark.skipif(not hasattr(sys, "monitoring"), reason="sys.monitoring is 3.12+")
@pytest.mark.parametrize("disable", [False, True])
def test_line_tool_turned_on_mid_frame_as_stock(disable):
    def probe(g):
        log = []
        try:
            results = [g(LineToolOnCompare(log, disable), 5), g(1, 5)]
        finally:
            sys.monitoring.set_events(LineToolOnCompare.TOOL, 0)
            sys.monitoring.free_tool_id(LineToolOnCompare.TOOL)
        return results, log

    want = same_as_stock(MONITOR_MIDWAY, probe, warm=(1, 1), tag="monitor")
    assert want[1][0] == 3   # the line after the comparison's


# test_builtin: 3.12+ look IMPORT_NAME's __import__ up in builtins of any
# mapping type (exec with a mappingproxy as __builtins__); the compiled import
# took them for a dict (SystemError from PyDict_GetItemWithError). 3.11 needs
# a dict there and fails alike on stock (compared by exception type there).
def test_import_with_builtins_of_another_mapping_type():
    differential("""
        def f(k):
            import types
            def fake_import(name, globals, locals, fromlist, level):
                return ("imported", name, fromlist, level)
            code = compile("import foo.bar\\nfrom spam import eggs as e", "test", "exec")
            mapping = {} if k == 0 else {"__import__": fake_import} if k == 1 else {"len": len}
            ns = {"__builtins__": types.MappingProxyType(mapping)}
            try:
                exec(code, ns)
            except Exception as e:
                return type(e).__name__, str(e) if isinstance(e, ImportError) else None
            return ns["foo"]
    """, [(0,), (1,), (2,)], expect="return")


# test_code: an opcode CPython does not know makes the interpreter raise
# SystemError("unknown opcode N"); PyCode_GetCode reads it as CACHE, so the
# compiler skipped it and the function ran. Such code is left to the
# interpreter now.
def test_unknown_opcode_raises_system_error():
    differential("""
        def f(k):
            def foo():
                return 1
            raw = foo.__code__.co_code
            first = 229 if k == 0 else raw[0]
            foo.__code__ = foo.__code__.replace(co_code=bytes([first]) + raw[1:])
            try:
                return foo()
            except SystemError as e:
                return "SystemError", str(e).split(": ", 1)[-1]
    """, [(0,), (1,)], expect="return")


# test_monitoring: a compiled frame that turns sys.monitoring on goes on in
# the interpreter; with the hook still installed there, the interpreter calls
# the frame's Python callees through their vectorcall and reports each call
# as a C call (a C_RETURN event for `func()`). The hook steps aside for the
# rest of that frame as for a traced frame it is given. 3.11 (no
# sys.monitoring): the same program under sys.setprofile.
MONITOR_FROM_COMPILED = """
    import sys
    def f2():
        len([])
        sys.getsizeof(0)
    events = []
    def on_call(code, offset, callable, arg0):
        events.append(("call", code.co_name, offset, getattr(callable, "__name__", "?")))
    def on_c_return(code, offset, callable, arg0):
        events.append(("c_return", code.co_name, offset, getattr(callable, "__name__", "?")))
    def profile(frame, event, arg):
        events.append((event, frame.f_code.co_name, getattr(arg, "__name__", None)))
    def check(func):
        if hasattr(sys, "monitoring"):
            E = sys.monitoring.events
            sys.monitoring.use_tool_id(2, "test")
            sys.monitoring.register_callback(2, E.CALL, on_call)
            sys.monitoring.register_callback(2, E.C_RETURN, on_c_return)
            sys.monitoring.set_events(2, E.CALL)
            func()
            sys.monitoring.set_events(2, 0)
            sys.monitoring.free_tool_id(2)
        else:
            sys.setprofile(profile)
            func()
            sys.setprofile(None)
        return len(events)
    for i in range(3):
        events.clear()
        check(f2)
        print(events)
"""


def test_monitoring_started_in_compiled_frame_as_stock():
    stock = check_python(MONITOR_FROM_COMPILED)
    jit = check_python(MONITOR_FROM_COMPILED, env=JIT_ENV)
    assert jit == stock
    assert "len" in stock and "getsizeof" in stock
