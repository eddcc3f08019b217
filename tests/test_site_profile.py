"""Type profiles per instruction site (front/site_profile.h): what CPython's
specialising interpreter learnt where a function ran interpreted, as
pyjion.info(f).site_profile shows it and as the optimising tier reads it."""
import pytest

import pyjion
from pyjion import _codegen
from jitcheck import PY313


def warm(f, *args, times=30):
    """Runs f interpreted (no JIT) often enough for 3.11 to quicken it."""
    for _ in range(times):
        f(*args)


def sites(f, opname):
    return [(p.state, p.type, p.quickened) for p in pyjion.info(f).site_profile if p.opname == opname]


def test_binary_op_sites_say_which_number_type_they_met(nojit):
    def ints(a, b):
        return a * b + a - b

    def floats(a, b):
        return a * b + a - b

    warm(ints, 3, 4)
    warm(floats, 3.5, 4.25)
    assert [s[:2] for s in sites(ints, "BINARY_OP")] == [("specialised", "int")] * 3
    assert [s[:2] for s in sites(floats, "BINARY_OP")] == [("specialised", "float")] * 3
    assert sites(ints, "BINARY_OP")[0][2] == "BINARY_OP_MULTIPLY_INT"


def test_mixed_operands_leave_the_site_generic(nojit):
    def add(a, b):
        return a + b

    for i in range(40):
        add(i, 1.5)   # int + float: 3.11 specialises neither
    (site,) = sites(add, "BINARY_OP")
    assert site[0] == "generic" and site[1] == "object"
    # 3.13 keeps the adaptive counter in the cache: the generic form is BINARY_OP
    assert site[2] == ("BINARY_OP" if PY313 else "BINARY_OP_ADAPTIVE")


def test_a_function_that_never_warmed_up_has_learnt_nothing(nojit):
    def cold(a, b):
        return a + b

    cold(1, 2)
    (site,) = sites(cold, "BINARY_OP")
    # 3.13 quickens code when it is created: the site is there, not yet reached by its counter
    assert site[:2] == (("unseen" if PY313 else "not quickened"), "object")
    assert site[2] == "BINARY_OP"


def test_a_branch_not_run_since_quickening_is_unseen(nojit):
    def branch(a, flag):
        if flag:
            return a * 3
        return a

    warm(branch, 2, False)
    (site,) = sites(branch, "BINARY_OP")
    assert site[:2] == ("unseen", "object")


def test_containers_at_subscript_and_unpack_sites(nojit):
    def subscripts(xs, t, d):
        a, b = t
        xs[0] = d["k"]
        return xs[1] + t[0]

    warm(subscripts, [1, 2], (3, 4), {"k": 5})
    assert [s[:2] for s in sites(subscripts, "UNPACK_SEQUENCE")] == [("specialised", "tuple")]
    assert [s[:2] for s in sites(subscripts, "STORE_SUBSCR")] == [("specialised", "list")]
    assert [s[1] for s in sites(subscripts, "BINARY_SUBSCR")] == ["dict", "list", "tuple"]


def test_attribute_and_call_sites_name_their_specialisation(nojit):
    class Point:
        def __init__(self, x):
            self.x = x

    def use(p, xs):
        return len(xs) + p.x

    warm(use, Point(1), [1, 2])
    assert sites(use, "LOAD_ATTR") == [("specialised", "object", "LOAD_ATTR_INSTANCE_VALUE")]
    if PY313:
        assert ("specialised", "object", "CALL_LEN") in sites(use, "CALL")
    else:
        assert ("specialised", "object", "PRECALL_NO_KW_LEN") in sites(use, "PRECALL")
    assert sites(use, "LOAD_GLOBAL")[0][2] == "LOAD_GLOBAL_BUILTIN"


def test_for_iter_has_no_interpreter_profile_on_3_11(nojit):
    def loop(n):
        t = 0
        for i in range(n):
            t += i
        return t

    warm(loop, 5)
    if PY313:
        # 3.12+ specialises FOR_ITER (a range here); its operand is no number
        assert sites(loop, "FOR_ITER") == [("specialised", "object", "FOR_ITER_RANGE")]
    else:
        assert sites(loop, "FOR_ITER") == [("unprofiled", "object", "FOR_ITER")]


def test_the_profile_is_read_the_same_for_compiled_code(jit):
    # Compiled from its first call (eager): never quickened, nothing learnt;
    # the profile is still read without touching the machine code.
    def f(a, b):
        return a + b

    assert f(1, 2) == 3
    assert pyjion.info(f).compiled
    if PY313:
        # quickened when created; RESUME_CHECK (what tells "not quickened"
        # from "unseen") depends on whether the interpreter ever entered it
        assert sites(f, "BINARY_OP")[0][:2] in (("not quickened", "object"), ("unseen", "object"))
    else:
        assert sites(f, "BINARY_OP")[0][0] == "not quickened"


def test_site_profiles_rejects_what_is_not_code():
    with pytest.raises(TypeError):
        _codegen.site_profiles(lambda: 1)
    with pytest.raises(TypeError):
        pyjion.info(42)
