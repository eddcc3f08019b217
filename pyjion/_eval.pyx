# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The PEP 523 hook: per-code records, the compile trigger, the profiler's
bookkeeping, and dispatch to machine code or to CPython's interpreter.

This module knows a record, a function pointer and an owner object per code
object; it knows nothing of how the machine code is made (pyjion._codegen)."""

from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF
from libc.stdint cimport uint32_t, uint64_t, uintptr_t
from libc.string cimport memset

cdef extern from "Python.h":
    ctypedef struct PyThreadState
    ctypedef struct PyTypeObject:
        const char *tp_name
    PyTypeObject PyLong_Type
    PyTypeObject PyFloat_Type
    PyObject *PyTuple_Pack(Py_ssize_t n, ...)
    ctypedef struct PyCodeObject:
        PyObject *co_filename
        PyObject *co_name
        int co_firstlineno
    PyThreadState *PyThreadState_Get()
    ctypedef struct PyInterpreterState
    PyInterpreterState *PyInterpreterState_Get()
    PyInterpreterState *PyInterpreterState_Main()
    Py_ssize_t _PyEval_RequestCodeExtraIndex(void (*free)(void *)) except -1
    int _PyCode_SetExtra(PyObject *code, Py_ssize_t index, void *extra)
    void *PyCapsule_Import(const char *name, int no_block) except NULL
    PyObject *PyErr_Occurred()
    void PyErr_Clear()
    void PyErr_Fetch(PyObject **t, PyObject **v, PyObject **tb)
    void PyErr_Restore(PyObject *t, PyObject *v, PyObject *tb)
    bint PyCode_Check(object o)

cdef extern from "codegen_api.h":
    ctypedef PyObject *(*vectorcallfunc)(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames) noexcept
    ctypedef PyObject *(*PyjionEntry)(PyThreadState *ts, void *frame, int throwflag) noexcept
    ctypedef struct PyjionCodeView:
        uint64_t calls
        int state
        int flags
        PyjionEntry entry
        PyjionEntry fallback_resume
    int PYJION_CODE_NO_OPT
    ctypedef struct PyjionCompileOptions:
        int debug
        int max_instructions
        int compact_above
        int opt
        int hot
        unsigned int arg_types
        int fallback
    int PYJION_ARG_INT, PYJION_ARG_FLOAT, PYJION_ARG_TYPE_BITS
    ctypedef struct PyjionCompileResult:
        int result
        PyjionEntry entry
        PyObject *owner
        PyObject *reason
        Py_ssize_t code_size
        Py_ssize_t instructions
        PyjionEntry osr_entry
        int tier
    ctypedef struct PyjionHookState:
        Py_ssize_t record_index
        void *evaluator
        int profiling
        PyjionEntry interpret
        int enabled
    ctypedef struct PyjionCodegenAPI:
        int version
        int (*compile)(PyObject *code, const PyjionCompileOptions *options, PyjionCompileResult *out) noexcept
        PyjionHookState *hook
        int (*osr_header)(PyObject *owner, int unit, int *depth) noexcept
        vectorcallfunc vectorcall
        vectorcallfunc cpython_vectorcall
    int PYJION_CODEGEN_API_VERSION
    int PYJION_RESULT_COMPILER_ERROR

cdef extern from "cpython_layer.h":
    ctypedef struct PyjFrame
    ctypedef PyObject *(*_PyFrameEvalFunction)(PyThreadState *, PyjFrame *, int) noexcept
    PyObject *_PyEval_EvalFrameDefault(PyThreadState *ts, PyjFrame *f, int throwflag) noexcept
    PyCodeObject *pyj_frame_code(PyjFrame *f) noexcept
    PyObject **pyj_frame_locals(PyjFrame *f) noexcept
    int pyj_tracing(PyThreadState *ts) noexcept
    void *pyj_code_extra(PyCodeObject *co, Py_ssize_t index) noexcept
    int pyj_code_set_extra(PyCodeObject *co, Py_ssize_t index, void *value) noexcept
    int pyj_code_argcount(PyCodeObject *co) noexcept
    int pyj_frame_is_resume(PyjFrame *f) noexcept
    int pyj_frame_creates_generator(PyjFrame *f) noexcept
    int pyj_recursion_will_fail(PyThreadState *ts) noexcept
    int pyj_on_main_thread() noexcept
    _PyFrameEvalFunction pyj_get_eval_func() noexcept
    void pyj_set_eval_func(_PyFrameEvalFunction fn) noexcept
    int pyj_frame_unit(PyjFrame *f) noexcept
    int pyj_code_nlocalsplus(PyCodeObject *co) noexcept
    int pyj_code_units(PyCodeObject *co) noexcept
    int pyj_code_unit_returns(PyCodeObject *co, int unit) noexcept
    int pyj_code_is_generator(PyCodeObject *co) noexcept
    int pyj_code_may_run_inline(PyCodeObject *co) noexcept
    int pyj_in_tracer(PyThreadState *ts) noexcept
    int PYJ_LOOP_TRAPS
    int PYJ_CALLS_BYPASS_HOOK, PYJ_UNITS_CALL
    void pyj_code_keep_calls_in_sight(PyCodeObject *co, const unsigned char *units) noexcept
    int PYJ_FUNCTION_ENTRY
    PyjFrame *pyj_thread_frame(PyThreadState *ts) noexcept

cdef extern from "function_entry.h":
    ctypedef struct PyjFunctionEntry:
        int active
        uint64_t adopted
    PyjFunctionEntry pyj_fentry
    void pyj_fentry_code_ready(PyCodeObject *co, PyjFrame *f) noexcept
    int pyj_fentry_code_enterable(PyCodeObject *co) noexcept
    int pyj_fentry_set_active(int on, Py_ssize_t record_index, vectorcallfunc vectorcall,
                              vectorcallfunc cpython) except -1

cdef extern from "cstack_guard.h":
    int pyj_cstack_exhausted() noexcept

cdef extern from "record.h":
    int PYJ_INTERPRETED, PYJ_COMPILING, PYJ_COMPILED, PYJ_FAILED, PYJ_PROFILING
    int PYJ_PROFILED_ARGS, PYJ_TYPES_PER_ARG
    ctypedef struct PyjTypeProfile:
        PyTypeObject *seen[6][4]
        unsigned char other[6]
        unsigned int samples
    ctypedef struct PyjEdge:
        PyObject *caller
        uint64_t calls, recursive_calls, total_ticks, own_ticks
    ctypedef struct PyjProfile:
        uint64_t calls, recursive_calls, total_ticks, own_ticks
        unsigned int listed, n_edges
        PyjEdge *edges
    ctypedef struct PyjRecord:
        PyjionCodeView view
        int tier, result
        PyObject *owner
        PyObject *retired
        PyObject *reason
        Py_ssize_t code_size
        Py_ssize_t fallback_size
        PyjTypeProfile *types
        PyjProfile prof
        PyjionEntry osr_entry
        unsigned int samples, osr_entries
        uint32_t warmth, hot_samples, epoch
        int trap_unit, trap_depth
        uint64_t stats_gen
    PyjRecord *pyj_record_new() noexcept
    void pyj_record_free(void *p) noexcept
    void pyj_record_types(PyjRecord *rec, PyObject **args, int nargs) noexcept
    void pyj_profile_clear(PyjProfile *p) noexcept

cdef extern from "profile_clock.h":
    ctypedef struct PyjProfClock:
        int exact
    PyjProfClock pyj_prof_clock
    double PYJ_PROF_TICKS_CLOCK_RATE
    int pyj_prof_clock_start() noexcept
    void pyj_prof_clock_stop() noexcept
    int pyj_prof_clock_forget_after_fork() noexcept

cdef extern from "profiler.h":
    ctypedef struct PyjCallContext:
        pass
    uint64_t pyj_ticks() noexcept
    double pyj_monotonic() noexcept
    void pyj_prof_begin(PyjCallContext *ctx, PyjRecord *rec, PyObject *code, uint64_t generation) noexcept
    void pyj_prof_end(PyjCallContext *ctx, uint64_t generation) noexcept
    ctypedef struct PyjCFunc:
        PyObject *name
        PyjProfile prof
    ctypedef struct PyjCFuncTable:
        PyjCFunc **all
        uint32_t n
    PyjCFuncTable pyj_cfuncs
    uint64_t pyj_prof_generation
    void pyj_cfuncs_clear() noexcept

cdef extern from "call_tree.h":
    uint32_t PYJ_TREE_NONE
    ctypedef struct PyjTreeNode:
        PyObject *code
        uint32_t parent, depth, flags
        uint64_t calls, total_ticks, own_ticks
    ctypedef struct PyjTreeNodeCold:
        unsigned long thread
        uint64_t folded_calls, folded_own_ticks
    enum:
        PYJ_TREE_RECURSIVE
        PYJ_TREE_EDGE_RECURSIVE
    ctypedef struct PyjTree:
        PyjTreeNode *nodes
        PyjTreeNodeCold *cold
        uint32_t n, max_nodes, max_depth
        uint64_t folded
    PyjTree pyj_tree
    void pyj_tree_clear() noexcept

cdef extern from "tiering.h":
    ctypedef struct PyjTierState:
        Py_ssize_t extra_index
        _PyFrameEvalFunction hook
        int traps_set
        uint64_t osr_entries, traps
    PyjTierState pyj_tier
    ctypedef struct PyjTrap:
        PyObject *code
        unsigned int age
    PyjTrap pyj_trap
    ctypedef struct PyjSampler:
        int running
        int pending
        unsigned int quiet
        unsigned long queued
        int with_threads
    PyjSampler pyj_sampler
    PyjFrame *pyj_interp_frame
    PyObject *pyj_interpret(PyThreadState *ts, PyjFrame *f, int throwflag) noexcept
    PyObject *pyj_interpret_with(PyThreadState *ts, PyjFrame *f, int throwflag, PyjRecord *rec) noexcept
    void pyj_trap_arm(PyCodeObject *co, PyjRecord *rec, int unit, int depth) noexcept
    void pyj_trap_disarm() noexcept
    int pyj_sampler_start(int (*callback)(void *) noexcept, unsigned int interval_us) noexcept
    void pyj_sampler_stop() noexcept
    int pyj_sampler_forget_after_fork() noexcept

cdef extern from "hook_entry.h":
    ctypedef struct PyjEntryState:
        PyObject *(*full)(PyThreadState *, PyjFrame *, int) noexcept
        Py_ssize_t record_index
        uint32_t warmth_limit
        uint32_t epoch
        int profiling
        vectorcallfunc vectorcall
        void (*list_profiled)(PyjRecord *rec, PyObject *code) noexcept
    PyjEntryState pyj_entry
    void pyj_prof_give_entry_points(PyjionHookState *hook) noexcept
    PyObject *pyj_hook_entry(PyThreadState *ts, PyjFrame *f, int throwflag) noexcept
    int pyj_hook_aside_pending() noexcept
    PyObject *pyj_interpret_handed_over(PyThreadState *ts, PyjFrame *f, int throwflag) noexcept
    void pyj_hook_aside_cancel() noexcept
    void pyj_record_warm_now(PyjRecord *rec) noexcept
    PyObject *pyj_enter_compiled(PyThreadState *ts, PyjFrame *f, int throwflag, PyjRecord *rec) noexcept

# ---- settings (read on every call, so plain C globals) ----------------------
cdef Py_ssize_t g_extra_index = -1
cdef bint g_installed = False
# Calls (or generator resumes) a code object runs interpreted before it is
# compiled; 0 compiles at the first call. docs/tiering.md: why this value.
DEFAULT_THRESHOLD = 1000
cdef uint64_t g_threshold = DEFAULT_THRESHOLD
# config(compact_above=...): code objects longer than this many code units are
# compiled compact (see PyjionCompileOptions): docs/code-size.md for the value.
DEFAULT_COMPACT_ABOVE = 128
# The sampler (tiering.h): its period, and how many samples a code object
# must collect before it is compiled by time rather than by calls (more for
# bigger code, whose compile costs more: about 3.5 us per code unit).
cdef unsigned int g_sample_interval_us = 1000
cdef unsigned int g_hot_samples = 2
# The tiering epoch (pyj_entry.epoch, the sampler's clock in 1/8 s): a
# record's warmth and hot samples halve per epoch passed (record.h), so what
# is compiled is what is warm now: about 1000 calls, or 2 + units/150 ticks,
# within the last ~1/4 s.
cdef double g_epochs_per_second = 8.0
cdef unsigned int g_units_per_sample = 150
cdef bint g_jit = True
# How code gets warm (config(warmup=...)): "calls", counted by the hook, which
# is installed while pyjion is enabled; or "samples" (3.12+, the default
# there): no hook is installed, the sampler finds the code that runs hot, and
# compiled code is entered through its functions' vectorcall
# (function_entry.h). Eager mode (threshold 0) and the profiler install the
# hook whatever this says.
cdef bint g_warmup_samples = PYJ_FUNCTION_ENTRY
# What PYJION=1 and enable() use when nothing is configured (bench/ measures it).
DEFAULT_WARMUP = "samples" if PYJ_FUNCTION_ENTRY else "calls"
cdef bint g_profile = False
cdef bint g_pgc = True
cdef PyjionCompileOptions g_options
cdef PyjionCodegenAPI *g_codegen = NULL

# ---- JIT statistics ---------------------------------------------------------
cdef Py_ssize_t g_compiled = 0
cdef Py_ssize_t g_recompiled = 0     # compiled again (eager mode's profile, the tier given up)
cdef Py_ssize_t g_failed = 0
cdef double g_compile_seconds = 0.0
cdef Py_ssize_t g_code_bytes = 0
cdef Py_ssize_t g_instructions = 0     # bytecode instructions compiled
cdef Py_ssize_t g_interpreted = 0      # records made this generation, still interpreted
cdef uint64_t g_samples = 0            # sampler ticks charged to an interpreted frame
cdef dict g_failed_reasons = {}

# ---- profiler state ---------------------------------------------------------
cdef uint64_t g_generation = 1
cdef list g_profiled = []          # code objects with profile data (kept alive, as cProfile does)
cdef uint64_t g_tsc0 = 0
cdef double g_clock0 = 0.0


cdef inline PyjRecord *record_for(PyCodeObject *co) noexcept:
    cdef PyjRecord *rec = <PyjRecord *>pyj_code_extra(co, g_extra_index)
    if rec != NULL:
        return rec
    global g_interpreted
    rec = pyj_record_new()
    if rec == NULL:
        return NULL
    if pyj_code_set_extra(co, g_extra_index, rec) < 0:
        PyErr_Clear()
        pyj_record_free(rec)
        return NULL
    rec.stats_gen = g_generation
    g_interpreted += 1
    return rec


cdef unsigned int profiled_arg_types(PyjRecord *rec) noexcept:
    """PyjionCompileOptions.arg_types from the record's type profile: the
    arguments that were an exact int, or an exact float, every time."""
    cdef unsigned int bits = 0
    cdef int a
    if rec.types == NULL:
        return 0
    for a in range(PYJ_PROFILED_ARGS):
        if rec.types.other[a] or rec.types.seen[a][0] == NULL or rec.types.seen[a][1] != NULL:
            continue
        if rec.types.seen[a][0] == &PyLong_Type:
            bits |= <unsigned int>PYJION_ARG_INT << (PYJION_ARG_TYPE_BITS * a)
        elif rec.types.seen[a][0] == &PyFloat_Type:
            bits |= <unsigned int>PYJION_ARG_FLOAT << (PYJION_ARG_TYPE_BITS * a)
    return bits


cdef int compile_code(PyjRecord *rec, PyCodeObject *co) noexcept:
    """Asks the code generator for machine code; returns 1 if the record is now
    compiled. An exception pending here (a frame entered by gen.throw() or
    close(): GeneratorExit) is put aside meanwhile and left as it was."""
    cdef PyjionCompileResult out
    cdef double start
    cdef PyObject *et
    cdef PyObject *ev
    cdef PyObject *tb
    cdef PyjionCompileOptions options = g_options
    if rec.view.flags & PYJION_CODE_NO_OPT:
        options.opt = 0   # its optimised code kept leaving: baseline code this time
    options.hot = 1 if rec.hot_samples > 0 else 0
    options.arg_types = profiled_arg_types(rec)
    memset(&out, 0, sizeof(out))
    rec.view.state = PYJ_COMPILING
    PyErr_Fetch(&et, &ev, &tb)
    start = pyj_monotonic()
    if g_codegen.compile(<PyObject *>co, &options, &out) < 0:
        PyErr_Clear()
        out.result = PYJION_RESULT_COMPILER_ERROR
        out.reason = NULL
    if out.entry != NULL and out.tier == 2 and rec.view.fallback_resume == NULL:
        compile_fallback(rec, co, options)
    PyErr_Restore(et, ev, tb)
    return finish_compile(rec, &out, pyj_monotonic() - start)


cdef void compile_fallback(PyjRecord *rec, PyCodeObject *co, PyjionCompileOptions options) noexcept:
    """Baseline code where the optimising tier's code goes on when it cannot
    (PyjionCodeView.fallback_resume: frames its side exits leave, and calls
    whose arguments fail its entry checks), kept as long as the record.
    Without it (it did not compile) the interpreter runs those."""
    global g_code_bytes
    cdef PyjionCompileResult fb
    memset(&fb, 0, sizeof(fb))
    options.opt = 0
    options.arg_types = 0
    options.fallback = 1
    if g_codegen.compile(<PyObject *>co, &options, &fb) < 0:
        PyErr_Clear()
        return
    Py_XDECREF(fb.reason)
    if fb.osr_entry != NULL and fb.owner != NULL and keep_alive(rec, fb.owner):
        rec.view.fallback_resume = fb.osr_entry
        rec.fallback_size = fb.code_size
        g_code_bytes += fb.code_size


cdef bint keep_alive(PyjRecord *rec, PyObject *owner) noexcept:
    """Adds machine code (its owner, a reference the record takes over) to the
    record's retired chain: frames may run it until the record goes."""
    cdef PyObject *both
    if rec.retired == NULL:
        rec.retired = owner
        return True
    both = PyTuple_Pack(2, rec.retired, owner)
    if both == NULL:
        PyErr_Clear()       # out of memory: the code is leaked, never freed early
        return False
    Py_XDECREF(rec.retired)
    Py_XDECREF(owner)
    rec.retired = both
    return True


cdef void retire_owner(PyjRecord *rec) noexcept:
    """Moves the record's machine code to its retired chain."""
    keep_alive(rec, rec.owner)
    rec.owner = NULL


cdef int finish_compile(PyjRecord *rec, PyjionCompileResult *out, double seconds) noexcept:
    global g_compiled, g_recompiled, g_failed, g_compile_seconds, g_code_bytes, g_instructions, g_interpreted
    g_compile_seconds += seconds
    rec.result = out.result
    if rec.stats_gen == g_generation:
        g_interpreted -= 1
    if out.entry != NULL and out.owner != NULL:
        rec.view.entry = out.entry
        rec.osr_entry = out.osr_entry
        if rec.owner != NULL:
            # A recompile (with the profile, or the optimising tier given up):
            # frames may still run the old machine code, which lives as long
            # as the record. Counted apart: "compiled" counts code objects.
            retire_owner(rec)
            g_recompiled += 1
        else:
            g_compiled += 1
        rec.owner = out.owner
        rec.code_size = out.code_size
        rec.tier = out.tier
        rec.view.state = PYJ_COMPILED
        g_code_bytes += out.code_size
        g_instructions += out.instructions
        return 1
    Py_XDECREF(out.owner)
    rec.reason = out.reason
    rec.view.state = PYJ_FAILED
    g_failed += 1
    try:
        key = <object>out.reason if out.reason != NULL else "internal compiler error"
        key = key.split(" at offset")[0]
        g_failed_reasons[key] = g_failed_reasons.get(key, 0) + 1
    except BaseException:
        PyErr_Clear()
    return 0


cdef inline PyObject *run_frame(PyThreadState *ts, PyjFrame *f, int throwflag,
                                PyjRecord *rec, PyCodeObject *co) noexcept:
    # The call that merely creates a generator always runs in the interpreter;
    # machine code takes over at its resumes (throw() included).
    cdef bint unprofiled
    if rec.view.state == PYJ_COMPILED:
        if not pyj_tracing(ts) and not pyj_frame_creates_generator(f):
            return pyj_enter_compiled(ts, f, throwflag, rec)
    elif rec.view.state == PYJ_PROFILING:
        if not pyj_tracing(ts):
            profile_and_recompile(rec, co, f)
            if rec.view.state == PYJ_COMPILED:
                return pyj_enter_compiled(ts, f, throwflag, rec)
    elif rec.view.state == PYJ_INTERPRETED:
        pyj_record_warm_now(rec)   # also lets the C entry take its next calls
        if not g_jit or pyj_tracing(ts):
            return pyj_interpret_with(ts, f, throwflag, rec)
        rec.warmth += 1
        if rec.warmth > g_threshold:
            # Eager mode: compiled before any call was profiled. This call is
            # the profiled one; the next is compiled with its profile.
            unprofiled = g_pgc and rec.types == NULL and not pyj_code_is_generator(co)
            if compile_code(rec, co) and not pyj_frame_creates_generator(f):
                if unprofiled:
                    pyj_record_types(rec, pyj_frame_locals(f), pyj_code_argcount(co))
                    rec.view.state = PYJ_PROFILING
                return pyj_enter_compiled(ts, f, throwflag, rec)
        elif g_pgc and rec.warmth * 2 > g_threshold and not pyj_frame_is_resume(f):
            # Types are recorded in the second half of the warm-up only: code
            # that never gets warm keeps no profile.
            pyj_record_types(rec, pyj_frame_locals(f), pyj_code_argcount(co))
    return pyj_interpret_with(ts, f, throwflag, rec)


cdef void profile_and_recompile(PyjRecord *rec, PyCodeObject *co, PyjFrame *f) noexcept:
    """Replaces the machine code of a PROFILING record: the optimising tier's
    given up (baseline code now), or eager mode's first (this call is
    profiled, and the code compiled again with the arguments' types; where
    the profile types no argument the compile would make the same code,
    which stays)."""
    if not rec.view.flags & PYJION_CODE_NO_OPT:
        pyj_record_types(rec, pyj_frame_locals(f), pyj_code_argcount(co))
        if profiled_arg_types(rec) == 0:
            rec.view.state = PYJ_COMPILED
            return
    if not compile_code(rec, co) and rec.owner != NULL:
        rec.view.state = PYJ_COMPILED   # the code it has stays (it compiled once)


cdef unsigned char g_call_site_units[256]
cdef bint g_call_site_units_made = False
cdef bint g_call_site_units_making = False


cdef bint call_site_units() noexcept:
    """g_call_site_units (cpython313.h's pyj_code_keep_calls_in_sight): each
    opcode's inline cache units, PYJ_UNITS_CALL on CALL's family; made from
    the opcode module the first time the profiler needs it."""
    global g_call_site_units_made, g_call_site_units_making
    if g_call_site_units_made:
        return True
    if g_call_site_units_making:
        return False        # the import below runs profiled frames: not again from those
    g_call_site_units_making = True
    try:
        import opcode
        entries = opcode._inline_cache_entries
        family = {name: name for name in opcode.opmap}
        for base, names in opcode._specializations.items():
            for name in names:
                family[name] = base
        ops = dict(opcode.opmap)
        ops.update(opcode._specialized_opmap)
        for name, op in ops.items():
            if 0 <= op < 256:
                base = family.get(name, name)
                g_call_site_units[op] = entries.get(base, 0) | (PYJ_UNITS_CALL if base == "CALL" else 0)
    except BaseException:
        PyErr_Clear()
        g_call_site_units_making = False
        return False
    g_call_site_units_making = False
    g_call_site_units_made = True
    return True


cdef void list_profiled(PyjRecord *rec, PyObject *co) noexcept:
    """pyj_entry.list_profiled: the first profiled call of the record's code."""
    rec.prof.listed = 1
    try:
        g_profiled.append(<object>co)
    except BaseException:
        PyErr_Clear()
        rec.prof.listed = 0
    if PYJ_CALLS_BYPASS_HOOK and call_site_units():
        pyj_code_keep_calls_in_sight(<PyCodeObject *>co, g_call_site_units)   # every call the hook's to see


pyj_entry.list_profiled = list_profiled


cdef PyObject *profiled_frame(PyThreadState *ts, PyjFrame *f, int throwflag,
                              PyjRecord *rec, PyCodeObject *co) noexcept:
    cdef PyjCallContext ctx
    cdef PyObject *result
    cdef uint64_t generation = g_generation
    if not rec.prof.listed:
        list_profiled(rec, <PyObject *>co)
    pyj_prof_begin(&ctx, rec, <PyObject *>co, generation)
    result = run_frame(ts, f, throwflag, rec, co)
    pyj_prof_end(&ctx, g_generation)
    return result


cdef PyObject *pyjion_eval(PyThreadState *ts, PyjFrame *f, int throwflag) noexcept:
    cdef PyCodeObject *co = pyj_frame_code(f)
    cdef PyjRecord *rec = record_for(co)
    if rec == NULL:
        return pyj_interpret(ts, f, throwflag)
    if pyj_cstack_exhausted():
        return NULL
    if pyj_recursion_will_fail(ts):
        return pyj_interpret(ts, f, throwflag)   # raises RecursionError
    rec.view.calls += 1
    if g_profile and not pyj_frame_creates_generator(f):
        return profiled_frame(ts, f, throwflag, rec, co)
    return run_frame(ts, f, throwflag, rec, co)


# ---- tiering: samples and on-stack replacement (tiering.h) ------------------

cdef int g_inline_getitem = -1      # BINARY_SUBSCR_GETITEM may bypass the hook: 1, 0, -1 = not probed


cdef inline bint tiering_wanted() noexcept:
    # (Warm-up by samples samples with the JIT off too: what deciding what to
    # compile costs is measured that way, PYJION_JIT=0.)
    return g_installed and g_threshold > 0 and (g_jit or hookless_on())


cdef inline uint32_t epoch_now() noexcept:
    return <uint32_t>(pyj_monotonic() * g_epochs_per_second)


cdef int on_sample(void *arg) noexcept:
    """The sampler's pending call (main thread, GIL held, at an eval-breaker check)."""
    pyj_sampler.pending = 0
    pyj_entry.epoch = epoch_now()
    if tiering_wanted() and (hookless_on() or pyj_get_eval_func() == hook):
        if sample_frame(PyThreadState_Get(), False):
            pyj_sampler.quiet = 0
        else:
            pyj_sampler.quiet += 1
    return 0


cdef int sample_frame(PyThreadState *ts, bint force) noexcept:
    """Charges a sample to the innermost frame the hook is interpreting (without
    the hook: the thread's innermost frame); once its code is hot, compiles it
    and sets a trap at the header of the loop the frame is in, so the frame
    goes on in machine code (without the hook: its functions are entered
    through their vectorcall from then on). Returns 1 if it compiled the code
    or set a trap."""
    global g_samples
    cdef bint hookless = hookless_on()
    cdef PyjFrame *f = pyj_thread_frame(ts) if hookless else pyj_interp_frame
    cdef PyCodeObject *co
    cdef PyjRecord *rec
    cdef int header, depth = 0, compiled = 0
    if pyj_trap.code != NULL:
        pyj_trap.age += 1
        if pyj_trap.age < 32 and not force:
            return 0          # one trap at a time; an old one was never reached: take it down
        pyj_trap_disarm()
    if f == NULL or pyj_tracing(ts) or pyj_in_tracer(ts) or (g_codegen == NULL and not hookless):
        return 0
    co = pyj_frame_code(f)
    # (Without the hook, the sampler is the first to meet most code.)
    rec = record_for(co) if hookless else <PyjRecord *>pyj_code_extra(co, g_extra_index)
    if rec == NULL:
        return 0
    rec.samples += 1
    g_samples += 1
    if rec.view.state == PYJ_INTERPRETED:
        pyj_record_warm_now(rec)
        rec.hot_samples += 1
        if not force and rec.hot_samples < g_hot_samples + <unsigned int>pyj_code_units(co) // g_units_per_sample:
            return 0
        if hookless and not pyj_fentry_code_enterable(co):
            return 0          # a module body, a generator's resumes: no vectorcall ever enters them
        if not g_jit or g_codegen == NULL:
            return 0          # counting only (the JIT is off)
        if g_pgc and not pyj_code_is_generator(co):
            # The frame's arguments as they are now: the optimising tier's
            # profile where the code never ran warm by calls.
            pyj_record_types(rec, pyj_frame_locals(f), pyj_code_argcount(co))
        compiled = compile_code(rec, co)
    if hookless:
        pyj_fentry_code_ready(co, f)   # compiled now or before: this function enters the machine code
        return compiled
    if rec.view.state != PYJ_COMPILED or rec.osr_entry == NULL or rec.owner == NULL:
        return compiled
    if pyj_code_is_generator(co):
        # A generator that works long between yields (a search that yields
        # each hit) is compiled by time like a function; its frame needs no
        # trap: the next resume enters the machine code at the yield.
        return compiled
    if pyj_code_may_run_inline(co) and inline_getitem():
        return compiled
    if not PYJ_LOOP_TRAPS:
        return compiled
    header = g_codegen.osr_header(rec.owner, pyj_frame_unit(f), &depth)
    if header < 0 or pyj_code_unit_returns(co, header):
        return compiled
    if depth == 0 and pyj_code_nlocalsplus(co) == 0:
        return compiled       # RETURN_VALUE would pop from below the frame's values
    pyj_trap_arm(co, rec, header, depth)
    return 1


def _probe_inline_getitem():
    """Whether this CPython runs a class's Python __getitem__ inside the
    caller's interpreter activation without the hook (3.11 before the fix of
    BINARY_SUBSCR_GETITEM under PEP 523): then two-argument code gets no traps."""
    global g_inline_getitem, g_jit, g_profile, g_interpreted
    cdef bint jit = g_jit, profile = g_profile
    cdef Py_ssize_t interpreted = g_interpreted
    g_jit = False             # the loop must run in the interpreter, specialised,
    g_profile = False         # and is none of the program's business
    try:
        from pyjion import _getitem_probe as probe
        probe.run(probe.Probe())
    finally:
        g_jit = jit
        g_profile = profile
        g_interpreted = interpreted
    g_inline_getitem = record_info(probe.Probe.__getitem__.__code__)["calls"] != 64
    return bool(g_inline_getitem)


def _getitem_probe_result():
    """Test hook: None until the probe ran, then whether it found the bypass."""
    return None if g_inline_getitem < 0 else bool(g_inline_getitem)


cdef bint inline_getitem() noexcept:
    """The probe's answer, probed when first needed (a trap for two-argument
    code), not at start-up: most processes never ask."""
    global g_inline_getitem
    cdef PyObject *et
    cdef PyObject *ev
    cdef PyObject *tb
    if g_inline_getitem < 0:
        PyErr_Fetch(&et, &ev, &tb)
        try:
            _probe_inline_getitem()
        except BaseException:
            g_inline_getitem = 1      # unknown: no traps for two-argument code
        PyErr_Restore(et, ev, tb)
    return g_inline_getitem == 1


cdef update_sampler():
    """The sampler runs while the hook is installed and compiles by threshold."""
    if tiering_wanted():
        if not pyj_sampler.running:
            # The epoch is the clock's from the first start: left at 0, the
            # first tick would cool the warmth of every call made before it,
            # as if they were from long ago. (A restart keeps the epoch the
            # last tick set: the sampler's clock alone moves it.)
            if pyj_entry.epoch == 0:
                pyj_entry.epoch = epoch_now()
            if pyj_sampler_start(on_sample, g_sample_interval_us) < 0:
                raise RuntimeError("pyjion: could not start the sampler thread")
    else:
        pyj_sampler_stop()
        pyj_trap_disarm()


def _sample_now():
    """Test hook: one sample that counts as hot, for the frame that calls this."""
    return sample_frame(PyThreadState_Get(), True)


def _advance_epoch(n=1):
    """Test hook: as if n tiering epochs passed (the sampler sets the epoch
    from its clock at every tick; stop it first to keep this one)."""
    pyj_entry.epoch += n


def _stop_sampler():
    pyj_sampler_stop()
    pyj_trap_disarm()
    pyj_prof_clock_stop()


cdef bint g_fork_from_main = True


def _before_fork():
    global g_fork_from_main
    g_fork_from_main = pyj_on_main_thread()


def _after_fork_child():
    # A child forked from a thread other than the main one ends when that
    # thread exits, without atexit: a sampler started here would keep it
    # alive, so such a child tiers by call counts only.
    if pyj_sampler_forget_after_fork() and g_fork_from_main:
        update_sampler()
    if pyj_prof_clock_forget_after_fork() and g_fork_from_main and g_profile:
        pyj_prof_clock_start()


import atexit as _atexit
import os as _os
_atexit.register(_stop_sampler)
_os.register_at_fork(before=_before_fork, after_in_child=_after_fork_child)


# ---- Python-level control ---------------------------------------------------

cdef _PyFrameEvalFunction hook = <_PyFrameEvalFunction>pyj_hook_entry
pyj_entry.full = pyjion_eval


cdef void sync_entry() noexcept:
    """Tells the hook's C entry (hook_entry.h) which calls it may take alone."""
    pyj_entry.record_index = g_extra_index
    pyj_entry.profiling = g_profile
    if not g_jit:
        pyj_entry.warmth_limit = 0xFFFFFFFF        # nothing compiles, no types recorded
    elif g_pgc:
        pyj_entry.warmth_limit = <uint32_t>min(g_threshold // 2, 0xFFFFFFFF)   # types are recorded past it
    else:
        pyj_entry.warmth_limit = <uint32_t>min(g_threshold, 0xFFFFFFFF)
cdef _PyFrameEvalFunction default_eval = <_PyFrameEvalFunction>_PyEval_EvalFrameDefault


cdef void load_codegen() except *:
    global g_codegen
    if g_codegen != NULL:
        return
    require_main_interpreter()    # (pybind11's module hangs there)
    import pyjion._codegen
    cdef PyjionCodegenAPI *api = <PyjionCodegenAPI *>PyCapsule_Import(b"pyjion._codegen._C_API", 0)
    if api.version != PYJION_CODEGEN_API_VERSION:
        raise ImportError("pyjion._codegen speaks API version %d, the hook needs %d"
                          % (api.version, PYJION_CODEGEN_API_VERSION))
    g_codegen = api
    pyj_entry.vectorcall = api.vectorcall   # given to the functions the hook sees
    sync_hook_state()


cdef void sync_hook_state() noexcept:
    """Tells the code generator's direct calls what they must know of the hook."""
    if g_codegen == NULL:
        return
    g_codegen.hook.record_index = g_extra_index
    g_codegen.hook.evaluator = <void *>hook
    g_codegen.hook.profiling = g_profile
    g_codegen.hook.interpret = <PyjionEntry>pyj_interpret_handed_over
    g_codegen.hook.enabled = g_installed
    pyj_prof_give_entry_points(g_codegen.hook)   # calls timed by machine code, on the clock chosen


def _ensure_extra_index():
    global g_extra_index
    if g_extra_index < 0:
        g_extra_index = _PyEval_RequestCodeExtraIndex(pyj_record_free)
        sync_entry()
        pyj_tier.extra_index = g_extra_index
        pyj_tier.hook = hook


g_options.max_instructions = 50000   # bigger (generated) code stays interpreted
g_options.compact_above = DEFAULT_COMPACT_ABOVE
# The optimising tier (PyjionCompileOptions.opt): "auto" where the code ran
# warm in the interpreter and its code pays, "always" wherever it unboxes
# anything (tests, experiments). config(pgc=False) turns it off.
_OPT_MODES = ("auto", "always")

cdef int g_opt_mode = 1
g_options.opt = 1


def _count_setting(name, value, limit):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("%s must be an int, not %s" % (name, type(value).__name__))
    if value < 0 or value > limit:
        raise ValueError("%s must be between 0 and %d" % (name, limit))
    return value


_WARMUPS = ("calls", "samples")


_PROFILE_CLOCKS = ("ticks", "tsc")


def set_config(threshold=None, jit=None, profile=None, pgc=None, debug=None, max_instructions=None,
               compact_above=None, opt=None, warmup=None, profile_clock=None):
    """Changes the hook's settings (None keeps one); checks them all first.
    A threshold given without a warm-up asks for calls to be counted: it
    sets warmup to "calls"."""
    global g_threshold, g_jit, g_pgc, g_opt_mode, g_warmup_samples
    if opt is not None and opt not in _OPT_MODES:
        raise ValueError("opt must be one of %s, not %r" % (", ".join(map(repr, _OPT_MODES)), opt))
    if warmup is not None and warmup not in _WARMUPS:
        raise ValueError("warmup must be one of %s, not %r" % (", ".join(map(repr, _WARMUPS)), warmup))
    if warmup == "samples" and not PYJ_FUNCTION_ENTRY:
        raise ValueError("warmup=\"samples\" needs CPython 3.12 or later (compiled code is entered "
                         "through functions' vectorcall there); this CPython counts calls")
    if profile_clock is not None:
        if profile_clock not in _PROFILE_CLOCKS:
            raise ValueError("profile_clock must be one of %s, not %r"
                             % (", ".join(map(repr, _PROFILE_CLOCKS)), profile_clock))
        stops = profile is not None and not profile      # this call turns the profiler off first
        if g_profile and (profile_clock == "tsc") != pyj_prof_clock.exact and not stops:
            raise ValueError("profile_clock can change only while the profiler is off")
    if threshold is not None:
        _count_setting("threshold", threshold, 2 ** 63 - 1)
    if max_instructions is not None:
        _count_setting("max_instructions", max_instructions, 2 ** 31 - 1)
    if compact_above is not None:
        _count_setting("compact_above", compact_above, 2 ** 31 - 1)
    if threshold is not None:
        g_threshold = threshold
        if warmup is None:
            g_warmup_samples = False
    if warmup is not None:
        g_warmup_samples = warmup == "samples"
    if jit is not None:
        if jit:
            load_codegen()
        g_jit = bool(jit)
    if pgc is not None:
        g_pgc = bool(pgc)
    if opt is not None:
        g_opt_mode = _OPT_MODES.index(opt) + 1
    g_options.opt = g_opt_mode if g_pgc else 0   # the optimising tier speculates on the profile
    if debug is not None:
        g_options.debug = 1 if debug else 0
    if max_instructions is not None:
        g_options.max_instructions = max_instructions
    if compact_above is not None:
        g_options.compact_above = compact_above
    if profile is not None and not profile:
        set_profiling(False)
    if profile_clock is not None:
        set_profile_clock(profile_clock == "tsc")
    if profile:
        set_profiling(True)
    sync_entry()
    if threshold is not None or jit is not None or warmup is not None or profile is not None:
        apply_entry()


cdef set_profiling(bint on):
    global g_profile, g_tsc0, g_clock0
    if on and PYJ_CALLS_BYPASS_HOOK:
        call_site_units()       # imports opcode now, not profiled inside the first profiled frame
    if on and not g_profile and pyj_prof_clock_start() < 0:
        raise OSError("pyjion: the profiler's clock thread could not start")
    if on and not g_profile and g_tsc0 == 0:
        g_tsc0 = pyj_ticks()
        g_clock0 = pyj_monotonic()
    if not on:
        pyj_prof_clock_stop()
    g_profile = on
    sync_hook_state()
    sync_entry()


cdef set_profile_clock(bint exact):
    """Chooses the profiler's clock (profile_clock.h), the profiler being
    off. Times taken on the other clock are in its units: the profile's
    statistics are forgotten when the clock changes."""
    global g_tsc0
    if exact == pyj_prof_clock.exact:
        return
    pyj_prof_clock.exact = exact
    reset_stats()
    g_tsc0 = 0          # the exact clock's rate is calibrated from the next start
    sync_hook_state()   # machine code's timed calls read this clock


def get_config():
    return {"threshold": g_threshold, "warmup": _WARMUPS[1 if g_warmup_samples else 0],
            "jit": bool(g_jit), "profile": bool(g_profile),
            "pgc": bool(g_pgc), "debug": bool(g_options.debug),
            "max_instructions": g_options.max_instructions,
            "compact_above": g_options.compact_above, "opt": _OPT_MODES[g_opt_mode - 1],
            "profile_clock": _PROFILE_CLOCKS[1 if pyj_prof_clock.exact else 0]}


def in_main_interpreter():
    """The hook's state (the sampler, the code records, the direct calls) is
    one per process: only the main interpreter installs it."""
    return PyInterpreterState_Get() == PyInterpreterState_Main()


cdef require_main_interpreter():
    if not in_main_interpreter():
        raise RuntimeError("pyjion runs in the main interpreter only, not in a subinterpreter")


cdef inline bint hook_wanted() noexcept:
    """Whether enabled pyjion needs the PEP 523 hook: counting calls, eager
    mode, the profiler; not for warm-up by samples (g_warmup_samples)."""
    return not (g_warmup_samples and g_threshold > 0 and not g_profile)


cdef bint hookless_on() noexcept:
    return g_installed and not hook_wanted()


cdef apply_entry():
    """Makes the frame evaluation function, the function-entry mode and the
    sampler what the settings ask while pyjion is enabled (g_installed)."""
    cdef bint hookless = hookless_on()
    if hookless:
        if g_jit:
            load_codegen()
        if pyj_hook_aside_pending():
            pyj_hook_aside_cancel()      # stepped aside for a traced frame: it stays out
        if pyj_get_eval_func() == hook:
            pyj_set_eval_func(default_eval)
    elif g_installed and pyj_get_eval_func() == default_eval and not pyj_hook_aside_pending():
        pyj_set_eval_func(hook)          # (left alone if another PEP 523 function took its place)
    pyj_fentry_set_active(hookless and g_jit, g_extra_index,
                          g_codegen.vectorcall if g_codegen != NULL else NULL,
                          g_codegen.cpython_vectorcall if g_codegen != NULL else NULL)
    pyj_sampler.with_threads = hookless
    sync_hook_state()
    update_sampler()


def install():
    """Enables pyjion: installs the hook where the settings need it (see
    hook_wanted); True if newly enabled, False if it already was."""
    global g_installed
    require_main_interpreter()
    _ensure_extra_index()
    if g_jit:
        load_codegen()
    cdef bint was = installed()
    cdef _PyFrameEvalFunction current = pyj_get_eval_func()
    if hook_wanted() and current != hook:
        if current != default_eval:
            raise RuntimeError("another PEP 523 frame evaluation function is already installed "
                               "(a debugger or another JIT); pyjion will not replace it")
        pyj_set_eval_func(hook)
    g_installed = True
    apply_entry()
    return not was


def uninstall():
    """Restores CPython's own evaluation; True if pyjion was enabled."""
    global g_installed
    cdef bint was = installed()
    if pyj_hook_aside_pending():
        # Stepped aside for a traced frame (hook_entry.h): it stays out.
        pyj_hook_aside_cancel()
    if pyj_get_eval_func() == hook:
        pyj_set_eval_func(default_eval)
    g_installed = False
    apply_entry()
    return was


def installed():
    return hookless_on() or pyj_get_eval_func() == hook or bool(pyj_hook_aside_pending())


def hook_installed():
    """Whether the PEP 523 hook is CPython's frame evaluation function now."""
    return pyj_get_eval_func() == hook


cdef PyjRecord *existing_record(code) except? NULL:
    if g_extra_index < 0:
        return NULL
    # Not isinstance(code, type((lambda: 0).__code__)): making a Cython lambda
    # and reading its __code__ on every call leaked a reference to Cython's
    # function type each time (found by tools/refleak.py).
    if not PyCode_Check(code):
        raise TypeError("expected a code object, got %s" % type(code).__name__)
    return <PyjRecord *>pyj_code_extra(<PyCodeObject *><PyObject *>code, g_extra_index)


_STATE_NAMES = ("interpreted", "compiling", "compiled", "failed", "compiled")


def record_info(code):
    """The record of `code` as a dict (all zero if the hook never saw it)."""
    cdef PyjRecord *rec = existing_record(code)
    cdef int a, t
    info = {"calls": 0, "state": "interpreted", "tier": 0, "result": 0, "reason": None,
            "code_size": 0, "arg_types": (), "type_samples": 0, "owner": None, "opt_given_up": False,
            "samples": 0, "osr_entries": 0, "pgc": 0, "fallback": False, "fallback_size": 0}
    if rec == NULL:
        return info
    info["calls"] = rec.view.calls
    info["samples"] = rec.samples
    info["osr_entries"] = rec.osr_entries
    info["fallback"] = rec.view.fallback_resume != NULL
    info["fallback_size"] = rec.fallback_size
    info["state"] = _STATE_NAMES[rec.view.state]
    # Pyjion 2.0's profile-guided stages: 1 once a call was profiled, 2 once
    # compiled with the profile.
    if rec.types != NULL and rec.types.samples > 0:
        info["pgc"] = 2 if rec.view.state == PYJ_COMPILED else 1
    info["tier"] = rec.tier
    info["opt_given_up"] = bool(rec.view.flags & PYJION_CODE_NO_OPT)
    info["result"] = rec.result
    info["code_size"] = rec.code_size
    if rec.reason != NULL:
        info["reason"] = <object>rec.reason
    if rec.owner != NULL:
        info["owner"] = <object>rec.owner
    if rec.types != NULL:
        info["type_samples"] = rec.types.samples
        arg_types = []
        for a in range(min(PYJ_PROFILED_ARGS, (<object>code).co_argcount + (<object>code).co_kwonlyargcount)):
            names = []
            for t in range(PYJ_TYPES_PER_ARG):
                if rec.types.seen[a][t] != NULL:
                    names.append((<bytes>rec.types.seen[a][t].tp_name).decode())
            if rec.types.other[a]:
                names.append("object")
            arg_types.append(tuple(names))
        info["arg_types"] = tuple(arg_types)
    return info


def jit_stats():
    return {"compiled": g_compiled, "recompiled": g_recompiled, "failed": g_failed, "failed_reasons": dict(g_failed_reasons),
            "compile_time_s": g_compile_seconds, "code_bytes": g_code_bytes,
            "instructions": g_instructions, "interpreted": g_interpreted,
            "samples": g_samples, "osr_traps": pyj_tier.traps, "osr_entries": pyj_tier.osr_entries,
            "sampler_running": bool(pyj_sampler.running),
            "functions_given_vectorcall": pyj_fentry.adopted,
            "code_bytes_alive": _code_bytes_alive()}


def _code_bytes_alive():
    """Bytes of machine code allocated now (the code heap's live bytes)."""
    if g_codegen == NULL:
        return 0
    import pyjion._codegen
    return pyjion._codegen.code_heap_stats()["live_bytes"]


cdef double ticks_per_second():
    cdef uint64_t t0
    cdef double c0
    if not pyj_prof_clock.exact:
        return PYJ_PROF_TICKS_CLOCK_RATE
    if g_tsc0 == 0:
        return 1e9
    if pyj_monotonic() - g_clock0 < 0.05:
        # Too short a run to calibrate on: measure a short interval now.
        t0 = pyj_ticks()
        c0 = pyj_monotonic()
        while pyj_monotonic() - c0 < 0.02:
            pass
        return (pyj_ticks() - t0) / (pyj_monotonic() - c0)
    return (pyj_ticks() - g_tsc0) / (pyj_monotonic() - g_clock0)


cdef dict profile_entry(uint64_t calls, uint64_t recursive, uint64_t total, uint64_t own, double rate):
    return {"calls": calls, "primitive_calls": calls - recursive,
            "total_time": total / rate, "own_time": own / rate}


cdef tuple code_key(code):
    if type(code) is str:       # a C function's label (profiler.h's PyjCFunc), as cProfile keys it
        return ("~", 0, code)
    return (code.co_filename, code.co_firstlineno, code.co_name)


cdef dict profile_with_callers(PyjProfile *prof, double rate):
    cdef PyjEdge *edge
    cdef unsigned int i
    entry = profile_entry(prof.calls, prof.recursive_calls, prof.total_ticks, prof.own_ticks, rate)
    callers = {}
    for i in range(prof.n_edges):
        edge = &prof.edges[i]
        if edge.calls == 0:
            continue
        callers[code_key(<object>edge.caller)] = profile_entry(
            edge.calls, edge.recursive_calls, edge.total_ticks, edge.own_ticks, rate)
    entry["callers"] = callers
    return entry


cdef list tree_sums():
    """The flat profile's exact calls (profiler.h), summed from the call
    tree's nodes: [(code, [calls, recursive, total, own], {id(caller):
    [calls, recursive, total, own, caller]})], in ticks. A node whose code (or
    caller->callee pair) is already on its path adds its calls as recursive
    and no total time, as cProfile counts them."""
    cdef uint32_t i
    cdef PyjTreeNode *n
    cdef PyObject *caller
    by_code = {}
    for i in range(pyj_tree.n):
        n = &pyj_tree.nodes[i]
        if n.code == NULL or n.calls == 0:
            continue
        key = <Py_ssize_t>n.code
        sums = by_code.get(key)
        if sums is None:
            sums = by_code[key] = (<object>n.code, [0, 0, 0, 0], {})
        add_node(sums[1], n, n.flags & PYJ_TREE_RECURSIVE)
        caller = pyj_tree.nodes[n.parent].code
        if caller != NULL:
            edge = sums[2].get(<Py_ssize_t>caller)      # (by identity: a code's hash is not cheap)
            if edge is None:
                edge = sums[2][<Py_ssize_t>caller] = [0, 0, 0, 0, <object>caller]
            add_node(edge, n, n.flags & PYJ_TREE_EDGE_RECURSIVE)
    return list(by_code.values())


cdef inline add_node(list sums, PyjTreeNode *n, bint recursive):
    sums[0] += n.calls
    if recursive:
        sums[1] += n.calls
    else:
        sums[2] += n.total_ticks
    sums[3] += n.own_ticks


def function_stats():
    """Profiler data: {(file, line, name): {calls, primitive_calls, total_time, own_time, callers}}.
    C functions called from machine code are keyed as cProfile keys them:
    ("~", 0, "<built-in method builtins.len>"). Exact calls come from the
    call tree's nodes, folded ones from the profiles (profiler.h)."""
    cdef PyjRecord *rec
    cdef PyjCFunc *cf
    cdef uint32_t i
    cdef double rate = ticks_per_second()
    result = {}

    def add(key, entry):
        if key in result:       # two code objects (or C functions) with one label: merge
            merge_entries(result[key], entry)
        else:
            result[key] = entry

    for code, sums, callers in tree_sums():
        entry = profile_entry(sums[0], sums[1], sums[2], sums[3], rate)
        entry["callers"] = {}
        for e in callers.values():
            add_edge(entry["callers"], code_key(e[4]), profile_entry(e[0], e[1], e[2], e[3], rate))
        add(code_key(code), entry)
    for code in g_profiled:
        rec = <PyjRecord *>pyj_code_extra(<PyCodeObject *><PyObject *>code, g_extra_index)
        if rec == NULL or rec.prof.calls == 0:
            continue
        add(code_key(code), profile_with_callers(&rec.prof, rate))
    for i in range(pyj_cfuncs.n):
        cf = pyj_cfuncs.all[i]
        if cf.prof.calls == 0:
            continue
        add(code_key(<object>cf.name), profile_with_callers(&cf.prof, rate))
    return result


def call_tree():
    """The profiler's call tree (call_tree.h) as plain data: {"nodes": [(code or
    None for a thread's root, thread ident, parent index or -1, calls,
    total_time, own_time)], "folded": calls charged to an ancestor, "max_depth",
    "max_nodes"}; a node's parent comes before it."""
    cdef double rate = ticks_per_second()
    cdef uint32_t i
    cdef PyjTreeNode *n
    cdef PyjTreeNodeCold *c
    nodes = []
    for i in range(pyj_tree.n):
        n = &pyj_tree.nodes[i]
        c = &pyj_tree.cold[i]
        nodes.append((<object>n.code if n.code != NULL else None, c.thread,
                      -1 if n.parent == PYJ_TREE_NONE else <long>n.parent,
                      n.calls + c.folded_calls, n.total_ticks / rate, (n.own_ticks + c.folded_own_ticks) / rate))
    return {"nodes": nodes, "folded": pyj_tree.folded, "max_depth": pyj_tree.max_depth,
            "max_nodes": pyj_tree.max_nodes}


def set_call_tree_bounds(max_depth=None, max_nodes=None):
    """Bounds of the call tree (config(tree_depth=..., tree_nodes=...))."""
    if max_depth is not None:
        if not 1 <= max_depth <= 100000:
            raise ValueError("tree_depth must be between 1 and 100000")
        pyj_tree.max_depth = max_depth
    if max_nodes is not None:
        if not 16 <= max_nodes <= 50000000:
            raise ValueError("tree_nodes must be between 16 and 50000000")
        pyj_tree.max_nodes = max_nodes
    return pyj_tree.max_depth, pyj_tree.max_nodes


cdef merge_entries(dict into, dict other):
    for name in ("calls", "primitive_calls", "total_time", "own_time"):
        into[name] += other[name]
    for caller, edge in other["callers"].items():
        add_edge(into["callers"], caller, edge)


cdef add_edge(dict callers, tuple caller, dict edge):
    """Two callers with one label (code objects of one function, re-imported) are one edge."""
    if caller in callers:
        for name in ("calls", "primitive_calls", "total_time", "own_time"):
            callers[caller][name] += edge[name]
    else:
        callers[caller] = edge


def reset_stats():
    """Forgets all profiler data and JIT statistics (machine code stays)."""
    global g_generation, g_profiled, g_compiled, g_recompiled, g_failed, g_compile_seconds, g_code_bytes, g_instructions
    global pyj_prof_generation
    global g_tsc0, g_clock0, g_interpreted, g_samples
    cdef PyjRecord *rec
    g_generation += 1
    for code in g_profiled:
        rec = <PyjRecord *>pyj_code_extra(<PyCodeObject *><PyObject *>code, g_extra_index)
        if rec != NULL:
            pyj_profile_clear(&rec.prof)
    g_profiled = []
    pyj_cfuncs_clear()
    pyj_prof_generation = g_generation
    pyj_tree_clear()
    g_compiled = g_recompiled = g_failed = g_code_bytes = g_instructions = g_interpreted = 0
    g_samples = 0
    pyj_tier.osr_entries = pyj_tier.traps = 0
    g_compile_seconds = 0.0
    g_failed_reasons.clear()
    if g_profile:
        g_tsc0 = pyj_ticks()
        g_clock0 = pyj_monotonic()
