"""Disassembly of pyjion's machine code, with the bytecode instruction that
each stretch of machine code implements and the names of the C functions it
calls. Uses the capstone disassembler (pip install capstone)."""
import sys

import pyjion


def dis_native(f, file=None):
    """Prints the x86-64 machine code of a compiled function."""
    out = file or sys.stdout
    compiled = pyjion._compiled_code(f)
    try:
        import capstone
    except ImportError as exc:
        raise RuntimeError("dis_native needs the capstone disassembler: pip install capstone") from exc
    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    marks = {}
    for native_offset, bytecode_offset, opcode, oparg in compiled.boundaries:
        marks.setdefault(native_offset, []).append("%d %s %d" % (bytecode_offset, opcode, oparg))
    calls = {offset: name for offset, name in compiled.calls}
    base = compiled.address
    for insn in md.disasm(compiled.code, base):
        offset = insn.address - base
        for mark in marks.get(offset, ()):
            print("; %s" % mark, file=out)
        line = "%8x  %-8s %s" % (offset, insn.mnemonic, insn.op_str)
        end = offset + insn.size
        if end in calls and insn.mnemonic == "call":
            line = "%-48s ; %s" % (line, calls[end])
        print(line, file=out)
