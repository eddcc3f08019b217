"""pytest plugin (entry point "pyjion" in the pytest11 group; or -p pyjion.pytest_plugin).

    pytest --pyjion                         run the session (collection and tests) with the JIT
    pytest --pyjion --pyjion-threshold N    compile after N calls instead of pyjion's default
    pytest --pyjion-profile=out.prof        profile every Python call of the session and write a
                                            pstats file at its end (python -m pstats out.prof);
                                            the JIT is on too when --pyjion is given

With --pyjion the terminal summary gets a line with the number of functions compiled and failed.
Under pytest-xdist each worker writes its own profile, out.prof.<worker id>."""
import os

import pytest

_STATE_KEY = "_pyjion_plugin_state"


def pytest_addoption(parser):
    group = parser.getgroup("pyjion", "pyjion JIT compiler")
    group.addoption("--pyjion", action="store_true", default=False,
                    help="run the test session with the pyjion JIT enabled")
    group.addoption("--pyjion-threshold", type=int, default=None, metavar="N",
                    help="calls before pyjion compiles a function (default: pyjion's own, "
                         "see pyjion.config()['threshold']; 0 compiles at the first call)")
    group.addoption("--pyjion-profile", default=None, metavar="PATH",
                    help="profile the session with pyjion's profiler and write a pstats file "
                         "to PATH at the end")


class _State:
    def __init__(self, jit, threshold, profile_path):
        self.jit = jit
        self.threshold = threshold
        self.profile_path = profile_path
        self.installed = False          # we installed the hook (and so remove it at the end)
        self.was_profiling = False
        self.active = False
        self.profile_written = None
        self.jit_stats = None


def pytest_configure(config):
    jit = config.getoption("pyjion")
    threshold = config.getoption("pyjion_threshold")
    profile_path = config.getoption("pyjion_profile")
    if threshold is not None and threshold < 0:
        raise pytest.UsageError("--pyjion-threshold must be >= 0")
    if not jit and profile_path is None:
        return                  # --pyjion-threshold alone (e.g. from addopts) changes nothing
    if profile_path is not None:
        profile_path = os.path.abspath(profile_path)     # tests may chdir
        worker = getattr(config, "workerinput", None)
        if worker is not None:
            profile_path = "%s.%s" % (profile_path, worker.get("workerid", "worker"))
    setattr(config, _STATE_KEY, _State(jit, threshold, profile_path))


def _state(config):
    return getattr(config, _STATE_KEY, None)


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session):
    state = _state(session.config)
    if state is None:
        return
    import pyjion
    state.was_profiling = bool(pyjion.config()["profile"]) if pyjion.is_enabled() else False
    pyjion.reset_stats()
    try:
        state.installed = pyjion.enable(threshold=state.threshold,
                                        profile=state.profile_path is not None or state.was_profiling,
                                        jit=state.jit)
    except RuntimeError as exc:
        raise pytest.UsageError("pyjion: %s" % exc)
    state.active = True


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    state = _state(session.config)
    if state is None or not state.active:
        return
    import pyjion
    import pyjion.profile
    state.active = False
    if state.profile_path is not None:
        # Snapshot before stopping: a call is counted when it returns, so neither stats()
        # (still running) nor the config() call that stops the profiler is in the file.
        functions = pyjion.stats()["functions"]
        if not state.was_profiling:
            pyjion.config(profile=False)
        pyjion.profile.dump_stats(state.profile_path, functions)
        state.profile_written = state.profile_path
    if state.installed:
        pyjion.disable()
    # after disable(): its own call would have been compiled, too
    state.jit_stats = pyjion.stats()["jit"]


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    state = _state(config)
    if state is None:
        return
    if state.jit_stats is not None and state.jit:
        jit = state.jit_stats
        terminalreporter.write_line(
            "pyjion: %d functions compiled, %d failed (%d bytes of machine code, %.3fs compiling)"
            % (jit.get("compiled", 0), jit.get("failed", 0), jit.get("code_bytes", 0),
               jit.get("compile_time_s", 0.0)))
        reasons = sorted((jit.get("failed_reasons") or {}).items(), key=lambda kv: (-kv[1], kv[0]))
        if reasons and config.getoption("verbose") > 0:
            for reason, count in reasons[:10]:
                terminalreporter.write_line("pyjion:   %5d  %s" % (count, reason))
    if state.profile_written is not None:
        terminalreporter.write_line("pyjion: profile written to %s" % state.profile_written)
