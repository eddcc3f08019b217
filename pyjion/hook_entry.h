/* The hook's entry: what CPython calls for every frame while pyjion is
 * installed. Most frames are of code that stays in the interpreter for now
 * (not warm yet, or refused by the compiler) or of compiled code entered
 * from the interpreter or C (a generator's resume, a call through
 * _PyEval_Vector), with no tracer or profiler; their path is here, in C, a
 * few loads and compares before the interpreter or the machine code runs the
 * frame. Every other frame goes to the hook's full path (pyjion_eval in
 * _eval.pyx: records made, compiles, tracing, the profiler). The hook keeps `pyj_entry` in step
 * with its settings (sync_entry in _eval.pyx). */
#ifndef PYJION_HOOK_ENTRY_H
#define PYJION_HOOK_ENTRY_H

#include <Python.h>
#include <stdint.h>

#include "code_extra.h"
#include "cpython_layer.h"
#include "cstack_guard.h"
#include "profiler.h"
#include "record.h"
#include "tiering.h"

typedef struct {
    PyObject *(*full)(PyThreadState *, PyjFrame *, int);   /* the hook's full path */
    Py_ssize_t record_index;   /* the records' code-extra index (-1: none) */
    /* Calls an interpreted record may reach on this path: past them the full
     * path records argument types or compiles (0: every call takes it). */
    uint32_t warmth_limit;
    uint32_t epoch;            /* the tiering epoch (record.h): the sampler's clock in 1/8 s */
    int profiling;             /* the profiler times every call (those taken here too) */
    /* pyjion's vectorcall (PyjionCodegenAPI.vectorcall; NULL until the code
     * generator is loaded), given to the functions whose frames come here:
     * their next calls from the interpreter push the frame without
     * _PyEval_Vector. */
    vectorcallfunc vectorcall;
    /* Puts the record's code in the profiler's list (the first time a call
     * of it is profiled; sets rec->prof.listed where it could). */
    void (*list_profiled)(PyjRecord *rec, PyObject *code);
} PyjEntryState;

static PyjEntryState pyj_entry = {NULL, -1, 0, 0, 1, NULL, NULL};

/* Whether this call of an interpreted record needs nothing of the full path:
 * code the compiler refused stays interpreted for good; code not warm yet
 * only counts the call while it stays below the limit. */
static inline int pyj_entry_plain(const PyjRecord *rec)
{
    if (rec->view.state == PYJ_FAILED) return 1;
    return rec->view.state == PYJ_INTERPRETED && rec->epoch == pyj_entry.epoch &&
           rec->warmth < pyj_entry.warmth_limit;
}

/* Code whose calls pyjion's vectorcall makes faster while it is interpreted:
 * positional parameters only, no generator (direct_call.cpp's
 * call_interpreted); any other takes CPython's path (keywords bind faster
 * there). */
static inline int pyj_entry_adopts(PyCodeObject *co)
{
    return !(co->co_flags & (CO_VARARGS | CO_VARKEYWORDS | CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR |
                             CO_ITERABLE_COROUTINE)) &&
           co->co_kwonlyargcount == 0;
}

/* Brings the record's warmth and hot samples to the current epoch (record.h). */
static inline void pyj_record_warm_now(PyjRecord *rec)
{
    if (rec->epoch != pyj_entry.epoch) pyj_record_cool(rec, pyj_entry.epoch);
}

/* Enters the machine code of a compiled record for a frame that does not
 * create a generator, as every path of the hook does: the frame's function
 * gets pyjion's vectorcall first (its callers skip _PyEval_Vector from now on). */
static inline PyObject *pyj_enter_compiled(PyThreadState *ts, PyjFrame *f, int throwflag, PyjRecord *rec)
{
    if (pyj_entry.vectorcall != NULL) pyj_frame_adopt_function(f, pyj_entry.vectorcall);
    return pyj_run_compiled(rec->view.entry, ts, f, throwflag);
}

/* A frame run while the profiler runs, timed as one call of its code, on
 * the hook's paths: a compiled record's machine code (a call, or a
 * generator's resume; machine code's direct calls and resumes time theirs
 * with PyjionHookState.call_begin/call_end), or the interpreter (not for a
 * frame that creates a generator), as the full path times them. */
static inline __attribute__((always_inline)) PyObject *pyj_profiled_frame(PyThreadState *ts, PyjFrame *f,
                                                                          int throwflag, PyjRecord *rec,
                                                                          int compiled)
{
    PyjCallContext ctx;
    PyObject *code = (PyObject *)pyj_frame_code(f);
    if (!rec->prof.listed) pyj_entry.list_profiled(rec, code);
    pyj_prof_begin(&ctx, rec, code, pyj_prof_generation);
    PyObject *result = compiled ? pyj_run_compiled(rec->view.entry, ts, f, throwflag)
                                : pyj_interpret_with(ts, f, throwflag, rec);
    pyj_prof_end(&ctx, pyj_prof_generation);
    return result;
}

/* (call_begin's first call of a code: listed, then begun) */
static __attribute__((noinline)) int pyj_prof_py_begin_listing(PyjionProfCall *buf, PyjRecord *rec, PyObject *code)
{
    pyj_entry.list_profiled(rec, code);
    pyj_prof_begin((PyjCallContext *)buf, rec, code, pyj_prof_generation);
    return 1;
}

/* PyjionHookState.call_begin: machine code's direct calls and resumes of
 * compiled code (the record starts with its view) time the call between
 * this and call_end, around running the machine code themselves. Returns 0
 * for a frame the recursion limit refuses: it never runs (the machine code
 * raises RecursionError at its entry) and is not counted, as the hook's
 * paths leave it. A leaf on its hot path: no registers to save. */
static inline __attribute__((always_inline)) int pyj_prof_py_begin_on(PyjionProfCall *buf, PyThreadState *ts,
                                                                     PyjFrame *f, PyjionCodeView *view,
                                                                     int exact)
{
    if (pyj_recursion_will_fail(ts)) return 0;
    PyjRecord *rec = (PyjRecord *)view;
    PyObject *code = (PyObject *)pyj_frame_code(f);
    if (__builtin_expect(!rec->prof.listed, 0)) return pyj_prof_py_begin_listing(buf, rec, code);
    pyj_prof_push_on((PyjCallContext *)buf, &rec->prof, code, pyj_prof_generation, exact);
    return 1;
}

/* The profiler's entry points for machine code (PyjionHookState), one set
 * per clock: each reads its clock without asking which it is. */
#define PYJ_PROF_ENTRY_POINTS(suffix, exact)                                                                 \
    static int pyj_prof_py_begin_##suffix(PyjionProfCall *buf, PyThreadState *ts,                           \
                                          struct _PyInterpreterFrame *f, PyjionCodeView *view)              \
    {                                                                                                        \
        return pyj_prof_py_begin_on(buf, ts, (PyjFrame *)f, view, exact);                                    \
    }                                                                                                        \
    static int pyj_prof_c_begin_##suffix(PyjionProfCall *buf, PyObject *callable, PyObject *const *args,    \
                                         Py_ssize_t nargs)                                                  \
    {                                                                                                        \
        return pyj_prof_c_begin_on(buf, callable, args, nargs, exact);                                       \
    }                                                                                                        \
    static void pyj_prof_c_begin_key_##suffix(PyjionProfCall *buf, void *key)                                \
    {                                                                                                        \
        pyj_prof_c_begin_key_on(buf, key, exact);                                                            \
    }                                                                                                        \
    static void pyj_prof_call_end_##suffix(PyjionProfCall *buf) { pyj_prof_call_end_on(buf, exact); }      \
    static PyObject *pyj_prof_run_timed_##suffix(PyjionCodeView *view, PyThreadState *ts,                     \
                                                 struct _PyInterpreterFrame *f)                               \
    {                                                                                                        \
        PyjionProfCall buf;                                                                                  \
        if (!pyj_prof_py_begin_on(&buf, ts, (PyjFrame *)f, view, exact)) return view->entry(ts, f, 0);      \
        PyObject *result = view->entry(ts, f, 0);                                                            \
        pyj_prof_call_end_on(&buf, exact);                                                                   \
        return result;                                                                                       \
    }
PYJ_PROF_ENTRY_POINTS(ticks, 0)
PYJ_PROF_ENTRY_POINTS(tsc, 1)

/* Tells machine code where a call's profiler state is (PyjionProfLayout). */
static void pyj_prof_give_layout(PyjionProfLayout *l, int exact)
{
    uintptr_t tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));   /* x86-64 glibc: the thread pointer points at itself */
    l->current_call_tls = (int32_t)((uintptr_t)&pyj_current_call - tp);
    l->generation = &pyj_prof_generation;
    l->ticks = (const uint64_t *)&pyj_prof_clock.now;
    l->ctx_prev = offsetof(PyjCallContext, prev);
    l->ctx_prof = offsetof(PyjCallContext, prof);
    l->ctx_code = offsetof(PyjCallContext, code);
    l->ctx_start = offsetof(PyjCallContext, start);
    l->ctx_child_ticks = offsetof(PyjCallContext, child_ticks);
    l->ctx_generation = offsetof(PyjCallContext, generation);
    l->ctx_exact_generation = offsetof(PyjCallContext, exact_generation);
    l->ctx_node = offsetof(PyjCallContext, node);
    l->node_shift = 6;
    l->node_code = offsetof(PyjTreeNode, code);
    l->node_last_child = offsetof(PyjTreeNode, last_child);
    l->node_next_hint = offsetof(PyjTreeNode, next_hint);
    l->node_calls = offsetof(PyjTreeNode, calls);
    l->rec_prof = offsetof(PyjRecord, prof) - offsetof(PyjRecord, view);
    l->prof_active = offsetof(PyjProfile, active);
    l->prof_listed = offsetof(PyjProfile, listed);
    l->inline_ok = !exact;
    l->tree_nodes = (void *const *)&pyj_tree.nodes;
}

/* Gives machine code the entry points of the clock chosen (the clock
 * changes only while the profiler is off). */
static void pyj_prof_give_entry_points(PyjionHookState *hook)
{
    int exact = pyj_prof_clock.exact;
    hook->call_begin = exact ? pyj_prof_py_begin_tsc : pyj_prof_py_begin_ticks;
    hook->c_call_begin = exact ? pyj_prof_c_begin_tsc : pyj_prof_c_begin_ticks;
    hook->c_call_begin_key = exact ? pyj_prof_c_begin_key_tsc : pyj_prof_c_begin_key_ticks;
    hook->call_end = exact ? pyj_prof_call_end_tsc : pyj_prof_call_end_ticks;
    hook->run_timed = exact ? pyj_prof_run_timed_tsc : pyj_prof_run_timed_ticks;
    hook->c_call_key = pyj_prof_c_call_key;
    hook->c_call_count = exact ? NULL : pyj_prof_c_count_ticks;
    pyj_prof_give_layout(&hook->prof_layout, exact);
}

#if PY_VERSION_HEX >= 0x030D0000
/* 3.13: while a tool traces (sys.settrace, sys.setprofile, sys.monitoring), a
 * frame the hook is given runs with the hook stepped aside, as if pyjion were
 * not installed, until it returns or yields: the interpreter inlines calls of
 * Python functions and generators only without a PEP 523 function; with one,
 * SEND resumes a coroutine through its send() method and the awaiting frame
 * sees the StopIteration of its return as a RAISE event ('exception' to a
 * tracer) that stock CPython never emits. Traced code runs in the
 * interpreter anyway. `restore`: the hook goes back in at the end (cleared
 * by pyjion.disable() meanwhile). */
typedef struct {
    int depth;
    int restore;
    _PyFrameEvalFunction hook;
} PyjHookAside;

static PyjHookAside pyj_aside = {0, 0, NULL};

static PyObject *pyj_run_aside(PyThreadState *ts, PyjFrame *f, int throwflag,
                               PyObject *(*run)(PyThreadState *, PyjFrame *, int))
{
    if (pyj_aside.depth == 0) pyj_aside.hook = pyj_get_eval_func();
    pyj_aside.depth++;
    pyj_aside.restore = 1;
    pyj_set_eval_func(_PyEval_EvalFrameDefault);
    PyObject *result = run(ts, f, throwflag);
    if (--pyj_aside.depth == 0 && pyj_aside.restore && pyj_get_eval_func() == _PyEval_EvalFrameDefault) {
        pyj_set_eval_func(pyj_aside.hook);
    }
    return result;
}

static PyObject *pyj_interpret_aside(PyThreadState *ts, PyjFrame *f, int throwflag)
{
    return pyj_run_aside(ts, f, throwflag, pyj_entry.full);   /* counted, and interpreted (traced) */
}
#endif

#if PY_VERSION_HEX >= 0x030D0000
/* A sys.monitoring tool of the program's own is active (ids 0-5; 6 and 7
 * are sys.setprofile's and sys.settrace's). */
static inline int pyj_monitoring_tool_active(PyThreadState *ts)
{
    const uint8_t *tools = ts->interp->monitors.tools;
    uint8_t any = 0;
    for (int i = 0; i < _PY_MONITORING_UNGROUPED_EVENTS; i++) any |= tools[i];
    return (any & ~((1 << PY_MONITORING_SYS_PROFILE_ID) | (1 << PY_MONITORING_SYS_TRACE_ID))) != 0;
}
#endif

/* Machine code handing its frame to the interpreter part-way (a tool started
 * while it ran, or an optimised frame's fallback: PyjionHookState.interpret).
 * On 3.13 with a sys.monitoring tool active the hook steps aside for the rest
 * of that frame: the interpreter, seeing a PEP 523 function, would call the
 * frame's Python callees through their vectorcall and report each to the
 * tool as a C call (a C_RETURN event: test_monitoring). Not for
 * sys.settrace/setprofile, which report C calls of C functions only: their
 * frame's callees go on through the hook (and compile) once tracing stops. */
static PyObject *pyj_interpret_handed_over(PyThreadState *ts, PyjFrame *f, int throwflag)
{
#if PY_VERSION_HEX >= 0x030D0000
    if (pyj_monitoring_tool_active(ts) && !pyj_entry.profiling) {
        return pyj_run_aside(ts, f, throwflag, pyj_interpret);
    }
#endif
    return pyj_interpret(ts, f, throwflag);
}

/* The hook stepped aside for a traced frame and going back in at its end
 * (pyjion.installed() holds); pyjion.disable() cancels the return. */
static inline int pyj_hook_aside_pending(void)
{
#if PY_VERSION_HEX >= 0x030D0000
    return pyj_aside.depth > 0 && pyj_aside.restore;
#else
    return 0;
#endif
}

static inline void pyj_hook_aside_cancel(void)
{
#if PY_VERSION_HEX >= 0x030D0000
    pyj_aside.restore = 0;
#endif
}

static PyObject *pyj_hook_entry(PyThreadState *ts, PyjFrame *f, int throwflag)
{
#if PY_VERSION_HEX >= 0x030D0000
    if (pyj_tracing(ts) && !pyj_entry.profiling) return pyj_interpret_aside(ts, f, throwflag);
#endif
    PyjRecord *rec = pyj_entry.record_index >= 0
                         ? (PyjRecord *)pyj_code_extra(pyj_frame_code(f), pyj_entry.record_index)
                         : NULL;
    if (rec == NULL || pyj_tracing(ts) || pyj_recursion_will_fail(ts) || pyj_cstack_low()) {
        return pyj_entry.full(ts, f, throwflag);
    }
    if (rec->view.state == PYJ_COMPILED && !pyj_frame_creates_generator(f)) {
        /* Machine code, as the full path's run_frame enters it: a generator's
         * resume from the interpreter or C, a call that came through
         * _PyEval_Vector. */
        rec->view.calls++;
        if (pyj_entry.profiling) {
            if (pyj_entry.vectorcall != NULL) pyj_frame_adopt_function(f, pyj_entry.vectorcall);
            return pyj_profiled_frame(ts, f, throwflag, rec, 1);
        }
        return pyj_enter_compiled(ts, f, throwflag, rec);
    }
    if (pyj_entry_plain(rec)) {
        rec->view.calls++;
        rec->warmth += rec->view.state == PYJ_INTERPRETED;
        if (pyj_entry.vectorcall != NULL && pyj_entry_adopts(pyj_frame_code(f))) {
            pyj_frame_adopt_function(f, pyj_entry.vectorcall);
        }
        if (pyj_entry.profiling && !pyj_frame_creates_generator(f)) {
            return pyj_profiled_frame(ts, f, throwflag, rec, 0);
        }
        return pyj_interpret_with(ts, f, throwflag, rec);
    }
    return pyj_entry.full(ts, f, throwflag);
}

#endif
