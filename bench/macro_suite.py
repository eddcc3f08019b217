#!/usr/bin/env python3
"""The macro suite: library-heavy programs (bench/macro/*.py, each a real use
of a real package or standard-library module), stock CPython versus pyjion
with the settings a user gets from PYJION=1.

    python bench/macro_suite.py whole  [--pairs 9]        # start-up + one run + exit
    python bench/macro_suite.py steady [--pairs 5]        # run() after 3 warm-up runs, in-process
    python bench/macro_suite.py cycles [--jobs 2]         # callgrind cache simulation of both
    python bench/macro_suite.py all                       # the three, then bench/MACRO.md
    ... --programs sympy_calculus,json_indent --jit-env PYJION_THRESHOLD=0 --no-write
    python bench/macro_suite.py cycles --no-compile --kinds whole   # + the no-compile side
    python bench/macro_suite.py report                    # the .md again, from the .json

Both sides run with the interpreter that runs this script (`make bench-macro
PYVER=3.13` runs it with .venv-3.13's): CPython 3.11's results go to
bench/MACRO.json and .md, another version's to bench/MACRO-<X.Y>.json and .md
(3.13: MACRO-3.13.*). Every program's packages are pinned in
bench/macro/requirements.txt and installed by tools/macro_packages.py into
build/macro/site (3.11) or build/macro/site-<X.Y>, which the runs see
through PYTHONPATH (after the caller's PYTHONPATH, if any, so a checkout put
first there is the pyjion measured). Every run has PYTHONHASHSEED=0, so stock and JIT runs
iterate sets of strings alike, and every run's output (whole: what the
program prints on stdout and stderr; steady: the repr of each run()'s result,
and stderr) must equal the stock run's: a difference is reported and makes
the exit status 1. A program a version cannot run (UNSUPPORTED below: a
package without support for it) is left out of that version's runs and
listed, with the reason, in its .md.

--no-compile adds a third side to every pair: pyjion enabled at start-up
as PYJION=1 does, plus PYJION_JIT=0 (_pyjion_startup.py:
pyjion.enable(jit=False)), which installs the hook but never compiles. Its
ratios, stock/no-compile, are the cost of the warm-up machinery alone (what
runs to decide what to compile, without the machine code); they are kept
as a JIT environment of their own ("PYJION=1 PYJION_JIT=0"). Under
callgrind (cycles) they do not depend on the machine's load. What that
machinery is depends on pyjion's jit=False: at the time of writing, the
PEP 523 hook and its call counting run, while the sampler thread does not
(it starts only where code may be compiled) and pyjion._codegen is never
loaded.

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
  time ratios what a user gets. Valgrind runs with --fair-sched=yes, so the
  sampler thread gets its turns (without it, some runs took 2 samples and
  compiled nothing).

Results go to bench/MACRO.json (each mode's latest run, per JIT environment)
and the table in bench/MACRO.md is generated from it (bench/MACRO-<X.Y>.*
for a version other than 3.11).
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
VERSION = "%d.%d" % sys.version_info[:2]


def result_paths(version=VERSION):
    """(json, md): 3.11's keep the names they had before there were others."""
    stem = os.path.join(HERE, "MACRO" if version == "3.11" else "MACRO-" + version)
    return stem + ".json", stem + ".md"


JSON_PATH, MD_PATH = result_paths()
# Programs a version cannot run, with the reason (listed in its .md). Every
# program runs on 3.11 and 3.13.
UNSUPPORTED = {}
# What a version's .md says of its programs besides the figures.
NOTES = {
    "3.13": ["pygments_highlight and stdlib_text work on the standard library's own source "
             "(textwrap, difflib), which 3.13 changed: they print other results than on 3.11, as "
             "they should. Every other program prints the same on stock 3.11 and 3.13 (with the "
             "same pinned packages, bench/macro/requirements.txt)."],
}
# On top of the JIT environment: pyjion enabled, nothing compiled.
NO_COMPILE_ENV = {"PYJION_JIT": "0"}
sys.path.insert(0, os.path.join(REPO, "tools"))

import callgrind_events  # noqa: E402
import macro_packages  # noqa: E402
import whole_program  # noqa: E402


def every_program():
    return sorted(n[:-3] for n in os.listdir(MACRO) if n.endswith(".py") and not n.startswith("_"))


def all_programs(version=VERSION):
    """The programs this version runs."""
    skip = UNSUPPORTED.get(version, {})
    return [p for p in every_program() if p not in skip]


def program_path(name):
    return os.path.join(MACRO, name + ".py")


def side_envs(extra_jit_env, no_compile=False):
    """{side: environment}: "stock", "jit" and, with no_compile, "nocompile"."""
    path = [p for p in (os.environ.get("PYTHONPATH"), macro_packages.SITE) if p]
    base = dict(os.environ, PYTHONPATH=os.pathsep.join(path), PYTHONHASHSEED="0")
    base.pop("PYTHONDONTWRITEBYTECODE", None)
    sides = {"stock": whole_program.stock_env(base), "jit": whole_program.jit_env(extra_jit_env, base)}
    if no_compile:
        sides["nocompile"] = whole_program.jit_env(dict(extra_jit_env, **NO_COMPILE_ENV), base)
    return sides


def side_order(sides, rnd):
    """The order of one round's runs: stock first in round 0, and each round
    rotated by one, so no side always runs right after the same other."""
    names = [s for s in ("stock", "jit", "nocompile") if s in sides]
    k = rnd % len(names)
    return tuple(names[k:] + names[:k])


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


def measure_whole(programs, pairs, env, mismatches, timeout=600):
    """{side: table} for every side of env but stock (see side_envs)."""
    others = [m for m in env if m != "stock"]
    runs = {p: {m: [] for m in env} for p in programs}
    for rnd in range(pairs):
        for p in programs:
            order = side_order(env, rnd)
            pair = {}
            for mode in order:
                pair[mode] = run_whole(p, env[mode], timeout)
                if pair[mode]["returncode"] != 0:
                    mismatches.add(p, "whole " + mode, "exit %s: %s" % (pair[mode]["returncode"],
                                                                       pair[mode]["output"][-500:]))
            for mode in others:
                if pair[mode]["output"] != pair["stock"]["output"]:
                    mismatches.add(p, "whole " + mode, "stdout differs")
            for mode in order:
                runs[p][mode].append({k: pair[mode][k] for k in ("cpu_s", "wall_s", "peak_rss_mb")})
            print("whole  round %d  %-22s stock %6.3fs  %s" % (rnd, p, pair["stock"]["cpu_s"], "  ".join(
                "%s %6.3fs %.3fx" % (m, pair[m]["cpu_s"], pair["stock"]["cpu_s"] / max(pair[m]["cpu_s"], 1e-9))
                for m in others)), file=sys.stderr, flush=True)
    tables = {m: {} for m in others}
    for p in programs:
        s = runs[p]["stock"]
        for mode in others:
            j = runs[p][mode]
            tables[mode][p] = {
                "pairs": len(s),
                "stock_cpu_s": statistics.median(r["cpu_s"] for r in s),
                "jit_cpu_s": statistics.median(r["cpu_s"] for r in j),
                "cpu_ratio": median_ratio([(a["cpu_s"], b["cpu_s"]) for a, b in zip(s, j)]),
                "cpu_ratios": [round(a["cpu_s"] / b["cpu_s"], 4) for a, b in zip(s, j)],
                "rss_ratio": median_ratio([(b["peak_rss_mb"], a["peak_rss_mb"]) for a, b in zip(s, j)]),
                "stock_rss_mb": statistics.median(r["peak_rss_mb"] for r in s)}
    return tables


# ---- steady state ------------------------------------------------------------

def run_steady(name, env, warmup, runs, timeout):
    proc = subprocess.run([sys.executable, STEADY, program_path(name), str(warmup), str(runs)],
                          env=env, cwd=MACRO, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        return None, proc.stderr[-1000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["stderr"] = proc.stderr
    return result, None


def measure_steady(programs, pairs, warmup, runs, env, mismatches, timeout=1200):
    """{side: table} for every side of env but stock (see side_envs)."""
    others = [m for m in env if m != "stock"]
    per = {m: {p: [] for p in programs} for m in others}
    for rnd in range(pairs):
        for p in programs:
            got = {}
            for mode in side_order(env, rnd):
                got[mode], err = run_steady(p, env[mode], warmup, runs, timeout)
                if err is not None:
                    mismatches.add(p, "steady " + mode, err)
            if got["stock"] is None:
                continue
            s = statistics.median(got["stock"]["times"])
            line = []
            for mode in others:
                if got[mode] is None:
                    continue
                if got["stock"]["results"] != got[mode]["results"]:
                    mismatches.add(p, "steady " + mode, "run() results differ")
                if got["stock"]["stderr"] != got[mode]["stderr"]:
                    mismatches.add(p, "steady " + mode, "stderr differs: %r" % got[mode]["stderr"][-300:])
                j = statistics.median(got[mode]["times"])
                per[mode][p].append((s, j))
                line.append("%s %7.4fs %.3fx" % (mode, j, s / max(j, 1e-9)))
            print("steady round %d  %-22s stock %7.4fs  %s" % (rnd, p, s, "  ".join(line)),
                  file=sys.stderr, flush=True)
    return {m: {p: {"pairs": len(v), "stock_run_s": statistics.median(s for s, _ in v) if v else None,
                    "jit_run_s": statistics.median(j for _, j in v) if v else None,
                    "run_ratio": median_ratio(v), "run_ratios": [round(s / j, 4) for s, j in v]}
                for p, v in per[m].items()}
            for m in others}


# ---- callgrind ---------------------------------------------------------------

def callgrind_counts(cmd, env, toggle=None):
    """{event: count} of one run under callgrind's cache simulation."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        # --fair-sched=yes: valgrind runs one thread at a time, and by default
        # a thread that wakes (the sampler of warm-up by samples) may wait
        # for the lock while the main thread takes it back again and again:
        # a run then takes 2 samples instead of ~600 and compiles nothing.
        vg = ["valgrind", "--tool=callgrind", "--fair-sched=yes", "--cache-sim=yes", "--callgrind-out-file=" + out]
        if toggle:
            vg += ["--collect-atstart=no", "--toggle-collect=" + toggle]
        proc = subprocess.run(vg + cmd, env=env, cwd=MACRO, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError("callgrind run failed: %s\n%s" % (" ".join(cmd), proc.stderr[-2000:]))
        return callgrind_events.totals(out), proc.stdout


cycles = callgrind_events.estimated_cycles


CYCLE_KINDS = ("whole", "steady")


def measure_cycles(programs, warmup, env, mismatches, jobs, kinds=CYCLE_KINDS):
    """{side: table} for every side of env but stock (see side_envs); one
    callgrind run per program, side and kind (whole process, steady run)."""
    others = [m for m in env if m != "stock"]
    tasks = {}

    def done(key, future):
        # each run's counts as it ends: a long run stopped halfway leaves these in its log
        if future.exception() is None:
            print("callgrind %s %s %s: %s" % (key + (json.dumps(future.result()[0]),)),
                  file=sys.stderr, flush=True)

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for p in programs:
            for mode in env:
                if "whole" in kinds:
                    tasks[p, mode, "whole"] = pool.submit(
                        callgrind_counts, [sys.executable, program_path(p)], env[mode])
                if "steady" in kinds:
                    tasks[p, mode, "steady"] = pool.submit(
                        callgrind_counts, [sys.executable, STEADY, program_path(p), str(warmup), "1", "--callgrind"],
                        env[mode], "_PyEval_CallTracing")
        for key, future in tasks.items():
            future.add_done_callback(lambda f, key=key: done(key, f))
    tables = {m: {} for m in others}
    for p in programs:
        for mode in others:
            row = {}
            for kind in kinds:
                (s, s_out), (j, j_out) = tasks[p, "stock", kind].result(), tasks[p, mode, kind].result()
                if kind == "whole" and s_out != j_out:
                    mismatches.add(p, "cycles whole " + mode, "stdout differs")
                if kind == "steady" and json.loads(s_out.splitlines()[-1])["results"] != \
                        json.loads(j_out.splitlines()[-1])["results"]:
                    mismatches.add(p, "cycles steady " + mode, "run() results differ")
                row[kind] = {"stock": s, "jit": j, "cycles_ratio": cycles(s) / cycles(j),
                             "ir_ratio": s["Ir"] / j["Ir"],
                             "i1_miss_ratio": j["I1mr"] / s["I1mr"] if s["I1mr"] else None}
                print("cycles %-6s %-22s stock %6.3f G  %s %6.3f G  %.3fx (Ir %.3fx, L1i misses %s/stock %.2f)"
                      % (kind, p, cycles(s) / 1e9, mode, cycles(j) / 1e9, row[kind]["cycles_ratio"],
                         row[kind]["ir_ratio"], mode, row[kind]["i1_miss_ratio"] or 0), file=sys.stderr, flush=True)
            tables[mode][p] = row
    return tables


# ---- report ------------------------------------------------------------------

def load_json(path=None):
    try:
        with open(path or JSON_PATH) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def env_key(extra):
    return " ".join("%s=%s" % kv for kv in sorted(dict(whole_program.JIT_ENV, **extra).items()))


def side_keys(extra):
    """{side: the JIT-environment key its results are kept under}."""
    return {"jit": env_key(extra), "nocompile": env_key(dict(extra, **NO_COMPILE_ENV))}


def is_no_compile(key):
    return all(("%s=%s" % kv) in key.split() for kv in NO_COMPILE_ENV.items())


def git_commit():
    """HEAD's short hash, "+dirty" when tracked files (results aside) differ from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                              text=True).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", ".", ":(exclude)bench/MACRO*"],
                               cwd=REPO).returncode
    except OSError:
        return "?"
    return head + ("+dirty" if dirty == 1 else "")


def merge_result(mode, old, result, programs_run):
    """A mode's new result over the one kept: a run of part of the suite
    updates its programs' rows only, and a cycles run of one kind (--kinds)
    keeps the rows' other kind."""
    if not old:
        return result
    for row in old["programs"].values():        # rows kept say which commit measured them
        for entry in [row[k] for k in CYCLE_KINDS if k in row] if mode == "cycles" else [row]:
            entry.setdefault("commit", old["commit"])
    rows = dict(old["programs"]) if set(programs_run) != set(all_programs()) else {}
    for p, row in result["programs"].items():
        if mode == "cycles":
            row = dict(old["programs"].get(p, {}), **row)
        rows[p] = row
    return dict(result, programs=rows)


def row_commits(mode, section):
    """The commits the rows of one mode were measured at."""
    found = set()
    for row in section["programs"].values():
        for entry in ([row[k] for k in CYCLE_KINDS if k in row] if mode == "cycles" else [row]):
            found.add(entry.get("commit", section["commit"]))
    return sorted(found)


def fmt(v, spec=".3f", suffix="x"):
    return "-" if v is None else format(v, spec) + suffix


def lowest(values):
    values = [v for v in values if v]
    return min(values) if values else None


def render_md(data, version=VERSION, path=None):
    lines = ["# Macro suite: library-heavy programs, stock CPython %s vs pyjion" % version, "",
             "Generated by `bench/macro_suite.py` (`make bench-macro%s`) from bench/%s; "
             "what each figure means is in that script's docstring. Ratios are stock/JIT "
             "(higher is better): medians of per-pair ratios for times, one run per side "
             "for callgrind's estimated cycles (Ir + 10 x L1 misses + 100 x LL misses)."
             % ("" if version == "3.11" else " PYVER=" + version, os.path.basename(result_paths(version)[0])), ""]
    skipped = UNSUPPORTED.get(version, {})
    if skipped:
        lines.append("Programs CPython %s cannot run (left out of every table here):" % version)
        lines.append("")
        lines.extend("- %s: %s" % kv for kv in sorted(skipped.items()))
    else:
        lines.append("Every program of bench/macro runs on CPython %s (%d programs)."
                     % (version, len(every_program())))
    lines.append("")
    for note in NOTES.get(version, ()):
        lines.extend([note, ""])
    for key in sorted(data):
        section = data[key]
        lines.append("## JIT environment: `%s`" % key)
        lines.append("")
        if is_no_compile(key):
            lines.append("pyjion enabled at start-up but compiling nothing (`--no-compile`, "
                         "pyjion.enable(jit=False): the hook and its call counting, no sampler "
                         "thread, no code generator loaded): the ratios stock/this are the cost "
                         "of the warm-up machinery alone (a ratio of 0.990x is 1.0% more than stock).")
            lines.append("")
        for mode in ("whole", "steady", "cycles"):
            if mode in section:
                m = section[mode]
                commits = row_commits(mode, m)
                lines.append("- %s: commit %s, %s, %s%s" % (
                    mode, m["commit"], m["date"], m["note"],
                    "" if commits == [m["commit"]] else " (rows measured at %s)" % ", ".join(commits)))
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
            fmt(lowest(cols["w"])), fmt(lowest(cols["s"])), fmt(lowest(cols["cw"])), fmt(lowest(cols["cs"]))))
        counts = {c: sum(1 for v in cols[c] if v) for c in cols}
        lines.append("")
        lines.append("Programs per geomean: whole %d, steady %d, cycles whole %d, cycles steady %d (a mode "
                     "run on part of the suite, `--programs`, covers only those)."
                     % (counts["w"], counts["s"], counts["cw"], counts["cs"]))
        below = [p for p, v in zip(programs, cols["cw"]) if v and v < 1.0]
        if counts["cw"]:
            lines.append("")
            lines.append("Cycles, whole process: geomean %s, lowest %s; below 1.0x: %s." % (
                fmt(geomean(cols["cw"])), fmt(lowest(cols["cw"])),
                ", ".join(below) if below else "none"))
            if is_no_compile(key):
                costs = {p: 1 / v - 1 for p, v in zip(programs, cols["cw"]) if v}
                worst = max(costs, key=costs.get)
                lines.append("Cost of the warm-up machinery alone (cycles, whole process): %.1f%% over "
                             "the geomean, at most %.1f%% (%s); programs within 1%%: %s." % (
                                 100 * (1 / geomean(cols["cw"]) - 1), 100 * costs[worst], worst,
                                 ", ".join(p for p, c in costs.items() if c <= 0.01) or "none"))
        lines.append("")
    with open(path or (MD_PATH if version == VERSION else result_paths(version)[1]), "w") as f:
        f.write("\n".join(lines))


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=("whole", "steady", "cycles", "all", "report"),
                    help="report: write the .md again from the .json, measuring nothing")
    ap.add_argument("--programs", help="comma-separated names (default: every bench/macro program "
                                       "this Python version runs)")
    ap.add_argument("--pairs", type=int, help="pairs of runs (default: whole 9, steady 5)")
    ap.add_argument("--warmup", type=int, default=3, help="steady state: run() calls before measuring")
    ap.add_argument("--runs", type=int, default=5, help="steady state: measured run() calls per process")
    ap.add_argument("--jobs", type=int, default=2, help="cycles: callgrind runs side by side")
    ap.add_argument("--kinds", default=",".join(CYCLE_KINDS),
                    help="cycles: whole, steady or both (default), comma-separated")
    ap.add_argument("--jit-env", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--no-compile", action="store_true",
                    help="also measure pyjion enabled but compiling nothing (the JIT env plus %s)"
                         % " ".join("%s=%s" % kv for kv in NO_COMPILE_ENV.items()))
    ap.add_argument("--note", default="", help="a word on the machine's state, kept in MACRO.json")
    ap.add_argument("--no-write", action="store_true", help="print only; leave MACRO.json/.md alone")
    args = ap.parse_args(argv)
    args.programs = args.programs.split(",") if args.programs else all_programs()
    unknown = set(args.programs) - set(every_program())
    if unknown:
        ap.error("no such program: %s" % ", ".join(sorted(unknown)))
    unsupported = set(args.programs) & set(UNSUPPORTED.get(VERSION, {}))
    if unsupported:
        ap.error("CPython %s cannot run: %s" % (VERSION, ", ".join(sorted(unsupported))))
    kinds = [k for k in args.kinds.split(",") if k]
    if not kinds or set(kinds) - set(CYCLE_KINDS):
        ap.error("--kinds: whole, steady or whole,steady, not %r" % args.kinds)
    args.kinds = tuple(k for k in CYCLE_KINDS if k in kinds)
    try:
        args.extra = whole_program.parse_env_items(args.jit_env)
    except ValueError as exc:
        ap.error(str(exc))
    if set(args.extra) & set(NO_COMPILE_ENV):
        ap.error("%s belongs to --no-compile's side" % ", ".join(sorted(set(args.extra) & set(NO_COMPILE_ENV))))
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.mode == "report":
        render_md(load_json())
        return 0
    programs, extra = args.programs, args.extra
    macro_packages.install()
    mismatches = Mismatch()
    env = side_envs(extra, args.no_compile)
    modes = ("whole", "steady", "cycles") if args.mode == "all" else (args.mode,)
    results = {side: {} for side in env if side != "stock"}
    commit = git_commit()
    for mode in modes:
        if mode == "whole":
            pairs = args.pairs or 9
            tables = measure_whole(programs, pairs, env, mismatches)
            note = "%d pairs" % pairs
        elif mode == "steady":
            pairs = args.pairs or 5
            tables = measure_steady(programs, pairs, args.warmup, args.runs, env, mismatches)
            note = "%d pairs, %d warm-up + %d measured runs per process" % (pairs, args.warmup, args.runs)
        else:
            tables = measure_cycles(programs, args.warmup, env, mismatches, args.jobs, args.kinds)
            note = "callgrind --cache-sim=yes" + (
                ", steady after %d warm-up runs" % args.warmup if "steady" in args.kinds else ", whole processes only")
        for side, table in tables.items():
            for row in table.values():
                for entry in [row[k] for k in args.kinds] if mode == "cycles" else [row]:
                    entry["commit"] = commit
            results[side][mode] = {"commit": commit, "date": datetime.date.today().isoformat(),
                                   "python": sys.version.split()[0],
                                   "note": note + (" " + args.note if args.note else ""), "programs": table}
            key = {"whole": "cpu_ratio", "steady": "run_ratio"}.get(mode)
            label = "%-7s %-9s" % (mode, side)
            for p, row in table.items():
                if key:
                    print("%s %-22s %s" % (label, p, fmt(row[key])))
                else:
                    print("%s %-22s %s" % (label, p, "  ".join(
                        "%s %s" % (k, fmt(row[k]["cycles_ratio"])) for k in args.kinds)))
            if key:
                print("%s geomean %s" % (label, fmt(geomean([row[key] for row in table.values()]))))
            else:
                print("%s geomean %s" % (label, "  ".join("%s %s" % (k, fmt(geomean(
                    [r[k]["cycles_ratio"] for r in table.values()]))) for k in args.kinds)))
    if mismatches:
        print("\n%d output differences:\n  %s" % (len(mismatches), "\n  ".join(mismatches)))
    if not args.no_write:
        data = load_json()
        keys = side_keys(extra)
        for side, by_mode in results.items():
            section = data.setdefault(keys[side], {})
            for mode, result in by_mode.items():
                section[mode] = merge_result(mode, section.get(mode), result, programs)
        with open(JSON_PATH, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        render_md(data)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
