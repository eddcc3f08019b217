"""Differential runner for the programs of fuzz_programs.py: each program is
executed from its source twice, once with the JIT on (threshold 0, so the
module body, class bodies and every function, method, generator, closure and
comprehension it runs are compiled) and once on stock CPython; then f is
called with each argument tuple on both copies, alternately. For every call
must agree: the return value (rendered by jitcheck.norm, addresses masked) or
the exception (type, message, args, traceback entries with lines and columns,
the formatted traceback, types of __context__ and __cause__), argument
mutations and reference counts, the module's TRACE and COUNT afterwards, how
the reference counts of the program's functions, classes and lists changed,
and what reached sys.unraisablehook (e.g. a generator ignoring GeneratorExit
when collected). Each program's f must have been compiled, and no code object of
it may have failed to compile. The tb_lasti of f's traceback entries is
compared as an unquickened interpreter reports it (_unspecialized_offsets):
3.11's specialised PRECALL and BINARY_SUBSCR_GETITEM report other offsets of
the same source position once the code is warm.

    python tests/fuzz_programs_run.py --n 2000 --seed 1
    python tests/fuzz_programs_run.py --n 500 --seed 2 --debug        # value-stack checks
    python tests/fuzz_programs_run.py --n 500 --seed 3 --threshold 2  # interpreter first

Exit status 1 and the offending program on the first mismatch (or, with
--keep-going, on all of them)."""
import argparse
import copy
import dis
import gc
import json
import os
import resource
import signal
import sys
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyjion  # noqa: E402
import fuzz_programs  # noqa: E402
from jitcheck import _ADDRESS, _compare, jit_off, jit_on, norm, register_source, run_once, tally_outcomes  # noqa: E402


class Timeout(BaseException):
    """Raised by the alarm when a program runs too long (not an Exception, so
    the program's own `except Exception` does not swallow it)."""


def _alarm(signum, frame):
    signal.alarm(1)           # again, should a bare except swallow this one
    raise Timeout()


def load_module(src, filename):
    """Executes src as a module; returns (namespace, module code object, error)."""
    code = compile(src, filename, "exec")
    ns = {"__name__": "fuzzprog"}
    try:
        exec(code, ns)
    except Exception as exc:      # compared between the two copies
        return ns, code, (type(exc).__name__, _ADDRESS.sub("0x?", str(exc)))
    return ns, code, None


def code_objects(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from code_objects(const)


def _unraisable_record(u, filename):
    return (getattr(u.exc_type, "__name__", repr(u.exc_type)),
            _ADDRESS.sub("0x?", str(u.exc_value)).replace(filename, "<SRC>"),
            u.err_msg, _ADDRESS.sub("0x?", repr(u.object)).replace(filename, "<SRC>"))


def _unspecialized_offsets(code, frames, calls_inlined):
    """f's traceback entries (line, tb_lasti) as an unquickened interpreter
    reports them. Once 3.11 has specialised a call of a C function (a builtin,
    a method descriptor, len, isinstance, list.append, a type), the PRECALL_*
    instruction makes the call and skips the CALL after it, so an exception
    raised there is reported at the PRECALL; pyjion, like CPython before
    quickening, reports the CALL. Both instructions have the same position,
    so lines, columns and the formatted traceback are the same either way.
    Likewise BINARY_SUBSCR_GETITEM pushes a Python __getitem__'s frame inline
    and reports the BINARY_SUBSCR's last cache entry; unspecialised (and in
    pyjion) the call goes through PyObject_GetItem and reports the
    BINARY_SUBSCR.

    calls_inlined=False: the run may have had frames interpreted under the
    hook, where 3.11 calls Python functions through vectorcall instead of
    pushing their frame inline; then tb_lasti is the CALL, not (as without a
    hook, and in pyjion's machine code) the CALL's last cache entry."""
    if sys.version_info >= (3, 12):
        # 3.13 records each instruction's own offset before running it
        # (frame->instr_ptr): a specialised call or subscript, or a frame
        # pushed inline, reports the CALL / BINARY_SUBSCR as pyjion does.
        return list(frames)
    instrs = list(dis.get_instructions(code))
    mapped = {a.offset: b.offset for a, b in zip(instrs, instrs[1:])
              if a.opname == "PRECALL" and b.opname == "CALL"}
    subscr_caches = dis._inline_cache_entries[dis.opmap["BINARY_SUBSCR"]]
    mapped.update({ins.offset + 2 * subscr_caches: ins.offset for ins in instrs if ins.opname == "BINARY_SUBSCR"})
    if not calls_inlined:
        caches = dis._inline_cache_entries[dis.opmap["CALL"]]
        mapped.update({ins.offset + 2 * caches: ins.offset for ins in instrs if ins.opname == "CALL"})
    return [(line, mapped.get(lasti, lasti)) for line, lasti in frames]


def run_call(ns, args, filename, calls_inlined=True):
    """f(*args) in ns: (outcome, argument refcount deltas, arguments after),
    the unraisable exceptions it caused, and the module state after it. Runs
    the garbage collector inside, so that what a collected generator does
    happens under the same JIT setting as the call."""
    unraisable = []
    old_hook = sys.unraisablehook
    sys.unraisablehook = lambda u: unraisable.append(_unraisable_record(u, filename))
    # the program's functions, classes and lists: a reference the call leaks
    # or drops shows in their counts
    tracked = [(k, v) for k, v in sorted(ns.items())
               if isinstance(v, (types.FunctionType, type, list)) and not k.startswith("__")]
    counts = [sys.getrefcount(v) for _, v in tracked]
    try:
        outcome, deltas, after = run_once(ns["f"], args, filename)
        state = _ADDRESS.sub("0x?", repr((norm(ns.get("TRACE")), ns.get("COUNT"), len(ns.get("KEPT", ())))))
        ns.get("KEPT", []).clear()     # what the kept frames hold goes now, not later
        gc.collect()
        leaks = [(k, sys.getrefcount(v) - n) for (k, v), n in zip(tracked, counts)]
        state += " refcount changes %s" % [kd for kd in leaks if kd[1]]
    finally:
        sys.unraisablehook = old_hook
    if outcome[0] == "return":
        outcome = ("return", _ADDRESS.sub("0x?", repr(outcome[1])))
    else:
        # the two copies define their own exception classes: compare their names
        data = dict(outcome[1])
        for key in ("type", "context", "cause"):
            if data[key].__module__ == "fuzzprog":
                data[key] = data[key].__qualname__
        data["frames"] = _unspecialized_offsets(data["_code"], data["frames"], calls_inlined)
        outcome = ("raise", data)
    return (outcome, deltas, after), unraisable, state


def compile_report(code):
    """(states of the program's code objects: name -> count, failure reasons,
    opcodes of the compiled ones, whether f was compiled)."""
    states, reasons, ops = {}, [], set()
    f_compiled = False
    for co in code_objects(code):
        info = pyjion.info(co)
        states[info.state] = states.get(info.state, 0) + 1
        if info.state == "failed":
            reasons.append("%s: %s" % (co.co_qualname, info.reason))
        if info.compiled:
            for ins in dis.get_instructions(co):
                ops.add(ins.opname)
        if co.co_name == "f" and co.co_qualname == "f":
            f_compiled = info.compiled
    return states, reasons, ops, f_compiled


class Result:
    def __init__(self):
        self.mismatch = None
        self.outcomes = []
        self.states = {}
        self.reasons = []
        self.ops = set()
        self.f_compiled = False


def check_program(program, timeout=30, threshold=0):
    """Runs one program both ways; a Result (mismatch is None when they agree).
    threshold: the JIT's (0: everything compiled from its first call; 1 or 2:
    frames start in the interpreter and continue as machine code, and f is
    compiled by its last call)."""
    res = Result()
    src = program.source
    filename = register_source(src, "fuzzprog")
    gc_was_enabled = gc.isenabled()
    gc.disable()
    old_handler = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    phase = "the module body under the JIT"        # for a timeout's report
    try:
        with jit_on(threshold):
            ns_jit, code_jit, err_jit = load_module(src, filename)
        phase = "the module body on stock"
        with jit_off():
            ns_ref, code_ref, err_ref = load_module(src, filename)
        if err_jit != err_ref:
            res.mismatch = "module body: JIT %r, stock %r" % (err_jit, err_ref)
            return res
        if err_ref is not None:
            res.mismatch = "module body raised %r (a generator bug)" % (err_ref,)
            return res
        for n, args in enumerate(program.calls):
            args_jit, args_ref = copy.deepcopy(args), copy.deepcopy(args)
            phase = "call %d of f under the JIT" % (n + 1)
            with jit_on(threshold):
                got, unr_jit, state_jit = run_call(ns_jit, args_jit, filename, threshold == 0)
                info = pyjion.info(ns_jit["f"])
            if n >= threshold and not info.compiled:
                # comparing the interpreter with itself would prove nothing
                res.mismatch = "f was not compiled: %s" % info.reason
                return res
            phase = "call %d of f on stock" % (n + 1)
            with jit_off():
                want, unr_ref, state_ref = run_call(ns_ref, args_ref, filename, threshold == 0)
            try:
                _compare(got, want, src, args)
                assert unr_jit == unr_ref, "unraisable exceptions differ for args %r\nJIT:   %r\nstock: %r" % (
                    args, unr_jit, unr_ref)
                assert state_jit == state_ref, "module state differs after args %r\nJIT:   %s\nstock: %s" % (
                    args, state_jit, state_ref)
            except AssertionError as exc:
                res.mismatch = str(exc)
                return res
            kind = "return" if want[0][0] == "return" else want[0][1]["type"]
            res.outcomes.append(kind if isinstance(kind, str) else kind.__name__)
    except Timeout:
        res.mismatch = "timeout after %d s, in %s" % (timeout, phase)
        return res
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old_handler)
        gc.collect()
        if gc_was_enabled:
            gc.enable()
    res.states, res.reasons, res.ops, res.f_compiled = compile_report(code_jit)
    if not res.f_compiled:
        res.mismatch = "f was not compiled: %s" % pyjion.info(ns_jit["f"]).reason
    if res.reasons:
        res.mismatch = "code objects left to the interpreter: %s" % res.reasons
    return res


def run(n, seed, keep_going=False, out=sys.stdout, quiet=False, timeout=30, start=0, threshold=0,
        progress=False):
    t0 = time.time()
    summary = {"n": n, "seed": seed, "compiled": 0, "code_objects": {}, "calls": 0, "returned": 0,
               "exceptions": {}, "mismatches": [], "features": {}, "opcodes": set()}
    for i in range(start, start + n):
        # with frames interpreted under the hook, __del__ would show the hook's
        # effect on CPython's own interpreter (see fuzz_programs.generate)
        program = fuzz_programs.generate(seed, i, finalizers=threshold == 0)
        res = check_program(program, timeout, threshold)
        if progress and (i + 1) % 100 == 0:
            print("seed %s: %d programs, %d mismatches, %.0f s" % (
                seed, i + 1, len(summary["mismatches"]) + (res.mismatch is not None), time.time() - t0),
                file=sys.stderr, flush=True)
        if res.mismatch is not None:
            summary["mismatches"].append({"index": i, "source": program.source, "message": res.mismatch})
            if not quiet:
                print("MISMATCH in program %d of seed %s:\n%s\n%s" % (i, seed, program.source, res.mismatch),
                      file=out)
                out.flush()
            if not keep_going:
                break
            continue
        summary["compiled"] += res.f_compiled
        for state, count in res.states.items():
            summary["code_objects"][state] = summary["code_objects"].get(state, 0) + count
        summary["opcodes"] |= res.ops
        for feature in program.features:
            summary["features"][feature] = summary["features"].get(feature, 0) + 1
        tally_outcomes(summary, res.outcomes)
    summary["opcodes"] = sorted(summary["opcodes"])
    summary["seconds"] = round(time.time() - t0, 2)
    return summary


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=int(os.environ.get("PYJION_FUZZ_N", "200")))
    p.add_argument("--seed", default=os.environ.get("PYJION_FUZZ_SEED", "1"))
    p.add_argument("--start", type=int, default=0, help="index of the first program")
    p.add_argument("--keep-going", action="store_true", help="report every mismatch")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--timeout", type=int, default=30, help="seconds per program (both runs)")
    p.add_argument("--threshold", type=int, default=0, choices=range(fuzz_programs.CALLS),
                   help="the JIT's threshold (calls before compiling); above 0, the programs "
                        "have no __del__ methods")
    p.add_argument("--debug", action="store_true",
                   help="compiled code checks its modelled value stack at every bytecode boundary")
    p.add_argument("--progress", action="store_true", help="a line on stderr every 100 programs")
    p.add_argument("--show", type=int, metavar="I", help="print generated program I and exit")
    args = p.parse_args(argv)
    # a program that allocates without bound gets a MemoryError (in both
    # runs), not the machine's memory
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = 4 << 30
    if soft == resource.RLIM_INFINITY or soft > limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    if args.debug:
        pyjion.config(debug=True)
    if args.show is not None:
        program = fuzz_programs.generate(args.seed, args.show, finalizers=args.threshold == 0)
        print(program.source)
        print("# calls of f:", program.calls)
        print("# features:", ", ".join(program.features))
        return 0
    summary = run(args.n, args.seed, keep_going=args.keep_going, quiet=args.json, timeout=args.timeout,
                  start=args.start, threshold=args.threshold, progress=args.progress)
    if args.json:
        print(json.dumps(summary))
    else:
        print("seed %s: %d programs, f compiled in %d, code objects %s, %d calls (%d returned), "
              "exceptions %s, %d mismatches, %.1f s" % (
                  args.seed, args.n, summary["compiled"], summary["code_objects"], summary["calls"],
                  summary["returned"], summary["exceptions"], len(summary["mismatches"]),
                  summary["seconds"]))
    return 1 if summary["mismatches"] else 0


if __name__ == "__main__":
    sys.exit(main())
