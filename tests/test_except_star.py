"""except* (CHECK_EG_MATCH, PREP_RERAISE_STAR) compiles and behaves exactly as
CPython 3.11's interpreter: results, exceptions, ExceptionGroup structure and
tracebacks (traceback.format_exception text), chaining, reference counts."""
import gc
import sys
import textwrap
import weakref

import pytest

from jitcheck import assert_compiled, differential, jit_off, jit_on, make_function, register_source


class MyBase(BaseException):
    pass


MAIN = """
def f(a, mode):
    try:
        if isinstance(a, BaseException):
            raise a
        if isinstance(a, list):
            raise ExceptionGroup("eg", a)
        return 10 / a
    except* ZeroDivisionError as eg:
        if mode == 1:
            raise                                   # re-raise: keeps the original nesting
        if mode == 2:
            raise RuntimeError("new")               # a new exception
        if mode == 3:
            raise RuntimeError("from") from eg
        if mode == 4:
            raise eg                                # the caught group as a new exception
        if mode == 5:
            raise eg.exceptions[0]
        if mode == 6:
            eg.add_note("note")
            raise
        caught = ("zde", repr(eg), len(eg.exceptions))
    except* KeyError as eg:
        if mode == 2:
            raise LookupError("new2")               # a second new exception
        if mode == 1:
            raise
        caught = ("key", repr(eg))
    except* (OSError, AttributeError):
        caught = "tuple"
    return caught
"""

MAIN_CALLS = [
    lambda: (5,),                                                       # no exception
    lambda: (0,),                                                       # a naked exception, matched
    lambda: ([ZeroDivisionError(), ZeroDivisionError("b")],),           # a group, all matched
    lambda: ([KeyError(1), ZeroDivisionError()],),                      # split over two clauses
    lambda: ([ValueError("v"), KeyError(2)],),                          # the rest propagates
    lambda: ("text",),                                                  # TypeError: unmatched
    lambda: (TypeError("naked"),),                                      # propagates unwrapped
    lambda: ([OSError(2, "x"), AttributeError("y")],),                  # a tuple of types
    lambda: (ExceptionGroup("outer", [                                  # nested groups
        ValueError(1),
        ExceptionGroup("inner", [KeyError(3), ZeroDivisionError(4), ValueError(5)]),
        ZeroDivisionError(6)]),),
    lambda: (ExceptionGroup("outer", [ExceptionGroup("inner", [ValueError(5)])]),),
    lambda: (ExceptionGroup("outer", [ExceptionGroup("inner", [ZeroDivisionError(7)]),
                                      ExceptionGroup("other", [OSError(8), TypeError(9)])]),),
]


@pytest.mark.parametrize("mode", range(7), ids=[
    "handled", "reraise", "raise_new", "raise_from", "raise_eg", "raise_leaf", "add_note"])
def test_except_star(mode):
    calls = [lambda mk=mk: mk() + (mode,) for mk in MAIN_CALLS]
    outcomes = differential(MAIN, calls, opcodes=("CHECK_EG_MATCH", "PREP_RERAISE_STAR"))
    assert {o[0] for o in outcomes} == {"return", "raise"}


def _raised(src, *args):
    """The exception src's first function raises, under the JIT and on stock
    CPython (both copies built from the same source)."""
    filename = register_source(src)
    fj, fr = make_function(src, filename), make_function(src, filename)
    out = []
    for ctx, fn in ((jit_on, fj), (jit_off, fr)):
        with ctx():
            try:
                fn(*args)
            except Exception as exc:
                out.append(exc)
            else:
                out.append(None)
    assert_compiled(fj)
    return out


def test_lone_new_exception_is_raised_unwrapped():
    # 3.11.4+: a clause raising one new exception, nothing else left: raised as is
    jit, ref = _raised(MAIN, [ZeroDivisionError()], 2)
    assert type(jit) is type(ref) is RuntimeError
    assert type(jit.__context__) is type(ref.__context__) is ExceptionGroup
    # with something left over (or two new ones): one new group holding them
    jit, ref = _raised(MAIN, [ZeroDivisionError(), ValueError()], 2)
    for exc in (jit, ref):
        assert type(exc) is ExceptionGroup and exc.message == ""
        assert [type(e) for e in exc.exceptions] == [RuntimeError, ExceptionGroup]
        assert [type(e) for e in exc.exceptions[1].exceptions] == [ValueError]
    jit, ref = _raised(MAIN, [ZeroDivisionError(), KeyError(1)], 2)
    for exc in (jit, ref):
        assert [type(e) for e in exc.exceptions] == [RuntimeError, LookupError]


def _shape(exc, leaves):
    """exc's structure: groups as (type, message, parts), leaves by their index."""
    if isinstance(exc, BaseExceptionGroup):
        return (type(exc).__name__, exc.message, [_shape(e, leaves) for e in exc.exceptions])
    return next(i for i, leaf in enumerate(leaves) if leaf is exc)


@pytest.mark.parametrize("keep", [(0, 1, 2, 3), (1, 3), (0, 2)])
def test_reraise_keeps_the_original_leaves_and_nesting(keep):
    # Re-raised parts are the original leaf objects in the original nesting
    # (the group is split on the leaves' identities), merged with what no
    # clause matched; the same objects as on stock CPython.
    src = MAIN.replace("except* (OSError", "except* (IndexError")
    results = []
    for ctx in (jit_on, jit_off):
        f = make_function(src, register_source(src))
        leaves = [KeyError(3), ZeroDivisionError(4), ValueError(5), ZeroDivisionError(6)]
        chosen = [leaves[i] if i in keep else OSError(i) for i in range(4)]
        group = ExceptionGroup("outer", [chosen[2], ExceptionGroup("inner", chosen[:2]), chosen[3]])
        with ctx():
            with pytest.raises(ExceptionGroup) as ei:
                f(group, 1)
        exc = ei.value
        results.append((exc is group, _shape(exc, chosen), type(exc.__context__), exc.__cause__))
    assert results[0] == results[1]


NESTED = """
def f(a):
    log = []
    try:
        raise ExceptionGroup("eg", a)
    except* ValueError as outer:
        log.append(("outer", len(outer.exceptions)))
        try:
            raise ExceptionGroup("again", [KeyError("k"), *outer.exceptions])
        except* KeyError as inner:
            log.append(("inner", repr(inner)))
        except* ValueError:
            log.append("inner-value")
            raise
    except* TypeError:
        log.append("type")
    finally:
        log.append("finally")
        a.append(tuple(log))
    return log
"""


def test_nested_except_star_and_finally():
    differential(NESTED, [
        lambda: ([TypeError(1)],),
        lambda: ([ValueError(1), TypeError(2)],),
        lambda: ([ValueError(1), ValueError(2), OSError(3)],),
        lambda: ([OSError(3)],),
    ], opcodes=("PREP_RERAISE_STAR",))


CONTEXTS = """
class CM:
    def __init__(self, log, swallow):
        self.log, self.swallow = log, swallow
    def __enter__(self):
        return self
    def __exit__(self, t, v, tb):
        self.log.append((getattr(t, "__name__", None), repr(v)))
        return self.swallow

def f(a, swallow):
    log = []
    for k in range(3):
        try:
            with CM(log, swallow):
                if k == 1:
                    continue
                raise BaseExceptionGroup("eg%d" % k, [a(k), KeyError(k)])
        except* KeyError as eg:
            log.append(("key", k, len(eg.exceptions)))
        except* BaseException as eg:
            log.append(("base", k, repr(eg)))
    return log
"""


def test_except_star_in_a_loop_around_with():
    differential(CONTEXTS, [
        lambda: (ValueError, False),
        lambda: (ValueError, True),
        lambda: (KeyError, False),
        lambda: (MyBase, False),                    # a BaseExceptionGroup
    ], name="f", opcodes=("PREP_RERAISE_STAR",), namespace={"MyBase": MyBase}, expect="return")


GENERATOR = """
def gen(a):
    for x in a:
        try:
            if isinstance(x, BaseException):
                raise ExceptionGroup("g", [x])
            yield x
        except* ZeroDivisionError as eg:
            got = yield ("zde", repr(eg))
            if got == "stop":
                raise ValueError("stopped")

def run(a, sends):
    g = gen(a)
    out = [next(g)]
    for s in sends:
        out.append(g.send(s))
    return out
"""


def test_except_star_in_a_generator():
    differential(GENERATOR, [
        lambda: ([1, ZeroDivisionError(), 2], [None, None]),
        lambda: ([ZeroDivisionError(), ZeroDivisionError(), 3], [None, "stop"]),
        lambda: ([ZeroDivisionError(), KeyError(1)], [None]),
    ], name="run", namespace={})
    gen = make_function(GENERATOR, register_source(GENERATOR), "gen")
    with jit_on():
        g = gen([ZeroDivisionError()])
        assert next(g)[0] == "zde"
        with pytest.raises(ValueError):
            g.send("stop")
    assert_compiled(gen)


def test_except_star_catching_a_base_exception_group():
    src = """
    def f(a):
        try:
            raise BaseExceptionGroup("b", a)
        except* MyBase as eg:
            r = ("base", type(eg).__name__, len(eg.exceptions))
        except* KeyError as eg:
            r = ("key", type(eg).__name__)
        return r
    """
    differential(src, [
        lambda: ([MyBase()],),
        lambda: ([MyBase(), KeyError(1)],),
        lambda: ([KeyError(1)],),                   # all Exceptions: an ExceptionGroup
        lambda: ([KeyError(1), ValueError(2)],),    # the ValueError part propagates
    ], namespace={"MyBase": MyBase})


# ---- references ----------------------------------------------------------------------

class Z(ZeroDivisionError):
    pass


class K(KeyError):
    pass


class V(ValueError):
    pass


class EG(ExceptionGroup):
    """Weak-referenceable, and split() keeps the class (derive)."""

    def derive(self, excs):
        return EG(self.message, excs)


@pytest.mark.parametrize("mode", [0, 1, 2, 4], ids=["handled", "reraise", "raise_new", "raise_eg"])
def test_except_star_leaves_no_references(mode):
    # Every exception involved (the leaves, the group, the split-off parts and
    # what is raised) dies once the caller drops it, as on stock CPython.
    builders = [
        lambda: [Z()],
        lambda: [Z(), K(1)],
        lambda: [V(), Z(), K(2)],
        lambda: [EG("in", [Z(), V()]), K(3)],
    ]
    results = {}
    for ctx in (jit_on, jit_off):
        f = make_function(MAIN, register_source(MAIN))
        out = []
        with ctx():
            for build in builders:
                leaves = build()
                group = EG("g", leaves)
                refs = [weakref.ref(x) for x in leaves + [group]]
                counts = [sys.getrefcount(x) for x in leaves]
                try:
                    r = f(group, mode)
                except Exception as exc:
                    r = exc
                kind = type(r).__name__
                if type(r).__weakrefoffset__:
                    refs.append(weakref.ref(r))
                del r, group
                after = [sys.getrefcount(x) for x in leaves]
                del leaves
                gc.collect()
                out.append((kind, counts == after, [w() is None for w in refs]))
        results[ctx] = out
        if ctx is jit_on:
            assert_compiled(f)
    assert results[jit_on] == results[jit_off]
    assert all(same and all(dead) for _, same, dead in results[jit_on]), results[jit_on]


def test_many_calls_do_not_grow_memory():
    src = """
    def f(a, mode):
        try:
            raise ExceptionGroup("g", a)
        except* ZeroDivisionError:
            if mode == 1:
                raise
            if mode == 2:
                raise RuntimeError("new")
        except* KeyError:
            if mode == 2:
                raise LookupError("new2")
        return mode
    """
    src = textwrap.dedent(src)
    f = make_function(src, register_source(src))

    def loop(mode, n):
        for _ in range(n):
            try:
                f([ZeroDivisionError(), KeyError(1), ValueError(),
                   ExceptionGroup("i", [ZeroDivisionError(), ValueError()])], mode)
            except Exception:
                pass

    with jit_on():
        for mode in range(3):
            loop(mode, 300)
            gc.collect()
            before = sys.getallocatedblocks()
            loop(mode, 3000)
            gc.collect()
            assert sys.getallocatedblocks() - before < 100, mode
    assert_compiled(f)
