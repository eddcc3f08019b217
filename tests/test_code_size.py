"""pyjion._codegen.code_size_by_opcode(): machine code charged to the opcodes that made it."""
import pyjion
import pyjion._codegen as codegen


def total(table):
    return sum(hot + cold for _, hot, cold in table.values())


def test_a_compile_is_charged_to_its_opcodes():
    ns = {}
    exec("def f(a, b):\n    return a * b + a - b\n", ns)
    f = ns["f"]
    pyjion.enable(threshold=0)   # what switching on compiles is not f's
    pyjion.disable()
    before = codegen.code_size_by_opcode()
    pyjion.enable(threshold=0)
    try:
        assert f(3, 2) == 7
    finally:
        pyjion.disable()
    after = codegen.code_size_by_opcode()
    info = pyjion.info(f)
    assert info.compiled
    grown = total(after) - total(before)
    # Every byte is charged somewhere; only alignment at the end may be left over.
    assert info.code_size - 16 <= grown <= info.code_size
    ops = after["BINARY_OP"]
    old = before.get("BINARY_OP", (0, 0, 0))
    assert ops[0] - old[0] == 3
    assert ops[1] - old[1] > 0
    assert after["(frame)"][1] > before.get("(frame)", (0, 0, 0))[1]


def test_code_size_tool_reports_a_programs_opcodes(tmp_path):
    import os
    import subprocess
    import sys
    script = tmp_path / "prog.py"
    script.write_text("def f(a, b):\n    return a * b - a\n\nprint(sum(f(i, 3) for i in range(50)))\n")
    tool = os.path.join(os.path.dirname(__file__), os.pardir, "tools", "code_size.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYJION")}
    out = subprocess.run([sys.executable, tool, "--top", "40", "--threshold", "0", str(script)],
                         env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "2450\n"              # the program's own output is untouched
    rows = {line.split()[0]: line.split() for line in out.stderr.splitlines()[2:]}
    assert int(rows["BINARY_OP"][1]) >= 2      # f's two operators, at least
    assert "bytes per instruction" in out.stderr.splitlines()[0]
