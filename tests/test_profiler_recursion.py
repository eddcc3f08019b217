"""A frame refused by the recursion limit never runs: the profiler must not
count it (cProfile does not see it either), so calls == frames that ran."""
import subprocess
import sys
import textwrap


def test_refused_frames_are_not_counted():
    script = textwrap.dedent("""
        import pyjion
        ran = 0
        def down(n):
            global ran
            ran += 1
            return down(n + 1)
        def main():
            try:
                down(0)
            except RecursionError:
                pass
        for jit in (False, True):
            ran = 0
            pyjion.reset_stats()
            pyjion.enable(profile=True, jit=jit, threshold=0)
            main()
            pyjion.disable()
            calls = [v["calls"] for k, v in pyjion.stats()["functions"].items() if k[2] == "down"]
            print(ran, calls[0], pyjion.info(down).run_count > 0)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 2
    for line in lines:
        ran, calls, seen = line.split()
        assert int(ran) > 100
        assert calls == ran
        assert seen == "True"
