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

// The one-character strings for code points 0-127, in order (what
// PyUnicode_FromOrdinal and str indexing return for them), and the bits of
// PyASCIIObject.state (read as a 32-bit word) that say its text is compact
// ASCII, stored right after the object header.
PyObject *pyj_ascii_chars(void);
size_t pyj_ascii_char_size(void);
unsigned int pyj_compact_ascii_state(void);

// The offset of the interpreter's frame evaluator (interp->eval_frame: NULL
// for CPython's own, else a PEP 523 function), for machine code to compare.
Py_ssize_t pyj_interp_eval_frame_offset(void);

#if PY_VERSION_HEX >= 0x030D0000
// sys.monitoring's global state (3.13): whether any tool (sys.settrace and
// sys.setprofile are tools too) monitors any event in every code object
// (interp->monitors), and the interpreter's instrumentation version
// (interp->ceval.instrumentation_version: what _Py_Instrument gives the code
// it brings up to date).
int pyj_interp_monitors_any(PyThreadState *ts);
uintptr_t pyj_interp_instrumentation_version(PyThreadState *ts);
// The tools monitoring LINE events globally (interp->monitors).
uint8_t pyj_interp_line_tools(PyThreadState *ts);
// What the interpreter does when `tools` answer DISABLE to the LINE event of
// code unit `unit` (instrumentation.c's remove_line_tools): their line event
// there is off, and the instruction loses its INSTRUMENTED_LINE once no
// tool wants it (`caches`: each opcode's inline cache entries, 256 of them:
// the instruction's first entry, its counter, warms up again).
void pyj_code_remove_line_tools(PyCodeObject *code, int unit, uint8_t tools, const uint8_t *caches);
#endif

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
