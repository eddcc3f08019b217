"""pyjion demo: runs a small bundled program with CPython's interpreter, then
with the JIT, prints the speed-up and which functions were compiled, then
profiles it with pyjion's call-level profiler and prints the top of the
profile as `python -m cProfile` would."""
import os
import statistics
import sys
import time
import types

import pyjion
import pyjion.profile

PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "program.py")


def fresh_program():
    """A new copy of the program (new code objects, nothing compiled yet)."""
    module = types.ModuleType("demo_program")
    module.__file__ = PROGRAM
    with open(PROGRAM) as f:
        exec(compile(f.read(), PROGRAM, "exec"), module.__dict__)
    return module


def timed_pair(stock_run, jit_run, rounds=7):
    """Median times of the two, measured in alternating rounds so that other
    load on the machine affects both alike."""
    stock_times, jit_times = [], []
    stock_result = jit_result = None
    for _ in range(rounds):
        start = time.perf_counter()
        stock_result = stock_run()
        stock_times.append(time.perf_counter() - start)
        pyjion.enable(threshold=0)
        try:
            start = time.perf_counter()
            jit_result = jit_run()
            jit_times.append(time.perf_counter() - start)
        finally:
            pyjion.disable()
    return statistics.median(stock_times), stock_result, statistics.median(jit_times), jit_result


def main():
    program = fresh_program()
    stock_time, stock_result, jit_time, jit_result = timed_pair(fresh_program().main, program.main)
    if jit_result != stock_result:
        sys.exit("demo: the JIT gave %r where CPython gave %r" % (jit_result, stock_result))

    print("pyjion %s on Python %s" % (pyjion.__version__, sys.version.split()[0]))
    print("result %r (identical with and without the JIT)" % (jit_result,))
    print("CPython interpreter: %8.1f ms (median of 7, alternating rounds)" % (stock_time * 1e3))
    print("pyjion JIT:          %8.1f ms (median of 7, alternating rounds)" % (jit_time * 1e3))
    print("speed-up:            %8.2fx" % (stock_time / jit_time))
    print()
    print("functions of the program and what the JIT did with them:")
    for name, f in sorted(vars(program).items()):
        if isinstance(f, types.FunctionType):
            info = pyjion.info(f)
            detail = "%d bytes of machine code" % info.code_size if info.compiled else (info.reason or info.state)
            print("  %-16s %-11s %s" % (name, info.state, detail))
    print()

    program = fresh_program()
    pyjion.reset_stats()
    pyjion.enable(threshold=0, profile=True)
    try:
        program.main()
    finally:
        pyjion.disable()
    print("profile (pyjion.enable(profile=True), no sys.setprofile):")
    pyjion.profile.print_stats(sort="tottime", limit=8)


if __name__ == "__main__":
    main()
