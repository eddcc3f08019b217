"""Steady speed figures: instructions executed per benchmark round, counted by
valgrind's callgrind, stock CPython versus the JIT.

Wall-clock ratios on a shared 2-core machine drift; instruction counts do
not. Each program runs in a fresh interpreter once with 1 + W rounds and once
with 1 + W + N rounds of its run(); the difference divided by N is the cost of
one warm round, free of start-up, import and compile costs.

    python tools/count_instructions.py                    # every program
    python tools/count_instructions.py fib nbody -n 2     # a subset
    python tools/count_instructions.py --json out.json
    python tools/count_instructions.py --mode default -w 4   # PYJION=1's settings

Modes: `eager` (threshold 0: everything compiled at its first call, before
the interpreter has profiled it) and `default` (pyjion.enable()'s settings,
as PYJION=1 gives them: compiled when warm, with the interpreter's site
profiles; give it warm-up rounds, -w, so that what a round runs is compiled),
and `profile` (pyjion.enable(profile=True): the default settings with
pyjion's profiler on, code compiled while profiling). `--against` picks the
other side of the ratio (stock by default):

    python tools/count_instructions.py --mode profile --against default --cycles -w 1 \
        richards deltablue raytrace chaos generators nqueens fib spectral_norm

is the profiler's overhead (bench/PROFILE_OVERHEAD.md). `--cycles` counts
callgrind's estimated cycles (--cache-sim=yes: Ir + 10 x L1 misses + 100 x
last-level misses) instead of instructions.

Fewer instructions is not always less time (cache misses, branch prediction),
so bench/ stays the judge; this is for comparing one change with the next."""
import argparse
import concurrent.futures
import glob
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

import callgrind_events

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS = os.path.join(REPO, "bench", "programs")

RUNNER = r"""
import importlib.util, sys
path, mode, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
spec = importlib.util.spec_from_file_location("prog", path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
import pyjion
if mode == "eager":
    pyjion.enable(threshold=0)
elif mode == "default":
    pyjion.enable()
elif mode == "profile":
    pyjion.enable(profile=True)
for _ in range(rounds):
    module.run()
pyjion.disable()
"""


def count(program, mode, rounds, cycles=False):
    """Instructions (or estimated cycles) of a whole interpreter run of
    `program` with `rounds` rounds."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYJION")}
        # --fair-sched: valgrind runs one thread at a time and would starve
        # the sampler's thread, so code compiled by samples would stay
        # interpreted under callgrind only.
        cmd = ["valgrind", "--tool=callgrind", "--fair-sched=yes", "--callgrind-out-file=" + out]
        if cycles:
            cmd.append("--cache-sim=yes")
        proc = subprocess.run(
            cmd + [sys.executable, "-c", RUNNER, os.path.join(PROGRAMS, program + ".py"), mode, str(rounds)],
            capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise RuntimeError("%s %s failed:\n%s" % (program, mode, proc.stderr[-2000:]))
        if cycles:
            return callgrind_events.estimated_cycles(callgrind_events.totals(out))
        found = re.search(r"Collected : (\d+)", proc.stderr)
        if not found:
            raise RuntimeError("no instruction count from callgrind for %s %s" % (program, mode))
        return int(found.group(1))


def per_round(program, mode, rounds, warmup, cycles=False):
    return (count(program, mode, 1 + warmup + rounds, cycles) - count(program, mode, 1 + warmup, cycles)) / rounds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("programs", nargs="*", help="bench/programs names (default: all)")
    ap.add_argument("-n", "--rounds", type=int, default=2, help="extra rounds measured (default 2)")
    ap.add_argument("-w", "--warmup", type=int, default=0, help="rounds before the measured ones (default 0)")
    ap.add_argument("--mode", choices=("eager", "default", "profile"), default="eager",
                    help="the JIT's settings (default: eager, threshold 0)")
    ap.add_argument("--against", choices=("stock", "eager", "default"), default="stock",
                    help="what the ratio is taken against (default: stock CPython)")
    ap.add_argument("--cycles", action="store_true",
                    help="estimated cycles (cache simulation) instead of instructions")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (apt-get install valgrind)")
    programs = args.programs or sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(PROGRAMS, "*.py")))
    jobs = {}
    base = args.against
    unit = "cyc" if args.cycles else "Ir"
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for p in programs:
            for mode in (base, args.mode):
                jobs[p, mode] = pool.submit(per_round, p, mode, args.rounds, args.warmup, args.cycles)
    rows = {}
    print("%-16s %14s %14s %8s" % ("program", "%s %s/round" % (base, unit), "%s %s/round" % (args.mode, unit),
                                   "%s/%s" % (base, args.mode)))
    for p in programs:
        b, m = jobs[p, base].result(), jobs[p, args.mode].result()
        if b <= 0 or m <= 0:
            # The longer run counted fewer instructions than the shorter: work
            # outside the measured rounds (a compile the sampler timed
            # differently) differed between them. No figure; more -n or -w.
            print("%-16s %14.0f %14.0f  unsteady (more rounds: -n, -w)" % (p, b, m))
            continue
        rows[p] = {base: b, args.mode: m, "ratio": b / m}
        print("%-16s %14.0f %14.0f %7.3fx   (%s/%s %.3fx)" % (p, b, m, b / m, args.mode, base, m / b))
    if not rows:
        sys.exit("no steady figures")
    geomean = math.exp(sum(math.log(r["ratio"]) for r in rows.values()) / len(rows))
    print("%-16s %14s %14s %7.3fx   (%s/%s %.3fx)" % ("geomean", "", "", geomean, args.mode, base, 1 / geomean))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"programs": rows, "geomean": geomean, "rounds": args.rounds, "warmup": args.warmup,
                       "mode": args.mode, "against": base, "unit": unit}, f, indent=1)


if __name__ == "__main__":
    main()
