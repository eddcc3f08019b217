"""Imported at interpreter start-up by pyjion-startup.pth when PYJION is set
(PYJION=1), so whole programs, test runners and their subprocesses run with
the JIT. PYJION_THRESHOLD=N sets the threshold; PYJION_PROFILE=1 profiles;
PYJION_JIT=0 enables pyjion but compiles nothing (pyjion.enable(jit=False),
as python -m pyjion --no-jit): the hook with no machine code behind it, whose
cost bench/macro_suite.py --no-compile measures.

A top-level module rather than part of the pyjion package: a subinterpreter
runs the .pth too, and there importing pyjion fails (its extension modules
load into one interpreter per process); that must stay silent, and telling a
subinterpreter from the main one up front (_xxsubinterpreters; 3.13's
_interpreters) would cost
every process a third of a millisecond."""
import os
import sys


def _flag(name):
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")


def _off(name):
    """Set to a "no" value; unset or empty leaves the default (on)."""
    return os.environ.get(name, "").strip().lower() in ("0", "false", "no", "off")


def _main_interpreter():
    try:
        import _interpreters as interpreters          # CPython 3.13
    except ImportError:
        try:
            import _xxsubinterpreters as interpreters  # CPython 3.11
        except ImportError:
            return True
    return interpreters.get_current() == interpreters.get_main()


def _start():
    try:
        import pyjion
    except Exception as exc:   # never stop the interpreter from starting
        if not isinstance(exc, ImportError) or _main_interpreter():
            print("pyjion: not enabled at start-up: %s" % exc, file=sys.stderr)
        return False
    if not pyjion._eval.in_main_interpreter():
        return False          # the main interpreter did not take pyjion; neither does this one
    try:
        threshold = os.environ.get("PYJION_THRESHOLD")
        pyjion.enable(threshold=int(threshold) if threshold else None,
                      profile=_flag("PYJION_PROFILE"), jit=not _off("PYJION_JIT"))
    except Exception as exc:   # never stop the interpreter from starting
        print("pyjion: not enabled at start-up: %s" % exc, file=sys.stderr)
        return False
    return True


def _dump_stats_at_exit(path):
    """PYJION_STATS_FILE=path: append this process's JIT counters as one JSON
    line at exit (tools/regrtest.py sums them over test processes)."""
    import atexit
    import json

    def dump():
        try:
            import pyjion
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps(pyjion.stats()["jit"]) + "\n")
        except Exception:
            pass

    atexit.register(dump)


if _flag("PYJION") and _start() and os.environ.get("PYJION_STATS_FILE"):
    _dump_stats_at_exit(os.environ["PYJION_STATS_FILE"])
