"""LOAD_GLOBAL's inline cache must never serve a stale value: every way a
global or builtin can change between two executions of the same compiled site
gives the interpreter's answer."""
import builtins

import pytest

import pyjion

pytestmark = pytest.mark.usefixtures("each_site_form")   # every test with both forms of site


def make(src, name, globals_=None):
    ns = {} if globals_ is None else globals_
    exec(compile(src, "<cache-test>", "exec"), ns)
    return ns[name], ns


@pytest.fixture
def jit():
    pyjion.enable(threshold=0)
    yield
    pyjion.disable()


SRC = """
def get():
    return VALUE
"""


def test_rebinding_a_global_is_seen(jit):
    f, ns = make("VALUE = 1\n" + SRC, "get")
    assert [f(), f()] == [1, 1]
    ns["VALUE"] = 2
    assert f() == 2
    assert pyjion.info(f).compiled


def test_deleting_a_global_falls_back_to_builtins_then_raises(jit):
    f, ns = make("VALUE = 'global'\ndef get():\n    return len\n", "get")
    ns["len"] = "shadow"
    assert f() == "shadow"
    del ns["len"]
    assert f() is len
    ns.pop("VALUE")
    g, ns2 = make(SRC, "get")
    with pytest.raises(NameError, match="name 'VALUE' is not defined"):
        g()
    ns2["VALUE"] = 5
    assert g() == 5
    assert pyjion.info(f).compiled and pyjion.info(g).compiled


def test_changing_builtins_is_seen(jit):
    f, _ = make("def get():\n    return pyjion_cache_probe\n", "get")
    builtins.pyjion_cache_probe = 1
    try:
        assert f() == 1
        builtins.pyjion_cache_probe = 2
        assert f() == 2
    finally:
        del builtins.pyjion_cache_probe
    with pytest.raises(NameError):
        f()
    assert pyjion.info(f).compiled


def test_same_code_with_different_globals(jit):
    code = compile(SRC, "<cache-test>", "exec")
    ns1, ns2 = {"VALUE": "one"}, {"VALUE": "two"}
    exec(code, ns1)
    exec(code, ns2)
    # Both functions share one code object, so one compiled site sees two dicts.
    assert ns1["get"].__code__ is ns2["get"].__code__
    assert [ns1["get"](), ns2["get"](), ns1["get"]()] == ["one", "two", "one"]


def test_mapping_globals_are_not_cached(jit):
    class Globals(dict):
        def __missing__(self, key):
            raise KeyError(key)

    ns = Globals(VALUE=1)
    exec(compile(SRC, "<cache-test>", "exec"), ns)
    f = ns["get"]
    assert f() == 1
    dict.__setitem__(ns, "VALUE", 3)
    assert f() == 3
