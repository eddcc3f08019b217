"""The profiler's clock (pyjion/profile_clock.h): config(profile_clock=...), the
ticking thread's life, and times right on average for calls far shorter than a tick.
Each case runs in a fresh interpreter: the clock and its thread are per process."""
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(source, timeout=120):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYJION")}
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(source)], capture_output=True,
                          text=True, env=env, timeout=timeout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.split()


def test_setting_checks_and_reads_back():
    out = run("""
        import pyjion
        print(pyjion.config()["profile_clock"])
        try:
            pyjion.config(profile_clock="rdtsc")
        except ValueError as e:
            print("bad-value" if "ticks" in str(e) else "wrong-message")
        pyjion.enable(profile=True)
        try:
            pyjion.config(profile_clock="tsc")
        except ValueError:
            print("refused-while-profiling")
        print(pyjion.config()["profile_clock"])
        pyjion.config(profile_clock="ticks")              # the same clock: nothing changes
        pyjion.config(profile=False, profile_clock="tsc")  # the profiler stops first
        print(pyjion.config()["profile_clock"])
        pyjion.disable()
    """)
    assert out == ["ticks", "bad-value", "refused-while-profiling", "ticks", "tsc"]


def test_the_ticking_thread_runs_only_while_the_ticks_clock_profiles():
    out = run("""
        import os, pyjion
        def threads():
            return len(os.listdir("/proc/self/task"))
        base = threads()
        pyjion.enable(profile=True)
        during = threads()
        pyjion.config(profile=False)
        after = threads()
        pyjion.config(profile_clock="tsc")
        pyjion.config(profile=True)
        exact = threads()
        pyjion.disable()
        print(during - base, after - base, exact - base)
    """)
    # (the JIT's sampler thread may come and go with enable(); count against it)
    during, after, exact = map(int, out)
    assert during - after == 1
    assert exact == after


def test_changing_the_clock_forgets_the_statistics():
    out = run("""
        import pyjion
        def f():
            return 1
        pyjion.enable(profile=True)
        for _ in range(10):
            f()
        pyjion.config(profile=False)
        before = [v["calls"] for k, v in pyjion.stats()["functions"].items() if k[2] == "f"]
        pyjion.config(profile_clock="tsc")
        after = [k for k in pyjion.stats()["functions"] if k[2] == "f"]
        pyjion.disable()
        print(before, after)
    """)
    assert out == ["[10]", "[]"]


SHORT_CALLS = """
    import sys, time, pyjion
    def work(n):
        t = 0
        for i in range(n):
            t += i
        return t
    def main():
        for _ in range(20000):
            work(40)
    pyjion.config(profile_clock=sys.argv[1] if len(sys.argv) > 1 else "ticks")
    pyjion.enable(profile=True, threshold=0)
    start = time.perf_counter()
    main()
    wall = time.perf_counter() - start
    pyjion.disable()
    st = {k[2]: v for k, v in pyjion.stats()["functions"].items()}
    print(st["work"]["calls"], "%.4f %.4f %.4f" % (st["work"]["total_time"], st["main"]["total_time"], wall))
"""


def test_calls_shorter_than_a_tick_add_up_to_their_time():
    # ~20,000 calls of a few microseconds each, 100 us per tick: each call is
    # timed 0 or a whole tick, their sum is right on average
    calls, work, main, wall = run(SHORT_CALLS)
    assert calls == "20000"
    work, main, wall = float(work), float(main), float(wall)
    assert 0.9 * wall <= main <= 1.05 * wall + 0.002
    assert 0.3 * main <= work <= main


def test_a_forked_child_keeps_its_clock_ticking():
    out = run("""
        import os, time, pyjion
        def spin(seconds):
            end = time.perf_counter() + seconds
            while time.perf_counter() < end:
                pass
        pyjion.enable(profile=True)
        pid = os.fork()
        if pid == 0:
            pyjion.reset_stats()
            spin(0.05)
            st = {k[2]: v for k, v in pyjion.stats()["functions"].items()}
            os.write(1, b"%.3f\\n" % st["spin"]["total_time"])
            os._exit(0)
        os.waitpid(pid, 0)
        pyjion.disable()
    """)
    (child,) = out
    assert 0.04 <= float(child) <= 0.2
