"""Compile speed on a fixed corpus, in one process: every code object (nested
ones included) of a set of standard-library modules is compiled with
pyjion._codegen.compile (machine code made and freed, nothing installed), and
the best of --rounds rounds is reported as microseconds per bytecode
instruction and per code object. Complements tools/regrtest.py's figures
(the compile time of everything a test run executes, summed over processes).

    python tools/compile_speed.py [--rounds 3] [module ...]"""
import argparse
import importlib
import sys
import time
import types

DEFAULT_MODULES = ("argparse", "json.decoder", "json.encoder", "email.message", "email.parser", "textwrap",
                   "collections", "functools", "inspect", "typing", "dataclasses", "pathlib", "ast",
                   "tokenize", "difflib", "pprint", "string", "shutil", "tarfile", "zipfile")


def code_objects(modules):
    out, seen = [], set()

    def walk(code):
        if id(code) in seen:
            return
        seen.add(id(code))
        out.append(code)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                walk(const)

    for name in modules:
        mod = importlib.import_module(name)
        source = mod.__spec__.loader.get_source(name) if mod.__spec__ and mod.__spec__.loader else None
        if source is None:
            continue
        walk(compile(source, mod.__file__, "exec"))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", action="store_true",
                        help="keep the machine code alive (as a running program does) instead of freeing each")
    parser.add_argument("modules", nargs="*", default=list(DEFAULT_MODULES))
    args = parser.parse_args(argv)
    from pyjion import _codegen
    codes = code_objects(args.modules)
    best = None
    for _ in range(args.rounds):
        instructions = size = 0
        kept = []
        start = time.perf_counter()
        for code in codes:
            compiled = _codegen.compile(code, max_instructions=0)
            instructions += len(compiled.boundaries)
            size += compiled.size
            if args.keep:
                kept.append(compiled)
            del compiled
        seconds = time.perf_counter() - start
        del kept
        if best is None or seconds < best:
            best = seconds
    print("%d modules, %d code objects, %d bytecode instructions, %d bytes of machine code"
          % (len(args.modules), len(codes), instructions, size))
    print("best of %d: %.3f s: %.2f us per instruction, %.1f us per code object, %.1f bytes per instruction"
          % (args.rounds, best, 1e6 * best / instructions, 1e6 * best / len(codes), size / instructions))
    return 0


if __name__ == "__main__":
    sys.exit(main())
