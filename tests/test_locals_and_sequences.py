"""Differential tests of code that the compiler specialises on what it can
prove or check cheaply: LOAD_FAST/STORE_FAST without NULL tests where a local
is certainly bound (codegen/front/bound_locals.cpp), UNPACK_SEQUENCE of exact
tuples and lists, and list item assignment. Every case that leaves the fast
path (unbound locals on some path, other sequence types and sizes, other
indexes and containers) must raise or return exactly what the interpreter
does."""
import pytest

from jitcheck import differential

# A class whose objects log their release: when a store frees the old value.
NOISY = """
class Noisy:
    log = []
    def __init__(self, name):
        self.name = name
    def __del__(self):
        Noisy.log.append(self.name)
"""


def test_locals_unbound_on_some_paths():
    differential("""
def f(flag, n):
    out = []
    if flag == 1:
        a = 1
    for i in range(n):
        if i % 2:
            b = i
        out.append(i)
    if flag == 2:
        del n
    try:
        if flag == 3:
            raise KeyError(flag)
        c = 5
    except KeyError as e:
        out.append(repr(e))
    out.append(c if flag != 3 else None)
    if flag == 4:
        return e
    out.append(b if n > 1 else None)
    return out, a
""", [(1, 3), (0, 3), (1, 1), (2, 3), (3, 3), (4, 3), (1, 0)], name="f")


def test_argument_deleted_then_loaded():
    differential("""
def f(x, y):
    if y:
        del x
    while y > 5:
        x = y
        y -= 1
    return x
""", [(1, 0), (1, 1), (1, 7)], name="f")


def test_bound_in_loop_and_handler_paths():
    differential("""
def f(items):
    for item in items:
        last = item
    try:
        v = 1 // items[0]
    except ZeroDivisionError:
        pass
    except IndexError:
        v = None
    finally:
        w = 2
    return last, v, w
""", [([1, 2],), ([0],), ([],)], name="f")


def test_locals_kept_across_yields():
    differential("""
def gen(n):
    if n:
        k = n
    yield 1
    yield k
    del k
    yield k

def f(n):
    g = gen(n)
    return [next(g), next(g), next(g)]
""", [(3,), (0,)], name="f")


def test_store_fast_over_unbound_and_bound():
    differential(NOISY + """
def f(n):
    Noisy.log.clear()
    if n:
        x = Noisy("first")
    x = Noisy("second")
    x = Noisy("third")
    del x
    return list(Noisy.log)
""", [(0,), (1,)], name="f", expect="return")


class T(tuple):
    pass


class L(list):
    pass


def test_unpack_sequence_kinds_and_sizes():
    differential("""
def two(s):
    a, b = s
    return (a, b)

def five(s):
    a, b, c, d, e = s
    return (e, d, c, b, a)

def f(s):
    out = []
    for fn in (two, five):
        try:
            out.append(fn(s))
        except (ValueError, TypeError) as e:
            out.append((type(e).__name__, str(e)))
    return out
""", [((1, 2),), ([3, 4],), ((1, 2, 3, 4, 5),), ([1, 2, 3, 4, 5],), ((1,),), ([1, 2, 3],),
      ("ab",), (T((7, 8)),), (L([9, 10]),), (iter((1, 2)),), (5,), ({1: 2, 3: 4},)], name="f")


def test_unpack_nine_and_nested():
    differential("""
def f(s):
    (a, b), c, d, e, g, h, i, j, k = s
    return a + b + c + d + e + g + h + i + j + k
""", [(((1, 2), 3, 4, 5, 6, 7, 8, 9, 10),), ([[1, 2], 3, 4, 5, 6, 7, 8, 9, 10],), (((1, 2), 3),)], name="f")


def test_unpack_releases_the_sequence_exactly_once():
    differential("""
def f(n):
    data = [(i, str(i)) for i in range(n)]
    total = 0
    for pair in data:
        a, b = pair
        total += a + len(b)
    lst = [[1, 2]] * 3
    for p in lst:
        x, y = p
        total += x * y
    return total, data
""", [(5,), (0,)], name="f")


class TimesTen(list):
    def __setitem__(self, i, v):
        super().__setitem__(i, v * 10)


def test_list_item_assignment():
    differential(NOISY + """
def f(container, index, value):
    Noisy.log.clear()
    container[index] = value
    container[index] = Noisy("replaced")
    container[index] = value
    return container, list(Noisy.log)
""", [([1, 2, 3], 0, 9), ([1, 2, 3], 2, 9), ([1, 2, 3], 3, 9), ([1, 2, 3], -1, 9), ([1, 2, 3], True, 9),
      ([1, 2, 3], 2**40, 9), ([1, 2, 3], 1.0, 9), (TimesTen([1, 2]), 1, 9), ({}, 1, 9), ((1, 2), 0, 9),
      ([], 0, 9)], name="f")


def test_string_building_appends_in_place_with_exact_semantics():
    differential("""
class S(str):
    def __add__(self, other):
        return S(str.__add__(self, other) + "!")

def f(n, start):
    text = start
    other = text
    for i in range(n):
        text += str(i)
        text = text + "-"
    alias = text
    text += "end"
    s = S("x")
    s += "y"
    s = s + "z"
    try:
        text += 5
    except TypeError as e:
        err = str(e)
    return text, alias, other, s, type(s).__name__, err, text is alias
""", [(5, ""), (3, "abc"), (0, "z")], name="f", expect="return")



def test_for_over_ranges():
    differential("""
def f(a, b, c):
    out = []
    for i in range(a, b, c):
        out.append(i)
    for i in range(b):
        if i == 3:
            continue
        if i > 6:
            break
        out.append(-i)
    it = iter(range(a, b))
    next(it, None)
    out.append([x for x in it])
    for i in range(2**62, 2**62 + 2):
        out.append(i)
    for i in range(2**63 - 2, 2**63 + 1):   # beyond a C long: the other range iterator
        out.append(i)
    return out
""", [(0, 10, 1), (10, 0, -3), (5, 5, 1), (-7, 7, 4), (0, 3, 2)], name="f", expect="return")
