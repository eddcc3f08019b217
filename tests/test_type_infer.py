"""Golden tests of the optimising tier's abstract interpreter (opt/type_infer.h):
the types it gives locals and stack entries before each instruction, and the
decision it takes at each arithmetic, comparison and range-loop site, for a
few small functions warmed up in the interpreter (so their sites are profiled).
A line reads: offset, opcode, decision (and guarded inputs), typed locals, [stack]."""
import textwrap

from pyjion import _codegen
from jitcheck import PY313


def warm(f, *args, times=30):
    for _ in range(times):
        f(*args)


def lines(f):
    return [" ".join(line.split()) for line in _codegen.infer_types(f.__code__).splitlines()]


def golden(text):
    return [" ".join(line.split()) for line in textwrap.dedent(text).strip().splitlines()]


def test_an_int_accumulator_over_a_range_is_int_throughout(nojit):
    def f(n):
        t = 0
        for i in range(n):
            t += i * n
        return t

    warm(f, 10)
    if PY313:
        # LOAD_GLOBAL pushes [range, NULL]; FOR_ITER's exit is END_FOR, POP_TOP
        assert lines(f) == golden("""
           0 RESUME | []
           2 LOAD_CONST | []
           4 STORE_FAST | [int]
           6 LOAD_GLOBAL | t:int | []
          16 LOAD_FAST | t:int | [range_func obj]
          18 CALL range_call | t:int | [range_func obj obj]
          26 GET_ITER range_iter | t:int | [range]
          28 FOR_ITER range_iter | t:int | [range_iter]
          32 STORE_FAST | t:int | [range_iter int]
          34 LOAD_FAST_LOAD_FAST | t:int i:int | [range_iter]
          36 LOAD_FAST | t:int i:int | [range_iter int int]
          38 BINARY_OP int_arith guard rhs | t:int i:int | [range_iter int int obj]
          42 BINARY_OP int_arith | t:int i:int | [range_iter int int]
          46 STORE_FAST | t:int i:int | [range_iter int]
          48 JUMP_BACKWARD | t:int i:int | [range_iter]
          52 END_FOR | t:int | [range_iter obj]
          54 POP_TOP | t:int | [range_iter]
          56 LOAD_FAST | t:int | []
          58 RETURN_VALUE | t:int | [int]
        """)
        return
    assert lines(f) == golden("""
       0 RESUME | []
       2 LOAD_CONST | []
       4 STORE_FAST | [int]
       6 LOAD_GLOBAL | t:int | []
      18 LOAD_FAST | t:int | [obj range_func]
      20 PRECALL range_call | t:int | [obj range_func obj]
      24 CALL | t:int | [obj range_func]
      34 GET_ITER range_iter | t:int | [range]
      36 FOR_ITER range_iter | t:int | [range_iter]
      38 STORE_FAST | t:int | [range_iter int]
      40 LOAD_FAST | t:int i:int | [range_iter]
      42 LOAD_FAST | t:int i:int | [range_iter int]
      44 LOAD_FAST | t:int i:int | [range_iter int int]
      46 BINARY_OP int_arith guard rhs | t:int i:int | [range_iter int int obj]
      50 BINARY_OP int_arith | t:int i:int | [range_iter int int]
      54 STORE_FAST | t:int i:int | [range_iter int]
      56 JUMP_BACKWARD | t:int i:int | [range_iter]
      58 LOAD_FAST | t:int | []
      60 RETURN_VALUE | t:int | [int]
    """)


def test_floats_from_the_profile_and_a_float_constant(nojit):
    def g(a, b):
        x = 0.0
        for i in range(10):
            x = x + a * b - 1.5
        return x

    warm(g, 1.5, 2.5)
    got = lines(g)
    if PY313:
        assert "38 BINARY_OP float_arith guard lhs rhs~ | x:float i:int | [range_iter float obj obj]" in got
        assert "42 BINARY_OP float_arith | x:float i:int | [range_iter float float]" in got
        assert "48 BINARY_OP float_arith | x:float i:int | [range_iter float float]" in got
        assert got[-1] == "64 RETURN_VALUE | x:float | [float]"
        return
    assert "46 BINARY_OP float_arith guard lhs rhs~ | x:float i:int | [range_iter float obj obj]" in got
    assert "50 BINARY_OP float_arith | x:float i:int | [range_iter float float]" in got
    assert "56 BINARY_OP float_arith | x:float i:int | [range_iter float float]" in got
    assert got[-1] == "66 RETURN_VALUE | x:float | [float]"


def test_a_profile_that_saw_other_types_keeps_the_site_generic(nojit):
    def mixed(a, b):
        return a * b

    warm(mixed, 2, 1.5)   # int * float: 3.11 leaves the site adaptive
    if PY313:   # LOAD_FAST_LOAD_FAST: the site is one instruction earlier
        assert lines(mixed)[2] == "4 BINARY_OP | [obj obj]"
    else:
        assert lines(mixed)[3] == "6 BINARY_OP | [obj obj]"


def test_a_local_that_is_int_on_one_path_and_float_on_another_is_anything(nojit):
    def merge(flag):
        if flag:
            v = 1
        else:
            v = 2.0
        return v + v

    def merge_313(flag, n):
        # 3.13 copies a small return block into both branches: this one it
        # does not, so that the paths join
        if flag:
            v = 1
        else:
            v = 2.0
        w = v + v
        return w, n

    if PY313:
        warm(merge_313, True, 1)
        merge_313(False, 1)
        got = lines(merge_313)
        assert [line for line in got if "BINARY_OP" in line] == ["28 BINARY_OP int_arith guard lhs rhs | [obj obj]"]
        # the tuple is no int for all that its first item is
        assert got[-2:] == ["36 BUILD_TUPLE | w:int | [int obj]", "38 RETURN_VALUE | w:int | [obj]"]
        return
    warm(merge, True)
    merge(False)
    got = lines(merge)
    # v is anything after the join (no type shown); the site, which saw
    # ints, still speculates on them behind guards on both inputs.
    assert [line for line in got if "BINARY_OP" in line] == ["20 BINARY_OP int_arith guard lhs rhs | [obj obj]"]


def test_an_exception_handler_takes_every_local_as_anything(nojit):
    def h(xs):
        s = 0
        for x in xs:
            try:
                s = s + x
            except TypeError:
                s = -1
        return s < 10

    warm(h, [1, 2])
    got = lines(h)
    if PY313:
        assert "44 PUSH_EXC_INFO | [obj obj]" in got
        assert "68 POP_EXCEPT | s:int | [obj obj]" in got
        assert "38 COMPARE_OP int_compare | s:int | [int int]" in got
        return
    assert "28 PUSH_EXC_INFO | [obj obj]" in got
    assert "52 POP_EXCEPT | s:int | [obj obj]" in got
    assert "68 COMPARE_OP int_compare | s:int | [int int]" in got


def test_code_never_run_is_typed_from_constants_alone(nojit):
    def cold(n):
        k = 3
        return k * 2 + n

    got = lines(cold)
    assert "10 BINARY_OP int_arith | k:int | [int int]" in got
    assert "14 LOAD_FAST | k:int | [int]" in got
    assert "16 BINARY_OP | k:int | [int obj]" in got


def test_a_float_operand_lets_the_other_be_any_number(nojit):
    def scale(x, n):
        return x * 2.0 / n

    warm(scale, 3, 7)
    got = lines(scale)
    # 2.0 makes `x * 2.0` a float whatever number x is; `/ n` then too.
    assert "6 BINARY_OP float_arith guard lhs~ | [obj float]" in got
    assert "12 BINARY_OP float_arith guard rhs~ | [float obj]" in got


def test_a_container_built_from_numbers_is_no_number(nojit):
    # BUILD_TUPLE/LIST/SET/STRING/MAP take exactly their items: what they
    # leave is an object, whatever the items are (3.13 once left the bottom
    # item's type: a tuple of an int typed as an int)
    def build(n):
        k = 3
        x = 2.5
        a = (k,)
        b = [k, x]
        c = {k, k, k}
        d = {k: x}
        return a, b, c, d, n

    warm(build, 1)
    got = lines(build)
    stores = [line for line in got if line.split()[1] == "STORE_FAST"][2:]
    assert len(stores) == 4
    assert all(line.endswith("[obj]") for line in stores), stores
    assert not any(local in got[-1] for local in ("a:", "b:", "c:", "d:")), got[-1]
