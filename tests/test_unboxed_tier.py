"""The optimising tier (codegen/opt/): ints and floats unboxed in loops, its
guards and side exits. Each test runs a function's copy under the JIT after
warming it up in the interpreter (so its sites are profiled, as in the
default mode) and a second copy on stock CPython, compares every call's
outcome (result or exception with its traceback, argument refcounts), and
asserts which named exits the JIT copy took: none where the speculation holds
(as CinderX's fail_if_deopt), the expected ones where it must not."""
import contextlib
import math
import sys

import pytest

import pyjion
from pyjion import _eval
from jitcheck import PY313, _compare, fresh_copies, jit_off, jit_on, register_source, run_once


@contextlib.contextmanager
def tier_on():
    """The JIT on (threshold 0) with the tier wherever it unboxes anything
    (config(opt="always")): these tests test its code, paying or not."""
    with jit_on():
        pyjion.config(opt="always")
        yield


def compare_calls(src, fn_jit, fn_ref, calls, jit):
    """Each argument tuple of `calls` run by fn_jit inside `jit()` and by
    fn_ref on stock, their outcomes compared; (stock's outcomes, fn_jit's
    JitInfo after each call)."""
    filename = fn_jit.__code__.co_filename
    outcomes, infos = [], []
    for args in calls:
        with jit():
            got = run_once(fn_jit, args, filename)
            infos.append(pyjion.info(fn_jit))
        with jit_off():
            want = run_once(fn_ref, args, filename)
        _compare(got, want, src, args)
        outcomes.append(want[0])
    return outcomes, infos


def tier_differential(src, warm, calls, exits=None, name=None, tier=2):
    """warm: argument tuples run interpreted (quickening the JIT copy's code);
    calls: argument tuples then run under the JIT (the first compiles it) and
    on stock. exits: the JIT copy's {exit name: count} afterwards (None: not checked)."""
    fn_jit, fn_ref = fresh_copies(src, name=name)
    with jit_off():
        for args in warm:
            fn_jit(*args)
            fn_ref(*args)
    outcomes, infos = compare_calls(src, fn_jit, fn_ref, calls, tier_on)
    for info in infos:
        assert info.compiled, info.reason
    assert info.tier == tier, "tier %d, expected %d" % (info.tier, tier)
    if exits is not None:
        assert info.exits == exits, "exits taken: %r, expected %r" % (info.exits, exits)
    return outcomes, info


SUM_SQUARES = """
def f(n, k):
    t = 0
    for i in range(n):
        t += i * k
    return t
"""


def test_an_int_loop_runs_unboxed_without_exits():
    outcomes, _ = tier_differential(SUM_SQUARES, [(10, 3)] * 30, [(1000, 7), (0, 1), (5, -3)], exits={})
    assert outcomes[0] == ("return", ("int", repr(sum(i * 7 for i in range(1000)))))


def test_int64_overflow_leaves_for_the_interpreter_which_makes_the_big_int():
    tier_differential(SUM_SQUARES, [(10, 3)] * 30, [(100, 2 ** 62)], exits={"int_overflow": 1})


def test_an_argument_that_is_not_an_int_fails_the_guard():
    tier_differential(SUM_SQUARES, [(10, 3)] * 30, [(10, 2.5)], exits={"guard_int": 1})


def test_bool_is_an_int_subclass_and_takes_the_generic_path():
    tier_differential(SUM_SQUARES, [(10, 3)] * 30, [(10, True)], exits={"guard_int": 1})


def test_an_int_subclass_with_its_own_operator_is_honoured():
    src = """
class Weird(int):
    def __mul__(self, other):
        return 1000
    __rmul__ = __mul__

def f(n, k):
    t = 0
    for i in range(n):
        t += i * k
    return t
"""
    fn_jit, fn_ref = fresh_copies(src, name="f")
    weird = fn_jit.__globals__["Weird"](5)
    with jit_off():
        for _ in range(30):
            fn_jit(10, 3)
    with tier_on():
        got = fn_jit(10, weird)
    with jit_off():
        want = fn_ref(10, fn_ref.__globals__["Weird"](5))
    assert got == want == 10000
    assert pyjion.info(fn_jit).exits == {"guard_int": 1}


def test_big_int_arguments_beyond_two_digits_and_beyond_int64():
    calls = [(50, 2 ** 40), (50, -(2 ** 45)), (50, 2 ** 61 // 50), (3, 2 ** 70)]
    outcomes, info = tier_differential(SUM_SQUARES, [(10, 3)] * 30, calls)
    # From the second call on, the code compiled with the first call's
    # profile (ints) checks them at entry: 2**70 does not fit int64.
    assert info.exits == {"arg_types": 1, "int_overflow": 1}   # the third call's sum passes 2**63


FLOOR = """
def f(lo, hi, dlo, dhi):
    out = []
    for a in range(lo, hi):
        for b in range(dlo, dhi):
            out.append(a // b)
            out.append(a % b)
    return out
"""


def test_floor_division_and_modulo_of_negatives_as_python_does():
    calls = [(-7, 8, -3, 0), (-7, 8, 1, 4), (2 ** 63 - 3, 2 ** 63 - 1, -3, 0), (-2 ** 63, -2 ** 63 + 2, 1, 3)]
    tier_differential(FLOOR, [(0, 3, 1, 3)] * 30, calls, exits={})


def test_dividing_by_zero_leaves_for_the_interpreter_which_raises():
    outcomes, info = tier_differential(FLOOR, [(0, 3, 1, 3)] * 30, [(1, 2, 0, 1)])
    assert [o[0] for o in outcomes] == ["raise"]
    assert info.exits == {"zero_divisor": 1}


def test_int64_min_floor_divided_by_minus_one_exits():
    _, info = tier_differential(FLOOR, [(0, 3, 1, 3)] * 30, [(-2 ** 63, -2 ** 63 + 1, -1, 0)])
    assert info.exits == {"int_overflow": 1}


FLOATS = """
def f(xs, scale):
    acc = 0.0
    for i in range(len(xs)):
        acc = acc + xs[i] * scale - 1.5
        acc = acc / 1.0001
    return acc
"""


def test_a_float_loop_runs_unboxed():
    xs = [0.5 * i for i in range(200)]
    tier_differential(FLOATS, [([1.0, 2.0], 2.0)] * 30, [(xs, 3.0), (xs, -0.0), ([], 1.0)], exits={})


def test_nan_inf_and_negative_zero_flow_through_as_on_stock():
    specials = [float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 1e308]
    tier_differential(FLOATS, [([1.0, 2.0], 2.0)] * 30, [(specials, 2.0), (specials, float("nan"))], exits={})


def test_true_division_by_zero_raises_zero_division_error_with_its_traceback():
    src = """
def f(xs, d):
    acc = 0.0
    d = d * 1.0
    for x in xs:
        x = x * 1.0
        acc = acc + x / d
    return acc
"""
    before = pyjion.stats()["jit"]["exits"]["zero_divisor"]
    outcomes, info = tier_differential(src, [([1.0, 2.0], 2.0)] * 30, [([1.0], 0.0), ([1.0], -0.0)])
    assert [o[0] for o in outcomes] == ["raise", "raise"]
    # one in the first call's code, one in the code compiled with its profile
    assert info.exits == {"zero_divisor": 1}
    assert pyjion.stats()["jit"]["exits"]["zero_divisor"] - before == 2


def test_comparisons_of_floats_with_nan_and_ints():
    src = """
def f(xs, lim):
    n = 0
    for x in xs:
        if x < lim:
            n += 1
        if x == lim:
            n += 100
        if x != lim:
            n += 10000
    return n
"""
    specials = [float("nan"), 1.0, 2.0, -0.0, 0.0, float("inf")]
    tier_differential(src, [([1.0, 3.0], 2.0)] * 30, [(specials, 2.0), (specials, float("nan")), (specials, 0.0)],
                      exits={})


def test_int_comparisons_in_a_while_loop():
    src = """
def f(n):
    i = 0
    total = 0
    while i < n:
        if i % 3 == 0:
            total -= i
        else:
            total += i
        i += 1
    return total
"""
    tier_differential(src, [(20,)] * 30, [(1000,), (0,), (-5,)], exits={})


def test_a_global_named_range_that_is_not_the_builtin():
    src = """
def f(n):
    t = 0
    for i in range(n):
        t += i
    return t
"""
    fn_jit, fn_ref = fresh_copies(src)
    with jit_off():
        for _ in range(30):
            fn_jit(10)
    fn_jit.__globals__["range"] = lambda n: [1] * n
    fn_ref.__globals__["range"] = lambda n: [1] * n
    with tier_on():
        got = fn_jit(10)
    with jit_off():
        want = fn_ref(10)
    assert got == want == 10
    assert pyjion.info(fn_jit).exits == {"not_range_iter": 1}


def test_locals_are_visible_to_a_callee_mid_loop():
    src = """
import sys

def peek():
    return dict(sys._getframe(1).f_locals)

def f(n):
    t = 0
    x = 0.5
    seen = []
    for i in range(n):
        t += i
        x = x * 2.0
        if i == 3:
            seen.append(peek())
    return t, x, seen
"""
    tier_differential(src, [(5,)] * 30, [(10,)], name="f", exits={})


def test_tracing_started_mid_loop_hands_the_frame_over():
    src = """
import sys

def start_tracing(events):
    def tracer(frame, event, arg):
        if frame.f_code.co_name == "f":
            events.append((event, frame.f_lineno, frame.f_locals.get("t")))
        return tracer
    sys._getframe(1).f_trace = tracer   # as pdb.set_trace() does: the running frame too
    sys.settrace(tracer)

def f(n, events):
    t = 0
    for i in range(n):
        t += i
        if i == 5:
            start_tracing(events)
    sys.settrace(None)
    return t
"""
    fn_jit, fn_ref = fresh_copies(src, name="f")
    with jit_off():
        for _ in range(30):
            fn_jit(3, [])
    ev_jit, ev_ref = [], []
    with tier_on():
        got = fn_jit(10, ev_jit)
    with jit_off():
        want = fn_ref(10, ev_ref)
    assert got == want
    assert ev_jit == ev_ref and ev_ref


def test_the_tier_is_off_with_pgc_false():
    try:
        pyjion.config(pgc=False)
        tier_differential(SUM_SQUARES, [(10, 3)] * 30, [(100, 7)], tier=1)
    finally:
        pyjion.config(pgc=True)


def test_stats_count_exits_by_name():
    before = pyjion.stats()["jit"]["exits"].get("int_overflow", 0)
    tier_differential(SUM_SQUARES, [(10, 3)] * 30, [(100, 2 ** 62)])
    assert pyjion.stats()["jit"]["exits"]["int_overflow"] == before + 1


def test_ints_where_a_float_operand_makes_the_result_a_float():
    src = """
def f(w, h, xs):
    acc = 0.0
    for x in xs:
        acc = acc + x * 3.0 / w - h
    return acc
"""
    calls = [(7, 2, [1, 2, 3]), (7.5, 2.25, [1.5, 2, -3]), (2 ** 62, 1, [2 ** 61, -1]), (7, 2, [2 ** 70]),
             (0, 1, [1.0]), (3, "x", [1.0])]
    outcomes, info = tier_differential(src, [(7, 2, [1, 2])] * 30, calls)
    assert [o[0] for o in outcomes] == ["return"] * 4 + ["raise"] * 2
    assert info.exits["guard_float"] >= 2   # 2**70 and "x" are not int64-sized ints or floats


def test_code_that_keeps_leaving_is_recompiled_as_baseline_code():
    fn_jit, fn_ref = fresh_copies(SUM_SQUARES)
    with jit_off():
        for _ in range(30):
            fn_jit(10, 3)
    # k an int and a float by turns: the profile of the arguments types
    # nothing, the site's says int, and every float call fails its guard.
    ks = [2.5 + k if k % 2 else k for k in range(200)]
    got = []
    with tier_on():
        for k in ks:
            got.append(fn_jit(10, k))
        info = pyjion.info(fn_jit)
    with jit_off():
        want = [fn_ref(10, k) for k in ks]
    assert got == want
    assert info.opt_given_up and info.compiled and info.tier == 1
    assert pyjion.stats()["jit"]["exits"]["guard_int"] >= 64


LIST_ITEMS = """
def f(xs, n):
    t = 0
    for i in range(n):
        t += xs[i] * xs[-1 - i]
    return t
"""


def test_list_items_at_unboxed_indexes():
    xs = [3, -1, 7, 2 ** 40, 5]
    outcomes, info = tier_differential(LIST_ITEMS, [([1, 2, 3], 3)] * 30, [(xs, 5), (xs, 0), ([], 0)])
    assert info.exits == {}
    assert [o[0] for o in outcomes] == ["return"] * 3


def test_a_list_index_out_of_range_raises_index_error_as_stock():
    outcomes, info = tier_differential(LIST_ITEMS, [([1, 2, 3], 3)] * 30, [([1, 2], 3)])
    assert [o[0] for o in outcomes] == ["raise"]
    assert info.exits == {"not_list": 1}


def test_a_tuple_where_the_profile_saw_lists_leaves():
    outcomes, info = tier_differential(LIST_ITEMS, [([1, 2, 3], 3)] * 30, [((4, 5, 6), 3)])
    assert info.exits == {"not_list": 1}


# Arguments typed by the hook's profile: code warm by calls is compiled on the
# types its arguments had (checked at entry, exit arg_types); a `while` loop
# never quickens in 3.11, so without them nothing in it would be typed.
SCALE = """
def f(n, x):
    t = 0.0
    i = 0
    while i < n:
        t = t + x * i
        i = i + 1
    return t
"""


LAST_JIT_COPY = []   # the function warm_by_calls_differential last made


def warm_by_calls_differential(src, warm, calls, threshold=20, name=None):
    """Like tier_differential, but warmed up by `threshold` calls through the
    hook (which records the arguments' types), compiled at the first of `calls`
    in the default mode (config(opt="auto"))."""
    fn_jit, fn_ref = fresh_copies(src, name=name)
    LAST_JIT_COPY[:] = [fn_jit]
    with jit_on(threshold):
        for args in warm * threshold:
            try:
                fn_jit(*args)
            except Exception:
                pass
        assert pyjion.info(fn_jit).state == "interpreted"
    outcomes, infos = compare_calls(src, fn_jit, fn_ref, calls, lambda: jit_on(threshold))
    return outcomes, infos[-1]


def test_arguments_profiled_by_calls_type_a_while_loop():
    from pyjion import _codegen
    fn = fresh_copies(SCALE, copies=1)[0]
    lines = _codegen.infer_types(fn.__code__, arg_types=1 | 2 << 2).splitlines()
    assert lines[0] == "entry checks: n:int x:float"
    assert "t:float" in lines[-1] and "i:int" in lines[-1]
    # Without the profile, x * i is anything: t is no float after it.
    assert "t:float" not in _codegen.infer_types(fn.__code__).splitlines()[-1]
    outcomes, info = warm_by_calls_differential(SCALE, [(10, 0.5)], [(1000, 0.25), (3, -1.5)])
    assert info.tier == 2 and info.exits == {}
    assert outcomes[0] == ("return", ("float", repr(sum(0.25 * i for i in range(1000)))))


def test_a_tuple_of_an_unboxed_int_is_a_tuple():
    # BUILD_TUPLE 1 of an int the tier holds unboxed: the tuple is an object
    # (3.13 once typed it as the int, and `a + a` added "ints")
    src = """
def f(n):
    t = 0
    for i in range(n):
        k = i + 1
        a = (k,)
        b = [k, k]
        t = t + len(a + a) + len(b)
    return t, a, b
"""
    outcomes, info = warm_by_calls_differential(src, [(10,)], [(50,), (3,)], name="f")
    assert info.tier == 2 and info.exits == {}
    assert outcomes[0] == ("return", ("tuple", [("int", "200"), ("tuple", [("int", "50")]),
                                                ("list", [("int", "50"), ("int", "50")])]))


@pytest.mark.parametrize("odd", [7, 2 ** 70, True, None], ids=["int", "huge", "bool", "none"])
def test_an_argument_unlike_its_profile_leaves_at_entry(odd):
    # x was always a float: an int, a bool, None, an int beyond int64 leave
    # before the first instruction, and the interpreter runs the call.
    outcomes, info = warm_by_calls_differential(SCALE, [(10, 0.5)], [(30, 0.5), (30, odd)])
    assert info.tier == 2 and info.exits == {"arg_types": 1}
    assert outcomes[1][0] == ("raise" if odd is None else "return")


def test_an_int_argument_is_checked_to_fit_int64_at_entry():
    # n was always a small int: two digits pass inline, three through the
    # runtime; beyond int64 leaves (the loop runs no round for n < 0).
    calls = [(30, 0.5), (-(2 ** 40), 0.5), (-(2 ** 62), 0.5), (-(2 ** 63), 0.5), (-(2 ** 70), 0.5)]
    _, info = warm_by_calls_differential(SCALE, [(10, 0.5)], calls)
    assert info.tier == 2 and info.exits == {"arg_types": 1}


def test_an_argument_a_closure_uses_is_never_taken_for_granted():
    src = """
def f(n, x):
    get = lambda: x
    t = 0.0
    i = 0
    while i < n:
        t = t + x * i
        i = i + 1
    return t + get()
"""
    from pyjion import _codegen
    fn = fresh_copies(src, copies=1)[0]
    first = _codegen.infer_types(fn.__code__, arg_types=1 | 2 << 2).splitlines()[0]
    assert first == "entry checks: n:int"     # x is a cell
    warm_by_calls_differential(src, [(10, 0.5)], [(100, 0.5), (5, 2)])


@pytest.mark.xfail(PY313, reason="3.13 layer: no loop traps, no OSR into a running loop (issue 26)", strict=True)
def test_a_loop_hot_by_time_is_compiled_on_the_frames_argument_types():
    # Called once: the sampler compiles it mid-loop (here: one forced
    # sample in the first loop), on the types the frame's arguments have
    # then; the frame goes on in machine code from that loop's header.
    src = """
from pyjion._eval import _sample_now as sample
def f(n, x):
    k = 0
    while k < 2:
        if k == 0:
            sample()
        k = k + 1
    t = 0.0
    for _ in range(3):
        i = 0
        while i < n:
            t = t + x * i
            i = i + 1
    return t
"""
    fn_jit, fn_ref = fresh_copies(src, name="f")
    with jit_on(threshold=10 ** 9):
        got = fn_jit(2000, 0.125)
        info = pyjion.info(fn_jit)
    assert got == fn_ref(2000, 0.125)
    assert info.tier == 2 and info.osr_entries == 1 and info.arg_types == (("int",), ("float",))
    with jit_on(threshold=10 ** 9):
        # x an int now: checked at entry; the baseline fallback runs the call
        assert fn_jit(10, 3) == fn_ref(10, 3)
        assert pyjion.info(fn_jit).exits == {"arg_types": 1}
        assert _eval.record_info(fn_jit.__code__)["fallback"]


# Side exits go on in the code's baseline fallback (compiled with the tier's
# code), which keeps the frame as CPython's interpreter does when it inlines
# Python calls (the hook's interpreter does not): a traceback through a call
# made after an exit has stock's tb_lasti, not the CALL's own offset.
AFTER_EXIT = """
def boom(x):
    raise ValueError(x)

def f(n, k):
    t = 0
    for i in range(n):
        t += i * k
    boom(t)
"""


@pytest.mark.parametrize("k", [2 ** 61, 2.5], ids=["int_overflow", "guard_int"])
def test_after_a_side_exit_the_call_goes_on_in_baseline_code(k):
    # n and k were ints; k is checked at entry (an int beyond int64 or a
    # float leaves there), the loop's sum overflows int64 mid-loop.
    calls = [(10, 3), (10, 3), (10, k)]
    outcomes, info = warm_by_calls_differential(AFTER_EXIT, [(10, 3)], calls, name="f")
    assert [o[0] for o in outcomes] == ["raise"] * 3      # compared with stock, tb_lasti included
    assert info.tier == 2 and info.exits == ({"int_overflow": 1} if isinstance(k, int) else {"arg_types": 1})
    assert _eval.record_info(LAST_JIT_COPY[0].__code__)["fallback"]


POWERS = """
def f(xs, e):
    out = []
    for x in xs:
        x = x * 1.0
        out.append(x ** e)
        out.append(2.0 ** x)
    return out
"""


def test_float_powers_run_unboxed_as_float_pow_computes_them():
    xs = [0.5 * i + 0.25 for i in range(50)]
    tier_differential(POWERS, [([1.0, 2.0], 0.5)] * 30, [(xs, 0.5), (xs, 3), (xs, -1.5), ([1.0], 0)], exits={})


@pytest.mark.parametrize("xs, e, outcome", [
    ([-8.0], 0.5, "return"),     # a complex result
    ([0.0], -1.0, "raise"),      # ZeroDivisionError
    ([10.0], 400.0, "raise"),    # OverflowError
    ([float("nan")], 0.0, "return"),
    ([float("inf")], -1.0, "return"),
], ids=["complex", "zero", "overflow", "nan", "inf"])
def test_float_powers_pow_does_not_decide_leave_for_the_generic_operator(xs, e, outcome):
    outcomes, info = tier_differential(POWERS, [([1.0, 2.0], 0.5)] * 30, [(xs, e)])
    assert outcomes[0][0] == outcome
    assert info.exits == {"float_pow": 1}


STORES = """
def f(src, scale, n):
    xs = list(src) if type(src) is list else src     # the caller's list stays as it was
    for k in range(n):
        for i in range(len(xs)):
            xs[i] -= xs[i - 1] * scale
            xs[-1 - i] = xs[-1 - i] + 0.5
    return xs
"""


def test_list_stores_of_unboxed_floats_at_unboxed_indexes():
    # xs[i] -= ... is COPY/COPY/BINARY_SUBSCR/.../SWAP/SWAP/STORE_SUBSCR:
    # all in the tier; the mutated list is compared with stock's too.
    calls = [([0.5 * i for i in range(20)], 0.25, 5), ([], 1.0, 3), ([1.0], -2.0, 4)]
    tier_differential(STORES, [([1.0, 2.0, 3.0], 0.5, 2)] * 30, calls, exits={})


def test_a_list_store_into_a_tuple_leaves_for_the_generic_store():
    outcomes, info = tier_differential(STORES, [([1.0, 2.0, 3.0], 0.5, 2)] * 30, [((1.0, 2.0), 0.5, 1)])
    assert outcomes[0][0] == "raise"          # TypeError, as stock
    assert info.exits == {"not_list": 1}


def test_an_item_with_a_finaliser_is_released_by_the_generic_store():
    src = """
class Noisy:
    def __del__(self):
        LOG.append(sys._getframe(1).f_locals.get("scale"))

LOG = []
import sys

def f(xs, scale, n):
    for k in range(n):
        for i in range(len(xs)):
            xs[i] = xs[i - 1] * scale
    return xs
"""
    fn_jit, fn_ref = fresh_copies(src, name="f")
    with jit_off():
        for _ in range(30):
            fn_jit([1.0, 2.0], 0.5, 2)
            fn_ref([1.0, 2.0], 0.5, 2)
    with tier_on():
        got = fn_jit([fn_jit.__globals__["Noisy"](), 1.0, 2.0], 0.5, 1)
        info = pyjion.info(fn_jit)
    with jit_off():
        want = fn_ref([fn_ref.__globals__["Noisy"](), 1.0, 2.0], 0.5, 1)
    assert got[1:] == want[1:]
    # the finaliser saw the frame's locals as stock shows them
    assert fn_jit.__globals__["LOG"] == fn_ref.__globals__["LOG"] == [0.5]
    assert info.tier == 2 and info.exits.get("not_list") == 1


# Spare boxes (runtime/unboxed.h): a float local's box, when nothing else
# references it, is reused for the local's next value instead of a new
# float. A box something else holds (a list, a dict of locals, a closure's
# caller) must never change.
SHARED_BOXES = """
import sys

def f(n, step):
    kept = []
    seen = []
    x = 0.0
    y = 0.5
    for i in range(n):
        x = x + step
        y = y * 1.5
        kept.append(x)                          # the list holds x's box
        if i % 3 == 0:
            seen.append(dict(sys._getframe().f_locals))   # and these, y's
        y = y - x
    return kept, [(d["x"], d["y"]) for d in seen], x, y
"""


def test_a_box_held_elsewhere_is_never_reused():
    outcomes, info = tier_differential(SHARED_BOXES, [(5, 0.25)] * 30, [(40, 0.75), (7, -2.0)], name="f")
    # (compared with stock: every kept float, every snapshot of the locals)
    assert info.tier == 2 and [o[0] for o in outcomes] == ["return", "return"]


POWER_OF_TWO_DIVISORS = """
def f(lo, hi, y, c):
    out = []
    for x in range(lo, hi):
        out.append((x // 2, x % 2, x // 8, x % 8, x // 1, x % 1, x // 4611686018427387904,
                    x % 4611686018427387904, x // (2 if c else y), x % (4 if c else y)))
    return out
"""


def test_floor_division_and_modulo_by_constant_powers_of_two():
    # shifts and masks, Python's floor rounding for negatives included; a
    # divisor that only one path makes constant divides in full.
    calls = [(-20, 20, 3, True), (-20, 20, -3, False), (2 ** 63 - 5, 2 ** 63 - 1, 7, True),
             (-2 ** 63, -2 ** 63 + 4, -1, True)]
    tier_differential(POWER_OF_TWO_DIVISORS, [(0, 5, 3, True), (0, 5, 3, False)] * 15, calls, exits={})


FLOAT_ITEMS = """
def f(xs, ys, n):
    acc = 0.0
    for i in range(n):
        acc = acc + xs[i] * 0.5
        acc = acc - (xs[i] - ys[i])
        if ys[i] < acc:
            acc = acc * 0.25
    return acc
"""


def test_float_list_items_are_read_in_place_for_float_arithmetic():
    xs = [0.5 * i for i in range(30)]
    ys = [1.5 - i for i in range(30)]
    nan = [float("nan")] * 3
    tier_differential(FLOAT_ITEMS, [([1.0, 2.0], [0.5, 0.25], 2)] * 30,
                      [(xs, ys, 30), (nan, nan, 3), ([-0.0, 1e308], [0.0, -1e308], 2)], exits={})


@pytest.mark.parametrize("xs, ys", [
    ([1, 2, 3], [0.5, 0.5, 0.5]),          # ints where float arithmetic takes them (x * 0.5)
    ([1.0, 2.0, 3.0], [1, True, 2 ** 70]), # an int, a bool, a huge int where a float was read
    ((1.0, 2.0, 3.0), [0.5, 0.5, 0.5]),    # a tuple
], ids=["ints", "int_bool_huge", "tuple"])
def test_list_items_that_are_not_floats_go_the_generic_way(xs, ys):
    outcomes, info = tier_differential(FLOAT_ITEMS, [([1.0, 2.0], [0.5, 0.25], 2)] * 30, [(xs, ys, 3)])
    assert info.tier == 2 and info.exits     # left the machine code, results as stock's


# Lazy values (model::Kind::LazyConst / LazyLocal): LOAD_CONST and LOAD_FAST
# of a bound boxed local push no code; the tier's operations read the object
# where it is (a constant index is an immediate), and an exit, a jump or a
# generic instruction stores it first. A local rebound while a lazy copy of
# it is on the stack has the copy stored before.
CONSTANT_INDEXES = """
def f(p, v, n, dt):
    v = list(v) if type(v) is list else v      # the caller's list stays as it was
    e = 0.0
    for i in range(n):
        dx = p[0] - p[-1]
        v[0] -= dx * dt
        v[-1] += p[1] * 0.5
        v[1] = 2.5
        e += v[0] * v[0] + v[-2] / 4.0
    return e, v
"""


def test_list_items_at_constant_indexes_and_constant_operands():
    calls = [([1.0, 2.0, 3.0], [0.5, 0.25, 0.125], 50, 0.01), ([-0.0, 1e300, 7.0], [1.0, 2.0], 3, 2.0),
             ([float("nan")] * 2, [1.0] * 4, 2, 0.5)]
    outcomes, info = tier_differential(CONSTANT_INDEXES, [([1.0, 2.0], [0.5, 0.5], 3, 0.1)] * 30, calls,
                                       exits={})
    assert [o[0] for o in outcomes] == ["return"] * 3


@pytest.mark.parametrize("p, v, outcome, exit", [
    ([1.0], [0.5, 0.5], "raise", "not_list"),           # p[-1] is p[0]; p[1]: IndexError
    ([1.0, 2.0], [0.5], "raise", "not_list"),           # v[1] = 2.5: IndexError at a constant index
    ([], [0.5, 0.5], "raise", "not_list"),              # p[0]: IndexError
    ((1.0, 2.0), [0.5, 0.5], "return", "not_list"),     # a tuple where the profile saw lists
    ([1, 2.0], [0.5, 0.5], "return", "guard_float"),    # an int item where floats were read
], ids=["one_item", "store_out_of_range", "empty", "tuple", "int_item"])
def test_constant_indexes_that_do_not_hold_leave_with_the_lazy_values_stored(p, v, outcome, exit):
    outcomes, info = tier_differential(CONSTANT_INDEXES, [([1.0, 2.0], [0.5, 0.5], 3, 0.1)] * 30,
                                       [(p, v, 2, 0.5)])
    assert outcomes[0][0] == outcome
    assert info.tier == 2 and exit in info.exits


REBOUND_LOCAL = """
def f(xs, ys, n):
    first = xs[0 if (xs := ys) else 1]    # the old xs's item: xs is rebound while a lazy copy is held
    acc = first * 1.0
    for i in range(n):
        acc = acc * 0.5 + xs[0] - ys[-1]
    return acc, first, xs
"""


def test_a_local_rebound_while_a_lazy_copy_is_on_the_stack():
    calls = [([1.0, 2.0], [3.0, 4.0, 5.0], 7), ([0.5], [0.25], 0), ([2.5, 1.5], [], 3)]
    outcomes, info = tier_differential(REBOUND_LOCAL, [([1.0], [2.0], 3)] * 30, calls)
    assert [o[0] for o in outcomes] == ["return", "return", "raise"]   # as stock's, refcounts too
    assert info.tier == 2


def test_lazy_values_pass_the_frame_models_run_time_check():
    # config(debug=True) checks every boundary's frame against the model: a
    # lazy value's frame slot is not checked, the others are.
    fn_jit, fn_ref = fresh_copies(CONSTANT_INDEXES)
    with jit_off():
        for _ in range(30):
            fn_jit([1.0, 2.0], [0.5, 0.5], 3, 0.1)
    with tier_on():
        pyjion.config(debug=True)
        try:
            got = fn_jit([1.0, 2.0, 3.0], [0.5, 0.25, 0.125], 40, 0.01)
            short = run_once(fn_jit, ([1.0, 2.0], [0.5], 2, 0.5), fn_jit.__code__.co_filename)
        finally:
            pyjion.config(debug=False)
        assert pyjion.info(fn_jit).tier == 2
    with jit_off():
        assert got == fn_ref([1.0, 2.0, 3.0], [0.5, 0.25, 0.125], 40, 0.01)
        _compare(short, run_once(fn_ref, ([1.0, 2.0], [0.5], 2, 0.5), fn_ref.__code__.co_filename),
                 CONSTANT_INDEXES, ())


def test_tracing_started_while_lazy_values_are_on_the_stack():
    src = """
import sys

def start_tracing(events):
    def tracer(frame, event, arg):
        if frame.f_code.co_name == "f":
            events.append((event, frame.f_lineno))
        return tracer
    sys._getframe(1).f_trace = tracer
    sys.settrace(tracer)
    return 1.0

def f(xs, n, events):
    t = 0.0
    for i in range(n):
        t += xs[0] * (
            xs[1]) + (start_tracing(events) if i == 4 else 0.5)
    sys.settrace(None)
    return t
"""
    fn_jit, fn_ref = fresh_copies(src, name="f")
    with jit_off():
        for _ in range(30):
            fn_jit([1.0, 2.0], 3, [])
    ev_jit, ev_ref = [], []
    with tier_on():
        got = fn_jit([1.5, 2.5], 8, ev_jit)
        assert pyjion.info(fn_jit).tier == 2
    with jit_off():
        want = fn_ref([1.5, 2.5], 8, ev_ref)
    assert got == want
    assert ev_jit == ev_ref and ev_ref


INT_ITEM_BEFORE_AN_EXIT = """
def f(b, xs, n):
    acc = 0.0
    for i in range(n):
        acc = (i + b) / (b - xs[i % 3])
    return acc
"""


def test_an_int_item_the_arithmetic_takes_stays_an_int_through_a_later_exit():
    # (from fuzz_numeric, seed 2) the subtraction saw ints and floats: its
    # item stays an object, so when b's guard fails there, the generic
    # operations compute True - 1 == 0 and 1 / 0 as stock does (int
    # division's message), not True - 1.0.
    outcomes, info = tier_differential(INT_ITEM_BEFORE_AN_EXIT, [(4.75, [-14, 2.5, -14], 5)] * 40,
                                       [(True, [1, 2, 3], 3), (2.5, [1, 2.0, 3], 3)])
    assert outcomes[0][0] == "raise" and info.tier == 2


# Local copies (opt/unboxed_frame.h, local_copy): LOAD_FAST of an unboxed
# local pushes no code and is read from the local's own shadow slot, so a
# store to that local while the copy is on the stack must store the copy
# first; and xmm0 keeps the last float result for the next operation.
REBOUND_FLOATS = """
def f(x, y, n):
    t = 0.0
    for i in range(n):
        t = t + x * (x := x * 0.5 + 1.0)     # the old x, then the new one
        x, y = y, x                          # each read before the other is stored
        t = t - (y - x) * (y + x) / 3.0
    return t, x, y
"""


def test_a_local_stored_while_a_copy_of_it_is_on_the_stack():
    outcomes, info = tier_differential(REBOUND_FLOATS, [(1.5, 2.5, 3)] * 30,
                                       [(1.5, 2.5, 40), (-0.0, float("nan"), 3), (1e300, -1e300, 5)], exits={})
    assert [o[0] for o in outcomes] == ["return"] * 3


SHARED_BOX = """
def f(n):
    t = 2 ** 40
    pair = None
    for i in range(n):
        t += i
        pair = (t, t)   # a generic instruction: t's two stack copies are boxed
    return pair[0] is pair[1], pair[0] == t, pair
"""


def test_copies_of_an_unboxed_local_share_its_box():
    """A generic instruction that needs an unboxed local twice on the stack
    (and in the frame) gets one object for all three, as the interpreter
    has: identity holds, and one int is made where one was."""
    outcomes, _ = tier_differential(SHARED_BOX, warm=[(3,)], calls=[(5,), (50,)])
    assert outcomes[0][0] == "return" and outcomes[0][1][1][0] == ("bool", "True"), outcomes
