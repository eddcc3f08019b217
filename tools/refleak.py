"""Reference-leak hunting on a release build of CPython (no sys.gettotalrefcount).

regrtest's `-R warmup:runs` needs a debug build. This does the same on a
release build: run a body repeatedly, clean the interpreter's caches and
collect garbage after each round, and measure per round

- references: the sum of sys.getrefcount() over a fixed set of tracked
  objects taken before the measured rounds: everything the garbage collector
  tracks, the singletons (None, True, False, Ellipsis, NotImplemented), the
  small ints, the builtins, every type seen, and the constants and names of
  every code object (interned strings, numbers). A body that leaks one
  reference to an argument, a constant, None or a type per round makes this
  sum grow by one per round;
- memory blocks: sys.getallocatedblocks() (a leaked new object never frees
  its blocks);
- file descriptors: entries of /proc/self/fd.

As with -R, a body leaks when the measured deltas of references or of blocks
are all >= 1 (every measured round grew), or the file descriptors changed.

Three ways to use it:

    python tools/refleak.py -R 3:3 tests/test_ops_objects.py -q   # pytest, each test repeated
    python tools/refleak.py -R 3:3 --regrtest test_with test_scope # regrtest modules, in-process
    from refleak import hunt; report = hunt(body, warmup=3, runs=3)

With pytest (also `pytest -p refleak --refleak 3:3` with tools/ on sys.path)
every test runs warmup+runs times (set-up, call and tear-down each time) and
then once more as usual, failing with a LeakError that names the deltas and
the objects whose reference counts grew. Tests that start subprocesses run
once, unmeasured; `@pytest.mark.no_refleak` opts a test out. With --regrtest every module's unittest suite is
loaded once and run warmup+runs times with the JIT forced on every function
(threshold 0), as `python -m test -R 3:3 MODULE` would on a debug build.
PYJION_REFLEAK_NOJIT=1 measures the same without the JIT (stock CPython),
to tell leaks of compiled code from leaks of the test or of CPython."""
import array
import builtins
import gc
import os
import sys
import types

__all__ = ["LeakError", "LeakReport", "hunt", "check", "cleanup"]


class LeakError(AssertionError):
    pass


class LeakReport:
    def __init__(self, name, refs, blocks, fds):
        self.name, self.refs, self.blocks, self.fds = name, refs, blocks, fds
        self.suspects = []      # (repr, growth) of objects whose count grew every round

    @property
    def leaked(self):
        return bool(self.kinds())

    def kinds(self):
        out = []
        if self.refs and all(d >= 1 for d in self.refs):
            out.append(("references", self.refs))
        if self.blocks and all(d >= 1 for d in self.blocks):
            out.append(("memory blocks", self.blocks))
        if any(self.fds):
            out.append(("file descriptors", self.fds))
        return out

    def confirmed_by(self, again):
        """The report of a leak seen in both self and `again` (a second hunt):
        round by round the smaller growth of the two, 0 where they disagree
        in sign. Activity outside the body (a finaliser, a first-time cache
        fill) adds to a round now and then; a real leak adds to every round
        of both hunts, so the floor is the leak. Suspects come from `again`."""
        def floor(a, b):
            return [min(x, y) if x > 0 and y > 0 else max(x, y) if x < 0 and y < 0 else 0
                    for x, y in zip(a, b)]
        out = LeakReport(self.name, floor(self.refs, again.refs), floor(self.blocks, again.blocks),
                         floor(self.fds, again.fds))
        out.suspects = again.suspects
        return out

    def __str__(self):
        kinds = self.kinds()
        if not kinds:
            return "%s: no leak (references %s, blocks %s)" % (self.name, self.refs, self.blocks)
        text = "; ".join("%s leaked %s %s, sum=%d" % (self.name, d, what, sum(d)) for what, d in kinds)
        if self.suspects:
            text += "\n  references grew every round on: " + "; ".join(
                "%s (+%d)" % s for s in self.suspects[:10])
        return text


def _fd_count():
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return 0


class _Saved:
    """Process-wide registries a test may legitimately add to, saved when a
    hunt starts and put back after every round (as regrtest's -R does):
    warnings filters, copyreg's dispatch table, the path importer cache (a
    test importing from a temporary directory adds an entry per round),
    zipimport's directory cache."""

    def __init__(self):
        import copyreg
        import warnings
        self.filters = warnings.filters[:]
        self.dispatch = copyreg.dispatch_table.copy()
        self.importers = sys.path_importer_cache.copy()
        zipimport = sys.modules.get("zipimport")
        self.zipcache = zipimport._zip_directory_cache.copy() if zipimport is not None else None

    def restore(self):
        import copyreg
        import warnings
        warnings.filters[:] = self.filters
        warnings._filters_mutated()
        copyreg.dispatch_table.clear()
        copyreg.dispatch_table.update(self.dispatch)
        sys.path_importer_cache.clear()
        sys.path_importer_cache.update(self.importers)
        zipimport = sys.modules.get("zipimport")
        if zipimport is not None and self.zipcache is not None:
            zipimport._zip_directory_cache.clear()
            zipimport._zip_directory_cache.update(self.zipcache)


_saved = None


def cleanup():
    """Empties the caches that legitimately fill up as code runs (what
    regrtest's dash_R_cleanup and clear_caches do, the parts that matter here),
    then collects garbage."""
    if _saved is not None:
        _saved.restore()
    sys._clear_type_cache()     # the method cache holds strong refs to attribute names
    for name, clear in (("re", "purge"), ("linecache", "clearcache"), ("fnmatch", None),
                        ("typing", None), ("struct", "_clearcache"), ("inspect", None),
                        ("traceback", None), ("doctest", None), ("filecmp", None)):
        mod = sys.modules.get(name)
        if mod is None:
            continue
        if name == "fnmatch":
            mod._compile_pattern.cache_clear()
        elif name == "typing":
            for f in getattr(mod, "_cleanups", ()):
                f()
        elif name == "inspect":
            mod._filesbymodname.clear()
            mod.modulesbyfile.clear()
        elif name == "doctest":
            mod.master = None
        elif name == "filecmp":
            mod._cache.clear()
        elif clear is not None and hasattr(mod, clear):
            getattr(mod, clear)()
    bdb = sys.modules.get("bdb")
    if bdb is not None:       # every Breakpoint ever made stays in class-level registries
        bdb.Breakpoint.clearBreakpoints()
    for _ in range(3):
        if not gc.collect():
            break


def _tracked_objects():
    """The fixed set whose reference counts are summed (deduplicated by id)."""
    seen = {}

    def add(o):
        seen.setdefault(id(o), o)

    for o in (None, True, False, Ellipsis, NotImplemented, (), "", b""):
        add(o)
    for i in range(-5, 257):
        add(i)
    for o in vars(builtins).values():
        add(o)
    for o in gc.get_objects():
        add(o)
        add(type(o))
        if isinstance(o, types.CodeType):
            for c in o.co_consts:
                add(c)
            for n in o.co_names + o.co_varnames + o.co_cellvars + o.co_freevars:
                add(n)
        for r in gc.get_referents(o):   # what containers hold: strs, ints, plain objects
            add(r)
    for mod in list(sys.modules.values()):
        add(mod)
    return list(seen.values())


def _ref_sum(objs):
    getrefcount = sys.getrefcount
    return sum(map(getrefcount, objs))


def hunt(body, warmup=3, runs=3, name="body", detail=False):
    """Runs body() warmup+runs times; returns a LeakReport of the measured
    rounds' deltas. Exceptions from body propagate. detail=True also names
    the tracked objects whose reference count grew in every measured round
    (report.suspects)."""
    global _saved
    outer, _saved = _saved, _Saved()
    try:
        return _hunt(body, warmup, runs, name, detail)
    finally:
        _saved = outer


def _hunt(body, warmup, runs, name, detail):
    cleanup()
    # The last warm-up round runs inside the measuring loop below, so
    # warmup + runs rounds in all, as with regrtest's -R.
    for _ in range(warmup - 1):
        body()
        cleanup()
    tracked = _tracked_objects()
    cleanup()
    # Every measurement is taken in the same state of this frame (the loop
    # variable aside, whose small int changes but adds one reference each
    # time), and goes to a preallocated array: a list of small ints, or a
    # local still bound to one, would itself add references to tracked objects.
    # Round 1 is the last warm-up: the first round run in this loop measures
    # differently (by a reference or two) from the later ones.
    counts = array.array("q", bytes(8 * 3 * (runs + 2)))
    # detail: every tracked object's count per round, in one array made now
    # (arrays kept per round would add a reference to their type every round)
    n = len(tracked)
    per_object = array.array("q", bytes(8 * n * (runs + 2))) if detail else None
    for i in range(runs + 2):
        if i >= 1:
            body()
            cleanup()
        counts[3 * i] = _ref_sum(tracked)
        counts[3 * i + 1] = sys.getallocatedblocks()
        counts[3 * i + 2] = _fd_count()
        if detail:
            per_object[n * i:n * (i + 1)] = array.array("q", map(sys.getrefcount, tracked))
    suspects = []
    if detail:
        for k in range(n):
            if all(per_object[n * r + k] > per_object[n * (r - 1) + k] for r in range(2, runs + 2)):
                try:
                    text = repr(tracked[k])[:120]
                except Exception:
                    text = "<%s object>" % type(tracked[k]).__name__
                suspects.append((text, per_object[n * (runs + 1) + k] - per_object[n + k]))
    del tracked
    refs, blocks, fds = ([counts[3 * i + k] - counts[3 * i + k - 3] for i in range(2, runs + 2)]
                         for k in range(3))
    report = LeakReport(name, list(refs), list(blocks), list(fds))
    report.suspects = suspects
    return report


def confirm(report, body, runs, name, retries=2):
    """The verdict on a first hunt's report: a growth it shows is measured
    again (detail=True, naming the objects), up to `retries` times. A one-off
    growth (a cache that filled in a measured round) does not come back; a
    leak does. References from outside the body (a finaliser that runs in
    some round) move single rounds either way, so one retry that shows the
    leak confirms it, reported as the floor of the two hunts (confirmed_by);
    a retry that does not show it asks for another."""
    for _ in range(retries if report.leaked else 0):
        again = hunt(body, 1, runs, name, detail=True)
        if again.leaked:
            return report.confirmed_by(again)
        report = again
    return report


def check(body, warmup=3, runs=3, name="body", retries=2):
    """hunt() and confirm(), raising LeakError on a leak."""
    report = confirm(hunt(body, warmup, runs, name), body, runs, name, retries)
    if report.leaked:
        raise LeakError(str(report))
    return report


def parse_spec(spec):
    warmup, _, runs = spec.partition(":")
    return int(warmup or 3), int(runs or 3)


# ---- pytest plugin ------------------------------------------------------------------

def pytest_addoption(parser):
    parser.addoption("--refleak", metavar="WARMUP:RUNS", default=None,
                     help="run every test WARMUP+RUNS times and fail it if the measured runs "
                          "leak references, memory blocks or file descriptors")


def pytest_configure(config):
    spec = config.getoption("--refleak", None)
    config._refleak = parse_spec(spec) if spec else None
    config.addinivalue_line("markers", "no_refleak: never repeated by --refleak")
    import collections
    config._refleak_tally = collections.Counter()


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    spec = getattr(config, "_refleak", None)
    if spec is None:
        return
    terminalreporter.write_line("refleak -R %d:%d: %s" % (spec[0], spec[1], ", ".join(
        "%d %s" % (n, what) for what, n in sorted(config._refleak_tally.items())) or "no tests"))


def pytest_runtest_protocol(item, nextitem):
    """Runs the whole test (fixture set-up, call, tear-down) warmup+runs
    times unlogged, measuring leaks across those rounds, then once more as
    usual, failing in the call if the rounds leaked. Set-up and tear-down
    belong to each round so that fixtures which record what a test did
    (monkeypatch's undo list, sys.modules entries to remove) start afresh."""
    spec = getattr(item.config, "_refleak", None)
    if spec is None:
        return None
    if item.get_closest_marker("no_refleak") is not None:
        item.config._refleak_tally["opted out (no_refleak)"] += 1
        return None
    from _pytest.runner import runtestprotocol
    bad = []

    def body():
        if bad:
            return
        _fresh_request(item)
        # nextitem=None: tear down every fixture, session-scoped ones too (a
        # session fixture such as tmp_path_factory keeps a finalizer per use).
        for rep in runtestprotocol(item, nextitem=None, log=False):
            if not rep.passed:
                bad.append(rep)

    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    # The first run tells whether the test works in this process at all: one
    # that starts subprocesses (crash tests, start-up tests) is not measured.
    tally = item.config._refleak_tally
    if _starts_subprocess(body):
        tally["ran once (starts subprocesses)"] += 1
    elif bad:
        tally["failed or skipped before measuring"] += 1
    else:
        try:
            check(body, max(spec[0] - 1, 0), spec[1], name=item.nodeid)
            tally["measured, no leak"] += 1
        except LeakError as exc:
            item._refleak_error = exc
            tally["leaked"] += 1
    _fresh_request(item)
    runtestprotocol(item, nextitem=nextitem, log=True)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


def _fresh_request(item):
    # Tear-down empties the item's fixture values; set-up needs a new request
    # (what pytest-rerunfailures does before running a test again).
    init = getattr(item, "_initrequest", None)
    if init is not None:
        init()


def pytest_runtest_call(item):
    error = getattr(item, "_refleak_error", None)
    if error is not None:
        del item._refleak_error
        raise error


def _starts_subprocess(body):
    import subprocess
    started = []
    original = subprocess.Popen.__init__

    def init(self, *args, **kwargs):
        started.append(True)
        original(self, *args, **kwargs)

    subprocess.Popen.__init__ = init
    try:
        body()
    finally:
        subprocess.Popen.__init__ = original
    return bool(started)


try:
    import pytest as _pytest
except ImportError:        # hunt() and check() work without pytest
    pass
else:
    pytest_runtest_protocol = _pytest.hookimpl(tryfirst=True)(pytest_runtest_protocol)
    pytest_runtest_call = _pytest.hookimpl(tryfirst=True)(pytest_runtest_call)


# ---- regrtest modules in-process ----------------------------------------------------

def _jit_on():
    if os.environ.get("PYJION_REFLEAK_NOJIT"):
        return
    import pyjion
    pyjion.enable(threshold=0)


def _jit_off():
    if os.environ.get("PYJION_REFLEAK_NOJIT"):
        return
    import pyjion
    pyjion.disable()


def regrtest_module(module, warmup, runs):
    """Imports test.<module> once and runs its tests warmup+runs times with
    the JIT forced; returns (LeakReport, problems) where problems lists the
    rounds that failed."""
    import importlib
    import unittest
    from test import support
    from test.libregrtest.utils import clear_caches
    support.verbose = 0
    mod = importlib.import_module("test." + module)
    run_suite = getattr(mod, "test_main", None) if not hasattr(mod, "load_tests") else None
    problems = []

    def body():
        _jit_on()
        try:
            if run_suite is not None:
                try:
                    run_suite()
                except Exception as exc:      # support.run_unittest raises TestFailed
                    problems.append(repr(exc)[:300])
            else:
                # loaded afresh each round, as regrtest does (a suite drops its tests as they run)
                suite = unittest.TestLoader().loadTestsFromModule(mod)
                result = unittest.TestResult()
                suite.run(result)
                del suite
                for test, tb in result.errors + result.failures:
                    problems.append("%s: %s" % (test, tb.strip().splitlines()[-1]))
        finally:
            _jit_off()
        clear_caches()

    report = confirm(hunt(body, warmup, runs, name=module), body, runs, module)
    return report, problems


def _one_module(module, warmup, runs):
    """In this process: one module's measurement as a JSON line on stdout."""
    import json
    compiled_before = _compiled_count()
    report, problems = regrtest_module(module, warmup, runs)
    print("REFLEAK " + json.dumps({"module": module, "leaked": report.leaked, "text": str(report),
                                   "refs": report.refs, "blocks": report.blocks, "fds": report.fds,
                                   "problems": problems[:20], "failing_runs": len(problems),
                                   "compiled": _compiled_count() - compiled_before}), flush=True)


def _compiled_count():
    if os.environ.get("PYJION_REFLEAK_NOJIT"):
        return 0
    import pyjion
    return pyjion.stats()["jit"]["compiled"]


def _main_regrtest(modules, warmup, runs, timeout):
    """Each module in its own process (a crash or a hang stays in one module)."""
    import json
    import subprocess
    leaked = errors = 0
    for module in modules:
        env = dict(os.environ)
        for name in ("PYJION", "PYJION_THRESHOLD", "PYJION_STATS_FILE"):
            env.pop(name, None)
        try:
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "-R", "%d:%d" % (warmup, runs),
                                   "--in-process", module], capture_output=True, text=True, timeout=timeout,
                                  env=env, stdin=subprocess.DEVNULL)
            lines = [line for line in proc.stdout.splitlines() if line.startswith("REFLEAK ")]
            result = json.loads(lines[-1][8:]) if lines else None
            problem = None if result else "exit code %s: %s" % (proc.returncode, proc.stderr.strip()[-300:])
        except subprocess.TimeoutExpired:
            result, problem = None, "timeout after %d s" % timeout
        if result is None:
            errors += 1
            print("%-28s error: %s" % (module, problem), flush=True)
            continue
        leaked += result["leaked"]
        print("%-28s %-4s refs %s blocks %s fds %s; %d code objects compiled%s" % (
            module, "LEAK" if result["leaked"] else "ok", result["refs"], result["blocks"], result["fds"],
            result["compiled"], "; %d failing test runs" % result["failing_runs"] if result["failing_runs"] else ""),
            flush=True)
        if result["leaked"]:
            print("    " + result["text"].replace("\n", "\n    "), flush=True)
    print("%d modules: %d leaked, %d could not be measured" % (len(modules), leaked, errors))
    return 1 if leaked or errors else 0


def main(argv=None):
    import argparse
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-R", "--huntrleaks", default="3:3", metavar="WARMUP:RUNS")
    parser.add_argument("--regrtest", nargs="+", metavar="MODULE",
                        help="regrtest modules, each run in-process in a process of its own "
                             "(`smoke`: tools/regrtest.py's smoke selection)")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per regrtest module")
    parser.add_argument("--in-process", metavar="MODULE", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args(argv)
    warmup, runs = parse_spec(args.huntrleaks)
    if args.in_process:
        _one_module(args.in_process, warmup, runs)
        return 0
    if args.regrtest:
        modules = args.regrtest
        if modules == ["smoke"]:
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            from regrtest import SMOKE
            modules = SMOKE
        return _main_regrtest(modules, warmup, runs, args.timeout)
    import pytest
    return pytest.main(["--refleak", "%d:%d" % (warmup, runs), *rest], plugins=[sys.modules[__name__]])


if __name__ == "__main__":
    sys.modules.setdefault("refleak", sys.modules[__name__])
    sys.exit(main())
