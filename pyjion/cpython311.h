/* Everything the hook (_eval.pyx) needs from CPython 3.11's internal frame and
 * code layout, in one place (cpython313.h has the same for 3.13; included
 * through cpython_layer.h). */
#ifndef PYJION_CPYTHON311_H
#define PYJION_CPYTHON311_H

#include <Python.h>
#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030C0000
#error "pyjion's hook is written against CPython 3.11's frame layout"
#endif
#ifndef Py_BUILD_CORE
#define Py_BUILD_CORE 1
#endif
#include "internal/pycore_frame.h"
#include "internal/pycore_code.h"
#include "internal/pycore_interp.h"
#include "internal/pycore_pystate.h"
#include "internal/pycore_runtime.h"
#include "opcode.h"
#include "code_extra.h"

typedef _PyInterpreterFrame PyjFrame;

static inline PyCodeObject *pyj_frame_code(PyjFrame *f) { return f->f_code; }
static inline PyObject **pyj_frame_locals(PyjFrame *f) { return f->localsplus; }

/* True while sys.settrace/sys.setprofile is active for this thread: such frames
 * run in the interpreter so that tracers see every event. */
static inline int pyj_tracing(PyThreadState *ts) { return ts->cframe->use_tracing != 0; }

/* The loop-header trap (tiering.h) works here: the interpreter "returns"
 * from a trap leaving the frame to its caller. */
#define PYJ_LOOP_TRAPS 1

static inline int pyj_code_argcount(PyCodeObject *co)
{
    /* positional + keyword-only, plus *args and **kwargs slots */
    int n = co->co_argcount + co->co_kwonlyargcount;
    if (co->co_flags & CO_VARARGS) n++;
    if (co->co_flags & CO_VARKEYWORDS) n++;
    return n;
}

/* A generator or coroutine frame being resumed (not started) has prev_instr
 * past its first instruction. */
static inline int pyj_frame_is_resume(PyjFrame *f)
{
    return f->prev_instr >= _PyCode_CODE(f->f_code);
}

/* The call of a generator/coroutine function that only creates the generator
 * (it runs up to RETURN_GENERATOR). cProfile sees no call event for it: the
 * profiler counts only the resumes, as cProfile does. */
static inline int pyj_frame_creates_generator(PyjFrame *f)
{
    return (f->f_code->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR)) &&
           f->prev_instr < _PyCode_CODE(f->f_code);
}

/* The frame is about to be refused by the recursion limit (the same test as
 * _Py_CheckRecursiveCall): it never runs, so it is neither counted nor
 * profiled, as cProfile does not see it either. */
static inline int pyj_recursion_will_fail(PyThreadState *ts)
{
    return ts->recursion_remaining <= 0 &&
           ts->recursion_limit - ts->recursion_remaining >= ts->interp->ceval.recursion_limit;
}

static inline _PyFrameEvalFunction pyj_get_eval_func(void)
{
    return _PyInterpreterState_GetEvalFrameFunc(PyInterpreterState_Get());
}

static inline void pyj_set_eval_func(_PyFrameEvalFunction fn)
{
    _PyInterpreterState_SetEvalFrameFunc(PyInterpreterState_Get(), fn);
}

/* ---- what tiering.h needs: code units, the eval breaker, the GIL holder ---- */

/* The function a frame of optimized code (a def, a lambda, a comprehension)
 * runs gets pyjion's vectorcall in place of CPython's own (see
 * PyjionCodegenAPI.vectorcall), once: its callers then reach it without
 * _PyEval_Vector. A vectorcall someone else replaced is left alone. */
static inline void pyj_frame_adopt_function(PyjFrame *f, vectorcallfunc vectorcall)
{
    PyFunctionObject *fn = f->f_func;
    if (fn->vectorcall == _PyFunction_Vectorcall && (f->f_code->co_flags & CO_OPTIMIZED)) fn->vectorcall = vectorcall;
}

/* 3.11 calls every Python function through the frame evaluator: compiled
 * code is entered by the hook only (function_entry.h does nothing here). */
#define PYJ_FUNCTION_ENTRY 0

static inline PyjFrame *pyj_thread_frame(PyThreadState *ts) { return ts->cframe->current_frame; }
static inline PyFunctionObject *pyj_frame_function(PyjFrame *f) { return f->f_func; }
static inline void pyj_code_drop_function_version(PyCodeObject *co) { (void)co; }

/* The code unit prev_instr points at (the instruction running, or -1). */
static inline int pyj_frame_unit(PyjFrame *f) { return (int)(f->prev_instr - _PyCode_CODE(f->f_code)); }

/* The interpreter goes on at code unit `unit` when it next runs the frame. */
static inline void pyj_frame_resume_at(PyjFrame *f, int unit) { f->prev_instr = _PyCode_CODE(f->f_code) + unit - 1; }

static inline int pyj_frame_stack_depth(PyjFrame *f) { return f->stacktop - f->f_code->co_nlocalsplus; }
static inline void pyj_frame_set_stack_depth(PyjFrame *f, int depth) { f->stacktop = f->f_code->co_nlocalsplus + depth; }

static inline int pyj_code_nlocalsplus(PyCodeObject *co) { return co->co_nlocalsplus; }
static inline int pyj_code_units(PyCodeObject *co) { return (int)Py_SIZE(co); }

/* The instruction at `unit` of co_code_adaptive leaves the interpreter's
 * activation (3.11 has no specialised forms of these three). */
static inline int pyj_code_unit_returns(PyCodeObject *co, int unit)
{
    int op = _Py_OPCODE(_PyCode_CODE(co)[unit]);
    return op == RETURN_VALUE || op == YIELD_VALUE || op == RETURN_GENERATOR;
}

/* Replaces the opcode at `unit` with RETURN_VALUE, keeping the oparg byte (the
 * second half of a superinstruction before it reads only that); returns the
 * unit it replaced. If the interpreter quickens the code meanwhile
 * (_PyCode_Quicken), it passes over RETURN_VALUE, so the unit put back is the
 * unspecialised instruction: correct, only not specialised. */
static inline uint16_t pyj_code_set_return_trap(PyCodeObject *co, int unit)
{
    _Py_CODEUNIT *u = &_PyCode_CODE(co)[unit];
    uint16_t saved = (uint16_t)*u;
    *u = _Py_MAKECODEUNIT(RETURN_VALUE, _Py_OPARG(*u));
    return saved;
}

static inline void pyj_code_restore_unit(PyCodeObject *co, int unit, uint16_t saved)
{
    _PyCode_CODE(co)[unit] = (_Py_CODEUNIT)saved;
}

/* code.co_code is built from co_code_adaptive once and cached; a copy made
 * while a trap was set must not outlive it. */
static inline PyObject *pyj_code_cached_co_code(PyCodeObject *co) { return co->_co_code; }
static inline void pyj_code_drop_cached_co_code(PyCodeObject *co) { Py_CLEAR(co->_co_code); }

static inline int pyj_code_is_generator(PyCodeObject *co)
{
    return (co->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE)) != 0;
}

/* A code object the interpreter's BINARY_SUBSCR_GETITEM could run as a
 * class's __getitem__ inside the caller's activation (two plain positional
 * parameters): a trap there would return from the wrong frame. */
static inline int pyj_code_may_run_inline(PyCodeObject *co)
{
    return co->co_argcount == 2 && co->co_kwonlyargcount == 0 &&
           (co->co_flags & (CO_VARARGS | CO_VARKEYWORDS)) == 0 && (co->co_flags & CO_OPTIMIZED);
}

/* tstate->tracing: a trace or profile function is running. */
static inline int pyj_in_tracer(PyThreadState *ts) { return ts->tracing != 0; }

/* 3.11's interpreter enters every Python frame through the hook (3.13's
 * CALL_ALLOC_AND_ENTER_INIT does not: cpython313.h). */
#define PYJ_CALLS_BYPASS_HOOK 0
#define PYJ_UNITS_CALL 0x80
static inline void pyj_code_keep_calls_in_sight(PyCodeObject *co, const unsigned char *units)
{
    (void)co;
    (void)units;
}

/* The thread state of the main thread (the one that runs pending calls). */
static inline PyThreadState *pyj_main_thread_state(void)
{
    PyInterpreterState *interp = PyInterpreterState_Get();
    for (PyThreadState *t = PyInterpreterState_ThreadHead(interp); t != NULL; t = PyThreadState_Next(t)) {
        if (t->thread_id == _PyRuntime.main_thread) return t;
    }
    return NULL;
}

/* Whether the calling thread is the one Python treats as its main thread:
 * only a process whose main thread returns from main() runs atexit
 * handlers; one forked from another thread ends when that thread exits. */
static inline int pyj_on_main_thread(void)
{
    return PyThread_get_thread_ident() == _PyRuntime.main_thread;
}

/* Read without the GIL by the sampler thread: the main thread holds the GIL. */
static inline int pyj_main_thread_holds_gil(PyThreadState *main_ts)
{
    return (PyThreadState *)_Py_atomic_load_relaxed(&_PyRuntime.gilstate.tstate_current) == main_ts;
}

/* Read without the GIL by the sampler thread: the main thread holds the GIL
 * and is the interpreter's only thread, so a pending call it is asked to run
 * cannot leave the eval breaker set for a thread that may not run it. */
static inline int pyj_main_thread_runs_alone(PyThreadState *main_ts)
{
    return pyj_main_thread_holds_gil(main_ts) && main_ts->interp->threads.head == main_ts && main_ts->next == NULL;
}

/* Py_AddPendingCall from a thread other than the main one queues the call
 * but leaves the eval breaker as that thread sees it (3.11's
 * COMPUTE_EVAL_BREAKER asks whether the *calling* thread can run pending
 * calls); the main thread is told here, as a signal handler would tell it. */
static inline void pyj_wake_eval_breaker(PyThreadState *main_ts)
{
    _Py_atomic_store_relaxed(&main_ts->interp->ceval.eval_breaker, 1);
}

#endif
