#!/usr/bin/env python3
"""Whole-process runs of the bench programs, stock CPython vs pyjion: what a
user who runs one program once pays and gains, start-up and exit included.

    python bench/whole_process.py                                 # make bench-whole
    python bench/whole_process.py --rounds 5 --jit-env PYJION_THRESHOLD=1000
    python bench/whole_process.py --programs fib,richards --no-write

For each bench/programs/<name>.py, one process does what one bench round does
(bench/test_bench.py): load the program module from its file and call its
run() once, at its default size; then it exits:

    python -c "<load bench/programs/<name>.py>; module.run()"

measured by tools/whole_program.py in paired rounds (--rounds, default 5,
after --warmup pairs, default 1, that are not counted): a stock run (no
PYJION* variable) and a JIT run (PYJION=1, so the start-up .pth enables pyjion
with its default settings, plus --jit-env), in alternating order. The figure
per program is the median over the pairs of stock CPU / JIT CPU (user+sys;
higher is better, >= 1.0 means the JIT pays for its start-up and compiling
within one run), with wall time and peak RSS beside it.

Writes bench/WHOLE_PROGRAM.json (one entry per JIT environment, so runs with
different --jit-env sit side by side) and the matching generated section of
bench/WHOLE_PROGRAM.md; --no-write only prints the table.
"""
import argparse
import datetime
import json
import math
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PROGRAM_DIR = os.path.join(HERE, "programs")
sys.path.insert(0, os.path.join(REPO, "tools"))

import whole_program  # noqa: E402

JSON_PATH = os.path.join(HERE, "WHOLE_PROGRAM.json")
MD_PATH = os.path.join(HERE, "WHOLE_PROGRAM.md")

# What one process runs: the bench's own way of loading a program, then run().
RUNNER = """\
import importlib.util, sys
spec = importlib.util.spec_from_file_location("bench_program", sys.argv[1])
module = importlib.util.module_from_spec(spec)
sys.modules["bench_program"] = module
spec.loader.exec_module(module)
module.run()
"""


def all_programs():
    return sorted(name[:-3] for name in os.listdir(PROGRAM_DIR)
                  if name.endswith(".py") and not name.startswith("_"))


def program_command(program):
    return [sys.executable, "-c", RUNNER, os.path.join(PROGRAM_DIR, program + ".py")]


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _geomean(values):
    values = [v for v in values if v is not None and v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def measure_program(program, rounds, warmup, extra_jit_env, log=None):
    report = whole_program.compare(program_command(program), rounds=rounds, warmup=warmup,
                                   extra_jit_env=extra_jit_env, cwd=REPO, timeout=600, log=log)
    by_round = {}
    for r in report["runs"]:
        by_round.setdefault(r["round"], {})[r["mode"]] = r
    speedups = [by_round[p["round"]]["stock"]["cpu_s"] / by_round[p["round"]]["jit"]["cpu_s"]
                for p in report["pairs"] if by_round[p["round"]]["jit"]["cpu_s"] > 0]
    wall = [by_round[p["round"]]["stock"]["wall_s"] / by_round[p["round"]]["jit"]["wall_s"]
            for p in report["pairs"] if by_round[p["round"]]["jit"]["wall_s"] > 0]
    return {"program": program, "rounds": report["rounds"],
            "cpu_speedup": _median(speedups), "wall_speedup": _median(wall),
            "cpu_speedup_per_pair": speedups,
            "stock_cpu_s": report["medians"]["stock"]["cpu_s"], "jit_cpu_s": report["medians"]["jit"]["cpu_s"],
            "stock_rss_mb": report["medians"]["stock"]["peak_rss_mb"],
            "jit_rss_mb": report["medians"]["jit"]["peak_rss_mb"],
            "rss_ratio": report["ratios"]["rss_ratio"],
            "returncodes": report["returncodes"], "failed": report["returncodes_differ"] or any(
                r["returncode"] != 0 for r in report["runs"])}


def _fmt(value, spec, suffix=""):
    return "-" if value is None else format(value, spec) + suffix


def table_rows(results):
    rows = []
    for r in results:
        rows.append([r["program"], _fmt(r["stock_cpu_s"] * 1e3, ".0f"), _fmt(r["jit_cpu_s"] * 1e3, ".0f"),
                     _fmt(r["cpu_speedup"], ".2f", "x"), _fmt(r["wall_speedup"], ".2f", "x"),
                     _fmt(r["stock_rss_mb"], ".1f"), _fmt(r["jit_rss_mb"], ".1f"),
                     _fmt(r["rss_ratio"], ".2f", "x") + (" FAILED" if r["failed"] else "")])
    rows.append(["geomean", "", "", _fmt(_geomean([r["cpu_speedup"] for r in results]), ".2f", "x"),
                 _fmt(_geomean([r["wall_speedup"] for r in results]), ".2f", "x"), "", "",
                 _fmt(_geomean([r["rss_ratio"] for r in results]), ".2f", "x")])
    return rows


HEADER = ["program", "stock cpu ms", "jit cpu ms", "cpu stock/jit", "wall stock/jit", "stock rss MiB",
          "jit rss MiB", "rss jit/stock"]


def format_text(results):
    rows = [HEADER] + table_rows(results)
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
    return "\n".join("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in
                               enumerate(zip(row, widths))) for row in rows)


def format_markdown(entry):
    results = entry["programs"]
    below = [r["program"] for r in results if r["cpu_speedup"] is not None and r["cpu_speedup"] < 1.0]
    lines = ["### JIT environment: %s" % entry["label"], "",
             "Made by `python bench/whole_process.py %s` on %s at commit %s; %d measured pairs per program "
             "(+%d warm-up), 1-minute load average %s at start, %s at end."
             % (entry["argv"], entry["date"], entry["commit"], entry["rounds"], entry["warmup"],
                entry["load_start"], entry["load_end"]), "",
             "Programs below 1.0x (CPU): %s." % (", ".join(below) or "none"), "",
             "| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for row in table_rows(results):
        if row[0] == "geomean":
            row = ["**geomean**"] + row[1:3] + ["**%s**" % c if c else "" for c in row[3:]]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


MD_INTRO = """# Whole-process runs: stock CPython vs pyjion

Each bench program run once in a fresh process, start-up and exit included
(`python -c` that loads `bench/programs/<name>.py` and calls `run()` once at
its default size), stock CPython against `PYJION=1` (the start-up .pth enables
pyjion with its default settings, plus the JIT environment named in the
section). Made by `bench/whole_process.py` (`make bench-whole`), measured with
`tools/whole_program.py`: CPU is user+sys of the process from `os.wait4`, peak
RSS its `ru_maxrss`. Each figure is the median over paired rounds (stock and
JIT run back to back, order alternating) of the per-pair ratio; geomean over
the programs. `cpu stock/jit` >= 1.0x means the JIT's start-up and compiling
pay for themselves within one run; `rss jit/stock` is the cost in memory.

The sections below are generated; each is replaced when the script is run
again with the same JIT environment.
"""


def _section_markers(label):
    return "<!-- whole_process: %s -->" % label, "<!-- end whole_process: %s -->" % label


def update_markdown(path, entry):
    text = open(path).read() if os.path.exists(path) else MD_INTRO
    begin, end = _section_markers(entry["label"])
    section = "%s\n%s\n%s" % (begin, format_markdown(entry), end)
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1]
        text = head + section + tail
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    with open(path, "w") as f:
        f.write(text)


def _git_commit():
    try:
        out = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10)
        return out.stdout.strip() or None
    except Exception:
        return None


def _loadavg():
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="measured stock/JIT pairs per program (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="unmeasured pairs first (default 1)")
    parser.add_argument("--jit-env", action="append", default=[], metavar="NAME=VALUE",
                        help="extra environment of the JIT runs (repeatable), e.g. PYJION_THRESHOLD=1000")
    parser.add_argument("--programs", help="comma-separated subset of bench/programs")
    parser.add_argument("--no-write", action="store_true", help="print only; leave the JSON and markdown alone")
    args = parser.parse_args(argv)
    try:
        extra = whole_program.parse_env_items(args.jit_env)
    except ValueError as exc:
        parser.error(str(exc))
    programs = args.programs.split(",") if args.programs else all_programs()
    for p in programs:
        if not os.path.exists(os.path.join(PROGRAM_DIR, p + ".py")):
            parser.error("no program %r in %s" % (p, PROGRAM_DIR))
    label = " ".join("%s=%s" % kv for kv in sorted(dict(whole_program.JIT_ENV, **extra).items()))
    load_start = _loadavg()
    results = []
    for program in programs:
        r = measure_program(program, args.rounds, args.warmup, extra)
        results.append(r)
        print("%-16s cpu stock/jit %s  (stock %s ms, jit %s ms)%s" % (
            program, _fmt(r["cpu_speedup"], ".2f", "x"), _fmt(r["stock_cpu_s"] * 1e3, ".0f"),
            _fmt(r["jit_cpu_s"] * 1e3, ".0f"), "  FAILED (exit codes %s)" % r["returncodes"] if r["failed"] else ""),
            file=sys.stderr, flush=True)
    entry = {"label": label, "jit_env": dict(whole_program.JIT_ENV, **extra), "rounds": args.rounds,
             "warmup": args.warmup, "date": datetime.date.today().isoformat(), "commit": _git_commit(),
             "python": sys.version.split()[0], "load_start": load_start, "load_end": _loadavg(),
             "argv": " ".join(argv if argv is not None else sys.argv[1:]),
             "geomean_cpu_speedup": _geomean([r["cpu_speedup"] for r in results]),
             "programs": results}
    print("JIT environment: %s" % label)
    print(format_text(results))
    if not args.no_write:
        data = {}
        if os.path.exists(JSON_PATH):
            try:
                with open(JSON_PATH) as f:
                    data = json.load(f)
            except ValueError:
                data = {}
        data.setdefault("configs", {})[label] = entry
        with open(JSON_PATH, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
            f.write("\n")
        update_markdown(MD_PATH, entry)
        print("wrote %s and %s" % (os.path.relpath(JSON_PATH, REPO), os.path.relpath(MD_PATH, REPO)))
    return 1 if any(r["failed"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
