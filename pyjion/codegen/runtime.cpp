#include "runtime.h"

#include "interp_state.h"

#include <cstdio>
#include <cstdlib>

namespace pyjion::rt {

// BINARY_OP ** and **=: the interpreter's _PyNumber_PowerNoMod is not exported.
PyObject *pyj_rt_power(PyObject *base, PyObject *exp) { return PyNumber_Power(base, exp, Py_None); }

PyObject *pyj_rt_inplace_power(PyObject *base, PyObject *exp) { return PyNumber_InPlacePower(base, exp, Py_None); }

// LOAD_FAST of a local that holds no value.
void pyj_rt_unbound_local(_PyInterpreterFrame *frame, int index)
{
    PyObject *name = PyTuple_GetItem(frame->f_code->co_localsplusnames, index);
    if (name == nullptr) return;
    PyErr_Format(PyExc_UnboundLocalError,
                 "cannot access local variable '%U' where it is not associated with a value", name);
}

// The interpreter's eval-breaker work, from exported pieces: signal handlers
// and pending calls, a GIL hand-over another thread asked for, and an
// asynchronous exception (PyThreadState_SetAsyncExc). Returns -1 with an
// exception set, as the interpreter's eval_frame_handle_pending does.
int pyj_rt_eval_breaker(PyThreadState *ts)
{
    if (Py_MakePendingCalls() < 0) return -1;
    if (pyj_gil_drop_requested(ts)) {
        PyEval_SaveThread();        // drop_gil() waits for the requesting thread to take it
        PyEval_RestoreThread(ts);
    }
    if (ts->async_exc != nullptr) {
        PyObject *exc = ts->async_exc;
        ts->async_exc = nullptr;
        PyErr_SetNone(exc);
        Py_DECREF(exc);
        return -1;
    }
    return 0;
}

// An exception escapes the frame: record the traceback entry for this frame
// (prev_instr already points at the failing instruction), then drop the
// `depth` values left on the value stack.
void pyj_rt_error_exit(PyThreadState *ts, _PyInterpreterFrame *frame, int depth)
{
    PyObject *exc_type, *exc_value, *exc_tb;
    if (!PyErr_Occurred()) {
        PyErr_SetString(PyExc_SystemError, "error return without exception set");
    }
    if (!_PyFrame_IsIncomplete(frame)) {
        PyErr_Fetch(&exc_type, &exc_value, &exc_tb);
        PyFrameObject *f = PyEval_GetFrame();   // materialises this (current) frame's object
        PyErr_Restore(exc_type, exc_value, exc_tb);
        if (f != nullptr) PyTraceBack_Here(f);
    }
    PyObject **stack = frame->localsplus + frame->f_code->co_nlocalsplus;
    for (int i = depth - 1; i >= 0; i--) {
        Py_CLEAR(stack[i]);
    }
}

// Debug builds: at a bytecode boundary, every value-stack slot below the
// modelled depth must hold a live object.
void pyj_rt_debug_check_stack(_PyInterpreterFrame *frame, int depth, int unit_index)
{
    PyObject **stack = frame->localsplus + frame->f_code->co_nlocalsplus;
    for (int i = 0; i < depth; i++) {
        if (stack[i] == nullptr || Py_REFCNT(stack[i]) <= 0) {
            fprintf(stderr, "pyjion: stack slot %d of %d is %s before offset %d of %s\n", i, depth,
                    stack[i] ? "dead" : "NULL", unit_index * 2, PyUnicode_AsUTF8(frame->f_code->co_qualname));
            abort();
        }
    }
}

}  // namespace pyjion::rt
