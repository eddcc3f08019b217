#!/usr/bin/env python3
"""The macro suite: library-heavy programs (bench/macro/*.py, each a real use
of a real package or standard-library module), stock CPython versus pyjion
with the settings a user gets from PYJION=1.

    python bench/macro_suite.py whole  [--pairs 9]        # start-up + one run + exit
    python bench/macro_suite.py steady [--pairs 5]        # run() after 3 warm-up runs, in-process
    python bench/macro_suite.py cycles [--jobs 2]         # callgrind cache simulation of both
    python bench/macro_suite.py all                       # the three, then bench/MACRO.md
    ... --programs sympy_calculus,json_indent --jit-env PYJION_THRESHOLD=0 --no-write

Every program's packages are pinned in bench/macro/requirements.txt and
installed by tools/macro_packages.py into build/macro/site, which the runs see
through PYTHONPATH. Every run has PYTHONHASHSEED=0, so stock and JIT runs
iterate sets of strings alike, and every run's output (whole: what the
program prints on stdout and stderr; steady: the repr of each run()'s result,
and stderr) must equal the stock run's: a difference is reported and makes
the exit status 1.

Figures are ratios stock/JIT (higher is better), per pair of runs made one
after the other (their order alternates), and the median over the pairs:

- whole: CPU time (user+sys) of `python bench/macro/<name>.py`, a fresh
  process that imports the program's packages, calls run() once and exits
  (tools/whole_program.py measures it), plus peak RSS;
- steady: bench/macro/_steady.py loads the program, calls run() 3 times
  (--warmup), then --runs more times; a process's figure is the median CPU
  time of those runs;
- cycles: callgrind with its cache simulation, once per side (counts do not
  depend on the machine's load). Estimated cycles = Ir + 10 x (L1 misses) +
  100 x (last-level misses), instruction and data alike; for the whole
  process, and for one steady-state run (after the warm-up runs; callgrind
  collects only inside the measured call). The JIT's sampler ticks by wall
  clock, so under callgrind's slowdown it finds more code hot than at full
  speed: these counts show what the machine code costs where it runs, the
  time ratios what a user gets.

Results go to bench/MACRO.json (each mode's latest run, per JIT environment)
and the table in bench/MACRO.md is generated from it.
"""
import argparse
import concurrent.futures
import datetime
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
MACRO = os.path.join(HERE, "macro")
STEADY = os.path.join(MACRO, "_steady.py")
JSON_PATH = os.path.join(HERE, "MACRO.json")
MD_PATH = os.path.join(HERE, "MACRO.md")
sys.path.insert(0, os.path.join(REPO, "tools"))

import macro_packages  # noqa: E402
import whole_program  # noqa: E402

# callgrind's cache-simulation events and the weights of the cycle estimate.
EVENTS = ("Ir", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw")


def all_programs():
    return sorted(n[:-3] for n in os.listdir(MACRO) if n.endswith(".py") and not n.startswith("_"))


def program_path(name):
    return os.path.join(MACRO, name + ".py")


def envs(extra_jit_env):
    base = dict(os.environ, PYTHONPATH=macro_packages.SITE, PYTHONHASHSEED="0")
    base.pop("PYTHONDONTWRITEBYTECODE", None)
    return {"stock": whole_program.stock_env(base), "jit": whole_program.jit_env(extra_jit_env, base)}


def median_ratio(pairs):
    values = [s / j for s, j in pairs if s > 0 and j > 0]
    return statistics.median(values) if values else None


def geomean(values):
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


class Mismatch(list):
    def add(self, program, mode, what):
        self.append("%s (%s): %s" % (program, mode, what))
        print("OUTPUT DIFFERS: %s (%s): %s" % (program, mode, what), file=sys.stderr, flush=True)


# ---- whole process -----------------------------------------------------------

def run_whole(name, env, timeout):
    with tempfile.TemporaryFile("w+") as out:
        result = whole_program.measure([sys.executable, program_path(name)], env, cwd=MACRO,
                                       timeout=timeout, stdout=out, stderr=subprocess.STDOUT)
        out.seek(0)
        result["output"] = out.read()
    return result


def measure_whole(programs, pairs, extra_jit_env, mismatches, timeout=600):
    env = envs(extra_jit_env)
    runs = {p: {"stock": [], "jit": []} for p in programs}
    for rnd in range(pairs):
        for p in programs:
            order = ("stock", "jit") if rnd % 2 == 0 else ("jit", "stock")
            pair = {}
            for mode in order:
                pair[mode] = run_whole(p, env[mode], timeout)
                if pair[mode]["returncode"] != 0:
                    mismatches.add(p, "whole " + mode, "exit %s: %s" % (pair[mode]["returncode"],
                                                                       pair[mode]["output"][-500:]))
            if pair["jit"]["output"] != pair["stock"]["output"]:
                mismatches.add(p, "whole", "stdout differs")
            for mode in order:
                runs[p][mode].append({k: pair[mode][k] for k in ("cpu_s", "wall_s", "peak_rss_mb")})
            print("whole  round %d  %-22s stock %6.3fs  jit %6.3fs  %.3fx" % (
                rnd, p, pair["stock"]["cpu_s"], pair["jit"]["cpu_s"],
                pair["stock"]["cpu_s"] / max(pair["jit"]["cpu_s"], 1e-9)), file=sys.stderr, flush=True)
    table = {}
    for p in programs:
        s, j = runs[p]["stock"], runs[p]["jit"]
        table[p] = {"pairs": len(s),
                    "stock_cpu_s": statistics.median(r["cpu_s"] for r in s),
                    "jit_cpu_s": statistics.median(r["cpu_s"] for r in j),
                    "cpu_ratio": median_ratio([(a["cpu_s"], b["cpu_s"]) for a, b in zip(s, j)]),
                    "cpu_ratios": [round(a["cpu_s"] / b["cpu_s"], 4) for a, b in zip(s, j)],
                    "rss_ratio": median_ratio([(b["peak_rss_mb"], a["peak_rss_mb"]) for a, b in zip(s, j)]),
                    "stock_rss_mb": statistics.median(r["peak_rss_mb"] for r in s)}
    return table


# ---- steady state ------------------------------------------------------------

def run_steady(name, env, warmup, runs, timeout):
    proc = subprocess.run([sys.executable, STEADY, program_path(name), str(warmup), str(runs)],
                          env=env, cwd=MACRO, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        return None, proc.stderr[-1000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["stderr"] = proc.stderr
    return result, None


def measure_steady(programs, pairs, warmup, runs, extra_jit_env, mismatches, timeout=1200):
    env = envs(extra_jit_env)
    per = {p: [] for p in programs}
    for rnd in range(pairs):
        for p in programs:
            order = ("stock", "jit") if rnd % 2 == 0 else ("jit", "stock")
            got = {}
            for mode in order:
                got[mode], err = run_steady(p, env[mode], warmup, runs, timeout)
                if err is not None:
                    mismatches.add(p, "steady " + mode, err)
            if got["stock"] is None or got["jit"] is None:
                continue
            if got["stock"]["results"] != got["jit"]["results"]:
                mismatches.add(p, "steady", "run() results differ")
            if got["stock"]["stderr"] != got["jit"]["stderr"]:
                mismatches.add(p, "steady", "stderr differs: %r" % got["jit"]["stderr"][-300:])
            s, j = statistics.median(got["stock"]["times"]), statistics.median(got["jit"]["times"])
            per[p].append((s, j))
            print("steady round %d  %-22s stock %7.4fs  jit %7.4fs  %.3fx" % (rnd, p, s, j, s / max(j, 1e-9)),
                  file=sys.stderr, flush=True)
    return {p: {"pairs": len(v), "stock_run_s": statistics.median(s for s, _ in v) if v else None,
                "jit_run_s": statistics.median(j for _, j in v) if v else None,
                "run_ratio": median_ratio(v), "run_ratios": [round(s / j, 4) for s, j in v]}
            for p, v in per.items()}


# ---- callgrind ---------------------------------------------------------------

def callgrind_counts(cmd, env, toggle=None):
    """{event: count} of one run under callgrind's cache simulation."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        vg = ["valgrind", "--tool=callgrind", "--cache-sim=yes", "--callgrind-out-file=" + out]
        if toggle:
            vg += ["--collect-atstart=no", "--toggle-collect=" + toggle]
        proc = subprocess.run(vg + cmd, env=env, cwd=MACRO, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError("callgrind run failed: %s\n%s" % (" ".join(cmd), proc.stderr[-2000:]))
        events = totals = None
        with open(out) as f:
            for line in f:
                if line.startswith("events:"):
                    events = line.split()[1:]
                elif line.startswith(("summary:", "totals:")):
                    totals = [int(v) for v in line.split()[1:]]
        counts = dict(zip(events, totals))
        return {e: counts.get(e, 0) for e in EVENTS}, proc.stdout


def cycles(counts):
    return (counts["Ir"] + 10 * (counts["I1mr"] + counts["D1mr"] + counts["D1mw"])
            + 100 * (counts["ILmr"] + counts["DLmr"] + counts["DLmw"]))


def measure_cycles(programs, warmup, extra_jit_env, mismatches, jobs):
    env = envs(extra_jit_env)
    tasks = {}
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for p in programs:
            for mode in ("stock", "jit"):
                tasks[p, mode, "whole"] = pool.submit(
                    callgrind_counts, [sys.executable, program_path(p)], env[mode])
                tasks[p, mode, "steady"] = pool.submit(
                    callgrind_counts, [sys.executable, STEADY, program_path(p), str(warmup), "1", "--callgrind"],
                    env[mode], "_PyEval_CallTracing")
    table = {}
    for p in programs:
        row = {}
        for kind in ("whole", "steady"):
            (s, s_out), (j, j_out) = tasks[p, "stock", kind].result(), tasks[p, "jit", kind].result()
            if kind == "whole" and s_out != j_out:
                mismatches.add(p, "cycles whole", "stdout differs")
            if kind == "steady" and json.loads(s_out.splitlines()[-1])["results"] != \
                    json.loads(j_out.splitlines()[-1])["results"]:
                mismatches.add(p, "cycles steady", "run() results differ")
            row[kind] = {"stock": s, "jit": j, "cycles_ratio": cycles(s) / cycles(j),
                         "ir_ratio": s["Ir"] / j["Ir"],
                         "i1_miss_ratio": j["I1mr"] / s["I1mr"] if s["I1mr"] else None}
            print("cycles %-6s %-22s stock %6.3f G  jit %6.3f G  %.3fx (Ir %.3fx, L1i misses jit/stock %.2f)"
                  % (kind, p, cycles(s) / 1e9, cycles(j) / 1e9, row[kind]["cycles_ratio"], row[kind]["ir_ratio"],
                     row[kind]["i1_miss_ratio"] or 0), file=sys.stderr, flush=True)
        table[p] = row
    return table


# ---- report ------------------------------------------------------------------

def load_json():
    try:
        with open(JSON_PATH) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def env_key(extra):
    return " ".join("%s=%s" % kv for kv in sorted(dict(whole_program.JIT_ENV, **extra).items()))


def git_commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                              text=True).stdout.strip()
    except OSError:
        return "?"


def fmt(v, spec=".3f", suffix="x"):
    return "-" if v is None else format(v, spec) + suffix


def render_md(data):
    lines = ["# Macro suite: library-heavy programs, stock CPython 3.11 vs pyjion", "",
             "Generated by `bench/macro_suite.py` (`make bench-macro`) from bench/MACRO.json; "
             "what each figure means is in that script's docstring. Ratios are stock/JIT "
             "(higher is better): medians of per-pair ratios for times, one run per side "
             "for callgrind's estimated cycles (Ir + 10 x L1 misses + 100 x LL misses).", ""]
    for key in sorted(data):
        section = data[key]
        lines.append("## JIT environment: `%s`" % key)
        lines.append("")
        for mode in ("whole", "steady", "cycles"):
            if mode in section:
                m = section[mode]
                lines.append("- %s: commit %s, %s, %s" % (mode, m["commit"], m["date"], m["note"]))
        lines.append("")
        programs = sorted(set().union(*(section[m]["programs"] for m in ("whole", "steady", "cycles")
                                        if m in section)))
        lines.append("| program | whole: stock CPU s | whole: stock/JIT | RSS JIT/stock | steady: stock s/run "
                     "| steady: stock/JIT | cycles whole | cycles steady | Ir steady | L1i misses steady JIT/stock |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        cols = {c: [] for c in ("w", "s", "cw", "cs", "irs", "rss")}
        for p in programs:
            w = section.get("whole", {}).get("programs", {}).get(p, {})
            s = section.get("steady", {}).get("programs", {}).get(p, {})
            c = section.get("cycles", {}).get("programs", {}).get(p, {})
            cw, cs = c.get("whole", {}), c.get("steady", {})
            cols["w"].append(w.get("cpu_ratio"))
            cols["rss"].append(w.get("rss_ratio"))
            cols["s"].append(s.get("run_ratio"))
            cols["cw"].append(cw.get("cycles_ratio"))
            cols["cs"].append(cs.get("cycles_ratio"))
            cols["irs"].append(cs.get("ir_ratio"))
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                p, fmt(w.get("stock_cpu_s"), ".3f", ""), fmt(w.get("cpu_ratio")), fmt(w.get("rss_ratio")),
                fmt(s.get("stock_run_s"), ".4f", ""), fmt(s.get("run_ratio")), fmt(cw.get("cycles_ratio")),
                fmt(cs.get("cycles_ratio")), fmt(cs.get("ir_ratio")), fmt(cs.get("i1_miss_ratio"), ".2f")))
        lines.append("| **geomean** | | **%s** | %s | | **%s** | **%s** | **%s** | %s | |" % (
            fmt(geomean(cols["w"])), fmt(geomean(cols["rss"])), fmt(geomean(cols["s"])),
            fmt(geomean(cols["cw"])), fmt(geomean(cols["cs"])), fmt(geomean(cols["irs"]))))
        lines.append("| lowest | | %s | | | %s | %s | %s | | |" % (
            fmt(min([v for v in cols["w"] if v] or [None], key=lambda v: v or 0)),
            fmt(min([v for v in cols["s"] if v] or [None], key=lambda v: v or 0)),
            fmt(min([v for v in cols["cw"] if v] or [None], key=lambda v: v or 0)),
            fmt(min([v for v in cols["cs"] if v] or [None], key=lambda v: v or 0))))
        counts = {c: sum(1 for v in cols[c] if v) for c in cols}
        lines.append("")
        lines.append("Programs per geomean: whole %d, steady %d, cycles %d (a mode run on part of the "
                     "suite, `--programs`, covers only those)." % (counts["w"], counts["s"], counts["cs"]))
        lines.append("")
    with open(MD_PATH, "w") as f:
        f.write("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=("whole", "steady", "cycles", "all"))
    ap.add_argument("--programs", help="comma-separated names (default: every bench/macro program)")
    ap.add_argument("--pairs", type=int, help="pairs of runs (default: whole 9, steady 5)")
    ap.add_argument("--warmup", type=int, default=3, help="steady state: run() calls before measuring")
    ap.add_argument("--runs", type=int, default=5, help="steady state: measured run() calls per process")
    ap.add_argument("--jobs", type=int, default=2, help="cycles: callgrind runs side by side")
    ap.add_argument("--jit-env", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--note", default="", help="a word on the machine's state, kept in MACRO.json")
    ap.add_argument("--no-write", action="store_true", help="print only; leave MACRO.json/.md alone")
    args = ap.parse_args()
    programs = args.programs.split(",") if args.programs else all_programs()
    unknown = set(programs) - set(all_programs())
    if unknown:
        ap.error("no such program: %s" % ", ".join(sorted(unknown)))
    extra = whole_program.parse_env_items(args.jit_env)
    macro_packages.install()
    mismatches = Mismatch()
    modes = ("whole", "steady", "cycles") if args.mode == "all" else (args.mode,)
    results = {}
    for mode in modes:
        if mode == "whole":
            pairs = args.pairs or 9
            table = measure_whole(programs, pairs, extra, mismatches)
            note = "%d pairs" % pairs
        elif mode == "steady":
            pairs = args.pairs or 5
            table = measure_steady(programs, pairs, args.warmup, args.runs, extra, mismatches)
            note = "%d pairs, %d warm-up + %d measured runs per process" % (pairs, args.warmup, args.runs)
        else:
            table = measure_cycles(programs, args.warmup, extra, mismatches, args.jobs)
            note = "callgrind --cache-sim=yes, steady after %d warm-up runs" % args.warmup
        results[mode] = {"commit": git_commit(), "date": datetime.date.today().isoformat(),
                         "note": note + (" " + args.note if args.note else ""), "programs": table}
        key = {"whole": "cpu_ratio", "steady": "run_ratio"}.get(mode)
        for p, row in table.items():
            if key:
                print("%-7s %-22s %s" % (mode, p, fmt(row[key])))
            else:
                print("%-7s %-22s whole %s  steady %s" % (mode, p, fmt(row["whole"]["cycles_ratio"]),
                                                           fmt(row["steady"]["cycles_ratio"])))
        if key:
            print("%-7s geomean %s" % (mode, fmt(geomean([row[key] for row in table.values()]))))
        else:
            print("cycles  geomean whole %s  steady %s" % (
                fmt(geomean([r["whole"]["cycles_ratio"] for r in table.values()])),
                fmt(geomean([r["steady"]["cycles_ratio"] for r in table.values()]))))
    if mismatches:
        print("\n%d output differences:\n  %s" % (len(mismatches), "\n  ".join(mismatches)))
    if not args.no_write:
        data = load_json()
        section = data.setdefault(env_key(extra), {})
        for mode, result in results.items():
            old = section.get(mode)
            if old and set(result["programs"]) != set(all_programs()):
                # a subset run updates its programs' rows only
                old["programs"].update(result["programs"])
                result = dict(result, programs=old["programs"])
            section[mode] = result
        with open(JSON_PATH, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        render_md(data)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
