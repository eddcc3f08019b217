"""Collects the benchmark timings and, at the end of the session, turns them into
ratios per program:

    speedup           = stock / jit        (higher is better)
    hook_overhead     = hook / stock       (lower is better)
    profile_overhead  = profile / stock    (lower is better)
    cprofile_overhead = cprofile / stock   (lower is better)
    profile_vs_jit    = profile / jit      (informational: the profiler's cost on top of the JIT)

each from the median time of the mode's timed rounds, plus their geometric means
over the programs. A ratio against stock takes the stock side from the stock
rounds paired with that mode's rounds (test_bench.py runs one just before each
timed round), so both sides saw the same machine load, and is the median of
the per-round ratios; a ratio of two modes that both have paired stock rounds
(profile / jit) is the ratio of their two medians against stock. Writes:

    bench/results.json  machine-readable (read by tools/bench_check.py); path from
                        BENCH_JSON, "" to skip
    bench/RESULTS.md    the markdown report; path from BENCH_MD, "" to skip. Only
                        written when the full matrix (all programs x all modes) ran,
                        so a -k subset never overwrites it.

and prints the markdown table in the terminal summary.
"""
import datetime
import glob
import math
import json
import os
import platform
import statistics
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
ALL_MODES = ("stock", "cprofile", "hook", "jit", "eager", "profile")

# name -> (numerator mode, denominator mode, direction checked by tools/bench_check.py)
RATIOS = {
    "speedup": ("stock", "jit", "higher"),
    "speedup_eager": ("stock", "eager", "info"),
    "hook_overhead": ("hook", "stock", "lower"),
    "profile_overhead": ("profile", "stock", "lower"),
    "cprofile_overhead": ("cprofile", "stock", "lower"),
    "profile_vs_jit": ("profile", "jit", "info"),
}
RATIO_LABELS = {
    "speedup": "speed-up stock/jit",
    "speedup_eager": "speed-up stock/eager",
    "hook_overhead": "hook ovh hook/stock",
    "profile_overhead": "profiler ovh profile/stock",
    "cprofile_overhead": "cProfile ovh cprofile/stock",
    "profile_vs_jit": "profile/jit",
}

_records = {}      # program -> mode -> {"times": [...], "extra": {...}}
_failures = []     # {"program", "mode", "message"}
_state = {"report": None, "markdown": None, "written": []}


def _all_programs():
    return sorted(os.path.basename(p)[:-3]
                  for p in glob.glob(os.path.join(HERE, "programs", "*.py"))
                  if not os.path.basename(p).startswith("_"))


class _Recorder:
    def __call__(self, program, mode, times, extra):
        _records.setdefault(program, {})[mode] = {"times": list(times), "extra": extra}


@pytest.fixture(scope="session")
def bench_record():
    return _Recorder()


def pytest_configure(config):
    _state["started"] = datetime.datetime.now().astimezone()
    _state["load_start"] = _loadavg()
    try:
        import pyjion
    except Exception:
        return
    if os.environ.get("PYJION") or pyjion.is_enabled():
        # PYJION=1 makes pyjion-startup.pth enable the JIT at interpreter start;
        # the stock modes would then not be stock.
        pyjion.disable()
        sys.stderr.write("bench: pyjion was enabled at start-up (PYJION=%r); disabled it for the "
                         "benchmarks. Run without PYJION set.\n" % os.environ.get("PYJION"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    callspec = getattr(item, "callspec", None)
    if rep.failed and callspec is not None and "program" in callspec.params:
        message = ""
        crash = getattr(rep.longrepr, "reprcrash", None)
        if crash is not None:
            message = crash.message
        else:
            text = str(rep.longrepr).strip().splitlines()
            message = text[-1] if text else "failed"
        _failures.append({"program": callspec.params["program"], "mode": callspec.params["mode"],
                          "phase": rep.when, "message": message[:2000]})


def _loadavg():
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _git_commit():
    try:
        out = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10)
        return out.stdout.strip() if out.returncode == 0 else None
    except Exception:
        return None


def _geomean(values):
    values = [v for v in values if v is not None and v > 0]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _profile_call_check(modes):
    """pyjion's profiler call counts against cProfile's, for the program's own
    functions (both summed over the same number of runs)."""
    ours = modes.get("profile", {}).get("extra", {}).get("calls")
    theirs = modes.get("cprofile", {}).get("extra", {}).get("calls")
    if ours is None or theirs is None:
        return None
    runs_ours = modes["profile"]["extra"].get("runs")
    runs_theirs = modes["cprofile"]["extra"].get("runs")
    mismatches = []
    for key in sorted(set(ours) | set(theirs)):
        a, b = ours.get(key, 0), theirs.get(key, 0)
        if runs_ours and runs_theirs and runs_ours != runs_theirs:
            a, b = a / runs_ours, b / runs_theirs
        if a != b:
            mismatches.append({"function": key, "pyjion": a, "cprofile": b})
    return {"functions": len(set(ours) | set(theirs)), "mismatches": mismatches}


def _build_report(config):
    rounds = None
    programs = {}
    for program in sorted(_records):
        modes = _records[program]
        medians = {}
        per_mode = {}
        for mode, rec in modes.items():
            times = rec["times"]
            if not times:
                continue
            rounds = len(times)
            medians[mode] = statistics.median(times)
            per_mode[mode] = {"median_s": medians[mode], "min_s": min(times), "max_s": max(times),
                              "stdev_s": statistics.stdev(times) if len(times) > 1 else 0.0,
                              "rounds": len(times)}
        # A mode compared with stock uses the stock rounds paired with its own
        # rounds (run just before each, under the same load) when it has them.
        def paired_stock(mode):
            times = modes.get(mode, {}).get("extra", {}).get("paired_stock")
            return times if times else None

        ratios = {}
        ratios_min = {}
        for name, (num, den, _direction) in RATIOS.items():
            if num not in medians or den not in medians:
                continue
            num_times, den_times = modes[num]["times"], modes[den]["times"]
            if den == "stock" and paired_stock(num):
                den_times = paired_stock(num)
            elif num == "stock" and paired_stock(den):
                num_times = paired_stock(den)
            if len(num_times) == len(den_times) and (num == "stock" or den == "stock") \
                    and min(den_times) > 0:
                # Paired rounds: the median of the per-round ratios, each
                # taken under one load (the machine's speed swings by up to
                # 2x within a case, which a ratio of medians mixes up).
                ratios[name] = statistics.median(n / d for n, d in zip(num_times, den_times))
            elif paired_stock(num) and paired_stock(den) and len(num_times) == len(paired_stock(num)) \
                    and len(den_times) == len(paired_stock(den)) and min(paired_stock(num) + paired_stock(den)) > 0:
                # Neither side is stock: each against its own paired stock
                # rounds, then the ratio of the two (the load cancels out)
                num_ratio = statistics.median(n / s for n, s in zip(num_times, paired_stock(num)))
                den_ratio = statistics.median(d / s for d, s in zip(den_times, paired_stock(den)))
                ratios[name] = num_ratio / den_ratio
            elif statistics.median(den_times) > 0:
                ratios[name] = statistics.median(num_times) / statistics.median(den_times)
            if min(den_times) > 0:
                ratios_min[name] = min(num_times) / min(den_times)
        for mode in modes:
            if mode in per_mode:
                per_mode[mode]["times_s"] = list(modes[mode]["times"])
            if paired_stock(mode):
                per_mode[mode]["paired_stock_median_s"] = statistics.median(paired_stock(mode))
                per_mode[mode]["paired_stock_s"] = list(paired_stock(mode))
        # "ratios" (from medians) is what RESULTS.md shows and bench_check compares;
        # "ratios_min" (from the fastest rounds) is steadier on a busy machine:
        # tools/bench_check.py --stat min compares those instead.
        entry = {"modes": per_mode, "ratios": ratios, "ratios_min": ratios_min}
        for mode in ("jit", "eager", "profile"):
            extra = modes.get(mode, {}).get("extra", {})
            if "jit" in extra:
                entry.setdefault("jit_coverage", {})[mode] = extra["jit"]
            if "jit_totals" in extra:
                entry.setdefault("jit_totals", {})[mode] = extra["jit_totals"]
        check = _profile_call_check(modes)
        if check is not None:
            entry["profile_call_check"] = check
        programs[program] = entry

    geomean = {}
    geomean_min = {}
    for name in RATIOS:
        g = _geomean([p["ratios"].get(name) for p in programs.values()])
        if g is not None:
            geomean[name] = g
        g = _geomean([p["ratios_min"].get(name) for p in programs.values()])
        if g is not None:
            geomean_min[name] = g

    expected = {(p, m) for p in _all_programs() for m in ALL_MODES}
    seen = {(p, m) for p, modes in _records.items() for m, r in modes.items() if r["times"]}
    seen |= {(f["program"], f["mode"]) for f in _failures}
    complete = expected <= seen

    try:
        import pyjion
        version = getattr(pyjion, "__version__", None)
    except Exception:
        version = None
    started = _state["started"]
    return {
        "schema": 1,
        "command": os.environ.get("BENCH_COMMAND", "make bench"),
        "pytest_args": list(config.invocation_params.args),
        "date": started.isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "python_full": sys.version.replace("\n", " "),
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "rounds": rounds,
        "load_average_1min": {"start": _state.get("load_start"), "end": _loadavg()},
        "warmup_rounds": 1,
        "pyjion_version": version,
        "git_commit": _git_commit(),
        "complete": complete,
        "ratio_definitions": {k: {"numerator": v[0], "denominator": v[1], "better": v[2]}
                              for k, v in RATIOS.items()},
        "programs": programs,
        "geomean": geomean,
        "geomean_min": geomean_min,
        "failures": list(_failures),
    }


def _fmt_ms(seconds):
    return "%.1f" % (seconds * 1000.0) if seconds is not None else "—"


def _fmt_ratio(r):
    return "%.2fx" % r if r is not None else "—"


def _markdown_table(report):
    modes = ALL_MODES
    head = ["program"] + ["%s ms" % m for m in modes] + [RATIO_LABELS[r] for r in RATIOS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for program, entry in report["programs"].items():
        row = [program]
        for m in modes:
            row.append(_fmt_ms(entry["modes"].get(m, {}).get("median_s")))
        for r in RATIOS:
            row.append(_fmt_ratio(entry["ratios"].get(r)))
        lines.append("| " + " | ".join(row) + " |")
    row = ["**geomean**"] + [""] * len(modes) + \
          ["**%s**" % _fmt_ratio(report["geomean"].get(r)) for r in RATIOS]
    lines.append("| " + " | ".join(row) + " |")
    if report.get("geomean_min"):
        row = ["geomean of min-time ratios"] + [""] * len(modes) + \
              [_fmt_ratio(report["geomean_min"].get(r)) for r in RATIOS]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def _coverage_table(report):
    lines = ["| program | functions run | compiled | failed | interpreted | failure reasons |",
             "|---|---|---|---|---|---|"]
    any_row = False
    for program, entry in report["programs"].items():
        cov = entry.get("jit_coverage", {}).get("jit")
        if cov is None:
            continue
        any_row = True
        reasons = "; ".join("%s (%d)" % (r, n) for r, n in
                            sorted(cov["reasons"].items(), key=lambda kv: -kv[1])[:3])
        lines.append("| %s | %d | %d | %d | %d | %s |" % (
            program, cov["functions"], cov["compiled"], cov["failed"], cov["interpreted"],
            reasons.replace("|", "\\|")))
    return "\n".join(lines) if any_row else None


def _profile_check_lines(report):
    lines = []
    for program, entry in report["programs"].items():
        check = entry.get("profile_call_check")
        if check and check["mismatches"]:
            shown = ", ".join("%s pyjion=%s cProfile=%s" % (m["function"], m["pyjion"], m["cprofile"])
                              for m in check["mismatches"][:4])
            lines.append("- %s: %d of %d functions differ (%s)" % (
                program, len(check["mismatches"]), check["functions"], shown))
    return lines


def _markdown(report):
    out = [_markdown_table(report)]
    cov = _coverage_table(report)
    if cov:
        out += ["", "JIT coverage in mode `jit` (the program's own functions that ran):", "", cov]
    checks = _profile_check_lines(report)
    if checks:
        out += ["", "Profiler call counts that differ from cProfile's (per run):", ""] + checks
    if report["failures"]:
        out += ["", "FAILURES:", ""]
        out += ["- %s / %s (%s): %s" % (f["program"], f["mode"], f["phase"],
                                        f["message"].splitlines()[0] if f["message"] else "")
                for f in report["failures"]]
    return "\n".join(out)


def _results_md(report, table):
    header = [
        "# pyjion benchmark results",
        "",
        "Produced by `%s` (pytest %s) on %s." % (report["command"], " ".join(report["pytest_args"]),
                                                  report["date"]),
        "",
        "- Python: %s" % report["python_full"],
        "- CPU: %s (%s logical CPUs)" % (report["cpu"], report["cpus"]),
        "- Rounds: %s timed + %d warm-up per program x mode; times are medians in milliseconds"
        % (report["rounds"], report["warmup_rounds"]),
        "- pyjion %s, commit %s" % (report["pyjion_version"], report["git_commit"] or "(none)"),
        "- 1-minute load average: %s at start, %s at end (other work on the machine skews ratios)"
        % (report["load_average_1min"]["start"], report["load_average_1min"]["end"]),
        "- Ratios: speed-up = stock/jit (higher is better); overheads = mode/stock (lower is better);"
        " geomean over programs. A ratio against stock is the median of per-round ratios, each round"
        " against the stock round run just before it (not the stock column). See bench/README.md.",
        "",
        "",
    ]
    return "\n".join(header) + table + "\n"


def _target(env, default):
    value = os.environ.get(env)
    if value is None:
        return default
    return value or None


def pytest_sessionfinish(session, exitstatus):
    if not _records and not _failures:
        return
    report = _build_report(session.config)
    _state["report"] = report
    table = _markdown(report)
    _state["markdown"] = table
    json_path = _target("BENCH_JSON", os.path.join(HERE, "results.json"))
    if json_path and report["programs"]:
        with open(json_path, "w") as f:
            json.dump(report, f, indent=2, sort_keys=False)
            f.write("\n")
        _state["written"].append(json_path)
    md_path = _target("BENCH_MD", os.path.join(HERE, "RESULTS.md"))
    if md_path and report["complete"]:
        with open(md_path, "w") as f:
            f.write(_results_md(report, table))
        _state["written"].append(md_path)
    elif md_path:
        _state["md_skipped"] = md_path


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    table = _state.get("markdown")
    if table is None:
        return
    tr = terminalreporter
    tr.section("pyjion benchmark ratios (medians of %s rounds)" % _state["report"]["rounds"])
    for line in table.splitlines():
        tr.write_line(line)
    for path in _state["written"]:
        tr.write_line("wrote %s" % _show(path))
    if _state.get("md_skipped"):
        tr.write_line("did not write %s: not every program x mode ran in this session"
                      % _show(_state["md_skipped"]))


def _show(path):
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel
