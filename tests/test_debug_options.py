"""The debug options: config(debug=True) (a run-time check of the frame model
at every bytecode boundary) and config(dump_asm=path) / PYJION_DUMP_ASM
(the assembly listing of every compile), and the compile statistics."""
import dis
import os
import re

import pytest

import pyjion
from jitcheck import check_python, jit_on

SRC = '''
def f(a, b):
    total = 0
    for x in range(a):
        if x % 2:
            total += x * b
    try:
        total = total // (a - 3)
    except ZeroDivisionError:
        total = -1
    return [total, *str(total)]
'''


# The same with `x % 2 == 1` for `x % 2`: the comparison fuses with its jump
# in the optimising tier on 3.11 and 3.13 alike (3.13's TO_BOOL of an unboxed
# int would box it each round, and the tier would not pay for f there).
SRC_TIER = SRC.replace("        if x % 2:\n", "        if x % 2 == 1:\n")
assert SRC_TIER != SRC


def fresh(src=SRC, name="f"):
    ns = {}
    exec(compile(src, "<debug-options>", "exec"), ns)
    return ns[name]


@pytest.fixture
def dump_to(tmp_path):
    path = tmp_path / "asm.txt"
    before = pyjion.config()["dump_asm"]
    pyjion.config(dump_asm=str(path))
    try:
        yield path
    finally:
        pyjion.config(dump_asm=before if before is not None else False)


def test_dump_asm_lists_boundaries_and_instructions(dump_to):
    f = fresh(SRC_TIER)
    with jit_on():
        assert f(5, 2) == [4, "4"]
        assert f(3, 1) == [-1, "-", "1"]
    assert pyjion.info(f).compiled
    text = dump_to.read_text()
    # Three compiles: the first call's; the second's, with the first's
    # profile (eager mode's profile-guided stage), into the optimising tier,
    # which is the code f has; and that code's baseline fallback.
    header = [line for line in text.splitlines() if line.startswith("; ==== pyjion: f ")]
    assert len(header) == 3, text[:2000]
    assert pyjion.info(f).tier == 2
    header = header[1:2]
    assert re.search(r"\(<debug-options>:2\) at 0x[0-9a-f]+, (\d+) bytes", header[0])
    size = int(re.search(r", (\d+) bytes", header[0]).group(1))
    assert size == pyjion.info(f).code_size
    listing = text[text.index(header[0]):]
    listing = listing[:listing.index("; ==== end")]
    # One comment per bytecode instruction, in order, with offset, name and argument.
    marks = re.findall(r"; ---- offset (\d+): (\w+) (\d+) \(stack depth (-?\d+)\)(?: unreachable)? at \+0x([0-9a-f]+)",
                       listing)
    expected = [(i.offset, i.opname) for i in dis.get_instructions(f)]
    assert [(int(o), n) for o, n, _, _, _ in marks] == expected
    # ... at the native offsets CompiledCode.boundaries reports
    owner = pyjion._eval.record_info(f.__code__)["owner"]
    assert [int(m[4], 16) for m in marks] == [b[0] for b in owner.boundaries]
    # Real x86-64 instructions with their machine code, and named helper calls.
    assert re.search(r"^\s*mov\s+\w+", listing, re.M)
    assert re.search(r"\bret\b", listing)
    assert re.search(r"call 0x[0-9A-F]+\s+;.*\| [\w:]+", listing), "calls should name their callee"
    assert re.search(r"\b[0-9A-F]{4,}\b", listing), "machine code bytes expected"


def test_dump_asm_off_writes_nothing(tmp_path):
    path = tmp_path / "asm.txt"
    pyjion.config(dump_asm=str(path))
    pyjion.config(dump_asm=False)
    assert pyjion.config()["dump_asm"] is None
    f = fresh()
    with jit_on():
        f(5, 2)
    assert pyjion.info(f).compiled
    assert not path.exists()


def test_dump_asm_rejects_non_paths():
    with pytest.raises(TypeError):
        pyjion.config(dump_asm=3)
    assert pyjion.config()["dump_asm"] is None


def test_dump_asm_environment_variable(tmp_path):
    path = tmp_path / "env.txt"
    check_python("""
        import pyjion
        def g(x):
            return x + 1
        pyjion.enable(threshold=0)
        assert g(1) == 2
        pyjion.disable()
        assert pyjion.config()["dump_asm"] == %r
    """ % str(path), env={"PYJION_DUMP_ASM": str(path)})
    text = path.read_text()
    assert "; ==== pyjion: g " in text and "; ---- offset 0: RESUME 0" in text


def test_dump_asm_to_stderr():
    from jitcheck import run_python
    proc = run_python("""
        import pyjion
        def g(x):
            return x * 2
        pyjion.config(dump_asm="-")
        pyjion.enable(threshold=0)
        assert g(4) == 8
    """)
    assert proc.returncode == 0, proc.stderr
    assert "; ==== pyjion: g " in proc.stderr
    assert "; ---- offset 0: RESUME 0" in proc.stderr
    assert "BINARY_OP 5" in proc.stderr


def test_debug_stack_check_runs_everything(dump_to):
    """debug=True adds a frame check at every boundary; the code still behaves
    the same (and the listing shows the check's call)."""
    before = pyjion.config()["debug"]
    pyjion.config(debug=True)
    try:
        f = fresh()
        g = fresh()
        with jit_on():
            got = [f(5, 2), f(3, 1), f(0, 0)]
        pyjion.config(debug=False)
        want = [g(5, 2), g(3, 1), g(0, 0)]
    finally:
        pyjion.config(debug=before)
    assert got == want
    assert pyjion.info(f).compiled
    text = dump_to.read_text()
    checks = len(re.findall(r"pyj_rt_debug_check_frame", text))
    reachable = len(re.findall(r"; ---- offset \d+: \w+ \d+ \(stack depth \d+\) at \+0x[0-9a-f]+$", text, re.M))
    assert checks >= reachable > 0


def test_stats_count_instructions():
    pyjion.reset_stats()
    f = fresh()
    with jit_on():
        f(5, 2)
    stats = pyjion.stats()["jit"]
    n = len(list(dis.get_instructions(f)))
    assert stats["compiled"] >= 1
    assert stats["instructions"] >= n
    assert stats["compile_time_s"] > 0
    pyjion.reset_stats()
    assert pyjion.stats()["jit"]["instructions"] == 0


def test_debug_and_dump_over_the_opcode_families(tmp_path):
    """debug=True and dump_asm together over programs covering the opcode
    families (tests/test_refleak.py's): same outcomes as stock CPython, and a
    listing for each. In a subprocess: a failed depth check aborts."""
    path = tmp_path / "all.asm"
    out = check_python("""
        import sys
        sys.path.insert(0, "tests")
        import pyjion
        from test_refleak import PROGRAMS, run_program
        from jitcheck import jit_off
        pyjion.config(debug=True, dump_asm=sys.argv[1])
        for name, (src, calls) in sorted(PROGRAMS.items()):
            f, got = run_program(src, calls)
            assert pyjion.info(f).compiled, name
            ns = {"__name__": "leakprog"}
            exec(compile(src, "<stock>", "exec"), ns)
            want = []
            with jit_off():
                for args in calls:
                    try:
                        want.append(("ok", ns["f"](*args)))
                    except Exception as exc:
                        want.append(("raise", type(exc)))
            assert got == want, (name, got, want)
        print(len(PROGRAMS))
    """, args=[str(path)], timeout=300)
    assert int(out.strip()) >= 15
    text = path.read_text()
    assert text.count("; ==== pyjion: f ") >= 15
    assert "rt::pyj_rt_debug_check_frame" in text
