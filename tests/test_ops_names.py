"""The name, attribute, import and cell opcodes, compiled by pyjion, against
CPython's interpreter.

Every check builds two fresh copies of the code under test from source (so
each has its own code object and pyjion record), runs one in the interpreter
and one with pyjion enabled (threshold=0: compiled on first call), asserts
that the JIT copy really compiled and really contains the opcode under test,
and compares results, or exception type / message / .name / traceback lines.

Until CALL and MAKE_FUNCTION compile, a few opcodes only occur next to them
(LOAD_METHOD before PRECALL/CALL, MAKE_CELL before MAKE_FUNCTION, ...). Those
tests edit the bytecode of both copies alike to replace the unsupported
neighbours by simple stack shuffles (see `patch`), keeping the opcode under
test and its stack effect.
"""
import builtins
import contextlib
import dis
import gc
import io
import opcode as _opcode
import os
import sys
import textwrap
import traceback
import types

import pytest

import pyjion
from jitcheck import PY313, version_opcode

FILENAME = "<ops-names>"


# ---- harness ---------------------------------------------------------------------

# PYJION_TEST_DEBUG=1: compile with the run-time stack check at every bytecode boundary.
DEBUG = os.environ.get("PYJION_TEST_DEBUG") == "1"
# The debug stack check (runtime.cpp) takes a NULL value-stack slot for a bug,
# but 3.11 pushes NULLs legitimately (LOAD_GLOBAL with oparg & 1, LOAD_METHOD).
pushes_null = pytest.mark.skipif(DEBUG, reason="the debug stack check rejects NULL stack slots")


@contextlib.contextmanager
def jit():
    pyjion.enable(threshold=0)
    if DEBUG:
        pyjion.config(debug=True)
    try:
        yield
    finally:
        pyjion.disable()


@pytest.fixture(autouse=True)
def _no_jit_outside():
    pyjion.disable()
    yield
    pyjion.disable()


def outcome(thunk, key=None):
    """('ok', value) or ('exc', type, message, .name, .path, traceback lines in FILENAME)."""
    try:
        value = thunk()
    except Exception as e:
        tb = [(fs.lineno, fs.name) for fs in traceback.extract_tb(e.__traceback__) if fs.filename == FILENAME]
        return ("exc", type(e), str(e), getattr(e, "name", None), getattr(e, "path", None), tb)
    return ("ok", key(value) if key else value)


def opnames(code):
    return {i.opname for i in dis.get_instructions(code)}


def patch(code, find, repl):
    """Replaces the first run of instructions named `find` (with their inline
    caches) by `repl`, a list of (opname, arg), padded with NOPs to the same
    length; applied to nested code objects named in find's absence."""
    instrs = list(dis.get_instructions(code))
    names = [i.opname for i in instrs]
    for k in range(len(instrs) - len(find) + 1):
        if names[k:k + len(find)] == list(find):
            start = instrs[k].offset
            end = instrs[k + len(find)].offset if k + len(find) < len(instrs) else len(code.co_code)
            raw = bytearray(code.co_code)
            new = bytearray()
            for name, arg in repl:
                new += bytes([_opcode.opmap[name], arg])
            assert len(new) <= end - start, "replacement longer than the original"
            while len(new) < end - start:
                new += bytes([_opcode.opmap["NOP"], 0])
            raw[start:end] = new
            return code.replace(co_code=bytes(raw))
    raise AssertionError("pattern %r not found in %s" % (find, code.co_name))


def local(code, name):
    return code.co_varnames.index(name)


def make(src, name, g, edit=None):
    exec(compile(textwrap.dedent(src), FILENAME, "exec"), g)
    f = g[name]
    if edit is not None:
        f.__code__ = edit(f.__code__)
    return f


def check(src, name, opcodes, args=(), make_globals=dict, edit=None, calls=1, between=None, key=None,
          build=None):
    """Runs `name` from `src` `calls` times in each mode and compares; returns
    (interpreted function, compiled function, outcomes)."""
    def fresh():
        g = make_globals()
        if build is not None:
            return build(g)
        return make(src, name, g, edit)
    fi, fj = fresh(), fresh()
    missing = {version_opcode(op) for op in opcodes} - opnames(fj.__code__)
    assert not missing, "test does not exercise %s" % missing
    got_i, got_j = [], []
    for k in range(calls):
        got_i.append(outcome(lambda: fi(*args), key))
        with jit():
            got_j.append(outcome(lambda: fj(*args), key))
        if between is not None:
            between(fi, k)
            between(fj, k)
    info = pyjion.info(fj)
    assert info.compiled, info.reason
    assert got_j == got_i
    return fi, fj, got_j


def check_code(src, opcodes, make_ns=lambda: ({}, None), mode="exec", key=None, find=None):
    """Module-level code (or, with `find`, the code object of that name nested
    in it, e.g. a class body): exec'd in each mode, outcome and resulting
    namespaces compared. Returns (compiled globals, compiled locals, outcome)."""
    src = textwrap.dedent(src)
    ci, cj = compile(src, FILENAME, mode), compile(src, FILENAME, mode)
    target = cj
    if find is not None:
        target = next(c for c in cj.co_consts if isinstance(c, types.CodeType) and c.co_name == find)
    missing = {version_opcode(op) for op in opcodes} - opnames(target)
    assert not missing, "test does not exercise %s" % missing
    gi, li = make_ns()
    gj, lj = make_ns()
    ri = outcome(lambda: exec(ci, gi, li))
    with jit():
        rj = outcome(lambda: exec(cj, gj, lj))
    info = pyjion.info(target)
    assert info.compiled, info.reason
    assert rj == ri
    if key is None:
        key = lambda g, l: ({k: v for k, v in g.items() if k != "__builtins__"},
                            None if l is None else dict(l))
    assert key(gj, lj) == key(gi, li)
    return gj, lj, rj


def call0_to(keep):
    """Edit: replaces a zero-argument PRECALL/CALL by 'STORE_FAST top; STORE_FAST
    second; LOAD_FAST <keep>' (the function has locals `top` and `second`), so
    the two values a LOAD_METHOD or LOAD_GLOBAL(+NULL) pushed become visible:
    a NULL shows as UnboundLocalError on LOAD_FAST. (3.13: a zero-argument
    CALL alone; its stack is [callable, self or NULL], NULL on top; and only
    LOAD_FAST_CHECK checks for NULL.)"""
    def edit(code):
        return patch(code, ["CALL"] if PY313 else ["PRECALL", "CALL"],
                     [("STORE_FAST", local(code, "top")), ("STORE_FAST", local(code, "second")),
                      ("LOAD_FAST_CHECK" if PY313 else "LOAD_FAST", local(code, keep))])
    return edit


def drop_closure(n):
    """Edit: LOAD_CLOSURE x n; BUILD_TUPLE n; LOAD_CONST code; MAKE_FUNCTION 8
    becomes the n LOAD_CLOSUREs followed by n - 1 POP_TOPs: the cells are still
    loaded, and the first one takes the function's place."""
    def edit(code):
        # 3.13 sets the closure after MAKE_FUNCTION (SET_FUNCTION_ATTRIBUTE 8).
        find = ["BUILD_TUPLE", "LOAD_CONST", "MAKE_FUNCTION"] + (["SET_FUNCTION_ATTRIBUTE"] if PY313 else [])
        return patch(code, find, [("POP_TOP", 0)] * (n - 1))
    return edit


# ---- LOAD_GLOBAL -------------------------------------------------------------------

def test_load_global_and_builtin():
    src = """
    G = 7
    def f():
        return G
    def b():
        return len
    """
    check(src, "f", {"LOAD_GLOBAL"})
    check(src, "b", {"LOAD_GLOBAL"}, key=lambda v: v is builtins.len)


def test_load_global_missing_is_name_error_with_name():
    src = """
    def f():
        x = 1
        return undefined_thing
    """
    _, _, got = check(src, "f", {"LOAD_GLOBAL"})
    assert got[0][1] is NameError and got[0][2] == "name 'undefined_thing' is not defined"
    assert got[0][3] == "undefined_thing"
    assert got[0][5] == [(4, "f")]


def test_load_global_globals_mutated_between_calls():
    src = """
    G = 1
    def f():
        return G
    """
    def between(f, k):
        g = f.__globals__
        if k == 0:
            g["G"] = "changed"
        elif k == 1:
            del g["G"]
        elif k == 2:
            g["G"] = 3
    _, _, got = check(src, "f", {"LOAD_GLOBAL"}, calls=4, between=between)
    assert [o[1] if o[0] == "ok" else o[1] for o in got] == [1, "changed", NameError, 3]


def test_load_global_builtin_shadowed_between_calls():
    src = """
    def f():
        return abs
    """
    def between(f, k):
        if k == 0:
            f.__globals__["abs"] = "shadow"
        elif k == 1:
            del f.__globals__["abs"]
    _, _, got = check(src, "f", {"LOAD_GLOBAL"}, calls=3, between=between, key=repr)


def test_name_error_suggestion():
    src = """
    def f():
        return lenn
    def g():
        somelocal = 1
        return somelocall
    """
    for name in "fg":
        gi, gj = {}, {}
        fi, fj = make(src, name, gi), make(src, name, gj)

        def text(f):
            try:
                f()
            except NameError as e:
                # 3.11 offers "Did you mean" only in the C display hook
                buf = io.StringIO()
                with contextlib.redirect_stderr(buf):
                    sys.__excepthook__(type(e), e, e.__traceback__)
                return buf.getvalue().splitlines()[-1]
        ti = text(fi)
        with jit():
            tj = text(fj)
        assert pyjion.info(fj).compiled, pyjion.info(fj).reason
        assert tj == ti and "Did you mean" in ti


def test_load_global_custom_builtins_dict_and_mapping():
    class Builtins(dict):
        def __missing__(self, key):
            if key == "magic":
                return 42
            if key == "boom":
                raise ValueError("boom")
            raise KeyError(key)
    src = """
    def f():
        return magic
    def g():
        return nothere
    def h():
        return boom
    def i():
        return len
    """
    mk = lambda: {"__builtins__": Builtins(len="mylen")}
    for name in "fghi":
        check(src, name, {"LOAD_GLOBAL"}, make_globals=mk)
    # builtins as a plain dict without the usual names
    check(src, "i", {"LOAD_GLOBAL"}, make_globals=lambda: {"__builtins__": {}})


def test_load_global_globals_dict_subclass():
    class Globals(dict):
        def __missing__(self, key):
            if key == "ghost":
                return "from __missing__"
            raise KeyError(key)
    src = """
    def f():
        return ghost
    def g():
        return len
    def h():
        return nowhere
    """
    def build(name):
        def b(g):
            plain = {}
            f = make(src, name, plain)
            glob = Globals(plain)
            glob["__builtins__"] = builtins
            return types.FunctionType(f.__code__, glob, name)
        return b
    for name in "fgh":
        check(src, name, {"LOAD_GLOBAL"}, build=build(name), key=repr)


def test_load_global_replaced_globals():
    src = """
    def f():
        return G
    """
    def build(g):
        f = make(src, "f", {})
        return types.FunctionType(f.__code__, {"G": "other globals", "__builtins__": builtins}, "f")
    check(src, "f", {"LOAD_GLOBAL"}, build=build)


@pushes_null
def test_load_global_push_null():
    src = """
    def f():
        if 0: top = second = 0
        return len()
    """
    # LOAD_GLOBAL (NULL + len): the value on top, NULL below (3.13: len, then NULL on top).
    value, null = ("second", "top") if PY313 else ("top", "second")
    _, _, got = check(src, "f", {"LOAD_GLOBAL"}, edit=call0_to(value), key=lambda v: v is len)
    assert got == [("ok", True)]
    _, _, got = check(src, "f", {"LOAD_GLOBAL"}, edit=call0_to(null))
    assert got[0][1] is UnboundLocalError


# ---- LOAD_NAME / STORE_NAME / DELETE_NAME (module code, exec, class bodies) ---------

def test_module_code_names():
    src = """
    x = 1
    y = x + 2
    z = len
    del x
    """
    check_code(src, {"LOAD_NAME", "STORE_NAME", "DELETE_NAME"})


def test_load_name_order_locals_globals_builtins():
    src = """
    a = in_locals
    b = in_globals
    c = abs
    d = shadowed
    """
    mk = lambda: ({"in_globals": 2, "shadowed": "global"}, {"in_locals": 1, "shadowed": "local"})
    g, l, _ = check_code(src, {"LOAD_NAME", "STORE_NAME"}, make_ns=mk)
    assert (l["a"], l["b"], l["c"], l["d"]) == (1, 2, abs, "local")


def test_load_name_missing():
    src = """
    x = 1
    y = nowhere_at_all
    """
    _, _, got = check_code(src, {"LOAD_NAME"})
    assert got[1] is NameError and got[3] == "nowhere_at_all" and got[5] == [(3, "<module>")]


def test_delete_name_missing():
    src = """
    del never_bound
    """
    _, _, got = check_code(src, {"DELETE_NAME"})
    assert got[1] is NameError and got[2] == "name 'never_bound' is not defined"


class Mapping:
    """A locals mapping that is not a dict, logging every access."""

    def __init__(self, **items):
        self.d = dict(items)
        self.log = []

    def __getitem__(self, k):
        self.log.append(("get", k))
        if k == "explode":
            raise ZeroDivisionError("explode")
        return self.d[k]

    def __setitem__(self, k, v):
        self.log.append(("set", k))
        if k == "readonly":
            raise TypeError("read-only name")
        self.d[k] = v

    def __delitem__(self, k):
        self.log.append(("del", k))
        if k == "undeletable":
            raise TypeError("cannot delete")
        del self.d[k]


def _mapping_key(g, l):
    return ({k: v for k, v in g.items() if k != "__builtins__"}, l.d, l.log)


@pytest.mark.parametrize("src,ops", [
    ("a = 1\nb = a + 1\nc = glob\nd = len\ndel a\n", {"LOAD_NAME", "STORE_NAME", "DELETE_NAME"}),
    ("x = explode\n", {"LOAD_NAME"}),
    ("readonly = 1\n", {"STORE_NAME"}),
    ("del undeletable\n", {"DELETE_NAME"}),
    ("del missing\n", {"DELETE_NAME"}),
    ("q = missing_everywhere\n", {"LOAD_NAME"}),
])
def test_exec_with_mapping_locals(src, ops):
    mk = lambda: ({"glob": "g"}, Mapping(pre=0))
    check_code(src, ops, make_ns=mk, key=_mapping_key)


def test_exec_with_dict_subclass_locals():
    class Locals(dict):
        def __missing__(self, key):
            return "missing:" + key
    mk = lambda: ({}, Locals())
    # LOAD_NAME on a dict subclass goes through PyObject_GetItem, so __missing__ answers.
    g, l, _ = check_code("a = nothing_here\n", {"LOAD_NAME"}, make_ns=mk)
    assert l["a"] == "missing:nothing_here"


def test_class_body_names():
    src = """
    class C:
        x = 1
        y = x + 1
        z = len
        del x
    """
    g, _, _ = check_code(src, {"LOAD_NAME", "STORE_NAME", "DELETE_NAME"}, find="C",
                         make_ns=lambda: ({"__name__": "opsmod"}, None),
                         key=lambda g, l: sorted(k for k in vars(g["C"]) if not k.startswith("__")))
    assert g["C"].y == 2 and g["C"].__qualname__ == "C" and g["C"].__module__ == "opsmod"


def test_class_body_prepare_mapping():
    src = """
    class C(metaclass=Meta):
        a = pre
        b = a + 1
        del pre
    """

    def mk():
        class Meta(type):
            @classmethod
            def __prepare__(mcls, name, bases):
                return Mapping(pre=10)

            def __new__(mcls, name, bases, ns):
                return ns   # the mapping itself, to look at
        return {"Meta": Meta, "__name__": "opsmod"}, None

    g, _, _ = check_code(src, {"LOAD_NAME", "STORE_NAME", "DELETE_NAME"}, find="C", make_ns=mk,
                         key=lambda g, l: (g["C"].d, g["C"].log))
    assert g["C"].d["b"] == 11 and "pre" not in g["C"].d


def test_class_body_errors_traceback():
    src = """
    class C:
        x = 1
        y = not_defined_anywhere
    """
    _, _, got = check_code(src, {"LOAD_NAME"}, find="C", make_ns=lambda: ({"__name__": "opsmod"}, None),
                           key=lambda g, l: "C" in g)
    assert got[1] is NameError and got[5] == [(2, "<module>"), (4, "C")]


# ---- STORE_GLOBAL / DELETE_GLOBAL -----------------------------------------------------

def test_store_and_delete_global():
    src = """
    def setg(v):
        global G
        G = v
        return G
    def delg():
        global G
        del G
    """
    fi, fj, _ = check(src, "setg", {"STORE_GLOBAL", "LOAD_GLOBAL"}, args=(5,))
    assert fi.__globals__["G"] == fj.__globals__["G"] == 5
    # deleting twice: the second time is a NameError
    _, _, got = check(src, "delg", {"DELETE_GLOBAL"}, calls=1,
                      make_globals=lambda: {"G": 1})
    _, _, got = check(src, "delg", {"DELETE_GLOBAL"}, calls=2)
    assert got[0][1] is NameError and got[0][2] == "name 'G' is not defined" and got[0][3] == "G"


# ---- attributes -----------------------------------------------------------------------

ATTR_SRC = """
class Obj:
    def __init__(self):
        self.a = 1
    @property
    def bad(self):
        raise ValueError("bad property")
    @property
    def ro(self):
        return 1

def load(o):
    return o.a
def load_missing(o):
    return o.nope
def load_bad(o):
    return o.bad
def store(o, v):
    o.b = v
    return o.b
def store_ro(o):
    o.ro = 2
def delete(o):
    del o.a
    return o.a
def delete_missing(o):
    del o.zzz
"""


@pytest.mark.parametrize("name,ops,args", [
    ("load", {"LOAD_ATTR"}, 1),
    ("load_missing", {"LOAD_ATTR"}, 1),
    ("load_bad", {"LOAD_ATTR"}, 1),
    ("store", {"STORE_ATTR"}, 2),
    ("store_ro", {"STORE_ATTR"}, 1),
    ("delete", {"DELETE_ATTR"}, 1),
    ("delete_missing", {"DELETE_ATTR"}, 1),
])
def test_attributes(name, ops, args):
    gi, gj = {}, {}
    fi, fj = make(ATTR_SRC, name, gi), make(ATTR_SRC, name, gj)
    assert ops <= opnames(fj.__code__)
    extra = (3,) if args == 2 else ()
    ri = outcome(lambda: fi(gi["Obj"](), *extra))
    with jit():
        rj = outcome(lambda: fj(gj["Obj"](), *extra))
    assert pyjion.info(fj).compiled, pyjion.info(fj).reason
    assert rj == ri


def test_load_attr_on_builtin_objects():
    src = """
    def f(o):
        return o.real
    def g(o):
        return o.__class__.__name__
    """
    check(src, "f", {"LOAD_ATTR"}, args=(3,))
    check(src, "f", {"LOAD_ATTR"}, args=("str",))
    check(src, "g", {"LOAD_ATTR"}, args=([],))


# ---- LOAD_METHOD ------------------------------------------------------------------------

METHOD_SRC = """
class WithAttr:
    def __init__(self):
        self.m = "instance attribute"
    def method(self):
        return 1

def f(o):
    if 0: top = second = 0
    return o.m()
def g(o):
    if 0: top = second = 0
    return o.method()
def h(o):
    if 0: top = second = 0
    return o.append()
def missing(o):
    if 0: top = second = 0
    return o.no_such_method()
"""


def _null_above(keep):
    """3.13's LOAD_ATTR with the method bit pushes [attribute, NULL] where
    3.11's LOAD_METHOD pushed [NULL, attribute]: the two slots trade places."""
    return {"top": "second", "second": "top"}[keep] if PY313 else keep


@pushes_null
@pytest.mark.parametrize("name,obj,keep,expect", [
    ("f", "WithAttr()", _null_above("top"), "instance attribute"),    # [NULL, attr]
    ("f", "WithAttr()", _null_above("second"), UnboundLocalError),
    ("g", "WithAttr()", "top", "self"),                  # [meth, self]
    ("g", "WithAttr()", "second", "function"),
    ("h", "[]", "top", "self"),
    ("h", "[]", "second", "method_descriptor"),
    ("missing", "[]", "top", AttributeError),
    ("g", "WithAttr", _null_above("top"), "function"),   # a function on the class: [NULL, function]
    ("g", "WithAttr", _null_above("second"), UnboundLocalError),
])
def test_load_method(name, obj, keep, expect):
    gi, gj = {}, {}
    fi = make(METHOD_SRC, name, gi, call0_to(keep))
    fj = make(METHOD_SRC, name, gj, call0_to(keep))
    assert version_opcode("LOAD_METHOD") in opnames(fj.__code__)
    oi, oj = eval(obj, gi), eval(obj, gj)

    def key(v, g):
        if isinstance(v, str):
            return v
        if isinstance(v, (list, g["WithAttr"])):
            return "self"
        return type(v).__name__
    ri = outcome(lambda: key(fi(oi), gi))
    with jit():
        rj = outcome(lambda: fj(oj))
    assert pyjion.info(fj).compiled, pyjion.info(fj).reason
    if rj[0] == "ok":
        rj = ("ok", key(rj[1], gj))
    assert rj == ri
    if isinstance(expect, type):
        assert rj[1] is expect
    else:
        assert rj == ("ok", expect)


# ---- imports --------------------------------------------------------------------------------

def test_import_name_and_from():
    src = """
    def f():
        import os
        import os.path
        import os.path as p
        from os import sep, path as q
        from os.path import join
        return join
    def g():
        import os.path as p
        return p
    def h():
        from os import sep
        return sep
    def i():
        import os.path
        return os
    """
    _, _, got = check(src, "f", {"IMPORT_NAME", "IMPORT_FROM"})
    assert got == [("ok", os.path.join)]
    _, _, got = check(src, "g", {"IMPORT_NAME", "IMPORT_FROM"})
    assert got == [("ok", os.path)]
    _, _, got = check(src, "h", {"IMPORT_NAME", "IMPORT_FROM"})
    assert got == [("ok", os.sep)]
    _, _, got = check(src, "i", {"IMPORT_NAME"})
    assert got == [("ok", os)]


def test_import_errors():
    src = """
    def missing_module():
        import no_such_module_for_pyjion_tests
    def missing_name():
        from os import no_such_name_here
    def missing_builtin_name():
        from sys import no_such_name_here
    """
    _, _, got = check(src, "missing_module", {"IMPORT_NAME"})
    assert got[0][1] is ModuleNotFoundError
    _, _, got = check(src, "missing_name", {"IMPORT_FROM"})
    assert got[0][1] is ImportError and "cannot import name 'no_such_name_here' from 'os' (" in got[0][2]
    assert got[0][3] == "os" and got[0][4] == os.__file__
    _, _, got = check(src, "missing_builtin_name", {"IMPORT_FROM"})
    assert got[0][2] == "cannot import name 'no_such_name_here' from 'sys' (unknown location)"


@pytest.fixture
def fake_modules():
    added = []

    def add(name, **attrs):
        m = types.ModuleType(name)
        for k, v in attrs.items():
            setattr(m, k, v)
        sys.modules[name] = m
        added.append(name)
        return m
    yield add
    for name in added:
        sys.modules.pop(name, None)


def test_import_from_partially_initialised_and_submodule_fallback(fake_modules):
    fake_modules("pyj_fake_circular", __file__="/nowhere/pyj_fake_circular.py",
                 __spec__=types.SimpleNamespace(_initializing=True))
    pkg = fake_modules("pyj_fake_pkg", __file__="/nowhere/pyj_fake_pkg/__init__.py", __path__=[])
    sub = fake_modules("pyj_fake_pkg.sub", value=5)
    fake_modules("pyj_fake_nameless")
    del sys.modules["pyj_fake_nameless"].__name__
    src = """
    def circular():
        from pyj_fake_circular import thing
    def fallback():
        from pyj_fake_pkg import sub
        return sub
    def nameless():
        from pyj_fake_nameless import thing
    """
    _, _, got = check(src, "circular", {"IMPORT_FROM"})
    assert got[0][2] == ("cannot import name 'thing' from partially initialized module 'pyj_fake_circular' "
                         "(most likely due to a circular import) (/nowhere/pyj_fake_circular.py)")
    _, _, got = check(src, "fallback", {"IMPORT_FROM"})
    assert got == [("ok", sub)] and not hasattr(pkg, "sub")
    _, _, got = check(src, "nameless", {"IMPORT_FROM"})
    assert got[0][1] is ImportError and "<unknown module name>" in got[0][2]


def test_relative_import():
    src = """
    def f():
        from . import decoder
        from .decoder import JSONDecodeError
        return JSONDecodeError
    """
    import json.decoder
    mk = lambda: {"__name__": "json.fake", "__package__": "json"}
    _, _, got = check(src, "f", {"IMPORT_NAME", "IMPORT_FROM"}, make_globals=mk)
    assert got == [("ok", json.decoder.JSONDecodeError)]
    _, _, got = check(src, "f", {"IMPORT_NAME"}, make_globals=lambda: {"__name__": "nopkg"})
    assert got[0][1] is ImportError


def test_replaced_import_is_honoured():
    calls = []

    def my_import(*args):
        calls.append(args)
        m = types.ModuleType("imported:" + args[0])
        m.c = m.d = m.e = 1
        return m
    src = """
    def f():
        import os
        from a.b import c, d
        from .. import e
        return os
    """
    def mk():
        return {"__builtins__": dict(vars(builtins), __import__=my_import), "__name__": "opsmod"}
    _, fj, got = check(src, "f", {"IMPORT_NAME"}, make_globals=mk, key=lambda m: m.__name__)
    assert got == [("ok", "imported:os")]
    # Five positional arguments: name, globals, locals (None in a function), fromlist, level.
    assert [c[0] for c in calls] == ["os", "a.b", "", "os", "a.b", ""]
    assert calls[3][1] is fj.__globals__ and calls[3][2] is None and calls[3][3] is None and calls[3][4] == 0
    assert calls[4][3] == ("c", "d") and calls[5][4] == 2


def test_monkeypatched_builtins_import(monkeypatch):
    real = builtins.__import__
    seen = []

    def spy(name, globals=None, locals=None, fromlist=(), level=0):
        seen.append((name, fromlist, level))
        return real(name, globals, locals, fromlist, level)
    monkeypatch.setattr(builtins, "__import__", spy)
    src = """
    def f():
        from os import path
        return path
    """
    _, _, got = check(src, "f", {"IMPORT_NAME", "IMPORT_FROM"})
    assert got == [("ok", os.path)]
    assert seen == [("os", ("path",), 0)] * 2


def test_import_without_dunder_import():
    src = """
    def f():
        import os
    """
    _, _, got = check(src, "f", {"IMPORT_NAME"}, make_globals=lambda: {"__builtins__": {}})
    assert got[0][1] is ImportError and got[0][2] == "__import__ not found"


def test_import_star(fake_modules):
    fake_modules("pyj_star_all", __all__=["a", "_b"], a=1, _b=2, c=3)
    fake_modules("pyj_star_noall", a=1, _b=2, c=3)
    fake_modules("pyj_star_bad", __all__=["a", 5], a=1)
    fake_modules("pyj_star_missing", __all__=["a", "gone"], a=1)
    for mod in ["pyj_star_all", "pyj_star_noall", "pyj_star_bad", "pyj_star_missing"]:
        key = lambda g, l: {k: v for k, v in g.items() if k in ("a", "_b", "c", "gone")}
        check_code("from %s import *\n" % mod, {"IMPORT_STAR", "IMPORT_NAME"}, key=key)
    # into a non-dict locals mapping (exec with a mapping)
    check_code("from pyj_star_all import *\n", {"IMPORT_STAR"},
               make_ns=lambda: ({}, Mapping()), key=_mapping_key)


def test_import_star_with_fast_locals(fake_modules):
    # `import *` is a SyntaxError in a function, but bytecode may still do it:
    # the fast locals are synced to f_locals and back around the import.
    fake_modules("pyj_star_fast", __all__=["a", "b"], a=1, b=2)
    src = """
    def f():
        from pyj_star_fast import a
        b = 0
        return a + b
    """
    # (3.13: `import *` is CALL_INTRINSIC_1 INTRINSIC_IMPORT_STAR (2), whose None the POP_TOP drops.)
    star = [("CALL_INTRINSIC_1", 2), ("POP_TOP", 0)] if PY313 else [("IMPORT_STAR", 0)]
    edit = lambda code: patch(code, ["IMPORT_FROM", "STORE_FAST", "POP_TOP"], star)
    _, _, got = check(src, "f", {"IMPORT_STAR"}, edit=edit)
    assert got == [("ok", 1)]
    src = """
    def g():
        from pyj_star_fast import a
        return a
    """
    _, _, got = check(src, "g", {"IMPORT_STAR"}, edit=edit)
    assert got == [("ok", 1)]


# ---- LOAD_BUILD_CLASS, SETUP_ANNOTATIONS, LOAD_ASSERTION_ERROR, PRINT_EXPR --------------------

def _as_build_class(code):
    idx = code.co_names.index("__build_class__")
    return patch(code, ["LOAD_GLOBAL"], [("LOAD_BUILD_CLASS", 0)])


def test_load_build_class():
    src = """
    def f():
        return __build_class__
    """
    _, _, got = check(src, "f", {"LOAD_BUILD_CLASS"}, edit=_as_build_class)
    assert got == [("ok", builtins.__build_class__)]

    class Missing(dict):
        def __missing__(self, key):
            raise KeyError(key)

    class Raising(dict):
        def __missing__(self, key):
            raise ValueError("no builtins here")
    for mk in [lambda: {"__builtins__": {}}, lambda: {"__builtins__": Missing()},
               lambda: {"__builtins__": Raising()}]:
        _, _, got = check(src, "f", {"LOAD_BUILD_CLASS"}, edit=_as_build_class, make_globals=mk)
        assert got[0][0] == "exc"
    _, _, got = check(src, "f", {"LOAD_BUILD_CLASS"}, edit=_as_build_class,
                      make_globals=lambda: {"__builtins__": Missing(__build_class__="bc")})
    assert got == [("ok", "bc")]


def test_setup_annotations():
    src = """
    x.y: int
    """
    check_code(src, {"SETUP_ANNOTATIONS"}, make_ns=lambda: ({"x": 1}, None))
    # already present: kept
    g, _, _ = check_code(src, {"SETUP_ANNOTATIONS"}, make_ns=lambda: ({"x": 1, "__annotations__": "keep"}, None))
    assert g["__annotations__"] == "keep"
    # a mapping for locals
    check_code(src, {"SETUP_ANNOTATIONS"}, make_ns=lambda: ({"x": 1}, Mapping()), key=_mapping_key)
    # in a class body
    g, _, _ = check_code("class C:\n    self.q: int\n", {"SETUP_ANNOTATIONS"}, find="C",
                         make_ns=lambda: ({"self": 0, "__name__": "opsmod"}, None),
                         key=lambda g, l: g["C"].__annotations__)
    assert g["C"].__annotations__ == {}


def test_load_assertion_error():
    src = """
    def f(x):
        assert x
    """
    edit = lambda code: patch(code, ["RAISE_VARARGS"], [("RETURN_VALUE", 0)])
    _, _, got = check(src, "f", {"LOAD_ASSERTION_ERROR"}, args=(0,), edit=edit)
    assert got == [("ok", AssertionError)]


def test_print_expr(monkeypatch):
    seen = []
    monkeypatch.setattr(sys, "displayhook", lambda v: seen.append(v))
    check_code("1 + 2\n", {"PRINT_EXPR"}, mode="single")
    assert seen == [3, 3]
    seen.clear()
    _, _, got = check_code("not_defined_x\n", {"PRINT_EXPR"}, mode="single")
    assert got[1] is NameError and seen == []
    check_code("41 + 1", {"PRINT_EXPR"}, mode="single")
    assert seen == [42, 42]
    monkeypatch.delattr(sys, "displayhook")
    _, _, got = check_code("5", {"PRINT_EXPR"}, mode="single")
    assert got[1] is RuntimeError and got[2] == "lost sys.displayhook"


# ---- cells and closures -----------------------------------------------------------------------

CELLS_SRC = """
def outer(v):
    x = v
    def reader():
        return x
    def writer(n):
        nonlocal x
        x = n
        return x
    def deleter():
        nonlocal x
        del x
    return reader, writer, deleter
"""


def _closures(g):
    # made by the interpreter (MAKE_FUNCTION); only the inner functions are under test
    return make(CELLS_SRC, "outer", g)(10)


def test_free_variables_read_write_delete():
    ri, wi, di = _closures({})
    rj, wj, dj = _closures({})
    for f in (rj, wj, dj):
        assert "COPY_FREE_VARS" in opnames(f.__code__)
    assert "LOAD_DEREF" in opnames(rj.__code__)
    assert "STORE_DEREF" in opnames(wj.__code__)
    assert "DELETE_DEREF" in opnames(dj.__code__)
    steps = [("r", ()), ("w", (5,)), ("r", ()), ("d", ()), ("r", ()), ("d", ()), ("w", (7,)), ("r", ())]
    for which, args in steps:
        fi = {"r": ri, "w": wi, "d": di}[which]
        fj = {"r": rj, "w": wj, "d": dj}[which]
        oi = outcome(lambda: fi(*args))
        with jit():
            oj = outcome(lambda: fj(*args))
        assert oj == oi, (which, args)
    for f in (rj, wj, dj):
        assert pyjion.info(f).compiled, pyjion.info(f).reason
    # after the deletes: the free-variable wording
    ri2, _, di2 = _closures({})
    with jit():
        di2()
        got = outcome(ri2)
    assert got[1] is NameError
    assert got[2] == ("cannot access free variable 'x' where it is not associated with a value "
                      "in enclosing scope")


def test_outer_function_cells():
    src = """
    def outer(a):
        b = a + 1
        def inner(): return a + b
        b = b * 2
        return a + b
    """
    _, fj, got = check(src, "outer", {"MAKE_CELL", "LOAD_CLOSURE", "LOAD_DEREF", "STORE_DEREF"}, args=(3,),
                       edit=drop_closure(2))
    assert got == [("ok", 11)]


def test_outer_function_cell_errors():
    src = """
    def unbound(flag):
        if flag:
            y = 1
        def inner(): return y
        return y
    def delete_twice():
        y = 1
        def inner(): return y
        del y
        del y
    def arg_cell(a):
        def inner(): return a
        a = a + 1
        return a
    """
    _, _, got = check(src, "unbound", {"MAKE_CELL", "LOAD_DEREF"}, args=(0,), edit=drop_closure(1))
    assert got[0][1] is UnboundLocalError
    assert got[0][2] == "cannot access local variable 'y' where it is not associated with a value"
    assert got[0][5] == [(6, "unbound")]
    _, _, got = check(src, "unbound", {"MAKE_CELL", "LOAD_DEREF"}, args=(1,), edit=drop_closure(1))
    assert got == [("ok", 1)]
    _, _, got = check(src, "delete_twice", {"DELETE_DEREF"}, edit=drop_closure(1))
    assert got[0][1] is UnboundLocalError and got[0][5] == [(11, "delete_twice")]
    _, _, got = check(src, "arg_cell", {"MAKE_CELL"}, args=(41,), edit=drop_closure(1))
    assert got == [("ok", 42)]


def test_class_body_classderef():
    src = """
    def outer(v, early):
        if early:
            class C:
                a = x
            return C
        x = v
        class C:
            a = x
            b = a + 1
        return C
    """

    def body(f):
        code = next(c for c in f.__code__.co_consts if isinstance(c, types.CodeType) and c.co_name == "C")
        return code
    gi, gj = {"__name__": "opsmod"}, {"__name__": "opsmod"}
    fi, fj = make(src, "outer", gi), make(src, "outer", gj)
    assert version_opcode("LOAD_CLASSDEREF") in opnames(body(fj))
    for args in [(5, False), (6, True)]:
        oi = outcome(lambda: fi(*args), key=lambda C: (C.a, C.b))
        with jit():
            oj = outcome(lambda: fj(*args), key=lambda C: (C.a, C.b))
        assert oj == oi
    assert oj[1] is NameError and "cannot access free variable 'x'" in oj[2]
    compiled = [c for c in fj.__code__.co_consts if isinstance(c, types.CodeType) and c.co_name == "C"]
    assert all(pyjion.info(c).compiled for c in compiled), [pyjion.info(c).reason for c in compiled]


def test_class_body_classderef_prefers_namespace():
    src = """
    def outer():
        x = "cell"
        class C(metaclass=Meta):
            a = x
        return C
    """

    def mk():
        class Meta(type):
            @classmethod
            def __prepare__(mcls, name, bases):
                return Mapping(x="namespace")

            def __new__(mcls, name, bases, ns):
                return ns
        return {"Meta": Meta, "__name__": "opsmod"}
    gi, gj = mk(), mk()
    fi, fj = make(src, "outer", gi), make(src, "outer", gj)
    oi = outcome(fi, key=lambda ns: (ns.d["a"], ns.log))
    with jit():
        oj = outcome(fj, key=lambda ns: (ns.d["a"], ns.log))
    assert oj == oi and oj[1][0] == "namespace"
    body = next(c for c in fj.__code__.co_consts if isinstance(c, types.CodeType) and c.co_name == "C")
    assert version_opcode("LOAD_CLASSDEREF") in opnames(body)
    assert pyjion.info(body).compiled, pyjion.info(body).reason


# ---- DELETE_FAST ----------------------------------------------------------------------------------

def test_delete_fast():
    src = """
    def f():
        x = 1
        del x
        return x
    def g():
        del y
        y = 1
    def h(a):
        b = a
        del a
        return b
    """
    _, _, got = check(src, "f", {"DELETE_FAST"})
    assert got[0][1] is UnboundLocalError and got[0][5] == [(5, "f")]
    _, _, got = check(src, "g", {"DELETE_FAST"})
    assert got[0][1] is UnboundLocalError and got[0][5] == [(7, "g")]
    _, _, got = check(src, "h", {"DELETE_FAST"}, args=(9,))
    assert got == [("ok", 9)]


def test_delete_fast_runs_finaliser():
    log = []

    class Noisy:
        def __del__(self):
            log.append("del")
    src = """
    def f(v):
        x = v
        del x
        return 1
    """
    fj = make(src, "f", {})
    with jit():
        assert fj(Noisy()) == 1
    assert pyjion.info(fj).compiled and log == ["del"]


# ---- reference counting ------------------------------------------------------------------------

LEAK_SRC = """
class Obj:
    pass

def load_global():
    return SENTINEL
def load_global_missing():
    return not_defined_anywhere
def attrs(o, v):
    o.a = v
    x = o.a
    del o.a
    return x
def attr_missing(o):
    return o.zzz
def store_global(v):
    global STORED
    STORED = v
    del STORED
def imports():
    import os
    from os import path
    return path
def import_missing():
    from os import no_such_name
def delete_fast(v):
    x = v
    del x
def unbound_fast():
    del y
    y = 1
def cells(v):
    a = v
    def inner(): return a
    a = v
    b = a
    del a
    return b
def classderef(v):
    x = v
    class C:
        y = x
    return C
"""


def _leak_cases(g):
    obj = g["Obj"]()
    sentinel = g["SENTINEL"]
    return [
        ("load_global", (), [sentinel]),
        ("load_global_missing", (), []),
        ("attrs", (obj, sentinel), [sentinel, obj]),
        ("attr_missing", (obj,), [obj]),
        ("store_global", (sentinel,), [sentinel]),
        ("imports", (), [os, os.path]),
        ("import_missing", (), [os]),
        ("delete_fast", (sentinel,), [sentinel]),
        ("unbound_fast", (), []),
    ]


@pytest.mark.parametrize("name", ["load_global", "load_global_missing", "attrs", "attr_missing", "store_global",
                                  "imports", "import_missing", "delete_fast", "unbound_fast", "cells"])
def test_no_reference_leaks(name):
    g = {"SENTINEL": object()}
    exec(compile(textwrap.dedent(LEAK_SRC), FILENAME, "exec"), g)
    f = g[name]
    if name == "cells":
        f.__code__ = drop_closure(1)(f.__code__)
        args, watch = (g["SENTINEL"],), [g["SENTINEL"]]
    else:
        _, args, watch = next(c for c in _leak_cases(g) if c[0] == name)

    def run(n):
        for _ in range(n):
            try:
                f(*args)
            except Exception:
                pass
    with jit():
        run(100)
        assert pyjion.info(f).compiled, pyjion.info(f).reason
        counts = [sys.getrefcount(o) for o in watch]
        blocks = sys.getallocatedblocks()
        run(5000)
        blocks = sys.getallocatedblocks() - blocks
        assert [sys.getrefcount(o) for o in watch] == counts
    assert blocks < 500, "%d blocks more after 5000 calls" % blocks


def test_no_reference_leaks_class_bodies():
    g = {"SENTINEL": object(), "__name__": "opsmod"}
    exec(compile(textwrap.dedent(LEAK_SRC), FILENAME, "exec"), g)
    f = g["classderef"]
    body = next(c for c in f.__code__.co_consts if isinstance(c, types.CodeType) and c.co_name == "C")
    sentinel = g["SENTINEL"]
    with jit():
        for _ in range(100):
            f(sentinel)
        assert pyjion.info(body).compiled, pyjion.info(body).reason
        gc.collect()   # classes are cyclic: only the collector frees them
        count = sys.getrefcount(sentinel)
        for _ in range(2000):
            f(sentinel)
        gc.collect()
        assert sys.getrefcount(sentinel) == count


# ---- errors caught in the same frame (need the lead's exception handling and CALL) ---------------

CAUGHT_SRC = """
class RO:
    @property
    def ro(self):
        return 1

def attr_caught(o, s):
    try:
        return (s, s, o.missing)
    except AttributeError as e:
        return "caught " + e.name
def method_caught(o, s):
    try:
        return (s, o.missing())
    except AttributeError as e:
        return "caught " + e.name
def global_call_caught(o, s):
    try:
        return (s, missing_fn(s))
    except NameError as e:
        return "caught " + e.name
def import_from_caught(o, s):
    try:
        x = (s, s)
        from os import nothing_here
    except ImportError as e:
        return "caught " + e.name
def store_attr_caught(o, s):
    try:
        o.ro = s
    except AttributeError:
        return "caught"
def deref_caught(o, s):
    def inner():
        return y
    try:
        return (s, y)
    except UnboundLocalError:
        y = s
        return "caught"
def delete_fast_caught(o, s):
    try:
        del z
    except UnboundLocalError:
        return "caught"
    z = 1
"""


@pytest.mark.parametrize("name", ["attr_caught", "method_caught", "global_call_caught", "import_from_caught",
                                  "store_attr_caught", "deref_caught", "delete_fast_caught"])
def test_errors_caught_in_frame(name):
    """The error exits leave the right number of values for the handler's unwinding:
    same result as the interpreter and no reference left behind on the sentinel."""
    gi, gj = {}, {}
    fi, fj = make(CAUGHT_SRC, name, gi), make(CAUGHT_SRC, name, gj)
    s = object()
    ri = outcome(lambda: fi(gi["RO"](), s))
    with jit():
        rj = outcome(lambda: fj(gj["RO"](), s))
        info = pyjion.info(fj)
        if not info.compiled:
            pytest.skip("needs opcodes outside this branch: %s" % info.reason)
        assert rj == ri and rj[0] == "ok" and rj[1].startswith("caught")
        o = gj["RO"]()
        before = sys.getrefcount(s)
        for _ in range(1000):
            fj(o, s)
        assert sys.getrefcount(s) == before


def test_load_global_one_code_many_globals():
    # One code object run with several globals dicts, alternately, its sites
    # cached for one of them at a time: each call sees its own globals (the
    # cache knows a globals dict by its version tag alone), rebinding and
    # deleting a name included, and a dict subclass sharing the code too.
    class Globals(dict):
        pass
    src = "def f():\n    return G, len('ab')\n"
    ns = {}
    exec(src, ns)
    code = ns["f"].__code__
    pyjion.enable(threshold=0)
    try:
        dicts = [{"G": i, "__builtins__": builtins} for i in range(3)]
        dicts.append(Globals(G="sub", __builtins__=builtins))
        fs = [types.FunctionType(code, d, "f") for d in dicts]
        got = []
        for round_ in range(4):
            for i, f in enumerate(fs):
                got.append(f())
            dicts[1]["G"] = "rebound %d" % round_
            if round_ == 2:
                del dicts[2]["G"]
                dicts[2]["G"] = "readded"
        assert all(pyjion.info(f).compiled for f in fs)
    finally:
        pyjion.disable()
    expected = []
    values = [0, 1, 2, "sub"]
    for round_ in range(4):
        expected.extend((v, 2) for v in values)
        values[1] = "rebound %d" % round_
        if round_ == 2:
            values[2] = "readded"
    assert got == expected
