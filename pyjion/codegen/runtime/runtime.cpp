#include "runtime/runtime.h"

#include "runtime/direct_call.h"
#include "cpython/interp_state.h"

#include <cstdio>
#include <cstdlib>

namespace pyjion::rt {

// BINARY_OP ** and **=: the interpreter's _PyNumber_PowerNoMod is not exported.
PyObject *pyj_rt_power(PyObject *base, PyObject *exp) { return PyNumber_Power(base, exp, Py_None); }

PyObject *pyj_rt_inplace_power(PyObject *base, PyObject *exp) { return PyNumber_InPlacePower(base, exp, Py_None); }

// `s = s + t` / `s += t` on str with a STORE_FAST back into s (the local
// holds `left`): appends in place when nothing else holds the string, as the
// interpreter's BINARY_OP_INPLACE_ADD_UNICODE does, instead of copying the
// whole string every time. Returns 1 if the case does not apply (nothing
// touched); else consumes both operands and stores the result in the local
// (the STORE_FAST is done): 0, or -1 with an exception and the local empty.
int pyj_rt_concat_into_local(PyObject **local, PyObject *left, PyObject *right)
{
    if (!PyUnicode_CheckExact(left) || Py_TYPE(right) != Py_TYPE(left) || *local != left) return 1;
    Py_DECREF(left);   // the stack's reference; the local keeps the string alive
    PyUnicode_Append(local, right);
    Py_DECREF(right);
    return *local == nullptr ? -1 : 0;
}

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
        PyObject *exc = pyj_take_async_exc(ts);
        PyErr_SetNone(exc);
        Py_DECREF(exc);
        return -1;
    }
    return 0;
}

// Hands the frame to CPython's interpreter (sys.settrace() started while it ran
// compiled), through the hook when it is loaded: the hook knows the loop-header
// traps it may have set in this code (pyjion/tiering.h).
PyObject *pyj_rt_interpret(PyThreadState *ts, _PyInterpreterFrame *frame, int throwflag)
{
    PyjionEntry interpret = direct::hook_state.interpret;
    if (interpret != nullptr) return interpret(ts, frame, throwflag);
    return _PyEval_EvalFrameDefault(ts, frame, throwflag);
}

// Debug builds: at a bytecode boundary, every value-stack slot below the
// modelled depth must hold a live object or NULL (3.11 pushes NULL on purpose
// below a callable: PUSH_NULL, LOAD_GLOBAL/LOAD_METHOD).
void pyj_rt_debug_check_stack(_PyInterpreterFrame *frame, int depth, int unit_index)
{
    PyObject **stack = frame->localsplus + frame->f_code->co_nlocalsplus;
    for (int i = 0; i < depth; i++) {
        if (stack[i] != nullptr && Py_REFCNT(stack[i]) <= 0) {
            fprintf(stderr, "pyjion: stack slot %d of %d holds a dead object before offset %d of %s\n", i, depth,
                    unit_index * 2, PyUnicode_AsUTF8(frame->f_code->co_qualname));
            abort();
        }
    }
}

}  // namespace pyjion::rt
