"""Common bytecode patterns of library code, one per function, each a loop
whose body is the pattern; tools/pattern_cycles.py measures what one turn of
each costs in machine code against stock CPython's interpreter.

    python bench/patterns.py MODE NAME N

MODE "jit": the function's sites are warmed in the interpreter first (as
before a real compile), then it is compiled by one forced sample inside it
(pyjion's warm-up by samples, CPython 3.13) and the sampler is stopped, so
nothing else compiles while it runs; "stock": the same without pyjion. Then
NAME runs N turns."""
import sys

SAMPLE = False


def _sample_now():
    pass


class P:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def m(self, a):
        return a

    @property
    def prop(self):
        return self.x


class S:
    __slots__ = ("a", "b")

    def __init__(self):
        self.a = 1
        self.b = 2


def leaf(a, b):
    return a


def leafd(a, b=2):
    return a


def attr(n, p):
    if SAMPLE:
        _sample_now()
    t = 0
    for i in range(n):
        t = p.x
        t = p.y
    return t


def store_attr(n, p):
    if SAMPLE:
        _sample_now()
    for i in range(n):
        p.x = i
    return p.x


def method(n, p):
    if SAMPLE:
        _sample_now()
    t = 0
    for i in range(n):
        t = p.m(i)
    return t


def func(n, p):
    if SAMPLE:
        _sample_now()
    t = 0
    for i in range(n):
        t = leaf(i, t)
    return t


def func_defaults(n, p):
    if SAMPLE:
        _sample_now()
    t = 0
    for i in range(n):
        t = leafd(i)
    return t


def call_keywords(n, p):
    if SAMPLE:
        _sample_now()
    t = 0
    for i in range(n):
        t = leaf(i, b=t)
    return t


def str_equality(n, p):
    if SAMPLE:
        _sample_now()
    t = 0
    s = "abc"
    for i in range(n):
        if s == "abd":
            t += 1
        if s != "abc":
            t += 1
    return t


def int_compare(n, p):
    if SAMPLE:
        _sample_now()
    t = 0
    for i in range(n):
        if i < 5:
            t += 1
        if i == 7:
            t += 1
    return t


def is_none(n, p):
    if SAMPLE:
        _sample_now()
    t = 0
    x = None
    for i in range(n):
        if x is None:
            t += 1
        if p is not None:
            t += 1
    return t


def contains(n, p):
    if SAMPLE:
        _sample_now()
    t = 0
    d = {"a": 1, "b": 2}
    for i in range(n):
        if "a" in d:
            t += 1
    return t


def builtins_len_isinstance(n, p):
    if SAMPLE:
        _sample_now()
    t = 0
    items = [1, 2, 3]
    for i in range(n):
        t = len(items) + isinstance(p, P)
    return t


def list_append(n, p):
    if SAMPLE:
        _sample_now()
    items = []
    for i in range(n):
        items.append(i)
    return len(items)


def build_tuple(n, p):
    if SAMPLE:
        _sample_now()
    t = (0, p)
    for i in range(n):
        t = (i, p)
    return t[0]


def dict_get(n, p):
    if SAMPLE:
        _sample_now()
    d = {"a": 1}
    t = 0
    for i in range(n):
        t = d["a"]
        t = d.get("b")
    return t


def for_list(n, p):
    if SAMPLE:
        _sample_now()
    items = list(range(10))
    t = 0
    for i in range(n // 10):
        for x in items:
            t = x
    return t


def fstring(n, p):
    if SAMPLE:
        _sample_now()
    t = ""
    for i in range(n):
        t = f"{i}-{p.x}"
    return t


def slot_attr(n, p):
    if SAMPLE:
        _sample_now()
    s = S()
    t = 0
    for i in range(n):
        t = s.a
    return t


def load_globals(n, p):
    if SAMPLE:
        _sample_now()
    t = leaf
    for i in range(n):
        t = P
        t = leaf
    return t.__name__


def try_except(n, p):
    if SAMPLE:
        _sample_now()
    t = 0
    for i in range(n):
        try:
            t += 1
        except KeyError:
            pass
    return t


def raise_catch(n, p):
    if SAMPLE:
        _sample_now()
    t = 0
    d = {}
    for i in range(n // 10):
        try:
            d["x"]
        except KeyError:
            t += 1
    return t


def construct(n, p):
    if SAMPLE:
        _sample_now()
    t = p
    for i in range(n // 2):
        t = P(i, i)
    return t.x, t.y


def property_get(n, p):
    if SAMPLE:
        _sample_now()
    t = 0
    for i in range(n):
        t = p.prop
    return t


def generator_loop(n, p):
    if SAMPLE:
        _sample_now()
    t = 0
    for x in (i for i in range(n)):
        t = x
    return t


def unpack(n, p):
    if SAMPLE:
        _sample_now()
    pair = (1, 2)
    t = 0
    for i in range(n):
        a, b = pair
        t = a
    return t


def str_methods(n, p):
    if SAMPLE:
        _sample_now()
    s = "Hello"
    t = None
    for i in range(n):
        t = s.startswith("H")
        t = s.lower()
    return t


def empty_loop(n, p):
    if SAMPLE:
        _sample_now()
    for i in range(n):
        pass
    return 0


PATTERNS = [name for name, f in list(globals().items())
            if callable(f) and getattr(f, "__code__", None) is not None
            and f.__code__.co_varnames[:2] == ("n", "p")]


def main(mode, name, n):
    global SAMPLE, _sample_now
    fn = globals()[name]
    p = P(1, 2)
    fn(50, p)
    fn(50, p)                  # the interpreter specialises the sites
    if mode == "jit":
        import pyjion
        from pyjion import _eval
        _sample_now = _eval._sample_now
        SAMPLE = True
        fn(1, p)
        SAMPLE = False
        if not pyjion.info(fn).compiled:
            raise SystemExit("%s did not compile: %s" % (name, pyjion.info(fn)))
        _eval._stop_sampler()   # nothing else compiles by wall-clock ticks meanwhile
    return fn(n, p)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
