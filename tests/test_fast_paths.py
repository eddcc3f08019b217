"""Differential tests of the fast paths machine code takes for values of
known kinds: the inline int/float paths of BINARY_OP and COMPARE_OP (and
COMPARE_OP fused with a conditional jump), and the sites compiled after the
interpreter specialised them (3.13's TO_BOOL_INT/_STR/_NONE, CALL_LEN,
CALL_ISINSTANCE): every operation on values at the edges of the fast paths
must give exactly the interpreter's result or exception."""
import itertools
import json
import math

import pytest

import pyjion

INTS = [0, 1, -1, 2, -2, 7, -7, 2**30 - 1, -(2**30 - 1), 2**30, -(2**30), 2**62, -(2**63), 10**30, True, False]
FLOATS = [0.0, -0.0, 1.5, -2.25, 1e308, -1e308, 5e-324, math.inf, -math.inf, math.nan]
VALUES = INTS + FLOATS + [3 + 4j]

BINARY = ["+", "-", "*", "/", "//", "%", "&", "|", "^"]
COMPARE = ["<", "<=", "==", "!=", ">", ">="]


def make(src, name):
    ns = {}
    exec(compile(src, "<fast-path %s>" % name, "exec"), ns)
    return ns[name]


def outcome(f, *args):
    try:
        r = f(*args)
        return ("ok", type(r), repr(r))
    except Exception as exc:   # the exception is part of the observable behaviour
        return ("raise", type(exc), str(exc))


@pytest.fixture
def jit():
    pyjion.enable(threshold=0)
    yield
    pyjion.disable()


@pytest.mark.parametrize("op", BINARY)
def test_binary_operators(jit, op):
    src = "def f(a, b):\n    return a %s b\n" % op
    aug = "def g(a, b):\n    a %s= b\n    return a\n" % op
    f, g = make(src, "f"), make(aug, "g")
    fi, gi = make(src, "f"), make(aug, "g")
    pyjion.disable()
    expected = [(outcome(fi, a, b), outcome(gi, a, b)) for a, b in itertools.product(VALUES, VALUES)]
    pyjion.enable(threshold=0)
    got = [(outcome(f, a, b), outcome(g, a, b)) for a, b in itertools.product(VALUES, VALUES)]
    assert pyjion.info(f).compiled and pyjion.info(g).compiled
    assert got == expected


@pytest.mark.parametrize("op", COMPARE)
def test_comparisons_value_and_fused_jump(jit, op):
    value = "def f(a, b):\n    return a %s b\n" % op
    branch = "def g(a, b):\n    if a %s b:\n        return 'yes'\n    return 'no'\n" % op
    loop = ("def h(a, b):\n    n = 0\n    while a %s b:\n        n += 1\n"
            "        if n > 2:\n            break\n    return n\n") % op
    sources = [(value, "f"), (branch, "g"), (loop, "h")]
    pairs = [(make(s, n), make(s, n)) for s, n in sources]
    values = [v for v in VALUES if not isinstance(v, complex)] + ["a", "b"]
    pyjion.disable()
    expected = [[outcome(i, a, b) for a, b in itertools.product(values, values)] for _, i in pairs]
    pyjion.enable(threshold=0)
    got = [[outcome(j, a, b) for a, b in itertools.product(values, values)] for j, _ in pairs]
    for j, _ in pairs:
        assert pyjion.info(j).compiled
    assert got == expected


def test_fused_compare_with_raising_bool(jit):
    class Weird:
        def __lt__(self, other):
            return self

        def __bool__(self):
            raise ValueError("no truth here")

    src = "def f(a, b):\n    if a < b:\n        return 1\n    return 2\n"
    f = make(src, "f")
    with pytest.raises(ValueError, match="no truth here") as info:
        f(Weird(), 1)
    assert pyjion.info(f).compiled
    f_entries = [e for e in info.traceback if e.name == "f"]
    assert [e.lineno + 1 for e in f_entries] == [2]   # the `if a < b:` line


@pytest.mark.parametrize("op", BINARY)
def test_non_numbers_take_the_generic_path(jit, op):
    # str/tuple operands fail the int guard (and have no float path for some
    # operators): the result must come from the generic call, never from a
    # half-finished fast path.
    values = ["%s-", (2,), 3, 2.5, -1]
    src = "def f(a, b):\n    return a %s b\n" % op
    f, fi = make(src, "f"), make(src, "f")
    pyjion.disable()
    expected = [outcome(fi, a, b) for a, b in itertools.product(values, values)]
    pyjion.enable(threshold=0)
    got = [outcome(f, a, b) for a, b in itertools.product(values, values)]
    assert pyjion.info(f).compiled
    assert got == expected


def test_results_reuse_only_dead_operands():
    # A temporary that only the value stack holds may take the result (ints
    # outside the small-int cache, floats); anything still named must not
    # change, and cached small ints keep their identity.
    from jitcheck import differential
    differential("""
def f(a, b, c):
    t = a * b
    u = t + c
    v = (a * b + c) - (a - c) * 2
    w = (a * b) * (c + 1) + t
    small = (a - a) + 5
    five = 5
    chain = a
    for i in range(5):
        chain = (chain * 3 + 1) - (chain + 1) * 2
    return t, u, v, w, small is five, chain, (a + b) is (b + a)
""", [(1000, 3, 7), (2, 3, 4), (-70000, 3, 1), (2**29, 1, 1), (2**29, 2, 0), (1.5, 2.25, -3.0),
      (0.1, 3, 2**40), (10**20, 3, 1), (-3, 1, 5)], name="f", expect="return")


# ---- sites the interpreter quickened first ------------------------------------------
# Compiled once warm (the default), a BINARY_OP or COMPARE_OP site keeps only
# the fast path CPython's own specialisation chose there (BINARY_OP_ADD_INT,
# COMPARE_OP_FLOAT_JUMP, ...), or none. Whatever the types later, results and
# exceptions stay the interpreter's.

QUICKENED_SRC = """
def f(a, b):
    r = [a + b, a - b, a * b, a / b if b else None, a < b, a == b]
    if a < b:
        r.append("lt")
    if a >= b:
        r.append("ge")
    return r
"""
WARMUPS = {"ints": (3, 4), "floats": (1.5, 2.5), "strs": ("x", "y"), "none": None}


def warmed(kind, src=QUICKENED_SRC, warmups=WARMUPS, first=(3, 4)):
    """f of `src` compiled after 300 interpreted calls with warmups[kind] as
    arguments (threshold 200); None: compiled at its first call, f(*first)
    (eager, nothing quickened)."""
    f = make(src, "f")
    if warmups[kind] is None:
        pyjion.enable(threshold=0)
        f(*first)
    else:
        pyjion.enable(threshold=200)
        for _ in range(300):
            try:
                f(*warmups[kind])
            except TypeError:   # str - str: the other sites still ran
                pass
    return f


def compiled_sizes(warm):
    """pyjion.info(f).code_size of warm(kind) for each kind: the baseline's
    code (config(pgc=False): the optimising tier would unbox the int and
    float sites instead of choosing fast paths)."""
    sizes = {}
    for kind in warm.kinds:
        pyjion.config(pgc=False)
        try:
            f = warm(kind)
            assert pyjion.info(f).compiled and pyjion.info(f).tier == 1
            sizes[kind] = pyjion.info(f).code_size
        finally:
            pyjion.disable()
            pyjion.config(pgc=True)
    return sizes


def same_outcomes_when_warmed(warm, kind, src, pairs):
    """warm(kind)'s f gives the interpreter's outcome for every argument pair."""
    reference = make(src, "f")
    expected = [repr(outcome(reference, a, b)) for a, b in pairs]
    f = warm(kind)
    try:
        assert pyjion.info(f).compiled
        got = [repr(outcome(f, a, b)) for a, b in pairs]
    finally:
        pyjion.disable()
    assert got == expected


@pytest.mark.parametrize("kind", sorted(WARMUPS))
def test_quickened_sites_keep_the_interpreters_results(kind):
    values = [v for v in VALUES if not isinstance(v, complex)] + ["a", "b", None]
    same_outcomes_when_warmed(warmed, kind, QUICKENED_SRC, list(itertools.product(values, values)))


warmed.kinds = WARMUPS


def test_quickened_sites_emit_only_the_paths_they_saw():
    sizes = compiled_sizes(warmed)
    # both fast paths everywhere > one of them > none (str sites)
    assert sizes["none"] > sizes["ints"] > sizes["strs"]
    assert sizes["none"] > sizes["floats"] > sizes["strs"]


# BINARY_SUBSCR: the inline list/tuple paths follow the quickened instruction
# (BINARY_SUBSCR_LIST_INT, _TUPLE_INT; dicts, __getitem__ and adaptive sites
# keep only the generic helper).

SUBSCR_SRC = """
def f(c, i):
    return c[i], c[i - 1]
"""


class Box:
    def __getitem__(self, i):
        return ("box", i)


SUBSCR_WARMUPS = {"list": ([1, 2, 3], 1), "tuple": ((1, 2, 3), 1), "dict": ({1: "a", 0: "b"}, 1),
                  "getitem": (Box(), 1), "none": None}
CONTAINERS = [[10, 20, 30], (10, 20, 30), {0: "z", 1: "o", 2: "t", -1: "m"}, "abc", b"xyz", Box(),
              range(5), [], (), {}]
INDEXES = [0, 1, 2, 3, -1, -4, 2**30, True, 1.0, "k", slice(0, 2), None]


def subscr_warmed(kind):
    return warmed(kind, SUBSCR_SRC, SUBSCR_WARMUPS, first=([1, 2], 1))


subscr_warmed.kinds = SUBSCR_WARMUPS


@pytest.mark.parametrize("kind", sorted(SUBSCR_WARMUPS))
def test_quickened_subscripts_keep_the_interpreters_results(kind):
    same_outcomes_when_warmed(subscr_warmed, kind, SUBSCR_SRC, list(itertools.product(CONTAINERS, INDEXES)))


def test_quickened_subscripts_emit_only_the_paths_they_saw():
    sizes = compiled_sizes(subscr_warmed)
    assert sizes["none"] > sizes["list"] > sizes["dict"]
    assert sizes["none"] > sizes["tuple"] > sizes["dict"]
    assert sizes["getitem"] == sizes["dict"]


# ---- TO_BOOL (3.13) -------------------------------------------------------------------
# A TO_BOOL site the interpreter specialised for ints, strs or None tests
# that kind's truth inline; everything else (subclasses with their own
# __bool__ or __len__, other types, a __bool__ that raises or returns a
# non-bool) takes the generic path, with the interpreter's results.

TRUTH_SRC = """
def f(a, b):
    r = []
    if a:
        r.append("a")
    else:
        r.append("not a")
    r.append(not b)
    n = 0
    while a and n < 2:
        n += 1
    r.append(n)
    return r
"""
TRUTH_WARMUPS = {"int": (5, 0), "str": ("x", ""), "none": (None, None), "unseen": None}


class IntTrue(int):
    def __bool__(self):
        return True


class StrEmptyTrue(str):
    def __len__(self):
        return 1


class BoolRaises:
    def __bool__(self):
        raise ValueError("no truth here")


class BoolNotBool:
    def __bool__(self):
        return 1


TRUTH_VALUES = [0, 1, -1, 2**30, -(2**30), 2**70, -(2**70), True, False, None, "", "a", "".join([]),
                str(b"", "ascii"), "é" * 3, [], [0], (), 0.0, 2.5, IntTrue(0), StrEmptyTrue(""), BoolRaises(),
                BoolNotBool()]


def truth_warmed(kind):
    return warmed(kind, TRUTH_SRC, TRUTH_WARMUPS, first=(1, 0))


truth_warmed.kinds = TRUTH_WARMUPS


@pytest.mark.parametrize("kind", sorted(TRUTH_WARMUPS))
def test_profiled_truth_tests_keep_the_interpreters_results(kind):
    same_outcomes_when_warmed(truth_warmed, kind, TRUTH_SRC, list(itertools.product(TRUTH_VALUES, TRUTH_VALUES)))


def test_profiled_truth_tests_release_the_values_they_test():
    # Ints and strs made at run time, tested and dropped: the inline path
    # must release each (a leak or an extra release shows in the counts).
    import sys
    f = truth_warmed("int")
    try:
        big = 10 ** 40
        before = sys.getrefcount(big)
        for _ in range(100):
            f(big, big)
        assert sys.getrefcount(big) == before
        assert [f(k * 7, k) for k in range(3)] == [["not a", True, 0], ["a", False, 2], ["a", False, 2]]
    finally:
        pyjion.disable()


# ---- CALL_LEN / CALL_ISINSTANCE (3.13) --------------------------------------------------
# A call site the interpreter specialised for the builtin len or isinstance
# does the builtin's work without the call's dispatch while the callee is
# still that builtin; a rebound name, a bound form, wrong arguments and
# objects with __len__ / __instancecheck__ of their own keep their results.

BUILTIN_CALLS_SRC = """
def f(x, cls):
    return len(x), isinstance(x, cls)
"""


class Sized:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n


class Meta(type):
    def __instancecheck__(cls, inst):
        return inst == "anything"


class Anything(metaclass=Meta):
    pass


BUILTIN_ARGS = [[1, 2, 3], (), "abcd", {1: 2}, b"xy", Sized(5), Sized(-1), 7, None, "anything"]
BUILTIN_CLASSES = [list, str, (int, tuple), Anything, 3, (list, "x")]


def builtin_calls_warmed(kind):
    return warmed(kind, BUILTIN_CALLS_SRC, {"builtins": ([1], list), "unseen": None}, first=([1], list))


builtin_calls_warmed.kinds = ("builtins", "unseen")


@pytest.mark.parametrize("kind", builtin_calls_warmed.kinds)
def test_len_and_isinstance_sites_keep_the_interpreters_results(kind):
    same_outcomes_when_warmed(builtin_calls_warmed, kind, BUILTIN_CALLS_SRC,
                              list(itertools.product(BUILTIN_ARGS, BUILTIN_CLASSES)))


def test_len_and_isinstance_sites_follow_a_rebound_name():
    f = builtin_calls_warmed("builtins")
    try:
        assert f([1, 2], list) == (2, True)
        f.__globals__["len"] = lambda x: "own len"
        f.__globals__["isinstance"] = max     # another builtin function in its place
        assert f(2, 7) == ("own len", 7)
        del f.__globals__["len"], f.__globals__["isinstance"]
        assert f("abc", str) == (3, True)
    finally:
        pyjion.disable()


def test_a_builtin_rebound_in_builtins_is_not_taken_for_len():
    # The site specialised for the real len; builtins.len is another C
    # builtin by the time machine code first runs such a site in the process
    # (that is when the helper looks the builtin up): that one is called.
    from jitcheck import check_python
    out = check_python("""
        import builtins, json, pyjion
        real_len, real_isinstance = len, isinstance
        def f(x, cls):
            return len(x), isinstance(x, cls)
        for _ in range(300):
            f([1], list)
        pyjion.enable(threshold=0)
        builtins.len = abs
        builtins.isinstance = divmod
        got = f(-4, 7)
        builtins.len, builtins.isinstance = real_len, real_isinstance
        sites = [s.quickened for s in pyjion.info(f).site_profile if s.opname == "CALL"]
        print(json.dumps([pyjion.info(f).compiled, sites, repr(got)]))
    """)
    from jitcheck import PY313
    compiled, sites, got = json.loads(out)
    assert compiled and got == "(4, (-1, 3))"
    if PY313:   # (3.11 has no such forms)
        assert sites == ["CALL_LEN", "CALL_ISINSTANCE"]
