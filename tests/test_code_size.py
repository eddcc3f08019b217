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
