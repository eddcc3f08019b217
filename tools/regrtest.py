"""Runs CPython's regression suite module by module, stock and with pyjion
forced on every function (PYJION=1, threshold 0, in every test process via the
start-up .pth), and compares the outcome per module.

    python tools/regrtest.py --smoke            # the smoke selection (make test runs it)
    python tools/regrtest.py --all -j 2 --markdown docs/regrtest-3.11.md

Outcomes: passed, failed, crashed (killed by a signal), timeout, skipped."""
import argparse
import collections
import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

# About 40 modules over the language: grammar, exceptions, generators,
# coroutines, closures, classes, pattern matching, f-strings, numbers,
# unpacking, containers, itertools/functools, traceback, frames, tracing, gc,
# weakref, threading, signals.
SMOKE = """test_grammar test_exceptions test_exception_group test_except_star test_raise test_generators
test_coroutines test_asyncgen test_contextlib test_with test_scope test_class test_descr test_patma
test_fstring test_string_literals test_int test_float test_long test_math test_complex test_unpack
test_unpack_ex test_list test_dict test_set test_tuple test_itertools test_functools test_traceback
test_sys test_inspect test_frame test_sys_settrace test_bdb test_gc test_weakref test_threading
test_signal test_keywordonlyarg test_positional_only_arg test_augassign test_bool test_richcmp
test_iter test_range test_opcodes test_dictcomps test_setcomps test_listcomps test_genexps""".split()


def all_modules():
    out = subprocess.run([sys.executable, "-m", "test", "--list-tests"], capture_output=True, text=True)
    # 3.13 lists the modules of split packages (test_asyncio, test_concurrent_futures,
    # test_multiprocessing_*, ...) as test.test_pkg.test_x; -m test runs them by that name.
    return [line.strip() for line in out.stdout.splitlines() if line.strip().startswith(("test_", "test."))]


def default_sigint():
    # Started from a background job (CI), children would inherit SIGINT
    # ignored and the suite's Ctrl-C tests could not work; use the default.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_one(module, jit, timeout):
    env = dict(os.environ)
    for name in ("PYJION", "PYJION_THRESHOLD", "PYJION_PROFILE", "PYJION_STATS_FILE"):
        env.pop(name, None)
    stats_path = None
    if jit:
        fd, stats_path = tempfile.mkstemp(prefix="pyjion-stats-")
        os.close(fd)
        env.update(PYJION="1", PYJION_THRESHOLD="0", PYJION_STATS_FILE=stats_path)
    start = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-m", "test", "--timeout", str(timeout), module],
                              env=env, capture_output=True, text=True, timeout=timeout + 60,
                              preexec_fn=default_sigint)
        code, output = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        code, output = None, (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) else ""
    elapsed = time.monotonic() - start
    if code is None:
        outcome = "timeout"
    elif code < 0:
        outcome = "crashed"
    elif code == 0:
        outcome = "skipped" if " skipped" in output.split("== Tests result")[-1].lower() and "1 test OK" not in output else "passed"
    else:
        outcome = "crashed" if ("Fatal Python error" in output or "Segmentation fault" in output) else "failed"
    compiled = failed = instructions = code_bytes = 0
    compile_s = 0.0
    if stats_path:
        with open(stats_path) as f:
            for line in f:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                compiled += record["compiled"]
                failed += record["failed"]
                compile_s += record.get("compile_time_s", 0.0)
                instructions += record.get("instructions", 0)
                code_bytes += record.get("code_bytes", 0)
        os.unlink(stats_path)
    return {"module": module, "outcome": outcome, "seconds": round(elapsed, 1), "compiled": compiled,
            "fell_back": failed, "compile_s": round(compile_s, 4), "instructions": instructions,
            "code_bytes": code_bytes, "tail": output[-3000:]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--smoke", action="store_true", help="the smoke selection (default)")
    group.add_argument("--all", action="store_true", help="every module of the suite")
    parser.add_argument("modules", nargs="*", help="explicit modules")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=600, help="seconds per module")
    parser.add_argument("--jit-only", action="store_true", help="skip the stock runs (check: all must pass)")
    parser.add_argument("--markdown", help="write the comparison table to this file")
    parser.add_argument("--json", help="write the raw results to this file")
    args = parser.parse_args()
    modules = args.modules or (all_modules() if args.all else SMOKE)

    jobs = [(m, True) for m in modules] + ([] if args.jit_only else [(m, False) for m in modules])
    results = collections.defaultdict(dict)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(run_one, m, jit, args.timeout): (m, jit) for m, jit in jobs}
        for future in concurrent.futures.as_completed(futures):
            m, jit = futures[future]
            r = future.result()
            results[m]["jit" if jit else "stock"] = r
            print("%-32s %-6s %-8s %6.1fs" % (m, "pyjion" if jit else "stock", r["outcome"], r["seconds"]), flush=True)

    differ = []
    for m in modules:
        jit = results[m]["jit"]["outcome"]
        stock = results[m].get("stock", {"outcome": "passed"})["outcome"]
        if jit != stock:
            differ.append(m)
    compiled = sum(results[m]["jit"]["compiled"] for m in modules)
    fell_back = sum(results[m]["jit"]["fell_back"] for m in modules)
    speed = compile_speed(results, modules)
    print("\n%d modules; %d differ from stock: %s" % (len(modules), len(differ), " ".join(differ) or "none"))
    print("code objects compiled %d, fell back %d" % (compiled, fell_back))
    print(speed["text"])
    for m in differ:
        print("\n==== %s (pyjion: %s) ====\n%s" % (m, results[m]["jit"]["outcome"], results[m]["jit"]["tail"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"modules": results, "compile_speed": {k: v for k, v in speed.items() if k != "text"}},
                      f, indent=1)
    if args.markdown:
        write_markdown(args.markdown, modules, results, differ, compiled, fell_back, " ".join(sys.argv[1:]),
                       speed["text"])
    return 1 if differ else 0


def compile_speed(results, modules):
    """Totals over every test process of the JIT runs: how long compiling took
    (the hook's clock around each compile), per code object and per bytecode
    instruction, and how much machine code it made."""
    runs = [results[m]["jit"] for m in modules]
    compiled = sum(r["compiled"] for r in runs)
    seconds = sum(r.get("compile_s", 0.0) for r in runs)
    instructions = sum(r.get("instructions", 0) for r in runs)
    code_bytes = sum(r.get("code_bytes", 0) for r in runs)
    speed = {"code_objects": compiled, "compile_s": round(seconds, 3), "instructions": instructions,
             "code_bytes": code_bytes,
             "us_per_instruction": round(1e6 * seconds / instructions, 2) if instructions else None,
             "us_per_code_object": round(1e6 * seconds / compiled, 1) if compiled else None,
             "bytes_per_instruction": round(code_bytes / instructions, 1) if instructions else None}
    speed["text"] = ("compile time %.2f s for %d code objects, %d bytecode instructions: %s us per instruction, "
                     "%s us per code object; %.1f MB of machine code (%s bytes per instruction)"
                     % (seconds, compiled, instructions, speed["us_per_instruction"], speed["us_per_code_object"],
                        code_bytes / 1e6, speed["bytes_per_instruction"]))
    return speed


def write_markdown(path, modules, results, differ, compiled, fell_back, argv, speed=None):
    lines = ["# CPython %s regression suite: stock vs pyjion (JIT forced, threshold 0)" % sys.version.split()[0], "",
             "Made by `python tools/regrtest.py %s` on %s." % (argv, time.strftime("%Y-%m-%d")), "",
             "Modules: %d; outcome differs from stock: %d (%s)." % (len(modules), len(differ), ", ".join(differ) or "none"),
             "Code objects compiled: %d; left to the interpreter: %d." % (compiled, fell_back),
             *(["Compile speed (JIT runs, all test processes): %s." % speed] if speed else []), "",
             "| module | stock | pyjion | stock s | pyjion s | compiled | fell back |", "|---|---|---|---|---|---|---|"]
    for m in modules:
        j, s = results[m]["jit"], results[m].get("stock", {"outcome": "-", "seconds": 0})
        lines.append("| %s | %s | %s | %s | %s | %d | %d |" % (m, s["outcome"], j["outcome"], s["seconds"], j["seconds"],
                                                            j["compiled"], j["fell_back"]))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
