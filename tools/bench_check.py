#!/usr/bin/env python3
"""Compare benchmark ratios with the committed baseline.

    python tools/bench_check.py                 # read bench/results.json (from `make bench`)
    python tools/bench_check.py --run           # run the benchmarks first (RESULTS.md untouched)
    python tools/bench_check.py --tolerance 0.3 # allow 30% instead of 25%
    python tools/bench_check.py --update        # current results become bench/baseline.json

A speed-up ratio (stock/jit) regresses when it falls more than TOLERANCE below the
baseline (current < baseline * (1 - tolerance)); an overhead ratio (mode/stock)
regresses when it rises more than TOLERANCE above it (current > baseline * (1 +
tolerance)). Every program's ratios and the geometric means are compared; a ratio
in the baseline that the results lack (a mode crashed or was not run) and a
differential failure recorded in the results are regressions too.

Exit status: 0 no regression, 1 regression(s), 2 usage error / no results.
"""
import argparse
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(REPO, "bench")
DEFAULT_RESULTS = os.path.join(BENCH, "results.json")
DEFAULT_BASELINE = os.path.join(BENCH, "baseline.json")

# direction of each checked ratio; anything else is shown but not checked
DIRECTIONS = {
    "speedup": "higher",
    "hook_overhead": "lower",
    "profile_overhead": "lower",
    "cprofile_overhead": "lower",
}

PYTEST_ARGS = ["-m", "pytest", "bench", "-q", "-p", "no:cacheprovider", "-p", "no:pyjion",
               "--benchmark-columns=median,min,max,rounds", "--benchmark-sort=name",
               "--benchmark-group-by=group"]


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default=DEFAULT_RESULTS,
                    help="results.json to check (default: bench/results.json)")
    ap.add_argument("--baseline", default=DEFAULT_BASELINE,
                    help="baseline to compare with (default: bench/baseline.json)")
    ap.add_argument("--tolerance", type=float, default=0.25,
                    help="allowed relative change before a ratio counts as regressed (default 0.25)")
    ap.add_argument("--run", action="store_true",
                    help="run the benchmark suite first (writes --results, leaves RESULTS.md alone)")
    ap.add_argument("--rounds", type=int, default=None, help="BENCH_ROUNDS for --run")
    ap.add_argument("--python", default=None,
                    help="interpreter for --run (default: .venv/bin/python if present, else this one)")
    ap.add_argument("--update", action="store_true",
                    help="write the results as the new baseline instead of comparing")
    ap.add_argument("--force", action="store_true",
                    help="with --update: accept incomplete results or results with failures")
    ap.add_argument("--geomean-only", action="store_true",
                    help="compare only the geometric means, not every program")
    ap.add_argument("--stat", choices=("median", "min"), default="median",
                    help="ratios from median times (default) or from the fastest rounds "
                         "(steadier when other work shares the machine)")
    args = ap.parse_args(argv)
    if not 0 <= args.tolerance < 1:
        ap.error("--tolerance must be in [0, 1)")
    return args


def run_benchmarks(args):
    python = args.python
    if python is None:
        venv = os.path.join(REPO, ".venv", "bin", "python")
        python = venv if os.path.exists(venv) else sys.executable
    env = dict(os.environ)
    env.pop("PYJION", None)
    env["BENCH_JSON"] = os.path.abspath(args.results)
    env["BENCH_MD"] = ""
    env.setdefault("BENCH_COMMAND", "make bench-check")
    if args.rounds is not None:
        env["BENCH_ROUNDS"] = str(args.rounds)
    if os.path.exists(args.results):
        os.remove(args.results)       # never check a stale file by accident
    cmd = [python] + PYTEST_ARGS
    print("running: %s" % " ".join(cmd), flush=True)
    return subprocess.call(cmd, cwd=REPO, env=env)


def load(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        print("bench_check: no %s at %s (run `make bench` first, or pass --run)" % (what, path),
              file=sys.stderr)
    except json.JSONDecodeError as exc:
        print("bench_check: %s %s is not valid JSON: %s" % (what, path, exc), file=sys.stderr)
    sys.exit(2)


def compare(name, label, base, cur, tol, lines, regressions):
    direction = DIRECTIONS.get(name)
    if direction is None:
        if cur is not None:
            lines.append("  info  %-34s %7.2fx (baseline %s)" % (
                label, cur, "%.2fx" % base if base is not None else "-"))
        return
    if cur is None:
        msg = "%s: missing from the results (baseline %.2fx); the mode failed or did not run" % (
            label, base)
        lines.append("  FAIL  " + msg)
        regressions.append(msg)
        return
    if direction == "higher":
        limit = base * (1.0 - tol)
        bad = cur < limit
        rule = "min allowed %.2fx" % limit
    else:
        limit = base * (1.0 + tol)
        bad = cur > limit
        rule = "max allowed %.2fx" % limit
    change = (cur / base - 1.0) * 100.0 if base else 0.0
    line = "%-34s %7.2fx  baseline %6.2fx  %+6.1f%%  (%s)" % (label, cur, base, change, rule)
    if bad:
        what = "fell" if direction == "higher" else "rose"
        msg = ("%s %s to %.2fx from baseline %.2fx (%+.1f%%, more than the %.0f%% tolerance)"
               % (label, what, cur, base, change, tol * 100))
        lines.append("  FAIL  " + line)
        regressions.append(msg)
    else:
        lines.append("  ok    " + line)


def check(results, baseline, tol, geomean_only, stat="median"):
    ratios_key = "ratios" if stat == "median" else "ratios_min"
    geomean_key = "geomean" if stat == "median" else "geomean_min"
    lines = []
    regressions = []
    for f in results.get("failures", []):
        msg = "%s / %s failed (%s): %s" % (f["program"], f["mode"], f.get("phase", "call"),
                                          (f.get("message") or "").splitlines()[0][:300])
        lines.append("  FAIL  " + msg)
        regressions.append(msg)

    base_programs = baseline.get("programs", {})
    cur_programs = results.get("programs", {})
    if not geomean_only:
        for program in sorted(base_programs):
            base_ratios = base_programs[program].get(ratios_key, {})
            cur_ratios = cur_programs.get(program, {}).get(ratios_key, {})
            for name in sorted(base_ratios):
                compare(name, "%s %s" % (program, name), base_ratios[name], cur_ratios.get(name),
                        tol, lines, regressions)
        for program in sorted(set(cur_programs) - set(base_programs)):
            lines.append("  new   %s is not in the baseline (not compared)" % program)
    base_geo = baseline.get(geomean_key, {})
    cur_geo = results.get(geomean_key, {})
    for name in sorted(base_geo):
        compare(name, "geomean %s" % name, base_geo[name], cur_geo.get(name), tol, lines,
                regressions)
    return lines, regressions


def describe(report):
    load = report.get("load_average_1min") or {}
    return "%s, Python %s, %s, %s rounds, load %s%s" % (
        report.get("date", "?"), report.get("python", "?"), report.get("cpu", "?"),
        report.get("rounds", "?"), load.get("start", "?"),
        "" if report.get("complete", True) else ", INCOMPLETE")


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    status = 0
    if args.run:
        status = run_benchmarks(args)
        if status != 0:
            print("bench_check: the benchmark run exited with status %d" % status)
    results = load(args.results, "results")

    if args.update:
        problems = []
        if not results.get("complete", False):
            problems.append("not every program x mode ran")
        if results.get("failures"):
            problems.append("%d case(s) failed" % len(results["failures"]))
        if status != 0:
            problems.append("the benchmark run failed")
        if problems and not args.force:
            print("bench_check: refusing to update the baseline: %s (use --force to override)"
                  % "; ".join(problems))
            return 1
        with open(args.baseline, "w") as f:
            json.dump(results, f, indent=2)
            f.write("\n")
        print("bench_check: wrote %s from %s (%s)" % (args.baseline, args.results, describe(results)))
        for name, value in sorted(results.get("geomean", {}).items()):
            print("  geomean %-20s %.2fx" % (name, value))
        return 0

    baseline = load(args.baseline, "baseline")
    print("bench_check: comparing %s" % args.results)
    print("  results:  %s" % describe(results))
    print("  baseline: %s (%s)" % (args.baseline, describe(baseline)))
    print("  tolerance: %.0f%% (speed-ups may fall, overheads may rise, by at most this much);"
          " ratios of %s times" % (args.tolerance * 100, args.stat))
    for key in ("python", "cpu"):
        if results.get(key) != baseline.get(key):
            print("  warning: %s differs from the baseline's (%r vs %r); ratios may not be comparable"
                  % (key, results.get(key), baseline.get(key)))
    lines, regressions = check(results, baseline, args.tolerance, args.geomean_only, args.stat)
    for line in lines:
        print(line)
    compared = sum(1 for line in lines if line.startswith(("  ok", "  FAIL")))
    if regressions:
        print("bench_check: %d regression(s) in %d comparisons:" % (len(regressions), compared))
        for msg in regressions:
            print("  - " + msg)
        return 1
    if status != 0:
        return 1
    print("bench_check: no regression in %d comparisons" % compared)
    return 0


if __name__ == "__main__":
    sys.exit(main())
