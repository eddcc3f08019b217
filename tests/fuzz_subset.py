"""A seeded, grammar-based generator of Python functions that use only what
pyjion compiles today (locals, constants, BINARY_OP, COMPARE_OP, if/elif/else,
bounded while loops, and/or, `is None`, conditional expressions, augmented
assignment, return), and a differential runner: every function runs under the
JIT and, as a separately compiled copy, on stock CPython; results, exceptions
(type, message, traceback lines and carets) and reference counts must agree.

    python tests/fuzz_subset.py --n 5000 --seed 1

Exit status 1 and the offending source on the first mismatch (or with
--keep-going, on all of them)."""
import argparse
import dis
import json
import os
import random
import sys
import textwrap
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyjion  # noqa: E402
from jitcheck import _compare, jit_off, jit_on, make_function, register_source, run_once, tally_outcomes  # noqa: E402

INT_CONSTS = [0, 1, 2, 3, 5, 7, 10, 100, -1, -3, 255, 1000003]
RARE_INT_CONSTS = [2 ** 31, 2 ** 64 + 1, -(2 ** 63)]
FLOAT_CONSTS = [0.0, 0.5, 1.5, -2.25, 3.0, 1e10, -0.0, 1e300]
STR_CONSTS = ["'a'", "'xy'", "''", "'%s!'"]
POW_EXPONENTS = ["0", "1", "2", "-1", "0.5", "-0.5", "3"]
OPS = ["+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^"]
LOOP_AUG_OPS = ["+", "-", "^", "|", "&", "//", "%"]
CMP = ["<", "<=", "==", "!=", ">", ">="]

INT_POW_EXPONENTS = ["0", "1", "2", "3"]

ARG_POOL = ([0, 1, 2, 3, 5, -1, -4, 7, 12, 100] * 3 + [0.0, 0.5, -1.5, 2.0, 1e6, -0.0]
            + [True, False] + [None, 2 ** 64 + 3, float("nan"), float("inf")])
INT_ARG_POOL = [0, 1, 2, 3, 5, -1, -4, 7, 12, 100, 1000, -77] * 3 + [True, False, 2 ** 64 + 3,
                                                                       -(2 ** 40)]


def number(v):
    # parenthesised when negative: `-3 ** x` would be -(3 ** x), a UNARY_NEGATIVE
    text = repr(v)
    return "(%s)" % text if text.startswith("-") else text


class Generator:
    """Makes one function's source from a random.Random."""

    def __init__(self, rng):
        self.rng = rng

    # -- helpers ------------------------------------------------------------------
    def chance(self, p):
        return self.rng.random() < p

    def pick(self, seq):
        return self.rng.choice(seq)

    def new_var(self):
        name = "v%d" % self.nvars
        self.nvars += 1
        return name

    # -- expressions --------------------------------------------------------------
    def const(self, allow_str=True):
        r = self.rng.random()
        if self.int_mode:
            r = r * 0.6 if r < 0.9 else r * 0.92     # ints and bools only
        if r < 0.55:
            return number(self.pick(INT_CONSTS))
        if r < 0.60:
            return number(self.pick(RARE_INT_CONSTS))
        if r < 0.82:
            return number(self.pick(FLOAT_CONSTS))
        if r < 0.92:
            return self.pick(["True", "False"])
        if r < 0.95:
            return "None"
        return self.pick(STR_CONSTS) if allow_str else "1"

    def var(self):
        if self.maybe and self.chance(0.04):
            return self.pick(sorted(self.maybe))      # may be unbound: UnboundLocalError
        return self.pick(sorted(self.assigned))

    def leaf(self, allow_str=True):
        if self.chance(0.6):
            return self.var()
        return self.const(allow_str)

    def expr(self, depth=0, allow_str=True):
        if depth >= 3 or self.chance(0.3 + 0.2 * depth):
            return self.leaf(allow_str)
        r = self.rng.random()
        if r < 0.6:
            return self.binop(depth)
        if r < 0.72:
            return "(%s %s %s)" % (self.expr(depth + 1), self.pick(CMP), self.expr(depth + 1))
        if r < 0.86:
            return "(%s %s %s)" % (self.expr(depth + 1), self.pick(["and", "or"]),
                                   self.expr(depth + 1))
        return "(%s if %s else %s)" % (self.expr(depth + 1), self.cond(depth + 1),
                                       self.expr(depth + 1))

    def binop(self, depth):
        op = self.pick(OPS)
        if op == "/" and self.int_mode and self.chance(0.8):
            op = "//"
        if op == "**":
            return "(%s ** %s)" % (self.expr(depth + 1, allow_str=False), self.pow_exponent())
        if op == "<<":
            return "(%s << %d)" % (self.expr(depth + 1, allow_str=False), self.rng.randint(0, 6))
        if op == ">>":
            return "(%s >> %d)" % (self.expr(depth + 1), self.rng.randint(0, 70))
        if op == "*":
            # no string operands: 'ab' * 2 ** 31 would allocate gigabytes
            return "(%s * %s)" % (self.expr(depth + 1, allow_str=False),
                                  self.expr(depth + 1, allow_str=False))
        if op in ("/", "//", "%") and self.chance(0.8):
            # guard the divisor: a falsy one becomes a non-zero constant
            return "(%s %s (%s or %s))" % (self.expr(depth + 1), op, self.expr(depth + 1),
                                           self.pick(["3", "7", "1.5", "-2"]))
        return "(%s %s %s)" % (self.expr(depth + 1), op, self.expr(depth + 1))

    def cond(self, depth=0):
        r = self.rng.random()
        if depth >= 2 or r < 0.45:
            return "%s %s %s" % (self.expr(depth + 1), self.pick(CMP), self.expr(depth + 1))
        if r < 0.6:
            return "%s %s None" % (self.var(), self.pick(["is", "is not"]))
        if r < 0.7:
            return self.expr(depth + 1)
        if r < 0.8:
            return "not (%s)" % self.cond(depth + 1)
        return "(%s) %s (%s)" % (self.cond(depth + 1), self.pick(["and", "or"]), self.cond(depth + 1))

    def pow_exponent(self):
        return self.pick(INT_POW_EXPONENTS if self.int_mode else POW_EXPONENTS)

    # -- statements ---------------------------------------------------------------
    def block(self, indent, budget):
        """A list of lines; updates self.assigned / self.maybe."""
        lines = []
        pad = "    " * indent
        n = self.rng.randint(1, max(1, budget))
        for _ in range(n):
            r = self.rng.random()
            if r < 0.40 or self.stmts > 40:
                lines += self.assign(pad)
            elif r < 0.55:
                lines += self.augassign(pad)
            elif r < 0.72 and indent < 4:
                lines += self.if_stmt(indent, budget)
            elif r < 0.86 and indent < 4 and self.loop_depth < 2:
                lines += self.while_stmt(indent, budget)
            elif r < 0.90 and self.loop_depth > 0:
                lines.append(pad + self.pick(["break", "continue"]))
                return lines
            elif r < 0.94 and indent > 1:
                lines.append(pad + "return " + self.expr())
                return lines
            else:
                lines += self.assign(pad)
            self.stmts += 1
        return lines

    def rhs(self):
        e = self.expr()
        if self.loop_depth > 0:
            # keep ints from growing without bound across iterations
            e = "%s %% %s" % (e if e.startswith("(") else "(%s)" % e, self.pick(["65521", "97", "1000.5"]))
        return e

    def assign(self, pad):
        if self.chance(0.5) or self.nvars == 0:
            target = self.new_var()
        else:
            target = self.pick(sorted(v for v in self.assigned | self.maybe if v[0] in "vp"))
        line = "%s%s = %s" % (pad, target, self.rhs())
        self.assigned.add(target)
        self.maybe.discard(target)
        return [line]

    def augassign(self, pad):
        targets = sorted(v for v in self.assigned if v[0] in "vp")
        if not targets:
            return self.assign(pad)
        ops = LOOP_AUG_OPS if self.loop_depth > 0 else OPS
        op = self.pick(ops)
        if op == "**":
            value = self.pow_exponent()
        elif op == "<<":
            value = str(self.rng.randint(0, 6))
        elif op == "*":
            value = self.expr(1, allow_str=False)
        elif op in ("/", "//", "%"):
            value = "(%s or 3)" % self.expr(1)
        else:
            value = self.expr(1)
        return ["%s%s %s= %s" % (pad, self.pick(targets), op, value)]

    def sub_block(self, indent, budget):
        before_assigned, before_maybe = set(self.assigned), set(self.maybe)
        lines = self.block(indent, budget)
        after_assigned = set(self.assigned)
        self.assigned, self.maybe = before_assigned, before_maybe
        return lines, after_assigned

    def if_stmt(self, indent, budget):
        pad = "    " * indent
        lines = [pad + "if %s:" % self.cond()]
        body, a1 = self.sub_block(indent + 1, budget // 2)
        lines += body
        branches = [a1]
        for _ in range(self.rng.randint(0, 2)):
            lines.append(pad + "elif %s:" % self.cond())
            body, a = self.sub_block(indent + 1, budget // 2)
            lines += body
            branches.append(a)
        if self.chance(0.5):
            lines.append(pad + "else:")
            body, a = self.sub_block(indent + 1, budget // 2)
            lines += body
            branches.append(a)
            definite = set.intersection(*branches)
        else:
            definite = set(self.assigned)
        everything = set.union(*branches)
        self.maybe |= everything - definite
        self.assigned |= definite
        self.maybe -= self.assigned
        return lines

    def while_stmt(self, indent, budget):
        pad = "    " * indent
        inner = "    " * (indent + 1)
        c = "c%d" % self.ncounters
        self.ncounters += 1
        limit = self.rng.randint(0, 6)
        lines = [pad + "%s = 0" % c]
        self.assigned.add(c)
        kind = self.rng.random()
        extra = []
        if kind < 0.45:
            lines.append(pad + "while %s < %d:" % (c, limit))
        elif kind < 0.6:
            lines.append(pad + "while not (%s >= %d):" % (c, limit))
        elif kind < 0.75:
            lines.append(pad + "while True:")
            extra = [inner + "if %s > %d:" % (c, limit), inner + "    break"]
        elif kind < 0.88:
            flag = "f%d" % self.ncounters
            self.ncounters += 1
            lines.insert(0, pad + "%s = 0" % flag)
            self.assigned.add(flag)
            lines.append(pad + "while %s is not None:" % flag)
            extra = [inner + "if %s > %d:" % (c, limit), inner + "    %s = None" % flag]
        else:
            flag = "f%d" % self.ncounters
            self.ncounters += 1
            lines.insert(0, pad + "%s = None" % flag)
            self.assigned.add(flag)
            if self.chance(0.5):
                lines.append(pad + "while %s is None:" % flag)
            else:
                lines.append(pad + "while %s is None and %s:" % (flag, self.cond(2)))
            extra = [inner + "if %s > %d:" % (c, limit), inner + "    %s = %s" % (flag, c)]
        # the counter moves first, so `continue` and `break` anywhere are safe
        lines.append(inner + "%s += 1" % c)
        lines += extra
        self.loop_depth += 1
        body, _ = self.sub_block(indent + 1, budget // 2)
        self.loop_depth -= 1
        lines += body
        # the body may not run: what it assigns is only "maybe" afterwards
        self.maybe |= (_ - self.assigned)
        return lines

    def function(self, name="f"):
        # "int mode": int and bool constants and arguments only (fewer TypeErrors)
        self.int_mode = self.chance(0.6)
        nparams = self.rng.randint(1, 4)
        params = ["p%d" % i for i in range(nparams)]
        self.assigned = set(params)
        self.maybe = set()
        self.nvars = 0
        self.ncounters = 0
        self.loop_depth = 0
        self.stmts = 0
        body = self.block(1, self.rng.randint(2, 10))
        body.append("    return %s" % self.expr())
        header = "# int mode\n" if self.int_mode else ""
        return "%sdef %s(%s):\n%s\n" % (header, name, ", ".join(params), "\n".join(body)), nparams


def generate(seed, index):
    """Source and parameter count of function `index` of run `seed` (deterministic)."""
    rng = random.Random("%s:%d" % (seed, index))
    return Generator(rng).function()


def arguments(seed, index, nparams, src, count=3):
    rng = random.Random("args:%s:%d" % (seed, index))
    pool = INT_ARG_POOL if src.startswith("# int mode") else ARG_POOL
    return [tuple(rng.choice(pool) for _ in range(nparams)) for _ in range(count)]


def check_one(src, calls):
    """Runs src's f under the JIT and on stock CPython for each argument tuple.
    Returns (compiled, outcomes, mismatch message or None, opcodes, failure reason)."""
    filename = register_source(src, "fuzz")
    fn_jit = make_function(src, filename, "f")
    fn_ref = make_function(src, filename, "f")
    outcomes = []
    compiled = True
    for args in calls:
        with jit_on():
            got = run_once(fn_jit, args, filename)
            info = pyjion.info(fn_jit)
        with jit_off():
            want = run_once(fn_ref, args, filename)
        compiled = compiled and info.compiled
        try:
            _compare(got, want, src, args)
        except AssertionError as exc:
            return compiled, outcomes, str(exc), set(), info.reason
        outcomes.append(want[0][0] if want[0][0] == "return" else want[0][1]["type"].__name__)
    ops = set()
    for ins in dis.get_instructions(fn_ref):
        ops.add(ins.opname)
        if ins.opname in ("BINARY_OP", "COMPARE_OP"):
            ops.add("%s %s" % (ins.opname, ins.argrepr))
    if not compiled:
        ops = set()
    return compiled, outcomes, None, ops, pyjion.info(fn_jit).reason


def run(n, seed, keep_going=False, out=sys.stdout, quiet=False):
    start = time.time()
    summary = {"n": n, "seed": seed, "compiled": 0, "calls": 0, "returned": 0,
               "exceptions": {}, "mismatches": [], "not_compiled": {}, "opcodes": set()}
    for i in range(n):
        src, nparams = generate(seed, i)
        calls = arguments(seed, i, nparams, src)
        result = check_one(src, calls)
        if result[2] is not None:
            compiled, _, message, _, _ = result
            summary["mismatches"].append({"index": i, "source": src, "message": message})
            if not quiet:
                print("MISMATCH in function %d of seed %s:\n%s\n%s" % (i, seed, src, message),
                      file=out)
            if not keep_going:
                break
            continue
        compiled, outcomes, _, ops, reason = result
        if compiled:
            summary["compiled"] += 1
            summary["opcodes"] |= ops
        else:
            key = (reason or "?").split(" at offset")[0]
            summary["not_compiled"][key] = summary["not_compiled"].get(key, 0) + 1
        tally_outcomes(summary, outcomes)
    summary["opcodes"] = sorted(summary["opcodes"])
    summary["seconds"] = round(time.time() - start, 2)
    return summary


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=int(os.environ.get("PYJION_FUZZ_N", "300")))
    p.add_argument("--seed", default=os.environ.get("PYJION_FUZZ_SEED", "1"))
    p.add_argument("--keep-going", action="store_true", help="report every mismatch")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--show", type=int, metavar="I", help="print generated function I and exit")
    args = p.parse_args(argv)
    if args.show is not None:
        src, nparams = generate(args.seed, args.show)
        print(src)
        print("# arguments:", arguments(args.seed, args.show, nparams, src))
        return 0
    summary = run(args.n, args.seed, keep_going=args.keep_going, quiet=args.json)
    if args.json:
        print(json.dumps(summary))
    else:
        print("seed %s: %d functions, %d compiled, %d calls (%d returned), exceptions %s, "
              "%d mismatches, %.1f s" % (args.seed, args.n, summary["compiled"], summary["calls"],
                                          summary["returned"], summary["exceptions"],
                                          len(summary["mismatches"]), summary["seconds"]))
        if summary["not_compiled"]:
            print("not compiled:", summary["not_compiled"])
    return 1 if summary["mismatches"] else 0


if __name__ == "__main__":
    sys.exit(main())
