"""What the JIT's machine code is made of, per bytecode opcode, for one program.

    python tools/code_size.py [--top K] [python -m pyjion's options] (script.py | -m module) [args ...]

Runs the program in this process as `python -m pyjion` runs it (default
settings unless --threshold is given) and, when it ends, prints for each opcode the
instructions compiled, the bytes of machine code in function bodies (hot) and
out-of-line stubs (cold), and bytes per instruction, biggest first, from
pyjion._codegen.code_size_by_opcode(). docs/code-size.md reads its output."""
import atexit
import sys

import pyjion._codegen
import pyjion.__main__


def report(top, out=sys.stderr):
    table = pyjion._codegen.code_size_by_opcode()
    total = sum(h + c for _, h, c in table.values())
    instrs = sum(n for n, _, _ in table.values())
    if total == 0:
        print("code_size: nothing was compiled", file=out)
        return
    hot_total = sum(h for _, h, _ in table.values())
    print(f"code_size: {instrs} instructions compiled, {total} bytes of machine code, "
          f"{total / max(instrs, 1):.1f} bytes per instruction "
          f"({hot_total / max(instrs, 1):.1f} in function bodies, the part that runs)", file=out)
    print(f"{'opcode':28} {'instrs':>8} {'hot B':>10} {'cold B':>10} {'B/instr':>8} {'share':>6}", file=out)
    rows = sorted(table.items(), key=lambda kv: -(kv[1][1] + kv[1][2]))
    for name, (n, hot, cold) in rows[:top]:
        per = f"{(hot + cold) / n:8.1f}" if n else f"{'-':>8}"
        print(f"{name:28} {n:8} {hot:10} {cold:10} {per} {100 * (hot + cold) / total:5.1f}%", file=out)


def main(argv):
    top = 25
    if argv[:1] == ["--top"]:
        if len(argv) < 2:
            sys.exit("code_size: --top needs a value")
        top = int(argv[1])
        argv = argv[2:]
    atexit.register(report, top)   # before the program's own handlers, so it runs after them
    pyjion.__main__.main(argv)


if __name__ == "__main__":
    main(sys.argv[1:])
