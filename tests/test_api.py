"""The public API: enable/disable/is_enabled, config, info, native, dis_native,
stats, reset_stats, and refusing to replace somebody else's PEP 523 hook."""
import dis
import io
import sys
import textwrap

import pytest

import pyjion
import jitcheck
from jitcheck import (assert_compiled, assert_too_large, check_python, differential,
                      instruction_count, jit_off, jit_on, make_function, max_instructions, opnames,
                      register_source, too_large_reason, PY313, version_opcode)


def fresh(src, name=None):
    src = textwrap.dedent(src)
    return make_function(src, register_source(src, "api"), name)


ADD = """
def add(a, b):
    c = a + b
    return c
"""

# Every CPython 3.11 instruction compiles; code objects with more than
# config()["max_instructions"] instructions stay in CPython's interpreter. Under
# the `size_limit` fixture (SIZE_LIMIT = 10 instructions) ADD (7; 6 on 3.13)
# compiles and TOO_BIG (14; 16 on 3.13) fails to.
TOO_BIG = """
def g(x):
    n = 0
    for _ in x:
        n += 1
    return n
"""
ADD_SIZE, TOO_BIG_SIZE = (6, 16) if PY313 else (7, 14)


def test_size_limit_examples(size_limit):
    assert instruction_count(fresh(ADD)) == ADD_SIZE <= size_limit
    assert instruction_count(fresh(TOO_BIG)) == TOO_BIG_SIZE > size_limit


# ---- enable / disable / is_enabled ------------------------------------------------

def test_enable_disable_idempotent(nojit):
    assert not pyjion.is_enabled()
    assert pyjion.enable() is True
    try:
        assert pyjion.is_enabled()
        assert pyjion.enable() is False          # already installed
        assert pyjion.is_enabled()
    finally:
        assert pyjion.disable() is True
    assert not pyjion.is_enabled()
    assert pyjion.disable() is False             # nothing to remove
    assert not pyjion.is_enabled()
    assert pyjion.config()["enabled"] is False


def test_enable_again_updates_settings(nojit):
    try:
        assert pyjion.enable(threshold=5) is True
        assert pyjion.config()["threshold"] == 5
        assert pyjion.enable(threshold=0) is False
        assert pyjion.config()["threshold"] == 0
        assert pyjion.enable() is False          # threshold=None keeps the setting
        assert pyjion.config()["threshold"] == 0
        pyjion.config(threshold=7)
        pyjion.enable()
        assert pyjion.config()["threshold"] == 7
    finally:
        pyjion.disable()


def test_disable_restores_stock_evaluation(nojit):
    f = fresh(ADD)
    pyjion.enable(threshold=0)
    pyjion.disable()
    assert f(1, 2) == 3
    assert pyjion.info(f).run_count == 0        # the hook never saw the call
    assert pyjion.info(f).state == "interpreted"


def test_enable_with_jit_false_counts_but_never_compiles(nojit):
    f = fresh(ADD)
    pyjion.enable(threshold=0, jit=False)
    try:
        for _ in range(5):
            assert f(2, 3) == 5
        assert pyjion.config()["jit"] is False
    finally:
        pyjion.disable()
        pyjion.config(jit=True)
    i = pyjion.info(f)
    assert i.run_count == 5
    assert i.state == "interpreted" and not i.compiled and not i.failed


# ---- config -----------------------------------------------------------------------

def test_config_returns_all_settings(nojit):
    cfg = pyjion.config()
    for key in ("threshold", "jit", "profile", "pgc", "debug", "max_instructions", "level",
                "graph", "enabled", "unsupported"):
        assert key in cfg, key
    assert sorted(cfg["unsupported"]) == ["graph", "level"]
    assert cfg["enabled"] is False
    assert cfg["max_instructions"] == 50000      # the default (every test restores it)


def test_config_accepts_compat_settings(nojit):
    before = pyjion.config()
    try:
        cfg = pyjion.config(level=2, graph=True)
        assert cfg["level"] == 2 and cfg["graph"] is True
        assert pyjion.config()["level"] == 2        # kept
        cfg = pyjion.config(pgc=False, debug=True, threshold=3)
        assert cfg["pgc"] is False and cfg["debug"] is True and cfg["threshold"] == 3
        assert cfg["level"] == 2
    finally:
        pyjion.config(level=before["level"], graph=before["graph"], pgc=before["pgc"],
                      debug=before["debug"], threshold=before["threshold"], warmup=before["warmup"])
    assert pyjion.config() == before


def test_config_rejects_negative_threshold(nojit):
    with pytest.raises(ValueError):
        pyjion.config(threshold=-1)
    with pytest.raises(ValueError):
        pyjion.enable(threshold=-1)
    assert not pyjion.is_enabled()


DEBUG_SRC = """
def f(a, b, n):
    t = 0
    while n > 0:
        t = t + a * b
        n -= 1
    return t
"""


def test_debug_mode_compiles_and_runs(nojit):
    # Debug code checks every value-stack slot at each bytecode boundary.
    plain = fresh(DEBUG_SRC)
    f = fresh(DEBUG_SRC)
    pyjion.enable(threshold=0)
    try:
        assert plain(2, 3, 10) == 60
        pyjion.config(debug=True)
        assert f(2, 3, 10) == 60
    finally:
        pyjion.disable()
        pyjion.config(debug=False)
    assert_compiled(f)
    assert_compiled(plain)
    assert pyjion.info(f).code_size > pyjion.info(plain).code_size
    out = io.StringIO()
    pyjion.dis_native(f, file=out)
    assert "pyj_rt_debug_check_frame" in out.getvalue()
    out = io.StringIO()
    pyjion.dis_native(plain, file=out)
    assert "pyj_rt_debug_check_frame" not in out.getvalue()


# ---- info -------------------------------------------------------------------------

def test_info_never_called(nojit):
    f = fresh(ADD)
    i = pyjion.info(f)
    assert i.state == "interpreted"
    assert not i.compiled and not i.failed
    assert i.run_count == 0
    assert i.compile_result == pyjion.CompilationResult.NoResult
    assert i.reason is None and i.code_size == 0 and i.tier == 0
    assert i.pgc == 0 and i.arg_types == ()
    assert i.optimizations == 0
    assert "state='interpreted'" in repr(i)


def test_info_compiled(jit):
    f = fresh(ADD)
    assert f(1, 2) == 3
    i = assert_compiled(f)
    assert i.compile_result == pyjion.CompilationResult.Success
    assert i.reason is None
    assert i.run_count == 1
    assert i.tracing is False and i.profiling is False


def test_info_failed_gives_the_reason(jit, size_limit):
    g = fresh(TOO_BIG)
    assert g("abc") == 3
    i = assert_too_large(g, size_limit)
    assert i.compile_result == pyjion.CompilationResult.IncompatibleSize
    assert i.reason == "code object too large: %d instructions (limit 10)" % TOO_BIG_SIZE
    assert i.code_size == 0 and i.tier == 0
    assert g("abcd") == 4                       # still works, interpreted
    assert pyjion.info(g).run_count == 2
    assert pyjion.info(g).state == "failed"      # no second attempt


def test_info_exception_table_compiles(jit):
    # Functions with an exception table used to be refused ("co_exceptiontable");
    # they compile now and behave as on stock CPython: handled, unhandled
    # (traceback, tb_lasti) and no exception at all.
    src = """
    def h(a):
        try:
            return 1 / a
        except ZeroDivisionError:
            return None
    """
    differential(src, [(0,), (4,), ("x",), (0.0,)],
                 opcodes=("PUSH_EXC_INFO", "CHECK_EXC_MATCH", "POP_EXCEPT", "RERAISE"))
    h = fresh(src)
    assert h(0) is None
    i = assert_compiled(h)
    assert i.compile_result == pyjion.CompilationResult.Success and i.reason is None


def test_too_large_function_runs_interpreted(jit, size_limit):
    # A function over the size limit must run on CPython's interpreter exactly
    # as it does without the hook: results, exceptions, tracebacks and
    # argument reference counts; refused once, never retried.
    src = textwrap.dedent("""
    def f(a):
        try:
            if isinstance(a, list):
                raise ExceptionGroup("eg", a)
            return 10 / a
        except* ZeroDivisionError as eg:
            caught = ("zde", len(eg.exceptions))
        except* KeyError:
            caught = "key"
        return caught
    """)
    filename = register_source(src, "api")
    f_jit = make_function(src, filename)
    f_ref = make_function(src, filename)
    calls = [
        lambda: (5,),                                             # no exception
        lambda: (0,),                                             # a plain exception, matched
        lambda: ([ZeroDivisionError(), ZeroDivisionError()],),    # a group, matched
        lambda: ([KeyError(1), ZeroDivisionError()],),            # split over both clauses
        lambda: ([ValueError("v"), KeyError(2)],),                # partly re-raised
        lambda: ("text",),                                        # TypeError, not matched
    ]
    kinds = set()
    for n, mk in enumerate(calls):
        with jit_on():
            got = jitcheck.run_once(f_jit, mk(), filename)
        with jit_off():
            want = jitcheck.run_once(f_ref, mk(), filename)
        jitcheck._compare(got, want, src, mk())
        kinds.add(want[0][0])
        i = assert_too_large(f_jit, size_limit)
        assert i.compile_result == pyjion.CompilationResult.IncompatibleSize
        assert i.reason == too_large_reason(f_jit, size_limit)
        assert i.code_size == 0 and i.tier == 0
        assert i.run_count == n + 1                 # refused once, never retried
    assert kinds == {"return", "raise"}
    with jit_on():
        assert f_jit(5) == 2.0
        assert f_jit([ZeroDivisionError()] * 3) == ("zde", 3)
        with pytest.raises(ExceptionGroup) as ei:
            f_jit([ValueError("v"), KeyError(2)])
        assert [type(e) for e in ei.value.exceptions] == [ValueError]
    with pytest.raises(ValueError):
        pyjion.native(f_jit)
    assert pyjion.info(f_ref).run_count == 0
    # raising the limit later does not retry a refused code object
    with max_instructions(0), jit_on():
        assert f_jit(5) == 2.0
    assert_too_large(f_jit, size_limit)


def test_info_accepts_method_code_lambda_and_duck(jit):
    ns = {}
    src = textwrap.dedent("""
    class C:
        def m(self, x):
            return x + 1
    lam = lambda a, b: a * b
    """)
    exec(compile(src, register_source(src, "api"), "exec"), ns)
    obj = ns["C"]()
    lam = ns["lam"]
    assert obj.m(1) == 2
    assert lam(3, 4) == 12
    assert_compiled(obj.m)                       # bound method
    assert_compiled(ns["C"].m)                   # plain function
    assert_compiled(lam)
    assert pyjion.info(obj.m.__code__).state == "compiled"   # code object
    assert pyjion.info(lam.__code__).run_count == 1

    class Duck:
        __code__ = lam.__code__
    assert pyjion.info(Duck()).compiled


@pytest.mark.parametrize("junk", [42, "text", None, len, object(), [1], type])
def test_info_rejects_junk(junk):
    with pytest.raises(TypeError):
        pyjion.info(junk)


def test_info_rejects_non_code_dunder_code():
    class Bad:
        __code__ = 5
    with pytest.raises(TypeError):
        pyjion.info(Bad())


def test_run_count_counts_calls(jit, size_limit):
    f = fresh(ADD)
    g = fresh(TOO_BIG)
    for k in range(7):
        f(k, k)
        g("x")
    assert pyjion.info(f).run_count == 7
    assert pyjion.info(g).run_count == 7
    assert_compiled(f)
    assert_too_large(g, size_limit)                # failed functions are counted too


def test_threshold_delays_compilation_and_profiles_types(nojit):
    f = fresh(ADD)
    pyjion.enable(threshold=3)
    try:
        f(1, 2.0)
        f(1, 2.5)
        i = pyjion.info(f)
        assert i.state == "interpreted" and i.run_count == 2
        assert i.pgc == 1
        assert i.arg_types == (("int",), ("float",))
        f(3, 4)
        assert pyjion.info(f).state == "interpreted"     # 3 calls: still at the threshold
        assert f(5, 6) == 11                             # the 4th call compiles
        i = assert_compiled(f)
        assert i.run_count == 4
        assert i.pgc == 2
    finally:
        pyjion.disable()


def test_info_tracing_and_profiling_flags(jit):
    f = fresh(ADD)
    f(1, 1)
    sys.settrace(lambda *a: None)
    try:
        assert pyjion.info(f).tracing is True
    finally:
        sys.settrace(None)
    assert pyjion.info(f).tracing is False
    pyjion.enable(profile=True)
    try:
        assert pyjion.info(f).profiling is True
    finally:
        pyjion.config(profile=False)
    assert pyjion.info(f).profiling is False


# ---- native / dis_native --------------------------------------------------------------

def test_native_returns_the_machine_code(jit):
    f = fresh(ADD)
    f(1, 2)
    code, size, address = pyjion.native(f)
    assert isinstance(code, bytes)
    assert len(code) == size == pyjion.info(f).code_size
    assert size > 16
    assert isinstance(address, int) and address != 0
    assert code[:1] == b"\x55"                    # push rbp: it is x86-64 machine code
    assert code.endswith(b"\xc3") or b"\xc3" in code   # a ret somewhere
    assert pyjion.native(f.__code__) == (code, size, address)


def test_native_of_uncompiled_functions_raises(jit, size_limit):
    f = fresh(ADD)
    with pytest.raises(ValueError):
        pyjion.native(f)                          # never called
    g = fresh(TOO_BIG)
    g("ab")
    assert_too_large(g, size_limit)
    with pytest.raises(ValueError):
        pyjion.native(g)                          # failed to compile
    with pytest.raises(ValueError):
        pyjion.dis_native(g, file=io.StringIO())
    with pytest.raises(TypeError):
        pyjion.native(42)


def test_dis_native_prints_boundaries_and_mnemonics(jit):
    f = fresh("""
    def f(a, b):
        c = a + b
        if c > 3:
            return c * 2
        return c
    """)
    assert f(1, 2) == 3
    out = io.StringIO()
    pyjion.dis_native(f, file=out)
    text = out.getvalue()
    lines = text.splitlines()
    for opcode in ("RESUME", "LOAD_FAST", "STORE_FAST", "BINARY_OP", "COMPARE_OP",
                   "POP_JUMP_FORWARD_IF_FALSE", "RETURN_VALUE"):
        opcode = version_opcode(opcode)
        assert any(l.startswith("; ") and opcode in l for l in lines), opcode
    mnemonics = {l.split()[1] for l in lines if not l.startswith(";")}
    for m in ("push", "mov", "call", "ret", "cmp"):
        assert m in mnemonics, m
    assert "slots::binary<PyNumber_Add>" in text and "slots::compare" in text
    # one comment per bytecode instruction, with its real offset and name, in order
    marks = [tuple(l[2:].split()[:2]) for l in lines if l.startswith("; ")]
    assert marks == [(str(ins.offset), ins.opname) for ins in dis.get_instructions(f)]


def test_dis_native_of_uncompiled_raises(jit):
    f = fresh(ADD)
    with pytest.raises(ValueError):
        pyjion.dis_native(f, file=io.StringIO())


# ---- stats / reset_stats -----------------------------------------------------------------

def test_stats_counts_compiled_and_failed(jit, size_limit):
    f1, f2 = fresh(ADD), fresh(ADD)
    g1, g2 = fresh(TOO_BIG), fresh(TOO_BIG)
    h = fresh("def h(x):\n    n = 1\n    for _ in x:\n        n = 2\n    return n\n")
    # Every new frame the hook sees counts, pyjion's own Python functions too:
    # let the hook meet stats() and reset_stats() before counting starts.
    pyjion.stats()
    pyjion.reset_stats()
    pyjion.reset_stats()
    f1(1, 2), f2(1, 2), f1(3, 4)
    g1("a"), g2("b"), h("c")
    s = pyjion.stats()
    assert set(s) == {"functions", "jit"}
    j = s["jit"]
    assert j["compiled"] == 2
    assert j["recompiled"] == 1                   # f1's second call: compiled with its profile
    assert j["failed"] == 3
    # the key is the reason up to " at offset": for the size limit, the whole
    # reason, so code objects of different sizes are counted apart
    h_size = 14 if PY313 else 12
    assert instruction_count(h) == h_size
    assert j["failed_reasons"] == {"code object too large: %d instructions (limit 10)" % TOO_BIG_SIZE: 2,
                                   "code object too large: %d instructions (limit 10)" % h_size: 1}
    assert j["failed_reasons"] == {too_large_reason(g1, size_limit): 2,
                                   too_large_reason(h, size_limit): 1}
    # every compile's code: f2's is f1's first; f1's second (the optimising
    # tier's) came with its baseline fallback
    fallback = pyjion._eval.record_info(f1.__code__)["fallback_size"]
    assert fallback > 0
    assert j["code_bytes"] == pyjion.info(f1).code_size + fallback + 2 * pyjion.info(f2).code_size
    assert j["compile_time_s"] > 0
    assert s["functions"] == {}                   # not profiling


def test_reset_stats_forgets_counters_not_code(jit, size_limit):
    f = fresh(ADD)
    f(1, 2)
    fresh(TOO_BIG)("x")
    assert pyjion.stats()["jit"]["compiled"] >= 1
    assert pyjion.stats()["jit"]["failed"] >= 1
    pyjion.reset_stats()
    j = pyjion.stats()["jit"]
    assert j["compiled"] == 0 and j["failed"] == 0 and j["failed_reasons"] == {}
    assert j["code_bytes"] == 0 and j["compile_time_s"] == 0
    assert_compiled(f)                            # machine code stays
    assert f(2, 2) == 4
    assert pyjion.info(f).run_count == 2


def test_stats_functions_while_profiling(nojit):
    f = fresh(ADD)
    pyjion.enable(threshold=0, profile=True)
    try:
        for k in range(3):
            f(k, 1)
        funcs = pyjion.stats()["functions"]
    finally:
        pyjion.disable()
        pyjion.reset_stats()
    key = (f.__code__.co_filename, f.__code__.co_firstlineno, "add")
    assert key in funcs
    assert funcs[key]["calls"] == 3
    assert funcs[key]["primitive_calls"] == 3
    assert funcs[key]["total_time"] >= funcs[key]["own_time"] >= 0


# ---- another PEP 523 hook ----------------------------------------------------------------

FOREIGN_HOOK_C = r"""
/* A foreign PEP 523 hook: counts frames and forwards to CPython's interpreter. */
extern void *_PyEval_EvalFrameDefault(void *ts, void *frame, int throwflag);
unsigned long foreign_calls = 0;
void *foreign_eval(void *ts, void *frame, int throwflag)
{
    foreign_calls++;
    return _PyEval_EvalFrameDefault(ts, frame, throwflag);
}
"""


def test_enable_refuses_to_replace_a_foreign_hook(tmp_path):
    # A real foreign hook is a C function: a ctypes callback cannot be one, as
    # it would run Python frames (recursively through itself) and would
    # swallow the exceptions of the frames it evaluates. So build a tiny
    # shared library with the system C compiler and install it via ctypes, in
    # a subprocess so that a mistake cannot break this test session.
    import shutil
    import subprocess
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "no C compiler"
    (tmp_path / "foreign.c").write_text(FOREIGN_HOOK_C)
    lib = tmp_path / "foreign.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(lib), str(tmp_path / "foreign.c")],
                   check=True)
    out = check_python("""
        import ctypes, sys
        import pyjion
        lib = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
        api = ctypes.pythonapi
        api.PyInterpreterState_Get.restype = ctypes.c_void_p
        api._PyInterpreterState_GetEvalFrameFunc.restype = ctypes.c_void_p
        api._PyInterpreterState_GetEvalFrameFunc.argtypes = [ctypes.c_void_p]
        api._PyInterpreterState_SetEvalFrameFunc.restype = None
        api._PyInterpreterState_SetEvalFrameFunc.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        interp = api.PyInterpreterState_Get()
        foreign = ctypes.cast(lib.foreign_eval, ctypes.c_void_p).value
        default = ctypes.cast(api._PyEval_EvalFrameDefault, ctypes.c_void_p).value
        calls = ctypes.c_ulong.in_dll(lib, "foreign_calls")

        def work(n):
            return n * 2

        api._PyInterpreterState_SetEvalFrameFunc(interp, foreign)
        assert api._PyInterpreterState_GetEvalFrameFunc(interp) == foreign
        before = calls.value
        assert work(21) == 42
        assert calls.value > before, "the foreign hook is not evaluating frames"
        assert not pyjion.is_enabled()
        try:
            pyjion.enable(threshold=0)
        except RuntimeError as exc:
            print("refused:", exc)
        else:
            raise SystemExit("pyjion.enable() replaced a foreign hook")
        assert api._PyInterpreterState_GetEvalFrameFunc(interp) == foreign
        assert not pyjion.is_enabled()
        assert pyjion.disable() is False             # must not remove the foreign hook
        assert api._PyInterpreterState_GetEvalFrameFunc(interp) == foreign
        before = calls.value
        assert work(1) == 2
        assert calls.value > before
        assert pyjion.info(work).run_count == 0      # pyjion's hook never ran it

        api._PyInterpreterState_SetEvalFrameFunc(interp, default)
        assert pyjion.enable(threshold=0) is True
        assert work(5) == 10
        assert pyjion.info(work).compiled
        pyjion.disable()
        print("ok")
    """, args=[str(lib)])
    assert "refused: another PEP 523" in out
    assert out.strip().endswith("ok")


GEN = """
def gen(a):
    x = yield a
    try:
        y = yield x + 1
    except KeyError as e:
        y = yield ("caught", e.args)
    return y
"""


def _drive_generators(gen):
    """Drives generators of `gen` through next, send, throw, close (started and
    unstarted) and exhaustion; returns what they produced."""
    g = gen(5)
    out = [next(g), g.send(1)]
    try:
        next(g)                              # creation + 3 resumes, the last one returns None
    except StopIteration as exc:
        out.append(exc.value)
    g = gen(1)
    out.append([next(g), g.send(10), g.throw(KeyError("k"))])
    try:
        g.send(7)
    except StopIteration as exc:
        out.append(exc.value)                # creation + 4 resumes
    g = gen(2)
    out.append(next(g))
    g.close()                                # creation + 2 resumes (close throws GeneratorExit in)
    g = gen(3)
    g.close()                                # creation + 1: CPython evaluates the unstarted frame too
    g = gen(4)
    out.append(next(g))
    try:
        g.throw(ValueError("v"))             # creation + 2 resumes, the error escapes
    except ValueError as exc:
        out.append(repr(exc))
    return out


def test_run_count_includes_generator_resumes(jit):
    gen = fresh("""
    def gen(a):
        yield a
        yield a + 1
    """)
    assert list(gen(5)) == [5, 6]
    # generators compile; the hook sees the creating call, then three resumes
    # (two yields and the final StopIteration)
    i = assert_compiled(gen)
    assert i.run_count == 4
    assert list(gen(7)) == [7, 8]
    assert pyjion.info(gen).run_count == 8


def test_generator_run_count_is_one_plus_the_resumes(nojit):
    # The hook sees every evaluation of a generator's frame: its creation
    # (RETURN_GENERATOR) and every resume. Stock CPython reports each resume
    # (but not the creation) as a "call" profile event: count those on the
    # same sequence of operations, and compare the results too.
    gen_jit, gen_ref = fresh(GEN), fresh(GEN)
    resumes = 0

    def profiler(frame, event, arg):
        nonlocal resumes
        if event == "call" and frame.f_code is gen_ref.__code__:
            resumes += 1

    sys.setprofile(profiler)
    try:
        want = _drive_generators(gen_ref)
    finally:
        sys.setprofile(None)
    creations = 5
    if PY313:
        # 3.13's close() finishes a generator without evaluating its frame
        # when it is unstarted, or suspended at a yield outside any try block
        assert resumes == 3 + 4 + 1 + 0 + 2
    else:
        assert resumes == 3 + 4 + 2 + 1 + 2
    with jit_on():
        got = _drive_generators(gen_jit)
    assert got == want
    i = assert_compiled(gen_jit)
    assert i.run_count == creations + resumes


class Toggle:
    """Operand whose + switches pyjion while the compiled caller is running."""

    def __init__(self, action):
        self.action = action

    def __add__(self, other):
        self.action()
        return other


def test_disable_and_reset_from_inside_compiled_code(jit):
    f = fresh("""
    def f(a, b, n):
        x = a + b
        i = 0
        while i < n:
            x = x + i
            i += 1
        return x
    """)
    assert f(1, 2, 3) == 6
    assert_compiled(f)
    # the compiled frame keeps running on its machine code after the hook is gone
    assert f(Toggle(pyjion.disable), 10, 100) == 10 + 4950
    assert not pyjion.is_enabled()
    runs = pyjion.info(f).run_count
    assert f(1, 1, 1) == 2
    assert pyjion.info(f).run_count == runs          # the hook is gone
    pyjion.enable(threshold=0)
    assert f(Toggle(pyjion.reset_stats), 1, 10) == 1 + 45
    assert pyjion.stats()["jit"]["compiled"] == 0    # reset while it ran
    assert f(1, 1, 1) == 2
    assert pyjion.info(f).run_count == runs + 2
    assert_compiled(f)


MANY_LOCALS = "".join("    v%d = a + %d\n" % (i, i) for i in range(300))
EXCEPT_STAR_BLOCK = ("    try:\n        r = len(a)\n    except* TypeError:\n        r = -1\n"
                     "    except* (KeyError, ValueError):\n        r = -2\n")


EXCEPT_STAR_SOURCES = [
    "def f(a):\n" + EXCEPT_STAR_BLOCK + "    return r\n",
    # two except* statements
    "def f(a):\n" + EXCEPT_STAR_BLOCK + EXCEPT_STAR_BLOCK.replace("r =", "s =")
    + "    return r, s\n",
    # behind many EXTENDED_ARGs
    "def f(a):\n" + MANY_LOCALS + EXCEPT_STAR_BLOCK.replace("len(a)", "len(v299)")
    + "    return r\n",
    # in a nested function
    "def f(a):\n    def inner(a):\n"
    + textwrap.indent(EXCEPT_STAR_BLOCK + "    return r\n", "    ")
    + "    return inner(a)\n",
]
EXCEPT_STAR_IDS = ["except_star", "two_statements", "behind_extended_args", "nested_function"]


class LenRaises:
    """len() raises what `make()` builds; `+` gives the object itself (so v299 = a + 299 works)."""

    def __init__(self, make):
        self.make = make

    def __add__(self, k):
        return self

    def __len__(self):
        raise self.make()


EXCEPT_STAR_CALLS = [
    lambda: ("abc",),                                                   # no exception
    lambda: (1,),                                                       # TypeError: first clause
    lambda: (LenRaises(lambda: KeyError("k")),),                        # second clause (a tuple)
    lambda: (LenRaises(lambda: ExceptionGroup("both", [ValueError(1), TypeError(2)])),),
    lambda: (LenRaises(lambda: OSError("unmatched")),),                 # propagates unwrapped
    lambda: (LenRaises(lambda: ExceptionGroup("part", [OSError(1), KeyError(2)])),),
    lambda: (LenRaises(lambda: ExceptionGroup("nest", [
        ExceptionGroup("in", [OSError(1), TypeError(2)]), KeyError(3), ZeroDivisionError(4)])),),
]


@pytest.mark.parametrize("src", EXCEPT_STAR_SOURCES, ids=EXCEPT_STAR_IDS)
def test_except_star_compiles_and_matches_the_interpreter(src):
    # except* (PREP_RERAISE_STAR) used to be this suite's example of code that
    # fails to compile; it compiles now and behaves as on stock CPython:
    # results, exceptions and ExceptionGroup tracebacks.
    nested = "inner" in src
    outcomes = differential(src, EXCEPT_STAR_CALLS, opcodes=() if nested else ("PREP_RERAISE_STAR",),
                            namespace={"LenRaises": LenRaises})
    assert {o[0] for o in outcomes} == {"return", "raise"}
    if nested:                                  # the inner function compiles too
        f = make_function(src, register_source(src, "api"))
        inner = next(c for c in f.__code__.co_consts if hasattr(c, "co_code"))
        assert version_opcode("PREP_RERAISE_STAR") in [ins.opname for ins in dis.get_instructions(inner)]
        with jit_on():
            assert f("ab") == 2 and f(1) == -1
        assert_compiled(f)
        assert_compiled(inner)


@pytest.mark.parametrize("src", EXCEPT_STAR_SOURCES, ids=EXCEPT_STAR_IDS)
def test_size_limit_boundary(jit, src):
    # One instruction over the limit stays interpreted (with the count in the
    # reason), exactly at the limit compiles; 0 means no limit. pyjion counts
    # instructions with EXTENDED_ARG folded in and without CACHE entries.
    def target_of(f):
        if "inner" in src:
            return next(c for c in f.__code__.co_consts if hasattr(c, "co_code"))
        return f

    before = pyjion.config()["max_instructions"]
    probe = make_function(src, register_source(src, "api"))
    count = instruction_count(target_of(probe))
    listed = list(dis.get_instructions(target_of(probe)))
    assert ("EXTENDED_ARG" in opnames(target_of(probe))) == ("v299" in src)
    if "v299" in src:
        assert count < len(listed)                  # the prefixes are not counted
    for limit, fits in ((count - 1, False), (count, True), (0, True)):
        f = make_function(src, register_source(src, "api"))
        target = target_of(f)
        two = "s =" in src
        with max_instructions(limit):
            assert f(1) == ((-1, -1) if two else -1)
            assert f(LenRaises(KeyError)) == ((-2, -2) if two else -2)
        if fits:
            assert_compiled(target)
        else:
            i = assert_too_large(target, limit)
            assert i.reason == "code object too large: %d instructions (limit %d)" % (count, limit)
            assert i.compile_result == pyjion.CompilationResult.IncompatibleSize
            assert i.run_count == 2
            if target is not f:
                assert_compiled(f)                  # the enclosing function is fine
    assert pyjion.config()["max_instructions"] == before


def test_max_instructions_setting(nojit):
    before = pyjion.config()["max_instructions"]
    with pytest.raises(ValueError):
        pyjion.config(max_instructions=-1)
    assert pyjion.config()["max_instructions"] == before      # unchanged
    with max_instructions(7):
        assert pyjion.config()["max_instructions"] == 7
        assert pyjion.config(threshold=0)["max_instructions"] == 7   # kept by other changes
        assert pyjion.config(max_instructions=None)["max_instructions"] == 7
        pyjion.enable(threshold=0)
        try:
            assert pyjion.config()["max_instructions"] == 7          # kept by enable()
            f, g = fresh(ADD), fresh(TOO_BIG)
            assert f(1, 2) == 3 and g([1, 2]) == 2
        finally:
            pyjion.disable()
        assert pyjion.config()["max_instructions"] == 7
        assert_compiled(f)
        assert_too_large(g, 7)
    assert pyjion.config()["max_instructions"] == before


class Pad:
    """a + k gives a string of length k (so len(v299) works); a[k] gives ("item", k)."""

    def __add__(self, k):
        return "x" * k

    def __getitem__(self, k):
        return ("item", k)


@pytest.mark.parametrize("src, opcode, calls", [
    ("def f(a):\n    return len(a)\n", "LOAD_GLOBAL", [("abc",), ([1, 2],), (1,)]),
    ("def f(a):\n    b = a + 1\n    return a[b]\n", "BINARY_SUBSCR",
     [(1,), ([0, 1, 2],), (Pad(),)]),
    ("def f(a):\n    b = a + 1\n    return a.real\n", "LOAD_ATTR",
     [(1,), (2.5,), (3j,), ("x",), (Pad(),)]),
    ("def f(a):\n" + MANY_LOCALS + "    return len(v299)\n", "LOAD_GLOBAL",
     [(Pad(),), (1,)]),                                  # behind EXTENDED_ARGs
], ids=["LOAD_GLOBAL", "BINARY_SUBSCR", "LOAD_ATTR", "LOAD_GLOBAL_behind_extended_args"])
def test_formerly_unsupported_instructions_compile(src, opcode, calls):
    # These were this test suite's examples of code that fails to compile;
    # they compile now and must behave as on stock CPython.
    outcomes = differential(src, calls, opcodes=(opcode,), namespace={"Pad": Pad})
    assert {o[0] for o in outcomes} == {"return", "raise"}


def test_functions_sharing_a_code_object_share_the_record(jit):
    import types
    f = fresh(ADD)
    g = types.FunctionType(f.__code__, {}, "g")
    assert f(1, 2) == 3
    assert_compiled(g)                        # compiled through f
    assert g(2, 2) == 4
    assert pyjion.info(f).run_count == 2
    assert pyjion.native(f) == pyjion.native(g)


@pytest.mark.parametrize("name", ["threshold", "max_instructions"])
@pytest.mark.parametrize("bad, error", [(1.5, TypeError), ("5", TypeError), (True, TypeError),
                                        (-1, ValueError), (2 ** 64, ValueError)])
def test_count_settings_are_checked(name, bad, error):
    before = pyjion.config()
    with pytest.raises(error):
        pyjion.config(**{name: bad})
    after = pyjion.config()
    assert after[name] == before[name]
