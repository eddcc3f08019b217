# Public API of pyjion (a superset of Pyjion 2.0's).
from typing import Any, Callable, Dict, NamedTuple, Optional, Tuple, Union
import enum
import os

__version__: str

FunctionKey = Tuple[str, int, str]          # (co_filename, co_firstlineno, co_name)

class CompilationResult(enum.IntEnum):
    NoResult = 0                            # never asked to compile (still counting calls)
    Success = 1
    CompilationException = 10               # the code generator raised an internal error
    CompilationJitFailure = 11              # AsmJit could not finish the machine code
    CompilationStackEffectFault = 12        # modelled stack depth disagreed with CPython's
    IncompatibleCompilerFlags = 100
    IncompatibleSize = 101
    IncompatibleOpcode_Yield = 102
    IncompatibleOpcode_WithExcept = 103
    IncompatibleOpcode_With = 104
    IncompatibleOpcode_Unknown = 110        # an opcode the compiler does not support (yet)
    IncompatibleFrameGlobal = 120

class JitInfo:
    # Pyjion 2.0 fields
    failed: bool                  # compilation was attempted and failed; runs interpreted
    compile_result: CompilationResult
    compiled: bool                # machine code exists and is used
    optimizations: int            # bit set of optimizations applied (0 for now)
    pgc: int                      # 0 none, 1 types being recorded, 2 types recorded and used
    run_count: int                # calls seen by the hook (includes generator resumes)
    tracing: bool                 # sys.settrace/setprofile active right now (frames run interpreted)
    profiling: bool               # the pyjion profiler is on
    # pyjion's own fields
    state: str                    # "interpreted" | "compiling" | "compiled" | "failed"
    reason: Optional[str]         # why it failed, e.g. "unsupported opcode LOAD_GLOBAL at offset 4"
    tier: int                     # 0 interpreter, 1 baseline machine code, 2 optimising tier (unboxed ints/floats)
    code_size: int                # bytes of machine code (0 if none)
    arg_types: Tuple[Tuple[str, ...], ...]  # type profile: names of types seen per argument
    samples: int                  # sampler ticks that found it running interpreted (docs/tiering.md)
    osr_entries: int              # interpreted frames moved into its machine code at a loop header
    site_profile: Tuple[SiteProfile, ...]   # per BINARY_OP/COMPARE_OP/subscript/attribute/call site
    exits: Dict[str, int]         # optimising tier: side exits taken, by name ("guard_int", "int_overflow", ...)
    opt_given_up: bool            # its optimised code took too many side exits: recompiled as baseline code

class SiteProfile(NamedTuple):
    """What CPython's specialising interpreter learnt at one site (co_code_adaptive)."""
    offset: int       # bytecode offset, as dis shows it
    opname: str       # "BINARY_OP", ...
    quickened: str    # the instruction there now: "BINARY_OP_ADD_INT", "BINARY_OP_ADAPTIVE", ...
    state: str        # "specialised" | "generic" | "unseen" | "not quickened" | "unprofiled"
    type: str         # "int" | "float" | "str" | "list" | "tuple" | "dict" | "object"

def enable(threshold: Optional[int] = None, profile: bool = False, jit: bool = True) -> bool:
    """Enable the JIT: install the PEP 523 hook (on 3.13 with the default warm-up by samples,
    no hook: see config's warmup). threshold: calls before compiling (0 = first call; None keeps
    the current setting, default 0). profile: turn on the call-level profiler. jit=False installs
    the hook (counting, profiling) without ever compiling. Returns True if the hook was newly
    installed, False if it already was (settings are updated either way). Raises RuntimeError if
    another PEP 523 hook is installed."""

def disable() -> bool:
    """Remove the hook; stock CPython again. True if it was installed."""

def is_enabled() -> bool: ...

def config(threshold: Optional[int] = None, level: Optional[int] = None, pgc: Optional[bool] = None,
           debug: Optional[bool] = None, graph: Optional[bool] = None, profile: Optional[bool] = None,
           jit: Optional[bool] = None, max_instructions: Optional[int] = None,
           dump_asm: Union[str, "os.PathLike[str]", bool, None] = None,
           perf_map: Optional[bool] = None, compact_above: Optional[int] = None,
           opt: Union[str, bool, None] = None, tree_depth: Optional[int] = None,
           tree_nodes: Optional[int] = None, warmup: Optional[str] = None,
           profile_clock: Optional[str] = None) -> Dict[str, Any]:
    """Change settings (None = keep) and return all of them as a dict, incl. "unsupported":
    the names of settings accepted for Pyjion compatibility that have no effect here.
    warmup: "calls" (the hook counts calls up to threshold; 3.11's only mode) or "samples"
    (3.13's default: no PEP 523 hook, hot code found by sampling, compiled functions entered
    through their vectorcall). A threshold given alone means "calls"; threshold 0 and the
    profiler install the hook either way.
    tree_depth, tree_nodes: bounds of the profiler's call tree (pyjion.calltree; defaults
    256 and 200,000): deeper or new paths past them go to their deepest recorded ancestor.
    profile_clock: "ticks" (default: a clock a helper thread advances every 100 us, one load
    per call; statistical times, exact counts) or "tsc" (the time-stamp counter, exact per
    call, ~20 ns more per call); changes only while the profiler is off (forgets its stats).
    max_instructions: larger code objects stay interpreted (IncompatibleSize); 0 = no limit.
    compact_above: longer code objects (code units, caches included; default 128) get
    compact machine code: attribute and global lookups call code shared by all sites
    (0 = every code object). Applies to later compiles.
    debug: compiled code checks its frame (value stack and locals) against the
    compiler's frame model at every bytecode boundary; aborts on a mismatch.
    dump_asm: append each later compile's assembly listing (bytecode offset and
    opcode at every boundary, callee names at calls) to this file; "-" = stderr;
    False = off. PYJION_DUMP_ASM=path sets it when pyjion is imported.
    perf_map: True = append "start size pyjion::qualname:file:line" for every later
    block of machine code to /tmp/perf-<pid>.map, which `perf report` reads; reads
    back as that path (None when off). PYJION_PERF_MAP=1 sets it at import."""

def info(f: Union[Callable, Any]) -> JitInfo:
    """f: a function, method, code object or anything with __code__. TypeError otherwise."""

def native(f) -> Tuple[bytes, int, int]:
    """(machine code, size, address) of a compiled function; ValueError if not compiled."""

def stats() -> Dict[str, Any]:
    """{"functions": {FunctionKey: {"calls": int, "primitive_calls": int,
                                    "total_time": float,   # seconds incl. callees (cProfile ct)
                                    "own_time": float,     # seconds excl. callees (cProfile tt)
                                    "callers": {FunctionKey: {"calls", "primitive_calls",
                                                              "total_time", "own_time"}}}},
        "jit": {"compiled": int, "failed": int, "failed_reasons": {str: int},
                "compile_time_s": float, "code_bytes": int, "instructions": int,
                "exits": {str: int}}}   # the optimising tier's side exits by name, all code
    "functions" holds data only while/after profiling (enable(profile=True))."""

def reset_stats() -> None: ...
