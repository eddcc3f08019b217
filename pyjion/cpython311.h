/* Everything the hook (_eval.pyx) needs from CPython 3.11's internal frame and
 * code layout, in one place, so a port to 3.12 changes this file (and
 * codegen/frame_layout.h) only. Included after Python.h. */
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
#include "code_extra.h"

typedef _PyInterpreterFrame PyjFrame;

static inline PyCodeObject *pyj_frame_code(PyjFrame *f) { return f->f_code; }
static inline PyObject **pyj_frame_locals(PyjFrame *f) { return f->localsplus; }

/* True while sys.settrace/sys.setprofile is active for this thread: such frames
 * run in the interpreter so that tracers see every event. */
static inline int pyj_tracing(PyThreadState *ts) { return ts->cframe->use_tracing != 0; }

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

#endif
