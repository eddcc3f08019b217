"""config(perf_map=True) / PYJION_PERF_MAP=1: every block of machine code is
named in /tmp/perf-<pid>.map (Linux perf's format: hex start, hex size, name)."""
import os
import subprocess
import sys

import pytest

from jitcheck import PY313

# The shared direct-call stubs (machine code that pushes a callee's frame)
# exist on 3.11 only: 3.13's compiled code calls through vectorcall.
NO_STUBS_313 = pytest.mark.xfail(PY313, reason="3.13 layer: no direct-call stubs, compiled code calls "
                                 "through vectorcall (issue 26)", strict=True)

PROGRAM = r'''
import os, sys
import pyjion
pyjion.enable(threshold=0)

def work(n):
    total = 0
    for i in range(n):
        total += step(i)
    return total

def step(i):
    return i * 2

print(work(50))
code, size, address = pyjion.native(work)
print("work", hex(address), hex(size))
print("map", pyjion.config()["perf_map"])
if len(sys.argv) > 1:          # the child's map is its own
    pid = os.fork()
    if pid == 0:
        def child_only(x):
            return x + 1
        child_only(1)
        os._exit(0)
    os.waitpid(pid, 0)
    print("child", pid)
'''


def run(args=(), env_on=True, extra=""):
    env = dict(os.environ)
    env.pop("PYJION", None)
    if env_on:
        env["PYJION_PERF_MAP"] = "1"
    else:
        env.pop("PYJION_PERF_MAP", None)
    out = subprocess.run([sys.executable, "-c", extra + PROGRAM, *args], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line)
    return out.stdout, lines


def read_map(path):
    entries = []
    with open(path) as f:
        for line in f:
            start, size, name = line.rstrip("\n").split(" ", 2)
            entries.append((int(start, 16), int(size, 16), name))
    return entries


def test_map_names_compiled_code_at_its_address():
    stdout, lines = run()
    path = lines["map"]
    assert path == "/tmp/perf-%d.map" % int(path.rsplit("-", 1)[1].split(".")[0])
    try:
        entries = read_map(path)
        address, size = (int(x, 16) for x in lines["work"].split())
        mine = [e for e in entries if e[2].startswith("pyjion::work:<string>:")]
        assert mine == [(address, size, mine[0][2])]
        assert any(name.startswith("pyjion::step:") for _, _, name in entries)
        # blocks never overlap
        spans = sorted((s, s + n) for s, n, _ in entries)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    finally:
        os.unlink(path)


@NO_STUBS_313
def test_map_names_the_direct_call_stubs():
    stdout, lines = run()
    try:
        entries = read_map(lines["map"])
        # the shared direct-call stubs are code too
        assert any(name.startswith("pyjion::direct_call_stub_") for _, _, name in entries)
    finally:
        os.unlink(lines["map"])


def test_forked_child_writes_its_own_map():
    stdout, lines = run(["fork"])
    parent, child = lines["map"], "/tmp/perf-%s.map" % lines["child"]
    try:
        parent_names = [n for _, _, n in read_map(parent)]
        child_names = [n for _, _, n in read_map(child)]
        assert not any("child_only" in n for n in parent_names)
        assert any("child_only" in n for n in child_names)
    finally:
        for p in (parent, child):
            if os.path.exists(p):
                os.unlink(p)


@NO_STUBS_313
def test_forked_child_map_names_the_inherited_stubs():
    stdout, lines = run(["fork"])
    parent, child = lines["map"], "/tmp/perf-%s.map" % lines["child"]
    try:
        # the child's map names the stubs it inherited, so it stands alone
        assert any(n.startswith("pyjion::direct_call_stub_") for _, _, n in read_map(child))
    finally:
        for p in (parent, child):
            if os.path.exists(p):
                os.unlink(p)


# Machine code made before the map is switched on (a direct-call stub among it).
LATE_MAP = ("import pyjion\n"
            "def inner(x):\n    return x\n"
            "def warm(x):\n    return inner(x)\n"   # makes the one-argument stub
            "pyjion.enable(threshold=0); warm(1); warm(2)\n"
            "pyjion.config(perf_map=True)\n")


def test_off_by_default_and_switched_on_late():
    stdout, lines = run(env_on=False)
    assert lines["map"] == "None"
    stdout, lines = run(env_on=False, extra=LATE_MAP)
    try:
        names = [n for _, _, n in read_map(lines["map"])]
        assert not any("warm" in n for n in names)   # compiled before the map was on
        assert any(n.startswith("pyjion::work:") for n in names)
        # (the stubs made before: test_late_map_names_the_stubs_made_before)
    finally:
        os.unlink(lines["map"])


@NO_STUBS_313
def test_late_map_names_the_stubs_made_before():
    stdout, lines = run(env_on=False, extra=LATE_MAP)
    try:
        # made before the map was on, named when it was switched on
        assert "pyjion::direct_call_stub_1" in [n for _, _, n in read_map(lines["map"])]
    finally:
        os.unlink(lines["map"])
