"""Helpers of pyjion's core test suite (conftest.py turns some into fixtures).

- `jit_on()` / `jit_off()`: the hook installed (threshold 0) / removed inside a block.
- `assert_compiled(f)`: f has machine code and runs it.
- `max_instructions(n)` / `assert_too_large(f, n)` / `instruction_count(f)`: the
  size limit, the only thing that leaves code to the interpreter now (the
  `size_limit` fixture sets SIZE_LIMIT for one test).
- `differential(src, calls)`: two fresh function objects made from `src` by two
  separate compile() calls; one runs under the JIT, the other on stock CPython
  (hook removed); results, exceptions, tracebacks (line and column of every
  entry, tb_lasti, the formatted text), argument mutations and reference
  counts must be identical, and the JIT copy must have been compiled.
- `fresh_namespace(src)` / `fresh_function(src)` / `fresh_copies(src)`: new
  code objects from a source string, under a file name linecache knows.
- `same_as_stock(src, probe, warm)`: probe(f) gives the same result for a
  compiled copy of `src`'s function as for a stock copy (tracers, profilers,
  debuggers: what `differential` cannot observe).
- `run_python(code)`: runs a snippet in a fresh interpreter (for anything that
  could crash, hang or change process-wide state).
"""
import contextlib
import copy
import dis
import itertools
import linecache
import math
import os
import re
import signal
import subprocess
import sys
import textwrap
import traceback
import types

import pyjion

PYTHON = sys.executable
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---- switching the hook -------------------------------------------------------

def _snapshot():
    cfg = pyjion.config()
    return pyjion.is_enabled(), cfg


def _restore(snapshot):
    was_enabled, cfg = snapshot
    pyjion.disable()
    pyjion.config(threshold=cfg["threshold"], pgc=cfg["pgc"], debug=cfg["debug"],
                  level=cfg["level"], graph=cfg["graph"],
                  max_instructions=cfg["max_instructions"], compact_above=cfg["compact_above"],
                  opt=cfg["opt"], warmup=cfg["warmup"])
    if was_enabled:
        pyjion.enable(profile=cfg["profile"], jit=cfg["jit"])
    else:
        pyjion.config(jit=cfg["jit"])


@contextlib.contextmanager
def jit_on(threshold=0):
    """The hook installed (JIT, threshold 0) inside the block; the previous state after."""
    snap = _snapshot()
    pyjion.enable(threshold=threshold)
    try:
        yield
    finally:
        _restore(snap)


@contextlib.contextmanager
def jit_off():
    """Stock CPython inside the block; the previous state after."""
    snap = _snapshot()
    pyjion.disable()
    try:
        yield
    finally:
        _restore(snap)


@contextlib.contextmanager
def site_form(form):
    """Inside the block, later compiles make inline-cache sites in `form`:
    "inline" (each site its own guards: the default for short functions) or
    "compact" (sites call the shared stubs: config(compact_above=0))."""
    old = pyjion.config()["compact_above"]
    pyjion.config(compact_above=0 if form == "compact" else 1 << 30)
    try:
        yield
    finally:
        pyjion.config(compact_above=old)


SITE_FORMS = ("inline", "compact")


def assert_compiled(f):
    i = pyjion.info(f)
    assert i.compiled, "%s was not compiled: state=%s reason=%s" % (
        getattr(f, "__qualname__", f), i.state, i.reason)
    assert i.state == "compiled"
    assert not i.failed
    assert i.tier in (1, 2)   # baseline, or the optimising tier where it unboxes
    assert i.code_size > 0
    return i


def assert_failed(f, opcode=None):
    i = pyjion.info(f)
    assert i.state == "failed", i
    assert i.failed and not i.compiled
    if opcode is not None:
        assert i.reason is not None and opcode in i.reason, i.reason
    return i


# ---- the size limit: what leaves code to the interpreter ----------------------------
#
# Every CPython 3.11 opcode compiles; code objects with more than
# config()["max_instructions"] instructions (0 = no limit) stay interpreted.

SIZE_LIMIT = 10     # the `size_limit` fixture's limit: small functions fit, loops do not


def instruction_count(f):
    """The instructions pyjion counts against max_instructions: EXTENDED_ARG
    prefixes folded into the instruction they extend, CACHE entries excluded."""
    return sum(1 for ins in dis.get_instructions(f) if ins.opname not in ("CACHE", "EXTENDED_ARG"))


def too_large_reason(f, limit):
    """info(f).reason for a code object refused by the size limit."""
    return "code object too large: %d instructions (limit %d)" % (instruction_count(f), limit)


@contextlib.contextmanager
def max_instructions(limit):
    """config(max_instructions=limit) inside the block; the previous limit after."""
    old = pyjion.config()["max_instructions"]
    pyjion.config(max_instructions=limit)
    try:
        yield limit
    finally:
        pyjion.config(max_instructions=old)


def assert_too_large(f, limit):
    """f was refused by the size limit `limit` (and has no machine code)."""
    i = assert_failed(f)
    assert i.compile_result == pyjion.CompilationResult.IncompatibleSize, i
    assert i.reason == too_large_reason(f, limit), i.reason
    assert i.code_size == 0 and i.tier == 0
    return i


def opnames(f):
    """The opcode names of f's bytecode (EXTENDED_ARG included)."""
    return [ins.opname for ins in dis.get_instructions(f)]


# The version whose bytecode a test runs on, for tests that name opcodes.
PY313 = sys.version_info[:2] == (3, 13)

# What CPython 3.13 compiles where 3.11 emitted each of these opcodes (the
# tests name 3.11's): a test that checks it exercises a 3.11 opcode checks
# for 3.13's counterpart there. Conditional jumps are forward-only on 3.13
# (a loop's condition jumps out, JUMP_BACKWARD closes it); `a and b` is
# COPY, TO_BOOL, POP_JUMP_IF_*; PRINT_EXPR, IMPORT_STAR, LIST_TO_TUPLE and
# friends became intrinsics.
OPCODES_313 = {
    "POP_JUMP_FORWARD_IF_FALSE": "POP_JUMP_IF_FALSE", "POP_JUMP_FORWARD_IF_TRUE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_FORWARD_IF_NONE": "POP_JUMP_IF_NONE", "POP_JUMP_FORWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
    "POP_JUMP_BACKWARD_IF_FALSE": "JUMP_BACKWARD", "POP_JUMP_BACKWARD_IF_TRUE": "JUMP_BACKWARD",
    "POP_JUMP_BACKWARD_IF_NONE": "JUMP_BACKWARD", "POP_JUMP_BACKWARD_IF_NOT_NONE": "JUMP_BACKWARD",
    "JUMP_IF_FALSE_OR_POP": "COPY", "JUMP_IF_TRUE_OR_POP": "COPY",
    "PRECALL": "CALL", "KW_NAMES": "CALL_KW", "LOAD_METHOD": "LOAD_ATTR",
    "PRINT_EXPR": "CALL_INTRINSIC_1", "IMPORT_STAR": "CALL_INTRINSIC_1", "LIST_TO_TUPLE": "CALL_INTRINSIC_1",
    "UNARY_POSITIVE": "CALL_INTRINSIC_1", "PREP_RERAISE_STAR": "CALL_INTRINSIC_2",
    "ASYNC_GEN_WRAP": "CALL_INTRINSIC_1", "FORMAT_VALUE": "FORMAT_SIMPLE",
    "LOAD_CLASSDEREF": "LOAD_FROM_DICT_OR_DEREF", "LOAD_CLOSURE": "LOAD_FAST",
    "JUMP_BACKWARD_NO_INTERRUPT": "JUMP_BACKWARD_NO_INTERRUPT",
}


def version_opcode(name):
    """`name` (a 3.11 opcode name, or a (name, argrepr) pair) as this CPython's
    bytecode has it: COMPARE_OP's argrepr on 3.13 may carry bool(...)."""
    if not PY313:
        return name
    if isinstance(name, tuple):
        return (OPCODES_313.get(name[0], name[0]), name[1])
    return OPCODES_313.get(name, name)


def assert_has_opcodes(f, *names):
    """names: opcode names, or (name, argrepr) pairs such as ("BINARY_OP", "+="),
    as 3.11 spells them (version_opcode() gives this CPython's)."""
    instrs = list(dis.get_instructions(f))
    present = {ins.opname for ins in instrs} | {(ins.opname, ins.argrepr) for ins in instrs}
    present |= {(ins.opname, ins.argrepr[5:-1]) for ins in instrs if ins.argrepr.startswith("bool(")}
    missing = [n for n in map(version_opcode, names) if n not in present]
    assert not missing, "%s lacks %s; it has %s" % (
        f.__name__, missing, sorted({ins.opname for ins in instrs}))


# ---- building functions from source --------------------------------------------

_counter = itertools.count()


def register_source(src, tag="jit"):
    """A fresh file name whose lines linecache knows (so tracebacks show carets)."""
    filename = "<%s-%d>" % (tag, next(_counter))
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    return filename


def make_function(src, filename, name=None, namespace=None):
    """Executes `src` (a module defining functions) and returns function `name`
    (default: the first one defined). Each call gives a new code object."""
    ns = {} if namespace is None else dict(namespace)
    exec(compile(src, filename, "exec"), ns)
    if name is None:
        name = re.search(r"^def\s+(\w+)", src, re.M).group(1)
    return ns[name]


def fresh_namespace(src, tag="jit"):
    """The namespace `src` (dedented) defines, compiled under a fresh file name
    that linecache knows: new code objects on every call."""
    src = textwrap.dedent(src)
    ns = {}
    exec(compile(src, register_source(src, tag), "exec"), ns)
    return ns


def fresh_copies(src, tag="jit", name=None, copies=2):
    """`copies` functions `name` (default: the first one defined) made from
    `src` (dedented) by separate compile() calls under one fresh file name:
    the same source, a code object each."""
    src = textwrap.dedent(src)
    filename = register_source(src, tag)
    return [make_function(src, filename, name) for _ in range(copies)]


def fresh_function(src, tag="jit", name=None):
    """One function made by fresh_copies."""
    return fresh_copies(src, tag, name, copies=1)[0]


def same_as_stock(src, probe, warm, tag="jit", name=None, then=None):
    """probe(f) on two copies of `src`'s function (fresh_copies) must give equal
    results: one under the JIT (threshold 0), after the call f(*warm) compiled
    it (asserted), the other on stock CPython (hook removed, not warmed).

    then(f_jit, warm_result, info), if given, runs under the JIT after the
    probe, with the warm call's result and pyjion.info(f_jit) from before the
    probe. Returns the stock result (equal to the JIT's)."""
    f_jit, f_ref = fresh_copies(src, tag, name)
    with jit_on():
        warm_result = f_jit(*warm)
        info = assert_compiled(f_jit)
        got = probe(f_jit)
        if then is not None:
            then(f_jit, warm_result, info)
    with jit_off():
        want = probe(f_ref)
    assert got == want, "JIT: %r\nstock: %r" % (got, want)
    return want


# ---- outcomes ---------------------------------------------------------------------

_SIMPLE = (int, float, complex, str, bytes, bool, type(None), list, tuple, dict, set, frozenset)
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


def norm(value, _depth=0):
    """A comparable rendering of a value: exact for builtins (repr keeps -0.0,
    nan, the int/bool/float distinction), structural for other objects."""
    if _depth > 20:
        return "..."
    if type(value) in _SIMPLE:
        if isinstance(value, (list, tuple)):
            return (type(value).__name__, [norm(v, _depth + 1) for v in value])
        if isinstance(value, dict):
            return ("dict", [(norm(k, _depth + 1), norm(v, _depth + 1)) for k, v in value.items()])
        try:
            return (type(value).__name__, repr(value))
        except ValueError:   # an int of more digits than sys.get_int_max_str_digits() allows
            return (type(value).__name__, hex(value))
    state = getattr(value, "__dict__", None)
    return (type(value).__qualname__,
            None if state is None else [(k, norm(v, _depth + 1)) for k, v in state.items()])


def _tb_entries(tb):
    out = []
    while tb is not None:
        out.append(tb)
        tb = tb.tb_next
    return out


def _normalize_text(text, filenames):
    for name in filenames:
        text = text.replace(name, "<SRC>")
    return _ADDRESS.sub("0x?", text)


def exception_outcome(exc, code, filename):
    """Everything observable about an exception, as plain data (plus what
    _explain_quickening needs)."""
    entries = _tb_entries(exc.__traceback__)
    own = [(tb.tb_lineno, tb.tb_lasti) for tb in entries if tb.tb_frame.f_code is code]
    frame_summaries = traceback.extract_tb(exc.__traceback__)
    text = _normalize_text("".join(traceback.format_exception(exc)), [filename])
    return {
        "type": type(exc),
        "message": _ADDRESS.sub("0x?", str(exc)),
        "args": _normalize_text(repr(exc.args), [filename]),
        "frames": own,
        "extract_tb": _summary_data(frame_summaries, filename),
        "text": text,
        "context": type(exc.__context__),
        "cause": type(exc.__cause__),
        # for _explain_quickening:
        "_code": code,
        "_filename": filename,
        "_own": [tb.tb_frame.f_code is code for tb in entries],
        "_summaries": frame_summaries,
        "_exc_only": "".join(traceback.format_exception_only(exc)),
        "_chained": exc.__context__ is not None or exc.__cause__ is not None,
    }


def _summary_data(frame_summaries, filename):
    return [(fs.filename.replace(filename, "<SRC>"), fs.name, fs.lineno, fs.end_lineno,
             fs.colno, fs.end_colno, fs.line) for fs in frame_summaries]


# CPython 3.11 fuses instruction pairs into superinstructions once a code object
# is quickened (after 8 calls or loop iterations). When the second half of
# LOAD_FAST__LOAD_FAST, LOAD_CONST__LOAD_FAST or STORE_FAST__LOAD_FAST finds its
# local unbound, the interpreter reports the FIRST half's offset, so stock
# tracebacks point at the previous instruction -- even at the previous line:
#
#     def f(a):
#         if a: y = 1
#         x = 1
#         return y      # f(0) from the 8th call on: "line 4, in f" (x = 1)
#
# pyjion reports the instruction that failed, as CPython does before quickening.
_FUSED_BEFORE_LOAD_FAST = {"LOAD_FAST", "LOAD_CONST", "STORE_FAST"}


def _explain_quickening(jit, ref):
    """If the only differences between the JIT's and the stock exception are
    stock's superinstruction offsets, returns a copy of `ref` with what an
    unquickened interpreter reports (offset, line, columns, text); else None."""
    if jit["type"] is not UnboundLocalError or len(jit["frames"]) != len(ref["frames"]):
        return None
    code = ref["_code"]
    by_offset = {ins.offset: ins for ins in dis.get_instructions(code)}
    positions = list(code.co_positions())
    fixed = []
    for (jline, jlasti), (rline, rlasti) in zip(jit["frames"], ref["frames"]):
        if (jline, jlasti) == (rline, rlasti):
            fixed.append((rline, rlasti))
            continue
        first, second = by_offset.get(rlasti), by_offset.get(jlasti)
        if (first is None or second is None or second.opname != "LOAD_FAST"
                or first.opname not in _FUSED_BEFORE_LOAD_FAST
                or not any(o > rlasti for o in by_offset) or min(o for o in by_offset if o > rlasti) != jlasti):
            return None
        fixed.append((positions[jlasti // 2][0], jlasti))
    if ref["_chained"]:
        return None
    out = dict(ref)
    out["frames"] = fixed
    summaries = []
    own = iter(fixed)
    for fs, is_own in zip(ref["_summaries"], ref["_own"]):
        if is_own:
            line, lasti = next(own)
            _, end_line, col, end_col = positions[lasti // 2]
            fs = traceback.FrameSummary(fs.filename, line, fs.name, lookup_line=False,
                                        end_lineno=end_line, colno=col, end_colno=end_col)
        summaries.append(fs)
    out["extract_tb"] = _summary_data(summaries, ref["_filename"])
    out["text"] = _normalize_text(
        "Traceback (most recent call last):\n"
        + "".join(traceback.StackSummary.from_list(summaries).format()) + ref["_exc_only"],
        [ref["_filename"]])
    return out


def _invoke(fn, args):
    try:
        return "return", fn(*args)
    except Exception as exc:    # (KeyboardInterrupt and friends are not expected here)
        return "raise", exc


def _refcounts(objs):
    return [sys.getrefcount(o) for o in objs]


def _tracked(args):
    # Objects whose reference counts belong to this call alone (fresh copies);
    # small ints, interned strings and shared singletons are left out.
    return [a for a in args if not isinstance(a, (int, float, str, bytes, type(None), type))]


def run_once(fn, args, filename):
    """Calls fn(*args); returns (outcome data, refcount deltas of the arguments)."""
    tracked = _tracked(args)
    before = _refcounts(tracked)
    kind, value = _invoke(fn, args)
    if kind == "return":
        data = ("return", norm(value))
    else:
        data = ("raise", exception_outcome(value, fn.__code__, filename))
    del value
    after = _refcounts(tracked)
    return data, [b - a for a, b in zip(before, after)], norm(list(args))


def differential(src, calls, name=None, opcodes=(), namespace=None, expect=None):
    """Runs `src`'s function under the JIT and on stock CPython and asserts they
    behave identically for each argument tuple in `calls` (deep-copied per run).

    opcodes: names that must appear in the function's bytecode.
    expect: optionally "return" or "raise" for every call (guards a test
    against silently testing only one of the two paths).
    Returns the list of outcomes (from the stock run)."""
    src = textwrap.dedent(src)
    filename = register_source(src)
    fn_jit = make_function(src, filename, name, namespace)
    fn_ref = make_function(src, filename, name, namespace)
    assert fn_jit.__code__ is not fn_ref.__code__
    if opcodes:
        assert_has_opcodes(fn_ref, *opcodes)
        assert opnames(fn_ref) == opnames(fn_jit)
    outcomes = []
    for n, args in enumerate(calls):
        if callable(args):
            args_jit, args_ref = tuple(args()), tuple(args())
        else:
            args_jit, args_ref = tuple(copy.deepcopy(args)), tuple(copy.deepcopy(args))
        with jit_on():
            got = run_once(fn_jit, args_jit, filename)
            info = pyjion.info(fn_jit)
        with jit_off():
            want = run_once(fn_ref, args_ref, filename)
        assert info.compiled and info.state == "compiled", (
            "JIT copy not compiled: %s (%s)" % (info.state, info.reason))
        assert info.run_count == n + 1
        _compare(got, want, src, args)
        outcomes.append(want[0])
    assert pyjion.info(fn_ref).state != "compiled"
    if expect is not None:
        kinds = {o[0] for o in outcomes}
        assert kinds == {expect}, "expected only %r outcomes, got %s" % (expect, outcomes)
    return outcomes


def _compare(got, want, src, args):
    (g_out, g_refs, g_args), (w_out, w_refs, w_args) = got, want
    where = "for args %r in\n%s" % (args, src)
    assert g_out[0] == w_out[0], "JIT %s, stock %s %s\nJIT: %r\nstock: %r" % (
        g_out[0], w_out[0], where, g_out[1], w_out[1])
    if g_out[0] == "return":
        assert g_out[1] == w_out[1], "different results %s" % where
    else:
        g, w = g_out[1], w_out[1]
        if g["frames"] != w["frames"]:
            w = _explain_quickening(g, w) or w
        for key in ("type", "message", "args", "frames", "extract_tb", "context", "cause"):
            assert g[key] == w[key], "exception %s differs %s\nJIT:   %r\nstock: %r" % (
                key, where, g[key], w[key])
        assert g["text"] == w["text"], "formatted traceback differs %s\nJIT:\n%s\nstock:\n%s" % (
            where, g["text"], w["text"])
    assert g_args == w_args, "arguments mutated differently %s" % where
    assert g_refs == w_refs, "argument reference counts differ (JIT %s, stock %s) %s" % (
        g_refs, w_refs, where)


# ---- subprocesses -------------------------------------------------------------------

def default_sigint():
    """preexec_fn for children that test Ctrl-C: a shell starts background jobs
    with SIGINT ignored, and Python then never installs its KeyboardInterrupt
    handler; restore the default so the child behaves as in a terminal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


# The start of a program that runs on stock CPython and with PYJION=1 alike:
# `_sample_now()` inside a function is one hot sample of its frame (pyjion's
# warm-up by samples compiles it there and then, deterministically), a no-op
# on stock; SAMPLE says when a function should take it.
SAMPLING_PRELUDE = r'''
import dis, json, os, sys
JIT = bool(os.environ.get("PYJION"))
if JIT:
    import pyjion
    from pyjion._eval import _sample_now
else:
    def _sample_now():
        return 0
SAMPLE = False
'''


def run_python(code, env=None, timeout=120, args=(), cwd=None):
    """Runs a snippet in a fresh interpreter; returns the CompletedProcess."""
    full_env = dict(os.environ)
    for key in ("PYJION", "PYJION_THRESHOLD", "PYJION_PROFILE"):
        full_env.pop(key, None)
    full_env["PYTHONFAULTHANDLER"] = "1"
    if env:
        full_env.update(env)
    return subprocess.run([PYTHON, "-c", textwrap.dedent(code), *args], env=full_env,
                          capture_output=True, text=True, timeout=timeout, cwd=cwd or REPO,
                          preexec_fn=default_sigint)


def check_python(code, **kw):
    """run_python and require a clean exit; returns stdout."""
    proc = run_python(code, **kw)
    assert proc.returncode == 0, "exit code %s\nstdout:\n%s\nstderr:\n%s" % (
        proc.returncode, proc.stdout, proc.stderr)
    return proc.stdout


def isnan(x):
    return isinstance(x, float) and math.isnan(x)


def tally_outcomes(summary, outcomes):
    """Adds a fuzzed program's call outcomes ("return" or an exception type
    name) to a fuzzer summary's "calls", "returned" and "exceptions" counts."""
    for o in outcomes:
        summary["calls"] += 1
        if o == "return":
            summary["returned"] += 1
        else:
            summary["exceptions"][o] = summary["exceptions"].get(o, 0) + 1
