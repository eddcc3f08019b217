"""tools/whole_program.py's measurement and tools/thirdparty_suites.py's
test-by-test outcome comparison, on tiny commands and hand-made junit XML."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))

import thirdparty_suites  # noqa: E402
import whole_program  # noqa: E402

ALLOC_50MB = "x = b'x' * (50 * 1024 * 1024)"
BUSY = "import time\nend = time.process_time() + 0.2\nwhile time.process_time() < end: pass"


def test_peak_rss_sees_a_50mb_allocation():
    small = whole_program.measure([sys.executable, "-c", "pass"], env=whole_program.stock_env())
    big = whole_program.measure([sys.executable, "-c", ALLOC_50MB], env=whole_program.stock_env())
    assert small["returncode"] == 0 and big["returncode"] == 0
    assert big["peak_rss_mb"] >= 50
    assert big["peak_rss_mb"] - small["peak_rss_mb"] >= 45


def test_cpu_of_a_busy_loop_and_of_a_descendant():
    run = whole_program.measure([sys.executable, "-c", BUSY], env=whole_program.stock_env())
    assert run["cpu_s"] >= 0.15 and run["user_s"] > 0
    assert run["wall_s"] >= run["cpu_s"] * 0.5
    # a grandchild's CPU counts too (wait4 sees the reaped descendants)
    nested = "import subprocess, sys; subprocess.run([sys.executable, '-c', %r], check=True)" % BUSY
    run = whole_program.measure([sys.executable, "-c", nested], env=whole_program.stock_env())
    assert run["returncode"] == 0 and run["cpu_s"] >= 0.15


def test_exit_code_and_timeout():
    assert whole_program.measure([sys.executable, "-c", "raise SystemExit(3)"])["returncode"] == 3
    run = whole_program.measure([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5)
    assert run["timed_out"] and run["returncode"] != 0 and run["wall_s"] < 20


def test_environments():
    base = {"PATH": "/bin", "PYJION": "1", "PYJION_THRESHOLD": "5", "OTHER": "x"}
    assert whole_program.stock_env(base) == {"PATH": "/bin", "OTHER": "x"}
    assert whole_program.jit_env({"PYJION_THRESHOLD": "1000"}, base) == {
        "PATH": "/bin", "OTHER": "x", "PYJION": "1", "PYJION_THRESHOLD": "1000"}
    assert whole_program.parse_env_items(["A=1", "B=x=y"]) == {"A": "1", "B": "x=y"}
    with pytest.raises(ValueError):
        whole_program.parse_env_items(["nonsense"])


def test_compare_pairs_and_medians():
    # The command tells which side it runs on: the JIT side must see PYJION=1.
    code = "import os, sys; sys.exit(0 if os.environ.get('PYJION') == ('1' if sys.argv[1] == 'jit' else None) else 7)"
    seen = []
    report = whole_program.compare(lambda mode, rnd: [sys.executable, "-c", code, mode], rounds=3,
                                   extra_jit_env={"PYJION_THRESHOLD": "0"},
                                   on_run=lambda mode, rnd, r: seen.append((rnd, mode)))
    assert seen == [(0, "stock"), (0, "jit"), (1, "jit"), (1, "stock"), (2, "stock"), (2, "jit")]
    assert report["returncodes"] == {"stock": [0], "jit": [0]} and not report["returncodes_differ"]
    assert len(report["pairs"]) == 3
    assert all(p["cpu_ratio"] > 0 and p["rss_ratio"] > 0 for p in report["pairs"])
    assert report["ratios"]["cpu_ratio"] == sorted(p["cpu_ratio"] for p in report["pairs"])[1]
    assert "median" in whole_program.format_table(report)


def test_cli_json(tmp_path):
    out = tmp_path / "r.json"
    code = whole_program.main(["--rounds", "1", "--json", str(out), "--", "python", "-c", "pass"])
    assert code == 0
    import json
    data = json.loads(out.read_text())
    assert data["rounds"] == 1 and data["jit_env"] == {"PYJION": "1"}


PYTEST_XML = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="0" failures="1" skipped="2" tests="6">
<testcase classname="pkg.tests.test_a" name="test_ok" time="0.01" />
<testcase classname="pkg.tests.test_a" name="test_skip" time="0.0"><skipped type="pytest.skip" message="no numpy">x</skipped></testcase>
<testcase classname="pkg.tests.test_a" name="test_xfail" time="0.0"><skipped type="pytest.xfail" message="known" /></testcase>
<testcase classname="pkg.tests.test_a" name="test_param[1]" time="0.0" />
<testcase classname="pkg.tests.test_a" name="test_param[1]" time="0.0" />
<testcase classname="pkg.tests.test_b" name="test_teardown" time="0.0"><failure message="assert">tb</failure><error message="teardown">tb</error><system-out>noise</system-out></testcase>
</testsuite></testsuites>
"""


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_junit_outcomes(tmp_path):
    outcomes = thirdparty_suites.junit_outcomes(_write(tmp_path, "a.xml", PYTEST_XML))
    assert outcomes == {
        "pkg.tests.test_a::test_ok": "passed",
        "pkg.tests.test_a::test_skip": "skipped",
        "pkg.tests.test_a::test_xfail": "xfail",
        "pkg.tests.test_a::test_param[1]": "passed",
        "pkg.tests.test_a::test_param[1]#2": "passed",
        "pkg.tests.test_b::test_teardown": "error+failed",
    }


def test_regrtest_junit_outcomes(tmp_path):
    xml = """<testsuites tests="4"><testsuite tests="4">
<testcase name="test.test_x.T.test_ok" status="run" result="completed" />
<testcase name="test.test_x.T.test_skip" status="run" result="completed"><skipped>needs root</skipped></testcase>
<testcase name="test.test_x.T.test_xf" status="run" result="completed"><output type="AssertionError" message="m">tb</output></testcase>
<testcase name="test.test_x.T.test_bad" status="run" result="completed"><error type="ValueError" message="m">tb</error></testcase>
<testcase name="test.test_x.T.test_us" status="run" result="completed"><outcome>UNEXPECTED_SUCCESS</outcome></testcase>
</testsuite></testsuites>"""
    outcomes = thirdparty_suites.junit_outcomes(_write(tmp_path, "r.xml", xml))
    assert outcomes == {"test.test_x.T.test_ok": "passed", "test.test_x.T.test_skip": "skipped",
                        "test.test_x.T.test_xf": "xfail", "test.test_x.T.test_bad": "error",
                        "test.test_x.T.test_us": "xpass"}


def test_outcome_difference_is_detected(tmp_path):
    stock = thirdparty_suites.junit_outcomes(_write(tmp_path, "stock.xml", PYTEST_XML))
    same = thirdparty_suites.junit_outcomes(_write(tmp_path, "same.xml", PYTEST_XML))
    assert thirdparty_suites.compare_outcomes(stock, same) == []
    changed = PYTEST_XML.replace(
        '<testcase classname="pkg.tests.test_a" name="test_ok" time="0.01" />',
        '<testcase classname="pkg.tests.test_a" name="test_ok" time="0.01"><failure message="boom" /></testcase>')
    changed = changed.replace('<testcase classname="pkg.tests.test_a" name="test_xfail" time="0.0">'
                              '<skipped type="pytest.xfail" message="known" /></testcase>\n', "")
    jit = thirdparty_suites.junit_outcomes(_write(tmp_path, "jit.xml", changed))
    assert thirdparty_suites.compare_outcomes(stock, jit) == [
        ("pkg.tests.test_a::test_ok", "passed", "failed"),
        ("pkg.tests.test_a::test_xfail", "xfail", "missing"),
    ]


def test_compare_calls_the_command_once_per_run():
    calls = []

    def command(mode, rnd):
        calls.append((mode, rnd))
        return [sys.executable, "-c", "pass"]

    report = whole_program.compare(command, rounds=2, warmup=1)
    assert sorted(calls) == sorted([("stock", -1), ("jit", -1), ("stock", 0), ("jit", 0),
                                    ("jit", 1), ("stock", 1)])
    assert report["command"] == [sys.executable, "-c", "pass"]
