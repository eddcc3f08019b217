"""pyjion: a JIT compiler and call-level profiler for CPython 3.11.

    import pyjion
    pyjion.enable()            # compile functions to machine code from their first call
    pyjion.enable(profile=True); ...; pyjion.stats()   # call-level profile, no sys.setprofile

The public API is a superset of Pyjion 2.0's; see __init__.pyi for types."""
import collections
import importlib
import os
import sys
import types

# The CPythons whose frames and bytecode the compiler knows. Anywhere else
# the extension modules cannot work (or were never built): say so plainly.
SUPPORTED_PYTHONS = ((3, 11), (3, 13))


def _check_python():
    here = sys.version_info[:2]
    if sys.implementation.name != "cpython" or here not in SUPPORTED_PYTHONS:
        raise ImportError("pyjion supports CPython %s; this is %s %d.%d" % (
            " and ".join("%d.%d" % v for v in SUPPORTED_PYTHONS), sys.implementation.name, *here))


_check_python()

from . import _eval  # noqa: E402

__version__ = "0.1.0"

_UNSUPPORTED_SETTINGS = ("level", "graph")      # accepted for Pyjion 2.0 compatibility
_compat_settings = {"level": 1, "graph": False}


# The compile results as Pyjion 2.0 names them. The IntEnum class is made on
# first use (module __getattr__): making it costs about a quarter of a
# millisecond, which every PYJION=1 process would pay at start-up.
_COMPILATION_RESULTS = (
    ("NoResult", 0), ("Success", 1), ("CompilationException", 10),
    ("CompilationJitFailure", 11), ("CompilationStackEffectFault", 12),
    ("IncompatibleCompilerFlags", 100), ("IncompatibleSize", 101),
    ("IncompatibleOpcode_Yield", 102), ("IncompatibleOpcode_WithExcept", 103),
    ("IncompatibleOpcode_With", 104), ("IncompatibleOpcode_Unknown", 110),
    ("IncompatibleFrameGlobal", 120),
)


def _compilation_result():
    cls = globals().get("CompilationResult")
    if cls is None:
        import enum
        cls = enum.IntEnum("CompilationResult", _COMPILATION_RESULTS, module=__name__)
        globals()["CompilationResult"] = cls
    return cls


def __getattr__(name):
    if name == "CompilationResult":
        return _compilation_result()
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def __dir__():
    return sorted(set(globals()) | {"CompilationResult"})


class JitInfo:
    """What pyjion knows about one code object (see pyjion.info)."""

    __slots__ = ("failed", "compile_result", "compiled", "optimizations", "pgc", "run_count",
                 "tracing", "profiling", "state", "reason", "tier", "code_size", "arg_types",
                 "samples", "osr_entries", "site_profile", "exits", "opt_given_up")

    def __init__(self, **fields):
        for name in self.__slots__:
            setattr(self, name, fields[name])

    def __repr__(self):
        return "JitInfo(%s)" % ", ".join("%s=%r" % (n, getattr(self, n)) for n in self.__slots__)

    def __getitem__(self, name):
        # Pyjion's older API returned a dict: info(f)["pgc"] still works.
        if name not in self.__slots__:
            raise KeyError(name)
        return getattr(self, name)


def _code_of(f):
    if isinstance(f, types.CodeType):
        return f
    if isinstance(f, types.MethodType):
        f = f.__func__
    code = getattr(f, "__code__", None)
    if isinstance(code, types.CodeType):
        return code
    raise TypeError("expected a function, method or code object, got %s" % type(f).__name__)


def enable(threshold=None, profile=False, jit=True):
    """Installs the JIT (and, with profile=True, the profiler). See __init__.pyi."""
    _eval.set_config(threshold=threshold, jit=jit, profile=profile)
    return _eval.install()


def disable():
    """Removes the hook: CPython evaluates every frame itself again."""
    _eval.set_config(profile=False)
    return _eval.uninstall()


def is_enabled():
    return _eval.installed()


def config(threshold=None, level=None, pgc=None, debug=None, graph=None, profile=None, jit=None,
           max_instructions=None, dump_asm=None, perf_map=None, compact_above=None, opt=None,
           tree_depth=None, tree_nodes=None, warmup=None, profile_clock=None):
    """Changes settings (None keeps one) and returns them all. max_instructions:
    code objects with more bytecode instructions stay in the interpreter
    (reason "code object too large"; 0 = no limit). compact_above: code
    objects longer than this (code units, inline caches included) are
    compiled compact: their attribute and global lookups call code shared by
    all sites instead of carrying their own (0 = every code object; applies
    to later compiles). dump_asm: a file to which
    every later compile appends its assembly listing ("-": stderr; False:
    no listing; the PYJION_DUMP_ASM environment variable sets it at import).
    opt: the optimising tier (unboxed ints and floats), "auto" (default:
    code that ran warm in the interpreter, where the tier's code pays) or
    "always" (wherever it can unbox; pgc=False turns it off). perf_map:
    True appends every later block of machine code to
    /tmp/perf-<pid>.map, which Linux perf reads to name JIT code (the
    setting reads back as that path; PYJION_PERF_MAP=1 sets it at import).
    warmup: how code gets warm enough to compile: "calls" (the PEP 523 hook
    counts them, up to `threshold`; CPython 3.11's only way) or "samples"
    (CPython 3.13's default: no hook is installed, the sampler finds the
    code that runs hot and compiled functions are entered through their
    own vectorcall, so interpreted code runs exactly as stock). A threshold
    given without warmup means "calls"; eager mode (threshold 0) and the
    profiler install the hook either way.
    tree_depth, tree_nodes: bounds of the profiler's call tree
    (pyjion.calltree): deeper paths, and new paths once it holds that many
    nodes, are charged to their deepest recorded ancestor (defaults 256 and
    200,000). profile_clock: what times the profiler's calls, "ticks"
    (default: a clock that a helper thread advances every 100 microseconds,
    read with one load per call; times are statistical, as a sampling
    profiler's, counts exact) or "tsc" (the CPU's time-stamp counter, exact
    per call, at ~20 ns more per call); it changes only while the profiler
    is off, and forgets the profile's statistics when it does."""
    if dump_asm is not None and dump_asm is not False and not isinstance(dump_asm, (str, os.PathLike)):
        raise TypeError("dump_asm must be a path, \"-\" or False, not %s" % type(dump_asm).__name__)
    _eval.set_config(threshold=threshold, pgc=pgc, debug=debug, profile=profile, jit=jit,
                     max_instructions=max_instructions, compact_above=compact_above, opt=opt,
                     warmup=warmup, profile_clock=profile_clock)
    if dump_asm is not None:
        from . import _codegen
        path = os.fspath(dump_asm) if dump_asm is not False else ""
        _codegen.set_dump_asm(path or None)
    if perf_map is not None:
        from . import _codegen
        _codegen.set_perf_map(bool(perf_map))
    tree_bounds = _eval.set_call_tree_bounds(tree_depth, tree_nodes)
    if level is not None:
        _compat_settings["level"] = int(level)
    if graph is not None:
        _compat_settings["graph"] = bool(graph)
    settings = _eval.get_config()
    # (inline, not a helper function: config(profile=True) must not profile itself)
    codegen = sys.modules.get("pyjion._codegen")
    settings["dump_asm"] = codegen.get_dump_asm() if codegen is not None else None
    settings["perf_map"] = codegen.get_perf_map() if codegen is not None else None
    settings.update(_compat_settings)
    settings["tree_depth"], settings["tree_nodes"] = tree_bounds
    settings["enabled"] = _eval.installed()
    settings["unsupported"] = list(_UNSUPPORTED_SETTINGS)
    return settings


def info(f):
    """JitInfo for a function, method or code object."""
    rec = _eval.record_info(_code_of(f))
    state = rec["state"]
    settings = _eval.get_config()
    pgc = rec["pgc"]
    results = _compilation_result()
    try:
        result = results(rec["result"])
    except ValueError:
        result = results.CompilationException
    return JitInfo(
        failed=state == "failed", compile_result=result, compiled=state == "compiled",
        optimizations=0, pgc=pgc, run_count=rec["calls"],
        tracing=sys.gettrace() is not None or sys.getprofile() is not None,
        profiling=settings["profile"], state=state, reason=rec["reason"], tier=rec["tier"],
        code_size=rec["code_size"], arg_types=rec["arg_types"],
        samples=rec["samples"], osr_entries=rec["osr_entries"],
        site_profile=_site_profile(_code_of(f)),
        exits=dict(rec["owner"].exits) if rec["owner"] is not None else {},
        opt_given_up=rec["opt_given_up"])


class SiteProfile(collections.namedtuple("SiteProfile", "offset opname quickened state type")):
    """What CPython's specialising interpreter learnt at one instruction site.

    state: "specialised" (type says for what), "generic" (it tried and met other
    or mixed types), "unseen" (not run since the code was quickened),
    "not quickened" (the code never warmed up in the interpreter), "unprofiled"
    (CPython 3.11 does not specialise this opcode)."""

    __slots__ = ()


def _site_profile(code):
    # importlib, not an import statement: info() must not call a program's
    # own builtins.__import__ (a test may be counting its imports).
    codegen = importlib.import_module("pyjion._codegen")
    return tuple(SiteProfile(*site) for site in codegen.site_profiles(code))


def _compiled_code(f):
    owner = _eval.record_info(_code_of(f))["owner"]
    if owner is None:
        raise ValueError("%r has not been compiled" % (f,))
    return owner


def native(f):
    """(machine code bytes, size, address) of a compiled function."""
    compiled = _compiled_code(f)
    return compiled.code, compiled.size, compiled.address


def stats():
    """Profiler data per function and JIT counters; see __init__.pyi."""
    # the profile first: the builtins called below (while profiling) are not in it
    functions = _eval.function_stats()
    jit = _eval.jit_stats()
    codegen = sys.modules.get("pyjion._codegen")
    jit["exits"] = codegen.exit_counts() if codegen is not None else {}
    return {"functions": functions, "jit": jit}


def reset_stats():
    _eval.reset_stats()


def dis_native(f, file=None):
    from .dis import dis_native as _dis_native
    return _dis_native(f, file=file)


if os.environ.get("PYJION_DUMP_ASM"):
    config(dump_asm=os.environ["PYJION_DUMP_ASM"])
if os.environ.get("PYJION_PERF_MAP", "") not in ("", "0"):
    config(perf_map=True)
