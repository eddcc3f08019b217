"""A seeded fuzzer of the optimising tier's numeric code (issue 11).

Each generated function runs a hot loop of int or float arithmetic over its
arguments (+ - * // % / & | ^, unary -, comparisons steering ifs, `for i in
range(...)` and bounded `while` loops, accumulators, items of a list argument
read and stored at constant and computed indexes). One copy is warmed up
in the interpreter with one set of argument types (so its sites are
profiled, as in the default mode) and then compiled by the JIT with the
tier wherever it unboxes (config(opt="always")); every other function is
warmed up by calls through the JIT's hook instead, so it is compiled on the
arguments' types the hook saw (checked at entry: exit arg_types). A second
copy, warmed up the same way, runs on stock CPython. Then both are called with values the
warm-up never showed: near 2**62 and 2**63, huge ints, bools, NaN, inf,
-0.0, zero, int and float subclasses with their own operators, None. Every
call's outcome (result, or exception type, message and traceback) must be
equal, call by call.

    python tests/fuzz_numeric.py --n 300 --seed 1 [--show I] [--keep-going]
"""
import argparse
import gc
import os
import random
import sys
import textwrap
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyjion  # noqa: E402
from pyjion import _eval  # noqa: E402
from jitcheck import _compare, jit_off, jit_on, make_function, register_source, run_once  # noqa: E402

INT_OPS = ["+", "-", "*", "//", "%", "&", "|", "^"]
FLOAT_OPS = ["+", "-", "*", "/"]
COMPARISONS = ["<", "<=", ">", ">=", "==", "!="]


class BigMul(int):
    """An int subclass with its own operator: must take the generic path."""

    def __mul__(self, other):
        return 7

    __rmul__ = __mul__


class Half(float):
    def __add__(self, other):
        return -1.5

    __radd__ = __add__


STRANGE = [2 ** 62, 2 ** 62 + 1, 2 ** 63 - 1, -(2 ** 63), 2 ** 63, -(2 ** 63) - 1, 10 ** 30, -(10 ** 30),
           True, False, 0, -1, float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 1e308, 5e-324,
           BigMul(3), Half(0.25), None, 2 ** 31, -(2 ** 31)]


def list_item(rng):
    return "xs[%s]" % rng.choice(["0", "1", "2", "-1", "-3", "i % 3"])


def expression(rng, names, kind, depth):
    if depth <= 0 or rng.random() < 0.3:
        if rng.random() < 0.15:
            return list_item(rng)
        if rng.random() < 0.6:
            return rng.choice(names)
        if kind == "int":
            return str(rng.choice([0, 1, 2, 3, 7, -1, 255, 2 ** 40, 2 ** 61]))
        return repr(rng.choice([0.5, 1.0, 2.5, -3.25, 1e-3, 0.0]))
    if rng.random() < 0.1:
        return "(-%s)" % expression(rng, names, kind, depth - 1)
    op = rng.choice(INT_OPS if kind == "int" else FLOAT_OPS)
    return "(%s %s %s)" % (expression(rng, names, kind, depth - 1), op, expression(rng, names, kind, depth - 1))


def generate(seed, index):
    """(source, kind): a function f(a, b, n, xs) of one hot loop."""
    rng = random.Random("%s-%d" % (seed, index))
    kind = rng.choice(["int", "float", "mixed"])
    ek = "int" if kind == "int" else "float"
    names = ["a", "b", "acc", "i"]
    body = []
    for _ in range(rng.randint(1, 3)):
        target = rng.choice(["acc", "t", "acc"])
        cond = "%s %s %s" % (expression(rng, names, ek, 1), rng.choice(COMPARISONS), expression(rng, names, ek, 1))
        stmt = "%s = %s" % (target, expression(rng, names, ek, 3))
        if target == "t":
            stmt += "\nacc = acc + t" if kind != "int" else "\nacc = acc ^ t"
        if rng.random() < 0.4:
            stmt = "if %s:\n    %s" % (cond, stmt.replace("\n", "\n    "))
        body.append(stmt)
        if rng.random() < 0.3:
            body.append("%s %s= %s" % (list_item(rng), rng.choice(["", "+", "-", "*"]),
                                       expression(rng, names, ek, 2)))
    loop = rng.choice(["for", "while"])
    start = "0" if kind == "int" else "0.0"
    # (a copy: the caller's list is the same object for the JIT and stock runs)
    src = "def f(a, b, n, xs):\n    xs = list(xs) if type(xs) is list else xs\n    acc = %s\n" % start
    if loop == "for":
        src += "    for i in range(n):\n"
        src += textwrap.indent("\n".join(body), "        ") + "\n"
    else:
        src += "    i = 0\n    while i < n:\n"
        src += textwrap.indent("\n".join(body), "        ") + "\n        i += 1\n"
    src += "    return acc, xs\n"
    return src, kind


def arguments(seed, index, kind):
    rng = random.Random("args-%s-%d" % (seed, index))
    if kind == "int":
        warm = (rng.randint(-50, 50), rng.randint(1, 50), 5)
    elif kind == "float":
        warm = (rng.uniform(-5, 5), rng.uniform(0.5, 5), 5)
    else:
        warm = (rng.randint(-50, 50), rng.uniform(0.5, 5), 5)
    items = [warm[0], warm[1], warm[0]]
    warm = warm + (items,)
    calls = [warm]
    for _ in range(6):
        a = rng.choice(STRANGE) if rng.random() < 0.7 else warm[0]
        b = rng.choice(STRANGE) if rng.random() < 0.7 else warm[1]
        xs = rng.choice([items, items, [rng.choice(STRANGE) for _ in range(3)], [items[0]], [],
                         tuple(items), None, [1, 2, 3], items + [0.5]])
        # A few rounds only: a loop that squares an int doubles its digits
        # every round.
        calls.append((a, b, rng.choice([0, 1, 3, 6]), xs))
    return warm, calls


WARM_CALLS = 40


def _warm(fn, warm):
    for _ in range(WARM_CALLS):
        try:
            fn(*warm)
        except Exception:
            pass


def check_one(src, kind, warm, calls, by_calls=False):
    """(tier of the JIT copy's code, None if it behaved as stock on every call,
    else a message). by_calls: warmed up under the hook, which profiles the
    arguments' types, and compiled at the first of `calls`."""
    filename = register_source(src, "numeric")
    fn_jit = make_function(src, filename, "f")
    fn_ref = make_function(src, filename, "f")
    threshold = WARM_CALLS if by_calls else 0
    with jit_off():
        _warm(fn_ref, warm)
        if not by_calls:
            _warm(fn_jit, warm)      # quickened and profiled, as in the default mode
    if by_calls:
        with jit_on(threshold):
            pyjion.config(opt="always")
            _eval._stop_sampler()    # warmed up by calls alone: a tick under load would compile it early
            _warm(fn_jit, warm)
    for args in calls:
        with jit_on(threshold):
            pyjion.config(opt="always")
            _eval._stop_sampler()
            got = run_once(fn_jit, args, filename)
        with jit_off():
            want = run_once(fn_ref, args, filename)
        try:
            _compare(got, want, src, args)
        except AssertionError as exc:
            return pyjion.info(fn_jit).tier, str(exc)
    return pyjion.info(fn_jit).tier, None


def run(n, seed, keep_going=False, out=sys.stdout):
    start = time.time()
    summary = {"n": n, "seed": seed, "tier": 0, "exits": {}, "mismatches": []}
    before = pyjion.stats()["jit"]["exits"]
    digits = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)   # huge ints are compared through their repr
    try:
        _run_functions(n, seed, keep_going, out, summary)
    finally:
        sys.set_int_max_str_digits(digits)
    gc.collect()   # the functions' namespaces are cycles: gone before a caller measures anything
    after = pyjion.stats()["jit"]["exits"]
    summary["exits"] = {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}
    summary["seconds"] = round(time.time() - start, 2)
    return summary


def _run_functions(n, seed, keep_going, out, summary):
    for index in range(n):
        src, kind = generate(seed, index)
        warm, calls = arguments(seed, index, kind)
        tier, message = check_one(src, kind, warm, calls, by_calls=index % 2 == 1)
        summary["tier"] += tier == 2
        if message is not None:
            summary["mismatches"].append({"index": index, "source": src, "message": message})
            print("MISMATCH in function %d of seed %s:\n%s\n%s" % (index, seed, src, message), file=out)
            if not keep_going:
                break


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--seed", default="1")
    parser.add_argument("--keep-going", action="store_true")
    parser.add_argument("--show", type=int, default=None, help="print generated function I and exit")
    args = parser.parse_args()
    if args.show is not None:
        src, kind = generate(args.seed, args.show)
        print("# %s\n%s\n# calls: %r" % (kind, src, arguments(args.seed, args.show, kind)[1]))
        return 0
    summary = run(args.n, args.seed, args.keep_going)
    print("seed %s: %d functions, %d in the optimising tier, exits %s, %d mismatches, %.1f s" % (
        summary["seed"], summary["n"], summary["tier"], summary["exits"], len(summary["mismatches"]),
        summary["seconds"]))
    return 1 if summary["mismatches"] else 0


if __name__ == "__main__":
    sys.exit(main())
