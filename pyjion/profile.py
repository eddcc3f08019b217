"""Views over pyjion's call-level profiler data, in the formats of the standard library.

``pyjion.stats()["functions"]`` maps ``(co_filename, co_firstlineno, co_name)`` to a dict of
``calls``, ``primitive_calls``, ``total_time``, ``own_time`` and ``callers``. C functions that
machine code called get entries of their own keyed as cProfile keys them,
``("~", 0, "<built-in method builtins.sorted>")``, ``("~", 0, "<method 'append' of 'list'
objects>")``: the builtins a CALL calls and method descriptors called with self, as cProfile
counts them (and, as in cProfile, a Python function such a C function calls back, the key of
``sorted(key=f)`` or a generator driven by ``sum()``, has it as caller). Only calls from
machine code are seen: code the interpreter runs calls C functions unobserved (that would take
``sys.setprofile``), so run with ``threshold=0`` where every C call must be counted; call-cache
sites that machine code filled before the profiler was switched on also call unobserved. This module turns
that into what :mod:`pstats` works with, the same dict ``cProfile.Profile.create_stats()``
builds::

    {(file, line, name): (cc, nc, tt, ct, {caller_key: (nc, cc, tt, ct)})}

where ``cc`` is the primitive (non-recursive) call count, ``nc`` every call, ``tt`` the time spent
in the function itself and ``ct`` the cumulative time including callees. Note the order: the
function's own tuple starts with ``cc``, each caller tuple with ``nc`` (as in cProfile).

    >>> import pyjion, pyjion.profile
    >>> pyjion.enable(profile=True); work(); pyjion.disable()
    >>> pyjion.profile.print_stats(limit=10)
    >>> pyjion.profile.dump_stats("out.prof")      # python -m pstats out.prof
    >>> pstats.Stats(pyjion.profile.Profile()).sort_stats("tottime").print_stats(5)
"""
import marshal
import sys

__all__ = ["to_pstats", "dump_stats", "print_stats", "make_stats", "Profile"]

_NUMBERS = ("calls", "primitive_calls", "own_time", "total_time")


def _functions(stats):
    """The functions mapping from `stats`: pyjion.stats() when None, the "functions" part of
    a full pyjion.stats() dict, or already a functions mapping."""
    if stats is None:
        import pyjion
        stats = pyjion.stats()
    if isinstance(stats, dict) and "functions" in stats:
        stats = stats["functions"]
    return stats


def _label(key):
    filename, line, name = key
    return (str(filename), int(line), str(name))


def _numbers(entry):
    missing = [name for name in _NUMBERS if name not in entry]
    if missing:
        raise ValueError("profile entry lacks %s: %r" % (", ".join(missing), entry))
    return (int(entry["calls"]), int(entry["primitive_calls"]),
            float(entry["own_time"]), float(entry["total_time"]))


def to_pstats(stats=None):
    """Converts pyjion's profiler data to pstats' internal dict.

    stats: None (take pyjion.stats() now), a pyjion.stats() dict, or its "functions" part.
    Returns ``{(file, line, name): (cc, nc, tt, ct, {caller: (nc, cc, tt, ct)})}``, the format of
    ``cProfile.Profile().stats`` and of a file written by ``dump_stats``."""
    result = {}
    for key, entry in _functions(stats).items():
        nc, cc, tt, ct = _numbers(entry)
        callers = {}
        for caller, edge in (entry.get("callers") or {}).items():
            e_nc, e_cc, e_tt, e_ct = _numbers(edge)
            label = _label(caller)
            if label in callers:        # two keys that print alike: add them, as cProfile does
                p_nc, p_cc, p_tt, p_ct = callers[label]
                e_nc, e_cc, e_tt, e_ct = e_nc + p_nc, e_cc + p_cc, e_tt + p_tt, e_ct + p_ct
            callers[label] = (e_nc, e_cc, e_tt, e_ct)
        label = _label(key)
        if label in result:
            p_cc, p_nc, p_tt, p_ct, p_callers = result[label]
            cc, nc, tt, ct = cc + p_cc, nc + p_nc, tt + p_tt, ct + p_ct
            for caller, (e_nc, e_cc, e_tt, e_ct) in p_callers.items():
                if caller in callers:
                    q = callers[caller]
                    callers[caller] = (e_nc + q[0], e_cc + q[1], e_tt + q[2], e_ct + q[3])
                else:
                    callers[caller] = (e_nc, e_cc, e_tt, e_ct)
        result[label] = (cc, nc, tt, ct, callers)
    return result


def dump_stats(path, stats=None):
    """Writes the profile to `path` in pstats' file format (marshal, as cProfile does), so that
    ``pstats.Stats(path)`` and ``python -m pstats path`` read it. Returns `path`."""
    data = to_pstats(stats)
    with open(path, "wb") as f:
        marshal.dump(data, f)
    return path


def make_stats(stats=None, stream=None):
    """A pstats.Stats over pyjion's profile (works for an empty profile too, where
    ``pstats.Stats(obj)`` would raise TypeError)."""
    import pstats
    st = pstats.Stats(stream=stream)
    st.stats = to_pstats(stats)
    st.get_top_level_stats()
    return st


def print_stats(sort="cumulative", limit=None, stream=None, stats=None, strip_dirs=True):
    """Prints the table ``python -m cProfile`` prints: a header with the number of calls and the
    total time, then one line per function, ordered by `sort` (any pstats sort key, a
    pstats.SortKey, an int as cProfile accepts (-1 stdname, 0 calls, 1 time, 2 cumulative) or a
    tuple of keys). limit: print only the first `limit` lines (an int), a fraction (a float
    below 1) or the functions matching a regular expression (a str), as pstats does."""
    st = make_stats(stats, stream=stream if stream is not None else sys.stdout)
    if strip_dirs:
        st.strip_dirs()
    if not isinstance(sort, tuple):
        sort = (sort,)
    st.sort_stats(*sort)
    if limit is None:
        st.print_stats()
    else:
        st.print_stats(limit)
    return st


class Profile:
    """A cProfile.Profile look-alike over pyjion's profiler, so that ``pstats.Stats(Profile())``
    works. Given `stats` (a pyjion.stats() dict or its "functions" part) it shows that snapshot;
    otherwise what pyjion.stats() holds when pstats asks for it (create_stats()), or, once
    enable()/disable() were used, what was profiled between them.

    enable()/disable() (also as a context manager, and runcall()) switch the profiler on and
    off. The first enable() of a Profile clears pyjion's statistics (pyjion.reset_stats()), so
    each Profile starts empty as a cProfile.Profile does; enable() installs the hook (with the
    JIT only if jit=True) when it is not installed, and disable() then removes it again."""

    def __init__(self, stats=None, jit=False):
        self._source = stats
        self._jit = jit
        self._started = False
        self._enabled = False
        self._installed_hook = False
        self.stats = {}

    # -- what pstats needs --------------------------------------------------------------
    def create_stats(self):
        if self._enabled:
            self.disable()
        self.snapshot_stats()

    def snapshot_stats(self):
        self.stats = to_pstats(self._source)

    # -- cProfile.Profile conveniences --------------------------------------------------
    def print_stats(self, sort=-1):
        self.create_stats()
        print_stats(sort=sort, stats=self._source)

    def dump_stats(self, file):
        self.create_stats()
        with open(file, "wb") as f:
            marshal.dump(self.stats, f)

    def enable(self):
        import pyjion
        if not self._started:
            pyjion.reset_stats()
            self._started = True
        if pyjion.is_enabled():
            pyjion.config(profile=True)
        else:
            pyjion.enable(profile=True, jit=self._jit)
            self._installed_hook = True
        self._enabled = True

    def disable(self):
        import pyjion
        if not self._enabled:
            return
        self._enabled = False
        # Snapshot while still profiling: calls are counted when they return, so this
        # disable() (still running) and the config() call below are not in it.
        self._source = pyjion.stats()["functions"]
        pyjion.config(profile=False)
        if self._installed_hook:
            self._installed_hook = False
            pyjion.disable()

    def runcall(self, func, /, *args, **kw):
        self.enable()
        try:
            return func(*args, **kw)
        finally:
            self.disable()

    def __enter__(self):
        self.enable()
        return self

    def __exit__(self, *exc_info):
        self.disable()
