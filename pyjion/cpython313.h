/* Everything the hook (_eval.pyx) needs from CPython 3.13's internal frame and
 * code layout: the accessors of cpython311.h, for 3.13 (docs/cpython313.md
 * says what changed). Included through cpython_layer.h. */
#ifndef PYJION_CPYTHON313_H
#define PYJION_CPYTHON313_H

#include <Python.h>
#if PY_VERSION_HEX < 0x030D0000 || PY_VERSION_HEX >= 0x030E0000
#error "cpython313.h is CPython 3.13's layer"
#endif
#ifndef Py_BUILD_CORE
#define Py_BUILD_CORE 1
#endif
#include "internal/pycore_frame.h"
#include "internal/pycore_code.h"
#include "internal/pycore_interp.h"
#include "internal/pycore_pystate.h"
#include "internal/pycore_runtime.h"
#include "internal/pycore_gil.h"
#include "opcode.h"
#include "code_extra.h"

typedef _PyInterpreterFrame PyjFrame;

static inline PyCodeObject *pyj_frame_code(PyjFrame *f) { return (PyCodeObject *)f->f_executable; }
static inline PyObject **pyj_frame_locals(PyjFrame *f) { return f->localsplus; }

/* True while a sys.settrace/sys.setprofile function or a sys.monitoring tool
 * is active anywhere (3.13 builds both on monitoring): frames then run in
 * the interpreter, which emits the events. */
static inline int pyj_tracing(PyThreadState *ts)
{
    const uint8_t *tools = ts->interp->monitors.tools;
    uint64_t any = 0;
    for (int i = 0; i < _PY_MONITORING_UNGROUPED_EVENTS; i++) any |= tools[i];
    return any != 0 || ts->c_tracefunc != NULL || ts->c_profilefunc != NULL;
}

/* No loop-header trap on 3.13: an interpreter that returns from a frame
 * clears and pops it itself (_PyEval_FrameClearAndPop), so a trap's "return"
 * would leave nothing to go on with. Long-running frames move to machine
 * code at their next call instead. */
#define PYJ_LOOP_TRAPS 0

static inline int pyj_code_argcount(PyCodeObject *co)
{
    int n = co->co_argcount + co->co_kwonlyargcount;
    if (co->co_flags & CO_VARARGS) n++;
    if (co->co_flags & CO_VARKEYWORDS) n++;
    return n;
}

/* A generator's own frame (a resume); the call that creates one runs in a
 * frame of the thread's stack up to RETURN_GENERATOR. */
static inline int pyj_frame_is_resume(PyjFrame *f) { return f->owner == FRAME_OWNED_BY_GENERATOR; }

static inline int pyj_frame_creates_generator(PyjFrame *f)
{
    return (pyj_frame_code(f)->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR)) &&
           f->owner != FRAME_OWNED_BY_GENERATOR;
}

/* The frame is about to be refused by the recursion limit (the test of
 * _Py_EnterRecursivePy): it never runs, so it is neither counted nor profiled. */
static inline int pyj_recursion_will_fail(PyThreadState *ts)
{
    return ts->py_recursion_remaining <= 0 && ts->recursion_headroom == 0;
}

static inline _PyFrameEvalFunction pyj_get_eval_func(void)
{
    return _PyInterpreterState_GetEvalFrameFunc(PyInterpreterState_Get());
}

static inline void pyj_set_eval_func(_PyFrameEvalFunction fn)
{
    _PyInterpreterState_SetEvalFrameFunc(PyInterpreterState_Get(), fn);
}

/* Functions keep CPython's vectorcall on 3.13 while the hook is installed
 * (_PyFunction_Vectorcall is not exported, and the hook sees their frames
 * anyway); entering compiled code through a function's own vectorcall, with
 * no hook, is the 3.13 entry layer's job. */
static inline void pyj_frame_adopt_function(PyjFrame *f, vectorcallfunc vectorcall)
{
    (void)f;
    (void)vectorcall;
}

/* ---- entering compiled code without the hook (function_entry.h) -------- */

/* 3.12+ call a function's own vectorcall wherever it is not CPython's:
 * compiled code is entered that way, with no PEP 523 function installed. */
#define PYJ_FUNCTION_ENTRY 1

/* The innermost frame of the thread that runs a code object: the shim frames
 * CPython pushes where C calls into Python (owner CSTACK) are skipped. */
static inline PyjFrame *pyj_thread_frame(PyThreadState *ts)
{
    _PyInterpreterFrame *f = ts->current_frame;
    while (f != NULL && (f->owner == FRAME_OWNED_BY_CSTACK || !PyCode_Check(f->f_executable))) f = f->previous;
    return f;
}

/* The function whose call made frame `f`, if it is a plain function of the
 * frame's code (NULL for a module body or a class body's frame). */
static inline PyFunctionObject *pyj_frame_function(PyjFrame *f)
{
    PyObject *fn = f->f_funcobj;
    if (fn == NULL || !PyFunction_Check(fn) || ((PyFunctionObject *)fn)->func_code != f->f_executable) return NULL;
    return (PyFunctionObject *)fn;
}

/* Functions made from `co` from now on get no function version, so no call
 * site specialises on them (CALL_PY_EXACT_ARGS and the other forms that push
 * a frame inside the interpreter guard on func_version, and version 0 never
 * specialises): every call goes through the function's vectorcall.
 * MAKE_FUNCTION gives a new function its code's co_version after the
 * function watcher has run (bytecodes.c), so the code's own version must go.
 * The interpreter's version cache (funcobject.c, "The function and code
 * version cache") holds the code under its old version: that slot is emptied
 * first, as the code's deallocation would, so the cache never keeps a code
 * whose co_version no longer names that slot. */
static inline void pyj_code_drop_function_version(PyCodeObject *co)
{
    uint32_t version = co->co_version;
    if (version == 0) return;
    struct _func_version_cache_item *slot =
        PyInterpreterState_Get()->func_state.func_version_cache + version % FUNC_VERSION_CACHE_SIZE;
    if (slot->code == (PyObject *)co) {
        slot->code = NULL;
        slot->func = NULL;
    }
    co->co_version = 0;
}

/* The code unit instr_ptr points at (the instruction running or about to). */
static inline int pyj_frame_unit(PyjFrame *f) { return (int)(f->instr_ptr - _PyCode_CODE(pyj_frame_code(f))); }

static inline void pyj_frame_resume_at(PyjFrame *f, int unit) { f->instr_ptr = _PyCode_CODE(pyj_frame_code(f)) + unit; }

static inline int pyj_frame_stack_depth(PyjFrame *f) { return f->stacktop - pyj_frame_code(f)->co_nlocalsplus; }
static inline void pyj_frame_set_stack_depth(PyjFrame *f, int depth)
{
    f->stacktop = pyj_frame_code(f)->co_nlocalsplus + depth;
}

static inline int pyj_code_nlocalsplus(PyCodeObject *co) { return co->co_nlocalsplus; }
static inline int pyj_code_units(PyCodeObject *co) { return (int)Py_SIZE(co); }

static inline int pyj_code_unit_returns(PyCodeObject *co, int unit)
{
    int op = _PyCode_CODE(co)[unit].op.code;
    return op == RETURN_VALUE || op == RETURN_CONST || op == YIELD_VALUE || op == RETURN_GENERATOR;
}

/* Traps are off here (PYJ_LOOP_TRAPS): these are never called. */
static inline uint16_t pyj_code_set_return_trap(PyCodeObject *co, int unit)
{
    return _PyCode_CODE(co)[unit].cache;
}
static inline void pyj_code_restore_unit(PyCodeObject *co, int unit, uint16_t saved)
{
    (void)co;
    (void)unit;
    (void)saved;
}
static inline PyObject *pyj_code_cached_co_code(PyCodeObject *co)
{
    return co->_co_cached != NULL ? co->_co_cached->_co_code : NULL;
}
static inline void pyj_code_drop_cached_co_code(PyCodeObject *co)
{
    if (co->_co_cached != NULL) Py_CLEAR(co->_co_cached->_co_code);
}

static inline int pyj_code_is_generator(PyCodeObject *co)
{
    return (co->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE)) != 0;
}

/* 3.13's BINARY_SUBSCR_GETITEM deoptimises while a PEP 523 function is
 * installed: no code runs inside a caller's activation behind the hook. */
static inline int pyj_code_may_run_inline(PyCodeObject *co)
{
    (void)co;
    return 0;
}

static inline int pyj_in_tracer(PyThreadState *ts) { return ts->tracing != 0; }

/* 3.13's CALL_ALLOC_AND_ENTER_INIT (a class call specialised where __init__
 * is a simple Python function) pushes __init__'s frame inside the
 * interpreter without the PEP 523 check its other inlining specialisations
 * make: the hook never sees those calls. The profiler must see every call,
 * so in code it profiles no CALL site specialises from then on: that
 * specialisation goes back to CALL, and every CALL site's adaptive counter is
 * made unreachable (CPython's own UNREACHABLE_BACKOFF: the site never asks to
 * specialise again). `units[op]`: the inline cache units after opcode op,
 * PYJ_UNITS_CALL added where op is CALL or one of its specialisations (made
 * from the opcode module, _eval.pyx's call_site_units). Instrumented code
 * (sys.monitoring) and executors are left alone. */
#define PYJ_CALLS_BYPASS_HOOK 1
#define PYJ_UNITS_CALL 0x80
static inline void pyj_code_keep_calls_in_sight(PyCodeObject *co, const unsigned char *units)
{
    _Py_CODEUNIT *code = _PyCode_CODE(co);
    int n = (int)Py_SIZE(co);
    for (int i = 0; i < n;) {
        int op = code[i].op.code;
        if (op >= MIN_INSTRUMENTED_OPCODE || op == ENTER_EXECUTOR) return;
        if (units[op] & PYJ_UNITS_CALL) {
            if (op == CALL_ALLOC_AND_ENTER_INIT) code[i].op.code = CALL;
            if (i + 1 < n) code[i + 1].cache = 0xFFFF;   /* UNREACHABLE_BACKOFF */
        }
        i += 1 + (units[op] & ~PYJ_UNITS_CALL);
    }
}

static inline PyThreadState *pyj_main_thread_state(void) { return _PyRuntime.main_tstate; }

static inline int pyj_on_main_thread(void) { return PyThread_get_thread_ident() == _PyRuntime.main_thread; }

/* Read without the GIL by the sampler thread: the main thread holds the GIL. */
static inline int pyj_main_thread_holds_gil(PyThreadState *main_ts)
{
    if (main_ts == NULL) return 0;
    struct _gil_runtime_state *gil = main_ts->interp->ceval.gil;
    return gil != NULL && _Py_atomic_load_int_relaxed(&gil->locked) &&
           _Py_atomic_load_ptr_relaxed(&gil->last_holder) == main_ts;
}

/* Read without the GIL by the sampler thread: the main thread holds the GIL
 * and is the interpreter's only thread. */
static inline int pyj_main_thread_runs_alone(PyThreadState *main_ts)
{
    return pyj_main_thread_holds_gil(main_ts) && main_ts->interp->threads.head == main_ts && main_ts->next == NULL;
}

/* Py_AddPendingCall sets the main thread's eval-breaker bit itself on 3.13. */
static inline void pyj_wake_eval_breaker(PyThreadState *main_ts) { (void)main_ts; }

#endif
