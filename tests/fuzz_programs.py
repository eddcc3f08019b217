"""A seeded generator of small whole Python programs for pyjion's differential
fuzzing (fuzz_programs_run.py runs each one under the JIT and on stock CPython).

Where fuzz_subset.py makes one function of arithmetic and control flow, a
program here is a module: exception classes, then a random sequence of units
that may use every unit before them -- helper functions, generator functions,
bounded (and mutually) recursive functions, classes with a subclass -- and
last the entry point `f(p0, ...)`, which returns what it observed. What the
units contain:

- calls: helpers called with exactly their positional arguments (the JIT's
  direct compiled-to-compiled path), with defaults, keywords, keyword-only
  arguments, *args/**kwargs, f(*seq) and f(**map), wrong argument counts now
  and then; recursion with a bounded depth, mutual recursion, exceptions
  raised at the bottom of a recursion; builtins (len, abs, min, max, sum,
  sorted, isinstance, divmod, round, int, str, repr, getattr, ...) and
  list/dict/str methods; closures and lambdas;
- attributes: instance attributes (dict or __slots__), class attributes read
  through instances, properties, methods, class and static methods, a
  subclass overriding some of them (super()), attributes added after
  creation, class attributes changed and methods replaced between calls,
  instance attributes shadowing methods, __class__ assignment (inline-cache
  invalidation); special methods the interpreter calls from C (__eq__,
  __lt__, __len__, __getitem__, __add__, __bool__, __repr__, __iter__,
  __call__, __getattr__, __enter__/__exit__ for `with`, __del__, which
  shows when references are dropped);
- globals: functions swapped or given another __code__ or __defaults__
  between calls, builtins shadowed by globals, a decorator forwarding
  *args/**kwargs;
- generators: yield, `x = yield`, yield from (with a return value), consumed
  by for, list(), sum(), next(), send(), throw(), close(); generator
  expressions; exceptions raised inside generators and thrown into them;
- exceptions: try/except/else/finally with return, break and continue inside,
  raise in nested calls, `raise ... from`, implicit context, bare re-raise;
  f records type names of __context__ and __cause__;
- cells and closures (nonlocal), comprehensions (list, dict, nested),
  unpacking (tuples, lists, starred, nested, swaps), in-place str/list
  operations, int/float mixes that overflow into big ints, division by zero;
- frames seen from inside: the names and current lines of the program's
  frames on the stack (sys._getframe), locals(), the locals of every frame a
  traceback holds and of frames kept past their call, suspended generators'
  frames, sys.exc_info();
- locals perhaps unbound after a branch, a loop, a handler or del, read on
  purpose now and then (UnboundLocalError, NameError for a free variable);
  classes made inside functions; now and then a large program.

Values are typed while generating (int, float, str, list of ints, tuple of
ints, dict of str to int, bool, instances of the generated classes), so most
calls run to completion; the exceptions a program raises are deliberate and
part of what is compared. Running time and sizes are bounded: loops run at
most a few times, values assigned inside loops are reduced (% or a slice),
lists only grow in place by small pieces and never inside a loop over an
existing sequence, every call adds its callee's estimated cost to a budget.

    generate(seed, index) -> Program(source, calls, features)

is deterministic: the same seed and index give the same program and
arguments."""
import random
import re

INT, FLOAT, STR, LIST, TUPLE, DICT, BOOL = "int", "float", "str", "list", "tuple", "dict", "bool"
PLAIN_TYPES = [INT, FLOAT, STR, LIST, TUPLE, DICT, BOOL]
RETURN_TYPES = [INT] * 4 + [STR, LIST, FLOAT, TUPLE, DICT, BOOL]

INT_CONSTS = ["0", "1", "2", "3", "5", "7", "-1", "-4", "10", "100", "255"]
# around the edges of one 30-bit digit (the JIT's inline int arithmetic), of
# 32 and 64 bits, and beyond
BIG_INT_CONSTS = [repr(v) for v in (2 ** 30 - 1, 2 ** 30, 46341, 2 ** 31 - 1, 2 ** 31, 2 ** 62, 2 ** 63 - 1,
                                    2 ** 64 + 1, 10 ** 20, 1 << 100)] + [
    "(%d)" % v for v in (-(2 ** 30 - 1), -(2 ** 30), -(2 ** 63), -(2 ** 62))]
FLOAT_CONSTS = ["0.0", "0.5", "1.5", "(-2.25)", "3.0", "1e300", "(-0.0)", "1e-300", "(-7.5)",
                "float('nan')", "float('inf')", "(-float('inf'))"]
STR_CONSTS = ["''", "'a'", "'xy'", "'hello'", "'A b c'", "'k0'", "'-'", "'12'", "'%s'"]
DICT_KEYS = ["'a'", "'b'", "'c'", "'k0'"]
HANDLER_TYPES = ["ZeroDivisionError", "ValueError", "TypeError", "IndexError", "KeyError",
                 "LookupError", "ArithmeticError", "AttributeError", "OverflowError",
                 "RuntimeError", "StopIteration", "E0", "E1", "E2", "Exception"]
RAISE_TYPES = ["E0", "E1", "E2", "ValueError", "KeyError", "RuntimeError"]

MAX_DEPTH = 3
LOOP_BOUND = 5               # a loop over range(x % 6) or a counter runs at most this often
HELPER_BUDGET = 250          # estimated cost of a helper, a method or a generator
ENTRY_BUDGET = 1500          # ...of the entry point f
CALLS = 3                    # argument tuples f is called with

ARG_VALUES = {
    INT: [0, 1, 2, 3, 5, -1, -7, 12, 100, 2 ** 31, 2 ** 62, -(2 ** 63), 2 ** 64 + 3, True, False],
    FLOAT: [0.0, 0.5, -1.5, 2.0, 1e300, -0.0, float("inf"), float("nan"), 7.25],
    STR: ["", "a", "xy", "hello", "A b c", "12"],
    LIST: [[], [1], [3, 1, 2], [0, -1, 5, 5], [2 ** 62, 7], [4, 4, 4, 4, 4]],
}

PRELUDE = """\
import sys

TRACE = []
COUNT = 0
KEPT = []         # frames kept past their call


def shown(value):
    \"\"\"value, or for what has no stable repr, its type name and size.\"\"\"
    if type(value) in (int, float, str, bool, type(None)):
        return value
    if type(value) in (list, tuple, dict):
        return (type(value).__name__, len(value))
    return type(value).__name__


def shown_locals(names):
    return sorted((k, shown(v)) for k, v in names.items())


def where():
    \"\"\"Name and current line of each of the program's frames on the stack,
    innermost first.\"\"\"
    out = []
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename == where.__code__.co_filename:
        out.append((frame.f_code.co_name, frame.f_lineno))
        frame = frame.f_back
    return out


def kept_frames():
    \"\"\"What the frames kept in KEPT show after their calls ended.\"\"\"
    out = [(fr.f_code.co_name, fr.f_lineno, shown_locals(fr.f_locals),
            fr.f_back.f_code.co_name if fr.f_back is not None else None) for fr in KEPT]
    KEPT.clear()
    return out


def same(value):
    return value


def forwarding(fn):
    \"\"\"A decorator: calls go through *args/**kwargs to the function.\"\"\"
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


def handled():
    \"\"\"The exception being handled (sys.exc_info()), as type name and message.\"\"\"
    exc = sys.exc_info()[1]
    return None if exc is None else (type(exc).__name__, str(exc))


def gen_state(gen):
    \"\"\"Line and locals of a suspended generator, or None once it is done.\"\"\"
    fr = gen.gi_frame
    return None if fr is None else (fr.f_lineno, shown_locals(fr.f_locals))


def frames_of(exc):
    \"\"\"Name, line and locals of each frame of exc's traceback.\"\"\"
    out = []
    tb = exc.__traceback__
    while tb is not None:
        out.append((tb.tb_frame.f_code.co_name, tb.tb_lineno, shown_locals(tb.tb_frame.f_locals)))
        tb = tb.tb_next
    return out


class E0(Exception):
    pass


class E1(E0):
    pass


class E2(ValueError):
    pass
"""


class Param:
    def __init__(self, name, type_, kind="pos", default=None):
        self.name, self.type, self.kind, self.default = name, type_, kind, default


class Fn:
    """What a call site needs to know about a callable."""

    def __init__(self, name, params, ret, cost=1, kind="plain"):
        self.name, self.params, self.ret, self.cost, self.kind = name, params, ret, cost, kind


class Cls:
    def __init__(self, name, base=None, slots=False):
        self.name, self.base, self.slots = name, base, slots
        self.has_dict = True
        self.attrs = {}          # instance attributes: name -> type
        self.class_attrs = {}    # name -> type
        self.props = {}          # property name -> type
        self.methods = {}        # name -> Fn (self not among the params)
        self.init = None         # Fn of the constructor
        self.alts = {}           # method name -> module-level replacement function name
        self.dunders = set()     # special methods defined (__len__, __eq__, __enter__, ...)
        self.subclasses = []

    def lookup(self, table):
        merged = dict(self.base.lookup(table)) if self.base else {}
        merged.update(getattr(self, table))
        return merged


class Scope:
    """The function being generated: its typed variables and context."""

    def __init__(self, kind, budget):
        self.kind = kind                 # "entry", "helper", "method", "gen", "closure", "rec"
        self.vars = {}                   # name -> type (all readable)
        self.maybe = {}                  # name -> type: perhaps unbound here (a branch, a loop, del)
        self.readonly = set()            # captured from an enclosing function (not nonlocal)
        self.nogrow = set()              # lists that must not grow in place (params, captures)
        self.callables = {}              # closures and lambdas defined so far: name -> Fn
        self.budget = budget
        self.cost = 0
        self.mult = 1                    # product of the enclosing loops' bounds
        self.loops = 0                   # enclosing loops (break/continue allowed when > 0)
        self.freeze = 0                  # inside a loop over an existing sequence: no growth
        self.handler = None              # name of the exception bound by the enclosing handler
        self.uses_count = False          # needs `global COUNT`
        self.yields = 0
        self.self_cls = None

    def of_type(self, t, writable=False):
        out = []
        for name, vt in sorted(self.vars.items()):
            if vt != t:
                continue
            if writable and name in self.readonly:
                continue
            out.append(name)
        return out


class ProgramGenerator:
    def __init__(self, rng, finalizers=True):
        self.rng = rng
        self.finalizers = finalizers
        self.counter = 0
        self.funcs = []       # Fn: module-level plain/defaults/keyword/star/recursive functions
        self.gens = []        # Fn: generator functions (yield ints, return an int)
        self.classes = []     # Cls
        self.features = set()
        self.sc = None

    # -- helpers ----------------------------------------------------------------------
    def chance(self, p):
        return self.rng.random() < p

    def pick(self, seq):
        return self.rng.choice(seq)

    def fresh(self, prefix):
        self.counter += 1
        return "%s%d" % (prefix, self.counter)

    def feat(self, name):
        self.features.add(name)

    def weighted(self, options):
        """options: (weight, callable) pairs; calls them in weighted random order
        until one returns something other than None."""
        options = [o for o in options if o[0] > 0]
        while options:
            total = sum(w for w, _ in options)
            r = self.rng.random() * total
            for i, (w, fn) in enumerate(options):
                r -= w
                if r <= 0:
                    break
            result = options[i][1]()
            if result is not None:
                return result
            del options[i]
        return None

    def spend(self, cost):
        """Charges cost (times the enclosing loops) to the function being made;
        False when that would exceed its budget."""
        total = cost * self.sc.mult
        if self.sc.cost + total > self.sc.budget:
            return False
        self.sc.cost += total
        return True

    # -- expressions ------------------------------------------------------------------
    def const(self, t):
        if t == INT:
            return self.pick(BIG_INT_CONSTS) if self.chance(0.12) else self.pick(INT_CONSTS)
        if t == FLOAT:
            return self.pick(FLOAT_CONSTS)
        if t == STR:
            return self.pick(STR_CONSTS)
        if t == BOOL:
            return self.pick(["True", "False"])
        if t == LIST:
            return "[%s]" % ", ".join(self.pick(INT_CONSTS) for _ in range(self.rng.randint(0, 4)))
        if t == TUPLE:
            n = self.rng.randint(0, 3)
            return "(%s)" % "".join(self.pick(INT_CONSTS) + ", " for _ in range(n)).rstrip(" ")
        if t == DICT:
            keys = self.rng.sample(DICT_KEYS, self.rng.randint(0, 3))
            return "{%s}" % ", ".join("%s: %s" % (k, self.pick(INT_CONSTS)) for k in keys)
        return self.new_object(t, 2)

    def var(self, t):
        maybe = sorted(n for n, vt in self.sc.maybe.items() if vt == t and n not in self.sc.vars)
        if maybe and self.chance(0.03):
            # read through a call: a LOAD_FAST after LOAD_GLOBAL is never fused
            # into a superinstruction, whose offset stock would report instead
            self.feat("maybe-unbound local read")
            return "same(%s)" % self.pick(maybe)
        names = self.sc.of_type(t)
        if t in self.class_names():
            # an instance of a subclass does for its base
            for c in self.classes:
                if self.is_subclass(c, t):
                    names += self.sc.of_type(c.name)
        return self.pick(sorted(set(names))) if names else None

    def leaf(self, t):
        if self.chance(0.65):
            v = self.var(t)
            if v is not None:
                return v
        return self.const(t)

    def expr(self, t, d=0):
        if d >= MAX_DEPTH or self.chance(0.2 + 0.2 * d):
            return self.leaf(t)
        if t in self.class_names():
            return self.obj_expr(t, d)
        maker = getattr(self, "e_" + t)
        r = maker(d + 1)
        return r if r is not None else self.leaf(t)

    def any_type(self):
        types = PLAIN_TYPES + [c.name for c in self.classes] * (1 if self.classes else 0)
        return self.pick(types)

    def divisor(self, d):
        e = self.expr(INT, d)
        if self.chance(0.25):
            self.feat("zero division possible")
            return e
        return "(%s or %s)" % (e, self.pick(["3", "7", "-2"]))

    def small(self, d, mod=4):
        """An int expression reduced to range(mod) (TypeError if it is a float, never big)."""
        return "((%s) %% %d)" % (self.expr(INT, d), mod)

    def e_int(self, d):
        return self.weighted([
            (5, lambda: self.int_binop(d)),
            (1, lambda: "(%s(%s))" % (self.pick(["-", "~", "abs", "+"]), self.expr(INT, d))),
            (1.5, lambda: "len(%s)" % self.expr(self.pick([STR, LIST, TUPLE, DICT]), d)),
            (1.5, lambda: self.builtin_int(d)),
            (1.5, lambda: self.subscript_int(d)),
            (4, lambda: self.call_returning(INT, d)),
            (2, lambda: self.attr_read(INT, d)),
            (1.5, lambda: self.special_use(INT, d)),
            (1, lambda: self.str_method_int(d)),
            (1, lambda: "%s(%s)" % (self.pick(["int", "round"]), self.expr(FLOAT, d))),
            (0.7, lambda: "(%s if %s else %s)" % (self.expr(INT, d), self.expr(BOOL, d),
                                                   self.expr(INT, d))),
            (0.7, lambda: "(%s + %s)" % (self.expr(BOOL, d), self.expr(INT, d))),
            (2, lambda: self.gen_consume_int(d)),
            (1, lambda: self.genexpr_int(d)),
            (6 if self.sc.callables else 0, lambda: self.closure_call(INT, d)),
            (0.4, lambda: "(lambda %s: %s * 2 + 1)(%s)" % ((lambda n: (n, n, self.expr(INT, d)))(
                self.fresh("x")))),
        ])

    def int_binop(self, d):
        op = self.pick(["+", "-", "*", "//", "%", "**", "<<", ">>", "&", "|", "^", "+", "-", "*"])
        a = self.expr(INT, d)
        if op in ("//", "%"):
            return "(%s %s %s)" % (a, op, self.divisor(d))
        if op == "**":
            return "(%s ** %s)" % (a, self.pick(["0", "1", "2", "3"]))
        if op == "<<":
            return "(%s << %d)" % (a, self.pick([0, 1, 3, 31, 33, 63, 64]))
        if op == ">>":
            return "(%s >> %d)" % (a, self.rng.randint(0, 70))
        if op == "*" and self.chance(0.3):
            self.feat("big int overflow")
            return "(%s * %s)" % (a, self.pick(BIG_INT_CONSTS))
        return "(%s %s %s)" % (a, op, self.expr(INT, d))

    def builtin_int(self, d):
        self.feat("builtins")
        return self.weighted([
            (1, lambda: "%s(%s, %s)" % (self.pick(["min", "max"]), self.expr(INT, d), self.expr(INT, d))),
            (1, lambda: "max(%s, %s, %s)" % (self.expr(INT, d), self.expr(INT, d), self.expr(BOOL, d))),
            (1, lambda: "%s(%s)" % (self.pick(["min", "max", "sum"]), self.expr(LIST, d))),
            (1, lambda: "%s(%s, default=%s)" % (self.pick(["min", "max"]), self.expr(LIST, d),
                                                self.pick(INT_CONSTS))),
            (0.5, lambda: "sum(%s)" % self.expr(TUPLE, d)),
            (0.5, lambda: "pow(%s, %s, %s)" % (self.expr(INT, d), self.pick(["2", "3", "5"]),
                                               self.pick(["7", "1000003", "0"]))),
            (0.3, lambda: "int(%s)" % self.expr(STR, d)),
            (0.5, lambda: "int(%s)" % self.expr(BOOL, d)),
            (0.5, lambda: "ord((%s)[:1] or 'z')" % self.expr(STR, d)),
            (0.5, lambda: "hash(%s) %% 1" % self.expr(INT, d)),
        ])

    def subscript_int(self, d):
        self.feat("subscripts")
        return self.weighted([
            (2, lambda: "%s[%s]" % (self.expr(LIST, d), self.index(d))),
            (1, lambda: "%s[%s]" % (self.expr(TUPLE, d), self.pick(["0", "1", "-1"]))),
            (1, lambda: "%s[%s]" % (self.expr(DICT, d), self.expr(STR, d + 1))),
            (1.5, lambda: "%s.get(%s, %s)" % (self.expr(DICT, d), self.pick(DICT_KEYS), self.expr(INT, d))),
            (0.2, lambda: "%s.index(%s)" % (self.expr(LIST, d), self.expr(INT, d))),
            (0.5, lambda: "%s.count(%s)" % (self.expr(self.pick([LIST, TUPLE]), d), self.expr(INT, d))),
        ])

    def index(self, d):
        """A subscript: mostly small, sometimes anything (IndexError, TypeError)."""
        return self.pick(["0", "-1", "1"]) if self.chance(0.6) else self.expr(INT, d + 1)

    def str_method_int(self, d):
        self.feat("str methods")
        return self.weighted([
            (1, lambda: "%s.%s(%s)" % (self.expr(STR, d), self.pick(["find", "count", "rfind"]),
                                       self.expr(STR, d))),
            (1, lambda: "len(%s.split())" % self.expr(STR, d)),
            (0.2, lambda: "%s.index(%s)" % (self.expr(STR, d), self.expr(STR, d))),
        ])

    def e_float(self, d):
        return self.weighted([
            (3, lambda: "(%s %s %s)" % (self.expr(self.pick([INT, FLOAT]), d), self.pick(["+", "-", "*"]),
                                        self.expr(self.pick([INT, FLOAT]), d))),
            (2, lambda: "(%s / %s)" % (self.expr(self.pick([INT, FLOAT]), d),
                                       self.expr(self.pick([INT, FLOAT]), d)
                                       if self.chance(0.3) else self.divisor(d))),
            (1, lambda: "(%s %s %s)" % (self.expr(FLOAT, d), self.pick(["//", "%"]),
                                        self.pick(["1.5", "0.0", "-2.0", "3"]))),
            (1, lambda: "(%s ** %s)" % (self.expr(FLOAT, d), self.pick(["2", "0.5", "-1", "3"]))),
            (1, lambda: "float(%s)" % self.expr(self.pick([INT, INT, STR]), d)),
            (1, lambda: "%s(%s, %s)" % (self.pick(["min", "max"]), self.expr(FLOAT, d), self.expr(INT, d))),
            (0.5, lambda: "abs(%s)" % self.expr(FLOAT, d)),
            (0.5, lambda: "round(%s, %s)" % (self.expr(FLOAT, d), self.pick(["0", "1", "2"]))),
            (2, lambda: self.call_returning(FLOAT, d)),
            (1, lambda: self.attr_read(FLOAT, d)),
            (0.5, lambda: "(%s if %s else %s)" % (self.expr(FLOAT, d), self.expr(BOOL, d),
                                                   self.expr(FLOAT, d))),
        ])

    def e_str(self, d):
        return self.weighted([
            (2, lambda: "(%s + %s)" % (self.expr(STR, d), self.expr(STR, d))),
            (1, lambda: "(%s * %s)" % (self.expr(STR, d), self.small(d))),
            (1.5, lambda: "%s(%s)" % (self.pick(["str", "repr"]), self.expr(self.any_plain(), d))),
            (1.5, lambda: "%s.%s()" % (self.expr(STR, d), self.pick(["upper", "lower", "strip", "title",
                                                                     "swapcase"]))),
            (1, lambda: "%s.replace(%s, %s)" % (self.expr(STR, d), self.pick(STR_CONSTS[1:]),
                                                self.pick(STR_CONSTS))),
            (1.5, lambda: "%s[%s:%s]" % (self.expr(STR, d), self.pick(["", "1", "-2", "0"]),
                                         self.pick(["", "2", "-1", "5"]))),
            (0.7, lambda: "%s[%s]" % (self.expr(STR, d), self.index(d))),
            (1, lambda: self.fstring(d)),
            (1, lambda: "'-'.join(map(str, %s))" % self.expr(self.pick([LIST, TUPLE]), d)),
            (0.5, lambda: "''.join(%s)" % self.expr(self.pick([STR, STR, STR, LIST]), d)),
            (0.5, lambda: "'-'.join(sorted(%s))" % self.expr(DICT, d)),
            (0.7, lambda: "('%%s:%%d' %% (%s, %s))" % (self.expr(STR, d), self.expr(INT, d))),
            (0.7, lambda: "type(%s).__name__" % self.expr(self.any_type(), d)),
            (2.5, lambda: self.call_returning(STR, d)),
            (1.5, lambda: self.attr_read(STR, d)),
            (1, lambda: self.special_use(STR, d)),
            (3 if self.sc.callables else 0, lambda: self.closure_call(STR, d)),
            (0.5, lambda: "(%s if %s else %s)" % (self.expr(STR, d), self.expr(BOOL, d),
                                                   self.expr(STR, d))),
            (0.6, lambda: ("(type(%s).__name__ + str(%s))" % (self.sc.handler, self.sc.handler))
             if self.sc.handler else None),
        ])

    def fstring(self, d):
        self.feat("f-strings")
        parts = []
        for _ in range(self.rng.randint(1, 3)):
            t = self.pick([INT, STR, FLOAT, LIST])
            spec = ""
            if t in (INT, STR) and self.chance(0.3):
                spec = ":>4"
            elif t == FLOAT and self.chance(0.4):
                spec = ":.2f"
            elif self.chance(0.2):
                spec = "!r"
            e = self.expr(t, d)
            if "f'" in e:
                e = self.leaf(t)
            parts.append("{(%s)%s}" % (e.replace("'", '"'), spec))
        return "f'%s'" % "|".join(parts)

    def any_plain(self):
        return self.pick(PLAIN_TYPES)

    def e_list(self, d):
        return self.weighted([
            (1.5, lambda: "[%s]" % ", ".join(self.expr(INT, d) for _ in range(self.rng.randint(0, 3)))),
            (1, lambda: "list(range(%s))" % self.small(d, 6)),
            (0.3, lambda: self.wide(d)),
            (1.5, lambda: "(%s + %s)" % (self.expr(LIST, d), self.expr(LIST, d))),
            (0.7, lambda: "(%s * %s)" % (self.expr(LIST, d), self.small(d, 3))),
            (1.5, lambda: self.sorted_list(d)),
            (1.5, lambda: "%s[%s:%s]" % (self.expr(LIST, d), self.pick(["", "1", "-2"]),
                                         self.pick(["", "3", "-1"]))),
            (0.5, lambda: "%s[::-1]" % self.expr(LIST, d)),
            (1, lambda: "[*%s, %s, *%s]" % (self.expr(LIST, d), self.expr(INT, d),
                                             self.expr(self.pick([LIST, TUPLE]), d))),
            (3, lambda: self.list_comp(d)),
            (2, lambda: self.gen_consume_list(d)),
            (0.7, lambda: "list(map(abs, %s))" % self.expr(LIST, d)),
            (0.7, lambda: "list(%s)" % self.expr(self.pick([TUPLE, LIST]), d)),
            (0.5, lambda: "list(%s.values())" % self.expr(DICT, d)),
            (0.5, lambda: "list(divmod(%s, %s))" % (self.expr(INT, d), self.divisor(d))),
            (0.5, lambda: "%s.copy()" % self.expr(LIST, d)),
            (0.5, lambda: "list(map(ord, %s))" % self.expr(STR, d)),
            (2.5, lambda: self.call_returning(LIST, d)),
            (1, lambda: self.attr_read(LIST, d)),
            (1, lambda: self.special_use(LIST, d)),
            (3 if self.sc.callables else 0, lambda: self.closure_call(LIST, d)),
        ])

    def wide(self, d):
        """Many values live on the stack at once (one of them may raise)."""
        self.feat("wide literal")
        return "[%s]" % ", ".join(self.expr(INT, max(d, 2)) for _ in range(self.rng.randint(6, 16)))

    def sorted_list(self, d):
        self.feat("builtins")
        src = self.expr(self.pick([LIST, LIST, TUPLE]), d)
        variant = self.pick(["", ", reverse=True", ", key=abs", ", key=lambda v: (v % 3, -v)"])
        return "sorted(%s%s)" % (src, variant)

    def list_comp(self, d):
        self.feat("comprehensions")
        x = self.fresh("x")
        it_t = self.pick([LIST, LIST, TUPLE, "range"])
        it = "range(%s)" % self.small(d, 6) if it_t == "range" else self.expr(it_t, d + 1)
        with self.binding({x: INT}):
            elem = self.expr(INT, d + 1)
            cond = " if %s" % self.expr(BOOL, d + 1) if self.chance(0.4) else ""
            if self.chance(0.15) and d < 2:
                y = self.fresh("x")
                self.feat("nested comprehension")
                inner = "%s[:4]" % self.expr(LIST, d + 1)
                return "[%s + %s for %s in %s[:4] for %s in %s%s]" % (x, y, x, it, y, inner, cond)
        return "[%s for %s in %s%s]" % (elem, x, it, cond)

    def e_tuple(self, d):
        return self.weighted([
            (2, lambda: "(%s, %s)" % (self.expr(INT, d), self.expr(INT, d))),
            (1, lambda: "tuple(%s)" % self.expr(LIST, d)),
            (1, lambda: "divmod(%s, %s)" % (self.expr(INT, d), self.divisor(d))),
            (1, lambda: "(*%s, %s)" % (self.expr(LIST, d), self.expr(INT, d))),
            (0.7, lambda: "(%s + %s)" % (self.expr(TUPLE, d), self.expr(TUPLE, d))),
            (0.7, lambda: "%s[1:]" % self.expr(TUPLE, d)),
            (1, lambda: "tuple(%s for %s in %s)" % ((lambda x: (self.with_var(x, INT, lambda: self.expr(INT, d)),
                                                                x, self.expr(LIST, d)))(self.fresh("x")))),
            (1.5, lambda: self.call_returning(TUPLE, d)),
        ])

    def e_dict(self, d):
        return self.weighted([
            (2, lambda: "{%s}" % ", ".join("%s: %s" % (k, self.expr(INT, d))
                                           for k in self.rng.sample(DICT_KEYS, self.rng.randint(0, 3)))),
            (1.5, lambda: "{str(%s): %s for %s in %s}" % ((lambda x: (
                x, self.with_var(x, INT, lambda: self.expr(INT, d)), x, self.expr(LIST, d)))(self.fresh("x")))),
            (1, lambda: "{**%s, %s: %s}" % (self.expr(DICT, d), self.pick(DICT_KEYS), self.expr(INT, d))),
            (0.7, lambda: "dict(%s, a=%s)" % (self.expr(DICT, d), self.expr(INT, d))),
            (0.7, lambda: "dict(zip(['a', 'b', 'c'], %s))" % self.expr(LIST, d)),
            (0.5, lambda: "%s.copy()" % self.expr(DICT, d)),
            (0.5, lambda: "{%s: %s for %s, %s in %s.items() if %s %% 2}" % (
                lambda k, v: (k, v, k, v, self.expr(DICT, d), v))(self.fresh("k"), self.fresh("x"))),
            (1.5, lambda: self.call_returning(DICT, d)),
            (0.5, lambda: self.attr_read(DICT, d)),
        ])

    def e_bool(self, d):
        num = lambda: self.pick([INT, INT, FLOAT])  # noqa: E731
        return self.weighted([
            (3, lambda: "(%s %s %s)" % (self.expr(num(), d), self.pick(["<", "<=", "==", "!=", ">", ">="]),
                                        self.expr(num(), d))),
            (1, lambda: "(%s %s %s)" % (self.expr(STR, d), self.pick(["==", "<", "!="]), self.expr(STR, d))),
            (1, lambda: "(%s %s %s)" % (self.expr(INT, d), self.pick(["in", "not in"]),
                                        self.expr(self.pick([LIST, TUPLE]), d))),
            (1, lambda: "(%s in %s)" % (self.expr(STR, d), self.expr(self.pick([DICT, STR]), d))),
            (1, lambda: "(not %s)" % self.expr(self.any_plain(), d)),
            (1, lambda: "(%s %s %s)" % (self.expr(BOOL, d), self.pick(["and", "or"]), self.expr(BOOL, d))),
            (1.5, lambda: self.isinstance_expr(d)),
            (1, lambda: "%s(%s %s 0 for %s in %s)" % ((lambda x: (
                self.pick(["all", "any"]), x, self.pick([">", "==", "<"]), x, self.expr(LIST, d)))(self.fresh("x")))),
            (0.5, lambda: "%s.startswith(%s)" % (self.expr(STR, d), self.expr(STR, d))),
            (0.5, lambda: "bool(%s)" % self.expr(self.any_plain(), d)),
            (0.5, lambda: "(%s == sorted(%s))" % ((lambda e: (e, e))(self.var(LIST) or "[1, 2]"))),
            (1, lambda: self.call_returning(BOOL, d)),
            (0.7, lambda: self.hasattr_expr(d)),
            (0.7, lambda: self.identity_expr(d)),
            (1.5, lambda: self.special_use(BOOL, d)),
        ])

    def identity_expr(self, d):
        """`is` where identity is defined: None, types, the same object."""
        if self.classes and self.chance(0.5):
            c = self.pick(self.classes)
            return "(type(%s) %s %s)" % (self.expr(c.name, d), self.pick(["is", "is not"]),
                                         self.pick(self.classes).name)
        v = self.var(self.any_type())
        if v is not None and self.chance(0.5):
            return "(%s is %s)" % (v, v)
        return "(%s.get(%s) %s None)" % (self.expr(DICT, d), self.pick(DICT_KEYS), self.pick(["is", "is not"]))

    def isinstance_expr(self, d):
        self.feat("builtins")
        t = self.any_type()
        if self.classes and self.chance(0.4):
            cls = self.pick(self.classes).name
            return "isinstance(%s, %s)" % (self.expr(t, d), cls)
        target = self.pick(["int", "str", "(int, float)", "list", "bool", "(tuple, dict)", "E0"])
        return "isinstance(%s, %s)" % (self.expr(t, d), target)

    def hasattr_expr(self, d):
        if not self.classes:
            return None
        c = self.pick(self.classes)
        name = self.pick(sorted(c.lookup("attrs")) + ["zz", "K0"])
        return "hasattr(%s, '%s')" % (self.expr(c.name, d), name)

    # -- objects ------------------------------------------------------------------------
    def class_names(self):
        return {c.name for c in self.classes}

    def cls(self, name):
        for c in self.classes:
            if c.name == name:
                return c
        raise KeyError(name)

    def is_subclass(self, sub, base):
        """sub: a Cls; base: a class name."""
        c = sub
        while c is not None:
            if c.name == base:
                return True
            c = c.base
        return False

    def visible_classes(self):
        """The classes made so far, plus the one whose methods are being made."""
        own = self.sc.self_cls
        return self.classes + ([own] if own is not None and own not in self.classes else [])

    def new_object(self, t, d):
        c = self.cls(t)
        if c.subclasses and self.chance(0.4):
            c = self.pick(c.subclasses)
        if not self.spend(c.init.cost):
            v = self.var(t)
            return v if v is not None else "None"
        self.feat("objects")
        return "%s(%s)" % (c.name, self.call_args(c.init, d))

    def obj_expr(self, t, d):
        v = self.var(t)
        if v is not None and self.chance(0.7):
            return v
        return self.new_object(t, d)

    def objects_with(self, table, t):
        """(class, member name) pairs with a member of type t in table."""
        out = []
        for c in self.visible_classes():
            for name, mt in sorted(c.lookup(table).items()):
                mtype = mt.ret if isinstance(mt, Fn) else mt
                if mtype == t:
                    out.append((c, name))
        return out

    def attr_read(self, t, d):
        if not self.classes:
            return None
        self.feat("attributes")
        return self.weighted([
            (3, lambda: self.instance_attr(t, d)),
            (1.5, lambda: self.class_attr(t, d)),
            (1.5, lambda: self.prop_read(t, d)),
            (3, lambda: self.method_call(t, d)),
        ])

    def obj_of(self, c, d):
        own = self.sc.self_cls
        if own is not None and self.is_subclass(own, c.name) and (self.chance(0.6) or c not in self.classes):
            return "self"
        if c not in self.classes:
            return None
        return self.obj_expr(c.name, d)

    def instance_attr(self, t, d):
        pairs = self.objects_with("attrs", t)
        if not pairs:
            return None
        c, name = self.pick(pairs)
        obj = self.obj_of(c, d)
        if obj is None:
            return None
        if self.chance(0.1):
            self.feat("getattr")
            return "getattr(%s, '%s', %s)" % (obj, name, self.const(t))
        return "%s.%s" % (obj, name)

    def class_attr(self, t, d):
        pairs = self.objects_with("class_attrs", t)
        if not pairs:
            return None
        c, name = self.pick(pairs)
        self.feat("class attributes")
        owner = c.name if self.chance(0.4) else self.obj_of(c, d)
        return None if owner is None else "%s.%s" % (owner, name)

    def prop_read(self, t, d):
        pairs = self.objects_with("props", t)
        if not pairs:
            return None
        c, name = self.pick(pairs)
        obj = self.obj_of(c, d)
        if obj is None or not self.spend(5):
            return None
        self.feat("properties")
        return "%s.%s" % (obj, name)

    def method_call(self, t, d):
        pairs = self.objects_with("methods", t)
        if not pairs:
            return None
        c, name = self.pick(pairs)
        m = c.lookup("methods")[name]
        if self.sc.kind in ("method", "special") and self.sc.self_cls is not None:
            # methods call only methods of classes made before theirs
            if self.is_subclass(self.sc.self_cls, c.name):
                return None
        obj = self.obj_of(c, d)
        if m.kind in ("classmethod", "staticmethod") and (obj is None or self.chance(0.5)):
            obj = c.name
        if obj is None or not self.spend(m.cost + 1):
            return None
        self.feat("method calls")
        return "%s.%s(%s)" % (obj, name, self.call_args(m, d))

    # -- calls ----------------------------------------------------------------------------
    def call_args(self, fn, d):
        """Source of the arguments of a call of fn: mostly right, sometimes passed
        by keyword, by * or ** unpacking, with the optional ones left out, and now
        and then with a wrong count."""
        pos, kws = [], []
        kw_mode = False
        exact = all(p.kind == "pos" for p in fn.params)
        style = self.rng.random()
        if exact and fn.params and style < 0.08:
            self.feat("call f(*seq)")
            values = ", ".join(self.expr(p.type, d) for p in fn.params)
            return "*[%s]" % values if fn.params[0].type == INT and self.chance(0.5) else "*(%s,)" % values
        if exact and fn.params and style < 0.12:
            self.feat("call f(**map)")
            return "**{%s}" % ", ".join("'%s': %s" % (p.name, self.expr(p.type, d)) for p in fn.params)
        for p in fn.params:
            # now and then an argument of another type (TypeError somewhere),
            # never a sequence: an int parameter repeats what it multiplies
            ty = p.type if self.chance(0.97) else self.pick([FLOAT, BOOL, DICT, INT])
            if p.kind == "pos":
                if kw_mode or self.chance(0.1):
                    kw_mode = True
                    self.feat("call keyword args")
                    kws.append("%s=%s" % (p.name, self.expr(ty, d)))
                else:
                    pos.append(self.expr(ty, d))
            elif p.kind == "default":
                r = self.rng.random()
                if r < 0.4:
                    kw_mode = True
                    self.feat("call defaults")
                elif r < 0.6 or kw_mode:
                    kw_mode = True
                    kws.append("%s=%s" % (p.name, self.expr(ty, d)))
                    self.feat("call keyword args")
                else:
                    pos.append(self.expr(ty, d))
            elif p.kind == "star":
                if not kw_mode:
                    self.feat("call *args")
                    if self.chance(0.3):
                        pos.append("*%s" % self.expr(self.pick([LIST, TUPLE]), d))
                    else:
                        pos += [self.expr(INT, d) for _ in range(self.rng.randint(0, 3))]
            elif p.kind == "kwonly":
                if p.default is None or self.chance(0.6):
                    kws.append("%s=%s" % (p.name, self.expr(ty, d)))
                    self.feat("call keyword-only")
            elif p.kind == "starstar":
                self.feat("call **kwargs")
                if self.chance(0.3):
                    kws.append("**%s" % self.expr(DICT, d))
                else:
                    for k in self.rng.sample(["a", "b", "c", "zz"], self.rng.randint(0, 2)):
                        kws.append("%s=%s" % (k, self.expr(INT, d)))
        if exact and not kws:
            self.feat("call exact positional")
        if self.chance(0.02):
            self.feat("call wrong arity")
            if pos and self.chance(0.5):
                pos.pop()
            else:
                pos.append(self.expr(INT, d))
        return ", ".join(pos + kws)

    def callable_fns(self, t):
        fns = [f for f in self.funcs if f.ret == t]
        if self.sc.kind == "rec":
            fns = [f for f in fns if f.kind not in ("rec", "mutual")]
        return fns

    def call_returning(self, t, d):
        fns = self.callable_fns(t)
        if not fns:
            return None
        fn = self.pick(fns)
        if not self.spend(fn.cost + 1):
            return None
        return self.call_fn(fn, d)

    def call_fn(self, fn, d):
        self.feat("calls")
        if fn.kind in ("rec", "mutual"):
            self.feat("recursion")
            args = [self.small(d, self.pick([4, 8, 12]))] + [self.expr(p.type, d) for p in fn.params[1:]]
            if fn.cost > 1000:
                args[0] = self.small(d, self.pick([4, 8]))
            return "%s(%s)" % (fn.name, ", ".join(args))
        if fn.kind == "deep":
            self.feat("runaway recursion")
            return "%s(%s)" % (fn.name, self.expr(INT, d))
        return "%s(%s)" % (fn.name, self.call_args(fn, d))

    def closure_call(self, t, d):
        fns = [f for f in self.sc.callables.values() if f.ret == t]
        if not fns:
            return None
        fn = self.pick(fns)
        if not self.spend(fn.cost + 1):
            return None
        self.feat("closure calls")
        return "%s(%s)" % (fn.name, self.call_args(fn, d))

    # -- generators -------------------------------------------------------------------------
    def gen_call(self, d):
        if not self.gens:
            return None
        g = self.pick(self.gens)
        if not self.spend(g.cost + 2):
            return None
        self.feat("generators")
        return "%s(%s)" % (g.name, self.call_args(g, d))

    def gen_consume_int(self, d):
        call = self.gen_call(d)
        if call is None:
            return None
        self.feat("generator consumed")
        return self.pick(["sum(%s)", "len(list(%s))", "next(%s, -1)", "max(%s, default=-3)",
                          "next(iter(%s))"]) % call

    def gen_consume_list(self, d):
        call = self.gen_call(d)
        if call is None:
            return None
        self.feat("generator consumed")
        x = self.fresh("x")
        return self.pick(["list(%s)" % call, "[*%s]" % call, "sorted(%s)" % call,
                          "[%s * 2 for %s in %s]" % (x, x, call),
                          "list(%s for %s in %s if %s %% 2)" % (x, x, call, x)])

    def genexpr_int(self, d):
        self.feat("generator expressions")
        x = self.fresh("x")
        src = self.expr(self.pick([LIST, TUPLE]), d)
        with self.binding({x: INT}):
            e = self.expr(INT, d + 1)
        return self.pick(["sum(%s for %s in %s)", "max((%s for %s in %s), default=0)",
                          "next((%s for %s in %s), -2)"]) % (e, x, src)

    # -- scopes -----------------------------------------------------------------------------
    class _Binding:
        def __init__(self, gen, names):
            self.gen, self.names = gen, names

        def __enter__(self):
            self.saved = {n: self.gen.sc.vars.get(n) for n in self.names}
            self.gen.sc.vars.update(self.names)
            self.gen.sc.readonly |= set(self.names)

        def __exit__(self, *exc):
            for n, old in self.saved.items():
                if old is None:
                    self.gen.sc.vars.pop(n, None)
                    self.gen.sc.readonly.discard(n)
                else:
                    self.gen.sc.vars[n] = old

    def binding(self, names):
        """Names bound for the duration of a sub-expression (comprehension variables)."""
        return self._Binding(self, names)

    def with_var(self, name, t, make):
        with self.binding({name: t}):
            return make()

    def sub_block(self, indent, n, loop=None, freeze=False, handler=None):
        """Statements of a nested block; variables it introduces die with it."""
        sc = self.sc
        saved = (set(sc.vars), dict(sc.callables), sc.mult, sc.loops, sc.freeze, sc.handler)
        if loop is not None:
            sc.mult *= loop
            sc.loops += 1
        if freeze:
            sc.freeze += 1
        if handler is not None:
            sc.handler = handler
        lines = self.block(indent, n)
        keep, callables, sc.mult, sc.loops, sc.freeze, sc.handler = saved
        for name in list(sc.vars):
            if name not in keep:
                sc.maybe[name] = sc.vars.pop(name)
        sc.callables = callables
        return lines or ["    " * indent + "pass"]

    # -- statements -------------------------------------------------------------------------
    def block(self, indent, n):
        lines = []
        for _ in range(self.rng.randint(1, max(1, n))):
            if self.sc.cost >= self.sc.budget:
                break
            self.spend(1)
            stmt = self.statement(indent, n)
            lines += stmt
            last = stmt[-1] if stmt else ""
            if not last[4 * indent:4 * indent + 1].isspace() and \
                    last.strip().split(" ")[0] in ("return", "break", "continue", "raise"):
                break
        return lines

    def statement(self, indent, n):
        sc = self.sc
        pad = "    " * indent
        nested = indent < 4
        stmt = self.weighted([
            (4, lambda: self.s_assign(pad)),
            (2, lambda: self.s_aug(pad)),
            (1.5, lambda: self.s_mutate(pad)),
            (2.5 if sc.kind == "entry" else 0, lambda: self.s_out(pad)),
            (5 if sc.kind == "entry" else 0, lambda: self.s_probe(pad)),
            ((3 if sc.kind == "entry" else 1.5) if nested else 0, lambda: self.s_guarded(indent, n)),
            (1.5 if nested else 0, lambda: self.s_if(indent, n)),
            (1.5 if nested and sc.mult < 30 else 0, lambda: self.s_for(indent, n)),
            (0.7 if nested and sc.mult < 30 else 0, lambda: self.s_while(indent, n)),
            (1.5 if nested else 0, lambda: self.s_try(indent, n)),
            (0.5, lambda: self.s_raise(pad)),
            (0.8 if sc.kind in ("entry", "helper", "gen") and nested else 0, lambda: self.s_closure(indent)),
            (1, lambda: self.s_unpack(pad)),
            (0.25 if sc.kind in ("entry", "helper") and nested else 0, lambda: self.s_local_class(indent)),
            (0.3 if sc.kind != "closure" else 0, lambda: self.s_del(pad)),
            (1.5 if self.classes else 0, lambda: self.s_attr(pad)),
            (1 if self.gens and sc.kind != "closure" else 0, lambda: self.s_drive(pad)),
            (0.5, lambda: "%sTRACE.append(%s)" % (pad, self.expr(self.any_plain()))),
            (0.5 if sc.kind != "entry" else 0.2, lambda: self.s_introspect(pad)),
            (1 if self.classes else 0, lambda: self.s_shadow(pad)),
            (1 if self.classes and nested else 0, lambda: self.s_with(indent, n)),
            (0.4 if sc.kind == "entry" else 0, lambda: self.s_rebind(pad)),
            (0.3 if sc.kind != "closure" else 0, lambda: self.s_count(pad)),
            (3 if sc.kind == "gen" else 0, lambda: self.s_yield(pad)),
            (0.4 if sc.loops else 0, lambda: pad + self.pick(["break", "continue"])),
            (0.3 if indent > 1 and sc.kind != "gen" else 0,
             lambda: "%sreturn %s" % (pad, self.expr(self.ret_type))),
        ]) or [pad + "pass"]
        return [stmt] if isinstance(stmt, str) else stmt

    def new_name(self):
        return self.fresh("v")

    def clamp(self, t, e, always=False):
        """Inside loops (and recursion), keeps a value from growing without
        bound; always: for attributes, which outlive the call."""
        if self.sc.loops == 0 and self.sc.kind != "rec" and not always:
            return e
        if t == INT:
            return "((%s) %% %s)" % (e, self.pick(["65521", "97", "1000003"]))
        if t in (STR, LIST, TUPLE):
            return "(%s)[:%d]" % (e, self.pick([6, 12]))
        return e

    def bind(self, name, t, e):
        """Records that name now holds e of type t. A list that may be shared
        with another name, an argument or an attribute must not grow in place
        (a loop over the other name could then run forever)."""
        self.sc.vars[name] = t
        if t == LIST and not e.startswith(("[", "list(", "sorted(")):
            self.sc.nogrow.add(name)

    def s_assign(self, pad):
        sc = self.sc
        if self.chance(0.6) or not sc.vars:
            t = self.any_type() if self.chance(0.8) else INT
            name = self.new_name()
            e = self.clamp(t, self.expr(t))
            self.bind(name, t, e)
            return ["%s%s = %s" % (pad, name, e)]
        t = self.pick(sorted(set(sc.vars.values())))
        if t not in PLAIN_TYPES:
            return None
        targets = sc.of_type(t, writable=True)
        if not targets:
            return None
        name, e = self.pick(targets), self.clamp(t, self.expr(t))
        self.bind(name, t, e)
        return ["%s%s = %s" % (pad, name, e)]

    def s_aug(self, pad):
        sc = self.sc
        t = self.pick([INT, INT, INT, FLOAT, STR, STR, LIST, LIST])
        targets = sc.of_type(t, writable=True)
        if not targets:
            return None
        target = self.pick(targets)
        loop = sc.loops > 0 or sc.kind == "rec"
        if t == INT:
            op = self.pick(["+", "-", "^", "|", "&", "*", "//", "%"] + ([] if loop else ["**", "<<"]))
            if op in ("//", "%"):
                value = self.divisor(1)
            elif op == "**":
                value = self.pick(["2", "3", "0"])
            elif op == "<<":
                value = self.pick(["1", "33", "64"])
            else:
                value = self.expr(INT, 1)
            if loop and op not in ("//", "%"):
                value = "(%s) %% 97" % value
            return ["%s%s %s= %s" % (pad, target, op, value)]
        if t == FLOAT:
            op = self.pick(["+", "-", "*", "/"])
            value = self.divisor(1) if op == "/" else self.expr(self.pick([INT, FLOAT]), 1)
            return ["%s%s %s= %s" % (pad, target, op, value)]
        if t == STR:
            self.feat("str +=")
            value = self.expr(STR, 1)
            if loop:
                value = "(%s)[:3]" % value
            if self.chance(0.2) and not loop:
                return ["%s%s *= %s" % (pad, target, self.small(1, 3))]
            if self.chance(0.25):
                # the string has another reference: += must not append in place
                self.feat("str += with an alias")
                alias = self.new_name()
                return ["%s%s = %s" % (pad, alias, target), "%s%s += %s" % (pad, target, value),
                        "%sTRACE.append((%s, %s))" % (pad, alias, target)]
            return ["%s%s += %s" % (pad, target, value)]
        # list: in place, so only lists of this function that nothing iterates
        if target in sc.nogrow or sc.freeze:
            return None
        self.feat("list +=")
        if self.chance(0.2) and not loop:
            return ["%s%s *= %s" % (pad, target, self.small(1, 3))]
        return ["%s%s += %s" % (pad, target, self.pick([
            "[%s]" % self.expr(INT, 1), "(%s)[:3]" % self.expr(LIST, 1), "(%s, )" % self.expr(INT, 1)]))]

    def s_mutate(self, pad):
        sc = self.sc
        if self.chance(0.6):
            lists = sc.of_type(LIST)
            if not lists:
                return None
            name = self.pick(lists)
            grow = not sc.freeze and name not in sc.nogrow and name not in sc.readonly
            self.feat("list methods")
            options = [
                (1, lambda: "%s.sort()" % name),
                (0.5, lambda: "%s.sort(reverse=True)" % name),
                (1, lambda: "%s.reverse()" % name),
                (1, lambda: "%s.pop()" % name),
                (0.5, lambda: "%s.pop(0)" % name),
                (0.5, lambda: "%s.remove(%s)" % (name, self.expr(INT, 1))),
                (1, lambda: "%s[%s] = %s" % (name, self.expr(INT, 2), self.expr(INT, 1))),
                (0.5, lambda: "del %s[%s]" % (name, self.expr(INT, 2))),
                (2 if grow else 0, lambda: "%s.append(%s)" % (name, self.expr(INT, 1))),
                (1 if grow else 0, lambda: "%s.extend(%s[:3])" % (name, self.expr(LIST, 1))),
                (0.5 if grow else 0, lambda: "%s.insert(%s, %s)" % (name, self.expr(INT, 2),
                                                                     self.expr(INT, 1))),
            ]
            return [pad + self.weighted(options)]
        dicts = sc.of_type(DICT)
        if not dicts:
            return None
        name = self.pick(dicts)
        self.feat("dict methods")
        return [pad + self.weighted([
            (2, lambda: "%s[%s] = %s" % (name, self.pick(DICT_KEYS + ["str(%s)" % self.expr(INT, 2)]),
                                         self.clamp(INT, self.expr(INT, 1)))),
            (1, lambda: "%s.pop(%s, None)" % (name, self.pick(DICT_KEYS))),
            (0.5, lambda: "del %s[%s]" % (name, self.pick(DICT_KEYS))),
            (1, lambda: "%s.setdefault(%s, %s)" % (name, self.pick(DICT_KEYS), self.expr(INT, 1))),
            (1, lambda: "%s.update(%s)" % (name, self.expr(DICT, 1))),
            (0.3, lambda: "%s.clear()" % name),
        ])]

    def s_out(self, pad):
        return ["%sout.append(%s)" % (pad, self.expr(self.any_type()))]

    def exc_record(self, e):
        if self.chance(0.3):
            self.feat("traceback frames")
            return ("(type(%s).__name__, str(%s), type(%s.__context__).__name__, "
                    "type(%s.__cause__).__name__, frames_of(%s))" % (e, e, e, e, e))
        return ("(type(%s).__name__, str(%s), type(%s.__context__).__name__, "
                "type(%s.__cause__).__name__)" % (e, e, e, e))

    def s_probe(self, pad):
        """An expression whose exception, if any, f records (type, message,
        and the type names of its context and cause)."""
        e = self.fresh("e")
        self.feat("probe")
        body = self.expr(self.any_type())
        return [pad + "try:",
                pad + "    out.append(%s)" % body,
                pad + "except Exception as %s:" % e,
                pad + "    out.append(%s)" % self.exc_record(e)]

    def s_guarded(self, indent, n):
        """A few statements whose exception is recorded (f: in out, others: in
        TRACE) before going on."""
        pad = "    " * indent
        e = self.fresh("e")
        record = "out.append(%s)" if self.sc.kind == "entry" else "TRACE.append(%s)"
        return ([pad + "try:"] + self.sub_block(indent + 1, max(1, n // 3))
                + [pad + "except Exception as %s:" % e, pad + "    " + record % self.exc_record(e)])

    def s_if(self, indent, n):
        pad = "    " * indent
        lines = [pad + "if %s:" % self.expr(BOOL)]
        lines += self.sub_block(indent + 1, n // 2)
        for _ in range(self.rng.randint(0, 1)):
            lines.append(pad + "elif %s:" % self.expr(BOOL))
            lines += self.sub_block(indent + 1, n // 2)
        if self.chance(0.5):
            lines.append(pad + "else:")
            lines += self.sub_block(indent + 1, n // 2)
        return lines

    def s_for(self, indent, n):
        sc = self.sc
        pad = "    " * indent
        x = self.fresh("i")
        kind = self.pick(["range", "range", "list", "enumerate", "zip", "dict", "str", "gen", "items"])
        targets = {x: INT}
        freeze, bound = True, 6
        if kind == "range":
            r = self.rng.random()
            if r < 0.6:
                head = "for %s in range(%s):" % (x, self.small(1, 6))
            else:
                # big, negative and stepped bounds (range and long range iterators)
                self.feat("range with start and step")
                start = self.pick(BIG_INT_CONSTS + INT_CONSTS) if self.chance(0.5) else self.expr(INT, 2)
                if r < 0.75:
                    head = "for %s in range(%s, %s + %s):" % (x, start, start, self.small(1, 6))
                elif r < 0.9:
                    head = "for %s in range(%s + %s, %s, -%s):" % (x, start, self.small(1, 6), start,
                                                                    self.pick(["1", "2"]))
                else:
                    head = "for %s in reversed(range(%s, %s + %s, %s)):" % (x, start, start, self.small(1, 6),
                                                                             self.pick(["1", "3"]))
            freeze = False
        elif kind == "list":
            head = "for %s in %s:" % (x, self.expr(self.pick([LIST, TUPLE])))
            bound = 8
        elif kind == "enumerate":
            y = self.fresh("i")
            targets[y] = INT
            head = "for %s, %s in enumerate(%s):" % (x, y, self.expr(LIST))
            bound = 8
        elif kind == "zip":
            y = self.fresh("i")
            targets[y] = STR
            head = "for %s, %s in zip(%s, %s):" % (x, y, self.expr(LIST), self.expr(STR))
        elif kind == "dict":
            targets = {x: STR}
            head = "for %s in %s:" % (x, self.expr(DICT))
            self.feat("dict changed during iteration possible")
        elif kind == "items":
            y = self.fresh("i")
            targets = {x: STR, y: INT}
            head = "for %s, %s in %s.items():" % (x, y, self.expr(DICT))
        elif kind == "str":
            targets = {x: STR}
            head = "for %s in %s:" % (x, self.expr(STR))
            bound = 8
        else:
            call = self.gen_call(1)
            if call is None:
                return None
            self.feat("generator for loop")
            head = "for %s in %s:" % (x, call)
        if sc.mult * bound > 40:
            return None
        lines = [pad + head]
        saved = set(sc.vars)
        sc.vars.update(targets)
        self.feat("for loops")
        lines += self.sub_block(indent + 1, n // 2, loop=bound, freeze=freeze)
        for name in targets:
            if name not in saved and name in sc.vars:
                sc.maybe[name] = sc.vars.pop(name)       # no iteration, no binding
        if self.chance(0.2):
            self.feat("for else")
            lines.append(pad + "else:")
            lines += self.sub_block(indent + 1, 2)
        return lines

    def s_while(self, indent, n):
        sc = self.sc
        pad = "    " * indent
        c = self.fresh("c")
        limit = self.rng.randint(0, LOOP_BOUND)
        lines = [pad + "%s = 0" % c]
        if self.chance(0.5):
            lines.append(pad + "while %s < %d:" % (c, limit))
        else:
            lines.append(pad + "while True:")
            lines.append(pad + "    if %s >= %d:" % (c, limit))
            lines.append(pad + "        break")
        lines.append(pad + "    %s += 1" % c)
        sc.vars[c] = INT
        sc.readonly.add(c)        # the counter is only moved by the loop itself
        lines += self.sub_block(indent + 1, n // 2, loop=LOOP_BOUND + 1)
        self.feat("while loops")
        return lines

    def s_try(self, indent, n):
        pad = "    " * indent
        self.feat("try")
        lines = [pad + "try:"]
        lines += self.sub_block(indent + 1, n // 2)
        handlers = self.rng.randint(0, 2)
        has_finally = handlers == 0 or self.chance(0.35)
        for i in range(handlers):
            types = self.rng.sample(HANDLER_TYPES, self.rng.randint(1, 2))
            spec = types[0] if len(types) == 1 else "(%s)" % ", ".join(types)
            e = self.fresh("e")
            lines.append(pad + "except %s as %s:" % (spec, e))
            sc = self.sc
            sc.vars[e] = "exc"
            sc.readonly.add(e)
            lines += self.handler_body(indent + 1, n, e)
            sc.vars.pop(e, None)
            sc.maybe[e] = "exc"          # deleted when the handler ends
        if handlers and self.chance(0.2):
            lines.append(pad + "except:" if self.chance(0.3) else pad + "except BaseException:")
            lines += self.sub_block(indent + 1, 2)
        if handlers and self.chance(0.3):
            self.feat("try else")
            lines.append(pad + "else:")
            lines += self.sub_block(indent + 1, n // 2)
        if has_finally:
            self.feat("try finally")
            lines.append(pad + "finally:")
            lines += self.sub_block(indent + 1, n // 2)
        return lines

    def handler_body(self, indent, n, e):
        pad = "    " * indent
        r = self.rng.random()
        if r < 0.15:
            self.feat("raise from")
            return [pad + "raise %s(%s) from %s" % (self.pick(RAISE_TYPES), self.expr(STR), e)]
        if r < 0.22:
            self.feat("raise in handler (context)")
            return [pad + "raise %s(%s)" % (self.pick(RAISE_TYPES), self.expr(STR))]
        if r < 0.28:
            self.feat("bare raise")
            return [pad + "raise"]
        if r < 0.32:
            self.feat("raise from None")
            return [pad + "raise %s('hidden') from None" % self.pick(RAISE_TYPES)]
        lines = []
        if self.sc.kind == "entry":
            lines.append(pad + "out.append(%s)" % self.exc_record(e))
        elif self.chance(0.4):
            self.feat("traceback frames")
            lines.append(pad + "TRACE.append(frames_of(%s))" % e)
        return lines + self.sub_block(indent, n // 2, handler=e)

    def s_raise(self, pad):
        self.feat("raise")
        if self.sc.handler and self.chance(0.3):
            return [pad + "raise %s(%s) from %s" % (self.pick(RAISE_TYPES), self.expr(STR), self.sc.handler)]
        exc = "%s(%s)" % (self.pick(RAISE_TYPES), self.expr(self.pick([STR, INT])))
        return [pad + "if %s:" % self.expr(BOOL), pad + "    raise " + exc]

    def s_local_class(self, indent):
        """A class made inside the function: its body reads the function's
        locals (LOAD_CLASSDEREF), its method closes over them."""
        ints = self.sc.of_type(INT)
        if not ints:
            return None
        pad = "    " * indent
        name, v = self.fresh("Local"), self.new_name()
        a, b = self.pick(ints), self.pick(ints)
        self.feat("class inside a function")
        lines = [pad + "class %s:" % name,
                 pad + "    kv = %s" % a,
                 pad + "    def get(self, n):",
                 pad + "        return (self.kv + n * %s) %% 1000003" % b,
                 pad + "%s = %s().get(%s)" % (v, name, self.expr(INT, 1))]
        self.sc.vars[v] = INT
        return lines

    def s_del(self, pad):
        """del of a local (then perhaps unbound), or of one perhaps unbound."""
        sc = self.sc
        if sc.loops:
            return None       # earlier statements of the loop body would read it unbound
        names = sorted(n for n in sc.vars if n not in sc.readonly and n not in sc.nogrow
                       and sc.vars[n] in PLAIN_TYPES)
        if sc.maybe and self.chance(0.2):
            self.feat("del of a maybe-unbound local")
            return ["%sdel %s" % (pad, self.pick(sorted(sc.maybe)))]
        if not names:
            return None
        name = self.pick(names)
        self.feat("del of a local")
        sc.maybe[name] = sc.vars.pop(name)
        return ["%sdel %s" % (pad, name)]

    def s_unpack(self, pad):
        sc = self.sc
        self.feat("unpacking")
        a, b = self.new_name(), self.new_name()
        r = self.rng.random()
        if r < 0.25:
            src = self.pick(["(%s, %s)" % (self.expr(INT), self.expr(INT)),
                             "divmod(%s, %s)" % (self.expr(INT), self.divisor(1)),
                             "(%s, %s)" % (self.expr(INT), self.expr(INT)), self.expr(TUPLE)])
            line = "%s, %s = %s" % (a, b, src)
            sc.vars.update({a: INT, b: INT})
        elif r < 0.45:
            self.feat("starred unpacking")
            if self.chance(0.5):
                line = "%s, *%s = %s" % (a, b, self.expr(self.pick([LIST, TUPLE, LIST])))
            else:
                line = "*%s, %s = %s" % (b, a, self.expr(LIST))
            sc.vars.update({a: INT, b: LIST})
        elif r < 0.6:
            ta, tb = self.any_plain(), self.any_plain()
            ea, eb = self.expr(ta), self.expr(tb)
            line = "%s, %s = %s, %s" % (a, b, ea, eb)
            self.bind(a, ta, ea)
            self.bind(b, tb, eb)
        elif r < 0.72:
            c = self.new_name()
            line = "(%s, %s), %s = (%s, %s), %s" % (a, b, c, self.expr(INT), self.expr(INT), self.expr(STR))
            sc.vars.update({a: INT, b: INT, c: STR})
        elif r < 0.85:
            t = self.pick([INT, STR, LIST])
            names = sc.of_type(t, writable=True)
            if len(names) < 2:
                return None
            x, y = self.rng.sample(names, 2)
            if x in sc.nogrow or y in sc.nogrow:
                sc.nogrow |= {x, y}
            self.feat("swap")
            return ["%s%s, %s = %s, %s" % (pad, x, y, y, x)]
        elif r < 0.9:
            c = self.new_name()
            t = self.pick([LIST, STR, TUPLE])
            line = "%s, %s, %s = %s" % (a, b, c, self.expr(t))
            et = STR if t == STR else INT
            sc.vars.update({a: et, b: et, c: et})
        else:
            line = "[%s, %s] = %s" % (a, b, self.pick(["[%s, %s]" % (self.expr(INT), self.expr(INT)),
                                                      "divmod(%s, %s)" % (self.expr(INT), self.divisor(1))]))
            sc.vars.update({a: INT, b: INT})
        return [pad + line]

    def s_attr(self, pad):
        c = self.pick(self.classes)
        r = self.rng.random()
        self.feat("attribute stores")
        if r < 0.35:
            attrs = c.lookup("attrs")
            name = self.pick(sorted(attrs))
            t = attrs[name]
            obj = self.obj_of(c, 1)
            if t == INT and self.chance(0.3):
                return ["%s%s.%s += %s" % (pad, obj, name, self.clamp(INT, self.expr(INT, 1), True))]
            return ["%s%s.%s = %s" % (pad, obj, name, self.clamp(t, self.expr(t, 1), True))]
        if r < 0.55:
            self.feat("class attribute changed")
            attrs = c.lookup("class_attrs")
            name = self.pick(sorted(attrs))
            owner = c.name if not c.subclasses or self.chance(0.7) else self.pick(c.subclasses).name
            return ["%s%s.%s = %s" % (pad, owner, name, self.clamp(attrs[name], self.expr(attrs[name], 1), True))]
        if r < 0.72:
            self.feat("attribute added after creation")
            obj = self.obj_of(c, 1)
            z = self.fresh("z")
            t = self.any_plain()
            if self.sc.kind == "entry":
                lines = ["%s.%s = %s" % (obj, z, self.expr(t, 1)),
                         "out.append(getattr(%s, '%s', 'missing'))" % (obj, z)]
            else:
                lines = ["setattr(%s, '%s', %s)" % (obj, z, self.expr(t, 1))]
            if c.has_dict:
                return [pad + line for line in lines]
            # __slots__ only: AttributeError, which the statement expects
            self.feat("__slots__ refuses a new attribute")
            return ([pad + "try:"] + [pad + "    " + line for line in lines]
                    + [pad + "except AttributeError as %s:" % z, pad + "    TRACE.append(str(%s))" % z])
        if r < 0.8 and c.alts:
            self.feat("method replaced")
            name = self.pick(sorted(c.alts))
            return ["%s%s.%s = %s" % (pad, c.name, name, c.alts[name])]
        if r < 0.85 and self.sc.kind == "entry":
            self.feat("attribute deleted")
            obj = self.obj_of(c, 1)
            name = self.pick(sorted(c.lookup("attrs")))
            return ["%sdel %s.%s" % (pad, obj, name)]
        # an object kept in a variable for later reads
        v = self.new_name()
        e = self.new_object(c.name, 1)
        self.sc.vars[v] = c.name
        return ["%s%s = %s" % (pad, v, e)]

    def s_shadow(self, pad):
        """Attribute stores that change what a cached attribute access finds:
        an instance attribute shadowing a method or a class attribute, a class
        attribute becoming a property, an instance dict entry under a
        property's name, an instance changing class."""
        c = self.pick(self.classes)
        obj = self.var(c.name)
        if obj is None:
            return None
        methods, props = sorted(c.lookup("methods")), sorted(c.lookup("props"))
        r = self.rng.random()
        if r < 0.3 and methods:
            self.feat("instance attribute shadows a method")
            m = self.pick(methods)
            line = "%s.%s = lambda *args, **kwargs: %s" % (obj, m, self.const(c.lookup("methods")[m].ret))
        elif r < 0.4 and methods:
            self.feat("instance attribute shadows a method")
            line = "%s.__dict__.pop('%s', None)" % (obj, self.pick(methods))
        elif r < 0.6:
            self.feat("instance attribute shadows a class attribute")
            line = "%s.K0 = %s" % (obj, self.expr(INT, 2))
        elif r < 0.7:
            self.feat("class attribute becomes a property")
            return ["%s%s.K0 = property(lambda self: %s)" % (pad, c.name, self.pick(INT_CONSTS))]
        elif r < 0.85 and props:
            self.feat("instance dict entry under a property")
            line = "%s.__dict__['%s'] = %s" % (obj, self.pick(props), self.const(INT))
        else:
            family = [k for k in self.classes if k is c or k.base is c or c.base is k]
            self.feat("__class__ assigned")
            line = "%s.__class__ = %s" % (obj, self.pick(family).name)
        e = self.fresh("e")
        return [pad + "try:", pad + "    " + line, pad + "except (AttributeError, TypeError) as %s:" % e,
                pad + "    TRACE.append(str(%s))" % e]

    def reaches(self, name):
        """Names the unit defining `name` uses, directly or through other units."""
        seen, todo = set(), [name]
        while todo:
            n = todo.pop()
            for names, text in self.unit_texts:
                if n in names:
                    for t in set(re.findall(r"\w+", text)) - seen:
                        seen.add(t)
                        todo.append(t)
        return seen

    def s_rebind(self, pad):
        """A module-level name rebound between executions of the same call
        sites: two functions swapped, a function's code object or defaults
        replaced, a builtin shadowed by a global (or no longer)."""
        fns = [g for g in self.funcs if g.kind in ("plain", "defaults")]
        pairs = [(a, b) for a in fns for b in fns
                 if a is not b and a.kind == b.kind and a.ret == b.ret
                 and [(p.type, p.kind) for p in a.params] == [(p.type, p.kind) for p in b.params]
                 and b.name not in self.reaches(a.name) and a.name not in self.reaches(b.name)]
        with_defaults = [g for g in fns if g.kind == "defaults"]
        return self.weighted([
            (2 if pairs else 0, lambda: self.rebind_function(pad, *self.pick(pairs))),
            (1, lambda: self.shadow_builtin(pad)),
            (1 if with_defaults else 0, lambda: self.replace_defaults(pad, self.pick(with_defaults))),
        ])

    def rebind_function(self, pad, a, b):
        # the costs are no longer what the call sites were charged for: take the larger
        a.cost = b.cost = max(a.cost, b.cost)
        if self.chance(0.6):
            self.feat("global function swapped")
            return ["%sglobals()['%s'], globals()['%s'] = %s, %s" % (pad, a.name, b.name, b.name, a.name)]
        self.feat("function code replaced")
        return ["%s%s.__code__ = %s.__code__" % (pad, a.name, b.name)]

    def shadow_builtin(self, pad):
        self.feat("builtin shadowed by a global")
        name, replacement = self.pick([("len", "lambda obj: 7"), ("abs", "lambda x: -x"),
                                       ("min", "max"), ("sorted", "lambda it, **kw: list(it)"),
                                       ("isinstance", "lambda obj, cls: True")])
        if self.chance(0.5):
            return ["%sglobals()['%s'] = %s" % (pad, name, replacement)]
        return ["%sglobals().pop('%s', None)" % (pad, name)]

    def replace_defaults(self, pad, g):
        self.feat("function defaults replaced")
        defaults = [self.const(p.type) for p in g.params if p.kind == "default"]
        return ["%s%s.__defaults__ = (%s,)" % (pad, g.name, ", ".join(defaults))]

    def s_drive(self, pad):
        """A generator driven by hand: next, send, throw, close."""
        call = self.gen_call(1)
        if call is None:
            return None
        it = self.fresh("it")
        self.feat("generator driven")
        lines = ["%s%s = %s" % (pad, it, call)]
        for step in range(self.rng.randint(1, 4)):
            r = self.rng.random() if step else self.rng.random() * 0.5
            v = self.new_name()
            if r < 0.4:
                lines.append("%s%s = next(%s, None)" % (pad, v, it))
            elif r < 0.6:
                self.feat("generator send")
                lines.append("%s%s = %s.send(%s)" % (pad, v, it, self.expr(INT, 1)))
            elif r < 0.75:
                self.feat("generator throw")
                lines.append("%s%s = %s.throw(%s(%s))" % (pad, v, it, self.pick(["E0", "E1", "ValueError",
                                                                                     "KeyError"]),
                                                          self.expr(STR, 2)))
            elif r < 0.87:
                self.feat("generator close")
                lines.append("%s%s.close()" % (pad, it))
                continue
            elif r < 0.93:
                lines.append("%s%s = list(%s)" % (pad, v, it))
                self.sc.vars[v] = LIST
                continue
            else:
                self.feat("generator frame")
                lines.append("%s%s = gen_state(%s)" % (pad, v, it))
            if self.sc.kind == "entry":
                lines.append("%sout.append(%s)" % (pad, v))
        return lines

    def s_introspect(self, pad):
        """What the program's frames look like from inside: the stack's lines,
        this frame's locals (compiled code must keep both up to date)."""
        self.feat("frame introspection")
        r = self.rng.random()
        if r < 0.15 or (self.sc.handler and r < 0.3):
            self.feat("exception being handled")
            return "%sTRACE.append(handled())" % pad
        if r < 0.5:
            return "%sTRACE.append(where())" % pad
        if r < 0.75:
            self.feat("frames kept past their call")
            return "%sKEPT.append(sys._getframe())" % pad
        return "%sTRACE.append(shown_locals(locals()))" % pad

    def s_count(self, pad):
        self.sc.uses_count = True
        self.feat("global")
        return ["%sCOUNT += %s" % (pad, self.pick(["1", "2"]))]

    def s_yield(self, pad):
        lines = self.yield_stmt(pad)
        if lines:
            self.sc.yields += 1
        return lines

    def yield_stmt(self, pad):
        sc = self.sc
        r = self.rng.random()
        if r < 0.35:
            return ["%syield %s" % (pad, self.expr(INT, 1))]
        if r < 0.45:
            self.feat("yield inside an expression")
            v = self.new_name()
            line = "%s%s = %s + ((yield %s) or 0)" % (pad, v, self.expr(INT, 1), self.expr(INT, 2))
            self.sc.vars[v] = INT
            return [line]
        if r < 0.7:
            self.feat("x = yield")
            v = self.new_name()
            targets = sc.of_type(INT, writable=True)
            lines = ["%s%s = yield %s" % (pad, v, self.expr(INT, 1))]
            if targets:
                lines += ["%sif %s is not None:" % (pad, v),
                          "%s    %s = (%s + %s) %% 1009" % (pad, self.pick(targets), self.pick(targets), v)]
            return lines
        if r < 0.9 and self.gens:
            g = self.pick(self.gens)
            if not self.spend(g.cost + 2):
                return None
            self.feat("yield from")
            call = "%s(%s)" % (g.name, self.call_args(g, 1))
            if self.chance(0.5):
                v = self.new_name()
                sc.vars[v] = INT
                return ["%s%s = yield from %s" % (pad, v, call)]
            return ["%syield from %s" % (pad, call)]
        self.feat("yield from")
        return ["%syield from %s" % (pad, self.expr(self.pick([LIST, TUPLE])))]

    def s_closure(self, indent):
        """A nested function (reads the enclosing variables, may rebind one int
        through nonlocal) or a lambda, callable later in this function."""
        outer = self.sc
        pad = "    " * indent
        name = self.fresh("cl")
        ret = self.pick([INT, INT, STR, LIST])
        self.feat("closures")
        if self.chance(0.35):
            a = self.fresh("a")
            body_scope = Scope("closure", 20)
            body_scope.vars = dict(outer.vars)
            body_scope.maybe = dict(outer.maybe)
            body_scope.vars[a] = INT
            body_scope.readonly = set(outer.vars)
            body_scope.nogrow = set(outer.vars)
            body_scope.self_cls = outer.self_cls
            self.sc = body_scope
            e = self.expr(ret)
            self.sc = outer
            fn = Fn(name, [Param(a, INT)], ret, body_scope.cost + 1)
            outer.callables[name] = fn
            self.feat("lambda")
            return ["%s%s = lambda %s: %s" % (pad, name, a, e)] + self.use_closure(fn, pad)
        params = [Param(self.fresh("a"), self.pick([INT, INT, STR])) for _ in range(self.rng.randint(0, 2))]
        body_scope = Scope("closure", 60)
        body_scope.vars = dict(outer.vars)
        body_scope.maybe = dict(outer.maybe)
        body_scope.readonly = set(outer.vars)
        body_scope.nogrow = set(outer.vars)
        body_scope.self_cls = outer.self_cls
        body_scope.callables = dict(outer.callables)
        for p in params:
            body_scope.vars[p.name] = p.type
            body_scope.nogrow.add(p.name)
        header = []
        ints = [v for v in outer.of_type(INT, writable=True)]
        if ints and self.chance(0.6):
            nl = self.pick(ints)
            body_scope.readonly.discard(nl)
            header = [pad + "    nonlocal %s" % nl]
            self.feat("nonlocal")
        self.sc = body_scope
        body_scope.ret_type = ret
        saved_ret = getattr(self, "ret_type", INT)
        self.ret_type = ret
        body = self.block(indent + 1, 3)
        body.append("%s    return %s" % (pad, self.expr(ret)))
        self.ret_type = saved_ret
        self.sc = outer
        if body_scope.uses_count:
            header.insert(0, pad + "    global COUNT")
        fn = Fn(name, params, ret, body_scope.cost + 1)
        outer.callables[name] = fn
        return (["%sdef %s(%s):" % (pad, name, ", ".join(p.name for p in params))] + header + body
                + self.use_closure(fn, pad))

    def use_closure(self, fn, pad):
        """Mostly, a first call right after the definition."""
        if self.chance(0.3) or not self.spend(fn.cost + 1):
            return []
        self.feat("closure calls")
        call = "%s(%s)" % (fn.name, self.call_args(fn, 1))
        if self.sc.kind == "entry":
            return ["%sout.append(%s)" % (pad, call)]
        v = self.new_name()
        self.bind(v, fn.ret, call)
        return ["%s%s = %s" % (pad, v, call)]

    # -- units --------------------------------------------------------------------------------
    def function_body(self, scope, ret, indent=1, n=None):
        """Lines of a function body ending with a return of type ret."""
        outer, saved_ret = self.sc, getattr(self, "ret_type", INT)
        self.sc, self.ret_type = scope, ret
        lines = self.block(indent, n or self.rng.randint(2, 6 * self.scale))
        if scope.kind == "gen":
            if scope.yields == 0:
                lines.append("    " * indent + "yield %s" % self.expr(INT))
            lines.append("    " * indent + "return %s" % self.expr(INT))
        elif not lines or not lines[-1].startswith("    " * indent + "return "):
            lines.append("    " * indent + "return %s" % self.expr(ret))
        if scope.uses_count:
            lines.insert(0, "    " * indent + "global COUNT")
        self.sc, self.ret_type = outer, saved_ret
        return lines

    def make_params(self, style):
        params = []
        npos = self.rng.randint(0 if style != "plain" else 1, 3)
        for _ in range(npos):
            params.append(Param(self.fresh("a"), self.pick([INT, INT, INT, STR, LIST, FLOAT])))
        if style == "defaults":
            for _ in range(self.rng.randint(1, 2)):
                t = self.pick([INT, STR, LIST])
                params.append(Param(self.fresh("d"), t, "default", self.const(t)))
        if style == "star":
            if self.chance(0.7):
                params.append(Param("args", TUPLE, "star"))
            if self.chance(0.5):
                params.append(Param(self.fresh("k"), INT, "kwonly", self.pick([None, "0", "5"])))
            if self.chance(0.6):
                params.append(Param("kwargs", DICT, "starstar"))
        return params

    def signature(self, params):
        out, star_seen = [], False
        for p in params:
            if p.kind == "pos":
                out.append(p.name)
            elif p.kind == "default":
                out.append("%s=%s" % (p.name, p.default))
            elif p.kind == "star":
                out.append("*" + p.name)
                star_seen = True
            elif p.kind == "kwonly":
                if not star_seen:
                    out.append("*")
                    star_seen = True
                out.append(p.name if p.default is None else "%s=%s" % (p.name, p.default))
            else:
                out.append("**" + p.name)
        return ", ".join(out)

    def param_scope(self, kind, budget, params):
        sc = Scope(kind, budget)
        for p in params:
            sc.vars[p.name] = p.type
            sc.nogrow.add(p.name)
        return sc

    def unit_helper(self):
        style = self.pick(["plain", "plain", "plain", "defaults", "star"])
        params = self.make_params(style)
        ret = self.pick(RETURN_TYPES)
        earlier = [g for g in self.funcs if g.kind in ("plain", "defaults")]
        if earlier and self.chance(0.3):
            # a sibling with the same signature: the two may be swapped later
            model = self.pick(earlier)
            style, ret = model.kind, model.ret
            params = [Param(self.fresh(p.name[0]), p.type, p.kind, p.default) for p in model.params]
        name = self.fresh("g")
        sc = self.param_scope("helper", HELPER_BUDGET, params)
        body = self.function_body(sc, ret)
        decorated = self.chance(0.12)
        self.funcs.append(Fn(name, params, ret, sc.cost + 2, kind="decorated" if decorated else style))
        if style == "defaults" and any(p.type == LIST for p in params if p.kind == "default"):
            self.feat("mutable default")
        head = ["def %s(%s):" % (name, self.signature(params))]
        if decorated:
            self.feat("decorator")
            head.insert(0, "@forwarding")
        return head + body

    def unit_generator(self):
        params = self.make_params(self.pick(["plain", "plain", "defaults"]))
        name = self.fresh("gen")
        sc = self.param_scope("gen", HELPER_BUDGET, params)
        self.feat("generator functions")
        loop_var = self.fresh("i")
        r = self.rng.random()
        outer, saved_ret = self.sc, getattr(self, "ret_type", INT)
        if r < 0.5:
            # the common shape: a bounded loop of yields, maybe guarded by try
            self.sc, self.ret_type = sc, INT
            wrap = self.chance(0.5)
            ind = 2 if wrap else 1
            pad = "    " * ind
            body = []
            if wrap:
                body.append("    try:")
            bound = self.small(1, 6)
            keep = set(sc.vars)
            sc.vars[loop_var] = INT
            sc.readonly.add(loop_var)
            body.append("%sfor %s in range(%s):" % (pad, loop_var, bound))
            sc.mult, sc.loops = 6, 1
            body += self.block(ind + 1, 3)
            body += self.s_yield(pad + "    ") or ["%s    yield %s" % (pad, loop_var)]
            if self.chance(0.3):
                body += ["%s    if %s:" % (pad, self.expr(BOOL)),
                         "%s        raise %s('in generator')" % (pad, self.pick(RAISE_TYPES))]
                self.feat("raise in generator")
            sc.mult, sc.loops = 1, 0
            for var in set(sc.vars) - keep:      # the loop may not run
                sc.maybe[var] = sc.vars.pop(var)
            if wrap:
                e = self.fresh("e")
                self.feat("generator try")
                body.append("    except %s as %s:" % (self.pick(["E0", "ValueError", "Exception"]), e))
                body.append("        yield %s" % self.pick(["-1", "len(str(%s))" % e]))
                if self.chance(0.6):
                    body.append("    finally:")
                    body.append("        TRACE.append('%s finally')" % name)
            body.append("    return %s" % self.expr(INT))
            if sc.uses_count:
                body.insert(0, "    global COUNT")
            self.sc, self.ret_type = outer, saved_ret
        else:
            body = self.function_body(sc, INT)
        self.gens.append(Fn(name, params, INT, sc.cost + 6, kind="gen"))
        return ["def %s(%s):" % (name, self.signature(params))] + body

    def unit_recursive(self):
        name = self.fresh("rec")
        acc_t = self.pick([INT, INT, STR, LIST])
        n, acc = self.fresh("n"), self.fresh("acc")
        params = [Param(n, INT), Param(acc, acc_t)]
        sc = self.param_scope("rec", 40, params)
        sc.readonly.add(n)
        outer, saved_ret = self.sc, getattr(self, "ret_type", INT)
        self.sc, self.ret_type = sc, acc_t
        lines = ["def %s(%s, %s):" % (name, n, acc), "    if %s <= 0:" % n]
        if self.chance(0.2):
            self.feat("raise at the bottom of a recursion")
            lines.append("        raise %s(%s)" % (self.pick(RAISE_TYPES), acc))
        else:
            lines.append("        return %s" % acc)
        lines += self.block(1, 2)
        shape = self.rng.random()
        new_acc = self.clamp(acc_t, self.expr(acc_t, 1))
        calls = 12
        if shape < 0.6:
            lines.append("    return %s(%s - 1, %s)" % (name, n, new_acc))
        elif shape < 0.75:
            lines.append("    return %s(%s - 1, %s=%s)" % (name, n, acc, new_acc))
        elif acc_t == INT and shape < 0.9:
            self.feat("non-tail recursion")
            calls = 300
            lines.append("    return (%s(%s - 1, %s) + %s(%s - 2, %s)) %% 1000003" % (
                name, n, new_acc, name, n, acc))
        else:
            self.feat("recursion through an exception handler")
            lines += ["    try:",
                      "        return %s(%s - 1, %s)" % (name, n, new_acc),
                      "    except %s:" % self.pick(["E0", "ValueError", "ZeroDivisionError"]),
                      "        return %s" % acc]
        if sc.uses_count:
            lines.insert(1, "    global COUNT")
        self.sc, self.ret_type = outer, saved_ret
        self.funcs.append(Fn(name, params, acc_t, sc.cost * calls + 20, kind="rec"))
        return lines

    def unit_mutual(self):
        a, b = self.fresh("even"), self.fresh("odd")
        self.feat("mutual recursion")
        lines = ["def %s(n):" % a,
                 "    if n <= 0:",
                 "        return True",
                 "    return %s(n - 1)" % b,
                 "",
                 "",
                 "def %s(n):" % b,
                 "    if n <= 0:",
                 "        return %s" % self.pick(["False", "(n > 0)"]),
                 "    return %s(n - 1)" % a]
        self.funcs.append(Fn(a, [Param("n", INT)], BOOL, 30, kind="mutual"))
        return lines

    def unit_deep(self):
        """Unbounded recursion: RecursionError, at the same depth as on stock."""
        name = self.fresh("deep")
        self.feat("runaway recursion")
        lines = ["def %s(n):" % name,
                 "    TRACE.append(n) if n % 100 == 0 else None",
                 "    return %s(n + 1) + 1" % name]
        self.funcs.append(Fn(name, [Param("n", INT)], INT, 200, kind="deep"))
        return lines

    def unit_class(self):
        base = self.make_class(None)
        lines = base[1]
        if self.chance(0.6):
            sub = self.make_class(base[0])
            lines += ["", ""] + sub[1]
        return lines

    def make_class(self, base):
        name = self.fresh("C")
        slots = self.chance(0.4)
        c = Cls(name, base, slots)
        # instances have a __dict__ unless this class and all its bases have __slots__
        c.has_dict = not slots or (base is not None and base.has_dict)
        self.feat("classes")
        if slots:
            self.feat("__slots__")
        if base is not None:
            self.feat("subclasses")
        lines = ["class %s%s:" % (name, "(%s)" % base.name if base else "")]
        own_attrs = {}
        for _ in range(self.rng.randint(1 if base is None else 0, 3 if base is None else 1)):
            own_attrs[self.fresh("x")] = self.pick([INT, INT, STR, LIST, FLOAT])
        if slots:
            lines.append("    __slots__ = (%s)" % "".join("'%s', " % a for a in own_attrs).rstrip(" "))
        # class attributes (a subclass may shadow its base's)
        inherited_class_attrs = base.lookup("class_attrs") if base else {}
        if base is None or self.chance(0.6):
            for k, t in ([("K0", INT), ("K1", STR)] if base is None else sorted(inherited_class_attrs.items())[:1]):
                c.class_attrs[k] = t
                lines.append("    %s = %s" % (k, self.const(t)))
                if base is not None:
                    self.feat("class attribute shadowed")
        # __init__
        init_params = [Param(a, t) for a, t in own_attrs.items()]
        base_init = base.init.params if base is not None else []
        all_params = [Param(p.name, p.type) for p in base_init] + init_params
        if all_params and self.chance(0.4):
            last = all_params[-1]
            all_params[-1] = Param(last.name, last.type, "default", self.const(last.type))
        c.attrs = own_attrs
        c.init = Fn(name, all_params, name, 3 + (base.init.cost if base else 0))
        lines.append("")
        lines.append("    def __init__(self%s):" % "".join(", " + s for s in
                                                         self.signature(all_params).split(", ") if s))
        if base is not None:
            args = ", ".join(p.name for p in base_init)
            if self.chance(0.7):
                lines.append("        super().__init__(%s)" % args)
                self.feat("super()")
            else:
                lines.append("        %s.__init__(self%s)" % (base.name, "".join(", " + p.name for p in base_init)))
        for a in own_attrs:
            lines.append("        self.%s = %s" % (a, a))
        if not own_attrs and base is None:
            lines.append("        pass")
        if base is not None:
            base.subclasses.append(c)
        # properties (its own methods see the class through self: visible_classes)
        if self.chance(0.6):
            pname = self.fresh("P")
            t = self.pick([INT, STR])
            sc = self.method_scope(c, [])
            sc.budget = 30
            body = self.function_body(sc, t, indent=2, n=1)
            c.props[pname] = t
            lines += ["", "    @property", "    def %s(self):" % pname] + body
        # methods (a subclass overrides one of its base's, or adds its own)
        nmethods = self.rng.randint(1, 2)
        inherited = {k: m for k, m in (base.lookup("methods") if base else {}).items()
                     if m.kind == "plain"}
        for i in range(nmethods):
            if inherited and self.chance(0.6):
                mname = self.pick(sorted(inherited))
                proto = inherited[mname]
                params, ret = proto.params, proto.ret
                self.feat("method override")
            else:
                mname = self.fresh("m")
                params = self.make_params(self.pick(["plain", "plain", "defaults"]))
                ret = self.pick(RETURN_TYPES)
            sc = self.method_scope(c, params)
            body = self.function_body(sc, ret, indent=2)
            if mname in inherited and ret in (INT, STR, LIST) and self.chance(0.6):
                self.feat("super() method call")
                call = "super().%s(%s)" % (mname, ", ".join(p.name for p in params))
                body[-1] = body[-1].rstrip() + " + " + call if ret != LIST else body[-1] + " + " + call
                if ret == INT:
                    body[-1] = "        return (%s) %% 1000003" % body[-1].strip()[len("return "):]
            c.methods[mname] = Fn(mname, params, ret, sc.cost + 2 + (inherited[mname].cost if mname in inherited else 0))
            lines += ["", "    def %s(self%s):" % (mname, "".join(", " + s for s in
                                                                 self.signature(params).split(", ") if s))] + body
        if self.chance(0.3):
            lines += self.class_and_static_methods(c)
        if self.chance(0.5):
            lines += self.special_methods(c)
        self.classes.append(c)
        # a replacement for one method, assigned to the class later (cache invalidation)
        plain = sorted(k for k, m in c.methods.items() if m.kind == "plain")
        if plain and self.chance(0.4):
            mname = self.pick(plain)
            m = c.methods[mname]
            alt = self.fresh("alt_%s_" % mname)
            sc = self.method_scope(c, m.params)
            sc.budget = 30
            body = self.function_body(sc, m.ret, n=1)
            c.alts[mname] = alt
            c.methods[mname] = Fn(mname, m.params, m.ret, max(m.cost, sc.cost + 2))
            lines += ["", "", "def %s(self%s):" % (alt, "".join(", " + s for s in
                                                              self.signature(m.params).split(", ") if s))] + body
        return c, lines

    def class_and_static_methods(self, c):
        lines = []
        name = self.fresh("cm")
        a = self.fresh("a")
        self.feat("classmethod")
        # through cls: a subclass's class attributes, or an instance of the subclass
        body = self.pick(["cls.K0 + %s" % a, "len(cls.__name__) * %s" % a,
                          "cls(%s).%s" % (", ".join(self.const(p.type) for p in c.init.params),
                                          self.pick(sorted(c.lookup("attrs"))))])
        ret = INT if not body.startswith("cls(") else c.lookup("attrs")[body.rsplit(".", 1)[1]]
        lines += ["", "    @classmethod", "    def %s(cls, %s):" % (name, a), "        return %s" % body]
        c.methods[name] = Fn(name, [Param(a, INT)], ret, 5, kind="classmethod")
        name = self.fresh("sm")
        params = self.make_params("plain")
        ret = self.pick(RETURN_TYPES)
        sc = self.param_scope("helper", 60, params)
        self.feat("staticmethod")
        body = self.function_body(sc, ret, indent=2)
        lines += ["", "    @staticmethod", "    def %s(%s):" % (name, self.signature(params))] + body
        c.methods[name] = Fn(name, params, ret, sc.cost + 2, kind="staticmethod")
        return lines

    def special_methods(self, c):
        """Some of __eq__, __lt__, __len__, __getitem__, __add__, __bool__,
        __repr__, __iter__, __call__, __getattr__, __enter__/__exit__ and
        __del__: what the interpreter calls from C (slots) rather than
        through CALL."""
        lines = []
        chosen = self.rng.sample(["__eq__", "__lt__", "__len__", "__getitem__", "__add__", "__bool__",
                                  "__repr__", "__iter__", "__call__", "__getattr__", "__with__", "__del__"],
                                 self.rng.randint(1, 4))
        if not self.finalizers and "__del__" in chosen:
            chosen.remove("__del__")
        # Not __del__ with a Python __getitem__ in one family: once warm, 3.11's
        # BINARY_SUBSCR_GETITEM moves a temporary container into __getitem__'s
        # frame, where it dies before that frame's other locals; cold (and in
        # pyjion) it dies after the call. Stock changes its own order there.
        inherited = self.dunders(c.base) if c.base is not None else set()
        if "__del__" in chosen and ("__getitem__" in chosen or "__getitem__" in inherited):
            chosen.remove("__del__")
        if "__getitem__" in chosen and "__del__" in inherited:
            chosen.remove("__getitem__")
        ints = sorted(k for k, t in c.lookup("attrs").items() if t == INT)
        some_int = ("self.%s" % ints[0]) if ints else "len(type(self).__name__)"

        def body(params, ret, wrap="{}"):
            sc = self.method_scope(c, params)
            sc.kind, sc.budget = "special", 40
            out = self.function_body(sc, ret, indent=2, n=2)
            last = out[-1]
            out[-1] = "        return " + wrap.replace("{}", last.strip()[len("return "):])
            return out

        for name in chosen:
            self.feat("special method %s" % name)
            if name == "__eq__":
                lines += ["", "    def __eq__(self, other):",
                          "        return isinstance(other, %s) and %s == %s" % (
                              c.name, some_int, some_int.replace("self", "other", 1))]
                lines += ["", "    def __hash__(self):", "        return 1"]
            elif name == "__lt__":
                lines += ["", "    def __lt__(self, other):",
                          "        return %s < getattr(other, %r, 0)" % (some_int, some_int[5:] or "x")]
            elif name == "__len__":
                lines += ["", "    def __len__(self):"] + body([], INT, "abs({}) % 5")
            elif name == "__getitem__":
                i = self.fresh("i")
                lines += ["", "    def __getitem__(self, %s):" % i,
                          "        if %s >= 3:" % i, "            raise IndexError(%s)" % i] + body(
                    [Param(i, INT)], INT)
            elif name == "__add__":
                o = self.fresh("o")
                lines += ["", "    def __add__(self, %s):" % o] + body([Param(o, INT)], INT)
            elif name == "__bool__":
                lines += ["", "    def __bool__(self):"] + body([], BOOL, "bool({})")
            elif name == "__repr__":
                lines += ["", "    def __repr__(self):"] + body([], STR, "'%s(' + str({}) + ')'" % c.name)
            elif name == "__iter__":
                lines += ["", "    def __iter__(self):",
                          "        yield %s" % some_int,
                          "        yield from %s" % self.with_self(c, lambda: self.expr(LIST, 1))]
            elif name == "__call__":
                a = self.fresh("a")
                lines += ["", "    def __call__(self, %s):" % a] + body([Param(a, INT)], INT)
            elif name == "__del__":
                # when references are dropped is observable: frames cleared,
                # stacks unwound, generators closed
                lines += ["", "    def __del__(self):",
                          "        TRACE.append(('del', type(self).__name__, shown(getattr(self, %r, None))))" % (
                              some_int[5:] if some_int.startswith("self.") else "K0")]
            elif name == "__getattr__":
                n = self.fresh("name")
                lines += ["", "    def __getattr__(self, %s):" % n,
                          "        if %s.startswith('__'):" % n,
                          "            raise AttributeError(%s)" % n,
                          "        return len(%s)" % n]
            else:
                suppress = self.pick(["False", "True", "t is not None and issubclass(t, E0)",
                                      "t is ZeroDivisionError", "bool(%s)" % some_int])
                lines += ["", "    def __enter__(self):", "        TRACE.append('enter %s')" % c.name,
                          "        return self",
                          "", "    def __exit__(self, t, v, tb):",
                          "        TRACE.append(('exit', None if t is None else t.__name__))",
                          "        return %s" % suppress]
        # only now: the bodies above must not use them (len(self) in __len__...)
        c.dunders |= set(chosen)
        return lines

    def with_self(self, c, make):
        outer = self.sc
        self.sc = self.method_scope(c, [])
        self.sc.kind, self.sc.budget = "special", 30
        try:
            return make()
        finally:
            self.sc = outer

    def family(self, c):
        """c and its subclasses (an instance of any of them may stand for c)."""
        out = [c]
        for sub in c.subclasses:
            out += self.family(sub)
        return out

    def dunders(self, c):
        out = set()
        while c is not None:
            out |= c.dunders
            c = c.base
        return out

    def special_use(self, t, d):
        """An expression of type t that the interpreter evaluates by calling a
        special method of a generated class."""
        if self.sc.kind == "special":
            return None      # a special method using another could loop back to itself
        uses = {
            INT: [("__len__", "len(@)"), ("__getitem__", "@[" + self.pick(["0", "1", "-1", "3"]) + "]"),
                  ("__add__", "(@ + " + self.expr(INT, d + 1) + ")"),
                  ("__call__", "@(" + self.expr(INT, d + 1) + ")"),
                  ("__iter__", "sum(@)"), ("__getattr__", "@." + self.fresh("missing")),
                  ("__iter__", "max(@, default=-5)")],
            BOOL: [("__eq__", "(@ == " + self.leaf(self.any_type()) + ")"), ("__bool__", "bool(@)"),
                   ("__len__", "(not @)"), ("__iter__", "(" + self.expr(INT, d + 1) + " in @)"),
                   ("__getitem__", "(" + self.expr(INT, d + 1) + " in @)")],
            STR: [("__repr__", "repr(@)"), ("__repr__", "str(@)"), ("__repr__", "'<{!r}>'.format(@)")],
            LIST: [("__iter__", "list(@)"), ("__iter__", "sorted(@)"), ("__getitem__", "list(@)"),
                   ("__iter__", "[*@]")],
        }.get(t, [])
        options = [(c, form) for c in self.classes for name, form in uses if name in self.dunders(c)]
        for c in self.classes:
            if "__lt__" in self.dunders(c) and t == BOOL:
                options.append((c, "(@ < " + self.obj_expr(c.name, d + 1) + ")"))
        if not options:
            return None
        c, form = self.pick(options)
        obj = self.obj_of(c, d + 1)
        if obj is None or not self.spend(10):
            return None
        self.feat("special methods used")
        head, tail = form.split("@", 1)      # the object goes where the first @ is
        return head + obj + tail

    def s_with(self, indent, n):
        """with on an instance of a class with __enter__/__exit__ (which may
        swallow the exception)."""
        classes = [c for c in self.classes if "__with__" in self.dunders(c)]
        if not classes:
            return None
        pad = "    " * indent
        c = self.pick(classes)
        obj = self.obj_expr(c.name, 1)
        v = self.new_name()
        self.feat("with")
        self.sc.vars[v] = c.name
        lines = [pad + "with %s as %s:" % (obj, v)] + self.sub_block(indent + 1, max(1, n // 2))
        return lines

    def method_scope(self, c, params):
        sc = self.param_scope("method", HELPER_BUDGET, params)
        sc.self_cls = c
        sc.vars["self"] = c.name
        sc.readonly.add("self")
        return sc

    def entry(self, ptypes):
        params = ["p%d" % i for i in range(len(ptypes))]
        sc = Scope("entry", ENTRY_BUDGET * self.scale)
        for p, t in zip(params, ptypes):
            sc.vars[p] = t
            sc.nogrow.add(p)
        outer, saved_ret = self.sc, getattr(self, "ret_type", INT)
        self.sc, self.ret_type = sc, self.pick(PLAIN_TYPES)
        body = self.block(1, self.rng.randint(6, 14 * self.scale))
        # what the body does not reach is called first (the body may raise early)
        body = ["    TRACE.clear()", "    KEPT.clear()", "    out = []"] + self.cover_unreached(body) + body
        body.append("    return out, TRACE[:], COUNT, kept_frames()")
        if sc.uses_count:
            body.insert(0, "    global COUNT")
        self.sc, self.ret_type = outer, saved_ret
        return ["def f(%s):" % ", ".join(params)] + body

    def cover_unreached(self, body):
        """Probes in f that call each function, generator, class, method and
        property no other code reaches (every name made here is unique)."""
        tokens = set(re.findall(r"\w+", "\n".join(body)))
        for names, text in reversed(self.unit_texts):
            if tokens & names:
                tokens |= set(re.findall(r"\w+", re.sub(r"def \w+", "", text)))
        lines = []           # ("probe", expression) or ("stmt", statement)
        self.sc.budget = 10 ** 9
        for fn in self.funcs:
            if fn.name not in tokens and fn.kind != "deep":
                lines.append(("probe", self.call_fn(fn, 1)))
        for g in self.gens:
            if g.name not in tokens:
                lines.append(("probe", "list(%s(%s))" % (g.name, self.call_args(g, 1))))
        for c in self.classes:
            members = sorted(set(c.methods) | set(c.props))
            alts = sorted(m for m, alt in c.alts.items() if alt not in tokens)
            if c.name in tokens and all(m in tokens for m in members) and not alts:
                continue
            obj = self.new_name()
            lines.append(("stmt", "%s = %s" % (obj, self.new_object(c.name, 1))))
            for m in members:
                if m in c.props:
                    lines.append(("probe", "%s.%s" % (obj, m)))
                else:
                    lines.append(("probe", "%s.%s(%s)" % (obj, m, self.call_args(c.methods[m], 1))))
            for m in alts:
                self.feat("method replaced")
                lines.append(("stmt", "%s.%s = %s" % (c.name, m, c.alts[m])))
                lines.append(("probe", "%s.%s(%s)" % (obj, m, self.call_args(c.methods[m], 1))))
        out, e = [], self.fresh("e")
        for kind, line in lines:
            if kind == "stmt":
                # an object's constructor may raise too
                target = line.split(" = ")[0]
                out += ["    try:", "        %s" % line, "    except Exception as %s:" % e,
                        "        %s = None" % target if target.startswith("v") else "        pass"]
                continue
            self.feat("probe of an unreached unit")
            out += ["    try:", "        out.append(%s)" % line, "    except Exception as %s:" % e,
                    "        out.append(%s)" % self.exc_record(e)]
        return out

    def program(self):
        self.unit_texts = []       # (names a unit defines, its source)
        units = []
        # now and then a large program: more units, longer bodies, more locals
        self.scale = 3 if self.chance(0.15) else 1
        if self.scale > 1:
            self.feat("large program")
        nunits = self.rng.randint(2, 7 * self.scale)
        # a scope for the module level: units are generated in their own scopes
        self.sc = Scope("module", 10 ** 9)
        for _ in range(nunits):
            make = self.weighted([
                (4, lambda: self.unit_helper), (2, lambda: self.unit_class), (2, lambda: self.unit_generator),
                (1.2, lambda: self.unit_recursive), (0.4, lambda: self.unit_mutual),
                (0.1, lambda: self.unit_deep)])
            before = {f.name for f in self.funcs} | {g.name for g in self.gens} | self.class_names()
            units.append(make())
            names = ({f.name for f in self.funcs} | {g.name for g in self.gens} | self.class_names()) - before
            self.unit_texts.append((names, "\n".join(units[-1])))
        ptypes = [self.pick([INT, INT, FLOAT, STR, LIST]) for _ in range(self.rng.randint(1, 3))]
        units.append(self.entry(ptypes))
        src = PRELUDE + "".join("\n\n" + "\n".join(u) + "\n" for u in units)
        return src, ptypes


class Program:
    def __init__(self, source, calls, features):
        self.source, self.calls, self.features = source, calls, features


def generate(seed, index, finalizers=True):
    """Program `index` of run `seed`: its source, the argument tuples of f and the
    features it uses (deterministic). finalizers=False: no __del__ methods
    (when they would only show how CPython's interpreter under a PEP 523 hook
    differs from the plain one: it calls Python functions through
    vectorcall, so arguments live until the call returns)."""
    rng = random.Random("program:%s:%d" % (seed, index))
    gen = ProgramGenerator(rng, finalizers)
    src, ptypes = gen.program()
    arng = random.Random("program-args:%s:%d" % (seed, index))
    calls = [tuple(arng.choice(ARG_VALUES[t]) for t in ptypes) for _ in range(CALLS)]
    return Program(src, calls, sorted(gen.features))
