#!/usr/bin/env python3
"""Third-party test suites, stock CPython vs pyjion: outcomes test by test,
CPU time and peak RSS.

    python tools/thirdparty_suites.py                       # mpmath and networkx, 3 rounds
    python tools/thirdparty_suites.py --suite mpmath --rounds 1
    python tools/thirdparty_suites.py --jit-env PYJION_THRESHOLD=1000 --json out.json
    python tools/thirdparty_suites.py --suite regrtest-smoke   # CPython's smoke selection, same comparison

Each package is installed from PyPI at a pinned version with
`pip install --no-deps --target build/thirdparty/<name>` (a scratch folder,
ignored by git; skipped when that version is already there) and its test
suite, which ships inside the wheel, runs from there:

    python -m pytest --pyargs <package> -q -p no:cacheprovider -p no:pyjion --junitxml <run>.xml

in rounds of one stock run and one JIT run (tools/whole_program.py: PYJION=1,
pyjion's default settings unless --jit-env adds some), measured with
whole_program.py (CPU user+sys, wall, peak RSS; medians of per-pair ratios
JIT/stock). Every JIT run's junit XML is compared with that of the stock run
of its pair, test by test (passed, failed, error, skipped, xfail, xpass): any
difference is listed and makes the exit status 1. Differences between the
stock runs themselves are listed too, as flaky on stock.

Details:
  - `-p no:pyjion` on both sides: pyjion's own pytest plugin (auto-loaded from
    the .venv) does nothing without --pyjion, but leaving it out makes the
    stock side plain pytest; the JIT side gets the JIT from the start-up .pth.
  - Each scratch folder has an empty pytest.ini, passed with -c, so pytest
    does not take this repository's pyproject.toml as its configuration.
  - mpmath is pinned to 1.3.0: the tests of 1.4 need hypothesis and pexpect,
    and hypothesis draws new examples on every run, which a test-by-test
    comparison of two runs cannot use.
  - networkx runs its whole suite (about 105 s stock here); the tests that
    need numpy, scipy, pandas, matplotlib etc. skip themselves, the same on
    both sides.
  - regrtest-smoke is tools/regrtest.py's smoke selection in one process,
    `python -m test <modules> -q --randseed 1 --junit-xml <run>.xml` (nothing
    to install; the fixed seed gives both sides the same random values).
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import whole_program  # noqa: E402

SCRATCH = os.path.join(REPO, "build", "thirdparty")

# name -> pinned requirement (None: nothing to install)
SUITES = collections.OrderedDict([
    ("mpmath", "mpmath==1.3.0"),
    ("networkx", "networkx==3.6.1"),
    ("regrtest-smoke", None),
])
DEFAULT_SUITES = ("mpmath", "networkx")


def suite_dir(name):
    return os.path.join(SCRATCH, name)


def install(name, log=print):
    """pip install --target the pinned version into build/thirdparty/<name>,
    unless that version is there already. Returns the folder."""
    requirement = SUITES[name]
    target = suite_dir(name)
    stamp = os.path.join(target, ".installed")
    os.makedirs(target, exist_ok=True)
    ini = os.path.join(target, "pytest.ini")
    if not os.path.exists(ini):
        with open(ini, "w") as f:
            f.write("[pytest]\n")
    if requirement is None:
        return target
    if os.path.exists(stamp) and open(stamp).read().strip() == requirement:
        log("%s: %s already installed in %s" % (name, requirement, os.path.relpath(target, REPO)))
        return target
    log("%s: installing %s into %s" % (name, requirement, os.path.relpath(target, REPO)))
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--upgrade",
                    "--target", target, requirement], check=True, env=whole_program.stock_env())
    with open(stamp, "w") as f:
        f.write(requirement + "\n")
    return target


def smoke_modules():
    import regrtest
    return list(regrtest.SMOKE)


def suite_command(name, xml_path):
    """The command of one run of a suite, writing its junit XML to xml_path."""
    if name == "regrtest-smoke":
        return [sys.executable, "-m", "test", *smoke_modules(), "-q", "--randseed", "1",
                "--junit-xml", xml_path]
    return [sys.executable, "-m", "pytest", "--pyargs", name, "-q", "-p", "no:cacheprovider",
            "-p", "no:pyjion", "-c", os.path.join(suite_dir(name), "pytest.ini"),
            "--rootdir", suite_dir(name), "--junitxml", xml_path]


def suite_env(name):
    """The base environment of a suite's runs (the package on sys.path)."""
    env = dict(os.environ)
    if SUITES[name] is not None:
        env["PYTHONPATH"] = suite_dir(name) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


# ---- junit XML outcomes -------------------------------------------------

def _case_outcome(case):
    """One <testcase>'s outcome: passed, failed, error, skipped, xfail, xpass,
    or several joined by '+' (e.g. a failed call and a teardown error).
    Covers pytest's junitxml and CPython regrtest's --junit-xml."""
    kinds = set()
    for child in case:
        tag = child.tag
        if tag == "failure":
            kinds.add("failed")
        elif tag == "error":
            kinds.add("error")
        elif tag == "skipped":
            kinds.add("xfail" if child.get("type") == "pytest.xfail" else "skipped")
        elif tag == "output":               # regrtest: an expected failure
            kinds.add("xfail")
        elif tag == "outcome" and (child.text or "").strip() == "UNEXPECTED_SUCCESS":
            kinds.add("xpass")
    return "+".join(sorted(kinds)) if kinds else "passed"


def junit_outcomes(path):
    """{test id: outcome} from a junit XML file. The id is classname::name
    (pytest) or name (regrtest); a repeated id gets #2, #3, ... in file order."""
    root = ET.parse(path).getroot()
    outcomes = {}
    seen = collections.Counter()
    for case in root.iter("testcase"):
        classname, name = case.get("classname") or "", case.get("name") or ""
        test_id = "%s::%s" % (classname, name) if classname else name
        seen[test_id] += 1
        if seen[test_id] > 1:
            test_id = "%s#%d" % (test_id, seen[test_id])
        outcomes[test_id] = _case_outcome(case)
    return outcomes


def compare_outcomes(stock, jit):
    """[(test id, stock outcome, jit outcome)] for every test whose outcome
    differs, "missing" where one side has no such test."""
    return [(t, stock.get(t, "missing"), jit.get(t, "missing"))
            for t in sorted(set(stock) | set(jit)) if stock.get(t) != jit.get(t)]


def count_outcomes(outcomes):
    return dict(sorted(collections.Counter(outcomes.values()).items()))


# ---- one suite ----------------------------------------------------------

def run_suite(name, rounds, extra_jit_env, timeout=None, log=print):
    target = install(name, log)
    results_dir = os.path.join(SCRATCH, "results")
    os.makedirs(results_dir, exist_ok=True)
    tag = "-".join("%s%s" % (k.replace("PYJION_", "").lower(), v) for k, v in sorted(extra_jit_env.items()))
    xml = {}

    def command(mode, rnd):
        path = os.path.join(results_dir, "%s-%s%s-%d.xml" % (name, mode, "-" + tag if tag else "", rnd))
        if os.path.exists(path):
            os.unlink(path)
        xml[mode, rnd] = path
        return suite_command(name, path)

    log("%s: %d rounds, stock and JIT (%s)" % (name, rounds, " ".join(
        "%s=%s" % kv for kv in sorted(dict(whole_program.JIT_ENV, **extra_jit_env).items()))))
    report = whole_program.compare(command, rounds=rounds, extra_jit_env=extra_jit_env, cwd=target,
                                   timeout=timeout, base_env=suite_env(name),
                                   log=lambda line: log("  %s: %s" % (name, line)))
    outcomes = {}
    for key, path in xml.items():
        outcomes[key] = junit_outcomes(path) if os.path.exists(path) else None
    differences = []          # JIT run vs the stock run of its pair
    flaky = []                # stock runs vs the first stock run
    for rnd in range(rounds):
        s, j = outcomes.get(("stock", rnd)), outcomes.get(("jit", rnd))
        if s is None or j is None:
            differences.append({"round": rnd, "test": "<junit xml>", "stock": "written" if s is not None else "missing",
                                "jit": "written" if j is not None else "missing"})
            continue
        for test, so, jo in compare_outcomes(s, j):
            differences.append({"round": rnd, "test": test, "stock": so, "jit": jo})
        first = outcomes.get(("stock", 0))
        if rnd and first is not None:
            for test, a, b in compare_outcomes(first, s):
                flaky.append({"round": rnd, "test": test, "stock_round0": a, "stock": b})
    first_stock = outcomes.get(("stock", 0)) or {}
    report.update(suite=name, requirement=SUITES[name], differences=differences, flaky_on_stock=flaky,
                  tests=len(first_stock), outcome_counts=count_outcomes(first_stock))
    return report


def format_suite(report):
    lines = [whole_program.format_table(report, "== %s (%s): %d tests, stock outcomes %s" % (
        report["suite"], report["requirement"] or "stdlib", report["tests"], report["outcome_counts"]))]
    if report["differences"]:
        lines.append("OUTCOMES DIFFER, JIT vs stock (%d):" % len(report["differences"]))
        for d in report["differences"][:50]:
            lines.append("  round %d  %s: stock %s, jit %s" % (d["round"], d["test"], d["stock"], d["jit"]))
    else:
        lines.append("outcomes identical test by test in every pair")
    for d in report["flaky_on_stock"][:20]:
        lines.append("  flaky on stock: round %d  %s: %s, then %s" % (d["round"], d["test"], d["stock_round0"],
                                                                      d["stock"]))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", action="append", choices=list(SUITES),
                        help="suite to run (repeatable; default: %s)" % " ".join(DEFAULT_SUITES))
    parser.add_argument("--rounds", type=int, default=3, help="stock/JIT pairs per suite (default 3)")
    parser.add_argument("--jit-env", action="append", default=[], metavar="NAME=VALUE",
                        help="extra environment of the JIT runs (repeatable), e.g. PYJION_THRESHOLD=1000")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per run (default 1800)")
    parser.add_argument("--install-only", action="store_true", help="install the suites' packages and stop")
    parser.add_argument("--json", help="write the reports to this file")
    args = parser.parse_args(argv)
    try:
        extra = whole_program.parse_env_items(args.jit_env)
    except ValueError as exc:
        parser.error(str(exc))
    suites = args.suite or list(DEFAULT_SUITES)
    if args.install_only:
        for name in suites:
            install(name)
        return 0

    def log(line):
        print(line, file=sys.stderr, flush=True)

    reports = []
    for name in suites:
        report = run_suite(name, args.rounds, extra, timeout=args.timeout, log=log)
        reports.append(report)
        print(format_suite(report), flush=True)
        print(flush=True)
    bad = [r["suite"] for r in reports if r["differences"] or r["returncodes_differ"]]
    print("suites with differing outcomes: %s" % (" ".join(bad) or "none"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"jit_env": dict(whole_program.JIT_ENV, **extra), "suites": reports}, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
