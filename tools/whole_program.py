#!/usr/bin/env python3
"""Whole-program cost of the JIT: runs one command several times, stock CPython
and with pyjion switched on at start-up, and compares CPU time, wall time and
peak RSS.

    python tools/whole_program.py --rounds 5 -- python -m test test_set -q
    python tools/whole_program.py --rounds 3 --jit-env PYJION_THRESHOLD=1000 --json out.json -- python prog.py

Each round is a pair of runs of the same command: one stock (the environment
without any PYJION* variable) and one with the JIT (PYJION=1, which makes the
start-up .pth enable pyjion with its default settings, plus the --jit-env
variables). The order inside a pair alternates from round to round (stock
first, then JIT first, ...), so a load that drifts over a pair does not always
favour the same side. Ratios are JIT/stock per pair (lower is better), and the
summary is the median of the per-pair ratios: on a shared machine the speed
drifts between pairs, and a ratio taken inside one pair sees one load.

What is measured, per run (os.wait4 on the command's process, by a small
launcher that starts it; see LAUNCHER):
  cpu   user + system CPU seconds of the child and of every descendant it
        waited for (the kernel adds a reaped child's times to its parent's
        children times, so wait4 sees the whole tree; a daemon left running
        and never reaped is not counted)
  wall  seconds from start to exit (time.monotonic)
  rss   peak resident set size (ru_maxrss, MiB): the kernel reports the
        largest peak of any single process in the tree (the child's own or
        that of its largest reaped descendant), not the sum over processes
        alive at the same time. For a command that runs in one process, as
        the measured suites do, that is its peak.

A command starting with "python" or "python3" runs with this interpreter
(sys.executable), so the .venv's pyjion and start-up .pth are the ones used.
Exit status: 0, or 1 when the JIT runs' exit codes differ from the stock ones.
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time

JIT_ENV = {"PYJION": "1"}


def stock_env(base=None):
    """The environment of a stock run: base (default os.environ) without any
    PYJION* variable, so the start-up .pth leaves the interpreter alone."""
    env = dict(os.environ if base is None else base)
    for name in list(env):
        if name.startswith("PYJION"):
            del env[name]
    return env


def jit_env(extra=None, base=None):
    """The environment of a JIT run: the stock one plus PYJION=1 and extra."""
    env = stock_env(base)
    env.update(JIT_ENV)
    env.update(extra or {})
    return env


def parse_env_items(items):
    """["K=V", ...] -> {"K": "V", ...}"""
    out = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ValueError("expected NAME=VALUE, got %r" % item)
        out[name] = value
    return out


def resolve_command(cmd):
    cmd = list(cmd)
    if cmd and cmd[0] in ("python", "python3"):
        cmd[0] = sys.executable
    return cmd


# The measured command runs as the child of this small launcher (python -I -S:
# no site, so no start-up .pth and no JIT in it), never as a direct child of the
# measuring process: on exec, Linux carries the peak RSS of the image the child
# was forked from into the child's ru_maxrss, so a direct child of a big parent
# (pytest, say) would report at least the parent's peak. The launcher's own
# peak (about 9 MiB) is below that of any Python program measured. It reports
# the command's wait4 status and rusage, and its wall time, on a pipe.
LAUNCHER = r"""
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_DFL)
fd, cmd = int(sys.argv[1]), sys.argv[2:]
os.set_inheritable(fd, False)      # the command and its daemons never hold the pipe open
start = time.monotonic()
try:
    pid = os.posix_spawnp(cmd[0], cmd, os.environ)
except OSError as exc:
    sys.stderr.write("whole_program: cannot run %r: %s\n" % (cmd[0], exc))
    os.write(fd, b"-1 0 0 0 0")
    sys.exit(127)
while True:
    try:
        _, status, ru = os.wait4(pid, 0)
        break
    except InterruptedError:
        pass
wall = time.monotonic() - start
os.write(fd, ("%d %r %r %d %r" % (status, ru.ru_utime, ru.ru_stime, ru.ru_maxrss, wall)).encode())
"""


def _launcher_setup():
    # Started from a background job, children would inherit SIGINT ignored
    # (CPython's own suite tests Ctrl-C); the launcher restores the default too.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def measure(cmd, env=None, cwd=None, timeout=None, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
    """Runs cmd once and returns {"cpu_s", "user_s", "sys_s", "wall_s",
    "peak_rss_mb", "returncode", "timed_out"} (see the module docstring).

    The command runs under LAUNCHER in a session of its own, so a timeout
    kills the whole process group."""
    read_fd, write_fd = os.pipe()
    start = time.monotonic()
    try:
        proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", LAUNCHER, str(write_fd)]
                                + resolve_command(cmd), env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                                stdout=stdout, stderr=stderr, start_new_session=True,
                                pass_fds=(write_fd,), preexec_fn=_launcher_setup)
    finally:
        os.close(write_fd)
    timed_out = []
    timer = None
    if timeout:
        def kill():
            timed_out.append(True)
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
        timer = threading.Timer(timeout, kill)
        timer.daemon = True
        timer.start()
    try:
        with os.fdopen(read_fd, "rb") as pipe:
            report = pipe.read().split()
        proc.wait()
    finally:
        if timer is not None:
            timer.cancel()
    wall = time.monotonic() - start
    if len(report) == 5 and int(report[0]) >= 0:
        status, user, system, maxrss, wall = (int(report[0]), float(report[1]), float(report[2]),
                                              int(report[3]), float(report[4]))
        returncode = os.waitstatus_to_exitcode(status)
    else:                                   # killed before it reported, or the command did not start
        user = system = 0.0
        maxrss = 0
        returncode = proc.returncode if proc.returncode else -signal.SIGKILL
    return {"cpu_s": user + system, "user_s": user, "sys_s": system, "wall_s": wall,
            "peak_rss_mb": maxrss / 1024.0,          # ru_maxrss is in KiB on Linux
            "returncode": returncode, "timed_out": bool(timed_out)}


def _ratio(num, den):
    return num / den if den > 0 else None


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def compare(cmd, rounds=3, extra_jit_env=None, cwd=None, timeout=None, warmup=0, base_env=None,
            on_run=None, log=None, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
    """Paired stock/JIT runs of cmd; returns the report dict (see summarize()).

    cmd is a list, or a callable (mode, round) -> list for commands that differ
    per run (e.g. a per-run result file); mode is "stock" or "jit", round is
    -1.. for warm-up runs and 0.. for measured ones. on_run(mode, round, result)
    is called after each measured run; log(text) gets a line per run."""
    envs = {"stock": stock_env(base_env), "jit": jit_env(extra_jit_env, base_env)}

    def command(mode, rnd):
        return list(cmd(mode, rnd)) if callable(cmd) else list(cmd)

    for w in range(warmup):
        for mode in ("stock", "jit"):
            measure(command(mode, -1 - w), envs[mode], cwd, timeout, stdout, stderr)
    runs = []
    commands = {}
    for rnd in range(rounds):
        order = ("stock", "jit") if rnd % 2 == 0 else ("jit", "stock")
        for mode in order:
            commands[mode, rnd] = command(mode, rnd)
            result = measure(commands[mode, rnd], envs[mode], cwd, timeout, stdout, stderr)
            result.update(mode=mode, round=rnd)
            runs.append(result)
            if log:
                log("round %d %-5s cpu %8.2fs  wall %8.2fs  peak rss %7.1f MiB  exit %s%s"
                    % (rnd, mode, result["cpu_s"], result["wall_s"], result["peak_rss_mb"],
                       result["returncode"], "  TIMEOUT" if result["timed_out"] else ""))
            if on_run:
                on_run(mode, rnd, result)
    return summarize(runs, command=commands.get(("stock", 0)), extra_jit_env=extra_jit_env or {})


def summarize(runs, command=None, extra_jit_env=None):
    """Per-pair ratios JIT/stock of cpu, wall and rss, and their medians; also
    the median absolute values per mode."""
    by_round = {}
    for r in runs:
        by_round.setdefault(r["round"], {})[r["mode"]] = r
    pairs = []
    for rnd in sorted(by_round):
        pair = by_round[rnd]
        if "stock" not in pair or "jit" not in pair:
            continue
        s, j = pair["stock"], pair["jit"]
        pairs.append({"round": rnd,
                      "cpu_ratio": _ratio(j["cpu_s"], s["cpu_s"]),
                      "wall_ratio": _ratio(j["wall_s"], s["wall_s"]),
                      "rss_ratio": _ratio(j["peak_rss_mb"], s["peak_rss_mb"]),
                      "stock_first": rnd % 2 == 0})
    medians = {}
    for mode in ("stock", "jit"):
        mine = [r for r in runs if r["mode"] == mode]
        medians[mode] = {key: _median([r[key] for r in mine]) for key in ("cpu_s", "wall_s", "peak_rss_mb")}
    ratios = {key: _median([p[key] for p in pairs]) for key in ("cpu_ratio", "wall_ratio", "rss_ratio")}
    stock_codes = sorted({r["returncode"] for r in runs if r["mode"] == "stock"})
    jit_codes = sorted({r["returncode"] for r in runs if r["mode"] == "jit"})
    return {"command": command, "jit_env": dict(JIT_ENV, **(extra_jit_env or {})),
            "python": sys.version.split()[0], "rounds": len(pairs), "runs": runs, "pairs": pairs,
            "medians": medians, "ratios": ratios,
            "returncodes": {"stock": stock_codes, "jit": jit_codes},
            "returncodes_differ": stock_codes != jit_codes}


def _fmt(value, spec):
    return "-" if value is None else format(value, spec)


def format_table(report, title=None):
    lines = []
    if title:
        lines.append(title)
    lines.append("round  stock cpu s  jit cpu s  cpu jit/stock  wall jit/stock  stock rss MiB  jit rss MiB  rss jit/stock")
    by_round = {}
    for r in report["runs"]:
        by_round.setdefault(r["round"], {})[r["mode"]] = r
    for p in report["pairs"]:
        s, j = by_round[p["round"]]["stock"], by_round[p["round"]]["jit"]
        lines.append("%5d  %11.2f  %9.2f  %13s  %14s  %13.1f  %11.1f  %13s"
                     % (p["round"], s["cpu_s"], j["cpu_s"], _fmt(p["cpu_ratio"], ".3f"),
                        _fmt(p["wall_ratio"], ".3f"), s["peak_rss_mb"], j["peak_rss_mb"],
                        _fmt(p["rss_ratio"], ".3f")))
    m, r = report["medians"], report["ratios"]
    lines.append("median %11s  %9s  %13s  %14s  %13s  %11s  %13s"
                 % (_fmt(m["stock"]["cpu_s"], ".2f"), _fmt(m["jit"]["cpu_s"], ".2f"), _fmt(r["cpu_ratio"], ".3f"),
                    _fmt(r["wall_ratio"], ".3f"), _fmt(m["stock"]["peak_rss_mb"], ".1f"),
                    _fmt(m["jit"]["peak_rss_mb"], ".1f"), _fmt(r["rss_ratio"], ".3f")))
    if report["returncodes_differ"]:
        lines.append("exit codes differ: stock %s, jit %s" % (report["returncodes"]["stock"],
                                                              report["returncodes"]["jit"]))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="stock/JIT pairs (default 3)")
    parser.add_argument("--warmup", type=int, default=0, help="unmeasured pairs first (default 0)")
    parser.add_argument("--jit-env", action="append", default=[], metavar="NAME=VALUE",
                        help="extra environment of the JIT runs (repeatable), e.g. PYJION_THRESHOLD=0")
    parser.add_argument("--cwd", help="working directory of the command")
    parser.add_argument("--timeout", type=float, help="seconds per run (the process group is killed)")
    parser.add_argument("--show-output", action="store_true", help="let the command print (default: discarded)")
    parser.add_argument("--json", help="write the report to this file")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- command and its arguments")
    args = parser.parse_args(argv)
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        parser.error("no command given (put it after --)")
    try:
        extra = parse_env_items(args.jit_env)
    except ValueError as exc:
        parser.error(str(exc))
    out = None if args.show_output else subprocess.DEVNULL
    report = compare(cmd, rounds=args.rounds, extra_jit_env=extra, cwd=args.cwd, timeout=args.timeout,
                     warmup=args.warmup, log=lambda line: print(line, file=sys.stderr, flush=True),
                     stdout=out, stderr=out)
    print(format_table(report, "%s  (JIT env: %s)" % (" ".join(cmd), " ".join(
        "%s=%s" % kv for kv in sorted(report["jit_env"].items())))))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 1 if report["returncodes_differ"] else 0


if __name__ == "__main__":
    sys.exit(main())
