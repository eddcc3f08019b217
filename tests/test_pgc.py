"""Profile-guided compilation's stages, as Pyjion 2.0 counts them (info(f).pgc):
0 before any call was profiled, 1 once one was, 2 once the code is compiled
with the profile. In eager mode (threshold 0) the first call compiles code
without a profile and is itself profiled; the next call the hook sees compiles
again with the arguments' types (direct calls go through the hook meanwhile),
unless the profile types no argument, when the code it has stays."""
import pyjion
from pyjion import _eval
from jitcheck import assert_compiled, fresh_copies, jit_off, jit_on


def fresh(src):
    return fresh_copies(src, copies=1)[0]


def machine_code(f):
    """The object that keeps f's machine code alive: another one after a recompile."""
    return _eval.record_info(f.__code__)["owner"]


UNPACK = """
def f(x):
    a, b = x
    return a + b
"""


def test_a_sequence_argument_goes_from_stage_one_to_two():
    f = fresh(UNPACK)
    with jit_on():
        assert f([0, 1]) == 1
        assert pyjion.info(f).pgc == 1
        assert_compiled(f)
        first = machine_code(f)
        assert f([0, 1]) == 1
        assert pyjion.info(f).pgc == 2
        assert pyjion.info(f)["pgc"] == 2          # the older dict-style access
        assert machine_code(f) is first            # a list types no argument: the code stays


def test_a_changed_sequence_type_stays_at_stage_two():
    f = fresh(UNPACK)
    with jit_on():
        assert f([1, 2]) == 3 and pyjion.info(f).pgc == 1
        assert f((3, 4)) == 7 and pyjion.info(f).pgc == 2
        assert f([3, 4]) == 7 and pyjion.info(f).pgc == 2
        assert pyjion.info(f).arg_types == (("list", "tuple"),)


def test_a_recursive_call_is_the_profiled_second_call():
    f = fresh("""
def f(x):
    a, b = x
    if isinstance(x, list):
        f(tuple(x))
    a, b = x
    return a, b
""")
    with jit_on():
        assert f([1, 2]) == (1, 2)       # the inner call is the second: stage 2
        assert pyjion.info(f).pgc == 2
        assert f([3, 4]) == (3, 4) and f((3, 4)) == (3, 4)
        assert pyjion.info(f).pgc == 2


NUMERIC = """
def f(a, b):
    t = 0
    for i in range(b):
        t = t + a * i
    return t
"""


def test_numeric_arguments_are_compiled_again_into_the_optimising_tier():
    f, ref = fresh_copies(NUMERIC)
    with jit_on():
        assert f(3, 10) == ref(3, 10)
        first = pyjion.info(f)
        assert first.pgc == 1 and first.tier == 1      # no profile: baseline code
        code = machine_code(f)
        assert f(5, 100) == ref(5, 100)                # compiled with ints for a and b
        second = pyjion.info(f)
        assert second.pgc == 2 and second.tier == 2 and second.exits == {}
        assert machine_code(f) is not code
        assert f(1.5, 10) == ref(1.5, 10)              # not an int: checked at entry
        assert pyjion.info(f).exits == {"arg_types": 1}


def test_direct_calls_go_through_the_hook_until_stage_two():
    # g calls f from machine code: the call that would be direct is the
    # profiled second one.
    ns_src = NUMERIC + """
def g(n):
    return f(n, 50) + f(n, 50)
"""
    g, ref = fresh_copies(ns_src, name="g")
    f = g.__globals__["f"]
    with jit_on():
        assert g(2) == ref(2)
        assert pyjion.info(f).pgc == 2 and pyjion.info(f).tier == 2


def test_no_stages_with_pgc_off():
    f = fresh(NUMERIC)
    with jit_on():
        pyjion.config(pgc=False)
        f(3, 10)
        f(3, 10)
        i = pyjion.info(f)
        assert i.pgc == 0 and i.tier == 1 and i.arg_types == ()


def test_stage_two_is_reached_only_by_calls_the_hook_sees():
    f = fresh(UNPACK)
    with jit_on():
        f([1, 2])
    with jit_off():
        f([1, 2])                 # not profiled: the hook is off
    assert pyjion.info(f).pgc == 1
