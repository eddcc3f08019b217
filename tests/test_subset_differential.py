"""Differential tests of the compiled subset: every function runs once as
machine code and once on stock CPython (a second, separately compiled copy),
and results, exceptions, traceback lines and carets, argument mutations and
reference counts must be identical (see jitcheck.differential). Each test also
checks that the opcode it exercises really is in the function's bytecode."""
import dis
import itertools
import sys
import textwrap

import pytest

import pyjion
from jitcheck import PY313, assert_compiled, differential, jit_off, jit_on, make_function, register_source, version_opcode

INTS = [0, 1, -1, 3, -7, 255, 2 ** 31, -(2 ** 63), 2 ** 64 + 1, -(10 ** 30)]
FLOATS = [0.0, -0.0, 1.5, -2.75, 1e308, 5e-324, float("inf"), float("-inf"), float("nan")]
BOOLS = [True, False]
NUMBERS = INTS + FLOATS + BOOLS
SHIFTS = [0, 1, 3, 63, 64, 100, -1, -64, True, False, 2.0]
POW_BASES = [0, 1, -1, 2, -3, 7, 2 ** 64 + 1, 0.5, -2.0, 0.0, 1e308, float("nan"), True, False]
POW_EXPS = [0, 1, 2, 3, 31, -1, -2, 0.5, 2.5, -0.5, 100, True, False]

OPS = ["+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^", "@"]
COMPARISONS = ["<", "<=", "==", "!=", ">", ">="]


def binop_src(op):
    return "def f(a, b):\n    c = a %s b\n    return c\n" % op


def inplace_src(op):
    return "def f(a, b):\n    a %s= b\n    return a\n" % op


def operand_pairs(op):
    if op == "**":
        return list(itertools.product(POW_BASES, POW_EXPS))
    if op in ("<<", ">>"):
        return list(itertools.product(INTS + BOOLS + [1.5], SHIFTS))
    if op == "@":
        return [(1, 2), (1.5, 2), (True, 1)]
    return list(itertools.product(NUMBERS, NUMBERS))


# Strings and lists, where the operator is defined for them (and where not).
SEQUENCE_CASES = {
    "+": [("ab", "cd"), ("", "x"), ([1, 2], [3]), ([], []), ((1,), (2, 3)), ("a", 1), ([1], (2,)),
          (1, "a"), ("é", "ü" * 3)],
    "*": [("ab", 3), (3, "ab"), ("ab", 0), ("ab", -2), ([1, [2]], 2), (2, [0]), ("x", True),
          ("ab", 10 ** 30), ([1], 2 ** 64 + 1), ("ab", 1.5), ("a", "b")],
    "%": [("%d-%s", 5), ("%s", [1, 2]), ("%5.2f", 3.14159), ("%d", "x"), ("%d %d", 1),
          ("no format", 1), ("%%", ()), (b"%d", 3), ("%c", 0x1F600), ("%x", 2 ** 70)],
    "-": [("ab", "b"), ([1], [1])],
    "/": [("ab", 2)],
    "<<": [("a", 1)],
    "&": [({1, 2}, {2, 3}), (frozenset([1]), {1})],
    "|": [({1, 2}, {3}), ({"a": 1}, {"b": 2}), ({"a": 1}, {"a": 2})],
    "^": [({1, 2}, {2, 3})],
}


@pytest.mark.parametrize("op", OPS)
def test_binary_op_numbers(op):
    differential(binop_src(op), operand_pairs(op), opcodes=[("BINARY_OP", op)])


@pytest.mark.parametrize("op", OPS)
def test_inplace_op_numbers(op):
    differential(inplace_src(op), operand_pairs(op), opcodes=[("BINARY_OP", op + "=")])


@pytest.mark.parametrize("op", sorted(SEQUENCE_CASES))
def test_binary_op_sequences(op):
    differential(binop_src(op), SEQUENCE_CASES[op], opcodes=[("BINARY_OP", op)])


@pytest.mark.parametrize("op", sorted(SEQUENCE_CASES))
def test_inplace_op_sequences(op):
    # list += / *= / |= mutate the argument in place (compared too), str does not
    differential(inplace_src(op), SEQUENCE_CASES[op], opcodes=[("BINARY_OP", op + "=")])


def test_bool_arithmetic_keeps_bool_results():
    src = """
    def f(a, b):
        x = a & b
        y = a | b
        z = a ^ b
        s = a + b
        w = x * 4 + y * 2 + z
        return w * 10 + s
    """
    differential(src, list(itertools.product(BOOLS + [0, 1, 2], BOOLS + [0, 1, 2])),
                 opcodes=[("BINARY_OP", "&"), ("BINARY_OP", "^")])
    for op in ("&", "|", "^"):
        outs = differential(binop_src(op), list(itertools.product(BOOLS, BOOLS)))
        assert all(o[1][0] == "bool" for o in outs)


# ---- comparisons ----------------------------------------------------------------------

COMPARE_VALUES = [0, 1, -1, 2 ** 64, 1.0, 0.5, -0.0, float("nan"), float("inf"), True, False,
                  "a", "ab", "B", "", [1, 2], [1, 3], (1, 2), None, 1e20, 10 ** 20]


@pytest.mark.parametrize("op", COMPARISONS)
def test_compare_op(op):
    pairs = list(itertools.product(COMPARE_VALUES, COMPARE_VALUES))
    differential("def f(a, b):\n    c = a %s b\n    return c\n" % op, pairs,
                 opcodes=[("COMPARE_OP", op)])


@pytest.mark.parametrize("op", COMPARISONS)
def test_compare_in_condition(op):
    src = """
    def f(a, b):
        if a %s b:
            r = 1
        else:
            r = 2
        return r
    """ % op
    pairs = list(itertools.product(COMPARE_VALUES[:12], COMPARE_VALUES[:12])) + [
        ("a", 1), (None, 0), ([1], (1,))]
    differential(src, pairs, opcodes=[("COMPARE_OP", op), "POP_JUMP_FORWARD_IF_FALSE"])


# ---- control flow --------------------------------------------------------------------------

def test_if_elif_else():
    src = """
    def f(a, b):
        if a < b:
            r = a - b
        elif a == b:
            r = 0
        elif a > 2 * b:
            r = a * b
        else:
            r = a + b
        return r
    """
    differential(src, list(itertools.product([-3, 0, 1, 5, 7.5, 2 ** 70], [-1, 0, 1, 3, 2.5])),
                 opcodes=["POP_JUMP_FORWARD_IF_FALSE"] + ([] if PY313 else ["JUMP_FORWARD"]))   # 3.13 copies the tail instead


def test_truthiness_of_all_kinds():
    src = """
    def f(a):
        if a:
            r = 1
        else:
            r = 0
        return r
    """
    values = [0, 1, -1, 0.0, -0.0, float("nan"), "", "x", [], [0], (), {}, {0: 0}, set(), None,
              True, False, 2 ** 100, 0j, b"", b"\0", range(0), range(2)]
    differential(src, [(v,) for v in values], opcodes=["POP_JUMP_FORWARD_IF_FALSE"])


def test_while_loops():
    src = """
    def f(n, step):
        i = 0
        total = 0
        while i < n:
            total = total + i * step
            i += 1
        return total
    """
    differential(src, [(0, 1), (1, 1), (10, 3), (100, -2), (5, 0.5), (3, "x"), (4, [1])],
                 opcodes=["POP_JUMP_BACKWARD_IF_TRUE"])


def test_nested_loops_break_continue():
    src = """
    def f(n, m):
        total = 0
        i = 0
        while i < n:
            i += 1
            if i % 3 == 0:
                continue
            j = 0
            while True:
                j += 1
                if j > m:
                    break
                if (i + j) % 2:
                    continue
                total += i * j
                if total > 10000:
                    break
            if total > 5000:
                break
        return total
    """
    differential(src, [(0, 0), (5, 5), (20, 7), (100, 100), (7, -1)],
                 opcodes=["JUMP_BACKWARD", "JUMP_FORWARD", "POP_JUMP_BACKWARD_IF_TRUE"])


def test_while_not_condition_jumps_backward_if_false():
    src = """
    def f(a, b):
        while not (a > b):
            a = a + 1
        return a
    """
    differential(src, [(0, 5), (10, 5), (-3.5, 0), (5, 5)], opcodes=["POP_JUMP_BACKWARD_IF_FALSE"])


def test_and_or_value_jumps():
    src_and = "def f(a, b):\n    return a and b\n"
    src_or = "def f(a, b):\n    return a or b\n"
    src_mix = "def f(a, b, c):\n    x = a and b or c\n    y = (a or b) and (c or a)\n    return x, y\n"
    vals = [0, 1, "", "s", [], [1], None, 0.0, True, False]
    pairs = list(itertools.product(vals, vals))
    differential(src_and, pairs, opcodes=["JUMP_IF_FALSE_OR_POP"])
    differential(src_or, pairs, opcodes=["JUMP_IF_TRUE_OR_POP"])
    src_mix = """
    def f(a, b, c):
        x = a and b or c
        y = (a or b) and (c or a)
        return (x or 0) + (y or 0) * 1000
    """
    triples = list(itertools.product([0, 1, 2, None, False], [0, 3, None], [0, 5, True]))
    differential(src_mix, triples, opcodes=["JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"])


def test_and_or_conditions():
    src = """
    def f(a, b, c):
        if a and (b or c):
            r = 1
        elif not a and b:
            r = 2
        elif a or c:
            r = 3
        else:
            r = 4
        return r
    """
    triples = list(itertools.product([0, 1, "", "x", None], [0, 2, []], [0, 3.5, [0]]))
    differential(src, triples, opcodes=["POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_FORWARD_IF_TRUE"])


def test_is_none_and_is_not_none_forward():
    src = """
    def f(a, b):
        r = 0
        if a is None:
            r = r + 1
        if b is not None:
            r = r + 10
        if a is not None and b is None:
            r = r + 100
        return r
    """
    vals = [None, 0, False, "", 1, [None]]
    differential(src, list(itertools.product(vals, vals)),
                 opcodes=["POP_JUMP_FORWARD_IF_NOT_NONE", "POP_JUMP_FORWARD_IF_NONE"])


def test_is_none_backward():
    src_not_none = """
    def f(n):
        x = 0
        while x is not None:
            n = n - 1
            if n <= 0:
                x = None
        return n
    """
    src_none = """
    def f(n):
        x = None
        while x is None:
            n = n - 1
            if n <= 0:
                x = n
        return x
    """
    differential(src_not_none, [(0,), (1,), (5,), (2.5,)], opcodes=["POP_JUMP_BACKWARD_IF_NOT_NONE"])
    differential(src_none, [(0,), (1,), (5,), (2.5,)], opcodes=["POP_JUMP_BACKWARD_IF_NONE"])


def test_conditional_expression():
    src = """
    def f(a, b):
        x = a if a > b else b
        y = (x * 2) if x else (x - 1)
        return y
    """
    differential(src, list(itertools.product([0, 3, -2, 1.5], [0, 1, -5])))


def test_implicit_return_none_and_arguments():
    src = """
    def f(a, b=5, *rest, k=3, **kw):
        x = a + b + k
        if x > 100:
            return rest
        if x < 0:
            return kw
    """
    differential(src, [(1,), (1, 2), (200, 1, 2, 3), (-50,), (0, 0, 0)])


def test_unbound_local():
    src = """
    def f(a, b):
        if a:
            x = 1
        if b:
            y = 2
        r = a + x * 2
        return r + y
    """
    outs = differential(src, [(1, 1), (0, 1), (1, 0), (0, 0)], opcodes=["LOAD_FAST"])
    assert [o[0] for o in outs] == ["return", "raise", "raise", "raise"]
    err = outs[1][1]
    assert err["type"] is UnboundLocalError
    assert err["message"] == "cannot access local variable 'x' where it is not associated with a value"


# ---- exceptions mid-expression: traceback lines and carets ------------------------------------

def test_errors_mid_expression_report_line_and_columns():
    src = """
    def f(a, b, c, d):
        x = a + b
        y = (x *
             c +
             d / (a - a))
        z = (y
             // c) - (
             d ** b)
        w = z << c
        return w % d
    """
    outs = differential(src, [
        (1, 2, 3, 4),             # ZeroDivisionError in the middle of the multi-line expression
        (1, 2, 3, 4.0),           # float version
        (1, "x", 3, 4),           # TypeError at the first line
        (1.0, 2, [1], 4),         # TypeError in `x * c`
        (1, 2, 3, 4 + 0j),        # complex: / by zero complex
    ])
    assert all(o[0] == "raise" for o in outs)
    assert {o[1]["type"] for o in outs} == {ZeroDivisionError, TypeError}


def test_overflow_and_value_errors():
    src = """
    def f(a, b):
        x = a * 2
        y = x ** b
        z = a / (b - 1)
        w = b << (a - 5)
        return y + z + w
    """
    outs = differential(src, [
        (1e300, 2),          # OverflowError in **
        (10 ** 400, 2),      # OverflowError: int too large for a float division
        (0, -1),             # ZeroDivisionError: 0 ** -1
        (2, 1),              # ZeroDivisionError: 2 / 0
        (3, 2),              # ValueError: negative shift count
        (2.5, 2),            # TypeError: float shift count
        (6, 2),              # fine
    ])
    assert [o[1]["type"] if o[0] == "raise" else None for o in outs] == [
        OverflowError, OverflowError, ZeroDivisionError, ZeroDivisionError, ValueError, TypeError,
        None]


def test_error_deep_in_the_value_stack_releases_everything():
    # 30 list operands wait on the value stack when the division fails: all
    # must be released (argument reference counts are compared).
    expr = "b / c"
    for _ in range(30):
        expr = "a + (%s)" % expr
    src = "def f(a, b, c):\n    x = %s\n    return x\n" % expr
    differential(src, [([1], [2], 1), ([1], 2, 0), ([], [], [])], opcodes=["BINARY_OP"])


def test_deep_stack_success():
    expr = "a"
    for k in range(60):
        expr = "(%d - %s * b)" % (k, expr) if k % 2 else "(%s + %d)" % (expr, k)
    src = "def f(a, b):\n    x = %s\n    return x\n" % expr
    differential(src, [(1, 1), (2, -1), (0.5, 3), (2 ** 64, 2)])


# ---- objects with their own operators --------------------------------------------------------

class Num:
    """A number-like object; every operation is logged into a shared list."""

    def __init__(self, v, log):
        self.v = v
        self.log = log

    def _other(self, o):
        return o.v if isinstance(o, Num) else o

    def __add__(self, o):
        self.log.append(("add", self.v, self._other(o)))
        return Num(self.v + self._other(o), self.log)

    def __radd__(self, o):
        self.log.append(("radd", o, self.v))
        return Num(o + self.v, self.log)

    def __mul__(self, o):
        self.log.append(("mul", self.v, self._other(o)))
        return Num(self.v * self._other(o), self.log)

    def __iadd__(self, o):
        self.log.append(("iadd", self.v, self._other(o)))
        self.v += self._other(o)
        return self

    def __eq__(self, o):
        self.log.append(("eq", self.v, self._other(o)))
        return self.v == self._other(o)

    def __lt__(self, o):
        self.log.append(("lt", self.v, self._other(o)))
        return Num(self.v < self._other(o), self.log)     # not a bool: truth via __bool__

    def __bool__(self):
        self.log.append(("bool", self.v))
        return bool(self.v)

    __hash__ = None


class Boom:
    """Every operation raises."""

    def __init__(self, tag):
        self.tag = tag

    def __add__(self, o):
        raise ValueError("add " + self.tag)

    def __radd__(self, o):
        raise KeyError("radd " + self.tag)

    def __eq__(self, o):
        raise LookupError("eq " + self.tag)

    def __lt__(self, o):
        raise ArithmeticError("lt " + self.tag)

    def __bool__(self):
        raise RuntimeError("bool " + self.tag)

    __hash__ = None


class BadBool:
    def __bool__(self):
        return 2


class Sized:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n


class Countdown:
    """True for `n` truth tests, then raises."""

    def __init__(self, n):
        self.n = n

    def __bool__(self):
        self.n -= 1
        if self.n < 0:
            raise OSError("countdown over")
        return True


class NotImpl:
    def __add__(self, o):
        return NotImplemented

    def __lt__(self, o):
        return NotImplemented


def test_custom_operators():
    src = """
    def f(a, b):
        x = a + b
        y = b + a
        x += 1
        z = x * 2
        if a == b:
            z = z + 100
        if x < 10:
            z = z + 1000
        return z
    """
    def calls():
        log = []
        return Num(1, log), Num(2, log)

    def calls2():
        log = []
        return Num(5, log), 5

    def calls3():
        log = []
        return 3, Num(3, log)
    differential(src, [calls, calls2, calls3], opcodes=["BINARY_OP", "COMPARE_OP"])


def test_custom_operators_that_raise():
    src = """
    def f(a, b, c):
        x = a + 1
        y = (x +
             b)
        if c == x:
            y = 0
        return y
    """
    outs = differential(src, [
        (Boom("a"), 1, 1),       # ValueError from __add__
        (1, Boom("b"), 1),       # KeyError from __radd__
        (1, 2, Boom("c")),       # LookupError from __eq__
        (NotImpl(), 1, 1),       # TypeError: unsupported operand
    ])
    assert [o[1]["type"] for o in outs] == [ValueError, KeyError, LookupError, TypeError]


def test_bool_raising_in_conditions():
    src_if = """
    def f(a):
        r = 1
        if a:
            r = 2
        return r
    """
    src_while = """
    def f(a, n):
        i = 0
        while a:
            i += 1
            if i > n:
                break
        return i
    """
    src_andor = """
    def f(a, b):
        x = a and b
        y = b or a
        return x
    """
    differential(src_if, [(Boom("if"),), (BadBool(),), (Sized(0),), (Sized(3),), (Sized(-1),)],
                 opcodes=["POP_JUMP_FORWARD_IF_FALSE"])
    # raising in the first test (top of the loop) and in a later one (the backward jump)
    differential(src_while, [(Boom("w"), 5), (Countdown(0), 5), (Countdown(3), 5),
                             (Countdown(10), 5), (BadBool(), 1)],
                 opcodes=["POP_JUMP_BACKWARD_IF_TRUE"])
    differential(src_andor, [(Boom("x"), 1), (1, Boom("y")), (BadBool(), 0), (0, BadBool()),
                             (Sized(2), Sized(0))],
                 opcodes=["JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"])


def test_comparison_result_truthiness_goes_through_bool():
    src = """
    def f(a, b, n):
        k = 0
        while a < b:
            a += 1
            k += 1
            if k > n:
                break
        return k
    """
    def calls():
        log = []
        return Num(0, log), 3, 10
    differential(src, [calls, (0, 3, 10)], opcodes=[("COMPARE_OP", "<"), "POP_JUMP_BACKWARD_IF_TRUE"])


# ---- __del__ side effects at STORE_FAST / POP_TOP / jumps ---------------------------------------

class Tracked:
    """a + n makes a new Tracked; its death is logged with the line the
    function was at, and the int locals it could see at that moment."""

    def __init__(self, name, log):
        self.name = name
        self.log = log

    def __add__(self, o):
        return Tracked("%s+%s" % (self.name, o), self.log)

    def __bool__(self):
        self.log.append(("bool", self.name))
        return len(self.name) % 2 == 0

    def __del__(self):
        frame = sys._getframe(1)
        if frame.f_code.co_name == "f":
            ints = sorted((k, v) for k, v in frame.f_locals.items() if type(v) is int)
            self.log.append(("del", self.name, frame.f_lineno - frame.f_code.co_firstlineno, ints))


def test_del_side_effects_of_store_fast_and_pop_top():
    src = """
    def f(t, n):
        x = t + 1
        x = n
        t + 2
        y = t + 3
        y = x + n
        if t + 4:
            y = y + 1
        if t + 55 is None:
            y = 0
        z = (t + 6) and n
        z = (t + 77) or n
        return y
    """

    def calls():
        log = []
        return Tracked("t", log), 7
    differential(src, [calls, calls], opcodes=["STORE_FAST", "POP_TOP", "POP_JUMP_FORWARD_IF_FALSE",
                                               "POP_JUMP_FORWARD_IF_NOT_NONE",
                                               "JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"])


# ---- size: many locals, EXTENDED_ARG, long jumps, big functions --------------------------------

def test_many_locals_and_constants_extended_arg():
    lines = ["def f(a):"]
    for i in range(400):
        prev = "a" if i == 0 else "v%d" % (i - 1)
        lines.append("    v%d = %s + %d" % (i, prev, i * 7 + 1000))
    lines.append("    return v399 - v0 + v257")
    src = "\n".join(lines) + "\n"
    differential(src, [(0,), (1.5,), (-(10 ** 20),), ("x",)], opcodes=["EXTENDED_ARG"])
    fn = make_function(src, register_source(src, "ext"))
    assert len(fn.__code__.co_varnames) > 256 and len(fn.__code__.co_consts) > 256


def test_long_forward_and_backward_jumps():
    body = "".join("            x = x + %d\n" % k for k in range(300))
    src = "def f(a, n):\n    x = 0\n    i = 0\n    while i < n:\n        if a:\n" + body + \
          "        else:\n            x = x - 1\n        i += 1\n    return x\n"
    differential(src, [(1, 3), (0, 3), (1, 0), ("", 2)], opcodes=["EXTENDED_ARG"])
    fn = make_function(src, register_source(src, "ext"))
    jumps = [ins for ins in dis.get_instructions(fn)
             if "JUMP" in ins.opname and abs(ins.argval - ins.offset) > 512]
    assert {ins.opname for ins in jumps} >= {version_opcode("POP_JUMP_FORWARD_IF_FALSE"),
                                            version_opcode("POP_JUMP_BACKWARD_IF_TRUE")}


def test_large_function():
    lines = ["def f(a, b):", "    acc = 0"]
    for k in range(1500):
        kind = k % 5
        if kind == 0:
            lines.append("    acc = acc + a * %d - b" % k)
        elif kind == 1:
            lines.append("    if acc > %d:\n        acc = acc // 3" % (k * 10))
        elif kind == 2:
            lines.append("    acc ^= %d" % k)
        elif kind == 3:
            lines.append("    acc = acc % 1000003 if b else acc + 1")
        else:
            lines.append("    acc -= (a or %d)" % k)
    lines.append("    return acc")
    src = "\n".join(lines) + "\n"
    differential(src, [(1, 2), (0, 0), (-7, 3), (2 ** 40, 1)])


def test_store_and_reload_many_times_in_a_loop():
    src = """
    def f(n):
        a = 0
        b = 1
        i = 0
        while i < n:
            t = a + b
            a = b
            b = t
            i += 1
        return a
    """
    out = differential(src, [(0,), (1,), (10,), (90,), (300,)])
    assert out[3] == ("return", ("int", repr(2880067194370816120)))


def test_reference_counts_after_many_calls():
    # No reference leaks on the success path: a million operations on a
    # list argument leave its reference count where it was.
    src = """
    def f(a, n):
        i = 0
        x = a
        while i < n:
            x = a
            y = x + a if False else a
            i += 1
        return i
    """
    src = textwrap.dedent(src)
    fn = make_function(src, register_source(src, "rc"))
    arg = [1]
    with jit_on():
        fn(arg, 1)
        assert_compiled(fn)
        before = sys.getrefcount(arg)
        fn(arg, 200000)
        after = sys.getrefcount(arg)
    assert after == before


# ---- the frame as seen from outside while (and after) compiled code runs -------------------

class Spy:
    """Logs, for every operator call, where the calling frame is (line, last
    instruction, the int locals it holds, who called it)."""

    def __init__(self, v, log):
        self.v = v
        self.log = log

    def _note(self, op, o):
        frame = sys._getframe(2)
        ints = sorted((k, v) for k, v in frame.f_locals.items() if type(v) is int)
        self.log.append((op, frame.f_code.co_name, frame.f_lineno - frame.f_code.co_firstlineno,
                         frame.f_lasti, ints, frame.f_back.f_code.co_name))
        return o.v if isinstance(o, Spy) else o

    def __add__(self, o):
        return Spy(self.v + self._note("add", o), self.log)

    def __sub__(self, o):
        return Spy(self.v - self._note("sub", o), self.log)

    def __lt__(self, o):
        return self.v < self._note("lt", o)

    def __eq__(self, o):
        return self.v == self._note("eq", o)

    def __bool__(self):
        self._note("bool", None)
        return bool(self.v)

    __hash__ = None


def test_caller_frame_seen_from_operator_methods():
    src = """
    def f(s, n):
        i = 0
        t = 0
        while s < n:
            s = s + 1
            i += 1
            if s == 3:
                t = t - 1
            elif s:
                t = t + i
        return t
    """

    def calls():
        return Spy(0, []), 5
    differential(src, [calls, calls, calls], opcodes=["COMPARE_OP", "BINARY_OP"])


FRAME_AFTER = """
def f(a, b):
    x = 10
    y = a + b
    z = y * x
    if z:
        w = z - 1
    return z
"""


class Grab:
    def __init__(self, box):
        self.box = box

    def __add__(self, o):
        self.box.append(sys._getframe(1))
        return o


def test_frame_object_after_the_compiled_call_returned():
    # A frame object that outlives its call (kept by a debugger, a logger, a
    # traceback) shows where the function ended: the RETURN_VALUE.
    states = []
    for use_jit in (True, False):
        fn = make_function(textwrap.dedent(FRAME_AFTER), register_source(FRAME_AFTER, "frame"))
        box = []
        with (jit_on() if use_jit else jit_off()):
            assert fn(Grab(box), 3) == 30
        frame = box[0]
        states.append((frame.f_lineno - fn.__code__.co_firstlineno, frame.f_lasti,
                       sorted((k, v) for k, v in frame.f_locals.items() if type(v) is int),
                       frame.f_back is not None and frame.f_back.f_code.co_name))
        if use_jit:
            assert_compiled(fn)
    jit_state, stock_state = states
    assert stock_state[0] == 6               # `return z`
    assert jit_state == stock_state


def test_unbound_local_line_after_quickening():
    # Stock 3.11 reports the wrong line here once the code is quickened (see
    # jitcheck._explain_quickening); the JIT must report `return y` every time.
    src = textwrap.dedent("""
    def f(a):
        if a:
            y = 1
        x = 1
        return y
    """)
    fn = make_function(src, register_source(src, "quick"))
    lines = []
    with jit_on():
        for _ in range(12):
            try:
                fn(0)
            except UnboundLocalError as exc:
                tb = exc.__traceback__
                while tb.tb_frame.f_code is not fn.__code__:
                    tb = tb.tb_next
                lines.append(tb.tb_lineno - fn.__code__.co_firstlineno)
    assert_compiled(fn)
    assert lines == [4] * 12


@pytest.mark.parametrize("name", ["nested", "andor", "deep", "del"])
def test_debug_mode_stack_checks(name):
    # config(debug=True) compiles a stack check at every bytecode boundary
    # (it aborts the process on a bad slot): run in a subprocess.
    from jitcheck import check_python
    out = check_python("""
        import sys
        sys.path.insert(0, "tests")
        import pyjion, test_subset_differential as t
        pyjion.config(debug=True)
        t.test_%s()
        print("ok")
    """ % {"nested": "nested_loops_break_continue", "andor": "and_or_value_jumps",
           "deep": "error_deep_in_the_value_stack_releases_everything",
           "del": "del_side_effects_of_store_fast_and_pop_top"}[name])
    assert out.strip() == "ok"


def test_exec_of_a_function_code_object():
    src = "def f():\n    x = 6\n    y = x * 7\n    return y\n"
    fn = make_function(src, register_source(src, "exec"))
    with jit_on():
        assert exec(fn.__code__, {}) is None
        assert eval(fn.__code__, {}) == 42
        assert fn() == 42
    assert_compiled(fn)
    assert pyjion.info(fn).run_count == 3
