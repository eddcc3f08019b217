// Accessors for interpreter-state fields (implemented in C: see interp_state.c).
#pragma once

#include <Python.h>

#ifdef __cplusplus
extern "C" {
#endif

// Address of the interpreter's eval_breaker flag: non-zero when signals,
// pending calls, a GIL drop request or an async exception need attention.
// (3.11 only; 3.13's is per thread: machine/frame_emit.h checks it.)
const void *pyj_eval_breaker_address(void);

// Exported by libpython but declared only in pycore_ceval.h, which C++ cannot
// include: the slow path of the recursion-limit check.
int _Py_CheckRecursiveCall(PyThreadState *tstate, const char *where);

// Counts one level of recursion depth as _Py_EnterRecursiveCallTstate does
// around a call of C code: non-zero (RecursionError set, the level given
// back) when over the limit. pyj_leave_recursive_call gives it back.
// (3.11 counts one depth for all calls; 3.12+ count C calls apart.)
#if PY_VERSION_HEX >= 0x030C0000
static inline int pyj_enter_recursive_call(PyThreadState *ts, const char *where)
{
    return ts->c_recursion_remaining-- <= 0 && _Py_CheckRecursiveCall(ts, where);
}
static inline void pyj_leave_recursive_call(PyThreadState *ts) { ts->c_recursion_remaining++; }
#else
static inline int pyj_enter_recursive_call(PyThreadState *ts, const char *where)
{
    return ts->recursion_remaining-- <= 0 && _Py_CheckRecursiveCall(ts, where);
}
static inline void pyj_leave_recursive_call(PyThreadState *ts) { ts->recursion_remaining++; }
#endif

// Looks a special method up on the type (the real function; the public header
// maps the name to the _Py_Identifier variant).
#undef _PyObject_LookupSpecial
PyObject *_PyObject_LookupSpecial(PyObject *self, PyObject *attr);

// Takes (a new reference to) the thread's pending asynchronous exception, or
// NULL, clearing the interpreter's request as ceval does.
PyObject *pyj_take_async_exc(PyThreadState *ts);

// Runs a frame with the interpreter's frame evaluator: the PEP 523 hook if
// one is installed, else _PyEval_EvalFrameDefault (_PyEval_EvalFrame). On
// 3.12+ the evaluator clears and pops the frame when it returns.
struct _PyInterpreterFrame;
PyObject *pyj_eval_frame(PyThreadState *ts, struct _PyInterpreterFrame *frame);

// The small-int cache: the int objects for -_PY_NSMALLNEGINTS up to
// _PY_NSMALLPOSINTS - 1, in order (what PyLong_FromLong returns for them).
PyObject *pyj_small_ints(void);
size_t pyj_small_int_size(void);

// The offset of the interpreter's frame evaluator (interp->eval_frame: NULL
// for CPython's own, else a PEP 523 function), for machine code to compare.
Py_ssize_t pyj_interp_eval_frame_offset(void);

// Another thread asked this one to drop the GIL.
int pyj_gil_drop_requested(PyThreadState *ts);

// The builtin len() the interpreter's PRECALL_NO_KW_LEN recognises
// (interp->callable_cache.len).
PyObject *pyj_builtin_len(void);
// ... and isinstance() (PRECALL_NO_KW_ISINSTANCE) and the list.append method
// descriptor (PRECALL_NO_KW_LIST_APPEND).
PyObject *pyj_builtin_isinstance(void);
PyObject *pyj_list_append_descr(void);

#ifdef __cplusplus
}
#endif
