"""The pytest plugin: pytest --pyjion [--pyjion-threshold N] [--pyjion-profile=out.prof].

Each test runs pytest in a fresh interpreter with the plugin loaded by -p (entry point
plugins off, so an installed copy of the plugin does not load twice)."""
import json
import os
import pstats
import re
import subprocess
import sys
import textwrap

from pyjion._eval import DEFAULT_THRESHOLD

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CONFTEST = """
    import json
    import pyjion

    def pytest_unconfigure(config):
        with open("after.json", "w") as f:
            json.dump({"enabled": pyjion.is_enabled(), "jit": pyjion.stats()["jit"],
                       "warmup": pyjion.config()["warmup"]}, f)
"""

TESTS = """
    import pyjion
    from pyjion import _eval

    ENABLED_AT_COLLECTION = pyjion.is_enabled()

    def helper(x):
        return x + 1

    def rarely(x):
        return x - 1

    def test_state():
        assert pyjion.is_enabled() == EXPECT_ENABLED
        assert ENABLED_AT_COLLECTION == EXPECT_ENABLED
        if EXPECT_ENABLED:
            cfg = pyjion.config()
            assert cfg["threshold"] == EXPECT_THRESHOLD
            assert cfg["jit"] == EXPECT_JIT
            assert cfg["profile"] == EXPECT_PROFILE
            # Warm-up by "calls": the hook counts every call; by "samples" (3.13's
            # default) no hook is installed unless the profiler or eager mode
            # needs it, and run_count counts the calls that ran machine code.
            assert _eval.hook_installed() == (cfg["warmup"] == "calls" or EXPECT_THRESHOLD == 0
                                              or EXPECT_PROFILE)

    def test_compiles():
        for i in range(7):
            helper(i)
        for i in range(3):
            rarely(i)
        info = pyjion.info(helper)
        if EXPECT_ENABLED:
            assert info.run_count == (7 if _eval.hook_installed() else 0)
        if EXPECT_ENABLED and EXPECT_JIT:
            expected = ("interpreted",) if EXPECT_THRESHOLD >= 7 else ("compiled", "failed")
            assert info.state in expected
            expected = ("interpreted",) if EXPECT_THRESHOLD >= 3 else ("compiled", "failed")
            assert pyjion.info(rarely).state in expected
        else:
            assert info.state == "interpreted"
"""


def run_pytest(tmp_path, options, enabled, threshold=None, jit=True, profile=False, extra_test=""):
    if threshold is None:
        threshold = DEFAULT_THRESHOLD      # no --pyjion-threshold: pyjion's own default
    (tmp_path / "conftest.py").write_text(textwrap.dedent(CONFTEST))
    (tmp_path / "test_sample.py").write_text(
        "EXPECT_ENABLED, EXPECT_THRESHOLD, EXPECT_JIT, EXPECT_PROFILE = %r, %r, %r, %r\n"
        % (enabled, threshold, jit, profile) + textwrap.dedent(TESTS) + textwrap.dedent(extra_test))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYJION", "PYTEST_"))}
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "pyjion.pytest_plugin",
                           "-p", "no:cacheprovider", "-q", "-rA", "test_sample.py"] + list(options),
                          cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=600)
    with open(tmp_path / "after.json") as f:
        after = json.load(f)
    return proc, after


SUMMARY = re.compile(r"^pyjion: (\d+) functions compiled, (\d+) failed", re.M)


def test_pyjion_flag_runs_session_with_jit(tmp_path):
    proc, after = run_pytest(tmp_path, ["--pyjion", "--pyjion-threshold", "0"], enabled=True, threshold=0)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout
    m = SUMMARY.search(proc.stdout)
    assert m, proc.stdout
    compiled, failed = int(m.group(1)), int(m.group(2))
    # the numbers are the session's: what pyjion.stats() says once it is over
    assert (compiled, failed) == (after["jit"]["compiled"], after["jit"]["failed"])
    assert compiled + failed >= 2          # helper and rarely at least
    assert after["enabled"] is False       # the hook is gone when the session ends


def test_default_threshold_is_tiered(tmp_path):
    # Without --pyjion-threshold the session compiles only what gets warm:
    # helper (7 calls) and rarely (3) stay in the interpreter.
    assert DEFAULT_THRESHOLD > 7
    proc, after = run_pytest(tmp_path, ["--pyjion"], enabled=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    if after["warmup"] == "calls":      # (by samples, records are made for sampled code only)
        assert after["jit"]["interpreted"] > 0


def test_threshold_option(tmp_path):
    proc, after = run_pytest(tmp_path, ["--pyjion", "--pyjion-threshold=5"], enabled=True,
                             threshold=5)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert SUMMARY.search(proc.stdout)


def test_plugin_is_inert_without_flag(tmp_path):
    proc, after = run_pytest(tmp_path, [], enabled=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "pyjion:" not in proc.stdout
    assert after["jit"]["compiled"] == after["jit"]["failed"] == 0


def test_failures_still_reported(tmp_path):
    proc, after = run_pytest(tmp_path, ["--pyjion"], enabled=True,
                             extra_test="\ndef test_fails():\n    assert helper(1) == 3\n")
    assert proc.returncode == 1
    assert "1 failed, 2 passed" in proc.stdout
    assert "assert 2 == 3" in proc.stdout
    assert SUMMARY.search(proc.stdout)
    assert after["enabled"] is False


def check_profile(tmp_path, proc, path):
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "pyjion: profile written to %s" % path in proc.stdout
    st = pstats.Stats(str(path))
    test_file = str(tmp_path / "test_sample.py")
    funcs = {k[2]: v for k, v in st.stats.items() if k[0] == test_file}
    assert funcs["helper"][:2] == (7, 7)
    assert funcs["rarely"][:2] == (3, 3)
    callers = {k[2]: v for k, v in funcs["helper"][4].items()}
    assert callers == {"test_compiles": callers["test_compiles"]}
    assert callers["test_compiles"][:2] == (7, 7)
    assert funcs["test_compiles"][:2] == (1, 1)
    assert funcs["<module>"][:2] == (1, 1)                  # collection was profiled too
    # pytest's own machinery was profiled as well: the whole session is in the file
    assert any("_pytest" in k[0] for k in st.stats)
    # test_state's own pyjion.config() call is there; the plugin's stop call is not
    config = [v for k, v in st.stats.items()
              if k[0].endswith(os.path.join("pyjion", "__init__.py")) and k[2] == "config"]
    assert len(config) == 1 and config[0][:2] == (1, 1)
    for cc, nc, tt, ct, callers in st.stats.values():
        assert 0 <= cc <= nc and 0 <= tt <= ct * (1 + 1e-6) + 1e-9


def test_profile_option_with_jit(tmp_path):
    path = tmp_path / "session.prof"
    proc, after = run_pytest(tmp_path, ["--pyjion", "--pyjion-profile=%s" % path], enabled=True,
                             profile=True)
    check_profile(tmp_path, proc, path)
    assert SUMMARY.search(proc.stdout)
    assert after["enabled"] is False


def test_profile_option_alone_profiles_without_jit(tmp_path):
    (tmp_path / "out").mkdir()
    proc, after = run_pytest(tmp_path, ["--pyjion-profile", "out/session.prof"], enabled=True,
                             jit=False, profile=True)
    check_profile(tmp_path, proc, tmp_path / "out" / "session.prof")
    assert not SUMMARY.search(proc.stdout)
    assert after["jit"]["compiled"] == 0
    assert after["enabled"] is False
