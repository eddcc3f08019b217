"""Imported at interpreter start-up by pyjion-startup.pth when PYJION is set
(PYJION=1), so whole programs, test runners and their subprocesses run with
the JIT. PYJION_THRESHOLD=N sets the threshold; PYJION_PROFILE=1 profiles."""
import os
import sys


def _flag(name):
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")


def _start():
    try:
        import pyjion
        threshold = os.environ.get("PYJION_THRESHOLD")
        pyjion.enable(threshold=int(threshold) if threshold else None,
                      profile=_flag("PYJION_PROFILE"))
    except Exception as exc:   # never stop the interpreter from starting
        print("pyjion: not enabled at start-up: %s" % exc, file=sys.stderr)


if _flag("PYJION"):
    _start()


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


if _flag("PYJION") and os.environ.get("PYJION_STATS_FILE"):
    _dump_stats_at_exit(os.environ["PYJION_STATS_FILE"])
