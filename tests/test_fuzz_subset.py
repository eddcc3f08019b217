"""Random functions of the compiled subset (fuzz_subset.py), interpreted vs
compiled. PYJION_FUZZ_N sets how many (default 300), PYJION_FUZZ_SEED the seed.
For long runs: python tests/fuzz_subset.py --n 5000 --seed S"""
import json
import os
import sys

import fuzz_subset
from jitcheck import PYTHON, REPO, version_opcode

N = int(os.environ.get("PYJION_FUZZ_N", "300"))
SEED = os.environ.get("PYJION_FUZZ_SEED", "1")

SUBSET_OPCODES = {
    "RESUME", "LOAD_FAST", "STORE_FAST", "LOAD_CONST", "RETURN_VALUE", "BINARY_OP", "COMPARE_OP",
    "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_BACKWARD_IF_FALSE",
    "POP_JUMP_BACKWARD_IF_TRUE", "POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_FORWARD_IF_NOT_NONE",
    "POP_JUMP_BACKWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE", "JUMP_IF_FALSE_OR_POP",
    "JUMP_IF_TRUE_OR_POP", "JUMP_FORWARD", "JUMP_BACKWARD",
}
# as this CPython spells them (3.13: forward-only conditional jumps, TO_BOOL)
SUBSET_OPCODES = {version_opcode(name) for name in SUBSET_OPCODES}


def test_generator_is_deterministic():
    a = [fuzz_subset.generate("7", i) for i in range(20)]
    b = [fuzz_subset.generate("7", i) for i in range(20)]
    c = [fuzz_subset.generate("8", i) for i in range(20)]
    assert a == b
    assert a != c
    assert fuzz_subset.arguments("7", 3, 2, a[3][0]) == fuzz_subset.arguments("7", 3, 2, a[3][0])
    for src, nparams in a:
        compile(src, "<gen>", "exec")           # valid Python


def test_fuzz_subset_differential():
    # In a subprocess: a crash of compiled code must fail this test, not
    # end the session.
    import subprocess
    proc = subprocess.run([PYTHON, os.path.join(REPO, "tests", "fuzz_subset.py"), "--n", str(N),
                           "--seed", SEED, "--json", "--keep-going"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1), "fuzzer crashed (exit %s):\n%s" % (proc.returncode,
                                                                        proc.stderr[-4000:])
    summary = json.loads(proc.stdout)
    mismatches = summary["mismatches"]
    assert not mismatches, "%d mismatches; the first (seed %s, function %d):\n%s\n%s" % (
        len(mismatches), SEED, mismatches[0]["index"], mismatches[0]["source"],
        mismatches[0]["message"])
    assert summary["compiled"] >= 0.9 * N, (summary["compiled"], summary["not_compiled"])
    # the functions must do something: most calls return normally
    assert summary["returned"] >= 0.4 * summary["calls"], summary
    if N >= 200:
        # and together they exercise the whole subset
        missing = SUBSET_OPCODES - set(summary["opcodes"])
        assert not missing, missing
        ops = {o.split(" ", 1)[1] for o in summary["opcodes"] if o.startswith("BINARY_OP ")}
        assert {"+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^"} <= ops
        assert {"+=", "-=", "^=", "|=", "&=", "//=", "%="} <= ops


def test_fuzz_entry_point_reports_a_mismatch(tmp_path):
    # The standalone runner exits 1 and prints the source when compiled and
    # stock results differ; simulate a miscompilation by running one copy
    # with a different constant.
    import subprocess
    script = tmp_path / "sabotage.py"
    script.write_text(
        "import sys\n"
        "sys.path.insert(0, %r)\n"
        "import fuzz_subset, jitcheck\n"
        "real = jitcheck.make_function\n"
        "count = [0]\n"
        "def make(src, filename, name=None, namespace=None):\n"
        "    count[0] += 1\n"
        "    if count[0] %% 2:\n"
        "        src = src.replace('return', 'return 1 + ', 1) if 'return' in src else src\n"
        "    return real(src, filename, name, namespace)\n"
        "fuzz_subset.make_function = make\n"
        "sys.exit(fuzz_subset.main(['--n', '20', '--seed', '3']))\n" % os.path.join(REPO, "tests"))
    proc = subprocess.run([PYTHON, str(script)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "MISMATCH in function" in proc.stdout
    assert "def f(" in proc.stdout


def test_outcomes_of_ints_longer_than_repr_allows_are_compared_exactly():
    """fuzz_subset seed 41 made an int of more than 4,300 digits, whose repr
    raises ValueError: the comparison's rendering falls back to hex, and
    ints that differ in their last bit still render differently."""
    from jitcheck import norm
    big = 7 ** 6000
    assert norm(big) == ("int", hex(big))
    assert norm(big) != norm(big + 1)
    assert norm(12) == ("int", "12")
