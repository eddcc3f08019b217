"""What one turn of each of bench/patterns.py's loops costs in machine code
against stock CPython's interpreter, in callgrind's estimated cycles (Ir +
10 x L1 misses + 100 x last-level misses): each pattern runs under callgrind
with N turns and with none, stock and with PYJION=1, and the difference
divided by N is one turn's cost. Counts do not depend on the machine's load.

    python tools/pattern_cycles.py [--turns 20000] [--jobs 2] [NAME ...]

Prints one row per pattern: stock cycles, JIT cycles, stock/JIT (above 1:
the machine code wins). Needs valgrind and CPython 3.13 (warm-up by samples,
which the patterns use to compile one function by one forced sample)."""
import argparse
import concurrent.futures
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATTERNS = os.path.join(REPO, "bench", "patterns.py")
EVENTS = ("Ir", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw")


def cycles(out_file):
    """Estimated cycles from a callgrind output file's summary line."""
    names, values = None, None
    with open(out_file) as f:
        for line in f:
            if line.startswith("events:"):
                names = line.split()[1:]
            elif line.startswith("summary:"):
                values = [int(v) for v in line.split()[1:]]
    got = dict(zip(names, values))
    return (got["Ir"] + 10 * (got["I1mr"] + got["D1mr"] + got["D1mw"])
            + 100 * (got["ILmr"] + got["DLmr"] + got["DLmw"]))


def run(mode, name, turns, workdir):
    out = os.path.join(workdir, "%s.%s.%d" % (name, mode, turns))
    env = dict(os.environ)
    env.pop("PYJION", None)
    if mode == "jit":
        env["PYJION"] = "1"
    cmd = ["valgrind", "--tool=callgrind", "--cache-sim=yes", "--callgrind-out-file=" + out,
           sys.executable, PATTERNS, mode, name, str(turns)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError("%s %s failed:\n%s" % (mode, name, proc.stderr[-2000:]))
    return cycles(out)


def main():
    sys.path.insert(0, os.path.dirname(PATTERNS))
    import patterns
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="patterns (default: all)")
    ap.add_argument("--turns", type=int, default=20000)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    names = args.names or patterns.PATTERNS
    with tempfile.TemporaryDirectory(prefix="pattern-cycles-") as workdir, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        jobs = {(name, mode, turns): pool.submit(run, mode, name, turns, workdir)
                for name in names for mode in ("stock", "jit") for turns in (0, args.turns)}
        print("%-26s %10s %10s %8s" % ("pattern", "stock", "jit", "ratio"))
        ratios = []
        for name in names:
            per = {}
            for mode in ("stock", "jit"):
                per[mode] = (jobs[(name, mode, args.turns)].result() - jobs[(name, mode, 0)].result()) / args.turns
            ratio = per["stock"] / per["jit"] if per["jit"] > 0 else float("nan")
            ratios.append(ratio)
            print("%-26s %10.0f %10.0f %7.2fx" % (name, per["stock"], per["jit"], ratio), flush=True)
        good = [r for r in ratios if r == r and r > 0]
        if good:
            geo = 1.0
            for r in good:
                geo *= r
            print("%-26s %10s %10s %7.2fx" % ("geomean", "", "", geo ** (1 / len(good))))


if __name__ == "__main__":
    main()
