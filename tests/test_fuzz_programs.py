"""Random whole programs (fuzz_programs.py: calls, classes and attributes,
generators, exceptions, closures, comprehensions, unpacking...), run under
the JIT and on stock CPython by fuzz_programs_run.py. PYJION_FUZZ_PROGRAMS_N
sets how many (default 40, a few seconds), PYJION_FUZZ_SEED the seed.
For long runs: python tests/fuzz_programs_run.py --n 5000 --seed S"""
import json
import os
import subprocess
import textwrap
import warnings

import fuzz_programs
from jitcheck import PYTHON, REPO, version_opcode

N = int(os.environ.get("PYJION_FUZZ_PROGRAMS_N", "40"))
SEED = os.environ.get("PYJION_FUZZ_SEED", "1")
RUNNER = os.path.join(REPO, "tests", "fuzz_programs_run.py")
TESTS = os.path.join(REPO, "tests")

# What the programs must exercise, as the generator reports it...
FEATURES = {
    "call exact positional", "call defaults", "call keyword args", "call keyword-only", "call *args",
    "call **kwargs", "call f(*seq)", "call f(**map)", "recursion", "mutual recursion",
    "builtins", "list methods", "dict methods", "str methods", "closures", "nonlocal", "lambda",
    "classes", "__slots__", "class attributes", "class attribute changed", "properties",
    "method calls", "subclasses", "method override", "super()", "attribute added after creation",
    "method replaced", "generator functions", "yield from", "x = yield", "generator send",
    "generator throw", "generator close", "generator for loop", "generator expressions",
    "try finally", "try else", "raise from", "bare raise", "raise in generator",
    "comprehensions", "unpacking", "starred unpacking", "str +=", "list +=", "big int overflow",
    "zero division possible", "frame introspection", "traceback frames", "special methods used",
    "with", "classmethod", "staticmethod", "decorator",
}
# ...and, in longer runs, the rarer ones too.
RARER_FEATURES = {
    "str += with an alias", "range with start and step", "frames kept past their call",
    "generator frame", "exception being handled", "yield inside an expression",
    "maybe-unbound local read", "del of a local", "builtin shadowed by a global",
    "global function swapped", "function code replaced", "function defaults replaced",
    "class attribute becomes a property", "instance attribute shadows a method",
    "instance attribute shadows a class attribute", "instance dict entry under a property",
    "__class__ assigned", "runaway recursion", "non-tail recursion",
}
# ...and as compiled code shows it (opcodes of the code objects the JIT compiled).
OPCODES = {
    "CALL", "PRECALL", "KW_NAMES", "CALL_FUNCTION_EX", "LOAD_ATTR", "STORE_ATTR", "LOAD_METHOD",
    "LOAD_GLOBAL", "STORE_GLOBAL", "RETURN_GENERATOR", "YIELD_VALUE", "SEND",
    "GET_YIELD_FROM_ITER", "PUSH_EXC_INFO", "CHECK_EXC_MATCH", "POP_EXCEPT", "RERAISE",
    "RAISE_VARARGS", "MAKE_CELL", "LOAD_DEREF", "STORE_DEREF", "LOAD_CLOSURE", "COPY_FREE_VARS",
    "MAKE_FUNCTION", "LIST_APPEND", "MAP_ADD", "UNPACK_SEQUENCE", "UNPACK_EX", "LIST_EXTEND",
    "BUILD_SLICE", "BINARY_SUBSCR", "STORE_SUBSCR", "FORMAT_VALUE", "BUILD_STRING", "FOR_ITER",
    "CONTAINS_OP", "IS_OP", "LOAD_BUILD_CLASS", "BUILD_MAP", "BEFORE_WITH", "DELETE_FAST",
}
# as this CPython spells them (3.13: CALL_KW, LOAD_ATTR for methods, FORMAT_SIMPLE...)
OPCODES = {version_opcode(name) for name in OPCODES}


def test_generator_is_deterministic_and_valid():
    a = [fuzz_programs.generate("7", i) for i in range(15)]
    b = [fuzz_programs.generate("7", i) for i in range(15)]
    c = [fuzz_programs.generate("8", i) for i in range(15)]
    assert [(p.source, p.calls, p.features) for p in a] == [(p.source, p.calls, p.features) for p in b]
    assert [p.source for p in a] != [p.source for p in c]
    for p in a + c:
        with warnings.catch_warnings():
            warnings.simplefilter("error")      # e.g. "'int' object is not subscriptable"
            compile(p.source, "<gen>", "exec")
        assert "def f(" in p.source and len(p.calls) == fuzz_programs.CALLS


def _run(*args, timeout=600):
    proc = subprocess.run([PYTHON, RUNNER, *args], capture_output=True, text=True, timeout=timeout)
    # a crash of compiled code must fail the test, not end the session
    assert proc.returncode in (0, 1), "fuzzer crashed (exit %s):\n%s" % (proc.returncode, proc.stderr[-4000:])
    return proc


def test_fuzz_programs_differential():
    proc = _run("--n", str(N), "--seed", SEED, "--json", "--keep-going")
    summary = json.loads(proc.stdout)
    mismatches = summary["mismatches"]
    assert not mismatches, "%d mismatches; the first (seed %s, program %d):\n%s\n%s" % (
        len(mismatches), SEED, mismatches[0]["index"], mismatches[0]["source"], mismatches[0]["message"])
    # every program's f ran as machine code, and nothing was left to the interpreter
    assert summary["compiled"] == N, summary
    assert "failed" not in summary["code_objects"], summary["code_objects"]
    assert summary["code_objects"]["compiled"] >= 8 * N, summary["code_objects"]
    # the programs do something: a good part of the calls return
    assert summary["returned"] >= 0.25 * summary["calls"], summary
    if N >= 40:
        missing = FEATURES - set(summary["features"])
        assert not missing, missing
        missing = OPCODES - set(summary["opcodes"])
        assert not missing, missing
    if N >= 200:
        missing = RARER_FEATURES - set(summary["features"])
        assert not missing, missing


def run_failing_runner(tmp_path, body):
    """Runs fuzz_programs_run with `body` (the lines after `import
    fuzz_programs_run as r`, ending with its main() call) in a fresh
    interpreter; asserts the runner failed (exit status 1); its stdout."""
    script = tmp_path / "runner.py"
    script.write_text("import sys\nsys.path.insert(0, %r)\nimport fuzz_programs_run as r\n" % TESTS +
                      textwrap.dedent(body))
    proc = subprocess.run([PYTHON, str(script)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return proc.stdout


def test_runner_reports_a_mismatch(tmp_path):
    # Simulate a miscompilation: the JIT's copy of each program is made from a
    # source whose global COUNT starts at 1 (the same bytecode, a different constant).
    out = run_failing_runner(tmp_path, """\
        real = r.load_module
        count = [0]
        def load(src, filename):
            count[0] += 1
            if count[0] % 2:
                src = src.replace('COUNT = 0', 'COUNT = 1', 1)
            return real(src, filename)
        r.load_module = load
        sys.exit(r.main(['--n', '3', '--seed', '3']))
    """)
    assert "MISMATCH in program 0 of seed 3" in out
    assert "def f(" in out
    assert "different results" in out or "module state differs" in out


def test_runner_insists_on_compiled_code(tmp_path):
    # With a size limit that leaves every f to the interpreter, the runner
    # reports each program instead of comparing the interpreter with itself.
    out = run_failing_runner(tmp_path, """\
        import pyjion
        pyjion.config(max_instructions=5)
        sys.exit(r.main(['--n', '2', '--seed', '3', '--keep-going']))
    """)
    assert out.count("f was not compiled: code object too large") == 2, out


def test_runner_reports_a_leaked_reference(tmp_path):
    # A call of the JIT's copy that keeps one reference too many to f must be
    # reported, though everything the program computes is the same.
    out = run_failing_runner(tmp_path, """\
        import ctypes
        real = r.run_once
        count = [0]
        def run_once(fn, args, filename):
            count[0] += 1
            if count[0] % 2:
                ctypes.pythonapi.Py_IncRef(ctypes.py_object(fn))
            return real(fn, args, filename)
        r.run_once = run_once
        sys.exit(r.main(['--n', '2', '--seed', '3']))
    """)
    assert "module state differs" in out
    assert "refcount changes [('f', 1)]" in out
