"""pyjion benchmark suite: every program in bench/programs under every mode.

Modes (see README.md):
  stock     no hook installed (pyjion.disable())
  cprofile  stock CPython with a cProfile.Profile enabled around each run
  hook      pyjion.enable(jit=False): the PEP 523 hook counts calls, never compiles
  jit       pyjion.enable(): the default settings a user gets from PYJION=1 (tiered:
            code is compiled once warm, loops move over by OSR; docs/tiering.md; on
            3.13 warm-up by samples, no hook installed)
  eager     pyjion.enable(threshold=0): every function compiled on its first call
  profile   pyjion.enable(profile=True): the default JIT plus pyjion's profiler

Each (program, mode) case loads a FRESH copy of the program module, so machine
code compiled in one mode (cached per code object) cannot leak into another.
Every timed round of a mode other than stock is paired with a stock round of
another fresh copy, run just before it (untimed by pytest-benchmark, timed by
the harness): the ratios compare the mode with the stock rounds taken under
the same machine load, which on a shared machine drifts from case to case.
Every round's result must equal the result of a stock run (differential check).
The hook is switched on and off inside the timed target, around the program's
run() only, so the harness's own code never runs under the hook.

Environment: BENCH_ROUNDS (timed rounds per case), BENCH_PROGRAMS and
BENCH_MODES (comma-separated subsets). conftest.py turns the timings into
ratios, results.json and RESULTS.md.
"""
import cProfile
import gc
import glob
import importlib.util
import itertools
import os
import sys
import time
import types

import pytest

import pyjion
from pyjion import _eval

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM_DIR = os.path.join(HERE, "programs")

# Cases run program by program, and for each program in this mode order: the
# modes a ratio compares run back to back (less drift from machine load), and
# within a program nothing has been compiled before stock, cprofile and hook run.
ALL_MODES = ("stock", "cprofile", "hook", "jit", "eager", "profile")
DEFAULT_ROUNDS = 9


def _env_list(name, default):
    raw = os.environ.get(name, "").strip()
    if not raw:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def all_programs():
    return sorted(os.path.basename(p)[:-3]
                  for p in glob.glob(os.path.join(PROGRAM_DIR, "*.py"))
                  if not os.path.basename(p).startswith("_"))


def rounds():
    return int(os.environ.get("BENCH_ROUNDS", DEFAULT_ROUNDS))


PROGRAMS = [p for p in _env_list("BENCH_PROGRAMS", all_programs())]
MODES = [m for m in _env_list("BENCH_MODES", ALL_MODES)]
for _m in MODES:
    if _m not in ALL_MODES:
        raise ValueError("BENCH_MODES: unknown mode %r (known: %s)" % (_m, ", ".join(ALL_MODES)))
for _p in PROGRAMS:
    if not os.path.exists(os.path.join(PROGRAM_DIR, _p + ".py")):
        raise ValueError("BENCH_PROGRAMS: no program %r in %s" % (_p, PROGRAM_DIR))

_fresh = itertools.count()


def load_fresh(program, tag):
    """Execute bench/programs/<program>.py as a brand-new module object (new code
    objects, no compiled code attached) under a unique name."""
    path = os.path.join(PROGRAM_DIR, program + ".py")
    name = "_bench_%s_%s_%d" % (program, tag, next(_fresh))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def unload(module):
    sys.modules.pop(module.__name__, None)


_reference = {}


def reference_result(program):
    """run() of a fresh module on stock CPython: what every mode must reproduce."""
    if program not in _reference:
        assert not pyjion.is_enabled(), "pyjion hook still installed before a stock reference run"
        module = load_fresh(program, "reference")
        try:
            _reference[program] = module.run()
        finally:
            unload(module)
    return _reference[program]


def module_functions(module):
    """Plain functions and methods defined by the program module itself."""
    found = []
    for value in vars(module).values():
        if isinstance(value, types.FunctionType) and value.__module__ == module.__name__:
            found.append(value)
        elif isinstance(value, type) and value.__module__ == module.__name__:
            for attr in vars(value).values():
                if isinstance(attr, (staticmethod, classmethod)):
                    attr = attr.__func__
                if isinstance(attr, types.FunctionType):
                    found.append(attr)
    return found


def jit_summary(module):
    """Per-program view of what the JIT did with the program's own functions."""
    summary = {"functions": 0, "compiled": 0, "failed": 0, "interpreted": 0, "reasons": {}}
    for fn in module_functions(module):
        try:
            info = pyjion.info(fn)
        except Exception as exc:           # report, never break the benchmark on it
            summary["reasons"]["info() raised %s" % type(exc).__name__] = \
                summary["reasons"].get("info() raised %s" % type(exc).__name__, 0) + 1
            continue
        if info.run_count == 0:
            continue                        # never called by run()
        summary["functions"] += 1
        state = getattr(info, "state", None)
        if getattr(info, "compiled", False):
            summary["compiled"] += 1
        elif getattr(info, "failed", False) or state == "failed":
            summary["failed"] += 1
            reason = getattr(info, "reason", None) or str(getattr(info, "compile_result", "?"))
            summary["reasons"][reason] = summary["reasons"].get(reason, 0) + 1
        else:
            summary["interpreted"] += 1
    return summary


def call_counts_cprofile(profiler, path):
    profiler.create_stats()
    return {"%s:%d" % (name, line): nc
            for (filename, line, name), (cc, nc, tt, ct, callers) in profiler.stats.items()
            if filename == path}


def call_counts_pyjion(path):
    counts = {}
    for key, entry in pyjion.stats().get("functions", {}).items():
        filename, line, name = key
        if filename == path:
            counts["%s:%d" % (name, line)] = entry["calls"]
    return counts


def make_target(mode, run, results):
    """The timed callable for one mode. Each mode's closure has its own name, so
    a faulthandler traceback after a crash names the mode it crashed in."""
    profiler = None
    if mode == "stock":
        def stock_target():
            results.append(run())
        return stock_target, profiler
    if mode == "cprofile":
        profiler = cProfile.Profile()

        def cprofile_target():
            profiler.enable()
            try:
                results.append(run())
            finally:
                profiler.disable()
        return cprofile_target, profiler
    if mode == "hook":
        def hook_target():
            pyjion.enable(jit=False)
            try:
                results.append(run())
            finally:
                pyjion.disable()
        return hook_target, profiler
    if mode == "jit":
        def jit_target():
            pyjion.config(threshold=_eval.DEFAULT_THRESHOLD, warmup=_eval.DEFAULT_WARMUP)
            pyjion.enable()
            try:
                results.append(run())
            finally:
                pyjion.disable()
        return jit_target, profiler
    if mode == "eager":
        def eager_target():
            pyjion.enable(threshold=0)
            try:
                results.append(run())
            finally:
                pyjion.disable()
        return eager_target, profiler
    if mode == "profile":
        def profile_target():
            pyjion.enable(threshold=_eval.DEFAULT_THRESHOLD, profile=True)
            try:
                results.append(run())
            finally:
                pyjion.disable()
        return profile_target, profiler
    raise ValueError(mode)


CASES = [pytest.param(program, mode, id="%s-%s" % (program, mode))
         for program in PROGRAMS for mode in MODES]


@pytest.mark.parametrize("program,mode", CASES)
def test_bench(benchmark, bench_record, program, mode):
    expected = reference_result(program)
    module = load_fresh(program, mode)
    run = module.run
    results = []
    extra = {}

    target, profiler = make_target(mode, run, results)

    # The stock partner of each round (see the module docstring).
    partner = load_fresh(program, "partner-" + mode) if mode != "stock" else None
    partner_times = []
    partner_results = []

    def stock_partner():
        start = time.perf_counter()
        partner_results.append(partner.run())
        partner_times.append(time.perf_counter() - start)

    benchmark.group = program
    n_rounds = rounds()
    warmup_rounds = 1
    pyjion.disable()
    pyjion.reset_stats()
    gc.collect()
    try:
        benchmark.pedantic(target, setup=stock_partner if partner is not None else None,
                           rounds=n_rounds, iterations=1, warmup_rounds=warmup_rounds)
        if mode in ("jit", "eager", "profile"):
            extra["jit"] = jit_summary(module)
            try:
                extra["jit_totals"] = dict(pyjion.stats().get("jit", {}))
            except Exception as exc:
                extra["jit_totals"] = {"error": repr(exc)}
        if mode == "profile":
            extra["calls"] = call_counts_pyjion(module.__file__)
        elif mode == "cprofile":
            extra["calls"] = call_counts_cprofile(profiler, module.__file__)
    finally:
        pyjion.disable()
        pyjion.reset_stats()
        unload(module)
        if partner is not None:
            unload(partner)

    for i, got in enumerate(results):
        if got != expected:
            pytest.fail("%s under mode %r: run %d returned %s, stock CPython returned %s\n"
                        "  full result:   %r\n  stock result:  %r"
                        % (program, mode, i, _short(got), _short(expected), got, expected),
                        pytrace=False)

    for i, got in enumerate(partner_results):
        if got != expected:
            pytest.fail("%s: stock partner run %d (of mode %r) returned %s, the reference run %s"
                        % (program, i, mode, _short(got), _short(expected)), pytrace=False)

    # only a mode that reproduced the stock results gets timings (and so ratios)
    extra["runs"] = len(results)
    if partner is not None:
        extra["paired_stock"] = partner_times[warmup_rounds:]
    stats = getattr(benchmark, "stats", None)
    times = list(stats.stats.data) if stats else []
    bench_record(program, mode, times, extra)


def _short(value, limit=160):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."
