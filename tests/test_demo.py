"""`make demo` runs demo/demo.py: it must finish, agree with CPython, report a
speed-up, show every function of the bundled program compiled, and print a
profile table with the program's hot function."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_demo_runs_and_reports():
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYJION")}
    out = subprocess.run([sys.executable, os.path.join(ROOT, "demo", "demo.py")], capture_output=True,
                         text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "identical with and without the JIT" in text
    assert re.search(r"speed-up:\s+\d+\.\d\dx", text)
    for name in ("collatz_steps", "gcd", "gcd_sum", "integrate", "longest_collatz", "main"):
        assert re.search(r"^\s+%s\s+compiled\s+\d+ bytes of machine code" % name, text, re.M), name
    # the profile table: ncalls column for the hot function equals the program's call count
    assert re.search(r"^\s+29999\s+.*program\.py:\d+\(collatz_steps\)$", text, re.M)
