"""Run by tests/test_front_layer.py under the CPython the front_decode probe
was built for: every code object of a corpus of standard-library modules is
decoded by pyjion's front layer and compared with that CPython's dis:
instruction offsets, names, operands and jump targets; the stack depths must
have been computed without a fault (within co_stacksize). Prints one summary
line, or the first difference."""
import dis
import importlib.util
import sys
import types

import front_decode

CORPUS = ["json.decoder", "ast", "difflib", "asyncio.tasks", "dataclasses", "typing", "enum", "argparse",
          "textwrap", "statistics", "contextlib", "functools", "collections", "tokenize", "inspect"]


def code_objects(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from code_objects(const)


def expected(code):
    rows = []
    for ins in dis.get_instructions(code):
        if ins.opname in ("EXTENDED_ARG", "CACHE"):
            continue
        target = -1
        if ins.opcode in getattr(dis, "hasjump", dis.hasjrel):
            target = getattr(ins, "jump_target", None)
            if target is None:      # 3.11: argval is the target offset
                target = ins.argval
        rows.append((ins.offset, ins.opname, ins.arg or 0, target))
    return rows


def main():
    codes = instrs = 0
    for name in CORPUS:
        path = importlib.util.find_spec(name).origin
        with open(path, encoding="utf-8") as f:
            top = compile(f.read(), path, "exec")
        for code in code_objects(top):
            max_depth, rows = front_decode.decode(code)
            got = [row[:4] for row in rows]
            want = expected(code)
            if got != want:
                for g, w in zip(got, want):
                    if g != w:
                        print("DIFF in %s %s: pyjion %r, dis %r" % (name, code.co_qualname, g, w))
                        return 1
                print("DIFF in %s %s: %d instructions, dis %d" % (name, code.co_qualname, len(got), len(want)))
                return 1
            if max_depth > code.co_stacksize or all(row[4] < 0 for row in rows):
                print("DEPTH in %s %s: %d of %d" % (name, code.co_qualname, max_depth, code.co_stacksize))
                return 1
            codes += 1
            instrs += len(rows)
    print("%d.%d: %d code objects, %d instructions as dis has them" % (*sys.version_info[:2], codes, instrs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
